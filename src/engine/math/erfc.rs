//! erfc of many arguments at once: `libm::erfc`'s bits, natively four at a time in AVX2
//! registers where the CPU has them.
//!
//! A per-step lattice takes two Gaussian tails at every bin boundary (one erfc each), and most
//! boundaries lie in the tails (a loss spacing that is uniform in ℓ is uniform in x there), where
//! `libm::erfc` (FreeBSD's) is a rational function of 1/x² and two calls of `libm::exp`:
//! ~34 ns, a sixth of MNIST's call. The lanes below carry out those same IEEE operations in the
//! same order — the rational functions by Horner's rule, `exp`'s argument reduction, its
//! polynomial and its division, a power of two built in integer lanes, no fused multiply-add —
//! so each lane is the scalar call's result bit for bit (the numbers stay those of the wasm,
//! which calls `libm::erfc`). Only groups of four whose arguments all lie in one branch of erfc
//! for 1.25 ≤ x < 26 take the lanes (there both exps are normal numbers and take the branches
//! the lanes implement, checked per group); every other group is four scalar calls
//! (`tests::the_avx2_erfcs_are_libm_s_bits`).

/// `w[i] ← libm::erfc(w[i])` for every i.
pub fn erfc_each(w: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { lanes::erfc_each_avx2(w) };
        return;
    }
    erfc_each_plain(w);
}

#[inline(always)]
fn erfc_each_plain(w: &mut [f64]) {
    for x in w.iter_mut() {
        *x = libm::erfc(*x);
    }
}

/// The lanes and libm's constants they read (x86-64 only).
#[cfg(target_arch = "x86_64")]
mod lanes {
    use super::erfc_each_plain;

    // libm's erfc (FreeBSD's s_erf.c) for 1.25 ≤ x < 1/0.35: erfc(x) = e^{−z²−0.5625}·e^{(z−x)(z+x) +
    // R(s)/S(s)}/x, s = 1/x², z = x with its low 32 bits cleared; from 1/0.35 on another R, S.
    // The branch point: the first double whose high word is 0x4006db6d.
    pub(super) const ERFC_SPLIT: f64 = f64::from_bits(0x4006_db6d_0000_0000);
    // (Each constant is libm's, by its bits.)
    const RA: [f64; 8] = [
        f64::from_bits(0xbf84_3412_600d_6435),
        f64::from_bits(0xbfe6_3416_e4ba_7360),
        f64::from_bits(0xc025_1e04_41b0_e726),
        f64::from_bits(0xc04f_300a_e4cb_a38d),
        f64::from_bits(0xc064_4cb1_8428_2266),
        f64::from_bits(0xc067_135c_ebcc_abb2),
        f64::from_bits(0xc054_5265_57e4_d2f2),
        f64::from_bits(0xc023_a0ef_c69a_c25c),
    ];
    const SA: [f64; 9] = [
        1.0,
        f64::from_bits(0x4033_a6b9_bd70_7687),
        f64::from_bits(0x4061_350c_526a_e721),
        f64::from_bits(0x407b_290d_d58a_1a71),
        f64::from_bits(0x4084_2b19_21ec_2868),
        f64::from_bits(0x407a_d021_5770_0314),
        f64::from_bits(0x405b_28a3_ee48_ae2c),
        f64::from_bits(0x401a_47ef_8e48_4a93),
        f64::from_bits(0xbfae_eff2_ee74_9a62),
    ];
    const RB: [f64; 7] = [
        f64::from_bits(0xbf84_3412_39e8_6f4a),
        f64::from_bits(0xbfe9_93ba_70c2_85de),
        f64::from_bits(0xc031_c209_555f_995a),
        f64::from_bits(0xc064_145d_43c5_ed98),
        f64::from_bits(0xc083_ec88_1375_f228),
        f64::from_bits(0xc090_0461_6a2e_5992),
        f64::from_bits(0xc07e_384e_9bdc_383f),
    ];
    const SB: [f64; 8] = [
        1.0,
        f64::from_bits(0x403e_568b_261d_5190),
        f64::from_bits(0x4074_5cae_221b_9f0a),
        f64::from_bits(0x4098_02eb_189d_5118),
        f64::from_bits(0x40a8_ffb7_688c_246a),
        f64::from_bits(0x40a3_f219_cedf_3be6),
        f64::from_bits(0x407d_a874_e79f_e763),
        f64::from_bits(0xc036_70e2_4271_2d62),
    ];
    // libm's exp (FreeBSD's e_exp.c).
    const LN2HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    const INVLN2: f64 = f64::from_bits(0x3ff7_1547_652b_82fe);
    const P: [f64; 5] = [
        f64::from_bits(0x3fc5_5555_5555_553e),
        f64::from_bits(0xbf66_c16c_16be_bd93),
        f64::from_bits(0x3f11_566a_af25_de2c),
        f64::from_bits(0xbebb_bd41_c5d2_6bf1),
        f64::from_bits(0x3e66_3769_72be_a4d0),
    ];
    const EXP_HALF: f64 = 0.5;
    // exp's unreduced branch: 2⁻²⁸ < |x| ≤ ½ln2 (high words above 0x3e300000, at most 0x3fd62e42).
    const EXP_NEAR_LO: f64 = f64::from_bits(0x3e30_0001_0000_0000);
    const EXP_NEAR_HI: f64 = f64::from_bits(0x3fd6_2e43_0000_0000);

