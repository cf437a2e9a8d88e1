//! User-level (group) privacy: one user contributes k examples, each sampled
//! independently with rate q, each clipped to norm C, so the user's summed contribution has
//! norm at most j·C when j of them are in the batch. The worst case is the
//! mixture-of-Gaussians pair (Ganesh, "Tight Group-Level DP Guarantees for DP-SGD with
//! Sampling via Mixture of Gaussians Mechanisms", arXiv 2401.10294):
//! * remove: P = Σ_j w_j·N(j, σ²) against Q = N(0, σ²), w_j = C(k, j)·q^j·(1 − q)^{k−j};
//! * add: the reverse.
//!
//! Its privacy loss L(x) = ln Σ_j w_j·e^{(2jx − j²)/(2σ²)} is increasing in the sample x
//! (every term is), so the lattice PLDs are built exactly as for one example
//! (`super::discretize`): the loss thresholds ℓ_k map to sample-space boundaries (here
//! by bisection), and each bin's P- and Q-masses are sums of Gaussian interval masses,
//! every term nonnegative. Connect-the-dots and the contraction then give the certified
//! upper and the optimistic lower lattice as before. k = 1 is the SGM itself.

use super::discretize::{from_bins, lattice, z_of_tail, Direction, StepPld};
use super::gauss::{ln_add, ln_mass, Tails};
use crate::engine::math::{exp, ln, ln_1p};

/// A pair of Gaussian mixtures with one σ: P = Σ w_j·N(a_j, σ²) against
/// Q = Σ v_j·N(b_j, σ²) (the remove direction; add is the reverse). Every pair built
/// here has a loss increasing in the sample (each of P's terms e^{(2ax − a²)/(2σ²)} has
/// a ≥ 0 and each of Q's has b ≤ 0), which the lattice construction needs.
pub(crate) struct Mix {
    /// (ln weight, mean) of P's and Q's components.
    p: Vec<(f64, f64)>,
    q: Vec<(f64, f64)>,
    sigma: f64,
}

/// ln C(k, j) + j ln q + (k − j) ln(1 − q) for j = 0..=k (0·ln 0 = 0 at q = 1).
fn binomial(q: f64, k: u32) -> Vec<f64> {
    let (lq, l1q) = (ln(q), ln_1p(-q));
    let mut ln_choose = 0.0f64;
    (0..=k)
        .map(|j| {
            if j > 0 {
                ln_choose += ln((k - j + 1) as f64) - ln(j as f64);
            }
            let a = if j == 0 { 0.0 } else { j as f64 * lq };
            let b = if j == k { 0.0 } else { (k - j) as f64 * l1q };
            ln_choose + a + b
        })
        .collect()
}

impl Mix {
    /// k examples of one user under add/remove: Σ_j w_j·N(j, σ²) against N(0, σ²).
    pub(crate) fn new(q: f64, k: u32, sigma: f64) -> Mix {
        let p = binomial(q, k)
            .into_iter()
            .enumerate()
            .map(|(j, w)| (w, j as f64))
            .collect();
        Mix {
            p,
            q: vec![(0.0, 0.0)],
            sigma,
        }
    }

    /// k examples of one user under replace-one: each sampled example's clipped gradient
    /// (norm ≤ C) is replaced by its opposite, so j sampled examples move the sum by +j
    /// against −j: Σ_j w_j·N(j, σ²) against Σ_j w_j·N(−j, σ²). For k = 1 this is
    /// dp_accounting's REPLACE pair of the subsampled Gaussian (its
    /// `privacy_loss_mechanism` docs); at q = 1 it is the Gaussian with sensitivity 2.
    pub(crate) fn replace_one(q: f64, k: u32, sigma: f64) -> Mix {
        let w = binomial(q, k);
        let side = |sign: f64| {
            w.iter()
                .enumerate()
                .map(|(j, &lw)| (lw, sign * j as f64))
                .collect()
        };
        Mix {
            p: side(1.0),
            q: side(-1.0),
            sigma,
        }
    }

