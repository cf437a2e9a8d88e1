//! The native command line (`sgm-rdp`), kept in the library so tests can call
//! it without spawning processes. `run` returns the text for stdout or a
//! one-line error for stderr.

use crate::engine::{self, bounds, calibrate, Conversion, Run, Sgm};
use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};

pub const USAGE: &str = "usage: sgm-rdp <rdp|epsilon|delta|calibrate|bounds|compare|batch> [--q Q] [--sigma S] \
[--steps T] [--delta D] [--epsilon E] [--orders A,B,..] [--alpha A] [--conversion improved|classic] \
[--target sigma|steps] [--dataset-size N --batch-size B --epochs E] [--json]";

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
    dataset: [Option<f64>; 3],
    json: bool,
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
        if name == "--json" {
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
            "--dataset-size" => f.dataset[0] = Some(num(key, &value)?),
            "--batch-size" => f.dataset[1] = Some(num(key, &value)?),
            "--epochs" => f.dataset[2] = Some(num(key, &value)?),
            _ => return Err(format!("unknown flag '{name}' ({USAGE})")),
        }
        i += 1;
    }
    Ok(f)
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
    let mut f = parse(rest)?;
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
    let e = |e: engine::Error| e.to_string();
    match cmd.as_str() {
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
                    m.q(),
                    m.sigma()
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
            let o = run.epsilon(d, f.conv()).map_err(e)?;
            if f.json {
                Ok(json!({"q": run.sgm().q(), "sigma": run.sgm().sigma(), "steps": run.steps(), "delta": d,
                    "conversion": f.conv(), "epsilon": o.value, "alpha": o.alpha,
                    "grid_epsilon": o.grid_value, "grid_alpha": o.grid_alpha, "at_edge": o.at_edge})
                .to_string())
            } else {
                Ok(format!(
                    "epsilon = {:.6} at alpha = {:.4} (continuous)\nepsilon = {:.6} at alpha = {} (best of {} orders){}\n",
                    o.value, o.alpha, o.grid_value, o.grid_alpha, run.orders().len(),
                    if o.at_edge { "\nwarning: the optimal order is at the edge of the orders; widen --orders" } else { "" }
                ))
            }
        }
        "delta" => {
            let run = Run::new(f.sgm()?, f.steps()?, f.orders()).map_err(e)?;
            let eps = need(f.epsilon, "epsilon")?;
            let o = run.delta(eps, f.conv()).map_err(e)?;
            if f.json {
                Ok(json!({"epsilon": eps, "delta": o.value, "alpha": o.alpha, "grid_delta": o.grid_value,
                    "grid_alpha": o.grid_alpha, "at_edge": o.at_edge}).to_string())
            } else {
                Ok(format!(
                    "delta = {:.6e} at alpha = {:.4}\n",
                    o.value, o.alpha
                ))
            }
        }
        "calibrate" => {
            let eps = need(f.epsilon, "epsilon")?;
            let d = need(f.delta, "delta")?;
            match f
                .target
                .as_deref()
                .unwrap_or(if f.sigma.is_some() { "steps" } else { "sigma" })
            {
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
                            "sigma = {:.7} gives epsilon = {:.6} (alpha = {:.4})\n",
                            c.sigma, c.epsilon, c.alpha
                        ))
                    }
                }
                "steps" => {
                    let c = calibrate::steps(eps, d, f.sgm()?, &f.orders(), f.conv()).map_err(e)?;
                    if f.json {
                        Ok(serde_json::to_string(&c).map_err(|x| x.to_string())?)
                    } else {
                        Ok(format!(
                            "steps = {} gives epsilon = {:.6} (alpha = {:.4})\n",
                            c.steps, c.epsilon, c.alpha
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

fn batch_value(line: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(line).map_err(|x| format!("invalid JSON: {x}"))?;
    let Value::Object(mut obj) = v else {
        return Err("each line must be a JSON object".into());
    };
    let e = |e: engine::Error| e.to_string();
    let q = field(&obj, "q")?.ok_or("missing q")?;
    let sigma = field(&obj, "sigma")?.ok_or("missing sigma")?;
    let m = Sgm::new(q, sigma).map_err(e)?;
    if let Some(alpha) = field(&obj, "alpha")? {
        let log_a = engine::rdp::log_a(&m, alpha).map_err(e)?;
        let rdp = engine::rdp::rdp(&m, alpha).map_err(e)?;
        obj.insert("rdp".into(), json!(rdp));
        obj.insert("log_a".into(), json!(log_a));
        return Ok(Value::Object(obj));
    }
    let steps = field(&obj, "steps")?.ok_or("need alpha, or steps and delta")?;
    let delta = field(&obj, "delta")?.ok_or("missing delta")?;
    let steps = engine::params::steps_from_f64(steps).map_err(e)?;
    let o = Run::with_default_orders(m, steps)
        .map_err(e)?
        .epsilon(delta, Conversion::Improved)
        .map_err(e)?;
    obj.insert("epsilon".into(), json!(o.value));
    obj.insert("alpha".into(), json!(o.alpha));
    Ok(Value::Object(obj))
}

/// `sgm-rdp batch`: JSON lines in, one JSON line out per input line, in order.
pub fn batch(input: impl BufRead, mut out: impl Write) -> std::io::Result<()> {
    for line in input.lines() {
        let line = line?;
        writeln!(out, "{}", batch_line(&line))?;
    }
    out.flush()
}
