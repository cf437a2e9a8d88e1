//! Each chart drawn natively to SVG by the same code the page uses on a canvas.
#![cfg(not(target_arch = "wasm32"))]

use plotters::prelude::*;
use sgm_rdp::render::{self, Inputs, Model, Theme};

fn svg<T>(f: impl FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> T) -> String {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (900, 560)).into_drawing_area();
        f(&root);
    }
    s
}

#[test]
fn chart_a_has_its_series_and_optimum() {
    let m = Model::compute(Inputs::mnist()).unwrap();
    let s = svg(|r| {
        render::draw_eps_vs_alpha(r, &m, &Theme::light(1.0))
            .map(|_| ())
            .unwrap()
    });
    assert!(s.matches("<polyline").count() >= 3, "three curves");
    assert!(s.contains("<circle"), "optimum marker");
    assert!(s.contains("improved conversion") && s.contains("classic conversion"));
    assert!(s.contains(&format!("{:.4}", m.opt.value)));
}

#[test]
fn chart_b_shades_where_theorem11_holds() {
    let mut i = Inputs::mnist();
    i.sigma = 8.0;
    i.q = 0.01;
    let m = Model::compute(i).unwrap();
    assert!(m.thm11_holds.iter().any(|h| *h) && m.thm11_holds.iter().any(|h| !*h));
    let s = svg(|r| render::draw_bound_vs_exact(r, &m, &Theme::dark(1.0), true).unwrap());
    assert!(s.matches("<polyline").count() >= 3);
    assert!(
        s.contains("exact RDP") && s.contains("condition"),
        "names the failing condition"
    );
    assert!(s.contains("Abadi") || s.contains("Bun"));
    // The shading is its own legend entry, with a filled swatch in the shade colour.
    assert!(
        s.contains("shaded: Theorem 11&apos;s conditions hold")
            || s.contains("shaded: Theorem 11's conditions hold")
    );
    let th = Theme::dark(1.0);
    let legend = render::legend_b(&m, &th, true);
    assert_eq!(legend[2].2, render::Mark::Area);
    assert!(
        legend[3..].iter().all(|e| e.2 == render::Mark::Dashed),
        "overlays dashed"
    );
    // The sparse orders above α = 64 (128 … 1024) are marked, not joined by ramps: one
    // dot per series (exact, bound) at each of the four.
    let s = svg(|r| render::draw_bound_vs_exact(r, &m, &Theme::light(1.0), false).unwrap());
    assert_eq!(
        s.matches("<circle").count(),
        8,
        "{}",
        s.matches("<circle").count()
    );
    // Legend rows are counted from the entries drawn (no shading: no shading entry).
    let none = Model::compute(Inputs::mnist()).unwrap();
    let rows = |m: &Model| render::legend_rows_b(m, false);
    assert_eq!(rows(&m), 3);
    assert_eq!(
        rows(&none),
        2 + none.thm11_holds.iter().any(|h| *h) as usize
    );
}

#[test]
fn chart_a_returns_the_mapping_its_readout_uses() {
    let m = Model::compute(Inputs::mnist()).unwrap();
    for (scale, narrow) in [(1.0, false), (2.0, true)] {
        let mut s = String::new();
        let map = {
            let root = SVGBackend::with_string(&mut s, (900, 560)).into_drawing_area();
            let th = Theme::light(scale).narrow(narrow);
            render::draw_eps_vs_alpha(&root, &m, &th).unwrap()
        };
        let (xr, yr) = render::chart_a_ranges(&m);
        assert_eq!((map.x, map.y), (xr, yr), "the axes as drawn");
        let ((x0, x1), (y0, y1)) = map.px;
        // Inside the canvas (CSS px = device px / scale), with room for the axis labels.
        assert!(x0 > 20.0 && x1 <= 900.0 / scale && x0 < x1, "{:?}", map.px);
        assert!(y0 >= 0.0 && y1 < 560.0 / scale && y0 < y1, "{:?}", map.px);
        for a in [1.5, 10.0, 40.0] {
            let back = map.x_at(map.px_of_x(a));
            assert!((back - a).abs() / a < 1e-9, "{a} → {back}");
        }
        assert_eq!(map.x_at(-1e9), xr.0);
        assert_eq!(map.x_at(1e9), xr.1);
        assert!((map.px_of_y(yr.1) - y0).abs() < 1e-9 && (map.px_of_y(yr.0) - y1).abs() < 1e-9);
        // The readout's order under the pointer: each order's own pixel finds it.
        for (i, &a) in m.orders.iter().enumerate().filter(|(_, a)| **a <= xr.1) {
            assert_eq!(map.nearest(&m.orders, map.px_of_x(a)), i, "α = {a}");
        }
        assert_eq!(map.nearest(&[], 10.0), 0);
    }
    // Chart A's readouts: one per order, on its improved ε, with the numbers it draws.
    let pts = render::chart_a_readouts(&m);
    assert_eq!(pts.len(), m.orders.len());
    let k = m.orders.iter().position(|&a| a == 8.0).unwrap();
    assert_eq!((pts[k].x, pts[k].y), (8.0, m.eps_improved[k]));
    assert!(
        pts[k].text.starts_with("α = 8: per-step RDP ")
            && pts[k]
                .text
                .contains(&format!("ε improved {:.4}", m.eps_improved[k])),
        "{}",
        pts[k].text
    );
    // An export's footer (#22): the run in small print under the chart, the chart above it.
    let mut s = String::new();
    let map = {
        let root = SVGBackend::with_string(&mut s, (900, 560)).into_drawing_area();
        let th = Theme::light(1.0);
        let area = render::with_footer(&root, "sgm-rdp · q = 0.01, σ = 1.1", &th).unwrap();
        render::draw_eps_vs_alpha(&area, &m, &th).unwrap()
    };
    assert!(s.contains("sgm-rdp · q = 0.01, σ = 1.1") && s.contains("<polyline"));
    assert!(
        map.px.1 .1 < 560.0 - 22.0,
        "the plot ends above the footer: {:?}",
        map.px
    );
    // The legend lists what is drawn: three curves and the optimum (tCDP off-plot here).
    let legend = render::legend_a(&m, &Theme::light(1.0));
    assert_eq!(legend.len(), 4);
    assert_eq!(
        legend[2].2,
        render::Mark::Dashed,
        "classic conversion dashed"
    );
    assert_eq!(render::legend_rows_a(&m), 4);
}

