//! Standing PLD properties over the whole domain (hardening round 3, "standing checks"):
//! q ∈ [1e-9, 1], σ ∈ [0.3, 10³], T ∈ [1, 10⁹], δ ∈ [1e-15, 0.1]. Every call answers with
//! a certified bracket or a typed `PldBudget`; an answer is finite, lower ≤ upper, never
//! above exact RDP's ε, monotone against its neighbours in q, σ, T and δ, and for q = 1 and
//! for T = 1 contains the closed forms (computed here by bisection on libm's erfc, not by the
//! engine's code).
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use sgm_rdp::engine::{pld, Conversion, Error, Run, Sgm};

/// ln Φ̄(z): libm's erfc, or for z > 30 the asymptotic series
/// −z²/2 − ln(z√(2π)) + ln(1 − 1/z² + 3/z⁴ − 15/z⁶) (error < 105/z⁸ relative).
fn ln_phi_bar(z: f64) -> f64 {
    if z > 30.0 {
        let z2 = z * z;
        return -0.5 * z2 - (z * (2.0 * std::f64::consts::PI).sqrt()).ln()
            + (1.0 - 1.0 / z2 + 3.0 / (z2 * z2) - 15.0 / (z2 * z2 * z2)).ln();
    }
    (0.5 * libm::erfc(z / std::f64::consts::SQRT_2)).ln()
}

/// The smallest ε with δ(ε) ≤ `delta`, for a nonincreasing δ(ε): bisection.
fn epsilon_at(d: impl Fn(f64) -> f64, delta: f64) -> f64 {
    if d(0.0) <= delta {
        return 0.0;
    }
    let (mut a, mut b) = (0.0f64, 1.0f64);
    while d(b) > delta {
        b *= 2.0;
    }
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if d(m) > delta {
            a = m
        } else {
            b = m
        }
    }
    0.5 * (a + b)
}

/// ε of the Gaussian mechanism with parameter μ at δ (Balle–Wang Thm 8), by bisection on
/// δ(ε) = Φ̄(ε/μ − μ/2) − e^ε·Φ̄(ε/μ + μ/2), the second term in logs.
fn gaussian_epsilon(mu: f64, delta: f64) -> f64 {
    let d =
        |e: f64| ln_phi_bar(e / mu - mu / 2.0).exp() - (e + ln_phi_bar(e / mu + mu / 2.0)).exp();
    epsilon_at(d, delta)
}

/// ε at δ of ONE step of the sampled Gaussian mechanism, in closed form (the loss is
/// monotone in the one coordinate): remove direction P = (1−q)N(0,σ²) + qN(1,σ²) against
/// Q = N(0,σ²), where L > ε ⟺ x > x_ε = σ²·ln((e^ε − 1 + q)/q) + ½ and
/// δ_rem(ε) = q·Φ̄((x_ε−1)/σ) − (e^ε − 1 + q)·Φ̄(x_ε/σ); add direction (P, Q swapped), where
/// L > ε ⟺ x < x'_ε = σ²·ln((e^{−ε} − 1 + q)/q) + ½ (none when e^{−ε} ≤ 1 − q) and
/// δ_add(ε) = (1 − e^ε(1−q))·Φ(x'_ε/σ) − e^ε·q·Φ((x'_ε−1)/σ). δ = the larger; ε by bisection.
/// Each difference is formed in logs (−expm1 of the gap). libm only, not the engine's code.
fn one_step_epsilon(q: f64, s: f64, delta: f64) -> f64 {
    let s2 = s * s;
    let diff = |ln_a: f64, ln_b: f64| {
        if ln_b >= ln_a {
            0.0
        } else {
            ln_a.exp() * -(ln_b - ln_a).exp_m1()
        }
    };
    let d_rem = |e: f64| {
        let k = e.exp_m1() + q; // e^ε − 1 + q > 0
        let x = s2 * (k / q).ln() + 0.5;
        diff(
            q.ln() + ln_phi_bar((x - 1.0) / s),
            k.ln() + ln_phi_bar(x / s),
        )
    };
    let d_add = |e: f64| {
        let k = (-e).exp_m1() + q; // e^{−ε} − 1 + q
        if k <= 0.0 {
            return 0.0;
        }
        let x = s2 * (k / q).ln() + 0.5;
        // Φ(z) = Φ̄(−z); 1 − e^ε(1−q) = e^ε·k.
        diff(
            e + k.ln() + ln_phi_bar(-x / s),
            e + q.ln() + ln_phi_bar(-(x - 1.0) / s),
        )
    };
    let d = |e: f64| d_rem(e).max(d_add(e));
    epsilon_at(d, delta)
}

