//! The page's fields, their parsing/validation, presets and the URL format.
//!
//! URL: `?v=1&q=…&sigma=…&steps=…&delta=…&conv=improved|classic&acct=pld|rdp[&embed=1]`.
//! Values from the URL go through the same parser as typed values.

use super::dom::*;
use super::Shared;
use crate::engine::Conversion;
use crate::render::Inputs;

pub use crate::ui::fields::{parse_field, preset, Field, URL_VERSION};

/// What the URL asked for: whether `embed=1` was given, and the fields whose
/// values were refused (with the message to show next to them).
pub struct UrlRead {
    pub embed: bool,
    pub errors: Vec<(Field, String)>,
}

/// Read the state from the URL into the app; bad values keep the default.
pub fn read_url(app: &Shared) -> UrlRead {
    let none = || UrlRead {
        embed: false,
        errors: Vec::new(),
    };
    let Some(search) = window().and_then(|w| w.location().search().ok()) else {
        return none();
    };
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else {
        return none();
    };
    let mut i = app.borrow().inputs;
    let mut errors = Vec::new();
    for f in Field::ALL {
        if let Some(text) = params.get(f.id()) {
            match parse_field(f, &text) {
                Ok(v) => f.set(&mut i, v),
                Err(m) => errors.push((f, format!("from the link: {m}"))),
            }
        }
    }
    if let Some(c) = params.get("conv") {
        i.conversion = if c == "classic" {
            Conversion::Classic
        } else {
            Conversion::Improved
        };
    }
    app.borrow_mut().inputs = i;
    UrlRead {
        embed: params.get("embed").as_deref() == Some("1"),
        errors,
    }
}

/// Write the state into the URL (on `change`, not on every `input`).
pub fn write_url(i: &Inputs) {
    let Some(w) = window() else { return };
    let Ok(params) = web_sys::UrlSearchParams::new() else {
        return;
    };
    params.append("v", URL_VERSION);
    params.append("q", &format!("{}", i.q));
    params.append("sigma", &format!("{}", i.sigma));
    params.append("steps", &format!("{}", i.steps));
    params.append("delta", &format!("{}", i.delta));
    params.append("conv", i.conversion.name());
    // Parse the parameters; a substring test took `xembed=1` or `embed=10` for embed=1.
    let embed = w
        .location()
        .search()
        .ok()
        .and_then(|s| web_sys::UrlSearchParams::new_with_str(&s).ok())
        .is_some_and(|p| p.get("embed").as_deref() == Some("1"));
    if embed {
        params.append("embed", "1");
    }
    params.append("acct", super::tight::acct_param());
    params.append("batch", super::tight::batch_param());
    let url = format!("?{}", String::from(params.to_string()));
    if let Ok(h) = w.history() {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}