#[test]
fn chart_c_has_four_curves() {
    let d = render::max_order_curves(4.0, 8).unwrap();
    let s = svg(|r| render::draw_max_alpha(r, 4.0, &d, &Theme::light(1.0)).unwrap());
    assert!(s.matches("<polyline").count() >= 4);
    assert!(s.contains("condition (4)") && s.contains("condition (5)") && s.contains("exact"));
    for (_, mo) in &d {
        assert_eq!(mo.min, mo.cond4.min(mo.cond5));
    }
}

#[test]
fn csv_and_sentence() {
    let m = Model::compute(Inputs::mnist()).unwrap();
    let csv = m.csv();
    assert_eq!(csv.lines().count(), 157);
    assert!(!csv.contains("NaN"));
    assert!(m.sentence().contains("14063 steps"));
    // The exported file stands on its own: the run and every headline number up front.
    let full = m.csv_with_header(Some((2.381933, 2.381204)), "poisson");
    let head: Vec<&str> = full.lines().take_while(|l| l.starts_with('#')).collect();
    for key in [
        "sample_rate = 0.0042666",
        "noise_multiplier = 1.1",
        "steps = 14063",
        "delta = 1e-5",
        "batching = poisson",
        "epsilon_rdp = 2.5966",
        "epsilon_pld = 2.381933",
        "bracket [2.381204, 2.381933]",
    ] {
        assert!(
            head.iter().any(|l| l.contains(key)),
            "{key} missing from {head:?}"
        );
    }
    assert!(full.ends_with(&csv));
    assert!(!m.csv_with_header(None, "shuffled").contains("epsilon_pld"));
}

#[test]
fn chart_a_has_the_tcdp_line_and_chart_d_its_four_curves() {
    let mut i = Inputs::mnist();
    (i.q, i.sigma, i.steps, i.omega) = (0.01, 2.0, 100, 16.0);
    let m = Model::compute(i).unwrap();
    let (rho, omega) = m.tcdp.unwrap();
    assert_eq!(omega, 16.0);
    let s = svg(|r| {
        render::draw_eps_vs_alpha(r, &m, &Theme::light(1.0))
            .map(|_| ())
            .unwrap()
    });
    assert!(s.contains("tCDP") && s.contains(&format!("{rho:.3e}")));
    // On MNIST the composed line T·ρα lies above the whole plot: not drawn, so not listed.
    let mut i = Inputs::mnist();
    i.omega = 16.0;
    let m = Model::compute(i).unwrap();
    let s = svg(|r| {
        render::draw_eps_vs_alpha(r, &m, &Theme::light(1.0))
            .map(|_| ())
            .unwrap()
    });
    assert!(m.tcdp.is_some() && !s.contains("tCDP"));
    let d = svg(|r| render::draw_capacity(r, 1.0, 1.0, &Theme::light(1.0)).unwrap());
    assert!(d.matches("<polyline").count() >= 4);
    assert!(d.contains("(lin, Rényi)") && d.contains("eq. 4"));
}

/// The y coordinate of the first SVG text element containing `needle`.
fn text_y(svg: &str, needle: &str) -> f64 {
    let at = svg.find(needle).expect(needle);
    let open = svg[..at].rfind("<text").expect("a <text> element");
    let tag = &svg[open..at];
    let y = tag.split("y=\"").nth(1).expect("a y attribute");
    y[..y.find('"').unwrap()].parse().unwrap()
}

#[test]
fn narrow_charts_put_the_legend_under_the_plot() {
    let m = Model::compute(Inputs::mnist()).unwrap();
    for narrow in [false, true] {
        let mut s = String::new();
        {
            let root = SVGBackend::with_string(&mut s, (360, 420)).into_drawing_area();
            let th = Theme::light(1.0).narrow(narrow);
            render::draw_eps_vs_alpha(&root, &m, &th).unwrap();
        }
        let (legend, axis) = (text_y(&s, "optimum ε"), text_y(&s, ">\norder α\n<"));
        // The x-axis title sits at the plot's bottom edge.
        assert_eq!(
            legend > axis,
            narrow,
            "legend y {legend}, axis title y {axis}"
        );
        assert!(legend < 420.0);
    }
}

