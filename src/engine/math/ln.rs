//! ln of many arguments at once: `libm::log`'s bits, natively four at a time in AVX2
//! registers where the CPU has them.
//!
//! A lattice takes the log of every point's mass (both lattices' points, and the ratio of
//! every bin's masses): `libm::log` (FreeBSD's e_log.c) reduces x to 2^k·(1 + f) with
//! √2/2 ≤ 1 + f < √2 by integer operations on its high word, then evaluates a fixed
//! polynomial in s = f/(2 + f). The lanes below carry out those same operations in the same
//! order (k built in integer lanes and made a double exactly, no fused multiply-add), so each
//! lane is the scalar call's result bit for bit (the numbers stay those of the wasm, which
//! calls `libm::log`). Groups of four normal, positive, finite arguments take the lanes; any
//! other group (a zero, a subnormal, a negative number, ∞ or NaN among them) is four scalar
//! calls (`tests::the_avx2_logs_are_libm_s_bits`).

/// `w[i] ← libm::log(w[i])` for every i.
pub fn ln_each(w: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { lanes::ln_each_avx2(w) };
        return;
    }
    ln_each_plain(w);
}

#[inline(always)]
fn ln_each_plain(w: &mut [f64]) {
    for x in w.iter_mut() {
        *x = libm::log(*x);
    }
}

/// The lanes and libm's constants they read (x86-64 only).
#[cfg(target_arch = "x86_64")]
mod lanes {
    use super::ln_each_plain;

    // libm's log (FreeBSD's e_log.c); each constant by its bits.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    const LG1: f64 = f64::from_bits(0x3fe5_5555_5555_5593);
    const LG2: f64 = f64::from_bits(0x3fd9_9999_9997_fa04);
    const LG3: f64 = f64::from_bits(0x3fd2_4924_9422_9359);
    const LG4: f64 = f64::from_bits(0x3fcc_71c5_1d8e_78af);
    const LG5: f64 = f64::from_bits(0x3fc7_4664_96cb_03de);
    const LG6: f64 = f64::from_bits(0x3fc3_9a09_d078_c69f);
    const LG7: f64 = f64::from_bits(0x3fc2_f112_df3e_5244);
    /// 1.5·2⁵²: an integer |k| < 2⁵¹ added to its bits is the double 1.5·2⁵² + k.
    const MAGIC: f64 = 6_755_399_441_055_744.0;

