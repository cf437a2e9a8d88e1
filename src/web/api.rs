//! The JavaScript API: the engine's accountant as plain functions on plain objects.
//!
//! ```js
//! import init, { epsilon } from "./sgm-rdp.js";
//! await init();
//! epsilon({ q: 0.01, sigma: 1.1, steps: 10000, delta: 1e-5 }); // → { epsilon, alpha, … }
//! ```
//!
//! Parameter objects take the names the other accountants use
//! (`sample_rate`/`q`, `noise_multiplier`/`sigma`, `steps`, `delta`, `orders`);
//! unknown keys are refused (a typo must not silently fall back to a default).
//! Every engine error becomes a thrown JS `Error` carrying the engine's message.

use crate::engine::{self, bounds, calibrate, params, Conversion, Optimum, Run, Sgm};
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Sampling rate q = batch / dataset size, under either name. */
export type SampleRate = { q: number } | { sample_rate: number };
/** Noise multiplier σ (noise std / clipping norm), under either name. */
export type NoiseMultiplier = { sigma: number } | { noise_multiplier: number };
/** RDP → (ε, δ) conversion: "improved" (Canonne–Kamath–Steinke, default) or "classic" (Mironov 2017). */
export type Conversion = "improved" | "classic";
export type RdpParams = SampleRate & NoiseMultiplier & {
  /** Orders α > 1 (default: dp_accounting's 156 orders 1.1 … 1024). */
  orders?: number[];
  /** Steps T to compose over (default 1). */
  steps?: number;
};
export interface RdpResult { orders: number[]; rdp: number[]; steps: number; rdpTotal: number[] }
export type EpsilonParams = SampleRate & NoiseMultiplier & {
  steps: number; delta: number; conversion?: Conversion; orders?: number[];
};
export interface EpsilonResult {
  /** ε after continuous refinement of α; never above gridEpsilon. */
  epsilon: number; alpha: number;
  /** Best of the order grid (what dp_accounting reports). */
  gridEpsilon: number; gridAlpha: number;
  /** True when the best order is the grid's first or last: widen `orders`. */
  atEdge: boolean;
}
export type DeltaParams = SampleRate & NoiseMultiplier & {
  steps: number; epsilon: number; conversion?: Conversion; orders?: number[];
};
export interface DeltaResult { delta: number; alpha: number; gridDelta: number; gridAlpha: number; atEdge: boolean }
export type CalibrateSigmaParams = SampleRate & {
  epsilon: number; delta: number; steps: number; conversion?: Conversion; orders?: number[];
};
export interface CalibrateSigmaResult { sigma: number; epsilon: number; alpha: number; atLowerLimit: boolean }
export type CalibrateStepsParams = SampleRate & NoiseMultiplier & {
  epsilon: number; delta: number; conversion?: Conversion; orders?: number[];
};
export interface CalibrateStepsResult { steps: number; epsilon: number; alpha: number; atUpperLimit: boolean }
export type BoundsParams = SampleRate & NoiseMultiplier & {
  /** Orders to evaluate (default [2, 8, 32, 128]). */
  orders?: number[];
};
export interface Bound {
  /** "theorem11" (003 Thm 11), "abadi", "bun", "lemma9". */
  name: string;
  /** The bound's per-step RDP value at α (also where it does not apply). */
  value: number;
  /** null when every stated condition holds, else the failing condition. */
  fails: string | null;
}
export interface BoundsAtOrder { alpha: number; exact: number; bounds: Bound[] }
export interface MaxOrder { cond4: number; cond5: number; min: number; exact: number }
export interface BoundsResult { orders: BoundsAtOrder[]; maxAlpha: MaxOrder }
export type CompareParams = SampleRate & NoiseMultiplier & { steps: number; delta: number };
export interface Route {
  /** e.g. "exact RDP, improved conversion", "Abadi et al. (Table 1)", "CDP (002 Thm 3.2, 3.4, Cor 3.1)". */
  name: string;
  /** The route's ε, or null where it does not apply. */
  epsilon: number | null;
  /** Why it does not apply ("n/a: …"), or a caveat. */
  note: string | null;
}
"#;

