//! Rare large losses in closed form: a certified bracket for plain SGM runs whose ε is decided
//! by a few steps with a large loss (tiny q at small σ over many steps), where no exponential
//! tilt of the whole composition centres them and the lattices refuse or find no lower end.
//!
//! # Where the lattices fail
//! At q = 2.1e-9, σ = 0.51, T = 5.8·10⁸, δ = 3.3e-15 the composed small losses have a spread
//! of 3.5e-4 around 4e-6, while ε ≈ 0.042 is reached by one step whose sample x sits ~9σ out
//! (a loss L(x) = ln(1 − q + q·e^{(2x−1)/(2σ²)}) whose tail is log-normal: it falls slower than
//! any exponential tilt can centre). δ's share of the tilted moment was 1e-30 at every tilt
//! tried, the FFT's rounding floor swamped it, and the call was refused; exact RDP's 3.25 was
//! all that was left. At q = 4.9e-9, σ = 0.40, T = 7.7·10⁷, δ = 1.2e-6 the lattices gave
//! an upper end of 0.0057 and no lower end.
//!
//! # The decomposition
//! Split one step's sample line at x_top: the small part μ_s (the P-law of the loss on
//! x ≤ x_top) and the big part μ_b (x > x_top), both unnormalized, μ = μ_s + μ_b. The T-fold
//! law is Σ_k C(T, k)·μ_s^{∗(T−k)} ∗ μ_b^{∗k}, and δ(ε) = ∫(1 − e^{ε−ℓ})₊ dμ^{∗T}(ℓ) is linear in
//! it. With H(y) = ∫(1 − e^{y−s})₊ dμ_s^{∗(T−1)}(s), the hockey stick of the T − 1-fold small
//! pair (μ_s against Q restricted to x ≤ x_top: the same loss L), the terms k = 0 and k = 1 are
//!   μ_s^{∗T} = μ_s^{∗(T−1)} ∗ μ_s   and   T·μ_s^{∗(T−1)} ∗ μ_b,
//! so with ν = μ_s + T·μ_b (a measure on the losses of one step),
//!   ∫ H(ε − ℓ) dν(ℓ)  ≤  δ(ε)  ≤  ∫ H(ε − ℓ) dν(ℓ) + R₂,
//! R₂ the terms with k ≥ 2 (p_b = μ_b's mass). Those with k ≥ 3 are charged in full:
//! R₃ = Σ_{k≥3} C(T, k)·p_b^k ≤ (Tp_b)³/6·e^{Tp_b} (the integrand is ≤ 1 and |μ_s| ≤ 1).
//! The term k = 2 is read from H too: the T − 2-fold small pair's hockey stick H₂ is at most
//! H(z − q')/(1 − p_b) (q' = −ln(1 − q); one more small step, whose loss is ≥ −q' and whose
//! mass is ≥ 1 − p_b, cannot lower it by more), so
//!   (k = 2)  ≤  C(T, 2)/(1 − p_b)·∫∫ H(ε − ℓ₁ − ℓ₂ − q') dμ_b(ℓ₁) dμ_b(ℓ₂),
//! read on the pairs' sums (each loss rounded up onto a grid, uniform over ε's range and then
//! growing by 1 % a point to the last bin: H falls in its argument). From below, one more small
//! step adds at most τ to the loss but on its losses past τ (P-mass p_τ), so
//! H₂(z) ≥ H(z + τ) − p_τ and
//!   (k = 2)  ≥  C(T, 2)·∫∫ (H(ε − ℓ₁ − ℓ₂ + τ) − p_τ)₊ dμ_b(ℓ₁) dμ_b(ℓ₂),
//! each loss rounded down (τ the grid's spacing). Where a pair reads H ≈ 0.1 — q = 1e-8,
//! σ = 0.32, T = 2·10⁸, δ = 1e-3, ~2 sampled steps — the pairs with a loss past ε's range,
//! once charged at H = 1, were 1.9 % of δ, and the term's absence from the lower sum 1 %: that
//! run read [0.025270, 0.025796] and was refused; it reads [0.025392, 0.025477].
//!
//! **Where x_top goes** ([`x_top_for`]). Charging the term k = 2 in full would ask
//! T·p_b ≤ √(2e-3·δ) (the square-root rule). At δ = 5.3e-15 (q = 4.4e-9, σ = 0.38,
//! T = 2·10⁸, ε ≈ 4.42) the small pair's losses then reach 0.81, a composition of its 2·10⁸
//! steps carrying losses that large did not fit the budget, and the run was refused; with the
//! term read from H, T·p_b ≤ ∛(6e-3·δ) (the cube-root rule) keeps R₃ within a thousandth of δ,
//! the small pair ends at 0.098 and the bracket is [4.41611, 4.41658] in 0.7–0.9 s (the one-jump
//! estimate of `tests/reference/one_jump.py`: 4.41638). But moving x_top in also sends moderate
//! losses to the big part, whose term k = 1 then reads H farther out in its own tail, where its
//! bracket is wider: at q = 8.1e-9, σ = 0.45, T = 3.9·10⁸, δ = 9.8e-9 (ε ≈ 0.0236) the
//! square-root rule ends the small pair at 0.019 and reads [0.023489, 0.023726], the cube-root
//! rule at 0.0052 and reads [0.023323, 0.023765] (both on a 16,384-point tail). So the square-root rule is kept unless the
//! small pair's largest loss under it passes a twentieth of ε's known upper end (exact RDP's)
//! and under the cube-root rule it does not: over the 40 corner draws of
//! `benches/epsilon_sweep.py --corner`, 37 answer (31 within the rule) with the square-root rule
//! alone, 34 (29) with the cube-root rule alone, 39 (34) so (on a 16,384-point tail; on
//! [`SMALL_TAIL_POINTS`], 39 (37)). Where both leave the small pair
//! heavy (q = 1.5e-5, σ = 0.37, T = 4.5·10⁵, δ = 4.8e-6: losses to 2.1 under the cube-root rule,
//! ε ≈ 5.2, ~7 sampled steps) its composition found no lower end under the cube-root rule,
//! and under the square-root rule reads [5.1447, 5.1797].
//!
//! * **H** is the small pair's composition on the lattices ([`super::ladder`]) with every
//!   certificate they carry — its big part left out of both measures
//!   ([`super::discretize::step_pld_below`]), not sent to +∞: the small pair's loss is bounded
//!   by L(x_top), and a tilt centres its composition. Several compositions (tilts) may be read:
//!   the least upper and the greatest lower value of H at each y.
//! * **The integral over ν** is a sum over bins of the loss (ℓ_i, ℓ_{i+1}], each bin's P-mass
//!   exact to a relative 1e-12 (Gaussian interval masses of x): H(ε − ℓ) rises with ℓ, so the
//!   upper sum reads H's upper end at ℓ_{i+1} and the lower sum H's lower end at ℓ_i.
//!   x_top is a bin boundary (the lattice's own, computed as its bins compute it), so the
//!   bins of weight 1 and T partition the line. Above the last bin, T·(its mass) is added to the
//!   upper sum (H ≤ 1).
//! * **Past ε** every loss of a bin is above ε, and there H(ε − ℓ) = M_P − e^{ε−ℓ}·M_Q +
//!   e^{ε−ℓ}·δ_rev(ℓ − ε) (M_P, M_Q the small pair's composed masses, P(x ≤ x_top)^{T−1} and
//!   Q(x ≤ x_top)^{T−1}; δ_rev its reversed hockey stick, below). With e^{−ℓ}dP = dQ the bin's
//!   term is M_P·P_i − e^ε·M_Q·Q_i + e^ε·∫δ_rev dQ: closed form but for the bounds on M_P, M_Q
//!   and δ_rev, and δ_rev is 0 from T·(−ln(1 − q)) on (a step's loss is ≥ ln(1 − q)), where no
//!   read of H is made at all. With less than one sampled step over the run (q = 1.439e-9,
//!   σ = 0.3304, T = 6,498,578, δ = 8.97e-10) ε ≈ 0.438 is decided by one big loss past it;
//!   the reads at the bins' ends, H(ε − ℓ) taken as 1 for ℓ ≥ ε + 1, gave [0.4378, 0.6632] and
//!   the run was refused. It reads [0.437911, 0.437916] (the one-jump estimate: 0.437912).
//!
//! * **Below the compositions' windows** a tilted read of H charges the moment removed below
//!   them at e^{−λy}, which grows without bound as y falls (reads there clipped at 1, and the
//!   big part's upper sum came out 1.8× its lower one). There, as (1 − e^{−u})₊ =
//!   1 − e^{−u} + (e^{−u} − 1)₊, H(y) = M_P − e^y·M_Q + e^y·δ_rev(−y) with M_P ≤ 1, M_Q =
//!   Q(x ≤ x_top)^{T−1} in closed form, and δ_rev(ε') = E[(e^{−S} − e^{ε'})₊] the small pair's
//!   reversed hockey stick, read from its reversed composition (tilt λ ≤ −1: [`super`]'s
//!   "reversed pair").
//! * **Tilts.** The first composition is tilted a spread above the small pair's mean (the
//!   k = 1 term reads H near its centre, where one large loss lands near ε); while the bracket
//!   is wider than the rule, one more at its upper end (the k = 0 term reads H at ε itself).
//! * **Spacing.** The lattices' bulk rule (b/16), halved once while the bracket is wider than
//!   the rule: the lower measure's loss is first order in the spacing (q = 4.9e-9, σ = 0.40,
//!   T = 7.7·10⁷: 2.3e-4 wide at b/16, 9.5e-5 at b/32, not monotone below). Brackets intersect.
//! * **Bins.** A bracket at most four bins wide is set by the bins, not the lattice: it is read
//!   again from the same compositions on bins a quarter as wide (q = 4.692e-8, σ = 0.405,
//!   T = 5.6·10⁸, δ = 1.36e-5: [0.104692, 0.104825] at 5.8e-5 a bin, unchanged by the halved
//!   spacing, [0.104709, 0.104804] on the finer bins; the call 2.2 → 0.8 s).
//!
//! Both sums are monotone in ε (H falls as y grows), so ε's bracket follows by a bracketing
//! search: the upper end is an ε whose upper sum is ≤ δ, the lower end one whose lower sum
//! exceeds δ (any such ε is certified, whatever the bins of the read that found it). The sums are
//! near exponential in ε, so false position on their logarithm ([`crossing`]: Illinois, with
//! Brent's least step to close the bracket) finds each end to a millionth of ε in ~6 reads
//! where bisection took ~20. A read is a pass over every bin and pair: at q = 2.697e-7,
//! σ = 0.5315, T = 4.4·10⁸ a solve took 44 reads and 0.10–0.14 s, now 20 and 0.07 s (the
//! call 1.33 → 0.95 s).
//!
//! # Where it is used
//! [`super`]'s `jumps_first`: one plain SGM phase at σ < 0.6 with the lattices' bulk spacing
//! below 1e-8 over 10⁶ steps and more is tried here first (the lattices had spent 0.7 s to
//! refuse both draws above); a bracket within 0.1 % of ε is the answer, a wider one is kept
//! while the lattices try on half the budget, and intersected with theirs where they answer
//! (both draws: 0.71 s and 0.64 s natively). `jumps_near` adds σ < 0.6 with the bulk spacing
//! below 1e-6 over 10⁶ steps and more, where the lattices answered but slowly; there a bracket
//! wider than the rule leaves the lattices the whole budget. Everywhere else (plain SGM,
//! add/remove) it is the fallback where the lattices refuse or read wider than the rule. The
//! add pair is ruled out by a certified upper end of its ε from the same small pair, reversed
//! ([`Small::add_delta`]), or Bernstein's bound. (That reading was 3–15 % loose at tiny q,
//! σ ≈ 0.5–0.8 over 10⁸ steps, and those runs refused, until the reversed composition's top
//! cuts were held below δ's share of its tilted moment: `super::Lattices::ladder_reversed`;
//! now within 0.04 % of a Laplace inversion of the add pair's exact moment generating
//! function, `tests/reference/add_inversion.py`.)
//!
//! Checked against the one-jump reference (`tests/reference/one_jump.py`, mpmath, no lattice)
//! and the binomial count statistic (a certified lower end in closed form) in
//! `tests/engine/pld_coverage.rs`.

