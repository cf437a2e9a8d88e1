//! `check`: a training configuration in its library's own terms (Opacus, dp_accounting,
//! jax-privacy, TF Privacy) → what that library prints for it (computed here by our own
//! re-implementation of its accountant and defaults), the certified ε of the code that ran,
//! and each mismatch by name with its cause, its size and the fix (issue 63; the catalogue
//! is docs/check.md). One function under every front end: the command line's `check`, a
//! batch line `"command": "check"`, Python's `check()` and the JS API's `check()`.

use super::*;
use crate::engine::math::exp;
use crate::engine::pld::{self, Bracket};

mod input;
use crate::render::library::opacus_orders;
use input::event_run;
pub use input::from_snippet;

/// The keys a configuration may carry (the libraries' own names; `number_of_examples`,
/// `num_epochs` and `target_delta` are TF Privacy's and Opacus' names for three of them).
pub const CHECK_KEYS: [&str; 29] = [
    "command",
    "library",
    "noise_multiplier",
    "max_grad_norm",
    "noise_std",
    "noise_added_to",
    "sample_rate",
    "dataset_size",
    "number_of_examples",
    "batch_size",
    "epochs",
    "num_epochs",
    "steps",
    "delta",
    "target_delta",
    "poisson_sampling",
    "shuffle",
    "drop_last",
    "sampling",
    "sampler",
    "sampler_num_samples",
    "accountant",
    "accumulation_steps",
    "accumulation",
    "neighboring",
    "used_microbatching",
    "max_examples_per_user",
    "dp_event",
    "max_physical_batch_size",
];

/// Also accepted: Opacus' `make_private_with_epsilon` target.
const TARGET_KEY: &str = "target_epsilon";

/// The library whose accountant printed the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    Opacus,
    DpAccounting,
    JaxPrivacy,
    TfPrivacy,
}

impl Library {
    fn parse(s: &str) -> Result<Library, String> {
        match s.to_ascii_lowercase().replace('-', "_").as_str() {
            "opacus" => Ok(Library::Opacus),
            "dp_accounting" => Ok(Library::DpAccounting),
            "jax_privacy" => Ok(Library::JaxPrivacy),
            "tf_privacy" | "tensorflow_privacy" => Ok(Library::TfPrivacy),
            _ => Err(format!(
                "library must be 'opacus', 'dp_accounting', 'jax_privacy' or 'tf_privacy', got '{s}'"
            )),
        }
    }
    /// Its key, as the configuration names it.
    fn key(self) -> &'static str {
        match self {
            Library::Opacus => "opacus",
            Library::DpAccounting => "dp_accounting",
            Library::JaxPrivacy => "jax_privacy",
            Library::TfPrivacy => "tf_privacy",
        }
    }
    fn name(self) -> &'static str {
        match self {
            Library::Opacus => "Opacus",
            Library::DpAccounting => "dp_accounting",
            Library::JaxPrivacy => "jax-privacy",
            Library::TfPrivacy => "TF Privacy",
        }
    }
}

/// How batches were drawn by the code that ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drawn {
    Poisson,
    Shuffled,
    FixedOrder,
}

/// One mismatch between what the library printed and what the code guarantees.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Its catalogue name (docs/check.md).
    pub id: &'static str,
    /// "unsafe" (the printed ε is below what the code guarantees, or no certified number
    /// exists), "caution" (the printed ε is not what it seems), "info".
    pub severity: &'static str,
    /// One sentence a reviewer can paste.
    pub finding: String,
    pub fix: String,
    pub source: &'static str,
}

/// The configuration's fields, read with their names in every message.
struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    fn get<'k>(&self, keys: &[&'k str]) -> Option<(&'k str, &Value)> {
        keys.iter()
            .find_map(|k| self.0.get(*k).filter(|v| !v.is_null()).map(|v| (*k, v)))
    }
    fn num(&self, keys: &[&str]) -> Result<Option<f64>, String> {
        match self.get(keys) {
            None => Ok(None),
            Some((k, Value::Number(n))) => match n.as_f64() {
                Some(x) if x.is_finite() => Ok(Some(x)),
                _ => Err(format!("{k} must be a finite number")),
            },
            Some((k, Value::String(s))) => match s.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(Some(x)),
                _ => Err(format!("{k} must be a finite number, got '{s}'")),
            },
            Some((k, v)) => Err(format!("{k} must be a number, got {v}")),
        }
    }
    fn positive(&self, keys: &[&str]) -> Result<Option<f64>, String> {
        match self.num(keys)? {
            Some(x) if x <= 0.0 => Err(format!("{} must be > 0, got {x}", keys[0])),
            other => Ok(other),
        }
    }
    fn whole(&self, keys: &[&str]) -> Result<Option<u64>, String> {
        match self.num(keys)? {
            None => Ok(None),
            Some(x) if x >= 1.0 && x.fract() == 0.0 && x <= engine::MAX_STEPS as f64 => {
                Ok(Some(x as u64))
            }
            Some(x) => Err(format!("{} must be a whole number >= 1, got {x}", keys[0])),
        }
    }
    fn flag(&self, key: &str) -> Result<Option<bool>, String> {
        match self.get(&[key]) {
            None => Ok(None),
            Some((_, Value::Bool(b))) => Ok(Some(*b)),
            Some((_, Value::String(s))) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some((_, Value::String(s))) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some((k, v)) => Err(format!("{k} must be true or false, got {v}")),
        }
    }
    fn text(&self, key: &str) -> Result<Option<String>, String> {
        match self.get(&[key]) {
            None => Ok(None),
            Some((_, Value::String(s))) => Ok(Some(s.to_ascii_lowercase().replace('-', "_"))),
            Some((k, v)) => Err(format!("{k} must be a string, got {v}")),
        }
    }
    fn one_of(&self, key: &str, allowed: &[&str]) -> Result<Option<String>, String> {
        match self.text(key)? {
            Some(s) if !allowed.contains(&s.as_str()) => Err(format!(
                "{key} must be one of {}, got '{s}'",
                allowed.join(", ")
            )),
            other => Ok(other),
        }
    }
}

