//! The engine's tests, one binary by subject: exact RDP against mpmath (`reference_rdp`),
//! the tight accountant (`pld`, `pld_props`, `pld_coverage`), its schemes and views
//! (`sampling`, `allocation`, `group`, `meaning`, `compare`), properties (`engine_props`) and
//! the corners that used to hang (`extremes`). Each module says what it checks and against
//! which independent reference.
// References here may use the platform's f64 functions: the libm rule (clippy.toml) is for
// the numbers the surfaces print, which come from the library.
#![allow(clippy::disallowed_methods)]

mod allocation;
mod audit;
mod compare;
mod engine_props;
mod extremes;
mod group;
mod matrix;
mod meaning;
mod pld;
mod pld_coverage;
mod pld_props;
mod reference_rdp;
mod sampling;

/// A fixed-seed uniform draw on [0, 1) (xorshift64): the property sweeps' runs, the same on
/// every machine.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn uniform_from(seed: u64) -> impl FnMut() -> f64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}
