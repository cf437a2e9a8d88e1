//! Other accountants from the papers, side by side with the exact RDP route.
//!
//! Each route returns its ε for the same (q, σ, T, δ), or "n/a" with the reason.
//! Sources: Mironov–Talwar–Zhang (Theorem 11, Table 1, §4 tCDP); Dwork–Rothblum,
//! "Concentrated Differential Privacy", arXiv:1603.01887 (Thm 1.1
//! advanced composition, Thm 3.2/3.4 and Cor 3.1 for CDP); Chaudhuri, Imola, Machanavajjhala,
//! "Capacity Bounded Differential Privacy", NeurIPS 2019 (
//! capacity-bounded (lin, Rényi) bounds and the Laplace mechanism's RDP, eq. 4).

use super::accountant::{eps_from_rdp, Conversion, Run};
use super::bounds;
use super::error::Error;
use super::params::{check_delta, check_order, Sgm};
use super::rdp::Lattice;
use crate::engine::math::{exp, exp_m1, ln, ln_1p};
use serde::Serialize;

/// One route's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Route {
    /// A stable identifier for programs (`rdp_improved`, `rdp_classic`, `theorem11`,
    /// `abadi`, `bun`, `per_step_naive`, `per_step_advanced`, `cdp`); `name` is display text.
    pub id: &'static str,
    pub name: &'static str,
    /// Its ε, or None when the route does not apply.
    pub epsilon: Option<f64>,
    /// Why it does not apply, or a caveat.
    pub note: Option<String>,
}

/// A route; an ε that is not finite is "no finite guarantee": `epsilon: None` (null in
/// JSON and JS, as for a route that does not apply) with a note that says so.
fn route(
    id: &'static str,
    name: &'static str,
    epsilon: Option<f64>,
    note: Option<String>,
) -> Route {
    match epsilon {
        Some(e) if !e.is_finite() => Route {
            id,
            name,
            epsilon: None,
            note: Some(match note {
                Some(n) => format!("no finite guarantee (ε = ∞); {n}"),
                None => "no finite guarantee (ε = ∞)".into(),
            }),
        },
        _ => Route {
            id,
            name,
            epsilon,
            note,
        },
    }
}

/// Smallest ε over the orders where `bound` applies, composed over T steps.
fn bound_route(
    id: &'static str,
    name: &'static str,
    run: &Run,
    delta: f64,
    bound: fn(&Sgm, f64) -> Result<bounds::Bound, Error>,
) -> Result<Route, Error> {
    let t = run.steps() as f64;
    let mut best: Option<f64> = None;
    let mut reason = None;
    for &a in run.orders() {
        let b = bound(&run.sgm(), a)?;
        match &b.fails {
            None => {
                let e = eps_from_rdp(t * b.value, a, delta, Conversion::Improved).max(0.0);
                best = Some(best.map_or(e, |x: f64| x.min(e)));
            }
            Some(r) if reason.is_none() => reason = Some(r.clone()),
            _ => {}
        }
    }
    Ok(match best {
        Some(e) => route(id, name, Some(e), None),
        None => route(
            id,
            name,
            None,
            Some(format!("n/a: {}", reason.unwrap_or_default())),
        ),
    })
}

/// Per-step (ε₀, δ₀)-DP of the SGM from its exact per-step RDP `curve` at
/// the run's orders (improved conversion).
fn per_step_eps(run: &Run, curve: &[f64], delta0: f64) -> f64 {
    run.orders()
        .iter()
        .zip(curve)
        .map(|(&a, &r)| eps_from_rdp(r, a, delta0, Conversion::Improved).max(0.0))
        .fold(f64::INFINITY, f64::min)
}

/// Dwork–Rothblum, Theorem 1.1 (advanced composition): T-fold (ε₀, δ₀) is
/// (√(2T ln(1/δ′))·ε₀ + T·ε₀(e^{ε₀} − 1)/2, T·δ₀ + δ′); the split of δ between
/// δ₀ and δ′ is chosen (on a log grid) to minimize ε.
pub fn advanced_composition(eps0: f64, t: f64, delta_prime: f64) -> f64 {
    (2.0 * t * ln(1.0 / delta_prime)).sqrt() * eps0 + t * eps0 * exp_m1(eps0) / 2.0
}

/// Dwork–Rothblum, Theorems 3.2, 3.4 and Corollary 3.1: the Gaussian mechanism with σ is
/// (τ²/2, τ)-CDP, τ = 1/σ; T-fold is (Tτ²/2, √T·τ)-CDP, and a subgaussian tail gives
/// ε = μ + τ_T·√(2 ln(1/δ)).
pub fn cdp_gaussian(sigma: f64, t: f64, delta: f64) -> f64 {
    let tau = 1.0 / sigma;
    t * tau * tau / 2.0 + t.sqrt() * tau * (2.0 * ln(1.0 / delta)).sqrt()
}

