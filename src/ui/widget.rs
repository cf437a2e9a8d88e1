//! The widget's settings from its attributes: one parser per attribute, the same field
//! parser as the page's boxes and link, a named message for every refused value (the last
//! good value kept). No DOM: tested natively; `web::widget` only applies them.

use crate::engine::{Adjacency, Conversion};
use crate::render::{fmt_eps, fmt_num, Heavy, Inputs, Model};
use crate::ui::fields::{parse_field, Field};
use crate::ui::link::Batching;
use crate::ui::page::epochs_of;
pub use crate::ui::page::Scheme;
use crate::ui::protocol::Value;
use crate::ui::session::{fmt_eps6, fmt_eps6_lower, gdp_text, is_heavy, parse_heavy, TightCharts};

/// The tight accountant's last answer (from the page's shared worker, via widget.js).
#[derive(Default)]
pub struct TightState {
    /// The inputs the answer is for; an answer for other inputs is shown marked stale.
    pub inputs: Option<Inputs>,
    /// Certified (upper, lower) ε.
    pub eps: Option<(f64, f64)>,
    /// Why there is no tight ε for `inputs` (no worker, budget exceeded).
    pub error: Option<String>,
    pub charts: Option<TightCharts>,
    /// The inputs `charts` are for (they arrive after the headline).
    pub charts_inputs: Option<Inputs>,
    /// μ-GDP with its fit in words (under the risk chart), and the inputs it is for.
    pub gdp: Option<(Inputs, String)>,
}

impl TightState {
    /// The certified (upper, lower) ε for `i`, if known.
    pub fn for_inputs(&self, i: &Inputs) -> Option<(f64, f64)> {
        self.eps.filter(|_| self.inputs.as_ref() == Some(i))
    }

    /// Read the worker's answer for the values shown `i` of run `scheme`: the headline
    /// (`{kind: "headline", epsilon, epsilonLower}`, or `{kind: "error", message}`, also
    /// sent by widget.js when there is no worker), the charts, μ-GDP. Another run than the
    /// plain one reads its own answer, which stands whether or not Poisson's failed.
    pub fn answer(&mut self, data: &Value, i: Inputs, scheme: &Scheme) -> Answered {
        let kind = data.text("kind").unwrap_or_default();
        let own = scheme.answer_key().map(|k| data.get(k));
        // (upper, lower) or the reason there is none, for a headline or an error.
        let headline = match (own, kind) {
            (Some(a), "headline" | "error") => {
                let (up, lo) = (a.num("epsilon"), a.num("epsilonLower"));
                // Fixed-size batches have an RDP upper bound only: 0, the trivial lower
                // bound (the title says no lower bound is computed).
                let lo = if lo.is_nan() && scheme.sampling == Batching::FixedSize {
                    0.0
                } else {
                    lo
                };
                Some(if up.is_finite() && lo.is_finite() {
                    Ok((up, lo))
                } else {
                    Err(a
                        .text("error")
                        .unwrap_or("the worker gave no answer for this scheme")
                        .to_string())
                })
            }
            (None, "headline") => {
                let (up, lo) = (data.num("epsilon"), data.num("epsilonLower"));
                if !(up.is_finite() && lo.is_finite()) {
                    return Answered::Nothing;
                }
                Some(Ok((up, lo)))
            }
            (None, "error") => Some(Err(data.text("message").unwrap_or_default().to_string())),
            _ => None,
        };
        match (headline, kind) {
            (Some(Ok(eps)), _) => {
                self.eps = Some(eps);
                self.error = None;
                self.inputs = Some(i);
                Answered::Headline
            }
            (Some(Err(msg)), _) => {
                self.error = Some(msg.chars().take(200).collect());
                self.eps = None;
                self.charts = None;
                self.inputs = Some(i);
                Answered::Headline
            }
            (None, "charts") => {
                self.charts = Some(TightCharts::parse(data));
                self.charts_inputs = Some(i);
                Answered::Charts
            }
            (None, "gdp") => {
                let text = match data.text("error") {
                    Some(m) => format!("μ-GDP unavailable: {m}"),
                    None => gdp_text(data),
                };
                self.gdp = Some((i, text));
                Answered::Charts
            }
            // No charts for these inputs: the last run's go too (issue 61 #2: they stayed,
            // dimmed, under the new run's labels).
            (None, "charts-error") => {
                self.charts = None;
                self.charts_inputs = Some(i);
                Answered::ChartsError(data.text("message").unwrap_or_default().to_string())
            }
            _ => Answered::Nothing,
        }
    }
}

