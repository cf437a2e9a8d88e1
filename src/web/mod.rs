//! Thin wasm-bindgen/DOM glue for the calculator page (www/index.html).
//!
//! One [`App`] state; `input` events update it and request one redraw per
//! animation frame; `change` events write the URL. Errors from the engine are
//! shown next to the field (as text, never HTML) and the last good state stays.

mod canvas;
mod dom;
mod field;
mod readout;
mod state;
mod tight;
pub mod widget;
mod worker;

use crate::engine::Adjacency;
use crate::render::{self, Inputs, Model, Theme};
pub(crate) use crate::ui::layout::{EXPORT_PNG_SCALE, EXPORT_SIZE};
use crate::ui::link::{Acct, Batching};
use crate::ui::protocol::Value;
use crate::ui::session::{export_choice, export_status, is_heavy, Effect, Page, Timer};
use canvas::{draw, Surface};
use dom::*;
use plotters::coord::Shift;
use plotters::prelude::*;
pub use state::{parse_field, Field};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{HtmlCanvasElement, HtmlElement, HtmlInputElement};

#[wasm_bindgen(start)]
pub fn start() {
    #[cfg(feature = "console_error_panic_hook")]
    console_error_panic_hook::set_once();
    // Nothing else: the page calls `mountPage` (www/boot.js); widgets and the
    // JS API only need the module, so a host page's own ids are never touched.
}

/// Attach the calculator to www/index.html's elements (called by www/boot.js).
#[wasm_bindgen(js_name = mountPage, skip_typescript)]
pub fn mount_page() {
    if doc().and_then(|d| d.get_element_by_id("chart-a")).is_some() {
        mount();
    }
}

/// Attach the calculator to the page's elements (once; later calls redraw).
pub fn mount() {
    let existing = APP.with(|a| a.borrow().clone());
    match existing {
        Some(app) => request_frame(&app),
        None => App::mount(),
    }
}

/// The page: its model ([`Page`]: every choice, and what was asked and answered for
/// which inputs) and what only the DOM side keeps (the drawn model, timers).
pub struct App {
    pub page: Page,
    pub model: Option<Model>,
    compare_timer: Option<i32>,
    url_timer: Option<i32>,
    frame_pending: bool,
    /// Charts C and D's look apart from their data at their last draw (see [`backdrop_key`]).
    backdrop: Option<BackdropKey>,
    /// The pending timers of the page model ([`Timer`]: post, updating, computing).
    timers: [Option<i32>; 3],
    /// The four field controls, found once at mount.
    controls: Vec<field::Control>,
    /// What the charts read out (shared with their listeners).
    readouts: readout::Shared,
    /// The page's worker (None: the browser cannot start one).
    worker: Option<web_sys::Worker>,
    /// Milliseconds of the last recompute + redraw (read by the e2e benchmark).
    pub last_frame_ms: f64,
}

type Shared = Rc<RefCell<App>>;

thread_local! {
    static APP: RefCell<Option<Shared>> = const { RefCell::new(None) };
}

/// Cost of the last recompute + redraw in ms (for the browser benchmark).
#[wasm_bindgen(js_name = lastFrameMs, skip_typescript)]
pub fn last_frame_ms() -> f64 {
    APP.with(|a| {
        a.borrow()
            .as_ref()
            .map(|s| s.borrow().last_frame_ms)
            .unwrap_or(-1.0)
    })
}

impl App {
    fn mount() {
        let app = Rc::new(RefCell::new(App {
            page: Page::default(),
            model: None,
            compare_timer: None,
            url_timer: None,
            frame_pending: false,
            backdrop: None,
            timers: [None, None, None],
            controls: Field::ALL
                .into_iter()
                .filter_map(field::Control::by_id)
                .collect(),
            readouts: Default::default(),
            worker: None,
            last_frame_ms: 0.0,
        }));
        APP.with(|a| *a.borrow_mut() = Some(app.clone()));
        let (link, errors) = state::read_url();
        app.borrow_mut().page = Page::new(link);
        let mut fx = Vec::new();
        {
            let mut a = app.borrow_mut();
            let p = &mut a.page;
            fx.extend(p.set_acct(link.acct));
            fx.extend(p.set_batching(link.batch));
            fx.extend(p.set_group(link.group));
            fx.extend(p.set_adjacency(link.adjacency));
            fx.extend(p.set_max_batch(link.max_batch));
            // The boxes of "What do I need?" hold the link's target or their default.
            p.link.target = field::parse_target().ok();
        }
        run(&app, fx);
        if link.embed {
            watch_height();
        }
        let inputs = app.borrow().page.inputs();
        sync_inputs(&app, &inputs);
        state::show_link_errors(errors);
        wire(&app);
        let w = worker::start(|ev: web_sys::MessageEvent| on_worker(ev.data()));
        tight::start(w.is_some());
        app.borrow_mut().worker = w;
        request_frame(&app);
    }
}

