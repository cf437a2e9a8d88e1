//! The tight (PLD) accountant's charts: ε over training, the privacy profile δ(ε), and
//! the membership-inference attack bound. Drawn from plain data (what the page's worker
//! or the engine computed), on any backend.

use super::*;
use crate::decimal::Dir;
use crate::engine::math::{exp, ln, log10, powf};
// Ours, not plotters' prelude's (two parameters).
pub use super::Drawn;
use super::ReadoutPoint;

/// ε over training read out at each checkpoint: where it is (steps, and epochs when
/// `steps_per_epoch` is known) and the series drawn there, named as in the legend.
pub fn training_readouts(
    t: &Training,
    steps_per_epoch: Option<f64>,
    labels: &Labels,
) -> Vec<ReadoutPoint> {
    let k = steps_per_epoch.filter(|k| *k > 0.0);
    let at = |v: &[f64], i: usize| v.get(i).copied().filter(|y| y.is_finite() && *y > 0.0);
    (0..t.steps.len())
        .filter_map(|i| {
            let (s, up) = (t.steps[i], at(&t.pld_upper, i)?);
            let mut text = match k {
                Some(k) => format!("after {} steps ({} epochs)", fmt_num(s), fmt_num(s / k)),
                None => format!("after {} steps", fmt_num(s)),
            };
            text += &format!(": {} = {}", labels.upper, fmt_num_up(up));
            match (&labels.lower, at(&t.pld_lower, i)) {
                (Some(name), Some(lo)) => text += &format!("; {name} = {}", fmt_num_lower(lo)),
                (None, Some(lo)) => {
                    text += &format!(" (bracket [{}, {}])", fmt_num_lower(lo), fmt_num_up(up))
                }
                _ => {}
            }
            if let Some(r) = at(&t.rdp, i) {
                text += &format!("; exact RDP ε = {}", fmt_num_up(r));
            }
            Some(ReadoutPoint {
                x: s / k.unwrap_or(1.0),
                y: up,
                text,
            })
        })
        .collect()
}

/// The privacy profile read out at each ε: the band's ends and exact RDP's δ.
pub fn profile_readouts(rows: &[ProfileRow], labels: &Labels) -> Vec<ReadoutPoint> {
    rows.iter()
        .filter(|r| r.epsilon > 0.0 && r.upper.is_finite())
        .map(|r| {
            let mut text = format!(
                "ε = {}: {} δ ∈ [{}, {}]",
                fmt_num(r.epsilon),
                labels.profile,
                fmt_num_lower(r.lower.max(0.0)),
                fmt_num_up(r.upper)
            );
            if r.rdp > 0.0 && r.rdp.is_finite() {
                text += &format!("; from exact RDP δ ≤ {}", fmt_num_up(r.rdp));
            }
            ReadoutPoint {
                x: r.epsilon,
                y: r.upper,
                text,
            }
        })
        .collect()
}

/// The attack-risk curve read out at each false-positive rate.
pub fn risk_readouts(curve: &[(f64, f64)], labels: &Labels) -> Vec<ReadoutPoint> {
    curve
        .iter()
        .filter(|(f, t)| *f > 0.0 && t.is_finite() && *t >= 0.0)
        .map(|&(f, t)| ReadoutPoint {
            x: f,
            y: t,
            text: format!(
                "false-positive rate {}: true-positive rate ≤ {} ({})",
                fmt_num(f),
                fmt_num_up(t),
                labels.risk
            ),
        })
        .collect()
}
use plotters::coord::Shift;
use plotters::prelude::*;

/// ε over training: checkpoints (steps), the PLD bracket and the exact-RDP ε at each.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Training {
    pub steps: Vec<f64>,
    pub pld_upper: Vec<f64>,
    pub pld_lower: Vec<f64>,
    pub rdp: Vec<f64>,
}

