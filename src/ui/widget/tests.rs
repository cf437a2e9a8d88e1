//! The widget's settings, texts and answers, natively.
use super::*;

fn obj(fields: Vec<(&str, Value)>) -> Value {
    Value::Obj(fields.into_iter().map(|(k, v)| (k.into(), v)).collect())
}

/// A widget recomputes only when its run changed; a change of run drops the tight
/// answers; small σ waits for the worker's model, and the requests say what is asked.
#[test]
fn a_widget_state_recomputes_what_changed() {
    let mut st = State::default();
    assert_eq!(st.compute(), Computed::Fresh);
    assert_eq!(st.compute(), Computed::Same);
    assert!(st.heavy_request().is_none() && st.tight_request().is_some());
    let head = obj(vec![
        ("kind", Value::Text("headline".into())),
        ("epsilon", Value::Num(2.0)),
        ("epsilonLower", Value::Num(1.9)),
    ]);
    assert_eq!(st.tight_answer(&head), Answered::Headline);
    st.settings.set("sampling", Some("shuffled"));
    assert_eq!(st.compute(), Computed::Fresh);
    assert_eq!(st.tight.eps, None, "another run: the answer is not its own");
    st.settings.set("sigma", Some("0.05"));
    assert_eq!(st.compute(), Computed::Waiting);
    assert!(st.heavy_request().is_some());
    let refused = obj(vec![("error", Value::Text("no".into()))]);
    assert!(st
        .heavy_answer(&refused)
        .unwrap_err()
        .iter()
        .any(|m| m.contains("no")));
    st.offscreen = true;
    let asked = st.tight_request().unwrap();
    assert!(
        asked.contains(&("charts", Value::Bool(false))),
        "far away: no charts"
    );
    assert!(!st.needs_tight_charts());
}

/// The headline's texts follow the tight state: "…" while computing, the number with
/// what its ends mean, "—" with the reason (and a message) for the inputs shown, and a
/// number for other inputs is marked stale. The detail names the run and nulls what is
/// not a bound for it.
#[test]
fn a_widget_says_what_its_numbers_are() {
    let m = Model::compute(Inputs::mnist()).unwrap();
    let s = Settings::default();
    let plain = s.scheme();
    let mut t = TightState::default();
    let w = texts(&s, &m, &t);
    assert_eq!((w.eps_pld.as_str(), w.stale), ("…", true));
    assert!(w.pld && w.rdp && w.rdp_label == "exact RDP ε = ");
    let head = obj(vec![
        ("kind", Value::Text("headline".into())),
        ("epsilon", Value::Num(2.38)),
        ("epsilonLower", Value::Num(2.37)),
    ]);
    t.answer(&head, m.inputs, &plain);
    let w = texts(&s, &m, &t);
    assert_eq!((w.eps_pld.as_str(), w.stale), ("2.3800", false));
    assert!(w
        .eps_pld_title
        .starts_with("certified bracket [2.370000, 2.380000]"));
    assert_eq!(w.acct, " tight (PLD)");
    // Shuffled batches (issue 61 #6): the headline's number is the band's upper end (no
    // amplification), and the label says so with both ends; it is not "tight (PLD)".
    let mut sh = Settings::default();
    sh.set("sampling", Some("shuffled"));
    let band = obj(vec![
        ("kind", Value::Text("headline".into())),
        ("epsilon", Value::Num(2.38)),
        (
            "shuffled",
            obj(vec![
                ("epsilon", Value::Num(8.0)),
                ("epsilonLower", Value::Num(1.5)),
            ]),
        ),
    ]);
    let mut ts = TightState::default();
    ts.answer(&band, m.inputs, &sh.scheme());
    let w = texts(&sh, &m, &ts);
    assert_eq!(w.eps_pld, "8.0000");
    assert_eq!(
        w.acct,
        " no-amplification upper end; certified band [1.500000, 8.000000], shuffled batches"
    );
    // Its risk sentence names that end, not "the tight accountant".
    let risk = [(0.01, 0.2)];
    let said = crate::ui::session::one_percent_sentence(&risk, &sh.scheme());
    assert!(said.ends_with("(for every attack, from the shuffled band's upper end: no amplification by shuffling is assumed)."), "{said}");
    assert!(crate::ui::session::one_percent_sentence(&risk, &plain)
        .ends_with("from the tight accountant)."));
    let other = Model::compute(Inputs {
        sigma: 2.0,
        ..Inputs::mnist()
    })
    .unwrap();
    assert!(texts(&s, &other, &t).stale);
    let d = detail(&m, &t, plain);
    assert!(d.contains(&("epsilonPld", Value::Num(2.38))));
    assert!(d.contains(&("epsilon", Value::Num(m.opt.value))));
    let shuffled = Scheme::of(Batching::Shuffled, 1, Adjacency::AddRemove);
    let d = detail(&m, &t, shuffled);
    assert!(
        d.contains(&("epsilon", Value::Null))
            && d.contains(&("sampling", Value::Text("shuffled".into())))
    );
    let err = obj(vec![
        ("kind", Value::Text("error".into())),
        ("message", Value::Text("budget".into())),
    ]);
    t.answer(&err, m.inputs, &plain);
    let w = texts(&s, &m, &t);
    assert_eq!(
        (w.eps_pld.as_str(), w.eps_pld_title.as_str()),
        ("—", "budget")
    );
    assert!(w
        .messages
        .iter()
        .any(|l| l.contains("the exact-RDP ε still applies")));
}

