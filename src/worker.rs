//! What the page's worker computes beyond Poisson sampling's headline and charts (#20):
//! the runs the page and the widgets ask by scheme — shuffled batches, random allocation,
//! truncated Poisson, fixed-size batches, user-level and replace-one — each through this
//! command line's own query layer (its batch lines and commands, so the worker answers
//! what the command line answers), with their chart grids, the target's most steps, μ-GDP,
//! the library rows and the calibrations; and the check of every request. www/pld-worker.js
//! only schedules (the newest request per client and kind, caches, the helper worker);
//! what is computed, and how it is asked, is decided here and tested natively.

use crate::engine::math::powf;
use crate::engine::Adjacency;
use crate::query::{self, Accountant, Request, Sampling};
use crate::ui::protocol::VERSION;
use serde_json::{json, Map, Value};

fn num(d: &Value, k: &str) -> f64 {
    d.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

fn text<'a>(d: &'a Value, k: &str) -> Option<&'a str> {
    d.get(k).and_then(Value::as_str)
}

/// A value as JavaScript's `String(x)` shows it (a refusal names what it got), clipped.
fn shown(v: Option<&Value>) -> String {
    let s = match v {
        None => "undefined".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x) if x.fract() == 0.0 && x.abs() < 1e21 => format!("{}", x as i64),
            _ => n.to_string(),
        },
        Some(Value::Object(_)) => "[object Object]".into(),
        Some(v) => v.to_string(),
    };
    s.chars().take(40).collect()
}

fn finite(v: Option<&Value>) -> bool {
    v.and_then(Value::as_f64).is_some_and(f64::is_finite)
}

fn whole(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
        .filter(|x| x.fract() == 0.0 && x.abs() <= 9_007_199_254_740_991.0)
}

/// Why a request cannot be answered, if it cannot: checked before it touches the worker's
/// state, so a malformed message is answered with the reason for its client and changes
/// nothing else (a NaN generation used to silence its client for good).
pub fn check(d: &Value) -> Result<(), String> {
    if !d.is_object() {
        return Err("a message must be an object".into());
    }
    if let Some(v) = d.get("v") {
        if v.as_f64() != Some(f64::from(VERSION)) {
            return Err(format!(
                "protocol version {} is not this worker's ({VERSION}): reload the page",
                shown(Some(v))
            ));
        }
    }
    if d.get("client").is_some_and(|c| !c.is_string()) {
        return Err("'client' must be a string".into());
    }
    if !whole(d.get("gen")).is_some_and(|g| g >= 0.0) {
        return Err(format!(
            "'gen' must be a whole number >= 0, got {}",
            shown(d.get("gen"))
        ));
    }
    if text(d, "kind") == Some("check") {
        // A training configuration: its own keys (`config`) or a pasted snippet with its
        // library, read and checked by the query layer's `check`.
        return match (d.get("config"), text(d, "snippet"), text(d, "library")) {
            (Some(Value::Object(m)), _, _) if m.len() <= 64 => Ok(()),
            (None, Some(_), Some(_)) => Ok(()),
            _ => Err("a check needs 'config' (an object of at most 64 keys) or 'library' and 'snippet' (strings)".into()),
        };
    }
    if text(d, "kind") == Some("correlated")
        && !(text(d, "strategy").is_some_and(|s| s.len() <= 4096)
            && text(d, "participation").is_some_and(|s| s.len() <= 64))
    {
        return Err("correlated noise needs 'strategy' and 'participation' (short strings)".into());
    }
    if text(d, "kind") == Some("audit") && !d.get("csv").is_some_and(Value::is_string) {
        return Err(
            "an audit needs 'csv' (a string: a CSV with 'score' and 'member' columns)".into(),
        );
    }
    let need: &[&str] = if text(d, "kind") == Some("calibrate") {
        &["q", "delta", "target"]
    } else {
        &["q", "sigma", "steps", "delta"]
    };
    for k in need {
        if !finite(d.get(*k)) {
            let got = match d.get(*k) {
                Some(Value::String(s)) => {
                    format!("the string '{}'", s.chars().take(40).collect::<String>())
                }
                v => shown(v),
            };
            return Err(format!("'{k}' must be a finite number, got {got}"));
        }
    }
    let present = |k: &str| d.get(k).is_some_and(|v| !v.is_null());
    if present("epochs") && !finite(d.get("epochs")) {
        return Err("'epochs' must be a finite number".into());
    }
    if present("sampling") && !SAMPLINGS.contains(&text(d, "sampling").unwrap_or("")) {
        return Err("'sampling' must be 'poisson', 'shuffled', 'random-allocation', 'truncated-poisson' or 'fixed-size'".into());
    }
    for k in ["datasetSize", "batchSize", "maxBatch"] {
        if present(k) && !whole(d.get(k)).is_some_and(|x| x >= 1.0) {
            return Err(format!("'{k}' must be a whole number >= 1"));
        }
    }
    if present("schemeError") && text(d, "schemeError").is_none() {
        return Err("'schemeError' must be a string".into());
    }
    for k in ["loaderN", "loaderB", "loaderE"] {
        if present(k) && !finite(d.get(k)) {
            return Err(format!("'{k}' must be a finite number"));
        }
    }
    if present("groupSize")
        && !whole(d.get("groupSize")).is_some_and(|k| (1.0..=256.0).contains(&k))
    {
        return Err("'groupSize' must be a whole number in [1, 256]".into());
    }
    if present("adjacency") && !matches!(text(d, "adjacency"), Some("add-remove" | "replace-one")) {
        return Err("'adjacency' must be 'add-remove' or 'replace-one'".into());
    }
    if present("target") && !(finite(d.get("target")) && num(d, "target") > 0.0) {
        return Err("'target' must be a finite number > 0".into());
    }
    Ok(())
}

