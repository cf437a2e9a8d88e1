//! Stage 1, the lattices: the per-step pessimistic and optimistic PLDs on a spacing, their
//! T-fold compositions at a tilt, and ε read from them in one direction.

use super::*;
#[cfg_attr(not(full_engine), allow(unused_imports))]
use crate::engine::math::{exp, exp_m1, ln, ln_1p, log2, powf};
use crate::engine::pld::compose::Work;

/// The per-step lattices of every phase, for one direction and spacing.
pub(super) struct Lattices {
    pub(super) d: f64,
    pub(super) steps: Vec<StepPld>,
    /// Steps per phase; changed only through [`Self::set_steps`] (the moments read depend on them).
    pub(super) counts: Vec<f64>,
    /// Untilted mass the ladder's truncations may send to +∞, in all.
    #[cfg_attr(not(full_engine), allow(dead_code))]
    pub(super) eta_total: f64,
    /// Compose in one FFT of up to this many points only (no ladder: it would
    /// re-discretize the lattice).
    pub(super) one_fft: Option<usize>,
    /// Per phase, for the reversed pair ([`eps_reversed`]): the infimum of its losses,
    /// ln(1 − q) for a plain SGM step (−∞, which makes the reversed charge infinite, where
    /// not known). The P-mass per step below a lattice is at most the range's cut η =
    /// eta_total / Σ steps.
    #[cfg_attr(not(full_engine), allow(dead_code))]
    pub(super) floors: Vec<f64>,
    /// Per phase, its lattice's offset o: the lattice is {kΔ + o} and holds L − o.
    pub(super) offsets: Vec<f64>,
    /// The composed loss's untilted mean and spread ([`Self::untilted_moments`]), read once:
    /// every tilt solve starts from them (a profile solves ~10 tilts on lattices of ~2.5·10⁵
    /// points).
    pub(super) untilted: std::sync::OnceLock<(f64, f64)>,
    /// The last tilted moments read ([`Self::tilted_moments`]): its tilt's bits and the
    /// moments. A tilt solve starts where the last one ended, at the tilt it read last (the
    /// profile's points: a third of the lattices' reads).
    pub(super) last_read: std::sync::Mutex<Option<(u64, (f64, f64))>>,
}

impl Lattices {
    /// `eta`: the P-mass per step the lattices' range may cut; `eta_law`: the same budget
    /// for a random allocation's law (uncapped, [`eta_for`]); `tail_d`: the largest spacing
    /// a plain SGM step's coarse continuation may have (None: one resolution, as
    /// dp_accounting's grid is).
    pub(super) fn build(
        phases: &[Phase],
        dir: Direction,
        d: f64,
        etas: (f64, f64),
        tail_d: Option<f64>,
        w: &Work,
    ) -> Result<Lattices, Error> {
        Self::build_split(phases, dir, d, etas, tail_d, SPLIT_POINTS, w)
    }

