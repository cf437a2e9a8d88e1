//! Coverage of the tight accountant over realistic runs, long runs and small rates: the
//! issue's grid (q ∈ {1e-6 … 1}, σ ∈ {0.6, 1, 3, 10}, T ∈ {10², 10⁴, 10⁶, 10⁸}, δ = 1e-5)
//! and its second, finer grid of large-dataset runs,
//! independent references for long runs (Google's dp_accounting on fine grids, generated
//! by tests/reference/pld_long.py), δ down to 1e-15 and T = 10⁹.
#![cfg(not(target_arch = "wasm32"))]

use sgm_rdp::engine::error::Refusal;
use sgm_rdp::engine::{pld, Conversion, Error, Run, Sgm};

fn sgm(q: f64, s: f64) -> Sgm {
    Sgm::new(q, s).unwrap()
}

fn rdp_eps(q: f64, s: f64, t: u64, d: f64) -> f64 {
    Run::with_default_orders(sgm(q, s), t)
        .unwrap()
        .epsilon(d, Conversion::Improved)
        .unwrap()
        .value
}

/// Φ̄(z), the standard normal's upper tail.
fn phi_bar(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// One step's exact remove-pair profile from Gaussian tails: δ(ε) = P(L > ε) − e^ε·Q(L > ε),
/// L > ε where the sample x exceeds ½ + σ²·ln((e^ε − (1 − q))/q).
fn one_step_remove_delta(q: f64, s: f64, e: f64) -> f64 {
    let x = 0.5 + s * s * ((e.exp() - (1.0 - q)) / q).ln();
    (1.0 - q) * phi_bar(x / s) + q * phi_bar((x - 1.0) / s) - e.exp() * phi_bar(x / s)
}

/// The width rule of the issue: ≤ 0.1 % of ε, or ≤ 1e-4 absolute where ε < 0.1.
/// The count statistic's certified floors (tests/reference/count_statistic.py).
const COUNT_STATISTIC: &str = include_str!("../reference/count_statistic.jsonl");

/// A reference file's lines: the run (q, σ, T, δ) and the line.
fn reference_lines(text: &str) -> Vec<((f64, f64, u64, f64), serde_json::Value)> {
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let f = |k: &str| v[k].as_f64().unwrap();
            let t = v["steps"].as_u64().unwrap();
            ((f("q"), f("sigma"), t, f("delta")), v)
        })
        .collect()
}

/// A reference file's runs: (q, σ, T, δ, the value under `key`).
fn reference_rows(text: &str, key: &str) -> Vec<(f64, f64, u64, f64, f64)> {
    (reference_lines(text).into_iter())
        .map(|((q, s, t, d), v)| (q, s, t, d, v[key].as_f64().unwrap()))
        .collect()
}

/// The numbers of a line's list under `key`.
fn floats(v: &serde_json::Value, key: &str) -> Vec<f64> {
    (v[key].as_array().unwrap().iter())
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn tight_enough(b: &pld::Bracket) -> bool {
    let w = b.upper - b.lower;
    w <= 1e-3 * b.upper || (b.upper < 0.1 && w <= 1e-4)
}

/// An answer at δ = 1e-5 is a bracket below exact RDP's ε, never wider than the accepted
/// maximum (1 %, or 1e-4 absolute).
fn check_answer(q: f64, s: f64, t: u64, b: &pld::Bracket) {
    let rdp = rdp_eps(q, s, t, 1e-5);
    assert!(
        0.0 <= b.lower && b.lower <= b.upper && b.upper <= rdp * (1.0 + 1e-12),
        "q={q} s={s} T={t}: [{}, {}] vs exact RDP {rdp}",
        b.lower,
        b.upper
    );
    assert!(
        b.upper - b.lower <= 0.01 * b.upper + 1e-12 || b.upper - b.lower <= 1e-4,
        "q={q} s={s} T={t}: [{}, {}]",
        b.lower,
        b.upper
    );
}

type Solved = (f64, f64, u64, Result<pld::Bracket, Error>);

/// ε at δ = 1e-5 for every run, on two threads (the machine has two cores); each run is
/// bounded by the work budget.
fn solve_all(runs: &[(f64, f64, u64)]) -> Vec<Solved> {
    let (a, b) = runs.split_at(runs.len() / 2);
    let work = |part: &[(f64, f64, u64)]| -> Vec<Solved> {
        part.iter()
            .map(|&(q, s, t)| (q, s, t, pld::epsilon(sgm(q, s), t, 1e-5).map(|a| a.epsilon)))
            .collect()
    };
    let (mut ra, rb) = std::thread::scope(|sc| {
        let h = sc.spawn(|| work(a));
        let rb = work(b);
        (h.join().unwrap(), rb)
    });
    ra.extend(rb);
    ra
}

/// The issue's second, finer grid of large-dataset runs — q ∈ {1e-5, 1e-4, 1e-3},
/// σ ∈ {0.5, 0.75, 1, 1.25, 1.5, 2}, T ∈ {10⁴, 10⁵, 10⁶}, δ = 1e-5 — where 26 of 54 refused
/// when the issue was filed. Measured 2026-11-26: all 54 answer (51 before small q got
/// two-resolution lattices), all 54 within the width rule.
#[test]
fn the_second_grid_answers_certified_brackets() {
    let mut runs = Vec::new();
    for q in [1e-5, 1e-4, 1e-3] {
        for s in [0.5, 0.75, 1.0, 1.25, 1.5, 2.0] {
            for t in [10_000u64, 100_000, 1_000_000] {
                runs.push((q, s, t));
            }
        }
    }
    let mut loose = Vec::new();
    for (q, s, t, r) in solve_all(&runs) {
        match r {
            Ok(b) => {
                check_answer(q, s, t, &b);
                if !tight_enough(&b) {
                    loose.push((q, s, t, b.lower, b.upper));
                }
            }
            Err(e) => panic!("q={q} s={s} T={t} must answer: {e}"),
        }
    }
    eprintln!("second grid: all 54 answered; wider than the rule: {loose:?}");
    // Measured: none (three at σ = 0.5 before a composed tail kept its own spacing when the
    // ladder coarsens the core; 0.22 %, 0.57 % and 0.15 % wide).
    assert!(loose.is_empty(), "wider than the rule: {loose:?}");
}

#[test]
fn the_issue_grid_answers_certified_brackets() {
    let qs = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0];
    let ss = [0.6, 1.0, 3.0, 10.0];
    let ts = [100u64, 10_000, 1_000_000, 100_000_000];
    let mut runs: Vec<(f64, f64, u64)> = Vec::new();
    for &q in &qs {
        for &s in &ss {
            for &t in &ts {
                runs.push((q, s, t));
            }
        }
    }
    let (mut answered, mut tight) = (0, 0);
    let mut missing = Vec::new();
    let mut loose = Vec::new();
    for (q, s, t, r) in solve_all(&runs) {
        match r {
            Ok(b) => {
                answered += 1;
                check_answer(q, s, t, &b);
                if tight_enough(&b) {
                    tight += 1;
                } else {
                    loose.push((q, s, t, b.lower, b.upper));
                }
            }
            Err(Error::PldBudget { reason }) => missing.push((q, s, t, reason)),
            Err(e) => panic!("q={q} s={s} T={t}: unexpected error {e}"),
        }
    }
    // Measured on this engine (2026-11-26): all 112 answer, all within the 0.1 % rule (110 and
    // 103 before the FFT's rounding bound lost its ‖·‖₁ terms and early levels' tallest points
    // were convolved directly; 108 and 102 before the add direction was read from the remove
    // lattices, reversed; 106 and 99 before small q got two-resolution lattices). The last to
    // come in, q = 1e-6, σ = 0.6, T = 10⁸, is within the rule by a refinement aimed by the
    // measured order of the width in Δ; one run is allowed to slip past the rule (not the
    // answer) should a rounding difference move that aim.
    eprintln!("answered {answered} of 112, {tight} within the width rule; missing {missing:?}");
    eprintln!("wider than the rule (q, sigma, T, lower, upper): {loose:?}");
    // One run lies beyond the domain the accountant is built for (exact RDP's ε above 10³):
    // q = 0.1, σ = 0.6, T = 10⁸, ε ≈ 3.2·10⁶. It answered with rustfft's FFT and the
    // platform's libm and is refused with ours and libm's (src/engine/math.rs: the same bits
    // on every surface); it may refuse, by saying it is beyond the domain, and nothing else may.
    let beyond_domain = |r: &Refusal| *r == Refusal::BeyondDomain;
    assert!(
        answered >= 111
            && missing
                .iter()
                .all(|m| beyond_domain(&m.3) && m.0 == 0.1 && m.1 == 0.6),
        "only {answered} of 112 answered: {missing:?}"
    );
    assert!(
        tight >= 111,
        "only {tight} within the width rule: {loose:?}"
    );
}

