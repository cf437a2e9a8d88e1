//! The page's and the widget's fields: names, slider ranges, the one parser for typed
//! text, attributes and link values, and the presets. No DOM: tested natively.

use crate::engine::math::{ln, log10, powf};
use crate::engine::{params, Conversion, Sgm};
use crate::render::{fmt_num, Inputs};

/// URL format version.
pub const URL_VERSION: &str = "1";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Q,
    Sigma,
    Steps,
    Delta,
}

impl Field {
    pub const ALL: [Field; 4] = [Field::Q, Field::Sigma, Field::Steps, Field::Delta];
    pub fn id(self) -> &'static str {
        match self {
            Field::Q => "q",
            Field::Sigma => "sigma",
            Field::Steps => "steps",
            Field::Delta => "delta",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Field::Q => "sample_rate q",
            Field::Sigma => "noise_multiplier σ",
            Field::Steps => "steps",
            Field::Delta => "δ",
        }
    }
    pub fn get(self, i: &Inputs) -> f64 {
        match self {
            Field::Q => i.q,
            Field::Sigma => i.sigma,
            Field::Steps => i.steps as f64,
            Field::Delta => i.delta,
        }
    }
    pub fn set(self, i: &mut Inputs, v: f64) {
        match self {
            Field::Q => i.q = v,
            Field::Sigma => i.sigma = v,
            Field::Steps => i.steps = v as u64,
            Field::Delta => i.delta = v,
        }
    }
    pub fn format(self, v: f64) -> String {
        match self {
            Field::Steps => format!("{}", v as u64),
            _ => fmt_num(v),
        }
    }
    /// The slider's log10 range (the page's sliders and the widget's).
    pub fn slider_range(self) -> (f64, f64) {
        match self {
            Field::Q => (-8.0, 0.0),
            Field::Sigma => (-1.0, 2.0),
            Field::Steps => (0.0, 9.0),
            Field::Delta => (-12.0, -1.0),
        }
    }
    /// Value → the slider's position (log10), as the range input's text.
    pub fn slider_position(self, v: f64) -> String {
        format!("{:.4}", log10(v))
    }

    /// Slider position (log10) → the nearest round value (two significant digits: 1.1,
    /// not 1.10154; steps a whole number), within the slider's range.
    pub fn from_slider(self, x: f64) -> f64 {
        let (lo, hi) = self.slider_range();
        self.round(powf(10f64, x.clamp(lo, hi)))
    }

    /// The nearest round value to `v` (see [`Field::from_slider`]).
    pub fn round(self, v: f64) -> f64 {
        let Some((n, k)) = ladder(v) else { return v };
        let (lo, hi) = self.slider_range();
        // The nearest of n·10^k and (n+1)·10^k (in log terms, as the slider moves).
        let (a, b) = (rung(n, k), rung(n + 1, k));
        let near = if ln(v / a) <= ln(b / v) { a } else { b };
        self.whole(near.clamp(powf(10f64, lo), powf(10f64, hi)))
    }

    /// The next round value above (`up`) or below `v`: what an arrow key moves to; with
    /// `decade`, ×10 or ÷10 (Page Up/Down). Stays within the slider's range.
    pub fn step(self, v: f64, up: bool, decade: bool) -> f64 {
        let (lo, hi) = self.slider_range();
        let (lo, hi) = (powf(10f64, lo), powf(10f64, hi));
        let Some((n, k)) = ladder(v) else { return v };
        let next = if decade {
            self.round(if up { v * 10.0 } else { v / 10.0 })
        } else if up {
            // The first rung strictly above v (v may sit between rungs after typing).
            let r = rung(n + 1, k);
            if self == Field::Steps && r - v < 1.0 {
                v + 1.0
            } else {
                r
            }
        } else {
            let r = rung(n, k);
            let below = match (r < v, n) {
                (true, _) => r,
                (false, 10) => rung(99, k - 1),
                _ => rung(n - 1, k),
            };
            if self == Field::Steps && v - below < 1.0 {
                v - 1.0
            } else {
                below
            }
        };
        self.whole(next.clamp(lo, hi))
    }

    fn whole(self, v: f64) -> f64 {
        match self {
            Field::Steps => v.round().max(1.0),
            _ => v,
        }
    }
}

