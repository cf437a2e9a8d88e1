//! Correlated noise (DP-FTRL / banded matrix factorization): `epsilon`, `delta` and
//! `calibrate` with `--strategy` (the command line) or a `"strategy"` key (batch lines, and so
//! the JS API's `batchLine` and Python's `query`). One function, [`answer`], under both.
//!
//! Strategies: `band:b` (BandMF, b equal coefficients), `band:b,c0,…,c(b-1)` (its first
//! column), `matrix` (an explicit lower-triangular C: `file:C.csv` on the command line, a
//! `"strategy_matrix"` array of rows in a line). Participation: `min-sep` (b-min-separated
//! cyclic Poisson over as many partitions as the strategy has bands) or `min-sep:k`. The method,
//! its proof sketch and what is certified: docs/correlated-noise.md.

use super::*;
use crate::engine::matrix::{MatrixAnswer, MinSep, Strategy};

/// The keys a correlated-noise line takes.
pub const MATRIX_KEYS: [&str; 13] = [
    "command",
    "strategy",
    "strategy_matrix",
    "participation",
    "q",
    "sigma",
    "steps",
    "delta",
    "epsilon",
    "dataset_size",
    "batch_size",
    "epochs",
    "accountant",
];

/// What was asked: the command, the run's terms and the strategy.
#[derive(Debug, Clone, Default)]
struct Asked {
    cmd: String,
    spec: String,
    matrix: Option<Vec<Vec<f64>>>,
    participation: Option<String>,
    q: Option<f64>,
    sigma: Option<f64>,
    steps: Option<f64>,
    delta: Option<f64>,
    epsilon: Option<f64>,
    dataset: [Option<f64>; 3],
}

/// `band:b[,c0,…]`, `matrix` (with its rows), `file:PATH` (read here, natively) → a strategy.
fn strategy(spec: &str, rows: Option<Vec<Vec<f64>>>) -> Result<Strategy, String> {
    let e = |e: engine::Error| e.to_string();
    let (family, rest) = spec.split_once(':').unwrap_or((spec, ""));
    match family.trim() {
        "band" => {
            let mut parts = rest.split(',').map(str::trim);
            let b = parts.next().unwrap_or("");
            let b: usize = b
                .parse()
                .map_err(|_| format!("strategy band:b needs a whole number of bands b, got '{b}'"))?;
            let c: Vec<f64> = parts
                .map(|x| {
                    x.parse::<f64>()
                        .map_err(|_| format!("strategy band: coefficient '{x}' is not a number"))
                })
                .collect::<Result<_, _>>()?;
            Strategy::band(b, (!c.is_empty()).then_some(&c[..])).map_err(e)
        }
        "matrix" => Strategy::matrix(rows.ok_or(
            "strategy matrix needs its rows (strategy_matrix: [[c11], [c21, c22], ...])",
        )?)
        .map_err(e),
        "file" => Strategy::matrix(read_csv(rest)?).map_err(e),
        "blt" | "tree" => Err(format!(
            "strategy {family} is not banded: its exact b-min-separated reduction does not apply, and correlated noise under Poisson sampling at every step is not accounted yet (band:b or an explicit banded matrix are)"
        )),
        other => Err(format!(
            "unknown strategy '{other}' (band:b, band:b,c0,...,c(b-1), file:C.csv, or a strategy_matrix)"
        )),
    }
}

/// An explicit strategy from a CSV file: one row of C per line, comma-separated (a row may
/// stop after its diagonal entry; `#` starts a comment line).
#[cfg(not(target_arch = "wasm32"))]
fn read_csv(path: &str) -> Result<Vec<Vec<f64>>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|x| format!("strategy file '{path}' cannot be read: {x}"))?;
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .enumerate()
        .map(|(i, l)| {
            l.split(',')
                .map(|x| {
                    x.trim().parse::<f64>().map_err(|_| {
                        format!(
                            "strategy file '{path}', row {}: '{}' is not a number",
                            i + 1,
                            x.trim()
                        )
                    })
                })
                .collect()
        })
        .collect()
}

#[cfg(target_arch = "wasm32")]
fn read_csv(_: &str) -> Result<Vec<Vec<f64>>, String> {
    Err("strategy file: is read by the command line; here give the rows as strategy_matrix".into())
}

