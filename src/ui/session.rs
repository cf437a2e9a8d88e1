//! The page model (#20): the page's choices (its [`Link`]: inputs, accountant, batching,
//! examples per user, adjacency, sizes, dataset terms, target) and what the worker was
//! asked and has answered, for which inputs — one value, changed only by the updates here.
//! Each update returns the [`Effect`]s web carries out: writes to elements by id (text,
//! never HTML), worker posts, timers, chart redraws. An answer is used only for the inputs
//! it was computed for; what is shown for other inputs is replaced or said to be
//! unavailable with the reason. No DOM: tested natively (see the tests below).

use crate::decimal::Dir;
use crate::engine::{bounds::MaxOrder, Adjacency, Optimum};
use crate::render::library;
use crate::render::tight::{self as tc, ProfileRow, Training};
use crate::render::{fmt_eps, fmt_eps_lower, fmt_num, fmt_num_up, Inputs};
use crate::render::{Heavy, Model, HEAVY_SIGMA};
use crate::ui::link::{self, Acct, Batching, Dataset, Link};
use crate::ui::page::{self, reason_in_words, wide_note, Scheme};
use crate::ui::protocol::{self, Fields, Kind, Value};

mod audit;
mod charts;
pub use charts::{one_percent_from, one_percent_sentence};
mod check;
mod correlated;
mod inverse;

/// Quiet time before a request is posted (the slider is still moving before that): three
/// frames, so a drag posts when it pauses, and a typed σ is asked 50 ms after its keystroke
/// (it was 80 ms: `node benches/page_updates.mjs` on MNIST read the tight ε 101–105 → 74 ms and
/// the three tight charts 167–170 → 136–138 ms p50 from the keystroke).
pub const REST_MS: i32 = 50;
/// After this long without an answer the old numbers are marked as updating.
pub const UPDATING_MS: i32 = 150;

pub use crate::ui::view::Op;

/// The page's timers (one of each at a time: starting one replaces it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// Post the request for the inputs shown ([`Page::post`]).
    Post,
    /// Mark the old numbers as updating ([`Page::updating_due`]).
    Updating,
    /// Say the small-σ model is being computed ([`Page::computing_due`]).
    Computing,
}

/// After this long without the small-σ model the page says it is computing.
pub const COMPUTING_MS: i32 = 150;

/// What web does after an update.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Op(Op),
    /// A request to the worker, and what to write when it is posted or cannot be.
    Post(Fields, Option<Posting>),
    Start(Timer, i32),
    /// The three tight charts' figures marked stale (being recomputed) or not.
    Stale(bool),
    /// Tight chart `n`'s canvas and read-out cleared (its texts come as ops).
    ClearChart(usize),
    /// The read-out values of the three tight charts removed (the inputs changed).
    ClearReadouts,
    /// Draw the tight charts from [`Page::charts`] and write [`Page::chart_texts`].
    Redraw,
    /// The library snippets (title, code), rebuilt.
    Snippets(Vec<(String, String)>),
    /// Recompute and redraw the page (the small-σ model arrived).
    Frame,
    /// Draw chart C from [`Page::chart_c`].
    ChartC,
}

/// What a request's post says: "computing…" in `computing` once posted; `message` in
/// `failed` when there is no worker to post to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Posting {
    pub computing: Option<&'static str>,
    pub failed: &'static str,
    pub message: &'static str,
}

fn text(id: &'static str, s: impl Into<String>) -> Effect {
    Effect::Op(Op::Text(id, s.into()))
}

/// The worker's "charts" answer: ε over training, the privacy profile, attack risk.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TightCharts {
    pub training: Training,
    pub profile: Vec<ProfileRow>,
    /// The TPR bound's curve, (FPR, TPR).
    pub risk: Vec<(f64, f64)>,
    /// Readouts at FPR = 1e-3, 1e-2, 0.1, (FPR, TPR).
    pub risk_fpr: Vec<(f64, f64)>,
    /// Why a chart (training, profile, risk) is absent from the answer: each stands alone.
    pub errors: [Option<String>; 3],
}

impl TightCharts {
    /// Read a "charts" answer (absent or malformed parts read as empty or NaN, which the
    /// charts skip).
    pub fn parse(data: &Value) -> TightCharts {
        let tr = data.get("training");
        let risk = data.get("risk");
        let errors = data.get("errors");
        TightCharts {
            training: Training {
                steps: tr.nums("steps"),
                pld_upper: tr.nums("pldUpper"),
                pld_lower: tr.nums("pldLower"),
                rdp: tr.nums("rdp"),
            },
            profile: data
                .items("profile")
                .iter()
                .map(|p| ProfileRow {
                    epsilon: p.num("epsilon"),
                    upper: p.get("delta").num("upper"),
                    lower: p.get("delta").num("lower"),
                    rdp: p.num("rdp"),
                })
                .collect(),
            risk: risk
                .items("curve")
                .iter()
                .map(|p| (p.num("fpr"), p.num("tpr")))
                .collect(),
            risk_fpr: risk.nums("fpr").into_iter().zip(risk.nums("tpr")).collect(),
            errors: ["training", "profile", "risk"].map(|w| errors.text(w).map(String::from)),
        }
    }
}

/// The worker's μ-GDP answer in words (page and widget).
pub fn gdp_text(data: &Value) -> String {
    if let Some(m) = data.text("error") {
        return format!("μ-GDP unavailable: {}", reason_in_words(m));
    }
    let tradeoff: Vec<(f64, f64)> = data
        .items("tradeoff")
        .iter()
        .map(|p| (p.num("fpr"), p.num("tpr_max")))
        .collect();
    page::gdp_sentence(
        data.num("mu"),
        data.num("muLower"),
        data.num("regret"),
        &tradeoff,
    )
}

