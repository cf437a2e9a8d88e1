use super::*;

fn obj(fields: &[(&str, Value)]) -> Value {
    Value::Obj(
        fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

fn num(x: f64) -> Value {
    Value::Num(x)
}

fn kind(k: Kind) -> (&'static str, Value) {
    ("kind", Value::Text(k.name().into()))
}

/// The request posted among effects, with its generation.
fn posted(fx: &[Effect]) -> Option<(Fields, f64)> {
    fx.iter().find_map(|e| match e {
        Effect::Post(f, None) => {
            let gen = f.iter().find(|(k, _)| *k == "gen").map(|(_, v)| v.as_num());
            Some((f.clone(), gen.unwrap_or(f64::NAN)))
        }
        _ => None,
    })
}

fn texts(fx: &[Effect], id: &str) -> Vec<String> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Op(Op::Text(i, t)) if *i == id => Some(t.clone()),
            _ => None,
        })
        .collect()
}

fn headline(gen: f64, up: f64, lo: f64) -> Value {
    obj(&[
        kind(Kind::Headline),
        ("gen", num(gen)),
        ("epsilon", num(up)),
        ("epsilonLower", num(lo)),
    ])
}

/// Show inputs `i` and let them rest: the request is posted; its generation.
fn ask(p: &mut Page, i: Inputs, rdp: f64) -> f64 {
    p.set_inputs(i);
    let fx = p.request(i, rdp);
    assert!(fx.contains(&Effect::Start(Timer::Post, REST_MS)), "{fx:?}");
    posted(&p.post()).expect("a request").1
}

fn sigma(s: f64) -> Inputs {
    Inputs {
        sigma: s,
        ..Inputs::mnist()
    }
}

/// #20's critical failure: PageDown on σ made the tight accountant fail, and the headline
/// kept the previous run's "certified" ε with a gap computed against it. Now the refusal
/// for the inputs shown replaces every tight number: "—" with the reason, no value, no
/// gap, exact RDP's sentence, the charts cleared with the reason.
#[test]
fn a_refusal_leaves_nothing_of_the_previous_run() {
    let mut p = Page::default();
    let g = ask(&mut p, sigma(1.0), 1.2);
    let fx = p.answer(&headline(g, 1.0, 0.999));
    assert_eq!(texts(&fx, "epsilon-gap"), ["(+20.0 % above the tight ε)"]);
    assert!(fx.contains(&Effect::Op(Op::Attr(
        "epsilon-pld",
        "data-value",
        "1".into()
    ))));
    assert_eq!(p.tight_for(&sigma(1.0)), Some((1.0, 0.999)));
    let g2 = ask(&mut p, sigma(0.1), 27807.5);
    assert!(g2 > g);
    // No tight ε is claimed for the new inputs while they are computed.
    assert_eq!(p.tight_for(&sigma(0.1)), None);
    let fx = p.answer(&obj(&[
        kind(Kind::Error),
        ("gen", num(g2)),
        ("message", Value::Text("PLD accountant: budget".into())),
    ]));
    assert_eq!(texts(&fx, "epsilon-pld"), ["—"]);
    assert!(fx.contains(&Effect::Op(Op::NoAttr("epsilon-pld", "data-value"))));
    assert_eq!(texts(&fx, "epsilon-gap"), [""]);
    let sentence = texts(&fx, "sentence");
    assert!(
        sentence.len() == 1 && sentence[0].contains("exact RDP"),
        "{sentence:?}"
    );
    assert!(texts(&fx, "epsilon-pld-note")[0].contains("The exact-RDP ε applies"));
    for n in 0..3 {
        assert!(fx.contains(&Effect::ClearChart(n)));
    }
    assert!(p.shown_charts().is_none() && p.tight_for(&sigma(1.0)).is_none());
    assert!(fx.contains(&Effect::Op(Op::Class("tight", "updating", false))));
}

