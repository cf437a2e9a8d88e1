//! The page's writes as values: each names an element by id and what it gets (text
//! content, a value, an attribute, a class) — never HTML. The page model and the headline
//! return them; web carries them out.

/// One write to the page, by element id (text content and attributes: nothing here
/// reaches innerHTML).
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Text(&'static str, String),
    /// A box's or a menu's value.
    Value(&'static str, String),
    Hidden(&'static str, bool),
    Class(&'static str, &'static str, bool),
    Attr(&'static str, &'static str, String),
    NoAttr(&'static str, &'static str),
    /// A table body's rows (selector, three cells each).
    Rows(&'static str, Vec<[String; 3]>),
}
