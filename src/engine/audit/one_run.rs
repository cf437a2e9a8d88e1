//! One-run audits: m canaries, each trained on with probability ½ independently, in one
//! training run; the auditor guesses "member" for some of them from the trained model alone.
//! Steinke–Nasr–Jagielski's p-value for the number of correct guesses under an (ε, δ)-DP
//! claim, and Mahloujifar–Melis–Chaudhuri's recursion under an f-DP claim (the Gaussian
//! family); see the module above for the references.

use super::binomial::{binomial_sf, ln_pmf};
use super::{gaussian_epsilon_lower, grid, isf, OneRun, Scores};
use crate::engine::math::{exp, ln};
use crate::engine::pld::gauss::ln_phi_bar;

fn logistic(e: f64) -> f64 {
    1.0 / (1.0 + exp(-e))
}

fn logit(p: f64) -> f64 {
    ln(p / (1.0 - p))
}

/// The p-value of `correct` right among `guesses` guesses of m canaries under an (ε, δ)-DP
/// claim (Steinke, Nasr, Jagielski, NeurIPS 2023, Theorem 3.1 / Proposition 5.2):
/// β + 2mδ·max_{1≤i≤v} P(v − i ≤ B < v)/i with β = P(B ≥ v), B ~ Bin(guesses, e^ε/(1+e^ε)),
/// capped at 1.
///
/// The maximum over i is over the averages of the pmf on windows [v − i, v − 1]; going down
/// from v − 1 the pmf rises to its mode and falls after it, so once past the mode a term at
/// or below the running average ends the search (every later average is smaller). Terms
/// below e⁻⁴⁶⁰ of the window's largest are skipped (counted in i, their mass taken as 0).
pub fn one_run_p_value(m: u64, guesses: u64, correct: u64, eps: f64, delta: f64) -> f64 {
    let (k, v) = (guesses, correct);
    let q = logistic(eps);
    let beta = binomial_sf(v as i64, k, q);
    if delta == 0.0 || v == 0 {
        return beta.min(1.0);
    }
    let mode = (((k + 1) as f64 * q).floor() as u64).min(k);
    let top = (v - 1).min(mode);
    let l_ref = ln_pmf(top, k, q);
    let rel = |j: u64| exp(ln_pmf(j, k, q) - l_ref);
    // Skip the window's start where the pmf is negligible (v − 1 far above the mode).
    let mut j = v - 1;
    let mut skipped = 0u64;
    if j > mode && ln_pmf(j, k, q) - l_ref < -460.0 {
        let (mut lo, mut hi) = (mode, j); // ln_pmf(lo) − l_ref ≥ −460 > ln_pmf(hi) − l_ref
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if ln_pmf(mid, k, q) - l_ref >= -460.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        skipped = j - lo;
        j = lo;
    }
    let ratio = (1.0 - q) / q;
    let mut r = rel(j);
    let (mut sum, mut best) = (0.0f64, 0.0f64);
    let mut i = skipped;
    loop {
        i += 1;
        sum += r;
        let avg = sum / i as f64;
        best = best.max(avg);
        if (j <= mode && r <= avg) || j == 0 {
            break;
        }
        // pmf(j − 1) = pmf(j) · j/(k − j + 1) · (1 − q)/q.
        r *= j as f64 / (k - j + 1) as f64 * ratio;
        j -= 1;
    }
    (beta + 2.0 * m as f64 * delta * best * exp(l_ref)).min(1.0)
}

/// The largest ε (above `floor`) whose (ε, δ)-DP claim `correct` of `guesses` right guesses
/// among m canaries reject at significance `alpha` (`floor` when none does): the p-value
/// grows with ε, so by bisection, returning the end at which the claim is still rejected.
pub fn one_run_epsilon(
    m: u64,
    guesses: u64,
    correct: u64,
    alpha: f64,
    delta: f64,
    floor: f64,
) -> f64 {
    let (k, v) = (guesses, correct);
    if v == 0 || 2 * v <= k {
        return floor;
    }
    let p = |e: f64| one_run_p_value(m, k, v, e, delta);
    if p(floor) > alpha {
        return floor;
    }
    // Above the pure-DP root no claim is rejected: at q = v/k, P(B ≥ v) ≥ ½ (v is the
    // median); with every guess right, P(B ≥ k) = q^k = α at q = α^(1/k).
    let mut hi = if v < k {
        logit(v as f64 / k as f64)
    } else {
        logit(exp(ln(alpha) / k as f64)) + 1e-9
    };
    while p(hi) <= alpha && hi < 1e4 {
        hi = 2.0 * hi + 1.0;
    }
    let mut lo = floor;
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if p(mid) <= alpha {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-10 * (1.0 + lo) {
            break;
        }
    }
    lo
}

/// Whether `correct` right among `guesses` guesses of m canaries reject μ-GDP at
/// significance α: Mahloujifar, Melis, Chaudhuri (arXiv 2410.22235), the capped recursion
/// for the trade-off f = G_μ, with x ↦ Φ(Φ⁻¹(x) − μ) = Φ̄(Φ̄⁻¹(x) + μ).
fn fdp_rejects(m: u64, guesses: u64, correct: u64, alpha: f64, mu: f64) -> bool {
    let (k, v, mf) = (guesses as f64, correct, m as f64);
    let mut r = alpha * v as f64 / mf;
    let mut h = alpha * (k - v as f64) / mf;
    for i in (0..v).rev() {
        let g = exp(ln_phi_bar(isf(r) + mu));
        let h_new = h.max(g);
        if h_new == h {
            break;
        }
        r = (r + i as f64 / (k - i as f64) * (h_new - h)).min(1.0);
        h = h_new;
    }
    r + h > k / mf
}

