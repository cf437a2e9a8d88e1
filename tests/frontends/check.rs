//! `check` (issue 63): each catalogue row (docs/check.md) as a configuration whose printed
//! value is the library's computed output and whose certified value is the engine's own
//! query for the run the code made (or a closed form); the command line and `batch` agree
//! field for field; bad configurations are refused naming the field.

use serde_json::{json, Map, Value};
use sgm_rdp::engine::{pld, Adjacency, Conversion, Run, Sgm};

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// The check of `config` through `batch`, compared with the command line's `check --json`
/// given the same keys as flags (the same fields, to the bit).
fn check(config: Value) -> Map<String, Value> {
    let mut line = config.as_object().unwrap().clone();
    line.insert("command".into(), json!("check"));
    let out: Value =
        serde_json::from_str(&sgm_rdp::cli::batch_line(&Value::Object(line).to_string())).unwrap();
    assert!(out.get("error").is_none(), "{config}: {out}");
    let mut w = vec!["check".to_string()];
    for (k, v) in config.as_object().unwrap() {
        w.push(format!("--{}", k.replace('_', "-")));
        w.push(match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    }
    w.push("--json".into());
    let cli: Map<String, Value> = serde_json::from_str(&sgm_rdp::cli::run(&w).unwrap()).unwrap();
    for (k, v) in &cli {
        assert_eq!(
            out.get(k),
            Some(v),
            "{config}: {k} differs between check and batch"
        );
    }
    cli
}

fn ids(a: &Map<String, Value>) -> Vec<String> {
    a["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn finding<'a>(a: &'a Map<String, Value>, id: &str) -> &'a Value {
    a["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {:?}", ids(a)))
}

fn num(a: &Map<String, Value>, k: &str) -> f64 {
    a[k].as_f64().unwrap_or_else(|| panic!("{k} in {a:?}"))
}

fn tight(q: f64, sigma: f64, steps: u64) -> pld::Bracket {
    pld::epsilon(Sgm::new(q, sigma).unwrap(), steps, 1e-5)
        .unwrap()
        .epsilon
}

/// The cli's `--json` answer to `w`.
fn cli(w: &[&str]) -> Value {
    serde_json::from_str(&sgm_rdp::cli::run(&words(w)).unwrap()).unwrap()
}

const P1: [(&str, f64); 4] = [
    ("noise_multiplier", 1.0),
    ("dataset_size", 50000.0),
    ("batch_size", 512.0),
    ("epochs", 30.0),
];

fn p1(extra: Value) -> Value {
    let mut c = json!({"delta": 1e-5});
    for (k, v) in P1 {
        c[k] = json!(v);
    }
    for (k, v) in extra.as_object().unwrap() {
        c[k] = v.clone();
    }
    c
}

#[test]
fn a_shuffled_opacus_loader_gets_the_shuffled_band() {
    let a = check(p1(json!({"library": "opacus", "poisson_sampling": false})));
    // Opacus' PRV printout for its loader: q = 1/⌈N/B⌉ = 1/98, 30·98 steps.
    let printed = pld::opacus_prv_epsilon(Sgm::new(1.0 / 98.0, 1.0).unwrap(), 2940, 1e-5).unwrap();
    assert_eq!(num(&a, "printed_epsilon"), printed);
    let band = cli(&[
        &["epsilon", "--sampling", "shuffle"][..],
        &super::cli::P1[..],
        &["--json"][..],
    ]
    .concat());
    assert_eq!(a["certified_epsilon"], band["epsilon"]);
    assert_eq!(a["certified_epsilon_lower"], band["epsilon_lower"]);
    assert!(num(&a, "certified_epsilon_lower") > 15.0 && printed < 3.3);
    assert_eq!(finding(&a, "shuffled-as-poisson")["severity"], "unsafe");
    // Each finding names the configuration keys that set it (the page shows them).
    assert_eq!(
        finding(&a, "shuffled-as-poisson")["keys"],
        json!(["poisson_sampling", "shuffle", "sampling"])
    );
    // With Poisson sampling (Opacus' default) the same run has no such finding, and the
    // certified ε is the tight accountant's for Opacus' own q and steps.
    let b = check(p1(json!({"library": "opacus"})));
    assert!(!ids(&b).contains(&"shuffled-as-poisson".to_string()));
    assert_eq!(
        num(&b, "certified_epsilon"),
        tight(1.0 / 98.0, 1.0, 2940).upper
    );
    assert!(ids(&b).contains(&"prv-estimate".to_string()));
    assert!(ids(&b).contains(&"expected-batch-normalisation".to_string()));
    // A loader without shuffling: the Gaussian mechanism once per epoch, μ = √30, exactly.
    let c = check(p1(
        json!({"library": "opacus", "poisson_sampling": false, "shuffle": false}),
    ));
    assert_eq!(
        num(&c, "certified_epsilon"),
        pld::gaussian_epsilon(30f64.sqrt(), 1e-5).unwrap().upper
    );
    assert!(ids(&c).contains(&"fixed-order-as-poisson".to_string()));
}

#[test]
fn accumulation_is_accounted_at_the_logical_batch_or_as_a_mixture() {
    // jax-privacy #234: batch 10 × 8 accumulation, T = 100, N = 1000, σ = 1, δ = 1e-5.
    let base = json!({"library": "jax_privacy", "noise_multiplier": 1, "dataset_size": 1000,
        "batch_size": 10, "accumulation_steps": 8, "steps": 100, "delta": 1e-5});
    let a = check(base.clone());
    let printed = pld::dp_accounting_epsilon(Sgm::new(0.01, 1.0).unwrap(), 100, 1e-5).unwrap();
    assert_eq!(num(&a, "printed_epsilon"), printed);
    assert!((printed - 0.718).abs() < 0.01, "{printed}");
    assert_eq!(num(&a, "certified_epsilon"), tight(0.08, 1.0, 100).upper);
    assert!((num(&a, "certified_epsilon") - 5.61).abs() < 0.01);
    assert_eq!(finding(&a, "physical-batch")["severity"], "unsafe");
    // Independent Poisson micro-batches: each example in Binomial(8, 0.01) of a step's
    // micro-batches: the mixture of 8 copies at q = 0.01 (the user-level accountant).
    let mut ind = base;
    ind["accumulation"] = json!("independent");
    let b = check(ind);
    let group = cli(&[
        "epsilon",
        "--q",
        "0.01",
        "--sigma",
        "1",
        "--steps",
        "100",
        "--delta",
        "1e-5",
        "--group-size",
        "8",
        "--accountant",
        "pld",
        "--json",
    ]);
    assert_eq!(b["certified_epsilon"], group["epsilon"]);
    assert!(ids(&b).contains(&"independent-micro-batches".to_string()));
}

#[test]
fn noise_units_are_read_from_what_the_code_adds() {
    // σ given as the noise std (C = 4): the code's multiplier is 2/4.
    let a = check(
        json!({"library": "dp_accounting", "noise_multiplier": 2, "noise_std": 2,
        "max_grad_norm": 4, "sample_rate": 0.01, "steps": 1000, "delta": 1e-5}),
    );
    assert_eq!(num(&a, "run_sigma"), 0.5);
    assert_eq!(num(&a, "certified_epsilon"), tight(0.01, 0.5, 1000).upper);
    assert_eq!(finding(&a, "sigma-as-std")["severity"], "unsafe");
    // Noise for the mean added to the sum: std σ·C/B on the sum is σ/B.
    let b = check(
        json!({"library": "jax_privacy", "noise_multiplier": 1, "noise_std": 0.01,
        "noise_added_to": "sum", "dataset_size": 10000, "batch_size": 100, "steps": 100, "delta": 1e-5}),
    );
    assert_eq!(num(&b, "run_sigma"), 0.01);
    assert!(ids(&b).contains(&"sigma-as-std".to_string()));
    // Noise of std σ·C added to the mean: σ·B relative to the sum (more noise, a caution).
    let c = check(
        json!({"library": "jax_privacy", "noise_multiplier": 1, "noise_std": 1,
        "noise_added_to": "mean", "dataset_size": 10000, "batch_size": 100, "steps": 100, "delta": 1e-5}),
    );
    assert_eq!(num(&c, "run_sigma"), 100.0);
    assert_eq!(finding(&c, "noise-on-mean")["severity"], "caution");
}

#[test]
fn replace_one_units_against_the_closed_form() {
    // dp_accounting PR #464: GaussianDpEvent(2.0) under REPLACE_ONE printed 2.1657 by RDP.
    let a = check(
        json!({"library": "dp_accounting", "noise_multiplier": 2, "sample_rate": 1,
        "steps": 1, "delta": 1e-5, "neighboring": "replace_one"}),
    );
    let rdp = Run::with_default_orders(Sgm::new(1.0, 2.0).unwrap(), 1)
        .unwrap()
        .epsilon(1e-5, Conversion::Improved)
        .unwrap()
        .grid_value;
    assert_eq!(num(&a, "printed_epsilon"), rdp);
    assert!((rdp - 2.1657).abs() < 1e-4, "{rdp}");
    // The replace-one Gaussian of σ = 2 has sensitivity 2: exactly μ = 1.
    let closed = pld::gaussian_epsilon(1.0, 1e-5).unwrap();
    let c = num(&a, "certified_epsilon");
    assert!(
        c >= closed.lower && (c - closed.upper).abs() < 1e-5 * closed.upper,
        "{c} {closed:?}"
    );
    assert_eq!(a["run_adjacency"], "replace-one");
    assert!(ids(&a).contains(&"replace-one-units".to_string()));
    let _ = Adjacency::ReplaceOne;
}

#[test]
fn the_other_rows_of_the_catalogue() {
    // TF Privacy's statement: σ/2 with microbatching, q = B/N, ⌈E/q⌉ steps, RDP; its
    // once-per-epoch figure: the Gaussian of σ/2 composed ⌈E⌉ times.
    let a = check(
        json!({"library": "tf_privacy", "noise_multiplier": 1, "number_of_examples": 50000,
        "batch_size": 512, "num_epochs": 30, "delta": 1e-5, "drop_last": true}),
    );
    // (The libraries' own fractional-order RDP, engine::library_rdp::library_epsilon, checked against
    // dp_accounting's output in engine::rdp's tests and python/tests.)
    let orders = sgm_rdp::engine::default_orders();
    let rdp = |q: f64, t: u64| {
        sgm_rdp::engine::library_rdp::library_epsilon(&Sgm::new(q, 0.5).unwrap(), t, &orders, 1e-5)
            .unwrap()
            .0
    };
    assert_eq!(num(&a, "printed_epsilon"), rdp(0.01024, 2930));
    assert_eq!(num(&a, "printed_epsilon_once_per_epoch"), rdp(1.0, 30));
    assert!(ids(&a).contains(&"microbatching-doubles-sensitivity".to_string()));
    assert!(ids(&a).contains(&"steps-rounding".to_string()));
    // Opacus' weighted sampler: q from its num_samples, and no certified number.
    let w = check(p1(
        json!({"library": "opacus", "sampler": "weighted", "sampler_num_samples": 1000}),
    ));
    assert!(w["certified_epsilon"].is_null() && w["certified_why"].is_string());
    assert_eq!(num(&w, "library_q"), 0.5);
    assert_eq!(finding(&w, "q-from-sampler-length")["severity"], "unsafe");
    // δ ≥ 1/N; a target met on paper only; Opacus' GDP accountant.
    let d = check(
        json!({"library": "opacus", "noise_multiplier": 1, "dataset_size": 1000,
        "batch_size": 10, "epochs": 1, "delta": 0.002}),
    );
    assert!(ids(&d).contains(&"delta-at-least-1-over-n".to_string()));
    let t = check(p1(
        json!({"library": "opacus", "poisson_sampling": false, "target_epsilon": 3.5}),
    ));
    assert_eq!(finding(&t, "target-met-on-paper")["severity"], "unsafe");
    let g = check(p1(json!({"library": "opacus", "accountant": "gdp"})));
    assert!(ids(&g).contains(&"gdp-clt".to_string()));
    // Opacus' 151 orders end at 63: a small ε's best order is the last.
    let o = check(
        json!({"library": "opacus", "accountant": "rdp", "noise_multiplier": 5,
        "sample_rate": 0.001, "steps": 10, "delta": 1e-5}),
    );
    assert!(ids(&o).contains(&"orders-too-short".to_string()));
}

#[test]
fn bad_configurations_are_refused_by_name() {
    let refused = |c: Value| {
        let mut line = c.as_object().unwrap().clone();
        line.insert("command".into(), json!("check"));
        let out: Value =
            serde_json::from_str(&sgm_rdp::cli::batch_line(&Value::Object(line).to_string()))
                .unwrap();
        out["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{c}: {out}"))
            .to_string()
    };
    let ok = json!({"library": "opacus", "noise_multiplier": 1, "sample_rate": 0.01, "steps": 10, "delta": 1e-5});
    let with = |k: &str, v: Value| {
        let mut c = ok.clone();
        c[k] = v;
        c
    };
    for (c, named) in [
        (with("library", json!("keras")), "library must be"),
        (
            with("noise_multiplier", Value::Null),
            "missing noise_multiplier",
        ),
        (
            with("noise_multiplier", json!(-1)),
            "noise_multiplier must be > 0",
        ),
        (with("delta", json!(2)), "delta must be in (0, 1)"),
        (
            with("sampling", json!("shuffle")),
            "Opacus' batching is poisson_sampling",
        ),
        (
            with("used_microbatching", json!(true)),
            "used_microbatching is TF Privacy's",
        ),
        (
            with("poisson_sampling", json!("maybe")),
            "poisson_sampling must be true or false",
        ),
        (
            with("accountant", json!("pld")),
            "accountant 'pld' is not Opacus'",
        ),
        (
            with("target_epsilon", json!(0)),
            "target_epsilon must be a finite number > 0",
        ),
        (with("nosuch", json!(1)), "unknown key(s) nosuch"),
        (
            json!({"library": "opacus", "noise_multiplier": 1, "dataset_size": 10, "batch_size": 20, "epochs": 1, "delta": 1e-5}),
            "batch_size 20 exceeds dataset_size 10",
        ),
    ] {
        let e = refused(c.clone());
        assert!(e.contains(named), "{c}: {e}");
    }
    let e = sgm_rdp::cli::run(&words(&["check", "--library"])).unwrap_err();
    assert_eq!(e, "--library needs a value");
    let e = sgm_rdp::cli::run(&words(&["check", "--config", "/nonexistent.json"])).unwrap_err();
    assert!(e.starts_with("--config /nonexistent.json: "), "{e}");
}

