//! The page's link: every setting a shared URL carries, and the one codec for it.
//!
//! `?v=1&q=…&sigma=…&steps=…&delta=…&conv=improved|classic&acct=pld|rdp&batch=poisson|shuffled`
//! then, only when they differ from the page's defaults: `omega=…` (chart A's tCDP ω),
//! `overlays=1` (chart B's Table 1 overlays), `cb_sigma=…&cb_eps=…` (chart D's inputs),
//! `dataset_size=…&batch_size=…&epochs=…` (the dataset terms), `target=…` (the target ε),
//! `group=K` (examples per user; the tight ε is user-level above 1), `adjacency=replace-one`,
//! `max_batch=M` (truncated Poisson's largest batch) and `embed=1` (iframe mode).
//! `batch=` is one of poisson, shuffled, random-allocation, truncated-poisson, fixed-size.
//! Links made before any of these existed (`v=1` with the first five) read as before.
//!
//! Decoding never fails as a whole: each value is read with the same parser as a typed
//! one, and a bad or unknown value gives a [`LinkError`] naming the parameter while the
//! default stays in place. Parameters this page does not know (e.g. `utm_source`) are
//! ignored. No DOM: tested natively, and the widget builds its calculator link with it.

use crate::engine::Conversion;
use crate::render::Inputs;
use crate::ui::fields::{parse_capacity, parse_field, parse_number, parse_omega, Field};

/// The link format's version (`v=`).
pub const VERSION: &str = "1";

/// Which accountant states the page's sentence (`acct=`): the one [`Accountant`](crate::engine::Accountant) type of
/// every front end, of which the page offers `pld` (the default) and `rdp`.
pub use crate::engine::Accountant as Acct;

/// How batches are drawn (`batch=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Batching {
    /// Poisson sampling with rate q: what the ε accounts for.
    #[default]
    Poisson,
    /// Shuffled, fixed-size batches: the bound without amplification applies.
    Shuffled,
    /// Random allocation (balls in bins): each example in one of ⌊1/q⌋ steps per epoch.
    RandomAllocation,
    /// Poisson sampling with rate q over N examples, batches capped at a largest size.
    TruncatedPoisson,
    /// Each step a uniformly random B = q·N of the N examples (replace-one, RDP only).
    FixedSize,
}

impl Batching {
    /// Every choice, in the control's order.
    pub const ALL: [Batching; 5] = [
        Batching::Poisson,
        Batching::Shuffled,
        Batching::RandomAllocation,
        Batching::TruncatedPoisson,
        Batching::FixedSize,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Batching::Poisson => "poisson",
            Batching::Shuffled => "shuffled",
            Batching::RandomAllocation => "random-allocation",
            Batching::TruncatedPoisson => "truncated-poisson",
            Batching::FixedSize => "fixed-size",
        }
    }

    /// The key of this scheme's answer in the worker's headline message (`shuffled`,
    /// `allocation`, `scheme`); None for Poisson sampling, whose answer is the message itself.
    pub fn answer_key(self) -> Option<&'static str> {
        match self {
            Batching::Poisson => None,
            Batching::Shuffled => Some("shuffled"),
            Batching::RandomAllocation => Some("allocation"),
            Batching::TruncatedPoisson | Batching::FixedSize => Some("scheme"),
        }
    }

    /// The choice named `name` (`batch=` and the control's values).
    pub fn from_name(name: &str) -> Option<Batching> {
        Batching::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// The dataset terms as typed: size N, batch size B, epochs E.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dataset {
    pub n: f64,
    pub b: f64,
    pub e: f64,
}

impl Dataset {
    /// The page's default (MNIST: 60 000 examples, batches of 256, 60 epochs).
    pub const MNIST: Dataset = Dataset {
        n: 60000.0,
        b: 256.0,
        e: 60.0,
    };
}

