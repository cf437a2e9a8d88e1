//! "Check my training code" (issue 63), without a DOM: a check's answer → the sentences the
//! page shows (the pasted snippet itself is read by the worker: `query::check::from_snippet`,
//! so the page's wasm carries no JSON parser). Natively tested.

use crate::ui::protocol::Value;

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
            let keys = f.texts("keys");
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
