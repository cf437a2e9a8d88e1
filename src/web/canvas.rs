//! Backends that measure text with a canvas.
//!
//! plotters measures text in the browser by inserting a `<span>` with an inline
//! `style` attribute, which a strict Content-Security-Policy (`default-src
//! 'self'`) blocks (console error, wrong label sizes). [`Measured`] wraps any
//! backend (plotters-canvas for the page, the SVG backend for exports),
//! delegates all drawing to it and answers `estimate_text_size` with
//! `CanvasRenderingContext2d::measureText` instead.

use plotters::prelude::DrawingBackend;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

pub struct Measured<B> {
    inner: B,
    ctx: CanvasRenderingContext2d,
}

pub type MeasuredCanvas = Measured<CanvasBackend>;

fn context_2d(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas
        .get_context("2d")
        .ok()??
        .dyn_into::<CanvasRenderingContext2d>()
        .ok()
}

impl Measured<CanvasBackend> {
    pub fn new(canvas: HtmlCanvasElement) -> Option<Self> {
        let ctx = context_2d(&canvas)?;
        Some(Measured {
            inner: CanvasBackend::with_canvas_object(canvas)?,
            ctx,
        })
    }
}

impl<B> Measured<B> {
    /// Wrap `inner`, measuring text on a detached canvas.
    pub fn detached(inner: B) -> Option<Self> {
        let canvas = web_sys::window()?
            .document()?
            .create_element("canvas")
            .ok()?;
        let ctx = context_2d(canvas.dyn_ref::<HtmlCanvasElement>()?)?;
        Some(Measured { inner, ctx })
    }
}

type R<B> = Result<(), DrawingErrorKind<<B as DrawingBackend>::ErrorType>>;

impl<B: DrawingBackend> DrawingBackend for Measured<B> {
    type ErrorType = B::ErrorType;
    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> R<B> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> R<B> {
        self.inner.present()
    }
    fn draw_pixel(&mut self, p: BackendCoord, c: BackendColor) -> R<B> {
        self.inner.draw_pixel(p, c)
    }
    fn draw_line<S: BackendStyle>(&mut self, a: BackendCoord, b: BackendCoord, s: &S) -> R<B> {
        self.inner.draw_line(a, b, s)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        a: BackendCoord,
        b: BackendCoord,
        s: &S,
        fill: bool,
    ) -> R<B> {
        self.inner.draw_rect(a, b, s, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        p: I,
        s: &S,
    ) -> R<B> {
        self.inner.draw_path(p, s)
    }
    fn draw_circle<S: BackendStyle>(&mut self, c: BackendCoord, r: u32, s: &S, fill: bool) -> R<B> {
        self.inner.draw_circle(c, r, s, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        v: I,
        s: &S,
    ) -> R<B> {
        self.inner.fill_polygon(v, s)
    }
    fn draw_text<T: BackendTextStyle>(&mut self, text: &str, style: &T, pos: BackendCoord) -> R<B> {
        self.inner.draw_text(text, style, pos)
    }
    fn estimate_text_size<T: BackendTextStyle>(
        &self,
        text: &str,
        style: &T,
    ) -> Result<(u32, u32), DrawingErrorKind<B::ErrorType>> {
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
