//! The ladder's convolutions: spectra, the FFT product with its rounding bands, and the
//! direct product of short parts.

use super::*;
use crate::engine::math::{hypot, log2};
use crate::engine::pld::compose::Work;

/// The spectrum (length n) of w(i)·(up + i·lo) of `m`, and that vector's ‖·‖₂.
pub(super) fn spectrum(m: &Part, n: usize, w: impl Fn(usize) -> f64) -> (Vec<Complex<f64>>, f64) {
    let mut buf = take_complex(n);
    let mut l2 = 0.0;
    for (i, (&a, &b)) in m.up.iter().zip(&m.lo).enumerate() {
        let wi = w(i);
        if wi != 0.0 {
            buf[i] = Complex::new(a * wi, b * wi);
            l2 += (a * a + b * b) * wi * wi;
        }
    }
    plans(n).0.process(&mut buf);
    (buf, l2.sqrt())
}

/// The spectra of the real and imaginary inputs from the spectrum of up + i·lo.
pub(super) fn split(z: &[Complex<f64>], k: usize) -> (Complex<f64>, Complex<f64>) {
    let n = z.len();
    let a = z[k];
    // (z[(n − k) mod n], without the division.)
    let c = z[if k == 0 { 0 } else { n - k }].conj();
    ((a + c) * 0.5, (a - c) * Complex::new(0.0, -0.5))
}

/// The spectra of two factors.
pub(super) type SpectraPair<'a> = (&'a [Complex<f64>], &'a [Complex<f64>]);

/// Σ over the pairs of (a_up∗b_up) + i·(a_lo∗b_lo), from the pairs' spectra (length n):
/// the first `len` values, and the bound on each one's rounding error (module docs,
/// "Rounding"): 8η·Σ‖a‖₂‖b‖₂, η = 16u·log₂n.
pub(super) fn inverse(pairs: &[SpectraPair], norms: f64, len: usize) -> (Vec<Complex<f64>>, f64) {
    let n = pairs[0].0.len();
    let mut z = take_complex(n);
    for (k, zk) in z.iter_mut().enumerate() {
        *zk = pairs.iter().fold(Complex::new(0.0, 0.0), |acc, (x, y)| {
            let (xu, xl) = split(x, k);
            let (yu, yl) = split(y, k);
            acc + xu * yu + Complex::new(0.0, 1.0) * (xl * yl)
        });
    }
    plans(n).1.process(&mut z);
    let scale = 1.0 / n as f64;
    z.truncate(len);
    z.iter_mut().for_each(|v| *v *= scale);
    (z, 128.0 * U * log2(n as f64) * norms)
}

/// The central run of `m`: the indices [a, b) from the first to the last value of `up` or
/// `lo` at least BAND of its maximum.
pub(super) fn central(m: &Part) -> (usize, usize) {
    let top = |v: &[f64]| v.iter().cloned().fold(0.0f64, f64::max) * BAND;
    let (tu, tl) = (top(&m.up), top(&m.lo));
    let big = |i: &usize| m.up[*i] >= tu || m.lo[*i] >= tl;
    let a = (0..m.len()).find(big).unwrap_or(0);
    let b = (0..m.len()).rev().find(big).map_or(m.len(), |b| b + 1);
    (a, b.max(a + 1))
}

/// Values below this share of a factor's maximum form its flanks (see [`fft_conv`]).
pub(super) const BAND: f64 = 1e-6;

/// The share of a product's tilted mass its FFT's rounding floor may add, over the number of
/// times the product is used in the T-fold composition (about 100 products: ≲ 1e-5 of δ).
pub(crate) const FLOOR_SHARE: f64 = 1e-6;

