use super::super::compose::{compose_within, Phase};
use super::super::discretize::{loss_range, step_pld, step_pld_split, Direction};
use super::tests::assert_outside;
use super::*;
use crate::engine::math::exp;

/// A two-resolution per-step lattice (fine near the loss's minimum, coarse above),
/// composed on the ladder, and the one-resolution lattice composed in one FFT give
/// intersecting brackets on δ(ε) (both are certified), and the ladder's is narrow.
#[test]
fn two_resolution_lattices_compose_consistently() {
    let w = &crate::engine::pld::compose::Work::new(f64::INFINITY);
    for (q, s, t, d, f, lambda, eps) in [
        (1e-3, 0.8, 1_000u64, 1e-4, 16i64, 5.0, [0.1, 0.2, 0.4]),
        (1e-3, 1.0, 10_000, 2e-4, 8, 8.0, [0.1, 0.3, 0.5]),
    ] {
        let (lo, hi) = loss_range(q, s, Direction::Remove, 1e-12);
        let one = step_pld(q, s, Direction::Remove, d, lo, hi);
        let two = step_pld_split(
            q,
            s,
            Direction::Remove,
            d,
            (lo, lo + 2000.0 * d, hi),
            (f, 0.0),
        );
        let a = compose_within(
            &[Phase {
                pld: &one,
                steps: t as f64,
            }],
            lambda,
            d,
            1 << 21,
            w,
        )
        .unwrap();
        let b = compose(&[(&two, t)], lambda, (d, 1e-12, FLOOR_SHARE), w).unwrap();
        for e in eps {
            let ((au, al), (bu, bl)) = (a.delta(e), b.delta(e));
            assert!(
                bu >= al * (1.0 - 1e-9) && bl <= au * (1.0 + 1e-9),
                "q={q} s={s} T={t} ε {e}: two resolutions [{bl:e}, {bu:e}] one [{al:e}, {au:e}]"
            );
            assert!(
                bu <= 1.2 * au && bl >= 0.8 * al,
                "q={q} s={s} T={t} ε {e}: [{bl:e}, {bu:e}] vs [{al:e}, {au:e}]"
            );
        }
    }
}

/// Over a long run the composed law's tilted mean is T·κ'(λ) of the per-step lattice
/// (nothing of weight is cut): a coarse tail that was re-gridded with the core grew its
/// spacing to 38 in loss at q = 1e-4, σ = 0.6, T = 10⁸ and moved the composed centre from
/// 23.2 to 60.9.
#[test]
fn a_long_run_keeps_its_tilted_mean() {
    let w = &crate::engine::pld::compose::Work::new(f64::INFINITY);
    use super::super::compose::tilted_mean;
    let (q, s, d, t, lambda) = (1e-4, 0.6, 1.1666e-5, 100_000_000u64, 1.0289);
    let (lo, hi) = loss_range(q, s, Direction::Remove, 2e-18);
    let two = step_pld_split(
        q,
        s,
        Direction::Remove,
        d,
        (lo, lo + 16384.0 * d, hi),
        (1024, 0.0),
    );
    let c = compose(&[(&two, t)], lambda, (d, 1e-9, FLOOR_SHARE), w).unwrap();
    let model = tilted_mean(
        &[Phase {
            pld: &two,
            steps: t as f64,
        }],
        lambda,
        d,
    )
    .0 * d;
    assert!(
        (c.center - model).abs() <= 0.1 * c.spread,
        "centre {} against T·κ'(λ) = {model} (spread {})",
        c.center,
        c.spread
    );
}

