//! The native command line (`sgm-rdp`): its words and its `batch` of JSON lines, each
//! translated into the query layer ([`crate::query`]), kept in the library so tests can
//! call it without spawning processes. `run` returns the text for stdout or a one-line
//! error for stderr.

use serde_json::json;
use std::io::{BufRead, Write};

pub use crate::query::{line as batch_line, run, USAGE};

/// `sgm-rdp batch`: JSON lines in, one JSON line out per input line, in order. Lines are
/// read as bytes: a line that is not UTF-8 gets an `{"error": …}` line and the batch goes on.
pub fn batch(mut input: impl BufRead, mut out: impl Write) -> std::io::Result<()> {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        let reply = match std::str::from_utf8(&buf) {
            Ok(line) => crate::query::line(line),
            Err(x) => json!({ "error": format!("line is not valid UTF-8 ({x})") }).to_string(),
        };
        writeln!(out, "{reply}")?;
    }
    out.flush()
}
