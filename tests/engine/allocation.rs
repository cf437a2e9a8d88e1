//! Random allocation / balls in bins (issue #24): the engine's certified bracket against an
//! independent converged reference (tests/reference/allocation.jsonl, written by
//! tests/reference/allocation_reference.py: SciPy cells, a NumPy FFT sum and dp_accounting's
//! composition), the Gaussian mechanism where the scheme is one (k = t), dp_accounting's
//! own test value, and monotonicity.
#![cfg(not(target_arch = "wasm32"))]

use sgm_rdp::engine::pld::{self, Bracket, Phase};

fn eps(sigma: f64, t: u64, k: u64, epochs: u64, delta: f64) -> Bracket {
    let p = Phase::allocation(sigma, t, k, epochs).unwrap();
    pld::epsilon_phases(&[p], delta).unwrap().epsilon
}

#[test]
fn the_bracket_meets_the_independent_reference() {
    let rows: Vec<serde_json::Value> = include_str!("../reference/allocation.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(rows.len() >= 4);
    for v in rows {
        let f = |k: &str| v[k].as_f64().unwrap();
        let b = eps(
            f("sigma"),
            f("steps_per_epoch") as u64,
            1,
            f("epochs") as u64,
            f("delta"),
        );
        // The reference's pessimistic and optimistic estimates bracket the converged
        // pair's ε up to their own discretization (1e-4): the two brackets overlap.
        let tol = 2e-4 * f("upper");
        assert!(
            b.upper >= f("lower") - tol && b.lower <= f("upper") + tol,
            "{v}: ours {b:?}"
        );
        // Goal 0.1 % (issue: ≤ 0.5 %).
        assert!(b.upper - b.lower <= 1e-3 * b.upper, "{v}: ours {b:?}");
    }
}

/// δ(ε) of the Gaussian mechanism with parameter μ (Balle, Wang, ICML 2018, Thm 8), by
/// libm's erfc: Φ(μ/2 − ε/μ) − e^ε·Φ(−μ/2 − ε/μ).
fn gauss_delta(mu: f64, e: f64) -> f64 {
    let phi = |x: f64| 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2);
    phi(0.5 * mu - e / mu) - e.exp() * phi(-0.5 * mu - e / mu)
}

#[test]
fn all_of_t_steps_is_the_gaussian_mechanism_of_t_times_e_steps() {
    for (sigma, t, epochs, delta) in [(4.0, 10u64, 3u64, 1e-5), (20.0, 50, 2, 1e-6)] {
        let b = eps(sigma, t, t, epochs, delta);
        let mu = ((t * epochs) as f64).sqrt() / sigma;
        assert!(gauss_delta(mu, b.upper) <= delta * (1.0 + 1e-9), "{b:?}");
        assert!(gauss_delta(mu, b.lower) >= delta * (1.0 - 1e-9), "{b:?}");
    }
}

/// Google dp_accounting's test of its random-allocation PLD (σ = 2, 10 of 100 steps, one
/// epoch, δ = 1e-6) expects 2.4265 ± 1e-3 from its pessimistic default discretization. Ours
/// is the same block reduction (10 allocations of one of 10 steps), certified:
/// [2.42344, 2.42412], inside the independent reference's [2.42339, 2.42439] (the
/// reference file's first row), so a little below dp_accounting's value; the check is
/// that ours is not above it and within 0.2 % of it.
#[test]
fn dp_accountings_test_value() {
    let b = eps(2.0, 100, 10, 1, 1e-6);
    assert!(b.upper <= 2.4265 + 1e-3, "{b:?}");
    assert!(b.upper >= 2.4265 * 0.998, "{b:?}");
    assert!(b.lower <= b.upper);
}

#[test]
fn monotone_in_sigma_epochs_and_delta() {
    let base = eps(1.5, 40, 1, 8, 1e-5);
    assert!(base.lower <= base.upper);
    // More noise, fewer epochs, a larger δ: a smaller ε. The neighbour's upper end never
    // falls below the run's lower end (each bracket contains the truth).
    for other in [
        eps(1.7, 40, 1, 8, 1e-5),
        eps(1.5, 40, 1, 6, 1e-5),
        eps(1.5, 40, 1, 8, 1e-4),
    ] {
        assert!(other.lower <= other.upper);
        assert!(other.lower <= base.upper, "{other:?} vs {base:?}");
        assert!(other.upper < base.upper, "{other:?} vs {base:?}");
    }
}

#[test]
fn bad_inputs_are_refused() {
    assert!(Phase::allocation(1.0, 10, 0, 1).is_err());
    assert!(Phase::allocation(1.0, 10, 11, 1).is_err());
    assert!(Phase::allocation(1.0, 0, 1, 1).is_err());
    assert!(Phase::allocation(f64::NAN, 10, 1, 1).is_err());
    assert!(Phase::allocation(1.0, 10, 1, 0).is_err());
}

/// MNIST's shape at small δ (where ε sits in W's right tail, which the right tilt resolves;
/// a version that dropped that tilt refused δ = 1e-8 and 1e-12) and its privacy profile,
/// which must agree with the ε query: the truth δ(ε) is 1e-5 somewhere inside the ε bracket
/// at δ = 1e-5, so δ's upper end at the bracket's lower end is ≥ 1e-5 and δ's lower end at
/// its upper end is ≤ 1e-5.
#[test]
fn small_delta_and_the_profile_answer() {
    let mut last = 0.0;
    for delta in [1e-5, 1e-8, 1e-12] {
        let b = eps(1.1, 234, 1, 60, delta);
        assert!(b.lower > last && b.lower <= b.upper, "δ = {delta}: {b:?}");
        assert!(b.upper - b.lower <= 1e-2 * b.upper, "δ = {delta}: {b:?}");
        last = b.upper;
    }
    let at = eps(1.1, 234, 1, 60, 1e-5);
    let p = Phase::allocation(1.1, 234, 1, 60).unwrap();
    let prof = pld::profile_phases(&[p], &[at.lower, at.upper]).unwrap();
    let (lo_end, up_end) = (prof[0].0.delta, prof[1].0.delta);
    assert!(lo_end.upper >= 1e-5, "{lo_end:?}");
    assert!(up_end.lower <= 1e-5, "{up_end:?}");
    assert!(lo_end.lower <= lo_end.upper && up_end.lower <= up_end.upper);
}

