//! A canvas backend that measures text with the canvas itself.
//!
//! plotters measures text in the browser by inserting a `<span>` with an inline
//! `style` attribute, which a strict Content-Security-Policy (`default-src
//! 'self'`) blocks (console error, wrong label sizes). This wrapper delegates
//! all drawing to plotters-canvas and answers `estimate_text_size` with
//! `CanvasRenderingContext2d::measureText` instead.

use plotters::prelude::DrawingBackend;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use plotters_canvas::CanvasBackend;

type CanvasError = <CanvasBackend as DrawingBackend>::ErrorType;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

pub struct MeasuredCanvas {
    inner: CanvasBackend,
    ctx: CanvasRenderingContext2d,
}

impl MeasuredCanvas {
    pub fn new(canvas: HtmlCanvasElement) -> Option<Self> {
        let ctx = canvas
            .get_context("2d")
            .ok()??
            .dyn_into::<CanvasRenderingContext2d>()
            .ok()?;
        Some(MeasuredCanvas {
            inner: CanvasBackend::with_canvas_object(canvas)?,
            ctx,
        })
    }
}

type R = Result<(), DrawingErrorKind<CanvasError>>;

impl DrawingBackend for MeasuredCanvas {
    type ErrorType = CanvasError;
    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> R {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> R {
        self.inner.present()
    }
    fn draw_pixel(&mut self, p: BackendCoord, c: BackendColor) -> R {
        self.inner.draw_pixel(p, c)
    }
    fn draw_line<S: BackendStyle>(&mut self, a: BackendCoord, b: BackendCoord, s: &S) -> R {
        self.inner.draw_line(a, b, s)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        a: BackendCoord,
        b: BackendCoord,
        s: &S,
        fill: bool,
    ) -> R {
        self.inner.draw_rect(a, b, s, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        p: I,
        s: &S,
    ) -> R {
        self.inner.draw_path(p, s)
    }
    fn draw_circle<S: BackendStyle>(&mut self, c: BackendCoord, r: u32, s: &S, fill: bool) -> R {
        self.inner.draw_circle(c, r, s, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        v: I,
        s: &S,
    ) -> R {
        self.inner.fill_polygon(v, s)
    }
    fn draw_text<T: BackendTextStyle>(&mut self, text: &str, style: &T, pos: BackendCoord) -> R {
        self.inner.draw_text(text, style, pos)
    }
    fn estimate_text_size<T: BackendTextStyle>(
        &self,
        text: &str,
        style: &T,
    ) -> Result<(u32, u32), DrawingErrorKind<CanvasError>> {
        self.ctx.set_font(&format!(
            "{} {}px {}",
            style.style().as_str(),
            style.size(),
            style.family().as_str()
        ));
        let w = self
            .ctx
            .measure_text(text)
            .map(|m| m.width())
            .unwrap_or(text.len() as f64 * style.size() * 0.6);
        Ok((w.ceil() as u32, style.size().ceil() as u32))
    }
}
