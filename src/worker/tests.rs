//! The worker's answers against the command line's, natively.
use super::*;

/// The command line's `--json` answer to `w` (the words, as a user types them).
fn command(w: &[&str]) -> Result<Value, String> {
    let words: Vec<String> = w.iter().map(|s| s.to_string()).collect();
    let out = crate::query::run(&words)?;
    serde_json::from_str(&out).map_err(|e| format!("unreadable answer: {e}"))
}

fn req(extra: Value) -> Value {
    let mut d = json!({"v": 1, "gen": 3, "q": 0.01, "sigma": 1.0, "steps": 1000, "delta": 1e-5});
    for (k, v) in obj(extra) {
        d[k] = v;
    }
    d
}

/// A check request is the command line's `check`, field for field; a bad one is refused.
#[test]
fn a_check_request_is_the_command_lines_check() {
    let d = json!({"v": 1, "gen": 2, "kind": "check", "config": {"library": "opacus",
        "noise_multiplier": 1, "dataset_size": 50000, "batch_size": 512, "epochs": 30,
        "delta": 1e-5, "poisson_sampling": false}});
    assert!(check(&d).is_ok());
    let got = check_config(&d).unwrap();
    let cli = command(&[
        "check",
        "--library",
        "opacus",
        "--noise-multiplier",
        "1",
        "--dataset-size",
        "50000",
        "--batch-size",
        "512",
        "--epochs",
        "30",
        "--delta",
        "1e-5",
        "--poisson-sampling",
        "false",
        "--json",
    ])
    .unwrap();
    assert_eq!(got, cli);
    assert!(check(&json!({"v": 1, "gen": 2, "kind": "check"})).is_err());
    let bad = json!({"v": 1, "gen": 2, "kind": "check", "config": {"library": "keras"}});
    assert!(check_config(&bad).unwrap_err().contains("library must be"));
    // The page's form: a pasted call, read here; the objects come back as skipped.
    let pasted = json!({"v": 1, "gen": 3, "kind": "check", "library": "opacus", "snippet":
        "make_private(module=model, noise_multiplier=1, dataset_size=50000, batch_size=512, epochs=30, delta=1e-5, poisson_sampling=False)"});
    assert!(check(&pasted).is_ok());
    let got = check_config(&pasted).unwrap();
    assert_eq!(got["certified_epsilon"], cli["certified_epsilon"]);
    assert_eq!(got["skipped"], json!(["module"]));
}

/// Every malformed request is refused by name, before it touches the worker's state.
#[test]
fn requests_are_checked_by_name() {
    assert!(check(&req(json!({}))).is_ok());
    for (bad, named) in [
        (json!({"v": 2}), "protocol version 2"),
        (
            json!({"gen": 1.5}),
            "'gen' must be a whole number >= 0, got 1.5",
        ),
        (json!({"gen": -1}), "'gen'"),
        (
            json!({"q": "0.01"}),
            "'q' must be a finite number, got the string '0.01'",
        ),
        (
            json!({"sigma": null}),
            "'sigma' must be a finite number, got null",
        ),
        (json!({"sampling": "shuffle"}), "'sampling' must be"),
        (
            json!({"datasetSize": 0}),
            "'datasetSize' must be a whole number >= 1",
        ),
        (
            json!({"groupSize": 300}),
            "'groupSize' must be a whole number in [1, 256]",
        ),
        (json!({"adjacency": "swap"}), "'adjacency'"),
        (json!({"target": 0}), "'target' must be a finite number > 0"),
        (json!({"client": 3}), "'client' must be a string"),
    ] {
        let e = check(&req(bad.clone())).unwrap_err();
        assert!(e.contains(named), "{bad}: {e}");
    }
    assert!(check(&json!([1])).unwrap_err().contains("object"));
    let cal = json!({"kind": "calibrate", "gen": 1, "q": 0.01, "delta": 1e-5, "target": 1.0});
    assert!(check(&cal).is_ok(), "a calibration needs no σ or steps");
}