/// The upper end never falls below a cheap certified lower bound computed another way:
/// Chua et al.'s largest-coordinate test on the same pair (binned, composed with the
/// optimistic side; `shuffle::allocation_lower_bound`). It sits below our lower end too
/// (it sees only the largest coordinate), but not far: the largest coordinate carries most
/// of the pair's information when t is small.
#[test]
fn the_upper_end_is_above_the_largest_coordinate_lower_bound() {
    for (sigma, t, epochs, delta) in [
        (1.1, 234, 60, 1e-5),
        (2.0, 10, 1, 1e-6),
        (1.0, 5, 10, 1e-5),
        (0.9, 50, 20, 1e-8),
        // Small σ: V's heavy tail is split off (one large V per epoch convolved apart).
        (0.7, 234, 60, 1e-5),
        (0.6, 100, 10, 1e-5),
    ] {
        let b = eps(sigma, t, 1, epochs, delta);
        let cheap = pld::shuffle::allocation_lower_bound(sigma, t, epochs, delta).unwrap();
        eprintln!("σ {sigma} t {t} E {epochs} δ {delta}: largest coordinate ≥ {cheap:.6}, ours [{:.6}, {:.6}]", b.lower, b.upper);
        assert!(
            cheap > 0.0 && cheap <= b.upper,
            "σ {sigma} t {t}: {cheap} vs {b:?}"
        );
        assert!(
            cheap <= b.lower * (1.0 + 1e-9),
            "σ {sigma} t {t}: {cheap} vs {b:?}"
        );
    }
}

/// Each end of the random-allocation bracket moves the right way over fixed-seed runs
/// (hardening round 4's standing check): neither end rises with more noise (σ × 1.25) or a
/// larger δ (× 10), and neither falls with one more epoch. Each end is compared with the
/// neighbour's same end, allowing for the brackets' own width where ends are read on
/// different grids: the more private run's end may exceed the other's by at most the
/// other's width (both brackets hold their truths, which are ordered).
#[test]
fn every_end_is_monotone_over_fixed_seed_runs() {
    let mut uniform = crate::uniform_from(0x2545_f491_4f6c_dd1du64);
    for _ in 0..6 {
        let sigma = 0.8 + 1.5 * uniform();
        let t = [16u64, 40, 64][(uniform() * 3.0) as usize % 3];
        let e = 1 + (uniform() * 4.0) as u64;
        let delta = 10f64.powf(-9.0 + 5.0 * uniform());
        let base = eps(sigma, t, 1, e, delta);
        for (what, n, more_private) in [
            ("σ×1.25", eps(sigma * 1.25, t, 1, e, delta), true),
            ("δ×10", eps(sigma, t, 1, e, delta * 10.0), true),
            ("E+1", eps(sigma, t, 1, e + 1, delta), false),
        ] {
            let (a, b) = if more_private { (n, base) } else { (base, n) };
            let slack = b.upper - b.lower;
            assert!(
                a.upper <= b.upper + slack && a.lower <= b.lower + slack && a.lower <= b.upper,
                "σ {sigma}, t {t}, E {e}, δ {delta}, {what}: {a:?} vs {b:?}"
            );
        }
    }
}

/// Hardening round 4 #5: CIFAR-like shapes at small δ answer. Random allocation's lattices
/// stop short of the 1 % rule in pockets at δ ≈ 1e-10 (σ = 1.5, t = 782, 30 epochs:
/// [0.856637, 0.877120], 2.3 %), and a refusal left the scheme with no answer at all (it has
/// no exact-RDP route): such runs answer with the certified bracket up to
/// `ALLOCATION_MAX_WIDTH` (5 %). Checked: the width, the largest-coordinate lower bound
/// (computed another way) below the upper end, and the run at a larger δ (a smaller ε) not
/// above it.
#[test]
fn cifar_like_shapes_at_small_delta_answer_with_a_certified_bracket() {
    for (sigma, t, epochs, delta) in [
        (1.5, 782, 30, 1e-10),
        (1.5107943270788604, 693, 29, 7.109774322840685e-11),
    ] {
        let b = eps(sigma, t, 1, epochs, delta);
        let w = (b.upper - b.lower) / b.upper;
        assert!(
            w <= pld::ALLOCATION_MAX_WIDTH && b.lower > 0.0,
            "σ {sigma} t {t}: {b:?}"
        );
        let cheap = pld::shuffle::allocation_lower_bound(sigma, t, epochs, delta).unwrap();
        assert!(cheap <= b.lower * (1.0 + 1e-9), "{cheap} vs {b:?}");
        let easier = eps(sigma, t, 1, epochs, 1e-8);
        assert!(easier.lower <= b.upper, "δ = 1e-8 {easier:?} vs {b:?}");
        eprintln!(
            "σ {sigma} t {t} E {epochs} δ {delta:e}: [{:.6}, {:.6}] ({:.2} %)",
            b.lower,
            b.upper,
            100.0 * w
        );
    }
}
