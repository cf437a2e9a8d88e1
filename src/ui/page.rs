//! What the page shows for a computed model: the headline's texts, warnings, the preset
//! the values match and the sentence — the state → view step, without the DOM (the web
//! layer writes these strings into their elements). Tested natively.

use crate::decimal::Dir;
use crate::engine::Adjacency;
use crate::render::{
    eps_factor, eps_number, fmt_eps, fmt_eps_lower, fmt_num, fmt_num_up, summary_a, summary_b,
    Inputs, Model,
};
use crate::ui::fields::preset_of;
use crate::ui::link::{Batching, Dataset};
use crate::ui::view::Op;

/// The dataset terms when they describe the run: B/N = q (to rounding), so an epoch is
/// N/B steps. None when the terms are for another run (or not numbers).
pub fn matching_dataset(d: Option<Dataset>, q: f64) -> Option<Dataset> {
    d.filter(|d| d.n > 0.0 && d.b > 0.0 && (d.b / d.n - q).abs() <= 1e-12 * q)
}

/// " ≈ E epochs" for T steps when the dataset terms describe q, else "".
pub fn in_epochs(d: Option<Dataset>, i: &Inputs, steps: u64) -> String {
    match matching_dataset(d, i.q) {
        Some(_) => format!(" ≈ {} epochs", fmt_num(steps as f64 * i.q)),
        None => String::new(),
    }
}

/// The page's texts for one model (element id → text, see `web::frame`).
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    /// `#epsilon`: the exact-RDP ε; a huge one stated in words.
    pub epsilon: String,
    /// `#delta-out`.
    pub delta: String,
    /// `#delta-warning`: δ ≥ 1/N once N is known, else "".
    pub delta_warning: String,
    /// `#alpha-opt`.
    pub alpha: String,
    /// `#edge-warning` shown.
    pub at_edge: bool,
    /// `#preset`: the preset the values match, or "" (the menu's "—").
    pub preset: &'static str,
    /// `#sentence`: the tight one when given (and not asked for RDP), else exact RDP's.
    pub sentence: String,
    pub summary_a: String,
    pub summary_b: String,
}

impl Headline {
    /// Its writes, element by element.
    pub fn ops(self) -> Vec<Op> {
        vec![
            Op::Text("epsilon", self.epsilon),
            Op::Text("delta-out", self.delta),
            Op::Value("preset", self.preset.into()),
            Op::Text("delta-warning", self.delta_warning),
            Op::Text("alpha-opt", self.alpha),
            Op::Hidden("edge-warning", !self.at_edge),
            Op::Text("sentence", self.sentence),
            Op::Text("chart-a-summary", self.summary_a),
            Op::Text("chart-b-summary", self.summary_b),
        ]
    }

    /// `tight_sentence`: the tight accountant's sentence for these inputs, if it has
    /// answered and the reader did not choose exact RDP.
    pub fn of(m: &Model, dataset: Option<Dataset>, tight_sentence: Option<String>) -> Headline {
        let i = &m.inputs;
        let delta_warning = match matching_dataset(dataset, i.q) {
            // The usual rule of thumb: δ < 1/N (publishing one random example in full
            // satisfies δ = 1/N).
            Some(d) if d.n >= 1.0 && i.delta >= 1.0 / d.n => format!(
                "δ = {:e} ≥ 1/N = {}: the usual rule asks for δ < 1/N (a mechanism that publishes one random example in full satisfies δ = 1/N)",
                i.delta,
                fmt_num(1.0 / d.n)
            ),
            _ => String::new(),
        };
        Headline {
            epsilon: fmt_eps(m.opt.value),
            delta: format!("{:e}", i.delta),
            delta_warning,
            alpha: format!("{:.2}", m.opt.alpha),
            at_edge: m.opt.at_edge,
            preset: preset_of(i),
            sentence: tight_sentence.unwrap_or_else(|| m.sentence()),
            summary_a: summary_a(m),
            summary_b: summary_b(m),
        }
    }
}

/// The scheme in words.
pub fn scheme_name(b: Batching) -> &'static str {
    match b {
        Batching::Poisson => "Poisson sampling",
        Batching::Shuffled => "shuffled, fixed-size batches",
        Batching::RandomAllocation => "random allocation",
        Batching::TruncatedPoisson => "truncated Poisson sampling",
        Batching::FixedSize => "fixed-size batches sampled without replacement",
    }
}

/// The run as a scheme other than Poisson sampling reads it: t = ⌊1/q⌋ steps per epoch
/// and E = ⌈T·q⌉ epochs (each example is in at most that many batches), as the page
/// without dataset terms and the widget.
pub fn epochs_of(i: &Inputs) -> (u64, f64) {
    let t = (1.0 / i.q).floor().max(1.0) as u64;
    (t, (i.steps as f64 * i.q * (1.0 - 1e-12)).ceil().max(1.0))
}

/// A batching scheme's run in words, t steps per epoch and E epochs: what its ε's two
/// ends are (the page's headline title, the widget's, and the sentence).
pub fn scheme_words_for(b: Batching, t: u64, e: f64) -> String {
    match b {
        Batching::Poisson => "Poisson sampling with rate q".into(),
        Batching::Shuffled => format!(
            "shuffled, fixed-size batches ({t} steps per epoch, {} epochs): upper end without amplification, lower end Chua et al.'s shuffled pair, both certified",
            fmt_num(e)
        ),
        Batching::RandomAllocation => format!(
            "random allocation (each example in one of {t} steps per epoch, {} epochs): both ends certified",
            fmt_num(e)
        ),
        // Their words need the dataset size: Scheme::words_for.
        Batching::TruncatedPoisson | Batching::FixedSize => scheme_name(b).to_string(),
    }
}

