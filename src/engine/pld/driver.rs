//! Stage 2, the ε search: both directions, the width rule, the routes (lattices, the
//! closed form for rare large losses, Bernstein), refinement and refusals.

use super::*;
use crate::engine::math::{exp_m1, ln, ln_1p, log2, powf};
use crate::engine::pld::compose::Work;

/// Forget the random-allocation law cached between calls (it makes a second call at the
/// same σ, t and δ cheap): for benchmarks that time a cold call.
#[cfg(full_engine)]
#[doc(hidden)]
pub fn forget_cached_laws() {
    allocation::forget_law();
}

/// Tight ε at δ for the phases, both directions, the worse one reported.
pub fn epsilon_phases(phases: &[Phase], delta: f64) -> Result<EpsilonAnswer, Error> {
    epsilon_phases_with(phases, delta, &Work::new(super::WORK))
}

/// [`epsilon_phases`] within the call context `w` (its work budget and mode).
pub(crate) fn epsilon_phases_with(
    phases: &[Phase],
    delta: f64,
    w: &Work,
) -> Result<EpsilonAnswer, Error> {
    let phases = &phase::merged(phases);
    #[cfg_attr(not(full_engine), allow(unused_mut))]
    let mut ans = epsilon_phases_at(phases, delta, TOL, w)?;
    // Truncated Poisson: the bracket above is of the revealed-branch pair, whose upper
    // end is certified for the mechanism; the lower end comes from the exact pair of the
    // gradient-0 datasets ([`truncated`]).
    #[cfg(full_engine)]
    if phases.iter().any(|p| p.trunc.is_some()) {
        let low: Vec<Phase> = phases.iter().map(Phase::lower_phase).collect();
        let lower = match epsilon_phases_at(&low, delta, TOL, w) {
            Ok(a) => a.epsilon.lower,
            Err(Error::PldBudget { .. }) => 0.0,
            Err(e) => return Err(e),
        };
        ans.epsilon.lower = lower.min(ans.epsilon.upper);
    }
    Ok(ans)
}

/// [`epsilon_phases`] aiming for a bracket of relative width `tol` (≥ TOL).
/// Where the lattices cannot answer within the budget but Bernstein's bound is itself within
/// the absolute width rule (ABS_WIDTH), [0, bound] is the answer (tiny q at large σ over few
/// steps: q = 9.5e-7, σ = 88.9, T = 91, δ = 1.4e-15 — the bound 4.3e-5 — was refused).
pub(super) fn epsilon_phases_at(
    phases: &[Phase],
    delta: f64,
    tol: f64,
    w: &Work,
) -> Result<EpsilonAnswer, Error> {
    check_phases(phases)?;
    let delta = check_delta(delta)?;
    let live = live_phases(phases);
    // ε = 0 where δ(0), the total variation, is certified below δ (no composition: the
    // early checkpoints of ε over training at a large δ — q = 9.462e-8, σ = 0.341,
    // δ = 0.0116 is 0 up to 1.4·10⁷ steps — took ~1 s each on the lattices).
    if tv_bound(&live).is_some_and(|tv| tv <= delta) {
        return Ok(zero_answer(
            "either (δ(0), the total variation, is at most δ)",
        ));
    }
    // Exact RDP at δ, once: it refuses a run far beyond the domain and guides the lattices.
    let exact = exact_rdp(&live, delta, w);
    far_beyond(&live, || exact.eps)?;
    // Tried first where the lattices are known to struggle, and returned where it is within
    // 0.1 % of ε (or within the width rule and `tol`). A wider answer is kept; where it is an
    // answer on its own the lattices get half the budget in [`jumps_first`]'s zone below
    // σ = 0.6 (the call stays near a second: q = 1.9e-9, σ = 0.36, T = 4.1·10⁷ took 1.16 s
    // with the whole budget), the whole in [`jumps_near`]'s and from σ = 0.6 on, and where they
    // answer too the two certified brackets intersect (q = 2.3e-8, σ = 0.51, T = 4.2·10⁷:
    // [0.012587, 0.012633] in closed form, the lattices [0.012614, 0.012622]).
    #[cfg(full_engine)]
    let first = jumps_first(&live) || jumps_near(&live);
    // The closed form's bracket, whatever its width (certified: it may narrow the lattices').
    #[cfg(full_engine)]
    let mut closed = None;
    #[cfg(full_engine)]
    if first {
        if let Some(a) = jumps_raw(&live, delta, w) {
            // (Within 0.1 %, or within the width rule and the caller's target: q = 3.073e-8,
            // σ = 0.4757, T = 8.5·10⁸, δ = 1.03e-5 reads [0.021881, 0.021924], 4.3e-5 wide,
            // and the lattices' try after it took 2.3 s more.)
            let (w, u) = (a.epsilon.upper - a.epsilon.lower, a.epsilon.upper);
            let narrow = w <= 1e-3 * u;
            let goal = w <= 4e-4 * u || (u < 0.1 && w <= 2e-5);
            if within_width_rule(a.epsilon)
                && (narrow || !wider_than(a.epsilon, tol))
                && (goal || !first_wide(&live))
            {
                return Ok(a);
            }
            closed = Some(a);
        }
    }
    #[cfg(full_engine)]
    let early = closed.filter(|a| within_width_rule(a.epsilon));
    // Where the closed form applies the lattices get no rescue budget ([`epsilon_lattices`]) on
    // their first try: the closed form may answer (q = 4.692e-8, σ = 0.405, T = 5.6·10⁸,
    // δ = 1.36e-5: the lattices 2.8 % wide, the closed form within 1 %; the rescue cost 2 s).
    #[cfg(full_engine)]
    let applies = jumps_apply(&live);
    #[cfg(full_engine)]
    let work = if early.is_some() {
        let half = jumps_first(&live) && !first_wide(&live);
        (if half { 0.5 * WORK } else { WORK }, false)
    } else {
        (WORK, !applies)
    };
    #[cfg(not(full_engine))]
    let work = (WORK, true);
    let lattices = epsilon_lattices(phases, delta, tol, work, exact, w);
    #[cfg(not(full_engine))]
    return match lattices {
        Ok(a) if within_width_rule(a.epsilon) => Ok(a),
        Ok(_) => refusal(&live, delta, CANNOT_BRACKET),
        Err(Error::PldBudget { reason }) => refusal(&live, delta, reason),
        Err(e) => Err(e),
    };
    // The closed form, where it applies, is tried now for a lattice answer wider than the width
    // rule (or refused as wider than 1 %) if it was not tried first, and the two certified
    // brackets intersect: q = 5.6e-8, σ = 0.46, T = 2.5·10⁸, δ = 8.8e-10: the lattices
    // [0.408161, 0.411694], 0.86 % wide, the closed form [0.407427, 0.408378], together
    // [0.408161, 0.408378]; q = 9.462e-8, σ = 0.341, T = 46,420,413, δ = 0.0116 (~4 sampled
    // steps): the lattices [0.009506, 0.010835] and the closed form [0.010789, 0.010931], each
    // too wide to answer, together [0.010789, 0.010835]. It costs the closed form's budget on
    // top, as a refusal of the lattices does.
    #[cfg(full_engine)]
    {
        // (After a lattice answer only where q is small enough for rare large losses to matter,
        // the bulk's spacing below 1e-6: at q = 5.169e-6, σ = 0.4132, T = 5.8·10⁸ — 6e-6 —
        // the lattices read [16.044714, 16.069428] and the closed form [16.027066, 16.076447]
        // in the 2 s it took.)
        let rare = jumps_rare(&live);
        if !first
            && lattices
                .as_ref()
                .map_or(true, |a| rare && wider_than(a.epsilon, tol))
        {
            closed = jumps_raw(&live, delta, w);
        }
        let limit = width_limit(&live);
        let got = combine(lattices, closed, limit);
        // Refused so far where the lattices had no rescue budget: again, with it (and the
        // closed form's bracket). The lattices' first try is repeated — the price of a refusal
        // avoided (q = 1.924e-6, σ = 0.3174, T = 7.9·10⁸, δ = 3.6e-13: ~6.5 s here) — but not
        // beyond the domain, where a refusal is allowed.
        if applies
            && early.is_none()
            && matches!(got, Err(Error::PldBudget { .. }))
            && !beyond_domain(&live, delta)
        {
            if let Ok(a) = combine(
                epsilon_lattices(phases, delta, tol, (WORK, true), exact, w),
                closed,
                limit,
            ) {
                return Ok(a);
            }
        }
        match got {
            Err(Error::PldBudget { reason }) => refusal(&live, delta, reason),
            r => r,
        }
    }
}

