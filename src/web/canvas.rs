//! The one drawing backend of the web build, measuring text with a canvas.
//!
//! plotters measures text in the browser by inserting a `<span>` with an inline
//! `style` attribute, which a strict Content-Security-Policy (`default-src
//! 'self'`) blocks (console error, wrong label sizes). [`Surface`] delegates all
//! drawing to its backend and answers `estimate_text_size` with
//! `CanvasRenderingContext2d::measureText` instead.
//!
//! Canvas (the page and widget) and SVG (exports) are one type, [`Surface`], so
//! plotters' generic drawing code and every chart function are compiled once for
//! the wasm, not once per backend (that saved ~9 KB gzip).

use plotters::prelude::{DrawingBackend, SVGBackend};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use plotters_canvas::CanvasBackend;
use std::error::Error;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// A canvas on the page, or an SVG document being written (exports), with the 2D context
/// that measures its text.
pub struct Surface<'a> {
    inner: Backend<'a>,
    ctx: CanvasRenderingContext2d,
}

enum Backend<'a> {
    Canvas(CanvasBackend),
    Svg(SVGBackend<'a>),
}

/// The page's and the widget's canvases.
pub type MeasuredCanvas = Surface<'static>;

/// A drawing error of either surface, as text.
#[derive(Debug)]
pub struct SurfaceError(String);

impl std::fmt::Display for SurfaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl Error for SurfaceError {}

/// A surface's error as text (the SVG writer's: fixed, keeping io's error table out of wasm).
const SVG: fn(&std::io::Error) -> String = |_| "the SVG writer failed".into();
fn lift<T, E: Error + Send + Sync>(r: Drawn<T, E>, say: fn(&E) -> String) -> Lifted<T> {
    r.map_err(|e| match e {
        DrawingErrorKind::DrawingError(e) => DrawingErrorKind::DrawingError(SurfaceError(say(&e))),
        DrawingErrorKind::FontError(f) => DrawingErrorKind::FontError(f),
    })
}

/// Call the same method on whichever surface it is.
macro_rules! each {
    ($s:expr, $b:ident => $call:expr) => {
        match &mut $s.inner {
            Backend::Canvas($b) => lift($call, |e| e.to_string()),
            Backend::Svg($b) => lift($call, SVG),
        }
    };
}

fn context_2d(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas
        .get_context("2d")
        .ok()??
        .dyn_into::<CanvasRenderingContext2d>()
        .ok()
}

impl Surface<'static> {
    /// Draw on `canvas`, measuring text with its own context.
    pub fn canvas(canvas: HtmlCanvasElement) -> Option<Self> {
        let ctx = context_2d(&canvas)?;
        Some(Surface {
            inner: Backend::Canvas(CanvasBackend::with_canvas_object(canvas)?),
            ctx,
        })
    }
}

impl<'a> Surface<'a> {
    /// Write SVG, measuring text on a detached canvas.
    pub fn svg(svg: SVGBackend<'a>) -> Option<Self> {
        let canvas = web_sys::window()?
            .document()?
            .create_element("canvas")
            .ok()?;
        let ctx = context_2d(canvas.dyn_ref::<HtmlCanvasElement>()?)?;
        Some(Surface {
            inner: Backend::Svg(svg),
            ctx,
        })
    }
}

type Lifted<T> = Drawn<T, SurfaceError>;
type Drawn<T, E> = Result<T, DrawingErrorKind<E>>;
type R = Lifted<()>;

impl DrawingBackend for Surface<'_> {
    type ErrorType = SurfaceError;
    fn get_size(&self) -> (u32, u32) {
        match &self.inner {
            Backend::Canvas(b) => b.get_size(),
            Backend::Svg(b) => b.get_size(),
        }
    }
    fn ensure_prepared(&mut self) -> R {
        each!(self, b => b.ensure_prepared())
    }
    fn present(&mut self) -> R {
        each!(self, b => b.present())
    }
    fn draw_pixel(&mut self, p: BackendCoord, c: BackendColor) -> R {
        each!(self, b => b.draw_pixel(p, c))
    }
    fn draw_line<S: BackendStyle>(&mut self, a: BackendCoord, c: BackendCoord, s: &S) -> R {
        each!(self, b => b.draw_line(a, c, s))
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        a: BackendCoord,
        c: BackendCoord,
        s: &S,
        fill: bool,
    ) -> R {
        each!(self, b => b.draw_rect(a, c, s, fill))
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        p: I,
        s: &S,
    ) -> R {
        each!(self, b => b.draw_path(p, s))
    }
    fn draw_circle<S: BackendStyle>(&mut self, c: BackendCoord, r: u32, s: &S, fill: bool) -> R {
        each!(self, b => b.draw_circle(c, r, s, fill))
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        v: I,
        s: &S,
    ) -> R {
        each!(self, b => b.fill_polygon(v, s))
    }
    fn draw_text<T: BackendTextStyle>(&mut self, text: &str, style: &T, pos: BackendCoord) -> R {
        match &mut self.inner {
            Backend::Canvas(b) => lift(b.draw_text(text, style, pos), |e| e.to_string()),
            // plotters' SVG backend writes font-size = size / 1.24; undo it, so an SVG
            // export's text is the size the canvas draws (11 px labels stay 11 px).
            Backend::Svg(b) => lift(b.draw_text(text, &SvgSized(style), pos), SVG),
        }
    }
    fn estimate_text_size<T: BackendTextStyle>(
        &self,
        text: &str,
        style: &T,
    ) -> Result<(u32, u32), DrawingErrorKind<SurfaceError>> {
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

/// A text style whose size is multiplied by 1.24 (see `Surface::draw_text`).
struct SvgSized<'a, T>(&'a T);

