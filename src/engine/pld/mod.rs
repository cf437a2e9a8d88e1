//! Tight (ε, δ) of DP-SGD from its privacy-loss distribution (PLD): a certified upper
//! bound with an optimistic companion, so every answer is a bracket [lower, upper].
//!
//! # Map of the module
//! This file holds the public answer types ([`Bracket`], [`EpsilonAnswer`], …), the
//! constants of the width rule, [`epsilon`] and the method's description below. The driver
//! runs in stages, one file each:
//! * `phase` — [`Phase`]: what is composed (one SGM, a scheme's step, user level);
//! * `estimates` — the central-limit μ and exact RDP's ε/δ that place the lattices;
//! * `lattices` — stage 1: per-step lattice PLDs, their compositions at a tilt, ε read in
//!   one direction (`discretize`, `compose`, `ladder` below it);
//! * `driver` — stage 2: [`epsilon_phases`], both directions, the width rule, the routes
//!   (lattices; rare large losses in closed form, `jumps`; Bernstein) and refusals;
//! * `privacy_profile` — stage 3: [`delta_phases`], [`profile_phases`] (δ and δ(ε));
//! * `training` — [`checkpoints`]: ε over training, kept monotone;
//! * `attack` — [`attack_profile`], [`attack_tpr`];
//! * `calibration` — [`calibrate_sigma`], [`calibrate_steps`] ([`StepsSearch`]: its search a
//!   few solves at a time);
//! * `emulate` — [`dp_accounting_epsilon`], [`opacus_prv_epsilon`]: other libraries'
//!   defaults, computed by our code for the comparison rows.
//!
//! Schemes and views on top: `shuffle`, `allocation`, `truncated`, `group`, `fdp` (μ-GDP,
//! trade-off curves, attack-risk calibration).
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
//! * `compose::ALIAS` = 1e-10 (it enters the bracket explicitly, as ALIAS·e^{ln M^T − λε}: relative to δ that is ≲ 1e-4, ~1e-8 at MNIST) and `compose::MAX_FFT` = 2¹⁹ for runs of 4096 to 10⁶ steps, 2¹⁸ beyond and 2¹⁷ below (2²⁰ in the page's wasm, which has no ladder); `MAX_STEP_POINTS` = 2²¹.
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
//! (the exact add-pair profile) for one step (`tests/engine/pld_coverage.rs`).

// Random allocation (balls in bins): the law of a mean of log-normals, whole engine only.
#[cfg(full_engine)]
mod allocation;
mod bernstein;
mod compose;
mod discretize;
mod fft;
mod pool;
mod work;
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

// The driver in stages (each file says what it holds).
mod attack;
mod calibration;
mod driver;
mod emulate;
mod estimates;
mod lattices;
mod phase;
mod privacy_profile;
mod training;
pub use self::attack::*;
pub use self::calibration::*;
pub use self::driver::*;
pub use self::emulate::*;
use self::estimates::*;
use self::lattices::*;
pub use self::phase::*;
pub use self::privacy_profile::*;
pub use self::training::*;
pub use discretize::Direction;

use self::compose::{tilted_mean, Composed, Phase as CPhase, Side};
use self::discretize::{loss_range, step_pld, StepPld};
use super::accountant::{eps_from_rdp, ln_delta_from_rdp, Conversion, Run};
use super::error::Error;
use super::params::{check_delta, check_epsilon, check_steps, Adjacency, Sgm};
use serde::Serialize;

/// Target bracket width relative to ε (see the error budget).
pub const TOL: f64 = 4e-4;
/// Widest bracket returned at all (relative); beyond it, [`Error::PldBudget`].
pub const MAX_WIDTH: f64 = 0.01;
/// Widest bracket returned for random allocation (relative), where its lattices cannot
/// reach [`MAX_WIDTH`] (`driver::width_limit`); the answer says it is wider than 1 %.
pub const ALLOCATION_MAX_WIDTH: f64 = 0.05;
/// For small ε the width rule is absolute: a bracket no wider than this is accepted
/// whatever its relative width, and one no wider than `ABS_TOL` is not refined further.
pub const ABS_WIDTH: f64 = 1e-4;
const ABS_TOL: f64 = 2e-5;
use crate::engine::error::Refusal;
const TOO_WIDE: Refusal = Refusal::TooWide;
const TOO_MANY_POINTS: Refusal = Refusal::TooManyPoints;
const WORK_SPENT: Refusal = Refusal::WorkSpent;
/// A refusal where exact RDP's ε is above 10³: the domain the tight accountant is built to
/// answer everywhere (q ∈ [1e-9, 1], σ ∈ [0.3, 10³], T ∈ [1, 10⁹], δ ∈ [1e-15, 0.1]) ends there.
const BEYOND_DOMAIN: Refusal = Refusal::BeyondDomain;
const DISAGREE: Refusal = Refusal::Disagree;

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
/// a power of two times Δ, at most the `tail_d` of [`Lattices::build`]; the page's wasm has one
/// resolution and never splits).
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
            reason: Refusal::RateBelowRounding,
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