impl Training {
    /// Where the certified ε first reaches `target`, by linear interpolation in
    /// (ln steps, ε) between checkpoints; None if it never does, and None too when it is
    /// already above `target` at the first checkpoint: it crossed somewhere before, where no
    /// checkpoint says (a dot there would mark a crossing that was not computed).
    pub fn budget_spent(&self, target: f64) -> Option<f64> {
        let p = &self.pld_upper;
        if p.first().is_some_and(|&e| e >= target) {
            return None;
        }
        for i in 1..p.len() {
            if p[i] >= target && p[i - 1] < target {
                let f = (target - p[i - 1]) / (p[i] - p[i - 1]);
                let (a, b) = (ln(self.steps[i - 1]), ln(self.steps[i]));
                return Some(exp(a + f * (b - a)));
            }
        }
        None
    }
}

/// What the three charts' series are, in their legends: the tight accountant's by default;
/// a batching scheme names its own ends (the shuffled band, fixed-size batches' RDP bound).
#[derive(Debug, Clone, PartialEq)]
pub struct Labels {
    /// ε over training's upper series.
    pub upper: String,
    /// Its lower series, drawn (dashed) only when named: a band whose ends are far apart.
    pub lower: Option<String>,
    /// The privacy profile's band.
    pub profile: String,
    /// The attack-risk curve.
    pub risk: String,
}

impl Default for Labels {
    fn default() -> Self {
        Labels {
            upper: "tight ε (PLD, certified upper bound)".into(),
            lower: None,
            profile: "tight δ(ε) (PLD bracket)".into(),
            risk: "bound on any attack (PLD, tightest)".into(),
        }
    }
}

/// Chart "ε over training": x = steps (or epochs when `steps_per_epoch` is given), the
/// PLD certified ε, the exact-RDP ε, a target line and the point where it is reached.
pub fn draw_training<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    t: &Training,
    target: Option<f64>,
    steps_per_epoch: Option<f64>,
    labels: &Labels,
    th: &Theme,
) -> Drawn<DB> {
    root.fill(&th.bg)?;
    let k = steps_per_epoch.filter(|k| *k > 0.0).unwrap_or(1.0);
    let xs: Vec<f64> = t.steps.iter().map(|s| s / k).collect();
    let (xlo, xhi) = (
        xs.first().copied().unwrap_or(1.0),
        xs.last()
            .copied()
            .unwrap_or(10.0)
            .max(xs.first().copied().unwrap_or(1.0) * 10.0),
    );
    let lower: &[f64] = if labels.lower.is_some() {
        &t.pld_lower
    } else {
        &[]
    };
    let ys = t
        .rdp
        .iter()
        .chain(&t.pld_upper)
        .chain(lower)
        .chain(target.iter());
    // Whole decades: plotters' log key points crowd a partial decade with labels.
    let (ylo, yhi) = super::log_range(ys.copied());
    let (ylo, yhi) = (
        powf(10f64, log10(ylo).floor()),
        powf(10f64, log10(yhi).ceil()),
    );
    // The last checkpoint whose certified ε is 0, where a later one is positive.
    let zero = (t.pld_upper.iter())
        .rposition(|y| *y <= 0.0)
        .filter(|n| n + 1 < t.pld_upper.len().min(xs.len()));
    let (plot, strip) = split_legend(
        root,
        th,
        3 + target.is_some() as usize + labels.lower.is_some() as usize + zero.is_some() as usize,
    );
    let mut chart = log_chart(&plot, "ε over training", th, (xlo, xhi), (ylo, yhi))?;
    let xlabel = if steps_per_epoch.is_some() {
        "epochs"
    } else {
        "steps"
    };
    mesh(&mut chart, th, xlabel, "ε at δ")?;
    let clip = |v: f64| v.clamp(ylo, yhi);
    let mut legend = Vec::new();
    let series = [
        (labels.upper.as_str(), &t.pld_upper, 0usize),
        ("exact RDP ε (Mironov–Talwar–Zhang)", &t.rdp, 2),
    ];
    for (name, ys, c) in series {
        let col = th.series[c];
        chart.draw_series(LineSeries::new(
            xs.iter()
                .zip(ys.iter())
                .filter(|(_, y)| **y > 0.0)
                .map(|(&x, &y)| (x, clip(y))),
            col.stroke_width(th.px(2.0)),
        ))?;
        // A point with no positive neighbour has no line to sit on: a dot (q = 9.462e-8,
        // σ = 0.341, δ = 0.0116: the tight ε is 0 at every checkpoint but the last).
        let lone = |i: usize| {
            ys[i] > 0.0 && (i == 0 || ys[i - 1] <= 0.0) && ys.get(i + 1).is_none_or(|y| *y <= 0.0)
        };
        chart.draw_series(
            (0..ys.len().min(xs.len()))
                .filter(|&i| lone(i))
                .map(|i| Circle::new((xs[i], clip(ys[i])), th.px(3.0), col.filled())),
        )?;
        // (No exact-RDP series for a scheme without that route: no legend entry either.)
        if ys.iter().any(|y| *y > 0.0) {
            legend.push((name.to_string(), col, Mark::Line));
        }
    }
    // Checkpoints whose certified ε is 0 (δ at least δ(0)) before the first positive one are
    // off a log axis: said so.
    if let Some(n) = zero {
        legend.push((
            format!("certified ε = 0 up to {} {xlabel}", fmt_num(xs[n])),
            th.series[0],
            Mark::Dot,
        ));
    }
    if let Some(name) = &labels.lower {
        let col = th.series[0];
        let pts: Vec<(f64, f64)> = xs
            .iter()
            .zip(&t.pld_lower)
            .filter(|(_, y)| **y > 0.0)
            .map(|(&x, &y)| (x, clip(y)))
            .collect();
        if !pts.is_empty() {
            dashed(&mut chart, pts, col.stroke_width(th.px(1.5)), th)?;
            legend.push((name.clone(), col, Mark::Dashed));
        }
    }
    if let Some(e) = target {
        let col = th.series[3];
        dashed(
            &mut chart,
            vec![(xlo, clip(e)), (xhi, clip(e))],
            col.stroke_width(th.px(1.5)),
            th,
        )?;
        legend.push((format!("target ε = {}", fmt_num(e)), col, Mark::Dashed));
        if let Some(s) = t.budget_spent(e) {
            chart.draw_series(std::iter::once(Circle::new(
                (s / k, clip(e)),
                th.px(5.0),
                th.series[4].filled(),
            )))?;
            legend.push(("budget spent".to_string(), th.series[4], Mark::Dot));
        }
    }
    drawn(root, &plot, strip.as_ref(), &chart, &legend, false, th)
}

