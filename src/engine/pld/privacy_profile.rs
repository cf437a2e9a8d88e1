//! Stage 3, δ and the privacy profile δ(ε) with certified brackets.

use super::*;
use crate::engine::math::{exp, exp_m1, ln};
use crate::engine::pld::compose::Work;

/// Tight δ at ε for the phases.
pub fn delta_phases(phases: &[Phase], eps: f64) -> Result<DeltaAnswer, Error> {
    check_phases(phases)?;
    let eps = check_epsilon(eps)?;
    let pts = match profile_phases(phases, &[eps]) {
        Ok(p) => p,
        #[cfg(full_engine)]
        Err(e @ Error::PldBudget { .. }) => {
            return delta_by_inversion(phases, eps).ok_or(e);
        }
        Err(e) => return Err(e),
    };
    let p = pts[0];
    // A poor bracket (a lower end of 0 where the lattices were tilted for the bulk) is read
    // again through the ε side, and the two certified brackets intersected.
    #[cfg(full_engine)]
    if poor(&p.0.delta) {
        if let Some(inv) = delta_by_inversion(phases, eps) {
            return Ok(DeltaAnswer {
                delta: intersect(p.0.delta, inv.delta)?,
                grid: inv.grid,
            });
        }
    }
    Ok(DeltaAnswer {
        delta: p.0.delta,
        grid: p.1,
    })
}

/// δ at ε read through the ε direction, where the δ side's own lattices spend the call: the
/// ε side's certified bracket [ε_lo, ε_up] at a δ* says δ(ε) > δ* for every ε < ε_lo (ε_lo is
/// at most the least ε with δ(ε) ≤ δ*, and δ is nonincreasing) and δ(ε) ≤ δ* for every
/// ε ≥ ε_up. A secant search in ln δ* (its first slope from exact RDP's order at ε) finds a δ*
/// whose bracket holds ε, then a probe on each side of it gives the two ends. Answered only
/// where the ends are within [`PROFILE_RATIO`] of each other (as a profile point not poor).
/// Coverage of the δ direction then matches the ε direction's: `{"q":0.3513,
/// "sigma":10.3565,"steps":1085213,"epsilon":0.1212}` had been refused (δ there is > 0.999:
/// the ε side reads ε ∈ [514.98, 515.17] at δ = 0.999); q = 0.001, σ = 1, T = 10⁸ at its own
/// ε(1e-5) = 140.76 had been refused too.
#[cfg(full_engine)]
fn delta_by_inversion(phases: &[Phase], eps: f64) -> Option<DeltaAnswer> {
    const TOP: f64 = 0.999;
    const PROBES: usize = 12;
    let live = live_phases(phases);
    let curve = rdp_total(&live);
    let (ln_rdp, alpha) = rdp_ln_delta(&curve, eps);
    // Exact RDP's δ bounds the plain SGM phases' δ; a group's guide is no bound.
    let mut up = if plain(&live) {
        exp(ln_rdp).min(1.0)
    } else {
        1.0
    };
    let mut lo = 0.0f64;
    let mut grid = None;
    let done = |lo: f64, up: f64| lo > 0.0 && up <= 1.02 * lo;
    // One ε-side answer at δ* = e^x (None where it refuses), narrowing [lo, up].
    let mut probe = |x: f64, lo: &mut f64, up: &mut f64| -> Option<(f64, f64)> {
        let d = exp(x).clamp(1e-300, TOP);
        let a = epsilon_phases(phases, d).ok()?;
        let (el, eu) = (a.epsilon.lower, a.epsilon.upper);
        if el > eps {
            *lo = lo.max(d);
        }
        if eu <= eps {
            *up = up.min(d);
        }
        grid = Some(a.grid);
        Some((el, eu))
    };
    // A safeguarded secant in x = ln δ* for ε(δ*) = ε: a proposal outside the ends known so
    // far (or too near one) is replaced by their midpoint, or by a step of growing length
    // away from the one end known.
    let mut slope = -(alpha - 1.0).max(0.05);
    let mut x = ln(up.clamp(1e-300, 0.5));
    let mut last: Option<(f64, f64)> = None;
    let mut step = std::f64::consts::LN_10;
    let (mut n, mut centre) = (0, None);
    while n < PROBES && !done(lo, up) {
        n += 1;
        let got = probe(x, &mut lo, &mut up);
        if let Some((el, eu)) = got {
            if el <= eps && eps <= eu {
                centre = Some((x, eu - el));
                break;
            }
        }
        // (ε = 0 there — the total variation at most δ* — says nothing of the slope.)
        if let Some((el, eu)) = got.filter(|&(_, eu)| eu > 0.0) {
            let em = 0.5 * (el + eu);
            if let Some((px, pe)) = last {
                let s = (x - px) / (em - pe);
                if s.is_finite() && s < 0.0 {
                    slope = s;
                }
            }
            last = Some((x, em));
        }
        let (a, b) = (
            if lo > 0.0 { ln(lo) } else { f64::NEG_INFINITY },
            ln(up.clamp(1e-300, TOP)),
        );
        let proposal = match (got.filter(|&(_, eu)| eu > 0.0), last) {
            (Some(_), Some((lx, le))) => lx + slope * (eps - le),
            _ => f64::NAN,
        };
        let margin = 1e-3 * (b - a).min(1.0);
        x = if proposal > a + margin && proposal < b - margin {
            proposal
        } else if a.is_finite() {
            0.5 * (a + b)
        } else {
            step *= 2.0;
            b - step
        };
        if x.is_nan() || x < ln(1e-300f64) {
            break;
        }
    }
    // Each side of a δ* whose bracket holds ε, moved out by the bracket's width in ln δ (and
    // more where a probe lands inside again).
    if let Some((xc, width)) = centre {
        let mut m = (slope.abs() * width).max(1e-3);
        while n < PROBES && !done(lo, up) {
            let before = n;
            if lo < exp(xc - m) {
                n += 1;
                probe(xc - m, &mut lo, &mut up);
            }
            if !done(lo, up) && up > exp(xc + m) && exp(xc + m) < TOP {
                n += 1;
                probe(xc + m, &mut lo, &mut up);
            }
            if n == before {
                break;
            }
            m *= 3.0;
        }
    }
    let delta = Bracket {
        upper: up,
        lower: lo.min(up),
    };
    let grid = grid.filter(|_| lo > 0.0 && !poor(&delta))?;
    Some(DeltaAnswer { delta, grid })
}

