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
pub(super) const FLAGS: [Flag; 24] = [
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
pub(super) const COMMANDS: [(&str, &str); 11] = [
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
    ("batch", "JSON lines on stdin, one JSON line out per line (no flags: every key goes in the lines)"),
    ("help", "this text; `sgm-rdp <command> --help`: the flags a command takes"),
];

/// `left` padded to `width`, then `text` whose further lines are indented to the column.
fn column(left: &str, width: usize, text: &str) -> String {
    let pad = " ".repeat(width);
    let mut s = format!("{left:<width$}");
    if left.chars().count() >= width {
        s += &format!("\n{pad}");
    }
    s += &text.replace('\n', &format!("\n{pad}"));
    s + "\n"
}

/// A flag as the help shows it: `--q Q (--sample_rate)`.
fn shown(f: &Flag) -> String {
    let mut s = format!("  --{}", f.name);
    if let Some(v) = f.value {
        s += &format!(" {v}");
    }
    if let Some(a) = f.alias {
        s += &format!(" (--{a})");
    }
    s
}

const ABOUT: &str = "sgm-rdp: privacy accounting for DP-SGD (the Sampled Gaussian Mechanism)";
const UNITS: &str =
    "Unless --sampling / --adjacency say otherwise, every value is for add/remove-one adjacency and
Poisson sampling with rate q; sigma = noise std / clipping norm.";

/// `sgm-rdp --help`: the commands and every flag, from the tables.
pub(super) fn help() -> String {
    let mut s = format!("{ABOUT}\n\n{USAGE}\n\ncommands:\n");
    for (name, about) in COMMANDS {
        s += &column(&format!("  {name}"), 13, about);
    }
    s += "\nflags (the training tools' names in parentheses):\n";
    for f in &FLAGS {
        s += &column(&shown(f), 34, f.help);
    }
    s + &format!("\n{UNITS}\n`sgm-rdp <command> --help` lists the flags a command takes; `sgm-rdp --version`.")
}

/// `sgm-rdp <command> --help`: what it does and the flags it takes; None for no command.
pub(super) fn command_help(cmd: &str) -> Option<String> {
    let about = COMMANDS.iter().find(|(n, _)| *n == cmd)?.1;
    if cmd == "batch" {
        return Some(format!(
            "sgm-rdp batch: {about}\n\nusage: sgm-rdp batch < lines.jsonl   (keys: q, sigma, alpha | steps, delta | epsilon, accountant; see the README)"
        ));
    }
    let flags = allowed(cmd);
    if flags.is_empty() {
        return None;
    }
    let listed: Vec<&Flag> = FLAGS.iter().filter(|f| flags.contains(&f.name)).collect();
    let usage = listed
        .iter()
        .map(|f| match f.value {
            Some(v) => format!("[--{} {v}]", f.name),
            None => format!("[--{}]", f.name),
        })
        .collect::<Vec<_>>()
        .join(" ");
    let mut s = format!(
        "sgm-rdp {cmd}: {}\n\nusage: sgm-rdp {cmd} {usage}\n\nflags:\n",
        about.replace('\n', " ")
    );
    for f in listed {
        s += &column(&shown(f), 34, f.help);
    }
    Some(s + &format!("\n{UNITS}"))
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

/// The words after the command, as flags: `--name value` or `--name=value` (lexopt reads
/// them; a value may start with `-`); each flag at most once, under any of its names.
pub(super) fn parse(args: &[String]) -> Result<Flags, String> {
    use lexopt::Arg;
    let mut f = Flags::default();
    let mut p = lexopt::Parser::from_args(args.iter().map(String::as_str));
    loop {
        // A word where a flag belongs that is not `--name`: named whole (lexopt would read
        // `--` as the end of the flags and `-abc` as three short options).
        if let Some(w) = p
            .try_raw_args()
            .and_then(|r| r.peek().map(|w| w.to_string_lossy().into_owned()))
        {
            if w == "--" {
                return Err(format!("unknown flag '--' ({USAGE})"));
            }
            if !w.starts_with("--") {
                return Err(format!(
                    "unexpected argument '{w}' (flags start with --; {USAGE})"
                ));
            }
        }
        let arg = match p.next() {
            Ok(Some(a)) => a,
            Ok(None) => break,
            Err(e) => return Err(e.to_string()),
        };
        // (Anything but `--name` was refused above.)
        let Arg::Long(n) = arg else {
            return Err(format!("unexpected argument ({USAGE})"));
        };
        let typed = format!("--{n}");
        let Some(flag) = flag_named(&typed[2..]) else {
            return Err(format!("unknown flag '{typed}' ({USAGE})"));
        };
        let canon = flag.name;
        // One rule for repeated flags, here and in the page's URL: refused, by name.
        if f.given.contains(&canon) {
            return Err(format!(
                "--{canon} given more than once (give each flag once)"
            ));
        }
        f.given.push(canon);
        if flag.value.is_none() {
            if p.optional_value().is_some() {
                return Err(format!(
                    "--{canon} takes no value (give --{canon} for JSON output, or leave it out)"
                ));
            }
            f.json = true;
            continue;
        }
        let value = p
            .value()
            .map_err(|_| format!("{typed} needs a value"))?
            .to_string_lossy()
            .into_owned();
        set(&mut f, canon, &typed[2..], &value)?;
    }
    Ok(f)
}

/// Flag `canon` (typed as `key`) is `value`.
fn set(f: &mut Flags, canon: &str, key: &str, value: &str) -> Result<(), String> {
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
        _ => return Err(format!("unknown flag '--{key}' ({USAGE})")),
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    /// The table and the commands agree: every flag a command takes is in the table (so the
    /// parse knows it and the help explains it), and every flag in the table is taken by
    /// some command.
    #[test]
    fn one_table_for_the_parse_the_refusals_and_the_help() {
        let cmds: Vec<&str> = COMMANDS.iter().map(|(n, _)| *n).collect();
        for cmd in &cmds {
            for f in allowed(cmd) {
                assert!(
                    flag_named(f).is_some(),
                    "{cmd} takes --{f}, not in the table"
                );
                let help = command_help(cmd).unwrap();
                assert!(help.contains(&format!("--{f}")), "{cmd} --help lacks --{f}");
            }
        }
        for f in &FLAGS {
            assert!(
                cmds.iter().any(|c| allowed(c).contains(&f.name)),
                "no command takes --{}",
                f.name
            );
            assert!(
                help().contains(&format!("--{}", f.name))
                    && help().contains(f.help.lines().next().unwrap())
            );
        }
        assert!(command_help("nosuch").is_none());
        // The aliases are the training tools' names, one list for every front end.
        for (tool, ours) in engine::params::TOOL_NAMES {
            assert_eq!(flag_named(tool).map(|f| f.name), Some(ours));
        }
    }

    /// lexopt's forms: `--flag=value`, a value starting with `-`, an alias, a switch; and
    /// the refusals, in our words.
    #[test]
    fn the_forms_a_flag_takes() {
        let f = parse(&words(&[
            "--q=0.01",
            "--noise_multiplier",
            "1.1",
            "--epsilon",
            "-5e-324",
            "--json",
        ]))
        .unwrap();
        assert_eq!(
            (f.q, f.sigma, f.epsilon, f.json),
            (Some(0.01), Some(1.1), Some(-5e-324), true)
        );
        assert_eq!(f.given, ["q", "sigma", "epsilon", "json"]);
        let err = |w: &[&str]| parse(&words(w)).unwrap_err();
        assert!(err(&["-q", "1"]).starts_with("unexpected argument '-q' (flags start with --;"));
        assert!(err(&["-abc"]).starts_with("unexpected argument '-abc' (flags start with --;"));
        assert!(err(&["--q", "1", "--"]).starts_with("unknown flag '--' ("));
        assert!(err(&["--", "--q", "1"]).starts_with("unknown flag '--' ("));
        // A value may be anything, `--` too (then refused as that flag's value).
        assert_eq!(
            parse(&words(&["--target", "--"]))
                .unwrap()
                .target
                .as_deref(),
            Some("--")
        );
        assert!(err(&["junk"]).starts_with("unexpected argument 'junk'"));
        assert!(err(&["--nosuch", "1"]).starts_with("unknown flag '--nosuch'"));
        assert_eq!(err(&["--q"]), "--q needs a value");
        assert_eq!(err(&["--sample_rate"]), "--sample_rate needs a value");
        assert_eq!(
            err(&["--sample_rate", "x"]),
            "--sample_rate: 'x' is not a number"
        );
        assert_eq!(
            err(&["--q", "0.1", "--sample_rate=0.2"]),
            "--q given more than once (give each flag once)"
        );
        assert!(err(&["--json=false"]).starts_with("--json takes no value"));
    }
}
