//! Correlated noise without amplification: the whole run as one Gaussian mechanism.
//!
//! When an example's participations touch overlapping rows of C — a strategy that is not
//! banded (BLT, tree aggregation), or b-min-separated participation over fewer partitions
//! than C has bands — the exact reduction to DP-SGD does not apply. What always applies is the
//! multi-participation sensitivity of the matrix mechanism (Choquette-Choo, McMahan, Rush,
//! Thakurta, "Multi-Epoch Matrix Factorization Mechanisms for Private Machine Learning",
//! ICML 2023, arXiv 2211.06530): an example of partition r takes part at most in the steps
//! S_r = {r, r + k, r + 2k, …} < T, and moves the release `C·G` by `C·Σ_{j∈S_r} e_j g_jᵀ`
//! with ‖g_j‖ ≤ 1, whose squared norm is Σ_{i,j∈S_r} (CᵀC)_{ij}⟨g_i, g_j⟩ ≤ Σ_{i,j∈S_r}
//! |CᵀC|_{ij} ≤ ‖|C|·u_r‖², u_r the indicator of S_r (the absolute-value bound of
//! Choquette-Choo, McMahan, Rush, Thakurta, arXiv 2306.08153, eq. 5, loosened once more to
//! |C|). With C ≥ 0 entrywise (BLT with positive scales, the tree, BandMF with nonnegative
//! coefficients) the last two are equalities, attained by aligned gradients.
//!
//! Adaptively chosen gradients have the same sensitivity (Denisov, McMahan, Rush, Smith,
//! Thakurta, "Improved Differential Privacy for SGD via Optimal Private Linear Operators on
//! Adaptive Streams", NeurIPS 2022), so the run is the Gaussian mechanism with noise multiplier
//! σ/Δ, Δ = max_r ‖|C|u_r‖ / (largest column norm). Sampling within the partition (q < 1)
//! only mixes over subsets of S_r, each of no larger sensitivity when C ≥ 0 (and bounded by
//! the same |C| sum otherwise); the hockey-stick divergence is jointly convex, so the mixture
//! is at most as bad: the bound holds for every q and is **exact at q = 1 with C ≥ 0** (both
//! ends of the bracket certified), an upper bound only otherwise (no amplification used).

use super::{bad, MatrixAnswer, Strategy, MAX_STEPS};
use crate::engine::error::Refusal;
use crate::engine::pld::{self, Bracket, Phase, ProfilePoint};
use crate::engine::{Error, Sgm, MIN_SIGMA};
use std::sync::OnceLock;

/// A correlated-noise run accounted without amplification (module docs). The strategy, steps
/// and partitions are fixed at construction (the sensitivity is computed once, on first use,
/// and shared by every σ of a search); q and σ may change.
#[derive(Debug, Clone)]
pub struct Whole {
    strategy: Strategy,
    /// The sampling rate within the partition a step samples (not used by the bound; with
    /// q = 1 and C ≥ 0 the bound is exact).
    pub q: f64,
    /// Noise std / (clipping norm × the strategy's largest column norm).
    pub sigma: f64,
    steps: u64,
    partitions: u64,
    /// (Δ, worst partition, its participations, largest column norm), once computed.
    sensitivity: OnceLock<Result<(f64, u64, u64, f64), Error>>,
}

impl Whole {
    /// Checks a run: q in (0, 1], σ in range, 1 ≤ T (the matrix's rows; at most
    /// [`MAX_UNBANDED_STEPS`](super::MAX_UNBANDED_STEPS) for BLT and the tree), 1 ≤ k.
    pub fn new(
        strategy: Strategy,
        q: f64,
        sigma: f64,
        steps: u64,
        partitions: u64,
    ) -> Result<Whole, Error> {
        super::checked_run(&strategy, q, sigma, steps)?;
        if partitions == 0 || partitions > MAX_STEPS {
            return Err(bad(format!(
                "partitions must be a whole number in [1, {MAX_STEPS}], got {partitions}"
            )));
        }
        Ok(Whole {
            strategy,
            q,
            sigma,
            steps,
            partitions,
            sensitivity: OnceLock::new(),
        })
    }

    /// The strategy matrix C.
    pub fn strategy(&self) -> &Strategy {
        &self.strategy
    }

    /// Training steps T.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Partitions k: an example takes part at most in the steps ≡ r (mod k) of its partition.
    pub fn partitions(&self) -> u64 {
        self.partitions
    }