/// Tight δ at ε after `steps` steps of one SGM, as a certified bracket.
///
/// ```
/// use sgm_rdp::engine::{pld, Sgm};
/// let mnist = Sgm::new(256.0 / 60000.0, 1.1)?;
/// let d = pld::delta(mnist, 14063, 2.0)?.delta;
/// assert!(d.lower <= d.upper && d.upper < 1.2e-4);
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
pub fn delta(sgm: Sgm, steps: u64, eps: f64) -> Result<DeltaAnswer, Error> {
    delta_phases(&[Phase::new(sgm, steps)?], eps)
}

/// The false-positive rates at which every front end (the command line's `profile`, `batch`,
/// the JS API's `attackRisk`) reports the attack bound unless told otherwise.
pub const DEFAULT_FPRS: [f64; 3] = [1e-3, 1e-2, 0.1];

/// The privacy profile's ε values unless told otherwise: 101 equally spaced points of
/// [0, `top`], `top` (default 10) in (0, 10⁴]; Err(top) when it is not (each front end names
/// the flag or key in its refusal).
pub fn profile_grid(top: Option<f64>) -> Result<Vec<f64>, f64> {
    let top = top.unwrap_or(10.0);
    if !(top.is_finite() && top > 0.0 && top <= 1e4) {
        return Err(top);
    }
    Ok((0..=100).map(|i| top * i as f64 / 100.0).collect())
}

/// The privacy profile δ(ε) at each ε (≥ 0), with brackets.
///
/// ```
/// use sgm_rdp::engine::{pld, Sgm};
/// let pts = pld::profile(Sgm::new(0.01, 1.0)?, 1000, &[0.5, 1.0, 2.0])?;
/// assert!(pts.windows(2).all(|w| w[1].delta.upper <= w[0].delta.upper)); // δ falls with ε
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
pub fn profile(sgm: Sgm, steps: u64, eps: &[f64]) -> Result<Vec<ProfilePoint>, Error> {
    Ok(profile_phases(&[Phase::new(sgm, steps)?], eps)?
        .into_iter()
        .map(|p| p.0)
        .collect())
}

/// Profile for phases; also reports the grid used at each point.
pub fn profile_phases(phases: &[Phase], eps: &[f64]) -> Result<Vec<(ProfilePoint, Grid)>, Error> {
    profile_phases_with(phases, eps, &Work::new(super::WORK))
}

