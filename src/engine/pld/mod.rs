//! Tight (ε, δ) of DP-SGD from its privacy-loss distribution (PLD): a certified upper
//! bound with an optimistic companion, so every answer is a bracket [lower, upper].
//!
//! # The mechanism
//! One step of DP-SGD with Poisson sampling is the Sampled Gaussian Mechanism. Under
//! add/remove-one adjacency its worst case is one of two pairs of distributions
//! (Mironov, Talwar, Zhang, "Rényi Differential Privacy of the Sampled Gaussian
//! Mechanism", arXiv:1908.10530, §3; Zhu, Dong, Wang, "Optimal Accounting of
//! Differential Privacy via Characteristic Function", AISTATS 2022, Prop. 30):
//! * remove: P = (1−q)N(0,σ²) + qN(1,σ²) against Q = N(0,σ²);
//! * add: P = N(0,σ²) against Q = (1−q)N(0,σ²) + qN(1,σ²).
//!
//! The privacy loss L = ln(dP/dQ)(x), x ∼ P, is L(x) = ln(1 − q + q·e^{(2x−1)/(2σ²)})
//! (remove) or its negative (add). After T steps the loss is the sum of T independent
//! copies, and the tight guarantee is the hockey-stick divergence
//! δ(ε) = E_P[(1 − e^{ε − L_T})₊] (Sommer, Meiser, Mohammadi, PETS 2019; Koskela,
//! Jälkö, Honkela, AISTATS 2020), maximized over the two directions.
//!
//! # Certified bracket
//! * **Upper** ("connect the dots": Doroshenko, Ghazi, Kamath, Kumar, Manurangsi,
//!   "Connect the Dots: Tighter Discrete Approximations of Privacy Loss
//!   Distributions", PETS 2022). On the lattice ℓ_k = kΔ, the Q-mass of every loss
//!   value L in a bin [ℓ_i, ℓ_{i+1}] is split between the two ends so that E[e^L] is
//!   kept: λ = (e^{ℓ_{i+1}} − e^L)/(e^{ℓ_{i+1}} − e^{ℓ_i}) to ℓ_i, the rest to ℓ_{i+1}.
//!   The true pair is a post-processing of the discrete one, so the discrete pair
//!   dominates it for every ε, and so does its T-fold composition. Per bin this only
//!   needs ΔP and ΔQ (Gaussian interval masses, in log space), written so that every
//!   mass is a sum of nonnegative terms. Losses below the lattice are rounded up onto
//!   its first point and losses above it are sent to +∞ (both can only raise δ).
//! * **Lower.** Each bin is contracted to one atom at its conditional mean of e^L
//!   (again a post-processing, now of the true pair), adjacent atoms are merged into
//!   point masses exactly on lattice points, and what cannot be merged is rounded
//!   *down* to a lattice point keeping its P-mass. Rounding losses down lowers
//!   E_P[(1 − e^{ε−ΣL})₊] for every coupling, so the result is a lower bound; losses
//!   above the lattice are rounded down onto it and those below are dropped.
//! * **Composition** by FFT under an exponential tilt with an explicit window; see
//!   `compose::compose_within`. Rounding (8u·log₂N·(1 + T‖p̃‖₂) per bin), the folded tails
//!   (Chernoff's inequality, ≤ 1e-10 of the tilted mass) and the mass at +∞
//!   (1 − (1 − p∞)^T, exactly) are added to the upper and subtracted from the lower bound.
//!
//! # Error budget
//! Every constant, once:
//! * `TOL` = 4e-4: the bracket width we aim for, relative to ε. The discretization's
//!   bias is second order in Δ: per step, spreading (upper) or contracting (lower) a
//!   bin changes E[e^{αL}] by ≈ α(α−1)Δ²/12 and α(α−1)Δ²/24 relative, so over T steps
//!   the bracket is ≈ T·α·Δ²/8 in ε (measured: up to twice that, from the merges of the
//!   lower bound). The grid starts at Δ = √(3·TOL·ε/(T·α)) with (ε, α) from the
//!   exact-RDP optimum, and is refined (Δ ← 0.85·Δ·√(TOL/width)) up to
//!   `REFINE` times while the measured bracket is wider than TOL.
//! * Tails: each step's lattice covers all but η = 1e-4·TOL·δ/T of P on each side
//!   (clamped to [1e-300, 1e-14]), so the +∞ mass adds at most 1e-4·TOL·δ to δ.
//! * `compose::ALIAS` = 1e-10 (it enters the bracket explicitly, as ALIAS·e^{ln M^T − λε}: relative to δ that is ≲ 1e-4, ~1e-8 at MNIST) and `compose::MAX_FFT` = 2²⁰; `MAX_STEP_POINTS` = 2²¹.
//!   When the budget cannot reach the accuracy (very small σ with long runs), the
//!   bracket is still certified, only wider; above 1 % the call returns
//!   [`Error::PldBudget`] and callers fall back to the RDP answer.
//!
//! # Small q: two resolutions
//! For small q almost all of one step's P sits on losses of the order of the bulk scale
//! b = q·√(e^{1/σ²} − 1) (the losses' standard deviation under Q), while the range the +∞
//! budget leaves runs to losses of order 0.1–1 (the mixture's N(1, σ²) component).
//! * A lattice coarser than b/16 merges the bulk into a few points for the lower bound,
//!   which loses its spread: at q = 1e-6, σ = 0.6 the lower lattice's per-step standard
//!   deviation was 6.5e-10 against the true 4e-6, and no lower bound above 0 was found.
//!   So Δ ≤ b/16 from the first pass where that is below 1e-4 (and on any pass that found
//!   no lower bound), but not below 1e-17·T·r, where the bins' rounding starts to show over
//!   T steps: a bin's connect-the-dots split taken from ΔP and ΔQ has relative error ~u/Δ
//!   (r = 1); taken from the mixture's components (`discretize`'s `edge_excess`, every
//!   plain SGM step below Δ = 1e-4) ~u·r/Δ with r = q·E_P[e^{(2x−1)/(2σ²)}] ≤ 1 — at
//!   q = 1.8e-9, σ = 1.23, T = 7.3·10⁸ that let Δ reach the bulk (b/16 = 1.1e-10, where
//!   1e-17·T was 7.3e-9) and the bracket [1.20e-4, 1.23e-4] replaced a refusal.
//! * Such a Δ over the whole range is 10⁶–10⁷ points. Where the range needs more than
//!   2¹⁷, a plain SGM step's remove-direction lattice has two resolutions
//!   (`discretize::step_pld_split`): Δ on its first 2¹⁴ points, then fΔ (f a power of
//!   two) to the range's end, with fΔ at most a 4096th of both the ε known so far and the
//!   central limit's spread √T·b, and at most 2¹⁴ coarse points. Connect-the-dots and the
//!   contraction argue per bin, so bins of two widths keep both bounds; the coarse part's
//!   spacing matters because the rare large losses that land on it move ε by about it
//!   (at q = 1e-6, σ = 0.6, T = 10⁶ a coarse spacing of 1e-3 put the upper bound at 0.039
//!   where ε is 0.0098). Such lattices compose on the ladder, whose tail they become. A
//!   finer coarse part also narrows long runs' brackets (a 256th left q = 1e-5, σ = 0.6,
//!   T = 10⁸ 1.4 % wide, a 4096th 0.5 %); we think because the ladder then spills more of a
//!   step's core into its tail (the share 0.01/f²), and the FFT's rounding floor, added at
//!   every point of a core, shrinks with it — measured, not proven.
//!
//! # The reversed pair: the add direction from the remove lattices
//! The add pair (Q, P) is the remove pair (P, Q) reversed, and so are their T-fold products.
//! Its hockey stick in terms of the remove pair's loss L = ln(P/Q) under P is
//!   δ_add(ε) = E_Q[(1 − e^ε·P/Q)₊] = E_P[(e^{−L} − e^ε)₊],
//! which counts the remove pair's composed losses below −ε. The add pair's own per-step loss
//! has its long tail *below* (a coarse part there would need a mirrored ladder): at q = 1e-4,
//! σ = 0.6, T = 10⁸ its lattice was 83,000 points where the remove pair's two resolutions are
//! 16,900, and the add direction spent the call's budget. So where the remove lattices have
//! two resolutions, the add pair is read from them (`eps_reversed`):
//! * **Domination carries over.** Connect-the-dots and the ladder's re-discretizations build a
//!   pair (P', Q') of which (P, Q) is a post-processing; then (Q, P) is one of (Q', P') too,
//!   and the FFT's added mass only raises δ_add (monotone in every atom's mass). Only the
//!   upper measure is used: the lower end of the answer is the remove pair's (the answer is
//!   the larger of the two directions, and a lower bound on one is a lower bound on it).
//! * **Tilt λ = −(1 + θ), θ ≥ 0**, aimed so the tilted mean is at −ε. Every mass taken out
//!   of the measure goes to the ledger of removed exponential moment M (untilted Σ p·e^{λL}),
//!   never to +∞ (moving mass up lowers δ_add), and is charged as M·e^{−θε}: for every x,
//!   (e^{−x} − e^ε)₊ ≤ e^{−(1+θ)x − θε} (where the left side is positive, e^{−x−ε} ≥ 1).
//!   For λ ≤ −1, x^{1+λ}-moments of a dominating pair are the larger (convexity), so the
//!   ledger's product rule holds as for λ ≥ 0. Into the ledger go: each step's mass above its
//!   lattice (losses ≥ the top, moment ≤ p∞·e^{λ·top}) and below it (≤ η at losses ≥ ln(1−q),
//!   moment ≤ η·e^{λ ln(1−q)}); the ladder's cuts below a window; and the tops of its
//!   measures (`ladder::TOP_REL` of the moment per settle; without the cut the FFT's rounding
//!   floor at the top doubled the tail at every squaring).
//! * **Read** by prefix sums (`compose::Composed::delta`): Σ_{KΔ<−ε} p(K)(e^{−KΔ} − e^ε).
//!   Composed losses ≥ 0 weigh 0 for every ε ≥ 0 and are left out at the end — losses as
//!   read, the lattices' offsets added (cut before them, a lattice with offsets lost its whole
//!   tail: `ladder::compose_reversed`).
//! * The add loss is at most −ln(1 − q) per step, so δ_add = 0 from ε = Σ T(−ln(1−q)) on:
//!   where that is below the remove pair's upper end, nothing is composed.
//!
//! Checked against the add pair's own lattices where both fit, and against Gaussian tails
//! (the exact add-pair profile) for one step (`tests/pld_coverage.rs`).

// Random allocation (balls in bins): the law of a mean of log-normals, whole engine only.
#[cfg(full_engine)]
mod allocation;
mod bernstein;
mod compose;
mod discretize;
// What the guarantee means (μ-GDP, attack-risk calibration) and user-level privacy
// (mixture-of-Gaussians pairs): native only for now, like the ladder (no room in the
// page's wasm).
#[cfg(full_engine)]
pub mod fdp;
pub(crate) mod gauss;
#[cfg(full_engine)]
pub mod group;
// The ladder is native-only for now: its ~6 KB (gzip) do not fit the page's wasm budget
// (see the README's "The tight accountant"); the wasm keeps the one-FFT composition.
// Rare large losses in closed form, the small ones on the lattices (native only, like the
// ladder it composes on).
#[cfg(full_engine)]
mod jumps;
#[cfg(full_engine)]
mod ladder;
// A linear test statistic's certified lower ε, where the lattices find none (native only).
#[cfg(full_engine)]
mod linear;
// Shuffled fixed-size batches: a certified band; truncated Poisson sampling (native
// only, like the above).
#[cfg(full_engine)]
pub mod shuffle;
#[cfg(full_engine)]
mod truncated;