/// `v` = m·10^k with m ∈ [10, 100): (⌊m⌋, k), so the two-digit rungs around v are
/// ⌊m⌋·10^k ≤ v < (⌊m⌋+1)·10^k. None for v ≤ 0 or not finite.
fn ladder(v: f64) -> Option<(i32, i32)> {
    if !(v.is_finite() && v > 0.0) {
        return None;
    }
    let mut k = log10(v).floor() as i32 - 1;
    // Correct log10's rounding at the decade edges.
    if rung(10, k) > v {
        k -= 1;
    } else if rung(100, k) <= v {
        k += 1;
    }
    let mut n = (v / 10f64.powi(k)).floor() as i32;
    // Correct the division's rounding so rung(n, k) ≤ v < rung(n + 1, k).
    if rung(n, k) > v {
        n -= 1;
    } else if rung(n + 1, k) <= v {
        n += 1;
    }
    Some((n.clamp(10, 99), k))
}

/// n·10^k as the shortest decimal reads it (1.1, not 1.1000000000000001). n may be 9 or
/// 100 (a neighbour decade's rung).
fn rung(n: i32, k: i32) -> f64 {
    crate::decimal::parse(&format!("{n}e{k}")).unwrap_or(f64::NAN)
}

/// Parse and validate one field's text; Err is the message shown next to it, naming
/// the field. Forgiving where the meaning is clear: surrounding spaces, a Unicode minus,
/// thousands separators ("60,000", "60 000"), and for q a fraction ("256/60000"); a
/// comma that could be a decimal comma ("1,5") is refused with what to type instead.
pub fn parse_field(f: Field, text: &str) -> Result<f64, String> {
    let v = number(f, text).map_err(|m| format!("{}: {m}", f.label()))?;
    match f {
        Field::Q => {
            if v == 0.0 {
                return Err(
                    "sample_rate q = 0 means no example is ever used: enter q in (0, 1]".into(),
                );
            }
            Sgm::new(v, 1.0).map(|_| v).map_err(|e| e.to_string())
        }
        Field::Sigma => Sgm::new(0.5, v).map(|_| v).map_err(|e| e.to_string()),
        Field::Steps => params::steps_from_f64(v)
            .map(|t| t as f64)
            .map_err(|e| e.to_string()),
        Field::Delta => params::check_delta(v).map_err(|e| e.to_string()),
    }
}

fn clip(s: &str) -> String {
    s.chars().take(24).collect()
}

/// The presets' names, as the page's menu lists them.
pub const PRESETS: [&str; 3] = ["mnist", "cifar", "tiny"];

/// The preset whose q, σ, T and δ the inputs hold, or "" (the menu's "—") when none.
pub fn preset_of(i: &Inputs) -> &'static str {
    PRESETS
        .into_iter()
        .find(|n| {
            preset(n, i.conversion).is_some_and(|p| {
                (p.q, p.sigma, p.steps, p.delta) == (i.q, i.sigma, i.steps, i.delta)
            })
        })
        .unwrap_or("")
}

pub fn preset(name: &str, conversion: Conversion) -> Option<Inputs> {
    let (q, sigma, steps, delta) = match name {
        "mnist" => {
            // Defined once, in `Inputs::mnist` (the page's and the widget's default).
            let m = Inputs::mnist();
            (m.q, m.sigma, m.steps, m.delta)
        }
        "cifar" => (4096.0 / 50000.0, 3.0, 2000, 1e-5),
        "tiny" => (1e-6, 0.8, 100_000_000, 1e-8),
        _ => return None,
    };
    Some(Inputs {
        q,
        sigma,
        steps,
        delta,
        conversion,
        omega: 32.0,
    })
}

/// A plain number as the fields accept it ("60,000", "60 000", "1e-5", a Unicode minus,
/// surrounding spaces), for boxes that are not one of the four fields (dataset terms).
pub fn parse_number(text: &str) -> Result<f64, String> {
    let t: String = text
        .trim()
        .chars()
        .map(|c| if c == '\u{2212}' { '-' } else { c })
        .collect();
    plain(&t)
}

/// ω of chart A's tCDP line (Mironov–Talwar–Zhang §4): a number in (0, 999 999), so that
/// the order 1 + ω stays within the engine's orders.
pub fn parse_omega(text: &str) -> Result<f64, String> {
    match parse_number(text) {
        Ok(w) if w.is_finite() && w > 0.0 && w < crate::engine::MAX_ORDER - 1.0 => Ok(w),
        _ => Err("ω must be a number in (0, 999999)".into()),
    }
}

