//! The page's fields, their parsing/validation, presets and the URL format.
//!
//! URL: `?v=1&q=…&sigma=…&steps=…&delta=…&conv=improved|classic&acct=pld|rdp[&embed=1]`.
//! Values from the URL go through the same parser as typed values.

use super::dom::*;
use super::Shared;
use crate::engine::{params, Conversion, Sgm};
use crate::render::{fmt_num, Inputs};

/// URL format version.
pub const URL_VERSION: &str = "1";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Q,
    Sigma,
    Steps,
    Delta,
}

impl Field {
    pub const ALL: [Field; 4] = [Field::Q, Field::Sigma, Field::Steps, Field::Delta];
    pub fn id(self) -> &'static str {
        match self {
            Field::Q => "q",
            Field::Sigma => "sigma",
            Field::Steps => "steps",
            Field::Delta => "delta",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Field::Q => "sample_rate q",
            Field::Sigma => "noise_multiplier σ",
            Field::Steps => "steps",
            Field::Delta => "δ",
        }
    }
    pub fn get(self, i: &Inputs) -> f64 {
        match self {
            Field::Q => i.q,
            Field::Sigma => i.sigma,
            Field::Steps => i.steps as f64,
            Field::Delta => i.delta,
        }
    }
    pub fn set(self, i: &mut Inputs, v: f64) {
        match self {
            Field::Q => i.q = v,
            Field::Sigma => i.sigma = v,
            Field::Steps => i.steps = v as u64,
            Field::Delta => i.delta = v,
        }
    }
    pub fn format(self, v: f64) -> String {
        match self {
            Field::Steps => format!("{}", v as u64),
            _ => fmt_num(v),
        }
    }
    /// The slider's log10 range (the page's sliders and the widget's).
    pub fn slider_range(self) -> (f64, f64) {
        match self {
            Field::Q => (-8.0, 0.0),
            Field::Sigma => (-1.0, 2.0),
            Field::Steps => (0.0, 9.0),
            Field::Delta => (-12.0, -1.0),
        }
    }
    /// Slider position (log10) → value, rounded to what the box shows.
    pub fn from_slider(self, x: f64) -> f64 {
        let v = 10f64.powf(x);
        match self {
            Field::Steps => v.round().max(1.0),
            _ => self.format(v).parse().unwrap_or(v),
        }
    }
}

/// Parse and validate one field's text; Err is the message shown next to it.
pub fn parse_field(f: Field, text: &str) -> Result<f64, String> {
    let t = text.trim();
    let v: f64 = t
        .parse()
        .map_err(|_| format!("'{}' is not a number", clip(t)))?;
    match f {
        Field::Q => {
            if v == 0.0 {
                return Err("q = 0 means no example is ever used: enter q in (0, 1]".into());
            }
            Sgm::new(v, 1.0).map(|_| v).map_err(|e| e.to_string())
        }
        Field::Sigma => Sgm::new(0.5, v).map(|_| v).map_err(|e| e.to_string()),
        Field::Steps => params::steps_from_f64(v)
            .map(|t| t as f64)
            .map_err(|e| e.to_string()),
        Field::Delta => params::check_delta(v).map_err(|e| e.to_string()),
    }
}

fn clip(s: &str) -> String {
    s.chars().take(24).collect()
}

pub fn preset(name: &str, conversion: Conversion) -> Option<Inputs> {
    let (q, sigma, steps, delta) = match name {
        "mnist" => (256.0 / 60000.0, 1.1, 14063, 1e-5),
        "cifar" => (4096.0 / 50000.0, 3.0, 2000, 1e-5),
        "tiny" => (1e-6, 0.8, 100_000_000, 1e-8),
        _ => return None,
    };
    Some(Inputs {
        q,
        sigma,
        steps,
        delta,
        conversion,
        omega: 32.0,
    })
}

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
    params.append(
        "conv",
        if i.conversion == Conversion::Classic {
            "classic"
        } else {
            "improved"
        },
    );
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
    let url = format!("?{}", String::from(params.to_string()));
    if let Ok(h) = w.history() {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}
