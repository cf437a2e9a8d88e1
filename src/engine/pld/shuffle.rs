//! Shuffled, fixed-size batches (a fresh random permutation each epoch, cut into t
//! batches of B): an honest band, not a tight number.
//!
//! * **Upper** (certified): no amplification. Each epoch uses an example in exactly one
//!   step, so E epochs are the Gaussian mechanism with μ = s·√E/σ, s the adjacency's
//!   sensitivity (1 zero-out / add-remove, 2 replace-one); ε from Balle & Wang's exact
//!   δ(ε) (`super::gauss`). A partial epoch counts as one.
//! * **Lower** (certified): one pair of datasets for which the mechanism is provably at
//!   least this leaky (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha, Zhang, "How
//!   Private are DP-SGD Implementations?", ICML 2024; "Scalable DP-SGD: Shuffling vs.
//!   Poisson Subsampling", NeurIPS 2024). Every other example has clipped gradient −C, the
//!   differing one +C against 0 (zero-out, the fixed-batch reading of add/remove) or −C
//!   (replace-one). Relative to the batches without it, the example's batch is shifted by
//!   a = 2 against b = 1 (zero-out) or b = 0 (replace-one), in units of C. One epoch's
//!   output is then P = (1/t)·Σ_i N(a·e_i, σ²I) against Q = (1/t)·Σ_i N(b·e_i, σ²I).
//!   We post-process it by the largest coordinate M (an adversary may), bin M on a fine
//!   grid (binning is post-processing too), and compose the E epochs' binned pairs with
//!   the FFT machinery's optimistic side (`super::discretize::merge_atoms`, rounding
//!   down). Each step is a post-processing of the true mechanism or lowers δ, so the
//!   result is a lower bound on the true ε of shuffled training with these parameters.
//!   When N is not a multiple of B the last N − tB examples of each permutation are
//!   dropped (fixed-size batches, `drop_last`): the example is then in no batch with
//!   probability r = (N − tB)/N, which mixes N(0, σ²I) into both sides.
//!
//! The Poisson-sampled ε for the same q and T is typically below this lower bound, so it
//! cannot be claimed for shuffled training.

use super::compose::Side;
use super::discretize::{lattice, merge_atoms, StepPld};
use super::gauss::{ln_add, ln_phi_bar, ln_sub};
use super::{eps_direction, gauss, initial_spacing, Bracket, Lattices, TOL, WORK};
use crate::engine::error::Error;
use crate::engine::math::{exp, exp_m1, ln, ln_1p};
use crate::engine::params::{check_delta, check_steps, Adjacency};
use crate::engine::pld::compose::Work;
use serde::Serialize;

/// Shuffled training: σ, t steps per epoch, the fraction r of examples left out of
/// each epoch (0 when B divides N), the adjacency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shuffle {
    sigma: f64,
    steps_per_epoch: u64,
    dropped: f64,
    adjacency: Adjacency,
    /// The lower-bound pair's shifts (a, b) in units of C: the adjacency's for shuffled
    /// batches, (1, 0) for random allocation's.
    shifts: (f64, f64),
}

/// The band for shuffled training: `lower` ≤ true ε ≤ `upper`, both certified.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ShuffleBand {
    pub epsilon: Bracket,
    /// Epochs started (the upper bound's count) and completed (the lower bound's).
    pub epochs_started: u64,
    pub epochs_full: u64,
}

impl Shuffle {
    /// From σ, steps per epoch t ≥ 1 and the dropped fraction r ∈ [0, 1).
    pub fn new(
        sigma: f64,
        steps_per_epoch: u64,
        dropped: f64,
        adjacency: Adjacency,
    ) -> Result<Shuffle, Error> {
        let sgm = crate::engine::Sgm::new(1.0, sigma)?;
        if steps_per_epoch == 0 || steps_per_epoch > crate::engine::MAX_STEPS {
            return Err(Error::StepsPerEpoch(steps_per_epoch));
        }
        if !(0.0..1.0).contains(&dropped) {
            return Err(Error::SampleRate(dropped));
        }
        Ok(Shuffle {
            sigma: sgm.sigma(),
            steps_per_epoch,
            dropped,
            adjacency,
            shifts: match adjacency {
                Adjacency::AddRemove => (2.0, 1.0),
                Adjacency::ReplaceOne => (2.0, 0.0),
            },
        })
    }

