//! Exact per-step Rényi DP of the Sampled Gaussian Mechanism.
//!
//! Specification: Mironov, Talwar, Zhang, "Rényi Differential Privacy of the
//! Sampled Gaussian Mechanism" (arXiv:1908.10530). By Theorem 4 and
//! Corollary 7 (A_α ≥ B_α) the per-step RDP at order α is
//!
//! ```text
//!   ε(α) = ln A_α / (α − 1),   A_α = E_{z∼μ0}[ (1 − q + q·μ1(z)/μ0(z))^α ]        (§3, eq. 11)
//! ```
//! with μ0 = N(0, σ²), μ1 = N(1, σ²), so μ1/μ0 = e^{s}, s = (2z − 1)/(2σ²).
//!
//! # Algorithm (one path for integer and fractional α)
//! The paper's §3.3 series (binomial for integer α, two erfc series for
//! fractional α) alternates in sign beyond k > α and decays only
//! polynomially near α = 1, so any fixed term cap is wrong somewhere, and
//! summing it loses A_α − 1 to cancellation when q is small. Instead we
//! integrate eq. (11) directly with the **trapezoidal rule on the whole
//! line**, which converges geometrically for integrands analytic in a strip:
//!
//! * In z, the integrand is analytic for |Im z| < πσ² (the zeros of
//!   1 − q + q e^{s} sit at Im s = π) and grows at most like e^{y²/(2σ²)}
//!   off the axis (from the Gaussian). The trapezoid error is therefore
//!   ≲ exp(d²/(2σ²) − 2πd/h) for any d < πσ²; `step` chooses h so this is
//!   below e^{−36} relative (see `step`).
//! * The log-integrand ℓ(z) = −z²/(2σ²) + α·ln(1 − q + q e^{s}) has at most
//!   two local maxima: ℓ''(z) = (−1 + κ p(1−p))/σ² with κ = α/σ² and
//!   p = sigmoid((z − z₁)/σ²), z₁ = ½ + σ² ln((1−q)/q) (§3.3's inflection
//!   point), and p(1−p) is unimodal. Its critical points solve z = α·p(z),
//!   so they lie in (0, α). `modes` brackets them analytically and bisects.
//!   We sum lattice nodes outward from each mode until the term falls 40
//!   nats below the running maximum, skipping the valley between modes;
//!   the work is O(σ/h) nodes per mode, independent of α.
//! * When A_α < e, ln A_α is small and must come from A_α − 1 directly. We
//!   then integrate the nonnegative form
//!   A_α − 1 = E_{μ0}[(1+u)^α − 1 − αu], u = q(e^{s} − 1), E\[u\] = 0,
//!   with (1+u)^α − 1 − αu = β·[((1+u)ln(1+u) − u) + (1+u)·ψ(βv)/β],
//!   β = α − 1, v = ln(1+u), ψ(x) = eˣ − 1 − x — a sum of nonnegative terms,
//!   so there is no cancellation at any q, σ, α; then ln A = ln1p(A − 1).
//!
//! The answer is as accurate as the problem's conditioning allows: where the
//! far mode (z ≈ α, weight ≈ q^α e^{α(α−1)/(2σ²)}) matters, the exact value
//! itself moves by a relative α·|ln q|·2⁻⁵³ when q moves by one ulp, and we
//! meet that (tests/reference tolerances are scaled by this condition number).
//!
//! Special cases: q = 0 gives 0; q = 1 gives α/(2σ²) exactly (Gaussian).
//!
//! # Error budget
//! Every constant of this module, once, with its reason:
//! * `step`'s `NATS` = 36: the trapezoid rule's discretization error on a strip of
//!   analyticity of half-width d is ≲ 2·M(d)/(e^{2πd/h} − 1) relative (Trefethen &
//!   Weideman, "The Exponentially Convergent Trapezoidal Rule", SIAM Review 56(3), 2014,
//!   Thm 5.1), with M(d) ≤ e^{d²/(2σ²)} the integrand's growth off the axis. With h = ησ and
//!   the best d this is e^{−2π²/η²}: η = √(2π²/36) ≈ 0.74 gives e^{−36} ≈ 2.3e-16 for
//!   σ ≥ 2/η ≈ 2.7; for smaller σ the strip (d < πσ²) is the limit and η shrinks so the
//!   bound stays e^{−36}. This holds for both integrands below: the h-form
//!   (1 − q + q e^s)^α μ0 and the g-form μ0·[(1+u)^α − 1 − αu] have the same poles.
//! * `DROP` = 40: a walk stops once its terms fall 40 nats below the running maximum.
//!   Beyond that point both integrands decay at least geometrically along the lattice
//!   (log-concave tails: the Gaussian factor dominates), so the omitted tail is below
//!   e^{−40}·(1/(1 − ρ)) ≈ 4e-18/(1 − ρ) of the sum, far below `NATS`'s error for the
//!   ratios ρ ≤ 0.9 of these integrands' tails.
//! * The h-form (ln A ≥ 1): a sum of positive terms in log space; relative rounding
//!   ≲ n·u for n nodes (n ≈ 30–200). ln A ≥ 1 keeps ln A's relative error at that level.
//! * The g-form (ln A < 1, the typical DP-SGD regime): A − 1 is summed directly as the
//!   nonnegative β·[((1+u)ln(1+u) − u) + (1+u)ψ(βv)/β] — no cancellation at any q, σ, α,
//!   so A − 1 has relative error ≲ n·u and ln A = ln1p(A − 1) inherits it. The two
//!   nonnegative pieces are evaluated by their series near 0 (`xlogx_term`, `psi`: first
//!   omitted term < 1.2e-19 relative). Terms with α·v ≤ 40 are summed linearly (no
//!   log/exp per node) when q > e^{−300}, so that A − 1 ≳ q² stays far above underflow.
//! * `TINY_U` = −40: when α|u| < e^{−40}, (1+u)^α − 1 − αu = C(α,2)u²(1 + (α−2)u/3 + …)
//!   is its leading term to 2e-18 relative, taken in logs from ln|u| so that u² cannot
//!   underflow (q ≲ 1e-160 with σ ≳ 1e5 used to make every term 0 and the walks run to
//!   `MAX_NODES`).
//! * `MAX_NODES` = 2²⁶: a guard on every walk; never reached for inputs in the domain
//!   (tests/engine/extremes.rs checks the corners that once reached it).
//! * `CACHE` = 512: lattice nodes shared by every order of a curve (speed only).
//!
//! Measured: over the 1754 mpmath reference cases (tests/reference, ≥ 45 digits) the
//! largest relative error of ε(α) and ln A_α is 6.2e-14 (q = 0.05, σ = 0.1, α = 1.001);
//! `cargo test --release --test reference_rdp -- --nocapture` prints it. Near the far mode
//! the problem itself is ill-conditioned (κ ≈ α·|ln q|) and the tests allow 64·κ·u.
//!
//! # References
//! * I. Mironov, K. Talwar, L. Zhang, "Rényi Differential Privacy of the Sampled Gaussian
//!   Mechanism", arXiv:1908.10530 (2019): eq. 11, Theorems 4, 5, 11, Corollary 7, §3.3.
//! * L. N. Trefethen, J. A. C. Weideman, "The Exponentially Convergent Trapezoidal Rule",
//!   SIAM Review 56(3):385–458 (2014): the strip error bound above.
//! * I. Mironov, "Rényi Differential Privacy", IEEE CSF 2017: composition, classic conversion.

