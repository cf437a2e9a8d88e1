//! "Check my training code" (issue 63), without a DOM: a pasted call or configuration in a
//! library's own terms → the configuration the query layer's `check` reads, and its answer →
//! the sentences the page shows. Natively tested.

use crate::ui::protocol::Value;

/// A configuration's keys and values, as the query layer's `check` reads them.
pub type Config = Vec<(String, Value)>;

/// The libraries the panel offers, by their configuration key.
pub const LIBRARIES: [&str; 4] = ["opacus", "dp_accounting", "jax_privacy", "tf_privacy"];

/// A pasted snippet → the configuration's keys and values, and the names it skipped (values
/// that are not literals: `module=model`, `optimizer=opt`). Accepted: a JSON object; or
/// keyword arguments `name=value` separated by commas or new lines, optionally inside a call
/// (`privacy_engine.make_private(noise_multiplier=1.0, poisson_sampling=False, …)`), with
/// Python's literals (numbers, `True`/`False`, quoted strings; `None` leaves a key out) and
/// `# comments`. The library is the panel's choice unless the snippet names one.
pub fn parse_snippet(library: &str, text: &str) -> Result<(Config, Vec<String>), String> {
    if !LIBRARIES.contains(&library) {
        return Err(format!(
            "library must be one of {}, got '{library}'",
            LIBRARIES.join(", ")
        ));
    }
    if text.len() > 20_000 {
        return Err("the snippet is longer than 20,000 characters".into());
    }
    let mut out: Config = Vec::new();
    let mut skipped = Vec::new();
    let t = text.trim();
    if t.starts_with('{') {
        let v: serde_json::Value =
            serde_json::from_str(t).map_err(|e| format!("the JSON object does not parse: {e}"))?;
        let serde_json::Value::Object(m) = v else {
            return Err("the JSON must be an object".into());
        };
        for (k, v) in m {
            match v {
                serde_json::Value::Number(n) => {
                    out.push((k, Value::Num(n.as_f64().unwrap_or(f64::NAN))))
                }
                serde_json::Value::Bool(b) => out.push((k, Value::Bool(b))),
                serde_json::Value::String(s) => out.push((k, Value::Text(s))),
                serde_json::Value::Null => {}
                _ => skipped.push(k),
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
                    Value::Text(v[1..v.len() - 1].to_string())
                }
                _ => match v.replace('_', "").parse::<f64>() {
                    Ok(x) => Value::Num(x),
                    Err(_) => {
                        skipped.push(k);
                        continue;
                    }
                },
            };
            out.retain(|(n, _)| *n != k);
            out.push((k, value));
        }
    }
    if !out.iter().any(|(k, _)| k == "library") {
        out.insert(0, ("library".into(), Value::Text(library.into())));
    }
    // Opacus' make_private_with_epsilon names δ target_delta; its accountant's noise is
    // noise_multiplier already.
    Ok((out, skipped))
}