use super::compose::Composed;
use super::discretize::{
    bulk_offset, ln_p_between, ln_pq_between, loss_range, loss_remove, step_pld_below, x_of_loss,
};
use super::{
    bulk_scale, bulk_spacing, eta_for, finest_spacing, meets_rule, split_share, Bracket, Direction,
    Error, Lattices, Phase, CORE_POINTS, MAX_STEP_POINTS, MAX_TAIL_FACTOR, POINT_WORK,
    SPLIT_POINTS, WORK_SPENT,
};
use crate::engine::math::{cbrt, exp, ln, ln_1p, log2, powf};
use crate::engine::pld::compose::Work;
use crate::engine::search::{bisect, crossing};

mod small;
use small::*;

/// The share of δ the terms with three or more big steps may take (charged in full).
const THREE_SHARE: f64 = 1e-3;
/// The grid the term with two big steps is read on: this many points over ε's range, then
/// each PAIR_GROW past the last (to ℓ_max).
const PAIR_POINTS: usize = 512;
const PAIR_GROW: f64 = 0.01;
/// Work per pair of grid points convolved (a multiply-add, sometimes a step of a walk; kept at
/// its cost with a binary search, so that the budget, and every answer, stayed the same).
const PAIR_WORK: f64 = 2.0;
/// The share of ε's known upper end (`cap`) above which the small pair's largest loss makes its
/// composition heavy-tailed enough to move x_top in ([`x_top_for`]).
const HEAVY: f64 = 0.05;
/// A bracket at most this many bins wide is taken to be set by the bins ([`on_lattice`]) and
/// read again on bins FINER times narrower, with FINE_WORK units of its own (the call's
/// budget is then put back as it was).
const BINS_SET: f64 = 4.0;
const FINER: f64 = 4.0;
const FINE_WORK: f64 = 1.5e8;
/// The share of δ the big part beyond the last bin may take (charged at H = 1).
const FAR_SHARE: f64 = 1e-6;
/// Relative margin on every bin's mass (Gaussian interval masses: ≲ 1e-13 relative).
const MASS_MARGIN: f64 = 1e-12;
/// Work of this bracket (same units as the lattices': about half a second natively).
const WORK: f64 = 6e8;
/// Most bins over the fine part of the loss range per read: ε's bisections, and the δ side's
/// reads (many ε, each held only to the profile's ratio, 1.25: at q = 4.4e-9, σ = 0.38,
/// T = 2·10⁸ the profile over ε ∈ [0, 11] spent the budget on 20,000 bins a read and was
/// refused; on 10,000 it reads δ(4.4) as [5.542e-15, 5.568e-15]).
const MAX_BINS: f64 = 20_000.0;
const DELTA_BINS: f64 = 10_000.0;
/// Work per bin built (four erfc and two logs) and per bin read (two reads of H).
const MASS_WORK: f64 = 250.0;
const READ_WORK: f64 = 150.0;
/// Work per bin summed in closed form (past ε + T·(−ln(1 − q)): [`Small::read`]).
const CLOSED_WORK: f64 = 10.0;
/// The bins' loss spacing is the small pair's composed spread over this. H(ε − ℓ) is read at
/// each bin's ends, so a bin's width costs the two sums e^{λ·width} of each other (λ ≈ 90 at
/// q = 5.35e-9, σ = 0.36, T = 5·10⁸: a fiftieth of its spread, 1.1e-4, read
/// [0.036624, 0.036766]; a two-hundredth [0.036625, 0.036692]; a four-hundredth
/// [0.036630, 0.036679]; at q = 1e-8, σ = 0.32, T = 2·10⁸, δ = 1e-3 a two-hundredth read
/// [0.025389, 0.025510], a four-hundredth [0.025392, 0.025477], within the rule).
const BIN_SHARE: f64 = 400.0;
/// The big part's bins for the add pair ([`Small::bin_big`]): this many a spread of the small pair's
/// composition over the first BIG_SPREADS spreads past ℓ_top, then each BIG_GROW (of its
/// distance from ℓ_top) wider.
const BIG_BINS_PER_SPREAD: f64 = 64.0;
const BIG_SPREADS: f64 = 8.0;
const BIG_GROW: f64 = 0.02;
/// Most compositions (tilts) of the small pair.
const MAX_TILTS: usize = 4;
/// Points of the small pair's coarse tail per step (the lattices' own steps take TAIL_POINTS,
/// four times as many). Its lower measure came out the better for the coarser tail, on every
/// draw tried (ε's lower end; upper ends within 1e-5 of each other): q = 8.1e-9, σ = 0.45,
/// T = 3.9·10⁸, δ = 9.8e-9 read [0.023489, 0.023726] on 16,384 points, [0.023641, 0.023725]
/// on 8,192, [0.023667, 0.023725] on 4,096, [0.023659, 0.023725] on 2,048 (q = 8.96e-8,
/// σ = 0.32, T = 5.2·10⁸, δ = 7.9e-13: lower ends 11.847, 11.901, 11.899, 11.908; q = 4.9e-9,
/// σ = 0.40, T = 7.7·10⁷, δ = 1.2e-6: 0.005601, 0.005644, 0.005660, 0.005633). Why the finer
/// tail loses more is not shown: the ladder coarsens a composed tail past its cap by 8–128 at
/// once ([`super::ladder`]), but coarsening it by 2–4 at a time instead did not help (measured);
/// the choice is by measurement.
const SMALL_TAIL_POINTS: f64 = 4_096.0;