/// The three tight charts' series as one long CSV (pandas: `read_csv(…, comment="#")`):
/// `chart,x_name,x,series,value` — ε over training (x = steps; epsilon_upper, epsilon_lower,
/// epsilon_rdp where drawn), the privacy profile (x = epsilon; delta_upper, delta_lower,
/// delta_rdp) and the attack risk (x = fpr; tpr_max). Values that are not numbers (a series
/// a scheme does not have) are left out, never written as NaN.
pub fn charts_csv(t: &Training, profile: &[ProfileRow], risk: &[(f64, f64)]) -> String {
    let mut s = String::from("chart,x_name,x,series,value\n");
    let mut row = |chart: &str, xn: &str, x: f64, series: &str, v: f64| {
        if x.is_finite() && v.is_finite() {
            s += &format!("{chart},{xn},{x:e},{series},{v:e}\n");
        }
    };
    for (k, &x) in t.steps.iter().enumerate() {
        for (name, ys) in [
            ("epsilon_upper", &t.pld_upper),
            ("epsilon_lower", &t.pld_lower),
            ("epsilon_rdp", &t.rdp),
        ] {
            // (An absent exact-RDP series arrives as zeros: not a value.)
            if let Some(&v) = ys.get(k).filter(|v| name != "epsilon_rdp" || **v > 0.0) {
                row("training", "steps", x, name, v);
            }
        }
    }
    for p in profile {
        row("profile", "epsilon", p.epsilon, "delta_upper", p.upper);
        row("profile", "epsilon", p.epsilon, "delta_lower", p.lower);
        if p.rdp > 0.0 {
            row("profile", "epsilon", p.epsilon, "delta_rdp", p.rdp);
        }
    }
    for &(f, tpr) in risk {
        row("risk", "fpr", f, "tpr_max", tpr);
    }
    s
}

