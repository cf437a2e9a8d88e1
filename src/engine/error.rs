//! The engine's one error type. Every public engine function returns
//! `Result<_, Error>`; nothing in the engine panics on user input.

use std::fmt;

/// Why a computation was refused. `Display` gives one line naming the bad value,
/// which the CLI prints and the page shows next to the field.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A value was NaN or ±∞ (`name` is the parameter's user-facing name).
    NotFinite { name: &'static str, value: f64 },
    /// Sampling rate q outside [0, 1].
    SampleRate(f64),
    /// Noise multiplier σ ≤ 0.
    NoiseMultiplier(f64),
    /// Rényi order α ≤ 1 (or above the supported maximum).
    Order(f64),
    /// δ outside (0, 1).
    Delta(f64),
    /// ε target ≤ 0.
    Epsilon(f64),
    /// Number of steps T = 0 or above the supported maximum.
    Steps(u64),
    /// An empty list of orders.
    NoOrders,
    /// A per-step RDP curve whose length is not the run's number of orders.
    CurveLength { expected: usize, got: usize },
    /// An empty list of phases (heterogeneous composition).
    NoPhases,
    /// A list of ε values or checkpoints that is empty or longer than allowed.
    ProfileLength(usize),
    /// A false-positive rate outside [0, 1].
    Rate(f64),
    /// The PLD accountant's grid budget cannot deliver the accuracy here (the RDP
    /// answer still applies).
    PldBudget { reason: Refusal },
    /// Steps given as a number that is not a whole number in [1, MAX_STEPS].
    StepsValue(f64),
    /// Dataset size N not a whole number ≥ 1.
    DatasetSize(f64),
    /// Batch size B not a whole number in [1, N].
    BatchSize { batch: f64, dataset: f64 },
    /// Epochs E ≤ 0.
    Epochs(f64),
    /// BandMF from users' terms: b·B > N, a partition of N/b examples is smaller than a batch.
    BandedBatch {
        bands: u64,
        batch: f64,
        dataset: f64,
    },
    /// A conversion name other than "improved" or "classic".
    ConversionName(String),
    /// σ calibration: not even σ = MAX_SIGMA reaches the target; `epsilon` is its ε.
    SigmaUnreachable { target: f64, epsilon: f64 },
    /// Steps calibration: even one step exceeds the target; `epsilon` is its ε.
    StepsUnreachable { target: f64, epsilon: f64 },
    /// A group size (examples per user) outside [1, 256].
    #[cfg(full_engine)]
    GroupSize(u32),
    /// An attack-risk target (TPR or advantage) outside (0, 1).
    #[cfg(full_engine)]
    RiskTarget(f64),
    /// Risk calibration: no σ ≤ MAX_SIGMA (or not even one step) meets the target;
    /// `bound` is the certified risk there.
    #[cfg(full_engine)]
    RiskUnreachable { target: f64, bound: f64 },
    /// Steps per epoch t outside [1, MAX_STEPS] (shuffled batches).
    #[cfg(full_engine)]
    StepsPerEpoch(u64),
    /// A sampling scheme's option that does not fit the others (one line, for the user).
    #[cfg(full_engine)]
    Sampling(String),
    /// An audit's input that cannot be used (one line, for the user).
    #[cfg(full_engine)]
    Audit(String),
    /// A correlated-noise strategy or participation that cannot be used (one line).
    #[cfg(full_engine)]
    Strategy(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotFinite { name, value } => {
                write!(f, "{name} must be a finite number, got {}", show(*value))
            }
            Error::SampleRate(q) => write!(f, "sample_rate q must be in [0, 1], got {}", show(*q)),
            Error::NoiseMultiplier(s) if *s > 0.0 => write!(
                f,
                "noise_multiplier sigma must be in [{}, {:e}], got {}",
                crate::engine::MIN_SIGMA,
                crate::engine::MAX_SIGMA,
                show(*s)
            ),
            Error::NoiseMultiplier(s) => {
                write!(f, "noise_multiplier sigma must be > 0, got {}", show(*s))
            }
            Error::Order(a) => write!(
                f,
                "order alpha must be in (1, {}], got {}",
                crate::engine::MAX_ORDER,
                show(*a)
            ),
            Error::Delta(d) => write!(f, "delta must be in (0, 1), got {}", show(*d)),
            Error::Epsilon(e) => write!(f, "epsilon must be > 0, got {}", show(*e)),
            Error::Steps(t) => write!(
                f,
                "steps must be an integer in [1, {}], got {t}",
                crate::engine::MAX_STEPS
            ),
            Error::NoOrders => write!(f, "orders must hold at least one order alpha > 1"),
            Error::CurveLength { expected, got } => write!(
                f,
                "the per-step RDP curve must have one value per order ({expected}), got {got}"
            ),
            Error::NoPhases => write!(f, "phases must hold at least one (q, sigma, steps)"),
            Error::ProfileLength(n) => write!(
                f,
                "the list of epsilon values or checkpoints must hold 1 to 10000 (1000 checkpoints) entries, got {n}"
            ),
            Error::Rate(r) => write!(f, "false-positive rate must be in [0, 1], got {}", show(*r)),
            Error::PldBudget { reason } => write!(
                f,
                "PLD accountant: {}; the exact-RDP epsilon still applies",
                reason.text()
            ),
            Error::StepsValue(t) => write!(
                f,
                "steps must be a whole number in [1, {}], got {}",
                crate::engine::MAX_STEPS,
                show(*t)
            ),
            Error::DatasetSize(n) => write!(
                f,
                "dataset size must be a whole number ≥ 1, got {}",
                show(*n)
            ),
            Error::BatchSize { batch, dataset } => write!(
                f,
                "batch size must be a whole number in [1, dataset size {dataset}], got {}",
                show(*batch)
            ),
            Error::Epochs(e) => write!(f, "epochs must be > 0, got {}", show(*e)),
            Error::BandedBatch {
                bands,
                batch,
                dataset,
            } => write!(
                f,
                "with {bands} bands each step samples one of {bands} partitions of dataset_size/{bands} examples at rate bands*batch_size/dataset_size, which must be <= 1 (got {bands}*{}/{})",
                show(*batch),
                show(*dataset)
            ),
            Error::ConversionName(c) => write!(
                f,
                "conversion must be 'improved' or 'classic', got '{}'",
                c.chars().take(32).collect::<String>()
            ),
            Error::SigmaUnreachable { target, epsilon } => write!(
                f,
                "no noise_multiplier sigma <= {:e} reaches epsilon <= {} (sigma = {:e} gives {epsilon:.6})",
                crate::engine::MAX_SIGMA,
                show(*target),
                crate::engine::MAX_SIGMA
            ),
            Error::StepsUnreachable { target, epsilon } => write!(
                f,
                "even one step gives epsilon = {epsilon:.6} > target {}",
                show(*target)
            ),
            #[cfg(full_engine)]
            Error::GroupSize(k) => write!(f, "group_size must be a whole number in [1, 256], got {k}"),
            #[cfg(full_engine)]
            Error::RiskTarget(t) => write!(f, "attack-risk target must be in (0, 1), got {}", show(*t)),
            #[cfg(full_engine)]
            Error::RiskUnreachable { target, bound } => write!(
                f,
                "the attack-risk target {} is not met: the certified bound is {bound:.6} at the limit of the search",
                show(*target)
            ),
            #[cfg(full_engine)]
            Error::StepsPerEpoch(t) => write!(
                f,
                "steps_per_epoch must be a whole number in [1, {}], got {t}",
                crate::engine::MAX_STEPS
            ),
            #[cfg(full_engine)]
            Error::Sampling(why) => write!(f, "{why}"),
            #[cfg(full_engine)]
            Error::Audit(why) => write!(f, "{why}"),
            #[cfg(full_engine)]
            Error::Strategy(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for Error {}

/// A number for a message: plain where that is short, scientific otherwise (Rust's
/// `Display` writes 5e-324 with 323 zeros).
pub fn show(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

pub(crate) fn finite(name: &'static str, value: f64) -> Result<f64, Error> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(Error::NotFinite { name, value })
    }
}

/// Why the tight accountant gives no bracket for a call (the exact-RDP ε still applies):
/// one variant per cause, compared by value (the code that retries or falls back reads the
/// cause, never its text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The composed loss is too wide for the largest FFT.
    TooWide,
    /// The loss range needs more lattice points than the budget.
    TooManyPoints,
    /// The call's work budget is spent.
    WorkSpent,
    /// Exact RDP's ε is above 10³, beyond the tight accountant's domain.
    BeyondDomain,
    /// Two certified brackets disagree (a numerical failure), so none is given.
    Disagree,
    /// The grid budget cannot bracket ε within 1 %.
    CannotBracket,
    /// No grid pass completed.
    NoGridPass,
    /// q below 1.1e-16: 1 − q rounds to 1.
    RateBelowRounding,
    /// No tilt brought the answer inside the FFT window.
    NoTilt,
    /// The mass beyond the loss range exceeds δ.
    MassBeyondRange,
    /// Random allocation: the log-normal's range needs too many lattice points.
    AllocationRange,
    /// Random allocation: the law of the loss has no mass on its lattice.
    AllocationNoMass,
    /// Random allocation: the sum of the log-normals is too wide for the largest FFT.
    AllocationTooWide,
}

impl Refusal {
    /// The reason as messages print it.
    pub fn text(self) -> &'static str {
        match self {
            Refusal::TooWide => "the composed loss is too wide for the largest FFT",
            Refusal::TooManyPoints => "the loss range needs more lattice points than the budget",
            Refusal::WorkSpent => "the work budget of one call (about a second) is spent",
            Refusal::BeyondDomain => {
                "exact RDP's epsilon is above 1e3, beyond the domain the tight accountant covers"
            }
            Refusal::Disagree => "two of its certified brackets disagree (a numerical failure of the composition), so none is given",
            Refusal::CannotBracket => "the grid budget cannot bracket epsilon within 1 %",
            Refusal::NoGridPass => "no grid pass completed",
            Refusal::RateBelowRounding => "q is below 1.1e-16, where 1 - q rounds to 1 and the privacy-loss lattice cannot represent the mechanism",
            Refusal::NoTilt => "no tilt brought the answer inside the FFT window",
            Refusal::MassBeyondRange => "the mass beyond the loss range exceeds delta",
            Refusal::AllocationRange => "random allocation: the log-normal's range needs more lattice points than the budget",
            Refusal::AllocationNoMass => "random allocation: the law of the loss has no mass on its lattice",
            Refusal::AllocationTooWide => "random allocation: the sum of the log-normals is too wide for the largest FFT",
        }
    }
}
