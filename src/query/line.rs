//! A JSON line (`sgm-rdp batch`, the JS API's `batchLine` and scheme calls, the Python
//! package's `query`): its keys into a [`Request`], the answer's fields beside them.

use super::*;
use crate::engine::answer::{answer, Asked};

/// One line of `sgm-rdp batch`: the input's fields plus results, or {"error": …}.
pub fn line(line: &str) -> String {
    let answer = serde_json::from_str::<Value>(line)
        .map_err(|x| format!("invalid JSON: {x}"))
        .and_then(|v| match v {
            Value::Object(obj) => line_answer(obj),
            _ => Err("each line must be a JSON object".into()),
        });
    match answer {
        Ok(v) => v.to_string(),
        Err(msg) => json!({ "error": msg }).to_string(),
    }
}

pub(super) fn field(obj: &Map<String, Value>, k: &str) -> Result<Option<f64>, String> {
    match obj.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_f64()
            .map(Some)
            .ok_or_else(|| format!("{k} is not a number")),
        Some(other) => Err(format!("{k} must be a number, got {other}")),
    }
}

/// The keys a batch line may carry; any other key is an error naming it (an unknown
/// key used to be echoed beside a result computed without it).
pub(super) const BATCH_KEYS: [&str; 22] = [
    "command",
    "tpr",
    "fpr",
    "advantage",
    "target",
    "q",
    "sigma",
    "alpha",
    "steps",
    "delta",
    "epsilon",
    "accountant",
    "group_size",
    "sampling",
    "adjacency",
    "steps_per_epoch",
    "dataset_size",
    "batch_size",
    "epochs",
    "bands",
    "max_batch",
    "selected",
];

/// A `"command": "calibrate"` line: its keys set the request as the command line's flags
/// would (`dataset_size` is `--dataset-size`), so the answer and the refusals are
/// `calibrate --json`'s, with the keys named as the line wrote them.
pub(super) fn calibrate_line(obj: &Map<String, Value>) -> Result<Value, String> {
    let as_keys = |m: String| {
        BATCH_KEYS.iter().fold(m, |m, k| {
            m.replace(&format!("--{}", k.replace('_', "-")), k)
        })
    };
    let mut f = Request {
        cli: true,
        ..Request::default()
    };
    for (k, v) in obj {
        if k == "command" {
            continue;
        }
        let value = match v {
            Value::Number(n) => n.to_string(),
            Value::String(t) => t.clone(),
            _ => return Err(format!("{k} must be a number or a string, got {v}")),
        };
        let key = k.replace('_', "-");
        let canon = flag_named(&key).map_or(key.as_str(), |f| f.name);
        set(&mut f, canon, &key, &value).map_err(as_keys)?;
        f.given.extend(flag_named(&key).map(|f| f.name));
    }
    if let Some(extra) = f.given.iter().find(|g| !allowed("calibrate").contains(g)) {
        return Err(as_keys(format!("--{extra} does not apply to calibrate")));
    }
    let mut answer = super::answer("calibrate", f).map_err(as_keys)?.fields;
    for (k, v) in obj {
        answer.entry(k.clone()).or_insert(v.clone());
    }
    Ok(Value::Object(answer))
}

/// A string key of a batch line (None when absent or null).
pub(super) fn text_field<'a>(
    obj: &'a Map<String, Value>,
    k: &str,
) -> Result<Option<&'a str>, String> {
    match obj.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("{k} must be a string, got {other}")),
    }
}

