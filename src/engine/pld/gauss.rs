//! Gaussian tail probabilities in log space, and interval masses without cancellation.

use crate::engine::math::{erfc_each, exp, exp_m1, ln, ln_1p};
use crate::engine::search;

/// The unit roundoff of f64, u = 2⁻⁵³ (every rounding bound of the PLD modules is in it).
pub(crate) const U: f64 = f64::EPSILON / 2.0;

/// How many tails [`Tails::each`] takes at a time.
pub(crate) const EACH: usize = 256;

/// ln Φ̄(z) = ln P(N(0,1) > z) for every z (−∞ at z = +∞, 0 at z = −∞).
///
/// * z < 0: ln1p(−Φ̄(−z)), Φ̄ from `libm::erfc` (relative error ≲ 1e-15).
/// * 0 ≤ z < 35: ln(½·erfc(z/√2)); the rounding of z/√2 moves the result by at most
///   z²·2⁻⁵³ ≈ 1.4e-13 absolute at z = 35.
/// * z ≥ 35 (erfc would be near underflow): ln Φ̄(z) = −z²/2 − ln(z√(2π)) + ln(z·R(z)),
///   R the Mills ratio by its continued fraction 1/(z+1/(z+2/(z+3/(z+…)))) (Abramowitz &
///   Stegun 26.2.14), which at z ≥ 35 converges to full precision within 30 terms.
pub(crate) fn ln_phi_bar(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    if z == f64::INFINITY {
        return f64::NEG_INFINITY;
    }
    if z < 0.0 {
        return ln_1p(-0.5 * libm::erfc(-z * std::f64::consts::FRAC_1_SQRT_2));
    }
    if z < 35.0 {
        return ln(0.5 * libm::erfc(z * std::f64::consts::FRAC_1_SQRT_2));
    }
    let mut cf = z;
    for k in (1..=30).rev() {
        cf = z + k as f64 / cf;
    }
    // R(z) = 1/cf; z·R(z) = z/cf.
    -0.5 * z * z - ln(z) - 0.5 * ln(2.0 * std::f64::consts::PI) + ln(z / cf)
}

/// The smaller Gaussian tail at one standardized point z: min(Φ̄(z), Φ(z)) = Φ̄(|z|),
/// linear and in logs. Interval masses only ever need that one (see [`ln_mass`]), so the
/// larger tail's ln1p is never computed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tails {
    z: f64,
    /// Φ̄(|z|) (0 where it underflows).
    small: f64,
    /// ln Φ̄(|z|) where |z| ≥ 35 (the continued fraction's; `small` may underflow there);
    /// NaN inside, where it is `small.ln()` and is only taken when asked for.
    ln_far: f64,
}

impl Tails {
    pub(crate) fn at(z: f64) -> Tails {
        // Within |z| < 35 one erfc, exactly as `ln_phi_bar` computes it (Φ̄ ≥ 1e-268, a
        // normal number); beyond, its continued fraction. At ±∞ the tail is exactly 0, and
        // held as a near one, so that a bin reaching to −∞ (a lattice's first) has linear
        // masses: its connect-the-dots split is then taken from the mixture's components
        // (`discretize`'s `edge_excess`), not from ΔP and ΔQ with relative error ~u/Δ (at
        // q = 2.1e-9, σ = 0.51, Δ = 9e-10 that first bin added 6.3e-8 of P to every step, and
        // 5.8·10⁸ steps multiplied the composed upper measure by e^{37}).
        if z.is_infinite() {
            Tails {
                z,
                small: 0.0,
                ln_far: f64::NAN,
            }
        } else if z.abs() < 35.0 {
            let small = 0.5 * libm::erfc(z.abs() * std::f64::consts::FRAC_1_SQRT_2);
            Tails {
                z,
                small,
                ln_far: f64::NAN,
            }
        } else {
            let l = ln_phi_bar(z.abs());
            Tails {
                z,
                small: exp(l),
                ln_far: l,
            }
        }
    }

