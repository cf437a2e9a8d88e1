//! T-fold composition by repeated squaring, re-discretizing each composed PLD onto a
//! coarser lattice as it widens ("evolving discretization": Ghazi, Kamath, Kumar,
//! Manurangsi, "Faster Privacy Accounting via Evolving Discretization", ICML 2022,
//! arXiv:2207.04381), with every step certified.
//!
//! # Why
//! One FFT of the T-fold composition ([`super::compose`]) needs a window of ~20 tilted
//! standard deviations of the *composed* loss on the *per-step* spacing Δ; the bias of
//! the discretization is ≈ T·α·Δ²/8 in ε, so for a fixed relative bracket the window
//! grows like √T (and like 1/q·√T … for small q, whose per-step loss is narrow). At
//! T = 10⁸ or q ≤ 1e-4 it does not fit any FFT we can afford. Here the composed PLD of
//! 2^j steps is kept on its own spacing Δ_j: a re-discretization of the 2^j-step PLD to
//! spacing D adds a bias ≈ (T/2^j)·α·D²/8 (it is used T/2^j times), so D may grow like
//! 2^{j/2} and every window stays a few thousand points.
//!
//! # What is certified, and how
//! Each composed PLD is held as two measures on the lattice {kΔ} (tilted by e^{λkΔ} as
//! in [`super::compose`]): `up`, pointwise ≥ a PLD that dominates the true one, with an
//! extra mass at +∞ (`inf`) and a ledger of removed exponential moment (`lost`); and
//! `lo`, pointwise ≤ a PLD that the true one dominates. Every operation keeps that:
//! * **Convolution** by zero-padded FFTs (linear, no wrap-around) with a bound e on every
//!   entry's rounding: +e on `up`, −e (clamped at 0) on `lo`. Extra mass on `up` only
//!   raises δ; less mass on `lo` only lowers it. See "Rounding" below for e, and for the
//!   part of each product computed directly.
//! * **Truncation** to a window: `up`'s mass above it goes to +∞ (raises δ), `lo`'s is
//!   dropped; `up`'s mass below it is removed and its exponential moment M_lost =
//!   Σ p(K)e^{λKΔ} — computed *exactly* from the two factors by prefix sums, not from
//!   the FFT's output, so the FFT's error floor never enters — is charged at the end as
//!   M_lost·e^{−λε} (Markov's inequality at tilt λ: a removed loss K reaches ε after
//!   the remaining steps S with probability ≤ E[e^{λ(K + S − ε)}]). The charges of two
//!   factors combine as M_lost(A∗B) ≤ lost_A·(M_B + lost_B) + M_A·lost_B.
//! * **Re-discretization** to a spacing m·Δ: `up` by connect-the-dots (every atom's
//!   Q-mass split between the two neighbouring coarse points so that E_Q[e^L] is kept;
//!   the finer measure is a post-processing of the coarser one, and the map is linear
//!   and positive, so it applies to `up`'s extra mass too); `lo` by contracting each
//!   coarse bin to one atom at its E_Q[e^L]-mean and merging neighbouring atoms onto
//!   lattice points ([`super::discretize::merge_atoms`]), post-processings of `lo`.
//!
//! Hockey-stick divergences of measures whose atoms keep P = e^L·Q are sums over atoms
//! of (P − e^ε Q)₊, monotone in every atom's mass, and composition (convolution) is
//! monotone in both factors, so the chain of inequalities carries to the T-fold result.