/// Everything a link carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// q, σ, T, δ, the conversion and ω.
    pub inputs: Inputs,
    pub acct: Acct,
    pub batch: Batching,
    /// Chart B's Table 1 overlays.
    pub overlays: bool,
    /// Chart D's Gaussian σ and Laplace ε.
    pub capacity: (f64, f64),
    pub dataset: Dataset,
    /// Iframe mode.
    pub embed: bool,
    /// The target ε of "What do I need?" (and of the ε-over-training chart), when set.
    pub target: Option<f64>,
    /// Examples per user (`group=`, 1 … 256): above 1 the tight ε is user-level.
    pub group: u32,
    /// Who is a neighbour (`adjacency=replace-one`; add/remove by default).
    pub adjacency: crate::engine::Adjacency,
    /// Truncated Poisson's largest batch (`max_batch=`); None: the default
    /// ([`default_max_batch`]).
    pub max_batch: Option<u64>,
    /// The attack-risk target of "What do I need?" (`risk_tpr=`, `risk_fpr=`): TPR ≤ the
    /// first at FPR the second, when it differs from [`DEFAULT_RISK`].
    pub risk: Option<(f64, f64)>,
}

impl Default for Link {
    fn default() -> Self {
        Link {
            inputs: Inputs::mnist(),
            acct: Acct::Pld,
            batch: Batching::Poisson,
            overlays: false,
            capacity: (1.0, 1.0),
            dataset: Dataset::MNIST,
            target: None,
            embed: false,
            group: 1,
            adjacency: crate::engine::Adjacency::AddRemove,
            max_batch: None,
            risk: None,
        }
    }
}

/// Truncated Poisson's largest batch when none is given: the mean batch q·N plus four of its
/// standard deviations, rounded up (a batch that large or larger has probability < 1e-4).
pub fn default_max_batch(q: f64, n: f64) -> u64 {
    crate::engine::params::default_max_batch(q, n)
}

/// A largest batch as typed (`max_batch=`, the page's box): a whole number ≥ 1.
pub fn parse_max_batch(t: &str) -> Result<u64, String> {
    parse_count(t, "largest batch")
}

/// A count as typed (a largest batch, a widget's `dataset-size`): a whole number from 1 to
/// 10¹², or why not, naming it.
pub fn parse_count(t: &str, name: &str) -> Result<u64, String> {
    let x = parse_number(t).map_err(|m| format!("{name}: {m}"))?;
    if (1.0..=1e12).contains(&x) && x.fract() == 0.0 {
        Ok(x as u64)
    } else {
        Err(format!(
            "{name} must be a whole number from 1 to 10¹², got {}",
            clip(t)
        ))
    }
}

/// A refused link value: the parameter, and the message to show next to its control.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkError {
    pub param: &'static str,
    pub message: String,
}

/// Every parameter the codec reads; anything else in a query is ignored.
pub const PARAMS: [&str; 23] = [
    "v",
    "q",
    "sigma",
    "steps",
    "delta",
    "conv",
    "acct",
    "batch",
    "omega",
    "overlays",
    "cb_sigma",
    "cb_eps",
    "dataset_size",
    "batch_size",
    "epochs",
    "embed",
    "dataset",
    "target",
    "group",
    "adjacency",
    "max_batch",
    "risk_tpr",
    "risk_fpr",
];

