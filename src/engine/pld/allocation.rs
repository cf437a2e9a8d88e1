//! Random allocation ("balls in bins"): every example is placed in exactly one of the t
//! steps of an epoch, uniformly at random (Feldman, Shenfeld, "Privacy Amplification by
//! Random Allocation", arXiv 2502.08202; Chua, Ghazi, Harrison, Leeman, Kamath, Kumar,
//! Manurangsi, Sinha, Zhang, "Balls-and-Bins Sampling for DP-SGD", AISTATS 2025).
//!
//! # The pair
//! One epoch releases t Gaussian sums. Under add/remove-one adjacency, with the other
//! examples' gradients 0 and the example's gradient of norm C on one coordinate per step,
//! the worst case is the t-dimensional pair P = (1/t)·Σ_i N(e_i, σ²I) against
//! Q = N(0, σ²I) (remove; add is the reverse). Its likelihood ratio is
//! dP/dQ(y) = (1/t)·Σ_i e^{(2y_i − 1)/(2σ²)}, and under Q the t exponents are independent
//! N(−s²/2, s²) with s = 1/σ. So every hockey-stick divergence of the pair is a function of
//! one random variable, the mean of t independent log-normals V_i = e^{Y_i} with E V = 1:
//! W = (1/t)·Σ_i V_i. The remove direction's loss is ln W under P (the W-tilted law of
//! W); the add direction's is −ln W under the law of W itself. (The form, with
//! one coordinate X ∼ N(1/(2σ²), 1/σ²) under P, is the same law: tilting by W
//! tilts one uniformly chosen V_i, which shifts its exponent's mean by s².)
//!
//! # Certified bounds
//! A binary experiment is determined by the law of its likelihood ratio W under Q, and
//! one experiment is more informative than another (for every ε, in both directions and
//! after any composition) when its W is larger in the convex order (Blackwell; see
//! Dong, Roth, Su, JRSS-B 2022, §2 for the trade-off-function form). Convex order is kept
//! by independent sums and by scaling, so:
//! * **Upper**: each V is discretized on the linear lattice {jh} by splitting the mass of
//!   every bin between its two ends so that the bin's mass and mean are kept (a
//!   mean-preserving spread, "connect the dots" in V rather than in the loss). V above
//!   a cap H is cut off: the event A that some V_i > H is sent to a loss of +∞ in each
//!   direction, with its mass (remove: E[V; V > H] + (t − 1)·P(V > H); add: t·P(V > H)),
//!   which dominates the true pair on A (a pair of mutually singular point masses can
//!   simulate any pair).
//! * **Lower**: each bin is contracted to one atom at its mean, and neighbouring atoms
//!   are merged onto the lattice point between them keeping mass and mean (a
//!   contraction); the last unbalanced remainder and the mass above H are dropped (a
//!   smaller measure lowers every hockey-stick divergence, whose integrands are ≥ 0).
//! * The sum of t lattice variables is the t-th convolution power, by FFT under a few
//!   exponential tilts ([`super::compose::power`], its rounding bound per point added to
//!   the upper and subtracted from the lower, and the folded mass bounded by Chernoff).
//!   Each point takes the tilt that bounds its error best; mass outside every window goes
//!   to +∞ (upper) or is dropped (lower).
//! * **Heavy tails** (small σ: V's cap H is far beyond what one FFT holds): V is split at
//!   M ≪ H. With N the number of V above M in an epoch (of the spread law; p = P(V > M)),
//!   the law of S is Σ_n P(N = n)·L(S | N = n), an exact mixture:
//!   N = 0 is the t-th power of the bulk (V ≤ M) by the tilted FFTs above, on a window of
//!   ~M/h points; N = 1 is t·(B ∗ tail) with B the (t − 1)-th power of the bulk (one more
//!   FFT): each octave (v, 2v] of the tail and B are put on a grid of spacing r·v — a
//!   mean-preserving spread for the upper, a contraction for the lower (convex order is
//!   kept by independent sums and by mixtures with the same weights) — and convolved
//!   directly (a few million products), its points kept off the lattice; N ≥ 2 goes to +∞
//!   in the upper (dropped in the lower) with Q-mass ≤ C(t,2)·p² and P-mass
//!   E[W; N ≥ 2] = E[V₁; N ≥ 2] ≤ E[V; V > M]·(t − 1)·p + C(t − 1, 2)·p² (E V ≤ 1). M is
//!   the smallest with those masses ≤ η/20 (`split_point`); B's mass outside its window
//!   (Chernoff, as for the windows) goes to +∞ with P-mass ≤ p·(t − 1)·M·out + E[V; V > M]·out.
//! * The law of W on its lattice {Kh/t} is then put on the loss lattice {kΔ} of each
//!   direction exactly as a per-step PLD ([`super::discretize::from_bins`]: connect the
//!   dots for the upper, contraction and merging for the lower) and composed over the
//!   epochs with the existing composition and its error accounting.
//!
//! k > 1 selected steps per example: the allocation of k of t steps is dominated by k
//! independent allocations of one of ⌊t/k⌋ steps (Feldman, Shenfeld, Lemma on "k-out-of-t"
//! allocation), so the answer is an upper bound only for k > 1 (its lower end is the
//! lower bound of that composition, not of the k-of-t scheme).

