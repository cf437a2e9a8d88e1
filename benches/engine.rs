//! Engine benchmarks (criterion). Ids are a contract: rdp_grid_156, epsilon_T1e4, calibrate_sigma,
//! pld_mnist, pld_profile, pld_calibrate_sigma, gdp_mnist, pld_large_dataset, and one per run class of
//! issue 64's table (`class_*`, in their own group: fewer samples, as some take ~1 s) with the
//! page's chart half and μ-GDP on one of them (`page_charts_profile_risk_q1e-4`, `gdp_q1e-4`),
//! and correlated noise's (`correlated_*`).
//! dp_accounting's time on the same grid comes from benches/dp_accounting.sh in the same `make bench`.
// References here may use the platform's f64 functions: the libm rule (clippy.toml) is for
// the numbers the surfaces print, which come from the library.
#![allow(clippy::disallowed_methods)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use sgm_rdp::engine::{calibrate, default_orders, pld, rdp, Conversion, Run, Sgm};

fn benches(c: &mut Criterion) {
    let orders = default_orders();
    let m = Sgm::new(0.01, 1.1).unwrap();
    c.bench_function("rdp_grid_156", |b| {
        b.iter(|| rdp::rdp_orders(black_box(&m), black_box(&orders)).unwrap())
    });
    c.bench_function("epsilon_T1e4", |b| {
        b.iter(|| {
            Run::new(black_box(m), 10_000, &orders)
                .unwrap()
                .epsilon(black_box(1e-5), Conversion::Improved)
                .unwrap()
        })
    });
    c.bench_function("calibrate_sigma", |b| {
        b.iter(|| {
            calibrate::sigma(
                black_box(1.0),
                1e-5,
                0.01,
                10_000,
                &orders,
                Conversion::Improved,
            )
            .unwrap()
        })
    });
    // The MNIST run (q = 256/60000, σ = 1.1, T = 14063): tight ε at δ = 1e-5 with its bracket.
    let mnist = Sgm::new(256.0 / 60000.0, 1.1).unwrap();
    c.bench_function("pld_mnist", |b| {
        b.iter(|| pld::epsilon(black_box(mnist), 14063, black_box(1e-5)).unwrap())
    });
    let grid: Vec<f64> = (1..=50).map(|i| i as f64 * 0.1).collect();
    c.bench_function("pld_profile", |b| {
        b.iter(|| pld::profile(black_box(mnist), 14063, black_box(&grid)).unwrap())
    });
    c.bench_function("pld_calibrate_sigma", |b| {
        b.iter(|| pld::calibrate_sigma(black_box(2.0), 1e-5, 256.0 / 60000.0, 14063).unwrap())
    });
    // The page's three tight charts on MNIST after a typed σ, natively: the worker computes
    // ε over training (16 checkpoints) and, on its helper, the profile with the attack risk
    // side by side, the headline's bracket known (render::tight::charts_data).
    {
        use sgm_rdp::render::tight::{charts_data, Parts};
        let known = headline(mnist, 14063, 1e-5);
        for (id, part) in [
            ("page_charts_training_mnist", Parts::Training),
            ("page_charts_profile_risk_mnist", Parts::ProfileRisk),
        ] {
            c.bench_function(id, |b| {
                b.iter(|| charts_data(black_box(mnist), 14063, black_box(1e-5), known, part))
            });
        }
    }
    // μ-GDP with its fit on MNIST (what the page shows under the risk chart; the command
    // line's `gdp`): the dense profile's compositions and the trade-off curve's fit.
    c.bench_function("gdp_mnist", |b| {
        b.iter(|| pld::fdp::gdp(black_box(mnist), 14063).unwrap())
    });
    // A large-dataset run (N = 10⁷, B = 1000, 10 epochs: q = 1e-4, T = 10⁵), where the
    // one-FFT window does not fit and the ladder answers.
    let large = Sgm::new(1e-4, 1.0).unwrap();
    c.bench_function("pld_large_dataset", |b| {
        b.iter(|| pld::epsilon(black_box(large), 100_000, black_box(1e-5)).unwrap())
    });
    // MNIST-shaped balls in bins (issue #24): each example in one of t = 234 steps per
    // epoch, 60 epochs, σ = 1.1, δ = 1e-5; its bracket is printed next to Poisson's.
    let alloc = pld::Phase::allocation(1.1, 234, 1, 60).unwrap();
    c.bench_function("pld_allocation_mnist", |b| {
        // Cold: the law of one epoch, which a repeated call would find cached, is rebuilt.
        b.iter(|| {
            pld::forget_cached_laws();
            pld::epsilon_phases(black_box(&[alloc]), black_box(1e-5)).unwrap()
        })
    });
    let a = pld::epsilon(mnist, 14063, 1e-5).unwrap();
    println!(
        "pld_mnist answer: epsilon in [{:.6}, {:.6}] (grid {:.3e}, FFT {})",
        a.epsilon.lower, a.epsilon.upper, a.grid.spacing, a.grid.fft_len
    );
    let r = pld::epsilon_phases(&[alloc], 1e-5).unwrap();
    let p = pld::epsilon(Sgm::new(1.0 / 234.0, 1.1).unwrap(), 234 * 60, 1e-5).unwrap();
    println!(
        "pld_allocation_mnist answer: epsilon in [{:.6}, {:.6}]; Poisson at q = 1/234, same steps: [{:.6}, {:.6}]",
        r.epsilon.lower, r.epsilon.upper, p.epsilon.lower, p.epsilon.upper
    );
}