    /// ln Σ w·e^{(2ax − a²)/(2σ²)}: a mixture's density over N(0, σ²)'s at x, with its
    /// derivative in x (the terms' weighted mean of 2a/s2). One pass of exps after the
    /// largest exponent (a log-sum-exp), not a log1p per term: the user-level lattices call
    /// it for every bisection step of every lattice point (P2 at K = 10 spent 70 % of its
    /// time in exp and log1p here).
    fn ln_ratio_d(parts: &[(f64, f64)], s2: f64, x: f64) -> (f64, f64) {
        let term = |&(lw, a): &(f64, f64)| lw + (2.0 * a * x - a * a) / s2;
        let live = || parts.iter().filter(|(lw, _)| *lw > f64::NEG_INFINITY);
        let top = live().map(term).fold(f64::NEG_INFINITY, f64::max);
        if top == f64::NEG_INFINITY || top.is_nan() {
            return (top, 0.0);
        }
        let (mut sum, mut slope) = (0.0f64, 0.0f64);
        for p in live() {
            let e = exp(term(p) - top);
            sum += e;
            slope += e * 2.0 * p.1 / s2;
        }
        (top + ln(sum), slope / sum)
    }

    /// ln Σ w·e^{(2ax − a²)/(2σ²)} ([`Mix::ln_ratio_d`] without the derivative).
    fn ln_ratio(parts: &[(f64, f64)], s2: f64, x: f64) -> f64 {
        Self::ln_ratio_d(parts, s2, x).0
    }

    /// How many Gaussian components carry weight (P's and Q's): each lattice point costs
    /// a bisection and a tail pair per component, where one example's SGM pair has 2.
    pub(crate) fn components(&self) -> usize {
        self.p
            .iter()
            .chain(&self.q)
            .filter(|(lw, _)| *lw > f64::NEG_INFINITY)
            .count()
    }

    /// The remove direction's loss at sample x.
    pub(crate) fn loss(&self, x: f64) -> f64 {
        let s2 = 2.0 * self.sigma * self.sigma;
        Self::ln_ratio(&self.p, s2, x) - Self::ln_ratio(&self.q, s2, x)
    }

