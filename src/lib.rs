//! sgm-rdp: exact Rényi-DP accounting for the Sampled Gaussian Mechanism.
//!
//! Three layers, dependencies pointing one way:
//! [`engine`] (pure numerics) ← [`render`] (plotters charts on any backend) ← [`ui`]
//! (fields and parsing, no DOM) ← `web`
//! (wasm-bindgen/DOM glue, compiled only for wasm32). One typed query layer, [`query`], under
//! every front end: [`cli`] (the command line and `batch`), [`worker`] (the page's worker),
//! `api` (the JS API, wasm32) and the Python package; no front end calls another.
//!
//! No `unwrap`/`expect` outside tests (clippy refuses them, below): every input reaches a
//! typed error or a default, never a panic.
//!
//! # Example: what does a DP-SGD run guarantee?
//!
//! MNIST with 60,000 examples, batches of 256 drawn by Poisson sampling (q = 256/60000),
//! noise multiplier σ = 1.1 (noise std / clipping norm), 60 epochs (T = 14063 steps),
//! δ = 1e-5, add/remove-one adjacency:
//!
//! ```
//! use sgm_rdp::engine::{params, pld, Conversion, Run, Sgm};
//!
//! let (q, steps) = params::from_dataset(60000.0, 256.0, 60.0)?; // q = B/N, T = ⌈E·N/B⌉
//! let mnist = Sgm::new(q, 1.1)?;
//!
//! // Exact RDP (Mironov–Talwar–Zhang), converted to (ε, δ): an upper bound.
//! let rdp = Run::with_default_orders(mnist, steps)?.epsilon(1e-5, Conversion::Improved)?;
//! assert!((rdp.value - 2.59664).abs() < 1e-4);
//!
//! // The tight accountant: a certified bracket [lower, upper] on the true ε.
//! let tight = pld::epsilon(mnist, steps, 1e-5)?.epsilon;
//! assert!(tight.lower <= 2.38169 && 2.38169 <= tight.upper); // the converged value
//! assert!(tight.upper < rdp.value);
//! # Ok::<(), sgm_rdp::engine::Error>(())
//! ```

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod decimal;
pub mod engine;
// The charts and the page's state (feature `charts`: plotters).
#[cfg(feature = "charts")]
pub mod render;
#[cfg(feature = "charts")]
pub mod ui;

// The query layer (one typed request and answer under every front end): natively and in
// the wasm modules that carry the whole engine (the page's own wasm never calls it).
#[cfg(all(full_engine, feature = "query"))]
pub mod query;

// The command line (natively only: the wasm modules reach the query layer directly).
#[cfg(all(full_engine, feature = "cli", not(target_arch = "wasm32")))]
pub mod cli;

// What the page's worker computes (its protocol in, the query layer's answers out).
#[cfg(all(full_engine, feature = "query"))]
pub mod worker;

// The page and the widget (with the JS API unless `page` leaves it out).
#[cfg(all(
    target_arch = "wasm32",
    feature = "charts",
    not(feature = "worker"),
    not(feature = "api")
))]
pub mod web;

/// The JS API, a front end beside the command line (no DOM): `--features api` is
/// `sgm-rdp.js`, the public JS API; `--features worker` the same over the whole engine, which
/// pld-worker.js and sgm-rdp-async.js load; the page's own wasm (`page`) leaves it out.
#[cfg(all(
    target_arch = "wasm32",
    not(feature = "page"),
    any(feature = "api", feature = "query")
))]
pub mod api;

/// The wasm build's allocator: talc, a drop-in replacement for Rust's default dlmalloc that
/// is smaller (the page's wasm has a 180 KB gzip budget) and faster.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
