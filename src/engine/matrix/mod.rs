//! Correlated noise: DP-FTRL and matrix factorization (BandMF, BLT, tree aggregation),
//! accounted exactly under b-min-separated participation where the columns are disjoint, and
//! by certified upper bounds elsewhere (docs/correlated-noise.md).
//!
//! **The mechanism.** Training releases `C·G + Z` (one row per step): G's row j is step j's sum
//! of clipped gradients, C a lower-triangular T × T strategy matrix, Z i.i.d. Gaussian noise.
//! σ is the noise multiplier relative to the clipping norm *and the strategy's largest column
//! norm*: C is scaled so that max_j ‖C e_j‖ = 1 (one participation moves the release by at
//! most the clipping norm), and each row's noise has standard deviation σ.
//!
//! **Participation** (cyclic Poisson, b-min-separated): the data are split into `k` partitions
//! (N/k examples each); step j samples partition j mod k, each of its examples independently
//! with probability `q` (from dataset terms, q = k·B/N: the mean batch stays B). An example
//! thus takes part only in the steps j ≡ r (mod k) of its partition r.
//!
//! **The reduction** (Choquette-Choo, McMahan, Rush, Thakurta, "(Amplified) Banded Matrix
//! Factorization: A unified approach to private training", NeurIPS 2023, arXiv 2306.08153):
//! when C has at most `k` bands (C(i, j) = 0 for i − j ≥ k), the columns an example's
//! participations touch have disjoint row sets, so its contribution at step j is seen on rows
//! j … j + k − 1 only, through independent noise: a Gaussian shift of norm ‖C e_j‖ (≤ 1),
//! present with probability q. The release is the adaptive composition, over the example's
//! steps, of Sampled Gaussian Mechanisms with noise multipliers σ / ‖C e_j‖ — exactly, for
//! aligned worst-case gradients. Its ε is the worst partition's: the tight accountant's
//! certified bracket of that composition is a certified bracket of the mechanism's ε.
//!
//! **Which partition.** A step's ε grows with its sensitivity ‖C e_j‖, so a partition whose
//! sorted sensitivities dominate another's (as many or more steps, each at least as large) has
//! at least its ε. For a banded Toeplitz C (column norms depend only on how many rows remain
//! below the diagonal, nondecreasing in it) partition 0 dominates every other; for an explicit
//! matrix every partition not so dominated is composed, and the largest bracket ends are taken.
//!
//! **Poisson sampling at every step, or balls-in-bins** ([`Split`]): an upper bound only, by
//! splitting the noise. With b bands, write Z = Z_0 + … + Z_{b−1}, independent, each of
//! variance σ²/b, and release Y_r = C_r X + Z_r for each residue class r of the steps (C_r:
//! C's columns j ≡ r mod b) instead of their sum: the sum is a post-processing of them, so it
//! is at least as private. Within a class the columns have disjoint row sets, so each step j
//! becomes its own Gaussian block with shift ‖C e_j‖ and noise σ/√b; releasing each block
//! whole when its gradient is computed only gives more, earlier, and the gradients' adaptivity
//! is covered by adaptive composition. So the run is bounded by DP-SGD over all T steps at
//! noise multipliers σ/(√b·‖C e_j‖) under Poisson sampling, and by random allocation over
//! each epoch at σ/√b under balls-in-bins. Exact for b = 1; about √b looser in σ than the
//! amplification analyses that condition on the past (Choquette-Choo, Ganesh, Steinke,
//! Thakurta, "Privacy Amplification for Matrix Mechanisms", ICLR 2024, arXiv 2310.15526), which
//! are not implemented here.
//!
//! **The operator-norm bound** (any strategy, any participation): with λ ≥ ‖C‖₂ (C normalised,
//! [`Strategy::op_norm_bound`]) the release is a causal post-processing of the identity
//! strategy's at noise σ/λ — Y = (C/λ)·Y' plus Gaussian noise of covariance σ²(I − CCᵀ/λ²) —
//! so the run is at least as private as DP-SGD with the same participation at σ/λ. [`Split`]
//! takes it where λ² is below the bands and for strategies that are not banded.
//!
//! **Overlapping columns** (BLT, the tree, fewer partitions than bands): [`Whole`], one
//! Gaussian mechanism without amplification. **Monte Carlo** ([`mc`]): an estimate, never a
//! bound, for the two balls-in-bins participations.

use super::pld::{self, Bracket, Phase, ProfilePoint};
use super::{Error, Sgm, MAX_SIGMA, MAX_STEPS};
use crate::engine::math::{log2, powf};
use serde::Serialize;

pub mod common;
pub mod mc;
mod whole;
pub use common::CommonMode;
pub use whole::Whole;

/// The largest explicit strategy matrix (rows = steps).
pub const MAX_MATRIX: usize = 4096;
/// The most bands of a banded strategy (BandMF uses tens to thousands).
pub const MAX_BANDS: usize = 1 << 20;
/// The most buffers of a BLT strategy (BLTs in use have 1 to 10).
pub const MAX_BUFFERS: usize = 64;
/// The most steps of a strategy that is not banded (its sensitivity takes O(T) work).
pub const MAX_UNBANDED_STEPS: u64 = 1 << 24;

/// At most this many distinct sensitivities are composed as they are; beyond it they are
/// rounded onto a grid of 1/256 octave (up for the upper end, down for the lower end: each
/// rounding gives a certified bound, ε being monotone in each step's sensitivity).
const EXACT_DISTINCT: usize = 8;