    /// [`erfc_each_plain`] four lanes at a time (see the module docs).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn erfc_each_avx2(w: &mut [f64]) {
        use std::arch::x86_64::*;
        let set = |v: f64| _mm256_set1_pd(v);
        // Horner's rule from the top coefficient, as libm nests it: c₀ + s(c₁ + s(… + s·c_n)).
        let horner = |c: &[f64], s: __m256d| {
            let mut t = set(c[c.len() - 1]);
            for &k in c[..c.len() - 1].iter().rev() {
                t = _mm256_add_pd(set(k), _mm256_mul_pd(s, t));
            }
            t
        };
        // c = x − x²(P1 + x²(P2 + … + x²·P5)); then exp's 1 + (x·c/(2 − c) − lo + hi).
        let exp_poly = |x: __m256d, lo: __m256d, hi: __m256d| {
            let xx = _mm256_mul_pd(x, x);
            let c = _mm256_sub_pd(x, _mm256_mul_pd(xx, horner(&P, xx)));
            let q = _mm256_div_pd(_mm256_mul_pd(x, c), _mm256_sub_pd(set(2.0), c));
            _mm256_add_pd(set(1.0), _mm256_add_pd(_mm256_sub_pd(q, lo), hi))
        };
        let abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(i64::MAX));
        let high_word = _mm256_castsi256_pd(_mm256_set1_epi64x(-1i64 << 32));
        let mut chunks = w.chunks_exact_mut(4);
        for c in &mut chunks {
            let x = _mm256_loadu_pd(c.as_ptr());
            let inside = _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(x, set(1.25)),
                _mm256_cmp_pd::<_CMP_LT_OQ>(x, set(26.0)),
            );
            let near = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(x, set(ERFC_SPLIT)));
            if _mm256_movemask_pd(inside) != 0b1111 || (near != 0 && near != 0b1111) {
                erfc_each_plain(c);
                continue;
            }
            let s = _mm256_div_pd(set(1.0), _mm256_mul_pd(x, x));
            let (r, big_s) = if near != 0 {
                (horner(&RA, s), horner(&SA, s))
            } else {
                (horner(&RB, s), horner(&SB, s))
            };
            let z = _mm256_and_pd(x, high_word);
            // e^{−z·z − 0.5625}: exp's reduced branch (1.5·ln2 ≤ |a| < 708.39 for 1.25 ≤ z < 26),
            // k = (int)(a/ln2 − ½) truncated, then y·2^k with −1022 ≤ k < 0.
            let a = _mm256_sub_pd(
                _mm256_mul_pd(_mm256_sub_pd(_mm256_setzero_pd(), z), z),
                set(0.5625),
            );
            let k32 =
                _mm256_cvttpd_epi32(_mm256_sub_pd(_mm256_mul_pd(set(INVLN2), a), set(EXP_HALF)));
            let kd = _mm256_cvtepi32_pd(k32);
            let hi = _mm256_sub_pd(a, _mm256_mul_pd(kd, set(LN2HI)));
            let lo = _mm256_mul_pd(kd, set(LN2LO));
            let y = exp_poly(_mm256_sub_pd(hi, lo), lo, hi);
            let two_k = _mm256_castsi256_pd(_mm256_slli_epi64::<52>(_mm256_add_epi64(
                _mm256_cvtepi32_epi64(k32),
                _mm256_set1_epi64x(1023),
            )));
            let e1 = _mm256_mul_pd(y, two_k);
            // e^{(z − x)(z + x) + R/S}: exp's unreduced branch (hi = b, lo = 0), checked per lane.
            let b = _mm256_add_pd(
                _mm256_mul_pd(_mm256_sub_pd(z, x), _mm256_add_pd(z, x)),
                _mm256_div_pd(r, big_s),
            );
            let b_abs = _mm256_and_pd(b, abs_mask);
            let b_near = _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(b_abs, set(EXP_NEAR_LO)),
                _mm256_cmp_pd::<_CMP_LT_OQ>(b_abs, set(EXP_NEAR_HI)),
            );
            if _mm256_movemask_pd(b_near) != 0b1111 {
                erfc_each_plain(c);
                continue;
            }
            let e2 = exp_poly(b, _mm256_setzero_pd(), b);
            _mm256_storeu_pd(c.as_mut_ptr(), _mm256_div_pd(_mm256_mul_pd(e1, e2), x));
        }
        erfc_each_plain(chunks.into_remainder());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`erfc_each`] against `libm::erfc` one value at a time, bit for bit, on 2·10⁶ values:
    /// the lanes' range and both of its branches, the points where a branch changes (each side
    /// by a few ulps), below 1.25, beyond 26 into underflow, negative, ±∞ and NaN, groups that
    /// mix them, and every length's remainder. (Fails with any operation of the lanes
    /// reordered, or with this crate's `exp` in place of libm's.)
    #[test]
    fn the_avx2_erfcs_are_libm_s_bits() {
        let mut next = crate::engine::math::uniform(0x9e37_79b9_7f4a_7c15);
        let split = f64::from_bits(0x4006_db6d_0000_0000);
        let edges = [1.25, split, 26.0, 0.84375, 28.0];
        let mut lanes = 0usize;
        for round in 0..2000 {
            let len = 1000 + round % 7;
            let w: Vec<f64> = (0..len)
                .map(|i| match (i / 4 + round) % 23 {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    2 => -3.0 * next(),
                    3 => 1.25 * next(),
                    4 => 26.0 + 4.0 * next(),
                    5 | 6 => {
                        let e = edges[(i + round) % edges.len()];
                        let ulps = (16.0 * next()) as i64 - 8;
                        f64::from_bits((e.to_bits() as i64 + ulps) as u64)
                    }
                    7 => 1.25 + 24.75 * next(),
                    _ => 1.25 + (split - 1.25) * next() + (round % 2) as f64 * 10.0,
                })
                .collect();
            let mut got = w.clone();
            erfc_each(&mut got);
            for (x, g) in w.iter().zip(&got) {
                let want = libm::erfc(*x);
                assert!(
                    g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                    "erfc({x:e}) = {g:e}, libm {want:e}"
                );
                lanes += usize::from((1.25..26.0).contains(x));
            }
        }
        assert!(
            lanes > 1_000_000,
            "only {lanes} arguments in the lanes' range"
        );
    }
}