/// The query (with or without its leading `?`) → the link's settings, plus one
/// [`LinkError`] per refused value (its default kept).
pub fn decode(query: &str) -> (Link, Vec<LinkError>) {
    let pairs = pairs(query);
    // The first occurrence counts (as `URLSearchParams.get` does).
    let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let mut link = Link::default();
    let mut errors = Vec::new();
    let mut refuse = |param: &'static str, message: String| {
        errors.push(LinkError {
            param,
            message: format!("from the link: {message}"),
        })
    };
    if let Some(v) = get("v").filter(|v| *v != VERSION) {
        refuse(
            "v",
            format!(
                "v = '{}' is a link format this page does not know (it reads v = {VERSION}); values read as v = {VERSION}",
                clip(v)
            ),
        );
    }
    for f in Field::ALL {
        if let Some(t) = get(f.id()) {
            match parse_field(f, t) {
                Ok(v) => f.set(&mut link.inputs, v),
                Err(m) => refuse(f.id(), m),
            }
        }
    }
    if let Some(t) = get("conv") {
        match t.parse::<Conversion>() {
            Ok(c) => link.inputs.conversion = c,
            Err(_) => refuse("conv", one_of("conv", t, &["improved", "classic"])),
        }
    }
    match get("acct") {
        None | Some("pld") => {}
        Some("rdp") => link.acct = Acct::Rdp,
        Some(t) => refuse("acct", one_of("acct", t, &["pld", "rdp"])),
    }
    if let Some(t) = get("batch") {
        match Batching::from_name(t) {
            Some(b) => link.batch = b,
            None => refuse(
                "batch",
                one_of("batch", t, &Batching::ALL.map(Batching::name)),
            ),
        }
    }
    if let Some(t) = get("adjacency") {
        match crate::engine::Adjacency::parse(t) {
            Some(a) => link.adjacency = a,
            None => refuse(
                "adjacency",
                one_of("adjacency", t, &["add-remove", "replace-one"]),
            ),
        }
    }
    if let Some(t) = get("max_batch") {
        match parse_max_batch(t) {
            Ok(m) => link.max_batch = Some(m),
            Err(m) => refuse("max_batch", m),
        }
    }
    if let Some(t) = get("group") {
        match parse_group(t) {
            Ok(k) => link.group = k,
            Err(m) => refuse("group", m),
        }
    }
    if let Some(t) = get("target") {
        match parse_target(t) {
            Ok(e) => link.target = Some(e),
            Err(m) => refuse("target", m),
        }
    }
    if get("risk_tpr").is_some() || get("risk_fpr").is_some() {
        let rate = |k: &str, name: &str, default: f64| {
            get(k).map_or(Ok(default), |t| crate::ui::fields::parse_rate(t, name))
        };
        match (
            rate("risk_tpr", "TPR", DEFAULT_RISK.0),
            rate("risk_fpr", "FPR", DEFAULT_RISK.1),
        ) {
            (Ok(t), Ok(f)) => link.risk = Some((t, f)),
            (Err(m), _) => refuse("risk_tpr", m),
            (_, Err(m)) => refuse("risk_fpr", m),
        }
    }
    if let Some(t) = get("omega") {
        match parse_omega(t) {
            Ok(w) => link.inputs.omega = w,
            Err(m) => refuse("omega", m),
        }
    }
    match get("overlays") {
        None | Some("0") => {}
        Some("1") => link.overlays = true,
        Some(t) => refuse("overlays", one_of("overlays", t, &["0", "1"])),
    }
    let (s, e) = (get("cb_sigma"), get("cb_eps"));
    if s.is_some() || e.is_some() {
        let d = Link::default().capacity;
        match parse_capacity(
            &s.map_or_else(|| d.0.to_string(), str::to_string),
            &e.map_or_else(|| d.1.to_string(), str::to_string),
        ) {
            Ok(c) => link.capacity = c,
            Err(m) => refuse(if s.is_some() { "cb_sigma" } else { "cb_eps" }, m.into()),
        }
    }
    let terms = [get("dataset_size"), get("batch_size"), get("epochs")];
    if terms.iter().any(Option::is_some) {
        match dataset(terms) {
            Ok(d) => {
                link.dataset = d;
                // The dataset terms name the run: they set q = B/N and T = ⌈E·N/B⌉ unless
                // the link gives q and steps itself, which must then agree (hardening
                // round 3, #13: the boxes showed one run, the numbers another).
                if let Ok((q, t)) = crate::engine::params::from_dataset(d.n, d.b, d.e) {
                    match (get("q").is_some(), get("steps").is_some()) {
                        (false, false) => {
                            link.inputs.q = q;
                            link.inputs.steps = t;
                        }
                        _ if !dataset_names(&d, &link.inputs) => refuse(
                            "dataset",
                            format!(
                                "the dataset terms give q = {q} and T = {t}, the link's q and steps differ; showing q and steps from the link"
                            ),
                        ),
                        _ => {}
                    }
                }
            }
            Err(m) => refuse("dataset", m),
        }
    }
    match get("embed") {
        None | Some("0") => {}
        Some("1") => link.embed = true,
        Some(t) => refuse("embed", one_of("embed", t, &["0", "1"])),
    }
    (link, errors)
}

