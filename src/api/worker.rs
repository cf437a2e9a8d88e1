//! The page's worker bindings: what the worker computes beyond Poisson sampling's
//! headline and charts (`crate::worker`, tested natively); www/pld-worker.js only
//! schedules and caches.

use super::*;

/// A worker request as a JSON value (None when it cannot be read as one).
#[cfg(feature = "worker")]
fn request(data: &JsValue) -> Option<serde_json::Value> {
    serde_wasm_bindgen::from_value(data.clone()).ok()
}

#[cfg(feature = "worker")]
fn thrown_as(r: Result<serde_json::Value, String>) -> Result<JsValue, JsError> {
    out(&r.map_err(|e| JsError::new(&e))?)
}

/// Why the worker refuses a request (null: it is well formed).
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = workerCheck, skip_typescript)]
pub fn worker_check(data: JsValue) -> Option<String> {
    match request(&data) {
        Some(d) => crate::worker::check(&d).err(),
        None => Some("a message must be an object of numbers and strings".into()),
    }
}

/// A run request's answers beside Poisson sampling's headline, and whether one is the
/// run's own (`own`).
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = workerSide, skip_typescript)]
pub fn worker_side(data: JsValue) -> Result<JsValue, JsError> {
    let d = request(&data).ok_or_else(|| JsError::new("workerSide: unreadable request"))?;
    out(&crate::worker::side_answers(&d))
}

/// `f` of a request and its side answers, as the worker answers it.
#[cfg(feature = "worker")]
fn with_side(
    data: &JsValue,
    side: &JsValue,
    f: fn(&serde_json::Value, &serde_json::Value) -> Result<serde_json::Value, String>,
) -> Result<JsValue, JsError> {
    let (d, s) = request(data)
        .zip(request(side))
        .ok_or_else(|| JsError::new("worker: unreadable request"))?;
    thrown_as(f(&d, &s))
}

/// The own scheme's three charts (each standing alone; throws when none can be drawn).
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = workerSchemeCharts, skip_typescript)]
pub fn worker_scheme_charts(data: JsValue, side: JsValue) -> Result<JsValue, JsError> {
    with_side(&data, &side, crate::worker::scheme_charts)
}

/// The target's most steps a tight solve at a time (`worker::TargetSearch`): the helper
/// calls `advance()` between messages — `undefined` while it searches, then the steps
/// (`worker::most_steps`' answer), or it throws the refusal.
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = WorkerTargetSearch, skip_typescript)]
pub struct WorkerTargetSearch(crate::worker::TargetSearch);

#[cfg(feature = "worker")]
#[wasm_bindgen(js_class = WorkerTargetSearch)]
impl WorkerTargetSearch {
    #[wasm_bindgen(constructor)]
    pub fn new(data: JsValue, side: JsValue) -> Result<WorkerTargetSearch, JsError> {
        let (d, s) = request(&data)
            .zip(request(&side))
            .ok_or_else(|| JsError::new("worker: unreadable request"))?;
        Ok(WorkerTargetSearch(crate::worker::TargetSearch::new(&d, &s)))
    }

    /// One more tight solve of the search at most.
    pub fn advance(&mut self) -> Result<JsValue, JsError> {
        match self.0.advance(1) {
            None => Ok(JsValue::UNDEFINED),
            Some(r) => thrown_as(r),
        }
    }
}

/// μ-GDP with its fit for the run (its own scheme's, else Poisson sampling's).
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = workerGdp, skip_typescript)]
pub fn worker_gdp(data: JsValue, side: JsValue) -> Result<JsValue, JsError> {
    with_side(&data, &side, crate::worker::gdp)
}

/// "What your library reports": the command line's `libraries` for the run.
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = workerLibrary, skip_typescript)]
pub fn worker_library(data: JsValue) -> Result<JsValue, JsError> {
    let d = request(&data).ok_or_else(|| JsError::new("worker: unreadable request"))?;
    thrown_as(crate::worker::library(&d))
}

/// "What do I need?": the command line's calibrate for the request's `which`.
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = workerCalibrate, skip_typescript)]
pub fn worker_calibrate(data: JsValue) -> Result<JsValue, JsError> {
    let d = request(&data).ok_or_else(|| JsError::new("worker: unreadable request"))?;
    thrown_as(crate::worker::calibrate(&d))
}

/// "Check my training code": the request's configuration through the query layer's `check`
/// (`crate::worker::check_config`).
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = workerCheckConfig, skip_typescript)]
pub fn worker_check_config(data: JsValue) -> Result<JsValue, JsError> {
    let d = request(&data).ok_or_else(|| JsError::new("worker: unreadable request"))?;
    thrown_as(crate::worker::check_config(&d))
}

/// Correlated noise for the run shown, through the query layer's correlated-noise line
/// (`crate::worker::correlated`).
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = workerCorrelated, skip_typescript)]
pub fn worker_correlated(data: JsValue) -> Result<JsValue, JsError> {
    let d = request(&data).ok_or_else(|| JsError::new("worker: unreadable request"))?;
    thrown_as(crate::worker::correlated(&d))
}

/// "Audit against the certificate": the request's scores (CSV) against the run shown, through
/// the query layer's audit (`crate::worker::audit`).
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = workerAudit, skip_typescript)]
pub fn worker_audit(data: JsValue) -> Result<JsValue, JsError> {
    let d = request(&data).ok_or_else(|| JsError::new("worker: unreadable request"))?;
    thrown_as(crate::worker::audit(&d))
}