/// In iframe mode, post the height whenever the page's size changes (not only on a redraw).
fn watch_height() {
    let cb = Closure::<dyn FnMut(JsValue)>::new(|_: JsValue| post_height());
    if let (Ok(ro), Some(root)) = (
        web_sys::ResizeObserver::new(cb.as_ref().unchecked_ref()),
        doc().and_then(|d| d.document_element()),
    ) {
        ro.observe(&root);
    }
    // Page lifetime: the observer and its callback live as long as the page.
    cb.forget();
}

/// Put the state's values into every box and slider.
fn sync_inputs(app: &Shared, i: &Inputs) {
    for c in &app.borrow().controls {
        c.show(c.f.get(i));
    }
    if let Some(sel) = by_id::<web_sys::HtmlSelectElement>("conversion") {
        sel.set_value(i.conversion.name());
    }
}

fn wire(app: &Shared) {
    for f in Field::ALL {
        // The shared control: slider, arrow keys and box → state (for the page's lifetime).
        let control = app.borrow().controls.iter().find(|c| c.f == f).cloned();
        if let Some(c) = control {
            let a = app.clone();
            std::mem::forget(c.wire(Rc::new(move |v| apply(&a, f, v))));
        }
        for id in [f.id().to_string(), format!("{}-range", f.id())] {
            on_app(app, &id, "change", move |a| {
                state::write_url(&a.borrow().page)
            });
        }
    }
    on_app(app, "accountant", "change", move |a| {
        let rdp = by_id::<web_sys::HtmlSelectElement>("accountant")
            .is_some_and(|s| s.value() == Acct::Rdp.name());
        let fx = a
            .borrow_mut()
            .page
            .set_acct(if rdp { Acct::Rdp } else { Acct::Pld });
        chosen(a, fx);
    });
    on_app(app, "batching", "change", move |a| {
        let b = by_id::<web_sys::HtmlSelectElement>("batching")
            .and_then(|s| Batching::from_name(&s.value()))
            .unwrap_or_default();
        let mut fx = a.borrow_mut().page.set_batching(b);
        // Fixed-size batches are accounted under replace-one adjacency: choosing them chooses it.
        if b == Batching::FixedSize {
            fx.extend(a.borrow_mut().page.set_adjacency(Adjacency::ReplaceOne));
        }
        chosen(a, fx);
    });
    on_app(app, "adjacency", "change", move |a| {
        let adj = by_id::<web_sys::HtmlSelectElement>("adjacency")
            .and_then(|s| Adjacency::parse(&s.value()))
            .unwrap_or_default();
        let fx = a.borrow_mut().page.set_adjacency(adj);
        chosen(a, fx);
    });
    // Examples per user: 1 … 256, committed when valid (else the last valid one stays).
    let a = app.clone();
    on(
        "group-size",
        "change",
        move |_| match crate::ui::link::parse_group(&value("group-size")) {
            Ok(k) => {
                let fx = a.borrow_mut().page.set_group(k);
                chosen(&a, fx);
            }
            Err(m) => {
                let kept = a.borrow().page.link.group.max(1);
                set_value("group-size", &kept.to_string());
                set_text("group-size-error", &format!("{m}; keeping {kept}"));
            }
        },
    );
    // Truncated Poisson's largest batch (≥ 1, or empty: the default), as examples per user.
    on_app(app, "max-batch", "change", move |a| {
        let t = value("max-batch");
        let parsed = if t.trim().is_empty() {
            Ok(None)
        } else {
            crate::ui::link::parse_max_batch(&t).map(Some)
        };
        match parsed {
            Ok(m) => {
                let fx = a.borrow_mut().page.set_max_batch(m);
                chosen(a, fx);
            }
            Err(m) => {
                let kept = a.borrow().page.link.max_batch;
                set_value(
                    "max-batch",
                    &kept.map(|m| m.to_string()).unwrap_or_default(),
                );
                set_text(
                    "max-batch-error",
                    &format!(
                        "{m}; keeping {}",
                        kept.map_or("the default".to_string(), |m| m.to_string())
                    ),
                );
            }
        }
    });
    on_app(app, "conversion", "change", move |a| {
        let v = by_id::<web_sys::HtmlSelectElement>("conversion")
            .map(|s| s.value())
            .unwrap_or_default();
        // The menu offers only the two names; anything else keeps the conversion.
        if let Ok(c) = v.parse() {
            a.borrow_mut().page.link.inputs.conversion = c;
        }
        state::write_url(&a.borrow().page);
        request_frame(a);
    });
    on_app(app, "preset", "change", move |a| {
        let v = by_id::<web_sys::HtmlSelectElement>("preset")
            .map(|s| s.value())
            .unwrap_or_default();
        let conversion = a.borrow().page.link.inputs.conversion;
        if let Some(p) = state::preset(&v, conversion) {
            a.borrow_mut().page.set_inputs(p);
            sync_inputs(a, &p);
            state::write_url(&a.borrow().page);
            request_frame(a);
        }
    });
    on_app(app, "overlays", "change", request_frame);
    for id in ["cb-sigma", "cb-eps"] {
        on_app(app, id, "input", move |a| {
            // Typing names a bad value or clears the message (a redraw alone keeps a link's).
            set_text("cb-error", draw_chart_d(prefers_dark()).err().unwrap_or(""));
            debounce(
                a,
                |a| &mut a.url_timer,
                300,
                |a| state::write_url(&a.borrow().page),
            );
        });
    }
    let a = app.clone();
    on(
        "omega",
        "input",
        move |_| match crate::ui::fields::parse_omega(&value("omega")) {
            Ok(w) => {
                set_error("omega", "");
                a.borrow_mut().page.link.inputs.omega = w;
                request_frame(&a);
            }
            Err(m) => set_error("omega", &m),
        },
    );
    // Dataset terms are live (q = B/N, T = ⌈E·N/B⌉); invalid terms restore q and T from
    // before the edit, so a valid prefix ("7000" of "70000" with N = 60000) never stays.
    let before = Rc::new(std::cell::Cell::new(None));
    let (a, b) = (app.clone(), before.clone());
    on("dataset", "focusin", move |_| {
        let i = a.borrow().page.inputs();
        b.set(Some((i.q, i.steps)));
    });
    on_app(app, "dataset", "input", move |a| {
        apply_dataset(a, before.get())
    });
    wire_inverse(app);
    wire_exports(app);
    readout::wire(&app.borrow().readouts);
    let a = app.clone();
    on_window("resize", move |_| request_frame(&a));
}