    /// Smallest and largest mean with positive weight.
    fn means(parts: &[(f64, f64)]) -> (f64, f64) {
        parts
            .iter()
            .filter(|(lw, _)| *lw > f64::NEG_INFINITY)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(_, a)| {
                (lo.min(a), hi.max(a))
            })
    }

    /// ln of the mixture's mass above x (`upper`) or below it: ln Σ w·Φ̄(±(x − a)/σ).
    fn ln_tail(parts: &[(f64, f64)], sigma: f64, x: f64, upper: bool) -> f64 {
        let sign = if upper { 1.0 } else { -1.0 };
        parts
            .iter()
            .filter(|(lw, _)| *lw > f64::NEG_INFINITY)
            .map(|&(lw, a)| lw + super::gauss::ln_phi_bar(sign * (x - a) / sigma))
            .fold(f64::NEG_INFINITY, ln_add)
    }

    /// An x beyond which (above it if `upper`, else below) the mixture puts at most `eta`:
    /// bisection between the nearest and the farthest mean widened by one component's
    /// `eta`-quantile z (there the mass is at most Σw·Φ̄(z) = `eta`), ending on the side
    /// whose tail is ≤ `eta`.
    fn quantile(parts: &[(f64, f64)], sigma: f64, eta: f64, upper: bool) -> f64 {
        let (lo_m, hi_m) = Self::means(parts);
        let z = z_of_tail(eta);
        let target = ln(eta);
        // `inner` may have a tail above eta; `outer` has one at most eta.
        let (mut inner, mut outer) = if upper {
            (lo_m, hi_m + sigma * z)
        } else {
            (hi_m, lo_m - sigma * z)
        };
        for _ in 0..200 {
            let mid = 0.5 * (inner + outer);
            if mid == inner || mid == outer {
                break;
            }
            if Self::ln_tail(parts, sigma, mid, upper) <= target {
                outer = mid;
            } else {
                inner = mid;
            }
        }
        outer
    }

    /// The x with L(x) = ℓ: −∞ when ℓ is at or below the loss far left, +∞ when above it
    /// far right (bisection on the increasing loss).
    fn x_of_loss(&self, l: f64) -> f64 {
        let (lo_p, hi_p) = Self::means(&self.p);
        let (lo_q, hi_q) = Self::means(&self.q);
        let (mut lo, mut hi) = (lo_p.min(lo_q) - 1.0, hi_p.max(hi_q) + 1.0);
        while self.loss(lo) >= l {
            lo = 2.0 * lo - 1.0;
            if lo < -1e12 {
                return f64::NEG_INFINITY;
            }
        }
        while self.loss(hi) < l {
            hi = 2.0 * hi + 1.0;
            if hi > 1e12 {
                return f64::INFINITY;
            }
        }
        // Newton's steps on the increasing, smooth loss, kept inside the bracket (a step that
        // leaves it, or does not halve it, is a bisection step instead); ends where the
        // bracket can no longer shrink, as plain bisection did, in a few steps where bisection
        // took ~60.
        let s2 = 2.0 * self.sigma * self.sigma;
        let mut x = 0.5 * (lo + hi);
        for _ in 0..200 {
            let (p, dp) = Self::ln_ratio_d(&self.p, s2, x);
            let (q, dq) = Self::ln_ratio_d(&self.q, s2, x);
            let f = p - q - l;
            if f < 0.0 {
                lo = x;
            } else {
                hi = x;
            }
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            let step = f / (dp - dq);
            // Converged: Newton's next step would not move x (checked before moving, so the
            // point returned is the one whose loss was read).
            if f == 0.0 || step.abs() <= 2.0 * f64::EPSILON * x.abs().max(1e-300) {
                break;
            }
            let newton = x - step;
            x = if newton > lo && newton < hi && step.abs() < 0.5 * (hi - lo) {
                newton
            } else {
                mid
            };
        }
        x
    }

    /// Standardized tails of every component (P's, then Q's) at x.
    fn tails(&self, x: f64) -> Vec<Tails> {
        self.p
            .iter()
            .chain(&self.q)
            .map(|&(_, a)| Tails::at((x - a) / self.sigma))
            .collect()
    }

    /// ln P and ln Q of a < x ≤ b (as tails), for the direction: sums of nonnegative
    /// Gaussian interval masses.
    fn masses(&self, dir: Direction, a: &[Tails], b: &[Tails]) -> (f64, f64) {
        let n = self.p.len();
        let side = |parts: &[(f64, f64)], off: usize| {
            parts
                .iter()
                .enumerate()
                .filter(|(_, (lw, _))| *lw > f64::NEG_INFINITY)
                .map(|(j, &(lw, _))| lw + ln_mass(a[off + j], b[off + j]))
                .fold(f64::NEG_INFINITY, ln_add)
        };
        let (mp, mq) = (side(&self.p, 0), side(&self.q, n));
        match dir {
            Direction::Remove => (mp, mq),
            Direction::Add => (mq, mp),
        }
    }
}

/// The loss range outside which the direction's P puts at most `eta` on each side.
///
/// The ends are the mixture's own `eta`-quantiles in the sample (by bisection on its tail,
/// [`Mix::quantile`]), not its extreme means widened by one component's quantile: a user's
/// k examples all in one batch weigh q^k (1e-40 at q = 1e-4, k = 10), and the extreme
/// mean made P2's K = 10 range 19 times as long as the mass it has to hold.
pub(crate) fn loss_range(mix: &Mix, dir: Direction, eta: f64) -> (f64, f64) {
    match dir {
        // x ∼ P's mixture, loss L(x).
        Direction::Remove => (
            mix.loss(Mix::quantile(&mix.p, mix.sigma, eta, false)),
            mix.loss(Mix::quantile(&mix.p, mix.sigma, eta, true)),
        ),
        // x ∼ Q's mixture, loss −L(x).
        Direction::Add => (
            -mix.loss(Mix::quantile(&mix.q, mix.sigma, eta, true)),
            -mix.loss(Mix::quantile(&mix.q, mix.sigma, eta, false)),
        ),
    }
}

