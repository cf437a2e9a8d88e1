//! One call's context ([`Work`]): its work budget and the modes its compositions run in.

/// One call's context, created by each public entry point and passed down explicitly (no
/// hidden per-thread state): the FFT work (Σ N·log₂N over transforms) the call may still
/// spend — every call is bounded — and whether products with a coarse tail also form their
/// lower measure contracted after the product ([`Work::lowering_after`]).
#[derive(Debug)]
pub(crate) struct Work {
    left: std::cell::Cell<f64>,
    lower: std::cell::Cell<Option<Lowering>>,
    start: std::cell::Cell<Option<f64>>,
    /// The largest factor a ladder's automatic tail may take ([`Work::tail_at_most`]).
    tail_cap: std::cell::Cell<Option<i64>>,
    /// Whether the call's last composition was on the ladder ([`Work::laddered`]).
    laddered: std::cell::Cell<bool>,
    /// One (q, σ)'s per-step RDP at the default orders and its quadrature lattice, kept for
    /// the call: ε over training reads exact RDP at every checkpoint ([`Work::with_rdp`]).
    #[cfg(full_engine)]
    rdp: std::cell::RefCell<Option<RdpCurve>>,
    /// A fork's spends and notes in program order, for [`Work::both`] to replay.
    log: Option<std::cell::RefCell<Vec<Event>>>,
    /// The plain SGM steps' lattices built so far, where the caller keeps them
    /// ([`Work::keep_lattices`]); shared with its siblings and forks (a read beside).
    #[cfg(full_engine)]
    kept: std::sync::Arc<std::sync::Mutex<Option<Kept>>>,
}

/// What identifies a plain SGM step's lattice: (q, σ) as bits, the pair, and the spacing,
/// range and coarse continuation as bits — the whole of what its discretization reads.
#[cfg(full_engine)]
pub(crate) type LatticeKey = ([u64; 5], super::Direction, Option<(u64, i64)>);

/// Lattices kept by a call: the newest last, at most [`KEPT_POINTS`] points in all.
#[cfg(full_engine)]
type Kept = Vec<(LatticeKey, super::discretize::StepPld)>;

/// The most lattice points a call keeps ([`Work::keep_lattices`]): 32 MB of logs.
#[cfg(full_engine)]
const KEPT_POINTS: usize = 1 << 21;

/// What a fork did to its Work, in order ([`Work::both`]).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
enum Event {
    /// Units spent; whether the caller saw the answer ([`Work::spend`], not [`Work::charge`]).
    Spend(f64, bool),
    /// [`Work::set_laddered`].
    Laddered(bool),
}

/// A per-step RDP curve at the default orders, its (q, σ) and quadrature lattice.
#[cfg(full_engine)]
type RdpCurve = (crate::engine::Sgm, crate::engine::rdp::Lattice, Vec<f64>);

impl Work {
    /// A call allowed `units` of FFT work (and no lowering after products).
    pub(crate) fn new(units: f64) -> Work {
        Work {
            left: std::cell::Cell::new(units),
            lower: std::cell::Cell::new(None),
            start: std::cell::Cell::new(None),
            tail_cap: std::cell::Cell::new(None),
            laddered: std::cell::Cell::new(false),
            #[cfg(full_engine)]
            rdp: std::cell::RefCell::new(None),
            log: None,
            #[cfg(full_engine)]
            kept: Default::default(),
        }
    }

    /// Give the call `units` of FFT work from here on (a stage with its own budget).
    pub(crate) fn budget(&self, units: f64) {
        self.left.set(units);
    }

    /// The work left (negative once spent).
    pub(crate) fn left(&self) -> f64 {
        self.left.get()
    }

    /// True while the call has work left.
    pub(crate) fn has_work(&self) -> bool {
        self.left.get() >= 0.0
    }

    /// Spend `units`; false when the budget is exhausted (the caller stops there).
    pub(crate) fn spend(&self, units: f64) -> bool {
        self.take(units, true)
    }

    /// Spend `units` whose caller goes on either way (the next [`Work::spend`] decides).
    #[cfg_attr(not(full_engine), allow(dead_code))]
    pub(crate) fn charge(&self, units: f64) {
        self.take(units, false);
    }

    fn take(&self, units: f64, checked: bool) -> bool {
        if let Some(log) = &self.log {
            log.borrow_mut().push(Event::Spend(units, checked));
        }
        let left = self.left.get() - units;
        self.left.set(left);
        left >= 0.0
    }

    /// A Work with this one's budget and modes, spending on its own (no log, no RDP curve):
    /// for a read beside this Work's, whose spending the caller then [charges](Work::charge).
    pub(crate) fn sibling(&self) -> Work {
        let w = Work {
            #[cfg(full_engine)]
            kept: self.kept.clone(),
            ..Work::new(self.left.get())
        };
        w.lower.set(self.lower.get());
        w.start.set(self.start.get());
        w.tail_cap.set(self.tail_cap.get());
        w.laddered.set(self.laddered.get());
        w
    }

