//! The page's tight (PLD) accountant, computed in a Web Worker (www/pld-worker.js, the
//! same wasm) so the page never freezes: the main thread posts the inputs once they rest,
//! keeps the last answer drawn and marked "updating…" meanwhile, and draws the answer
//! whose generation is the newest (stale answers are dropped).

use super::canvas::paint_canvas;
use super::dom::*;
use super::readout;
use crate::engine::Adjacency;
use crate::render::tight::{self, ProfileRow, Training};
use crate::render::{fmt_num, Inputs};
use crate::ui::link::{Acct, Batching};
use crate::ui::page::reason_in_words;
use crate::ui::page::Scheme;
use crate::ui::protocol::{self, Value};
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;

/// Quiet time before a request is posted (the slider is still moving before that).
const REST_MS: i32 = 80;
/// After this long without an answer the old numbers are marked as updating.
const UPDATING_MS: i32 = 150;

/// A run other than Poisson sampling of one example per user under add/remove, as posted:
/// (the run, t steps per epoch, E epochs).
type SchemeRun = (Scheme, u64, f64);

#[derive(Default)]
struct Tight {
    gen: u32,
    asked: Option<Inputs>,
    /// The inputs of the newest request posted (generation `gen`): an answer is used only
    /// while they are still the inputs shown (`asked`), so an answer that arrives after
    /// the inputs changed but before the next request is posted is dropped, not shown as
    /// the new inputs' (hardening round 3, #2).
    posted: Option<Inputs>,
    rdp_eps: f64,
    post_timer: Option<i32>,
    updating_timer: Option<i32>,
    /// The last "charts" answer (for the inputs in `asked`).
    charts: Option<TightCharts>,
    /// The inputs `charts` were computed for.
    charts_for: Option<Inputs>,
    answered: u32,
    /// The newest calibration asked for σ and for T, to the target ε and to the attack-risk
    /// target: an answer to an older one (the target or an input changed since) is dropped.
    calib: [u32; 4],
    /// Which accountant drives the sentence (URL `acct`).
    acct: Acct,
    /// The last tight ε (upper, lower) and the inputs it is for.
    last: Option<(Inputs, f64, f64)>,
    /// How batches are drawn (URL `batch`); shuffled: the bound without amplification.
    batch: Batching,
    /// Examples per user (URL `group`; 0 is read as 1): above 1 the tight ε is user-level.
    group: u32,
    /// Who is a neighbour (URL `adjacency`).
    adjacency: Adjacency,
    /// Truncated Poisson's largest batch (URL `max_batch`; None: the default).
    max_batch: Option<u64>,
    /// The run of the batching posted with the newest request, when it is not Poisson
    /// sampling: (batching, t steps per epoch, E epochs).
    posted_scheme: Option<SchemeRun>,
    /// That batching's last answer for the inputs posted: (inputs, run, upper, lower).
    scheme_last: Option<(Inputs, SchemeRun, f64, f64)>,
    /// The most steps whose certified ε meets the target (the target, the answer or its
    /// reason), for the inputs posted: the ε-over-training sentence.
    most: Option<(f64, Result<u64, String>)>,
}

/// How batches are drawn, as chosen on the page.
pub fn batching() -> Batching {
    TIGHT.with(|t| t.borrow().batch)
}

/// The run the page's controls describe for inputs `i` (batching, examples per user,
/// adjacency, and N from the dataset terms when they describe q).
fn scheme(i: &Inputs) -> Scheme {
    let n = dataset_size(i);
    TIGHT.with(|t| t.borrow().scheme(n))
}

/// The dataset size N of the dataset terms when they describe q (reads the page's boxes:
/// call it before TIGHT is borrowed).
fn dataset_size(i: &Inputs) -> Option<u64> {
    crate::ui::page::matching_dataset(Some(super::field::dataset_terms()), i.q)
        .filter(|d| d.n.fract() == 0.0 && d.n <= 1e12)
        .map(|d| d.n as u64)
}

impl Tight {
    fn scheme(&self, dataset_size: Option<u64>) -> Scheme {
        Scheme {
            dataset_size,
            max_batch: self.max_batch,
            ..Scheme::of(self.batch, self.group.max(1), self.adjacency)
        }
    }
}

/// Truncated Poisson's largest batch as set on the page (None: the default).
pub fn max_batch() -> Option<u64> {
    TIGHT.with(|t| t.borrow().max_batch)
}

/// The largest-batch box changed (or the link set it): asked again.
pub fn set_max_batch(m: Option<u64>) {
    TIGHT.with(|t| {
        let mut t = t.borrow_mut();
        t.max_batch = m;
        t.asked = None;
    });
    set_value("max-batch", &m.map(|m| m.to_string()).unwrap_or_default());
    set_text("max-batch-error", "");
}

/// Examples per user, as set on the page.
pub fn group() -> u32 {
    TIGHT.with(|t| t.borrow().group.max(1))
}

/// The adjacency, as set on the page.
pub fn adjacency() -> Adjacency {
    TIGHT.with(|t| t.borrow().adjacency)
}

/// The neighbours control changed (or the link set it): replace-one is the worker's
/// `--adjacency replace-one` (tight; exact RDP here is add/remove's); asked again.
pub fn set_adjacency(a: Adjacency) {
    let (b, k) = TIGHT.with(|t| {
        let mut t = t.borrow_mut();
        t.adjacency = a;
        t.asked = None;
        (t.batch, t.group.max(1))
    });
    if let Some(sel) = by_id::<web_sys::HtmlSelectElement>("adjacency") {
        sel.set_value(a.name());
    }
    set_text("adjacency-error", "");
    who_words(k, a);
    charts_note(b, k, a);
}

/// The line under the headline: who is protected, and how.
fn who_words(k: u32, a: Adjacency) {
    set_text("adjacency-assumed", &crate::ui::page::adjacency_words(k, a));
}

/// The examples-per-user field changed (or the link set it): the tight ε, its charts, target
/// and μ-GDP become user-level above 1; asked again.
pub fn set_group(k: u32) {
    let (b, a) = TIGHT.with(|t| {
        let mut t = t.borrow_mut();
        t.group = k.max(1);
        t.asked = None;
        (t.batch, t.adjacency)
    });
    set_value("group-size", &k.max(1).to_string());
    set_text("group-size-error", "");
    who_words(k.max(1), a);
    charts_note(b, k.max(1), a);
}

