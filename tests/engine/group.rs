//! User-level (group) privacy from the mixture-of-Gaussians PLD (issue #25), against
//! dp_accounting's own mixture-of-Gaussians PLD at a fine grid (tests/reference/
//! group_reference.py: its pessimistic estimate is an upper and its optimistic one a
//! lower bound on the truth) and TF Privacy's published statement value.
#![cfg(not(target_arch = "wasm32"))]

use sgm_rdp::engine::pld::{self, Phase};
use sgm_rdp::engine::Sgm;

fn group_eps(q: f64, sigma: f64, k: u32, steps: u64, delta: f64) -> pld::Bracket {
    let p = Phase::group(Sgm::new(q, sigma).unwrap(), k, steps).unwrap();
    pld::epsilon_phases(&[p], delta).unwrap().epsilon
}

#[test]
fn brackets_agree_with_dp_accountings_mixture_pld() {
    let text = include_str!("../reference/group.jsonl");
    let mut n = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let f = |k: &str| v[k].as_f64().unwrap();
        let k = v["group_size"].as_u64().unwrap() as u32;
        let b = group_eps(f("q"), f("sigma"), k, f("steps") as u64, f("delta"));
        let (r_up, r_lo) = (f("upper"), f("lower"));
        // The truth is in [r_lo, r_up] and in [b.lower, b.upper]: they overlap.
        assert!(b.upper >= r_lo && b.lower <= r_up, "{line}: ours {b:?}");
        assert!(b.upper <= r_up * 1.005, "{line}: ours {b:?}");
        // Within 0.1 %, except the large groups at small δ, held to the accepted 1 % (P2 at
        // K = 64 is 0.20 % wide: [15.061892, 15.091591]; it had been refused).
        let width = if k > 10 { 1e-2 } else { 1e-3 };
        assert!(b.upper - b.lower <= width * b.upper, "{line}: ours {b:?}");
        n += 1;
    }
    assert!(n >= 10);
}

#[test]
fn tf_privacy_statement_value() {
    // TF Privacy's compute_dp_sgd_privacy_test.py: n = 10000, batch 64, 5 epochs, σ = 1
    // (after microbatching), δ = 1e-6, user-level with 2 examples per user, Poisson
    // sampling, PLD: 2.532 (three decimals). T = ⌈5·10000/64⌉ = 782.
    let b = group_eps(64.0 / 10000.0, 1.0, 2, 782, 1e-6);
    assert!((b.upper - 2.532).abs() < 6e-4, "{b:?}");
}

#[test]
fn one_example_per_user_is_example_level_and_more_examples_cost_more() {
    let m = Sgm::new(0.01, 1.2).unwrap();
    let one = group_eps(0.01, 1.2, 1, 500, 1e-5);
    assert_eq!(one, pld::epsilon(m, 500, 1e-5).unwrap().epsilon);
    let mut last = one.upper;
    for k in 2..=6 {
        let b = group_eps(0.01, 1.2, k, 500, 1e-5);
        assert!(
            b.lower > last * 0.999 && b.upper > last,
            "k {k}: {b:?} after {last}"
        );
        last = b.upper;
    }
    // q = 1: the k examples always move the sum by k — the Gaussian mechanism with μ = k√T/σ.
    let g = group_eps(1.0, 4.0, 2, 4, 1e-5);
    let direct = pld::epsilon(Sgm::new(1.0, 2.0).unwrap(), 4, 1e-5)
        .unwrap()
        .epsilon;
    assert!((g.upper - direct.upper).abs() < 1e-9, "{g:?} {direct:?}");
    assert!(Phase::group(m, 0, 10).is_err() && Phase::group(m, 257, 10).is_err());
}

/// The exact-RDP group route (Vadhan's Lemma 2.2 with TF Privacy's line search): TF
/// Privacy's published RDP statement value, and it sits above the tight bracket.
#[test]
fn rdp_group_route_meets_tf_privacys_statement_and_is_looser() {
    use sgm_rdp::engine::group_rdp;
    let m = Sgm::new(64.0 / 10000.0, 1.0).unwrap();
    // compute_dp_sgd_privacy_test.py: "User-level DP … computed using RDP accounting and
    // group privacy … Epsilon assuming Poisson sampling: 6.425" (3 examples per user; its
    // grid of orders; ours also refines over continuous α, so it may only be smaller).
    let g = group_rdp::epsilon(m, 782, 3, 1e-6).unwrap();
    assert!(g.epsilon <= 6.4255 && g.epsilon > 6.40, "{g:?}");
    // 10 examples per user: no finite bound by this route (TF Privacy prints "inf").
    assert!(group_rdp::epsilon(m, 782, 10, 1e-6).is_err());
    for k in [2u32, 3, 4] {
        let rdp = group_rdp::epsilon(m, 782, k, 1e-6).unwrap().epsilon;
        let tight = group_eps(64.0 / 10000.0, 1.0, k, 782, 1e-6);
        assert!(
            tight.upper < rdp,
            "k {k}: tight {tight:?} vs RDP group {rdp}"
        );
    }
}