/// An upper end with six decimals, rounded up (a bracket's ends); beyond a million in
/// scientific notation.
pub fn fmt_eps6(e: f64) -> String {
    fmt_eps6_dir(e, Dir::Up)
}

/// A lower end with six decimals, rounded down.
pub fn fmt_eps6_lower(e: f64) -> String {
    fmt_eps6_dir(e, Dir::Down)
}

fn fmt_eps6_dir(e: f64, dir: Dir) -> String {
    if e > 1e6 {
        crate::decimal::sci(e, 5, dir)
    } else {
        crate::decimal::fixed(e, 6, dir)
    }
}

/// A run other than Poisson sampling of one example per user under add/remove, as posted:
/// (the run, t steps per epoch, E epochs).
type SchemeRun = (Scheme, u64, f64);

/// The three tight charts' canvases, in order (training, profile, risk).
pub const CHART_IDS: [&str; 3] = ["chart-training", "chart-profile", "chart-risk"];

/// The texts under each tight chart.
const CHART_TEXTS: [&[&str]; 3] = [
    &["training-statement"],
    &["profile-summary", "profile-status"],
    &["risk-sentence", "risk-readouts"],
];

/// The calibrations of "What do I need?", each with its own sequence.
const WHICH: [&str; 4] = ["sigma", "steps", "risk-sigma", "risk-steps"];

/// The element that shows calibration `which`'s answer.
fn answer_id(which: &str) -> &'static str {
    match which {
        "sigma" => "sigma-answer",
        "steps" => "steps-answer",
        "risk-sigma" => "risk-sigma-answer",
        _ => "risk-steps-answer",
    }
}

/// The element that shows calibration `which`'s refusal.
fn error_id(which: &str) -> &'static str {
    if which.starts_with("risk-") {
        "risk-error"
    } else {
        "target-error"
    }
}

/// What the tight accountant was asked and answered.
#[derive(Debug, Clone, Default)]
struct Tight {
    gen: u32,
    /// The inputs the page shows (the newest asked for).
    asked: Option<Inputs>,
    /// The inputs of the newest request posted (generation `gen`): an answer is used only
    /// while they are still the inputs shown (`asked`), so an answer that arrives after
    /// the inputs changed but before the next request is posted is dropped, not shown as
    /// the new inputs' (hardening round 3, #2).
    posted: Option<Inputs>,
    /// A request waits for the inputs to rest.
    post_pending: bool,
    updating_pending: bool,
    rdp_eps: f64,
    /// The last "charts" answer and the inputs it was computed for.
    charts: Option<(Inputs, TightCharts)>,
    /// The generation last answered (headline or refusal).
    answered: u32,
    /// The last tight ε (upper, lower) and the inputs it is for.
    last: Option<(Inputs, f64, f64)>,
    /// The run of the batching posted with the newest request, when it is not Poisson
    /// sampling of one example under add/remove.
    posted_scheme: Option<SchemeRun>,
    /// That run's last answer for the inputs posted: (inputs, run, upper, lower).
    scheme_last: Option<(Inputs, SchemeRun, f64, f64)>,
    /// The most steps whose certified ε meets the target (the target, the answer or its
    /// reason), for the inputs posted: the ε-over-training sentence.
    most: Option<(f64, Result<u64, String>)>,
}

/// "What do I need?": the newest calibration of each kind, and the answers kept for Apply.
#[derive(Debug, Clone, Default)]
struct Inverse {
    seq: [u32; 4],
    /// The inputs and the scheme the answers are for (they go when either changes).
    asked_for: Option<(Inputs, Scheme)>,
    sigma: Option<f64>,
    steps: Option<u64>,
}

/// Exact RDP computed in the worker: the small-σ model (below [`HEAVY_SIGMA`] one model
/// costs 6 ms to 1.2 s in wasm), the comparison table and chart C (~1000 RDP evaluations).
#[derive(Debug, Clone, Default)]
struct Rdp {
    gen: u32,
    /// The last request's inputs and whether it asked for the model.
    asked: Option<(Inputs, bool)>,
    model: Option<(Inputs, Heavy)>,
    computing_pending: bool,
    /// Chart C's data (it depends on σ only) and its σ.
    chart_c: Option<(f64, Vec<(f64, MaxOrder)>)>,
}

/// Whether the page computes exact RDP's model for `i` in the worker.
pub fn is_heavy(i: &Inputs) -> bool {
    i.sigma < HEAVY_SIGMA
}

/// The small-σ model's RDP part from a worker answer (`heavyModel`'s fields).
pub fn parse_heavy(data: &Value) -> Heavy {
    Heavy {
        rdp: data.nums("rdp"),
        opt: Optimum {
            value: data.num("value"),
            alpha: data.num("alpha"),
            grid_alpha: data.num("gridAlpha"),
            grid_value: data.num("gridValue"),
            at_edge: matches!(data.get("atEdge"), Value::Bool(true)),
        },
        tcdp_rho: Some(data.num("tcdpRho")).filter(|r| !r.is_nan()),
    }
}

/// The page's state.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// Every choice the page shows (what its link carries).
    pub link: Link,
    tight: Tight,
    inverse: Inverse,
    rdp: Rdp,
    /// The newest "Check my training code" request.
    check_gen: u32,
    /// "Audit against the certificate".
    audit: audit::AuditState,
    /// Correlated noise for the run shown.
    correlated: correlated::CorrelatedState,
}

impl Page {
    pub fn new(link: Link) -> Page {
        Page {
            link,
            ..Page::default()
        }
    }

    pub fn inputs(&self) -> Inputs {
        self.link.inputs
    }

    /// The dataset terms when they describe rate q.
    pub fn dataset_for(&self, q: f64) -> Option<Dataset> {
        page::matching_dataset(Some(self.link.dataset), q)
    }

