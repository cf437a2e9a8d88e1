//! The flags: their names and aliases, the values they take, which commands take them,
//! and the parse (lexopt reads the words; every message is ours).

use super::*;

/// `--accountant` (and `batch`'s `accountant`) as typed.
pub(super) fn parse_accountant(s: &str) -> Result<Accountant, String> {
    Accountant::parse(s)
        .ok_or_else(|| format!("--accountant must be 'rdp', 'pld' or 'both', got '{s}'"))
}

/// Parsed flags.
#[derive(Debug, Default)]
pub(super) struct Flags {
    pub(super) q: Option<f64>,
    pub(super) sigma: Option<f64>,
    pub(super) steps: Option<f64>,
    pub(super) delta: Option<f64>,
    pub(super) epsilon: Option<f64>,
    pub(super) alpha: Option<f64>,
    pub(super) orders: Option<Vec<f64>>,
    pub(super) conversion: Option<Conversion>,
    pub(super) target: Option<String>,
    pub(super) accountant: Option<Accountant>,
    pub(super) dataset: [Option<f64>; 3],
    /// Attack-risk target: TPR bound, its FPR, or the advantage bound.
    pub(super) risk: [Option<f64>; 3],
    /// Examples per user (user-level privacy).
    pub(super) group: Option<f64>,
    pub(super) sampling: Sampling,
    pub(super) adjacency: engine::Adjacency,
    pub(super) steps_per_epoch: Option<f64>,
    pub(super) max_batch: Option<f64>,
    pub(super) selected: Option<f64>,
    pub(super) bands: Option<f64>,
    pub(super) json: bool,
    /// Every flag given, by canonical name (each at most once).
    pub(super) given: Vec<&'static str>,
}

/// Canonical name of a flag (aliases share one), or None if unknown.
pub(super) fn canonical(name: &str) -> Option<&'static str> {
    Some(match name {
        "--q" | "--sample_rate" => "q",
        "--sigma" | "--noise_multiplier" => "sigma",
        "--steps" => "steps",
        "--delta" => "delta",
        "--epsilon" => "epsilon",
        "--alpha" => "alpha",
        "--orders" => "orders",
        "--conversion" => "conversion",
        "--target" => "target",
        "--accountant" => "accountant",
        "--dataset-size" => "dataset-size",
        "--batch-size" => "batch-size",
        "--epochs" => "epochs",
        "--json" => "json",
        "--tpr" => "tpr",
        "--fpr" => "fpr",
        "--advantage" => "advantage",
        "--group-size" => "group-size",
        "--sampling" => "sampling",
        "--adjacency" => "adjacency",
        "--steps-per-epoch" => "steps-per-epoch",
        "--bands" => "bands",
        "--max-batch" => "max-batch",
        "--selected" => "selected",
        _ => return None,
    })
}

/// The batching / adjacency / user-level flags, taken by `epsilon`, `delta`, `calibrate`
/// and `profile` alike (answered by the one query in [`scheme`]).
pub(super) const SCHEME_FLAGS: [&str; 6] = [
    "group-size",
    "sampling",
    "adjacency",
    "steps-per-epoch",
    "max-batch",
    "selected",
];

/// The flags each command uses; any other flag given is refused by name, so no flag is
/// silently ignored.
pub(super) fn allowed(cmd: &str) -> Vec<&'static str> {
    let mut flags = own_flags(cmd).to_vec();
    if matches!(cmd, "epsilon" | "delta" | "calibrate" | "profile" | "gdp") {
        flags.extend(SCHEME_FLAGS);
    }
    flags
}