    /// From the dataset size N and batch size B ≤ N: t = ⌊N/B⌋ fixed-size batches per
    /// epoch, the last N − tB examples of each permutation dropped.
    pub fn from_sizes(
        sigma: f64,
        dataset_size: u64,
        batch_size: u64,
        adjacency: Adjacency,
    ) -> Result<Shuffle, Error> {
        if dataset_size == 0 || batch_size == 0 || batch_size > dataset_size {
            return Err(Error::BatchSize {
                batch: batch_size as f64,
                dataset: dataset_size as f64,
            });
        }
        let t = dataset_size / batch_size;
        let r = (dataset_size - t * batch_size) as f64 / dataset_size as f64;
        Shuffle::new(sigma, t, r, adjacency)
    }

    /// Steps per epoch t.
    pub fn steps_per_epoch(&self) -> u64 {
        self.steps_per_epoch
    }
    /// The noise multiplier.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }
    /// The fraction of examples in no batch of an epoch.
    pub fn dropped(&self) -> f64 {
        self.dropped
    }
}

/// A cheap certified lower bound on the ε of one-in-t random allocation over `epochs`
/// epochs (add/remove), after Chua et al.'s test that looks at the largest coordinate:
/// one epoch's pair P = (1/t)·Σ_i N(e_i, σ²I) against Q = N(0, σ²I) (the other examples'
/// gradients 0), post-processed by its largest coordinate — under Q the largest of t
/// N(0, σ²), under P the same with one of them N(1, σ²) — binned and composed with the
/// optimistic side, as for the shuffled pair (shifts 1 against 0 instead of 2 against 1).
/// Independent of the allocation accountant's law of W: a check on its upper end.
pub fn allocation_lower_bound(sigma: f64, t: u64, epochs: u64, delta: f64) -> Result<f64, Error> {
    let w = &Work::new(super::WORK);
    let sh = Shuffle {
        shifts: (1.0, 0.0),
        ..Shuffle::new(sigma, t, 0.0, Adjacency::AddRemove)?
    };
    check_steps(epochs.saturating_mul(t))?;
    let delta = check_delta(delta)?;
    // The Gaussian mechanism over the epochs bounds it from above (no amplification).
    let upper = gauss::epsilon_bracket((epochs as f64).sqrt() / sh.sigma, delta).upper;
    lower_bound(&sh, epochs, 0, delta, upper, w)
}

/// ln F and ln(1 − F) of the largest of c coordinates at m: one of them (with
/// probability ρ) N(a, σ²), the others N(0, σ²).
/// F = Φ(m/σ)^{c−1}·[ρΦ((m−a)/σ) + (1−ρ)Φ(m/σ)], and 1 − F = (1 − A) + A(1 − G) with
/// A the bracket and G the power: sums of nonnegative terms.
fn max_cdf(m: f64, a: f64, sigma: f64, c: u64, rho: f64) -> (f64, f64) {
    let z = m / sigma;
    let za = (m - a) / sigma;
    let (lr, l1r) = (ln(rho), ln_1p(-rho));
    let (lo0, hi0) = (ln_phi_bar(-z), ln_phi_bar(z)); // ln Φ(z), ln Φ̄(z)
    let (loa, hia) = (ln_phi_bar(-za), ln_phi_bar(za));
    let ln_a = ln_add(lr + loa, l1r + lo0);
    let ln_1ma = ln_add(lr + hia, l1r + hi0);
    let ln_g = (c - 1) as f64 * lo0;
    let ln_1mg = if c == 1 {
        f64::NEG_INFINITY
    } else {
        ln(-exp_m1(ln_g))
    };
    (ln_g + ln_a, ln_add(ln_1ma, ln_a + ln_1mg))
}

/// ln of the mass in (m_a, m_b] from both cumulative functions (the smaller side is
/// differenced, so no digits are lost where F ≈ 1).
fn ln_bin(fa: (f64, f64), fb: (f64, f64)) -> f64 {
    const LN_HALF: f64 = -std::f64::consts::LN_2;
    if fb.0 <= LN_HALF {
        ln_sub(fb.0, fa.0.min(fb.0))
    } else if fa.1 <= LN_HALF {
        ln_sub(fa.1, fb.1.min(fa.1))
    } else {
        ln_1p(-(exp(fa.0) + exp(fb.1)))
    }
}

