use super::*;
use crate::engine::math::{exp, exp_m1};

/// δ(ε) of a lattice PLD's pessimistic and optimistic measures, the coarse part included.
#[cfg(full_engine)]
fn delta_of(s: &StepPld, d: f64, eps: f64) -> (f64, f64) {
    let mut pts: Vec<(f64, f64, f64)> = (0..s.ln_up.len())
        .map(|i| ((s.k_lo + i as i64) as f64 * d, s.ln_up[i], s.ln_lo[i]))
        .collect();
    if let Some(t) = &s.tail {
        let big = d * t.f as f64;
        pts.extend(
            (0..t.ln_up.len()).map(|i| ((t.k_lo + i as i64) as f64 * big, t.ln_up[i], t.ln_lo[i])),
        );
    }
    let (mut up, mut lo) = (exp(s.ln_inf), 0.0);
    for (l, u, w) in pts {
        if l > eps {
            up += exp(u) * -exp_m1(eps - l);
            lo += exp(w) * -exp_m1(eps - l);
        }
    }
    (up, lo)
}

/// One step's two-resolution lattice brackets the exact profile
/// δ(ε) = P(L > ε) − e^ε·Q(L > ε) (remove pair, Gaussian tails in closed form) at every ε,
/// as the one-resolution lattice does, and its pessimistic curve lies above that one's
/// (a coarser bin's connect-the-dots is a coarsening of the finer lattice's).
#[test]
#[cfg(full_engine)]
fn two_resolution_lattice_brackets_the_exact_step() {
    use super::super::gauss::ln_phi_bar;
    for (q, s, d, f) in [
        (1e-5, 0.6, 2e-7, 256i64),
        (1e-6, 1.0, 3e-8, 64),
        (1e-4, 0.5, 1e-6, 1024),
    ] {
        let (lo, hi) = loss_range(q, s, Direction::Remove, 1e-14);
        let b = lo + 4096.0 * d;
        let two = step_pld_split(q, s, Direction::Remove, d, (lo, b, hi), (f, 0.0));
        assert!(two.tail.is_some() && two.ln_up.len() < 5000);
        let one = step_pld(q, s, Direction::Remove, d, lo, hi);
        for eps in [0.0, q, 10.0 * q, 1e-3, 0.01, 0.1, 0.5, 1.0] {
            let x = x_of_loss(q, s, eps);
            let p = (1.0 - q) * exp(ln_phi_bar(x / s)) + q * exp(ln_phi_bar((x - 1.0) / s));
            let exact = p - exp(eps) * exp(ln_phi_bar(x / s));
            let (u2, l2) = delta_of(&two, d, eps);
            let (u1, _) = delta_of(&one, d, eps);
            let tol = 1e-9 * exact + 1e-18;
            assert!(
                u2 >= exact - tol && l2 <= exact + tol,
                "q={q} s={s} ε={eps}: [{l2:e}, {u2:e}] vs {exact:e}"
            );
            assert!(
                u2 >= u1 * (1.0 - 1e-9) - 1e-18,
                "q={q} s={s} ε={eps}: {u2:e} below one lattice's {u1:e}"
            );
        }
    }
}

/// Σ P over a fine lattice of a tiny-q step is P's mass to ~1e-13, not ~u/Δ: the first bin
/// (x from −∞, its left point below the loss's infimum ln(1 − q)) splits its mass from the
/// mixture's components too (at q = 2.1e-9, σ = 0.51, Δ = 9e-10 it added 6.3e-8 of P, and
/// 5.8·10⁸ steps multiplied the composed upper measure by e^{37}). The part below x_top
/// ([`step_pld_below`]) carries P(x ≤ x_top), and its ends bracket that part's profile.
#[test]
#[cfg(full_engine)]
fn a_fine_lattice_carries_p_to_rounding() {
    use super::super::gauss::ln_phi_bar;
    let sum = |s: &StepPld| -> f64 {
        let t = s.tail.iter().flat_map(|t| t.ln_up.iter());
        s.ln_up.iter().chain(t).map(|l| exp(*l)).sum::<f64>() + exp(s.ln_inf)
    };
    for (q, sg, d) in [
        (2.136e-9, 0.5108, 9e-10),
        (4.874e-9, 0.3982, 3.5e-9),
        (1e-7, 1.0, 2e-8),
    ] {
        let (lo, hi) = loss_range(q, sg, Direction::Remove, 1e-20);
        let b = lo + 16384.0 * d;
        let two = step_pld_split(q, sg, Direction::Remove, d, (lo, b, hi), (256, 0.0));
        assert!(
            (sum(&two) - 1.0).abs() < 1e-12,
            "q={q}: Σ P = 1 + {:e}",
            sum(&two) - 1.0
        );
        let (part, x_top) = step_pld_below(q, sg, d, (lo, 0.3 * hi), Some((b, 256)), 0.0);
        let below = 1.0 - exp(ln_p_between(q, sg, x_top, f64::INFINITY));
        assert!(
            (sum(&part) - below).abs() < 1e-12,
            "q={q}: {} vs {below}",
            sum(&part)
        );
        assert!(part.ln_inf == f64::NEG_INFINITY);
        // The part's profile: δ_s(ε) = P(L > ε, x ≤ x_top) − e^ε·Q(same), exact.
        for eps in [0.0, q, 100.0 * q, 1e-5, 1e-3] {
            let x = x_of_loss(q, sg, eps);
            if x >= x_top {
                continue;
            }
            let pm = |z0: f64, z1: f64| exp(ln_phi_bar(z0)) - exp(ln_phi_bar(z1));
            let p = (1.0 - q) * pm(x / sg, x_top / sg) + q * pm((x - 1.0) / sg, (x_top - 1.0) / sg);
            let exact = p - exp(eps) * pm(x / sg, x_top / sg);
            let (u, l) = delta_of(&part, d, eps);
            let tol = 1e-9 * exact.abs() + 1e-15;
            assert!(
                u >= exact - tol && l <= exact + tol,
                "q={q} ε={eps}: [{l:e}, {u:e}] vs {exact:e}"
            );
        }
    }
}

