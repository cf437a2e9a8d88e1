//! The inside of `<sgm-rdp-calculator>` (www/widget.js defines the element).
//!
//! widget.js owns the element's life cycle (shadow root, attribute callbacks,
//! resize/theme observers, the `change` event); this module owns its contents:
//! it builds the shadow tree with `createElement`/`textContent` only, parses
//! attributes with the page's field parser, recomputes with the engine and
//! draws with the same chart code as the page. Listeners it adds to its own
//! controls are removed when [`Widget`] is freed (on `disconnectedCallback`).
//!
//! All methods take `&self` so a host's `change` listener may call back into
//! the element (set an attribute) while a render is in progress; no RefCell
//! borrow is held while JavaScript runs.

use super::canvas::{paint_canvas, MeasuredCanvas, Surface};
use super::field::{Control, Listener};
use super::state::Field;
use super::worker::from_js;
use crate::render::{self, tight, Inputs};
use crate::ui::layout::EXPORT_SIZE;
use crate::ui::session::one_percent_sentence;
use crate::ui::widget::{Answered, Computed, State};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::cell::RefCell;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlCanvasElement, HtmlElement, HtmlInputElement};

pub use crate::ui::widget::{parse_charts, Accountant, Charts, Mode, Settings, Theme};

/// The shadow tree's elements.
struct Els {
    container: HtmlElement,
    /// The CSS width the charts were last drawn at (widget.js skips a resize to it).
    drawn_width: std::cell::Cell<i32>,
    /// The tight ε's part of the headline, its number, the separator, exact RDP's part.
    pld_part: HtmlElement,
    eps_pld: Element,
    acct: Element,
    sep: HtmlElement,
    rdp_part: HtmlElement,
    rdp_label: Element,
    eps: Element,
    alpha: Element,
    context: Element,
    messages: HtmlElement,
    controls: HtmlElement,
    boxes: Vec<Control>,
    chart_a: HtmlCanvasElement,
    chart_b: HtmlCanvasElement,
    chart_training: HtmlCanvasElement,
    chart_profile: HtmlCanvasElement,
    chart_risk: HtmlCanvasElement,
    /// μ-GDP with its fit, under the risk chart.
    gdp: web_sys::HtmlElement,
    sentence: HtmlElement,
    foot: HtmlElement,
    open: HtmlElement,
    refs: HtmlElement,
    /// The " · " between the two links.
    dot: HtmlElement,
}

struct Inner {
    state: State,
    els: Els,
}

/// One `<sgm-rdp-calculator>`'s contents (created by widget.js per connection).
/// Internal to widget.js: left out of the public TypeScript declarations.
#[wasm_bindgen(skip_typescript)]
pub struct Widget {
    inner: Rc<RefCell<Inner>>,
    _listeners: Vec<Listener>,
}

fn el(
    d: &Document,
    tag: &str,
    class: &str,
    parent: &web_sys::Node,
) -> Result<HtmlElement, JsValue> {
    // The tag is known; no `instanceof` check (which fails across realms).
    let e: HtmlElement = d.create_element(tag)?.unchecked_into();
    if !class.is_empty() {
        e.set_class_name(class);
    }
    parent.append_child(&e)?;
    Ok(e)
}

fn text(
    d: &Document,
    tag: &str,
    class: &str,
    t: &str,
    parent: &web_sys::Node,
) -> Result<HtmlElement, JsValue> {
    let e = el(d, tag, class, parent)?;
    e.set_text_content(Some(t));
    Ok(e)
}

/// The widget's shadow-root stylesheet (src/web/widget.css).
#[wasm_bindgen(js_name = widgetCss, skip_typescript)]
pub fn widget_css() -> String {
    include_str!("widget.css").to_string()
}

