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

use crate::engine::answer::Asked;
use crate::engine::{self, bounds, calibrate, params, pld, Conversion, Optimum, Run, Sgm};
use serde::Serialize;
use wasm_bindgen::prelude::*;

mod types;
#[cfg(feature = "worker")]
mod worker;
// The page worker's tight charts: `tightCharts`, `tightRiskFirst`.
#[cfg(feature = "worker")]
mod tight;
// Audits of canary scores (issue 65): the JS API's `audit` and `auditPlan`.
#[cfg(feature = "worker")]
mod audit;

// Every read of a caller's value goes through these `catch` imports: a Proxy trap or a
// getter that throws becomes an `Err` in Rust instead of an exception unwinding through
// wasm frames (which leaked shadow stack and eventually broke every export).
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = Object, js_name = keys)]
    fn try_keys(o: &JsValue) -> Result<js_sys::Array, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn try_is_array(v: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Reflect, js_name = get)]
    fn try_get(target: &JsValue, key: &JsValue) -> Result<JsValue, JsValue>;
}

/// Longest `orders` (or `epsilons`, `fpr`) list read from JS; longer is refused
/// before anything is allocated.
const MAX_LIST: f64 = 100_000.0;

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
    accountant: Option<String>,
    orders: Option<Vec<f64>>,
    epsilons: Option<Vec<f64>>,
    epsilon_max: Option<f64>,
    fpr: Option<Vec<f64>>,
    points: Option<f64>,
}

/// The message of a thrown JS value (an `Error`'s message, else a description).
fn thrown(e: &JsValue) -> String {
    if let Ok(m) = try_get(e, &JsValue::from_str("message")) {
        if let Some(m) = m.as_string() {
            return clip(&m);
        }
    }
    describe(e)
}

/// Canonical key for an accepted spelling (the tools' names are aliases).
fn canonical(k: &str) -> &str {
    match k {
        "sampleRate" => "q",
        "noiseMultiplier" => "sigma",
        "epsilon_max" => "epsilonMax",
        other => crate::engine::params::our_name(other),
    }
}

/// The keys that name a sampling scheme, the adjacency or a group (camelCase, and the
/// command line's batch keys): a call with one goes through the command line's query layer.
const SCHEME_KEYS: [(&str, &str); 9] = [
    ("sampling", "sampling"),
    ("adjacency", "adjacency"),
    ("stepsPerEpoch", "steps_per_epoch"),
    ("datasetSize", "dataset_size"),
    ("batchSize", "batch_size"),
    ("epochs", "epochs"),
    ("selected", "selected"),
    ("maxBatch", "max_batch"),
    ("groupSize", "group_size"),
];

/// The batch key of a scheme key, under either spelling.
fn scheme_key(k: &str) -> Option<&'static str> {
    SCHEME_KEYS
        .iter()
        .find(|(camel, snake)| k == *camel || k == *snake)
        .map(|(_, snake)| *snake)
}

