//! "Check my training code" in the page model: a snippet posted to the worker as the query
//! layer's `check`, and only the newest check's answer shown.

use super::*;

impl Page {
    /// Check the pasted snippet for `library`: a refusal next to the panel, or the request
    /// (with "computing…" where the answer will be). Skipped names are said, not silently
    /// dropped.
    pub fn check(&mut self, library: &str, snippet: &str) -> Vec<Effect> {
        self.check_gen += 1;
        let clear = ["check-printed", "check-certified", "check-findings"].map(|id| text(id, ""));
        let mut fx: Vec<Effect> = clear.into_iter().collect();
        match crate::ui::check::parse_snippet(library, snippet) {
            Err(m) => fx.push(text("check-error", m)),
            Ok((config, skipped)) => {
                fx.push(text("check-error", ""));
                fx.push(text(
                    "check-skipped",
                    if skipped.is_empty() {
                        String::new()
                    } else {
                        format!("Not literals, left out: {}.", skipped.join(", "))
                    },
                ));
                fx.push(Effect::Post(
                    protocol::check(self.check_gen, config),
                    Some(Posting {
                        computing: Some("check-printed"),
                        failed: "check-error",
                        message: "the calculator's worker is not available",
                    }),
                ));
            }
        }
        fx
    }

    /// The worker's answer to a check: shown when it is the newest check's.
    pub(super) fn checked(&self, data: &Value) -> Vec<Effect> {
        if data.num("gen") != f64::from(self.check_gen) {
            return Vec::new();
        }
        if data.text("kind") == Some(Kind::CheckError.name()) {
            return vec![
                text("check-printed", ""),
                text(
                    "check-error",
                    reason_in_words(data.text("message").unwrap_or_default()),
                ),
            ];
        }
        let (printed, certified, findings) = crate::ui::check::answer_texts(data);
        vec![
            text("check-error", ""),
            text("check-printed", printed),
            text("check-certified", certified),
            text("check-findings", findings),
        ]
    }
}