/// What a tight answer changed for a widget.
#[derive(Debug, PartialEq)]
pub enum Answered {
    /// The headline is settled (a number or why there is none).
    Headline,
    /// The charts or μ-GDP.
    Charts,
    /// The charts failed (logged).
    ChartsError(String),
    Nothing,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Headline and chart A.
    Compact,
    /// Adds sliders for q, σ, steps, δ, chart B and the sentence.
    Full,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Theme {
    Auto,
    Light,
    Dark,
}

/// Which accountant the headline shows: `accountant="both|pld|rdp"` (default both; the one
/// accountant type of every front end).
pub use crate::engine::Accountant;

/// Which charts to show: any of `epsilon bound training profile risk`, or `none`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Charts {
    pub epsilon: bool,
    pub bound: bool,
    /// ε over training (tight and exact RDP).
    pub training: bool,
    /// The privacy profile δ(ε).
    pub profile: bool,
    /// The membership-inference TPR bound.
    pub risk: bool,
}

impl Charts {
    /// Whether a chart needs the tight accountant's worker.
    pub fn tight(&self) -> bool {
        self.training || self.profile || self.risk
    }
}

const CHART_NAMES: &str = "epsilon, bound, training, profile, risk or none";

/// Parse the `charts` attribute (tokens separated by spaces or commas).
pub fn parse_charts(text: &str) -> Result<Charts, String> {
    let mut c = Charts::default();
    let mut any = false;
    for tok in text.split([' ', ',', '\t', '\n']).filter(|t| !t.is_empty()) {
        any = true;
        match tok.to_ascii_lowercase().as_str() {
            "epsilon" | "eps" | "a" => c.epsilon = true,
            "bound" | "b" => c.bound = true,
            "training" => c.training = true,
            "profile" => c.profile = true,
            "risk" => c.risk = true,
            "none" => {}
            _ => return Err(format!("'{}' is not a chart: use {CHART_NAMES}", clip(tok))),
        }
    }
    if !any {
        return Err(format!("empty: use {CHART_NAMES}"));
    }
    Ok(c)
}

fn clip(s: &str) -> String {
    s.chars().take(24).collect()
}

/// A keyword attribute; absent or empty means the first choice.
fn keyword<T: Copy>(value: Option<&str>, what: &str, choices: &[(&str, T)]) -> Result<T, String> {
    let v = value.map(str::trim).unwrap_or("");
    if v.is_empty() {
        return Ok(choices[0].1);
    }
    match choices.iter().find(|(k, _)| *k == v) {
        Some((_, t)) => Ok(*t),
        None => {
            let names: Vec<&str> = choices.iter().map(|c| c.0).collect();
            let article = if what.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            Err(format!(
                "'{}' is not {article} {what}: use {}",
                clip(v),
                names.join(", ")
            ))
        }
    }
}

/// The widget's settings, parsed from its attributes. Bad values keep the
/// last good one and are listed in `errors` (attribute name, message).
#[derive(Clone, Debug)]
pub struct Settings {
    pub inputs: Inputs,
    pub mode: Mode,
    pub charts: Option<Charts>,
    pub accountant: Accountant,
    pub theme: Theme,
    /// The `calculator` attribute: an absolute http(s) URL of the full page to link to.
    pub calculator: Option<String>,
    /// The `sampling` attribute: how batches are drawn (the page's `batch=` choices).
    pub sampling: Batching,
    /// The `group-size` attribute: examples per user (1 … 256); above 1 the ε is user-level.
    pub group: u32,
    /// The `adjacency` attribute: add-remove (default) or replace-one.
    pub adjacency: Adjacency,
    /// The `dataset-size` attribute: N, for truncated Poisson and fixed-size batches.
    pub dataset_size: Option<u64>,
    /// The `max-batch` attribute: truncated Poisson's largest batch (default q·N + 4 s.d.).
    pub max_batch: Option<u64>,
    pub errors: Vec<(String, String)>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            inputs: Inputs::mnist(),
            mode: Mode::Compact,
            charts: None,
            accountant: Accountant::Both,
            theme: Theme::Auto,
            calculator: None,
            sampling: Batching::Poisson,
            group: 1,
            adjacency: Adjacency::AddRemove,
            dataset_size: None,
            max_batch: None,
            errors: Vec::new(),
        }
    }
}

