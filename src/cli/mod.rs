//! The native command line (`sgm-rdp`), kept in the library so tests can call
//! it without spawning processes. `run` returns the text for stdout or a
//! one-line error for stderr. By concern:
//! [`args`] the flags (one table: names, aliases, values, help; parsed with `lexopt`),
//! `commands` the plain Poisson / add-remove commands, [`scheme`] batching schemes,
//! adjacency and user-level privacy, `report` the JSON and text an answer prints as, and
//! `batch` the JSON-lines front end (the worker's and the Python package's too).

use crate::engine::{self, bounds, calibrate, Conversion, Optimum, Run, Sgm};
use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};

mod args;
mod batch;
mod commands;
mod report;
mod scheme;

use args::*;
// (The JS API reads a batch line as a value.)
#[cfg(target_arch = "wasm32")]
pub(crate) use batch::batch_value;
pub use batch::{batch, batch_line};
use commands::*;
use report::*;
pub(crate) use report::{gdp_fields, gdp_text};
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
