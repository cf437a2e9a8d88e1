//! What the page's worker computes beyond Poisson sampling's headline and charts (#20):
//! the runs the page and the widgets ask by scheme — shuffled batches, random allocation,
//! truncated Poisson, fixed-size batches, user-level and replace-one — each through this
//! command line's own query layer (its batch lines and commands, so the worker answers
//! what the command line answers), with their chart grids, the target's most steps, μ-GDP,
//! the library rows and the calibrations; and the check of every request. www/pld-worker.js
//! only schedules (the newest request per client and kind, caches, the helper worker);
//! what is computed, and how it is asked, is decided here and tested natively.

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

    /// ε over training's checkpoints: 12 points geometric in the run's length.
    fn checkpoints(&self) -> Vec<u64> {
        let mut c: Vec<u64> = (1..=12)
            .map(|i| ((self.total as f64).powf(i as f64 / 12.0).round() as u64).max(1))
            .collect();
        c.dedup();
        c
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
        let mut errors = Map::new();
        let training = (|| -> Result<Value, String> {
            let (mut st, mut up, mut lo) = (Vec::new(), Vec::new(), Vec::new());
            for n in self.checkpoints() {
                let a = self.epsilon_at(n)?;
                st.push(self.steps(n));
                up.push(a["epsilon"].clone());
                lo.push(a.get("epsilon_lower").cloned().unwrap_or(Value::Null));
            }
            Ok(json!({"steps": st, "pldUpper": up, "pldLower": lo, "rdp": []}))
        })();
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
        let profile = match self.no_profile {
            Some(why) => Err(why.to_string()),
            None => ask(
                "profile",
                Request {
                    epsilon: Some(top),
                    ..self.at(self.total)
                },
            ),
        };
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

/// "Audit against the certificate": the request's scores (`csv`, with `score` and `member`
/// columns; `lowerIsMember`) audited at its δ, beside the certified ε and μ of the run shown.
pub fn audit(d: &Value) -> Result<Value, String> {
    let csv = text(d, "csv").ok_or("an audit needs 'csv'")?;
    let lower = d.get("lowerIsMember") == Some(&Value::Bool(true));
    let fields = query::audit_csv(csv, lower, num(d, "delta"), shown_run(d))?;
    Ok(Value::Object(fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command line's `--json` answer to `w` (the words, as a user types them).
    fn command(w: &[&str]) -> Result<Value, String> {
        let words: Vec<String> = w.iter().map(|s| s.to_string()).collect();
        let out = crate::query::run(&words)?;
        serde_json::from_str(&out).map_err(|e| format!("unreadable answer: {e}"))
    }

    fn req(extra: Value) -> Value {
        let mut d =
            json!({"v": 1, "gen": 3, "q": 0.01, "sigma": 1.0, "steps": 1000, "delta": 1e-5});
        for (k, v) in obj(extra) {
            d[k] = v;
        }
        d
    }

    /// A check request is the command line's `check`, field for field; a bad one is refused.
    #[test]
    fn a_check_request_is_the_command_lines_check() {
        let d = json!({"v": 1, "gen": 2, "kind": "check", "config": {"library": "opacus",
            "noise_multiplier": 1, "dataset_size": 50000, "batch_size": 512, "epochs": 30,
            "delta": 1e-5, "poisson_sampling": false}});
        assert!(check(&d).is_ok());
        let got = check_config(&d).unwrap();
        let cli = command(&[
            "check",
            "--library",
            "opacus",
            "--noise-multiplier",
            "1",
            "--dataset-size",
            "50000",
            "--batch-size",
            "512",
            "--epochs",
            "30",
            "--delta",
            "1e-5",
            "--poisson-sampling",
            "false",
            "--json",
        ])
        .unwrap();
        assert_eq!(got, cli);
        assert!(check(&json!({"v": 1, "gen": 2, "kind": "check"})).is_err());
        let bad = json!({"v": 1, "gen": 2, "kind": "check", "config": {"library": "keras"}});
        assert!(check_config(&bad).unwrap_err().contains("library must be"));
        // The page's form: a pasted call, read here; the objects come back as skipped.
        let pasted = json!({"v": 1, "gen": 3, "kind": "check", "library": "opacus", "snippet":
            "make_private(module=model, noise_multiplier=1, dataset_size=50000, batch_size=512, epochs=30, delta=1e-5, poisson_sampling=False)"});
        assert!(check(&pasted).is_ok());
        let got = check_config(&pasted).unwrap();
        assert_eq!(got["certified_epsilon"], cli["certified_epsilon"]);
        assert_eq!(got["skipped"], json!(["module"]));
    }

    /// Every malformed request is refused by name, before it touches the worker's state.
    #[test]
    fn requests_are_checked_by_name() {
        assert!(check(&req(json!({}))).is_ok());
        for (bad, named) in [
            (json!({"v": 2}), "protocol version 2"),
            (
                json!({"gen": 1.5}),
                "'gen' must be a whole number >= 0, got 1.5",
            ),
            (json!({"gen": -1}), "'gen'"),
            (
                json!({"q": "0.01"}),
                "'q' must be a finite number, got the string '0.01'",
            ),
            (
                json!({"sigma": null}),
                "'sigma' must be a finite number, got null",
            ),
            (json!({"sampling": "shuffle"}), "'sampling' must be"),
            (
                json!({"datasetSize": 0}),
                "'datasetSize' must be a whole number >= 1",
            ),
            (
                json!({"groupSize": 300}),
                "'groupSize' must be a whole number in [1, 256]",
            ),
            (json!({"adjacency": "swap"}), "'adjacency'"),
            (json!({"target": 0}), "'target' must be a finite number > 0"),
            (json!({"client": 3}), "'client' must be a string"),
        ] {
            let e = check(&req(bad.clone())).unwrap_err();
            assert!(e.contains(named), "{bad}: {e}");
        }
        assert!(check(&json!([1])).unwrap_err().contains("object"));
        let cal = json!({"kind": "calibrate", "gen": 1, "q": 0.01, "delta": 1e-5, "target": 1.0});
        assert!(check(&cal).is_ok(), "a calibration needs no σ or steps");
    }

    /// A scheme's answers are the command line's batch lines for the same run: the band
    /// for shuffled batches, user-level and replace-one brackets, a sized scheme's refusal.
    #[test]
    fn side_answers_are_the_command_lines() {
        let d = req(json!({"epochs": 10, "sampling": "shuffled"}));
        let side = side_answers(&d);
        let line = json!({"sigma": 1.0, "delta": 1e-5, "sampling": "shuffle", "steps_per_epoch": 100, "epochs": 10});
        let cli = crate::query::line_answer(obj(line.clone())).unwrap();
        assert_eq!(side["shuffled"]["epsilon"], cli["epsilon"]);
        assert_eq!(side["shuffled"]["epsilonLower"], cli["epsilon_lower"]);
        assert_eq!(side["own"], true);
        let sc = scheme_of(&d, &side).unwrap();
        assert_eq!(own_answer(&side), Some(&side["shuffled"]));
        assert_eq!(sc.checkpoints().last(), Some(&10));
        assert_eq!(sc.steps(10), 1000);
        let user = side_answers(&req(json!({"groupSize": 2})));
        let line = json!({"q": 0.01, "sigma": 1.0, "delta": 1e-5, "steps": 1000, "group_size": 2, "adjacency": "add-remove", "accountant": "pld"});
        assert_eq!(
            user["user"]["epsilon"],
            crate::query::line_answer(obj(line.clone())).unwrap()["epsilon"]
        );
        let refused = side_answers(&req(
            json!({"sampling": "fixed-size", "schemeError": "needs N"}),
        ));
        assert_eq!(refused["scheme"]["error"], "needs N");
        assert_eq!(refused["own"], false);
        let plain = req(json!({}));
        assert!(
            scheme_of(&plain, &side_answers(&plain)).is_none(),
            "Poisson sampling of one example"
        );
        let both = side_answers(&req(
            json!({"groupSize": 2, "sampling": "shuffled", "epochs": 10}),
        ));
        assert!(both["user"]["error"]
            .as_str()
            .unwrap()
            .contains("Poisson sampling only"));
        // Issue 61 #2: a run of its own that has no answer says why, and nothing else
        // stands in for it (the band of one example is not K = 2's).
        assert_eq!(
            (both["own"].clone(), both["asked"].clone()),
            (json!(false), json!(true))
        );
        assert!(both["why"]
            .as_str()
            .unwrap()
            .contains("Poisson sampling only"));
        assert_eq!(refused["why"], "needs N");
        assert_eq!(side_answers(&plain)["asked"], false);
    }

    /// A scheme's charts, most steps and μ-GDP: its own grid, the calibration's answer
    /// meets the target, and fixed-size batches say why they have no profile.
    #[test]
    fn scheme_charts_target_and_gdp() {
        let d = req(json!({"groupSize": 2, "steps": 200}));
        let sc = scheme_of(&d, &side_answers(&d)).unwrap();
        let c = sc.charts(f64::NAN).unwrap();
        let up = c["training"]["pldUpper"].as_array().unwrap();
        assert_eq!(up.len(), sc.checkpoints().len());
        assert!(
            up.windows(2).all(|w| w[0].as_f64() <= w[1].as_f64()),
            "ε grows with steps"
        );
        assert!(c["profile"].as_array().is_some_and(|p| !p.is_empty()) && c["errors"] == json!({}));
        let last = up.last().unwrap().as_f64().unwrap();
        let mut asked = d.clone();
        asked["target"] = json!(last);
        let side = side_answers(&d);
        let most = most_steps(&asked, &side).unwrap().as_u64().unwrap();
        assert!((200..400).contains(&most), "{most}");
        assert!(gdp(&d, &side).unwrap()["mu"].as_f64().unwrap() > 0.0);
        assert!(scheme_charts(&d, &side).unwrap()["training"]["steps"]
            .as_array()
            .is_some());
        // Poisson sampling of one example: its own most steps and μ-GDP.
        let plain = req(json!({"target": 1.0}));
        let side = side_answers(&plain);
        assert!(scheme_charts(&plain, &side).is_err());
        let steps = most_steps(&plain, &side).unwrap().as_f64().unwrap();
        assert!(steps >= 1.0, "{steps}");
        assert!(gdp(&plain, &side).unwrap()["muLower"].as_f64().is_some());
        let fixed = req(
            json!({"sampling": "fixed-size", "datasetSize": 10000, "batchSize": 100, "adjacency": "replace-one", "steps": 100}),
        );
        let sc = scheme_of(&fixed, &side_answers(&fixed)).unwrap();
        let c = sc.charts(f64::NAN).unwrap();
        assert!(c["errors"]["profile"]
            .as_str()
            .unwrap()
            .contains("RDP bound only"));
        assert!(c["training"]["pldLower"]
            .as_array()
            .unwrap()
            .iter()
            .all(Value::is_null));
    }

    /// Calibrations name their accountant: exact RDP only where it bounds the run; a risk
    /// target needs one example under add/remove.
    #[test]
    fn calibrations_are_the_command_lines() {
        let cal = |extra: Value| {
            let mut d = json!({"kind": "calibrate", "gen": 1, "q": 0.01, "sigma": 1.0, "steps": 1000, "delta": 1e-5, "target": 2.0, "accountant": "rdp"});
            for (k, v) in obj(extra) {
                d[k] = v;
            }
            calibrate(&d)
        };
        let r = cal(json!({"which": "sigma"})).unwrap();
        assert_eq!(r["accountant"], "rdp");
        let sigma = r["value"].as_f64().unwrap();
        assert!(
            sigma > 0.5 && sigma < 2.0 && r["epsilon"].as_f64().unwrap() <= 2.0,
            "{r}"
        );
        let t = cal(json!({"which": "steps", "groupSize": 2})).unwrap();
        assert_eq!(t["accountant"], "pld");
        assert!(t["value"].as_f64().unwrap() >= 1.0, "{t}");
        assert!(t["epsilon"].as_f64().unwrap() <= 2.0);
        let risk = cal(json!({"which": "risk-sigma", "target": 0.1, "fpr": 0.01})).unwrap();
        assert_eq!(risk["fpr"], 0.01);
        assert!(
            risk["value"].as_f64().unwrap() > 0.0 && risk["epsilon"].as_f64().unwrap() <= 0.1,
            "{risk}"
        );
        assert!(cal(json!({"which": "risk-steps", "target": 0.1, "fpr": 2.0})).is_err());
        assert!(
            cal(json!({"which": "risk-steps", "target": 0.1, "fpr": 0.01, "groupSize": 2}))
                .is_err()
        );
    }

    /// Issue 61 #5: one derivation of the steps per epoch. With the dataset terms the
    /// worker's band and bracket are the command line's for --dataset-size/--batch-size
    /// (P1 shuffled: t = ⌊N/B⌋ = 97 with the last 336 examples of each epoch dropped;
    /// random allocation: t = ⌈N/B⌉ = 98), not those of ⌊1/q⌋ steps.
    #[test]
    fn epoch_runs_from_dataset_terms_are_the_command_lines() {
        for (sampling, cli_name, t) in [
            ("shuffled", "shuffle", 97),
            ("random-allocation", "random-allocation", 98),
        ] {
            let d = json!({"v": 1, "gen": 3, "q": 0.01024, "sigma": 1.0, "steps": 2930, "delta": 1e-5,
                "sampling": sampling, "epochs": 30, "datasetSize": 50000, "batchSize": 512});
            let side = side_answers(&d);
            let key = if sampling == "shuffled" {
                "shuffled"
            } else {
                "allocation"
            };
            let line = json!({"sigma": 1.0, "delta": 1e-5, "sampling": cli_name,
                "dataset_size": 50000, "batch_size": 512, "epochs": 30});
            let cli = crate::query::line_answer(obj(line.clone())).unwrap();
            assert_eq!(side[key]["epsilon"], cli["epsilon"], "{sampling}: {side}");
            assert_eq!(
                side[key]["epsilonLower"], cli["epsilon_lower"],
                "{sampling}: {side}"
            );
            assert_eq!(side[key]["stepsPerEpoch"], t, "{sampling}: {side}");
        }
    }

    /// Issue 61 #1: "What do I need?" answers the scheme shown, as the command line's
    /// calibrate does for that scheme — never Poisson sampling's σ. P1: q = 0.01024
    /// (t = ⌊1/q⌋ = 97 steps per epoch), 30 epochs, δ = 1e-5, target ε = 3.
    #[test]
    fn calibrations_answer_the_scheme_shown() {
        let p1 = |extra: Value| {
            let mut d = json!({"kind": "calibrate", "gen": 1, "q": 0.01024, "sigma": 1.0, "steps": 2930, "delta": 1e-5, "target": 3.0, "accountant": "pld", "which": "sigma"});
            for (k, v) in obj(extra) {
                d[k] = v;
            }
            calibrate(&d)
        };
        let poisson = p1(json!({})).unwrap()["value"].as_f64().unwrap();
        let cli = |w: &[&str]| command(w).unwrap()["sigma"].as_f64().unwrap();
        // Shuffled: the band's upper end meets the target (σ 7.6166 where Poisson's is 1.04).
        let r = p1(json!({"sampling": "shuffled", "epochs": 30})).unwrap();
        let want = cli(&[
            "calibrate",
            "--sampling",
            "shuffle",
            "--steps-per-epoch",
            "97",
            "--epochs",
            "30",
            "--delta",
            "1e-5",
            "--epsilon",
            "3",
            "--json",
        ]);
        assert_eq!(r["value"].as_f64(), Some(want), "{r}");
        assert!(
            want > 7.0 && poisson < 1.1 && r["accountant"] == "band",
            "{r}"
        );
        // Truncated Poisson and fixed-size batches: their own calibrations.
        let r = p1(json!({"sampling": "truncated-poisson", "datasetSize": 50000, "batchSize": 512, "maxBatch": 603})).unwrap();
        let want = cli(&[
            "calibrate",
            "--sampling",
            "truncated-poisson",
            "--q",
            "0.01024",
            "--dataset-size",
            "50000",
            "--max-batch",
            "603",
            "--steps",
            "2930",
            "--accountant",
            "pld",
            "--delta",
            "1e-5",
            "--epsilon",
            "3",
            "--json",
        ]);
        assert_eq!(r["value"].as_f64(), Some(want), "{r}");
        assert!(want > poisson, "{want} vs {poisson}");
        let r = p1(json!({"sampling": "fixed-size", "datasetSize": 50000, "batchSize": 512, "adjacency": "replace-one"})).unwrap();
        assert!((r["value"].as_f64().unwrap() - 3.6452).abs() < 1e-3, "{r}");
        // Most steps of the shuffled run: whole epochs whose band's upper end meets the target.
        // (One epoch of σ = 1 is already ε 4.38 without amplification: refused at 3.)
        assert!(p1(json!({"which": "steps", "sampling": "shuffled", "epochs": 30})).is_err());
        let r = p1(json!({"which": "steps", "sampling": "shuffled", "epochs": 30, "target": 20.0}))
            .unwrap();
        let steps = r["value"].as_u64().unwrap();
        assert!(
            steps % 97 == 0 && steps >= 97 && r["epsilon"].as_f64().unwrap() <= 20.0,
            "{r}"
        );
        // An attack-risk target is refused for a scheme, by name; so is a scheme without sizes.
        let e = p1(json!({"which": "risk-sigma", "fpr": 0.01, "target": 0.1, "sampling": "shuffled", "epochs": 30})).unwrap_err();
        assert!(e.contains("shuffled"), "{e}");
        let e = p1(json!({"sampling": "truncated-poisson", "schemeError": "truncated Poisson needs the dataset size"})).unwrap_err();
        assert!(e.contains("dataset size"), "{e}");
    }

    /// The page's audit: the pasted CSV against the run shown — Poisson sampling's, or the
    /// shuffled band's — with the certificate the command line gives for that run.
    #[test]
    fn an_audit_is_of_the_run_shown() {
        let mut csv = String::from("score,member\n");
        for i in 0..300 {
            let z = (i as f64 + 0.5) / 300.0 * 6.0 - 3.0;
            csv += &format!("{},1\n{z},0\n", z + 1.0);
        }
        let d = req(json!({"kind": "audit", "csv": csv.clone()}));
        check(&d).unwrap();
        let a = audit(&d).unwrap();
        let want = command(&[
            "epsilon",
            "--q",
            "0.01",
            "--sigma",
            "1",
            "--steps",
            "1000",
            "--delta",
            "1e-5",
            "--accountant",
            "pld",
            "--json",
        ])
        .unwrap();
        assert_eq!(a["certified_epsilon"], want["epsilon"], "{a}");
        assert!(a["verdict"].as_str().unwrap().contains("poisson sampling"));
        let shuffled =
            req(json!({"kind": "audit", "csv": csv, "sampling": "shuffled", "epochs": 10}));
        let a = audit(&shuffled).unwrap();
        let want = command(&[
            "epsilon",
            "--sampling",
            "shuffle",
            "--steps-per-epoch",
            "100",
            "--epochs",
            "10",
            "--sigma",
            "1",
            "--delta",
            "1e-5",
            "--json",
        ])
        .unwrap();
        assert_eq!(a["certified_epsilon"], want["epsilon"], "{a}");
        assert!(a["verdict"].as_str().unwrap().contains("shuffle sampling"));
        assert!(check(&req(json!({"kind": "audit"}))).is_err());
        let e = audit(&req(json!({"kind": "audit", "csv": "a,b\n1,2"}))).unwrap_err();
        assert!(e.contains("'score' column"), "{e}");
    }
}
