//! The page model's "What your library reports" rows and "What do I need?" (the
//! calibrations and Apply).

use super::*;

impl Page {
    // ---- "What your library reports" ----

    /// The table with our tight row (Opacus' and dp_accounting's rows once the worker has
    /// computed them: its "library" answer replaces the rows) and the snippets.
    pub(super) fn library(&self, i: &Inputs, pld: Option<(f64, f64)>) -> Vec<Effect> {
        let views = library::Views {
            tight: pld.map(Ok),
            ..library::Views::default()
        };
        let opacus = self
            .loader_terms(i)
            .and_then(|[n, b, e]| library::opacus_run(n, b, e));
        let mut fx = Vec::new();
        if let Ok(rows) = library::rows(i, opacus, &views) {
            let rows = rows
                .iter()
                .map(|r| {
                    let e = r.shown().unwrap_or_else(|| "…".into());
                    [r.tool.to_string(), e, r.note.clone()]
                })
                .collect();
            fx.push(Effect::Op(Op::Rows(LIBRARY_TABLE, rows)));
        }
        fx.push(text("library-why", library::WHY));
        let dataset = self.dataset_for(i.q).map(|d| (d.n as u64, d.b as u64));
        let target = self.link.target.unwrap_or(link::DEFAULT_TARGET);
        fx.push(Effect::Snippets(
            library::snippets(i, target, dataset)
                .into_iter()
                .map(|(t, c)| (t.to_string(), c))
                .collect(),
        ));
        fx
    }

    // ---- "What do I need?" ----

    /// Solve for `which` ("sigma", "steps") to the target ε with the chosen accountant, or
    /// ("risk-sigma", "risk-steps") to an attack-risk target (`extra`: its TPR and FPR), for
    /// the inputs shown, in the worker.
    pub fn calibrate(&mut self, which: &str, extra: Fields) -> Vec<Effect> {
        let i = self.inputs();
        let sc = self.scheme(&i);
        let k = WHICH.iter().position(|w| *w == which).unwrap_or(3);
        self.inverse.seq[k] += 1;
        self.inverse.asked_for = Some((i, sc));
        let mut extra = extra;
        if k < 2 {
            extra.push(("accountant", Value::Text(self.link.acct.name().into())));
        }
        // The run shown is calibrated: its scheme, with the epochs its tight request uses.
        let epochs = if sc.sampling == Batching::Poisson {
            f64::NAN
        } else {
            self.epochs_for(&i)
        };
        vec![Effect::Post(
            protocol::calibrate(&i, self.inverse.seq[k], WHICH[k], extra, &sc, epochs),
            Some(Posting {
                computing: Some(answer_id(which)),
                failed: error_id(which),
                message: "the calculator's worker is not available",
            }),
        )]
    }

    /// The inverse mode's answers and Apply buttons go (the target or an input changed, or
    /// a solve failed): an answer is never shown for other inputs than its own, and answers
    /// still on their way are dropped.
    pub fn clear_inverse(&mut self) -> Vec<Effect> {
        let v = &mut self.inverse;
        for s in v.seq.iter_mut() {
            *s += 1;
        }
        (v.sigma, v.steps, v.asked_for) = (None, None, None);
        let mut fx: Vec<Effect> = WHICH.iter().map(|w| text(answer_id(w), "")).collect();
        fx.push(Effect::Op(Op::Hidden("apply-sigma", true)));
        fx.push(Effect::Op(Op::Hidden("apply-steps", true)));
        fx
    }

    /// The inputs shown with their scheme: what a calibration's answer must be for.
    pub(super) fn run_shown(&self) -> (Inputs, Scheme) {
        let i = self.inputs();
        (i, self.scheme(&i))
    }

    /// After the inputs or the scheme changed: the inverse mode's answers for another run go.
    pub fn inputs_changed(&mut self) -> Vec<Effect> {
        match self.inverse.asked_for {
            Some(a) if a != self.run_shown() => self.clear_inverse(),
            _ => Vec::new(),
        }
    }

    /// Whether `data` answers the newest calibration of its kind, asked for the inputs shown.
    pub(super) fn is_current_calibration(&self, data: &Value) -> bool {
        let which = data.text("which").unwrap_or_default();
        WHICH.iter().position(|w| *w == which).is_some_and(|k| {
            data.num("gen") == self.inverse.seq[k] as f64
                && self.inverse.asked_for == Some(self.run_shown())
        })
    }

    /// A calibration's answer: shown, and kept for Apply.
    pub(super) fn calibrated(&mut self, data: &Value) -> Vec<Effect> {
        if !self.is_current_calibration(data) {
            return Vec::new();
        }
        let which = data.text("which").unwrap_or_default();
        let (v, e) = (data.num("value"), data.num("epsilon"));
        if !(v.is_finite() && e.is_finite()) {
            return Vec::new();
        }
        let tight = data.text("accountant") != Some("rdp");
        let eps = if which.starts_with("risk-") {
            format!(
                "TPR ≤ {} at FPR {}, certified",
                fmt_num_up(e),
                fmt_num(data.num("fpr"))
            )
        } else if data.text("accountant") == Some("band") {
            format!("certified ε ≤ {}, the band's upper end", fmt_eps(e))
        } else if tight {
            format!("tight ε ≤ {}", fmt_eps(e))
        } else {
            format!("ε = {}", fmt_eps(e))
        };
        // Another scheme than Poisson sampling is named beside its answer.
        let eps = match data.text("sampling") {
            Some(s) if s != "poisson" => format!("{eps}, {} batches", s.replace('-', " ")),
            _ => eps,
        };
        let sigma = which.ends_with("sigma");
        let shown = if sigma {
            self.inverse.sigma = Some(v);
            format!("σ = {v:.6} ({eps})")
        } else {
            self.inverse.steps = Some(v as u64);
            let i = self.inputs();
            format!("T = {v}{} ({eps})", self.in_epochs(&i, v as u64))
        };
        vec![
            text(answer_id(which), shown),
            text(error_id(which), ""),
            Effect::Op(Op::Hidden(
                if sigma { "apply-sigma" } else { "apply-steps" },
                false,
            )),
        ]
    }

    /// Apply's inputs: the inputs shown with the σ or T found, when one is kept.
    pub fn applied(&self, which: &str) -> Option<Inputs> {
        let mut i = self.inputs();
        match which {
            "sigma" => i.sigma = self.inverse.sigma?,
            _ => i.steps = self.inverse.steps?,
        }
        Some(i)
    }
}
