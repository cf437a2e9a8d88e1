//! The page's one Web Worker (www/pld-worker.js, a module worker from the page's own
//! origin): started once, and every request of the page — the tight accountant's, the
//! small-σ RDP model's, the calibrations — is posted through here. Below `tight` and
//! `heavy`, which both post; where its answers go is the caller's callback.

use crate::ui::protocol::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

/// Start the worker with `on_message` for its answers; None when the browser cannot.
pub fn start(on_message: impl FnMut(MessageEvent) + 'static) -> Option<Worker> {
    let opts = WorkerOptions::new();
    opts.set_type(WorkerType::Module);
    let w = Worker::new_with_options("pld-worker.js", &opts).ok()?;
    let on_msg = Closure::<dyn FnMut(MessageEvent)>::new(on_message);
    w.set_onmessage(Some(on_msg.as_ref().unchecked_ref()));
    // Page-lifetime listener (the worker lives as long as the page).
    on_msg.forget();
    Some(w)
}

/// Post `msg` to the worker; false when there is none or posting failed (logged).
pub fn post(worker: Option<&Worker>, msg: &JsValue) -> bool {
    match worker.map(|w| w.post_message(msg)) {
        Some(Ok(())) => true,
        Some(Err(e)) => {
            web_sys::console::error_2(&"sgm-rdp: posting to the worker failed".into(), &e);
            false
        }
        None => false,
    }
}

/// A request's fields ([`crate::ui::protocol`]) as the JS object the worker reads.
pub fn object(fields: &crate::ui::protocol::Fields) -> js_sys::Object {
    let o = js_sys::Object::new();
    for (k, v) in fields {
        let _ = js_sys::Reflect::set(&o, &(*k).into(), &to_js(v));
    }
    o
}

fn to_js(v: &Value) -> JsValue {
    match v {
        Value::Null => JsValue::NULL,
        Value::Num(x) => JsValue::from_f64(*x),
        Value::Text(t) => JsValue::from_str(t),
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::List(l) => l.iter().map(to_js).collect::<js_sys::Array>().into(),
        Value::Obj(f) => {
            let o = js_sys::Object::new();
            for (k, v) in f {
                let _ = js_sys::Reflect::set(&o, &k.into(), &to_js(v));
            }
            o.into()
        }
    }
}

/// An answer of the worker as the protocol's tree (what is read from it is read in `ui`).
pub fn from_js(v: &JsValue) -> Value {
    if let Some(x) = v.as_f64() {
        Value::Num(x)
    } else if let Some(t) = v.as_string() {
        Value::Text(t)
    } else if let Some(b) = v.as_bool() {
        Value::Bool(b)
    } else if js_sys::Array::is_array(v) {
        Value::List(js_sys::Array::from(v).iter().map(|x| from_js(&x)).collect())
    } else if v.is_object() {
        let entries = js_sys::Object::entries(v.unchecked_ref());
        Value::Obj(
            entries
                .iter()
                .map(|e| {
                    let e = js_sys::Array::from(&e);
                    (e.get(0).as_string().unwrap_or_default(), from_js(&e.get(1)))
                })
                .collect(),
        )
    } else {
        Value::Null
    }
}

/// Post a request ([`crate::ui::protocol`]); false as for [`post`].
pub fn post_fields(worker: Option<&Worker>, fields: &crate::ui::protocol::Fields) -> bool {
    post(worker, &object(fields).into())
}