/// x∗y (same lattice), `up` rounded up and `lo` down at every point (module docs,
/// "Rounding"); its FFT's floor may add `share` of its mass (FLOOR_SHARE, or less where δ's
/// tilted share is small, over the number of times the product is used). An FFT's rounding
/// is a floor over its whole output, proportional to its inputs' ‖·‖₂, and an early level's
/// floor is counted ~T/2^j times. A small-q step's tilted law is a spike with a slowly
/// decaying side (q = 1e-4, σ = 0.6: 22 points ≥ 0.1 of the maximum, 1,697 ≥ 1e-6), whose
/// ‖·‖₂ is near its ‖·‖₁: the floor's mass was ~1e-10 of the product's, ~1 % of δ over 10⁸
/// steps. So the tallest points s of each factor are convolved directly (sums of
/// nonnegative products: relative rounding only) and only the rest, r, by FFT:
/// x∗y = s_x∗y + s_y∗r_x + r_x∗r_y — as few as bring the floor within `share`.
pub(super) fn conv(
    x: &Part,
    y: &Part,
    square: bool,
    share: f64,
    w: &Work,
) -> Result<Part, TooWide> {
    if x.is_empty() || y.is_empty() {
        return Ok(Part::empty(x.d));
    }
    let len = x.len() + y.len() - 1;
    let n = len.next_power_of_two().max(2);
    if n > 2 * MAX_LEN {
        return Err(TooWide { needed: n as f64 });
    }
    // The floor's share is ≤ c·‖r_x‖₂‖r_y‖₂/(Σx·Σy) (rounding per point, times len).
    let c = 128.0 * U * log2(n as f64) * len as f64;
    let mass = |m: &Part| m.up.iter().sum::<f64>();
    let allowed = share * mass(x) * mass(y) / c;
    // At most about eight FFTs of the product's length of direct work.
    let work = 8.0 * n as f64 * log2(n as f64);
    let b = band(x, y, square, len, 0.0);
    let (sx, sy) = if b.floor(square, len) <= allowed {
        (Vec::new(), Vec::new())
    } else {
        let [x0, x1, y0, y1] = b.norms;
        direct_points((x, y, square), hypot(x0, x1) * hypot(y0, y1), allowed, work)
    };
    let rx = without(x, &sx);
    let ry = if square { rx.clone() } else { without(y, &sy) };
    let (mut up, mut lo) = fft_conv(&rx, &ry, square, len, allowed, w)?;
    let terms = sx.len() + sy.len();
    if terms > 0 {
        if !w.spend(DIRECT_UNIT * (sx.len() * y.len() + sy.len() * x.len()) as f64) {
            return Err(TooWide::SPENT);
        }
        let (mut du, mut dl) = (take_reals(len), take_reals(len));
        let mut direct = |s: &[usize], a: &Part, b: &Part| {
            for &i in s {
                let m = b.len();
                axpy(&mut du[i..i + m], a.up[i], &b.up);
                axpy(&mut dl[i..i + m], a.lo[i], &b.lo);
            }
        };
        if square {
            // s∗s + 2·s∗r, as s∗x + s∗r.
            direct(&sx, x, x);
            direct(&sx, x, &rx);
        } else {
            direct(&sx, x, y);
            direct(&sy, y, &rx);
        }
        // Each entry of du, dl: a sum of at most `terms` nonnegative rounded products,
        // relative error ≤ (terms + 1)u (first order); one more add and the scaling: the
        // factor 1 ± (terms + 6)u keeps `up` above and `lo` below. (This relative margin is
        // counted ~T/2^j times like the floor: ≲ 2e-14 per product at 100 points a side.)
        let g = (terms + 6) as f64 * U;
        for k in 0..len {
            up[k] = (up[k] + du[k]) * (1.0 + g);
            lo[k] = (lo[k] + dl[k]) * (1.0 - g);
        }
        give_reals(du);
        give_reals(dl);
    }
    let mut p = Part {
        d: x.d,
        k0: x.k0 + y.k0,
        up,
        lo,
        ln_s_up: x.ln_s_up + y.ln_s_up,
        ln_s_lo: x.ln_s_lo + y.ln_s_lo,
    };
    p.tidy();
    Ok(p)
}

/// out[i] += a·v[i]: a product, then a sum, per element (no fused multiply-add, so the same
/// bits on every target); natively four at a time in AVX registers where the CPU has them
/// (the direct products were 17 % of q = 3.9e-8, σ = 12.55, T = 5.3·10⁸'s call, two at a time).
fn axpy(out: &mut [f64], a: f64, v: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX (checked just above).
        unsafe { axpy_avx(out, a, v) };
        return;
    }
    axpy_plain(out, a, v);
}

