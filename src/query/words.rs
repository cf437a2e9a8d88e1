//! The command line's words (`sgm-rdp <command> --flag value ...`; the JS API's `command()`
//! and the Python package's `run()` take the same words): the help, the parse into a
//! [`Request`] (lexopt reads the words; every message is ours) and the printed answer.

use super::*;

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
    if cmd == "check" {
        return Some(format!(
            "sgm-rdp check: {}\n\nusage: sgm-rdp check --library L --noise-multiplier S (--sample-rate Q | --dataset-size N --batch-size B) (--epochs E | --steps T) --delta D [--key value ...] [--config FILE] [--json]\n\nkeys: {}\n(the catalogue of mismatches: docs/check.md)",
            about.replace('\n', " "),
            super::check::CHECK_KEYS[1..].join(", ")
        ));
    }
    if cmd == "audit" {
        return Some(format!(
            "sgm-rdp audit: {}\n\nusage: sgm-rdp audit (--in FILE --out FILE [--column NAME] | --scores FILE.csv) [--delta D] [--significance A] [--fpr F1,F2,..] [--threshold T] [--lower-is-member] [run: --q Q --sigma S --steps T | --dataset-size N --batch-size B --epochs E --sigma S, --sampling ..., --group-size K ...] [--json]\n\n--in/--out: members' and non-members' scores, one per line or a CSV column ('score', or --column, or the first);\n--scores: one CSV with a 'score' and a 'member' column (1/0, true/false, in/out);\nhigher score = more likely a member unless --lower-is-member (losses);\n--significance: each bound holds with probability >= 1 - A (default 0.05);\n--delta: the epsilon lower bounds are read at this delta (without it only the mu bounds);\nthe run's terms put its certified epsilon and mu beside the audit.\n(the bounds, their assumptions and references: docs/audit.md)",
            about.replace('\n', " ")
        ));
    }
    if cmd == "audit-plan" {
        return Some(format!(
            "sgm-rdp audit-plan: {}\n\nusage: sgm-rdp audit-plan (--q Q --sigma S --steps T | --dataset-size N --batch-size B --epochs E --sigma S) --delta D [--significance A] [--fraction F] [scheme flags] [--json]\n\n--fraction: the share of the certified epsilon the audit should show (default 0.5)\n(docs/audit.md)",
            about.replace('\n', " ")
        ));
    }
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

/// The words after the command, as flags: `--name value` or `--name=value` (lexopt reads
/// them; a value may start with `-`); each flag at most once, under any of its names.
pub(super) fn parse(args: &[String]) -> Result<Request, String> {
    use lexopt::Arg;
    let mut f = Request {
        cli: true,
        ..Request::default()
    };
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

/// Run one command; Ok(stdout text) or Err(one-line reason).
pub fn run(args: &[String]) -> Result<String, String> {
    let (cmd, rest) = args.split_first().ok_or_else(|| USAGE.to_string())?;
    // Conventions: --help / -h / help, --version / -V, and `<command> --help`.
    match cmd.as_str() {
        "--help" | "-h" | "help" => return Ok(help()),
        "--version" | "-V" => return Ok(format!("sgm-rdp {}", env!("CARGO_PKG_VERSION"))),
        _ => {}
    }
    if rest.iter().any(|a| a == "--help" || a == "-h") {
        return command_help(cmd).ok_or_else(|| format!("unknown command '{cmd}' ({USAGE})"));
    }
    if cmd == "audit" || cmd == "audit-plan" {
        return super::audit::words(cmd, rest);
    }
    if matches!(cmd.as_str(), "epsilon" | "delta" | "calibrate" | "profile")
        && super::matrix::asked_in_words(rest)
    {
        return super::matrix::words(cmd, rest);
    }
    if cmd == "check" {
        let (config, json) = check_words(rest)?;
        return Ok(super::check(&config)?.print(json));
    }
    let f = parse(rest)?;
    let note = one_over_n_note(&f);
    let flags = allowed(cmd);
    if !flags.is_empty() {
        if let Some(extra) = f.given.iter().find(|g| !flags.contains(g)) {
            return Err(format!("--{extra} does not apply to {cmd}"));
        }
    }
    let json = f.json;
    let default_story = default_accountant_note(cmd, &f);
    Ok(answer(cmd, f)?.print(json) + &note + &default_story)
}

/// One default story told where the user meets it (issue 61 #9): a plain Poisson `epsilon`,
/// `delta` or `calibrate` without `--accountant` answers by exact RDP (as dp_accounting's
/// RdpAccountant and Opacus' RDP accountant do), while the page, the widget and the Python
/// package answer by the tight accountant; the text answer says so. "" for JSON and for
/// runs whose accountant is given or fixed by their scheme.
fn default_accountant_note(cmd: &str, f: &Request) -> String {
    let plain = f.is_plain() && f.bands.is_none() && f.risk.iter().all(Option::is_none);
    if f.json
        || f.accountant.is_some()
        || !plain
        || !matches!(cmd, "epsilon" | "delta" | "calibrate")
    {
        return String::new();
    }
    "(exact RDP: the command line's default; --accountant pld gives the tight accountant's certified bracket, the default of the page, the widget and the Python package; --accountant both shows the two)\n".into()
}

/// `check`'s words: `--config FILE` (a JSON object of the configuration), then any
/// `--key value` in the libraries' own names, dashed or not (`--noise-multiplier 1.0`,
/// `--poisson-sampling false`), over the file's; `--json`.
fn check_words(rest: &[String]) -> Result<(Map<String, Value>, bool), String> {
    let mut config = Map::new();
    let mut given = Map::new();
    let mut json = false;
    let mut words = rest.iter();
    while let Some(w) = words.next() {
        let Some(name) = w.strip_prefix("--").filter(|n| !n.is_empty()) else {
            return Err(format!(
                "unexpected argument '{w}' (check takes --key value)"
            ));
        };
        let (name, inline) = match name.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (name, None),
        };
        if name == "json" {
            json = true;
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => words
                .next()
                .cloned()
                .ok_or_else(|| format!("--{name} needs a value"))?,
        };
        if name == "config" {
            let text =
                std::fs::read_to_string(&value).map_err(|e| format!("--config {value}: {e}"))?;
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(m)) => config = m,
                Ok(_) => return Err(format!("--config {value}: not a JSON object")),
                Err(e) => return Err(format!("--config {value}: invalid JSON ({e})")),
            }
            continue;
        }
        let key = name.replace('-', "_");
        if given.contains_key(&key) {
            return Err(format!(
                "--{name} given more than once (give each flag once)"
            ));
        }
        let v = match value.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => match value.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => json!(x),
                _ => Value::String(value),
            },
        };
        given.insert(key, v);
    }
    config.extend(given);
    Ok((config, json))
}

/// The text answer of a run given in dataset terms warns when δ ≥ 1/N, as the page does
/// (issue 61 #9); "" for JSON and for other runs.
fn one_over_n_note(f: &Request) -> String {
    match (f.json, f.dataset[0], f.delta) {
        (false, Some(n), Some(d)) if n >= 1.0 && d >= 1.0 / n => format!(
            "warning: delta = {} >= 1/N = {}: the usual rule asks for delta < 1/N (a mechanism that publishes one random example in full satisfies delta = 1/N)\n",
            engine::error::show(d),
            engine::error::show(1.0 / n)
        ),
        _ => String::new(),
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