//!
//! # Two resolutions
//! The per-step loss of a small-q step has a long right tail (losses up to
//! ln(q·e^{(1+2σz)/(2σ²)}) carry P-mass above the +∞ budget) but almost no tilted mass
//! there. On one lattice that tail would make every window ~10⁵–10⁶ points and the
//! FFT's error floor (added to every point) would swamp the bracket. So each composed
//! PLD is a fine **core** (spacing Δ_j, around the tilted mass) plus a coarse **tail**
//! (spacing f·Δ_j, f a power of two, above the core): all tilted mass above a share
//! τ ≤ 0.01/f² of the total spills into the tail by connect-the-dots (so the tail's
//! coarser lattice adds ≤ 1 % to the bias), and tail mass that lands inside the core's
//! window moves back onto the core's lattice exactly (a coarse point is a fine point).
//! The four products of A = A_c + A_t and B = B_c + B_t are formed with the finer
//! factor re-discretized to the coarser lattice where they differ; δ of a sum of
//! measures is the sum of their δ, so the argument above applies to each product.
//!
//! The spill's lower measure is contracted in bins *centred* on the coarse points
//! ([`Bins::Centred`]; the spill starts at a centred bin's lower edge). The spilled law falls,
//! so in the lattice's own bins [cD, (c + 1)D) each atom sat inside its bin with only lighter
//! atoms above to balance a merge onto a point, and the lowest, heaviest one was mostly rounded
//! down a coarse spacing: a first-order loss, at every level, used T/2^j times (q = 1.916e-5,
//! σ = 0.4954, Δ = 4.8e-6, f = 128: ~1e-10 of the lower measure's tilted moment per squaring,
//! the spill of the 4-step square used 10⁸ times). A centred bin's atom lies near its point,
//! so the merges move little mass (second order), and two atoms that fall in one lattice bin
//! are contracted together — still a post-processing. The cores' contractions in the products
//! keep the lattice's own bins: centred there, runs whose composed core is a spike on a coarse
//! point read wider lower ends (q = 3.009e-6, σ = 0.3679, T = 2.9·10⁸: 20.5536 against 20.6348).
//!
//! # Rounding
//! Let η = 16u·log₂N (u = 2⁻⁵³; the constant is 2–3× the textbook one). For a Cooley–Tukey
//! FFT of any radix (ours, src/engine/pld/fft.rs, natively and in the wasm):
//! * **normwise** (Higham, "Accuracy and Stability of Numerical Algorithms", §24.1):
//!   ‖fl(Fx) − Fx‖₂ ≤ η·‖Fx‖₂ = η·√N·‖x‖₂;
//! * **per entry**: every output is a tree of butterflies whose nodes at one stage are
//!   partial sums over disjoint sets of inputs with coefficients of modulus 1, so a stage adds
//!   ≤ c·u·Σ|x_j| to an output (c ≤ 8: a complex multiply, a twiddle's own error, an add), and
//!   |fl(Fx)_k − (Fx)_k| ≤ η·‖x‖₁.
//!
//! For x∗y = F⁻¹(Fx ⊙ Fy)/N (x, y packed as up + i·lo, split by conjugate symmetry), the
//! error of an output entry is at most (1/N)·‖error of the spectrum product‖₁ (the spectral
//! errors, through F⁻¹ whose entries have modulus 1) plus the inverse FFT's own, η·‖Ẑ‖₁/N.
//! By Cauchy–Schwarz and Parseval, ‖Fx ⊙ δ_y‖₁ ≤ ‖Fx‖₂‖δ_y‖₂ ≤ N·η·‖x‖₂‖y‖₂, the same for
//! δ_x, ‖Ẑ‖₁ ≤ N·‖x‖₂‖y‖₂(1 + η)², and the products' own rounding is ≤ 4u·N·‖x‖₂‖y‖₂; for the
//! two packed products together e ≤ 6η·‖x‖₂‖y‖₂ + O(η²), taken as **8η·‖x‖₂‖y‖₂** (several
//! pairs summed before one inverse FFT: the sum of their terms).
//!
//! That floor is added to every entry of the product, and the product of level j is used
//! ~T/2^j times, so its share of the mass matters: ~8η·‖x‖₂‖y‖₂·len/(‖x‖₁‖y‖₁). Two things
//! keep it below [`FLOOR_SHARE`] / (times used):
//! * **Bands.** A factor's central run x₀ (values ≥ 1e-6 of its maximum) and flanks x₁:
//!   x∗y = x₀∗y₀ + (x₁∗y + x₀∗y₁), the first on a short FFT whose floor is added only on its
//!   own support (the exact product is 0 elsewhere), the second with a floor ~1e-6 as large.
//! * **Direct points.** A small-q step's tilted law is a spike with a slowly decaying side, its
//!   ‖·‖₂ close to its ‖·‖₁; its tallest points s are convolved directly — sums of nonnegative
//!   products, whose rounding is relative (≤ (m + 1)u for m terms), no floor — and the rest r
//!   by FFT: x∗y = s_x∗y + s_y∗r_x + r_x∗r_y, with as few points as bring ‖r_x‖₂‖r_y‖₂ within
//!   the share. Without them q = 1e-4, σ = 0.6, T = 10⁸ read [23.356, 23.474] (0.5 %); with
//!   them [23.434, 23.441].
//!
//! **Positions.** A rounding that scales an atom's P- and Q-mass alike is a mass error, which
//! the measures' relative biases cover; one that moves P against Q moves the atom, and a
//! level used T/2^j times moves the composed loss by T/2^j times it — at q ≈ 1e-9 the losses
//! are ~1e-9 and a step's atoms ~1e-16 too high (ln ΔP − ln ΔQ, with 1 − q rounded in ΔP)
//! lifted the lower measure's δ 1.5e-5 of itself above what the exact masses allow, at
//! T = 3·10⁸. So wherever an atom sits off the lattice (the optimistic step's bins, a coarse
//! bin's contraction, [`lower_product`]'s bins) its position is carried as a number taken to
//! the relative precision of its offset in the bin, never as a difference of ln-masses, and
//! every rounding that moves it is directed (down for `lo`, up for `up`); merging onto
//! lattice points rounds the Q-mass it moves so that the merged atom only moves down
//! ([`super::discretize::merge_atoms`]).
//!
//! # When δ is a tiny share of the tilted moment
//! Both the floor and the moment removed below a window ([`LOST_REL`]) are shares of the
//! *tilted* moment M_T, while δ at ε is a share δ·e^{λε}/M_T of it. A centered tilt makes that
//! share ~1/(λ·spread) and the fixed shares above are negligible. But where one rare large loss
//! decides δ (q ≈ 4e-7, σ ≈ 0.6, δ ≈ 1e-13: a step's loss at an x five deviations out, whose
//! log-normal-like tail no exponential tilt can center) the share was 4e-13, and the floor and
//! the lower cuts decided the bracket. The caller ([`super`]'s `eps_direction`) reads the share
//! from a first composition and, below FLOOR_SHARE, composes again with the floor a
//! thousandth of it and the lower cuts a hundredth of the floor (each per use); the direct
//! points that asks cost at most a few FFTs per product.

use super::compose::{plans, Composed, Lowering, TooWide};
use super::discretize::{merge_atoms, merge_atoms_falling, StepPld};
use super::gauss::{ln_add, U};
use super::pool::{give_complex, give_reals, take_complex, take_reals};
use crate::engine::math::{exp, ln, ln_1p, log2, powf};
use crate::engine::pld::compose::Work;
use num_complex::Complex;
use std::convert::Infallible;

mod conv;
mod lower;
pub(crate) use conv::FLOOR_SHARE;
use conv::*;
use lower::*;

/// Cores longer than this are re-discretized to a coarser lattice when the bias budget
/// allows (a 2¹³-point FFT per convolution).
const N_CAP: usize = 1 << 12;
/// Target length of a tail (it fixes the tail's factor f).
const TAIL_LEN: usize = 1 << 11;
/// Longest array at all (its convolution is a 2²⁰-point FFT).
pub(crate) const MAX_LEN: usize = 1 << 19;
/// Exponential moment removed below a window per truncation, relative to the measure's
/// (at most: see [`lost_share`]).
///
/// The removed moment is charged as M_lost·e^{−λε}: a share s of a measure used c times in
/// the T-fold composition comes to about c·s·M_T·e^{−λε}, that is c·s/(δ's tilted share,
/// δ·e^{λε}/M_T) of δ — negligible where δ is a fair share of the tilted moment (its tilt
/// centered), but where one rare large loss decides δ its share is tiny: at q = 3.76e-7,
/// σ = 0.607, T = 10⁴, δ = 7.2e-14 (δ 4e-13 of the moment) the flat 1e-16 per step was 28 %
/// of δ: the bracket [0.05114, 0.05317], the truth 0.051231 (tests/reference/one_jump.py).
const LOST_REL: f64 = 1e-16;

