//! A complex FFT of power-of-two length that computes the same bits on every target.
//!
//! Why our own: the numbers a surface prints must not depend on where they were computed
//! (the command line, the Python package, the page's worker and the JS API answer the same
//! batch line with the same bytes; the e2e checks it on the whole corpus). rustfft picks its
//! algorithm at run time natively (AVX, SSE or scalar kernels, each rounding differently)
//! and computes its twiddle factors with the platform's `sin`/`cos` (glibc natively, a libm
//! port in the wasm: 3 % of the twiddles of lengths 2⁴…2²² differ in the last bit). A last-bit
//! difference in a spectrum can steer one of the driver's adaptive choices, and then the two
//! surfaces print different (both certified) brackets. Here the algorithm is fixed and the
//! twiddles come from `libm` (src/engine/math.rs).
//!
//! The algorithm: Stockham's autosort radix-4 decimation in frequency (each pass reads one
//! buffer and writes the other in natural order, so there is no bit reversal, which cost a
//! third of a radix-2 transform's time at 2¹⁶ points), one radix-2 pass last when log₂ n is
//! odd; natively the passes after the first run two complex numbers at a time in AVX
//! registers where the CPU has them, which changes no bit (the same operations element by
//! element, no fused multiply-add: tested against the scalar pass). Its rounding
//! is Cooley–Tukey's with twiddles (W^p, W^{2p}, W^{3p} each from `libm`'s `sin`/`cos`)
//! accurate to a few units in the last place, so the bound the compositions use
//! (‖error‖₂ ≤ η·log₂n·‖x‖₂, η a small multiple of u; Higham, *Accuracy and Stability of
//! Numerical Algorithms*, §24.1) holds. Unscaled in both directions. Speed (2-core
//! machine, one forward transform): 2¹⁶ points 0.18 ms, 2¹⁸ 0.75 ms, 2²⁰ 7.4 ms; rustfft's
//! scalar radix-4 0.40 / 1.8 / 11.2 ms, its AVX planner 0.16 / 0.77 / 6.4 ms (hot in cache;
//! inside a composition, its buffers cold, 2¹⁸ took 3.4 ms, 2²⁰ 16.5 ms).
//! Natively, from 2¹⁷ points on, each pass is split over two threads
//! ([`Fft::process_split`]): the same operations on every element, so the same bits (tested);
//! 2¹⁸ 3.4 → 2.1 ms, 2²⁰ 16.5 → 8.9 ms in a temporary timing test. At 2¹⁶ the thread's start
//! and the eight barriers ate the gain (MNIST's call unchanged), so shorter transforms stay
//! on one thread.
//! Checked against the direct O(n²) sum (`tests` below) and, through every composition, by
//! the tight accountant's tests against their independent references.

use crate::engine::math::{cos, sin};
use num_complex::Complex;
use std::sync::Mutex;

/// A planned transform of one length and direction: its twiddle factors, per pass.
pub(crate) struct Fft {
    n: usize,
    inverse: bool,
    /// For each radix-4 pass over sub-transforms of length m (m = n, n/4, n/16, … while
    /// m ≥ 4): the triples (W_m^p, W_m^{2p}, W_m^{3p}), p = 0 … m/4 − 1, W_m = e^{∓2πi/m}.
    passes: Vec<Vec<[Complex<f64>; 3]>>,
    /// A work buffer of length n, reused (a call that finds it taken allocates its own).
    scratch: Mutex<Vec<Complex<f64>>>,
}

impl Fft {
    /// The transform of length `n` (a power of two); `inverse` computes Σ x_j e^{+2πijk/n}.
    pub(crate) fn new(n: usize, inverse: bool) -> Fft {
        assert!(n.is_power_of_two(), "FFT length {n} is not a power of two");
        let table = twiddles(n);
        // W_m^j = W_N^{j·N/m} for the table's N (a multiple of m: both powers of two).
        let k0 = table.len() * 4 / 3 / n.max(1);
        let w = |j: usize, stride: usize| {
            let z = table[j * stride];
            if inverse {
                z.conj()
            } else {
                z
            }
        };
        let mut passes = Vec::new();
        let mut m = n;
        let mut stride = k0;
        while m >= 4 {
            passes.push(
                (0..m / 4)
                    .map(|p| [w(p, stride), w(2 * p, stride), w(3 * p, stride)])
                    .collect(),
            );
            m /= 4;
            stride *= 4;
        }
        Fft {
            n,
            inverse,
            passes,
            scratch: Mutex::new(Vec::new()),
        }
    }