/// Relative margin on every bin mass (P rounded down, Q up), covering the rounding of
/// the log-space CDFs and their differences: a pair that P-dominates less and has lower
/// losses only lowers δ, so the bound stays certified.
const MASS_MARGIN: f64 = 1e-7;

/// The binned max-coordinate pair of one (possibly partial) epoch: atoms (ln P, ln Q).
fn binned_pair(sh: &Shuffle, c: u64, rho: f64, d: f64) -> Vec<(f64, f64)> {
    let (a, b) = sh.shifts;
    let s = sh.sigma;
    let lo = -9.0 * s - b;
    let hi = a + s * (9.0 + (2.0 * ln(c as f64)).sqrt());
    // The loss moves by at most ~(a − b)/σ² per unit of m: bins short enough that it
    // moves by ≲ Δ/4 in one, within [σ/400, σ/25].
    let h = (0.25 * d * s * s / (a - b)).clamp(s / 400.0, s / 25.0);
    let n = (((hi - lo) / h).ceil() as usize).clamp(64, 200_000);
    let h = (hi - lo) / n as f64;
    let cdf = |m: f64| {
        if m == f64::NEG_INFINITY {
            return ((f64::NEG_INFINITY, 0.0), (f64::NEG_INFINITY, 0.0));
        }
        if m == f64::INFINITY {
            return ((0.0, f64::NEG_INFINITY), (0.0, f64::NEG_INFINITY));
        }
        (max_cdf(m, a, s, c, rho), max_cdf(m, b, s, c, rho))
    };
    let margin_p = ln_1p(-MASS_MARGIN);
    let margin_q = ln_1p(MASS_MARGIN);
    let mut edges = Vec::with_capacity(n + 3);
    edges.push(f64::NEG_INFINITY);
    edges.extend((0..=n).map(|i| lo + i as f64 * h));
    edges.push(f64::INFINITY);
    let mut prev = cdf(edges[0]);
    let mut atoms = Vec::with_capacity(edges.len());
    for &e in &edges[1..] {
        let cur = cdf(e);
        let lp = ln_bin(prev.0, cur.0);
        let lq = ln_bin(prev.1, cur.1);
        // A cell where Q puts nothing would be an infinite loss (not reached with Gaussian
        // tails): dropping it only lowers δ.
        if lp > f64::NEG_INFINITY && lq > f64::NEG_INFINITY {
            atoms.push((lp + margin_p, lq + margin_q));
        }
        prev = cur;
    }
    atoms
}

/// The optimistic lattice PLD of binned atoms: atoms grouped by the lattice bin of their
/// loss (merging atoms is post-processing), then [`merge_atoms`].
fn lower_step(atoms: &[(f64, f64)], d: f64) -> StepPld {
    let losses = atoms.iter().map(|&(p, q)| p - q);
    let lo = losses.clone().fold(f64::INFINITY, f64::min);
    let hi = losses.fold(f64::NEG_INFINITY, f64::max);
    let (k_lo, len) = lattice(d, lo, hi);
    let mut bins = vec![(f64::NEG_INFINITY, f64::NEG_INFINITY); len - 1];
    for &(p, q) in atoms {
        let i = (((p - q) / d).floor() as i64 - k_lo).clamp(0, len as i64 - 2) as usize;
        bins[i] = (ln_add(bins[i].0, p), ln_add(bins[i].1, q));
    }
    let bins: Vec<(f64, f64)> = bins.iter().map(|&(p, q)| (q, p - q)).collect();
    let ln_lo = merge_atoms(&bins, k_lo, d);
    StepPld {
        k_lo,
        ln_up: ln_lo.clone(),
        ln_inf: f64::NEG_INFINITY,
        ln_lo,
        tail: None,
    }
}

