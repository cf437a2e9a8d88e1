//! One step's privacy-loss distribution on the lattice {kΔ}, twice: a pessimistic
//! version (its hockey-stick curve lies above the true one for every ε) and an
//! optimistic one (below it). See the module docs of [`super`] for the argument.

use super::gauss::{ln_add, ln_mass, ln_sub, mass, mass_err, Tails, EACH, U};
use crate::engine::math::{exp, exp_m1, ln, ln_1p};

/// Which neighbouring pair: `Remove` is P = (1−q)N(0,σ²) + qN(1,σ²) against Q = N(0,σ²)
/// (the example is in the batch of the first dataset only), `Add` the reverse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Remove,
    Add,
}

/// One step's loss on the lattice: P-masses (in logs) at losses kΔ, k = k_lo…k_lo+len−1.
#[derive(Debug, Clone)]
pub(crate) struct StepPld {
    pub k_lo: i64,
    /// Pessimistic: connect-the-dots inside the range, the left remainder rounded up
    /// to the first point, the right remainder moved to +∞ (`ln_inf`).
    pub ln_up: Vec<f64>,
    pub ln_inf: f64,
    /// Optimistic: bins contracted to their e^L-means, adjacent atoms merged onto
    /// lattice points, leftovers rounded down; the right remainder rounded down to the
    /// last point, the left remainder dropped.
    pub ln_lo: Vec<f64>,
    /// A coarser continuation above the lattice (small q: see [`step_pld_split`]); its
    /// first point is the lattice's last, and the lattice's right remainder is in it.
    pub tail: Option<Coarse>,
}

/// A lattice PLD's continuation on the coarser lattice {k·fΔ}: pessimistic and
/// optimistic P-masses (in logs) at k = k_lo … k_lo + len − 1 (coarse indices).
#[derive(Debug, Clone)]
#[cfg_attr(not(full_engine), allow(dead_code))]
pub(crate) struct Coarse {
    pub f: i64,
    pub k_lo: i64,
    pub ln_up: Vec<f64>,
    pub ln_lo: Vec<f64>,
}

impl StepPld {
    /// The highest lattice index (on Δ) holding mass, the tail's included.
    pub fn k_top(&self) -> i64 {
        match &self.tail {
            Some(t) => (t.k_lo + t.ln_up.len() as i64 - 1) * t.f,
            None => self.k_lo + self.ln_up.len() as i64 - 1,
        }
    }
}

/// The SGM's loss as a function of the Gaussian sample x (remove direction):
/// L(x) = ln(1 − q + q·e^{(2x−1)/(2σ²)}), increasing in x; the add direction's loss
/// is −L(x) with x ∼ N(0, σ²).
pub(crate) fn loss_remove(q: f64, sigma: f64, x: f64) -> f64 {
    let s = (2.0 * x - 1.0) / (2.0 * sigma * sigma);
    if q == 1.0 {
        return s;
    }
    let lq = ln(q);
    if s + lq < -1.0 {
        ln_1p(q * exp_m1(s))
    } else {
        s + lq + ln_1p(exp(ln_1p(-q) - s - lq))
    }
}

/// The x with L(x) = ℓ (remove direction): x = ½ + σ²·ln((e^ℓ − (1−q))/q);
/// −∞ for ℓ ≤ ln(1 − q), the loss's infimum.
#[cfg_attr(not(full_engine), allow(dead_code))]
pub(crate) fn x_of_loss(q: f64, sigma: f64, l: f64) -> f64 {
    XOfLoss::new(q, sigma).at(l)
}

/// [`x_of_loss`] for one (q, σ) at many losses: its two logs of q taken once (a lattice's
/// boundaries took them at every point: MNIST's tight ε 4.17–4.24 → 4.03–4.07 ms, the same
/// bits).
#[derive(Clone, Copy)]
pub(crate) struct XOfLoss {
    s2: f64,
    /// ln(1 − q), ln q; None for q = 1.
    logs: Option<(f64, f64)>,
}

impl XOfLoss {
    pub(crate) fn new(q: f64, sigma: f64) -> XOfLoss {
        XOfLoss {
            s2: sigma * sigma,
            logs: (q != 1.0).then(|| (ln_1p(-q), ln(q))),
        }
    }

    /// The x with L(x) = ℓ ([`x_of_loss`]).
    pub(crate) fn at(&self, l: f64) -> f64 {
        let Some((ln_1mq, ln_q)) = self.logs else {
            return 0.5 + self.s2 * l;
        };
        let d = l - ln_1mq;
        if d <= 0.0 {
            return f64::NEG_INFINITY;
        }
        // ln(e^ℓ − (1−q)) = ℓ + ln(1 − e^{−d}).
        let ln_num = l + ln(-exp_m1(-d));
        0.5 + self.s2 * (ln_num - ln_q)
    }
}

