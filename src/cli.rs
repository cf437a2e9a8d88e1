//! The native command line (`sgm-rdp`), kept in the library so tests can call
//! it without spawning processes. `run` returns the text for stdout or a
//! one-line error for stderr.

use crate::engine::{self, bounds, calibrate, Conversion, Optimum, Run, Sgm};
use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};

mod scheme;
use scheme::{Query, Sampling};

pub const USAGE: &str = "usage: sgm-rdp <rdp|epsilon|delta|calibrate|bounds|compare|libraries|profile|gdp|batch> [--q Q] [--sigma S] \
[--steps T] [--delta D] [--epsilon E] [--orders A,B,..] [--alpha A] [--conversion improved|classic] \
[--accountant rdp|pld|both] \
[--target sigma|steps] [--tpr A --fpr B | --advantage A] [--dataset-size N --batch-size B --epochs E] \
[--sampling poisson|shuffle|truncated-poisson|fixed-size|random-allocation] [--adjacency add-remove|replace-one] [--steps-per-epoch t] \
[--selected k] [--max-batch B] [--bands b] [--json]";

/// `sgm-rdp --help`: what each command does and the flags it takes.
pub const HELP: &str = "sgm-rdp: privacy accounting for DP-SGD (the Sampled Gaussian Mechanism)

