//! Red-team round 3 (the hardening issue), one test per finding fixed in the engine and
//! CLI. `cargo test` runs these with overflow checks on (the test profile keeps debug
//! assertions), which is how finding 6's overflow showed.
#![cfg(not(target_arch = "wasm32"))]

use sgm_rdp::engine::{pld, Conversion, Error, Run, Sgm};
use std::process::Command;

fn sgm(q: f64, s: f64) -> Sgm {
    Sgm::new(q, s).unwrap()
}

/// Finding 6: δ at a huge ε stays monotone (was 1.0 above ε ≈ 1e18) and no lattice index
/// overflows.
#[test]
fn delta_at_huge_epsilon_is_monotone() {
    let m = sgm(0.01, 1.0);
    let mut last = f64::INFINITY;
    for e in [10.0, 1e3, 1e18, 1e19, 1e100, 1e300] {
        let d = pld::delta(m, 1000, e).unwrap().delta;
        assert!(d.upper <= last && d.upper < 1e-20, "epsilon {e}: {d:?}");
        assert!(d.lower <= d.upper);
        last = d.upper;
    }
}

/// Finding 7: below q = 1.1e-16, 1 − q is 1 in f64 and the lattice cannot hold the
/// mechanism: a typed refusal instead of the bracket [0, 0] below the true ε 5.18e-5.
#[test]
fn tiny_q_is_refused_not_answered_wrong() {
    for q in [1e-20, 1e-17] {
        match pld::epsilon(sgm(q, 1.0), 1, 1e-300) {
            Err(Error::PldBudget { reason }) => {
                assert_eq!(reason, sgm_rdp::engine::error::Refusal::RateBelowRounding)
            }
            other => panic!("q={q}: {other:?}"),
        }
    }
    // Just above the threshold it answers (or refuses for its budget), never with [0, 0].
    if let Ok(a) = pld::epsilon(sgm(1e-12, 1.0), 1, 1e-5) {
        assert!(a.epsilon.upper >= 0.0);
    }
}

/// Finding 8: the PLD upper bound is capped by exact RDP's continuous optimum (it was the
/// 156-order grid's, so the PLD could read above the RDP number shown).
#[test]
fn pld_upper_never_exceeds_the_continuous_rdp_optimum() {
    for (q, s, t, d) in [
        (1.0, 10.0, 1u64, 1e-300),
        (0.01, 1.0, 1000, 1e-10),
        (0.5, 0.5, 10, 1e-5),
    ] {
        let rdp = Run::with_default_orders(sgm(q, s), t)
            .unwrap()
            .epsilon(d, Conversion::Improved)
            .unwrap()
            .value;
        let b = pld::epsilon(sgm(q, s), t, d).unwrap().epsilon;
        assert!(
            b.upper <= rdp,
            "q={q} s={s} T={t} d={d}: {} > {rdp}",
            b.upper
        );
    }
}

