//! What the guarantee means for an attacker: the trade-off curve of a run, its μ-GDP
//! parameter with the fit, and noise calibrated to an attack-risk target.
//!
//! # The certified trade-off curve
//! A membership-inference test against one example is a hypothesis test between the
//! neighbouring output distributions; its false-positive rate α and false-negative rate
//! β obey β ≥ f(α) for the run's trade-off function f (Dong, Roth, Su, "Gaussian
//! Differential Privacy", JRSS-B 2022, Def. 2.1). Every certified point (ε, δ_up(ε)) of
//! the privacy profile (both directions: add/remove-one adjacency) gives two lines
//! below f (Kairouz, Oh, Viswanath, ICML 2015; Dong–Roth–Su Prop. 2.5):
//! β ≥ 1 − δ − e^ε·α and β ≥ e^{−ε}·(1 − δ − α). The maximum of these lines over a
//! finite profile is a convex, piecewise-linear, symmetric curve `f_lo ≤ f` — for the
//! SGM's asymmetric pair this is already the symmetrization of Dong–Roth–Su Def. F.1,
//! because the profile is the maximum over both directions. We keep it as its
//! complement c(α) = 1 − f_lo(α) = min over lines of A + B·α (A, B ≥ 0), which is
//! computed without cancellation near β = 1.
//!
//! # μ-GDP and its fit
//! G_μ(α) = Φ(Φ̄⁻¹(α) − μ). The run is μ-GDP on a range of α when f ≥ G_μ there, i.e.
//! μ ≥ Φ̄⁻¹(α) + Φ̄⁻¹(f(α)). On each linear piece of `f_lo`, G_μ (convex) lies below the
//! piece once it lies below both ends, so the **certified μ** is the maximum of
//! Φ̄⁻¹(α) − Φ̄⁻¹(c(α)) over the vertices of `f_lo` and the range's ends. Like gdpnum
//! (Gomez et al., "(ε,δ) Considered Harmful: Best Practices for Reporting
//! Differential Privacy Guarantees", arXiv 2503.10945) the range is α, β ≥ 10⁻¹⁰: no
//! finite profile certifies the extreme tails, and there the SGM is not Gaussian.
//! A **lower bound** on the same μ: if δ_lo(ε) > δ_μ'(ε) (the Gaussian's profile) for an ε
//! whose tangent point lies in the range, no μ' ≤ μ fits (see `mu_below`).
//! The **regret** (Gomez et al.) is the smallest Δ with f(α + Δ) − Δ ≤ G_μ(α) for all α:
//! 0 for a Gaussian curve, larger when the run's curve bends away from every Gaussian one.
//! It is read from the certified curve against the certified μ (a fit measure, not a
//! privacy bound), on 10⁴ points in α as gdpnum does, plus a log grid for small α.
//!
//! # Attack risk
//! * TPR at FPR b: TPR ≤ 1 − f_lo(b), refined around the minimizing ε.
//! * Advantage max(TPR − FPR) = δ(0) (total variation), certified by δ_up(0).
//!
//! Calibration to a risk target (Kulynych et al., "Attack-Aware Noise Calibration for
//! Differential Privacy", NeurIPS 2024, arXiv 2407.02191) searches σ or T on these
//! certified bounds only, so the answer never misses its target.

use super::discretize::z_of_tail;
use super::gauss::ln_phi_bar;
use super::{attack_tpr, profile, Bracket, ProfilePoint};
use crate::engine::error::Error;
use crate::engine::math::{exp, exp_m1, ln, ln_1p, powf};
use crate::engine::params::Sgm;
use crate::engine::search;
use serde::Serialize;

/// Smallest false-positive (and false-negative) rate the μ-GDP fit covers (gdpnum's).
pub const FPR_FLOOR: f64 = 1e-10;

/// Φ̄⁻¹(p) for p ∈ (0, 1), signed: [`z_of_tail`]'s bisection on ln Φ̄ for p ≤ ½.
pub(crate) fn isf(p: f64) -> f64 {
    if p > 0.5 {
        return -isf(1.0 - p);
    }
    if p <= 0.0 {
        return f64::INFINITY;
    }
    z_of_tail(p)
}