/// The link's query, without the leading `?`. Values are written shortest-exact (`{}` of
/// an f64), so [`decode`] gives back the same numbers.
pub fn encode(link: &Link) -> String {
    let i = &link.inputs;
    // Shortest round-trip numbers, in exponent form where plain would be long (q = 1e-300
    // was written with 300 digits).
    let mut s = format!(
        "v={VERSION}&q={}&sigma={}&steps={}&delta={}&conv={}&acct={}&batch={}",
        show(i.q),
        show(i.sigma),
        i.steps,
        show(i.delta),
        i.conversion.name(),
        link.acct.name(),
        link.batch.name()
    );
    let d = Link::default();
    if i.omega != d.inputs.omega {
        s += &format!("&omega={}", show(i.omega));
    }
    if link.overlays {
        s += "&overlays=1";
    }
    if link.capacity != d.capacity {
        s += &format!(
            "&cb_sigma={}&cb_eps={}",
            show(link.capacity.0),
            show(link.capacity.1)
        );
    }
    // The dataset terms only when they name this run (q = B/N, T = ⌈E·N/B⌉): a link
    // never carries boxes that disagree with its numbers.
    if link.dataset != d.dataset && dataset_names(&link.dataset, i) {
        let t = link.dataset;
        s += &format!(
            "&dataset_size={}&batch_size={}&epochs={}",
            show(t.n),
            show(t.b),
            show(t.e)
        );
    }
    if let Some(e) = link.target {
        s += &format!("&target={}", show(e));
    }
    if link.group != 1 {
        s += &format!("&group={}", link.group);
    }
    if link.adjacency != d.adjacency {
        s += &format!("&adjacency={}", link.adjacency.name());
    }
    if let Some(m) = link.max_batch {
        s += &format!("&max_batch={m}");
    }
    if let Some((t, f)) = link.risk.filter(|r| *r != DEFAULT_RISK) {
        s += &format!("&risk_tpr={}&risk_fpr={}", show(t), show(f));
    }
    if link.embed {
        s += "&embed=1";
    }
    s
}

/// The page's attack-risk target when the link names none (TPR ≤ 0.05 at FPR 0.01): a
/// link carries `risk_tpr`/`risk_fpr` only when they differ.
pub const DEFAULT_RISK: (f64, f64) = (0.05, 0.01);

/// The element that shows a refused link parameter's reason, next to its control.
pub fn error_element(param: &str) -> &'static str {
    match param {
        "q" => "q-error",
        "sigma" => "sigma-error",
        "steps" => "steps-error",
        "delta" => "delta-error",
        "omega" => "omega-error",
        "acct" => "accountant-error",
        "batch" => "batching-error",
        "group" => "group-size-error",
        "adjacency" => "adjacency-error",
        "max_batch" => "max-batch-error",
        "cb_sigma" | "cb_eps" => "cb-error",
        "dataset" => "ds-error",
        "target" => "target-error",
        "risk_tpr" | "risk_fpr" => "risk-error",
        "overlays" => "overlays-error",
        "conv" => "conversion-error",
        _ => "link-error",
    }
}

/// The page's target ε when the link names none (its "target ε" box starts at it): a link
/// carries `target` only when it differs.
pub const DEFAULT_TARGET: f64 = 3.0;

/// A target ε (the link's `target`, the page's "target ε" box): the engine's ε rule.
pub fn parse_target(text: &str) -> Result<f64, String> {
    let e = crate::ui::fields::parse_number(text).map_err(|m| format!("target ε: {m}"))?;
    crate::engine::params::check_epsilon(e).map_err(|e| e.to_string())
}

/// Examples per user as typed: a whole number in [1, 256] (the engine's range).
pub fn parse_group(text: &str) -> Result<u32, String> {
    let t = text.trim();
    match t.parse::<u32>() {
        Ok(k) if (1..=256).contains(&k) => Ok(k),
        _ => Err(format!(
            "examples per user must be a whole number from 1 to 256, got '{}'",
            t.chars().take(20).collect::<String>()
        )),
    }
}

/// A number for a link: Rust's shortest round-trip decimal where that is short (links
/// stay as they were), exponent form where it is long (q = 1e-300 was 300 digits).
fn show(x: f64) -> String {
    let plain = format!("{x}");
    if plain.len() <= 24 {
        plain
    } else {
        format!("{x:e}")
    }
}

