//! Composition over T steps and RDP → (ε, δ) conversion, optimized over α.
//!
//! * Composition: RDP adds up (Mironov 2017, Prop. 1): RDP_T(α) = T·ε(α).
//! * Classic conversion (Mironov 2017, Prop. 3): ε = RDP_T(α) + ln(1/δ)/(α − 1).
//! * Improved conversion (Canonne–Kamath–Steinke 2020, Prop. 12 ≡ Balle et
//!   al. 2020, Thm 21): ε = RDP_T(α) + ln(1 − 1/α) − (ln δ + ln α)/(α − 1).
//!
//! Both are clamped at 0 and minimized over α: first over an order list (by
//! default dp_accounting's 156 orders), then over continuous α by golden-section
//! search between the best order's neighbours. The continuous answer is never
//! worse than the grid's (we return the smaller of the two).

use super::error::Error;
use super::params::{check_delta, check_epsilon, check_orders, check_steps, Sgm};
use super::rdp::Lattice;
use crate::engine::math::{exp, ln, ln_1p};
use serde::Serialize;

/// Which RDP → (ε, δ) conversion to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Conversion {
    /// Mironov 2017, Prop. 3.
    Classic,
    /// Canonne–Kamath–Steinke 2020, Prop. 12 (tighter; the default).
    Improved,
}

impl Conversion {
    /// The name the CLI, the JS API, the URL and the widget use: "improved" or "classic".
    pub fn name(self) -> &'static str {
        match self {
            Conversion::Classic => "classic",
            Conversion::Improved => "improved",
        }
    }
}

impl std::str::FromStr for Conversion {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "classic" => Ok(Conversion::Classic),
            "improved" => Ok(Conversion::Improved),
            other => Err(Error::ConversionName(other.to_string())),
        }
    }
}

/// dp_accounting's default orders: 1.1, 1.2, …, 10.9, 11, 12, …, 63, 128, 256, 512, 1024.
pub fn default_orders() -> Vec<f64> {
    let mut v: Vec<f64> = (11..110).map(|i| i as f64 / 10.0).collect();
    v.extend((11..64).map(|i| i as f64));
    v.extend([128.0, 256.0, 512.0, 1024.0]);
    v
}

/// ε for one order α given composed RDP `rdp_t` = T·ε(α), not clamped.
pub fn eps_from_rdp(rdp_t: f64, alpha: f64, delta: f64, conv: Conversion) -> f64 {
    let am1 = alpha - 1.0;
    match conv {
        Conversion::Classic => rdp_t - ln(delta) / am1,
        Conversion::Improved => rdp_t + ln_1p(-1.0 / alpha) - (ln(delta) + ln(alpha)) / am1,
    }
}

/// ln δ for one order α given composed RDP and a target ε (inverse of the above).
pub fn ln_delta_from_rdp(rdp_t: f64, alpha: f64, eps: f64, conv: Conversion) -> f64 {
    let am1 = alpha - 1.0;
    match conv {
        Conversion::Classic => am1 * (rdp_t - eps),
        Conversion::Improved => am1 * (rdp_t - eps + ln_1p(-1.0 / alpha)) - ln(alpha),
    }
}

/// The result of an optimization over α.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Optimum {
    /// The optimized value (ε, or δ for `delta`).
    pub value: f64,
    /// The order that attains it.
    pub alpha: f64,
    /// The best order of the grid and its value (before continuous refinement).
    pub grid_alpha: f64,
    pub grid_value: f64,
    /// True when the grid's best order is its first or last: widen the orders.
    pub at_edge: bool,
}

/// A training run: mechanism, steps, orders. Built only by [`Run::new`], so every
/// `Run` holds T ∈ [1, MAX_STEPS] and a nonempty, sorted, deduplicated list of valid
/// orders (the optimizers index it without checks).
#[derive(Debug, Clone)]
pub struct Run {
    sgm: Sgm,
    steps: u64,
    orders: Vec<f64>,
}

/// Ascending in-place heapsort of finite values (the orders, validated first): O(n log n)
/// worst case, no allocation. Hand-written for the wasm's size budget: std's sort for f64
/// is a second ~2.5 KB copy of its quicksort next to the one plotters already links.
fn heap_sort(v: &mut [f64]) {
    fn sift_down(v: &mut [f64], mut root: usize, end: usize) {
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                return;
            }
            if child + 1 < end && v[child] < v[child + 1] {
                child += 1;
            }
            if v[root] >= v[child] {
                return;
            }
            v.swap(root, child);
            root = child;
        }
    }
    let n = v.len();
    for start in (0..n / 2).rev() {
        sift_down(v, start, n);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift_down(v, 0, end);
    }
}

impl Run {
    /// Validates T and every order; `orders` may be a slice, array, `Vec` or `&Vec`.
    pub fn new(sgm: Sgm, steps: u64, orders: impl AsRef<[f64]>) -> Result<Self, Error> {
        let steps = check_steps(steps)?;
        let mut orders = check_orders(orders.as_ref())?;
        heap_sort(&mut orders);
        orders.dedup();
        Ok(Run { sgm, steps, orders })
    }