    /// The dataset size N of the dataset terms when they describe q.
    fn dataset_size(&self, i: &Inputs) -> Option<u64> {
        self.dataset_for(i.q)
            .filter(|d| d.n.fract() == 0.0 && d.n <= 1e12)
            .map(|d| d.n as u64)
    }

    /// The run the page's controls describe for inputs `i`.
    pub fn scheme(&self, i: &Inputs) -> Scheme {
        Scheme {
            dataset_size: self.dataset_size(i),
            max_batch: self.link.max_batch,
            ..Scheme::of(self.link.batch, self.link.group.max(1), self.link.adjacency)
        }
    }

    /// Epochs for the bound without amplification: the dataset terms' E when they describe
    /// this run (T = ⌈E·N/B⌉), else ⌈T·q⌉ (each example is in at most that many batches).
    fn epochs_for(&self, i: &Inputs) -> f64 {
        match self.dataset_for(i.q) {
            Some(d) if d.e > 0.0 && (d.e * (d.n / d.b)).ceil() == i.steps as f64 => d.e.ceil(),
            _ => page::epochs_of(i).1,
        }
    }

    /// " ≈ E epochs" for `steps` of the inputs shown, when the dataset terms describe them.
    fn in_epochs(&self, i: &Inputs, steps: u64) -> String {
        page::in_epochs(Some(self.link.dataset), i, steps)
    }

    /// Steps per epoch (N/B) when the dataset terms describe rate q.
    pub fn steps_per_epoch(&self, q: f64) -> Option<f64> {
        self.dataset_for(q).map(|d| d.n / d.b)
    }

    /// The dataset terms [N, B, E] Opacus' loader takes for the run: when they describe it
    /// (q and T) and are whole numbers.
    pub fn loader_terms(&self, i: &Inputs) -> Option<[f64; 3]> {
        self.dataset_for(i.q)
            .filter(|d| (d.e * (d.n / d.b)).ceil() == i.steps as f64)
            .filter(|d| library::opacus_run(d.n, d.b, d.e).is_some())
            .map(|d| [d.n, d.b, d.e])
    }

    /// The tight ε bracket (upper, lower) for `i`, when the worker has answered for it.
    pub fn tight_for(&self, i: &Inputs) -> Option<(f64, f64)> {
        self.tight
            .last
            .filter(|(a, _, _)| a == i)
            .map(|(_, u, l)| (u, l))
    }

    /// The sentence for the inputs shown under the headline, when it is not exact RDP's: a
    /// batching or a run other than the plain one says its own (or that it is computed);
    /// else the tight ε's once known for the inputs (unless exact RDP was chosen).
    pub fn tight_sentence(&self, i: &Inputs) -> Option<String> {
        self.scheme_sentence(i).or(match self.link.acct {
            Acct::Pld | Acct::Both => self.tight_for(i).map(|(e, _)| {
                crate::render::sentence_for(i, e, "tight (privacy-loss distribution)")
            }),
            Acct::Rdp => None,
        })
    }

    // ---- the controls ----

    /// A new value of a run's input (q, σ, T, δ, the conversion, ω).
    pub fn set_inputs(&mut self, i: Inputs) {
        self.link.inputs = i;
    }

    /// The dataset terms as typed (NaN where a box holds no number).
    pub fn set_dataset(&mut self, d: Dataset) {
        self.link.dataset = d;
    }

    /// Dataset terms typed: q = B/N and T = ⌈E·N/B⌉ set as the inputs (with the words under
    /// the box), or the reason, and q and T from `before` the edit (a valid prefix such as
    /// "7000" of "70000" never stays). The (q, T) the inputs now hold, if any.
    pub fn apply_dataset(
        &mut self,
        d: Dataset,
        before: Option<(f64, u64)>,
    ) -> (Vec<Effect>, Option<(f64, u64)>) {
        self.set_dataset(d);
        let (fx, qt) = match crate::engine::params::from_dataset(d.n, d.b, d.e) {
            Ok((q, t)) => (
                vec![
                    text("ds-error", ""),
                    text(
                        "ds-derived",
                        format!("q = {}, T = ⌈E·N/B⌉ = {t}", fmt_num(q)),
                    ),
                ],
                Some((q, t)),
            ),
            Err(e) => (vec![text("ds-error", e.to_string())], before),
        };
        if let Some((q, t)) = qt {
            let mut i = self.inputs();
            (i.q, i.steps) = (q, t);
            self.set_inputs(i);
        }
        (fx, qt)
    }

    /// The accountant chosen (URL `acct`).
    pub fn set_acct(&mut self, a: Acct) -> Vec<Effect> {
        self.link.acct = a;
        vec![
            text("accountant-error", ""),
            Effect::Op(Op::Value("accountant", a.name().into())),
        ]
    }

    /// Truncated Poisson's largest batch (URL `max_batch`; None: the default).
    pub fn set_max_batch(&mut self, m: Option<u64>) -> Vec<Effect> {
        self.link.max_batch = m;
        self.tight.asked = None;
        let mut fx = vec![
            Effect::Op(Op::Value(
                "max-batch",
                m.map(|m| m.to_string()).unwrap_or_default(),
            )),
            text("max-batch-error", ""),
        ];
        fx.extend(self.inputs_changed());
        fx
    }

    /// Who is a neighbour: replace-one is the worker's `--adjacency replace-one` (tight;
    /// exact RDP here is add/remove's).
    pub fn set_adjacency(&mut self, a: Adjacency) -> Vec<Effect> {
        self.link.adjacency = a;
        self.tight.asked = None;
        let mut fx = vec![
            Effect::Op(Op::Value("adjacency", a.name().into())),
            text("adjacency-error", ""),
        ];
        fx.extend(self.who_and_note());
        fx.extend(self.inputs_changed());
        fx
    }

