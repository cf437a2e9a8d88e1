//! The worker protocol, written once (#20): every request the page and the widgets post to
//! the worker (www/pld-worker.js) is built here as a list of fields — with the protocol's
//! version — and every answer's kind is named by [`Kind`]. No DOM: tested natively, against
//! the worker's own source too; web only turns the fields into a JS object and posts it.

use crate::engine::Adjacency;
use crate::render::Inputs;
use crate::ui::link::Batching;
use crate::ui::page::Scheme;

/// The protocol's version: every request carries it as `v` (the worker refuses another) and
/// every answer too.
pub const VERSION: u32 = 1;

/// A field's value — of a request, or anywhere in an answer (web turns the worker's JS
/// object into this tree once, and everything read from it is read here, natively tested).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Num(f64),
    Text(String),
    Bool(bool),
    List(Vec<Value>),
    Obj(Vec<(String, Value)>),
}

const NULL: Value = Value::Null;

impl Value {
    /// Field `k` of an object (Null when absent or not an object).
    pub fn get(&self, k: &str) -> &Value {
        match self {
            Value::Obj(f) => f.iter().find(|(n, _)| n == k).map_or(&NULL, |(_, v)| v),
            _ => &NULL,
        }
    }
    /// This value as a number (NaN when it is not one: charts skip it, texts say "—").
    pub fn as_num(&self) -> f64 {
        match self {
            Value::Num(x) => *x,
            _ => f64::NAN,
        }
    }
    /// Field `k` as a number ([`Value::as_num`]).
    pub fn num(&self, k: &str) -> f64 {
        self.get(k).as_num()
    }
    /// Field `k` as text, when it is text.
    pub fn text(&self, k: &str) -> Option<&str> {
        match self.get(k) {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }
    /// Field `k` as a list (empty when it is not one).
    pub fn items(&self, k: &str) -> &[Value] {
        match self.get(k) {
            Value::List(l) => l,
            _ => &[],
        }
    }
    /// Field `k` as a list of numbers.
    pub fn nums(&self, k: &str) -> Vec<f64> {
        self.items(k).iter().map(Value::as_num).collect()
    }
    /// Field `k` as a list of texts (its other items left out).
    pub fn texts(&self, k: &str) -> Vec<&str> {
        (self.items(k).iter())
            .filter_map(|v| match v {
                Value::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }
    pub fn is_obj(&self) -> bool {
        matches!(self, Value::Obj(_))
    }
}

/// A request: its fields, in order.
pub type Fields = Vec<(&'static str, Value)>;

fn num(x: impl Into<f64>) -> Value {
    Value::Num(x.into())
}

fn text(s: impl Into<String>) -> Value {
    Value::Text(s.into())
}

/// The run every request carries, with the version and (when given) its generation.
pub fn run(i: &Inputs, gen: Option<u32>) -> Fields {
    let mut f = vec![("v", num(VERSION))];
    if let Some(g) = gen {
        f.push(("gen", num(g)));
    }
    f.extend([
        ("q", num(i.q)),
        ("sigma", num(i.sigma)),
        ("steps", num(i.steps as f64)),
        ("delta", num(i.delta)),
        ("omega", num(i.omega)),
        ("conversion", text(i.conversion.name())),
    ]);
    f
}

/// How the run's batches are drawn and who is a neighbour, as the worker reads it: the
/// sampling with its epochs (another than Poisson sampling: the worker's batch line for
/// `epochs` E), examples per user, the adjacency, and truncated Poisson's or fixed-size
/// batches' sizes — or why they cannot be asked (`schemeError`).
pub fn scheme(sc: &Scheme, i: &Inputs, epochs: f64) -> Fields {
    let mut f = Vec::new();
    if sc.sampling != Batching::Poisson {
        f.push(("epochs", num(epochs)));
        f.push(("sampling", text(sc.sampling.name())));
    }
    if sc.group > 1 {
        f.push(("groupSize", num(sc.group)));
    }
    if sc.adjacency != Adjacency::AddRemove {
        f.push(("adjacency", text(sc.adjacency.name())));
    }
    // Shuffled batches and random allocation from the dataset terms that describe q: the
    // worker derives the steps per epoch from N and B as the command line does (⌊N/B⌋ with
    // the last partial batch dropped; random allocation ⌈N/B⌉), not from ⌊1/q⌋ (issue 61 #5).
    if let Some((n, b)) = sc.epoch_sizes(i) {
        f.push(("datasetSize", num(n as f64)));
        f.push(("batchSize", num(b as f64)));
    }
    match sc.sizes(i) {
        Ok(Some(z)) => f.extend([
            ("datasetSize", num(z.dataset_size as f64)),
            ("batchSize", num(z.batch_size as f64)),
            ("maxBatch", num(z.max_batch as f64)),
        ]),
        Ok(None) => {}
        Err(m) => f.push(("schemeError", text(m))),
    }
    f
}

/// What a run's request asks beyond the headline.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tight {
    /// The three charts (false: the headline only, e.g. a widget far from the viewport).
    pub charts: bool,
    /// μ-GDP with its fit, after the charts.
    pub gdp: bool,
    /// The target ε whose most steps are wanted.
    pub target: Option<f64>,
    /// The library rows (Poisson sampling of one example), with Opacus' loader terms
    /// [N, B, E] when known.
    pub library: Option<Option<[f64; 3]>>,
}

/// A run's tight answers: the headline, then what `ask` asks.
pub fn tight(i: &Inputs, gen: Option<u32>, sc: &Scheme, epochs: f64, ask: Tight) -> Fields {
    let mut f = run(i, gen);
    f.push(("charts", Value::Bool(ask.charts)));
    f.push(("gdp", Value::Bool(ask.gdp)));
    if let Some(e) = ask.target {
        f.push(("target", num(e)));
    }
    if let Some(loader) = ask.library {
        f.push(("library", Value::Bool(true)));
        if let Some([n, b, e]) = loader {
            f.extend([
                ("loaderN", num(n)),
                ("loaderB", num(b)),
                ("loaderE", num(e)),
            ]);
        }
    }
    f.extend(scheme(sc, i, epochs));
    f
}

/// The small-σ RDP model (`model`), the comparison table and chart C, for the page.
pub fn rdp(i: &Inputs, gen: u32, model: bool) -> Fields {
    let mut f = run(i, Some(gen));
    f.extend([
        ("kind", text("rdp")),
        ("client", text("page-rdp")),
        ("model", Value::Bool(model)),
    ]);
    f
}

/// A calibration of "What do I need?": `which` (`sigma`, `steps`, `risk-sigma`,
/// `risk-steps`) with its own fields (`extra`: the accountant, the target, the FPR), for
/// the run shown: its scheme `sc` (sampling with its `epochs` and sizes, examples per user,
/// adjacency), as the tight request names it, so the answer is that run's.
pub fn calibrate(
    i: &Inputs,
    gen: u32,
    which: &str,
    extra: Fields,
    sc: &Scheme,
    epochs: f64,
) -> Fields {
    let mut f = run(i, Some(gen));
    f.push(("kind", text("calibrate")));
    f.push(("which", text(which)));
    f.extend(extra);
    f.extend(scheme(sc, i, epochs));
    f
}

/// "Check my training code": the library and the pasted snippet (read by the worker into
/// the query layer's `check` keys), answered with the check's fields (`checked`) or why not
/// (`check-error`); the newest of the page's checks wins.
pub fn check(gen: u32, library: &str, snippet: &str) -> Fields {
    vec![
        ("v", Value::Num(f64::from(VERSION))),
        ("gen", Value::Num(f64::from(gen))),
        ("kind", text("check")),
        ("library", text(library)),
        ("snippet", text(snippet)),
    ]
}

/// "Audit against the certificate": the scores as pasted or read (a CSV with `score` and
/// `member` columns, read by the worker) and the run shown, answered with the audit's fields
/// (`audited`) or why not (`audit-error`); the newest audit wins.
pub fn audit(
    i: &Inputs,
    gen: u32,
    csv: &str,
    lower_is_member: bool,
    sc: &Scheme,
    epochs: f64,
) -> Fields {
    let mut f = run(i, Some(gen));
    f.push(("kind", text("audit")));
    f.push(("csv", text(csv)));
    f.push(("lowerIsMember", Value::Bool(lower_is_member)));
    f.extend(scheme(sc, i, epochs));
    f
}

/// Correlated noise for the run shown (docs/correlated-noise.md): its strategy
/// (`band:4`, `blt:0.9:0.3`, `tree`, …) and participation (`min-sep`, `poisson`,
/// `balls-in-bins[:t]`, `cyclic-bins[:t]`), read by the worker into the query layer's
/// correlated-noise line at the run's q, σ, T and δ; answered with that line's fields
/// (`correlated-answer`) or why not (`correlated-error`); the newest wins.
///
/// With the run's dataset terms [N, B, E] (`loader`), the worker asks in them, so the
/// correlated run has the same dataset, batch size and epochs (min-sep's rate within a
/// partition is then k·B/N, as the command line's). With the page's `target` ε, the smallest
/// σ whose certified ε reaches it is asked too.
pub fn correlated(
    i: &Inputs,
    gen: u32,
    strategy: &str,
    participation: &str,
    loader: Option<[f64; 3]>,
    target: Option<f64>,
) -> Fields {
    let mut f = run(i, Some(gen));
    f.push(("kind", text("correlated")));
    if let Some(e) = target {
        f.push(("target", num(e)));
    }
    f.push(("strategy", text(strategy)));
    f.push(("participation", text(participation)));
    // Its charts too (ε over training, the profile, attack risk): the page draws them.
    f.push(("charts", Value::Bool(true)));
    if let Some([n, b, e]) = loader {
        f.extend([
            ("datasetSize", num(n)),
            ("batchSize", num(b)),
            ("epochs", num(e)),
        ]);
    }
    f
}

/// The kinds of answer the worker sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The tight ε (with a scheme's band or bracket beside it).
    Headline,
    /// No tight ε for the run (a scheme's answer may still be beside it).
    Error,
    Charts,
    ChartsError,
    /// The target's most steps.
    Target,
    Gdp,
    Library,
    /// The small-σ model and the comparison.
    Rdp,
    ChartC,
    Calibrated,
    CalibrateError,
    /// A training configuration's check, or why there is none.
    Checked,
    CheckError,
    /// An audit of canary scores beside the run's certificate, or why there is none.
    Audited,
    AuditError,
    /// Correlated noise's answer for the run shown, or why there is none.
    Correlated,
    CorrelatedError,
}

impl Kind {
    pub const ALL: [Kind; 17] = [
        Kind::Headline,
        Kind::Error,
        Kind::Charts,
        Kind::ChartsError,
        Kind::Target,
        Kind::Gdp,
        Kind::Library,
        Kind::Rdp,
        Kind::ChartC,
        Kind::Calibrated,
        Kind::CalibrateError,
        Kind::Checked,
        Kind::CheckError,
        Kind::Audited,
        Kind::AuditError,
        Kind::Correlated,
        Kind::CorrelatedError,
    ];

    /// Its name in an answer's `kind`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Headline => "headline",
            Kind::Error => "error",
            Kind::Charts => "charts",
            Kind::ChartsError => "charts-error",
            Kind::Target => "target",
            Kind::Gdp => "gdp",
            Kind::Library => "library",
            Kind::Rdp => "rdp",
            Kind::ChartC => "chart-c",
            Kind::Calibrated => "calibrated",
            Kind::CalibrateError => "calibrate-error",
            Kind::Checked => "checked",
            Kind::CheckError => "check-error",
            Kind::Audited => "audited",
            Kind::AuditError => "audit-error",
            Kind::Correlated => "correlated-answer",
            Kind::CorrelatedError => "correlated-error",
        }
    }