/// The standardized tails of both mixture components at a sample x.
#[derive(Clone, Copy)]
struct Boundary {
    x: f64,
    c0: Tails,
    c1: Tails,
}

impl Boundary {
    fn at(sigma: f64, x: f64) -> Boundary {
        Boundary {
            x,
            c0: Tails::at(x / sigma),
            c1: Tails::at((x - 1.0) / sigma),
        }
    }

    /// [`Boundary::at`] of each x (the same values; the tails' erfcs taken together,
    /// [`Tails::each`]).
    fn each(sigma: f64, xs: impl ExactSizeIterator<Item = f64>) -> Vec<Boundary> {
        let mut out = Vec::with_capacity(xs.len());
        let (mut x, mut zs) = ([0.0; EACH / 2], [0.0; EACH]);
        let mut tails = [Tails::at(f64::INFINITY); EACH];
        let mut xs = xs.peekable();
        while xs.peek().is_some() {
            let mut m = 0;
            for (slot, v) in x.iter_mut().zip(&mut xs) {
                *slot = v;
                m += 1;
            }
            let (x, zs, tails) = (&x[..m], &mut zs[..2 * m], &mut tails[..2 * m]);
            for (z, &x) in zs.chunks_exact_mut(2).zip(x) {
                (z[0], z[1]) = (x / sigma, (x - 1.0) / sigma);
            }
            Tails::each(zs, tails);
            out.extend(
                (x.iter().zip(tails.chunks_exact(2))).map(|(&x, t)| Boundary {
                    x,
                    c0: t[0],
                    c1: t[1],
                }),
            );
        }
        out
    }
}

/// The smallest mixture mass taken in linear space: below it the log path keeps the
/// relative precision subnormals would lose.
const LINEAR_FLOOR: f64 = 1e-280;
/// ln of [`LINEAR_FLOOR`] (a bin's masses taken linearly at or above it).
const LN_LINEAR_FLOOR: f64 = -644.7;
/// Below this spacing a plain SGM bin's connect-the-dots split is taken from its mixture
/// components ([`edge_excess`]).
const PRECISE_SPLIT: f64 = 1e-4;

/// Whether a bin [ℓ_i, ℓ_j] with masses (ln P, ln Q) is taken in linear space: both masses
/// normal numbers and e^ℓ, Q·e^ℓ well inside the range of f64.
fn linear_bin(lp: f64, lq: f64, li: f64, lj: f64) -> bool {
    lp.min(lq) >= LN_LINEAR_FLOOR && li > -100.0 && lj < 600.0
}

/// P and Q of the event a < x ≤ b (a, b as boundaries) as they were taken; `ln_w` = (ln(1 − q),
/// ln q), `w` = (1 − q, q). As numbers (both normal numbers, at least [`LINEAR_FLOOR`]) where
/// both components' masses are normal numbers, else in logs throughout ([`Masses::logs`]
/// gives ln P and ln Q either way). A lattice's bins read the numbers (not e^{ln P}, e^{ln Q})
/// and the ratio's log (not ln P − ln Q): four transcendental calls a bin fewer.
fn masses_as_taken(
    ln_w: (f64, f64),
    w: (f64, f64),
    dir: Direction,
    a: &Boundary,
    b: &Boundary,
) -> Masses {
    if let (Some(m0), Some(m1)) = (mass(a.c0, b.c0), mass(a.c1, b.c1)) {
        let mix = if ln_w.0 == f64::NEG_INFINITY {
            m1
        } else {
            w.0 * m0 + w.1 * m1
        };
        if m0 >= LINEAR_FLOOR && mix >= LINEAR_FLOOR {
            return match dir {
                Direction::Remove => Masses::Lin(mix, m0),
                Direction::Add => Masses::Lin(m0, mix),
            };
        }
    }
    let m0 = ln_mass(a.c0, b.c0);
    let m1 = ln_mass(a.c1, b.c1);
    let mix = if ln_w.0 == f64::NEG_INFINITY {
        m1
    } else {
        ln_add(ln_w.0 + m0, ln_w.1 + m1)
    };
    match dir {
        Direction::Remove => Masses::Logs(mix, m0),
        Direction::Add => Masses::Logs(m0, mix),
    }
}

