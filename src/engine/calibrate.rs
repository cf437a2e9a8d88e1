//! Calibration: the smallest σ, or the largest T, that meets an ε target.
//!
//! ε is nonincreasing in σ and nondecreasing in T (RDP is, and both
//! conversions are monotone in RDP), so bisection applies. Unlike a bisection
//! that returns the midpoint (Opacus issue #566), we always return the end of
//! the bracket whose ε has been evaluated and is ≤ the target.

use super::accountant::{eps_from_rdp, Conversion, Optimum, Run};
use super::error::Error;
use super::params::{check_delta, check_epsilon, check_orders, check_steps, Sgm};
use serde::Serialize;

/// Search range for σ.
pub const SIGMA_MIN: f64 = 0.05;
pub const SIGMA_MAX: f64 = 1e6;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SigmaCalibration {
    /// The smallest σ (to 1e-7 relative) whose ε ≤ target.
    pub sigma: f64,
    /// ε at that σ (≤ target) and its optimal α.
    pub epsilon: f64,
    pub alpha: f64,
    /// True when even σ = SIGMA_MIN meets the target (σ could be smaller).
    pub at_lower_limit: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepsCalibration {
    /// The largest T whose ε ≤ target.
    pub steps: u64,
    pub epsilon: f64,
    pub alpha: f64,
    /// True when T = MAX_STEPS still meets the target.
    pub at_upper_limit: bool,
}

fn eps_at(
    q: f64,
    sigma: f64,
    steps: u64,
    orders: &[f64],
    delta: f64,
    conv: Conversion,
) -> Result<Optimum, Error> {
    Run::new(Sgm::new(q, sigma)?, steps, orders)?.epsilon(delta, conv)
}

/// Smallest σ with ε(σ) ≤ `target` for sampling rate q, T steps, δ.
pub fn sigma(
    target: f64,
    delta: f64,
    q: f64,
    steps: u64,
    orders: &[f64],
    conv: Conversion,
) -> Result<SigmaCalibration, Error> {
    let target = check_epsilon(target)?;
    let delta = check_delta(delta)?;
    let steps = check_steps(steps)?;
    let orders = check_orders(orders)?;
    Sgm::new(q, 1.0)?;
    let at = |s: f64| eps_at(q, s, steps, &orders, delta, conv);
    let hi_opt = at(SIGMA_MAX)?;
    if hi_opt.value > target {
        return Err(Error::Unreachable(format!(
            "no noise_multiplier sigma <= {SIGMA_MAX:e} reaches epsilon <= {target} (sigma = {SIGMA_MAX:e} gives {:.6})",
            hi_opt.value
        )));
    }
    let lo_opt = at(SIGMA_MIN)?;
    if lo_opt.value <= target {
        return Ok(SigmaCalibration {
            sigma: SIGMA_MIN,
            epsilon: lo_opt.value,
            alpha: lo_opt.alpha,
            at_lower_limit: true,
        });
    }
    let (mut lo, mut hi, mut best) = (SIGMA_MIN, SIGMA_MAX, hi_opt);
    while hi / lo - 1.0 > 1e-7 {
        let mid = (lo * hi).sqrt();
        let o = at(mid)?;
        if o.value <= target {
            hi = mid;
            best = o;
        } else {
            lo = mid;
        }
    }
    Ok(SigmaCalibration {
        sigma: hi,
        epsilon: best.value,
        alpha: best.alpha,
        at_lower_limit: false,
    })
}

/// Largest T with ε(T) ≤ `target` for q, σ, δ.
///
/// No search over T: for continuous α, ε(T) = min_α [T·r(α) + c(α)] (r the per-step
/// RDP, c the conversion's δ term), so ε(T) ≤ target ⇔ T ≤ max_α (target − c(α))/r(α).
/// That one maximization over α (the grid, then golden section) replaces a bisection
/// over T that re-optimized α at every trial T (7–10 s at σ = 10⁻³; now milliseconds).
/// The T returned is re-checked with the full ε(T) and lowered until it meets the target.
pub fn steps(
    target: f64,
    delta: f64,
    sgm: Sgm,
    orders: &[f64],
    conv: Conversion,
) -> Result<StepsCalibration, Error> {
    let target = check_epsilon(target)?;
    let delta = check_delta(delta)?;
    let run1 = Run::new(sgm, 1, orders)?;
    let lat = run1.lattice();
    let curve = run1.curve_on(&lat);
    let at = |t: u64| -> Result<Optimum, Error> {
        Ok(run1.with_steps(t)?.epsilon_on(&lat, &curve, delta, conv))
    };
    let one = at(1)?;
    if one.value > target {
        return Err(Error::Unreachable(format!(
            "even one step gives epsilon = {:.6} > target {target}",
            one.value
        )));
    }
    let max = super::MAX_STEPS;
    // Steps allowed at order α (∞ where the per-step RDP is 0); maximized over α.
    let allowed = |a: f64, r: f64| -> f64 {
        let room = target - eps_from_rdp(0.0, a, delta, conv);
        if room < 0.0 {
            0.0
        } else if r <= 0.0 {
            f64::INFINITY
        } else {
            room / r
        }
    };
    let best =
        super::accountant::maximize(run1.orders(), &curve, allowed, |a| allowed(a, lat.rdp(a)));
    let mut t = if best >= max as f64 {
        max
    } else {
        (best.floor() as u64).max(1)
    };
    // Rounding in (target − c)/r can put T one above the boundary: step down.
    let mut o = at(t)?;
    while o.value > target && t > 1 {
        t -= 1;
        o = at(t)?;
    }
    Ok(StepsCalibration {
        steps: t,
        epsilon: o.value,
        alpha: o.alpha,
        at_upper_limit: t == max,
    })
}