/// The phases that sample at all (q > 0): the others add no loss.
pub(super) fn live_phases(phases: &[Phase]) -> Vec<Phase> {
    phases.iter().copied().filter(|p| p.sgm.q() > 0.0).collect()
}

/// A certified upper bound on δ(0) of the composition of plain SGM add/remove phases (None for
/// any other): δ(0) is the total variation TV(P, Q), the same for both pairs (add and remove).
/// One step's χ²(P‖Q) is q²·(e^{1/σ²} − 1) exactly (P = (1 − q)Q + q·N(1, σ²) against
/// Q = N(0, σ²): χ² of a mixture with Q is q² times χ²(N(1, σ²)‖N(0, σ²))), and
/// 1 + χ² multiplies under composition. Then TV ≤ ½√χ² (Cauchy–Schwarz) and TV ≤ √(KL/2)
/// (Pinsker) with KL ≤ ln(1 + χ²): the smaller, raised by 1e-12 for rounding.
pub(super) fn tv_bound(phases: &[Phase]) -> Option<f64> {
    if phases.is_empty()
        || !(phases.iter()).all(|p| p.is_sgm() && p.adjacency == Adjacency::AddRemove)
    {
        return None;
    }
    let ln_1p_chi2: f64 = (phases.iter())
        .map(|p| {
            let (q, s) = (p.sgm.q(), p.sgm.sigma());
            p.steps as f64 * ln_1p(q * q * exp_m1(1.0 / (s * s)))
        })
        .sum();
    let tv = (0.5 * ln_1p_chi2)
        .sqrt()
        .min(0.5 * exp_m1(ln_1p_chi2).sqrt());
    tv.is_finite().then_some(tv * (1.0 + 1e-12))
}

/// Whether the closed form ([`jumps`]) applies: one plain SGM phase under add/remove adjacency.
#[cfg(full_engine)]
pub(super) fn jumps_apply(phases: &[Phase]) -> bool {
    matches!(phases, [p] if p.is_sgm() && p.adjacency == Adjacency::AddRemove)
}

/// The lattices' answer and the closed form's bracket, where there is one, intersected (both
/// certified); an answer where [`within_width_rule`], else the refusal's reason (a bracket that
/// disagrees is an error of its own).
#[cfg(full_engine)]
pub(super) fn combine(
    lattices: Result<EpsilonAnswer, Error>,
    closed: Option<EpsilonAnswer>,
    limit: f64,
) -> Result<EpsilonAnswer, Error> {
    let answerable = |b: Bracket| within_width_rule(b) || b.upper - b.lower <= limit * b.upper;
    match (lattices, closed) {
        (Ok(mut ans), Some(a)) => {
            if a.epsilon.upper < ans.epsilon.upper {
                ans.grid = a.grid;
            }
            ans.epsilon = intersect(ans.epsilon, a.epsilon)?;
            if answerable(ans.epsilon) {
                Ok(ans)
            } else {
                Err(Error::PldBudget {
                    reason: CANNOT_BRACKET,
                })
            }
        }
        (Ok(ans), None) if answerable(ans.epsilon) => Ok(ans),
        (Ok(_), None) => Err(Error::PldBudget {
            reason: CANNOT_BRACKET,
        }),
        (Err(Error::PldBudget { .. }), Some(a)) if answerable(a.epsilon) => Ok(a),
        (Err(e), _) => Err(e),
    }
}

/// The refusal of a call the lattices (and the closed form) could not answer: Bernstein's
/// bound where it is itself within the absolute width rule ([0, bound]), else the reason —
/// beyond the domain the accountant is built for, the refusal says so.
pub(super) fn refusal(
    live: &[Phase],
    delta: f64,
    reason: crate::engine::error::Refusal,
) -> Result<EpsilonAnswer, Error> {
    match bernstein::epsilon(live, delta) {
        Some(b) if b <= ABS_WIDTH => Ok(bernstein_answer(b)),
        _ if beyond_domain(live, delta) => Err(Error::PldBudget {
            reason: BEYOND_DOMAIN,
        }),
        _ => Err(Error::PldBudget { reason }),
    }
}

/// The width rule: 0.1 % of ε, or 1e-4 absolute below ε = 0.1 (the lattices stop
/// refining a bracket within it that the work left cannot narrow; the closed form stops there).
pub(super) fn meets_rule(lower: f64, upper: f64) -> bool {
    let w = upper - lower;
    w <= 1e-3 * upper || (upper < 0.1 && w <= ABS_WIDTH)
}

/// Whether a bracket is wider than both the width rule (0.1 % of ε, or 1e-4 below
/// ε = 0.1) and the caller's relative target `tol`.
#[cfg(full_engine)]
pub(super) fn wider_than(b: Bracket, tol: f64) -> bool {
    !meets_rule(b.lower, b.upper) && b.upper - b.lower > tol * b.upper
}

/// Whether one plain SGM phase is tried by its rare large losses first ([`jumps`]): tiny q
/// (the lattices' bulk spacing, b/16, below 1e-8) at σ < 0.8, where a step's loss has a
/// log-normal tail e^{1/σ²} > 4.7 times its bulk's scale, over 10⁶ steps and more. There the
/// lattices spent their whole budget (q = 2.1e-9, σ = 0.51, T = 5.8·10⁸: 0.69 s, refused) or
/// found no lower end (q = 4.9e-9, σ = 0.40, T = 7.7·10⁷), and the closed form brackets them in
/// 0.3–0.4 s (the lattices' half-budget try then adds 0.3 s). Over few steps the lattices'
/// brackets are the narrower (q = 2.1e-8, σ = 0.51, T = 38: 0.1 % wide against 2.4 %);
/// elsewhere the closed form is their fallback. (From σ = 0.6 on see [`first_wide`].)
#[cfg(full_engine)]
pub(super) fn jumps_first(phases: &[Phase]) -> bool {
    long_sharp(phases).is_some() && bulk_scale(phases).is_some_and(|b| b / BULK_SHARE < 1e-8)
}