impl<T: BackendTextStyle> BackendTextStyle for SvgSized<'_, T> {
    type FontError = T::FontError;
    fn color(&self) -> BackendColor {
        self.0.color()
    }
    fn size(&self) -> f64 {
        self.0.size() * 1.24
    }
    fn transform(&self) -> plotters_backend::FontTransform {
        self.0.transform()
    }
    fn style(&self) -> plotters_backend::FontStyle {
        self.0.style()
    }
    fn anchor(&self) -> plotters_backend::text_anchor::Pos {
        self.0.anchor()
    }
    fn family(&self) -> plotters_backend::FontFamily<'_> {
        self.0.family()
    }
    fn layout_box(&self, text: &str) -> Result<((i32, i32), (i32, i32)), Self::FontError> {
        self.0.layout_box(text)
    }
    fn draw<E, F: FnMut(i32, i32, BackendColor) -> Result<(), E>>(
        &self,
        text: &str,
        pos: BackendCoord,
        draw: F,
    ) -> Result<Result<(), E>, Self::FontError> {
        self.0.draw(text, pos, draw)
    }
}

// ---- Painting the page's and the widget's canvases (sized to the device's pixels, the
// theme of the page) ----

use super::dom::{by_id, window};
use crate::render::Theme;
use crate::ui::layout::NARROW;
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, IntoDrawingArea};

/// Draw on `canvas` with a chart function that returns plotters' `Result`; a failure is
/// logged once per canvas (never silent, never a flood while a slider moves: the canvas
/// keeps a `data-failed` mark).
pub(crate) fn paint_canvas<E: std::fmt::Display>(
    canvas: &HtmlCanvasElement,
    dark: bool,
    name: &'static str,
    f: impl FnOnce(&DrawingArea<MeasuredCanvas, Shift>, &Theme) -> Result<(), E>,
) {
    let mut failure = None;
    paint(canvas, dark, |root, th| match f(root, th) {
        Ok(()) => true,
        Err(e) => {
            failure = Some(e.to_string());
            false
        }
    });
    if let Some(e) = failure {
        if !canvas.has_attribute("data-failed") {
            let _ = canvas.set_attribute("data-failed", "");
            web_sys::console::error_1(&format!("sgm-rdp: drawing {name} failed: {e}").into());
        }
    }
}

/// Draw on the page canvas `id`; a failure is logged once with the chart's id.
pub(crate) fn draw<E: std::fmt::Display>(
    id: &'static str,
    dark: bool,
    f: impl FnOnce(&DrawingArea<MeasuredCanvas, Shift>, &Theme) -> Result<(), E>,
) {
    if let Some(canvas) = by_id::<HtmlCanvasElement>(id) {
        paint_canvas(&canvas, dark, id, f);
    }
}

/// Size `canvas`'s backing store to its CSS size × devicePixelRatio, then draw.
pub(crate) fn paint(
    canvas: &HtmlCanvasElement,
    dark: bool,
    f: impl FnOnce(&DrawingArea<MeasuredCanvas, Shift>, &Theme) -> bool,
) {
    let dpr = window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0)
        .max(1.0);
    let (w, h) = (
        canvas.client_width().max(200) as f64,
        canvas.client_height().max(150) as f64,
    );
    let (pw, ph) = ((w * dpr).round() as u32, (h * dpr).round() as u32);
    if canvas.width() != pw || canvas.height() != ph {
        canvas.set_width(pw);
        canvas.set_height(ph);
    }
    let Some(backend) = Surface::canvas(canvas.clone()) else {
        return;
    };
    let th = if dark {
        Theme::dark(dpr)
    } else {
        Theme::light(dpr)
    }
    .narrow(w < NARROW);
    f(&backend.into_drawing_area(), &th);
}