/// #20's race: an answer for σ = 1.52 arriving after σ = 1.4 was typed (before its
/// request is posted, or after) is not stored as 1.4's.
#[test]
fn an_answer_for_older_inputs_is_dropped() {
    let mut p = Page::default();
    let g = ask(&mut p, sigma(1.52), f64::NAN);
    // σ = 1.4 typed: shown, not yet posted.
    p.set_inputs(sigma(1.4));
    p.request(sigma(1.4), f64::NAN);
    assert!(p.answer(&headline(g, 0.7, 0.69)).is_empty());
    assert_eq!(p.tight_for(&sigma(1.4)), None);
    assert_eq!(p.tight_for(&sigma(1.52)), None);
    // Posted: the older generation is still dropped, the newer one is kept.
    let g2 = posted(&p.post()).unwrap().1;
    assert!(p.answer(&headline(g, 0.7, 0.69)).is_empty());
    assert!(!p.answer(&headline(g2, 0.8, 0.79)).is_empty());
    assert_eq!(p.tight_for(&sigma(1.4)), Some((0.8, 0.79)));
    // Charts of an older generation are dropped too.
    let charts = obj(&[kind(Kind::Charts), ("gen", num(g))]);
    assert!(p.answer(&charts).is_empty() && p.shown_charts().is_none());
}

/// The charts are for the inputs they were computed for: kept drawn (marked stale)
/// while new inputs are computed, but never exported or written to CSV as theirs.
#[test]
fn charts_belong_to_their_inputs() {
    let mut p = Page::default();
    let g = ask(&mut p, sigma(1.0), f64::NAN);
    let charts = obj(&[
        kind(Kind::Charts),
        ("gen", num(g)),
        (
            "training",
            obj(&[
                ("steps", Value::List(vec![num(1.0), num(2.0)])),
                ("pldUpper", Value::List(vec![num(0.5), num(1.0)])),
            ]),
        ),
    ]);
    let fx = p.answer(&charts);
    assert!(fx.contains(&Effect::Redraw) && fx.contains(&Effect::Stale(false)));
    assert_eq!(p.charts().unwrap().training.pld_upper, [0.5, 1.0]);
    assert!(p.charts_csv("").is_ok() && p.export_caption().is_some());
    let fx = p.request(sigma(2.0), f64::NAN);
    assert!(fx.contains(&Effect::ClearReadouts));
    p.set_inputs(sigma(2.0));
    assert!(p.shown_charts().is_some(), "kept drawn, marked stale");
    assert!(p.charts().is_none() && p.export_caption().is_none());
    assert!(p.charts_csv("").is_err());
    assert!(p.post().contains(&Effect::Stale(true)));
}

/// The target ε is part of the model: in the link, in the request, and the
/// ε-over-training sentence uses the one solve the worker answered for it.
#[test]
fn the_target_is_asked_with_the_run_and_read_once() {
    let mut p = Page::default();
    let g = ask(&mut p, Inputs::mnist(), f64::NAN);
    let fx = p.set_target(Some(2.0));
    let (f, g2) = posted(&fx).expect("asked again");
    assert!(g2 > g && f.contains(&("target", Value::Num(2.0))));
    assert_eq!(p.link.target, Some(2.0));
    assert!(
        p.set_target(Some(2.0)).is_empty(),
        "unchanged: nothing asked"
    );
    p.answer(&obj(&[
        kind(Kind::Charts),
        ("gen", num(g2)),
        (
            "training",
            obj(&[
                ("steps", Value::List(vec![num(7000.0), num(14063.0)])),
                ("pldUpper", Value::List(vec![num(1.5), num(2.5)])),
            ]),
        ),
    ]));
    let statement = |p: &Page| texts(&p.chart_texts(), "training-statement")[0].clone();
    assert!(statement(&p).contains("computing"), "{}", statement(&p));
    p.answer(&obj(&[
        kind(Kind::Target),
        ("gen", num(g2)),
        ("target", num(2.0)),
        ("steps", num(9000.0)),
    ]));
    assert!(statement(&p).contains("9000"), "{}", statement(&p));
    // An answer for another target than the one shown is not used.
    p.set_target(Some(3.0));
    assert!(statement(&p).contains("computing"));
}