pub use discretize::Direction;

use self::compose::{budget, tilted_mean, Composed, Phase as CPhase, Side};
use self::discretize::{loss_range, step_pld, StepPld};
use super::accountant::{eps_from_rdp, ln_delta_from_rdp, Conversion, Run};
use super::error::Error;
use super::params::{check_delta, check_epsilon, check_steps, Adjacency, Sgm};
use serde::Serialize;

/// Target bracket width relative to ε (see the error budget).
pub const TOL: f64 = 4e-4;
/// Widest bracket returned at all (relative); beyond it, [`Error::PldBudget`].
pub const MAX_WIDTH: f64 = 0.01;
/// For small ε the width rule is absolute: a bracket no wider than this is accepted
/// whatever its relative width, and one no wider than `ABS_TOL` is not refined further.
pub const ABS_WIDTH: f64 = 1e-4;
const ABS_TOL: f64 = 2e-5;
const TOO_WIDE: &str = "the composed loss is too wide for the largest FFT";
const TOO_MANY_POINTS: &str = "the loss range needs more lattice points than the budget";
const WORK_SPENT: &str = "the work budget of one call (about a second) is spent";
/// A refusal where exact RDP's ε is above 10³: the domain the tight accountant is built to
/// answer everywhere (q ∈ [1e-9, 1], σ ∈ [0.3, 10³], T ∈ [1, 10⁹], δ ∈ [1e-15, 0.1]) ends there.
const BEYOND_DOMAIN: &str =
    "exact RDP's epsilon is above 1e3, beyond the domain the tight accountant covers";
const DISAGREE: &str = "two of its certified brackets disagree (a numerical failure of the composition), so none is given";

/// Two certified brackets must overlap: a lower bound above an upper bound proves one of
/// them wrong (q = 1e-7, σ = 5, T = 10⁸: tilts 2.6e4 and 6.2e3 on one lattice gave lower
/// 2.290e-4 and upper 2.284e-4, where the central limit puts ε at 2.55e-4), and then
/// neither is given: the call refuses, and exact RDP applies.
fn overlap(upper: f64, lower: f64) -> Result<(), Error> {
    if lower > upper * (1.0 + 1e-9) + 1e-300 {
        Err(Error::PldBudget { reason: DISAGREE })
    } else {
        Ok(())
    }
}
/// The intersection of two certified brackets of one value ([`overlap`] when they disagree).
#[cfg(full_engine)]
fn intersect(a: Bracket, b: Bracket) -> Result<Bracket, Error> {
    let (upper, lower) = (a.upper.min(b.upper), a.lower.max(b.lower));
    overlap(upper, lower)?;
    Ok(Bracket { upper, lower })
}
/// Times the grid may be coarsened (×2.5 each) when the window does not fit the FFT.
const COARSEN: usize = 3;
/// Grid refinements after the first try.
const REFINE: usize = 4;
/// Largest number of lattice points per step.
const MAX_STEP_POINTS: f64 = 1_048_576.0;
/// A plain SGM step whose range needs more points than this is put on two resolutions
/// ([`discretize::step_pld_split`]): CORE_POINTS at Δ, then a coarse lattice (its spacing
/// a power of two times Δ, at most the `tail_d` of [`Lattices::build`]).
#[cfg(full_engine)]
const SPLIT_POINTS: f64 = 131_072.0;
#[cfg(full_engine)]
const CORE_POINTS: f64 = 16_384.0;
#[cfg(full_engine)]
const TAIL_POINTS: f64 = 16_384.0;
/// The largest ratio of a step's coarse spacing to its fine one (the domain's runs use ≤ 2¹⁶).
#[cfg(full_engine)]
const MAX_TAIL_FACTOR: f64 = 1_048_576.0;
/// FFT work per call (Σ N·log₂N plus lattice points and tilt solves; see
/// `compose::budget`): at most ~0.95 s natively (measured over the issue's 112-run grid and
/// its 54-run second grid: the slowest calls are refusals that spend it all). The whole
/// engine (native, and the worker-only wasm, which runs off the page's thread) has this
/// budget, so the page's worker answers every run the command line answers, with the same
/// bracket; the page's own wasm keeps the smaller budget it had (its synchronous JS API
/// call runs on the caller's thread).
#[cfg(full_engine)]
const WORK: f64 = 5.5e8;
#[cfg(not(full_engine))]
const WORK: f64 = 3e8;
/// The work of one per-step lattice point, in FFT units: two erfc and ~25 logs and exps,
/// ~0.2 µs natively, where an FFT unit is ~0.5 ns (measured 2026-11-24; 150 undercounted it,
/// and calls that build large lattices ran to 1.1 s). The page's wasm keeps the 150 it had.
#[cfg(full_engine)]
const POINT_WORK: f64 = 400.0;
#[cfg(not(full_engine))]
const POINT_WORK: f64 = 150.0;

/// Largest group size accepted (the mixture has k + 1 components).
pub const MAX_GROUP: u32 = 256;

/// One phase of training: `steps` steps of the SGM `sgm`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phase {
    sgm: Sgm,
    steps: u64,
    /// Examples per user (group privacy, [`group`]); 1 is example-level.
    group: u32,
    /// Add/remove (the SGM pair) or replace-one ([`group::Mix::replace_one`]); native only
    /// for now, like the next.
    #[cfg_attr(not(full_engine), allow(dead_code))]
    adjacency: Adjacency,
    /// Truncated Poisson sampling ([`truncated`]): (P(truncation), x*'s rate then).
    #[cfg_attr(not(full_engine), allow(dead_code))]
    trunc: Option<(f64, f64)>,
    /// Random allocation ([`allocation`]): each of `steps` compositions is one epoch of
    /// one-in-t allocation, t given here (the SGM's q is 1/t).
    #[cfg_attr(not(full_engine), allow(dead_code))]
    alloc: Option<u64>,
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
    fn lower_phase(&self) -> Phase {
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
    fn is_sgm(&self) -> bool {
        self.group == 1 && self.sensitivity() == 1.0 && !self.is_truncated() && self.alloc.is_none()
    }
    /// Steps of the guide's SGM (an allocation phase counts epochs; its guide, steps).
    fn guide_steps(&self) -> u64 {
        self.steps.saturating_mul(self.alloc.unwrap_or(1))
    }
    /// How far one example moves the sum, in units of C.
    fn sensitivity(&self) -> f64 {
        #[cfg(not(full_engine))]
        return 1.0;
        #[cfg(full_engine)]
        self.adjacency.sensitivity()
    }
    fn is_truncated(&self) -> bool {
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
    fn guide(&self) -> Sgm {
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

/// A certified bracket: the true value lies in [lower, upper].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bracket {
    pub upper: f64,
    pub lower: f64,
}

/// How an answer was computed (for reports and benchmarks).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Grid {
    /// Lattice spacing Δ of the loss.
    pub spacing: f64,
    /// FFT length of the widest composition.
    pub fft_len: usize,
    /// Which direction is the worse one at the answer.
    pub worst: &'static str,
}

/// ε at a given δ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EpsilonAnswer {
    pub epsilon: Bracket,
    pub grid: Grid,
}

/// δ at a given ε.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeltaAnswer {
    pub delta: Bracket,
    pub grid: Grid,
}

/// One point of the privacy profile δ(ε).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProfilePoint {
    pub epsilon: f64,
    pub delta: Bracket,
}

fn total_steps(phases: &[Phase]) -> f64 {
    phases.iter().map(|p| p.steps as f64).sum()
}

/// Below this sampling rate 1 − q rounds to 1 in f64 and the lattice cannot represent the
/// mechanism's two components (the exact-RDP engine, which works with ln(1 − q), still can).
const MIN_Q: f64 = f64::EPSILON / 2.0;

fn check_phases(phases: &[Phase]) -> Result<(), Error> {
    if phases.is_empty() {
        return Err(Error::NoPhases);
    }
    if phases.iter().any(|p| p.sgm.q() > 0.0 && p.sgm.q() < MIN_Q) {
        return Err(Error::PldBudget {
            reason: "q is below 1.1e-16, where 1 - q rounds to 1 and the privacy-loss lattice cannot represent the mechanism",
        });
    }
    if total_steps(phases) > super::MAX_STEPS as f64 {
        return Err(Error::Steps(total_steps(phases) as u64));
    }
    Ok(())
}

/// Whether every phase's pair is its own reverse (replace-one: x ↦ −x swaps the two
/// mixtures), so the add direction's PLD is the remove direction's.
#[cfg(full_engine)]
fn symmetric(phases: &[Phase]) -> bool {
    phases
        .iter()
        .all(|p| p.adjacency == Adjacency::ReplaceOne && p.trunc.is_none())
}

/// The directions whose PLDs differ: one for a symmetric pair, else both.
fn directions(phases: &[Phase]) -> &'static [Direction] {
    #[cfg(full_engine)]
    if symmetric(phases) {
        return &[Direction::Remove];
    }
    #[cfg(not(full_engine))]
    let _ = phases;
    &[Direction::Remove, Direction::Add]
}

/// Without subsampling (q = 1 in every phase) the T-fold composition is exactly the
/// Gaussian mechanism with μ = √(Σ T_i/σ_i²) (μ-GDP; Dong, Roth, Su, "Gaussian
/// Differential Privacy", JRSS-B 2022, Cor. 3.3): its μ, or None.
fn gaussian_mu(phases: &[Phase]) -> Option<f64> {
    // (One-in-one allocation is the Gaussian mechanism each epoch: q = 1 there too.)
    let gaussian = |p: &Phase| p.sgm.q() == 1.0 && !p.is_truncated();
    phases.iter().all(gaussian).then(|| {
        phases
            .iter()
            .map(|p| {
                let s = p.group as f64 * p.sensitivity();
                p.steps as f64 * (s / p.sgm.sigma()).powi(2)
            })
            .sum::<f64>()
            .sqrt()
    })
}

/// The central limit's ε at δ for plain SGM phases: μ-GDP with μ² = Σ T·q²·(e^{1/σ²} − 1)
/// (an estimate, not a bound: it only steers).
fn central_limit_epsilon(phases: &[Phase], delta: f64) -> Option<f64> {
    if !phases.iter().all(Phase::is_sgm) {
        return None;
    }
    let mu2: f64 = phases
        .iter()
        .map(|p| {
            let (q, s) = (p.sgm.q(), p.sgm.sigma());
            p.steps as f64 * q * q * (1.0 / (s * s)).exp_m1()
        })
        .sum();
    let e = gauss::epsilon_bracket(mu2.sqrt(), delta).upper;
    (e.is_finite() && e > 0.0).then_some(e)
}

/// The composed phases' RDP curve on the default orders: (orders, Σ T·ε(α)).
fn rdp_total(phases: &[Phase]) -> (Vec<f64>, Vec<f64>) {
    let orders = super::default_orders();
    let mut total = vec![0.0; orders.len()];
    for ph in phases {
        if let Ok(run) = Run::new(ph.guide(), ph.guide_steps(), &orders) {
            for (t, r) in total.iter_mut().zip(run.rdp_curve()) {
                *t += ph.guide_steps() as f64 * r;
            }
        }
    }
    (orders, total)
}

/// The order minimizing `f(α, composed RDP)` over a composed curve, and that minimum.
fn best_of((orders, total): &(Vec<f64>, Vec<f64>), f: impl Fn(f64, f64) -> f64) -> (f64, f64) {
    let mut best = (f64::INFINITY, 2.0);
    for (&a, &r) in orders.iter().zip(total) {
        let v = f(a, r);
        if v < best.0 {
            best = (v, a);
        }
    }
    best
}