/// The note above the tight charts: which run they are for.
fn charts_note(b: Batching, k: u32, a: Adjacency) {
    let variant = k > 1 || a == Adjacency::ReplaceOne;
    if let Some(e) = by_id::<web_sys::HtmlElement>("charts-batching") {
        e.set_hidden(b == Batching::Poisson && !variant);
    }
    set_text(
        "charts-batching",
        match b {
            Batching::RandomAllocation => "The charts below follow random allocation (no exact-RDP curve: Poisson sampling's does not bound it); the library table says which libraries account for it.",
            Batching::Shuffled => "The charts below follow the shuffled band: its upper end (no amplification) and lower end (Chua et al.'s pair); the library table says which libraries account for shuffling.",
            Batching::TruncatedPoisson => "The charts below follow truncated Poisson sampling (no exact-RDP curve: Poisson sampling's does not bound it); the library table says which libraries account for it.",
            Batching::FixedSize => "ε over training below follows fixed-size batches (RDP, replace-one); they have no privacy profile or attack-risk chart (no privacy-loss distribution is certified for them); the library table says which libraries account for them.",
            Batching::Poisson if variant => "The charts below are for the examples per user and neighbours chosen (no exact-RDP curve: it is one example’s under add/remove); the library table says what each library offers for them.",
            _ => "The charts and the library table below are for Poisson sampling with rate q, not for the batching chosen above (its ε is the headline).",
        },
    );
}

/// The batching control changed (or the link set it): show the box of the scheme chosen
/// (shuffled: its certified band; random allocation: its certified bracket) and ask again.
pub fn set_batching(b: Batching) {
    let (k, a) = TIGHT.with(|t| {
        let mut t = t.borrow_mut();
        t.batch = b;
        t.asked = None;
        (t.group.max(1), t.adjacency)
    });
    charts_note(b, k, a);
    for (id, shown) in [
        ("shuffled-box", Batching::Shuffled),
        ("allocation-box", Batching::RandomAllocation),
        ("max-batch-row", Batching::TruncatedPoisson),
    ] {
        if let Some(e) = by_id::<web_sys::HtmlElement>(id) {
            e.set_hidden(b != shown);
        }
    }
    set_text(
        "batching-assumed",
        if b == Batching::Poisson {
            "Poisson sampling with rate q"
        } else {
            "Poisson sampling with rate q — not how these batches are drawn (see below)"
        },
    );
    set_text("batching-error", "");
    if let Some(sel) = by_id::<web_sys::HtmlSelectElement>("batching") {
        sel.set_value(b.name());
    }
}

/// Epochs for the bound without amplification: the dataset terms' E when they describe
/// this run (T = ⌈E·N/B⌉), else ⌈T·q⌉ (each example is in at most that many batches).
fn epochs_for(i: &Inputs) -> f64 {
    match crate::ui::page::matching_dataset(Some(super::field::dataset_terms()), i.q) {
        Some(d) if d.e > 0.0 && (d.e * (d.n / d.b)).ceil() == i.steps as f64 => d.e.ceil(),
        _ => crate::ui::page::epochs_of(i).1,
    }
}

/// Which accountant drives the sentence (and "What do I need?").
pub fn acct() -> Acct {
    TIGHT.with(|t| t.borrow().acct)
}

/// The sentence for the current inputs from the tight ε, when it is known for them.
pub fn pld_sentence(i: &Inputs) -> Option<String> {
    TIGHT.with(|t| {
        t.borrow().last.filter(|(a, _, _)| a == i).map(|(a, e, _)| {
            crate::render::sentence_for(&a, e, "tight (privacy-loss distribution)")
        })
    })
}

/// The tight ε bracket (upper, lower) for `i`, when the worker has answered for it.
pub fn tight_for(i: &Inputs) -> Option<(f64, f64)> {
    TIGHT.with(|t| {
        t.borrow()
            .last
            .filter(|(a, _, _)| a == i)
            .map(|(_, u, l)| (u, l))
    })
}

thread_local! {
    static TIGHT: RefCell<Tight> = RefCell::new(Tight::default());
}

/// Start the worker (once). Without one (very old browsers) the tight numbers stay "—".
/// `worker`: whether the page's worker started (the page routes its answers here).
pub fn start(worker: bool) {
    // The link's `acct` and `batch` were set when the page read its link.
    if !worker {
        set_text("epsilon-pld-note", "the tight accountant needs Web Workers");
        return;
    }
    // One page-lifetime listener for every snippet's Copy button (they are rebuilt on
    // each answer; delegation keeps no closure per button).
    if let Some(box_) = doc().and_then(|d| d.get_element_by_id("snippets")) {
        let on_click = Closure::<dyn FnMut(web_sys::Event)>::new(|ev: web_sys::Event| {
            let pre = ev
                .target()
                .map(|t| t.unchecked_into::<web_sys::Element>())
                .filter(|b| b.tag_name() == "BUTTON")
                .and_then(|b| b.closest(".snippet").ok().flatten())
                .and_then(|s| s.query_selector("pre").ok().flatten());
            if let Some(pre) = pre {
                copy_text(&pre);
            }
        });
        let _ = box_.add_event_listener_with_callback("click", on_click.as_ref().unchecked_ref());
        on_click.forget();
    }
}

/// The inputs changed (or the page drew a frame): ask the worker once they rest.
pub fn request(inputs: Inputs, rdp_eps: f64) {
    let Some(win) = window() else { return };
    TIGHT.with(|t| {
        let mut t = t.borrow_mut();
        t.rdp_eps = rdp_eps;
        if t.asked == Some(inputs) {
            show_gap(&t);
            return;
        }
        t.asked = Some(inputs);
        show_gap(&t);
        // The charts' values read out are the old inputs': gone at once.
        for n in 0..CHART_IDS.len() {
            readout::clear(readout::TIGHT + n);
        }
        if let Some(id) = t.post_timer.take() {
            win.clear_timeout_with_handle(id);
        }
        t.post_timer = after(REST_MS, move || post(inputs));
        if t.updating_timer.is_none() {
            t.updating_timer = after(UPDATING_MS, mark_updating);
        }
    });
}

/// The three charts' figures, marked stale from a request until its charts arrive.
const CHART_IDS: [&str; 3] = ["chart-training", "chart-profile", "chart-risk"];