/// The run's tight bracket as the page's charts take it (upper, lower): the headline, known
/// before the charts are asked.
fn headline(sgm: Sgm, steps: u64, delta: f64) -> Option<(f64, f64)> {
    let e = pld::epsilon(sgm, steps, delta).unwrap().epsilon;
    Some((e.upper, e.lower))
}

/// One tight ε per run class (issue 64's table; `benches/rivals.py` puts dp_accounting's
/// default grid beside each in the same `make bench`).
fn classes(c: &mut Criterion) {
    let sgm = |q: f64, s: f64| Sgm::new(q, s).unwrap();
    let runs: [(&str, Sgm, u64, f64); 6] = [
        ("class_cifar", sgm(256.0 / 50000.0, 1.0), 2930, 1e-5),
        ("class_q1e-5_T1e6", sgm(1e-5, 1.0), 1_000_000, 1e-5),
        ("class_q2e-5_T5e6", sgm(2e-5, 1.0), 5_000_000, 1e-6),
        ("class_q1e-6_T1e8", sgm(1e-6, 0.8), 100_000_000, 1e-5),
        (
            "class_mnist_delta1e-12",
            sgm(256.0 / 60000.0, 1.1),
            14063,
            1e-12,
        ),
        ("class_mnist", sgm(256.0 / 60000.0, 1.1), 14063, 1e-5),
    ];
    for (id, m, t, d) in runs {
        c.bench_function(id, |b| {
            b.iter(|| pld::epsilon(black_box(m), t, black_box(d)).unwrap())
        });
    }
    let alloc = pld::Phase::allocation(1.0, 64, 1, 1).unwrap();
    c.bench_function("class_allocation_t64", |b| {
        b.iter(|| {
            pld::forget_cached_laws();
            pld::epsilon_phases(black_box(&[alloc]), black_box(1e-8)).unwrap()
        })
    });
    let user = pld::Phase::group(sgm(1.024e-4, 0.8), 10, 29297).unwrap();
    c.bench_function("class_user_k10", |b| {
        b.iter(|| pld::epsilon_phases(black_box(&[user]), black_box(1e-8)).unwrap())
    });
    // The page's work after a typed σ on a large-dataset run (q = 1e-4, σ = 1, T = 10⁵, δ =
    // 1e-5; issue 64's goal ≤ 500 ms for the charts): the profile with the attack risk (the
    // helper's half of the charts) and μ-GDP, the headline's bracket known
    // (`examples/page_halves` prints the same on three large runs).
    {
        use sgm_rdp::render::tight::{charts_data, Parts};
        let large = sgm(1e-4, 1.0);
        let known = headline(large, 100_000, 1e-5);
        c.bench_function("page_charts_profile_risk_q1e-4", |b| {
            b.iter(|| charts_data(black_box(large), 100_000, 1e-5, known, Parts::ProfileRisk))
        });
        c.bench_function("gdp_q1e-4", |b| {
            b.iter(|| pld::fdp::gdp(black_box(large), 100_000).unwrap())
        });
    }
}