/// The connect-the-dots split of a bin (ℓ_i, ℓ_j] of a plain SGM step, from its sample-space
/// boundaries `a`, `b` (at ℓ_i, ℓ_j): the excess A = ΔP − e^{ℓ_i}·ΔQ over the left end and the
/// shortfall B = e^{ℓ_j}·ΔQ − ΔP below the right end (ℓ_i gets P-mass B/(e^Δ − 1), ℓ_j gets
/// A·e^Δ/(e^Δ − 1)). Taken from ΔP and ΔQ, both are differences of numbers ≈ ΔQ·e^ℓ that
/// differ by ~Δ of it: relative error ~u/Δ, which T steps multiply (the reason for the old
/// floor 1e-17·T on the spacing, which at q = 1.8e-9, σ = 1.23, T = 7.3·10⁸ sat 5× above the
/// losses' spread). With Y = e^{(2x−1)/(2σ²)} (so that Y·dN(0, σ²) = dN(1, σ²)) and the
/// components' masses m₀, m₁ of the bin, for the remove pair (e^ℓ = 1 − q + qY)
///   A = q·(m₁ − Y_i·m₀),  B = q·(Y_j·m₀ − m₁),
/// and for the add pair (e^ℓ = 1/(1 − q + qY), Y_i at the bin's larger x)
///   A = q·(Y_i·m₀ − m₁)/(1 − q + qY_i),  B = q·(m₁ − Y_j·m₀)/(1 − q + qY_j):
/// differences of numbers that differ by the bin's relative spread in Y, ~Δ·e^ℓ/(qY) — the
/// relative error is ~u·qY/(e^ℓ·Δ), q·Y times smaller where the losses are small.
/// None where a mass is not a normal number or Y overflows (the caller's log path).
///
/// Both ends come *directed*: A raised and B lowered by a bound on their rounding (the masses'
/// [`mass_err`], Y's, the products'), which is the split of an atom raised within its bin — a
/// pessimistic lattice from it stays pessimistic. And the bin's atom for the optimistic
/// lattice, at ρ = ℓ_i + ln(1 + A/(e^{ℓ_i}·ΔQ)) with A lowered by the same bound, ℓ_i the loss at
/// the boundary itself (ln(1 − q + qY_i), negated for the add pair) and its own rounding taken
/// off: a position with an absolute error ~u·Δ. Taken as ln ΔP − ln ΔQ it was ~u·|ln ΔP| —
/// 1e-15 where the losses are 1e-9, which T = 3·10⁸ uses of the one lattice add up (the
/// optimistic lattice of q = 1.537e-9, σ = 0.784 read δ 1.6e-8 above what the exact masses
/// allow at δ ≈ 1e-3).
///
/// A remove-pair bin reaching down to x = −∞ (the lattice's first, whose left end `la` lies at
/// or below the loss's infimum ln(1 − q)) takes Y_i = (e^{ℓ_i} − (1 − q))/q ≤ 0 from that end,
/// so that A and B still split ΔP between the bin's two lattice points; its other infinite
/// ends go to the caller's path.
fn edge_excess(
    q: f64,
    sigma: f64,
    dir: Direction,
    (a, b): (&Boundary, &Boundary),
    la: f64,
) -> Option<Edge> {
    let first = dir == Direction::Remove && a.x == f64::NEG_INFINITY;
    if !(b.x.is_finite() && (a.x.is_finite() || first)) {
        return None;
    }
    let (lo, hi) = match dir {
        Direction::Remove => (a, b),
        Direction::Add => (b, a),
    };
    let m0 = mass(lo.c0, hi.c0)?;
    let m1 = mass(lo.c1, hi.c1)?;
    if m0.min(m1) < LINEAR_FLOOR {
        return None;
    }
    let (e0, e1) = (mass_err(lo.c0, hi.c0), mass_err(lo.c1, hi.c1));
    let arg = |x: f64| (2.0 * x - 1.0) / (2.0 * sigma * sigma);
    // Y and a bound on its absolute error (its exponent's three roundings, the exp's).
    let y = |x: f64| {
        let v = exp(arg(x));
        (v, v * U * (4.0 + 3.0 * arg(x).abs()))
    };
    let (ya, dya) = if first {
        let em = exp_m1(la);
        ((em + q) / q, 4.0 * U * (em.abs() + q) / q)
    } else {
        y(a.x)
    };
    let (yb, dyb) = y(b.x);
    if !(ya * m0).is_finite() || !(yb * m0).is_finite() {
        return None;
    }
    // |error| of q·(m₁ − Y·m₀): the masses', Y's, and the products' and difference's own.
    let err =
        |yv: f64, dy: f64| q * (e1 + yv.abs() * e0 + m0 * dy + 4.0 * U * (m1 + yv.abs() * m0));
    let (ca, cb) = (1.0 - q + q * ya, 1.0 - q + q * yb);
    let ((ea, da), (eb, db), dq) = match dir {
        Direction::Remove => (
            (q * (m1 - ya * m0), err(ya, dya)),
            (q * (yb * m0 - m1), err(yb, dyb)),
            m0,
        ),
        Direction::Add => (
            (q * (ya * m0 - m1) / ca, err(ya, dya) / ca * (1.0 + 4.0 * U)),
            (q * (m1 - yb * m0) / cb, err(yb, dyb) / cb * (1.0 + 4.0 * U)),
            (1.0 - q) * m0 + q * m1,
        ),
    };
    // ℓ_i at the boundary, e^{ℓ_i}, and a bound on ℓ_i's error (Y's through ln(1 − q + qY)).
    let (li, e_li) = match (dir, first) {
        (_, true) => (la, exp(la)),
        (Direction::Remove, false) => (ln_1p(q * (ya - 1.0)), ca),
        (Direction::Add, false) => (-ln_1p(q * (ya - 1.0)), 1.0 / ca),
    };
    let d_li = q * dya / ca + 4.0 * U * (li.abs() + q * ya.abs());
    // The atom's offset in its bin, from A lowered; the denominator's relative error (ΔQ's
    // masses, the products) taken off as well.
    let rel = (e0 + q * e1) / dq + 8.0 * U;
    let x = (ea - da).max(0.0) / (e_li * dq) * (1.0 - rel);
    let off = ln_1p(x) * (1.0 - 4.0 * U);
    Some(Edge {
        ea: (ea + da).max(0.0),
        eb: (eb - db).max(0.0),
        rho: li + off - d_li,
    })
}