impl Settings {
    /// Apply one attribute (`None`: removed → back to the default).
    pub fn set(&mut self, name: &str, value: Option<&str>) {
        self.errors.retain(|(n, _)| n != name);
        let r: Result<(), String> = match name {
            "q" | "sigma" | "steps" | "delta" => {
                match Field::ALL.into_iter().find(|f| f.id() == name) {
                    None => Ok(()),
                    Some(f) => match value {
                        None => {
                            f.set(&mut self.inputs, f.get(&Inputs::mnist()));
                            Ok(())
                        }
                        Some(t) => parse_field(f, t).map(|v| f.set(&mut self.inputs, v)),
                    },
                }
            }
            "mode" => keyword(
                value,
                "mode",
                &[("compact", Mode::Compact), ("full", Mode::Full)],
            )
            .map(|m| self.mode = m),
            "charts" => match value {
                None => {
                    self.charts = None;
                    Ok(())
                }
                Some(t) => parse_charts(t).map(|c| self.charts = Some(c)),
            },
            "accountant" => keyword(
                value,
                "accountant",
                &[
                    ("both", Accountant::Both),
                    ("pld", Accountant::Pld),
                    ("rdp", Accountant::Rdp),
                ],
            )
            .map(|a| self.accountant = a),
            "conversion" => keyword(
                value,
                "conversion",
                &[
                    ("improved", Conversion::Improved),
                    ("classic", Conversion::Classic),
                ],
            )
            .map(|c| self.inputs.conversion = c),
            "theme" => keyword(
                value,
                "theme",
                &[
                    ("auto", Theme::Auto),
                    ("light", Theme::Light),
                    ("dark", Theme::Dark),
                ],
            )
            .map(|t| self.theme = t),
            "sampling" => keyword(
                value,
                "sampling scheme",
                &[
                    ("poisson", Batching::Poisson),
                    ("shuffled", Batching::Shuffled),
                    ("shuffle", Batching::Shuffled),
                    ("random-allocation", Batching::RandomAllocation),
                    ("balls-in-bins", Batching::RandomAllocation),
                    ("truncated-poisson", Batching::TruncatedPoisson),
                    ("fixed-size", Batching::FixedSize),
                ],
            )
            .map(|b| self.sampling = b),
            "dataset-size" => match value {
                None => {
                    self.dataset_size = None;
                    Ok(())
                }
                Some(v) => crate::ui::link::parse_count(v, "dataset-size")
                    .map(|n| self.dataset_size = Some(n)),
            },
            "max-batch" => match value {
                None => {
                    self.max_batch = None;
                    Ok(())
                }
                Some(v) => crate::ui::link::parse_max_batch(v).map(|m| self.max_batch = Some(m)),
            },
            "adjacency" => match value {
                None => {
                    self.adjacency = Adjacency::AddRemove;
                    Ok(())
                }
                Some(v) => Adjacency::parse(v)
                    .map(|a| self.adjacency = a)
                    .ok_or_else(|| {
                        format!(
                            "adjacency must be 'add-remove' or 'replace-one', got '{}'",
                            v.chars().take(32).collect::<String>()
                        )
                    }),
            },
            "group-size" => match value {
                None => {
                    self.group = 1;
                    Ok(())
                }
                Some(v) => crate::ui::link::parse_group(v).map(|k| self.group = k),
            },
            "calculator" => {
                self.calculator = None;
                value
                    .map(calculator_url)
                    .transpose()
                    .map(|u| self.calculator = u)
            }
            _ => Ok(()),
        };
        if let Err(m) = r {
            self.errors.push((name.to_string(), m));
        }
    }

