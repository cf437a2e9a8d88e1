//! Fixed-size batches drawn without replacement (each step a uniformly random B of the N
//! examples), under replace-one adjacency: an RDP upper bound only.
//!
//! Wang, Balle, Kasiviswanathan, "Subsampled Rényi Differential Privacy and Analytical
//! Moments Accountant" (AISTATS 2019), Theorem 9: for a mechanism with RDP ε(·) and
//! sampling ratio γ = B/N, at integer α ≥ 2,
//!
//! ε'(α) ≤ 1/(α−1)·ln(1 + γ²·C(α,2)·min{4(e^{ε(2)} − 1), e^{ε(2)}·min{2, (e^{ε(∞)} − 1)²}}
//!                   + Σ_{j=3}^{α} γ^j·C(α,j)·e^{(j−1)ε(j)}·min{2, (e^{ε(∞)} − 1)^j}).
//!
//! For the Gaussian mechanism ε(∞) = ∞, so both inner minima are 2. Their Theorem 27
//! sharpens the j ≥ 3 terms for the subsampled Gaussian: the factor 2·e^{(j−1)ε(j)} may be
//! replaced by 4·√(Δ^{2⌊j/2⌋}φ·Δ^{2⌈j/2⌉}φ), Δ^m φ the m-th forward difference of
//! φ(x) = e^{x(x+1)/(2σ'²)} taken from x = −1 (σ' = σ/2, see below); we use the smaller
//! of the two. The forward differences are alternating sums: we evaluate them in f64 with
//! an explicit bound on the rounding (every term's relative error, and the summation's)
//! and use their certified upper end, so where the sum cancels too much the bound simply
//! falls back to Theorem 9's term. Under replace-one the
//! clipped sum moves by up to 2C, so with σ the noise multiplier (noise std / C, as
//! everywhere here) ε(j) = j·(2C)²/(2σ²C²) = 2j/σ² — dp_accounting's
//! `SampledWithoutReplacementDpEvent(N, B, GaussianDpEvent(σ/2))` under `REPLACE_ONE`
//! (its RDP path does not double the sensitivity; its PLD path does). Non-integer orders
//! take the linear interpolation of (α−1)·ε'(α) between the neighbouring integers (the
//! cumulant generating function is convex: Wang et al., Corollary 10); below α = 2 it
//! interpolates from (α−1)·ε'(α) = 0 at α = 1. Orders above 10⁴ are not offered (the sum
//! has α terms).

use super::accountant::{eps_from_rdp, ln_delta_from_rdp, Conversion};
use super::error::Error;
use super::params::{check_delta, check_epsilon, check_order, check_steps};
use super::pld::gauss::ln_add;
use crate::engine::math::{exp, exp_m1, ln};

/// Largest order this bound is evaluated at (α terms per order).
pub const MAX_ORDER: f64 = 10_000.0;

/// ln Γ-based ln C(n, k).
fn ln_choose(n: f64, k: f64) -> f64 {
    libm::lgamma(n + 1.0) - libm::lgamma(k + 1.0) - libm::lgamma(n - k + 1.0)
}

/// A certified upper bound on ln|Δ^m φ(−1)|, φ(x) = e^{c·x(x+1)}:
/// Δ^m φ(−1) = Σ_{k=0}^{m} (−1)^{m−k}·C(m, k)·φ(k − 1), summed relative to its largest
/// term, plus the rounding bound (each term's exponent is good to ~|L|·2⁻⁵⁰ absolute,
/// so the term to that relative error; the summation adds m·2⁻⁵² of Σ|terms|).
fn ln_forward_diff_upper(c: f64, m: u64) -> f64 {
    let mf = m as f64;
    let logs: Vec<f64> = (0..=m)
        .map(|k| {
            let k = k as f64;
            ln_choose(mf, k) + c * (k - 1.0) * k
        })
        .collect();
    let top = logs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let (mut sum, mut abs) = (0.0f64, 0.0f64);
    for (k, &l) in logs.iter().enumerate() {
        let t = exp(l - top);
        abs += t;
        if (m - k as u64).is_multiple_of(2) {
            sum += t;
        } else {
            sum -= t;
        }
    }
    let rel = (top.abs() + logs.len() as f64 + 64.0) * f64::EPSILON * 4.0;
    top + ln(sum.abs() + abs * rel)
}