/// A bin's directed connect-the-dots split and optimistic atom ([`edge_excess`]): the excess
/// over the left end (raised), the shortfall below the right end (lowered), and the atom's
/// position (lowered), in loss units.
#[derive(Clone, Copy)]
struct Edge {
    ea: f64,
    eb: f64,
    rho: f64,
}

/// The loss range [ℓ_lo, ℓ_hi] outside which P puts at most `eta` on each side:
/// the Gaussian sample x is cut at ±σ·z_η around the component means.
pub(crate) fn loss_range(q: f64, sigma: f64, dir: Direction, eta: f64) -> (f64, f64) {
    let z = z_of_tail(eta);
    match dir {
        Direction::Remove => {
            // x ∼ (1 − q)N(0, σ²) + qN(1, σ²): P(x < −σz) ≤ η, and above x₀ each component
            // holds at most η/2 — (1 − q)Φ̄(x₀/σ) ≤ η/2 and q·Φ̄((x₀ − 1)/σ) ≤ η/2 — so P(x > x₀)
            // ≤ η. (Bounding the mixture by its N(1, σ²) component alone, x₀ = 1 + σz, made the
            // range ~10× too long at q = 1e-6: losses to 0.4 where 0.034 holds all but η.)
            let lo = loss_remove(q, sigma, -sigma * z);
            // (Each at a thousandth of η: the range's end stays far beyond the mass that
            // matters, so the +∞ charge and the optimistic rounding-down stay negligible.)
            let e = 5e-4 * eta;
            let x0 = (sigma * z_of_tail(e))
                .max(1.0 + sigma * z_of_tail((e / q).min(0.25)))
                .min(1.0 + sigma * z);
            let hi = loss_remove(q, sigma, x0);
            (lo, hi)
        }
        Direction::Add => {
            // x ∼ N(0, σ²), loss −L(x): large x gives low loss.
            let lo = -loss_remove(q, sigma, sigma * z);
            let hi = -loss_remove(q, sigma, -sigma * z);
            (lo, hi)
        }
    }
}

