//! Monotone searches on certified bounds: the smallest σ, or the most steps, whose bound
//! meets a target. Every decision is taken on the certified value, so the answer never
//! misses the target; a value the accountant cannot certify counts as a miss. And the
//! plain bisection the engine's monotone solves share ([`bisect`]).
#![cfg_attr(not(full_engine), allow(dead_code))]

use super::error::Error;
use crate::engine::math::{exp, ln};

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

/// A point read: (u, the bound there).
pub(crate) type Reading = (f64, f64);

/// A bracket of a monotone bound's crossing with a target — `miss` (bound > target) and
/// `meet` (bound ≤ target) — with the Illinois weights on g(u) = ln(bound/target) at each end:
/// an end kept by two reads in a row has its g halved, so that false position moves it too.
struct Ends {
    miss: Reading,
    meet: Reading,
    g_miss: f64,
    g_meet: f64,
    /// The side the last read fell on (1: meet, −1: miss, 0: none yet).
    last: i8,
    target: f64,
}

impl Ends {
    fn new(miss: Reading, meet: Reading, target: f64) -> Ends {
        let g = |b: f64| ln(b / target);
        Ends {
            miss,
            meet,
            g_miss: g(miss.1),
            g_meet: g(meet.1),
            last: 0,
            target,
        }
    }

    /// The false-position point between the ends (None where g is not finite at an end — a
    /// bound of 0 or ∞ — or does not fall).
    fn secant(&self) -> Option<f64> {
        let (m, n) = (self.miss, self.meet);
        let u = n.0 - self.g_meet * (n.0 - m.0) / (self.g_meet - self.g_miss);
        (self.g_miss.is_finite() && self.g_miss > self.g_meet && u.is_finite()).then_some(u)
    }

    /// A read at u, bound b: it replaces the end on its side.
    fn take(&mut self, u: f64, b: f64) {
        let g = ln(b / self.target);
        if b <= self.target {
            (self.meet, self.g_meet) = ((u, b), g);
            if self.last == 1 {
                self.g_miss *= 0.5;
            }
            self.last = 1;
        } else {
            (self.miss, self.g_miss) = ((u, b), g);
            if self.last == -1 {
                self.g_meet *= 0.5;
            }
            self.last = -1;
        }
    }

    fn width(&self) -> f64 {
        (self.meet.0 - self.miss.0).abs()
    }
}

/// Illinois false position on g(u) = ln(bound/target) between `miss` (g > 0) and `meet`
/// (g ≤ 0), until `close(miss, meet)`; a step that does not halve the bracket is
/// followed by a bisection, as is one where g is not finite at an end (a bound of 0 or ∞).
/// Returns the final (meet, its bound).
fn narrow(
    miss: Reading,
    meet: Reading,
    target: f64,
    mut at: impl FnMut(f64) -> Result<f64, Error>,
    close: impl Fn(f64, f64) -> bool,
) -> Result<Reading, Error> {
    let mut e = Ends::new(miss, meet, target);
    let mut bisect_next = false;
    while !close(e.miss.0, e.meet.0) {
        let width = e.width();
        let mid = 0.5 * (e.miss.0 + e.meet.0);
        // (Kept away from the ends: a point at an end does not shrink the bracket.)
        let (a, b) = (e.miss.0.min(e.meet.0), e.miss.0.max(e.meet.0));
        let u = match e.secant() {
            Some(u) if !bisect_next => u.clamp(a + 0.02 * width, b - 0.02 * width),
            _ => mid,
        };
        e.take(u, at(u)?);
        bisect_next = e.width() > 0.5 * width;
    }
    Ok(e.meet)
}