use super::error::Error;
use super::params::{check_order, Sgm};
use crate::engine::math::{exp, exp_m1, ln, ln_1p};

/// A walk stops once its terms are this many nats below the running maximum (see the
/// error budget).
const DROP: f64 = 40.0;
/// Hard cap on lattice nodes per walk (never reached for α ≤ 10⁶; guards loops).
const MAX_NODES: i64 = 1 << 26;
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Lattice step of the trapezoid rule for noise multiplier σ (see module docs).
///
/// With h = ησ the error bound exp(d²/(2σ²) − 2πd/h) is smallest at
/// d = 2πσ²/h, giving exp(−2π²/η²), when that d is inside the strip
/// (d < πσ², i.e. η > 2/σ): then η = √(2π²/36) ≈ 0.74 gives e^{−36} ≈ 2e-16.
/// For small σ the strip is the limit; with d → πσ² the bound is
/// exp(π²σ²/2 − 2π²σ/η), set to e^{−36}.
pub(crate) fn step(sigma: f64) -> f64 {
    const NATS: f64 = 36.0;
    let pi2 = std::f64::consts::PI * std::f64::consts::PI;
    let eta_wide = (2.0 * pi2 / NATS).sqrt();
    let eta = if sigma * eta_wide >= 2.0 {
        eta_wide
    } else {
        (2.0 * pi2 * sigma / (NATS + 0.5 * pi2 * sigma * sigma)).min(eta_wide)
    };
    eta * sigma
}

