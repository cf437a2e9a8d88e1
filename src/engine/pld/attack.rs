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