/// The ladder and the one-FFT composition of the same per-step lattices give brackets
/// on δ(ε) that intersect (both are certified), over runs whose tails grow long enough
/// to be re-gridded (the bug this guards against placed a re-gridded tail on the old
/// factor's lattice: mass at lower losses, an upper bound below the truth).
#[test]
fn ladder_and_one_fft_brackets_intersect() {
    let w = &crate::engine::pld::compose::Work::new(f64::INFINITY);
    for (q, s, t, d, lambda, eps) in [
        (0.01, 3.0, 100_000u64, 2e-4, 0.5, [8.0, 10.0, 12.0]),
        (0.01, 3.0, 1_000_000, 9.661e-5, 0.4, [12.0, 14.0, 16.0]),
        (0.01, 1.0, 10_000, 4e-4, 2.0, [4.0, 6.0, 8.0]),
        (1e-3, 1.0, 1_000_000, 2e-4, 2.0, [4.0, 6.0, 7.0]),
    ] {
        for dir in [Direction::Remove, Direction::Add] {
            let (lo, hi) = loss_range(q, s, dir, 1e-20);
            let pld = step_pld(q, s, dir, d, lo, hi);
            let a = compose_within(
                &[Phase {
                    pld: &pld,
                    steps: t as f64,
                }],
                lambda,
                d,
                1 << 21,
                w,
            )
            .unwrap();
            let b = compose(&[(&pld, t)], lambda, (d, 1e-12, FLOOR_SHARE), w).unwrap();
            for e in eps {
                let ((au, al), (bu, bl)) = (a.delta(e), b.delta(e));
                assert!(
                    bu >= al * (1.0 - 1e-9) && bl <= au * (1.0 + 1e-9),
                    "q={q} s={s} T={t} {dir:?} ε {e}: ladder [{bl:e}, {bu:e}] one FFT [{al:e}, {au:e}]"
                );
            }
        }
    }
}

/// A product used T/2 times (T = 10⁸) at small q: every entry of `up` is at least, and of
/// `lo` at most, the plain O(n²) sum of nonnegative products (relative rounding only), and
/// the floor `up` carries above it is within the share allowed — where one FFT's floor
/// was ~1e-10 of the product's mass (q = 1e-4, σ = 0.6), the direct points and bands keep
/// it ≤ FLOOR_SHARE/copies (2e-14). Squares and a product of two different measures.
#[test]
fn conv_keeps_its_floor_within_the_share_it_is_allowed() {
    let w = &crate::engine::pld::compose::Work::new(f64::INFINITY);
    let (q, s, d, lambda) = (1e-4, 0.6, 1e-5, 1.0);
    let (lo, hi) = loss_range(q, s, Direction::Remove, 1e-14);
    let pld = step_pld(q, s, Direction::Remove, d, lo, (lo + 4096.0 * d).min(hi));
    let x = Part::tilted((&pld.ln_up, &pld.ln_lo), pld.k_lo, lambda, d);
    // A second factor: x's square, re-normalized (smooth, wider).
    let y = conv(&x, &x, true, FLOOR_SHARE, w).unwrap();
    let plain = |a: &[f64], b: &[f64]| {
        let mut c = vec![0.0; a.len() + b.len() - 1];
        for (i, &u) in a.iter().enumerate() {
            for (j, &v) in b.iter().enumerate() {
                c[i + j] += u * v;
            }
        }
        c
    };
    let copies = 5e7;
    for (a, b, square) in [(&x, &x, true), (&x, &y, false)] {
        let got = conv(a, b, square, FLOOR_SHARE / copies, w).unwrap();
        let (ru, rl) = (plain(&a.up, &b.up), plain(&a.lo, &b.lo));
        let off = (got.k0 - (a.k0 + b.k0)) as usize;
        let total: f64 = ru.iter().sum();
        let mut extra = 0.0;
        for (k, (&eu, &el)) in ru.iter().zip(&rl).enumerate() {
            let at = |v: &[f64], s: f64| {
                k.checked_sub(off)
                    .and_then(|i| v.get(i))
                    .map_or(0.0, |&w| w * exp(s - (a.ln_s_up + b.ln_s_up)))
            };
            let u = at(&got.up, got.ln_s_up);
            let l = at(
                &got.lo,
                got.ln_s_lo + (a.ln_s_up + b.ln_s_up) - (a.ln_s_lo + b.ln_s_lo),
            );
            assert_outside((u, l), (eu, el), &format!("square {square} k {k}"));
            extra += u - eu;
        }
        let share = extra / total;
        // The FFT's floor (≤ FLOOR_SHARE/copies) and the direct sums' relative margin.
        assert!(
            share <= 3.0 * FLOOR_SHARE / copies,
            "square {square}: floor share {share:e}"
        );
    }
}
