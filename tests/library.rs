//! "What your library reports": the table's numbers and the code snippets.
#![cfg(not(target_arch = "wasm32"))]

use sgm_rdp::render::library::{opacus_orders, rows, snippets};
use sgm_rdp::render::Inputs;
use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn mnist_rows_match_the_tools() {
    let i = Inputs::mnist();
    let r = rows(&i, Some((2.381933, 2.381204))).unwrap();
    assert_eq!(r.len(), 6);
    assert_eq!(opacus_orders().len(), 151);
    // dp_accounting 0.6.0's RdpAccountant prints 2.59666 for this run (README example).
    let dpa = r
        .iter()
        .find(|x| x.tool.starts_with("dp_accounting Rdp"))
        .unwrap();
    assert!((dpa.epsilon.unwrap() - 2.59666).abs() < 1e-5);
    // Opacus has order 8.1 too: the same grid optimum for this run.
    let op = r.iter().find(|x| x.tool.contains("\"rdp\"")).unwrap();
    assert!((op.epsilon.unwrap() - 2.59666).abs() < 1e-3);
    let ours = r.iter().find(|x| x.tool == "sgm-rdp, exact RDP").unwrap();
    assert!(ours.epsilon.unwrap() <= dpa.epsilon.unwrap());
    assert!(r.last().unwrap().note.contains("[2.381204, 2.381933]"));
    let pending = rows(&i, None).unwrap();
    assert!(pending
        .iter()
        .any(|x| x.epsilon.is_none() && x.note == "computing…"));
}

/// Every snippet is valid Python (`ast.parse`) and carries the run's values.
#[test]
fn snippets_parse_as_python_with_the_values() {
    let mut i = Inputs::mnist();
    i.delta = 1e-5;
    for (title, code) in snippets(&i, 3.0) {
        assert!(
            code.contains("1.1") && code.contains("14063") && code.contains("1.0e-5"),
            "{title}: {code}"
        );
        let mut child = Command::new("python3")
            .args(["-c", "import ast, sys; ast.parse(sys.stdin.read())"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(code.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{title} does not parse: {}\n{code}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
