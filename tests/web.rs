//! Browser tests (wasm-bindgen-test in headless Chromium): input → state → canvas.
// References here may use the platform's f64 functions: the libm rule (clippy.toml) is for
// the numbers the surfaces print, which come from the library.
#![allow(clippy::disallowed_methods)]
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, HtmlInputElement};

wasm_bindgen_test_configure!(run_in_browser);

fn doc() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

fn add(tag: &str, id: &str) -> web_sys::Element {
    let d = doc();
    if let Some(e) = d.get_element_by_id(id) {
        return e;
    }
    let e = d.create_element(tag).unwrap();
    e.set_id(id);
    d.body().unwrap().append_child(&e).unwrap();
    e
}

fn page() {
    for id in ["chart-a", "chart-b", "chart-c"] {
        let c = add("canvas", id);
        c.set_attribute("width", "600").unwrap();
        c.set_attribute("height", "360").unwrap();
        c.set_attribute("style", "width:600px;height:360px;display:block")
            .unwrap();
    }
    for id in ["q", "sigma", "steps", "delta"] {
        let wrap = add("div", &format!("{id}-wrap"));
        let input = add("input", id);
        wrap.append_child(&input).unwrap();
        add("input", &format!("{id}-range"))
            .set_attribute("type", "range")
            .unwrap();
        add("span", &format!("{id}-error"));
    }
    for id in ["epsilon", "alpha-opt", "sentence", "delta-out"] {
        add("span", id);
    }
    sgm_rdp::web::mount();
}

async fn next_frames() {
    for _ in 0..3 {
        let p = js_sys::Promise::new(&mut |res, _| {
            web_sys::window()
                .unwrap()
                .request_animation_frame(&res)
                .unwrap();
        });
        wasm_bindgen_futures::JsFuture::from(p).await.unwrap();
    }
}

fn text(id: &str) -> String {
    doc()
        .get_element_by_id(id)
        .unwrap()
        .text_content()
        .unwrap_or_default()
}

fn distinct_colors(id: &str) -> usize {
    let c: HtmlCanvasElement = doc().get_element_by_id(id).unwrap().dyn_into().unwrap();
    let ctx: CanvasRenderingContext2d = c.get_context("2d").unwrap().unwrap().dyn_into().unwrap();
    let data = ctx
        .get_image_data(0.0, 0.0, c.width() as f64, c.height() as f64)
        .unwrap()
        .data();
    let mut seen = std::collections::HashSet::new();
    for px in data.chunks(4).step_by(7) {
        seen.insert((px[0], px[1], px[2]));
    }
    seen.len()
}

fn type_into(id: &str, v: &str) {
    let i: HtmlInputElement = doc().get_element_by_id(id).unwrap().dyn_into().unwrap();
    i.set_value(v);
    i.dispatch_event(&web_sys::Event::new("input").unwrap())
        .unwrap();
}

#[wasm_bindgen_test]
async fn draws_and_reacts_to_input() {
    page();
    next_frames().await;
    let eps0 = text("epsilon");
    assert!(eps0.starts_with("2.59"), "MNIST default: {eps0}");
    assert!(distinct_colors("chart-a") > 8, "chart A is blank");
    assert!(distinct_colors("chart-b") > 8, "chart B is blank");
    type_into("sigma", "2");
    next_frames().await;
    let eps1 = text("epsilon");
    assert_ne!(eps0, eps1);
    let want = sgm_rdp::engine::Run::with_default_orders(
        sgm_rdp::engine::Sgm::new(256.0 / 60000.0, 2.0).unwrap(),
        14063,
    )
    .unwrap()
    .epsilon(1e-5, sgm_rdp::engine::Conversion::Improved)
    .unwrap()
    .value;
    assert_eq!(
        eps1,
        sgm_rdp::decimal::fixed(want, 4, sgm_rdp::decimal::Dir::Up)
    );
}

#[wasm_bindgen_test]
async fn bad_input_keeps_last_good_state() {
    page();
    next_frames().await;
    let before = text("epsilon");
    for bad in ["0", "2", "abc", "-1"] {
        type_into("q", bad);
        next_frames().await;
        assert!(!text("q-error").is_empty(), "no message for q = {bad}");
        assert_eq!(text("epsilon"), before);
        assert!(!text("epsilon").contains("NaN"));
    }
    type_into("q", "0.01");
    next_frames().await;
    assert!(text("q-error").is_empty());
}

