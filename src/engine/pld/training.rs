//! ε over training: certified brackets at checkpoints of one run, kept monotone.

use super::*;
use crate::engine::pld::compose::Work;

/// ε (bracket) at δ after each number of steps in `checkpoints` (ascending or not):
/// the per-step lattices are built once and composed per checkpoint.
pub fn checkpoints(sgm: Sgm, checkpoints: &[u64], delta: f64) -> Result<Vec<Bracket>, Error> {
    let w = &Work::new(super::WORK);
    let delta = check_delta(delta)?;
    check_phases(&[Phase::new(sgm, 1)?])?;
    if checkpoints.is_empty() || checkpoints.len() > 1000 {
        return Err(Error::ProfileLength(checkpoints.len()));
    }
    for &t in checkpoints {
        check_steps(t)?;
    }
    if sgm.q() == 0.0 {
        return Ok(vec![
            Bracket {
                upper: 0.0,
                lower: 0.0
            };
            checkpoints.len()
        ]);
    }
    let tmax = checkpoints.iter().copied().max().unwrap_or(1);
    w.budget(WORK);
    let (e_max, a_max) = rdp_epsilon(&[Phase::new(sgm, tmax)?], delta);
    let eta = eta_for(delta, tmax as f64, e_max, a_max);
    coarsening(
        initial_spacing(e_max, a_max, tmax as f64, TOL),
        COARSEN,
        |d| checkpoints_at(sgm, checkpoints, delta, d, eta, tmax, w),
    )
}

/// ε (bracket) at δ after each number of steps, each aiming for a bracket of relative
/// width `tol` (clamped to [TOL, MAX_WIDTH / 2]) on its own grid: for charts, where
/// [`checkpoints`]' shared finest grid costs ~0.1 s per point and a 0.5 % bracket is
/// below a pixel. Every bracket is certified as always; only its width differs.
pub fn checkpoints_tol(
    sgm: Sgm,
    checkpoints: &[u64],
    delta: f64,
    tol: f64,
) -> Result<Vec<Bracket>, Error> {
    checkpoints_known(sgm, checkpoints, delta, tol, None)
}

/// [`checkpoints_tol`] with one checkpoint's certified bracket already known (`known`: its
/// steps and bracket — the run's own, which the caller has from its headline): it is taken
/// as it is, not solved again.
pub fn checkpoints_known(
    sgm: Sgm,
    checkpoints: &[u64],
    delta: f64,
    tol: f64,
    known: Option<(u64, Bracket)>,
) -> Result<Vec<Bracket>, Error> {
    let w = &Work::new(super::WORK);
    // Where q is small every checkpoint is on the bulk's spacing, and where its lattices cut
    // their range alike (η at its cap) each reads the first one's ([`Work::keep_lattices`]:
    // the same bits; q = 1e-4, σ = 1, T = 10⁵: 13 of the 15 checkpoints read one lattice).
    #[cfg(full_engine)]
    w.keep_lattices();
    checkpoints_in(sgm, checkpoints, delta, tol, known, w)
}

/// [`checkpoints_known`] within the call context `w`.
fn checkpoints_in(
    sgm: Sgm,
    checkpoints: &[u64],
    delta: f64,
    tol: f64,
    known: Option<(u64, Bracket)>,
    w: &Work,
) -> Result<Vec<Bracket>, Error> {
    check_delta(delta)?;
    if checkpoints.is_empty() || checkpoints.len() > 1000 {
        return Err(Error::ProfileLength(checkpoints.len()));
    }
    let tol = if tol.is_nan() {
        TOL
    } else {
        tol.clamp(TOL, MAX_WIDTH / 2.0)
    };
    // A checkpoint the accountant refuses takes its bracket from its neighbours (ε grows with
    // the steps: [`monotone`]) — certified, only wider — where a later one answers (q = 2.1e-9,
    // σ = 0.51, T = 5.8·10⁸: 2 of the chart's 16 points were refused, and the whole chart was
    // unavailable though the run's own ε answers).
    let mut refused = None;
    let mut solved = Vec::with_capacity(checkpoints.len());
    // Each checkpoint starts at the spacing the previous one ended on, scaled toward the
    // goal by the bracket it read there (width ∝ Δ², within a factor 2 either way): the
    // bracket's width at a spacing changes slowly from one checkpoint to the next, where
    // each one's own first guess (from exact RDP) was 2–50× too coarse at MNIST's 46–2082
    // steps and cost a second pass, and 10–100× too fine at 1–24 steps.
    let mut start: Option<f64> = None;
    for &t in checkpoints {
        if let Some((_, b)) = known.filter(|(k, _)| *k == t) {
            solved.push(b);
            continue;
        }
        let phase = [Phase::new(sgm, t)?];
        match w.starting_at(start, || epsilon_phases_at(&phase, delta, tol, w)) {
            Ok(a) => {
                let (u, l) = (a.epsilon.upper, a.epsilon.lower);
                start = (a.grid.spacing > 0.0 && l > 0.0 && u > l)
                    .then(|| a.grid.spacing * (0.55 * tol * u / (u - l)).sqrt().clamp(0.5, 2.0));
                solved.push(a.epsilon)
            }
            Err(e @ Error::PldBudget { .. }) => {
                refused.get_or_insert(e);
                solved.push(Bracket {
                    upper: f64::INFINITY,
                    lower: 0.0,
                });
            }
            Err(e) => return Err(e),
        }
    }
    let out = monotone(checkpoints, &solved)?;
    match refused {
        Some(e) if out.iter().any(|b| b.upper.is_infinite()) => Err(e),
        _ => Ok(out),
    }
}