use super::compose::{power, Phase as CPhase};
use super::discretize::{from_bins, lattice, z_of_tail, Direction, StepPld};
use super::gauss::{ln_mass, Tails};
use crate::engine::error::Error;
use crate::engine::math::{exp, exp_m1, ln, log2, powf};
use crate::engine::pld::compose::Work;

/// Largest FFT for the sum of t log-normals.
const MAX_SUM_FFT: usize = 1 << 21;
/// V below this is discretized on the finest bins (h); above it bins double in width
/// every time V doubles (the tail carries little mass, and W's loss moves slowly there).
const V_FINE: f64 = 16.0;

/// The law of W = (1/t)·Σ V_i on the lattice {Kh/t}, K = k_lo … k_lo + len − 1:
/// untilted masses, pessimistic (`up`) and optimistic (`lo`), and the masses sent to +∞.
#[derive(Clone)]
pub(crate) struct Law {
    h: f64,
    t: f64,
    k_lo: i64,
    up: Vec<f64>,
    lo: Vec<f64>,
    /// Points off the lattice, (W, up, lo) with W increasing: the epochs in which exactly
    /// one V exceeds the split (empty when V is not split).
    far: Vec<(f64, f64, f64)>,
    /// P-mass at +∞ of each direction (remove, add): the event A, two or more V above the
    /// split, and what lies outside every window.
    inf_remove: f64,
    inf_add: f64,
}

/// One coordinate V = e^Y, Y ∼ N(−s²/2, s²), on {jh} truncated at H, split at index
/// `split`: the bulk (j ≤ split) dense, the tail (V above it) sparse.
struct Coord {
    /// ln of the upper (spread) masses, j = 0 … split.
    ln_up: Vec<f64>,
    /// The lower (contracted) masses, linear, j = 0 … split.
    lo: Vec<f64>,
    /// The spread's points above the split: (j, mass), j increasing.
    tail_up: Vec<(usize, f64)>,
    /// The contraction's atoms above the split: (mass, position in units of h), increasing.
    tail_lo: Vec<(f64, f64)>,
    /// P(V > H) and E[V; V > H].
    p_cap: f64,
    pm_cap: f64,
}

/// The per-coordinate lattices of V on {jh}, j = 0 … ⌈H/h⌉ (see [`Coord`]).
fn coordinate(s: f64, h: f64, cap: f64, split: usize) -> Coord {
    let (m, m1) = (-0.5 * s * s, 0.5 * s * s);
    let len = (cap / h).ceil() as usize + 1;
    let split = split.min(len - 1);
    let at = |j: usize| {
        let x = j as f64 * h;
        let lx = if j == 0 { f64::NEG_INFINITY } else { ln(x) };
        (Tails::at((lx - m) / s), Tails::at((lx - m1) / s))
    };
    let mut ln_up = vec![f64::NEG_INFINITY; split + 1];
    let mut tail_up: Vec<(usize, f64)> = Vec::new();
    let mut put = |j: usize, ln_m: f64| {
        if j <= split {
            ln_up[j] = super::gauss::ln_add(ln_up[j], ln_m);
        } else {
            match tail_up.last_mut() {
                Some(last) if last.0 == j => last.1 += exp(ln_m),
                _ => tail_up.push((j, exp(ln_m))),
            }
        }
    };
    let mut atoms: Vec<(f64, f64)> = Vec::new();
    let (mut j, mut edge) = (0usize, at(0));
    while j + 1 < len {
        // Bin width: h up to V_FINE, then doubling with V (ends stay on the lattice).
        let x = j as f64 * h;
        let w = if x < V_FINE {
            1
        } else {
            1usize << (log2(x / V_FINE).floor() as u32 + 1).min(40)
        };
        let k = (j + w).min(len - 1);
        let next = at(k);
        // ln P(a < V ≤ b) and ln E[V; a < V ≤ b] (the latter is a Gaussian mass too: E V = 1).
        let (ln_m, ln_pm) = (ln_mass(edge.0, next.0), ln_mass(edge.1, next.1));
        if ln_m > f64::NEG_INFINITY {
            let (a, b) = (j as f64, k as f64);
            // The bin's mean, in lattice units, inside [a, b].
            let mu = (exp(ln_pm - ln_m) / h).clamp(a, b);
            let span = b - a;
            put(j, ln_m + ln((b - mu) / span));
            put(k, ln_m + ln((mu - a) / span));
            atoms.push((exp(ln_m), mu));
        }
        j = k;
        edge = next;
    }
    let l_top = ln((len - 1) as f64 * h);
    let tail = |mean: f64| exp(super::gauss::ln_phi_bar((l_top - mean) / s));
    // The contraction's atoms are split by position; each part is merged on its own
    // (each keeps its mass and mean, so the whole is still a contraction of V).
    let cut = atoms.partition_point(|a| a.1 <= split as f64);
    let tail_lo = atoms.split_off(cut);
    Coord {
        ln_up,
        lo: merge_linear(&atoms, split + 1),
        tail_up,
        tail_lo,
        p_cap: tail(m),
        pm_cap: tail(m1),
    }
}