/// (α − 1)·ε'(α) at integer α ≥ 2: the bound's logarithm.
fn ln_moment(gamma: f64, sigma: f64, alpha: u64) -> f64 {
    let e = |j: f64| 2.0 * j / (sigma * sigma); // ε(j) of the Gaussian, sensitivity 2C
    let a = alpha as f64;
    let lg = ln(gamma);
    let e2 = e(2.0);
    // min{4(e^{ε(2)} − 1), 2e^{ε(2)}} in logs.
    let first = (ln(4.0f64) + e2 + ln(-exp_m1(-e2))).min(ln(2.0f64) + e2);
    let mut s = ln_add(0.0, 2.0 * lg + ln_choose(a, 2.0) + first);
    // Theorem 27's forward differences, for the orders where they are affordable.
    let c = 2.0 / (sigma * sigma); // 1/(2σ'²) with σ' = σ/2
    let diffs: Vec<f64> = if alpha <= 256 {
        (0..=alpha + 1)
            .map(|m| {
                if m.is_multiple_of(2) {
                    ln_forward_diff_upper(c, m)
                } else {
                    f64::INFINITY
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    for j in 3..=alpha {
        let jf = j as f64;
        let mut term = ln(2.0f64) + (jf - 1.0) * e(jf);
        if let (Some(lo), Some(hi)) = (
            diffs.get((2 * (j / 2)) as usize),
            diffs.get((2 * j.div_ceil(2)) as usize),
        ) {
            term = term.min(ln(4.0f64) + 0.5 * (lo + hi));
        }
        s = ln_add(s, term + jf * lg + ln_choose(a, jf));
    }
    s
}

/// RDP of one fixed-size step (B of N, replace-one) at order α (per step, upper bound).
pub fn rdp(dataset_size: u64, batch_size: u64, sigma: f64, alpha: f64) -> Result<f64, Error> {
    let sgm = super::Sgm::new(1.0, sigma)?;
    if dataset_size == 0 || batch_size == 0 || batch_size > dataset_size {
        return Err(Error::BatchSize {
            batch: batch_size as f64,
            dataset: dataset_size as f64,
        });
    }
    let alpha = check_order(alpha)?;
    if alpha > MAX_ORDER {
        return Err(Error::Order(alpha));
    }
    let gamma = batch_size as f64 / dataset_size as f64;
    let sigma = sgm.sigma();
    if gamma == 1.0 {
        // Every example in every batch: the Gaussian mechanism itself.
        return Ok(2.0 * alpha / (sigma * sigma));
    }
    let k = |a: f64| -> f64 {
        if a < 2.0 {
            0.0
        } else {
            ln_moment(gamma, sigma, a as u64)
        }
    };
    let (lo, hi) = (alpha.floor().max(1.0), alpha.ceil().max(2.0));
    let cgf = if alpha == lo && alpha >= 2.0 {
        k(alpha)
    } else {
        let t = (alpha - lo) / (hi - lo);
        (1.0 - t) * k(lo) + t * k(hi)
    };
    Ok(cgf / (alpha - 1.0))
}

/// The minimum of `f(order, composed RDP)` over `orders` (those above [`MAX_ORDER`]
/// skipped): (the minimum, its order).
fn best_over(
    dataset_size: u64,
    batch_size: u64,
    sigma: f64,
    steps: u64,
    orders: &[f64],
    f: impl Fn(f64, f64) -> f64,
) -> Result<(f64, f64), Error> {
    let steps = check_steps(steps)?;
    let mut best = (f64::INFINITY, f64::NAN);
    for &a in orders.iter().filter(|&&a| a <= MAX_ORDER) {
        let v = f(a, steps as f64 * rdp(dataset_size, batch_size, sigma, a)?);
        if v < best.0 {
            best = (v, a);
        }
    }
    if best.1.is_nan() {
        return Err(Error::NoOrders);
    }
    Ok(best)
}

/// ε at δ after `steps` fixed-size steps: the improved conversion minimized over
/// `orders`: (ε, its order).
pub fn epsilon(
    dataset_size: u64,
    batch_size: u64,
    sigma: f64,
    steps: u64,
    delta: f64,
    orders: &[f64],
) -> Result<(f64, f64), Error> {
    let delta = check_delta(delta)?;
    let (e, a) = best_over(dataset_size, batch_size, sigma, steps, orders, |a, r| {
        eps_from_rdp(r, a, delta, Conversion::Improved)
    })?;
    Ok((e.max(0.0), a))
}

/// δ at ε after `steps` fixed-size steps (improved conversion): (δ, its order).
pub fn delta(
    dataset_size: u64,
    batch_size: u64,
    sigma: f64,
    steps: u64,
    eps: f64,
    orders: &[f64],
) -> Result<(f64, f64), Error> {
    let eps = check_epsilon(eps)?;
    let (l, a) = best_over(dataset_size, batch_size, sigma, steps, orders, |a, r| {
        ln_delta_from_rdp(r, a, eps, Conversion::Improved)
    })?;
    Ok((exp(l).min(1.0), a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_two_by_hand_and_the_whole_batch_is_the_gaussian() {
        // α = 2: ln(1 + γ²·min{4(e^{ε(2)} − 1), 2e^{ε(2)}}), ε(2) = 4/σ².
        let (g, s) = (0.01f64, 2.0f64);
        let e2 = 4.0 / (s * s);
        let want = ln(1.0 + g * g * (4.0 * exp_m1(e2)).min(2.0 * exp(e2)));
        let got = rdp(1000, 10, s, 2.0).unwrap();
        assert!((got - want).abs() < 1e-15, "{got} {want}");
        assert_eq!(rdp(50, 50, 1.5, 7.0).unwrap(), 2.0 * 7.0 / 2.25);
        // Interpolated orders sit between their neighbours' moments.
        let (a, b, m) = (
            rdp(1000, 10, s, 3.0).unwrap() * 2.0,
            rdp(1000, 10, s, 4.0).unwrap() * 3.0,
            rdp(1000, 10, s, 3.5).unwrap() * 2.5,
        );
        assert!((m - 0.5 * (a + b)).abs() < 1e-15);
        assert!(rdp(10, 11, 1.0, 2.0).is_err() && rdp(10, 5, 1.0, 0.5).is_err());
    }
}