    /// [`Lattices::build`], a plain SGM step's range split in two resolutions from
    /// `split_points` points on (SPLIT_POINTS in [`Lattices::build`]).
    #[cfg_attr(not(full_engine), allow(unused_variables))]
    pub(super) fn build_split(
        phases: &[Phase],
        dir: Direction,
        d: f64,
        (eta, eta_law): (f64, f64),
        tail_d: Option<f64>,
        split_points: f64,
        w: &Work,
    ) -> Result<Lattices, Error> {
        let mut steps = Vec::with_capacity(phases.len());
        // Per phase: its lattice is {kΔ + o} ([`discretize::bulk_offset`]; 0 but for a plain
        // SGM step on two resolutions).
        #[cfg_attr(not(full_engine), allow(unused_mut))]
        let mut offsets = vec![0.0; phases.len()];
        for (i, ph) in phases.iter().enumerate() {
            #[cfg(not(full_engine))]
            let _ = i;
            let (q, s) = (ph.sgm.q(), ph.sgm.sigma());
            #[cfg(full_engine)]
            if ph.trunc.is_some() && (ph.group > 1 || ph.adjacency != Adjacency::AddRemove) {
                return Err(Error::Sampling(
                    "truncated Poisson is available for one example per user under add/remove adjacency".into(),
                ));
            }
            #[cfg(full_engine)]
            if let Some(t) = ph.alloc {
                steps.push(allocation::law(s, t, d, eta_law.max(eta), w)?.step_pld(dir, d, eta)?);
                continue;
            }
            #[cfg(full_engine)]
            let mix = match ph.adjacency {
                _ if ph.is_sgm() || ph.trunc.is_some() || ph.alloc.is_some() => None,
                Adjacency::AddRemove => Some(group::Mix::new(q, ph.group, s)),
                Adjacency::ReplaceOne => Some(group::Mix::replace_one(q, ph.group, s)),
            };
            #[cfg(full_engine)]
            let (lo, hi) = match &mix {
                Some(m) => group::loss_range(m, dir, eta),
                None => loss_range(q, s, dir, eta),
            };
            #[cfg(not(full_engine))]
            let (lo, hi) = loss_range(q, s, dir, eta);
            // A long range of a plain SGM step (small q) on two resolutions: Δ on the first
            // CORE_POINTS points, a coarse lattice above.
            #[cfg(full_engine)]
            let split = match tail_d {
                Some(big)
                    if ph.is_sgm() && dir == Direction::Remove && (hi - lo) / d > split_points =>
                {
                    // f: the largest power of two with fΔ ≤ tail_d (at least 2), unless the
                    // coarse part would then need more than TAIL_POINTS points.
                    let b = lo + CORE_POINTS * d;
                    let big = big.max((hi - b) / TAIL_POINTS);
                    let f = powf(2f64, log2(big / d).floor()).max(2.0);
                    // A coarse part 2²⁰ times as coarse and more is beyond what the ladder's
                    // exact moves between its lattices (f fine points per coarse one) afford
                    // (q = 0.5, σ = 0.001, T = 10⁹: f = 2³⁶, 52 s and 4 GB on the δ side).
                    if f > MAX_TAIL_FACTOR {
                        return Err(Error::PldBudget {
                            reason: TOO_MANY_POINTS,
                        });
                    }
                    Some((b, f as i64))
                }
                _ => None,
            };
            #[cfg(not(full_engine))]
            let split: Option<(f64, i64)> = None;
            // (The fine part ends on a coarse point, ⌈b/fΔ⌉·f: with a huge f that is far beyond
            // b — q = 0.5, σ = 0.001, T = 10⁹ asked for 7·10¹⁰ points and the allocation
            // aborted the process.)
            // What a plain SGM step's lattice is kept under ([`Work::kept`]): all its
            // discretization reads, with the coarse continuation's start and factor.
            #[cfg(full_engine)]
            let key = |coarse| ([q, s, d, lo, hi].map(f64::to_bits), dir, coarse);
            let points = match split {
                Some((b, f)) => {
                    let big = d * f as f64;
                    (b / big).ceil() * f as f64 - (lo / d).floor() + (hi - b) / big + 2.0
                }
                None => (hi - lo) / d,
            };
            if points > MAX_STEP_POINTS {
                return Err(Error::PldBudget {
                    reason: TOO_MANY_POINTS,
                });
            }
            // A mixture's point costs a bisection and a tail pair per component (user level:
            // K + 1 of them, where one example's pair has 2): charged as such, so a large K
            // refuses within the call's budget instead of running for minutes (hardening 4 #2).
            #[cfg(full_engine)]
            let per_point = match &mix {
                Some(m) => POINT_WORK * m.components() as f64 / 2.0,
                None => POINT_WORK,
            };
            #[cfg(not(full_engine))]
            let per_point = POINT_WORK;
            if !w.spend(per_point * points) {
                return Err(Error::PldBudget { reason: WORK_SPENT });
            }
            #[cfg(full_engine)]
            if let Some((b, f)) = split {
                offsets[i] = discretize::bulk_offset(q, s, d, discretize::BULK_BINS);
                let o = offsets[i];
                steps.push(w.kept(key(Some((b.to_bits(), f))), || {
                    discretize::step_pld_split(q, s, dir, d, (lo, b, hi), (f, o))
                }));
                continue;
            }
            #[cfg(full_engine)]
            if let Some(m) = &mix {
                steps.push(group::step_pld(m, dir, d, lo, hi));
                continue;
            }
            #[cfg(full_engine)]
            if let Some((p_t, c)) = ph.trunc {
                // The revealed mixture of the two branches' SGM pairs ([`truncated`]).
                let (lo2, hi2) = loss_range(c, s / 2.0, dir, eta);
                if !w.spend(POINT_WORK * (hi2 - lo2) / d) {
                    return Err(Error::PldBudget { reason: WORK_SPENT });
                }
                let a = step_pld(q, s, dir, d, lo, hi);
                let b = step_pld(c, s / 2.0, dir, d, lo2, hi2);
                steps.push(truncated::mix_steps(&a, 1.0 - p_t, &b, p_t));
                continue;
            }
            #[cfg(full_engine)]
            if ph.is_sgm() {
                steps.push(w.kept(key(None), || step_pld(q, s, dir, d, lo, hi)));
                continue;
            }
            steps.push(step_pld(q, s, dir, d, lo, hi));
        }
        let floors = phases
            .iter()
            .map(|p| match (p.is_sgm(), dir) {
                (true, Direction::Remove) => ln_1p(-p.sgm.q()),
                _ => f64::NEG_INFINITY,
            })
            .collect();
        Ok(Lattices {
            d,
            steps,
            counts: phases.iter().map(|p| p.steps as f64).collect(),
            eta_total: eta * total_steps(phases),
            one_fft: None,
            floors,
            offsets,
            untilted: Default::default(),
            last_read: Default::default(),
        })
    }