#[inline(always)]
fn axpy_plain(out: &mut [f64], a: f64, v: &[f64]) {
    for (o, &x) in out.iter_mut().zip(v) {
        *o += a * x;
    }
}

/// [`axpy_plain`] compiled for AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn axpy_avx(out: &mut [f64], a: f64, v: &[f64]) {
    axpy_plain(out, a, v);
}

/// FFT work units per multiply-add of a direct product (measured: a 2¹³-point FFT's
/// n·log₂n units take about as long as 4·n·log₂n multiply-adds).
pub(super) const DIRECT_UNIT: f64 = 0.25;

/// The points of x and of y (`square`: the same) to convolve directly: the fewest tallest
/// values (of `up` or `lo`) that bring ‖r_x‖₂·‖r_y‖₂ within `allowed`, at a cost
/// m_x·|y| + m_y·|x| of at most `work`; within that cost, the most it affords. None where
/// `plain` (‖x‖₂·‖y‖₂) is already within.
pub(super) fn direct_points(
    (x, y, square): (&Part, &Part, bool),
    plain: f64,
    allowed: f64,
    work: f64,
) -> (Vec<usize>, Vec<usize>) {
    // Indices by height, and the ‖·‖₂ left after taking out the first m: rest[m].
    let order = |m: &Part, most: usize| -> (Vec<usize>, Vec<f64>) {
        let h = |i: usize| m.up[i].max(m.lo[i]);
        let mut idx: Vec<usize> = (0..m.len()).collect();
        let most = most.min(m.len());
        if most < idx.len() {
            idx.select_nth_unstable_by(most, |&a, &b| h(b).total_cmp(&h(a)));
            idx.truncate(most);
        }
        idx.sort_unstable_by(|&a, &b| h(b).total_cmp(&h(a)));
        let sq = |i: usize| m.up[i] * m.up[i] + m.lo[i] * m.lo[i];
        let all: f64 = (0..m.len()).map(sq).sum();
        let mut rest = Vec::with_capacity(idx.len() + 1);
        let mut left = all;
        rest.push(all.sqrt());
        for &i in &idx {
            left = (left - sq(i)).max(0.0);
            rest.push(left.sqrt());
        }
        (idx, rest)
    };
    if plain <= allowed {
        return (Vec::new(), Vec::new());
    }
    // The fewest of `rest` (≥ 0) with rest[m] ≤ bound, or its longest.
    let fewest = |rest: &[f64], bound: f64| {
        rest.iter()
            .position(|&r| r <= bound)
            .unwrap_or(rest.len() - 1)
    };
    if square {
        let (idx, rest) = order(x, (work / y.len() as f64) as usize);
        let m = fewest(&rest, allowed.sqrt());
        return (idx[..m].to_vec(), idx[..m].to_vec());
    }
    let (ix, rx) = order(x, (work / y.len() as f64) as usize);
    let (iy, ry) = order(y, (work / x.len() as f64) as usize);
    // Try m_y = 0, 1, 2, 4, …; for each the fewest m_x; keep the cheapest that meets the
    // bound, or else the one with the smallest product of the norms left.
    let mut best: Option<(bool, f64, usize, usize)> = None;
    let mut my = 0;
    loop {
        let mx = fewest(&rx, allowed / ry[my].max(1e-300));
        let mx = if rx[mx] * ry[my] <= allowed {
            mx
        } else {
            rx.len() - 1
        };
        let ok = rx[mx] * ry[my] <= allowed;
        let cost = (mx * y.len() + my * x.len()) as f64;
        let score = if ok { cost } else { rx[mx] * ry[my] };
        let better = match best {
            None => true,
            Some((bok, bs, _, _)) => (ok && !bok) || (ok == bok && score < bs),
        };
        if cost <= work && better {
            best = Some((ok, score, mx, my));
        }
        if my == ry.len() - 1 {
            break;
        }
        my = (2 * my).max(1).min(ry.len() - 1);
    }
    match best {
        Some((_, _, mx, my)) => (ix[..mx].to_vec(), iy[..my].to_vec()),
        None => (Vec::new(), Vec::new()),
    }
}

