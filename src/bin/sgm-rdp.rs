//! `sgm-rdp`: the engine on the command line. See `sgm_rdp::cli`.
use std::process::ExitCode;

/// The command line is native; a wasm build of the package has nothing to run.
#[cfg(target_arch = "wasm32")]
fn main() -> ExitCode {
    ExitCode::FAILURE
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> ExitCode {
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
            Err(e) => {
                eprintln!("sgm-rdp batch: unreadable input: {e}");
                ExitCode::FAILURE
            }
        };
    }
    match sgm_rdp::cli::run(&args) {
        Ok(text) => {
            print!("{text}");
            if !text.ends_with('\n') {
                println!();
            }
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("sgm-rdp: {msg}");
            ExitCode::from(2)
        }
    }
}