/// [`profile_phases`] within the call context `w` (its work budget and mode).
pub(crate) fn profile_phases_with(
    phases: &[Phase],
    eps: &[f64],
    w: &Work,
) -> Result<Vec<(ProfilePoint, Grid)>, Error> {
    let phases = &phase::merged(phases);
    // A few tens of big steps or fewer ([`few_jumps`]): the closed form first, the lattices
    // only where it leaves a point poor (their brackets intersected). The input is checked
    // first: the closed form takes it as checked. Far beyond the domain at δ = 0.1, the
    // profile's largest δ, nothing is tried ([`FAR_BEYOND`]).
    check_profile(phases, eps)?;
    let live = live_phases(phases);
    far_beyond(&live, || rdp_epsilon(&live, 0.1).0)?;
    #[cfg(full_engine)]
    let first = match few_jumps(&live)
        .then(|| jumps_alone(phases, eps, w))
        .flatten()
    {
        Some(o) if !o.iter().any(|p| poor(&p.0.delta)) => Ok(o),
        Some(mut o) => {
            if let Ok(l) = profile_of(phases, eps, w) {
                for (a, b) in o.iter_mut().zip(l) {
                    a.0.delta = intersect(a.0.delta, b.0.delta)?;
                }
                monotone_envelope(&mut o);
            }
            Ok(o)
        }
        None => profile_of(phases, eps, w),
    };
    #[cfg(not(full_engine))]
    let first = profile_of(phases, eps, w);
    // Where rare large losses decide δ ([`jumps_first`]), the points the lattices read poorly
    // are read again in closed form and the brackets intersected ([`jumps_profile`]); where
    // they may matter ([`jumps_rare`]) and the lattices spend the call, the closed form alone
    // may still answer ([`jumps_alone`]). (Re-reading poor points wherever they may matter
    // halved the profile sweep's poor points, 2,120 → 961 of 160 runs' 101, but added 1.5–4.5 s
    // to the runs it touched: `benches/profile_sweep.py`.)
    #[cfg(full_engine)]
    let first = match first {
        Ok(mut o) if jumps_first(&live) => jumps_profile(phases, &mut o, w).map(|_| o),
        Err(e @ Error::PldBudget { .. }) => jumps_alone(phases, eps, w).ok_or(e),
        r => r,
    };
    // A refusal for a run beyond the domain even at δ = 0.1, its largest δ (so at every
    // (ε, δ) of it), says so, as the ε side's does.
    #[cfg_attr(not(full_engine), allow(unused_mut))]
    let mut out = first.map_err(|e| match e {
        Error::PldBudget { .. } if beyond_domain(phases, 0.1) => Error::PldBudget {
            reason: BEYOND_DOMAIN,
        },
        e => e,
    })?;
    // Truncated Poisson: lower ends from the gradient-0 datasets' exact pair (as for ε).
    #[cfg(full_engine)]
    if phases.iter().any(|p| p.trunc.is_some()) {
        let low: Vec<Phase> = phases.iter().map(Phase::lower_phase).collect();
        let lows = match profile_of(&low, eps, w) {
            Ok(l) => l.iter().map(|p| p.0.delta.lower).collect(),
            Err(Error::PldBudget { .. }) => vec![0.0; eps.len()],
            Err(e) => return Err(e),
        };
        for (slot, l) in out.iter_mut().zip(lows) {
            slot.0.delta.lower = l.min(slot.0.delta.upper);
        }
    }
    // δ(ε) ≤ δ(0), the total variation, at every ε ≥ 0: its certified bound caps the upper
    // ends (plain SGM add/remove phases only, [`tv_bound`]). Where the add pair is read from
    // the remove lattices' coarse tail the small ε's upper ends can be looser than it: q = 1e-5,
    // σ = 0.5, T = 10⁴ read δ(0) ≤ 4.50e-3, where the bound is 3.66e-3.
    if let Some(tv) = tv_bound(&live) {
        for slot in out.iter_mut() {
            let d = &mut slot.0.delta;
            d.upper = d.upper.min(tv);
            d.lower = d.lower.min(d.upper);
        }
    }
    Ok(out)
}

/// One plain SGM phase whose rare large losses may matter ([`jumps_rare`]; the caller asks
/// only where they decide it, [`jumps_first`], where few steps are sampled, [`few_jumps`], or
/// where the lattices refused): the profile points the lattices read poorly (upper end above
/// [`PROFILE_FLOOR`] and more than [`PROFILE_RATIO`] times the lower) are read again in closed
/// form ([`jumps::delta_brackets`], resolving δ down to the least of their lower ends), and the
/// two certified brackets intersected. At q = 2.1e-9, σ = 0.51, T = 5.8·10⁸ the lattices read
/// δ(0.0422) as [2.8e-15, 2.6e-2], where the ε side puts ε at δ = 3.3e-15 in
/// [0.042169, 0.042208]. Where the closed form refuses, the lattices' brackets stand.
#[cfg(full_engine)]
pub(super) fn jumps_profile(
    phases: &[Phase],
    out: &mut [(ProfilePoint, Grid)],
    w: &Work,
) -> Result<bool, Error> {
    let live = live_phases(phases);
    let ([p], true) = (&live[..], jumps_rare(&live)) else {
        return Ok(false);
    };
    if p.adjacency != Adjacency::AddRemove {
        return Ok(false);
    }
    let poor: Vec<usize> = (0..out.len()).filter(|&i| poor(&out[i].0.delta)).collect();
    if poor.is_empty() {
        return Ok(false);
    }
    let eps: Vec<f64> = poor.iter().map(|&i| out[i].0.epsilon).collect();
    let least = (poor.iter().map(|&i| out[i].0.delta.lower))
        .fold(f64::INFINITY, f64::min)
        .max(PROFILE_FLOOR);
    let Ok(read) = jumps::delta_brackets(p, &eps, least, w) else {
        return Ok(false);
    };
    for (&i, b) in poor.iter().zip(read) {
        let d = &mut out[i].0.delta;
        *d = intersect(*d, b)?;
    }
    monotone_envelope(out);
    Ok(true)
}

/// Whether a profile point's bracket is poor: its upper end above [`PROFILE_FLOOR`] and more
/// than [`PROFILE_RATIO`] times its lower end.
#[cfg(full_engine)]
pub(super) fn poor(b: &Bracket) -> bool {
    b.upper > PROFILE_FLOOR && b.upper > PROFILE_RATIO * b.lower
}