/// One step's loss measure on bins ([`Small::bins`]): (ℓ_a, ℓ_b, mass × weight); the term
/// with two big steps on the pairs' sums (an upper bound on the sum, the mass there with
/// weight C(T, 2)/(1 − p_b) in; and a lower bound, for the lower sum); and the upper sum's
/// part beyond them (the far mass at H = 1, R₃, and the pairs with a loss beyond ℓ_max).
struct Bins {
    /// (ℓ_a, ℓ_b, P-mass × weight, Q-mass × weight).
    bins: Vec<(f64, f64, f64, f64)>,
    pairs: Vec<(f64, f64)>,
    /// For the lower sum: a lower bound on each pair's sum and its mass (weight C(T, 2)),
    /// read at H(ε − sum + τ) − p_τ.
    pairs_lo: Vec<(f64, f64)>,
    tau: f64,
    p_tau: f64,
    beyond: f64,
}

/// The certified bracket of ε at δ for one plain SGM phase, remove pair
/// (add/remove adjacency's larger direction where the caller has ruled the add pair out),
/// by the decomposition above, and a certified upper end for the add pair's ε (from the same
/// small pair, reversed: [`Small::add_delta`]); `cap` a certified upper end known already
/// (exact RDP's).
///
/// The small pair's lattice spacing starts at the lattices' bulk rule and is halved once, on a
/// fresh budget, where the bracket is still wide (the lower measure's bias is first order in
/// it: q = 4.9e-9, σ = 0.40, T = 7.7·10⁷ is 2.3e-4 wide at b/16, 9.5e-5 at b/32); brackets
/// intersect.
///
/// Where the square-root rule ([`x_top_for`]) was chosen and its small pair spends the call's
/// work before any bracket, or reads one wider than the rule, the cube-root rule is tried on a
/// fresh budget (and two brackets intersect: q = 3.376e-7, σ = 0.4149, T = 4.6·10⁸,
/// δ = 2.3e-13 read [6.609824, 6.618287] under the square-root rule, its lower end set by that
/// small pair, and [6.617404, 6.618349] under the cube-root rule). The choice reads
/// ε's known upper end, exact RDP's, which is 5× the answer where one big step decides it:
/// q = 1.398e-9, σ = 0.3543, T = 3,577,834, δ = 1.1e-12 (0.005 sampled steps; ε ≈ 1.0889,
/// exact RDP 5.80) kept the square-root rule's small pair, losses to 0.073, whose composition
/// took nine tenths of the budget, and was refused; under the cube-root rule (losses to 0.0075)
/// it reads [1.088919, 1.088971] (the one-jump estimate of `tests/reference/one_jump.py`:
/// 1.088929).
pub(super) fn bracket(p: &Phase, delta: f64, cap: f64, w: &Work) -> Result<(Bracket, f64), Error> {
    let (run, d0, finest) = start(p, cap, w)?;
    let (q, sigma, t, _) = run;
    let other = two_rules((q, sigma, t), delta, cap);
    match bracket_by_rule(run, (d0, finest), delta, cap, false, w) {
        Err(e) if other => {
            w.budget(WORK);
            bracket_by_rule(run, (d0, finest), delta, cap, true, w).map_err(|_| e)
        }
        Ok((b, add)) if other && !meets_rule(b.lower, b.upper) => {
            w.budget(WORK);
            let Ok((c, c_add)) = bracket_by_rule(run, (d0, finest), delta, cap, true, w) else {
                return Ok((b, add));
            };
            Ok((super::intersect(b, c)?, add.min(c_add)))
        }
        r => r,
    }
}