/// Chart D's inputs (Chaudhuri et al.'s capacity-bounded view): the Gaussian σ and the
/// Laplace ε, each in (0, 1000]; the message names the bad one.
pub fn parse_capacity(sigma: &str, eps: &str) -> Result<(f64, f64), &'static str> {
    let read = |t: &str| {
        parse_number(t)
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0 && *v <= 1e3)
    };
    match (read(sigma), read(eps)) {
        (Some(s), Some(e)) => Ok((s, e)),
        (None, _) => Err("Gaussian σ must be a number in (0, 1000]"),
        (_, None) => Err("Laplace ε must be a number in (0, 1000]"),
    }
}

/// The number in `text` (see [`parse_field`]).
fn number(f: Field, text: &str) -> Result<f64, String> {
    let t: String = text
        .trim()
        .chars()
        .map(|c| if c == '\u{2212}' { '-' } else { c })
        .collect();
    if t.is_empty() {
        return Err("enter a number".into());
    }
    if let Some((a, b)) = t.split_once('/') {
        if f != Field::Q {
            return Err(format!("'{}' is not a number", clip(&t)));
        }
        let (a, b) = (plain(a.trim())?, plain(b.trim())?);
        if b == 0.0 {
            return Err(format!("'{}' divides by zero", clip(&t)));
        }
        return Ok(a / b);
    }
    plain(&t)
}

/// A number with optional thousands separators (',' or spaces between groups of 3).
fn plain(t: &str) -> Result<f64, String> {
    if let Some(v) = crate::decimal::parse(t) {
        return Ok(v);
    }
    let sep = |c: char| c == ',' || c == ' ' || c == '\u{a0}' || c == '\u{2009}' || c == '\u{202f}';
    if t.contains(sep) {
        let (int, frac) = match t.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (t, None),
        };
        let groups: Vec<&str> = int.split(sep).collect();
        let grouped = groups.len() > 1
            && (1..=3).contains(&groups[0].trim_start_matches('-').len())
            && groups[1..].iter().all(|g| g.len() == 3)
            && groups.iter().all(|g| {
                !g.is_empty()
                    && g.trim_start_matches('-')
                        .chars()
                        .all(|c| c.is_ascii_digit())
            });
        if grouped {
            let joined = groups.concat() + &frac.map(|f| format!(".{f}")).unwrap_or_default();
            if let Some(v) = crate::decimal::parse(&joined) {
                return Ok(v);
            }
        }
        if t.contains(',') && !t.contains('.') {
            let as_point = t.replace(',', ".");
            if crate::decimal::is_decimal(&as_point) {
                return Err(format!(
                    "'{}' is ambiguous: use a point for decimals ({as_point}) or group thousands in threes",
                    clip(t)
                ));
            }
        }
    }
    Err(format!("'{}' is not a number", clip(t)))
}

