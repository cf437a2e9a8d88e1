//! The front ends' tests, one binary: the training-configuration check (`check`), the
//! command line and its `batch` contract (`cli`,
//! `fuzz_batch`: 10⁵ proptest cases, `make fuzz` 10⁶), the red-team findings (`hardening`),
//! the library table (`library`), the charts as SVG (`render_svg`), the ui layer's parser
//! (`ui`) and the layering read from the sources (`layers`). The browser's side is
//! `tests/web.rs` (wasm-bindgen-test) and `tests/e2e/`.
// References here may use the platform's f64 functions: the libm rule (clippy.toml) is for
// the numbers the surfaces print, which come from the library.
#![allow(clippy::disallowed_methods)]
// The command line is native only (the wasm modules reach the query layer directly).
#![cfg(not(target_arch = "wasm32"))]

mod check;
mod cli;
mod fuzz_batch;
mod hardening;
mod layers;
mod library;
mod render_svg;
mod ui;
