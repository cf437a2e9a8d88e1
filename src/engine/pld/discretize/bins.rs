//! From a step's bins to its two lattices: each bin's connect-the-dots split onto its two
//! lattice points (the pessimistic lattice, in halves on two threads natively) and its
//! optimistic atom, the atoms merged onto the points (the optimistic lattice).

use super::*;
use crate::engine::math::{exp, exp_m1, ln, ln_each};

/// Both lattice PLDs from the masses of the loss events: `bin(i)` = (ln P, ln Q) of
/// ℓ ∈ (ℓ_i, ℓ_{i+1}], `left_p` / `right_p` the P-mass below ℓ_0 / above the last point.
#[cfg(full_engine)]
pub(crate) fn from_bins(
    d: f64,
    k_lo: i64,
    len: usize,
    bin: impl Fn(usize) -> (f64, f64),
    left_p: f64,
    right_p: f64,
) -> StepPld {
    let with_none = |i: usize| {
        let (lp, lq) = bin(i);
        Bin {
            m: Masses::Logs(lp, lq),
            split: None,
        }
    };
    from_bins_split(d, k_lo, len, with_none, (left_p, right_p), false)
}

/// One bin (ℓ_i, ℓ_{i+1}] as [`pess_bins`] reads it.
#[derive(Clone, Copy)]
pub(super) struct Bin {
    pub m: Masses,
    /// The bin's directed connect-the-dots split and optimistic atom ([`edge_excess`]), taken
    /// instead of the ones from its masses.
    pub split: Option<Edge>,
}

/// A bin's P- and Q-mass as they were taken.
#[derive(Clone, Copy)]
pub(super) enum Masses {
    /// As numbers, both at least [`LINEAR_FLOOR`].
    Lin(f64, f64),
    /// ln P, ln Q.
    Logs(f64, f64),
}

impl Masses {
    /// ln P.
    pub(super) fn ln_p(self) -> f64 {
        match self {
            Masses::Lin(p, _) => ln(p),
            Masses::Logs(lp, _) => lp,
        }
    }

    /// (ln P, ln Q).
    #[cfg(full_engine)]
    pub(super) fn logs(self) -> (f64, f64) {
        match self {
            Masses::Lin(p, q) => (ln(p), ln(q)),
            Masses::Logs(lp, lq) => (lp, lq),
        }
    }
}

/// [`from_bins`] from [`Bin`]s; `falling`: the optimistic atoms merged downwards
/// ([`merge_atoms_falling`]).
fn from_bins_split(
    d: f64,
    k_lo: i64,
    len: usize,
    bin: impl Fn(usize) -> Bin,
    ends: (f64, f64),
    falling: bool,
) -> StepPld {
    let c = BinConsts::new(d, k_lo);
    let (mut up, mut ln_up, mut atoms) = pessimistic_vecs(len, ends.0);
    let last = pess_bins(
        &c,
        0,
        &bin,
        &mut up[..len - 1],
        &mut ln_up[..len - 1],
        &mut atoms,
    );
    add_to_point(&mut up[len - 1], &mut ln_up[len - 1], last);
    finish_points(&up, &mut ln_up);
    with_optimistic(&c, ln_up, &atoms, ends.1, falling)
}