/// ln A_α for the validated mechanism and order.
pub fn log_a(m: &Sgm, alpha: f64) -> Result<f64, Error> {
    let alpha = check_order(alpha)?;
    Ok(Lattice::new(m.q(), m.sigma()).log_a(alpha))
}

/// Per-step RDP ε(α) = ln A_α/(α − 1) (Theorem 4 + Corollary 7 of Mironov–Talwar–Zhang).
///
/// At q = 1 the SGM is the Gaussian mechanism, whose RDP is α/(2σ²) in closed form; at a
/// fractional order the same call is exact too:
///
/// ```
/// use sgm_rdp::engine::{rdp::rdp, Sgm};
/// let gauss = Sgm::new(1.0, 2.0)?;
/// assert!((rdp(&gauss, 8.5)? - 8.5 / 8.0).abs() < 1e-12);
/// let sampled = Sgm::new(0.01, 1.1)?;
/// assert!(rdp(&sampled, 2.5)? < 2.5 / (2.0 * 1.1 * 1.1)); // sampling amplifies
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
pub fn rdp(m: &Sgm, alpha: f64) -> Result<f64, Error> {
    let alpha = check_order(alpha)?;
    Ok(Lattice::new(m.q(), m.sigma()).rdp(alpha))
}

/// Per-step RDP at each order.
pub fn rdp_orders(m: &Sgm, orders: &[f64]) -> Result<Vec<f64>, Error> {
    let orders = super::params::check_orders(orders)?;
    let lat = Lattice::new(m.q(), m.sigma());
    Ok(orders.iter().map(|&a| lat.rdp(a)).collect())
}

/// Streaming log-sum-exp accumulator.
#[derive(Clone, Copy)]
struct LogSum {
    max: f64,
    sum: f64,
}

impl LogSum {
    fn new() -> Self {
        LogSum {
            max: f64::NEG_INFINITY,
            sum: 0.0,
        }
    }
    fn add(&mut self, x: f64) {
        if x == f64::NEG_INFINITY {
            return;
        }
        if x > self.max {
            self.sum = self.sum * exp(self.max - x) + 1.0;
            self.max = x;
        } else {
            self.sum += exp(x - self.max);
        }
    }
    fn ln(&self) -> f64 {
        if self.sum == 0.0 {
            f64::NEG_INFINITY
        } else {
            self.max + ln(self.sum)
        }
    }
}

/// u = q(e^s − 1), v = ln(1 + u), ln μ0(z) and (1+u)ln(1+u) − u at one node,
/// computed without overflow. None of it depends on α.
#[derive(Clone, Copy)]
struct Node {
    u: f64,
    /// ln|u|, computed in log space: u itself underflows when q ≲ 1e-300/|s|.
    ln_abs_u: f64,
    v: f64,
    ln_phi: f64,
    phi: f64,
    xlogx: f64,
}