#[test]
fn long_runs_agree_with_dp_accounting_on_fine_grids() {
    let mut n = 0;
    for ((q, s, t, d), v) in reference_lines(include_str!("../reference/pld_long.jsonl")) {
        let f = |k: &str| v[k].as_f64().unwrap();
        let (finest, ex) = (f("eps_finest"), f("eps_extrapolated"));
        let eps = floats(&v, "epsilons");
        let step = eps[eps.len() - 2] - eps[eps.len() - 1];
        let b = pld::epsilon(sgm(q, s), t, d)
            .unwrap_or_else(|e| panic!("q={q} s={s} T={t} delta={d}: {e}"))
            .epsilon;
        assert!(
            b.lower <= finest,
            "q={q} s={s} T={t}: our lower {} above dp_accounting's upper bound {finest}",
            b.lower
        );
        assert!(
            b.upper >= ex - step.abs() - 1e-9,
            "q={q} s={s} T={t}: our upper {} below the extrapolated truth {ex} (± {step})",
            b.upper
        );
        // And tighter than the RDP answer these runs are about.
        assert!(b.upper < rdp_eps(q, s, t, d));
        n += 1;
    }
    assert!(n >= 3, "the reference file holds {n} runs");
}

/// δ down to 1e-15 and T up to 10⁹ answer, nest as they must (a smaller δ or a longer
/// run cannot have a smaller ε), and stay below exact RDP.
#[test]
fn tiny_delta_and_a_billion_steps() {
    let m = sgm(256.0 / 60000.0, 1.1);
    let mut last = 0.0;
    for d in [1e-5, 1e-8, 1e-12, 1e-15] {
        let b = pld::epsilon(m, 14063, d).unwrap().epsilon;
        assert!(b.upper >= last && tight_enough(&b), "delta {d}: {b:?}");
        assert!(b.upper <= rdp_eps(256.0 / 60000.0, 1.1, 14063, d));
        last = b.lower;
    }
    let b = pld::epsilon(sgm(1e-4, 2.0), 1_000_000_000, 1e-5)
        .unwrap()
        .epsilon;
    assert!(b.upper - b.lower <= 0.01 * b.upper, "{b:?}");
    assert!(b.upper < rdp_eps(1e-4, 2.0, 1_000_000_000, 1e-5));
    let shorter = pld::epsilon(sgm(1e-4, 2.0), 100_000_000, 1e-5)
        .unwrap()
        .epsilon;
    assert!(shorter.lower <= b.upper);
}

/// In the new regimes the brackets are consistent with monotonicity: more steps, a
/// higher rate or less noise never has a certified upper bound below the other run's
/// certified lower bound.
#[test]
fn brackets_stay_monotone_for_small_rates_and_long_runs() {
    let e = |q: f64, s: f64, t: u64| pld::epsilon(sgm(q, s), t, 1e-5).unwrap().epsilon;
    for (q, s) in [(1e-4, 1.0), (1e-3, 1.0), (1e-4, 3.0)] {
        let mut prev: Option<pld::Bracket> = None;
        for t in [10_000u64, 100_000, 1_000_000, 10_000_000] {
            let b = e(q, s, t);
            if let Some(p) = prev {
                assert!(p.lower <= b.upper, "q={q} s={s} T={t}: {p:?} then {b:?}");
            }
            prev = Some(b);
        }
    }
    let (lo_q, hi_q) = (e(1e-4, 1.0, 1_000_000), e(2e-4, 1.0, 1_000_000));
    assert!(lo_q.lower <= hi_q.upper);
    let (more_noise, less_noise) = (e(1e-4, 1.2, 1_000_000), e(1e-4, 1.0, 1_000_000));
    assert!(more_noise.lower <= less_noise.upper);
}

/// Without subsampling the closed form answers at any length, inside the mpmath-free
/// but exact Gaussian formula's rounding: δ at the returned ε is δ.
#[test]
fn q_one_is_the_gaussian_mechanism_in_closed_form() {
    for (s, t) in [(1.1, 60u64), (1.0, 100_000_000), (10.0, 1_000_000_000)] {
        let b = pld::epsilon(sgm(1.0, s), t, 1e-5).unwrap().epsilon;
        assert!(b.upper - b.lower <= 1e-9 * b.upper, "{b:?}");
        let d = pld::delta(sgm(1.0, s), t, b.upper).unwrap().delta;
        assert!(
            d.upper <= 1e-5 * (1.0 + 1e-6) && d.upper >= 1e-5 * (1.0 - 1e-6),
            "{d:?}"
        );
    }
}

/// Tiny rates over long runs against the central limit of the composed loss (Dong, Roth, Su,
/// "Gaussian Differential Privacy", JRSS-B 2022, Thm. 5: T steps of the SGM with q√T → ν
/// are μ-GDP with μ = ν·√(e^{1/σ²} − 1)), a closed form independent of our lattices: where
/// the tight accountant answers, its bracket must hold the limit's ε (to the limit's own
/// accuracy at these q√T, 2 % or 2e-6; for σ ≤ 1 the per-step loss's heavy tail makes the
/// limit itself a few % off, so the runs here have q√T ≤ 1e-3 or σ ≥ 2). The runs it refuses
/// stay refused rather than answered wrongly: q = 1e-9, σ = 1, T = 10⁹ once answered [0, 0]
/// under an experimental re-tilt (2026-11-26, not kept), where δ(0) of the limit is 1.65e-5.
/// ε at δ of μ-GDP (Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022,
/// Cor. 2.13), by bisection on its closed-form δ(ε).
fn gdp_eps(mu: f64, delta: f64) -> f64 {
    fn phi(x: f64) -> f64 {
        0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
    }
    let f = |e: f64| phi(-e / mu + mu / 2.0) - e.exp() * phi(-e / mu - mu / 2.0);
    if f(0.0) <= delta {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0, 50.0);
    for _ in 0..200 {
        let m = 0.5 * (lo + hi);
        if f(m) > delta {
            lo = m;
        } else {
            hi = m;
        }
    }
    hi
}

/// The central limit's ε at δ: μ-GDP with μ = q·√(T·(e^{1/σ²} − 1)).
fn limit_eps(q: f64, s: f64, t: u64, d: f64) -> f64 {
    gdp_eps(q * (t as f64 * ((1.0 / (s * s)).exp() - 1.0)).sqrt(), d)
}

/// Where the composed loss is tiny (q ≤ 1e-6 with σ ≥ 100, or a few steps of q ~ 1e-9), the
/// lattices cannot resolve a step's losses, but Bernstein's inequality on the loss's first
/// two moments (`pld::bernstein`) bounds ε far inside the absolute rule: these runs answer
/// [0, bound] with the bound ≤ 2e-5. Checked against references that share no code with it:
/// for one step, the exact profile δ(ε) = P(L > ε) − e^ε·Q(L > ε) (Gaussian tails) must be
/// ≤ δ at the bound; for 10⁸ steps the bound must sit above the central limit's ε (the truth
/// to ~1 % there). Each run once refused ("too wide for the largest FFT" or "no tilt
/// brought the answer inside the FFT window"; a domain sweep, 2026-11-26).
#[test]
fn tiny_losses_answer_with_bernstein_bound() {
    for (q, s, t, d) in [
        (1.15e-7, 642.0, 129_672_271u64, 2.7e-15),
        (2.17e-9, 90.9, 1, 3.9e-15),
        (3e-9, 20.0, 1, 1e-12),
        (9.67e-9, 47.8, 1258, 9.4e-15),
        (1.63e-9, 6.93, 6141, 4.3e-13),
    ] {
        let b = pld::epsilon(sgm(q, s), t, d)
            .unwrap_or_else(|e| panic!("q={q} s={s} T={t} delta={d}: {e}"))
            .epsilon;
        assert!(
            b.lower == 0.0 && b.upper <= 2e-5,
            "q={q} s={s} T={t}: {b:?}"
        );
        if t == 1 {
            let e = b.upper;
            let rem = one_step_remove_delta(q, s, e);
            assert!(
                rem <= d * (1.0 + 1e-9),
                "q={q} s={s}: δ({e:e}) = {rem:e} > {d:e}"
            );
            if e < -(-q).ln_1p() {
                // The add pair's loss −L(x) exceeds ε where L(x) < −ε, x ∼ N(0, σ²).
                let xa = 0.5 + s * s * (((-e).exp() - (1.0 - q)) / q).ln();
                let p = 1.0 - phi_bar(xa / s);
                let qq = (1.0 - q) * (1.0 - phi_bar(xa / s)) + q * (1.0 - phi_bar((xa - 1.0) / s));
                let add = p - e.exp() * qq;
                assert!(
                    add <= d * (1.0 + 1e-9),
                    "q={q} s={s}: add δ({e:e}) = {add:e} > {d:e}"
                );
            }
        } else if t >= 100_000_000 {
            let limit = limit_eps(q, s, t, d);
            assert!(
                b.upper >= 0.99 * limit,
                "q={q} s={s} T={t}: {b:?} below the limit {limit:e}"
            );
        }
    }
}

