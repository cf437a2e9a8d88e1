//! Decimal text → `f64`: the one float parser of the library outside the CLI (input
//! fields, links, axis-label rounding).
//!
//! Natively the conversion is `str::parse::<f64>`. In the wasm build it is the
//! browser's `parseFloat`, which is correctly rounded like Rust's parser: Rust's
//! parser carries a 10 KB table of powers of five (≈ 8 KB gzip) in a page whose wasm
//! budget is 180 KB. Both builds accept exactly the same text, because the decimal
//! grammar below is checked first (`parseFloat` alone would read "1abc" as 1):
//!
//! ```text
//! [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?
//! ```
//!
//! No "inf", "NaN" or hexadecimal; surrounding spaces are the caller's to trim.

/// Whether `s` is a decimal number in the grammar above.
pub fn is_decimal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let mut mantissa = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `s` as the nearest `f64` (±∞ beyond its range), or `None` when `s` is not a
/// decimal number.
pub fn parse(s: &str) -> Option<f64> {
    if !is_decimal(s) {
        return None;
    }
    #[cfg(target_arch = "wasm32")]
    {
        Some(js_sys::Number::parse_float(s))
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        s.parse().ok()
    }
}

/// Which way a printed bound may move: an upper end only up, a lower end only down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Up,
    Down,
}

/// `x` with `digits` decimals, rounded in direction `dir` (an upper bound printed stays one:
/// 2.3819334 → "2.3820" up, "2.3819" down). Rust's own formatting rounds to nearest; the
/// result is read back and moved one unit in the last place when it lies on the wrong side.
/// Non-finite values print as Rust prints them.
pub fn fixed(x: f64, digits: usize, dir: Dir) -> String {
    let s = format!("{x:.digits$}");
    let step = 10f64.powi(-(digits as i32));
    match (parse(&s), dir) {
        (Some(v), Dir::Up) if v < x => format!("{:.digits$}", v + step),
        (Some(v), Dir::Down) if v > x => format!("{:.digits$}", v - step),
        _ => s,
    }
}

/// `x` in scientific notation with `digits` decimals in the mantissa ("1.234568e-5"),
/// rounded in direction `dir` as [`fixed`] does.
pub fn sci(x: f64, digits: usize, dir: Dir) -> String {
    let s = format!("{x:.digits$e}");
    let wrong = match (parse(&s), dir) {
        (Some(v), Dir::Up) => v < x,
        (Some(v), Dir::Down) => v > x,
        (None, _) => false,
    };
    let Some((m, e)) = s.split_once('e').filter(|_| wrong) else {
        return s;
    };
    let (Some(m), Ok(mut e)) = (parse(m), e.parse::<i32>()) else {
        return s;
    };
    let step = 10f64.powi(-(digits as i32));
    // One unit in the last place, up or down, away from zero's side as the sign asks.
    let mut m = if (dir == Dir::Up) == (m > 0.0) {
        m.abs() + step
    } else {
        m.abs() - step
    };
    if m >= 10.0 - step / 2.0 {
        m /= 10.0;
        e += 1;
    } else if m < 1.0 - step / 2.0 {
        m = 10.0 - step;
        e -= 1;
    }
    let sign = if x < 0.0 { "-" } else { "" };
    format!("{sign}{m:.digits$}e{e}")
}

/// `x` with at most 12 significant digits, in its shortest form: an input typed as 1.32 and
/// stored as 1.3199999999999999 reads "1.32" again.
pub fn short(x: f64) -> String {
    match parse(&format!("{x:.11e}")) {
        Some(r) if x.is_finite() => format!("{r}"),
        _ => format!("{x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        for ok in [
            "1", "-1", "+1", "1.", ".5", "1.5", "1e5", "1E+5", "1e-300", "007", "-0", "1e400",
        ] {
            assert!(is_decimal(ok), "{ok}");
            assert_eq!(parse(ok), ok.parse::<f64>().ok(), "{ok}");
        }
        for bad in [
            "", "+", "-", ".", "e5", "1e", "1e+", "1.2.3", "inf", "NaN", "0x10", " 1", "1 ", "1,5",
            "1abc", "--1", "1e5.5",
        ] {
            assert!(!is_decimal(bad), "{bad}");
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    /// The printed ends bound the value from the side asked, and by less than one unit in
    /// the last place; exact decimals are printed as they are.
    #[test]
    fn directed_rounding_keeps_bounds_on_their_side() {
        assert_eq!(fixed(2.3819334, 4, Dir::Up), "2.3820");
        assert_eq!(fixed(2.3819334, 4, Dir::Down), "2.3819");
        assert_eq!(fixed(2.38196, 4, Dir::Down), "2.3819");
        assert_eq!(fixed(2.5, 4, Dir::Up), "2.5000");
        assert_eq!(fixed(0.03125, 4, Dir::Down), "0.0312");
        assert_eq!(fixed(0.03125, 4, Dir::Up), "0.0313");
        assert_eq!(fixed(0.00001, 4, Dir::Down), "0.0000");
        assert_eq!(sci(1.2345671e-5, 6, Dir::Up), "1.234568e-5");
        assert_eq!(sci(1.2345671e-5, 6, Dir::Down), "1.234567e-5");
        assert_eq!(sci(9.9999999e-5, 6, Dir::Up), "1.000000e-4");
        assert_eq!(sci(9.9999999e-5, 6, Dir::Down), "9.999999e-5");
        assert_eq!(sci(1.0000001e-5, 6, Dir::Down), "1.000000e-5");
        assert_eq!(sci(1.00000004e-5, 6, Dir::Down), "1.000000e-5");
        assert_eq!(sci(0.9999999996e-5, 6, Dir::Down), "9.999999e-6");
        assert_eq!(sci(0.0, 2, Dir::Up), "0.00e0");
        assert_eq!(fixed(f64::INFINITY, 4, Dir::Up), "inf");
        let mut x = 1.234e-9;
        while x < 1e4 {
            for (d, f) in [(4, fixed as fn(f64, usize, Dir) -> String), (2, sci)] {
                let unit = if d == 4 { 1e-4 } else { x * 1e-2 * 10.0 };
                let up: f64 = f(x, d, Dir::Up).parse().unwrap();
                let down: f64 = f(x, d, Dir::Down).parse().unwrap();
                assert!(down <= x && x <= up, "{x:e}: {down} {up}");
                assert!(up - down <= unit * (1.0 + 1e-6), "{x:e}: {down} {up}");
            }
            x *= 1.37;
        }
    }

    #[test]
    fn short_drops_binary_noise() {
        assert_eq!(short(1.3199999999999999), "1.32");
        assert_eq!(short(0.1 + 0.2), "0.3");
        assert_eq!(short(1e-5), "0.00001");
        assert_eq!(short(256.0 / 60000.0), "0.00426666666667");
        assert_eq!(short(f64::INFINITY), "inf");
    }
}