/// `m` with the values at `s` set to 0.
pub(super) fn without(m: &Part, s: &[usize]) -> Part {
    let mut r = m.clone();
    for &i in s {
        r.up[i] = 0.0;
        r.lo[i] = 0.0;
    }
    r
}

/// How [`fft_conv`] splits x and y: their central runs [xa, xb) and [ya, yb), the
/// central product's length, ‖·‖₂ of each central run and flank (x₀, x₁, y₀, y₁), and
/// whether it splits at all.
pub(super) struct Band {
    pub(super) xa: usize,
    pub(super) xb: usize,
    pub(super) ya: usize,
    pub(super) yb: usize,
    pub(super) short: usize,
    pub(super) norms: [f64; 4],
    pub(super) banded: bool,
}

/// ‖·‖₂ of up + i·lo of `m` on [a, b) and off it.
pub(super) fn norms_in(m: &Part, a: usize, b: usize) -> (f64, f64) {
    let sq = |v: &[f64], w: &[f64]| v.iter().zip(w).map(|(p, q)| p * p + q * q).sum::<f64>();
    let inner = sq(&m.up[a..b], &m.lo[a..b]);
    let all = sq(&m.up, &m.lo);
    (inner.sqrt(), (all - inner).max(0.0).sqrt())
}

/// The split [`fft_conv`] makes: banded where the plain floor c·‖x‖₂‖y‖₂ exceeds `allowed`
/// (in units of c) and the central product's FFT is at most half the full one.
pub(super) fn band(x: &Part, y: &Part, square: bool, len: usize, allowed: f64) -> Band {
    let (xa, xb) = central(x);
    let (ya, yb) = if square { (xa, xb) } else { central(y) };
    let short = (xb - xa) + (yb - ya) - 1;
    let (x0, x1) = norms_in(x, xa, xb);
    let (y0, y1) = norms_in(y, ya, yb);
    let plain = hypot(x0, x1) * hypot(y0, y1);
    let banded =
        2 * short.next_power_of_two().max(2) <= len.next_power_of_two().max(2) && plain > allowed;
    Band {
        xa,
        xb,
        ya,
        yb,
        short,
        norms: [x0, x1, y0, y1],
        banded,
    }
}

impl Band {
    /// The mass [`fft_conv`]'s floor adds to x∗y, in units of 128u·log₂n·len (n the full
    /// FFT's length): ‖x‖₂‖y‖₂ plain; banded, the central product's on its own support plus
    /// the flanks'.
    pub(super) fn floor(&self, square: bool, len: usize) -> f64 {
        let [x0, x1, y0, y1] = self.norms;
        if !self.banded {
            return hypot(x0, x1) * hypot(y0, y1);
        }
        let rest = if square {
            x1 * hypot(2.0 * x0, x1)
        } else {
            x1 * hypot(y0, y1) + x0 * y1
        };
        rest + x0 * y0 * self.short as f64 / len as f64
    }
}

