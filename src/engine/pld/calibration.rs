//! Calibration on the tight accountant: the smallest σ or the most steps that meet an ε target.

use super::*;

/// Smallest σ (to 1e-4 relative) whose certified upper ε at δ after `steps` steps with
/// rate q is ≤ `target`. Every decision is the tight accountant's: the exact-RDP
/// calibration, when it answers, only supplies a starting σ that meets the target (the
/// PLD bound is tighter); when RDP cannot reach the target (α ≤ 10⁶ floors its ε) the
/// search gallops upward on the PLD itself. A refusal names the tight ε at the largest σ.
///
/// ```
/// use sgm_rdp::engine::{pld, Sgm};
/// let (sigma, at) = pld::calibrate_sigma(3.0, 1e-5, 0.01, 1000)?;
/// assert!(at.epsilon.upper <= 3.0); // never misses the target
/// let above = pld::epsilon(Sgm::new(0.01, sigma * 0.999)?, 1000, 1e-5)?.epsilon;
/// assert!(above.lower > 2.9); // and is not far above the smallest σ
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
pub fn calibrate_sigma(
    target: f64,
    delta: f64,
    q: f64,
    steps: u64,
) -> Result<(f64, EpsilonAnswer), Error> {
    let target = check_epsilon(target)?;
    let delta = check_delta(delta)?;
    let orders = crate::engine::default_orders();
    let at = |s: f64| epsilon(Sgm::new(q, s)?, steps, delta);
    let guess = match crate::engine::calibrate::sigma(
        target,
        delta,
        q,
        steps,
        &orders,
        Conversion::Improved,
    ) {
        Ok(rdp) if rdp.at_lower_limit => return Ok((rdp.sigma, at(rdp.sigma)?)),
        // The tight ε is below exact RDP's, so the answer is below RDP's σ (a tenth or so on
        // typical runs, a quarter where the amplification is strong).
        Ok(rdp) => 0.9 * rdp.sigma,
        Err(Error::SigmaUnreachable { .. }) => 1.0,
        Err(other) => return Err(other),
    };
    let unreachable = |epsilon| Error::SigmaUnreachable { target, epsilon };
    let (sigma, found) =
        crate::engine::search::smallest_sigma_with(target, guess, unreachable, |s| {
            at(s).map(|e| (e.epsilon.upper, e))
        })?;
    Ok((sigma, found.map_or_else(|| at(sigma), Ok)?))
}

/// Largest T whose certified upper ε at δ is ≤ `target`, decided on the tight ε alone:
/// the exact-RDP answer (when there is one) is a T that is known to fit; otherwise the
/// search starts at one step, and a refusal names the tight one-step ε.
#[cfg(full_engine)]
pub fn calibrate_steps(target: f64, delta: f64, sgm: Sgm) -> Result<(u64, EpsilonAnswer), Error> {
    let target = check_epsilon(target)?;
    let delta = check_delta(delta)?;
    let orders = crate::engine::default_orders();
    // Exact RDP's answer is feasible for the tight accountant too: the search starts there.
    let start =
        match crate::engine::calibrate::steps(target, delta, sgm, &orders, Conversion::Improved) {
            Ok(rdp) => rdp.steps,
            Err(Error::StepsUnreachable { .. }) => 1,
            Err(other) => return Err(other),
        };
    // Every answer computed is kept: the search's last meeting T is returned with its own.
    let mut seen: Vec<(u64, EpsilonAnswer)> = Vec::new();
    let mut at = |t: u64| -> Result<EpsilonAnswer, Error> {
        if let Some((_, a)) = seen.iter().find(|(u, _)| *u == t) {
            return Ok(*a);
        }
        let a = epsilon(sgm, t, delta)?;
        seen.push((t, a));
        Ok(a)
    };
    let first = at(start)?;
    if first.epsilon.upper > target {
        // Only reachable from the one-step start (an RDP-feasible T is PLD-feasible).
        return Err(Error::StepsUnreachable {
            target,
            epsilon: first.epsilon.upper,
        });
    }
    let t = most_steps_from(target, start, first.epsilon.upper, &mut at)?;
    Ok((t, at(t)?))
}

/// In the wasm (no room for `engine::search`, ~1 KB): doubling from exact RDP's answer,
/// then bisection to one step.
#[cfg(not(full_engine))]
pub fn calibrate_steps(target: f64, delta: f64, sgm: Sgm) -> Result<(u64, EpsilonAnswer), Error> {
    let target = check_epsilon(target)?;
    let delta = check_delta(delta)?;
    let orders = crate::engine::default_orders();
    let at = |t: u64| epsilon(sgm, t, delta);
    let mut lo =
        match crate::engine::calibrate::steps(target, delta, sgm, &orders, Conversion::Improved) {
            Ok(rdp) => rdp.steps,
            Err(Error::StepsUnreachable { .. }) => 1,
            Err(other) => return Err(other),
        };
    let mut best = at(lo)?;
    if best.epsilon.upper > target {
        // Only reachable from the one-step start (an RDP-feasible T is PLD-feasible).
        return Err(Error::StepsUnreachable {
            target,
            epsilon: best.epsilon.upper,
        });
    }
    let mut hi = lo;
    loop {
        if lo == crate::engine::MAX_STEPS {
            return Ok((lo, best));
        }
        hi = hi.saturating_mul(2).min(crate::engine::MAX_STEPS);
        let e = at(hi)?;
        if e.epsilon.upper > target {
            break;
        }
        lo = hi;
        best = e;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let e = at(mid)?;
        if e.epsilon.upper <= target {
            lo = mid;
            best = e;
        } else {
            hi = mid;
        }
    }
    Ok((lo, best))
}

/// The most steps whose tight upper ε is ≤ `target`, from a feasible `start` (its bound
/// `first`). Natively: from where ε ∝ √T (the composed loss's central limit) puts the
/// target, within 64× of the start, a gallop ×1.5 and Illinois false position in ln T to
/// one step ([`crate::engine::search::most_steps`]; `first` is the bound at T = 1 when the start
/// is 1).
#[cfg(full_engine)]
pub(super) fn most_steps_from(
    target: f64,
    start: u64,
    first: f64,
    at: &mut impl FnMut(u64) -> Result<EpsilonAnswer, Error>,
) -> Result<u64, Error> {
    let ratio = (target / first.max(1e-300)).powi(2).clamp(1.0, 64.0);
    let guess = if start == 1 {
        1
    } else {
        (start as f64 * ratio).min(crate::engine::MAX_STEPS as f64) as u64
    };
    let unreachable = |e| Error::StepsUnreachable { target, epsilon: e };
    crate::engine::search::most_steps(target, guess, first, unreachable, |t| {
        at(t).map(|a| a.epsilon.upper)
    })
    .map(|(t, _)| t)
}