/// z with Φ̄(z) = η (η ∈ (0, ½)): the end [`z_of_tail_bisected`] stops at — the least float z
/// with ln Φ̄(z) ≤ ln η, where ln Φ̄ falls from float to float — found in ~8 evaluations of
/// ln Φ̄ instead of ~60: Newton's method on ln Φ̄ from the tail's asymptote, then bisection on a
/// bracket a few floats wide around it. Where no such bracket is found in (10⁻⁶, 40) (η
/// within ~4e-7 of ½, or beyond Φ̄(40)), the bisection itself. The μ-GDP fit inverts Φ̄ at
/// every vertex of its trade-off curve: 14 % of `fdp::gdp` on MNIST went to this inversion.
pub(crate) fn z_of_tail(eta: f64) -> f64 {
    let target = ln(eta.max(1e-300));
    let above = |z: f64| super::gauss::ln_phi_bar(z) > target;
    // Newton on ln Φ̄, whose slope is −φ(z)/Φ̄(z); from √(−2 ln η), above the root in the tail.
    let ln_sqrt_2pi = 0.5 * ln(2.0 * std::f64::consts::PI);
    let mut z = (-2.0 * target).max(0.25).sqrt();
    for _ in 0..12 {
        let l = super::gauss::ln_phi_bar(z);
        let slope = -exp(-0.5 * z * z - ln_sqrt_2pi - l);
        let next = (z - (l - target) / slope).clamp(1e-6, 40.0);
        let done = (next - z).abs() <= 1e-14 * z;
        z = next;
        if done || !z.is_finite() {
            break;
        }
    }
    // A bracket [lo, hi], above(lo) and not above(hi), widening from z by doubling steps.
    let mut step = 8.0 * f64::EPSILON * z;
    let (mut lo, mut hi) = (z, z);
    for _ in 0..60 {
        if !above(lo) {
            hi = lo;
            lo = (z - step).max(1e-6);
        } else if above(hi) {
            lo = hi;
            hi = (z + step).min(40.0);
        } else {
            break;
        }
        step *= 2.0;
    }
    if !(lo.is_finite() && hi.is_finite() && lo < hi && above(lo) && !above(hi))
        || lo <= 1e-6
        || hi >= 40.0
    {
        return z_of_tail_bisected(eta);
    }
    loop {
        let mid = 0.5 * (lo + hi);
        if mid == lo || mid == hi {
            return hi;
        }
        if above(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
}

/// z with Φ̄(z) = η by bisection on ln Φ̄ over [0, 40] (η ∈ (0, ½)); [`z_of_tail`] finds the
/// same end faster.
pub(crate) fn z_of_tail_bisected(eta: f64) -> f64 {
    let target = ln(eta.max(1e-300));
    let (mut lo, mut hi) = (0.0f64, 40.0f64);
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        // Adjacent floats: every further step would leave both ends as they are.
        if mid == lo || mid == hi {
            break;
        }
        if super::gauss::ln_phi_bar(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// Build one step's pessimistic and optimistic lattice PLDs with spacing `d` over
/// [ℓ_lo, ℓ_hi] (widened to lattice points).
pub(crate) fn step_pld(q: f64, sigma: f64, dir: Direction, d: f64, lo: f64, hi: f64) -> StepPld {
    let (k_lo, len) = lattice(d, lo, hi);
    let mut s = lattice_part((q, sigma, dir), (d, 0.0), k_lo, len, (true, true));
    // (The split's relative error is ~u/Δ per step: above Δ = 1e-4 even 10⁹ steps keep it
    // below 1e-3 of δ, and the check would cost MNIST's 12k-point lattices a tenth of a
    // millisecond each.)
    if d < 1e-4 {
        charge_missing_mass(&mut s);
    }
    s
}

/// The most bins the bulk of one step's P may span for [`bulk_offset`] to put a lattice point
/// at it, on the lattices of a whole run (the closed form's small pair keeps 1: there, at
/// q ≈ 1e-9, the offset from Δ > q/8 widened 13 of `--corner`'s 40 brackets, q = 2.299e-9,
/// σ = 0.5908, T = 1.9·10⁸, δ = 5.3e-12 from [0.000672, 0.000712] to [0.000648, 0.000724]).
#[cfg(full_engine)]
pub(crate) const BULK_BINS: f64 = 8.0;

/// The offset o of a remove-pair lattice {kΔ + o} of spacing `d` ([`step_pld_split`]): a
/// point at the bulk of one step's P where that bulk — the losses in (ln(1 − q), 0) — spans
/// at most `bins` bins (Δ > q/bins; [`BULK_BINS`] on a run's lattices), else 0. There the
/// lowest bin's contracted atom (the optimistic lattice's) is the heaviest, with nothing below
/// to balance a merge: it is merged with the losses above it onto the next point, which pulls
/// the whole side of the law down a bin or more (q = 1.5e-5, σ = 0.37: 5.6e-7 of the tilted moment a step, 0.17 in ln δ over
/// 3·10⁵ steps; the bracket stayed 2–3 % wide as Δ shrank). A lattice through the bulk point
/// puts that atom on a point. Where the bulk spans a few bins the loss is second order but
/// still ~10× the pessimistic lattice's gain: at q = 1.916e-5, σ = 0.4954, Δ = q/4 the step's
/// optimistic E_P[e^{2L}] − 1 fell 1.2e-10 below the exact one (a Simpson quadrature in x),
/// 1.1e-10 of it in the merges (the lowest bin's atom dragged the next six onto one point),
/// the pessimistic one 1e-11 above; with the offset 3e-12 below at q = 6.26e-6, σ = 0.4727,
/// Δ = 0.38q (1.5e-11 without). Lattices finer than q/8 resolve the bulk themselves.
/// (Below Δ = q the offset lattice paid off once the ε side kept its better lower measure of
/// the ladder's core∗tail products (its `with_lower`): over the `--mid` draws of
/// `benches/epsilon_sweep.py` 40 of 40 within the rule with both, 31 with that alone, 30 with
/// the offset alone, 26 with neither.)
///
/// The bulk point is the lattice's point 0 (o = ℓ*, not ℓ* less a multiple of Δ), so that it
/// is a point of the coarse part {k·fΔ + o} too: the ladder's products of a core with a tail
/// put the core on the tail's lattice, and a bulk between two coarse points was rounded down
/// there, a first-order loss again (q = 1.3e-5, σ = 0.31, T = 1.4·10⁸ at Δ = 2e-5, where ℓ*
/// was point −1: the lower end 188.1 for ε ≈ 206, with the point at 0 205.6).
#[cfg(full_engine)]
pub(crate) fn bulk_offset(q: f64, sigma: f64, d: f64, bins: f64) -> f64 {
    if d <= q / bins {
        return 0.0;
    }
    bulk_point(q, sigma, d)
}

/// The remove pair's bulk point for a lattice of spacing `d`: ℓ* = ln(P/Q) of the losses
/// ≤ ℓ* + Δ (a fixed point, from the losses ≤ 0).
#[cfg(full_engine)]
fn bulk_point(q: f64, sigma: f64, d: f64) -> f64 {
    let ln_w = (ln_1p(-q), ln(q));
    let w = (1.0 - q, q);
    let far = Boundary::at(sigma, f64::NEG_INFINITY);
    let mean_below = |l: f64| {
        let b = Boundary::at(sigma, x_of_loss(q, sigma, l));
        let (p, qm) = masses_as_taken(ln_w, w, Direction::Remove, &far, &b).logs();
        p - qm
    };
    let mut l = mean_below(0.0);
    for _ in 0..8 {
        let next = mean_below(l + d);
        let done = (next - l).abs() <= 1e-3 * d;
        l = next;
        if done {
            break;
        }
    }
    l
}

/// [`step_pld`] on two resolutions: spacing Δ on [ℓ_lo, b] and f·Δ above, to ℓ_hi (b a
/// point of both lattices). For small q the losses that carry almost all of P are of the
/// order of q, far below the range's end, so the coarse lattice costs the bracket almost
/// nothing while the fine one resolves them (q = 1e-6, σ = 0.6: the range ends near 0.2,
/// where Δ = 2e-7 would need 10⁶ points). Both are the same construction on one lattice
/// with bins of two widths — connect-the-dots and the contraction argue per bin — and the
/// fine part's right remainder is the coarse part's content (rather than +∞'s). Both
/// lattices are {kΔ + o} (`o` = 0, or [`bulk_offset`]): the lattice then holds L' = L − o
/// (P-masses the same, Q-masses e^o times), and the loss of T composed steps is the composed
/// lattice's plus T·o.
#[cfg(full_engine)]
pub(crate) fn step_pld_split(
    q: f64,
    sigma: f64,
    dir: Direction,
    d: f64,
    range: (f64, f64, f64),
    fo: (i64, f64),
) -> StepPld {
    let (mut s, _) = two_parts((q, sigma, dir), d, range, fo, true);
    charge_missing_mass(&mut s);
    s
}

/// The fine part on [ℓ_lo, b] and the coarse part to ℓ_hi of a two-resolution lattice, joined;
/// the P-mass above the coarse part's last point is that part's (`open`: sent to +∞ and rounded
/// down onto it) or left out. With that last point's coarse index.
#[cfg(full_engine)]
fn two_parts(
    (q, sigma, dir): (f64, f64, Direction),
    d: f64,
    (lo, b, hi): (f64, f64, f64),
    (f, o): (i64, f64),
    open: bool,
) -> (StepPld, i64) {
    let big = d * f as f64;
    let kb = ((b - o) / big).ceil() as i64;
    let k_lo = (((lo - o) / d).floor() as i64).min(kb * f - 1);
    let mut s = lattice_part(
        (q, sigma, dir),
        (d, o),
        k_lo,
        (kb * f - k_lo + 1) as usize,
        (true, false),
    );
    let k_hi = (((hi - o) / big).ceil() as i64).max(kb + 1);
    let t = lattice_part(
        (q, sigma, dir),
        (big, o),
        kb,
        (k_hi - kb + 1) as usize,
        (false, open),
    );
    s.ln_inf = t.ln_inf;
    s.tail = Some(Coarse {
        f,
        k_lo: kb,
        ln_up: t.ln_up,
        ln_lo: t.ln_lo,
    });
    (s, k_hi)
}

/// The remove pair's step restricted to its samples x ≤ x_top, on the lattice {kΔ + o} over
/// [ℓ_lo, ℓ_hi] (two resolutions as [`step_pld_split`] where `split` = Some((b, f))): the
/// P-mass above the last point is left out of both measures (neither sent to +∞ nor rounded
/// down) — it is the part of the step its caller treats in closed form. Returns the
/// lattice and x_top, the sample boundary of its last point, computed as the lattice's own
/// bins compute it (so that the two parts partition the line).
#[cfg(full_engine)]
pub(crate) fn step_pld_below(
    q: f64,
    sigma: f64,
    d: f64,
    (lo, hi): (f64, f64),
    split: Option<(f64, i64)>,
    o: f64,
) -> (StepPld, f64) {
    let dir = Direction::Remove;
    // The P-mass of x ≤ x_top, which the pessimistic lattice must carry (as
    // [`charge_missing_mass`]; a little more only raises δ).
    let below =
        |x: f64| 1.0 - (exp(ln_p_between(q, sigma, x, f64::INFINITY)) * (1.0 - 1e-12)).min(1.0);
    let Some((b, f)) = split else {
        let (k_lo, len) = lattice(d, lo - o, hi - o);
        let mut s = lattice_part((q, sigma, dir), (d, o), k_lo, len, (true, false));
        let x_top = x_of_loss(q, sigma, (k_lo + len as i64 - 1) as f64 * d + o);
        charge_missing_mass_to(&mut s, below(x_top));
        return (s, x_top);
    };
    let (mut s, k_hi) = two_parts((q, sigma, dir), d, (lo, b, hi), (f, o), false);
    // (As `lattice_part` computes its boundaries: k·(its spacing) + o.)
    let big = d * f as f64;
    let x_top = x_of_loss(q, sigma, k_hi as f64 * big + o);
    charge_missing_mass_to(&mut s, below(x_top));
    (s, x_top)
}

/// ln P of the remove pair's samples a < x ≤ b (P = (1 − q)N(0, σ²) + qN(1, σ²)), as the
/// lattices' bins take it.
#[cfg(full_engine)]
pub(crate) fn ln_p_between(q: f64, sigma: f64, a: f64, b: f64) -> f64 {
    ln_pq_between(q, sigma, a, b).0
}

/// (ln P, ln Q) of the remove pair's samples a < x ≤ b (Q = N(0, σ²)).
#[cfg(full_engine)]
pub(crate) fn ln_pq_between(q: f64, sigma: f64, a: f64, b: f64) -> (f64, f64) {
    let (ba, bb) = (Boundary::at(sigma, a), Boundary::at(sigma, b));
    masses_as_taken(
        (ln_1p(-q), ln(q)),
        (1.0 - q, q),
        Direction::Remove,
        &ba,
        &bb,
    )
    .logs()
}

/// The lattice PLDs on {kΔ : k_lo ≤ k < k_lo + len}; `open` = (left, right): whether the
/// P-mass below the first / above the last point is this part's (rounded up to the first
/// point and dropped, or sent to +∞ and rounded down to the last point) or another's.
fn lattice_part(
    (q, sigma, dir): (f64, f64, Direction),
    (d, o): (f64, f64),
    k_lo: i64,
    len: usize,
    open: (bool, bool),
) -> StepPld {
    // Sample-space boundary of the loss threshold ℓ_k = kΔ + o.
    let x_of = XOfLoss::new(q, sigma);
    let x_at = |k: i64| -> f64 {
        let l = k as f64 * d + o;
        match dir {
            Direction::Remove => x_of.at(l),
            Direction::Add => x_of.at(-l),
        }
    };
    let at = |i: usize| Boundary::at(sigma, x_at(k_lo + i as i64));
    let ln_w = (ln_1p(-q), ln(q));
    let w = (1.0 - q, q);
    let far_lo = Boundary::at(sigma, f64::NEG_INFINITY);
    let far_hi = Boundary::at(sigma, f64::INFINITY);
    // ln P, ln Q of the loss event (ℓ_a, ℓ_b] from its sample-space boundaries.
    // (The lattice holds L' = L − o: the same P-masses, and Q-masses e^o times theirs, so
    // that P = Q'·e^{L'}.)
    // (As numbers only on a lattice without offset: there they are its masses.)
    let bin = |a: &Boundary, b: &Boundary| {
        let m = match dir {
            Direction::Remove => masses_as_taken(ln_w, w, dir, a, b),
            Direction::Add => masses_as_taken(ln_w, w, dir, b, a),
        };
        match m {
            Masses::Lin(..) if o == 0.0 => m,
            Masses::Lin(p, q) => Masses::Logs(ln(p), ln(q) + o),
            Masses::Logs(lp, lq) => Masses::Logs(lp, lq + o),
        }
    };
    // The split from the components where u/Δ would show ([`edge_excess`]; at MNIST's
    // spacings the plain one is as good and cheaper).
    // (Its atom's position moved onto the lattice's losses L' = L − o.)
    let split = |a: &Boundary, b: &Boundary, la: f64| {
        if d < PRECISE_SPLIT {
            let e = edge_excess(q, sigma, dir, (a, b), la)?;
            Some(Edge {
                rho: e.rho - o - 2.0 * U * o.abs(),
                ..e
            })
        } else {
            None
        }
    };
    let left_p = match dir {
        _ if !open.0 => f64::NEG_INFINITY,
        Direction::Remove => bin(&far_lo, &at(0)).ln_p(),
        Direction::Add => bin(&far_hi, &at(0)).ln_p(),
    };
    let right_p = match dir {
        _ if !open.1 => f64::NEG_INFINITY,
        Direction::Remove => bin(&at(len - 1), &far_hi).ln_p(),
        Direction::Add => bin(&at(len - 1), &far_lo).ln_p(),
    };
    // The bins of a range of them, from their boundaries (computed once for the range).
    let piece = |r: std::ops::Range<usize>| {
        let bounds = Boundary::each(sigma, (r.start..r.end + 1).map(|i| x_at(k_lo + i as i64)));
        move |i: usize| {
            let (a, b) = (&bounds[i - r.start], &bounds[i + 1 - r.start]);
            let la = (k_lo + i as i64) as f64 * d + o;
            Bin {
                m: bin(a, b),
                split: split(a, b, la),
            }
        }
    };
    // (A coarse continuation — `open.0` false — holds a falling law: merged downwards.)
    from_bin_pieces(d, k_lo, len, piece, (left_p, right_p), !open.0)
}

/// The pessimistic lattice must carry all of P. Its masses are sums of Gaussian interval
/// masses, each with a small relative error, and where a bin's losses sit far below Δ's
/// rounding scale the connect-the-dots split of a bin cancels (its ends are differences of
/// nearly equal numbers, relative error ~u/Δ): at q = 1e-8, σ = 10, Δ = 1e-8 each step
/// lost 6e-9 of P, which T = 10⁹ steps turned into 99.7 % of the composed mass, and the
/// "upper" bound fell below the truth (ε = 0 where the central limit gives 5.7e-6). A
/// lattice whose total (Neumaier's compensated sum) falls short of 1 is scaled up to 1 —
/// the shortfall spread over its points as the errors are, relative to each mass.
fn charge_missing_mass(s: &mut StepPld) {
    charge_missing_mass_to(s, 1.0);
}

/// [`charge_missing_mass`] for a lattice that must carry `total` of P (a part of the step).
fn charge_missing_mass_to(s: &mut StepPld, total: f64) {
    let (mut sum, mut comp) = (0.0f64, 0.0f64);
    let tail = s.tail.iter().flat_map(|t| t.ln_up.iter());
    for x in s
        .ln_up
        .iter()
        .chain(tail)
        .chain([&s.ln_inf])
        .map(|l| exp(*l))
    {
        let t = sum + x;
        comp += if sum.abs() >= x.abs() {
            (sum - t) + x
        } else {
            (x - t) + sum
        };
        sum = t;
    }
    let deficit = total - (sum + comp);
    if deficit > 0.0 && deficit < total {
        let shift = -ln_1p(-deficit);
        let tail = s.tail.iter_mut().flat_map(|t| t.ln_up.iter_mut());
        for l in s.ln_up.iter_mut().chain(tail) {
            *l += shift;
        }
    }
}

/// The lattice {kΔ : k_lo ≤ k < k_lo + len} covering [lo, hi].
pub(crate) fn lattice(d: f64, lo: f64, hi: f64) -> (i64, usize) {
    let k_lo = (lo / d).floor() as i64;
    let k_hi = ((hi / d).ceil() as i64).max(k_lo + 1);
    (k_lo, (k_hi - k_lo + 1) as usize)
}

mod bins;
#[cfg(full_engine)]
pub(crate) use bins::from_bins;
use bins::{from_bin_pieces, Bin, Masses};
#[cfg(any(full_engine, test))]
pub(crate) use bins::{merge_atoms, merge_atoms_falling};
#[cfg(test)]
use bins::{round_down_last, sweep};

#[cfg(test)]
mod tests;