/// Nodes j ∈ [−CACHE, CACHE] are cached (they serve every order of a curve).
const CACHE: i64 = 512;

/// The quadrature lattice z_j = ½ + j·h for one (q, σ), shared by all orders:
/// the α-independent parts of every node are computed once.
pub(crate) struct Lattice {
    q: f64,
    sigma: f64,
    ln_q: f64,
    ln_1mq: f64,
    h: f64,
    ln_norm: f64,
    cache: Vec<std::cell::Cell<Option<Node>>>,
}

impl std::fmt::Debug for Lattice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lattice")
            .field("q", &self.q)
            .field("sigma", &self.sigma)
            .finish_non_exhaustive()
    }
}

impl Lattice {
    pub(crate) fn new(q: f64, sigma: f64) -> Self {
        Lattice {
            q,
            sigma,
            ln_q: ln(q),
            ln_1mq: ln_1p(-q),
            h: step(sigma),
            ln_norm: -ln(sigma) - LN_SQRT_2PI,
            cache: vec![std::cell::Cell::new(None); (2 * CACHE + 1) as usize],
        }
    }

    /// ln A_α (α > 1 validated by the caller).
    pub(crate) fn log_a(&self, alpha: f64) -> f64 {
        if self.q == 0.0 {
            return 0.0;
        }
        if self.q == 1.0 {
            return alpha * (alpha - 1.0) / (2.0 * self.sigma * self.sigma);
        }
        let beta = alpha - 1.0;
        Integrand {
            lat: self,
            alpha,
            beta,
            ln_beta: ln(beta),
        }
        .log_a()
    }

    /// Per-step RDP ε(α) = ln A_α/(α − 1).
    pub(crate) fn rdp(&self, alpha: f64) -> f64 {
        if self.q == 1.0 {
            // Plain Gaussian mechanism: D_α(N(1,σ²) || N(0,σ²)) = α/(2σ²).
            return alpha / (2.0 * self.sigma * self.sigma);
        }
        self.log_a(alpha) / (alpha - 1.0)
    }

    fn z(&self, j: i64) -> f64 {
        0.5 + j as f64 * self.h
    }

    fn node(&self, j: i64) -> Node {
        if (-CACHE..=CACHE).contains(&j) {
            let cell = &self.cache[(j + CACHE) as usize];
            if let Some(n) = cell.get() {
                return n;
            }
            let n = self.compute_node(j);
            cell.set(Some(n));
            return n;
        }
        self.compute_node(j)
    }

    fn compute_node(&self, j: i64) -> Node {
        let z = self.z(j);
        // s = (2z − 1)/(2σ²) = j·h/σ², exact at the lattice's centre z = ½.
        let s = (j as f64 * self.h) / (self.sigma * self.sigma);
        let ln_phi = -z * z / (2.0 * self.sigma * self.sigma) + self.ln_norm;
        let (u, ln_abs_u, v) = if s + self.ln_q < -1.0 {
            let u = if s > 700.0 {
                exp(s + self.ln_q) - self.q
            } else {
                self.q * exp_m1(s)
            };
            (u, self.ln_q + ln_abs_expm1(s), ln_1p(u))
        } else {
            // q e^s dominates: v = s + ln q + ln(1 + (1−q)e^{−s}/q).
            let v = s + self.ln_q + ln_1p(exp(self.ln_1mq - s - self.ln_q));
            let u = exp_m1(v);
            (u, ln(u.abs()), v)
        };
        Node {
            u,
            ln_abs_u,
            v,
            ln_phi,
            phi: exp(ln_phi),
            xlogx: xlogx_term(u, v),
        }
    }
}

/// One order α on a lattice.
struct Integrand<'a> {
    lat: &'a Lattice,
    alpha: f64,
    beta: f64,
    ln_beta: f64,
}

