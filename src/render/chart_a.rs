//! Chart A: ε against the order α.

use super::*;

/// The rows of chart A's legend (what [`draw_eps_vs_alpha`] lists: only what it draws).
pub fn legend_rows_a(m: &Model) -> usize {
    legend_a(m, &Theme::light(1.0)).len()
}

/// Chart A's series as drawn, decided before drawing: the composed RDP, the two
/// conversions (classic dashed), and the tCDP line when any of it is on the plot.
struct SeriesA {
    curves: [(&'static str, Vec<f64>, usize, Mark); 3],
    /// The tCDP line's points on the plot (≥ 2), ρ and ω.
    tcdp: Option<(Points, f64, f64)>,
}

fn series_a(m: &Model) -> SeriesA {
    let t = m.inputs.steps as f64;
    let (_, (ylo, yhi)) = chart_a_ranges(m);
    let tcdp = m.tcdp.and_then(|(rho, omega)| {
        // Composed tCDP bound T·ρ·α for α ≤ ω + 1.
        let pts: Vec<(f64, f64)> = m
            .orders
            .iter()
            .filter(|a| **a <= omega + 1.0)
            .map(|&a| (a, t * rho * a))
            .filter(|(_, y)| *y >= ylo && *y <= yhi)
            .collect();
        // Off the plot (T·ρα above every drawn ε at this ω): neither drawn nor listed.
        (pts.len() >= 2).then_some((pts, rho, omega))
    });
    SeriesA {
        curves: [
            (
                "T·RDP(α) (composed)",
                m.rdp.iter().map(|r| r * t).collect(),
                0,
                Mark::Line,
            ),
            (
                "ε(α), improved conversion",
                m.eps_improved.clone(),
                1,
                Mark::Line,
            ),
            (
                "ε(α), classic conversion",
                m.eps_classic.clone(),
                2,
                Mark::Dashed,
            ),
        ],
        tcdp,
    }
}

fn legend_of(s: &SeriesA, m: &Model, th: &Theme) -> Legend {
    let mut legend: Legend = s
        .curves
        .iter()
        .map(|(name, _, c, mark)| (name.to_string(), th.series[*c], *mark))
        .collect();
    if let Some((_, rho, omega)) = &s.tcdp {
        legend.push((
            format!(
                "tCDP (Mironov–Talwar–Zhang §4): T·ρα, ρ = {rho:.3e}, ω = {}",
                fmt_num(*omega)
            ),
            th.series[3],
            Mark::Dashed,
        ));
    }
    legend.push((
        format!("optimum ε = {:.4} at α = {:.2}", m.opt.value, m.opt.alpha),
        th.series[4],
        Mark::Dot,
    ));
    legend
}

/// Chart A's legend: one entry per series drawn.
pub fn legend_a(m: &Model, th: &Theme) -> Legend {
    legend_of(&series_a(m), m, th)
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

/// Chart A read out at each order: per-step and composed RDP, both conversions' ε.
pub fn chart_a_readouts(m: &Model) -> Vec<ReadoutPoint> {
    (0..m.orders.len())
        .filter_map(|i| chart_a_readout(m, i))
        .collect()
}

/// Chart A read out at order `i` (None past the last): what the page words on demand, so a
/// frame does not word every order.
pub fn chart_a_readout(m: &Model, i: usize) -> Option<ReadoutPoint> {
    let alpha = *m.orders.get(i)?;
    Some(ReadoutPoint {
        x: alpha,
        y: m.eps_improved[i],
        text: format!(
            "α = {alpha}: per-step RDP {:.4e}, T·RDP {:.4}, ε improved {:.4}, ε classic {:.4}",
            m.rdp[i],
            m.rdp[i] * m.inputs.steps as f64,
            m.eps_improved[i],
            m.eps_classic[i]
        ),
    })
}

/// Chart A: composed RDP T·ε(α) and converted ε(α) over α, optimum marked. Returns the
/// plot's [`Mapping`] (for the page's readout and crosshair).
pub fn draw_eps_vs_alpha<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    m: &Model,
    th: &Theme,
) -> Drawn<DB> {
    root.fill(&th.bg)?;
    let ((xlo, xhi), (ylo, yhi)) = chart_a_ranges(m);
    let series = series_a(m);
    let legend = legend_of(&series, m, th);
    let (plot, strip) = split_legend(root, th, legend.len());
    let mut chart = log_chart(&plot, "ε vs order α", th, (xlo, xhi), (ylo, yhi))?;
    mesh(&mut chart, th, "order α", "ε")?;
    let clip = |v: f64| v.clamp(ylo, yhi);
    for (_, ys, c, mark) in &series.curves {
        let style = th.series[*c].stroke_width(th.px(2.0));
        // The part of each curve on the plot: the converted ε comes down from above the
        // top at small α (ln(1/δ)/(α−1)) and leaves it again at large α; no flat line is
        // drawn along the edge on either side.
        let lim = yhi * 1.5;
        let pts: Vec<(f64, f64)> = m
            .orders
            .iter()
            .zip(ys)
            .filter(|(_, y)| **y > 0.0)
            .skip_while(|(_, y)| **y > lim)
            .take_while(|(_, y)| **y <= lim)
            .map(|(&a, &y)| (a, clip(y)))
            .collect();
        if *mark == Mark::Dashed {
            dashed(&mut chart, pts, style, th)?;
        } else {
            chart.draw_series(LineSeries::new(pts, style))?;
        }
    }
    if let Some((pts, _, _)) = series.tcdp {
        dashed(&mut chart, pts, th.series[3].stroke_width(th.px(2.0)), th)?;
    }
    let (oa, ov) = (m.opt.alpha, m.opt.value.max(ylo));
    chart.draw_series(std::iter::once(Circle::new(
        (oa, clip(ov)),
        th.px(5.0),
        th.series[4].filled(),
    )))?;
    drawn(root, &plot, strip.as_ref(), &chart, &legend, true, th)
}
