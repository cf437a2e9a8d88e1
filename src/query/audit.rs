//! `audit` and `audit-plan`: canary scores → empirical lower bounds beside the run's
//! certificate, and how many canaries an audit needs (issue 65; docs/audit.md). One function
//! under every front end: the command line's `audit`/`audit-plan`, batch lines
//! `"command": "audit"` / `"audit_plan"`, Python's `audit()`/`audit_plan()` and the JS API's
//! `audit()`/`auditPlan()`.

use super::*;
use crate::engine::audit::{self, Options, Scores};

/// Default significance: each bound holds with probability ≥ 95 %.
const SIGNIFICANCE: f64 = 0.05;
/// FPRs at which the empirical TPR is reported unless others are asked.
const FPRS: [f64; 3] = [1e-3, 1e-2, 1e-1];

/// The keys an audit line takes besides the run's (which are `gdp`'s).
pub const AUDIT_KEYS: [&str; 7] = [
    "in_scores",
    "out_scores",
    "significance",
    "delta",
    "fprs",
    "threshold",
    "lower_is_member",
];

/// An audit's own inputs.
#[derive(Debug, Clone)]
struct Asked {
    significance: f64,
    delta: Option<f64>,
    fprs: Vec<f64>,
    threshold: Option<f64>,
    lower_is_member: bool,
}

impl Default for Asked {
    /// 95 % confidence, no δ, the FPRs 0.001, 0.01, 0.1, the rank tests, higher = member.
    fn default() -> Asked {
        Asked {
            significance: SIGNIFICANCE,
            delta: None,
            fprs: FPRS.to_vec(),
            threshold: None,
            lower_is_member: false,
        }
    }
}

/// The run's keys (the command line's flags, dashed or not) → a [`Request`], refusing any
/// key `gdp` does not take. None when no run is given.
fn run_of(pairs: &[(String, String)], cli: bool) -> Result<Option<Request>, String> {
    let mut f = Request {
        cli,
        ..Request::default()
    };
    for (k, v) in pairs {
        let key = k.replace('_', "-");
        let Some(flag) = flag_named(&key) else {
            return Err(format!(
                "unknown key '{k}' (an audit takes {} and the run's terms: {})",
                AUDIT_KEYS.join(", "),
                allowed("gdp").join(", ")
            ));
        };
        if flag.name == "json" || flag.name == "delta" || !allowed("gdp").contains(&flag.name) {
            return Err(format!(
                "'{k}' does not apply to an audit's run (its terms: {})",
                allowed("gdp").join(", ")
            ));
        }
        set(&mut f, flag.name, &key, v)?;
        f.given.push(flag.name);
    }
    Ok((!f.given.is_empty()).then_some(f))
}

/// The run's certified ε at δ (when δ is given) and its certified μ, each an upper bound.
fn certificate(run: &Request, delta: Option<f64>) -> Result<(Option<f64>, f64), String> {
    let mu = super::answer(
        "gdp",
        Request {
            delta: None,
            ..run.clone()
        },
    )?
    .fields
    .get("mu")
    .and_then(Value::as_f64)
    .ok_or("the run has no certified mu")?;
    let eps = match delta {
        Some(d) => {
            let at = Request {
                delta: Some(d),
                accountant: run.is_plain().then_some(Accountant::Pld),
                ..run.clone()
            };
            super::answer("epsilon", at)?
                .fields
                .get("epsilon")
                .and_then(Value::as_f64)
        }
        None => None,
    };
    Ok((eps, mu))
}

/// The run's sampling scheme, adjacency and unit, as every answer states them.
fn scheme_words(run: &Request) -> String {
    let mut s = format!(
        "{} sampling, {} adjacency",
        run.sampling.name(),
        run.adjacency.name()
    );
    if let Some(k) = run.group {
        s += &format!(", users of at most {k} examples");
    }
    s + "; sigma = noise std / clipping norm"
}

fn lower6(x: f64) -> String {
    decimal::fixed(x, 6, Dir::Down)
}

fn upper6(x: f64) -> String {
    decimal::fixed(x, 6, Dir::Up)
}