    /// Examples per user: above 1 the tight ε, its charts, target and μ-GDP are user-level.
    pub fn set_group(&mut self, k: u32) -> Vec<Effect> {
        self.link.group = k.max(1);
        self.tight.asked = None;
        let mut fx = vec![
            Effect::Op(Op::Value("group-size", self.link.group.to_string())),
            text("group-size-error", ""),
        ];
        fx.extend(self.who_and_note());
        fx.extend(self.inputs_changed());
        fx
    }

    /// How batches are drawn: the box of the scheme chosen is shown (shuffled: its
    /// certified band; random allocation: its bracket; truncated Poisson: its largest batch).
    pub fn set_batching(&mut self, b: Batching) -> Vec<Effect> {
        self.link.batch = b;
        self.tight.asked = None;
        let mut fx = self.who_and_note();
        fx.extend(self.inputs_changed());
        for (id, shown) in [
            ("shuffled-box", Batching::Shuffled),
            ("allocation-box", Batching::RandomAllocation),
            ("max-batch-row", Batching::TruncatedPoisson),
        ] {
            fx.push(Effect::Op(Op::Hidden(id, b != shown)));
        }
        fx.push(text(
            "batching-assumed",
            if b == Batching::Poisson {
                "Poisson sampling with rate q"
            } else {
                "Poisson sampling with rate q — not how these batches are drawn (see below)"
            },
        ));
        fx.push(text("batching-error", ""));
        fx.push(Effect::Op(Op::Value("batching", b.name().into())));
        fx
    }

    /// The line under the headline (who is protected, and how) and the note above the
    /// tight charts (which run they are for).
    pub(super) fn who_and_note(&self) -> Vec<Effect> {
        let (b, k, a) = (self.link.batch, self.link.group.max(1), self.link.adjacency);
        let variant = k > 1 || a == Adjacency::ReplaceOne;
        let note = self.correlated_note();
        vec![
            text("adjacency-assumed", page::adjacency_words(k, a)),
            Effect::Op(Op::Hidden(
                "charts-batching",
                b == Batching::Poisson && !variant && note.is_none(),
            )),
            text("charts-batching", note.as_deref().unwrap_or(match b {
                Batching::RandomAllocation => "The charts below follow random allocation (no exact-RDP curve: Poisson sampling's does not bound it); the library table says which libraries account for it.",
                Batching::Shuffled => "The charts below follow the shuffled band: its upper end (no amplification) and lower end (Chua et al.'s pair); the library table says which libraries account for shuffling.",
                Batching::TruncatedPoisson => "The charts below follow truncated Poisson sampling (no exact-RDP curve: Poisson sampling's does not bound it); the library table says which libraries account for it.",
                Batching::FixedSize => "ε over training below follows fixed-size batches (RDP, replace-one); they have no privacy profile or attack-risk chart (no privacy-loss distribution is certified for them); the library table says which libraries account for them.",
                Batching::Poisson if variant => "The charts below are for the examples per user and neighbours chosen (no exact-RDP curve: it is one example’s under add/remove); the library table says what each library offers for them.",
                _ => "The charts and the library table below are for Poisson sampling with rate q, not for the batching chosen above (its ε is the headline).",
            })),
        ]
    }

    // ---- exact RDP in the worker ----

    /// The small-σ model for `i`, when the worker has answered for exactly these inputs.
    pub fn heavy_model(&self, i: &Inputs) -> Option<Model> {
        let (a, h) = self.rdp.model.as_ref()?;
        (a == i).then(|| Model::from_heavy(*i, h.clone()).ok())?
    }

    /// Ask the worker for the comparison and chart C for `i`, and for the model too when
    /// `model` or σ is small: once per distinct request; the newest request wins.
    pub fn ask_rdp(&mut self, i: Inputs, model: bool) -> Vec<Effect> {
        let model = model || is_heavy(&i);
        let r = &mut self.rdp;
        if matches!(r.asked, Some((a, m)) if a == i && (m || !model)) {
            return Vec::new();
        }
        r.asked = Some((i, model));
        r.gen += 1;
        let mut fx = vec![Effect::Post(
            protocol::rdp(&i, r.gen, model),
            Some(Posting {
                computing: None,
                failed: "sentence",
                message: "small σ needs the page's worker, which is not available",
            }),
        )];
        if model && !r.computing_pending {
            r.computing_pending = true;
            fx.push(Effect::Start(Timer::Computing, COMPUTING_MS));
        }
        fx
    }

    /// The computing timer fired: say so while the model asked is not here.
    pub fn computing_due(&mut self) -> Vec<Effect> {
        let r = &mut self.rdp;
        r.computing_pending = false;
        let pending = matches!(r.asked, Some((a, true))
            if r.model.as_ref().map(|(b, _)| *b) != Some(a));
        if pending {
            vec![text("computing", "computing exact RDP for small σ…")]
        } else {
            Vec::new()
        }
    }

    /// The worker's "rdp" answer for the newest request: the comparison rows (route, ε or
    /// null where the route does not apply, note), and the small-σ model (then a frame).
    fn rdp_answer(&mut self, data: &Value) -> Vec<Effect> {
        let r = &mut self.rdp;
        let Some((i, model)) = r.asked.filter(|_| data.num("gen") == r.gen as f64) else {
            return Vec::new();
        };
        if let Some(m) = data.text("error") {
            return vec![
                text("computing", ""),
                text("sentence", format!("cannot compute: {m}")),
            ];
        }
        let mut fx = Vec::new();
        if let Value::List(rows) = data.get("compare") {
            let rows = rows
                .iter()
                .map(|row| {
                    let cell = |k: usize| match row {
                        Value::List(c) => c.get(k).cloned().unwrap_or(Value::Null),
                        _ => Value::Null,
                    };
                    let words = |k| match cell(k) {
                        Value::Text(t) => t,
                        _ => String::new(),
                    };
                    let eps = match cell(1) {
                        Value::Num(e) => fmt_eps(e),
                        _ => "n/a".into(),
                    };
                    [words(0), eps, words(2)]
                })
                .collect();
            fx.push(Effect::Op(Op::Rows("#compare-table tbody", rows)));
        }
        if model {
            r.model = Some((i, parse_heavy(data)));
            fx.push(text("computing", ""));
            fx.push(Effect::Frame);
        }
        fx
    }

