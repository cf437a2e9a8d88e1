//! Chart B: exact per-step RDP against Theorem 11's bound.

use super::*;
// Ours, not plotters' prelude's (two parameters).
use super::DrawResult;

/// Chart B (Figure 1, right, of Mironov–Talwar–Zhang): per-step exact RDP vs Theorem 11's
/// 2q²α/σ², with the orders where the theorem's conditions hold shaded.
pub fn draw_bound_vs_exact<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    m: &Model,
    th: &Theme,
    overlays: bool,
) -> DrawResult<DB> {
    root.fill(&th.bg)?;
    let (ylo, yhi) = log_range(m.rdp.iter().chain(&m.thm11).copied());
    let (xlo, xhi) = (m.orders[0], *m.orders.last().unwrap_or(&1024.0));
    let (plot, strip) = split_legend(root, th, legend_rows_b(overlays));
    let mut chart = log_chart(
        &plot,
        "per-step RDP: exact vs Theorem 11",
        th,
        (xlo, xhi),
        (ylo, yhi),
    )?;
    // Shade the orders where Theorem 11 applies.
    let mut i = 0;
    while i < m.orders.len() {
        if m.thm11_holds[i] {
            let a0 = m.orders[i];
            while i + 1 < m.orders.len() && m.thm11_holds[i + 1] {
                i += 1;
            }
            let a1 = m.orders[i];
            chart.draw_series(std::iter::once(Rectangle::new(
                [(a0, ylo), (a1, yhi)],
                th.shade.filled(),
            )))?;
        }
        i += 1;
    }
    mesh(&mut chart, th, "order α", "ε(α) per step")?;
    let w = th.px(2.0);
    let mut legend = Vec::new();
    let c0 = th.series[0];
    chart.draw_series(LineSeries::new(
        m.orders
            .iter()
            .zip(&m.rdp)
            .filter(|(_, y)| **y > 0.0)
            .map(|(&a, &y)| (a, y.clamp(ylo, yhi))),
        c0.stroke_width(w),
    ))?;
    legend.push(("exact RDP (§3.3)".to_string(), c0, false));
    let c1 = th.series[1];
    chart.draw_series(LineSeries::new(
        m.orders
            .iter()
            .zip(&m.thm11)
            .filter(|(_, y)| **y > 0.0)
            .map(|(&a, &y)| (a, y.clamp(ylo, yhi))),
        c1.stroke_width(w),
    ))?;
    legend.push((
        match &m.thm11_reason {
            None => "2q²α/σ² (Theorem 11 holds: shaded)".to_string(),
            Some(r) => format!("2q²α/σ²; unshaded: {r}"),
        },
        c1,
        false,
    ));
    if overlays {
        for (name, vals, c) in [
            ("Abadi et al. (Table 1)", &m.abadi, 2usize),
            ("Bun et al. (Table 1)", &m.bun, 3),
        ] {
            let col = th.series[c];
            let pts: Vec<(f64, f64)> = m
                .orders
                .iter()
                .zip(vals.iter())
                .filter_map(|(&a, v)| v.filter(|v| *v > 0.0).map(|v| (a, v.clamp(ylo, yhi))))
                .collect();
            if !pts.is_empty() {
                chart.draw_series(LineSeries::new(pts, col.stroke_width(w)))?;
                legend.push((name.to_string(), col, false));
            }
        }
    }
    finish(root, &plot, strip.as_ref(), &chart, &legend, false, th)
}
