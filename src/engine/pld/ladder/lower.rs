//! The ladder's lower measure: bins, the contraction of atoms onto lattice points, and
//! products' lower measures.

use super::*;
use crate::engine::math::{exp, exp_m1, ln, ln_1p};
use crate::engine::pld::compose::Work;

/// How [`contract`] cuts a measure into coarse bins before contracting each to one atom.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Bins {
    /// [cD, (c + 1)D): the lattice's own bins.
    Left,
    /// [cD − D/2, cD + D/2): bins centred on the coarse points. A bin of a smooth law then
    /// contracts to an atom near its point, so merging it onto the lattice moves little mass
    /// (second order in D); a left bin's atom sits inside its bin, and where the law falls
    /// (the top of a core spilled into a coarse tail) the atoms above are too light to
    /// balance it and it is rounded down — first order ([`settle`]).
    Centred,
}

impl Bins {
    /// How far a bin's start lies below its coarse point, in fine points (`factor` of them a bin).
    pub(super) fn shift(self, factor: i64) -> i64 {
        match self {
            Bins::Left => 0,
            Bins::Centred => factor / 2,
        }
    }
}

/// Re-discretize onto the lattice of spacing m·Δ (`up` by connect-the-dots, `lo` by
/// contraction and merging).
pub(super) fn coarsen(x: &Part, factor: i64, lambda: f64, w: &Work) -> Part {
    coarsen_in(x, factor, lambda, Bins::Left, w)
}

/// [`coarsen`], the lower measure contracted in `bins`.
pub(super) fn coarsen_in(x: &Part, factor: i64, lambda: f64, bins: Bins, w: &Work) -> Part {
    if factor == 1 || x.is_empty() {
        let mut p = x.clone();
        p.d *= factor as f64;
        return p;
    }
    let (d, big) = (x.d, x.d * factor as f64);
    // Logs and exps per point: ~20 FFT units each (the budget is only checked by conv).
    w.charge(20.0 * x.len() as f64);
    let c0 = x.k0.div_euclid(factor);
    let c1 = (x.end() - 1).div_euclid(factor) + 1;
    let len = (c1 - c0 + 1) as usize;
    let em = exp_m1(big);
    // Connect the dots per offset r within a coarse bin, in tilted units: an atom at
    // L = ℓ_c + r·Δ sends the share (e^D − e^{rΔ})/(e^D − 1) of its Q-mass to ℓ_c and the
    // rest to ℓ_{c+1}; its tilted weight changes by e^{(1+λ)(ℓ − L)}.
    let coef: Vec<(f64, f64)> = (0..factor)
        .map(|r| {
            let off = r as f64 * d;
            let lam = (em - exp_m1(off)) / em;
            let a = exp(-(1.0 + lambda) * off) * lam;
            let b = exp((1.0 + lambda) * (big - off)) * (exp_m1(off) / em);
            (a, b)
        })
        .collect();
    let mut up = vec![0.0; len];
    for (i, &w) in x.up.iter().enumerate() {
        let k = x.k0 + i as i64;
        let c = (k.div_euclid(factor) - c0) as usize;
        let (a, b) = coef[k.rem_euclid(factor) as usize];
        up[c] += w * a;
        up[c + 1] += w * b;
    }
    let grow = 1.0 + (2.0 * factor as f64 + 16.0) * U;
    up.iter_mut().for_each(|v| *v *= grow);
    // Lower: each coarse bin's atoms contracted to one, then merged onto lattice points.
    let atoms: Vec<(f64, f64)> = (contract(x, factor, lambda, bins).iter().enumerate())
        .map(|(c, &(p, off))| {
            let rho = (c0 + c as i64) as f64 * big + off;
            (p - rho, rho)
        })
        .collect();
    let ln_lo = merge_atoms(&atoms, c0, big);
    let (lo, ln_s_lo) = from_logs(&ln_lo, c0, lambda, big, 1.0 - 64.0 * U);
    let mut p = Part {
        d: big,
        k0: c0,
        up,
        lo,
        ln_s_up: x.ln_s_up,
        ln_s_lo,
    };
    p.tidy();
    p
}

