//! T-fold composition of lattice PLDs by FFT, under an exponential tilt.
//!
//! The composed loss of T steps is the sum of T independent per-step losses, so its
//! lattice distribution is the T-fold convolution of the per-step one: one forward
//! FFT, the T-th power of the spectrum, one inverse FFT. Two things make that
//! accurate for tiny δ and long runs:
//!
//! * **Tilt.** We compose p̃_k ∝ p_k·e^{λkΔ} instead of p_k. Tilting commutes with
//!   convolution (e^{λ(k₁+k₂)Δ} factorizes), so p_T(K) = p̃_T(K)·M(λ)^T·e^{−λKΔ} with
//!   M(λ) = Σ p_k e^{λkΔ}, and with λ chosen so that the tilted mean sits at the ε
//!   of interest the FFT's absolute rounding error is small *relative to the masses
//!   that decide δ(ε)* even when δ is 1e-15 (the saddle-point idea; λ + 1 plays the
//!   role of the Rényi order α).
//! * **Window.** The tilted composed distribution is concentrated around its mean; we
//!   keep a window of N lattice points around it. The FFT's circular convolution folds
//!   whatever lies outside onto the window; Chernoff's inequality bounds that mass, and
//!   N is chosen so the bound is below `ALIAS`.
//!
//! Both the pessimistic and the optimistic lattice are composed in one complex FFT
//! (real and imaginary parts), and read back with explicit error terms (rounding,
//! aliasing, the mass at +∞) added to the upper and subtracted from the lower bound.
//!
//! This one-FFT composition is used while its window fits `MAX_FFT`; beyond that (long
//! runs, small q) the ladder (`ladder.rs`) composes by repeated squaring on evolving lattices
//! and hands back the same [`Composed`] to read.

use super::discretize::StepPld;
use super::fft::Fft;
use super::gauss::U;
use crate::engine::math::{atan2, cos, exp, exp_m1, ln, ln_1p, log2, sin};
use num_complex::Complex;
use std::sync::Arc;

/// Tilted mass allowed to fold onto the window (both tails together). It enters δ
/// explicitly (ALIAS·e^{ln M^T − λε}, about 1e-8 of δ when the tilt sits at the answer):
/// 1e-10 rather than 1e-12 lets MNIST's composed loss, whose right tail is heavier than
/// a Gaussian's, fit 2¹⁶ points instead of 2¹⁷ (same bracket to 1e-9).
pub(crate) const ALIAS: f64 = 1e-10;
/// Largest window of the one-FFT composition: 2¹⁹ points with the whole engine (native and
/// the worker-only wasm) for runs of [`LONG_RUN`] to [`MID_RUN`] steps, 2¹⁸ for longer ones and
/// 2¹⁷ for shorter ones ([`max_fft`]); wider composed losses go to the ladder (`ladder.rs`). 2²⁰ in the page's
/// wasm, which has no ladder (four 16 MB complex buffers, ≈ 0.5 s).
/// At 2¹⁷ for every run the ladder took the long heavy-tailed runs whose window is 2¹⁸
/// (small σ, T = 10⁴–10⁵), where its coarse tail made it looser as well as slower; a short
/// run's ladder has few levels and was the cheaper there (the T-th power in polar form cost
/// the one FFT ~100 ns a window point: q = 1e-3, σ = 0.8, T = 100 took 65 ms at 2¹⁸, 30 at
/// 2¹⁷). Over
/// the typical class's 200 runs (those of `cargo bench --bench engine -- class_typical`, two
/// builds side by side as `benches/typical_ab.py` runs them): 90th percentile 41 → 27 ms,
/// the sum 3449 → 2494 ms, none more than 5 ms
/// slower (q = 0.1, σ = 0.6, T = 10⁵, δ = 1e-10: 112 → 20 ms); at 2¹⁸ for every run the sum
/// was 2949 ms. (With the powers by squaring, [`pow`], 2¹⁸ for every run measured within the
/// host's noise: the sum 2–5 % lower over four rounds, three short runs 5–19 ms faster — q =
/// 3e-3, σ = 0.6, T = 1000, δ = 1e-10: 41.5 → 22.1 ms — and several 2–4 ms slower; not
/// changed.)
#[cfg(full_engine)]
pub(crate) const MAX_FFT: usize = 1 << 19;
/// The most steps (in all) whose one-FFT window may be [`MAX_FFT`]; longer runs stop at half
/// of it ([`max_fft`]). Runs of 10⁴–10⁵ steps at q ≈ 1e-3 and small σ compose in one FFT of
/// 2¹⁹ points sooner and narrower than on the ladder (q = 1e-3, σ = 0.6, T = 10⁵, δ = 1e-10:
/// 37 → 18 ms, [10.151485, 10.155942] → [10.152346, 10.155569]); over the corner sweep's
/// runs of 10⁷–10⁹ steps (`benches/epsilon_sweep.py --corner`, the same brackets) the
/// windows tried up to 2¹⁹ before the ladder cost 20 % (10.3 → 12.3 s in all).
#[cfg(full_engine)]
pub(crate) const MID_RUN: f64 = 1e6;
/// The fewest steps (in all) whose one-FFT window may be [`MAX_FFT`] ([`max_fft`]).
#[cfg(full_engine)]
pub(crate) const LONG_RUN: f64 = 4096.0;
/// The widest one-FFT window of a run shorter than [`LONG_RUN`] steps ([`max_fft`]).
#[cfg(full_engine)]
pub(crate) const SHORT_MAX_FFT: usize = 1 << 17;
#[cfg(not(full_engine))]
pub(crate) const MAX_FFT: usize = 1 << 20;

use super::pool::{give, take, take_unfilled, COMPLEXES, REALS};
#[cfg(full_engine)]
pub(crate) use super::work::Lowering;
pub(crate) use super::work::Work;

/// Forward and inverse FFT plans of one length.
type Plans = (Arc<Fft>, Arc<Fft>);

/// FFT plans (twiddle tables) kept per length for the life of the process: a slider that
/// recomputes at the same length pays for them once. A cache only: a plan is a pure
/// function of its length, so no answer depends on what was asked before.
static PLANS: std::sync::Mutex<Vec<(usize, Plans)>> = std::sync::Mutex::new(Vec::new());

pub(crate) fn plans(n: usize) -> Plans {
    {
        let mut p = PLANS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, pl)) = p.iter().find(|(len, _)| *len == n) {
            return pl.clone();
        }
        let pl: Plans = (Arc::new(Fft::new(n, false)), Arc::new(Fft::new(n, true)));
        if p.len() >= 8 {
            p.remove(0);
        }
        p.push((n, pl.clone()));
        pl
    }
}

