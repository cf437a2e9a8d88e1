//! Fuzzing the `batch` parser and, through it, the engine's entry points with
//! proptest (10⁵ cases in `make test`, 10⁶ in `make fuzz`): every line gets exactly one JSON line back, never a panic,
//! and no NaN/inf reaches the output.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use sgm_rdp::cli::batch_line;

fn num() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<f64>().prop_map(|x| format!("{x:e}")),
        // Valid-looking magnitudes (q, sigma, alpha all plausible): exercises the engine.
        (-0.5f64..2.0).prop_map(|e| format!("{}", 10f64.powf(e))),
        prop_oneof![
            Just("0"),
            Just("1"),
            Just("-1"),
            Just("1e400"),
            Just("-0"),
            Just("null"),
            Just("\"x\""),
            Just("[]"),
            // The corner that used to hang the engine (q ≤ 1e-160, σ ≥ 1e5).
            Just("1e-300"),
            Just("1e-170"),
            Just("1e8"),
            Just("1e6")
        ]
        .prop_map(String::from),
    ]
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        60 => any::<String>(),
        39 => (num(), num(), num()).prop_map(|(q, s, a)| format!("{{\"q\":{q},\"sigma\":{s},\"alpha\":{a}}}")),
        1 => (num(), num(), 1u32..100_000, num())
            .prop_map(|(q, s, t, d)| format!("{{\"q\":{q},\"sigma\":{s},\"steps\":{t},\"delta\":{d}}}")),
    ]
}

/// The run's seed: `SGM_RDP_FUZZ_SEED` to replay one, else fresh each run. Printed, so a
/// failure (whose captured output cargo shows) says how to replay it.
fn seed() -> u64 {
    let seed = std::env::var("SGM_RDP_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            t ^ ((std::process::id() as u64) << 32)
        });
    println!("batch fuzz seed {seed} (replay: SGM_RDP_FUZZ_SEED={seed} cargo test --release --test fuzz_batch)");
    seed
}

proptest! {
    // 10⁵ cases in `make test` (a fresh seed each run, printed; a failure also prints the
    // minimal failing line); `make fuzz` runs 10⁶ (SGM_RDP_FUZZ_CASES).
    #![proptest_config(ProptestConfig {
        cases: std::env::var("SGM_RDP_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(100_000),
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed()),
        ..ProptestConfig::default()
    })]
    #[test]
    fn batch_never_panics(l in line()) {
        let out = batch_line(&l);
        prop_assert!(!out.contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        prop_assert!(v.is_object());
        for k in ["rdp", "log_a", "epsilon", "alpha"] {
            if let Some(x) = v.get(k) {
                if v.get("error").is_none() && (k != "alpha" || v.get("epsilon").is_some()) {
                    prop_assert!(x.as_f64().is_some_and(f64::is_finite), "{k} not finite in {out}");
                }
            }
        }
    }
}