/// The profile from the closed form alone (where the lattices spend the call: q = 2.1e-9,
/// σ = 0.51, T = 5.8·10⁸ over ε ∈ [0, 0.105], the page's range): every point starts at
/// [0, exact RDP's δ] and is read by [`jumps_profile`]; None where that does not answer or
/// the run is not one it reads. (Called on input [`check_profile`] has checked.)
#[cfg(full_engine)]
pub(super) fn jumps_alone(
    phases: &[Phase],
    eps: &[f64],
    w: &Work,
) -> Option<Vec<(ProfilePoint, Grid)>> {
    let live = live_phases(phases);
    if !jumps_rare(&live) {
        return None;
    }
    let curve = rdp_total(&live);
    let mut out = zero_points(eps, 0.0);
    for (slot, &e) in out.iter_mut().zip(eps) {
        slot.0.delta.upper = exp(rdp_ln_delta(&curve, e).0).min(1.0);
    }
    jumps_profile(phases, &mut out, w).ok()?.then_some(out)
}

/// Whether exact RDP puts the plain SGM phases' ε at `delta` above 10³, beyond the domain the
/// tight accountant is built for (its refusals then say so).
pub(super) fn beyond_domain(phases: &[Phase], delta: f64) -> bool {
    rdp_above(phases, delta, 1e3)
}

/// Where exact RDP's ε is above 10⁷ (10⁴ times the domain's end) the lattices are not tried:
/// no run there answered in a grid of 27 beyond the domain (q ∈ {0.5, 0.05, 0.005},
/// σ ∈ {0.3, 0.6, 1.5}, T ∈ {10⁶, 10⁸, 10⁹}, δ = 1e-5: the largest answered had exact RDP
/// ε = 2.9·10⁶), and each refusal cost 2–9 s natively — tens of seconds in the page's worker,
/// once for the headline and again for each chart (q = 0.5, σ = 0.3, T = 10⁹ kept the page
/// "updating" for over 20 s before it said the tight ε is unavailable).
pub(super) const FAR_BEYOND: f64 = 1e7;

/// Whether exact RDP puts the plain SGM phases' ε at `delta` above `limit`.
pub(super) fn rdp_above(phases: &[Phase], delta: f64, limit: f64) -> bool {
    let live = live_phases(phases);
    plain(&live) && rdp_epsilon(&live, delta).0 > limit
}

/// Whether the live phases are some, and all plain SGM (exact RDP bounds their ε).
pub(super) fn plain(live: &[Phase]) -> bool {
    !live.is_empty() && live.iter().all(Phase::is_sgm)
}

/// The refusal of a run far beyond the domain ([`FAR_BEYOND`]), before any lattice is built,
/// from exact RDP's ε of the live phases (`eps_rdp`, read only for plain SGM phases); not where
/// q = 1 makes the run the Gaussian mechanism, answered in closed form at any length.
pub(super) fn far_beyond(live: &[Phase], eps_rdp: impl FnOnce() -> f64) -> Result<(), Error> {
    if plain(live) && gaussian_mu(live).is_none() && eps_rdp() > FAR_BEYOND {
        Err(Error::PldBudget {
            reason: BEYOND_DOMAIN,
        })
    } else {
        Ok(())
    }
}

/// Exact RDP at one δ, for the lattices: the grid's optimum (ε, α) steers their grid and tilt,
/// `cap` bounds their upper end.
#[derive(Clone, Copy)]
pub(super) struct Exact {
    pub(super) eps: f64,
    pub(super) alpha: f64,
    pub(super) cap: f64,
}

/// [`Exact`] for the live phases at a checked δ. One plain SGM phase: the cap is the
/// continuous optimum (≤ the grid's); several plain phases: the composed grid's ε; a group's
/// guide is no bound (cap ∞).
pub(super) fn exact_rdp(live: &[Phase], delta: f64, w: &Work) -> Exact {
    #[cfg(not(full_engine))]
    let _ = w;
    if let [p] = live {
        // (The per-step curve once per call: [`Work::with_rdp`].)
        #[cfg(full_engine)]
        let one = p.is_sgm().then(|| {
            Run::with_default_orders(p.sgm, p.steps).and_then(|r| {
                w.with_rdp(p.sgm, |lat, curve| {
                    r.epsilon_on(lat, curve, delta, Conversion::Improved)
                })
            })
        });
        #[cfg(not(full_engine))]
        let one = p.is_sgm().then(|| {
            Run::with_default_orders(p.sgm, p.steps)
                .and_then(|r| r.epsilon(delta, Conversion::Improved))
        });
        if let Some(Ok(o)) = one {
            return Exact {
                eps: o.grid_value.max(0.0),
                alpha: o.grid_alpha,
                cap: o.value.min(o.grid_value),
            };
        }
    }
    let (eps, alpha) = rdp_epsilon(live, delta);
    let cap = if plain(live) { eps } else { f64::INFINITY };
    Exact { eps, alpha, cap }
}