/// A few steps at tiny q and tiny δ: the answer lies far out in one step's coarse tail, and
/// reading the composition on the fine lattice asked for 7.7·10⁷ points (0.75 GB) and was
/// refused (q = 6.5e-8, σ = 0.43, T = 4, δ = 2.37e-14, a 300-draw sweep, 2026-11-26); it is now
/// read on the tail's lattice. T = 1 against the exact one-step profile from Gaussian tails,
/// δ(ε) = P(L > ε) − e^ε·Q(L > ε) — above δ at the lower end, at most δ at the upper end —
/// and longer runs in order.
#[test]
fn few_steps_far_in_the_tail() {
    let (q, s, d) = (6.492e-8, 0.4346, 2.37e-14);
    let exact = |e: f64| one_step_remove_delta(q, s, e);
    let mut last = pld::Bracket {
        upper: 0.0,
        lower: 0.0,
    };
    for t in [1u64, 2, 4, 16] {
        let b = pld::epsilon(sgm(q, s), t, d)
            .unwrap_or_else(|e| panic!("T={t}: {e}"))
            .epsilon;
        assert!(
            tight_enough(&b) && b.upper <= rdp_eps(q, s, t, d),
            "T={t}: {b:?}"
        );
        assert!(
            b.upper >= last.lower && b.lower >= last.lower,
            "T={t}: {b:?} after {last:?}"
        );
        if t == 1 {
            assert!(
                exact(b.upper) <= d * (1.0 + 1e-6),
                "δ({}) = {:e}",
                b.upper,
                exact(b.upper)
            );
            assert!(
                exact(b.lower) >= d * (1.0 - 1e-6),
                "δ({}) = {:e}",
                b.lower,
                exact(b.lower)
            );
        }
        last = b;
    }
}

/// Where the lattices give up but Bernstein's bound is itself within the absolute rule
/// (≤ 1e-4), it is the answer: q = 9.5e-7, σ = 88.9, T = 91, δ = 1.4e-15 was refused ("no tilt
/// brought the answer inside the FFT window"). The bound must stay above one step's exact ε
/// (ε grows with T; the one-step profile from Gaussian tails, by bisection).
#[test]
fn bernstein_answers_where_the_lattices_give_up() {
    let (q, s, t, d) = (9.482e-7, 88.9, 91u64, 1.39e-15);
    let b = pld::epsilon(sgm(q, s), t, d).unwrap().epsilon;
    assert!(b.lower == 0.0 && b.upper <= 1e-4, "{b:?}");
    let exact = |e: f64| one_step_remove_delta(q, s, e);
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..200 {
        let m = 0.5 * (lo + hi);
        if exact(m) > d {
            lo = m;
        } else {
            hi = m;
        }
    }
    assert!(b.upper >= hi, "{b:?} below one step's ε {hi:e}");
}

/// Tiny q with large σ over millions of steps: exact RDP (orders capped at 1024) sits 20–1000×
/// above the answer, and the lattices' tilt, aimed there, ran away to its cap ("too wide for
/// the largest FFT": eight draws of the domain sweep below, 2026-11-26). The grid is now
/// steered by the tighter of RDP and Bernstein's bound. Each bracket must hold the central
/// limit's ε (μ-GDP with μ = q·√(T(e^{1/σ²} − 1)), a closed form sharing no code with the
/// lattices; the truth to ~1 % at these T) within the slack of the test below, and meet the
/// width rule.
#[test]
fn tiny_q_large_sigma_runs_answer_near_the_gaussian_limit() {
    for (q, s, t, d) in [
        (2.296e-9, 9.494, 285_321_979u64, 1.5e-8),
        (1.718e-6, 495.309, 56_005_068, 3.4e-14),
        (2.703e-7, 2.011, 24_026_701, 4.2e-15),
        (2.140e-7, 37.943, 386_836_755, 2.0e-10),
        (2.566e-7, 19.838, 44_995_716, 1.4e-12),
        (1.839e-6, 20.521, 14_036_780, 1.4e-14),
        (1.840e-6, 230.321, 6_356_167, 1.3e-15),
        (9.722e-6, 149.588, 3_072_953, 3.4e-14),
        (7.835e-7, 61.608, 343_431_229, 3.6e-12),
    ] {
        let b = pld::epsilon(sgm(q, s), t, d)
            .unwrap_or_else(|e| panic!("q={q} s={s} T={t} delta={d}: {e}"))
            .epsilon;
        let limit = limit_eps(q, s, t, d);
        let slack = 0.02 * limit + 2e-6;
        assert!(
            b.lower <= limit + slack && b.upper >= limit - slack,
            "q={q} s={s} T={t} delta={d}: {b:?} against the limit {limit:e}"
        );
        assert!(tight_enough(&b), "q={q} s={s} T={t} delta={d}: {b:?}");
        assert!(b.upper <= rdp_eps(q, s, t, d), "{b:?}");
    }
}

/// Tiny q over very many steps at moderate σ: a step's losses (std ~2e-9) are far below the
/// finest lattice spacing the rounding allows (1e-17·T), and the lattices find no lower end
/// above 0. The linear statistic Σx_i (a Gaussian mixture pair in closed form, a
/// post-processing: `engine::pld::linear`) gives one; these two runs were refused without it.
/// Its lower end must sit below the central limit's ε (μ-GDP, close to the truth here) and the
/// upper end above it.
#[test]
fn tiny_q_runs_get_a_lower_end_from_a_linear_statistic() {
    for (q, s, t, d) in [
        (2e-9, 1.232, 500_000_000u64, 8e-8),
        (1.814e-9, 1.232, 551_267_916, 8e-8),
    ] {
        let b = pld::epsilon(sgm(q, s), t, d)
            .unwrap_or_else(|e| panic!("q={q} s={s} T={t} delta={d}: {e}"))
            .epsilon;
        let limit = limit_eps(q, s, t, d);
        assert!(
            b.lower > 0.5 * limit && b.lower <= 1.02 * limit && b.upper >= 0.98 * limit,
            "q={q} s={s} T={t} delta={d}: {b:?} against the limit {limit:e}"
        );
        assert!(tight_enough(&b), "q={q} s={s} T={t} delta={d}: {b:?}");
    }
}

/// Where one rare large loss decides δ (q ≈ 4e-7, σ ≈ 0.6, δ ≈ 7e-14: an x five deviations
/// out, whose loss no exponential tilt can center), the brackets contain an independent
/// estimate: one jump plus a Gaussian remainder, by mpmath quadrature
/// (tests/reference/one_jump.py), to 2e-5 of ε — and meet the width rule. Two of these
/// were refused by the domain sweep (2026-11-26): the floor of the ladder's FFTs and its
/// lower cuts were shares of the tilted moment, where δ was a 3e-13 share of it. The last two
/// (less than one sampled step over the run: q ≈ 1.4e-9, σ ≈ 0.33–0.35, T = 3.6–6.5·10⁶) were
/// refused until the big steps past ε were summed in closed form (H(ε − ℓ) had been read as 1
/// for ℓ ≥ ε + 1, [0.4378, 0.6632]) and, for the second, the cube-root rule's smaller small
/// pair was tried where the square-root rule's spent the call (`engine::pld::jumps`).
#[test]
fn one_rare_loss_runs_agree_with_a_one_jump_reference() {
    let rows = reference_rows(include_str!("../reference/one_jump.jsonl"), "epsilon");
    let mut n = 0;
    for (q, s, t, d, reference) in rows {
        let b = pld::epsilon(sgm(q, s), t, d)
            .unwrap_or_else(|e| panic!("q={q} s={s} T={t} delta={d}: {e}"))
            .epsilon;
        assert!(
            b.lower <= reference * (1.0 + 2e-5) && reference <= b.upper * (1.0 + 2e-5),
            "q={q} s={s} T={t}: {b:?} against the one-jump estimate {reference}"
        );
        assert!(b.upper <= rdp_eps(q, s, t, d), "q={q} s={s} T={t}: {b:?}");
        assert!(tight_enough(&b), "q={q} s={s} T={t}: {b:?}");
        n += 1;
    }
    assert!(n >= 3, "the reference file holds {n} runs");
}

/// The two draws of the 300-draw domain sweep that the lattices refused (2026-11-26): tiny q at
/// σ ≈ 0.4–0.5 over 10⁸ steps, where a few steps with a large loss decide ε and exact RDP is
/// 40–80× too loose. They answer now, from those losses in closed form and the small ones on the
/// lattices (`engine::pld::jumps`), within the width rule and below exact RDP, and their upper
/// ends sit above an independent certified lower end: the binomial count of large samples,
/// exact sums in mpmath (tests/reference/count_statistic.py). The file also holds a corner draw
/// refused until the term with two big steps was read from the small pair rather than charged
/// in full (q = 4.4e-9, σ = 0.38, T = 2·10⁸, δ = 5.3e-15: the count's floor 4.41605, the
/// bracket [4.41611, 4.41658]).
#[test]
fn rare_large_losses_answer_where_the_lattices_refused() {
    let rows = reference_rows(COUNT_STATISTIC, "epsilon_lower");
    let mut n = 0;
    for (q, s, t, d, floor) in rows {
        let b = pld::epsilon(sgm(q, s), t, d)
            .unwrap_or_else(|e| panic!("q={q} s={s} T={t} delta={d}: {e}"))
            .epsilon;
        assert!(
            b.upper >= floor,
            "q={q} s={s} T={t}: {b:?} below the count statistic's {floor}"
        );
        assert!(
            b.lower <= b.upper && b.upper <= rdp_eps(q, s, t, d),
            "q={q} s={s} T={t}: {b:?}"
        );
        assert!(tight_enough(&b), "q={q} s={s} T={t}: {b:?}");
        n += 1;
    }
    assert!(n >= 3, "the reference file holds {n} runs");
}

