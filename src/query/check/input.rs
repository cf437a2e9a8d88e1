//! What a check reads besides its keys: a dp_accounting DpEvent (its repr or its
//! `to_named_tuple()` as JSON) and a pasted snippet of a library call (the page's panel).

use super::*;

/// A dp_accounting DpEvent — its `to_named_tuple()` as JSON (`class_name` and its fields) or
/// its repr (`SelfComposedDpEvent(event=PoissonSampledDpEvent(sampling_probability=0.01,
/// event=GaussianDpEvent(noise_multiplier=1.0)), count=1000)`) — → the one (q, σ, T) it
/// composes: Gaussian, Poisson-sampled Gaussian, self-composed and composed events (NoOp
/// ignored); several different (q, σ) are refused (the Python SgmRdpAccountant answers
/// heterogeneous runs).
pub(super) fn event_run(v: &Value) -> Result<(f64, f64, u64), String> {
    let tree = match v {
        Value::String(s) => {
            let mut p = Repr {
                s: s.as_bytes(),
                i: 0,
            };
            let t = p.value()?;
            p.ws();
            if p.i != p.s.len() {
                return Err(format!("dp_event: unexpected text at {}", p.i));
            }
            t
        }
        other => other.clone(),
    };
    let mut parts: Vec<(f64, f64, u64)> = Vec::new();
    walk(&tree, 1, &mut parts, 0)?;
    let mut merged: Vec<(f64, f64, u64)> = Vec::new();
    for (q, s, c) in parts {
        match merged.iter_mut().find(|m| m.0 == q && m.1 == s) {
            Some(m) => m.2 += c,
            None => merged.push((q, s, c)),
        }
    }
    match merged.as_slice() {
        [one] => Ok(*one),
        [] => Err("dp_event: no Gaussian step in it".into()),
        many => Err(format!("dp_event composes {} different (sampling_probability, noise_multiplier): check takes one run (the Python SgmRdpAccountant answers heterogeneous runs)", many.len())),
    }
}

fn walk(v: &Value, count: u64, out: &mut Vec<(f64, f64, u64)>, depth: usize) -> Result<(), String> {
    if depth > 32 {
        return Err("dp_event: nested too deeply".into());
    }
    let name = v
        .get("class_name")
        .and_then(Value::as_str)
        .ok_or("dp_event: every event needs its class_name")?;
    let num = |k: &str| {
        v.get(k)
            .and_then(Value::as_f64)
            .ok_or_else(|| format!("dp_event: {name} needs {k}"))
    };
    match name {
        "GaussianDpEvent" => out.push((1.0, num("noise_multiplier")?, count)),
        "PoissonSampledDpEvent" => {
            let inner = v.get("event").ok_or("dp_event: PoissonSampledDpEvent needs event")?;
            if inner.get("class_name").and_then(Value::as_str) != Some("GaussianDpEvent") {
                return Err("dp_event: only a GaussianDpEvent is Poisson-sampled here".into());
            }
            let sigma = inner.get("noise_multiplier").and_then(Value::as_f64).ok_or("dp_event: GaussianDpEvent needs noise_multiplier")?;
            out.push((num("sampling_probability")?, sigma, count));
        }
        "SelfComposedDpEvent" => {
            let c = num("count")?;
            if !(c >= 0.0 && c.fract() == 0.0 && c <= engine::MAX_STEPS as f64) {
                return Err(format!("dp_event: count must be a whole number >= 0, got {c}"));
            }
            let inner = v.get("event").ok_or("dp_event: SelfComposedDpEvent needs event")?;
            walk(inner, count.saturating_mul(c as u64), out, depth + 1)?;
        }
        "ComposedDpEvent" => {
            let events = v.get("events").and_then(Value::as_array).ok_or("dp_event: ComposedDpEvent needs events")?;
            for e in events {
                walk(e, count, out, depth + 1)?;
            }
        }
        "NoOpDpEvent" => {}
        other => return Err(format!("dp_event: {other} is not checked here (GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent, ComposedDpEvent)")),
    }
    Ok(())
}

