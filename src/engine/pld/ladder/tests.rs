use super::super::discretize::{loss_range, step_pld, Direction};
use super::*;
use crate::engine::math::{exp, exp_m1, ln, ln_1p, sin};

/// `up` at least `inner.0` and `lo` at most `inner.1`, to a relative 1e-12.
pub(super) fn assert_outside((up, lo): (f64, f64), inner: (f64, f64), at: &str) {
    assert!(
        up >= inner.0 * (1.0 - 1e-12),
        "{at}: up {up:e} < {:e}",
        inner.0
    );
    assert!(
        lo <= inner.1 * (1.0 + 1e-12),
        "{at}: lo {lo:e} > {:e}",
        inner.1
    );
}

/// δ(ε) of a part's upper and lower measures (untilted).
fn delta_of(p: &Part, lambda: f64, eps: f64) -> (f64, f64) {
    let mut du = 0.0;
    let mut dl = 0.0;
    for i in 0..p.len() {
        let l = (p.k0 + i as i64) as f64 * p.d;
        if l <= eps {
            continue;
        }
        let w = -exp_m1(eps - l);
        du += exp(ln(p.up[i]) + p.ln_s_up - lambda * l) * w;
        dl += exp(ln(p.lo[i]) + p.ln_s_lo - lambda * l) * w;
    }
    (du, dl)
}

/// Re-discretizing a lattice PLD to a coarser lattice keeps the upper measure's δ
/// above and the lower's below the finer ones', at every ε and tilt.
#[test]
fn coarsening_keeps_the_bracket_order() {
    let w = &crate::engine::pld::compose::Work::new(f64::INFINITY);
    for (q, s, dir) in [
        (1e-4, 0.6, Direction::Remove),
        (0.01, 1.0, Direction::Remove),
        (0.01, 1.0, Direction::Add),
    ] {
        let d = 1e-4;
        let (lo, hi) = loss_range(q, s, dir, 1e-14);
        let pld = step_pld(q, s, dir, d, lo, hi);
        for lambda in [0.0, 5.0, 40.0] {
            let (up, su) = from_logs(&pld.ln_up, pld.k_lo, lambda, d, 1.0);
            let (lw, sl) = from_logs(&pld.ln_lo, pld.k_lo, lambda, d, 1.0);
            let fine = Part {
                d,
                k0: pld.k_lo,
                up,
                lo: lw,
                ln_s_up: su,
                ln_s_lo: sl,
            };
            for f in [2, 16, 256] {
                let c = coarsen(&fine, f, lambda, w);
                for eps in [-0.01, 0.0, 0.001, 0.01, 0.05, 0.3, 1.0, 3.0] {
                    let (fu, fl) = delta_of(&fine, lambda, eps);
                    let (cu, cl) = delta_of(&c, lambda, eps);
                    let at = format!("{q} {s} {dir:?} λ {lambda} f {f} ε {eps}");
                    assert_outside((cu, cl), (fu, fl), &at);
                }
            }
        }
    }
}