/// A strategy matrix C, by family.
#[derive(Debug, Clone, PartialEq)]
pub enum Strategy {
    /// Banded Toeplitz (BandMF): C(i, j) = c(i − j) for 0 ≤ i − j < b = c.len(), else 0.
    Toeplitz(Vec<f64>),
    /// An explicit lower-triangular T × T matrix, row by row (entries above the diagonal must
    /// be 0; a row may stop after its diagonal entry).
    Matrix(Vec<Vec<f64>>),
    /// Buffered linear Toeplitz (BLT: Dvijotham, McMahan, Pillutla, Steinke, Thakurta,
    /// "Efficient and Near-Optimal Noise Generation for Streaming Differential Privacy",
    /// arXiv 2404.16706): C(i, j) = c(i − j), c(0) = 1, c(m) = Σ_l scale_l · decay_l^(m−1)
    /// for m ≥ 1 — not banded (every column reaches the last row).
    Blt { decay: Vec<f64>, scale: Vec<f64> },
    /// Binary-tree aggregation (Dwork, Naor, Pitassi, Rothblum 2010; Chan, Shi, Song 2011;
    /// Kairouz et al., "Practical and Private (Deep) Learning without Sampling or Shuffling",
    /// ICML 2021, arXiv 2103.00039): one released row per complete dyadic block of steps
    /// [a·2^l, (a + 1)·2^l) ⊆ [0, T), holding its sum — not square, not banded.
    Tree,
}

fn bad(why: String) -> Error {
    Error::Strategy(why)
}

impl Strategy {
    /// BandMF with `b` bands: coefficients `c` (c.len() = b), or all equal (b ones) when None.
    ///
    /// ```
    /// use sgm_rdp::engine::matrix::Strategy;
    /// assert_eq!(Strategy::band(2, None)?.bands(), 2);
    /// assert!(Strategy::band(2, Some(&[1.0])).is_err()); // 1 coefficient for 2 bands
    /// # Ok::<(), sgm_rdp::engine::Error>(())
    /// ```
    pub fn band(b: usize, c: Option<&[f64]>) -> Result<Strategy, Error> {
        if b == 0 || b > MAX_BANDS {
            return Err(bad(format!(
                "a banded strategy needs a whole number of bands in [1, {MAX_BANDS}], got {b}"
            )));
        }
        let c = match c {
            None => vec![1.0; b],
            Some(c) if c.len() == b => c.to_vec(),
            Some(c) => {
                return Err(bad(format!(
                    "a {b}-band strategy takes {b} coefficients, got {}",
                    c.len()
                )))
            }
        };
        if let Some(x) = c.iter().find(|x| !x.is_finite()) {
            return Err(bad(format!(
                "the strategy's coefficients must be finite, got {x}"
            )));
        }
        if c[0] == 0.0 {
            return Err(bad(
                "the strategy's first coefficient (its diagonal) must not be 0: C would not be invertible"
                    .into(),
            ));
        }
        Ok(Strategy::Toeplitz(c))
    }

    /// An explicit lower-triangular matrix (rows of at most T entries; missing entries are 0).
    pub fn matrix(rows: Vec<Vec<f64>>) -> Result<Strategy, Error> {
        let t = rows.len();
        if t == 0 || t > MAX_MATRIX {
            return Err(bad(format!(
                "an explicit strategy matrix needs 1 to {MAX_MATRIX} rows (one per step), got {t}"
            )));
        }
        for (i, r) in rows.iter().enumerate() {
            if r.len() > t {
                return Err(bad(format!(
                    "row {} of the strategy matrix has {} entries, more than its {t} rows",
                    i + 1,
                    r.len()
                )));
            }
            if let Some(x) = r.iter().find(|x| !x.is_finite()) {
                return Err(bad(format!(
                    "row {} of the strategy matrix holds {x}: entries must be finite",
                    i + 1
                )));
            }
            if let Some(j) = r.iter().skip(i + 1).position(|&x| x != 0.0) {
                return Err(bad(format!(
                    "the strategy matrix must be lower-triangular: row {}, column {} is not 0",
                    i + 1,
                    i + j + 2
                )));
            }
            if r.get(i).copied().unwrap_or(0.0) == 0.0 {
                return Err(bad(format!(
                    "the strategy matrix's diagonal must not hold 0 (row {}): C would not be invertible",
                    i + 1
                )));
            }
        }
        Ok(Strategy::Matrix(rows))
    }

    /// BLT with buffers (decay θ_l, output scale ω_l): θ_l in (0, 1], ω_l > 0 (the
    /// conditions jax-privacy's `BufferedToeplitz` checks; they make C's entries positive).
    ///
    /// ```
    /// use sgm_rdp::engine::matrix::Strategy;
    /// assert!(!Strategy::blt(&[(0.9, 0.3)])?.is_banded());
    /// assert!(Strategy::blt(&[(1.5, 0.3)]).is_err()); // a decay above 1 grows without bound
    /// # Ok::<(), sgm_rdp::engine::Error>(())
    /// ```
    pub fn blt(buffers: &[(f64, f64)]) -> Result<Strategy, Error> {
        if buffers.is_empty() || buffers.len() > MAX_BUFFERS {
            return Err(bad(format!(
                "a BLT strategy needs 1 to {MAX_BUFFERS} buffers (decay:scale), got {}",
                buffers.len()
            )));
        }
        for &(d, w) in buffers {
            if !(d > 0.0 && d <= 1.0) {
                return Err(bad(format!(
                    "a BLT buffer's decay must lie in (0, 1], got {d}"
                )));
            }
            if !(w > 0.0 && w.is_finite()) {
                return Err(bad(format!(
                    "a BLT buffer's output scale must be finite and > 0, got {w}"
                )));
            }
        }
        Ok(Strategy::Blt {
            decay: buffers.iter().map(|b| b.0).collect(),
            scale: buffers.iter().map(|b| b.1).collect(),
        })
    }