/// Atoms (mass, position in lattice units, increasing, each inside its own bin) merged
/// onto the integer lattice keeping mass and mean: a carried atom left of the lattice
/// point t = ⌈x⌉ and the next atom (right of t) are combined into one point mass at t;
/// whichever has mass left goes on. The last remainder is dropped (linear masses).
fn merge_linear(atoms: &[(f64, f64)], len: usize) -> Vec<f64> {
    let mut out = vec![0.0; len];
    let mut carry: Option<(f64, f64)> = None;
    for &(m, x) in atoms {
        let mut next = (m, x);
        if let Some((cm, cx)) = carry.take() {
            let t = cx.ceil();
            let (left, right) = (t - cx, next.1 - t);
            if right <= 0.0 {
                out[t as usize] += next.0;
                carry = Some((cm, cx));
                continue;
            }
            let need = cm * left / right;
            if need <= next.0 {
                out[t as usize] += cm + need;
                next.0 -= need;
            } else {
                let used = next.0 * right / left;
                out[t as usize] += used + next.0;
                carry = Some((cm - used, cx));
                continue;
            }
        }
        if next.0 > 0.0 {
            if next.1.fract() == 0.0 {
                out[next.1 as usize] += next.0;
            } else {
                carry = Some(next);
            }
        }
    }
    out
}

/// Relative grid spacing of the one-large-V convolution, at most and at least.
const R_MIN: f64 = 5e-4;
const R_MAX: f64 = 0.02;
/// V is split only when its range needs more lattice points than this.
const SPLIT_ABOVE: f64 = 262_144.0;

/// The split M: a V above it is "large". An epoch with two or more large V goes to +∞, so
/// M is the smallest (on a grid of z) with t·E[V; V > M]·P(V > M) + t²·P(V > M)²/2 ≤ η/20.
/// None when the plain lattice is small enough, or M would not be well below the cap.
fn split_point(s: f64, t: f64, eta: f64, h: f64, cap: f64) -> Option<f64> {
    if cap / h <= SPLIT_ABOVE {
        return None;
    }
    let target = ln(0.05 * eta.max(1e-17));
    let lt = ln(t);
    let mut z = 2.0;
    while z < 12.0 {
        // ln M = s²/2 + s·z: P(V > M) = Φ̄(z + s), E[V; V > M] = Φ̄(z).
        let (lp, lpm) = (super::gauss::ln_phi_bar(z + s), super::gauss::ln_phi_bar(z));
        let mass = super::gauss::ln_add(lt + lp + lpm, 2.0 * lt + 2.0 * lp - ln(2f64));
        if mass <= target {
            break;
        }
        z += 0.125;
    }
    let m = exp(0.5 * s * s + s * z);
    (m < 0.25 * cap && m > 2.0 * V_FINE).then_some(m)
}

/// Points (position in grid units, mass) spread onto the integer grid keeping mass and
/// mean (each split between its two neighbours): (first index, masses).
fn spread(points: impl Iterator<Item = (f64, f64)> + Clone) -> (i64, Vec<f64>) {
    let (lo, hi) = points
        .clone()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (x, _)| {
            (a.min(x), b.max(x))
        });
    if lo > hi {
        return (0, Vec::new());
    }
    let i0 = lo.floor() as i64;
    let mut out = vec![0.0; (hi.ceil() as i64 - i0 + 1) as usize];
    for (x, m) in points {
        let f = x.floor();
        let (i, frac) = ((f as i64 - i0) as usize, x - f);
        out[i] += m * (1.0 - frac);
        if frac > 0.0 {
            out[i + 1] += m * frac;
        }
    }
    (i0, out)
}

/// Points (position in grid units, increasing, mass) contracted onto the integer grid:
/// each cell (c, c + 1] to one atom at its mean, then merged keeping mass and mean
/// ([`merge_linear`], which drops the last remainder): (first index, masses).
fn contract(points: impl Iterator<Item = (f64, f64)>) -> (i64, Vec<f64>) {
    let mut cells: Vec<(i64, f64, f64)> = Vec::new();
    for (x, m) in points {
        if m <= 0.0 {
            continue;
        }
        let c = x.ceil() as i64 - 1;
        match cells.last_mut() {
            Some(last) if last.0 == c => {
                last.1 += m;
                last.2 += m * x;
            }
            _ => cells.push((c, m, m * x)),
        }
    }
    let Some(&(c0, _, _)) = cells.first() else {
        return (0, Vec::new());
    };
    let last = cells.last().map_or(c0, |x| x.0);
    let atoms: Vec<(f64, f64)> = cells
        .iter()
        .map(|&(c, m, mx)| (m, (mx / m).clamp(c as f64, c as f64 + 1.0) - c0 as f64))
        .collect();
    (c0, merge_linear(&atoms, (last - c0 + 2) as usize))
}

/// The direct convolution of two grid measures (first index, masses).
fn convolve(a: &(i64, Vec<f64>), b: &(i64, Vec<f64>)) -> (i64, Vec<f64>) {
    if a.1.is_empty() || b.1.is_empty() {
        return (0, Vec::new());
    }
    let mut out = vec![0.0; a.1.len() + b.1.len() - 1];
    for (j, &y) in b.1.iter().enumerate() {
        if y > 0.0 {
            for (o, &x) in out[j..].iter_mut().zip(&a.1) {
                *o += x * y;
            }
        }
    }
    (a.0 + b.0, out)
}

/// The refusal of a sum too wide for the largest FFT.
fn too_wide(e: super::compose::TooWide) -> Error {
    Error::PldBudget {
        reason: if e.needed.is_infinite() {
            super::WORK_SPENT
        } else {
            crate::engine::error::Refusal::AllocationTooWide
        },
    }
}