/// The sentence for a batching scheme's certified upper ε (add/remove adjacency).
pub fn scheme_sentence(b: Batching, sigma: f64, t: u64, e: f64, eps: f64, delta: f64) -> String {
    let how = match b {
        Batching::Poisson => "Poisson sampling".to_string(),
        Batching::Shuffled => format!("shuffled, fixed-size batches ({t} per epoch)"),
        Batching::RandomAllocation => {
            format!("random allocation (each example in one of {t} steps per epoch)")
        }
        Batching::TruncatedPoisson | Batching::FixedSize => scheme_name(b).to_string(),
    };
    format!(
        "Training with noise multiplier {} and {how} for {} epochs satisfies ({}, {})-differential privacy (certified upper bound; add/remove adjacency): for any one example, adding or removing it changes the probability of any outcome by at most a factor {}, except with probability {}.",
        fmt_num(sigma),
        fmt_num(e),
        eps_number(eps),
        fmt_num(delta),
        eps_factor(eps),
        fmt_num(delta)
    )
}

/// A Poisson-sampled run other than one example under add/remove adjacency — K examples
/// per user and/or replace-one adjacency — in words: what its ε's two ends are (the page's
/// headline title and the widget's).
pub fn user_words(k: u32, adjacency: Adjacency) -> String {
    let who = if k > 1 {
        format!("user-level: each user contributes at most {k} examples")
    } else {
        "one example per user".to_string()
    };
    let adj = match adjacency {
        Adjacency::AddRemove => "add/remove adjacency",
        Adjacency::ReplaceOne => "replace-one adjacency (sensitivity 2C)",
    };
    let how = if k > 1 {
        "mixture-of-Gaussians PLD"
    } else {
        "privacy-loss distribution"
    };
    format!(
        "{who}, {adj}, Poisson sampling with rate q; both ends of the bracket certified ({how})"
    )
}

/// Who is protected and how, for the adjacency line under the headline.
pub fn adjacency_words(k: u32, adjacency: Adjacency) -> String {
    match (k > 1, adjacency) {
        (false, Adjacency::AddRemove) => {
            "adding or removing one example (add/remove adjacency)".into()
        }
        (false, Adjacency::ReplaceOne) => {
            "replacing one example by another (replace-one adjacency)".into()
        }
        (true, Adjacency::AddRemove) => {
            format!(
                "adding or removing all of one user's examples (at most {k}; add/remove adjacency)"
            )
        }
        (true, Adjacency::ReplaceOne) => {
            format!("replacing all of one user's examples (at most {k}; replace-one adjacency)")
        }
    }
}

/// The sentence for such a run's certified upper ε.
pub fn user_sentence(
    sigma: f64,
    q: f64,
    steps: u64,
    k: u32,
    adjacency: Adjacency,
    eps: f64,
    delta: f64,
) -> String {
    let (whom, change) = match (k > 1, adjacency) {
        (true, Adjacency::AddRemove) => (
            format!(" for every user with at most {k} examples (certified upper bound; add/remove adjacency of one user's examples)"),
            "adding or removing all of one user's examples",
        ),
        (true, Adjacency::ReplaceOne) => (
            format!(" for every user with at most {k} examples (certified upper bound; replace-one adjacency of one user's examples)"),
            "replacing all of one user's examples by others",
        ),
        (false, Adjacency::ReplaceOne) => (
            " (certified upper bound; replace-one adjacency)".to_string(),
            "replacing any one example by another",
        ),
        (false, Adjacency::AddRemove) => (
            " (certified upper bound; add/remove adjacency)".to_string(),
            "adding or removing any one example",
        ),
    };
    format!(
        "Training with noise multiplier {}, Poisson sampling with rate {} and {steps} steps satisfies ({}, {})-differential privacy{whom}: {change} changes the probability of any outcome by at most a factor {}, except with probability {}.",
        fmt_num(sigma),
        fmt_num(q),
        eps_number(eps),
        fmt_num(delta),
        eps_factor(eps),
        fmt_num(delta)
    )
}

pub use crate::ui::fields::parse_rate;

/// What a tight ε is for (the page's controls, a widget's attributes): how batches are
/// drawn, how many examples a user has, and who is a neighbour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scheme {
    pub sampling: Batching,
    pub group: u32,
    pub adjacency: Adjacency,
    /// The dataset size N, when known (the page's dataset terms when they describe q, a
    /// widget's `dataset-size`): truncated Poisson and fixed-size batches need it.
    pub dataset_size: Option<u64>,
    /// Truncated Poisson's largest batch as given (None: `default_max_batch`).
    pub max_batch: Option<u64>,
}

/// The sizes a truncated-Poisson or fixed-size run is asked with: N, the batch size B = q·N
/// (fixed-size) and the largest batch (truncated Poisson).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    pub dataset_size: u64,
    pub batch_size: u64,
    pub max_batch: u64,
}

impl Scheme {
    /// A scheme of one example per user under add/remove adjacency, no sizes given.
    pub fn of(sampling: Batching, group: u32, adjacency: Adjacency) -> Scheme {
        Scheme {
            sampling,
            group,
            adjacency,
            dataset_size: None,
            max_batch: None,
        }
    }