    /// A certified upper bound λ on the operator norm ‖C‖₂ of C over T steps, normalised to
    /// largest column norm 1 — Schur's test, ‖C‖₂ ≤ √(max column |sum| · max row |sum|): for
    /// a Toeplitz C (banded or BLT) both are Σ_m |c_m| (the symbol's bound); for the tree, the
    /// levels L and the largest block 2^(L−1). Rounded up by a relative 1e-9.
    ///
    /// ```
    /// use sgm_rdp::engine::matrix::Strategy;
    /// // [1, 1/2, 1/4, 1/8]: Σ c / ‖c‖ = 1.875 / 1.152443… = 1.626978…
    /// let s = Strategy::band(4, Some(&[1.0, 0.5, 0.25, 0.125]))?;
    /// assert!((s.op_norm_bound(100)? - 1.626978).abs() < 1e-6);
    /// # Ok::<(), sgm_rdp::engine::Error>(())
    /// ```
    pub fn op_norm_bound(&self, t: u64) -> Result<f64, Error> {
        let top = self.top(t)?;
        let raw = match self {
            Strategy::Toeplitz(c) => c
                .iter()
                .take(t.min(c.len() as u64) as usize)
                .map(|x| x.abs())
                .sum(),
            Strategy::Blt { decay, scale } => {
                let mut sum = 0.0;
                blt_coefficients(decay, scale, t, |c| sum += c.abs());
                sum
            }
            Strategy::Tree => {
                let levels = (63 - t.max(1).leading_zeros()) as f64 + 1.0;
                (levels * powf(2.0, levels - 1.0)).sqrt()
            }
            Strategy::Matrix(rows) => {
                let mut cols = vec![0.0f64; rows.len()];
                let mut row_max = 0.0f64;
                for r in rows {
                    row_max = row_max.max(r.iter().map(|x| x.abs()).sum());
                    for (j, x) in r.iter().enumerate() {
                        cols[j] += x.abs();
                    }
                }
                (row_max * cols.into_iter().fold(0.0, f64::max)).sqrt()
            }
        };
        Ok((raw / top * (1.0 + 1e-9)).max(1.0))
    }

    /// The number of bands of a banded strategy; None for BLT and tree aggregation.
    pub fn band_count(&self) -> Option<u64> {
        self.is_banded().then(|| self.bands() as u64)
    }

    /// Whether C is banded (BandMF or an explicit matrix); BLT and tree aggregation are not.
    pub fn is_banded(&self) -> bool {
        matches!(self, Strategy::Toeplitz(_) | Strategy::Matrix(_))
    }

    /// The number of bands: 1 + the largest i − j with C(i, j) ≠ 0 (`usize::MAX` for a
    /// strategy that is not banded).
    pub fn bands(&self) -> usize {
        match self {
            Strategy::Blt { .. } | Strategy::Tree => usize::MAX,
            Strategy::Toeplitz(c) => c.iter().rposition(|&x| x != 0.0).map_or(1, |i| i + 1),
            Strategy::Matrix(rows) => rows
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.iter().position(|&x| x != 0.0).map(|j| i - j + 1))
                .max()
                .unwrap_or(1),
        }
    }

    /// The steps the strategy fixes (an explicit matrix's rows), if any.
    pub fn steps(&self) -> Option<u64> {
        match self {
            Strategy::Toeplitz(_) | Strategy::Blt { .. } | Strategy::Tree => None,
            Strategy::Matrix(rows) => Some(rows.len() as u64),
        }
    }

    /// ‖C e_j‖ for the T columns of an explicit matrix, unnormalised.
    fn column_norms(rows: &[Vec<f64>]) -> Vec<f64> {
        let mut sq = vec![0.0; rows.len()];
        for r in rows {
            for (j, x) in r.iter().enumerate() {
                sq[j] += x * x;
            }
        }
        sq.into_iter().map(f64::sqrt).collect()
    }

    /// The largest column norm over T steps, checked finite and nonzero (C is divided by it).
    fn top(&self, t: u64) -> Result<f64, Error> {
        let top = match self {
            Strategy::Toeplitz(c) => toeplitz_norms(c)(t),
            Strategy::Matrix(rows) => Self::column_norms(rows).into_iter().fold(0.0, f64::max),
            // Column 0 reaches every row; later columns are its truncations (BLT) or lie in
            // no more complete blocks than it (the tree: ⌊log₂ T⌋ + 1).
            Strategy::Blt { decay, scale } => {
                let mut sq = 0.0;
                blt_coefficients(decay, scale, t, |c| sq += c * c);
                sq.sqrt()
            }
            Strategy::Tree => ((63 - t.max(1).leading_zeros()) as f64 + 1.0).sqrt(),
        };
        if top > 0.0 && top.is_finite() {
            Ok(top)
        } else {
            Err(bad(
                "the strategy's columns have no finite nonzero norm".into()
            ))
        }
    }
}

/// The norm g(m) of a Toeplitz column with m rows left below its diagonal, from the
/// coefficients' prefix sums of squares (m at least the bands: the whole column).
fn toeplitz_norms(c: &[f64]) -> impl Fn(u64) -> f64 {
    let mut g = vec![0.0; c.len() + 1];
    for (i, x) in c.iter().enumerate() {
        g[i + 1] = g[i] + x * x;
    }
    let b = c.len() as u64;
    move |m: u64| g[b.min(m) as usize].sqrt()
}