    /// [`Tails::at`] of each z into `out` (as long as `zs`): the erfc of every z within
    /// |z| < 35 taken [`EACH`] at a time by [`erfc_each`] (the same bits; natively four at a
    /// time), its arguments in a buffer on the stack (fresh heap buffers of a long lattice's
    /// size cost their page faults, more than the erfcs saved).
    pub(crate) fn each(zs: &[f64], out: &mut [Tails]) {
        debug_assert_eq!(zs.len(), out.len());
        let mut e = [0.0; EACH];
        for (zs, out) in zs.chunks(EACH).zip(out.chunks_mut(EACH)) {
            let e = &mut e[..zs.len()];
            for (a, z) in e.iter_mut().zip(zs) {
                *a = z.abs() * std::f64::consts::FRAC_1_SQRT_2;
            }
            erfc_each(e);
            for ((o, &z), &e) in out.iter_mut().zip(zs).zip(e.iter()) {
                *o = if z.abs() < 35.0 {
                    Tails {
                        z,
                        small: 0.5 * e,
                        ln_far: f64::NAN,
                    }
                } else {
                    Tails::at(z)
                };
            }
        }
    }

    /// ln Φ̄(|z|).
    fn ln_small(&self) -> f64 {
        if self.ln_far.is_nan() {
            ln(self.small)
        } else {
            self.ln_far
        }
    }

    /// Whether Φ̄(|z|) is held to full relative precision in `small` (|z| < 35).
    fn near(&self) -> bool {
        self.ln_far.is_nan()
    }
}

/// Φ(b) − Φ(a) for a ≤ b from their tails, linear, when both are near (|z| < 35): the
/// same differences as [`ln_mass`] takes (of the tails ≤ ½), without the logs. None when
/// either is far (its tail may underflow: use `ln_mass`).
pub(crate) fn mass(a: Tails, b: Tails) -> Option<f64> {
    if !(a.near() && b.near()) {
        return None;
    }
    // (A difference that rounds below 0 — erfc need not be monotone to the last ulp —
    // is 0.)
    Some(if a.z >= 0.0 {
        (a.small - b.small).max(0.0)
    } else if b.z <= 0.0 {
        (b.small - a.small).max(0.0)
    } else {
        (1.0 - (b.small + a.small)).max(0.0)
    })
}

/// A bound on the absolute error of [`mass`]`(a, b)`: each tail (one erfc) within 4 ulps (8u)
/// of Φ̄, and the difference (or 1 minus the sum) rounded once; taken as 16u of their sum.
pub(crate) fn mass_err(a: Tails, b: Tails) -> f64 {
    let straddle = if a.z < 0.0 && b.z > 0.0 { 1.0 } else { 0.0 };
    16.0 * U * (a.small + b.small + straddle)
}

/// ln(a·b) where one side may be ln 0 = −∞ (avoids −∞ + ∞).
fn ln_diff_from(l_big: f64, l_small: f64) -> f64 {
    if l_big == f64::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    l_big + ln(-exp_m1(l_small - l_big))
}

/// ln(Φ(b) − Φ(a)) for a ≤ b from their tails: the difference is taken between the two
/// tails that are ≤ ½ (or 1 minus both outer tails), so no digits are lost to Φ ≈ 1.
pub(crate) fn ln_mass(a: Tails, b: Tails) -> f64 {
    if a.z >= 0.0 {
        // 0 ≤ a ≤ b: Φ̄(a) − Φ̄(b).
        ln_diff_from(a.ln_small(), b.ln_small())
    } else if b.z <= 0.0 {
        // a ≤ b ≤ 0: Φ(b) − Φ(a).
        ln_diff_from(b.ln_small(), a.ln_small())
    } else {
        // a < 0 < b: 1 − Φ̄(b) − Φ(a), both outer tails < ½.
        ln_1p(-(b.small + a.small))
    }
}