    /// The sizes truncated Poisson and fixed-size batches are asked with, or why they cannot
    /// be (in words, for the headline); Ok(None) for the other schemes.
    pub fn sizes(&self, i: &Inputs) -> Result<Option<Sizes>, String> {
        let b = self.sampling;
        if !matches!(b, Batching::TruncatedPoisson | Batching::FixedSize) {
            return Ok(None);
        }
        let name = scheme_name(b);
        if self.group > 1 {
            return Err(format!(
                "{name} is accounted for one example per user (examples per user 1)"
            ));
        }
        let Some(n) = self.dataset_size.filter(|&n| n >= 1) else {
            return Err(format!(
                "{name} needs the dataset size N: give the dataset terms (N and B with B/N = q; a widget's dataset-size)"
            ));
        };
        let batch = (i.q * n as f64).round();
        if b == Batching::FixedSize {
            if self.adjacency != Adjacency::ReplaceOne {
                return Err("fixed-size batches are accounted under replace-one adjacency (the dataset size is public): choose “replace one” for neighbours".into());
            }
            if batch < 1.0 || (batch / n as f64 - i.q).abs() > 1e-9 * i.q {
                return Err(format!(
                    "fixed-size batches need a whole batch size B = q·N: q·N = {} for N = {n}",
                    fmt_num(i.q * n as f64)
                ));
            }
        } else if self.adjacency != Adjacency::AddRemove {
            return Err(
                "truncated Poisson sampling is accounted under add/remove adjacency".into(),
            );
        }
        Ok(Some(Sizes {
            dataset_size: n,
            batch_size: batch.max(1.0) as u64,
            max_batch: self
                .max_batch
                .unwrap_or_else(|| crate::ui::link::default_max_batch(i.q, n as f64)),
        }))
    }

    /// Poisson sampling, one example per user: the exact-RDP ε and its charts apply.
    pub fn is_plain(&self) -> bool {
        self.sampling == Batching::Poisson
            && self.group <= 1
            && self.adjacency == Adjacency::AddRemove
    }

    /// Poisson sampling with K examples per user or replace-one: the worker's `user` answer.
    fn poisson_variant(&self) -> bool {
        let sized = matches!(
            self.sampling,
            Batching::TruncatedPoisson | Batching::FixedSize
        );
        (self.group > 1 && !sized) || (self.sampling == Batching::Poisson && !self.is_plain())
    }

    /// The key of this run's answer in the worker's headline message (None: the message).
    pub fn answer_key(&self) -> Option<&'static str> {
        if self.poisson_variant() {
            Some("user")
        } else {
            self.sampling.answer_key()
        }
    }

    /// The dataset terms (N, B = q·N) when they describe q, for an epoch-based scheme of one
    /// example per user: what the worker derives the steps per epoch from.
    pub fn epoch_sizes(&self, i: &Inputs) -> Option<(u64, u64)> {
        if !matches!(
            self.sampling,
            Batching::Shuffled | Batching::RandomAllocation
        ) || self.group > 1
        {
            return None;
        }
        let n = self.dataset_size.filter(|&n| n >= 1)?;
        let b = (i.q * n as f64).round();
        (b >= 1.0 && (b / n as f64 - i.q).abs() <= 1e-9 * i.q).then_some((n, b as u64))
    }

    /// Steps per epoch, derived as the command line derives them (one derivation on every
    /// surface, issue 61 #5): from the dataset terms ⌊N/B⌋ for shuffled batches (the last
    /// partial batch dropped) and ⌈N/B⌉ for random allocation; else ⌊1/q⌋.
    pub fn steps_per_epoch(&self, i: &Inputs) -> u64 {
        match self.epoch_sizes(i) {
            Some((n, b)) if self.sampling == Batching::RandomAllocation => n.div_ceil(b),
            Some((n, b)) => n / b,
            None => epochs_of(i).0,
        }
    }

    /// The run in words (the headline's title): what the two ends are, with the steps per
    /// epoch of [`Scheme::steps_per_epoch`] and E = ⌈T·q⌉ epochs ([`epochs_of`]).
    pub fn words(&self, i: &Inputs) -> String {
        let e = epochs_of(i).1;
        self.words_for(i, self.steps_per_epoch(i), e)
    }

    /// The same with t steps per epoch and E epochs given (the page's dataset terms).
    pub fn words_for(&self, i: &Inputs, t: u64, e: f64) -> String {
        match (self.sampling, self.sizes(i)) {
            (Batching::Poisson, _) => user_words(self.group, self.adjacency),
            (Batching::TruncatedPoisson, Ok(Some(z))) => format!(
                "truncated Poisson sampling (rate q over N = {} examples, batches capped at {}), add/remove adjacency: upper end certified with both branches (truncated or not) revealed, lower end Poisson sampling at the inclusion rate; both certified",
                z.dataset_size, z.max_batch
            ),
            (Batching::FixedSize, Ok(Some(z))) => format!(
                "fixed-size batches of B = {} of N = {} examples sampled without replacement, replace-one adjacency: certified upper bound from RDP (Wang, Balle, Kasiviswanathan); no lower bound",
                z.batch_size, z.dataset_size
            ),
            (b, _) => scheme_words_for(b, t, e),
        }
    }

    /// The sentence for its certified upper ε (t, E as for [`Scheme::words`]).
    pub fn sentence(&self, i: &Inputs, eps: f64) -> String {
        let e = epochs_of(i).1;
        self.sentence_for(i, self.steps_per_epoch(i), e, eps)
    }

    /// The same with t steps per epoch and E epochs given.
    pub fn sentence_for(&self, i: &Inputs, t: u64, e: f64, eps: f64) -> String {
        if let Ok(Some(z)) = self.sizes(i) {
            let (how, bound, change) = if self.sampling == Batching::FixedSize {
                (
                    format!(
                        "fixed-size batches of {} of {} examples sampled without replacement",
                        z.batch_size, z.dataset_size
                    ),
                    "certified upper bound from RDP; replace-one adjacency",
                    "replacing any one example by another",
                )
            } else {
                (
                    format!(
                        "truncated Poisson sampling with rate {} over {} examples (batches capped at {})",
                        fmt_num(i.q),
                        z.dataset_size,
                        z.max_batch
                    ),
                    "certified upper bound; add/remove adjacency",
                    "adding or removing any one example",
                )
            };
            return format!(
                "Training with noise multiplier {}, {how} and {} steps satisfies ({}, {})-differential privacy ({bound}): {change} changes the probability of any outcome by at most a factor {}, except with probability {}.",
                fmt_num(i.sigma),
                i.steps,
                eps_number(eps),
                fmt_num(i.delta),
                eps_factor(eps),
                fmt_num(i.delta)
            );
        }
        if self.poisson_variant() {
            user_sentence(
                i.sigma,
                i.q,
                i.steps,
                self.group,
                self.adjacency,
                eps,
                i.delta,
            )
        } else {
            scheme_sentence(self.sampling, i.sigma, t, e, eps, i.delta)
        }
    }

    /// What the tight charts' series are for this run (their legends).
    pub fn chart_labels(&self) -> crate::render::tight::Labels {
        use crate::render::tight::Labels;
        match self.sampling {
            Batching::Shuffled => Labels {
                upper: "upper end: no amplification (certified)".into(),
                lower: Some("lower end: Chua et al.'s shuffled pair (certified)".into()),
                profile: "shuffled band δ(ε): no amplification … Chua et al.".into(),
                risk: "bound on any attack (no amplification, certified)".into(),
            },
            Batching::FixedSize => Labels {
                upper: "ε from RDP (Wang et al., certified upper bound)".into(),
                ..Labels::default()
            },
            _ => Labels::default(),
        }
    }

    /// The line under an exported chart naming its run (an export leaves the page, so
    /// the picture says what it is for): the inputs, their units, the scheme and adjacency.
    pub fn export_caption(&self, i: &Inputs) -> String {
        let adjacency = match self.adjacency {
            Adjacency::AddRemove => "add/remove-one adjacency",
            Adjacency::ReplaceOne => "replace-one adjacency",
        };
        let users = if self.group > 1 {
            format!(", users of at most {} examples", self.group)
        } else {
            String::new()
        };
        let sizes = match self.sizes(i) {
            Ok(Some(z)) if self.sampling == Batching::TruncatedPoisson => {
                format!(
                    " (N = {}, batches of at most {})",
                    z.dataset_size, z.max_batch
                )
            }
            Ok(Some(z)) => format!(" (B = {} of N = {})", z.batch_size, z.dataset_size),
            _ => String::new(),
        };
        signed(&format!(
            "q = {}, σ = {} (noise std / clipping norm), T = {}, δ = {:e} · {}{sizes}, {adjacency}{users}",
            fmt_num(i.q),
            fmt_num(i.sigma),
            i.steps,
            i.delta,
            scheme_name(self.sampling),
        ))
    }

    /// Which bound the attack-risk curve is for this run, in a sentence: the tight
    /// accountant's; for shuffled batches the band's upper end (no amplification), the only
    /// end with a whole trade-off curve.
    pub fn risk_source(&self) -> String {
        match self.sampling {
            Batching::Poisson if self.is_plain() => "the tight accountant".to_string(),
            Batching::Shuffled => {
                "the shuffled band's upper end: no amplification by shuffling is assumed"
                    .to_string()
            }
            _ => format!("the tight accountant for {}", self.name()),
        }
    }

    /// Its name in a sentence.
    pub fn name(&self) -> String {
        if self.group > 1 {
            format!("users with at most {} examples", self.group)
        } else if self.sampling == Batching::Poisson && self.adjacency == Adjacency::ReplaceOne {
            "Poisson sampling under replace-one adjacency".to_string()
        } else {
            scheme_name(self.sampling).to_string()
        }
    }
}

