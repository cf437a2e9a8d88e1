//! A Monte Carlo **estimate** — not a bound — of correlated noise under balls-in-bins
//! participation, beside the certified noise-splitting bound ([`super::Split`]).
//!
//! The peers (jax-privacy's `balls_in_bins_accounting.py`; Choquette-Choo, Ganesh, Haque,
//! Steinke, Thakurta, "Near-Exact Privacy Amplification for Matrix Mechanisms", ICLR 2025,
//! arXiv 2410.06266) answer balls-in-bins with a banded C by sampling the privacy loss. So does
//! this module, seeded and deterministic (the same bits on every surface), for a banded
//! Toeplitz C with at most one band more than steps per epoch:
//!
//! * The release is y = C·x + σz in R^T, C normalised to largest column norm 1; x has one 1 in
//!   each epoch of t steps, at a uniform position (a position past T: no participation).
//! * The privacy loss L(y) = ln Q(y)/P(y) sums over all t^E patterns exactly: with b ≤ t + 1 bands
//!   only neighbouring epochs' columns overlap, so the sum is a chain — a forward pass over
//!   epochs with t states, each step's weight exp(⟨Cᵀy, e_s⟩/σ² − G_ss/2σ²)/t and a neighbour
//!   factor exp(−G_{ss'}/σ²) for s' − s < b (G = CᵀC).
//! * δ(ε) = max(E_Q[(1 − e^{ε−L})₊], E_P[(1 − e^{ε+L})₊]), each a mean of terms in [0, 1]
//!   over `samples` draws; the 99 % interval is the mean ± 2.576 standard errors.
//!
//! Each draw has its own stream (SplitMix64 on seed and index; normals through
//! `engine::math`; Marsaglia's polar method), so every σ of a search sees the same draws
//! (common random numbers).

use super::{bad, toeplitz_norms, Strategy};
use crate::engine::math::{exp, ln};
use crate::engine::Error;
use serde::Serialize;

/// The fewest and most draws per direction.
pub const MIN_SAMPLES: u64 = 1_000;
pub const MAX_SAMPLES: u64 = 10_000_000;
/// The most work one estimate may take: draws × steps × bands.
pub const MAX_WORK: f64 = 4e10;
/// The seed every estimate uses unless told otherwise.
pub const SEED: u64 = 20_261_205;
/// The two-sided 99 % normal quantile.
const Z99: f64 = 2.575_829_303_548_900_4;

/// A Monte Carlo estimate with its 99 % interval (from the standard error of the mean).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    pub samples: u64,
    pub seed: u64,
}

/// Balls-in-bins with a banded Toeplitz C, sampled (module docs).
#[derive(Debug, Clone)]
pub struct BinsMc {
    /// C's first column, normalised to largest column norm 1.
    col: Vec<f64>,
    steps: usize,
    per: usize,
    samples: u64,
    seed: u64,
    /// G(s, s + d) = ⟨C e_s, C e_{s+d}⟩ at `s * bands + d`, d < bands.
    gram: Vec<f64>,
    /// Cyclic bins (one bin per example for the whole run): ‖C u_j‖² for each bin j, u_j the
    /// steps ≡ j (mod t); None for a fresh bin every epoch.
    cyclic: Option<Vec<f64>>,
}

/// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): 64-bit state, one multiply-xorshift output per step.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in [0, n).
    fn below(&mut self, n: usize) -> usize {
        ((self.next() as u128 * n as u128) >> 64) as usize
    }
    /// Two standard normals (Marsaglia's polar method: one logarithm, no trigonometry).
    fn normals(&mut self) -> (f64, f64) {
        loop {
            let u = 2.0 * self.unit() - 1.0;
            let v = 2.0 * self.unit() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * ln(s) / s).sqrt();
                return (u * f, v * f);
            }
        }
    }
}

/// One direction's loss draws, sorted largest first, with the running sums of e^{−L} and
/// e^{−2L} over them: δ(ε) = (1/N) Σ_{L>ε} (1 − e^{ε−L}) and its standard error in
/// O(log N) per ε.
struct Sorted {
    losses: Vec<f64>,
    s1: Vec<f64>,
    s2: Vec<f64>,
}