/// q = B/N and T = ⌈E·N/B⌉ from the dataset terms (`Page::apply_dataset`).
fn apply_dataset(a: &Shared, before: Option<(f64, u64)>) {
    let (fx, qt) = a
        .borrow_mut()
        .page
        .apply_dataset(field::dataset_terms(), before);
    run(a, fx);
    if qt.is_some() {
        let i = a.borrow().page.inputs();
        sync_inputs(a, &i);
        request_frame(a);
    }
}

fn apply(app: &Shared, f: Field, v: f64) {
    set_error(f.id(), "");
    let mut i = app.borrow().page.inputs();
    f.set(&mut i, v);
    app.borrow_mut().page.set_inputs(i);
    request_frame(app);
}

/// A control of the run's batching, users or accountant changed: its writes, the link,
/// the tight accountant asked again, a redraw.
fn chosen(a: &Shared, fx: Vec<Effect>) {
    run(a, fx);
    state::write_url(&a.borrow().page);
    let (i, eps) = {
        let b = a.borrow();
        (
            b.page.inputs(),
            b.model.as_ref().map_or(f64::NAN, |m| m.opt.value),
        )
    };
    let fx = a.borrow_mut().page.request(i, eps);
    run(a, fx);
    request_frame(a);
}

/// A page-lifetime listener that gets the app (the event itself unused).
fn on_app(app: &Shared, id: &str, event: &str, f: impl Fn(&Shared) + 'static) {
    let a = app.clone();
    on(id, event, move |_| f(&a));
}