    pub(super) fn phases(&self) -> Vec<CPhase<'_>> {
        self.steps
            .iter()
            .zip(&self.counts)
            .map(|(pld, &steps)| CPhase { pld, steps })
            .collect()
    }

    pub(super) fn compose(&self, lambda: f64, w: &Work) -> Result<Composed, Error> {
        self.compose_at(lambda, None, w)
    }

    /// [`Lattices::compose`] with the ladder's lower measure also contracted after each
    /// core∗tail product (for a one-step law narrower than the tail's spacing: [`jumps`]).
    #[cfg(full_engine)]
    pub(super) fn compose_lowering_after(&self, lambda: f64, w: &Work) -> Result<Composed, Error> {
        w.lowering_after(compose::Lowering::KeepingFar, || self.compose(lambda, w))
    }

    /// [`Lattices::compose`], the ladder's FFT floors within `floor` of each product's mass
    /// (None: the ladder's own share; see [`eps_direction`]).
    pub(super) fn compose_at(
        &self,
        lambda: f64,
        floor: Option<f64>,
        w: &Work,
    ) -> Result<Composed, Error> {
        let lambda = lambda.max(0.0);
        // One FFT while the window fits (fast, and the tightest for short runs); the
        // ladder beyond — unless the lattice must be kept as it is (`one_fft`: its own
        // widest window, then a refusal).
        let max = self
            .one_fft
            .unwrap_or_else(|| compose::max_fft(self.counts.iter().sum()));
        // (A two-resolution lattice composes on the ladder only.)
        w.set_laddered(true);
        if self.steps.iter().any(|s| s.tail.is_some()) {
            return self.ladder(lambda, floor, w);
        }
        match compose::compose_within(&self.phases(), lambda, self.d, max, w) {
            Ok(c) => {
                w.set_laddered(false);
                return Ok(c);
            }
            Err(e) if e.needed.is_infinite() => {
                return Err(Error::PldBudget { reason: WORK_SPENT })
            }
            Err(_) if self.one_fft.is_some() => return Err(Error::PldBudget { reason: TOO_WIDE }),
            Err(_) => {}
        }
        self.ladder(lambda, floor, w)
    }

    #[cfg(not(full_engine))]
    pub(super) fn ladder(
        &self,
        _lambda: f64,
        _floor: Option<f64>,
        _w: &Work,
    ) -> Result<Composed, Error> {
        Err(Error::PldBudget { reason: TOO_WIDE })
    }

    /// The composition by repeated squaring on evolving lattices ([`ladder`]).
    #[cfg(full_engine)]
    pub(super) fn ladder(
        &self,
        lambda: f64,
        floor: Option<f64>,
        w: &Work,
    ) -> Result<Composed, Error> {
        let floor = floor.unwrap_or(ladder::FLOOR_SHARE);
        let mut c = ladder::compose(
            &self.ladder_phases(),
            lambda,
            (self.d, self.eta_total, floor),
            w,
        )
        .map_err(ladder_error)?;
        c.shift_by(self.shift());
        Ok(c)
    }

    /// Σ T·o over the phases: the composed loss is the composed lattice's plus this.
    pub(super) fn shift(&self) -> f64 {
        (self.offsets.iter().zip(&self.counts))
            .map(|(o, t)| o * t)
            .sum()
    }

    /// The phases as the ladder takes them: (lattice, steps).
    #[cfg(full_engine)]
    pub(super) fn ladder_phases(&self) -> Vec<(&StepPld, u64)> {
        (self.steps.iter().zip(&self.counts))
            .map(|(p, &t)| (p, t as u64))
            .collect()
    }

    /// Whether the add pair is read from these (remove) lattices, reversed: where one has two
    /// resolutions (plain SGM steps only). Elsewhere the add pair's own lattice is the faster
    /// (q = 1e-4, σ = 1, T = 10⁵: 48 ms against 69 ms reversed, on lattices of 40k and 85k
    /// points).
    #[cfg(full_engine)]
    pub(super) fn reads_reversed(&self) -> bool {
        self.steps.iter().any(|s| s.tail.is_some())
    }

    /// Σ T·(−ln(1 − q)) over the phases: the add pair's largest composed loss (+∞ where a
    /// phase is not a plain SGM one).
    #[cfg(full_engine)]
    pub(super) fn add_loss_top(&self) -> f64 {
        (self.floors.iter().zip(&self.counts))
            .map(|(&floor, &t)| -t * floor)
            .sum()
    }

    /// The reversed pair's composition at tilt λ = −(1 + θ) on the ladder.
    #[cfg(full_engine)]
    pub(super) fn ladder_reversed(&self, theta: f64, w: &Work) -> Result<Composed, Error> {
        let lambda = -(1.0 + theta.max(0.0));
        // The mass below a lattice sits at losses ≥ its infimum: moment ≤ η·e^{λ·inf} (λ < 0).
        let ln_eta = ln(self.eta_total / self.counts.iter().sum::<f64>());
        // (On the lattice's losses L − o.)
        let edges: Vec<f64> = (self.floors.iter().zip(&self.offsets))
            .map(|(&floor, &o)| ln_eta + lambda * (floor - o))
            .collect();
        // The tops' ledger is charged at e^{−θε}, as if it sat at the answer; its default share
        // (TOP_REL per settle, ~2·TOP_REL·T in all) must stay well below δ's share of the
        // composed tilted moment, 1/((1 + θ)²·σ_T·√(2π)) where the tilt centres the answer
        // (σ_T the tilted spread). At tiny ε that share is small: q = 1.8e-8, σ = 0.77,
        // T = 1.4·10⁸, δ = 9.3e-12 (θ ≈ 11,700, σ_T = 4.4e-4) puts it at 6.6e-6 against the
        // tops' 2.8e-5, and the add pair's upper end read 0.00245 where its δ at 0.00232 is
        // 7.6e-12 (tests/reference/add_inversion.py). There the tops take a thousandth of it.
        let (_, var) = self.tilted_moments()(lambda);
        let share = 1.0 / (lambda * lambda * var.sqrt() * (2.0 * std::f64::consts::PI).sqrt());
        let top = if 2.0 * ladder::TOP_REL * self.counts.iter().sum::<f64>() > 1e-3 * share {
            1e-3 * share
        } else {
            f64::INFINITY
        };
        let shift = self.shift();
        let mut c = ladder::compose_reversed(
            &self.ladder_phases(),
            lambda,
            (self.d, top),
            &edges,
            shift,
            w,
        )
        .map_err(ladder_error)?;
        c.shift_by(shift);
        Ok(c)
    }

    /// The composed loss's tilted mean and standard deviation at tilt λ, in loss units (on
    /// the lattices, plus their shift).
    pub(super) fn tilted_moments(&self) -> impl Fn(f64) -> (f64, f64) + '_ {
        let phases = self.phases();
        let sh = self.shift();
        move |l: f64| {
            let last = || self.last_read.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((bits, read)) = *last() {
                if bits == l.to_bits() {
                    return read;
                }
            }
            let (m, v) = tilted_mean(&phases, l, self.d);
            let read = (m * self.d + sh, v * self.d);
            *last() = Some((l.to_bits(), read));
            read
        }
    }

    /// Phase `i` composed `t` times from now on (ε over training's checkpoints on one set of
    /// lattices): the moments read for the old counts are dropped with them.
    pub(super) fn set_steps(&mut self, i: usize, t: f64) {
        self.counts[i] = t;
        self.untilted = Default::default();
        *self.last_read.get_mut().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The composed loss's mean and standard deviation at tilt 0 ([`Self::tilted_moments`]),
    /// computed on the first call.
    pub(super) fn untilted_moments(&self) -> (f64, f64) {
        *self.untilted.get_or_init(|| self.tilted_moments()(0.0))
    }

    /// Σ T·(a lattice index of each phase's step, `k`)·Δ plus the shift: the composed loss's
    /// least (`k_lo`) or greatest (`k_top`) value.
    pub(super) fn composed_end(&self, k: impl Fn(&StepPld) -> i64) -> f64 {
        (self.steps.iter().zip(&self.counts))
            .map(|(p, &t)| t * k(p) as f64 * self.d)
            .sum::<f64>()
            + self.shift()
    }

    /// The θ ≥ 0 whose tilt λ = −(1 + θ) puts the composed loss's tilted mean at −ε (the
    /// reversed pair's answer sits at the remove pair's loss −ε), as [`Self::tilt_for`].
    #[cfg(full_engine)]
    pub(super) fn tilt_reversed(&self, eps: f64, start: f64, w: &Work) -> f64 {
        let at = self.tilted_moments();
        let at = |th: f64| at(-(1.0 + th));
        let (m0, _) = at(0.0);
        let target = -eps;
        if m0 <= target {
            return 0.0;
        }
        // The composed loss is at least Σ T·(first lattice point): aim above it.
        let bottom = self.composed_end(|p| p.k_lo);
        let target = target.max(m0 + 0.9 * (bottom - m0));
        solve_tilt(at, target, start, -1.0, self.d, w)
    }

    /// The tilt whose tilted mean is ε (λ ≥ 0), to within ½·√(Δ·variance) ([`solve_tilt`];
    /// the tilt only steers precision, every tilt gives valid bounds):
    /// Newton's method on T·κ'(λ) = ε from `start`, safeguarded by bisection.
    pub(super) fn tilt_for(&self, eps: f64, start: f64, w: &Work) -> f64 {
        let (m0, _) = self.untilted_moments();
        if m0 >= eps {
            return 0.0;
        }
        let at = self.tilted_moments();
        // The tilted mean cannot pass the largest composed loss (the add direction's
        // loss is bounded by −ln(1−q) per step): aim inside it.
        let top = self.composed_end(StepPld::k_top);
        let eps = eps.min(m0 + 0.9 * (top - m0));
        solve_tilt(at, eps, start, 1.0, self.d, w)
    }
}