/// A call's parameters, read from a plain JS object.
///
/// Read by hand with `Reflect` rather than a serde `Deserialize` derive: it
/// names the offending key in the tools' terms, and it keeps the wasm ~11 KB
/// smaller (the derive's generic visitor code), which matters for the page.
struct Args {
    /// The JS function's name, which prefixes every error message.
    call: &'static str,
    q: Option<f64>,
    sigma: Option<f64>,
    steps: Option<f64>,
    delta: Option<f64>,
    epsilon: Option<f64>,
    conversion: Option<String>,
    orders: Option<Vec<f64>>,
}

/// Canonical key for an accepted spelling (the tools' names are aliases).
fn canonical(k: &str) -> &str {
    match k {
        "sample_rate" | "sampleRate" => "q",
        "noise_multiplier" | "noiseMultiplier" => "sigma",
        other => other,
    }
}

impl Args {
    fn parse(call: &'static str, v: JsValue, allowed: &[&str]) -> Result<Self, JsError> {
        let bad = |m: String| JsError::new(&format!("{call}: {m}"));
        if !v.is_object() || js_sys::Array::is_array(&v) {
            return Err(bad(format!(
                "expected an object like {{ {} }}",
                allowed.join(", ")
            )));
        }
        let mut a = Args {
            call,
            q: None,
            sigma: None,
            steps: None,
            delta: None,
            epsilon: None,
            conversion: None,
            orders: None,
        };
        let keys = js_sys::Object::keys(v.unchecked_ref::<js_sys::Object>());
        for k in keys.iter() {
            let k = k.as_string().unwrap_or_default();
            let name = canonical(&k);
            // Refuse keys the function does not use (a typo must not fall back to a default).
            if !allowed.contains(&name) {
                return Err(bad(format!(
                    "unknown parameter '{}' (expected {})",
                    clip(&k),
                    allowed.join(", ")
                )));
            }
            let x = js_sys::Reflect::get(&v, &JsValue::from_str(&k)).unwrap_or_default();
            if x.is_undefined() {
                continue;
            }
            let num = || {
                x.as_f64().ok_or_else(|| {
                    bad(format!(
                        "'{}' must be a number, got {}",
                        clip(&k),
                        describe(&x)
                    ))
                })
            };
            match name {
                "q" => a.q = Some(num()?),
                "sigma" => a.sigma = Some(num()?),
                "steps" => a.steps = Some(num()?),
                "delta" => a.delta = Some(num()?),
                "epsilon" => a.epsilon = Some(num()?),
                "conversion" => {
                    a.conversion = Some(x.as_string().ok_or_else(|| {
                        bad(format!(
                            "'conversion' must be \"improved\" or \"classic\", got {}",
                            describe(&x)
                        ))
                    })?)
                }
                "orders" => {
                    if !js_sys::Array::is_array(&x) {
                        return Err(bad(format!(
                            "'orders' must be an array of numbers, got {}",
                            describe(&x)
                        )));
                    }
                    let arr: &js_sys::Array = x.unchecked_ref();
                    let mut o = Vec::with_capacity(arr.length() as usize);
                    for (i, e) in arr.iter().enumerate() {
                        o.push(e.as_f64().ok_or_else(|| {
                            bad(format!(
                                "orders[{i}] must be a number, got {}",
                                describe(&e)
                            ))
                        })?);
                    }
                    a.orders = Some(o);
                }
                _ => {}
            }
        }
        Ok(a)
    }
    fn need(&self, name: &str, v: Option<f64>) -> Result<f64, JsError> {
        v.ok_or_else(|| JsError::new(&format!("{}: missing parameter '{name}'", self.call)))
    }
    /// The engine's error as this call's JS error.
    fn fail(&self, e: engine::Error) -> JsError {
        JsError::new(&format!("{}: {e}", self.call))
    }
    fn q(&self) -> Result<f64, JsError> {
        self.need("q (sample_rate)", self.q)
    }
    fn sgm(&self) -> Result<Sgm, JsError> {
        let sigma = self.need("sigma (noise_multiplier)", self.sigma)?;
        Sgm::new(self.q()?, sigma).map_err(|e| self.fail(e))
    }
    fn steps(&self) -> Result<u64, JsError> {
        params::steps_from_f64(self.need("steps", self.steps)?).map_err(|e| self.fail(e))
    }
    fn conversion(&self) -> Result<Conversion, JsError> {
        match self.conversion.as_deref() {
            None => Ok(Conversion::Improved),
            Some(s) => s.parse().map_err(|e| self.fail(e)),
        }
    }
    fn orders(&self, default: impl FnOnce() -> Vec<f64>) -> Result<Vec<f64>, JsError> {
        match &self.orders {
            None => Ok(default()),
            Some(o) => params::check_orders(o).map_err(|e| self.fail(e)),
        }
    }
    fn run(&self) -> Result<Run, JsError> {
        Run::new(
            self.sgm()?,
            self.steps()?,
            &self.orders(engine::default_orders)?,
        )
        .map_err(|e| self.fail(e))
    }
}