/// [`from_bins_split`] with the bins computed piece by piece: `piece(r)` gives the bins of the
/// index range r (it may first compute what they share: their boundaries). Natively a large
/// lattice's two halves go to two threads (the calling one and one spawned), each computing
/// its boundaries, its bins, their split onto the points and those points' logs; the point
/// where the halves meet takes the lower half's share first, as the bins in order do, so the
/// bits are the same either way. (Before, the boundaries and then the bins each went to two
/// threads and their split onto the points ran after them on one: MNIST's tight ε 4.03–4.07
/// → 3.88–3.90 ms in a one-run probe.) rayon's pool was slower (`rayon::join` from outside
/// it, the caller waiting on both halves): `pld_mnist` 5.4 ms against 4.3 ms spawned and 5.2
/// ms on one thread. The wasm has no threads: one piece.
pub(super) fn from_bin_pieces<B: Fn(usize) -> Bin>(
    d: f64,
    k_lo: i64,
    len: usize,
    piece: impl Fn(std::ops::Range<usize>) -> B + Sync,
    ends: (f64, f64),
    falling: bool,
) -> StepPld {
    let bins = len - 1;
    #[cfg(not(target_arch = "wasm32"))]
    if bins >= SPLIT_BINS {
        let c = BinConsts::new(d, k_lo);
        let (mut up, mut ln_up, mut atoms) = pessimistic_vecs(len, ends.0);
        let mid = bins / 2;
        let (up_lo, up_hi) = up.split_at_mut(mid);
        let (ln_lo, ln_hi) = ln_up.split_at_mut(mid);
        let (at_lo, at_hi) = atoms.split_at_mut(mid);
        let (c, piece) = (&c, &piece);
        let (to_mid, to_last) = std::thread::scope(|sc| {
            let upper = sc.spawn(move || {
                let (up, ln_up) = (&mut up_hi[..bins - mid], &mut ln_hi[..bins - mid]);
                let last = pess_bins(c, mid, &piece(mid..bins), up, ln_up, at_hi);
                // (The first point, where the halves meet, once both shares are in.)
                finish_points(&up[1..], &mut ln_up[1..]);
                last
            });
            let to_mid = pess_bins(c, 0, &piece(0..mid), up_lo, ln_lo, at_lo);
            finish_points(up_lo, ln_lo);
            match upper.join() {
                Ok(last) => (to_mid, last),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        // The meeting point: the lower half's bin first, then the upper's (their sum and
        // ln_add commute, and the first share of each went onto 0 or −∞ exactly).
        let (mut u, mut l) = (0.0, f64::NEG_INFINITY);
        add_to_point(&mut u, &mut l, to_mid);
        add_to_point(&mut u, &mut l, (up[mid], ln_up[mid]));
        (up[mid], ln_up[mid]) = (u, l);
        add_to_point(&mut up[len - 1], &mut ln_up[len - 1], to_last);
        for k in [mid, len - 1] {
            finish_points(&up[k..=k], &mut ln_up[k..=k]);
        }
        return with_optimistic(c, ln_up, &atoms, ends.1, falling);
    }
    from_bins_split(d, k_lo, len, piece(0..bins), ends, falling)
}

/// Bins at least this many are split over two threads ([`from_bin_pieces`]).
#[cfg(not(target_arch = "wasm32"))]
const SPLIT_BINS: usize = 8191;

/// A lattice's spacing and start, with the two constants its bins' split reads.
struct BinConsts {
    d: f64,
    k_lo: i64,
    /// ln(1 − e^{−Δ}), e^Δ − 1.
    ln_1m_e_md: f64,
    e_d_m1: f64,
}

impl BinConsts {
    fn new(d: f64, k_lo: i64) -> BinConsts {
        BinConsts {
            d,
            k_lo,
            ln_1m_e_md: ln(-exp_m1(-d)),
            e_d_m1: exp_m1(d),
        }
    }
}

/// The pessimistic lattice's linear and log masses and the bins' atoms, empty (ln_up[0] the
/// P-mass below the first point).
fn pessimistic_vecs(len: usize, left_p: f64) -> (Vec<f64>, Vec<f64>, Vec<Atom>) {
    let mut ln_up = vec![f64::NEG_INFINITY; len];
    ln_up[0] = left_p;
    (
        vec![0.0f64; len],
        ln_up,
        vec![(f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NAN); len - 1],
    )
}

/// A bin's optimistic atom as [`pess_bins`] leaves it: (ln Q, ρ, Q) — ρ as [`merge_atoms`]
/// takes it, Q as a number where the bin had it (then ln Q is NaN, taken only if a sweep in
/// logs needs it), else NaN and ln Q (−∞ for an empty bin).
type Atom = (f64, f64, f64);

/// The atom at position ρ of a bin with masses `m` (its Q as the bin has it).
fn atom_of(m: Masses, rho: f64) -> Atom {
    match m {
        Masses::Lin(_, q) => (f64::NAN, rho, q),
        Masses::Logs(_, lq) => (lq, rho, f64::NAN),
    }
}

/// A point's share from a bin (linear, log) added to its masses.
fn add_to_point(up: &mut f64, ln_up: &mut f64, (u, l): (f64, f64)) {
    *up += u;
    *ln_up = ln_add(*ln_up, l);
}

/// The bins `first, first + 1, …` (as many as `atoms` holds) split onto their points: `up` and
/// `ln_up` hold the points `first, …` (as many), `atoms` gets each bin's optimistic atom; the
/// share of the point after the last bin is returned (linear, log).
fn pess_bins(
    c: &BinConsts,
    first: usize,
    bin: &impl Fn(usize) -> Bin,
    up: &mut [f64],
    ln_up: &mut [f64],
    atoms: &mut [Atom],
) -> (f64, f64) {
    let (d, k_lo, e_d_m1, ln_1m_e_md) = (c.d, c.k_lo, c.e_d_m1, c.ln_1m_e_md);
    let n = atoms.len();
    // The share of the point after the last bin.
    let mut after = (0.0f64, f64::NEG_INFINITY);
    // The last linear bin's right end and its e^ℓ.
    let mut edge: Option<(f64, f64)> = None;
    for (j, atom) in atoms.iter_mut().enumerate() {
        let i = first + j;
        let Bin { m, split } = bin(i);
        let (li, lj) = bin_edges(k_lo, i, d);
        if let Masses::Logs(lp, lq) = m {
            if lq == f64::NEG_INFINITY || lp == f64::NEG_INFINITY {
                continue;
            }
        }
        // The bin's shares of its left point (j) and of its right one (j + 1, or `after`).
        let (left, right): ((f64, f64), (f64, f64));
        if let Some(e) = split {
            left = (e.eb / e_d_m1, f64::NEG_INFINITY);
            right = (e.ea * (1.0 + e_d_m1) / e_d_m1, f64::NEG_INFINITY);
            *atom = atom_of(m, e.rho);
        } else {
            // Else ρ = ln(ΔP/ΔQ), within `err` of the masses' own ratio (the ratio's and the
            // log's rounding, or the two logs' and their difference's, and the mixture's and its
            // weights' before them): the pessimistic split takes the atom that much higher, the
            // optimistic one that much lower.
            let (rho, err) = match m {
                Masses::Lin(p, q) => {
                    let rho = ln(p / q);
                    (rho, 4.0 * U * (rho.abs() + 8.0))
                }
                Masses::Logs(lp, lq) => (lp - lq, 4.0 * U * (lp.abs() + lq.abs() + 8.0)),
            };
            *atom = atom_of(m, rho - err);
            // Pessimistic (connect the dots): Q-mass λ·ΔQ to ℓ_i, (1−λ)·ΔQ to ℓ_{i+1}
            // with λ = (e^{ℓ_{i+1}} − e^ρ)/(e^{ℓ_{i+1}} − e^{ℓ_i}); P-mass = Q-mass·e^ℓ.
            // e^ρ: the bin's Q-weighted mean of e^L = ΔP/ΔQ, inside [e^{ℓ_i}, e^{ℓ_{i+1}}].
            let lin = match m {
                Masses::Lin(p, q) => (li > -100.0 && lj < 600.0).then_some((p, q)),
                Masses::Logs(lp, lq) => linear_bin(lp, lq, li, lj).then(|| (exp(lp), exp(lq))),
            };
            if let Some((p, q)) = lin {
                // Linear: with P' = ΔQ·e^ρ (ΔP clamped to the bin), ℓ_i gets
                // (ΔQ·e^{ℓ_{i+1}} − P')/(e^Δ − 1) and ℓ_{i+1} gets (P' − ΔQ·e^{ℓ_i})·e^Δ/(e^Δ − 1);
                // they add up to P'. (e^{ℓ_i} is the last bin's e^{ℓ_{i+1}} where that was taken.)
                let ei = match edge {
                    Some((l, e)) if l == li => e,
                    _ => exp(li),
                };
                let ej = exp(lj);
                edge = Some((lj, ej));
                let p = (p * (1.0 + 2.0 * err)).clamp(q * ei, q * ej);
                left = ((q * ej - p).max(0.0) / e_d_m1, f64::NEG_INFINITY);
                right = (
                    (p - q * ei).max(0.0) * (1.0 + e_d_m1) / e_d_m1,
                    f64::NEG_INFINITY,
                );
            } else {
                let lq = match m {
                    Masses::Lin(_, q) => ln(q),
                    Masses::Logs(_, lq) => lq,
                };
                let rho = (rho + err).clamp(li, lj);
                let ln_a = lq + ln(-exp_m1(rho - lj)) - ln_1m_e_md;
                let ln_b = lq + rho + ln(-exp_m1(li - rho)) - lj - ln_1m_e_md;
                left = (0.0, ln_a + li);
                right = (0.0, ln_b + lj);
            }
        }
        add_to_point(&mut up[j], &mut ln_up[j], left);
        if j + 1 < n {
            add_to_point(&mut up[j + 1], &mut ln_up[j + 1], right);
        } else {
            add_to_point(&mut after.0, &mut after.1, right);
        }
    }
    after
}

/// The points' linear masses taken into their logs (the logs [`EACH`] at a time,
/// [`ln_each`]: the same bits).
fn finish_points(up: &[f64], ln_up: &mut [f64]) {
    let mut buf = [0.0; EACH];
    for (up, ln_up) in up.chunks(EACH).zip(ln_up.chunks_mut(EACH)) {
        let logs = &mut buf[..up.len()];
        logs.copy_from_slice(up);
        ln_each(logs);
        for ((l, &u), &lu) in ln_up.iter_mut().zip(up).zip(logs.iter()) {
            if u > 0.0 {
                *l = ln_add(*l, lu);
            }
        }
    }
}

/// Both lattices from the pessimistic one's logs and the bins' atoms: the optimistic lattice
/// (each bin contracted to one atom, atoms merged onto lattice points), the right remainder
/// `right_p` at +∞ on the pessimistic one and rounded down onto the last point on the other.
fn with_optimistic(
    c: &BinConsts,
    ln_up: Vec<f64>,
    bins: &[Atom],
    right_p: f64,
    falling: bool,
) -> StepPld {
    let (d, k_lo, len) = (c.d, c.k_lo, ln_up.len());
    // An atom with Q as a number came from a bin with both masses at least LINEAR_FLOOR, as
    // [`linear_atoms`] asks: only the lattice's range is left to check.
    let n = bins.len() as i64;
    let (l0, l1) = (k_lo as f64 * d, (k_lo + n) as f64 * d);
    let linear = (bins.iter()).all(|&(lq, rho, q)| {
        if q.is_nan() {
            lq == f64::NEG_INFINITY || linear_bin(lq + rho, lq, l0, l1)
        } else {
            l0 > -100.0 && l1 < 600.0
        }
    });
    // (ln Q, ρ) of every atom, once, where a sweep in logs or the falling one reads them.
    let pairs: Vec<(f64, f64)> = if linear && !falling {
        Vec::new()
    } else {
        (bins.iter())
            .map(|&(lq, rho, q)| (if q.is_nan() { lq } else { ln(q) }, rho))
            .collect()
    };
    let swept = if linear {
        let at = |i: usize| match bins[i] {
            (_, rho, q) if !q.is_nan() => (q, rho),
            (lq, rho, _) => (linear_q(lq), rho),
        };
        sweep_linear(bins.len(), at, k_lo, d, true)
    } else {
        sweep_ln(&pairs, k_lo, d, true)
    };
    let mut ln_lo = round_down_last(swept);
    if falling {
        let atoms = &pairs[..];
        // Both sweeps give valid optimistic lattices: the one that lost less of E_P[L] (each
        // merge keeps E_Q[e^L] and lowers E_P[L] only to second order, a round-down to first).
        // Downwards wins where a carry could not be balanced (see [`merge_atoms_falling`]);
        // upwards where the last carry, the first coarse bin's and the heaviest, would be
        // rounded down a whole coarse spacing (q = 1e-6, σ = 0.6, T = 10⁸: [0.121812, 0.122014]
        // with it always downwards, 0.17 % wide, against [0.121893, 0.121969]).
        let down = merge_atoms_falling(atoms, k_lo, d);
        let mean = |v: &[f64]| -> f64 {
            (v.iter().enumerate())
                .filter(|(_, l)| **l > f64::NEG_INFINITY)
                .map(|(i, l)| exp(*l) * (k_lo + i as i64) as f64)
                .sum()
        };
        if mean(&down) > mean(&ln_lo) {
            ln_lo = down;
        }
    }
    // Right remainder: rounded down onto the last point (optimistic).
    ln_lo[len - 1] = ln_add(ln_lo[len - 1], right_p);
    StepPld {
        k_lo,
        ln_up,
        ln_inf: right_p,
        ln_lo,
        tail: None,
    }
}

/// The optimistic lattice from one atom per bin: `atoms[i]` = (ln Q, ρ) of the contents of
/// bin [ℓ_i, ℓ_{i+1}] (ℓ_i = (k_lo + i)Δ; ln Q = −∞ for an empty bin): its Q-mass and its
/// position ρ = ln(P/Q), the E_Q[e^L]-mean of the bin (a contraction, so a post-processing of
/// the pair; P = Q·e^ρ). The position is given, not taken as ln P − ln Q, whose rounding is
/// ~u·|ln P| — far above Δ's where the losses are tiny ([`edge_excess`]). A carried atom (left
/// of ℓ_i) is merged with the next bin's atom (right of ℓ_i) onto the lattice point just right
/// of the carry; whichever of the two has mass left goes on being merged with the next atoms;
/// the last carry is rounded down (P-mass kept). Returns ln P-masses on the atoms.len() + 1
/// lattice points.
///
/// Every merge is directed: the Q-mass taken from the atom above the point is rounded up (that
/// of the carry, when the atom above is used up, down), so the merged atom's mean is at or
/// above the point it is put on — moved down, never up. The gaps e^{ℓ_t} − e^ρ are taken as
/// e^{ℓ_t}·expm1(ρ − ℓ_t), to the relative precision of ρ − ℓ_t (as differences of e^ℓ ≈ 1
/// they had an absolute error ~u, a relative ~u/Δ).
#[cfg(any(full_engine, test))]
pub(crate) fn merge_atoms(atoms: &[(f64, f64)], k_lo: i64, d: f64) -> Vec<f64> {
    round_down_last(sweep(atoms, k_lo, d, linear_atoms(atoms, k_lo, d), true))
}

/// An upward sweep's lattice with its last carry rounded down to its bin's left point
/// (P-mass e^{ln Q + ρ} kept).
pub(super) fn round_down_last((mut out, last): (Vec<f64>, Option<Carry>)) -> Vec<f64> {
    if let Some((lq, rho, b)) = last {
        out[b] = ln_add(out[b], lq + rho);
    }
    out
}

/// [`merge_atoms`] swept downwards, for a falling law: a carried atom (right of ℓ_i) is merged
/// with the atom below onto the carry's own left point ℓ_i, and the last carry is rounded down.
/// Swept upwards, a law whose atoms sit near their bins' left ends, each lighter than the last,
/// never balances its carry, which drags every atom above onto one point: a step's coarse part
/// at q = 4.9e-9, σ = 0.4 (from 1.2e-4 to losses of 4, spacing 2.3e-4) kept no P-mass above
/// losses of 1e-3 — the rare large losses that decide δ there — and no lower bound was found.
/// Downwards the carry is the lighter atom and the heavier one below balances it. The sweep is
/// the upward one on the mirrored pair (P ↔ Q, ℓ → −ℓ: merging onto a point is the same
/// contraction for the pair and its reverse), with its merges directed the other way (a mean
/// at or below the mirrored point is at or above the point), but for the last round-down,
/// which is down here.
pub(crate) fn merge_atoms_falling(atoms: &[(f64, f64)], k_lo: i64, d: f64) -> Vec<f64> {
    let n = atoms.len();
    // Mirrored bin j is bin n − 1 − j, mirrored point j is point n − j; the mirrored atom's
    // "Q-mass" is the P-mass here, e^{ln Q + ρ}, at −ρ.
    let mirrored: Vec<(f64, f64)> = (atoms.iter().rev())
        .map(|&(lq, rho)| (lq + rho, -rho))
        .collect();
    let k_m = -(k_lo + n as i64);
    let (back, last) = sweep(&mirrored, k_m, d, linear_atoms(&mirrored, k_m, d), false);
    let mut out = vec![f64::NEG_INFINITY; n + 1];
    for (j, &lq) in back.iter().enumerate() {
        let i = n - j;
        out[i] = ln_add(out[i], lq + (k_lo + i as i64) as f64 * d);
    }
    // The mirrored carry (ln Q', ρ', j) holds P-mass e^{ln Q'} in bin n − 1 − j: down onto its
    // left point.
    if let Some((lp, _, j)) = last {
        let i = n - 1 - j;
        out[i] = ln_add(out[i], lp);
    }
    out
}

/// Whether the merges may go in linear space: every atom's masses normal numbers and e^ℓ over
/// the lattice (the common case: no log per merge); else logs throughout. (The range is the
/// whole lattice's, empty bins included: a carry may land anywhere.)
fn linear_atoms(atoms: &[(f64, f64)], k_lo: i64, d: f64) -> bool {
    let n = atoms.len() as i64;
    let (l0, l1) = (k_lo as f64 * d, (k_lo + n) as f64 * d);
    (atoms.iter()).all(|&(lq, rho)| lq == f64::NEG_INFINITY || linear_bin(lq + rho, lq, l0, l1))
}

/// A sweep's last carry: (ln Q-mass, position ρ, bin index).
type Carry = (f64, f64, usize);

/// The losses at the ends of bin i, between lattice points k_lo + i and k_lo + i + 1.
fn bin_edges(k_lo: i64, i: usize, d: f64) -> (f64, f64) {
    (
        (k_lo + i as i64) as f64 * d,
        (k_lo + i as i64 + 1) as f64 * d,
    )
}

/// The factors a merge's two Q-masses are rounded by: (the atom above's share, the carry's
/// share), so that the merged atom's mean is at or above its point (`up`) or at or below it.
fn directed(up: bool) -> (f64, f64) {
    let g = 8.0 * U;
    if up {
        (1.0 + g, 1.0 - g)
    } else {
        (1.0 - g, 1.0 + g)
    }
}

/// The upward sweep of [`merge_atoms`] (in linear space or in logs): ln P-masses on the
/// lattice points, and the last carry, not yet placed. `up`: the merges' direction
/// ([`directed`]).
pub(super) fn sweep(
    atoms: &[(f64, f64)],
    k_lo: i64,
    d: f64,
    linear: bool,
    up: bool,
) -> (Vec<f64>, Option<Carry>) {
    if linear {
        let at = |i: usize| (linear_q(atoms[i].0), atoms[i].1);
        sweep_linear(atoms.len(), at, k_lo, d, up)
    } else {
        sweep_ln(atoms, k_lo, d, up)
    }
}

/// An atom's Q-mass as a number from its log (0 for an empty bin's −∞).
fn linear_q(lq: f64) -> f64 {
    if lq == f64::NEG_INFINITY {
        0.0
    } else {
        exp(lq)
    }
}

/// [`merge_atoms`]'s upward sweep in linear space over `n` atoms, `at(i)` = (Q-mass as a
/// number, 0 for an empty bin; ρ): the merges with Q-masses as numbers (P-mass at ℓ_t =
/// Q-mass·e^{ℓ_t}); ln of the sums at the end, and the last carry.
fn sweep_linear(
    n: usize,
    at: impl Fn(usize) -> (f64, f64),
    k_lo: i64,
    d: f64,
    up: bool,
) -> (Vec<f64>, Option<Carry>) {
    let (g_need, g_used) = directed(up);
    let mut lo = vec![0.0f64; n + 1];
    let mut carry: Option<(f64, f64, usize)> = None;
    for i in 0..n {
        let (q, rho) = at(i);
        if q == 0.0 {
            continue;
        }
        let (li, lj) = bin_edges(k_lo, i, d);
        let mut next = (q, rho.clamp(li, lj), i);
        if let Some((cq, crho, ci)) = carry.take() {
            let t = ci + 1;
            let lt = (k_lo + t as i64) as f64 * d;
            let xt = exp(lt);
            // The gaps (e^{ℓ_t} − e^{ρ_c}, e^{ρ_n} − e^{ℓ_t}) over e^{ℓ_t}.
            let left = if crho >= lt { 0.0 } else { -exp_m1(crho - lt) };
            let right = if next.1 <= lt {
                0.0
            } else {
                exp_m1(next.1 - lt)
            };
            carry = if left <= 0.0 {
                // The carried atom sits on ℓ_t already.
                lo[t] += cq * xt;
                None
            } else if right <= 0.0 {
                // The next atom sits on ℓ_t: it goes there whole; the carry waits.
                lo[t] += next.0 * xt;
                next.0 = 0.0;
                Some((cq, crho, ci))
            } else {
                // Q-mass needed from the next atom to balance all of the carry at ℓ_t.
                let need = cq * left / right * g_need;
                if need <= next.0 {
                    lo[t] += (cq + need) * xt;
                    next.0 -= need;
                    None
                } else {
                    // All of the next atom, and the part of the carry it balances.
                    let used = (next.0 * right / left * g_used).min(cq);
                    lo[t] += (used + next.0) * xt;
                    next.0 = 0.0;
                    let rest = cq - used;
                    (rest > 0.0).then_some((rest, crho, ci))
                }
            };
        }
        if carry.is_none() && next.0 > 0.0 {
            carry = Some(next);
        }
    }
    let last = carry.map(|(cq, crho, ci)| (ln(cq), crho, ci));
    // ln of each sum (ln 0 = −∞; [`ln_each`]: the same bits as one at a time).
    for v in lo.iter_mut().filter(|v| v.is_nan() || **v <= 0.0) {
        *v = 0.0;
    }
    ln_each(&mut lo);
    (lo, last)
}

/// [`sweep_linear`] in logs (atoms below the linear floor, or e^ℓ out of range).
fn sweep_ln(atoms: &[(f64, f64)], k_lo: i64, d: f64, up: bool) -> (Vec<f64>, Option<Carry>) {
    let g = directed(up);
    let g = (ln(g.0), ln(g.1));
    let mut ln_lo = vec![f64::NEG_INFINITY; atoms.len() + 1];
    let mut carry: Option<Carry> = None;
    for (i, &(lq, rho)) in atoms.iter().enumerate() {
        if lq == f64::NEG_INFINITY {
            continue;
        }
        let (li, lj) = bin_edges(k_lo, i, d);
        let mut atom = (lq, rho.clamp(li, lj), i);
        if let Some(c) = carry.take() {
            carry = merge(&mut ln_lo, (d, k_lo, g), c, &mut atom);
        }
        if carry.is_none() && atom.0 > f64::NEG_INFINITY {
            carry = Some(atom);
        }
    }
    (ln_lo, carry)
}

/// Merge the carried atom c = (ln Q-mass, position ρ_c, its bin index ci) with `next`
/// (position ≥ ℓ_{ci+1}) into one point mass exactly at ℓ_{ci+1}, the lattice point
/// just right of the carry: a post-processing of the pair (two atoms → their weighted
/// mean), so the result stays dominated by the true pair; `g`: ln of [`directed`]'s factors.
/// Returns the carry still unbalanced (when `next` was too light to balance all of it;
/// `next` is then used up), or None (then what is left of `next` becomes the new carry).
fn merge(
    ln_lo: &mut [f64],
    (d, k_lo, g): (f64, i64, (f64, f64)),
    c: (f64, f64, usize),
    next: &mut (f64, f64, usize),
) -> Option<(f64, f64, usize)> {
    let (cq, crho, ci) = c;
    let t = ci + 1;
    let lt = (k_lo + t as i64) as f64 * d;
    let (nq, nrho, _) = *next;
    if crho >= lt {
        // The carried atom sits on ℓ_t already.
        ln_lo[t] = ln_add(ln_lo[t], cq + lt);
        return None;
    }
    if nrho <= lt {
        // The next atom sits on ℓ_t: it goes there whole; the carry waits for the next.
        ln_lo[t] = ln_add(ln_lo[t], nq + lt);
        next.0 = f64::NEG_INFINITY;
        return Some(c);
    }
    // ln of the gaps in e^ℓ over e^{ℓ_t}: 1 − e^{ρ_c − ℓ_t} and e^{ρ_n − ℓ_t} − 1.
    let ln_left_gap = ln(-exp_m1(crho - lt));
    let ln_right_gap = ln(exp_m1(nrho - lt));
    // Q-mass needed from the next atom to balance all of the carry at ℓ_t.
    let need = cq + ln_left_gap - ln_right_gap + g.0;
    if need <= nq {
        ln_lo[t] = ln_add(ln_lo[t], ln_add(cq, need) + lt);
        next.0 = ln_sub(nq, need);
        None
    } else {
        // All of the next atom, and the part of the carry it balances.
        let used = (nq + ln_right_gap - ln_left_gap + g.1).min(cq);
        ln_lo[t] = ln_add(ln_lo[t], ln_add(used, nq) + lt);
        next.0 = f64::NEG_INFINITY;
        let rest = ln_sub(cq, used);
        (rest > f64::NEG_INFINITY).then_some((rest, crho, ci))
    }
}
