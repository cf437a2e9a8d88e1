//! Small DOM helpers: every write is `textContent` or a property, never HTML.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Document, Event, HtmlElement, HtmlInputElement, Window};

pub fn window() -> Option<Window> {
    web_sys::window()
}

pub fn doc() -> Option<Document> {
    window().and_then(|w| w.document())
}

pub fn by_id<T: JsCast>(id: &str) -> Option<T> {
    doc()?.get_element_by_id(id)?.dyn_into::<T>().ok()
}

pub fn set_text(id: &str, text: &str) {
    if let Some(e) = doc().and_then(|d| d.get_element_by_id(id)) {
        e.set_text_content(Some(text));
    }
}

pub fn value(id: &str) -> String {
    by_id::<web_sys::Element>(id) // an input, a select or a textarea
        .and_then(|e| js_sys::Reflect::get(&e, &"value".into()).ok()?.as_string())
        .unwrap_or_default()
}

pub fn set_value(id: &str, v: &str) {
    if let Some(e) = by_id::<HtmlInputElement>(id) {
        e.set_value(v);
    }
}

/// Show (or clear) the message next to a field and mark the field invalid.
pub fn set_error(id: &str, msg: &str) {
    set_text(&format!("{id}-error"), msg);
    if let Some(e) = by_id::<HtmlInputElement>(id) {
        let _ = e.set_attribute(
            "aria-invalid",
            if msg.is_empty() { "false" } else { "true" },
        );
        if let Some(p) = e.parent_element() {
            let _ = p.class_list().toggle_with_force("invalid", !msg.is_empty());
        }
    }
}

pub fn show(id: &str, visible: bool) {
    if let Some(e) = by_id::<HtmlElement>(id) {
        e.set_hidden(!visible);
    }
}

/// Page-lifetime listener (the page never removes its controls).
pub fn on(id: &str, event: &str, f: impl FnMut(Event) + 'static) {
    if let Some(e) = doc().and_then(|d| d.get_element_by_id(id)) {
        listen_forever(&e, event, Box::new(f));
    }
}

pub fn on_window(event: &str, f: impl FnMut(Event) + 'static) {
    if let Some(w) = window() {
        listen_forever(&w, event, Box::new(f));
    }
}

/// Run `f` once after `ms` milliseconds; the timer's handle (to clear it), if set. Boxed,
/// so the closure glue is compiled once for every timer of the page.
pub fn after(ms: i32, f: impl FnOnce() + 'static) -> Option<i32> {
    let f: Box<dyn FnOnce()> = Box::new(f);
    let cb = Closure::once_into_js(f);
    window()?
        .set_timeout_with_callback_and_timeout_and_arguments_0(cb.unchecked_ref(), ms)
        .ok()
}

/// A page-lifetime listener. The closure arrives boxed, so wasm-bindgen's closure glue
/// is compiled once for all of them rather than once per handler (smaller wasm).
fn listen_forever(target: &web_sys::EventTarget, event: &str, f: Box<dyn FnMut(Event)>) {
    let cb = Closure::wrap(f);
    let _ = target.add_event_listener_with_callback(event, cb.as_ref().unchecked_ref());
    cb.forget();
}

pub fn prefers_dark() -> bool {
    window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .map(|m| m.matches())
        .unwrap_or(false)
}

pub fn download_url(name: &str, url: &str) {
    if let Some(a) = doc()
        .and_then(|d| d.create_element("a").ok())
        .and_then(|e| e.dyn_into::<web_sys::HtmlAnchorElement>().ok())
    {
        a.set_href(url);
        a.set_download(name);
        a.click();
    }
}

pub fn download_text(name: &str, mime: &str, text: &str) {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    if let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) {
        if let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) {
            download_url(name, &url);
            // Revoked later: the browser reads the blob after the click returns.
            after(60_000, move || {
                let _ = web_sys::Url::revoke_object_url(&url);
            });
        }
    }
}

/// In iframe mode, tell the parent our height so it can size the frame.
pub fn post_height() {
    let Some(w) = window() else { return };
    let in_frame = w.parent().ok().flatten().map(|p| p != w).unwrap_or(false);
    let is_embed = doc()
        .and_then(|d| d.body())
        .map(|b| b.class_list().contains("embed"))
        .unwrap_or(false);
    if !(in_frame && is_embed) {
        return;
    }
    let h = doc()
        .and_then(|d| d.document_element())
        .map(|e| e.scroll_height())
        .unwrap_or(0);
    let msg = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&msg, &"type".into(), &"sgm-rdp-height".into());
    let _ = js_sys::Reflect::set(&msg, &"height".into(), &JsValue::from_f64(h as f64));
    if let Ok(Some(p)) = w.parent() {
        let _ = p.post_message(&msg, "*");
    }
}

/// Replace the rows of the table body `selector` with text cells (createElement +
/// textContent, never HTML).
pub fn fill_table<'a>(selector: &str, rows: impl IntoIterator<Item = [&'a str; 3]>) {
    let Some(d) = doc() else { return };
    let Some(body) = d.query_selector(selector).ok().flatten() else {
        return;
    };
    body.set_text_content(None);
    for cells in rows {
        let Ok(tr) = d.create_element("tr") else {
            return;
        };
        for text in cells {
            if let Ok(td) = d.create_element("td") {
                td.set_text_content(Some(text));
                let _ = tr.append_child(&td);
            }
        }
        let _ = body.append_child(&tr);
    }
}

/// Copy `text` to the clipboard and say `copied` in `#copy-status`; where the page may not
/// use the clipboard (plain http, iframes) or writing fails, `select` selects the text for
/// Ctrl+C and says so.
pub fn copy(text: &str, copied: &'static str, select: impl FnOnce() + 'static) {
    // navigator.clipboard exists only in secure contexts.
    let clipboard = window()
        .filter(|w| w.is_secure_context())
        .map(|w| w.navigator())
        .filter(|n| js_sys::Reflect::get(n, &"clipboard".into()).is_ok_and(|c| c.is_object()))
        .map(|n| n.clipboard());
    let Some(c) = clipboard else {
        select();
        return;
    };
    let ok =
        wasm_bindgen::closure::Closure::once(move |_: JsValue| set_text("copy-status", copied));
    let err = wasm_bindgen::closure::Closure::once(move |_: JsValue| select());
    let _ = c.write_text(text).then2(&ok, &err);
    ok.forget();
    err.forget();
}