commands:
  rdp        per-step and composed RDP at each order
  epsilon    smallest epsilon at --delta (exact RDP; --accountant pld|both: the tight, certified bracket)
  delta      smallest delta at --epsilon
  calibrate  smallest --sigma for an --epsilon target (or, with --sigma / --target steps, the most steps);
             or for an attack-risk target: --tpr A --fpr B (TPR <= A at FPR B) or --advantage A
  bounds     exact RDP next to the paper's bounds, each with its failing condition named
  compare    epsilon of every route from the three papers for the same run
  libraries  epsilon as Opacus and dp_accounting print it for the same run (computed), next to ours;
             with --dataset-size/--batch-size/--epochs, Opacus' q and steps from its data loader
  profile    the tight privacy profile delta(epsilon) and membership-inference bounds
  gdp        mu-GDP of the run (certified mu, its bracket, the fit's regret) and the attack trade-off
  batch      JSON lines on stdin, one JSON line out per line (no flags: every key goes in the lines)

flags (the training tools' names in parentheses):
  --q Q (--sample_rate)          sampling rate        --sigma S (--noise_multiplier)  noise std / clipping norm
  --steps T                      steps                --delta D / --epsilon E
  --dataset-size N --batch-size B --epochs E          instead of --q/--steps: q = B/N, T = ceil(E*N/B)
  --orders A,B,..  --alpha A     Renyi orders (default: dp_accounting's 156)
  --conversion improved|classic  RDP -> (epsilon, delta)
  --accountant rdp|pld|both      epsilon, delta, calibrate (default rdp)
  --target sigma|steps           calibrate
  --tpr A --fpr B | --advantage A   calibrate to an attack-risk target (tight accountant)
  --group-size K                 epsilon, delta: user-level privacy, K examples per user (tight accountant)
  --sampling poisson|shuffle|truncated-poisson|fixed-size   epsilon, delta, calibrate, profile: how batches are drawn (default poisson,
                                 rate q); shuffle: a random permutation per epoch in fixed-size batches,
                                 answered as a certified band [Chua et al. lower bound, no-amplification
                                 upper bound]; truncated-poisson: rate q over --dataset-size N, batches
                                 capped at --max-batch B (tight accountant, certified upper bound);
                                 fixed-size: B of N without replacement each step (--adjacency replace-one,
                                 RDP bound of Wang, Balle, Kasiviswanathan, upper bound only);
                                 random-allocation (balls-in-bins): each example in --selected k (default 1)
                                 of the --steps-per-epoch t steps of each of --epochs E epochs, uniformly at
                                 random (tight accountant, certified bracket; k > 1: upper bound only)
  --adjacency add-remove|replace-one   epsilon, delta, calibrate (default add-remove; replace-one: tight accountant)
  --steps-per-epoch t            shuffle: batches per epoch (or --dataset-size N --batch-size B: t = floor(N/B),
                                 with --epochs E or --steps T; or --q: t = floor(1/q))
  --bands b                      epsilon, delta: BandMF / DP-FTRL with b bands, accounted as DP-SGD with
                                 ceil(T/b) steps at the same q and sigma (Choquette-Choo et al., arXiv 2306.08153)
  --json                         one JSON object instead of text

Unless --sampling / --adjacency say otherwise, every value is for add/remove-one adjacency and
Poisson sampling with rate q; sigma = noise std / clipping norm.
`sgm-rdp <command> --help` lists the flags a command takes; `sgm-rdp --version`.";

/// Which accountant answers (one type for every front end): exact RDP (the default, as
/// before), the tight PLD bracket, or both side by side.
pub(crate) use crate::engine::Accountant;

/// `--accountant` (and `batch`'s `accountant`) as typed.
fn parse_accountant(s: &str) -> Result<Accountant, String> {
    Accountant::parse(s)
        .ok_or_else(|| format!("--accountant must be 'rdp', 'pld' or 'both', got '{s}'"))
}

/// Parsed flags.
#[derive(Debug, Default)]
struct Flags {
    q: Option<f64>,
    sigma: Option<f64>,
    steps: Option<f64>,
    delta: Option<f64>,
    epsilon: Option<f64>,
    alpha: Option<f64>,
    orders: Option<Vec<f64>>,
    conversion: Option<Conversion>,
    target: Option<String>,
    accountant: Option<Accountant>,
    dataset: [Option<f64>; 3],
    /// Attack-risk target: TPR bound, its FPR, or the advantage bound.
    risk: [Option<f64>; 3],
    /// Examples per user (user-level privacy).
    group: Option<f64>,
    sampling: Sampling,
    adjacency: engine::Adjacency,
    steps_per_epoch: Option<f64>,
    max_batch: Option<f64>,
    selected: Option<f64>,
    bands: Option<f64>,
    json: bool,
    /// Every flag given, by canonical name (each at most once).
    given: Vec<&'static str>,
}

/// Canonical name of a flag (aliases share one), or None if unknown.
fn canonical(name: &str) -> Option<&'static str> {
    Some(match name {
        "--q" | "--sample_rate" => "q",
        "--sigma" | "--noise_multiplier" => "sigma",
        "--steps" => "steps",
        "--delta" => "delta",
        "--epsilon" => "epsilon",
        "--alpha" => "alpha",
        "--orders" => "orders",
        "--conversion" => "conversion",
        "--target" => "target",
        "--accountant" => "accountant",
        "--dataset-size" => "dataset-size",
        "--batch-size" => "batch-size",
        "--epochs" => "epochs",
        "--json" => "json",
        "--tpr" => "tpr",
        "--fpr" => "fpr",
        "--advantage" => "advantage",
        "--group-size" => "group-size",
        "--sampling" => "sampling",
        "--adjacency" => "adjacency",
        "--steps-per-epoch" => "steps-per-epoch",
        "--bands" => "bands",
        "--max-batch" => "max-batch",
        "--selected" => "selected",
        _ => return None,
    })
}

/// The batching / adjacency / user-level flags, taken by `epsilon`, `delta`, `calibrate`
/// and `profile` alike (answered by the one query in [`scheme`]).
const SCHEME_FLAGS: [&str; 6] = [
    "group-size",
    "sampling",
    "adjacency",
    "steps-per-epoch",
    "max-batch",
    "selected",
];

/// The flags each command uses; any other flag given is refused by name, so no flag is
/// silently ignored.
fn allowed(cmd: &str) -> Vec<&'static str> {
    let mut flags = own_flags(cmd).to_vec();
    if matches!(cmd, "epsilon" | "delta" | "calibrate" | "profile" | "gdp") {
        flags.extend(SCHEME_FLAGS);
    }
    flags
}

/// Each command's own flags (beyond [`SCHEME_FLAGS`]).
fn own_flags(cmd: &str) -> &'static [&'static str] {
    match cmd {
        "rdp" => &[
            "q",
            "sigma",
            "orders",
            "alpha",
            "steps",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        "epsilon" => &[
            "q",
            "sigma",
            "steps",
            "delta",
            "orders",
            "conversion",
            "accountant",
            "bands",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        "delta" => &[
            "q",
            "sigma",
            "steps",
            "epsilon",
            "orders",
            "conversion",
            "accountant",
            "bands",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        "calibrate" => &[
            "q",
            "sigma",
            "steps",
            "delta",
            "epsilon",
            "orders",
            "conversion",
            "accountant",
            "target",
            "tpr",
            "fpr",
            "advantage",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        "bounds" => &["q", "sigma", "orders", "alpha", "json"],
        "compare" | "libraries" => &[
            "q",
            "sigma",
            "steps",
            "delta",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        "gdp" => &[
            "q",
            "sigma",
            "steps",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        "profile" => &[
            "q",
            "sigma",
            "steps",
            "epsilon",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        _ => &[],
    }
}

fn num(flag: &str, v: &str) -> Result<f64, String> {
    v.trim()
        .parse::<f64>()
        .map_err(|_| format!("--{flag}: '{v}' is not a number"))
}

fn parse(args: &[String]) -> Result<Flags, String> {
    let mut f = Flags::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (a, None),
        };
        if !name.starts_with("--") {
            return Err(format!(
                "unexpected argument '{a}' (flags start with --; {USAGE})"
            ));
        }
        let Some(canon) = canonical(name) else {
            return Err(format!("unknown flag '{name}' ({USAGE})"));
        };
        // One rule for repeated flags, here and in the page's URL: refused, by name.
        if f.given.contains(&canon) {
            return Err(format!(
                "--{canon} given more than once (give each flag once)"
            ));
        }
        f.given.push(canon);
        if name == "--json" {
            if inline.is_some() {
                return Err(
                    "--json takes no value (give --json for JSON output, or leave it out)".into(),
                );
            }
            f.json = true;
            i += 1;
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| format!("{name} needs a value"))?
            }
        };
        let key = name.trim_start_matches("--");
        match name {
            "--q" | "--sample_rate" => f.q = Some(num(key, &value)?),
            "--sigma" | "--noise_multiplier" => f.sigma = Some(num(key, &value)?),
            "--steps" => f.steps = Some(num(key, &value)?),
            "--delta" => f.delta = Some(num(key, &value)?),
            "--epsilon" => f.epsilon = Some(num(key, &value)?),
            "--alpha" => f.alpha = Some(num(key, &value)?),
            "--orders" => {
                f.orders = Some(
                    value
                        .split(',')
                        .map(|s| num(key, s))
                        .collect::<Result<_, _>>()?,
                )
            }
            "--conversion" => {
                f.conversion = Some(value.parse().map_err(|e: engine::Error| e.to_string())?)
            }
            "--target" => f.target = Some(value),
            "--accountant" => f.accountant = Some(parse_accountant(&value)?),
            "--dataset-size" => f.dataset[0] = Some(num(key, &value)?),
            "--batch-size" => f.dataset[1] = Some(num(key, &value)?),
            "--epochs" => f.dataset[2] = Some(num(key, &value)?),
            "--tpr" => f.risk[0] = Some(num(key, &value)?),
            "--fpr" => f.risk[1] = Some(num(key, &value)?),
            "--advantage" => f.risk[2] = Some(num(key, &value)?),
            "--group-size" => f.group = Some(num(key, &value)?),
            "--sampling" => f.sampling = Sampling::parse(&value)?,
            "--adjacency" => f.adjacency = scheme::adjacency(&value)?,
            "--steps-per-epoch" => f.steps_per_epoch = Some(num(key, &value)?),
            "--bands" => f.bands = Some(num(key, &value)?),
            "--max-batch" => f.max_batch = Some(num(key, &value)?),
            "--selected" => f.selected = Some(num(key, &value)?),
            _ => return Err(format!("unknown flag '{name}' ({USAGE})")),
        }
        i += 1;
    }
    Ok(f)
}

/// An optimum's JSON fields: `name` (ε or δ), `alpha`, `grid_<name>`, `grid_alpha`, `at_edge`.
fn put_optimum(obj: &mut Map<String, Value>, name: &str, o: &Optimum) {
    for (k, v) in [
        (name.to_string(), json!(o.value)),
        ("alpha".into(), json!(o.alpha)),
        (format!("grid_{name}"), json!(o.grid_value)),
        ("grid_alpha".into(), json!(o.grid_alpha)),
        ("at_edge".into(), json!(o.at_edge)),
    ] {
        obj.insert(k, v);
    }
}

/// The PLD bracket in JSON: under `base` (accountant "pld") or `base_pld` ("both"),
/// its lower end under the same key + `_lower` (the CLI's `--json` and `batch` alike).
fn put_bracket(obj: &mut Map<String, Value>, acct: Accountant, base: &str, upper: f64, lower: f64) {
    let key = if acct == Accountant::Pld {
        base.to_string()
    } else {
        format!("{base}_pld")
    };
    obj.insert(format!("{key}_lower"), json!(lower));
    obj.insert(key, json!(upper));
}

/// A PLD answer, or — with accountant "both" only — why it is unavailable (the RDP
/// answer beside it still stands); with accountant "pld" the error is the answer.
fn pld_or_unavailable<T>(
    acct: Accountant,
    r: Result<T, engine::Error>,
) -> Result<Result<T, String>, String> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(x) if acct == Accountant::Both => Ok(Err(x.to_string())),
        Err(x) => Err(x.to_string()),
    }
}

/// "both" without a PLD answer: `<name>_pld: null` and `pld_error` in JSON, one line of
/// words in text.
fn unavailable(obj: &mut Map<String, Value>, out: &mut String, json: bool, name: &str, why: &str) {
    if json {
        obj.insert(format!("{name}_pld"), Value::Null);
        obj.insert("pld_error".into(), json!(why));
    } else {
        *out += &format!("{name} (PLD): unavailable: {why}\n");
    }
}

fn need(v: Option<f64>, name: &str) -> Result<f64, String> {
    v.ok_or_else(|| format!("missing --{name}"))
}

impl Flags {
    fn sgm(&self) -> Result<Sgm, String> {
        Sgm::new(need(self.q, "q")?, need(self.sigma, "sigma")?).map_err(|e| e.to_string())
    }
    fn steps(&self) -> Result<u64, String> {
        engine::params::steps_from_f64(need(self.steps, "steps")?).map_err(|e| e.to_string())
    }
    fn orders(&self) -> Vec<f64> {
        self.orders.clone().unwrap_or_else(engine::default_orders)
    }
    fn conv(&self) -> Conversion {
        self.conversion.unwrap_or(Conversion::Improved)
    }
}

/// Run one command; Ok(stdout text) or Err(one-line reason).
pub fn run(args: &[String]) -> Result<String, String> {
    let (cmd, rest) = args.split_first().ok_or_else(|| USAGE.to_string())?;
    // Conventions: --help / -h / help, --version / -V, and `<command> --help`.
    match cmd.as_str() {
        "--help" | "-h" | "help" => return Ok(HELP.to_string()),
        "--version" | "-V" => return Ok(format!("sgm-rdp {}", env!("CARGO_PKG_VERSION"))),
        _ => {}
    }
    if rest.iter().any(|a| a == "--help" || a == "-h") {
        let flags = allowed(cmd);
        if flags.is_empty() && cmd != "batch" {
            return Err(format!("unknown command '{cmd}' ({USAGE})"));
        }
        return Ok(if cmd == "batch" {
            "usage: sgm-rdp batch < lines.jsonl   (keys: q, sigma, alpha | steps, delta | epsilon, accountant)".to_string()
        } else {
            format!(
                "usage: sgm-rdp {cmd} {}",
                flags
                    .iter()
                    .map(|f| format!("[--{f}]"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        });
    }
    let mut f = parse(rest)?;
    let flags = allowed(cmd);
    if !flags.is_empty() {
        if let Some(extra) = f.given.iter().find(|g| !flags.contains(g)) {
            return Err(format!("--{extra} does not apply to {cmd}"));
        }
    }
    // Batching schemes, replace-one and user-level privacy: one query, shared with `batch`.
    let query = Query {
        q: f.q,
        sigma: f.sigma,
        steps: f.steps,
        dataset: f.dataset,
        delta: f.delta,
        epsilon: f.epsilon,
        accountant: f.accountant,
        group: f.group,
        sampling: f.sampling,
        adjacency: f.adjacency,
        steps_per_epoch: f.steps_per_epoch,
        max_batch: f.max_batch,
        selected: f.selected,
        orders: f.orders.clone(),
        cli: true,
    };
    if !query.is_plain() {
        if f.bands.is_some() {
            return Err("--bands applies to Poisson sampling under add/remove adjacency".into());
        }
        for name in ["orders", "conversion"] {
            let rdp_route = f.sampling == Sampling::FixedSize && name == "orders";
            if f.given.contains(&name) && !rdp_route {
                return Err(format!(
                    "--{name} is not available for this query (its accountant does not use it)"
                ));
            }
        }
        let a = if cmd == "calibrate" {
            query.calibrate(f.target.as_deref())?
        } else if cmd == "gdp" {
            let g = query.gdp()?;
            if !f.json {
                return Ok(scheme::gdp_text_of(&g));
            }
            g
        } else if cmd == "profile" {
            let p = query.profile()?;
            if !f.json {
                return Ok(scheme::profile_text(&p));
            }
            p
        } else {
            query.answer()?
        };
        return Ok(if f.json {
            Value::Object(a).to_string()
        } else {
            scheme::text(&a)
        });
    }
    // Users' terms: dataset size N, batch size B, epochs E → q = B/N, T = ⌈E·N/B⌉.
    if let [Some(n), Some(b), Some(e)] = f.dataset {
        if f.q.is_some() || f.steps.is_some() {
            return Err(
                "give either --q/--steps or --dataset-size/--batch-size/--epochs, not both".into(),
            );
        }
        let (q, t) = engine::params::from_dataset(n, b, e).map_err(|e| e.to_string())?;
        f.q = Some(q);
        f.steps = Some(t as f64);
    } else if f.dataset.iter().any(Option::is_some) {
        return Err("--dataset-size, --batch-size and --epochs go together".into());
    }
    // The orders and the conversion belong to the RDP accountant: with the tight one alone
    // they would be ignored, so they are refused by name.
    if f.accountant == Some(Accountant::Pld) {
        for name in ["orders", "conversion"] {
            if f.given.contains(&name) {
                return Err(format!(
                    "--{name} applies to the RDP accountant; with --accountant pld it would be ignored (use both)"
                ));
            }
        }
    }
    // BandMF / DP-FTRL with b bands: DP-SGD with ⌈T/b⌉ steps at the same q and σ.
    let bands = match f.bands {
        Some(b) => {
            let b = bands_of(b)?;
            let t = f.steps()?;
            f.steps = Some(t.div_ceil(b) as f64);
            Some((b, t))
        }
        None => None,
    };
    let out = command(&f, cmd)?;
    Ok(match bands {
        None => out,
        Some((b, t)) => with_bands(out, f.json, b, t, f.steps()?),
    })
}

/// A band count: a whole number ≥ 1.
fn bands_of(b: f64) -> Result<u64, String> {
    if b.is_finite() && b >= 1.0 && b.fract() == 0.0 && b <= engine::MAX_STEPS as f64 {
        Ok(b as u64)
    } else {
        Err(format!(
            "--bands must be a whole number >= 1, got {}",
            engine::error::show(b)
        ))
    }
}

/// The answer for the accounted ⌈T/b⌉ steps, saying so: JSON gets `bands`,
/// `training_steps` (T) beside `steps` (the accounted ⌈T/b⌉); text gets a line.
fn with_bands(out: String, json: bool, b: u64, training: u64, accounted: u64) -> String {
    if json {
        if let Ok(Value::Object(mut o)) = serde_json::from_str::<Value>(&out) {
            o.insert("bands".into(), json!(b));
            o.insert("training_steps".into(), json!(training));
            o.insert("steps".into(), json!(accounted));
            return Value::Object(o).to_string();
        }
        out
    } else {
        format!(
            "{out}BandMF / DP-FTRL with {b} bands: {training} training steps accounted as {accounted} steps of DP-SGD at the same q and sigma (Choquette-Choo et al., arXiv 2306.08153)\n"
        )
    }
}

/// One command on parsed flags (Poisson sampling, add/remove, one example per user).
fn command(f: &Flags, cmd: &str) -> Result<String, String> {
    let e = |e: engine::Error| e.to_string();
    match cmd {
        "rdp" => {
            let m = f.sgm()?;
            let orders = match f.alpha {
                Some(a) => vec![a],
                None => f.orders(),
            };
            let vals = engine::rdp::rdp_orders(&m, &orders).map_err(e)?;
            let steps = f.steps.map(|_| f.steps()).transpose()?.unwrap_or(1);
            if f.json {
                let rows: Vec<Value> = orders
                    .iter()
                    .zip(&vals)
                    .map(|(a, r)| json!({"alpha": a, "rdp": r, "rdp_total": r * steps as f64}))
                    .collect();
                Ok(
                    json!({"q": m.q(), "sigma": m.sigma(), "steps": steps, "orders": rows})
                        .to_string(),
                )
            } else {
                let mut s = format!(
                    "# q = {}, sigma = {}, steps = {steps}\n# alpha  rdp_per_step  rdp_total\n",
                    engine::error::show(m.q()),
                    engine::error::show(m.sigma())
                );
                for (a, r) in orders.iter().zip(&vals) {
                    s += &format!("{a}\t{r:.12e}\t{:.12e}\n", r * steps as f64);
                }
                Ok(s)
            }
        }
        "epsilon" => {
            let run = Run::new(f.sgm()?, f.steps()?, f.orders()).map_err(e)?;
            let d = need(f.delta, "delta")?;
            let acct = f.accountant.unwrap_or(Accountant::Rdp);
            let mut out = String::new();
            let mut obj = Map::new();
            for (k, v) in [
                ("q", json!(run.sgm().q())),
                ("sigma", json!(run.sgm().sigma())),
                ("steps", json!(run.steps())),
                ("delta", json!(d)),
            ] {
                obj.insert(k.into(), v);
            }
            if acct != Accountant::Pld {
                let o = run.epsilon(d, f.conv()).map_err(e)?;
                if f.json {
                    obj.insert("conversion".into(), json!(f.conv()));
                    put_optimum(&mut obj, "epsilon", &o);
                } else {
                    out += &format!(
                        "epsilon = {:.6} at alpha = {:.4} (continuous)\nepsilon = {:.6} at alpha = {} (best of {} orders){}\n",
                        o.value, o.alpha, o.grid_value, o.grid_alpha, run.orders().len(),
                        if o.at_edge { "\nwarning: the optimal order is at the edge of the orders; widen --orders" } else { "" }
                    );
                }
            }
            if acct != Accountant::Rdp {
                match pld_or_unavailable(acct, engine::pld::epsilon(run.sgm(), run.steps(), d))? {
                    Ok(p) if f.json => {
                        put_bracket(&mut obj, acct, "epsilon", p.epsilon.upper, p.epsilon.lower);
                        obj.insert("pld_grid".into(), json!(p.grid));
                    }
                    Ok(p) => {
                        out += &format!(
                            "epsilon = {:.6} (PLD, certified upper bound; bracket [{:.6}, {:.6}], worse direction: {})\n",
                            p.epsilon.upper, p.epsilon.lower, p.epsilon.upper, p.grid.worst
                        );
                    }
                    Err(why) => unavailable(&mut obj, &mut out, f.json, "epsilon", &why),
                }
            }
            Ok(if f.json {
                Value::Object(obj).to_string()
            } else {
                out
            })
        }
        "delta" => {
            let run = Run::new(f.sgm()?, f.steps()?, f.orders()).map_err(e)?;
            let eps = need(f.epsilon, "epsilon")?;
            let acct = f.accountant.unwrap_or(Accountant::Rdp);
            let mut out = String::new();
            let mut obj = Map::new();
            obj.insert("epsilon".into(), json!(eps));
            if acct != Accountant::Pld {
                let o = run.delta(eps, f.conv()).map_err(e)?;
                if f.json {
                    put_optimum(&mut obj, "delta", &o);
                } else {
                    out += &format!("delta = {:.6e} at alpha = {:.4}\n", o.value, o.alpha);
                }
            }
            if acct != Accountant::Rdp {
                match pld_or_unavailable(acct, engine::pld::delta(run.sgm(), run.steps(), eps))? {
                    Ok(p) if f.json => {
                        put_bracket(&mut obj, acct, "delta", p.delta.upper, p.delta.lower);
                    }
                    Ok(p) => {
                        out += &format!(
                            "delta = {:.6e} (PLD, certified upper bound; bracket [{:.6e}, {:.6e}])\n",
                            p.delta.upper, p.delta.lower, p.delta.upper
                        );
                    }
                    Err(why) => unavailable(&mut obj, &mut out, f.json, "delta", &why),
                }
            }
            Ok(if f.json {
                Value::Object(obj).to_string()
            } else {
                out
            })
        }
        "profile" => {
            let (m, t) = (f.sgm()?, f.steps()?);
            let grid: Vec<f64> = match &f.orders {
                Some(_) => {
                    return Err(
                        "profile takes --epsilon (the largest ε shown), not --orders".into(),
                    )
                }
                None => {
                    let top = f.epsilon.unwrap_or(10.0);
                    if !(top.is_finite() && top > 0.0 && top <= 1e4) {
                        return Err(format!("--epsilon (the profile's largest epsilon) must be in (0, 1e4], got {top}"));
                    }
                    (0..=100).map(|i| top * i as f64 / 100.0).collect()
                }
            };
            let pts = engine::pld::profile(m, t, &grid).map_err(e)?;
            // The attack bound from its own profile, whatever range is displayed.
            let risk = engine::pld::attack_profile(m, t).map_err(e)?;
            let fprs = [1e-3, 1e-2, 0.1];
            let tprs: Vec<f64> = fprs
                .iter()
                .map(|&x| engine::pld::attack_tpr(&risk, x))
                .collect::<Result<_, _>>()
                .map_err(e)?;
            if f.json {
                Ok(json!({"q": m.q(), "sigma": m.sigma(), "steps": t, "profile": pts,
                    "attack": fprs.iter().zip(&tprs).map(|(a, b)| json!({"fpr": a, "tpr_max": b})).collect::<Vec<_>>()}).to_string())
            } else {
                let mut s =
                    String::from("# epsilon  delta_upper  delta_lower (PLD privacy profile)\n");
                for p in &pts {
                    s += &format!(
                        "{:.4}\t{:.6e}\t{:.6e}\n",
                        p.epsilon, p.delta.upper, p.delta.lower
                    );
                }
                for (a, b) in fprs.iter().zip(&tprs) {
                    s += &format!("# membership inference: at false-positive rate {a}, true-positive rate <= {b:.6}\n");
                }
                Ok(s)
            }
        }
        "gdp" => gdp(f),
        "calibrate" if f.risk.iter().any(Option::is_some) => calibrate_risk(f),
        "calibrate" => {
            let eps = need(f.epsilon, "epsilon")?;
            let d = need(f.delta, "delta")?;
            let target =
                f.target
                    .as_deref()
                    .unwrap_or(if f.sigma.is_some() { "steps" } else { "sigma" });
            // Every flag given is used: the target's own flag is what it finds.
            match target {
                "sigma" if f.sigma.is_some() => {
                    return Err(
                        "--sigma is what calibrate --target sigma finds; leave it out".into(),
                    )
                }
                "steps" if f.dataset.iter().any(Option::is_some) => {
                    return Err(
                        "calibrate --target steps takes --q and --sigma, not dataset terms".into(),
                    )
                }
                "steps" if f.steps.is_some() => {
                    return Err(
                        "--steps is what calibrate --target steps finds; leave it out".into(),
                    )
                }
                _ => {}
            }
            if f.accountant == Some(Accountant::Pld) {
                return match target {
                    "sigma" => {
                        let (sig, a) =
                            engine::pld::calibrate_sigma(eps, d, need(f.q, "q")?, f.steps()?)
                                .map_err(e)?;
                        Ok(if f.json {
                            json!({"sigma": sig, "epsilon": a.epsilon.upper, "epsilon_lower": a.epsilon.lower, "accountant": "pld"}).to_string()
                        } else {
                            format!("sigma = {sig:.7} gives epsilon = {:.6} (PLD, certified upper bound; bracket [{:.6}, {:.6}])\n",
                                a.epsilon.upper, a.epsilon.lower, a.epsilon.upper)
                        })
                    }
                    "steps" => {
                        let (t, a) = engine::pld::calibrate_steps(eps, d, f.sgm()?).map_err(e)?;
                        Ok(if f.json {
                            json!({"steps": t, "epsilon": a.epsilon.upper, "epsilon_lower": a.epsilon.lower, "accountant": "pld"}).to_string()
                        } else {
                            format!("steps = {t} gives epsilon = {:.6} (PLD, certified upper bound; bracket [{:.6}, {:.6}])\n",
                                a.epsilon.upper, a.epsilon.lower, a.epsilon.upper)
                        })
                    }
                    other => Err(format!(
                        "--target must be 'sigma' or 'steps', got '{other}'"
                    )),
                };
            }
            if f.accountant == Some(Accountant::Both) {
                return Err(
                    "calibrate takes --accountant rdp or pld (one target, one accountant)".into(),
                );
            }
            match target {
                "sigma" => {
                    let c = calibrate::sigma(
                        eps,
                        d,
                        need(f.q, "q")?,
                        f.steps()?,
                        &f.orders(),
                        f.conv(),
                    )
                    .map_err(e)?;
                    if f.json {
                        Ok(serde_json::to_string(&c).map_err(|x| x.to_string())?)
                    } else {
                        Ok(format!(
                            "sigma = {:.7} gives epsilon = {:.6} (alpha = {:.4}){}\n",
                            c.sigma,
                            c.epsilon,
                            c.alpha,
                            if c.at_lower_limit {
                                "\nnote: the smallest sigma searched already meets the target (a smaller sigma may too)"
                            } else {
                                ""
                            }
                        ))
                    }
                }
                "steps" => {
                    let c = calibrate::steps(eps, d, f.sgm()?, &f.orders(), f.conv()).map_err(e)?;
                    if f.json {
                        Ok(serde_json::to_string(&c).map_err(|x| x.to_string())?)
                    } else {
                        Ok(format!(
                            "steps = {} gives epsilon = {:.6} (alpha = {:.4}){}\n",
                            c.steps,
                            c.epsilon,
                            c.alpha,
                            if c.at_upper_limit {
                                "\nnote: the largest number of steps supported still meets the target"
                            } else {
                                ""
                            }
                        ))
                    }
                }
                other => Err(format!(
                    "--target must be 'sigma' or 'steps', got '{other}'"
                )),
            }
        }
        "bounds" => {
            let m = f.sgm()?;
            let orders = match f.alpha {
                Some(a) => vec![a],
                None => f
                    .orders
                    .clone()
                    .unwrap_or_else(|| vec![2.0, 8.0, 32.0, 128.0]),
            };
            let mut rows = Vec::new();
            for &a in &orders {
                let exact = engine::rdp::rdp(&m, a).map_err(e)?;
                let bs = bounds::all(&m, a).map_err(e)?;
                rows.push((a, exact, bs));
            }
            let mo = bounds::max_order(&m);
            if f.json {
                let list: Vec<Value> = rows
                    .iter()
                    .map(|(a, ex, bs)| json!({"alpha": a, "exact": ex, "bounds": bs}))
                    .collect();
                Ok(
                    json!({"q": m.q(), "sigma": m.sigma(), "orders": list, "max_alpha": mo})
                        .to_string(),
                )
            } else {
                let mut s = String::new();
                for (a, ex, bs) in rows {
                    s += &format!("alpha = {a}: exact rdp = {ex:.6e}\n");
                    for b in bs {
                        s += &format!(
                            "  {:<10} {:.6e}  {}\n",
                            b.name,
                            b.value,
                            b.fails.as_deref().unwrap_or("holds")
                        );
                    }
                }
                s += &format!(
                    "largest alpha (Figure 1, left): cond (4) {:.4}, cond (5) {:.4}, min {:.4}, exact {:.4}\n",
                    mo.cond4, mo.cond5, mo.min, mo.exact
                );
                Ok(s)
            }
        }
        "libraries" => {
            let d = need(f.delta, "delta")?;
            let (sgm, steps) = (f.sgm()?, f.steps()?);
            let i = crate::render::Inputs {
                q: sgm.q(),
                sigma: sgm.sigma(),
                steps,
                delta: d,
                ..crate::render::Inputs::mnist()
            };
            let opacus = match f.dataset {
                [Some(n), Some(b), Some(ep)] => crate::render::library::opacus_run(n, b, ep),
                _ => None,
            };
            let (oq, ot) = opacus.unwrap_or((i.q, steps));
            let words = |r: Result<f64, engine::Error>| r.map_err(|x| x.to_string());
            let views = crate::render::library::Views {
                tight: Some(
                    engine::pld::epsilon(sgm, steps, d)
                        .map(|a| (a.epsilon.upper, a.epsilon.lower))
                        .map_err(|x| x.to_string()),
                ),
                opacus_prv: Some(words(
                    Sgm::new(oq, i.sigma).and_then(|m| engine::pld::opacus_prv_epsilon(m, ot, d)),
                )),
                dp_accounting_pld: Some(words(engine::pld::dp_accounting_epsilon(sgm, steps, d))),
            };
            let rows = crate::render::library::rows(&i, opacus, &views).map_err(e)?;
            if f.json {
                let rows: Vec<Value> = rows
                    .iter()
                    .map(|r| json!({"tool": r.tool, "epsilon": r.epsilon, "note": r.note}))
                    .collect();
                Ok(
                    json!({"q": i.q, "sigma": i.sigma, "steps": steps, "delta": d,
                    "opacus_q": oq, "opacus_steps": ot, "rows": rows})
                    .to_string(),
                )
            } else {
                let mut s = String::new();
                for r in rows {
                    let v = r
                        .epsilon
                        .map(|x| format!("{x:.4}"))
                        .unwrap_or_else(|| "n/a".into());
                    s += &format!("{:<48} {:>10}  {}\n", r.tool, v, r.note);
                }
                s += "Poisson sampling with rate q, add/remove adjacency; sigma = noise std / clipping norm\n";
                Ok(s)
            }
        }
        "compare" => {
            let d = need(f.delta, "delta")?;
            let routes = engine::compare::compare(f.sgm()?, f.steps()?, d).map_err(e)?;
            if f.json {
                Ok(json!({"q": f.q, "sigma": f.sigma, "steps": f.steps()?, "delta": d, "routes": routes}).to_string())
            } else {
                let mut s = String::new();
                for r in routes {
                    let v = r
                        .epsilon
                        .map(|x| format!("{x:.6}"))
                        .unwrap_or_else(|| "n/a".into());
                    s += &format!("{:<62} {:>12}  {}\n", r.name, v, r.note.unwrap_or_default());
                }
                Ok(s)
            }
        }
        other => Err(format!("unknown command '{other}' ({USAGE})")),
    }
}

/// A group size: a whole number in [1, 256].
fn group_size(k: f64) -> Result<u32, String> {
    if k.fract() == 0.0 && (1.0..=256.0).contains(&k) {
        Ok(k as u32)
    } else {
        Err(format!(
            "--group-size must be a whole number in [1, 256], got {}",
            engine::error::show(k)
        ))
    }
}

fn fmt_val(name: &str, v: f64) -> String {
    if name == "epsilon" {
        format!("{v:.6}")
    } else {
        format!("{v:.6e}")
    }
}

/// The JSON fields of a μ-GDP answer.
pub(crate) fn gdp_fields(g: &engine::pld::fdp::GdpAnswer) -> Vec<(String, Value)> {
    [
        ("mu", json!(g.mu.upper)),
        ("mu_lower", json!(g.mu.lower)),
        ("regret", json!(g.regret)),
        ("fpr_floor", json!(g.fpr_floor)),
        ("advantage", json!(g.advantage.upper)),
        ("advantage_lower", json!(g.advantage.lower)),
        (
            "tradeoff",
            json!(g
                .tradeoff
                .iter()
                .map(|(a, b)| json!({"fpr": a, "fnr_min": b, "tpr_max": 1.0 - b}))
                .collect::<Vec<_>>()),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// `gdp`: μ-GDP with its bracket and fit, the advantage, and the trade-off values.
fn gdp(f: &Flags) -> Result<String, String> {
    let (m, t) = (f.sgm()?, f.steps()?);
    let g = engine::pld::fdp::gdp(m, t).map_err(|e| e.to_string())?;
    if f.json {
        let mut o = serde_json::Map::new();
        o.insert("q".into(), json!(m.q()));
        o.insert("sigma".into(), json!(m.sigma()));
        o.insert("steps".into(), json!(t));
        o.extend(gdp_fields(&g));
        return Ok(Value::Object(o).to_string());
    }
    Ok(gdp_text(&g, "add/remove-one adjacency, Poisson sampling"))
}

/// The text of a μ-GDP answer; `run` names the adjacency and the sampling.
pub(crate) fn gdp_text(g: &engine::pld::fdp::GdpAnswer, run: &str) -> String {
    let mut s = format!(
        "mu = {:.6} (mu-GDP, certified for tests with FPR and FNR >= {:e}; bracket [{:.6}, {:.6}]); fit: regret {:.1e}\n",
        g.mu.upper, g.fpr_floor, g.mu.lower, g.mu.upper, g.regret
    );
    s += &format!(
        "advantage (TPR - FPR) <= {:.6} (certified; bracket [{:.6}, {:.6}])\n# fpr  tpr_max (certified)\n",
        g.advantage.upper, g.advantage.lower, g.advantage.upper
    );
    for (a, b) in &g.tradeoff {
        s += &format!("{a:.6e}\t{:.6e}\n", 1.0 - b);
    }
    s += &format!("# {run}; sigma = noise std / clipping norm\n");
    s
}

/// `calibrate --tpr A --fpr B` / `--advantage A`: the smallest σ (or, with --sigma or
/// --target steps, the most steps) whose certified attack bound meets the target.
fn calibrate_risk(f: &Flags) -> Result<String, String> {
    use engine::pld::fdp::{self, Risk};
    let (risk, target, name) = match f.risk {
        [Some(a), Some(b), None] => (Risk::tpr(b).map_err(|e| e.to_string())?, a, "tpr"),
        [None, None, Some(a)] => (Risk::Advantage, a, "advantage"),
        [_, _, Some(_)] => return Err("give --advantage, or --tpr with --fpr, not both".into()),
        _ => return Err("--tpr and --fpr go together".into()),
    };
    for flag in ["epsilon", "delta", "orders", "conversion"] {
        if f.given.contains(&flag) {
            return Err(format!("--{flag} does not apply to an attack-risk target"));
        }
    }
    if matches!(f.accountant, Some(a) if a != Accountant::Pld) {
        return Err(
            "an attack-risk target is calibrated with the tight accountant (--accountant pld)"
                .into(),
        );
    }
    let target_of =
        f.target
            .as_deref()
            .unwrap_or(if f.sigma.is_some() { "steps" } else { "sigma" });
    let e = |e: engine::Error| e.to_string();
    let (key, value, bound) = match target_of {
        "sigma" if f.sigma.is_some() => {
            return Err("--sigma is what calibrate --target sigma finds; leave it out".into())
        }
        "sigma" => {
            let (s, b) =
                fdp::calibrate_sigma_risk(risk, target, need(f.q, "q")?, f.steps()?).map_err(e)?;
            ("sigma", json!(s), b)
        }
        "steps" if f.steps.is_some() => {
            return Err("--steps is what calibrate --target steps finds; leave it out".into())
        }
        "steps" => {
            let (t, b) = fdp::calibrate_steps_risk(risk, target, f.sgm()?).map_err(e)?;
            ("steps", json!(t), b)
        }
        other => {
            return Err(format!(
                "--target must be 'sigma' or 'steps', got '{other}'"
            ))
        }
    };
    let what = match risk {
        Risk::Tpr { fpr } => format!("true-positive rate at false-positive rate {fpr}"),
        Risk::Advantage => "advantage (TPR - FPR)".to_string(),
    };
    Ok(if f.json {
        let mut o = json!({key: value, name: bound, "target": target, "accountant": "pld"});
        if let Risk::Tpr { fpr } = risk {
            o["fpr"] = json!(fpr);
        }
        o.to_string()
    } else {
        let shown = match value.as_f64() {
            Some(v) if key == "sigma" => format!("{v:.7}"),
            _ => value.to_string(),
        };
        format!("{key} = {shown} gives {what} <= {bound:.6} (certified, target {target}; tight accountant, add/remove-one, Poisson sampling)\n")
    })
}

/// One line of `sgm-rdp batch`: the input's fields plus results, or {"error": …}.
pub fn batch_line(line: &str) -> String {
    match batch_value(line) {
        Ok(v) => v.to_string(),
        Err(msg) => json!({ "error": msg }).to_string(),
    }
}

fn field(obj: &Map<String, Value>, k: &str) -> Result<Option<f64>, String> {
    match obj.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_f64()
            .map(Some)
            .ok_or_else(|| format!("{k} is not a number")),
        Some(other) => Err(format!("{k} must be a number, got {other}")),
    }
}

/// The keys a batch line may carry; any other key is an error naming it (an unknown
/// key used to be echoed beside a result computed without it).
const BATCH_KEYS: [&str; 22] = [
    "command",
    "tpr",
    "fpr",
    "advantage",
    "target",
    "q",
    "sigma",
    "alpha",
    "steps",
    "delta",
    "epsilon",
    "accountant",
    "group_size",
    "sampling",
    "adjacency",
    "steps_per_epoch",
    "dataset_size",
    "batch_size",
    "epochs",
    "bands",
    "max_batch",
    "selected",
];

/// A `"command": "calibrate"` line: its keys become the command line's flags (`dataset_size`
/// → `--dataset-size`), so the answer and the refusals are `calibrate --json`'s.
fn calibrate_line(obj: &Map<String, Value>) -> Result<Value, String> {
    let mut words = vec!["calibrate".to_string()];
    for (k, v) in obj {
        if k == "command" {
            continue;
        }
        let value = match v {
            Value::Number(n) => n.to_string(),
            Value::String(t) => t.clone(),
            _ => return Err(format!("{k} must be a number or a string, got {v}")),
        };
        words.push(format!("--{}", k.replace('_', "-")));
        words.push(value);
    }
    words.push("--json".into());
    let out = run(&words).map_err(|m| {
        // Name the keys as the line wrote them.
        BATCH_KEYS.iter().fold(m, |m, k| {
            m.replace(&format!("--{}", k.replace('_', "-")), k)
        })
    })?;
    let Value::Object(mut answer) =
        serde_json::from_str(&out).map_err(|e| format!("calibrate: {e}"))?
    else {
        return Err("calibrate gave no answer".into());
    };
    for (k, v) in obj {
        answer.entry(k.clone()).or_insert(v.clone());
    }
    Ok(Value::Object(answer))
}

/// A string key of a batch line (None when absent or null).
fn text_field<'a>(obj: &'a Map<String, Value>, k: &str) -> Result<Option<&'a str>, String> {
    match obj.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("{k} must be a string, got {other}")),
    }
}

pub(crate) fn batch_value(line: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(line).map_err(|x| format!("invalid JSON: {x}"))?;
    let Value::Object(mut obj) = v else {
        return Err("each line must be a JSON object".into());
    };
    let unknown: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !BATCH_KEYS.contains(k))
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "unknown key(s) {} (allowed: {})",
            unknown.join(", "),
            BATCH_KEYS.join(", ")
        ));
    }
    let e = |e: engine::Error| e.to_string();
    let acct = match obj.get("accountant") {
        None | Some(Value::Null) => Accountant::Rdp,
        Some(Value::String(s)) => parse_accountant(s)?,
        Some(other) => {
            return Err(format!(
                "accountant must be \"rdp\", \"pld\" or \"both\", got {other}"
            ))
        }
    };
    let query = Query {
        q: field(&obj, "q")?,
        sigma: field(&obj, "sigma")?,
        steps: field(&obj, "steps")?,
        dataset: [
            field(&obj, "dataset_size")?,
            field(&obj, "batch_size")?,
            field(&obj, "epochs")?,
        ],
        delta: field(&obj, "delta")?,
        epsilon: field(&obj, "epsilon")?,
        accountant: obj.contains_key("accountant").then_some(acct),
        group: field(&obj, "group_size")?,
        sampling: match text_field(&obj, "sampling")? {
            Some(s) => Sampling::parse(s)?,
            None => Sampling::Poisson,
        },
        adjacency: match text_field(&obj, "adjacency")? {
            Some(s) => scheme::adjacency(s)?,
            None => engine::Adjacency::AddRemove,
        },
        steps_per_epoch: field(&obj, "steps_per_epoch")?,
        max_batch: field(&obj, "max_batch")?,
        selected: field(&obj, "selected")?,
        orders: None,
        cli: false,
    };
    // A `gdp` line: μ-GDP with its fit, as the command line's `gdp --json`.
    let gdp_line = match text_field(&obj, "command")? {
        None | Some("epsilon" | "delta") => false,
        Some("gdp") => {
            for k in ["delta", "epsilon", "alpha", "accountant", "bands"] {
                if obj.contains_key(k) {
                    return Err(format!("{k} does not apply to a gdp line"));
                }
            }
            true
        }
        // A calibrate line: the command line's `calibrate --json` with the line's keys as
        // its flags (ε/δ targets, or an attack-risk target: tpr with fpr, or advantage).
        Some("calibrate") => return calibrate_line(&obj),
        Some(other) => {
            return Err(format!(
                "command must be \"gdp\" or \"calibrate\" (epsilon and delta lines need none), got \"{other}\""
            ))
        }
    };
    for k in ["tpr", "fpr", "advantage", "target"] {
        if obj.contains_key(k) {
            return Err(format!(
                "{k} applies to calibrate lines (\"command\": \"calibrate\")"
            ));
        }
    }
    if gdp_line && !query.is_plain() {
        for (k, v) in query.gdp()? {
            obj.entry(k).or_insert(v);
        }
        return Ok(Value::Object(obj));
    }
    if !query.is_plain() {
        if field(&obj, "alpha")?.is_some() || obj.contains_key("bands") {
            return Err(
                "alpha and bands apply to Poisson sampling under add/remove adjacency".into(),
            );
        }
        for (k, v) in query.answer()? {
            obj.entry(k).or_insert(v);
        }
        return Ok(Value::Object(obj));
    }
    // Users' terms (Poisson): q = B/N, T = ⌈E·N/B⌉.
    match query.dataset {
        [None, None, None] => {}
        [Some(n), Some(b), Some(ep)] if query.q.is_none() && query.steps.is_none() => {
            let (q, t) = engine::params::from_dataset(n, b, ep).map_err(e)?;
            obj.insert("q".into(), json!(q));
            obj.insert("steps".into(), json!(t));
        }
        _ => {
            return Err(
                "give either q and steps, or dataset_size, batch_size and epochs (all three)"
                    .into(),
            )
        }
    }
    let q = field(&obj, "q")?.ok_or("missing q")?;
    let sigma = field(&obj, "sigma")?.ok_or("missing sigma")?;
    let m = Sgm::new(q, sigma).map_err(e)?;
    if gdp_line {
        let t = field(&obj, "steps")?.ok_or("missing steps")?;
        let t = engine::params::steps_from_f64(t).map_err(e)?;
        obj.insert("steps".into(), json!(t));
        obj.extend(gdp_fields(&engine::pld::fdp::gdp(m, t).map_err(e)?));
        return Ok(Value::Object(obj));
    }
    if let Some(alpha) = field(&obj, "alpha")? {
        if obj.contains_key("accountant") || obj.contains_key("bands") {
            return Err(
                "accountant and bands apply to steps/delta lines, not to alpha lines".into(),
            );
        }
        for k in ["steps", "delta", "epsilon"] {
            if obj.contains_key(k) {
                return Err(format!("an alpha line takes q, sigma, alpha only, not {k}"));
            }
        }
        let log_a = engine::rdp::log_a(&m, alpha).map_err(e)?;
        let rdp = engine::rdp::rdp(&m, alpha).map_err(e)?;
        obj.insert("rdp".into(), json!(rdp));
        obj.insert("log_a".into(), json!(log_a));
        return Ok(Value::Object(obj));
    }
    let steps = field(&obj, "steps")?.ok_or("need alpha, or steps and delta (or epsilon)")?;
    let mut steps = engine::params::steps_from_f64(steps).map_err(e)?;
    // BandMF / DP-FTRL with b bands: ⌈T/b⌉ steps (the answer says so: `training_steps`).
    if let Some(b) = field(&obj, "bands")? {
        let b = bands_of(b).map_err(|m| m.replace("--bands", "bands"))?;
        obj.insert("training_steps".into(), json!(steps));
        steps = steps.div_ceil(b);
        obj.insert("steps".into(), json!(steps));
    }
    // One shape for both directions: the RDP answer under `out`, the PLD bracket under
    // `out` (accountant "pld") or `out_pld` (accountant "both"), each with `_lower`.
    let given = (field(&obj, "delta")?, field(&obj, "epsilon")?);
    type Pld = Option<Result<(f64, f64), String>>;
    let mut put = |out: &str, rdp: Option<(f64, f64)>, pld: Pld| {
        if let Some((v, a)) = rdp {
            obj.insert(out.into(), json!(v));
            obj.insert("alpha".into(), json!(a));
        }
        match pld {
            Some(Ok((u, l))) => put_bracket(&mut obj, acct, out, u, l),
            Some(Err(why)) => unavailable(&mut obj, &mut String::new(), true, out, &why),
            None => {}
        }
    };
    let run = || Run::with_default_orders(m, steps).map_err(e);
    match given {
        (Some(delta), None) => {
            let rdp = (acct != Accountant::Pld)
                .then(|| run()?.epsilon(delta, Conversion::Improved).map_err(e))
                .transpose()?
                .map(|o| (o.value, o.alpha));
            let pld = (acct != Accountant::Rdp)
                .then(|| pld_or_unavailable(acct, engine::pld::epsilon(m, steps, delta)))
                .transpose()?
                .map(|r| r.map(|p| (p.epsilon.upper, p.epsilon.lower)));
            put("epsilon", rdp, pld);
        }
        (None, Some(eps)) => {
            let rdp = (acct != Accountant::Pld)
                .then(|| run()?.delta(eps, Conversion::Improved).map_err(e))
                .transpose()?
                .map(|o| (o.value, o.alpha));
            let pld = (acct != Accountant::Rdp)
                .then(|| pld_or_unavailable(acct, engine::pld::delta(m, steps, eps)))
                .transpose()?
                .map(|r| r.map(|p| (p.delta.upper, p.delta.lower)));
            put("delta", rdp, pld);
        }
        (Some(_), Some(_)) => {
            return Err("give delta (for epsilon) or epsilon (for delta), not both".into())
        }
        (None, None) => return Err("missing delta".into()),
    }
    Ok(Value::Object(obj))
}

/// `sgm-rdp batch`: JSON lines in, one JSON line out per input line, in order. Lines are
/// read as bytes: a line that is not UTF-8 gets an `{"error": …}` line and the batch goes on.
pub fn batch(mut input: impl BufRead, mut out: impl Write) -> std::io::Result<()> {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        let reply = match std::str::from_utf8(&buf) {
            Ok(line) => batch_line(line),
            Err(x) => json!({ "error": format!("line is not valid UTF-8 ({x})") }).to_string(),
        };
        writeln!(out, "{reply}")?;
    }
    out.flush()
}
