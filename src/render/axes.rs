//! The frame every chart shares: log axes, ranges, mesh, dashed lines.

use super::*;
use crate::engine::math::{exp, ln, log10, powf};

/// Axis tick labels: compact, no trailing ".0" (ticks sit on round values, so the
/// 6-digit rounding is always right here; a tick computed as 0.99999… reads "1").
pub(crate) fn fmt_axis(v: &f64) -> String {
    let r = crate::decimal::parse(&format!("{v:.5e}")).unwrap_or(*v);
    fmt_num(r)
}

/// A series' points.
pub(crate) type Points = Vec<(f64, f64)>;

pub(crate) type DrawResult<DB> =
    Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

pub(crate) fn log_range(vals: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals.filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (1e-3, 1.0);
    }
    if hi / lo < 10.0 {
        lo /= 3.0;
        hi *= 3.0;
    }
    (lo * 0.8, hi * 1.25)
}

/// A log axis with labels at 1, 2, 5 × 10^k (only 10^k over more than four
/// decades, or two on a narrow chart) and light lines at 1…9 × 10^k inside
/// [lo, hi] (plotters' own log ticks skip a range's partial first decade).
/// Every chart's x and y axes use it, so they share one instantiation of plotters'
/// generic drawing code.
///
/// `px` is the axis's length on screen: where a label per decade would crowd it (labels closer
/// than 14 px, scaled — a 390 px phone drew the profile's fourteen δ decades on ~100 px, their
/// labels overlapping), only every second, third or fifth decade is labelled.
pub(crate) fn log_axis(lo: f64, hi: f64, th: &Theme, px: f64) -> WithKeyPoints<LogCoord<f64>> {
    let decades = log10(hi / lo);
    let wide = decades > if th.legend_below { 2.0 } else { 4.0 };
    let per = px / decades.max(1e-9);
    let every = [1i32, 2, 3, 5, 10]
        .into_iter()
        .find(|&k| per * k as f64 >= 14.0 * th.scale)
        .unwrap_or(10);
    let (mut bold, mut light) = (Vec::new(), Vec::new());
    let mut exp = log10(lo).floor() as i32;
    let mut decade = 10f64.powi(exp);
    while decade <= hi {
        for k in 1..10 {
            let v = decade * k as f64;
            if v >= lo && v <= hi {
                light.push(v);
                if (k == 1 && exp.rem_euclid(every) == 0) || (!wide && matches!(k, 2 | 5)) {
                    bold.push(v);
                }
            }
        }
        decade *= 10.0;
        exp += 1;
    }
    (lo..hi)
        .log_scale()
        .with_key_points(bold)
        .with_light_points(light)
}

/// Every chart: log x (see [`log_axis`]) against log y.
pub(crate) type LogChart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<WithKeyPoints<LogCoord<f64>>, WithKeyPoints<LogCoord<f64>>>>;

/// The frame every chart shares: caption, margin and label areas scaled for
/// the screen, log axes over the given ranges.
pub(crate) fn log_chart<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    caption: impl AsRef<str>,
    th: &Theme,
    (xlo, xhi): (f64, f64),
    (ylo, yhi): (f64, f64),
) -> Result<LogChart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    let (xlo, xhi) = drawable((xlo, xhi));
    let (ylo, yhi) = drawable((ylo, yhi));
    // The plot area's extent (what the builder below leaves of the root), for label spacing.
    let (w, h) = root.dim_in_pixel();
    let plot_w = w as f64 - (56.0 + 10.0 + 26.0) * th.scale;
    let plot_h = h as f64 - (15.0 + 34.0 + 20.0 + 10.0) * th.scale;
    ChartBuilder::on(root)
        .caption(caption, th.font(15.0))
        .margin(th.px(10.0))
        // Room on the right for half of a tick label on the x axis's last point ("100000" at
        // T = 10⁵ read "10000", its last digit cut off by a 10 px margin).
        .margin_right(th.px(26.0))
        .x_label_area_size(th.px(34.0))
        .y_label_area_size(th.px(56.0))
        // The y axis labelled like the x axis: 1, 2, 5 × 10^k on a narrow range (ε over
        // training had labels only at 1 and 10).
        .build_cartesian_2d(
            log_axis(xlo, xhi, th, plot_w),
            log_axis(ylo, yhi, th, plot_h),
        )
}

/// Decades a log axis may span: beyond ~30 nothing is readable, and plotters' log
/// coordinate loops (practically forever) on ranges whose ratio overflows f64.
pub(crate) const MAX_DECADES: f64 = 30.0;

