//! What the guarantee means (issue #25): μ-GDP with its fit, the advantage and TPR bounds,
//! and noise calibrated to an attack-risk target — against closed forms (the Gaussian
//! mechanism, q = 1) and gdpnum's published test value.
#![cfg(not(target_arch = "wasm32"))]

use sgm_rdp::engine::pld::fdp::{self, Risk};
use sgm_rdp::engine::Sgm;

/// Φ̄⁻¹ through the engine's own inverse is what we test against closed forms; the
/// closed forms below use libm's erfc independently.
fn phi(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

#[test]
fn the_gaussian_mechanism_is_mu_gdp_with_mu_one_over_sigma_and_no_regret() {
    for &sigma in &[0.5, 1.0, 2.0, 7.0] {
        let g = fdp::gdp(Sgm::new(1.0, sigma).unwrap(), 1).unwrap();
        let mu = 1.0 / sigma;
        assert!(
            g.mu.lower <= mu && mu <= g.mu.upper,
            "σ {sigma}: {:?}",
            g.mu
        );
        assert!(g.mu.upper < mu * 1.002, "σ {sigma}: {:?}", g.mu);
        assert!(g.mu.lower > mu * 0.99, "σ {sigma}: {:?}", g.mu);
        assert!(g.regret < 1e-4, "σ {sigma}: regret {}", g.regret);
        // Advantage of the Gaussian mechanism: 2Φ(μ/2) − 1.
        let adv = 2.0 * phi(mu / 2.0) - 1.0;
        assert!(g.advantage.lower <= adv && adv <= g.advantage.upper);
        assert!(g.advantage.upper - adv < 1e-9);
    }
    // T steps at q = 1 compose to μ = √T/σ.
    let g = fdp::gdp(Sgm::new(1.0, 4.0).unwrap(), 16).unwrap();
    assert!(
        g.mu.lower <= 1.0 && 1.0 <= g.mu.upper && g.mu.upper < 1.002,
        "{:?}",
        g.mu
    );
}

#[test]
fn gdpnum_published_dpsgd_value() {
    // gdp-numeric's tests/test_dpsgd.py: σ = 9.4, q = 2¹⁴/50000, T = 2000:
    // μ = 1.567013 ± 1e-2, regret ≤ 1e-2.
    let g = fdp::gdp(Sgm::new(16384.0 / 50000.0, 9.4).unwrap(), 2000).unwrap();
    eprintln!("gdpnum run: {g:?}");
    assert!((g.mu.upper - 1.567013).abs() < 1e-2, "{:?}", g.mu);
    assert!(
        g.mu.lower <= g.mu.upper && g.mu.upper - g.mu.lower < 1e-2,
        "{:?}",
        g.mu
    );
    assert!(g.regret <= 1e-2, "regret {}", g.regret);
}

#[test]
fn mnist_meaning_figures() {
    let m = Sgm::new(256.0 / 60000.0, 1.1).unwrap();
    let g = fdp::gdp(m, 14070).unwrap();
    eprintln!("MNIST (q = 256/60000, σ = 1.1, T = 14070): {g:?}");
    assert!(g.mu.lower <= g.mu.upper && g.mu.upper > 0.0);
    // Poisson subsampling bends the curve away from the Gaussian one: some regret.
    assert!(g.regret > 0.0);
    for w in g.tradeoff.windows(2) {
        assert!(w[0].1 >= 0.0 && w[0].1 <= 1.0 - w[0].0 + 1e-12);
    }
    let (s, b) =
        fdp::calibrate_sigma_risk(Risk::tpr(0.01).unwrap(), 0.05, 256.0 / 60000.0, 14070).unwrap();
    eprintln!("MNIST σ for TPR ≤ 5 % at FPR 1 %: {s} (bound {b})");
    assert!(b <= 0.05);
}

#[test]
fn advantage_calibration_matches_the_closed_form() {
    // q = 1, T = 1: advantage = 2Φ(1/(2σ)) − 1 = 0.1 at σ = 3.978948 (issue #25).
    let (s, b) = fdp::calibrate_sigma_risk(Risk::Advantage, 0.1, 1.0, 1).unwrap();
    assert!(b <= 0.1);
    assert!((s / 3.978948 - 1.0).abs() < 2e-4, "σ {s}");
    let closed = 2.0 * phi(0.5 / s) - 1.0;
    assert!(closed <= 0.1 + 1e-12, "closed form at the answer: {closed}");
}

#[test]
fn tpr_calibration_matches_the_closed_form() {
    // Gaussian mechanism: TPR at FPR b is Φ(μ − Φ̄⁻¹(b)); TPR ≤ a ⇔ μ ≤ Φ̄⁻¹(b) − Φ̄⁻¹(a).
    // Φ̄⁻¹(0.01) = 2.3263478740408408, Φ̄⁻¹(0.05) = 1.6448536269514722 (tables).
    let mu = 2.3263478740408408 - 1.6448536269514722;
    let (s, b) = fdp::calibrate_sigma_risk(Risk::tpr(0.01).unwrap(), 0.05, 1.0, 1).unwrap();
    assert!(b <= 0.05);
    assert!(
        s >= 1.0 / mu * (1.0 - 2e-4) && s < 1.0 / mu * 1.003,
        "σ {s} vs {}",
        1.0 / mu
    );
    let tpr = phi(1.0 / s - 2.3263478740408408);
    assert!(tpr <= 0.05 + 1e-9, "true TPR at the answer {tpr}");
}

#[test]
fn steps_calibration_to_risk_and_its_refusals() {
    let m = Sgm::new(0.01, 1.0).unwrap();
    let (t, b) = fdp::calibrate_steps_risk(Risk::Advantage, 0.2, m).unwrap();
    assert!(b <= 0.2);
    assert!(fdp::risk_bound(m, t + 1, Risk::Advantage).unwrap() > 0.2);
    // Not even one step: refused with the certified bound named.
    let tiny = fdp::calibrate_steps_risk(Risk::Advantage, 1e-9, Sgm::new(1.0, 1.0).unwrap());
    assert!(tiny.unwrap_err().to_string().contains("certified bound"));
    assert!(fdp::calibrate_sigma_risk(Risk::Advantage, 1.5, 0.01, 10).is_err());
}

#[test]
fn mu_and_risk_fall_as_noise_grows() {
    let mut last = f64::INFINITY;
    let mut last_tpr = 1.0;
    for &sigma in &[0.8, 1.0, 1.5, 3.0] {
        let m = Sgm::new(0.02, sigma).unwrap();
        let g = fdp::gdp(m, 500).unwrap();
        assert!(g.mu.upper < last, "σ {sigma}: {:?}", g.mu);
        last = g.mu.upper;
        let tpr = fdp::risk_bound(m, 500, Risk::tpr(1e-3).unwrap()).unwrap();
        assert!(tpr <= last_tpr && tpr >= 1e-3);
        last_tpr = tpr;
    }
}
