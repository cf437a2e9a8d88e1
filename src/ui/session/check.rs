//! "Check my training code" in the page model: a snippet posted to the worker as the query
//! layer's `check`, and only the newest check's answer shown.

use super::*;

impl Page {
    /// Check the pasted snippet for `library`: the request (with "computing…" where the
    /// answer will be; the last answer cleared). The worker reads the snippet.
    pub fn check(&mut self, library: &str, snippet: &str) -> Vec<Effect> {
        self.check_gen += 1;
        let ids = [
            "check-printed",
            "check-certified",
            "check-findings",
            "check-skipped",
            "check-error",
        ];
        let mut fx: Vec<Effect> = ids.into_iter().map(|id| text(id, "")).collect();
        fx.push(Effect::Post(
            protocol::check(self.check_gen, library, snippet),
            Some(Posting {
                computing: Some("check-printed"),
                failed: "check-error",
                message: "the calculator's worker is not available",
            }),
        ));
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
        let skipped = data.texts("skipped");
        vec![
            text(
                "check-skipped",
                if skipped.is_empty() {
                    String::new()
                } else {
                    format!("Not literals, left out: {}.", skipped.join(", "))
                },
            ),
            text("check-error", ""),
            text("check-printed", printed),
            text("check-certified", certified),
            text("check-findings", findings),
        ]
    }
}