    /// The same mechanism and orders with another number of steps.
    pub fn with_steps(&self, steps: u64) -> Result<Self, Error> {
        Ok(Run {
            steps: check_steps(steps)?,
            ..self.clone()
        })
    }

    pub fn sgm(&self) -> Sgm {
        self.sgm
    }
    pub fn steps(&self) -> u64 {
        self.steps
    }
    /// The orders, sorted ascending, without duplicates.
    pub fn orders(&self) -> &[f64] {
        &self.orders
    }

    /// With dp_accounting's default orders.
    pub fn with_default_orders(sgm: Sgm, steps: u64) -> Result<Self, Error> {
        Run::new(sgm, steps, default_orders())
    }

    pub(crate) fn lattice(&self) -> Lattice {
        Lattice::new(self.sgm.q(), self.sgm.sigma())
    }

    /// Per-step RDP at each order of the run.
    pub fn rdp_curve(&self) -> Vec<f64> {
        self.curve_on(&self.lattice())
    }

    pub(crate) fn curve_on(&self, lat: &Lattice) -> Vec<f64> {
        self.orders.iter().map(|&a| lat.rdp(a)).collect()
    }

    /// The per-step curve over the run's orders and the smallest ε at `delta`, from one
    /// per-(q, σ) quadrature lattice (what [`Run::rdp_curve`] then
    /// [`Run::epsilon_from_curve`] compute with two).
    pub fn curve_and_epsilon(
        &self,
        delta: f64,
        conv: Conversion,
    ) -> Result<(Vec<f64>, Optimum), Error> {
        let delta = check_delta(delta)?;
        let lat = self.lattice();
        let per_step = self.curve_on(&lat);
        let opt = self.epsilon_on(&lat, &per_step, delta, conv);
        Ok((per_step, opt))
    }

    /// Smallest ε at `delta` over the orders and continuous α (clamped at 0).
    ///
    /// dp_accounting's `RdpAccountant` prints 2.59666 (order 8.1) for MNIST; over
    /// continuous α the optimum is a little lower:
    ///
    /// ```
    /// use sgm_rdp::engine::{Conversion, Run, Sgm};
    /// let run = Run::with_default_orders(Sgm::new(256.0 / 60000.0, 1.1)?, 14063)?;
    /// let e = run.epsilon(1e-5, Conversion::Improved)?;
    /// assert!((e.grid_value - 2.59666).abs() < 1e-5 && e.grid_alpha == 8.1);
    /// assert!(e.value <= e.grid_value && (e.alpha - 8.12).abs() < 0.01);
    /// # Ok::<(), sgm_rdp::engine::Error>(())
    /// ```
    pub fn epsilon(&self, delta: f64, conv: Conversion) -> Result<Optimum, Error> {
        let delta = check_delta(delta)?;
        let lat = self.lattice();
        let per_step = self.curve_on(&lat);
        Ok(self.epsilon_on(&lat, &per_step, delta, conv))
    }

    /// As [`Run::epsilon`], reusing a per-step curve computed by [`Run::rdp_curve`]
    /// (one value ≥ 0 per order; anything else is refused).
    pub fn epsilon_from_curve(
        &self,
        per_step: &[f64],
        delta: f64,
        conv: Conversion,
    ) -> Result<Optimum, Error> {
        let delta = check_delta(delta)?;
        if per_step.len() != self.orders.len() {
            return Err(Error::CurveLength {
                expected: self.orders.len(),
                got: per_step.len(),
            });
        }
        for &r in per_step {
            if !(r >= 0.0 && r.is_finite()) {
                return Err(Error::NotFinite {
                    name: "per-step RDP value",
                    value: r,
                });
            }
        }
        Ok(self.epsilon_on(&self.lattice(), per_step, delta, conv))
    }

    /// As [`Run::epsilon_from_curve`] on the caller's lattice for (q, σ)
    /// (its cached nodes serve the continuous refinement too).
    pub(crate) fn epsilon_on(
        &self,
        lat: &Lattice,
        per_step: &[f64],
        delta: f64,
        conv: Conversion,
    ) -> Optimum {
        let t = self.steps as f64;
        let f = |a: f64, r: f64| eps_from_rdp(t * r, a, delta, conv);
        let g = |a: f64| eps_from_rdp(t * lat.rdp(a), a, delta, conv);
        let mut opt = minimize(&self.orders, per_step, f, g);
        opt.value = opt.value.max(0.0);
        opt.grid_value = opt.grid_value.max(0.0);
        opt
    }

    /// Smallest δ for which the run is (ε, δ)-DP, over orders and continuous α.
    pub fn delta(&self, eps: f64, conv: Conversion) -> Result<Optimum, Error> {
        Ok(self.deltas(&[eps], conv)?.remove(0))
    }

