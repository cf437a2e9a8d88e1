//! Layout constants the page and the widget share (no DOM).

/// Charts narrower than this (CSS px) put their legend in a strip under the plot.
pub const NARROW: f64 = 520.0;

/// PNG and SVG exports: this size in CSS px, light theme, whatever the screen; the PNG is
/// drawn at [`EXPORT_PNG_SCALE`]× (1800 × 1120 pixels).
pub const EXPORT_SIZE: (u32, u32) = (900, 560);
pub const EXPORT_PNG_SCALE: u32 = 2;