    /// The charts shown: the attribute, else epsilon (compact) or both (full).
    pub fn charts(&self) -> Charts {
        self.charts.unwrap_or(Charts {
            epsilon: true,
            bound: self.mode == Mode::Full,
            ..Charts::default()
        })
    }

    /// Whether this widget asks the tight accountant (its headline or a chart needs it;
    /// a scheme other than Poisson sampling is only answered there).
    pub fn wants_tight(&self) -> bool {
        self.accountant != Accountant::Rdp || self.charts().tight() || !self.scheme().is_plain()
    }

    /// The run the tight ε is for.
    pub fn scheme(&self) -> Scheme {
        Scheme {
            dataset_size: self.dataset_size,
            max_batch: self.max_batch,
            ..Scheme::of(self.sampling, self.group, self.adjacency)
        }
    }

    /// The charts drawn: those asked for that the scheme has. ε vs α and bound vs exact
    /// are Poisson sampling's exact RDP; the tight charts (ε over training, profile,
    /// attack risk) follow every scheme of one example per user (fixed-size: ε over
    /// training only).
    pub fn shown_charts(&self) -> Charts {
        let c = self.charts();
        match self.sampling {
            // User-level: the tight charts; ε vs α and bound vs exact are one example's.
            Batching::Poisson if !self.scheme().is_plain() => Charts {
                epsilon: false,
                bound: false,
                ..c
            },
            Batching::Poisson => c,
            // The other schemes (one example per user): their own tight charts (the shuffled
            // band's two ends); fixed-size batches have an RDP bound only (ε over training,
            // no profile or attack risk).
            Batching::RandomAllocation | Batching::Shuffled | Batching::TruncatedPoisson
                if self.group == 1 =>
            {
                Charts {
                    epsilon: false,
                    bound: false,
                    ..c
                }
            }
            Batching::FixedSize if self.group == 1 => Charts {
                training: c.training,
                ..Charts::default()
            },
            _ => Charts::default(),
        }
    }

    /// One line per bad attribute, naming it and what is shown instead (errors, shown as
    /// such); the notes ([`Settings::notes`]) follow them.
    pub fn messages(&self) -> Vec<String> {
        self.errors
            .iter()
            .map(|(n, m)| {
                let kept = match Field::ALL.into_iter().find(|f| f.id() == n) {
                    Some(f) => format!("; showing {n} = {}", f.format(f.get(&self.inputs))),
                    None => String::new(),
                };
                format!("attribute {n}: {m}{kept}")
            })
            .collect()
    }

    /// Informational notes, not errors (issue 61 #6: they were red like errors): with another
    /// scheme than Poisson sampling, which charts asked for are not drawn, and why.
    pub fn notes(&self) -> Vec<String> {
        let (asked, shown) = (self.charts(), self.shown_charts());
        let missing: Vec<&str> = [
            (asked.epsilon && !shown.epsilon, "epsilon"),
            (asked.bound && !shown.bound, "bound"),
            (asked.training && !shown.training, "training"),
            (asked.profile && !shown.profile, "profile"),
            (asked.risk && !shown.risk, "risk"),
        ]
        .into_iter()
        .filter_map(|(m, n)| m.then_some(n))
        .collect();
        let scheme = (!missing.is_empty()).then(|| {
            if self.sampling == Batching::FixedSize && self.group == 1 {
                format!(
                    "charts {}: not drawn for fixed-size batches, which have an RDP bound only (no privacy-loss distribution for a profile or attack risk; ε vs α and bound vs exact are Poisson sampling's)",
                    missing.join(", ")
                )
            } else if self.sampling == Batching::Poisson {
                format!(
                    "charts {}: exact RDP of one example under add/remove, not drawn for {}",
                    missing.join(", "),
                    self.scheme().name()
                )
            } else {
                format!(
                    "charts {}: drawn for Poisson sampling only, not for {}",
                    missing.join(", "),
                    self.scheme().name()
                )
            }
        });
        scheme.into_iter().collect()
    }
}