/// The certified band on ε at δ after `steps` steps of shuffled training: the upper end
/// without amplification, the lower end from Chua et al.'s shuffled pair.
///
/// ```
/// use sgm_rdp::engine::{pld::{self, shuffle::{self, Shuffle}}, Adjacency, Sgm};
/// // 50,000 examples, batches of 512 (97 per epoch, drop_last), σ = 1, 30 epochs.
/// let sh = Shuffle::from_sizes(1.0, 50000, 512, Adjacency::AddRemove)?;
/// let band = shuffle::epsilon(&sh, 97 * 30, 1e-5)?.epsilon;
/// let poisson = pld::epsilon(Sgm::new(512.0 / 50000.0, 1.0)?, 2930, 1e-5)?.epsilon;
/// assert!(poisson.upper < band.lower && band.lower < band.upper); // Poisson's ε is not the shuffle's
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
pub fn epsilon(sh: &Shuffle, steps: u64, delta: f64) -> Result<ShuffleBand, Error> {
    let w = &Work::new(super::WORK);
    let steps = check_steps(steps)?;
    let delta = check_delta(delta)?;
    let t = sh.steps_per_epoch;
    let (full, part) = (steps / t, steps % t);
    let started = full + u64::from(part > 0);
    let mu = sh.adjacency.sensitivity() * (started as f64).sqrt() / sh.sigma;
    let upper = gauss::epsilon_bracket(mu, delta).upper;
    let lower = lower_bound(sh, full, part, delta, upper, w)?;
    Ok(ShuffleBand {
        epsilon: Bracket {
            upper,
            lower: lower.min(upper),
        },
        epochs_started: started,
        epochs_full: full,
    })
}

/// The epochs of the lower-bound pair: (coordinates observed, ρ, how many).
fn epochs_of(sh: &Shuffle, full: u64, part: u64) -> Vec<(u64, f64, f64)> {
    let keep = 1.0 - sh.dropped;
    let t = sh.steps_per_epoch;
    let mut epochs = Vec::new();
    if full > 0 {
        epochs.push((t, keep, full as f64));
    }
    if part > 0 {
        epochs.push((part, keep * part as f64 / t as f64, 1.0));
    }
    epochs
}

/// The composed lower-bound lattices, both directions (P against Q, and Q against P).
fn lower_lattices(sh: &Shuffle, epochs: &[(u64, f64, f64)], d: f64) -> [Lattices; 2] {
    [false, true].map(|swap| {
        let steps: Vec<StepPld> = epochs
            .iter()
            .map(|&(c, rho, _)| {
                let mut atoms = binned_pair(sh, c, rho, d);
                if swap {
                    atoms.iter_mut().for_each(|a| *a = (a.1, a.0));
                }
                lower_step(&atoms, d)
            })
            .collect();
        Lattices {
            d,
            steps,
            counts: epochs.iter().map(|x| x.2).collect(),
            eta_total: 0.0,
            one_fft: None,
            floors: Vec::new(),
            offsets: Vec::new(),
            untilted: Default::default(),
            last_read: Default::default(),
        }
    })
}

/// The Gaussian's (μ, its optimal order near ε) for `e` epochs: the steer for the grid.
fn steer(sh: &Shuffle, e: f64, eps: f64) -> (f64, f64) {
    let mu = sh.adjacency.sensitivity() * e.sqrt() / sh.sigma;
    (mu, 1.0 + eps.max(1e-3) / (mu * mu).max(1e-12))
}

/// The Chua et al. lower bound on ε: `full` epochs and one of `part` steps.
fn lower_bound(
    sh: &Shuffle,
    full: u64,
    part: u64,
    delta: f64,
    upper: f64,
    w: &Work,
) -> Result<f64, Error> {
    if upper == 0.0 {
        return Ok(0.0);
    }
    w.budget(WORK);
    let epochs = epochs_of(sh, full, part);
    let e = epochs.iter().map(|x| x.2).sum::<f64>();
    // First at the upper end's scale; then, where the pair's ε proves much smaller (it is:
    // shuffling amplifies), again on a lattice and tilt at that scale, whose discretization
    // loses far less of it (σ 3.58, t 184, δ 7.3e-12: the first pass read 0 at 2 epochs and
    // 0.145 at 7 after 0.175 at 6). Every pass is a certified lower bound: the best stands.
    let mut best = 0.0f64;
    let mut guess = upper;
    for pass in 0..4 {
        let before = best;
        let (_, alpha) = steer(sh, e, guess);
        let d = initial_spacing(guess, alpha, e, TOL) / f64::from(1 + pass);
        for lat in lower_lattices(sh, &epochs, d) {
            match eps_direction(&lat, delta, 0.7 * guess, alpha, TOL, w) {
                Ok((_, l, _)) => best = best.max(l),
                // A lower bound may always fall back to a weaker one: 0 for this direction.
                Err(Error::PldBudget { .. }) => {}
                Err(other) => return Err(other),
            }
        }
        let next = if best > 0.0 { best } else { 0.1 * guess };
        // Again at the new scale while it is a different one and the last pass gained.
        if (pass > 0 && best < 1.02 * before) || !w.has_work() {
            break;
        }
        guess = next;
    }
    Ok(best)
}