/// Whether one plain SGM phase is also tried by its rare large losses first on the ε side,
/// though the lattices' bulk spacing is above 1e-8 ([`jumps_first`]): σ < 0.6 over 10⁶ steps
/// and more wherever rare large losses may matter ([`jumps_rare`], the bulk spacing below
/// 1e-6). There the lattices mostly answered within the rule, but slowly, and the closed form,
/// tried after them, often narrowed their bracket. Draws there (q from 1e-8, σ ∈ [0.3, 0.6],
/// T ∈ [10⁶, 10⁹], δ ∈ [1e-15, 0.1]; each pair of figures: lattices first, closed form first):
/// with the bulk spacing in [1e-8, 3e-7], two samples of 40 took over a second 18 and 11 times
/// against 3 and 2 (up to 1.76 s against 1.02 s at q = 2.522e-8, σ = 0.3983, T = 9.1·10⁸,
/// δ = 9.1e-5); with it in [3e-7, 1e-6], 30 draws 7 times against 1 (1.29 s both: q = 3.15e-6,
/// σ = 0.5557, T = 8.5·10⁸). Every bracket stayed within the rule; most narrowed. Where the
/// closed form's is wider than the rule the lattices get the whole budget (q = 3.692e-7,
/// σ = 0.5461, T = 4.6·10⁸, δ = 2.33e-5: the closed form [0.120784, 0.120959], 0.14 %; with
/// the lattices on half the budget [0.120784, 0.120960], on the whole [0.120784, 0.120887]).
/// The privacy profile keeps [`jumps_first`]: its re-reads in closed form cost seconds.
#[cfg(full_engine)]
pub(super) fn jumps_near(phases: &[Phase]) -> bool {
    long_sharp(phases).is_some_and(|p| p.sgm.sigma() < 0.6) && jumps_rare(phases)
}

/// One plain SGM phase of 10⁶ steps or more at σ < 0.8 (a step's loss then has a log-normal
/// tail e^{1/σ²} > 4.7 times its bulk's scale): where the closed form may go first.
#[cfg(full_engine)]
pub(super) fn long_sharp(phases: &[Phase]) -> Option<&Phase> {
    match phases {
        [p] if p.is_sgm() && p.steps >= 1_000_000 && p.sgm.sigma() < 0.8 => Some(p),
        _ => None,
    }
}

/// Between σ = 0.6 and 0.8 the closed form tried first answers only where it meets the issue's
/// goal (0.04 % of ε, or 2e-5 below ε = 0.1), and the lattices, tried after it, get the whole
/// budget: the corner sweep's runs there (`benches/epsilon_sweep.py --corner`) spent the budget
/// on the lattices and were then answered by the closed form (q = 5.218e-9, σ = 0.7421,
/// T = 8.2·10⁸, δ = 3.2e-14: 6.2 → 2.9 s, the same [0.002062, 0.002069]; three more of
/// 5.3, 5.0 and 4.7 s now 1.6–2.1 s), but where the lattices answer on their own their bracket
/// may be narrower (q = 1.969e-8, σ = 0.7965: the closed form [0.004629, 0.004715], with the
/// lattices [0.004629, 0.004638], 3.0 → 4.4 s).
#[cfg(full_engine)]
pub(super) fn first_wide(phases: &[Phase]) -> bool {
    matches!(phases, [p] if p.sgm.sigma() >= 0.6)
}

/// Whether the privacy profile of one plain SGM add/remove phase is read in closed form first
/// (where rare large losses may matter, [`jumps_rare`], at σ < 0.8 over 10⁶ steps and more,
/// with at most 50 sampled steps expected over the run, q·T ≤ 50): there the lattices spent the
/// call before the closed form answered alone (q = 9.462e-8, σ = 0.341, T = 46,420,413, ~4
/// sampled steps, and q = 6.214e-7, σ = 0.5486, T = 69,744,471, ~43: 5.1 → 2.9 s and
/// 4.2 → 2.5 s natively).
#[cfg(full_engine)]
pub(super) fn few_jumps(phases: &[Phase]) -> bool {
    jumps_rare(phases) && long_sharp(phases).is_some_and(|p| p.sgm.q() * p.steps as f64 <= 50.0)
}

/// Whether one plain SGM add/remove phase is one whose rare large losses may matter (the
/// bulk's spacing below 1e-6): the closed form is tried after a lattice answer wider than the
/// rule, and the privacy profile is read in closed form where the lattices spend the call
/// (q = 9.462e-8, σ = 0.341, T = 46,420,413, ~4 sampled steps, and q = 6.214e-7, σ = 0.5486,
/// T = 69,744,471, ~43: the page's profile was unavailable).
#[cfg(full_engine)]
pub(super) fn jumps_rare(phases: &[Phase]) -> bool {
    jumps_apply(phases) && bulk_scale(phases).is_some_and(|b| b / BULK_SHARE < 1e-6)
}

/// One plain SGM phase: the bracket from its rare large losses in closed form ([`jumps`]):
/// the remove pair's lower end, and the larger of its upper end and the add pair's (a
/// certified upper end of its ε — from the same small pair, reversed, or Bernstein's bound),
/// whatever its width (the caller holds it to [`within_width_rule`], or intersects it with the
/// lattices' bracket).
#[cfg(full_engine)]
pub(super) fn jumps_raw(phases: &[Phase], delta: f64, w: &Work) -> Option<EpsilonAnswer> {
    let [p] = phases else { return None };
    if !jumps_apply(phases) || check_delta(delta).is_err() {
        return None;
    }
    let (b, add) = jumps_bracket(p, delta, w).ok()?;
    let add =
        add.min(bernstein::epsilon_in(phases, delta, Direction::Add).unwrap_or(f64::INFINITY));
    // ε is the larger of the two pairs' ε: at most the larger upper end, at least the remove
    // pair's lower end. Where the add pair is not ruled out its upper end may lead — at
    // q = 3.359e-7, σ = 0.6228, T = 100,601,530, δ = 0.00322 the remove pair reads
    // [0.0033138, 0.0033574] and the add pair's upper end is 0.0033643, 0.2 % above (it was
    // refused for that): [0.0033138, 0.0033643] is within the rule.
    Some(EpsilonAnswer {
        epsilon: Bracket {
            upper: b.upper.max(add),
            lower: b.lower,
        },
        grid: Grid {
            spacing: 0.0,
            fft_len: 0,
            worst: if add > b.upper { "add" } else { "remove" },
        },
    })
}

/// The remove pair's bracket from rare large losses in closed form alone ([`jumps`]; one plain
/// SGM run), and the certified upper end it finds for the add pair's ε: for tests that hold
/// them against the lattices' brackets and against independent references.
#[cfg(full_engine)]
#[doc(hidden)]
pub fn epsilon_by_jumps(sgm: Sgm, steps: u64, delta: f64) -> Result<(Bracket, f64), Error> {
    let w = &Work::new(super::WORK);
    jumps_bracket(&Phase::new(sgm, steps)?, check_delta(delta)?, w)
}

/// [`jumps::bracket`] for one plain SGM phase, capped by the certified upper ends in hand: exact
/// RDP's ε and Bernstein's bound for the remove pair.
#[cfg(full_engine)]
pub(super) fn jumps_bracket(p: &Phase, delta: f64, w: &Work) -> Result<(Bracket, f64), Error> {
    let phases = std::slice::from_ref(p);
    let (cap, _) = rdp_epsilon(phases, delta);
    let bern = bernstein::epsilon_in(phases, delta, Direction::Remove);
    jumps::bracket(p, delta, cap.min(bern.unwrap_or(f64::INFINITY)), w)
}