/// The audit of the scores, with the run's certificate beside it when a run is given.
fn report(
    members: Vec<f64>,
    non_members: Vec<f64>,
    a: &Asked,
    run: Option<Request>,
) -> Result<Report, String> {
    let e = |e: engine::Error| e.to_string();
    let mut scores = Scores::new(members, non_members).map_err(e)?;
    if a.lower_is_member {
        scores = scores.negated();
    }
    // Without δ the ε bounds are read at δ = 0 would mean pure DP, which no Gaussian run has:
    // they are left out, the μ bounds stay.
    let opts = Options::new(
        a.significance,
        a.delta.unwrap_or(1e-300),
        a.fprs.clone(),
        a.threshold,
    )
    .map_err(e)?;
    let r = audit::audit(&scores, &opts);
    let mut fields = Map::new();
    let mut put = |k: &str, v: Value| {
        fields.insert(k.to_string(), v);
    };
    put("command", json!("audit"));
    put("members", json!(r.members));
    put("non_members", json!(r.non_members));
    put("significance", json!(r.significance));
    put("auc", json!(r.auc));
    put("roc", json!(r.roc));
    put("mu_lower_gdp", json!(r.gdp.mu));
    put("mu_lower_one_run_fdp", json!(r.one_run_fdp.mu));
    let mu_lower = r.gdp.mu.max(r.one_run_fdp.mu);
    put("mu_lower", json!(mu_lower));
    let mut gdp = json!(r.gdp);
    let mut fdp = json!(r.one_run_fdp);
    let conf = 100.0 * (1.0 - a.significance);
    let mut text = format!(
        "audit of {} member and {} non-member scores ({}); each bound holds with probability >= {conf}% under its assumptions (docs/audit.md)\n",
        r.members,
        r.non_members,
        if a.lower_is_member { "lower score = more likely a member" } else { "higher score = more likely a member" }
    );
    text += &format!(
        "AUC {:.6}\n# fpr  threshold  tpr  [tpr {conf}% interval]  fpr_upper\n",
        r.auc
    );
    for p in &r.roc {
        text += &format!(
            "{:e}\t{}\t{:.6}\t[{}, {}]\t{}\n",
            p.fpr,
            p.threshold,
            p.tpr,
            lower6(p.tpr_lower),
            upper6(p.tpr_upper),
            upper6(p.fpr_upper)
        );
    }
    text += &format!(
        "mu >= {} (two-sample, Nasr et al. 2023: every mu-GDP claim below is rejected; {} tests)\nmu >= {} (one run, Mahloujifar et al. f-DP; {} canaries, {} of {} guesses right)\n",
        lower6(r.gdp.mu), r.gdp.tests, lower6(r.one_run_fdp.mu), r.one_run_fdp.canaries, r.one_run_fdp.correct, r.one_run_fdp.guesses
    );
    let mut eps_lower = None;
    if let Some(d) = a.delta {
        put("delta", json!(d));
        put(
            "epsilon_lower_clopper_pearson",
            json!(r.clopper_pearson.epsilon),
        );
        put("clopper_pearson", json!(r.clopper_pearson));
        put("epsilon_lower_one_run", json!(r.one_run.epsilon));
        put("one_run", json!(r.one_run));
        put("epsilon_gdp_estimate", json!(r.gdp.epsilon));
        put("epsilon_one_run_fdp_estimate", json!(r.one_run_fdp.epsilon));
        let (best, method) = if r.clopper_pearson.epsilon >= r.one_run.epsilon {
            (r.clopper_pearson.epsilon, "clopper_pearson")
        } else {
            (r.one_run.epsilon, "one_run")
        };
        put("epsilon_lower", json!(best));
        put("epsilon_lower_method", json!(method));
        eps_lower = Some(best);
        text += &format!(
            "epsilon >= {} at delta {d:e} (two-sample Clopper-Pearson; {} tests, threshold {}: TPR >= {}, FPR <= {})\nepsilon >= {} at delta {d:e} (one run, Steinke-Nasr-Jagielski; {} canaries, {} of {} guesses right)\nestimates if the run's trade-off is Gaussian-shaped (not bounds): epsilon ~ {} (from mu >= {}), {} (one-run f-DP)\n",
            lower6(r.clopper_pearson.epsilon), r.clopper_pearson.tests, r.clopper_pearson.threshold, lower6(r.clopper_pearson.tpr_lower), upper6(r.clopper_pearson.fpr_upper),
            lower6(r.one_run.epsilon), r.one_run.canaries, r.one_run.correct, r.one_run.guesses,
            lower6(r.gdp.epsilon), lower6(r.gdp.mu), lower6(r.one_run_fdp.epsilon)
        );
    } else {
        for o in [&mut gdp, &mut fdp] {
            if let Value::Object(m) = o {
                m.remove("epsilon");
            }
        }
        text += "(give --delta for the epsilon lower bounds)\n";
    }
    put("gdp", gdp);
    put("one_run_fdp", fdp);
    if let Some(run) = run {
        let (eps_cert, mu_cert) = certificate(&run, a.delta)?;
        put("certified_mu", json!(mu_cert));
        let mu_breach = mu_lower > mu_cert;
        let mut breach = mu_breach;
        if let (Some(c), Some(l)) = (eps_cert, eps_lower) {
            put("certified_epsilon", json!(c));
            put("epsilon_ratio", json!(l / c));
            breach |= l > c;
        }
        put("consistent", json!(!breach));
        let scheme = scheme_words(&run);
        let verdict = if breach {
            format!(
                "VIOLATION: the audit's lower bound (epsilon >= {}, mu >= {}) exceeds the certified upper bound of the run given (epsilon <= {}, mu <= {}; {scheme}) at {conf}% confidence: the training code or its configuration does not match the run accounted (or this is the {}% chance of a false alarm)",
                eps_lower.map_or("-".into(), lower6), lower6(mu_lower), eps_cert.map_or("-".into(), upper6), upper6(mu_cert), 100.0 * a.significance
            )
        } else {
            match (eps_cert, eps_lower) {
                (Some(c), Some(l)) => format!(
                    "consistent with the certificate: the audit shows epsilon >= {} ({:.1}% of the certified epsilon <= {}) and mu >= {} (certified mu <= {}); {scheme}",
                    lower6(l), 100.0 * l / c, upper6(c), lower6(mu_lower), upper6(mu_cert)
                ),
                _ => format!(
                    "consistent with the certificate: the audit shows mu >= {} ({:.1}% of the certified mu <= {}); {scheme}",
                    lower6(mu_lower), 100.0 * mu_lower / mu_cert, upper6(mu_cert)
                ),
            }
        };
        text += &verdict;
        text.push('\n');
        put("verdict", json!(verdict));
    }
    Ok(Report::new(Value::Object(fields), text))
}