/// Per coarse bin c (spacing D = factor·Δ, from ⌊k0/factor⌋ on: one more than the bins), the
/// P-mass of `lo`'s atoms in it and where their contraction sits in it: (ln P, ρ − cD), one
/// atom at ρ = ln(P/Q) (a post-processing of the pair). The offset is taken from the bin's own
/// sums, ln(1 + Σ p·(1 − e^{−rΔ})/Σ p·e^{−rΔ}) (r an atom's place from the bin's point), to
/// the precision of its terms, and rounded down (the atom moved down: still a lower measure);
/// as ln P − ln Q of ln-masses ~|λ·kΔ| and more it had an absolute error ~u·|ln P|, which the
/// composition's T/2^j uses of a level add up.
///
/// With [`Bins::Centred`] the atoms are contracted per centred bin (r ∈ [−D/2, D/2), terms of
/// both signs: the error bound is on the sum of their moduli), and each contracted atom goes
/// to the lattice bin it lies in; two that land in one (from the centred bins either side of
/// its left point) are contracted again into one — a post-processing too — at
/// −ln(Σ P·e^{−off}/Σ P), a mean of terms of one sign, rounded down.
pub(super) fn contract(x: &Part, factor: i64, lambda: f64, bins: Bins) -> Vec<(f64, f64)> {
    let c0 = x.k0.div_euclid(factor);
    let len = ((x.end() - 1).div_euclid(factor) + 1 - c0) as usize;
    let big = x.d * factor as f64;
    let half = bins.shift(factor);
    let mut atoms = vec![(f64::NEG_INFINITY, 0.0); len];
    // (ln w − λrΔ per atom of a bin, and its r.)
    let mut bin: Vec<(f64, f64)> = Vec::with_capacity(factor as usize);
    // (e^{−rΔ} − 1 and e^{−rΔ} for the factor offsets r ∈ [−half, factor − half), once per
    // call where there are fewer offsets than points — the same bits as per atom, where
    // they were two of its three transcendental calls.)
    let at_offset = |r: f64| (exp_m1(-r * x.d), exp(-r * x.d));
    let table: Option<Vec<(f64, f64)>> = (factor as usize <= x.lo.len()).then(|| {
        (-half..factor - half)
            .map(|r| at_offset(r as f64))
            .collect()
    });
    let mut flush = |c: i64, bin: &mut Vec<(f64, f64)>| {
        let m = bin.iter().map(|b| b.0).fold(f64::NEG_INFINITY, f64::max);
        if m > f64::NEG_INFINITY {
            let (mut a, mut above, mut size, mut q) = (0.0, 0.0, 0.0, 0.0);
            for &(lw, r) in bin.iter() {
                let w = exp(lw - m);
                let (e, e_r) = match &table {
                    Some(t) => t[(r as i64 + half) as usize],
                    None => at_offset(r),
                };
                a += w;
                above -= w * e;
                size += w * e.abs();
                q += w * e_r;
            }
            // Sums of n terms (error ≤ (n + 2)u of the sum of their moduli each) and one
            // ratio; with left bins every term is positive and the error relative.
            let n = bin.len() as f64;
            let ratio = above / q;
            let lp = x.ln_s_lo - lambda * c as f64 * big + m + ln(a);
            let (at, off) = if half == 0 {
                (c, ln_1p(ratio) * (1.0 - (2.0 * n + 10.0) * U))
            } else {
                let off = ln_1p(ratio);
                let off =
                    off - (2.0 * n + 10.0) * U * (size / q) / (1.0 + ratio) - 4.0 * U * off.abs();
                // (Every atom of the lowest bin sits at or above c0·D: an offset rounded
                // below 0 there stays at c0·D, at or below its true place.)
                if off >= 0.0 || c == c0 {
                    (c, off.max(0.0))
                } else {
                    // Below the bin's point: in the lattice bin below, at D + off.
                    (c - 1, ((big + off) * (1.0 - 2.0 * U)).max(0.0))
                }
            };
            let i = (at - c0) as usize;
            let off = off.clamp(0.0, big);
            atoms[i] = match atoms[i] {
                (f64::NEG_INFINITY, _) => (lp, off),
                other => contract_pair((lp, off), other, big),
            };
        }
        bin.clear();
    };
    let mut cur: Option<i64> = None;
    for (i, &w) in x.lo.iter().enumerate() {
        let k = x.k0 + i as i64;
        let c = (k + half).div_euclid(factor);
        if cur != Some(c) {
            if let Some(done) = cur {
                flush(done, &mut bin);
            }
            cur = Some(c);
        }
        if w > 0.0 {
            let r = (k - c * factor) as f64;
            bin.push((ln(w) - lambda * r * x.d, r));
        }
    }
    if let Some(done) = cur {
        flush(done, &mut bin);
    }
    atoms
}