fn answer(q: f64, s: f64, t: u64, d: f64) -> Option<pld::Bracket> {
    match pld::epsilon(Sgm::new(q, s).unwrap(), t, d) {
        Ok(a) => Some(a.epsilon),
        Err(Error::PldBudget { .. }) => None,
        Err(other) => panic!("q {q} σ {s} T {t} δ {d}: untyped refusal {other}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn brackets_are_certified_over_the_whole_domain(
        lq in -9.0f64..0.0, ls in -0.52f64..3.0, lt in 0.0f64..9.0, ld in -15.0f64..-1.0,
    ) {
        let (q, s, t, d) = (10f64.powf(lq), 10f64.powf(ls), 10f64.powf(lt).round() as u64, 10f64.powf(ld));
        let Some(b) = answer(q, s, t, d) else { return Ok(()) };
        prop_assert!(b.upper.is_finite() && b.lower >= 0.0 && b.lower <= b.upper, "{b:?}");
        let rdp = Run::with_default_orders(Sgm::new(q, s).unwrap(), t)
            .unwrap()
            .epsilon(d, Conversion::Improved)
            .unwrap();
        prop_assert!(b.upper <= rdp.value.min(rdp.grid_value) * (1.0 + 1e-12), "{b:?} above RDP {}", rdp.value);
        // A neighbour with more noise is no less private: its lower bound cannot pass
        // this upper bound (both certified).
        if let Some(n) = answer(q, s * 1.25, t, d) {
            prop_assert!(n.lower <= b.upper, "σ×1.25 {n:?} vs {b:?}");
        }
        // Likewise a lower sampling rate, fewer steps, a larger δ (hardening round 3's
        // standing check: monotone in q, σ, T and δ).
        if let Some(n) = answer(q * 0.8, s, t, d) {
            prop_assert!(n.lower <= b.upper, "q×0.8 {n:?} vs {b:?}");
        }
        if t > 1 {
            if let Some(n) = answer(q, s, t / 2, d) {
                prop_assert!(n.lower <= b.upper, "T/2 {n:?} vs {b:?}");
            }
        }
        if let Some(n) = answer(q, s, t, (d * 2.0).min(0.5)) {
            prop_assert!(n.lower <= b.upper, "δ×2 {n:?} vs {b:?}");
        }
    }

    #[test]
    fn one_step_contains_the_closed_form(lq in -4.0f64..0.0, ls in -0.3f64..1.0, ld in -12.0f64..-2.0) {
        let (q, s, d) = (10f64.powf(lq), 10f64.powf(ls), 10f64.powf(ld));
        let Some(b) = answer(q, s, 1, d) else { return Ok(()) };
        let truth = one_step_epsilon(q, s, d);
        let slack = 1e-7 * truth.max(1e-3);
        prop_assert!(b.lower <= truth + slack && truth <= b.upper + slack, "q {q} σ {s} δ {d}: {b:?} vs {truth}");
    }

    #[test]
    fn q_one_contains_the_closed_form(ls in -0.52f64..3.0, lt in 0.0f64..9.0, ld in -15.0f64..-1.0) {
        let (s, t, d) = (10f64.powf(ls), 10f64.powf(lt).round() as u64, 10f64.powf(ld));
        let b = answer(1.0, s, t, d).expect("q = 1 is answered in closed form");
        let truth = gaussian_epsilon((t as f64).sqrt() / s, d);
        let slack = 1e-9 * truth.max(1.0);
        prop_assert!(b.lower <= truth + slack && truth <= b.upper + slack, "{b:?} vs {truth}");
    }
}