const SAMPLINGS: [&str; 5] = [
    "poisson",
    "shuffled",
    "random-allocation",
    "truncated-poisson",
    "fixed-size",
];

/// A request as the command line's flags set it (its refusals name flags: `--max-batch`).
fn flags() -> Request {
    Request {
        cli: true,
        ..Request::default()
    }
}

/// The query layer's answer (its fields) to `cmd` for `r`.
fn ask(cmd: &str, r: Request) -> Result<Map<String, Value>, String> {
    Ok(query::answer(cmd, r)?.fields)
}

/// How a scheme's ε-over-training steps are counted: `n` epochs of t steps, or steps.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    Epochs(u64),
    Steps,
}

/// A run named by a scheme, as one typed request of the query layer: its inputs apart from
/// its length, δ and the accountant (what `profile`, `gdp` and `calibrate` take), and ε over
/// training's checkpoints.
#[derive(Debug, Clone)]
pub struct SchemeRun {
    /// The run apart from its length (`epochs` or `steps`), δ and the accountant.
    run: Request,
    /// δ of its ε answers.
    delta: f64,
    /// Whether its answers name the tight accountant (truncated Poisson, user level).
    pld: bool,
    /// What the count is, and its value for the whole run.
    unit: Unit,
    total: u64,
    /// Why the run has no privacy profile (fixed-size batches: RDP only).
    no_profile: Option<&'static str>,
    /// The extra fields of its answer (`epochs`/`stepsPerEpoch`, `groupSize`, `sampling`).
    extra: Map<String, Value>,
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// ε over training's checkpoints: 12 points geometric in the run's length.
fn checkpoints(total: u64) -> Vec<u64> {
    let mut c: Vec<u64> = (1..=12)
        .map(|i| (powf(total as f64, i as f64 / 12.0).round() as u64).max(1))
        .collect();
    c.dedup();
    c
}

/// ε over training in the charts' shape from each checkpoint's (steps, batch-line answer):
/// the certified ε and its lower end (null where none is claimed); the first refusal refuses
/// the series.
fn training_series(
    points: impl Iterator<Item = (u64, Result<Map<String, Value>, String>)>,
) -> Result<Value, String> {
    let (mut st, mut up, mut lo) = (Vec::new(), Vec::new(), Vec::new());
    for (n, a) in points {
        let a = a?;
        st.push(n);
        up.push(a["epsilon"].clone());
        lo.push(a.get("epsilon_lower").cloned().unwrap_or(Value::Null));
    }
    Ok(json!({"steps": st, "pldUpper": up, "pldLower": lo, "rdp": []}))
}

/// The three charts' answer from ε over training and the run's `profile` up to `top` (the
/// query layer's profile fields): 2.5 × the largest ε over training (or `headline_upper`
/// when training failed). Each chart stands alone: one that fails is named in `errors`;
/// only when none can be drawn is the answer a refusal.
fn charts_of(
    training: Result<Value, String>,
    headline_upper: f64,
    profile: impl FnOnce(f64) -> Result<Map<String, Value>, String>,
) -> Result<Value, String> {
    let mut errors = Map::new();
    let largest = match &training {
        Ok(t) => t["pldUpper"]
            .as_array()
            .map(|v| {
                v.iter()
                    .filter_map(Value::as_f64)
                    .fold(f64::NEG_INFINITY, f64::max)
            })
            .unwrap_or(f64::NAN),
        Err(_) => headline_upper,
    };
    let top = (if largest.is_finite() { largest } else { 1.0 }).max(1e-3) * 2.5;
    let profile = profile(top);
    let (prof, risk) = match &profile {
        Ok(p) => {
            let attack = p["attack"].as_array().cloned().unwrap_or_default();
            (
                json!(p["profile"].as_array().map(|v| v
                    .iter()
                    .map(|pt| json!({"epsilon": pt["epsilon"], "delta": pt["delta"]}))
                    .collect::<Vec<_>>())),
                json!({
                    "curve": p["attack_curve"],
                    "fpr": attack.iter().map(|r| r["fpr"].clone()).collect::<Vec<_>>(),
                    "tpr": attack.iter().map(|r| r["tpr_max"].clone()).collect::<Vec<_>>(),
                }),
            )
        }
        Err(e) => {
            errors.insert("profile".into(), json!(e));
            errors.insert("risk".into(), json!(e));
            (Value::Null, Value::Null)
        }
    };
    let training = match training {
        Ok(t) => t,
        Err(e) if profile.is_err() => return Err(e),
        Err(e) => {
            errors.insert("training".into(), json!(e));
            Value::Null
        }
    };
    Ok(json!({"training": training, "profile": prof, "risk": risk, "errors": errors}))
}

impl SchemeRun {
    /// The scheme of a request: its `sampling` with its epochs and sizes, or Poisson
    /// sampling with K examples per user and/or replace-one adjacency.
    pub fn of(d: &Value) -> SchemeRun {
        let (q, sigma, delta) = (num(d, "q"), num(d, "sigma"), num(d, "delta"));
        let steps = num(d, "steps").max(0.0) as u64;
        let epochs = num(d, "epochs").max(0.0) as u64;
        let adj = text(d, "adjacency").unwrap_or("add-remove");
        let replace = adj == "replace-one";
        let mut run = Request {
            sigma: Some(sigma),
            ..flags()
        };
        match text(d, "sampling") {
            Some(sampling @ ("random-allocation" | "shuffled")) => {
                run.sampling = if sampling == "shuffled" {
                    Sampling::Shuffle
                } else {
                    Sampling::RandomAllocation
                };
                let (t, sized) = epoch_shape(d);
                match sized {
                    // The dataset terms: the command line's own derivation of t from N, B.
                    Some((n, b)) => run.dataset = [Some(n as f64), Some(b as f64), None],
                    None => run.steps_per_epoch = Some(t as f64),
                }
                if replace {
                    run.adjacency = Adjacency::ReplaceOne;
                }
                SchemeRun {
                    run,
                    delta,
                    pld: false,
                    unit: Unit::Epochs(t),
                    total: epochs,
                    no_profile: None,
                    extra: obj(json!({"epochs": epochs, "stepsPerEpoch": t})),
                }
            }
            Some(sampling @ ("truncated-poisson" | "fixed-size")) => {
                let fixed = sampling == "fixed-size";
                let (n, b, m) = (
                    num(d, "datasetSize"),
                    num(d, "batchSize"),
                    num(d, "maxBatch"),
                );
                if fixed {
                    run.sampling = Sampling::FixedSize;
                    run.dataset = [Some(n), Some(b), None];
                    run.adjacency = Adjacency::ReplaceOne;
                } else {
                    run.sampling = Sampling::TruncatedPoisson;
                    run.q = Some(q);
                    run.dataset[0] = Some(n);
                    run.max_batch = Some(m);
                }
                SchemeRun {
                    run,
                    delta,
                    pld: !fixed,
                    unit: Unit::Steps,
                    total: steps,
                    no_profile: fixed.then_some("the privacy profile and attack risk need a privacy-loss distribution; fixed-size batches have an RDP bound only (Wang, Balle, Kasiviswanathan)"),
                    extra: obj(json!({"sampling": sampling})),
                }
            }
            _ => {
                let k = num(d, "groupSize").max(1.0) as u64;
                run.q = Some(q);
                run.group = Some(k as f64);
                run.adjacency = if replace {
                    Adjacency::ReplaceOne
                } else {
                    Adjacency::AddRemove
                };
                SchemeRun {
                    run,
                    delta,
                    pld: true,
                    unit: Unit::Steps,
                    total: steps,
                    no_profile: None,
                    extra: obj(json!({"groupSize": k, "adjacency": adj})),
                }
            }
        }
    }