/// `min-sep` or `min-sep:k` → Some(k) or None (the strategy's bands).
fn partitions(p: Option<&str>) -> Result<Option<u64>, String> {
    match p.map(str::trim) {
        None | Some("min-sep") => Ok(None),
        Some(s) if s.starts_with("min-sep:") => {
            let k = &s["min-sep:".len()..];
            k.parse::<u64>()
                .ok()
                .filter(|&k| k >= 1)
                .map(Some)
                .ok_or_else(|| format!("participation min-sep:k needs a whole number k >= 1, got '{k}'"))
        }
        Some(s @ ("poisson" | "balls-in-bins")) => Err(format!(
            "participation {s} with correlated noise is not accounted yet: amplification of a general matrix mechanism needs conditional composition (Choquette-Choo, Ganesh, Steinke, Thakurta, arXiv 2310.15526); min-sep is accounted exactly"
        )),
        Some(other) => Err(format!(
            "unknown participation '{other}' (min-sep or min-sep:k; poisson and balls-in-bins are not accounted yet)"
        )),
    }
}

fn need(v: Option<f64>, name: &str) -> Result<f64, String> {
    v.ok_or_else(|| format!("missing {name}"))
}

/// The run (strategy, rate, steps) for σ.
fn run(a: &Asked, sigma: f64) -> Result<MinSep, String> {
    let e = |e: engine::Error| e.to_string();
    let s = strategy(&a.spec, a.matrix.clone())?;
    let k = partitions(a.participation.as_deref())?;
    let (q, t) = match a.dataset {
        [Some(n), Some(b), Some(ep)] => {
            if a.q.is_some() || a.steps.is_some() {
                return Err(
                    "give either q/steps or dataset_size/batch_size/epochs, not both".into(),
                );
            }
            let k = k.unwrap_or(s.bands() as u64);
            let (q, t, _) = engine::params::banded_from_dataset(n, b, ep, k).map_err(e)?;
            (q, t)
        }
        [None, None, None] => {
            let q = need(a.q, "q (the rate within the partition a step samples)")?;
            let t = match (a.steps, s.steps()) {
                (Some(t), _) => engine::params::steps_from_f64(t).map_err(e)?,
                (None, Some(t)) => t,
                (None, None) => return Err("missing steps".into()),
            };
            (q, t)
        }
        _ => return Err("dataset_size, batch_size and epochs go together".into()),
    };
    MinSep::new(s, q, sigma, t, k).map_err(e)
}

fn lower6(x: f64) -> String {
    decimal::fixed(x, 6, Dir::Down)
}

fn upper6(x: f64) -> String {
    decimal::fixed(x, 6, Dir::Up)
}

/// The sentence every answer carries: the strategy, the participation, the adjacency, σ's unit.
fn scheme(r: &MinSep, a: &MatrixAnswer) -> String {
    let n = |k: u64, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    format!(
        "correlated noise: {}, columns normalised by the largest norm {:.6}; {}-min-separated cyclic Poisson participation ({}, q = {} within the partition a step samples); add/remove adjacency; sigma = noise std / (clipping norm x largest column norm)",
        n(a.bands, "band", "bands"),
        a.column_norm,
        a.partitions,
        n(a.partitions, "partition", "partitions"),
        r.q
    )
}

fn how(a: &MatrixAnswer) -> String {
    let composed: Vec<String> = a
        .composed
        .iter()
        .map(|(s, n)| format!("{n} at sigma {}", decimal::fixed(*s, 6, Dir::Down)))
        .collect();
    format!(
        "exact reduction (Choquette-Choo et al., arXiv 2306.08153): the worst partition ({}) takes part in {} steps, composed as DP-SGD steps: {}{}",
        a.worst_partition,
        a.participations,
        composed.join(", "),
        if a.rounded {
            " (sensitivities rounded up for the upper end, down for the lower, on a 1/256-octave grid)"
        } else {
            ""
        }
    )
}

/// The fields every answer carries.
fn fields(r: &MinSep, a: &MatrixAnswer, spec: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("strategy".into(), json!(spec));
    m.insert(
        "participation".into(),
        json!(format!("min-sep:{}", a.partitions)),
    );
    m.insert("q".into(), json!(r.q));
    m.insert("sigma".into(), json!(r.sigma));
    m.insert("steps".into(), json!(r.steps));
    m.insert("bands".into(), json!(a.bands));
    m.insert("partitions".into(), json!(a.partitions));
    m.insert("worst_partition".into(), json!(a.worst_partition));
    m.insert("participations".into(), json!(a.participations));
    m.insert("column_norm".into(), json!(a.column_norm));
    m.insert("composed".into(), json!(a.composed));
    m.insert("rounded".into(), json!(a.rounded));
    m.insert("scheme".into(), json!(scheme(r, a)));
    m
}