/// The typed refusal of a ladder that ran out of work or of FFT length.
#[cfg(full_engine)]
pub(super) fn ladder_error(e: compose::TooWide) -> Error {
    if e.needed.is_infinite() {
        Error::PldBudget { reason: WORK_SPENT }
    } else {
        Error::PldBudget { reason: TOO_WIDE }
    }
}

/// How far above its target a tilted mean is for [`solve_tilt`] to step on its logarithm.
const FAR_ABOVE: f64 = 2.0;

/// The tilt x ≥ 0 whose tilted mean m(x) (`at` gives it and its slope, the tilted variance, in ε
/// units) is `target` to within ½·√(Δ·slope): half a tilted standard deviation times √Δ. (At
/// half a standard deviation the typical class of `cargo bench --bench engine -- class_typical`
/// took longer — `python3 benches/typical_ab.py`, 90th percentile 17.5 → 22.0 ms, 2026-12-06:
/// a tilt further from the answer reads a wider bracket, and more runs took a second pass.)
/// `dir` = +1 where m grows with x, −1
/// where it falls. Newton's method from `start`, safeguarded by bisection; unbracketed above, a
/// step grows the tilt at most 8× (a heavy tail makes the slope tiny there, and one step used
/// to jump to the cap, 1e7). The tilt only steers precision: every tilt gives valid bounds.
pub(super) fn solve_tilt(
    at: impl Fn(f64) -> (f64, f64),
    target: f64,
    start: f64,
    dir: f64,
    d: f64,
    w: &Work,
) -> f64 {
    let (mut lo, mut hi) = (0.0, f64::INFINITY);
    let mut x = start.max(0.0);
    for _ in 0..40 {
        if !w.has_work() {
            return x;
        }
        let (m, slope) = at(x);
        if (m - target).abs() < 0.5 * (slope * d).max(0.0).sqrt().max(d) {
            return x;
        }
        // err > 0: the tilt must grow.
        let err = dir * (target - m);
        if err > 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        // Far above the target (m > 2·target, m growing with the tilt) the step is Newton's
        // on ln m: m climbs like an exponential into a heavy tail, and Newton's on m itself
        // then crept down a few per cent of the way each read (MNIST's chart, 256/60000,
        // σ = 1.1: from a tilted mean 38× the target, six reads). ln m's step is the longer
        // one above the target (m·ln(m/target) ≥ m − target), and the bracket still holds it.
        let newton = if dir > 0.0 && target > 0.0 && m > FAR_ABOVE * target {
            x + m * ln(target / m) / slope.max(1e-300)
        } else {
            x + err / slope.max(1e-300)
        };
        x = if newton > lo && newton < hi {
            if hi.is_finite() {
                newton
            } else {
                newton.min(8.0 * x.max(0.5))
            }
        } else if hi.is_finite() {
            0.5 * (lo + hi)
        } else {
            2.0 * x.max(0.5)
        };
        if x > 1e7 {
            return 1e7;
        }
    }
    x
}