/// A widget reads the answer of the run it shows: Poisson's headline, another scheme's
/// own answer (which stands when Poisson's failed), fixed-size batches' upper bound
/// with the trivial lower end, and why there is none.
#[test]
fn a_widget_reads_its_own_runs_answer() {
    let i = Inputs::mnist();
    let plain = Scheme::of(Batching::Poisson, 1, Adjacency::AddRemove);
    let head = |extra: Vec<(&str, Value)>| {
        let mut f = vec![
            ("kind", Value::Text("headline".into())),
            ("epsilon", Value::Num(1.0)),
            ("epsilonLower", Value::Num(0.99)),
        ];
        f.extend(extra);
        obj(f)
    };
    let mut t = TightState::default();
    assert_eq!(t.answer(&head(vec![]), i, &plain), Answered::Headline);
    assert_eq!(t.for_inputs(&i), Some((1.0, 0.99)));
    assert_eq!(t.for_inputs(&Inputs { sigma: 2.0, ..i }), None);
    let shuffled = Scheme::of(Batching::Shuffled, 1, Adjacency::AddRemove);
    let band = obj(vec![
        ("epsilon", Value::Num(8.0)),
        ("epsilonLower", Value::Num(1.5)),
    ]);
    let error = obj(vec![
        ("kind", Value::Text("error".into())),
        ("shuffled", band.clone()),
    ]);
    assert_eq!(t.answer(&error, i, &shuffled), Answered::Headline);
    assert_eq!(t.eps, Some((8.0, 1.5)));
    let fixed = Scheme::of(Batching::FixedSize, 1, Adjacency::ReplaceOne);
    let upper_only = head(vec![("scheme", obj(vec![("epsilon", Value::Num(4.0))]))]);
    assert_eq!(t.answer(&upper_only, i, &fixed), Answered::Headline);
    assert_eq!(t.eps, Some((4.0, 0.0)));
    assert_eq!(t.answer(&head(vec![]), i, &shuffled), Answered::Headline);
    assert_eq!(t.eps, None);
    assert_eq!(
        t.error.as_deref(),
        Some("the worker gave no answer for this scheme")
    );
    let charts = obj(vec![("kind", Value::Text("charts".into()))]);
    assert_eq!(t.answer(&charts, i, &plain), Answered::Charts);
    assert_eq!(t.charts_inputs, Some(i));
    assert_eq!(t.answer(&Value::Null, i, &plain), Answered::Nothing);
    // Issue 61 #2: refused charts for other inputs drop the last run's charts.
    let other = Inputs { sigma: 2.0, ..i };
    let refused = obj(vec![
        ("kind", Value::Text("charts-error".into())),
        ("message", Value::Text("work budget spent".into())),
    ]);
    assert!(matches!(
        t.answer(&refused, other, &plain),
        Answered::ChartsError(m) if m == "work budget spent"
    ));
    assert!(t.charts.is_none() && t.charts_inputs == Some(other));
}

