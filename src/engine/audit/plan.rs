//! Planning an audit: what a typical audit of a run shows, by the number of canaries, if the
//! attack is as strong as the run's certificate allows and the run's trade-off is the
//! Gaussian one at its certified μ (members' scores N(μ, 1), non-members' N(0, 1), at their
//! median layout: the i-th of n scores at the normal quantile (i + ½)/n). Estimates of an
//! audit's outcome, not bounds; the ceiling of a one-run audit is exact (every guess right).

use super::one_run::one_run_epsilon;
use super::{cp_lower, cp_upper, eps_of, gaussian_epsilon_lower, grid, isf, mu_of};
use crate::engine::error::Error;
use crate::engine::math::{exp, powf};
use crate::engine::pld::gauss::ln_phi_bar;
use serde::Serialize;

/// What a typical audit with `canaries` shows (two-sample: that many members and as many
/// non-members; one run: that many canaries in all, half of them members).
#[derive(Debug, Clone, Serialize)]
pub struct PlanRow {
    pub canaries: u64,
    /// Two-sample Clopper–Pearson ε lower bound (all thresholds, union bound).
    pub clopper_pearson: f64,
    /// Two-sample μ lower bound and ε of the Gaussian mechanism there.
    pub gdp_mu: f64,
    pub gdp_epsilon: f64,
    /// One run with `canaries` canaries: Steinke–Nasr–Jagielski's ε lower bound.
    pub one_run: f64,
    /// Its ceiling: every one of the canaries/2 member guesses right, the guess set fixed in
    /// advance (no union bound) — no attack on this many canaries can show more.
    pub one_run_ceiling: f64,
}

/// An audit plan for a run with certified ε at δ and Gaussian-shaped trade-off at μ.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub mu: f64,
    pub epsilon: f64,
    pub delta: f64,
    pub significance: f64,
    /// The share of the certified ε the audit should be able to show.
    pub fraction: f64,
    pub rows: Vec<PlanRow>,
    /// Fewest members (and as many non-members) for a two-sample Clopper–Pearson bound of
    /// fraction·ε (None: not within 10⁷).
    pub two_sample_canaries: Option<u64>,
    /// Fewest canaries of a one-run audit for a bound of fraction·ε (None: not within 10⁷).
    pub one_run_canaries: Option<u64>,
}

/// Members above the non-members' j-th largest score, n of each at the median layout.
fn members_above(n: u64, mu: f64, j: u64) -> (f64, u64) {
    let t = isf((j as f64 - 0.5) / n as f64);
    // Member i scores μ + Φ⁻¹((i + ½)/n) > t ⇔ (i + ½)/n > Φ(t − μ).
    let c = (1.0 - exp(ln_phi_bar(t - mu))) * n as f64 - 0.5;
    let below = if c < 0.0 {
        0
    } else {
        (c.floor() as u64 + 1).min(n)
    };
    (t, n - below)
}

/// The two-sample bounds of a typical audit with n members and n non-members (the audit's
/// own tests: the ranks of the grid, its union bound).
fn two_sample(n: u64, mu: f64, delta: f64, alpha: f64) -> (f64, f64) {
    let ranks = grid(n);
    let sig = alpha / (2.0 * ranks.len() as f64);
    let (mut eps, mut m) = (0.0f64, 0.0f64);
    for j in ranks {
        let (_, tp) = members_above(n, mu, j);
        let (tpr_lo, fpr_hi) = (cp_lower(tp, n, sig), cp_upper(j - 1, n, sig));
        eps = eps.max(eps_of(tpr_lo, fpr_hi, delta));
        m = m.max(mu_of(tpr_lo, fpr_hi));
    }
    (eps, m)
}

/// The one-run bound of a typical audit with m canaries (m/2 members, scores at the median
/// layout): for each k of the grid the top k scores are guessed "member", the members among
/// them counted in expectation (rounded down).
fn one_run(m: u64, mu: f64, delta: f64, alpha: f64) -> f64 {
    let n = (m / 2) as f64;
    let tests = grid(m);
    let a_test = alpha / tests.len() as f64;
    let tail = |z: f64| exp(ln_phi_bar(z));
    let mut best = 0.0f64;
    for k in tests {
        // The threshold t with n·(Φ̄(t − μ) + Φ̄(t)) = k, by bisection.
        let (mut lo, mut hi) = (-40.0f64, 40.0f64);
        for _ in 0..100 {
            let t = 0.5 * (lo + hi);
            if n * (tail(t - mu) + tail(t)) > k as f64 {
                lo = t;
            } else {
                hi = t;
            }
        }
        let v = (n * tail(hi - mu)).floor().min(k as f64) as u64;
        best = one_run_epsilon(m, k, v, a_test, delta, best);
    }
    best
}

/// The most a one-run audit of m canaries can show: all m/2 members guessed and right, the
/// guess set fixed in advance (no union bound).
pub fn ceiling(m: u64, significance: f64, delta: f64) -> f64 {
    one_run_epsilon(m, m / 2, m / 2, significance, delta, 0.0)
}

/// The plan: typical bounds at 10² … 10⁶ canaries and the fewest canaries for `fraction` of
/// the certified ε by each kind of audit.
pub fn plan(
    mu: f64,
    epsilon: f64,
    delta: f64,
    significance: f64,
    fraction: f64,
) -> Result<Plan, Error> {
    let bad = |m: String| Err(Error::Audit(m));
    if !(mu.is_finite() && mu > 0.0) {
        return bad(format!("mu must be a finite number > 0, got {mu}"));
    }
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::Epsilon(epsilon));
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(Error::Delta(delta));
    }
    if !(significance > 0.0 && significance < 0.5) {
        return bad(format!(
            "significance must be in (0, 0.5), got {significance}"
        ));
    }
    if !(fraction > 0.0 && fraction <= 1.0) {
        return bad(format!("fraction must be in (0, 1], got {fraction}"));
    }
    let rows = [100u64, 1_000, 10_000, 100_000, 1_000_000]
        .iter()
        .map(|&n| {
            let (cp, gmu) = two_sample(n, mu, delta, significance);
            PlanRow {
                canaries: n,
                clopper_pearson: cp,
                gdp_mu: gmu,
                gdp_epsilon: gaussian_epsilon_lower(gmu, delta),
                one_run: one_run(n, mu, delta, significance),
                one_run_ceiling: ceiling(n, significance, delta),
            }
        })
        .collect();
    let goal = fraction * epsilon;
    // n = 10^(i/8), i = 16 … 56: the fewest on that grid reaching the goal.
    let grid = |i: u32| powf(10f64, i as f64 / 8.0).round() as u64;
    let two_sample_canaries = (16..=56)
        .map(grid)
        .find(|&n| two_sample(n, mu, delta, significance).0 >= goal);
    let one_run_canaries = (16..=56).map(grid).find(|&m| {
        // Not even the ceiling: skip the typical audit's cost.
        ceiling(m, significance, delta) >= goal && one_run(m, mu, delta, significance) >= goal
    });
    Ok(Plan {
        mu,
        epsilon,
        delta,
        significance,
        fraction,
        rows,
        two_sample_canaries,
        one_run_canaries,
    })
}