fn clip(s: &str) -> String {
    s.chars().take(32).collect()
}

/// A short description of a JS value for a message (never the value's markup).
fn describe(x: &JsValue) -> String {
    if let Some(s) = x.as_string() {
        format!("the string '{}'", clip(&s))
    } else if x.is_null() {
        "null".into()
    } else if x.as_bool().is_some() {
        "a boolean".into()
    } else if js_sys::Array::is_array(x) {
        "an array".into()
    } else if x.is_object() {
        "an object".into()
    } else {
        "a value of another type".into()
    }
}

fn out<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&e.to_string()))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RdpOut {
    orders: Vec<f64>,
    rdp: Vec<f64>,
    steps: f64,
    rdp_total: Vec<f64>,
}

/// Exact per-step RDP ε(α) of the Sampled Gaussian Mechanism at each order
/// (003 §3.3), and composed over `steps` (RDP adds up, Mironov 2017 Prop. 1).
#[wasm_bindgen(unchecked_return_type = "RdpResult")]
pub fn rdp(
    #[wasm_bindgen(unchecked_param_type = "RdpParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    let a = Args::parse("rdp", p, &["q", "sigma", "orders", "steps"])?;
    let m = a.sgm()?;
    let orders = a.orders(engine::default_orders)?;
    let steps = match a.steps {
        None => 1,
        Some(_) => a.steps()?,
    };
    let rdp = engine::rdp::rdp_orders(&m, &orders).map_err(|e| a.fail(e))?;
    let rdp_total = rdp.iter().map(|r| r * steps as f64).collect();
    out(&RdpOut {
        orders,
        rdp,
        steps: steps as f64,
        rdp_total,
    })
}