/// Every route for (q, σ, T, δ).
pub fn compare(sgm: Sgm, steps: u64, delta: f64) -> Result<Vec<Route>, Error> {
    let delta = check_delta(delta)?;
    let run = Run::with_default_orders(sgm, steps)?;
    let t = steps as f64;
    // One per-step curve serves both conversions and all of Dwork–Rothblum's δ splits.
    let lat = run.lattice();
    let curve = run.curve_on(&lat);
    let mut out = Vec::new();
    for (id, name, conv) in [
        (
            "rdp_improved",
            "exact RDP, improved conversion",
            Conversion::Improved,
        ),
        (
            "rdp_classic",
            "exact RDP, classic conversion",
            Conversion::Classic,
        ),
    ] {
        let o = run.epsilon_on(&lat, &curve, delta, conv);
        out.push(route(
            id,
            name,
            Some(o.value),
            Some(format!("optimal α = {:.4}", o.alpha)),
        ));
    }
    out.push(bound_route(
        "theorem11",
        "Theorem 11 (Mironov–Talwar–Zhang), 2q²α/σ²",
        &run,
        delta,
        bounds::theorem11,
    )?);
    let mut abadi = bound_route(
        "abadi",
        "Abadi et al. (Table 1), an estimate",
        &run,
        delta,
        bounds::abadi,
    )?;
    if abadi.epsilon.is_some() {
        abadi.note =
            Some("an asymptotic estimate for q → 0 (leading term only), not a bound".into());
    }
    out.push(abadi);
    let mut bun = bound_route("bun", "Bun et al. (Table 1)", &run, delta, bounds::bun)?;
    if bun.epsilon.is_some() {
        bun.note = Some("fixed-size sample, replace-one adjacency".into());
    }
    out.push(bun);
    // Dwork–Rothblum's route: a per-step (ε₀, δ₀) guarantee, composed.
    let naive = t * per_step_eps(&run, &curve, delta / t);
    out.push(route(
        "per_step_naive",
        "per-step (ε₀, δ/T), naive composition (Dwork–Rothblum)",
        Some(naive),
        None,
    ));
    let mut best = f64::INFINITY;
    let mut split = None;
    for i in 1..40 {
        let f = i as f64 / 40.0; // share of δ spent on T·δ₀
        let e0 = per_step_eps(&run, &curve, f * delta / t);
        let e = advanced_composition(e0, t, (1.0 - f) * delta);
        if e < best {
            best = e;
            split = Some(f);
        }
    }
    out.push(route(
        "per_step_advanced",
        "per-step (ε₀, δ₀), advanced composition (Dwork–Rothblum, Thm 1.1)",
        Some(best),
        Some(match split {
            Some(f) => format!("T·δ₀ = {f:.3}·δ"),
            None => "every split of δ searched (T·δ₀ = 0.025 … 0.975 of δ) gives ε = ∞".into(),
        }),
    ));
    out.push(if sgm.q() == 1.0 {
        route(
            "cdp",
            "CDP (Dwork–Rothblum, Thm 3.2, 3.4, Cor 3.1)",
            Some(cdp_gaussian(sgm.sigma(), t, delta)),
            None,
        )
    } else {
        route(
            "cdp",
            "CDP (Dwork–Rothblum, Thm 3.2, 3.4, Cor 3.1)",
            None,
            Some("n/a: only for q = 1 (the plain Gaussian mechanism)".into()),
        )
    });
    Ok(out)
}

/// Mironov–Talwar–Zhang §4: the smallest ρ with per-step ε(α) ≤ ρα for all α ∈ (1, ω + 1) —
/// the SGM's (ρ, ω)-tCDP in RDP terms. Maximum of ε(α)/α on a fine log grid
/// of (1, ω + 1].
pub fn tcdp_rho(sgm: Sgm, omega: f64) -> Result<f64, Error> {
    tcdp_rho_on(&Lattice::new(sgm.q(), sgm.sigma()), omega)
}

/// [`tcdp_rho`] on the caller's lattice for (q, σ) (shared with the curve and ε).
pub(crate) fn tcdp_rho_on(lat: &Lattice, omega: f64) -> Result<f64, Error> {
    check_order(omega + 1.0)?;
    let n = 200;
    let (l0, l1) = (ln(1e-4f64), ln(omega));
    Ok((0..=n)
        .map(|i| 1.0 + exp(l0 + (l1 - l0) * i as f64 / n as f64))
        .map(|a| lat.rdp(a) / a)
        .fold(0.0, f64::max))
}

/// Chaudhuri et al., Table 1: the Gaussian mechanism's (lin, Rényi) bound
/// 1/(α−1)·ln(1 + √(2π)^{α−1}/σ^α) (a linear adversary; unsampled mechanism).
pub fn gaussian_lin_renyi(sigma: f64, alpha: f64) -> f64 {
    let am1 = alpha - 1.0;
    ln_1p(exp(
        am1 * ln((2.0 * std::f64::consts::PI).sqrt()) - alpha * ln(sigma)
    )) / am1
}

/// Chaudhuri et al., Table 1: the Laplace mechanism's (lin, Rényi) bound 1/(α−1)·ln(1 + 2^{α−1}ε^α).
pub fn laplace_lin_renyi(eps: f64, alpha: f64) -> f64 {
    let am1 = alpha - 1.0;
    ln_1p(exp(am1 * ln(2f64) + alpha * ln(eps))) / am1
}

/// Chaudhuri et al., eq. 4 (Mironov 2017): the Laplace mechanism's exact Rényi DP,
/// 1/(α−1)·ln(α/(2α−1)·e^{(α−1)ε} + (α−1)/(2α−1)·e^{−αε}).
pub fn laplace_renyi(eps: f64, alpha: f64) -> f64 {
    let am1 = alpha - 1.0;
    let a = alpha / (2.0 * alpha - 1.0);
    let b = am1 / (2.0 * alpha - 1.0);
    // ln(a e^{(α−1)ε} + b e^{−αε}) = (α−1)ε + ln(a + b e^{−(2α−1)ε})
    (am1 * eps + ln(a + b * exp(-(2.0 * alpha - 1.0) * eps))) / am1
}