    /// Chart C's data for a small σ from the worker (`{sigma, chartC: [q, cond4, cond5, min,
    /// exact] × n}`): kept and drawn if σ is still the page's.
    fn chart_c_answer(&mut self, data: &Value) -> Vec<Effect> {
        let sigma = data.num("sigma");
        let rows: Vec<(f64, MaxOrder)> = data
            .nums("chartC")
            .chunks_exact(5)
            .map(|r| {
                let m = MaxOrder {
                    cond4: r[1],
                    cond5: r[2],
                    min: r[3],
                    exact: r[4],
                };
                (r[0], m)
            })
            .collect();
        if rows.is_empty() || self.inputs().sigma != sigma {
            return Vec::new();
        }
        self.rdp.chart_c = Some((sigma, rows));
        vec![Effect::ChartC]
    }

    /// Chart C's data: σ and, per q, the largest orders of Theorem 11's conditions.
    pub fn chart_c(&self) -> Option<(f64, &[(f64, MaxOrder)])> {
        self.rdp.chart_c.as_ref().map(|(s, d)| (*s, d.as_slice()))
    }

    // ---- the tight accountant ----

    /// The inputs shown (with exact RDP's ε for them, NaN when not known): the gap is
    /// said, and once they are new the request is posted when they rest.
    pub fn request(&mut self, inputs: Inputs, rdp_eps: f64) -> Vec<Effect> {
        let t = &mut self.tight;
        t.rdp_eps = rdp_eps;
        if t.asked == Some(inputs) {
            return vec![self.gap()];
        }
        t.asked = Some(inputs);
        t.post_pending = true;
        // The charts' values read out are the old inputs': gone at once.
        let mut fx = vec![
            self.gap(),
            Effect::ClearReadouts,
            Effect::Start(Timer::Post, REST_MS),
        ];
        if !self.tight.updating_pending {
            self.tight.updating_pending = true;
            fx.push(Effect::Start(Timer::Updating, UPDATING_MS));
        }
        fx
    }

    /// The target ε changed (its box, valid): the ε-over-training sentence follows, and the
    /// inputs shown are asked again (the worker's caches answer at once; the target's solve
    /// is new).
    pub fn set_target(&mut self, target: Option<f64>) -> Vec<Effect> {
        if self.link.target == target {
            return Vec::new();
        }
        self.link.target = target;
        match self.tight.asked {
            Some(_) if target.is_some() => self.post(),
            // (Correlated noise's σ for the target goes with it.)
            _ => self.post_correlated(),
        }
    }

    /// The rest timer fired (or the target changed): post the request for the inputs shown.
    pub fn post(&mut self) -> Vec<Effect> {
        let Some(i) = self.tight.asked else {
            return Vec::new();
        };
        let sc = self.scheme(&i);
        let batch = sc.sampling;
        let epochs = (batch != Batching::Poisson).then(|| self.epochs_for(&i));
        let scheme = (!sc.is_plain()).then(|| {
            let e = page::epochs_of(&i).1;
            (sc, sc.steps_per_epoch(&i), epochs.unwrap_or(e))
        });
        // μ and the attack bound belong to the inputs they were computed for: gone until
        // the new ones arrive.
        let mut fx = vec![
            Effect::Stale(true),
            text("gdp-summary", ""),
            text("sentence-risk", ""),
        ];
        if let Some((_, t, e)) = scheme.filter(|_| batch != Batching::Poisson) {
            fx.push(text("batching-assumed", sc.words_for(&i, t, e)));
        }
        let ask = protocol::Tight {
            charts: true,
            // μ-GDP with its fit, after the charts.
            gdp: true,
            // The target ε: when it is reached (the same solve as "Most steps").
            target: self.link.target,
            // The library rows (Poisson sampling of one example): Opacus' loader terms.
            library: sc.is_plain().then_some(self.loader_terms(&i)),
        };
        let t = &mut self.tight;
        t.post_pending = false;
        t.gen += 1;
        t.posted = Some(i);
        t.posted_scheme = scheme;
        t.most = None;
        fx.push(Effect::Post(
            protocol::tight(&i, Some(t.gen), &sc, epochs.unwrap_or(f64::NAN), ask),
            None,
        ));
        // An audit on screen is asked again for the run now shown; so is correlated noise.
        fx.extend(self.post_audit());
        fx.extend(self.post_correlated());
        fx
    }

    /// The updating timer fired: the old numbers are marked while the answer is awaited.
    pub fn updating_due(&mut self) -> Vec<Effect> {
        let t = &mut self.tight;
        t.updating_pending = false;
        if t.answered != t.gen || t.post_pending {
            vec![Effect::Op(Op::Class("tight", "updating", true))]
        } else {
            Vec::new()
        }
    }

