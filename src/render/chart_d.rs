//! Chart D: the capacity-bounded view.

use super::*;
// Ours, not plotters' prelude's (two parameters).
use super::DrawResult;

/// The capacity-bounded view of Chaudhuri et al. (unsampled mechanisms, linear adversary):
/// the Gaussian's (lin, Rényi) bound vs its Rényi DP α/(2σ²), and the Laplace
/// mechanism's exact Rényi DP (Chaudhuri et al., eq. 4) vs its (lin, Rényi) bound, over α.
pub fn draw_capacity<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    sigma: f64,
    eps: f64,
    th: &Theme,
) -> DrawResult<DB> {
    use crate::engine::compare::{gaussian_lin_renyi, laplace_lin_renyi, laplace_renyi};
    root.fill(&th.bg)?;
    let alphas: Vec<f64> = (0..=120)
        .map(|i| 1.0 + 19.0 * (i as f64 / 120.0).powi(2) + 1e-3)
        .collect();
    type Curve = (String, Box<dyn Fn(f64) -> f64>, usize);
    let curves: Vec<Curve> = vec![
        (
            format!("Gaussian σ = {}: Rényi DP α/(2σ²)", fmt_num(sigma)),
            Box::new(move |a| a / (2.0 * sigma * sigma)),
            0,
        ),
        (
            "Gaussian: (lin, Rényi) bound".to_string(),
            Box::new(move |a| gaussian_lin_renyi(sigma, a)),
            2,
        ),
        (
            format!("Laplace ε = {}: Rényi DP (eq. 4)", fmt_num(eps)),
            Box::new(move |a| laplace_renyi(eps, a)),
            1,
        ),
        (
            "Laplace: (lin, Rényi) bound".to_string(),
            Box::new(move |a| laplace_lin_renyi(eps, a)),
            3,
        ),
    ];
    let data: Vec<Vec<(f64, f64)>> = curves
        .iter()
        .map(|(_, f, _)| alphas.iter().map(|&a| (a, f(a))).collect())
        .collect();
    let (ylo, yhi) = log_range(data.iter().flatten().map(|p| p.1));
    let (plot, strip) = split_legend(root, th, 4);
    let mut chart = log_chart(
        &plot,
        "capacity-bounded (Chaudhuri et al., linear adversary) vs RDP",
        th,
        (1.0, 20.0),
        (ylo, yhi),
    )?;
    mesh(&mut chart, th, "order α", "divergence bound")?;
    let mut legend = Vec::new();
    for ((name, _, c), pts) in curves.into_iter().zip(data) {
        let col = th.series[c];
        let pts: Vec<(f64, f64)> = pts
            .into_iter()
            .filter(|p| p.1.is_finite() && p.1 > 0.0)
            .map(|(a, y)| (a, y.clamp(ylo, yhi)))
            .collect();
        chart.draw_series(LineSeries::new(pts, col.stroke_width(th.px(2.0))))?;
        legend.push((name, col, Mark::Line));
    }
    finish(root, &plot, strip.as_ref(), &chart, &legend, false, th)
}

/// A text summary of chart D at α = 2 and α = 10.
pub fn summary_d(sigma: f64, eps: f64) -> String {
    use crate::engine::compare::{gaussian_lin_renyi, laplace_lin_renyi, laplace_renyi};
    let at = |a: f64| {
        format!(
            "at α = {a}: Gaussian Rényi DP {} vs (lin, Rényi) {}, Laplace Rényi DP {} vs (lin, Rényi) {}",
            fmt_num(a / (2.0 * sigma * sigma)),
            fmt_num(gaussian_lin_renyi(sigma, a)),
            fmt_num(laplace_renyi(eps, a)),
            fmt_num(laplace_lin_renyi(eps, a))
        )
    };
    format!(
        "Capacity-bounded view for Gaussian σ = {} and Laplace ε = {}: {}; {}.",
        fmt_num(sigma),
        fmt_num(eps),
        at(2.0),
        at(10.0)
    )
}
