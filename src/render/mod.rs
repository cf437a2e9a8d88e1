//! Charts, written once against plotters' `DrawingBackend`: the page draws them
//! on a canvas (plotters-canvas), native tests and the SVG export draw them to SVG.
//!
//! [`Model`] holds everything a chart shows, computed from the engine; the
//! `draw_*` functions only draw it.

pub mod library;
pub mod tight;

use crate::engine::{bounds, default_orders, Conversion, Error, Optimum, Run, Sgm};
use plotters::coord::combinators::{BindKeyPoints, LogCoord, WithKeyPoints};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The inputs of the calculator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inputs {
    pub q: f64,
    pub sigma: f64,
    pub steps: u64,
    pub delta: f64,
    pub conversion: Conversion,
    /// ω of the tCDP line on chart A (Mironov–Talwar–Zhang §4).
    pub omega: f64,
}

impl Inputs {
    /// MNIST example: 60 000 examples, batch 256, 60 epochs, σ = 1.1, δ = 1e-5.
    pub fn mnist() -> Self {
        Inputs {
            q: 256.0 / 60000.0,
            sigma: 1.1,
            steps: 14063,
            delta: 1e-5,
            conversion: Conversion::Improved,
            omega: 32.0,
        }
    }
}

/// Everything the charts and the headline show.
#[derive(Debug, Clone)]
pub struct Model {
    pub inputs: Inputs,
    pub orders: Vec<f64>,
    /// Per-step exact RDP at each order.
    pub rdp: Vec<f64>,
    /// ε(α) at δ with the improved and the classic conversion (clamped at 0).
    pub eps_improved: Vec<f64>,
    pub eps_classic: Vec<f64>,
    /// The optimum for the chosen conversion.
    pub opt: Optimum,
    /// Theorem 11's bound 2q²α/σ² and whether its conditions hold, per order.
    pub thm11: Vec<f64>,
    pub thm11_holds: Vec<bool>,
    /// The first failing condition at the largest order (if any).
    pub thm11_reason: Option<String>,
    pub abadi: Vec<Option<f64>>,
    pub bun: Vec<Option<f64>>,
    /// Mironov–Talwar–Zhang §4: (ρ, ω) with per-step ε(α) ≤ ρα for α < ω + 1 (drawn dashed, composed).
    pub tcdp: Option<(f64, f64)>,
}

/// The part of a [`Model`] that evaluates RDP (the per-step curve over the default
/// orders, the continuous optimum, tCDP's ρ): its cost grows as σ shrinks (natively
/// σ = 1.1: 0.6 ms; 0.1: 6 ms; 0.03: 40 ms; 0.001: 0.7 s), so the page computes it in
/// its worker below [`HEAVY_SIGMA`] and builds the rest, cheap, from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Heavy {
    pub rdp: Vec<f64>,
    pub opt: Optimum,
    pub tcdp_rho: Option<f64>,
}

/// Below this σ the page computes [`Heavy`] (and chart C, the comparison) in its worker.
pub const HEAVY_SIGMA: f64 = 0.1;

impl Heavy {
    #[inline(never)]
    pub fn compute(inputs: Inputs) -> Result<Heavy, Error> {
        let sgm = Sgm::new(inputs.q, inputs.sigma)?;
        let run = Run::with_default_orders(sgm, inputs.steps)?;
        crate::engine::params::check_delta(inputs.delta)?;
        let rdp = run.rdp_curve();
        let opt = run.epsilon_from_curve(&rdp, inputs.delta, inputs.conversion)?;
        let tcdp_rho = crate::engine::compare::tcdp_rho(sgm, inputs.omega).ok();
        Ok(Heavy { rdp, opt, tcdp_rho })
    }
}

impl Model {
    pub fn compute(inputs: Inputs) -> Result<Model, Error> {
        Model::from_heavy(inputs, Heavy::compute(inputs)?)
    }