    /// [`ln_each_plain`] four lanes at a time (see the module docs).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn ln_each_avx2(w: &mut [f64]) {
        use std::arch::x86_64::*;
        let set = |v: f64| _mm256_set1_pd(v);
        let int = |v: i64| _mm256_set1_epi64x(v);
        let mut chunks = w.chunks_exact_mut(4);
        for c in &mut chunks {
            let x = _mm256_loadu_pd(c.as_ptr());
            let normal = _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(x, set(f64::MIN_POSITIVE)),
                _mm256_cmp_pd::<_CMP_LT_OQ>(x, set(f64::INFINITY)),
            );
            if _mm256_movemask_pd(normal) != 0b1111 {
                ln_each_plain(c);
                continue;
            }
            // hx += 0x3ff00000 − 0x3fe6a09e; k = (hx >> 20) − 0x3ff;
            // hx = (hx & 0xfffff) + 0x3fe6a09e; x = hx:low word.
            let ui = _mm256_castpd_si256(x);
            let hx = _mm256_add_epi64(_mm256_srli_epi64::<32>(ui), int(0x3ff0_0000 - 0x3fe6_a09e));
            let k = _mm256_sub_epi64(_mm256_srli_epi64::<20>(hx), int(0x3ff));
            let hx = _mm256_add_epi64(_mm256_and_si256(hx, int(0x000f_ffff)), int(0x3fe6_a09e));
            let low = _mm256_and_si256(ui, int(0xffff_ffff));
            let xr = _mm256_castsi256_pd(_mm256_or_si256(_mm256_slli_epi64::<32>(hx), low));
            // k as a double, exactly: (1.5·2⁵² + k) − 1.5·2⁵².
            let dk = _mm256_sub_pd(
                _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(set(MAGIC)), k)),
                set(MAGIC),
            );
            let f = _mm256_sub_pd(xr, set(1.0));
            let hfsq = _mm256_mul_pd(_mm256_mul_pd(set(0.5), f), f);
            let s = _mm256_div_pd(f, _mm256_add_pd(set(2.0), f));
            let z = _mm256_mul_pd(s, s);
            let ww = _mm256_mul_pd(z, z);
            // t1 = w(LG2 + w(LG4 + w·LG6)), t2 = z(LG1 + w(LG3 + w(LG5 + w·LG7))).
            let t1 = _mm256_add_pd(set(LG4), _mm256_mul_pd(ww, set(LG6)));
            let t1 = _mm256_mul_pd(ww, _mm256_add_pd(set(LG2), _mm256_mul_pd(ww, t1)));
            let t2 = _mm256_add_pd(set(LG5), _mm256_mul_pd(ww, set(LG7)));
            let t2 = _mm256_add_pd(set(LG3), _mm256_mul_pd(ww, t2));
            let t2 = _mm256_mul_pd(z, _mm256_add_pd(set(LG1), _mm256_mul_pd(ww, t2)));
            let r = _mm256_add_pd(t2, t1);
            // s(hfsq + R) + dk·ln2_lo − hfsq + f + dk·ln2_hi, left to right.
            let v = _mm256_mul_pd(s, _mm256_add_pd(hfsq, r));
            let v = _mm256_add_pd(v, _mm256_mul_pd(dk, set(LN2_LO)));
            let v = _mm256_add_pd(_mm256_sub_pd(v, hfsq), f);
            let v = _mm256_add_pd(v, _mm256_mul_pd(dk, set(LN2_HI)));
            _mm256_storeu_pd(c.as_mut_ptr(), v);
        }
        ln_each_plain(chunks.into_remainder());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`ln_each`] against `libm::log` one value at a time, bit for bit, on 2·10⁶ values:
    /// masses from 1e-300 to 1, losses' ratios near 1 (each side by a few ulps), exponents
    /// across the whole normal range, the smallest normal and the largest finite number,
    /// subnormals, ±0, negative numbers, ±∞ and NaN, groups that mix them, and every length's
    /// remainder. (Fails with any operation of the lanes reordered.)
    #[test]
    fn the_avx2_logs_are_libm_s_bits() {
        let mut next = crate::engine::math::uniform(0x51_7cc1_b727_220a);
        let mut normal = 0usize;
        for round in 0..2000 {
            let len = 1000 + round % 7;
            let w: Vec<f64> = (0..len)
                .map(|i| match (i / 4 + round) % 29 {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    2 => -next(),
                    3 => 0.0,
                    4 => f64::MIN_POSITIVE * next(),
                    5 => {
                        let e = [1.0, f64::MIN_POSITIVE, f64::MAX][(i + round) % 3];
                        let ulps = (16.0 * next()) as i64 - 8;
                        f64::from_bits((e.to_bits() as i64 + ulps).max(1) as u64)
                    }
                    6..=9 => 1.0 + 1e-3 * (next() - 0.5),
                    10..=14 => crate::engine::math::exp(-690.0 * next()),
                    _ => f64::from_bits(
                        (0x0010_0000_0000_0000 + (next() * 0x7fd0_0000_0000_0000u64 as f64) as u64)
                            .min(f64::MAX.to_bits()),
                    ),
                })
                .collect();
            let mut got = w.clone();
            ln_each(&mut got);
            for (x, g) in w.iter().zip(&got) {
                let want = libm::log(*x);
                assert!(
                    g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                    "ln({x:e}) = {g:e}, libm {want:e}"
                );
                normal += usize::from(x.is_normal() && *x > 0.0);
            }
        }
        assert!(normal > 1_000_000, "only {normal} normal arguments");
    }
}