/// Two atoms (ln P, offset in one lattice bin of width `big`) contracted into one at their
/// E_Q[e^L]-mean, −ln(Σ P·e^{−off}/Σ P): a mean of expm1s of one sign, rounded down.
pub(super) fn contract_pair(
    (lp, off): (f64, f64),
    (lp2, off2): (f64, f64),
    big: f64,
) -> (f64, f64) {
    let mx = lp.max(lp2);
    let (w1, w2) = (exp(lp - mx), exp(lp2 - mx));
    let y = (w1 * exp_m1(-off) + w2 * exp_m1(-off2)) / (w1 + w2);
    (
        ln_add(lp, lp2),
        (-ln_1p(y) * (1.0 - 16.0 * U)).clamp(0.0, big),
    )
}

/// `x`'s lower measure on the lattice of spacing factor·Δ as contracted atoms, for a
/// product contracted after it is formed ([`lower_product`]): per coarse bin c, `lo` holds
/// its P-mass a(c) and `up` its Q-mass times e^{cD}, b(c) = a(c)·e^{−(ρ − cD)} (tilted as
/// masses at cD; b ≤ a), both on one scale, b computed from a (rounded up: the atom only moves
/// down), so that the ratio a/b is ρ − cD to the last few ulps.
pub(super) fn contracted(x: &Part, factor: i64, lambda: f64, bins: Bins) -> Part {
    if x.is_empty() {
        return Part::empty(x.d * factor as f64);
    }
    let big = x.d * factor as f64;
    let c0 = x.k0.div_euclid(factor);
    let atoms = contract(x, factor, lambda, bins);
    let ln_a: Vec<f64> = atoms.iter().map(|&(p, _)| p).collect();
    let (lo, ln_s) = from_logs(&ln_a, c0, lambda, big, 1.0 - 64.0 * U);
    let up = (lo.iter().zip(&atoms))
        .map(|(&a, &(_, off))| a * exp(-off) * (1.0 + 4.0 * U))
        .collect();
    let mut p = Part {
        d: big,
        k0: c0,
        up,
        lo,
        ln_s_up: ln_s,
        ln_s_lo: ln_s,
    };
    p.tidy();
    p
}

/// A lower measure whose atoms sit on lattice points (a(k) = b(k) = its P-mass), in the form
/// of [`contracted`].
pub(super) fn on_points(x: &Part) -> Part {
    if x.lo.iter().all(|&v| v <= 0.0) {
        return Part::empty(x.d);
    }
    let mut p = Part {
        up: x.lo.clone(),
        ln_s_up: x.ln_s_lo,
        ..x.clone()
    };
    p.tidy();
    p
}

/// The lower measure of a product of a lattice measure `t` (atoms on its points) and the
/// contracted atoms `c` of a finer one ([`contracted`]), contracted per coarse bin after it
/// is formed, then merged onto lattice points. A bin m of the product gathers t(k)∗c(m − k):
/// its P-mass is Σ_k t(k)·a(m − k) and its Q-mass e^{−mD}·Σ_k t(k)·b(m − k) (a lattice point
/// kD times a bin's atom at cD + r lands at mD + r), so both are convolutions, and the atom
/// of bin m sits at mD + ln(Σ t·a / Σ t·b). Contracting the finer factor first instead put
/// a narrow core — one step's law, a spike far narrower than the tail's spacing — onto one
/// lattice point, rounding its whole mean down in every core∗tail product (module docs,
/// "Two resolutions"). The convolutions' `lo` ends give P-masses from below and their `up`
/// ends Q-masses from above: an atom with less P and more Q only lowers δ (at every ε, and
/// composed with anything), and merging is a post-processing. Returns the first lattice
/// index, the tilted masses and their ln scale.
pub(super) fn lower_product(z: &Part, lambda: f64) -> (i64, Vec<f64>, f64) {
    // One scale for both ends, so that their ratio is the atom's place in its bin: [`on_points`]
    // and [`contracted`] form their parts so, and [`add`], [`conv`] and [`Part::tidy`] keep
    // equal scales equal.
    debug_assert_eq!(
        z.ln_s_lo, z.ln_s_up,
        "a contracted product's two scales differ"
    );
    let d = z.d;
    let atoms: Vec<(f64, f64)> = (0..z.len())
        .map(|i| {
            let m = (z.k0 + i as i64) as f64 * d;
            if z.lo[i] <= 0.0 || z.up[i] <= 0.0 {
                return (f64::NEG_INFINITY, f64::NEG_INFINITY);
            }
            let ln_p = ln(z.lo[i]) + z.ln_s_lo - lambda * m;
            // ρ − mD = ln(P/(Q·e^{mD})) ∈ [0, D] exactly: from the ratio lo/up on their one
            // scale ([`contracted`]), ln(1 + (lo − up)/up) to a few ulps of itself, rounded down;
            // below 0 (the FFT's floors, directed, make lo low and up high) the atom is put at
            // mD, at or below it (the true atom lies in the bin).
            let r = ln_1p((z.lo[i] - z.up[i]) / z.up[i]) * (1.0 - 8.0 * U);
            let r = r.clamp(0.0, d);
            (ln_p - m - r, m + r)
        })
        .collect();
    // Swept upwards and downwards (a falling tail's atoms, each lighter than the last, never
    // balance an upward carry: [`merge_atoms_falling`]); the one with the larger tilted
    // moment is kept (either is a lower measure).
    let up = merge_atoms(&atoms, z.k0, d);
    let down = merge_atoms_falling(&atoms, z.k0, d);
    let moment = |v: &[f64]| {
        let w = crate::engine::pld::compose::tilted_logs(v, z.k0, lambda, d);
        let mx = w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        mx + ln(w.iter().map(|&x| exp(x - mx)).sum::<f64>())
    };
    let ln_lo = if moment(&down) > moment(&up) {
        down
    } else {
        up
    };
    let (lo, ln_s) = from_logs(&ln_lo, z.k0, lambda, d, 1.0 - 64.0 * U);
    (z.k0, lo, ln_s)
}