/// A rate of an attack-risk target as typed (TPR or FPR): a number in (0, 1).
pub fn parse_rate(text: &str, name: &str) -> Result<f64, String> {
    let x = parse_number(text).map_err(|m| format!("{name}: {m}"))?;
    if x > 0.0 && x < 1.0 {
        Ok(x)
    } else {
        Err(format!(
            "{name} must be a number between 0 and 1, got {}",
            fmt_num(x)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgiving_numbers() {
        assert_eq!(parse_field(Field::Steps, "60,000"), Ok(60000.0));
        assert_eq!(parse_field(Field::Steps, " 60 000 "), Ok(60000.0));
        assert_eq!(parse_field(Field::Steps, "1,234,567"), Ok(1234567.0));
        assert_eq!(parse_field(Field::Q, "1/60000"), Ok(1.0 / 60000.0));
        assert_eq!(parse_field(Field::Q, "256 / 60,000"), Ok(256.0 / 60000.0));
        assert_eq!(parse_field(Field::Delta, "1e-5"), Ok(1e-5));
        assert_eq!(
            parse_field(Field::Sigma, "\u{2212}1").unwrap_err(),
            "noise_multiplier sigma must be > 0, got -1"
        );
        let e = parse_field(Field::Sigma, "1,5").unwrap_err();
        assert!(e.contains("use a point for decimals (1.5)"), "{e}");
        assert!(parse_field(Field::Steps, "1/2")
            .unwrap_err()
            .starts_with("steps: "));
        assert!(parse_field(Field::Q, "1/0")
            .unwrap_err()
            .contains("divides by zero"));
        assert!(parse_field(Field::Q, "")
            .unwrap_err()
            .contains("enter a number"));
    }

    #[test]
    fn sliders_land_on_round_values() {
        // Positions near log10(1.1) give 1.1, not 1.10154.
        assert_eq!(Field::Sigma.from_slider(log10(1.1f64) + 0.0005), 1.1);
        assert_eq!(Field::Sigma.from_slider(0.0), 1.0);
        assert_eq!(Field::Delta.from_slider(-5.0), 1e-5);
        assert_eq!(Field::Steps.from_slider(4.148), 14000.0);
        assert_eq!(Field::Steps.from_slider(0.1), 1.0);
        assert_eq!(Field::Q.from_slider(0.0), 1.0);
        assert_eq!(Field::Q.from_slider(9.0), 1.0, "clamped to the range");
        for f in Field::ALL {
            let (lo, hi) = f.slider_range();
            for i in 0..=2000 {
                let x = lo + (hi - lo) * i as f64 / 2000.0;
                let v = f.from_slider(x);
                // Two significant digits, written exactly (or a whole number of steps).
                let s = f.format(v);
                let digits = s
                    .split(['e', 'E'])
                    .next()
                    .unwrap_or("")
                    .chars()
                    .filter(char::is_ascii_digit)
                    .collect::<String>();
                let sig = digits.trim_start_matches('0').trim_end_matches('0').len();
                assert!(sig <= 2, "{f:?} at {x}: {s}");
                assert!(parse_field(f, &s).is_ok(), "{f:?} {s}");
                // Within a rung of the position (≤ 5 % in value; steps below 10 move
                // in whole steps).
                let rung = if f == Field::Steps {
                    log10(1.0 + 1.0 / v)
                } else {
                    0.0
                };
                assert!(
                    (log10(v) - x).abs() < 0.022f64.max(rung),
                    "{f:?} at {x}: {v}"
                );
            }
        }
    }

    #[test]
    fn arrow_keys_move_to_the_next_round_value() {
        assert_eq!(Field::Sigma.step(1.1, true, false), 1.2);
        assert_eq!(Field::Sigma.step(1.1, false, false), 1.0);
        assert_eq!(Field::Sigma.step(1.0, false, false), 0.99);
        assert_eq!(Field::Sigma.step(9.9, true, false), 10.0);
        // Between rungs (typed): to the rung above or below.
        assert_eq!(Field::Sigma.step(1.234, true, false), 1.3);
        assert_eq!(Field::Sigma.step(1.234, false, false), 1.2);
        assert_eq!(Field::Q.step(256.0 / 60000.0, true, false), 0.0043);
        assert_eq!(Field::Q.step(256.0 / 60000.0, false, false), 0.0042);
        assert_eq!(Field::Steps.step(14063.0, true, false), 15000.0);
        assert_eq!(Field::Steps.step(3.0, true, false), 4.0);
        assert_eq!(Field::Steps.step(1.0, false, false), 1.0, "clamped");
        assert_eq!(Field::Delta.step(1e-5, true, true), 1e-4);
        assert_eq!(Field::Delta.step(1e-5, false, true), 1e-6);
        assert_eq!(Field::Q.step(1.0, true, false), 1.0, "clamped");
        // Up then down returns (from a rung).
        for f in Field::ALL {
            let (lo, hi) = f.slider_range();
            let mut v = f.round(powf(10f64, (lo + hi) / 2.0));
            for _ in 0..50 {
                let up = f.step(v, true, false);
                assert!(up > v, "{f:?} {v}");
                assert_eq!(f.step(up, false, false), v, "{f:?} {v} → {up}");
                v = up;
            }
        }
    }

    #[test]
    fn every_message_names_its_field() {
        for f in Field::ALL {
            for t in ["x", "", "1,5", "-3", "1e999", "0", "1/", "nan"] {
                if let Err(m) = parse_field(f, t) {
                    // Parse errors carry the label; the engine's own messages name the
                    // parameter in the tools' words.
                    let engine_name = match f {
                        Field::Q => "sample_rate q",
                        Field::Sigma => "noise_multiplier sigma",
                        Field::Steps => "steps",
                        Field::Delta => "delta",
                    };
                    assert!(
                        m.starts_with(&format!("{}: ", f.label())) || m.contains(engine_name),
                        "{m}"
                    );
                }
            }
        }
    }
}
