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
    /// P-mass at +∞ of each direction (remove, add): the event A and what lies outside
    /// every window.
    inf_remove: f64,
    inf_add: f64,
}

/// The per-coordinate lattices of V = e^Y, Y ∼ N(−s²/2, s²), on {jh}, j = 0 … len − 1,
/// truncated at H: (ln up-masses, lo-masses (linear), P(V > H), E[V; V > H]).
fn coordinate(s: f64, h: f64, cap: f64) -> (Vec<f64>, Vec<f64>, f64, f64) {
    let (m, m1) = (-0.5 * s * s, 0.5 * s * s);
    let len = (cap / h).ceil() as usize + 1;
    let at = |j: usize| {
        let x = j as f64 * h;
        let lx = if j == 0 { f64::NEG_INFINITY } else { x.ln() };
        (Tails::at((lx - m) / s), Tails::at((lx - m1) / s))
    };
    let mut ln_up = vec![f64::NEG_INFINITY; len];
    let mut atoms: Vec<(f64, f64)> = Vec::new();
    let (mut j, mut edge) = (0usize, at(0));
    while j + 1 < len {
        // Bin width: h up to V_FINE, then doubling with V (ends stay on the lattice).
        let x = j as f64 * h;
        let w = if x < V_FINE {
            1
        } else {
            1usize << ((x / V_FINE).log2().floor() as u32 + 1).min(40)
        };
        let k = (j + w).min(len - 1);
        let next = at(k);
        // ln P(a < V ≤ b) and ln E[V; a < V ≤ b] (the latter is a Gaussian mass too: E V = 1).
        let (ln_m, ln_pm) = (ln_mass(edge.0, next.0), ln_mass(edge.1, next.1));
        if ln_m > f64::NEG_INFINITY {
            let (a, b) = (j as f64, k as f64);
            // The bin's mean, in lattice units, inside [a, b].
            let mu = ((ln_pm - ln_m).exp() / h).clamp(a, b);
            let span = b - a;
            ln_up[j] = super::gauss::ln_add(ln_up[j], ln_m + ((b - mu) / span).ln());
            ln_up[k] = super::gauss::ln_add(ln_up[k], ln_m + ((mu - a) / span).ln());
            atoms.push((ln_m.exp(), mu));
        }
        j = k;
        edge = next;
    }
    let l_top = ((len - 1) as f64 * h).ln();
    let tail = |mean: f64| super::gauss::ln_phi_bar((l_top - mean) / s).exp();
    (ln_up, merge_linear(&atoms, len), tail(m), tail(m1))
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

impl Law {
    /// The law of W for σ (s = 1/σ) and t steps per epoch, on a lattice of spacing h in
    /// the sum S = tW, with P-mass at most `eta` sent to +∞ by the cap.
    pub(crate) fn new(sigma: f64, t: u64, h: f64, eta: f64) -> Result<Law, Error> {
        let s = 1.0 / sigma;
        let tf = t as f64;
        // Cap: (t + 1)·Φ̄((ln H − s²/2)/s) ≤ η bounds both directions' mass from A (any cap
        // is certified, its mass is at +∞; below 1e-17 per epoch it no longer matters for
        // the δ ≥ 1e-15 we resolve, and a smaller one would widen the sum's FFT for nothing).
        let z = z_of_tail((0.5 * eta.max(1e-17) / (tf + 1.0)).min(0.25));
        let cap = (0.5 * s * s + s * z).exp().max(4.0 * h);
        let bins = (cap / h).min(V_FINE / h + 64.0 * (cap / V_FINE).log2().max(0.0));
        if !super::compose::spend(super::POINT_WORK * 2.0 * bins + cap / h) {
            return Err(Error::PldBudget {
                reason: super::WORK_SPENT,
            });
        }
        if cap / h > (MAX_SUM_FFT * 4) as f64 {
            return Err(Error::PldBudget {
                reason: "random allocation: the log-normal's range needs more lattice points than the budget",
            });
        }
        let (ln_up, lo, p_cap, pm_cap) = coordinate(s, h, cap);
        let ln_lo: Vec<f64> = lo.iter().map(|&x| x.ln()).collect();
        let step = StepPld {
            k_lo: 0,
            ln_up,
            ln_inf: f64::NEG_INFINITY,
            ln_lo,
        };
        let phase = [CPhase {
            pld: &step,
            steps: tf,
        }];
        // Tilts: the plain sum, one toward the left tail (the add direction's large
        // losses) and a mild one toward the right (bounded by the cap's e^{λH}).
        let var_v = (s * s).exp_m1();
        let sd = (tf * var_v).sqrt() / h;
        let alias = (1e-3 * eta).max(1e-300);
        let too_wide = |e: super::compose::TooWide| Error::PldBudget {
            reason: if e.needed.is_infinite() {
                super::WORK_SPENT
            } else {
                "random allocation: the sum of the log-normals is too wide for the largest FFT"
            },
        };
        let mut wins = Vec::new();
        for lam in [0.0, -8.0 / (sd * h)] {
            wins.push((
                lam,
                power(&phase, lam, h, MAX_SUM_FFT, alias).map_err(too_wide)?,
            ));
        }
        // The right tilt (the remove direction's large losses, small δ) within the plain
        // sum's window: the capped log-normal's heavy tail, tilted, can need one twice as
        // wide, so the tilt is halved until it fits.
        let right = (8.0 / (sd * h)).min(12.0 / cap);
        let fit = [1.0, 0.5, 0.25, 0.125].iter().find_map(|f| {
            power(&phase, right * f, h, wins[0].1.n, alias)
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
                let untilt = |ln_scale: f64| (ln_scale - lam * k as f64 * h).exp();
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
                right = right.min(alias * (w.ln_scale_up - lam * edge).exp());
            }
            if *lam <= 0.0 {
                let edge = w.k0.max(0) as f64 * h;
                left = left.min(alias * (w.ln_scale_up - lam * edge).exp());
            }
        }
        // W ≤ H beyond the windows (every V ≤ H), and W's mass there is at most the bound.
        let outside_p_remove = right * cap + left;
        let outside_p_add = right + left;
        let a_remove = pm_cap + (tf - 1.0) * p_cap;
        let a_add = tf * p_cap;
        Ok(Law {
            h,
            t: tf,
            k_lo: lo_k,
            up,
            lo: low,
            inf_remove: a_remove + outside_p_remove,
            inf_add: a_add + outside_p_add,
        })
    }

    /// W at lattice index K.
    fn w(&self, k: i64) -> f64 {
        k as f64 * self.h / self.t
    }

    /// One epoch's lattice PLDs for a direction on the loss lattice {kΔ}, the loss range
    /// cut where each side's P-mass falls below `eta` (that remainder rounded up onto the
    /// first point or sent to +∞; the lower drops or rounds it down).
    pub(crate) fn step_pld(&self, dir: Direction, d: f64, eta: f64) -> Result<StepPld, Error> {
        // (loss, P, Q) of every lattice point of W with mass, in loss order.
        let point = |i: usize, m: f64| -> (f64, f64, f64) {
            let w = self.w(self.k_lo + i as i64);
            match dir {
                Direction::Remove => (w.ln(), w * m, m),
                Direction::Add => (-w.ln(), m, w * m),
            }
        };
        let n = self.up.len();
        let order: Vec<usize> = match dir {
            Direction::Remove => (0..n).collect(),
            Direction::Add => (0..n).rev().collect(),
        };
        let mut inf = match dir {
            Direction::Remove => self.inf_remove,
            Direction::Add => self.inf_add,
        };
        // W = 0 (only when the lattice starts at 0): remove loss −∞ (no P-mass), add +∞.
        let usable: Vec<usize> = order
            .into_iter()
            .filter(|&i| {
                if self.k_lo + i as i64 > 0 {
                    return true;
                }
                if dir == Direction::Add {
                    inf += self.up[i];
                }
                false
            })
            .collect();
        // The range: where the upper P-mass left of it and right of it each stay ≤ η.
        let p_of = |i: usize| point(i, self.up[i]).1;
        let total: f64 = usable.iter().map(|&i| p_of(i)).sum();
        if total.is_nan() || total <= 0.0 {
            return Err(Error::PldBudget {
                reason: "random allocation: the law of the loss has no mass on its lattice",
            });
        }
        let (mut a, mut acc) = (0usize, 0.0);
        while a + 1 < usable.len() && acc + p_of(usable[a]) <= eta {
            acc += p_of(usable[a]);
            a += 1;
        }
        let (mut b, mut acc) = (usable.len() - 1, 0.0);
        while b > a && acc + p_of(usable[b]) <= eta {
            acc += p_of(usable[b]);
            b -= 1;
        }
        let (lo, hi) = (point(usable[a], 1.0).0, point(usable[b], 1.0).0);
        let (k_lo, len) = lattice(d, lo, hi);
        if len as f64 > super::MAX_STEP_POINTS {
            return Err(Error::PldBudget {
                reason: "the loss range needs more lattice points than the budget",
            });
        }
        // Bins (ℓ_i, ℓ_{i+1}] of both measures, and what falls left or right of the range.
        let mut bins_up = vec![(0.0f64, 0.0f64); len - 1];
        let mut bins_lo = vec![(0.0f64, 0.0f64); len - 1];
        let (mut left_up, mut right_up, mut right_lo) = (0.0, 0.0, 0.0);
        for &i in &usable {
            let (l, pu, qu) = point(i, self.up[i]);
            let (_, pl, ql) = point(i, self.lo[i]);
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
        let ln2 = |(p, q): (f64, f64)| (p.ln(), q.ln());
        let upper = from_bins(
            d,
            k_lo,
            len,
            |i| ln2(bins_up[i]),
            left_up.ln(),
            (right_up + inf).ln(),
        );
        let lower = from_bins(
            d,
            k_lo,
            len,
            |i| ln2(bins_lo[i]),
            f64::NEG_INFINITY,
            right_lo.ln(),
        );
        Ok(StepPld {
            k_lo,
            ln_up: upper.ln_up,
            ln_inf: upper.ln_inf,
            ln_lo: lower.ln_lo,
        })
    }
}

/// (σ, t, h, η) as bits.
type LawKey = (u64, u64, u64, u64);

/// Laws kept: a query's fine and coarse lattices (the add direction is first tried four
/// times coarser) and a refinement's.
const KEPT: usize = 4;

thread_local! {
    /// The last laws built (both directions and every refinement at one spacing share
    /// one; a repeated query finds its own). Keyed exactly, so an answer does not depend
    /// on what was asked before.
    static LAST: std::cell::RefCell<Vec<(LawKey, std::rc::Rc<Law>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The law of W for σ, t steps per epoch and loss spacing Δ: its sum lattice is
/// h = √t·Δ/2, so the spread it adds to W's variance, h²/(4t), is a sixteenth of Δ²/4.
pub(crate) fn law(sigma: f64, t: u64, d: f64, eta: f64) -> Result<std::rc::Rc<Law>, Error> {
    // Few steps per epoch put W's left tail (the add direction's large losses) near 0,
    // where the spread's mass at V = 0 is a loss of +∞: h keeps P(V ≤ h)^t ≤ η/100.
    let s = 1.0 / sigma;
    let z = z_of_tail((0.01 * eta).max(1e-300).powf(1.0 / t as f64).min(0.25));
    let h_left = (-0.5 * s * s - s * z).exp();
    let h = (0.5 * (t as f64).sqrt() * d).min(h_left);
    let key = (sigma.to_bits(), t, h.to_bits(), eta.to_bits());
    let found = LAST.with(|c| {
        c.borrow()
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, l)| l.clone())
    });
    if let Some(l) = found {
        return Ok(l);
    }
    let l = std::rc::Rc::new(Law::new(sigma, t, h, eta)?);
    LAST.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= KEPT {
            c.remove(0);
        }
        c.push((key, l.clone()));
    });
    Ok(l)
}

/// Forget the cached law (a benchmark's cold call).
pub(crate) fn forget_law() {
    LAST.with(|c| c.borrow_mut().clear());
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
            let cap = (0.5 * s * s + 8.0 * s).exp();
            let (ln_up, lo, p_cap, pm_cap) = coordinate(s, h, cap);
            let mass: f64 = ln_up.iter().map(|l| l.exp()).sum();
            let mean: f64 = ln_up
                .iter()
                .enumerate()
                .map(|(j, l)| l.exp() * j as f64 * h)
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
}
