//! sgm-rdp: exact Rényi-DP accounting for the Sampled Gaussian Mechanism.
//!
//! Three layers, dependencies pointing one way:
//! [`engine`] (pure numerics) ← [`render`] (plotters charts on any backend) ← [`ui`]
//! (fields and parsing, no DOM) ← `web`
//! (wasm-bindgen/DOM glue, compiled only for wasm32).

pub mod decimal;
pub mod engine;
pub mod render;
pub mod ui;

pub mod cli;

#[cfg(target_arch = "wasm32")]
pub mod web;