/// [`bracket`] with x_top by [`x_top_for`] (`cube`: the cube-root rule).
fn bracket_by_rule(
    run: Run,
    (d0, finest): (f64, f64),
    delta: f64,
    cap: f64,
    cube: bool,
    w: &Work,
) -> Result<(Bracket, f64), Error> {
    let spent = Error::PldBudget { reason: WORK_SPENT };
    let mut best: Option<(Bracket, f64)> = None;
    for d in [d0, (0.5 * d0).max(finest)] {
        if best.is_some() {
            // The halved spacing on a budget of its own: at q = 3.073e-8, σ = 0.4757,
            // T = 850,989,488, δ = 1.03e-5 the first spacing read [0.021774, 0.021934]
            // (0.74 %) and left 2.7·10⁸ of the 4.4·10⁸ units the second needs; on its own
            // budget it reads [0.021881, 0.021923], within the rule.
            w.budget(WORK);
        }
        // The add pair's upper end found so far: where it is already below the remove pair's
        // upper end, the halved spacing composes the add pair no further.
        let known = best.map_or(f64::INFINITY, |(_, a)| a);
        let (b, add, cost) = match (on_lattice(run, delta, (cap, cube), d, known, w), best) {
            (Ok(b), _) => b,
            (Err(_), Some(_)) => break,
            (Err(e), None) => return Err(e),
        };
        // (`add` is already at most the last pass's: `known`.)
        let b = match best {
            Some((a, _)) => super::intersect(a, b)?,
            None => {
                super::overlap(b.upper, b.lower)?;
                b
            }
        };
        best = Some((b, add));
        // The halved spacing doubles every window: its first compositions cost about twice
        // these (measured: 2.2×), and where that is beyond its budget it only spends the call
        // (q = 3.376e-7, σ = 0.4149, T = 4.6·10⁸, δ = 2.3e-13: 0.6 s, refused at its first
        // forward composition).
        if meets_rule(b.lower, b.upper) || d <= finest || 2.0 * cost > WORK {
            break;
        }
    }
    best.ok_or(spent)
}

