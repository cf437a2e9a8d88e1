//! Recycled buffers for the compositions' transforms (natively; a plain allocation in the
//! wasm).

#[cfg(any(not(target_arch = "wasm32"), full_engine))]
use num_complex::Complex;

/// Window-sized buffers recycled (natively: a composition allocates ~3 MB for MNIST, and
/// fresh pages from the OS cost more than the FFT — page faults and zeroing were a quarter
/// of MNIST's time). At most `KEEP` of each kind are kept; every buffer is cleared and
/// refilled when taken, so no answer depends on what was computed before. The wasm's
/// memory is never given back, so there it is a plain allocation.
#[cfg(not(target_arch = "wasm32"))]
pub(super) type Pool<T> = std::sync::Mutex<Vec<Vec<T>>>;
#[cfg(not(target_arch = "wasm32"))]
pub(super) static REALS: Pool<f64> = std::sync::Mutex::new(Vec::new());
#[cfg(not(target_arch = "wasm32"))]
pub(super) static COMPLEXES: Pool<Complex<f64>> = std::sync::Mutex::new(Vec::new());
#[cfg(not(target_arch = "wasm32"))]
const KEEP: usize = 8;

/// The smallest kept buffer whose capacity holds `n` values (else a new, empty one).
#[cfg(not(target_arch = "wasm32"))]
fn recycled<T>(pool: &'static Pool<T>, n: usize) -> Vec<T> {
    let mut p = pool
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let best = (0..p.len())
        .filter(|&i| p[i].capacity() >= n)
        .min_by_key(|&i| p[i].capacity());
    best.map(|i| p.swap_remove(i)).unwrap_or_default()
}

/// A recycled buffer of `n` copies of `fill` (the smallest kept one that fits).
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn take<T: Copy>(pool: &'static Pool<T>, n: usize, fill: T) -> Vec<T> {
    let mut v = recycled(pool, n);
    v.clear();
    v.resize(n, fill);
    v
}

/// A recycled buffer of length `n` whose values are left as they were (every one is written
/// before it is read).
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn take_unfilled<T: Copy + Default>(pool: &'static Pool<T>, n: usize) -> Vec<T> {
    let mut v = recycled(pool, n);
    v.resize(n, T::default());
    v
}

/// Hand a buffer back (kept if it is large and the pool has room).
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn give<T>(pool: &'static Pool<T>, v: Vec<T>) {
    if v.capacity() >= 1 << 12 {
        let mut p = pool
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if p.len() < KEEP {
            p.push(v);
        }
    }
}

#[cfg(target_arch = "wasm32")]
pub(super) fn take<T: Copy>(_pool: &(), n: usize, fill: T) -> Vec<T> {
    vec![fill; n]
}

#[cfg(target_arch = "wasm32")]
pub(super) fn give<T>(_pool: &(), _v: Vec<T>) {}

#[cfg(target_arch = "wasm32")]
pub(super) fn take_unfilled<T: Copy + Default>(_pool: &(), n: usize) -> Vec<T> {
    vec![T::default(); n]
}

#[cfg(target_arch = "wasm32")]
pub(super) const REALS: () = ();
#[cfg(target_arch = "wasm32")]
pub(super) const COMPLEXES: () = ();

/// A recycled complex buffer of `n` zeros, for the ladder's transforms (natively, fresh
/// pages for each of its spectra were a sixth of a T = 10⁵ ladder's time); hand it back with
/// [`give_complex`].
#[cfg(full_engine)]
pub(crate) fn take_complex(n: usize) -> Vec<Complex<f64>> {
    take(&COMPLEXES, n, Complex::new(0.0, 0.0))
}

/// A recycled buffer of `n` real zeros (scratch of the ladder's direct products); hand it back
/// with [`give_reals`].
#[cfg(full_engine)]
pub(crate) fn take_reals(n: usize) -> Vec<f64> {
    take(&REALS, n, 0.0)
}

/// Hand back a buffer from [`take_reals`].
#[cfg(full_engine)]
pub(crate) fn give_reals(v: Vec<f64>) {
    give(&REALS, v);
}

/// Hand back a buffer from [`take_complex`] (or any complex buffer no longer needed).
#[cfg(full_engine)]
pub(crate) fn give_complex(v: Vec<Complex<f64>>) {
    give(&COMPLEXES, v);
}
