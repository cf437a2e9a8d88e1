//! Hover and keyboard readouts on the page's charts: chart A and the three tight charts.
//! What each point says and where the plot sits come from render (`*_readouts`,
//! [`Mapping`]); here the pointer and the keys pick a point, and its words and the
//! crosshair are written. A chart without data for the inputs shown reads out nothing.

use super::dom::*;
use crate::render::{Mapping, ReadoutPoint};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use web_sys::HtmlElement;

/// A chart's elements: the canvas, the readout's text, the crosshair line and dot.
pub struct Chart {
    canvas: &'static str,
    text: &'static str,
    line: &'static str,
    dot: &'static str,
}

const CHARTS: [Chart; 4] = [
    Chart {
        canvas: "chart-a",
        text: "readout",
        line: "crosshair",
        dot: "crosshair-dot",
    },
    Chart {
        canvas: "chart-training",
        text: "training-readout",
        line: "crosshair-training",
        dot: "crosshair-training-dot",
    },
    Chart {
        canvas: "chart-profile",
        text: "profile-readout",
        line: "crosshair-profile",
        dot: "crosshair-profile-dot",
    },
    Chart {
        canvas: "chart-risk",
        text: "risk-readout",
        line: "crosshair-risk",
        dot: "crosshair-risk-dot",
    },
];

/// Which chart: index into the readouts.
pub const A: usize = 0;
/// The tight charts in their order (training, profile, risk): `TIGHT + i`.
pub const TIGHT: usize = 1;

const HINT: &str = "Hover or use ←/→ on the chart for values.";

/// A drawn chart's points (where each is, in data coordinates), what point `i` says (worded
/// on demand), and the point read out (None until the reader asks).
struct Hover {
    map: Mapping,
    at: Vec<(f64, f64)>,
    point: Box<dyn Fn(usize) -> Option<ReadoutPoint>>,
    cursor: Option<usize>,
}

/// What each chart reads out (the page owns it; the listeners share it).
#[derive(Default)]
pub struct Readouts([Option<Hover>; 4]);

pub type Shared = Rc<RefCell<Readouts>>;

/// Chart `which` was drawn with `map` and these points.
pub fn set_points(r: &Shared, which: usize, map: Mapping, points: Vec<ReadoutPoint>) {
    let at = points.iter().map(|p| (p.x, p.y)).collect();
    set(r, which, map, at, move |i| points.get(i).cloned());
}

/// Chart `which` was drawn with `map`, its points `at`, point `i` worded by `point(i)`: a
/// value being read out is read again from the new points (the words always belong to the
/// chart as drawn).
pub fn set(
    r: &Shared,
    which: usize,
    map: Mapping,
    at: Vec<(f64, f64)>,
    point: impl Fn(usize) -> Option<ReadoutPoint> + 'static,
) {
    let cursor = {
        let h = &mut r.borrow_mut().0;
        let cursor = h[which]
            .as_ref()
            .and_then(|o| o.cursor)
            .map(|c| c.min(at.len().saturating_sub(1)))
            .filter(|_| !at.is_empty());
        h[which] = Some(Hover {
            map,
            at,
            point: Box::new(point),
            cursor,
        });
        cursor
    };
    if cursor.is_some() {
        show(r, which, false);
    }
}

/// Chart `which` has no data for the inputs shown (cleared, or being recomputed): nothing
/// is read out; the hint stays.
pub fn clear(r: &Shared, which: usize) {
    r.borrow_mut().0[which] = None;
    let c = &CHARTS[which];
    set_text(c.text, HINT);
    mark_on(c, false);
    hide_crosshair(c);
}

/// Class `on` while a value is read out (a phone shows the line only then).
fn mark_on(c: &Chart, on: bool) {
    if let Some(e) = by_id::<HtmlElement>(c.text) {
        let _ = e.class_list().toggle_with_force("on", on);
    }
}

fn hide_crosshair(c: &Chart) {
    for id in [c.line, c.dot] {
        if let Some(e) = by_id::<HtmlElement>(id) {
            e.set_hidden(true);
        }
    }
}