/// The largest μ (above `floor`) whose μ-GDP claim the guesses reject at significance α
/// (`floor` when none is).
pub fn one_run_fdp_mu(m: u64, guesses: u64, correct: u64, alpha: f64, floor: f64) -> f64 {
    let rejects = |mu: f64| fdp_rejects(m, guesses, correct, alpha, mu);
    if correct == 0 || !rejects(floor.max(1e-9)) {
        return floor;
    }
    let mut hi = (2.0 * floor).max(1.0);
    while rejects(hi) && hi < 1e3 {
        hi *= 2.0;
    }
    let mut lo = floor.max(1e-9);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if rejects(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-10 * (1.0 + lo) {
            break;
        }
    }
    lo
}

/// Both one-run bounds over the guess sets "every score ≥ the k-th largest", k on the grid
/// up to m (the union bound is over the grid).
pub(super) fn one_run(s: &Scores, alpha: f64, delta: f64) -> (OneRun, OneRun) {
    // Merge the two descending lists, remembering who is a member.
    let (a, b) = (&s.members, &s.non_members);
    let m = (a.len() + b.len()) as u64;
    let mut merged: Vec<(f64, bool)> = Vec::with_capacity(m as usize);
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i] >= b[j]) {
            merged.push((a[i], true));
            i += 1;
        } else {
            merged.push((b[j], false));
            j += 1;
        }
    }
    // Members among the first i scores.
    let mut members_in = vec![0u64; merged.len() + 1];
    for (i, &(_, member)) in merged.iter().enumerate() {
        members_in[i + 1] = members_in[i] + member as u64;
    }
    let tests = grid(m);
    let a_test = alpha / tests.len() as f64;
    // (cheap bound, guesses, correct) per test: the k-th score's tie block goes in whole.
    let mut cands: Vec<(f64, u64, u64)> = tests
        .iter()
        .map(|&k| {
            let t = merged[k as usize - 1].0;
            let guesses = merged.partition_point(|x| x.0 >= t) as u64;
            let v = members_in[guesses as usize];
            let cheap = if 2 * v <= guesses {
                0.0
            } else if v < guesses {
                logit(v as f64 / guesses as f64)
            } else {
                logit(exp(ln(a_test) / guesses as f64))
            };
            (cheap, guesses, v)
        })
        .filter(|c| c.0 > 0.0)
        .collect();
    cands.sort_by(|x, y| y.0.total_cmp(&x.0));
    let count = tests.len() as u64;
    let mut sj = OneRun {
        epsilon: 0.0,
        mu: 0.0,
        canaries: m,
        guesses: 0,
        correct: 0,
        tests: count,
    };
    for &(cheap, k, v) in &cands {
        if cheap <= sj.epsilon {
            break;
        }
        let e = one_run_epsilon(m, k, v, a_test, delta, sj.epsilon);
        if e > sj.epsilon {
            (sj.epsilon, sj.guesses, sj.correct) = (e, k, v);
        }
    }
    let mut fdp = OneRun {
        guesses: 0,
        correct: 0,
        ..sj.clone()
    };
    fdp.epsilon = 0.0;
    for &(_, k, v) in &cands {
        // μ-GDP's best single guess is right with probability Φ(μ/2): a set no more precise
        // than that cannot reject μ-GDP at the best μ so far.
        if (v as f64 / k as f64) <= exp(ln_phi_bar(-fdp.mu / 2.0)) {
            continue;
        }
        let mu = one_run_fdp_mu(m, k, v, a_test, fdp.mu);
        if mu > fdp.mu {
            (fdp.mu, fdp.guesses, fdp.correct) = (mu, k, v);
        }
    }
    fdp.epsilon = gaussian_epsilon_lower(fdp.mu, delta);
    (sj, fdp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The p-value's window maximum against the plain O(v) sum over every window
    /// (jax-privacy's tests/auditing_test.py `_one_run_p_value_naive` checks its own the same
    /// way; this is our code on both sides, so the reference test vectors are in
    /// tests/reference/audit.jsonl).
    #[test]
    fn the_window_search_finds_the_largest_average() {
        for (m, k, v) in [
            (1000u64, 100u64, 90u64),
            (100, 10, 10),
            (1000, 100, 40),
            (20000, 5000, 3000),
            (10, 1, 1),
        ] {
            for eps in [0.0, 0.5, 1.0, 3.0] {
                for delta in [1e-6, 1e-3, 0.1] {
                    let q = logistic(eps);
                    let beta = binomial_sf(v as i64, k, q);
                    let (mut sum, mut best) = (0.0, 0.0f64);
                    for i in 1..=v {
                        sum += exp(ln_pmf(v - i, k, q));
                        best = best.max(sum / i as f64);
                    }
                    let want = (beta + 2.0 * m as f64 * delta * best).min(1.0);
                    let got = one_run_p_value(m, k, v, eps, delta);
                    assert!(
                        (got - want).abs() <= 1e-10 * want.max(1e-300) + 1e-300,
                        "{m} {k} {v} {eps} {delta}: {got} vs {want}"
                    );
                }
            }
        }
    }

    /// With every one of k guesses right and δ = 0 the bound is in closed form: q^k = α.
    #[test]
    fn all_right_gives_the_closed_form() {
        for k in [10u64, 100, 1000] {
            let e = one_run_epsilon(2 * k, k, k, 0.05, 0.0, 0.0);
            let q = exp(ln(0.05f64) / k as f64);
            assert!((e - logit(q)).abs() < 1e-8, "k {k}: {e} vs {}", logit(q));
        }
    }
}