/// RDP (improved conversion) ε at δ and its optimal order for the composed phases:
/// the starting point for the grid and the tilt, and an upper bound on the PLD's ε.
fn rdp_epsilon(phases: &[Phase], delta: f64) -> (f64, f64) {
    let (e, a) = best_of(&rdp_total(phases), |a, r| {
        eps_from_rdp(r, a, delta, Conversion::Improved)
    });
    (e.max(0.0), a)
}

/// ln δ at ε by exact RDP over a composed curve, and its optimal order (the δ(ε)
/// query's starting tilt).
fn rdp_ln_delta(curve: &(Vec<f64>, Vec<f64>), eps: f64) -> (f64, f64) {
    best_of(curve, |a, r| {
        ln_delta_from_rdp(r, a, eps, Conversion::Improved)
    })
}

/// The per-step lattices of every phase, for one direction and spacing.
struct Lattices {
    d: f64,
    steps: Vec<StepPld>,
    counts: Vec<f64>,
    /// Untilted mass the ladder's truncations may send to +∞, in all.
    #[cfg_attr(not(full_engine), allow(dead_code))]
    eta_total: f64,
    /// Compose in one FFT of up to this many points only (no ladder: it would
    /// re-discretize the lattice).
    one_fft: Option<usize>,
    /// Per phase, for the reversed pair ([`eps_reversed`]): the infimum of its losses,
    /// ln(1 − q) for a plain SGM step (−∞, which makes the reversed charge infinite, where
    /// not known). The P-mass per step below a lattice is at most the range's cut η =
    /// eta_total / Σ steps.
    #[cfg_attr(not(full_engine), allow(dead_code))]
    floors: Vec<f64>,
    /// Per phase, its lattice's offset o: the lattice is {kΔ + o} and holds L − o.
    offsets: Vec<f64>,
}

impl Lattices {
    /// `eta`: the P-mass per step the lattices' range may cut; `eta_law`: the same budget
    /// for a random allocation's law (uncapped, [`eta_for`]); `tail_d`: the largest spacing
    /// a plain SGM step's coarse continuation may have (None: one resolution, as
    /// dp_accounting's grid is).
    #[cfg_attr(not(full_engine), allow(unused_variables))]
    fn build(
        phases: &[Phase],
        dir: Direction,
        d: f64,
        (eta, eta_law): (f64, f64),
        tail_d: Option<f64>,
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
                steps.push(allocation::law(s, t, d, eta_law.max(eta))?.step_pld(dir, d, eta)?);
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
                    if ph.is_sgm() && dir == Direction::Remove && (hi - lo) / d > SPLIT_POINTS =>
                {
                    // f: the largest power of two with fΔ ≤ tail_d (at least 2), unless the
                    // coarse part would then need more than TAIL_POINTS points.
                    let b = lo + CORE_POINTS * d;
                    let big = big.max((hi - b) / TAIL_POINTS);
                    let f = 2f64.powf((big / d).log2().floor()).max(2.0);
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
            if !compose::spend(POINT_WORK * points) {
                return Err(Error::PldBudget { reason: WORK_SPENT });
            }
            #[cfg(full_engine)]
            if let Some((b, f)) = split {
                offsets[i] = discretize::bulk_offset(q, s, d, discretize::BULK_BINS);
                steps.push(discretize::step_pld_split(
                    q,
                    s,
                    dir,
                    d,
                    (lo, b, hi),
                    (f, offsets[i]),
                ));
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
                if !compose::spend(POINT_WORK * (hi2 - lo2) / d) {
                    return Err(Error::PldBudget { reason: WORK_SPENT });
                }
                let a = step_pld(q, s, dir, d, lo, hi);
                let b = step_pld(c, s / 2.0, dir, d, lo2, hi2);
                steps.push(truncated::mix_steps(&a, 1.0 - p_t, &b, p_t));
                continue;
            }
            steps.push(step_pld(q, s, dir, d, lo, hi));
        }
        let floors = phases
            .iter()
            .map(|p| match (p.is_sgm(), dir) {
                (true, Direction::Remove) => (-p.sgm.q()).ln_1p(),
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
        })
    }

    fn phases(&self) -> Vec<CPhase<'_>> {
        self.steps
            .iter()
            .zip(&self.counts)
            .map(|(pld, &steps)| CPhase { pld, steps })
            .collect()
    }

    fn compose(&self, lambda: f64) -> Result<Composed, Error> {
        self.compose_at(lambda, None)
    }

    /// [`Lattices::compose`] with the ladder's lower measure also contracted after each
    /// core∗tail product (for a one-step law narrower than the tail's spacing: [`jumps`]).
    #[cfg(full_engine)]
    fn compose_lowering_after(&self, lambda: f64) -> Result<Composed, Error> {
        compose::lowering_after(compose::Lowering::KeepingFar, || self.compose(lambda))
    }

    /// [`Lattices::compose`], the ladder's FFT floors within `floor` of each product's mass
    /// (None: the ladder's own share; see [`eps_direction`]).
    fn compose_at(&self, lambda: f64, floor: Option<f64>) -> Result<Composed, Error> {
        let lambda = lambda.max(0.0);
        // One FFT while the window fits (fast, and the tightest for short runs); the
        // ladder beyond — unless the lattice must be kept as it is (`one_fft`: its own
        // widest window, then a refusal).
        let max = self.one_fft.unwrap_or(compose::MAX_FFT);
        // (A two-resolution lattice composes on the ladder only.)
        if self.steps.iter().any(|s| s.tail.is_some()) {
            return self.ladder(lambda, floor);
        }
        match compose::compose_within(&self.phases(), lambda, self.d, max) {
            Ok(c) => return Ok(c),
            Err(e) if e.needed.is_infinite() => {
                return Err(Error::PldBudget { reason: WORK_SPENT })
            }
            Err(_) if self.one_fft.is_some() => return Err(Error::PldBudget { reason: TOO_WIDE }),
            Err(_) => {}
        }
        self.ladder(lambda, floor)
    }

    #[cfg(not(full_engine))]
    fn ladder(&self, _lambda: f64, _floor: Option<f64>) -> Result<Composed, Error> {
        Err(Error::PldBudget { reason: TOO_WIDE })
    }

    /// The composition by repeated squaring on evolving lattices ([`ladder`]).
    #[cfg(full_engine)]
    fn ladder(&self, lambda: f64, floor: Option<f64>) -> Result<Composed, Error> {
        let floor = floor.unwrap_or(ladder::FLOOR_SHARE);
        let mut c = ladder::compose(
            &self.ladder_phases(),
            lambda,
            (self.d, self.eta_total, floor),
        )
        .map_err(ladder_error)?;
        c.shift_by(self.shift());
        Ok(c)
    }

    /// Σ T·o over the phases: the composed loss is the composed lattice's plus this.
    fn shift(&self) -> f64 {
        (self.offsets.iter().zip(&self.counts))
            .map(|(o, t)| o * t)
            .sum()
    }

    /// The phases as the ladder takes them: (lattice, steps).
    #[cfg(full_engine)]
    fn ladder_phases(&self) -> Vec<(&StepPld, u64)> {
        (self.steps.iter().zip(&self.counts))
            .map(|(p, &t)| (p, t as u64))
            .collect()
    }

    /// Whether the add pair is read from these (remove) lattices, reversed: where one has two
    /// resolutions (plain SGM steps only). Elsewhere the add pair's own lattice is the faster
    /// (q = 1e-4, σ = 1, T = 10⁵: 48 ms against 69 ms reversed, on lattices of 40k and 85k
    /// points).
    #[cfg(full_engine)]
    fn reads_reversed(&self) -> bool {
        self.steps.iter().any(|s| s.tail.is_some())
    }

    /// Σ T·(−ln(1 − q)) over the phases: the add pair's largest composed loss (+∞ where a
    /// phase is not a plain SGM one).
    #[cfg(full_engine)]
    fn add_loss_top(&self) -> f64 {
        (self.floors.iter().zip(&self.counts))
            .map(|(&floor, &t)| -t * floor)
            .sum()
    }

    /// The reversed pair's composition at tilt λ = −(1 + θ) on the ladder.
    #[cfg(full_engine)]
    fn ladder_reversed(&self, theta: f64) -> Result<Composed, Error> {
        let lambda = -(1.0 + theta.max(0.0));
        // The mass below a lattice sits at losses ≥ its infimum: moment ≤ η·e^{λ·inf} (λ < 0).
        let ln_eta = (self.eta_total / self.counts.iter().sum::<f64>()).ln();
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
        let mut c =
            ladder::compose_reversed(&self.ladder_phases(), lambda, (self.d, top), &edges, shift)
                .map_err(ladder_error)?;
        c.shift_by(shift);
        Ok(c)
    }

    /// The composed loss's tilted mean and standard deviation at tilt λ, in loss units (on
    /// the lattices, plus their shift).
    fn tilted_moments(&self) -> impl Fn(f64) -> (f64, f64) + '_ {
        let phases = self.phases();
        let sh = self.shift();
        move |l: f64| {
            let (m, v) = tilted_mean(&phases, l, self.d);
            (m * self.d + sh, v * self.d)
        }
    }

    /// Σ T·(a lattice index of each phase's step, `k`)·Δ plus the shift: the composed loss's
    /// least (`k_lo`) or greatest (`k_top`) value.
    fn composed_end(&self, k: impl Fn(&StepPld) -> i64) -> f64 {
        (self.steps.iter().zip(&self.counts))
            .map(|(p, &t)| t * k(p) as f64 * self.d)
            .sum::<f64>()
            + self.shift()
    }

    /// The θ ≥ 0 whose tilt λ = −(1 + θ) puts the composed loss's tilted mean at −ε (the
    /// reversed pair's answer sits at the remove pair's loss −ε), as [`Self::tilt_for`].
    #[cfg(full_engine)]
    fn tilt_reversed(&self, eps: f64, start: f64) -> f64 {
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
        solve_tilt(at, target, start, -1.0, self.d)
    }

    /// The tilt whose tilted mean is ε (λ ≥ 0), to within half a tilted standard
    /// deviation (the tilt only steers precision; every tilt gives valid bounds):
    /// Newton's method on T·κ'(λ) = ε from `start`, safeguarded by bisection.
    fn tilt_for(&self, eps: f64, start: f64) -> f64 {
        let at = self.tilted_moments();
        let (m0, _) = at(0.0);
        if m0 >= eps {
            return 0.0;
        }
        // The tilted mean cannot pass the largest composed loss (the add direction's
        // loss is bounded by −ln(1−q) per step): aim inside it.
        let top = self.composed_end(StepPld::k_top);
        let eps = eps.min(m0 + 0.9 * (top - m0));
        solve_tilt(at, eps, start, 1.0, self.d)
    }
}

/// The typed refusal of a ladder that ran out of work or of FFT length.
#[cfg(full_engine)]
fn ladder_error(e: compose::TooWide) -> Error {
    if e.needed.is_infinite() {
        Error::PldBudget { reason: WORK_SPENT }
    } else {
        Error::PldBudget { reason: TOO_WIDE }
    }
}