    /// A copy of this Work's budget and modes that logs its spends (no RDP curve kept).
    #[cfg(not(target_arch = "wasm32"))]
    fn fork(&self) -> Work {
        Work {
            log: Some(std::cell::RefCell::new(Vec::new())),
            ..self.sibling()
        }
    }

    /// A fork's events replayed here in order; with `checked`, only while every checked spend
    /// is met (false at the first that is not: code run here would have seen it refused).
    #[cfg(not(target_arch = "wasm32"))]
    fn replay(&self, fork: &Work, checked: bool) -> bool {
        let log = fork.log.as_ref().map(|l| l.take()).unwrap_or_default();
        for e in log {
            match e {
                Event::Spend(units, seen) => {
                    if !self.take(units, seen) && seen && checked {
                        return false;
                    }
                }
                Event::Laddered(on) => self.set_laddered(on),
            }
        }
        true
    }

    /// `a(w)?` then `b(w)?` on this Work, as if in sequence — the same results and the same
    /// Work after, at any budget — natively on two threads. Each runs on a [fork](Work::fork)
    /// holding this Work's budget and modes, logging what it spends and notes; `a`'s log is
    /// then replayed here, and where `a` succeeded, `b`'s: where every checked spend of `b` is
    /// met from what `a` left, `b` saw what it would have seen in sequence (it reads the
    /// budget only through spends), so its result stands; else `b` runs again, here, in
    /// sequence (its fork began with more budget than `b` has after `a`). In sequence outright
    /// where not `split` (two short computations, not worth a thread), in the wasm, and on a
    /// fork (two threads are all there are).
    #[cfg_attr(not(full_engine), allow(dead_code))]
    pub(crate) fn both<A, B, E>(
        &self,
        split: bool,
        a: impl FnOnce(&Work) -> Result<A, E>,
        b: impl Fn(&Work) -> Result<B, E> + Sync,
    ) -> Result<(A, B), E>
    where
        B: Send,
        E: Send,
    {
        #[cfg(not(target_arch = "wasm32"))]
        if split && self.log.is_none() {
            let (wa, wb) = (self.fork(), self.fork());
            let (ra, (rb, wb)) = std::thread::scope(|s| {
                let b = &b;
                let h = s.spawn(move || (b(&wb), wb));
                let ra = a(&wa);
                let rb = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                (ra, rb)
            });
            self.replay(&wa, false);
            let x = ra?;
            let (left, laddered) = (self.left.get(), self.laddered.get());
            if self.replay(&wb, true) {
                return Ok((x, rb?));
            }
            self.left.set(left);
            self.laddered.set(laddered);
            return Ok((x, b(self)?));
        }
        #[cfg(target_arch = "wasm32")]
        let _ = split;
        let x = a(self)?;
        let y = b(self)?;
        Ok((x, y))
    }

    /// Run `f` with products contracting their lower measure after they are formed too
    /// (the ε side's lattices, and the closed form's small pair through its parent's),
    /// kept as `how`. On for the ε side (`epsilon_lattices`) and the closed form's small
    /// pair; off by default: its extra convolutions (one more a square, two more a product)
    /// spent the budget of q = 4.9e-9, σ = 0.40, T = 7.7·10⁷'s δ side on the lattices,
    /// which then read [0, 0.068] where they had read [6.9e-7, 1.3e-6].
    #[cfg(full_engine)]
    pub(crate) fn lowering_after<R>(&self, how: Lowering, f: impl FnOnce() -> R) -> R {
        let was = self.lower.replace(Some(how));
        let r = f();
        self.lower.set(was);
        r
    }

    /// Run `f` with the ε side's lattices starting at spacing `d` (None: their own first
    /// spacing) — a spacing learnt from a related call, such as the previous checkpoint of ε
    /// over training. Only where the first pass starts changes: every pass is certified.
    pub(crate) fn starting_at<R>(&self, d: Option<f64>, f: impl FnOnce() -> R) -> R {
        let was = self.start.replace(d);
        let r = f();
        self.start.set(was);
        r
    }

