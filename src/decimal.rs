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
}