/// `tail` (a product's `up`, and a lower measure formed by coarsening its finer factor
/// first) with the lower measure of `z` ([`lower_product`]) in its place where that one has
/// the larger tilted moment at the composition's tilt — and, where the composition's far tail
/// is read too ([`Lowering::KeepingFar`]: the closed form's small pair, whose profile reads
/// δ far out), at one more tilt of λ as well; either is a lower measure of the same product.
/// Contracting after the product wins where one factor's law is narrow against a coarse bin
/// (a step's spike at tiny q: q = 5.35e-9, σ = 0.36, T = 5·10⁸); coarsening first kept more
/// of the far tail at q = 1e-4, σ = 1, T = 10⁵ (δ near 1e-14 at ε = 0.33), where the moment at
/// the tilt alone chose the other.
///
/// The ε side reads its composition at the tilt only ([`Lowering::AtTilt`]). There the far
/// test threw away the better measure where the composed core is a spike on a coarse point
/// (the offset lattice of [`crate::engine::pld::discretize::bulk_offset`]): at q = 6.26e-6, σ = 0.4727,
/// T = 4.5·10⁸, δ = 5.42e-9 the core∗tail products of the first five squarings lost
/// 1.3e-5…1.8e-4 of their lower measure's moment coarsening the core first (the other kept all
/// but ~4e-7 of it), ~0.2 in ln δ over the run: [7.886382, 7.952654], 0.83 %; at the tilt
/// alone [7.948984, 7.952654].
pub(super) fn with_lower(tail: Part, z: &Part, lambda: f64, w: &Work) -> Part {
    if z.is_empty() || tail.is_empty() {
        return tail;
    }
    let (k_lo, lo, ln_s_lo) = lower_product(z, lambda);
    let ln_moment = |v: &[f64], ln_s: f64| ln_s + ln(v.iter().sum::<f64>());
    // The same at twice the tilt (the far tail: a profile reads δ there from this composition).
    let ln_far = |v: &[f64], ln_s: f64, k0: i64| {
        let w: Vec<f64> = (v.iter().enumerate())
            .map(|(i, &x)| ln(x) + lambda.max(1.0) * (k0 + i as i64) as f64 * tail.d)
            .collect();
        let mx = w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        ln_s + mx + ln(w.iter().map(|&x| exp(x - mx)).sum::<f64>())
    };
    let keep_far = w.lowers_after() == Some(Lowering::KeepingFar);
    if ln_moment(&lo, ln_s_lo) <= ln_moment(&tail.lo, tail.ln_s_lo)
        || (keep_far && ln_far(&lo, ln_s_lo, k_lo) <= ln_far(&tail.lo, tail.ln_s_lo, tail.k0))
    {
        return tail;
    }
    let k0 = tail.k0.min(k_lo);
    let end = tail.end().max(k_lo + lo.len() as i64);
    let n = (end - k0) as usize;
    let mut up = vec![0.0; n];
    let mut new_lo = vec![0.0; n];
    let a = (tail.k0 - k0) as usize;
    up[a..a + tail.len()].copy_from_slice(&tail.up);
    let b = (k_lo - k0) as usize;
    new_lo[b..b + lo.len()].copy_from_slice(&lo);
    let mut p = Part {
        d: tail.d,
        k0,
        up,
        lo: new_lo,
        ln_s_up: tail.ln_s_up,
        ln_s_lo,
    };
    // (`lo` beyond `up`'s support is dropped by tidy: dropping lower mass is safe.)
    p.tidy();
    p
}