/// Numbers from a file: one per line, or a CSV column (`column`, or the first column; a
/// first line that is not a number is a header). Blank lines and `#` comments are skipped.
fn read_column(path: &str, column: Option<&str>) -> Result<Vec<f64>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| {
        let l = l.trim();
        !l.is_empty() && !l.starts_with('#')
    });
    let mut col = 0usize;
    let mut out = Vec::new();
    let first = lines.next().ok_or_else(|| format!("{path}: no scores"))?;
    let cells: Vec<&str> = first.1.split(',').map(str::trim).collect();
    let header = cells.iter().any(|c| c.parse::<f64>().is_err());
    if header {
        if let Some(name) = column {
            col = cells
                .iter()
                .position(|c| c.trim_matches('"') == name)
                .ok_or_else(|| format!("{path}: no column '{name}' in its header"))?;
        } else if let Some(i) = cells.iter().position(|c| c.trim_matches('"') == "score") {
            col = i;
        }
    }
    let mut take = |(n, line): (usize, &str)| -> Result<(), String> {
        let cell = line.split(',').nth(col).map(str::trim).unwrap_or("");
        let x: f64 = cell.parse().map_err(|_| {
            format!(
                "{path}:{}: '{}' is not a number",
                n + 1,
                cell.chars().take(32).collect::<String>()
            )
        })?;
        out.push(x);
        Ok(())
    };
    if !header {
        take(first)?;
    }
    for l in lines {
        take(l)?;
    }
    Ok(out)
}

/// `--scores FILE`: a CSV with a header naming a `score` column and a membership column
/// (`member`, `in` or `label`: 1/0, true/false, in/out).
fn read_labelled(path: &str) -> Result<(Vec<f64>, Vec<f64>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    labelled(&text, path)
}

/// A labelled CSV's text (`path` names it in messages) → members' and non-members' scores.
fn labelled(text: &str, path: &str) -> Result<(Vec<f64>, Vec<f64>), String> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim().starts_with('#'));
    let (_, head) = lines.next().ok_or_else(|| format!("{path}: empty"))?;
    let names: Vec<&str> = head
        .split(',')
        .map(|c| c.trim().trim_matches('"'))
        .collect();
    let score = names
        .iter()
        .position(|c| *c == "score")
        .ok_or_else(|| format!("{path}: the header needs a 'score' column"))?;
    let label = names
        .iter()
        .position(|c| matches!(*c, "member" | "in" | "label"))
        .ok_or_else(|| {
            format!("{path}: the header needs a 'member' column (1 = trained on, 0 = not)")
        })?;
    let (mut ins, mut outs) = (Vec::new(), Vec::new());
    for (n, line) in lines {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let at = |i: usize| cells.get(i).copied().unwrap_or("");
        let x: f64 = at(score)
            .parse()
            .map_err(|_| format!("{path}:{}: score '{}' is not a number", n + 1, at(score)))?;
        match at(label).to_ascii_lowercase().as_str() {
            "1" | "true" | "in" | "member" => ins.push(x),
            "0" | "false" | "out" | "non-member" => outs.push(x),
            other => {
                return Err(format!(
                    "{path}:{}: member must be 1/0, true/false or in/out, got '{other}'",
                    n + 1
                ))
            }
        }
    }
    Ok((ins, outs))
}