/// "What do I need?": an answer is shown and kept for Apply only while it is the newest
/// of its kind and the inputs are the ones it was asked for.
#[test]
fn a_calibration_answers_only_its_own_question() {
    let mut p = Page::default();
    p.set_inputs(Inputs::mnist());
    let fx = p.calibrate("sigma", vec![("target", Value::Num(1.0))]);
    let Some(Effect::Post(f, Some(posting))) = fx.first() else {
        panic!("{fx:?}")
    };
    assert_eq!(posting.computing, Some("sigma-answer"));
    assert_eq!(posting.failed, "target-error");
    assert!(f.contains(&("accountant", Value::Text("pld".into()))));
    let gen = f.iter().find(|(k, _)| *k == "gen").unwrap().1.as_num();
    let answer = obj(&[
        kind(Kind::Calibrated),
        ("gen", num(gen)),
        ("which", Value::Text("sigma".into())),
        ("value", num(1.7)),
        ("epsilon", num(0.99)),
    ]);
    // The inputs changed meanwhile: dropped, and nothing to apply.
    p.set_inputs(sigma(3.0));
    assert!(!p.inputs_changed().is_empty());
    assert!(p.answer(&answer).is_empty() && p.applied("sigma").is_none());
    // Asked again for the inputs shown: its own answer is shown and applies.
    p.calibrate("sigma", vec![("target", Value::Num(1.0))]);
    let mut again = answer.clone();
    if let Value::Obj(f) = &mut again {
        f[1].1 = num(gen + 2.0);
    }
    let fx = p.answer(&again);
    assert_eq!(
        texts(&fx, "sigma-answer"),
        ["σ = 1.700000 (tight ε ≤ 0.9900)"]
    );
    assert!(fx.contains(&Effect::Op(Op::Hidden("apply-sigma", false))));
    assert_eq!(p.applied("sigma").map(|i| i.sigma), Some(1.7));
    assert!(p.applied("steps").is_none());
}

/// Issue 61 #1: a calibration asks for the scheme shown, and its answer goes (with Apply)
/// when the batches, examples per user or neighbours change.
#[test]
fn a_calibration_is_for_the_scheme_shown() {
    let mut p = Page::default();
    p.set_inputs(Inputs::mnist());
    p.set_batching(Batching::Shuffled);
    let fx = p.calibrate("sigma", vec![("target", Value::Num(3.0))]);
    let Some(Effect::Post(f, _)) = fx.first() else {
        panic!("{fx:?}")
    };
    assert!(
        f.contains(&("sampling", Value::Text("shuffled".into()))),
        "{f:?}"
    );
    assert!(f.iter().any(|(k, _)| *k == "epochs"), "{f:?}");
    let gen = f.iter().find(|(k, _)| *k == "gen").unwrap().1.as_num();
    let answer = obj(&[
        kind(Kind::Calibrated),
        ("gen", num(gen)),
        ("which", Value::Text("sigma".into())),
        ("accountant", Value::Text("band".into())),
        ("sampling", Value::Text("shuffled".into())),
        ("value", num(7.6)),
        ("epsilon", num(2.99)),
    ]);
    let fx = p.answer(&answer);
    let shown = texts(&fx, "sigma-answer");
    assert!(
        shown[0].contains("shuffled batches") && shown[0].contains("upper end"),
        "{shown:?}"
    );
    assert_eq!(p.applied("sigma").map(|i| i.sigma), Some(7.6));
    // Another batching, group or adjacency: the answer and Apply go.
    for change in 0..3 {
        let fx = p.calibrate("sigma", vec![("target", Value::Num(3.0))]);
        let Some(Effect::Post(f, _)) = fx.first() else {
            panic!("{fx:?}")
        };
        let gen = f.iter().find(|(k, _)| *k == "gen").unwrap().1.as_num();
        let mut again = answer.clone();
        if let Value::Obj(fields) = &mut again {
            fields[1].1 = num(gen);
        }
        let fx = match change {
            0 => p.set_batching(Batching::Poisson),
            1 => p.set_group(2),
            _ => p.set_adjacency(Adjacency::ReplaceOne),
        };
        assert!(
            fx.contains(&Effect::Op(Op::Hidden("apply-sigma", true))),
            "{change}"
        );
        assert!(
            p.answer(&again).is_empty() && p.applied("sigma").is_none(),
            "{change}"
        );
    }
}