fn mark_charts(stale: bool) {
    for id in CHART_IDS {
        if let Some(fig) = doc()
            .and_then(|d| d.get_element_by_id(id))
            .and_then(|c| c.closest("figure").ok().flatten())
        {
            let _ = if stale {
                fig.class_list().add_1("stale")
            } else {
                fig.class_list().remove_1("stale")
            };
        }
    }
}

/// The target ε changed: ask again for the inputs shown (the worker's caches answer the
/// headline and charts at once; the target's solve is new).
pub fn repost() {
    let asked = TIGHT.with(|t| t.borrow().asked);
    if let Some(i) = asked {
        post(i);
    }
}

fn post(i: Inputs) {
    mark_charts(true);
    // μ and the attack bound belong to the inputs they were computed for: gone until the
    // new ones arrive.
    set_text("gdp-summary", "");
    set_text("sentence-risk", "");
    // The epochs read the page's dataset boxes: before TIGHT is borrowed.
    let sc = scheme(&i);
    let loader = loader_terms(&i);
    let batch = sc.sampling;
    let epochs = (batch != Batching::Poisson).then(|| epochs_for(&i));
    let target = target_eps();
    let scheme = (!sc.is_plain()).then(|| {
        let (t, e) = crate::ui::page::epochs_of(&i);
        (sc, t, epochs.unwrap_or(e))
    });
    if let Some((_, t, e)) = scheme.filter(|_| batch != Batching::Poisson) {
        set_text("batching-assumed", &sc.words_for(&i, t, e));
    }
    TIGHT.with(|t| {
        let mut t = t.borrow_mut();
        t.post_timer = None;
        t.gen += 1;
        t.posted = Some(i);
        t.posted_scheme = scheme;
        t.most = None;
        let ask = protocol::Tight {
            charts: true,
            // μ-GDP with its fit, after the charts.
            gdp: true,
            // The target ε: when it is reached (the same solve as "Most steps").
            target,
            // The library rows (Poisson sampling of one example): Opacus' loader terms.
            library: sc.is_plain().then_some(loader),
        };
        super::worker::post_fields(&protocol::tight(
            &i,
            Some(t.gen),
            &sc,
            epochs.unwrap_or(f64::NAN),
            ask,
        ));
    });
}

fn mark_updating() {
    TIGHT.with(|t| {
        let mut t = t.borrow_mut();
        t.updating_timer = None;
        if t.answered != t.gen || t.post_timer.is_some() {
            set_class("tight", "updating", true);
        }
    });
}

fn set_class(id: &str, class: &str, on: bool) {
    if let Some(e) = doc().and_then(|d| d.get_element_by_id(id)) {
        let _ = if on {
            e.class_list().add_1(class)
        } else {
            e.class_list().remove_1(class)
        };
    }
}

/// The gap between exact RDP and the tight ε, when the tight ε is for the inputs shown.
fn show_gap(t: &Tight) {
    if t.batch != Batching::Poisson {
        set_text(
            "epsilon-gap",
            "(Poisson sampling's: not a bound for the batching chosen)",
        );
        return;
    }
    if t.group > 1 || t.adjacency != Adjacency::AddRemove {
        set_text(
            "epsilon-gap",
            "(one example's under add/remove: not a bound for the examples per user or neighbours chosen)",
        );
        return;
    }
    let (rdp, pld) = (
        t.rdp_eps,
        t.last
            .filter(|(i, _, _)| Some(*i) == t.asked)
            .map(|(_, u, _)| u),
    );
    let text = match pld {
        Some(p) if p > 0.0 && rdp.is_finite() => {
            format!("(+{:.1} % above the tight ε)", 100.0 * (rdp / p - 1.0))
        }
        _ => String::new(),
    };
    set_text("epsilon-gap", &text);
}

/// A message from the worker.
/// A worker answer for the tight accountant (every kind but the small-σ model's);
/// `inverse_current`: whether the inverse mode's question is for the inputs shown. Returns
/// the inverse mode's answer to keep for Apply (`"sigma"` or `"steps"`, the value), if any.
pub fn answer(data: JsValue, inverse_current: bool) -> Option<(&'static str, f64)> {
    let gen = num(&data, "gen") as u32;
    let kind = protocol::Kind::parse(&get(&data, "kind").as_string().unwrap_or_default())?;
    let (current, fresh) = TIGHT.with(|t| {
        let t = t.borrow();
        (t.gen, t.posted.is_some() && t.posted == t.asked)
    });
    if (gen != current || !fresh) && !kind.is_calibration() {
        return None; // for inputs no longer shown: a newer request is on its way
    }
    use protocol::Kind;
    match kind {
        Kind::Headline => {
            let (up, lo) = (num(&data, "epsilon"), num(&data, "epsilonLower"));
            if let Some(e) = doc().and_then(|d| d.get_element_by_id("epsilon-pld")) {
                e.set_text_content(Some(&crate::render::fmt_eps(up)));
                let _ = e.set_attribute("data-value", &format!("{up}"));
                let _ = e.set_attribute("title", &format!("certified bracket [{lo:.6}, {up:.6}]"));
            }
            set_text(
                "epsilon-pld-bracket",
                &format!("certified bracket [{}, {}]", fmt_eps6(lo), fmt_eps6(up)),
            );
            set_text("epsilon-pld-note", "");
            show_shuffled(&data);
            show_allocation(&data);
            let asked = TIGHT.with(|t| {
                let mut t = t.borrow_mut();
                t.answered = gen;
                if let Some(i) = t.posted {
                    t.last = Some((i, up, lo));
                }
                show_gap(&t);
                t.posted
            });
            if let Some(i) = asked {
                fill_library(&i, Some((up, lo)));
                if acct() == Acct::Pld {
                    if let Some(s) = pld_sentence(&i) {
                        set_text("sentence", &s);
                    }
                }
            }
            show_scheme(&data);
            set_class("tight", "updating", false);
        }
        Kind::Charts => {
            let c = parse_answer(&data);
            mark_charts(false);
            TIGHT.with(|t| {
                let mut t = t.borrow_mut();
                t.charts = Some(c);
                t.charts_for = t.posted;
            });
            // A chart that failed stands alone: cleared, with its reason (in redraw).
            redraw();
        }
        Kind::Library => show_library(&data),
        Kind::Gdp => {
            let text = match get(&data, "error").as_string() {
                Some(m) => format!("μ-GDP unavailable: {}", reason_in_words(&m)),
                None => gdp_text(&data),
            };
            set_text("gdp-summary", &text);
        }
        Kind::Target => {
            let e = num(&data, "target");
            let most = match get(&data, "error").as_string() {
                Some(m) => Err(reason_in_words(&m)),
                None => Ok(num(&data, "steps") as u64),
            };
            TIGHT.with(|t| t.borrow_mut().most = Some((e, most)));
            redraw();
        }
        Kind::Calibrated if inverse_current => return calibrated(&data),
        Kind::CalibrateError if is_current_calibration(&data) && inverse_current => {
            let which = get(&data, "which").as_string().unwrap_or_default();
            set_text(&format!("{which}-answer"), "");
            set_text(
                if which.starts_with("risk-") {
                    "risk-error"
                } else {
                    "target-error"
                },
                &reason_in_words(&get(&data, "message").as_string().unwrap_or_default()),
            );
        }
        Kind::Error => {
            let m = get(&data, "message").as_string().unwrap_or_default();
            TIGHT.with(|t| t.borrow_mut().answered = gen);
            unavailable(&m);
            // The shuffled band and the allocation's bracket stand on their own
            // (hardening round 3, #12), and lead the headline when chosen.
            show_shuffled(&data);
            show_allocation(&data);
            show_scheme(&data);
        }
        Kind::ChartsError => {
            let m = get(&data, "message").as_string().unwrap_or_default();
            clear_charts(&reason_in_words(&m));
            set_class("tight", "updating", false);
        }
        _ => {}
    }
    None
}