/// A scheme's answers are the command line's batch lines for the same run: the band
/// for shuffled batches, user-level and replace-one brackets, a sized scheme's refusal.
#[test]
fn side_answers_are_the_command_lines() {
    let d = req(json!({"epochs": 10, "sampling": "shuffled"}));
    let side = side_answers(&d);
    let line = json!({"sigma": 1.0, "delta": 1e-5, "sampling": "shuffle", "steps_per_epoch": 100, "epochs": 10});
    let cli = crate::query::line_answer(obj(line.clone())).unwrap();
    assert_eq!(side["shuffled"]["epsilon"], cli["epsilon"]);
    assert_eq!(side["shuffled"]["epsilonLower"], cli["epsilon_lower"]);
    assert_eq!(side["own"], true);
    let sc = scheme_of(&d, &side).unwrap();
    assert_eq!(own_answer(&side), Some(&side["shuffled"]));
    assert_eq!(sc.checkpoints().last(), Some(&10));
    assert_eq!(sc.steps(10), 1000);
    let user = side_answers(&req(json!({"groupSize": 2})));
    let line = json!({"q": 0.01, "sigma": 1.0, "delta": 1e-5, "steps": 1000, "group_size": 2, "adjacency": "add-remove", "accountant": "pld"});
    assert_eq!(
        user["user"]["epsilon"],
        crate::query::line_answer(obj(line.clone())).unwrap()["epsilon"]
    );
    let refused = side_answers(&req(
        json!({"sampling": "fixed-size", "schemeError": "needs N"}),
    ));
    assert_eq!(refused["scheme"]["error"], "needs N");
    assert_eq!(refused["own"], false);
    let plain = req(json!({}));
    assert!(
        scheme_of(&plain, &side_answers(&plain)).is_none(),
        "Poisson sampling of one example"
    );
    let both = side_answers(&req(
        json!({"groupSize": 2, "sampling": "shuffled", "epochs": 10}),
    ));
    assert!(both["user"]["error"]
        .as_str()
        .unwrap()
        .contains("Poisson sampling only"));
    // Issue 61 #2: a run of its own that has no answer says why, and nothing else
    // stands in for it (the band of one example is not K = 2's).
    assert_eq!(
        (both["own"].clone(), both["asked"].clone()),
        (json!(false), json!(true))
    );
    assert!(both["why"]
        .as_str()
        .unwrap()
        .contains("Poisson sampling only"));
    assert_eq!(refused["why"], "needs N");
    assert_eq!(side_answers(&plain)["asked"], false);
}

/// A scheme's charts, most steps and μ-GDP: its own grid, the calibration's answer
/// meets the target, and fixed-size batches say why they have no profile.
#[test]
fn scheme_charts_target_and_gdp() {
    let d = req(json!({"groupSize": 2, "steps": 200}));
    let sc = scheme_of(&d, &side_answers(&d)).unwrap();
    let c = sc.charts(f64::NAN).unwrap();
    let up = c["training"]["pldUpper"].as_array().unwrap();
    assert_eq!(up.len(), sc.checkpoints().len());
    assert!(
        up.windows(2).all(|w| w[0].as_f64() <= w[1].as_f64()),
        "ε grows with steps"
    );
    assert!(c["profile"].as_array().is_some_and(|p| !p.is_empty()) && c["errors"] == json!({}));
    let last = up.last().unwrap().as_f64().unwrap();
    let mut asked = d.clone();
    asked["target"] = json!(last);
    let side = side_answers(&d);
    let most = most_steps(&asked, &side).unwrap().as_u64().unwrap();
    assert!((200..400).contains(&most), "{most}");
    assert!(gdp(&d, &side).unwrap()["mu"].as_f64().unwrap() > 0.0);
    assert!(scheme_charts(&d, &side).unwrap()["training"]["steps"]
        .as_array()
        .is_some());
    // Poisson sampling of one example: its own most steps and μ-GDP.
    let plain = req(json!({"target": 1.0}));
    let side = side_answers(&plain);
    assert!(scheme_charts(&plain, &side).is_err());
    let steps = most_steps(&plain, &side).unwrap().as_f64().unwrap();
    assert!(steps >= 1.0, "{steps}");
    assert!(gdp(&plain, &side).unwrap()["muLower"].as_f64().is_some());
    let fixed = req(
        json!({"sampling": "fixed-size", "datasetSize": 10000, "batchSize": 100, "adjacency": "replace-one", "steps": 100}),
    );
    let sc = scheme_of(&fixed, &side_answers(&fixed)).unwrap();
    let c = sc.charts(f64::NAN).unwrap();
    assert!(c["errors"]["profile"]
        .as_str()
        .unwrap()
        .contains("RDP bound only"));
    assert!(c["training"]["pldLower"]
        .as_array()
        .unwrap()
        .iter()
        .all(Value::is_null));
}

