//! The commands on parsed flags for Poisson sampling of one example under add/remove
//! adjacency (other runs go through [`super::scheme`]).

use super::*;
use crate::engine::answer::{answer, Asked};

/// A band count: a whole number ≥ 1.
pub(super) fn bands_of(b: f64) -> Result<u64, String> {
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
/// `from_dataset`: q was derived as b·B/N (the rate within the partition a step samples).
pub(super) fn with_bands(
    mut r: Report,
    b: u64,
    training: u64,
    accounted: u64,
    from_dataset: bool,
) -> Report {
    r.fields.insert("bands".into(), json!(b));
    r.fields.insert("training_steps".into(), json!(training));
    r.fields.insert("steps".into(), json!(accounted));
    r.text += &bands_note(b, training, accounted, from_dataset);
    r
}

/// The line that says how a banded run was accounted (command line and batch).
pub(super) fn bands_note(b: u64, training: u64, accounted: u64, from_dataset: bool) -> String {
    let rate = if from_dataset {
        format!("q = {b}*batch_size/dataset_size (each step samples one of {b} partitions of dataset_size/{b} examples)")
    } else {
        "the given q (the rate within the partition each step samples)".to_string()
    };
    format!(
        "BandMF / DP-FTRL with {b} bands (b-min-separated participation, strategy columns of norm <= 1): {training} training steps accounted as {accounted} steps of DP-SGD at {rate} and the same sigma (Choquette-Choo et al., arXiv 2306.08153)\n"
    )
}

/// One command on parsed flags (Poisson sampling, add/remove, one example per user).
pub(super) fn command(f: &Request, cmd: &str) -> Result<Report, String> {
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
            let rows: Vec<Value> = orders
                .iter()
                .zip(&vals)
                .map(|(a, r)| json!({"alpha": a, "rdp": r, "rdp_total": r * steps as f64}))
                .collect();
            let mut s = format!(
                "# q = {}, sigma = {}, steps = {steps}\n# alpha  rdp_per_step  rdp_total\n",
                engine::error::show(m.q()),
                engine::error::show(m.sigma())
            );
            for (a, r) in orders.iter().zip(&vals) {
                s += &format!("{a}\t{r:.12e}\t{:.12e}\n", r * steps as f64);
            }
            Ok(Report::new(
                json!({"q": m.q(), "sigma": m.sigma(), "steps": steps, "orders": rows}),
                s,
            ))
        }
        "epsilon" => {
            let run = Run::new(f.sgm()?, f.steps()?, f.orders()).map_err(e)?;
            let d = need(f.delta, "delta")?;
            let acct = f.accountant.unwrap_or(Accountant::Rdp);
            let a = answer(&run, Asked::Epsilon(d), acct, f.conv(), false).map_err(e)?;
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
            if let Some(o) = a.rdp {
                obj.insert("conversion".into(), json!(f.conv()));
                put_optimum(&mut obj, "epsilon", &o);
                out += &format!(
                    "epsilon = {} at alpha = {:.4} (continuous)\nepsilon = {} at alpha = {} (best of {} orders){}\n",
                    up6(o.value), o.alpha, up6(o.grid_value), o.grid_alpha, run.orders().len(),
                    if o.at_edge { "\nwarning: the optimal order is at the edge of the orders; widen --orders" } else { "" }
                );
            }
            match a.tight {
                Some(Ok((b, grid))) => {
                    put_bracket(&mut obj, acct, "epsilon", b.upper, b.lower);
                    obj.insert("pld_grid".into(), json!(grid));
                    out += &format!(
                        "epsilon = {} (PLD, certified upper bound; bracket [{}, {}], worse direction: {})\n",
                        up6(b.upper), down6(b.lower), up6(b.upper), grid.worst
                    );
                }
                Some(Err(why)) => unavailable(&mut obj, &mut out, "epsilon", &why.to_string()),
                None => {}
            }
            Ok(Report {
                fields: obj,
                text: out,
            })
        }
        "delta" => {
            let run = Run::new(f.sgm()?, f.steps()?, f.orders()).map_err(e)?;
            let eps = need(f.epsilon, "epsilon")?;
            let acct = f.accountant.unwrap_or(Accountant::Rdp);
            let a = answer(&run, Asked::Delta(eps), acct, f.conv(), false).map_err(e)?;
            let mut out = String::new();
            let mut obj = Map::new();
            obj.insert("epsilon".into(), json!(eps));
            if let Some(o) = a.rdp {
                put_optimum(&mut obj, "delta", &o);
                out += &format!(
                    "delta = {} at alpha = {:.4}\n",
                    decimal::sci(o.value, 6, Dir::Up),
                    o.alpha
                );
            }
            match a.tight {
                Some(Ok((b, _))) => {
                    put_bracket(&mut obj, acct, "delta", b.upper, b.lower);
                    out += &format!(
                        "delta = {} (PLD, certified upper bound; bracket [{}, {}])\n",
                        decimal::sci(b.upper, 6, Dir::Up),
                        decimal::sci(b.lower, 6, Dir::Down),
                        decimal::sci(b.upper, 6, Dir::Up)
                    );
                }
                Some(Err(why)) => unavailable(&mut obj, &mut out, "delta", &why.to_string()),
                None => {}
            }
            Ok(Report {
                fields: obj,
                text: out,
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
                None => engine::pld::profile_grid(f.epsilon).map_err(|top| {
                    format!(
                        "--epsilon (the profile's largest epsilon) must be in (0, 1e4], got {top}"
                    )
                })?,
            };
            let pts = engine::pld::profile(m, t, &grid).map_err(e)?;
            // The attack bound from its own profile, whatever range is displayed.
            let risk = engine::pld::attack_profile(m, t).map_err(e)?;
            let fprs = engine::pld::DEFAULT_FPRS;
            let tprs: Vec<f64> = fprs
                .iter()
                .map(|&x| engine::pld::attack_tpr(&risk, x))
                .collect::<Result<_, _>>()
                .map_err(e)?;
            let mut s = String::from("# epsilon  delta_upper  delta_lower (PLD privacy profile)\n");
            for p in &pts {
                s += &format!(
                    "{:.4}\t{}\t{}\n",
                    p.epsilon,
                    decimal::sci(p.delta.upper, 6, Dir::Up),
                    decimal::sci(p.delta.lower, 6, Dir::Down)
                );
            }
            for (a, b) in fprs.iter().zip(&tprs) {
                s += &format!("# membership inference: at false-positive rate {a}, true-positive rate <= {}\n", up6(*b));
            }
            Ok(Report::new(
                json!({"q": m.q(), "sigma": m.sigma(), "steps": t, "profile": pts,
                    "attack": fprs.iter().zip(&tprs).map(|(a, b)| json!({"fpr": a, "tpr_max": b})).collect::<Vec<_>>()}),
                s,
            ))
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
                        Ok(Report::new(
                            json!({"sigma": sig, "epsilon": a.epsilon.upper, "epsilon_lower": a.epsilon.lower, "accountant": "pld"}),
                            format!("sigma = {sig:.7} gives epsilon = {} (PLD, certified upper bound; bracket [{}, {}])\n",
                                up6(a.epsilon.upper), down6(a.epsilon.lower), up6(a.epsilon.upper)),
                        ))
                    }
                    "steps" => {
                        let (t, a) = engine::pld::calibrate_steps(eps, d, f.sgm()?).map_err(e)?;
                        Ok(Report::new(
                            json!({"steps": t, "epsilon": a.epsilon.upper, "epsilon_lower": a.epsilon.lower, "accountant": "pld"}),
                            format!("steps = {t} gives epsilon = {} (PLD, certified upper bound; bracket [{}, {}])\n",
                                up6(a.epsilon.upper), down6(a.epsilon.lower), up6(a.epsilon.upper)),
                        ))
                    }
                    other => Err(format!(
                        "--target must be 'sigma' or 'steps', got '{other}'"
                    )),
                };
            }
            if f.accountant.is_some_and(|a| a.for_calibration().is_none()) {
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
                    Ok(Report::new(
                        serde_json::to_value(c).map_err(|x| x.to_string())?,
                        format!(
                            "sigma = {:.7} gives epsilon = {} (alpha = {:.4}){}\n",
                            c.sigma,
                            up6(c.epsilon),
                            c.alpha,
                            if c.at_lower_limit {
                                "\nnote: the smallest sigma searched already meets the target (a smaller sigma may too)"
                            } else {
                                ""
                            }
                        ),
                    ))
                }
                "steps" => {
                    let c = calibrate::steps(eps, d, f.sgm()?, &f.orders(), f.conv()).map_err(e)?;
                    Ok(Report::new(
                        serde_json::to_value(c).map_err(|x| x.to_string())?,
                        format!(
                            "steps = {} gives epsilon = {} (alpha = {:.4}){}\n",
                            c.steps,
                            up6(c.epsilon),
                            c.alpha,
                            if c.at_upper_limit {
                                "\nnote: the largest number of steps supported still meets the target"
                            } else {
                                ""
                            }
                        ),
                    ))
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
            let list: Vec<Value> = rows
                .iter()
                .map(|(a, ex, bs)| json!({"alpha": a, "exact": ex, "bounds": bs}))
                .collect();
            let fields = json!({"q": m.q(), "sigma": m.sigma(), "orders": list, "max_alpha": mo});
            {
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
                Ok(Report::new(fields, s))
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
            let listed: Vec<Value> = rows
                .iter()
                .map(|r| json!({"tool": r.tool, "epsilon": r.epsilon, "note": r.note}))
                .collect();
            let fields = json!({"q": i.q, "sigma": i.sigma, "steps": steps, "delta": d,
                "opacus_q": oq, "opacus_steps": ot, "rows": listed});
            {
                let mut s = String::new();
                for r in rows {
                    let v = r.shown().unwrap_or_else(|| "n/a".into());
                    s += &format!("{:<48} {:>10}  {}\n", r.tool, v, r.note);
                }
                s += "Poisson sampling with rate q, add/remove adjacency; sigma = noise std / clipping norm\n";
                Ok(Report::new(fields, s))
            }
        }
        "compare" => {
            let d = need(f.delta, "delta")?;
            let routes = engine::compare::compare(f.sgm()?, f.steps()?, d).map_err(e)?;
            let fields = json!({"q": f.q, "sigma": f.sigma, "steps": f.steps()?, "delta": d, "routes": routes});
            {
                let mut s = String::new();
                for r in routes {
                    let v = r.epsilon.map(up6).unwrap_or_else(|| "n/a".into());
                    s += &format!("{:<62} {:>12}  {}\n", r.name, v, r.note.unwrap_or_default());
                }
                Ok(Report::new(fields, s))
            }
        }
        other => Err(format!("unknown command '{other}' ({USAGE})")),
    }
}

