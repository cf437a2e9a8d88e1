use sgm_rdp::render::{Inputs, Model};
#[test]
fn model_cost() {
    for &(q, s) in &[
        (256.0 / 60000.0, 1.1),
        (0.5, 0.001),
        (0.004, 0.003),
        (0.004, 0.01),
        (0.004, 0.03),
        (0.004, 0.1),
        (0.004, 0.3),
        (0.5, 0.1),
        (0.5, 0.3),
        (1e-6, 0.05),
    ] {
        let mut i = Inputs::mnist();
        i.q = q;
        i.sigma = s;
        let t0 = std::time::Instant::now();
        let m = Model::compute(i);
        let t1 = t0.elapsed();
        let t2 = std::time::Instant::now();
        let c = sgm_rdp::render::max_order_curves(s, 12);
        println!(
            "q={q} s={s}: model {:?} chart C {:?} ok={} {}",
            t1,
            t2.elapsed(),
            m.is_ok(),
            c.is_ok()
        );
    }
}
