//! The JS API's audits (issue 65): `audit` (canary scores → empirical lower bounds beside the
//! run's certificate) and `auditPlan`, the query layer's `audit_line` / `audit_plan_line`; and
//! `correlated` (issue 67), its `matrix_line`, through the same parameter reading.
//! Only in the worker-only wasm (`sgm-rdp-async.js`).

use super::*;

/// An audit's or a plan's parameter object → the query layer's keys (snake_case): numbers,
/// booleans, short strings and arrays of numbers (plain or typed arrays).
#[cfg(feature = "worker")]
fn audit_keys(
    params: &JsValue,
    name: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, JsError> {
    use serde_json::{Map, Number, Value};
    let bad = |m: String| JsError::new(&format!("{name}: {m}"));
    if !params.is_object() || try_is_array(params).unwrap_or(true) {
        return Err(bad(
            "expected an object like { inScores, outScores, delta }".into(),
        ));
    }
    let keys = try_keys(params)
        .map_err(|e| bad(format!("listing the parameters threw: {}", thrown(&e))))?;
    if keys.length() > 64 {
        return Err(bad("at most 64 keys".into()));
    }
    let number = |k: &str, f: f64| {
        Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| bad(format!("'{}' must hold finite numbers", clip(k))))
    };
    // A plain array's numbers (of key `k`), each named `label[i]` in a refusal.
    let numbers = |k: &str, label: &str, a: &js_sys::Array| -> Result<Vec<Value>, JsError> {
        a.iter()
            .enumerate()
            .map(|(i, y)| {
                let f = y.as_f64().ok_or_else(|| {
                    bad(format!(
                        "{label}[{i}] must be a number, got {}",
                        describe(&y)
                    ))
                })?;
                number(k, f)
            })
            .collect()
    };
    let mut map = Map::new();
    for k in keys.iter().filter_map(|k| k.as_string()) {
        let x = try_get(params, &JsValue::from_str(&k))
            .map_err(|e| bad(format!("reading '{}' threw: {}", clip(&k), thrown(&e))))?;
        let value = if x.is_undefined() || x.is_null() {
            continue;
        } else if let Some(b) = x.as_bool() {
            Value::Bool(b)
        } else if let Some(f) = x.as_f64() {
            number(&k, f)?
        } else if let Some(t) = x.as_string().filter(|t| t.len() <= 100) {
            Value::String(t)
        } else if let Some(a) = x.dyn_ref::<js_sys::Float64Array>() {
            Value::Array(
                a.to_vec()
                    .into_iter()
                    .map(|f| number(&k, f))
                    .collect::<Result<_, _>>()?,
            )
        } else if let Some(a) = x.dyn_ref::<js_sys::Float32Array>() {
            Value::Array(
                a.to_vec()
                    .into_iter()
                    .map(|f| number(&k, f as f64))
                    .collect::<Result<_, _>>()?,
            )
        } else if try_is_array(&x).unwrap_or(false) {
            let a = js_sys::Array::from(&x);
            let label = clip(&k);
            if try_is_array(&a.get(0)).unwrap_or(false) {
                // An array of rows (a correlated-noise strategy's matrix).
                if a.length() as usize > crate::engine::matrix::MAX_MATRIX {
                    return Err(bad(format!(
                        "'{label}' holds more than {} rows",
                        crate::engine::matrix::MAX_MATRIX
                    )));
                }
                let rows = a.iter().enumerate().map(|(i, row)| {
                    numbers(&k, &format!("{label}[{i}]"), &js_sys::Array::from(&row))
                        .map(Value::Array)
                });
                Value::Array(rows.collect::<Result<_, _>>()?)
            } else {
                if a.length() as usize > crate::engine::audit::MAX_SCORES {
                    return Err(bad(format!(
                        "'{label}' holds more than {} values",
                        crate::engine::audit::MAX_SCORES
                    )));
                }
                Value::Array(numbers(&k, &label, &a)?)
            }
        } else {
            return Err(bad(format!(
                "'{}' must be a number, a boolean, a short string or an array of numbers, got {}",
                clip(&k),
                describe(&x)
            )));
        };
        let snake = snake_case(&k);
        let snake = match snake.as_str() {
            "noise_multiplier" => "sigma".to_string(),
            "sample_rate" => "q".to_string(),
            _ => snake,
        };
        map.insert(snake, value);
    }
    Ok(map)
}

/// Empirical lower bounds from canary scores (docs/audit.md): `{ inScores, outScores,
/// delta?, significance?, fprs?, threshold?, lowerIsMember?, ...the run (q | sampleRate,
/// sigma | noiseMultiplier, steps, or datasetSize, batchSize, epochs; a scheme) }` →
/// `{ epsilonLower, muLower, auc, roc, clopperPearson, gdp, oneRun, oneRunFdp,
/// certifiedEpsilon, certifiedMu, consistent, verdict, ... }`, as `sgm-rdp audit --json`
/// answers. Arrays may be plain or typed (Float64Array). Only in the worker-only wasm
/// (`sgm-rdp-async.js`).
#[cfg(feature = "worker")]
#[wasm_bindgen(unchecked_return_type = "AuditResult")]
pub fn audit(params: JsValue) -> Result<JsValue, JsError> {
    let map = audit_keys(&params, "audit")?;
    let answer =
        crate::query::audit_line(&map).map_err(|m| JsError::new(&format!("audit: {m}")))?;
    out(&camel_case(serde_json::Value::Object(answer)))
}

/// Correlated noise (DP-FTRL / BandMF / BLT / tree, docs/correlated-noise.md): `{ strategy
/// ("band:4", "band:4,1,0.5,0.25,0.125", "blt:0.9:0.3", "tree" or "matrix" with
/// strategyMatrix: rows), participation? ("min-sep" | "min-sep:k" | "poisson" |
/// "balls-in-bins:t" | "cyclic-bins:t"), q | sampleRate, sigma | noiseMultiplier, steps (or
/// datasetSize, batchSize, epochs), delta | epsilon, command? ("epsilon" | "delta" |
/// "calibrate"), monteCarlo? }` →
/// `{ epsilon, epsilonLower, bands, partitions, composed, scheme, ... }`, as `sgm-rdp epsilon
/// --strategy ... --json` answers. Only in the worker-only wasm.
#[cfg(feature = "worker")]
#[wasm_bindgen(unchecked_return_type = "CorrelatedResult")]
pub fn correlated(params: JsValue) -> Result<JsValue, JsError> {
    let map = audit_keys(&params, "correlated")?;
    let answer =
        crate::query::matrix_line(&map).map_err(|m| JsError::new(&format!("correlated: {m}")))?;
    out(&camel_case(serde_json::Value::Object(answer)))
}

/// How many canaries an audit of the run needs (`sgm-rdp audit-plan --json`): `{ the run,
/// delta, significance?, fraction? }` → `{ rows, twoSampleCanaries, oneRunCanaries,
/// certifiedEpsilon, certifiedMu, ... }`. Only in the worker-only wasm.
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = auditPlan, unchecked_return_type = "AuditPlanResult")]
pub fn audit_plan(params: JsValue) -> Result<JsValue, JsError> {
    let map = audit_keys(&params, "auditPlan")?;
    let answer = crate::query::audit_plan_line(&map)
        .map_err(|m| JsError::new(&format!("auditPlan: {m}")))?;
    out(&camel_case(serde_json::Value::Object(answer)))
}