/// ε(δ) of one composition, solved over its whole window (every ε in the window gets
/// a valid bracket; the tilt only decides how tight): (upper, lower), or where the
/// answer lies if outside the window.
pub(super) fn eps_on(c: &Composed, delta: f64) -> Result<(f64, f64), Side> {
    let (_, hi) = c.window_range();
    let (d_hi_up, _) = c.delta(hi);
    if d_hi_up > delta {
        return Err(Side::Above);
    }
    // Upper: any ε with δ_upper(ε) ≤ δ is a certified upper bound (δ_true ≤ δ_upper
    // and δ_true decreases); bisection keeps such a point b.
    let up = |e: f64| c.delta(e).0;
    let lo_curve = |e: f64| c.delta(e).1;
    if up(0.0) <= delta {
        return Ok((0.0, 0.0));
    }
    let upper = upper_crossing(up, delta, hi);
    // Lower: any ε with δ_lower(ε) > δ is a certified lower bound (δ_true ≥ δ_lower, so
    // δ_true > δ there and at every smaller ε). Far below the tilt the lower curve only
    // sees the window's masses and may dip, so start from the upper answer and step
    // down until the lower curve is above δ, then bisect keeping that property.
    let mut a = upper;
    let mut k = 0;
    while lo_curve(a) <= delta {
        a = upper - c.d * f64::powi(2.0, k);
        k += 1;
        if a <= 0.0 || k > 60 {
            return Ok((upper, 0.0));
        }
    }
    let mut b = upper;
    for _ in 0..100 {
        let m = 0.5 * (a + b);
        if lo_curve(m) > delta {
            a = m;
        } else {
            b = m;
        }
    }
    Ok((upper, a))
}

/// The reversed pair's certified upper ε(δ) from one composition: the smallest ε in the
/// window's range with δ_upper(ε) ≤ δ (any such ε is an upper bound: the true δ falls), or
/// None when even the window's far end is above δ (a steeper tilt is needed).
#[cfg(full_engine)]
pub(super) fn eps_on_reversed(c: &Composed, delta: f64) -> Option<f64> {
    let (lo, _) = c.window_range();
    let up = |e: f64| c.delta(e).0;
    let far = (-lo).max(0.0);
    if up(0.0) <= delta {
        return Some(0.0);
    }
    if up(far) > delta {
        return None;
    }
    Some(upper_crossing(up, delta, far))
}

/// Bisection on [0, b] (up(0) > δ) keeping a point with up ≤ δ: where `up` bounds a falling
/// δ(ε) from above, that point is a certified upper ε(δ).
pub(super) fn upper_crossing(up: impl Fn(f64) -> f64, delta: f64, mut b: f64) -> f64 {
    let mut a = 0.0;
    for _ in 0..100 {
        let m = 0.5 * (a + b);
        if up(m) > delta {
            a = m;
        } else {
            b = m;
        }
    }
    b
}

/// The add pair's ε(δ), an upper bound, read from the remove pair's lattices ("the reversed
/// pair" in the module docs): tilted where the answer is guessed, re-tilted at the answer
/// found; stops as soon as it is at most `enough` (the remove pair's upper end: the larger
/// of the two is the answer). Returns (upper, window length).
#[cfg(full_engine)]
pub(super) fn eps_reversed(
    lat: &Lattices,
    delta: f64,
    (guess, enough): (f64, f64),
    bern_add: f64,
    w: &Work,
) -> Result<(f64, usize), Error> {
    // The add pair's loss is at most −ln(1 − q) per step, so δ_add(ε) = 0 from ε = Σ T·(−ln(1 − q))
    // on; and Bernstein's bound for the add pair (`bern_add`) is another certified upper end.
    // Where either is at most `enough` the add pair cannot be the larger (short runs at small
    // q, where a tilt aimed beyond it runs away; q = 1.2e-8, σ = 0.49, T = 179,563, δ = 7.6e-9:
    // the reversed reading gave 0.029, Bernstein 2.4e-4, the remove pair's upper end 5.4e-4).
    let top = lat.add_loss_top().min(bern_add);
    if top <= enough {
        return Ok((top, 0));
    }
    let mut theta = lat.tilt_reversed(guess, 1.0, w);
    let mut best: Option<(f64, usize)> = None;
    for _ in 0..6 {
        let c = lat.ladder_reversed(theta, w)?;
        let n = c.window_len();
        match eps_on_reversed(&c, delta) {
            Some(u) => {
                let b = best.map_or((u, n), |(bu, bn)| (bu.min(u), bn.max(n)));
                best = Some(b);
                if b.0 <= enough || (-u - c.center).abs() <= 1.5 * c.spread {
                    break;
                }
                let t2 = lat.tilt_reversed(u, theta, w);
                if (t2 - theta).abs() <= 1e-3 * theta.max(1.0) {
                    break;
                }
                theta = t2;
            }
            None => {
                let (lo, _) = c.window_range();
                theta = lat.tilt_reversed(-lo + 3.0 * c.spread, theta.max(0.5) * 1.5, w);
            }
        }
    }
    best.map(|(u, n)| (u.min(top), n)).ok_or(Error::PldBudget {
        reason: crate::engine::error::Refusal::NoTilt,
    })
}