impl Integrand<'_> {
    fn z(&self, j: i64) -> f64 {
        self.lat.z(j)
    }

    fn node(&self, j: i64) -> Node {
        self.lat.node(j)
    }

    /// ln of the integrand of A_α (eq. 11) times μ0.
    fn ln_h(&self, n: &Node) -> f64 {
        n.ln_phi + self.alpha * n.v
    }

    /// ln of μ0·[(1+u)^α − 1 − αu] (the nonnegative form of A_α − 1).
    fn ln_g(&self, n: &Node) -> f64 {
        n.ln_phi + ln_g(self.alpha, self.beta, self.ln_beta, n)
    }

    fn log_a(&self) -> f64 {
        let (anchors, valley) = modes(self.lat.q, self.lat.sigma, self.alpha);
        let index = |z: f64| ((z - 0.5) / self.lat.h).round() as i64;
        let anchors: Vec<i64> = anchors.iter().map(|&m| index(m)).collect();
        // One mode and ln A clearly small (Lemma 9's unconditional bound on the
        // bulk, doubled): the nonnegative form alone, walked out from the mode.
        let (q, s2) = (self.lat.q, self.lat.sigma * self.lat.sigma);
        let bulk = ln_1p(2.0 * q * q * self.alpha * self.beta * exp_m1(1.0 / s2));
        if anchors.len() == 1 && bulk < 0.5 {
            return ln_1p_exp(self.log_a_minus_1(&[(anchors[0], anchors[0])]));
        }
        let (ranges, acc) = self.walk(&anchors, valley.map(index));
        let ln_a = ln(self.lat.h) + acc.ln();
        if ln_a >= 1.0 {
            return ln_a;
        }
        ln_1p_exp(self.log_a_minus_1(&ranges))
    }

    /// Sum the h-form outward from each anchor; returns the covered index ranges.
    /// The first anchor's rightward walk stops at the valley (if any): beyond it
    /// ℓ rises towards the second mode, whose own walk covers that side.
    fn walk(&self, anchors: &[i64], valley: Option<i64>) -> (Vec<(i64, i64)>, LogSum) {
        let mut acc = LogSum::new();
        let mut ranges: Vec<(i64, i64)> = Vec::new();
        for &a in anchors {
            if let Some(last) = ranges.last_mut() {
                if a <= last.1 {
                    continue; // already covered by the previous walk
                }
            }
            let floor = ranges.last().map(|r| r.1 + 1).unwrap_or(i64::MIN);
            let mut lo = a;
            let mut hi;
            acc.add(self.ln_h(&self.node(a)));
            // left
            let mut j = a - 1;
            while j >= floor {
                let x = self.ln_h(&self.node(j));
                acc.add(x);
                lo = j;
                if below(x, acc.max - DROP) || a - j > MAX_NODES {
                    break;
                }
                j -= 1;
            }
            // right
            let mut j = a + 1;
            loop {
                let x = self.ln_h(&self.node(j));
                acc.add(x);
                hi = j;
                let at_valley = ranges.is_empty() && valley.is_some_and(|v| j >= v);
                if below(x, acc.max - DROP) || at_valley || j - a > MAX_NODES {
                    break;
                }
                j += 1;
            }
            match ranges.last_mut() {
                Some(last) if lo <= last.1 + 1 => last.1 = hi,
                _ => ranges.push((lo, hi)),
            }
        }
        (ranges, acc)
    }

    /// ln(A_α − 1) from the nonnegative integrand over the h-form's ranges,
    /// extended until the remaining tails are provably below e^{−46} of the sum.
    fn log_a_minus_1(&self, ranges: &[(i64, i64)]) -> f64 {
        let mut acc = GSum::new(self.lat.ln_q > -300.0);
        let mut covered: Vec<(i64, i64)> = Vec::with_capacity(ranges.len());
        for (i, &(lo, hi)) in ranges.iter().enumerate() {
            for j in lo..=hi {
                acc.add(self, &self.node(j));
            }
            if i > 0 {
                covered.push((ranges[i - 1].1 + 1, lo - 1));
            }
        }
        // Valleys between modes were skipped by the h-form walk; there u > 0
        // bounds g by the h-form, which is largest at the valley's edges.
        for &(a, b) in &covered {
            let edge = self.ln_h(&self.node(a)).max(self.ln_h(&self.node(b)));
            if self.z(a) <= 0.5 || edge > acc.max_ln(self.ln_beta) - DROP {
                for j in a..=b {
                    acc.add(self, &self.node(j));
                }
            }
        }
        // Right tail: for z > ½ and beyond the last mode, g ≤ h-form, decreasing.
        let start = ranges.last().map(|r| r.1).unwrap_or(0) + 1;
        let mut j = start;
        loop {
            let n = self.node(j);
            acc.add(self, &n);
            // The bound is checked every 4th node (ln of the running maximum is
            // not free); stopping up to 3 nodes later only adds negligible terms.
            if (j - start) % 4 == 3
                && self.z(j) > 0.5
                && below(self.ln_h(&n), acc.max_ln(self.ln_beta) - DROP)
                || j - start > MAX_NODES
            {
                break;
            }
            j += 1;
        }
        // Left tail: for z < min(0, ½), g(u(z)) ≤ g(−q) and μ0 is increasing in z.
        let (u, v) = (-self.lat.q, self.lat.ln_1mq);
        let far_left = Node {
            u,
            ln_abs_u: self.lat.ln_q,
            v,
            ln_phi: 0.0,
            phi: 1.0,
            xlogx: xlogx_term(u, v),
        };
        let ln_g_left = ln_g(self.alpha, self.beta, self.ln_beta, &far_left);
        let start = ranges.first().map(|r| r.0).unwrap_or(0) - 1;
        let mut j = start;
        loop {
            let n = self.node(j);
            acc.add(self, &n);
            if (start - j) % 4 == 3
                && self.z(j) < 0.0
                && below(n.ln_phi + ln_g_left, acc.max_ln(self.ln_beta) - DROP)
                || start - j > MAX_NODES
            {
                break;
            }
            j -= 1;
        }
        ln(self.lat.h) + acc.ln(self.ln_beta)
    }
}

