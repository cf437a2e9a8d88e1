//! The page's RDP model for small σ, computed in the worker (www/pld-worker.js, kind
//! "rdp") so the main thread never runs a long task: below [`HEAVY_SIGMA`] one model
//! costs 6 ms (σ = 0.1) to 1.2 s (σ = 0.001, q = 0.5) in wasm, chart C up to 1.7 s.
//! The main thread keeps the last drawn model, says "computing…" after 150 ms, and
//! draws the worker's answer when it is for the current inputs (older ones dropped).

use super::dom::*;
use crate::engine::{bounds::MaxOrder, Optimum};
use crate::render::{Heavy, Inputs, Model, HEAVY_SIGMA};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

/// After this long without an answer the page says it is computing.
const COMPUTING_MS: i32 = 150;

#[derive(Default)]
struct State {
    gen: u32,
    /// The last request's inputs and whether it asked for the model.
    asked: Option<(Inputs, bool)>,
    answer: Option<(Inputs, Heavy)>,
    timer: Option<i32>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Whether the page computes the model for `i` in the worker.
pub fn is_heavy(i: &Inputs) -> bool {
    i.sigma < HEAVY_SIGMA
}

/// The model for `i` if the worker has answered for exactly these inputs.
pub fn model_for(i: &Inputs) -> Option<Model> {
    let h = STATE.with(|s| {
        s.borrow()
            .answer
            .as_ref()
            .filter(|(a, _)| a == i)
            .map(|(_, h)| h.clone())
    })?;
    Model::from_heavy(*i, h).ok()
}

/// Ask the worker for the comparison and chart C for `i`, and for the model too when
/// `model` (small σ): once per distinct request; the newest request wins.
pub fn request(i: Inputs, model: bool) {
    let model = model || is_heavy(&i);
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if matches!(s.asked, Some((a, m)) if a == i && (m || !model)) {
            return;
        }
        s.asked = Some((i, model));
        s.gen += 1;
        let msg = super::worker::object(&crate::ui::protocol::rdp(&i, s.gen, model));
        if !super::worker::post(&msg) {
            set_text(
                "sentence",
                "small σ needs the page's worker, which is not available",
            );
            return;
        }
        if model && s.timer.is_none() {
            s.timer = after(COMPUTING_MS, || {
                STATE.with(|s| {
                    let mut s = s.borrow_mut();
                    s.timer = None;
                    let pending = matches!(s.asked, Some((a, true))
                        if s.answer.as_ref().map(|(b, _)| *b) != Some(a));
                    if pending {
                        set_text("computing", "computing exact RDP for small σ…");
                    }
                })
            });
        }
    });
}

/// The worker's "rdp" answer: store it; for the page, its comparison rows and whether it
/// brought the small-σ model (then a redraw). None when it is not for the newest request.
pub fn answer(data: &JsValue) -> Option<(JsValue, bool)> {
    let gen = num(data, "gen") as u32;
    let (i, model) = STATE.with(|s| {
        let s = s.borrow();
        (s.gen == gen).then_some(s.asked).flatten()
    })?;
    if let Some(m) = get(data, "error").as_string() {
        set_text("computing", "");
        set_text("sentence", &format!("cannot compute: {m}"));
        return None;
    }
    if model {
        let heavy = parse(data);
        STATE.with(|s| s.borrow_mut().answer = Some((i, heavy)));
        set_text("computing", "");
    }
    Some((get(data, "compare"), model))
}

/// The model's RDP part from a worker answer (`heavyModel`'s fields).
pub(crate) fn parse(data: &JsValue) -> Heavy {
    Heavy {
        rdp: nums(data, "rdp"),
        opt: Optimum {
            value: num(data, "value"),
            alpha: num(data, "alpha"),
            grid_alpha: num(data, "gridAlpha"),
            grid_value: num(data, "gridValue"),
            at_edge: get(data, "atEdge").as_bool().unwrap_or(false),
        },
        tcdp_rho: get(data, "tcdpRho").as_f64(),
    }
}

/// The worker's chart C data for a small σ (`{sigma, chartC: [q, cond4, cond5, min,
/// exact] × n}`), sent after the model since it can take longer: (σ, the rows), or None.
pub fn chart_c_answer(data: &JsValue) -> Option<(f64, Vec<(f64, MaxOrder)>)> {
    let sigma = num(data, "sigma");
    let chart_c: Vec<(f64, MaxOrder)> = nums(data, "chartC")
        .chunks_exact(5)
        .map(|r| {
            let m = MaxOrder {
                cond4: r[1],
                cond5: r[2],
                min: r[3],
                exact: r[4],
            };
            (r[0], m)
        })
        .collect();
    (!chart_c.is_empty()).then_some((sigma, chart_c))
}