/// Calls `f` with a BLT's coefficients c(0), c(1), …, c(t − 1) (module docs of
/// [`Strategy::Blt`]), each power of a decay carried by one multiplication.
fn blt_coefficients(decay: &[f64], scale: &[f64], t: u64, mut f: impl FnMut(f64)) {
    let mut pow: Vec<f64> = vec![1.0; decay.len()];
    for m in 0..t {
        if m == 0 {
            f(1.0);
            continue;
        }
        f(scale.iter().zip(&pow).map(|(w, p)| w * p).sum());
        for (p, d) in pow.iter_mut().zip(decay) {
            *p *= d;
        }
    }
}

/// Sensitivities with their counts, sorted largest first, equal ones merged, zeros dropped.
fn merged(pairs: impl IntoIterator<Item = (f64, u64)>) -> Vec<(f64, u64)> {
    let mut v: Vec<(f64, u64)> = pairs
        .into_iter()
        .filter(|&(x, n)| x > 0.0 && n > 0)
        .collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out: Vec<(f64, u64)> = Vec::new();
    for (x, n) in v {
        match out.last_mut() {
            Some((y, k)) if *y == x => *k += n,
            _ => out.push((x, n)),
        }
    }
    out
}

/// Whether sensitivities take more distinct values than are composed as they are.
fn many(s: &[(f64, u64)]) -> bool {
    s.len() > EXACT_DISTINCT
}

/// No composed step's noise multiplier σ/s may exceed MAX_SIGMA.
fn check_sigma(sigma: f64, s: &[(f64, u64)]) -> Result<(), Error> {
    match s.iter().find(|&&(x, _)| sigma / x > MAX_SIGMA) {
        Some((x, _)) => Err(bad(format!(
            "a column of the strategy has norm {x:e} of the largest: its noise multiplier σ/{x:e} is above {MAX_SIGMA:e}"
        ))),
        None => Ok(()),
    }
}

/// The SGM phases at rate q for sensitivities `s`, rounded `dir` onto a grid of 1/256 octave
/// (+1 up, −1 down, 0 as they are): σ/s for each.
fn phases_of(q: f64, sigma: f64, s: &[(f64, u64)], dir: i32) -> Result<Vec<Phase>, Error> {
    let grid = |x: f64| {
        let l = 256.0 * log2(x);
        let l = match dir {
            1 => l.ceil(),
            -1 => l.floor(),
            _ => return x,
        };
        powf(2f64, l / 256.0).min(1.0)
    };
    merged(s.iter().map(|&(x, n)| (grid(x), n)))
        .into_iter()
        .map(|(x, n)| Phase::new(Sgm::new(q, sigma / x)?, n))
        .collect()
}

/// The privacy profile of one composition at each ε (the tight accountant's brackets).
fn profile_of(phases: &[Phase], eps: &[f64]) -> Result<Vec<ProfilePoint>, Error> {
    Ok(pld::profile_phases(phases, eps)?
        .into_iter()
        .map(|p| p.0)
        .collect())
}

/// δ = 0 at each ε: the profile of a run no example takes part in.
fn zero_profile(eps: &[f64]) -> Vec<ProfilePoint> {
    eps.iter()
        .map(|&epsilon| ProfilePoint {
            epsilon,
            delta: Bracket {
                upper: 0.0,
                lower: 0.0,
            },
        })
        .collect()
}

/// The checks every run makes: q in (0, 1], σ in range, 1 ≤ T (the matrix's rows, for an
/// explicit C; at most [`MAX_UNBANDED_STEPS`] for BLT and the tree, their sensitivity and
/// norms taking O(T) work).
fn checked_run(strategy: &Strategy, q: f64, sigma: f64, steps: u64) -> Result<(), Error> {
    Sgm::new(q, sigma)?;
    if let Some(t) = strategy.steps().filter(|&t| t != steps) {
        return Err(bad(format!(
            "the strategy matrix has {t} rows, one per step, but steps = {steps}"
        )));
    }
    let most = if strategy.is_banded() {
        MAX_STEPS
    } else {
        MAX_UNBANDED_STEPS
    };
    if steps == 0 || steps > most {
        return Err(bad(format!(
            "steps must be a whole number in [1, {most}], got {steps}"
        )));
    }
    Ok(())
}

/// A partition and its sorted, normalised sensitivities with their counts (largest first,
/// zeros dropped).
type Partition = (u64, Vec<(f64, u64)>);

/// A correlated-noise run under b-min-separated participation.
#[derive(Debug, Clone, PartialEq)]
pub struct MinSep {
    pub strategy: Strategy,
    /// The sampling rate within the partition a step samples.
    pub q: f64,
    /// Noise std / (clipping norm × the strategy's largest column norm).
    pub sigma: f64,
    /// Training steps T (rows of C).
    pub steps: u64,
    /// Partitions k (the participation's separation); at least the strategy's bands.
    pub partitions: u64,
}

