//! Validated parameter types (statrs style: `new` returns `Result`).

use super::error::{finite, Error};
use super::{MAX_ORDER, MAX_STEPS};

/// One step of the Sampled Gaussian Mechanism: sampling rate `q` (Poisson
/// sampling, `sample_rate` in Opacus) and noise multiplier `sigma`
/// (`noise_multiplier`). Sensitivity is 1 (clipping norm), add/remove adjacency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sgm {
    q: f64,
    sigma: f64,
}

impl Sgm {
    /// q ∈ [0, 1], σ ∈ [MIN_SIGMA, MAX_SIGMA] = [10⁻³, 10⁸] (below, the mechanism adds
    /// no meaningful noise and the quadrature's work grows like 1/σ; above, ε(α) < 10⁻¹⁶α
    /// underflows any use), both finite.
    ///
    /// ```
    /// use sgm_rdp::engine::{Error, Sgm};
    /// let m = Sgm::new(0.01, 1.1)?; // sample_rate, noise_multiplier
    /// assert_eq!((m.q(), m.sigma()), (0.01, 1.1));
    /// assert!(matches!(Sgm::new(1.5, 1.0), Err(Error::SampleRate(_))));
    /// assert!(Sgm::new(0.01, f64::NAN).is_err());
    /// # Ok::<(), Error>(())
    /// ```
    pub fn new(q: f64, sigma: f64) -> Result<Self, Error> {
        let q = finite("sample_rate q", q)?;
        let sigma = finite("noise_multiplier sigma", sigma)?;
        if !(0.0..=1.0).contains(&q) {
            return Err(Error::SampleRate(q));
        }
        if sigma <= 0.0 || !(super::MIN_SIGMA..=super::MAX_SIGMA).contains(&sigma) {
            return Err(Error::NoiseMultiplier(sigma));
        }
        Ok(Sgm { q, sigma })
    }
    pub fn q(&self) -> f64 {
        self.q
    }
    pub fn sigma(&self) -> f64 {
        self.sigma
    }
}

/// A validated Rényi order α ∈ (1, MAX_ORDER].
pub fn check_order(alpha: f64) -> Result<f64, Error> {
    let a = finite("order alpha", alpha)?;
    if a <= 1.0 || a > MAX_ORDER {
        return Err(Error::Order(a));
    }
    Ok(a)
}

/// δ ∈ (0, 1).
pub fn check_delta(delta: f64) -> Result<f64, Error> {
    let d = finite("delta", delta)?;
    if d <= 0.0 || d >= 1.0 {
        return Err(Error::Delta(d));
    }
    Ok(d)
}

/// ε > 0 (a target).
pub fn check_epsilon(eps: f64) -> Result<f64, Error> {
    let e = finite("epsilon", eps)?;
    if e <= 0.0 {
        return Err(Error::Epsilon(e));
    }
    Ok(e)
}

/// T ∈ [1, MAX_STEPS].
pub fn check_steps(steps: u64) -> Result<u64, Error> {
    if steps == 0 || steps > MAX_STEPS {
        return Err(Error::Steps(steps));
    }
    Ok(steps)
}

/// Steps given as a float (JSON, URL, JS): must be a finite whole number in range.
pub fn steps_from_f64(t: f64) -> Result<u64, Error> {
    let t = finite("steps", t)?;
    if t < 1.0 || t.fract() != 0.0 || t > MAX_STEPS as f64 {
        return Err(Error::StepsValue(t));
    }
    Ok(t as u64)
}

/// Users' terms → (q, T): dataset size N, batch size B, epochs E give
/// q = B/N and T = ⌈E·N/B⌉ (Opacus / TF Privacy convention).
///
/// ```
/// let (q, t) = sgm_rdp::engine::params::from_dataset(50000.0, 512.0, 30.0)?;
/// assert_eq!((q, t), (512.0 / 50000.0, 2930));
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
pub fn from_dataset(n: f64, batch: f64, epochs: f64) -> Result<(f64, u64), Error> {
    let n = finite("dataset size", n)?;
    let b = finite("batch size", batch)?;
    let e = finite("epochs", epochs)?;
    if n < 1.0 || n.fract() != 0.0 {
        return Err(Error::DatasetSize(n));
    }
    if b < 1.0 || b.fract() != 0.0 || b > n {
        return Err(Error::BatchSize {
            batch: b,
            dataset: n,
        });
    }
    if e <= 0.0 {
        return Err(Error::Epochs(e));
    }
    let q = b / n;
    let t = (e * n / b).ceil();
    Ok((q, steps_from_f64(t)?))
}

