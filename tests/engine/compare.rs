//! The comparison routes (engine::compare) against values computed by hand.
#![cfg(not(target_arch = "wasm32"))]

use sgm_rdp::engine::compare::{
    self, advanced_composition, cdp_gaussian, laplace_lin_renyi, laplace_renyi,
};
use sgm_rdp::engine::Sgm;

fn eps(routes: &[compare::Route], prefix: &str) -> Option<f64> {
    routes
        .iter()
        .find(|r| r.name.starts_with(prefix))
        .unwrap()
        .epsilon
}

#[test]
fn cdp_route_by_hand() {
    // q = 1, σ = 10, T = 100, δ = 1e-5: μ = Tτ²/2 = 0.5, τ_T = √T/σ = 1,
    // ε = 0.5 + √(2 ln 10⁵) = 5.298525... (issue 6's example).
    let want = 0.5 + (2.0 * 1e5f64.ln()).sqrt();
    assert!((cdp_gaussian(10.0, 100.0, 1e-5) - want).abs() < 1e-12);
    assert!((want - 5.29853).abs() < 1e-5);
    let r = compare::compare(Sgm::new(1.0, 10.0).unwrap(), 100, 1e-5).unwrap();
    assert!((eps(&r, "CDP").unwrap() - want).abs() < 1e-12);
    // For the Gaussian, the classic RDP conversion optimized over α gives the same number.
    assert!((eps(&r, "exact RDP, classic").unwrap() - want).abs() < 1e-6);
    // Theorem 11 needs q ≤ 1/5: n/a with the reason.
    let t11 = r.iter().find(|x| x.name.starts_with("Theorem 11")).unwrap();
    assert!(t11.epsilon.is_none() && t11.note.as_deref().unwrap().contains("1/5"));
}

#[test]
fn orderings_the_papers_prove() {
    for &(q, s, t, d) in &[
        (0.01, 6.0, 5000u64, 1e-6),
        (0.001, 4.0, 100_000, 1e-5),
        (0.05, 10.0, 1000, 1e-5),
    ] {
        let r = compare::compare(Sgm::new(q, s).unwrap(), t, d).unwrap();
        let imp = eps(&r, "exact RDP, improved").unwrap();
        let cla = eps(&r, "exact RDP, classic").unwrap();
        assert!(imp <= cla);
        if let Some(t11) = eps(&r, "Theorem 11") {
            assert!(imp <= t11, "exact above Theorem 11 at q={q} sigma={s}");
        }
        assert!(eps(&r, "CDP").is_none());
    }
}

#[test]
fn advanced_composition_formula() {
    // Dwork–Rothblum Thm 1.1 by hand at ε₀ = 0.1, T = 100, δ′ = 1e-6.
    let want = (200.0 * 1e6f64.ln()).sqrt() * 0.1 + 100.0 * 0.1 * (0.1f64.exp() - 1.0) / 2.0;
    assert!((advanced_composition(0.1, 100.0, 1e-6) - want).abs() < 1e-12);
}

#[test]
fn laplace_bounds_cross_near_3_3() {
    // Chaudhuri et al. §5: at ε = 1 the (lin, Rényi) upper bound overtakes eq. 4 near α ≈ 3.3;
    // below it the bound is larger.
    let diff = |a: f64| laplace_lin_renyi(1.0, a) - laplace_renyi(1.0, a);
    assert!(diff(2.0) > 0.0);
    let (mut lo, mut hi) = (1.5, 10.0);
    assert!(diff(lo) > 0.0 && diff(hi) < 0.0);
    for _ in 0..60 {
        let m = 0.5 * (lo + hi);
        if diff(m) > 0.0 {
            lo = m
        } else {
            hi = m
        }
    }
    assert!((lo - 3.3).abs() < 0.15, "crossing at {lo}");
    // eq. 4 tends to ε as α → ∞ and to the KL value as α → 1.
    assert!((laplace_renyi(1.0, 1e6) - 1.0).abs() < 1e-5);
}

#[test]
fn tcdp_rho_for_the_gaussian_is_one_over_two_sigma_squared() {
    // q = 1: ε(α) = α/(2σ²), so ρ = 1/(2σ²) for every ω.
    let rho = compare::tcdp_rho(Sgm::new(1.0, 2.0).unwrap(), 10.0).unwrap();
    assert!((rho - 1.0 / 8.0).abs() < 1e-15);
    // SGM: ρ bounds ε(α)/α on the range.
    let m = Sgm::new(0.01, 2.0).unwrap();
    let rho = compare::tcdp_rho(m, 20.0).unwrap();
    for a in [1.5, 2.0, 5.0, 20.0] {
        assert!(sgm_rdp::engine::rdp::rdp(&m, a).unwrap() <= rho * a * (1.0 + 1e-9));
    }
}

/// Hardening #9: "no finite guarantee" has one representation — `epsilon: None` (null in
/// JSON and JS) with a note saying so — and the advanced-composition note never names a
/// split of δ that was not found.
#[test]
fn no_finite_guarantee_is_null_with_a_note() {
    let routes =
        sgm_rdp::engine::compare::compare(Sgm::new(0.5, 1e-3).unwrap(), 1_000_000_000, 1e-5)
            .unwrap();
    for r in &routes {
        if let Some(e) = r.epsilon {
            assert!(e.is_finite(), "{}: {e}", r.name);
        }
    }
    let adv = routes
        .iter()
        .find(|r| r.name.contains("advanced composition"))
        .unwrap();
    assert!(adv.epsilon.is_none());
    let note = adv.note.as_deref().unwrap();
    assert!(
        note.contains("no finite guarantee") && !note.contains("0.000·δ"),
        "{note}"
    );
    let json = serde_json::to_string(&routes).unwrap();
    assert!(!json.contains("inf") || json.contains("infinity"));
}

/// Routes carry a stable id apart from their display name (the name may change).
#[test]
fn routes_have_stable_ids() {
    let routes =
        sgm_rdp::engine::compare::compare(Sgm::new(0.01, 1.1).unwrap(), 1000, 1e-5).unwrap();
    let ids: Vec<&str> = routes.iter().map(|r| r.id).collect();
    assert_eq!(
        ids,
        [
            "rdp_improved",
            "rdp_classic",
            "theorem11",
            "abadi",
            "bun",
            "per_step_naive",
            "per_step_advanced",
            "cdp"
        ]
    );
}