/// The P-mass per step that may be sent to +∞ (it raises δ by at most T·η). Near the
/// answer δ(ε) falls at least as fast as δ·(α − 1)... so T·η ≤ 0.05·TOL·ε·α·δ moves the
/// upper ε by ≲ 5 % of the target width (ε, α: the exact-RDP optimum, which only
/// steers the budget; the bracket measures what it costs).
/// Gaussian tails are cheap to keep, so the per-step cut is at most 1e-14; the random
/// allocation's log-normal tail is not (its cap sets the width of a t-fold FFT), so its
/// law takes the budget itself ([`eta_budget`]).
pub(super) fn eta_for(delta: f64, t: f64, eps: f64, alpha: f64) -> f64 {
    eta_budget(delta, t, eps, alpha).min(1e-14)
}

/// The budget behind [`eta_for`], before its cap.
pub(super) fn eta_budget(delta: f64, t: f64, eps: f64, alpha: f64) -> f64 {
    let rel = (0.05 * TOL * eps * (alpha - 1.0).max(1.0)).clamp(1e-7 * TOL, 0.05 * TOL);
    (rel * delta / t).max(1e-300)
}

/// The scale of the losses that carry almost all of P in one step of the smallest-q phase:
/// their standard deviation under Q, √χ² = q·√(e^{1/σ²} − 1) (plain SGM phases only; the
/// page's own wasm, without the two-resolution lattices, keeps its one spacing rule).
#[cfg(not(full_engine))]
pub(super) fn bulk_scale(_: &[Phase]) -> Option<f64> {
    None
}

#[cfg(full_engine)]
pub(super) fn bulk_scale(phases: &[Phase]) -> Option<f64> {
    phases
        .iter()
        .filter(|p| p.is_sgm())
        .map(|p| p.sgm.q() * exp_m1(1.0 / (p.sgm.sigma() * p.sgm.sigma())).sqrt())
        .min_by(f64::total_cmp)
}

/// A lattice whose spacing is above a sixteenth of [`bulk_scale`] merges those losses into a
/// few points for the lower bound, which then loses their spread (q = 1e-6, σ = 0.6: a
/// per-step standard deviation of 6.5e-10 against the true 4e-6).
pub(super) const BULK_SHARE: f64 = 16.0;

/// The spacing that resolves the bulk ([`BULK_SHARE`]), but not below `finest`
/// ([`finest_spacing`]): a bin's connect-the-dots split taken from ΔP and ΔQ has relative
/// rounding error ~u/Δ, and at q = 1e-8, σ = 10, T = 10⁹ a spacing of 1e-9 gave an upper
/// bound 5× that of 1e-8.
pub(super) fn bulk_spacing(bulk: f64, finest: f64) -> f64 {
    (bulk / BULK_SHARE).max(finest)
}

/// The finest per-step spacing for T steps: 1e-17·T·r (a bin's connect-the-dots split has
/// relative rounding ~u·r/Δ, counted T times; r from [`split_share`]), and 1e-9·r.
pub(super) fn finest_spacing(t: f64, r: f64) -> f64 {
    (1e-17 * t * r).max(1e-9 * r)
}

/// The factor r of the split's relative rounding ~u·r/Δ ([`discretize`]'s `edge_excess`):
/// q·E_P[Y] = q·(1 − q + q·e^{1/σ²}) (at most 1) where every phase is a plain SGM, whose
/// bins split from their mixture components; 1 otherwise.
pub(super) fn split_share(phases: &[Phase]) -> f64 {
    if !phases.iter().all(Phase::is_sgm) {
        return 1.0;
    }
    phases
        .iter()
        .map(|p| {
            let (q, s) = (p.sgm.q(), p.sgm.sigma());
            q * (1.0 - q + q * exp(1.0 / (s * s)))
        })
        .fold(0.0, f64::max)
        .min(1.0)
}

pub(super) fn initial_spacing(eps: f64, alpha: f64, t: f64, tol: f64) -> f64 {
    let d = (3.0 * tol * eps.max(1e-3) / (t * alpha.max(1.0 + 1e-3))).sqrt();
    d.min(eps.max(1e-3) / 20.0).clamp(1e-7, 1.0)
}