/// Certified δ brackets at each ε of `eps` for one plain SGM phase under add/remove adjacency
/// (the larger of the two pairs' δ), by the decomposition above: the remove pair's from the two
/// sums, read once per ε (no bisection); the add pair's upper end from the reversed
/// compositions ([`Small::add_delta`]), its lower end 0. `floor`: the smallest δ the reads
/// resolve (x_top puts R₃, charged in full, at a thousandth of it); the ε are read in
/// increasing order, and once an upper end is below `floor` it stands for every larger ε (δ
/// falls with ε). Compositions: one tilted a spread above the small pair's mean (the k = 1
/// terms) with the reversed one below the windows; then, where a read is poor, one tilted at
/// the largest such ε (the k = 0 term reads H at ε) with its reversed one, and those re-read.
pub(super) fn delta_brackets(
    p: &Phase,
    eps: &[f64],
    floor: f64,
    w: &Work,
) -> Result<Vec<Bracket>, Error> {
    let spent = || Error::PldBudget { reason: WORK_SPENT };
    let top = eps.iter().cloned().fold(0.0f64, f64::max);
    let ((q, sigma, t, bulk), d, _) = start(p, top, w)?;
    let Setup {
        mut small,
        lat,
        dd,
        flat,
        m0,
        s0,
    } = setup((q, sigma, t, bulk), floor, (top, false), d, w)?;
    small.max_bins = DELTA_BINS;
    // (The add pair's upper end is read at every ε: its big part on bins from the start.)
    small.bin_big(s0, w);
    small
        .comps
        .push(lat.compose_lowering_after(lat.tilt_for(m0 + s0, 1.0, w), w)?);
    let mut order: Vec<usize> = (0..eps.len()).collect();
    order.sort_by(|&a, &b| eps[a].total_cmp(&eps[b]));
    small.revs.extend(
        lat.ladder_reversed(lat.tilt_reversed(-flat, 1.0, w), w)
            .ok(),
    );
    let mut out = vec![
        Bracket {
            upper: 1.0,
            lower: 0.0
        };
        eps.len()
    ];
    // Bins cover the ε read so far (built again, twice as far, past them).
    let mut bins: Option<(f64, Bins)> = None;
    let mut read = |small: &Small, i: usize| -> Result<Bracket, Error> {
        let e = eps[i];
        if bins.as_ref().is_none_or(|(c, _)| *c < e) {
            let c = (2.0 * e).max(64.0 * dd);
            bins = Some((c, small.bins(c, dd, flat, w).ok_or_else(spent)?));
        }
        let (_, b) = bins.as_ref().ok_or_else(spent)?;
        let (up, lo) = small.read(b, e, w).ok_or_else(spent)?;
        let upper = up.max(small.add_delta(e)).min(1.0);
        Ok(Bracket {
            upper,
            lower: lo.min(upper),
        })
    };
    let poor = |b: &Bracket| b.upper >= floor && b.upper > super::PROFILE_RATIO * b.lower;
    for round in 0..2 {
        let mut below: Option<f64> = None;
        for &i in &order {
            if let Some(u) = below {
                out[i].upper = out[i].upper.min(u);
                continue;
            }
            if round == 0 || poor(&out[i]) {
                // The second round only narrows the first's brackets: where its reads spend
                // the call, those stand (q = 4.4e-9, σ = 0.38, T = 2·10⁸ over ε ∈ [0, 11]).
                let b = match read(&small, i) {
                    Ok(b) => b,
                    Err(_) if round == 1 => return Ok(out),
                    Err(e) => return Err(e),
                };
                out[i] = Bracket {
                    upper: out[i].upper.min(b.upper),
                    lower: out[i].lower.max(b.lower),
                };
                // Two certified brackets of one δ must overlap; where they do not, neither is
                // given (as on the ε side, `super::overlap`).
                super::overlap(out[i].upper, out[i].lower)?;
            }
            if out[i].upper < floor {
                below = Some(out[i].upper);
            }
        }
        // A second composition at the largest poor ε (its k = 0 term read at ε itself).
        let Some(aim) = (order.iter().rev())
            .map(|&i| (eps[i], out[i]))
            .find(|(_, b)| poor(b))
            .map(|(e, _)| e)
        else {
            break;
        };
        if round == 1 {
            break;
        }
        match lat.compose_lowering_after(lat.tilt_for(aim.max(m0 + 2.0 * s0), 1.0, w), w) {
            Ok(c) => small.comps.push(c),
            Err(_) => break,
        }
        small
            .revs
            .extend(lat.ladder_reversed(lat.tilt_reversed(aim, 1.0, w), w).ok());
    }
    Ok(out)
}

