//! The page model's tight charts: the charts answer, what is drawn and exported, and the
//! readouts' data.

use super::*;

impl Page {
    // ---- the tight charts ----

    /// The last charts answer, when it is for the inputs shown (exports and the CSV).
    pub fn charts(&self) -> Option<&TightCharts> {
        self.shown_charts()
            .filter(|(i, _)| Some(*i) == self.tight.asked)
            .map(|(_, c)| c)
    }

    /// The charts drawn on the page and the inputs they are for: the last answer, kept
    /// (its figures marked stale) while the inputs shown are being computed.
    /// With correlated noise chosen, its run's charts (none until they arrive).
    pub fn shown_charts(&self) -> Option<(Inputs, &TightCharts)> {
        if let Some(c) = self.correlated_charts() {
            return c;
        }
        self.tight.charts.as_ref().map(|(i, c)| (*i, c))
    }

    /// The legends of the run the charts were asked for (a band names its two ends).
    pub fn labels(&self) -> tc::Labels {
        if let Some(l) = self.correlated_labels().filter(|_| self.correlated_on()) {
            return l;
        }
        self.tight
            .posted_scheme
            .map(|(sc, _, _)| sc.chart_labels())
            .unwrap_or_default()
    }

    /// What tight chart `n` (training, profile, risk) reads out, named as in its legend.
    pub fn readouts(&self, n: usize) -> Vec<crate::render::ReadoutPoint> {
        let Some((i, c)) = self.shown_charts() else {
            return Vec::new();
        };
        let l = self.labels();
        match n {
            0 => tc::training_readouts(&c.training, self.steps_per_epoch(i.q), &l),
            1 => tc::profile_readouts(&c.profile, &l),
            _ => tc::risk_readouts(&c.risk, &l),
        }
    }

    /// The texts under the three tight charts (after they are drawn); a chart the answer
    /// has no data for stays cleared with its reason (every redraw: a later target or
    /// theme change must not paint it empty as "no points yet").
    pub fn chart_texts(&self) -> Vec<Effect> {
        let Some((i, c)) = self.shown_charts() else {
            return Vec::new();
        };
        let end = c.training.pld_upper.last().copied().unwrap_or(f64::NAN);
        let statement = match (self.link.target, &self.tight.most) {
            (Some(e), _) if self.correlated_on() => format!(
                "When ε = {} is reached: not searched for correlated noise (the noise panel gives the σ that reaches it).",
                fmt_num(e)
            ),
            (Some(e), Some((m_e, most))) if *m_e == e => page::budget_sentence(
                e,
                most.as_ref().copied().map_err(|w| w.as_str()),
                i.steps,
                end,
                &|m| self.in_epochs(&i, m),
            ),
            (Some(e), _) => format!("When ε = {} is reached: computing…", fmt_num(e)),
            _ => "Set a target ε (in “What do I need?”) to see when it is reached.".into(),
        };
        let sc = self.scheme(&i);
        let risk = match &self.correlated.spec {
            Some((st, p)) => one_percent_from(&c.risk_fpr, &format!("correlated noise, {st}, {p}")),
            _ => one_percent_sentence(&c.risk_fpr, &sc),
        };
        // The sentence under the headline is independent noise's, as the headline.
        let under = match &self.tight.charts {
            Some((j, t)) if *j == i => one_percent_sentence(&t.risk_fpr, &sc),
            _ => String::new(),
        };
        let readouts: Vec<String> = c
            .risk_fpr
            .iter()
            .map(|(f, tp)| format!("FPR {} → TPR ≤ {}", fmt_num(*f), fmt_num_up(*tp)))
            .collect();
        let mut fx = vec![
            text("training-statement", statement),
            text("profile-summary", tc::summary_profile(&c.profile, i.delta)),
            text("profile-status", ""),
            text("risk-sentence", risk),
            // The attack bound under the plain-language sentence too (the headline's run).
            text("sentence-risk", under),
            text("risk-readouts", readouts.join(" · ")),
        ];
        for (n, why) in c.errors.iter().enumerate() {
            if let Some(m) = why {
                fx.extend(clear_chart(n, &reason_in_words(m)));
                if n == 2 {
                    fx.push(text("sentence-risk", ""));
                }
            }
        }
        fx
    }

    /// The three tight charts' series as CSV for the inputs shown under `header` (the run's
    /// `# key = value` lines), with what they are for; Err(why) while they are not (yet)
    /// the charts of these inputs.
    pub fn charts_csv(&self, header: &str) -> Result<String, String> {
        let i = self.inputs();
        let c = self
            .charts()
            .filter(|_| self.tight.asked == Some(i))
            .ok_or("the tight charts are being computed for these inputs")?;
        let mut s = header.to_string();
        s += &format!("# charts_for = {}\n", self.scheme(&i).words(&i));
        if let Some((st, p)) = self.correlated.spec.as_ref() {
            s += &format!("# noise = correlated\n# strategy = {st}\n# participation = {p}\n");
        }
        if let Some(d) = self.dataset_for(i.q) {
            s += &format!(
                "# dataset_size = {}\n# batch_size = {}\n# epochs = {}\n",
                d.n, d.b, d.e
            );
        }
        Ok(s + &tc::charts_csv(&c.training, &c.profile, &c.risk))
    }

    /// The run the tight charts were drawn for, as an export's footer names it; None before
    /// any answer.
    pub fn export_caption(&self) -> Option<String> {
        self.charts()?;
        let i = self.inputs();
        let caption = self.scheme(&i).export_caption(&i);
        Some(match self.correlated.spec.as_ref() {
            Some((st, p)) => format!("{caption}; correlated noise: {st}, participation {p}"),
            None => caption,
        })
    }

    /// The footer line of chart `which`'s export (the run it is for, as an export leaves the
    /// page); None while it has nothing to show. Charts A and B are exact RDP of one example
    /// under Poisson sampling for `drawn`, the inputs of the model drawn; chart D is for
    /// its own two inputs (`capacity`, when valid).
    pub fn export_caption_for(
        &self,
        which: &str,
        drawn: &Inputs,
        capacity: Option<(f64, f64)>,
    ) -> Option<String> {
        match which {
            "training" | "profile" | "risk" => self.export_caption(),
            "c" => self.chart_c().map(|(s, _)| page::export_caption_c(s)),
            "d" => capacity.map(|(g, l)| page::export_caption_d(g, l)),
            _ => Some(Scheme::of(Batching::Poisson, 1, Adjacency::AddRemove).export_caption(drawn)),
        }
    }
}

/// The attack-risk sentence at a false-positive rate of 1 % (from the readouts), naming the
/// bound the curve is for `scheme` ([`page::Scheme::risk_source`]).
pub fn one_percent_sentence(risk_fpr: &[(f64, f64)], scheme: &page::Scheme) -> String {
    one_percent_from(risk_fpr, &scheme.risk_source())
}

/// [`one_percent_sentence`] naming its `source` in words.
pub fn one_percent_from(risk_fpr: &[(f64, f64)], source: &str) -> String {
    risk_fpr
        .iter()
        .find(|(f, _)| (*f - 0.01).abs() < 1e-12)
        .map(|&(f, tp)| tc::risk_sentence(f, tp, source))
        .unwrap_or_default()
}
