//! Monotone searches on certified bounds: the smallest σ, or the most steps, whose bound
//! meets a target. Every decision is taken on the certified value, so the answer never
//! misses the target; a value the accountant cannot certify counts as a miss. And the
//! plain bisection the engine's monotone solves share ([`bisect`]).
#![cfg_attr(not(full_engine), allow(dead_code))]

use super::error::Error;

/// Bisection on [lo, hi] for a monotone test that holds at `lo` and fails at `hi`: at most
/// `halvings` halvings, each keeping that, stopping early once `narrow(lo, hi)`. Returns the
/// final (lo, hi): lo still passes the test, hi still fails it.
pub(crate) fn bisect(
    (mut lo, mut hi): (f64, f64),
    passes: impl Fn(f64) -> bool,
    halvings: usize,
    narrow: impl Fn(f64, f64) -> bool,
) -> (f64, f64) {
    for _ in 0..halvings {
        let mid = 0.5 * (lo + hi);
        if passes(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
        if narrow(lo, hi) {
            break;
        }
    }
    (lo, hi)
}

/// Illinois false position on g(u) = ln(bound/target) between `miss` (g > 0) and `meet`
/// (g ≤ 0), until `close(miss, meet)`; a step that does not halve the bracket is
/// followed by a bisection. Returns the final (meet, its bound).
fn narrow(
    mut miss: (f64, f64),
    mut meet: (f64, f64),
    target: f64,
    mut at: impl FnMut(f64) -> Result<f64, Error>,
    close: impl Fn(f64, f64) -> bool,
) -> Result<(f64, f64), Error> {
    let g = |b: f64| (b / target).ln();
    let (mut g_miss, mut g_meet) = (g(miss.1), g(meet.1));
    let mut last = 0i8;
    let mut bisect_next = false;
    while !close(miss.0, meet.0) {
        let width = (meet.0 - miss.0).abs();
        let u = if !bisect_next && g_miss.is_finite() && g_miss > g_meet {
            let u = meet.0 - g_meet * (meet.0 - miss.0) / (g_meet - g_miss);
            // Keep away from the ends (a point at an end does not shrink the bracket).
            let (a, b) = (miss.0.min(meet.0), miss.0.max(meet.0));
            u.clamp(a + 0.02 * width, b - 0.02 * width)
        } else {
            0.5 * (miss.0 + meet.0)
        };
        let b = at(u)?;
        if b <= target {
            meet = (u, b);
            g_meet = g(b);
            if last == 1 {
                g_miss *= 0.5;
            }
            last = 1;
        } else {
            miss = (u, b);
            g_miss = g(b);
            if last == -1 {
                g_meet *= 0.5;
            }
            last = -1;
        }
        bisect_next = (meet.0 - miss.0).abs() > 0.5 * width;
    }
    Ok(meet)
}

/// Where a gallop stopped: a (miss, meet) pair of (u, bound), or the limit of u with the
/// target still met.
enum Found {
    Between((f64, f64), (f64, f64)),
    AtLimit((f64, f64)),
}

/// Gallop in u by `step` from (u, its bound `first`) until the bound crosses the target;
/// the bound falls as u moves in `meet_dir` (±1). Stops at the `limits` of u: with the
/// target met there, [`Found::AtLimit`]; missed, the error `unreachable(bound there)`.
#[allow(clippy::too_many_arguments)]
fn gallop(
    mut u: f64,
    first: f64,
    target: f64,
    step: f64,
    meet_dir: f64,
    (lo, hi): (f64, f64),
    unreachable: &impl Fn(f64) -> Error,
    mut at: impl FnMut(f64) -> Result<f64, Error>,
) -> Result<Found, Error> {
    let meets = first <= target;
    let dir = if meets { -meet_dir } else { meet_dir };
    let mut last = (u, first);
    loop {
        let next = (u + dir * step).clamp(lo, hi);
        if next == u {
            return if meets {
                Ok(Found::AtLimit(last))
            } else {
                Err(unreachable(last.1))
            };
        }
        u = next;
        let b = at(u)?;
        if (b <= target) != meets {
            return Ok(if meets {
                Found::Between((u, b), last)
            } else {
                Found::Between(last, (u, b))
            });
        }
        last = (u, b);
    }
}

/// The smallest σ in [MIN_SIGMA, MAX_SIGMA] (to 1e-4 relative) whose bound `at(σ)`
/// (falling in σ) is ≤ `target`, and that bound: a gallop ×1.25 from `guess`, then
/// Illinois false position in ln σ. `unreachable(bound)` is the refusal when even
/// MAX_SIGMA misses.
pub(crate) fn smallest_sigma(
    target: f64,
    guess: f64,
    unreachable: impl Fn(f64) -> Error,
    mut at: impl FnMut(f64) -> Result<f64, Error>,
) -> Result<(f64, f64), Error> {
    let (smin, smax) = (super::MIN_SIGMA, super::MAX_SIGMA);
    let mut at_u = |u: f64| at(u.exp().clamp(smin, smax));
    let u = guess.clamp(smin, smax).ln();
    let first = at_u(u)?;
    let limits = (smin.ln(), smax.ln());
    let (miss, meet) = match gallop(
        u,
        first,
        target,
        1.25f64.ln(),
        1.0,
        limits,
        &unreachable,
        &mut at_u,
    )? {
        Found::Between(miss, meet) => (miss, meet),
        Found::AtLimit(meet) => return Ok((smin, meet.1)),
    };
    let (u, b) = narrow(miss, meet, target, at_u, |a, c| (c - a).abs() <= 1e-4)?;
    Ok((u.exp().clamp(smin, smax), b))
}

/// The most steps in [1, MAX_STEPS] whose bound `at(T)` (rising in T) is ≤ `target`, and
/// that bound, given the bound `one` at T = 1 (already ≤ target): a gallop ×1.5 from
/// `guess`, then Illinois false position in ln T to one step.
pub(crate) fn most_steps(
    target: f64,
    guess: u64,
    one: f64,
    unreachable: impl Fn(f64) -> Error,
    mut at: impl FnMut(u64) -> Result<f64, Error>,
) -> Result<(u64, f64), Error> {
    let max = super::MAX_STEPS;
    let t_of = |u: f64| (u.exp().round() as u64).clamp(1, max);
    let mut at_u = |u: f64| at(t_of(u));
    let u = (guess.clamp(1, max) as f64).ln();
    let first = if u == 0.0 { one } else { at_u(u)? };
    let limits = (0.0, (max as f64).ln());
    let (miss, meet) = match gallop(
        u,
        first,
        target,
        1.5f64.ln(),
        -1.0,
        limits,
        &unreachable,
        &mut at_u,
    )? {
        Found::Between(miss, meet) => (miss, meet),
        Found::AtLimit(meet) => return Ok((max, meet.1)),
    };
    let (u, b) = narrow(miss, meet, target, at_u, |a, c| {
        t_of(a).abs_diff(t_of(c)) <= 1
    })?;
    Ok((t_of(u), b))
}