/// One plain SGM phase as the decomposition takes it: (q, σ, T, the bulk scale).
type Run = (f64, f64, f64, f64);

/// What [`bracket`] and [`delta_brackets`] start from, for one plain SGM phase whose ε (or
/// the largest ε read) is at most `top`: (q, σ, T, the bulk scale), the bulk rule's spacing
/// and the finest the phase allows; the call's work budget set. Refused where the
/// decomposition does not apply (q ∈ {0, 1}, one step, no bulk scale, `top` ≤ 0).
fn start(p: &Phase, top: f64, w: &Work) -> Result<(Run, f64, f64), Error> {
    let (q, sigma, steps) = (p.sgm.q(), p.sgm.sigma(), p.steps);
    let phases = std::slice::from_ref(p);
    let (Some(bulk), true) = (
        bulk_scale(phases),
        steps >= 2 && q > 0.0 && q < 1.0 && top > 0.0,
    ) else {
        return Err(Error::PldBudget { reason: WORK_SPENT });
    };
    w.budget(WORK);
    let t = steps as f64;
    let finest = finest_spacing(t, split_share(phases));
    Ok((
        (q, sigma, t, bulk),
        bulk_spacing(bulk, finest).min(1e-4),
        finest,
    ))
}

/// The small pair on its lattices, before any composition: the pair, its lattices, the
/// bins' spacing and the level H flattens at, and the untilted composed mean and spread.
struct Setup {
    small: Small,
    lat: Lattices,
    dd: f64,
    flat: f64,
    m0: f64,
    s0: f64,
}