#[wasm_bindgen]
impl Widget {
    /// Build the contents in `root` (emptied first); `request` is called when
    /// the reader changes a control, to schedule a render.
    #[wasm_bindgen(constructor)]
    pub fn new(root: web_sys::ShadowRoot, request: js_sys::Function) -> Result<Widget, JsError> {
        // Elements are created by this module's own window's document, even when the
        // widget sits in another document (moved into an iframe): their wrappers then
        // belong to this realm, so the canvas contexts pass plotters' `instanceof`
        // checks; appending adopts them into the shadow root's document.
        let d = web_sys::window()
            .and_then(|w| w.document())
            .or_else(|| root.owner_document())
            .ok_or_else(|| JsError::new("sgm-rdp-calculator: no document"))?;
        let els = build(&d, &root).map_err(|_| JsError::new("sgm-rdp-calculator: cannot build"))?;
        let inner = Rc::new(RefCell::new(Inner {
            state: State::default(),
            els,
        }));
        let listeners = wire(&inner, &request);
        Ok(Widget {
            inner,
            _listeners: listeners,
        })
    }

    /// An attribute changed (`null`: removed); the next `render` shows it.
    pub fn attr(&self, name: &str, value: Option<String>) {
        self.inner
            .borrow_mut()
            .state
            .settings
            .set(name, value.as_deref());
    }

    /// The host page's colour scheme (used when `theme` is `auto`).
    #[wasm_bindgen(js_name = setHostDark)]
    pub fn set_host_dark(&self, dark: bool) {
        self.inner.borrow_mut().state.host_dark = dark;
    }

    /// Whether the widget is far from the viewport (its charts wait until it is near).
    #[wasm_bindgen(js_name = setOffscreen)]
    pub fn set_offscreen(&self, off: bool) {
        self.inner.borrow_mut().state.offscreen = off;
    }

    /// Recompute if the settings changed and redraw at the current size.
    /// Returns the `change` event's detail when it recomputed, else `undefined`.
    pub fn render(&self) -> JsValue {
        let mut i = self.inner.borrow_mut();
        let fresh = match i.state.compute() {
            Computed::Fresh => true,
            Computed::Same => false,
            // Small σ: the model's RDP part comes from the page's worker (widget.js asks
            // `heavyRequest`); until then the last numbers stay, marked as computing.
            Computed::Waiting => {
                i.els
                    .context
                    .set_text_content(Some("computing exact RDP for small σ…"));
                return JsValue::UNDEFINED;
            }
            Computed::Refused(msgs) => {
                set_lines(&i.els.messages, &msgs, &i.state.settings.notes());
                return JsValue::UNDEFINED;
            }
        };
        show(&i);
        if fresh {
            detail(&i.state)
        } else {
            JsValue::UNDEFINED
        }
    }

    /// The current values (the last `change` detail), or `undefined` before the first render.
    pub fn value(&self) -> JsValue {
        detail(&self.inner.borrow().state)
    }

    /// The worker request for the model at small σ, `{q, sigma, steps, delta,
    /// conversion, omega}`, when the inputs shown need one; else `undefined`.
    #[wasm_bindgen(js_name = heavyRequest)]
    pub fn heavy_request(&self) -> JsValue {
        match self.inner.borrow().state.heavy_request() {
            Some(f) => super::worker::object(&f).into(),
            None => JsValue::UNDEFINED,
        }
    }

    /// The worker's answer to the last `heavyRequest` (widget.js drops older ones):
    /// store it and render; returns the `change` detail like `render`.
    #[wasm_bindgen(js_name = heavyAnswer)]
    pub fn heavy_answer(&self, data: JsValue) -> JsValue {
        {
            let mut i = self.inner.borrow_mut();
            if let Err(msgs) = i.state.heavy_answer(&from_js(&data)) {
                set_lines(&i.els.messages, &msgs, &i.state.settings.notes());
                return JsValue::UNDEFINED;
            }
        }
        self.render()
    }

    /// Chart `which` as an SVG document (`State::draw_export` on the SVG surface), or (format
    /// "csv") the tight charts' data: widget.js `exportChart`.
    #[wasm_bindgen(js_name = exportChart)]
    pub fn export(&self, which: &str, format: &str) -> Option<String> {
        let s = &self.inner.borrow().state;
        if format == "csv" {
            return s.export_csv();
        }
        let mut out = String::new();
        let svg = Surface::svg(SVGBackend::with_string(&mut out, EXPORT_SIZE))?;
        s.draw_export(which, &svg.into_drawing_area())
            .then_some(())?;
        Some(out)
    }