/// The widest one-FFT window for a run of `steps` steps in all: [`MAX_FFT`]; with the whole
/// engine [`SHORT_MAX_FFT`] for a run shorter than [`LONG_RUN`] steps (whose ladder is then
/// cheaper) and half of [`MAX_FFT`] for one longer than [`MID_RUN`].
pub(crate) fn max_fft(steps: f64) -> usize {
    #[cfg(full_engine)]
    if steps < LONG_RUN {
        return SHORT_MAX_FFT;
    }
    #[cfg(full_engine)]
    if steps > MID_RUN {
        return MAX_FFT / 2;
    }
    #[cfg(not(full_engine))]
    let _ = steps;
    MAX_FFT
}

/// One phase: a per-step lattice PLD composed `steps` times.
pub(crate) struct Phase<'a> {
    pub pld: &'a StepPld,
    pub steps: f64,
}

/// Tilted per-step distribution of one lattice: normalized masses, ln of the
/// normalizer, mean and variance (in lattice units), and ‖p̃‖₂.
struct Tilted {
    p: Vec<f64>,
    /// ln p̃ (−∞ where p̃ = 0), kept for the cumulant.
    ln_p: Vec<f64>,
    ln_m: f64,
    mean: f64,
    var: f64,
    l2: f64,
    /// Indices of the nonzero masses when they are few (a sparse lattice: the random
    /// allocation's log-normal, whose tail bins widen with V): the cumulant sums only them.
    nz: Option<Vec<u32>>,
}

impl Tilted {
    /// The indices that can hold mass: the nonzero ones of a sparse lattice, else all.
    fn support(&self) -> impl Iterator<Item = usize> + Clone + '_ {
        let (listed, all) = match &self.nz {
            Some(nz) => (nz.as_slice(), 0),
            None => (&[][..], self.p.len()),
        };
        listed.iter().map(|&i| i as usize).chain(0..all)
    }
}

/// ln of the tilted masses p_k·e^{λkΔ} of a lattice starting at k_lo.
pub(crate) fn tilted_logs(ln_p: &[f64], k_lo: i64, lambda: f64, d: f64) -> Vec<f64> {
    ln_p.iter()
        .enumerate()
        .map(|(i, &l)| l + lambda * (k_lo + i as i64) as f64 * d)
        .collect()
}

/// Tilted logs `w` turned into masses e^{w − max w} in place (a sparse lattice's empty points,
/// −∞, skip the exp); returns max w.
pub(super) fn to_masses(w: &mut [f64]) -> f64 {
    let mx = w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    crate::engine::math::exp_shifted(w, mx);
    mx
}

/// Masses `p` of a lattice starting at `k_lo` normalized in place: (ln of their sum, their
/// mean, their variance), in lattice units.
fn normalize(p: &mut [f64], k_lo: i64) -> (f64, f64, f64) {
    let s: f64 = p.iter().sum();
    let ln_s = ln(s);
    let mut mean = 0.0;
    for (i, x) in p.iter_mut().enumerate() {
        *x /= s;
        mean += *x * (k_lo + i as i64) as f64;
    }
    let var = p
        .iter()
        .enumerate()
        .map(|(i, &x)| x * ((k_lo + i as i64) as f64 - mean).powi(2))
        .sum();
    (ln_s, mean, var)
}

fn tilt(k_lo: i64, ln_p: &[f64], lambda: f64, d: f64) -> Tilted {
    let w = tilted_logs(ln_p, k_lo, lambda, d);
    let mut p = w.clone();
    let mx = to_masses(&mut p);
    let (ln_s, mean, var) = normalize(&mut p, k_lo);
    let ln_p: Vec<f64> = w.iter().map(|&x| x - mx - ln_s).collect();
    let l2 = p.iter().fold(0.0, |a, &x| a + x * x);
    let count = p.iter().filter(|&&x| x > 0.0).count();
    let nz = (count * 8 < p.len()).then(|| {
        (0..p.len() as u32)
            .filter(|&i| p[i as usize] > 0.0)
            .collect()
    });
    Tilted {
        p,
        ln_p,
        ln_m: mx + ln_s,
        mean,
        var,
        l2: l2.sqrt(),
        nz,
    }
}

/// ln of the normalizer, mean and variance (lattice units) of one lattice's tilted masses, as
/// [`tilt`] has them (to ~1e-15 of themselves, not to the bit: sums in four lanes, divided by
/// the total once) without the masses' logs, ‖p̃‖₂ or the nonzero count — what a tilt solve
/// reads ~7 times a solve. They only steer (the tilt, and budgets charged as they are set);
/// every tilt gives certified bounds. (Per point [`normalize`] divides and adds to one chain
/// per moment: at q = 1e-5 these reads were 11 % of ε over training's small checkpoints.)
fn tilt_moments(k_lo: i64, ln_p: &[f64], lambda: f64, d: f64) -> (f64, f64, f64) {
    let mut p = tilted_logs(ln_p, k_lo, lambda, d);
    let mx = to_masses(&mut p);
    // Σ p and Σ p·i (i the index from k_lo), then Σ p·(i − mean)²: four lanes each.
    let s = sum_lanes(&p, |_, x| x);
    let m = sum_lanes(&p, |i, x| x * i) / s;
    let var = sum_lanes(&p, |i, x| x * (i - m) * (i - m)) / s;
    (mx + ln(s), k_lo as f64 + m, var)
}