/// The answer [0, 0], `worst` saying why.
pub(super) fn zero_answer(worst: &'static str) -> EpsilonAnswer {
    EpsilonAnswer {
        epsilon: Bracket {
            upper: 0.0,
            lower: 0.0,
        },
        grid: Grid {
            spacing: 0.0,
            fft_len: 0,
            worst,
        },
    }
}

/// The answer [0, b] from Bernstein's bound b alone.
pub(super) fn bernstein_answer(b: f64) -> EpsilonAnswer {
    EpsilonAnswer {
        epsilon: Bracket {
            upper: b,
            lower: 0.0,
        },
        grid: Grid {
            spacing: 0.0,
            fft_len: 0,
            worst: "either (Bernstein's bound)",
        },
    }
}

/// The lattices' ε bracket ([`lattices_epsilon`]), the ladder's core∗tail products also
/// forming their lower measure contracted after the product ([`compose::lowering_after`]):
/// the lower end of a long run at small σ was lost there — q = 5.714e-6, σ = 0.3577,
/// T = 8.2·10⁸, δ = 3.16e-13 read [82.536, 83.882] after the rescue pass and was refused; with
/// it [83.831005, 83.881977] in 2 s where the refusal took 7 s; q = 1.924e-6, σ = 0.3174,
/// T = 7.9·10⁸ from [70.250011, 70.922940] (6.9 s) to [70.874879, 70.922152] (2.2 s). Only on
/// the ε side: the δ side of q = 4.9e-9, σ = 0.4, T = 7.7·10⁷ at ε = 1e-4 spent its budget on
/// the extra products and read [1.6e-4, 6.9e-2] where it reads [2.9e-4, 3.5e-4] without.
/// And only where a phase's loss is sharp ([`LOWER_SIGMA`]).
pub(super) fn epsilon_lattices(
    phases: &[Phase],
    delta: f64,
    tol: f64,
    work: (f64, bool),
    exact: Exact,
    w: &Work,
) -> Result<EpsilonAnswer, Error> {
    #[cfg(full_engine)]
    if phases
        .iter()
        .any(|p| p.sgm.q() > 0.0 && p.guide().sigma() < LOWER_SIGMA)
    {
        return w.lowering_after(compose::Lowering::AtTilt, || {
            lattices_epsilon(phases, delta, tol, work, exact, w)
        });
    }
    lattices_epsilon(phases, delta, tol, work, exact, w)
}

/// The σ (of a phase's guide: σ/k for a group of k, σ/2 under replace-one) below which the ε
/// side's lattices contract their lower measure after each product ([`epsilon_lattices`]): a
/// step's loss there has a log-normal tail e^{1/σ²} > 4.7 times its bulk's scale. Above it the
/// extra products cost time and bought nothing the width rule asks: over the domain sweep
/// (`benches/epsilon_sweep.py`, 284 runs) with and without them everywhere, every run whose
/// bracket moved past the rule, or by more than a few percent of its width, had σ < 0.8 (q =
/// 5.169e-6, σ = 0.4132: 0.15 % → 0.43 %; q = 1.285e-5, σ = 0.3133: 0.06 % → 0.64 %; in the
/// corner q = 6.296e-8, σ = 0.69: 0.034 % → 0.10 %), while q = 1e-4, σ = 1, T = 10⁵ took 55 ms
/// with them and 46 ms without, its bracket [0.131842, 0.131887] either way (to 6 digits).
#[cfg(full_engine)]
pub(super) const LOWER_SIGMA: f64 = 0.8;

/// The coarsest first spacing, in bulk spacings ([`bulk_spacing`]), where the bulk's own is
/// not the first spacing already (`lattices_epsilon`). Over the typical class's 200 runs
/// (those of `cargo bench --bench engine -- class_typical`: q 1e-3 … 0.1, σ 0.6 … 5,
/// T 10² … 10⁵; two builds side by side: `benches/typical_ab.py`) it
/// changes the first pass of 14, all with q ≤ 3e-3, σ ≤ 1 and T ≤ 1000: together 532 → 336 ms
/// (best of three each, interleaved), the slowest of them 119 → 19 ms, two 1.5–2× slower (q =
/// 1e-3, σ = 0.8, T = 100, δ = 1e-5: 22 → 34 ms, its first pass within the rule but not the
/// goal). The domain sweep (`benches/epsilon_sweep.py`, 284 runs) stays within the rule, all
/// under 1 s. Twice (K = 2) was slower on the sum, four times left the slowest run as it was.
const FIRST_BULK: f64 = 3.0;