    /// The run at n epochs or steps.
    fn at(&self, n: u64) -> Request {
        let mut r = self.run.clone();
        match self.unit {
            Unit::Epochs(_) => r.dataset[2] = Some(n as f64),
            Unit::Steps => r.steps = Some(n as f64),
        }
        r
    }

    /// Its certified ε (with the lower end) at n epochs or steps, as a batch line answers.
    fn epsilon_at(&self, n: u64) -> Result<Map<String, Value>, String> {
        let r = Request {
            delta: Some(self.delta),
            accountant: self.pld.then_some(Accountant::Pld),
            cli: false,
            ..self.at(n)
        };
        ask("epsilon", r)
    }

    /// n (epochs or steps) in steps.
    fn steps(&self, n: u64) -> u64 {
        match self.unit {
            Unit::Epochs(t) => n * t,
            Unit::Steps => n,
        }
    }

    /// ε over training's checkpoints.
    fn checkpoints(&self) -> Vec<u64> {
        checkpoints(self.total)
    }

    /// The run's certified answer (its batch line for the whole run), with what it is.
    pub fn answer(&self) -> Result<Value, String> {
        let a = self.epsilon_at(self.total)?;
        let mut out = obj(
            json!({"epsilon": a["epsilon"], "epsilonLower": a.get("epsilon_lower").cloned().unwrap_or(Value::Null)}),
        );
        out.extend(self.extra.clone());
        Ok(Value::Object(out))
    }

