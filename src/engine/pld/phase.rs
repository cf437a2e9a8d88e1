//! A phase of training: `steps` steps of one SGM (or a scheme's step: random allocation,
//! truncated Poisson, user level), with its adjacency — what every accountant composes.

use super::*;

/// One phase of training: `steps` steps of the SGM `sgm`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phase {
    pub(super) sgm: Sgm,
    pub(super) steps: u64,
    /// Examples per user (group privacy, [`group`]); 1 is example-level.
    pub(super) group: u32,
    /// Add/remove (the SGM pair) or replace-one ([`group::Mix::replace_one`]); native only
    /// for now, like the next.
    #[cfg_attr(not(full_engine), allow(dead_code))]
    pub(super) adjacency: Adjacency,
    /// Truncated Poisson sampling ([`truncated`]): (P(truncation), x*'s rate then).
    #[cfg_attr(not(full_engine), allow(dead_code))]
    pub(super) trunc: Option<(f64, f64)>,
    /// Random allocation ([`allocation`]): each of `steps` compositions is one epoch of
    /// one-in-t allocation, t given here (the SGM's q is 1/t).
    #[cfg_attr(not(full_engine), allow(dead_code))]
    pub(super) alloc: Option<u64>,
}

impl Phase {
    pub fn new(sgm: Sgm, steps: u64) -> Result<Phase, Error> {
        Ok(Phase {
            sgm,
            steps: check_steps(steps)?,
            group: 1,
            adjacency: Adjacency::AddRemove,
            trunc: None,
            alloc: None,
        })
    }
    /// Random allocation under add/remove: each example in `selected` (k) of the
    /// `steps_per_epoch` (t) steps of each of `epochs` epochs, uniformly at random, noise σ.
    /// k = 1 is the exact pair of one epoch; k > 1 is bounded by k allocations of one of
    /// ⌊t/k⌋ steps (an upper bound). Whole engine only.
    #[cfg(full_engine)]
    pub fn allocation(
        sigma: f64,
        steps_per_epoch: u64,
        selected: u64,
        epochs: u64,
    ) -> Result<Phase, Error> {
        if selected == 0 || steps_per_epoch == 0 || selected > steps_per_epoch {
            return Err(Error::Sampling(format!(
                "random allocation needs 1 <= selected <= steps_per_epoch, got selected {selected} of {steps_per_epoch}"
            )));
        }
        let t = steps_per_epoch / selected;
        let comps = epochs.checked_mul(selected).ok_or(Error::Steps(u64::MAX))?;
        Ok(Phase {
            alloc: Some(t),
            ..Phase::new(Sgm::new(1.0 / t as f64, sigma)?, comps)?
        })
    }
    /// `steps` steps of truncated Poisson sampling: rate q over `dataset_size` examples,
    /// batches capped at `max_batch` (one example per user, add/remove). B ≥ N is
    /// Poisson sampling itself. Native builds only for now.
    #[cfg(full_engine)]
    pub fn truncated(
        sgm: Sgm,
        dataset_size: u64,
        max_batch: u64,
        steps: u64,
    ) -> Result<Phase, Error> {
        if dataset_size == 0 || max_batch == 0 {
            return Err(Error::BatchSize {
                batch: max_batch as f64,
                dataset: dataset_size as f64,
            });
        }
        Ok(Phase {
            trunc: truncated::Trunc::new(sgm.q(), dataset_size, max_batch)
                .map(|t| (t.p_trunc, t.rate)),
            ..Phase::new(sgm, steps)?
        })
    }
    /// The phase whose exact pair lies below this one's (the lower bound's phase): itself,
    /// or for truncated Poisson the SGM at x*'s inclusion rate ([`truncated`]).
    #[cfg(full_engine)]
    pub(super) fn lower_phase(&self) -> Phase {
        match self.trunc {
            None => *self,
            Some((p, c)) => {
                let q = self.sgm.q();
                let rate = (q * (1.0 - p) + p * c).min(q);
                Phase {
                    sgm: Sgm::new(rate, self.sgm.sigma()).unwrap_or(self.sgm),
                    trunc: None,
                    ..*self
                }
            }
        }
    }
    /// The same phase under another adjacency. Native builds only for now.
    #[cfg(full_engine)]
    pub fn with_adjacency(self, adjacency: Adjacency) -> Phase {
        Phase { adjacency, ..self }
    }
    /// The Sampled Gaussian Mechanism itself (one example, add/remove): the pair the
    /// exact-RDP engine also answers, so its RDP is a bound.
    pub(super) fn is_sgm(&self) -> bool {
        self.group == 1 && self.sensitivity() == 1.0 && !self.is_truncated() && self.alloc.is_none()
    }
    /// Steps of the guide's SGM (an allocation phase counts epochs; its guide, steps).
    pub(super) fn guide_steps(&self) -> u64 {
        self.steps.saturating_mul(self.alloc.unwrap_or(1))
    }
    /// How far one example moves the sum, in units of C.
    pub(super) fn sensitivity(&self) -> f64 {
        #[cfg(not(full_engine))]
        return 1.0;
        #[cfg(full_engine)]
        self.adjacency.sensitivity()
    }
    pub(super) fn is_truncated(&self) -> bool {
        #[cfg(not(full_engine))]
        return false;
        #[cfg(full_engine)]
        self.trunc.is_some()
    }
    /// `steps` steps of the SGM for a user with `k` examples (each sampled independently).
    /// Native builds only for now (the page's wasm has no room for it).
    #[cfg(full_engine)]
    pub fn group(sgm: Sgm, k: u32, steps: u64) -> Result<Phase, Error> {
        if k == 0 || k > MAX_GROUP {
            return Err(Error::GroupSize(k));
        }
        Ok(Phase {
            group: k,
            ..Phase::new(sgm, steps)?
        })
    }
    /// The SGM that steers grids and tilts: the phase's own, or for a group of k the SGM
    /// with rate min(1, kq) and sensitivity k (2k under replace-one) — a guide only, never
    /// used as a bound.
    pub(super) fn guide(&self) -> Sgm {
        if self.is_sgm() || self.alloc.is_some() {
            return self.sgm;
        }
        let k = self.group as f64;
        let s = k * self.sensitivity();
        Sgm::new((k * self.sgm.q()).min(1.0), self.sgm.sigma() / s).unwrap_or(self.sgm)
    }
    #[cfg(full_engine)]
    pub fn adjacency(&self) -> Adjacency {
        self.adjacency
    }
    pub fn sgm(&self) -> Sgm {
        self.sgm
    }
    pub fn steps(&self) -> u64 {
        self.steps
    }
}

/// The phases with equal mechanisms merged (their steps added), in order of first
/// appearance. Composition does not depend on order, so a per-step schedule that returns to
/// earlier settings (σ alternating 1.0/1.1 over 2,000 steps: 2,000 phases) is composed as
/// its distinct phases (2) — the same run, and a call the work budget affords (hardening 4
/// #4: it was refused).
pub(super) fn merged(phases: &[Phase]) -> Vec<Phase> {
    let mut out: Vec<Phase> = Vec::with_capacity(phases.len().min(64));
    for p in phases {
        match out.iter_mut().find(|m| {
            Phase {
                steps: p.steps,
                ..**m
            } == *p
        }) {
            Some(m) => m.steps = m.steps.saturating_add(p.steps),
            None => out.push(*p),
        }
    }
    out
}