/// The first `len` values of x∗y by zero-padded FFTs, `up` (real parts) plus and `lo`
/// (imaginary parts) minus the rounding bound, both clamped at 0. Each factor is split into
/// its central run x₀ (from the first to the last value ≥ BAND of its maximum) and its flanks
/// x₁: x∗y = x₀∗y₀ + (x₁∗y + x₀∗y₁). The first product, on a shorter FFT, has the larger
/// floor but only on its own support (elsewhere it is exactly 0); the second's is ≲ BAND
/// times as large.
pub(super) fn fft_conv(
    x: &Part,
    y: &Part,
    square: bool,
    len: usize,
    allowed: f64,
    w: &Work,
) -> Result<(Vec<f64>, Vec<f64>), TooWide> {
    let zero = |v: &Part| v.up.iter().chain(&v.lo).all(|&a| a == 0.0);
    if zero(x) || zero(y) {
        return Ok((vec![0.0; len], vec![0.0; len]));
    }
    let n = len.next_power_of_two().max(2);
    let b = band(x, y, square, len, allowed);
    let (xa, xb, ya, yb, short, banded) = (b.xa, b.xb, b.ya, b.yb, b.short, b.banded);
    let nc = short.next_power_of_two().max(2);
    let log = |n: usize| n as f64 * log2(n as f64);
    let transforms = match (banded, square) {
        (false, true) => 2.0 * log(n),
        (false, false) => 3.0 * log(n),
        (true, true) => 3.0 * log(n) + 2.0 * log(nc),
        (true, false) => 5.0 * log(n) + 3.0 * log(nc),
    };
    if !w.spend(transforms) {
        return Err(TooWide::SPENT);
    }
    let inside = |a: usize, b: usize| move |i: usize| if i >= a && i < b { 1.0 } else { 0.0 };
    let outside = |a: usize, b: usize| move |i: usize| if i >= a && i < b { 0.0 } else { 1.0 };
    let (mut out, e) = if !banded {
        let (zx, nx) = spectrum(x, n, |_| 1.0);
        if square {
            let r = inverse(&[(&zx, &zx)], nx * nx, len);
            give_complex(zx);
            r
        } else {
            let (zy, ny) = spectrum(y, n, |_| 1.0);
            let r = inverse(&[(&zx, &zy)], nx * ny, len);
            give_complex(zx);
            give_complex(zy);
            r
        }
    } else if square {
        // x₁∗x + x₀∗x₁ = x₁∗(x + x₀).
        let (z1, n1) = spectrum(x, n, outside(xa, xb));
        let (z2, n2) = spectrum(x, n, |i| if i >= xa && i < xb { 2.0 } else { 1.0 });
        let r = inverse(&[(&z1, &z2)], n1 * n2, len);
        give_complex(z1);
        give_complex(z2);
        r
    } else {
        let (zx1, nx1) = spectrum(x, n, outside(xa, xb));
        let (zy, ny) = spectrum(y, n, |_| 1.0);
        let (zx0, nx0) = spectrum(x, n, inside(xa, xb));
        let (zy1, ny1) = spectrum(y, n, outside(ya, yb));
        let r = inverse(&[(&zx1, &zy), (&zx0, &zy1)], nx1 * ny + nx0 * ny1, len);
        for v in [zx1, zy, zx0, zy1] {
            give_complex(v);
        }
        r
    };
    out.iter_mut().for_each(|v| *v += Complex::new(e, -e));
    if banded {
        let (x0, y0) = (x.slice(xa, xb), y.slice(ya, yb));
        let (zx, nx) = spectrum(&x0, nc, |_| 1.0);
        let (c, ec) = if square {
            inverse(&[(&zx, &zx)], nx * nx, short)
        } else {
            let (zy, ny) = spectrum(&y0, nc, |_| 1.0);
            let r = inverse(&[(&zx, &zy)], nx * ny, short);
            give_complex(zy);
            r
        };
        give_complex(zx);
        for (o, v) in out[xa + ya..xa + ya + short].iter_mut().zip(&c) {
            *o += v + Complex::new(ec, -ec);
        }
        give_complex(c);
    }
    let parts = (
        out.iter().map(|v| v.re.max(0.0)).collect(),
        out.iter().map(|v| v.im.max(0.0)).collect(),
    );
    give_complex(out);
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX build of the direct products computes the plain loop's bits (what keeps the
    /// native answers the wasm's).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx_axpy_is_the_plain_one_bit_for_bit() {
        if !std::arch::is_x86_feature_detected!("avx") {
            return;
        }
        let v: Vec<f64> = (0..1027)
            .map(|i| crate::engine::math::sin(i as f64 * 0.37) * 1e-3)
            .collect();
        let start: Vec<f64> = (0..1027)
            .map(|i| crate::engine::math::cos(i as f64 * 0.11))
            .collect();
        for a in [0.3, 1.0 / 3.0, 7.1e-12, 2.5e8] {
            let (mut x, mut y) = (start.clone(), start.clone());
            // SAFETY: AVX checked above.
            unsafe { axpy_avx(&mut x, a, &v) };
            axpy_plain(&mut y, a, &v);
            assert!(
                x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits()),
                "a = {a}"
            );
        }
    }
}