impl Law {
    /// The law of W for σ (s = 1/σ) and t steps per epoch, on a lattice of spacing h in
    /// the sum S = tW, with P-mass at most `eta` sent to +∞ by the cap.
    pub(crate) fn new(sigma: f64, t: u64, h: f64, eta: f64, w: &Work) -> Result<Law, Error> {
        let s = 1.0 / sigma;
        let tf = t as f64;
        // Cap: (t + 1)·Φ̄((ln H − s²/2)/s) ≤ η bounds both directions' mass from A (any cap
        // is certified, its mass is at +∞; below 1e-17 per epoch it no longer matters for
        // the δ ≥ 1e-15 we resolve, and a smaller one would widen the sum's FFT for nothing).
        let z = z_of_tail((0.5 * eta.max(1e-17) / (tf + 1.0)).min(0.25));
        let cap = exp(0.5 * s * s + s * z).max(4.0 * h);
        let bins = (cap / h).min(V_FINE / h + 8.0 / h * log2(cap / V_FINE).max(0.0));
        let m_split = split_point(s, tf, eta, h, cap);
        let dense = (cap / h).min(m_split.unwrap_or(cap) / h);
        if !w.spend(super::POINT_WORK * 2.0 * bins + dense) {
            return Err(Error::PldBudget {
                reason: super::WORK_SPENT,
            });
        }
        if dense > (MAX_SUM_FFT * 4) as f64 {
            return Err(Error::PldBudget {
                reason: crate::engine::error::Refusal::AllocationRange,
            });
        }
        let split = m_split.map_or(usize::MAX, |m| (m / h).floor() as usize);
        let mut c = coordinate(s, h, cap, split);
        let m_bulk = (c.lo.len() - 1) as f64 * h;
        let ln_lo: Vec<f64> = c.lo.iter().map(|&x| ln(x)).collect();
        let step = StepPld {
            k_lo: 0,
            ln_up: std::mem::take(&mut c.ln_up),
            ln_inf: f64::NEG_INFINITY,
            ln_lo,
            tail: None,
        };
        let phase = [CPhase {
            pld: &step,
            steps: tf,
        }];
        // Tilts: the plain sum, one toward the left tail (the add direction's large
        // losses) and a mild one toward the right (bounded by the cap's e^{λH}).
        let var_v = exp_m1(s * s);
        let sd = (tf * var_v).sqrt() / h;
        let alias = (1e-3 * eta).max(1e-300);
        let mut wins = Vec::new();
        for lam in [0.0, -8.0 / (sd * h)] {
            wins.push((
                lam,
                power(&phase, lam, h, MAX_SUM_FFT, alias, w).map_err(too_wide)?,
            ));
        }
        // The right tilt (the remove direction's large losses, small δ) within the plain
        // sum's window: the capped log-normal's heavy tail, tilted, can need one twice as
        // wide, so the tilt is halved until it fits.
        let right = (8.0 / (sd * h)).min(12.0 / m_bulk);
        let fit = [1.0, 0.5, 0.25, 0.125].iter().find_map(|f| {
            power(&phase, right * f, h, wins[0].1.n, alias, w)
                .ok()
                .map(|p| (right * f, p))
        });
        wins.extend(fit);
        let lo_k = wins.iter().map(|(_, w)| w.k0).min().unwrap_or(0).max(0);
        let hi_k = wins
            .iter()
            .map(|(_, w)| w.k0 + w.n as i64)
            .max()
            .unwrap_or(1);
        let n = (hi_k - lo_k) as usize;
        let (mut up, mut low) = (vec![0.0; n], vec![0.0; n]);
        for (i, (u, l)) in up.iter_mut().zip(low.iter_mut()).enumerate() {
            let k = lo_k + i as i64;
            // The window whose rounding bound, untilted, is smallest at K.
            let mut best: Option<(f64, f64, f64)> = None;
            for (lam, w) in &wins {
                if k < w.k0 || k >= w.k0 + w.n as i64 {
                    continue;
                }
                let untilt = |ln_scale: f64| exp(ln_scale - lam * k as f64 * h);
                let err = w.e_bin * untilt(w.ln_scale_up);
                if best.is_some_and(|b| b.0 <= err) {
                    continue;
                }
                let (a, b) = w.at(k);
                best = Some((
                    err,
                    a * untilt(w.ln_scale_up),
                    (b - alias).max(0.0) * untilt(w.ln_scale_lo),
                ));
            }
            if let Some((_, a, b)) = best {
                (*u, *l) = (a, b);
            }
        }
        // Mass outside every window, untilted: right of a window with λ ≥ 0 and left of
        // one with λ ≤ 0 (Chernoff bounds the tilted mass beyond the window by `alias`).
        let mut right = f64::INFINITY;
        let mut left = f64::INFINITY;
        for (lam, w) in &wins {
            if *lam >= 0.0 {
                let edge = (w.k0 + w.n as i64) as f64 * h;
                right = right.min(alias * exp(w.ln_scale_up - lam * edge));
            }
            if *lam <= 0.0 {
                let edge = w.k0.max(0) as f64 * h;
                left = left.min(alias * exp(w.ln_scale_up - lam * edge));
            }
        }
        // W ≤ M beyond the windows (every V ≤ M), and W's mass there is at most the bound.
        let outside_p_remove = right * m_bulk + left;
        let outside_p_add = right + left;
        let a_remove = c.pm_cap + (tf - 1.0) * c.p_cap;
        let a_add = tf * c.p_cap;
        let mut law = Law {
            h,
            t: tf,
            k_lo: lo_k,
            up,
            lo: low,
            far: Vec::new(),
            inf_remove: a_remove + outside_p_remove,
            inf_add: a_add + outside_p_add,
        };
        if !c.tail_up.is_empty() || !c.tail_lo.is_empty() {
            drop(wins);
            law.one_large(&c, &step, alias, m_bulk, w)?;
        }
        Ok(law)
    }