/// ln(eˣ + eʸ) with −∞ allowed.
pub(crate) fn ln_add(x: f64, y: f64) -> f64 {
    let (hi, lo) = if x > y { (x, y) } else { (y, x) };
    if lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + ln_1p(exp(lo - hi))
}

/// ln(eˣ − eʸ) for y ≤ x (−∞ when equal).
pub(crate) fn ln_sub(x: f64, y: f64) -> f64 {
    ln_diff_from(x, y)
}

/// δ(ε) of the Gaussian mechanism with μ = sensitivity/σ (Balle, Wang, "Improving the
/// Gaussian Mechanism for Differential Privacy", ICML 2018, Thm 8):
/// δ = Φ(μ/2 − ε/μ) − e^ε·Φ(−μ/2 − ε/μ), in logs: (ln of the first term, ln of the second).
fn gauss_terms(mu: f64, eps: f64) -> (f64, f64) {
    (
        ln_phi_bar(eps / mu - 0.5 * mu),
        eps + ln_phi_bar(eps / mu + 0.5 * mu),
    )
}

/// Relative accuracy claimed for the two terms (ln Φ̄ to ≲ 1.5e-13 absolute, see
/// [`ln_phi_bar`], plus the rounding of ε/μ ± μ/2), with a margin.
const GAUSS_REL: f64 = 1e-11;

/// A certified bracket on δ(ε) of the Gaussian mechanism.
pub(crate) fn delta_bracket(mu: f64, eps: f64) -> crate::engine::pld::Bracket {
    let (a, b) = gauss_terms(mu, eps);
    // Upper: the first term rounded up, the second down; lower the reverse.
    let up = exp(a + GAUSS_REL) - exp(b - GAUSS_REL);
    let lo = exp(a - GAUSS_REL) - exp(b + GAUSS_REL);
    crate::engine::pld::Bracket {
        upper: up.clamp(0.0, 1.0),
        lower: lo.clamp(0.0, 1.0).min(up.clamp(0.0, 1.0)),
    }
}