/// Σ f(i, p_i) over `p` (i as a number) in four interleaved lanes.
#[inline(always)]
fn sum_lanes(p: &[f64], f: impl Fn(f64, f64) -> f64) -> f64 {
    let mut acc = [0.0; 4];
    let quads = p.chunks_exact(4);
    let rest = quads.remainder();
    let mut i = 0.0;
    for q in quads {
        for j in 0..4 {
            acc[j] += f(i + j as f64, q[j]);
        }
        i += 4.0;
    }
    let tail: f64 = (rest.iter().enumerate()).fold(0.0, |a, (j, &x)| a + f(i + j as f64, x));
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Tilted mean per step (lattice units) summed over phases: T·κ'(λ), and its
/// derivative T·κ''(λ)·Δ (for Newton's method on the tilt).
pub(crate) fn tilted_mean(phases: &[Phase], lambda: f64, d: f64) -> (f64, f64) {
    let mut m = 0.0;
    let mut v = 0.0;
    for ph in phases {
        let (t_ln_m, t_mean, t_var) = tilt_moments(ph.pld.k_lo, &ph.pld.ln_up, lambda, d);
        let (mean, var) = match &ph.pld.tail {
            None => (t_mean, t_var),
            // A coarse tail: the mixture of the two parts' tilted laws (in units of Δ).
            Some(c) => {
                let f = c.f as f64;
                let (u_ln_m, u_mean, u_var) = tilt_moments(c.k_lo, &c.ln_up, lambda, d * f);
                let w = 1.0 / (1.0 + exp(t_ln_m - u_ln_m));
                let (wt, wu) = if w.is_nan() { (0.5, 0.5) } else { (1.0 - w, w) };
                let mean = wt * t_mean + wu * f * u_mean;
                let var = wt * (t_var + (t_mean - mean).powi(2))
                    + wu * (f * f * u_var + (f * u_mean - mean).powi(2));
                (mean, var)
            }
        };
        m += ph.steps * mean;
        v += ph.steps * var;
    }
    (m, v * d)
}

/// The composed PLDs (pessimistic and optimistic) in tilted form on a window.
pub(crate) struct Composed {
    pub d: f64,
    pub lambda: f64,
    /// Lattice index of window position 0; the window holds K = k0 … k0 + n − 1.
    pub k0: i64,
    /// ln of Π M(λ)^T for each lattice (untilting factor without e^{−λKΔ}).
    ln_scale_up: f64,
    ln_scale_lo: f64,
    /// Suffix sums U(j) = Σ_{j'≥j} a(j')e^{−λ(j'−j)Δ} and V with λ+1, per lattice.
    u_up: Vec<f64>,
    v_up: Vec<f64>,
    u_lo: Vec<f64>,
    v_lo: Vec<f64>,
    /// 1 − Π(1 − p∞)^T: the composed mass at +∞ of the pessimistic lattice.
    pub inf_mass: f64,
    /// ln of the exponential moment Σ p(K)e^{λKΔ} that may be missing from (upper) or
    /// folded into (lower) the window; charged as that times e^{−λ·max(KΔ, ε)}.
    ln_alias_up: f64,
    ln_alias_lo: f64,
    /// Tilted mean and standard deviation of the composed loss, in ε units.
    pub center: f64,
    pub spread: f64,
    /// ln of the composed upper measure's tilted moment Σ p(K)e^{λKΔ} (from the ladder; +∞
    /// where not kept): with it, the tilted share of a δ read at ε ([`Composed::tilted_share`]).
    ln_moment: f64,
    /// The composed loss is the lattice's plus this (its per-step lattices were put on
    /// {kΔ + o}, [`Composed::shift_by`]); every reading below is in loss (ε) units.
    shift: f64,
    /// Read for the reversed pair (λ ≤ −1, [`Composed::delta_reversed`]): `u_up`, `v_up`
    /// then hold prefix sums, and there is no lower measure.
    #[cfg_attr(not(full_engine), allow(dead_code))]
    reversed: bool,
}

/// Why a composition could not be done within the budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TooWide {
    /// Lattice points needed (+∞: the call's work budget is spent).
    pub needed: f64,
}

impl TooWide {
    pub(crate) const SPENT: TooWide = TooWide {
        needed: f64::INFINITY,
    };
}

/// Compose the phases at tilt λ ≥ 0 on the lattice with spacing `d`, on a window of at
/// most `max_fft` points (the engine's `MAX_FFT`; dp_accounting's reproduction and tests
/// comparing with the ladder go wider).
pub(crate) fn compose_within(
    phases: &[Phase],
    lambda: f64,
    d: f64,
    max_fft: usize,
    w: &Work,
) -> Result<Composed, TooWide> {
    let pw = power(phases, lambda, d, max_fft, ALIAS, w)?;
    let (n, k0, buf) = (pw.n, pw.k0, &pw.buf);
    // Position j holds K ≡ j (mod n); the window is K ∈ [k0, k0 + n), window index
    // k = K − k0 at j = (k + k0) mod n. Suffix sums with weights e^{−λ·jΔ} (U) and
    // e^{−(λ+1)·jΔ} (V), read from the top of the window down.
    let (fu, fv) = (exp(-lambda * d), exp(-(lambda + 1.0) * d));
    // (Every value below the last is written by the sweep: only the last is filled.)
    let sums = || {
        let mut v = take_unfilled(&REALS, n + 1);
        v[n] = 0.0;
        v
    };
    let (mut u_up, mut v_up, mut u_lo, mut v_lo) = (sums(), sums(), sums(), sums());
    let (mut su, mut sv, mut sul, mut svl) = (0.0, 0.0, 0.0, 0.0);
    let mut j = (k0 + n as i64 - 1).rem_euclid(n as i64) as usize;
    for k in (0..n).rev() {
        // Folded (aliased) tilted mass is at most ALIAS in all; the lower bound drops it.
        let (a, b) = pw.masses(buf[j]);
        su = a + fu * su;
        sv = a + fv * sv;
        sul = b + fu * sul;
        svl = b + fv * svl;
        (u_up[k], v_up[k], u_lo[k], v_lo[k]) = (su, sv, sul, svl);
        j = if j == 0 { n - 1 } else { j - 1 };
    }
    Ok(Composed {
        d,
        lambda,
        k0,
        ln_scale_up: pw.ln_scale_up,
        ln_scale_lo: pw.ln_scale_lo,
        u_up,
        v_up,
        u_lo,
        v_lo,
        inf_mass: -exp_m1(pw.ln_inf_keep),
        ln_alias_up: ln(ALIAS) + pw.ln_scale_up,
        ln_alias_lo: ln(ALIAS) + pw.ln_scale_lo,
        center: pw.mean * d,
        spread: pw.var.sqrt() * d,
        ln_moment: f64::INFINITY,
        shift: 0.0,
        reversed: false,
    })
}

/// The T-fold composition of the phases' two lattices (pessimistic in the real part,
/// optimistic in the imaginary part of `buf`, times n, tilted) on a window of n points.
pub(crate) struct Power {
    pub n: usize,
    /// Lattice index of window position 0 (position j holds K ≡ j mod n).
    pub k0: i64,
    pub buf: Vec<Complex<f64>>,
    /// Rounding bound per point, tilted (add to the upper, subtract from the lower).
    pub e_bin: f64,
    /// ln Π M(λ)^T of each lattice.
    pub ln_scale_up: f64,
    pub ln_scale_lo: f64,
    /// ln Π (1 − p∞)^T.
    pub ln_inf_keep: f64,
    /// Tilted mean and variance of the composed lattice index.
    pub mean: f64,
    pub var: f64,
}

impl Power {
    /// Tilted (upper, lower) masses of one inverse-FFT value, with the rounding bound
    /// added to the upper and subtracted from the lower (clamped at 0).
    fn masses(&self, z: Complex<f64>) -> (f64, f64) {
        let s = 1.0 / self.n as f64;
        (
            (z.re * s + self.e_bin).max(0.0),
            (z.im * s - self.e_bin).max(0.0),
        )
    }

