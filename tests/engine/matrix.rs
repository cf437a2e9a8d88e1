//! Correlated noise (issue 67): against a Monte Carlo of the whole matrix mechanism
//! (tests/reference/matrix_reference.py: y = C·x + σz sampled in R^T, the privacy loss summed
//! over every participation pattern with the full C — it uses neither the exact reduction nor
//! the noise splitting the engine relies on) under b-min-separated participation (both ends),
//! Poisson sampling and balls-in-bins (the upper bound); and the identities: one
//! band, or the identity, is DP-SGD; the explicit banded matrix equals its Toeplitz family;
//! band:b over a multiple of b steps is the `--bands` reduction; ε grows with T and falls with σ;
//! the partitions pruned as dominated never hold the worst.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::Value;
use sgm_rdp::engine::matrix::{MinSep, Split, Strategy, Whole};
use sgm_rdp::engine::{pld, Sgm};

fn toeplitz(c: &[f64], t: usize) -> Vec<Vec<f64>> {
    (0..t)
        .map(|i| {
            (0..=i)
                .map(|j| c.get(i - j).copied().unwrap_or(0.0))
                .collect()
        })
        .collect()
}

fn strategy_of(v: &Value) -> Strategy {
    let spec = v["strategy"].as_str().unwrap();
    if spec == "tree" {
        return Strategy::Tree;
    }
    if let Some(b) = spec.strip_prefix("blt:") {
        let buffers: Vec<(f64, f64)> = b
            .split(',')
            .map(|p| {
                let (d, w) = p.split_once(':').unwrap();
                (d.parse().unwrap(), w.parse().unwrap())
            })
            .collect();
        return Strategy::blt(&buffers).unwrap();
    }
    if spec == "matrix" {
        let rows: Vec<Vec<f64>> = serde_json::from_value(v["strategy_matrix"].clone()).unwrap();
        return Strategy::matrix(rows).unwrap();
    }
    let mut parts = spec["band:".len()..].split(',');
    let b: usize = parts.next().unwrap().parse().unwrap();
    let c: Vec<f64> = parts.map(|x| x.parse().unwrap()).collect();
    Strategy::band(b, (!c.is_empty()).then_some(&c[..])).unwrap()
}

/// A reference line's run: the exact reduction (min-sep, banded, k ≥ bands), the whole run
/// without amplification (overlapping columns), or the bins' and Poisson's upper bounds.
enum Run {
    Exact(MinSep),
    Whole(Whole),
    Split(Split),
}

impl Run {
    fn delta(
        &self,
        e: f64,
    ) -> Result<sgm_rdp::engine::matrix::MatrixAnswer, sgm_rdp::engine::Error> {
        match self {
            Run::Exact(r) => r.delta(e),
            Run::Whole(r) => r.delta(e),
            Run::Split(r) => r.delta(e),
        }
    }
    fn profile(&self, eps: &[f64]) -> Result<Vec<pld::ProfilePoint>, sgm_rdp::engine::Error> {
        match self {
            Run::Exact(r) => r.profile(eps),
            Run::Whole(r) => r.profile(eps),
            Run::Split(r) => r.profile(eps),
        }
    }
}

fn run_of(v: &Value) -> Run {
    let f = |k: &str| v[k].as_f64().unwrap();
    let joins = v["participation"].as_str().unwrap();
    let (sigma, t) = (f("sigma"), f("steps") as u64);
    if let Some(k) = joins.strip_prefix("min-sep:") {
        let (s, k) = (strategy_of(v), k.parse().unwrap());
        if s.is_banded() && k >= s.bands() as u64 {
            Run::Exact(MinSep::new(s, f("q"), sigma, t, Some(k)).unwrap())
        } else {
            Run::Whole(Whole::new(s, f("q"), sigma, t, k).unwrap())
        }
    } else if let Some(per) = joins.strip_prefix("cyclic-bins:") {
        Run::Split(Split::cyclic_bins(strategy_of(v), sigma, t, per.parse().unwrap()).unwrap())
    } else if let Some(per) = joins.strip_prefix("balls-in-bins:") {
        Run::Split(Split::balls_in_bins(strategy_of(v), sigma, t, per.parse().unwrap()).unwrap())
    } else {
        assert_eq!(joins, "poisson");
        Run::Split(Split::poisson(strategy_of(v), f("q"), sigma, t).unwrap())
    }
}