/// A batching other than Poisson sampling leads the headline with its own certified
/// answer, says what its ends mean, and is named in the CSV's first line.
#[test]
fn a_scheme_leads_the_headline_with_its_own_answer() {
    let mut p = Page::default();
    p.set_batching(Batching::Shuffled);
    let g = ask(&mut p, Inputs::mnist(), 1.2);
    let band = obj(&[
        ("epsilon", num(8.0)),
        ("epsilonLower", num(1.5)),
        ("epochs", num(60.0)),
    ]);
    let fx = p.answer(&obj(&[
        kind(Kind::Headline),
        ("gen", num(g)),
        ("epsilon", num(1.0)),
        ("epsilonLower", num(0.99)),
        ("shuffled", band),
    ]));
    let bracket = texts(&fx, "epsilon-pld-bracket");
    assert!(
        bracket
            .last()
            .unwrap()
            .starts_with("certified band [1.500000, 8.000000]"),
        "{bracket:?}"
    );
    assert_eq!(texts(&fx, "epsilon-pld").last().unwrap(), "8.0000");
    assert!(texts(&fx, "shuffled-vs-poisson")[0].contains("cannot be claimed"));
    assert_eq!(
        texts(&fx, "epsilon-gap").last().unwrap(),
        "(Poisson sampling's: not a bound for the batching chosen)"
    );
    let line = p.scheme_line(&Inputs::mnist()).unwrap();
    assert!(
        line.starts_with("# headline_epsilon = 8 (certified upper bound; [1.5, 8]"),
        "{line}"
    );
    // A scheme without its answer says so, with the reason.
    let g2 = ask(&mut p, sigma(2.0), 0.5);
    let fx = p.answer(&obj(&[
        kind(Kind::Headline),
        ("gen", num(g2)),
        ("epsilon", num(0.4)),
        ("epsilonLower", num(0.39)),
        (
            "shuffled",
            obj(&[("error", Value::Text("too wide".into()))]),
        ),
    ]));
    assert_eq!(texts(&fx, "epsilon-pld").last().unwrap(), "—");
    assert!(p.scheme_line(&sigma(2.0)).unwrap().contains("unavailable"));
}

/// Exact RDP from the worker (small σ): an answer is used for the newest request only,
/// its model only for the inputs it was computed for; chart C only for σ shown.
#[test]
fn the_small_sigma_model_belongs_to_its_inputs() {
    let mut p = Page::default();
    let small = sigma(0.05);
    p.set_inputs(small);
    let fx = p.ask_rdp(small, false);
    assert!(fx.contains(&Effect::Start(Timer::Computing, COMPUTING_MS)));
    let (f, g) = match &fx[0] {
        Effect::Post(f, Some(_)) => (f.clone(), f[1].1.as_num()),
        e => panic!("{e:?}"),
    };
    assert!(
        f.contains(&("model", Value::Bool(true))),
        "small σ asks for the model"
    );
    assert!(p.ask_rdp(small, true).is_empty(), "asked once");
    let answer = |gen: f64| {
        obj(&[
            kind(Kind::Rdp),
            ("gen", num(gen)),
            ("rdp", Value::List(vec![num(1.0); 3])),
            ("value", num(5.0)),
            (
                "compare",
                Value::List(vec![Value::List(vec![
                    Value::Text("route".into()),
                    Value::Null,
                    Value::Text("note".into()),
                ])]),
            ),
        ])
    };
    assert!(p.worker_answer(&answer(g - 1.0)).is_empty());
    assert_eq!(
        p.computing_due(),
        vec![text("computing", "computing exact RDP for small σ…")]
    );
    let fx = p.worker_answer(&answer(g));
    assert!(fx.contains(&Effect::Frame));
    assert!(fx.contains(&Effect::Op(Op::Rows(
        "#compare-table tbody",
        vec![["route".into(), "n/a".into(), "note".into()]]
    ))));
    assert!(p.computing_due().is_empty());
    assert!(p.heavy_model(&sigma(0.06)).is_none());
    let c = |s: f64| {
        obj(&[
            kind(Kind::ChartC),
            ("sigma", num(s)),
            ("chartC", Value::List(vec![num(0.1); 5])),
        ])
    };
    assert!(p.worker_answer(&c(0.07)).is_empty() && p.chart_c().is_none());
    assert_eq!(p.worker_answer(&c(0.05)), vec![Effect::ChartC]);
    assert_eq!(p.chart_c().map(|(s, d)| (s, d.len())), Some((0.05, 1)));
}