#[test]
fn chart_a_zooms_to_where_the_curves_are() {
    // MNIST: ε(α) leaves the top near α ≈ 13; the axis stops a little beyond, past the optimum.
    let m = Model::compute(Inputs::mnist()).unwrap();
    let ((lo, hi), (ylo, yhi)) = render::chart_a_ranges(&m);
    assert_eq!(lo, m.orders[0]);
    assert!(hi < 1024.0 && hi >= 4.0 * m.opt.alpha, "α axis to {hi}");
    assert!(ylo < m.opt.value && m.opt.value < yhi);
    // Every order beyond the axis has all three curves off the top.
    let t = m.inputs.steps as f64;
    for (i, &a) in m.orders.iter().enumerate().filter(|(_, &a)| a > hi) {
        assert!(
            m.rdp[i] * t > yhi && m.eps_improved[i] > yhi && m.eps_classic[i] > yhi,
            "α = {a}"
        );
    }
    // Large σ: the curves stay on the chart to α = 1024, so no zoom.
    let mut i = Inputs::mnist();
    i.sigma = 50.0;
    let m = Model::compute(i).unwrap();
    assert_eq!(render::chart_a_ranges(&m).0 .1, 1024.0);
}

/// Hardening #3: ranges no chart can draw (ratio beyond f64, subnormal ends) used to
/// loop forever in plotters' log key points; each chart now clamps its axes and
/// returns. Run on a thread with a deadline so a regression fails instead of hanging.
#[test]
fn extreme_ranges_are_clamped_not_looped_over() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut i = Inputs::mnist();
        i.q = 1e-155;
        i.sigma = 1.0;
        i.steps = 1;
        let m = Model::compute(i).unwrap();
        let a = svg(|r| {
            render::draw_eps_vs_alpha(r, &m, &Theme::light(1.0))
                .map(|_| ())
                .unwrap()
        });
        let d = svg(|r| render::draw_capacity(r, 1.0, 1e-20, &Theme::light(1.0)).unwrap());
        let _ = tx.send((a.len(), d.len()));
    });
    let (a, d) = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("drawing returned");
    assert!(a > 1000 && d > 1000);
}

/// Hardening #13: a huge ε is stated in words (e^ε overflows f64 beyond 709: the
/// sentence used to say "≈ inf"), and a value just below 1 never reads "1".
#[test]
fn huge_epsilon_and_near_one_values_read_right() {
    let mut i = Inputs::mnist();
    i.q = 0.5;
    i.sigma = 0.01;
    i.steps = 1000;
    let m = Model::compute(i).unwrap();
    assert!(m.opt.value > 709.0);
    let s = m.sentence();
    assert!(
        !s.contains("inf") && s.contains("no meaningful guarantee"),
        "{s}"
    );
    assert_eq!(render::fmt_num(1.0 - 1e-16), "0.9999999999999999");
    assert_eq!(render::fmt_num(0.5), "0.5");
    assert_eq!(render::fmt_num(1.1015437), "1.10154");
}