/// The tilt x ≥ 0 whose tilted mean m(x) (`at` gives it and its slope, in ε units) is
/// `target` to within half a tilted standard deviation; `dir` = +1 where m grows with x, −1
/// where it falls. Newton's method from `start`, safeguarded by bisection; unbracketed above, a
/// step grows the tilt at most 8× (a heavy tail makes the slope tiny there, and one step used
/// to jump to the cap, 1e7). The tilt only steers precision: every tilt gives valid bounds.
fn solve_tilt(at: impl Fn(f64) -> (f64, f64), target: f64, start: f64, dir: f64, d: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, f64::INFINITY);
    let mut x = start.max(0.0);
    for _ in 0..40 {
        if !compose::has_work() {
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
        let newton = x + err / slope.max(1e-300);
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
fn eps_on(c: &Composed, delta: f64) -> Result<(f64, f64), Side> {
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
fn eps_on_reversed(c: &Composed, delta: f64) -> Option<f64> {
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
fn upper_crossing(up: impl Fn(f64) -> f64, delta: f64, mut b: f64) -> f64 {
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
fn eps_reversed(
    lat: &Lattices,
    delta: f64,
    (guess, enough): (f64, f64),
    bern_add: f64,
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
    let mut theta = lat.tilt_reversed(guess, 1.0);
    let mut best: Option<(f64, usize)> = None;
    for _ in 0..6 {
        let c = lat.ladder_reversed(theta)?;
        let n = c.window_len();
        match eps_on_reversed(&c, delta) {
            Some(u) => {
                let b = best.map_or((u, n), |(bu, bn)| (bu.min(u), bn.max(n)));
                best = Some(b);
                if b.0 <= enough || (-u - c.center).abs() <= 1.5 * c.spread {
                    break;
                }
                let t2 = lat.tilt_reversed(u, theta);
                if (t2 - theta).abs() <= 1e-3 * theta.max(1.0) {
                    break;
                }
                theta = t2;
            }
            None => {
                let (lo, _) = c.window_range();
                theta = lat.tilt_reversed(-lo + 3.0 * c.spread, theta.max(0.5) * 1.5);
            }
        }
    }
    best.map(|(u, n)| (u.min(top), n)).ok_or(Error::PldBudget {
        reason: "no tilt brought the answer inside the FFT window",
    })
}

/// The P-mass per step that may be sent to +∞ (it raises δ by at most T·η). Near the
/// answer δ(ε) falls at least as fast as δ·(α − 1)... so T·η ≤ 0.05·TOL·ε·α·δ moves the
/// upper ε by ≲ 5 % of the target width (ε, α: the exact-RDP optimum, which only
/// steers the budget; the bracket measures what it costs).
/// Gaussian tails are cheap to keep, so the per-step cut is at most 1e-14; the random
/// allocation's log-normal tail is not (its cap sets the width of a t-fold FFT), so its
/// law takes the budget itself ([`eta_budget`]).
fn eta_for(delta: f64, t: f64, eps: f64, alpha: f64) -> f64 {
    eta_budget(delta, t, eps, alpha).min(1e-14)
}

/// The budget behind [`eta_for`], before its cap.
fn eta_budget(delta: f64, t: f64, eps: f64, alpha: f64) -> f64 {
    let rel = (0.05 * TOL * eps * (alpha - 1.0).max(1.0)).clamp(1e-7 * TOL, 0.05 * TOL);
    (rel * delta / t).max(1e-300)
}

/// The scale of the losses that carry almost all of P in one step of the smallest-q phase:
/// their standard deviation under Q, √χ² = q·√(e^{1/σ²} − 1) (plain SGM phases only; the
/// page's own wasm, without the two-resolution lattices, keeps its one spacing rule).
#[cfg(not(full_engine))]
fn bulk_scale(_: &[Phase]) -> Option<f64> {
    None
}

#[cfg(full_engine)]
fn bulk_scale(phases: &[Phase]) -> Option<f64> {
    phases
        .iter()
        .filter(|p| p.is_sgm())
        .map(|p| p.sgm.q() * (1.0 / (p.sgm.sigma() * p.sgm.sigma())).exp_m1().sqrt())
        .min_by(f64::total_cmp)
}

/// A lattice whose spacing is above a sixteenth of [`bulk_scale`] merges those losses into a
/// few points for the lower bound, which then loses their spread (q = 1e-6, σ = 0.6: a
/// per-step standard deviation of 6.5e-10 against the true 4e-6).
const BULK_SHARE: f64 = 16.0;

/// The spacing that resolves the bulk ([`BULK_SHARE`]), but not below `finest`
/// ([`finest_spacing`]): a bin's connect-the-dots split taken from ΔP and ΔQ has relative
/// rounding error ~u/Δ, and at q = 1e-8, σ = 10, T = 10⁹ a spacing of 1e-9 gave an upper
/// bound 5× that of 1e-8.
fn bulk_spacing(bulk: f64, finest: f64) -> f64 {
    (bulk / BULK_SHARE).max(finest)
}

/// The finest per-step spacing for T steps: 1e-17·T·r (a bin's connect-the-dots split has
/// relative rounding ~u·r/Δ, counted T times; r from [`split_share`]), and 1e-9·r.
fn finest_spacing(t: f64, r: f64) -> f64 {
    (1e-17 * t * r).max(1e-9 * r)
}

/// The factor r of the split's relative rounding ~u·r/Δ ([`discretize`]'s `edge_excess`):
/// q·E_P[Y] = q·(1 − q + q·e^{1/σ²}) (at most 1) where every phase is a plain SGM, whose
/// bins split from their mixture components; 1 otherwise.
fn split_share(phases: &[Phase]) -> f64 {
    if !phases.iter().all(Phase::is_sgm) {
        return 1.0;
    }
    phases
        .iter()
        .map(|p| {
            let (q, s) = (p.sgm.q(), p.sgm.sigma());
            q * (1.0 - q + q * (1.0 / (s * s)).exp())
        })
        .fold(0.0, f64::max)
        .min(1.0)
}

fn initial_spacing(eps: f64, alpha: f64, t: f64, tol: f64) -> f64 {
    let d = (3.0 * tol * eps.max(1e-3) / (t * alpha.max(1.0 + 1e-3))).sqrt();
    d.min(eps.max(1e-3) / 20.0).clamp(1e-7, 1.0)
}

/// ε(δ) for one direction on one lattice set: (upper, lower, fft length). The tilt
/// starts where the RDP optimum points; when the answer lands outside the composition's
/// well-resolved range it is re-tilted there, keeping the tighter bracket.
fn eps_direction(
    lat: &Lattices,
    delta: f64,
    eps_guess: f64,
    alpha: f64,
    tol: f64,
) -> Result<(f64, f64, usize), Error> {
    let mut lambda = lat.tilt_for(eps_guess, alpha - 1.0);
    // Every composition gives a certified bracket, so brackets from several tilts
    // combine: the smallest upper and the largest lower bound.
    let mut best: Option<(f64, f64, usize)> = None;
    // The ladder's FFT floor, as a share of each product's mass (None: its default).
    #[cfg_attr(not(full_engine), allow(unused_mut))]
    let mut floor: Option<f64> = None;
    for _ in 0..6 {
        let c = match (lat.compose_at(lambda, floor), best) {
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
                if bu - bl <= 0.25 * tol * bu {
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
                let near = (u - c.center).abs() <= 1.5 * c.spread;
                let retilt = if near {
                    None
                } else {
                    let l2 = lat.tilt_for(u, lambda);
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
                lambda = lat.tilt_for((lo - 3.0 * c.spread).max(0.0), lambda) * 0.7;
            }
            Err(Side::Above) => {
                if c.inf_mass >= delta {
                    return Err(Error::PldBudget {
                        reason: "the mass beyond the loss range exceeds delta",
                    });
                }
                let (_, hi) = c.window_range();
                lambda = lat.tilt_for(hi + 3.0 * c.spread, lambda.max(0.5) * 1.5);
            }
            Err(Side::Inside) => unreachable!(),
        }
    }
    best.ok_or(Error::PldBudget {
        reason: "no tilt brought the answer inside the FFT window",
    })
}

/// Run `f` at spacing `d`; when its composed window does not fit the largest FFT,
/// retry on a grid 2.5× coarser (up to `max_tries` times): the bracket widens like Δ²
/// while the window shrinks like 1/Δ, and the result stays certified.
fn coarsening<T>(
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

/// Forget the random-allocation law cached between calls (it makes a second call at the
/// same σ, t and δ cheap): for benchmarks that time a cold call.
#[cfg(full_engine)]
#[doc(hidden)]
pub fn forget_cached_laws() {
    allocation::forget_law();
}

/// Tight ε at δ for the phases, both directions, the worse one reported.
pub fn epsilon_phases(phases: &[Phase], delta: f64) -> Result<EpsilonAnswer, Error> {
    #[cfg_attr(not(full_engine), allow(unused_mut))]
    let mut ans = epsilon_phases_at(phases, delta, TOL)?;
    // Truncated Poisson: the bracket above is of the revealed-branch pair, whose upper
    // end is certified for the mechanism; the lower end comes from the exact pair of the
    // gradient-0 datasets ([`truncated`]).
    #[cfg(full_engine)]
    if phases.iter().any(|p| p.trunc.is_some()) {
        let low: Vec<Phase> = phases.iter().map(Phase::lower_phase).collect();
        let lower = match epsilon_phases_at(&low, delta, TOL) {
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
fn epsilon_phases_at(phases: &[Phase], delta: f64, tol: f64) -> Result<EpsilonAnswer, Error> {
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
    let exact = exact_rdp(&live, delta);
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
        if let Some(a) = jumps_raw(&live, delta) {
            // (Within 0.1 %, or within the width rule and the caller's target: q = 3.073e-8,
            // σ = 0.4757, T = 8.5·10⁸, δ = 1.03e-5 reads [0.021881, 0.021924], 4.3e-5 wide,
            // and the lattices' try after it took 2.3 s more.)
            let (w, u) = (a.epsilon.upper - a.epsilon.lower, a.epsilon.upper);
            let narrow = w <= 1e-3 * u;
            let goal = w <= 4e-4 * u || (u < 0.1 && w <= 2e-5);
            if acceptable(a.epsilon)
                && (narrow || !wider_than(a.epsilon, tol))
                && (goal || !first_wide(&live))
            {
                return Ok(a);
            }
            closed = Some(a);
        }
    }
    #[cfg(full_engine)]
    let early = closed.filter(|a| acceptable(a.epsilon));
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
    let lattices = epsilon_lattices(phases, delta, tol, work, exact);
    #[cfg(not(full_engine))]
    return match lattices {
        Ok(a) if acceptable(a.epsilon) => Ok(a),
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
            closed = jumps_raw(&live, delta);
        }
        let got = combine(lattices, closed);
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
                epsilon_lattices(phases, delta, tol, (WORK, true), exact),
                closed,
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
fn live_phases(phases: &[Phase]) -> Vec<Phase> {
    phases.iter().copied().filter(|p| p.sgm.q() > 0.0).collect()
}

/// A certified upper bound on δ(0) of the composition of plain SGM add/remove phases (None for
/// any other): δ(0) is the total variation TV(P, Q), the same for both pairs (add and remove).
/// One step's χ²(P‖Q) is q²·(e^{1/σ²} − 1) exactly (P = (1 − q)Q + q·N(1, σ²) against
/// Q = N(0, σ²): χ² of a mixture with Q is q² times χ²(N(1, σ²)‖N(0, σ²))), and
/// 1 + χ² multiplies under composition. Then TV ≤ ½√χ² (Cauchy–Schwarz) and TV ≤ √(KL/2)
/// (Pinsker) with KL ≤ ln(1 + χ²): the smaller, raised by 1e-12 for rounding.
fn tv_bound(phases: &[Phase]) -> Option<f64> {
    if phases.is_empty()
        || !(phases.iter()).all(|p| p.is_sgm() && p.adjacency == Adjacency::AddRemove)
    {
        return None;
    }
    let ln_1p_chi2: f64 = (phases.iter())
        .map(|p| {
            let (q, s) = (p.sgm.q(), p.sgm.sigma());
            p.steps as f64 * (q * q * (1.0 / (s * s)).exp_m1()).ln_1p()
        })
        .sum();
    let tv = (0.5 * ln_1p_chi2)
        .sqrt()
        .min(0.5 * ln_1p_chi2.exp_m1().sqrt());
    tv.is_finite().then_some(tv * (1.0 + 1e-12))
}

/// Whether the closed form ([`jumps`]) applies: one plain SGM phase under add/remove adjacency.
#[cfg(full_engine)]
fn jumps_apply(phases: &[Phase]) -> bool {
    matches!(phases, [p] if p.is_sgm() && p.adjacency == Adjacency::AddRemove)
}

/// The lattices' answer and the closed form's bracket, where there is one, intersected (both
/// certified); an answer where [`acceptable`], else the refusal's reason (a bracket that
/// disagrees is an error of its own).
#[cfg(full_engine)]
fn combine(
    lattices: Result<EpsilonAnswer, Error>,
    closed: Option<EpsilonAnswer>,
) -> Result<EpsilonAnswer, Error> {
    match (lattices, closed) {
        (Ok(mut ans), Some(a)) => {
            if a.epsilon.upper < ans.epsilon.upper {
                ans.grid = a.grid;
            }
            ans.epsilon = intersect(ans.epsilon, a.epsilon)?;
            if acceptable(ans.epsilon) {
                Ok(ans)
            } else {
                Err(Error::PldBudget {
                    reason: CANNOT_BRACKET,
                })
            }
        }
        (Ok(ans), None) if acceptable(ans.epsilon) => Ok(ans),
        (Ok(_), None) => Err(Error::PldBudget {
            reason: CANNOT_BRACKET,
        }),
        (Err(Error::PldBudget { .. }), Some(a)) if acceptable(a.epsilon) => Ok(a),
        (Err(e), _) => Err(e),
    }
}

/// The refusal of a call the lattices (and the closed form) could not answer: Bernstein's
/// bound where it is itself within the absolute width rule ([0, bound]), else the reason —
/// beyond the domain the accountant is built for, the refusal says so.
fn refusal(live: &[Phase], delta: f64, reason: &'static str) -> Result<EpsilonAnswer, Error> {
    match bernstein::epsilon(live, delta) {
        Some(b) if b <= ABS_WIDTH => Ok(bernstein_answer(b)),
        _ if beyond_domain(live, delta) => Err(Error::PldBudget {
            reason: BEYOND_DOMAIN,
        }),
        _ => Err(Error::PldBudget { reason }),
    }
}

/// The issue's width rule: 0.1 % of ε, or 1e-4 absolute below ε = 0.1 (the lattices stop
/// refining a bracket within it that the work left cannot narrow; the closed form stops there).
fn meets_rule(lower: f64, upper: f64) -> bool {
    let w = upper - lower;
    w <= 1e-3 * upper || (upper < 0.1 && w <= ABS_WIDTH)
}

/// Whether a bracket is wider than both the issue's width rule (0.1 % of ε, or 1e-4 below
/// ε = 0.1) and the caller's relative target `tol`.
#[cfg(full_engine)]
fn wider_than(b: Bracket, tol: f64) -> bool {
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
fn jumps_first(phases: &[Phase]) -> bool {
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
fn jumps_near(phases: &[Phase]) -> bool {
    long_sharp(phases).is_some_and(|p| p.sgm.sigma() < 0.6) && jumps_rare(phases)
}

/// One plain SGM phase of 10⁶ steps or more at σ < 0.8 (a step's loss then has a log-normal
/// tail e^{1/σ²} > 4.7 times its bulk's scale): where the closed form may go first.
#[cfg(full_engine)]
fn long_sharp(phases: &[Phase]) -> Option<&Phase> {
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
fn first_wide(phases: &[Phase]) -> bool {
    matches!(phases, [p] if p.sgm.sigma() >= 0.6)
}

/// Whether the privacy profile of one plain SGM add/remove phase is read in closed form first
/// (where rare large losses may matter, [`jumps_rare`], at σ < 0.8 over 10⁶ steps and more,
/// with at most 50 sampled steps expected over the run, q·T ≤ 50): there the lattices spent the
/// call before the closed form answered alone (q = 9.462e-8, σ = 0.341, T = 46,420,413, ~4
/// sampled steps, and q = 6.214e-7, σ = 0.5486, T = 69,744,471, ~43: 5.1 → 2.9 s and
/// 4.2 → 2.5 s natively).
#[cfg(full_engine)]
fn few_jumps(phases: &[Phase]) -> bool {
    jumps_rare(phases) && long_sharp(phases).is_some_and(|p| p.sgm.q() * p.steps as f64 <= 50.0)
}

/// Whether one plain SGM add/remove phase is one whose rare large losses may matter (the
/// bulk's spacing below 1e-6): the closed form is tried after a lattice answer wider than the
/// rule, and the privacy profile is read in closed form where the lattices spend the call
/// (q = 9.462e-8, σ = 0.341, T = 46,420,413, ~4 sampled steps, and q = 6.214e-7, σ = 0.5486,
/// T = 69,744,471, ~43: the page's profile was unavailable).
#[cfg(full_engine)]
fn jumps_rare(phases: &[Phase]) -> bool {
    jumps_apply(phases) && bulk_scale(phases).is_some_and(|b| b / BULK_SHARE < 1e-6)
}

/// One plain SGM phase: the bracket from its rare large losses in closed form ([`jumps`]):
/// the remove pair's lower end, and the larger of its upper end and the add pair's (a
/// certified upper end of its ε — from the same small pair, reversed, or Bernstein's bound),
/// whatever its width (the caller holds it to [`acceptable`], or intersects it with the
/// lattices' bracket).
#[cfg(full_engine)]
fn jumps_raw(phases: &[Phase], delta: f64) -> Option<EpsilonAnswer> {
    let [p] = phases else { return None };
    if !jumps_apply(phases) || check_delta(delta).is_err() {
        return None;
    }
    let (b, add) = jumps_bracket(p, delta).ok()?;
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
    jumps_bracket(&Phase::new(sgm, steps)?, check_delta(delta)?)
}

/// [`jumps::bracket`] for one plain SGM phase, capped by the certified upper ends in hand: exact
/// RDP's ε and Bernstein's bound for the remove pair.
#[cfg(full_engine)]
fn jumps_bracket(p: &Phase, delta: f64) -> Result<(Bracket, f64), Error> {
    let phases = std::slice::from_ref(p);
    let (cap, _) = rdp_epsilon(phases, delta);
    let bern = bernstein::epsilon_in(phases, delta, Direction::Remove);
    jumps::bracket(p, delta, cap.min(bern.unwrap_or(f64::INFINITY)))
}

/// The answer [0, 0], `worst` saying why.
fn zero_answer(worst: &'static str) -> EpsilonAnswer {
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
fn bernstein_answer(b: f64) -> EpsilonAnswer {
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
fn epsilon_lattices(
    phases: &[Phase],
    delta: f64,
    tol: f64,
    work: (f64, bool),
    exact: Exact,
) -> Result<EpsilonAnswer, Error> {
    #[cfg(full_engine)]
    if phases
        .iter()
        .any(|p| p.sgm.q() > 0.0 && p.guide().sigma() < LOWER_SIGMA)
    {
        return compose::lowering_after(compose::Lowering::AtTilt, || {
            lattices_epsilon(phases, delta, tol, work, exact)
        });
    }
    lattices_epsilon(phases, delta, tol, work, exact)
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
const LOWER_SIGMA: f64 = 0.8;

/// The lattices' ε bracket; the input is taken as checked ([`epsilon_phases_at`] checks it),
/// `exact` is exact RDP at `delta` for its live phases ([`exact_rdp`]).
fn lattices_epsilon(
    phases: &[Phase],
    delta: f64,
    tol: f64,
    (work, rescue): (f64, bool),
    exact: Exact,
) -> Result<EpsilonAnswer, Error> {
    budget(work);
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
    let mut d = initial_spacing(eps_rdp, alpha, t, tol);
    // Small q: a spacing that resolves the losses carrying almost all of P from the start
    // (without it the first pass finds no lower bound, and costs what the next one needs) —
    // where that spacing is below 1e-4 (at MNIST's q it is 2.9e-4 and the lower bound holds
    // without it: the chart's coarser checkpoints would only get slower).
    let bulk = bulk_scale(&phases);
    let finest = finest_spacing(t, split_share(&phases));
    if let Some(b) = bulk.filter(|&b| b / BULK_SHARE < 1e-4) {
        d = d.min(bulk_spacing(b, finest));
    }
    let mut prev_d = d;
    let clt = bulk.and_then(|_| central_limit_epsilon(&phases, delta));
    let eta = eta_for(delta, t, eps_rdp, alpha);
    let eta_law = eta_budget(delta, t, eps_rdp, alpha);
    let mut best: Option<EpsilonAnswer> = None;
    let mut cut = false;
    // The smallest certified upper end of the add pair's ε found so far (any pass).
    let add_seen = std::cell::Cell::new(f64::INFINITY);
    let saw_add = |u: f64| add_seen.set(add_seen.get().min(u));
    // `rescue`: whether a refinement bound for a refusal may take one fresh budget (below);
    // `rescued`: whether it did.
    let mut rescued = false;
    for pass in 0..=REFINE {
        let left = compose::work_left();
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
        // A coarse continuation's spacing: a 4096th of the ε known so far and of the central
        // limit's spread of the composed small losses, √T·bulk (the rare large losses that
        // land on it move ε by their spacing, so it must be small beside ε; and a 256th left
        // q = 1e-5, σ = 0.6, T = 10⁸ at [1.4987, 1.5201], a 4096th gives [1.5062, 1.5140]).
        let known = best.map_or(eps_rdp, |b| b.epsilon.upper);
        let tail_d = bulk.map(|b| known.min(b * t.sqrt()) / 4096.0);
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
            let guess = match best {
                Some(b) if b.epsilon.lower <= 0.0 => {
                    clt.map_or(b.epsilon.upper, |c| c.min(b.epsilon.upper))
                }
                Some(b) => b.epsilon.upper,
                None => eps_rdp * 0.93,
            };
            let rem = Lattices::build(&phases, Direction::Remove, d, (eta, eta_law), tail_d)?;
            let (mut u, mut l, mut n) = eps_direction(&rem, delta, guess, alpha, tol)?;
            // Exact RDP can sit far above the tight ε (q = 1e-5, σ = 1.5, T = 10⁶: 0.133
            // against 0.0197), and a composition tilted there can resolve the wrong tail: a
            // refinement that found no lower bound, or an upper one far above the last pass's,
            // also tilts at the bracket found (both brackets are certified: intersected).
            if let Some(b) =
                best.filter(|b| (l <= 0.0 || u > 1.5 * b.epsilon.upper) && b.epsilon.upper != guess)
            {
                if let Ok((u2, l2, n2)) = eps_direction(&rem, delta, b.epsilon.upper, alpha, tol) {
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
                let (u2, l2, n2) = eps_direction(&rem, delta, u, alpha, tol)?;
                overlap(u.min(u2), l.max(l2))?;
                return Ok((u.min(u2), l.max(l2), n.max(n2), "remove"));
            }
            // A two-resolution remove lattice (small q) reads the add pair too, reversed: the
            // add pair's own lattice has its long tail below, where no coarse part goes (q =
            // 1e-4, σ = 0.6, T = 10⁸: 83,000 points, and the budget ran out).
            #[cfg(full_engine)]
            if rem.reads_reversed() {
                let (ua, na) = eps_reversed(&rem, delta, (u, up.0), bern_add)?;
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
            let mut cu = f64::INFINITY;
            for f in [8.0, 4.0] {
                let read = Lattices::build(&phases, Direction::Add, f * d, (eta, eta_law), tail_d)
                    .and_then(|coarse| eps_direction(&coarse, delta, u, alpha, tol));
                let (c, _, cn) = match read {
                    Ok(r) => r,
                    // (The coarser lattice only saves work: where it runs out or its window does
                    // not fit, the next; brackets that disagree discredit every lattice.)
                    Err(Error::PldBudget { reason }) if f > 4.0 && reason != DISAGREE => continue,
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
                let add = Lattices::build(&phases, Direction::Add, d, (eta, eta_law), tail_d)?;
                let (u, l, n) = eps_direction(&add, delta, cu, alpha, tol)?;
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
            Err(_) if rescue && !rescued && best.is_some_and(|b| !acceptable(b.epsilon)) => {
                rescued = true;
                budget(work);
                d = 2f64
                    .powf((16.0 * (0.8 * prev_d).log2()).round() / 16.0)
                    .max(finest);
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
                ((w0 / (upper - lower)).ln() / (prev_d / d).ln()).clamp(0.7, 2.0)
            }
            _ => 2.0,
        };
        let wanted = (d * (0.85 * tol / width).powf(1.0 / p).max(0.1))
            .min((upper / 200.0).max(ABS_TOL))
            .max(finest);
        let wanted = match bulk {
            Some(b) if lower <= 0.0 => wanted.min(bulk_spacing(b, finest)),
            _ => wanted,
        };
        // Refine only as far as the work left affords: a pass's work grows like 1/Δ
        // (lattice points and window), so from this pass's cost the finest spacing that
        // fits half of what is left follows (a margin: the window grows faster than 1/Δ near the
        // FFT limit). A refinement asked beyond it used to spend the
        // budget and refuse (q = 1e-5, σ = 0.75, T = 10⁶: 12 % wide after the first pass,
        // where a 4× finer grid fits and brings it within the rule).
        let spent = left - compose::work_left();
        let fits = d * spent / (0.5 * compose::work_left()).max(1e-300);
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
        let dear = work - compose::work_left() + spent * d / wanted > 0.5 * work;
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
        d = 2f64.powf((16.0 * d.log2()).round() / 16.0).max(finest);
        // The same spacing again (at its floor, 1e-9) would repeat this pass exactly (q = 1.8e-9,
        // σ = 1.23, T = 7.3·10⁸ spent three passes so).
        if d >= prev_d * (1.0 - 1e-9) {
            break;
        }
    }
    // The loop runs at least once and either sets `best` or returns.
    #[cfg_attr(not(full_engine), allow(unused_mut))]
    let mut ans = best.ok_or(Error::PldBudget {
        reason: "no grid pass completed",
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

/// Why a bracket wider than [`acceptable`] is refused.
const CANNOT_BRACKET: &str = "the grid budget cannot bracket epsilon within 1 %";

/// Whether a certified bracket is narrow enough to be an answer: within 1 % of ε (MAX_WIDTH),
/// or ABS_WIDTH absolute.
fn acceptable(b: Bracket) -> bool {
    let w = b.upper - b.lower;
    w <= MAX_WIDTH * b.upper || w <= ABS_WIDTH
}

/// dp_accounting's default `value_discretization_interval` for its `PLDAccountant`.
pub const DP_ACCOUNTING_GRID: f64 = 1e-4;
/// The widest window [`dp_accounting_epsilon`] composes (2²¹ points, 32 MB per buffer):
/// that library's numpy FFTs are as wide as the composed loss needs.
const DP_ACCOUNTING_FFT: usize = 1 << 21;

/// The ε Google's dp_accounting `PLDAccountant` reports for T steps of one SGM at its
/// default value discretization interval ([`DP_ACCOUNTING_GRID`]), add/remove adjacency:
/// the T-fold composition of the connect-the-dots PLD on the fixed lattice {kΔ}
/// (pessimistic; tails beyond P-mass e^{−50} per step to +∞, its
/// `log_mass_truncation_bound`), both directions, read at δ — the same construction
/// (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect the Dots", PETS 2022) with no
/// refinement, so it keeps that grid's bias: on long runs with small q, whose per-step
/// losses are of the order of Δ, it lies well above the tight ε. One FFT (the ladder would
/// re-discretize, which that library does not); a window beyond it is refused.
pub fn dp_accounting_epsilon(sgm: Sgm, steps: u64, delta: f64) -> Result<f64, Error> {
    let phases = [Phase::new(sgm, steps)?];
    check_phases(&phases)?;
    budget(WORK);
    let delta = check_delta(delta)?;
    if sgm.q() == 0.0 {
        return Ok(0.0);
    }
    let (eps_rdp, alpha) = rdp_epsilon(&phases, delta);
    let eta = (-50f64).exp();
    let mut upper = 0.0f64;
    for &dir in directions(&phases) {
        let mut lat = Lattices::build(&phases, dir, DP_ACCOUNTING_GRID, (eta, eta), None)?;
        lat.one_fft = Some(DP_ACCOUNTING_FFT);
        let (u, _, _) = eps_direction(&lat, delta, eps_rdp, alpha, TOL)?;
        upper = upper.max(u);
    }
    Ok(upper)
}

/// Opacus' `PRVAccountant.get_epsilon(delta)` with its defaults (`eps_error` = 0.01,
/// `delta_error` = δ/1000), which prints the PRV accountant's upper bound: its estimate
/// at δ − δ/1000 plus `eps_error` (Gopi, Lee, Wutschitz, "Numerical Composition of
/// Differential Privacy", NeurIPS 2021; prv_accountant's `compute_epsilon`). The estimate
/// is the tight ε to its discretization; ours is the certified upper end at δ(1 − 10⁻³),
/// within ~1e-4 of it on the runs checked.
pub fn opacus_prv_epsilon(sgm: Sgm, steps: u64, delta: f64) -> Result<f64, Error> {
    let delta = check_delta(delta)?;
    Ok(epsilon(sgm, steps, delta * (1.0 - 1e-3))?.epsilon.upper + 0.01)
}

/// Tight ε at δ after `steps` steps of one SGM (Poisson sampling, add/remove-one): a
/// certified bracket, the worse of the two directions.
///
/// At q = 1 the run is the Gaussian mechanism with μ = √T/σ, whose ε at δ has a closed form
/// (Balle, Wang, ICML 2018); the bracket holds it:
///
/// ```
/// use sgm_rdp::engine::{pld, Sgm};
/// let e = pld::epsilon(Sgm::new(1.0, 10.0)?, 100, 1e-5)?.epsilon; // μ = 1
/// let truth = 4.377178095681224; // δ_μ(ε) = Φ(μ/2 − ε/μ) − e^ε·Φ(−μ/2 − ε/μ) = 1e-5, bisected
/// assert!(e.lower <= truth && truth <= e.upper && e.upper - e.lower < 0.01 * e.upper);
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
pub fn epsilon(sgm: Sgm, steps: u64, delta: f64) -> Result<EpsilonAnswer, Error> {
    epsilon_phases(&[Phase::new(sgm, steps)?], delta)
}

/// Tight δ at ε for the phases.
pub fn delta_phases(phases: &[Phase], eps: f64) -> Result<DeltaAnswer, Error> {
    check_phases(phases)?;
    let eps = check_epsilon(eps)?;
    let pts = profile_phases(phases, &[eps])?;
    let p = pts[0];
    Ok(DeltaAnswer {
        delta: p.0.delta,
        grid: p.1,
    })
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
    // A few tens of big steps or fewer ([`few_jumps`]): the closed form first, the lattices
    // only where it leaves a point poor (their brackets intersected). The input is checked
    // first: the closed form takes it as checked. Far beyond the domain at δ = 0.1, the
    // profile's largest δ, nothing is tried ([`FAR_BEYOND`]).
    check_profile(phases, eps)?;
    let live = live_phases(phases);
    far_beyond(&live, || rdp_epsilon(&live, 0.1).0)?;
    #[cfg(full_engine)]
    let first = match few_jumps(&live).then(|| jumps_alone(phases, eps)).flatten() {
        Some(o) if !o.iter().any(|p| poor(&p.0.delta)) => Ok(o),
        Some(mut o) => {
            if let Ok(l) = profile_of(phases, eps) {
                for (a, b) in o.iter_mut().zip(l) {
                    a.0.delta = intersect(a.0.delta, b.0.delta)?;
                }
                monotone_envelope(&mut o);
            }
            Ok(o)
        }
        None => profile_of(phases, eps),
    };
    #[cfg(not(full_engine))]
    let first = profile_of(phases, eps);
    // Where rare large losses decide δ ([`jumps_first`]), the points the lattices read poorly
    // are read again in closed form and the brackets intersected ([`jumps_profile`]); where
    // they may matter ([`jumps_rare`]) and the lattices spend the call, the closed form alone
    // may still answer ([`jumps_alone`]). (Re-reading poor points wherever they may matter
    // halved the profile sweep's poor points, 2,120 → 961 of 160 runs' 101, but added 1.5–4.5 s
    // to the runs it touched: `benches/profile_sweep.py`.)
    #[cfg(full_engine)]
    let first = match first {
        Ok(mut o) if jumps_first(&live) => jumps_profile(phases, &mut o).map(|_| o),
        Err(e @ Error::PldBudget { .. }) => jumps_alone(phases, eps).ok_or(e),
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
        let lows = match profile_of(&low, eps) {
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
fn jumps_profile(phases: &[Phase], out: &mut [(ProfilePoint, Grid)]) -> Result<bool, Error> {
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
    let Ok(read) = jumps::delta_brackets(p, &eps, least) else {
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
fn poor(b: &Bracket) -> bool {
    b.upper > PROFILE_FLOOR && b.upper > PROFILE_RATIO * b.lower
}

/// The profile from the closed form alone (where the lattices spend the call: q = 2.1e-9,
/// σ = 0.51, T = 5.8·10⁸ over ε ∈ [0, 0.105], the page's range): every point starts at
/// [0, exact RDP's δ] and is read by [`jumps_profile`]; None where that does not answer or
/// the run is not one it reads. (Called on input [`check_profile`] has checked.)
#[cfg(full_engine)]
fn jumps_alone(phases: &[Phase], eps: &[f64]) -> Option<Vec<(ProfilePoint, Grid)>> {
    let live = live_phases(phases);
    if !jumps_rare(&live) {
        return None;
    }
    let curve = rdp_total(&live);
    let mut out = zero_points(eps, 0.0);
    for (slot, &e) in out.iter_mut().zip(eps) {
        slot.0.delta.upper = rdp_ln_delta(&curve, e).0.exp().min(1.0);
    }
    jumps_profile(phases, &mut out).ok()?.then_some(out)
}

/// Whether exact RDP puts the plain SGM phases' ε at `delta` above 10³, beyond the domain the
/// tight accountant is built for (its refusals then say so).
fn beyond_domain(phases: &[Phase], delta: f64) -> bool {
    rdp_above(phases, delta, 1e3)
}

/// Where exact RDP's ε is above 10⁷ (10⁴ times the domain's end) the lattices are not tried:
/// no run there answered in a grid of 27 beyond the domain (q ∈ {0.5, 0.05, 0.005},
/// σ ∈ {0.3, 0.6, 1.5}, T ∈ {10⁶, 10⁸, 10⁹}, δ = 1e-5: the largest answered had exact RDP
/// ε = 2.9·10⁶), and each refusal cost 2–9 s natively — tens of seconds in the page's worker,
/// once for the headline and again for each chart (q = 0.5, σ = 0.3, T = 10⁹ kept the page
/// "updating" for over 20 s before it said the tight ε is unavailable).
const FAR_BEYOND: f64 = 1e7;

/// Whether exact RDP puts the plain SGM phases' ε at `delta` above `limit`.
fn rdp_above(phases: &[Phase], delta: f64, limit: f64) -> bool {
    let live = live_phases(phases);
    plain(&live) && rdp_epsilon(&live, delta).0 > limit
}

/// Whether the live phases are some, and all plain SGM (exact RDP bounds their ε).
fn plain(live: &[Phase]) -> bool {
    !live.is_empty() && live.iter().all(Phase::is_sgm)
}

/// The refusal of a run far beyond the domain ([`FAR_BEYOND`]), before any lattice is built,
/// from exact RDP's ε of the live phases (`eps_rdp`, read only for plain SGM phases); not where
/// q = 1 makes the run the Gaussian mechanism, answered in closed form at any length.
fn far_beyond(live: &[Phase], eps_rdp: impl FnOnce() -> f64) -> Result<(), Error> {
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
struct Exact {
    eps: f64,
    alpha: f64,
    cap: f64,
}

/// [`Exact`] for the live phases at a checked δ. One plain SGM phase: the cap is the
/// continuous optimum (≤ the grid's); several plain phases: the composed grid's ε; a group's
/// guide is no bound (cap ∞).
fn exact_rdp(live: &[Phase], delta: f64) -> Exact {
    if let [p] = live {
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
fn check_profile(phases: &[Phase], eps: &[f64]) -> Result<(), Error> {
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
fn profile_of(phases: &[Phase], eps: &[f64]) -> Result<Vec<(ProfilePoint, Grid)>, Error> {
    budget(WORK);
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
        .map(|&e| exact && rdp_ln_delta(&curve, e).0 < (1e-290f64).ln())
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
            slot.0.delta.upper = rdp_ln_delta(&curve, e).0.exp().min(1.0);
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
            g.q().powi(2) * p.guide_steps() as f64 * (1.0 / g.sigma().powi(2)).exp_m1()
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
            profile_at(&live, &near, d, (eta, tail_d), alpha, one, &composed)
        })
    };
    // Small q: one resolution first, on ONE_SHARE of the work; where its compositions spend
    // that (q = 1e-4, σ = 0.6, T = 10⁵: 287,000 points a step, and the first composition
    // took the whole budget), two resolutions on the rest — on all of it where the one
    // resolution's lattice alone was beyond its share (q = 1e-4, σ = 0.6, T = 10⁸: 10⁶ points).
    let got = if tail_d.is_some() {
        let total = compose::work_left();
        budget(ONE_SHARE * total);
        match run(true) {
            Err(Error::PldBudget { reason }) if reason == WORK_SPENT => {
                budget(if composed.get() {
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
                let r = rdp_ln_delta(&curve, e).0.exp();
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
fn monotone_envelope(out: &mut [(ProfilePoint, Grid)]) {
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
fn zero_points(eps: &[f64], spacing: f64) -> Vec<(ProfilePoint, Grid)> {
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
const PROFILE_RATIO: f64 = 1.25;

/// The share of a profile's work its one-resolution attempt may spend (small q; the rest goes
/// to two resolutions where that attempt runs out).
const ONE_SHARE: f64 = 0.6;

/// The smallest δ the profile resolves (its chart's axis ends there).
const PROFILE_FLOOR: f64 = 1e-15;

/// A composition's δ bracket at ε with its FFT length (below its window: [0, 1]).
fn delta_read(c: &Composed, e: f64) -> (f64, f64, usize) {
    let (u, l) = if c.side(e) == Side::Below {
        (1.0, 0.0)
    } else {
        c.delta(e)
    };
    (u, l, c.window_len())
}

/// The profile on one lattice spacing.
fn profile_at(
    live: &[Phase],
    eps: &[f64],
    d: f64,
    (eta, tail_d): (f64, Option<f64>),
    alpha: f64,
    one: bool,
    composed: &std::cell::Cell<bool>,
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
        let reserve = compose::work_left() * later / (later + 1.0);
        // The add pair from the remove lattices, reversed, where those have two resolutions
        // or are long (as for ε: the add pair's own lattice has its long tail below).
        #[cfg(full_engine)]
        if let Some(r) = rem
            .as_ref()
            .filter(|r| dir == Direction::Add && r.reads_reversed())
        {
            profile_reversed(r, eps, &mut out)?;
            continue;
        }
        // (One resolution while the range fits the point budget: the profile's spacing is
        // not chosen for the bulk, and there the finer single lattice is the tighter.)
        // (`one` false: two resolutions wherever the range is long.)
        let lat = match Lattices::build(live, dir, d, (eta, eta), if one { None } else { tail_d }) {
            Err(Error::PldBudget { reason }) if reason == TOO_MANY_POINTS && tail_d.is_some() => {
                Lattices::build(live, dir, d, (eta, eta), tail_d)?
            }
            r => r?,
        };
        let mut comps: Vec<Composed> = Vec::new();
        // The first composition tilted for the middle of the range asked (tilted for its
        // first point, ε = 0, it was untilted and resolved little: q = 1e-4, σ = 3, T = 10⁸
        // then needed 0.89 s and left 6 of 101 points poor, now 0.35 s and none).
        let mid = eps.iter().cloned().fold(0.0f64, f64::max) * 0.4;
        composed.set(true);
        let first_left = compose::work_left();
        comps.push(lat.compose(lat.tilt_for(mid, alpha - 1.0))?);
        // The most one composition has cost, to keep the directions still to come their share.
        let mut cost = first_left - compose::work_left();
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
            let poor = |r: Option<(f64, f64, usize)>| {
                r.is_none_or(|(u, l, _)| u > PROFILE_FLOOR && u > PROFILE_RATIO * l)
            };
            let mut got = read(&comps);
            if poor(got) && comps.len() < 12 && !spent && compose::work_left() - cost > reserve {
                let lam = lat.tilt_for(*e, alpha - 1.0);
                let fresh = comps
                    .iter()
                    .all(|c| (c.lambda - lam).abs() > 1e-3 * lam.max(1.0));
                if fresh {
                    // A refinement is optional: out of work, the points left read from the
                    // compositions in hand; too wide for the FFT, this ε keeps theirs (q = 1e-4,
                    // σ = 0.6, T = 10⁸: one such refusal threw away the whole attempt).
                    let before = compose::work_left();
                    match lat.compose(lam) {
                        Ok(c) => {
                            cost = cost.max(before - compose::work_left());
                            comps.push(c)
                        }
                        Err(Error::PldBudget { reason }) if reason == WORK_SPENT => spent = true,
                        Err(Error::PldBudget { .. }) => {}
                        Err(err) => return Err(err),
                    }
                    got = read(&comps);
                }
            }
            // Budget of compositions spent and none resolves ε: the closest one still gives a
            // certified (if looser) bracket.
            let (u, l, n) = match got {
                Some(r) => r,
                None => comps
                    .iter()
                    .min_by(|a, b| (a.center - e).abs().total_cmp(&(b.center - e).abs()))
                    .map(|c| delta_read(c, *e))
                    .ok_or(Error::PldBudget { reason: WORK_SPENT })?,
            };
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
fn profile_reversed(
    rem: &Lattices,
    eps: &[f64],
    out: &mut [(ProfilePoint, Grid)],
) -> Result<(), Error> {
    let top = rem.add_loss_top();
    let mut comps: Vec<Composed> = Vec::new();
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
                let theta = rem.tilt_reversed(*e, 1.0);
                comps.push(rem.ladder_reversed(theta)?);
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

/// ε (bracket) at δ after each number of steps in `checkpoints` (ascending or not):
/// the per-step lattices are built once and composed per checkpoint.
pub fn checkpoints(sgm: Sgm, checkpoints: &[u64], delta: f64) -> Result<Vec<Bracket>, Error> {
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
    budget(WORK);
    let (e_max, a_max) = rdp_epsilon(&[Phase::new(sgm, tmax)?], delta);
    let eta = eta_for(delta, tmax as f64, e_max, a_max);
    coarsening(
        initial_spacing(e_max, a_max, tmax as f64, TOL),
        COARSEN,
        |d| checkpoints_at(sgm, checkpoints, delta, d, eta, tmax),
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
    for &t in checkpoints {
        if let Some((_, b)) = known.filter(|(k, _)| *k == t) {
            solved.push(b);
            continue;
        }
        match epsilon_phases_at(&[Phase::new(sgm, t)?], delta, tol) {
            Ok(a) => solved.push(a.epsilon),
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
fn monotone(steps: &[u64], b: &[Bracket]) -> Result<Vec<Bracket>, Error> {
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
fn checkpoints_at(
    sgm: Sgm,
    checkpoints: &[u64],
    delta: f64,
    d: f64,
    eta: f64,
    tmax: u64,
) -> Result<Vec<Bracket>, Error> {
    let mut out = vec![
        Bracket {
            upper: 0.0,
            lower: f64::INFINITY
        };
        checkpoints.len()
    ];
    for dir in [Direction::Remove, Direction::Add] {
        let mut lat = Lattices::build(&[Phase::new(sgm, tmax)?], dir, d, (eta, eta), None)?;
        for (slot, &t) in out.iter_mut().zip(checkpoints) {
            lat.counts[0] = t as f64;
            let (e_rdp, a) = rdp_epsilon(&[Phase::new(sgm, t)?], delta);
            let (u, l, _) = eps_direction(&lat, delta, e_rdp * 0.93, a, TOL)?;
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

/// The privacy profile that attack bounds are read from, independent of any displayed
/// range: 201 points on [0, 1.2·ε_RDP(δ = 1e-12)] (exact RDP's ε is an upper bound on the
/// tight one and costs ~1 ms instead of a PLD solve; capped at 10³).
pub fn attack_profile(sgm: Sgm, steps: u64) -> Result<Vec<ProfilePoint>, Error> {
    let top = attack_top(sgm, steps);
    let grid: Vec<f64> = (0..=200).map(|i| top * i as f64 / 200.0).collect();
    profile(sgm, steps, &grid)
}

/// The top of the attack profiles' ε range: 1.2·ε_RDP(δ = 1e-12), at most 1.2·10³.
pub(crate) fn attack_top(sgm: Sgm, steps: u64) -> f64 {
    1.2 * Run::with_default_orders(sgm, steps)
        .and_then(|r| r.epsilon(1e-12, Conversion::Improved))
        .map(|o| o.value)
        .ok()
        .filter(|e| e.is_finite() && *e > 0.0)
        .unwrap_or(20.0)
        .min(1e3)
}

/// The membership-inference bound from a privacy profile: an attacker whose
/// false-positive rate is `fpr` has true-positive rate at most
/// min over ε of min(1, e^ε·fpr + δ(ε), 1 − e^{−ε}(1 − δ(ε) − fpr))
/// (Kairouz, Oh, Viswanath, ICML 2015, Thm 2.1; Dong, Roth, Su, "Gaussian Differential
/// Privacy", JRSS-B 2022, Prop. 2.5), using the certified upper δ at each ε.
pub fn attack_tpr(profile: &[ProfilePoint], fpr: f64) -> Result<f64, Error> {
    if !(fpr.is_finite() && (0.0..=1.0).contains(&fpr)) {
        return Err(Error::Rate(fpr));
    }
    let mut best: f64 = 1.0;
    for p in profile {
        let (e, d) = (p.epsilon, p.delta.upper);
        let a = e.exp() * fpr + d;
        let b = 1.0 - (-e).exp() * (1.0 - d - fpr);
        best = best.min(a).min(b);
    }
    Ok(best.clamp(fpr, 1.0))
}

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
    let orders = super::default_orders();
    let at = |s: f64| epsilon(Sgm::new(q, s)?, steps, delta);
    let (sigma_min, sigma_max) = (super::calibrate::SIGMA_MIN, super::calibrate::SIGMA_MAX);
    let (mut hi, mut best) =
        match super::calibrate::sigma(target, delta, q, steps, &orders, Conversion::Improved) {
            Ok(rdp) => {
                let e = at(rdp.sigma)?;
                if rdp.at_lower_limit {
                    return Ok((rdp.sigma, e));
                }
                (rdp.sigma, e)
            }
            Err(Error::SigmaUnreachable { .. }) => {
                // Gallop up ×4 from σ = 1 on the tight ε.
                let mut s = 1.0f64;
                loop {
                    let e = at(s)?;
                    if e.epsilon.upper <= target {
                        break (s, e);
                    }
                    if s >= sigma_max {
                        return Err(Error::SigmaUnreachable {
                            target,
                            epsilon: e.epsilon.upper,
                        });
                    }
                    s = (s * 4.0).min(sigma_max);
                }
            }
            Err(other) => return Err(other),
        };
    let mut lo = hi * 0.8;
    loop {
        if lo < sigma_min {
            lo = sigma_min;
            let e = at(lo)?;
            if e.epsilon.upper <= target {
                return Ok((lo, e));
            }
            break;
        }
        let e = at(lo)?;
        if e.epsilon.upper > target {
            break;
        }
        hi = lo;
        best = e;
        lo *= 0.8;
    }
    while hi / lo - 1.0 > 1e-4 {
        let mid = (lo * hi).sqrt();
        let e = at(mid)?;
        if e.epsilon.upper <= target {
            hi = mid;
            best = e;
        } else {
            lo = mid;
        }
    }
    Ok((hi, best))
}

/// Largest T whose certified upper ε at δ is ≤ `target`, decided on the tight ε alone:
/// the exact-RDP answer (when there is one) is a T that is known to fit; otherwise the
/// search starts at one step, and a refusal names the tight one-step ε.
#[cfg(full_engine)]
pub fn calibrate_steps(target: f64, delta: f64, sgm: Sgm) -> Result<(u64, EpsilonAnswer), Error> {
    let target = check_epsilon(target)?;
    let delta = check_delta(delta)?;
    let orders = super::default_orders();
    // Exact RDP's answer is feasible for the tight accountant too: the search starts there.
    let start = match super::calibrate::steps(target, delta, sgm, &orders, Conversion::Improved) {
        Ok(rdp) => rdp.steps,
        Err(Error::StepsUnreachable { .. }) => 1,
        Err(other) => return Err(other),
    };
    // Every answer computed is kept: the search's last meeting T is returned with its own.
    let mut seen: Vec<(u64, EpsilonAnswer)> = Vec::new();
    let mut at = |t: u64| -> Result<EpsilonAnswer, Error> {
        if let Some((_, a)) = seen.iter().find(|(u, _)| *u == t) {
            return Ok(*a);
        }
        let a = epsilon(sgm, t, delta)?;
        seen.push((t, a));
        Ok(a)
    };
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
}

/// In the wasm (no room for `engine::search`, ~1 KB): doubling from exact RDP's answer,
/// then bisection to one step.
#[cfg(not(full_engine))]
pub fn calibrate_steps(target: f64, delta: f64, sgm: Sgm) -> Result<(u64, EpsilonAnswer), Error> {
    let target = check_epsilon(target)?;
    let delta = check_delta(delta)?;
    let orders = super::default_orders();
    let at = |t: u64| epsilon(sgm, t, delta);
    let mut lo = match super::calibrate::steps(target, delta, sgm, &orders, Conversion::Improved) {
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
        if lo == super::MAX_STEPS {
            return Ok((lo, best));
        }
        hi = hi.saturating_mul(2).min(super::MAX_STEPS);
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
/// one step ([`super::search::most_steps`]; `first` is the bound at T = 1 when the start
/// is 1).
#[cfg(full_engine)]
fn most_steps_from(
    target: f64,
    start: u64,
    first: f64,
    at: &mut impl FnMut(u64) -> Result<EpsilonAnswer, Error>,
) -> Result<u64, Error> {
    let ratio = (target / first.max(1e-300)).powi(2).clamp(1.0, 64.0);
    let guess = if start == 1 {
        1
    } else {
        (start as f64 * ratio).min(super::MAX_STEPS as f64) as u64
    };
    let unreachable = |e| Error::StepsUnreachable { target, epsilon: e };
    super::search::most_steps(target, guess, first, unreachable, |t| {
        at(t).map(|a| a.epsilon.upper)
    })
    .map(|(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::{monotone, Bracket, Error};

    /// Far beyond the domain (exact RDP's ε above 10⁷) the refusal comes before any lattice
    /// is built: the call's work budget, set to a mark here, is never reset by a lattice try
    /// (which starts by giving itself the whole budget). Just inside that limit the lattices
    /// still run (and may answer: q = 0.05, σ = 1.5, T = 10⁹ reads ε ≈ 6.8·10⁵).
    #[test]
    fn a_run_far_beyond_the_domain_is_refused_before_any_lattice() {
        use super::{compose, epsilon, profile, BEYOND_DOMAIN};
        use crate::engine::Sgm;
        let far = Sgm::new(0.5, 0.3).unwrap();
        let beyond = |r: Result<(), Error>| matches!(r, Err(Error::PldBudget { reason }) if reason == BEYOND_DOMAIN);
        compose::budget(123.0);
        assert!(beyond(epsilon(far, 1_000_000_000, 1e-5).map(|_| ())));
        assert_eq!(compose::work_left(), 123.0);
        assert!(beyond(
            profile(far, 1_000_000_000, &[0.0, 10.0]).map(|_| ())
        ));
        assert_eq!(compose::work_left(), 123.0);
        // At q = 1 (the Gaussian mechanism, in closed form) the run answers at any length.
        assert!(epsilon(Sgm::new(1.0, 0.3).unwrap(), 1_000_000_000, 1e-5).is_ok());
        // Inside the limit (exact RDP ε = 2.9·10⁶ at T = 10⁶) the lattices are tried.
        compose::budget(123.0);
        let _ = epsilon(far, 1_000_000, 1e-5);
        assert_ne!(compose::work_left(), 123.0);
    }

    /// ε grows with the steps: each checkpoint's bracket is tightened by the others', and
    /// brackets that then cross refuse.
    #[test]
    fn checkpoints_tighten_each_other_and_refuse_when_they_cross() {
        let b = |upper, lower| Bracket { upper, lower };
        let out = monotone(&[10, 20, 30], &[b(3.0, 0.5), b(1.0, 0.2), b(2.0, 0.9)]).unwrap();
        assert_eq!(out, vec![b(1.0, 0.5), b(1.0, 0.5), b(2.0, 0.9)]);
        // Unsorted checkpoints are compared by their steps, not their order.
        let out = monotone(&[30, 10], &[b(2.0, 0.9), b(3.0, 0.5)]).unwrap();
        assert_eq!(out, vec![b(2.0, 0.9), b(2.0, 0.5)]);
        assert!(matches!(
            monotone(&[10, 20], &[b(1.0, 0.5), b(0.4, 0.1)]),
            Err(Error::PldBudget { .. })
        ));
    }

    /// The reversed reading of the remove lattices ([`super::eps_reversed`]) against two
    /// references that share none of its code path:
    /// * one step: the add pair's exact profile from Gaussian tails, δ_add(ε) =
    ///   Q(−L > ε) − e^ε·P(−L > ε) with x ∼ N(0, σ²) under Q — the reversed upper ε must have
    ///   δ_add ≤ δ there, and be within 1e-3 of the exact ε(δ) (bisection on the closed form);
    /// * T steps: the add pair's own lattices composed on the one-FFT path — the reversed
    ///   upper end must be at least their lower end and within 0.1 % of their upper end.
    #[cfg(full_engine)]
    #[test]
    fn the_reversed_reading_agrees_with_the_add_pair() {
        use super::{eps_direction, eps_reversed, Direction, Lattices, Phase};
        use crate::engine::Sgm;
        let phi_bar = |z: f64| 0.5 * libm::erfc(z / std::f64::consts::SQRT_2);
        let exact_add = |q: f64, s: f64, e: f64| {
            // −L(x) > ε ⇔ L(x) < −ε ⇔ x < x_a (L increasing in x).
            let xa = 0.5 + s * s * (((-e).exp() - (1.0 - q)) / q).ln();
            let qm = 1.0 - phi_bar(xa / s);
            let pm = (1.0 - q) * qm + q * (1.0 - phi_bar((xa - 1.0) / s));
            qm - e.exp() * pm
        };
        for (q, s, t, delta) in [
            (0.01, 1.0, 1u64, 1e-3),
            (0.2, 0.8, 1, 1e-5),
            (0.01, 1.0, 1000, 1e-5),
            (1e-3, 0.8, 10_000, 1e-6),
        ] {
            super::budget(super::WORK);
            let ph = [Phase::new(Sgm::new(q, s).unwrap(), t).unwrap()];
            let d = 2e-4;
            let eta = 1e-16;
            let rem = Lattices::build(&ph, Direction::Remove, d, (eta, eta), None).unwrap();
            let (u, _) = eps_reversed(&rem, delta, (0.5, 0.0), f64::INFINITY).unwrap();
            if t == 1 {
                assert!(
                    exact_add(q, s, u) <= delta * (1.0 + 1e-9),
                    "{q} {s}: δ({u}) > {delta}"
                );
                let (mut a, mut b) = (0.0, -(-q).ln_1p());
                for _ in 0..200 {
                    let m = 0.5 * (a + b);
                    if exact_add(q, s, m) > delta {
                        a = m;
                    } else {
                        b = m;
                    }
                }
                assert!(
                    u - b <= 1e-3 * b + 1e-9,
                    "{q} {s}: reversed {u} vs exact {b}"
                );
            } else {
                let add = Lattices::build(&ph, Direction::Add, d, (eta, eta), None).unwrap();
                let (au, al, _) = eps_direction(&add, delta, u, 2.0, super::TOL).unwrap();
                assert!(
                    u >= al && u <= au * (1.0 + 1e-3),
                    "{q} {s} {t}: {u} vs [{al}, {au}]"
                );
            }
        }
    }

    /// The defaults every front end shares: 101 points of [0, 10]; a top outside (0, 10⁴]
    /// is handed back for the caller's refusal.
    #[test]
    fn the_profile_grid_every_front_end_uses() {
        let g = super::profile_grid(None).unwrap();
        assert_eq!((g.len(), g[0], g[100], g[1]), (101, 0.0, 10.0, 0.1));
        assert_eq!(super::profile_grid(Some(1e4)).unwrap()[100], 1e4);
        for bad in [0.0, -1.0, 1e4 * 1.0001, f64::NAN, f64::INFINITY] {
            assert!(super::profile_grid(Some(bad)).is_err(), "{bad}");
        }
        assert!(super::DEFAULT_FPRS.windows(2).all(|w| w[0] < w[1]));
    }
}