    /// The epochs in which exactly one V exceeds the split: S = B + V_big, B the sum of
    /// the other t − 1 (all in the bulk; B's law is the (t − 1)-th power of the bulk by
    /// one more FFT). Each octave (v, 2v] of the tail is put, with B, on a grid of spacing
    /// r·v — a mean-preserving spread for the upper, a contraction for the lower, each
    /// kept by independent sums and by mixtures in the convex order — and convolved
    /// directly; its points are `far`. Two or more V above the split, and B outside its
    /// window, go to +∞ (upper) or are dropped (lower).
    fn one_large(
        &mut self,
        c: &Coord,
        step: &StepPld,
        alias: f64,
        m_bulk: f64,
        w: &Work,
    ) -> Result<(), Error> {
        let (h, tf) = (self.h, self.t);
        let (b0, b_up, b_lo, b_out) = if tf > 1.0 {
            let phase = [CPhase {
                pld: step,
                steps: tf - 1.0,
            }];
            let p = power(&phase, 0.0, h, MAX_SUM_FFT, alias, w).map_err(too_wide)?;
            let (su, sl) = (exp(p.ln_scale_up), exp(p.ln_scale_lo));
            let k0 = p.k0.max(0);
            let (u, l): (Vec<f64>, Vec<f64>) = (k0..p.k0 + p.n as i64)
                .map(|k| {
                    let (a, b) = p.at(k);
                    (a * su, (b - alias).max(0.0) * sl)
                })
                .unzip();
            // Chernoff bounds B's mass beyond the window by `alias` on each side.
            (k0, u, l, 2.0 * alias * su)
        } else {
            (0, vec![1.0], vec![1.0], 0.0)
        };
        // N = the number of V above the split, p = P(V > M) of the spread: P(N ≥ 2) ≤
        // C(t,2)p², and E[W; N ≥ 2] = E[V₁; N ≥ 2] ≤ E[V; V > M]·(t−1)p + C(t−1,2)p²
        // (E V ≤ 1). B outside its window: E[W; N = 1, B out] ≤ p·E[B; out] + E[V; V > M]·out.
        let p: f64 = c.tail_up.iter().map(|x| x.1).sum();
        let pm: f64 = c.tail_up.iter().map(|&(j, m)| j as f64 * h * m).sum();
        self.inf_add += 0.5 * tf * (tf - 1.0) * p * p + tf * p * b_out;
        self.inf_remove += (tf - 1.0) * p * pm
            + 0.5 * (tf - 1.0) * (tf - 2.0).max(0.0) * p * p
            + b_out * ((tf - 1.0) * m_bulk * p + pm);
        let r = (2.0 * h / tf.sqrt()).clamp(R_MIN, R_MAX);
        let top = c
            .tail_up
            .last()
            .map_or(0.0, |x| x.0 as f64 * h)
            .max(c.tail_lo.last().map_or(0.0, |x| x.1 * h));
        let mut v = m_bulk;
        while v < top {
            let g = v * r;
            let inside = |x: f64| x > v && x <= 2.0 * v;
            let tu = spread(
                c.tail_up
                    .iter()
                    .map(|&(j, m)| (j as f64 * h, m))
                    .filter(|x| inside(x.0))
                    .map(|(x, m)| (x / g, m)),
            );
            let tl = contract(
                c.tail_lo
                    .iter()
                    .map(|&(m, mu)| (mu * h, m))
                    .filter(|x| inside(x.0))
                    .map(|(x, m)| (x / g, m)),
            );
            let on_grid = |k: usize| (b0 + k as i64) as f64 * h / g;
            let bu = spread(b_up.iter().enumerate().map(|(k, &m)| (on_grid(k), m)));
            let bl = contract(b_lo.iter().enumerate().map(|(k, &m)| (on_grid(k), m)));
            let work = (bu.1.len() * tu.1.len() + bl.1.len() * tl.1.len()) as f64;
            if !w.spend(work) {
                return Err(Error::PldBudget {
                    reason: super::WORK_SPENT,
                });
            }
            // Each sum has at most n nonnegative rounded products: relative error ≤ (n + 2)u.
            let slack =
                |a: &[f64], b: &[f64]| 2.0 * (a.len().min(b.len()) + 2) as f64 * super::gauss::U;
            let (cu, su) = (convolve(&bu, &tu), slack(&bu.1, &tu.1));
            let (cl, sl) = (convolve(&bl, &tl), slack(&bl.1, &tl.1));
            let first = cu.0.min(cl.0);
            let last = (cu.0 + cu.1.len() as i64).max(cl.0 + cl.1.len() as i64);
            let get = |x: &(i64, Vec<f64>), i: i64| {
                usize::try_from(i - x.0)
                    .ok()
                    .and_then(|j| x.1.get(j).copied())
                    .unwrap_or(0.0)
            };
            for i in first..last {
                let (a, b) = (get(&cu, i), get(&cl, i));
                if a > 0.0 || b > 0.0 {
                    self.far
                        .push((i as f64 * g / tf, tf * a * (1.0 + su), tf * b * (1.0 - sl)));
                }
            }
            v *= 2.0;
        }
        self.far.sort_by(|a, b| a.0.total_cmp(&b.0));
        Ok(())
    }