/// The answer for a [`MinSep`] run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatrixAnswer {
    /// The certified bracket of the mechanism's ε (or δ): the worst partition's composition.
    pub bracket: Bracket,
    /// The strategy's bands (None: not banded) and the participation's partitions.
    pub bands: Option<u64>,
    pub partitions: u64,
    /// The partition whose composition gave the upper end, and how many steps it takes part in.
    pub worst_partition: u64,
    pub participations: u64,
    /// The largest column norm of C as given (C is divided by it).
    pub column_norm: f64,
    /// The worst partition's composition: (noise multiplier σ/‖C e_j‖, steps), as composed.
    pub composed: Vec<(f64, u64)>,
    /// Whether the sensitivities were rounded onto the 1/256-octave grid (each end certified).
    pub rounded: bool,
    /// Whether the bracket's lower end is a certified lower bound on the mechanism's ε (the
    /// exact reduction); false for the noise-splitting bound ([`Split`]), an upper bound only
    /// (its lower end is then 0).
    pub certified_lower: bool,
    /// Without amplification ([`Whole`]): the run's L2 sensitivity in units of the clipping norm
    /// × the largest column norm (the run is one Gaussian mechanism at σ / it); None otherwise.
    pub sensitivity: Option<f64>,
    /// The operator-norm route: the certified bound λ ≥ ‖C‖₂ (C normalised) at which the run
    /// is bounded by DP-SGD with the same participation at σ/λ; None otherwise.
    pub op_norm: Option<f64>,
    /// The common-mode split (cyclic bins, C ≥ 0): the shared part's and the random
    /// allocation's sensitivities; None otherwise.
    pub common_mode: Option<CommonMode>,
}

impl MinSep {
    /// Checks a run: k ≥ bands, q in (0, 1], σ in range, T ≥ 1 (and T = the matrix's rows).
    pub fn new(
        strategy: Strategy,
        q: f64,
        sigma: f64,
        steps: u64,
        partitions: Option<u64>,
    ) -> Result<MinSep, Error> {
        checked_run(&strategy, q, sigma, steps)?;
        if !strategy.is_banded() {
            return Err(bad(
                "the exact b-min-separated reduction needs a banded strategy; BLT and tree aggregation are accounted without amplification (matrix::Whole)".into(),
            ));
        }
        let b = strategy.bands() as u64;
        let k = partitions.unwrap_or(b);
        if k < b {
            return Err(bad(format!(
                "b-min-separated participation over {k} partitions needs a strategy of at most {k} bands; this one has {b} (its columns would overlap: not an exact reduction)"
            )));
        }
        if k > MAX_STEPS {
            return Err(bad(format!(
                "partitions must be at most {MAX_STEPS}, got {k}"
            )));
        }
        Ok(MinSep {
            strategy,
            q,
            sigma,
            steps,
            partitions: k,
        })
    }

    /// The partitions to compose (every other is dominated) with their sorted, normalised
    /// sensitivities (largest first, zeros dropped); and the normalising column norm.
    fn candidates(&self) -> Result<(Vec<Partition>, f64), Error> {
        let (t, k) = (self.steps, self.partitions);
        let top = self.strategy.top(t)?;
        let parts: Vec<Partition> = match &self.strategy {
            // Partition 0 dominates (module docs): its steps 0, k, 2k, … < T, all whole
            // columns but perhaps the last (k ≥ bands: only it can have fewer rows left).
            Strategy::Toeplitz(c) => {
                let n = t.div_ceil(k);
                let last = toeplitz_norms(c)(t - k * (n - 1)) / top;
                vec![(0, merged([(1.0, n - 1), (last, 1)]))]
            }
            Strategy::Matrix(rows) => {
                let norms = Strategy::column_norms(rows);
                let all = (0..k.min(t)).map(|r| {
                    let mut s: Vec<f64> = (r..t)
                        .step_by(k as usize)
                        .map(|j| norms[j as usize] / top)
                        .filter(|&s| s > 0.0)
                        .collect();
                    s.sort_by(|a, b| b.total_cmp(a));
                    (r, s)
                });
                let dominates = |a: &[f64], b: &[f64]| {
                    a.len() >= b.len() && a.iter().zip(b).all(|(x, y)| x >= y)
                };
                let mut keep: Vec<(u64, Vec<f64>)> = Vec::new();
                for (r, s) in all {
                    if keep.iter().any(|(_, k)| dominates(k, &s)) {
                        continue;
                    }
                    keep.retain(|(_, k)| !dominates(&s, k));
                    keep.push((r, s));
                }
                keep.into_iter()
                    .map(|(r, s)| (r, merged(s.into_iter().map(|x| (x, 1)))))
                    .collect()
            }
            Strategy::Blt { .. } | Strategy::Tree => {
                return Err(bad("not banded: no exact reduction".into()))
            }
        };
        for (_, s) in &parts {
            check_sigma(self.sigma, s)?;
        }
        Ok((parts, top))
    }

    /// The mechanism's ε at δ: a certified bracket (the tight accountant's, of the worst
    /// partition's composition).
    ///
    /// ```
    /// use sgm_rdp::engine::matrix::{MinSep, Strategy};
    /// use sgm_rdp::engine::{pld, Sgm};
    /// // One band is DP-SGD.
    /// let run = MinSep::new(Strategy::band(1, None)?, 0.01, 1.0, 1000, None)?;
    /// let a = run.epsilon(1e-5)?;
    /// let sgd = pld::epsilon(Sgm::new(0.01, 1.0)?, 1000, 1e-5)?.epsilon;
    /// assert_eq!((a.bracket.lower, a.bracket.upper), (sgd.lower, sgd.upper));
    /// # Ok::<(), sgm_rdp::engine::Error>(())
    /// ```
    pub fn epsilon(&self, delta: f64) -> Result<MatrixAnswer, Error> {
        self.solve(|p| pld::epsilon_phases(p, delta).map(|a| a.epsilon))
    }