    /// [`Run::delta`] at each ε, from one per-step curve and one quadrature lattice (its
    /// cached nodes serve every continuous refinement): a privacy profile's RDP curve.
    pub fn deltas(&self, eps: &[f64], conv: Conversion) -> Result<Vec<Optimum>, Error> {
        let eps: Vec<f64> = eps
            .iter()
            .map(|&e| check_epsilon(e))
            .collect::<Result<_, _>>()?;
        let lat = self.lattice();
        let per_step = self.curve_on(&lat);
        let t = self.steps as f64;
        Ok(eps
            .iter()
            .map(|&eps| {
                let f = |a: f64, r: f64| ln_delta_from_rdp(t * r, a, eps, conv);
                let g = |a: f64| ln_delta_from_rdp(t * lat.rdp(a), a, eps, conv);
                let mut opt = minimize(&self.orders, &per_step, f, g);
                opt.value = exp(opt.value).min(1.0);
                opt.grid_value = exp(opt.grid_value).min(1.0);
                opt
            })
            .collect())
    }
}

/// The largest value of `f` over the orders, refined over continuous α by `g` (the
/// same function, computing the per-step RDP itself) between the best order's neighbours.
pub(crate) fn maximize(
    orders: &[f64],
    per_step: &[f64],
    f: impl Fn(f64, f64) -> f64,
    g: impl Fn(f64) -> f64,
) -> f64 {
    let o = minimize(orders, per_step, |a, r| -f(a, r), |a| -g(a));
    -o.value
}

/// Minimize over the grid (values from `per_step` via `f`), then refine over
/// continuous α with `g` between the best order's neighbours.
fn minimize(
    orders: &[f64],
    per_step: &[f64],
    f: impl Fn(f64, f64) -> f64,
    g: impl Fn(f64) -> f64,
) -> Optimum {
    let mut best = 0;
    let mut best_v = f64::INFINITY;
    for (i, (&a, &r)) in orders.iter().zip(per_step).enumerate() {
        let v = f(a, r);
        if v < best_v {
            best_v = v;
            best = i;
        }
    }
    let n = orders.len();
    let at_edge = n > 1 && (best == 0 || best == n - 1);
    let lo = orders[best.saturating_sub(1)];
    let hi = orders[(best + 1).min(n - 1)];
    let (alpha, value) = if hi > lo {
        golden(&g, lo, hi)
    } else {
        (orders[best], best_v)
    };
    let (alpha, value) = if value < best_v {
        (alpha, value)
    } else {
        (orders[best], best_v)
    };
    Optimum {
        value,
        alpha,
        grid_alpha: orders[best],
        grid_value: best_v,
        at_edge,
    }
}

/// Golden-section search for the minimum of a unimodal f on [a, b], in ln α.
fn golden(f: &impl Fn(f64) -> f64, a: f64, b: f64) -> (f64, f64) {
    let inv_phi = 0.618_033_988_749_894_9;
    let (mut lo, mut hi) = (ln(a - 1.0), ln(b - 1.0));
    let x = |t: f64| 1.0 + exp(t);
    let mut c = hi - inv_phi * (hi - lo);
    let mut d = lo + inv_phi * (hi - lo);
    let (mut fc, mut fd) = (f(x(c)), f(x(d)));
    for _ in 0..60 {
        if (hi - lo).abs() < 1e-9 {
            break;
        }
        if fc < fd {
            hi = d;
            d = c;
            fd = fc;
            c = hi - inv_phi * (hi - lo);
            fc = f(x(c));
        } else {
            lo = c;
            c = d;
            fc = fd;
            d = lo + inv_phi * (hi - lo);
            fd = f(x(d));
        }
    }
    if fc < fd {
        (x(c), fc)
    } else {
        (x(d), fd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_grid_has_156_orders() {
        let o = default_orders();
        assert_eq!(o.len(), 156);
        assert_eq!(o[0], 1.1);
        assert_eq!(o[98], 10.9);
        assert_eq!(o[155], 1024.0);
    }

    #[test]
    fn conversions_invert() {
        for conv in [Conversion::Classic, Conversion::Improved] {
            let e = eps_from_rdp(1.3, 7.5, 1e-5, conv);
            let ld = ln_delta_from_rdp(1.3, 7.5, e, conv);
            assert!((ld - ln(1e-5f64)).abs() < 1e-12);
        }
    }
}

#[cfg(test)]
mod sort_tests {
    use super::heap_sort;

    #[test]
    fn heap_sort_agrees_with_std() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for n in 0..200 {
            let mut v: Vec<f64> = (0..n)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    1.0 + (seed % 1000) as f64 / 7.0
                })
                .collect();
            let mut want = v.clone();
            want.sort_by(f64::total_cmp);
            heap_sort(&mut v);
            assert_eq!(v, want, "n = {n}");
        }
    }
}
