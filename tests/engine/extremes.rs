//! The corners of the domain that used to hang or crawl (issues: hardening #1, UI core
//! "valid inputs that hang"): every call returns, with the right value. Each call runs
//! on a worker thread with a deadline far above its cost (milliseconds) and far below
//! the old behaviour (100 s to hours), so a regression to a walk that never stops fails
//! here instead of hanging CI. This is a hang detector, not a speed target: speed lives
//! in `benches/`.
#![cfg(not(target_arch = "wasm32"))]

use sgm_rdp::engine::{bounds, calibrate, default_orders, rdp, Conversion, Run, Sgm};
use std::sync::mpsc;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(20);

fn returns<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(DEADLINE)
        .unwrap_or_else(|_| panic!("{what} did not return within {DEADLINE:?}"))
}

/// Leading term of A_α − 1 as q → 0: C(α,2)·q²·E[(e^s − 1)²] = C(α,2)·q²·(e^{1/σ²} − 1)
/// (Mironov–Talwar–Zhang §3.3, the binomial expansion of eq. 11; the next term is O(q³)), so
/// ε(α) = α·q²·expm1(1/σ²)/2 to relative O(q).
fn small_q_rdp(q: f64, sigma: f64, alpha: f64) -> f64 {
    0.5 * alpha * q * q * (1.0 / (sigma * sigma)).exp_m1()
}

#[test]
fn tiny_q_huge_sigma_rdp_returns_the_right_value() {
    for &(q, sigma) in &[
        (1e-300f64, 1e8f64),
        (1e-200, 1e6),
        (1e-160, 1e5),
        (1e-100, 1e8),
        (1e-60, 1e3),
        (5e-324, 1.0),
    ] {
        for &alpha in &[1.0 + 1e-15, 1.5, 2.0, 64.0, 1e6] {
            // The expansion holds while the far mode's weight q^α·e^{α(α−1)/(2σ²)}
            // is negligible next to the q² term.
            if (alpha - 2.0) * q.ln() + alpha * (alpha - 1.0) / (2.0 * sigma * sigma) > -60.0 {
                continue;
            }
            let got = returns("rdp", move || {
                rdp::rdp(&Sgm::new(q, sigma).unwrap(), alpha).unwrap()
            });
            let want = small_q_rdp(q, sigma, alpha);
            if want < 1e-290 {
                // Underflows (or is subnormal) in f64: 0 or the subnormal itself.
                assert!(
                    (0.0..=1e-290).contains(&got),
                    "q={q} s={sigma} a={alpha}: {got}"
                );
            } else {
                let rel = ((got - want) / want).abs();
                assert!(rel < 1e-12, "q={q} s={sigma} a={alpha}: {got} vs {want}");
            }
        }
    }
}

#[test]
fn tiny_q_huge_sigma_every_entry_point_returns() {
    let m = Sgm::new(1e-300, 1e8).unwrap();
    let curve = returns("rdp_orders", move || {
        rdp::rdp_orders(&m, &default_orders()).unwrap()
    });
    assert!(curve.iter().all(|&r| r == 0.0));
    returns("bounds", move || {
        for a in [2.0, 8.0, 32.0, 128.0] {
            bounds::all(&m, a).unwrap();
        }
        bounds::max_order(&m)
    });
    let e = returns("epsilon", move || {
        Run::with_default_orders(m, 1_000_000_000)
            .unwrap()
            .epsilon(1e-5, Conversion::Improved)
            .unwrap()
    });
    assert!(e.value >= 0.0 && e.value.is_finite());
    let c = returns("calibrate sigma", || {
        calibrate::sigma(
            1.0,
            1e-5,
            1e-300,
            10,
            &default_orders(),
            Conversion::Improved,
        )
    });
    assert!(c.is_ok(), "{c:?}");
    let s = returns("calibrate steps", move || {
        calibrate::steps(1.0, 1e-5, m, &default_orders(), Conversion::Improved).unwrap()
    });
    assert!(s.at_upper_limit);
}