#[test]
fn attributes_parse_or_name_the_problem() {
    let mut s = Settings::default();
    s.set("sigma", Some("2"));
    s.set("steps", Some("60,000"));
    s.set("q", Some("7"));
    s.set("mode", Some("full"));
    s.set("charts", Some("epsilon, training"));
    s.set("accountant", Some("pld"));
    s.set("conversion", Some("classic"));
    s.set("theme", Some("sepia"));
    s.set("unknown", Some("x"));
    assert_eq!((s.inputs.sigma, s.inputs.steps), (2.0, 60000));
    assert_eq!(
        s.inputs.q,
        Inputs::mnist().q,
        "q = 7 refused, the last good value kept"
    );
    assert_eq!(s.mode, Mode::Full);
    assert!(s.charts().epsilon && s.charts().training && !s.charts().bound);
    assert!(s.wants_tight());
    assert_eq!(s.inputs.conversion, Conversion::Classic);
    assert_eq!(s.theme, Theme::Auto);
    let m = s.messages();
    assert_eq!(m.len(), 2, "{m:?}");
    assert!(
        m[0].starts_with("attribute q: ")
            && m[0].ends_with(&format!("; showing q = {}", Field::Q.format(s.inputs.q))),
        "{m:?}"
    );
    assert_eq!(
        m[1],
        "attribute theme: 'sepia' is not a theme: use auto, light, dark"
    );
    // A fixed attribute clears its message; a removed one goes back to the default.
    s.set("q", Some("0.01"));
    s.set("sigma", None);
    assert_eq!(s.messages().len(), 1);
    assert_eq!((s.inputs.q, s.inputs.sigma), (0.01, Inputs::mnist().sigma));
    assert_eq!(
        parse_charts("epsilon banana"),
        Err("'banana' is not a chart: use epsilon, bound, training, profile, risk or none".into())
    );
    assert!(parse_charts(" , ").is_err());
    assert_eq!(parse_charts("none"), Ok(Charts::default()));
    s.set("accountant", Some("rdp"));
    s.set("charts", Some("bound"));
    assert!(!s.wants_tight());
}

/// #23: `sampling` truncated-poisson / fixed-size with `dataset-size` and `max-batch`.
#[test]
fn sized_sampling_attributes() {
    let mut s = Settings::default();
    s.set("sampling", Some("truncated-poisson"));
    s.set("dataset-size", Some("60000"));
    s.set("max-batch", Some("300"));
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let sc = s.scheme();
    assert_eq!((sc.dataset_size, sc.max_batch), (Some(60000), Some(300)));
    assert_eq!(sc.sizes(&s.inputs).unwrap().unwrap().max_batch, 300);
    assert!(s.wants_tight());
    s.set("dataset-size", Some("6e4.5"));
    assert_eq!(s.scheme().dataset_size, Some(60000), "the last good value");
    assert_eq!(s.errors[0].0, "dataset-size");
    s.set("dataset-size", None);
    assert_eq!(s.scheme().dataset_size, None);
    s.set("sampling", Some("fixed-size"));
    s.set("charts", Some("training profile"));
    let shown = s.shown_charts();
    assert!(shown.training && !shown.profile);
}