/// A falling law whose atoms sit near their bins' left ends: merged downwards, the
/// optimistic lattice keeps its tail and stays below the atoms' hockey stick; merged
/// upwards the first carry, never balanced, drags the whole tail onto one point.
#[test]
fn falling_laws_keep_their_tail_when_merged_downwards() {
    let (d, off) = (1e-3, 0.02);
    let atoms: Vec<(f64, f64)> = (0..100)
        .map(|i| {
            // A heavy first atom, then a falling tail a thousandth as heavy (as where a
            // coarse part starts above a fine one).
            let rho = (i as f64 + off) * d;
            let lp = if i == 0 { 0.0 } else { -6.9 - i as f64 / 10.0 };
            (lp - rho, rho)
        })
        .collect();
    let down = merge_atoms_falling(&atoms, 0, d);
    let up = merge_atoms(&atoms, 0, d);
    let above = |v: &[f64], from: usize| v[from..].iter().map(|l| exp(*l)).sum::<f64>();
    let ln_p = |a: &(f64, f64)| a.0 + a.1;
    let truth: f64 = atoms[10..].iter().map(|a| exp(ln_p(a))).sum();
    let (kept, lost) = (above(&down, 10), above(&up, 10));
    assert!(kept >= 0.9 * truth, "{kept} vs {truth}");
    assert!(lost <= 0.1 * truth, "{lost} vs {truth}");
    let total: f64 = atoms.iter().map(|a| exp(ln_p(a))).sum();
    assert!((above(&down, 0) - total).abs() <= 1e-12 * total);
    for eps in [0.0, 0.005, 0.01, 0.02, 0.04] {
        let lattice: f64 = (down.iter().enumerate())
            .map(|(j, l)| exp(*l) * (-exp_m1(eps - j as f64 * d)).max(0.0))
            .sum();
        let exact: f64 = (atoms.iter().enumerate())
            .map(|(i, a)| exp(ln_p(a)) * (-exp_m1(eps - (i as f64 + off) * d)).max(0.0))
            .sum();
        assert!(
            lattice <= exact * (1.0 + 1e-12),
            "ε = {eps}: {lattice} > {exact}"
        );
        // (At ε = 0 the heavy first atom, rounded down by 0.02Δ, weighs; above, the tail.)
        let share = if eps > 0.0 { 0.9 } else { 0.8 };
        assert!(lattice >= share * exact, "ε = {eps}: {lattice} vs {exact}");
    }
}

/// The linear merge and the log merge agree (they are the same post-processing).
#[test]
fn linear_and_log_merges_agree() {
    let d = 1e-3;
    let k_lo = -50;
    // Pseudo-random atoms: some empty, positions anywhere in their bins, masses over
    // 40 orders of magnitude.
    let mut r = crate::engine::math::uniform(12345);
    let atoms: Vec<(f64, f64)> = (0..4000)
        .map(|i| {
            if r() < 0.1 {
                return (f64::NEG_INFINITY, f64::NEG_INFINITY);
            }
            let li = (k_lo + i) as f64 * d;
            let rho = li + r() * d;
            let lq = -90.0 * r();
            (lq, rho)
        })
        .collect();
    let a = round_down_last(sweep(&atoms, k_lo, d, true, true));
    let b = round_down_last(sweep(&atoms, k_lo, d, false, true));
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        if *y == f64::NEG_INFINITY || *x == f64::NEG_INFINITY {
            // A point only one side fills holds a rounding crumb at most.
            assert!(x.max(*y) < -600.0 || x == y, "{i}: {x} vs {y}");
        } else {
            assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{i}: {x} vs {y}");
        }
    }
    // The merged P-mass equals the atoms' (each merge keeps P-mass... up to the final
    // round-down, which keeps P too): both paths give the same total.
    let total = |v: &[f64]| v.iter().map(|l| exp(*l)).sum::<f64>();
    assert!((total(&a) / total(&b) - 1.0).abs() < 1e-12);
}