/// Calibrations name their accountant: exact RDP only where it bounds the run; a risk
/// target needs one example under add/remove.
#[test]
fn calibrations_are_the_command_lines() {
    let cal = |extra: Value| {
        let mut d = json!({"kind": "calibrate", "gen": 1, "q": 0.01, "sigma": 1.0, "steps": 1000, "delta": 1e-5, "target": 2.0, "accountant": "rdp"});
        for (k, v) in obj(extra) {
            d[k] = v;
        }
        calibrate(&d)
    };
    let r = cal(json!({"which": "sigma"})).unwrap();
    assert_eq!(r["accountant"], "rdp");
    let sigma = r["value"].as_f64().unwrap();
    assert!(
        sigma > 0.5 && sigma < 2.0 && r["epsilon"].as_f64().unwrap() <= 2.0,
        "{r}"
    );
    let t = cal(json!({"which": "steps", "groupSize": 2})).unwrap();
    assert_eq!(t["accountant"], "pld");
    assert!(t["value"].as_f64().unwrap() >= 1.0, "{t}");
    assert!(t["epsilon"].as_f64().unwrap() <= 2.0);
    let risk = cal(json!({"which": "risk-sigma", "target": 0.1, "fpr": 0.01})).unwrap();
    assert_eq!(risk["fpr"], 0.01);
    assert!(
        risk["value"].as_f64().unwrap() > 0.0 && risk["epsilon"].as_f64().unwrap() <= 0.1,
        "{risk}"
    );
    assert!(cal(json!({"which": "risk-steps", "target": 0.1, "fpr": 2.0})).is_err());
    assert!(
        cal(json!({"which": "risk-steps", "target": 0.1, "fpr": 0.01, "groupSize": 2})).is_err()
    );
}

/// Issue 61 #5: one derivation of the steps per epoch. With the dataset terms the
/// worker's band and bracket are the command line's for --dataset-size/--batch-size
/// (P1 shuffled: t = ⌊N/B⌋ = 97 with the last 336 examples of each epoch dropped;
/// random allocation: t = ⌈N/B⌉ = 98), not those of ⌊1/q⌋ steps.
#[test]
fn epoch_runs_from_dataset_terms_are_the_command_lines() {
    for (sampling, cli_name, t) in [
        ("shuffled", "shuffle", 97),
        ("random-allocation", "random-allocation", 98),
    ] {
        let d = json!({"v": 1, "gen": 3, "q": 0.01024, "sigma": 1.0, "steps": 2930, "delta": 1e-5,
            "sampling": sampling, "epochs": 30, "datasetSize": 50000, "batchSize": 512});
        let side = side_answers(&d);
        let key = if sampling == "shuffled" {
            "shuffled"
        } else {
            "allocation"
        };
        let line = json!({"sigma": 1.0, "delta": 1e-5, "sampling": cli_name,
            "dataset_size": 50000, "batch_size": 512, "epochs": 30});
        let cli = crate::query::line_answer(obj(line.clone())).unwrap();
        assert_eq!(side[key]["epsilon"], cli["epsilon"], "{sampling}: {side}");
        assert_eq!(
            side[key]["epsilonLower"], cli["epsilon_lower"],
            "{sampling}: {side}"
        );
        assert_eq!(side[key]["stepsPerEpoch"], t, "{sampling}: {side}");
    }
}