/// `group-size`: 1 … 256, above 1 user-level (tight charts only, the RDP ones named);
/// a bad value is named and the last good one kept.
#[test]
fn the_group_size_attribute() {
    let mut s = Settings::default();
    assert_eq!(
        s.scheme(),
        Scheme::of(Batching::Poisson, 1, Adjacency::AddRemove)
    );
    assert!(s.scheme().is_plain());
    s.set("charts", Some("epsilon training"));
    s.set("group-size", Some("2"));
    assert_eq!(s.group, 2);
    assert!(!s.scheme().is_plain() && s.wants_tight());
    assert_eq!(s.scheme().answer_key(), Some("user"));
    let shown = s.shown_charts();
    assert!(!shown.epsilon && shown.training);
    assert_eq!(
        s.notes(),
        ["charts epsilon: exact RDP of one example under add/remove, not drawn for users with at most 2 examples"]
    );
    assert!(s.messages().is_empty());
    let i = Inputs::mnist();
    assert!(s
        .scheme()
        .sentence(&i, 5.2654)
        .contains("at most 2 examples"));
    assert!(s.scheme().words(&i).starts_with("user-level"));
    s.set("group-size", Some("300"));
    assert_eq!(s.group, 2);
    assert!(s
        .messages()
        .iter()
        .any(|m| m.starts_with("attribute group-size: examples per user must be a whole number")));
    s.set("group-size", None);
    assert_eq!(s.group, 1);
    // adjacency: replace-one is answered by the worker too; a bad value is named.
    s.set("adjacency", Some("replace-one"));
    assert!(!s.scheme().is_plain() && s.scheme().answer_key() == Some("user"));
    assert!(s
        .scheme()
        .sentence(&i, 4.2)
        .contains("replace-one adjacency"));
    s.set("adjacency", Some("swap"));
    assert_eq!(s.adjacency, Adjacency::ReplaceOne);
    assert!(s
        .messages()
        .iter()
        .any(|m| m.starts_with("attribute adjacency: adjacency must be")));
    s.set("adjacency", None);
    assert!(s.scheme().is_plain());
}

/// `sampling` takes the page's names and the command line's; another scheme than
/// Poisson sampling asks the worker and says why the charts are not drawn.
#[test]
fn the_sampling_attribute() {
    let mut s = Settings::default();
    assert_eq!(s.sampling, Batching::Poisson);
    for (v, b) in [
        ("random-allocation", Batching::RandomAllocation),
        ("balls-in-bins", Batching::RandomAllocation),
        ("shuffle", Batching::Shuffled),
        ("shuffled", Batching::Shuffled),
        ("poisson", Batching::Poisson),
    ] {
        s.set("sampling", Some(v));
        assert_eq!(s.sampling, b, "{v}");
    }
    s.set("sampling", Some("random-allocation"));
    s.set("accountant", Some("rdp"));
    s.set("charts", Some("none"));
    assert!(s.wants_tight() && s.shown_charts() == Charts::default() && s.notes().is_empty());
    s.set("charts", Some("epsilon training risk"));
    assert!(s.shown_charts().training && s.shown_charts().risk && !s.shown_charts().epsilon);
    assert_eq!(
        s.notes(),
        ["charts epsilon: drawn for Poisson sampling only, not for random allocation"]
    );
    s.set("sampling", Some("shuffled"));
    assert_eq!(
        s.notes(),
        ["charts epsilon: drawn for Poisson sampling only, not for shuffled, fixed-size batches"],
        "the band's own tight charts"
    );
    s.set("sampling", Some("fixed-size"));
    assert_eq!(
        s.notes(),
        ["charts epsilon, risk: not drawn for fixed-size batches, which have an RDP bound only (no privacy-loss distribution for a profile or attack risk; ε vs α and bound vs exact are Poisson sampling's)"]
    );
    s.set("sampling", Some("random-allocation"));
    s.set("sampling", Some("bernoulli"));
    assert_eq!(
        s.sampling,
        Batching::RandomAllocation,
        "the last good value stays"
    );
    assert!(s.messages()[0].starts_with(
        "attribute sampling: 'bernoulli' is not a sampling scheme: use poisson, shuffled"
    ));
    s.set("sampling", None);
    assert_eq!(s.sampling, Batching::Poisson);
    // MNIST's 14063 steps at q = 256/60000 start a 61st epoch (60.1 of them).
    let (t, e) = epochs_of(&Inputs::mnist());
    assert_eq!((t, e), (234, 61.0));
    assert!(scheme_words(Batching::RandomAllocation, &Inputs::mnist())
        .contains("one of 234 steps per epoch, 61 epochs"));
}