    /// The mechanism's δ at ε: a certified bracket, as [`MinSep::epsilon`].
    pub fn delta(&self, eps: f64) -> Result<MatrixAnswer, Error> {
        self.solve(|p| pld::delta_phases(p, eps).map(|a| a.delta))
    }

    /// The mechanism's privacy profile δ(ε) at each ε (≥ 0): certified brackets, at each ε
    /// the worst partition's (upper end: the largest upper; lower end: the largest lower, each
    /// partition's δ bounding the mechanism's from below) — [`MinSep::delta`] at every ε, each
    /// partition composed once.
    ///
    /// ```
    /// use sgm_rdp::engine::matrix::{MinSep, Strategy};
    /// let run = MinSep::new(Strategy::band(2, Some(&[1.0, 0.5]))?, 0.02, 1.0, 1000, None)?;
    /// let pts = run.profile(&[0.5, 1.0])?;
    /// let (p, d) = (pts[1].delta, run.delta(1.0)?.bracket);
    /// // Both certified (read on different lattices): they overlap.
    /// assert!(p.lower <= d.upper && d.lower <= p.upper && pts[0].delta.upper > p.upper);
    /// # Ok::<(), sgm_rdp::engine::Error>(())
    /// ```
    pub fn profile(&self, eps: &[f64]) -> Result<Vec<ProfilePoint>, Error> {
        let (parts, _) = self.candidates()?;
        let mut out = zero_profile(eps);
        for (_, s) in parts.iter().filter(|(_, s)| !s.is_empty()) {
            let (up, lo) = if many(s) {
                let lo = profile_of(&phases_of(self.q, self.sigma, s, -1)?, eps)?;
                (profile_of(&phases_of(self.q, self.sigma, s, 1)?, eps)?, lo)
            } else {
                let p = profile_of(&phases_of(self.q, self.sigma, s, 0)?, eps)?;
                (p.clone(), p)
            };
            for ((o, u), l) in out.iter_mut().zip(&up).zip(&lo) {
                o.delta.upper = o.delta.upper.max(u.delta.upper);
                o.delta.lower = o.delta.lower.max(l.delta.lower.min(u.delta.upper));
            }
        }
        Ok(out)
    }

    fn solve(&self, f: impl Fn(&[Phase]) -> Result<Bracket, Error>) -> Result<MatrixAnswer, Error> {
        let (parts, top) = self.candidates()?;
        let mut best: Option<(Bracket, u64, u64, Vec<Phase>, bool)> = None;
        let mut lower = 0.0f64;
        for (r, s) in &parts {
            let (b, phases, rounded) = if s.is_empty() {
                (
                    Bracket {
                        upper: 0.0,
                        lower: 0.0,
                    },
                    Vec::new(),
                    false,
                )
            } else if many(s) {
                let up = phases_of(self.q, self.sigma, s, 1)?;
                let lo = phases_of(self.q, self.sigma, s, -1)?;
                let (bu, bl) = (f(&up)?, f(&lo)?);
                let b = Bracket {
                    upper: bu.upper,
                    lower: bl.lower.min(bu.upper),
                };
                (b, up, true)
            } else {
                let p = phases_of(self.q, self.sigma, s, 0)?;
                (f(&p)?, p, false)
            };
            lower = lower.max(b.lower);
            if best.as_ref().is_none_or(|x| b.upper > x.0.upper) {
                best = Some((b, *r, s.iter().map(|x| x.1).sum::<u64>(), phases, rounded));
            }
        }
        let (b, r, n, phases, rounded) =
            best.ok_or_else(|| bad("no partition to compose".into()))?;
        Ok(MatrixAnswer {
            bracket: Bracket {
                upper: b.upper,
                lower: lower.min(b.upper),
            },
            bands: Some(self.strategy.bands() as u64),
            partitions: self.partitions,
            worst_partition: r,
            participations: n,
            column_norm: top,
            composed: phases
                .iter()
                .map(|p| (p.sgm().sigma(), p.steps()))
                .collect(),
            rounded,
            certified_lower: true,
            sensitivity: None,
            op_norm: None,
            common_mode: None,
        })
    }
}

/// Correlated noise under Poisson sampling at every step or balls-in-bins participation: the
/// noise-splitting upper bound (module docs). An upper bound only.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    pub strategy: Strategy,
    /// Poisson: the sampling rate of every step; None under balls-in-bins.
    pub q: Option<f64>,
    /// Noise std / (clipping norm × the strategy's largest column norm).
    pub sigma: f64,
    /// Training steps T.
    pub steps: u64,
    /// Balls-in-bins: steps per epoch (each example in exactly one of them, uniformly).
    pub steps_per_epoch: Option<u64>,
    /// Cyclic balls-in-bins (jax-privacy's `BallsInBinsSampling`): one bin j drawn once per
    /// example, which then takes part in every step ≡ j (mod steps per epoch); false: a fresh
    /// bin every epoch.
    pub cyclic: bool,
    /// Cyclic bins with a non-negative banded Toeplitz C: the common-mode split ([`common`]).
    pub common: Option<CommonMode>,
    /// With the split: whether only it (Some(true)), only the bounding composition
    /// (Some(false)) or the better of the two (None) answers — a σ search pins one route per
    /// search instead of computing both at every σ.
    pub only: Option<bool>,
}

