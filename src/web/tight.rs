//! The page's tight (PLD) accountant on the page: its answers are computed in a Web Worker
//! (www/pld-worker.js, the same wasm) and decided in the page model
//! ([`crate::ui::session`]); here the model's writes are carried out — element texts, the
//! charts' canvases and read-outs, the library's snippets.

use super::canvas::paint_canvas;
use super::dom::*;
use super::readout;
use crate::render::tight;
use crate::ui::session::{Op, Page, CHART_IDS};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;

/// One write of the page model, carried out.
pub fn apply_op(op: Op) {
    let el = |id: &str| doc().and_then(|d| d.get_element_by_id(id));
    match op {
        Op::Text(id, t) => set_text(id, &t),
        Op::Value(id, v) => {
            if let Some(s) = by_id::<web_sys::HtmlSelectElement>(id) {
                s.set_value(&v);
            } else {
                set_value(id, &v);
            }
        }
        Op::Hidden(id, h) => show(id, !h),
        Op::Class(id, class, on) => {
            if let Some(e) = el(id) {
                let _ = e.class_list().toggle_with_force(class, on);
            }
        }
        Op::Attr(id, name, v) => {
            if let Some(e) = el(id) {
                let _ = e.set_attribute(name, &v);
            }
        }
        Op::NoAttr(id, name) => {
            if let Some(e) = el(id) {
                let _ = e.remove_attribute(name);
            }
        }
        Op::Rows(selector, rows) => fill_table(
            selector,
            rows.iter()
                .map(|[a, b, c]| [a.as_str(), b.as_str(), c.as_str()]),
        ),
    }
}

/// The three charts' figures marked stale (from a request until its charts arrive) or not.
pub fn mark_charts(stale: bool) {
    for id in CHART_IDS {
        if let Some(fig) = doc()
            .and_then(|d| d.get_element_by_id(id))
            .and_then(|c| c.closest("figure").ok().flatten())
        {
            let _ = fig.class_list().toggle_with_force("stale", stale);
        }
    }
}

/// The read-out values of the three tight charts go (the inputs changed).
pub fn clear_readouts(r: &readout::Shared) {
    for n in 0..CHART_IDS.len() {
        readout::clear(r, readout::TIGHT + n);
    }
}

/// Clear tight chart `n`'s canvas and read-out (its texts say why, from the model).
pub fn clear_chart(r: &readout::Shared, n: usize) {
    readout::clear(r, readout::TIGHT + n);
    if let Some(c) = by_id::<HtmlCanvasElement>(CHART_IDS[n]) {
        // Setting the width clears the canvas.
        c.set_width(c.width());
    }
}

/// Draw the tight chart `which` (training, profile, risk) of the charts drawn on the page
/// — the canvases and the exports share it. None when there is no answer yet.
fn draw_tight<DB: plotters::prelude::DrawingBackend>(
    page: &Page,
    which: &str,
    root: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    th: &crate::render::Theme,
) -> Option<tight::Drawn<DB>> {
    let (i, c) = page.shown_charts()?;
    let l = page.labels();
    Some(match which {
        "training" => tight::draw_training(
            root,
            &c.training,
            page.link.target,
            page.steps_per_epoch(i.q),
            &l,
            th,
        ),
        "profile" => tight::draw_profile(root, &c.profile, i.delta, &l, th),
        _ => tight::draw_risk(root, &c.risk, page.audit_points(), &l, th),
    })
}

/// Draw the three charts from the last answer (also after a theme or size change); their
/// texts come from the model after.
pub fn redraw(page: &Page, r: &readout::Shared) {
    if page.shown_charts().is_none() {
        return;
    }
    let dark = prefers_dark();
    for (n, (id, which)) in CHART_IDS
        .into_iter()
        .zip(["training", "profile", "risk"])
        .enumerate()
    {
        let mut mapping = None;
        if let Some(canvas) = by_id::<HtmlCanvasElement>(id) {
            paint_canvas(&canvas, dark, id, |root, th| {
                draw_tight(page, which, root, th)
                    .map(|r| r.map(|m| mapping = Some(m)))
                    .unwrap_or(Ok(()))
            });
        }
        let k = readout::TIGHT + n;
        match (
            mapping,
            page.shown_charts().and_then(|(_, c)| c.errors[n].as_ref()),
        ) {
            (Some(map), None) => readout::set_points(r, k, map, page.readouts(n)),
            _ => readout::clear(r, k),
        }
    }
}

/// Draw the tight chart `which` for an export, when the charts are the inputs shown's;
/// false otherwise or when drawing failed.
pub fn draw_named<DB: plotters::prelude::DrawingBackend>(
    page: &Page,
    which: &str,
    root: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    th: &crate::render::Theme,
) -> bool {
    page.charts().is_some() && draw_tight(page, which, root, th).is_some_and(|r| r.is_ok())
}

/// The library snippets (title, code), built with createElement/textContent.
pub fn fill_snippets(snippets: &[(String, String)]) {
    let Some(d) = doc() else { return };
    let Some(box_) = d.get_element_by_id("snippets") else {
        return;
    };
    box_.set_text_content(None);
    for (title, code) in snippets {
        let (Ok(div), Ok(head), Ok(pre)) = (
            d.create_element("div"),
            d.create_element("div"),
            d.create_element("pre"),
        ) else {
            return;
        };
        div.set_class_name("snippet");
        head.set_class_name("row");
        head.set_text_content(Some(title));
        if let Ok(btn) = d.create_element("button") {
            // No listener per button: one delegated listener on #snippets (see `start`).
            btn.set_text_content(Some("Copy"));
            let _ = btn.set_attribute("type", "button");
            let _ = head.append_child(&btn);
        }
        pre.set_text_content(Some(code));
        let _ = div.append_child(&head);
        let _ = div.append_child(&pre);
        let _ = box_.append_child(&div);
    }
}

/// Start (once): without a worker (very old browsers) the tight numbers stay "—" and say
/// why; one page-lifetime listener serves every snippet's Copy button.
pub fn start(worker: bool) {
    if !worker {
        set_text("epsilon-pld-note", "the tight accountant needs Web Workers");
        return;
    }
    // (The snippets are rebuilt on each answer; delegation keeps no closure per button.)
    if let Some(box_) = doc().and_then(|d| d.get_element_by_id("snippets")) {
        let on_click = Closure::<dyn FnMut(web_sys::Event)>::new(|ev: web_sys::Event| {
            let pre = ev
                .target()
                .map(|t| t.unchecked_into::<web_sys::Element>())
                .filter(|b| b.tag_name() == "BUTTON")
                .and_then(|b| b.closest(".snippet").ok().flatten())
                .and_then(|s| s.query_selector("pre").ok().flatten());
            if let Some(pre) = pre {
                copy_text(&pre);
            }
        });
        let _ = box_.add_event_listener_with_callback("click", on_click.as_ref().unchecked_ref());
        on_click.forget();
    }
}

/// Copy a snippet, or select it for Ctrl+C where the clipboard is not available.
fn copy_text(pre: &web_sys::Element) {
    let text = pre.text_content().unwrap_or_default();
    let pre = pre.clone();
    copy(&text, "code copied", move || {
        if let (Some(sel), Some(d)) = (
            window().and_then(|w| w.get_selection().ok().flatten()),
            doc(),
        ) {
            if let Ok(range) = d.create_range() {
                let _ = range.select_node_contents(&pre);
                let _ = sel.remove_all_ranges();
                let _ = sel.add_range(&range);
            }
        }
        set_text(
            "copy-status",
            "code selected: press Ctrl+C (the clipboard is not available here)",
        );
    });
}