    /// Transforms `buf` (length n) in place. (Where the last pass wrote the work buffer,
    /// the two vectors are swapped, not copied: the copy was 6 % of a 2¹⁸ composition, perf.)
    pub(crate) fn process(&self, buf: &mut Vec<Complex<f64>>) {
        let n = self.n;
        assert_eq!(buf.len(), n, "FFT buffer length");
        if n < 2 {
            return;
        }
        let mut own = Vec::new();
        let mut held = self.scratch.try_lock().ok();
        let work = match held.as_deref_mut() {
            Some(v) => v,
            None => &mut own,
        };
        // (Every pass writes all of its output, so the scratch's old values are never read:
        // resized, not cleared — zeroing it was 3 % of MNIST's call, perf.)
        work.resize(n, Complex::new(0.0, 0.0));
        if !self.passes_into(buf, work) {
            std::mem::swap(buf, work);
        }
    }

    /// The passes, from `buf` through `work` (both of length n); whether the result is in
    /// `buf` (else in `work`).
    fn passes_into(&self, buf: &mut [Complex<f64>], work: &mut [Complex<f64>]) -> bool {
        #[cfg(not(target_arch = "wasm32"))]
        if self.n >= SPLIT_LEN {
            return self.process_split(buf, work);
        }
        self.passes_serial(buf, work)
    }

    /// [`passes_into`](Fft::passes_into) on the calling thread.
    fn passes_serial(&self, buf: &mut [Complex<f64>], work: &mut [Complex<f64>]) -> bool {
        let n = self.n;
        // Stockham: each pass reads one buffer and writes the other, in the natural order
        // (no bit reversal); `in_buf` says where the current data lives.
        let mut in_buf = true;
        let mut s = 1;
        for tw in &self.passes {
            let (x, y) = sides(in_buf, buf, work);
            pass(x, y, s, tw, self.inverse);
            in_buf = !in_buf;
            s *= 4;
        }
        if s < n {
            // The last factor 2 (log₂ n odd): a radix-2 pass with twiddle 1.
            let (x, y) = sides(in_buf, buf, work);
            let (x0, x1) = x.split_at(s);
            let (y0, y1) = y.split_at_mut(s);
            for (((a, b), u), v) in x0.iter().zip(x1).zip(y0).zip(y1) {
                *u = a + b;
                *v = a - b;
            }
            in_buf = !in_buf;
        }
        in_buf
    }