/// Whether the dataset terms give this run's q and T.
fn dataset_names(d: &Dataset, i: &Inputs) -> bool {
    crate::engine::params::from_dataset(d.n, d.b, d.e)
        .is_ok_and(|(q, t)| (i.q - q).abs() <= 1e-12 * q && i.steps == t)
}

/// The dataset terms from the link (a missing one keeps the default's), checked as the
/// page's boxes check them.
fn dataset([n, b, e]: [Option<&str>; 3]) -> Result<Dataset, String> {
    let d = Dataset::MNIST;
    let read = |t: Option<&str>, default: f64, name: &str| match t {
        None => Ok(default),
        Some(t) => parse_number(t).map_err(|m| format!("{name}: {m}")),
    };
    let t = Dataset {
        n: read(n, d.n, "dataset_size")?,
        b: read(b, d.b, "batch_size")?,
        e: read(e, d.e, "epochs")?,
    };
    crate::engine::params::from_dataset(t.n, t.b, t.e)
        .map(|_| t)
        .map_err(|e| e.to_string())
}

fn one_of(param: &str, got: &str, allowed: &[&str]) -> String {
    let list = allowed
        .iter()
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" or ");
    format!(
        "{param} must be {list}, got '{}'; showing {}",
        clip(got),
        allowed[0]
    )
}

fn clip(s: &str) -> String {
    s.chars().take(24).collect()
}

/// `application/x-www-form-urlencoded` pairs: `+` is a space, `%XX` a byte; invalid
/// escapes are kept as typed and invalid UTF-8 becomes U+FFFD.
fn pairs(query: &str) -> Vec<(String, String)> {
    query
        .strip_prefix('?')
        .unwrap_or(query)
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (unescape(k), unescape(v))
        })
        .collect()
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