/// Σ μ0·g over nodes. Terms with (1+u)^α ≤ e^40 are summed linearly as
/// Σ φ·t with g = β·t (no log or exp per node); larger ones in log space.
/// Linear summation is used only when q > e^{−300}, so that A − 1 (≳ q²·…)
/// stays far above the f64 underflow of the far-tail φ.
struct GSum {
    lin: f64,
    lin_max: f64,
    log: LogSum,
    linear: bool,
}

impl GSum {
    fn new(linear: bool) -> Self {
        GSum {
            lin: 0.0,
            lin_max: 0.0,
            log: LogSum::new(),
            linear,
        }
    }
    fn add(&mut self, it: &Integrand, n: &Node) {
        if self.linear && it.alpha * n.v <= 40.0 {
            if n.u == 0.0 {
                return;
            }
            let t = n.xlogx + (1.0 + n.u) * psi(it.beta * n.v) / it.beta;
            let w = n.phi * t;
            self.lin += w;
            if w > self.lin_max {
                self.lin_max = w;
            }
        } else {
            self.log.add(it.ln_g(n));
        }
    }
    fn ln_lin(x: f64, ln_beta: f64) -> f64 {
        if x > 0.0 {
            ln(x) + ln_beta
        } else {
            f64::NEG_INFINITY
        }
    }
    /// ln of the largest term so far.
    fn max_ln(&self, ln_beta: f64) -> f64 {
        Self::ln_lin(self.lin_max, ln_beta).max(self.log.max)
    }
    /// ln of the sum.
    fn ln(&self, ln_beta: f64) -> f64 {
        log_add_exp(Self::ln_lin(self.lin, ln_beta), self.log.ln())
    }
}

