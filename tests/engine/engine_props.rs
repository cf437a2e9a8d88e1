//! Property tests of the engine (proptest): monotonicity, bound ≥ exact where
//! Theorem 11 holds, conversions' orderings, calibration round trip, and
//! "never a panic, never NaN" on arbitrary input.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use sgm_rdp::engine::{bounds, calibrate, default_orders, rdp, Conversion, Run, Sgm};

fn r(q: f64, s: f64, a: f64) -> f64 {
    rdp::rdp(&Sgm::new(q, s).unwrap(), a).unwrap()
}

// Relative slack for "nondecreasing": the values are exact to ~1e-13.
const SLACK: f64 = 1e-11;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn rdp_monotone(lq in -8.0f64..0.0, ls in -1.0f64..3.0, la in 0.001f64..3.0, f in 1.0001f64..1.5) {
        let (q, s, a) = (10f64.powf(lq), 10f64.powf(ls), 1.0 + 10f64.powf(la) / 10.0);
        let base = r(q, s, a);
        prop_assert!(base.is_finite() && base >= 0.0);
        prop_assert!(r(q, s, a * f) >= base * (1.0 - SLACK), "alpha");
        prop_assert!(r((q * f).min(1.0), s, a) >= base * (1.0 - SLACK), "q");
        prop_assert!(r(q, s * f, a) <= base * (1.0 + SLACK), "sigma");
    }

    #[test]
    fn theorem11_bounds_exact_where_it_holds(lq in -6.0f64..-0.7, s in 4.0f64..60.0, la in 0.0f64..3.0) {
        let (q, a) = (10f64.powf(lq), 1.0 + 10f64.powf(la));
        let m = Sgm::new(q, s).unwrap();
        let b = bounds::theorem11(&m, a).unwrap();
        if b.holds() {
            prop_assert!(rdp::rdp(&m, a).unwrap() <= b.value, "exact above Theorem 11 at q={q} s={s} a={a}");
        }
    }

    #[test]
    fn epsilon_monotone_in_delta_and_steps(lq in -5.0f64..-0.5, s in 0.6f64..5.0, lt in 0.0f64..6.0, ld in -10.0f64..-2.0) {
        let q = 10f64.powf(lq);
        let t = 10f64.powf(lt).round() as u64;
        let d = 10f64.powf(ld);
        let orders = [1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
        let run = |t: u64| Run::new(Sgm::new(q, s).unwrap(), t, orders).unwrap();
        for conv in [Conversion::Improved, Conversion::Classic] {
            let e = run(t).epsilon(d, conv).unwrap().grid_value;
            prop_assert!(run(t).epsilon(d * 2.0, conv).unwrap().grid_value <= e * (1.0 + SLACK) + 1e-15);
            prop_assert!(run(t * 2).epsilon(d, conv).unwrap().grid_value >= e * (1.0 - SLACK));
        }
        let imp = run(t).epsilon(d, Conversion::Improved).unwrap();
        let cla = run(t).epsilon(d, Conversion::Classic).unwrap();
        prop_assert!(imp.grid_value <= cla.grid_value * (1.0 + SLACK) + 1e-15, "improved > classic");
        prop_assert!(imp.value <= imp.grid_value, "continuous worse than grid");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn calibrated_sigma_meets_target(lq in -4.0f64..-1.0, lt in 1.0f64..5.0, eps in 0.3f64..8.0) {
        let q = 10f64.powf(lq);
        let t = 10f64.powf(lt).round() as u64;
        let orders = default_orders();
        let c = calibrate::sigma(eps, 1e-5, q, t, &orders, Conversion::Improved).unwrap();
        let at = |s: f64| Run::new(Sgm::new(q, s).unwrap(), t, &orders).unwrap().epsilon(1e-5, Conversion::Improved).unwrap().value;
        prop_assert!(at(c.sigma) <= eps, "calibrated sigma overshoots the target");
        if !c.at_lower_limit {
            prop_assert!(at(c.sigma * (1.0 - 1e-6)) > eps, "sigma not minimal to 1e-6");
        }
        let st = calibrate::steps(eps, 1e-5, Sgm::new(q, c.sigma).unwrap(), &orders, Conversion::Improved).unwrap();
        prop_assert!(st.steps >= t);
        prop_assert!(st.epsilon <= eps);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    /// Any f64s at all: a value or a typed error, never a panic, never NaN.
    #[test]
    fn entry_points_never_panic(q in any::<f64>(), s in any::<f64>(), a in any::<f64>(), d in any::<f64>(), t in any::<u64>()) {
        if let Ok(m) = Sgm::new(q, s) {
            if let Ok(v) = rdp::rdp(&m, a) { prop_assert!(!v.is_nan()); }
            if let Ok(bs) = bounds::all(&m, a) { for b in bs { prop_assert!(!b.value.is_nan() || b.fails.is_some()); } }
            if let Ok(run) = Run::new(m, t, [2.0, 8.0]) {
                if let Ok(o) = run.epsilon(d, Conversion::Improved) { prop_assert!(!o.value.is_nan()); }
                if let Ok(o) = run.delta(d, Conversion::Classic) { prop_assert!(!o.value.is_nan()); }
            }
        }
    }
}

#[test]
fn rdp_at_q_zero_and_one() {
    assert_eq!(r(0.0, 1.0, 5.0), 0.0);
    assert_eq!(r(1.0, 2.0, 5.0), 5.0 / 8.0);
}

#[test]
fn mnist_worked_example() {
    // dp_accounting 0.6.0 RdpAccountant: epsilon = 2.59666 at order 8.1 (README example).
    let run = Run::with_default_orders(Sgm::new(256.0 / 60000.0, 1.1).unwrap(), 14063).unwrap();
    let o = run.epsilon(1e-5, Conversion::Improved).unwrap();
    assert_eq!(o.grid_alpha, 8.1);
    assert!((o.grid_value - 2.59666).abs() < 1e-5, "{}", o.grid_value);
    assert!(o.value <= o.grid_value);
    assert!(!o.at_edge);
}

#[test]
fn calibration_errors_are_clear() {
    let e = calibrate::sigma(
        1e-9,
        1e-5,
        0.5,
        1_000_000_000,
        &default_orders(),
        Conversion::Improved,
    )
    .unwrap_err();
    assert!(e.to_string().contains("no noise_multiplier"), "{e}");
    let e = calibrate::steps(
        1e-6,
        1e-5,
        Sgm::new(0.5, 0.5).unwrap(),
        &default_orders(),
        Conversion::Improved,
    )
    .unwrap_err();
    assert!(e.to_string().contains("one step"), "{e}");
}

#[test]
fn validation_names_the_bad_value() {
    use sgm_rdp::engine::Error;
    assert_eq!(Sgm::new(2.0, 1.0), Err(Error::SampleRate(2.0)));
    assert_eq!(Sgm::new(0.1, -1.0), Err(Error::NoiseMultiplier(-1.0)));
    assert!(matches!(
        Sgm::new(f64::NAN, 1.0),
        Err(Error::NotFinite { .. })
    ));
    let m = Sgm::new(0.1, 1.0).unwrap();
    assert_eq!(rdp::rdp(&m, 1.0), Err(Error::Order(1.0)));
    let run = Run::new(m, 10, [2.0]).unwrap();
    assert_eq!(
        run.epsilon(1.0, Conversion::Improved).unwrap_err(),
        Error::Delta(1.0)
    );
    assert_eq!(Run::new(m, 0, [2.0]).unwrap_err(), Error::Steps(0));
    assert_eq!(Run::new(m, 1, []).unwrap_err(), Error::NoOrders);
}

/// One σ range: calibration searches the whole [MIN_SIGMA, MAX_SIGMA] the engine accepts
/// (it stopped at 0.05 before), and its answer is minimal to 1e-7 there too.
#[test]
fn calibration_searches_the_engines_sigma_range() {
    assert_eq!(calibrate::SIGMA_MIN, sgm_rdp::engine::MIN_SIGMA);
    assert_eq!(calibrate::SIGMA_MAX, sgm_rdp::engine::MAX_SIGMA);
    let orders = default_orders();
    let c = calibrate::sigma(1000.0, 1e-5, 0.5, 1, &orders, Conversion::Improved).unwrap();
    assert!(!c.at_lower_limit && c.sigma < 0.05, "{c:?}");
    let at = |s: f64| {
        Run::new(Sgm::new(0.5, s).unwrap(), 1, &orders)
            .unwrap()
            .epsilon(1e-5, Conversion::Improved)
            .unwrap()
            .value
    };
    assert!(
        at(c.sigma) <= 1000.0 && at(c.sigma * (1.0 - 1e-7)) > 1000.0,
        "{c:?}"
    );
    // A target every σ in the range meets: the lower end, flagged.
    let c = calibrate::sigma(1e7, 1e-5, 0.5, 1, &orders, Conversion::Improved).unwrap();
    assert!(c.at_lower_limit && c.sigma == calibrate::SIGMA_MIN, "{c:?}");
}

/// Calibration's failures are typed, with the numbers (no message-only catch-all).
#[test]
fn unreachable_targets_are_typed_errors() {
    use sgm_rdp::engine::Error;
    let orders = default_orders();
    match calibrate::sigma(
        1e-6,
        1e-5,
        1.0,
        1_000_000_000,
        &orders,
        Conversion::Improved,
    ) {
        Err(Error::SigmaUnreachable { target, epsilon }) => {
            assert_eq!(target, 1e-6);
            assert!(epsilon > target);
        }
        other => panic!("{other:?}"),
    }
    let sgm = Sgm::new(1.0, 0.5).unwrap();
    match calibrate::steps(0.01, 1e-5, sgm, &orders, Conversion::Improved) {
        Err(e @ Error::StepsUnreachable { .. }) => {
            assert!(
                e.to_string().starts_with("even one step gives epsilon = "),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// One lattice for the curve and ε gives exactly what the two separate calls give.
#[test]
fn curve_and_epsilon_matches_the_separate_calls() {
    for (q, s, t) in [
        (256.0 / 60000.0, 1.1, 14063u64),
        (0.5, 0.3, 10),
        (1e-6, 0.8, 100_000_000),
    ] {
        let run = Run::with_default_orders(Sgm::new(q, s).unwrap(), t).unwrap();
        let (curve, opt) = run.curve_and_epsilon(1e-5, Conversion::Improved).unwrap();
        assert_eq!(curve, run.rdp_curve());
        assert_eq!(
            opt,
            run.epsilon_from_curve(&curve, 1e-5, Conversion::Improved)
                .unwrap()
        );
    }
    let run = Run::with_default_orders(Sgm::new(0.1, 1.0).unwrap(), 10).unwrap();
    assert!(
        run.curve_and_epsilon(2.0, Conversion::Improved).is_err(),
        "δ is checked"
    );
}

/// Found by `calibrated_sigma_meets_target`: a σ calibrated for T steps gives ε(T) equal to
/// the target to the last bit, and the most-steps search at that σ floored its estimate to
/// T − 1. The answer must be at least T (T steps meet the target).
#[test]
fn most_steps_at_a_calibrated_sigma_is_at_least_its_steps() {
    let (q, t, eps) = (10f64.powf(-3.2054676805354885), 48, 2.1061483754331425);
    let orders = default_orders();
    let c = calibrate::sigma(eps, 1e-5, q, t, &orders, Conversion::Improved).unwrap();
    let st = calibrate::steps(
        eps,
        1e-5,
        Sgm::new(q, c.sigma).unwrap(),
        &orders,
        Conversion::Improved,
    )
    .unwrap();
    assert!(st.steps >= t && st.epsilon <= eps, "{st:?}");
}
