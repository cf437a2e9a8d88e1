//! The CLI: the `batch` contract, one-line errors, non-zero exits.
#![cfg(not(target_arch = "wasm32"))]

use std::io::Write;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sgm-rdp"))
}

#[test]
fn batch_one_line_per_input_in_order() {
    let input = "{\"q\":0.01,\"sigma\":1.1,\"alpha\":8}\n\
                 {\"q\":2,\"sigma\":1}\n\
                 not json\n\
                 {\"q\":0.0042666666666666667,\"sigma\":1.1,\"steps\":14063,\"delta\":1e-5,\"tag\":\"mnist\"}\n\
                 \n";
    let mut child = bin()
        .arg("batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
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
    assert_eq!(lines[3]["tag"], "mnist");
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
