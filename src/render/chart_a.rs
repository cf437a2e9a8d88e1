//! Chart A: ε against the order α.

use super::*;
// Ours, not plotters' prelude's (two parameters).
use super::DrawResult;

/// Legend entries of chart A (three curves, the optimum, tCDP when shown) and
/// of chart B (exact, Theorem 11, two Table 1 overlays when on): the height a
/// narrow chart's legend strip needs.
pub fn legend_rows_a(m: &Model) -> usize {
    4 + m.tcdp.is_some() as usize
}

pub fn legend_rows_b(overlays: bool) -> usize {
    2 + if overlays { 2 } else { 0 }
}

/// Chart A's axis ranges ((α from, to), (ε from, to)); the page's hover
/// readout maps the pointer with the same α range.
pub fn chart_a_ranges(m: &Model) -> ((f64, f64), (f64, f64)) {
    let t = m.inputs.steps as f64;
    let total = m.rdp.iter().map(|r| r * t);
    let (ylo, yhi) = log_range(
        total
            .clone()
            .chain(m.eps_improved.iter().copied())
            .chain(m.eps_classic.iter().copied()),
    );
    // Keep the optimum readable: the converted ε explodes at large α.
    let yhi = yhi.min(m.opt.value.max(ylo).max(1e-3) * 300.0);
    let (xlo, xmax) = (m.orders[0], *m.orders.last().unwrap_or(&1024.0));
    // Zoom α to where some curve is still on the chart (the converted ε leaves
    // the top at large α), with room on the right for the legend.
    let last_shown = (0..m.orders.len())
        .rev()
        .find(|&i| {
            [m.rdp[i] * t, m.eps_improved[i], m.eps_classic[i]]
                .iter()
                .any(|&y| y <= yhi)
        })
        .map(|i| m.orders[i])
        .unwrap_or(xmax);
    let xhi = (4.0 * last_shown.max(m.opt.alpha)).clamp(10.0 * xlo, xmax);
    ((xlo, xhi), (ylo, yhi))
}

/// Chart A: composed RDP T·ε(α) and converted ε(α) over α, optimum marked.
pub fn draw_eps_vs_alpha<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    m: &Model,
    th: &Theme,
) -> DrawResult<DB> {
    root.fill(&th.bg)?;
    let t = m.inputs.steps as f64;
    let total: Vec<f64> = m.rdp.iter().map(|r| r * t).collect();
    let ((xlo, xhi), (ylo, yhi)) = chart_a_ranges(m);
    let (plot, strip) = split_legend(root, th, legend_rows_a(m));
    let mut chart = log_chart(&plot, "ε vs order α", th, (xlo, xhi), (ylo, yhi))?;
    mesh(&mut chart, th, "order α", "ε")?;
    let clip = |v: f64| v.clamp(ylo, yhi);
    let series: [(&str, Vec<f64>, usize); 3] = [
        ("T·RDP(α) (composed)", total.clone(), 0),
        ("ε(α), improved conversion", m.eps_improved.clone(), 1),
        ("ε(α), classic conversion", m.eps_classic.clone(), 2),
    ];
    let mut legend = Vec::new();
    for (name, ys, c) in series {
        let col = th.series[c];
        chart.draw_series(LineSeries::new(
            // Stop each curve where it leaves the top (no flat line along the edge).
            m.orders
                .iter()
                .zip(&ys)
                .filter(|(_, y)| **y > 0.0)
                .take_while(|(_, y)| **y <= yhi * 1.5)
                .map(|(&a, &y)| (a, clip(y))),
            col.stroke_width(th.px(2.0)),
        ))?;
        legend.push((name.to_string(), col, false));
    }
    if let Some((rho, omega)) = m.tcdp {
        // Composed tCDP bound T·ρ·α for α ≤ ω + 1, dashed.
        let col = th.series[3];
        let pts: Vec<(f64, f64)> = m
            .orders
            .iter()
            .filter(|a| **a <= omega + 1.0)
            .map(|&a| (a, t * rho * a))
            .filter(|(_, y)| *y >= ylo && *y <= yhi)
            .collect();
        // Off the plot (T·ρα above every drawn ε at this ω): neither drawn nor listed.
        let shown = pts.len() >= 2;
        if shown {
            dashed(&mut chart, pts, col.stroke_width(th.px(2.0)), th)?;
        }
        if shown {
            legend.push((
                format!(
                    "tCDP (Mironov–Talwar–Zhang §4): T·ρα, ρ = {rho:.3e}, ω = {}",
                    fmt_num(omega)
                ),
                col,
                false,
            ));
        }
    }
    let (oa, ov) = (m.opt.alpha, m.opt.value.max(ylo));
    chart.draw_series(std::iter::once(Circle::new(
        (oa, clip(ov)),
        th.px(5.0),
        th.series[4].filled(),
    )))?;
    legend.push((
        format!("optimum ε = {:.4} at α = {:.2}", m.opt.value, m.opt.alpha),
        th.series[4],
        true,
    ));
    finish(root, &plot, strip.as_ref(), &chart, &legend, true, th)
}