    /// The CSS width (px) the RDP charts were last drawn at, 0 if none was drawn.
    #[wasm_bindgen(js_name = drawnWidth)]
    pub fn drawn_width(&self) -> i32 {
        self.inner.borrow().els.drawn_width.get()
    }

    /// Whether the widget needs the tight accountant (headline or a chart).
    #[wasm_bindgen(js_name = wantsTight)]
    pub fn wants_tight(&self) -> bool {
        self.inner.borrow().state.settings.wants_tight()
    }

    /// Whether the widget shows tight charts, is near the viewport, and has none for the
    /// values shown (widget.js then asks the worker for them).
    #[wasm_bindgen(js_name = needsTightCharts)]
    pub fn needs_tight_charts(&self) -> bool {
        self.inner.borrow().state.needs_tight_charts()
    }

    /// The worker request for the values shown, `{q, sigma, steps, delta, charts}`
    /// (`undefined` before the first render); `charts` is false while the widget is far from
    /// the viewport.
    #[wasm_bindgen(js_name = tightRequest)]
    pub fn tight_request(&self) -> JsValue {
        match self.inner.borrow().state.tight_request() {
            Some(f) => super::worker::object(&f).into(),
            None => JsValue::UNDEFINED,
        }
    }

    /// The worker's answer for the last `tightRequest` (widget.js drops older ones):
    /// `{kind: "headline", epsilon, epsilonLower}`, `{kind: "error", message}` (also
    /// used by widget.js when there is no worker), `{kind: "charts", …}` or
    /// `{kind: "charts-error", message}`. Returns the `change` detail once the headline
    /// is settled (a number or an error), else `undefined`.
    pub fn tight(&self, data: JsValue) -> JsValue {
        let i = &mut *self.inner.borrow_mut();
        let settled = match i.state.tight_answer(&from_js(&data)) {
            Answered::Headline => true,
            Answered::Charts => false,
            Answered::ChartsError(msg) => {
                web_sys::console::warn_1(
                    &format!("sgm-rdp-calculator: tight charts: {msg}").into(),
                );
                false
            }
            Answered::Nothing => return JsValue::UNDEFINED,
        };
        // Redraw only what the answer changes (the headline, or the tight charts).
        if settled {
            show_text(i);
            detail(&i.state)
        } else {
            show_tight_charts(i);
            JsValue::UNDEFINED
        }
    }
}

/// The method's paper (the widget's reference link without a calculator page).
const REFERENCE: &str = "https://arxiv.org/abs/1908.10530";

/// The calculator link for the values shown (the page's URL format).
/// The full calculator's link with the widget's values, and its References section: the
/// `calculator` URL with the link's parameters set through the URL API (the base's own query
/// parameters kept, its fragment kept on the first and replaced by `#references` on the
/// second; a base "calc?a=1#frag" used to lose a=1 and give "…#frag#references").
fn calculator_link(base: &str, i: &Inputs, acct: Accountant) -> Option<(String, String)> {
    // Resolved against the document (the attribute may be relative); http(s) only.
    let doc_base = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.base_uri().ok().flatten())
        .unwrap_or_default();
    let u = web_sys::Url::new_with_base(base, &doc_base).ok()?;
    if !matches!(u.protocol().as_str(), "http:" | "https:") {
        return None;
    }
    let link = crate::ui::link::Link {
        inputs: *i,
        acct: if acct == Accountant::Rdp {
            crate::ui::link::Acct::Rdp
        } else {
            crate::ui::link::Acct::Pld
        },
        ..Default::default()
    };
    let params = u.search_params();
    for pair in crate::ui::link::encode(&link).split('&') {
        if let Some((k, v)) = pair.split_once('=') {
            params.set(k, v);
        }
    }
    let open = u.href();
    u.set_hash("references");
    Some((open, u.href()))
}

/// The `change` detail ([`State::detail`]) as a JS object, `undefined` before a model.
fn detail(s: &State) -> JsValue {
    match s.detail() {
        Some(f) => super::worker::object(&f).into(),
        None => JsValue::UNDEFINED,
    }
}