/// A DpEvent's repr, read into the `to_named_tuple()` JSON shape.
struct Repr<'a> {
    s: &'a [u8],
    i: usize,
}

impl Repr<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn ident(&mut self) -> String {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric()
                || self.s[self.i] == b'_'
                || self.s[self.i] == b'.')
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }
    fn value(&mut self) -> Result<Value, String> {
        self.ws();
        match self.s.get(self.i) {
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.ws();
                    if self.s.get(self.i) == Some(&b']') {
                        self.i += 1;
                        return Ok(Value::Array(items));
                    }
                    items.push(self.value()?);
                    self.ws();
                    if self.s.get(self.i) == Some(&b',') {
                        self.i += 1;
                    }
                    if items.len() > 10_000 {
                        return Err("dp_event: too many events".into());
                    }
                }
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let name = self.ident();
                let name = name.rsplit('.').next().unwrap_or("").to_string();
                self.ws();
                if self.s.get(self.i) != Some(&b'(') {
                    return Err(format!("dp_event: expected '(' after {name}"));
                }
                self.i += 1;
                let order: &[&str] = match name.as_str() {
                    "GaussianDpEvent" => &["noise_multiplier"],
                    "PoissonSampledDpEvent" => &["sampling_probability", "event"],
                    "SelfComposedDpEvent" => &["event", "count"],
                    "ComposedDpEvent" => &["events"],
                    _ => &[],
                };
                let mut m = Map::new();
                m.insert("class_name".into(), json!(name));
                let mut k = 0;
                loop {
                    self.ws();
                    if self.s.get(self.i) == Some(&b')') {
                        self.i += 1;
                        return Ok(Value::Object(m));
                    }
                    let save = self.i;
                    let key = self.ident();
                    self.ws();
                    let key = if !key.is_empty() && self.s.get(self.i) == Some(&b'=') {
                        self.i += 1;
                        key
                    } else {
                        self.i = save;
                        order.get(k).map(|s| s.to_string()).ok_or_else(|| {
                            if order.is_empty() {
                                format!("dp_event: {name} is not checked here (GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent, ComposedDpEvent)")
                            } else {
                                format!("dp_event: too many arguments to {name}")
                            }
                        })?
                    };
                    k += 1;
                    let v = self.value()?;
                    m.insert(key, v);
                    self.ws();
                    if self.s.get(self.i) == Some(&b',') {
                        self.i += 1;
                    }
                    if k > 16 {
                        return Err(format!("dp_event: too many arguments to {name}"));
                    }
                }
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len()
                    && matches!(
                        self.s[self.i],
                        b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-' | b'_'
                    )
                {
                    self.i += 1;
                }
                let t = String::from_utf8_lossy(&self.s[start..self.i]).replace('_', "");
                t.parse::<f64>()
                    .map(|x| json!(x))
                    .map_err(|_| format!("dp_event: expected a number or an event at {start}"))
            }
        }
    }
}