// ---- <sgm-rdp-calculator>'s contents (widget.rs) and the JS API (api.rs) ----

use sgm_rdp::api;
use sgm_rdp::engine::{Conversion, Run, Sgm};
use sgm_rdp::web::widget::Widget;
use wasm_bindgen::JsValue;

fn engine_eps(q: f64, sigma: f64, steps: u64, delta: f64) -> f64 {
    Run::with_default_orders(Sgm::new(q, sigma).unwrap(), steps)
        .unwrap()
        .epsilon(delta, Conversion::Improved)
        .unwrap()
        .value
}

fn get(o: &JsValue, k: &str) -> JsValue {
    js_sys::Reflect::get(o, &k.into()).unwrap()
}

/// A host element with an open shadow root holding a fresh Widget, 500 px wide.
fn shadow_widget() -> (web_sys::HtmlElement, web_sys::ShadowRoot, Widget) {
    let host: web_sys::HtmlElement = doc().create_element("div").unwrap().dyn_into().unwrap();
    host.style().set_property("width", "500px").unwrap();
    host.style().set_property("display", "block").unwrap();
    doc().body().unwrap().append_child(&host).unwrap();
    let root = host
        .attach_shadow(&web_sys::ShadowRootInit::new(web_sys::ShadowRootMode::Open))
        .unwrap();
    let noop = js_sys::Function::new_no_args("");
    let w = Widget::new(root.clone(), noop).unwrap();
    let style = doc().create_element("style").unwrap();
    style.set_text_content(Some(&sgm_rdp::web::widget::widget_css()));
    root.append_child(&style).unwrap();
    (host, root, w)
}

fn shadow_text(root: &web_sys::ShadowRoot, sel: &str) -> String {
    root.query_selector(sel)
        .unwrap()
        .map(|e| e.text_content().unwrap_or_default())
        .unwrap_or_default()
}

#[wasm_bindgen_test]
fn widget_renders_the_engine_value_and_reports_it() {
    let (host, root, w) = shadow_widget();
    for (k, v) in [
        ("q", "0.01"),
        ("sigma", "1.1"),
        ("steps", "10000"),
        ("delta", "1e-5"),
    ] {
        w.attr(k, Some(v.into()));
    }
    let d = w.render();
    let want = engine_eps(0.01, 1.1, 10000, 1e-5);
    assert_eq!(get(&d, "epsilon").as_f64(), Some(want));
    assert_eq!(get(&d, "q").as_f64(), Some(0.01));
    assert_eq!(get(&d, "steps").as_f64(), Some(10000.0));
    assert_eq!(
        shadow_text(&root, ".eps"),
        sgm_rdp::decimal::fixed(want, 4, sgm_rdp::decimal::Dir::Up)
    );
    // Nothing changed: a redraw, no new detail (no `change` event).
    assert!(w.render().is_undefined());
    w.attr("sigma", Some("2".into()));
    let d2 = w.render();
    assert_eq!(
        get(&d2, "epsilon").as_f64(),
        Some(engine_eps(0.01, 2.0, 10000, 1e-5))
    );
    host.remove();
}

#[wasm_bindgen_test]
fn widget_names_a_bad_attribute_and_keeps_working() {
    let (host, root, w) = shadow_widget();
    w.attr("q", Some("7".into()));
    w.attr("sigma", Some("<b>x</b>".into()));
    w.attr("mode", Some("huge".into()));
    let d = w.render();
    // Defaults shown (never a blank box), each bad attribute named inline, as text.
    assert!(get(&d, "epsilon").as_f64().unwrap() > 0.0);
    let msg = shadow_text(&root, ".msg");
    assert!(msg.contains("attribute q:"), "{msg}");
    assert!(
        msg.contains("attribute sigma:") && msg.contains("<b>x</b>"),
        "{msg}"
    );
    assert!(msg.contains("attribute mode:"), "{msg}");
    assert!(
        root.query_selector("b").unwrap().is_none(),
        "markup reached the DOM"
    );
    w.attr("q", Some("0.02".into()));
    w.attr("sigma", Some("1.5".into()));
    w.attr("mode", None);
    let d = w.render();
    assert_eq!(
        get(&d, "epsilon").as_f64(),
        Some(engine_eps(0.02, 1.5, 14063, 1e-5))
    );
    assert_eq!(shadow_text(&root, ".msg"), "");
    host.remove();
}