    /// The gap between exact RDP and the tight ε, when the tight ε is for the inputs shown.
    fn gap(&self) -> Effect {
        let t = &self.tight;
        if self.link.batch != Batching::Poisson {
            return text(
                "epsilon-gap",
                "(Poisson sampling's: not a bound for the batching chosen)",
            );
        }
        if self.link.group > 1 || self.link.adjacency != Adjacency::AddRemove {
            return text(
                "epsilon-gap",
                "(one example's under add/remove: not a bound for the examples per user or neighbours chosen)",
            );
        }
        let pld = t
            .last
            .filter(|(i, _, _)| Some(*i) == t.asked)
            .map(|(_, u, _)| u);
        text(
            "epsilon-gap",
            match pld {
                Some(p) if p > 0.0 && t.rdp_eps.is_finite() => {
                    format!(
                        "(+{:.1} % above the tight ε)",
                        100.0 * (t.rdp_eps / p - 1.0)
                    )
                }
                _ => String::new(),
            },
        )
    }

    /// An answer of the worker for the tight accountant (every kind but the small-σ
    /// model's): used only when it is for the inputs shown (a calibration: when it is the
    /// newest of its kind, asked for the inputs shown).
    pub fn answer(&mut self, data: &Value) -> Vec<Effect> {
        let Some(kind) = data.text("kind").and_then(Kind::parse) else {
            return Vec::new();
        };
        let gen = data.num("gen");
        let t = &self.tight;
        let fresh = t.posted.is_some() && t.posted == t.asked;
        if (gen != t.gen as f64 || !fresh) && !kind.has_own_slot() {
            return Vec::new(); // for inputs no longer shown: a newer request is on its way
        }
        let mut fx = Vec::new();
        match kind {
            Kind::Headline => {
                let (up, lo) = (data.num("epsilon"), data.num("epsilonLower"));
                fx.extend(headline_value(
                    &fmt_eps(up),
                    Some(up),
                    format!(
                        "certified bracket [{}, {}]",
                        fmt_eps6_lower(lo),
                        fmt_eps6(up)
                    ),
                ));
                fx.push(text(
                    "epsilon-pld-bracket",
                    format!(
                        "certified bracket [{}, {}]",
                        fmt_eps6_lower(lo),
                        fmt_eps6(up)
                    ),
                ));
                fx.push(text("epsilon-pld-note", ""));
                fx.extend(shuffled(data));
                fx.extend(allocation(data));
                let t = &mut self.tight;
                t.answered = t.gen;
                t.last = t.posted.map(|i| (i, up, lo));
                fx.push(self.gap());
                if let Some(i) = self.tight.posted {
                    fx.extend(self.library(&i, Some((up, lo))));
                    if self.link.acct == Acct::Pld {
                        if let Some(s) = self.tight_sentence(&i) {
                            fx.push(text("sentence", s));
                        }
                    }
                }
                fx.extend(self.show_scheme(data));
                fx.push(Effect::Op(Op::Class("tight", "updating", false)));
            }
            Kind::Charts => {
                let c = TightCharts::parse(data);
                let t = &mut self.tight;
                t.charts = t.posted.map(|i| (i, c));
                // A chart that failed stands alone: cleared, with its reason (in the redraw).
                // (Kept, not drawn, while correlated noise's charts are.)
                if !self.correlated_on() {
                    fx.extend([Effect::Stale(false), Effect::Redraw]);
                }
            }
            Kind::Library => fx.extend(library_answer(data)),
            Kind::Gdp => fx.push(text("gdp-summary", gdp_text(data))),
            Kind::Target => {
                let e = data.num("target");
                let most = match data.text("error") {
                    Some(m) => Err(reason_in_words(m)),
                    None => Ok(data.num("steps") as u64),
                };
                self.tight.most = Some((e, most));
                fx.push(Effect::Redraw);
            }
            Kind::Calibrated => fx.extend(self.calibrated(data)),
            Kind::Checked | Kind::CheckError => fx.extend(self.checked(data)),
            Kind::Audited | Kind::AuditError => fx.extend(self.audited(data)),
            Kind::Correlated | Kind::CorrelatedError => fx.extend(self.correlated_answer(data)),
            Kind::CalibrateError => {
                if self.is_current_calibration(data) {
                    let which = data.text("which").unwrap_or_default();
                    fx.push(text(answer_id(which), ""));
                    fx.push(text(
                        error_id(which),
                        reason_in_words(data.text("message").unwrap_or_default()),
                    ));
                }
            }
            Kind::Error => {
                let t = &mut self.tight;
                t.answered = t.gen;
                fx.extend(self.unavailable(data.text("message").unwrap_or_default()));
                // The shuffled band and the allocation's bracket stand on their own
                // (hardening round 3, #12), and lead the headline when chosen.
                fx.extend(shuffled(data));
                fx.extend(allocation(data));
                fx.extend(self.show_scheme(data));
            }
            Kind::ChartsError => {
                let why = reason_in_words(data.text("message").unwrap_or_default());
                fx.extend(self.clear_independent(&why));
                fx.push(Effect::Op(Op::Class("tight", "updating", false)));
            }
            Kind::Rdp | Kind::ChartC => {}
        }
        fx
    }

    /// Any answer of the page's worker: exact RDP's (the small-σ model, the comparison,
    /// chart C) or the tight accountant's ([`Page::answer`]).
    pub fn worker_answer(&mut self, data: &Value) -> Vec<Effect> {
        match data.text("kind").and_then(Kind::parse) {
            Some(Kind::Rdp) => self.rdp_answer(data),
            Some(Kind::ChartC) => self.chart_c_answer(data),
            _ => self.answer(data),
        }
    }