/// The crossing of a bound that falls in u with `target`, between `miss` (u, bound > target)
/// and `meet` (u, bound ≤ target) with miss.0 < meet.0, until the two are `rel` of the larger
/// |u| apart: Illinois false position on g(u) = ln(bound/target), with Brent's least step (an
/// estimate within the tolerance of the last point read moves to 0.9 of it from that point,
/// towards the other end, so that an estimate that close closes the bracket with one read);
/// a bisection where the last two reads did not halve the bracket, or g is not finite at an
/// end; at most `reads` reads (a crossing at u = 0 is never `rel` of itself). Returns the
/// final (miss, meet), each with its bound.
pub(crate) fn crossing<E>(
    miss: Reading,
    meet: Reading,
    target: f64,
    (rel, reads): (f64, usize),
    mut at: impl FnMut(f64) -> Result<f64, E>,
) -> Result<(Reading, Reading), E> {
    let tol = |e: &Ends| rel * e.miss.0.abs().max(e.meet.0.abs());
    let mut e = Ends::new(miss, meet, target);
    // The point last read, and the bracket's width before each of the last two reads.
    let mut best = meet.0;
    let (mut before, mut before_last) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..reads {
        let (w, t) = (e.width(), tol(&e));
        if w <= t {
            break;
        }
        let x = match e.secant() {
            Some(x) if w <= 0.5 * before => {
                if (x - best).abs() >= 0.9 * t {
                    x
                } else if best == e.meet.0 {
                    best - 0.9 * t
                } else {
                    best + 0.9 * t
                }
            }
            _ => e.miss.0 + 0.5 * w,
        };
        let x = x.clamp(e.miss.0 + 0.45 * t, e.meet.0 - 0.45 * t);
        e.take(x, at(x)?);
        best = x;
        (before, before_last) = (before_last, w);
    }
    Ok((e.miss, e.meet))
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
    let mut before: Option<Reading> = None;
    loop {
        // From the second read on, the secant of ln(bound) through the last two reads
        // predicts the crossing: the next read goes a tenth past it (so that it likely
        // brackets), at least `step` and at most 8 steps on.
        let mut d = step;
        if let Some((u0, b0)) = before {
            let slope = (ln(last.1) - ln(b0)) / (last.0 - u0);
            let dist = (ln(target) - ln(last.1)) / slope;
            if dist.is_finite() && dist * dir > 0.0 {
                d = (1.1 * dist.abs() + 0.1 * step).clamp(step, 8.0 * step);
            }
        }
        before = Some(last);
        let next = (u + dir * d).clamp(lo, hi);
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
/// (falling in σ) is ≤ `target`, and that bound: a gallop ×1.25 in ln σ from `guess`, then
/// [`crossing`] (Illinois false position with Brent's least step) in σ. `unreachable(bound)`
/// is the refusal when even MAX_SIGMA misses.
pub(crate) fn smallest_sigma(
    target: f64,
    guess: f64,
    unreachable: impl Fn(f64) -> Error,
    mut at: impl FnMut(f64) -> Result<f64, Error>,
) -> Result<(f64, f64), Error> {
    let (smin, smax) = (super::MIN_SIGMA, super::MAX_SIGMA);
    let mut at_u = |u: f64| at(exp(u).clamp(smin, smax));
    let u = ln(guess.clamp(smin, smax));
    let first = at_u(u)?;
    let limits = (ln(smin), ln(smax));
    let (miss, meet) = match gallop(
        u,
        first,
        target,
        ln(1.25f64),
        1.0,
        limits,
        &unreachable,
        &mut at_u,
    )? {
        Found::Between(miss, meet) => (miss, meet),
        Found::AtLimit(meet) => return Ok((smin, meet.1)),
    };
    // Narrowed in σ itself, with Brent's least step: a read within the tolerance of the
    // met end closes the bracket at once.
    let sigma = |(u, b): Reading| (exp(u).clamp(smin, smax), b);
    let (_, meet) = crossing(sigma(miss), sigma(meet), target, (1e-4, 200), |s| {
        at(s.clamp(smin, smax))
    })?;
    Ok(meet)
}

/// [`smallest_sigma`] where each read also yields a value (the answer at that σ): the σ found
/// and the value read there, so that a caller need not compute it again (None where the σ
/// found was not itself read: the search's lower limit).
pub(crate) fn smallest_sigma_with<T>(
    target: f64,
    guess: f64,
    unreachable: impl Fn(f64) -> Error,
    mut at: impl FnMut(f64) -> Result<(f64, T), Error>,
) -> Result<(f64, Option<T>), Error> {
    let mut read: Vec<(f64, T)> = Vec::new();
    let (sigma, _) = smallest_sigma(target, guess, unreachable, |s| {
        let (bound, value) = at(s)?;
        read.push((s, value));
        Ok(bound)
    })?;
    let found = read.into_iter().rev().find(|(s, _)| *s == sigma);
    Ok((sigma, found.map(|(_, v)| v)))
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
    let t_of = |u: f64| (exp(u).round() as u64).clamp(1, max);
    let mut at_u = |u: f64| at(t_of(u));
    let u = ln(guess.clamp(1, max) as f64);
    let first = if u == 0.0 { one } else { at_u(u)? };
    let limits = (0.0, ln(max as f64));
    let (miss, meet) = match gallop(
        u,
        first,
        target,
        ln(1.5f64),
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

#[cfg(test)]
mod tests {
    use super::crossing;
    use crate::engine::math::exp;

    /// [`crossing`] keeps its invariants (the bound above the target at `miss`, at most it at
    /// `meet`) and closes to the tolerance, on a smooth bound (few reads: the point of it over
    /// bisection), on a step-shaped one (a sum read on bins), where the bound is ∞ at the
    /// start, and at a crossing at 0, where the relative tolerance is never met and the read
    /// count stops it.
    #[test]
    fn crossing_keeps_a_certified_pair_and_closes_fast() {
        let target = 1e-9;
        // δ(ε)-like: e^{−ε²/2 − 3ε}·1e-3; the crossing at 2.2 or so.
        let smooth = |u: f64| 1e-3 * exp(-0.5 * u * u - 3.0 * u);
        let stairs = |u: f64| smooth((u * 1e4).ceil() / 1e4);
        // (Bisection from (0.5, 8) to a millionth of 2.2 takes 22 reads; these took 12, 15, 8.)
        type Case<'a> = (&'a dyn Fn(f64) -> f64, (f64, f64), usize);
        let cases: [Case; 3] = [
            (&smooth, (0.5, 8.0), 12),
            (&stairs, (0.5, 8.0), 16),
            (&smooth, (0.0, 8.0), 10),
        ];
        for (i, (f, (a, b), most)) in cases.into_iter().enumerate() {
            let mut reads = 0;
            let first = if i == 2 { f64::INFINITY } else { f(a) };
            let (miss, meet) = crossing::<()>((a, first), (b, f(b)), target, (1e-6, 60), |u| {
                reads += 1;
                Ok(f(u))
            })
            .unwrap();
            assert!(
                f(miss.0) > target && f(meet.0) <= target,
                "case {i}: {miss:?} {meet:?}"
            );
            assert_eq!((miss.1, meet.1), (f(miss.0), f(meet.0)), "case {i}");
            assert!(
                meet.0 - miss.0 <= 1e-6 * meet.0,
                "case {i}: {miss:?} {meet:?}"
            );
            assert!(reads <= most, "case {i}: {reads} reads");
        }
        // A crossing at 0 (a bound at most the target everywhere above 0): stopped by `reads`.
        let mut reads = 0;
        let (miss, meet) = crossing::<()>((0.0, 1.0), (1.0, 0.0), 0.5, (1e-6, 60), |u| {
            reads += 1;
            Ok(if u > 0.0 { 0.0 } else { 1.0 })
        })
        .unwrap();
        assert!(
            reads == 60 && miss.0 == 0.0 && meet.0 < 1e-15,
            "{reads} {miss:?} {meet:?}"
        );
        // A read that fails ends the search with its error.
        assert!(crossing((0.0, 1.0), (1.0, 0.0), 0.5, (1e-6, 60), |_| Err(())).is_err());
    }
}