/// The lattices' ε bracket; the input is taken as checked ([`epsilon_phases_at`] checks it),
/// `exact` is exact RDP at `delta` for its live phases ([`exact_rdp`]).
pub(super) fn lattices_epsilon(
    phases: &[Phase],
    delta: f64,
    tol: f64,
    (work, rescue): (f64, bool),
    exact: Exact,
    w: &Work,
) -> Result<EpsilonAnswer, Error> {
    w.budget(work);
    if phases.iter().all(|p| p.sgm.q() == 0.0) {
        return Ok(zero_answer("remove"));
    }
    let phases: Vec<Phase> = phases.iter().copied().filter(|p| p.sgm.q() > 0.0).collect();
    if let Some(mu) = gaussian_mu(&phases) {
        return Ok(EpsilonAnswer {
            epsilon: gauss::epsilon_bracket(mu, delta),
            grid: Grid {
                spacing: 0.0,
                fft_len: 0,
                worst: "remove",
            },
        });
    }
    let t = total_steps(&phases);
    let Exact {
        eps: eps_rdp,
        alpha,
        cap,
    } = exact;
    // Bernstein's inequality bounds ε from the loss's first two moments: where that alone is
    // within the absolute goal (tiny q, large σ: the lattices' tilt runs away there) it is
    // the answer, [0, bound]; elsewhere it caps the upper end as exact RDP does.
    let bern = bernstein::epsilon(&phases, delta);
    // The add pair's own (it can rule that pair out without composing it).
    #[cfg(full_engine)]
    let bern_add = bernstein::epsilon_in(&phases, delta, Direction::Add).unwrap_or(f64::INFINITY);
    if let Some(b) = bern.filter(|&b| b <= ABS_TOL) {
        return Ok(bernstein_answer(b.min(cap.max(0.0))));
    }
    // Exact RDP's certified ε of 0 (a δ above δ(0): q = 6.2e-9, σ = 0.38, T = 2.1·10⁸,
    // δ = 0.079, whose δ(0) is 1e-3) is the answer, [0, 0]; the lattices, aimed at it, were
    // refused.
    if cap <= 0.0 {
        return Ok(zero_answer("either (exact RDP's ε is 0)"));
    }
    let cap = cap.min(bern.unwrap_or(f64::INFINITY));
    // The tighter of the two upper bounds steers the grid and the tilt (with RDP's orders
    // capped, its ε can be 100× the answer at tiny q and large σ, and a tilt aimed there ran
    // away to its cap).
    let eps_rdp = eps_rdp.min(bern.unwrap_or(f64::INFINITY));
    // (A spacing learnt from a related call, where one is given: [`Work::starting_at`].)
    let mut d = w
        .start()
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or_else(|| initial_spacing(eps_rdp, alpha, t, tol), on_octave_grid);
    // Small q: a spacing that resolves the losses carrying almost all of P from the start
    // (without it the first pass finds no lower bound, and costs what the next one needs) —
    // where that spacing is below 1e-4 (at MNIST's q it is 2.9e-4 and the lower bound holds
    // without it: the chart's coarser checkpoints would only get slower).
    let bulk = bulk_scale(&phases);
    let finest = finest_spacing(t, split_share(&phases));
    // Elsewhere at most FIRST_BULK of those spacings: coarser, the first pass of a short run
    // at small σ found no lower end and cost what the next one needed (q = 1e-3, σ = 0.6,
    // T = 1000, δ = 1e-10: no lower end at Δ = 1.1e-3, 4.7 bulk spacings, then
    // [4.733146, 4.733622] at 2.4e-4, 119 ms; at 7.3e-4, one pass, [4.733252, 4.733731]
    // in 19 ms).
    if let Some(b) = bulk.filter(|&b| b / BULK_SHARE < 1e-4) {
        d = d.min(bulk_spacing(b, finest));
    } else if let Some(b) = bulk {
        d = d.min(FIRST_BULK * bulk_spacing(b, finest));
    }
    let clt = bulk.and_then(|_| central_limit_epsilon(&phases, delta));
    let eta = eta_for(delta, t, eps_rdp, alpha);
    let eta_law = eta_budget(delta, t, eps_rdp, alpha);
    // A coarse continuation's spacing: a 4096th of the ε known so far (`known`) and of the
    // central limit's spread of the composed small losses, √T·bulk (the rare large losses that
    // land on it move ε by their spacing, so it must be small beside ε; and a 256th left
    // q = 1e-5, σ = 0.6, T = 10⁸ at [1.4987, 1.5201], a 4096th gives [1.5062, 1.5140]).
    let tail_spacing = |known: f64| bulk.map(|b| known.min(b * t.sqrt()) / 4096.0);
    // The first pass's guess at ε (where the tilt is aimed; see `guess` below).
    let first_guess = clt.map_or(eps_rdp * 0.93, |c| c.min(eps_rdp * 0.93));
    // At small q, the bulk's spacing is a first pass that the width then refines (every
    // large-dataset class took two passes); the width that spacing will read follows from the
    // tilt, so a spacing aimed at the goal is one pass ([`aimed_spacing`]).
    #[cfg(full_engine)]
    if w.start().is_none() && bulk.is_some_and(|b| b / BULK_SHARE < 1e-4) {
        let aim = Aim {
            etas: (eta, eta_law),
            tail_d: tail_spacing(eps_rdp),
            guess: first_guess,
            start: alpha - 1.0,
            tol,
        };
        d = aimed_spacing(&phases, d, &aim, w).max(finest);
    }
    let mut prev_d = d;
    let mut best: Option<EpsilonAnswer> = None;
    let mut cut = false;
    // The smallest certified upper end of the add pair's ε found so far (any pass).
    let add_seen = std::cell::Cell::new(f64::INFINITY);
    let saw_add = |u: f64| add_seen.set(add_seen.get().min(u));
    // `rescue`: whether a refinement bound for a refusal may take one fresh budget (below);
    // `rescued`: whether it did.
    let mut rescued = false;
    // Whether the last pass read the remove pair in one FFT ([`TAIL_AFTER_ONE_FFT`]).
    let one_fft = std::cell::Cell::new(false);
    for pass in 0..=REFINE {
        let left = w.left();
        // While no lower bound above 0 has been found (small q: the ε is made of losses of
        // order q, far below a lattice step fine enough for the whole loss range), the
        // lattices are cut where the P-mass above is at most 1e-3·δ/T per step: valid for both
        // ends (the pessimistic remainder goes to +∞ and is charged, ≤ 1e-3·δ in all; the
        // optimistic one is rounded down onto the last point), and the much shorter range
        // affords a spacing of the order of those losses.
        // Once cut, the lattices stay cut: the lower bound was found on the shorter range, and
        // the next, finer pass needs it even more (q = 1e-5, σ = 0.6: the full range at the
        // spacing that narrows the bracket is wider than the largest FFT).
        cut |= best.is_some_and(|b| b.epsilon.lower <= 0.0);
        let eta = if cut { eta.max(1e-3 * delta / t) } else { eta };
        let tail_d = tail_spacing(best.map_or(eps_rdp, |b| b.epsilon.upper));
        let attempt = |d: f64| -> Result<(f64, f64, usize, &'static str), Error> {
            // Remove first; the add direction is first tried on a lattice eight, then four times
            // as coarse: if even its (looser) upper bound is below the remove direction's,
            // it cannot change the answer (true_add ≤ its upper ≤ remove's upper, and
            // the lower bound of the maximum is at least remove's lower).
            // A refinement tilts at the bracket found (one composition where the RDP guess
            // took two: q = 1e-6, σ = 1, T = 10⁸ then ran out of work before the add pair).
            // Without a lower bound yet, at small q, the central limit's ε (μ-GDP with
            // μ² = Σ T·q²·(e^{1/σ²} − 1)) steers instead, where it is below: it only aims the
            // tilt (q = 1.8e-9, σ = 1.23, T = 7.3·10⁸: aimed at Bernstein's 2.9e-4, the
            // composition read 3.4e-4 where ε is near 1.2e-4).
            // The first pass at small q aims at the central limit's ε where it is below exact
            // RDP's (it is an estimate, used only to aim): RDP sat 2–8× above the answer on the
            // large-dataset classes (q = 2e-5, σ = 1, T = 5·10⁶, δ = 1e-6: 0.497 against 0.2246,
            // the central limit 0.2243), and the tilt aimed there cost CIFAR a second pass
            // (`class_cifar` 7.9 → 4.0 ms) and left q = 1e-6, σ = 0.8, T = 10⁸ at 0.17 % wide
            // (now 0.028 %, a second pass affordable from a cheaper first).
            let guess = match best {
                Some(b) if b.epsilon.lower <= 0.0 => {
                    clt.map_or(b.epsilon.upper, |c| c.min(b.epsilon.upper))
                }
                Some(b) => b.epsilon.upper,
                None => first_guess,
            };
            let rem = Lattices::build(&phases, Direction::Remove, d, (eta, eta_law), tail_d, w)?;
            // The add pair's first coarse read (8Δ, one composition tilted at the guess),
            // beside the remove pair's: it does not need the remove pair's answer, and where
            // its certified upper end is already below the remove pair's the add pair is
            // settled (MNIST: 2.2608 against 2.3819). Only before any add bound is known, for
            // a pair that is not its own reverse and not read reversed; where it does not
            // settle the pair, it is dropped and the reads below run as before, on the same
            // budget (its work is not charged: a pass bound by the budget then reads what it
            // read — charged, the random allocation at σ = 1.5, t = 782, 30 epochs, δ = 1e-10
            // read [0.856635, 0.877837] where it reads [0.856637, 0.877479]). Natively on a
            // second thread, on a sibling of the call's Work (its budget and modes); where it
            // settles the pair its spending is charged after the remove pair's read. The wasm
            // runs it after that read, with the same answers.
            #[cfg(full_engine)]
            let spec_on = t <= SPEC_STEPS
                && add_seen.get().is_infinite()
                && !symmetric(&phases)
                && !rem.reads_reversed();
            #[cfg(not(full_engine))]
            let spec_on = false;
            let spec = |ws: Work| {
                let read = Lattices::build(
                    &phases,
                    Direction::Add,
                    8.0 * d,
                    (eta, eta_law),
                    tail_d,
                    &ws,
                )
                .and_then(|c| {
                    eps_direction_under(&c, delta, (guess, f64::INFINITY), alpha, tol, &ws)
                });
                (read.ok(), ws.left())
            };
            let before = w.left();
            let (remove_read, spec_read) = beside(
                || eps_direction(&rem, delta, guess, alpha, tol, w),
                spec_on.then(|| {
                    let ws = w.sibling();
                    move || spec(ws)
                }),
            );
            let (mut u, mut l, mut n) = remove_read?;
            one_fft.set(!w.laddered());
            // Exact RDP can sit far above the tight ε (q = 1e-5, σ = 1.5, T = 10⁶: 0.133
            // against 0.0197), and a composition tilted there can resolve the wrong tail: a
            // refinement that found no lower bound, or an upper one far above the last pass's,
            // also tilts at the bracket found (both brackets are certified: intersected).
            if let Some(b) =
                best.filter(|b| (l <= 0.0 || u > 1.5 * b.epsilon.upper) && b.epsilon.upper != guess)
            {
                if let Ok((u2, l2, n2)) = eps_direction(&rem, delta, b.epsilon.upper, alpha, tol, w)
                {
                    (u, l, n) = (u.min(u2), l.max(l2), n.max(n2));
                    overlap(u, l)?;
                }
            }
            let mut up = (u, l, n, "remove");
            // An upper end for the add pair certified by an earlier pass stays certified: where
            // it is below this pass's remove upper end, the add pair cannot be the larger (q =
            // 1e-6, σ = 0.6, T = 10⁸: the reversed reading cost a refinement a third of the
            // call's budget, to find again what the first pass had).
            if add_seen.get() <= u {
                return Ok(up);
            }
            // The add direction's answer is near the remove direction's (its loss is
            // bounded by −ln(1−q) per step, so the RDP guess can be far off).
            // A pair that is its own reverse (replace-one): the add direction is this one;
            // a second tilt, aimed at the answer, on the same lattices instead.
            #[cfg(full_engine)]
            if symmetric(&phases) {
                let (u2, l2, n2) = eps_direction(&rem, delta, u, alpha, tol, w)?;
                overlap(u.min(u2), l.max(l2))?;
                return Ok((u.min(u2), l.max(l2), n.max(n2), "remove"));
            }
            // A two-resolution remove lattice (small q) reads the add pair too, reversed: the
            // add pair's own lattice has its long tail below, where no coarse part goes (q =
            // 1e-4, σ = 0.6, T = 10⁸: 83,000 points, and the budget ran out).
            #[cfg(full_engine)]
            if rem.reads_reversed() {
                let (ua, na) = eps_reversed(&rem, delta, (u, up.0), bern_add, w)?;
                saw_add(ua);
                up.2 = up.2.max(na);
                if ua > up.0 {
                    up.0 = ua;
                    up.3 = "add";
                }
                return Ok(up);
            }
            // (8Δ first: MNIST's add pair reads at most 2.2608 there, 2.2479 at 4Δ, against the
            // remove pair's lower end 2.3812; half the points and half the window of 4Δ: the call
            // took 52.4 M instructions where it took 56.7 M, callgrind, with the same bracket.)
            // (Then 2Δ before Δ: q = 2e-5, σ = 1, T = 5·10⁶, δ = 1e-6 read the add pair at
            // 0.22513 on 4Δ, above the remove pair's 0.22477, and its Δ lattice took 40 % of the
            // call; 2Δ reads 0.22416 for half that: `class_q2e-5_T5e6` 140 → 108 ms.)
            if let Some((Some((c, _, cn)), left)) =
                spec_read.filter(|r| r.0.is_some_and(|a| a.0 <= up.0))
            {
                w.charge(before - left);
                saw_add(c);
                up.2 = up.2.max(cn);
                return Ok(up);
            }
            let mut cu = f64::INFINITY;
            for f in [8.0, 4.0, 2.0] {
                let read =
                    Lattices::build(&phases, Direction::Add, f * d, (eta, eta_law), tail_d, w)
                        .and_then(|coarse| {
                            eps_direction_under(&coarse, delta, (u, up.0), alpha, tol, w)
                        });
                let (c, _, cn) = match read {
                    Ok(r) => r,
                    // (A coarser lattice only saves work: where 8Δ or 2Δ runs out or its window
                    // does not fit, the next; brackets that disagree discredit every lattice.)
                    Err(Error::PldBudget { reason }) if f != 4.0 && reason != DISAGREE => continue,
                    Err(e) => return Err(e),
                };
                saw_add(c);
                up.2 = up.2.max(cn);
                cu = cu.min(c);
                if cu <= up.0 {
                    break;
                }
            }
            if cu > up.0 {
                let add = Lattices::build(&phases, Direction::Add, d, (eta, eta_law), tail_d, w)?;
                let (u, l, n) = eps_direction(&add, delta, cu, alpha, tol, w)?;
                saw_add(u);
                if u > up.0 {
                    up.0 = u;
                    up.3 = "add";
                }
                up.1 = up.1.max(l);
                up.2 = up.2.max(n);
            }
            Ok(up)
        };
        #[cfg(full_engine)]
        let tail_cap =
            (pass > 0 && one_fft.get() && t < compose::LONG_RUN).then_some(TAIL_AFTER_ONE_FFT);
        // (Without the ladder, no tail.)
        #[cfg(not(full_engine))]
        let tail_cap = None;
        let attempt = |d: f64| w.tail_at_most(tail_cap, || attempt(d));
        let mut up = attempt(d);
        // A window too wide for the FFT on the first pass: a coarser grid (the bracket
        // widens like Δ², the window shrinks like 1/Δ) may still be within MAX_WIDTH. On a
        // refinement, a spacing halfway (geometrically) to the last pass's.
        let mut tries = 0;
        while tries < COARSEN
            && matches!(up, Err(Error::PldBudget { reason }) if reason == TOO_WIDE)
        {
            match best {
                None => d *= 2.5,
                Some(_) if tries < 2 => d = (d * prev_d).sqrt(),
                Some(_) => break,
            }
            tries += 1;
            up = attempt(d);
        }
        let up = match up {
            Ok(up) => up,
            // A refinement that does not fit the budget keeps the last bracket; brackets that
            // disagree discredit the composition on every lattice.
            Err(e) if pass == 0 || best.is_none() => return Err(e),
            Err(Error::PldBudget { reason }) if reason == DISAGREE => {
                return Err(Error::PldBudget { reason })
            }
            // A refinement that ran out where the bracket found would be refused (wider than
            // 1 %): once, a pass 0.8× finer than that bracket's, on a budget of its own — an
            // answer within the 1 % before a narrower one. q = 1.924e-6, σ = 0.3174,
            // T = 7.9·10⁸, δ = 3.6e-13: 1.5 % wide after the first pass, the 9× finer pass
            // asked ran out and the call was refused; 0.8× finer reads [70.250011, 70.922940],
            // 0.95 %. (The finer pass asked is still tried first: at q = 5.137e-8, σ = 0.3048,
            // T = 1,681,634, δ = 0.00231 it fits, where the estimate said it would not, and
            // reads [0.001159, 0.001234]; 0.8× finer reads [0.001116, 0.001233], refused.)
            // Since the ε side contracts the ladder's lower measure after each core∗tail
            // product (above) both runs answer without it ([70.874879, 70.922152] in the first
            // pass); it stays the fallback of a refinement bound for a refusal.
            Err(_) if rescue && !rescued && best.is_some_and(|b| !within_width_rule(b.epsilon)) => {
                rescued = true;
                w.budget(work);
                d = powf(2f64, (16.0 * log2(0.8 * prev_d)).round() / 16.0).max(finest);
                continue;
            }
            Err(_) => break,
        };
        // The exact-RDP ε is itself a certified upper bound, and every pass's bracket is
        // certified: the answer is their intersection.
        let mut upper = up.0.min(cap.max(0.0)).max(0.0);
        overlap(upper, up.1)?;
        let mut lower = up.1.max(0.0).min(upper);
        // (A pass without a lower bound says nothing about the next.)
        let prev_width = best
            .filter(|b| b.epsilon.lower > 0.0 && up.1 > 0.0)
            .map(|b| b.epsilon.upper - b.epsilon.lower);
        let mut grid = Grid {
            spacing: d,
            fft_len: up.2,
            worst: up.3,
        };
        if let Some(b) = best {
            if b.epsilon.upper < upper {
                upper = b.epsilon.upper;
                grid = b.grid;
            }
            overlap(upper, lower.max(b.epsilon.lower))?;
            lower = lower.max(b.epsilon.lower).min(upper);
        }
        best = Some(EpsilonAnswer {
            epsilon: Bracket { upper, lower },
            grid,
        });
        let width = (upper - lower) / upper.max(1e-300);
        // (After a rescue pass, above, no more: its budget was for an answer, not a narrower one.)
        if width <= tol || upper - lower <= ABS_TOL || upper == 0.0 || rescued {
            break;
        }
        // Within the rule and near the goal (at most 1.5 × `tol`): a refinement would only
        // shave the last few per cent of the width, at the cost of a whole pass (CIFAR, q =
        // 256/50000, σ = 1, T = 2930: 0.042 % after the first pass, a second pass 11 % finer
        // read 0.034 % and took 14.6 ms where the first took 7).
        if width <= 1.5 * tol && meets_rule(lower, upper) {
            break;
        }
        // A finer grid that did not narrow the bracket by a third will not (the width is
        // then set by the FFT's rounding or the tails, not by Δ).
        if prev_width.is_some_and(|w| upper - lower > 0.67 * w) {
            break;
        }
        // Δ² scales the bias; never shrink by more than 10× in one pass, and keep
        // Δ ≤ ε/200 now that ε is known to the bracket's precision — but not below
        // ABS_TOL for a tiny ε, where the absolute rule decides and a finer lattice only
        // widens the composed window (q = 1e-6, σ = 1, T = 100: ε ≤ 1.3e-5 at Δ = 2e-5,
        // where ε/200 asked for a window no FFT holds).
        // The bracket's width goes like Δ^p: p = 2 where the discretization's bias decides;
        // measured from the last two passes where both had a lower end (q = 1e-6, σ = 0.6,
        // T = 10⁸: p ≈ 0.8, and a refinement aimed with p = 2 took three passes to a width the
        // budget then could not reach).
        let p = match prev_width {
            Some(w0) if prev_d > d * 1.05 && upper - lower > 0.0 => {
                (ln(w0 / (upper - lower)) / ln(prev_d / d)).clamp(0.7, 2.0)
            }
            _ => 2.0,
        };
        let wanted = (d * powf(0.85 * tol / width, 1.0 / p).max(0.1))
            .min((upper / 200.0 * (tol / TOL).sqrt()).max(ABS_TOL))
            .max(finest);
        // Without a lower bound the width says nothing of the spacing needed; where the bulk
        // was not resolved (Δ above its sixteenth), the bulk's spacing is the refinement, not
        // the 10× finer one the width asks: q = 1e-3, σ = 0.6, T = 1000, δ = 1e-10 found no
        // lower end at Δ = 1.1e-3 (a third of the bulk's scale) and refined to 1.2e-4 for
        // [4.733337, 4.733551], 0.0045 % wide, in 140 ms; at the bulk's 2.4e-4, ≈ 0.02 % in
        // a third of the time. Where the bulk was resolved already, 10× finer as before.
        // (Where bs ≥ Δ the width's spacing is already below bs: wanted ≤ Δ here, or = finest.)
        let wanted = match bulk.map(|b| bulk_spacing(b, finest)) {
            Some(bs) if lower <= 0.0 && bs < d => bs.max(wanted),
            _ => wanted,
        };
        // Refine only as far as the work left affords: a pass's work grows like 1/Δ
        // (lattice points and window), so from this pass's cost the finest spacing that
        // fits half of what is left follows (a margin: the window grows faster than 1/Δ near the
        // FFT limit). A refinement asked beyond it used to spend the
        // budget and refuse (q = 1e-5, σ = 0.75, T = 10⁶: 12 % wide after the first pass,
        // where a 4× finer grid fits and brings it within the rule).
        let spent = left - w.left();
        let fits = d * spent / (0.5 * w.left()).max(1e-300);
        // (When not even 30 % finer looks affordable, the refinement asked is still tried:
        // the estimate is rough — much of a pass's work does not grow with 1/Δ — a pass a few
        // per cent finer would not narrow the bracket, and a pass that runs out keeps the
        // bracket found. q = 1e-5, σ = 0.6, T = 10⁸: 0.15 % wide after a 7 % finer pass,
        // 0.055 % after the 2.3× finer one asked.)
        // A bracket already within the width rule is not refined by a pass that the work left
        // is estimated not to afford even at this pass's spacing: such a pass ran out and kept
        // the bracket found, having spent 0.3–1.3 s (the `--mid` sweep's slowest calls: q =
        // 8.886e-6, σ = 0.4732, T = 6·10⁸, δ = 2.3e-9 at [13.723709, 13.729494], 0.042 %, took
        // 1.6 s for its first pass and 0.3 s for a second that ran out).
        // Nor by one that would take the call past half its budget (from this pass's cost, a
        // pass's work growing like 1/Δ): toward the goal (`tol`) only where that is cheap. The
        // first pass of q = 1.043e-5, σ = 0.4833, T = 111,233,572, δ = 2.46e-6 read [4.544329,
        // 4.546749], 0.053 %, on 1.8·10⁸ units; the refinement asked took it from 0.4 s to 1.1 s
        // for [4.544854, 4.546511].
        let dear = work - w.left() + spent * d / wanted > 0.5 * work;
        if (fits > d || dear) && meets_rule(lower, upper) {
            break;
        }
        prev_d = d;
        // (Without a lower bound there is nothing to keep: the spacing that can find one.)
        d = if fits < 0.7 * d && lower > 0.0 {
            wanted.max(fits)
        } else {
            wanted
        };
        // On a grid of 1/16 octave: the aim follows measured widths, and a rounding difference
        // (the wasm's FFT and libm against the native ones) would otherwise move every later
        // pass, and the page's bracket away from the command line's (q = 1e-4, σ = 1,
        // T = 10⁸: 7e-6 apart).
        // Not below [`finest_spacing`], before (`wanted`) and after the rounding to the grid
        // (q = 1e-6, σ = 5, T = 10⁹ refined to 3.4e-9 read the add pair's upper end 25 % high
        // and was refused).
        d = on_octave_grid(d).max(finest);
        // The same spacing again (at its floor, 1e-9) would repeat this pass exactly (q = 1.8e-9,
        // σ = 1.23, T = 7.3·10⁸ spent three passes so).
        if d >= prev_d * (1.0 - 1e-9) {
            break;
        }
    }
    // The loop runs at least once and either sets `best` or returns.
    #[cfg_attr(not(full_engine), allow(unused_mut))]
    let mut ans = best.ok_or(Error::PldBudget {
        reason: crate::engine::error::Refusal::NoGridPass,
    })?;
    // One plain SGM phase whose bracket is still wide (tiny q over very many steps, where the
    // lattices cannot resolve a step's losses): the linear statistic's certified lower end.
    #[cfg(full_engine)]
    if let [p] = phases.as_slice() {
        let (u, l) = (ans.epsilon.upper, ans.epsilon.lower);
        if p.is_sgm() && u - l > tol * u && u - l > ABS_TOL {
            let low = linear::epsilon_lower(p.sgm.q(), p.sgm.sigma(), p.steps, delta, u);
            ans.epsilon.lower = l.max(low.min(u));
        }
    }
    Ok(ans)
}