/// A pasted snippet → the configuration's keys and values, and the names it skipped (values
/// that are not literals: `module=model`, `optimizer=opt`). Accepted: a JSON object; or
/// keyword arguments `name=value` separated by commas or new lines, optionally inside a call
/// (`privacy_engine.make_private(noise_multiplier=1.0, poisson_sampling=False, …)`), with
/// Python's literals (numbers, `True`/`False`, quoted strings; `None` leaves a key out) and
/// `# comments`. The library is the panel's choice unless the snippet names one.
pub fn from_snippet(
    library: &str,
    text: &str,
) -> Result<(Map<String, Value>, Vec<String>), String> {
    const LIBRARIES: [&str; 4] = ["opacus", "dp_accounting", "jax_privacy", "tf_privacy"];
    if !LIBRARIES.contains(&library) {
        return Err(format!(
            "library must be one of {}, got '{library}'",
            LIBRARIES.join(", ")
        ));
    }
    if text.len() > 20_000 {
        return Err("the snippet is longer than 20,000 characters".into());
    }
    let mut out = Map::new();
    let mut skipped = Vec::new();
    let t = text.trim();
    if t.starts_with('{') {
        let v: Value =
            serde_json::from_str(t).map_err(|e| format!("the JSON object does not parse: {e}"))?;
        let Value::Object(m) = v else {
            return Err("the JSON must be an object".into());
        };
        for (k, v) in m {
            if !v.is_null() {
                out.insert(k, v);
            }
        }
    } else {
        // Inside a call's parentheses, when there is one.
        let body = match (t.find('('), t.rfind(')')) {
            (Some(a), Some(b)) if a < b => &t[a + 1..b],
            _ => t,
        };
        let body: String = body
            .lines()
            .map(|l| l.split('#').next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join(",");
        for part in body.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((k, v)) = part.split_once(['=', ':']) else {
                return Err(format!(
                    "'{}' is not name=value",
                    part.chars().take(40).collect::<String>()
                ));
            };
            let k = k.trim().trim_matches(|c| c == '"' || c == '\'').to_string();
            if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!(
                    "'{}' is not a keyword name",
                    k.chars().take(40).collect::<String>()
                ));
            }
            let v = v.trim();
            let value = match v {
                "True" | "true" => Value::Bool(true),
                "False" | "false" => Value::Bool(false),
                "None" | "null" => continue,
                _ if v.len() >= 2
                    && (v.starts_with('"') && v.ends_with('"')
                        || v.starts_with('\'') && v.ends_with('\'')) =>
                {
                    Value::String(v[1..v.len() - 1].to_string())
                }
                _ => match v.replace('_', "").parse::<f64>() {
                    Ok(x) if x.is_finite() => json!(x),
                    _ => {
                        skipped.push(k);
                        continue;
                    }
                },
            };
            out.insert(k, value);
        }
    }
    out.entry("library").or_insert_with(|| json!(library));
    // Opacus' make_private_with_epsilon names δ target_delta; its accountant's noise is
    // noise_multiplier already.
    Ok((out, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pasted Opacus call: literals kept, objects skipped and named, Python's literals read,
    /// comments and None left out; a JSON object the same; bad snippets refused by name.
    #[test]
    fn snippets_become_configurations() {
        let (c, skipped) = from_snippet(
            "opacus",
            "model, optimizer, loader = privacy_engine.make_private(\n  module=model,\n  optimizer=optimizer,\n  data_loader=loader,\n  noise_multiplier=1.0,  # sigma\n  max_grad_norm=1.0,\n  poisson_sampling=False,\n  clipping=None,\n)",
        )
        .unwrap();
        let keys: Vec<&str> = c.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "library",
                "max_grad_norm",
                "noise_multiplier",
                "poisson_sampling"
            ]
        );
        assert_eq!(c["poisson_sampling"], Value::Bool(false));
        assert_eq!(skipped, ["module", "optimizer", "data_loader"]);
        let (c, _) = from_snippet(
            "jax_privacy",
            "noise_multiplier=1\nbatch_size=10\naccumulation_steps=8\nsteps=100\ndataset_size=1_000\ndelta=1e-5\naccumulation='independent'",
        )
        .unwrap();
        assert_eq!(c["library"], "jax_privacy");
        assert_eq!(c["dataset_size"], 1000.0);
        assert_eq!(c["accumulation"], "independent");
        let (c, _) =
            from_snippet("opacus", r#"{"library": "tf_privacy", "num_epochs": 30}"#).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c["library"], "tf_privacy");
        for (lib, text, why) in [
            ("keras", "x=1", "library must be one of"),
            ("opacus", "noise_multiplier 1", "is not name=value"),
            ("opacus", "a b=1", "is not a keyword name"),
            ("opacus", "{\"a\": ", "does not parse"),
            ("opacus", "[1, 2]", "is not name=value"),
        ] {
            let e = from_snippet(lib, text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
    }
}