    /// The model from its RDP part (computed here or in a worker) and the closed-form rest.
    #[inline(never)]
    pub fn from_heavy(inputs: Inputs, heavy: Heavy) -> Result<Model, Error> {
        let Heavy { rdp, opt, tcdp_rho } = heavy;
        let sgm = Sgm::new(inputs.q, inputs.sigma)?;
        let run = Run::with_default_orders(sgm, inputs.steps)?;
        crate::engine::params::check_delta(inputs.delta)?;
        if rdp.len() != run.orders().len() {
            return Err(Error::CurveLength {
                expected: run.orders().len(),
                got: rdp.len(),
            });
        }
        let t = inputs.steps as f64;
        let conv = |c| -> Vec<f64> {
            run.orders()
                .iter()
                .zip(&rdp)
                .map(|(&a, &r)| {
                    crate::engine::accountant::eps_from_rdp(t * r, a, inputs.delta, c).max(0.0)
                })
                .collect()
        };
        let eps_improved = conv(Conversion::Improved);
        let eps_classic = conv(Conversion::Classic);
        let mut thm11 = Vec::with_capacity(rdp.len());
        let mut thm11_holds = Vec::with_capacity(rdp.len());
        let mut thm11_reason = None;
        let mut abadi = Vec::new();
        let mut bun = Vec::new();
        for &a in run.orders() {
            let b = bounds::theorem11(&sgm, a)?;
            thm11.push(b.value);
            thm11_holds.push(b.holds());
            if let Some(r) = b.fails {
                thm11_reason = Some(r);
            }
            let ab = bounds::abadi(&sgm, a)?;
            abadi.push(ab.holds().then_some(ab.value));
            let bu = bounds::bun(&sgm, a)?;
            bun.push(bu.holds().then_some(bu.value));
        }
        let tcdp = tcdp_rho.map(|rho| (rho, inputs.omega));
        Ok(Model {
            tcdp,
            inputs,
            orders: run.orders().to_vec(),
            rdp,
            eps_improved,
            eps_classic,
            opt,
            thm11,
            thm11_holds,
            thm11_reason,
            abadi,
            bun,
        })
    }

    /// One plain-language sentence (in the spirit of TF Privacy's statement).
    pub fn sentence(&self) -> String {
        sentence_for(&self.inputs, self.opt.value, "exact RDP")
    }

    /// The CSV below with a header of `# key = value` lines (pandas: `comment="#"`): the
    /// run's parameters and every headline number, so a file stands on its own.
    /// `tight` is the PLD bracket (upper, lower) when known; `batching` the page's choice.
    pub fn csv_with_header(&self, tight: Option<(f64, f64)>, batching: &str) -> String {
        let i = &self.inputs;
        let conv = i.conversion.name();
        let mut s = format!(
            "# sgm-rdp {}: the Sampled Gaussian Mechanism (DP-SGD), add/remove-one adjacency\n\
             # sample_rate = {}\n# noise_multiplier = {}\n# steps = {}\n# delta = {:e}\n\
             # batching = {batching} (the epsilons assume Poisson sampling)\n\
             # conversion = {conv}\n\
             # epsilon_rdp = {} (exact RDP, optimal alpha = {})\n",
            env!("CARGO_PKG_VERSION"),
            i.q,
            i.sigma,
            i.steps,
            i.delta,
            self.opt.value,
            self.opt.alpha,
        );
        if let Some((u, l)) = tight {
            s += &format!(
                "# epsilon_pld = {u} (tight, certified upper bound; bracket [{l}, {u}])\n"
            );
        }
        s + &self.csv()
    }

    /// CSV of the curves (alpha, per-step RDP, composed RDP, ε improved, ε classic, Theorem 11).
    pub fn csv(&self) -> String {
        let mut s = String::from("alpha,rdp_per_step,rdp_total,epsilon_improved,epsilon_classic,theorem11_bound,theorem11_holds\n");
        let t = self.inputs.steps as f64;
        for i in 0..self.orders.len() {
            s += &format!(
                "{},{:e},{:e},{:e},{:e},{:e},{}\n",
                self.orders[i],
                self.rdp[i],
                t * self.rdp[i],
                self.eps_improved[i],
                self.eps_classic[i],
                self.thm11[i],
                self.thm11_holds[i]
            );
        }
        s
    }
}

