//! The page's work after a typed σ, natively, on MNIST and three large-dataset runs of issue
//! 64's table (the two longest also at σ values `benches/page_updates.mjs` types): the
//! tight ε (one call), the two halves of the three tight charts that the worker and its helper
//! compute side by side (`render::tight::charts_data`: ε over training; the profile with the
//! attack risk; best of 3 each) and μ-GDP (`fdp::gdp`, one call), in ms.
//! `cargo run --release --example page_halves`. (MNIST's halves are also criterion ids:
//! `page_charts_training_mnist`, `page_charts_profile_risk_mnist`, `gdp_mnist`.)
use sgm_rdp::engine::{pld, Sgm};
use sgm_rdp::render::tight::{charts_data, Parts};
use std::time::Instant;
fn main() {
    for &(q, s, t, d) in &[
        (256.0 / 60000.0, 1.1, 14063u64, 1e-5),
        (1e-4, 1.0, 100_000, 1e-5),
        (1e-5, 1.0, 1_000_000, 1e-5),
        (2e-5, 1.0, 5_000_000, 1e-6),
        // (The σ values the page's benchmark types, 1.13 … 1.325, on the longest run.)
        (2e-5, 1.14, 5_000_000, 1e-6),
        (2e-5, 1.2, 5_000_000, 1e-6),
        (1e-5, 1.14, 1_000_000, 1e-5),
    ] {
        let m = Sgm::new(q, s).unwrap();
        let t0 = Instant::now();
        let head = pld::epsilon(m, t, d).unwrap().epsilon;
        let th = t0.elapsed().as_secs_f64() * 1e3;
        let known = Some((head.upper, head.lower));
        let mut out = format!("q {q:e} σ {s} T {t} δ {d:e}: headline {th:.0} ms");
        for (name, part) in [
            ("training", Parts::Training),
            ("profile-risk", Parts::ProfileRisk),
        ] {
            let mut best = f64::INFINITY;
            for _ in 0..3 {
                let t0 = Instant::now();
                std::hint::black_box(charts_data(m, t, d, known, part));
                best = best.min(t0.elapsed().as_secs_f64() * 1e3);
            }
            out += &format!(", {name} {best:.0} ms");
        }
        let t0 = Instant::now();
        let g = pld::fdp::gdp(m, t);
        out += &format!(
            ", gdp {:.0} ms ({})",
            t0.elapsed().as_secs_f64() * 1e3,
            g.is_ok()
        );
        println!("{out}");
    }
}