/// An export's footer: the version, then what the chart is for.
fn signed(what: &str) -> String {
    format!("sgm-rdp {} · {what}", env!("CARGO_PKG_VERSION"))
}

/// Chart C's export footer: Figure 1 (left) for noise multiplier σ.
pub fn export_caption_c(sigma: f64) -> String {
    signed(&format!(
        "σ = {} (noise std / clipping norm): Theorem 11's largest order against q",
        fmt_num(sigma)
    ))
}

/// Chart D's export footer: the unsampled Gaussian and Laplace mechanisms compared.
pub fn export_caption_d(gaussian_sigma: f64, laplace_eps: f64) -> String {
    signed(&format!(
        "Gaussian σ = {} (noise std / sensitivity), Laplace ε = {} (unsampled mechanisms)",
        fmt_num(gaussian_sigma),
        fmt_num(laplace_eps)
    ))
}

/// "What your library reports" for a run other than Poisson sampling of one example under
/// add/remove: which libraries account for it and how (no number of theirs is shown: we
/// do not compute their output for these runs), then ours — `ends` is our certified
/// (upper, lower) when known (lower None: an upper bound only), `why` the reason when not.
/// Rows: [tool, ε, note].
pub fn library_rows(sc: &Scheme, ends: Option<(f64, Option<f64>)>, why: &str) -> Vec<[String; 3]> {
    let no = "—".to_string();
    let (opacus, dpa): (&str, &str) = match (sc.sampling, sc.group > 1) {
        (_, true) => (
            "example-level only (add/remove); no user-level accounting",
            "no user-level accountant; group privacy over its RDP is up to you (TF Privacy's user-level route)",
        ),
        (Batching::Shuffled, _) => (
            "no shuffled-batch accounting: its accountants assume Poisson sampling (its DPDataLoader samples Poisson); the Poisson ε is not valid for shuffled batches",
            "no event for shuffled batches; accounting them as PoissonSampledDpEvent is not valid (Chua et al., ICML 2024)",
        ),
        (Batching::RandomAllocation, _) => (
            "no random-allocation accounting (Poisson sampling only)",
            "random allocation was merged in 2026 (its PR #414); not computed here",
        ),
        (Batching::TruncatedPoisson, _) => (
            "no truncated-Poisson accounting (Poisson sampling only)",
            "TruncatedSubsampledGaussianDpEvent with its PLDAccountant; not computed here",
        ),
        (Batching::FixedSize, _) => (
            "no fixed-size accounting (Poisson sampling only)",
            "SampledWithoutReplacementDpEvent with its RdpAccountant under REPLACE_ONE; not computed here",
        ),
        (Batching::Poisson, _) => (
            "add/remove adjacency only",
            "neighboring_relation=REPLACE_ONE (its PLD and RDP accountants read σ differently there: see the README)",
        ),
    };
    let ours = match ends {
        Some((up, Some(lo))) => format!(
            "certified upper bound; [{}, {}]: {}",
            fmt_eps_lower(lo),
            fmt_eps(up),
            sc.name()
        ),
        Some((_, None)) => format!(
            "certified upper bound from RDP (no lower bound): {}",
            sc.name()
        ),
        None => format!("unavailable: {why}"),
    };
    vec![
        ["Opacus".into(), no.clone(), opacus.into()],
        ["dp_accounting".into(), no, dpa.into()],
        [
            "sgm-rdp".into(),
            ends.map_or_else(|| "—".into(), |(u, _)| fmt_eps(u)),
            ours,
        ],
    ]
}