fn number(name: &str, v: &str) -> Result<f64, String> {
    decimal::parse(v).ok_or_else(|| {
        format!(
            "--{name} must be a number, got '{}'",
            v.chars().take(32).collect::<String>()
        )
    })
}

fn fpr_list(v: &str) -> Result<Vec<f64>, String> {
    v.split(',').map(|x| number("fpr", x.trim())).collect()
}

/// The command line's `audit` and `audit-plan` words.
pub(super) fn words(cmd: &str, rest: &[String]) -> Result<String, String> {
    let plan = cmd == "audit-plan";
    let mut asked = Asked::default();
    let (mut ins, mut outs, mut labelled, mut fraction, mut column) =
        (None, None, None, None, None);
    let mut json = false;
    let mut run = Vec::new();
    for (name, value) in super::request::flag_words(rest, &["json", "lower-is-member"])? {
        let Some(value) = value else {
            if name == "json" {
                json = true;
            } else if plan {
                return Err("--lower-is-member does not apply to audit-plan".into());
            } else {
                asked.lower_is_member = true;
            }
            continue;
        };
        let own = |n: &str| !plan || matches!(n, "significance" | "delta" | "fraction");
        match name.as_str() {
            "in" | "out" | "scores" | "column" | "fpr" | "threshold" | "fraction"
            | "significance" | "delta"
                if !own(&name) || (name == "fraction" && !plan) =>
            {
                return Err(format!("--{name} does not apply to {cmd}"));
            }
            "in" => ins = Some(value),
            "out" => outs = Some(value),
            "scores" => labelled = Some(value),
            "column" => column = Some(value),
            "fpr" => asked.fprs = fpr_list(&value)?,
            "threshold" => asked.threshold = Some(number("threshold", &value)?),
            "fraction" => fraction = Some(number("fraction", &value)?),
            "significance" => asked.significance = number("significance", &value)?,
            "delta" => asked.delta = Some(number("delta", &value)?),
            _ => run.push((name, value)),
        }
    }
    let run = run_of(&run, true)?;
    if plan {
        let run = run.ok_or("audit-plan needs the run (--q, --sigma, --steps or --dataset-size, --batch-size, --epochs, --sigma; and --delta)")?;
        let delta = asked
            .delta
            .ok_or("audit-plan needs --delta (the certified epsilon is read there)")?;
        return Ok(
            plan_report(run, delta, asked.significance, fraction.unwrap_or(0.5))?.print(json),
        );
    }
    let (members, non_members) = match (ins, outs, labelled) {
        (Some(i), Some(o), None) => (read_column(&i, column.as_deref())?, read_column(&o, column.as_deref())?),
        (None, None, Some(s)) => {
            if column.is_some() {
                return Err("--column applies to --in/--out files".into());
            }
            read_labelled(&s)?
        }
        _ => return Err("audit needs --in FILE --out FILE (members' and non-members' scores, one per line or a CSV column) or --scores FILE (a CSV with 'score' and 'member' columns)".into()),
    };
    Ok(report(members, non_members, &asked, run)?.print(json))
}

/// The page's audit: a labelled CSV's text (as pasted or read), audited at δ beside the run
/// shown → the answer's fields.
pub fn audit_csv(
    text: &str,
    lower_is_member: bool,
    delta: f64,
    run: Request,
) -> Result<Map<String, Value>, String> {
    let (members, non_members) = labelled(text, "the scores")?;
    let asked = Asked {
        delta: Some(delta),
        lower_is_member,
        ..Asked::default()
    };
    Ok(report(members, non_members, &asked, Some(run))?.fields)
}

/// A JSON array of finite numbers.
fn numbers(obj: &Map<String, Value>, k: &str) -> Result<Vec<f64>, String> {
    match obj.get(k) {
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_f64().ok_or_else(|| {
                    format!("{k}[{i}] must be a number, got {}", clip(&x.to_string()))
                })
            })
            .collect(),
        None | Some(Value::Null) => Err(format!("an audit line needs {k} (an array of scores)")),
        Some(other) => Err(format!(
            "{k} must be an array of numbers, got {}",
            clip(&other.to_string())
        )),
    }
}

fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

