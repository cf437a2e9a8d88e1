//! Closed-form RDP bounds for the SGM, each with its conditions evaluated.
//!
//! Sources (Mironov, Talwar, Zhang, "Rényi Differential Privacy of the Sampled Gaussian Mechanism", arXiv:1908.10530): Theorem 11 and Lemma 10's
//! conditions (4), (5); Lemma 9; Table 1's rows for Abadi et al. [ACG+16] and
//! Bun et al. \[BDRS18\]. Every bound reports whether it applies and, if not,
//! the first condition that fails, in words.

use super::error::Error;
use super::params::{check_order, Sgm};
use super::rdp::Lattice;
use crate::decimal::short;
use crate::engine::math::{exp, exp_m1, ln, ln_1p};
use serde::Serialize;

/// One bound at one (q, σ, α).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bound {
    /// Short name, e.g. "theorem11".
    pub name: &'static str,
    /// The bound's RDP value at α (computed even where it does not apply). ∞ means
    /// "no finite bound" and is written as `null` in JSON and JS (one representation
    /// across the CLI, the batch output and the JS API).
    #[serde(serialize_with = "finite_or_null")]
    pub value: f64,
    /// `None` if every stated condition holds, else the failing condition.
    pub fails: Option<String>,
}

/// JSON has no ∞: a value without a finite guarantee is `null`.
pub(crate) fn finite_or_null<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(*v)
    } else {
        s.serialize_none()
    }
}

impl Bound {
    pub fn holds(&self) -> bool {
        self.fails.is_none()
    }
}

/// L = ln(1 + 1/(q(α−1))) (Table 1's shortcut).
fn big_l(q: f64, alpha: f64) -> f64 {
    ln_1p(1.0 / (q * (alpha - 1.0)))
}

/// Right-hand side of condition (4): ½σ²L − 2 ln σ (Lemma 10 / Theorem 11).
pub fn cond4_rhs(q: f64, sigma: f64, alpha: f64) -> f64 {
    0.5 * sigma * sigma * big_l(q, alpha) - 2.0 * ln(sigma)
}

/// Right-hand side of condition (5): (½σ²L² − ln 5 − 2 ln σ)/(L + ln(qα) + 1/(2σ²)).
pub fn cond5_rhs(q: f64, sigma: f64, alpha: f64) -> f64 {
    let l = big_l(q, alpha);
    let s2 = sigma * sigma;
    (0.5 * s2 * l * l - ln(5f64) - 2.0 * ln(sigma)) / (l + ln(q * alpha) + 0.5 / s2)
}

/// Theorem 11 of Mironov–Talwar–Zhang: ε(α) ≤ 2q²α/σ² if q ≤ 1/5, σ ≥ 4, 1 < α ≤ (4), α ≤ (5).
///
/// ```
/// use sgm_rdp::engine::{bounds::theorem11, rdp::rdp, Sgm};
/// let m = Sgm::new(0.01, 4.0)?;
/// let b = theorem11(&m, 8.0)?;
/// assert!(b.holds() && rdp(&m, 8.0)? <= b.value); // the exact RDP is below the bound
/// assert!(!theorem11(&Sgm::new(0.5, 4.0)?, 8.0)?.holds()); // q > 1/5: the condition is named
/// # Ok::<(), sgm_rdp::engine::Error>(())
/// ```
pub fn theorem11(m: &Sgm, alpha: f64) -> Result<Bound, Error> {
    let alpha = check_order(alpha)?;
    let (q, s) = (m.q(), m.sigma());
    let value = 2.0 * q * q * alpha / (s * s);
    let fails = if q > 0.2 {
        Some(format!("q = {} > 1/5", short(q)))
    } else if s < 4.0 {
        Some(format!("σ = {} < 4", short(s)))
    } else if q == 0.0 {
        None
    } else if alpha > cond4_rhs(q, s, alpha) {
        Some(format!(
            "condition (4): α = {} > σ²L/2 − 2 ln σ = {:.6}",
            short(alpha),
            cond4_rhs(q, s, alpha)
        ))
    } else if alpha > cond5_rhs(q, s, alpha) {
        Some(format!(
            "condition (5): α = {} > {:.6}",
            short(alpha),
            cond5_rhs(q, s, alpha)
        ))
    } else {
        None
    };
    Ok(Bound {
        name: "theorem11",
        value,
        fails,
    })
}

/// Table 1, Abadi et al.: q²α/((1−q)σ²) + O(q³α³/σ³) for q < 1/(16σ),
/// α ≤ 1 + σ² ln(1/(qσ)). Asymptotic (q → 0): the leading term only.
pub fn abadi(m: &Sgm, alpha: f64) -> Result<Bound, Error> {
    let alpha = check_order(alpha)?;
    let (q, s) = (m.q(), m.sigma());
    let value = q * q * alpha / ((1.0 - q) * s * s);
    let fails = if q >= 1.0 / (16.0 * s) {
        Some(format!(
            "q = {} ≥ 1/(16σ) = {:.6}",
            short(q),
            1.0 / (16.0 * s)
        ))
    } else if q > 0.0 && alpha > 1.0 + s * s * ln(1.0 / (q * s)) {
        Some(format!(
            "α = {} > 1 + σ² ln(1/(qσ)) = {:.6}",
            short(alpha),
            1.0 + s * s * ln(1.0 / (q * s))
        ))
    } else {
        None
    };
    Ok(Bound {
        name: "abadi",
        value,
        fails,
    })
}