impl Split {
    /// Poisson sampling of every example at every step with probability `q`.
    pub fn poisson(strategy: Strategy, q: f64, sigma: f64, steps: u64) -> Result<Split, Error> {
        checked_run(&strategy, q, sigma, steps)?;
        Ok(Split {
            steps,
            strategy,
            q: Some(q),
            sigma,
            steps_per_epoch: None,
            cyclic: false,
            common: None,
            only: None,
        })
    }

    /// Balls-in-bins: each example in exactly one of every `steps_per_epoch` steps, uniformly
    /// at random; ⌈T / steps_per_epoch⌉ epochs (a last partial epoch counted whole).
    pub fn balls_in_bins(
        strategy: Strategy,
        sigma: f64,
        steps: u64,
        steps_per_epoch: u64,
    ) -> Result<Split, Error> {
        if steps_per_epoch == 0 || steps_per_epoch > steps {
            return Err(bad(format!(
                "balls-in-bins needs 1 <= steps per epoch <= steps, got {steps_per_epoch} of {steps}"
            )));
        }
        checked_run(&strategy, 1.0, sigma, steps)?;
        Ok(Split {
            steps,
            strategy,
            q: None,
            sigma,
            steps_per_epoch: Some(steps_per_epoch),
            cyclic: false,
            common: None,
            only: None,
        })
    }

    /// Cyclic balls-in-bins (jax-privacy's `BallsInBinsSampling(cycle_length = t)`; the
    /// balls-in-bins of Choquette-Choo, Ganesh, Haque, Steinke, Thakurta, arXiv 2410.06266):
    /// each example draws one bin j uniformly from the t steps of a cycle, once, and takes part
    /// in every step ≡ j (mod t).
    ///
    /// Bounded by noise splitting: after the split every step's column is its own Gaussian
    /// block, so the dominating pair's t patterns have orthogonal shifts, each of norm at most
    /// √⌈T/t⌉ against noise σ/√b — one-in-t random allocation, one round, at
    /// σ/√(b·⌈T/t⌉). Exact with one band when t divides T.
    pub fn cyclic_bins(
        strategy: Strategy,
        sigma: f64,
        steps: u64,
        steps_per_epoch: u64,
    ) -> Result<Split, Error> {
        let mut s = Split::balls_in_bins(strategy, sigma, steps, steps_per_epoch)?;
        s.cyclic = true;
        let top = s.strategy.top(steps)?;
        s.common = match &s.strategy {
            Strategy::Toeplitz(c) => {
                let c: Vec<f64> = c.iter().map(|x| x / top).collect();
                common::common_mode(&c, steps, steps_per_epoch)
            }
            Strategy::Blt { decay, scale } => {
                let mut c = Vec::with_capacity(steps as usize);
                blt_coefficients(decay, scale, steps, |x| c.push(x / top));
                common::common_mode_toeplitz(&c, steps_per_epoch)
            }
            Strategy::Tree => common::common_mode_tree(steps, steps_per_epoch, top),
            Strategy::Matrix(_) => None,
        };
        Ok(s)
    }

    /// The composition that bounds the run, the normalising column norm, whether the
    /// sensitivities were rounded, and the operator-norm bound λ when that route was taken.
    fn phases(&self) -> Result<(Vec<Phase>, f64, bool, Option<f64>), Error> {
        let t = self.steps;
        let top = self.strategy.top(t)?;
        // The operator-norm route (module docs): DP-SGD with the same participation at σ/λ,
        // when λ² is below the bands (noise splitting's σ/√b), or C is not banded.
        let lambda = self.strategy.op_norm_bound(t)?;
        if !self.strategy.is_banded() || lambda * lambda < self.strategy.bands() as f64 {
            let sigma = self.sigma / lambda;
            let p = match self.bins_phase(sigma) {
                Some(p) => p?,
                None => Phase::new(Sgm::new(self.q.unwrap_or(1.0), sigma)?, t)?,
            };
            return Ok((vec![p], top, false, Some(lambda)));
        }
        let (p, top, rounded) = self.split_phases(top)?;
        Ok((p, top, rounded, None))
    }

    /// The bins participations at noise multiplier σ per unit-norm column: random allocation
    /// of one in t per epoch over ⌈T/t⌉ epochs; cyclic bins, one round with a bin's ⌈T/t⌉
    /// (at most) columns together. None under Poisson sampling.
    fn bins_phase(&self, sigma: f64) -> Option<Result<Phase, Error>> {
        let per = self.steps_per_epoch?;
        let epochs = self.steps.div_ceil(per);
        Some(if self.cyclic {
            Phase::allocation(sigma / (epochs as f64).sqrt(), per, 1, 1)
        } else {
            Phase::allocation(sigma, per, 1, epochs)
        })
    }

    /// The noise-splitting composition.
    fn split_phases(&self, top: f64) -> Result<(Vec<Phase>, f64, bool), Error> {
        let sigma = self.sigma / (self.strategy.bands() as f64).sqrt();
        let t = self.steps;
        if let Some(p) = self.bins_phase(sigma) {
            // Every column taken at norm ≤ 1: its largest (an upper bound).
            return Ok((vec![p?], top, false));
        }
        // Every column's sensitivity with its count (a Toeplitz C: the T − c + 1 whole columns
        // and one each with m = 1 … c − 1 rows left; never T values at once).
        let s = match &self.strategy {
            Strategy::Toeplitz(c) => {
                let (g, c) = (toeplitz_norms(c), c.len() as u64);
                let short = (1..c.min(t + 1)).map(|m| (g(m) / top, 1));
                merged(short.chain([(1.0, (t + 1).saturating_sub(c))]))
            }
            Strategy::Matrix(rows) => merged(
                Strategy::column_norms(rows)
                    .into_iter()
                    .map(|n| (n / top, 1)),
            ),
            Strategy::Blt { .. } | Strategy::Tree => {
                return Err(bad("not banded: no noise splitting".into()))
            }
        };
        check_sigma(sigma, &s)?;
        let round = many(&s);
        let q = self.q.unwrap_or(1.0);
        Ok((
            phases_of(q, sigma, &s, if round { 1 } else { 0 })?,
            top,
            round,
        ))
    }