    /// Whether the bound is attained: q = 1 and C ≥ 0 entrywise.
    fn exact(&self) -> bool {
        self.q == 1.0
            && match &self.strategy {
                Strategy::Toeplitz(c) => c.iter().all(|&x| x >= 0.0),
                Strategy::Matrix(rows) => rows.iter().flatten().all(|&x| x >= 0.0),
                Strategy::Blt { .. } | Strategy::Tree => true,
            }
    }

    /// The worst partition, its participations and ‖|C|u_r‖², unnormalised.
    fn worst(&self) -> (u64, u64, f64) {
        let (t, k) = (self.steps, self.partitions);
        let count = |r: u64| (t - r).div_ceil(k);
        match &self.strategy {
            // Toeplitz |C| ≥ 0: partition 0 dominates (S_r − r ⊆ S_0, and each column of
            // |C| is a truncation of the one before).
            Strategy::Toeplitz(c) => (0, count(0), toeplitz_sq(c, t, k)),
            Strategy::Blt { decay, scale } => (0, count(0), blt_sq(decay, scale, t, k)),
            Strategy::Tree => (0..k.min(t))
                .map(|r| (r, count(r), tree_sq(t, k, r)))
                .fold((0, 0, -1.0), |a, b| if b.2 > a.2 { b } else { a }),
            Strategy::Matrix(rows) => (0..k.min(t))
                .map(|r| (r, count(r), matrix_sq(rows, k, r)))
                .fold((0, 0, -1.0), |a, b| if b.2 > a.2 { b } else { a }),
        }
    }

    /// The run's sensitivity Δ (in units of the largest column norm) and its worst partition.
    fn gaussian(&self) -> Result<(Phase, f64, u64, u64, f64), Error> {
        let (d, r, n, top) = self
            .sensitivity
            .get_or_init(|| {
                let top = self.strategy.top(self.steps)?;
                let (r, n, sq) = self.worst();
                // Rounded up by one ulp so the noise multiplier errs on the safe side.
                let d = (sq.sqrt() / top).max(f64::MIN_POSITIVE) * (1.0 + f64::EPSILON);
                Ok((d, r, n, top))
            })
            .clone()?;
        if self.sigma / d < MIN_SIGMA {
            // μ = Δ/σ above 10³: ε ≈ μ²/2, far beyond the tight accountant's domain (and
            // a miss, not an error, for a σ search).
            return Err(Error::PldBudget {
                reason: Refusal::BeyondDomain,
            });
        }
        let phase = Phase::new(Sgm::new(1.0, self.sigma / d)?, 1)?;
        Ok((phase, d, r, n, top))
    }

    /// The mechanism's ε at δ: exact at q = 1 with C ≥ 0, an upper bound otherwise.
    ///
    /// ```
    /// use sgm_rdp::engine::matrix::{Strategy, Whole};
    /// use sgm_rdp::engine::{pld, Sgm};
    /// // Single participation (k ≥ T) of the identity: the Gaussian mechanism at σ.
    /// let run = Whole::new(Strategy::band(1, None)?, 1.0, 2.0, 50, 50)?;
    /// let a = run.epsilon(1e-5)?;
    /// let g = pld::epsilon(Sgm::new(1.0, 2.0)?, 1, 1e-5)?.epsilon;
    /// assert!((a.bracket.upper - g.upper).abs() < 1e-9 * g.upper);
    /// # Ok::<(), sgm_rdp::engine::Error>(())
    /// ```
    pub fn epsilon(&self, delta: f64) -> Result<MatrixAnswer, Error> {
        self.solve(|p| pld::epsilon_phases(p, delta).map(|a| a.epsilon))
    }

    /// The mechanism's δ at ε, as [`Whole::epsilon`].
    pub fn delta(&self, eps: f64) -> Result<MatrixAnswer, Error> {
        self.solve(|p| pld::delta_phases(p, eps).map(|a| a.delta))
    }

    /// The mechanism's privacy profile δ(ε) at each ε: at each ε the smaller upper end of
    /// the two routes ([`Whole::epsilon`]'s: the Gaussian mechanism at Δ, and where C is not
    /// exact the operator norm's), each a bound on the same δ(ε); lower ends as there.
    pub fn profile(&self, eps: &[f64]) -> Result<Vec<ProfilePoint>, Error> {
        let (phase, ..) = self.gaussian()?;
        let mut out = super::profile_of(std::slice::from_ref(&phase), eps)?;
        if !self.exact() {
            let op = super::profile_of(std::slice::from_ref(&self.op_phase()?), eps)?;
            for (o, p) in out.iter_mut().zip(op) {
                o.delta.upper = o.delta.upper.min(p.delta.upper);
                o.delta.lower = 0.0;
            }
        }
        Ok(out)
    }