/// One step's lattice PLDs for a mixture pair.
pub(crate) fn step_pld(mix: &Mix, dir: Direction, d: f64, lo: f64, hi: f64) -> StepPld {
    let (k_lo, len) = lattice(d, lo, hi);
    let x_at = |k: i64| {
        let l = k as f64 * d;
        match dir {
            Direction::Remove => mix.x_of_loss(l),
            Direction::Add => mix.x_of_loss(-l),
        }
    };
    let bounds: Vec<Vec<Tails>> = (0..len).map(|i| mix.tails(x_at(k_lo + i as i64))).collect();
    let far_lo = mix.tails(f64::NEG_INFINITY);
    let far_hi = mix.tails(f64::INFINITY);
    let bin = |a: &[Tails], b: &[Tails]| match dir {
        Direction::Remove => mix.masses(dir, a, b),
        Direction::Add => mix.masses(dir, b, a),
    };
    let (left_p, right_p) = match dir {
        Direction::Remove => (bin(&far_lo, &bounds[0]).0, bin(&bounds[len - 1], &far_hi).0),
        Direction::Add => (bin(&far_hi, &bounds[0]).0, bin(&bounds[len - 1], &far_lo).0),
    };
    from_bins(
        d,
        k_lo,
        len,
        |i| bin(&bounds[i], &bounds[i + 1]),
        left_p,
        right_p,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_the_binomial_and_k_one_is_the_sgm() {
        let m = Mix::new(0.3, 4, 1.0);
        let total: f64 = m.p.iter().map(|w| exp(w.0)).sum();
        assert!((total - 1.0).abs() < 1e-14);
        assert!((exp(m.p[2].0) - 6.0 * 0.09 * 0.49).abs() < 1e-15);
        let one = Mix::new(0.01, 1, 0.8);
        for &x in &[-3.0, 0.0, 0.5, 2.0, 9.0] {
            let (a, b) = (
                one.loss(x),
                super::super::discretize::loss_remove(0.01, 0.8, x),
            );
            assert!((a - b).abs() < 1e-12 * b.abs().max(1e-3), "{x}: {a} {b}");
        }
    }

    #[test]
    fn the_sample_of_a_loss_inverts_the_loss() {
        let m = Mix::new(0.05, 3, 1.3);
        for &x in &[-4.0, -1.0, 0.3, 1.7, 6.0] {
            let back = m.x_of_loss(m.loss(x));
            assert!((back - x).abs() < 1e-9, "{x}: {back}");
        }
        assert_eq!(m.x_of_loss(m.p[0].0 - 1e-3), f64::NEG_INFINITY);
        let r = Mix::replace_one(0.05, 1, 0.9);
        for &x in &[-6.0, -1.0, 0.0, 0.3, 1.7, 6.0] {
            let back = r.x_of_loss(r.loss(x));
            assert!((back - x).abs() < 1e-9, "{x}: {back}");
        }
    }

    #[test]
    fn replace_one_is_symmetric_and_at_q_one_the_gaussian_with_sensitivity_two() {
        let r = Mix::replace_one(0.2, 1, 1.1);
        for &x in &[-3.0, -0.4, 0.0, 0.9, 5.0] {
            assert!((r.loss(x) + r.loss(-x)).abs() < 1e-12, "{x}");
            // By hand: ln((0.8 + 0.2e^{(2x−1)/2σ²}) / (0.8 + 0.2e^{(−2x−1)/2σ²})).
            let s2 = 2.0 * 1.1f64 * 1.1;
            let want = ln(0.8 + 0.2 * exp((2.0 * x - 1.0) / s2))
                - ln(0.8 + 0.2 * exp((-2.0 * x - 1.0) / s2));
            assert!((r.loss(x) - want).abs() < 1e-12, "{x}");
        }
        let g = Mix::replace_one(1.0, 1, 0.7);
        for &x in &[-2.0, 0.3, 4.0] {
            // N(1, σ²) against N(−1, σ²): L = 2x/σ².
            assert!((g.loss(x) - 2.0 * x / 0.49).abs() < 1e-12, "{x}");
        }
    }
}
