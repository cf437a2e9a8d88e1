//! The request: every input a query takes (typed), the one table of their names and
//! aliases (command-line flags, batch keys and the training tools' names), which commands
//! take which, and setting an input by name (the words and the batch lines both do).

use super::*;

/// `--accountant` (and `batch`'s `accountant`) as typed.
pub(super) fn parse_accountant(s: &str) -> Result<Accountant, String> {
    Accountant::parse(s)
        .ok_or_else(|| format!("--accountant must be 'rdp', 'pld' or 'both', got '{s}'"))
}

/// One query's inputs, typed; every front end builds one (by name, as the words and the lines do, or
/// field by field) and [`answer`] reads it.
#[derive(Debug, Default, Clone)]
pub struct Request {
    pub q: Option<f64>,
    pub sigma: Option<f64>,
    pub steps: Option<f64>,
    pub delta: Option<f64>,
    pub epsilon: Option<f64>,
    pub alpha: Option<f64>,
    pub orders: Option<Vec<f64>>,
    pub conversion: Option<Conversion>,
    pub target: Option<String>,
    pub accountant: Option<Accountant>,
    pub dataset: [Option<f64>; 3],
    /// Attack-risk target: TPR bound, its FPR, or the advantage bound.
    pub risk: [Option<f64>; 3],
    /// Examples per user (user-level privacy).
    pub group: Option<f64>,
    pub sampling: Sampling,
    pub adjacency: engine::Adjacency,
    pub steps_per_epoch: Option<f64>,
    pub max_batch: Option<f64>,
    pub selected: Option<f64>,
    pub bands: Option<f64>,
    /// The command line's `--json`: print the fields rather than the text.
    pub json: bool,
    /// Messages name command-line flags (`--group-size`) rather than batch keys.
    pub cli: bool,
    /// Every flag given, by canonical name (each at most once).
    pub given: Vec<&'static str>,
}

/// One flag: its name (`--name`), the training tools' name for it, its value as the help
/// shows it (None: a switch) and what it is. The one table the parse, the refusals and
/// the help read.
pub(super) struct Flag {
    pub(super) name: &'static str,
    pub(super) alias: Option<&'static str>,
    pub(super) value: Option<&'static str>,
    pub(super) help: &'static str,
}

const fn flag(name: &'static str, value: &'static str, help: &'static str) -> Flag {
    Flag {
        name,
        alias: None,
        value: Some(value),
        help,
    }
}