    /// The operator-norm route's composition: DP-SGD over partition 0's ⌈T/k⌉ steps at rate q
    /// and σ/λ.
    fn op_phase(&self) -> Result<Phase, Error> {
        let lambda = self.strategy.op_norm_bound(self.steps)?;
        let steps = self.steps.div_ceil(self.partitions);
        Phase::new(Sgm::new(self.q, self.sigma / lambda)?, steps)
    }

    fn solve(&self, f: impl Fn(&[Phase]) -> Result<Bracket, Error>) -> Result<MatrixAnswer, Error> {
        let (phase, d, r, n, top) = self.gaussian()?;
        let b = f(std::slice::from_ref(&phase))?;
        let exact = self.exact();
        // (bracket, worst partition, its participations, composition, Δ, λ)
        let mut best = (b, r, n, vec![(phase.sgm().sigma(), 1)], Some(d), None);
        if !exact {
            // Sampling within the partition can still amplify: the operator-norm route
            // (DP-SGD over partition 0's ⌈T/k⌉ steps at rate q and σ/λ) where it is smaller.
            let op = self.op_phase()?;
            let ob = f(std::slice::from_ref(&op))?;
            if ob.upper < b.upper {
                let lambda = self.strategy.op_norm_bound(self.steps)?;
                let composed = vec![(op.sgm().sigma(), op.steps())];
                best = (ob, 0, op.steps(), composed, None, Some(lambda));
            }
        }
        let (b, r, n, composed, sensitivity, op_norm) = best;
        Ok(MatrixAnswer {
            bracket: Bracket {
                upper: b.upper,
                lower: if exact { b.lower } else { 0.0 },
            },
            bands: self.strategy.band_count(),
            partitions: self.partitions,
            worst_partition: r,
            participations: n,
            column_norm: top,
            composed,
            rounded: false,
            certified_lower: exact,
            sensitivity,
            op_norm,
            common_mode: None,
        })
    }
}

/// ‖|C|u_0‖² for a banded Toeplitz C (coefficients c, b = c.len()) over T rows, u_0 the steps
/// 0, k, 2k, …: row i holds v(i) = Σ |c_m| over m ≤ min(i, b − 1), m ≡ i (mod k); from row
/// b − 1 on it depends on i mod k only, so any T costs O(b + k).
fn toeplitz_sq(c: &[f64], t: u64, k: u64) -> f64 {
    let b = c.len() as u64;
    let mut v: Vec<f64> = Vec::with_capacity(b.min(t) as usize);
    let mut sq = 0.0;
    for i in 0..b.min(t) {
        let prev = if i >= k { v[(i - k) as usize] } else { 0.0 };
        let x = c[i as usize].abs() + prev;
        v.push(x);
        if i + 1 < b {
            sq += x * x;
        }
    }
    if t < b {
        return sq;
    }
    // Rows b − 1 … T − 1: v(i) = W(i mod k), W(ρ) = Σ_{m < b, m ≡ ρ} |c_m| = v at the last
    // row of that residue below b.
    let (first, last) = (b - 1, t - 1);
    for rho in 0..k.min(t) {
        // The rows i in [first, last] with i ≡ rho (mod k).
        let start = first + (rho + k - first % k) % k;
        if start > last {
            continue;
        }
        let rows = (last - start) / k + 1;
        // W(ρ): the largest m < b with m ≡ ρ carries the whole residue's sum in v.
        let top_m = if rho < b {
            rho + (b - 1 - rho) / k * k
        } else {
            continue;
        };
        let w = v[top_m as usize];
        sq += rows as f64 * w * w;
    }
    sq
}

/// ‖C u_0‖² for a BLT (C > 0) over T rows: v = C·u_0 by the buffers' recurrence
/// v(i) = u(i) + Σ_l ω_l s_l(i), s_l(i) = θ_l s_l(i − 1) + u(i − 1).
fn blt_sq(decay: &[f64], scale: &[f64], t: u64, k: u64) -> f64 {
    let mut s = vec![0.0; decay.len()];
    let mut sq = 0.0;
    let mut u_prev = 0.0;
    for i in 0..t {
        for (x, d) in s.iter_mut().zip(decay) {
            *x = d * *x + u_prev;
        }
        let u = if i % k == 0 { 1.0 } else { 0.0 };
        let v = u + scale.iter().zip(&s).map(|(w, x)| w * x).sum::<f64>();
        sq += v * v;
        u_prev = u;
    }
    sq
}