/// The share of its moment a measure used `copies` times may lose below its window, where
/// each use's FFT floor may add `floor`/copies of its mass: LOST_REL, or a hundredth of that
/// share where the floor was lowered below FLOOR_SHARE for a δ with a tiny tilted share (the
/// floor is spread over the whole window, the lost moment is charged in full).
fn lost_share(floor: f64, copies: f64) -> f64 {
    if floor < FLOOR_SHARE {
        LOST_REL.min(0.01 * floor / copies.max(1.0))
    } else {
        LOST_REL
    }
}
/// A reversed composition's top cut per settle, relative to the measure's tilted moment (at
/// most: a caller may ask for less, [`compose_reversed`]). It must clear the FFT's rounding
/// floor at the top (~1e-14 of the moment per level); its share of the composed moment is
/// then ≲ 2·TOP_REL·T (the per-step cut is used T times). The ledger is charged at e^{−θε},
/// and δ is a share 1/((1 + θ)²·σ_T·√(2π)) of the composed tilted moment where the tilt
/// centres the answer (σ_T the tilted spread: (e^{−x} − e^ε)₊ rises as x falls below −ε over
/// a loss of 1/(1 + θ)), so the ledger moves δ by about 2·TOP_REL·T·(1 + θ)²·σ_T·√(2π) of
/// itself: 1e-4 at θ ≈ 10 and T = 10⁸, but 4 at θ ≈ 11,700, σ_T = 4.4e-4, T = 1.4·10⁸ — there
/// the caller asks for less (`Lattices::ladder_reversed`).
pub(crate) const TOP_REL: f64 = 1e-13;
/// The re-discretizations' bias budget relative to the per-step lattice's: the
/// 2^j-step PLD may be put on spacing D when (T/2^j)·D² ≤ T·Δ²·max(REBIN·2^{−(L−j)/2},
/// REBIN_EVEN/(L + 1)) (L = log₂T), so their sum is ≤ 3.5·REBIN + REBIN_EVEN times the
/// per-step lattice's bias.
const REBIN: f64 = 0.15;
/// The budget's even part, spread over the L + 1 levels. The geometric part alone leaves the
/// early levels on the per-step spacing while their cores grow √2 a level (q = 3.073e-8,
/// σ = 0.4757, T = 850,989,488: 57,000–78,000 points at j = 12, the forward composition's
/// squarings 380 of its 560 ms at levels 7–14), though the later levels, held at N_CAP points,
/// spend little of theirs. With the even part those cores stay near their first length.
/// Measured on the slowest runs of the sweeps: an even part of 0.26, or the whole budget
/// spread evenly (0.53 in place of the geometric part), read lower ends low enough that
/// q = 3.376e-7, σ = 0.4149, T = 458,701,336, δ = 2.33e-13 needed the halved spacing (0.7 s →
/// 1.3–1.4 s); at 0.13 it reads [6.612354, 6.618288] on its first, and the eleven slowest runs
/// (with [`super`]'s re-tilt before a lower floor) take 0.47–0.92 s where they took 0.69–1.21 s.
/// Only where the per-step lattice has its own coarse part (small q, whose cores start as a
/// spike with a long side): at q = 0.1, σ = 0.6, T = 10⁸ (ε = 3.2·10⁶, far beyond the domain)
/// the coarser cores left the lower measure without a lower end, and the call was refused.
const REBIN_EVEN: f64 = 0.13;

/// Whether a product with a coarse tail also forms its lower measure contracted after the
/// product ([`with_lower`]): where the caller asks ([`super::compose::lowering_after`]), for a
/// composition whose one-step law is a spike narrower than the tail's spacing.
fn lowering_after(lambda: f64, w: &Work) -> bool {
    lambda >= 0.0 && w.lowers_after().is_some()
}

/// Tilted masses on {kΔ}, k = k0 … k0 + len − 1: the untilted P-mass at k is
/// up[k − k0]·e^{ln_s_up − λkΔ} (and so for `lo`).
#[derive(Clone)]
struct Part {
    d: f64,
    k0: i64,
    up: Vec<f64>,
    lo: Vec<f64>,
    ln_s_up: f64,
    ln_s_lo: f64,
}

impl Part {
    fn empty(d: f64) -> Part {
        Part {
            d,
            k0: 0,
            up: Vec::new(),
            lo: Vec::new(),
            ln_s_up: 0.0,
            ln_s_lo: 0.0,
        }
    }

    /// A lattice PLD's ln P-masses (pessimistic, optimistic) at k_lo, … on spacing d, tilted,
    /// each scaled up (down) by its rounding.
    fn tilted((ln_up, ln_lo): (&[f64], &[f64]), k_lo: i64, lambda: f64, d: f64) -> Part {
        let (up, ln_s_up) = from_logs(ln_up, k_lo, lambda, d, 1.0 + 64.0 * U);
        let (lo, ln_s_lo) = from_logs(ln_lo, k_lo, lambda, d, 1.0 - 64.0 * U);
        Part {
            d,
            k0: k_lo,
            up,
            lo,
            ln_s_up,
            ln_s_lo,
        }
    }

    fn len(&self) -> usize {
        self.up.len()
    }

    fn is_empty(&self) -> bool {
        self.up.is_empty()
    }

    /// One past the last lattice index.
    fn end(&self) -> i64 {
        self.k0 + self.len() as i64
    }

    /// ln of `up`'s exponential moment Σ p(k)e^{λkΔ} (−∞ when empty).
    fn ln_moment(&self) -> f64 {
        let s: f64 = self.up.iter().sum();
        if s > 0.0 {
            self.ln_s_up + ln(s)
        } else {
            f64::NEG_INFINITY
        }
    }

    /// ln of the untilted P-mass of up[i].
    fn ln_untilted(&self, i: usize, lambda: f64) -> f64 {
        ln(self.up[i]) + self.ln_s_up - lambda * (self.k0 + i as i64) as f64 * self.d
    }

    /// Keep the numbers near 1 and drop zeros at both ends. A part whose two measures share
    /// one scale (`ln_s_up == ln_s_lo`: a lower measure held as contracted atoms,
    /// [`contracted`], whose position in its bin is the ratio lo/up) keeps sharing it, scaled
    /// by a power of two (exact), so that ratio is never rounded.
    fn tidy(&mut self) {
        let first = self.up.iter().position(|&x| x > 0.0);
        let Some(first) = first else {
            *self = Part::empty(self.d);
            return;
        };
        let last = self.up.iter().rposition(|&x| x > 0.0).unwrap_or(first);
        self.up.truncate(last + 1);
        self.lo.truncate(last + 1);
        self.up.drain(..first);
        self.lo.drain(..first);
        self.k0 += first as i64;
        let top = |v: &[f64]| v.iter().cloned().fold(0.0f64, f64::max);
        if self.ln_s_up == self.ln_s_lo {
            let e = pow2_above(top(&self.up).max(top(&self.lo)));
            for (v, s) in [
                (&mut self.up, &mut self.ln_s_up),
                (&mut self.lo, &mut self.ln_s_lo),
            ] {
                rescale(v, s, e);
            }
            return;
        }
        for (v, s) in [
            (&mut self.up, &mut self.ln_s_up),
            (&mut self.lo, &mut self.ln_s_lo),
        ] {
            let mx = top(v);
            if mx > 0.0 {
                v.iter_mut().for_each(|x| *x /= mx);
                *s += ln(mx);
            }
        }
    }