/// An export names its chart and run: a menu value it does not offer is chart A; the
/// tight charts' footer only once they are the inputs shown's; chart C's once its data
/// is here; chart D's for valid inputs only.
#[test]
fn exports_name_their_chart_and_run() {
    assert_eq!(export_choice("risk"), "risk");
    assert_eq!(export_choice("<img src=x>"), "a");
    assert_eq!(
        export_status("b", "svg", true),
        "chart b: SVG, 900 × 560 (light theme)"
    );
    assert_eq!(
        export_status("a", "png", true),
        "chart a: PNG, 1800 × 1120 px (light theme)"
    );
    assert_eq!(
        export_status("c", "png", false),
        "chart c has nothing to export yet"
    );
    let mut p = Page::default();
    let i = Inputs::mnist();
    assert!(p
        .export_caption_for("a", &i, None)
        .unwrap()
        .contains("Poisson sampling"));
    assert!(p.export_caption_for("training", &i, None).is_none());
    assert!(p.export_caption_for("c", &i, None).is_none());
    assert!(p.export_caption_for("d", &i, None).is_none());
    assert!(p.export_caption_for("d", &i, Some((1.0, 2.0))).is_some());
    let g = ask(&mut p, i, f64::NAN);
    p.answer(&obj(&[kind(Kind::Charts), ("gen", num(g))]));
    assert!(p.export_caption_for("profile", &i, None).is_some());
}

/// Answers are read from the protocol's tree: absent parts read as empty or NaN.
#[test]
fn malformed_answers_read_as_nothing() {
    let c = TightCharts::parse(&Value::Null);
    assert!(c.training.steps.is_empty() && c.profile.is_empty() && c.errors == [None, None, None]);
    let v = obj(&[("a", Value::Text("x".into()))]);
    assert!(v.num("a").is_nan() && v.text("b").is_none() && v.items("a").is_empty());
    let mut p = Page::default();
    assert!(p
        .answer(&obj(&[("kind", Value::Text("nonsense".into()))]))
        .is_empty());
    assert!(p.answer(&Value::Null).is_empty());
}

/// The audit (issue 65): posted with the run shown; its answer shown only while it is the
/// newest audit's and its run is shown; a new run asks again and the old points go at once.
#[test]
fn an_audit_answers_for_the_run_shown() {
    let mut p = Page::new(Link::default());
    ask(&mut p, sigma(1.1), 2.5);
    assert_eq!(texts(&p.audit("  ", false), "audit-error").len(), 1);
    let fx = p.audit("score,member\n1,1\n0,0", true);
    let post = fx.iter().find_map(|e| match e {
        Effect::Post(f, Some(_)) => Some(f.clone()),
        _ => None,
    });
    let post = post.expect("an audit request");
    let field = |k: &str| post.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
    assert_eq!(field("kind"), Some(Value::Text("audit".into())));
    assert_eq!(field("lowerIsMember"), Some(Value::Bool(true)));
    assert_eq!(field("sigma"), Some(num(1.1)));
    let gen = field("gen").unwrap().as_num();
    let roc = Value::List(vec![obj(&[
        ("fpr", num(0.01)),
        ("tpr", num(0.04)),
        ("tpr_lower", num(0.03)),
        ("tpr_upper", num(0.05)),
    ])]);
    let answer = |g: f64| {
        obj(&[
            kind(Kind::Audited),
            ("gen", num(g)),
            (
                "verdict",
                Value::Text("consistent with the certificate".into()),
            ),
            ("roc", roc.clone()),
        ])
    };
    // An older audit's answer is dropped; the newest is shown, with its point.
    assert!(p.answer(&answer(gen - 1.0)).is_empty());
    let fx = p.answer(&answer(gen));
    assert_eq!(
        texts(&fx, "audit-verdict"),
        vec!["consistent with the certificate"]
    );
    assert_eq!(p.audit_points().len(), 1);
    // Another σ: the points go, the audit is asked again for the new run.
    let i = sigma(2.0);
    p.set_inputs(i);
    assert!(p.audit_points().is_empty());
    let _ = p.request(i, 1.0);
    let fx = p.post();
    let again = fx.iter().any(|e| matches!(e, Effect::Post(f, Some(_)) if f.iter().any(|(k, v)| *k == "kind" && *v == Value::Text("audit".into()))));
    assert!(again, "{fx:?}");
    assert!(
        p.answer(&answer(gen)).is_empty(),
        "the old run's audit is not shown"
    );
}

/// A random-allocation bracket wider than the 1 % rule (hardening round 4 #5: the engine
/// answers such runs up to 5 %) says so under the headline; a narrow one, or another
/// batching, says nothing.
#[test]
fn a_wide_allocation_bracket_says_so() {
    assert!(wide_note(Batching::RandomAllocation, 0.877120, 0.856637)
        .contains("wider than the 1 % rule"));
    assert_eq!(
        wide_note(Batching::RandomAllocation, 2.340828, 2.339896),
        ""
    );
    assert_eq!(wide_note(Batching::Shuffled, 0.877120, 0.5), "");
    assert_eq!(
        wide_note(Batching::RandomAllocation, 0.877120, f64::NAN),
        ""
    );
}