/// The headline's title and the sentence's words for a scheme's answer: what the two
/// ends of [lower, upper] are and which run they are for.
pub fn scheme_words(b: Batching, i: &Inputs) -> String {
    let (t, e) = epochs_of(i);
    crate::ui::page::scheme_words_for(b, t, e)
}

/// The `calculator` attribute: an http(s) URL, absolute or relative to the page (the
/// widget resolves it against the document when it builds the link). A scheme other
/// than http(s) — `javascript:`, `data:` — is refused. The scheme is found as browsers
/// find it: ASCII tab and newline removed anywhere, C0 controls and spaces trimmed.
pub fn calculator_url(text: &str) -> Result<String, String> {
    let t: String = text
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let t = t.trim_matches(|c: char| c <= ' ');
    if t.is_empty() {
        return Err("empty: give the calculator page's URL".into());
    }
    // A scheme: a letter, then letters, digits, '+', '-' or '.', then ':' (before any of
    // '/', '?', '#'); without one the URL is relative (and http(s) like the page).
    let head = t.split(['/', '?', '#']).next().unwrap_or("");
    if let Some((scheme, _)) = head.split_once(':') {
        let is_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if is_scheme && !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
            return Err(format!(
                "only http(s) links are allowed, not {}:",
                clip(scheme)
            ));
        }
    }
    Ok(t.to_string())
}

/// One widget's state apart from its elements: its settings, the model shown, the small-σ
/// model's RDP part from the worker, the tight answers, and where it is.
pub struct State {
    /// From the attributes, and from the full mode's controls as the reader uses them.
    pub settings: Settings,
    pub model: Option<Model>,
    /// The worker's RDP part of the model at small σ, for the inputs it was asked with.
    heavy: Option<(Inputs, Heavy)>,
    pub tight: TightState,
    /// The run the model and the tight state are for (a `sampling` or `group-size` change
    /// recomputes).
    shown_scheme: Scheme,
    pub host_dark: bool,
    /// Far from the viewport: numbers and text are kept current, the charts are drawn
    /// when it comes near.
    pub offscreen: bool,
}

impl Default for State {
    fn default() -> State {
        State {
            settings: Settings::default(),
            model: None,
            heavy: None,
            tight: TightState::default(),
            shown_scheme: Settings::default().scheme(),
            host_dark: false,
            offscreen: false,
        }
    }
}

/// What [`State::compute`] did.
#[derive(Debug, PartialEq)]
pub enum Computed {
    /// A new model (the `change` event fires).
    Fresh,
    /// The same inputs: only a redraw.
    Same,
    /// Small σ: the model's RDP part is awaited from the worker (the last numbers stay).
    Waiting,
    /// The engine refused the mix of valid fields: the messages to show.
    Refused(Vec<String>),
}

impl State {
    /// The footer an export of chart `which` carries: the run it is for (issue 61 #6) —
    /// "epsilon" and "bound" are exact RDP of one example under Poisson sampling, the tight
    /// charts the run shown. None while the chart is not shown or has nothing for the values
    /// shown (an export is never of another run).
    pub fn export_caption(&self, which: &str) -> Option<String> {
        let i = self.model.as_ref()?.inputs;
        let c = self.settings.shown_charts();
        let tight = self.tight.charts.is_some() && self.tight.charts_inputs == Some(i);
        let shown = match which {
            "epsilon" => c.epsilon,
            "bound" => c.bound,
            "training" => c.training && tight,
            "profile" => c.profile && tight,
            "risk" => c.risk && tight,
            _ => false,
        };
        let scheme = match which {
            "epsilon" | "bound" => Scheme::of(Batching::Poisson, 1, Adjacency::AddRemove),
            _ => self.settings.scheme(),
        };
        shown.then(|| scheme.export_caption(&i))
    }