/// The most steps (in all) for which the add pair's first coarse read runs beside the remove
/// pair's (`lattices_epsilon`). Longer runs compose on the ladder, whose products already
/// take both threads, and over the domain sweep's draws of 2·10⁷ … 9·10⁸ steps the read beside
/// them, rarely settling the pair there, cost 0.03–0.04 s of 0.2–0.35 s
/// (`benches/epsilon_sweep.py`, two rounds of each build).
#[cfg(full_engine)]
const SPEC_STEPS: f64 = 1e6;

/// `main()`, and `side()` beside it — natively on a second thread, in the wasm after it; both
/// results.
fn beside<A, B: Send>(
    main: impl FnOnce() -> A,
    side: Option<impl FnOnce() -> B + Send>,
) -> (A, Option<B>) {
    let Some(side) = side else {
        return (main(), None);
    };
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::thread::scope(|sc| {
            let h = sc.spawn(side);
            let a = main();
            let b = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            (a, Some(b))
        })
    }
    #[cfg(target_arch = "wasm32")]
    {
        let a = main();
        (a, Some(side()))
    }
}

/// What [`aimed_spacing`] aims with: the lattices' cut (`etas`) and coarse continuation
/// (`tail_d`) as the first pass builds them, the ε the tilt is aimed at and where its solve
/// starts, and the relative width goal.
#[cfg(full_engine)]
struct Aim {
    etas: (f64, f64),
    tail_d: Option<f64>,
    guess: f64,
    start: f64,
    tol: f64,
}