/// The δ side of the same runs (the CLI's `delta`, the page's privacy profile and attack
/// risk): the lattices read δ(0.0422) at q = 2.1e-9, σ = 0.51, T = 5.8·10⁸ as
/// [2.8e-15, 2.6e-2]; the points they read poorly are now read in closed form too
/// (`engine::pld::jumps::delta_brackets`). Checked three ways: at the count statistic's
/// certified floor ε_c (tests/reference/count_statistic.py, independent) δ is above the run's δ,
/// so the upper end must be; at the ε side's certified upper end δ is at most the run's δ, so the
/// lower end must be; and that bracket is narrower than the profile's "poor" ratio, 1.25.
#[test]
fn the_delta_side_reads_rare_large_losses() {
    let rows = reference_rows(COUNT_STATISTIC, "epsilon_lower");
    let mut n = 0;
    for (q, s, t, d, floor) in rows {
        if t < 1_000_000 {
            continue;
        }
        let at_floor = pld::delta(sgm(q, s), t, floor).unwrap().delta;
        assert!(
            at_floor.upper >= d,
            "q={q} s={s} T={t}: δ({floor}) = {at_floor:?} below {d}"
        );
        let e = pld::epsilon(sgm(q, s), t, d).unwrap().epsilon;
        let at_upper = pld::delta(sgm(q, s), t, e.upper).unwrap().delta;
        assert!(
            at_upper.lower <= d * (1.0 + 1e-9),
            "q={q} s={s} T={t}: δ({}) = {at_upper:?} above {d}",
            e.upper
        );
        assert!(
            at_upper.upper <= 1.25 * at_upper.lower,
            "q={q} s={s} T={t}: δ({}) = {at_upper:?}",
            e.upper
        );
        n += 1;
    }
    assert!(n >= 2, "the reference file holds {n} such runs");
}

/// The whole privacy profile (the page's chart, the command line's `profile`) of a run whose
/// ε the closed form answers (q = 4.4e-9, σ = 0.38, T = 2·10⁸) — here the attack-risk's, 201
/// points: the lattices spend the call, the closed form reads the points alone, and where its
/// second round (a composition aimed at the largest poor ε) spent the budget the whole profile
/// was refused. Now the first
/// round's brackets stand: the answer is certified against the count statistic's floor ε_c
/// (tests/reference/count_statistic.py: δ(ε) ≥ δ for every ε ≤ ε_c, so the upper ends there
/// must be), falls with ε, and is narrower than the profile's "poor" ratio at the last point
/// under ε_c.
#[test]
fn a_profile_read_in_closed_form_answers() {
    let (q, s, t, d, eps_c) = (4.443e-9, 0.3754, 200_386_724u64, 5.3e-15, 4.416049719684247);
    let prof = pld::attack_profile(sgm(q, s), t).expect("the profile answers");
    for w in prof.windows(2) {
        assert!(w[1].delta.upper <= w[0].delta.upper, "{w:?}");
    }
    for p in prof.iter().filter(|p| p.epsilon <= eps_c) {
        assert!(p.delta.upper >= d, "{p:?} below δ = {d} under ε_c");
    }
    let near = (prof.iter().rfind(|p| p.epsilon <= eps_c)).unwrap();
    assert!(near.delta.upper <= 1.25 * near.delta.lower, "{near:?}");
}

/// The attack profile (the page's risk chart) of a large-dataset run in the σ range typed on
/// the page (q = 2e-5, T = 5·10⁶): a refinement that would spend the share of the direction
/// still to come is given up, so the one-resolution attempt answers. Before, the remove pair's
/// untilted refinement at ε = 0 spent the attempt's work: at σ = 1.14 the attempt was thrown
/// away and two resolutions read δ(0) as [0.0085, 0.0192]; at σ = 1.2 the call was refused.
/// Now both answer, falling with ε, with δ(0) — the total variation, what the risk chart's
/// largest false-positive rates read — within 1.02× at σ = 1.14 and 1.31× at σ = 1.2.
#[test]
fn a_refinement_leaves_the_other_direction_its_share() {
    for (s, ratio) in [(1.14, 1.05), (1.2, 1.35)] {
        let prof =
            pld::attack_profile(sgm(2e-5, s), 5_000_000).unwrap_or_else(|e| panic!("σ = {s}: {e}"));
        for w in prof.windows(2) {
            assert!(w[1].delta.upper <= w[0].delta.upper, "σ = {s}: {w:?}");
        }
        let zero = prof[0].delta;
        assert!(
            prof[0].epsilon == 0.0 && zero.upper <= ratio * zero.lower,
            "σ = {s}: δ(0) = {zero:?}"
        );
    }
}

/// Two certified brackets of one run must overlap. The closed form for rare large losses
/// (`pld::epsilon_by_jumps`: a decomposition by the number of steps whose sample passes a
/// threshold, the rest on the lattices) and the lattices' own bracket are built differently —
/// the one composes a truncated pair and integrates the large losses, the other composes the
/// whole pair — and meet on runs across the domain where both answer (from the 300-draw
/// sweep, 2026-11-26: they met on all 19 such runs).
#[test]
fn rare_loss_brackets_meet_the_lattice_brackets() {
    let runs = [
        (2.523e-7f64, 0.698f64, 438u64, 2.95e-13f64),
        (2.112e-5, 0.9265, 3652, 1.01e-13),
        (1.503e-5, 0.3714, 452_397, 4.81e-6),
        (1.136e-7, 0.3097, 189_355_983, 1.9e-9),
        (4.524e-5, 0.4865, 1_321_462, 4.12e-14),
        (6.855e-2, 0.3355, 8, 1.74e-4),
        (1.654e-1, 0.8439, 51, 1.93e-5),
    ];
    for (q, s, t, d) in runs {
        let (j, _) = pld::epsilon_by_jumps(sgm(q, s), t, d)
            .unwrap_or_else(|e| panic!("q={q} s={s} T={t}: {e}"));
        let l = pld::epsilon(sgm(q, s), t, d).unwrap().epsilon;
        assert!(
            j.lower <= l.upper * (1.0 + 1e-9) && l.lower <= j.upper * (1.0 + 1e-9),
            "q={q} s={s} T={t} delta={d}: closed form {j:?}, lattices {l:?}"
        );
        assert!(
            j.upper - j.lower <= 0.01 * j.upper,
            "q={q} s={s} T={t}: {j:?}"
        );
    }
}

/// The add pair's certified upper end, read from the small pair's reversed composition
/// (`engine::pld::jumps`), against an independent value: δ_add at ε by Laplace inversion of the
/// add pair's exact moment generating function (mpmath quadrature, no lattice:
/// tests/reference/add_inversion.py). Asked at that δ, the upper end must not fall below that ε
/// (to the inversion's accuracy, 1e-4 of ε), and where the file marks it tight it must be within
/// 0.2 % of it. (At q = 1.8e-8, σ = 0.77, T = 1.4·10⁸ it was 5 % above, and runs there were
/// refused, until the reversed composition's top cuts were held below δ's share of its tilted
/// moment: now 0.04 % above.)
#[test]
fn the_add_pair_bound_holds_against_a_laplace_inversion() {
    let text = include_str!("../reference/add_inversion.jsonl");
    let mut n = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let f = |k: &str| v[k].as_f64().unwrap();
        let (q, s, eps, d) = (f("q"), f("sigma"), f("epsilon"), f("delta_add"));
        let t = v["steps"].as_u64().unwrap();
        let (_, add) = pld::epsilon_by_jumps(sgm(q, s), t, d)
            .unwrap_or_else(|e| panic!("q={q} s={s} T={t}: {e}"));
        assert!(
            add >= eps * (1.0 - 1e-4),
            "q={q} s={s} T={t}: add upper {add} below {eps}"
        );
        if v["tight"].as_bool().unwrap() {
            assert!(
                add <= eps * 1.002,
                "q={q} s={s} T={t}: add upper {add} against {eps}"
            );
        }
        n += 1;
    }
    assert!(n >= 2, "the reference file holds {n} runs");
}

/// Runs of the corner sweep (`benches/epsilon_sweep.py --corner`: tiny q at σ 0.4–0.8 over
/// 10⁷–10⁸ steps) that were refused. The first three because the add pair's upper end, read
/// from the small pair's reversed composition, sat 4–6 % above the remove pair's: the tops that
/// composition cuts to its ledger (charged at e^{−θε}) were 4× δ's share of its tilted moment.
/// The last because the closed form's bisections spent the call's work re-reading the bins'
/// Gaussian masses (now built once per bisection, and bisected to a millionth of ε rather than
/// a billionth). They answer now, within the width rule and below exact RDP; the Laplace
/// inversion above checks the add pair's end itself.
#[test]
fn corner_runs_once_refused_answer() {
    answer_within_the_rule(&[
        (1.798e-8, 0.7739, 142_628_362, 9.26e-12),
        (1.969e-8, 0.7965, 440_402_294, 7.01e-13),
        (6.296e-8, 0.69, 561_082_041, 9.52e-8),
        (1.507e-8, 0.4314, 10_190_305, 1.55e-11),
    ]);
}

