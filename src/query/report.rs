//! How an answer prints: its JSON fields and its text lines.

use super::*;

/// What a command answers, built once: its JSON fields and its text lines; `--json`
/// chooses which is printed (no command decides twice).
#[derive(Debug, Default)]
pub struct Report {
    /// The answer's fields (what `--json` prints and a batch line carries).
    pub fields: Map<String, Value>,
    /// The answer as the command line prints it.
    pub text: String,
}

impl Report {
    /// A report from a JSON object's fields (anything else is no fields) and its text.
    pub(super) fn new(fields: Value, text: String) -> Report {
        let fields = match fields {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        Report { fields, text }
    }
    /// What `--json` (or not) prints.
    pub fn print(self, json: bool) -> String {
        if json {
            Value::Object(self.fields).to_string()
        } else {
            self.text
        }
    }
}

/// An optimum's JSON fields: `name` (ε or δ), `alpha`, `grid_<name>`, `grid_alpha`, `at_edge`.
pub(super) fn put_optimum(obj: &mut Map<String, Value>, name: &str, o: &Optimum) {
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
pub(super) fn put_bracket(
    obj: &mut Map<String, Value>,
    acct: Accountant,
    base: &str,
    upper: f64,
    lower: f64,
) {
    let key = if acct == Accountant::Pld {
        base.to_string()
    } else {
        format!("{base}_pld")
    };
    obj.insert(format!("{key}_lower"), json!(lower));
    obj.insert(key, json!(upper));
}

/// "both" without a PLD answer: `<name>_pld: null` and `pld_error` in JSON, one line of
/// words in text.
pub(super) fn unavailable(obj: &mut Map<String, Value>, out: &mut String, name: &str, why: &str) {
    obj.insert(format!("{name}_pld"), Value::Null);
    obj.insert("pld_error".into(), json!(why));
    *out += &format!("{name} (PLD): unavailable: {why}\n");
}

/// An ε (six decimals) or a δ (seven significant digits), rounded in direction `dir`: an
/// upper end printed stays an upper bound, a lower end a lower bound.
pub(super) fn fmt_val(name: &str, v: f64, dir: Dir) -> String {
    if name == "epsilon" {
        decimal::fixed(v, 6, dir)
    } else {
        decimal::sci(v, 6, dir)
    }
}

/// An upper end with six decimals, rounded up.
pub(super) fn up6(v: f64) -> String {
    decimal::fixed(v, 6, Dir::Up)
}

/// A lower end with six decimals, rounded down.
pub(super) fn down6(v: f64) -> String {
    decimal::fixed(v, 6, Dir::Down)
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

/// The text of a μ-GDP answer; `run` names the adjacency and the sampling.
pub(crate) fn gdp_text(g: &engine::pld::fdp::GdpAnswer, run: &str) -> String {
    let mut s = format!(
        "mu = {} (mu-GDP, certified for tests with FPR and FNR >= {:e}; bracket [{}, {}]); fit: regret {:.1e}\n",
        up6(g.mu.upper), g.fpr_floor, down6(g.mu.lower), up6(g.mu.upper), g.regret
    );
    s +=
        &format!(
        "advantage (TPR - FPR) <= {} (certified; bracket [{}, {}])\n# fpr  tpr_max (certified)\n",
        up6(g.advantage.upper), down6(g.advantage.lower), up6(g.advantage.upper)
    );
    for (a, b) in &g.tradeoff {
        s += &format!("{a:.6e}\t{}\n", decimal::sci(1.0 - b, 6, Dir::Up));
    }
    s += &format!("# {run}; sigma = noise std / clipping norm\n");
    s
}

/// A μ-GDP report at a δ as well: the ε the Gaussian trade-off with the reported μ has at δ
/// (increasing in μ, read at μ's upper end). It holds where μ does — for tests whose FPR and
/// FNR are at least the report's floor — and is never smaller than the accountant's own ε at
/// δ, which reads the run's profile rather than its μ; it is labelled as implied, not as the
/// run's certified ε.
pub(crate) fn gdp_at_delta(r: &mut Report, delta: f64) -> Result<(), String> {
    let get = |k: &str| r.fields.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
    let (mu, floor) = (get("mu"), get("fpr_floor"));
    let e = engine::pld::gaussian_epsilon(mu, delta).map_err(|e| e.to_string())?;
    r.fields.insert("delta".into(), json!(delta));
    r.fields.insert("epsilon_from_mu".into(), json!(e.upper));
    r.text += &format!(
        "epsilon at delta {delta:e} implied by mu = {}: {} (the Gaussian trade-off's, for tests with FPR and FNR >= {floor:e} as mu is; the run's own epsilon at this delta, from sgm-rdp epsilon, is at most this)\n",
        up6(mu),
        up6(e.upper)
    );
    Ok(())
}

/// A profile report at a δ as well: the tight accountant's ε there (its certified bracket, as
/// `epsilon --accountant pld` answers), so the profile's summary and the headline agree.
pub(crate) fn profile_at_delta(
    r: &mut Report,
    delta: f64,
    eps: &Map<String, Value>,
) -> Result<(), String> {
    let get = |k: &str| eps.get(k).and_then(Value::as_f64);
    let (up, lo) = match (get("epsilon"), get("epsilon_lower")) {
        (Some(u), Some(l)) => (u, l),
        _ => return Err("the tight epsilon at --delta is unavailable for this run".into()),
    };
    r.fields.insert("delta".into(), json!(delta));
    r.fields.insert("epsilon_at_delta".into(), json!(up));
    r.fields.insert("epsilon_at_delta_lower".into(), json!(lo));
    let meaning = eps.get("meaning").and_then(Value::as_str).unwrap_or(
        "epsilon: certified upper bound; epsilon_lower: certified lower bound (tight PLD bracket)",
    );
    r.fields
        .insert("epsilon_at_delta_meaning".into(), json!(meaning));
    r.text += &format!(
        "# at delta {delta:e}: epsilon <= {} ([{}, {}]; {meaning})\n",
        up6(up),
        down6(lo),
        up6(up)
    );
    Ok(())
}