/// The certified band for shuffled batches from an answer, when it carries one: upper end
/// no amplification, lower end Chua et al.'s pair (the command line's `--sampling shuffle`);
/// said plainly when the Poisson ε of the same answer lies below the lower end.
fn show_shuffled(data: &JsValue) {
    let sh = get(data, "shuffled");
    if sh.is_object() {
        let (su, sl) = (num(&sh, "epsilon"), num(&sh, "epsilonLower"));
        let err = get(&sh, "error").as_string();
        let (text, low) = match &err {
            Some(m) => (format!("— ({m})"), "—".into()),
            None => (crate::render::fmt_eps(su), crate::render::fmt_eps(sl)),
        };
        if let Some(e) = doc().and_then(|d| d.get_element_by_id("epsilon-shuffled")) {
            e.set_text_content(Some(&text));
            let _ = e.set_attribute("data-value", &format!("{su}"));
            let _ = e.set_attribute(
                "title",
                &format!("certified band [{}, {}]", fmt_eps6(sl), fmt_eps6(su)),
            );
        }
        set_text("epsilon-shuffled-lower", &low);
        set_text("shuffled-epochs", &fmt_num(num(&sh, "epochs")));
        // The Poisson ε of this answer (absent when it failed).
        let p = num(data, "epsilon");
        set_text(
            "shuffled-vs-poisson",
            &if err.is_none() && p < sl {
                format!("The Poisson-sampled ε for the same q and steps, {}, is below this lower end, so it cannot be claimed for shuffled training.", crate::render::fmt_eps(p))
            } else {
                String::new()
            },
        );
    }
}

/// With a batching other than Poisson sampling, the headline is that scheme's certified ε
/// (shuffled: the band's upper end; random allocation: its bracket's), with what its ends
/// mean, and the sentence is said for it; a refusal shows "—" with its reason.
fn show_scheme(data: &JsValue) {
    let (posted, scheme) = TIGHT.with(|t| {
        let t = t.borrow();
        (t.posted, t.posted_scheme)
    });
    let (Some(i), Some((sc, t, e))) = (posted, scheme) else {
        return;
    };
    // Above one example per user, or replace-one with Poisson sampling, the answer is the
    // worker's `user` (with another batching and K > 1 it says why there is none).
    let a = sc.answer_key().map(|k| get(data, k)).unwrap_or_default();
    // Fixed-size batches: an RDP upper bound only (epsilonLower null → NaN here).
    let (up, lo) = (num(&a, "epsilon"), num(&a, "epsilonLower"));
    let words = sc.words_for(&i, t, e);
    let name = if sc.sampling == Batching::Poisson {
        sc.name()
    } else {
        crate::ui::page::scheme_name(sc.sampling).to_string()
    };
    let b = sc.sampling;
    let el = doc().and_then(|d| d.get_element_by_id("epsilon-pld"));
    // Why there is no answer (used when there is none).
    let why = get(&a, "error")
        .as_string()
        .map(|m| reason_in_words(&m))
        .unwrap_or_else(|| "no answer for this batching".into());
    let upper_only = b == Batching::FixedSize;
    let ok = a.is_object() && up.is_finite() && (lo.is_finite() || upper_only);
    if ok {
        let ends = if lo.is_finite() {
            format!("[{}, {}]", fmt_eps6(lo), fmt_eps6(up))
        } else {
            format!("≤ {}", fmt_eps6(up))
        };
        if let Some(el) = &el {
            el.set_text_content(Some(&crate::render::fmt_eps(up)));
            let _ = el.set_attribute("data-value", &format!("{up}"));
            let _ = el.set_attribute("title", &format!("{ends}: {words}"));
        }
        let what = match b {
            Batching::Shuffled => "certified band",
            Batching::FixedSize => "certified upper bound from RDP, no lower bound:",
            _ => "certified bracket",
        };
        set_text("epsilon-pld-bracket", &format!("{what} {ends} for {name}"));
        set_text("epsilon-pld-note", "");
    } else {
        if let Some(el) = &el {
            el.set_text_content(Some("—"));
            let _ = el.remove_attribute("data-value");
            let _ = el.set_attribute("title", &format!("unavailable: {why}"));
        }
        set_text(
            "epsilon-pld-bracket",
            &format!("no certified bound for {name}"),
        );
        set_text(
            "epsilon-pld-note",
            &format!("ε unavailable for {name} with these inputs: {why}."),
        );
    }
    // "What your library reports" for this run: which libraries account for it, and ours.
    let rows =
        crate::ui::page::library_rows(&sc, ok.then_some((up, lo.is_finite().then_some(lo))), &why);
    fill_library_rows(&rows);
    TIGHT.with(|x| {
        let mut x = x.borrow_mut();
        x.scheme_last = ok.then_some((i, (sc, t, e), up, lo));
        show_gap(&x);
    });
    if let Some(s) = scheme_sentence(&i) {
        set_text("sentence", &s);
    }
}