/// The corner sweep's last refusal (q = 5.35e-9, σ = 0.36, T = 5·10⁸, δ = 8.5e-6: 1.6 % wide)
/// and the e2e's shuffled example near it (T = 373,831,774, two shuffled epochs). The small
/// pair's one-step law is a spike far narrower than its tail's spacing, and every core∗tail
/// product put it onto one lattice point of the tail for the lower measure, rounding its whole
/// mean down; the lower measure is now also contracted after the product
/// (`engine::pld::ladder`, `lower_product`), and the bins read H at a two-hundredth of the
/// small pair's spread. Both were refused; both answer within the rule, below exact RDP.
#[test]
fn a_spike_narrower_than_the_tail_spacing_answers() {
    answer_within_the_rule(&[
        (5.35e-9, 0.3614, 499_000_000, 8.53e-6),
        (5.35e-9, 0.3614, 373_831_774, 8.53e-6),
    ]);
}

/// About two sampled steps at σ = 0.32 and δ = 1e-3 (q = 1e-8, T = 2·10⁸): the term with two
/// big steps was charged at H = 1 for every pair with a loss past ε's range (1.9 % of δ, where
/// such a pair reads H ≈ 0.1) and left out of the lower sum (1 %): [0.025270, 0.025796], 2 %
/// wide, refused. Its grid now runs to the last bin and the lower sum reads the pairs too
/// (`engine::pld::jumps`, module docs). It answers within the rule, below exact RDP.
#[test]
fn pairs_of_large_losses_are_read_both_ways() {
    answer_within_the_rule(&[(1e-8, 0.32, 200_000_000, 1e-3)]);
}

/// The add pair at large δ (q = 6.214e-7, σ = 0.5486, T = 69,744,471, δ = 0.0077, 43 sampled
/// steps): the closed form's remove bracket was [0.006730, 0.006812], but the add pair's upper
/// end, its term with one big step charged as if that step had lost nothing (T·p_b = 0.018 of
/// δ_rev(ε)), read 0.006918, and the run was refused. That term is now read on the big part's
/// bins, T·∫δ_rev(ε + ℓ)dQ (`engine::pld::jumps`, `Small::add_delta`): the add pair is ruled
/// out and the run answers within the rule, below exact RDP. The add pair's upper end itself
/// is held against a Laplace inversion in the test above (its δ at ε = 0.0067 is 0.0077015).
#[test]
fn the_add_pair_reads_its_big_steps() {
    answer_within_the_rule(&[(6.214e-7, 0.5486, 69_744_471, 0.0077)]);
    let (remove, add) = pld::epsilon_by_jumps(sgm(6.214e-7, 0.5486), 69_744_471, 0.0077).unwrap();
    assert!(
        add <= remove.upper,
        "add {add} against the remove pair's {remove:?}"
    );
}

/// Where the add pair is not ruled out but its upper end is within the rule of the remove
/// pair's lower end, that is the answer (ε is the larger of the two pairs' ε): q = 3.359e-7,
/// σ = 0.6228, T = 100,601,530, δ = 0.00322 (a random draw of the corner, refused) reads the
/// remove pair [0.0033138, 0.0033574] and the add pair's upper end 0.0033643. It answers within
/// the rule, below exact RDP.
#[test]
fn the_add_pairs_upper_end_may_lead() {
    answer_within_the_rule(&[(3.359e-7, 0.6228, 100_601_530, 0.00322)]);
}

/// Two runs that answered wider than the rule. q = 3.073e-8, σ = 0.4757, T = 850,989,488,
/// δ = 1.03e-5 (the large-δ corner sweep) read [0.021773, 0.021935]: the small pair's halved
/// spacing had too little of the call's work left, and now has a budget of its own
/// ([0.021881, 0.021924]). q = 2e-9, σ = 0.30, T = 10⁹, δ = 1e-5 read [0.519261, 0.521395];
/// with the big losses past ε summed in closed form, [0.519422, 0.519913] (`engine::pld::jumps`).
/// Both answer within the rule, below exact RDP.
#[test]
fn once_wide_closed_form_runs_meet_the_rule() {
    answer_within_the_rule(&[
        (3.073e-8, 0.4757, 850_989_488, 1.03e-5),
        (2e-9, 0.30, 1_000_000_000, 1e-5),
    ]);
}

/// Runs at σ < 0.6 where the closed form now goes first though the lattices' bulk spacing is
/// above 1e-8 (`engine::pld`, `jumps_near`). q = 3.692e-7, σ = 0.5461, T = 455,552,823,
/// δ = 2.33e-5: the closed form reads [0.120784, 0.120959], 0.14 % wide, and with the lattices
/// on half the budget after it [0.120784, 0.120960] — wider than the rule; with the whole budget
/// [0.120784, 0.120887]. q = 2.522e-8, σ = 0.3983, T = 914,427,237, δ = 9.07e-5 is answered by
/// the closed form alone. Both answer within the rule, below exact RDP.
#[test]
fn near_corner_runs_read_in_closed_form_first_meet_the_rule() {
    answer_within_the_rule(&[
        (3.692e-7, 0.5461, 455_552_823, 2.33e-5),
        (2.522e-8, 0.3983, 914_427_237, 9.07e-5),
    ]);
}

/// The large-δ corner sweep's last bracket wider than the rule: q = 4.692e-8, σ = 0.405,
/// T = 562,805,544, δ = 1.36e-5 read [0.104692, 0.104814] (0.12 %), in 2.2 s. Its width was the
/// closed form's bins (H read at a bin's ends, 5.8e-5 apart), which neither a halved spacing nor
/// a second tilt narrowed; the compositions in hand are now read again on bins a quarter as
/// wide (`engine::pld::jumps`, `on_lattice`): [0.104709, 0.104805]. Within the rule, below
/// exact RDP.
#[test]
fn a_bracket_set_by_the_bins_is_read_on_finer_bins() {
    answer_within_the_rule(&[(4.692e-8, 0.405, 562_805_544, 1.36e-5)]);
}

/// The `--near` sweep's last bracket wider than the rule: q = 3.376e-7, σ = 0.4149,
/// T = 458,701,336, δ = 2.33e-13 read [6.609824, 6.618049] (0.12 %) in 2.4 s — the closed form's
/// square-root rule, then the lattices. Its width was that rule's small pair (the lower end);
/// the cube-root rule's, now tried on a fresh budget after a bracket wider than the rule
/// (`engine::pld::jumps`, `bracket`), reads [6.617404, 6.618288] and the two intersect.
/// Within the rule, below exact RDP.
#[test]
fn a_wide_square_root_bracket_tries_the_cube_root_rule() {
    answer_within_the_rule(&[(3.376e-7, 0.4149, 458_701_336, 2.33e-13)]);
}

/// Where exact RDP's certified ε is 0 (δ = 0.079 above δ(0) ≈ 1e-3: q = 6.2e-9, σ = 0.38,
/// T = 2.1·10⁸, and q = 1.6e-9, σ = 0.65, T = 2.5·10⁸, δ = 0.063) the tight answer is [0, 0];
/// both were refused. The δ side, computed independently of the RDP curve, agrees: δ(0) is at
/// most δ(1e-4) + (e^{1e-4} − 1), below the run's δ.
#[test]
fn an_exact_rdp_epsilon_of_zero_is_the_answer() {
    for (q, s, t, d) in [
        (6.202e-9, 0.3831, 212_003_411, 0.0793),
        (1.568e-9, 0.6451, 253_682_687, 0.0631),
    ] {
        let e = pld::epsilon(sgm(q, s), t, d)
            .unwrap_or_else(|e| panic!("q={q} s={s} T={t} delta={d}: {e}"))
            .epsilon;
        assert!(e.upper == 0.0 && e.lower == 0.0, "q={q}: {e:?}");
        // δ(0) ≤ δ(ε) + (e^ε − 1)·Q(everything), at ε = 1e-4.
        let at = pld::delta(sgm(q, s), t, 1e-4).unwrap().delta;
        assert!(
            at.upper + 1e-4f64.exp_m1() <= d,
            "q={q}: δ(1e-4) = {at:?}, so δ(0) may pass {d}"
        );
    }
}