/// Short, round-trippable number formatting for labels.
/// The plain-language sentence for ε at the inputs' δ, naming the accountant.
pub fn sentence_for(i: &Inputs, e: f64, accountant: &str) -> String {
    // e^ε overflows f64 beyond 709 and means nothing long before: say so in words.
    let factor = if e <= 30.0 {
        format!("e^{e:.4} ≈ {:.3}", e.exp())
    } else {
        format!(
            "e^{} ≈ 10^{:.0} — so large that this is no meaningful guarantee",
            fmt_num(e),
            e / std::f64::consts::LN_10
        )
    };
    format!(
        "Training with noise multiplier {} and sampling rate {} for {} steps satisfies \
         ({}, {:e})-differential privacy ({accountant} accountant): for any one example, adding \
         or removing it changes the probability of any outcome by at most a factor {factor}, \
         except with probability {:e}.",
        i.sigma,
        fmt_num(i.q),
        i.steps,
        if e <= 30.0 {
            format!("{e:.4}")
        } else {
            fmt_num(e)
        },
        i.delta,
        i.delta
    )
}

pub fn fmt_num(x: f64) -> String {
    // Round to 6 significant digits, then print the shortest form — unless rounding
    // would land on 0 or 1 (δ = 1 − 1e-16 must not read "1"): then every digit.
    let r = crate::decimal::parse(&format!("{x:.5e}")).unwrap_or(x);
    if r != x && (r == 1.0 || r == 0.0) {
        return format!("{x}");
    }
    if r != 0.0 && (r.abs() < 1e-3 || r.abs() >= 1e6) {
        format!("{r:e}")
    } else {
        format!("{r}")
    }
}

/// Axis tick labels: compact, no trailing ".0" (ticks sit on round values, so the
/// 6-digit rounding is always right here; a tick computed as 0.99999… reads "1").
fn fmt_axis(v: &f64) -> String {
    let r = crate::decimal::parse(&format!("{v:.5e}")).unwrap_or(*v);
    fmt_num(r)
}

/// Colours for light and dark pages.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub bg: RGBColor,
    pub fg: RGBColor,
    pub grid: RGBColor,
    pub series: [RGBColor; 5],
    pub shade: RGBColor,
    /// Multiplies font sizes and line widths (devicePixelRatio on the page).
    pub scale: f64,
    /// Put the legend in a strip under the plot instead of over its corner
    /// (narrow charts, where a corner legend would hide the curves).
    pub legend_below: bool,
}

impl Theme {
    pub fn light(scale: f64) -> Self {
        Theme {
            bg: RGBColor(255, 255, 255),
            fg: RGBColor(30, 30, 30),
            grid: RGBColor(225, 225, 225),
            series: [
                // Okabe–Ito: distinguishable with every common colour-vision deficiency.
                RGBColor(0, 114, 178),
                RGBColor(213, 94, 0),
                RGBColor(0, 158, 115),
                RGBColor(204, 121, 167),
                RGBColor(230, 159, 0),
            ],
            shade: RGBColor(250, 238, 195),
            scale,
            legend_below: false,
        }
    }
    pub fn dark(scale: f64) -> Self {
        Theme {
            bg: RGBColor(24, 26, 31),
            fg: RGBColor(230, 230, 230),
            grid: RGBColor(60, 62, 70),
            series: [
                // Okabe–Ito, lightened for a dark background.
                RGBColor(86, 180, 233),
                RGBColor(240, 130, 60),
                RGBColor(40, 200, 150),
                RGBColor(220, 150, 190),
                RGBColor(240, 190, 60),
            ],
            shade: RGBColor(70, 62, 35),
            scale,
            legend_below: false,
        }
    }
    /// The same colours with the legend under the plot when `narrow`.
    pub fn narrow(mut self, narrow: bool) -> Self {
        self.legend_below = narrow;
        self
    }
    /// Height in device pixels of the strip holding `rows` legend entries.
    pub fn legend_strip(&self, rows: usize) -> u32 {
        self.px(16.0) * rows as u32 + self.px(14.0)
    }
    fn px(&self, v: f64) -> u32 {
        (v * self.scale).round().max(1.0) as u32
    }
    fn font(&self, size: f64) -> TextStyle<'static> {
        // The enum, not the string "sans-serif": plotters' `From<&str>` lowercases it, which
        // pulls Unicode case tables (≈ 4 KB) into the wasm.
        FontDesc::new(FontFamily::SansSerif, size * self.scale, FontStyle::Normal).color(&self.fg)
    }
}

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn log_range(vals: impl Iterator<Item = f64>) -> (f64, f64) {
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
/// Every log-x chart uses it, so they share one instantiation of plotters'
/// generic drawing code.
fn log_axis(lo: f64, hi: f64, th: &Theme) -> WithKeyPoints<LogCoord<f64>> {
    let wide = (hi / lo).log10() > if th.legend_below { 2.0 } else { 4.0 };
    let (mut bold, mut light) = (Vec::new(), Vec::new());
    let mut decade = 10f64.powi(lo.log10().floor() as i32);
    while decade <= hi {
        for k in 1..10 {
            let v = decade * k as f64;
            if v >= lo && v <= hi {
                light.push(v);
                if k == 1 || (!wide && matches!(k, 2 | 5)) {
                    bold.push(v);
                }
            }
        }
        decade *= 10.0;
    }
    (lo..hi)
        .log_scale()
        .with_key_points(bold)
        .with_light_points(light)
}

/// Every chart: log x (see [`log_axis`]) against log y.
type LogChart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<WithKeyPoints<LogCoord<f64>>, LogCoord<f64>>>;

/// The frame every chart shares: caption, margin and label areas scaled for
/// the screen, log axes over the given ranges.
fn log_chart<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    caption: impl AsRef<str>,
    th: &Theme,
    (xlo, xhi): (f64, f64),
    (ylo, yhi): (f64, f64),
) -> Result<LogChart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    let (xlo, xhi) = drawable((xlo, xhi));
    let (ylo, yhi) = drawable((ylo, yhi));
    ChartBuilder::on(root)
        .caption(caption, th.font(15.0))
        .margin(th.px(10.0))
        .x_label_area_size(th.px(34.0))
        .y_label_area_size(th.px(56.0))
        .build_cartesian_2d(log_axis(xlo, xhi, th), (ylo..yhi).log_scale())
}