/// A coarse bin's contracted atom sits at or below the true E_Q[e^L]-mean of its atoms, to
/// a few ulps of its offset, however large the measure's ln scale and tilt: one atom per
/// bin (its mean is its own point) at losses ~1e-9, ln scale −700, λ = 50. Taken as
/// ln P − ln Q of those ln-masses the offsets were off by ~1e-13 — a hundred times the
/// spacing, some of them upwards.
#[test]
fn contracted_atoms_sit_at_or_below_their_mean() {
    let (d, f, lambda) = (1e-12, 8i64, 50.0);
    let n = 4000usize;
    // Atom i at point k0 + i, kept only where i % 8 == i / 8 % 8 (one per coarse bin).
    let k0 = 1000i64;
    let lo: Vec<f64> = (0..n)
        .map(|i| {
            let keep = (i % 8) == (i / 8) % 8;
            if keep {
                0.5 + 0.5 * sin((i as f64) * 0.37).abs()
            } else {
                0.0
            }
        })
        .collect();
    let x = Part {
        d,
        k0,
        up: lo.clone(),
        lo,
        ln_s_up: -700.0,
        ln_s_lo: -700.0,
    };
    let c0 = k0.div_euclid(f);
    let mut seen = 0;
    for (c, &(lp, off)) in contract(&x, f, lambda, Bins::Left).iter().enumerate() {
        if lp == f64::NEG_INFINITY {
            continue;
        }
        let k = (k0..k0 + n as i64)
            .find(|&k| k.div_euclid(f) == c0 + c as i64 && x.lo[(k - k0) as usize] > 0.0)
            .unwrap();
        let exact = k.rem_euclid(f) as f64 * d;
        assert!(off <= exact, "bin {c}: offset {off:e} above {exact:e}");
        assert!(
            off >= exact * (1.0 - 1e-12) - 1e-30,
            "bin {c}: offset {off:e}, exact {exact:e}"
        );
        // Its P-mass: the atom's own.
        let want = ln(x.lo[(k - k0) as usize]) - 700.0 - lambda * k as f64 * d;
        assert!(
            (lp - want).abs() <= 1e-12 * want.abs(),
            "bin {c}: {lp} vs {want}"
        );
        seen += 1;
    }
    assert!(seen > 400);
}

/// Centred bins: each atom sits at or below the E_Q[e^L]-mean of what it stands for — the
/// centred bins whose means lie in its lattice bin, contracted together — to a few ulps of
/// its offset, and keeps their P-mass; a centred bin whose mean lies below its point goes to
/// the lattice bin below. A falling law with gaps, at ln scale −3 and λ = 3 (the exact
/// means from the untilted masses, in the test).
#[test]
fn centred_contraction_sits_at_or_below_the_means() {
    let (d, f, lambda, ln_s) = (1e-6, 16i64, 3.0, -3.0);
    let (k0, n) = (-37i64, 700usize);
    let lo: Vec<f64> = (0..n)
        .map(|i| {
            let w = exp(-(i as f64) / 50.0) * (0.05 + sin((i as f64) * 0.37).abs());
            if i % 7 == 3 || (200..230).contains(&i) {
                0.0
            } else {
                w
            }
        })
        .collect();
    let x = Part {
        d,
        k0,
        up: lo.clone(),
        lo: lo.clone(),
        ln_s_up: ln_s,
        ln_s_lo: ln_s,
    };
    let big = d * f as f64;
    let c0 = k0.div_euclid(f);
    // Per lattice bin, the untilted P-masses (and fine index) of the centred bins whose
    // means lie in it; a mean's offset from a point cD from expm1s (no cancellation of
    // numbers near 1): ln(1 + Σ P·(1 − e^{−r}) / Σ P·e^{−r}), r = (k − cf)·Δ.
    let offset = |pts: &[(i64, f64)], c: i64| {
        let (mut a, mut b) = (0.0, 0.0);
        for &(k, p) in pts {
            let r = (k - c * f) as f64 * d;
            a -= p * exp_m1(-r);
            b += p * exp(-r);
        }
        ln_1p(a / b)
    };
    let mut want: std::collections::BTreeMap<i64, Vec<(i64, f64)>> = Default::default();
    let mut pairs: std::collections::BTreeMap<i64, usize> = Default::default();
    let half = f / 2;
    let mut c = (k0 + half).div_euclid(f);
    while c * f - half < k0 + n as i64 {
        let pts: Vec<(i64, f64)> = ((c * f - half)..(c * f + half))
            .filter(|&k| k >= k0 && k < k0 + n as i64 && lo[(k - k0) as usize] > 0.0)
            .map(|k| (k, lo[(k - k0) as usize] * exp(ln_s - lambda * k as f64 * d)))
            .collect();
        if !pts.is_empty() {
            let bin = if offset(&pts, c) >= 0.0 { c } else { c - 1 };
            want.entry(bin).or_default().extend(pts);
            *pairs.entry(bin).or_insert(0) += 1;
        }
        c += 1;
    }
    let atoms = contract(&x, f, lambda, Bins::Centred);
    let mut seen = 0;
    for (i, &(lp, off)) in atoms.iter().enumerate() {
        let c = c0 + i as i64;
        match want.get(&c) {
            None => assert_eq!(lp, f64::NEG_INFINITY, "bin {c}: an atom where none belongs"),
            Some(pts) => {
                let exact = offset(pts, c);
                let p: f64 = pts.iter().map(|&(_, p)| p).sum();
                assert!(
                    off <= exact * (1.0 + 1e-13),
                    "bin {c}: offset {off:e} above {exact:e}"
                );
                assert!(
                    off >= exact - 1e-10 * big,
                    "bin {c}: offset {off:e}, exact {exact:e}"
                );
                assert!(
                    (lp - ln(p)).abs() <= 1e-12,
                    "bin {c}: ln P {lp} vs {}",
                    ln(p)
                );
                seen += 1;
            }
        }
    }
    assert_eq!(seen, want.len());
    assert!(seen > 30, "{seen}");
    // Lattice bins that took two centred bins' atoms (either side of their left point).
    assert!(
        pairs.values().filter(|&&n| n == 2).count() >= 3,
        "{pairs:?}"
    );
}

