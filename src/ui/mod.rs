//! What the page and the widget share and that needs no DOM: fields, parsing, presets.
//! Target-independent, so its tests run under plain `cargo test` (the start of the
//! `ui` layer: engine ← render ← ui ← web).

pub mod audit;
pub mod check;
pub mod fields;
pub mod layout;
pub mod link;
pub mod page;
pub mod protocol;
pub mod session;
pub mod view;
pub mod widget;