/// Carry out the page model's effects (no borrow held: an effect may update the app again).
fn run(app: &Shared, fx: Vec<Effect>) {
    for e in fx {
        match e {
            Effect::Op(op) => tight::apply_op(op),
            Effect::Post(fields, posting) => {
                let ok = worker::post_fields(app.borrow().worker.as_ref(), &fields);
                match posting {
                    Some(p) if ok => {
                        if let Some(id) = p.computing {
                            set_text(id, "computing…");
                        }
                    }
                    Some(p) => set_text(p.failed, p.message),
                    None => {}
                }
            }
            Effect::Start(timer, ms) => {
                let k = timer as usize;
                if let (Some(w), Some(id)) = (window(), app.borrow_mut().timers[k].take()) {
                    w.clear_timeout_with_handle(id);
                }
                let a = app.clone();
                let id = after(ms, move || {
                    a.borrow_mut().timers[k] = None;
                    let fx = match timer {
                        Timer::Post => a.borrow_mut().page.post(),
                        Timer::Updating => a.borrow_mut().page.updating_due(),
                        Timer::Computing => a.borrow_mut().page.computing_due(),
                    };
                    run(&a, fx);
                });
                app.borrow_mut().timers[k] = id;
            }
            Effect::Stale(on) => tight::mark_charts(on),
            Effect::ClearChart(n) => tight::clear_chart(&app.borrow().readouts, n),
            Effect::ClearReadouts => tight::clear_readouts(&app.borrow().readouts),
            Effect::Redraw => redraw_tight(app),
            Effect::Snippets(s) => tight::fill_snippets(&s),
            Effect::Frame => request_frame(app),
            Effect::ChartC => draw_chart_c(&app.borrow(), prefers_dark()),
        }
    }
}

/// The tight charts drawn from the model, then their texts.
fn redraw_tight(app: &Shared) {
    let a = app.borrow();
    tight::redraw(&a.page, &a.readouts);
    drop(a);
    let fx = app.borrow().page.chart_texts();
    run(app, fx);
}

fn clear_inverse(a: &Shared) {
    act(a, Page::clear_inverse);
}

/// The page model's answer to an event, carried out.
fn act(a: &Shared, f: impl FnOnce(&mut Page) -> Vec<Effect>) {
    let fx = f(&mut a.borrow_mut().page);
    run(a, fx);
}

fn wire_inverse(app: &Shared) {
    // A new target makes the answers stale (a valid one goes to the chart and link); Enter solves.
    on_app(app, "target-eps", "input", move |a| {
        clear_inverse(a);
        let target = field::parse_target().ok();
        let fx = a.borrow_mut().page.set_target(target);
        run(a, fx);
        if target.is_some() {
            state::write_url(&a.borrow().page);
        }
    });
    on("target-eps", "keydown", move |e| {
        if e.dyn_ref::<web_sys::KeyboardEvent>()
            .is_some_and(|k| k.key() == "Enter")
        {
            for id in ["solve-sigma", "solve-steps"] {
                if let Some(b) = by_id::<HtmlElement>(id) {
                    b.click();
                }
            }
        }
    });
    // Both accountants solve in the worker; the answer arrives through the page model.
    for which in ["sigma", "steps"] {
        on_app(app, &format!("solve-{which}"), "click", move |a| {
            match field::parse_target() {
                Ok(t) => {
                    // An input change before the answer arrives cancels it.
                    act(a, |p| p.calibrate(which, vec![("target", Value::Num(t))]));
                }
                Err(m) => {
                    clear_inverse(a);
                    set_text("target-error", &m);
                }
            }
        });
    }
    on_app(app, "check-run", "click", move |a| {
        let (l, s) = (value("check-library"), value("check-snippet"));
        act(a, |p| p.check(&l, &s))
    });
    for id in ["noise", "strategy", "participation"] {
        on_app(app, id, "change", move |a| {
            let (n, s, j) = (value("noise"), value("strategy"), value("participation"));
            act(a, |p| p.noise(&n, &s, &j))
        });
    }
    on_app(app, "audit-run", "click", move |a| {
        let lower = by_id::<HtmlInputElement>("audit-lower").is_some_and(|c| c.checked());
        act(a, |p| p.audit(&value("audit-scores"), lower));
    });
    // The risk target travels in the link as typed (a bad rate is left out of it).
    for id in ["risk-tpr", "risk-fpr"] {
        on_app(app, id, "input", move |a| {
            state::write_url(&a.borrow().page)
        });
    }
    // An attack-risk target (TPR ≤ a at FPR b), solved in the worker; bad rates are named.
    for which in ["risk-sigma", "risk-steps"] {
        on_app(app, &format!("solve-{which}"), "click", move |a| {
            let rates = crate::ui::page::parse_rate(&value("risk-tpr"), "TPR").and_then(|t| {
                crate::ui::page::parse_rate(&value("risk-fpr"), "FPR").map(|f| (t, f))
            });
            match rates {
                Ok((tpr, fpr)) => {
                    set_text("risk-error", "");
                    let t = vec![("target", Value::Num(tpr)), ("fpr", Value::Num(fpr))];
                    act(a, |p| p.calibrate(which, t));
                }
                Err(m) => {
                    set_text(&format!("{which}-answer"), "");
                    set_text("risk-error", &m);
                }
            }
        });
    }
    for id in ["risk-tpr", "risk-fpr"] {
        on_app(app, id, "input", move |a| {
            clear_inverse(a);
            set_text("risk-error", "");
        });
    }
    for which in ["sigma", "steps"] {
        on_app(app, &format!("apply-{which}"), "click", move |a| {
            let applied = a.borrow().page.applied(which);
            if let Some(i) = applied {
                a.borrow_mut().page.set_inputs(i);
                sync_inputs(a, &i);
                state::write_url(&a.borrow().page);
                request_frame(a);
            }
        });
    }
}