/// The tight accountant's three charts, from engine data, drawn to SVG.
#[test]
fn tight_charts_draw_from_engine_data() {
    use sgm_rdp::engine::{pld, Conversion, Run, Sgm};
    use sgm_rdp::render::tight::{self, ProfileRow, Training};
    let m = Sgm::new(256.0 / 60000.0, 1.1).unwrap();
    let steps: Vec<u64> = vec![100, 1000, 5000, 14063];
    let b = pld::checkpoints(m, &steps, 1e-5).unwrap();
    let run = Run::with_default_orders(m, 1).unwrap();
    let curve = run.rdp_curve();
    let rdp: Vec<f64> = steps
        .iter()
        .map(|&s| {
            run.with_steps(s)
                .unwrap()
                .epsilon_from_curve(&curve, 1e-5, Conversion::Improved)
                .unwrap()
                .value
        })
        .collect();
    let t = Training {
        steps: steps.iter().map(|&s| s as f64).collect(),
        pld_upper: b.iter().map(|x| x.upper).collect(),
        pld_lower: b.iter().map(|x| x.lower).collect(),
        rdp,
    };
    // 14063 steps = 60 epochs of 234.4 steps; ε = 2 is reached before the end.
    let spent = t.budget_spent(2.0).unwrap();
    assert!(spent > 5000.0 && spent < 14063.0, "{spent}");
    // Above the target from the first checkpoint on: no crossing was computed, none is marked.
    assert!(t.pld_upper[0] < 2.0 && t.pld_upper[0] > 1e-3);
    assert_eq!(t.budget_spent(t.pld_upper[0] * 0.99), None);
    assert_eq!(t.budget_spent(1e3), None, "never reached");
    let svg_t = svg(|r| {
        tight::draw_training(
            r,
            &t,
            Some(2.0),
            Some(14063.0 / 60.0),
            &tight::Labels::default(),
            &Theme::light(1.0),
        )
        .unwrap()
    });
    assert!(svg_t.matches("<polyline").count() >= 2 && svg_t.contains("tight ε (PLD"));
    // #22: ε over training reads between decades (labels at 1, 2, 5 × 10^k on its y axis;
    // the x axis here spans more than four decades of epochs, so its labels are decades).
    // (plotters writes y tick labels right-aligned: three per decade, not one.)
    let decades = (t
        .rdp
        .iter()
        .chain(&t.pld_upper)
        .fold(0.0f64, |a, &b| a.max(b))
        / t.pld_upper.iter().fold(f64::INFINITY, |a, &b| a.min(b)))
    .log10()
    .ceil();
    let y_labels = svg_t.matches("text-anchor=\"end\"").count() as f64;
    assert!(
        y_labels >= 2.0 * decades + 1.0,
        "{y_labels} y labels over {decades} decades"
    );
    let eps = [0.5, 1.0, 2.0, 3.0, 4.0];
    let prof = pld::profile(m, 14063, &eps).unwrap();
    let rows: Vec<ProfileRow> = prof
        .iter()
        .map(|p| ProfileRow {
            epsilon: p.epsilon,
            upper: p.delta.upper,
            lower: p.delta.lower,
            rdp: run
                .with_steps(14063)
                .unwrap()
                .delta(p.epsilon, Conversion::Improved)
                .unwrap()
                .value,
        })
        .collect();
    assert!(
        rows.iter().all(|r| r.upper <= r.rdp * (1.0 + 1e-9)),
        "PLD δ above RDP δ"
    );
    let svg_p = svg(|r| {
        tight::draw_profile(r, &rows, 1e-5, &tight::Labels::default(), &Theme::dark(1.0)).unwrap()
    });
    assert!(svg_p.contains("<polygon") && svg_p.contains("current δ"));
    let curve: Vec<(f64, f64)> = [1e-4, 1e-3, 1e-2, 0.1]
        .iter()
        .map(|&f| (f, pld::attack_tpr(&prof, f).unwrap()))
        .collect();
    let svg_r = svg(|r| {
        tight::draw_risk(
            r,
            &curve,
            &[],
            &tight::Labels::default(),
            &Theme::light(1.0),
        )
        .unwrap()
    });
    assert!(svg_r.contains("random guessing"));
    // An audit's points with their intervals over the certified bound (issue 65).
    let svg_a = svg(|r| {
        let pts = [(1e-3, 0.01, 0.008, 0.012), (1e-2, 0.05, 0.04, 0.06)];
        tight::draw_risk(
            r,
            &curve,
            &pts,
            &tight::Labels::default(),
            &Theme::light(1.0),
        )
        .unwrap()
    });
    assert!(svg_a.contains("audit: empirical TPR, 95 % interval"));
    assert!(svg_a.matches("<circle").count() >= svg_r.matches("<circle").count() + 2);
    // The charts as data (#22): one long CSV, every series, no NaN.
    let csv = tight::charts_csv(&t, &rows, &curve);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "chart,x_name,x,series,value");
    let count = |p: &str| lines.iter().filter(|l| l.starts_with(p)).count();
    assert_eq!(count("training,steps,"), 3 * t.steps.len());
    assert_eq!(count("profile,epsilon,"), 3 * rows.len());
    assert_eq!(count("risk,fpr,"), curve.len());
    assert!(!csv.contains("NaN") && !csv.contains("inf"));
    let nan = Training {
        rdp: vec![0.0; t.steps.len()],
        pld_lower: vec![f64::NAN; t.steps.len()],
        ..t.clone()
    };
    let c2 = tight::charts_csv(&nan, &[], &[]);
    assert_eq!(
        c2.lines().count(),
        1 + t.steps.len(),
        "only the upper series: {c2}"
    );
    // A band (#23, shuffled batches): its lower end is drawn and named, its labels replace
    // the tight accountant's.
    let band = tight::Labels {
        upper: "upper end: no amplification".into(),
        lower: Some("lower end: Chua et al.".into()),
        profile: "shuffled band".into(),
        risk: "bound (no amplification)".into(),
    };
    let low = Training {
        pld_lower: t.pld_lower.iter().map(|x| x / 3.0).collect(),
        ..t.clone()
    };
    let svg_b =
        svg(|r| tight::draw_training(r, &low, None, None, &band, &Theme::light(1.0)).unwrap());
    assert!(
        svg_b.contains("lower end: Chua et al.") && svg_b.contains("upper end: no amplification")
    );
    assert!(!svg_b.contains("tight ε (PLD"));
    assert!(
        !svg_t.contains("lower end"),
        "a bracket's lower end is not drawn"
    );
    let sentence = tight::risk_sentence(0.01, curve[2].1, "the tight accountant");
    assert!(
        sentence.contains("1.0 %") || sentence.contains("1 %"),
        "{sentence}"
    );
    // The TPR bound rounds up, the FPR it holds at down: the sentence stays true.
    assert!(tight::risk_sentence(0.01, 0.04812, "the tight accountant")
        .contains("catches at most 4.9 %"));
    assert!(
        tight::risk_sentence(0.0199, 0.13, "the tight accountant").contains("flags at most 1.9 %")
    );
    assert!(
        tight::risk_sentence(0.01, 0.1201, "the tight accountant").contains("catches at most 13 %")
    );
    assert!(
        tight::risk_sentence(0.01, 0.0012345, "the tight accountant")
            .contains("catches at most 0.12345 %")
    );
    // Readouts (#22): every point drawn reads out its own numbers, named as in the legend,
    // and the drawn mapping puts each point inside the plot.
    let k = 14063.0 / 60.0;
    let labels = tight::Labels::default();
    let tr = tight::training_readouts(&t, Some(k), &labels);
    assert_eq!(tr.len(), t.steps.len());
    let last = tr.last().unwrap();
    let n = t.steps.len() - 1;
    assert_eq!((last.x, last.y), (14063.0 / k, t.pld_upper[n]));
    for want in [
        "after 14063 steps (60 epochs): tight ε (PLD, certified upper bound) = ".to_string(),
        format!("(bracket [{}, ", render::fmt_num_lower(t.pld_lower[n])),
        format!("exact RDP ε = {}", render::fmt_num_up(t.rdp[n])),
    ] {
        assert!(last.text.contains(&want), "{want} not in {}", last.text);
    }
    // A band names its lower end instead of a bracket; without the epochs, steps only.
    let band_text = &tight::training_readouts(&low, None, &band)[0].text;
    assert!(
        band_text.starts_with("after 100 steps: upper end: no amplification = ")
            && band_text.contains("; lower end: Chua et al. = ")
            && !band_text.contains("bracket"),
        "{band_text}"
    );
    let pr = tight::profile_readouts(&rows, &labels);
    assert_eq!(pr.len(), rows.len());
    assert!(
        pr[1]
            .text
            .starts_with("ε = 1: tight δ(ε) (PLD bracket) δ ∈ [")
            && pr[1].text.contains(&render::fmt_num_up(rows[1].upper))
            && pr[1]
                .text
                .contains(&format!("δ ≤ {}", render::fmt_num_up(rows[1].rdp))),
        "{}",
        pr[1].text
    );
    let rr = tight::risk_readouts(&curve, &labels);
    assert_eq!(rr.len(), curve.len());
    assert!(
        rr[2]
            .text
            .starts_with("false-positive rate 0.01: true-positive rate ≤ ")
            && rr[2].text.contains(&render::fmt_num_up(curve[2].1)),
        "{}",
        rr[2].text
    );
    // Not-a-number points (a band without its lower end, a failed δ) read out nothing.
    assert!(tight::training_readouts(&nan, None, &labels)
        .iter()
        .all(|p| !p.text.contains("NaN") && !p.text.contains("bracket")));
    let mut map = None;
    svg(|r| {
        map = Some(tight::draw_training(r, &t, None, Some(k), &labels, &Theme::light(1.0)).unwrap())
    });
    let map = map.unwrap();
    for p in &tr {
        let (x, y) = (map.px_of_x(p.x), map.px_of_y(p.y));
        assert!(
            x >= map.px.0 .0 - 0.5
                && x <= map.px.0 .1 + 0.5
                && y >= map.px.1 .0 - 0.5
                && y <= map.px.1 .1 + 0.5,
            "{} at ({x}, {y}) outside {:?}",
            p.text,
            map.px
        );
    }
    let xs: Vec<f64> = tr.iter().map(|p| p.x).collect();
    assert_eq!(map.nearest(&xs, map.px.0 .1), tr.len() - 1);
}