/// A profile's input checked: the phases, and 1–10,000 finite ε ≥ 0.
pub(super) fn check_profile(phases: &[Phase], eps: &[f64]) -> Result<(), Error> {
    check_phases(phases)?;
    if eps.is_empty() || eps.len() > 10_000 {
        return Err(Error::ProfileLength(eps.len()));
    }
    match eps.iter().find(|e| !(e.is_finite() && **e >= 0.0)) {
        Some(&e) => Err(Error::Epsilon(e)),
        None => Ok(()),
    }
}

/// The lattices' profile; the input is taken as checked ([`profile_phases`] checks it, and
/// truncated Poisson's lower pass derives its phases from checked ones).
pub(super) fn profile_of(
    phases: &[Phase],
    eps: &[f64],
    w: &Work,
) -> Result<Vec<(ProfilePoint, Grid)>, Error> {
    w.budget(WORK);
    let live = live_phases(phases);
    if live.is_empty() {
        return Ok(zero_points(eps, 0.0));
    }
    if let Some(mu) = gaussian_mu(&live) {
        let mut out = zero_points(eps, 0.0);
        for (slot, &e) in out.iter_mut().zip(eps) {
            slot.0.delta = gauss::delta_bracket(mu, e);
        }
        return Ok(out);
    }
    let t = total_steps(&live);
    // ε so large that exact RDP already puts δ below 1e-290 are answered from RDP alone
    // ([0, RDP's δ], certified): they would otherwise set the grid for every other point
    // (hardening round 3, #9: δ(0) was [0, 0.99996] next to ε = 1e300, [0.424207, 0.424208]
    // alone).
    let curve = rdp_total(&live);
    // (The RDP of a group's guide is no bound: groups are never answered from it.)
    let exact = live.iter().all(Phase::is_sgm);
    let far: Vec<bool> = eps
        .iter()
        .map(|&e| exact && rdp_ln_delta(&curve, e).0 < ln(1e-290f64))
        .collect();
    let near: Vec<f64> = eps
        .iter()
        .zip(&far)
        .filter(|(_, &f)| !f)
        .map(|(&e, _)| e)
        .collect();
    let mut out = zero_points(eps, 0.0);
    for ((slot, &e), &f) in out.iter_mut().zip(eps).zip(&far) {
        if f {
            slot.0.delta.upper = exp(rdp_ln_delta(&curve, e).0).min(1.0);
        }
    }
    if near.is_empty() {
        return Ok(out);
    }
    let emax = near.iter().cloned().fold(0.0f64, f64::max);
    let emid = near
        .iter()
        .cloned()
        .fold(f64::INFINITY, f64::min)
        .max(emax * 0.5);
    let alpha = rdp_ln_delta(&curve, emid.max(1e-3)).1;
    // δ as small as 1e-15 is resolved: tails cut at η for δ = 1e-15.
    let eta = eta_for(1e-15, t, 0.0, 1.0);
    // A profile spans many tilts; the widest may need a much coarser grid (its points
    // stay certified, only looser).
    // The lattice follows the loss's own scale when every ε asked is far below it (δ near
    // ε = 0 is the total variation, set by the bulk of the composed loss): the central
    // limit μ ≈ √(Σ q²·T·(e^{1/σ²} − 1)) of Dong, Roth, Su (JRSS-B 2022, §5).
    let clt = live
        .iter()
        .map(|p| {
            let g = p.guide();
            g.q().powi(2) * p.guide_steps() as f64 * exp_m1(1.0 / g.sigma().powi(2))
        })
        .sum::<f64>()
        .sqrt();
    // Small q: the two-resolution lattices where the range is long, their coarse spacing
    // a 256th of the largest ε asked and of the central limit's spread (as for ε).
    let tail_d = bulk_scale(&live).map(|b| emax.max(1e-6).min(b * t.sqrt()) / 256.0);
    // (The spacing follows ε down to 1e-3, as the ε side's does: from 1e-2, q = 1e-4, σ = 1,
    // T = 100 read δ at ε = 0.001 as [1.23e-4, 1.99e-4]; now [1.87e-4, 1.90e-4].)
    let d0 = initial_spacing(emid.max(1e-3).max(0.3 * clt.min(1.0)), alpha, t, TOL);
    // Whether an attempt got as far as composing (a lattice too long for the work left is
    // charged, not built).
    let composed = std::cell::Cell::new(false);
    let run = |one: bool| {
        coarsening(d0, 2 * COARSEN, |d| {
            profile_at(&live, &near, d, (eta, tail_d), alpha, (one, &composed), w)
        })
    };
    // Small q: one resolution first, on ONE_SHARE of the work; where its compositions spend
    // that (q = 1e-4, σ = 0.6, T = 10⁵: 287,000 points a step, and the first composition
    // took the whole budget), two resolutions on the rest — on all of it where the one
    // resolution's lattice alone was beyond its share (q = 1e-4, σ = 0.6, T = 10⁸: 10⁶ points).
    let got = if tail_d.is_some() {
        let total = w.left();
        w.budget(ONE_SHARE * total);
        match run(true) {
            Err(Error::PldBudget { reason }) if reason == WORK_SPENT => {
                w.budget(if composed.get() {
                    (1.0 - ONE_SHARE) * total
                } else {
                    total
                });
                run(false)?
            }
            r => r?,
        }
    } else {
        run(true)?
    };
    let mut it = got.into_iter();
    for ((slot, &f), &e) in out.iter_mut().zip(&far).zip(eps) {
        if !f {
            if let Some(p) = it.next() {
                *slot = p;
            }
            // Exact RDP's δ is certified too: the smaller upper end stands (where a point
            // read from a composition tilted elsewhere, RDP can be far tighter: q = 1e-4,
            // σ = 1, T = 10⁵ at ε = 0.33 read δ ≤ 0.0186 there, RDP 1.3e-4).
            if exact {
                let r = exp(rdp_ln_delta(&curve, e).0);
                slot.0.delta.upper = slot.0.delta.upper.min(r.max(slot.0.delta.lower));
            }
        }
    }
    monotone_envelope(&mut out);
    Ok(out)
}