/// Decades a log axis may span: beyond ~30 nothing is readable, and plotters' log
/// coordinate loops (practically forever) on ranges whose ratio overflows f64.
const MAX_DECADES: f64 = 30.0;

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
    let lo = lo.max(hi * 10f64.powf(-MAX_DECADES)).max(1e-300);
    if lo < hi {
        (lo, hi)
    } else {
        (hi / 10.0, hi)
    }
}

/// A dashed line through `pts`: every chart's dashes through this one helper, so
/// plotters' dashed series is compiled once (its type includes the iterator's).
fn dashed<DB: DrawingBackend>(
    chart: &mut LogChart<DB>,
    pts: Vec<(f64, f64)>,
    style: ShapeStyle,
    th: &Theme,
) -> DrawResult<DB> {
    chart.draw_series(DashedLineSeries::new(pts, th.px(6.0), th.px(4.0), style))?;
    Ok(())
}

/// The grid, axes and axis titles every chart shares.
fn mesh<DB: DrawingBackend>(
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

/// Data of Chart C (Figure 1, left): for each q, the largest α by condition (4),
/// (5), their minimum, and the exact largest α with ε(α) ≤ 2q²α/σ².
pub fn max_order_curves(sigma: f64, n: usize) -> Result<Vec<(f64, bounds::MaxOrder)>, Error> {
    let (l0, l1) = ((1e-6f64).ln(), (0.2f64).ln());
    (0..n)
        .map(|i| {
            let q = (l0 + (l1 - l0) * i as f64 / (n - 1).max(1) as f64).exp();
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
    let w = th.px(2.0);
    type Pick = fn(&bounds::MaxOrder) -> f64;
    let sets: [(&str, Pick, usize); 4] = [
        ("condition (4)", |m| m.cond4, 2),
        ("condition (5)", |m| m.cond5, 3),
        ("min of (4), (5)", |m| m.min, 1),
        ("exact: ε(α) ≤ 2q²α/σ²", |m| m.exact, 0),
    ];
    let mut legend = Vec::new();
    for (name, f, c) in sets {
        let col = th.series[c];
        chart.draw_series(LineSeries::new(
            data.iter().map(|(q, m)| (*q, f(m).clamp(ylo, yhi))),
            col.stroke_width(w),
        ))?;
        legend.push((name.to_string(), col, false));
    }
    finish(root, &plot, strip.as_ref(), &chart, &legend, true, th)
}

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
        legend.push((name, col, false));
    }
    finish(root, &plot, strip.as_ref(), &chart, &legend, false, th)
}

type Area<DB> = DrawingArea<DB, Shift>;

/// The area to plot in and, with `Theme::legend_below`, the strip under it
/// sized for `rows` legend entries.
fn split_legend<DB: DrawingBackend>(
    root: &Area<DB>,
    th: &Theme,
    rows: usize,
) -> (Area<DB>, Option<Area<DB>>) {
    if !th.legend_below {
        return (root.clone(), None);
    }
    let h = root.dim_in_pixel().1 as i32;
    let strip = th.legend_strip(rows) as i32;
    let (top, bottom) = root.split_vertically((h - strip).max(h / 2));
    (top, Some(bottom))
}

/// Every chart's last step: the legend in the strip if there is one, else in the plot's
/// corner (`right` or left), then present the drawing.
fn finish<DB: DrawingBackend>(
    root: &Area<DB>,
    plot: &Area<DB>,
    strip: Option<&Area<DB>>,
    chart: &LogChart<DB>,
    items: &[(String, RGBColor, bool)],
    right: bool,
    th: &Theme,
) -> DrawResult<DB> {
    match strip {
        Some(s) => {
            let (w, h) = s.dim_in_pixel();
            draw_legend(s, (0..w as i32, 0..h as i32), items, false, th)?;
        }
        None => {
            let px = chart.plotting_area().get_pixel_range();
            draw_legend(plot, px, items, right, th)?;
        }
    }
    root.present()
}

/// A legend box in the plot's upper corner. Drawn by hand: plotters' own
/// series labels measure text outside the backend (a CSP-blocked `<span>` in
/// the browser); this goes through `estimate_text_size` of the backend.
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (xr, yr): (std::ops::Range<i32>, std::ops::Range<i32>),
    items: &[(String, RGBColor, bool)],
    right: bool,
    th: &Theme,
) -> DrawResult<DB> {
    let font = th.font(11.0);
    let line = th.px(16.0) as i32;
    let pad = th.px(6.0) as i32;
    let swatch = th.px(20.0) as i32;
    let mut tw = 0;
    for (t, _, _) in items {
        tw = tw.max(root.estimate_text_size(t, &font)?.0 as i32);
    }
    let w = tw + swatch + 3 * pad;
    let h = line * items.len() as i32 + 2 * pad;
    let x0 = if right {
        xr.end - w - pad
    } else {
        xr.start + pad
    };
    let y0 = yr.start + pad;
    root.draw(&Rectangle::new(
        [(x0, y0), (x0 + w, y0 + h)],
        th.bg.mix(0.88).filled(),
    ))?;
    root.draw(&Rectangle::new(
        [(x0, y0), (x0 + w, y0 + h)],
        th.grid.stroke_width(1),
    ))?;
    for (i, (t, col, dot)) in items.iter().enumerate() {
        let y = y0 + pad + line * i as i32 + line / 2;
        let x = x0 + pad;
        if *dot {
            root.draw(&Circle::new((x + swatch / 2, y), th.px(4.0), col.filled()))?;
        } else {
            root.draw(&PathElement::new(
                vec![(x, y), (x + swatch, y)],
                col.stroke_width(th.px(2.0)),
            ))?;
        }
        let style = font.clone().pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Left,
            plotters::style::text_anchor::VPos::Center,
        ));
        root.draw(&Text::new(t.clone(), (x + swatch + pad, y), style))?;
    }
    Ok(())
}

/// Plain-text summaries of the charts, for screen readers.
pub fn summary_a(m: &Model) -> String {
    format!(
        "Chart of epsilon against the Rényi order alpha for {} orders from {} to {}. The smallest epsilon, {:.4}, is at alpha {:.2}.",
        m.orders.len(),
        m.orders[0],
        m.orders.last().copied().unwrap_or(0.0),
        m.opt.value,
        m.opt.alpha
    )
}

pub fn summary_b(m: &Model) -> String {
    let n = m.thm11_holds.iter().filter(|h| **h).count();
    format!(
        "Chart of the exact per-step RDP and Theorem 11's bound 2q²α/σ². The theorem's conditions hold at {n} of {} orders{}.",
        m.orders.len(),
        m.thm11_reason.as_ref().map(|r| format!("; elsewhere it fails on {r}")).unwrap_or_default()
    )
}

/// The default α grid (re-exported for the web layer).
pub fn orders() -> Vec<f64> {
    default_orders()
}
