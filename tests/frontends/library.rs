//! "What your library reports": the table's numbers and the code snippets.
#![cfg(not(target_arch = "wasm32"))]

use sgm_rdp::render::library::{opacus_orders, opacus_run, rows, snippets, Views};
use sgm_rdp::render::Inputs;
use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn mnist_rows_match_the_tools() {
    let i = Inputs::mnist();
    let views = Views {
        tight: Some(Ok((2.381933, 2.381204))),
        opacus_prv: Some(Ok(2.3921)),
        dp_accounting_pld: Some(Ok(2.381779)),
    };
    let r = rows(&i, None, &views).unwrap();
    assert_eq!(r.len(), 6);
    assert_eq!(opacus_orders().len(), 151);
    // dp_accounting 0.6.0's RdpAccountant prints 2.59666 for this run (README example).
    let dpa = r
        .iter()
        .find(|x| x.tool.starts_with("dp_accounting Rdp"))
        .unwrap();
    assert!((dpa.epsilon.unwrap() - 2.59666).abs() < 1e-5);
    // Opacus has order 8.1 too: the same grid optimum for this run.
    let op = r.iter().find(|x| x.tool.contains("\"rdp\"")).unwrap();
    assert!((op.epsilon.unwrap() - 2.59666).abs() < 1e-3);
    let ours = r.iter().find(|x| x.tool == "sgm-rdp, exact RDP").unwrap();
    assert!(ours.epsilon.unwrap() <= dpa.epsilon.unwrap());
    assert!(r.last().unwrap().note.contains("[2.381204, 2.381933]"));
    let pending = rows(&i, None, &Views::default()).unwrap();
    assert!(pending
        .iter()
        .any(|x| x.epsilon.is_none() && x.note == "computing…"));
}

/// #22: the rows of other libraries are their own output for the run, computed, within
/// ±0.001 of what they print (the table: Opacus 1.5 and dp_accounting 0.6.0 run
/// by the red team; dp_accounting's MNIST value is `make bench`'s own run of it).
#[test]
fn library_rows_are_what_the_libraries_print() {
    use sgm_rdp::engine::{pld, Sgm};
    // (q, σ, T, δ, Opacus prints, dp_accounting PLD prints)
    for (q, s, t, d, opacus, dpa) in [
        (512.0 / 50000.0, 1.0, 2930u64, 1e-5, 3.2477, 3.2375),
        (1e-4, 1.5, 1_000_000, 1e-8, 0.3746, 0.4218),
        (1e-4, 1.5, 10_000, 1e-5, 0.0301, 0.0232),
        (256.0 / 60000.0, 1.1, 14063, 1e-5, f64::NAN, 2.381779),
    ] {
        let m = Sgm::new(q, s).unwrap();
        let got = pld::dp_accounting_epsilon(m, t, d).unwrap();
        assert!(
            (got - dpa).abs() <= 1e-3,
            "dp_accounting {q} {s} {t}: {got} vs {dpa}"
        );
        if opacus.is_finite() {
            let got = pld::opacus_prv_epsilon(m, t, d).unwrap();
            assert!(
                (got - opacus).abs() <= 1e-3,
                "Opacus {q} {s} {t}: {got} vs {opacus}"
            );
        }
    }
    // With its loader (N = 50 000, B = 512, 30 epochs): q = 1/98, T = 2940; it prints 3.2408.
    let (q, t) = opacus_run(50000.0, 512.0, 30.0).unwrap();
    assert_eq!((q, t), (1.0 / 98.0, 2940));
    let got = pld::opacus_prv_epsilon(Sgm::new(q, 1.0).unwrap(), t, 1e-5).unwrap();
    assert!((got - 3.2408).abs() <= 1e-3, "{got}");
    assert_eq!(opacus_run(50000.0, 512.0, 2.5), None);
}

/// Every snippet is valid Python (`ast.parse`) and carries the run's values.
#[test]
fn snippets_parse_as_python_with_the_values() {
    let mut i = Inputs::mnist();
    i.delta = 1e-5;
    let with_dataset = snippets(&i, 3.0, Some((60000, 256)));
    assert!(
        with_dataset[2].1.contains("batch_size=256")
            && with_dataset[2].1.contains("num_samples=60000")
    );
    let without = snippets(&i, 3.0, None);
    assert!(without[2].1.contains("batch_size=8") && without[2].1.contains("num_samples=1875"));
    assert_eq!(without.len(), 3);
    for (title, code) in with_dataset.into_iter().chain(without) {
        assert!(
            code.contains("1.1") && code.contains("14063") && code.contains("1.0e-5"),
            "{title}: {code}"
        );
        let mut child = Command::new("python3")
            .args(["-c", "import ast, sys; ast.parse(sys.stdin.read())"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(code.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{title} does not parse: {}\n{code}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// q as batch_size / num_samples for jax-privacy: exact for dataset-derived rates.
#[test]
fn sample_rate_as_a_fraction() {
    use sgm_rdp::render::library::as_fraction;
    assert_eq!(as_fraction(256.0 / 60000.0), (8, 1875, true));
    assert_eq!(as_fraction(0.01), (1, 100, true));
    assert_eq!(as_fraction(1.0), (1, 1, true));
    assert_eq!(as_fraction(512.0 / 50000.0), (32, 3125, true));
    assert_eq!(as_fraction(1e-10), (1, 10_000_000_000, true));
    // Any rate: a fraction within 1e-12 (relative) of it.
    for q in [
        1e-12,
        3e-7,
        0.123456,
        std::f64::consts::PI / 10.0,
        0.5,
        0.999,
    ] {
        let (b, n, exact) = as_fraction(q);
        assert!(exact && b >= 1 && n >= b, "{q}: {b}/{n}");
        assert!(
            ((b as f64 / n as f64) - q).abs() <= 1e-12 * q,
            "{q}: {b}/{n}"
        );
    }
}
