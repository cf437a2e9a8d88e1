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
//! ([`super::discretize`]): the loss thresholds ℓ_k map to sample-space boundaries (here
//! by bisection), and each bin's P- and Q-masses are sums of Gaussian interval masses,
//! every term nonnegative. Connect-the-dots and the contraction then give the certified
//! upper and the optimistic lower lattice as before. k = 1 is the SGM itself.

use super::discretize::{from_bins, lattice, z_of_tail, Direction, StepPld};
use super::gauss::{ln_add, ln_mass, Tails};

/// The mixture's log-weights ln w_j, j = 0..=k, and σ.
pub(crate) struct Mix {
    ln_w: Vec<f64>,
    sigma: f64,
}

impl Mix {
    pub(crate) fn new(q: f64, k: u32, sigma: f64) -> Mix {
        let (lq, l1q) = (q.ln(), (-q).ln_1p());
        let mut ln_choose = 0.0f64;
        let ln_w = (0..=k)
            .map(|j| {
                if j > 0 {
                    ln_choose += ((k - j + 1) as f64).ln() - (j as f64).ln();
                }
                let jf = j as f64;
                let kj = (k - j) as f64;
                // 0·ln 0 = 0 (q = 1 leaves only j = k).
                let a = if j == 0 { 0.0 } else { jf * lq };
                let b = if j == k { 0.0 } else { kj * l1q };
                ln_choose + a + b
            })
            .collect();
        Mix { ln_w, sigma }
    }

    /// The remove direction's loss at sample x.
    pub(crate) fn loss(&self, x: f64) -> f64 {
        let s2 = 2.0 * self.sigma * self.sigma;
        self.ln_w
            .iter()
            .enumerate()
            .map(|(j, &lw)| {
                let j = j as f64;
                lw + (2.0 * j * x - j * j) / s2
            })
            .fold(f64::NEG_INFINITY, ln_add)
    }

    /// The x with L(x) = ℓ (−∞ at or below the loss's infimum ln w_0, +∞ above every x).
    fn x_of_loss(&self, l: f64) -> f64 {
        if l <= self.ln_w[0] {
            return f64::NEG_INFINITY;
        }
        let k = (self.ln_w.len() - 1) as f64;
        let (mut lo, mut hi) = (-1.0f64, k + 1.0);
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
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if self.loss(mid) < l {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }

    /// Standardized tails of every component at x.
    fn tails(&self, x: f64) -> Vec<Tails> {
        (0..self.ln_w.len())
            .map(|j| Tails::at((x - j as f64) / self.sigma))
            .collect()
    }

    /// ln P and ln Q of a < x ≤ b (as tails), for the direction.
    fn masses(&self, dir: Direction, a: &[Tails], b: &[Tails]) -> (f64, f64) {
        let m0 = ln_mass(a[0], b[0]);
        let mix = self
            .ln_w
            .iter()
            .enumerate()
            .filter(|(_, &lw)| lw > f64::NEG_INFINITY)
            .map(|(j, &lw)| lw + ln_mass(a[j], b[j]))
            .fold(f64::NEG_INFINITY, ln_add);
        match dir {
            Direction::Remove => (mix, m0),
            Direction::Add => (m0, mix),
        }
    }
}

/// The loss range outside which P puts at most `eta` on each side.
pub(crate) fn loss_range(mix: &Mix, dir: Direction, eta: f64) -> (f64, f64) {
    let z = z_of_tail(eta);
    let s = mix.sigma;
    let k = (mix.ln_w.len() - 1) as f64;
    match dir {
        // x ∼ mixture of N(j, σ²), j ∈ [0, k].
        Direction::Remove => (mix.loss(-s * z), mix.loss(k + s * z)),
        // x ∼ N(0, σ²), loss −L(x).
        Direction::Add => (-mix.loss(s * z), -mix.loss(-s * z)),
    }
}

/// One step's lattice PLDs for the group pair.
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
        let total: f64 = m.ln_w.iter().map(|w| w.exp()).sum();
        assert!((total - 1.0).abs() < 1e-14);
        assert!((m.ln_w[2].exp() - 6.0 * 0.09 * 0.49).abs() < 1e-15);
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
        assert_eq!(m.x_of_loss(m.ln_w[0] - 1e-3), f64::NEG_INFINITY);
    }
}