/// The privacy profile (the page's correlated charts) at every reference ε: its brackets hold
/// the same Monte Carlo of the whole mechanism, and meet [`Run::delta`]'s at each ε (both
/// certified: they must overlap), with upper ends within 1 % of each other.
#[test]
fn profiles_hold_the_monte_carlo_and_meet_the_delta_brackets() {
    let (mut checked, mut refused) = (0, 0);
    for l in include_str!("../reference/matrix.jsonl").lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        let run = run_of(&v);
        let joins = v["participation"].as_str().unwrap();
        let bins = joins.starts_with("balls");
        // (Balls-in-bins at ε ≥ 1 only, as in the test above.)
        let rows: Vec<(f64, f64, f64)> = (0..v["epsilon"].as_array().unwrap().len())
            .map(|i| {
                let g = |k: &str| v[k][i].as_f64().unwrap();
                (g("epsilon"), g("delta_mc"), g("se"))
            })
            .filter(|r| !bins || r.0 >= 1.0)
            .collect();
        let eps: Vec<f64> = rows.iter().map(|r| r.0).collect();
        // (Random allocation's profile at these small t (3 to 10) may refuse where
        // its δ at one ε answers — the log-normal sum too wide for one FFT over the whole
        // range: a typed refusal, counted.)
        let prof = match run.profile(&eps) {
            Ok(p) => p,
            Err(sgm_rdp::engine::Error::PldBudget { .. }) if joins.contains("bins") => {
                refused += 1;
                continue;
            }
            Err(x) => panic!("{}: {x}", v["name"]),
        };
        for (p, &(e, mc, se)) in prof.iter().zip(&rows) {
            let (b, d) = (p.delta, run.delta(e).unwrap().bracket);
            assert!(p.epsilon == e && b.lower <= b.upper, "{}: {p:?}", v["name"]);
            assert!(
                b.lower - 5.0 * se <= mc && mc <= b.upper + 5.0 * se,
                "{} at eps {e}: profile {b:?} vs the Monte Carlo {mc} ± {se}",
                v["name"]
            );
            assert!(
                b.lower <= d.upper
                    && d.lower <= b.upper
                    && (b.upper - d.upper).abs() <= 0.01 * d.upper,
                "{} at eps {e}: profile {b:?} vs delta {d:?}",
                v["name"]
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 90 && refused <= 2,
        "{checked} points checked, {refused} refused"
    );
}

#[test]
fn delta_brackets_hold_the_monte_carlo_of_the_whole_mechanism() {
    let lines: Vec<Value> = include_str!("../reference/matrix.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (mut exact, mut upper_only, mut refused, mut common) = (0, 0, 0, 0);
    for v in &lines {
        let joins = v["participation"].as_str().unwrap();
        let run = run_of(v);
        for (i, e) in v["epsilon"].as_array().unwrap().iter().enumerate() {
            let e = e.as_f64().unwrap();
            // (Balls-in-bins at ε ≥ 1 only: random allocation's δ over these one-in-3 and
            // one-in-4 epochs takes 1–3 s a call, and below ε = 0.25 it refuses — its
            // log-normal sum too wide for one FFT; the refusal is counted, not skipped.)
            if joins.starts_with("balls") && e < 1.0 {
                continue;
            }
            let (mc, se) = (
                v["delta_mc"][i].as_f64().unwrap(),
                v["se"][i].as_f64().unwrap(),
            );
            // (Random allocation refuses δ at the smallest ε of a one-in-3 or one-in-4 epoch at
            // σ ≈ 0.85 — its log-normal sum too wide for one FFT: a typed refusal, counted.)
            let a = match run.delta(e) {
                Ok(a) => a,
                Err(sgm_rdp::engine::Error::PldBudget { .. }) if joins.starts_with("balls") => {
                    refused += 1;
                    continue;
                }
                Err(x) => panic!("{} at eps {e}: {x}", v["name"]),
            };
            let b = a.bracket;
            // Five standard errors: the seeded estimate sits within its interval.
            assert!(
                mc <= b.upper + 5.0 * se,
                "{} at eps {e}: upper {} below the Monte Carlo {mc} ± {se}",
                v["name"],
                b.upper
            );
            if a.certified_lower {
                assert!(
                    b.lower - 5.0 * se <= mc,
                    "{} at eps {e}: lower {} above the Monte Carlo {mc} ± {se}",
                    v["name"],
                    b.lower
                );
                exact += 1;
            } else {
                // An upper bound, and not a vacuous one on these small runs.
                assert!(b.upper < 1.0 && b.lower == 0.0, "{}: {b:?}", v["name"]);
                upper_only += 1;
                common += usize::from(a.common_mode.is_some());
            }
        }
    }
    // (The cyclic bins' banded cases are answered by the common-mode split: checked here.)
    assert!(
        exact >= 55 && upper_only >= 54 && refused == 0 && common >= 15,
        "{exact} exact, {upper_only} upper-only checks ({common} by the common mode), {refused} refused"
    );
}

#[test]
fn noise_splitting_with_one_band_is_dp_sgd_and_bounds_the_split_runs() {
    // One band: Z is not split, the bound is DP-SGD's bracket, both ends certified.
    let sgd = pld::epsilon(Sgm::new(0.02, 0.9).unwrap(), 300, 1e-6)
        .unwrap()
        .epsilon;
    let a = Split::poisson(Strategy::band(1, None).unwrap(), 0.02, 0.9, 300)
        .unwrap()
        .epsilon(1e-6)
        .unwrap();
    assert!(a.certified_lower);
    assert_eq!((a.bracket.lower, a.bracket.upper), (sgd.lower, sgd.upper));
    // b bands under Poisson: every step at sigma/sqrt(b) bounds it (equal coefficients: all
    // full columns but the last b - 1).
    let b = Split::poisson(Strategy::band(4, None).unwrap(), 0.02, 1.8, 400)
        .unwrap()
        .epsilon(1e-6)
        .unwrap();
    let worst = pld::epsilon(Sgm::new(0.02, 0.9).unwrap(), 400, 1e-6)
        .unwrap()
        .epsilon;
    let best = pld::epsilon(Sgm::new(0.02, 0.9).unwrap(), 397, 1e-6)
        .unwrap()
        .epsilon;
    assert!(!b.certified_lower && b.bracket.lower == 0.0);
    assert!(best.lower <= b.bracket.upper && b.bracket.upper <= worst.upper);
    // Balls-in-bins: random allocation at sigma/sqrt(b) per epoch.
    let c = Split::balls_in_bins(Strategy::band(4, None).unwrap(), 2.2, 100, 10)
        .unwrap()
        .epsilon(1e-5)
        .unwrap();
    let alloc = pld::Phase::allocation(1.1, 10, 1, 10).unwrap();
    let want = pld::epsilon_phases(&[alloc], 1e-5).unwrap().epsilon;
    assert_eq!(c.bracket.upper, want.upper);
}

#[test]
fn one_band_and_the_identity_are_dp_sgd() {
    let sgd = pld::epsilon(Sgm::new(0.02, 0.9).unwrap(), 300, 1e-6)
        .unwrap()
        .epsilon;
    for s in [
        Strategy::band(1, None).unwrap(),
        Strategy::band(1, Some(&[2.5])).unwrap(),
        Strategy::matrix(toeplitz(&[1.0], 300)).unwrap(),
    ] {
        let a = MinSep::new(s, 0.02, 0.9, 300, None)
            .unwrap()
            .epsilon(1e-6)
            .unwrap();
        assert_eq!((a.bracket.lower, a.bracket.upper), (sgd.lower, sgd.upper));
        assert_eq!(a.participations, 300);
    }
}

#[test]
fn the_explicit_banded_matrix_equals_its_toeplitz_family() {
    for (c, t) in [
        (&[1.0, 0.5, 0.25][..], 61),
        (&[1.0, -0.3][..], 40),
        (&[0.7, 0.7, 0.7, 0.7][..], 33),
    ] {
        let at = |s: Strategy| {
            MinSep::new(s, 0.05, 1.1, t as u64, None)
                .unwrap()
                .epsilon(1e-5)
                .unwrap()
        };
        let band = at(Strategy::band(c.len(), Some(c)).unwrap());
        let full = at(Strategy::matrix(toeplitz(c, t)).unwrap());
        let rel = |x: f64, y: f64| (x - y).abs() / y;
        assert!(
            rel(band.bracket.upper, full.bracket.upper) < 1e-9,
            "{c:?}: {band:?} vs {full:?}"
        );
        assert!(rel(band.bracket.lower, full.bracket.lower) < 1e-9, "{c:?}");
        assert_eq!(band.worst_partition, 0);
    }
}

#[test]
fn band_b_over_whole_rounds_is_the_bands_reduction() {
    // T a multiple of b: every column of the worst partition is whole (norm 1), so the run is
    // DP-SGD over T/b steps at the partition's rate — the `--bands` reduction.
    let a = MinSep::new(
        Strategy::band(4, Some(&[1.0, 0.5, 0.25, 0.125])).unwrap(),
        0.017,
        1.1,
        4000,
        None,
    )
    .unwrap()
    .epsilon(1e-5)
    .unwrap();
    let sgd = pld::epsilon(Sgm::new(0.017, 1.1).unwrap(), 1000, 1e-5)
        .unwrap()
        .epsilon;
    assert_eq!((a.bracket.lower, a.bracket.upper), (sgd.lower, sgd.upper));
    // One step more: a 1001st participation with a one-row column (norm 1/‖c‖): between.
    let more = MinSep::new(
        Strategy::band(4, Some(&[1.0, 0.5, 0.25, 0.125])).unwrap(),
        0.017,
        1.1,
        4001,
        None,
    )
    .unwrap()
    .epsilon(1e-5)
    .unwrap();
    let next = pld::epsilon(Sgm::new(0.017, 1.1).unwrap(), 1001, 1e-5)
        .unwrap()
        .epsilon;
    assert!(more.bracket.upper >= sgd.lower && more.bracket.lower <= next.upper);
    assert_eq!(more.composed.len(), 2);
}

#[test]
fn epsilon_grows_with_steps_and_falls_with_sigma() {
    let s = || Strategy::band(3, Some(&[1.0, 0.6, 0.2])).unwrap();
    let at = |sigma: f64, t: u64| {
        MinSep::new(s(), 0.05, sigma, t, None)
            .unwrap()
            .epsilon(1e-5)
            .unwrap()
            .bracket
    };
    let mut last = 0.0;
    for t in [30, 300, 3000, 30000] {
        let b = at(1.0, t);
        assert!(b.upper >= last, "T = {t}");
        last = b.lower;
    }
    let mut last = f64::INFINITY;
    for sigma in [0.7, 1.0, 1.5, 3.0] {
        let b = at(sigma, 3000);
        assert!(b.lower <= last, "sigma = {sigma}");
        last = b.upper;
    }
}

#[test]
fn pruned_partitions_never_hold_the_worst() {
    // A seeded banded matrix whose column norms vary: every partition composed on its own, the
    // largest upper end is the answer's.
    let mut u = super::uniform_from(67);
    let (t, b) = (24usize, 3usize);
    let rows: Vec<Vec<f64>> = (0..t)
        .map(|i| {
            (0..=i)
                .map(|j| if i - j < b { 0.2 + u() } else { 0.0 })
                .collect()
        })
        .collect();
    let norms: Vec<f64> = (0..t)
        .map(|j| {
            rows.iter()
                .map(|r| r.get(j).map_or(0.0, |x| x * x))
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    let top = norms.iter().copied().fold(0.0, f64::max);
    let run = MinSep::new(Strategy::matrix(rows).unwrap(), 0.1, 0.9, t as u64, None).unwrap();
    let a = run.epsilon(1e-5).unwrap();
    let mut worst: f64 = 0.0;
    for r in 0..b {
        let phases: Vec<pld::Phase> = (r..t)
            .step_by(b)
            .map(|j| pld::Phase::new(Sgm::new(0.1, 0.9 * top / norms[j]).unwrap(), 1).unwrap())
            .collect();
        worst = worst.max(pld::epsilon_phases(&phases, 1e-5).unwrap().epsilon.upper);
    }
    assert!(
        (a.bracket.upper - worst).abs() <= 1e-9 * worst,
        "{} vs {worst}",
        a.bracket.upper
    );
}

#[test]
fn bad_strategies_are_refused_by_name() {
    let msg = |r: Result<Strategy, sgm_rdp::engine::Error>| r.unwrap_err().to_string();
    assert!(msg(Strategy::band(0, None)).contains("bands"));
    assert!(msg(Strategy::band(2, Some(&[1.0]))).contains("2 coefficients"));
    assert!(msg(Strategy::band(2, Some(&[0.0, 1.0]))).contains("diagonal"));
    assert!(msg(Strategy::band(2, Some(&[1.0, f64::NAN]))).contains("finite"));
    assert!(
        msg(Strategy::matrix(vec![vec![1.0, 2.0], vec![0.5, 1.0]])).contains("lower-triangular")
    );
    assert!(msg(Strategy::matrix(vec![])).contains("rows"));
    // Too few partitions for the bands: the columns would overlap.
    let e = MinSep::new(Strategy::band(4, None).unwrap(), 0.1, 1.0, 100, Some(3)).unwrap_err();
    assert!(e.to_string().contains("at most 3 bands"));
    // The matrix fixes T.
    let e = MinSep::new(
        Strategy::matrix(toeplitz(&[1.0], 5)).unwrap(),
        0.1,
        1.0,
        6,
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("5 rows"));
}

#[test]
fn long_runs_and_wide_bands_are_counted_not_listed() {
    // T = 10^9 steps with 10^6 bands: the sensitivities come as counts (a T-long list would be
    // 8 GB); the whole-column count and the one short last column.
    let run = MinSep::new(
        Strategy::band(1 << 20, None).unwrap(),
        1e-3,
        1.0,
        1_000_000_000,
        None,
    )
    .unwrap();
    let a = run.epsilon(1e-3).unwrap();
    assert_eq!(a.participations, 1_000_000_000u64.div_ceil(1 << 20));
    assert!(a.bracket.lower > 0.0 && a.bracket.lower <= a.bracket.upper);
    let p = Split::poisson(
        Strategy::band(1000, Some(&vec![1.0; 1000])).unwrap(),
        1e-6,
        40.0,
        1_000_000_000,
    )
    .unwrap()
    .epsilon(1e-5);
    assert!(p.is_ok() || matches!(p, Err(sgm_rdp::engine::Error::PldBudget { .. })));
    assert!(Strategy::band((1 << 20) + 1, None).is_err());
}

#[test]
fn the_identity_is_dp_sgd_under_every_participation() {
    // C = I (one band): min-sep over one partition and Poisson are DP-SGD, balls-in-bins and
    // cyclic bins are random allocation — both ends of each bracket, since one band is no split.
    let id = || Strategy::matrix(toeplitz(&[1.0], 60)).unwrap();
    let sgd = pld::epsilon(Sgm::new(0.05, 1.2).unwrap(), 60, 1e-5)
        .unwrap()
        .epsilon;
    for a in [
        MinSep::new(id(), 0.05, 1.2, 60, None)
            .unwrap()
            .epsilon(1e-5)
            .unwrap(),
        Split::poisson(id(), 0.05, 1.2, 60)
            .unwrap()
            .epsilon(1e-5)
            .unwrap(),
    ] {
        assert!(a.certified_lower);
        assert_eq!((a.bracket.lower, a.bracket.upper), (sgd.lower, sgd.upper));
    }
    let b = Split::balls_in_bins(id(), 1.2, 60, 20)
        .unwrap()
        .epsilon(1e-5)
        .unwrap();
    let alloc = pld::epsilon_phases(&[pld::Phase::allocation(1.2, 20, 1, 3).unwrap()], 1e-5)
        .unwrap()
        .epsilon;
    assert!(b.certified_lower);
    assert_eq!(
        (b.bracket.lower, b.bracket.upper),
        (alloc.lower, alloc.upper)
    );
    // Cyclic bins (one bin of 20 for the run, 3 steps in it): one round of one-in-20 random
    // allocation, a bin's 3 steps together (sigma/sqrt(3)), both ends.
    let c = Split::cyclic_bins(Strategy::band(1, None).unwrap(), 1.2, 60, 20)
        .unwrap()
        .epsilon(1e-5)
        .unwrap();
    let round = pld::epsilon_phases(
        &[pld::Phase::allocation(1.2 / 3f64.sqrt(), 20, 1, 1).unwrap()],
        1e-5,
    )
    .unwrap()
    .epsilon;
    assert!(c.certified_lower);
    assert_eq!(
        (c.bracket.lower, c.bracket.upper),
        (round.lower, round.upper)
    );
}

/// δ(ε) of the Gaussian mechanism of sensitivity/σ ratio μ, in closed form (Balle, Wang,
/// "Improving the Gaussian Mechanism for Differential Privacy", ICML 2018, Theorem 8):
/// Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ), with Φ(x) = erfc(−x/√2)/2 (libm: independent of the PLD).
fn gaussian_delta(mu: f64, eps: f64) -> f64 {
    let phi = |x: f64| 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2);
    phi(mu / 2.0 - eps / mu) - libm::exp(eps) * phi(-mu / 2.0 - eps / mu)
}

#[test]
fn overlapping_columns_are_one_gaussian_mechanism_in_closed_form() {
    // The identity with every step in one partition (k = 1), q = 1: sensitivity √T exactly;
    // BLT and the tree at q = 1: their sensitivities by brute force here (the dense |C|, every
    // complete block), then the bracket against the closed form at its ends.
    let blt_c = |t: usize| -> Vec<f64> {
        (0..t)
            .map(|m| {
                if m == 0 {
                    1.0
                } else {
                    0.3 * 0.9f64.powi(m as i32 - 1) + 0.1 * 0.5f64.powi(m as i32 - 1)
                }
            })
            .collect()
    };
    let t = 40usize;
    let k = 7u64;
    let dense = toeplitz(&blt_c(t), t);
    let col = |j: usize| {
        dense
            .iter()
            .map(|r| r.get(j).copied().unwrap_or(0.0))
            .collect::<Vec<_>>()
    };
    let top = col(0).iter().map(|x| x * x).sum::<f64>().sqrt();
    let sum_cols: Vec<f64> = (0..t)
        .map(|i| {
            (0..t)
                .step_by(k as usize)
                .map(|j| dense[i].get(j).copied().unwrap_or(0.0))
                .sum()
        })
        .collect();
    let blt_mu = sum_cols.iter().map(|x| x * x).sum::<f64>().sqrt() / top;
    // The tree over 40 steps, partition 0 of k = 7 (0, 7, …, 35): every complete dyadic block.
    let (mut tree_sq, mut w) = (0.0, 1usize);
    while w <= t {
        for a in 0..t / w {
            let n = (a * w..(a + 1) * w).filter(|j| j % 7 == 0).count() as f64;
            tree_sq += n * n;
        }
        w *= 2;
    }
    let tree_mu = tree_sq.sqrt() / ((t as f64).log2().floor() + 1.0).sqrt();
    let cases = [
        (Strategy::band(1, None).unwrap(), 1u64, (t as f64).sqrt()),
        (Strategy::blt(&[(0.9, 0.3), (0.5, 0.1)]).unwrap(), k, blt_mu),
        (Strategy::Tree, k, tree_mu),
    ];
    for (s, k, mu_over_sigma) in cases {
        for sigma in [2.0, 5.0, 20.0] {
            let run = Whole::new(s.clone(), 1.0, sigma, t as u64, k).unwrap();
            let a = run.epsilon(1e-6).unwrap();
            assert!(a.certified_lower, "{s:?}: q = 1, C >= 0 is exact");
            let mu = mu_over_sigma / sigma;
            let (lo, hi) = (a.bracket.lower, a.bracket.upper);
            assert!(
                gaussian_delta(mu, hi) <= 1e-6 * (1.0 + 1e-9)
                    && gaussian_delta(mu, lo) >= 1e-6 * (1.0 - 1e-9),
                "{s:?} sigma {sigma}: [{lo}, {hi}] vs closed form {} / {}",
                gaussian_delta(mu, hi),
                gaussian_delta(mu, lo)
            );
            assert!((a.sensitivity.unwrap() - mu_over_sigma).abs() < 1e-9 * mu_over_sigma);
        }
    }
    // The BLT family equals its dense explicit matrix (the same |C|, two code paths).
    let a = Whole::new(
        Strategy::blt(&[(0.9, 0.3), (0.5, 0.1)]).unwrap(),
        0.5,
        3.0,
        40,
        7,
    )
    .unwrap()
    .epsilon(1e-5)
    .unwrap();
    let b = Whole::new(Strategy::matrix(dense).unwrap(), 0.5, 3.0, 40, 7)
        .unwrap()
        .epsilon(1e-5)
        .unwrap();
    assert!((a.bracket.upper - b.bracket.upper).abs() < 1e-9 * b.bracket.upper);
    assert!(
        !a.certified_lower && a.bracket.lower == 0.0,
        "q < 1: an upper bound only"
    );
}

#[test]
fn overlapping_columns_grow_with_steps_and_participations_and_fall_with_sigma() {
    for s in [
        Strategy::blt(&[(0.95, 0.2)]).unwrap(),
        Strategy::Tree,
        Strategy::band(6, Some(&[1.0, 0.5, -0.3, 0.2, 0.1, 0.05])).unwrap(),
    ] {
        let eps = |sigma: f64, t: u64, k: u64| {
            Whole::new(s.clone(), 1.0, sigma, t, k)
                .unwrap()
                .epsilon(1e-5)
                .unwrap()
                .bracket
                .upper
        };
        let base = eps(4.0, 512, 16);
        assert!(eps(4.0, 1024, 16) > base, "{s:?}: more steps");
        assert!(eps(4.0, 512, 8) > base, "{s:?}: more participations");
        assert!(eps(4.4, 512, 16) < base, "{s:?}: more noise");
        // Single participation (k >= T): one column, the Gaussian mechanism at sigma.
        let g = pld::epsilon(Sgm::new(1.0, 4.0).unwrap(), 1, 1e-5)
            .unwrap()
            .epsilon
            .upper;
        assert!((eps(4.0, 512, 512) - g).abs() < 1e-6 * g, "{s:?}");
    }
    // Not banded under Poisson or balls-in-bins: the operator-norm route, DP-SGD (or random
    // allocation) at sigma/lambda, an upper bound.
    for s in [Strategy::Tree, Strategy::blt(&[(0.9, 0.3)]).unwrap()] {
        let lambda = s.op_norm_bound(100).unwrap();
        let a = Split::poisson(s.clone(), 0.1, 8.0, 100)
            .unwrap()
            .epsilon(1e-5)
            .unwrap();
        let sgd = pld::epsilon(Sgm::new(0.1, 8.0 / lambda).unwrap(), 100, 1e-5)
            .unwrap()
            .epsilon;
        assert_eq!(
            (a.op_norm, a.bracket.upper, a.bracket.lower),
            (Some(lambda), sgd.upper, 0.0)
        );
        let b = Split::balls_in_bins(s, 8.0, 100, 10)
            .unwrap()
            .epsilon(1e-5)
            .unwrap();
        assert!(b.op_norm.is_some() && !b.certified_lower);
    }
    for bad in [[(0.0, 0.3)], [(1.2, 0.3)], [(0.5, -0.1)], [(0.5, f64::NAN)]] {
        assert!(Strategy::blt(&bad).is_err(), "{bad:?}");
    }
}

#[test]
fn the_monte_carlo_estimate_agrees_with_the_pattern_by_pattern_reference() {
    // tests/reference/matrix_reference.py sums the loss over every one of the t^E patterns
    // explicitly, with the full C; the engine's estimate sums them by a forward pass over
    // epochs, with its own draws. Both are estimates: their difference must sit within
    // their combined standard errors (five of them), and the engine's 99 % interval must be
    // about 2.6 of its own.
    use sgm_rdp::engine::matrix::mc::{BinsMc, SEED};
    let lines: Vec<Value> = include_str!("../reference/matrix.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut checked = 0;
    for v in &lines {
        let joins = v["participation"].as_str().unwrap();
        let (cyclic, per) = match joins.split_once(':') {
            Some(("balls-in-bins", p)) => (false, p.parse::<u64>().unwrap()),
            Some(("cyclic-bins", p)) => (true, p.parse::<u64>().unwrap()),
            _ => continue,
        };
        // (The estimate takes band: strategies; the BLT and tree cyclic cases check the bound.)
        if !v["strategy"].as_str().unwrap().starts_with("band:") {
            continue;
        }
        let (sigma, t) = (v["sigma"].as_f64().unwrap(), v["steps"].as_u64().unwrap());
        let mc = BinsMc::new(&strategy_of(v), t, per, cyclic, 200_000, SEED).unwrap();
        for (i, e) in v["epsilon"].as_array().unwrap().iter().enumerate() {
            let e = e.as_f64().unwrap();
            let (r, rse) = (
                v["delta_mc"][i].as_f64().unwrap(),
                v["se"][i].as_f64().unwrap(),
            );
            let d = mc.delta(sigma, e);
            let se = (d.high - d.value) / 2.575_829;
            assert!(
                (d.value - r).abs() <= 5.0 * (se * se + rse * rse).sqrt(),
                "{} at eps {e}: engine {} ± {se} vs reference {r} ± {rse}",
                v["name"],
                d.value
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 25);
}

/// BLT's first column c(0) = 1, c(m) = 0.3·0.9^(m−1) over t steps.
fn blt_c(t: usize) -> Vec<f64> {
    (0..t)
        .map(|m| {
            if m == 0 {
                1.0
            } else {
                0.3 * 0.9f64.powi(m as i32 - 1)
            }
        })
        .collect()
}

/// The tree's node matrix over t steps: one row per complete dyadic block.
fn tree_rows(t: usize) -> Vec<Vec<f64>> {
    let mut tree = Vec::new();
    let mut w = 1;
    while w <= t {
        for a in 0..t / w {
            tree.push((0..t).map(|j| if j / w == a { 1.0 } else { 0.0 }).collect());
        }
        w *= 2;
    }
    tree
}

/// The common-mode split (cyclic bins) for BLT and the tree holds against the Gram matrix of
/// dense C's modes (each bin's columns summed, then dot products), checked by a Cholesky
/// factorization written here — independent of the engine's running sums, block counts and
/// factorization; a 1 % smaller split fails the check.
#[test]
fn common_mode_splits_hold_against_dense_matrices() {
    use sgm_rdp::engine::matrix::common::{self, CommonMode};
    let gram = |c: &[Vec<f64>], t: usize| -> Vec<Vec<f64>> {
        // (Rows may stop at the diagonal.)
        let cols = c.iter().map(Vec::len).max().unwrap_or(0);
        let m: Vec<Vec<f64>> = (0..t)
            .map(|j| {
                c.iter()
                    .map(|r| (j..cols).step_by(t).filter_map(|p| r.get(p)).sum())
                    .collect()
            })
            .collect();
        (0..t)
            .map(|j| {
                (0..t)
                    .map(|k| m[j].iter().zip(&m[k]).map(|(a, b)| a * b).sum())
                    .collect()
            })
            .collect()
    };
    // a²·11ᵀ + s²·I − G positive semidefinite (a tiny slack for rounding).
    let holds = |m: CommonMode, g: &[Vec<f64>]| {
        let n = g.len();
        let mut l = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in 0..=i {
                let d = m.a * m.a
                    + if i == j {
                        m.s * m.s * (1.0 + 1e-9)
                    } else {
                        0.0
                    }
                    - g[i][j];
                let x = d - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
                if i == j {
                    if x <= 0.0 {
                        return false;
                    }
                    l[i][i] = x.sqrt();
                } else {
                    l[i][j] = x / l[j][j];
                }
            }
        }
        true
    };
    // BLT over 40 steps in 5 bins.
    let (steps, t) = (40usize, 5usize);
    let c = blt_c(steps);
    let top = c.iter().map(|x| x * x).sum::<f64>().sqrt();
    let cn: Vec<f64> = c.iter().map(|x| x / top).collect();
    let m = common::common_mode_toeplitz(&cn, t as u64).unwrap();
    let g = gram(&toeplitz(&cn, steps), t);
    assert!(holds(m, &g), "{m:?}");
    let most = g.iter().map(|r| r.iter().sum::<f64>()).fold(0.0, f64::max);
    assert!(m.s * m.s < most && m.a > 0.0, "{m:?} vs {most}");
    // The tree over 32 steps in 4 bins (6 levels: column norm √6).
    let (steps, t) = (32usize, 4usize);
    let top = 6f64.sqrt();
    let rows: Vec<Vec<f64>> = tree_rows(steps)
        .into_iter()
        .map(|r| r.into_iter().map(|x| x / top).collect())
        .collect();
    let m = common::common_mode_tree(steps as u64, t as u64, top).unwrap();
    let g = gram(&rows, t);
    assert!(holds(m, &g), "{m:?}");
    let less = CommonMode {
        a: m.a * 0.99,
        s: m.s * 0.99,
    };
    assert!(!holds(less, &g));
}

/// The largest singular value of a dense matrix by power iteration on CᵀC (an estimate from
/// below, converged here to 1e-12): independent of the engine's Schur-test bound.
fn spectral_norm(rows: &[Vec<f64>], cols: usize) -> f64 {
    let mut v = vec![1.0; cols];
    let mut norm = 0.0;
    for _ in 0..5000 {
        let cv: Vec<f64> = rows
            .iter()
            .map(|r| r.iter().zip(&v).map(|(a, b)| a * b).sum())
            .collect();
        let mut w = vec![0.0; cols];
        for (r, x) in rows.iter().zip(&cv) {
            for (j, a) in r.iter().enumerate() {
                w[j] += a * x;
            }
        }
        let n = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        v = w.iter().map(|x| x / n).collect();
        norm = n.sqrt();
    }
    norm
}

#[test]
fn the_operator_norm_bound_is_above_the_spectral_norm_and_near_it_for_toeplitz() {
    let t = 64usize;
    let col_norm = |rows: &[Vec<f64>], j: usize| {
        rows.iter()
            .map(|r| r.get(j).copied().unwrap_or(0.0).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let (blt_c, tree) = (blt_c(t), tree_rows(t));
    let cases: Vec<(Strategy, Vec<Vec<f64>>)> = vec![
        (
            Strategy::band(4, Some(&[1.0, 0.5, 0.25, 0.125])).unwrap(),
            toeplitz(&[1.0, 0.5, 0.25, 0.125], t),
        ),
        (
            Strategy::band(2, Some(&[1.0, -0.4])).unwrap(),
            toeplitz(&[1.0, -0.4], t),
        ),
        (Strategy::blt(&[(0.9, 0.3)]).unwrap(), toeplitz(&blt_c, t)),
        (Strategy::Tree, tree),
    ];
    for (s, dense) in cases {
        let top = (0..t).map(|j| col_norm(&dense, j)).fold(0.0, f64::max);
        let exact = spectral_norm(&dense, t) / top;
        let bound = s.op_norm_bound(t as u64).unwrap();
        assert!(
            bound >= exact * (1.0 - 1e-9),
            "{s:?}: bound {bound} below {exact}"
        );
        if s.is_banded() {
            // Toeplitz: the symbol's bound, tight as T grows (within 2 % at T = 64 here).
            assert!(bound <= exact * 1.02, "{s:?}: bound {bound} vs {exact}");
        }
    }
}