/// One point of the profile with the exact-RDP δ at the same ε.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfileRow {
    pub epsilon: f64,
    pub upper: f64,
    pub lower: f64,
    pub rdp: f64,
}

/// A text summary of the privacy profile (for screen readers and the chart's focus): the
/// tight δ at the ends of the ε range and the factor exact RDP loses at the run's δ.
pub fn summary_profile(rows: &[ProfileRow], delta: f64) -> String {
    let pos: Vec<&ProfileRow> = rows.iter().filter(|r| r.epsilon > 0.0).collect();
    let (Some(first), Some(last)) = (pos.first(), pos.last()) else {
        return "Privacy profile: no points yet.".into();
    };
    // Where the tight δ(ε) crosses the run's δ, and exact RDP's: between two grid points
    // (the first at or below δ and the one before it), so the summary never reads as a
    // second ε beside the headline's (issue 61 #4: it named the grid point 2.48118 under a
    // 2.3820 headline).
    let at = |f: fn(&ProfileRow) -> f64| {
        let i = pos.iter().position(|r| f(r) <= delta)?;
        let before = if i == 0 { 0.0 } else { pos[i - 1].epsilon };
        Some((before, pos[i].epsilon))
    };
    let cross = match (at(|r| r.upper), at(|r| r.rdp)) {
        (Some((t0, t1)), Some((r0, r1))) => format!(
            " The tight curve crosses δ = {delta:e} between ε = {} and {} on this grid, exact RDP's between {} and {}.",
            fmt_num(t0),
            fmt_num(t1),
            fmt_num(r0),
            fmt_num(r1)
        ),
        _ => String::new(),
    };
    format!(
        "Privacy profile δ(ε) for ε from {} to {}: the tight δ falls from {} to {}.{cross}",
        fmt_num(first.epsilon),
        fmt_num(last.epsilon),
        fmt_num_up(first.upper),
        fmt_num_up(last.upper)
    )
}

/// The privacy profile's δ axis floor: a decade below the smallest δ drawn (the tight upper
/// ends, exact RDP's δ, the run's δ), between 1e-15 and 1e-2. A run whose profile stays near
/// δ = 0.01 (q = 9.462e-8, σ = 0.341, T = 46,420,413) drew as a flat line at the top of an
/// axis fixed at 1e-15; one whose δ falls past 1e-15 keeps that floor.
pub fn profile_floor(rows: &[ProfileRow], delta: f64) -> f64 {
    let least = rows
        .iter()
        .filter(|r| r.epsilon > 0.0)
        .flat_map(|r| [r.upper, r.rdp])
        .chain([delta])
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold(1.0f64, f64::min);
    // (A δ of exactly 10⁻ᵏ gets 10⁻ᵏ⁻¹ whichever way its logarithm rounds.)
    let decade = (log10(least) + 1e-9).floor().max(-14.0) as i32;
    10f64.powi(decade - 1).min(1e-2)
}

