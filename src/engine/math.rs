//! The transcendental functions every number is computed with: the `libm` crate's, on every
//! target. `f64::exp` and friends call the platform's C library natively (glibc here) and
//! `libm`'s port in the wasm; the two round differently in the last bit for ~10 % of
//! arguments (measured: 1.1 million of 11.7 million `exp` arguments over [−745, 700]), and
//! a last-bit difference can steer an adaptive pass or a search another way. With one
//! implementation on both, the command line, the Python package, the page's worker and the
//! JS API compute the same bits for the same inputs (the e2e replays the batch corpus in the
//! browser and requires every line byte-identical to the command line's). Clippy's
//! `disallowed-methods` (clippy.toml) keeps the platform's functions out.
//!
//! `sqrt`, `abs`, `floor`, `mul_add` and `powi` (repeated multiplication) are exact or
//! defined by IEEE 754 arithmetic alone, so they stay the standard library's.

/// e^x.
#[inline]
pub fn exp(x: f64) -> f64 {
    libm::exp(x)
}

/// The natural logarithm.
#[inline]
pub fn ln(x: f64) -> f64 {
    libm::log(x)
}

/// ln(1 + x), accurate near 0.
#[inline]
pub fn ln_1p(x: f64) -> f64 {
    libm::log1p(x)
}

/// e^x − 1, accurate near 0.
#[inline]
pub fn exp_m1(x: f64) -> f64 {
    libm::expm1(x)
}

/// x^y.
#[inline]
pub fn powf(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

/// log₂ x.
#[inline]
pub fn log2(x: f64) -> f64 {
    libm::log2(x)
}

/// log₁₀ x.
#[inline]
pub fn log10(x: f64) -> f64 {
    libm::log10(x)
}

/// √(x² + y²) without overflow.
#[inline]
pub fn hypot(x: f64, y: f64) -> f64 {
    libm::hypot(x, y)
}

/// sin x.
#[inline]
pub fn sin(x: f64) -> f64 {
    libm::sin(x)
}

/// cos x.
#[inline]
pub fn cos(x: f64) -> f64 {
    libm::cos(x)
}

/// The cube root.
#[inline]
pub fn cbrt(x: f64) -> f64 {
    libm::cbrt(x)
}

/// The angle of (x, y) from the positive x axis, in (−π, π].
#[inline]
pub fn atan2(y: f64, x: f64) -> f64 {
    libm::atan2(y, x)
}