/// Every flag, in the order the help lists them.
pub(super) const FLAGS: [Flag; 26] = [
    // (The training tools' names, shared with the JS API: engine::params::TOOL_NAMES.)
    Flag {
        alias: Some(engine::params::TOOL_NAMES[0].0),
        ..flag("q", "Q", "sampling rate: each example is in a batch with probability q")
    },
    Flag {
        alias: Some(engine::params::TOOL_NAMES[1].0),
        ..flag("sigma", "S", "noise multiplier: noise std / clipping norm")
    },
    flag("steps", "T", "training steps"),
    flag("delta", "D", "the delta of the (epsilon, delta) guarantee"),
    flag(
        "epsilon",
        "E",
        "delta: the epsilon to answer at; calibrate: the target; profile: the largest epsilon shown",
    ),
    flag("dataset-size", "N", "with --batch-size B and --epochs E, instead of --q/--steps: q = B/N, T = ceil(E*N/B)"),
    flag("batch-size", "B", "batch size (with --dataset-size and --epochs)"),
    flag("epochs", "E", "epochs (with --dataset-size and --batch-size)"),
    flag("orders", "A,B,..", "Renyi orders (default: dp_accounting's 156)"),
    flag("alpha", "A", "one Renyi order"),
    flag("conversion", "improved|classic", "RDP -> (epsilon, delta) (default improved)"),
    flag(
        "accountant",
        "rdp|pld|both",
        "exact RDP (default), the tight PLD accountant's certified bracket, or both side by side",
    ),
    flag("target", "sigma|steps", "what calibrate finds (default sigma; with --sigma, steps)"),
    flag("tpr", "A", "calibrate to an attack-risk target: TPR <= A at --fpr B (tight accountant)"),
    flag("fpr", "B", "the false-positive rate of --tpr"),
    flag("advantage", "A", "calibrate to an attack advantage TPR - FPR <= A (tight accountant)"),
    flag("group-size", "K", "user-level privacy: K examples per user (tight accountant)"),
    flag(
        "sampling",
        "poisson|shuffle|truncated-poisson|fixed-size|random-allocation",
        "how batches are drawn (default poisson, rate q);
shuffle: a random permutation per epoch in fixed-size batches, answered as a certified band
  [Chua et al. lower bound, no-amplification upper bound];
truncated-poisson: rate q over --dataset-size N, batches capped at --max-batch B
  (tight accountant, certified upper bound);
fixed-size: B of N without replacement each step (--adjacency replace-one, RDP bound of
  Wang, Balle, Kasiviswanathan, upper bound only);
random-allocation (balls-in-bins): each example in --selected k (default 1) of the
  --steps-per-epoch t steps of each of --epochs E epochs, uniformly at random
  (tight accountant, certified bracket; k > 1: upper bound only)",
    ),
    flag(
        "adjacency",
        "add-remove|replace-one",
        "who is a neighbour (default add-remove; replace-one: tight accountant)",
    ),
    flag(
        "steps-per-epoch",
        "t",
        "shuffle, random-allocation: batches per epoch (or --dataset-size N --batch-size B:
t = floor(N/B), with --epochs E or --steps T; or --q: t = floor(1/q))",
    ),
    flag("max-batch", "B", "truncated-poisson: the largest batch (default q*N + 4 standard deviations)"),
    flag("selected", "k", "random-allocation: the steps of an epoch each example is in (default 1)"),
    flag(
        "bands",
        "b",
        "BandMF / DP-FTRL with b bands, accounted as DP-SGD with ceil(T/b) steps at the rate
within the partition each step samples: --q as given, or b*B/N from --dataset-size/--batch-size
(Choquette-Choo et al., arXiv 2306.08153)",
    ),
    flag(
        "strategy",
        "S",
        "correlated noise (DP-FTRL / matrix factorization; epsilon, delta, calibrate, profile): band:b (b
equal coefficients), band:b,c0,...,c(b-1) (the first column of a banded Toeplitz C),
blt:decay:scale[,decay:scale...] (BLT), tree (binary-tree aggregation) or file:C.csv (an
explicit lower-triangular C, one row per line); C is normalised to largest column norm 1",
    ),
    flag(
        "participation",
        "P",
        "with --strategy: min-sep (b-min-separated cyclic Poisson over b partitions, b the
strategy's bands; --q is the rate within a partition, or b*B/N from dataset terms) or min-sep:k
(a certified bracket; one Gaussian mechanism where columns overlap); poisson, balls-in-bins:t (a
fresh bin of t steps each epoch) or cyclic-bins:t (one bin for the run, jax-privacy's): a
certified upper bound, with --monte-carlo N a seeded estimate beside it (never a bound)",
    ),
    Flag {
        name: "json",
        alias: None,
        value: None,
        help: "one JSON object instead of text",
    },
];

/// The flag named `name` (without its dashes; an alias names its flag, written with '_' as
/// the training tools spell it or with '-' as every other flag is: `--noise-multiplier`),
/// or None.
pub(super) fn flag_named(name: &str) -> Option<&'static Flag> {
    FLAGS.iter().find(|f| {
        f.name == name
            || f.alias.is_some_and(|a| {
                a == name || (a.len() == name.len() && a.replace('_', "-") == name)
            })
    })
}