/// The typical class of issue 64 (q ≥ 1e-3, T ≤ 10⁵, δ ≥ 1e-10; goal ≤ 10 ms a call): a sweep of
/// 200 runs (q 1e-3 … 0.1, σ 0.6 … 5, T 10² … 10⁵, δ 1e-5 and 1e-10), each timed once (best of
/// two), its worst case and median printed; then the worst run benched by criterion
/// (`class_typical_worst`).
fn typical(c: &mut Criterion) {
    use std::time::Instant;
    let mut times: Vec<(f64, f64, f64, u64, f64)> = Vec::new();
    let mut refused = 0;
    for &q in &[1e-3, 3e-3, 1e-2, 3e-2, 0.1] {
        for &s in &[0.6, 0.8, 1.0, 2.0, 5.0] {
            for &t in &[100u64, 1_000, 10_000, 100_000] {
                for &d in &[1e-5, 1e-10] {
                    let m = Sgm::new(q, s).unwrap();
                    let mut best = f64::INFINITY;
                    for _ in 0..2 {
                        let t0 = Instant::now();
                        let r = pld::epsilon(m, t, d);
                        best = best.min(t0.elapsed().as_secs_f64() * 1e3);
                        if r.is_err() {
                            refused += 1;
                            best = f64::NAN;
                            break;
                        }
                    }
                    if best.is_finite() {
                        times.push((best, q, s, t, d));
                    }
                }
            }
        }
    }
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    let w = times[times.len() - 1];
    println!(
        "class_typical sweep: {} runs answered ({} refused: outside the domain), median {:.2} ms, 90th percentile {:.2} ms, worst {:.2} ms (q {}, sigma {}, T {}, delta {:e})",
        times.len(),
        refused,
        times[times.len() / 2].0,
        times[times.len() * 9 / 10].0,
        w.0,
        w.1,
        w.2,
        w.3,
        w.4
    );
    let m = Sgm::new(w.1, w.2).unwrap();
    c.bench_function("class_typical_worst", |b| {
        b.iter(|| pld::epsilon(black_box(m), w.3, black_box(w.4)).unwrap())
    });
}

/// An audit of 10⁵ canary scores (issue 65: ≤ 200 ms in the browser; natively here): members'
/// scores a spread shifted by 0.6 from the non-members', 5·10⁴ of each, at δ = 1e-5.
fn audits(c: &mut Criterion) {
    use sgm_rdp::engine::audit::{audit, Options, Scores};
    let spread = |n: usize, shift: f64| -> Vec<f64> {
        (0..n)
            .map(|i| shift + ((i as f64 + 0.5) / n as f64 - 0.5) * 6.0)
            .collect()
    };
    let (ins, outs) = (spread(50_000, 0.6), spread(50_000, 0.0));
    let opts = Options::new(0.05, 1e-5, vec![1e-3, 1e-2, 1e-1], None).unwrap();
    c.bench_function("audit_1e5", |b| {
        b.iter(|| {
            let s = Scores::new(black_box(ins.clone()), black_box(outs.clone())).unwrap();
            audit(&s, &opts)
        })
    });
}

/// Correlated noise (issue 67): jax-privacy's balls-in-bins example (T = 100, cycles of 10, a
/// 4-band C ∝ [1, ½, ¼, ⅛], δ = 1e-2) through the query layer, as the CLI and batch answer it:
/// the certified ε at σ = 4.5 and the σ calibrated for ε = 1 (goal ≤ 2 s). Each iteration
/// starts cold (the random-allocation law cached between calls is forgotten).
fn correlated(c: &mut Criterion) {
    let run = r#""strategy": "band:4,1,0.5,0.25,0.125", "participation": "cyclic-bins:10", "steps": 100, "delta": 0.01"#;
    for (id, line) in [
        (
            "correlated_jax_epsilon",
            format!(r#"{{"command": "epsilon", {run}, "sigma": 4.5}}"#),
        ),
        (
            "correlated_jax_calibrate",
            format!(r#"{{"command": "calibrate", {run}, "epsilon": 1}}"#),
        ),
    ] {
        assert!(!sgm_rdp::query::line(&line).contains("error"), "{id}");
        c.bench_function(id, |b| {
            b.iter(|| {
                pld::forget_cached_laws();
                sgm_rdp::query::line(black_box(&line))
            })
        });
    }
}

criterion_group! {
    name = by_class;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(2));
    targets = classes, audits, typical, correlated
}

criterion_group! {
    name = engine;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = benches
}
criterion_main!(engine, by_class);