    /// Draw chart `which` (epsilon, bound, training, profile, risk) of the values shown for an
    /// export on `root` (the web layer's SVG surface, which measures text without inline
    /// styles; natively any backend): light theme, the run named under it (issue 61 #6: the
    /// page exports its charts, and now the widget too). False when it has nothing for them.
    pub fn draw_export<DB: plotters::prelude::DrawingBackend>(
        &self,
        which: &str,
        root: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    ) -> bool {
        use crate::render::{self, tight};
        let (Some(caption), Some(m)) = (self.export_caption(which), self.model.as_ref()) else {
            return false;
        };
        let (th, labels) = (
            render::Theme::light(1.0),
            self.settings.scheme().chart_labels(),
        );
        let Ok(area) = render::with_footer(root, &caption, &th) else {
            return false;
        };
        match (which, self.tight.charts.as_ref()) {
            ("epsilon", _) => render::draw_eps_vs_alpha(&area, m, &th).is_ok(),
            ("bound", _) => render::draw_bound_vs_exact(&area, m, &th, false).is_ok(),
            ("training", Some(c)) => {
                tight::draw_training(&area, &c.training, None, None, &labels, &th).is_ok()
            }
            ("profile", Some(c)) => {
                tight::draw_profile(&area, &c.profile, m.inputs.delta, &labels, &th).is_ok()
            }
            ("risk", Some(c)) => tight::draw_risk(&area, &c.risk, &[], &labels, &th).is_ok(),
            _ => false,
        }
    }

    /// The tight charts' data as CSV (the page's charts CSV: every series), headed by the run
    /// they are for; None while they are not here for the values shown.
    pub fn export_csv(&self) -> Option<String> {
        let i = self.model.as_ref()?.inputs;
        let c = self
            .tight
            .charts
            .as_ref()
            .filter(|_| self.tight.charts_inputs == Some(i))?;
        Some(format!(
            "# charts_for = {}\n{}",
            self.settings.scheme().export_caption(&i),
            crate::render::tight::charts_csv(&c.training, &c.profile, &c.risk)
        ))
    }

    /// Recompute if the settings changed. A change of run drops the tight answers (they
    /// belong to the run they were asked for).
    pub fn compute(&mut self) -> Computed {
        let inputs = self.settings.inputs;
        let scheme = self.settings.scheme();
        let fresh =
            self.model.as_ref().is_none_or(|m| m.inputs != inputs) || self.shown_scheme != scheme;
        if self.shown_scheme != scheme {
            self.tight = TightState::default();
            self.shown_scheme = scheme;
        }
        if !fresh {
            return Computed::Same;
        }
        let computed = if is_heavy(&inputs) {
            match self.heavy.as_ref().filter(|(a, _)| *a == inputs) {
                Some((_, h)) => Model::from_heavy(inputs, h.clone()),
                None => return Computed::Waiting,
            }
        } else {
            Model::compute(inputs)
        };
        match computed {
            Ok(m) => {
                self.model = Some(m);
                Computed::Fresh
            }
            Err(e) => {
                let mut msgs = self.settings.messages();
                msgs.push(format!("cannot compute: {e}"));
                Computed::Refused(msgs)
            }
        }
    }

    /// The worker request for the model at small σ, when the inputs shown need one.
    pub fn heavy_request(&self) -> Option<crate::ui::protocol::Fields> {
        let inp = self.settings.inputs;
        let done = self.model.as_ref().is_some_and(|m| m.inputs == inp);
        (is_heavy(&inp) && !done).then(|| crate::ui::protocol::run(&inp, None))
    }

    /// The worker's answer to the last heavy request: kept for the inputs shown, or the
    /// messages naming its refusal.
    pub fn heavy_answer(&mut self, data: &Value) -> Result<(), Vec<String>> {
        if let Some(m) = data.text("error") {
            let mut msgs = self.settings.messages();
            msgs.push(format!("cannot compute: {m}"));
            return Err(msgs);
        }
        self.heavy = Some((self.settings.inputs, parse_heavy(data)));
        Ok(())
    }

    /// Whether the widget shows tight charts, is near the viewport, and has none for the
    /// values shown.
    pub fn needs_tight_charts(&self) -> bool {
        self.settings.shown_charts().tight()
            && !self.offscreen
            && self
                .model
                .as_ref()
                .is_some_and(|m| self.tight.charts_inputs != Some(m.inputs))
    }

