//! The engine: pure numerics, f64 in, `Result` out. No browser types.
//!
//! * [`rdp`] — exact per-step RDP of the Sampled Gaussian Mechanism (Mironov–Talwar–Zhang §3).
//! * [`accountant`] — composition over T steps and RDP → (ε, δ).
//! * [`answer`] — one Poisson run's ε or δ by the accountant(s) asked (every front end's).
//! * [`bounds`] — Theorem 11, Table 1's bounds, Lemma 9, Figure 1 (left).
//! * [`calibrate`] — smallest σ / largest T for an ε target.
//! * [`pld`] — the tight (ε, δ) from the privacy-loss distribution, as a certified bracket.
//! * `audit` — empirical lower bounds on ε and μ from canary scores, and audit planning.
//! * `matrix` — correlated noise (DP-FTRL, BandMF, BLT, tree aggregation): under
//!   b-min-separated participation by its exact reduction to SGM steps, or as one Gaussian
//!   mechanism where columns overlap; under Poisson or balls-in-bins a certified upper bound
//!   (operator norm or noise splitting), with a seeded Monte Carlo estimate beside it on request.

pub mod accountant;
pub mod answer;
// Audits: empirical lower bounds from canary scores, beside the certificate (issue 65).
#[cfg(full_engine)]
pub mod audit;
pub mod bounds;
pub mod calibrate;
pub mod compare;
pub mod error;
// Fixed-size batches (RDP of Wang, Balle, Kasiviswanathan): native only for now.
#[cfg(full_engine)]
pub mod fixed_size;
// User-level ε by exact RDP and group privacy (TF Privacy's route), for comparison.
#[cfg(full_engine)]
pub mod group_rdp;
pub mod library_rdp;
pub mod math;
// Correlated noise (DP-FTRL / matrix factorization), accounted by exact reductions (issue 67).
#[cfg(full_engine)]
pub mod matrix;
pub mod params;
pub mod pld;
pub mod rdp;
// Monotone searches; the page's own wasm uses only its bisection.
pub(crate) mod search;

pub use accountant::{default_orders, Conversion, Optimum, Run};
pub use error::Error;
pub use params::{Accountant, Adjacency, Sgm};

/// Largest supported Rényi order.
pub const MAX_ORDER: f64 = 1e6;
/// Smallest supported noise multiplier.
pub const MIN_SIGMA: f64 = 1e-3;
/// Largest supported noise multiplier.
pub const MAX_SIGMA: f64 = 1e8;
/// Largest supported number of steps.
pub const MAX_STEPS: u64 = 1_000_000_000;
