//! The CLI: the `batch` contract, one-line errors, non-zero exits.
#![cfg(not(target_arch = "wasm32"))]

use std::io::Write;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sgm-rdp"))
}

/// `sgm-rdp batch` with `input` on stdin.
fn batch(input: &[u8]) -> std::process::Output {
    let mut child = bin()
        .arg("batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn batch_one_line_per_input_in_order() {
    let input = "{\"q\":0.01,\"sigma\":1.1,\"alpha\":8}\n\
                 {\"q\":2,\"sigma\":1}\n\
                 not json\n\
                 {\"q\":0.0042666666666666667,\"sigma\":1.1,\"steps\":14063,\"delta\":1e-5}\n\
                 \n";
    let out = batch(input.as_bytes());
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["q"], 0.01);
    assert!(lines[0]["rdp"].as_f64().unwrap() > 0.0 && lines[0]["log_a"].as_f64().unwrap() > 0.0);
    let rdp = lines[0]["rdp"].as_f64().unwrap();
    let log_a = lines[0]["log_a"].as_f64().unwrap();
    assert!((rdp * 7.0 - log_a).abs() < 1e-15);
    assert!(lines[1]["error"].as_str().unwrap().contains("sample_rate"));
    assert!(lines[2]["error"].as_str().unwrap().contains("JSON"));
    assert_eq!(lines[3]["steps"], 14063);
    let eps = lines[3]["epsilon"].as_f64().unwrap();
    assert!(eps <= 2.59666 && eps > 2.59, "{eps}");
    assert!(lines[3]["alpha"].as_f64().unwrap() > 8.0);
    assert!(lines[4]["error"].is_string());
}