/// δ(ε) does not increase with ε, so a certified upper end at ε' bounds δ at every ε ≥ ε',
/// and a lower end at ε' every ε ≤ ε': each point keeps the smallest upper end at or left of
/// it and the largest lower end at or right of it (a point read from a composition tilted
/// elsewhere then takes its neighbours' tighter ends).
pub(super) fn monotone_envelope(out: &mut [(ProfilePoint, Grid)]) {
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by(|&a, &b| out[a].0.epsilon.total_cmp(&out[b].0.epsilon));
    let mut up = f64::INFINITY;
    for &i in &order {
        up = up.min(out[i].0.delta.upper);
        out[i].0.delta.upper = up;
    }
    let mut lo = 0.0f64;
    for &i in order.iter().rev() {
        lo = lo.max(out[i].0.delta.lower);
        out[i].0.delta.lower = lo;
    }
}

/// δ = 0 at every ε (the start of a maximum over directions, and the answer when q = 0).
pub(super) fn zero_points(eps: &[f64], spacing: f64) -> Vec<(ProfilePoint, Grid)> {
    eps.iter()
        .map(|&e| {
            let point = ProfilePoint {
                epsilon: e,
                delta: Bracket {
                    upper: 0.0,
                    lower: 0.0,
                },
            };
            let grid = Grid {
                spacing,
                fft_len: 0,
                worst: "remove",
            };
            (point, grid)
        })
        .collect()
}

/// A profile point's bracket counts as poor when its upper end is more than this factor
/// above its lower end (a visible gap on the chart's log axis), unless the upper end is
/// below [`PROFILE_FLOOR`]: another composition, tilted for that ε, is then added.
pub(super) const PROFILE_RATIO: f64 = 1.25;

/// The share of a profile's work its one-resolution attempt may spend (small q; the rest goes
/// to two resolutions where that attempt runs out).
pub(super) const ONE_SHARE: f64 = 0.6;

/// The longest lattice (points, summed over the plain SGM phases) a profile's one-resolution
/// attempt builds ([`profile_of`]'s small-q branch); longer, it goes to two resolutions at
/// once. Over `benches/profile_sweep.py`'s runs every one-resolution attempt of 356,726 points
/// and more spent its share of the work and was thrown away (q = 2e-5, σ = 1, T = 5·10⁶:
/// 527,101 points, 130 ms of the page's profile), and those of 344,713 and fewer answered;
/// with this limit the sweep's calls took 28.5 s instead of 34.3 s, two runs refused before
/// answer (q = 1e-4, σ = 0.6, T = 10⁸; q = 1e-5, σ = 0.5, T = 10⁶), the most memory 233 → 138
/// MB, and no other run's poor points changed.
pub(super) const ONE_POINTS: f64 = 350_000.0;

/// The points of the plain SGM phases' one-resolution lattices at spacing `d` (their loss
/// ranges, cut at η, over `d`).
fn one_points(live: &[Phase], dir: Direction, d: f64, eta: f64) -> f64 {
    (live.iter().filter(|p| p.is_sgm()))
        .map(|p| {
            let (lo, hi) = super::discretize::loss_range(p.sgm.q(), p.sgm.sigma(), dir, eta);
            (hi - lo) / d
        })
        .sum()
}

/// The smallest δ the profile resolves (its chart's axis ends there).
pub(super) const PROFILE_FLOOR: f64 = 1e-15;

/// A composition's δ bracket at ε with its FFT length (below its window: [0, 1]).
pub(super) fn delta_read(c: &Composed, e: f64) -> (f64, f64, usize) {
    let (u, l) = if c.side(e) == Side::Below {
        (1.0, 0.0)
    } else {
        c.delta(e)
    };
    (u, l, c.window_len())
}