/// Each command's own flags (beyond [`SCHEME_FLAGS`]).
pub(super) fn own_flags(cmd: &str) -> &'static [&'static str] {
    match cmd {
        "rdp" => &[
            "q",
            "sigma",
            "orders",
            "alpha",
            "steps",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        "epsilon" => &[
            "q",
            "sigma",
            "steps",
            "delta",
            "orders",
            "conversion",
            "accountant",
            "bands",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        "delta" => &[
            "q",
            "sigma",
            "steps",
            "epsilon",
            "orders",
            "conversion",
            "accountant",
            "bands",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        "calibrate" => &[
            "q",
            "sigma",
            "steps",
            "delta",
            "epsilon",
            "orders",
            "conversion",
            "accountant",
            "target",
            "tpr",
            "fpr",
            "advantage",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        "bounds" => &["q", "sigma", "orders", "alpha", "json"],
        "compare" | "libraries" => &[
            "q",
            "sigma",
            "steps",
            "delta",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        "gdp" => &[
            "q",
            "sigma",
            "steps",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        "profile" => &[
            "q",
            "sigma",
            "steps",
            "epsilon",
            "dataset-size",
            "batch-size",
            "epochs",
            "json",
        ],
        _ => &[],
    }
}

pub(super) fn num(flag: &str, v: &str) -> Result<f64, String> {
    v.trim()
        .parse::<f64>()
        .map_err(|_| format!("--{flag}: '{v}' is not a number"))
}

pub(super) fn parse(args: &[String]) -> Result<Flags, String> {
    let mut f = Flags::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (a, None),
        };
        if !name.starts_with("--") {
            return Err(format!(
                "unexpected argument '{a}' (flags start with --; {USAGE})"
            ));
        }
        let Some(canon) = canonical(name) else {
            return Err(format!("unknown flag '{name}' ({USAGE})"));
        };
        // One rule for repeated flags, here and in the page's URL: refused, by name.
        if f.given.contains(&canon) {
            return Err(format!(
                "--{canon} given more than once (give each flag once)"
            ));
        }
        f.given.push(canon);
        if name == "--json" {
            if inline.is_some() {
                return Err(
                    "--json takes no value (give --json for JSON output, or leave it out)".into(),
                );
            }
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
            "--accountant" => f.accountant = Some(parse_accountant(&value)?),
            "--dataset-size" => f.dataset[0] = Some(num(key, &value)?),
            "--batch-size" => f.dataset[1] = Some(num(key, &value)?),
            "--epochs" => f.dataset[2] = Some(num(key, &value)?),
            "--tpr" => f.risk[0] = Some(num(key, &value)?),
            "--fpr" => f.risk[1] = Some(num(key, &value)?),
            "--advantage" => f.risk[2] = Some(num(key, &value)?),
            "--group-size" => f.group = Some(num(key, &value)?),
            "--sampling" => f.sampling = Sampling::parse(&value)?,
            "--adjacency" => f.adjacency = scheme::adjacency(&value)?,
            "--steps-per-epoch" => f.steps_per_epoch = Some(num(key, &value)?),
            "--bands" => f.bands = Some(num(key, &value)?),
            "--max-batch" => f.max_batch = Some(num(key, &value)?),
            "--selected" => f.selected = Some(num(key, &value)?),
            _ => return Err(format!("unknown flag '{name}' ({USAGE})")),
        }
        i += 1;
    }
    Ok(f)
}

pub(super) fn need(v: Option<f64>, name: &str) -> Result<f64, String> {
    v.ok_or_else(|| format!("missing --{name}"))
}

impl Flags {
    pub(super) fn sgm(&self) -> Result<Sgm, String> {
        Sgm::new(need(self.q, "q")?, need(self.sigma, "sigma")?).map_err(|e| e.to_string())
    }
    pub(super) fn steps(&self) -> Result<u64, String> {
        engine::params::steps_from_f64(need(self.steps, "steps")?).map_err(|e| e.to_string())
    }
    pub(super) fn orders(&self) -> Vec<f64> {
        self.orders.clone().unwrap_or_else(engine::default_orders)
    }
    pub(super) fn conv(&self) -> Conversion {
        self.conversion.unwrap_or(Conversion::Improved)
    }
}