    /// W at lattice index K.
    fn w(&self, k: i64) -> f64 {
        k as f64 * self.h / self.t
    }

    /// One epoch's lattice PLDs for a direction on the loss lattice {kΔ}, the loss range
    /// cut where each side's P-mass falls below `eta` (that remainder rounded up onto the
    /// first point or sent to +∞; the lower drops or rounds it down).
    pub(crate) fn step_pld(&self, dir: Direction, d: f64, eta: f64) -> Result<StepPld, Error> {
        // (loss, P, Q) of a point W with mass m.
        let point = |w: f64, m: f64| -> (f64, f64, f64) {
            match dir {
                Direction::Remove => (ln(w), w * m, m),
                Direction::Add => (-ln(w), m, w * m),
            }
        };
        let mut inf = match dir {
            Direction::Remove => self.inf_remove,
            Direction::Add => self.inf_add,
        };
        // W = 0 (only when the lattice starts at 0): remove loss −∞ (no P-mass), add +∞.
        let zero = usize::try_from(-self.k_lo)
            .ok()
            .filter(|&i| i < self.up.len());
        if let (Some(i), Direction::Add) = (zero, dir) {
            inf += self.up[i];
        }
        let first = zero.map_or(0, |i| i + 1);
        // The points (W, up, lo) with W > 0, the lattice's and the far ones, in W order
        // (`rev`: the other way).
        let grid =
            (first..self.up.len()).map(|i| (self.w(self.k_lo + i as i64), self.up[i], self.lo[i]));
        let points = |rev: bool| {
            let (a, b): (Box<dyn Iterator<Item = _>>, Box<dyn Iterator<Item = _>>) = if rev {
                (
                    Box::new(grid.clone().rev()),
                    Box::new(self.far.iter().rev().copied()),
                )
            } else {
                (Box::new(grid.clone()), Box::new(self.far.iter().copied()))
            };
            merged(a, b, rev)
        };
        // The range: where the upper P-mass left of it and right of it each stay ≤ η.
        let p_of = |x: &(f64, f64, f64)| point(x.0, x.1).1;
        let total: f64 = points(false).map(|x| p_of(&x)).sum();
        if total.is_nan() || total <= 0.0 {
            return Err(Error::PldBudget {
                reason: crate::engine::error::Refusal::AllocationNoMass,
            });
        }
        // The first point (from either end) whose mass with what precedes it passes η.
        let cut = |rev: bool| {
            let mut acc = 0.0;
            let mut last = None;
            for x in points(rev) {
                last = Some(x.0);
                acc += p_of(&x);
                if acc > eta {
                    break;
                }
            }
            point(last.unwrap_or(1.0), 1.0).0
        };
        let (l1, l2) = (cut(false), cut(true));
        let (lo, hi) = (l1.min(l2), l1.max(l2));
        let (k_lo, len) = lattice(d, lo, hi);
        if len as f64 > super::MAX_STEP_POINTS {
            return Err(Error::PldBudget {
                reason: super::TOO_MANY_POINTS,
            });
        }
        // Bins (ℓ_i, ℓ_{i+1}] of both measures, and what falls left or right of the range.
        let mut bins_up = vec![(0.0f64, 0.0f64); len - 1];
        let mut bins_lo = vec![(0.0f64, 0.0f64); len - 1];
        let (mut left_up, mut right_up, mut right_lo) = (0.0, 0.0, 0.0);
        for (w, up, low) in points(false) {
            let (l, pu, qu) = point(w, up);
            let (_, pl, ql) = point(w, low);
            let bin = (l / d).ceil() as i64 - 1 - k_lo;
            if bin < 0 {
                left_up += pu;
            } else if bin as usize >= len - 1 {
                right_up += pu;
                right_lo += pl;
            } else {
                let (u, w) = (&mut bins_up[bin as usize], &mut bins_lo[bin as usize]);
                u.0 += pu;
                u.1 += qu;
                w.0 += pl;
                w.1 += ql;
            }
        }
        let ln2 = |(p, q): (f64, f64)| (ln(p), ln(q));
        let upper = from_bins(
            d,
            k_lo,
            len,
            |i| ln2(bins_up[i]),
            ln(left_up),
            ln(right_up + inf),
        );
        let lower = from_bins(
            d,
            k_lo,
            len,
            |i| ln2(bins_lo[i]),
            f64::NEG_INFINITY,
            ln(right_lo),
        );
        Ok(StepPld {
            k_lo,
            ln_up: upper.ln_up,
            ln_inf: upper.ln_inf,
            ln_lo: lower.ln_lo,
            tail: None,
        })
    }
}