fn wire_exports(app: &Shared) {
    on_app(app, "export-csv", "click", move |a| {
        let app = a.borrow();
        if let Some(m) = &app.model {
            let p = &app.page;
            let csv = m.csv_with_header(p.tight_for(&m.inputs), p.link.batch.name());
            // Another run than Poisson sampling of one example: its headline first.
            let csv = match p.scheme_line(&m.inputs) {
                Some(l) => format!("{l}\n{csv}"),
                None => csv,
            };
            download_text("sgm-rdp.csv", "text/csv", &csv);
        }
    });
    // The three tight charts as data (#22): every series, the run and its dataset terms.
    on_app(app, "export-charts-csv", "click", move |a| {
        let app = a.borrow();
        if let Some(m) = &app.model {
            // (The header's epsilons are Poisson sampling's of one example; `charts_for`
            // says which run the series are for.)
            let p = &app.page;
            let head = m.csv_header(p.tight_for(&m.inputs), p.link.batch.name());
            match p.charts_csv(&head) {
                Ok(csv) => download_text("sgm-rdp-charts.csv", "text/csv", &csv),
                Err(why) => set_text("copy-status", &format!("charts CSV: {why}")),
            }
        }
    });
    // PNG and SVG: light theme, 900 × 560 CSS px (PNG at 2×), drawn as the page's charts are.
    for format in ["png", "svg"] {
        on_app(app, &format!("export-{format}"), "click", move |a| {
            let which = export_choice(
                &by_id::<web_sys::HtmlSelectElement>("export-chart")
                    .map(|s| s.value())
                    .unwrap_or_default(),
            );
            let app = a.borrow();
            let (w, h) = EXPORT_SIZE;
            let done = if format == "png" {
                export_png(which, &app)
            } else {
                let mut s = String::new();
                let drawn =
                    Surface::svg(SVGBackend::with_string(&mut s, (w, h))).is_some_and(|svg| {
                        draw_export(which, &svg.into_drawing_area(), &Theme::light(1.0), &app)
                    });
                if drawn {
                    download_text(&format!("sgm-rdp-chart-{which}.svg"), "image/svg+xml", &s);
                }
                drawn
            };
            set_text("copy-status", &export_status(which, format, done));
        });
    }
    on_app(app, "copy-link", "click", move |a| {
        // The link holds the current state (the debounced URL write may be pending).
        state::write_url(&a.borrow().page);
        let url = window()
            .and_then(|w| w.location().href().ok())
            .unwrap_or_default();
        let shown = url.clone();
        copy(&url, "link copied", move || select_link(&shown));
    });
}