/// An engine message (as the worker relays it) in words for the page: without the call's
/// name, the accountant's prefix and its "still applies" tail ("epsilon: PLD accountant: …;
/// the exact-RDP epsilon still applies" → "…"); the page says what applies instead.
/// (strip_prefix, not trim_matches: the latter links a substring searcher, ~5 KB of wasm.)
pub fn reason_in_words(m: &str) -> String {
    let mut w = m;
    for p in [
        "epsilon: ",
        "epsilonOverTraining: ",
        "profile: ",
        "attackRisk: ",
        "command: ",
        "batchLine: ",
        "sgm-rdp: ",
    ] {
        w = w.strip_prefix(p).unwrap_or(w);
    }
    let w = w.strip_prefix("PLD accountant: ").unwrap_or(w);
    let w = w
        .strip_suffix("; the exact-RDP epsilon still applies")
        .unwrap_or(w);
    page_symbols(w)
}

/// The command line's ASCII spelled as the page writes it: the words epsilon, sigma and delta
/// as ε, σ and δ (whole words only: not "epsilon_lower" or "--delta"), <= and >= as ≤ and ≥
/// ("even one step gives epsilon = 8.810545 > target 3" stood under a chart whose axis reads ε).
fn page_symbols(m: &str) -> String {
    let mut out = String::with_capacity(m.len());
    // Whole words of ASCII letters, digits, '_' and '-' (the messages are ASCII; char's
    // Unicode classes cost the page's wasm 2 KB gzip of tables).
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    let mut rest = m;
    while !rest.is_empty() {
        let b = rest.as_bytes();
        let n = if is_word(b[0]) {
            b.iter().position(|&c| !is_word(c)).unwrap_or(b.len())
        } else if b.len() > 1 && (b[0] == b'<' || b[0] == b'>') && b[1] == b'=' {
            2
        } else {
            rest.chars().next().map_or(1, char::len_utf8)
        };
        // (`get`, not `split_at`: its panic path formats the string with Unicode escapes,
        // whose tables cost the page's wasm 4.1 KB gzip: 162,226 → 158,126 B.)
        let (Some(token), Some(tail)) = (rest.get(..n), rest.get(n..)) else {
            break;
        };
        out.push_str(match token {
            "epsilon" => "ε",
            "sigma" => "σ",
            "delta" => "δ",
            "<=" => "≤",
            ">=" => "≥",
            t => t,
        });
        rest = tail;
    }
    out
}

/// The ε-over-training sentence from the most steps whose certified (PLD) ε meets `target`
/// — the same solve as "What do I need?"'s "Most steps", so the two never disagree.
/// `most`: Ok(steps) or Err(the reason, in words); `epochs`: " ≈ … epochs" for a number of
/// steps when the dataset terms describe the run ("" otherwise); `end`: the run's certified ε.
pub fn budget_sentence(
    target: f64,
    most: Result<u64, &str>,
    run_steps: u64,
    end: f64,
    epochs: &dyn Fn(u64) -> String,
) -> String {
    let t = fmt_num(target);
    match most {
        Err(why) => format!(
            "When ε = {t} is reached is unavailable: {}.",
            why.trim_end_matches('.')
        ),
        Ok(m) if m < run_steps => format!(
            "ε ≤ {t} holds for the first {m} steps{} and not after (PLD, certified; the same solve as “Most steps”).",
            epochs(m)
        ),
        Ok(m) if m >= crate::engine::MAX_STEPS => format!(
            "ε stays below {t} for the whole run (PLD, certified: {} at the end) and for every T ≤ 10⁹.",
            fmt_num_up(end)
        ),
        Ok(m) => format!(
            "ε stays below {t} for the whole run (PLD, certified: {} at the end); it would hold for {m} steps{} (the same solve as “Most steps”).",
            fmt_num_up(end),
            epochs(m)
        ),
    }
}

/// The regret above which μ alone does not describe the run (Gomez, Kulynych, Carmon,
/// Troncoso, arXiv 2503.10945: regret is the largest gap between the run's trade-off curve and
/// the Gaussian one of its μ; ≤ 0.01 reads as a good fit).
pub const GDP_FIT: f64 = 0.01;

