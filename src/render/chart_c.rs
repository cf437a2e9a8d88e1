//! Chart C: the largest order α where Theorem 11 holds, against q.

use super::*;
use crate::engine::math::{exp, ln};
// Ours, not plotters' prelude's (two parameters).
use super::DrawResult;

/// Data of Chart C (Figure 1, left): for each q, the largest α by condition (4),
/// (5), their minimum, and the exact largest α with ε(α) ≤ 2q²α/σ².
pub fn max_order_curves(sigma: f64, n: usize) -> Result<Vec<(f64, bounds::MaxOrder)>, Error> {
    let (l0, l1) = (ln(1e-6f64), ln(0.2f64));
    (0..n)
        .map(|i| {
            let q = exp(l0 + (l1 - l0) * i as f64 / (n - 1).max(1) as f64);
            Ok((q, bounds::max_order(&Sgm::new(q, sigma)?)))
        })
        .collect()
}

/// Chart C: max α vs q for the current σ.
pub fn draw_max_alpha<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    sigma: f64,
    data: &[(f64, bounds::MaxOrder)],
    th: &Theme,
) -> DrawResult<DB> {
    root.fill(&th.bg)?;
    let all = data.iter().flat_map(|(_, m)| [m.cond4, m.cond5, m.exact]);
    let (ylo, yhi) = log_range(all.map(|v| v.max(1.0)));
    let (ylo, yhi) = (ylo.max(1.0), yhi.max(2.0));
    let (plot, strip) = split_legend(root, th, 4);
    let mut chart = log_chart(
        &plot,
        format!("largest α vs q at σ = {}", fmt_num(sigma)),
        th,
        (1e-6, 0.2),
        (ylo, yhi),
    )?;
    mesh(&mut chart, th, "sampling rate q", "max α")?;
    // min(4, 5) coincides with one of the two conditions everywhere: drawn first as a wide
    // translucent band, the two conditions dashed over it, so no series hides another.
    type Pick = fn(&bounds::MaxOrder) -> f64;
    let sets: [(&str, Pick, usize, Mark); 4] = [
        ("min of (4), (5)", |m| m.min, 1, Mark::Area),
        ("condition (4)", |m| m.cond4, 2, Mark::Dashed),
        ("condition (5)", |m| m.cond5, 3, Mark::Dashed),
        ("exact: ε(α) ≤ 2q²α/σ²", |m| m.exact, 0, Mark::Line),
    ];
    let mut legend: Legend = Vec::new();
    for (name, f, c, mark) in sets {
        let col = th.series[c];
        let pts: Points = data
            .iter()
            .map(|(q, m)| (*q, f(m).clamp(ylo, yhi)))
            .collect();
        match mark {
            Mark::Area => {
                chart.draw_series(LineSeries::new(pts, col.mix(0.35).stroke_width(th.px(8.0))))?;
                legend.push((name.to_string(), th.blend(col, 0.35), mark));
            }
            Mark::Dashed => {
                dashed(&mut chart, pts, col.stroke_width(th.px(2.0)), th)?;
                legend.push((name.to_string(), col, mark));
            }
            _ => {
                chart.draw_series(LineSeries::new(pts, col.stroke_width(th.px(2.0))))?;
                legend.push((name.to_string(), col, mark));
            }
        }
    }
    finish(root, &plot, strip.as_ref(), &chart, &legend, true, th)
}

/// A text summary of chart C: where Theorem 11's two conditions allow the largest orders.
pub fn summary_c(sigma: f64, data: &[(f64, bounds::MaxOrder)]) -> String {
    let (Some(first), Some(last)) = (data.first(), data.last()) else {
        return "Chart C: no points yet.".into();
    };
    let say = |(q, m): &(f64, bounds::MaxOrder)| {
        format!(
            "at q = {} up to α = {} by conditions (4) and (5), {} exactly",
            fmt_num(*q),
            fmt_num(m.min),
            fmt_num(m.exact)
        )
    };
    format!(
        "Largest order α where Theorem 11 holds, for σ = {}: {}; {}.",
        fmt_num(sigma),
        say(first),
        say(last)
    )
}