/// The noise selector (issue 67): correlated noise is asked for the run shown, with the bins'
/// steps per epoch; only the newest answer for the run shown is written, saying what its ends
/// are; "independent" clears the panel; another σ asks again.
#[test]
fn correlated_noise_answers_for_the_run_shown() {
    let mut p = Page::new(Link::default());
    ask(&mut p, sigma(1.1), 2.5);
    assert!(p
        .correlated(None)
        .iter()
        .all(|e| !matches!(e, Effect::Post(..))));
    let post_of = |fx: &[Effect]| {
        fx.iter().find_map(|e| match e {
            Effect::Post(f, Some(_)) => Some(f.clone()),
            _ => None,
        })
    };
    let post = post_of(&p.correlated(Some(("band:4", "cyclic-bins")))).expect("a request");
    let field = |k: &str| post.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
    assert_eq!(field("kind"), Some(Value::Text("correlated".into())));
    assert_eq!(field("strategy"), Some(Value::Text("band:4".into())));
    // MNIST's run has its dataset terms: asked in them (the bins' epochs from N and B).
    assert_eq!(
        field("participation"),
        Some(Value::Text("cyclic-bins".into()))
    );
    assert_eq!(
        (field("datasetSize"), field("batchSize"), field("epochs")),
        (Some(num(60000.0)), Some(num(256.0)), Some(num(60.0)))
    );
    assert_eq!(field("sigma"), Some(num(1.1)));
    let gen = field("gen").unwrap().as_num();
    let answer = |g: f64, lower: Option<f64>| {
        let mut f = vec![
            kind(Kind::Correlated),
            ("gen", num(g)),
            ("epsilon", num(2.3851161)),
            ("delta", num(1e-5)),
            ("bound", Value::Text("bracket (exact reduction)".into())),
            (
                "scheme",
                Value::Text("correlated noise: 4 bands; sigma = noise std".into()),
            ),
        ];
        if let Some(l) = lower {
            f.push(("epsilon_lower", num(l)));
        }
        obj(&f)
    };
    assert!(
        p.answer(&answer(gen - 1.0, None)).is_empty(),
        "an older answer"
    );
    let fx = p.answer(&answer(gen, Some(2.3842071)));
    assert_eq!(
        texts(&fx, "correlated-epsilon"),
        vec!["ε = 2.385117 (certified upper bound; bracket [2.384207, 2.385117]: the true ε lies within) at δ = 0.00001"]
    );
    assert_eq!(
        texts(&fx, "correlated-how"),
        vec!["bracket (exact reduction): correlated noise: 4 bands; σ = noise std"]
    );
    // The page's target ε: its σ, rounded up, said as such.
    let mut with_sigma = answer(gen, None);
    if let Value::Obj(f) = &mut with_sigma {
        f.push(("target".into(), num(2.0)));
        f.push(("calibrated_sigma".into(), num(1.2345674)));
    }
    assert!(texts(&p.answer(&with_sigma), "correlated-sigma")[0]
        .starts_with("σ ≥ 1.234568 for a certified ε ≤ 2 "));
    let fx = p.answer(&answer(gen, None));
    assert_eq!(texts(&fx, "correlated-sigma"), vec![""]);
    assert!(texts(&fx, "correlated-epsilon")[0]
        .starts_with("ε ≤ 2.385117 (certified upper bound; no lower bound claimed)"));
    // Another σ: asked again; the old run's answer is not shown.
    let i = sigma(2.0);
    p.set_inputs(i);
    let _ = p.request(i, 1.0);
    let fx = p.post();
    assert!(fx.iter().any(|e| matches!(e, Effect::Post(f, Some(_)) if f.iter().any(|(k, v)| *k == "kind" && *v == Value::Text("correlated".into())))), "{fx:?}");
    assert!(p.answer(&answer(gen, None)).is_empty());
    // A run without dataset terms: its q, and the bins' steps per epoch from it (⌊1/q⌋).
    let mut p2 = Page::new(Link::default());
    let bare = Inputs {
        q: 0.01,
        steps: 1000,
        ..sigma(1.0)
    };
    ask(&mut p2, bare, 2.5);
    let post = post_of(&p2.correlated(Some(("band:4", "balls-in-bins")))).expect("a request");
    let f2 = |k: &str| post.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
    assert_eq!(
        (f2("participation"), f2("datasetSize")),
        (Some(Value::Text("balls-in-bins:100".into())), None)
    );
    // Independent: the box hidden, the panel cleared and nothing more asked.
    let fx = p.noise("independent", "band:4", "min-sep");
    assert!(fx
        .iter()
        .any(|e| matches!(e, Effect::Op(Op::Hidden("correlated-box", true)))));
    assert_eq!(texts(&fx, "correlated-epsilon"), vec![""]);
    let _ = p.request(sigma(3.0), 1.0);
    assert!(!p.post().iter().any(|e| matches!(e, Effect::Post(f, Some(_)) if f.iter().any(|(k, v)| *k == "kind" && *v == Value::Text("correlated".into())))));
}