/// Issue 61 #1: "What do I need?" answers the scheme shown, as the command line's
/// calibrate does for that scheme — never Poisson sampling's σ. P1: q = 0.01024
/// (t = ⌊1/q⌋ = 97 steps per epoch), 30 epochs, δ = 1e-5, target ε = 3.
#[test]
fn calibrations_answer_the_scheme_shown() {
    let p1 = |extra: Value| {
        let mut d = json!({"kind": "calibrate", "gen": 1, "q": 0.01024, "sigma": 1.0, "steps": 2930, "delta": 1e-5, "target": 3.0, "accountant": "pld", "which": "sigma"});
        for (k, v) in obj(extra) {
            d[k] = v;
        }
        calibrate(&d)
    };
    let poisson = p1(json!({})).unwrap()["value"].as_f64().unwrap();
    let cli = |w: &[&str]| command(w).unwrap()["sigma"].as_f64().unwrap();
    // Shuffled: the band's upper end meets the target (σ 7.6166 where Poisson's is 1.04).
    let r = p1(json!({"sampling": "shuffled", "epochs": 30})).unwrap();
    let want = cli(&[
        "calibrate",
        "--sampling",
        "shuffle",
        "--steps-per-epoch",
        "97",
        "--epochs",
        "30",
        "--delta",
        "1e-5",
        "--epsilon",
        "3",
        "--json",
    ]);
    assert_eq!(r["value"].as_f64(), Some(want), "{r}");
    assert!(
        want > 7.0 && poisson < 1.1 && r["accountant"] == "band",
        "{r}"
    );
    // Truncated Poisson and fixed-size batches: their own calibrations.
    let r = p1(json!({"sampling": "truncated-poisson", "datasetSize": 50000, "batchSize": 512, "maxBatch": 603})).unwrap();
    let want = cli(&[
        "calibrate",
        "--sampling",
        "truncated-poisson",
        "--q",
        "0.01024",
        "--dataset-size",
        "50000",
        "--max-batch",
        "603",
        "--steps",
        "2930",
        "--accountant",
        "pld",
        "--delta",
        "1e-5",
        "--epsilon",
        "3",
        "--json",
    ]);
    assert_eq!(r["value"].as_f64(), Some(want), "{r}");
    assert!(want > poisson, "{want} vs {poisson}");
    let r = p1(json!({"sampling": "fixed-size", "datasetSize": 50000, "batchSize": 512, "adjacency": "replace-one"})).unwrap();
    assert!((r["value"].as_f64().unwrap() - 3.6452).abs() < 1e-3, "{r}");
    // Most steps of the shuffled run: whole epochs whose band's upper end meets the target.
    // (One epoch of σ = 1 is already ε 4.38 without amplification: refused at 3.)
    assert!(p1(json!({"which": "steps", "sampling": "shuffled", "epochs": 30})).is_err());
    let r = p1(json!({"which": "steps", "sampling": "shuffled", "epochs": 30, "target": 20.0}))
        .unwrap();
    let steps = r["value"].as_u64().unwrap();
    assert!(
        steps % 97 == 0 && steps >= 97 && r["epsilon"].as_f64().unwrap() <= 20.0,
        "{r}"
    );
    // An attack-risk target is refused for a scheme, by name; so is a scheme without sizes.
    let e = p1(json!({"which": "risk-sigma", "fpr": 0.01, "target": 0.1, "sampling": "shuffled", "epochs": 30})).unwrap_err();
    assert!(e.contains("shuffled"), "{e}");
    let e = p1(json!({"sampling": "truncated-poisson", "schemeError": "truncated Poisson needs the dataset size"})).unwrap_err();
    assert!(e.contains("dataset size"), "{e}");
}

