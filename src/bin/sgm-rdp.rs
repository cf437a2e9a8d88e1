//! `sgm-rdp`: the engine on the command line. See `sgm_rdp::cli`.
use std::process::ExitCode;

/// The command line is native; a wasm build of the package has nothing to run.
#[cfg(target_arch = "wasm32")]
fn main() -> ExitCode {
    ExitCode::FAILURE
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> ExitCode {
    use std::io::{ErrorKind, Write};
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("batch")
        && !matches!(args.get(1).map(String::as_str), Some("--help" | "-h"))
    {
        // Every key of a run goes in the JSON lines; a flag here would be ignored, so it
        // is refused by name.
        if let Some(extra) = args.get(1) {
            eprintln!(
                "sgm-rdp: batch takes no arguments (got '{extra}'): put every key in the JSON lines"
            );
            return ExitCode::from(2);
        }
        let stdin = std::io::stdin();
        let stdout = std::io::stdout();
        return match sgm_rdp::cli::batch(stdin.lock(), stdout.lock()) {
            Ok(()) => ExitCode::SUCCESS,
            // The reader went away (`| head`): nothing left to say to it.
            Err(e) if e.kind() == ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("sgm-rdp batch: unreadable input: {e}");
                ExitCode::FAILURE
            }
        };
    }
    match sgm_rdp::cli::run(&args) {
        Ok(text) => {
            let nl = if text.ends_with('\n') { "" } else { "\n" };
            let mut out = std::io::stdout().lock();
            match write!(out, "{text}{nl}").and_then(|()| out.flush()) {
                // `sgm-rdp --help | head -3`: the reader closed the pipe; exit quietly.
                Ok(()) => ExitCode::SUCCESS,
                Err(e) if e.kind() == ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("sgm-rdp: cannot write the answer: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(msg) => {
            eprintln!("sgm-rdp: {msg}");
            ExitCode::from(2)
        }
    }
}