    /// With a batching or a run other than the plain one, the headline is that run's
    /// certified ε (shuffled: the band's upper end; random allocation: its bracket's), with
    /// what its ends mean, and the sentence is said for it; a refusal shows "—" with its
    /// reason.
    fn show_scheme(&mut self, data: &Value) -> Vec<Effect> {
        let (Some(i), Some((sc, t, e))) = (self.tight.posted, self.tight.posted_scheme) else {
            return Vec::new();
        };
        // Above one example per user, or replace-one with Poisson sampling, the answer is
        // the worker's `user` (with another batching and K > 1 it says why there is none).
        let a = sc.answer_key().map_or(&Value::Null, |k| data.get(k));
        // Fixed-size batches: an RDP upper bound only (epsilonLower null → NaN here).
        let (up, lo) = (a.num("epsilon"), a.num("epsilonLower"));
        let words = sc.words_for(&i, t, e);
        let b = sc.sampling;
        let name = if b == Batching::Poisson {
            sc.name()
        } else {
            page::scheme_name(b).to_string()
        };
        // Why there is no answer (used when there is none).
        let why = a
            .text("error")
            .map(reason_in_words)
            .unwrap_or_else(|| "no answer for this batching".into());
        let upper_only = b == Batching::FixedSize;
        let ok = a.is_obj() && up.is_finite() && (lo.is_finite() || upper_only);
        let mut fx = if ok {
            let ends = if lo.is_finite() {
                format!("[{}, {}]", fmt_eps6_lower(lo), fmt_eps6(up))
            } else {
                format!("≤ {}", fmt_eps6(up))
            };
            let what = match b {
                Batching::Shuffled => "certified band",
                Batching::FixedSize => "certified upper bound from RDP, no lower bound:",
                _ => "certified bracket",
            };
            let mut fx = headline_value(&fmt_eps(up), Some(up), format!("{ends}: {words}"));
            fx.push(text(
                "epsilon-pld-bracket",
                format!("{what} {ends} for {name}"),
            ));
            fx.push(text("epsilon-pld-note", wide_note(b, up, lo)));
            fx
        } else {
            let mut fx = headline_value("—", None, format!("unavailable: {why}"));
            fx.push(text(
                "epsilon-pld-bracket",
                format!("no certified bound for {name}"),
            ));
            fx.push(text(
                "epsilon-pld-note",
                format!("ε unavailable for {name} with these inputs: {why}."),
            ));
            fx
        };
        // "What your library reports" for this run: which libraries account for it, and ours.
        let rows = page::library_rows(&sc, ok.then_some((up, lo.is_finite().then_some(lo))), &why);
        fx.push(Effect::Op(Op::Rows(LIBRARY_TABLE, rows)));
        self.tight.scheme_last = ok.then_some((i, (sc, t, e), up, lo));
        fx.push(self.gap());
        if let Some(s) = self.scheme_sentence(&i) {
            fx.push(text("sentence", s));
        }
        fx
    }

    /// The CSV's first line when the headline is for another run than Poisson sampling of
    /// one example under add/remove: that run's certified ends and what they mean, or that
    /// it is unavailable; None for the plain run.
    pub fn scheme_line(&self, i: &Inputs) -> Option<String> {
        let sc = self.scheme(i);
        if sc.is_plain() {
            return None;
        }
        let tail = "the epsilons below are exact RDP of one example, Poisson sampling, add/remove";
        Some(match self.tight.scheme_last {
            Some((a, (run, st, e), up, lo)) if a == *i && run == sc => format!(
                "# headline_epsilon = {up} (certified upper bound; [{}, {up}]: {}); {tail}",
                if lo.is_finite() {
                    lo.to_string()
                } else {
                    "no lower bound".into()
                },
                sc.words_for(i, st, e)
            ),
            _ => format!(
                "# headline_epsilon = unavailable for these inputs ({}); {tail}",
                sc.words(i)
            ),
        })
    }

    /// The sentence for a run other than the plain one: said for its certified ε once the
    /// worker has answered for `i`, else that it is being computed.
    fn scheme_sentence(&self, i: &Inputs) -> Option<String> {
        let sc = self.scheme(i);
        if sc.is_plain() {
            return None;
        }
        Some(match self.tight.scheme_last {
            Some((a, (run, st, e), up, _)) if a == *i && run == sc => sc.sentence_for(i, st, e, up),
            _ => format!(
                "The ε for {} is computed by the tight accountant (see above).",
                if sc.sampling == Batching::Poisson {
                    page::adjacency_words(sc.group, sc.adjacency)
                } else {
                    page::scheme_name(sc.sampling).to_string()
                }
            ),
        })
    }

    /// The tight accountant cannot answer for the inputs shown: nothing of an earlier run
    /// stays — the headline reads "—" with the reason, the gap and the library's tight rows
    /// go, the sentence is exact RDP's, and the three charts are cleared with the reason
    /// (hardening round 3, #1).
    fn unavailable(&mut self, m: &str) -> Vec<Effect> {
        let why = reason_in_words(m);
        let mut fx = headline_value("—", None, format!("unavailable: {why}"));
        fx.push(text(
            "epsilon-pld-bracket",
            "no certified bracket for these inputs",
        ));
        fx.push(text(
            "epsilon-pld-note",
            format!("tight ε unavailable for these inputs: {why}. The exact-RDP ε applies."),
        ));
        self.tight.last = None;
        fx.push(self.gap());
        // The library rows come with a tight answer (computing them here would put the
        // exact-RDP grids of a small-σ run on the main thread): emptied, with the reason.
        fx.push(Effect::Op(Op::Rows(
            LIBRARY_TABLE,
            vec![["—".into(), "unavailable".into(), why.clone()]],
        )));
        let (asked, rdp) = (self.tight.asked, self.tight.rdp_eps);
        if let Some(i) = asked {
            if self.link.acct == Acct::Pld && rdp.is_finite() {
                fx.push(text(
                    "sentence",
                    crate::render::sentence_for(&i, rdp, "exact RDP"),
                ));
            }
        }
        fx.extend(self.clear_independent(&why));
        fx.push(Effect::Op(Op::Class("tight", "updating", false)));
        fx
    }