/// The answer to a correlated-noise query.
fn answer(a: &Asked) -> Result<Report, String> {
    let e = |e: engine::Error| e.to_string();
    match a.cmd.as_str() {
        "epsilon" => {
            let d = need(a.delta, "delta")?;
            let r = run(a, need(a.sigma, "sigma")?)?;
            let x = r.epsilon(d).map_err(e)?;
            let mut m = fields(&r, &x, &a.spec);
            m.insert("delta".into(), json!(d));
            m.insert("epsilon".into(), json!(x.bracket.upper));
            m.insert("epsilon_lower".into(), json!(x.bracket.lower));
            let text = format!(
                "epsilon = {} (certified upper bound; bracket [{}, {}]: the true epsilon lies within) at delta = {d}\n{}\n{}\n",
                upper6(x.bracket.upper),
                lower6(x.bracket.lower),
                upper6(x.bracket.upper),
                scheme(&r, &x),
                how(&x)
            );
            Ok(Report { fields: m, text })
        }
        "delta" => {
            let eps = need(a.epsilon, "epsilon")?;
            let r = run(a, need(a.sigma, "sigma")?)?;
            let x = r.delta(eps).map_err(e)?;
            let mut m = fields(&r, &x, &a.spec);
            m.insert("epsilon".into(), json!(eps));
            m.insert("delta".into(), json!(x.bracket.upper));
            m.insert("delta_lower".into(), json!(x.bracket.lower));
            let text = format!(
                "delta = {:e} (certified upper bound; bracket [{:e}, {:e}]) at epsilon = {eps}\n{}\n{}\n",
                x.bracket.upper,
                x.bracket.lower,
                x.bracket.upper,
                scheme(&r, &x),
                how(&x)
            );
            Ok(Report { fields: m, text })
        }
        "calibrate" => {
            let d = need(a.delta, "delta")?;
            let target = need(a.epsilon, "epsilon (the target)")?;
            if !(target.is_finite() && target > 0.0) {
                return Err(format!("epsilon (the target) must be > 0, got {target}"));
            }
            if a.sigma.is_some() {
                return Err("calibrate finds sigma: do not give it".into());
            }
            let (sigma, r, x) = calibrate(a, d, target)?;
            let mut m = fields(&r, &x, &a.spec);
            m.insert("delta".into(), json!(d));
            m.insert("target_epsilon".into(), json!(target));
            m.insert("epsilon".into(), json!(x.bracket.upper));
            m.insert("epsilon_lower".into(), json!(x.bracket.lower));
            let text = format!(
                "sigma = {} (the smallest found, to 0.1 %, whose certified epsilon {} <= {target} at delta = {d})\n{}\n{}\n",
                decimal::fixed(sigma, 6, Dir::Up),
                upper6(x.bracket.upper),
                scheme(&r, &x),
                how(&x)
            );
            Ok(Report { fields: m, text })
        }
        other => Err(format!(
            "a strategy applies to epsilon, delta and calibrate, not to {other}"
        )),
    }
}

/// The smallest σ (to 0.1 %, on the safe side) whose certified ε is at most the target:
/// ε's upper end falls as σ grows (each composed step's does).
fn calibrate(a: &Asked, d: f64, target: f64) -> Result<(f64, MinSep, MatrixAnswer), String> {
    let e = |e: engine::Error| e.to_string();
    let at = |s: f64| -> Result<(MinSep, MatrixAnswer), String> {
        let r = run(a, s)?;
        let x = r.epsilon(d).map_err(e)?;
        Ok((r, x))
    };
    // A σ that meets the target (hi) and one that does not (lo), by doubling.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let mut best = loop {
        let (r, x) = at(hi)?;
        if x.bracket.upper <= target {
            break (hi, r, x);
        }
        lo = hi;
        hi *= 2.0;
        if hi > 1e6 {
            return Err(format!(
                "no sigma up to 1e6 brings the certified epsilon to {target} at delta = {d}"
            ));
        }
    };
    if lo == 0.0 {
        lo = hi;
        loop {
            lo *= 0.5;
            if lo < engine::MIN_SIGMA {
                lo = 0.0;
                break;
            }
            let (r, x) = at(lo)?;
            if x.bracket.upper <= target {
                best = (lo, r, x);
                hi = lo;
            } else {
                break;
            }
        }
    }
    while lo > 0.0 && hi / lo > 1.001 {
        let mid = (lo * hi).sqrt();
        let (r, x) = at(mid)?;
        if x.bracket.upper <= target {
            hi = mid;
            best = (mid, r, x);
        } else {
            lo = mid;
        }
    }
    Ok(best)
}

