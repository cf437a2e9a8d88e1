//! Truncated Poisson sampling: each of N examples is sampled with rate q, and when more
//! than B are sampled a uniformly random B of them form the batch (jax-privacy's
//! truncated Poisson; dp_accounting's `TruncatedSubsampledGaussianDpEvent`).
//!
//! # Upper bound (certified)
//! Remove direction, D = D' ∪ {x*}. Let K ~ Bin(N − 1, q) count the other examples
//! sampled; reveal to the adversary whether K ≥ B (revealing only helps it, and the event
//! has the same law under D and D').
//! * K < B (probability 1 − p_t): no truncation under D'; under D x* joins the batch with
//!   probability q — the SGM's remove pair at (q, σ).
//! * K ≥ B (probability p_t = P(Bin(N−1, q) ≥ B)): D' takes a random B-subset U of the
//!   others; under D, x* is in the batch with probability q·B/(K + 1), and then the batch
//!   is U with one uniformly chosen member u swapped for x* (a coupling with the same
//!   law), so the sum moves by g(x*) − g(u), norm ≤ 2C. Given U and u the pair is
//!   (1 − c)N(0, σ²) + c·N(v, σ²) against N(0, σ²), ‖v‖ ≤ 2, with
//!   c = E[qB/(K+1) | K ≥ B] = B·P(Bin(N, q) ≥ B + 1)/(N·p_t) (the law of K given U does
//!   not depend on U); its worst case is the SGM's remove pair at (c, σ/2).
//!
//! The add direction is the reverse of each branch. So each step's PLD is the mixture
//! (1 − p_t)·PLD_SGM(q, σ) + p_t·PLD_SGM(c, σ/2), per direction — a certified upper bound
//! after the same discretization and composition as everywhere else. dp_accounting's
//! `from_truncated_subsampled_gaussian_mechanism` uses the same split (its docs; Ganesh,
//! arXiv 2508.15089) with a replace-one pair for the second branch, which covers both
//! directions at once and is looser.
//!
//! # Lower bound (certified)
//! The datasets where every other example has gradient 0: the offset is 0 in both
//! branches and x* moves the sum by g(x*) whenever it is in the batch, which happens with
//! probability q_in = q·(1 − p_t) + p_t·c. That pair is exactly the SGM at (q_in, σ), so
//! its lower bound is a lower bound on the mechanism's ε.
//!
//! B ≥ N (never truncated) is Poisson sampling itself.

use super::discretize::StepPld;
use super::gauss::ln_add;
use crate::engine::math::{exp, ln, ln_1p};

/// The mixture wa·a + wb·b of two lattice PLDs on one spacing (the branch revealed):
/// every part — the lattice masses on both sides and the mass at +∞ — mixes alike.
pub(crate) fn mix_steps(a: &StepPld, wa: f64, b: &StepPld, wb: f64) -> StepPld {
    let k_lo = a.k_lo.min(b.k_lo);
    let end = (a.k_lo + a.ln_up.len() as i64).max(b.k_lo + b.ln_up.len() as i64);
    let len = (end - k_lo) as usize;
    let (la, lb) = (ln(wa), ln(wb));
    let mut ln_up = vec![f64::NEG_INFINITY; len];
    let mut ln_lo = vec![f64::NEG_INFINITY; len];
    for (s, lw) in [(a, la), (b, lb)] {
        let off = (s.k_lo - k_lo) as usize;
        for (i, (&u, &l)) in s.ln_up.iter().zip(&s.ln_lo).enumerate() {
            ln_up[off + i] = ln_add(ln_up[off + i], lw + u);
            ln_lo[off + i] = ln_add(ln_lo[off + i], lw + l);
        }
    }
    StepPld {
        k_lo,
        ln_up,
        ln_inf: ln_add(la + a.ln_inf, lb + b.ln_inf),
        ln_lo,
        tail: None,
    }
}

/// The branch weights of one truncated-Poisson step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Trunc {
    /// P(Bin(N − 1, q) ≥ B): the others already fill the batch.
    pub p_trunc: f64,
    /// E[qB/(K + 1) | K ≥ B]: x*'s chance to be in a truncated batch.
    pub rate: f64,
}