/// What the panel shows for a check's answer: what the library prints, what the code that
/// ran guarantees, and one line per finding (severity, id, the sentence, the fix, the source).
pub fn answer_texts(d: &Value) -> (String, String, String) {
    let library = d.text("library").unwrap_or("the library");
    let printed = match d.get("printed_epsilon") {
        Value::Num(e) => format!(
            "{library} prints ε = {e:.4} ({})",
            d.text("printed_by").unwrap_or("")
        ),
        _ => format!(
            "{library}'s printed ε is not computed here: {}",
            d.text("printed_why").unwrap_or("")
        ),
    };
    let certified = match d.get("certified_epsilon") {
        Value::Num(u) => format!(
            "The code that ran guarantees ε ≤ {} at δ = {} (certified; bracket [{}, {}]: {}).",
            crate::ui::session::fmt_eps6(*u),
            d.num("delta"),
            crate::ui::session::fmt_eps6_lower(d.num("certified_epsilon_lower")),
            crate::ui::session::fmt_eps6(*u),
            d.text("certified_meaning").unwrap_or("")
        ),
        _ => format!(
            "No certified ε for the code that ran: {}.",
            d.text("certified_why").unwrap_or("")
        ),
    };
    let findings: Vec<String> = d
        .items("findings")
        .iter()
        .map(|f| {
            let keys: Vec<&str> = f
                .items("keys")
                .iter()
                .filter_map(|k| match k {
                    Value::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            format!(
                "[{}] {}: {}. Fix: {}{}. ({})",
                f.text("severity").unwrap_or(""),
                f.text("id").unwrap_or(""),
                f.text("finding").unwrap_or(""),
                f.text("fix").unwrap_or(""),
                if keys.is_empty() {
                    String::new()
                } else {
                    format!(" (set by {})", keys.join(", "))
                },
                f.text("source").unwrap_or("")
            )
        })
        .collect();
    let findings = if findings.is_empty() {
        "No mismatch found between what the library accounts and the run described.".to_string()
    } else {
        findings.join("\n")
    };
    (printed, certified, findings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: &[(String, Value)]) -> Vec<&str> {
        v.iter().map(|(k, _)| k.as_str()).collect()
    }

    /// A pasted Opacus call: literals kept, objects skipped and named, Python's literals read,
    /// comments and None left out; a JSON object the same; bad snippets refused by name.
    #[test]
    fn snippets_become_configurations() {
        let (c, skipped) = parse_snippet(
            "opacus",
            "model, optimizer, loader = privacy_engine.make_private(\n  module=model,\n  optimizer=optimizer,\n  data_loader=loader,\n  noise_multiplier=1.0,  # sigma\n  max_grad_norm=1.0,\n  poisson_sampling=False,\n  clipping=None,\n)",
        )
        .unwrap();
        assert_eq!(
            keys(&c),
            [
                "library",
                "noise_multiplier",
                "max_grad_norm",
                "poisson_sampling"
            ]
        );
        assert_eq!(c[3].1, Value::Bool(false));
        assert_eq!(skipped, ["module", "optimizer", "data_loader"]);
        let (c, _) = parse_snippet(
            "jax_privacy",
            "noise_multiplier=1\nbatch_size=10\naccumulation_steps=8\nsteps=100\ndataset_size=1_000\ndelta=1e-5\naccumulation='independent'",
        )
        .unwrap();
        assert_eq!(c[0], ("library".into(), Value::Text("jax_privacy".into())));
        assert!(c.contains(&("dataset_size".into(), Value::Num(1000.0))));
        assert!(c.contains(&("accumulation".into(), Value::Text("independent".into()))));
        let (c, _) =
            parse_snippet("opacus", r#"{"library": "tf_privacy", "num_epochs": 30}"#).unwrap();
        assert_eq!(keys(&c), ["library", "num_epochs"]);
        assert_eq!(c[0].1, Value::Text("tf_privacy".into()));
        for (lib, text, why) in [
            ("keras", "x=1", "library must be one of"),
            ("opacus", "noise_multiplier 1", "is not name=value"),
            ("opacus", "a b=1", "is not a keyword name"),
            ("opacus", "{\"a\": ", "does not parse"),
            ("opacus", "[1, 2]", "is not name=value"),
        ] {
            let e = parse_snippet(lib, text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
    }

    /// The answer's sentences: printed, certified with its bracket, one line per finding.
    #[test]
    fn answers_become_sentences() {
        let finding = Value::Obj(vec![
            ("id".into(), Value::Text("shuffled-as-poisson".into())),
            ("severity".into(), Value::Text("unsafe".into())),
            ("finding".into(), Value::Text("the loader shuffles".into())),
            ("fix".into(), Value::Text("poisson_sampling=True".into())),
            ("source".into(), Value::Text("Chua et al.".into())),
            (
                "keys".into(),
                Value::List(vec![Value::Text("poisson_sampling".into())]),
            ),
        ]);
        let d = Value::Obj(vec![
            ("library".into(), Value::Text("opacus".into())),
            ("printed_epsilon".into(), Value::Num(3.2411)),
            ("printed_by".into(), Value::Text("PRV".into())),
            ("delta".into(), Value::Num(1e-5)),
            ("certified_epsilon".into(), Value::Num(37.6224569)),
            ("certified_epsilon_lower".into(), Value::Num(15.7337391)),
            ("certified_meaning".into(), Value::Text("band".into())),
            ("findings".into(), Value::List(vec![finding])),
        ]);
        let (p, c, f) = answer_texts(&d);
        assert_eq!(p, "opacus prints ε = 3.2411 (PRV)");
        assert!(c.starts_with("The code that ran guarantees ε ≤ 37.622457 at δ = 0.00001 (certified; bracket [15.733739, 37.622457]"), "{c}");
        assert_eq!(f, "[unsafe] shuffled-as-poisson: the loader shuffles. Fix: poisson_sampling=True (set by poisson_sampling). (Chua et al.)");
        let none = Value::Obj(vec![(
            "certified_why".into(),
            Value::Text("weighted".into()),
        )]);
        assert!(answer_texts(&none)
            .1
            .starts_with("No certified ε for the code that ran: weighted"));
    }
}