/// The μ-GDP line under the attack-risk chart: the certified μ with its bracket and the fit's
/// regret; where the fit is poor, the certified trade-off (TPR bound at each FPR) instead of
/// leaning on μ. `tradeoff`: (FPR, largest TPR) pairs.
pub fn gdp_sentence(mu: f64, mu_lower: f64, regret: f64, tradeoff: &[(f64, f64)]) -> String {
    if !(mu.is_finite() && mu >= 0.0 && regret.is_finite()) {
        return String::new();
    }
    let head = format!(
        "μ-GDP: μ = {up} (certified upper bound; bracket [{}, {up}]), fit regret {regret:.1e}",
        crate::decimal::fixed(mu_lower.max(0.0), 4, Dir::Down),
        up = crate::decimal::fixed(mu, 4, Dir::Up),
    );
    if regret <= GDP_FIT {
        return format!("{head}: the run is close to the Gaussian trade-off of that μ.");
    }
    let pts: Vec<String> = tradeoff
        .iter()
        .filter(|(f, t)| f.is_finite() && t.is_finite())
        .map(|(f, t)| {
            format!(
                "FPR {f:.0e} → TPR ≤ {}",
                crate::decimal::sci(*t, 3, Dir::Up)
            )
        })
        .collect();
    format!(
        "{head}: a poor fit, so read the trade-off itself: {}.",
        pts.join(", ")
    )
}