/// Two sequences of points, each in W order (decreasing when `rev`), merged.
fn merged<'a>(
    a: impl Iterator<Item = (f64, f64, f64)> + 'a,
    b: impl Iterator<Item = (f64, f64, f64)> + 'a,
    rev: bool,
) -> impl Iterator<Item = (f64, f64, f64)> + 'a {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) => {
            if (x.0 <= y.0) != rev {
                a.next()
            } else {
                b.next()
            }
        }
        (Some(_), None) => a.next(),
        (None, _) => b.next(),
    })
}

/// (σ, t, h, η) as bits.
type LawKey = (u64, u64, u64, u64);

/// Laws kept: a query's fine and coarse lattices (the add direction is first tried four
/// times coarser) and a refinement's.
const KEPT: usize = 4;

/// The last laws built (both directions and every refinement at one spacing share one; a
/// repeated query finds its own). A cache keyed exactly, so an answer does not depend on
/// what was asked before.
static LAST: std::sync::Mutex<Vec<(LawKey, std::sync::Arc<Law>)>> =
    std::sync::Mutex::new(Vec::new());

/// The law of W for σ, t steps per epoch and loss spacing Δ: its sum lattice is
/// h = √t·Δ/2, so the spread it adds to W's variance, h²/(4t), is a sixteenth of Δ²/4.
pub(crate) fn law(
    sigma: f64,
    t: u64,
    d: f64,
    eta: f64,
    w: &Work,
) -> Result<std::sync::Arc<Law>, Error> {
    // Few steps per epoch put W's left tail (the add direction's large losses) near 0,
    // where the spread's mass at V = 0 is a loss of +∞: h keeps P(V ≤ h)^t ≤ η/100.
    let s = 1.0 / sigma;
    let z = z_of_tail(powf((0.01 * eta).max(1e-300), 1.0 / t as f64).min(0.25));
    let h_left = exp(-0.5 * s * s - s * z);
    let h = (0.5 * (t as f64).sqrt() * d).min(h_left);
    let key = (sigma.to_bits(), t, h.to_bits(), eta.to_bits());
    let last = || {
        LAST.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    let found = last()
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, l)| l.clone());
    if let Some(l) = found {
        return Ok(l);
    }
    let l = std::sync::Arc::new(Law::new(sigma, t, h, eta, w)?);
    let mut c = last();
    if c.len() >= KEPT {
        c.remove(0);
    }
    c.push((key, l.clone()));
    Ok(l)
}