/// Where the small pair ends, for reads at δ down to `delta` and ε up to `cap`: the x above
/// which T·p_b is at most ½·√(2·THREE_SHARE·δ) (the square-root rule: R₂ would be within the
/// share charged in full), or, where the small pair's largest loss would then pass HEAVY·`cap`
/// and under ½·∛(6·THREE_SHARE·δ) (the cube-root rule: R₃ ≤ (Tp_b)³e^{Tp_b}/6 ≤
/// THREE_SHARE·δ, the term k = 2 read from H) it would not, that one. See the module docs for
/// why both, and why not the cube-root rule where it leaves the small pair heavy.
/// `cube`: the cube-root rule whatever the losses.
fn x_top_for((q, sigma, t): (f64, f64, f64), delta: f64, cap: f64, cube: bool) -> f64 {
    let square = 0.5 * (2.0 * THREE_SHARE * delta).sqrt();
    let x = x_with_tail(q, sigma, ln(square / t));
    if !cube && loss_remove(q, sigma, x) <= HEAVY * cap {
        return x;
    }
    let third = 0.5 * cbrt(6.0 * THREE_SHARE * delta);
    let y = x_with_tail(q, sigma, ln(third / t));
    if cube || loss_remove(q, sigma, y) <= HEAVY * cap {
        y
    } else {
        x
    }
}

/// Whether the square-root rule chose its own x_top, the cube-root rule's being another to try
/// after it ([`x_top_for`]).
fn two_rules(run: (f64, f64, f64), delta: f64, cap: f64) -> bool {
    x_top_for(run, delta, cap, false) != x_top_for(run, delta, cap, true)
}

/// The small pair of one plain SGM phase on a lattice of spacing `d`, for reads at δ down to
/// `delta` (x_top puts R₃ at a thousandth of it, the far mass at a millionth) and ε up to `cap`
/// (`cube`: x_top by the cube-root rule, [`x_top_for`]).
fn setup(
    (q, sigma, t, bulk): (f64, f64, f64, f64),
    delta: f64,
    (cap, cube): (f64, bool),
    d: f64,
    w: &Work,
) -> Result<Setup, Error> {
    let spent = Error::PldBudget { reason: WORK_SPENT };
    let x_c = x_top_for((q, sigma, t), delta, cap, cube);
    let hi = loss_remove(q, sigma, x_c);
    let eta = eta_for(delta, t, cap, 2.0);
    let (lo, _) = loss_range(q, sigma, Direction::Remove, eta);
    let tail_d = cap.min(bulk * t.sqrt()) / 4096.0;
    let (split, o) = if (hi - lo) / d > SPLIT_POINTS {
        let b = lo + CORE_POINTS * d;
        let big = tail_d.max((hi - b) / SMALL_TAIL_POINTS);
        let f = powf(2f64, log2(big / d).floor()).max(2.0);
        if f > MAX_TAIL_FACTOR {
            return Err(spent);
        }
        (Some((b, f as i64)), bulk_offset(q, sigma, d, 1.0))
    } else {
        (None, 0.0)
    };
    let points = match split {
        Some((b, f)) => (b - lo) / d + (hi - b) / (d * f as f64) + 2.0,
        None => (hi - lo) / d,
    };
    if points > MAX_STEP_POINTS || !w.spend(POINT_WORK * points) {
        return Err(spent);
    }
    let (pld, x_top) = step_pld_below(q, sigma, d, (lo, hi), split, o);
    let lat = Lattices {
        d,
        steps: vec![pld],
        counts: vec![t - 1.0],
        eta_total: eta * (t - 1.0),
        one_fft: None,
        floors: vec![ln_1p(-q)],
        offsets: vec![o],
        untilted: Default::default(),
        last_read: Default::default(),
    };
    let l_top = loss_remove(q, sigma, x_top);
    let p_b = exp(ln_p_between(q, sigma, x_top, f64::INFINITY)) * (1.0 + MASS_MARGIN);
    let r3 = (t * p_b).powi(3) / 6.0 * exp(t * p_b) * (1.0 + 1e-12);
    // Q(x > x_top) = Φ̄(x_top/σ), so M_Q = (1 − Φ̄)^{T−1} (taken low).
    let q_b = exp(super::gauss::ln_phi_bar(x_top / sigma)) * (1.0 + MASS_MARGIN);
    let mq = exp((t - 1.0) * ln_1p(-q_b)) * (1.0 - 1e-12);
    let x_max = x_with_tail(q, sigma, ln(FAR_SHARE * delta / t));
    let small = Small {
        q,
        sigma,
        t,
        floor: ln_1p(-q),
        l_top,
        x_top,
        l_max: loss_remove(q, sigma, x_max).max(l_top),
        r3,
        mq,
        mp: exp((t - 1.0) * ln_1p(-p_b)) * (1.0 - 1e-12),
        mp_hi: exp((t - 1.0) * ln_1p(-p_b * (1.0 - 3.0 * MASS_MARGIN))) * (1.0 + 1e-12),
        p_b,
        add_top: -t * ln_1p(-q),
        big: vec![(l_top * (1.0 - 1e-12) - 1e-18, t * q_b)],
        comps: Vec::new(),
        revs: Vec::new(),
        max_bins: MAX_BINS,
    };
    // The small pair's composed mean and spread (untilted): bins a BIN_SHARE-th of the spread,
    // H levels off 12 spreads below the mean.
    let (m0, v0) = lat.untilted_moments();
    let s0 = v0.sqrt();
    let (dd, flat) = (s0 / BIN_SHARE, m0 - 12.0 * s0);
    Ok(Setup {
        small,
        lat,
        dd,
        flat,
        m0,
        s0,
    })
}

