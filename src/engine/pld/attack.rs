//! The attack profile and the certified TPR bound at an FPR.

use super::*;
use crate::engine::math::exp;

/// The privacy profile that attack bounds are read from, independent of any displayed
/// range: 201 points on [0, 1.2·ε_RDP(δ = 1e-12)] (exact RDP's ε is an upper bound on the
/// tight one and costs ~1 ms instead of a PLD solve; capped at 10³).
pub fn attack_profile(sgm: Sgm, steps: u64) -> Result<Vec<ProfilePoint>, Error> {
    let top = attack_top(sgm, steps);
    let grid: Vec<f64> = (0..=200).map(|i| top * i as f64 / 200.0).collect();
    profile(sgm, steps, &grid)
}

/// A privacy profile at `eps` (ascending, as [`profile`] takes it) and the attack profile
/// ([`attack_profile`]) of the same run. Where the two ranges' tops are within a factor 1.5 of
/// each other (the page's charts on a typical run: MNIST's are 5.95 and 5.24) both are read
/// from one profile on the union of the two grids — one composition where there were two
/// (MNIST: 55 ms where the two took 120, natively). Every point is certified either way; a
/// point's bracket can differ from the one a call of its own gives (the composition is
/// aimed at the whole range it serves: MNIST's attack bounds rose by 5e-6 of themselves,
/// CIFAR's profile by at most 4e-4 of δ, its brackets 4.5 % wider at the median): the page's
/// charts read it; the command line's `profile` keeps a call each. Where the tops
/// are further apart (q = 1e-3, σ = 0.8, T = 1000: 0.76 and 3.9) a profile aimed at the
/// wider range is looser at the narrow one's small δ, and each is its own call. Each part
/// stands alone: where the union fails, each is tried on its own.
pub fn profile_and_attack(
    sgm: Sgm,
    steps: u64,
    eps: &[f64],
) -> (
    Result<Vec<ProfilePoint>, Error>,
    Result<Vec<ProfilePoint>, Error>,
) {
    let top = attack_top(sgm, steps);
    let grid: Vec<f64> = (0..=200).map(|i| top * i as f64 / 200.0).collect();
    if read_together(eps, top) {
        let mut union: Vec<f64> = eps.iter().chain(&grid).copied().collect();
        union.sort_by(f64::total_cmp);
        union.dedup();
        if let Ok(all) = profile(sgm, steps, &union) {
            let pick = |want: &[f64]| -> Vec<ProfilePoint> {
                let mut out = Vec::with_capacity(want.len());
                let mut it = all.iter();
                for &e in want {
                    if let Some(p) = it.by_ref().find(|p| p.epsilon == e) {
                        out.push(*p);
                    }
                }
                out
            };
            let (a, b) = (pick(eps), pick(&grid));
            if a.len() == eps.len() && b.len() == grid.len() {
                return (Ok(a), Ok(b));
            }
        }
    }
    (profile(sgm, steps, eps), profile(sgm, steps, &grid))
}

/// Whether [`profile_and_attack`] reads the profile at `eps` and the attack profile (whose
/// top is `top`, [`attack_top`]) from one composition: their tops within a factor 1.5 and
/// `eps` ascending.
fn read_together(eps: &[f64], top: f64) -> bool {
    let shown = eps.last().copied().unwrap_or(0.0);
    let near = shown > 0.0 && (shown / top).max(top / shown) <= 1.5;
    near && eps.windows(2).all(|w| w[0] < w[1])
}

/// [`profile_and_attack`] reads the profile at `eps` and the attack profile of the run from
/// one composition (else each is [`profile`]'s own call: the attack profile's is then
/// [`attack_profile`]'s, to the bit).
pub fn attack_read_together(sgm: Sgm, steps: u64, eps: &[f64]) -> bool {
    read_together(eps, attack_top(sgm, steps))
}

/// The top of the attack profiles' ε range: 1.2·ε_RDP(δ = 1e-12), at most 1.2·10³.
pub(crate) fn attack_top(sgm: Sgm, steps: u64) -> f64 {
    1.2 * Run::with_default_orders(sgm, steps)
        .and_then(|r| r.epsilon(1e-12, Conversion::Improved))
        .map(|o| o.value)
        .ok()
        .filter(|e| e.is_finite() && *e > 0.0)
        .unwrap_or(20.0)
        .min(1e3)
}

/// The membership-inference bound from a privacy profile: an attacker whose
/// false-positive rate is `fpr` has true-positive rate at most
/// min over ε of min(1, e^ε·fpr + δ(ε), 1 − e^{−ε}(1 − δ(ε) − fpr))
/// (Kairouz, Oh, Viswanath, ICML 2015, Thm 2.1; Dong, Roth, Su, "Gaussian Differential
/// Privacy", JRSS-B 2022, Prop. 2.5), using the certified upper δ at each ε.
pub fn attack_tpr(profile: &[ProfilePoint], fpr: f64) -> Result<f64, Error> {
    if !(fpr.is_finite() && (0.0..=1.0).contains(&fpr)) {
        return Err(Error::Rate(fpr));
    }
    let mut best: f64 = 1.0;
    for p in profile {
        let (e, d) = (p.epsilon, p.delta.upper);
        let a = exp(e) * fpr + d;
        let b = 1.0 - exp(-e) * (1.0 - d - fpr);
        best = best.min(a).min(b);
    }
    Ok(best.clamp(fpr, 1.0))
}
