//! A certified upper bound on ε from Bernstein's inequality, for runs whose composed loss
//! is tiny and nearly Gaussian (tiny q, large σ): there the lattices' tilt runs away, while
//! the answer is far inside the absolute width rule.
//!
//! # The bound
//! For either pair, δ(ε) = E_P[(1 − e^{ε − L_T})₊] ≤ P(L_T > ε) for ε ≥ 0. Cut each step's
//! loss at b, L' = min(L, b): L_T > ε needs Σ L'_i > ε or some L_i > b, so
//! δ(ε) ≤ P(Σ L'_i > ε) + T·P(L > b). The L'_i are independent, bounded above
//! (L'_i − E L'_i ≤ M with M = b − ln(1 − q), as L ≥ ln(1 − q) for both pairs), so Bernstein's
//! inequality gives P(Σ (L'_i − E L'_i) ≥ t) ≤ exp(−t²/(2(Σ Var L'_i + M·t/3))). With
//! Var L' ≤ E[L'²] ≤ E[L²] and E L' ≤ E L:
//!   ε = Σ T·m + t,  t the root of t² = 2·ln(1/δ_B)·(Σ T·v + M·t/3),
//! is a certified upper bound at δ = δ_B + T·P(L > b), for any m ≥ E L, v ≥ E L².
//!
//! # The moments, in closed form
//! With Y = e^{(2x−1)/(2σ²)} (the likelihood ratio of N(1, σ²) to N(0, σ²)) and
//! χ = e^{1/σ²} − 1 = E_{N0}[(Y − 1)²], the loss is ln(1 + q(Y − 1)) (remove) or its
//! negative (add), and |ln(1 + u)| ≤ |u|/(1 − q) for u ≥ −q.
//! * Remove, x ∼ P = (1−q)N(0,σ²) + qN(1,σ²): E L = KL(P‖Q) ≤ ln(1 + χ²(P‖Q)) ≤ q²χ;
//!   E L² ≤ q²/(1−q)²·E_P[(Y−1)²] = q²/(1−q)²·((1−q)χ + q(e^{3/σ²} − 2e^{1/σ²} + 1))
//!   (E_{N1}[Y] = e^{1/σ²}, E_{N1}[Y²] = e^{3/σ²}). The cut b is the loss range's top at
//!   η = 1e-3·δ/T per step ([`super::discretize::loss_range`]).
//! * Add, x ∼ N(0, σ²), loss −ln(1 + q(Y − 1)) ≤ −ln(1 − q) = b (no cut needed):
//!   −ln(1 + u) ≤ −u + u²/(2(1 − q)²), and E_{N0}[Y − 1] = 0, so E L ≤ q²χ/(2(1−q)²);
//!   E L² ≤ q²χ/(1−q)².
//!
//! (Bernstein's inequality: e.g. Boucheron, Lugosi, Massart, "Concentration Inequalities",
//! OUP 2013, Thm. 2.10 and Cor. 2.11.)

use super::discretize::{loss_range, Direction};
use super::Phase;
use crate::engine::math::{exp_m1, ln, ln_1p};

/// The bound's upper ε at δ for the phases, the larger of the two directions (plain SGM
/// phases under add/remove adjacency only; None otherwise, or when a moment overflows).
pub(crate) fn epsilon(phases: &[Phase], delta: f64) -> Option<f64> {
    let r = epsilon_in(phases, delta, Direction::Remove)?;
    let a = epsilon_in(phases, delta, Direction::Add)?;
    Some(r.max(a))
}

/// The bound's upper ε at δ for one direction's pair.
pub(crate) fn epsilon_in(phases: &[Phase], delta: f64, dir: Direction) -> Option<f64> {
    if phases.is_empty() || !phases.iter().all(Phase::is_sgm) {
        return None;
    }
    let t_all: f64 = phases.iter().map(|p| p.steps as f64).sum();
    // The cut's share of δ: 1e-3 (remove only; the add loss is bounded).
    let eta = 1e-3 * delta / t_all;
    let delta_b = delta * (1.0 - 1e-3);
    {
        let (mut mean, mut var, mut reach) = (0.0f64, 0.0f64, 0.0f64);
        for p in phases {
            let (q, s) = (p.sgm.q(), p.sgm.sigma());
            let (t, w) = (p.steps as f64, (1.0 - q).powi(2));
            let chi = exp_m1(1.0 / (s * s));
            let floor = -ln_1p(-q);
            let (m, v, b) = match dir {
                Direction::Remove => {
                    let chi3 = exp_m1(3.0 / (s * s)) - 2.0 * chi;
                    let (_, hi) = loss_range(q, s, dir, eta);
                    (q * q * chi, q * q / w * ((1.0 - q) * chi + q * chi3), hi)
                }
                Direction::Add => (q * q * chi / (2.0 * w), q * q * chi / w, floor),
            };
            mean += t * m;
            var += t * v;
            reach = reach.max(b + floor);
        }
        let ln = -ln(delta_b);
        // t² = 2·ln·(var + reach·t/3): the positive root.
        let a = reach * ln / 3.0;
        let tt = a + (a * a + 2.0 * ln * var).sqrt();
        let eps = mean + tt;
        eps.is_finite().then_some(eps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::math::exp;
    use crate::engine::params::Sgm;

    /// The bound holds against the central limit where that is exact to its own accuracy
    /// (μ-GDP, μ = q·√(T·χ)): never below it, and within a factor of a few of it.
    #[test]
    fn the_bound_sits_above_the_gaussian_limit() {
        let phi = |x: f64| 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2);
        for (q, s, t, d) in [
            (1e-7, 600.0, 100_000_000u64, 1e-12),
            (3e-8, 30.0, 1_000_000_000, 1e-10),
            (1e-6, 50.0, 10_000_000, 1e-8),
        ] {
            let ph = [Phase::new(Sgm::new(q, s).unwrap(), t).unwrap()];
            let up = epsilon(&ph, d).unwrap();
            let mu = q * (t as f64 * exp_m1(1.0 / (s * s))).sqrt();
            let f = |e: f64| phi(-e / mu + mu / 2.0) - exp(e) * phi(-e / mu - mu / 2.0);
            // The limit's ε: bisection on its δ(ε).
            let (mut lo, mut hi) = (0.0, 1.0);
            for _ in 0..200 {
                let m = 0.5 * (lo + hi);
                if f(m) > d {
                    lo = m;
                } else {
                    hi = m;
                }
            }
            assert!(
                up >= hi,
                "q={q} s={s} T={t}: {up:e} below the limit's {hi:e}"
            );
            assert!(
                up <= 4.0 * hi + 1e-12,
                "q={q} s={s} T={t}: {up:e} against {hi:e}"
            );
        }
    }
}
