//! Where the tight ε's two certified ends sit around the truth: for MNIST, CIFAR, the
//! large-dataset and typical runs, the default bracket (`pld::epsilon`, goal 0.04 % of ε) and
//! a reference bracket 100× narrower (`pld::epsilon_to`, goal 3e-6 relative: finer lattices of
//! the same construction; their own ends are certified, so the truth is within ± its half
//! width of its middle). Prints each end's distance from the reference's middle and their ratio:
//! ~2 on every run, the optimistic (lower) lattice's end twice as far out as the
//! pessimistic (upper) one's — the share of the width that lattice's construction sets
//! (docs/performance.md, "Where a bracket's width comes from").
//! `cargo run --release --example width_sides`.
use sgm_rdp::engine::{pld, Sgm};

fn main() {
    println!("run: default bracket; reference ± half width; below, above (the truth's distance to each end); below/above");
    for &(q, s, t, d) in &[
        (256.0 / 60000.0, 1.1, 14063u64, 1e-5),
        (256.0 / 50000.0, 1.0, 2930, 1e-5),
        (1e-4, 1.0, 100_000, 1e-5),
        (1e-5, 1.0, 1_000_000, 1e-5),
        (1e-3, 0.8, 1000, 1e-5),
        (3e-3, 1.0, 1000, 1e-5),
        (0.01, 1.0, 10_000, 1e-5),
        (0.03, 0.6, 100, 1e-10),
        (0.1, 2.0, 1000, 1e-5),
    ] {
        let m = Sgm::new(q, s).expect("a valid run");
        let (Ok(a), Ok(r)) = (pld::epsilon(m, t, d), pld::epsilon_to(m, t, d, 3e-6)) else {
            println!("q {q:e} σ {s} T {t} δ {d:e}: refused");
            continue;
        };
        let (a, r) = (a.epsilon, r.epsilon);
        let mid = 0.5 * (r.lower + r.upper);
        let (below, above) = (mid - a.lower, a.upper - mid);
        println!(
            "q {q:e} σ {s} T {t} δ {d:e}: [{:.9}, {:.9}]; {mid:.9} ± {:.1e}; {below:.2e}, {above:.2e}; {:.2}",
            a.lower,
            a.upper,
            0.5 * (r.upper - r.lower),
            below / above
        );
    }
}