impl Sorted {
    fn new(mut losses: Vec<f64>) -> Sorted {
        losses.sort_by(|a, b| b.total_cmp(a));
        let (mut s1, mut s2) = (vec![0.0], vec![0.0]);
        for &l in &losses {
            // Only the draws with L > ε ≥ 0 enter a sum, where e^{−L} ≤ 1; the others' terms
            // are never read at such ε (clamped so the running sums stay finite).
            let e = exp(-l.max(0.0));
            s1.push(s1.last().unwrap_or(&0.0) + e);
            s2.push(s2.last().unwrap_or(&0.0) + e * e);
        }
        Sorted { losses, s1, s2 }
    }

    fn delta(&self, eps: f64) -> (f64, f64) {
        let k = self.losses.partition_point(|&l| l > eps);
        let n = self.losses.len() as f64;
        let x = exp(eps);
        let sum = k as f64 - x * self.s1[k];
        let sq = k as f64 - 2.0 * x * self.s1[k] + x * x * self.s2[k];
        let mean = (sum / n).max(0.0);
        (mean, ((sq / n - mean * mean).max(0.0) / n).sqrt())
    }
}

impl BinsMc {
    /// Both directions' sorted draws at σ (P's losses negated: its δ is E_P[(1 − e^{ε+L})₊]).
    fn sorted(&self, sigma: f64) -> (Sorted, Sorted) {
        let (q, p) = self.losses(sigma);
        (
            Sorted::new(q),
            Sorted::new(p.into_iter().map(|x| -x).collect()),
        )
    }

    /// Checks the run: a banded Toeplitz C (`band:`) with bands ≤ steps per epoch + 1 (only
    /// neighbouring epochs' columns overlap) and steps per epoch ≤ steps,
    /// samples in [MIN_SAMPLES, MAX_SAMPLES], the work within MAX_WORK.
    pub fn new(
        strategy: &Strategy,
        steps: u64,
        steps_per_epoch: u64,
        cyclic: bool,
        samples: u64,
        seed: u64,
    ) -> Result<BinsMc, Error> {
        let Strategy::Toeplitz(c) = strategy else {
            return Err(bad(
                "the Monte Carlo estimate takes a banded Toeplitz strategy (band:b[,c0,...])"
                    .into(),
            ));
        };
        let b = strategy.bands();
        if steps_per_epoch == 0
            || steps_per_epoch > steps
            || (!cyclic && (b as u64) > steps_per_epoch + 1)
        {
            return Err(bad(format!(
                "the Monte Carlo estimate needs bands ({b}) <= steps per epoch ({steps_per_epoch}) + 1 and steps per epoch <= steps ({steps})"
            )));
        }
        if !(MIN_SAMPLES..=MAX_SAMPLES).contains(&samples) {
            return Err(bad(format!(
                "monte_carlo samples must be a whole number in [{MIN_SAMPLES}, {MAX_SAMPLES}], got {samples}"
            )));
        }
        let work = samples as f64 * steps as f64 * (b as f64 + 4.0);
        if work > MAX_WORK {
            return Err(bad(format!(
                "the Monte Carlo estimate would take {work:.1e} operations (samples x steps x bands), above {MAX_WORK:e}: fewer samples or steps"
            )));
        }
        let t = steps as usize;
        let top = toeplitz_norms(c)(steps);
        let col: Vec<f64> = c[..b].iter().map(|x| x / top).collect();
        let mut gram = vec![0.0; t * b];
        for s in 0..t {
            for d in 0..b {
                gram[s * b + d] = (0..b - d)
                    .take_while(|m| s + d + m < t)
                    .map(|m| col[m] * col[m + d])
                    .sum();
            }
        }
        let per = steps_per_epoch as usize;
        let cyclic = cyclic.then(|| {
            (0..per)
                .map(|j| {
                    let mut m = vec![0.0; t];
                    for s in (j..t).step_by(per) {
                        for (k, c) in col.iter().enumerate().take_while(|(k, _)| s + k < t) {
                            m[s + k] += c;
                        }
                    }
                    m.iter().map(|x| x * x).sum()
                })
                .collect()
        });
        Ok(BinsMc {
            col,
            steps: t,
            per,
            samples,
            seed,
            gram,
            cyclic,
        })
    }