/// Chart "privacy profile": δ(ε) on a log δ axis down to [`profile_floor`] — the PLD bracket
/// as a band and the RDP-derived curve — with the current δ marked.
pub fn draw_profile<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    rows: &[ProfileRow],
    delta: f64,
    labels: &Labels,
    th: &Theme,
) -> Drawn<DB> {
    root.fill(&th.bg)?;
    let pos: Vec<&ProfileRow> = rows.iter().filter(|r| r.epsilon > 0.0).collect();
    let (xlo, xhi) = (
        pos.first().map(|r| r.epsilon).unwrap_or(0.01),
        pos.last().map(|r| r.epsilon).unwrap_or(10.0),
    );
    let (ylo, yhi) = (profile_floor(rows, delta), 1.0);
    let (plot, strip) = split_legend(root, th, 3);
    let mut chart = log_chart(
        &plot,
        "privacy profile δ(ε)",
        th,
        (xlo, xhi.max(xlo * 10.0)),
        (ylo, yhi),
    )?;
    mesh(&mut chart, th, "ε", "δ")?;
    let clip = |v: f64| v.clamp(ylo, yhi);
    let band = th.series[0];
    // The bracket: the band between the certified upper and lower δ (lower 0 → floor).
    let mut poly: Vec<(f64, f64)> = pos.iter().map(|r| (r.epsilon, clip(r.upper))).collect();
    poly.extend(
        pos.iter()
            .rev()
            .map(|r| (r.epsilon, clip(r.lower.max(ylo)))),
    );
    chart.draw_series(std::iter::once(Polygon::new(poly, band.mix(0.25).filled())))?;
    chart.draw_series(LineSeries::new(
        pos.iter().map(|r| (r.epsilon, clip(r.upper))),
        band.stroke_width(th.px(2.0)),
    ))?;
    let rdp = th.series[2];
    chart.draw_series(LineSeries::new(
        pos.iter()
            .filter(|r| r.rdp > 0.0)
            .map(|r| (r.epsilon, clip(r.rdp))),
        rdp.stroke_width(th.px(2.0)),
    ))?;
    let mark = th.series[3];
    dashed(
        &mut chart,
        vec![(xlo, clip(delta)), (xhi, clip(delta))],
        mark.stroke_width(th.px(1.5)),
        th,
    )?;
    // (A scheme without an exact-RDP route has no such series, and no legend entry.)
    let legend = [
        Some((labels.profile.clone(), band, Mark::Line)),
        pos.iter()
            .any(|r| r.rdp > 0.0)
            .then(|| ("δ(ε) from exact RDP".to_string(), rdp, Mark::Line)),
        Some((format!("current δ = {delta:e}"), mark, Mark::Dashed)),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>();
    drawn(root, &plot, strip.as_ref(), &chart, &legend, true, th)
}

/// An audit's empirical point on the attack-risk chart: (FPR, TPR, the TPR's interval).
pub type AuditPoint = (f64, f64, f64, f64);

/// Chart "attack risk": the bound on a membership-inference attack's true-positive
/// rate against its false-positive rate (log axes), with the no-privacy-loss diagonal, and
/// an audit's empirical points with their intervals when one is given (issue 65).
pub fn draw_risk<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    curve: &[(f64, f64)],
    audit: &[AuditPoint],
    labels: &Labels,
    th: &Theme,
) -> Drawn<DB> {
    root.fill(&th.bg)?;
    let (lo, hi) = (1e-6, 1.0);
    let (plot, strip) = split_legend(root, th, 2 + usize::from(!audit.is_empty()));
    let mut chart = log_chart(&plot, "membership-inference risk", th, (lo, hi), (lo, hi))?;
    mesh(
        &mut chart,
        th,
        "false-positive rate",
        "true-positive rate (at most)",
    )?;
    let col = th.series[0];
    chart.draw_series(LineSeries::new(
        curve
            .iter()
            .filter(|(f, t)| *f > 0.0 && *t > 0.0)
            .map(|&(f, t)| (f.clamp(lo, hi), t.clamp(lo, hi))),
        col.stroke_width(th.px(2.0)),
    ))?;
    let diag = th.series[2];
    dashed(
        &mut chart,
        vec![(lo, lo), (hi, hi)],
        diag.stroke_width(th.px(1.5)),
        th,
    )?;
    let mut legend = vec![
        (labels.risk.clone(), col, Mark::Line),
        (
            "random guessing (TPR = FPR)".to_string(),
            diag,
            Mark::Dashed,
        ),
    ];
    if !audit.is_empty() {
        let dot = th.series[1];
        let shown: Vec<&AuditPoint> = audit.iter().filter(|p| p.0 > 0.0 && p.1 > 0.0).collect();
        for p in &shown {
            let at = |t: f64| (p.0.clamp(lo, hi), t.clamp(lo, hi));
            chart.draw_series(LineSeries::new(
                [at(p.2), at(p.3)],
                dot.stroke_width(th.px(1.5)),
            ))?;
        }
        chart.draw_series(shown.iter().map(|p| {
            Circle::new(
                (p.0.clamp(lo, hi), p.1.clamp(lo, hi)),
                th.px(3.5),
                dot.filled(),
            )
        }))?;
        legend.push((
            "audit: empirical TPR, 95 % interval".to_string(),
            dot,
            Mark::Dot,
        ));
    }
    drawn(root, &plot, strip.as_ref(), &chart, &legend, false, th)
}