    /// The part on indices [a, b).
    fn slice(&self, a: usize, b: usize) -> Part {
        Part {
            d: self.d,
            k0: self.k0 + a as i64,
            up: self.up[a..b].to_vec(),
            lo: self.lo[a..b].to_vec(),
            ln_s_up: self.ln_s_up,
            ln_s_lo: self.ln_s_lo,
        }
    }

    /// The same masses on the lattice of spacing d/f (every point of this lattice is
    /// one of that one's: exact).
    fn refine(&self, f: i64) -> Part {
        if self.is_empty() || f == 1 {
            let mut p = self.clone();
            p.d = self.d / f as f64;
            return p;
        }
        let n = (self.len() as i64 - 1) * f + 1;
        let mut up = vec![0.0; n as usize];
        let mut lo = vec![0.0; n as usize];
        for i in 0..self.len() {
            up[i * f as usize] = self.up[i];
            lo[i * f as usize] = self.lo[i];
        }
        Part {
            d: self.d / f as f64,
            k0: self.k0 * f,
            up,
            lo,
            ln_s_up: self.ln_s_up,
            ln_s_lo: self.ln_s_lo,
        }
    }
}

/// The exponent of the least power of two at or above `mx` (> 0; within ±1000, where 2^e is
/// exact), None for 0.
fn pow2_above(mx: f64) -> Option<i32> {
    (mx > 0.0).then(|| (log2(mx).ceil() as i32).clamp(-1000, 1000))
}

/// Divide `v` by 2^e (exact) and add e·ln 2 to its ln scale `s`.
fn rescale(v: &mut [f64], s: &mut f64, e: Option<i32>) {
    if let Some(e) = e {
        let f = 2f64.powi(-e);
        v.iter_mut().for_each(|x| *x *= f);
        *s += e as f64 * std::f64::consts::LN_2;
    }
}

/// x + y·c (c ≥ 0) on one lattice.
fn add(x: &Part, y: &Part, c: f64) -> Part {
    if y.is_empty() || c == 0.0 {
        return x.clone();
    }
    if x.is_empty() {
        let mut p = y.clone();
        p.ln_s_up += ln(c);
        p.ln_s_lo += ln(c);
        return p;
    }
    let k0 = x.k0.min(y.k0);
    let n = (x.end().max(y.end()) - k0) as usize;
    let (su, sl) = (
        x.ln_s_up.max(y.ln_s_up + ln(c)),
        x.ln_s_lo.max(y.ln_s_lo + ln(c)),
    );
    let mut out = Part {
        d: x.d,
        k0,
        up: vec![0.0; n],
        lo: vec![0.0; n],
        ln_s_up: su,
        ln_s_lo: sl,
    };
    for (p, w) in [(x, 1.0f64), (y, c)] {
        let (fu, fl) = (exp(p.ln_s_up + ln(w) - su), exp(p.ln_s_lo + ln(w) - sl));
        let off = (p.k0 - k0) as usize;
        for i in 0..p.len() {
            out.up[off + i] += p.up[i] * fu;
            out.lo[off + i] += p.lo[i] * fl;
        }
    }
    // Two rounded terms per point: keep `up` above and `lo` below the exact sums.
    out.up.iter_mut().for_each(|v| *v *= 1.0 + 4.0 * U);
    out.lo.iter_mut().for_each(|v| *v *= 1.0 - 4.0 * U);
    out
}

/// A composed PLD: a fine core, a coarse tail (spacing f·core.d; may be empty), the
/// untilted mass of `up` at +∞ and the ln of the exponential moment removed from `up`.
#[derive(Clone)]
struct Meas {
    core: Part,
    tail: Part,
    f: i64,
    inf: f64,
    ln_lost: f64,
    /// A tail longer than this goes to a coarser lattice.
    cap: usize,
}

impl Meas {
    fn ln_moment(&self) -> f64 {
        ln_add(self.core.ln_moment(), self.tail.ln_moment())
    }
}

/// Normalize ln-masses to a tilted array: (masses with max 1, ln scale).
fn from_logs(ln_p: &[f64], k_lo: i64, lambda: f64, d: f64, bias: f64) -> (Vec<f64>, f64) {
    let mut w = super::compose::tilted_logs(ln_p, k_lo, lambda, d);
    let mx = super::compose::to_masses(&mut w);
    if mx == f64::NEG_INFINITY {
        // An empty (lower) measure: zeros.
        return (w, 0.0);
    }
    w.iter_mut().for_each(|x| *x *= bias);
    (w, mx)
}

/// Σ_{i + j < o} x_i y_j (tilted `up` masses; o an index of x∗y), by prefix sums: exact
/// but for the rounding of nonnegative sums.
fn exact_below(x: &Part, py: &[f64], o: usize) -> f64 {
    x.up.iter()
        .enumerate()
        .take(o)
        .map(|(i, &w)| w * py[(o - i).min(py.len() - 1)])
        .sum()
}