/// `epsilon` (with `delta`) or `delta` (with `epsilon`) for a sampling scheme, adjacency or
/// group: the parameters become one `sgm-rdp batch` line and its answer is returned with
/// camelCase keys (`epsilon`, `epsilonLower`, `sampling`, `adjacency`, `accountant`,
/// `meaning`, `stepsPerEpoch`, …) — the command line's numbers and refusals. None when no
/// scheme key is given (the plain Poisson call). Whole engine only (sgm-rdp-async.js).
#[cfg(feature = "worker")]
fn by_scheme(call: &'static str, v: &JsValue) -> Result<Option<JsValue>, JsError> {
    use serde_json::{Map, Value};
    let bad = |m: String| JsError::new(&format!("{call}: {m}"));
    if !v.is_object() || try_is_array(v).unwrap_or(true) {
        return Ok(None);
    }
    let keys =
        try_keys(v).map_err(|e| bad(format!("listing the parameters threw: {}", thrown(&e))))?;
    let names: Vec<String> = keys.iter().filter_map(|k| k.as_string()).collect();
    let gdp = call == "gdp";
    if names.len() > 64 || (!gdp && !names.iter().any(|k| scheme_key(k).is_some())) {
        return Ok(None);
    }
    let (given, other) = match call {
        "epsilon" => ("delta", "epsilon"),
        "gdp" => ("", "mu"),
        _ => ("epsilon", "delta"),
    };
    let mut line = Map::new();
    if gdp {
        line.insert("command".into(), Value::String("gdp".into()));
    }
    for k in &names {
        let name = match scheme_key(k) {
            Some(b) => b,
            None => match canonical(k) {
                n @ ("q" | "sigma" | "steps") => n,
                "accountant" if !gdp => "accountant",
                n if n == given && !gdp => given,
                _ => {
                    let expected = if gdp {
                        "q, sigma, steps".to_string()
                    } else {
                        format!("q, sigma, steps, {given}, accountant")
                    };
                    return Err(bad(format!(
                        "unknown parameter '{}' (expected {expected}, {})",
                        clip(k),
                        SCHEME_KEYS.map(|(c, _)| c).join(", ")
                    )));
                }
            },
        };
        let x = try_get(v, &JsValue::from_str(k))
            .map_err(|e| bad(format!("reading '{}' threw: {}", clip(k), thrown(&e))))?;
        let value = if x.is_undefined() {
            continue;
        } else if let Some(f) = x.as_f64() {
            serde_json::Number::from_f64(f)
                .map(Value::Number)
                .ok_or_else(|| bad(format!("'{}' must be a finite number", clip(k))))?
        } else if let Some(t) = x.as_string().filter(|t| t.len() <= 100) {
            Value::String(t)
        } else {
            return Err(bad(format!(
                "'{}' must be a number or a short string, got {}",
                clip(k),
                describe(&x)
            )));
        };
        line.insert(name.to_string(), value);
    }
    if !gdp && !line.contains_key(given) {
        return Err(bad(format!(
            "'{given}' is required (the {other} is computed at it)"
        )));
    }
    let Value::Object(o) = crate::query::line_answer(line).map_err(bad)? else {
        return Err(bad("the query layer gave no answer".into()));
    };
    out(&camel_case(Value::Object(o))).map(Some)
}

/// A camelCase key in snake_case (`noiseMultiplier` → `noise_multiplier`).
#[cfg(feature = "worker")]
fn snake_case(k: &str) -> String {
    let mut snake = String::with_capacity(k.len() + 4);
    for ch in k.chars() {
        if ch.is_ascii_uppercase() {
            snake.push('_');
            snake.push(ch.to_ascii_lowercase());
        } else {
            snake.push(ch);
        }
    }
    snake
}

/// Every object key in camelCase (`epsilon_lower` → `epsilonLower`), nested ones too.
#[cfg(feature = "worker")]
fn camel_case(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| {
                    let mut c = String::with_capacity(k.len());
                    let mut up = false;
                    for ch in k.chars() {
                        match (ch, up) {
                            ('_', _) => up = true,
                            (ch, true) => {
                                c.extend(ch.to_uppercase());
                                up = false;
                            }
                            (ch, false) => c.push(ch),
                        }
                    }
                    (c, camel_case(v))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(camel_case).collect()),
        other => other,
    }
}