    /// The privacy-loss draws at σ: (under Q, the example present; under P, absent).
    fn losses(&self, sigma: f64) -> (Vec<f64>, Vec<f64>) {
        let (t, per, b) = (self.steps, self.per, self.col.len());
        let epochs = t.div_ceil(per);
        let s2 = sigma * sigma;
        // exp(−G(s, s+d)/σ²) for the neighbours d = 1 … b − 1, and G(s, s)/2σ².
        let psi: Vec<f64> = self.gram.iter().map(|g| exp(-g / s2)).collect();
        let half: Vec<f64> = (0..t).map(|s| self.gram[s * b] / (2.0 * s2)).collect();
        let ln_per = ln(per as f64);
        let mut y = vec![0.0; t];
        let mut a = vec![0.0; per];
        let mut prev = vec![0.0; per];
        let mut prefix = vec![0.0; per + 1];
        let mut out = [Vec::new(), Vec::new()];
        for (dir, o) in out.iter_mut().enumerate() {
            o.reserve(self.samples as usize);
            for i in 0..self.samples {
                let mut rng =
                    Rng(self.seed ^ (2 * i + dir as u64).wrapping_mul(0xd1b5_4a32_d192_ed03));
                let mut k = 0;
                while k < t {
                    let (u, v) = rng.normals();
                    y[k] = sigma * u;
                    if k + 1 < t {
                        y[k + 1] = sigma * v;
                    }
                    k += 2;
                }
                if dir == 0 {
                    let bin = self.cyclic.as_ref().map(|_| rng.below(per));
                    for e in 0..epochs {
                        let s = e * per + bin.unwrap_or_else(|| rng.below(per));
                        for (m, c) in self.col.iter().enumerate() {
                            if s + m < t {
                                y[s + m] += c;
                            }
                        }
                    }
                }
                if let Some(norms) = &self.cyclic {
                    // L = ln (1/t) Σ_j exp(⟨y, C u_j⟩/σ² − ‖C u_j‖²/2σ²).
                    for (j, x) in a.iter_mut().enumerate() {
                        let mut dot = 0.0;
                        for s in (j..t).step_by(per) {
                            for (m, c) in self.col.iter().enumerate().take_while(|(m, _)| s + m < t)
                            {
                                dot += c * y[s + m];
                            }
                        }
                        *x = dot / s2 - norms[j] / (2.0 * s2);
                    }
                    let top = a.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x));
                    let sum: f64 = a.iter().map(|&x| exp(x - top)).sum();
                    o.push(top + ln(sum) - ln_per);
                    continue;
                }
                // The forward pass, in linear scale with a running log scale.
                let mut scale = 0.0;
                for e in 0..epochs {
                    let base = e * per;
                    // log weights of this epoch's positions (0 past T: no participation).
                    let mut top = f64::NEG_INFINITY;
                    for (j, aj) in a.iter_mut().enumerate() {
                        let s = base + j;
                        *aj = if s < t {
                            let v: f64 = self
                                .col
                                .iter()
                                .enumerate()
                                .take_while(|(m, _)| s + m < t)
                                .map(|(m, c)| c * y[s + m])
                                .sum();
                            v / s2 - half[s]
                        } else {
                            0.0
                        };
                        top = top.max(*aj);
                    }
                    for x in a.iter_mut() {
                        *x = exp(*x - top);
                    }
                    if e > 0 {
                        // Σ_s prev(s)·ψ(s, s'): the far part by prefix sums, the last b − 1
                        // positions of the previous epoch with their factors.
                        prefix[0] = 0.0;
                        for j in 0..per {
                            prefix[j + 1] = prefix[j] + prev[j];
                        }
                        for (j, aj) in a.iter_mut().enumerate() {
                            let s_new = base + j;
                            let mut sum;
                            if j + 1 < b && s_new < t {
                                // Previous positions p with s_new − (base − per + p) < b.
                                let first = (per + j + 1).saturating_sub(b);
                                sum = prefix[first];
                                for (p, w) in prev.iter().enumerate().skip(first) {
                                    let s_old = base - per + p;
                                    let d = s_new - s_old;
                                    sum += w * psi[s_old * b + d];
                                }
                            } else {
                                sum = prefix[per];
                            }
                            *aj *= sum;
                        }
                    }
                    let norm: f64 = a.iter().sum();
                    scale += top + ln(norm);
                    for (p, x) in prev.iter_mut().zip(&a) {
                        *p = x / norm;
                    }
                }
                o.push(scale - epochs as f64 * ln_per);
            }
        }
        let [q, p] = out;
        (q, p)
    }

    /// δ at ε from loss draws: (mean, standard error) of each direction.
    fn delta_of(q: &Sorted, p: &Sorted, eps: f64) -> [(f64, f64); 2] {
        [q.delta(eps), p.delta(eps)]
    }

    fn interval(d: [(f64, f64); 2]) -> (f64, f64, f64) {
        let v = d[0].0.max(d[1].0);
        let lo = (d[0].0 - Z99 * d[0].1).max(d[1].0 - Z99 * d[1].1).max(0.0);
        let hi = (d[0].0 + Z99 * d[0].1).max(d[1].0 + Z99 * d[1].1).min(1.0);
        (v, lo, hi)
    }

    fn estimate(&self, (value, low, high): (f64, f64, f64)) -> Estimate {
        Estimate {
            value,
            low,
            high,
            samples: self.samples,
            seed: self.seed,
        }
    }

    /// The estimated δ at ε, with its 99 % interval.
    pub fn delta(&self, sigma: f64, eps: f64) -> Estimate {
        let (q, p) = self.sorted(sigma);
        self.estimate(Self::interval(Self::delta_of(&q, &p, eps)))
    }

    /// The estimated ε at δ: where the estimated δ(ε) crosses δ; the interval where its 99 %
    /// ends do.
    pub fn epsilon(&self, sigma: f64, delta: f64) -> Estimate {
        let (q, p) = self.sorted(sigma);
        let top = q
            .losses
            .first()
            .copied()
            .unwrap_or(0.0)
            .max(p.losses.first().copied().unwrap_or(0.0))
            .max(0.0)
            + 1.0;
        // The ε at which f(ε) (decreasing) falls to δ, by bisection on [0, top].
        let cross = |f: &dyn Fn(f64) -> f64| {
            if f(0.0) <= delta {
                return 0.0;
            }
            let (mut lo, mut hi) = (0.0, top);
            for _ in 0..64 {
                let mid = 0.5 * (lo + hi);
                if f(mid) > delta {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            hi
        };
        let at = |e: f64| Self::interval(Self::delta_of(&q, &p, e));
        self.estimate((
            cross(&|e| at(e).0),
            cross(&|e| at(e).1),
            cross(&|e| at(e).2),
        ))
    }

    /// The σ at which the estimated δ at ε equals δ, searched below `above` (a σ known to
    /// suffice: the certified one) by regula falsi (Illinois) on ln δ against ln σ, to 0.1 %
    /// in σ or in δ; with the δ estimate there.
    pub fn calibrate(&self, eps: f64, delta: f64, above: f64) -> (f64, Estimate) {
        let point = |sigma: f64| {
            let (q, p) = self.sorted(sigma);
            Self::interval(Self::delta_of(&q, &p, eps))
        };
        // f(x) = ln δ̂(e^x) − ln δ: ≤ 0 at the certified σ, > 0 low enough.
        let f = |x: f64| {
            let d = point(exp(x)).0;
            if d > 0.0 {
                ln(d) - ln(delta)
            } else {
                -1e3
            }
        };
        let (mut b, mut fb) = (ln(above), f(ln(above)));
        let (mut a, mut fa) = (b - ln(2.0), f(b - ln(2.0)));
        while fa <= 0.0 && a > ln(crate::engine::MIN_SIGMA) + 1.0 {
            (b, fb) = (a, fa);
            a -= ln(2.0);
            fa = f(a);
        }
        if fb > 0.0 || fa <= 0.0 {
            // No crossing found (the estimate at or above the target everywhere searched).
            return (exp(b), self.estimate(point(exp(b))));
        }
        let mut side = 0;
        for _ in 0..40 {
            if b - a < 1e-3 {
                break;
            }
            let x = (a * fb - b * fa) / (fb - fa);
            let fx = f(x);
            if fx.abs() < 1e-3 {
                b = x;
                break;
            }
            if fx > 0.0 {
                (a, fa) = (x, fx);
                if side == -1 {
                    fb /= 2.0;
                }
                side = -1;
            } else {
                (b, fb) = (x, fx);
                if side == 1 {
                    fa /= 2.0;
                }
                side = 1;
            }
        }
        let sigma = exp(b);
        (sigma, self.estimate(point(sigma)))
    }
}
