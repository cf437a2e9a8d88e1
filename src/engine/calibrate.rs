//! Calibration: the smallest σ, or the largest T, that meets an ε target.
//!
//! ε is nonincreasing in σ and nondecreasing in T (RDP is, and both
//! conversions are monotone in RDP), so bisection applies. Unlike a bisection
//! that returns the midpoint (Opacus issue #566), we always return the end of
//! the bracket whose ε has been evaluated and is ≤ the target.

use super::accountant::{eps_from_rdp, Conversion, Optimum, Run};
use super::error::Error;
use super::params::{check_delta, check_epsilon, check_orders, check_steps, Sgm};
use crate::engine::math::{exp, ln};
use serde::Serialize;

/// Search range for σ: the engine's one σ range, [`super::MIN_SIGMA`, `super::MAX_SIGMA`].
pub const SIGMA_MIN: f64 = super::MIN_SIGMA;
pub const SIGMA_MAX: f64 = super::MAX_SIGMA;

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
///
/// ```
/// use sgm_rdp::engine::{calibrate, default_orders, Conversion};
/// let c = calibrate::sigma(2.0, 1e-5, 256.0 / 60000.0, 14063, &default_orders(), Conversion::Improved)?;
/// assert!((c.sigma - 1.2952592).abs() < 1e-6 && c.epsilon <= 2.0);
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
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
        return Err(Error::SigmaUnreachable {
            target,
            epsilon: hi_opt.value,
        });
    }
    // Bracket downward a decade at a time from the cheap end: the per-step RDP costs more
    // the smaller σ is (σ = 10⁻³ about 0.3 s natively), so small σ is evaluated only when
    // the answer lies there.
    let (mut lo, mut hi, mut best) = (SIGMA_MAX, SIGMA_MAX, hi_opt);
    let lo_opt = loop {
        if lo <= SIGMA_MIN {
            return Ok(SigmaCalibration {
                sigma: hi,
                epsilon: best.value,
                alpha: best.alpha,
                at_lower_limit: true,
            });
        }
        lo = (lo / 10.0).max(SIGMA_MIN);
        let o = at(lo)?;
        if o.value > target {
            break o;
        }
        (hi, best) = (lo, o);
    };
    // Within the decade: Brent's method on g(u) = ln ε(e^u) − ln target (smooth and
    // decreasing), a handful of evaluations where bisection took ~25. The answer is the
    // smallest σ it evaluated with ε ≤ target (always an evaluated σ that meets it).
    let g = |v: f64| ln(v) - ln(target);
    let ends = ((ln(lo), g(lo_opt.value)), (ln(hi), g(best.value)));
    let mut eval = |u: f64| -> Result<f64, Error> {
        let s = exp(u);
        let o = at(s)?;
        if o.value <= target && s < hi {
            (hi, best) = (s, o);
        }
        Ok(g(o.value))
    };
    brent(&mut eval, ends.0, ends.1, 0.4e-7)?;
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
        return Err(Error::StepsUnreachable {
            target,
            epsilon: one.value,
        });
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
    // ... or below it, when ε(T) sits exactly at the target (a σ calibrated for T steps
    // gives ε(T) = target to the last bit, and the floor above then gave T − 1): step up.
    for _ in 0..8 {
        if t >= max {
            break;
        }
        let next = at(t + 1)?;
        if next.value > target {
            break;
        }
        (t, o) = (t + 1, next);
    }
    Ok(StepsCalibration {
        steps: t,
        epsilon: o.value,
        alpha: o.alpha,
        at_upper_limit: t == max,
    })
}

/// Brent's method (R. P. Brent, "Algorithms for Minimization without Derivatives",
/// Prentice-Hall 1973, ch. 4): a root of `f` in [a, b] given f(a), f(b) of opposite signs,
/// until the bracket is narrower than `2·tol`. Inverse quadratic interpolation and secant
/// steps where they make progress, bisection where they do not: superlinear on smooth
/// functions, never slower than bisection by more than a constant factor. The caller
/// tracks the points through `f`.
fn brent(
    f: &mut impl FnMut(f64) -> Result<f64, Error>,
    (mut a, mut fa): (f64, f64),
    (mut b, mut fb): (f64, f64),
    tol: f64,
) -> Result<(), Error> {
    let (mut c, mut fc) = (a, fa);
    let (mut d, mut e) = (b - a, b - a);
    for _ in 0..200 {
        if (fb > 0.0) == (fc > 0.0) {
            (c, fc) = (a, fa);
            (d, e) = (b - a, b - a);
        }
        if fc.abs() < fb.abs() {
            (a, fa) = (b, fb);
            (b, fb) = (c, fc);
            (c, fc) = (a, fa);
        }
        let tol1 = 2.0 * f64::EPSILON * b.abs() + 0.5 * tol;
        let xm = 0.5 * (c - b);
        if xm.abs() <= tol1 || fb == 0.0 {
            return Ok(());
        }
        if e.abs() >= tol1 && fa.abs() > fb.abs() {
            let s = fb / fa;
            let (mut p, mut q) = if a == c {
                (2.0 * xm * s, 1.0 - s)
            } else {
                let (q, r) = (fa / fc, fb / fc);
                (
                    s * (2.0 * xm * q * (q - r) - (b - a) * (r - 1.0)),
                    (q - 1.0) * (r - 1.0) * (s - 1.0),
                )
            };
            if p > 0.0 {
                q = -q;
            }
            p = p.abs();
            let min1 = 3.0 * xm * q - (tol1 * q).abs();
            let min2 = (e * q).abs();
            if 2.0 * p < min1.min(min2) {
                (e, d) = (d, p / q);
            } else {
                (d, e) = (xm, xm);
            }
        } else {
            (d, e) = (xm, xm);
        }
        (a, fa) = (b, fb);
        b += if d.abs() > tol1 { d } else { tol1.copysign(xm) };
        fb = f(b)?;
    }
    Ok(())
}