/// What a random-allocation bracket wider than the 1 % rule says about itself (the engine
/// answers such runs up to `pld::ALLOCATION_MAX_WIDTH`); empty otherwise.
pub fn wide_note(b: Batching, up: f64, lo: f64) -> &'static str {
    use crate::engine::pld::{within_width_rule, Bracket};
    let wide = !within_width_rule(Bracket {
        upper: up,
        lower: lo,
    });
    if b == Batching::RandomAllocation && lo.is_finite() && wide {
        "This bracket is wider than the 1 % rule: the finest lattice random allocation's budget holds at this δ (both ends are still certified)."
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_messages_in_words() {
        assert_eq!(
            reason_in_words("epsilon: PLD accountant: the work budget of one call (about a second) is spent; the exact-RDP epsilon still applies"),
            "the work budget of one call (about a second) is spent"
        );
        assert_eq!(reason_in_words("profile: q must be > 0"), "q must be > 0");
        assert_eq!(reason_in_words("plain"), "plain");
        // The worker's calls into the command line's query layer name their function.
        assert_eq!(
            reason_in_words("command: even one step gives epsilon = 3.92125 > target 3"),
            "even one step gives ε = 3.92125 > target 3"
        );
        // Whole words only; the page's symbols for the command line's ASCII.
        assert_eq!(
            reason_in_words("command: no noise_multiplier sigma <= 1e8 reaches epsilon <= 0.001 (sigma = 1e8 gives 0.0013)"),
            "no noise_multiplier σ ≤ 1e8 reaches ε ≤ 0.001 (σ = 1e8 gives 0.0013)"
        );
        assert_eq!(
            reason_in_words("epsilon_lower, --delta and delta-like stay; delta >= 1 does not"),
            "epsilon_lower, --delta and delta-like stay; δ ≥ 1 does not"
        );
        assert_eq!(reason_in_words("ε≥0, epsilon<=1 — é"), "ε≥0, ε≤1 — é");
    }

    #[test]
    fn the_headline_for_a_model() {
        let m = Model::compute(Inputs::mnist()).unwrap();
        let h = Headline::of(&m, Some(Dataset::MNIST), None);
        // Four decimals, rounded up: never below the value, by less than one unit.
        let shown: f64 = h.epsilon.parse().unwrap();
        assert!(
            shown >= m.opt.value && shown - m.opt.value < 1e-4,
            "{} for {}",
            h.epsilon,
            m.opt.value
        );
        assert_eq!((h.delta.as_str(), h.preset), ("1e-5", "mnist"));
        assert_eq!(h.delta_warning, "", "δ = 1e-5 < 1/60000");
        assert!(
            h.sentence.contains("exact RDP accountant"),
            "{}",
            h.sentence
        );
        let t = Headline::of(&m, None, Some("tight".into()));
        assert_eq!(t.sentence, "tight");
        // δ ≥ 1/N is named once N is known (and the terms describe q).
        let mut i = Inputs::mnist();
        i.delta = 1e-4;
        let m = Model::compute(i).unwrap();
        let h = Headline::of(&m, Some(Dataset::MNIST), None);
        assert!(
            h.delta_warning.starts_with("δ = 1e-4 ≥ 1/N = 1.66667e-5"),
            "{}",
            h.delta_warning
        );
        assert_eq!(h.preset, "", "no preset has δ = 1e-4");
        let other = Dataset {
            n: 50000.0,
            b: 512.0,
            e: 30.0,
        };
        assert_eq!(
            Headline::of(&m, Some(other), None).delta_warning,
            "",
            "terms for another q"
        );
        // A huge ε in words.
        let mut i = Inputs::mnist();
        (i.q, i.sigma, i.steps) = (0.5, 0.3, 1_000_000_000);
        let m = Model::compute(i).unwrap();
        assert_eq!(
            Headline::of(&m, None, None).epsilon,
            "over 10⁶ — no meaningful guarantee"
        );
    }

    #[test]
    fn epochs_only_when_the_terms_describe_q() {
        let i = Inputs::mnist();
        assert_eq!(
            in_epochs(Some(Dataset::MNIST), &i, 14063),
            " ≈ 60.0021 epochs"
        );
        assert_eq!(in_epochs(None, &i, 14063), "");
        let other = Dataset {
            n: 50000.0,
            b: 512.0,
            e: 30.0,
        };
        assert_eq!(in_epochs(Some(other), &i, 14063), "");
    }

    #[test]
    fn attack_rates_are_checked() {
        assert_eq!(parse_rate("0.05", "TPR"), Ok(0.05));
        assert_eq!(parse_rate(" 1e-3 ", "FPR"), Ok(1e-3));
        for bad in ["0", "1", "1.5", "-0.1", "x", ""] {
            let e = parse_rate(bad, "TPR").unwrap_err();
            assert!(e.starts_with("TPR"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_user_level_sentence_names_the_group_and_the_bound() {
        let s = user_sentence(1.1, 0.0042666, 14070, 2, Adjacency::AddRemove, 4.8801, 1e-5);
        assert!(
            s.contains("(4.8801, 1e-5)") && s.contains("at most 2 examples"),
            "{s}"
        );
        assert!(
            s.contains("one user's examples") && !s.contains("NaN"),
            "{s}"
        );
        assert!(user_words(4, Adjacency::AddRemove).contains("at most 4 examples"));
        let r = user_sentence(
            1.1,
            0.0042666,
            14070,
            1,
            Adjacency::ReplaceOne,
            4.2219,
            1e-5,
        );
        assert!(
            r.contains("replace-one adjacency")
                && r.contains("replacing any one example by another"),
            "{r}"
        );
        assert!(
            user_words(1, Adjacency::ReplaceOne).contains("replace-one adjacency (sensitivity 2C)")
        );
        assert!(adjacency_words(3, Adjacency::ReplaceOne).contains("at most 3; replace-one"));
    }

    #[test]
    fn gdp_sentence_states_mu_its_bracket_and_the_fit() {
        let good = gdp_sentence(0.594737, 0.592779, 4.7e-3, &[(1e-10, 1e-8)]);
        assert_eq!(
            good,
            "μ-GDP: μ = 0.5948 (certified upper bound; bracket [0.5927, 0.5948]), fit regret 4.7e-3: the run is close to the Gaussian trade-off of that μ."
        );
        let poor = gdp_sentence(2.5, 2.4, 0.05, &[(1e-10, 2e-6), (0.01, 0.31)]);
        assert!(
            poor.contains("a poor fit")
                && poor.contains("FPR 1e-10 → TPR ≤ 2.000e-6")
                && poor.contains("FPR 1e-2 → TPR ≤ 3.100e-1"),
            "{poor}"
        );
        // Nothing for a value that is not a number (never "NaN" on the page).
        assert_eq!(gdp_sentence(f64::NAN, 0.0, 0.0, &[]), "");
        assert_eq!(gdp_sentence(0.5, 0.4, f64::NAN, &[]), "");
    }

    #[test]
    fn budget_sentence_is_the_most_steps_solve() {
        let ep = |m: u64| format!(" ≈ {:.4} epochs", m as f64 / 234.375);
        let s = budget_sentence(3.0, Ok(6083), 14063, 2.38, &ep);
        assert_eq!(s, "ε ≤ 3 holds for the first 6083 steps ≈ 25.9541 epochs and not after (PLD, certified; the same solve as “Most steps”).");
        let beyond = budget_sentence(3.0, Ok(30000), 14063, 2.3819, &|_| String::new());
        assert!(beyond.starts_with("ε stays below 3 for the whole run (PLD, certified: 2.3819 at the end); it would hold for 30000 steps"), "{beyond}");
        assert!(budget_sentence(
            3.0,
            Ok(crate::engine::MAX_STEPS),
            10,
            0.1,
            &|_| String::new()
        )
        .contains("every T ≤ 10⁹"));
        assert_eq!(
            budget_sentence(0.5, Err("the work budget is spent"), 10, 1.0, &|_| {
                String::new()
            }),
            "When ε = 0.5 is reached is unavailable: the work budget is spent."
        );
    }

    /// #22: an exported chart names its run: inputs with units, scheme, sizes, adjacency.
    #[test]
    fn exported_charts_name_their_run() {
        let i = Inputs::mnist();
        let plain = Scheme::of(Batching::Poisson, 1, Adjacency::AddRemove).export_caption(&i);
        assert_eq!(
            plain,
            format!(
                "sgm-rdp {} · q = 0.00426667, σ = 1.1 (noise std / clipping norm), T = 14063, δ = 1e-5 · Poisson sampling, add/remove-one adjacency",
                env!("CARGO_PKG_VERSION")
            )
        );
        let users = Scheme::of(Batching::Poisson, 4, Adjacency::ReplaceOne).export_caption(&i);
        assert!(
            users.ends_with("Poisson sampling, replace-one adjacency, users of at most 4 examples"),
            "{users}"
        );
        let truncated = Scheme {
            dataset_size: Some(60000),
            max_batch: Some(300),
            ..Scheme::of(Batching::TruncatedPoisson, 1, Adjacency::AddRemove)
        };
        let t = truncated.export_caption(&i);
        assert!(t.ends_with("truncated Poisson sampling (N = 60000, batches of at most 300), add/remove-one adjacency"), "{t}");
    }

    /// Charts C and D's exports name their own parameters, with units.
    #[test]
    fn charts_c_and_d_name_their_parameters() {
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(
            export_caption_c(1.1),
            format!("sgm-rdp {v} · σ = 1.1 (noise std / clipping norm): Theorem 11's largest order against q")
        );
        assert_eq!(
            export_caption_d(1.0, 0.5),
            format!("sgm-rdp {v} · Gaussian σ = 1 (noise std / sensitivity), Laplace ε = 0.5 (unsampled mechanisms)")
        );
    }

    /// #23: truncated Poisson and fixed-size batches need N (and fixed-size B = q·N whole,
    /// replace-one); their words and sentence name the sizes and what is certified.
    #[test]
    fn sized_schemes_need_their_sizes() {
        let i = Inputs::mnist();
        let mut sc = Scheme::of(Batching::TruncatedPoisson, 1, Adjacency::AddRemove);
        assert!(sc
            .sizes(&i)
            .unwrap_err()
            .contains("needs the dataset size N"));
        sc.dataset_size = Some(60000);
        let z = sc.sizes(&i).unwrap().unwrap();
        assert_eq!(
            (z.dataset_size, z.batch_size, z.max_batch),
            (60000, 256, 320)
        );
        sc.max_batch = Some(300);
        assert_eq!(sc.sizes(&i).unwrap().unwrap().max_batch, 300);
        assert_eq!(sc.answer_key(), Some("scheme"));
        let w = sc.words(&i);
        assert!(
            w.contains("N = 60000") && w.contains("capped at 300"),
            "{w}"
        );
        let st = sc.sentence(&i, 2.4079);
        assert!(
            st.contains("truncated Poisson sampling with rate 0.00426667 over 60000 examples (batches capped at 300) and 14063 steps satisfies (2.4079, 1e-5)")
                && st.contains("add/remove adjacency"),
            "{st}"
        );
        sc.adjacency = Adjacency::ReplaceOne;
        assert!(sc.sizes(&i).unwrap_err().contains("add/remove"));
        let mut f = Scheme::of(Batching::FixedSize, 1, Adjacency::AddRemove);
        f.dataset_size = Some(60000);
        assert!(f.sizes(&i).unwrap_err().contains("replace-one"));
        f.adjacency = Adjacency::ReplaceOne;
        assert_eq!(f.sizes(&i).unwrap().unwrap().batch_size, 256);
        let st = f.sentence(&i, 24.0824);
        assert!(
            st.contains("fixed-size batches of 256 of 60000 examples")
                && st.contains("certified upper bound from RDP; replace-one adjacency")
                && st.contains("replacing any one example by another"),
            "{st}"
        );
        assert!(f.words(&i).contains("no lower bound"));
        // B = q·N must be whole; N from other terms does not describe q.
        f.dataset_size = Some(50000);
        assert!(f.sizes(&i).unwrap_err().contains("whole batch size"));
        // One example per user only.
        f.group = 2;
        assert!(f.sizes(&i).unwrap_err().contains("one example per user"));
        assert_eq!(f.answer_key(), Some("scheme"));
        // The other schemes need no sizes.
        let p = Scheme::of(Batching::Poisson, 1, Adjacency::AddRemove);
        assert_eq!(p.sizes(&i), Ok(None));
    }

    /// #23: the library table for another run names what each library offers, no number
    /// of theirs, and ours with what its ends are.
    #[test]
    fn library_rows_follow_the_scheme() {
        let sh = Scheme::of(Batching::Shuffled, 1, Adjacency::AddRemove);
        let r = library_rows(&sh, Some((54.045818, Some(10.861668))), "");
        assert_eq!(r.len(), 3);
        assert_eq!((r[0][1].as_str(), r[1][1].as_str()), ("—", "—"));
        assert!(r[0][2].contains("not valid for shuffled"), "{}", r[0][2]);
        assert_eq!(r[2][1], "54.0459", "the upper end rounded up");
        assert!(
            r[2][2].contains("[10.8616, 54.0459]"),
            "the ends rounded outwards: {}",
            r[2][2]
        );
        let f = Scheme::of(Batching::FixedSize, 1, Adjacency::ReplaceOne);
        let r = library_rows(&f, Some((24.08, None)), "");
        assert!(
            r[1][2].contains("SampledWithoutReplacementDpEvent")
                && r[2][2].contains("no lower bound")
        );
        let t = Scheme::of(Batching::TruncatedPoisson, 1, Adjacency::AddRemove);
        let r = library_rows(&t, None, "the work budget is spent");
        assert_eq!(r[2][1], "—");
        assert!(r[2][2].ends_with("the work budget is spent"));
        assert!(r[1][2].contains("TruncatedSubsampledGaussianDpEvent"));
        assert!(r.iter().flatten().all(|c| !c.contains("NaN")));
    }

    #[test]
    fn a_scheme_in_words() {
        let w = scheme_words_for(Batching::RandomAllocation, 234, 60.0);
        assert!(
            w.starts_with(
                "random allocation (each example in one of 234 steps per epoch, 60 epochs)"
            ),
            "{w}"
        );
        let w = scheme_words_for(Batching::Shuffled, 234, 60.0);
        assert!(w.contains("Chua et al.") && w.contains("60 epochs"), "{w}");
        let s = scheme_sentence(Batching::RandomAllocation, 1.1, 234, 60.0, 2.340828, 1e-5);
        assert!(s.starts_with("Training with noise multiplier 1.1 and random allocation (each example in one of 234 steps per epoch) for 60 epochs satisfies (2.3409, "), "{s}");
        assert!(s.contains("a factor e^2.3409 ≈ 10.390, except"), "{s}");
        assert!(!s.contains("NaN"));
    }

    #[test]
    fn sentences_above_a_million_carry_the_number() {
        // Above 10⁶ the headline's ε is words ("over 10⁶ — …"); inside "(ε, δ)" and after
        // "e^" the sentences need the number.
        let eps = 2.9e9;
        let sentences = [
            scheme_sentence(Batching::Poisson, 0.3, 10, 1e8, eps, 1e-5),
            user_sentence(0.3, 0.5, 1_000_000_000, 4, Adjacency::AddRemove, eps, 1e-5),
            user_sentence(0.3, 0.5, 1_000_000_000, 1, Adjacency::ReplaceOne, eps, 1e-5),
        ];
        for s in sentences {
            assert!(s.contains("satisfies (2.90000e9, 1e-5)"), "{s}");
            assert!(s.contains("a factor e^2.90000e9 ≈ 10^"), "{s}");
            assert!(s.contains("no meaningful guarantee"), "{s}");
            assert!(!s.contains("over 10⁶") && !s.contains("NaN"), "{s}");
        }
    }
}