/// True when `x` is below `floor` or NaN (a walk must stop on either).
fn below(x: f64, floor: f64) -> bool {
    use std::cmp::Ordering::{Equal, Greater};
    !matches!(x.partial_cmp(&floor), Some(Greater | Equal))
}

/// ln[(1+u)^α − 1 − αu] for u > −1 without cancellation (see module docs).
fn ln_g(alpha: f64, beta: f64, ln_beta: f64, n: &Node) -> f64 {
    let (u, v) = (n.u, n.v);
    let x = alpha * v;
    if x > 40.0 {
        // (1+u)^α > e^40 dominates: g = (1+u)^α (1 − (1+αu)(1+u)^{−α}).
        let ln_u = v + ln(-exp_m1(-v));
        let ln_1pau = log_add_exp(0.0, ln(alpha) + ln_u);
        return x + ln_1p(-exp(ln_1pau - x));
    }
    if n.ln_abs_u + ln(alpha) < TINY_U {
        // α|u| < e^{−40}: g = C(α,2)·u²·(1 + (α−2)u/3 + …), whose correction is
        // below 2e-18 relative; in logs, so u² cannot underflow (q ≲ 1e-160).
        return ln(0.5 * alpha * beta) + 2.0 * n.ln_abs_u;
    }
    let t = n.xlogx + (1.0 + u) * psi(beta * v) / beta;
    ln_beta + ln(t)
}

/// Below this value of ln(α|u|), `ln_g` uses the leading binomial term.
const TINY_U: f64 = -40.0;

/// ln|eˢ − 1| for any finite s (−∞ at s = 0).
fn ln_abs_expm1(s: f64) -> f64 {
    if s > 0.0 {
        s + ln(-exp_m1(-s))
    } else {
        ln(-exp_m1(s))
    }
}

/// (1+u)·ln(1+u) − u ≥ 0, with v = ln(1+u); series Σ_{j≥2} (−u)^j/(j(j−1)) near 0.
fn xlogx_term(u: f64, v: f64) -> f64 {
    if u.abs() < 0.3 {
        let mut pow = u * u;
        let mut sum = 0.0;
        let mut j = 2.0;
        loop {
            let t = pow / (j * (j - 1.0));
            sum += t;
            if t.abs() <= 1e-18 * sum.abs() {
                break;
            }
            pow *= -u;
            j += 1.0;
        }
        sum
    } else {
        (1.0 + u) * v - u
    }
}

/// ψ(x) = eˣ − 1 − x ≥ 0; Taylor series for |x| < 0.3.
fn psi(x: f64) -> f64 {
    if x.abs() < 0.3 {
        // x²·Σ_{k=0}^{12} x^k/(k+2)!, Horner; the first omitted term is
        // < 0.3¹³/15! ≈ 1.2e-19 relative to x²/2.
        const C: [f64; 13] = {
            let mut c = [0.0; 13];
            let mut f = 2.0; // (k+2)!
            let mut k = 0;
            while k < 13 {
                c[k] = 1.0 / f;
                f *= (k + 3) as f64;
                k += 1;
            }
            c
        };
        let mut p = C[12];
        for &c in C[..12].iter().rev() {
            p = p * x + c;
        }
        x * x * p
    } else {
        exp_m1(x) - x
    }
}

/// ln(1 + eˣ), i.e. ln A from ln(A − 1).
fn ln_1p_exp(x: f64) -> f64 {
    if x > 0.0 {
        x + ln_1p(exp(-x))
    } else {
        ln_1p(exp(x))
    }
}

pub(crate) fn log_add_exp(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + ln_1p(exp(lo - hi))
}