/// BandMF / DP-FTRL with `bands` = b bands, from users' terms: (q, T, ⌈T/b⌉), the rate each
/// step samples at, the training steps T = ⌈E·N/B⌉ and the steps each example can take part in.
///
/// The amplified banded analysis (Choquette-Choo, Ganesh, McKenna, McMahan, Rush, Thakurta,
/// Xu, "(Amplified) Banded Matrix Factorization: A unified approach to private training",
/// NeurIPS 2023, arXiv 2306.08153) splits the data into b partitions of N/b examples and lets
/// step i sample only partition i mod b: for the same expected batch B the rate within a
/// partition is q = b·B/N, and an example takes part in at most ⌈T/b⌉ steps, b apart. With
/// the strategy's columns normalised to norm ≤ 1 (sensitivity 1 per participation), the run
/// is accounted as DP-SGD with ⌈T/b⌉ steps at rate b·B/N. (q = B/N would under-report: MNIST,
/// 60 epochs, b = 4: ε 1.13 where 5.35 is right.)
///
/// ```
/// use sgm_rdp::engine::params::banded_from_dataset;
/// let (q, t, accounted) = banded_from_dataset(60000.0, 256.0, 60.0, 4)?;
/// assert_eq!((q, t, accounted), (4.0 * 256.0 / 60000.0, 14063, 3516));
/// assert!(banded_from_dataset(600.0, 256.0, 1.0, 4).is_err()); // 4·256 > 600
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
pub fn banded_from_dataset(
    n: f64,
    batch: f64,
    epochs: f64,
    bands: u64,
) -> Result<(f64, u64, u64), Error> {
    let (q, t) = from_dataset(n, batch, epochs)?;
    let q_band = q * bands as f64;
    if q_band > 1.0 {
        return Err(Error::BandedBatch {
            bands,
            batch,
            dataset: n,
        });
    }
    Ok((q_band, t, t.div_ceil(bands)))
}

/// Truncated Poisson's largest batch when none is given: the mean batch q·N plus four of its
/// standard deviations, rounded up (a batch that large or larger has probability < 1e-4) —
/// the one default of the page, the widget, the command line and `batch`.
///
/// ```
/// assert_eq!(sgm_rdp::engine::params::default_max_batch(0.01024, 50000.0), 603);
/// ```
pub fn default_max_batch(q: f64, n: f64) -> u64 {
    let m = q * n;
    (m + 4.0 * (m * (1.0 - q)).max(0.0).sqrt()).ceil().max(1.0) as u64
}

/// Parse a list of orders, validating each.
pub fn check_orders(orders: &[f64]) -> Result<Vec<f64>, Error> {
    if orders.is_empty() {
        return Err(Error::NoOrders);
    }
    orders.iter().map(|&a| check_order(a)).collect()
}

/// Which accountant answers — the one type every front end uses (the command line's and
/// `batch`'s `accountant`, the JS API's, the widget's `accountant` attribute, the page's
/// `acct=` link parameter, which offers `pld` and `rdp`): exact RDP, the tight PLD bracket,
/// or both side by side.
/// `Default` is the tight accountant, the page's default (the command line, `batch` and the
/// JS API take rdp when none is given, as before; the widget both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Accountant {
    /// Exact RDP of Mironov, Talwar, Zhang.
    Rdp,
    /// The tight accountant (privacy-loss distributions), a certified bracket.
    #[default]
    Pld,
    /// Both: the tight ε first, exact RDP next to it.
    Both,
}

impl Accountant {
    /// Every choice.
    pub const ALL: [Accountant; 3] = [Accountant::Rdp, Accountant::Pld, Accountant::Both];

    /// Its name in flags, keys, attributes and links.
    pub fn name(self) -> &'static str {
        match self {
            Accountant::Rdp => "rdp",
            Accountant::Pld => "pld",
            Accountant::Both => "both",
        }
    }

    /// The accountant named `s` (each front end words its own refusal).
    pub fn parse(s: &str) -> Option<Accountant> {
        Accountant::ALL.into_iter().find(|a| a.name() == s)
    }

    /// The accountant a calibration decides with: one target, one accountant — `both`
    /// has no single answer to search on (None; each front end words its refusal).
    pub fn for_calibration(self) -> Option<Accountant> {
        (self != Accountant::Both).then_some(self)
    }
}

/// The training tools' names for our parameters (Opacus, TF Privacy, dp_accounting:
/// `sample_rate` for q, `noise_multiplier` for σ), accepted by every front end beside ours:
/// the command line's flags, the JS API's keys (also in camelCase there).
pub const TOOL_NAMES: [(&str, &str); 2] = [("sample_rate", "q"), ("noise_multiplier", "sigma")];

/// Our name for `name` when it is a training tool's (see [`TOOL_NAMES`]), else `name`.
pub fn our_name(name: &str) -> &str {
    TOOL_NAMES
        .iter()
        .find(|(tool, _)| *tool == name)
        .map_or(name, |(_, ours)| ours)
}

/// Which datasets count as neighbours. σ is always the noise multiplier (noise std over
/// the clipping norm C), as in Opacus and dp_accounting's `GaussianDpEvent`; under
/// replace-one the sum of clipped gradients moves by up to 2C.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Adjacency {
    /// Add or remove one example (Opacus, TF Privacy, dp_accounting's default).
    #[default]
    AddRemove,
    /// Replace one example by another (dp_accounting's `REPLACE_ONE`).
    ReplaceOne,
}

impl Adjacency {
    /// The name used by the CLI, batch keys and the JSON answers.
    pub fn name(self) -> &'static str {
        match self {
            Adjacency::AddRemove => "add-remove",
            Adjacency::ReplaceOne => "replace-one",
        }
    }
    /// Parses `add-remove` / `replace-one` (also dp_accounting's `ADD_OR_REMOVE_ONE`,
    /// `REPLACE_ONE`, any case, `_` for `-`).
    pub fn parse(s: &str) -> Option<Adjacency> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "add-remove" | "add-or-remove-one" | "add-remove-one" => Some(Adjacency::AddRemove),
            "replace-one" | "replace" | "substitution" => Some(Adjacency::ReplaceOne),
            _ => None,
        }
    }
    /// How far one example moves the sum of clipped gradients, in units of C.
    pub fn sensitivity(self) -> f64 {
        match self {
            Adjacency::AddRemove => 1.0,
            Adjacency::ReplaceOne => 2.0,
        }
    }
}
