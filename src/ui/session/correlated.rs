//! Correlated noise in the page model (issue 67): the noise selector's strategy and
//! participation, posted to the worker with the run shown, asked again whenever the run shown
//! changes, and only the newest answer shown — with what its ends mean.

use super::*;
use crate::decimal::fixed;

/// The panel's state.
#[derive(Debug, Clone, Default)]
pub(super) struct CorrelatedState {
    /// The strategy and participation, while the noise selector says "correlated".
    pub(super) spec: Option<(String, String)>,
    gen: u32,
    /// The run the newest request is for.
    asked_for: Option<(Inputs, Scheme)>,
    /// The newest answer's charts, the run they are for, and whether ε's lower end is
    /// certified (the legends say so).
    pub(super) charts: Option<(Inputs, TightCharts, bool)>,
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
        let was = self.correlated.spec.is_some();
        self.correlated.spec = spec.map(|(s, p)| (s.trim().to_string(), p.to_string()));
        // The charts' note says which run they are for.
        let mut fx = self.who_and_note();
        if self.correlated.spec.is_none() {
            self.correlated.gen += 1;
            self.correlated.charts = None;
            fx.extend(IDS.into_iter().map(|id| text(id, "")));
            if was {
                // Back to independent noise: its charts (kept as they arrived), else none.
                fx.extend(self.independent_charts());
            }
            return fx;
        }
        fx.extend(self.post_correlated());
        fx
    }

    /// Independent noise's charts again: redrawn when kept, else asked again (the worker's
    /// caches answer at once).
    fn independent_charts(&mut self) -> Vec<Effect> {
        match self.tight.charts {
            Some((i, _)) if self.tight.asked == Some(i) => {
                vec![Effect::Stale(false), Effect::Redraw]
            }
            _ => self.post(),
        }
    }

    /// Independent noise's charts are unavailable (`why`): cleared when they are the ones
    /// drawn; forgotten only while correlated noise's are.
    pub(super) fn clear_independent(&mut self, why: &str) -> Vec<Effect> {
        if self.correlated_on() {
            self.tight.charts = None;
            return Vec::new();
        }
        self.clear_charts(why)
    }

    /// Whether the noise selector says "correlated" (the tight charts are then its run's).
    pub fn correlated_on(&self) -> bool {
        self.correlated.spec.is_some()
    }

    /// The charts' note while correlated: the strategy and participation they are for.
    pub(super) fn correlated_note(&self) -> Option<String> {
        let (s, p) = self.correlated.spec.as_ref()?;
        Some(format!(
            "The charts below are for correlated noise ({s}, participation {p}), with the noise panel’s answer; the headline, μ-GDP and the library table are for independent noise."
        ))
    }

    /// The charts of the run shown with correlated noise: Some while correlated (None until
    /// its answer arrives), None while independent.
    pub(super) fn correlated_charts(&self) -> Option<Option<(Inputs, &TightCharts)>> {
        self.correlated_on()
            .then(|| self.correlated.charts.as_ref().map(|(i, c, _)| (*i, c)))
    }

    /// The legends of a correlated run's charts: what each series' ends are.
    pub(super) fn correlated_labels(&self) -> Option<crate::render::tight::Labels> {
        let (_, _, lower) = self.correlated.charts.as_ref()?;
        Some(crate::render::tight::Labels {
            upper: "correlated noise: ε (certified upper bound)".into(),
            lower: lower.then(|| "correlated noise: ε (certified lower end)".into()),
            profile: if *lower {
                "correlated noise: δ(ε) (certified bracket)".into()
            } else {
                "correlated noise: δ(ε) (certified upper bound)".into()
            },
            risk: "correlated noise: bound on any attack (certified)".into(),
        })
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
        // The charts drawn are marked stale until the new run's arrive.
        let mut fx: Vec<Effect> = IDS.into_iter().map(|id| text(id, "")).collect();
        fx.push(Effect::Stale(true));
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
        let i = c.asked_for.map(|(i, _)| i);
        if data.text("kind") == Some(Kind::CorrelatedError.name()) {
            let why = reason_in_words(data.text("message").unwrap_or_default());
            self.correlated.charts = None;
            let mut fx = vec![
                text("correlated-epsilon", ""),
                text("correlated-error", why.clone()),
            ];
            fx.extend(self.clear_charts(&why));
            return fx;
        }
        // Its charts (or why there are none): drawn in place of independent noise's.
        let mut fx = match (data.get("charts"), i) {
            (Value::Obj(_), Some(i)) => {
                let lower = matches!(data.get("epsilon_lower"), Value::Num(_));
                self.correlated.charts = Some((i, TightCharts::parse(data.get("charts")), lower));
                vec![Effect::Stale(false), Effect::Redraw]
            }
            _ => {
                self.correlated.charts = None;
                let why = data
                    .text("charts_error")
                    .unwrap_or("no charts were computed");
                self.clear_charts(&reason_in_words(why))
            }
        };
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
        fx.extend([
            text("correlated-error", ""),
            text("correlated-epsilon", head),
            text("correlated-how", how),
            text("correlated-sigma", sigma),
        ]);
        fx
    }
}