/// The profile on one lattice spacing.
pub(super) fn profile_at(
    live: &[Phase],
    eps: &[f64],
    d: f64,
    (eta, tail_d): (f64, Option<f64>),
    alpha: f64,
    (one, composed): (bool, &std::cell::Cell<bool>),
    w: &Work,
) -> Result<Vec<(ProfilePoint, Grid)>, Error> {
    let mut out = zero_points(eps, d);
    #[cfg(full_engine)]
    let mut rem: Option<Lattices> = None;
    let dirs = directions(live);
    for (i, &dir) in dirs.iter().enumerate() {
        // Compositions beyond a direction's first only while the directions still to come
        // keep their share of the work left (q = 1e-4, σ = 0.6, T = 10⁵: the remove pair's
        // refinements spent it all, and the add pair's first composition was refused).
        let later = (dirs.len() - 1 - i) as f64;
        let reserve = w.left() * later / (later + 1.0);
        // The add pair from the remove lattices, reversed, where those have two resolutions
        // or are long (as for ε: the add pair's own lattice has its long tail below).
        #[cfg(full_engine)]
        if let Some(r) = rem
            .as_ref()
            .filter(|r| dir == Direction::Add && r.reads_reversed())
        {
            profile_reversed(r, eps, &mut out, w)?;
            continue;
        }
        // (One resolution while the range fits the point budget: the profile's spacing is
        // not chosen for the bulk, and there the finer single lattice is the tighter.)
        // (`one` false: two resolutions wherever the range is long.)
        // (Two resolutions where one would be longer than ONE_POINTS.)
        let one = one && one_points(live, dir, d, eta) <= ONE_POINTS;
        let lat =
            match Lattices::build(live, dir, d, (eta, eta), if one { None } else { tail_d }, w) {
                Err(Error::PldBudget { reason })
                    if reason == TOO_MANY_POINTS && tail_d.is_some() =>
                {
                    Lattices::build(live, dir, d, (eta, eta), tail_d, w)?
                }
                r => r?,
            };
        let mut comps: Vec<Composed> = Vec::new();
        // The first composition tilted for the middle of the range asked (tilted for its
        // first point, ε = 0, it was untilted and resolved little: q = 1e-4, σ = 3, T = 10⁸
        // then needed 0.89 s and left 6 of 101 points poor, now 0.35 s and none).
        let mid = eps.iter().cloned().fold(0.0f64, f64::max) * 0.4;
        composed.set(true);
        let first_left = w.left();
        // Each tilt solve starts from the last one's answer (the points ascend, and so do
        // their tilts; from exact RDP's α − 1 each took ~7 reads of the lattices' moments).
        let mut last = lat.tilt_for(mid, alpha - 1.0, w);
        comps.push(lat.compose(last, w)?);
        // The most one composition has cost, to keep the directions still to come their share.
        let mut cost = first_left - w.left();
        let mut spent = false;
        for (e, slot) in eps.iter().zip(out.iter_mut()) {
            // Every composition gives a certified bracket wherever it reads: the tightest
            // of those whose well-resolved range holds ε. Where none does, or their
            // bracket is poor, one tilted for this ε is added (a composition's claimed range
            // can be wide and its reading loose: q = 1e-4, σ = 1, T = 10⁵, the untilted
            // remove composition asked for ε = 0 claimed (−31, 33) and read δ ≤ 0.0186 at
            // every ε up to 0.33, where δ falls to 1e-18).
            let read = |comps: &[Composed]| -> Option<(f64, f64, usize)> {
                comps
                    .iter()
                    .filter(|c| {
                        let (lo, hi) = c.good_range();
                        *e >= lo && *e <= hi
                    })
                    .map(|c| delta_read(c, *e))
                    .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1), a.2.max(b.2)))
            };
            // Poor as the answer will read it: its lower end is the largest of the pairs',
            // so this pair's reading is poor only against the directions already read too
            // (q = 1e-4, σ = 1, T = 10⁵: the add pair read δ(0.0086) as [2.7e-4, 0.012686]
            // beside the remove pair's lower end 0.012552, and six more add compositions,
            // each tilted at the next point, read the same to eight digits).
            let known = slot.0.delta.lower;
            let poor = |r: Option<(f64, f64, usize)>| {
                r.is_none_or(|(u, l, _)| u > PROFILE_FLOOR && u > PROFILE_RATIO * l.max(known))
            };
            let nearest = |comps: &[Composed]| {
                comps
                    .iter()
                    .min_by(|a, b| (a.center - e).abs().total_cmp(&(b.center - e).abs()))
                    .map(|c| delta_read(c, *e))
            };
            let mut got = read(&comps);
            // Settled by the directions already read: where this pair's upper δ is at most
            // their lower end, the answer's bracket (the larger of the pairs') is theirs
            // whatever a finer reading of this pair gives (q = 1e-3, σ = 0.8, T = 1000: the
            // add pair's eleven refinements at ε ≤ 0.076, each ~2× wide, none of them below
            // the remove pair's δ).
            // Nor where this pair's upper δ is at most theirs and it reads no lower end: a
            // finer reading could only lower an end that is not the answer's (q = 1e-5,
            // σ = 1, T = 10⁶: twelve add compositions, ~12 ms each, all below the remove
            // pair's upper δ and each reading a lower end of 0).
            // Where no composition's range holds ε and the nearest one reads δ below the
            // floor, no other is tried (q = 1e-4, σ = 1, T = 10⁵: five compositions for the
            // attack profile's ε ≥ 0.34, where δ < 1e-15, each beyond the reach of the tilts
            // the lattices allow, so none held the next point).
            let mut fallback = got.or_else(|| nearest(&comps));
            let settled = fallback.is_some_and(|r| r.0 <= slot.0.delta.lower)
                || (got.is_none() && fallback.is_some_and(|r| r.0 <= PROFILE_FLOOR))
                || fallback.is_some_and(|r| r.0 <= slot.0.delta.upper && r.1 <= 0.0);
            if poor(got) && !settled && comps.len() < 12 && !spent && w.left() - cost > reserve {
                let lam = lat.tilt_for(*e, last, w);
                last = lam;
                // A tilt a little away from a composition in hand re-weights that one's
                // tilted law by e^{(λ − λ')·x}, nearly flat over its spread s where
                // |λ − λ'|·s < 1/4: it reads as that one does (and at least 1/4 of λ away
                // the linear picture is not trusted: a tilt at the lattice's cap leaves a
                // spread of ~1e-10). q = 1e-4, σ = 1, T = 10⁵: the remove pair's tilt stops
                // near λ = 23, the lattices' reach, and eight compositions at λ 22.85 … 23.15,
                // all centred at 0.041 ± 1e-4 with spread 0.05, read the points above 0.2
                // alike to eight digits.
                let fresh = comps.iter().all(|c| {
                    let gap = (c.lambda - lam).abs();
                    gap > 1e-3 * lam.max(1.0)
                        && (gap > 0.25 * lam.max(c.lambda) || gap * c.spread > 0.25)
                });
                if fresh {
                    // A refinement is optional: out of work, the points left read from the
                    // compositions in hand; too wide for the FFT, this ε keeps theirs (q = 1e-4,
                    // σ = 0.6, T = 10⁸: one such refusal threw away the whole attempt).
                    // It may spend only what the directions still to come can spare, so one
                    // that costs more is given up and they keep their share (q = 2e-5,
                    // σ = 1.14, T = 5·10⁶'s attack profile: the remove pair's untilted
                    // refinement at ε = 0 spent the whole one-resolution attempt's work, the
                    // add pair was refused and the attempt thrown away — 630 ms, and the
                    // two-resolution answer read δ(0) as [0.0085, 0.0192]; now 360 ms and
                    // [0.0191, 0.0195]).
                    let before = w.left();
                    w.budget(before - reserve);
                    let refined = lat.compose(lam, w);
                    w.budget(reserve + w.left().max(0.0));
                    match refined {
                        Ok(c) => {
                            cost = cost.max(before - w.left());
                            comps.push(c)
                        }
                        Err(Error::PldBudget { reason }) if reason == WORK_SPENT => spent = true,
                        Err(Error::PldBudget { .. }) => {}
                        Err(err) => return Err(err),
                    }
                    got = read(&comps);
                    fallback = got.or_else(|| nearest(&comps));
                }
            }
            // Budget of compositions spent and none resolves ε: the closest one still gives a
            // certified (if looser) bracket.
            let (u, l, n) = fallback.ok_or(Error::PldBudget { reason: WORK_SPENT })?;
            if u > slot.0.delta.upper {
                slot.0.delta.upper = u;
                slot.1.worst = if dir == Direction::Remove {
                    "remove"
                } else {
                    "add"
                };
            }
            slot.0.delta.lower = slot.0.delta.lower.max(l);
            slot.1.fft_len = slot.1.fft_len.max(n);
        }
        #[cfg(full_engine)]
        if dir == Direction::Remove {
            rem = Some(lat);
        }
    }
    Ok(out)
}