#[test]
fn bad_input_exits_nonzero_with_one_line() {
    for args in [
        vec![
            "epsilon", "--q", "2", "--sigma", "1", "--steps", "10", "--delta", "1e-5",
        ],
        vec![
            "epsilon", "--q", "0.1", "--sigma", "-1", "--steps", "10", "--delta", "1e-5",
        ],
        vec![
            "epsilon", "--q", "0.1", "--sigma", "1", "--steps", "0", "--delta", "1e-5",
        ],
        vec![
            "epsilon", "--q", "0.1", "--sigma", "1", "--steps", "10", "--delta", "1",
        ],
        vec!["rdp", "--q", "abc", "--sigma", "1"],
        vec!["rdp", "--q", "0.1", "--sigma", "1", "--alpha", "1"],
        vec!["frobnicate"],
    ] {
        let out = bin().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn dataset_terms_give_q_and_steps() {
    let out = bin()
        .args([
            "epsilon",
            "--dataset-size",
            "60000",
            "--batch-size",
            "256",
            "--epochs",
            "60",
            "--sigma",
            "1.1",
            "--delta",
            "1e-5",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["steps"], 14063);
    assert_eq!(v["q"].as_f64().unwrap(), 256.0 / 60000.0);
    assert!((v["grid_epsilon"].as_f64().unwrap() - 2.59666).abs() < 1e-5);
    let out = bin()
        .args([
            "epsilon",
            "--dataset-size",
            "100",
            "--batch-size",
            "200",
            "--epochs",
            "1",
            "--sigma",
            "1",
            "--delta",
            "1e-5",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn subcommands_json() {
    let run = |args: &[&str]| -> serde_json::Value {
        let out = bin().args(args).arg("--json").output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let e = run(&[
        "epsilon", "--q", "0.01", "--sigma", "1.1", "--steps", "1000", "--delta", "1e-5",
    ]);
    let eps = e["epsilon"].as_f64().unwrap();
    let d = run(&[
        "delta",
        "--q",
        "0.01",
        "--sigma",
        "1.1",
        "--steps",
        "1000",
        "--epsilon",
        &eps.to_string(),
    ]);
    assert!((d["delta"].as_f64().unwrap() / 1e-5 - 1.0).abs() < 1e-3);
    let c = run(&[
        "calibrate",
        "--q",
        "0.01",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
        "--epsilon",
        "1",
    ]);
    assert!(c["epsilon"].as_f64().unwrap() <= 1.0);
    let b = run(&["bounds", "--q", "0.01", "--sigma", "5", "--alpha", "4"]);
    assert_eq!(b["orders"][0]["bounds"][0]["name"], "theorem11");
    let c = run(&[
        "compare", "--q", "1", "--sigma", "10", "--steps", "100", "--delta", "1e-5",
    ]);
    let routes = c["routes"].as_array().unwrap();
    assert!(routes.len() >= 8);
    assert!(routes
        .iter()
        .any(|r| r["epsilon"].is_null() && r["note"].as_str().unwrap().starts_with("n/a")));
    let r = run(&["rdp", "--q", "0.01", "--sigma", "1.1", "--orders", "2,3.5"]);
    assert_eq!(r["orders"].as_array().unwrap().len(), 2);
}

/// Real bytes through the real binary: an invalid UTF-8 line gets its own error line
/// and the stream goes on (it used to abort); unknown keys are named, not echoed; the
/// PLD accountant answers with its bracket.
#[test]
fn batch_survives_bad_bytes_and_names_unknown_keys() {
    let mut input: Vec<u8> = Vec::new();
    input.extend_from_slice(b"{\"q\":0.01,\"sigma\":1.1,\"alpha\":2}\n");
    input.extend_from_slice(b"\xff\xfe\n");
    input.extend_from_slice(b"{\"q\":0.01,\"sigma\":1.1,\"steps\":100,\"delta\":1e-5,\"orders\":[2,3],\"error\":\"x\"}\n");
    input.extend_from_slice(b"{\"q\":0.0042666666666666667,\"sigma\":1.1,\"steps\":14063,\"delta\":1e-5,\"accountant\":\"pld\"}\n");
    input.extend_from_slice(
        b"{\"q\":0.01,\"sigma\":1.1,\"steps\":1000,\"epsilon\":1,\"accountant\":\"both\"}\n",
    );
    input.extend_from_slice(
        b"{\"q\":0.01,\"sigma\":1.1,\"steps\":1000,\"delta\":1e-5,\"accountant\":\"prv\"}\n",
    );
    let mut child = bin()
        .arg("batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    assert!(lines[0]["rdp"].is_number());
    assert!(lines[1]["error"].as_str().unwrap().contains("UTF-8"));
    let unknown = lines[2]["error"].as_str().unwrap();
    assert!(
        unknown.contains("orders") && unknown.contains("error"),
        "{unknown}"
    );
    assert!(lines[2].get("epsilon").is_none());
    let (up, lo) = (
        lines[3]["epsilon"].as_f64().unwrap(),
        lines[3]["epsilon_lower"].as_f64().unwrap(),
    );
    assert!(
        lo <= 2.38169 && (2.38169..2.3845).contains(&up),
        "{up} {lo}"
    );
    assert!(lines[4]["delta_pld"].as_f64().unwrap() < lines[4]["delta"].as_f64().unwrap());
    assert!(lines[5]["error"].as_str().unwrap().contains("accountant"));
}

#[test]
fn accountant_flag_is_honoured_or_refused() {
    let out = bin()
        .args([
            "epsilon",
            "--q",
            "0.0042666666666666667",
            "--sigma",
            "1.1",
            "--steps",
            "14063",
            "--delta",
            "1e-5",
            "--accountant",
            "pld",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["epsilon"].as_f64().unwrap() < 2.39 && v["epsilon_lower"].as_f64().unwrap() > 2.37);
    let out = bin()
        .args([
            "rdp",
            "--q",
            "0.1",
            "--sigma",
            "1",
            "--alpha",
            "2",
            "--accountant",
            "pld",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--accountant"));
    let out = bin()
        .args([
            "profile",
            "--q",
            "0.01",
            "--sigma",
            "1.1",
            "--steps",
            "1000",
            "--epsilon",
            "4",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("true-positive rate"));
}

/// Hardening #12: one rule for flags — every flag used or refused by name, repeated
/// flags refused, positional junk named, `--json` takes no value, numbers in messages
/// stay short.
#[test]
fn every_flag_is_used_or_refused() {
    let err = |args: &[&str]| -> String {
        let out = bin().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?} should fail");
        let e = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
        e
    };
    let base = [
        "--q", "0.01", "--sigma", "1.1", "--steps", "100", "--delta", "1e-5",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut v: Vec<&str> = vec!["epsilon"];
        v.extend(base);
        v.extend(extra);
        v
    };
    assert!(err(&with(&["junk"])).contains("unexpected argument 'junk'"));
    assert!(err(&with(&["--q", "0.2"])).contains("--q given more than once"));
    assert!(err(&with(&["--sample_rate", "0.2"])).contains("--q given more than once"));
    assert!(err(&with(&["--json=false"])).contains("--json takes no value"));
    assert!(err(&with(&["--alpha", "2"])).contains("--alpha does not apply to epsilon"));
    let mut cmp = vec!["compare"];
    cmp.extend(base);
    cmp.extend(["--orders", "2,3"]);
    assert!(err(&cmp).contains("--orders does not apply to compare"));
    let mut cal = vec!["calibrate"];
    cal.extend(base);
    cal.extend(["--epsilon", "1"]);
    assert!(err(&cal).contains("--steps is what calibrate --target steps finds"));
    let tiny = err(&[
        "delta",
        "--q",
        "0.01",
        "--sigma",
        "1",
        "--steps",
        "10",
        "--epsilon",
        "-5e-324",
    ]);
    assert!(tiny.len() < 120, "{tiny}");
}

/// `--accountant both` when the tight accountant cannot answer (q = 0.5 at σ = 0.3 over
/// 10⁹ steps: exact RDP's ε is 2.9·10⁹, far outside the domain the tight accountant covers,
/// where its refusal is allowed; q = 1e-6, σ = 0.6, T = 10⁸, used until it answered, now
/// does): the RDP answer is still printed, then one line
/// saying why the tight ε is unavailable, exit 0; `--json` and `batch` carry
/// `"epsilon_pld": null` and `"pld_error"` beside the RDP fields. With `pld` alone the
/// error stays the answer (exit 2).
/// Far outside the domain (σ = 0.001) the tight accountant refuses in a line, on both sides: a
/// step's coarse part there asked for 7·10¹⁰ lattice points (ε: the allocation aborted the
/// process) or a factor 2³⁶ (δ: 52 s and 4 GB, then an overflow in the dev profile).
#[test]
fn far_outside_the_domain_the_tight_accountant_refuses_in_a_line() {
    let args = ["--q", "0.5", "--sigma", "0.001", "--steps", "1000000000"];
    for (cmd, at) in [
        ("epsilon", ["--delta", "1e-5"]),
        ("delta", ["--epsilon", "1"]),
    ] {
        let out = bin()
            .arg(cmd)
            .args(args)
            .args(at)
            .args(["--accountant", "pld"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("sgm-rdp: PLD accountant: ") && err.lines().count() == 1,
            "{cmd}: {err}"
        );
    }
}

#[test]
fn both_keeps_the_rdp_answer_when_the_pld_fails() {
    let args = [
        "--q",
        "0.5",
        "--sigma",
        "0.3",
        "--steps",
        "1000000000",
        "--delta",
        "1e-5",
    ];
    let out = bin()
        .arg("epsilon")
        .args(args)
        .args(["--accountant", "both"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("epsilon = "), "{text}");
    assert!(text.contains("(continuous)"), "{text}");
    assert!(text.contains("epsilon (PLD): unavailable: "), "{text}");
    let out = bin()
        .arg("epsilon")
        .args(args)
        .args(["--accountant", "both", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["epsilon"].as_f64().unwrap() > 0.5);
    assert!(v["alpha"].as_f64().unwrap() > 1.0);
    assert!(v["epsilon_pld"].is_null() && v.get("epsilon_pld").is_some());
    assert!(v["pld_error"].as_str().unwrap().contains("PLD"));
    // Out of the domain, and the refusal says so.
    assert!(
        v["pld_error"]
            .as_str()
            .unwrap()
            .contains("beyond the domain"),
        "{v}"
    );
    // The δ side's refusal for the same run says so too (exact RDP's ε is above 10³ even at
    // δ = 0.1, so every (ε, δ) of the domain is beyond it).
    let out = bin()
        .arg("delta")
        .args(&args[..6])
        .args(["--epsilon", "10", "--accountant", "both", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["pld_error"]
            .as_str()
            .is_some_and(|m| m.contains("beyond the domain")),
        "{v}"
    );
    // delta at a given epsilon, same rule (far beyond the domain: within it the δ side now
    // answers through the ε side where its own lattices spend the call — q = 1e-6, σ = 0.3,
    // T = 10⁸ at ε = 1 had been refused here, and reads [0.3106, 0.3220]).
    let out = bin()
        .args([
            "delta",
            "--q",
            "0.5",
            "--sigma",
            "0.3",
            "--steps",
            "1000000000",
        ])
        .args(["--epsilon", "1", "--accountant", "both", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["delta"].as_f64().is_some(), "{v}");
    assert!(
        v["delta_pld"].is_null() && v["pld_error"].is_string(),
        "{v}"
    );
    // batch: the same keys.
    let out = batch(
        b"{\"q\":0.5,\"sigma\":0.3,\"steps\":1000000000,\"delta\":1e-5,\"accountant\":\"both\"}\n",
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["epsilon"].as_f64().unwrap() > 0.5, "{v}");
    assert!(
        v["epsilon_pld"].is_null() && v["pld_error"].is_string(),
        "{v}"
    );
    // pld alone: the error is the answer.
    let out = bin()
        .arg("epsilon")
        .args(args)
        .args(["--accountant", "pld"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

/// Tight calibration decides on the tight ε (MNIST's q, δ = 1e-5): at σ = 1.1 a target
/// ε = 0.1 is met by 9 steps (exact RDP would refuse: its one-step ε is 0.627), and
/// ε = 0.001 over 14063 steps needs σ ≈ 873 (RDP's α ≤ 10⁶ floor refuses every σ ≤ 1e8).
#[test]
fn tight_calibration_decides_with_the_tight_accountant() {
    let q = "0.0042666666666666667";
    let out = bin()
        .args(["calibrate", "--q", q, "--sigma", "1.1", "--delta", "1e-5"])
        .args([
            "--epsilon",
            "0.1",
            "--accountant",
            "pld",
            "--target",
            "steps",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = v["steps"].as_u64().unwrap();
    assert!((5..=20).contains(&t), "{v}");
    assert!(v["epsilon"].as_f64().unwrap() <= 0.1, "{v}");
    // One step more exceeds the target (the largest T).
    let more = bin()
        .args([
            "epsilon",
            "--q",
            q,
            "--sigma",
            "1.1",
            "--delta",
            "1e-5",
            "--accountant",
            "pld",
        ])
        .args(["--steps", &(t + 1).to_string(), "--json"])
        .output()
        .unwrap();
    let m: serde_json::Value = serde_json::from_slice(&more.stdout).unwrap();
    assert!(m["epsilon"].as_f64().unwrap() > 0.1, "{m}");
    let out = bin()
        .args(["calibrate", "--q", q, "--steps", "14063", "--delta", "1e-5"])
        .args(["--epsilon", "0.001", "--accountant", "pld", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = v["sigma"].as_f64().unwrap();
    assert!(s > 500.0 && s < 1500.0, "{v}");
    assert!(v["epsilon"].as_f64().unwrap() <= 0.001, "{v}");
    // A refusal names the tight one-step value (0.048 at sigma = 1.1), not RDP's 0.627.
    let out = bin()
        .args(["calibrate", "--q", q, "--sigma", "1.1", "--delta", "1e-5"])
        .args([
            "--epsilon",
            "0.01",
            "--accountant",
            "pld",
            "--target",
            "steps",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("0.048"), "{err}");
}

/// Conventions: `--help`, `<command> --help` and `--version` answer on stdout with exit 0;
/// an unknown command with `--help` is still named.
#[test]
fn help_and_version() {
    for args in [
        &["--help"][..],
        &["-h"],
        &["help"],
        &["epsilon", "--help"],
        &["batch", "--help"],
        &["calibrate", "-h"],
    ] {
        let out = bin().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("sgm-rdp"), "{args:?}: {text}");
    }
    let out = bin().arg("epsilon").arg("--help").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--q",
        "--sigma",
        "--steps",
        "--delta",
        "--accountant",
        "--json",
    ] {
        assert!(text.contains(flag), "{text}");
    }
    let out = bin().arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        format!("sgm-rdp {}", env!("CARGO_PKG_VERSION"))
    );
    let out = bin().args(["nosuch", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("unknown command 'nosuch'"));
}

/// `sgm-rdp <args>`: (exit success, stdout, stderr).
fn run(args: &[&str]) -> (bool, String, String) {
    let out = bin().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn what_the_guarantee_means_on_the_command_line() {
    // μ-GDP: the Gaussian mechanism (q = 1) has μ = √T/σ, inside the printed bracket.
    let (ok, out, _) = run(&["gdp", "--q", "1", "--sigma", "2", "--steps", "4", "--json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (mu, lo) = (v["mu"].as_f64().unwrap(), v["mu_lower"].as_f64().unwrap());
    assert!(lo <= 1.0 && (1.0..1.002).contains(&mu), "{out}");
    assert!(v["regret"].as_f64().unwrap() < 1e-4);
    assert_eq!(v["tradeoff"].as_array().unwrap().len(), 8);
    let (ok, text, _) = run(&["gdp", "--q", "0.01", "--sigma", "1", "--steps", "100"]);
    assert!(
        ok && text.starts_with("mu = ")
            && text.contains("regret")
            && text.contains("add/remove-one")
    );
    // Calibration to attack risk: advantage 0.1 at q = 1, T = 1 is σ = 3.978948.
    let (ok, out, _) = run(&[
        "calibrate",
        "--q",
        "1",
        "--steps",
        "1",
        "--advantage",
        "0.1",
        "--json",
    ]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let s = v["sigma"].as_f64().unwrap();
    assert!(
        (s / 3.978948 - 1.0).abs() < 2e-4 && v["advantage"].as_f64().unwrap() <= 0.1,
        "{out}"
    );
    let (ok, text, _) = run(&[
        "calibrate",
        "--q",
        "0.01",
        "--sigma",
        "1",
        "--tpr",
        "0.2",
        "--fpr",
        "0.01",
    ]);
    assert!(
        ok && text.starts_with("steps = ") && text.contains("certified"),
        "{text}"
    );
    // Every flag used or refused, by name.
    for (args, says) in [
        (
            vec!["calibrate", "--q", "0.01", "--steps", "10", "--tpr", "0.2"],
            "--tpr and --fpr go together",
        ),
        (
            vec![
                "calibrate",
                "--q",
                "0.01",
                "--steps",
                "10",
                "--advantage",
                "0.2",
                "--epsilon",
                "1",
            ],
            "--epsilon does not apply",
        ),
        (
            vec![
                "calibrate",
                "--q",
                "0.01",
                "--steps",
                "10",
                "--advantage",
                "1.5",
            ],
            "attack-risk target must be in (0, 1)",
        ),
        (
            vec![
                "calibrate",
                "--q",
                "0.01",
                "--steps",
                "10",
                "--advantage",
                "0.2",
                "--accountant",
                "rdp",
            ],
            "tight accountant",
        ),
        (
            vec![
                "calibrate",
                "--q",
                "0.01",
                "--steps",
                "10",
                "--tpr",
                "0.001",
                "--fpr",
                "0.01",
            ],
            "is not met",
        ),
        (
            vec![
                "gdp",
                "--q",
                "0.01",
                "--sigma",
                "1",
                "--steps",
                "10",
                "--epsilon",
                "1",
            ],
            "--epsilon does not apply to gdp",
        ),
    ] {
        let (ok, out, err) = run(&args);
        assert!(
            !ok && out.is_empty() && err.contains(says),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn user_level_epsilon_on_the_command_line_and_in_batch() {
    let args = [
        "epsilon", "--q", "0.0064", "--sigma", "1", "--steps", "782", "--delta", "1e-6",
    ];
    let mut with = args.to_vec();
    with.extend(["--group-size", "2", "--accountant", "pld", "--json"]);
    let (ok, out, _) = run(&with);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let e = v["epsilon"].as_f64().unwrap();
    assert!(
        (e - 2.532).abs() < 6e-4 && v["epsilon_lower"].as_f64().unwrap() <= e,
        "{out}"
    );
    // Group size 1 is today's answer, bit for bit.
    let mut one = args.to_vec();
    one.extend(["--group-size", "1", "--accountant", "pld", "--json"]);
    let mut plain = args.to_vec();
    plain.extend(["--accountant", "pld", "--json"]);
    let pick = |a: &[&str]| {
        let v: serde_json::Value = serde_json::from_str(&run(a).1).unwrap();
        v["epsilon"].as_f64().unwrap()
    };
    assert_eq!(pick(&one), pick(&plain));
    let out = batch(b"{\"q\":0.0064,\"sigma\":1,\"steps\":782,\"delta\":1e-6,\"group_size\":2,\"accountant\":\"pld\"}\n{\"q\":0.0064,\"sigma\":1,\"steps\":782,\"delta\":1e-6,\"group_size\":2}\n");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["epsilon"].as_f64().unwrap(), e);
    // Without the tight accountant: the exact-RDP group route (TF Privacy's), above it.
    let rdp = lines[1]["epsilon"].as_f64().unwrap();
    assert!(
        rdp > e && lines[1]["accountant"] == "rdp" && lines[1]["epsilon_lower"].is_null(),
        "{text}"
    );
    assert!(lines[1]["meaning"]
        .as_str()
        .unwrap()
        .contains("group privacy"));
    for bad in ["0", "2.5", "1000"] {
        let mut a = args.to_vec();
        a.extend(["--group-size", bad, "--accountant", "pld"]);
        let (ok, _, err) = run(&a);
        assert!(
            !ok && err.contains("--group-size must be a whole number"),
            "{bad}: {err}"
        );
    }
    // The command line's text names the route and shows both with --accountant both.
    let mut both = args.to_vec();
    both.extend(["--group-size", "2", "--accountant", "both"]);
    let (ok, out, _) = run(&both);
    assert!(
        ok && out.contains("group privacy") && out.contains("PLD") && out.lines().count() == 2,
        "{out}"
    );
    // Replace-one has no RDP group route here: the tight accountant is named.
    let mut rep = args.to_vec();
    rep.extend(["--group-size", "2", "--adjacency", "replace-one"]);
    assert!(run(&rep).2.contains("--accountant pld"));
}

/// One JSON answer from the command line (must succeed).
fn json_of(args: &[&str]) -> serde_json::Value {
    let (ok, out, err) = run(args);
    assert!(ok, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// One batch line's answer.
fn batch_of(line: &str) -> serde_json::Value {
    let out = batch(format!("{line}\n").as_bytes());
    serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap()
}

#[test]
fn sampling_and_adjacency_on_the_command_line_and_in_batch_agree() {
    // Shuffled MNIST: the band, the same bits from both front ends.
    let cli = json_of(&[
        "epsilon",
        "--sampling",
        "shuffle",
        "--sigma",
        "1.1",
        "--dataset-size",
        "60000",
        "--batch-size",
        "256",
        "--epochs",
        "60",
        "--delta",
        "1e-5",
        "--json",
    ]);
    let b = batch_of(
        r#"{"sampling":"shuffle","sigma":1.1,"dataset_size":60000,"batch_size":256,"epochs":60,"delta":1e-5}"#,
    );
    for k in [
        "epsilon",
        "epsilon_lower",
        "steps",
        "steps_per_epoch",
        "epochs_full",
    ] {
        assert_eq!(cli[k], b[k], "{k}: {cli} vs {b}");
    }
    assert_eq!(cli["steps_per_epoch"], 234);
    assert_eq!(cli["accountant"], "band");
    let (up, lo) = (
        cli["epsilon"].as_f64().unwrap(),
        cli["epsilon_lower"].as_f64().unwrap(),
    );
    assert!((up - 54.0458).abs() < 1e-3 && lo > 5.0 && lo < up, "{cli}");
    // t from q (t = floor(1/q)) and from --steps-per-epoch give the same band when 1/q is whole.
    let from_q = json_of(&[
        "epsilon",
        "--sampling",
        "shuffle",
        "--q",
        "0.01",
        "--sigma",
        "1",
        "--steps",
        "300",
        "--delta",
        "1e-5",
        "--json",
    ]);
    let from_t = json_of(&[
        "epsilon",
        "--sampling",
        "shuffle",
        "--steps-per-epoch",
        "100",
        "--sigma",
        "1",
        "--steps",
        "300",
        "--delta",
        "1e-5",
        "--json",
    ]);
    assert_eq!(from_q["epsilon_lower"], from_t["epsilon_lower"]);
    // Replace-one Poisson: the tight accountant, same bits in batch.
    let rep = json_of(&[
        "epsilon",
        "--adjacency",
        "replace-one",
        "--q",
        "0.01",
        "--sigma",
        "2",
        "--steps",
        "300",
        "--delta",
        "1e-5",
        "--accountant",
        "pld",
        "--json",
    ]);
    let rb = batch_of(
        r#"{"adjacency":"replace-one","q":0.01,"sigma":2,"steps":300,"delta":1e-5,"accountant":"pld"}"#,
    );
    assert_eq!(rep["epsilon"], rb["epsilon"]);
    assert_eq!(rep["adjacency"], "replace-one");
    let add = json_of(&[
        "epsilon",
        "--q",
        "0.01",
        "--sigma",
        "2",
        "--steps",
        "300",
        "--delta",
        "1e-5",
        "--accountant",
        "pld",
        "--json",
    ]);
    assert!(
        rep["epsilon_lower"].as_f64() > add["epsilon"].as_f64(),
        "{rep} {add}"
    );
    // BandMF with b bands is DP-SGD with ceil(T/b) steps.
    let banded = json_of(&[
        "epsilon", "--q", "0.01", "--sigma", "1", "--steps", "3001", "--delta", "1e-5", "--bands",
        "4", "--json",
    ]);
    let direct = json_of(&[
        "epsilon", "--q", "0.01", "--sigma", "1", "--steps", "751", "--delta", "1e-5", "--json",
    ]);
    assert_eq!(banded["epsilon"], direct["epsilon"]);
    assert_eq!(
        (banded["bands"].clone(), banded["training_steps"].clone()),
        (4.into(), 3001.into())
    );
    let bb = batch_of(r#"{"q":0.01,"sigma":1,"steps":3001,"delta":1e-5,"bands":4}"#);
    assert_eq!(bb["epsilon"], direct["epsilon"]);
    // From dataset terms each step samples one of b partitions of N/b: rate b·B/N, not B/N
    // (Choquette-Choo et al., arXiv 2306.08153). MNIST, 60 epochs, 4 bands: T = 14063,
    // ⌈T/4⌉ = 3516 steps at q = 4·256/60000 (it read 1.134 at q = 256/60000, 4.7× low).
    let mnist = [
        "epsilon",
        "--dataset-size",
        "60000",
        "--batch-size",
        "256",
        "--epochs",
        "60",
        "--sigma",
        "1.1",
        "--delta",
        "1e-5",
        "--bands",
        "4",
        "--json",
    ];
    let banded = json_of(&mnist);
    let direct = json_of(&[
        "epsilon",
        "--q",
        &(4.0 * 256.0 / 60000.0).to_string(),
        "--steps",
        "3516",
        "--sigma",
        "1.1",
        "--delta",
        "1e-5",
        "--json",
    ]);
    assert_eq!(banded["epsilon"], direct["epsilon"], "{banded} {direct}");
    assert!(banded["epsilon"].as_f64().unwrap() > 5.0, "{banded}");
    let bb = batch_of(
        r#"{"dataset_size":60000,"batch_size":256,"epochs":60,"sigma":1.1,"delta":1e-5,"bands":4}"#,
    );
    assert_eq!(bb["epsilon"], direct["epsilon"]);
    assert_eq!(bb["training_steps"], 14063);
    let too_big = batch_of(
        r#"{"dataset_size":600,"batch_size":256,"epochs":60,"sigma":1.1,"delta":1e-5,"bands":4}"#,
    );
    assert!(
        too_big["error"].as_str().unwrap().contains("must be <= 1"),
        "{too_big}"
    );
    // Truncated Poisson: the same bits from both front ends; a cap at N is Poisson.
    let tr = json_of(&[
        "epsilon",
        "--sampling",
        "truncated-poisson",
        "--q",
        "0.01",
        "--dataset-size",
        "5000",
        "--max-batch",
        "60",
        "--sigma",
        "1.2",
        "--steps",
        "300",
        "--delta",
        "1e-5",
        "--accountant",
        "pld",
        "--json",
    ]);
    let tb = batch_of(
        r#"{"sampling":"truncated-poisson","q":0.01,"dataset_size":5000,"max_batch":60,"sigma":1.2,"steps":300,"delta":1e-5,"accountant":"pld"}"#,
    );
    assert_eq!(tr["epsilon"], tb["epsilon"]);
    assert_eq!(tr["epsilon_lower"], tb["epsilon_lower"]);
    let at_n = batch_of(
        r#"{"sampling":"truncated-poisson","q":0.01,"dataset_size":5000,"max_batch":5000,"sigma":1.2,"steps":300,"delta":1e-5,"accountant":"pld"}"#,
    );
    let poisson = batch_of(r#"{"q":0.01,"sigma":1.2,"steps":300,"delta":1e-5,"accountant":"pld"}"#);
    assert_eq!(at_n["epsilon"], poisson["epsilon"]);
    assert!(tr["epsilon"].as_f64() > poisson["epsilon"].as_f64());
    // Fixed-size batches (replace-one, RDP): the same bits from both front ends.
    let fs = json_of(&[
        "epsilon",
        "--sampling",
        "fixed-size",
        "--adjacency",
        "replace-one",
        "--dataset-size",
        "60000",
        "--batch-size",
        "256",
        "--sigma",
        "4",
        "--steps",
        "14063",
        "--delta",
        "1e-5",
        "--json",
    ]);
    let fb = batch_of(
        r#"{"sampling":"fixed-size","adjacency":"replace-one","dataset_size":60000,"batch_size":256,"sigma":4,"steps":14063,"delta":1e-5}"#,
    );
    assert_eq!(fs["epsilon"], fb["epsilon"]);
    assert!(fs["epsilon_lower"].is_null() && fs["accountant"] == "rdp");
    // dp_accounting's RdpAccountant (REPLACE_ONE, GaussianDpEvent(σ/2)): 2.375941495717974.
    assert!(
        (fs["epsilon"].as_f64().unwrap() - 2.375941495717974).abs() < 1e-9,
        "{fs}"
    );
}

#[test]
fn calibration_follows_the_sampling_scheme() {
    // Shuffled MNIST, 60 epochs: the smallest σ whose no-amplification ε is ≤ 8.
    let c = json_of(&[
        "calibrate",
        "--sampling",
        "shuffle",
        "--dataset-size",
        "60000",
        "--batch-size",
        "256",
        "--epochs",
        "60",
        "--delta",
        "1e-5",
        "--epsilon",
        "8",
        "--json",
    ]);
    let sigma = c["sigma"].as_f64().unwrap();
    assert_eq!(c["calibrated"], "sigma");
    assert!(c["epsilon"].as_f64().unwrap() <= 8.0, "{c}");
    let at = |s: f64| {
        json_of(&[
            "epsilon",
            "--sampling",
            "shuffle",
            "--dataset-size",
            "60000",
            "--batch-size",
            "256",
            "--epochs",
            "60",
            "--delta",
            "1e-5",
            "--sigma",
            &s.to_string(),
            "--json",
        ])["epsilon"]
            .as_f64()
            .unwrap()
    };
    assert!(at(sigma) <= 8.0 && at(sigma * 0.999) > 8.0, "{sigma}");
    // Most steps, replace-one Poisson: the answer meets the target, one more step misses.
    let s = json_of(&[
        "calibrate",
        "--adjacency",
        "replace-one",
        "--q",
        "0.01",
        "--sigma",
        "2",
        "--delta",
        "1e-5",
        "--epsilon",
        "1",
        "--accountant",
        "pld",
        "--json",
    ]);
    let t = s["steps"].as_u64().unwrap();
    let eps_at = |t: u64| {
        json_of(&[
            "epsilon",
            "--adjacency",
            "replace-one",
            "--q",
            "0.01",
            "--sigma",
            "2",
            "--delta",
            "1e-5",
            "--steps",
            &t.to_string(),
            "--accountant",
            "pld",
            "--json",
        ])["epsilon"]
            .as_f64()
            .unwrap()
    };
    assert!(eps_at(t) <= 1.0 && eps_at(t + 1) > 1.0, "{s}");
}

#[test]
fn profiles_follow_the_sampling_scheme() {
    // Replace-one: each profile bracket overlaps the `delta` command's bracket at its ε.
    let p = json_of(&[
        "profile",
        "--adjacency",
        "replace-one",
        "--q",
        "0.01",
        "--sigma",
        "2",
        "--steps",
        "300",
        "--epsilon",
        "2",
        "--json",
    ]);
    let pts = p["profile"].as_array().unwrap();
    assert_eq!(pts.len(), 101);
    for i in [10, 25, 50] {
        let e = pts[i]["epsilon"].as_f64().unwrap();
        let d = json_of(&[
            "delta",
            "--adjacency",
            "replace-one",
            "--q",
            "0.01",
            "--sigma",
            "2",
            "--steps",
            "300",
            "--epsilon",
            &e.to_string(),
            "--accountant",
            "pld",
            "--json",
        ]);
        let (lo, up) = (
            pts[i]["delta"]["lower"].as_f64().unwrap(),
            pts[i]["delta"]["upper"].as_f64().unwrap(),
        );
        assert!(
            lo <= d["delta"].as_f64().unwrap() && d["delta_lower"].as_f64().unwrap() <= up,
            "ε {e}: [{lo}, {up}] vs {d}"
        );
    }
    // Shuffled: the upper end is the Gaussian's (no amplification), falling in ε; the
    // lower end below it; attack bounds between FPR and 1.
    let s = json_of(&[
        "profile",
        "--sampling",
        "shuffle",
        "--sigma",
        "1.1",
        "--dataset-size",
        "60000",
        "--batch-size",
        "256",
        "--epochs",
        "60",
        "--json",
    ]);
    let pts = s["profile"].as_array().unwrap();
    let mut last = f64::INFINITY;
    for p in pts {
        let (lo, up) = (
            p["delta"]["lower"].as_f64().unwrap(),
            p["delta"]["upper"].as_f64().unwrap(),
        );
        assert!(lo <= up && up <= last && lo > 0.0, "{p}");
        last = up;
    }
    for r in s["attack"].as_array().unwrap() {
        let (fpr, tpr) = (r["fpr"].as_f64().unwrap(), r["tpr_max"].as_f64().unwrap());
        assert!(tpr >= fpr && tpr <= 1.0, "{r}");
    }
    let (ok, _, err) = run(&[
        "profile",
        "--sampling",
        "fixed-size",
        "--adjacency",
        "replace-one",
        "--dataset-size",
        "100",
        "--batch-size",
        "10",
        "--sigma",
        "1",
        "--steps",
        "10",
    ]);
    assert!(!ok && err.contains("RDP only"), "{err}");
}

#[test]
fn sampling_refusals_name_what_is_wrong() {
    let base = [
        "epsilon", "--q", "0.01", "--sigma", "1", "--steps", "300", "--delta", "1e-5",
    ];
    for (extra, says) in [
        (
            &["--sampling", "random-allocation"][..],
            "not q, steps or --max-batch",
        ),
        (&["--sampling", "fixed-size"][..], "--adjacency replace-one"),
        (
            &["--sampling", "truncated-poisson", "--accountant", "pld"][..],
            "truncated-poisson needs --dataset-size",
        ),
        (
            &["--max-batch", "9", "--accountant", "pld"][..],
            "--max-batch applies",
        ),
        (
            &[
                "--sampling",
                "truncated-poisson",
                "--max-batch",
                "9",
                "--dataset-size",
                "100",
            ][..],
            "--accountant pld",
        ),
        (&["--sampling", "nope"][..], "sampling must be"),
        (&["--adjacency", "sideways"][..], "adjacency must be"),
        (&["--adjacency", "replace-one"][..], "--accountant pld"),
        (
            &["--sampling", "shuffle", "--accountant", "pld"][..],
            "leave out the accountant",
        ),
        (
            &["--sampling", "shuffle", "--steps-per-epoch", "7"][..],
            "q or --steps-per-epoch",
        ),
        (
            &["--sampling", "shuffle", "--bands", "2"][..],
            "--bands applies",
        ),
        (&["--bands", "0"][..], "--bands must be"),
        (
            &["--sampling", "shuffle", "--group-size", "2"][..],
            "not available with shuffled",
        ),
        // Without --max-batch the default the help states applies (issue 61 #9): the same
        // bracket as with it given; the training tools' names also take dashes.
        // Hardening 4 #7: what does not apply is refused by name, not ignored.
        (
            &[
                "--sampling",
                "shuffle",
                "--steps-per-epoch",
                "97",
                "--selected",
                "2",
            ][..],
            "--selected applies to random allocation",
        ),
    ] {
        let mut a = base.to_vec();
        a.extend(extra);
        let (ok, out, err) = run(&a);
        assert!(!ok && out.is_empty() && err.contains(says), "{a:?}: {err}");
    }
    let (ok, _, err) = run(&[
        "calibrate",
        "--q",
        "0.01",
        "--steps",
        "1000",
        "--advantage",
        "0.1",
        "--group-size",
        "3",
    ]);
    assert!(
        !ok && err.contains("--advantage calibrate Poisson sampling of one example"),
        "{err}"
    );
    for (line, says) in [
        (
            r#"{"sampling":"shuffle","sigma":1,"steps":10,"delta":1e-5}"#,
            "need steps_per_epoch",
        ),
        (
            r#"{"sampling":3,"q":0.1,"sigma":1,"steps":10,"delta":1e-5}"#,
            "must be a string",
        ),
        (
            r#"{"adjacency":"replace-one","q":0.1,"sigma":1,"steps":10,"delta":1e-5}"#,
            "\"accountant\": \"pld\"",
        ),
        (
            r#"{"sampling":"shuffle","sigma":1,"dataset_size":100,"batch_size":200,"epochs":1,"delta":1e-5}"#,
            "batch size",
        ),
    ] {
        let v = batch_of(line);
        assert!(
            v["error"].as_str().is_some_and(|e| e.contains(says)),
            "{line}: {v}"
        );
    }
}

/// One in 40 steps per epoch at σ = 1.5, δ = 1e-5 (random allocation's test run).
const ALLOC_40: [&str; 8] = [
    "--sampling",
    "random-allocation",
    "--steps-per-epoch",
    "40",
    "--sigma",
    "1.5",
    "--delta",
    "1e-5",
];

/// Random allocation (balls in bins) on both front ends: the same bits, t from (N, B) as
/// ⌈N/B⌉, the engine's bracket, and one-line refusals naming the flag or key.
#[test]
fn random_allocation_on_both_front_ends() {
    let (ok, out, err) = run(&[
        "epsilon",
        "--sampling",
        "random-allocation",
        "--steps-per-epoch",
        "40",
        "--epochs",
        "8",
        "--sigma",
        "1.5",
        "--delta",
        "1e-5",
        "--json",
    ]);
    assert!(ok, "{err}");
    let cli: serde_json::Value = serde_json::from_str(&out).unwrap();
    let out = batch(
        br#"{"sampling":"balls-in-bins","dataset_size":400,"batch_size":10,"epochs":8,"sigma":1.5,"delta":1e-5}
{"sampling":"random-allocation","steps_per_epoch":40,"epochs":8,"sigma":1.5,"delta":1e-5,"accountant":"rdp"}
{"sampling":"random-allocation","steps_per_epoch":40,"selected":41,"epochs":8,"sigma":1.5,"delta":1e-5}
"#,
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["epsilon"], cli["epsilon"]);
    assert_eq!(lines[0]["steps_per_epoch"], 40);
    let p = sgm_rdp::engine::pld::Phase::allocation(1.5, 40, 1, 8).unwrap();
    let b = sgm_rdp::engine::pld::epsilon_phases(&[p], 1e-5)
        .unwrap()
        .epsilon;
    assert_eq!(cli["epsilon"].as_f64(), Some(b.upper));
    assert_eq!(cli["epsilon_lower"].as_f64(), Some(b.lower));
    assert!(lines[1]["error"]
        .as_str()
        .unwrap()
        .contains("tight accountant"));
    assert!(lines[2]["error"].as_str().unwrap().contains("selected"));
    let mut words = vec!["epsilon"];
    words.extend(ALLOC_40);
    let (ok, _, err) = run(&words);
    assert!(
        !ok && err.contains("--epochs") && err.lines().count() == 1,
        "{err}"
    );
}

/// "Most steps" for random allocation counts whole epochs: the answer E meets the target
/// and E + 1 does not, each checked by its own `epsilon` call.
#[test]
fn random_allocation_calibrates_the_most_epochs() {
    let base = ALLOC_40;
    let mut args = vec!["calibrate"];
    args.extend(base);
    args.extend(["--epsilon", "1.5", "--target", "steps", "--json"]);
    let a = json_of(&args);
    assert_eq!(a["calibrated"], "epochs");
    let e = a["epochs"].as_u64().unwrap();
    let eps_at = |epochs: u64| {
        let n = epochs.to_string();
        let mut args = vec!["epsilon"];
        args.extend(base);
        args.extend(["--epochs", n.as_str(), "--json"]);
        json_of(&args)["epsilon"].as_f64().unwrap()
    };
    assert!(e >= 1 && eps_at(e) <= 1.5 && eps_at(e + 1) > 1.5, "{a}");
    assert_eq!(a["epsilon"].as_f64(), Some(eps_at(e)));
    let mut words = vec!["calibrate"];
    words.extend(base);
    words.extend(["--epsilon", "1.5", "--target", "steps"]);
    let (ok, out, _) = run(&words);
    assert!(
        ok && out.starts_with(&format!("epochs = {e}: the most epochs")),
        "{out}"
    );
}

/// MNIST's `gdp --json` (q = 256/60000, σ = 1.1, T = 14070).
const MNIST_GDP: [&str; 8] = [
    "gdp",
    "--q",
    "0.0042666666666666667",
    "--sigma",
    "1.1",
    "--steps",
    "14070",
    "--json",
];

/// `gdp` for every scheme the tight accountant answers: user-level at q = 1 is the
/// Gaussian mechanism with μ = k·√T/σ (closed form, no regret); group size 1 is Poisson's
/// own μ (within the two profiles' ranges); random allocation answers; fixed-size batches
/// (RDP only) are refused by name.
#[test]
fn gdp_follows_the_scheme() {
    let g = json_of(&[
        "gdp",
        "--q",
        "1",
        "--sigma",
        "4",
        "--steps",
        "4",
        "--group-size",
        "2",
        "--json",
    ]);
    let (mu, lo) = (g["mu"].as_f64().unwrap(), g["mu_lower"].as_f64().unwrap());
    assert!(lo <= 1.0 && (1.0..1.0 + 1e-4).contains(&mu), "{g}");
    assert!(g["regret"].as_f64().unwrap() < 1e-4, "{g}");
    let plain = json_of(&MNIST_GDP)["mu"].as_f64().unwrap();
    let mut one = MNIST_GDP.to_vec();
    one.extend(["--group-size", "1"]);
    let one = json_of(&one);
    assert!(
        (one["mu"].as_f64().unwrap() - plain).abs() < 1e-4 * plain,
        "{one} vs {plain}"
    );
    let mut two = MNIST_GDP.to_vec();
    two.extend(["--group-size", "2"]);
    assert!(json_of(&two)["mu"].as_f64().unwrap() > 1.5 * plain);
    let a = json_of(&[
        "gdp",
        "--sigma",
        "1.1",
        "--sampling",
        "random-allocation",
        "--steps-per-epoch",
        "234",
        "--epochs",
        "60",
        "--json",
    ]);
    assert!(
        a["mu"].as_f64().unwrap() > 0.5
            && a["regret"].as_f64().unwrap() < 0.05
            && a["steps_per_epoch"] == 234,
        "{a}"
    );
    let (ok, _, err) = run(&[
        "gdp",
        "--sigma",
        "1",
        "--sampling",
        "fixed-size",
        "--dataset-size",
        "1000",
        "--batch-size",
        "10",
        "--epochs",
        "2",
        "--adjacency",
        "replace-one",
    ]);
    assert!(!ok && err.contains("fixed-size"), "{err}");
}

/// A batch line with "command": "gdp" is the command line's `gdp --json`, for Poisson
/// sampling and for a scheme; other keys that do not apply are refused by name.
#[test]
fn gdp_lines_in_batch_match_the_command_line() {
    let cli = json_of(&MNIST_GDP);
    let line = batch_of(r#"{"command":"gdp","q":0.0042666666666666667,"sigma":1.1,"steps":14070}"#);
    for k in ["mu", "mu_lower", "regret", "advantage"] {
        assert_eq!(cli[k], line[k], "{k}: {line}");
    }
    let cli = json_of(&[
        "gdp",
        "--q",
        "0.0064",
        "--sigma",
        "1",
        "--steps",
        "782",
        "--group-size",
        "2",
        "--json",
    ]);
    let line = batch_of(r#"{"command":"gdp","q":0.0064,"sigma":1,"steps":782,"group_size":2}"#);
    assert_eq!(cli["mu"], line["mu"], "{line}");
    let bad = batch_of(r#"{"command":"gdp","q":0.1,"sigma":1,"steps":7,"epsilon":1}"#);
    assert!(bad["error"].as_str().unwrap().contains("epsilon"), "{bad}");
    let bad = batch_of(r#"{"command":"profile","q":0.1,"sigma":1,"steps":7}"#);
    assert!(bad["error"].as_str().unwrap().contains("command"), "{bad}");
}

/// A batch line with "command": "calibrate" is the command line's `calibrate --json` with
/// the line's keys as flags: an attack-risk target (tpr with fpr, or advantage) and an ε
/// target give the same numbers; the risk keys on an ε/δ line are refused by name.
#[test]
fn calibrate_lines_in_batch_match_the_command_line() {
    let cli = json_of(&[
        "calibrate",
        "--q",
        "0.0042666666666666667",
        "--steps",
        "14070",
        "--tpr",
        "0.05",
        "--fpr",
        "0.01",
        "--json",
    ]);
    let line = batch_of(
        r#"{"command":"calibrate","q":0.0042666666666666667,"steps":14070,"tpr":0.05,"fpr":0.01}"#,
    );
    assert_eq!(cli["sigma"], line["sigma"], "{line}");
    assert!(line["tpr"].as_f64().unwrap() <= 0.05, "{line}");
    let cli = json_of(&[
        "calibrate",
        "--q",
        "0.01",
        "--sigma",
        "1",
        "--advantage",
        "0.2",
        "--json",
    ]);
    let line = batch_of(r#"{"command":"calibrate","q":0.01,"sigma":1,"advantage":0.2}"#);
    assert_eq!(cli["steps"], line["steps"], "{line}");
    let bad = batch_of(r#"{"command":"calibrate","q":0.01,"steps":1000,"tpr":0.05}"#);
    assert!(
        bad["error"].as_str().unwrap().contains("tpr and fpr"),
        "{bad}"
    );
    let bad = batch_of(r#"{"q":0.01,"sigma":1,"steps":10,"delta":1e-5,"tpr":0.1}"#);
    assert!(
        bad["error"].as_str().unwrap().contains("calibrate lines"),
        "{bad}"
    );
}

/// #22: `libraries` prints what each library reports for the run (computed), and with
/// dataset terms Opacus' own q and steps from its loader.
#[test]
fn libraries_rows_name_each_tool() {
    let (ok, out, err) = run(&[
        "libraries",
        "--q",
        "0.0001",
        "--sigma",
        "1.5",
        "--steps",
        "10000",
        "--delta",
        "1e-5",
    ]);
    assert!(ok, "{err}");
    assert_eq!(out.lines().count(), 7, "{out}");
    assert!(
        out.contains("dp_accounting PLDAccountant                          0.0232"),
        "{out}"
    );
    assert!(
        out.contains("Opacus, PrivacyEngine default (PRV accountant)       0.0299"),
        "{out}"
    );
    let (ok, out, err) = run(&[&["libraries"][..], &P1[..], &["--json"][..]].concat());
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["opacus_steps"], 2940);
    assert_eq!(v["rows"].as_array().unwrap().len(), 6);
    assert!(v["rows"][0]["note"]
        .as_str()
        .unwrap()
        .contains("1/98 and 2940 steps"));
    let (ok, _, err) = run(&["libraries", "--q", "0.01", "--sigma", "1", "--steps", "10"]);
    assert!(!ok && err.contains("missing --delta"), "{err}");
}

/// One rule for every front end (#22): a calibration decides with one accountant, so
/// `both` is refused — for Poisson sampling and for the scheme query alike (the latter used
/// to search on exact RDP's ε while printing both).
#[test]
fn calibration_takes_one_accountant_on_every_path() {
    for extra in [
        &[][..],
        &["--group-size", "2"],
        &["--adjacency", "replace-one"],
    ] {
        let mut args = vec![
            "calibrate",
            "--q",
            "0.01",
            "--steps",
            "1000",
            "--delta",
            "1e-5",
            "--epsilon",
            "1",
            "--accountant",
            "both",
        ];
        args.extend(extra);
        let (ok, _, err) = run(&args);
        assert!(
            !ok && err.contains("one target, one accountant"),
            "{args:?}: {err}"
        );
    }
    let line = r#"{"command":"calibrate","q":0.01,"steps":1000,"delta":1e-5,"epsilon":1,"accountant":"both","group_size":2}"#;
    let out = sgm_rdp::cli::batch_line(line);
    assert!(out.contains("one target, one accountant"), "{out}");
}

/// Hardening 4 #9: a reader that closes the pipe early (`sgm-rdp … | head -3`) ends the
/// command quietly with exit 0, not with a "Broken pipe" panic. Both outputs are larger than
/// a pipe's buffer, so the write after the reader is gone must fail with EPIPE.
#[test]
fn a_closed_pipe_exits_quietly() {
    let orders: Vec<String> = (0..6000).map(|i| format!("{}", 1.5 + i as f64)).collect();
    let mut child = bin()
        .args([
            "rdp",
            "--q",
            "0.01",
            "--sigma",
            "1",
            "--orders",
            &orders.join(","),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !err.contains("panicked"),
        "{:?} {err}",
        out.status
    );

    let mut child = bin()
        .arg("batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let line = "{\"q\":0.01,\"sigma\":1,\"alpha\":2}\n".repeat(20000);
    let _ = child.stdin.take().unwrap().write_all(line.as_bytes());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !err.contains("panicked"),
        "{:?} {err}",
        out.status
    );
}

/// Issue 61 #9: truncated Poisson without --max-batch takes the default --help states (q·N
/// plus four standard deviations: 603 for q = 0.01024, N = 50,000), and the training tools'
/// names take dashes like every other flag (--noise-multiplier, --sample-rate).
#[test]
fn stated_defaults_apply_and_tool_names_take_dashes() {
    let run = |extra: &[&str]| {
        let mut a = vec![
            "epsilon",
            "--sampling",
            "truncated-poisson",
            "--q",
            "0.01024",
            "--dataset-size",
            "50000",
            "--sigma",
            "1",
            "--steps",
            "2930",
            "--delta",
            "1e-5",
            "--accountant",
            "pld",
            "--json",
        ];
        a.extend(extra);
        json_of(&a)
    };
    let default = run(&[]);
    let given = run(&["--max-batch", "603"]);
    assert_eq!(default["epsilon"], given["epsilon"]);
    assert_eq!(default["max_batch"], 603);
    let dashed = json_of(&[
        "epsilon",
        "--noise-multiplier",
        "1.1",
        "--sample-rate",
        "0.01",
        "--steps",
        "100",
        "--delta",
        "1e-5",
        "--json",
    ]);
    let named = json_of(&[
        "epsilon", "--sigma", "1.1", "--q", "0.01", "--steps", "100", "--delta", "1e-5", "--json",
    ]);
    assert_eq!(dashed["epsilon"], named["epsilon"]);
}

/// Issue 61 #9: a run given in dataset terms warns when δ ≥ 1/N, as the page does (text
/// answers only; JSON keeps its fields).
#[test]
fn delta_at_or_above_one_over_n_is_warned() {
    let base = [
        "epsilon",
        "--dataset-size",
        "1000",
        "--batch-size",
        "10",
        "--epochs",
        "2",
        "--sigma",
        "1",
        "--delta",
    ];
    let (ok, out, _) = run(&[&base[..], &["1e-2"]].concat());
    assert!(
        ok && out.contains("warning: delta = 0.01 >= 1/N = 0.001"),
        "{out}"
    );
    let (ok, out, _) = run(&[&base[..], &["1e-4"]].concat());
    assert!(ok && !out.contains("1/N"), "{out}");
    let (ok, out, _) = run(&[&base[..], &["1e-2", "--json"]].concat());
    assert!(ok && !out.contains("warning"), "{out}");
}

/// One default story where the user meets it (issue 61 #9): a plain text answer without
/// --accountant says it is exact RDP and where the tight accountant is the default; a given
/// accountant, JSON and scheme runs carry no such line.
#[test]
fn the_default_accountant_is_named_where_it_answers() {
    let base = ["--q", "0.01", "--sigma", "1", "--steps", "1000"];
    let with = |cmd: &str, extra: &[&str]| {
        let mut a = vec![cmd];
        a.extend(base);
        a.extend(extra);
        run(&a).1
    };
    let note = "(exact RDP: the command line's default; --accountant pld gives";
    assert!(with("epsilon", &["--delta", "1e-5"]).contains(note));
    assert!(with("delta", &["--epsilon", "2"]).contains(note));
    let cal = run(&[
        "calibrate",
        "--q",
        "0.01",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
        "--epsilon",
        "3",
    ])
    .1;
    assert!(cal.contains(note), "{cal}");
    for extra in [
        &["--delta", "1e-5", "--accountant", "rdp"][..],
        &["--delta", "1e-5", "--accountant", "pld"],
        &["--delta", "1e-5", "--json"],
        &[
            "--delta",
            "1e-5",
            "--group-size",
            "2",
            "--accountant",
            "pld",
        ],
    ] {
        let out = with("epsilon", extra);
        assert!(!out.is_empty() && !out.contains(note), "{extra:?}: {out}");
    }
}

/// P1's terms (issue 61): N 50,000, B 512, 30 epochs, σ 1, δ 1e-5.
pub(crate) const P1: [&str; 10] = [
    "--dataset-size",
    "50000",
    "--batch-size",
    "512",
    "--epochs",
    "30",
    "--sigma",
    "1",
    "--delta",
    "1e-5",
];

/// Φ̄(z), the standard normal's upper tail (for the Gaussian trade-off's closed form).
fn phi_bar(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// `gdp --delta` and `profile --delta` (issue 61 #9: they had refused it). gdp: the ε implied
/// by the reported μ at δ, checked against the Gaussian mechanism's closed-form profile
/// δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) (Balle & Wang, ICML 2018, Theorem 8), evaluated
/// here independently: it is δ at that ε to 1e-6 relative, and it is at least the tight ε
/// at δ; the batch line says the same. profile: the tight ε at δ, the `epsilon` command's to
/// the bit, for Poisson and for a shuffled run's band.
#[test]
fn gdp_and_profile_take_a_delta() {
    let args = [
        "--q", "0.01", "--sigma", "1", "--steps", "1000", "--delta", "1e-5", "--json",
    ];
    let g = json_of(&[&["gdp"][..], &args[..]].concat());
    let (mu, e) = (
        g["mu"].as_f64().unwrap(),
        g["epsilon_from_mu"].as_f64().unwrap(),
    );
    let d = phi_bar(e / mu - mu / 2.0) - e.exp() * phi_bar(e / mu + mu / 2.0);
    assert!(
        (d - 1e-5).abs() <= 1e-6 * 1e-5 + 1e-12,
        "δ({e}) = {d} for μ = {mu}"
    );
    let tight = json_of(&[&["epsilon", "--accountant", "pld"][..], &args[..]].concat());
    assert!(tight["epsilon"].as_f64().unwrap() <= e, "{tight} vs {e}");
    let line = batch_of(r#"{"command":"gdp","q":0.01,"sigma":1,"steps":1000,"delta":1e-5}"#);
    assert_eq!(line["epsilon_from_mu"], g["epsilon_from_mu"], "{line}");
    let (ok, text, _) = run(&[&["gdp"][..], &args[..args.len() - 1]].concat());
    assert!(ok && text.contains("implied by mu"), "{text}");
    let p = json_of(&[&["profile"][..], &args[..]].concat());
    assert_eq!(p["epsilon_at_delta"], tight["epsilon"], "{p}");
    assert_eq!(p["epsilon_at_delta_lower"], tight["epsilon_lower"], "{p}");
    let shuffled = [&["--sampling", "shuffle"][..], &P1[..], &["--json"][..]].concat();
    let p = json_of(&[&["profile"][..], &shuffled[..]].concat());
    let band = json_of(&[&["epsilon"][..], &shuffled[..]].concat());
    assert_eq!(p["epsilon_at_delta"], band["epsilon"], "{p}");
    assert_eq!(p["epsilon_at_delta_lower"], band["epsilon_lower"], "{p}");
    assert_eq!(p["epsilon_at_delta_meaning"], band["meaning"], "{p}");
}

/// A steps calibration of a scheme that cannot take even one step or epoch says so in the
/// scheme's unit, and a first step the engine refuses gives the engine's reason — never
/// "epsilon = inf" (issue 61 #6/#2: the shuffled run's "one step" is a whole epoch).
#[test]
fn a_scheme_steps_calibration_refuses_in_its_own_unit() {
    let calibrate = |scheme: &[&str], sigma: &str, eps: &str| {
        let tail = [
            "--sigma",
            sigma,
            "--delta",
            "1e-5",
            "--epsilon",
            eps,
            "--target",
            "steps",
        ];
        run(&[&["calibrate", "--sampling"][..], scheme, &tail[..]].concat())
    };
    let shuffled = ["shuffle", "--dataset-size", "50000", "--batch-size", "512"];
    let (ok, _, err) = calibrate(&shuffled, "0.5", "3");
    assert!(
        !ok && err.contains("one epoch") && err.contains("9.997257"),
        "{err}"
    );
    // Random allocation, t = 97: σ 0.5 is refused by the engine; σ 1.5 cannot take one epoch.
    let allocation = ["random-allocation", "--steps-per-epoch", "97"];
    let (ok, _, err) = calibrate(&allocation, "0.5", "1");
    assert!(
        !ok && !err.contains("inf") && err.contains("random allocation"),
        "{err}"
    );
    let (ok, _, err) = calibrate(&allocation, "1.5", "0.1");
    assert!(
        !ok && err.contains("even one epoch gives epsilon = 0.261020"),
        "{err}"
    );
}

/// The cross-surface table (issue 61): every scheme × adjacency × group size × accountant on
/// P1's terms (N 50,000, B 512, 30 epochs, σ 1, δ 1e-5), as a command line and as a batch
/// line — and the ε calibration of each — gives the same answer to the bit, or a refusal on
/// both (the Python package's table is in python/tests, the browser's in e2e).
#[test]
fn every_scheme_answers_alike_on_the_command_line_and_in_batch() {
    let schemes = [
        "poisson",
        "shuffle",
        "truncated-poisson",
        "fixed-size",
        "random-allocation",
    ];
    let mut lines = String::new();
    let mut cases = Vec::new();
    for s in schemes {
        for adj in ["add-remove", "replace-one"] {
            for k in ["1", "2"] {
                for acct in [None, Some("pld")] {
                    for cmd in ["epsilon", "calibrate"] {
                        let mut args: Vec<String> = [
                            cmd,
                            "--sampling",
                            s,
                            "--adjacency",
                            adj,
                            "--group-size",
                            k,
                            "--dataset-size",
                            "50000",
                            "--batch-size",
                            "512",
                            "--delta",
                            "1e-5",
                        ]
                        .iter()
                        .map(|a| a.to_string())
                        .collect();
                        let mut line = serde_json::json!({
                            "sampling": s, "adjacency": adj, "group_size": k.parse::<u32>().unwrap(),
                            "dataset_size": 50000, "batch_size": 512, "delta": 1e-5,
                        });
                        if cmd == "epsilon" {
                            args.extend(["--epochs", "30", "--sigma", "1"].map(String::from));
                            line["epochs"] = 30.into();
                            line["sigma"] = 1.into();
                        } else {
                            args.extend(["--epochs", "30", "--epsilon", "3"].map(String::from));
                            line["command"] = "calibrate".into();
                            line["epochs"] = 30.into();
                            line["epsilon"] = 3.into();
                        }
                        if let Some(a) = acct {
                            args.extend(["--accountant", a].map(String::from));
                            line["accountant"] = a.into();
                        }
                        args.push("--json".into());
                        lines += &format!("{line}\n");
                        cases.push(args);
                    }
                }
            }
        }
    }
    let out = batch(lines.as_bytes());
    let answers: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), cases.len());
    let (mut answered, mut refused) = (0, 0);
    for (args, b) in cases.iter().zip(&answers) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, text, err) = run(&a);
        if ok {
            let c: serde_json::Value = serde_json::from_str(&text).unwrap();
            for (k, v) in c.as_object().unwrap() {
                if let Some(x) = v.as_f64() {
                    assert_eq!(Some(x), b[k].as_f64(), "{a:?}: {k} {c} vs batch {b}");
                }
            }
            answered += 1;
        } else {
            assert!(
                b["error"].is_string(),
                "{a:?}: the CLI refused ({err}), batch answered {b}"
            );
            refused += 1;
        }
    }
    // Measured: 80 cases, 24 answered alike, 56 refused on both (the scheme/adjacency/group
    // combinations an accountant does not cover, or exact RDP for a scheme it cannot account).
    assert!(
        answered >= 20 && refused >= 20,
        "{answered} answered, {refused} refused"
    );
}

/// `audit` (issue 65): files on the command line and arrays in a batch line give the same
/// fields; the run's certificate comes beside them; bad files and lines get one line.
#[test]
fn audit_on_the_command_line_and_in_batch() {
    let dir = std::env::temp_dir().join(format!("sgm-rdp-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Members' scores a uniform spread shifted by 0.6 from the non-members' (any scores will
    // do: the check is that both front ends give the same audit).
    let n = 400;
    let z = |i: usize| ((i as f64 + 0.5) / n as f64 - 0.5) * 6.0;
    let ins: Vec<f64> = (0..n).map(|i| 0.6 + z(i)).collect();
    let outs: Vec<f64> = (0..n).map(z).collect();
    let write = |name: &str, v: &[f64]| {
        let p = dir.join(name);
        std::fs::write(&p, v.iter().map(|x| format!("{x}\n")).collect::<String>()).unwrap();
        p.to_string_lossy().into_owned()
    };
    let (fi, fo) = (write("in.txt", &ins), write("out.txt", &outs));
    let run_terms = ["--q", "0.01", "--sigma", "1", "--steps", "1000"];
    let mut args = vec![
        "audit", "--in", &fi, "--out", &fo, "--delta", "1e-5", "--json",
    ];
    args.extend(run_terms);
    let cli = json_of(&args);
    let line = serde_json::json!({"command": "audit", "in_scores": ins, "out_scores": outs,
        "delta": 1e-5, "q": 0.01, "sigma": 1, "steps": 1000});
    let b = batch_of(&line.to_string());
    for k in [
        "epsilon_lower",
        "mu_lower",
        "auc",
        "certified_epsilon",
        "certified_mu",
        "consistent",
        "verdict",
    ] {
        assert!(cli.get(k).is_some(), "{k} missing: {cli}");
        assert_eq!(cli[k], b[k], "{k}");
    }
    assert!(cli["epsilon_lower"].as_f64().unwrap() <= cli["certified_epsilon"].as_f64().unwrap());
    // A CSV with a header and a membership column gives the same audit.
    let csv = dir.join("scores.csv");
    let mut text = String::from("id,score,member\n");
    for (i, x) in ins.iter().enumerate() {
        text += &format!("a{i},{x},1\n");
    }
    for (i, x) in outs.iter().enumerate() {
        text += &format!("b{i},{x},0\n");
    }
    std::fs::write(&csv, text).unwrap();
    let mut args2 = vec![
        "audit",
        "--scores",
        csv.to_str().unwrap(),
        "--delta",
        "1e-5",
        "--json",
    ];
    args2.extend(run_terms);
    assert_eq!(json_of(&args2)["epsilon_lower"], cli["epsilon_lower"]);
    // Bad input: one line, non-zero exit.
    let empty = write("empty.txt", &[]);
    for bad in [
        vec!["audit", "--in", fi.as_str()],
        vec!["audit", "--in", empty.as_str(), "--out", fo.as_str()],
        vec![
            "audit",
            "--in",
            fi.as_str(),
            "--out",
            fo.as_str(),
            "--significance",
            "0.7",
        ],
        vec![
            "audit",
            "--in",
            fi.as_str(),
            "--out",
            fo.as_str(),
            "--alpha",
            "3",
        ],
        vec![
            "audit-plan",
            "--q",
            "0.01",
            "--sigma",
            "1",
            "--steps",
            "1000",
        ],
    ] {
        let (ok, out, err) = run(&bad);
        assert!(
            !ok && out.is_empty() && err.trim().lines().count() == 1,
            "{bad:?}: {err}"
        );
    }
    for bad in [
        r#"{"command":"audit","in_scores":[1],"out_scores":[]}"#,
        r#"{"command":"audit","in_scores":[1,null],"out_scores":[0]}"#,
        r#"{"command":"audit","in_scores":[1],"out_scores":[0],"sigma":"x"}"#,
        r#"{"command":"audit_plan","q":0.01,"sigma":1,"steps":1000}"#,
    ] {
        assert!(batch_of(bad).get("error").is_some(), "{bad}");
    }
    let plan = json_of(&[
        "audit-plan",
        "--q",
        "0.01",
        "--sigma",
        "1",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
        "--json",
    ]);
    assert_eq!(plan["rows"].as_array().unwrap().len(), 5);
    std::fs::remove_dir_all(&dir).ok();
}

/// Correlated noise (issue 67): the command line and a batch line give the same bracket, the
/// file strategy equals its band family, and what is not accounted is refused by name.
#[test]
fn correlated_noise_on_the_command_line_and_in_batch() {
    let run = |args: &[&str]| {
        let o = bin().args(args).output().unwrap();
        (
            o.status.code(),
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        )
    };
    let base = [
        "--q", "0.1", "--sigma", "1", "--steps", "101", "--delta", "1e-3", "--json",
    ];
    let (code, out, _) = run(&[
        &["epsilon", "--strategy", "band:4,1,0.5,0.25,0.125"][..],
        &base,
    ]
    .concat());
    assert_eq!(code, Some(0));
    let cli: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(cli["bands"], 4);
    assert_eq!(cli["participation"], "min-sep:4");
    let line = b"{\"strategy\":\"band:4,1,0.5,0.25,0.125\",\"q\":0.1,\"sigma\":1,\"steps\":101,\"delta\":1e-3}\n";
    let b: serde_json::Value = serde_json::from_slice(&batch(line).stdout).unwrap();
    assert_eq!(b["epsilon"], cli["epsilon"]);
    assert_eq!(b["epsilon_lower"], cli["epsilon_lower"]);
    // The same matrix from a file (rows stopping at the diagonal).
    let dir = std::env::temp_dir().join(format!("sgm-rdp-matrix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("c.csv");
    let c = [1.0, 0.5, 0.25, 0.125];
    let rows: Vec<String> = (0..101usize)
        .map(|i| {
            (0..=i)
                .map(|j| c.get(i - j).copied().unwrap_or(0.0).to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    std::fs::write(
        &path,
        format!("# a 4-band Toeplitz C\n{}\n", rows.join("\n")),
    )
    .unwrap();
    let spec = format!("file:{}", path.display());
    let (code, out, err) = run(&[&["epsilon", "--strategy", spec.as_str()][..], &base].concat());
    assert_eq!(code, Some(0), "{err}");
    let file: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (x, y) = (
        file["epsilon"].as_f64().unwrap(),
        cli["epsilon"].as_f64().unwrap(),
    );
    assert!((x - y).abs() <= 1e-9 * y, "{x} vs {y}");
    // Text names the scheme, the adjacency and sigma's unit.
    let (_, text, _) = run(&[
        "epsilon",
        "--strategy",
        "band:2",
        "--q",
        "0.1",
        "--sigma",
        "1",
        "--steps",
        "50",
        "--delta",
        "1e-3",
    ]);
    for w in [
        "certified upper bound",
        "2-min-separated cyclic Poisson",
        "add/remove adjacency",
        "noise std / (clipping norm x largest column norm)",
    ] {
        assert!(text.contains(w), "{w}: {text}");
    }
    // Calibration: the sigma found meets the target, 0.1 % less does not.
    let (code, out, _) = run(&[
        "calibrate",
        "--strategy",
        "band:2,1,0.5",
        "--q",
        "0.1",
        "--steps",
        "100",
        "--delta",
        "1e-3",
        "--epsilon",
        "2",
        "--json",
    ]);
    assert_eq!(code, Some(0));
    let c: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(c["epsilon"].as_f64().unwrap() <= 2.0);
    let s = c["sigma"].as_f64().unwrap() / 1.002;
    let (_, out, _) = run(&[
        "epsilon",
        "--strategy",
        "band:2,1,0.5",
        "--q",
        "0.1",
        "--steps",
        "100",
        "--delta",
        "1e-3",
        "--sigma",
        &s.to_string(),
        "--json",
    ]);
    let below: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(below["epsilon"].as_f64().unwrap() > 2.0);
    // Refusals: one line, non-zero exit, naming what is not accounted.
    for (args, words) in [
        (
            vec!["epsilon", "--strategy", "tree", "--monte-carlo", "10000"],
            "monte_carlo applies to balls-in-bins",
        ),
        (vec!["epsilon", "--strategy", "blt:1.5:0.2"], "decay"),
        (vec!["epsilon", "--strategy", "blt:0.9"], "decay:scale"),
        (
            vec![
                "epsilon",
                "--strategy",
                "band:4",
                "--participation",
                "shuffle",
            ],
            "unknown participation",
        ),
        (
            vec!["epsilon", "--strategy", "band:x"],
            "whole number of bands",
        ),
        (
            vec!["epsilon", "--strategy", "band:2", "--group-size", "2"],
            "does not apply to correlated noise",
        ),
    ] {
        let (code, _, err) = run(&[
            &args[..],
            &[
                "--q", "0.1", "--sigma", "1", "--steps", "100", "--delta", "1e-3",
            ],
        ]
        .concat());
        assert_eq!(code, Some(2), "{args:?}");
        assert!(
            err.contains(words) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    // Overlapping columns (BLT, the tree, fewer partitions than bands): the whole run without
    // amplification, on the command line and in a line alike, labelled so.
    for (strategy, joins, q, bound) in [
        (
            "blt:0.9:0.3,0.5:0.1",
            "min-sep:10",
            "1",
            "bracket (Gaussian mechanism, no amplification)",
        ),
        (
            "tree",
            "min-sep:16",
            "0.5",
            "upper bound (no amplification)",
        ),
        ("band:4", "min-sep:3", "0.1", "upper bound (operator norm)"),
    ] {
        let (code, out, err) = run(&[
            "epsilon",
            "--strategy",
            strategy,
            "--participation",
            joins,
            "--q",
            q,
            "--sigma",
            "4",
            "--steps",
            "100",
            "--delta",
            "1e-5",
            "--json",
        ]);
        assert_eq!(code, Some(0), "{strategy}: {err}");
        let cli: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(cli["bound"], bound, "{strategy}");
        assert_eq!(cli["participation"], joins);
        if bound.contains("no amplification") {
            assert!(cli["sensitivity"].as_f64().unwrap() > 1.0, "{cli}");
        }
        assert_eq!(
            cli.get("epsilon_lower").is_some(),
            bound.starts_with("bracket")
        );
        let line = format!(
            "{{\"strategy\":\"{strategy}\",\"participation\":\"{joins}\",\"q\":{q},\"sigma\":4,\"steps\":100,\"delta\":1e-5}}\n"
        );
        let v: serde_json::Value = serde_json::from_slice(&batch(line.as_bytes()).stdout).unwrap();
        assert_eq!(v["epsilon"], cli["epsilon"], "{strategy}");
    }
    // From dataset terms a BLT's default participation is once an epoch at a fixed step.
    let (_, out, _) = run(&[
        "epsilon",
        "--strategy",
        "blt:0.9:0.3",
        "--dataset-size",
        "1000",
        "--batch-size",
        "100",
        "--epochs",
        "3",
        "--sigma",
        "4",
        "--delta",
        "1e-5",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (
            v["participation"].as_str(),
            v["participations"].as_u64(),
            v["q"].as_f64()
        ),
        (Some("min-sep:10"), Some(3), Some(1.0)),
        "{v}"
    );
    let bad = batch(b"{\"strategy\":\"band:2\",\"sampling\":\"shuffle\",\"q\":0.1,\"sigma\":1,\"steps\":10,\"delta\":1e-3}\n");
    let v: serde_json::Value = serde_json::from_slice(&bad.stdout).unwrap();
    assert!(v["error"].as_str().unwrap().contains("sampling"), "{v}");
}

/// `profile --strategy …`: a correlated run's privacy profile in words (its run, how it is
/// bounded, 101 rows, the attack bounds) and as JSON, the batch line's; its δ at an ε meets
/// `delta --strategy …`'s bracket there; a δ is refused by name.
#[test]
fn correlated_profile_on_the_command_line() {
    let run = [
        "--strategy",
        "band:2,1,0.5",
        "--q",
        "0.05",
        "--sigma",
        "1",
        "--steps",
        "200",
    ];
    let o = bin()
        .args([&["profile", "--epsilon", "4"][..], &run].concat())
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        o.status.success() && text.starts_with("# privacy profile: correlated noise: 2 bands"),
        "{text}"
    );
    assert!(text.contains("\n# exact reduction") && text.contains("membership inference: TPR <= "));
    assert_eq!(
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("membership"))
            .count(),
        101
    );
    let o = bin()
        .args([&["profile", "--epsilon", "4", "--json"][..], &run].concat())
        .output()
        .unwrap();
    let cli: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let line = b"{\"command\":\"profile\",\"strategy\":\"band:2,1,0.5\",\"q\":0.05,\"sigma\":1,\"steps\":200,\"epsilon\":4}\n";
    let b: serde_json::Value = serde_json::from_slice(&batch(line).stdout).unwrap();
    assert_eq!(b["profile"], cli["profile"]);
    let p = &cli["profile"][25];
    assert_eq!(p["epsilon"], 1.0);
    let o = bin()
        .args([&["delta", "--epsilon", "1", "--json"][..], &run].concat())
        .output()
        .unwrap();
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    assert!(
        f(&p["delta"]["lower"]) <= f(&d["delta"])
            && f(&d["delta_lower"]) <= f(&p["delta"]["upper"]),
        "{p} vs {d}"
    );
    let o = bin()
        .args([&["profile", "--delta", "1e-5"][..], &run].concat())
        .output()
        .unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        !o.status.success() && err.contains("takes epsilon"),
        "{err}"
    );
}