/// ‖A u_r‖² for the tree's node matrix A (C ≥ 0): the sum over complete dyadic blocks of the
/// squared count of partition r's steps in the block. Blocks shorter than k hold at most one
/// such step (their squares are their counts); longer ones are at most T/k per level.
fn tree_sq(t: u64, k: u64, r: u64) -> f64 {
    // Steps of S_r below x: #{j < x : j ≡ r (mod k)}.
    let below = |x: u64| if x > r { (x - r).div_ceil(k) } else { 0 };
    let mut sq = 0.0;
    let mut w: u64 = 1;
    while w <= t {
        let blocks = t / w;
        if w <= k {
            sq += below(blocks * w) as f64;
        } else {
            for a in 0..blocks {
                let n = (below((a + 1) * w) - below(a * w)) as f64;
                sq += n * n;
            }
        }
        w *= 2;
    }
    sq
}

/// ‖|C|u_r‖² for an explicit lower-triangular C.
fn matrix_sq(rows: &[Vec<f64>], k: u64, r: u64) -> f64 {
    rows.iter()
        .map(|row| {
            let v: f64 = row
                .iter()
                .skip(r as usize)
                .step_by(k as usize)
                .map(|x| x.abs())
                .sum();
            v * v
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blt_dense(decay: &[f64], scale: &[f64], t: u64) -> Vec<f64> {
        let mut c = Vec::new();
        super::super::blt_coefficients(decay, scale, t, |x| c.push(x));
        c
    }

    fn dense_sq(c: &[f64], t: usize, k: usize, r: usize) -> f64 {
        // ‖|C|u_r‖² by materialising |C| (T × T).
        let rows: Vec<Vec<f64>> = (0..t)
            .map(|i| {
                (0..=i)
                    .map(|j| c.get(i - j).map_or(0.0, |x| x.abs()))
                    .collect()
            })
            .collect();
        matrix_sq(&rows, k as u64, r as u64)
    }

    #[test]
    fn the_toeplitz_sum_is_the_dense_one_and_partition_zero_the_worst() {
        for c in [
            vec![1.0, 0.5, 0.25, 0.125],
            vec![1.0, -0.4, 0.3],
            vec![2.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.1],
        ] {
            for t in [1usize, 2, 3, 5, 7, 12, 31] {
                for k in [1usize, 2, 3, 5, 8, 40] {
                    let fast = toeplitz_sq(&c, t as u64, k as u64);
                    let d = dense_sq(&c, t, k, 0);
                    assert!(
                        (fast - d).abs() <= 1e-12 * d,
                        "{c:?} t {t} k {k}: {fast} vs {d}"
                    );
                    for r in 1..k.min(t) {
                        assert!(dense_sq(&c, t, k, r) <= d * (1.0 + 1e-12));
                    }
                }
            }
        }
    }

    #[test]
    fn the_blt_recurrence_is_the_dense_sum() {
        let (decay, scale) = ([0.9, 0.5], [0.3, 0.2]);
        for t in [1u64, 2, 9, 40] {
            let c = blt_dense(&decay, &scale, t);
            assert_eq!(c[0], 1.0);
            if t > 2 {
                assert!((c[2] - (0.3 * 0.9 + 0.2 * 0.5)).abs() < 1e-15);
            }
            for k in [1u64, 3, 7, 100] {
                let fast = blt_sq(&decay, &scale, t, k);
                let d = dense_sq(&c, t as usize, k as usize, 0);
                assert!((fast - d).abs() <= 1e-12 * d, "t {t} k {k}: {fast} vs {d}");
            }
        }
    }

    #[test]
    fn the_tree_sum_counts_every_complete_block() {
        // Brute force: every complete dyadic block, every pair of steps of S_r in it.
        for t in [1u64, 2, 3, 8, 13, 64, 100] {
            for k in [1u64, 2, 3, 4, 9, 200] {
                for r in 0..k.min(t) {
                    let mut brute = 0u64;
                    let mut w = 1;
                    while w <= t {
                        for a in 0..t / w {
                            let n = (a * w..(a + 1) * w).filter(|j| j % k == r).count() as u64;
                            brute += n * n;
                        }
                        w *= 2;
                    }
                    assert_eq!(tree_sq(t, k, r), brute as f64, "t {t} k {k} r {r}");
                }
            }
        }
    }
}