    /// `f` on the per-step RDP curve of `sgm` at the default orders and its quadrature
    /// lattice, computed once per call: the same values as computing them anew (a run's
    /// exact-RDP ε is [`crate::engine::Run::epsilon_on`] of them), at the cost of one curve
    /// where ε over training computed one per checkpoint (14 % of its time on MNIST).
    #[cfg(full_engine)]
    pub(crate) fn with_rdp<R>(
        &self,
        sgm: crate::engine::Sgm,
        f: impl FnOnce(&crate::engine::rdp::Lattice, &[f64]) -> R,
    ) -> Result<R, crate::engine::Error> {
        let mut slot = self.rdp.borrow_mut();
        match &*slot {
            Some((s, lat, curve)) if *s == sgm => Ok(f(lat, curve)),
            _ => {
                let run = crate::engine::Run::with_default_orders(sgm, 1)?;
                let lat = run.lattice();
                let curve = run.curve_on(&lat);
                let r = f(&lat, &curve);
                *slot = Some((sgm, lat, curve));
                Ok(r)
            }
        }
    }

    /// Run `f` with the ladder's automatic tail factor (a power of two, [`super::ladder`]) at
    /// most `cap` (None: as the tail's length sets it).
    pub(crate) fn tail_at_most<R>(&self, cap: Option<i64>, f: impl FnOnce() -> R) -> R {
        let was = self.tail_cap.replace(cap);
        let r = f();
        self.tail_cap.set(was);
        r
    }

    /// The cap set by [`Work::tail_at_most`].
    #[cfg_attr(not(full_engine), allow(dead_code))]
    pub(crate) fn tail_cap(&self) -> Option<i64> {
        self.tail_cap.get()
    }

    /// Note how the call's last composition was made: on the ladder or in one FFT.
    pub(crate) fn set_laddered(&self, on: bool) {
        if let Some(log) = &self.log {
            log.borrow_mut().push(Event::Laddered(on));
        }
        self.laddered.set(on);
    }

    /// Whether the call's last composition was on the ladder.
    pub(crate) fn laddered(&self) -> bool {
        self.laddered.get()
    }

    /// Keep the plain SGM steps' lattices this call builds, for its later reads of the same
    /// step at the same spacing and range ([`Work::kept`]): ε over training's checkpoints
    /// each solve their own run on the lattices of one (q, σ), at one spacing where q is small.
    /// A kept lattice is the one that would be built — the same bits.
    #[cfg(full_engine)]
    pub(crate) fn keep_lattices(&self) {
        self.kept_store().get_or_insert_with(Vec::new);
    }

    /// The kept lattices (a poisoned lock — a panic elsewhere — still holds whole lattices).
    #[cfg(full_engine)]
    fn kept_store(&self) -> std::sync::MutexGuard<'_, Option<Kept>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The lattice kept under `key`, or `build()`'s, kept where [`Work::keep_lattices`] asked.
    #[cfg(full_engine)]
    pub(crate) fn kept(
        &self,
        key: LatticeKey,
        build: impl FnOnce() -> super::discretize::StepPld,
    ) -> super::discretize::StepPld {
        let points = |s: &super::discretize::StepPld| {
            s.ln_up.len() + s.tail.as_ref().map_or(0, |c| c.ln_up.len())
        };
        if let Some(kept) = self.kept_store().as_ref() {
            if let Some((_, s)) = kept.iter().find(|(k, _)| *k == key) {
                return s.clone();
            }
        }
        let s = build();
        if let Some(kept) = self.kept_store().as_mut() {
            if points(&s) <= KEPT_POINTS {
                kept.push((key, s.clone()));
                while kept.iter().map(|(_, s)| points(s)).sum::<usize>() > KEPT_POINTS {
                    kept.remove(0);
                }
            }
        }
        s
    }

    /// The first spacing asked by [`Work::starting_at`].
    pub(crate) fn start(&self) -> Option<f64> {
        self.start.get()
    }

    /// Whether [`Work::lowering_after`] is in force, and how.
    #[cfg_attr(not(full_engine), allow(dead_code))]
    pub(crate) fn lowers_after(&self) -> Option<Lowering> {
        self.lower.get()
    }
}

/// Which lower measure of a product with a coarse tail a composition in [`lowering_after`]
/// keeps: either is a lower measure of the same product, so the choice is one of tightness
/// only, for what the composition is read for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(not(full_engine), allow(dead_code))]
pub(crate) enum Lowering {
    /// The one with the larger tilted moment at the composition's tilt: an ε read at that
    /// tilt (the ε side's lattices).
    AtTilt,
    /// That one only where it is also larger at twice the tilt: a composition whose far
    /// tail is read too (the closed form's small pair, whose profile reads δ far out).
    KeepingFar,
}

#[cfg(test)]
mod tests {
    use super::Work;