    /// The scheme's charts, in the Poisson charts' shape: ε over training (each checkpoint
    /// its batch line), its privacy profile and the attack-risk curve (the command line's
    /// `profile`, up to 2.5 × the largest ε shown); no exact-RDP series (Poisson sampling's
    /// example-level RDP does not bound these runs). Each chart stands alone: one that
    /// fails is named in `errors`; only when none can be drawn is the answer a refusal.
    pub fn charts(&self, headline_upper: f64) -> Result<Value, String> {
        let training = training_series(
            self.checkpoints()
                .into_iter()
                .map(|n| (self.steps(n), self.epsilon_at(n))),
        );
        charts_of(training, headline_upper, |top| match self.no_profile {
            Some(why) => Err(why.to_string()),
            None => ask(
                "profile",
                Request {
                    epsilon: Some(top),
                    ..self.at(self.total)
                },
            ),
        })
    }

    /// The most steps whose certified ε meets `target` (random allocation and shuffled
    /// batches: whole epochs, in steps): the command line's calibrate.
    pub fn most_steps(&self, target: f64, delta: f64) -> Result<u64, String> {
        Ok(self.most_steps_and_epsilon(target, delta)?.0)
    }

    /// [`SchemeRun::most_steps`] with the certified ε there.
    pub fn most_steps_and_epsilon(&self, target: f64, delta: f64) -> Result<(u64, f64), String> {
        // (The run's own length is what is asked for.)
        let r = self.calibrate(self.run.clone(), "steps", target, delta)?;
        let eps = r["epsilon"].as_f64().unwrap_or(f64::NAN);
        let epochs = r.get("epochs").and_then(Value::as_f64);
        let steps = r.get("steps").and_then(Value::as_f64);
        match (self.unit, epochs, steps) {
            (Unit::Epochs(t), Some(e), _) if self.run.sampling == Sampling::RandomAllocation => {
                Ok((e as u64 * t, eps))
            }
            (_, _, Some(s)) => Ok((s as u64, eps)),
            _ => Err("the calibration gave no steps".into()),
        }
    }

    /// The smallest σ whose certified ε for this run (its scheme, its length) meets
    /// `target`: the query layer's calibrate. Returns (σ, ε there, the accountant).
    pub fn smallest_sigma(&self, target: f64, delta: f64) -> Result<(f64, f64, String), String> {
        let r = Request {
            sigma: None,
            ..self.at(self.total)
        };
        let r = self.calibrate(r, "sigma", target, delta)?;
        let got = |k: &str| r.get(k).and_then(Value::as_f64);
        match (got("sigma"), got("epsilon")) {
            (Some(s), Some(e)) => Ok((
                s,
                e,
                r.get("accountant")
                    .and_then(Value::as_str)
                    .unwrap_or("pld")
                    .to_string(),
            )),
            _ => Err("the calibration gave no sigma".into()),
        }
    }

    /// The query layer's calibrate of `r` (this run, less what is found) for `which`
    /// (sigma or steps) to ε ≤ `target` at `delta`.
    fn calibrate(
        &self,
        r: Request,
        which: &str,
        target: f64,
        delta: f64,
    ) -> Result<Map<String, Value>, String> {
        let r = Request {
            accountant: self.pld.then_some(Accountant::Pld),
            delta: Some(delta),
            epsilon: Some(target),
            target: Some(which.into()),
            ..r
        };
        ask("calibrate", r)
    }