/// A group size: a whole number in [1, 256].
pub(super) fn group_size(k: f64) -> Result<u32, String> {
    if k.fract() == 0.0 && (1.0..=256.0).contains(&k) {
        Ok(k as u32)
    } else {
        Err(format!(
            "--group-size must be a whole number in [1, 256], got {}",
            engine::error::show(k)
        ))
    }
}

/// `gdp`: μ-GDP with its bracket and fit, the advantage, and the trade-off values.
pub(super) fn gdp(f: &Request) -> Result<Report, String> {
    let (m, t) = (f.sgm()?, f.steps()?);
    let g = engine::pld::fdp::gdp(m, t).map_err(|e| e.to_string())?;
    let mut o = serde_json::Map::new();
    o.insert("q".into(), json!(m.q()));
    o.insert("sigma".into(), json!(m.sigma()));
    o.insert("steps".into(), json!(t));
    o.extend(gdp_fields(&g));
    Ok(Report {
        fields: o,
        text: gdp_text(&g, "add/remove-one adjacency, Poisson sampling"),
    })
}

/// `calibrate --tpr A --fpr B` / `--advantage A`: the smallest σ (or, with --sigma or
/// --target steps, the most steps) whose certified attack bound meets the target.
pub(super) fn calibrate_risk(f: &Request) -> Result<Report, String> {
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
    let shown = match value.as_f64() {
        Some(v) if key == "sigma" => format!("{v:.7}"),
        _ => value.to_string(),
    };
    let mut o = json!({key: value, name: bound, "target": target, "accountant": "pld"});
    if let Risk::Tpr { fpr } = risk {
        o["fpr"] = json!(fpr);
    }
    Ok(Report::new(
        o,
        format!("{key} = {shown} gives {what} <= {} (certified, target {target}; tight accountant, add/remove-one, Poisson sampling)\n", up6(bound)),
    ))
}