#[test]
fn every_chart_has_a_text_summary_with_its_numbers() {
    let c = render::max_order_curves(1.1, 6).unwrap();
    let s = render::summary_c(1.1, &c);
    assert!(
        s.contains("σ = 1.1") && s.contains(&render::fmt_num(c[0].1.min)),
        "{s}"
    );
    assert!(s.contains(&render::fmt_num(c[5].1.exact)), "{s}");
    let d = render::summary_d(1.0, 1.0);
    assert!(
        d.contains("at α = 2: Gaussian Rényi DP 1 vs (lin, Rényi) "),
        "{d}"
    );
    use render::tight::{summary_profile, ProfileRow};
    let rows: Vec<ProfileRow> = (1..=10)
        .map(|i| {
            let e = i as f64 / 2.0;
            ProfileRow {
                epsilon: e,
                upper: 10f64.powf(-(e * 2.0)),
                lower: 10f64.powf(-(e * 2.0)) / 2.0,
                rdp: 10f64.powf(-(e * 1.5)),
            }
        })
        .collect();
    let p = summary_profile(&rows, 1e-4);
    // Tight δ ≤ 1e-4 first at ε = 2 (10⁻⁴), above it at 1.5; RDP's first at ε = 3
    // (10^-4.5), above it at 2.5: the crossings are said as grid intervals.
    assert!(
        p.contains(
            "crosses δ = 1e-4 between ε = 1.5 and 2 on this grid, exact RDP's between 2.5 and 3"
        ),
        "{p}"
    );
    assert_eq!(
        summary_profile(&[], 1e-5),
        "Privacy profile: no points yet."
    );
}

/// The profile's δ axis ends a decade below the smallest δ drawn: a band near δ = 0.01 (q =
/// 9.462e-8, σ = 0.341, T = 46,420,413: tight δ 0.0157 → 0.0072, exact RDP's ≈ 0.14, the run's
/// δ 0.0116) gets an axis down to 1e-4, not a flat line on one down to 1e-15; a profile that
/// falls past 1e-15 keeps that floor, and the axis always spans two decades at least.
#[test]
fn the_profile_axis_follows_its_band() {
    use render::tight::{profile_floor, ProfileRow};
    let row = |epsilon, upper: f64, rdp| ProfileRow {
        epsilon,
        upper,
        lower: upper * 0.99,
        rdp,
    };
    let rare = [row(4.5e-4, 0.0157, 0.2), row(0.027, 0.00724, 0.14)];
    assert_eq!(profile_floor(&rare, 0.0116), 1e-4);
    // ε = 0 is not drawn on the log axis, so its δ does not set the floor.
    let mut with_zero = vec![row(0.0, 1e-30, 1e-30)];
    with_zero.extend(rare);
    assert_eq!(profile_floor(&with_zero, 0.0116), 1e-4);
    let steep = [row(0.1, 0.5, 0.9), row(8.0, 3e-9, 1e-6)];
    assert_eq!(profile_floor(&steep, 1e-5), 1e-10);
    assert_eq!(profile_floor(&[row(1.0, 0.0, 1e-40)], 1e-5), 1e-15);
    assert_eq!(profile_floor(&[row(1.0, 0.9, 0.95)], 0.1), 1e-2);
    assert_eq!(profile_floor(&[], 1e-5), 1e-6);
}

