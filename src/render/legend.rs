//! Legends: built as data before drawing (their height comes from what is drawn),
//! placed in a corner or in a strip under a narrow plot.

use super::*;
// Ours, not plotters' prelude's (two parameters).
use super::DrawResult;

pub(crate) type Area<DB> = DrawingArea<DB, Shift>;

/// How a legend entry's swatch is drawn: as its series is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Line,
    Dashed,
    Dot,
    /// A filled square (a shaded region).
    Area,
}

/// A chart's legend, built before drawing from what will be drawn: its length is the
/// number of rows a narrow chart's strip needs.
pub type Legend = Vec<(String, RGBColor, Mark)>;

/// The area to plot in and, with `Theme::legend_below`, the strip under it
/// sized for `rows` legend entries.
pub(crate) fn split_legend<DB: DrawingBackend>(
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
pub(crate) fn finish<DB: DrawingBackend>(
    root: &Area<DB>,
    plot: &Area<DB>,
    strip: Option<&Area<DB>>,
    chart: &LogChart<DB>,
    items: &[(String, RGBColor, Mark)],
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
pub(crate) fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (xr, yr): (std::ops::Range<i32>, std::ops::Range<i32>),
    items: &[(String, RGBColor, Mark)],
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
    for (i, (t, col, mark)) in items.iter().enumerate() {
        let y = y0 + pad + line * i as i32 + line / 2;
        let x = x0 + pad;
        let half = th.px(5.0) as i32;
        match mark {
            Mark::Dot => root.draw(&Circle::new((x + swatch / 2, y), th.px(4.0), col.filled()))?,
            Mark::Area => root.draw(&Rectangle::new(
                [(x, y - half), (x + swatch, y + half)],
                col.filled(),
            ))?,
            Mark::Line => root.draw(&PathElement::new(
                vec![(x, y), (x + swatch, y)],
                col.stroke_width(th.px(2.0)),
            ))?,
            Mark::Dashed => {
                // Two dashes, as the series' 6-on/4-off pattern reads at this length.
                let d = swatch * 2 / 5;
                for x1 in [x, x + swatch - d] {
                    root.draw(&PathElement::new(
                        vec![(x1, y), (x1 + d, y)],
                        col.stroke_width(th.px(2.0)),
                    ))?;
                }
            }
        }
        let style = font.clone().pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Left,
            plotters::style::text_anchor::VPos::Center,
        ));
        root.draw(&Text::new(t.clone(), (x + swatch + pad, y), style))?;
    }
    Ok(())
}

/// A drawn chart's [`Mapping`] (the page's readouts and crosshairs), or plotters' error.
pub type Drawn<DB> = Result<Mapping, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// [`finish`] (the legend), then the plot's mapping: how every chart that reads out ends.
pub(crate) fn drawn<DB: DrawingBackend>(
    root: &Area<DB>,
    plot: &Area<DB>,
    strip: Option<&Area<DB>>,
    chart: &LogChart<DB>,
    legend: &[(String, RGBColor, Mark)],
    right: bool,
    th: &Theme,
) -> Drawn<DB> {
    let mapping = Mapping::of(chart, th);
    finish(root, plot, strip, chart, legend, right, th).map(|()| mapping)
}

/// An exported chart's footer: `text` (its run) in small print along the bottom of `root`;
/// the chart is drawn on the area returned, above it.
pub fn with_footer<DB: DrawingBackend>(
    root: &Area<DB>,
    text: &str,
    th: &Theme,
) -> Result<Area<DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&th.bg)?;
    let h = root.dim_in_pixel().1 as i32;
    let (top, bottom) = root.split_vertically(h - th.px(22.0) as i32);
    bottom.draw(&Text::new(
        text.to_string(),
        (th.px(8.0) as i32, th.px(4.0) as i32),
        th.font(11.0).color(&th.fg),
    ))?;
    Ok(top)
}