/// Write the point under the cursor of chart `which`; `crosshair`: also place the line
/// and dot (the pointer or the keys are on the chart).
fn show(r: &Shared, which: usize, crosshair: bool) {
    let c = &CHARTS[which];
    {
        let h = &r.borrow().0;
        let Some((o, i)) = h[which].as_ref().and_then(|o| o.cursor.map(|i| (o, i))) else {
            return;
        };
        let Some(p) = (o.point)(i) else { return };
        set_text(c.text, &p.text);
        mark_on(c, true);
        if !crosshair {
            return;
        }
        let map = o.map;
        let on_x = p.x >= map.x.0 && p.x <= map.x.1;
        if let Some(line) = by_id::<HtmlElement>(c.line) {
            let st = line.style();
            let _ = st.set_property("left", &format!("{:.1}px", map.px_of_x(p.x)));
            let _ = st.set_property("top", &format!("{:.1}px", map.px.1 .0));
            let _ = st.set_property("height", &format!("{:.1}px", map.px.1 .1 - map.px.1 .0));
            line.set_hidden(!on_x);
        }
        let on_y = p.y > 0.0 && p.y >= map.y.0 && p.y <= map.y.1;
        if let Some(dot) = by_id::<HtmlElement>(c.dot) {
            let st = dot.style();
            let _ = st.set_property("left", &format!("{:.1}px", map.px_of_x(p.x)));
            let _ = st.set_property("top", &format!("{:.1}px", map.px_of_y(p.y)));
            dot.set_hidden(!(on_x && on_y));
        }
    }
}

/// Move chart `which`'s cursor with `f(cursor, number of points)`; false when it has no
/// points.
fn move_cursor(r: &Shared, which: usize, f: impl FnOnce(Option<usize>, usize) -> usize) -> bool {
    let moved = match r.borrow_mut().0[which]
        .as_mut()
        .filter(|o| !o.at.is_empty())
    {
        Some(o) => {
            o.cursor = Some(f(o.cursor, o.at.len()).min(o.at.len() - 1));
            true
        }
        None => false,
    };
    if moved {
        show(r, which, true);
    }
    moved
}

/// Hover (the nearest point in x, on the chart's log axis), ←/→ (Home/End), focus.
pub fn wire(r: &Shared) {
    for (which, c) in CHARTS.iter().enumerate() {
        let h = r.clone();
        on(c.canvas, "mousemove", move |ev| {
            let Some(me) = ev.dyn_ref::<web_sys::MouseEvent>() else {
                return;
            };
            let px = me.offset_x() as f64;
            let nearest = h.borrow().0[which].as_ref().map(|o| {
                let xs: Vec<f64> = o.at.iter().map(|p| p.0).collect();
                o.map.nearest(&xs, px)
            });
            if let Some(i) = nearest {
                move_cursor(&h, which, |_, _| i);
            }
        });
        on(c.canvas, "mouseleave", move |_| {
            hide_crosshair(&CHARTS[which])
        });
        on(c.canvas, "blur", move |_| hide_crosshair(&CHARTS[which]));
        let h = r.clone();
        on(c.canvas, "keydown", move |ev| {
            let Some(k) = ev.dyn_ref::<web_sys::KeyboardEvent>() else {
                return;
            };
            let key = k.key();
            let step = |cur: Option<usize>, n: usize| -> usize {
                match (key.as_str(), cur) {
                    ("ArrowRight", Some(c)) => c + 1,
                    ("ArrowLeft", Some(c)) => c.saturating_sub(1),
                    ("End", _) => n - 1,
                    // Home, or the first key on a chart not yet read out.
                    _ => 0,
                }
            };
            if matches!(key.as_str(), "ArrowRight" | "ArrowLeft" | "Home" | "End")
                && move_cursor(&h, which, step)
            {
                ev.prevent_default();
            }
        });
        let h = r.clone();
        on(c.canvas, "focus", move |_| {
            move_cursor(&h, which, |c, _| c.unwrap_or(0));
        });
    }
}