/// The shared body of `epsilon` and `delta`: read the run and the `given`
/// one of δ or ε, and optimize the other over α.
fn optimize(
    call: &'static str,
    p: JsValue,
    given: &str,
    f: fn(&Run, f64, Conversion) -> Result<Optimum, engine::Error>,
) -> Result<Optimum, JsError> {
    let a = Args::parse(
        call,
        p,
        &["q", "sigma", "steps", given, "conversion", "orders"],
    )?;
    let x = a.need(given, if given == "delta" { a.delta } else { a.epsilon })?;
    f(&a.run()?, x, a.conversion()?).map_err(|e| a.fail(e))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EpsOut {
    epsilon: f64,
    alpha: f64,
    grid_epsilon: f64,
    grid_alpha: f64,
    at_edge: bool,
}

/// ε at δ after `steps` steps, minimized over α (grid, then continuous refinement).
#[wasm_bindgen(unchecked_return_type = "EpsilonResult")]
pub fn epsilon(
    #[wasm_bindgen(unchecked_param_type = "EpsilonParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    let o = optimize("epsilon", p, "delta", Run::epsilon)?;
    out(&EpsOut {
        epsilon: o.value,
        alpha: o.alpha,
        grid_epsilon: o.grid_value,
        grid_alpha: o.grid_alpha,
        at_edge: o.at_edge,
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeltaOut {
    delta: f64,
    alpha: f64,
    grid_delta: f64,
    grid_alpha: f64,
    at_edge: bool,
}

/// δ at ε after `steps` steps, minimized over α.
#[wasm_bindgen(unchecked_return_type = "DeltaResult")]
pub fn delta(
    #[wasm_bindgen(unchecked_param_type = "DeltaParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    let o = optimize("delta", p, "epsilon", Run::delta)?;
    out(&DeltaOut {
        delta: o.value,
        alpha: o.alpha,
        grid_delta: o.grid_value,
        grid_alpha: o.grid_alpha,
        at_edge: o.at_edge,
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SigmaOut {
    sigma: f64,
    epsilon: f64,
    alpha: f64,
    at_lower_limit: bool,
}

/// The smallest noise multiplier whose ε after `steps` steps is at most `epsilon`.
#[wasm_bindgen(js_name = calibrateSigma, unchecked_return_type = "CalibrateSigmaResult")]
pub fn calibrate_sigma(
    #[wasm_bindgen(unchecked_param_type = "CalibrateSigmaParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    let a = Args::parse(
        "calibrateSigma",
        p,
        &["epsilon", "delta", "q", "steps", "conversion", "orders"],
    )?;
    let c = calibrate::sigma(
        a.need("epsilon", a.epsilon)?,
        a.need("delta", a.delta)?,
        a.q()?,
        a.steps()?,
        &a.orders(engine::default_orders)?,
        a.conversion()?,
    )
    .map_err(|e| a.fail(e))?;
    out(&SigmaOut {
        sigma: c.sigma,
        epsilon: c.epsilon,
        alpha: c.alpha,
        at_lower_limit: c.at_lower_limit,
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StepsOut {
    steps: f64,
    epsilon: f64,
    alpha: f64,
    at_upper_limit: bool,
}

/// The largest number of steps whose ε is at most `epsilon`.
#[wasm_bindgen(js_name = calibrateSteps, unchecked_return_type = "CalibrateStepsResult")]
pub fn calibrate_steps(
    #[wasm_bindgen(unchecked_param_type = "CalibrateStepsParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    let a = Args::parse(
        "calibrateSteps",
        p,
        &["epsilon", "delta", "q", "sigma", "conversion", "orders"],
    )?;
    let c = calibrate::steps(
        a.need("epsilon", a.epsilon)?,
        a.need("delta", a.delta)?,
        a.sgm()?,
        &a.orders(engine::default_orders)?,
        a.conversion()?,
    )
    .map_err(|e| a.fail(e))?;
    out(&StepsOut {
        steps: c.steps as f64,
        epsilon: c.epsilon,
        alpha: c.alpha,
        at_upper_limit: c.at_upper_limit,
    })
}

#[derive(Serialize)]
struct BoundsAt {
    alpha: f64,
    exact: f64,
    bounds: Vec<bounds::Bound>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BoundsOut {
    orders: Vec<BoundsAt>,
    max_alpha: bounds::MaxOrder,
}

/// The exact per-step RDP next to Table 1's bounds and Theorem 11 at each
/// order, each with its failing condition (if any), and Figure 1's largest α.
#[wasm_bindgen(unchecked_return_type = "BoundsResult")]
pub fn bounds(
    #[wasm_bindgen(unchecked_param_type = "BoundsParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    let a = Args::parse("bounds", p, &["q", "sigma", "orders"])?;
    let m = a.sgm()?;
    let orders = a.orders(|| vec![2.0, 8.0, 32.0, 128.0])?;
    let mut rows = Vec::with_capacity(orders.len());
    for alpha in orders {
        rows.push(BoundsAt {
            alpha,
            exact: engine::rdp::rdp(&m, alpha).map_err(|e| a.fail(e))?,
            bounds: bounds::all(&m, alpha).map_err(|e| a.fail(e))?,
        });
    }
    out(&BoundsOut {
        orders: rows,
        max_alpha: bounds::max_order(&m),
    })
}

/// ε of every accountant route of papers 002/003/004 for the same run, each
/// with "n/a: reason" where it does not apply (the page's comparison panel).
#[wasm_bindgen(unchecked_return_type = "Route[]")]
pub fn compare(
    #[wasm_bindgen(unchecked_param_type = "CompareParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    let a = Args::parse("compare", p, &["q", "sigma", "steps", "delta"])?;
    let routes = engine::compare::compare(a.sgm()?, a.steps()?, a.need("delta", a.delta)?)
        .map_err(|e| a.fail(e))?;
    out(&routes)
}