/// Chart text is at least 11 px (at scale 1; the page multiplies by devicePixelRatio), in
/// every chart, wide and narrow. plotters' SVG backend writes font-size = size / 1.24 (the
/// page's SVG export undoes that, see web/canvas.rs; the e2e test reads its files).
#[test]
fn chart_text_is_at_least_11px() {
    let m = Model::compute(Inputs::mnist()).unwrap();
    let c = render::max_order_curves(1.1, 8).unwrap();
    for narrow in [false, true] {
        let th = Theme::light(1.0).narrow(narrow);
        let svgs = [
            svg(|r| render::draw_eps_vs_alpha(r, &m, &th).map(|_| ()).unwrap()),
            svg(|r| render::draw_bound_vs_exact(r, &m, &th, true).unwrap()),
            svg(|r| render::draw_max_alpha(r, 1.1, &c, &th).unwrap()),
            svg(|r| render::draw_capacity(r, 1.0, 1.0, &th).unwrap()),
        ];
        for s in svgs {
            let sizes: Vec<f64> = s
                .split("font-size=\"")
                .skip(1)
                .map(|t| t[..t.find('"').unwrap()].parse().unwrap())
                .collect();
            assert!(!sizes.is_empty());
            assert!(sizes.iter().all(|&z| z * 1.24 >= 11.0 - 1e-9), "{sizes:?}");
        }
    }
}

/// The converted ε starts above the plot at small α when ln(1/δ)/(α − 1) is large: its
/// curve is still drawn where it is on the plot (it was dropped whole).
#[test]
fn chart_a_draws_a_curve_that_enters_from_the_top() {
    let mut i = Inputs::mnist();
    (i.q, i.sigma, i.steps) = (0.01, 8.0, 1000);
    let m = Model::compute(i).unwrap();
    let (_, (_, yhi)) = render::chart_a_ranges(&m);
    assert!(
        m.eps_improved[0] > 1.5 * yhi,
        "the case: ε(1.1) above the plot"
    );
    let s = svg(|r| {
        render::draw_eps_vs_alpha(r, &m, &Theme::light(1.0))
            .map(|_| ())
            .unwrap()
    });
    // The improved conversion's colour appears in a polyline (solid curves are polylines).
    let improved = Theme::light(1.0).series[1];
    let hex = format!("#{:02X}{:02X}{:02X}", improved.0, improved.1, improved.2);
    let drawn = s.split("<polyline").skip(1).any(|p| {
        p[..p.find("/>").unwrap_or(p.len())].contains(&hex) && p.matches(',').count() > 10
    });
    assert!(drawn, "improved-conversion curve missing");
}