/// The page's audit: the pasted CSV against the run shown — Poisson sampling's, or the
/// shuffled band's — with the certificate the command line gives for that run.
#[test]
fn an_audit_is_of_the_run_shown() {
    let mut csv = String::from("score,member\n");
    for i in 0..300 {
        let z = (i as f64 + 0.5) / 300.0 * 6.0 - 3.0;
        csv += &format!("{},1\n{z},0\n", z + 1.0);
    }
    let d = req(json!({"kind": "audit", "csv": csv.clone()}));
    check(&d).unwrap();
    let a = audit(&d).unwrap();
    let want = command(&[
        "epsilon",
        "--q",
        "0.01",
        "--sigma",
        "1",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
        "--accountant",
        "pld",
        "--json",
    ])
    .unwrap();
    assert_eq!(a["certified_epsilon"], want["epsilon"], "{a}");
    assert!(a["verdict"].as_str().unwrap().contains("poisson sampling"));
    let shuffled = req(json!({"kind": "audit", "csv": csv, "sampling": "shuffled", "epochs": 10}));
    let a = audit(&shuffled).unwrap();
    let want = command(&[
        "epsilon",
        "--sampling",
        "shuffle",
        "--steps-per-epoch",
        "100",
        "--epochs",
        "10",
        "--sigma",
        "1",
        "--delta",
        "1e-5",
        "--json",
    ])
    .unwrap();
    assert_eq!(a["certified_epsilon"], want["epsilon"], "{a}");
    assert!(a["verdict"].as_str().unwrap().contains("shuffle sampling"));
    assert!(check(&req(json!({"kind": "audit"}))).is_err());
    let e = audit(&req(json!({"kind": "audit", "csv": "a,b\n1,2"}))).unwrap_err();
    assert!(e.contains("'score' column"), "{e}");
}

/// Correlated noise for the run shown is the command line's `epsilon --strategy … --json`,
/// field for field (the bins without q); a request without a strategy is refused by name.
#[test]
fn correlated_noise_is_the_command_lines() {
    for (strategy, joins) in [
        ("band:4,1,0.5,0.25,0.125", "min-sep"),
        ("blt:0.9:0.3", "poisson"),
        ("band:2,1,0.5", "balls-in-bins:500"),
        ("band:1", "cyclic-bins:1000"),
    ] {
        let d = req(json!({"kind": "correlated", "strategy": strategy, "participation": joins}));
        check(&d).unwrap();
        let a = correlated(&d).unwrap();
        let mut words = vec![
            "epsilon",
            "--strategy",
            strategy,
            "--participation",
            joins,
            "--sigma",
            "1",
            "--steps",
            "1000",
            "--delta",
            "1e-5",
            "--json",
        ];
        if !joins.contains("bins") {
            words.extend(["--q", "0.01"]);
        }
        let want = command(&words).unwrap();
        assert_eq!(a, want, "{strategy} {joins}");
    }
    // With the page's target ε: the command line's calibrate for the same run.
    let d = req(
        json!({"kind": "correlated", "strategy": "band:2,1,0.5", "participation": "min-sep", "target": 2.0}),
    );
    check(&d).unwrap();
    let want = command(&[
        "calibrate",
        "--strategy",
        "band:2,1,0.5",
        "--q",
        "0.01",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
        "--epsilon",
        "2",
        "--json",
    ])
    .unwrap();
    let a = correlated(&d).unwrap();
    assert_eq!(
        (a["calibrated_sigma"].clone(), a["target"].clone()),
        (want["sigma"].clone(), json!(2.0))
    );
    assert!(check(&req(
        json!({"kind": "correlated", "participation": "poisson"})
    ))
    .is_err());
    let e = correlated(&req(
        json!({"kind": "correlated", "strategy": "band:x", "participation": "min-sep"}),
    ))
    .unwrap_err();
    assert!(e.contains("whole number of bands"), "{e}");
}

