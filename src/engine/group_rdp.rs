//! User-level (group) ε by exact RDP and group privacy: the route TF Privacy's
//! `compute_dp_sgd_privacy_statement` reports ("computed using RDP accounting and group
//! privacy"), kept for comparison with the tight mixture-of-Gaussians PLD
//! ([`super::pld::Phase::group`]), which is much tighter.
//!
//! Group privacy for (ε, δ)-DP (Vadhan, "The Complexity of Differential Privacy", 2017,
//! Lemma 2.2, in the tighter form of the last line of its proof): a mechanism that is
//! (ε, δ)-DP for one example is, for datasets differing in k examples,
//! (k·ε, δ·Σ_{i<k} e^{iε}) = (k·ε, δ·(e^{kε} − 1)/(e^{ε} − 1))-DP.
//! With the example-level ε(δ') of exact RDP (an upper bound), every δ' whose user-level
//! δ meets the target gives a certified user-level ε = k·ε(δ'); ε(δ') falls as δ' grows,
//! so the answer is the largest such δ', found by bisection in ln δ' (the answer's δ' is
//! always one that meets the target, whether or not the search found the very largest).

use super::accountant::{Conversion, Run};
use super::error::Error;
use super::params::{check_delta, check_epsilon};
use super::Sgm;
use crate::engine::math::{exp, exp_m1, ln};

/// The RDP group route's answer for a user-level δ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupRdp {
    /// The user-level ε: k·ε(δ'), a certified upper bound.
    pub epsilon: f64,
    /// The example-level ε(δ') and δ' it is read at.
    pub example_epsilon: f64,
    pub example_delta: f64,
    /// The Rényi order of ε(δ').
    pub alpha: f64,
}

/// ln((e^{kε} − 1)/(e^{ε} − 1)) = ln Σ_{i<k} e^{iε} (k at ε = 0).
fn ln_group_factor(k: u32, eps: f64) -> f64 {
    let k = k as f64;
    if eps < 1e-12 {
        return ln(k) + 0.5 * (k - 1.0) * eps;
    }
    // ln(e^x − 1) = x + ln(1 − e^{−x}), stable for every x > 0.
    let ln_expm1 = |x: f64| x + ln(-exp_m1(-x));
    ln_expm1(k * eps) - ln_expm1(eps)
}

fn check_group(k: u32) -> Result<u32, Error> {
    if !(1..=256).contains(&k) {
        return Err(Error::GroupSize(k));
    }
    Ok(k)
}

/// User-level ε at user-level δ for groups of `k` examples (RDP and group privacy).
pub fn epsilon(sgm: Sgm, steps: u64, k: u32, delta: f64) -> Result<GroupRdp, Error> {
    let k = check_group(k)?;
    let delta = check_delta(delta)?;
    let run = Run::with_default_orders(sgm, steps)?;
    let curve = run.rdp_curve();
    let at = |ln_d: f64| -> Result<(f64, f64), Error> {
        let o = run.epsilon_from_curve(&curve, exp(ln_d), Conversion::Improved)?;
        Ok((o.value, o.alpha))
    };
    // gap(ln δ') = ln δ' + ln Σ_{i<k} e^{iε(δ')} − ln δ: ≤ 0 meets the target.
    let gap = |ln_d: f64| -> Result<(f64, f64, f64), Error> {
        let (e, a) = at(ln_d)?;
        Ok((ln_d + ln_group_factor(k, e) - ln(delta), e, a))
    };
    // The factor is ≥ k, so δ' ≤ δ/k; step down by decades until the target is met.
    let mut hi = ln(delta) - ln(k as f64);
    let mut found = gap(hi)?;
    if found.0 > 0.0 {
        let mut lo = hi - ln(10f64);
        loop {
            if lo < ln(1e-300f64) {
                return Err(Error::Sampling(format!(
                    "no user-level ε for groups of {k} at δ = {delta}: the example-level δ needed is below 1e-300"
                )));
            }
            let g = gap(lo)?;
            if g.0 <= 0.0 {
                found = g;
                break;
            }
            hi = lo;
            lo -= ln(10f64);
        }
        // Bisection between lo (meets the target) and hi (does not).
        let mut lo_x = lo;
        for _ in 0..60 {
            let mid = 0.5 * (lo_x + hi);
            let g = gap(mid)?;
            if g.0 <= 0.0 {
                lo_x = mid;
                found = g;
            } else {
                hi = mid;
            }
            if hi - lo_x < 1e-9 {
                break;
            }
        }
        hi = lo_x;
    }
    let (_, e, a) = found;
    Ok(GroupRdp {
        epsilon: k as f64 * e,
        example_epsilon: e,
        example_delta: exp(hi),
        alpha: a,
    })
}

/// User-level δ at user-level ε for groups of `k` examples: δ(ε/k)·Σ_{i<k} e^{iε/k}, with
/// δ(·) exact RDP's (no search: the example-level ε is ε/k). Returns (δ, α).
pub fn delta(sgm: Sgm, steps: u64, k: u32, eps: f64) -> Result<(f64, f64), Error> {
    let k = check_group(k)?;
    let eps = check_epsilon(eps)?;
    let e = eps / k as f64;
    let o = Run::with_default_orders(sgm, steps)?.delta(e, Conversion::Improved)?;
    let d = exp(ln(o.value) + ln_group_factor(k, e)).min(1.0);
    Ok((d, o.alpha))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The factor against its sum, Σ_{i<k} e^{iε}.
    #[test]
    fn the_group_factor_is_the_geometric_sum() {
        for k in [1u32, 2, 3, 10] {
            for eps in [0.0, 1e-13, 1e-6, 0.3, 2.0, 40.0] {
                let sum: f64 = (0..k).map(|i| exp(i as f64 * eps)).sum();
                let f = ln_group_factor(k, eps);
                assert!(
                    (f - ln(sum)).abs() < 1e-9 * ln(sum).abs().max(1.0),
                    "{k} {eps}"
                );
            }
        }
    }

    /// k = 1 is the example-level exact-RDP ε; the answer's own δ' meets the target.
    #[test]
    fn one_example_per_user_and_the_target_met() {
        let sgm = Sgm::new(0.0064, 1.0).unwrap();
        let one = epsilon(sgm, 782, 1, 1e-6).unwrap();
        let plain = Run::with_default_orders(sgm, 782)
            .unwrap()
            .epsilon(1e-6, Conversion::Improved)
            .unwrap();
        assert!(
            (one.epsilon - plain.value).abs() < 1e-9,
            "{one:?} {plain:?}"
        );
        let g = epsilon(sgm, 782, 3, 1e-6).unwrap();
        let user_delta = exp(ln(g.example_delta) + ln_group_factor(3, g.example_epsilon));
        assert!(user_delta <= 1e-6 * (1.0 + 1e-12), "{g:?}: {user_delta}");
        // Not far inside the target either (the search found the boundary).
        assert!(user_delta > 0.99e-6, "{g:?}: {user_delta}");
        // δ at the answer's ε meets δ again (the two directions agree).
        let (d, _) = delta(sgm, 782, 3, g.epsilon).unwrap();
        assert!(d <= 1e-6 * 1.001, "{d}");
    }
}