/// The tight charts' data as the page's worker gets it (#20: the grids are decided in Rust,
/// one call): ε over training at 16 log-spaced checkpoints ending at the run with the
/// headline's bracket, the profile's 60 rows (PLD bracket below exact RDP's δ, each
/// RDP δ the single-ε `Run::delta`), the attack bound the command line's `profile` prints.
#[test]
fn tight_chart_data_is_the_engines() {
    use sgm_rdp::engine::{pld, Conversion, Run, Sgm};
    use sgm_rdp::render::tight;
    let m = Sgm::new(256.0 / 60000.0, 1.1).unwrap();
    let (t, d) = (14063u64, 1e-5);
    let head = pld::epsilon(m, t, d).unwrap().epsilon;
    let c = tight::charts_data(m, t, d, Some((head.upper, head.lower)), tight::Parts::All);
    let tr = c.training.unwrap().unwrap();
    assert_eq!(tr.steps.len(), 16);
    assert_eq!((tr.steps[0], tr.steps[15]), (1.0, t as f64));
    assert!(tr.steps.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        (tr.pld_upper[15], tr.pld_lower[15]),
        (head.upper, head.lower),
        "the run's own bracket is the headline's"
    );
    // Where the checkpoint's own bracket is the tighter (q = 6.214e-7, σ = 0.5486, δ = 0.0077:
    // [0.006726, 0.006747] beside the headline's [0.006686, 0.006751]) the chart still ends at
    // the headline's, so the screen reads one number for the run.
    let (m2, t2, d2) = (Sgm::new(6.214e-7, 0.5486).unwrap(), 69_744_471u64, 0.0077);
    let h2 = pld::epsilon(m2, t2, d2).unwrap().epsilon;
    let c2 = tight::charts_data(
        m2,
        t2,
        d2,
        Some((h2.upper, h2.lower)),
        tight::Parts::Training,
    );
    let tr2 = c2.training.unwrap().unwrap();
    let n = tr2.steps.len() - 1;
    assert_eq!((tr2.pld_upper[n], tr2.pld_lower[n]), (h2.upper, h2.lower));
    for i in 0..16 {
        assert!(tr.pld_lower[i] <= tr.pld_upper[i] && tr.pld_upper[i] <= tr.rdp[i] * (1.0 + 1e-12));
        assert!(
            tr.pld_upper[i] - tr.pld_lower[i] <= 0.01 * tr.pld_upper[i] + 1e-4,
            "{i}"
        );
    }
    let rows = c.profile.unwrap().unwrap();
    assert_eq!(rows.len(), 60);
    assert!((rows[59].epsilon - 2.5 * head.upper).abs() < 1e-9 * head.upper);
    let run = Run::with_default_orders(m, t).unwrap();
    for r in rows.iter().step_by(7) {
        assert!(
            r.lower <= r.upper && r.upper <= r.rdp * (1.0 + 1e-9),
            "{r:?}"
        );
        assert_eq!(
            r.rdp,
            run.delta(r.epsilon, Conversion::Improved).unwrap().value
        );
    }
    let risk = c.risk.unwrap().unwrap();
    assert_eq!(risk.fpr, pld::DEFAULT_FPRS);
    let cli = sgm_rdp::cli::run(
        &[
            "profile",
            "--q",
            &(256.0f64 / 60000.0).to_string(),
            "--sigma",
            "1.1",
            "--steps",
            "14063",
            "--json",
        ]
        .map(String::from),
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&cli).unwrap();
    // The chart's bounds are the engine's: read from the profile the risk shares with the
    // profile chart (one composition, `pld::profile_and_attack`) — and certified upper bounds
    // of the same TPR as the command line's, whose attack profile is its own call: the two
    // agree to 1e-4 of themselves (MNIST: 5e-6).
    let eps: Vec<f64> = rows.iter().map(|r| r.epsilon).collect();
    let (_, shared) = pld::profile_and_attack(m, t, &eps);
    let shared = shared.unwrap();
    for (i, a) in v["attack"].as_array().unwrap().iter().enumerate() {
        let f = risk.fpr[i];
        assert_eq!(risk.tpr[i], pld::attack_tpr(&shared, f).unwrap(), "FPR {f}");
        let cli = a["tpr_max"].as_f64().unwrap();
        assert!(
            (risk.tpr[i] - cli).abs() <= 1e-4 * cli,
            "FPR {f}: {} against {cli}",
            risk.tpr[i]
        );
    }
    assert_eq!(risk.curve.len(), 60);
    assert!(risk.curve.windows(2).all(|w| w[0].1 <= w[1].1 + 1e-15));
    // The two halves the worker computes side by side are the whole's.
    let a = tight::charts_data(
        m,
        t,
        d,
        Some((head.upper, head.lower)),
        tight::Parts::Training,
    );
    let b = tight::charts_data(
        m,
        t,
        d,
        Some((head.upper, head.lower)),
        tight::Parts::ProfileRisk,
    );
    assert!(a.profile.is_none() && a.risk.is_none() && b.training.is_none());
    assert_eq!(a.training.unwrap().unwrap(), tr);
    assert_eq!(b.profile.unwrap().unwrap(), rows);
    assert_eq!(b.risk.unwrap().unwrap(), risk);
    // MNIST's profile and attack profile are read from one composition: the risk is not asked
    // before the headline, and the profile part brings the risk read with it.
    assert!(!tight::risk_first(m, t, d));
    let p = tight::charts_data(
        m,
        t,
        d,
        Some((head.upper, head.lower)),
        tight::Parts::Profile,
    );
    assert!(p.training.is_none());
    assert_eq!(p.profile.unwrap().unwrap(), rows);
    assert_eq!(p.risk.unwrap().unwrap(), risk);
}

/// The risk chart asked before the headline (`Parts::Risk`) and the profile after it
/// (`Parts::Profile`) are the profile-risk half's charts to the bit, where the two are read
/// apart (q = 1e-3, σ = 0.8, T = 1000: the profile's top 0.76, the attack profile's 3.9); and
/// `risk_first` says so from exact RDP before any tight solve.
#[test]
fn the_risk_asked_first_is_the_profile_risk_halfs() {
    use sgm_rdp::engine::{pld, Sgm};
    use sgm_rdp::render::tight;
    let (m, t, d) = (Sgm::new(1e-3, 0.8).unwrap(), 1000u64, 1e-5);
    assert!(tight::risk_first(m, t, d));
    let head = pld::epsilon(m, t, d).unwrap().epsilon;
    let run = Some((head.upper, head.lower));
    let whole = tight::charts_data(m, t, d, run, tight::Parts::ProfileRisk);
    let first = tight::charts_data(m, t, d, None, tight::Parts::Risk);
    let after = tight::charts_data(m, t, d, run, tight::Parts::Profile);
    assert!(first.training.is_none() && first.profile.is_none());
    assert!(after.training.is_none() && after.risk.is_none());
    assert_eq!(first.risk.unwrap().unwrap(), whole.risk.unwrap().unwrap());
    assert_eq!(
        after.profile.unwrap().unwrap(),
        whole.profile.unwrap().unwrap()
    );
}

