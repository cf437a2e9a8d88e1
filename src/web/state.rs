//! The page's link ↔ its controls: a thin adapter over [`crate::ui::link`], which holds the
//! format and its checks (tested natively).

use super::dom::*;
use super::field::dataset_terms;
use crate::render::Inputs;
use crate::ui::link::{self, Dataset, Link};

pub use crate::ui::fields::{parse_field, preset, Field};

/// Read the link into the page's inputs and the controls; each refused value is named next
/// to its control (the default kept). Returns whether the link asks for iframe mode.
pub fn read_url(inputs: &mut Inputs) -> bool {
    let search = window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let (l, errors) = link::decode(&search);
    *inputs = l.inputs;
    super::tight::set_acct(l.acct);
    super::tight::set_batching(l.batch);
    super::tight::set_group(l.group);
    super::tight::set_adjacency(l.adjacency);
    super::tight::set_max_batch(l.max_batch);
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
    // After the boxes hold the kept values, say which link values were refused.
    let pending: Vec<_> = errors.into_iter().map(|e| (e.param, e.message)).collect();
    PENDING.with(|p| *p.borrow_mut() = pending);
    l.embed
}

thread_local! {
    static PENDING: std::cell::RefCell<Vec<(&'static str, String)>> = Default::default();
}

/// Show the refused link values next to their controls (once the controls are synced).
pub fn show_link_errors() {
    for (param, msg) in PENDING.with(|p| std::mem::take(&mut *p.borrow_mut())) {
        let id = match param {
            "q" | "sigma" | "steps" | "delta" | "omega" => {
                set_error(param, &msg);
                continue;
            }
            "acct" => "accountant-error",
            "batch" => "batching-error",
            "group" => "group-size-error",
            "adjacency" => "adjacency-error",
            "max_batch" => "max-batch-error",
            "cb_sigma" | "cb_eps" => "cb-error",
            "dataset" => "ds-error",
            "target" => "target-error",
            "overlays" => "overlays-error",
            "conv" => "conversion-error",
            _ => "link-error",
        };
        set_text(id, &msg);
    }
}

/// The link for what the controls show now.
fn current(i: &Inputs) -> Link {
    let d = Link::default();
    let t = dataset_terms();
    // Terms that describe no valid run are left out of the link.
    let dataset = if crate::engine::params::from_dataset(t.n, t.b, t.e).is_ok() {
        t
    } else {
        d.dataset
    };
    Link {
        inputs: *i,
        acct: super::tight::acct(),
        batch: super::tight::batching(),
        overlays: by_id::<web_sys::HtmlInputElement>("overlays").is_some_and(|b| b.checked()),
        capacity: crate::ui::fields::parse_capacity(&value("cb-sigma"), &value("cb-eps"))
            .unwrap_or(d.capacity),
        dataset,
        embed: doc()
            .and_then(|d| d.body())
            .is_some_and(|b| b.class_list().contains("embed")),
        target: super::field::parse_target()
            .ok()
            .filter(|&e| e != link::DEFAULT_TARGET),
        group: super::tight::group(),
        adjacency: super::tight::adjacency(),
        max_batch: super::tight::max_batch(),
    }
}

/// Write the state into the URL (debounced while typing; at once on `change`).
pub fn write_url(i: &Inputs) {
    let Some(w) = window() else { return };
    let url = format!("?{}", link::encode(&current(i)));
    if let Ok(h) = w.history() {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}
