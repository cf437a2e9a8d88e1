//! A certified lower bound on ε from one linear test statistic, for plain SGM runs whose
//! per-step losses are far below any affordable lattice spacing (tiny q over very many
//! steps): there the lattices' lower measure merges a step's losses into a few points and
//! finds no lower bound above 0 (q = 1.8e-9, σ = 1.23, T = 7.3·10⁸, δ = 8e-8).
//!
//! # The bound
//! Post-processing cannot raise δ(ε), so for any statistic S of the T outputs,
//! δ(ε) ≥ δ_S(ε) = sup_t [P(S > t) − e^ε·Q(S > t)], and δ_S(ε) > δ certifies ε_true > ε.
//! Take S = Σ x_i / (σ√T) for the remove pair (P: each x_i ∼ (1 − q)N(0, σ²) + qN(1, σ²);
//! Q: x_i ∼ N(0, σ²)). Under Q, S ∼ N(0, 1); under P, given the number K ∼ Bin(T, q) of
//! steps that sampled the example, S ∼ N(Kτ, 1) with τ = 1/(σ√T). So
//!   P(S > t) = Σ_k Bin(k; T, q)·Φ̄(t − kτ),   Q(S > t) = Φ̄(t),
//! in closed form. Its likelihood ratio Σ_k w_k·e^{kτt − k²τ²/2} increases in t, so the
//! supremum is at the t where it equals e^ε (any other t only gives a smaller, still valid,
//! bound). In the central-limit regime the statistic's μ is q√T/σ against the pair's
//! q·√(T(e^{1/σ²} − 1)): the ratio 1/(σ√(e^{1/σ²} − 1)) is 0.84 at σ = 1.23 and → 1 as σ grows.
//!
//! # Rounding
//! Every term of P is taken low and of Q high: the binomial weights by their recurrence in
//! logs (each step's error ≤ 2e-14 absolute, so w_k's ≤ 3e-14·(k + 1) relative), each Φ̄
//! (libm's erfc, or the continued fraction beyond z = 35: [`super::gauss::ln_phi_bar`]) with a
//! relative margin of 1e-12, the sums with (K + 2)u. Weights not summed (the binomial's far
//! tail) are left out of P, which only lowers it.

use super::gauss::ln_phi_bar;
use crate::engine::math::{exp, ln, ln_1p};
use crate::engine::search::bisect;

/// The largest number of binomial terms summed (beyond it the bound is not tried: q·T large,
/// where the lattices resolve a step's losses anyway; with 20,000, q = 1.5e-5, σ = 94.6,
/// T = 8.3·10⁸ spent 0.6 s here). About 60 thresholds of ~50 steps each: ≲ 30 ms at the cap.
const MAX_TERMS: usize = 2_000;

/// ln Bin(k; T, q) for k = 0, 1, … until the terms fall below e^{−60} of the largest past
/// the mode (None when that needs more than MAX_TERMS).
fn ln_weights(q: f64, t: f64) -> Option<Vec<f64>> {
    let mut lw = vec![t * ln_1p(-q)];
    let odds = ln(q) - ln_1p(-q);
    let mode = (q * t).floor();
    loop {
        let k = (lw.len() - 1) as f64;
        if k >= t {
            break;
        }
        let next = lw[lw.len() - 1] + ln((t - k) / (k + 1.0)) + odds;
        let top = lw.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        if k > mode && next < top - 60.0 {
            break;
        }
        lw.push(next);
        if lw.len() > MAX_TERMS {
            return None;
        }
    }
    Some(lw)
}

/// A certified lower bound on δ_S(ε) at the threshold t (standardized), from the weights.
fn delta_at(lw: &[f64], tau: f64, eps: f64, t: f64) -> f64 {
    let n = lw.len() as f64;
    let p: f64 = lw
        .iter()
        .enumerate()
        .map(|(k, &l)| {
            let w = exp(l) * (1.0 - 3e-14 * (k + 1) as f64);
            w * exp(ln_phi_bar(t - k as f64 * tau))
        })
        .sum::<f64>()
        * (1.0 - 1e-12)
        * (1.0 - (n + 2.0) * f64::EPSILON);
    let q = exp(ln_phi_bar(t)) * (1.0 + 1e-12) * exp(eps) * (1.0 + 4.0 * f64::EPSILON);
    p - q
}

/// The threshold where the statistic's likelihood ratio is e^ε (bisection; any t is valid).
fn threshold(lw: &[f64], tau: f64, eps: f64) -> f64 {
    let ln_ratio = |t: f64| {
        let e = |k: usize| lw[k] + k as f64 * tau * t - 0.5 * (k as f64 * tau).powi(2);
        let top = (0..lw.len()).map(e).fold(f64::NEG_INFINITY, f64::max);
        top + ln((0..lw.len()).map(|k| exp(e(k) - top)).sum::<f64>())
    };
    let (lo, hi) = bisect(
        (-60.0, 60.0),
        |t| ln_ratio(t) < eps,
        60,
        |lo, hi| hi - lo <= 1e-12 * hi.abs().max(1.0),
    );
    0.5 * (lo + hi)
}

/// The largest ε ≤ `upper` (to a relative 1e-7) that the linear statistic certifies below
/// the true ε at δ, for `steps` steps of the SGM (q, σ) under add/remove adjacency; 0 when it
/// certifies none.
pub(crate) fn epsilon_lower(q: f64, sigma: f64, steps: u64, delta: f64, upper: f64) -> f64 {
    let t = steps as f64;
    if !(q > 0.0 && q < 1.0 && upper > 0.0) {
        return 0.0;
    }
    let Some(lw) = ln_weights(q, t) else {
        return 0.0;
    };
    let tau = 1.0 / (sigma * t.sqrt());
    let certifies = |eps: f64| delta_at(&lw, tau, eps, threshold(&lw, tau, eps)) > delta;
    if !certifies(0.0) {
        return 0.0;
    }
    if certifies(upper) {
        return upper;
    }
    bisect((0.0, upper), certifies, 60, |lo, hi| hi - lo <= 1e-7 * hi).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::math::exp_m1;

    /// q = 1 would make S exactly the Gaussian mechanism's statistic; at q near 1 over one
    /// step the bound must sit just below the Gaussian mechanism's exact ε (Balle & Wang), and
    /// for a tiny-q run near the central limit's (μ-GDP) ε times the statistic's share of μ.
    #[test]
    fn the_bound_sits_below_the_exact_and_near_the_limit() {
        // One step, q = 1 − 1e-12: the pair is the Gaussian mechanism up to 1e-12 of mass.
        let mu = 1.0 / 0.8;
        let exact = super::super::gauss::epsilon_bracket(mu, 1e-5);
        let low = epsilon_lower(1.0 - 1e-12, 0.8, 1, 1e-5, 10.0);
        assert!(
            low <= exact.upper && low >= 0.999 * exact.lower,
            "{low} vs {exact:?}"
        );
        // Tiny q, many steps, large σ: the statistic is nearly optimal; the central limit's
        // ε at μ = q·√(T·(e^{1/σ²} − 1)).
        let (q, s, t, d) = (2e-7, 40.0f64, 400_000_000u64, 1e-9);
        let mu = q * (t as f64 * exp_m1(1.0 / (s * s))).sqrt();
        let limit = super::super::gauss::epsilon_bracket(mu, d);
        let low = epsilon_lower(q, s, t, d, 1.0);
        assert!(
            low > 0.9 * limit.lower && low < 1.01 * limit.upper,
            "{low} vs {limit:?}"
        );
    }
}
