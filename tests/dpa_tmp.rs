use sgm_rdp::engine::{pld, Sgm};
#[test]
fn show() {
    for (q, s, t, d) in [
        (512.0 / 50000.0, 1.0, 2930u64, 1e-5),
        (1e-4, 1.5, 1_000_000, 1e-8),
        (1e-4, 1.5, 10_000, 1e-5),
    ] {
        let m = Sgm::new(q, s).unwrap();
        let st = std::time::Instant::now();
        let a = pld::dp_accounting_epsilon(m, t, d);
        let e1 = st.elapsed();
        let b = pld::epsilon(m, t, d).unwrap().epsilon;
        let b2 = pld::epsilon(m, t, d * 0.999).unwrap().epsilon;
        eprintln!(
            "{q} {s} {t} {d}: dpa {a:?} ({e1:?}); tight [{}, {}]; opacus {:.4}",
            b.lower,
            b.upper,
            b2.upper + 0.01
        );
    }
}
