//! Engine benchmarks (criterion). Ids are a contract: rdp_grid_156, epsilon_T1e4, calibrate_sigma.
//! dp_accounting's time on the same grid comes from benches/dp_accounting.sh in the same `make bench`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use sgm_rdp::engine::{calibrate, default_orders, rdp, Conversion, Run, Sgm};

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
}

criterion_group! {
    name = engine;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = benches
}
criterion_main!(engine);