/// The core's window start for the product x∗y (raw result r): the largest index o
/// whose exact tilted mass below is ≤ `share` of the total; (o, that mass).
fn lower_cut(x: &Part, y: &Part, r: &Part, share: f64) -> (usize, f64) {
    let mut py = vec![0.0; y.len() + 1];
    for (j, &w) in y.up.iter().enumerate() {
        py[j + 1] = py[j] + w;
    }
    // r's index 0 is x.k0 + y.k0 + shift (r may have been tidied).
    let shift = (r.k0 - (x.k0 + y.k0)) as usize;
    let total = x.up.iter().sum::<f64>() * py[y.len()];
    let (mut lo, mut hi) = (0usize, r.len());
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if exact_below(x, &py, mid + shift) <= share * total {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let below = exact_below(x, &py, lo + shift) * (1.0 + 4.0 * (x.len() + y.len()) as f64 * U);
    (lo, below)
}

/// The tail's factor for a tail spanning `span` fine points: a power of two f ≥ 2 with
/// span/f ≤ TAIL_LEN.
fn tail_factor(span: usize) -> i64 {
    (span.div_ceil(TAIL_LEN)).next_power_of_two().max(2) as i64
}

/// The tilted share a core keeps above its spill point on a tail of factor f: the tail's
/// coarser lattice then adds ≤ 1 % to the bias (share·f² ≤ 0.01).
fn tail_share(f: i64) -> f64 {
    0.01 / (f as f64 * f as f64)
}

/// The index b such that the tilted `up` mass of r above b is ≤ tau of its total.
fn spill_point(r: &Part, tau: f64) -> usize {
    let total: f64 = r.up.iter().sum();
    let mut acc = 0.0;
    for i in (0..r.len()).rev() {
        acc += r.up[i];
        if acc > tau * total {
            return i;
        }
    }
    0
}

/// Send `up`'s mass at the top of `p` to +∞ while its untilted total stays within
/// `budget` (`lo` drops it), keeping its first `min` points; returns what was sent.
fn to_infinity(p: &mut Part, lambda: f64, budget: f64, min: usize) -> f64 {
    let mut acc = 0.0;
    let mut keep = p.len();
    for i in (min..p.len()).rev() {
        let u = exp(p.ln_untilted(i, lambda));
        if acc + u > budget {
            break;
        }
        acc += u;
        keep = i;
    }
    p.up.truncate(keep);
    p.lo.truncate(keep);
    acc * (1.0 + 4.0 * (p.len() + 1) as f64 * U)
}

/// Remove the top of `p` while its tilted `up` moment stays within e^{ln_budget}; returns
/// the ln of what was removed (−∞ for nothing), rounded up.
fn top_to_ledger(p: &mut Part, ln_budget: f64) -> f64 {
    let budget = exp(ln_budget - p.ln_s_up);
    let mut acc = 0.0;
    let mut keep = p.len();
    for i in (0..p.len()).rev() {
        if acc + p.up[i] > budget {
            break;
        }
        acc += p.up[i];
        keep = i;
    }
    p.up.truncate(keep);
    p.lo.truncate(keep);
    if acc > 0.0 {
        ln(acc) + p.ln_s_up + ln_1p(4.0 * (p.len() + 1) as f64 * U)
    } else {
        f64::NEG_INFINITY
    }
}

/// Settle a measure whose core is `core` (already cut below) and whose tail candidates
/// are `tail` (on f·d): send `up`'s mass at the top (tail first, then core) to +∞
/// within the budget (`eta`; for a reversed composition, λ ≤ −1, the share of its tilted
/// moment its top may take to the ledger, at most [`TOP_REL`]), spill the core above its τ-point into the tail, move tail mass
/// inside the core's range back onto the core, and drop the tail when the core can
/// hold it.
fn settle(m: &mut Meas, lambda: f64, eta: f64, w: &Work) {
    let f = m.f;
    if lambda < 0.0 {
        // Reversed (λ ≤ −1): nothing goes to +∞ (it would lower the reversed δ); the top of
        // the tail (then of the core) whose tilted moment is within TOP_REL of the whole goes
        // to the ledger instead. Without it the tail doubled at every squaring (the FFT's
        // rounding floor rides at its top), its cap then coarsened it to spacings of 10 and
        // more, and connect-the-dots at that spacing and λ < 0 moves weight e^{|λ|·fΔ} down.
        let ln_budget = ln(eta.min(TOP_REL)) + m.ln_moment();
        let mut gone = top_to_ledger(&mut m.tail, ln_budget);
        if m.tail.is_empty() {
            let left = if gone > f64::NEG_INFINITY {
                ln_budget + ln_1p(-exp(gone - ln_budget))
            } else {
                ln_budget
            };
            gone = ln_add(gone, top_to_ledger(&mut m.core, left));
        }
        m.ln_lost = ln_add(m.ln_lost, gone);
    } else {
        let sent = to_infinity(&mut m.tail, lambda, eta, 0);
        m.inf += sent;
        if m.tail.is_empty() {
            // The core keeps its first point: a tilt far above the answer puts the whole
            // tilted measure where the P-mass is below the budget, and emptied, the
            // composition was refused (q = 0.1, σ = 0.6, T = 10⁶, the add pair).
            m.inf += to_infinity(&mut m.core, lambda, (eta - sent).max(0.0), 1);
        }
    }
    m.tail.tidy();
    m.core.tidy();
    let tau = tail_share(f);
    if !m.core.is_empty() {
        // The spill starts at a centred bin's lower edge (cD − D/2: the core keeps fewer than
        // f more points), and its lower measure is contracted in centred bins. In left bins
        // the lowest, heaviest bin's atom sat inside it with only lighter atoms above to
        // balance a merge, and most of it was rounded down a coarse spacing: at q = 1.916e-5,
        // σ = 0.4954, Δ = 4.8e-6 (f = 128) the spill of the four-step square lost ~1e-10 of
        // the lower measure's tilted moment, used 10⁸ times (its bracket [24.685622,
        // 24.717492], 0.13 %; centred [24.690430, 24.717456]).
        let half = Bins::Centred.shift(f);
        let from = m.core.k0 + spill_point(&m.core, tau) as i64 + 1;
        let b = ((from + half + f - 1).div_euclid(f) * f - half - 1 - m.core.k0) as usize;
        if b + 1 < m.core.len() {
            let spill = m.core.slice(b + 1, m.core.len());
            m.core.up.truncate(b + 1);
            m.core.lo.truncate(b + 1);
            let tail = add(
                &m.tail,
                &coarsen_in(&spill, f, lambda, Bins::Centred, w),
                1.0,
            );
            // The lower measure: the spilled atoms contracted per coarse bin and merged with
            // the tail's (a spill narrower than a coarse bin, merged alone, went onto one
            // lattice point below it: [`lower_product`]).
            m.tail = if lowering_after(lambda, w) {
                let z = add(
                    &on_points(&m.tail),
                    &contracted(&spill, f, lambda, Bins::Centred),
                    1.0,
                );
                with_lower(tail, &z, lambda, w)
            } else {
                tail
            };
        }
    }
    if m.tail.is_empty() {
        return;
    }
    // Tail points inside the core's range go back onto the core (exactly): every coarse point
    // below the core's end, so also the one a centred spill merges its lowest atoms onto, a
    // fine point of the core (left in the tail, it was put back onto the tail's lattice in the
    // next core∗tail product, and its lower measure with it: q = 5.714e-6, σ = 0.3577,
    // T = 8.2·10⁸, δ = 3.16e-13 read [83.792318, 83.881803], now [83.819189, 83.881504]).
    let core_end_coarse = (m.core.end() + f - 1).div_euclid(f);
    let cut = ((core_end_coarse - m.tail.k0).max(0) as usize).min(m.tail.len());
    if cut > 0 {
        let back = m.tail.slice(0, cut).refine(f);
        m.core = add(&m.core, &back, 1.0);
        m.tail = m.tail.slice(cut, m.tail.len());
    }
    m.tail.tidy();
    m.core.tidy();
    // A tail that keeps growing (the FFT's rounding floor rides along at its top, too
    // heavy to send to +∞ early in a long run) goes to a coarser lattice: the least power of
    // two that brings it within its cap. Where the tail's tilted share is that floor the
    // spacing costs next to nothing, but where σ is small it holds a real share of the
    // moment (q = 1.924e-6, σ = 0.3174, T = 7.9·10⁸: 1e-4 of it from 64 steps on), and a
    // tail put 16× coarser at once (to TAIL_LEN points) lost the lower measure ~1e-9 of its
    // moment per step, e^{−0.87} over the run: the first pass read [69.10, 70.99], 2.7 %
    // wide; coarsened 2× it reads [69.86, 70.92], and it costs less (the tail spills less).
    if m.tail.len() > m.cap {
        let g = m.tail.len().div_ceil(m.cap).next_power_of_two() as i64;
        m.tail = coarsen(&m.tail, g, lambda, w);
        m.f *= g;
    }
    // A tail the core can hold on its own lattice: merge it (on the factor as it is now).
    let f = m.f;
    if !m.tail.is_empty() && ((m.tail.end() * f - m.core.k0) as usize) <= N_CAP {
        let back = m.tail.refine(f);
        m.core = add(&m.core, &back, 1.0);
        m.tail = Part::empty(m.core.d * f as f64);
    }
}

/// The per-step lattice as a two-resolution measure: `eta` its +∞ budget, `lost` the share of
/// its moment it may lose below ([`lost_share`]); `edge`: for a reversed composition (λ ≤ −1),
/// ln of the per-step moment bound of the mass below the lattice (module docs).
fn from_step(
    pld: &StepPld,
    lambda: f64,
    d: f64,
    (eta, lost): (f64, f64),
    edge: f64,
    w: &Work,
) -> Meas {
    let mut core = Part::tilted((&pld.ln_up, &pld.ln_lo), pld.k_lo, lambda, d);
    let ln_s_up = core.ln_s_up;
    // Below: exact tilted prefix sums to the ledger.
    let total: f64 = core.up.iter().sum();
    let mut below = 0.0;
    let mut a = 0;
    while a + 1 < core.len() && below + core.up[a] <= lost * total {
        below += core.up[a];
        a += 1;
    }
    let n_all = core.len();
    core = core.slice(a, n_all);
    // The tail's factor from the span above the central 1 − 1e-4 of the tilted mass, or
    // the lattice's own coarse part.
    let (f, tail) = match &pld.tail {
        Some(c) => {
            let mut t = Part::tilted((&c.ln_up, &c.ln_lo), c.k_lo, lambda, d * c.f as f64);
            t.tidy();
            (c.f, t)
        }
        None => {
            let b0 = spill_point(&core, 1e-4);
            let f = tail_factor(core.len() - b0).min(w.tail_cap().unwrap_or(i64::MAX).max(2));
            (f, Part::empty(d * f as f64))
        }
    };
    // (A lattice's own coarse part keeps its spacing: it was chosen for the answer.)
    let cap = (4 * TAIL_LEN).max(pld.tail.as_ref().map_or(0, |c| c.ln_up.len()));
    let mut m = Meas {
        core,
        tail,
        f,
        inf: exp(pld.ln_inf) * (1.0 + 64.0 * U),
        cap,
        ln_lost: if below > 0.0 {
            ln(below) + ln_s_up + ln(1.0 + 4.0 * n_all as f64 * U)
        } else {
            f64::NEG_INFINITY
        },
    };
    if lambda < 0.0 {
        // Reversed: the mass above the lattice (losses ≥ its top) and below it go to the
        // ledger with their moment bounds, not to +∞ (which would lower the reversed δ).
        let top = pld.k_top() as f64 * d;
        let inf = pld.ln_inf + lambda * top + ln_1p(64.0 * U);
        m.ln_lost = ln_add(m.ln_lost, ln_add(inf, edge));
        m.inf = 0.0;
    }
    settle(&mut m, lambda, eta, w);
    m
}

/// x∗y for two-resolution measures (on the same core lattice and tail factor), then
/// settled with +∞ budget `eta`; the product is used `copies` times in the composition, and
/// its FFTs' floors may add `floor`/copies of its mass.
fn product(
    x: &Meas,
    y: &Meas,
    square: bool,
    (lambda, eta, copies, floor): (f64, f64, f64, f64),
    w: &Work,
) -> Result<Meas, TooWide> {
    let share = floor / copies.max(1.0);
    // One tail factor: the larger (a tail re-discretized to a coarser lattice).
    let f = x.f.max(y.f);
    let (xt, yt) = (
        coarsen(&x.tail, f / x.f, lambda, w),
        coarsen(&y.tail, f / y.f, lambda, w),
    );
    let core_part = |w: &Work| -> Result<(Part, f64), TooWide> {
        let core_raw = conv(&x.core, &y.core, square, share, w)?;
        if core_raw.is_empty() {
            return Ok((core_raw, 0.0));
        }
        let (a, below) = lower_cut(&x.core, &y.core, &core_raw, lost_share(floor, copies));
        Ok((core_raw.slice(a, core_raw.len()), below))
    };
    // Products with a tail, on the tail's lattice.
    let has_tail = !(xt.is_empty() && yt.is_empty());
    let tail_part = |w: &Work| -> Result<Part, TooWide> {
        if !has_tail {
            return Ok(Part::empty(x.core.d * f as f64));
        }
        let xc = coarsen(&x.core, f, lambda, w);
        let yc = coarsen(&y.core, f, lambda, w);
        if square {
            // 2·x_c'·x_t + x_t·x_t = x_t∗(2x_c' + x_t).
            conv(&xt, &add(&xt, &xc, 2.0), false, share, w)
        } else {
            let t1 = conv(&xt, &add(&yt, &yc, 1.0), false, share, w)?;
            let t2 = conv(&xc, &yt, false, share, w)?;
            Ok(add(&t1, &t2, 1.0))
        }
    };
    // The lower measure contracted after the product too ([`lower_product`], where
    // [`lower_after`] asks for it; a reversed composition, λ < 0, keeps none): its tail's
    // products, on the tail's lattice.
    let lowering = has_tail && lowering_after(lambda, w);
    let tail_lower = |w: &Work| -> Result<Part, TooWide> {
        let (tx, ty) = (on_points(&xt), on_points(&yt));
        Ok(if square {
            conv(
                &tx,
                &add(&tx, &contracted(&x.core, f, lambda, Bins::Left), 2.0),
                false,
                share,
                w,
            )?
        } else {
            let z1 = conv(
                &tx,
                &add(&ty, &contracted(&y.core, f, lambda, Bins::Left), 1.0),
                false,
                share,
                w,
            )?;
            let z2 = conv(
                &contracted(&x.core, f, lambda, Bins::Left),
                &ty,
                false,
                share,
                w,
            )?;
            add(&z1, &z2, 1.0)
        })
    };
    // The core's, the tail's and the lowered tail's products are independent: natively on two
    // threads ([`Work::both`]: the same bits and budget as in sequence). With the lowered
    // tail, the core and the tail on one and the lowered tail on the other: a heavy-tailed
    // run's tail products are most of its products (q = 5.8e-6, σ = 0.46, T = 5·10⁸: the
    // tails 320 ms, the cores 43 ms, when the core and the tail were the two threads' parts);
    // else the core and the tail where both are long enough to pay for a thread.
    let ((core, below), mut tail) = if lowering {
        let split = xt.len().max(yt.len()) >= 256;
        let both = |w: &Work| Ok((core_part(w)?, tail_part(w)?));
        let ((core, tail), z) = w.both(split, both, tail_lower)?;
        (core, with_lower(tail, &z, lambda, w))
    } else {
        let long = x.core.len().min(y.core.len()) >= 256 && xt.len().max(yt.len()) >= 128;
        w.both(long, core_part, tail_part)?
    };
    let (mx, my) = (x.ln_moment(), y.ln_moment());
    // lost(x∗y) ≤ lost_x·(M_y + lost_y) + M_x·lost_y, plus this cut.
    let mut ln_lost = ln_add(x.ln_lost + ln_add(my, y.ln_lost), mx + y.ln_lost);
    if below > 0.0 {
        ln_lost = ln_add(ln_lost, ln(below) + x.core.ln_s_up + y.core.ln_s_up);
    }
    // Tail mass below the core's window start: to the ledger as well.
    if !tail.is_empty() && !core.is_empty() {
        let start = core.k0.div_euclid(f);
        let n = ((start - tail.k0).max(0) as usize).min(tail.len());
        if n > 0 {
            let s: f64 = tail.up[..n].iter().sum();
            if s > 0.0 {
                ln_lost = ln_add(ln_lost, ln(s) + tail.ln_s_up);
            }
            tail = tail.slice(n, tail.len());
        }
    }
    let mut m = Meas {
        core,
        tail,
        f,
        inf: x.inf + y.inf,
        ln_lost,
        cap: x.cap.max(y.cap),
    };
    settle(&mut m, lambda, eta, w);
    Ok(m)
}

/// Re-discretize a measure's core (and its tail, keeping the factor) by `g`.
fn regrid(m: &Meas, g: i64, lambda: f64, w: &Work) -> Meas {
    if g == 1 {
        return m.clone();
    }
    // The tail keeps its own spacing while it is at least twice the new core's (f/g ≥ 2):
    // coarsening it with the core made its spacing f·gΔ grow without bound over a long run
    // (q = 1e-4, σ = 0.6, T = 10⁸: 38 in loss at the last levels, where ε is 25), and the
    // composed centre moved far from the answer. Else it goes to twice the core's spacing.
    let f = (m.f / g).max(2);
    let core = |w: &Work| Ok::<_, Infallible>(coarsen(&m.core, g, lambda, w));
    let tail = |w: &Work| Ok::<_, Infallible>(coarsen(&m.tail, f * g / m.f, lambda, w));
    // (Independent: natively on two threads where both are long, as if in sequence.)
    let (core, tail) = match w.both(m.core.len().min(m.tail.len()) >= 2048, core, tail) {
        Ok(parts) => parts,
        Err(never) => match never {},
    };
    Meas {
        core,
        tail,
        f,
        inf: m.inf,
        ln_lost: m.ln_lost,
        cap: m.cap,
    }
}

/// Coarsen by a power of two while the core is longer than N_CAP and `max_d` allows.
fn fit(m: Meas, max_d: f64, lambda: f64, w: &Work) -> Meas {
    let mut g = 1;
    while m.core.len() / g > N_CAP && m.core.d * (2 * g) as f64 <= max_d * (1.0 + 1e-12) {
        g *= 2;
    }
    regrid(&m, g as i64, lambda, w)
}

/// Bring `x` to core spacing `d` and tail factor `f` (powers of two from its own).
fn align(x: &Meas, d: f64, lambda: f64, w: &Work) -> Meas {
    let g = (d / x.core.d).round() as i64;
    regrid(x, g.max(1), lambda, w)
}

/// One phase: the per-step lattice composed `steps` times.
fn power(
    pld: &StepPld,
    steps: u64,
    lambda: f64,
    (d0, eta, edge, floor): (f64, f64, f64, f64),
    w: &Work,
) -> Result<Meas, TooWide> {
    let levels = 64 - steps.leading_zeros() as i32; // L + 1
    let per = eta / (2.0 * levels as f64);
    let mut base = from_step(
        pld,
        lambda,
        d0,
        (per / steps as f64, lost_share(floor, steps as f64)),
        edge,
        w,
    );
    // (The even part where the per-step lattice has its own coarse part: small q.)
    let even = if pld.tail.is_some() { REBIN_EVEN } else { 0.0 };
    let mut acc: Option<Meas> = None;
    let mut j = 0;
    loop {
        if base.core.len() > MAX_LEN || base.tail.len() > MAX_LEN {
            return Err(TooWide {
                needed: base.core.len().max(base.tail.len()) as f64,
            });
        }
        let last = steps >> (j + 1) == 0;
        // The square: 2^{j+1} steps, used ⌊T/2^{j+1}⌋ times in the end, then fitted to the
        // spacing level j + 1 allows.
        let copies = (steps >> (j + 1)) as f64;
        let share = (REBIN * powf(2f64, -0.5 * (levels - 2 - j) as f64)).max(even / levels as f64);
        let max_d = (d0 * (share * 2f64.powi(j + 1)).sqrt()).max(d0);
        let square = |w: &Work| -> Result<Meas, TooWide> {
            let sq = product(&base, &base, true, (lambda, per / copies, copies, floor), w)?;
            Ok(fit(sq, max_d, lambda, w))
        };
        let times = |r: &Meas, w: &Work| -> Result<Meas, TooWide> {
            let r = align(r, base.core.d, lambda, w);
            product(&r, &base, false, (lambda, per, 1.0, floor), w)
        };
        if steps >> j & 1 == 1 {
            match acc.take() {
                None => acc = Some(base.clone()),
                // The two products of a level are independent: natively on two threads, as if
                // in sequence ([`Work::both`]: the same bits and budget), where each is long
                // enough to pay for a thread and short enough not to split its FFTs itself.
                Some(r) if !last => {
                    let (a, next) = w.both(parallel(&r, &base), |w| times(&r, w), square)?;
                    acc = Some(a);
                    base = next;
                    j += 1;
                    continue;
                }
                Some(r) => acc = Some(times(&r, w)?),
            }
        }
        if last {
            break;
        }
        base = square(w)?;
        j += 1;
    }
    acc.ok_or(TooWide { needed: 0.0 })
}

/// Whether a level's two products ([`power`]) are worth two threads: a thread costs ~50 µs
/// to start here, a product of 256-point measures about as much; beyond 2¹⁵ points their
/// transforms approach the FFT's own two-thread split ([`super::fft`]).
fn parallel(acc: &Meas, base: &Meas) -> bool {
    let size = |m: &Meas| m.core.len() + m.tail.len();
    size(base) >= 256 && size(acc).max(size(base)) <= 1 << 15
}

/// Compose the phases at tilt λ ≥ 0 on per-step lattices of spacing `d`; `eta` bounds
/// the untilted mass sent to +∞ by truncations; `floor`: the share of a product's mass its
/// FFTs' rounding may add, over the times it is used ([`FLOOR_SHARE`] or less).
pub(crate) fn compose(
    phases: &[(&StepPld, u64)],
    lambda: f64,
    (d, eta, floor): (f64, f64, f64),
    w: &Work,
) -> Result<Composed, TooWide> {
    compose_with(phases, lambda, (d, eta, floor), &[], 0.0, w)
}

/// The reversed pair's composition ([`super`]'s "reversed pair"): the phases' lattices
/// composed at tilt λ ≤ −1, nothing sent to +∞ (the tops go to the ledger: about `top` of
/// the composed tilted moment in all, spread over the levels by the times each product is
/// used, and at most [`TOP_REL`] of a measure's moment per settle; ∞ for that alone),
/// the mass below each phase's lattice charged per step by `edges` (ln of its moment bound
/// at λ); read by [`Composed::delta`] as the reversed pair's upper δ. `shift`: what the
/// caller adds to the composed losses afterwards (the per-step lattices' offsets times their
/// steps, [`Composed::shift_by`]); the tail's points are left out only where the loss they
/// stand for, shifted, is at or above 0.
pub(crate) fn compose_reversed(
    phases: &[(&StepPld, u64)],
    lambda: f64,
    (d, top): (f64, f64),
    edges: &[f64],
    shift: f64,
    w: &Work,
) -> Result<Composed, TooWide> {
    debug_assert!(lambda <= -1.0 && edges.len() == phases.len());
    compose_with(phases, lambda, (d, top, FLOOR_SHARE), edges, shift, w)
}

fn compose_with(
    phases: &[(&StepPld, u64)],
    lambda: f64,
    (d, eta, floor): (f64, f64, f64),
    edges: &[f64],
    shift: f64,
    w: &Work,
) -> Result<Composed, TooWide> {
    let mut total: Option<Meas> = None;
    for (i, &(pld, steps)) in phases.iter().enumerate() {
        if steps == 0 {
            continue;
        }
        let edge = edges.get(i).copied().unwrap_or(f64::NEG_INFINITY);
        let p = power(
            pld,
            steps,
            lambda,
            (d, eta / phases.len() as f64, edge, floor),
            w,
        )?;
        total = Some(match total {
            None => p,
            Some(t) => {
                let dd = t.core.d.max(p.core.d);
                let (t, p) = (align(&t, dd, lambda, w), align(&p, dd, lambda, w));
                product(&t, &p, false, (lambda, eta, 1.0, floor), w)?
            }
        });
    }
    let mut m = total.ok_or(TooWide { needed: 0.0 })?;
    if lambda < 0.0 {
        // The reversed δ at ε ≥ 0 counts losses below −ε only: the tail's points at losses
        // ≥ 0 weigh (e^{−L} − e^ε)₊ = 0 there, and are left out — losses as the caller reads
        // them, `shift` added: a point at kfD stands for kfD + shift. (Cut at kfD ≥ 0 instead,
        // a lattice with offsets — q = 4.692e-8, σ = 0.405, T = 5.6·10⁸ at spacing 6.2e-8, shift
        // −22.4 — lost its whole tail, and the small pair's δ_rev(0.02) read 6.1e-4 where its
        // composition without offsets bounds it below by 2.0e-3: `jumps`.) One point of margin.
        let tail_d = m.f as f64 * m.core.d;
        let cut = (-shift / tail_d).ceil();
        let n = if cut.is_finite() {
            (cut as i64 + 1 - m.tail.k0).clamp(0, m.tail.len() as i64) as usize
        } else {
            m.tail.len()
        };
        m.tail = m.tail.slice(0, n);
    }
    // Read on the core's lattice, the tail placed exactly onto it — or, where that lattice
    // would be too long (a few steps whose answer lies far out in the tail: q = 6.5e-8,
    // σ = 0.43, T = 4 asked for 7.7·10⁷ points, 0.75 GB, and was refused), on the tail's,
    // the core re-discretized onto it.
    let span = m.tail.end() * m.f - m.core.k0;
    let all = if !m.tail.is_empty() && span > (4 * MAX_LEN) as i64 {
        add(&coarsen(&m.core, m.f, lambda, w), &m.tail, 1.0)
    } else {
        add(&m.core, &m.tail.refine(m.f), 1.0)
    };
    if all.is_empty() || all.len() > 4 * MAX_LEN {
        return Err(TooWide {
            needed: all.len() as f64,
        });
    }
    let s: f64 = all.up.iter().sum();
    let mean = all
        .up
        .iter()
        .enumerate()
        .map(|(i, &w)| w * (all.k0 + i as i64) as f64)
        .sum::<f64>()
        / s;
    let var = all
        .up
        .iter()
        .enumerate()
        .map(|(i, &w)| w * ((all.k0 + i as i64) as f64 - mean).powi(2))
        .sum::<f64>()
        / s;
    // Fail safe: a window without finite tilted mass cannot be read.
    if !(mean.is_finite() && var.is_finite() && all.ln_s_up.is_finite()) || m.ln_lost.is_nan() {
        return Err(TooWide { needed: -1.0 });
    }
    Ok(Composed::from_parts(
        all.d,
        lambda,
        all.k0,
        (&all.up, all.ln_s_up),
        (&all.lo, all.ln_s_lo),
        m.inf.min(1.0),
        m.ln_lost,
        (mean * all.d, var.sqrt() * all.d),
    ))
}

#[cfg(test)]
mod agreement;
#[cfg(test)]
mod tests;