// Native only: proptest is a native dev-dependency (the ui layer is tested natively).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::engine::math::powf;
    use proptest::prelude::*;

    #[test]
    fn old_links_read_as_before() {
        let (l, e) = decode("?v=1&q=0.01&sigma=1.1&steps=1000&delta=1e-5&conv=classic");
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(l.inputs.q, 0.01);
        assert_eq!(l.inputs.sigma, 1.1);
        assert_eq!(l.inputs.steps, 1000);
        assert_eq!(l.inputs.delta, 1e-5);
        assert_eq!(l.inputs.conversion, Conversion::Classic);
        assert_eq!(
            (l.acct, l.batch, l.overlays, l.embed),
            (Acct::Pld, Batching::Poisson, false, false)
        );
        // No query at all: the defaults, no message.
        assert_eq!(decode(""), (Link::default(), vec![]));
    }

    #[test]
    fn every_bad_value_is_named_and_the_default_kept() {
        let cases = [
            ("v=2", "v"),
            ("q=2", "q"),
            ("sigma=abc", "sigma"),
            ("steps=0", "steps"),
            ("delta=1", "delta"),
            ("conv=improvd", "conv"),
            ("acct=prv", "acct"),
            ("batch=fixed", "batch"),
            ("omega=-1", "omega"),
            ("overlays=yes", "overlays"),
            ("cb_sigma=0", "cb_sigma"),
            ("cb_eps=x", "cb_eps"),
            ("dataset_size=100&batch_size=256", "dataset"),
            ("epochs=0", "dataset"),
            ("embed=2", "embed"),
            ("group=0", "group"),
            ("group=2.5", "group"),
            ("group=257", "group"),
            ("adjacency=swap", "adjacency"),
        ];
        for (query, param) in cases {
            let (l, e) = decode(query);
            assert_eq!(e.len(), 1, "{query}: {e:?}");
            assert_eq!(e[0].param, param, "{query}");
            assert!(e[0].message.starts_with("from the link: "), "{:?}", e[0]);
            assert_eq!(l, Link::default(), "{query}: the default is kept");
        }
        let (_, e) = decode("conv=improvd");
        assert_eq!(
            e[0].message,
            "from the link: conv must be 'improved' or 'classic', got 'improvd'; showing improved"
        );
        // The engine's own words name the field.
        let (_, e) = decode("q=2");
        assert!(e[0].message.contains("sample_rate q"), "{}", e[0].message);
    }

    #[test]
    fn forgiving_values_and_escapes() {
        let (l, e) = decode("q=256%2F60%2C000&steps=14+063&sigma=%E2%88%921&utm_source=x");
        assert_eq!(l.inputs.q, 256.0 / 60000.0);
        assert_eq!(l.inputs.steps, 14063);
        // A Unicode minus is read as a minus, so σ = −1 is refused by name.
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].param, "sigma");
        // Broken escapes are kept as typed, never a panic.
        assert_eq!(unescape("%"), "%");
        assert_eq!(unescape("%4"), "%4");
        assert_eq!(unescape("%zz%41"), "%zzA");
        assert_eq!(unescape("%ff"), "\u{fffd}");
    }

    #[test]
    fn encode_writes_only_what_differs_from_the_defaults() {
        let q = encode(&Link::default());
        assert_eq!(
            q,
            format!(
                "v=1&q={}&sigma=1.1&steps=14063&delta=0.00001&conv=improved&acct=pld&batch=poisson",
                256.0 / 60000.0
            )
        );
        let l = Link {
            overlays: true,
            embed: true,
            capacity: (2.0, 0.5),
            ..Link::default()
        };
        assert!(encode(&l).ends_with("&overlays=1&cb_sigma=2&cb_eps=0.5&embed=1"));
    }

    fn link() -> impl Strategy<Value = Link> {
        (
            (
                -8.0f64..0.0,
                -1.0f64..2.0,
                1u64..1_000_000_000,
                -12.0f64..-1.0,
            ),
            (any::<bool>(), any::<bool>(), 0usize..5, any::<bool>()),
            (1e-3f64..1e3, 1e-3f64..1e3, 0.01f64..1e5, any::<bool>()),
            (1u32..100_000_000, 1u32..1000, 1e-2f64..1e3, 1.0f64..1e5),
            (
                1u32..=256,
                any::<bool>(),
                proptest::option::of(1u64..1_000_000),
            ),
        )
            .prop_map(
                |(
                    (q, s, steps, d),
                    (cl, rdp, sh, ov),
                    (cs, ce, w, em),
                    (n, b, e, tg),
                    (group, rep, max_batch),
                )| {
                    let n = n.max(b) as f64;
                    // Valid terms only: T = ⌈E·N/B⌉ ≤ 10⁹.
                    let e = e.min(0.9e9 * b as f64 / n);
                    Link {
                        inputs: Inputs {
                            q: powf(10f64, q),
                            sigma: powf(10f64, s),
                            steps,
                            delta: powf(10f64, d),
                            conversion: if cl {
                                Conversion::Classic
                            } else {
                                Conversion::Improved
                            },
                            omega: w,
                        },
                        acct: if rdp { Acct::Rdp } else { Acct::Pld },
                        batch: Batching::ALL[sh],
                        overlays: ov,
                        capacity: (cs, ce),
                        dataset: Dataset { n, b: b as f64, e },
                        embed: em,
                        target: (tg < 5e4).then_some(tg),
                        risk: max_batch
                            .map(|m| {
                                (
                                    ((m % 97) + 1) as f64 / 100.0,
                                    ((m % 89) + 1) as f64 / 1000.0,
                                )
                            })
                            .filter(|r| *r != DEFAULT_RISK),
                        group,
                        adjacency: if rep {
                            crate::engine::Adjacency::ReplaceOne
                        } else {
                            crate::engine::Adjacency::AddRemove
                        },
                        max_batch,
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn round_trip(l in link()) {
            let (back, errors) = decode(&encode(&l));
            prop_assert!(errors.is_empty(), "{:?}", errors);
            // Dataset terms that do not name the run are not written (they would contradict
            // its q and T); everything else comes back as it was.
            let mut want = l;
            if !dataset_names(&l.dataset, &l.inputs) {
                want.dataset = Link::default().dataset;
            }
            prop_assert_eq!(back, want);
        }

        #[test]
        fn any_query_decodes_without_panic(q in ".{0,200}") {
            let (_, errors) = decode(&q);
            for e in errors {
                prop_assert!(PARAMS.contains(&e.param));
                prop_assert!(e.message.starts_with("from the link: "));
            }
        }

        #[test]
        fn known_keys_with_any_value(k in 0usize..PARAMS.len(), v in "[-+%0-9a-zA-Z.,/ ]{0,30}") {
            let (_, errors) = decode(&format!("{}={}", PARAMS[k], v));
            prop_assert!(errors.len() <= 1);
        }
    }

    /// #23: the batching choices and truncated Poisson's largest batch in a link.
    #[test]
    fn schemes_and_the_largest_batch_in_links() {
        for b in Batching::ALL {
            let (l, e) = decode(&format!("batch={}&max_batch=300", b.name()));
            assert!(e.is_empty(), "{e:?}");
            assert_eq!((l.batch, l.max_batch), (b, Some(300)));
        }
        let (l, e) = decode("batch=truncated-poisson&max_batch=2.5");
        assert_eq!(l.max_batch, None, "the default stays");
        assert_eq!(e[0].param, "max_batch");
        assert!(e[0].message.contains("whole number"), "{}", e[0].message);
        assert!(parse_max_batch("0").unwrap_err().contains("whole number"));
        assert_eq!(parse_max_batch(" 320 "), Ok(320));
        // The default: q·N plus four standard deviations (MNIST: 256 + 4·15.97 → 320).
        assert_eq!(default_max_batch(256.0 / 60000.0, 60000.0), 320);
        assert_eq!(default_max_batch(1.0, 10.0), 10);
    }

    /// Hardening round 3, #15: tiny values are written in exponent form, and read back.
    #[test]
    fn tiny_values_are_short_in_links() {
        let mut l = Link::default();
        l.inputs.q = 1e-300;
        l.inputs.delta = 5e-324;
        let s = encode(&l);
        assert!(s.contains("q=1e-300&") && s.contains("delta=5e-324"), "{s}");
        assert!(s.len() < 200, "{s}");
        let (back, errors) = decode(&s);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(back.inputs.q, 1e-300);
    }

    /// Hardening round 3, #13: a link with dataset terms and no q/steps shows that run;
    /// one whose q/steps disagree with its terms says so.
    #[test]
    fn dataset_terms_in_a_link_set_q_and_steps() {
        let (l, errors) = decode("dataset_size=50000&batch_size=512&epochs=30");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(l.inputs.q, 512.0 / 50000.0);
        assert_eq!(l.inputs.steps, 2930);
        let (m, errors) = decode("q=0.01&steps=100&dataset_size=50000&batch_size=512&epochs=30");
        assert_eq!((m.inputs.q, m.inputs.steps), (0.01, 100));
        assert!(errors
            .iter()
            .any(|e| e.param == "dataset" && e.message.contains("differ")));
        // Copy link of the first (terms and q, steps agree): no message.
        let (_, errors) = decode(&encode(&l));
        assert!(errors.iter().all(|e| e.param != "dataset"), "{errors:?}");
    }

    #[test]
    fn the_attack_risk_target_travels_in_the_link() {
        let (l, e) = decode("?q=0.01&risk_tpr=0.1&risk_fpr=0.001");
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(l.risk, Some((0.1, 0.001)));
        assert!(encode(&l).ends_with("&risk_tpr=0.1&risk_fpr=0.001"));
        // One rate alone keeps the other's default; the defaults are left out.
        assert_eq!(decode("?risk_fpr=0.02").0.risk, Some((0.05, 0.02)));
        assert!(!encode(&decode("?risk_tpr=0.05").0).contains("risk"));
        let (l, e) = decode("?risk_tpr=2");
        assert_eq!((l.risk, e[0].param), (None, "risk_tpr"));
        assert!(e[0]
            .message
            .contains("TPR must be a number between 0 and 1"));
        assert_eq!(error_element(e[0].param), "risk-error");
    }

    #[test]
    fn the_target_epsilon_travels_in_the_link() {
        let (l, e) = decode("?q=0.01&target=3");
        assert!(e.is_empty());
        assert_eq!(l.target, Some(3.0));
        assert!(encode(&l).ends_with("&target=3"));
        assert_eq!(decode(&encode(&l)).0, l);
        assert!(!encode(&Link::default()).contains("target"));
        let (l, e) = decode("?target=-1");
        assert_eq!(l.target, None);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].param, "target");
        let (_, e) = decode("?target=x");
        assert!(e[0].message.contains("target ε"), "{}", e[0].message);
    }
}
