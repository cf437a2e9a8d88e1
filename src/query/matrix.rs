//! Correlated noise (DP-FTRL / matrix factorization): `epsilon`, `delta` and `calibrate` with
//! `--strategy` (the command line) or a `"strategy"` key (batch lines, and so the JS API's
//! `batchLine`, Python's `query` and the page's worker). One function, [`answer`], under all.
//!
//! Strategies: `band:b` (BandMF, b equal coefficients), `band:b,c0,…,c(b-1)` (its first
//! column), `blt:decay:scale[,…]` (BLT), `tree` (binary-tree aggregation), `matrix` (an
//! explicit lower-triangular C: `file:C.csv` on the command line, a `"strategy_matrix"` array
//! of rows in a line). Participation: `min-sep[:k]` (the exact reduction, or one Gaussian
//! mechanism where columns overlap), `poisson`, `balls-in-bins:t` or `cyclic-bins:t` (a
//! certified upper bound), with `monte_carlo` (a seeded estimate beside the bound, for the
//! bins). The methods, their proof sketches and what each certifies: docs/correlated-noise.md.

use super::*;
use crate::engine::matrix::mc::{self, BinsMc, Estimate};
use crate::engine::matrix::{MatrixAnswer, MinSep, Split, Strategy, Whole};

/// The keys a correlated-noise line takes.
pub const MATRIX_KEYS: [&str; 14] = [
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
    "monte_carlo",
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
    /// Draws per direction of a Monte Carlo estimate beside the bound (balls-in-bins only).
    monte_carlo: Option<f64>,
}

