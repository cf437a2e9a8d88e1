//! Charts, written once against plotters' `DrawingBackend`: the page draws them
//! on a canvas (plotters-canvas), native tests and the SVG export draw them to SVG.
//!
//! [`Model`] holds everything a chart shows, computed from the engine; the
//! `draw_*` functions only draw it. One file per concern: the model (`model`),
//! colours (`theme`), the shared frame (`axes`), legends as data (`legend`), and
//! one file per chart; the tight accountant's charts are in [`tight`].

mod axes;
mod chart_a;
mod chart_b;
mod chart_c;
mod chart_d;
mod legend;
pub mod library;
mod model;
mod theme;
pub mod tight;

pub(crate) use axes::{dashed, log_chart, log_range, mesh, DrawResult, LogChart, Points};
pub use axes::{Mapping, ReadoutPoint};
pub use chart_a::*;
pub use chart_b::*;
pub use chart_c::*;
pub use chart_d::*;
pub(crate) use legend::{drawn, finish, split_legend};
pub use legend::{with_footer, Drawn, Legend, Mark};

pub use model::*;
pub use theme::Theme;

use crate::engine::{bounds, default_orders, Conversion, Error, Optimum, Run, Sgm};
use plotters::coord::combinators::{BindKeyPoints, LogCoord, WithKeyPoints};
use plotters::coord::Shift;
use plotters::prelude::*;