/// The last two refusals random draws found, long runs at small σ where ε is 70–84: q = 1.924e-6,
/// σ = 0.3174, T = 787,156,547, δ = 3.6e-13 (the lattices' first pass read [69.10, 70.99]: the
/// ladder put a growing tail 16× coarser at once, `engine::pld::ladder`'s `settle`) and
/// q = 5.714e-6, σ = 0.3577, T = 815,082,995, δ = 3.16e-13 ([82.536, 83.882] after the rescue
/// pass: the lower measure of the ladder's core∗tail products lost ~1e-7 of its moment each
/// where the core was coarsened onto the tail's lattice first; the ε side now also contracts it
/// after the product, `engine::pld`'s `epsilon_lattices`). Each answers within the width rule,
/// below exact RDP, and its bracket holds the ε where an independent value crosses δ (between
/// 70.91 and 70.92; between 83.87 and 83.88): δ(ε) on a grid of ε by Laplace inversion of the
/// remove pair's exact moment generating function (mpmath, no lattice:
/// tests/reference/remove_inversion.py) — the bracket's lower end may not pass the least grid
/// ε whose δ is below δ, nor its upper end fall below the largest grid ε whose δ is above.
#[test]
fn a_small_sigma_long_run_answers_and_holds_a_laplace_inversion() {
    let mut n = 0;
    for ((q, s, t, d), v) in reference_lines(include_str!("../reference/remove_inversion.jsonl")) {
        let (eps, at) = (floats(&v, "epsilon"), floats(&v, "delta_at"));
        // The true ε lies in (below, above): δ falls with ε.
        let below = (eps.iter().zip(&at))
            .filter(|(_, &x)| x > d)
            .map(|(&e, _)| e)
            .fold(f64::NEG_INFINITY, f64::max);
        let above = (eps.iter().zip(&at))
            .filter(|(_, &x)| x < d)
            .map(|(&e, _)| e)
            .fold(f64::INFINITY, f64::min);
        assert!(
            below < above,
            "q={q}: the reference grid does not straddle δ"
        );
        let b = answer_below_rdp(q, s, t, d);
        assert!(tight_enough(&b), "q={q}: {b:?}");
        assert!(
            b.lower <= above && b.upper >= below,
            "q={q} s={s} T={t}: {b:?} against the inversion's ({below}, {above})"
        );
        n += 1;
    }
    assert!(n >= 2, "the reference file holds {n} runs");
}

/// A random draw with ~4 sampled steps over the run (q = 9.462e-8, σ = 0.341, T = 46,420,413,
/// δ = 0.0116): the lattices read [0.009506, 0.010835] and the closed form [0.010789, 0.010931]
/// (`engine::pld::jumps`), each wider than the absolute rule (1e-4), and each was dropped, so
/// the call was refused. Both are certified: their intersection answers, within the rule, below
/// exact RDP.
#[test]
fn two_wide_certified_brackets_intersect_to_an_answer() {
    answer_within_the_rule(&[(9.462e-8, 0.341, 46_420_413, 0.0116)]);
}

/// A refinement bound for a refusal tries the finer pass it asks first, and only where that runs
/// out a pass 0.8× finer on a budget of its own (the run above): at q = 5.137e-8, σ = 0.3048,
/// T = 1,681,634, δ = 0.00231 (a random draw; 1.2e-4 wide after the first pass) the 10× finer
/// pass asked fits, where the work estimate said it would not, and reads [0.001159, 0.001234];
/// a 0.8× pass in its place read [0.001116, 0.001233] and the call was refused. (Since the ε side
/// contracts the ladder's lower measure after each core∗tail product its first pass reads
/// [0.001178, 0.001234], within the rule: the test guards the answer either way.)
#[test]
fn a_refinement_bound_for_a_refusal_tries_the_finer_pass_first() {
    answer_within_the_rule(&[(5.137e-8, 0.3048, 1_681_634, 0.00231)]);
}

/// Each run (q, σ, T, δ) answers within the width rule and below exact RDP.
fn answer_within_the_rule(runs: &[(f64, f64, u64, f64)]) {
    for &(q, s, t, d) in runs {
        let b = answer_below_rdp(q, s, t, d);
        assert!(tight_enough(&b), "q={q} s={s} T={t}: {b:?}");
    }
}

/// The run's answer, a bracket below exact RDP's ε.
fn answer_below_rdp(q: f64, s: f64, t: u64, d: f64) -> pld::Bracket {
    let b = pld::epsilon(sgm(q, s), t, d)
        .unwrap_or_else(|e| panic!("q={q} s={s} T={t} delta={d}: {e}"))
        .epsilon;
    assert!(
        b.lower <= b.upper && b.upper <= rdp_eps(q, s, t, d),
        "q={q} s={s} T={t}: {b:?}"
    );
    b
}

/// A corner draw the lattices answered 0.86 % wide (q = 5.6e-8, σ = 0.46, T = 2.5·10⁸,
/// δ = 8.8e-10: [0.408161, 0.411694]), where the closed form was only the fallback of a refusal;
/// a lattice answer wider than the width rule now tries it too, and the two certified brackets
/// intersect: within the rule, below exact RDP. And a run the closed form answered only once
/// the term with two big steps was read rather than charged in full (the small pair's losses
/// then reached 0.8): q = 2.9e-8, σ = 0.44, T = 9.1·10⁸, δ = 1.5e-14, 0.14 % wide before.
#[test]
fn wide_lattice_answers_meet_the_closed_form() {
    answer_within_the_rule(&[
        (5.636e-8, 0.4569, 245_805_011, 8.78e-10),
        (2.877e-8, 0.444, 912_745_488, 1.52e-14),
    ]);
}

/// The chart's ε over training: a checkpoint the accountant refuses on its own (q = 2.1e-9,
/// σ = 0.51 at T = 33, where the lattices cannot bracket it within 1 % and the closed form does
/// not rule the add pair out) takes its bracket from its neighbours — ε grows with the steps —
/// so the chart answers (it was unavailable for the whole run). Every bracket stays certified:
/// it holds the neighbours' own ends and sits below exact RDP.
#[test]
fn a_refused_checkpoint_takes_its_neighbours_bracket() {
    let (q, s, d) = (2.136e-9, 0.5108, 3.33e-15);
    let steps = [14u64, 33, 80];
    let got = pld::checkpoints_tol(sgm(q, s), &steps, d, 5e-3)
        .unwrap_or_else(|e| panic!("the chart's checkpoints: {e}"));
    let own = |t: u64| pld::epsilon(sgm(q, s), t, d).map(|a| a.epsilon);
    let (first, last) = (own(14).unwrap(), own(80).unwrap());
    assert!(
        got[1].lower >= first.lower && got[1].upper <= last.upper,
        "{got:?}"
    );
    assert!(
        got[1].upper.is_finite() && got[1].upper <= rdp_eps(q, s, 33, d),
        "{got:?}"
    );
    if let Ok(b) = own(33) {
        assert!(
            got[1].lower <= b.upper && b.lower <= got[1].upper,
            "{got:?} against {b:?}"
        );
    }
}

#[test]
fn tiny_rates_agree_with_the_gaussian_limit() {
    let runs = [
        (1e-7f64, 1.0f64, 1_000_000u64, 1e-5f64),
        // Once answered [0, 0] — the lattice lost 6e-9 of P per step to cancellation at
        // Δ = 1e-8, 99.7 % over 10⁹ steps — where the limit's ε is 5.7e-6
        // (`discretize::charge_missing_mass`).
        (1e-8, 10.0, 1_000_000_000, 1e-5),
        (1e-6, 2.0, 1_000_000, 1e-5),
        (1e-6, 1.0, 1_000_000, 1e-5),
        (1e-5, 3.0, 1_000_000, 1e-5),
        (1e-6, 1.0, 10_000, 1e-5),
        (1e-6, 3.0, 100_000_000, 1e-5),
        (1e-9, 1.0, 1_000_000_000, 1e-5),
        // Once answered [0.000228, 0.000228] and [0.015948, 0.015948]: two tilts' brackets
        // that did not overlap, intersected; now refused (`overlap`), or answered right.
        (1e-7, 5.0, 100_000_000, 1e-5),
        (1e-6, 5.0, 1_000_000_000, 1e-5),
        // Refused until a bin's connect-the-dots split was taken from the mixture's components
        // (its rounding ~u·q/Δ, not u/Δ: the spacing could not reach the bulk, and the first
        // was bracketed [1.0e-4, 2.9e-4]); the third, at larger q, by the same passes.
        (1.814e-9, 1.232, 730_000_000, 8e-8),
        (3.89e-8, 12.55, 527_000_000, 1.55e-15),
        (1.153e-5, 129.8, 276_000_000, 1.78e-11),
    ];
    let mut answered = 0;
    for (q, s, t, d) in runs {
        let limit = limit_eps(q, s, t, d);
        match pld::epsilon(sgm(q, s), t, d) {
            Ok(a) => {
                answered += 1;
                let (lo, up) = (a.epsilon.lower, a.epsilon.upper);
                let slack = 0.02 * limit + 2e-6;
                assert!(
                    lo <= limit + slack && up >= limit - slack,
                    "q={q} s={s} T={t}: [{lo}, {up}] against the limit {limit}"
                );
            }
            Err(Error::PldBudget { .. }) => {}
            Err(e) => panic!("q={q} s={s} T={t}: {e}"),
        }
    }
    eprintln!("gaussian limit: {answered} of 13 answered");
    assert!(answered >= 12, "only {answered} of 13 answered");
}