/// ε(δ) for one direction on one lattice set: (upper, lower, fft length). The tilt
/// starts where the RDP optimum points; when the answer lands outside the composition's
/// well-resolved range it is re-tilted there, keeping the tighter bracket.
pub(super) fn eps_direction(
    lat: &Lattices,
    delta: f64,
    eps_guess: f64,
    alpha: f64,
    tol: f64,
    w: &Work,
) -> Result<(f64, f64, usize), Error> {
    eps_direction_under(lat, delta, (eps_guess, f64::NEG_INFINITY), alpha, tol, w)
}

/// [`eps_direction`], done as soon as its upper end is at most `bar`: all that is asked of a
/// pair that cannot be the larger once its certified upper end is below the other pair's
/// (the add pair, read on a coarse lattice against the remove pair's upper end: q = 1e-3,
/// σ = 0.6, T = 1000, δ = 1e-10 re-tilted its add pair three more times, reading 2.08, 1.01,
/// 0.68, 0.68 under the remove pair's 4.73).
pub(super) fn eps_direction_under(
    lat: &Lattices,
    delta: f64,
    (eps_guess, bar): (f64, f64),
    alpha: f64,
    tol: f64,
    w: &Work,
) -> Result<(f64, f64, usize), Error> {
    let mut lambda = lat.tilt_for(eps_guess, alpha - 1.0, w);
    // Every composition gives a certified bracket, so brackets from several tilts
    // combine: the smallest upper and the largest lower bound.
    let mut best: Option<(f64, f64, usize)> = None;
    // The ladder's FFT floor, as a share of each product's mass (None: its default).
    #[cfg_attr(not(full_engine), allow(unused_mut))]
    let mut floor: Option<f64> = None;
    for _ in 0..6 {
        let c = match (lat.compose_at(lambda, floor, w), best) {
            (Ok(c), _) => c,
            // A re-tilt or a lower floor that runs out of work keeps the bracket found (q =
            // 3.95e-7, σ = 0.59, T = 1.4·10⁷: [0.38746, 0.38809] after two compositions, then
            // a third ran out, and the whole pass was refused).
            (Err(Error::PldBudget { reason }), Some(b)) if reason == WORK_SPENT => return Ok(b),
            (Err(e), _) => return Err(e),
        };
        match eps_on(&c, delta) {
            Ok((u, l)) => {
                let merged = match best {
                    None => (u, l, c.window_len()),
                    Some((bu, bl, n)) => (bu.min(u), bl.max(l), n.max(c.window_len())),
                };
                overlap(merged.0, merged.1)?;
                best = Some(merged);
                let (bu, bl, _) = merged;
                // (Within the caller's goal: a re-tilt would only narrow a bracket the pass
                // accepts. It used to ask a quarter of it, and a composition more: q = 1e-3,
                // σ = 0.6, T = 1000, δ = 1e-10 read [4.733145, 4.733622], 1.0e-4 wide, then
                // re-tilted for 35 ms to read [4.733240, 4.733569].)
                if bu - bl <= tol * bu || bu <= bar {
                    break;
                }
                // δ's share of the composed tilted moment (0: not kept — one FFT keeps none).
                let share = c.tilted_share(u, delta);
                // A tilt away from the answer: re-tilted at it first, before any lower floor
                // (below). A tilt that misses the answer makes δ a small share of the moment
                // by itself, and lowering the floor there bought the lower end at the price of
                // two more compositions at the wrong tilt: q = 8.518e-8, σ = 0.6797,
                // T = 957,017,205, δ = 0.00209 was tilted at ε = 0.041 (12 spreads above the
                // answer), lowered its floor twice and read [0.001841, 0.001869] (the remove
                // pair) in 1.2 s; re-tilted, [0.001840, 0.001866] (now the add pair's upper end)
                // in 0.7 s.
                //
                // Near it by the window's tilted moments, or by the per-step lattices' (those
                // the tilt was solved on): a ladder whose heavy tail sits beyond its window
                // reads its window's mean far below the answer while the tilt already centers
                // it (q = 1e-3, σ = 1, T = 1000, δ = 1e-5: the window's mean 0.038, spread
                // 0.051, the lattices' 0.130 and 0.362, the answer 0.149), and the re-tilt
                // at the answer moved λ by 0.7 % and read the same bracket to 2e-7 — a
                // whole composition more (6 of that call's 32 ms; over the typical class
                // of `cargo bench --bench engine -- class_typical` every re-tilt so read the
                // same bracket within 3 %).
                let near = (u - c.center).abs() <= 1.5 * c.spread || {
                    let (m, var) = lat.tilted_moments()(lambda);
                    (u - m).abs() <= var.max(0.0).sqrt()
                };
                let retilt = if near {
                    None
                } else {
                    let l2 = lat.tilt_for(u, lambda, w);
                    // (A tilt within 0.1 % of this one resolves the same range: q = 3.8e-7,
                    // σ = 0.61, T = 2·10⁶ spent half its budget on three re-tilts of 2e-5. And
                    // where δ is a tiny share of the tilted moment — rare large losses decide
                    // it, and no tilt centres them — a tilt that moves away from the answer
                    // reads the same bracket again: q = 4.9e-9, σ = 0.4, T = 7.7·10⁷ spent a
                    // third of its budget so, at λ = 9.1 after 11.2. Elsewhere such a re-tilt
                    // still narrows: q = 1e-6, σ = 0.6, T = 10⁸ is 0.17 % wide without it,
                    // 0.062 % with it.)
                    let same = (l2 - lambda).abs() <= 1e-3 * lambda.max(1.0);
                    let away = (l2 - lambda) * (u - c.center) < 0.0 && share > 0.0 && share < 1e-4;
                    (!same && !away).then_some(l2)
                };
                if let Some(l2) = retilt {
                    lambda = l2;
                    continue;
                }
                // Where δ is a tiny share of the composed tilted moment at a tilt that sits at
                // the answer (a loss whose tilt cannot center its tail: one rare large loss
                // decides δ), an FFT floor of FLOOR_SHARE of each product's mass swamps it: the
                // composition again, the floor a thousandth of that share (q = 3.76e-7,
                // σ = 0.607, T = 10⁴, δ = 7.2e-14: δ was 4e-13 of the moment, and the floor held
                // the lower end at 0.05114 where the truth is 0.051231
                // (tests/reference/one_jump.py); now [0.051227, 0.051233]). The direct points
                // it asks cost at most a few FFTs.
                #[cfg(full_engine)]
                {
                    let wanted = (1e-3 * share).max(1e-18);
                    let now = floor.unwrap_or(ladder::FLOOR_SHARE);
                    // (Only below FLOOR_SHARE itself: where λ times the composed spread is
                    // large, δ's share is small too, but spread over as many points as the
                    // floor, and lowering it only spent work: q = 0.1, σ = 0.6, T = 10⁸ at
                    // 3.5e-5. And only on the ladder: one FFT keeps no moment, its share reads
                    // 0, and a second composition took MNIST from 4.1 to 6.2 ms.)
                    if share > 0.0 && share < ladder::FLOOR_SHARE && wanted < 0.1 * now {
                        floor = Some(wanted);
                        continue;
                    }
                }
                // Tight enough, or the tilt already sits at the answer (or cannot move): done.
                break;
            }
            Err(Side::Below) => {
                let (lo, _) = c.window_range();
                lambda = lat.tilt_for((lo - 3.0 * c.spread).max(0.0), lambda, w) * 0.7;
            }
            Err(Side::Above) => {
                if c.inf_mass >= delta {
                    return Err(Error::PldBudget {
                        reason: crate::engine::error::Refusal::MassBeyondRange,
                    });
                }
                let (_, hi) = c.window_range();
                lambda = lat.tilt_for(hi + 3.0 * c.spread, lambda.max(0.5) * 1.5, w);
            }
            Err(Side::Inside) => unreachable!(),
        }
    }
    best.ok_or(Error::PldBudget {
        reason: crate::engine::error::Refusal::NoTilt,
    })
}

