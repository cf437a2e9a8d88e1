//! The ui layer's parser under plain `cargo test`: any text gives a value or a message
//! that names its field, never a panic; valid values round-trip through the box format.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use sgm_rdp::ui::fields::{parse_field, Field};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn parser_never_panics(text in any::<String>(), which in 0usize..4) {
        let f = Field::ALL[which];
        match parse_field(f, &text) {
            Ok(v) => prop_assert!(v.is_finite()),
            Err(m) => prop_assert!(!m.is_empty() && m.len() < 300),
        }
    }

    #[test]
    fn formatted_values_parse_back(x in -6.0f64..-0.5, which in 0usize..4) {
        let f = Field::ALL[which];
        let v = f.from_slider(x * if f == Field::Steps { -1.0 } else { 1.0 });
        if let Ok(back) = parse_field(f, &f.format(v)) {
            prop_assert!((back - v).abs() <= 1e-12 * v.abs().max(1.0));
        }
    }
}

/// The dataset boxes' parser: as forgiving as the fields, and never a silent default.
#[test]
fn plain_numbers_for_the_dataset_terms() {
    use sgm_rdp::ui::fields::parse_number;
    assert_eq!(parse_number(" 60,000 "), Ok(60000.0));
    assert_eq!(parse_number("60 000"), Ok(60000.0));
    assert_eq!(parse_number("\u{2212}2"), Ok(-2.0));
    assert_eq!(parse_number("512"), Ok(512.0));
    assert!(parse_number("").is_err());
    assert!(parse_number("12abc").is_err());
}

/// The preset menu follows the values: a preset's name while they match, "—" otherwise.
#[test]
fn preset_menu_follows_the_values() {
    use sgm_rdp::engine::Conversion;
    use sgm_rdp::ui::fields::{preset, preset_of, PRESETS};
    for name in PRESETS {
        let mut i = preset(name, Conversion::Classic).unwrap();
        assert_eq!(preset_of(&i), name);
        i.sigma *= 1.01;
        assert_eq!(preset_of(&i), "");
    }
}