/// A seeded sweep over the issue's whole domain — q ∈ [1e-9, 1], σ ∈ [0.3, 10³],
/// T ∈ [1, 10⁹], δ ∈ [1e-15, 0.1], log-uniform — keeping the runs whose exact-RDP ε is
/// ≤ 10³ (the domain's condition). Every answer is a certified bracket below exact RDP and
/// within the accepted width; the refusals are typed. Measured 2026-11-26 (this engine):
/// all 160 draws in the domain answer, 159 within the width rule (0.1 % of ε, or 1e-4) — 159
/// answered at 2a83b21, 157 at f376521, 156 at 28db682, 152 before the add direction was read
/// from the remove lattices, 143 at 99779de, 136 at a77c0fa. The last miss, q = 1.8e-9,
/// σ = 1.23, T = 7.3·10⁸ (bracketed [1.0e-4, 2.9e-4]: its per-step spacing could not go below
/// 1e-17·T, 5× the bulk's spread), answers since a bin's connect-the-dots split is taken from
/// the mixture's components (its rounding ~u·q/Δ, not u/Δ). The one wider than the rule:
/// q = 3.95e-7, σ = 0.59, T = 1.4·10⁷, δ = 6.6e-14, 0.13 % (the work budget runs out before
/// the floor a rare large loss asks for). One refusal and one more wide run are allowed (a
/// run near the rule whose refinement a rounding difference could move: q = 2.1e-7, σ = 37.9,
/// T = 3.9·10⁸ slipped once in the dev profile before the linear statistic).
#[test]
fn a_seeded_sweep_of_the_domain() {
    let mut s = 0x5eed_2026_1126u64;
    let mut u = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut runs = Vec::new();
    while runs.len() < 160 {
        let q = 10f64.powf(-9.0 * u());
        let sigma = 10f64.powf(-0.52 + 3.52 * u());
        let t = 10f64.powf(9.0 * u()).round().max(1.0) as u64;
        let d = 10f64.powf(-15.0 + 14.0 * u());
        let rdp = Run::with_default_orders(sgm(q, sigma), t)
            .unwrap()
            .epsilon(d, Conversion::Improved)
            .unwrap()
            .value;
        if rdp <= 1e3 {
            runs.push((q, sigma, t, d, rdp));
        }
    }
    let (a, b) = runs.split_at(runs.len() / 2);
    let work = |part: &[(f64, f64, u64, f64, f64)]| -> (Vec<String>, Vec<String>) {
        let (mut missing, mut wide) = (Vec::new(), Vec::new());
        for &(q, s, t, d, rdp) in part {
            match pld::epsilon(sgm(q, s), t, d) {
                Ok(a) => {
                    let b = a.epsilon;
                    assert!(
                        0.0 <= b.lower && b.lower <= b.upper && b.upper <= rdp * (1.0 + 1e-12),
                        "q={q} s={s} T={t} delta={d}: {b:?} vs exact RDP {rdp}"
                    );
                    let w = b.upper - b.lower;
                    assert!(
                        w <= 0.01 * b.upper + 1e-12 || w <= 1e-4,
                        "q={q} s={s} T={t} delta={d}: {b:?}"
                    );
                    if w > 1e-3 * b.upper + 1e-12 && w > 1e-4 {
                        wide.push(format!("q={q:.3e} s={s:.3} T={t} d={d:.1e}: {b:?}"));
                    }
                }
                Err(Error::PldBudget { .. }) => {
                    missing.push(format!("q={q:.3e} s={s:.3} T={t} d={d:.1e}"))
                }
                Err(e) => panic!("q={q} s={s} T={t} delta={d}: unexpected error {e}"),
            }
        }
        (missing, wide)
    };
    let ((mut missing, mut wide), (m2, w2)) = std::thread::scope(|sc| {
        let h = sc.spawn(|| work(a));
        let rb = work(b);
        (h.join().unwrap(), rb)
    });
    missing.extend(m2);
    wide.extend(w2);
    eprintln!(
        "domain sweep: {} of 160 answered, {} within the width rule; missing {missing:?}; wider than the rule {wide:?}",
        160 - missing.len(),
        160 - missing.len() - wide.len()
    );
    assert!(
        missing.len() <= 1,
        "{} of 160 refused: {missing:?}",
        missing.len()
    );
    assert!(
        wide.len() <= 2,
        "{} of 160 wider than the rule: {wide:?}",
        wide.len()
    );
}

/// The δ side (the privacy profile, `sgm-rdp delta`) reaches small q too: where one step's
/// range needs more points than the budget, the profile's lattices take two resolutions.
/// q = 1e-5, σ = 0.5, T = 10⁶ at ε = 0.5 was refused ("the loss range needs more lattice
/// points than the budget"); its bracket must agree with the ε side's: ε(1e-5) ≤ 0.4943 < 0.5,
/// so δ(0.5) ≤ 1e-5, and a certified lower end above 1e-5 would contradict it.
#[test]
fn the_delta_side_answers_small_q() {
    let (q, s, t) = (1e-5, 0.5, 1_000_000u64);
    let e = pld::epsilon(sgm(q, s), t, 1e-5).unwrap().epsilon;
    assert!(e.upper < 0.5, "{e:?}");
    let d = pld::delta(sgm(q, s), t, 0.5).unwrap().delta;
    assert!(d.lower <= 1e-5 && d.lower <= d.upper, "{d:?}");
    assert!(d.upper <= 1e-5 * 1.01 && d.lower > 0.5e-5, "{d:?}");
    // The add pair read from the remove lattices, reversed, on the δ side too: these two were
    // refused ("needs more lattice points than the budget", "the work budget … is spent").
    // Just above the ε side's upper end, δ must be at most 1e-5 — so the lower end must be —
    // and the upper end within 10 % of it.
    for (q, s, t, at) in [
        (1e-6, 0.6, 1_000_000u64, 0.0098),
        (1e-4, 0.6, 100_000_000, 23.5),
    ] {
        let e = pld::epsilon(sgm(q, s), t, 1e-5).unwrap().epsilon;
        assert!(e.upper < at, "{e:?}");
        let d = pld::delta(sgm(q, s), t, at).unwrap().delta;
        assert!(d.lower <= 1e-5 && d.lower <= d.upper, "q={q}: {d:?}");
        assert!(d.upper <= 1.1e-5, "q={q}: {d:?}");
    }
}

/// The add pair read from the remove lattices ("the reversed pair") carries the lattices'
/// shift T·o as a factor e^{−T·o}; at q = 1.3e-5, σ = 0.31, T = 1.4·10⁸ (ε ≈ 206) that is
/// e^{1595}, and taken on its own it overflowed: e^{1595}·0 read NaN, then δ = 1 at every ε,
/// no tilt could place the answer, and the run was refused. The remove pair's upper end alone
/// is not enough here: the add pair must be ruled out, which a reading of 1 never does.
#[test]
fn the_reversed_reading_survives_a_large_shift() {
    let (q, s, t, d) = (1.285e-5, 0.3133, 138_931_028u64, 3.26e-13);
    let a = pld::epsilon(sgm(q, s), t, d).unwrap();
    let b = a.epsilon;
    assert!(b.upper <= rdp_eps(q, s, t, d), "{b:?}");
    assert!(b.lower > 0.99 * b.upper, "{b:?}");
    assert_eq!(a.grid.worst, "remove", "{a:?}");
}

/// ε = 0 where δ(0), the total variation, is certified below δ without composing (χ² of the
/// composed pair in closed form, then TV ≤ ½√χ² and Pinsker: `engine::pld`'s `tv_bound`): at
/// q = 9.462e-8, σ = 0.341, δ = 0.0116 the early checkpoints of ε over training. The bound
/// must hold: the δ side's certified lower end of δ(1e-3) (the lattices, another path; 0.00383,
/// where the bound reads 0.00732) is at most TV, so it is below δ where the answer is 0 — and
/// where δ is below that lower end, ε is above 1e-3, and the answer may not be 0 (a bound too
/// small would say 0 there).
#[test]
fn a_total_variation_below_delta_answers_zero_and_only_there() {
    let (m, t) = (sgm(9.462e-8, 0.341), 4_410_432);
    let b = pld::epsilon(m, t, 0.0116).unwrap().epsilon;
    assert_eq!((b.lower, b.upper), (0.0, 0.0), "{b:?}");
    let at = pld::delta(m, t, 1e-3).unwrap().delta;
    assert!(at.lower > 0.0 && at.lower <= 0.0116, "δ(1e-3) = {at:?}");
    let below = 0.9 * at.lower;
    let b = pld::epsilon(m, t, below).unwrap().epsilon;
    assert!(b.upper >= 1e-3, "δ = {below}: {b:?}");
}