/// Forget the cached law (a benchmark's cold call).
pub(crate) fn forget_law() {
    LAST.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The upper lattice keeps V's mass and mean below the cap (a mean-preserving
    /// spread); the lower one keeps the mass and mean of what it did not drop, and drops
    /// almost nothing.
    #[test]
    fn the_spread_and_the_contraction_keep_mass_and_mean() {
        for (s, h) in [(1.0f64 / 1.1, 0.013f64), (0.5, 4e-3), (1.2, 0.02)] {
            let cap = exp(0.5 * s * s + 8.0 * s);
            let c = coordinate(s, h, cap, usize::MAX);
            let (ln_up, lo, p_cap, pm_cap) = (c.ln_up, c.lo, c.p_cap, c.pm_cap);
            assert!(c.tail_up.is_empty() && c.tail_lo.is_empty());
            let mass: f64 = ln_up.iter().map(|l| exp(*l)).sum();
            let mean: f64 = ln_up
                .iter()
                .enumerate()
                .map(|(j, l)| exp(*l) * j as f64 * h)
                .sum();
            assert!((mass + p_cap - 1.0).abs() < 1e-12, "{s}: mass {mass}");
            assert!((mean + pm_cap - 1.0).abs() < 1e-11, "{s}: mean {mean}");
            let lmass: f64 = lo.iter().sum();
            let lmean: f64 = lo.iter().enumerate().map(|(j, m)| m * j as f64 * h).sum();
            assert!(lmass <= mass + 1e-13 && lmass > mass - 1e-6, "{s}: {lmass}");
            assert!(lmean <= mean + 1e-12 && lmean > mean - 1e-4, "{s}: {lmean}");
        }
    }

    #[test]
    fn merging_puts_atoms_on_the_lattice_keeping_mass_and_mean() {
        let atoms = [(0.2, 0.3), (0.1, 1.5), (0.4, 2.0), (0.25, 3.7), (0.05, 4.2)];
        let out = merge_linear(&atoms, 6);
        let (m, mu): (f64, f64) = atoms
            .iter()
            .fold((0.0, 0.0), |a, x| (a.0 + x.0, a.1 + x.0 * x.1));
        let (om, omu): (f64, f64) = out
            .iter()
            .enumerate()
            .fold((0.0, 0.0), |a, (j, x)| (a.0 + x, a.1 + x * j as f64));
        // Only the last remainder is dropped: at most the last atoms' mass.
        assert!(om <= m + 1e-15 && om >= m - 0.3, "{om} {m}");
        // What is kept has the mean of what it came from, less the dropped remainder's.
        let dropped = m - om;
        assert!(
            omu <= mu + 1e-12 && omu >= mu - dropped * 4.2 - 1e-12,
            "{omu} {mu}"
        );
    }

    /// Split at M, the bulk and the tail together are the unsplit lattices: the spread's
    /// points and the contraction's mass and mean are the same.
    #[test]
    fn the_split_partitions_the_coordinate() {
        let (s, h) = (1.0f64 / 0.7, 0.01);
        let cap = exp(0.5 * s * s + 7.0 * s);
        let whole = coordinate(s, h, cap, usize::MAX);
        let split = 2_000;
        let c = coordinate(s, h, cap, split);
        assert_eq!(c.ln_up.len(), split + 1);
        for (j, l) in c.ln_up.iter().enumerate() {
            assert_eq!(*l, whole.ln_up[j]);
        }
        for &(j, m) in &c.tail_up {
            assert!(j > split);
            assert!((ln(m) - whole.ln_up[j]).abs() < 1e-12, "{j}");
        }
        let moments = |v: &mut dyn Iterator<Item = (f64, f64)>| {
            v.fold((0.0, 0.0), |a, (x, m)| (a.0 + m, a.1 + m * x))
        };
        let (m_all, x_all) = moments(&mut whole.lo.iter().enumerate().map(|(j, &m)| (j as f64, m)));
        let (m_b, x_b) = moments(&mut c.lo.iter().enumerate().map(|(j, &m)| (j as f64, m)));
        let (m_t, x_t) = moments(&mut c.tail_lo.iter().map(|&(m, x)| (x, m)));
        // The bulk's merge drops at most its last remainder (less than one bin's mass at
        // the split, P(V > 20) = 2.5e-3 here); nothing is gained.
        let lost = m_all - (m_b + m_t);
        assert!((-1e-12..1e-5).contains(&lost), "{m_b} + {m_t} vs {m_all}");
        assert!(x_b + x_t <= x_all * (1.0 + 1e-12) && x_b + x_t > x_all - 2e-3 / h);
    }

    /// The spread keeps mass and mean and is a spread (its variance is not smaller); the
    /// contraction keeps mass and mean less a dropped remainder, and is not wider.
    #[test]
    fn spread_and_contract_on_a_grid() {
        let pts: Vec<(f64, f64)> = (0..50)
            .map(|i| (3.0 + 0.37 * i as f64, 1.0 / (1.0 + i as f64)))
            .collect();
        let mom = |(i0, v): &(i64, Vec<f64>)| {
            let (m, x, x2) = v.iter().enumerate().fold((0.0, 0.0, 0.0), |a, (j, &w)| {
                let x = (*i0 + j as i64) as f64;
                (a.0 + w, a.1 + w * x, a.2 + w * x * x)
            });
            (m, x / m, x2 / m - (x / m).powi(2))
        };
        let m0: f64 = pts.iter().map(|p| p.1).sum();
        let x0: f64 = pts.iter().map(|p| p.0 * p.1).sum::<f64>() / m0;
        let v0: f64 = pts.iter().map(|p| p.1 * (p.0 - x0).powi(2)).sum::<f64>() / m0;
        let (m, x, v) = mom(&spread(pts.iter().copied()));
        assert!(
            (m - m0).abs() < 1e-12 && (x - x0).abs() < 1e-12 && v >= v0,
            "{m} {x} {v}"
        );
        let (m, x, v) = mom(&contract(pts.iter().copied()));
        assert!(m <= m0 + 1e-12 && m > m0 - 0.05, "{m} {m0}");
        assert!((x - x0).abs() < 0.5 && v <= v0 + 1e-9, "{x} {x0} {v} {v0}");
        let c = convolve(&(2, vec![0.5, 0.5]), &(-1, vec![0.25, 0.0, 0.75]));
        assert_eq!(c, (1, vec![0.125, 0.125, 0.375, 0.375]));
    }

    /// A split law accounts for every epoch: its upper masses (lattice, far points, +∞)
    /// cover the whole Q-mass and its W-mean (the P-mass) from above, its lower ones stay
    /// below; and the far points exist (the tail was split off).
    #[test]
    fn a_split_law_covers_both_measures() {
        let w = &crate::engine::pld::compose::Work::new(f64::INFINITY);
        let (sigma, t, h, eta) = (0.7, 50, 0.01, 1e-12);
        let l = Law::new(sigma, t, h, eta, w).unwrap();
        assert!(!l.far.is_empty());
        let lattice = (0..l.up.len()).map(|i| (l.w(l.k_lo + i as i64), l.up[i], l.lo[i]));
        let all: Vec<_> = lattice.chain(l.far.iter().copied()).collect();
        let q_up: f64 = all.iter().map(|x| x.1).sum();
        let p_up: f64 = all.iter().map(|x| x.0 * x.1).sum();
        let q_lo: f64 = all.iter().map(|x| x.2).sum();
        let p_lo: f64 = all.iter().map(|x| x.0 * x.2).sum();
        assert!(q_up + l.inf_add >= 1.0 - 1e-12, "{q_up} + {}", l.inf_add);
        assert!(
            p_up + l.inf_remove >= 1.0 - 1e-12,
            "{p_up} + {}",
            l.inf_remove
        );
        assert!(q_lo <= 1.0 + 1e-12 && q_lo > 1.0 - 1e-6, "{q_lo}");
        assert!(p_lo <= 1.0 + 1e-12 && p_lo > 1.0 - 1e-5, "{p_lo}");
        // Both directions' lattice PLDs build from it.
        for dir in [Direction::Remove, Direction::Add] {
            let st = l.step_pld(dir, 2e-3, eta).unwrap();
            assert!(st.ln_up.len() > 10);
        }
    }
}
