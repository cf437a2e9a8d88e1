//! One field control — a log-scale slider, its text box and its message — shared by the
//! page and every widget. What a value means, how text is parsed and where the slider
//! lands are the ui layer's ([`Field`]); this only moves values between the elements.

use crate::ui::fields::{parse_field, Field};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Element, Event, EventTarget, HtmlInputElement, KeyboardEvent};

/// A listener removed on drop (the widget drops its own; the page keeps its forever).
pub struct Listener {
    target: EventTarget,
    event: &'static str,
    cb: Closure<dyn FnMut(Event)>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self
            .target
            .remove_event_listener_with_callback(self.event, self.cb.as_ref().unchecked_ref());
    }
}

pub fn listen(
    target: &EventTarget,
    event: &'static str,
    f: impl FnMut(Event) + 'static,
) -> Listener {
    // Boxed: the closure glue is compiled once for every listener.
    let cb = Closure::wrap(Box::new(f) as Box<dyn FnMut(Event)>);
    let _ = target.add_event_listener_with_callback(event, cb.as_ref().unchecked_ref());
    Listener {
        target: target.clone(),
        event,
        cb,
    }
}

/// The slider, box and message of one [`Field`].
#[derive(Clone)]
pub struct Control {
    pub f: Field,
    pub range: HtmlInputElement,
    pub input: HtmlInputElement,
    pub err: Element,
}

impl Control {
    /// The control of `f` over its elements; the slider gets `f`'s log10 range.
    pub fn new(f: Field, range: HtmlInputElement, input: HtmlInputElement, err: Element) -> Self {
        let (lo, hi) = f.slider_range();
        range.set_min(&lo.to_string());
        range.set_max(&hi.to_string());
        Control {
            f,
            range,
            input,
            err,
        }
    }

    /// The page's control for `f`: `#{id}-range`, `#{id}`, `#{id}-error`.
    pub fn by_id(f: Field) -> Option<Control> {
        let d = web_sys::window()?.document()?;
        let get = |id: &str| d.get_element_by_id(id);
        Some(Control::new(
            f,
            get(&format!("{}-range", f.id()))?.dyn_into().ok()?,
            get(f.id())?.dyn_into().ok()?,
            get(&format!("{}-error", f.id()))?,
        ))
    }

    /// Show `v` in the slider and, unless the reader is typing in it (their text and its
    /// message stay), in the box with the message cleared.
    pub fn show(&self, v: f64) {
        if !self.input.matches(":focus").unwrap_or(false) {
            self.input.set_value(&self.f.format(v));
            self.set_error("");
        }
        self.set_slider(v);
    }

    fn set_slider(&self, v: f64) {
        self.range.set_value(&self.f.slider_position(v));
        let _ = self.range.set_attribute(
            "aria-valuetext",
            &format!("{} = {}", self.f.label(), self.f.format(v)),
        );
    }

    /// Show (or clear) the message and mark the box (and its row) invalid.
    pub fn set_error(&self, msg: &str) {
        self.err.set_text_content(Some(msg));
        let bad = !msg.is_empty();
        let _ = self
            .input
            .set_attribute("aria-invalid", if bad { "true" } else { "false" });
        if let Some(p) = self.input.parent_element() {
            let _ = p.class_list().toggle_with_force("invalid", bad);
        }
    }

    /// The listeners: the slider and the arrow keys move between round values (the box
    /// follows), the box is parsed as typed (the slider follows, or the message names
    /// the problem). `apply` gets every accepted value — and, when the text typed ends
    /// invalid, the value from before the edit again (the one shown when the box got focus,
    /// or committed by its last valid `change`, e.g. Enter): a valid prefix such as the "1" of "1e9" or the "0.5"
    /// of "0.5%" never stays as the state while the box says the value is wrong.
    pub fn wire(&self, apply: Rc<dyn Fn(f64)>) -> [Listener; 5] {
        let before = Rc::new(std::cell::Cell::new(f64::NAN));
        let (c, b) = (self.clone(), before.clone());
        let remember = move |_: Event| {
            if let Ok(v) = parse_field(c.f, &c.input.value()) {
                b.set(v);
            }
        };
        let focus = listen(&self.input, "focus", remember.clone());
        let change = listen(&self.input, "change", remember);
        let (c, a) = (self.clone(), apply.clone());
        let slide = listen(&self.range, "input", move |_| {
            let v =
                c.f.from_slider(crate::decimal::parse(&c.range.value()).unwrap_or(0.0));
            c.input.set_value(&c.f.format(v));
            c.set_slider(v);
            c.set_error("");
            a(v);
        });
        let (c, a) = (self.clone(), apply.clone());
        let keys = listen(&self.range, "keydown", move |ev| {
            let Some(k) = ev.dyn_ref::<KeyboardEvent>() else {
                return;
            };
            let (up, decade) = match k.key().as_str() {
                "ArrowUp" | "ArrowRight" => (true, false),
                "ArrowDown" | "ArrowLeft" => (false, false),
                "PageUp" => (true, true),
                "PageDown" => (false, true),
                _ => return,
            };
            ev.prevent_default();
            // From the value shown (a typed 1.234 steps to 1.3 or 1.2).
            let now = parse_field(c.f, &c.input.value()).unwrap_or_else(|_| {
                c.f.from_slider(crate::decimal::parse(&c.range.value()).unwrap_or(0.0))
            });
            let v = c.f.step(now, up, decade);
            c.input.set_value(&c.f.format(v));
            c.set_slider(v);
            c.set_error("");
            a(v);
        });
        let (c, a) = (self.clone(), apply);
        let typed = listen(&self.input, "input", move |_| {
            match parse_field(c.f, &c.input.value()) {
                Ok(v) => {
                    c.set_slider(v);
                    c.set_error("");
                    a(v);
                }
                Err(m) => {
                    let v = before.get();
                    if v.is_finite() {
                        c.set_slider(v);
                        a(v);
                    }
                    // After `apply`, which may clear the field's message.
                    c.set_error(&m);
                }
            }
        });
        [focus, change, slide, keys, typed]
    }
}

/// The dataset terms as typed in their boxes (forgiving: "60,000"); NaN where a box does
/// not hold a number (then they describe no run).
pub fn dataset_terms() -> crate::ui::link::Dataset {
    let num =
        |id: &str| crate::ui::fields::parse_number(&super::dom::value(id)).unwrap_or(f64::NAN);
    crate::ui::link::Dataset {
        n: num("ds-n"),
        b: num("ds-b"),
        e: num("ds-e"),
    }
}

/// The target ε of "What do I need?", or why it is refused.
pub(crate) fn parse_target() -> Result<f64, String> {
    crate::ui::link::parse_target(&super::dom::value("target-eps"))
}