/// Local maxima of ℓ(z) = −z²/(2σ²) + α ln(1 − q + q e^{(2z−1)/(2σ²)}):
/// roots of F(z) = z − α·p(z) where F' > 0 (one or two of them), and, when
/// there are two, the local minimum between them (the valley).
fn modes(q: f64, sigma: f64, alpha: f64) -> (Vec<f64>, Option<f64>) {
    let s2 = sigma * sigma;
    let z1 = 0.5 + s2 * (ln_1p(-q) - ln(q));
    let f = |z: f64| z - alpha * sigmoid((z - z1) / s2);
    let kappa = alpha / s2;
    // An anchor within half a node is enough: the walks go outward from it.
    let tol = 0.5 * step(sigma);
    if kappa <= 4.0 {
        return (vec![bisect(f, 0.0, alpha, tol)], None);
    }
    // Inflection points of ℓ: p(1−p) = 1/κ. F rises to za, falls to zb, rises after.
    let p_minus = 2.0 / (kappa * (1.0 + (1.0 - 4.0 / kappa).sqrt()));
    let t = ln(p_minus) - ln_1p(-p_minus);
    let (za, zb) = (z1 + s2 * t, z1 - s2 * t);
    let left = za > 0.0 && f(za) > 0.0;
    let right = f(zb) < 0.0;
    match (left, right) {
        (true, true) => {
            let m1 = bisect(f, 0.0, za, tol);
            let m2 = bisect(f, zb.max(0.0), alpha, tol);
            // F > 0 at za, < 0 at zb: the valley is where F crosses downwards.
            let valley = bisect(|z| -f(z), za, zb, tol);
            (vec![m1, m2], Some(valley))
        }
        (true, false) => (vec![bisect(f, 0.0, za, tol)], None),
        (false, true) => (vec![bisect(f, zb.max(0.0), alpha, tol)], None),
        // Not reachable (F(za) ≤ 0 implies F(zb) < 0); keep a sane answer.
        (false, false) => (vec![bisect(f, 0.0, alpha, tol)], None),
    }
}

fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + exp(-x))
    } else {
        let e = exp(x);
        e / (1.0 + e)
    }
}

/// Bisection for a sign change f(lo) < 0 < f(hi), to width `tol`.
fn bisect(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64, tol: f64) -> f64 {
    for _ in 0..200 {
        if hi - lo <= tol {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_limit_is_exact() {
        // q = 1: D_α(N(1,σ²)||N(0,σ²)) = α/(2σ²) (closed form).
        let m = Sgm::new(1.0, 2.0).unwrap();
        assert_eq!(rdp(&m, 3.5).unwrap(), 3.5 / 8.0);
    }

    #[test]
    fn integer_order_matches_binomial_sum() {
        // §3.3 Case I, summed here in plain f64 (safe for these moderate values):
        // A_α = Σ_k C(α,k) q^k (1−q)^{α−k} exp((k²−k)/(2σ²)).
        for &(q, sigma, alpha) in &[(0.01f64, 1.1f64, 8u32), (0.2, 0.7, 5), (0.05, 3.0, 32)] {
            let mut a = 0.0f64;
            let mut c = 1.0f64;
            for k in 0..=alpha {
                let kf = k as f64;
                a += c
                    * q.powi(k as i32)
                    * (1.0 - q).powi((alpha - k) as i32)
                    * exp((kf * kf - kf) / (2.0 * sigma * sigma));
                c = c * (alpha - k) as f64 / (k + 1) as f64;
            }
            let want = ln(a) / (alpha as f64 - 1.0);
            let got = rdp(&Sgm::new(q, sigma).unwrap(), alpha as f64).unwrap();
            assert!(
                ((got - want) / want).abs() < 1e-12,
                "{q} {sigma} {alpha}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn nonnegative_pieces() {
        for &u in &[-0.9, -0.31, -0.29, -1e-9, 1e-9, 0.29, 0.31, 5.0] {
            let v = ln_1p(u);
            assert!(xlogx_term(u, v) >= 0.0);
        }
        for &x in &[-3.0, -0.31, -0.2, 1e-12, 0.2, 0.31, 3.0] {
            assert!(psi(x) >= 0.0);
        }
    }
}