/// Run `f` at spacing `d`; when its composed window does not fit the largest FFT,
/// retry on a grid 2.5× coarser (up to `max_tries` times): the bracket widens like Δ²
/// while the window shrinks like 1/Δ, and the result stays certified.
pub(super) fn coarsening<T>(
    mut d: f64,
    max_tries: usize,
    mut f: impl FnMut(f64) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut tries = 0;
    loop {
        match f(d) {
            Err(Error::PldBudget { reason }) if reason == TOO_WIDE && tries < max_tries => {
                d *= 2.5;
                tries += 1;
            }
            r => return r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tilted mean that climbs like an exponential (a heavy tail's): Newton's step from below
    /// lands far above the target, and the step on ln m comes back in one read where Newton's
    /// on m took three more; the tilt found is the target's, to the solve's tolerance.
    #[test]
    fn a_tilt_far_above_its_target_comes_back_on_ln_m() {
        let reads = std::cell::Cell::new(0);
        let at = |x: f64| {
            reads.set(reads.get() + 1);
            (1e-4 * exp(2.0 * x), 2e-4 * exp(2.0 * x))
        };
        let d = 1e-6;
        let x = solve_tilt(at, 1.0, 0.0, 1.0, d, &Work::new(f64::INFINITY));
        let (m, slope) = (1e-4 * exp(2.0 * x), 2e-4 * exp(2.0 * x));
        assert!((m - 1.0).abs() < 0.5 * (slope * d).sqrt(), "m = {m} at {x}");
        assert!(reads.get() <= 4, "{} reads", reads.get());
    }

    /// A tilt read again is the read before, to the bit; with the step counts changed (ε over
    /// training's shared lattices) it is read anew, as on lattices built for those counts.
    #[test]
    fn a_tilt_read_again_is_the_read_for_the_counts_now() {
        let sgm = Sgm::new(1e-3, 1.0).unwrap();
        let w = &Work::new(f64::INFINITY);
        let build = |steps: u64| {
            let p = [Phase::new(sgm, steps).unwrap()];
            Lattices::build(&p, Direction::Remove, 1e-4, (1e-14, 1e-14), None, w).unwrap()
        };
        let bits = |(m, v): (f64, f64)| (m.to_bits(), v.to_bits());
        let mut lat = build(100);
        let first = lat.tilted_moments()(3.5);
        let other = lat.tilted_moments()(7.0);
        assert_eq!(bits(lat.tilted_moments()(7.0)), bits(other));
        assert_eq!(bits(lat.tilted_moments()(3.5)), bits(first));
        lat.set_steps(0, 1000.0);
        let fresh = build(1000).tilted_moments()(3.5);
        assert_ne!(bits(fresh), bits(first));
        assert_eq!(bits(lat.tilted_moments()(3.5)), bits(fresh));
    }
}