/// The commands and what each does, in the order the help lists them.
pub(super) const COMMANDS: [(&str, &str); 14] = [
    ("rdp", "per-step and composed RDP at each order"),
    (
        "epsilon",
        "smallest epsilon at --delta (exact RDP; --accountant pld|both: the tight, certified bracket)",
    ),
    ("delta", "smallest delta at --epsilon"),
    (
        "calibrate",
        "smallest --sigma for an --epsilon target (or, with --sigma / --target steps, the most steps);
or for an attack-risk target: --tpr A --fpr B (TPR <= A at FPR B) or --advantage A",
    ),
    ("bounds", "exact RDP next to the paper's bounds, each with its failing condition named"),
    ("compare", "epsilon of every route from the three papers for the same run"),
    (
        "libraries",
        "epsilon as Opacus and dp_accounting print it for the same run (computed), next to ours;
with --dataset-size/--batch-size/--epochs, Opacus' q and steps from its data loader",
    ),
    ("profile", "the tight privacy profile delta(epsilon) and membership-inference bounds"),
    ("gdp", "mu-GDP of the run (certified mu, its bracket, the fit's regret) and the attack trade-off"),
    (
        "check",
        "a training configuration in its library's terms (--library opacus|dp_accounting|jax_privacy|tf_privacy,
--noise-multiplier, --dataset-size, --batch-size, --epochs, --delta, --poisson-sampling false, ...;
or --config FILE.json): what the library prints, what the code that ran guarantees, each mismatch",
    ),
    (
        "audit",
        "empirical lower bounds on epsilon and mu from canary scores (--in FILE --out FILE, or --scores FILE.csv),
beside the run's certified epsilon and mu when the run is given (docs/audit.md)",
    ),
    (
        "audit-plan",
        "how many canaries an audit of the run needs to show a share of its certified epsilon (--fraction), and the ceiling of a one-run audit",
    ),
    ("batch", "JSON lines on stdin, one JSON line out per line (no flags: every key goes in the lines)"),
    ("help", "this text; `sgm-rdp <command> --help`: the flags a command takes"),
];

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
            "strategy",
            "participation",
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
            "strategy",
            "participation",
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
            "strategy",
            "participation",
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
            "delta",
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
            "delta",
            "dataset-size",
            "batch-size",
            "epochs",
            "strategy",
            "participation",
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

/// Flag `canon` (typed as `key`) is `value`.
pub(super) fn set(f: &mut Request, canon: &str, key: &str, value: &str) -> Result<(), String> {
    let n = || num(key, value);
    match canon {
        "q" => f.q = Some(n()?),
        "sigma" => f.sigma = Some(n()?),
        "steps" => f.steps = Some(n()?),
        "delta" => f.delta = Some(n()?),
        "epsilon" => f.epsilon = Some(n()?),
        "alpha" => f.alpha = Some(n()?),
        "orders" => {
            f.orders = Some(
                value
                    .split(',')
                    .map(|s| num(key, s))
                    .collect::<Result<_, _>>()?,
            )
        }
        "conversion" => {
            f.conversion = Some(value.parse().map_err(|e: engine::Error| e.to_string())?)
        }
        "target" => f.target = Some(value.to_string()),
        "accountant" => f.accountant = Some(parse_accountant(value)?),
        "dataset-size" => f.dataset[0] = Some(n()?),
        "batch-size" => f.dataset[1] = Some(n()?),
        "epochs" => f.dataset[2] = Some(n()?),
        "tpr" => f.risk[0] = Some(n()?),
        "fpr" => f.risk[1] = Some(n()?),
        "advantage" => f.risk[2] = Some(n()?),
        "group-size" => f.group = Some(n()?),
        "sampling" => f.sampling = Sampling::parse(value)?,
        "adjacency" => f.adjacency = scheme::adjacency(value)?,
        "steps-per-epoch" => f.steps_per_epoch = Some(n()?),
        "bands" => f.bands = Some(n()?),
        "max-batch" => f.max_batch = Some(n()?),
        "selected" => f.selected = Some(n()?),
        // (Read by the correlated-noise query, which takes the words before this parse.)
        "strategy" | "participation" => {
            return Err(format!(
            "--{key} is read with the correlated-noise query (epsilon, delta, calibrate, profile)"
        ))
        }
        _ => return Err(format!("unknown flag '--{key}' ({USAGE})")),
    }
    Ok(())
}

pub(super) fn need(v: Option<f64>, name: &str) -> Result<f64, String> {
    v.ok_or_else(|| format!("missing --{name}"))
}

impl Request {
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

/// Words as `--name value`, `--name=value` or a switch (`switches`: no value): each flag once.
/// The own-parse commands' (`audit`, `audit-plan`, correlated noise) tokenizer; a switch comes
/// back with no value.
pub(super) fn flag_words(
    rest: &[String],
    switches: &[&str],
) -> Result<Vec<(String, Option<String>)>, String> {
    let mut out: Vec<(String, Option<String>)> = Vec::new();
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
        if out.iter().any(|(n, _)| *n == name) {
            return Err(format!(
                "--{name} given more than once (give each flag once)"
            ));
        }
        if switches.contains(&name.as_str()) {
            if inline.is_some() {
                return Err(format!("--{name} takes no value"));
            }
            out.push((name, None));
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => w
                .next()
                .cloned()
                .ok_or_else(|| format!("--{name} needs a value"))?,
        };
        out.push((name, Some(value)));
    }
    Ok(out)
}