/// The certified band on δ at ε after `steps` steps of shuffled training: the
/// no-amplification Gaussian's δ above, the Chua et al. pair's composed δ below.
pub fn delta(sh: &Shuffle, steps: u64, eps: f64) -> Result<Bracket, Error> {
    Ok(profile(sh, steps, &[eps])?[0])
}

/// [`delta`] at each ε of `eps` (ε ≥ 0; δ(0) is the total variation), sharing one set
/// of lattices and reusing a composition wherever it resolves the next ε well.
pub fn profile(sh: &Shuffle, steps: u64, eps: &[f64]) -> Result<Vec<Bracket>, Error> {
    let w = &Work::new(super::WORK);
    let steps = check_steps(steps)?;
    if eps.is_empty() || eps.len() > 10_000 {
        return Err(Error::ProfileLength(eps.len()));
    }
    if let Some(&bad) = eps.iter().find(|e| !(e.is_finite() && **e >= 0.0)) {
        return Err(Error::Epsilon(bad));
    }
    let t = sh.steps_per_epoch;
    let (full, part) = (steps / t, steps % t);
    let started = (full + u64::from(part > 0)) as f64;
    let epochs = epochs_of(sh, full, part);
    let e = epochs.iter().map(|x| x.2).sum::<f64>();
    let mid = eps.iter().cloned().fold(0.0f64, f64::max) * 0.5;
    let (_, alpha) = steer(sh, e, mid);
    w.budget(WORK);
    let d = initial_spacing(mid.max(0.1), alpha, e, TOL);
    let mut out: Vec<Bracket> = eps
        .iter()
        .map(|&x| Bracket {
            upper: gauss::delta_bracket(steer(sh, started, x).0, x).upper,
            lower: 0.0,
        })
        .collect();
    for lat in lower_lattices(sh, &epochs, d) {
        let mut comps: Vec<super::compose::Composed> = Vec::new();
        for (slot, &x) in out.iter_mut().zip(eps) {
            let hit = comps.iter().position(|c| {
                let (lo, hi) = c.good_range();
                x >= lo && x <= hi
            });
            let c = match hit {
                Some(i) => &comps[i],
                None if comps.len() < 12 => {
                    let (_, a) = steer(sh, e, x);
                    match lat.compose(lat.tilt_for(x, a - 1.0, w), w) {
                        Ok(c) => {
                            comps.push(c);
                            &comps[comps.len() - 1]
                        }
                        Err(Error::PldBudget { .. }) => continue,
                        Err(other) => return Err(other),
                    }
                }
                // Compositions spent: a lower bound may always be weaker (0 here).
                None => continue,
            };
            if c.side(x) != Side::Below {
                slot.lower = slot.lower.max(c.delta(x).1);
            }
        }
    }
    for b in &mut out {
        b.lower = b.lower.min(b.upper);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_max_cdf_and_its_complement_add_to_one() {
        for &(m, c, rho) in &[
            (-3.0, 1, 1.0),
            (0.4, 5, 0.9),
            (2.5, 200, 1.0),
            (8.0, 7, 0.3),
        ] {
            let (f, s) = max_cdf(m, 2.0, 1.1, c, rho);
            assert!((exp(f) + exp(s) - 1.0).abs() < 1e-13, "{m} {c}");
        }
        // c = 1, ρ = 1: the shifted Gaussian itself.
        let (f, _) = max_cdf(1.3, 2.0, 0.8, 1, 1.0);
        assert!((f - ln_phi_bar((2.0 - 1.3) / 0.8)).abs() < 1e-14);
    }

    #[test]
    fn binned_masses_sum_to_one() {
        let sh = Shuffle::new(1.0, 50, 0.0, Adjacency::AddRemove).unwrap();
        let atoms = binned_pair(&sh, 50, 1.0, 1e-3);
        let p: f64 = atoms.iter().map(|a| exp(a.0)).sum();
        let q: f64 = atoms.iter().map(|a| exp(a.1)).sum();
        assert!((p - 1.0).abs() < 1e-6 && p <= 1.0, "{p}");
        assert!((q - 1.0).abs() < 1e-6 && q >= 1.0, "{q}");
    }
}