/// The sentence a non-specialist reads under the risk chart; `source` says which bound the
/// curve is (e.g. "the tight accountant", or a shuffled band's no-amplification upper end).
pub fn risk_sentence(fpr: f64, tpr: f64, source: &str) -> String {
    format!(
        "An attacker who wrongly flags at most {} of non-members catches at most {} of members \
         (for every attack, from {source}).",
        pct(fpr, Dir::Down),
        pct(tpr, Dir::Up)
    )
}

/// A rate in percent, rounded in direction `dir`: the true-positive bound up, the
/// false-positive rate it holds at down (the attacker's allowance is not overstated).
fn pct(x: f64, dir: Dir) -> String {
    let p = 100.0 * x;
    let shown = if p >= 10.0 {
        crate::decimal::fixed(p, 0, dir)
    } else if p >= 1.0 {
        crate::decimal::fixed(p, 1, dir)
    } else {
        fmt_num_dir(p, dir)
    };
    format!("{shown} %")
}

/// The training chart's bracket width (relative): below a pixel on its log axis.
pub const CHART_TOL: f64 = 5e-3;

/// `points` log-spaced step counts from 1 to `steps` (fewer when they coincide): where ε
/// over training is computed.
pub fn checkpoints(steps: u64, points: usize) -> Vec<u64> {
    let n = points.max(2);
    let mut s: Vec<u64> = (0..n)
        .map(|i| {
            let f = i as f64 / (n - 1) as f64;
            powf(steps as f64, f).round().max(1.0) as u64
        })
        .collect();
    s.dedup();
    s
}

/// ε over training for Poisson sampling (add/remove): the PLD bracket at each checkpoint to
/// [`CHART_TOL`] (each certified) and exact RDP's ε from one per-step curve; `run_bracket`,
/// the headline's bracket for the whole run, is the last checkpoint's: the chart's end, its
/// caption and the headline read one number (q = 6.214e-7, σ = 0.5486, T = 69,744,471,
/// δ = 0.0077: the checkpoint's own bracket [0.006726, 0.006747] beside the headline's
/// [0.006686, 0.006751] put two certified upper ends of one run on screen).
pub fn training_data(
    sgm: Sgm,
    steps: u64,
    delta: f64,
    points: usize,
    run_bracket: Option<(f64, f64)>,
) -> Result<Training, Error> {
    let at = checkpoints(steps, points);
    // (The run's own checkpoint is the headline's bracket: not solved a second time.)
    let known =
        run_bracket.map(|(upper, lower)| (steps, crate::engine::pld::Bracket { upper, lower }));
    let brackets = crate::engine::pld::checkpoints_known(sgm, &at, delta, CHART_TOL, known)?;
    let run = Run::with_default_orders(sgm, 1)?;
    let curve = run.rdp_curve();
    let rdp = at
        .iter()
        .map(|&s| {
            run.with_steps(s)
                .and_then(|r| r.epsilon_from_curve(&curve, delta, Conversion::Improved))
                .map(|o| o.value)
        })
        .collect::<Result<Vec<f64>, Error>>()?;
    let mut t = Training {
        steps: at.iter().map(|&s| s as f64).collect(),
        pld_upper: brackets.iter().map(|b| b.upper).collect(),
        pld_lower: brackets.iter().map(|b| b.lower).collect(),
        rdp,
    };
    if let (Some((u, l)), Some(&last)) = (run_bracket, at.last()) {
        if last == steps {
            let n = at.len() - 1;
            t.pld_upper[n] = u;
            t.pld_lower[n] = l;
        }
    }
    Ok(t)
}