#[wasm_bindgen_test]
fn widget_full_mode_shows_controls_and_both_charts() {
    let (host, root, w) = shadow_widget();
    w.attr("mode", Some("full".into()));
    w.render();
    let hidden = |sel: &str| {
        root.query_selector(sel)
            .unwrap()
            .unwrap()
            .dyn_into::<web_sys::HtmlElement>()
            .unwrap()
            .hidden()
    };
    assert!(!hidden(".controls"));
    let canvases = root.query_selector_all("canvas").unwrap();
    // Charts A and B, then the tight charts (training, profile, risk), hidden by default.
    assert_eq!(canvases.length(), 5);
    for i in 2..5 {
        let c: HtmlCanvasElement = canvases.item(i).unwrap().dyn_into().unwrap();
        assert!(c.hidden(), "tight chart {i} shown without charts=");
    }
    for i in 0..2 {
        let c: HtmlCanvasElement = canvases.item(i).unwrap().dyn_into().unwrap();
        assert!(
            !c.hidden() && c.width() >= 400,
            "canvas {i} not drawn at the width"
        );
    }
    w.attr("charts", Some("bound".into()));
    w.render();
    let a: HtmlCanvasElement = canvases.item(0).unwrap().dyn_into().unwrap();
    assert!(a.hidden());
    w.attr("charts", Some("pie".into()));
    w.render();
    assert!(shadow_text(&root, ".msg").contains("attribute charts:"));
    host.remove();
}

fn obj(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = js_sys::Object::new();
    for (k, v) in pairs {
        js_sys::Reflect::set(&o, &(*k).into(), v).unwrap();
    }
    o.into()
}

fn n(x: f64) -> JsValue {
    JsValue::from_f64(x)
}

#[wasm_bindgen_test]
fn js_api_returns_the_engine_values() {
    let r = api::epsilon(obj(&[
        ("sample_rate", n(0.01)),
        ("noise_multiplier", n(1.1)),
        ("steps", n(10000.0)),
        ("delta", n(1e-5)),
    ]))
    .unwrap();
    let o = Run::with_default_orders(Sgm::new(0.01, 1.1).unwrap(), 10000)
        .unwrap()
        .epsilon(1e-5, Conversion::Improved)
        .unwrap();
    assert_eq!(get(&r, "epsilon").as_f64(), Some(o.value));
    assert_eq!(get(&r, "alpha").as_f64(), Some(o.alpha));
    assert_eq!(get(&r, "gridEpsilon").as_f64(), Some(o.grid_value));
    let r = api::rdp(obj(&[
        ("q", n(0.01)),
        ("sigma", n(1.1)),
        ("orders", js_sys::Array::of2(&n(2.0), &n(8.5)).into()),
    ]))
    .unwrap();
    let vals: Vec<f64> = serde_wasm_bindgen::from_value(get(&r, "rdp")).unwrap();
    let want =
        sgm_rdp::engine::rdp::rdp_orders(&Sgm::new(0.01, 1.1).unwrap(), &[2.0, 8.5]).unwrap();
    assert_eq!(vals, want);
}

