//! Browser tests (wasm-bindgen-test in headless Chromium): input → state → canvas.
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
    assert_eq!(eps1, format!("{want:.4}"));
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