#[test]
fn calibrate_steps_at_the_smallest_sigma_returns_the_largest_steps() {
    let m = Sgm::new(0.5, 1e-3).unwrap();
    let orders = default_orders();
    let c = returns("calibrate steps", move || {
        calibrate::steps(1e9, 1e-5, m, &default_orders(), Conversion::Improved).unwrap()
    });
    let eps = |t: u64| {
        Run::new(m, t, &orders)
            .unwrap()
            .epsilon(1e-5, Conversion::Improved)
            .unwrap()
            .value
    };
    assert!(eps(c.steps) <= 1e9, "over the target");
    assert!(eps(c.steps + 1) > 1e9, "not the largest T");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
    /// The extreme corner as a property: q ≤ 1e-160 with σ ≥ 1e5, any order — a value
    /// (≥ 0, finite, never above the leading-term formula by more than rounding).
    #[test]
    fn extreme_corner_property(lq in -300.0f64..-160.0, ls in 5.0f64..8.0, la in 0.0f64..6.0) {
        let (q, s) = (10f64.powf(lq), 10f64.powf(ls));
        let a = 1.0 + 10f64.powf(la) * (1.0 - 1e-9);
        let r = rdp::rdp(&Sgm::new(q, s).unwrap(), a.min(1e6)).unwrap();
        proptest::prop_assert!(r.is_finite() && r >= 0.0);
        let want = small_q_rdp(q, s, a.min(1e6));
        proptest::prop_assert!(r <= want * (1.0 + 1e-9) + 1e-300, "{r} vs {want}");
    }
}

/// Hardening #7: `epsilon_from_curve` is validated like every other entry point.
#[test]
fn epsilon_from_curve_is_validated() {
    use sgm_rdp::engine::Error;
    let run = Run::new(Sgm::new(0.01, 1.1).unwrap(), 100, [2.0, 8.0]).unwrap();
    let c = run.rdp_curve();
    assert_eq!(
        run.epsilon_from_curve(&c, 2.0, Conversion::Improved)
            .unwrap_err(),
        Error::Delta(2.0)
    );
    assert!(matches!(
        run.epsilon_from_curve(&[], 1e-5, Conversion::Improved),
        Err(Error::CurveLength {
            expected: 2,
            got: 0
        })
    ));
    assert!(run
        .epsilon_from_curve(&[0.1, f64::NAN], 1e-5, Conversion::Improved)
        .is_err());
    let ok = run
        .epsilon_from_curve(&c, 1e-5, Conversion::Improved)
        .unwrap();
    assert_eq!(ok, run.epsilon(1e-5, Conversion::Improved).unwrap());
}

/// Hardening round 4 #1: μ-GDP never below the truth. At q = 1 the run is the Gaussian
/// mechanism composed T times, exactly √T/σ-GDP (Dong, Roth, Su, "Gaussian Differential
/// Privacy", Cor. 3.3): the bracket holds it for μ from 10⁻³ to 10³ (it collapsed to 1e-9
/// above μ ≈ 12.8). At q < 1 with a large μ (ε at δ = 1e-5 is 222) the upper end must stay
/// above its own certified lower end and far from zero.
#[test]
fn gdp_holds_the_closed_form_at_q_one_and_never_collapses() {
    use sgm_rdp::engine::pld::fdp;
    for &mu in &[1e-3, 0.1, 1.0, 5.0, 12.0, 12.8, 13.0, 20.0, 100.0, 1000.0] {
        for &t in &[1u64, 400] {
            let sigma = (t as f64).sqrt() / mu;
            let g = returns("gdp at q = 1", move || {
                fdp::gdp(Sgm::new(1.0, sigma).unwrap(), t).unwrap()
            });
            assert!(
                g.mu.lower <= mu && g.mu.upper >= mu && g.mu.upper <= mu * (1.0 + 1e-12),
                "mu {mu}, T {t}: [{}, {}]",
                g.mu.lower,
                g.mu.upper
            );
            assert!(g.fpr_floor > 0.0 && g.fpr_floor <= fdp::FPR_FLOOR);
        }
    }
    let g = returns("gdp q = 0.01, sigma 0.5", || {
        fdp::gdp(Sgm::new(0.01, 0.5).unwrap(), 100_000).unwrap()
    });
    assert!(g.mu.lower > 10.0 && g.mu.upper >= g.mu.lower, "{:?}", g.mu);
}

/// Hardening round 4 #2: a large user-level group answers or refuses within the call's work
/// budget. The lattice points of a K-component mixture are charged as such, so K = 256
/// refuses at once and K = 128 within seconds (they ran past 300 s and 1.5 GB, and 129 s).
/// The deadline here is a hang detector far above the budget, not a speed target.
#[test]
fn large_groups_answer_or_refuse_within_the_budget() {
    use sgm_rdp::engine::{pld, Error};
    let deadline = Duration::from_secs(90);
    for k in [64u32, 128, 256] {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let ph = pld::Phase::group(Sgm::new(0.01, 1.0).unwrap(), k, 100).unwrap();
            let _ = tx.send(pld::epsilon_phases(&[ph], 1e-5));
        });
        match rx.recv_timeout(deadline) {
            Ok(Ok(a)) => assert!(a.epsilon.lower <= a.epsilon.upper, "K = {k}: {a:?}"),
            Ok(Err(Error::PldBudget { .. })) => {}
            Ok(Err(e)) => panic!("K = {k}: {e}"),
            Err(_) => panic!("K = {k} did not return within {deadline:?}"),
        }
    }
}