/// The CSV's first line when the headline is for another run than Poisson sampling of one
/// example under add/remove (a scheme, examples per user, replace-one): that run's certified
/// ends and what they mean, or that it is unavailable; None for the plain run.
pub fn scheme_line(i: &Inputs) -> Option<String> {
    let n = dataset_size(i);
    TIGHT.with(|t| {
        let t = t.borrow();
        let sc = t.scheme(n);
        if sc.is_plain() {
            return None;
        }
        let tail = "the epsilons below are exact RDP of one example, Poisson sampling, add/remove";
        Some(match t.scheme_last {
            Some((a, (run, st, e), up, lo)) if a == *i && run == sc => format!(
                "# headline_epsilon = {up} (certified upper bound; [{}, {up}]: {}); {tail}",
                if lo.is_finite() {
                    lo.to_string()
                } else {
                    "no lower bound".into()
                },
                sc.words_for(i, st, e)
            ),
            _ => format!(
                "# headline_epsilon = unavailable for these inputs ({}); {tail}",
                sc.words(i)
            ),
        })
    })
}

/// The sentence for the batching chosen when it is not Poisson sampling: said for its
/// certified ε once the worker has answered for `i`, else that it is being computed.
pub fn scheme_sentence(i: &Inputs) -> Option<String> {
    let n = dataset_size(i);
    TIGHT.with(|t| {
        let t = t.borrow();
        let sc = t.scheme(n);
        if sc.is_plain() {
            return None;
        }
        Some(match t.scheme_last {
            Some((a, (run, st, e), up, _)) if a == *i && run == sc => sc.sentence_for(i, st, e, up),
            _ => format!(
                "The ε for {} is computed by the tight accountant (see above).",
                if sc.sampling == Batching::Poisson {
                    crate::ui::page::adjacency_words(sc.group, sc.adjacency)
                } else {
                    crate::ui::page::scheme_name(sc.sampling).to_string()
                }
            ),
        })
    })
}

/// The certified bracket for random allocation from an answer, when it carries one (the
/// command line's `--sampling random-allocation`, one of t = ⌊1/q⌋ steps per epoch, E
/// epochs); a refusal is shown with its reason.
fn show_allocation(data: &JsValue) {
    let al = get(data, "allocation");
    if !al.is_object() {
        return;
    }
    let (up, lo) = (num(&al, "epsilon"), num(&al, "epsilonLower"));
    let (text, low) = match get(&al, "error").as_string() {
        Some(m) => (format!("— ({})", reason_in_words(&m)), "—".into()),
        None => (crate::render::fmt_eps(up), crate::render::fmt_eps(lo)),
    };
    if let Some(e) = doc().and_then(|d| d.get_element_by_id("epsilon-allocation")) {
        e.set_text_content(Some(&text));
        let _ = e.set_attribute("data-value", &format!("{up}"));
    }
    set_text("epsilon-allocation-lower", &low);
    set_text("allocation-epochs", &fmt_num(num(&al, "epochs")));
    set_text("allocation-t", &fmt_num(num(&al, "stepsPerEpoch")));
}

/// The tight accountant cannot answer for the inputs shown: nothing of an earlier run
/// stays — the headline reads "—" with the reason, the gap and the library's tight rows
/// go, the sentence is exact RDP's, and the three charts are cleared with the reason
/// (hardening round 3, #1).
fn unavailable(m: &str) {
    let why = &reason_in_words(m);
    if let Some(e) = doc().and_then(|d| d.get_element_by_id("epsilon-pld")) {
        e.set_text_content(Some("—"));
        let _ = e.remove_attribute("data-value");
        let _ = e.set_attribute("title", &format!("unavailable: {why}"));
    }
    set_text(
        "epsilon-pld-bracket",
        "no certified bracket for these inputs",
    );
    set_text(
        "epsilon-pld-note",
        &format!("tight ε unavailable for these inputs: {why}. The exact-RDP ε applies."),
    );
    let (asked, rdp) = TIGHT.with(|t| {
        let mut t = t.borrow_mut();
        t.last = None;
        t.charts = None;
        show_gap(&t);
        (t.asked, t.rdp_eps)
    });
    // The library rows come with a tight answer (computing them here would put the
    // exact-RDP grids of a small-σ run on the main thread): emptied, with the reason.
    fill_table(
        "#library-table tbody",
        std::iter::once(["—", "unavailable", why]),
    );
    if let Some(i) = asked {
        if acct() == Acct::Pld && rdp.is_finite() {
            set_text(
                "sentence",
                &crate::render::sentence_for(&i, rdp, "exact RDP"),
            );
        }
    }
    clear_charts(why);
    set_class("tight", "updating", false);
}

/// Clear the three tight charts and say why they are empty.
fn clear_charts(why: &str) {
    TIGHT.with(|t| t.borrow_mut().charts = None);
    set_text("gdp-summary", "");
    set_text("sentence-risk", "");
    for i in 0..CHART_IDS.len() {
        clear_chart(i, why);
    }
    mark_charts(false);
}

/// The texts under each tight chart.
const CHART_TEXTS: [&[&str]; 3] = [
    &["training-statement"],
    &["profile-summary", "profile-status"],
    &["risk-sentence", "risk-readouts"],
];

/// Clear tight chart `i` (training, profile, risk) and say why it is empty.
fn clear_chart(i: usize, why: &str) {
    readout::clear(readout::TIGHT + i);
    if let Some(c) = by_id::<HtmlCanvasElement>(CHART_IDS[i]) {
        // Setting the width clears the canvas.
        c.set_width(c.width());
    }
    let text = format!("unavailable for these inputs: {why}.");
    for id in CHART_TEXTS[i] {
        set_text(id, &text);
    }
}

/// The worker's "charts" answer: ε over training, the privacy profile, attack risk.
pub(crate) struct TightCharts {
    pub training: Training,
    pub profile: Vec<ProfileRow>,
    /// The TPR bound's curve, (FPR, TPR).
    pub risk: Vec<(f64, f64)>,
    /// Readouts at FPR = 1e-3, 1e-2, 0.1, (FPR, TPR).
    pub risk_fpr: Vec<(f64, f64)>,
    /// Why a chart (training, profile, risk) is absent from the answer: each stands alone.
    pub errors: [Option<String>; 3],
}