/// Draw chart `which` for an export; false when it has nothing to show yet.
fn draw_export<DB: plotters::prelude::DrawingBackend>(
    which: &str,
    root: &DrawingArea<DB, Shift>,
    th: &Theme,
    app: &App,
) -> bool {
    let Some(m) = &app.model else { return false };
    let overlays = by_id::<HtmlInputElement>("overlays").is_some_and(|c| c.checked());
    // The run, named under the picture (an export leaves the page).
    let caption = app
        .page
        .export_caption_for(which, &m.inputs, chart_d_inputs().ok());
    let Some(Ok(area)) = caption.map(|c| render::with_footer(root, &c, th)) else {
        return false;
    };
    let root = &area;
    match (which, app.page.chart_c()) {
        ("b", _) => render::draw_bound_vs_exact(root, m, th, overlays).is_ok(),
        ("c", Some((sigma, d))) => render::draw_max_alpha(root, sigma, d, th).is_ok(),
        ("c", None) => false,
        ("d", _) => {
            chart_d_inputs().is_ok_and(|(gs, le)| render::draw_capacity(root, gs, le, th).is_ok())
        }
        ("training" | "profile" | "risk", _) => tight::draw_named(&app.page, which, root, th),
        _ => render::draw_eps_vs_alpha(root, m, th).is_ok(),
    }
}

/// The PNG export: drawn on a detached canvas at 2× [`EXPORT_SIZE`], then downloaded.
fn export_png(which: &str, app: &App) -> bool {
    let (w, h) = EXPORT_SIZE;
    let Some(canvas) = doc()
        .and_then(|d| d.create_element("canvas").ok())
        .and_then(|c| c.dyn_into::<HtmlCanvasElement>().ok())
    else {
        return false;
    };
    canvas.set_width(EXPORT_PNG_SCALE * w);
    canvas.set_height(EXPORT_PNG_SCALE * h);
    let drawn = Surface::canvas(canvas.clone()).is_some_and(|b| {
        draw_export(
            which,
            &b.into_drawing_area(),
            &Theme::light(EXPORT_PNG_SCALE as f64),
            app,
        )
    });
    match canvas.to_data_url() {
        Ok(url) if drawn => {
            download_url(&format!("sgm-rdp-chart-{which}.png"), &url);
            true
        }
        _ => false,
    }
}

/// Show the link selected in a box (no clipboard here) and say so.
fn select_link(url: &str) {
    if let Some(b) = by_id::<HtmlInputElement>("copy-url") {
        b.set_value(url);
        b.set_hidden(false);
        let _ = b.focus();
        b.select();
    }
    set_text(
        "copy-status",
        "the clipboard is not available here: the link is selected below, press Ctrl+C (⌘C)",
    );
}

/// Ask for one redraw at the next animation frame (coalesces input events).
fn request_frame(app: &Shared) {
    if app.borrow().frame_pending {
        return;
    }
    app.borrow_mut().frame_pending = true;
    let a = app.clone();
    let cb = Closure::once_into_js(move || {
        a.borrow_mut().frame_pending = false;
        frame(&a);
    });
    if let Some(w) = window() {
        let _ = w.request_animation_frame(cb.unchecked_ref());
    }
}