impl Trunc {
    /// None when the batch can never be truncated (B ≥ N, or q = 0).
    pub(crate) fn new(q: f64, n: u64, b: u64) -> Option<Trunc> {
        if b >= n || q == 0.0 {
            return None;
        }
        let p_trunc = binom_sf(n - 1, q, b);
        if p_trunc <= 0.0 {
            return None;
        }
        let rate = (b as f64 * binom_sf(n, q, b + 1) / (n as f64 * p_trunc)).min(q);
        Some(Trunc { p_trunc, rate })
    }
}

/// P(Bin(n, p) ≥ k), summed in log space from the side where the terms fall away
/// from the mode (relative accuracy ~1e-13; every term from ln Γ once, then the ratio
/// recurrence).
pub(crate) fn binom_sf(n: u64, p: f64, k: u64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let (nf, lp, l1p) = (n as f64, ln(p), ln_1p(-p));
    let ln_pmf = |j: f64| {
        libm::lgamma(nf + 1.0) - libm::lgamma(j + 1.0) - libm::lgamma(nf - j + 1.0)
            + j * lp
            + (nf - j) * l1p
    };
    let ln_ratio = lp - l1p; // pmf(j+1)/pmf(j) = (n−j)/(j+1)·p/(1−p)
    let mean = nf * p;
    // Sum the tail that does not contain the mode, then complement if needed.
    let upper_tail = k as f64 >= mean;
    let (start, sign) = if upper_tail {
        (k, 1i64)
    } else {
        (k - 1, -1i64)
    };
    let mut j = start as f64;
    let mut ln_term = ln_pmf(j);
    let mut ln_sum = ln_term;
    loop {
        let next = j + sign as f64;
        if next < 0.0 || next > nf {
            break;
        }
        ln_term += if sign > 0 {
            ln((nf - j) / (j + 1.0)) + ln_ratio
        } else {
            ln(j / (nf - j + 1.0)) - ln_ratio
        };
        j = next;
        ln_sum = ln_add(ln_sum, ln_term);
        if ln_term < ln_sum - 40.0 {
            break;
        }
    }
    let s = exp(ln_sum);
    if upper_tail {
        s.min(1.0)
    } else {
        (1.0 - s).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: the binomial tail as a direct sum of C(n, j)p^j(1−p)^{n−j}.
    fn direct(n: u64, p: f64, k: u64) -> f64 {
        let mut c = 1.0f64;
        let mut s = 0.0;
        for j in 0..=n {
            if j > 0 {
                c *= (n - j + 1) as f64 / j as f64;
            }
            if j >= k {
                s += c * p.powi(j as i32) * (1.0 - p).powi((n - j) as i32);
            }
        }
        s
    }

    #[test]
    fn binomial_tails_match_the_direct_sum() {
        for &(n, p, k) in &[
            (3u64, 0.5, 2u64),
            (4, 0.5, 3),
            (40, 0.1, 2),
            (40, 0.1, 9),
            (60, 0.3, 18),
            (60, 0.3, 30),
            (100, 0.01, 1),
        ] {
            let (a, b) = (binom_sf(n, p, k), direct(n, p, k));
            assert!(
                (a - b).abs() <= 1e-12 * b.max(1e-300) + 1e-15,
                "{n} {p} {k}: {a} {b}"
            );
        }
        assert_eq!(binom_sf(10, 0.2, 0), 1.0);
        assert_eq!(binom_sf(10, 0.2, 11), 0.0);
    }

    #[test]
    fn branch_weights_of_dp_accountings_test_case() {
        // N = 4, q = 1/2, B = 2: K ~ Bin(3, ½), P(K ≥ 2) = ½; c = 2·P(Bin(4, ½) ≥ 3)/(4·½) = 5/16.
        let t = Trunc::new(0.5, 4, 2).unwrap();
        assert!(
            (t.p_trunc - 0.5).abs() < 1e-14 && (t.rate - 0.3125).abs() < 1e-14,
            "{t:?}"
        );
        assert!(Trunc::new(0.5, 4, 4).is_none());
    }
}