/// [`epsilon`] aiming for a bracket of relative width `tol` instead of the default goal
/// ([`TOL`], 0.04 % of ε): `tol` is taken within [1e-7, MAX_WIDTH / 2]. A narrower goal costs
/// passes on finer lattices; where the call's work runs out first, the narrowest bracket
/// reached is the answer (or the refusal [`epsilon`] would give). Reference values for the
/// default bracket: `cargo run --release --example width_sides` reads where its two ends sit
/// around a bracket 100× narrower.
///
/// ```
/// use sgm_rdp::engine::{pld, Sgm};
/// let fine = pld::epsilon_to(Sgm::new(1.0, 10.0)?, 100, 1e-5, 1e-6)?.epsilon; // μ = 1
/// let truth = 4.377178095681224; // as in [`epsilon`]'s example
/// assert!(fine.lower <= truth && truth <= fine.upper && fine.upper - fine.lower < 1e-5);
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
pub fn epsilon_to(sgm: Sgm, steps: u64, delta: f64, tol: f64) -> Result<EpsilonAnswer, Error> {
    let tol = if tol.is_nan() {
        TOL
    } else {
        tol.clamp(1e-7, MAX_WIDTH / 2.0)
    };
    let w = compose::Work::new(WORK);
    driver::epsilon_phases_at(&[Phase::new(sgm, steps)?], delta, tol, &w)
}

/// The (ε, δ) of the Gaussian mechanism with sensitivity / σ = `mu` (μ-GDP), as a certified
/// bracket at `delta`: e.g. training in a fixed order, each example once per epoch for E
/// epochs, is exactly μ = √E/σ.
pub fn gaussian_epsilon(mu: f64, delta: f64) -> Result<Bracket, crate::engine::Error> {
    if !(mu.is_finite() && mu > 0.0) {
        return Err(crate::engine::Error::NoiseMultiplier(mu));
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(crate::engine::Error::Delta(delta));
    }
    Ok(gauss::epsilon_bracket(mu, delta))
}

#[cfg(test)]
mod tests {
    use super::{monotone, Bracket, Error};
    #[cfg_attr(not(full_engine), allow(unused_imports))]
    use crate::engine::math::{exp, ln, ln_1p};

    /// Far beyond the domain (exact RDP's ε above 10⁷) the refusal comes before any lattice
    /// is built: the call's work budget, set to a mark here, is never reset by a lattice try
    /// (which starts by giving itself the whole budget). Just inside that limit the lattices
    /// still run (and may answer: q = 0.05, σ = 1.5, T = 10⁹ reads ε ≈ 6.8·10⁵).
    #[test]
    fn a_run_far_beyond_the_domain_is_refused_before_any_lattice() {
        use super::compose::Work;
        use super::{epsilon, epsilon_phases_with, profile_phases_with, Phase, BEYOND_DOMAIN};
        use crate::engine::Sgm;
        let far = Sgm::new(0.5, 0.3).unwrap();
        let beyond = |r: Result<(), Error>| matches!(r, Err(Error::PldBudget { reason }) if reason == BEYOND_DOMAIN);
        let ph = |sgm, t| [Phase::new(sgm, t).unwrap()];
        let w = Work::new(123.0);
        assert!(beyond(
            epsilon_phases_with(&ph(far, 1_000_000_000), 1e-5, &w).map(|_| ())
        ));
        assert_eq!(w.left(), 123.0);
        assert!(beyond(
            profile_phases_with(&ph(far, 1_000_000_000), &[0.0, 10.0], &w).map(|_| ())
        ));
        assert_eq!(w.left(), 123.0);
        // At q = 1 (the Gaussian mechanism, in closed form) the run answers at any length.
        assert!(epsilon(Sgm::new(1.0, 0.3).unwrap(), 1_000_000_000, 1e-5).is_ok());
        // Inside the limit (exact RDP ε = 2.9·10⁶ at T = 10⁶) the lattices are tried.
        let w = Work::new(123.0);
        let _ = epsilon_phases_with(&ph(far, 1_000_000), 1e-5, &w);
        assert_ne!(w.left(), 123.0);
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
            let xa = 0.5 + s * s * ln((exp(-e) - (1.0 - q)) / q);
            let qm = 1.0 - phi_bar(xa / s);
            let pm = (1.0 - q) * qm + q * (1.0 - phi_bar((xa - 1.0) / s));
            qm - exp(e) * pm
        };
        for (q, s, t, delta) in [
            (0.01, 1.0, 1u64, 1e-3),
            (0.2, 0.8, 1, 1e-5),
            (0.01, 1.0, 1000, 1e-5),
            (1e-3, 0.8, 10_000, 1e-6),
        ] {
            let w = &super::compose::Work::new(super::WORK);
            let ph = [Phase::new(Sgm::new(q, s).unwrap(), t).unwrap()];
            let d = 2e-4;
            let eta = 1e-16;
            let rem = Lattices::build(&ph, Direction::Remove, d, (eta, eta), None, w).unwrap();
            let (u, _) = eps_reversed(&rem, delta, (0.5, 0.0), f64::INFINITY, w).unwrap();
            if t == 1 {
                assert!(
                    exact_add(q, s, u) <= delta * (1.0 + 1e-9),
                    "{q} {s}: δ({u}) > {delta}"
                );
                let (mut a, mut b) = (0.0, -ln_1p(-q));
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
                let add = Lattices::build(&ph, Direction::Add, d, (eta, eta), None, w).unwrap();
                let (au, al, _) = eps_direction(&add, delta, u, 2.0, super::TOL, w).unwrap();
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