/// ε grows with the steps (the first T steps' outputs are a post-processing of the first
/// T' ≥ T), so every later checkpoint's certified upper bound bounds an earlier one, and
/// every earlier lower bound a later one: each bracket is tightened by the others (q = 1e-7,
/// σ = 5: the chart's upper bound at 6·10⁵ steps, 6e-5, is bounded by 2.5·10⁶ steps' 1.1e-5).
/// Brackets that then do not overlap prove one wrong, and refuse ([`overlap`]).
pub(super) fn monotone(steps: &[u64], b: &[Bracket]) -> Result<Vec<Bracket>, Error> {
    let mut out = Vec::with_capacity(b.len());
    for &t in steps {
        let upper = steps
            .iter()
            .zip(b)
            .filter(|(&u, _)| u >= t)
            .map(|(_, x)| x.upper)
            .fold(f64::INFINITY, f64::min);
        let lower = steps
            .iter()
            .zip(b)
            .filter(|(&u, _)| u <= t)
            .map(|(_, x)| x.lower)
            .fold(0.0, f64::max);
        overlap(upper, lower)?;
        out.push(Bracket { upper, lower });
    }
    Ok(out)
}

/// The checkpoints on one lattice spacing.
pub(super) fn checkpoints_at(
    sgm: Sgm,
    checkpoints: &[u64],
    delta: f64,
    d: f64,
    eta: f64,
    tmax: u64,
    w: &Work,
) -> Result<Vec<Bracket>, Error> {
    let mut out = vec![
        Bracket {
            upper: 0.0,
            lower: f64::INFINITY
        };
        checkpoints.len()
    ];
    for dir in [Direction::Remove, Direction::Add] {
        let mut lat = Lattices::build(&[Phase::new(sgm, tmax)?], dir, d, (eta, eta), None, w)?;
        for (slot, &t) in out.iter_mut().zip(checkpoints) {
            lat.set_steps(0, t as f64);
            let (e_rdp, a) = rdp_epsilon(&[Phase::new(sgm, t)?], delta);
            let (u, l, _) = eps_direction(&lat, delta, e_rdp * 0.93, a, TOL, w)?;
            slot.upper = slot.upper.max(u.min(e_rdp));
            slot.lower = if slot.lower.is_infinite() {
                l
            } else {
                slot.lower.max(l)
            };
        }
    }
    for b in &mut out {
        b.lower = b.lower.max(0.0).min(b.upper);
    }
    Ok(out)
}

#[cfg(all(test, full_engine))]
mod tests {
    use super::*;

    /// ε over training with its lattices kept is ε over training built afresh at every
    /// checkpoint, bit for bit, on runs where the checkpoints share them (small q: one
    /// spacing) and where they do not (MNIST).
    #[test]
    fn kept_lattices_leave_every_checkpoint_as_it_was() {
        // (The page's 16 checkpoints of each run: `render::tight::checkpoints`.)
        let small_q = [
            1, 2, 5, 10, 22, 46, 100, 215, 464, 1000, 2154, 4642, 10000, 21544, 46416, 100000,
        ];
        let mnist = [
            1, 2, 4, 7, 13, 24, 46, 86, 163, 308, 583, 1101, 2082, 3936, 7439, 14063,
        ];
        for (q, sigma, at) in [
            (1e-4, 1.0, &small_q[..]),
            (256.0 / 60000.0, 1.1, &mnist[..]),
        ] {
            let sgm = Sgm::new(q, sigma).unwrap();
            let kept = checkpoints_known(sgm, at, 1e-5, 5e-3, None).unwrap();
            let fresh = checkpoints_in(sgm, at, 1e-5, 5e-3, None, &Work::new(WORK)).unwrap();
            let bits = |b: &[Bracket]| {
                b.iter()
                    .map(|x| (x.upper.to_bits(), x.lower.to_bits()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(&kept), bits(&fresh), "q = {q}");
        }
    }
}