/// Table 1, Bun et al. (fixed-size sample, replace-one adjacency): 6q²α/σ² for
/// q ≤ 1/10, σ ≥ √5, α ≤ ½σ² ln(1/q).
pub fn bun(m: &Sgm, alpha: f64) -> Result<Bound, Error> {
    let alpha = check_order(alpha)?;
    let (q, s) = (m.q(), m.sigma());
    let value = 6.0 * q * q * alpha / (s * s);
    let fails = if q > 0.1 {
        Some(format!("q = {} > 1/10", short(q)))
    } else if s < 5f64.sqrt() {
        Some(format!("σ = {} < √5", short(s)))
    } else if q > 0.0 && alpha > 0.5 * s * s * ln(1.0 / q) {
        Some(format!(
            "α = {} > σ² ln(1/q)/2 = {:.6}",
            short(alpha),
            0.5 * s * s * ln(1.0 / q)
        ))
    } else {
        None
    };
    Ok(Bound {
        name: "bun",
        value,
        fails,
    })
}

/// Lemma 9 of Mironov–Talwar–Zhang bounds the part of A_α left of z₀ unconditionally:
/// A⁽¹⁾ ≤ 1 + q²α(α−1)(e^{1/σ²} − 1). Reported as ln(that)/(α−1); it bounds
/// ε(α) only together with Lemma 10's A⁽²⁾ term, so it is informative, not a bound on ε.
pub fn lemma9(m: &Sgm, alpha: f64) -> Result<Bound, Error> {
    let alpha = check_order(alpha)?;
    let (q, s) = (m.q(), m.sigma());
    let value = ln_1p(q * q * alpha * (alpha - 1.0) * exp_m1(1.0 / (s * s))) / (alpha - 1.0);
    Ok(Bound {
        name: "lemma9",
        value,
        fails: Some("bounds only A(1), the part of A_alpha left of z0".to_string()),
    })
}

/// All bounds at one order, Theorem 11 first.
pub fn all(m: &Sgm, alpha: f64) -> Result<Vec<Bound>, Error> {
    Ok(vec![
        theorem11(m, alpha)?,
        abadi(m, alpha)?,
        bun(m, alpha)?,
        lemma9(m, alpha)?,
    ])
}

/// Figure 1 (left) of Mironov–Talwar–Zhang at one (q, σ): the largest α allowed by condition
/// (4), by (5), their minimum, and the exact largest α with ε(α) ≤ 2q²α/σ².
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MaxOrder {
    pub cond4: f64,
    pub cond5: f64,
    pub min: f64,
    pub exact: f64,
}

/// Upper end of the α search in [`max_order`].
pub const MAX_ORDER_SEARCH: f64 = 1e5;

/// Largest α ∈ (1, MAX_ORDER_SEARCH] with pred(α) true, assuming pred holds on
/// (1, α*] and fails above (checked on a log grid, then bisected). Returns 1.0
/// if pred fails everywhere on the grid.
fn largest(pred: impl Fn(f64) -> bool) -> f64 {
    let n = 30;
    let (l0, l1) = (ln(1e-6f64), ln(MAX_ORDER_SEARCH - 1.0));
    let at = |i: usize| 1.0 + exp(l0 + (l1 - l0) * i as f64 / n as f64);
    if !pred(at(0)) {
        return 1.0;
    }
    let mut i = 0;
    while i < n && pred(at(i + 1)) {
        i += 1;
    }
    if i == n {
        return MAX_ORDER_SEARCH;
    }
    // Grid ratio (1e11)^(1/30) ≈ 2.3; 40 halvings leave < 1e-11 relative.
    super::search::bisect((at(i), at(i + 1)), pred, 40, |_, _| false).0
}

pub fn max_order(m: &Sgm) -> MaxOrder {
    let (q, s) = (m.q(), m.sigma());
    if q == 0.0 {
        let inf = MAX_ORDER_SEARCH;
        return MaxOrder {
            cond4: inf,
            cond5: inf,
            min: inf,
            exact: inf,
        };
    }
    let cond4 = largest(|a| a <= cond4_rhs(q, s, a));
    let cond5 = largest(|a| a <= cond5_rhs(q, s, a));
    let lat = Lattice::new(q, s);
    let exact = largest(|a| lat.rdp(a) <= 2.0 * q * q * a / (s * s));
    MaxOrder {
        cond4,
        cond5,
        min: cond4.min(cond5),
        exact,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theorem11_names_failing_condition() {
        let m = Sgm::new(0.3, 5.0).unwrap();
        assert!(theorem11(&m, 2.0).unwrap().fails.unwrap().contains("1/5"));
        let m = Sgm::new(0.01, 2.0).unwrap();
        assert!(theorem11(&m, 2.0).unwrap().fails.unwrap().contains("σ"));
        let m = Sgm::new(0.01, 4.0).unwrap();
        assert!(theorem11(&m, 2.0).unwrap().holds());
        assert!(theorem11(&m, 1000.0)
            .unwrap()
            .fails
            .unwrap()
            .contains("condition"));
    }
}