impl Args {
    fn parse(call: &'static str, v: JsValue, allowed: &[&str]) -> Result<Self, JsError> {
        let bad = |m: String| JsError::new(&format!("{call}: {m}"));
        let expected = || {
            bad(format!(
                "expected an object like {{ {} }}",
                allowed.join(", ")
            ))
        };
        if !v.is_object() {
            return Err(expected());
        }
        match try_is_array(&v) {
            Ok(false) => {}
            Ok(true) => return Err(expected()),
            Err(e) => return Err(bad(format!("reading the parameters threw: {}", thrown(&e)))),
        }
        let mut a = Args {
            call,
            q: None,
            sigma: None,
            steps: None,
            delta: None,
            epsilon: None,
            conversion: None,
            accountant: None,
            orders: None,
            epsilons: None,
            epsilon_max: None,
            fpr: None,
            points: None,
        };
        let keys = try_keys(&v)
            .map_err(|e| bad(format!("listing the parameters threw: {}", thrown(&e))))?;
        if keys.length() > 64 {
            return Err(bad(format!("too many parameters ({})", keys.length())));
        }
        for k in keys.iter() {
            let k = k.as_string().unwrap_or_default();
            let name = canonical(&k);
            // Refuse keys the function does not use (a typo must not fall back to a default).
            if scheme_key(&k).is_some() {
                return Err(bad(format!(
                    "'{}' (a sampling scheme, adjacency or group) is answered by the async API, sgm-rdp-async.js, with 'delta' for epsilon or 'epsilon' for delta",
                    clip(&k)
                )));
            }
            if !allowed.contains(&name) {
                return Err(bad(format!(
                    "unknown parameter '{}' (expected {})",
                    clip(&k),
                    allowed.join(", ")
                )));
            }
            let x = try_get(&v, &JsValue::from_str(&k))
                .map_err(|e| bad(format!("reading '{}' threw: {}", clip(&k), thrown(&e))))?;
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
            let text = |what: &str| {
                x.as_string().ok_or_else(|| {
                    bad(format!(
                        "'{}' must be {what}, got {}",
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
                "epsilonMax" => a.epsilon_max = Some(num()?),
                "points" => a.points = Some(num()?),
                "conversion" => a.conversion = Some(text("\"improved\" or \"classic\"")?),
                "accountant" => a.accountant = Some(text("\"rdp\", \"pld\" or \"both\"")?),
                "orders" => a.orders = Some(numbers(call, &k, &x)?),
                "epsilons" => a.epsilons = Some(numbers(call, &k, &x)?),
                "fpr" => a.fpr = Some(numbers(call, &k, &x)?),
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

/// A JS array of numbers, read element by element through `catch` imports, its length
/// checked before anything is allocated.
fn numbers(call: &str, key: &str, x: &JsValue) -> Result<Vec<f64>, JsError> {
    let bad = |m: String| JsError::new(&format!("{call}: {m}"));
    let key = clip(key);
    match try_is_array(x) {
        Ok(true) => {}
        Ok(false) => {
            return Err(bad(format!(
                "'{key}' must be an array of numbers, got {}",
                describe(x)
            )))
        }
        Err(e) => return Err(bad(format!("reading '{key}' threw: {}", thrown(&e)))),
    }
    let len = try_get(x, &JsValue::from_str("length"))
        .map_err(|e| bad(format!("reading '{key}'.length threw: {}", thrown(&e))))?
        .as_f64()
        .unwrap_or(f64::NAN);
    if !((0.0..=MAX_LIST).contains(&len) && len.fract() == 0.0) {
        return Err(bad(format!(
            "'{key}' may hold at most {MAX_LIST} numbers, got length {len}"
        )));
    }
    let mut o = Vec::with_capacity(len as usize);
    for i in 0..len as u32 {
        let e = try_get(x, &JsValue::from(i))
            .map_err(|e| bad(format!("reading {key}[{i}] threw: {}", thrown(&e))))?;
        o.push(
            e.as_f64()
                .ok_or_else(|| bad(format!("{key}[{i}] must be a number, got {}", describe(&e))))?,
        );
    }
    Ok(o)
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
    } else if try_is_array(x).unwrap_or(false) {
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
/// (Mironov–Talwar–Zhang §3.3), and composed over `steps` (RDP adds up, Mironov 2017 Prop. 1).
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

/// The one accountant type of every front end.
use crate::engine::Accountant as Acct;

impl Args {
    fn accountant(&self) -> Result<Acct, JsError> {
        let acct = match self.accountant.as_deref() {
            None | Some("rdp") => Acct::Rdp,
            Some("pld") => Acct::Pld,
            Some("both") => Acct::Both,
            Some(other) => {
                return Err(JsError::new(&format!(
                    "{}: 'accountant' must be \"rdp\", \"pld\" or \"both\", got '{}'",
                    self.call,
                    clip(other)
                )))
            }
        };
        Ok(acct)
    }
}

impl Args {
    /// The run's answer by the engine's one rule for every front end
    /// ([`engine::answer::answer`]): exact RDP's optimum (always run here: the API reports
    /// it beside the tight answer), the tight bracket when asked, and — for "both" — why
    /// it is unavailable.
    fn answer(
        &self,
        asked: Asked,
        acct: Acct,
    ) -> Result<(Optimum, Option<pld::Bracket>, Option<String>), JsError> {
        let a = engine::answer::answer(&self.run()?, asked, acct, self.conversion()?, true)
            .map_err(|e| self.fail(e))?;
        let o = a
            .rdp
            .ok_or_else(|| JsError::new("exact RDP gave no answer"))?;
        Ok(match a.tight {
            Some(Ok((b, _))) => (o, Some(b), None),
            Some(Err(e)) => (o, None, Some(e.to_string())),
            None => (o, None, None),
        })
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EpsOut {
    epsilon: f64,
    alpha: f64,
    grid_epsilon: f64,
    grid_alpha: f64,
    at_edge: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    epsilon_lower: Option<f64>,
    /// Some(None) = null: "both" without a tight answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    epsilon_pld: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    epsilon_pld_lower: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pld_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    epsilon_rdp: Option<f64>,
}

/// ε at δ after `steps` steps: exact RDP minimized over α (default); with
/// `accountant: "pld"` the tight PLD bracket (ε = its certified upper bound), or `"both"`.
#[wasm_bindgen(unchecked_return_type = "EpsilonResult")]
pub fn epsilon(
    #[wasm_bindgen(unchecked_param_type = "EpsilonParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    #[cfg(feature = "worker")]
    if let Some(r) = by_scheme("epsilon", &p)? {
        return Ok(r);
    }
    let a = Args::parse(
        "epsilon",
        p,
        &[
            "q",
            "sigma",
            "steps",
            "delta",
            "conversion",
            "orders",
            "accountant",
        ],
    )?;
    let acct = a.accountant()?;
    let d = a.need("delta", a.delta)?;
    let (o, t, pld_error) = a.answer(Asked::Epsilon(d), acct)?;
    let pld_only = acct == Acct::Pld;
    let tried = acct != Acct::Rdp;
    out(&EpsOut {
        epsilon: match (pld_only, t) {
            (true, Some(t)) => t.upper,
            _ => o.value,
        },
        alpha: o.alpha,
        grid_epsilon: o.grid_value,
        grid_alpha: o.grid_alpha,
        at_edge: o.at_edge,
        epsilon_lower: t.filter(|_| pld_only).map(|t| t.lower),
        epsilon_pld: tried.then(|| t.map(|t| t.upper)),
        epsilon_pld_lower: tried.then(|| t.map(|t| t.lower)),
        pld_error,
        epsilon_rdp: pld_only.then_some(o.value),
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
    #[serde(skip_serializing_if = "Option::is_none")]
    delta_lower: Option<f64>,
    /// Some(None) = null: "both" without a tight answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    delta_pld: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta_pld_lower: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pld_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta_rdp: Option<f64>,
}

/// δ at ε after `steps` steps: exact RDP minimized over α (default), or the PLD bracket.
#[wasm_bindgen(unchecked_return_type = "DeltaResult")]
pub fn delta(
    #[wasm_bindgen(unchecked_param_type = "DeltaParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    #[cfg(feature = "worker")]
    if let Some(r) = by_scheme("delta", &p)? {
        return Ok(r);
    }
    let a = Args::parse(
        "delta",
        p,
        &[
            "q",
            "sigma",
            "steps",
            "epsilon",
            "conversion",
            "orders",
            "accountant",
        ],
    )?;
    let acct = a.accountant()?;
    let e = a.need("epsilon", a.epsilon)?;
    let (o, t, pld_error) = a.answer(Asked::Delta(e), acct)?;
    let pld_only = acct == Acct::Pld;
    let tried = acct != Acct::Rdp;
    out(&DeltaOut {
        delta: match (pld_only, t) {
            (true, Some(t)) => t.upper,
            _ => o.value,
        },
        alpha: o.alpha,
        grid_delta: o.grid_value,
        grid_alpha: o.grid_alpha,
        at_edge: o.at_edge,
        delta_lower: t.filter(|_| pld_only).map(|t| t.lower),
        delta_pld: tried.then(|| t.map(|t| t.upper)),
        delta_pld_lower: tried.then(|| t.map(|t| t.lower)),
        pld_error,
        delta_rdp: pld_only.then_some(o.value),
    })
}

/// The privacy profile δ(ε) from the PLD accountant: a certified bracket at each ε.
#[wasm_bindgen(unchecked_return_type = "ProfilePoint[]")]
pub fn profile(
    #[wasm_bindgen(unchecked_param_type = "ProfileParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    let a = Args::parse(
        "profile",
        p,
        &["q", "sigma", "steps", "epsilons", "epsilonMax"],
    )?;
    let eps = a.epsilon_grid()?;
    let pts = pld::profile(a.sgm()?, a.steps()?, &eps).map_err(|e| a.fail(e))?;
    out(&pts)
}

#[derive(Serialize)]
struct RiskPoint {
    fpr: f64,
    tpr: f64,
}

#[derive(Serialize)]
struct RiskOut {
    fpr: Vec<f64>,
    tpr: Vec<f64>,
    curve: Vec<RiskPoint>,
}

/// The bound on a membership-inference attack's true-positive rate at given
/// false-positive rates, from the PLD privacy profile (and as a curve).
#[wasm_bindgen(js_name = attackRisk, unchecked_return_type = "AttackRiskResult")]
pub fn attack_risk(
    #[wasm_bindgen(unchecked_param_type = "AttackRiskParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    let a = Args::parse("attackRisk", p, &["q", "sigma", "steps", "fpr"])?;
    let fpr = a
        .fpr
        .clone()
        .unwrap_or_else(|| crate::engine::pld::DEFAULT_FPRS.to_vec());
    if fpr.is_empty() {
        return Err(JsError::new(
            "attackRisk: 'fpr' must hold at least one rate",
        ));
    }
    let r = crate::render::tight::risk_data(a.sgm()?, a.steps()?, &fpr).map_err(|e| a.fail(e))?;
    out(&RiskOut::from(r))
}

impl From<crate::render::tight::Risk> for RiskOut {
    fn from(r: crate::render::tight::Risk) -> Self {
        RiskOut {
            fpr: r.fpr,
            tpr: r.tpr,
            curve: r
                .curve
                .into_iter()
                .map(|(fpr, tpr)| RiskPoint { fpr, tpr })
                .collect(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TrainingOut {
    steps: Vec<f64>,
    pld_upper: Vec<f64>,
    pld_lower: Vec<f64>,
    rdp: Vec<f64>,
}

/// ε after each of `points` log-spaced checkpoints up to `steps` ("ε over training"):
/// the PLD bracket at a chart's precision (≤ 0.5 % wide, each on its own grid: ~4× faster
/// than the headline's 0.04 %) and the exact-RDP ε (one per-step curve).
#[wasm_bindgen(js_name = epsilonOverTraining, unchecked_return_type = "TrainingResult")]
pub fn epsilon_over_training(
    #[wasm_bindgen(unchecked_param_type = "TrainingParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    let a = Args::parse(
        "epsilonOverTraining",
        p,
        &["q", "sigma", "steps", "delta", "points"],
    )?;
    let points = a.points.unwrap_or(24.0);
    if !(points.fract() == 0.0 && (2.0..=200.0).contains(&points)) {
        return Err(JsError::new(&format!(
            "epsilonOverTraining: 'points' must be a whole number in [2, 200], got {points}"
        )));
    }
    let (m, t, d) = (a.sgm()?, a.steps()?, a.need("delta", a.delta)?);
    let tr = crate::render::tight::training_data(m, t, d, points as usize, None)
        .map_err(|e| a.fail(e))?;
    out(&TrainingOut::from(tr))
}

impl From<crate::render::tight::Training> for TrainingOut {
    fn from(t: crate::render::tight::Training) -> Self {
        TrainingOut {
            steps: t.steps,
            pld_upper: t.pld_upper,
            pld_lower: t.pld_lower,
            rdp: t.rdp,
        }
    }
}

impl Args {
    /// The profile's ε values: `epsilons`, or 101 points on [0, epsilonMax] (default 10).
    fn epsilon_grid(&self) -> Result<Vec<f64>, JsError> {
        if let Some(e) = &self.epsilons {
            if self.epsilon_max.is_some() {
                return Err(JsError::new(&format!(
                    "{}: give 'epsilons' or 'epsilonMax', not both",
                    self.call
                )));
            }
            // Named by its key here (the engine's own message speaks of "the list").
            if e.is_empty() || e.len() > 10_000 {
                return Err(JsError::new(&format!(
                    "{}: 'epsilons' must hold 1 to 10000 values, got {}",
                    self.call,
                    e.len()
                )));
            }
            return Ok(e.clone());
        }
        crate::engine::pld::profile_grid(self.epsilon_max).map_err(|top| {
            JsError::new(&format!(
                "{}: 'epsilonMax' must be in (0, 1e4], got {top}",
                self.call
            ))
        })
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SigmaOut {
    sigma: f64,
    epsilon: f64,
    /// The RDP optimum's order; `null` with accountant "pld" (never NaN).
    alpha: Option<f64>,
    at_lower_limit: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    epsilon_lower: Option<f64>,
}

/// Calibration takes accountant "rdp" or "pld" (one target, one accountant): true for pld.
fn calibrate_accountant(a: &Args) -> Result<bool, JsError> {
    match a.accountant()?.for_calibration() {
        Some(acct) => Ok(acct == Acct::Pld),
        None => Err(JsError::new(&format!(
            "{}: 'accountant' must be \"rdp\" or \"pld\" here (one target, one accountant)",
            a.call
        ))),
    }
}

/// The smallest noise multiplier whose ε after `steps` steps is at most `epsilon`
/// (exact RDP by default; with `accountant: "pld"`, the PLD's certified upper bound).
#[wasm_bindgen(js_name = calibrateSigma, unchecked_return_type = "CalibrateSigmaResult")]
pub fn calibrate_sigma(
    #[wasm_bindgen(unchecked_param_type = "CalibrateSigmaParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    let a = Args::parse(
        "calibrateSigma",
        p,
        &[
            "epsilon",
            "delta",
            "q",
            "steps",
            "conversion",
            "orders",
            "accountant",
        ],
    )?;
    if calibrate_accountant(&a)? {
        let (sigma, t) = pld::calibrate_sigma(
            a.need("epsilon", a.epsilon)?,
            a.need("delta", a.delta)?,
            a.q()?,
            a.steps()?,
        )
        .map_err(|e| a.fail(e))?;
        return out(&SigmaOut {
            sigma,
            epsilon: t.epsilon.upper,
            alpha: None,
            at_lower_limit: false,
            epsilon_lower: Some(t.epsilon.lower),
        });
    }
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
        alpha: Some(c.alpha),
        at_lower_limit: c.at_lower_limit,
        epsilon_lower: None,
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StepsOut {
    steps: f64,
    epsilon: f64,
    /// The RDP optimum's order; `null` with accountant "pld" (never NaN).
    alpha: Option<f64>,
    at_upper_limit: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    epsilon_lower: Option<f64>,
}

/// The largest number of steps whose ε is at most `epsilon` (exact RDP by default; with
/// `accountant: "pld"`, the PLD's certified upper bound).
#[wasm_bindgen(js_name = calibrateSteps, unchecked_return_type = "CalibrateStepsResult")]
pub fn calibrate_steps(
    #[wasm_bindgen(unchecked_param_type = "CalibrateStepsParams")] p: JsValue,
) -> Result<JsValue, JsError> {
    let a = Args::parse(
        "calibrateSteps",
        p,
        &[
            "epsilon",
            "delta",
            "q",
            "sigma",
            "conversion",
            "orders",
            "accountant",
        ],
    )?;
    if calibrate_accountant(&a)? {
        let (steps, t) = pld::calibrate_steps(
            a.need("epsilon", a.epsilon)?,
            a.need("delta", a.delta)?,
            a.sgm()?,
        )
        .map_err(|e| a.fail(e))?;
        return out(&StepsOut {
            steps: steps as f64,
            epsilon: t.epsilon.upper,
            alpha: None,
            at_upper_limit: steps == engine::MAX_STEPS,
            epsilon_lower: Some(t.epsilon.lower),
        });
    }
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
        alpha: Some(c.alpha),
        at_upper_limit: c.at_upper_limit,
        epsilon_lower: None,
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

/// ε of every accountant route of papers (Dwork–Rothblum; Mironov–Talwar–Zhang; Chaudhuri et al.) for the same run, each
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

/// The page worker's half of the RDP model at small σ (internal to pld-worker.js, so only
/// in the worker-only wasm):
/// `{q, sigma, steps, delta, conversion}` and ω → `{rdp, value, alpha, gridAlpha,
/// gridValue, atEdge, tcdpRho}` ([`crate::render::Heavy`]).
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = heavyModel, skip_typescript)]
pub fn heavy_model(p: JsValue, omega: f64) -> Result<JsValue, JsError> {
    let a = Args::parse(
        "heavyModel",
        p,
        &["q", "sigma", "steps", "delta", "conversion"],
    )?;
    let mut inputs = crate::render::Inputs::mnist();
    let m = a.sgm()?;
    (inputs.q, inputs.sigma) = (m.q(), m.sigma());
    inputs.steps = a.steps()?;
    inputs.delta = a.need("delta", a.delta)?;
    inputs.conversion = a.conversion()?;
    inputs.omega = omega;
    let h = crate::render::Heavy::compute(inputs).map_err(|e| a.fail(e))?;
    let o = js_sys::Object::new();
    let nums = js_sys::Array::new();
    for x in &h.rdp {
        nums.push(&JsValue::from_f64(*x));
    }
    for (k, v) in [
        ("rdp", nums.into()),
        ("value", h.opt.value.into()),
        ("alpha", h.opt.alpha.into()),
        ("gridAlpha", h.opt.grid_alpha.into()),
        ("gridValue", h.opt.grid_value.into()),
        ("atEdge", h.opt.at_edge.into()),
        (
            "tcdpRho",
            h.tcdp_rho.map(JsValue::from).unwrap_or(JsValue::NULL),
        ),
    ] {
        let _ = js_sys::Reflect::set(&o, &k.into(), &v);
    }
    Ok(o.into())
}

/// Chart C's data for `sigma` (internal to pld-worker.js): [q, cond4, cond5, min, exact] × 12.
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = heavyChartC, skip_typescript)]
pub fn heavy_chart_c(sigma: f64) -> Result<Vec<f64>, JsError> {
    let d = crate::render::max_order_curves(sigma, 12).map_err(|e| JsError::new(&e.to_string()))?;
    Ok(d.iter()
        .flat_map(|(q, m)| [*q, m.cond4, m.cond5, m.min, m.exact])
        .collect())
}

/// μ-GDP with its fit (the command line's `gdp`; Dong, Roth, Su's trade-off curve from the
/// certified privacy profile, the pessimistic μ, and the regret of Gomez, Kulynych, Carmon,
/// Troncoso): `{ q | sampleRate, sigma | noiseMultiplier, steps }`, or any scheme
/// (`sampling`, `adjacency`, `groupSize`, …) as for `epsilon` → `{ mu, muLower, regret,
/// fprFloor, advantage, advantageLower, tradeoff: [{ fpr, fnrMin, tprMax }] }` and the run's
/// fields. Only in the worker-only wasm (`sgm-rdp-async.js`).
#[cfg(feature = "worker")]
#[wasm_bindgen(unchecked_return_type = "GdpResult")]
pub fn gdp(params: JsValue) -> Result<JsValue, JsError> {
    by_scheme("gdp", &params)?
        .ok_or_else(|| JsError::new("gdp: expected an object like { q, sigma, steps }"))
}

/// A training configuration in its library's own terms (`{library: "opacus",
/// noise_multiplier: 1, dataset_size: 50000, batch_size: 512, epochs: 30, delta: 1e-5,
/// poisson_sampling: false}`; keys snake_case or camelCase) → what that library prints,
/// the certified ε of the code that ran and each mismatch (`printedEpsilon`,
/// `certifiedEpsilon`, `certifiedEpsilonLower`, `findings`, …): the query layer's `check`,
/// as `sgm-rdp check --json` answers. Only in the worker-only wasm (`sgm-rdp-async.js`).
#[cfg(feature = "worker")]
#[wasm_bindgen(unchecked_return_type = "CheckResult")]
pub fn check(config: JsValue) -> Result<JsValue, JsError> {
    use serde_json::{Map, Value};
    let bad = |m: String| JsError::new(&format!("check: {m}"));
    if !config.is_object() || try_is_array(&config).unwrap_or(true) {
        return Err(bad(
            "expected an object like { library, noise_multiplier, ... }".into(),
        ));
    }
    let keys = try_keys(&config)
        .map_err(|e| bad(format!("listing the configuration threw: {}", thrown(&e))))?;
    if keys.length() > 64 {
        return Err(bad("at most 64 keys".into()));
    }
    let mut map = Map::new();
    for k in keys.iter().filter_map(|k| k.as_string()) {
        let x = try_get(&config, &JsValue::from_str(&k))
            .map_err(|e| bad(format!("reading '{}' threw: {}", clip(&k), thrown(&e))))?;
        let value = if x.is_undefined() || x.is_null() {
            continue;
        } else if let Some(b) = x.as_bool() {
            Value::Bool(b)
        } else if let Some(f) = x.as_f64() {
            serde_json::Number::from_f64(f)
                .map(Value::Number)
                .ok_or_else(|| bad(format!("'{}' must be a finite number", clip(&k))))?
        } else if let Some(t) = x.as_string().filter(|t| t.len() <= 100) {
            Value::String(t)
        } else {
            return Err(bad(format!(
                "'{}' must be a number, a boolean or a short string, got {}",
                clip(&k),
                describe(&x)
            )));
        };
        map.insert(snake_case(&k), value);
    }
    let answer = crate::query::check(&map).map_err(bad)?;
    out(&camel_case(Value::Object(answer.fields)))
}

/// One `batch` line → its answer line, exactly as `sgm-rdp batch` gives it: the command
/// line's own query layer (sampling schemes, adjacency, user-level privacy, both
/// accountants, dataset terms), so the worker answers what the command line answers, with
/// the same refusals. Only in the worker-only wasm (`sgm-rdp-worker.js`).
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = batchLine)]
pub fn batch_line(line: &str) -> String {
    crate::query::line(line)
}

/// One command line — the words after `sgm-rdp`, e.g. `["gdp", "--q", "0.01", "--sigma",
/// "1", "--steps", "1000", "--json"]` — → what the command line prints on stdout; a refusal
/// throws an `Error` with the command line's one-line reason. Every command and flag of the
/// command line (μ-GDP, attack-risk calibration, user-level ε, sampling schemes, …), with
/// its numbers. Only in the worker-only wasm (`sgm-rdp-worker.js`, `sgm-rdp-async.js`).
#[cfg(feature = "worker")]
#[wasm_bindgen]
pub fn command(args: JsValue) -> Result<String, JsError> {
    let fail = |m: &str| JsError::new(&format!("command: {m}"));
    if !try_is_array(&args).unwrap_or(false) {
        return Err(fail("the arguments must be an array of strings"));
    }
    // Read through the `catch` imports: a Proxy or a getter that throws is an Err here.
    let len = try_get(&args, &JsValue::from_str("length"))
        .ok()
        .and_then(|l| l.as_f64())
        .unwrap_or(f64::NAN);
    if !(0.0..=200.0).contains(&len) {
        return Err(fail("at most 200 arguments"));
    }
    let words = (0..len as u32)
        .map(|i| {
            try_get(&args, &JsValue::from(i))
                .ok()
                .and_then(|w| w.as_string())
                .filter(|s| s.len() <= 10_000)
        })
        .collect::<Option<Vec<String>>>()
        .ok_or_else(|| fail("every argument must be a string (at most 10000 characters)"))?;
    if words.first().is_some_and(|w| w == "batch") {
        return Err(fail("'batch' reads lines: call batchLine(line) for each"));
    }
    crate::query::run(&words).map_err(|e| fail(&e))
}