/// Read a "charts" answer (absent or malformed parts read as empty or NaN, which the
/// charts skip).
/// The elements of a JS array (none when `v` is not one).
/// The worker's μ-GDP answer in words (page and widget).
pub(crate) fn gdp_text(data: &JsValue) -> String {
    let tradeoff: Vec<(f64, f64)> = items(get(data, "tradeoff"))
        .iter()
        .map(|p| (num(p, "fpr"), num(p, "tpr_max")))
        .collect();
    crate::ui::page::gdp_sentence(
        num(data, "mu"),
        num(data, "muLower"),
        num(data, "regret"),
        &tradeoff,
    )
}

fn items(v: JsValue) -> Vec<JsValue> {
    if js_sys::Array::is_array(&v) {
        js_sys::Array::from(&v).iter().collect()
    } else {
        Vec::new()
    }
}

pub(crate) fn parse_answer(data: &JsValue) -> TightCharts {
    let tr = get(data, "training");
    let training = Training {
        steps: nums(&tr, "steps"),
        pld_upper: nums(&tr, "pldUpper"),
        pld_lower: nums(&tr, "pldLower"),
        rdp: nums(&tr, "rdp"),
    };
    let profile = items(get(data, "profile"))
        .iter()
        .map(|p| {
            let d = get(p, "delta");
            ProfileRow {
                epsilon: num(p, "epsilon"),
                upper: num(&d, "upper"),
                lower: num(&d, "lower"),
                rdp: num(p, "rdp"),
            }
        })
        .collect();
    let risk = get(data, "risk");
    let curve = items(get(&risk, "curve"))
        .iter()
        .map(|p| (num(p, "fpr"), num(p, "tpr")))
        .collect();
    let risk_fpr = nums(&risk, "fpr")
        .into_iter()
        .zip(nums(&risk, "tpr"))
        .collect();
    let errors = get(data, "errors");
    TightCharts {
        training,
        profile,
        risk: curve,
        risk_fpr,
        errors: ["training", "profile", "risk"].map(|w| get(&errors, w).as_string()),
    }
}

/// The attack-risk sentence at a false-positive rate of 1 % (from the readouts).
pub(crate) fn one_percent_sentence(risk_fpr: &[(f64, f64)]) -> String {
    risk_fpr
        .iter()
        .find(|(f, _)| (*f - 0.01).abs() < 1e-12)
        .map(|&(f, tp)| tight::risk_sentence(f, tp))
        .unwrap_or_default()
}

pub(crate) fn fmt_eps6(e: f64) -> String {
    if e > 1e6 {
        fmt_num(e)
    } else {
        format!("{e:.6}")
    }
}

/// Steps per epoch (N/B) when the dataset terms describe rate q.
fn steps_per_epoch(q: f64) -> Option<f64> {
    crate::ui::page::matching_dataset(Some(super::field::dataset_terms()), q).map(|d| d.n / d.b)
}

/// The target ε of "What do I need?", when it is a valid one.
fn target_eps() -> Option<f64> {
    super::field::parse_target().ok()
}

/// Draw the tight chart `which` (training, profile, risk) from the last answer — the
/// page's canvases and the exports share it. None when there is no answer yet.
fn draw_tight<DB: plotters::prelude::DrawingBackend>(
    t: &Tight,
    which: &str,
    target: Option<f64>,
    root: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    th: &crate::render::Theme,
) -> Option<tight::Drawn<DB>> {
    let c = t.charts.as_ref()?;
    let q = t.asked.map(|i| i.q).unwrap_or(f64::NAN);
    let delta = t.asked.map(|i| i.delta).unwrap_or(1e-5);
    let l = labels(t);
    Some(match which {
        "training" => tight::draw_training(root, &c.training, target, steps_per_epoch(q), &l, th),
        "profile" => tight::draw_profile(root, &c.profile, delta, &l, th),
        _ => tight::draw_risk(root, &c.risk, &l, th),
    })
}

/// The three tight charts' series as CSV for `i` under `header` (the run's `# key = value`
/// lines), with what they are for; Err(why) while they are not (yet) the charts of `i`.
pub fn charts_csv(i: &Inputs, header: &str) -> Result<String, String> {
    let n = dataset_size(i);
    let terms = crate::ui::page::matching_dataset(Some(super::field::dataset_terms()), i.q);
    TIGHT.with(|t| {
        let t = t.borrow();
        let c = t
            .charts
            .as_ref()
            .filter(|_| t.charts_for == Some(*i) && t.asked == Some(*i))
            .ok_or("the tight charts are being computed for these inputs")?;
        let sc = t.scheme(n);
        let mut s = header.to_string();
        s += &format!("# charts_for = {}\n", sc.words(i));
        if let Some(d) = terms {
            s += &format!(
                "# dataset_size = {}\n# batch_size = {}\n# epochs = {}\n",
                d.n, d.b, d.e
            );
        }
        Ok(s + &tight::charts_csv(&c.training, &c.profile, &c.risk))
    })
}

/// What tight chart `n` (training, profile, risk) reads out, named as in its legend.
fn readouts(t: &Tight, c: &TightCharts, n: usize) -> Vec<crate::render::ReadoutPoint> {
    let l = labels(t);
    match n {
        0 => tight::training_readouts(
            &c.training,
            steps_per_epoch(t.asked.map(|i| i.q).unwrap_or(f64::NAN)),
            &l,
        ),
        1 => tight::profile_readouts(&c.profile, &l),
        _ => tight::risk_readouts(&c.risk, &l),
    }
}

/// The legends of the run the charts were asked for (a band names its two ends).
fn labels(t: &Tight) -> tight::Labels {
    t.posted_scheme
        .map(|(sc, _, _)| sc.chart_labels())
        .unwrap_or_default()
}

