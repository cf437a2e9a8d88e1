//! What the charts and the headline show, computed from the engine; sentences, CSV.

use super::*;
use crate::decimal::Dir;
use crate::engine::math::exp;

/// The inputs of the calculator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inputs {
    pub q: f64,
    pub sigma: f64,
    pub steps: u64,
    pub delta: f64,
    pub conversion: Conversion,
    /// ω of the tCDP line on chart A (Mironov–Talwar–Zhang §4).
    pub omega: f64,
}

impl Inputs {
    /// MNIST example: 60 000 examples, batch 256, 60 epochs, σ = 1.1, δ = 1e-5.
    pub fn mnist() -> Self {
        Inputs {
            q: 256.0 / 60000.0,
            sigma: 1.1,
            steps: 14063,
            delta: 1e-5,
            conversion: Conversion::Improved,
            omega: 32.0,
        }
    }
}

/// Everything the charts and the headline show.
#[derive(Debug, Clone)]
pub struct Model {
    pub inputs: Inputs,
    pub orders: Vec<f64>,
    /// Per-step exact RDP at each order.
    pub rdp: Vec<f64>,
    /// ε(α) at δ with the improved and the classic conversion (clamped at 0).
    pub eps_improved: Vec<f64>,
    pub eps_classic: Vec<f64>,
    /// The optimum for the chosen conversion.
    pub opt: Optimum,
    /// Theorem 11's bound 2q²α/σ² and whether its conditions hold, per order.
    pub thm11: Vec<f64>,
    pub thm11_holds: Vec<bool>,
    /// The first failing condition at the largest order (if any).
    pub thm11_reason: Option<String>,
    pub abadi: Vec<Option<f64>>,
    pub bun: Vec<Option<f64>>,
    /// Mironov–Talwar–Zhang §4: (ρ, ω) with per-step ε(α) ≤ ρα for α < ω + 1 (drawn dashed, composed).
    pub tcdp: Option<(f64, f64)>,
}

/// The part of a [`Model`] that evaluates RDP (the per-step curve over the default
/// orders, the continuous optimum, tCDP's ρ): its cost grows as σ shrinks (natively
/// σ = 1.1: 0.6 ms; 0.1: 6 ms; 0.03: 40 ms; 0.001: 0.7 s), so the page computes it in
/// its worker below [`HEAVY_SIGMA`] and builds the rest, cheap, from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Heavy {
    pub rdp: Vec<f64>,
    pub opt: Optimum,
    pub tcdp_rho: Option<f64>,
}

/// Below this σ the page computes [`Heavy`] (and chart C, the comparison) in its worker.
pub const HEAVY_SIGMA: f64 = 0.1;

impl Heavy {
    #[inline(never)]
    pub fn compute(inputs: Inputs) -> Result<Heavy, Error> {
        let sgm = Sgm::new(inputs.q, inputs.sigma)?;
        let run = Run::with_default_orders(sgm, inputs.steps)?;
        let delta = crate::engine::params::check_delta(inputs.delta)?;
        // One quadrature lattice for the curve, the optimum and tCDP's ρ (the public
        // `Run::curve_and_epsilon` shares one between the first two).
        let lat = run.lattice();
        let rdp = run.curve_on(&lat);
        let opt = run.epsilon_on(&lat, &rdp, delta, inputs.conversion);
        let tcdp_rho = crate::engine::compare::tcdp_rho_on(&lat, inputs.omega).ok();
        Ok(Heavy { rdp, opt, tcdp_rho })
    }
}

impl Model {
    pub fn compute(inputs: Inputs) -> Result<Model, Error> {
        Model::from_heavy(inputs, Heavy::compute(inputs)?)
    }

    /// The model from its RDP part (computed here or in a worker) and the closed-form rest.
    #[inline(never)]
    pub fn from_heavy(inputs: Inputs, heavy: Heavy) -> Result<Model, Error> {
        let Heavy { rdp, opt, tcdp_rho } = heavy;
        let sgm = Sgm::new(inputs.q, inputs.sigma)?;
        let run = Run::with_default_orders(sgm, inputs.steps)?;
        crate::engine::params::check_delta(inputs.delta)?;
        if rdp.len() != run.orders().len() {
            return Err(Error::CurveLength {
                expected: run.orders().len(),
                got: rdp.len(),
            });
        }
        let t = inputs.steps as f64;
        let conv = |c| -> Vec<f64> {
            run.orders()
                .iter()
                .zip(&rdp)
                .map(|(&a, &r)| {
                    crate::engine::accountant::eps_from_rdp(t * r, a, inputs.delta, c).max(0.0)
                })
                .collect()
        };
        let eps_improved = conv(Conversion::Improved);
        let eps_classic = conv(Conversion::Classic);
        let mut thm11 = Vec::with_capacity(rdp.len());
        let mut thm11_holds = Vec::with_capacity(rdp.len());
        let mut thm11_reason = None;
        let mut abadi = Vec::new();
        let mut bun = Vec::new();
        for &a in run.orders() {
            let b = bounds::theorem11(&sgm, a)?;
            thm11.push(b.value);
            thm11_holds.push(b.holds());
            if let Some(r) = b.fails {
                thm11_reason = Some(r);
            }
            let ab = bounds::abadi(&sgm, a)?;
            abadi.push(ab.holds().then_some(ab.value));
            let bu = bounds::bun(&sgm, a)?;
            bun.push(bu.holds().then_some(bu.value));
        }
        let tcdp = tcdp_rho.map(|rho| (rho, inputs.omega));
        Ok(Model {
            tcdp,
            inputs,
            orders: run.orders().to_vec(),
            rdp,
            eps_improved,
            eps_classic,
            opt,
            thm11,
            thm11_holds,
            thm11_reason,
            abadi,
            bun,
        })
    }