/// A log range that can be drawn: finite, positive, lo < hi, at most MAX_DECADES
/// decades (the top is kept; the bottom is raised), never below 1e-300.
pub(crate) fn drawable((lo, hi): (f64, f64)) -> (f64, f64) {
    let hi = if hi.is_finite() && hi > 1e-290 {
        hi.min(1e300)
    } else {
        1.0
    };
    let lo = if lo.is_finite() && lo > 0.0 {
        lo
    } else {
        hi * 1e-3
    };
    let lo = lo.max(hi * powf(10f64, -MAX_DECADES)).max(1e-300);
    if lo < hi {
        (lo, hi)
    } else {
        (hi / 10.0, hi)
    }
}

/// A dashed line through `pts`: every chart's dashes through this one helper, so
/// plotters' dashed series is compiled once (its type includes the iterator's).
pub(crate) fn dashed<DB: DrawingBackend>(
    chart: &mut LogChart<DB>,
    pts: Vec<(f64, f64)>,
    style: ShapeStyle,
    th: &Theme,
) -> DrawResult<DB> {
    chart.draw_series(DashedLineSeries::new(pts, th.px(6.0), th.px(4.0), style))?;
    Ok(())
}

/// The grid, axes and axis titles every chart shares.
pub(crate) fn mesh<DB: DrawingBackend>(
    chart: &mut LogChart<DB>,
    th: &Theme,
    x: &str,
    y: &str,
) -> DrawResult<DB> {
    chart
        .configure_mesh()
        .light_line_style(th.grid)
        .bold_line_style(th.grid)
        .axis_style(th.fg)
        .label_style(th.font(11.0))
        .x_label_formatter(&fmt_axis)
        .y_label_formatter(&fmt_axis)
        .x_desc(x)
        .y_desc(y)
        .draw()
}

/// One point a chart reads out (hover, ←/→): where it is drawn, in data coordinates, and
/// what it says in words.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadoutPoint {
    pub x: f64,
    pub y: f64,
    pub text: String,
}

/// Where a chart's plot sits on its canvas and what its log axes span: the one transform
/// the page's hover readout and crosshair use (no margins restated outside render).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mapping {
    /// The plot's x and y pixel ranges on the canvas, in CSS pixels.
    pub px: ((f64, f64), (f64, f64)),
    /// The x and y axes' value ranges (log scale both).
    pub x: (f64, f64),
    pub y: (f64, f64),
}

impl Mapping {
    /// The mapping of `chart` as drawn with `th` (device pixels → CSS pixels).
    pub(crate) fn of<DB: DrawingBackend>(chart: &LogChart<DB>, th: &Theme) -> Mapping {
        let (xr, yr) = chart.plotting_area().get_pixel_range();
        let css = |r: std::ops::Range<i32>| (r.start as f64 / th.scale, r.end as f64 / th.scale);
        let (x, y) = (chart.x_range(), chart.y_range());
        Mapping {
            px: (css(xr), css(yr)),
            x: (x.start, x.end),
            y: (y.start, y.end),
        }
    }
    /// The x value at CSS pixel `px` (clamped to the plot).
    pub fn x_at(&self, px: f64) -> f64 {
        let ((p0, p1), (a, b)) = (self.px.0, self.x);
        match (px - p0) / (p1 - p0) {
            f if f <= 0.0 || f.is_nan() => a,
            f if f >= 1.0 => b,
            f => exp(ln(a) + f * (ln(b) - ln(a))),
        }
    }
    /// The index of the value in `xs` nearest (in log terms) to the one under CSS pixel
    /// `px` (the hover readout's order); 0 for an empty list.
    pub fn nearest(&self, xs: &[f64], px: f64) -> usize {
        let target = ln(self.x_at(px));
        let mut best = 0;
        for (i, x) in xs.iter().enumerate() {
            if (ln(*x) - target).abs() < (ln(xs[best]) - target).abs() {
                best = i;
            }
        }
        best
    }
    /// The CSS pixel of x value `x`.
    pub fn px_of_x(&self, x: f64) -> f64 {
        let ((p0, p1), (a, b)) = (self.px.0, self.x);
        p0 + (ln(x) - ln(a)) / (ln(b) - ln(a)) * (p1 - p0)
    }
    /// The CSS pixel of y value `y` (top is the largest y).
    pub fn px_of_y(&self, y: f64) -> f64 {
        let ((p0, p1), (a, b)) = (self.px.1, self.y);
        p1 - (ln(y) - ln(a)) / (ln(b) - ln(a)) * (p1 - p0)
    }
}