/// Draw the three charts from the last answer (also after a theme or size change).
pub fn redraw() {
    let dark = prefers_dark();
    let target = target_eps();
    TIGHT.with(|t| {
        let t = t.borrow();
        let Some(c) = &t.charts else { return };
        for (n, (id, which)) in [
            ("chart-training", "training"),
            ("chart-profile", "profile"),
            ("chart-risk", "risk"),
        ]
        .into_iter()
        .enumerate()
        {
            let mut mapping = None;
            if let Some(canvas) = by_id::<HtmlCanvasElement>(id) {
                paint_canvas(&canvas, dark, id, |root, th| {
                    draw_tight(&t, which, target, root, th)
                        .map(|r| r.map(|m| mapping = Some(m)))
                        .unwrap_or(Ok(()))
                });
            }
            let k = readout::TIGHT + n;
            match (mapping, &c.errors[n]) {
                (Some(map), None) => readout::set_points(k, map, readouts(&t, c, n)),
                _ => readout::clear(k),
            }
        }
        let end = c.training.pld_upper.last().copied().unwrap_or(f64::NAN);
        set_text(
            "training-statement",
            &match (target, &t.most, t.asked) {
                (Some(e), Some((m_e, most)), Some(i)) if *m_e == e => {
                    crate::ui::page::budget_sentence(
                        e,
                        most.as_ref().copied().map_err(|w| w.as_str()),
                        i.steps,
                        end,
                        &|m| crate::ui::page::in_epochs(Some(super::field::dataset_terms()), &i, m),
                    )
                }
                (Some(e), _, _) => format!("When ε = {} is reached: computing…", fmt_num(e)),
                _ => "Set a target ε (in “What do I need?”) to see when it is reached.".into(),
            },
        );
        let delta = t.asked.map(|i| i.delta).unwrap_or(1e-5);
        set_text(
            "profile-summary",
            &tight::summary_profile(&c.profile, delta),
        );
        set_text("profile-status", "");
        set_text("risk-sentence", &one_percent_sentence(&c.risk_fpr));
        // The attack bound under the plain-language sentence too (same run, same numbers).
        set_text("sentence-risk", &one_percent_sentence(&c.risk_fpr));
        let readouts: Vec<String> = c
            .risk_fpr
            .iter()
            .map(|(f, tp)| format!("FPR {} → TPR ≤ {}", fmt_num(*f), fmt_num(*tp)))
            .collect();
        set_text("risk-readouts", &readouts.join(" · "));
        // A chart the answer has no data for stays cleared with its reason (every redraw:
        // a later target or theme change must not paint it empty as "no points yet").
        for (i, why) in c.errors.iter().enumerate() {
            if let Some(m) = why {
                clear_chart(i, &reason_in_words(m));
                if i == 2 {
                    set_text("sentence-risk", "");
                }
            }
        }
    });
}

/// The run the tight charts were drawn for, as an export's footer names it; None before
/// any answer.
pub fn export_caption() -> Option<String> {
    let i = TIGHT.with(|t| t.borrow().asked)?;
    // (The dataset boxes are read before TIGHT is borrowed again.)
    let n = dataset_size(&i);
    TIGHT.with(|t| {
        let t = t.borrow();
        t.charts.as_ref()?;
        Some(t.scheme(n).export_caption(&i))
    })
}

/// Draw the tight chart `which` (training, profile, risk) from the last answer on
/// `root` (exports); false when there is no answer yet or drawing failed.
pub fn draw_named<DB: plotters::prelude::DrawingBackend>(
    which: &str,
    root: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    th: &crate::render::Theme,
) -> bool {
    let target = target_eps();
    TIGHT.with(|t| draw_tight(&t.borrow(), which, target, root, th).is_some_and(|r| r.is_ok()))
}

/// The dataset terms [N, B, E] the worker passes to `libraries` for Opacus' loader: when
/// they describe the run (q and T) and Opacus can take them (whole numbers).
pub(crate) fn loader_terms(i: &Inputs) -> Option<[f64; 3]> {
    crate::ui::page::matching_dataset(Some(super::field::dataset_terms()), i.q)
        .filter(|d| (d.e * (d.n / d.b)).ceil() == i.steps as f64)
        .filter(|d| crate::render::library::opacus_run(d.n, d.b, d.e).is_some())
        .map(|d| [d.n, d.b, d.e])
}

/// Opacus' own (q, steps) for the run: from its loader when [`loader_terms`] gives them.
fn opacus_run(i: &Inputs) -> Option<(f64, u64)> {
    loader_terms(i).and_then(|[n, b, e]| crate::render::library::opacus_run(n, b, e))
}

/// Fill the library table with rows of three texts.
fn fill_library_rows(rows: &[[String; 3]]) {
    fill_table(
        "#library-table tbody",
        rows.iter()
            .map(|r| [r[0].as_str(), r[1].as_str(), r[2].as_str()]),
    );
}