    /// One plain-language sentence (in the spirit of TF Privacy's statement).
    pub fn sentence(&self) -> String {
        sentence_for(&self.inputs, self.opt.value, "exact RDP")
    }

    /// The CSV below with a header of `# key = value` lines (pandas: `comment="#"`): the
    /// run's parameters and every headline number, so a file stands on its own.
    /// `tight` is the PLD bracket (upper, lower) when known; `batching` the page's choice.
    pub fn csv_with_header(&self, tight: Option<(f64, f64)>, batching: &str) -> String {
        self.csv_header(tight, batching) + &self.csv()
    }

    /// The `# key = value` header of [`Model::csv_with_header`] alone (the tight charts' CSV
    /// carries the same).
    pub fn csv_header(&self, tight: Option<(f64, f64)>, batching: &str) -> String {
        let i = &self.inputs;
        let conv = i.conversion.name();
        let mut s = format!(
            "# sgm-rdp {}: the Sampled Gaussian Mechanism (DP-SGD), add/remove-one adjacency\n\
             # sample_rate = {}\n# noise_multiplier = {}\n# steps = {}\n# delta = {:e}\n\
             # batching = {batching} (the epsilons assume Poisson sampling)\n\
             # conversion = {conv}\n\
             # epsilon_rdp = {} (exact RDP, optimal alpha = {})\n",
            env!("CARGO_PKG_VERSION"),
            i.q,
            i.sigma,
            i.steps,
            i.delta,
            self.opt.value,
            self.opt.alpha,
        );
        if let Some((u, l)) = tight {
            s += &format!(
                "# epsilon_pld = {u} (tight, certified upper bound; bracket [{l}, {u}])\n"
            );
        }
        s
    }

    /// CSV of the curves (alpha, per-step RDP, composed RDP, ε improved, ε classic, Theorem 11).
    pub fn csv(&self) -> String {
        let mut s = String::from("alpha,rdp_per_step,rdp_total,epsilon_improved,epsilon_classic,theorem11_bound,theorem11_holds\n");
        let t = self.inputs.steps as f64;
        for i in 0..self.orders.len() {
            s += &format!(
                "{},{:e},{:e},{:e},{:e},{:e},{}\n",
                self.orders[i],
                self.rdp[i],
                t * self.rdp[i],
                self.eps_improved[i],
                self.eps_classic[i],
                self.thm11[i],
                self.thm11_holds[i]
            );
        }
        s
    }
}

/// Short, round-trippable number formatting for labels.
/// The plain-language sentence for ε at the inputs' δ, naming the accountant.
pub fn sentence_for(i: &Inputs, e: f64, accountant: &str) -> String {
    let shown = eps_number(e);
    let factor = eps_factor(e);
    format!(
        "Training with noise multiplier {} and sampling rate {} for {} steps satisfies \
         ({}, {:e})-differential privacy ({accountant} accountant): for any one example, adding \
         or removing it changes the probability of any outcome by at most a factor {factor}, \
         except with probability {:e}.",
        i.sigma,
        fmt_num(i.q),
        i.steps,
        shown,
        i.delta,
        i.delta
    )
}

/// An upper ε as a sentence's number: [`fmt_eps`], but above 10⁶ the number (scientific, five
/// decimals, rounded up: 2.90000e9) where [`fmt_eps`] has words, which inside "(ε, δ)" or after
/// "e^" do not read.
pub fn eps_number(e: f64) -> String {
    if e <= 1e6 {
        fmt_eps(e)
    } else {
        crate::decimal::sci(e, 5, Dir::Up)
    }
}

/// "e^ε" and what it is: e^ε overflows f64 beyond 709 and means nothing long before, so above
/// ε = 30 the sentence says so in words.
pub fn eps_factor(e: f64) -> String {
    let shown = eps_number(e);
    if e <= 30.0 {
        format!("e^{shown} ≈ {}", crate::decimal::fixed(exp(e), 3, Dir::Up))
    } else {
        format!(
            "e^{shown} ≈ 10^{:.0} — so large that this is no meaningful guarantee",
            e / std::f64::consts::LN_10
        )
    }
}