#[wasm_bindgen_test]
fn js_api_throws_errors_with_the_engine_message() {
    let cases = [
        obj(&[
            ("q", n(7.0)),
            ("sigma", n(1.1)),
            ("steps", n(1.0)),
            ("delta", n(1e-5)),
        ]),
        obj(&[
            ("q", n(0.01)),
            ("sigma", n(1.1)),
            ("steps", n(1.5)),
            ("delta", n(1e-5)),
        ]),
        obj(&[("q", n(0.01)), ("sigma", n(1.1)), ("steps", n(10.0))]),
        obj(&[
            ("q", n(0.01)),
            ("sigmaa", n(1.1)),
            ("steps", n(10.0)),
            ("delta", n(1e-5)),
        ]),
        obj(&[
            ("q", "0.01".into()),
            ("sigma", n(1.1)),
            ("steps", n(10.0)),
            ("delta", n(1e-5)),
        ]),
        JsValue::NULL,
    ];
    for c in cases {
        let e: JsValue = api::epsilon(c).unwrap_err().into();
        let e: js_sys::Error = e.dyn_into().expect("a JS Error");
        let m = String::from(e.message());
        assert!(m.starts_with("epsilon: ") && m.len() > 12, "{m}");
    }
    let e: JsValue = api::epsilon(obj(&[
        ("q", n(7.0)),
        ("sigma", n(1.1)),
        ("steps", n(1.0)),
        ("delta", n(1e-5)),
    ]))
    .unwrap_err()
    .into();
    let want = Sgm::new(7.0, 1.1).unwrap_err().to_string();
    assert_eq!(
        String::from(e.dyn_into::<js_sys::Error>().unwrap().message()),
        format!("epsilon: {want}")
    );
}

#[wasm_bindgen_test]
fn widget_links_to_the_calculator_only_over_http() {
    let (host, root, w) = shadow_widget();
    // The foot's links: [method, calculator]; the calculator link only when asked for.
    let links = |root: &web_sys::ShadowRoot| -> Vec<(String, bool)> {
        let all = root.query_selector_all(".foot a").unwrap();
        (0..all.length())
            .map(|i| {
                let a = all
                    .item(i)
                    .unwrap()
                    .dyn_into::<web_sys::HtmlElement>()
                    .unwrap();
                (a.get_attribute("href").unwrap_or_default(), a.hidden())
            })
            .collect()
    };
    w.render();
    let l = links(&root);
    assert_eq!(
        l[0],
        ("https://arxiv.org/abs/1908.10530".to_string(), false)
    );
    assert!(l[1].1, "no calculator link unless asked for");
    w.attr(
        "calculator",
        Some("https://example.org/sgm/index.html?x=1#top".into()),
    );
    w.attr("q", Some("0.02".into()));
    w.render();
    let l = links(&root);
    assert!(!l[1].1);
    assert!(
        l[1].0
            .starts_with("https://example.org/sgm/index.html?x=1&v=1&q=0.02&sigma=1.1"),
        "the base's own query is kept: {}",
        l[1].0
    );
    // One fragment: the base's on the calculator link, #references on the method link.
    assert!(l[1].0.ends_with("#top"), "{}", l[1].0);
    assert_eq!(
        l[0].0,
        format!("{}#references", l[1].0.trim_end_matches("#top"))
    );
    w.attr("calculator", Some("javascript:alert(1)".into()));
    w.render();
    let l = links(&root);
    assert!(l[1].1 && l[0].0 == "https://arxiv.org/abs/1908.10530");
    assert!(shadow_text(&root, ".msg").contains("attribute calculator:"));
    host.remove();
}

/// The wasm build parses decimals with the browser's parseFloat (see src/decimal.rs):
/// the same f64 as rustc's correctly rounded literals, hard cases included.
#[wasm_bindgen_test]
// The literals are the hard decimal strings themselves (rustc rounds them correctly).
#[allow(clippy::excessive_precision)]
fn decimal_parse_in_the_browser_is_correctly_rounded() {
    use sgm_rdp::decimal::parse;
    let cases: [(&str, f64); 10] = [
        ("0.1", 0.1),
        ("1e-5", 1e-5),
        ("0.30000000000000004", 0.30000000000000004),
        ("2.2250738585072011e-308", 2.2250738585072011e-308),
        ("4.9e-324", 4.9e-324),
        ("1.7976931348623157e308", 1.7976931348623157e308),
        ("9007199254740993", 9007199254740992.0),
        ("0.0042666666666666666", 256.0 / 60000.0),
        ("-1.1", -1.1),
        ("1e400", f64::INFINITY),
    ];
    for (s, want) in cases {
        assert_eq!(parse(s).map(f64::to_bits), Some(want.to_bits()), "{s}");
    }
    for bad in ["1abc", "inf", "", "0x10", " 1"] {
        assert_eq!(parse(bad), None, "{bad}");
    }
}