/// The privacy profile chart's rows: 60 ε on (0, `top`], the PLD bracket on δ and exact
/// RDP's δ (one curve for all of them).
pub fn profile_data(sgm: Sgm, steps: u64, top: f64) -> Result<Vec<ProfileRow>, Error> {
    let eps = profile_eps(top);
    profile_rows(
        sgm,
        steps,
        &eps,
        crate::engine::pld::profile(sgm, steps, &eps)?,
    )
}

/// The profile chart's ε: 60 points on (0, top].
fn profile_eps(top: f64) -> Vec<f64> {
    (1..=60).map(|i| top * i as f64 / 60.0).collect()
}

/// The profile chart's rows from its certified points, with exact RDP's δ beside each.
fn profile_rows(
    sgm: Sgm,
    steps: u64,
    eps: &[f64],
    pts: Vec<crate::engine::pld::ProfilePoint>,
) -> Result<Vec<ProfileRow>, Error> {
    let rdp = Run::with_default_orders(sgm, steps)?.deltas(eps, Conversion::Improved)?;
    Ok(pts
        .iter()
        .zip(rdp)
        .map(|(p, r)| ProfileRow {
            epsilon: p.epsilon,
            upper: p.delta.upper,
            lower: p.delta.lower,
            rdp: r.value,
        })
        .collect())
}

/// The attack-risk chart: the TPR bound at `fprs` and as a curve on 60 FPRs from 1e-6 to 1,
/// from the run's own attack profile ([`crate::engine::pld::attack_profile`], the command
/// line's `profile` reads the same; in [`charts_data`] it shares a composition with the
/// profile chart where their ranges are alike: [`crate::engine::pld::profile_and_attack`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Risk {
    pub fpr: Vec<f64>,
    pub tpr: Vec<f64>,
    pub curve: Vec<(f64, f64)>,
}

pub fn risk_data(sgm: Sgm, steps: u64, fprs: &[f64]) -> Result<Risk, Error> {
    risk_of(&crate::engine::pld::attack_profile(sgm, steps)?, fprs)
}

/// The attack-risk chart from the run's attack profile.
fn risk_of(prof: &[crate::engine::pld::ProfilePoint], fprs: &[f64]) -> Result<Risk, Error> {
    use crate::engine::pld::attack_tpr;
    let tpr = fprs
        .iter()
        .map(|&f| attack_tpr(prof, f))
        .collect::<Result<Vec<_>, _>>()?;
    let curve = (0..60)
        .map(|i| {
            let f = powf(10f64, -6.0 + 6.0 * i as f64 / 59.0);
            (f, attack_tpr(prof, f).unwrap_or(1.0))
        })
        .collect();
    Ok(Risk {
        fpr: fprs.to_vec(),
        tpr,
        curve,
    })
}

/// The three tight charts of a Poisson run of one example (add/remove), each standing alone
/// (a part that fails carries its reason; the others are still drawn): ε over training at
/// 16 checkpoints, the profile up to [`profile_top`], the attack risk at
/// [`crate::engine::pld::DEFAULT_FPRS`]. What the page's worker answers; a part not asked
/// ([`Parts`]) is None.
pub struct ChartsData {
    pub training: Option<Result<Training, Error>>,
    pub profile: Option<Result<Vec<ProfileRow>, Error>>,
    pub risk: Option<Result<Risk, Error>>,
}

/// Which of the charts to compute: all, or ε over training apart from the profile and the
/// risk (the worker computes the two halves side by side), or the profile and the risk
/// apart too ([`risk_first`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parts {
    All,
    Training,
    ProfileRisk,
    /// The profile; the risk too only where both are read from one composition
    /// ([`crate::engine::pld::attack_read_together`]), else None — [`Parts::Risk`]'s is then
    /// the whole's.
    Profile,
    /// The risk alone, as [`Parts::ProfileRisk`] computes it where it is read apart from the
    /// profile: its attack profile's range is exact RDP's, so it needs no headline.
    Risk,
}