fn build(d: &Document, root: &web_sys::ShadowRoot) -> Result<Els, JsValue> {
    root.set_text_content(None);
    let container = el(d, "div", "w", root)?;
    container.set_attribute("part", "container")?;
    let head = el(d, "div", "head", &container)?;
    let pld_part = el(d, "span", "pld", &head)?;
    text(d, "span", "", "ε ≤ ", &pld_part)?;
    // Only the numbers are announced (not the whole headline on every slider step).
    let eps_pld = text(d, "strong", "eps-pld", "…", &pld_part)?;
    eps_pld.set_attribute("aria-live", "polite")?;
    let acct = text(d, "small", "acct", " tight (PLD)", &pld_part)?;
    let sep = text(d, "span", "sep", " · ", &head)?;
    let rdp_part = el(d, "span", "rdp", &head)?;
    let rdp_label = text(d, "span", "", "ε = ", &rdp_part)?;
    let eps = text(d, "strong", "eps", "…", &rdp_part)?;
    eps.set_attribute("aria-live", "polite")?;
    text(d, "span", "", " at α = ", &rdp_part)?;
    let alpha = text(d, "span", "alpha", "…", &rdp_part)?;
    let context = text(d, "div", "ctx", "", &container)?;
    let messages = el(d, "div", "msg", &container)?;
    messages.set_attribute("role", "alert")?;
    messages.set_hidden(true);
    let controls = el(d, "div", "controls", &container)?;
    controls.set_hidden(true);
    let mut boxes = Vec::new();
    for f in Field::ALL {
        let row = el(d, "label", "field", &controls)?;
        text(d, "span", "name", f.label(), &row)?;
        let range: HtmlInputElement = el(d, "input", "", &row)?.unchecked_into();
        range.set_type("range");
        range.set_step("0.001");
        range.set_attribute("aria-label", &format!("{} (log scale)", f.label()))?;
        let input: HtmlInputElement = el(d, "input", "", &row)?.unchecked_into();
        input.set_type("text");
        input.set_attribute("inputmode", "decimal")?;
        input.set_attribute("aria-label", f.label())?;
        input.set_attribute("spellcheck", "false")?;
        let err = el(d, "span", "ferr", &row)?.unchecked_into();
        boxes.push(Control::new(f, range, input, err));
    }
    let chart_a: HtmlCanvasElement = el(d, "canvas", "chart", &container)?.unchecked_into();
    chart_a.set_attribute("role", "img")?;
    let chart_b: HtmlCanvasElement = el(d, "canvas", "chart", &container)?.unchecked_into();
    chart_b.set_attribute("role", "img")?;
    let tight_chart = |label: &str| -> Result<HtmlCanvasElement, JsValue> {
        let c: HtmlCanvasElement = el(d, "canvas", "chart", &container)?.unchecked_into();
        c.set_attribute("role", "img")?;
        c.set_attribute("aria-label", label)?;
        c.set_hidden(true);
        Ok(c)
    };
    let chart_training = tight_chart("ε over training")?;
    let chart_profile = tight_chart("privacy profile δ(ε)")?;
    let chart_risk = tight_chart("membership-inference risk: TPR bound against FPR")?;
    let gdp: web_sys::HtmlElement = el(d, "small", "gdp", &container)?.unchecked_into();
    gdp.set_hidden(true);
    let sentence = el(d, "p", "sentence", &container)?;
    let foot = el(d, "div", "foot", &container)?;
    // The method, named (the calculator's References section when there is a calculator).
    let refs = text(
        d,
        "a",
        "",
        "method: Mironov–Talwar–Zhang; tight ε: PLD",
        &foot,
    )?;
    refs.set_attribute("href", REFERENCE)?;
    refs.set_attribute(
        "title",
        "Mironov, Talwar, Zhang: Rényi Differential Privacy of the Sampled Gaussian Mechanism (arXiv:1908.10530); the tight ε from privacy-loss distributions (Doroshenko et al., PETS 2022)",
    )?;
    let dot = text(d, "span", "", " · ", &foot)?;
    let open = text(d, "a", "", "open in the full calculator", &foot)?;
    for a in [&refs, &open] {
        a.set_attribute("target", "_blank")?;
        a.set_attribute("rel", "noopener")?;
    }
    Ok(Els {
        container,
        drawn_width: std::cell::Cell::new(0),
        pld_part,
        eps_pld: eps_pld.into(),
        acct: acct.into(),
        sep,
        rdp_part,
        rdp_label: rdp_label.into(),
        eps: eps.into(),
        alpha: alpha.into(),
        context: context.into(),
        messages,
        controls,
        boxes,
        chart_a,
        chart_b,
        chart_training,
        chart_profile,
        chart_risk,
        gdp,
        sentence,
        foot,
        open,
        refs,
        dot,
    })
}