    /// An upper bound on the mechanism's ε at δ (the bracket's lower end is 0: none is claimed,
    /// except with one band, where the split is no split and the bracket is exact).
    pub fn epsilon(&self, delta: f64) -> Result<MatrixAnswer, Error> {
        self.best(|p| pld::epsilon_phases(p, delta).map(|a| a.epsilon))
    }

    /// An upper bound on the mechanism's δ at ε (exact with one band, as [`Split::epsilon`]).
    pub fn delta(&self, eps: f64) -> Result<MatrixAnswer, Error> {
        self.best(|p| pld::delta_phases(p, eps).map(|a| a.delta))
    }

    /// The answer of the route with the smaller upper end: the bounding composition
    /// ([`Split::phases`]) and, under cyclic bins with C ≥ 0, the common-mode split
    /// ([`common`]); a route the accountant refuses gives way to the other.
    fn best(&self, f: impl Fn(&[Phase]) -> Result<Bracket, Error>) -> Result<MatrixAnswer, Error> {
        let bounding = || {
            self.phases().and_then(|(p, top, rounded, lambda)| {
                Ok(self.answer(f(&p)?, p, top, rounded, lambda))
            })
        };
        let Some(cm) = self.common.filter(|_| self.only != Some(false)) else {
            return bounding();
        };
        let second = self.common_phases(cm).and_then(|p| {
            let b = f(&p)?;
            let mut a = self.answer(b, p, self.strategy.top(self.steps)?, false, None);
            a.bracket.lower = 0.0;
            a.certified_lower = false;
            a.common_mode = Some(cm);
            Ok(a)
        });
        if self.only == Some(true) {
            return second;
        }
        match (bounding(), second) {
            (Ok(x), Ok(y)) if y.bracket.upper < x.bracket.upper => Ok(y),
            (Ok(x), _) => Ok(x),
            (Err(_), Ok(y)) => Ok(y),
            (Err(e), Err(_)) => Err(e),
        }
    }

    /// The common-mode split's composition: one round of one-in-t random allocation at σ/s,
    /// and the Gaussian mechanism at σ/a every bin shares.
    fn common_phases(&self, cm: CommonMode) -> Result<Vec<Phase>, Error> {
        let per = self.steps_per_epoch.unwrap_or(1);
        let mut p = vec![Phase::allocation(self.sigma / cm.s, per, 1, 1)?];
        if cm.a > 0.0 {
            p.push(Phase::new(Sgm::new(1.0, self.sigma / cm.a)?, 1)?);
        }
        Ok(p)
    }

    /// The mechanism's privacy profile δ(ε) at each ε: upper bounds (lower ends 0, none
    /// claimed), exact brackets where [`Split::epsilon`]'s are; with the common-mode split, at
    /// each ε the smaller upper end of the two routes.
    pub fn profile(&self, eps: &[f64]) -> Result<Vec<ProfilePoint>, Error> {
        let second = self
            .common
            .map(|cm| self.common_phases(cm).and_then(|p| profile_of(&p, eps)));
        let first = self.phases().and_then(|(p, _, rounded, lambda)| {
            let mut out = profile_of(&p, eps)?;
            if !self.exact(rounded, lambda) {
                for o in &mut out {
                    o.delta.lower = 0.0;
                }
            }
            Ok(out)
        });
        match (first, second) {
            (Ok(mut x), Some(Ok(y))) => {
                for (o, c) in x.iter_mut().zip(y) {
                    o.delta.upper = o.delta.upper.min(c.delta.upper);
                    o.delta.lower = o.delta.lower.min(o.delta.upper);
                }
                Ok(x)
            }
            (Err(_), Some(Ok(mut y))) => {
                for o in &mut y {
                    o.delta.lower = 0.0;
                }
                Ok(y)
            }
            (x, _) => x,
        }
    }

    /// One band and no rounding: Z is not split, every column has its own norm: exact —
    /// under balls-in-bins only when t divides T (a last partial epoch is counted whole).
    fn exact(&self, rounded: bool, lambda: Option<f64>) -> bool {
        lambda.is_none()
            && self.strategy.bands() == 1
            && !rounded
            && self
                .steps_per_epoch
                .is_none_or(|per| self.steps.is_multiple_of(per))
    }

    fn answer(
        &self,
        b: Bracket,
        p: Vec<Phase>,
        top: f64,
        rounded: bool,
        lambda: Option<f64>,
    ) -> MatrixAnswer {
        let exact = self.exact(rounded, lambda);
        MatrixAnswer {
            bracket: Bracket {
                upper: b.upper,
                lower: if exact { b.lower } else { 0.0 },
            },
            bands: self.strategy.band_count(),
            partitions: self.strategy.band_count().unwrap_or(1),
            worst_partition: 0,
            participations: self.steps,
            column_norm: top,
            composed: p.iter().map(|p| (p.sgm().sigma(), p.steps())).collect(),
            rounded,
            certified_lower: exact,
            sensitivity: None,
            op_norm: lambda,
            common_mode: None,
        }
    }
}
