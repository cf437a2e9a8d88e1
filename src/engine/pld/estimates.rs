//! Quick estimates beside the lattices: the central-limit Gaussian μ and exact RDP's ε and
//! δ, used to place the lattices and to rule out runs far beyond the domain.

use super::*;
use crate::engine::math::exp_m1;

/// Without subsampling (q = 1 in every phase) the T-fold composition is exactly the
/// Gaussian mechanism with μ = √(Σ T_i/σ_i²) (μ-GDP; Dong, Roth, Su, "Gaussian
/// Differential Privacy", JRSS-B 2022, Cor. 3.3): its μ, or None.
pub(super) fn gaussian_mu(phases: &[Phase]) -> Option<f64> {
    // (One-in-one allocation is the Gaussian mechanism each epoch: q = 1 there too.)
    let gaussian = |p: &Phase| p.sgm.q() == 1.0 && !p.is_truncated();
    phases.iter().all(gaussian).then(|| {
        phases
            .iter()
            .map(|p| {
                let s = p.group as f64 * p.sensitivity();
                p.steps as f64 * (s / p.sgm.sigma()).powi(2)
            })
            .sum::<f64>()
            .sqrt()
    })
}

/// The central limit's ε at δ for plain SGM phases: μ-GDP with μ² = Σ T·q²·(e^{1/σ²} − 1)
/// (an estimate, not a bound: it only steers).
pub(super) fn central_limit_epsilon(phases: &[Phase], delta: f64) -> Option<f64> {
    if !phases.iter().all(Phase::is_sgm) {
        return None;
    }
    let mu2: f64 = phases
        .iter()
        .map(|p| {
            let (q, s) = (p.sgm.q(), p.sgm.sigma());
            p.steps as f64 * q * q * exp_m1(1.0 / (s * s))
        })
        .sum();
    let e = gauss::epsilon_bracket(mu2.sqrt(), delta).upper;
    (e.is_finite() && e > 0.0).then_some(e)
}

/// The composed phases' RDP curve on the default orders: (orders, Σ T·ε(α)).
pub(super) fn rdp_total(phases: &[Phase]) -> (Vec<f64>, Vec<f64>) {
    let orders = crate::engine::default_orders();
    let mut total = vec![0.0; orders.len()];
    for ph in phases {
        if let Ok(run) = Run::new(ph.guide(), ph.guide_steps(), &orders) {
            for (t, r) in total.iter_mut().zip(run.rdp_curve()) {
                *t += ph.guide_steps() as f64 * r;
            }
        }
    }
    (orders, total)
}

/// The order minimizing `f(α, composed RDP)` over a composed curve, and that minimum.
pub(super) fn best_of(
    (orders, total): &(Vec<f64>, Vec<f64>),
    f: impl Fn(f64, f64) -> f64,
) -> (f64, f64) {
    let mut best = (f64::INFINITY, 2.0);
    for (&a, &r) in orders.iter().zip(total) {
        let v = f(a, r);
        if v < best.0 {
            best = (v, a);
        }
    }
    best
}

/// RDP (improved conversion) ε at δ and its optimal order for the composed phases:
/// the starting point for the grid and the tilt, and an upper bound on the PLD's ε.
pub(super) fn rdp_epsilon(phases: &[Phase], delta: f64) -> (f64, f64) {
    let (e, a) = best_of(&rdp_total(phases), |a, r| {
        eps_from_rdp(r, a, delta, Conversion::Improved)
    });
    (e.max(0.0), a)
}

/// ln δ at ε by exact RDP over a composed curve, and its optimal order (the δ(ε)
/// query's starting tilt).
pub(super) fn rdp_ln_delta(curve: &(Vec<f64>, Vec<f64>), eps: f64) -> (f64, f64) {
    best_of(curve, |a, r| {
        ln_delta_from_rdp(r, a, eps, Conversion::Improved)
    })
}