    /// μ-GDP with its fit for the run (the query layer's `gdp`, δ-free).
    pub fn gdp(&self) -> Result<Map<String, Value>, String> {
        ask("gdp", self.at(self.total))
    }
}

/// The answers a run request carries beside Poisson sampling's headline, each standing on
/// its own (computed first: each stands even when the Poisson answer fails):
/// * `shuffled`: with `epochs`, the band of `--sampling shuffle` (upper end no
///   amplification, lower end Chua et al.'s pair), t = ⌊1/q⌋ steps per epoch;
/// * `allocation`: with sampling `random-allocation`, its certified bracket;
/// * `user`: K examples per user and/or replace-one with Poisson sampling;
/// * `scheme`: truncated Poisson or fixed-size batches (sizes given, or `schemeError`).
///
/// `own` says whether one of them is the run's own answer (its charts, target and μ-GDP
/// are then the scheme's).
pub fn side_answers(d: &Value) -> Value {
    let sampling = text(d, "sampling").unwrap_or("poisson");
    let k = num(d, "groupSize").max(1.0) as u64;
    let replace = text(d, "adjacency") == Some("replace-one");
    let sized = matches!(sampling, "truncated-poisson" | "fixed-size");
    let mut out = Map::new();
    let of = |extra: Value| -> Value {
        let sc = SchemeRun::of(d);
        sc.answer().unwrap_or_else(|e| {
            let mut m = obj(extra);
            m.insert("error".into(), json!(e));
            Value::Object(m)
        })
    };
    if sized {
        let a = match text(d, "schemeError") {
            Some(e) => json!({"error": e, "sampling": sampling}),
            None => of(json!({"sampling": sampling})),
        };
        out.insert("scheme".into(), a);
    } else if k > 1 || (replace && sampling == "poisson") {
        let a = if matches!(sampling, "shuffled" | "random-allocation") {
            json!({"error": "user-level ε (examples per user > 1) is computed for Poisson sampling only", "groupSize": k})
        } else {
            of(json!({"groupSize": k}))
        };
        out.insert("user".into(), a);
    }
    if let Some(req) = epochs_run(d) {
        let t = epoch_shape(&req).0;
        let e = num(d, "epochs");
        let a = SchemeRun::of(&req)
            .answer()
            .unwrap_or_else(|m| json!({"error": m, "epochs": e, "stepsPerEpoch": t}));
        let key = if sampling == "random-allocation" {
            "allocation"
        } else {
            "shuffled"
        };
        out.insert(key.into(), a);
    }
    // `asked`: the request names a run of its own (a scheme, user level, replace-one); when
    // none of its answers stands (`own` false), `why` says why, and no chart, target or μ of
    // Poisson sampling of one example may stand in for it (issue 61 #2).
    // Every answer asked must stand: K = 2 with shuffled batches is not answered by the
    // shuffled band of one example.
    let asked = !out.is_empty();
    let own = asked && out.values().all(|a| a.get("error").is_none());
    let why = out
        .values()
        .find_map(|a| a.get("error").and_then(Value::as_str))
        .map(str::to_string);
    out.insert("own".into(), json!(own));
    out.insert("asked".into(), json!(asked));
    if let (true, false, Some(why)) = (asked, own, why) {
        out.insert("why".into(), json!(why));
    }
    Value::Object(out)
}

/// The run's own scheme when one of its side answers (`side`, from [`side_answers`]) is
/// the run's: then its charts, target and μ-GDP are the scheme's (None: Poisson sampling of
/// one example, whose charts the worker computes directly).
pub fn scheme_of(d: &Value, side: &Value) -> Option<SchemeRun> {
    if side["own"] != true {
        return None;
    }
    let user = side.get("user").is_some_and(|u| u.get("error").is_none());
    Some(match epochs_run(d).filter(|_| !user) {
        Some(req) => SchemeRun::of(&req),
        None => SchemeRun::of(d),
    })
}

/// Steps per epoch of an epoch-based request, and (N, B) when it carries the dataset terms:
/// ⌊N/B⌋ for shuffled batches (the last partial batch dropped), ⌈N/B⌉ for random allocation
/// (every example in one step), as the command line derives them; else ⌊1/q⌋.
fn epoch_shape(d: &Value) -> (u64, Option<(u64, u64)>) {
    let (n, b) = (num(d, "datasetSize"), num(d, "batchSize"));
    if n >= 1.0 && b >= 1.0 && b <= n && n.fract() == 0.0 && b.fract() == 0.0 {
        let (n, b) = (n as u64, b as u64);
        let t = if text(d, "sampling") == Some("random-allocation") {
            n.div_ceil(b)
        } else {
            n / b
        };
        return (t, Some((n, b)));
    }
    ((1.0 / num(d, "q")).floor().max(1.0) as u64, None)
}

/// With `epochs` (and no sized scheme), the request of the epoch-based run it names: random
/// allocation as asked, else the shuffled band (the page's batching control, t = ⌊1/q⌋).
fn epochs_run(d: &Value) -> Option<Value> {
    let sampling = text(d, "sampling").unwrap_or("poisson");
    let epochs = num(d, "epochs") > 0.0;
    if !epochs || matches!(sampling, "truncated-poisson" | "fixed-size") {
        return None;
    }
    let mut req = d.clone();
    if sampling != "random-allocation" {
        req["sampling"] = json!("shuffled");
    }
    Some(req)
}

/// The run's own answer among its side answers (its ε sizes the profile's range).
pub fn own_answer(side: &Value) -> Option<&Value> {
    ["allocation", "shuffled", "scheme", "user"]
        .iter()
        .filter_map(|k| side.get(*k))
        .find(|a| a.get("error").is_none())
}

/// μ-GDP as the worker answers it: {mu, muLower, regret, tradeoff}.
fn gdp_answer(g: &Map<String, Value>) -> Value {
    json!({"mu": g["mu"], "muLower": g["mu_lower"], "regret": g["regret"], "tradeoff": g["tradeoff"]})
}

/// The own scheme's three charts (see [`SchemeRun::charts`]; the profile's range from its
/// answer's ε when ε over training has none).
pub fn scheme_charts(d: &Value, side: &Value) -> Result<Value, String> {
    let sc = scheme_of(d, side).ok_or("the run has no scheme of its own")?;
    let top = own_answer(side)
        .and_then(|a| a["epsilon"].as_f64())
        .unwrap_or(f64::NAN);
    sc.charts(top)
}

/// The most steps whose certified ε meets the request's `target`: the run's own scheme's,
/// else Poisson sampling's (the calibration "Most steps" asks: one solve for both).
pub fn most_steps(d: &Value, side: &Value) -> Result<Value, String> {
    let steps = match scheme_of(d, side) {
        Some(sc) => sc.most_steps(num(d, "target"), num(d, "delta"))?,
        None => {
            let mut c = d.clone();
            c["which"] = json!("steps");
            c["accountant"] = json!("pld");
            calibrate(&c)?["value"]
                .as_f64()
                .ok_or("the calibration gave no steps")? as u64
        }
    };
    Ok(json!(steps))
}

/// [`most_steps`] a few tight solves at a time: the page's helper runs it between messages,
/// so a newer run's charts wait for one solve, not for the whole search (seconds on a
/// large-dataset run). Poisson sampling of one example under add/remove
/// goes through [`crate::engine::pld::StepsSearch`]; any other run, and a request the engine
/// refuses, is answered at once by [`most_steps`] itself (so a refusal reads the same). The
/// answer is [`most_steps`]' whatever the budgets (`tests::target_search_answers_as_most_steps`).
pub struct TargetSearch {
    /// The request and its side answers (a refusal is [`most_steps`]' own).
    d: Value,
    side: Value,
    state: Target,
}

enum Target {
    Searching(crate::engine::pld::StepsSearch),
    Done(Result<Value, String>),
}

impl TargetSearch {
    pub fn new(d: &Value, side: &Value) -> Self {
        let plain = scheme_of(d, side).is_none()
            && num(d, "groupSize").max(1.0) as u64 == 1
            && text(d, "adjacency").unwrap_or("add-remove") == "add-remove";
        let search = || {
            let sgm = crate::engine::Sgm::new(num(d, "q"), num(d, "sigma"))?;
            crate::engine::pld::StepsSearch::new(num(d, "target"), num(d, "delta"), sgm)
        };
        let state = match plain.then(search) {
            Some(Ok(s)) => Target::Searching(s),
            _ => Target::Done(most_steps(d, side)),
        };
        TargetSearch {
            d: d.clone(),
            side: side.clone(),
            state,
        }
    }

