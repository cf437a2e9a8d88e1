//! The page worker's tight charts (`tightCharts`, `tightRiskFirst`): worker-only bindings.

use super::*;

/// The page worker's three tight charts for a Poisson run of one example
/// ([`crate::render::tight::charts_data`]: the grids are decided there): `{q, sigma, steps,
/// delta}` and the headline's bracket (`upper`, `lower`; NaN when there is none) →
/// `{training: {steps, pldUpper, pldLower, rdp}?, profile: [{epsilon, delta: {upper,
/// lower}, rdp}]?, risk: {fpr, tpr, curve: [{fpr, tpr}]}?, errors: {training?, profile?,
/// risk?}}` (a part that fails is absent, its reason under `errors`).
/// `part`: "training", "profile-risk" (ε over training apart from the profile and the risk,
/// computed side by side by two workers), "profile" (the profile, with the risk only where the
/// two are read from one composition), "risk" (the risk alone: no headline needed, see
/// [`tight_risk_first`]), anything else all three.
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = tightCharts, skip_typescript)]
pub fn tight_charts(p: JsValue, upper: f64, lower: f64, part: &str) -> Result<JsValue, JsError> {
    use crate::render::tight::{self, Parts};
    let a = Args::parse("tightCharts", p, &["q", "sigma", "steps", "delta"])?;
    let (m, t, d) = (a.sgm()?, a.steps()?, a.need("delta", a.delta)?);
    // (The headline's bracket is the chart's last point as given: only a well-formed one.)
    let run = (upper.is_finite() && 0.0 <= lower && lower <= upper).then_some((upper, lower));
    let parts = match part {
        "training" => Parts::Training,
        "profile-risk" => Parts::ProfileRisk,
        "profile" => Parts::Profile,
        "risk" => Parts::Risk,
        _ => Parts::All,
    };
    let c = tight::charts_data(m, t, d, run, parts);
    // A part that failed is absent, its reason under `errors`; one not asked, absent too.
    let mut errors = std::collections::BTreeMap::new();
    fn keep<T>(
        errors: &mut std::collections::BTreeMap<&'static str, String>,
        name: &'static str,
        r: Option<Result<T, crate::engine::Error>>,
    ) -> Option<T> {
        r?.map_err(|e| errors.insert(name, e.to_string())).ok()
    }
    let charts = ChartsOut {
        training: keep(&mut errors, "training", c.training).map(TrainingOut::from),
        profile: keep(&mut errors, "profile", c.profile).map(|rows| {
            rows.into_iter()
                .map(|r| ProfileRowOut {
                    epsilon: r.epsilon,
                    delta: pld::Bracket {
                        upper: r.upper,
                        lower: r.lower,
                    },
                    rdp: r.rdp,
                })
                .collect()
        }),
        risk: keep(&mut errors, "risk", c.risk).map(RiskOut::from),
        errors,
    };
    out(&charts)
}

/// Whether the risk chart of a Poisson run `{q, sigma, steps, delta}` is most likely read
/// apart from its profile, so that the page's worker asks its helper for it
/// (`tightCharts(run, NaN, NaN, "risk")`) beside the headline
/// ([`crate::render::tight::risk_first`]; a scheduling hint, never a number).
#[cfg(feature = "worker")]
#[wasm_bindgen(js_name = tightRiskFirst, skip_typescript)]
pub fn tight_risk_first(p: JsValue) -> Result<bool, JsError> {
    let a = Args::parse("tightRiskFirst", p, &["q", "sigma", "steps", "delta"])?;
    let (m, t, d) = (a.sgm()?, a.steps()?, a.need("delta", a.delta)?);
    Ok(crate::render::tight::risk_first(m, t, d))
}

/// [`tight_charts`]' answer.
#[cfg(feature = "worker")]
#[derive(Serialize)]
struct ChartsOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    training: Option<TrainingOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<Vec<ProfileRowOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    risk: Option<RiskOut>,
    errors: std::collections::BTreeMap<&'static str, String>,
}

/// A profile row as the page reads it: ε, the bracket on δ, exact RDP's δ.
#[cfg(feature = "worker")]
#[derive(Serialize)]
struct ProfileRowOut {
    epsilon: f64,
    delta: pld::Bracket,
    rdp: f64,
}