    /// A kept lattice is read only for the step, pair, spacing and range it was built for,
    /// and is then that build's, bit for bit; the others are built (q = 1e-4, σ = 1: runs of
    /// 10 and 10⁴ steps cut their range alike, at η's cap; 10⁸ steps cut it farther out).
    #[cfg(full_engine)]
    #[test]
    fn a_kept_lattice_is_the_one_built() {
        use crate::engine::pld::discretize::Direction;
        use crate::engine::pld::lattices::{eta_for, Lattices};
        use crate::engine::pld::Phase;
        use crate::engine::Sgm;
        let sgm = Sgm::new(1e-4, 1.0).unwrap();
        let build = |steps: u64, dir, d: f64, tail: Option<f64>, w: &Work| {
            let eta = eta_for(1e-5, steps as f64, 0.1, 30.0);
            let p = [Phase::new(sgm, steps).unwrap()];
            let s = &Lattices::build(&p, dir, d, (eta, eta), tail, w)
                .unwrap()
                .steps[0];
            let coarse = s
                .tail
                .as_ref()
                .map(|c| (c.f, c.k_lo, c.ln_up.clone(), c.ln_lo.clone()));
            let logs = s
                .ln_up
                .iter()
                .chain(&s.ln_lo)
                .map(|x| x.to_bits())
                .collect::<Vec<_>>();
            (s.k_lo, logs, format!("{coarse:?}"))
        };
        let kept = &Work::new(f64::INFINITY);
        kept.keep_lattices();
        let stored = || kept.kept_store().as_ref().map_or(0, |k| k.len());
        let (d, fine) = (8.192703090200539e-6, 1e-6);
        // (At Δ = 1e-6 the range, ~0.28, is split in two resolutions: its coarse part's
        // factor follows the tail's spacing.)
        let runs = [
            (10, Direction::Remove, d, None, 1),
            (10_000, Direction::Remove, d, None, 1),
            (10, Direction::Add, d, None, 2),
            (10, Direction::Remove, 2.0 * d, None, 3),
            (100_000_000, Direction::Remove, d, None, 4),
            (20, Direction::Remove, d, None, 4),
            (10, Direction::Remove, fine, Some(1e-5), 5),
            (10, Direction::Remove, fine, Some(1.2e-5), 5),
            (10, Direction::Remove, fine, Some(4e-5), 6),
            (10, Direction::Remove, 2.0 * fine, Some(4e-5), 7),
        ];
        for (steps, dir, d, tail, after) in runs {
            let fresh = build(steps, dir, d, tail, &Work::new(f64::INFINITY));
            let read = build(steps, dir, d, tail, kept);
            assert_eq!(
                read, fresh,
                "{steps} steps, {dir:?}, Δ = {d}, tail {tail:?}"
            );
            assert_eq!(
                stored(),
                after,
                "{steps} steps, {dir:?}, Δ = {d}, tail {tail:?}"
            );
        }
    }

    /// Spends `units` in order, checked or charged, then fails with "wide" where `fail` says
    /// (after that many spends). A refused checked spend stops it with "spent", or, with
    /// `fallback`, ends it with another answer (code that goes another way when refused).
    fn task(
        w: &Work,
        units: &[(f64, bool)],
        (fail, fallback): (Option<usize>, bool),
    ) -> Result<usize, &'static str> {
        for (i, &(u, checked)) in units.iter().enumerate() {
            if fail == Some(i) {
                return Err("wide");
            }
            if checked {
                if !w.spend(u) {
                    return if fallback { Ok(100 + i) } else { Err("spent") };
                }
            } else {
                w.charge(u);
            }
            w.set_laddered(i % 2 == 1);
        }
        Ok(units.len())
    }

    /// Two tasks on two threads give what they give in sequence — the same result, the same
    /// work left to the bit, the same note — at every budget, including those where the
    /// second runs out only because of what the first spent, where it would fail on its own,
    /// and where a refused spend sends it another way.
    #[test]
    fn both_is_the_two_in_sequence_for_every_budget() {
        let a = [(3.0, false), (5.0, true), (2.25, true)];
        let b = [
            (4.0, true),
            (1.5, false),
            (6.0, true),
            (2.0, false),
            (0.1, true),
        ];
        let cases = [
            ((None, false), (None, false)),
            ((None, false), (Some(3), false)),
            ((Some(2), false), (None, false)),
            ((Some(0), false), (Some(1), false)),
            ((None, true), (None, true)),
            ((None, false), (Some(4), true)),
        ];
        for fails in cases {
            for tenth in 0..=260 {
                let budget = tenth as f64 * 0.1;
                let seq = Work::new(budget);
                let one = (|| {
                    let x = task(&seq, &a, fails.0)?;
                    let y = task(&seq, &b, fails.1)?;
                    Ok((x, y))
                })();
                let par = Work::new(budget);
                let two = par.both(true, |w| task(w, &a, fails.0), |w| task(w, &b, fails.1));
                assert_eq!(one, two, "budget {budget}, fails {fails:?}");
                let left = (seq.left().to_bits(), par.left().to_bits());
                assert_eq!(left.0, left.1, "budget {budget}");
                assert_eq!(seq.laddered(), par.laddered(), "budget {budget}");
            }
        }
    }
}