/// Sets one key (a flag's or a line's name, dashed or not) of the query.
fn set_key(a: &mut Asked, key: &str, v: &Value) -> Result<(), String> {
    let num = |v: &Value| -> Result<f64, String> {
        match v {
            Value::Number(n) => n.as_f64().ok_or_else(|| format!("{key} is not a number")),
            Value::String(s) => s
                .trim()
                .parse()
                .map_err(|_| format!("{key}: '{s}' is not a number")),
            other => Err(format!("{key} must be a number, got {other}")),
        }
    };
    let text = |v: &Value| -> Result<String, String> {
        match v {
            Value::String(s) => Ok(s.clone()),
            other => Err(format!("{key} must be a string, got {other}")),
        }
    };
    // The run's terms under their training tools' names too (sample_rate, noise_multiplier).
    let canon = match flag_named(&key.replace('_', "-")) {
        Some(f) => f.name.to_string(),
        None => key.replace('_', "-"),
    };
    match canon.as_str() {
        "strategy" => a.spec = text(v)?,
        "strategy-matrix" => {
            let rows: Vec<Vec<f64>> = serde_json::from_value(v.clone())
                .map_err(|_| "strategy_matrix must be an array of rows of numbers".to_string())?;
            a.matrix = Some(rows);
        }
        "participation" => a.participation = Some(text(v)?),
        "q" => a.q = Some(num(v)?),
        "sigma" => a.sigma = Some(num(v)?),
        "steps" => a.steps = Some(num(v)?),
        "delta" => a.delta = Some(num(v)?),
        "epsilon" => a.epsilon = Some(num(v)?),
        "dataset-size" => a.dataset[0] = Some(num(v)?),
        "batch-size" => a.dataset[1] = Some(num(v)?),
        "epochs" => a.dataset[2] = Some(num(v)?),
        "accountant" => {
            if text(v)? != "pld" {
                return Err(
                    "correlated noise is accounted by the tight accountant only (accountant pld)"
                        .into(),
                );
            }
        }
        _ => {
            return Err(format!(
                "'{key}' does not apply to correlated noise (its keys: {})",
                MATRIX_KEYS.join(", ")
            ))
        }
    }
    Ok(())
}

/// Whether command-line words ask for correlated noise.
pub(super) fn asked_in_words(rest: &[String]) -> bool {
    rest.iter().any(|w| {
        w == "--strategy"
            || w.starts_with("--strategy=")
            || w == "--participation"
            || w.starts_with("--participation=")
    })
}

/// The command line: `sgm-rdp epsilon|delta|calibrate --strategy S [--participation P] …`.
pub(super) fn words(cmd: &str, rest: &[String]) -> Result<String, String> {
    let mut a = Asked {
        cmd: cmd.to_string(),
        ..Asked::default()
    };
    let mut json = false;
    let mut seen: Vec<String> = Vec::new();
    let mut w = rest.iter();
    while let Some(word) = w.next() {
        let Some(name) = word.strip_prefix("--").filter(|n| !n.is_empty()) else {
            return Err(format!(
                "unexpected argument '{word}' (flags start with --)"
            ));
        };
        let (name, inline) = match name.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (name.to_string(), None),
        };
        if seen.contains(&name) {
            return Err(format!(
                "--{name} given more than once (give each flag once)"
            ));
        }
        seen.push(name.clone());
        if name == "json" {
            json = true;
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => w.next().cloned().ok_or(format!("--{name} needs a value"))?,
        };
        set_key(&mut a, &name, &Value::String(value)).map_err(|m| {
            if m.starts_with(&format!("'{name}'")) {
                format!("--{name} does not apply to correlated noise")
            } else {
                m
            }
        })?;
    }
    if a.spec.is_empty() {
        return Err("missing --strategy (band:b, band:b,c0,...,c(b-1), file:C.csv)".into());
    }
    Ok(answer(&a)?.print(json))
}

/// A batch line with a `"strategy"` key → its fields with the answer's.
pub fn matrix_line(obj: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    let mut a = Asked {
        cmd: match obj.get("command") {
            None | Some(Value::Null) => {
                if obj.contains_key("epsilon") && !obj.contains_key("delta") {
                    "delta".into()
                } else {
                    "epsilon".into()
                }
            }
            Some(Value::String(c)) => c.clone(),
            Some(other) => return Err(format!("command must be a string, got {other}")),
        },
        ..Asked::default()
    };
    for (k, v) in obj {
        if k == "command" || v.is_null() {
            continue;
        }
        if !MATRIX_KEYS.contains(&k.as_str()) {
            return Err(format!(
                "unknown key '{k}' for correlated noise (its keys: {})",
                MATRIX_KEYS.join(", ")
            ));
        }
        set_key(&mut a, k, v)?;
    }
    if a.spec.is_empty() {
        return Err("missing strategy".into());
    }
    let mut out = answer(&a)?.fields;
    for (k, v) in obj {
        if k != "strategy_matrix" {
            out.entry(k.clone()).or_insert(v.clone());
        }
    }
    // (The answer's delta/epsilon are the asked values or the bracket's upper end; a line's
    // own value stays beside it where the key differs.)
    Ok(out)
}