    /// The search on with at most `fresh` new tight solves: its answer once found (then on
    /// every later call), `None` while it goes on.
    pub fn advance(&mut self, fresh: usize) -> Option<Result<Value, String>> {
        if let Target::Searching(s) = &mut self.state {
            self.state = Target::Done(match s.advance(fresh) {
                Ok(None) => return None,
                Ok(Some((steps, _))) => Ok(json!(steps)),
                // (A refusal met on the way, in the query layer's words.)
                Err(_) => most_steps(&self.d, &self.side),
            });
        }
        match &self.state {
            Target::Done(r) => Some(r.clone()),
            Target::Searching(_) => None,
        }
    }
}

/// μ-GDP with its fit for the run, as the worker answers it ({mu, muLower, regret,
/// tradeoff}): its own scheme's, else Poisson sampling's.
pub fn gdp(d: &Value, side: &Value) -> Result<Value, String> {
    let g = match scheme_of(d, side) {
        Some(sc) => sc.gdp()?,
        None => poisson_gdp(d)?,
    };
    Ok(gdp_answer(&g))
}

/// μ-GDP of Poisson sampling of one example (the query layer's `gdp`).
fn poisson_gdp(d: &Value) -> Result<Map<String, Value>, String> {
    let r = Request {
        q: Some(num(d, "q")),
        sigma: Some(num(d, "sigma")),
        steps: Some(num(d, "steps")),
        ..flags()
    };
    ask("gdp", r)
}

/// "What your library reports" for Poisson sampling of one example: the query layer's
/// `libraries`, with Opacus' loader terms when the page has them.
pub fn library(d: &Value) -> Result<Value, String> {
    let mut r = Request {
        sigma: Some(num(d, "sigma")),
        delta: Some(num(d, "delta")),
        ..flags()
    };
    if finite(d.get("loaderN")) {
        r.dataset = ["loaderN", "loaderB", "loaderE"].map(|k| Some(num(d, k)));
    } else {
        (r.q, r.steps) = (Some(num(d, "q")), Some(num(d, "steps")));
    }
    Ok(Value::Object(ask("libraries", r)?))
}

/// "What do I need?" (`which`: sigma, steps, risk-sigma, risk-steps): the command line's
/// calibrate — to the target ε with the accountant asked (exact RDP only for one example
/// under add/remove), or to an attack-risk target (TPR ≤ target at FPR `fpr`). The answer
/// is {which, accountant, value, epsilon (the TPR for a risk target), fpr?}.
pub fn calibrate(d: &Value) -> Result<Value, String> {
    let which = text(d, "which").unwrap_or("");
    // A run drawn by another scheme than Poisson sampling is calibrated as that scheme
    // (issue 61 #1: Poisson's σ was the answer for shuffled, truncated and fixed-size runs).
    let sampling = text(d, "sampling").unwrap_or("poisson");
    if sampling != "poisson" {
        if let Some(why) = text(d, "schemeError") {
            return Err(why.to_string());
        }
        if which == "risk-sigma" || which == "risk-steps" {
            return Err(format!("attack-risk targets are calibrated for Poisson sampling of one example under add/remove adjacency; this run uses {sampling} batches"));
        }
        let sc = match epochs_run(d) {
            Some(req) => SchemeRun::of(&req),
            None => SchemeRun::of(d),
        };
        let (target, delta) = (num(d, "target"), num(d, "delta"));
        return match which {
            "sigma" => {
                let (sigma, eps, acct) = sc.smallest_sigma(target, delta)?;
                Ok(
                    json!({"which": which, "accountant": acct, "value": sigma, "epsilon": eps, "sampling": sampling}),
                )
            }
            "steps" => {
                let (steps, eps) = sc.most_steps_and_epsilon(target, delta)?;
                Ok(
                    json!({"which": which, "accountant": "pld", "value": steps, "epsilon": eps, "sampling": sampling}),
                )
            }
            _ => Err("'which' must be 'sigma', 'steps', 'risk-sigma' or 'risk-steps'".into()),
        };
    }
    let k = num(d, "groupSize").max(1.0) as u64;
    let adj = text(d, "adjacency").unwrap_or("add-remove");
    let (q, delta, target) = (num(d, "q"), num(d, "delta"), num(d, "target"));
    if which == "risk-sigma" || which == "risk-steps" {
        if k > 1 || adj != "add-remove" {
            return Err("attack-risk targets are calibrated for one example per user under add/remove adjacency".into());
        }
        let fpr = num(d, "fpr");
        if !(fpr > 0.0 && fpr < 1.0) {
            return Err("'fpr' must be a number in (0, 1)".into());
        }
        let sigma_of = which == "risk-sigma";
        let mut r = Request {
            q: Some(q),
            risk: [Some(target), Some(fpr), None],
            ..flags()
        };
        if sigma_of {
            r.steps = Some(num(d, "steps"));
        } else {
            r.sigma = Some(num(d, "sigma"));
        }
        let r = ask("calibrate", r)?;
        let found = if sigma_of { &r["sigma"] } else { &r["steps"] };
        return Ok(
            json!({"which": which, "accountant": "pld", "value": found, "epsilon": r["tpr"], "fpr": fpr}),
        );
    }
    if which != "sigma" && which != "steps" {
        return Err("'which' must be 'sigma', 'steps', 'risk-sigma' or 'risk-steps'".into());
    }
    let acct = if text(d, "accountant") == Some("rdp") && k == 1 && adj == "add-remove" {
        "rdp"
    } else {
        "pld"
    };
    let mut r = Request {
        q: Some(q),
        accountant: Some(if acct == "rdp" {
            Accountant::Rdp
        } else {
            Accountant::Pld
        }),
        delta: Some(delta),
        epsilon: Some(target),
        target: Some(which.into()),
        ..flags()
    };
    if k > 1 || adj != "add-remove" {
        r.group = Some(k as f64);
        r.adjacency = if adj == "replace-one" {
            Adjacency::ReplaceOne
        } else {
            Adjacency::AddRemove
        };
    }
    if which == "sigma" {
        r.steps = Some(num(d, "steps"));
    } else {
        r.sigma = Some(num(d, "sigma"));
    }
    if let Some(c) = text(d, "conversion").filter(|_| acct == "rdp") {
        r.conversion = Some(c.parse().map_err(|e: crate::engine::Error| e.to_string())?);
        r.given.push("conversion");
    }
    let r = ask("calibrate", r)?;
    Ok(json!({"which": which, "accountant": acct, "value": r[which], "epsilon": r["epsilon"]}))
}

/// "Check my training code": the request's `config`, or its `library` and pasted `snippet`
/// (read by [`query::check::from_snippet`]; the names left out come back as `skipped`),
/// through the query layer's `check` (the command line's `check --json` fields).
pub fn check_config(d: &Value) -> Result<Value, String> {
    match (d.get("config"), text(d, "snippet"), text(d, "library")) {
        (Some(Value::Object(m)), _, _) => Ok(Value::Object(query::check(m)?.fields)),
        (None, Some(snippet), Some(library)) => {
            let (config, skipped) = query::check::from_snippet(library, snippet)?;
            let mut fields = query::check(&config)?.fields;
            fields.insert("skipped".into(), json!(skipped));
            Ok(Value::Object(fields))
        }
        _ => Err("a check needs 'config', or 'library' and 'snippet'".into()),
    }
}

/// The run shown as one request at its whole length: Poisson sampling of one example under
/// add/remove, else its scheme's run (as its headline and charts answer it).
fn shown_run(d: &Value) -> Request {
    let plain = matches!(text(d, "sampling"), None | Some("poisson"))
        && num(d, "groupSize").max(1.0) <= 1.0
        && text(d, "adjacency") != Some("replace-one");
    if plain {
        return Request {
            q: Some(num(d, "q")),
            sigma: Some(num(d, "sigma")),
            steps: Some(num(d, "steps")),
            ..flags()
        };
    }
    let sc = match epochs_run(d).filter(|_| num(d, "groupSize").max(1.0) <= 1.0) {
        Some(req) => SchemeRun::of(&req),
        None => SchemeRun::of(d),
    };
    sc.at(sc.total)
}

/// Correlated noise for the run shown: its `strategy` and `participation` at the run's σ and
/// δ and its dataset terms (`datasetSize`, `batchSize`, `epochs`) when given, else its q and
/// T, through the query layer's correlated-noise line (`epsilon --strategy … --json`'s
/// fields). The bins participations take no q (each example is in one step of each epoch).
/// With a `target` ε, the smallest σ reaching it as well (`calibrated_sigma`, or why not:
/// `calibrate_error`).
pub fn correlated(d: &Value) -> Result<Value, String> {
    let joins = text(d, "participation").unwrap_or("min-sep");
    let mut line = Map::new();
    line.insert("strategy".into(), json!(text(d, "strategy").unwrap_or("")));
    line.insert("participation".into(), json!(joins));
    line.insert("sigma".into(), json!(num(d, "sigma")));
    line.insert("delta".into(), json!(num(d, "delta")));
    if finite(d.get("datasetSize")) && finite(d.get("batchSize")) && finite(d.get("epochs")) {
        // The run's dataset terms: the same dataset, batch size and epochs.
        line.insert("dataset_size".into(), json!(num(d, "datasetSize")));
        line.insert("batch_size".into(), json!(num(d, "batchSize")));
        line.insert("epochs".into(), json!(num(d, "epochs")));
    } else {
        if !joins.contains("bins") {
            line.insert("q".into(), json!(num(d, "q")));
        }
        line.insert("steps".into(), json!(num(d, "steps")));
    }
    let mut out = query::matrix_line(&line)?;
    if d.get("charts") == Some(&Value::Bool(true)) {
        let upper = out
            .get("epsilon")
            .and_then(Value::as_f64)
            .unwrap_or(f64::NAN);
        match correlated_charts(&line, upper) {
            Ok(c) => out.insert("charts".into(), c),
            Err(m) => out.insert("charts_error".into(), json!(m)),
        };
    }
    if finite(d.get("target")) {
        // The smallest σ whose certified ε reaches the page's target, the run otherwise the same.
        line.remove("sigma");
        line.insert("command".into(), json!("calibrate"));
        line.insert("epsilon".into(), json!(num(d, "target")));
        out.insert("target".into(), json!(num(d, "target")));
        match query::matrix_line(&line) {
            Ok(c) => {
                out.insert("calibrated_sigma".into(), c["sigma"].clone());
            }
            Err(m) => {
                out.insert("calibrate_error".into(), json!(m));
            }
        }
    }
    Ok(Value::Object(out))
}

/// The correlated run's three charts (in the sampling schemes' shape): ε over training at
/// checkpoints in epochs (dataset terms) or steps, each its own correlated-noise line, and
/// the query layer's correlated profile for the whole run.
fn correlated_charts(line: &Map<String, Value>, upper: f64) -> Result<Value, String> {
    let unit = if line.contains_key("epochs") {
        "epochs"
    } else {
        "steps"
    };
    let total = line
        .get(unit)
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
        .max(0.0) as u64;
    // The bins in steps: whole epochs of t steps (a bins run is at least one epoch long).
    let per = query::bins_per_epoch(line.get("participation").and_then(Value::as_str))
        .filter(|_| unit == "steps");
    let marks = match per {
        Some(t) => checkpoints(total.div_ceil(t))
            .into_iter()
            .map(|e| (e * t).min(total))
            .collect(),
        None => checkpoints(total),
    };
    let training = training_series(marks.into_iter().map(|n| {
        let mut l = line.clone();
        l.insert(unit.into(), json!(n));
        let a = query::matrix_line(&l);
        let steps = a
            .as_ref()
            .ok()
            .and_then(|a| a["steps"].as_u64())
            .unwrap_or(n);
        (steps, a)
    }));
    charts_of(training, upper, |top| {
        let mut l = line.clone();
        l.remove("delta");
        l.insert("command".into(), json!("profile"));
        l.insert("epsilon".into(), json!(top));
        query::matrix_line(&l)
    })
}

/// "Audit against the certificate": the request's scores (`csv`, with `score` and `member`
/// columns; `lowerIsMember`) audited at its δ, beside the certified ε and μ of the run shown.
pub fn audit(d: &Value) -> Result<Value, String> {
    let csv = text(d, "csv").ok_or("an audit needs 'csv'")?;
    let lower = d.get("lowerIsMember") == Some(&Value::Bool(true));
    let fields = query::audit_csv(csv, lower, num(d, "delta"), shown_run(d))?;
    Ok(Value::Object(fields))
}

#[cfg(test)]
mod tests;