/// Whether the risk chart of a Poisson run of one example is most likely read apart from
/// its profile ([`Parts::Risk`]), so that it can be computed before the headline is known.
/// The profile's top is 2.5 × the headline's upper end, the attack profile's 1.2 × exact
/// RDP's ε at δ = 1e-12 (known at once), and they are read apart where the two differ by more
/// than a factor 1.5 ([`crate::engine::pld::attack_read_together`]). The tight ε is estimated
/// by the central limit (the Gaussian mechanism of μ = q·√(T·(e^{1/σ²} − 1)): Dong, Roth,
/// Su, "Gaussian Differential Privacy", JRSS-B 2022, on noisy SGD) with a margin of 1.5: it read
/// the tight ε within 1 % on issue 64's large-dataset runs, 2.4 % low on MNIST and 34 % low at
/// q = 1e-3, σ = 0.8, T = 1000. Exact RDP's ε, the certified upper bound at hand, is 8.6× the
/// tight ε at q = 1e-5, σ = 1.14, T = 10⁶ and would keep every large-dataset run from starting
/// early. A scheduling hint, never a number: where it misleads, [`Parts::Profile`] still returns
/// the risk read with the profile, and that one is the chart's.
pub fn risk_first(sgm: Sgm, steps: u64, delta: f64) -> bool {
    let (q, s) = (sgm.q(), sgm.sigma());
    let mu = q * (steps as f64 * crate::engine::math::exp_m1(1.0 / (s * s))).sqrt();
    if !(mu.is_finite() && mu > 0.0 && delta > 0.0 && delta < 1.0) {
        return false;
    }
    let estimate = crate::engine::pld::gauss::epsilon_bracket(mu, delta).upper;
    profile_top(1.5 * estimate) < crate::engine::pld::attack_top(sgm, steps) / 1.5
}

/// The profile's largest ε: 2.5 × the largest certified ε over training — the run's own
/// (`run_upper`, the headline's) when known — at least 2.5e-3.
pub fn profile_top(run_upper: f64) -> f64 {
    run_upper.max(1e-3) * 2.5
}

pub fn charts_data(
    sgm: Sgm,
    steps: u64,
    delta: f64,
    run_bracket: Option<(f64, f64)>,
    parts: Parts,
) -> ChartsData {
    let training = matches!(parts, Parts::All | Parts::Training)
        .then(|| training_data(sgm, steps, delta, 16, run_bracket));
    let shown = match (run_bracket, &training) {
        (Some((u, _)), _) => u,
        (None, Some(Ok(t))) => t
            .pld_upper
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max),
        _ => 1.0,
    };
    // The profile and the risk from one composition where their ranges are alike
    // ([`crate::engine::pld::profile_and_attack`]).
    let eps = profile_eps(profile_top(shown));
    let risk_of_attack = |a: Result<Vec<_>, Error>| {
        Some(a.and_then(|a| risk_of(&a, &crate::engine::pld::DEFAULT_FPRS)))
    };
    let (profile, risk) = match parts {
        Parts::Training => (None, None),
        Parts::Risk => (
            None,
            risk_of_attack(crate::engine::pld::attack_profile(sgm, steps)),
        ),
        Parts::Profile if !crate::engine::pld::attack_read_together(sgm, steps, &eps) => (
            Some(
                crate::engine::pld::profile(sgm, steps, &eps)
                    .and_then(|p| profile_rows(sgm, steps, &eps, p)),
            ),
            None,
        ),
        Parts::All | Parts::ProfileRisk | Parts::Profile => {
            let (pts, attack) = crate::engine::pld::profile_and_attack(sgm, steps, &eps);
            (
                Some(pts.and_then(|p| profile_rows(sgm, steps, &eps, p))),
                risk_of_attack(attack),
            )
        }
    };
    ChartsData {
        training,
        profile,
        risk,
    }
}