    /// The worker request for the values shown (None before the first model). Tight
    /// charts only near the viewport (hardening round 3, #4: two hundred widgets far from
    /// the screen each had the worker compute three charts); μ-GDP with its fit under the
    /// risk chart. Another scheme: the worker's batch line for t = ⌊1/q⌋ and E = ⌈T·q⌉ (as
    /// the page); user-level, replace-one, and the sizes of truncated Poisson and
    /// fixed-size batches (or why they cannot be asked).
    pub fn tight_request(&self) -> Option<crate::ui::protocol::Fields> {
        let m = self.model.as_ref()?;
        let charts = self.settings.shown_charts().tight() && !self.offscreen;
        let ask = crate::ui::protocol::Tight {
            charts,
            gdp: charts && self.settings.shown_charts().risk,
            ..Default::default()
        };
        Some(crate::ui::protocol::tight(
            &m.inputs,
            None,
            &self.settings.scheme(),
            epochs_of(&m.inputs).1,
            ask,
        ))
    }

    /// A tight answer for the model shown ([`TightState::answer`]).
    pub fn tight_answer(&mut self, data: &Value) -> Answered {
        match &self.model {
            Some(m) => self.tight.answer(data, m.inputs, &self.settings.scheme()),
            None => Answered::Nothing,
        }
    }

    /// The `change` detail of the model shown ([`detail`]).
    pub fn detail(&self) -> Option<Vec<(&'static str, Value)>> {
        let m = self.model.as_ref()?;
        Some(detail(m, &self.tight, self.settings.scheme()))
    }

    /// Whether it is drawn dark (`theme`, or the host page's scheme for `auto`).
    pub fn dark(&self) -> bool {
        match self.settings.theme {
            Theme::Auto => self.host_dark,
            Theme::Light => false,
            Theme::Dark => true,
        }
    }
}

/// What a widget's texts say for its model and tight state (web writes them).
#[derive(Debug, Clone, PartialEq)]
pub struct Texts {
    /// The refused attributes, and why the tight ε is unavailable.
    pub messages: Vec<String>,
    /// Informational notes (which charts a scheme does not draw), shown apart from errors.
    pub notes: Vec<String>,
    /// Which headline parts show: the tight ε, exact RDP's.
    pub pld: bool,
    pub rdp: bool,
    pub rdp_label: &'static str,
    pub eps: String,
    pub alpha: String,
    /// The tight ε, its title (what its ends mean), and whether it is for other inputs.
    pub eps_pld: String,
    pub eps_pld_title: String,
    pub stale: bool,
    /// The run in words under the headline.
    pub context: String,
    /// The full mode's sentence (None in the compact mode).
    pub sentence: Option<String>,
    /// What the headline's ε is, after it: "tight (PLD)" for Poisson sampling of one
    /// example; for shuffled batches the band with both ends (the headline is its upper
    /// end, no amplification); the scheme's name otherwise.
    pub acct: String,
}

