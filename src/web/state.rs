//! The page's link ↔ its controls: a thin adapter over [`crate::ui::link`], which holds the
//! format and its checks (tested natively).

use super::dom::*;
use crate::ui::link::{self, Dataset, Link};
use crate::ui::session::Page;

pub use crate::ui::fields::{parse_field, preset, Field};

/// Read the link: its values go into the controls the page model does not write (the rest
/// follow from the model); returns it with each refused value's parameter and reason (the
/// default kept), shown by [`show_link_errors`] once the controls are synced.
pub fn read_url() -> (Link, Vec<(&'static str, String)>) {
    let search = window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let (l, errors) = link::decode(&search);
    if let Some(b) = by_id::<web_sys::HtmlInputElement>("overlays") {
        b.set_checked(l.overlays);
    }
    set_value("omega", &l.inputs.omega.to_string());
    set_value("cb-sigma", &l.capacity.0.to_string());
    set_value("cb-eps", &l.capacity.1.to_string());
    set_value("ds-n", &l.dataset.n.to_string());
    set_value("ds-b", &l.dataset.b.to_string());
    set_value("ds-e", &l.dataset.e.to_string());
    if let Some(e) = l.target {
        set_value("target-eps", &e.to_string());
    }
    if let Some((t, f)) = l.risk {
        set_value("risk-tpr", &t.to_string());
        set_value("risk-fpr", &f.to_string());
    }
    if l.dataset != Dataset::MNIST {
        if let Some(d) = by_id::<web_sys::Element>("dataset") {
            let _ = d.set_attribute("open", "");
        }
    }
    if l.embed {
        if let Some(b) = doc().and_then(|d| d.body()) {
            let _ = b.class_list().add_1("embed");
        }
    }
    (
        l,
        errors.into_iter().map(|e| (e.param, e.message)).collect(),
    )
}

/// Show the refused link values next to their controls (once the controls are synced).
pub fn show_link_errors(errors: Vec<(&'static str, String)>) {
    for (param, msg) in errors {
        match param {
            "q" | "sigma" | "steps" | "delta" | "omega" => set_error(param, &msg),
            _ => set_text(link::error_element(param), &msg),
        }
    }
}

/// The link for the page now: the model's choices, with chart B's overlays, chart D's
/// boxes and iframe mode as the page shows them.
fn current(page: &Page) -> Link {
    let d = Link::default();
    let l = &page.link;
    // Terms that describe no valid run are left out of the link.
    let t = l.dataset;
    let dataset = if crate::engine::params::from_dataset(t.n, t.b, t.e).is_ok() {
        t
    } else {
        d.dataset
    };
    Link {
        overlays: by_id::<web_sys::HtmlInputElement>("overlays").is_some_and(|b| b.checked()),
        capacity: crate::ui::fields::parse_capacity(&value("cb-sigma"), &value("cb-eps"))
            .unwrap_or(d.capacity),
        dataset,
        embed: doc()
            .and_then(|d| d.body())
            .is_some_and(|b| b.class_list().contains("embed")),
        target: l.target.filter(|&e| e != link::DEFAULT_TARGET),
        risk: crate::ui::page::parse_rate(&value("risk-tpr"), "TPR")
            .and_then(|t| crate::ui::page::parse_rate(&value("risk-fpr"), "FPR").map(|f| (t, f)))
            .ok(),
        group: l.group.max(1),
        ..*l
    }
}

/// Write the state into the URL (debounced while typing; at once on `change`).
pub fn write_url(page: &Page) {
    let Some(w) = window() else { return };
    let url = format!("?{}", link::encode(&current(page)));
    if let Ok(h) = w.history() {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}