/// A dp_accounting DpEvent (its repr, or its `to_named_tuple()` as JSON) stands for the
/// rate, σ and steps: the same check as those keys; equal events merge, different ones and
/// unsupported events are refused by name.
#[test]
fn a_dp_event_is_its_run() {
    let keys = check(json!({"library": "dp_accounting", "noise_multiplier": 1.0,
        "sample_rate": 0.01, "steps": 1000, "delta": 1e-5}));
    let repr = check(
        json!({"library": "dp_accounting", "delta": 1e-5, "dp_event":
        "SelfComposedDpEvent(event=PoissonSampledDpEvent(sampling_probability=0.01, event=GaussianDpEvent(noise_multiplier=1.0)), count=1000)"}),
    );
    assert_eq!(repr["printed_epsilon"], keys["printed_epsilon"]);
    assert_eq!(repr["certified_epsilon"], keys["certified_epsilon"]);
    let line = json!({"command": "check", "library": "dp_accounting", "delta": 1e-5, "dp_event":
        {"class_name": "ComposedDpEvent", "events": [
            {"class_name": "SelfComposedDpEvent", "count": 600, "event": {"class_name": "PoissonSampledDpEvent",
                "sampling_probability": 0.01, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0}}},
            {"class_name": "SelfComposedDpEvent", "count": 400, "event": {"class_name": "PoissonSampledDpEvent",
                "sampling_probability": 0.01, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0}}},
            {"class_name": "NoOpDpEvent"}]}});
    let out: Value = serde_json::from_str(&sgm_rdp::cli::batch_line(&line.to_string())).unwrap();
    assert_eq!(out["certified_epsilon"], keys["certified_epsilon"], "{out}");
    assert_eq!(out["dp_event_run"]["steps"], 1000.0);
    for (ev, why) in [
        (
            "ComposedDpEvent([GaussianDpEvent(1.0), GaussianDpEvent(2.0)])",
            "2 different",
        ),
        ("LaplaceDpEvent(1.0)", "LaplaceDpEvent is not checked here"),
        (
            "SelfComposedDpEvent(GaussianDpEvent(1.0), count=-1)",
            "count must be",
        ),
        ("GaussianDpEvent(noise_multiplier=1.0", "dp_event"),
    ] {
        let e = sgm_rdp::cli::run(&words(&[
            "check",
            "--library",
            "dp_accounting",
            "--delta",
            "1e-5",
            "--dp-event",
            ev,
        ]))
        .unwrap_err();
        assert!(e.contains(why), "{ev}: {e}");
    }
}