/// The measured constant c of the bracket's width ≈ c·T·λ·Δ² (λ the tilt, Δ the per-step
/// spacing) where the discretization's bias sets it: 0.28–0.31 on the large-dataset classes and
/// MNIST, 0.46 at q = 1e-6, σ = 0.8, T = 10⁸ (each from a first pass's bracket and tilt).
#[cfg(full_engine)]
const BIAS_WIDTH: f64 = 0.31;

/// How much coarser than the first pass's the lattice is on which [`aimed_spacing`] solves the
/// tilt (the tilt barely depends on Δ: 61.9 at 8Δ against 64.4 at Δ for q = 2e-5, σ = 1,
/// T = 5·10⁶; that lattice took 3.3 ms to build, the first pass's 5.2 ms; at q = 1e-5, σ = 1,
/// T = 10⁶, 1.8 ms against 27 ms).
#[cfg(full_engine)]
const AIM_COARSER: f64 = 8.0;

/// The first pass's spacing `d`, or a finer one where the width it will read is predicted to
/// be more than twice the goal (the larger of `tol`·ε and ABS_TOL): the spacing predicted to
/// read 0.85 of the goal, on the 1/16-octave grid. The prediction is [`BIAS_WIDTH`]·T·λ·Δ², the
/// tilt λ solved at the guess on a lattice [`AIM_COARSER`] times as coarse (its range split in
/// two resolutions from 2·CORE_POINTS points on, not SPLIT_POINTS: at q = 1e-6, σ = 0.8,
/// T = 10⁸ the coarser lattice was otherwise 66,000 points in one resolution, 13 ms). At q = 2e-5, σ = 1,
/// T = 5·10⁶, δ = 1e-6 it predicts 1.149e-3 at the bulk's spacing (the first pass read
/// 1.198e-3, then refined): one pass at 8.7e-7 instead of two, 181 → 68 ms. Only an aim: a pass
/// that reads wider is refined as before.
#[cfg(full_engine)]
fn aimed_spacing(phases: &[Phase], d: f64, aim: &Aim, w: &Work) -> f64 {
    let coarse = Lattices::build_split(
        phases,
        Direction::Remove,
        AIM_COARSER * d,
        aim.etas,
        aim.tail_d,
        2.0 * CORE_POINTS,
        w,
    );
    let Ok(coarse) = coarse else {
        return d;
    };
    let lambda = coarse.tilt_for(aim.guess, aim.start, w);
    let predicted = BIAS_WIDTH * total_steps(phases) * lambda * d * d;
    let goal = (aim.tol * aim.guess).max(ABS_TOL);
    if predicted > 2.0 * goal {
        on_octave_grid(d * (0.85 * goal / predicted).sqrt())
    } else {
        d
    }
}