#[test]
fn calculator_links_are_http_only() {
    for ok in [
        "index.html",
        "https://x.org/sgm/",
        "HTTP://x",
        "//cdn.x/y",
        "./a:b",
        "?q=1",
        " page.html\n",
    ] {
        assert!(calculator_url(ok).is_ok(), "{ok}");
    }
    for bad in [
        "javascript:alert(1)",
        "java\tscript:alert(1)",
        " \u{1}JAVASCRIPT:x",
        "data:text/html,x",
        "vbscript:x",
        "   ",
    ] {
        let mut s = Settings::default();
        s.set("calculator", Some(bad));
        assert!(
            s.calculator.is_none() && s.messages()[0].starts_with("attribute calculator: "),
            "{bad}"
        );
    }
}

/// The widget's export drawn on plotters' own SVG backend (the browser's goes through the web
/// layer's SVG surface, which measures text on a canvas).
fn export_svg(st: &State, which: &str) -> Option<String> {
    use plotters::prelude::{IntoDrawingArea, SVGBackend};
    let mut out = String::new();
    let drawn = st.draw_export(
        which,
        &SVGBackend::with_string(&mut out, (900, 560)).into_drawing_area(),
    );
    drawn.then_some(out)
}

/// The widget's export (issue 61 #6): an SVG of a chart shown, named by its run, and the
/// tight charts' CSV — only for the values shown; a chart not shown or not yet answered has
/// none, and a new run drops them.
#[test]
fn a_widget_exports_what_it_shows() {
    let mut st = State::default();
    st.settings.set("charts", Some("epsilon training risk"));
    assert_eq!(st.compute(), Computed::Fresh);
    let svg = export_svg(&st, "epsilon").expect("chart A is drawn from the model");
    assert!(
        svg.starts_with("<svg") && svg.contains("Poisson"),
        "{}",
        &svg[..200.min(svg.len())]
    );
    assert!(export_svg(&st, "bound").is_none(), "not shown");
    assert!(
        export_svg(&st, "training").is_none() && st.export_csv().is_none(),
        "no answer yet"
    );
    let n = |x: f64| Value::Num(x);
    let list = |v: Vec<Value>| Value::List(v);
    let charts = obj(vec![
        ("kind", Value::Text("charts".into())),
        (
            "training",
            obj(vec![
                ("steps", list(vec![n(10.0), n(100.0)])),
                ("pldUpper", list(vec![n(0.5), n(1.0)])),
                ("pldLower", list(vec![n(0.49), n(0.99)])),
                ("rdp", list(vec![n(0.6), n(1.2)])),
            ]),
        ),
        (
            "risk",
            obj(vec![(
                "curve",
                list(vec![
                    obj(vec![("fpr", n(1e-3)), ("tpr", n(0.01))]),
                    obj(vec![("fpr", n(0.1)), ("tpr", n(0.3))]),
                ]),
            )]),
        ),
    ]);
    assert_eq!(st.tight_answer(&charts), Answered::Charts);
    let svg = export_svg(&st, "training").expect("ε over training");
    let caption = st.settings.scheme().export_caption(&st.settings.inputs);
    let first = caption.split('\n').next().unwrap_or_default().to_string();
    assert!(
        svg.contains("<svg") && svg.contains(&first[..20]),
        "{first}"
    );
    assert!(export_svg(&st, "risk").is_some());
    let csv = st.export_csv().unwrap();
    assert!(
        csv.starts_with("# charts_for = ")
            && csv.contains("\ntraining,steps,1e1,epsilon_upper,5e-1"),
        "{csv}"
    );
    st.settings.set("sigma", Some("2"));
    assert_eq!(st.compute(), Computed::Fresh);
    assert!(
        export_svg(&st, "training").is_none() && st.export_csv().is_none(),
        "another run's"
    );
}