/// `band:b[,c0,…]`, `matrix` (with its rows), `file:PATH` (read here, natively) → a strategy.
fn strategy(spec: &str, rows: Option<Vec<Vec<f64>>>) -> Result<Strategy, String> {
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
            Strategy::band(b, (!c.is_empty()).then_some(&c[..])).map_err(refusal)
        }
        "matrix" => Strategy::matrix(rows.ok_or(
            "strategy matrix needs its rows (strategy_matrix: [[c11], [c21, c22], ...])",
        )?)
        .map_err(refusal),
        "file" => Strategy::matrix(read_csv(rest)?).map_err(refusal),
        "blt" => {
            let buffers: Vec<(f64, f64)> = rest
                .split(',')
                .map(|b| {
                    let (d, w) = b.split_once(':').ok_or_else(|| {
                        format!("strategy blt: each buffer is decay:scale, got '{}'", b.trim())
                    })?;
                    let num = |x: &str| {
                        x.trim().parse::<f64>().map_err(|_| {
                            format!("strategy blt: '{}' is not a number", x.trim())
                        })
                    };
                    Ok((num(d)?, num(w)?))
                })
                .collect::<Result<_, String>>()?;
            Strategy::blt(&buffers).map_err(refusal)
        }
        "tree" if rest.trim().is_empty() => Ok(Strategy::Tree),
        other => Err(format!(
            "unknown strategy '{other}' (band:b, band:b,c0,...,c(b-1), blt:decay:scale[,decay:scale...], tree, file:C.csv, or a strategy_matrix)"
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

/// An engine refusal in this query's words: the tight accountant's refusal names its reason
/// alone (its usual pointer to an exact-RDP answer does not apply: correlated noise has none).
fn refusal(e: engine::Error) -> String {
    match e {
        engine::Error::PldBudget { reason } => format!("PLD accountant: {}", reason.text()),
        e => e.to_string(),
    }
}

/// How examples take part.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Joins {
    /// b-min-separated cyclic Poisson over k partitions (None: the strategy's bands).
    MinSep(Option<u64>),
    /// Poisson sampling at every step.
    Poisson,
    /// Balls-in-bins with t steps per epoch (None: from dataset terms, t = floor(N/B)).
    BallsInBins(Option<u64>),
    /// Cyclic balls-in-bins (jax-privacy's): one bin per example for the whole run.
    CyclicBins(Option<u64>),
}

/// `min-sep[:k]`, `poisson`, `balls-in-bins[:t]`, `cyclic-bins[:t]`.
fn participation(p: Option<&str>) -> Result<Joins, String> {
    let whole = |name: &str, v: &str| {
        v.parse::<u64>().ok().filter(|&k| k >= 1).ok_or_else(|| {
            format!(
                "participation {name}:{} needs a whole number >= 1, got '{v}'",
                if name == "min-sep" { "k" } else { "t" }
            )
        })
    };
    match p.map(str::trim) {
        None | Some("min-sep") => Ok(Joins::MinSep(None)),
        Some("poisson") => Ok(Joins::Poisson),
        Some("balls-in-bins") => Ok(Joins::BallsInBins(None)),
        Some(s) if s.starts_with("min-sep:") => Ok(Joins::MinSep(Some(whole("min-sep", &s[8..])?))),
        Some(s) if s.starts_with("balls-in-bins:") => {
            Ok(Joins::BallsInBins(Some(whole("balls-in-bins", &s[14..])?)))
        }
        Some("cyclic-bins") => Ok(Joins::CyclicBins(None)),
        Some(s) if s.starts_with("cyclic-bins:") => {
            Ok(Joins::CyclicBins(Some(whole("cyclic-bins", &s[12..])?)))
        }
        Some(other) => Err(format!(
            "unknown participation '{other}' (min-sep, min-sep:k, poisson, balls-in-bins:t, cyclic-bins:t)"
        )),
    }
}

/// The steps per epoch t a bins participation names (`balls-in-bins:t`, `cyclic-bins:t`);
/// None for the others, for t from dataset terms, and for what does not parse.
pub fn bins_per_epoch(p: Option<&str>) -> Option<u64> {
    match participation(p).ok()? {
        Joins::BallsInBins(t) | Joins::CyclicBins(t) => t,
        Joins::MinSep(_) | Joins::Poisson => None,
    }
}

fn need(v: Option<f64>, name: &str) -> Result<f64, String> {
    v.ok_or_else(|| format!("missing {name}"))
}

/// The run for σ: the exact min-sep reduction, the noise-splitting bound, or the whole run
/// without amplification.
#[derive(Clone)]
enum Run {
    Exact(MinSep),
    Split(Split),
    Whole(Whole),
}

impl Run {
    fn epsilon(&self, d: f64) -> Result<MatrixAnswer, engine::Error> {
        match self {
            Run::Exact(r) => r.epsilon(d),
            Run::Split(r) => r.epsilon(d),
            Run::Whole(r) => r.epsilon(d),
        }
    }
    fn delta(&self, e: f64) -> Result<MatrixAnswer, engine::Error> {
        match self {
            Run::Exact(r) => r.delta(e),
            Run::Split(r) => r.delta(e),
            Run::Whole(r) => r.delta(e),
        }
    }
    fn profile(&self, eps: &[f64]) -> Result<Vec<engine::pld::ProfilePoint>, String> {
        match self {
            Run::Exact(r) => r.profile(eps),
            Run::Split(r) => r.profile(eps),
            Run::Whole(r) => r.profile(eps),
        }
        .map_err(refusal)
    }
    /// The same run at another σ (the strategy parsed and checked once).
    fn set_sigma(&mut self, sigma: f64) {
        match self {
            Run::Exact(r) => r.sigma = sigma,
            Run::Split(r) => r.sigma = sigma,
            Run::Whole(r) => r.sigma = sigma,
        }
    }
}

fn run(a: &Asked, sigma: f64) -> Result<Run, String> {
    let s = strategy(&a.spec, a.matrix.clone())?;
    let joins = participation(a.participation.as_deref())?;
    let dataset = match a.dataset {
        [Some(n), Some(b), Some(ep)] => {
            if a.q.is_some() || a.steps.is_some() {
                return Err(
                    "give either q/steps or dataset_size/batch_size/epochs, not both".into(),
                );
            }
            Some((n, b, ep))
        }
        [None, None, None] => None,
        _ => return Err("dataset_size, batch_size and epochs go together".into()),
    };
    let steps = |a: &Asked| -> Result<u64, String> {
        match (a.steps, s.steps()) {
            (Some(t), _) => engine::params::steps_from_f64(t).map_err(refusal),
            (None, Some(t)) => Ok(t),
            (None, None) => Err("missing steps".into()),
        }
    };
    match joins {
        Joins::MinSep(k) => {
            // Banded with at least as many partitions as bands: the exact reduction. Else the
            // whole run without amplification, by default over the steps of an epoch (dataset
            // terms: each example once an epoch) or T partitions (each example once).
            let exact = s.is_banded() && k.is_none_or(|k| k >= s.bands() as u64);
            let per_epoch = |n: f64, b: f64| (n / b).floor().max(1.0) as u64;
            let (q, t, k) = match dataset {
                Some((n, b, ep)) => {
                    let k = match k {
                        Some(k) => k,
                        None if exact => s.bands() as u64,
                        None => per_epoch(n, b),
                    };
                    let (q, t, _) =
                        engine::params::banded_from_dataset(n, b, ep, k).map_err(refusal)?;
                    (q, t, Some(k))
                }
                None => (
                    need(a.q, "q (the rate within the partition a step samples)")?,
                    steps(a)?,
                    k,
                ),
            };
            if exact {
                MinSep::new(s, q, sigma, t, k)
                    .map(Run::Exact)
                    .map_err(refusal)
            } else {
                Whole::new(s, q, sigma, t, k.unwrap_or(t))
                    .map(Run::Whole)
                    .map_err(refusal)
            }
        }
        Joins::Poisson => {
            let (q, t) = match dataset {
                Some((n, b, ep)) => engine::params::from_dataset(n, b, ep).map_err(refusal)?,
                None => (need(a.q, "q")?, steps(a)?),
            };
            Split::poisson(s, q, sigma, t)
                .map(Run::Split)
                .map_err(refusal)
        }
        Joins::BallsInBins(t) | Joins::CyclicBins(t) => {
            if a.q.is_some() {
                return Err(
                    "q does not apply to balls-in-bins (each example is in one step of each epoch)"
                        .into(),
                );
            }
            let (per, total) = match (dataset, t) {
                (Some((n, b, ep)), None) => {
                    let per = (n / b).floor();
                    if !(per >= 1.0 && ep >= 1.0 && ep.fract() == 0.0) {
                        return Err("balls-in-bins from dataset terms needs batch_size <= dataset_size and whole epochs".into());
                    }
                    (per as u64, (per * ep) as u64)
                }
                (None, Some(t)) => (t, steps(a)?),
                (Some(_), Some(_)) => {
                    return Err("give balls-in-bins:t with steps, or balls-in-bins with dataset terms, not both".into())
                }
                (None, None) => {
                    return Err("balls-in-bins needs its steps per epoch: balls-in-bins:t (or dataset terms)".into())
                }
            };
            if matches!(joins, Joins::CyclicBins(_)) {
                Split::cyclic_bins(s, sigma, total, per)
            } else {
                Split::balls_in_bins(s, sigma, total, per)
            }
            .map(Run::Split)
            .map_err(refusal)
        }
    }
}

/// The Monte Carlo estimator a line asks for (`monte_carlo`: draws per direction), if any:
/// balls-in-bins with a `band:` strategy only (an estimate beside the certified bound).
fn estimator(a: &Asked, r: &Run) -> Result<Option<BinsMc>, String> {
    let Some(n) = a.monte_carlo else {
        return Ok(None);
    };
    let Run::Split(Split {
        strategy,
        steps,
        steps_per_epoch: Some(per),
        cyclic,
        ..
    }) = r
    else {
        return Err("monte_carlo applies to balls-in-bins participation (an estimate beside its certified upper bound); the other participations have certified answers".into());
    };
    if !(n.fract() == 0.0 && n >= 0.0 && n <= u64::MAX as f64) {
        return Err(format!(
            "monte_carlo must be a whole number of draws, got {n}"
        ));
    }
    BinsMc::new(strategy, *steps, *per, *cyclic, n as u64, mc::SEED)
        .map(Some)
        .map_err(refusal)
}

/// An estimate's fields and its line of text (`name` its quantity; `at` what it is for).
fn estimate_out(
    m: &mut Map<String, Value>,
    name: &str,
    x: &Estimate,
    extra: Option<(&str, f64)>,
) -> String {
    let meaning = "a Monte Carlo estimate of the mechanism's value (seeded draws of the exact privacy loss over every balls-in-bins pattern; 99 % interval from the standard error), not a bound: use the certified value for a guarantee";
    let mut e = Map::new();
    e.insert(name.into(), json!(x.value));
    e.insert("interval".into(), json!([x.low, x.high]));
    if let Some((k, v)) = extra {
        e.insert(k.into(), json!(v));
    }
    e.insert("confidence".into(), json!(0.99));
    e.insert("samples".into(), json!(x.samples));
    e.insert("seed".into(), json!(x.seed));
    e.insert("meaning".into(), json!(meaning));
    m.insert("estimate".into(), Value::Object(e));
    let g = |v: f64| format!("{v:.6}");
    format!(
        "Monte Carlo estimate (not a bound): {name} ~ {} (99 % interval [{}, {}]; {} draws per direction, seed {}){}\n",
        g(x.value),
        g(x.low),
        g(x.high),
        x.samples,
        x.seed,
        extra.map_or(String::new(), |(k, v)| format!("; {k} = {v:.6}"))
    )
}

fn upper6(x: f64) -> String {
    decimal::fixed(x, 6, Dir::Up)
}

/// Six decimals, rounded outward (up for an upper end, down for a lower one).
fn six(x: f64, up: bool) -> String {
    decimal::fixed(x, 6, if up { Dir::Up } else { Dir::Down })
}

/// The strategy in words: its bands, or its family where it is not banded.
fn family(r: &Run, a: &MatrixAnswer) -> String {
    let strategy = match r {
        Run::Exact(x) => &x.strategy,
        Run::Split(x) => &x.strategy,
        Run::Whole(x) => x.strategy(),
    };
    match (strategy, a.bands) {
        (Strategy::Blt { decay, .. }, _) => format!(
            "BLT with {} buffer{} (not banded)",
            decay.len(),
            if decay.len() == 1 { "" } else { "s" }
        ),
        (Strategy::Tree, _) => "binary-tree aggregation (not banded)".into(),
        (_, Some(1)) => "1 band".into(),
        (_, Some(b)) => format!("{b} bands"),
        (_, None) => "not banded".into(),
    }
}

/// The sentence every answer carries: the strategy, the participation, the adjacency, σ's unit.
fn scheme(r: &Run, a: &MatrixAnswer) -> String {
    let n = |k: u64, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    let joins = match r {
        Run::Exact(MinSep { q, .. }) | Run::Whole(Whole { q, .. }) => format!(
            "{}-min-separated cyclic Poisson participation ({}, q = {q} within the partition a step samples)",
            a.partitions,
            n(a.partitions, "partition", "partitions"),
        ),
        Run::Split(Split { q: Some(q), .. }) => {
            format!("Poisson sampling at every step (q = {q})")
        }
        Run::Split(sp) if sp.cyclic => format!(
            "cyclic balls-in-bins participation (each example in one bin of {} drawn once, and in every step of that bin: jax-privacy's BallsInBinsSampling)",
            sp.steps_per_epoch.unwrap_or(0)
        ),
        Run::Split(sp) => format!(
            "balls-in-bins participation (each example in one of every {} steps, a fresh uniform draw each epoch)",
            sp.steps_per_epoch.unwrap_or(0)
        ),
    };
    format!(
        "correlated noise: {}, columns normalised by the largest norm {:.6}; {joins}; add/remove adjacency; sigma = noise std / (clipping norm x largest column norm)",
        family(r, a),
        a.column_norm,
    )
}

fn how(r: &Run, a: &MatrixAnswer) -> String {
    let (per, cyclic) = match r {
        Run::Split(x) => (x.steps_per_epoch, x.cyclic),
        Run::Exact(_) | Run::Whole(_) => (None, false),
    };
    if let (Run::Whole(w), Some(d), None) = (r, a.sensitivity, a.op_norm) {
        let sigma = a.composed.first().map_or(0.0, |x| x.0);
        return format!(
            "without amplification (Choquette-Choo et al., arXiv 2211.06530): the worst partition ({}) takes part in at most {} (their columns overlap), so the run is one Gaussian mechanism of L2 sensitivity {} (clipping norms x largest column norm; |C| summed over the partition's columns) at noise multiplier {}; {}",
            a.worst_partition,
            if a.participations == 1 { "1 step".to_string() } else { format!("{} steps", a.participations) },
            decimal::fixed(d, 6, Dir::Up),
            decimal::fixed(sigma, 6, Dir::Down),
            if a.certified_lower {
                "exact: C >= 0 and q = 1, aligned gradients attain it".to_string()
            } else if w.q < 1.0 {
                format!("an upper bound: sampling within the partition (q = {}) is not used", w.q)
            } else {
                "an upper bound: C has negative entries, |C| bounds its Gram sum".to_string()
            }
        );
    }
    let composed: Vec<String> = a
        .composed
        .iter()
        .map(|(s, n)| match per {
            Some(t) if cyclic => format!(
                "one round of one-in-{t} random allocation at sigma {} (a bin's {} steps together)",
                decimal::fixed(*s, 6, Dir::Down),
                r_steps(r).div_ceil(t)
            ),
            Some(t) => format!(
                "{n} epochs of one-in-{t} random allocation at sigma {}",
                decimal::fixed(*s, 6, Dir::Down)
            ),
            None => format!("{n} at sigma {}", decimal::fixed(*s, 6, Dir::Down)),
        })
        .collect();
    if let (Some(cm), Some(t)) = (a.common_mode, per) {
        return format!(
            "an upper bound by post-processing (docs/correlated-noise.md): with C >= 0 the dominating pair is the {t} bins' release vectors for aligned gradients (Choquette-Choo, Ganesh, Haque, Steinke, Thakurta, arXiv 2410.06266), and their Gram matrix is at most a^2 11' + s^2 I with a = {}, s = {} (verified by Cholesky), so the release is a post-processing of one Gaussian mechanism at sigma/a (what every bin shares: sigma {}) composed with one round of one-in-{t} random allocation at sigma/s = {}; no lower bound is claimed",
            decimal::fixed(cm.a, 6, Dir::Up),
            decimal::fixed(cm.s, 6, Dir::Up),
            if cm.a > 0.0 { decimal::fixed(sigma_of(r) / cm.a, 6, Dir::Down) } else { "none".to_string() },
            decimal::fixed(sigma_of(r) / cm.s, 6, Dir::Down),
        );
    }
    if let Some(l) = a.op_norm {
        return format!(
            "an upper bound by post-processing (docs/correlated-noise.md): C's operator norm is at most {} (Schur's test), so the release is a post-processing of DP-SGD with the same participation at sigma/{}: {}; no lower bound is claimed",
            decimal::fixed(l, 6, Dir::Up),
            decimal::fixed(l, 6, Dir::Up),
            composed.join(", ")
        );
    }
    if !a.certified_lower {
        let b = a.bands.unwrap_or(0);
        return format!(
            "an upper bound by noise splitting (docs/correlated-noise.md): the noise split over the {b} residue classes of the steps, each step its own Gaussian block at sigma/sqrt({b}), composed: {}{}; no lower bound is claimed (about sqrt(bands) looser in sigma than the amplification analyses that condition on the past)",
            composed.join(", "),
            if a.rounded { " (sensitivities rounded up on a 1/256-octave grid)" } else { "" }
        );
    }
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

fn sigma_of(r: &Run) -> f64 {
    match r {
        Run::Exact(x) => x.sigma,
        Run::Split(x) => x.sigma,
        Run::Whole(x) => x.sigma,
    }
}

fn r_steps(r: &Run) -> u64 {
    match r {
        Run::Exact(x) => x.steps,
        Run::Split(x) => x.steps,
        Run::Whole(x) => x.steps(),
    }
}

/// The fields every answer carries.
fn fields(r: &Run, a: &MatrixAnswer, spec: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("strategy".into(), json!(spec));
    let (joins, q, sigma, steps) = match r {
        Run::Exact(MinSep { q, sigma, .. }) | Run::Whole(Whole { q, sigma, .. }) => (
            format!("min-sep:{}", a.partitions),
            Some(*q),
            *sigma,
            r_steps(r),
        ),
        Run::Split(x) => match x.steps_per_epoch {
            Some(t) if x.cyclic => (format!("cyclic-bins:{t}"), None, x.sigma, x.steps),
            Some(t) => (format!("balls-in-bins:{t}"), None, x.sigma, x.steps),
            None => ("poisson".to_string(), x.q, x.sigma, x.steps),
        },
    };
    m.insert("participation".into(), json!(joins));
    if let Some(q) = q {
        m.insert("q".into(), json!(q));
    }
    m.insert("sigma".into(), json!(sigma));
    m.insert("steps".into(), json!(steps));
    m.insert("bands".into(), json!(a.bands));
    let whole = matches!(r, Run::Whole(_));
    if a.certified_lower || whole {
        m.insert("partitions".into(), json!(a.partitions));
        m.insert("worst_partition".into(), json!(a.worst_partition));
        m.insert("participations".into(), json!(a.participations));
    }
    if let Some(d) = a.sensitivity {
        m.insert("sensitivity".into(), json!(d));
    }
    if let Some(cm) = a.common_mode {
        m.insert("common_mode".into(), json!(cm));
    }
    m.insert("column_norm".into(), json!(a.column_norm));
    m.insert("composed".into(), json!(a.composed));
    m.insert("rounded".into(), json!(a.rounded));
    m.insert(
        "bound".into(),
        json!(match (whole, a.certified_lower) {
            _ if a.common_mode.is_some() => "upper bound (common mode)",
            _ if a.op_norm.is_some() => "upper bound (operator norm)",
            (true, true) => "bracket (Gaussian mechanism, no amplification)",
            (true, false) => "upper bound (no amplification)",
            (false, true) => "bracket (exact reduction)",
            (false, false) => "upper bound (noise splitting)",
        }),
    );
    m.insert("scheme".into(), json!(scheme(r, a)));
    m
}

/// "epsilon = …" or "epsilon <= …" with what its ends mean.
fn headline(name: &str, x: &MatrixAnswer, at: String, fmt: impl Fn(f64, bool) -> String) -> String {
    if x.certified_lower {
        format!(
            "{name} = {} (certified upper bound; bracket [{}, {}]: the true {name} lies within) at {at}",
            fmt(x.bracket.upper, true),
            fmt(x.bracket.lower, false),
            fmt(x.bracket.upper, true)
        )
    } else {
        format!(
            "{name} <= {} (certified upper bound; no lower bound claimed) at {at}",
            fmt(x.bracket.upper, true)
        )
    }
}

/// The answer's ends under `name` (the certified upper bound) and `name_lower` (where the
/// lower end is certified).
fn ends(m: &mut Map<String, Value>, name: &str, x: &MatrixAnswer) {
    m.insert(name.into(), json!(x.bracket.upper));
    if x.certified_lower {
        m.insert(format!("{name}_lower"), json!(x.bracket.lower));
    }
}

/// The answer to a correlated-noise query.
fn answer(a: &Asked) -> Result<Report, String> {
    match a.cmd.as_str() {
        "epsilon" => {
            let d = need(a.delta, "delta")?;
            let r = run(a, need(a.sigma, "sigma")?)?;
            let x = r.epsilon(d).map_err(refusal)?;
            let mut m = fields(&r, &x, &a.spec);
            m.insert("delta".into(), json!(d));
            ends(&mut m, "epsilon", &x);
            let mut text = format!(
                "{}\n{}\n{}\n",
                headline("epsilon", &x, format!("delta = {d}"), six),
                scheme(&r, &x),
                how(&r, &x)
            );
            if let Some(mc) = estimator(a, &r)? {
                let sigma = need(a.sigma, "sigma")?;
                text += &estimate_out(&mut m, "epsilon", &mc.epsilon(sigma, d), None);
            }
            Ok(Report { fields: m, text })
        }
        "delta" => {
            let eps = need(a.epsilon, "epsilon")?;
            let r = run(a, need(a.sigma, "sigma")?)?;
            let x = r.delta(eps).map_err(refusal)?;
            let mut m = fields(&r, &x, &a.spec);
            m.insert("epsilon".into(), json!(eps));
            ends(&mut m, "delta", &x);
            let mut text = format!(
                "{}\n{}\n{}\n",
                headline("delta", &x, format!("epsilon = {eps}"), |v, _| format!(
                    "{v:e}"
                )),
                scheme(&r, &x),
                how(&r, &x)
            );
            if let Some(mc) = estimator(a, &r)? {
                let sigma = need(a.sigma, "sigma")?;
                text += &estimate_out(&mut m, "delta", &mc.delta(sigma, eps), None);
            }
            Ok(Report { fields: m, text })
        }
        "profile" => {
            if a.delta.is_some() || a.monte_carlo.is_some() {
                return Err("a correlated run's profile takes epsilon (its largest epsilon shown), not delta or monte_carlo".into());
            }
            let r = run(a, need(a.sigma, "sigma")?)?;
            // The ε at δ = 1e-12 bounds the attack's own profile (as for the sampling schemes).
            let x = r.epsilon(1e-12).map_err(refusal)?;
            let mut m = fields(&r, &x, &a.spec);
            scheme::profile_fields(&|g| r.profile(g), x.bracket.upper, a.epsilon, &mut m)?;
            m.insert(
                "meaning".into(),
                json!(if x.certified_lower {
                    "each delta: [lower, upper], both certified; tpr_max: a certified bound on any membership-inference attack's true-positive rate at that false-positive rate"
                } else {
                    "each delta: upper is a certified upper bound (lower 0: none claimed); tpr_max: a certified bound on any membership-inference attack's true-positive rate at that false-positive rate"
                }),
            );
            // Without amplification and not exact: at each ε the smaller of the two routes.
            let both = if matches!(r, Run::Whole(_)) && !x.certified_lower {
                "# (at each epsilon, the smaller of the Gaussian route's and the operator-norm route's upper bounds; the line above is the route at delta = 1e-12)\n"
            } else {
                ""
            };
            let text = format!(
                "# privacy profile: {}\n# {}\n{both}{}",
                scheme(&r, &x),
                how(&r, &x),
                scheme::profile_rows(&m)
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
            ends(&mut m, "epsilon", &x);
            let mut text = format!(
                "sigma = {} (the smallest found, to 1e-4 relative, whose certified epsilon {} <= {target} at delta = {d})\n{}\n{}\n",
                decimal::fixed(sigma, 6, Dir::Up),
                upper6(x.bracket.upper),
                scheme(&r, &x),
                how(&r, &x)
            );
            if let Some(mc) = estimator(a, &r)? {
                // The σ where the estimated δ at the target ε is δ, searched below the
                // certified σ; the estimate there is δ's (the quantity sampled).
                let (s_mc, at) = mc.calibrate(target, d, sigma);
                text += &estimate_out(&mut m, "delta", &at, Some(("sigma", s_mc)));
            }
            Ok(Report { fields: m, text })
        }
        other => Err(format!(
            "a strategy applies to epsilon, delta, calibrate and profile, not to {other}"
        )),
    }
}

/// The smallest σ (to 1e-4 relative, on the safe side) whose certified ε is at most the
/// target, by the engine's σ search (`engine::search::smallest_sigma`, as the sampling schemes'
/// calibration): ε's upper end falls as σ grows. The strategy is parsed once; a σ the
/// accountant refuses (too small for its domain: random allocation below σ ≈ 0.7) counts as
/// one that misses the target.
fn calibrate(a: &Asked, d: f64, target: f64) -> Result<(f64, Run, MatrixAnswer), String> {
    let mut r = run(a, 1.0)?;
    // Cyclic bins with the common-mode split: searched on the split alone (both routes at
    // every σ would double the work), then on the bounding composition too when it meets the
    // target just below the split's σ; the smaller σ is kept.
    if let Run::Split(
        sp @ Split {
            common: Some(_), ..
        },
    ) = &mut r
    {
        sp.only = Some(true);
        // Started from above: σ where one Gaussian mechanism of the modes' largest norm
        // (√(a² + s²)) meets the target — evaluations below the answer cost the most.
        let guess = sp.common.map_or(1.0, |cm| {
            (cm.a * cm.a + cm.s * cm.s).sqrt() / gaussian_mu_for(target, d)
        });
        let first = search(&mut r, d, target, guess);
        let (common_sigma, left) = match &first {
            Ok((s, _, _)) => (*s, s * (1.0 - 2e-4)),
            Err(_) => (f64::INFINITY, f64::INFINITY),
        };
        let mut other = run(a, left.min(engine::MAX_SIGMA))?;
        if let Run::Split(o) = &mut other {
            o.only = Some(false);
        }
        let meets = left.is_finite() && other.epsilon(d).is_ok_and(|x| x.bracket.upper <= target);
        return match (first, meets || common_sigma.is_infinite()) {
            (Ok(x), false) => Ok(x),
            (first, _) => match (first, search(&mut other, d, target, 1.0)) {
                (Ok(x), Ok(y)) => Ok(if y.0 < x.0 { y } else { x }),
                (Ok(x), Err(_)) => Ok(x),
                (_, y) => y,
            },
        };
    }
    search(&mut r, d, target, 1.0)
}

/// The μ at which the Gaussian mechanism's certified ε at δ is the target (bisection on the
/// closed form; 1 where it cannot be found): a starting point only.
fn gaussian_mu_for(target: f64, d: f64) -> f64 {
    if engine::pld::gaussian_epsilon(1.0, d).is_err() {
        return 1.0;
    }
    // (In ln μ: the target's μ may be anywhere in [1e-6, 1e3].)
    use crate::engine::math::{exp, ln};
    let meets = |u: f64| engine::pld::gaussian_epsilon(exp(u), d).is_ok_and(|b| b.upper <= target);
    let (lo, _) = engine::search::bisect((ln(1e-6), ln(1e3)), meets, 80, |_, _| false);
    exp(lo)
}

/// The smallest σ (to 1e-4 relative) whose certified ε for the run `r` is at most the target.
fn search(
    r: &mut Run,
    d: f64,
    target: f64,
    guess: f64,
) -> Result<(f64, Run, MatrixAnswer), String> {
    let at = |sigma: f64| {
        r.set_sigma(sigma);
        match r.epsilon(d) {
            Ok(x) => Ok((x.bracket.upper, Some(x))),
            Err(engine::Error::PldBudget { .. }) => Ok((f64::INFINITY, None)),
            Err(e) => Err(e),
        }
    };
    let unreachable = |b: f64| {
        if b.is_finite() {
            engine::Error::SigmaUnreachable { target, epsilon: b }
        } else {
            engine::Error::Strategy(format!(
                "no sigma up to {:e} brings the certified epsilon to {target} at delta = {d} (the accountant refuses there)",
                engine::MAX_SIGMA
            ))
        }
    };
    // (The answer read at the σ found is kept, not computed again.)
    let (sigma, found) =
        engine::search::smallest_sigma_with(target, guess, unreachable, at).map_err(refusal)?;
    r.set_sigma(sigma);
    let x = match found.flatten() {
        Some(x) => x,
        None => r.epsilon(d).map_err(refusal)?,
    };
    Ok((sigma, r.clone(), x))
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
        "monte-carlo" => a.monte_carlo = Some(num(v)?),
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
    for (name, value) in super::request::flag_words(rest, &["json"])? {
        let Some(value) = value else {
            json = true;
            continue;
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