/// The largest tail factor of a refinement's ladder where the last pass composed in one
/// FFT. That pass's width fell like Δ², and the refinement's Δ is chosen so; but the ladder's
/// tail, at the factor its length sets, has a width of its own that Δ does not reach: q =
/// 1e-3, σ = 0.8, T = 1000, δ = 1e-5 read 0.26 % in one FFT at Δ = 3.6e-4, then 0.13 % on the
/// ladder at Δ = 1.3e-4 with its tail at factor 16 (spacing 2.1e-3, 6× the first pass's
/// Δ), and refined to Δ = 1.9e-5 for 90 ms more; at factor 4 the ladder reads 0.050 % and the
/// call ends there (typical class: worst run 115 → 75 ms, `benches/typical_ab.py`). Only for
/// runs under [`compose::LONG_RUN`] steps, whose ladders have few levels: at q = 1e-5, σ = 1,
/// T = 10⁶ a tail at factor 4 was coarsened again on the way up and read 0.062 % where the
/// automatic factor reads 0.043 %.
#[cfg(full_engine)]
const TAIL_AFTER_ONE_FFT: i64 = 4;

/// `d` on the grid of 1/16 octave the refinements' spacings are on.
fn on_octave_grid(d: f64) -> f64 {
    powf(2f64, (16.0 * log2(d)).round() / 16.0)
}

/// Why a bracket wider than [`within_width_rule`] is refused.
pub(super) const CANNOT_BRACKET: crate::engine::error::Refusal =
    crate::engine::error::Refusal::CannotBracket;

/// The widest bracket a call on these phases may answer with (relative): [`MAX_WIDTH`], and
/// [`ALLOCATION_MAX_WIDTH`] for random allocation, whose lattices stop short of 1 % in pockets
/// at small δ (σ = 1.5, t = 782, 30 epochs, δ = 1e-10: [0.856637, 0.877120] is the finest
/// the budget holds, and a refusal left the scheme with no answer at all: it has no exact-RDP
/// route). Such an answer is still certified at both ends; the query layer says it is wider
/// than the 1 % rule.
#[cfg(full_engine)]
pub(super) fn width_limit(live: &[Phase]) -> f64 {
    if live.iter().any(|p| p.alloc.is_some()) {
        ALLOCATION_MAX_WIDTH
    } else {
        MAX_WIDTH
    }
}

/// Whether a certified bracket is narrow enough to be an answer: within 1 % of ε (MAX_WIDTH),
/// or ABS_WIDTH absolute.
pub fn within_width_rule(b: Bracket) -> bool {
    let w = b.upper - b.lower;
    w <= MAX_WIDTH * b.upper || w <= ABS_WIDTH
}
