//! sgm-rdp: exact Rényi-DP accounting for the Sampled Gaussian Mechanism.
//!
//! Three layers, dependencies pointing one way:
//! [`engine`] (pure numerics) ← [`render`] (plotters charts on any backend) ← [`ui`]
//! (fields and parsing, no DOM) ← `web`
//! (wasm-bindgen/DOM glue, compiled only for wasm32).
//!
//! No `unwrap`/`expect` outside tests (clippy refuses them, below): every input reaches a
//! typed error or a default, never a panic.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod decimal;
pub mod engine;
pub mod render;
pub mod ui;

// The command line and its query layer (`batch`): natively, and in the worker-only wasm,
// where `batchLine` answers a `batch` line exactly as the command line does (the page's
// own wasm never calls it).
#[cfg(full_engine)]
pub mod cli;

#[cfg(all(target_arch = "wasm32", not(feature = "worker")))]
pub mod web;

/// The worker-only wasm (`--features worker`): the JS API over the whole engine, without
/// the page (no plotters canvas, no DOM). pld-worker.js loads it; the page's own wasm keeps
/// the 180 KB budget.
#[cfg(all(target_arch = "wasm32", feature = "worker"))]
#[path = "web/api.rs"]
pub mod api;

/// The wasm build's allocator: talc, a drop-in replacement for Rust's default dlmalloc that
/// is smaller (the page's wasm has a 180 KB gzip budget) and faster.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