fn now_ms() -> f64 {
    window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// Recompute and redraw everything from the state.
fn frame(app: &Shared) {
    let t0 = now_ms();
    let inputs = app.borrow().page.inputs();
    // Small σ: the model comes from the worker (the last one stays drawn meanwhile).
    let computed = if is_heavy(&inputs) {
        let known = app.borrow().page.heavy_model(&inputs);
        match known {
            Some(m) => Ok(m),
            None => {
                let fx = app.borrow_mut().page.ask_rdp(inputs, true);
                run(app, fx);
                return;
            }
        }
    } else {
        set_text("computing", "");
        Model::compute(inputs)
    };
    let model = match computed {
        Ok(m) => m,
        Err(e) => {
            // Inputs are validated per field, so this is a combination the engine refused.
            set_text("sentence", &format!("cannot compute: {e}"));
            return;
        }
    };
    // What to show comes from the ui layer; another batching than Poisson has its own sentence.
    let h = {
        let p = &app.borrow().page;
        crate::ui::page::Headline::of(&model, Some(p.link.dataset), p.tight_sentence(&inputs))
    };
    for op in h.ops() {
        tight::apply_op(op);
    }
    let fx = app.borrow_mut().page.request(inputs, model.opt.value);
    run(app, fx);
    let fx = app.borrow_mut().page.inputs_changed();
    run(app, fx);
    let dark = prefers_dark();
    let overlays = by_id::<HtmlInputElement>("overlays")
        .map(|c| c.checked())
        .unwrap_or(false);
    let mut mapping = None;
    draw("chart-a", dark, |root, th| {
        render::draw_eps_vs_alpha(root, &model, th).map(|m| mapping = Some(m))
    });
    match mapping {
        // (Worded when read out: a frame while a slider moves words nothing.)
        Some(map) => {
            let at = model
                .orders
                .iter()
                .copied()
                .zip(model.eps_improved.iter().copied());
            let m = model.clone();
            let r = app.borrow().readouts.clone();
            readout::set(&r, readout::A, map, at.collect(), move |i| {
                render::chart_a_readout(&m, i)
            });
        }
        None => readout::clear(&app.borrow().readouts, readout::A),
    }
    draw("chart-b", dark, |root, th| {
        render::draw_bound_vs_exact(root, &model, th, overlays)
    });
    // Charts C and D do not depend on q, steps or δ: redrawn here only on a new size or theme.
    let key = backdrop_key(dark);
    let new_look = app.borrow().backdrop != Some(key);
    if new_look {
        if let Err(m) = draw_chart_d(dark) {
            set_text("cb-error", m);
        }
        app.borrow_mut().backdrop = Some(key);
    }
    // The table and chart C come from the worker once inputs rest; the URL follows (debounced).
    schedule_worker(app);
    debounce(
        app,
        |a| &mut a.url_timer,
        300,
        |a| state::write_url(&a.borrow().page),
    );
    if new_look {
        draw_chart_c(&app.borrow(), dark);
    }
    let mut a = app.borrow_mut();
    a.model = Some(model);
    a.last_frame_ms = now_ms() - t0;
    drop(a);
    post_height();
}

/// Canvas widths of charts C and D, devicePixelRatio and theme.
type BackdropKey = (i32, i32, u64, bool);

fn backdrop_key(dark: bool) -> BackdropKey {
    let width = |id: &str| {
        by_id::<HtmlCanvasElement>(id)
            .map(|c| c.client_width())
            .unwrap_or(0)
    };
    let dpr = window().map(|w| w.device_pixel_ratio()).unwrap_or(1.0);
    (width("chart-c"), width("chart-d"), dpr.to_bits(), dark)
}

/// Chart D's inputs (Gaussian σ, Laplace ε), or the message naming the bad one.
fn chart_d_inputs() -> Result<(f64, f64), &'static str> {
    crate::ui::fields::parse_capacity(&value("cb-sigma"), &value("cb-eps"))
}

/// Chart D (Chaudhuri et al.'s capacity-bounded view) from its own two boxes.
fn draw_chart_d(dark: bool) -> Result<(), &'static str> {
    let (s, e) = chart_d_inputs()?;
    set_text("chart-d-summary", &render::summary_d(s, e));
    draw("chart-d", dark, |root, th| {
        render::draw_capacity(root, s, e, th)
    });
    Ok(())
}

/// The comparison table (one per-step curve, up to seconds at tiny σ) and chart C
/// (~1000 RDP evaluations, depends on σ only) are computed by the worker once the inputs
/// rest for 150 ms (the small-σ model's requests carry them at once).
fn schedule_worker(app: &Shared) {
    debounce(
        app,
        |a| &mut a.compare_timer,
        150,
        |a| {
            let i = a.borrow().page.inputs();
            let fx = a.borrow_mut().page.ask_rdp(i, false);
            run(a, fx);
        },
    );
}

/// Run `work` once no new call has come for `ms` milliseconds; `slot` holds the
/// pending timer so a new call replaces it.
fn debounce(
    app: &Shared,
    slot: fn(&mut App) -> &mut Option<i32>,
    ms: i32,
    work: impl FnOnce(&Shared) + 'static,
) {
    let Some(w) = window() else { return };
    if let Some(id) = slot(&mut app.borrow_mut()).take() {
        w.clear_timeout_with_handle(id);
    }
    let a = app.clone();
    let id = after(ms, move || {
        *slot(&mut a.borrow_mut()) = None;
        work(&a);
    });
    *slot(&mut app.borrow_mut()) = id;
}

/// Every answer of the page's worker, read by the page model.
fn on_worker(data: JsValue) {
    let Some(app) = APP.with(|a| a.borrow().clone()) else {
        return;
    };
    let fx = app.borrow_mut().page.worker_answer(&worker::from_js(&data));
    run(&app, fx);
}

fn draw_chart_c(app: &App, dark: bool) {
    if let Some((s, d)) = app.page.chart_c() {
        set_text("chart-c-summary", &render::summary_c(s, d));
        draw("chart-c", dark, |root, th| {
            render::draw_max_alpha(root, s, d, th)
        });
    }
}