/// Listeners on the full mode's sliders and boxes (closures hold a `Weak`, so
/// dropping the [`Widget`] frees everything).
fn wire(inner: &Rc<RefCell<Inner>>, request: &js_sys::Function) -> Vec<Listener> {
    let boxes: Vec<Control> = inner.borrow().els.boxes.clone();
    boxes
        .iter()
        .flat_map(|c| {
            let (w, req, f) = (Rc::downgrade(inner), request.clone(), c.f);
            c.wire(Rc::new(move |v| update(&w, f, v, &req)))
        })
        .collect()
}

fn update(w: &Weak<RefCell<Inner>>, f: Field, v: f64, request: &js_sys::Function) {
    let Some(inner) = w.upgrade() else { return };
    f.set(&mut inner.borrow_mut().state.settings.inputs, v);
    // Borrow released: JS runs next.
    let _ = request.call0(&JsValue::NULL);
}

fn set_lines(target: &HtmlElement, lines: &[String], notes: &[String]) {
    target.set_text_content(None);
    target.set_hidden(lines.is_empty() && notes.is_empty());
    let Some(d) = target.owner_document() else {
        return;
    };
    for (l, class) in (lines.iter().map(|l| (l, ""))).chain(notes.iter().map(|l| (l, "note"))) {
        let _ = text(&d, "div", class, l, target);
    }
}

/// Put the model into the shadow tree and draw the visible charts.
fn show(i: &Inner) {
    let Some(m) = &i.state.model else { return };
    show_text(i);
    let e = &i.els;
    let s = &i.state.settings;
    let dark = i.state.dark();
    let _ = e
        .container
        .set_attribute("data-theme", if dark { "dark" } else { "light" });
    if i.state.offscreen {
        // Drawn when it scrolls near (widget.js renders it again then).
        e.drawn_width.set(0);
        return;
    }
    // The charts the scheme has (the messages name the others).
    let c = s.shown_charts();
    e.chart_a.set_hidden(!c.epsilon);
    e.chart_b.set_hidden(!c.bound);
    let _ = e.chart_a.set_attribute("aria-label", &render::summary_a(m));
    let _ = e.chart_b.set_attribute("aria-label", &render::summary_b(m));
    let mut drawn = 0;
    if c.epsilon {
        drawn = draw_chart(
            &e.chart_a,
            dark,
            "widget chart A",
            render::legend_rows_a(m),
            |root, th| render::draw_eps_vs_alpha(root, m, th).map(|_| ()),
        );
    }
    if c.bound {
        drawn = draw_chart(
            &e.chart_b,
            dark,
            "widget chart B",
            render::legend_rows_b(m, false),
            |root, th| render::draw_bound_vs_exact(root, m, th, false),
        );
    }
    e.drawn_width.set(drawn);
    show_tight_charts(i);
}