/// A correlated run's charts: each checkpoint of ε over training is the command line's
/// `epsilon --strategy …` at that many epochs (or steps), the last one the headline's; the
/// profile is the command line's `profile --strategy …` up to 2.5 × the largest ε.
#[test]
fn correlated_charts_are_the_command_lines() {
    let d = req(
        json!({"kind": "correlated", "strategy": "band:4", "participation": "min-sep",
        "datasetSize": 60000, "batchSize": 256, "epochs": 6, "charts": true}),
    );
    check(&d).unwrap();
    let a = correlated(&d).unwrap();
    let c = &a["charts"];
    let (steps, up, lo) = (
        c["training"]["steps"].as_array().unwrap(),
        c["training"]["pldUpper"].as_array().unwrap(),
        c["training"]["pldLower"].as_array().unwrap(),
    );
    assert_eq!(steps.len(), 6, "{c}");
    assert_eq!(up.last(), Some(&a["epsilon"]));
    let run = [
        "--strategy",
        "band:4",
        "--dataset-size",
        "60000",
        "--batch-size",
        "256",
    ];
    // The checkpoints of 6 epochs: 6^(i/12) rounded, i = 1 … 12, without repeats.
    for (i, n) in ["1", "2", "3", "4", "5", "6"].into_iter().enumerate() {
        let (s, u, l) = (&steps[i], &up[i], &lo[i]);
        let mut w = vec![
            "epsilon", "--sigma", "1", "--delta", "1e-5", "--epochs", n, "--json",
        ];
        w.extend(run);
        let want = command(&w).unwrap();
        assert_eq!(
            (s, u, l),
            (&want["steps"], &want["epsilon"], &want["epsilon_lower"]),
            "epoch {n}"
        );
    }
    let top = up.iter().filter_map(Value::as_f64).fold(0.0, f64::max) * 2.5;
    let top = top.to_string();
    let mut w = vec!["profile", "--sigma", "1", "--epsilon", &top, "--json"];
    w.extend(run);
    w.extend(["--epochs", "6"]);
    let want = command(&w).unwrap();
    assert_eq!(c["profile"].as_array().unwrap().len(), 101);
    for (p, q) in c["profile"]
        .as_array()
        .unwrap()
        .iter()
        .zip(want["profile"].as_array().unwrap())
    {
        assert_eq!((&p["epsilon"], &p["delta"]), (&q["epsilon"], &q["delta"]));
    }
    assert_eq!(c["risk"]["curve"], want["attack_curve"]);
    assert_eq!(c["errors"], json!({}));
    // Bins in steps: checkpoints in whole epochs of t steps (one step would be no epoch).
    let d2 = req(json!({"kind": "correlated", "strategy": "band:2,1,0.5",
        "participation": "cyclic-bins:10", "steps": 100, "sigma": 4.0, "delta": 1e-2, "charts": true}));
    let a2 = correlated(&d2).unwrap();
    let st = a2["charts"]["training"]["steps"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(a2["charts"]["errors"], json!({}), "{}", a2["charts"]);
    assert!(
        st.iter().all(|s| s.as_u64().unwrap() % 10 == 0) && st.last() == Some(&json!(100)),
        "{st:?}"
    );
    // Without "charts": none computed.
    let mut d = d;
    d["charts"] = json!(false);
    assert!(correlated(&d).unwrap().get("charts").is_none());
}

/// The target's search a solve at a time answers as `most_steps` at once: Poisson runs
/// (several solves each, counted), a target out of reach (the refusal in the same words),
/// a malformed one, and a scheme's run (answered at once).
#[test]
fn target_search_answers_as_most_steps() {
    let cases = [
        req(json!({"target": 1.0})),
        req(json!({"q": 256.0 / 60000.0, "sigma": 1.1, "target": 3.0})),
        req(json!({"q": 0.001, "sigma": 0.7, "target": 2.0, "delta": 1e-8})),
        req(json!({"q": 0.5, "sigma": 0.3, "target": 0.01})),
        req(json!({"target": -1.0})),
        req(json!({"groupSize": 2, "steps": 200, "target": 2.0})),
    ];
    for (i, d) in cases.iter().enumerate() {
        let side = side_answers(d);
        let whole = most_steps(d, &side);
        let mut search = TargetSearch::new(d, &side);
        let mut calls = 1;
        let stepped = loop {
            if let Some(r) = search.advance(1) {
                break r;
            }
            calls += 1;
        };
        assert_eq!(stepped, whole, "case {i}");
        // Once answered, the answer stays.
        assert_eq!(search.advance(1), Some(whole.clone()), "case {i}");
        if i < 3 {
            assert!(
                whole.is_ok() && calls >= 3,
                "case {i}: {whole:?} in {calls} calls"
            );
        } else {
            assert!(whole.is_err() || i == 5, "case {i}: {whole:?}");
        }
    }
}
