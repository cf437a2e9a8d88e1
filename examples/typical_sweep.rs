//! The typical class of issue 64 (the runs of `cargo bench --bench engine -- class_typical`:
//! q 1e-3 … 0.1, σ 0.6 … 5, T 10² … 10⁵, δ 1e-5 and 1e-10), one line per run: q, σ, T, δ,
//! the best of two in-process times (ms), the certified bracket, the grid's spacing and FFT
//! length. Two builds side by side: `python3 benches/typical_ab.py OLD NEW` with each build's
//! `target/release/examples/typical_sweep`. One run only: `typical_sweep q,sigma,T,delta`
//! (as printed, e.g. `0.001,0.8,1000,1e-5`).
use sgm_rdp::engine::{pld, Sgm};
use std::time::Instant;

fn main() {
    let only = std::env::args().nth(1);
    for &q in &[1e-3, 3e-3, 1e-2, 3e-2, 0.1] {
        for &s in &[0.6, 0.8, 1.0, 2.0, 5.0] {
            for &t in &[100u64, 1_000, 10_000, 100_000] {
                for &d in &[1e-5, 1e-10] {
                    if only
                        .as_ref()
                        .is_some_and(|o| *o != format!("{q},{s},{t},{d:e}"))
                    {
                        continue;
                    }
                    let Ok(m) = Sgm::new(q, s) else { continue };
                    let mut best = f64::INFINITY;
                    let mut answer = None;
                    for _ in 0..2 {
                        let t0 = Instant::now();
                        answer = Some(pld::epsilon(m, t, d));
                        best = best.min(t0.elapsed().as_secs_f64() * 1e3);
                    }
                    match answer {
                        Some(Ok(a)) => println!(
                            "{q} {s} {t} {d:e} {best:.3} {:.9} {:.9} {:.3e} {}",
                            a.epsilon.lower, a.epsilon.upper, a.grid.spacing, a.grid.fft_len
                        ),
                        Some(Err(e)) => println!("{q} {s} {t} {d:e} {best:.3} refused: {e}"),
                        None => {}
                    }
                }
            }
        }
    }
}