/// δ(ε) bracket of a two-resolution measure, with its +∞ mass and ledger.
fn delta_meas(m: &Meas, lambda: f64, eps: f64) -> (f64, f64) {
    let all = add(&m.core, &m.tail.refine(m.f), 1.0);
    let (u, l) = delta_of(&all, lambda, eps);
    (u + m.inf + exp(m.ln_lost - lambda * eps), l)
}

/// One squaring of the two-resolution per-step measure brackets the exact square
/// of the per-step lattice (a direct O(n²) convolution in log space).
#[test]
fn squaring_brackets_the_direct_square() {
    let w = &crate::engine::pld::compose::Work::new(f64::INFINITY);
    for (q, s, d, lambda) in [
        (1e-4, 0.6, 1e-3, 5.0),
        (1e-4, 0.6, 2e-4, 5.0),
        (0.01, 1.0, 1e-3, 3.0),
    ] {
        let (lo, hi) = loss_range(q, s, Direction::Remove, 1e-14);
        let pld = step_pld(q, s, Direction::Remove, d, lo, hi);
        let m = from_step(&pld, lambda, d, (1e-16, LOST_REL), f64::NEG_INFINITY, w);
        let sq = product(&m, &m, true, (lambda, 1e-16, 1.0, FLOOR_SHARE), w).unwrap();
        // Direct: P-masses of the squared upper and lower lattices.
        let n = pld.ln_up.len();
        let (pu, pl): (Vec<f64>, Vec<f64>) = (
            pld.ln_up.iter().map(|x| exp(*x)).collect(),
            pld.ln_lo.iter().map(|x| exp(*x)).collect(),
        );
        let mut cu = vec![0.0; 2 * n - 1];
        let mut cl = vec![0.0; 2 * n - 1];
        for i in 0..n {
            for j in 0..n {
                cu[i + j] += pu[i] * pu[j];
                cl[i + j] += pl[i] * pl[j];
            }
        }
        let inf2 = 2.0 * exp(pld.ln_inf);
        for eps in [0.0, 0.01, 0.1, 0.5, 1.0, 2.0] {
            let (mut du, mut dl) = (inf2, 0.0);
            for k in 0..2 * n - 1 {
                let l = (2 * pld.k_lo + k as i64) as f64 * d;
                if l > eps {
                    du += cu[k] * -exp_m1(eps - l);
                    dl += cl[k] * -exp_m1(eps - l);
                }
            }
            let (u, l) = delta_meas(&sq, lambda, eps);
            eprintln!("q {q} s {s} d {d} eps {eps}: ladder [{l:e}, {u:e}] direct [{dl:e}, {du:e}] core {} tail {} f {}", sq.core.len(), sq.tail.len(), sq.f);
            assert!(u >= du * (1.0 - 1e-9), "upper {u} < direct {du}");
            assert!(l <= dl * (1.0 + 1e-9), "lower {l} > direct {dl}");
        }
    }
}