/// A certified bracket on ε(δ) of the Gaussian mechanism: δ(ε) decreases in ε, so any ε
/// whose certified δ upper is ≤ δ is an upper bound on ε, and any whose certified lower
/// is > δ a lower bound; bisection keeps one of each.
pub(crate) fn epsilon_bracket(mu: f64, delta: f64) -> crate::engine::pld::Bracket {
    use crate::engine::pld::Bracket;
    let d = |e: f64| delta_bracket(mu, e);
    if d(0.0).upper <= delta {
        return Bracket {
            upper: 0.0,
            lower: 0.0,
        };
    }
    // ε ≤ μ²/2 + μ·z with Φ̄(z) ≤ δ: grow until the upper δ is ≤ δ.
    let mut hi = 0.5 * mu * mu + mu + 1.0;
    while d(hi).upper > delta {
        hi *= 2.0;
    }
    // Bisection keeping δ above at the low end and not at the high end (δ decreases in ε).
    let bisect = |b: f64, above: &dyn Fn(f64) -> bool| {
        search::bisect((0.0, b), above, 200, |a, b| b - a <= 1e-15 * b)
    };
    let upper = bisect(hi, &|e| d(e).upper > delta).1;
    let lower = if d(0.0).lower <= delta {
        0.0
    } else {
        bisect(upper, &|e| d(e).lower > delta).0
    };
    Bracket { upper, lower }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_match_known_values() {
        // Φ̄(0) = ½; Φ̄(1) = 0.15865525393145705 (A&S Table 26.1); Φ̄(10) = 7.619853024160527e-24.
        assert!((ln_phi_bar(0.0) - ln(0.5f64)).abs() < 1e-16);
        assert!((exp(ln_phi_bar(1.0)) / 0.158_655_253_931_457_05 - 1.0).abs() < 1e-14);
        assert!((exp(ln_phi_bar(10.0)) / 7.619_853_024_160_527e-24 - 1.0).abs() < 1e-13);
        // Both sides of the switch to the continued fraction at z = 35, and far out
        // (ln Φ̄ by mpmath at 30 digits: z = 34, 35, 100).
        for (z, want) in [
            (34.0, -582.446_162_246_871_7),
            (35.0, -616.975_101_261_922_5),
            (100.0, -5_005.524_208_694_205),
        ] {
            let got = ln_phi_bar(z);
            assert!(((got - want) / want).abs() < 1e-15, "{z}: {got} vs {want}");
        }
        assert!((exp(ln_phi_bar(-3.0)) - (1.0 - 0.001_349_898_031_630_094_6)).abs() < 1e-15);
    }

    #[test]
    fn interval_masses_agree_with_both_tails_in_logs() {
        // The masses from the smaller tail alone equal the textbook form built from both
        // tails' logs (ln Φ̄ at z and at −z), on both sides of 0 and of the switch at
        // |z| = 35, for narrow and wide intervals.
        let reference = |a: f64, b: f64| -> f64 {
            let (au, al) = (ln_phi_bar(a), ln_phi_bar(-a));
            let (bu, bl) = (ln_phi_bar(b), ln_phi_bar(-b));
            let half = -std::f64::consts::LN_2;
            if au <= half {
                ln_diff_from(au, bu)
            } else if bl <= half {
                ln_diff_from(bl, al)
            } else {
                ln_1p(-(exp(bu) + exp(al)))
            }
        };
        let mut z = -40.0;
        while z <= 40.0 {
            for w in [1e-9, 3e-4, 0.05, 2.0, 30.0] {
                let (a, b) = (z, z + w);
                let got = ln_mass(Tails::at(a), Tails::at(b));
                let want = reference(a, b);
                if want == f64::NEG_INFINITY {
                    assert_eq!(got, want, "[{a}, {b}]");
                } else {
                    assert!(
                        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                        "[{a}, {b}]: {got} vs {want}"
                    );
                }
            }
            z += 0.0137;
        }
    }

    #[test]
    fn linear_masses_agree_with_the_logs() {
        // Where both ends are near (|z| < 35) the linear mass is the log one's exp, to the
        // log form's own rounding: its difference of two logs of size |ln Φ̄| carries
        // ~ulp(|ln Φ̄|), which on a narrow interval far out (the logs differ by only
        // dl) is a relative error of ~ulp/dl — the linear form does not have it.
        let mut z: f64 = -34.9;
        while z <= 34.9 {
            for w in [1e-9, 3e-4, 0.05, 2.0] {
                let zb = (z + w).min(34.99);
                let (a, b) = (Tails::at(z), Tails::at(zb));
                let m = mass(a, b).unwrap();
                let l = ln_mass(a, b);
                if l == f64::NEG_INFINITY {
                    assert_eq!(m, 0.0);
                } else {
                    let (la, lb) = (a.ln_small(), b.ln_small());
                    let dl = (la - lb).abs();
                    let tol =
                        1e-12 * l.abs().max(1.0) + 8.0 * f64::EPSILON * la.abs().max(lb.abs()) / dl;
                    assert!(
                        (ln(m) - l).abs() <= tol,
                        "[{z}, +{w}]: {} vs {l} (tolerance {tol:e})",
                        ln(m)
                    );
                }
            }
            z += 0.0137;
        }
        assert!(mass(Tails::at(35.0), Tails::at(36.0)).is_none());
    }

    #[test]
    fn interval_masses_add_up() {
        let pts = [
            f64::NEG_INFINITY,
            -3.0,
            -0.1,
            0.0,
            0.2,
            4.0,
            40.0,
            f64::INFINITY,
        ];
        let mut total = 0.0;
        for w in pts.windows(2) {
            total += exp(ln_mass(Tails::at(w[0]), Tails::at(w[1])));
        }
        assert!((total - 1.0).abs() < 1e-15, "{total}");
    }
}