/// The worker's "library" answer: the rows as the command line's `libraries` computes
/// them (each library's own output for the run), for the inputs posted.
fn show_library(data: &JsValue) {
    let rows: Vec<[String; 3]> = items(get(data, "rows"))
        .iter()
        .map(|r| {
            let e = num(r, "epsilon");
            [
                get(r, "tool").as_string().unwrap_or_default(),
                if e.is_finite() {
                    format!("{e:.4}")
                } else {
                    "—".into()
                },
                get(r, "note").as_string().unwrap_or_default(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        fill_library_rows(&rows);
    }
}

/// "What your library reports" (table + code), built with createElement/textContent.
fn fill_library(i: &Inputs, pld: Option<(f64, f64)>) {
    use crate::render::library;
    let Some(d) = doc() else { return };
    // Our tight row now; Opacus' and dp_accounting's PLD rows when the worker has computed
    // them (its "library" answer replaces the rows).
    let views = library::Views {
        tight: pld.map(Ok),
        ..library::Views::default()
    };
    if let Ok(rows) = library::rows(i, opacus_run(i), &views) {
        let eps: Vec<String> = rows
            .iter()
            .map(|r| {
                r.epsilon
                    .map(|e| format!("{e:.4}"))
                    .unwrap_or_else(|| "…".into())
            })
            .collect();
        fill_table(
            "#library-table tbody",
            rows.iter()
                .zip(&eps)
                .map(|(r, e)| [r.tool, e.as_str(), r.note.as_str()]),
        );
    }
    set_text("library-why", library::WHY);
    let target = target_eps().unwrap_or(3.0);
    let Some(box_) = d.get_element_by_id("snippets") else {
        return;
    };
    box_.set_text_content(None);
    let dataset = crate::ui::page::matching_dataset(Some(super::field::dataset_terms()), i.q)
        .map(|d| (d.n as u64, d.b as u64));
    for (title, code) in library::snippets(i, target, dataset) {
        let (Ok(div), Ok(head), Ok(pre)) = (
            d.create_element("div"),
            d.create_element("div"),
            d.create_element("pre"),
        ) else {
            return;
        };
        div.set_class_name("snippet");
        head.set_class_name("row");
        head.set_text_content(Some(title));
        if let Ok(btn) = d.create_element("button") {
            // No listener per button: one delegated listener on #snippets (see `start`).
            btn.set_text_content(Some("Copy"));
            let _ = btn.set_attribute("type", "button");
            let _ = head.append_child(&btn);
        }
        pre.set_text_content(Some(&code));
        let _ = div.append_child(&head);
        let _ = div.append_child(&pre);
        let _ = box_.append_child(&div);
    }
}

/// Copy a snippet: the clipboard where the page may use it, else select the text for
/// Ctrl+C (plain http, iframes), saying which.
fn copy_text(pre: &web_sys::Element) {
    let text = pre.text_content().unwrap_or_default();
    let clip = window().map(|w| w.navigator().clipboard());
    let secure = window().map(|w| w.is_secure_context()).unwrap_or(false);
    match clip {
        Some(c) if secure => {
            let _ = c.write_text(&text);
            set_text("copy-status", "code copied");
        }
        _ => {
            if let (Some(sel), Some(d)) = (
                window().and_then(|w| w.get_selection().ok().flatten()),
                doc(),
            ) {
                if let Ok(range) = d.create_range() {
                    let _ = range.select_node_contents(pre);
                    let _ = sel.remove_all_ranges();
                    let _ = sel.add_range(&range);
                }
            }
            set_text(
                "copy-status",
                "code selected: press Ctrl+C (the clipboard is not available here)",
            );
        }
    }
}

/// The accountant selector changed: remember it (the caller redraws and writes the URL).
pub fn set_acct(acct: Acct) {
    TIGHT.with(|t| t.borrow_mut().acct = acct);
    set_text("accountant-error", "");
    if let Some(sel) = by_id::<web_sys::HtmlSelectElement>("accountant") {
        sel.set_value(acct.name());
    }
}

/// The slot of a calibration kind ("sigma", "steps", "risk-sigma", "risk-steps").
fn slot(which: &str) -> usize {
    match which {
        "sigma" => 0,
        "steps" => 1,
        "risk-sigma" => 2,
        _ => 3,
    }
}

/// "What do I need?" for an attack-risk target: the smallest σ (`risk-sigma`) or the most
/// steps (`risk-steps`) whose certified TPR bound at FPR `fpr` is ≤ `tpr` (the command
/// line's `calibrate --tpr --fpr`, in the worker).
pub fn calibrate_risk(which: &str, i: Inputs, tpr: f64, fpr: f64) {
    post_calibration(
        which,
        i,
        vec![("target", Value::Num(tpr)), ("fpr", Value::Num(fpr))],
        "risk-error",
    );
}

/// "What do I need?" for the target ε: the worker solves for the smallest σ (`sigma`) or
/// the largest T (`steps`) whose ε meets `target`, with the chosen accountant (the tight
/// one, or exact RDP with the inputs' conversion), off the main thread either way.
pub fn calibrate(which: &str, i: Inputs, target: f64) {
    let acct = acct().name();
    post_calibration(
        which,
        i,
        vec![
            ("target", Value::Num(target)),
            ("accountant", Value::Text(acct.into())),
        ],
        "target-error",
    );
}

/// One calibration request to the worker (`kind` "calibrate", its `which`, the run shown
/// with its examples per user and adjacency, and `extra`); `error_id` says when there is
/// no worker. The worker echoes `gen`: here the calibration's sequence number.
fn post_calibration(which: &str, i: Inputs, extra: protocol::Fields, error_id: &str) {
    let (group, adj) = (group(), adjacency()); // before TIGHT is borrowed mutably
    TIGHT.with(|t| {
        let mut t = t.borrow_mut();
        let k = slot(which);
        t.calib[k] += 1;
        // User-level or replace-one: calibrated for that run (the tight accountant).
        let fields = protocol::calibrate(&i, t.calib[k], which, extra, group, adj);
        if super::worker::post_fields(&fields) {
            set_text(&format!("{which}-answer"), "computing…");
        } else {
            set_text(error_id, "the calculator's worker is not available");
        }
    });
}

/// Drop any calibration answers still on their way (the target or an input changed).
pub fn cancel_calibration() {
    TIGHT.with(|t| {
        let mut t = t.borrow_mut();
        for c in t.calib.iter_mut() {
            *c += 1;
        }
    });
}

/// Whether `data` answers the newest calibration of its kind.
fn is_current_calibration(data: &JsValue) -> bool {
    let k = slot(&get(data, "which").as_string().unwrap_or_default());
    TIGHT.with(|t| num(data, "gen") == t.borrow().calib[k] as f64)
}

/// A calibration answer from the worker (for the inputs it was asked with).
fn calibrated(data: &JsValue) -> Option<(&'static str, f64)> {
    if !is_current_calibration(data) {
        return None;
    }
    let which = get(data, "which").as_string().unwrap_or_default();
    let (v, e) = (num(data, "value"), num(data, "epsilon"));
    if !(v.is_finite() && e.is_finite()) {
        return None;
    }
    let tight = get(data, "accountant").as_string().as_deref() != Some("rdp");
    let eps = if which.starts_with("risk-") {
        format!(
            "TPR ≤ {} at FPR {}, certified",
            crate::render::fmt_num(e),
            crate::render::fmt_num(num(data, "fpr"))
        )
    } else if tight {
        format!("tight ε ≤ {e:.4}")
    } else {
        format!("ε = {e:.4}")
    };
    let text = if which.ends_with("sigma") {
        format!("σ = {v:.6} ({eps})")
    } else {
        let epochs = TIGHT
            .with(|t| t.borrow().asked)
            .map(|i| crate::ui::page::in_epochs(Some(super::field::dataset_terms()), &i, v as u64))
            .unwrap_or_default();
        format!("T = {v}{epochs} ({eps})")
    };
    set_text(&format!("{which}-answer"), &text);
    set_text(
        if which.starts_with("risk-") {
            "risk-error"
        } else {
            "target-error"
        },
        "",
    );
    Some((
        if which.ends_with("sigma") {
            "sigma"
        } else {
            "steps"
        },
        v,
    ))
}