    /// The kind named `s`, if any.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// An answer kept for its own slot, whatever the run shown: a calibration's, a check's
    /// (which is of a configuration, not of the run shown) or an audit's (its own
    /// generation, asked again for every run shown).
    pub fn has_own_slot(self) -> bool {
        matches!(
            self,
            Kind::Calibrated
                | Kind::CalibrateError
                | Kind::Checked
                | Kind::CheckError
                | Kind::Audited
                | Kind::AuditError
                | Kind::Correlated
                | Kind::CorrelatedError
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::link::Batching;

    fn keys(f: &Fields) -> Vec<&'static str> {
        f.iter().map(|(k, _)| *k).collect()
    }

    /// The page's MNIST request: the version first, the run, what is asked, no scheme keys.
    #[test]
    fn a_plain_run_asks_for_what_the_page_shows() {
        let i = Inputs::mnist();
        let sc = Scheme::of(Batching::Poisson, 1, Adjacency::AddRemove);
        let ask = Tight {
            charts: true,
            gdp: true,
            target: Some(3.0),
            library: Some(Some([60000.0, 256.0, 60.0])),
        };
        let f = tight(&i, Some(7), &sc, 60.0, ask);
        assert_eq!(
            keys(&f),
            [
                "v",
                "gen",
                "q",
                "sigma",
                "steps",
                "delta",
                "omega",
                "conversion",
                "charts",
                "gdp",
                "target",
                "library",
                "loaderN",
                "loaderB",
                "loaderE"
            ]
        );
        assert_eq!(f[0].1, Value::Num(VERSION as f64));
        assert_eq!(f[1].1, Value::Num(7.0));
        // A widget before its first answer has no generation; far from the viewport no charts.
        let w = tight(&i, None, &sc, 60.0, Tight::default());
        assert!(!keys(&w).contains(&"gen") && w.contains(&("charts", Value::Bool(false))));
    }

    /// A scheme's keys: epochs and sampling, examples per user, adjacency, sizes — or the
    /// reason the sizes cannot be asked.
    #[test]
    fn a_scheme_names_itself_and_its_sizes() {
        let i = Inputs::mnist();
        let sized = Scheme {
            dataset_size: Some(60000),
            max_batch: Some(300),
            ..Scheme::of(Batching::TruncatedPoisson, 1, Adjacency::AddRemove)
        };
        let f = scheme(&sized, &i, 60.0);
        assert_eq!(
            keys(&f),
            ["epochs", "sampling", "datasetSize", "batchSize", "maxBatch"]
        );
        assert!(f.contains(&("maxBatch", Value::Num(300.0))));
        let no_sizes = Scheme::of(Batching::TruncatedPoisson, 1, Adjacency::AddRemove);
        let f = scheme(&no_sizes, &i, 60.0);
        assert!(
            matches!(&f[2], ("schemeError", Value::Text(m)) if !m.is_empty()),
            "{f:?}"
        );
        let users = Scheme::of(Batching::Poisson, 4, Adjacency::ReplaceOne);
        assert_eq!(keys(&scheme(&users, &i, 60.0)), ["groupSize", "adjacency"]);
        let c = calibrate(
            &i,
            3,
            "sigma",
            vec![("target", Value::Num(1.0))],
            &users,
            60.0,
        );
        assert_eq!(
            keys(&c)[8..],
            ["kind", "which", "target", "groupSize", "adjacency"]
        );
        // A shuffled run's calibration names its scheme (issue 61 #1).
        let shuffled = Scheme::of(Batching::Shuffled, 1, Adjacency::AddRemove);
        let c = calibrate(&i, 3, "sigma", vec![], &shuffled, 30.0);
        assert_eq!(keys(&c)[8..], ["kind", "which", "epochs", "sampling"]);
    }

    /// The worker reads what is written here: every key a request can carry is read by
    /// www/pld-worker.js or by its Rust side (src/worker.rs), every kind of answer
    /// appears in the worker, and it checks the version (so a key renamed
    /// on one side only fails here).
    #[test]
    fn the_worker_speaks_this_protocol() {
        let js = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/www/pld-worker.js"))
            .unwrap();
        // What the worker computes beyond scheduling is read in Rust (src/worker.rs).
        let rust =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/worker.rs")).unwrap();
        let i = Inputs::mnist();
        let sized = Scheme {
            dataset_size: Some(60000),
            ..Scheme::of(Batching::FixedSize, 2, Adjacency::ReplaceOne)
        };
        let all = [
            tight(
                &i,
                Some(1),
                &sized,
                1.0,
                Tight {
                    charts: true,
                    gdp: true,
                    target: Some(1.0),
                    library: Some(Some([1.0, 1.0, 1.0])),
                },
            ),
            scheme(
                &Scheme::of(Batching::TruncatedPoisson, 1, Adjacency::AddRemove),
                &i,
                1.0,
            ),
            rdp(&i, 1, true),
            calibrate(
                &i,
                1,
                "sigma",
                vec![("accountant", text("pld"))],
                &sized,
                1.0,
            ),
            check(1, "opacus", "noise_multiplier=1"),
        ];
        for f in &all {
            for (k, _) in f {
                assert!(
                    js.contains(&format!("data.{k}"))
                        || js.contains(&format!("'{k}'"))
                        || rust.contains(&format!("\"{k}\"")),
                    "the worker never reads '{k}'"
                );
            }
        }
        for k in Kind::ALL {
            assert!(
                js.contains(&format!("kind: '{}'", k.name())),
                "the worker never answers kind '{}'",
                k.name()
            );
            assert_eq!(Kind::parse(k.name()), Some(k));
        }
        assert!(js.contains(&format!("const VERSION = {VERSION};")));
    }
}