/// ε over training where the tight ε is 0 at every checkpoint but the last (q = 9.462e-8,
/// σ = 0.341, T = 46,420,413, δ = 0.0116: δ(0) ≤ δ until ~1.4·10⁷ steps): the one positive
/// point has no line to sit on, so it is a dot, and the checkpoints at 0 — off the log axis —
/// are named in the legend. With two positive points the line carries them: no dot.
#[test]
fn a_lone_tight_point_is_drawn_and_the_zero_checkpoints_named() {
    use sgm_rdp::render::tight::{self, Training};
    let t = Training {
        steps: vec![1.0, 1.4e5, 1.4e7, 4.6e7],
        pld_upper: vec![0.0, 0.0, 0.0, 0.0108],
        pld_lower: vec![0.0, 0.0, 0.0, 0.0107],
        rdp: vec![0.58, 0.79, 0.97, 1.04],
    };
    let draw = |t: &Training| {
        svg(|r| {
            tight::draw_training(
                r,
                t,
                None,
                None,
                &tight::Labels::default(),
                &Theme::light(1.0),
            )
            .unwrap()
        })
    };
    let s = draw(&t);
    // One dot on the chart, one in the legend (the zero checkpoints' entry).
    assert_eq!(s.matches("<circle").count(), 2, "{s}");
    assert!(s.contains("certified ε = 0 up to 1.4e7 steps"), "{s}");
    let two = Training {
        pld_upper: vec![0.0, 0.0, 0.0052, 0.0108],
        ..t
    };
    let s2 = draw(&two);
    assert_eq!(s2.matches("<circle").count(), 1, "the legend's only");
    assert!(s2.contains("certified ε = 0 up to 140000 steps"), "{s2}");
}

/// The x tick label on the axis's last point sits inside the chart: at T = 10⁵ "100000" read
/// "10000" on the page, its last digit cut off by the right margin.
#[test]
fn the_last_x_tick_label_is_whole() {
    use sgm_rdp::engine::{pld, Sgm};
    use sgm_rdp::render::tight::{self, Training};
    let m = Sgm::new(0.01, 1.1).unwrap();
    let steps: Vec<u64> = vec![3, 100, 10_000, 100_000];
    let b = pld::checkpoints(m, &steps, 1e-5).unwrap();
    let t = Training {
        steps: steps.iter().map(|&s| s as f64).collect(),
        pld_upper: b.iter().map(|x| x.upper).collect(),
        pld_lower: b.iter().map(|x| x.lower).collect(),
        rdp: b.iter().map(|x| 1.2 * x.upper).collect(),
    };
    for width in [900u32, 360] {
        let mut s = String::new();
        {
            let root = SVGBackend::with_string(&mut s, (width, 420)).into_drawing_area();
            let th = Theme::light(1.0).narrow(width < 500);
            tight::draw_training(&root, &t, None, None, &tight::Labels::default(), &th).unwrap();
        }
        let at = s.find(">\n100000\n<").expect("the tick label 100000");
        let open = s[..at].rfind("<text").unwrap();
        let tag = &s[open..at];
        let attr = |name: &str| -> f64 {
            let v = tag.split(&format!("{name}=\"")).nth(1).expect(name);
            v[..v.find('"').unwrap()].parse().unwrap()
        };
        // Centred on its tick (text-anchor middle), ~0.6 em a digit.
        assert!(tag.contains("text-anchor=\"middle\""), "{tag}");
        let half = 0.5 * 6.0 * 0.6 * attr("font-size");
        assert!(
            attr("x") + half <= width as f64,
            "width {width}: x {} + {half} is past the edge",
            attr("x")
        );
    }
}

/// A short δ axis is labelled every few decades, not every decade (issue 61 #6: on a 390 px
/// phone the profile's fourteen decades overlapped in ~100 px): on a 390 × 200 chart no two
/// y labels are closer than 14 px; on the 900 × 560 chart every decade keeps its label.
#[test]
fn a_short_log_axis_thins_its_labels() {
    use render::tight::{self, ProfileRow};
    let rows: Vec<ProfileRow> = (0..=20)
        .map(|i| {
            let e = i as f64 * 0.25;
            let d = 10f64.powf(-0.5 - 2.8 * e);
            ProfileRow {
                epsilon: e,
                upper: d,
                lower: d * 0.9,
                rdp: d * 3.0,
            }
        })
        .collect();
    let draw = |w: u32, h: u32| {
        let mut s = String::new();
        {
            let root = SVGBackend::with_string(&mut s, (w, h)).into_drawing_area();
            tight::draw_profile(
                &root,
                &rows,
                1e-5,
                &tight::Labels::default(),
                &Theme::light(1.0),
            )
            .unwrap();
        }
        s
    };
    // The y labels: right-anchored texts whose content is a power of ten ("1e-7", "0.01", "1").
    let ys = |s: &str| -> Vec<f64> {
        s.split("<text")
            .skip(1)
            .filter(|t| t.contains("text-anchor=\"end\""))
            .filter_map(|t| {
                let y = t
                    .split("y=\"")
                    .nth(1)?
                    .split('"')
                    .next()?
                    .parse::<f64>()
                    .ok()?;
                let body = t.split('>').nth(1)?.split('<').next()?.trim();
                body.parse::<f64>().ok().filter(|v| *v > 0.0).map(|_| y)
            })
            .collect()
    };
    let mut small = ys(&draw(390, 200));
    small.sort_by(f64::total_cmp);
    assert!(small.len() >= 3, "{small:?}");
    for w in small.windows(2) {
        assert!(
            w[1] - w[0] >= 14.0,
            "labels {} px apart: {small:?}",
            w[1] - w[0]
        );
    }
    let large = ys(&draw(900, 560));
    assert!(
        large.len() > small.len(),
        "{} vs {}",
        large.len(),
        small.len()
    );
}