    /// Clear the three tight charts and say why they are empty.
    pub(super) fn clear_charts(&mut self, why: &str) -> Vec<Effect> {
        self.tight.charts = None;
        let mut fx = vec![text("gdp-summary", ""), text("sentence-risk", "")];
        for n in 0..CHART_IDS.len() {
            fx.extend(clear_chart(n, why));
        }
        fx.push(Effect::Stale(false));
        fx
    }
}

/// The chart chosen in the export menu: one of its values, else chart A.
pub fn export_choice(v: &str) -> &'static str {
    ["a", "b", "c", "d", "training", "profile", "risk"]
        .into_iter()
        .find(|c| *c == v)
        .unwrap_or("a")
}

/// What an export of chart `which` as `format` ("png" or "svg") says when `done` or not:
/// PNG and SVG are the same picture whatever the screen, light theme, `EXPORT_SIZE`
/// (the PNG at `EXPORT_PNG_SCALE`×).
pub fn export_status(which: &str, format: &str, done: bool) -> String {
    use crate::ui::layout::{EXPORT_PNG_SCALE, EXPORT_SIZE};
    let (w, h) = EXPORT_SIZE;
    match (done, format) {
        (false, _) => format!("chart {which} has nothing to export yet"),
        (true, "png") => format!(
            "chart {which}: PNG, {} × {} px (light theme)",
            EXPORT_PNG_SCALE * w,
            EXPORT_PNG_SCALE * h
        ),
        _ => format!("chart {which}: SVG, {w} × {h} (light theme)"),
    }
}

/// The table "What your library reports" fills.
pub const LIBRARY_TABLE: &str = "#library-table tbody";

/// The headline's tight ε: its text, value (None: unavailable) and title.
fn headline_value(shown: &str, value: Option<f64>, title: String) -> Vec<Effect> {
    let id = "epsilon-pld";
    vec![
        text(id, shown),
        Effect::Op(match value {
            Some(v) => Op::Attr(id, "data-value", format!("{v}")),
            None => Op::NoAttr(id, "data-value"),
        }),
        Effect::Op(Op::Attr(id, "title", title)),
    ]
}

/// Clear tight chart `n` (training, profile, risk) and say why it is empty.
fn clear_chart(n: usize, why: &str) -> Vec<Effect> {
    let mut fx = vec![Effect::ClearChart(n)];
    for id in CHART_TEXTS[n] {
        fx.push(text(id, format!("unavailable for these inputs: {why}.")));
    }
    fx
}

/// The certified band for shuffled batches from an answer, when it carries one: upper end
/// no amplification, lower end Chua et al.'s pair (the command line's `--sampling shuffle`);
/// said plainly when the Poisson ε of the same answer lies below the lower end.
fn shuffled(data: &Value) -> Vec<Effect> {
    let sh = data.get("shuffled");
    if !sh.is_obj() {
        return Vec::new();
    }
    let (su, sl) = (sh.num("epsilon"), sh.num("epsilonLower"));
    let err = sh.text("error");
    let (shown, low) = match err {
        Some(m) => (format!("— ({m})"), "—".into()),
        None => (fmt_eps(su), fmt_eps_lower(sl)),
    };
    // The Poisson ε of this answer (absent when it failed).
    let p = data.num("epsilon");
    let id = "epsilon-shuffled";
    vec![
        text(id, shown),
        Effect::Op(Op::Attr(id, "data-value", format!("{su}"))),
        Effect::Op(Op::Attr(
            id,
            "title",
            format!("certified band [{}, {}]", fmt_eps6_lower(sl), fmt_eps6(su)),
        )),
        text("epsilon-shuffled-lower", low),
        text("shuffled-epochs", fmt_num(sh.num("epochs"))),
        text(
            "shuffled-vs-poisson",
            if err.is_none() && p < sl {
                format!("The Poisson-sampled ε for the same q and steps, {}, is below this lower end, so it cannot be claimed for shuffled training.", fmt_eps(p))
            } else {
                String::new()
            },
        ),
    ]
}

/// The certified bracket for random allocation from an answer, when it carries one (the
/// command line's `--sampling random-allocation`); a refusal is shown with its reason.
fn allocation(data: &Value) -> Vec<Effect> {
    let al = data.get("allocation");
    if !al.is_obj() {
        return Vec::new();
    }
    let (up, lo) = (al.num("epsilon"), al.num("epsilonLower"));
    let (shown, low) = match al.text("error") {
        Some(m) => (format!("— ({})", reason_in_words(m)), "—".into()),
        None => (fmt_eps(up), fmt_eps_lower(lo)),
    };
    vec![
        text("epsilon-allocation", shown),
        Effect::Op(Op::Attr(
            "epsilon-allocation",
            "data-value",
            format!("{up}"),
        )),
        text("epsilon-allocation-lower", low),
        text("allocation-epochs", fmt_num(al.num("epochs"))),
        text("allocation-t", fmt_num(al.num("stepsPerEpoch"))),
    ]
}

/// The worker's "library" answer: the rows as the command line's `libraries` computes them
/// (each library's own output for the run), for the inputs posted.
fn library_answer(data: &Value) -> Vec<Effect> {
    let rows: Vec<[String; 3]> = data
        .items("rows")
        .iter()
        .map(|r| {
            let e = r.num("epsilon");
            [
                r.text("tool").unwrap_or_default().to_string(),
                if e.is_finite() {
                    format!("{e:.4}")
                } else {
                    "—".into()
                },
                r.text("note").unwrap_or_default().to_string(),
            ]
        })
        .collect();
    if rows.is_empty() {
        Vec::new()
    } else {
        vec![Effect::Op(Op::Rows(LIBRARY_TABLE, rows))]
    }
}

#[cfg(test)]
mod tests;