/// ε at `delta` as the library's RDP accountant prints it on `orders` (its own fractional-order
/// RDP: [`engine::library_rdp::library_epsilon`]), and whether its best order is the first or last.
fn rdp_on(
    q: f64,
    sigma: f64,
    steps: u64,
    orders: Vec<f64>,
    delta: f64,
) -> Result<(f64, bool), String> {
    let m = Sgm::new(q, sigma).map_err(|e| e.to_string())?;
    let (e, a) = engine::library_rdp::library_epsilon(&m, steps, &orders, delta)
        .map_err(|e| e.to_string())?;
    let edge = orders.first() == Some(&a) || orders.last() == Some(&a);
    Ok((e, edge))
}

/// The check of one configuration: its fields (`printed_*`, `certified_*`, `findings`)
/// and the text a reviewer reads.
pub fn check(obj: &Map<String, Value>) -> Result<Report, String> {
    let unknown: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !CHECK_KEYS.contains(k) && *k != TARGET_KEY)
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "unknown key(s) {} for check (allowed: {}, {TARGET_KEY})",
            unknown.join(", "),
            CHECK_KEYS[1..].join(", ")
        ));
    }
    // A dp_accounting DpEvent stands for noise_multiplier, sample_rate and steps.
    if let Some(ev) = obj.get("dp_event").filter(|v| !v.is_null()) {
        let mut filled = obj.clone();
        filled.remove("dp_event");
        let (q, sigma, t) = event_run(ev)?;
        for (k, v) in [
            ("noise_multiplier", sigma),
            ("sample_rate", q),
            ("steps", t as f64),
        ] {
            match Fields(obj).num(&[k])? {
                Some(given) if given != v => {
                    return Err(format!("{k} {given} contradicts the dp_event's {v}"))
                }
                _ => {
                    filled.insert(k.into(), json!(v));
                }
            }
        }
        if obj.contains_key("dataset_size")
            || obj.contains_key("batch_size")
            || obj.contains_key("epochs")
        {
            return Err("a dp_event gives the rate and steps: leave out dataset_size, batch_size and epochs".into());
        }
        let mut r = check(&filled)?;
        r.fields.insert(
            "dp_event_run".into(),
            json!({"sample_rate": q, "noise_multiplier": sigma, "steps": t}),
        );
        return Ok(r);
    }
    let f = Fields(obj);
    let lib = Library::parse(
        &f.text("library")?
            .ok_or("missing library (opacus, dp_accounting, jax_privacy or tf_privacy)")?,
    )?;
    let sigma_lib = f
        .positive(&["noise_multiplier"])?
        .ok_or("missing noise_multiplier")?;
    let delta = f
        .num(&["delta", "target_delta"])?
        .ok_or("missing delta (target_delta)")?;
    if !(delta > 0.0 && delta < 1.0) {
        return Err(format!("delta must be in (0, 1), got {delta}"));
    }
    let n = f.whole(&["dataset_size", "number_of_examples"])?;
    let b = f.whole(&["batch_size"])?;
    let epochs = f.positive(&["epochs", "num_epochs"])?;
    let steps = f.whole(&["steps"])?;
    let rate = f.num(&["sample_rate"])?;
    if let Some(q) = rate {
        if !(q > 0.0 && q <= 1.0) {
            return Err(format!("sample_rate must be in (0, 1], got {q}"));
        }
    }
    if let (Some(n), Some(b)) = (n, b) {
        if b > n {
            return Err(format!("batch_size {b} exceeds dataset_size {n}"));
        }
    }
    let k = f.whole(&["accumulation_steps"])?.unwrap_or(1);
    if k > 256 {
        return Err(format!("accumulation_steps must be at most 256, got {k}"));
    }
    let independent = f
        .one_of("accumulation", &["logical", "independent"])?
        .as_deref()
        == Some("independent");
    let replace = f
        .one_of("neighboring", &["add_remove", "replace_one"])?
        .as_deref()
        == Some("replace_one");
    let users = f.whole(&["max_examples_per_user"])?.unwrap_or(1);
    let microbatching = f.flag("used_microbatching")?;
    if microbatching.is_some() && lib != Library::TfPrivacy {
        return Err("used_microbatching is TF Privacy's (library tf_privacy)".into());
    }
    let halve = lib == Library::TfPrivacy && microbatching.unwrap_or(true);
    let drop_last = f.flag("drop_last")?.unwrap_or(false);
    let weighted = f.one_of("sampler", &["uniform", "weighted"])?.as_deref() == Some("weighted");
    let target = f.num(&[TARGET_KEY])?;
    // How the code drew its batches.
    let poisson_flag = f.flag("poisson_sampling")?;
    let shuffle = f.flag("shuffle")?;
    let drawn =
        match (
            lib,
            f.one_of(
                "sampling",
                &["poisson", "shuffle", "shuffled", "fixed_order"],
            )?,
        ) {
            (Library::Opacus, Some(_)) => return Err(
                "Opacus' batching is poisson_sampling (with the loader's shuffle), not sampling"
                    .into(),
            ),
            (Library::Opacus, None) if !poisson_flag.unwrap_or(true) => {
                if shuffle.unwrap_or(true) {
                    Drawn::Shuffled
                } else {
                    Drawn::FixedOrder
                }
            }
            (Library::Opacus, None) => Drawn::Poisson,
            (_, Some(s)) if s.starts_with("shuffle") => Drawn::Shuffled,
            (_, Some(s)) if s == "fixed_order" => Drawn::FixedOrder,
            _ => {
                if poisson_flag.is_some() {
                    return Err(
                    "poisson_sampling is Opacus' (give sampling: poisson, shuffle or fixed_order)"
                        .into(),
                );
                }
                Drawn::Poisson
            }
        };
    let accountant = f.one_of("accountant", &["prv", "rdp", "gdp", "pld"])?;
    let accountant = match (lib, accountant.as_deref()) {
        (Library::Opacus, None) => "prv",
        // jax-privacy's training accountant is dp_accounting's PLD accountant.
        (Library::JaxPrivacy, None) => "pld",
        (Library::Opacus, Some(a @ ("prv" | "rdp" | "gdp"))) => a,
        (_, None) => "rdp",
        (Library::Opacus, Some(a)) | (_, Some(a @ ("prv" | "gdp"))) => {
            return Err(format!(
                "accountant '{a}' is not {}'s (it takes {})",
                lib.name(),
                if lib == Library::Opacus {
                    "prv, rdp or gdp"
                } else {
                    "rdp or pld"
                }
            ))
        }
        (_, Some(a)) => {
            if a == "pld" {
                "pld"
            } else {
                "rdp"
            }
        }
    };

    // The library's view: the (q, steps) it was told or derived, per noise addition.
    let (q_lib, t_lib, per_epoch) = match (rate, n, b) {
        (Some(q), _, _) => {
            let t = match (steps, epochs) {
                (Some(t), _) => t,
                (None, Some(e)) => (e / q).ceil() as u64,
                _ => return Err("give steps or epochs with sample_rate".into()),
            };
            (q, t, None)
        }
        (None, Some(n), Some(b)) => {
            let (nf, bf) = (n as f64, b as f64);
            match lib {
                // Opacus: sample_rate = 1/len(data_loader), one step per batch.
                Library::Opacus => {
                    let seen = if weighted {
                        f.whole(&["sampler_num_samples"])?.ok_or(
                            "a weighted sampler needs sampler_num_samples (its num_samples)",
                        )? as f64
                    } else {
                        nf
                    };
                    let len = if drop_last {
                        (seen / bf).floor()
                    } else {
                        (seen / bf).ceil()
                    }
                    .max(1.0);
                    let t = match (steps, epochs) {
                        (Some(t), _) => t,
                        (None, Some(e)) => (e * len).round() as u64,
                        _ => return Err("give epochs or steps".into()),
                    };
                    (1.0 / len, t, Some(len as u64))
                }
                _ => {
                    let t = match (steps, epochs) {
                        (Some(t), _) => t,
                        (None, Some(e)) => (e * nf / bf).ceil() as u64,
                        _ => return Err("give epochs or steps".into()),
                    };
                    (bf / nf, t, Some((nf / bf).floor() as u64))
                }
            }
        }
        _ => return Err("give sample_rate, or dataset_size and batch_size".into()),
    };
    if t_lib == 0 || t_lib > engine::MAX_STEPS {
        return Err(format!(
            "the run has {t_lib} steps, outside [1, {}]",
            engine::MAX_STEPS
        ));
    }
    if lib == Library::TfPrivacy && (n.is_none() || b.is_none() || epochs.is_none()) {
        return Err(
            "TF Privacy's statement takes number_of_examples, batch_size and num_epochs".into(),
        );
    }

    // What the library prints.
    let sigma_printed = if halve { sigma_lib / 2.0 } else { sigma_lib };
    let mut at_edge = false;
    let mut once_per_epoch = None;
    let mut user_printed: Option<(f64, f64)> = None;
    let printed: Result<(f64, String), String> = (|| {
        if replace && lib == Library::Opacus {
            return Err("Opacus accounts add/remove adjacency only".to_string());
        }
        Ok(match (lib, accountant) {
            (Library::Opacus, "prv") => (
                Sgm::new(q_lib, sigma_lib)
                    .and_then(|m| pld::opacus_prv_epsilon(m, t_lib, delta))
                    .map_err(|e| e.to_string())?,
                "Opacus' PRV accountant (its default): the PRV estimate at δ − δ/1000 plus eps_error = 0.01".into(),
            ),
            (Library::Opacus, "rdp") => {
                let (e, edge) = rdp_on(q_lib, sigma_lib, t_lib, opacus_orders(), delta)?;
                at_edge = edge;
                (e, "Opacus' RDP accountant on its 151 orders (1.1–10.9, 12–63)".into())
            }
            (Library::Opacus, _) => {
                // Opacus' GDP accountant: the CLT's μ = q·√(T·(e^{1/σ²} − 1)), ε of μ-GDP.
                let mu = q_lib * ((t_lib as f64) * (exp(1.0 / (sigma_lib * sigma_lib)) - 1.0)).sqrt();
                let e = pld::gaussian_epsilon(mu, delta).map_err(|e| e.to_string())?;
                (e.upper, format!("Opacus' GDP accountant: the central-limit μ = {} read as μ-GDP (an approximation, not a bound)", up6(mu)))
            }
            (Library::TfPrivacy, _) => {
                let nf = n.unwrap_or(1) as f64;
                let q = b.unwrap_or(1) as f64 / nf;
                let e = epochs.unwrap_or(1.0);
                let t = (e / q).ceil() as u64;
                let (eps, edge) = rdp_on(q, sigma_printed, t, engine::default_orders(), delta)?;
                at_edge = edge;
                let (once, _) = rdp_on(1.0, sigma_printed, e.ceil() as u64, engine::default_orders(), delta)?;
                once_per_epoch = Some(once);
                if users > 1 {
                    let user = |q: f64, t: u64| {
                        Sgm::new(q, sigma_printed)
                            .and_then(|m| engine::library_rdp::library_user_epsilon(&m, t, &engine::default_orders(), delta, users))
                            .map_err(|e| e.to_string())
                    };
                    user_printed = Some((user(q, t)?, user(1.0, e.ceil() as u64)?));
                }
                (eps, format!("compute_dp_sgd_privacy_statement's \"Epsilon assuming Poisson sampling\": RDP at q = {}, {t} steps, noise multiplier {}{}", show_q(q), sigma_printed, if halve { " (its noise_multiplier / 2: used_microbatching=True)" } else { "" }))
            }
            (_, "pld") => {
                if replace {
                    return Err(format!("{}'s PLD accountant under REPLACE_ONE is not emulated here", lib.name()));
                }
                (
                    Sgm::new(q_lib, sigma_lib)
                        .and_then(|m| pld::dp_accounting_epsilon(m, t_lib, delta))
                        .map_err(|e| e.to_string())?,
                    "dp_accounting's PLDAccountant at its default grid 1e-4".into(),
                )
            }
            _ => {
                let (e, edge) = rdp_on(q_lib, sigma_lib, t_lib, engine::default_orders(), delta)?;
                at_edge = edge;
                let how = if replace {
                    "dp_accounting's RdpAccountant on its 156 orders, REPLACE_ONE read with the add/remove sensitivity (its RDP path before PR #464)"
                } else {
                    "dp_accounting's RdpAccountant on its 156 orders"
                };
                (e, how.into())
            }
        })
    })();

    // The code that ran: σ, its batches, its steps, its adjacency and copies per step.
    let c = f.positive(&["max_grad_norm"])?.unwrap_or(1.0);
    let on_mean = f.one_of("noise_added_to", &["sum", "mean"])?.as_deref() == Some("mean");
    let logical_b = b.map(|b| b * if independent { 1 } else { k });
    let sigma_code = match f.positive(&["noise_std"])? {
        Some(std) if on_mean => {
            let bb = logical_b.ok_or("noise_added_to mean needs batch_size")? as f64;
            std * bb / c
        }
        Some(std) => std / c,
        None if on_mean => {
            return Err(
                "noise_added_to needs noise_std (the std of the noise the code adds)".into(),
            )
        }
        None => sigma_printed,
    };
    let (q_code, t_code) = if k > 1 && !independent {
        let t = match (steps, epochs, n, b) {
            (Some(t), _, _, _) => t,
            (None, Some(e), Some(n), Some(b)) => (e * n as f64 / (b * k) as f64).ceil() as u64,
            _ => t_lib,
        };
        ((q_lib * k as f64).min(1.0), t)
    } else {
        (q_lib, t_lib)
    };
    let group = if independent { k } else { 1 } * users;
    if independent && users > 1 {
        return Err(
            "accumulation 'independent' with max_examples_per_user > 1 is not computed here".into(),
        );
    }
    let mut r = Request {
        sigma: Some(sigma_code),
        delta: Some(delta),
        accountant: Some(Accountant::Pld),
        adjacency: if replace {
            engine::Adjacency::ReplaceOne
        } else {
            engine::Adjacency::AddRemove
        },
        group: (group > 1).then_some(group as f64),
        ..Request::default()
    };
    let mut ran_steps = t_code;
    let certified: Result<(Bracket, String), String> = (|| {
        if weighted {
            return Err("a weighted sampler's per-example rate depends on its weights: no certified number without the largest inclusion probability".into());
        }
        match drawn {
            Drawn::Poisson => {
                r.q = Some(q_code);
                r.steps = Some(t_code as f64);
            }
            Drawn::Shuffled => {
                let (n, b) = (
                    n.ok_or("shuffled batches need dataset_size")?,
                    logical_b.ok_or("shuffled batches need batch_size")?,
                );
                r.sampling = Sampling::Shuffle;
                r.accountant = None;
                r.dataset = [Some(n as f64), Some(b as f64), None];
                match (epochs, steps) {
                    (Some(e), None) => r.dataset[2] = Some(e),
                    _ => r.steps = Some(t_code as f64),
                }
            }
            Drawn::FixedOrder => {
                let e = match (epochs, per_epoch) {
                    (Some(e), _) => e.ceil(),
                    (None, Some(t)) => (t_code as f64 / t.max(1) as f64).ceil(),
                    _ => return Err("a fixed order needs epochs".into()),
                };
                let sens = if replace { 2.0 } else { 1.0 };
                let mu = sens * group as f64 * e.sqrt() / sigma_code;
                let br = pld::gaussian_epsilon(mu, delta).map_err(|e| e.to_string())?;
                return Ok((br, format!("each example in one batch per epoch in a fixed order: the Gaussian mechanism over {e} epoch(s), exact (bracket [lower, upper] of μ = {})", up6(mu))));
            }
        }
        let a = super::answer("epsilon", r.clone())?.fields;
        if let Some(t) = a.get("steps").and_then(Value::as_u64) {
            ran_steps = t;
        }
        let upper = a
            .get("epsilon")
            .and_then(Value::as_f64)
            .ok_or("no certified epsilon")?;
        let lower = a
            .get("epsilon_lower")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let meaning = a
            .get("meaning")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| {
                "tight accountant: certified upper bound; lower end a certified lower bound".into()
            });
        Ok((Bracket { upper, lower }, meaning))
    })();

    // The findings.
    let mut findings: Vec<Finding> = Vec::new();
    let printed_e = printed.as_ref().ok().map(|p| p.0);
    let cert = certified.as_ref().ok().map(|c| c.0);
    let below = |p: Option<f64>| match (p, cert) {
        (Some(p), Some(c)) => p < c.upper,
        _ => true,
    };
    let size = |p: Option<f64>| match (p, cert) {
        (Some(p), Some(c)) if p > 0.0 => format!(
            " (printed {}, certified {}: {:.2}×)",
            fmt4(p),
            up6(c.upper),
            c.upper / p
        ),
        _ => String::new(),
    };
    if drawn == Drawn::Shuffled {
        findings.push(Finding {
            id: "shuffled-as-poisson",
            severity: if below(printed_e) { "unsafe" } else { "caution" },
            finding: format!("{} accounts Poisson sampling, but the loader shuffles: for shuffled batches no amplification by sampling is proved, and the certified band is {}{}", lib.name(), band_text(cert), size(printed_e)),
            fix: match lib {
                Library::Opacus => "keep make_private(..., poisson_sampling=True) (its default), or report the band's upper end".into(),
                _ => "sample batches by Poisson sampling (each example independently with rate q), or report the band's upper end".into(),
            },
            source: "Chua et al., How Private are DP-SGD Implementations? (ICML 2024, arXiv 2403.17673); Opacus poisson_sampling",
        });
    }
    if drawn == Drawn::FixedOrder {
        findings.push(Finding {
            id: "fixed-order-as-poisson",
            severity: "unsafe",
            finding: format!("{} accounts Poisson sampling, but the batches come in a fixed order: each example is in one batch per epoch and no amplification applies{}", lib.name(), size(printed_e)),
            fix: "shuffle or Poisson-sample the batches, or report the fixed-order ε".into(),
            source: "the Gaussian mechanism composed once per epoch (no sampling)",
        });
    }
    if k > 1 && !independent {
        findings.push(Finding {
            id: "physical-batch",
            severity: if below(printed_e) { "unsafe" } else { "caution" },
            finding: format!("noise is added once per {k} accumulated batches, so the logical batch is {k} × {} and the rate q = {}, not the physical {}{}", b.map_or("B".into(), |b| b.to_string()), show_q(q_code), show_q(q_lib), size(printed_e)),
            fix: "account the logical batch: batch_size (or sample_rate) of one noisy step, steps = noisy updates".into(),
            source: "jax-privacy issue #234 / PR #287",
        });
    }
    if k > 1 && independent {
        findings.push(Finding {
            id: "independent-micro-batches",
            severity: if below(printed_e) { "unsafe" } else { "caution" },
            finding: format!("each of the {k} micro-batches of a noisy step is drawn independently at q = {}, so an example can enter one step up to {k} times: a mixture accounted as {k} copies per example{}", show_q(q_lib), size(printed_e)),
            fix: "draw one Poisson batch of the logical size and split it into micro-batches".into(),
            source: "the Binomial(k, q) count per step: the user-level mixture of the tight accountant",
        });
    }
    if (sigma_code - sigma_printed).abs() > 1e-9 * sigma_printed {
        let (id, source, why) = if on_mean {
            ("noise-on-mean", "jax-privacy issue #383", format!("noise of std {} is added to the mean of {} examples, i.e. {} × that to the sum", f.num(&["noise_std"])?.unwrap_or(0.0), logical_b.unwrap_or(0), logical_b.unwrap_or(0)))
        } else {
            (
                "sigma-as-std",
                "Opacus and dp_accounting: noise_multiplier = noise std / max_grad_norm",
                format!(
                    "noise_std / max_grad_norm = {} / {c}",
                    f.num(&["noise_std"])?.unwrap_or(0.0)
                ),
            )
        };
        findings.push(Finding {
            id,
            severity: if sigma_code < sigma_printed { "unsafe" } else { "caution" },
            finding: format!("the code's noise multiplier is {} ({why}), the library was given {}{}", fmt4(sigma_code), fmt4(sigma_printed), size(printed_e)),
            fix: "give the library noise_multiplier = (std of the noise added to the clipped sum) / max_grad_norm".into(),
            source,
        });
    }
    if replace && accountant == "rdp" && matches!(lib, Library::DpAccounting | Library::JaxPrivacy)
    {
        findings.push(Finding {
            id: "replace-one-units",
            severity: "unsafe",
            finding: format!("under REPLACE_ONE the Gaussian's sensitivity is 2 × max_grad_norm; dp_accounting's RDP path before PR #464 read it as 1 ×{}", size(printed_e)),
            fix: "use a dp_accounting release with PR #464, or its PLD accountant, or this ε".into(),
            source: "dp_accounting PR #464",
        });
    }
    if let (Some(p), Some(cb), true) = (printed_e, cert, findings.is_empty()) {
        if p < cb.lower {
            findings.push(Finding {
                id: "printed-below-the-truth",
                severity: "unsafe",
                finding: format!("the printed ε {} is below the certified lower bound {} of the true ε for this very run", fmt4(p), down6(cb.lower)),
                fix: "report the certified upper bound".into(),
                source: "the tight accountant's bracket",
            });
        }
    }
    if lib == Library::Opacus && accountant == "prv" {
        findings.push(Finding {
            id: "prv-estimate",
            severity: if below(printed_e) { "caution" } else { "info" },
            finding: format!("Opacus' PRV accountant prints an estimate (its value plus eps_error), not a certified upper bound{}", size(printed_e)),
            fix: "report the certified upper bound".into(),
            source: "Gopi, Lee, Wutschitz, Numerical Composition of Differential Privacy (NeurIPS 2021); Opacus prv accountant",
        });
    }
    if lib == Library::Opacus && accountant == "gdp" {
        findings.push(Finding {
            id: "gdp-clt",
            severity: if below(printed_e) { "unsafe" } else { "caution" },
            finding: format!("Opacus' GDP accountant reads the central-limit approximation μ as if it were a μ-GDP guarantee: not a bound{}", size(printed_e)),
            fix: "use the PRV or RDP accountant, or this certified ε".into(),
            source: "Dong, Roth, Su, Gaussian Differential Privacy (JRSS-B 2022), CLT for subsampled mechanisms",
        });
    }
    if weighted {
        findings.push(Finding {
            id: "q-from-sampler-length",
            severity: "unsafe",
            finding: format!("Opacus takes sample_rate = 1/len(data_loader) = {} from the weighted sampler's num_samples, which is not any example's inclusion probability", show_q(q_lib)),
            fix: "use Poisson sampling with a uniform rate, or account with the largest per-example inclusion probability".into(),
            source: "Opacus issue #813",
        });
    }
    if let (Some(e), Some(n), Some(b), false) = (epochs, n, b, lib == Library::Opacus) {
        let ran = (e * (n / b) as f64).floor() as u64;
        if drop_last && drawn == Drawn::Poisson && ran != t_lib && k == 1 {
            findings.push(Finding {
                id: "steps-rounding",
                severity: "info",
                finding: format!("the library counts ⌈E·N/B⌉ = {t_lib} steps; with drop_last the loader runs E·⌊N/B⌋ = {ran}"),
                fix: "give steps as the number of noisy updates that ran".into(),
                source: "TF Privacy compute_dp_sgd_privacy_statement (count = ⌈epochs / q⌉)",
            });
        }
    }
    if let Some(n) = n {
        if delta >= 1.0 / n as f64 {
            findings.push(Finding {
                id: "delta-at-least-1-over-n",
                severity: "caution",
                finding: format!("δ = {delta} ≥ 1/N = {}: a mechanism that publishes one random example in full satisfies δ = 1/N", 1.0 / n as f64),
                fix: "take δ well below 1/N (e.g. 1/N^1.1)".into(),
                source: "the usual rule δ ≪ 1/N",
            });
        }
    }
    if lib == Library::Opacus && drawn == Drawn::Poisson {
        if let Some(n) = n {
            findings.push(Finding {
                id: "expected-batch-normalisation",
                severity: "info",
                finding: format!("Opacus divides the noisy sum by expected_batch_size = ⌊N·q⌋ = {}, a constant: post-processing, so the noisy sum's guarantee holds; dividing by the realised batch size instead is not covered by this analysis (no certified number here)", (n as f64 * q_lib).floor()),
                fix: "keep the constant divisor".into(),
                source: "Opacus issue #819; arXiv 2605.15648",
            });
        }
    }
    if at_edge {
        findings.push(Finding {
            id: "orders-too-short",
            severity: "caution",
            finding: "the library's best RDP order is the first or last of its orders: its ε is set by the grid, not the analysis".into(),
            fix: "widen the orders (or use the exact RDP or tight ε)".into(),
            source: "TF Privacy: \"The privacy estimate is likely to be improved by expanding the set of orders\"",
        });
    }
    if halve {
        findings.push(Finding {
            id: "microbatching-doubles-sensitivity",
            severity: "info",
            finding: format!("TF Privacy halves the noise multiplier ({} → {}) for used_microbatching=True, its default: microbatches of more than one example double the sensitivity", fmt4(sigma_lib), fmt4(sigma_printed)),
            fix: "pass used_microbatching=False when each microbatch holds one example".into(),
            source: "TF Privacy compute_dp_sgd_privacy_statement; Ponomareva et al., How to DP-fy ML (arXiv 2303.00654) §5.6",
        });
    }
    if let (Library::Opacus, Some(m)) = (lib, f.whole(&["max_physical_batch_size"])?) {
        findings.push(Finding {
            id: "batch-memory-manager",
            severity: "info",
            finding: format!("BatchMemoryManager splits each logical batch into physical batches of at most {m}: noise is added once per logical batch, and that batch (batch_size) is what is accounted"),
            fix: "give batch_size as the logical batch (the DataLoader's), not the physical one".into(),
            source: "Opacus BatchMemoryManager",
        });
    }
    if let Some(t) = target {
        if !(t.is_finite() && t > 0.0) {
            return Err(format!(
                "target_epsilon must be a finite number > 0, got {t}"
            ));
        }
        if let (Some(p), Some(cb)) = (printed_e, cert) {
            if p <= t && cb.upper > t {
                findings.push(Finding {
                    id: "target-met-on-paper",
                    severity: "unsafe",
                    finding: format!("the printed ε {} meets target_epsilon {t}; the certified ε of the code that ran, {}, does not", fmt4(p), up6(cb.upper)),
                    fix: "recalibrate σ for the code that ran (sgm-rdp calibrate with its scheme)".into(),
                    source: "Opacus make_private_with_epsilon",
                });
            }
        }
    }

    // Fields and text.
    let mut o = Map::new();
    o.insert("library".into(), json!(lib.key()));
    o.insert("library_accountant".into(), json!(accountant));
    o.insert("library_q".into(), json!(q_lib));
    o.insert("library_steps".into(), json!(t_lib));
    o.insert("delta".into(), json!(delta));
    match &printed {
        Ok((e, how)) => {
            o.insert("printed_epsilon".into(), json!(e));
            o.insert("printed_by".into(), json!(how));
        }
        Err(why) => {
            o.insert("printed_epsilon".into(), Value::Null);
            o.insert("printed_why".into(), json!(why));
        }
    }
    if let Some(e) = once_per_epoch {
        o.insert("printed_epsilon_once_per_epoch".into(), json!(e));
    }
    // TF Privacy's user-level lines (group privacy, Vadhan's Lemma 2.2); null: "inf".
    if let Some((u, once)) = user_printed {
        let finite = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
        o.insert("printed_user_epsilon".into(), finite(u));
        o.insert("printed_user_epsilon_once_per_epoch".into(), finite(once));
    }
    let drawn_name = match drawn {
        Drawn::Poisson => "poisson",
        Drawn::Shuffled => "shuffle",
        Drawn::FixedOrder => "fixed-order",
    };
    // The run the code made (`run_*`: a batch line keeps its own keys beside them).
    o.insert("run_sampling".into(), json!(drawn_name));
    o.insert(
        "run_adjacency".into(),
        json!(if replace { "replace-one" } else { "add-remove" }),
    );
    o.insert("run_sigma".into(), json!(sigma_code));
    if drawn == Drawn::Poisson {
        o.insert("run_q".into(), json!(q_code));
    }
    o.insert("run_steps".into(), json!(ran_steps));
    o.insert("run_copies_per_example".into(), json!(group));
    match &certified {
        Ok((br, meaning)) => {
            o.insert("certified_epsilon".into(), json!(br.upper));
            o.insert("certified_epsilon_lower".into(), json!(br.lower));
            o.insert("certified_meaning".into(), json!(meaning));
        }
        Err(why) => {
            o.insert("certified_epsilon".into(), Value::Null);
            o.insert("certified_why".into(), json!(why));
        }
    }
    o.insert(
        "findings".into(),
        Value::Array(
            findings
                .iter()
                .map(|x| json!({"id": x.id, "severity": x.severity, "finding": x.finding, "fix": x.fix, "source": x.source, "keys": keys_of(x.id)}))
                .collect(),
        ),
    );
    let mut s = match &printed {
        Ok((e, how)) => format!("{} prints: epsilon = {} ({how})\n", lib.name(), fmt4(*e)),
        Err(why) => format!("{} prints: not computed here ({why})\n", lib.name()),
    };
    if let Some(e) = once_per_epoch {
        s += &format!(
            "  and \"Epsilon with each example occurring once per epoch\": {}\n",
            fmt4(e)
        );
    }
    if let Some((u, once)) = user_printed {
        let shown = |x: f64| if x.is_finite() { fmt4(x) } else { "inf".into() };
        s += &format!(
            "  user level ({users} examples per user, group privacy): {} assuming Poisson sampling, {} once per epoch\n",
            shown(u),
            shown(once)
        );
    }
    let rate = match (drawn, logical_b, n) {
        (Drawn::Poisson, _, _) => format!("q = {}", show_q(q_code)),
        (_, Some(b), Some(n)) => format!("batches of {b} of {n} examples"),
        _ => String::new(),
    };
    let run = format!(
        "{drawn_name} batches, {} adjacency, sigma = {} (noise std / clipping norm), {rate}, {ran_steps} step(s){}",
        if replace { "replace-one" } else { "add/remove-one" },
        fmt4(sigma_code),
        if group > 1 { format!(", {group} copies per example") } else { String::new() }
    );
    s += &match &certified {
        Ok((br, meaning)) => format!(
            "the code that ran guarantees: epsilon <= {} at delta = {delta}, bracket [{}, {}] ({meaning}; {run})\n",
            up6(br.upper),
            down6(br.lower),
            up6(br.upper)
        ),
        Err(why) => format!("the code that ran: no certified epsilon ({why}; {run})\n"),
    };
    if findings.is_empty() {
        s += "no mismatch found between what the library accounts and the run described\n";
    }
    for x in &findings {
        s += &format!(
            "[{}] {}: {}. Fix: {} (set by {}). ({})\n",
            x.severity,
            x.id,
            x.finding,
            x.fix,
            keys_of(x.id).join(", "),
            x.source
        );
    }
    Ok(Report { fields: o, text: s })
}

