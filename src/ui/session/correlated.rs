//! Correlated noise in the page model (issue 67): the noise selector's strategy and
//! participation, posted to the worker with the run shown, asked again whenever the run shown
//! changes, and only the newest answer shown — with what its ends mean.

use super::*;
use crate::decimal::fixed;

/// The panel's state.
#[derive(Debug, Clone, Default)]
pub(super) struct CorrelatedState {
    /// The strategy and participation, while the noise selector says "correlated".
    spec: Option<(String, String)>,
    gen: u32,
    /// The run the newest request is for.
    asked_for: Option<(Inputs, Scheme)>,
}

const IDS: [&str; 4] = [
    "correlated-epsilon",
    "correlated-how",
    "correlated-sigma",
    "correlated-error",
];

impl Page {
    /// The noise selector as chosen (`noise`: "correlated" or "independent"): the panel's
    /// box shown or hidden, and [`Page::correlated`].
    pub fn noise(&mut self, noise: &str, strategy: &str, participation: &str) -> Vec<Effect> {
        let on = noise == "correlated";
        let mut fx = vec![Effect::Op(Op::Hidden("correlated-box", !on))];
        fx.extend(self.correlated(on.then_some((strategy, participation))));
        fx
    }

    /// The noise selector: `strategy` and `participation` (`min-sep`, `poisson`,
    /// `balls-in-bins`, `cyclic-bins`) when correlated, None when independent (the panel
    /// cleared). Asked in the run's dataset terms when it has them, else at its q.
    pub fn correlated(&mut self, spec: Option<(&str, &str)>) -> Vec<Effect> {
        self.correlated.spec = spec.map(|(s, p)| (s.trim().to_string(), p.to_string()));
        if self.correlated.spec.is_none() {
            self.correlated.gen += 1;
            return IDS.into_iter().map(|id| text(id, "")).collect();
        }
        self.post_correlated()
    }

    /// Ask for the correlated run at the run shown (nothing while independent).
    pub(super) fn post_correlated(&mut self) -> Vec<Effect> {
        let Some((strategy, joins)) = self.correlated.spec.clone() else {
            return Vec::new();
        };
        if strategy.is_empty() {
            return vec![text(
                "correlated-error",
                "give a strategy: band:4, blt:0.9:0.3, tree, …",
            )];
        }
        let (i, sc) = self.run_shown();
        // In the run's dataset terms when it has them (the bins' epochs of ⌊N/B⌋ steps then
        // come from them); else its q, and the bins' steps per epoch from it.
        let loader = self.loader_terms(&i);
        let joins = match joins.as_str() {
            "balls-in-bins" | "cyclic-bins" if loader.is_none() => {
                format!("{joins}:{}", sc.steps_per_epoch(&i))
            }
            _ => joins,
        };
        let c = &mut self.correlated;
        c.gen += 1;
        c.asked_for = Some((i, sc));
        let mut fx: Vec<Effect> = IDS.into_iter().map(|id| text(id, "")).collect();
        fx.push(Effect::Post(
            protocol::correlated(&i, c.gen, &strategy, &joins, loader, self.link.target),
            Some(Posting {
                computing: Some("correlated-epsilon"),
                failed: "correlated-error",
                message: "the calculator's worker is not available",
            }),
        ));
        fx
    }

    /// The worker's answer: shown when it is the newest request's and its run is the one
    /// shown. The headline says what its ends are; the line under it, how it was found.
    pub(super) fn correlated_answer(&mut self, data: &Value) -> Vec<Effect> {
        let c = &self.correlated;
        if data.num("gen") != f64::from(c.gen) || c.asked_for != Some(self.run_shown()) {
            return Vec::new();
        }
        if data.text("kind") == Some(Kind::CorrelatedError.name()) {
            return vec![
                text("correlated-epsilon", ""),
                text(
                    "correlated-error",
                    reason_in_words(data.text("message").unwrap_or_default()),
                ),
            ];
        }
        let up = fixed(data.num("epsilon"), 6, Dir::Up);
        let head = match data.get("epsilon_lower") {
            Value::Num(l) => format!(
                "ε = {up} (certified upper bound; bracket [{}, {up}]: the true ε lies within) at δ = {}",
                fixed(*l, 6, Dir::Down),
                data.num("delta")
            ),
            _ => format!(
                "ε ≤ {up} (certified upper bound; no lower bound claimed) at δ = {}",
                data.num("delta")
            ),
        };
        let how = format!(
            "{}: {}",
            data.text("bound").unwrap_or_default(),
            data.text("scheme")
                .unwrap_or_default()
                .replace("sigma", "σ")
                .replace(" x ", " × ")
        );
        // The target's σ (when the page has a target ε), or why there is none.
        let sigma = match (data.num("target"), data.text("calibrate_error")) {
            (e, _) if data.num("calibrated_sigma").is_finite() => format!(
                "σ ≥ {} for a certified ε ≤ {e} (the target of “What do I need?”), this correlated run otherwise the same",
                fixed(data.num("calibrated_sigma"), 6, Dir::Up)
            ),
            (e, Some(m)) => format!("No σ for ε ≤ {e}: {}", reason_in_words(m)),
            _ => String::new(),
        };
        vec![
            text("correlated-error", ""),
            text("correlated-epsilon", head),
            text("correlated-how", how),
            text("correlated-sigma", sigma),
        ]
    }
}