/// A line's keys (a JSON object) → the line with the answer's fields added, or the reason.
pub fn line_answer(mut obj: Map<String, Value>) -> Result<Value, String> {
    // A `check` line: a training configuration in its library's terms (its own keys).
    if obj.get("command").and_then(Value::as_str) == Some("check") {
        for (k, v) in super::check(&obj)?.fields {
            obj.entry(k).or_insert(v);
        }
        return Ok(Value::Object(obj));
    }
    // Audit lines: canary scores (their own keys beside the run's), or an audit plan.
    match obj.get("command").and_then(Value::as_str) {
        Some("audit") => return super::audit_line(&obj).map(Value::Object),
        Some("audit_plan") => return super::audit_plan_line(&obj).map(Value::Object),
        _ => {}
    }
    // Correlated noise: a strategy (and its participation) instead of independent noise.
    if ["strategy", "strategy_matrix", "participation"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        return super::matrix_line(&obj).map(Value::Object);
    }
    let unknown: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !BATCH_KEYS.contains(k))
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "unknown key(s) {} (allowed: {})",
            unknown.join(", "),
            BATCH_KEYS.join(", ")
        ));
    }
    let e = |e: engine::Error| e.to_string();
    let acct = match obj.get("accountant") {
        None | Some(Value::Null) => Accountant::Rdp,
        Some(Value::String(s)) => parse_accountant(s)?,
        Some(other) => {
            return Err(format!(
                "accountant must be \"rdp\", \"pld\" or \"both\", got {other}"
            ))
        }
    };
    let query = Request {
        q: field(&obj, "q")?,
        sigma: field(&obj, "sigma")?,
        steps: field(&obj, "steps")?,
        dataset: [
            field(&obj, "dataset_size")?,
            field(&obj, "batch_size")?,
            field(&obj, "epochs")?,
        ],
        delta: field(&obj, "delta")?,
        epsilon: field(&obj, "epsilon")?,
        accountant: obj.contains_key("accountant").then_some(acct),
        group: field(&obj, "group_size")?,
        sampling: match text_field(&obj, "sampling")? {
            Some(s) => Sampling::parse(s)?,
            None => Sampling::Poisson,
        },
        adjacency: match text_field(&obj, "adjacency")? {
            Some(s) => scheme::adjacency(s)?,
            None => engine::Adjacency::AddRemove,
        },
        steps_per_epoch: field(&obj, "steps_per_epoch")?,
        max_batch: field(&obj, "max_batch")?,
        selected: field(&obj, "selected")?,
        ..Request::default()
    };
    // A `gdp` line: μ-GDP with its fit, as the command line's `gdp --json`.
    let gdp_line = match text_field(&obj, "command")? {
        None | Some("epsilon" | "delta") => false,
        Some("gdp") => {
            for k in ["epsilon", "alpha", "accountant", "bands"] {
                if obj.contains_key(k) {
                    return Err(format!("{k} does not apply to a gdp line"));
                }
            }
            true
        }
        // A calibrate line: the command line's `calibrate --json` with the line's keys as
        // its flags (ε/δ targets, or an attack-risk target: tpr with fpr, or advantage).
        Some("calibrate") => return calibrate_line(&obj),
        Some(other) => {
            return Err(format!(
                "command must be \"gdp\", \"calibrate\", \"check\", \"audit\" or \"audit_plan\" (epsilon and delta lines need none), got \"{other}\""
            ))
        }
    };
    for k in ["tpr", "fpr", "advantage", "target"] {
        if obj.contains_key(k) {
            return Err(format!(
                "{k} applies to calibrate lines (\"command\": \"calibrate\")"
            ));
        }
    }
    if gdp_line && !query.is_plain() {
        for (k, v) in query.gdp()? {
            obj.entry(k).or_insert(v);
        }
        return gdp_at(obj, query.delta);
    }
    if !query.is_plain() {
        if field(&obj, "alpha")?.is_some() || obj.contains_key("bands") {
            return Err(
                "alpha and bands apply to Poisson sampling under add/remove adjacency".into(),
            );
        }
        for (k, v) in query.answer()? {
            obj.entry(k).or_insert(v);
        }
        return Ok(Value::Object(obj));
    }
    // Users' terms (Poisson): q = B/N, T = ⌈E·N/B⌉.
    match query.dataset {
        [None, None, None] => {}
        [Some(n), Some(b), Some(ep)] if query.q.is_none() && query.steps.is_none() => {
            let (q, t) = match field(&obj, "bands")? {
                // b bands: q = b·B/N within the partition each step samples.
                Some(bands) => {
                    let bands = bands_of(bands).map_err(|m| m.replace("--bands", "bands"))?;
                    let (q, t, _) =
                        engine::params::banded_from_dataset(n, b, ep, bands).map_err(e)?;
                    (q, t)
                }
                None => engine::params::from_dataset(n, b, ep).map_err(e)?,
            };
            obj.insert("q".into(), json!(q));
            obj.insert("steps".into(), json!(t));
        }
        _ => {
            return Err(
                "give either q and steps, or dataset_size, batch_size and epochs (all three)"
                    .into(),
            )
        }
    }
    let q = field(&obj, "q")?.ok_or("missing q")?;
    let sigma = field(&obj, "sigma")?.ok_or("missing sigma")?;
    let m = Sgm::new(q, sigma).map_err(e)?;
    if gdp_line {
        let t = field(&obj, "steps")?.ok_or("missing steps")?;
        let t = engine::params::steps_from_f64(t).map_err(e)?;
        obj.insert("steps".into(), json!(t));
        obj.extend(gdp_fields(&engine::pld::fdp::gdp(m, t).map_err(e)?));
        return gdp_at(obj, query.delta);
    }
    if let Some(alpha) = field(&obj, "alpha")? {
        if obj.contains_key("accountant") || obj.contains_key("bands") {
            return Err(
                "accountant and bands apply to steps/delta lines, not to alpha lines".into(),
            );
        }
        for k in ["steps", "delta", "epsilon"] {
            if obj.contains_key(k) {
                return Err(format!("an alpha line takes q, sigma, alpha only, not {k}"));
            }
        }
        let log_a = engine::rdp::log_a(&m, alpha).map_err(e)?;
        let rdp = engine::rdp::rdp(&m, alpha).map_err(e)?;
        obj.insert("rdp".into(), json!(rdp));
        obj.insert("log_a".into(), json!(log_a));
        return Ok(Value::Object(obj));
    }
    let steps = field(&obj, "steps")?.ok_or("need alpha, or steps and delta (or epsilon)")?;
    let mut steps = engine::params::steps_from_f64(steps).map_err(e)?;
    // BandMF / DP-FTRL with b bands: ⌈T/b⌉ steps (the answer says so: `training_steps`).
    if let Some(b) = field(&obj, "bands")? {
        let b = bands_of(b).map_err(|m| m.replace("--bands", "bands"))?;
        obj.insert("training_steps".into(), json!(steps));
        steps = steps.div_ceil(b);
        obj.insert("steps".into(), json!(steps));
    }
    // One shape for both directions: the RDP answer under `out`, the PLD bracket under
    // `out` (accountant "pld") or `out_pld` (accountant "both"), each with `_lower`.
    let (asked, out) = match (field(&obj, "delta")?, field(&obj, "epsilon")?) {
        (Some(delta), None) => (Asked::Epsilon(delta), "epsilon"),
        (None, Some(eps)) => (Asked::Delta(eps), "delta"),
        (Some(_), Some(_)) => {
            return Err("give delta (for epsilon) or epsilon (for delta), not both".into())
        }
        (None, None) => return Err("missing delta".into()),
    };
    let run = Run::with_default_orders(m, steps).map_err(e)?;
    let a = answer(&run, asked, acct, Conversion::Improved, false).map_err(e)?;
    if let Some(o) = a.rdp {
        obj.insert(out.into(), json!(o.value));
        obj.insert("alpha".into(), json!(o.alpha));
    }
    match a.tight {
        Some(Ok((b, _))) => put_bracket(&mut obj, acct, out, b.upper, b.lower),
        Some(Err(why)) => unavailable(&mut obj, &mut String::new(), out, &why.to_string()),
        None => {}
    }
    Ok(Value::Object(obj))
}

/// A gdp line's answer, with the ε its μ implies at the line's δ where it has one (as
/// `gdp --delta`).
fn gdp_at(obj: Map<String, Value>, delta: Option<f64>) -> Result<Value, String> {
    let mut r = Report {
        fields: obj,
        text: String::new(),
    };
    if let Some(d) = delta {
        super::report::gdp_at_delta(&mut r, d)?;
    }
    Ok(Value::Object(r.fields))
}