/// An audit's own keys from a line; the rest are the run's.
fn asked_of(obj: &Map<String, Value>) -> Result<(Asked, Vec<(String, String)>), String> {
    let mut asked = Asked::default();
    let mut run = Vec::new();
    for (k, v) in obj {
        match k.as_str() {
            "command" | "in_scores" | "out_scores" | "fraction" => {}
            "significance" => asked.significance = line::field(obj, k)?.unwrap_or(SIGNIFICANCE),
            "delta" => asked.delta = line::field(obj, k)?,
            "threshold" => asked.threshold = line::field(obj, k)?,
            "fprs" => asked.fprs = numbers(obj, k)?,
            "lower_is_member" => {
                asked.lower_is_member =
                    v.as_bool().ok_or("lower_is_member must be true or false")?
            }
            _ => run.push((
                k.clone(),
                match v {
                    Value::Number(n) => n.to_string(),
                    Value::String(t) => t.clone(),
                    _ => {
                        return Err(format!(
                            "{k} must be a number or a string, got {}",
                            clip(&v.to_string())
                        ))
                    }
                },
            )),
        }
    }
    Ok((asked, run))
}

/// A batch line `{"command": "audit", "in_scores": [...], "out_scores": [...], ...}` → the
/// answer's fields (the score arrays are not echoed).
pub fn audit_line(obj: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    if obj.contains_key("fraction") {
        return Err("fraction applies to audit_plan lines".into());
    }
    let (asked, run) = asked_of(obj)?;
    let run = run_of(&run, false)?;
    let r = report(
        numbers(obj, "in_scores")?,
        numbers(obj, "out_scores")?,
        &asked,
        run,
    )?;
    Ok(r.fields)
}

/// A batch line `{"command": "audit_plan", <run>, "delta": D, ...}` → the plan's fields.
pub fn audit_plan_line(obj: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    for k in [
        "in_scores",
        "out_scores",
        "fprs",
        "threshold",
        "lower_is_member",
    ] {
        if obj.contains_key(k) {
            return Err(format!("{k} applies to audit lines"));
        }
    }
    let (asked, run) = asked_of(obj)?;
    let run = run_of(&run, false)?.ok_or("an audit_plan line needs the run (q, sigma, steps or dataset_size, batch_size, epochs, sigma)")?;
    let delta = asked.delta.ok_or("an audit_plan line needs delta")?;
    let fraction = line::field(obj, "fraction")?.unwrap_or(0.5);
    Ok(plan_report(run, delta, asked.significance, fraction)?.fields)
}

/// The plan for the run: its certified ε at δ and μ, then the engine's plan.
fn plan_report(
    run: Request,
    delta: f64,
    significance: f64,
    fraction: f64,
) -> Result<Report, String> {
    let (eps, mu) = certificate(&run, Some(delta))?;
    let eps = eps.ok_or("the run has no certified epsilon at this delta")?;
    let p = audit::plan(mu, eps, delta, significance, fraction).map_err(|e| e.to_string())?;
    let scheme = scheme_words(&run);
    let mut text = format!(
        "audit plan for the run certified at epsilon <= {} (delta {delta:e}), mu <= {} ({scheme}); a typical audit by an attack as strong as the certificate allows, if the trade-off is Gaussian at that mu (estimates, not bounds); {}% confidence\n# canaries  two-sample CP epsilon  two-sample mu (its epsilon)  one-run epsilon  one-run ceiling\n",
        upper6(eps), upper6(mu), 100.0 * (1.0 - significance)
    );
    for r in &p.rows {
        text += &format!(
            "{}\t{:.4}\t{:.4} ({:.4})\t{:.4}\t{:.4}\n",
            r.canaries, r.clopper_pearson, r.gdp_mu, r.gdp_epsilon, r.one_run, r.one_run_ceiling
        );
    }
    let need = |n: Option<u64>, what: &str| {
        match n {
        Some(n) => format!("{what}: about {n} canaries show epsilon >= {:.4} ({}% of the certified epsilon)\n", fraction * eps, 100.0 * fraction),
        None => format!("{what}: not within 10^7 canaries for epsilon >= {:.4} ({}% of the certified epsilon)\n", fraction * eps, 100.0 * fraction),
    }
    };
    text += &need(
        p.two_sample_canaries.map(|n| 2 * n),
        "two-sample (half trained on)",
    );
    text += &need(p.one_run_canaries, "one run");
    text += "(two-sample rows: that many members and as many non-members; one-run rows: that many canaries in all, half trained on)\n";
    let mut fields = match serde_json::to_value(&p) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    fields.insert("command".into(), json!("audit_plan"));
    fields.insert("certified_epsilon".into(), json!(eps));
    fields.insert("certified_mu".into(), json!(mu));
    Ok(Report { fields, text })
}