    /// [`Power::masses`] at lattice index K inside the window.
    #[cfg(full_engine)]
    pub(crate) fn at(&self, k: i64) -> (f64, f64) {
        self.masses(self.buf[k.rem_euclid(self.n as i64) as usize])
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Drop for Power {
    fn drop(&mut self) {
        give(&COMPLEXES, std::mem::take(&mut self.buf));
    }
}

/// The phases' two lattices composed at tilt λ on a window whose folded tilted mass is
/// below `alias` (Chernoff), in one complex FFT.
pub(crate) fn power(
    phases: &[Phase],
    lambda: f64,
    d: f64,
    max_fft: usize,
    alias: f64,
    w: &Work,
) -> Result<Power, TooWide> {
    let mut up = Vec::with_capacity(phases.len());
    let mut lo = Vec::with_capacity(phases.len());
    let (mut mean, mut var, mut b_hi, mut b_lo) = (0.0, 0.0, 0.0f64, 0.0f64);
    let mut ln_inf_keep = 0.0; // ln Π (1 − p∞)^T
    for ph in phases {
        let tu = tilt(ph.pld.k_lo, &ph.pld.ln_up, lambda, d);
        let tl = tilt(ph.pld.k_lo, &ph.pld.ln_lo, lambda, d);
        mean += ph.steps * tu.mean;
        var += ph.steps * tu.var.max(tl.var);
        let k_hi = (ph.pld.k_lo + ph.pld.ln_up.len() as i64 - 1) as f64;
        b_hi = b_hi.max(k_hi - tu.mean.min(tl.mean));
        b_lo = b_lo.max(tu.mean.max(tl.mean) - ph.pld.k_lo as f64);
        ln_inf_keep += ph.steps * ln_1p(-exp(ph.pld.ln_inf));
        up.push(tu);
        lo.push(tl);
    }
    // Window: the two lattices' composed means differ by `mean_gap`; the tilted
    // composed mass farther than a from the mean is bounded by Chernoff's inequality,
    // P(S − ES ≥ a) ≤ exp(Σ T·K(t) − t·a) for any t > 0 (K the centred cumulant
    // generating function of one step), evaluated at a few t around the Gaussian
    // optimum a/V; any t gives a valid bound.
    let mean_gap: f64 = phases
        .iter()
        .zip(up.iter().zip(&lo))
        .map(|(ph, (u, l))| ph.steps * (u.mean - l.mean).abs())
        .sum();
    let sparse = up.iter().chain(&lo).all(|t| t.nz.is_some());
    // Chernoff's bound on the tilted mass beyond ±a, and whether a side stopped early: with
    // `early`, a side stops at the first t whose bound is at most half of `alias` (the sum
    // of the sides then passes the check wherever the sides' minima would).
    let chernoff = |a: f64, early: bool| -> (f64, bool) {
        if var <= 0.0 {
            return (f64::NEG_INFINITY, false);
        }
        let mut best = 0.0f64;
        let mut stopped = false;
        for sign in [1.0, -1.0] {
            let t0 = a / var;
            let mut side = f64::INFINITY;
            // The Gaussian optimum a/V and fractions of it (the likeliest first); a heavy
            // tail (a capped log-normal's) needs t·a of a few tens instead, tried when those
            // fail.
            let light = [1.0, 0.5, 1.0 / 8.0, 1.0 / 32.0].map(|f| t0 * f);
            let heavy = [10.0, 20.0, 40.0, 80.0].map(|c| c / a);
            for (i, t) in light.into_iter().chain(heavy).enumerate() {
                if early && side <= ln(0.5 * alias) {
                    stopped = true;
                    break;
                }
                if i == light.len() && side < ln(alias) {
                    break;
                }
                let t = sign * t;
                let mut k = -t.abs() * a;
                for ((ph, tu), tl) in phases.iter().zip(&up).zip(&lo) {
                    let ku = cumulant(ph.pld.k_lo, tu, t);
                    let kl = cumulant(ph.pld.k_lo, tl, t);
                    k += ph.steps * ku.max(kl);
                }
                side = side.min(k);
            }
            // A heavy tail's sum is far mostly through one large step: truncate each step
            // at u < a. {S − ES ≥ a} lies in {some D_i > u} ∪ {Σ D_i·1[D_i ≤ u] ≥ a}, so
            // P ≤ Σ T·P(D > u) + exp(Σ T·K_u(t) − t·a), K_u the truncated steps' cumulant
            // (cheap on sparse lattices only, which is where heavy tails come from).
            if side >= ln(alias) && sparse {
                for c in [1.5, 2.0] {
                    let u = a / c;
                    for cp in [8.0, 16.0, 32.0] {
                        let t = cp / u;
                        let (mut k, mut tail) = (-t * a, 0.0);
                        for ((ph, tu), tl) in phases.iter().zip(&up).zip(&lo) {
                            let (ku, pu) = cumulant_truncated(ph.pld.k_lo, tu, sign * t, u);
                            let (kl, pl) = cumulant_truncated(ph.pld.k_lo, tl, sign * t, u);
                            k += ph.steps * ku.max(kl);
                            tail += ph.steps * pu.max(pl);
                        }
                        side = side.min(super::gauss::ln_add(k, ln(tail)));
                    }
                }
            }
            best = if best == 0.0 {
                side
            } else {
                super::gauss::ln_add(best, side)
            };
        }
        (best, stopped)
    };
    // Whether the window's half-width a passes: the sides stopped early where that decides
    // it (a side's minimum is at most its early stop, so a pass stays one), else their
    // minima over every t, as the check always was.
    let passes = |a: f64| -> bool {
        let (v, stopped) = chernoff(a, true);
        v < ln(alias) || (stopped && chernoff(a, false).0 < ln(alias))
    };
    // First try ±7 tilted standard deviations (Chernoff decides; doubled until it passes).
    let need = 2.0 * (7.0 * var.sqrt() + mean_gap + 2.0);
    if need > max_fft as f64 {
        return Err(TooWide { needed: need });
    }
    // The window's half-width at n points, and the refusal where no window up to the largest
    // passes (the ladder then composes).
    let half_of = |n: usize| n as f64 / 2.0 - mean_gap - 2.0;
    let refused = || TooWide {
        needed: 2.0 * (var.sqrt() * 12.0 + mean_gap),
    };
    // Where one step's own mass far from its mean already keeps Chernoff's bound above the
    // allowance at the widest window tried, no window passes: refused at once.
    let widest = half_of(max_fft);
    let single = match phases {
        [ph] => Some(ph),
        _ => None,
    };
    if single.is_some_and(|ph| {
        var > 0.0
            && !sparse
            && widest > 0.0
            && beyond_any_window(ph.pld.k_lo, &up[0], ph.steps, widest, alias)
    }) {
        return Err(refused());
    }
    let mut n = (need.max(1024.0) as usize).next_power_of_two();
    loop {
        let half = half_of(n);
        if half > 0.0 && passes(half) {
            break;
        }
        if n >= max_fft {
            return Err(refused());
        }
        n *= 2;
    }
    if !w.spend(2.0 * n as f64 * log2(n as f64)) {
        return Err(TooWide::SPENT);
    }
    let k0 = mean.round() as i64 - (n as i64) / 2;
    let (fft, ifft) = plans(n);
    // Spectra of the two real sequences at k = 0 … n/2 (the others are their conjugates).
    let half = n / 2;
    // (Every value is written by the first phase's powers: not filled here.)
    let mut spec_up = take_unfilled(&COMPLEXES, half + 1);
    let mut spec_lo = take_unfilled(&COMPLEXES, half + 1);
    let mut l2t = 0.0;
    let mut buf = take(&COMPLEXES, n, Complex::new(0.0, 0.0));
    for (i, ((ph, tu), tl)) in phases.iter().zip(&up).zip(&lo).enumerate() {
        if i > 0 {
            buf.iter_mut().for_each(|z| *z = Complex::new(0.0, 0.0));
        }
        let mut pos = ph.pld.k_lo.rem_euclid(n as i64) as usize;
        for (&a, &b) in tu.p.iter().zip(&tl.p) {
            buf[pos] += Complex::new(a, b);
            pos = if pos + 1 == n { 0 } else { pos + 1 };
        }
        if !w.spend(n as f64 * log2(n as f64)) {
            for v in [buf, spec_up, spec_lo] {
                give(&COMPLEXES, v);
            }
            return Err(TooWide::SPENT);
        }
        fft.process(&mut buf);
        // The two real sequences' spectra from the packed one: A(k) = (Z(k) + Z̄(n−k))/2,
        // B(k) = (Z(k) − Z̄(n−k))/(2i); each raised to the T-th power (the first phase's
        // written, the next ones' multiplied in).
        spectra_powers(&buf, (&mut spec_up, &mut spec_lo), ph.steps, i == 0);
        l2t += ph.steps * tu.l2.max(tl.l2);
    }
    // Rounding: the forward FFT perturbs each per-step spectrum by ≲ u·log₂N·‖p̃‖₂, which
    // the T-th power multiplies by T; spread over the window it is at most this much per bin.
    let mag = |k: usize, z: &Complex<f64>| {
        let w = if k == 0 || k == half { 1.0 } else { 2.0 };
        w * z.norm_sqr().sqrt()
    };
    let avg_mag: f64 = spec_up
        .iter()
        .enumerate()
        .map(|(k, z)| mag(k, z))
        .sum::<f64>()
        / n as f64;
    let e_bin = 8.0 * U * log2(n as f64) * (1.0 + l2t) * avg_mag.max(1.0 / n as f64);
    let i = Complex::new(0.0, 1.0);
    for (k, (a, b)) in spec_up.iter().zip(&spec_lo).enumerate() {
        buf[k] = a + b * i;
        if k > 0 && k < half {
            buf[n - k] = a.conj() + b.conj() * i;
        }
    }
    ifft.process(&mut buf);
    for v in [spec_up, spec_lo] {
        give(&COMPLEXES, v);
    }
    let ln_scale =
        |t: &[Tilted]| -> f64 { phases.iter().zip(t).map(|(ph, x)| ph.steps * x.ln_m).sum() };
    Ok(Power {
        n,
        k0,
        buf,
        e_bin,
        ln_scale_up: ln_scale(&up),
        ln_scale_lo: ln_scale(&lo),
        ln_inf_keep,
        mean,
        var,
    })
}

/// The T-th powers (`t`) of the two real sequences' spectra packed in `z` (length n), at
/// k = 0 … n/2, written into `spec` (`first`) or multiplied into it. Natively a long window's
/// frequencies are split over two threads, each computing its own the same way (the same
/// bits): a short run's spectrum decays slowly and its powers (a log, an atan2, an exp and
/// two trigonometric calls each) were half of a 2¹⁷-point composition (q = 3e-3, σ = 0.8,
/// T = 100).
fn spectra_powers(
    z: &[Complex<f64>],
    spec: (&mut [Complex<f64>], &mut [Complex<f64>]),
    t: f64,
    first: bool,
) {
    spectra_powers_in(z, spec, (t, first), z.len() >= 1 << 15);
}

/// [`spectra_powers`], on two threads where `split` (natively).
fn spectra_powers_in(
    z: &[Complex<f64>],
    spec: (&mut [Complex<f64>], &mut [Complex<f64>]),
    (t, first): (f64, bool),
    split: bool,
) {
    let n = z.len();
    // |z|^T < 1e-300 ⇔ |z|² < e^{−1380/T}: such frequencies are zero, no logs or trig.
    let thr = exp(-1380.0 / t);
    let power = |z: Complex<f64>, acc: &mut Complex<f64>| {
        *acc = if z.norm_sqr() < thr {
            Complex::new(0.0, 0.0)
        } else if first {
            pow(z, t)
        } else {
            *acc * pow(z, t)
        };
    };
    // Frequencies k0, k0 + 1, … of `up` and `lo`; Z(n − k) is Z(0) at k = 0.
    let run = |k0: usize, up: &mut [Complex<f64>], lo: &mut [Complex<f64>]| {
        for (j, (a_acc, b_acc)) in up.iter_mut().zip(lo.iter_mut()).enumerate() {
            let k = k0 + j;
            let zk = z[k];
            let zc = z[if k == 0 { 0 } else { n - k }].conj();
            power((zk + zc) * 0.5, a_acc);
            power((zk - zc) * Complex::new(0.0, -0.5), b_acc);
        }
    };
    let (up, lo) = spec;
    #[cfg(not(target_arch = "wasm32"))]
    if split {
        let mid = up.len() / 2;
        let (up0, up1) = up.split_at_mut(mid);
        let (lo0, lo1) = lo.split_at_mut(mid);
        std::thread::scope(|s| {
            s.spawn(|| run(mid, up1, lo1));
            run(0, up0, lo0);
        });
        return;
    }
    #[cfg(target_arch = "wasm32")]
    let _ = split;
    run(0, up, lo);
}

/// Whether Chernoff's bound on a window of half-width `a` (and every narrower one) is at least
/// `alias` on one side for every tilt, from one step's tilted law `tl` (at lattice start `k_lo`)
/// composed `t` times. For X = D − mean, any y > 0 and t' > 0, K(t') ≥ max(0, ln P(X ≥ y) + t'y)
/// (Jensen; the mass at and beyond y), so T·K(t') − t'a ≥ max(−t'a, T·ln P(X ≥ y) + t'(Ty − a)),
/// whose least value over t' is a·ln P(X ≥ y)/y where Ty ≥ a; that bound only falls as a grows.
/// It holds where P(X ≥ y) ≥ alias^{y/a} at some such y (or the mirror image below): checked at
/// the ends of blocks of 16 points, with a margin for the sums' rounding.
fn beyond_any_window(k_lo: i64, tl: &Tilted, t: f64, a: f64, alias: f64) -> bool {
    let ln_alias = ln(alias) * (1.0 - 1e-9);
    let x0 = k_lo as f64 - tl.mean;
    // (The bar e^{z}, z = ln(alias)·y/a, is at least 1 + z, and at least the allowance within
    // y ≤ a: a mass below either is no witness, without its log.)
    let reach = |y: f64, mass: f64| {
        let (mass, z) = (mass * (1.0 - 1e-12), ln_alias * y / a);
        y * t >= a && mass > 0.0 && mass >= 1.0 + z && (mass >= alias || y > a) && ln(mass) >= z
    };
    let n = tl.p.len();
    // Above the mean: each block's mass with its first point's distance, from the top (the
    // mass at and beyond it is the running sum); below: with its last point's, from the bottom.
    let above = (tl.p.rchunks(16)).scan(n, |end, c| {
        *end -= c.len();
        Some((c, x0 + *end as f64))
    });
    let below = (tl.p.chunks(16)).scan(0, |start, c| {
        *start += c.len();
        Some((c, -(x0 + (*start - 1) as f64)))
    });
    witness(above, &reach) || witness(below, &reach)
}

/// Whether the running sum of the blocks' masses, each block with its distance y from the mean
/// (taken outward from an end, y falling), reaches the bar (`reach`) before y reaches 0.
fn witness<'a>(
    blocks: impl Iterator<Item = (&'a [f64], f64)>,
    reach: &impl Fn(f64, f64) -> bool,
) -> bool {
    let mut s = 0.0;
    for (c, y) in blocks {
        s += sum_lanes(c, |_, x| x);
        if y <= 0.0 {
            return false;
        }
        if reach(y, s) {
            return true;
        }
    }
    false
}

/// An upper bound on ln Σ p_k e^{t(k − mean)} (the centred cumulant generating function
/// at t; Chernoff's bound needs it from above), within ~1e-11 of it. The masses are
/// linear and e^{t(k − mean) − c} (c its largest value, at an end of the lattice) comes
/// from a geometric recurrence restarted by an exp every `RESTART` points, so a term costs
/// a multiply-add instead of an exp. Each computed term is within (2·RESTART + 3)·u of the
/// exact one unless it falls below the normal range (then off by < 1e-300), and summing
/// n nonnegative terms adds n·u: the sum is inflated by both. A sum too small for that
/// absolute slack to be negligible is redone in log space ([`cumulant_logs`]). A sparse
/// lattice sums only its nonzero masses, in log space.
fn cumulant(k_lo: i64, tl: &Tilted, t: f64) -> f64 {
    const RESTART: usize = 256;
    let (p, ln_p, mean) = (&tl.p, &tl.ln_p, tl.mean);
    if tl.nz.is_some() {
        return cumulant_at(k_lo, ln_p, tl.support(), mean, t);
    }
    // Steep weights (|t| > 1 per lattice point) under- and overflow within a block:
    // log space.
    if t.abs() > 1.0 {
        return cumulant_logs(k_lo, ln_p, mean, t);
    }
    let n = p.len();
    let x0 = k_lo as f64 - mean;
    let c = (t * x0).max(t * (x0 + (n as f64 - 1.0)));
    let g = exp(t);
    // Four lanes a block, each stepping by g⁴ (the recurrences and sums independent, so they
    // pipeline: one chain was the whole cost of a window check on a long lattice): a term is
    // at most 3 + 2·RESTART/4 roundings from its exp, within the bound below.
    let g4 = exp(4.0 * t);
    let mut lanes = [0.0; 4];
    let mut s = 0.0;
    for (b, block) in p.chunks(RESTART).enumerate() {
        let w0 = exp(t * (x0 + (b * RESTART) as f64) - c);
        let mut w = [w0, w0 * g, w0 * g * g, w0 * g * g * g];
        let quads = block.chunks_exact(4);
        let rest = quads.remainder();
        for q in quads {
            for j in 0..4 {
                lanes[j] += q[j] * w[j];
                w[j] *= g4;
            }
        }
        for (&pk, &wj) in rest.iter().zip(&w) {
            s += pk * wj;
        }
    }
    let s = s + (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    let rel = (2.0 * RESTART as f64 + 3.0 + n as f64) * U * 2.0;
    let s_up = s * (1.0 + rel) + n as f64 * 1e-300;
    if !(s_up >= 1e-250 && s_up.is_finite()) {
        return cumulant_logs(k_lo, ln_p, mean, t);
    }
    let k = c + ln(s_up);
    k + 4.0 * U * (c.abs() + k.abs() + 1.0)
}

/// The cumulant of one step truncated at u on the side of t's sign, D·1[±D ≤ u]
/// (D = k − mean), from above: (ln (Σ_{±D ≤ u} p_k e^{tD} + P(±D > u)), P(±D > u)).
fn cumulant_truncated(k_lo: i64, tl: &Tilted, t: f64, u: f64) -> (f64, f64) {
    let x0 = k_lo as f64 - tl.mean;
    let beyond = |i: usize| t.signum() * (x0 + i as f64) > u;
    let tail: f64 = tl.support().filter(|&i| beyond(i)).map(|i| tl.p[i]).sum();
    let kept = tl.support().filter(|&i| !beyond(i) && tl.p[i] > 0.0);
    let e = |i: usize| tl.ln_p[i] + t * (x0 + i as f64);
    let mx = kept.clone().map(e).fold(ln(tail), f64::max);
    let n = tl.support().count() as f64;
    let slack = 1.0 + (n + 8.0) * U * 2.0;
    let s: f64 = kept.map(|i| exp(e(i) - mx)).sum::<f64>() + tail * exp(-mx);
    let k = mx + ln(s * slack);
    (k + 4.0 * U * (mx.abs() + k.abs() + 1.0), tail * slack)
}

/// ln Σ p_k e^{t(k − mean)} (the centred cumulant generating function at t), from ln p,
/// from above: every term's exp is within a few ulps and the sum of n nonnegative terms
/// within n·u, which the result is inflated by.
fn cumulant_logs(k_lo: i64, ln_p: &[f64], mean: f64, t: f64) -> f64 {
    cumulant_at(k_lo, ln_p, 0..ln_p.len(), mean, t)
}

/// [`cumulant_logs`] over the indices `at` only (the others' masses are 0).
fn cumulant_at(
    k_lo: i64,
    ln_p: &[f64],
    at: impl Iterator<Item = usize> + Clone,
    mean: f64,
    t: f64,
) -> f64 {
    let x0 = k_lo as f64 - mean;
    let e = |i: usize| ln_p[i] + t * (x0 + i as f64);
    let mx = at.clone().map(e).fold(f64::NEG_INFINITY, f64::max);
    let (mut s, mut n) = (0.0, 0.0);
    for i in at {
        s += exp(e(i) - mx);
        n += 1.0;
    }
    let k = mx + ln(s * (1.0 + (n + 8.0) * U * 2.0));
    k + 4.0 * U * (mx.abs() + k.abs() + 1.0)
}

/// z^t for real t ≥ 1 (up to 10⁹), |z| ≤ 1: by squaring when t is a whole number, else in
/// polar form.
///
/// Their rounding, relative to z^t: by squaring z^t is a product tree of t factors z (a
/// square's rounding is shared by every factor below it), so the result is z^t·Π(1 + θ_i) over
/// t − 1 products, each complex product (no fused multiply-add) within √2·γ₂ < 3u normwise
/// (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.6): at most
/// (1 + 3u)^{t−1} − 1 ≈ 3(t − 1)u. In polar form e^{t·ln|z|} carries t times the log's
/// and |z|²'s roundings plus |t·ln|z||·u, and the angle t·arg z t times the atan2's and
/// the product's: about (11t + 1500)u. Squaring is the more accurate of the two as well as
/// the cheaper.
fn pow(z: Complex<f64>, t: f64) -> Complex<f64> {
    // A whole power by squaring: about 2·log₂t products and no transcendental call (the polar
    // form takes a log, an atan2, an exp and two trigonometric calls: a short run's slowly
    // decaying spectrum spent half of its one-FFT composition there, and a random allocation's
    // sum of t ≤ 64 terms most of its time).
    if t.fract() == 0.0 && (1.0..=MAX_SQUARED).contains(&t) {
        let (mut acc, mut base, mut k) = (Complex::new(1.0, 0.0), z, t as u64);
        // (acc's first product is by 1: exact.)
        while k > 0 {
            if k & 1 == 1 {
                acc *= base;
            }
            base = base * base;
            k >>= 1;
        }
        return acc;
    }
    let ln_r = 0.5 * ln(z.norm_sqr());
    // |z|^t below 1e-300: zero (skips the trigonometry for most frequencies).
    if t * ln_r < -690.0 {
        return Complex::new(0.0, 0.0);
    }
    let m = exp(t * ln_r);
    let th = t * atan2(z.im, z.re);
    Complex::new(m * cos(th), m * sin(th))
}

/// The largest whole power [`pow`] takes by squaring: there 3(t − 1)u < 1e-4, and the
/// products' bound holds to first order.
const MAX_SQUARED: f64 = 1e10;

/// Suffix sums with weights e^{−λ·jΔ} and e^{−(λ+1)·jΔ} (of the ladder's windows).
#[cfg(full_engine)]
fn suffix(a: &[f64], lambda: f64, d: f64) -> (Vec<f64>, Vec<f64>) {
    let n = a.len();
    let (fu, fv) = (exp(-lambda * d), exp(-(lambda + 1.0) * d));
    let mut u = vec![0.0; n + 1];
    let mut v = vec![0.0; n + 1];
    let (mut su, mut sv) = (0.0, 0.0);
    for ((x, uj), vj) in a.iter().zip(&mut u[..n]).zip(&mut v[..n]).rev() {
        su = x + fu * su;
        sv = x + fv * sv;
        *uj = su;
        *vj = sv;
    }
    (u, v)
}

/// Prefix sums of the tilted masses a (tilt λ ≤ −1): U(j) = Σ_{j'≤j} a(j')e^{λ(j−j')Δ} and
/// V with λ + 1 (both weights ≤ 1), for [`Composed::delta_reversed`]; one trailing zero
/// keeps the arrays' length that of the suffix sums'.
#[cfg(full_engine)]
fn prefix(a: &[f64], lambda: f64, d: f64) -> (Vec<f64>, Vec<f64>) {
    let (fu, fv) = (exp(lambda * d), exp((lambda + 1.0) * d));
    let (mut u, mut v) = (
        Vec::with_capacity(a.len() + 1),
        Vec::with_capacity(a.len() + 1),
    );
    let (mut su, mut sv) = (0.0, 0.0);
    for &x in a {
        su = x + fu * su;
        sv = x + fv * sv;
        u.push(su);
        v.push(sv);
    }
    u.push(0.0);
    v.push(0.0);
    (u, v)
}

/// s·e^x for s > 0: the product where e^x is a normal number and s is not subnormal (no
/// logarithm: a read of δ in a closed-form run's search took a `ln` a composition, 15 % of the
/// call), else e^{ln s + x}. The product is the more accurate of the two: e^{ln s + x} carries
/// the rounding of ln s + x, up to |ln s + x|·u relatively.
fn times_exp(s: f64, x: f64) -> f64 {
    if s >= f64::MIN_POSITIVE && x.abs() <= 700.0 {
        s * exp(x)
    } else {
        exp(ln(s) + x)
    }
}

/// The first lattice index above ε, ⌊ε/Δ⌋ + 1, saturating far below i64's range (an ε of
/// 1e19 on a fine lattice would overflow; anything that large is above every window).
fn lattice_above(eps: f64, d: f64) -> i64 {
    (eps / d).floor().clamp(-1e17, 1e17) as i64 + 1
}

/// Where ε lies relative to the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Side {
    Inside,
    Below,
    Above,
}

#[cfg(not(target_arch = "wasm32"))]
impl Drop for Composed {
    fn drop(&mut self) {
        for v in [
            &mut self.u_up,
            &mut self.v_up,
            &mut self.u_lo,
            &mut self.v_lo,
        ] {
            give(&REALS, std::mem::take(v));
        }
    }
}

impl Composed {
    /// A composition from its window: tilted masses and ln scales of the upper and
    /// lower measures, the mass at +∞, the ln moment missing from the upper one, and
    /// the tilted (center, spread) in ε units.
    #[allow(clippy::too_many_arguments)]
    #[cfg(full_engine)]
    pub(crate) fn from_parts(
        d: f64,
        lambda: f64,
        k0: i64,
        up: (&[f64], f64),
        lo: (&[f64], f64),
        inf_mass: f64,
        ln_lost: f64,
        (center, spread): (f64, f64),
    ) -> Composed {
        let reversed = lambda < 0.0;
        let ((u_up, v_up), (u_lo, v_lo)) = if reversed {
            (prefix(up.0, lambda, d), (vec![0.0], vec![0.0]))
        } else {
            (suffix(up.0, lambda, d), suffix(lo.0, lambda, d))
        };
        Composed {
            d,
            lambda,
            k0,
            ln_scale_up: up.1,
            ln_scale_lo: lo.1,
            u_up,
            v_up,
            u_lo,
            v_lo,
            inf_mass,
            ln_alias_up: ln_lost,
            ln_alias_lo: f64::NEG_INFINITY,
            center,
            spread,
            ln_moment: ln(up.0.iter().sum::<f64>()) + up.1,
            shift: 0.0,
            reversed,
        }
    }

    /// The share of the composed tilted moment that a δ at ε carries: δ·e^{λε}/M (0 where the
    /// moment was not kept). A rounding floor much above this share decides the bracket.
    #[cfg_attr(not(full_engine), allow(dead_code))]
    pub fn tilted_share(&self, eps: f64, delta: f64) -> f64 {
        exp(ln(delta) + self.lambda * (eps - self.shift) - self.ln_moment)
    }

    /// The composition of losses L' on the lattice as one of L = L' + s: P-masses unchanged,
    /// only where they sit (the per-step lattices were on {kΔ + o}, s the sum of the o's).
    /// δ(ε) = Σ p(L)(1 − e^{ε−L})₊ = δ'(ε − s); the reversed pair's
    /// δ_rev(ε) = E_P[(e^{−L} − e^ε)₊] = e^{−s}·δ'_rev(ε + s).
    #[cfg(full_engine)]
    pub fn shift_by(&mut self, s: f64) {
        self.shift += s;
        self.center += s;
    }

    /// FFT length (window size in lattice points).
    pub fn window_len(&self) -> usize {
        self.u_up.len() - 1
    }

    /// Lowest and highest ε this composition resolves well (±5 tilted standard
    /// deviations around the tilted mean, inside the window).
    pub fn good_range(&self) -> (f64, f64) {
        let (a, b) = self.window_range();
        let lo = (self.center - 5.0 * self.spread).max(a);
        let hi = (self.center + 5.0 * self.spread).min(b);
        (lo, hi)
    }

    /// Lowest and highest ε inside the window.
    pub fn window_range(&self) -> (f64, f64) {
        (
            self.k0 as f64 * self.d + self.shift,
            (self.k0 + self.u_up.len() as i64 - 2) as f64 * self.d + self.shift,
        )
    }

    /// ε relative to the window.
    pub fn side(&self, eps: f64) -> Side {
        let k = lattice_above(eps - self.shift, self.d);
        if k < self.k0 {
            Side::Below
        } else if k >= self.k0 + self.u_up.len() as i64 - 1 {
            Side::Above
        } else {
            Side::Inside
        }
    }

    /// (δ_upper, δ_lower) at ε, for ε inside the window. δ(ε) = E_P[(1 − e^{ε−L})₊]
    /// over the composed loss L = Σ K Δ > ε, untilted: p_T(K) = p̃_T(K)·M^T·e^{−λKΔ}.
    /// A reversed composition gives the reversed pair's upper δ and 0.
    pub fn delta(&self, eps: f64) -> (f64, f64) {
        #[cfg(full_engine)]
        if self.reversed {
            return (self.delta_reversed(eps), 0.0);
        }
        let eps = eps - self.shift;
        let n = self.u_up.len() - 1;
        let k = lattice_above(eps, self.d).max(self.k0);
        if k >= self.k0 + n as i64 {
            // Above the window: only the +∞ mass and the folded tail remain.
            return (self.inf_mass + self.alias_term(eps, true), 0.0);
        }
        let j = (k - self.k0) as usize;
        let c = exp(eps - k as f64 * self.d); // e^{ε − KΔ} ≤ 1
        let core = |u: &[f64], v: &[f64], ln_scale: f64| -> f64 {
            let s = (u[j] - c * v[j]).max(0.0);
            if s == 0.0 {
                return 0.0;
            }
            times_exp(s, ln_scale - self.lambda * k as f64 * self.d)
        };
        let up = core(&self.u_up, &self.v_up, self.ln_scale_up)
            + self.inf_mass
            + self.alias_term(eps, true);
        let lo =
            (core(&self.u_lo, &self.v_lo, self.ln_scale_lo) - self.alias_term(eps, false)).max(0.0);
        (up.min(1.0), lo.min(1.0))
    }

    /// The reversed pair's δ at ε, an upper bound, from a composition of the pair's P-masses
    /// tilted by λ = −(1 + θ), θ ≥ 0 ([`super`]'s "reversed pair"): δ_rev(ε) =
    /// E_P[(e^{−L} − e^ε)₊] = Σ_{KΔ < −ε} p(K)(e^{−KΔ} − e^ε), and the removed moment M
    /// charged as M·e^{−θε} ((e^{−x} − e^ε)₊ ≤ e^{−(1+θ)x − θε} for every x). With the
    /// lattice's shift s, δ_rev(ε) = e^{−s}·δ'_rev(ε + s): the factor e^{−s} is taken in the
    /// logs, as alone it may overflow where the δ read is tiny (q = 1.3e-5, σ = 0.31,
    /// T = 1.4·10⁸, s = −1595, read e^{1595}·0 = NaN, then 1).
    #[cfg(full_engine)]
    fn delta_reversed(&self, eps: f64) -> f64 {
        let (eps, ln_f) = (eps + self.shift, -self.shift);
        let n = self.u_up.len() - 1;
        // K: the largest lattice index with KΔ < −ε, within the window.
        let k = (lattice_above(-eps, self.d) - 1).min(self.k0 + n as i64 - 1);
        let theta = -(1.0 + self.lambda);
        let charge = exp(self.ln_alias_up - theta * eps + ln_f);
        if k < self.k0 || n == 0 {
            return charge.min(1.0);
        }
        let j = (k - self.k0) as usize;
        let kd = k as f64 * self.d;
        // Σ_{K'≤K} p(K')(e^{−K'Δ} − e^ε) = e^{S − (λ+1)KΔ}·(V_K − e^{ε + KΔ}·U_K).
        let c = exp(eps + kd);
        let s = self.v_up[j] - c * self.u_up[j];
        let window = if s > 0.0 {
            times_exp(s, self.ln_scale_up - (self.lambda + 1.0) * kd + ln_f)
        } else {
            0.0
        };
        (window + charge).min(1.0)
    }

    /// Mass missing from (upper) or folded into (lower) the window, as an exponential
    /// moment, times the largest weight it can carry into δ(ε): e^{ln M − λ·max(KΔ, ε)}.
    fn alias_term(&self, eps: f64, upper: bool) -> f64 {
        let ln_alias = if upper {
            self.ln_alias_up
        } else {
            self.ln_alias_lo
        };
        // Below the window the missing masses can sit just above ε: weight at ε itself.
        let k = lattice_above(eps, self.d);
        exp(ln_alias - self.lambda * k as f64 * self.d)
    }
}

#[cfg(test)]
mod tests;
