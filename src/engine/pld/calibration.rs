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
    let mut search = StepsSearch::new(target, delta, sgm)?;
    // (With no limit on its solves the first call answers.)
    loop {
        if let Some(found) = search.advance(usize::MAX)? {
            return Ok(found);
        }
    }
}

/// [`calibrate_steps`]' search, a few tight solves at a time: the page's worker runs it
/// between messages, so a newer run's charts wait for one solve, not for the whole search
/// (3 s natively at q = 2·10⁻⁵, σ = 1, δ = 10⁻⁶ to ε = 3; more in the wasm). Every solve
/// is kept, and each [`StepsSearch::advance`] replays the search over them (it is
/// deterministic) up to the first T not yet solved: the answer is [`calibrate_steps`]'
/// whatever the budgets.
///
/// ```
/// use sgm_rdp::engine::{pld, Sgm};
/// let sgm = Sgm::new(0.01, 1.0)?;
/// let mut search = pld::StepsSearch::new(2.0, 1e-5, sgm)?;
/// let found = loop {
///     if let Some(found) = search.advance(1)? {
///         break found;
///     }
/// };
/// assert_eq!(found.0, pld::calibrate_steps(2.0, 1e-5, sgm)?.0);
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
#[cfg(full_engine)]
pub struct StepsSearch {
    target: f64,
    delta: f64,
    sgm: Sgm,
    /// Exact RDP's answer (a T known to fit), else 1.
    start: u64,
    /// Every T solved, with its answer.
    seen: Vec<(u64, EpsilonAnswer)>,
}

#[cfg(full_engine)]
impl StepsSearch {
    /// Checks the target and δ and finds the start (exact RDP's calibration, no tight solve).
    pub fn new(target: f64, delta: f64, sgm: Sgm) -> Result<Self, Error> {
        let target = check_epsilon(target)?;
        let delta = check_delta(delta)?;
        let orders = crate::engine::default_orders();
        // Exact RDP's answer is feasible for the tight accountant too: the search starts there.
        let start = match crate::engine::calibrate::steps(
            target,
            delta,
            sgm,
            &orders,
            Conversion::Improved,
        ) {
            Ok(rdp) => rdp.steps,
            Err(Error::StepsUnreachable { .. }) => 1,
            Err(other) => return Err(other),
        };
        Ok(Self {
            target,
            delta,
            sgm,
            start,
            seen: Vec::new(),
        })
    }

    /// The search on, with at most `fresh` new tight solves: the most steps and the answer
    /// there once found, `None` when the budget ran out first (call again to go on).
    pub fn advance(&mut self, fresh: usize) -> Result<Option<(u64, EpsilonAnswer)>, Error> {
        let (target, delta, sgm, start) = (self.target, self.delta, self.sgm, self.start);
        let seen = &mut self.seen;
        let mut left = fresh;
        let mut paused = false;
        let mut at = |t: u64| -> Result<EpsilonAnswer, Error> {
            if let Some((_, a)) = seen.iter().find(|(u, _)| *u == t) {
                return Ok(*a);
            }
            if left == 0 {
                // (Unwinds the search through its `?`s; `paused` tells it from a refusal.)
                paused = true;
                return Err(Error::StepsUnreachable {
                    target,
                    epsilon: f64::NAN,
                });
            }
            left -= 1;
            let a = epsilon(sgm, t, delta)?;
            seen.push((t, a));
            Ok(a)
        };
        let mut search = || -> Result<(u64, EpsilonAnswer), Error> {
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
        };
        let found = search();
        if paused {
            return Ok(None);
        }
        found.map(Some)
    }
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