/// Φ̄⁻¹(p) from ln p (p ≤ ½), for tails far below f64's range: bisection on ln Φ̄,
/// returning the upper end (a z at least the true one).
pub(crate) fn isf_ln(ln_p: f64) -> f64 {
    if ln_p >= ln(0.5f64) {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while ln_phi_bar(hi) > ln_p {
        hi *= 2.0;
        if hi > 1e8 {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if ln_phi_bar(mid) > ln_p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-15 * hi {
            break;
        }
    }
    hi
}

/// One line c(α) = a + b·α of the complement 1 − f_lo.
#[derive(Clone, Copy, Debug)]
struct Line {
    a: f64,
    b: f64,
}

/// The certified trade-off curve of a profile, as the lower envelope of its lines.
#[derive(Clone, Debug)]
pub struct Tradeoff {
    /// Envelope lines in order of use as α grows (slopes decreasing).
    hull: Vec<Line>,
    /// α where line i+1 takes over from line i.
    breaks: Vec<f64>,
    /// The certified points (ε, δ_up) the lines come from, for β in logs (see
    /// [`Tradeoff::ln_beta`]).
    points: Vec<(f64, f64)>,
}

impl Tradeoff {
    /// The curve implied by certified profile points (their upper δ).
    pub fn from_profile(points: &[ProfilePoint]) -> Tradeoff {
        let mut lines = vec![Line { a: 1.0, b: 0.0 }];
        let mut kept = Vec::with_capacity(points.len());
        for p in points {
            let (e, d) = (p.epsilon, p.delta.upper.clamp(0.0, 1.0));
            if !e.is_finite() {
                continue;
            }
            kept.push((e, d));
            // β ≥ 1 − δ − e^ε α  ⇔  c ≤ δ + e^ε α.
            lines.push(Line { a: d, b: exp(e) });
            // β ≥ e^{−ε}(1 − δ − α)  ⇔  c ≤ (1 − e^{−ε}) + e^{−ε}(δ + α).
            let w = exp(-e);
            lines.push(Line {
                a: -exp_m1(-e) + w * d,
                b: w,
            });
        }
        // Lower envelope of lines with slopes ≥ 0: by decreasing slope, the steepest
        // first (it is the minimum at α = 0 among equals, and loses as α grows).
        lines.sort_by(|x, y| y.b.total_cmp(&x.b).then(x.a.total_cmp(&y.a)));
        let mut hull: Vec<Line> = Vec::new();
        let mut breaks: Vec<f64> = Vec::new();
        for l in lines {
            if let Some(last) = hull.last() {
                if last.b == l.b {
                    continue; // same slope, larger intercept: never below
                }
            }
            while let Some(&last) = hull.last() {
                // α where l (flatter) meets last (steeper).
                let x = (l.a - last.a) / (last.b - l.b);
                if x <= 0.0 {
                    // l is below last everywhere on α ≥ 0.
                    hull.pop();
                    breaks.pop();
                    continue;
                }
                if let Some(&prev) = breaks.last() {
                    if x <= prev {
                        hull.pop();
                        breaks.pop();
                        continue;
                    }
                }
                breaks.push(x);
                break;
            }
            hull.push(l);
        }
        // `breaks[i]` is where hull[i + 1] starts; the first line has no break before it.
        Tradeoff {
            hull,
            breaks,
            points: kept,
        }
    }

    /// c(α) = 1 − f_lo(α): an upper bound on the power (TPR) of any test at FPR α.
    pub fn power(&self, alpha: f64) -> f64 {
        self.power_on(self.breaks.partition_point(|&x| x < alpha), alpha)
    }

    /// [`Tradeoff::power`] on the envelope's line `i` (the one in use at `alpha`).
    fn power_on(&self, i: usize, alpha: f64) -> f64 {
        let l = self.hull[i];
        (l.a + l.b * alpha).min(1.0)
    }

    /// f_lo(α): a lower bound on the false-negative rate at false-positive rate α.
    pub fn beta(&self, alpha: f64) -> f64 {
        (1.0 - self.power(alpha)).max(0.0)
    }

    /// [`Tradeoff::beta`] for α read in ascending runs: each α's line found by walking on
    /// from the last α's (back to the first line where α falls), not by a search.
    fn beta_walk(&self) -> impl FnMut(f64) -> f64 + '_ {
        let (mut i, mut prev) = (0usize, f64::NEG_INFINITY);
        move |alpha: f64| {
            if alpha < prev {
                i = 0;
            }
            prev = alpha;
            while i < self.breaks.len() && self.breaks[i] < alpha {
                i += 1;
            }
            (1.0 - self.power_on(i, alpha)).max(0.0)
        }
    }

    /// Vertices (α, c) of the envelope inside [0, 1].
    fn vertices(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.breaks
            .iter()
            .filter(|&&x| x > 0.0 && x < 1.0)
            .map(move |&x| (x, self.power(x)))
    }

    /// ln f_lo(α) for α = e^`ln_alpha` ≤ ½, without cancellation or underflow: the
    /// maximum over the certified points' two lines, β ≥ 1 − δ − e^ε·α and
    /// β ≥ e^{−ε}(1 − δ − α), each in logs (−∞ where a line gives nothing).
    pub fn ln_beta(&self, ln_alpha: f64) -> f64 {
        let alpha = exp(ln_alpha);
        (self.points.iter()).fold(f64::NEG_INFINITY, |best, &p| {
            best.max(point_ln_beta(p, ln_alpha, alpha)) // β ≥ 0
        })
    }

    /// Whether [`Tradeoff::ln_beta`]`(ln_alpha)` ≥ `bound`: whether one of its terms is (the
    /// same terms, so the same answer), stopping at the first that is, and trying first the
    /// point at `hint` (set to the point that reached it): a bisection's reads that reach
    /// their bound are then mostly one point's two terms, not every point's.
    fn ln_beta_reaches(&self, ln_alpha: f64, bound: f64, hint: &mut usize) -> bool {
        if bound == f64::NEG_INFINITY {
            return true; // ln β ≥ −∞ (β ≥ 0), a term or none
        }
        let alpha = exp(ln_alpha);
        let n = self.points.len();
        for k in 0..n {
            let i = (*hint + k) % n;
            if point_ln_beta(self.points[i], ln_alpha, alpha) >= bound {
                *hint = i;
                return true;
            }
        }
        false
    }

    /// ln of the curve's equal-error point α* = f_lo(α*), from below (the bisection's lower
    /// end). f_lo ≤ f, so α* of f_lo is at most the run's own equal-error rate.
    fn ln_equal_error(&self) -> f64 {
        // α − f_lo(α) grows with α; at α = ½, f_lo(½) ≤ ½ (a line through (0, 1 − δ)).
        let (mut lo, mut hi) = (-1.0e6f64, ln(0.5f64));
        let mut hint = 0;
        if !self.ln_beta_reaches(lo, lo, &mut hint) {
            return lo; // beyond any run in the domain; μ from it is still an upper bound
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if self.ln_beta_reaches(mid, mid, &mut hint) {
                lo = mid;
            } else {
                hi = mid;
            }
            if hi - lo <= 1e-13 * lo.abs().max(1.0) {
                break;
            }
        }
        lo
    }

    /// Smallest μ with G_μ ≤ f_lo on α, β ≥ min(`floor`, α*) (certified for the run as
    /// f_lo ≤ f), where α* is the equal-error point α* = f_lo(α*).
    ///
    /// The range α, β ≥ `floor` (gdpnum's) is empty for a Gaussian curve with μ above
    /// 2·Φ̄⁻¹(`floor`) ≈ 12.72: every test there has α or β below the floor, so that range
    /// would certify any μ at all. It is therefore widened to always hold the equal-error
    /// point, where a μ-GDP curve has α = β = Φ̄(μ/2): beyond μ ≈ 12.72 the certified μ is
    /// 2·Φ̄⁻¹(α*), computed in logs (α* underflows f64 past μ ≈ 75). Below it the range
    /// is gdpnum's, unchanged.
    pub fn mu(&self, floor: f64) -> f64 {
        self.mu_on_range(floor).0
    }

    /// [`Tradeoff::mu`] and the range's floor min(`floor`, α*) it holds on (α* rounded up to
    /// the smallest positive f64 where it underflows: a narrower claim, still true).
    pub fn mu_on_range(&self, floor: f64) -> (f64, f64) {
        let ln_lo = self.ln_equal_error();
        if ln_lo < ln(floor) {
            // f_lo(floor) < floor: the equal-error point is the whole range.
            let mu = 2.0 * isf_ln(ln_lo);
            let at = exp(ln_lo).max(f64::from_bits(1));
            return (mu * (1.0 + 1e-12) + 1e-9, at);
        }
        (self.mu_gdpnum(floor), floor)
    }

    /// The certified μ on gdpnum's range α, β ≥ `floor` (non-empty here).
    fn mu_gdpnum(&self, floor: f64) -> f64 {
        let mut mu: f64 = 0.0;
        let mut at = |a: f64, c: f64| {
            if a >= floor && 1.0 - c >= floor {
                mu = mu.max(isf(a) - isf(c));
            }
        };
        at(floor, self.power(floor));
        for (a, c) in self.vertices() {
            at(a, c);
        }
        // Rounding of Φ̄⁻¹ and of the vertices: a margin far below any shown digit.
        mu + 1e-9
    }

    /// Regret of the fit (Gomez et al.): smallest Δ with f_lo(α + Δ) − Δ ≤ G_μ(α) on a
    /// grid of α (10⁴ uniform points as gdpnum, plus 200 log-spaced in [1e-10, 1e-2]).
    pub fn regret(&self, mu: f64) -> f64 {
        // f_lo(α + Δ) at every α of the grid, its line found by a walk along the envelope's
        // breaks (the grid ascends in two runs), not a search each: the same line as
        // [`Tradeoff::beta`]'s, so the same bits (the test
        // `the_regret_walk_reads_the_curve_as_beta_does`); 10,201 searches a halving were a
        // third of MNIST's fit.
        self.regret_reading(mu, || self.beta_walk())
    }

    /// [`Tradeoff::regret`] with f_lo read by `beta()`'s reader, made afresh for each Δ tried.
    fn regret_reading<F: FnMut(f64) -> f64>(&self, mu: f64, beta: impl Fn() -> F) -> f64 {
        let (xs, zs) = regret_grid();
        let g: Vec<f64> = (xs.iter().zip(zs))
            .map(|(&x, &z)| gaussian_beta_at(mu, x, || z))
            .collect();
        let holds = |d: f64| {
            let mut beta = beta();
            (xs.iter().zip(&g)).all(|(&x, &gx)| beta((x + d).min(1.0)) - d <= gx + 1e-15)
        };
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        if holds(0.0) {
            return 0.0;
        }
        while hi - lo > 1e-10 {
            let mid = 0.5 * (lo + hi);
            if holds(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        lo
    }
}

/// One certified point (ε, δ)'s bound on ln f_lo(α), α = e^`ln_alpha`: the larger of its two
/// lines, β ≥ 1 − δ − e^ε·α and β ≥ e^{−ε}(1 − δ − α), in logs (−∞ where neither gives
/// anything).
fn point_ln_beta((e, d): (f64, f64), ln_alpha: f64, alpha: f64) -> f64 {
    let first = 1.0 - d - exp(e + ln_alpha);
    let rest = 1.0 - d - alpha;
    let first = if first > 0.0 {
        ln(first)
    } else {
        f64::NEG_INFINITY
    };
    let rest = if rest > 0.0 {
        -e + ln(rest)
    } else {
        f64::NEG_INFINITY
    };
    first.max(rest)
}

/// The regret's grid of α ([`Tradeoff::regret`]: 10⁴ uniform points as gdpnum, plus 200
/// log-spaced in [1e-10, 1e-2]) and Φ̄⁻¹ at each, computed once per process (10⁴ inversions
/// were two thirds of a μ-GDP fit): a cache of a fixed table, so no answer depends on what
/// was asked before.
fn regret_grid() -> &'static (Vec<f64>, Vec<f64>) {
    static GRID: std::sync::OnceLock<(Vec<f64>, Vec<f64>)> = std::sync::OnceLock::new();
    GRID.get_or_init(|| {
        let mut xs: Vec<f64> = (0..=10_000).map(|i| i as f64 / 10_000.0).collect();
        xs.extend((0..=200).map(|i| powf(10f64, -10.0 + 8.0 * i as f64 / 200.0)));
        let zs = xs
            .iter()
            .map(|&x| if x > 0.0 && x < 1.0 { isf(x) } else { 0.0 })
            .collect();
        (xs, zs)
    })
}

/// G_μ(α) = Φ(Φ̄⁻¹(α) − μ), the Gaussian trade-off curve.
pub fn gaussian_beta(mu: f64, alpha: f64) -> f64 {
    gaussian_beta_at(mu, alpha, || isf(alpha))
}

/// [`gaussian_beta`] with Φ̄⁻¹(α) from `z` (asked only for α in (0, 1)): for callers that hold
/// it for a fixed α.
fn gaussian_beta_at(mu: f64, alpha: f64, z: impl FnOnce() -> f64) -> f64 {
    if alpha <= 0.0 {
        return 1.0;
    }
    if alpha >= 1.0 {
        return 0.0;
    }
    // Φ(z) = Φ̄(−z).
    exp(ln_phi_bar(mu - z()))
}

/// Largest μ' such that δ_lo(ε) > δ_{μ'}(ε) shows the run is not μ'-GDP on the range
/// α, β ≥ `floor`, for one profile point (0 when the point shows nothing).
///
/// If f ≥ G_μ' on the range and the attack that attains δ_f(ε) = max_α 1 − f(α) − e^ε α
/// uses α in the range, δ_f(ε) ≤ δ_μ'(ε). If it uses α < floor, δ_f(ε) ≤ 1 − f(floor) ≤
/// 1 − G_μ'(floor); if α > 1 − floor, δ_f(ε) ≤ floor. So δ_lo(ε) above all three rules
/// out μ' (δ_μ' and 1 − G_μ'(floor) grow with μ').
#[cfg(test)]
fn mu_below(eps: f64, delta_lo: f64, floor: f64) -> f64 {
    mu_below_at(eps, delta_lo, floor, isf(floor))
}

/// [`mu_below`] with Φ̄⁻¹(`floor`) given (`z_floor`, taken once for every μ' tried): one
/// point's bisection straight through ([`largest_mu_below`] takes it in two parts).
#[cfg(test)]
fn mu_below_at(eps: f64, delta_lo: f64, floor: f64, z_floor: f64) -> f64 {
    if delta_lo <= floor {
        return 0.0;
    }
    let shows = shows_below(eps, delta_lo, floor, z_floor);
    if !shows(1e-9) {
        return 0.0;
    }
    search::bisect((0.0, 64.0), shows, MU_HALVINGS, never).0
}

/// Whether one profile point (ε, `delta_lo`) rules out μ' ([`mu_below`]'s test): true below
/// the point's threshold, false above (δ_μ'(ε) and 1 − G_μ'(floor) grow with μ').
fn shows_below(eps: f64, delta_lo: f64, floor: f64, z_floor: f64) -> impl Fn(f64) -> bool {
    move |m: f64| {
        let d = super::gauss::delta_bracket(m, eps).upper;
        let edge = 1.0 - gaussian_beta_at(m, floor, || z_floor);
        d < delta_lo && edge < delta_lo
    }
}

/// The largest [`mu_below`] over the points. Each point's threshold is a bisection of
/// [`MU_HALVINGS`] halvings on (0, 64) ([`mu_below_at`]); here every point's bisection goes
/// on together, [`HALVINGS_A_ROUND`] halvings a round, and after each round a point whose
/// bracket ends at or below the largest lower end of any (so its own threshold is below that
/// point's) stops. The bisections are the ones run straight through (the same midpoints),
/// so the answer is the largest threshold of all (the test
/// `the_largest_mu_below_is_every_points_own_bisection`). One point at a time in ε order,
/// MNIST's 801 points raised the largest 512 times, each a whole bisection (its thresholds
/// rise slowly over hundreds of points): 42,272 tests of a μ'; now 8,594 (a scratch counter).
fn largest_mu_below(pts: &[ProfilePoint], floor: f64) -> f64 {
    let z_floor = isf(floor);
    let shows = |p: &ProfilePoint| shows_below(p.epsilon, p.delta.lower, floor, z_floor);
    let mut live: Vec<((f64, f64), &ProfilePoint)> = pts
        .iter()
        .filter(|p| p.delta.lower > floor && shows(p)(1e-9))
        .map(|p| ((0.0, 64.0), p))
        .collect();
    let mut best = 0.0f64;
    let mut done = 0;
    while done < MU_HALVINGS && !live.is_empty() {
        let round = HALVINGS_A_ROUND.min(MU_HALVINGS - done);
        for (bracket, p) in live.iter_mut() {
            *bracket = search::bisect(*bracket, shows(p), round, never);
        }
        done += round;
        best = live.iter().fold(best, |m, (b, _)| m.max(b.0));
        live.retain(|(b, _)| b.1 > best);
    }
    best
}

/// The halvings of [`mu_below_at`]'s bisection on (0, 64).
const MU_HALVINGS: usize = 80;

/// The halvings each point's bisection takes a round in [`largest_mu_below`].
const HALVINGS_A_ROUND: usize = 4;

/// A bisection that runs all its halvings.
fn never(_: f64, _: f64) -> bool {
    false
}

/// μ-GDP of a run with its bracket and fit.
#[derive(Debug, Clone, Serialize)]
pub struct GdpAnswer {
    /// [lower, upper]: the run is μ-GDP (for α, β ≥ `fpr_floor`) with μ = upper,
    /// and not with any μ below lower.
    pub mu: Bracket,
    /// Regret of the fit (0 = the run's curve is Gaussian).
    pub regret: f64,
    /// The range the μ covers: tests with FPR and FNR ≥ this ([`FPR_FLOOR`], or the
    /// equal-error rate where that is smaller: see [`Tradeoff::mu`]).
    pub fpr_floor: f64,
    /// Advantage bound max(TPR − FPR) = δ(0): [lower, upper].
    pub advantage: Bracket,
    /// Certified lower bounds on the false-negative rate at FPR 1e-10 … 0.1 and at
    /// α* = (1 − advantage)/2: (fpr, fnr_min).
    pub tradeoff: Vec<(f64, f64)>,
}

/// The profile the trade-off curve is read from: 801 points on [0, 1.2·ε_RDP(δ = 1e-12)]
/// (see [`super::attack_profile`] for the range).
fn dense_profile(sgm: Sgm, steps: u64) -> Result<Vec<ProfilePoint>, Error> {
    let top = super::attack_top(sgm, steps);
    let grid: Vec<f64> = (0..=800).map(|i| top * i as f64 / 800.0).collect();
    profile(sgm, steps, &grid)
}

/// μ-GDP of `steps` steps of the SGM (add/remove-one, Poisson sampling).
///
/// At q = 1 every step is the Gaussian mechanism, so the run is exactly √T/σ-GDP on every
/// test (Dong, Roth, Su, Cor. 3.3): that μ is returned (its f64 rounding widened outwards)
/// instead of the profile's fit, which is loose there beyond μ ≈ 16 (see [`Tradeoff::mu`]).
///
/// ```
/// use sgm_rdp::engine::{pld::fdp, Sgm};
/// let g = fdp::gdp(Sgm::new(1.0, 2.0)?, 400)?; // the Gaussian mechanism: μ = √400/2 = 10
/// assert!(g.mu.lower <= 10.0 && 10.0 <= g.mu.upper && g.mu.upper < 10.0 + 1e-9);
/// let mnist = fdp::gdp(Sgm::new(256.0 / 60000.0, 1.1)?, 14063)?;
/// assert!(mnist.mu.lower <= mnist.mu.upper && mnist.mu.upper < 0.6);
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
pub fn gdp(sgm: Sgm, steps: u64) -> Result<GdpAnswer, Error> {
    let pts = dense_profile(sgm, steps)?;
    if sgm.q() == 1.0 {
        let mu = (steps as f64).sqrt() / sgm.sigma();
        let exact = Bracket {
            upper: mu * (1.0 + 4.0 * f64::EPSILON),
            lower: mu * (1.0 - 4.0 * f64::EPSILON),
        };
        return Ok(gdp_with(&pts, Some(exact)));
    }
    Ok(gdp_of(&pts))
}

/// μ-GDP from a privacy profile with certified ends at ε = 0 and on a dense grid up to
/// where δ is negligible (any scheme's: the trade-off curve is read from it).
pub fn gdp_of(pts: &[ProfilePoint]) -> GdpAnswer {
    gdp_with(pts, None)
}

/// [`gdp_of`], with μ given where it is known in closed form.
fn gdp_with(pts: &[ProfilePoint], exact: Option<Bracket>) -> GdpAnswer {
    let curve = Tradeoff::from_profile(pts);
    let (upper, floor) = curve.mu_on_range(FPR_FLOOR);
    let lower = largest_mu_below(pts, FPR_FLOOR).min(upper);
    // A Gaussian curve: μ-GDP on every test; the range is reported as the fit's.
    let (upper, lower) = exact.map_or((upper, lower), |b| (b.upper, b.lower));
    let regret = curve.regret(upper);
    let adv = pts[0].delta;
    let star = 0.5 * (1.0 - adv.upper);
    let tradeoff = [1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 0.1, star]
        .iter()
        .map(|&a| (a, curve.beta(a)))
        .collect();
    GdpAnswer {
        mu: Bracket { upper, lower },
        regret,
        fpr_floor: floor,
        advantage: adv,
        tradeoff,
    }
}

/// An attack-risk target: a bound on the true-positive rate at a false-positive rate,
/// or on the advantage TPR − FPR.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Risk {
    Tpr { fpr: f64 },
    Advantage,
}

impl Risk {
    /// Checked: an FPR in (0, 1).
    pub fn tpr(fpr: f64) -> Result<Risk, Error> {
        if fpr.is_finite() && fpr > 0.0 && fpr < 1.0 {
            Ok(Risk::Tpr { fpr })
        } else {
            Err(Error::Rate(fpr))
        }
    }
}

/// The certified bound of `risk` for a run: TPR at the FPR (from the profile, refined
/// around the best ε), or the advantage δ_up(0).
pub fn risk_bound(sgm: Sgm, steps: u64, risk: Risk) -> Result<f64, Error> {
    match risk {
        Risk::Advantage => Ok(profile(sgm, steps, &[0.0])?[0].delta.upper),
        Risk::Tpr { fpr } => {
            // The attack profile's bound, then 101 points around its best ε.
            let pts = super::attack_profile(sgm, steps)?;
            let one = |p: &ProfilePoint| attack_tpr(std::slice::from_ref(p), fpr).unwrap_or(1.0);
            let best = pts
                .iter()
                .min_by(|x, y| one(x).total_cmp(&one(y)))
                .map_or(0.0, |p| p.epsilon);
            let step = pts.get(1).map_or(0.0, |p| p.epsilon);
            let a = (best - step).max(0.0);
            let fine: Vec<f64> = (0..=100)
                .map(|i| a + 2.0 * step * i as f64 / 100.0)
                .collect();
            let near = profile(sgm, steps, &fine)?;
            Ok(attack_tpr(&pts, fpr)?.min(attack_tpr(&near, fpr)?))
        }
    }
}

/// Checked risk target in (0, 1).
fn check_target(target: f64) -> Result<f64, Error> {
    if target.is_finite() && target > 0.0 && target < 1.0 {
        Ok(target)
    } else {
        Err(Error::RiskTarget(target))
    }
}

/// The μ of a Gaussian trade-off curve that just meets the target: the central-limit
/// guess (Dong, Roth, Su §5: μ ≈ q·√(T(e^{1/σ²} − 1))) starts the searches there.
fn target_mu(risk: Risk, target: f64) -> f64 {
    match risk {
        Risk::Advantage => 2.0 * isf(0.5 * (1.0 - target)),
        Risk::Tpr { fpr } => isf(fpr) - isf(target),
    }
    .max(1e-6)
}

/// Smallest σ (to 1e-4 relative) whose certified `risk` bound after `steps` steps at
/// rate q is ≤ `target`; with the bound at that σ.
pub fn calibrate_sigma_risk(
    risk: Risk,
    target: f64,
    q: f64,
    steps: u64,
) -> Result<(f64, f64), Error> {
    let target = check_target(target)?;
    if let Risk::Tpr { fpr } = risk {
        if target <= fpr {
            // Every test has TPR ≥ FPR on some neighbour: no noise gets below.
            return Err(Error::RiskUnreachable { target, bound: fpr });
        }
    }
    Sgm::new(q, 1.0)?;
    crate::engine::params::check_steps(steps)?;
    let (smin, smax) = (crate::engine::MIN_SIGMA, crate::engine::MAX_SIGMA);
    // A σ whose bound the budget cannot certify cannot be the answer: it counts as
    // missing the target (the answer stays certified).
    let at = |u: f64| match risk_bound(Sgm::new(q, exp(u).clamp(smin, smax))?, steps, risk) {
        Err(Error::PldBudget { .. }) => Ok(f64::INFINITY),
        r => r,
    };
    let mu = target_mu(risk, target);
    let ratio = (mu / q.max(1e-300)).powi(2) / steps as f64;
    let guess = (1.0 / ln_1p(ratio).sqrt()).clamp(smin, smax);
    search::smallest_sigma(target, guess, unreachable(target), |s| at(ln(s)))
}

/// The refusal of a risk target that no σ (or not even one step) meets.
fn unreachable(target: f64) -> impl Fn(f64) -> Error {
    move |bound| Error::RiskUnreachable { target, bound }
}

/// Largest T whose certified `risk` bound is ≤ `target`; with the bound at that T.
pub fn calibrate_steps_risk(risk: Risk, target: f64, sgm: Sgm) -> Result<(u64, f64), Error> {
    let target = check_target(target)?;
    let max = crate::engine::MAX_STEPS;
    let one = risk_bound(sgm, 1, risk)?;
    if one > target {
        return Err(Error::RiskUnreachable { target, bound: one });
    }
    let s2 = exp_m1(1.0 / (sgm.sigma() * sgm.sigma()));
    let mu = target_mu(risk, target);
    let guess = ((mu / sgm.q().max(1e-300)).powi(2) / s2).clamp(1.0, max as f64);
    search::most_steps(target, guess as u64, one, unreachable(target), |t| {
        risk_bound(sgm, t, risk)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaussian_profile(mu: f64, n: usize, top: f64) -> Vec<ProfilePoint> {
        (0..=n)
            .map(|i| {
                let e = top * i as f64 / n as f64;
                ProfilePoint {
                    epsilon: e,
                    delta: super::super::gauss::delta_bracket(mu, e),
                }
            })
            .collect()
    }

    #[test]
    fn isf_inverts_the_tail() {
        for &p in &[1e-300, 1e-10, 1e-3, 0.2, 0.5, 0.8, 1.0 - 1e-9] {
            let z = isf(p);
            let back = exp(ln_phi_bar(z));
            assert!((back / p - 1.0).abs() < 1e-9, "p {p}: {back}");
        }
        assert!((isf(0.05) - 1.6448536269514722).abs() < 1e-12);
    }

    #[test]
    fn the_curve_of_a_gaussian_profile_gives_its_mu_and_no_regret() {
        for &mu in &[0.5, 1.0, 2.0] {
            let curve = Tradeoff::from_profile(&gaussian_profile(mu, 2000, 12.0 * mu + 10.0));
            let m = curve.mu(FPR_FLOOR);
            assert!(m >= mu && m < mu * 1.001, "mu {mu}: {m}");
            assert!(curve.regret(m) < 1e-4, "regret {}", curve.regret(m));
            // Below the true curve everywhere (certified), and close to it.
            for &a in &[1e-8, 1e-4, 0.01, 0.3, 0.7] {
                let (lo, g) = (curve.beta(a), gaussian_beta(mu, a));
                assert!(
                    lo <= g + 1e-12 && lo > g - 1e-3 * g.max(1e-6),
                    "{a}: {lo} {g}"
                );
            }
        }
    }

    /// μ of a Gaussian profile beyond 2·Φ̄⁻¹(1e-10) ≈ 12.72, where gdpnum's range is empty:
    /// the certified μ is the truth (within the grid's error), never below it. (It read 1e-9.)
    #[test]
    fn large_mu_is_read_at_the_equal_error_point() {
        for &mu in &[12.0, 12.8, 13.0, 20.0, 60.0, 200.0, 1000.0] {
            let top = mu * mu / 2.0 + 12.0 * mu;
            let curve = Tradeoff::from_profile(&gaussian_profile(mu, 4000, top));
            let m = curve.mu(FPR_FLOOR);
            // Certified always; tight (1 %) while the lines at the equal-error point have
            // 1 − δ above f64's resolution (μ below ≈ 2·Φ̄⁻¹(2⁻⁵³) ≈ 16.4), then ≤ 2μ.
            let slack = if mu <= 16.0 { 1.01 } else { 2.0 };
            assert!(m >= mu && m <= mu * slack, "mu {mu}: {m}");
        }
    }

    #[test]
    fn isf_ln_inverts_tails_beyond_f64() {
        for &z in &[0.1, 1.0, 6.0, 40.0, 500.0, 5000.0] {
            let back = isf_ln(ln_phi_bar(z));
            assert!((back / z - 1.0).abs() < 1e-9, "z {z}: {back}");
        }
    }

    #[test]
    fn a_lower_bound_on_mu_never_exceeds_the_truth() {
        for &mu in &[0.3, 1.0, 3.0] {
            let best = gaussian_profile(mu, 200, 10.0)
                .iter()
                .map(|p| mu_below(p.epsilon, p.delta.lower, FPR_FLOOR))
                .fold(0.0f64, f64::max);
            assert!(best <= mu && best > 0.99 * mu, "mu {mu}: {best}");
        }
    }

    /// Profiles to fit: MNIST's and CIFAR's dense ones, a Gaussian's, and MNIST's backwards
    /// (its points' thresholds then met in the other order).
    fn fitted_profiles() -> Vec<Vec<ProfilePoint>> {
        let mnist = dense_profile(Sgm::new(256.0 / 60000.0, 1.1).unwrap(), 14063).unwrap();
        let cifar = dense_profile(Sgm::new(256.0 / 50000.0, 1.0).unwrap(), 2930).unwrap();
        let backwards = mnist.iter().rev().copied().collect();
        vec![mnist, cifar, gaussian_profile(1.0, 800, 8.0), backwards]
    }

    #[test]
    fn the_largest_mu_below_is_every_points_own_bisection() {
        for pts in fitted_profiles() {
            let each = pts
                .iter()
                .map(|p| mu_below(p.epsilon, p.delta.lower, FPR_FLOOR))
                .fold(0.0f64, f64::max);
            let got = largest_mu_below(&pts, FPR_FLOOR);
            assert!(each > 0.0);
            assert_eq!(got.to_bits(), each.to_bits(), "{got} against {each}");
        }
    }

    #[test]
    fn the_regret_walk_reads_the_curve_as_beta_does() {
        for pts in fitted_profiles() {
            let c = Tradeoff::from_profile(&pts);
            let mu = c.mu(FPR_FLOOR);
            for m in [0.5 * mu, 0.9 * mu, mu, 1.5 * mu] {
                let want = c.regret_reading(m, || |a| c.beta(a));
                let got = c.regret(m);
                assert_eq!(got.to_bits(), want.to_bits(), "μ {m}: {got} against {want}");
            }
            // Every α the regret reads, at shifts across its range.
            let (xs, _) = regret_grid();
            for d in [0.0, 1e-9, 1e-4, 0.01, 0.3] {
                let mut walk = c.beta_walk();
                for &x in xs {
                    let a = (x + d).min(1.0);
                    assert_eq!(walk(a).to_bits(), c.beta(a).to_bits(), "α {a}");
                }
            }
        }
    }

    #[test]
    fn ln_beta_reaches_its_bound_where_ln_beta_does() {
        for pts in fitted_profiles() {
            let c = Tradeoff::from_profile(&pts);
            let mut hint = pts.len() / 2;
            for i in 0..=400 {
                let ln_alpha = -40.0 + 0.1 * i as f64;
                let v = c.ln_beta(ln_alpha);
                for bound in [v, v - 1e-12, v + 1e-12, ln_alpha] {
                    let got = c.ln_beta_reaches(ln_alpha, bound, &mut hint);
                    assert_eq!(got, v >= bound, "ln α {ln_alpha}, bound {bound}: ln β {v}");
                }
            }
        }
    }

    #[test]
    fn risk_targets_are_checked() {
        assert!(Risk::tpr(0.0).is_err() && Risk::tpr(f64::NAN).is_err());
        assert!(check_target(1.0).is_err() && check_target(-0.1).is_err());
    }
}
