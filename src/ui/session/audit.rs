//! "Audit against the certificate" in the page model: the scores posted to the worker with
//! the run shown, asked again whenever the run shown changes, and only the newest audit's
//! answer shown — its points drawn on the attack-risk chart while its run is the one shown.

use super::*;
use crate::render::tight::AuditPoint;

/// The audit's state.
#[derive(Debug, Clone, Default)]
pub(super) struct AuditState {
    /// The scores as pasted or read, and whether a lower score means a member.
    scores: Option<(String, bool)>,
    gen: u32,
    /// The run the newest audit request is for.
    asked_for: Option<(Inputs, Scheme)>,
    /// Its answer's points on the risk chart.
    points: Vec<AuditPoint>,
}

const IDS: [&str; 3] = ["audit-verdict", "audit-bounds", "audit-error"];

impl Page {
    /// Audit the scores (a CSV with `score` and `member` columns) against the run shown.
    pub fn audit(&mut self, csv: &str, lower_is_member: bool) -> Vec<Effect> {
        if csv.trim().is_empty() {
            return vec![text(
                "audit-error",
                "paste scores, or choose or drop a CSV file, first",
            )];
        }
        self.audit.scores = Some((csv.to_string(), lower_is_member));
        self.post_audit()
    }

    /// Ask for the audit of the scores held against the run shown (nothing without scores):
    /// the last answer's texts and points go at once.
    pub(super) fn post_audit(&mut self) -> Vec<Effect> {
        let Some((csv, lower)) = self.audit.scores.clone() else {
            return Vec::new();
        };
        let (i, sc) = self.run_shown();
        let a = &mut self.audit;
        a.gen += 1;
        a.asked_for = Some((i, sc));
        a.points.clear();
        let epochs = if sc.sampling == Batching::Poisson {
            f64::NAN
        } else {
            self.epochs_for(&i)
        };
        let mut fx: Vec<Effect> = IDS.into_iter().map(|id| text(id, "")).collect();
        fx.push(Effect::Post(
            protocol::audit(&i, self.audit.gen, &csv, lower, &sc, epochs),
            Some(Posting {
                computing: Some("audit-verdict"),
                failed: "audit-error",
                message: "the calculator's worker is not available",
            }),
        ));
        fx.push(Effect::Redraw);
        fx
    }

    /// The worker's answer to an audit: shown when it is the newest audit's and its run is
    /// the one shown.
    pub(super) fn audited(&mut self, data: &Value) -> Vec<Effect> {
        let current = self.audit.asked_for == Some(self.run_shown());
        if data.num("gen") != f64::from(self.audit.gen) || !current {
            return Vec::new();
        }
        if data.text("kind") == Some(Kind::AuditError.name()) {
            return vec![
                text("audit-verdict", ""),
                text(
                    "audit-error",
                    reason_in_words(data.text("message").unwrap_or_default()),
                ),
            ];
        }
        let (verdict, bounds) = crate::ui::audit::answer_texts(data);
        self.audit.points = crate::ui::audit::points(data);
        vec![
            text("audit-error", ""),
            text("audit-verdict", verdict),
            text("audit-bounds", bounds),
            Effect::Redraw,
        ]
    }

    /// The audit's points for the risk chart: only while its run is the one shown.
    pub fn audit_points(&self) -> &[AuditPoint] {
        if self.audit.asked_for == Some(self.run_shown()) {
            &self.audit.points
        } else {
            &[]
        }
    }
}