/// The fast inversion of Φ̄ ends where the bisection does, to the float, over η from 1e-300
/// to ½ (log-spaced, and dense near ½ and near the tail's far end, where it falls back).
#[test]
fn z_of_tail_is_the_bisections_end() {
    let mut etas: Vec<f64> = (0..=3000)
        .map(|i| crate::engine::math::powf(10f64, -300.0 + 300.0 * i as f64 / 3000.0 - 0.302))
        .collect();
    etas.extend((1..=200).map(|i| 0.5 - i as f64 * 1e-9));
    etas.extend((1..=200).map(|i| 0.5 - i as f64 * 1e-3));
    etas.extend([f64::MIN_POSITIVE, 1e-320, 0.49999999999, 1e-16, 0.25]);
    let mut fast = 0;
    for &eta in &etas {
        let (a, b) = (z_of_tail(eta), z_of_tail_bisected(eta));
        assert!(a == b, "η = {eta:e}: {a:e} against the bisection's {b:e}");
        fast += usize::from(b > 1e-6 && b < 40.0);
    }
    assert!(fast > 3000, "{fast}");
}

/// A lattice whose bins' masses are read as the numbers they were taken as (P, Q, and ρ from
/// their ratio) is the one built from the same masses' logs ([`from_bins`]), in both
/// directions: the pessimistic lattice to 1e-8 at every point, and both lattices' δ(ε) to
/// 1e-9. (They differ by the allowance for rounding each path takes — ρ raised, or lowered, by
/// ~1e-14 from two logs and ~4e-15 from the ratio's one — which the connect-the-dots shares,
/// differences of ~Δ between positions, turn into ~1e-10 of a point's mass; in the optimistic
/// merges it may move a little mass to the next point, ~1e-8 of that point's.) A slip between
/// the two paths — P for Q, a direction's masses swapped, a stale e^ℓ — moves far more.
#[test]
#[cfg(full_engine)]
fn masses_as_numbers_build_the_lattice_their_logs_build() {
    for (q, s, d) in [
        (256.0 / 60000.0, 1.1, 1.65e-4),
        (0.01, 0.8, 3e-4),
        (0.3, 2.0, 1e-3),
    ] {
        for dir in [Direction::Remove, Direction::Add] {
            let (lo, hi) = loss_range(q, s, dir, 1e-12);
            let (k_lo, len) = lattice(d, lo, hi);
            let fast = step_pld(q, s, dir, d, lo, hi);
            let x_of = XOfLoss::new(q, s);
            let at = |k: i64| {
                let l = k as f64 * d;
                Boundary::at(s, x_of.at(if dir == Direction::Remove { l } else { -l }))
            };
            let (ln_w, w) = ((ln_1p(-q), ln(q)), (1.0 - q, q));
            let pair = |a: &Boundary, b: &Boundary| match dir {
                Direction::Remove => masses_as_taken(ln_w, w, dir, a, b).logs(),
                Direction::Add => masses_as_taken(ln_w, w, dir, b, a).logs(),
            };
            let (far_lo, far_hi) = match dir {
                Direction::Remove => (f64::NEG_INFINITY, f64::INFINITY),
                Direction::Add => (f64::INFINITY, f64::NEG_INFINITY),
            };
            let left = pair(&Boundary::at(s, far_lo), &at(k_lo)).0;
            let right = pair(&at(k_lo + len as i64 - 1), &Boundary::at(s, far_hi)).0;
            let bin = |i: usize| pair(&at(k_lo + i as i64), &at(k_lo + i as i64 + 1));
            let logs = from_bins(d, k_lo, len, bin, left, right);
            assert_eq!((fast.k_lo, fast.ln_up.len()), (logs.k_lo, logs.ln_up.len()));
            assert_eq!(fast.ln_inf, logs.ln_inf);
            let side = |a: &[f64], b: &[f64], what: &str, tol: f64| {
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    let close = x == y || (x - y).abs() <= tol * y.abs().max(1.0);
                    assert!(close, "q={q} {dir:?} {what} point {i}: {x} vs {y}");
                }
            };
            side(&fast.ln_up, &logs.ln_up, "pessimistic", 1e-8);
            for eps in [0.0, 0.1, 0.5, 1.0, 2.0] {
                let (a, b) = (delta_of(&fast, d, eps), delta_of(&logs, d, eps));
                for (x, y) in [(a.0, b.0), (a.1, b.1)] {
                    assert!(
                        (x - y).abs() <= 1e-9 * y + 1e-300,
                        "q={q} {dir:?} ε={eps}: δ {x:e} vs {y:e}"
                    );
                }
            }
        }
    }
}