    /// [`process`](Fft::process) on two threads (the calling one and one spawned); the same
    /// operations on every element, so the same bits. Each thread computes half of every
    /// pass: of a radix-4 pass with q ≥ 2 butterflies, the butterflies p of its half of
    /// [0, q) (whose outputs are one contiguous half of the output: the halves are read in
    /// long runs and no cache line is written by both); of the last radix-4 pass (q = 1), its
    /// half of the s sub-sequences; of the radix-2 pass, its half of the pairs. A barrier
    /// after each pass (a spin on one counter) shows each thread the other's writes before
    /// the next pass reads them, and keeps a pass from writing the buffer the previous one is
    /// still reading. (Owning elements by i mod 16 after the second pass would have needed
    /// two barriers only, but interleaved the threads' cache lines: 2¹⁸ took 4.4 ms against
    /// 3.4 on one thread.) Returns whether the result is in `buf` (else in `work`).
    #[cfg(not(target_arch = "wasm32"))]
    fn process_split(&self, buf: &mut [Complex<f64>], work: &mut [Complex<f64>]) -> bool {
        let n = self.n;
        debug_assert!(n >= 16 && buf.len() == n && work.len() == n);
        let ptrs = [Shared(buf.as_mut_ptr()), Shared(work.as_mut_ptr())];
        let passed = std::sync::atomic::AtomicUsize::new(0);
        // The buffer a pass reads and the one it writes (as [`sides`]).
        let sides_of = |in_buf: bool| {
            if in_buf {
                (&ptrs[0], &ptrs[1])
            } else {
                (&ptrs[1], &ptrs[0])
            }
        };
        let run = |t: usize| -> bool {
            let mut in_buf = true;
            let mut s = 1;
            for (r, tw) in self.passes.iter().enumerate() {
                let q = tw.len();
                let share = if q >= 2 {
                    Share::butterflies(t * q / 2..(t + 1) * q / 2, s)
                } else {
                    Share::half(s, t)
                };
                let (x, y) = sides_of(in_buf);
                // SAFETY: both buffers hold n elements; within a pass the two threads write
                // disjoint elements of y and nobody writes x; the barrier after each pass
                // shows each thread the other's writes.
                unsafe { pass_share(x.0, y.0, s, tw, self.inverse, &share) };
                spin_barrier(&passed, 2 * (r + 1));
                in_buf = !in_buf;
                s *= 4;
            }
            if s < n {
                // The radix-2 pass: element i and i + s, i in this thread's half of [0, s).
                let (x, y) = sides_of(in_buf);
                for i in t * s / 2..(t + 1) * s / 2 {
                    // SAFETY: i + s < n; elements i and i + s of y are this thread's alone.
                    unsafe {
                        let (a, b) = (*x.0.add(i), *x.0.add(i + s));
                        *y.0.add(i) = a + b;
                        *y.0.add(i + s) = a - b;
                    }
                }
                in_buf = !in_buf;
            }
            in_buf
        };
        std::thread::scope(|sc| {
            let other = sc.spawn(|| run(1));
            let in_buf = run(0);
            match other.join() {
                Ok(_) => in_buf,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }
}

/// Transforms at least this long are split over two threads natively ([`Fft::process_split`]).
#[cfg(not(target_arch = "wasm32"))]
const SPLIT_LEN: usize = 1 << 17;

/// A buffer's start, shared by the two threads of a split transform.
#[cfg(not(target_arch = "wasm32"))]
struct Shared(*mut Complex<f64>);

// SAFETY: the split transform's threads write disjoint elements ([`Fft::process_split`]).
#[cfg(not(target_arch = "wasm32"))]
unsafe impl Sync for Shared {}

/// Waits until `passed` reaches `goal` after adding this thread's 1 (two threads; the k-th
/// barrier's goal is 2k). Release/acquire: what either thread wrote before is seen after.
#[cfg(not(target_arch = "wasm32"))]
fn spin_barrier(passed: &std::sync::atomic::AtomicUsize, goal: usize) {
    use std::sync::atomic::Ordering;
    passed.fetch_add(1, Ordering::AcqRel);
    let mut spins = 0u32;
    while passed.load(Ordering::Acquire) < goal {
        spins += 1;
        if spins < 1 << 12 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// The butterflies of one radix-4 pass that one thread computes: those of index p in `p`,
/// each on its sub-sequences j in `j` (of the pass's s).
#[cfg(not(target_arch = "wasm32"))]
struct Share {
    p: std::ops::Range<usize>,
    j: std::ops::Range<usize>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Share {
    /// Every sub-sequence of the butterflies `p` (a pass over s sub-sequences).
    fn butterflies(p: std::ops::Range<usize>, s: usize) -> Share {
        Share { p, j: 0..s }
    }

    /// Half t of the s sub-sequences of the one butterfly of a pass's last radix-4 stage.
    fn half(s: usize, t: usize) -> Share {
        Share {
            p: 0..1,
            j: t * s / 2..(t + 1) * s / 2,
        }
    }
}

/// The butterflies `share` of a radix-4 pass over s sub-sequences, from x into y (both of
/// 4·q·s elements, q = tw.len()).
///
/// # Safety
/// x and y hold 4·q·s elements each and do not overlap; no other thread writes the elements
/// read or reads the elements written.
#[cfg(not(target_arch = "wasm32"))]
unsafe fn pass_share(
    x: *const Complex<f64>,
    y: *mut Complex<f64>,
    s: usize,
    tw: &[[Complex<f64>; 3]],
    inverse: bool,
    share: &Share,
) {
    #[cfg(target_arch = "x86_64")]
    if s.is_multiple_of(2) && std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX; the rest is the caller's.
        unsafe {
            if inverse {
                radix4_avx_share::<true>(x, y, s, tw, share);
            } else {
                radix4_avx_share::<false>(x, y, s, tw, share);
            }
        }
        return;
    }
    let q = tw.len();
    for p in share.p.clone() {
        for j in share.j.clone() {
            let at = |k: usize| j + s * (k * q + p);
            let o = j + 4 * p * s;
            // SAFETY: every index is below 4·q·s (the caller's lengths).
            unsafe {
                let (a, b, c, d) = (*x.add(at(0)), *x.add(at(1)), *x.add(at(2)), *x.add(at(3)));
                let outs = if inverse {
                    butterfly::<true>(a, b, c, d, &tw[p])
                } else {
                    butterfly::<false>(a, b, c, d, &tw[p])
                };
                *y.add(o) = outs.0;
                *y.add(o + s) = outs.1;
                *y.add(o + 2 * s) = outs.2;
                *y.add(o + 3 * s) = outs.3;
            }
        }
    }
}

/// The forward twiddles W_N^j = e^{−2πij/N}, j < 3N/4, of the longest length N asked so far
/// (at least `n`), shared by every plan: a shorter length's twiddles are every (N/m)-th entry.
/// The same bits as computing them for m itself: 2π·j·(N/m) and m·(N/m) are 2π·j and m
/// scaled by a power of two, so their quotient, and its `cos` and `sin`, are unchanged.
/// (Computing them per length was 6 % of a σ = 0.6 call's time, `cos`/`sin` per plan.)
fn twiddles(n: usize) -> std::sync::Arc<Vec<Complex<f64>>> {
    static TABLE: Mutex<Option<std::sync::Arc<Vec<Complex<f64>>>>> = Mutex::new(None);
    let mut held = TABLE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(t) = held.as_ref().filter(|t| t.len() * 4 / 3 >= n) {
        return t.clone();
    }
    let big = n.max(4);
    let t: std::sync::Arc<Vec<Complex<f64>>> = std::sync::Arc::new(
        (0..big * 3 / 4)
            .map(|j| {
                let a = 2.0 * std::f64::consts::PI * j as f64 / big as f64;
                Complex::new(cos(a), -sin(a))
            })
            .collect(),
    );
    *held = Some(t.clone());
    t
}

/// The buffer a pass reads and the one it writes: `buf` → `work` when the data is in `buf`.
fn sides<'a>(
    in_buf: bool,
    buf: &'a mut [Complex<f64>],
    work: &'a mut [Complex<f64>],
) -> (&'a [Complex<f64>], &'a mut [Complex<f64>]) {
    if in_buf {
        (buf, work)
    } else {
        (work, buf)
    }
}

/// One radix-4 pass, natively with AVX's wider registers where the CPU has them: the
/// same additions and multiplications element by element (no fused multiply-add), so the
/// same bits as the scalar code and the wasm's.
fn pass(
    x: &[Complex<f64>],
    y: &mut [Complex<f64>],
    s: usize,
    tw: &[[Complex<f64>; 3]],
    inverse: bool,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX (checked just above).
        unsafe { pass_avx(x, y, s, tw, inverse) };
        return;
    }
    if inverse {
        radix4::<true>(x, y, s, tw);
    } else {
        radix4::<false>(x, y, s, tw);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn pass_avx(
    x: &[Complex<f64>],
    y: &mut [Complex<f64>],
    s: usize,
    tw: &[[Complex<f64>; 3]],
    inverse: bool,
) {
    match (s, inverse) {
        (1, true) => radix4::<true>(x, y, s, tw),
        (1, false) => radix4::<false>(x, y, s, tw),
        (_, true) => radix4_avx::<true>(x, y, s, tw),
        (_, false) => radix4_avx::<false>(x, y, s, tw),
    }
}

/// [`radix4`] two complex numbers at a time (s even): the same additions, subtractions,
/// products and sign flips on each element, in 256-bit registers. A complex product
/// (a + bi)(c + di) is [ac − bd, bc + ad] by `addsub` of [ac, bc] and [bd, ad] — the scalar's
/// ac − bd and ad + bc, whose sum commutes exactly — and ±i·z swaps z's parts and flips one
/// sign bit, as the scalar does.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn radix4_avx<const INVERSE: bool>(
    x: &[Complex<f64>],
    y: &mut [Complex<f64>],
    s: usize,
    tw: &[[Complex<f64>; 3]],
) {
    let q = tw.len();
    assert!(s.is_multiple_of(2) && x.len() == 4 * q * s && y.len() == 4 * q * s);
    // SAFETY: the lengths are asserted above, x and y are distinct borrows.
    unsafe {
        radix4_avx_share::<INVERSE>(
            x.as_ptr(),
            y.as_mut_ptr(),
            s,
            tw,
            &Share::butterflies(0..q, s),
        )
    };
}

/// [`radix4_avx`] on the butterflies `share` (its sub-sequences an even run), through pointers.
///
/// # Safety
/// As [`pass_share`]'s, and the CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn radix4_avx_share<const INVERSE: bool>(
    x: *const Complex<f64>,
    y: *mut Complex<f64>,
    s: usize,
    tw: &[[Complex<f64>; 3]],
    share: &Share,
) {
    use std::arch::x86_64::*;
    let q = tw.len();
    // The sign bit of the real part (inverse: −im, re) or of the imaginary part (forward:
    // im, −re) after the swap.
    let flip = if INVERSE {
        _mm256_setr_pd(-0.0, 0.0, -0.0, 0.0)
    } else {
        _mm256_setr_pd(0.0, -0.0, 0.0, -0.0)
    };
    let (xp, yp) = (x as *const f64, y as *mut f64);
    let mul = |z: __m256d, wr: __m256d, wi: __m256d| {
        _mm256_addsub_pd(
            _mm256_mul_pd(z, wr),
            _mm256_mul_pd(_mm256_permute_pd(z, 0b0101), wi),
        )
    };
    for p in share.p.clone() {
        let w = &tw[p];
        let (w1r, w1i) = (_mm256_set1_pd(w[0].re), _mm256_set1_pd(w[0].im));
        let (w2r, w2i) = (_mm256_set1_pd(w[1].re), _mm256_set1_pd(w[1].im));
        let (w3r, w3i) = (_mm256_set1_pd(w[2].re), _mm256_set1_pd(w[2].im));
        for j in share.j.clone().step_by(2) {
            // SAFETY: every index is below 4·q·s complex numbers (the caller's), and
            // unaligned loads and stores are allowed.
            let at = |k: usize| 2 * (k * s + j);
            let a = _mm256_loadu_pd(xp.add(at(p)));
            let b = _mm256_loadu_pd(xp.add(at(q + p)));
            let c = _mm256_loadu_pd(xp.add(at(2 * q + p)));
            let d = _mm256_loadu_pd(xp.add(at(3 * q + p)));
            let (apc, amc) = (_mm256_add_pd(a, c), _mm256_sub_pd(a, c));
            let bpd = _mm256_add_pd(b, d);
            let rbmd = _mm256_xor_pd(_mm256_permute_pd(_mm256_sub_pd(b, d), 0b0101), flip);
            let o = 2 * (4 * p * s + j);
            _mm256_storeu_pd(yp.add(o), _mm256_add_pd(apc, bpd));
            _mm256_storeu_pd(yp.add(o + 2 * s), mul(_mm256_add_pd(amc, rbmd), w1r, w1i));
            _mm256_storeu_pd(yp.add(o + 4 * s), mul(_mm256_sub_pd(apc, bpd), w2r, w2i));
            _mm256_storeu_pd(yp.add(o + 6 * s), mul(_mm256_sub_pd(amc, rbmd), w3r, w3i));
        }
    }
}

/// One radix-4 butterfly (decimation in frequency) with its three twiddles.
#[inline(always)]
fn butterfly<const INVERSE: bool>(
    a: Complex<f64>,
    b: Complex<f64>,
    c: Complex<f64>,
    d: Complex<f64>,
    w: &[Complex<f64>; 3],
) -> (Complex<f64>, Complex<f64>, Complex<f64>, Complex<f64>) {
    // Multiplication by −i (forward) or +i (inverse).
    let rot = |z: Complex<f64>| {
        if INVERSE {
            Complex::new(-z.im, z.re)
        } else {
            Complex::new(z.im, -z.re)
        }
    };
    let (apc, amc) = (a + c, a - c);
    let (bpd, rbmd) = (b + d, rot(b - d));
    (
        apc + bpd,
        (amc + rbmd) * w[0],
        (apc - bpd) * w[1],
        (amc - rbmd) * w[2],
    )
}

/// One Stockham radix-4 pass: x holds s interleaved sub-sequences of length m = n/s; y
/// receives 4s of length m/4 (decimation in frequency). Forward W = e^{−2πi/m}.
#[inline(always)]
fn radix4<const INVERSE: bool>(
    x: &[Complex<f64>],
    y: &mut [Complex<f64>],
    s: usize,
    tw: &[[Complex<f64>; 3]],
) {
    // m/4 butterflies of s interleaved sub-sequences each.
    let q = tw.len();
    let butterfly = butterfly::<INVERSE>;
    let (xa, rest) = x.split_at(q * s);
    let (xb, rest) = rest.split_at(q * s);
    let (xc, xd) = rest.split_at(q * s);
    if s == 1 {
        // The first pass: one element per sub-sequence, four outputs side by side.
        let ins = xa.iter().zip(xb).zip(xc.iter().zip(xd));
        for ((((a, b), (c, d)), o), w) in ins.zip(y.chunks_exact_mut(4)).zip(tw) {
            let (o0, o1, o2, o3) = butterfly(*a, *b, *c, *d, w);
            o[0] = o0;
            o[1] = o1;
            o[2] = o2;
            o[3] = o3;
        }
        return;
    }
    let ins = xa.chunks_exact(s).zip(xb.chunks_exact(s));
    let ins = ins.zip(xc.chunks_exact(s).zip(xd.chunks_exact(s)));
    for (((a, b), (c, d)), (out, w)) in ins.zip(y.chunks_exact_mut(4 * s).zip(tw)) {
        let (y0, rest) = out.split_at_mut(s);
        let (y1, rest) = rest.split_at_mut(s);
        let (y2, y3) = rest.split_at_mut(s);
        let ins = a.iter().zip(b).zip(c.iter().zip(d));
        let outs = y0
            .iter_mut()
            .zip(y1.iter_mut())
            .zip(y2.iter_mut().zip(y3.iter_mut()));
        for (((a, b), (c, d)), ((o0, o1), (o2, o3))) in ins.zip(outs) {
            (*o0, *o1, *o2, *o3) = butterfly(*a, *b, *c, *d, w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct sum Σ x_j e^{∓2πijk/n}, its twiddles reduced exactly (jk mod n) first.
    fn direct(x: &[Complex<f64>], inverse: bool) -> Vec<Complex<f64>> {
        let n = x.len();
        let s = if inverse { 1.0 } else { -1.0 };
        (0..n)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .fold(Complex::new(0.0, 0.0), |acc, (j, v)| {
                        let a = 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                        acc + v * Complex::new(cos(a), s * sin(a))
                    })
            })
            .collect()
    }

    #[test]
    fn matches_the_direct_sum_within_the_rounding_bound() {
        // Seeded pseudo-random inputs (a linear congruential generator) of every length
        // 1 … 1024, both directions; the error is measured in ‖·‖₂ relative to ‖y‖₂.
        let mut u = crate::engine::math::uniform(0x2545_f491_4f6c_dd1d);
        let mut next = || u() - 0.5;
        for bits in 0..=10 {
            let n = 1usize << bits;
            let x: Vec<Complex<f64>> = (0..n).map(|_| Complex::new(next(), next())).collect();
            for inverse in [false, true] {
                let mut y = x.clone();
                Fft::new(n, inverse).process(&mut y);
                let want = direct(&x, inverse);
                let err: f64 = y.iter().zip(&want).map(|(a, b)| (a - b).norm_sqr()).sum();
                let norm: f64 = want.iter().map(|b| b.norm_sqr()).sum();
                let bound = 16.0 * f64::EPSILON * (bits.max(1) as f64);
                assert!(
                    err.sqrt() <= bound * norm.sqrt(),
                    "n = {n}, inverse {inverse}: {} > {}",
                    err.sqrt() / norm.sqrt(),
                    bound
                );
            }
        }
    }

    #[test]
    fn inverse_of_forward_is_n_times_the_input() {
        let n = 1 << 13;
        let x: Vec<Complex<f64>> = (0..n)
            .map(|i| Complex::new((i as f64 * 0.37).fract(), (i as f64 * 0.11).fract()))
            .collect();
        let mut y = x.clone();
        Fft::new(n, false).process(&mut y);
        Fft::new(n, true).process(&mut y);
        for (a, b) in y.iter().zip(&x) {
            assert!((a / n as f64 - b).norm_sqr().sqrt() < 1e-13, "{a} vs {b}");
        }
    }

    /// The transform split over two threads computes the one-thread transform's bits, both
    /// directions, at an even and an odd log₂ n (the odd one ends in the radix-2 pass).
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn the_split_transform_is_the_serial_one_bit_for_bit() {
        for bits in [17, 18] {
            let n = 1usize << bits;
            let x: Vec<Complex<f64>> = (0..n)
                .map(|i| Complex::new(sin(i as f64 * 0.371), cos(i as f64 * 0.113)))
                .collect();
            for inverse in [false, true] {
                let f = Fft::new(n, inverse);
                let run = |split: bool| {
                    let (mut a, mut w) = (x.clone(), vec![Complex::new(0.0, 0.0); n]);
                    let in_a = if split {
                        f.process_split(&mut a, &mut w)
                    } else {
                        f.passes_serial(&mut a, &mut w)
                    };
                    if in_a {
                        a
                    } else {
                        w
                    }
                };
                let (serial, split) = (run(false), run(true));
                assert!(
                    serial
                        .iter()
                        .zip(&split)
                        .all(|(u, v)| u.re.to_bits() == v.re.to_bits()
                            && u.im.to_bits() == v.im.to_bits()),
                    "n = 2^{bits}, inverse {inverse}"
                );
                // And it is a transform: against the direct sum at a few frequencies.
                for k in [0, 1, n / 3, n - 1] {
                    let sign = if inverse { 1.0 } else { -1.0 };
                    let want = x
                        .iter()
                        .enumerate()
                        .fold(Complex::new(0.0, 0.0), |acc, (j, v)| {
                            let a = 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                            acc + v * Complex::new(cos(a), sign * sin(a))
                        });
                    assert!(
                        (split[k] - want).norm_sqr() < (1e-9 * n as f64).powi(2),
                        "k = {k}"
                    );
                }
            }
        }
    }

    /// The AVX build of a pass computes the scalar pass's bits (same operations, element by
    /// element): what makes the native answers the wasm's.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx_pass_is_the_scalar_pass_bit_for_bit() {
        if !std::arch::is_x86_feature_detected!("avx") {
            return;
        }
        let n = 1 << 12;
        let x: Vec<Complex<f64>> = (0..n)
            .map(|i| Complex::new(sin(i as f64 * 0.371), cos(i as f64 * 0.113)))
            .collect();
        for (s, inverse) in [(1, false), (4, true), (64, false), (256, true)] {
            let tw = &Fft::new(n / s, inverse).passes[0];
            let (mut a, mut b) = (
                vec![Complex::new(0.0, 0.0); n],
                vec![Complex::new(0.0, 0.0); n],
            );
            // SAFETY: AVX checked above.
            unsafe { pass_avx(&x, &mut a, s, tw, inverse) };
            if inverse {
                radix4::<true>(&x, &mut b, s, tw);
            } else {
                radix4::<false>(&x, &mut b, s, tw);
            }
            assert!(
                a.iter()
                    .zip(&b)
                    .all(|(u, v)| u.re.to_bits() == v.re.to_bits()
                        && u.im.to_bits() == v.im.to_bits()),
                "s = {s}"
            );
        }
    }
}