fn cli(args: &[&str], stdin: &str) -> (Option<i32>, String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_sgm-rdp"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The child may refuse and exit before reading (a broken pipe is then fine).
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Finding 10: every flag is used or refused by name — flags given to `batch`, and
/// `--orders`/`--conversion` with the tight accountant alone; no message names a
/// nonexistent flag.
#[test]
fn flags_that_would_be_ignored_are_refused() {
    let line = "{\"q\":0.01,\"sigma\":1,\"steps\":100,\"delta\":1e-5}\n";
    let (code, out, err) = cli(&["batch", "--accountant", "pld", "--q", "7"], line);
    assert_eq!(code, Some(2));
    assert!(
        out.is_empty() && err.contains("batch takes no arguments"),
        "{err}"
    );
    let run = [
        "--q", "0.01", "--sigma", "1", "--steps", "1000", "--delta", "1e-5",
    ];
    for extra in [&["--orders", "2,3"][..], &["--conversion", "classic"][..]] {
        let mut args = vec!["epsilon"];
        args.extend(run);
        args.extend(["--accountant", "pld"]);
        args.extend(extra);
        let (code, _, err) = cli(&args, "");
        assert_eq!(code, Some(2), "{args:?}");
        assert!(
            err.contains(extra[0]) && err.contains("RDP accountant"),
            "{err}"
        );
        // With both, they apply (to the RDP half).
        let mut both = vec!["epsilon"];
        both.extend(run);
        both.extend(["--accountant", "both"]);
        both.extend(extra);
        assert_eq!(cli(&both, "").0, Some(0), "{both:?}");
    }
    let (code, _, err) = cli(
        &[
            "profile", "--q", "0.01", "--sigma", "1", "--steps", "10", "--orders", "2",
        ],
        "",
    );
    assert_eq!(code, Some(2));
    assert!(!err.contains("--epsilon-max"), "{err}");
}

/// Finding 9: the membership-inference bound comes from its own profile, whatever range
/// `profile --epsilon E` displays (it was 0.0256 for E = 3…10 and 0.427 for E = 1000).
#[test]
fn attack_bound_does_not_depend_on_the_displayed_range() {
    let bound = |e: &str| -> String {
        let (code, out, _) = cli(
            &[
                "profile",
                "--q",
                "0.01",
                "--sigma",
                "1.1",
                "--steps",
                "10000",
                "--epsilon",
                e,
            ],
            "",
        );
        assert_eq!(code, Some(0));
        out.lines()
            .filter(|l| l.starts_with("# membership inference"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let b3 = bound("3");
    assert!(b3.contains("0.001, true-positive rate <= 0.02"), "{b3}");
    assert_eq!(b3, bound("1000"));
    assert_eq!(b3, bound("0.5"));
}

/// Finding 9, second half: a point far out (ε = 1e300) no longer coarsens every other
/// point's bracket: δ(0) next to it is what it is alone.
#[test]
fn a_far_epsilon_does_not_loosen_the_others() {
    let m = sgm(0.01, 1.1);
    let alone = pld::profile(m, 10_000, &[0.0]).unwrap()[0].delta;
    let both = pld::profile(m, 10_000, &[0.0, 1e300]).unwrap();
    assert_eq!(both[0].delta, alone, "{:?} vs {alone:?}", both[0].delta);
    assert!(alone.upper - alone.lower < 1e-3, "{alone:?}");
    assert!(both[1].delta.upper < 1e-290 && both[1].delta.lower == 0.0);
    // And the API's range: many points up to 1e300 stay monotone.
    let grid: Vec<f64> = vec![0.0, 1.0, 5.0, 1e3, 1e100, 1e300];
    let p = pld::profile(m, 10_000, &grid).unwrap();
    for w in p.windows(2) {
        assert!(w[1].delta.upper <= w[0].delta.upper, "{p:?}");
    }
}

/// Hardening round 4 #5: the command line answers a CIFAR-like random-allocation run at
/// δ = 1e-10 (it was refused: "the grid budget cannot bracket epsilon within 1 %") and says
/// that its bracket is wider than the 1 % rule, in the text and in the JSON's meaning.
#[test]
fn a_wide_random_allocation_bracket_says_so() {
    let run = |delta: &str| -> Vec<String> {
        "epsilon --sampling random-allocation --sigma 1.5 --steps-per-epoch 782 --epochs 30 --delta"
            .split(' ')
            .chain([delta])
            .map(String::from)
            .collect()
    };
    let owned = run("1e-10");
    let args: Vec<&str> = owned.iter().map(String::as_str).collect();
    let (code, out, err) = cli(&args, "");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("certified upper bound; bracket [") && out.contains("wider than the 1 % rule"),
        "{out}"
    );
    let (code, out, err) = cli(&[&args[..], &["--json"]].concat(), "");
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let (u, l) = (
        v["epsilon"].as_f64().unwrap(),
        v["epsilon_lower"].as_f64().unwrap(),
    );
    assert!(
        l > 0.0 && u > l && u - l > 0.01 * u && u - l <= 0.05 * u,
        "{v}"
    );
    assert!(
        v["meaning"]
            .as_str()
            .unwrap()
            .contains("wider than the 1 % rule"),
        "{v}"
    );
    // A run within the rule says nothing of the kind.
    let owned = run("1e-5");
    let (_, out, _) = cli(&owned.iter().map(String::as_str).collect::<Vec<_>>(), "");
    assert!(!out.contains("wider than"), "{out}");
}

/// Hardening round 4 #10: every output quoted in a ```console block of the README and docs/ is
/// what this build prints. Each `$ sgm-rdp …` (or `$ cargo run … --bin sgm-rdp -- …`) line,
/// with its `\` continuations, is run (lines with quotes, pipes or a trailing comment are
/// read but not run: their words are not plain arguments), and each quoted line after it
/// must be a line of its output — a line ending in "...)", "..." or "…" only as the start of one.
#[test]
fn the_outputs_quoted_in_the_docs_are_this_build_s() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut files = vec![format!("{root}/README.md")];
    for e in std::fs::read_dir(format!("{root}/docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p.to_string_lossy().into_owned());
        }
    }
    let (mut checked, mut stale) = (0, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let mut in_block = false;
        let mut lines = Vec::new();
        for l in text.lines() {
            if l.trim_start().starts_with("```") {
                in_block = l.trim() == "```console";
                continue;
            }
            if in_block {
                lines.push(l.to_string());
            }
        }
        let mut i = 0;
        while i < lines.len() {
            let Some(cmd) = lines[i].strip_prefix("$ ") else {
                i += 1;
                continue;
            };
            let mut cmd = cmd.to_string();
            while cmd.ends_with('\\') && i + 1 < lines.len() {
                cmd.pop();
                i += 1;
                cmd.push_str(lines[i].trim());
            }
            i += 1;
            let quoted: Vec<&String> = lines[i..]
                .iter()
                .take_while(|l| !l.starts_with("$ "))
                .collect();
            i += quoted.len();
            let args = cmd
                .strip_prefix("sgm-rdp ")
                .or_else(|| cmd.split_once("--bin sgm-rdp -- ").map(|(_, a)| a));
            let Some(args) = args else { continue };
            if quoted.is_empty() || args.contains(['\'', '"', '|', '#']) {
                continue;
            }
            let words: Vec<&str> = args.split_whitespace().collect();
            let (_, out, err) = cli(&words, "");
            let printed: Vec<&str> = out.lines().chain(err.lines()).map(str::trim_end).collect();
            for q in &quoted {
                let q = q.trim_end();
                let short = q
                    .strip_suffix("...)")
                    .or_else(|| q.strip_suffix("..."))
                    .or_else(|| q.strip_suffix('…'));
                let found = match short {
                    Some(start) => printed.iter().any(|p| p.starts_with(start)),
                    None => printed.contains(&q),
                };
                checked += 1;
                if !found {
                    stale.push(format!("{f}: `{args}` quotes {q:?}"));
                }
            }
        }
    }
    assert!(checked >= 20, "only {checked} quoted lines found");
    assert!(
        stale.is_empty(),
        "{} of {checked} quoted lines are not this build's output:\n{}",
        stale.len(),
        stale.join("\n")
    );
}