/// The configuration keys a finding concerns (what the user changes to act on it).
pub fn keys_of(id: &str) -> &'static [&'static str] {
    match id {
        "shuffled-as-poisson" | "fixed-order-as-poisson" => {
            &["poisson_sampling", "shuffle", "sampling"]
        }
        "physical-batch" => &["batch_size", "accumulation_steps"],
        "independent-micro-batches" => &["accumulation", "accumulation_steps"],
        "noise-on-mean" => &["noise_std", "noise_added_to"],
        "sigma-as-std" => &["noise_multiplier", "noise_std", "max_grad_norm"],
        "replace-one-units" => &["neighboring", "accountant"],
        "printed-below-the-truth" | "prv-estimate" | "gdp-clt" | "orders-too-short" => {
            &["accountant"]
        }
        "q-from-sampler-length" => &["sampler", "sampler_num_samples"],
        "steps-rounding" => &["epochs", "drop_last", "steps"],
        "delta-at-least-1-over-n" => &["delta"],
        "expected-batch-normalisation" => &["sample_rate", "dataset_size"],
        "microbatching-doubles-sensitivity" => &["used_microbatching"],
        "target-met-on-paper" => &["target_epsilon"],
        "batch-memory-manager" => &["batch_size", "max_physical_batch_size"],
        _ => &[],
    }
}

fn fmt4(x: f64) -> String {
    format!("{x:.4}")
}

fn show_q(q: f64) -> String {
    format!("{}", (q * 1e9).round() / 1e9)
}

fn band_text(c: Option<Bracket>) -> String {
    match c {
        Some(b) => format!("[{}, {}]", down6(b.lower), up6(b.upper)),
        None => "not computed".into(),
    }
}