/// With correlated noise chosen, the tight charts are its run's (issue 67): independent
/// noise's answer is kept but not drawn, none are shown until the correlated answer's arrive,
/// their legends and the note say what they are; "independent" draws independent noise's again.
#[test]
fn correlated_noise_draws_its_own_charts() {
    let mut p = Page::new(Link::default());
    let g = ask(&mut p, sigma(1.1), 2.5);
    let training = |up: f64| {
        obj(&[
            ("steps", Value::List(vec![num(7000.0), num(14063.0)])),
            ("pldUpper", Value::List(vec![num(up / 2.0), num(up)])),
        ])
    };
    let charts = obj(&[
        kind(Kind::Charts),
        ("gen", num(g)),
        ("training", training(2.4)),
    ]);
    assert!(p.answer(&charts).contains(&Effect::Redraw));
    let fx = p.noise("correlated", "band:4", "min-sep");
    let note = texts(&fx, "charts-batching");
    assert!(
        note[0].contains("correlated noise (band:4, participation min-sep)"),
        "{note:?}"
    );
    assert!(fx.contains(&Effect::Stale(true)));
    assert!(
        p.shown_charts().is_none(),
        "not independent noise's under correlated"
    );
    let gen = fx
        .iter()
        .find_map(|e| match e {
            Effect::Post(f, Some(_)) => {
                f.iter().find(|(k, _)| *k == "gen").map(|(_, v)| v.as_num())
            }
            _ => None,
        })
        .unwrap();
    // Independent noise's next answer arrives: kept, not drawn.
    let fx = p.answer(&charts);
    assert!(!fx.contains(&Effect::Redraw) && p.shown_charts().is_none());
    let answer = obj(&[
        kind(Kind::Correlated),
        ("gen", num(gen)),
        ("epsilon", num(5.35)),
        ("epsilon_lower", num(5.34)),
        ("delta", num(1e-5)),
        (
            "charts",
            obj(&[
                ("training", training(5.35)),
                (
                    "risk",
                    obj(&[
                        ("fpr", Value::List(vec![num(0.01)])),
                        ("tpr", Value::List(vec![num(0.2)])),
                    ]),
                ),
            ]),
        ),
    ]);
    let fx = p.answer(&answer);
    assert!(fx.contains(&Effect::Redraw) && fx.contains(&Effect::Stale(false)));
    let (_, c) = p.shown_charts().expect("correlated charts");
    assert_eq!(c.training.pld_upper, [2.675, 5.35]);
    assert!(p.charts_csv("").unwrap().contains("# strategy = band:4\n"));
    assert!(p
        .export_caption()
        .unwrap()
        .ends_with("correlated noise: band:4, participation min-sep"));
    let l = p.labels();
    assert!(
        l.upper.starts_with("correlated noise")
            && l.lower.is_some()
            && l.profile.contains("bracket")
    );
    let _ = p.set_target(Some(3.0));
    let t = p.chart_texts();
    assert!(texts(&t, "training-statement")[0].contains("not searched for correlated noise"));
    assert!(texts(&t, "risk-sentence")[0].contains("correlated noise, band:4, min-sep"));
    // Independent again: its charts (kept), drawn with its own legends.
    let fx = p.noise("independent", "band:4", "min-sep");
    assert!(fx.contains(&Effect::Redraw), "{fx:?}");
    assert_eq!(p.shown_charts().unwrap().1.training.pld_upper, [1.2, 2.4]);
    assert!(!p.labels().upper.starts_with("correlated"));
}
