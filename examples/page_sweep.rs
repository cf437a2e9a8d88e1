//! The page's profile-and-risk half of the tight charts (`render::tight::charts_data`,
//! `Parts::ProfileRisk`) and μ-GDP (`fdp::gdp`) over a grid of 108 runs at δ = 1e-5 (q 1e-6 …
//! 0.1, σ 0.5 … 3, T 10² … 10⁸; runs whose tight ε is refused are skipped), each call once,
//! natively: per run the two times (ms), the profile chart's points wider than 1.25× and the sum
//! of ln(upper/lower) over its points, the risk chart's TPR bounds at the default FPRs and μ's
//! upper end; then the totals. Two builds side by side: run each build's binary in turn and
//! compare the lines (the bounds must not rise). `cargo run --release --example page_sweep`.
use sgm_rdp::engine::{pld, Sgm};
use sgm_rdp::render::tight::{charts_data, Parts};
use std::time::Instant;
fn main() {
    let mut runs = vec![];
    for q in [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1] {
        for s in [0.6, 1.0, 3.0] {
            for t in [100u64, 10_000, 1_000_000, 100_000_000] {
                runs.push((q, s, t));
            }
        }
    }
    for q in [1e-5, 1e-4, 1e-3] {
        for s in [0.5, 0.75, 1.25, 2.0] {
            for t in [10_000u64, 100_000, 1_000_000] {
                runs.push((q, s, t));
            }
        }
    }
    let (mut tp, mut tg) = (0.0, 0.0);
    for (q, s, t) in runs {
        let m = Sgm::new(q, s).unwrap();
        let Ok(head) = pld::epsilon(m, t, 1e-5) else {
            continue;
        };
        let h = head.epsilon;
        let t0 = Instant::now();
        let c = charts_data(m, t, 1e-5, Some((h.upper, h.lower)), Parts::ProfileRisk);
        let a = t0.elapsed().as_secs_f64() * 1e3;
        let t0 = Instant::now();
        let g = pld::fdp::gdp(m, t);
        let b = t0.elapsed().as_secs_f64() * 1e3;
        tp += a;
        tg += b;
        let risk = c.risk.and_then(|r| r.ok()).map(|r| r.tpr);
        // The profile chart's points wider than 1.25× (above δ = 1e-15) and Σ ln(upper/lower).
        let prof = c.profile.and_then(|r| r.ok()).map(|rows| {
            let live = || rows.iter().filter(|r| r.upper > 1e-15);
            let poor = live().filter(|r| r.upper > 1.25 * r.lower).count();
            let width: f64 = live()
                .filter(|r| r.lower > 0.0)
                .map(|r| sgm_rdp::engine::math::ln(r.upper / r.lower))
                .sum();
            (poor, (width * 1e4).round() / 1e4)
        });
        println!(
            "{q} {s} {t}: pr {a:.0} gdp {b:.0} prof {prof:?} risk {:?} mu {:?}",
            risk,
            g.map(|g| g.mu.upper).ok()
        );
    }
    println!("TOTAL profile-risk {tp:.0} ms gdp {tg:.0} ms");
}
