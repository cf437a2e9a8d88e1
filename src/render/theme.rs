//! Colours, scale and fonts for light and dark pages.

use super::*;

/// Colours for light and dark pages.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub bg: RGBColor,
    pub fg: RGBColor,
    pub grid: RGBColor,
    pub series: [RGBColor; 5],
    pub shade: RGBColor,
    /// Multiplies font sizes and line widths (devicePixelRatio on the page).
    pub scale: f64,
    /// Put the legend in a strip under the plot instead of over its corner
    /// (narrow charts, where a corner legend would hide the curves).
    pub legend_below: bool,
}

impl Theme {
    pub fn light(scale: f64) -> Self {
        Theme {
            bg: RGBColor(255, 255, 255),
            fg: RGBColor(30, 30, 30),
            grid: RGBColor(225, 225, 225),
            series: [
                // Okabe–Ito: distinguishable with every common colour-vision deficiency.
                RGBColor(0, 114, 178),
                RGBColor(213, 94, 0),
                RGBColor(0, 158, 115),
                RGBColor(204, 121, 167),
                RGBColor(230, 159, 0),
            ],
            shade: RGBColor(250, 238, 195),
            scale,
            legend_below: false,
        }
    }
    pub fn dark(scale: f64) -> Self {
        Theme {
            bg: RGBColor(24, 26, 31),
            fg: RGBColor(230, 230, 230),
            grid: RGBColor(60, 62, 70),
            series: [
                // Okabe–Ito, lightened for a dark background.
                RGBColor(86, 180, 233),
                RGBColor(240, 130, 60),
                RGBColor(40, 200, 150),
                RGBColor(220, 150, 190),
                RGBColor(240, 190, 60),
            ],
            shade: RGBColor(70, 62, 35),
            scale,
            legend_below: false,
        }
    }
    /// `c` at opacity `a` over the background, as one opaque colour (a legend swatch for a
    /// translucent series).
    pub fn blend(&self, c: RGBColor, a: f64) -> RGBColor {
        let mix = |x: u8, y: u8| (a * x as f64 + (1.0 - a) * y as f64).round() as u8;
        RGBColor(
            mix(c.0, self.bg.0),
            mix(c.1, self.bg.1),
            mix(c.2, self.bg.2),
        )
    }
    /// The same colours with the legend under the plot when `narrow`.
    pub fn narrow(mut self, narrow: bool) -> Self {
        self.legend_below = narrow;
        self
    }
    /// Height in device pixels of the strip holding `rows` legend entries.
    pub fn legend_strip(&self, rows: usize) -> u32 {
        self.px(16.0) * rows as u32 + self.px(14.0)
    }
    pub(crate) fn px(&self, v: f64) -> u32 {
        (v * self.scale).round().max(1.0) as u32
    }
    pub(crate) fn font(&self, size: f64) -> TextStyle<'static> {
        // The enum, not the string "sans-serif": plotters' `From<&str>` lowercases it, which
        // pulls Unicode case tables (≈ 4 KB) into the wasm.
        FontDesc::new(FontFamily::SansSerif, size * self.scale, FontStyle::Normal).color(&self.fg)
    }
}