/// An ε as the headlines show it, as an upper end: 4 decimals rounded up, or above 10⁶
/// stated in words (it promises nothing, and its digits mean nothing; "over 10⁶", which reads
/// after the page's "ε = " — "> 10⁶" there read "ε = > 10⁶"), or below 10⁻³
/// (where 4 decimals would print an upper bound as 0.0000 or drop its digits) three
/// significant digits, rounded up: an upper bound printed stays one (1.873e-5 → "1.88e-5",
/// 2.3819334 → "2.3820").
pub fn fmt_eps(e: f64) -> String {
    fmt_eps_dir(e, Dir::Up)
}

/// A lower end as [`fmt_eps`] prints an upper one, rounded down (a lower bound printed
/// stays one).
pub fn fmt_eps_lower(e: f64) -> String {
    fmt_eps_dir(e, Dir::Down)
}

fn fmt_eps_dir(e: f64, dir: Dir) -> String {
    if e > 1e6 {
        "over 10⁶ — no meaningful guarantee".into()
    } else if e > 0.0 && e < 1e-3 {
        crate::decimal::sci(e, 2, dir)
    } else {
        crate::decimal::fixed(e, 4, dir)
    }
}

/// An upper bound as [`fmt_num`] prints a number, with six significant digits rounded up.
pub fn fmt_num_up(x: f64) -> String {
    fmt_num_dir(x, Dir::Up)
}

/// A lower bound as [`fmt_num`] prints a number, with six significant digits rounded down.
pub fn fmt_num_lower(x: f64) -> String {
    fmt_num_dir(x, Dir::Down)
}

/// A bound with six significant digits, rounded in direction `dir`, in [`fmt_num`]'s form.
pub fn fmt_num_dir(x: f64, dir: Dir) -> String {
    let s = crate::decimal::sci(x, 5, dir);
    crate::decimal::parse(&s).map_or(s, shortest)
}

/// The shortest text of `r`, in scientific notation below 10⁻³ and from 10⁶ on.
fn shortest(r: f64) -> String {
    if r != 0.0 && (r.abs() < 1e-3 || r.abs() >= 1e6) {
        format!("{r:e}")
    } else {
        format!("{r}")
    }
}

pub fn fmt_num(x: f64) -> String {
    // Round to 6 significant digits, then print the shortest form — unless rounding
    // would land on 0 or 1 (δ = 1 − 1e-16 must not read "1"): then every digit.
    let r = crate::decimal::parse(&format!("{x:.5e}")).unwrap_or(x);
    if r != x && (r == 1.0 || r == 0.0) {
        return format!("{x}");
    }
    shortest(r)
}

/// Plain-text summaries of the charts, for screen readers.
pub fn summary_a(m: &Model) -> String {
    format!(
        "Chart of epsilon against the Rényi order alpha for {} orders from {} to {}. The smallest epsilon, {:.4}, is at alpha {:.2}.",
        m.orders.len(),
        m.orders[0],
        m.orders.last().copied().unwrap_or(0.0),
        m.opt.value,
        m.opt.alpha
    )
}

pub fn summary_b(m: &Model) -> String {
    let n = m.thm11_holds.iter().filter(|h| **h).count();
    format!(
        "Chart of the exact per-step RDP and Theorem 11's bound 2q²α/σ². The theorem's conditions hold at {n} of {} orders{}.",
        m.orders.len(),
        m.thm11_reason.as_ref().map(|r| format!("; elsewhere it fails on {r}")).unwrap_or_default()
    )
}

/// The default α grid (re-exported for the web layer).
pub fn orders() -> Vec<f64> {
    default_orders()
}

#[cfg(test)]
mod eps_text {
    use super::{fmt_eps, fmt_eps_lower};

    /// Below 10⁻³ an ε is shown with three significant digits, elsewhere with four decimals;
    /// an upper end never below the value, a lower end never above it.
    #[test]
    fn small_epsilons_keep_their_digits_and_stay_upper_bounds() {
        assert_eq!(fmt_eps(1.873e-5), "1.88e-5");
        assert_eq!(fmt_eps_lower(1.873e-5), "1.87e-5");
        assert_eq!(fmt_eps(1.9e-5), "1.90e-5");
        assert_eq!(fmt_eps(9.999e-4), "1.00e-3");
        assert_eq!(fmt_eps(2e-4), "2.00e-4");
        assert_eq!(fmt_eps(0.0), "0.0000");
        assert_eq!(fmt_eps(2.3819), "2.3819");
        assert_eq!(fmt_eps(2.3819334), "2.3820");
        assert_eq!(fmt_eps_lower(2.3819934), "2.3819");
        let mut e = 1.234e-12;
        while e < 1e3 {
            let (up, lo): (f64, f64) = (
                fmt_eps(e).parse().unwrap(),
                fmt_eps_lower(e).parse().unwrap(),
            );
            let unit = if e < 1e-3 { e * 0.011 } else { 1.0001e-4 };
            assert!(
                lo <= e && e <= up && up - lo <= unit,
                "{e:e} shown as [{}, {}]",
                fmt_eps_lower(e),
                fmt_eps(e)
            );
            e *= 1.37;
        }
    }
}