/// [`bracket`] with the small pair on a lattice of spacing `d`: the remove pair's bracket, an
/// upper end for the add pair's ε (at most `known`, one found before: the add pair is composed
/// only while its upper end is above the remove pair's), and the work its first reversed and
/// forward compositions took.
fn on_lattice(
    run: Run,
    delta: f64,
    (cap, cube): (f64, bool),
    d: f64,
    known: f64,
    w: &Work,
) -> Result<(Bracket, f64, f64), Error> {
    let spent = Error::PldBudget { reason: WORK_SPENT };
    let Setup {
        mut small,
        lat,
        dd,
        flat,
        m0,
        s0,
    } = setup(run, delta, (cap, cube), d, w)?;
    // First a composition tilted a spread above the mean (the k = 1 term reads H near it),
    // and the reversed one for reads below the windows; then, while the bracket is wide, one
    // tilted at its upper end (the k = 0 term reads H at ε, far out where ε is decided by
    // the big part).
    let mut lambda = lat.tilt_for(m0 + s0, 1.0, w);
    let start = w.left();
    small.revs.extend(
        lat.ladder_reversed(lat.tilt_reversed(-flat, 1.0, w), w)
            .ok(),
    );
    // The square-root rule's small pair, whose reversed composition already spent the call,
    // where the cube-root rule's is there to try: that one, at once.
    let (q, sigma, t, _) = run;
    if small.revs.is_empty() && !cube && two_rules((q, sigma, t), delta, cap) {
        return Err(spent);
    }
    let mut best: Option<(f64, f64)> = None;
    let (mut cost, mut forward) = (0.0, 0.0);
    for _ in 0..MAX_TILTS {
        // A further tilt costs about what the first did: not begun without that much left.
        if best.is_some() && w.left() < forward {
            break;
        }
        let before = w.left();
        let c = match lat.compose_lowering_after(lambda, w) {
            Ok(c) => c,
            Err(_) if best.is_some() => break,
            Err(e) => return Err(e),
        };
        if best.is_none() {
            forward = before - w.left();
            cost = start - w.left();
        }
        let (center, spread) = (c.center, c.spread);
        small.comps.push(c);
        let Some((l, u)) = small.solve(delta, dd, flat, cap, w) else {
            break;
        };
        let (l, u) = match best {
            Some((bl, bu)) => (l.max(bl), u.min(bu)),
            None => (l, u),
        };
        super::overlap(u, l)?;
        best = Some((l, u));
        if meets_rule(l, u) {
            break;
        }
        let next = lat.tilt_for(u, lambda.max(1.0), w);
        if (u - center).abs() <= 3.0 * spread || (next - lambda).abs() <= 1e-3 * lambda {
            break;
        }
        lambda = next;
    }
    let (mut lower, mut upper) = best.ok_or(spent)?;
    // Finer bins where they set the width: H read at a bin's ends moves ε by about a bin, and
    // the compositions in hand serve any bins (on a budget of their own: the reads cost
    // READ_WORK a bin). At q = 4.692e-8, σ = 0.405, T = 5.6·10⁸, δ = 1.36e-5 the bins were
    // 5.8e-5 wide and the bracket [0.104692, 0.104825] (2.3 bins); neither the halved spacing
    // nor a second tilt narrowed it, and on bins a quarter as wide it is [0.104709, 0.104804].
    let (mut fine, left) = (dd, w.left());
    while !meets_rule(lower, upper) {
        let now = small.fine_part(upper, fine, flat).1;
        if upper - lower > BINS_SET * now
            || small.fine_part(upper, fine / FINER, flat).1 >= 0.99 * now
        {
            break;
        }
        fine /= FINER;
        w.budget(FINE_WORK);
        let Some((l, u)) = small.solve_within(delta, fine, flat, (lower, upper), w) else {
            break;
        };
        (lower, upper) = (lower.max(l), upper.min(u));
        super::overlap(upper, lower)?;
    }
    // (The add pair's compositions on what the call had left before.)
    w.budget(left);
    // The add pair: from the reversed composition at hand, then one tilted at the remove pair's
    // upper end where that does not rule it out (the answer is the larger of the two).
    let mut add = small.add_upper(delta).min(known);
    if add > upper && small.bin_big(s0, w) {
        add = add.min(small.add_upper(delta));
    }
    let mut aim = upper;
    for _ in 0..3 {
        if add <= upper {
            break;
        }
        let Ok(r) = lat.ladder_reversed(lat.tilt_reversed(aim, 1.0, w), w) else {
            break;
        };
        small.revs.push(r);
        add = add.min(small.add_upper(delta));
        aim = add;
    }
    Ok((Bracket { upper, lower }, add, cost))
}

#[cfg(test)]
mod tests;
