//! Chart B: exact per-step RDP against Theorem 11's bound.

use super::*;
// Ours, not plotters' prelude's (two parameters).
use super::DrawResult;

/// The rows of chart B's legend (what [`draw_bound_vs_exact`] lists).
pub fn legend_rows_b(m: &Model, overlays: bool) -> usize {
    legend_b(m, &Theme::light(1.0), overlays).len()
}

/// Above this order the default grid is sparse (64, 128, …, 1024): chart B marks its
/// values there instead of drawing straight ramps between them.
const DENSE_UNTIL: f64 = 64.0;

/// Table 1's overlays that have values at some order: (label, values, colour index).
fn overlays_of(m: &Model) -> Vec<(&'static str, &Vec<Option<f64>>, usize)> {
    [
        ("Abadi et al. (Table 1)", &m.abadi, 2usize),
        ("Bun et al. (Table 1)", &m.bun, 3),
    ]
    .into_iter()
    .filter(|(_, v, _)| v.iter().any(|v| v.is_some_and(|v| v > 0.0)))
    .collect()
}

/// Chart B's legend: the two curves, the shading (when any order has it), the overlays
/// drawn.
pub fn legend_b(m: &Model, th: &Theme, overlays: bool) -> Legend {
    let mut legend: Legend = vec![
        ("exact RDP (§3.3)".to_string(), th.series[0], Mark::Line),
        (
            match &m.thm11_reason {
                None => "2q²α/σ² (Theorem 11)".to_string(),
                Some(r) => format!("2q²α/σ² (Theorem 11); unshaded: {r}"),
            },
            th.series[1],
            Mark::Line,
        ),
    ];
    if m.thm11_holds.iter().any(|h| *h) {
        legend.push((
            "shaded: Theorem 11's conditions hold".to_string(),
            th.shade,
            Mark::Area,
        ));
    }
    if overlays {
        for (name, _, c) in overlays_of(m) {
            legend.push((name.to_string(), th.series[c], Mark::Dashed));
        }
    }
    legend
}

/// Chart B (Figure 1, right, of Mironov–Talwar–Zhang): per-step exact RDP vs Theorem 11's
/// 2q²α/σ², with the orders where the theorem's conditions hold shaded. Lines join the
/// dense orders (α ≤ 64); the sparse ones above are marked.
pub fn draw_bound_vs_exact<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    m: &Model,
    th: &Theme,
    overlays: bool,
) -> DrawResult<DB> {
    root.fill(&th.bg)?;
    let (ylo, yhi) = log_range(m.rdp.iter().chain(&m.thm11).copied());
    let (xlo, xhi) = (m.orders[0], *m.orders.last().unwrap_or(&1024.0));
    let legend = legend_b(m, th, overlays);
    let (plot, strip) = split_legend(root, th, legend.len());
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
    let mut series: Vec<(Points, RGBColor, bool)> = Vec::new();
    for (vals, c) in [(&m.rdp, 0), (&m.thm11, 1)] {
        let pts = m
            .orders
            .iter()
            .zip(vals)
            .filter(|(_, y)| **y > 0.0)
            .map(|(&a, &y)| (a, y.clamp(ylo, yhi)))
            .collect();
        series.push((pts, th.series[c], false));
    }
    if overlays {
        for (_, vals, c) in overlays_of(m) {
            let pts = m
                .orders
                .iter()
                .zip(vals.iter())
                .filter_map(|(&a, v)| v.filter(|v| *v > 0.0).map(|v| (a, v.clamp(ylo, yhi))))
                .collect();
            series.push((pts, th.series[c], true));
        }
    }
    for (pts, col, dash) in series {
        let (dense, sparse): (Vec<_>, Vec<_>) = pts.into_iter().partition(|p| p.0 <= DENSE_UNTIL);
        let style = col.stroke_width(w);
        if dash {
            dashed(&mut chart, dense, style, th)?;
        } else {
            chart.draw_series(LineSeries::new(dense, style))?;
        }
        chart.draw_series(
            sparse
                .into_iter()
                .map(|p| Circle::new(p, th.px(3.0), col.filled())),
        )?;
    }
    finish(root, &plot, strip.as_ref(), &chart, &legend, false, th)
}
