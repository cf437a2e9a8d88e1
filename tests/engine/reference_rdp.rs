//! The engine against the independent mpmath reference (tests/reference/generate.py:
//! A_α by direct numerical integration at ≥ 45 significant digits).
//!
//! Tolerance: relative error ≤ 1e-12, or ≤ 64·κ·2⁻⁵³ where κ (from the reference)
//! is the problem's condition number |∂ln ε/∂ln q| + |∂ln ε/∂ln α|: the exact
//! answer itself moves that much when the f64 inputs move by an ulp.
#![cfg(not(target_arch = "wasm32"))]

use sgm_rdp::engine::{rdp, Sgm};

struct Case {
    q: f64,
    sigma: f64,
    alpha: f64,
    log_a: f64,
    rdp: f64,
    kappa: f64,
}

fn cases() -> Vec<Case> {
    let text = include_str!("../reference/rdp_cases.jsonl");
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let f = |k: &str| -> f64 {
                match &v[k] {
                    serde_json::Value::String(s) => s.parse().unwrap(),
                    other => other.as_f64().unwrap(),
                }
            };
            Case {
                q: f("q"),
                sigma: f("sigma"),
                alpha: f("alpha"),
                log_a: f("log_a"),
                rdp: f("rdp"),
                kappa: f("kappa"),
            }
        })
        .collect()
}

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        ((a - b) / b).abs()
    }
}

#[test]
fn reference_has_enough_cases_and_extremes() {
    let c = cases();
    assert!(c.len() >= 1000, "only {} reference cases", c.len());
    assert!(c.iter().any(|c| c.q == 1e-8 && c.sigma == 1000.0));
    assert!(c.iter().any(|c| c.alpha >= 1e6));
    assert!(c.iter().any(|c| c.alpha <= 1.01 && c.sigma <= 0.1));
}

#[test]
fn rdp_matches_reference() {
    let mut worst = (0.0, 0.0, 0.0, 0.0);
    let mut strict_fail = 0;
    let mut failures = Vec::new();
    let all = cases();
    for c in &all {
        let m = Sgm::new(c.q, c.sigma).unwrap();
        let got = rdp::rdp(&m, c.alpha).unwrap();
        let got_log_a = rdp::log_a(&m, c.alpha).unwrap();
        assert!(
            got.is_finite() && got > 0.0,
            "q={} sigma={} alpha={}: {got}",
            c.q,
            c.sigma,
            c.alpha
        );
        let e = rel(got, c.rdp).max(rel(got_log_a, c.log_a));
        let tol = 1e-12f64.max(64.0 * c.kappa * f64::EPSILON / 2.0);
        if e > 1e-12 {
            strict_fail += 1;
        }
        if e > worst.0 {
            worst = (e, c.q, c.sigma, c.alpha);
        }
        if e > tol {
            failures.push(format!(
                "q={} sigma={} alpha={}: got {got:e}, want {:e}, rel {e:.2e}, kappa {:.1}",
                c.q, c.sigma, c.alpha, c.rdp, c.kappa
            ));
        }
    }
    eprintln!(
        "{} cases; max rel error {:.2e} at q={} sigma={} alpha={}; {} above 1e-12 (all within the condition-number bound)",
        all.len(), worst.0, worst.1, worst.2, worst.3, strict_fail
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn theorem5_a_dominates_b() {
    // Corollary 7 (A_α ≥ B_α), checked in the reference by integrating both.
    let text = include_str!("../reference/theorem5.jsonl");
    let mut n = 0;
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let la: f64 = v["log_a"].as_str().unwrap().parse().unwrap();
        let lb: f64 = v["log_b"].as_str().unwrap().parse().unwrap();
        assert!(la >= lb, "{l}");
        n += 1;
    }
    assert!(n >= 40);
}