/// The add pair's upper δ at each ε from the remove lattices, reversed ([`eps_reversed`]),
/// raised into `out` (whose lower ends, the remove pair's, stay: the answer is the larger).
#[cfg(full_engine)]
pub(super) fn profile_reversed(
    rem: &Lattices,
    eps: &[f64],
    out: &mut [(ProfilePoint, Grid)],
    w: &Work,
) -> Result<(), Error> {
    let top = rem.add_loss_top();
    let mut comps: Vec<Composed> = Vec::new();
    // (Each tilt solve starts from the last one's answer, as in [`profile_at`].)
    let mut last = 1.0;
    for (e, slot) in eps.iter().zip(out.iter_mut()) {
        // δ_add = 0 from ε = Σ T(−ln(1 − q)) on.
        if *e >= top {
            continue;
        }
        let hit = comps.iter().position(|c| {
            let (lo, hi) = c.good_range();
            -*e >= lo && -*e <= hi
        });
        let idx = match hit {
            Some(i) => i,
            None if comps.len() < 12 => {
                let theta = rem.tilt_reversed(*e, last, w);
                last = theta;
                comps.push(rem.ladder_reversed(theta, w)?);
                comps.len() - 1
            }
            // (Every tilt gives a certified upper δ, the nearest the tightest.)
            None => comps
                .iter()
                .enumerate()
                .min_by(|(_, a), (_, b)| (a.center + e).abs().total_cmp(&(b.center + e).abs()))
                .map(|(i, _)| i)
                .unwrap_or(0),
        };
        let c = &comps[idx];
        let u = c.delta(*e).0;
        if u > slot.0.delta.upper {
            slot.0.delta.upper = u;
            slot.1.worst = "add";
        }
        slot.1.fft_len = slot.1.fft_len.max(c.window_len());
    }
    Ok(())
}