/// The widget's texts. The headline shows the tight ε, exact RDP's, or both (the
/// `accountant` attribute); another run than the plain one its certified ε only (exact RDP
/// here is one example's under Poisson sampling). A tight ε for other inputs stays shown,
/// marked stale, until the worker answers.
pub fn texts(s: &Settings, m: &Model, t: &TightState) -> Texts {
    let inp = &m.inputs;
    let scheme = s.scheme();
    let tight = t.for_inputs(inp);
    let current = t.inputs.as_ref() == Some(inp);
    let mut messages = s.messages();
    if let (Some(err), true) = (&t.error, current) {
        if s.accountant != Accountant::Rdp {
            messages.push(format!(
                "tight accountant: {err} (the exact-RDP ε still applies)"
            ));
        }
    }
    let (pld, rdp) = match s.accountant {
        _ if !scheme.is_plain() => (true, false),
        Accountant::Both => (true, true),
        Accountant::Pld => (true, false),
        Accountant::Rdp => (false, true),
    };
    let (eps_pld, eps_pld_title) = match (t.eps, &t.error) {
        (Some((up, lo)), _) => (
            fmt_eps(up),
            if scheme.is_plain() {
                format!(
                    "certified bracket [{}, {}] (privacy-loss distribution)",
                    fmt_eps6_lower(lo),
                    fmt_eps6(up)
                )
            } else if scheme.sampling == Batching::FixedSize {
                format!("≤ {}: {}", fmt_eps6(up), scheme.words(inp))
            } else {
                format!(
                    "[{}, {}]: {}",
                    fmt_eps6_lower(lo),
                    fmt_eps6(up),
                    scheme.words(inp)
                )
            },
        ),
        (None, Some(err)) if current => ("—".to_string(), err.clone()),
        _ => ("…".to_string(), "computing the tight ε".to_string()),
    };
    let context = format!(
        "δ = {:e} after {} steps at q = {}, σ = {}{}{}",
        inp.delta,
        inp.steps,
        fmt_num(inp.q),
        fmt_num(inp.sigma),
        if inp.conversion == Conversion::Classic {
            " (classic conversion)"
        } else {
            ""
        },
        if scheme.is_plain() {
            String::new()
        } else {
            format!("; {}", scheme.words(inp))
        }
    );
    let sentence = (s.mode == Mode::Full).then(|| match (scheme.is_plain(), tight) {
        (true, Some((up, _))) if s.accountant != Accountant::Rdp => {
            crate::render::sentence_for(inp, up, "tight (privacy-loss distribution)")
        }
        (true, _) => m.sentence(),
        (false, Some((up, _))) => scheme.sentence(inp, up),
        (false, None) => format!(
            "The ε for {} is being computed or unavailable (see above).",
            scheme.name()
        ),
    });
    let acct = match (scheme.sampling, t.eps) {
        _ if scheme.is_plain() => " tight (PLD)".to_string(),
        (Batching::Shuffled, Some((up, lo))) => format!(
            " no-amplification upper end; certified band [{}, {}], shuffled batches",
            fmt_eps6_lower(lo),
            fmt_eps6(up)
        ),
        (Batching::Shuffled, None) => " shuffled batches: certified band".to_string(),
        _ => format!(" certified, {}", scheme.name()),
    };
    Texts {
        acct,
        messages,
        notes: s.notes(),
        pld,
        rdp,
        rdp_label: if pld { "exact RDP ε = " } else { "ε = " },
        eps: fmt_eps(m.opt.value),
        alpha: format!("{:.2}", m.opt.alpha),
        eps_pld,
        eps_pld_title,
        stale: !current,
        context,
        sentence,
    }
}

/// The `change` event's detail. With another run than Poisson sampling of one example per
/// user, `epsilon` and `alpha` (exact RDP of one example under Poisson sampling, not a
/// bound for it) are null and `epsilonPld`, `epsilonPldLower` are the run's certified
/// ends; `sampling`, `groupSize` and `adjacency` name it; truncated Poisson and fixed-size
/// batches give the sizes asked with (null otherwise).
pub fn detail(m: &Model, t: &TightState, scheme: Scheme) -> Vec<(&'static str, Value)> {
    let i = &m.inputs;
    let plain = scheme.is_plain();
    let num = |v: Option<f64>| v.map_or(Value::Null, Value::Num);
    let z = scheme.sizes(i).ok().flatten();
    let fixed = scheme.sampling == Batching::FixedSize;
    // The tight ε (certified upper) and its bracket's lower end; null until known.
    let tight = t.for_inputs(i);
    vec![
        ("q", Value::Num(i.q)),
        ("sigma", Value::Num(i.sigma)),
        ("steps", Value::Num(i.steps as f64)),
        ("delta", Value::Num(i.delta)),
        ("epsilon", num(plain.then_some(m.opt.value))),
        ("alpha", num(plain.then_some(m.opt.alpha))),
        ("conversion", Value::Text(i.conversion.name().into())),
        ("sampling", Value::Text(scheme.sampling.name().into())),
        ("groupSize", Value::Num(scheme.group.into())),
        ("adjacency", Value::Text(scheme.adjacency.name().into())),
        ("datasetSize", num(z.map(|z| z.dataset_size as f64))),
        (
            "maxBatch",
            num(z.filter(|_| !fixed).map(|z| z.max_batch as f64)),
        ),
        ("epsilonPld", num(tight.map(|e| e.0))),
        ("epsilonPldLower", num(tight.map(|e| e.1))),
    ]
}

#[cfg(test)]
mod tests;