/// The texts: headline, context, messages, sentence, controls, link.
fn show_text(i: &Inner) {
    let Some(m) = &i.state.model else { return };
    let e = &i.els;
    let s = &i.state.settings;
    let inp = &m.inputs;
    let w = crate::ui::widget::texts(s, m, &i.state.tight);
    set_lines(&e.messages, &w.messages, &w.notes);
    e.pld_part.set_hidden(!w.pld);
    e.rdp_part.set_hidden(!w.rdp);
    e.sep.set_hidden(!(w.pld && w.rdp));
    e.rdp_label.set_text_content(Some(w.rdp_label));
    e.eps.set_text_content(Some(&w.eps));
    e.alpha.set_text_content(Some(&w.alpha));
    e.eps_pld.set_text_content(Some(&w.eps_pld));
    e.acct.set_text_content(Some(&w.acct));
    let _ = e.eps_pld.set_attribute("title", &w.eps_pld_title);
    let _ = e.pld_part.class_list().toggle_with_force("stale", w.stale);
    e.context.set_text_content(Some(&w.context));
    e.controls.set_hidden(w.sentence.is_none());
    e.sentence.set_hidden(w.sentence.is_none());
    if let Some(sentence) = &w.sentence {
        e.sentence.set_text_content(Some(sentence));
        for c in &e.boxes {
            c.show(c.f.get(inp));
        }
    }
    match s
        .calculator
        .as_deref()
        .and_then(|b| calculator_link(b, inp, s.accountant))
    {
        Some((href, refs)) => {
            let _ = e.open.set_attribute("href", &href);
            // The calculator's own References section, with the values.
            let _ = e.refs.set_attribute("href", &refs);
            e.open.set_hidden(false);
            e.dot.set_hidden(false);
            e.foot.set_hidden(false);
        }
        None => {
            let _ = e.refs.set_attribute("href", REFERENCE);
            e.open.set_hidden(true);
            e.dot.set_hidden(true);
            e.foot.set_hidden(false);
        }
    }
}

/// The tight charts (ε over training, privacy profile, attack risk) from the worker's
/// last answer; marked stale while an answer for the current inputs is on its way.
fn show_tight_charts(i: &Inner) {
    let Some(m) = &i.state.model else { return };
    let (e, t, inp) = (&i.els, &i.state.tight, &m.inputs);
    let c = i.state.settings.shown_charts();
    let dark = i.state.dark();
    let labels = &i.state.settings.scheme().chart_labels();
    let current = t.charts_inputs.as_ref() == Some(inp);
    let refused = t.charts.is_none() && (current || t.error.is_some()); // none of another run
    for (canvas, on) in [
        (&e.chart_training, c.training),
        (&e.chart_profile, c.profile),
        (&e.chart_risk, c.risk),
    ] {
        canvas.set_hidden(!on || refused);
        let _ = canvas.class_list().toggle_with_force("stale", !current);
    }
    // μ-GDP under the risk chart, for the inputs shown only.
    let gdp = t
        .gdp
        .as_ref()
        .filter(|(i, _)| i == inp)
        .map(|(_, s)| s.as_str());
    e.gdp.set_hidden(!(c.risk && gdp.is_some()));
    e.gdp.set_text_content(gdp);
    let Some(tc) = &t.charts else { return };
    if c.training {
        draw_chart(&e.chart_training, dark, "widget training", 3, |root, th| {
            tight::draw_training(root, &tc.training, None, None, labels, th).map(|_| ())
        });
    }
    if c.profile {
        draw_chart(&e.chart_profile, dark, "widget profile", 3, |root, th| {
            tight::draw_profile(root, &tc.profile, inp.delta, labels, th).map(|_| ())
        });
    }
    if c.risk {
        draw_chart(&e.chart_risk, dark, "widget risk", 2, |root, th| {
            tight::draw_risk(root, &tc.risk, &[], labels, th).map(|_| ())
        });
        let s = one_percent_sentence(&tc.risk_fpr, &i.state.settings.scheme());
        let _ = e
            .chart_risk
            .set_attribute("aria-label", &format!("membership-inference risk: {s}"));
    }
}

/// Height follows the width (the widget sizes to its container); a narrow
/// chart also gets the height of its legend strip (`rows` entries).
fn draw_chart<E: std::fmt::Display>(
    canvas: &HtmlCanvasElement,
    dark: bool,
    name: &'static str,
    rows: usize,
    f: impl FnOnce(&DrawingArea<MeasuredCanvas, Shift>, &render::Theme) -> Result<(), E>,
) -> i32 {
    let px = canvas.client_width();
    if px <= 0 {
        return 0; // not laid out (hidden or detached)
    }
    let w = px as f64;
    // Narrow: the legend moves under the plot (see `paint`); make room for it.
    let legend = if w < crate::ui::layout::NARROW {
        render::Theme::light(1.0).legend_strip(rows) as f64
    } else {
        0.0
    };
    let h = (w * 0.56).clamp(180.0, 420.0) + legend;
    let _ = canvas.style().set_property("height", &format!("{h:.0}px"));
    paint_canvas(canvas, dark, name, f);
    px
}
