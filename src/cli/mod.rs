//! The native command line (`sgm-rdp`), kept in the library so tests can call
//! it without spawning processes. `run` returns the text for stdout or a
//! one-line error for stderr. By concern:
//! `args` the flags (one table: names, aliases, values, help; parsed with `lexopt`),
//! `commands` the plain Poisson / add-remove commands, `scheme` batching schemes,
//! adjacency and user-level privacy, `report` the JSON and text an answer prints as, and
//! `batch` the JSON-lines front end (the worker's and the Python package's too).

use crate::decimal::{self, Dir};
use crate::engine::{self, bounds, calibrate, Conversion, Optimum, Run, Sgm};
use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};

mod args;
mod batch;
mod commands;
mod report;
mod scheme;
pub mod worker;

use args::*;
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

/// Which accountant answers (one type for every front end): exact RDP (the default, as
/// before), the tight PLD bracket, or both side by side.
pub(crate) use crate::engine::Accountant;

/// Run one command; Ok(stdout text) or Err(one-line reason).
pub fn run(args: &[String]) -> Result<String, String> {
    let (cmd, rest) = args.split_first().ok_or_else(|| USAGE.to_string())?;
    // Conventions: --help / -h / help, --version / -V, and `<command> --help`.
    match cmd.as_str() {
        "--help" | "-h" | "help" => return Ok(help()),
        "--version" | "-V" => return Ok(format!("sgm-rdp {}", env!("CARGO_PKG_VERSION"))),
        _ => {}
    }
    if rest.iter().any(|a| a == "--help" || a == "-h") {
        return command_help(cmd).ok_or_else(|| format!("unknown command '{cmd}' ({USAGE})"));
    }
    let mut f = parse(rest)?;
    let note = one_over_n_note(&f);
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
        let report = match cmd.as_str() {
            "calibrate" => {
                // An attack-risk target is calibrated for Poisson sampling of one example
                // under add/remove only: refused by name here, not answered as "missing
                // epsilon" (hardening 4 #7).
                if f.risk.iter().any(Option::is_some) {
                    return Err("--tpr/--fpr and --advantage calibrate Poisson sampling of one example under add/remove adjacency; this run's scheme, group size or adjacency has no attack-risk calibration".into());
                }
                let a = query.calibrate(f.target.as_deref())?;
                let text = scheme::text(&a);
                Report { fields: a, text }
            }
            "gdp" => {
                let g = query.gdp()?;
                let text = scheme::gdp_text_of(&g);
                Report { fields: g, text }
            }
            "profile" => {
                let p = query.profile()?;
                let text = scheme::profile_text(&p);
                Report { fields: p, text }
            }
            _ => {
                let a = query.answer()?;
                let text = scheme::text(&a);
                Report { fields: a, text }
            }
        };
        return Ok(report.print(f.json) + &note);
    }
    // Users' terms: dataset size N, batch size B, epochs E → q = B/N, T = ⌈E·N/B⌉ (with
    // b bands: q = b·B/N within a partition, see `banded_from_dataset`).
    let mut banded_rate = false;
    if let [Some(n), Some(b), Some(e)] = f.dataset {
        if f.q.is_some() || f.steps.is_some() {
            return Err(
                "give either --q/--steps or --dataset-size/--batch-size/--epochs, not both".into(),
            );
        }
        let (q, t) = match f.bands {
            Some(bands) => {
                let (q, t, _) = engine::params::banded_from_dataset(n, b, e, bands_of(bands)?)
                    .map_err(|e| e.to_string())?;
                banded_rate = true;
                (q, t)
            }
            None => engine::params::from_dataset(n, b, e).map_err(|e| e.to_string())?,
        };
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
        Some((b, t)) => with_bands(out, b, t, f.steps()?, banded_rate),
    }
    .print(f.json)
        + &note)
}

/// The text answer of a run given in dataset terms warns when δ ≥ 1/N, as the page does
/// (issue 61 #9); "" for JSON and for other runs.
fn one_over_n_note(f: &Flags) -> String {
    match (f.json, f.dataset[0], f.delta) {
        (false, Some(n), Some(d)) if n >= 1.0 && d >= 1.0 / n => format!(
            "warning: delta = {} >= 1/N = {}: the usual rule asks for delta < 1/N (a mechanism that publishes one random example in full satisfies delta = 1/N)\n",
            engine::error::show(d),
            engine::error::show(1.0 / n)
        ),
        _ => String::new(),
    }
}
