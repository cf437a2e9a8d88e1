//! The page's one Web Worker (www/pld-worker.js, a module worker from the page's own
//! origin): started once, and every request of the page — the tight accountant's, the
//! small-σ RDP model's, the calibrations — is posted through here. Below `tight` and
//! `heavy`, which both post; where its answers go is the caller's callback.

use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

thread_local! {
    static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
}

/// Start the worker with `on_message` for its answers; false when the browser cannot.
pub fn start(on_message: impl FnMut(MessageEvent) + 'static) -> bool {
    let opts = WorkerOptions::new();
    opts.set_type(WorkerType::Module);
    let Ok(w) = Worker::new_with_options("pld-worker.js", &opts) else {
        return false;
    };
    let on_msg = Closure::<dyn FnMut(MessageEvent)>::new(on_message);
    w.set_onmessage(Some(on_msg.as_ref().unchecked_ref()));
    // Page-lifetime listener (the worker lives as long as the page).
    on_msg.forget();
    WORKER.with(|k| *k.borrow_mut() = Some(w));
    true
}

/// Post `msg` to the worker; false when there is none or posting failed (logged).
pub fn post(msg: &JsValue) -> bool {
    WORKER.with(|k| match &*k.borrow() {
        Some(w) => match w.post_message(msg) {
            Ok(()) => true,
            Err(e) => {
                web_sys::console::error_2(&"sgm-rdp: posting to the worker failed".into(), &e);
                false
            }
        },
        None => false,
    })
}

/// A request's fields ([`crate::ui::protocol`]) as the JS object the worker reads.
pub fn object(fields: &crate::ui::protocol::Fields) -> js_sys::Object {
    use crate::ui::protocol::Value;
    let o = js_sys::Object::new();
    for (k, v) in fields {
        let v = match v {
            Value::Num(x) => JsValue::from_f64(*x),
            Value::Text(t) => JsValue::from_str(t),
            Value::Bool(b) => JsValue::from_bool(*b),
        };
        let _ = js_sys::Reflect::set(&o, &(*k).into(), &v);
    }
    o
}

/// Post a request ([`crate::ui::protocol`]); false as for [`post`].
pub fn post_fields(fields: &crate::ui::protocol::Fields) -> bool {
    post(&object(fields).into())
}