/// The privacy profile (the page's chart, the command line's `profile`) of two runs with a few
/// to some tens of sampled steps at small σ, where the lattices spend the call on the profile
/// and it was refused ("unavailable" on the page): it is now read in closed form alone
/// (`engine::pld`'s `jumps_alone`, wherever rare large losses may matter). Checked against a
/// Laplace inversion of the add pair's exact moment generating function
/// (tests/reference/add_inversion.py: δ_add(0.0067) = 0.0077015 at q = 6.214e-7, a lower
/// bound on δ = max(δ_add, δ_remove), so the upper end may not be below it), and against the ε
/// side (the lattices and the closed form intersected, another composition): at the ε side's
/// certified ends for δ, δ(upper) ≤ δ ≤ δ(lower), so the profile's lower end at the one and its
/// upper end at the other must allow it. Its points fall with ε and each is within the chart's
/// "poor" ratio, 1.25.
#[test]
fn a_rare_run_s_profile_answers_where_the_lattices_spend_the_call() {
    for (q, s, t, d) in [
        (6.214e-7, 0.5486, 69_744_471u64, 0.0077),
        (9.462e-8, 0.341, 46_420_413, 0.0116),
    ] {
        let e = pld::epsilon(sgm(q, s), t, d).unwrap().epsilon;
        let eps = [0.0, 0.5 * e.lower, e.lower, 0.0067, e.upper, 2.0 * e.upper];
        let prof = pld::profile(sgm(q, s), t, &eps)
            .unwrap_or_else(|err| panic!("q={q}: the profile is refused: {err}"));
        for w in prof.windows(2).filter(|w| w[0].epsilon <= w[1].epsilon) {
            assert!(w[1].delta.upper <= w[0].delta.upper, "q={q}: {w:?}");
        }
        for p in &prof {
            let b = p.delta;
            assert!(b.lower > 0.0 && b.upper <= 1.25 * b.lower, "q={q}: {p:?}");
        }
        assert!(
            prof[2].delta.upper >= d,
            "q={q}: at ε = {e:?}'s lower end: {:?}",
            prof[2]
        );
        assert!(
            prof[4].delta.lower <= d,
            "q={q}: at ε = {e:?}'s upper end: {:?}",
            prof[4]
        );
        if q == 6.214e-7 {
            assert!(
                prof[3].delta.upper >= 0.0077015 * (1.0 - 1e-4),
                "{:?}",
                prof[3]
            );
        }
    }
}

/// The profile's input is checked before the closed form reads a run of few sampled steps
/// (which goes first there and takes its input as checked): the typed errors, not a reading.
#[test]
fn a_few_jumps_profile_checks_its_input_first() {
    let (m, t) = (sgm(9.462e-8, 0.341), 46_420_413);
    for eps in [vec![f64::NAN], vec![0.01, -1.0], vec![f64::INFINITY]] {
        assert!(
            matches!(pld::profile(m, t, &eps), Err(Error::Epsilon(_))),
            "{eps:?}"
        );
    }
    for n in [0, 10_001] {
        assert!(
            matches!(pld::profile(m, t, &vec![0.01; n]), Err(Error::ProfileLength(k)) if k == n),
            "{n} points"
        );
    }
}

/// Long runs whose step's bulk spans a few lattice spacings (q ≈ 3e-6–5e-6, σ ≈ 0.37–0.41,
/// T ≈ 3–6·10⁸): the lattices read them outside the width rule — the domain sweep's
/// q = 5.169e-6 run [16.044614, 16.069428] (0.15 %), two of `benches/epsilon_sweep.py --mid`'s
/// [20.610731, 20.640477] (0.14 %) and [11.953314, 11.967376] (0.12 %) — because the ladder
/// spilled each core's top into its coarse tail in left bins, rounding the lower measure's
/// lowest, heaviest spilled bin down a coarse spacing at every level (`engine::pld::ladder`,
/// `Bins`). Spilled in centred bins they answer within the rule, below exact RDP, and meet the
/// closed form's bracket (`pld::epsilon_by_jumps`: the rare large losses composed in closed
/// form, the rest on lattices without them) — a lower end pushed past the truth would lie
/// above that bracket's upper end.
#[test]
fn bulks_of_a_few_spacings_meet_the_rule_and_the_closed_form() {
    meet_the_rule_and_the_closed_form(&[
        (5.169e-6, 0.4132, 584_968_539, 2.44e-8),
        (3.009e-6, 0.3679, 285_584_648, 1.43e-11),
        (2.842e-6, 0.3856, 416_017_883, 6.44e-8),
    ]);
}

/// Each run (q, σ, T, δ) answers within the width rule, below exact RDP, and its bracket meets
/// the closed form's (`pld::epsilon_by_jumps`: the rare large losses composed in closed form,
/// the rest on lattices without them).
fn meet_the_rule_and_the_closed_form(runs: &[(f64, f64, u64, f64)]) {
    for &(q, s, t, d) in runs {
        let b = answer_below_rdp(q, s, t, d);
        assert!(tight_enough(&b), "q={q} s={s} T={t}: {b:?}");
        let (j, _) = pld::epsilon_by_jumps(sgm(q, s), t, d).unwrap();
        assert!(
            b.lower <= j.upper && j.lower <= b.upper,
            "q={q} s={s} T={t}: {b:?} against the closed form's {j:?}"
        );
    }
}

/// Long runs whose step's bulk spans one to four lattice spacings (q ≈ 5e-6–2e-5, σ ≈ 0.42–0.49,
/// T ≈ 2–5·10⁸, from `benches/epsilon_sweep.py --mid`), which the lattices read outside the width
/// rule — [46.446960, 46.668649] (0.48 %), [4.046728, 4.058972] (0.30 %), [7.942435, 7.952918]
/// (0.13 %) — for two reasons: the step's optimistic lattice had no point at the bulk, whose
/// lowest, heaviest bin's atom dragged the next few onto one point (`discretize::bulk_offset`,
/// now from Δ > q/8 rather than Δ > q), and the ε side's core∗tail products kept the lower
/// measure that was larger at twice the tilt rather than at the composition's own
/// (`ladder::with_lower`). With both they answer within the rule, below exact RDP, and meet the
/// closed form's bracket (`pld::epsilon_by_jumps`), which a lower end pushed past the truth
/// would not.
#[test]
fn bulks_on_a_point_meet_the_rule_and_the_closed_form() {
    meet_the_rule_and_the_closed_form(&[
        (1.962e-5, 0.4228, 287_501_611, 1.14e-9),
        (4.636e-6, 0.4847, 206_235_680, 6.96e-9),
        (6.26e-6, 0.4727, 454_873_816, 5.42e-9),
    ]);
}

/// The δ direction covers what the ε direction covers (issue 61 #8): for runs of the issue's
/// grid whose ε at δ = 1e-5 is within the domain (≤ 10³), δ is asked at that bracket's ends
/// and at a tenth and a hundredth of its upper end. Every answer is a bracket within the
/// profile's rule (upper ≤ 1.25 × lower), consistent with the ε side's (δ(ε_up) ≤ 1e-5 ≤
/// δ(ε_lo): the lower end at ε_up is at most 1e-5, the upper end at ε_lo at least 1e-5) and
/// nonincreasing in ε. Measured 2026-12-05: 20 of these 72 points (and the issue's
/// `{"q":0.3513,"sigma":10.3565,"steps":1085213,"epsilon":0.1212}`) had been refused; all
/// answer, through the ε side where the δ side's lattices spend the call.
#[test]
fn the_delta_direction_answers_where_the_epsilon_direction_does() {
    let mut runs = Vec::new();
    for q in [1e-5, 1e-4, 1e-3, 0.01, 0.3513] {
        for s in [0.6, 1.0, 10.3565] {
            for t in [1_000_000u64, 100_000_000] {
                runs.push((q, s, t));
            }
        }
    }
    let domain: Vec<(f64, f64, u64, pld::Bracket)> = solve_all(&runs)
        .into_iter()
        .filter_map(|(q, s, t, r)| r.ok().map(|b| (q, s, t, b)))
        .filter(|(_, _, _, b)| b.upper > 1e-3 && b.upper <= 1e3)
        .collect();
    assert!(domain.len() >= 18, "{}", domain.len());
    let check = |part: &[(f64, f64, u64, pld::Bracket)]| {
        for &(q, s, t, b) in part {
            let at = [b.lower, b.upper, 0.1 * b.upper, 0.01 * b.upper];
            let ds: Vec<pld::Bracket> = at
                .iter()
                .map(|&e| {
                    pld::delta(sgm(q, s), t, e)
                        .unwrap_or_else(|err| panic!("q={q} s={s} T={t} ε={e}: {err}"))
                        .delta
                })
                .collect();
            for (d, e) in ds.iter().zip(at) {
                assert!(
                    0.0 < d.lower && d.lower <= d.upper && d.upper <= 1.25 * d.lower,
                    "q={q} s={s} T={t} ε={e}: {d:?}"
                );
            }
            assert!(
                ds[1].lower <= 1e-5 && ds[0].upper >= 1e-5,
                "q={q} s={s} T={t}: {ds:?}"
            );
            assert!(
                ds[3].upper >= ds[2].lower && ds[2].upper >= ds[1].lower,
                "q={q} s={s} T={t}: {ds:?}"
            );
        }
    };
    let (a, c) = domain.split_at(domain.len() / 2);
    std::thread::scope(|sc| {
        let h = sc.spawn(|| check(a));
        check(c);
        h.join().unwrap();
    });
    // The issue's run: δ at ε = 0.1212 is above 0.999 (ε at δ = 0.999 is above 514).
    let d = pld::delta(sgm(0.3513, 10.3565), 1_085_213, 0.1212)
        .unwrap()
        .delta;
    assert!(d.lower >= 0.98 && d.upper <= 1.0, "{d:?}");
}
