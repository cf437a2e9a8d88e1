//! The query layer: one typed [`Request`] and one [`answer`] under every front end. The
//! command line (`sgm-rdp`), `batch`, the JS API, the page's worker and the Python package
//! each translate their own syntax into a `Request` and read the [`Report`] back; none calls
//! another. By concern:
//! [`request`] the inputs (one table of names and aliases, which command takes which),
//! `poisson` the plain Poisson / add-remove commands, `scheme` batching schemes, adjacency
//! and user-level privacy, `report` the fields and text of an answer, `words` the command
//! line's words (help, parse, printed answer) and `line` a JSON line (`batch`).

use crate::decimal::{self, Dir};
use crate::engine::{self, bounds, calibrate, Conversion, Optimum, Run, Sgm};
use serde_json::{json, Map, Value};

mod audit;
pub mod check;
mod line;
mod matrix;
mod poisson;
mod report;
pub mod request;
mod scheme;
mod words;

pub use audit::{audit_csv, audit_line, audit_plan_line, AUDIT_KEYS};
pub use check::check;
pub use line::{line, line_answer};
pub use matrix::{bins_per_epoch, matrix_line, MATRIX_KEYS};
use poisson::*;
pub use report::Report;
use report::*;
pub(crate) use report::{gdp_fields, gdp_text};
pub use request::Request;
use request::*;
pub use scheme::Sampling;
pub use words::run;

pub const USAGE: &str = "usage: sgm-rdp <rdp|epsilon|delta|calibrate|bounds|compare|libraries|profile|gdp|check|audit|audit-plan|batch> [--q Q] [--sigma S] \
[--steps T] [--delta D] [--epsilon E] [--orders A,B,..] [--alpha A] [--conversion improved|classic] \
[--accountant rdp|pld|both] \
[--target sigma|steps] [--tpr A --fpr B | --advantage A] [--dataset-size N --batch-size B --epochs E] \
[--sampling poisson|shuffle|truncated-poisson|fixed-size|random-allocation] [--adjacency add-remove|replace-one] [--steps-per-epoch t] \
[--selected k] [--max-batch B] [--bands b] [--json]";

/// Which accountant answers (one type for every front end): exact RDP (the default, as
/// before), the tight PLD bracket, or both side by side.
pub use crate::engine::Accountant;

/// Answer `cmd` (`epsilon`, `delta`, `calibrate`, `profile`, `gdp`, `rdp`, `bounds`,
/// `compare`, `libraries`) for the request `f`: the fields (what `--json` prints and a batch
/// line carries) and the text, or a one-line reason.
pub fn answer(cmd: &str, f: Request) -> Result<Report, String> {
    // `gdp` and `profile` with a δ: the answer as without it, and what it means at that δ
    // (issue 61 #9: they had refused --delta).
    match (cmd, f.delta) {
        ("gdp", Some(d)) => {
            let mut r = answer(cmd, Request { delta: None, ..f })?;
            report::gdp_at_delta(&mut r, d)?;
            Ok(r)
        }
        ("profile", Some(d)) => {
            // The tight accountant for Poisson sampling; a scheme's own answer otherwise.
            let accountant = f.is_plain().then_some(Accountant::Pld);
            let at = Request {
                accountant,
                ..f.clone()
            };
            let eps = answer("epsilon", at)?;
            let mut r = answer(cmd, Request { delta: None, ..f })?;
            report::profile_at_delta(&mut r, d, &eps.fields)?;
            Ok(r)
        }
        _ => answer_for(cmd, f),
    }
}

fn answer_for(cmd: &str, mut f: Request) -> Result<Report, String> {
    // Batching schemes, replace-one and user-level privacy: one query, shared with `batch`.
    if !f.is_plain() {
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
        let report = match cmd {
            "calibrate" => {
                // An attack-risk target is calibrated for Poisson sampling of one example
                // under add/remove only: refused by name here, not answered as "missing
                // epsilon" (hardening 4 #7).
                if f.risk.iter().any(Option::is_some) {
                    return Err("--tpr/--fpr and --advantage calibrate Poisson sampling of one example under add/remove adjacency; this run's scheme, group size or adjacency has no attack-risk calibration".into());
                }
                let a = f.calibrate(f.target.as_deref())?;
                let text = scheme::text(&a);
                Report { fields: a, text }
            }
            "gdp" => {
                let g = f.gdp()?;
                let text = scheme::gdp_text_of(&g);
                Report { fields: g, text }
            }
            "profile" => {
                let p = f.profile()?;
                let text = scheme::profile_text(&p);
                Report { fields: p, text }
            }
            _ => {
                let a = f.answer()?;
                let text = scheme::text(&a);
                Report { fields: a, text }
            }
        };
        return Ok(report);
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
    })
}
