//! `sgm-rdp`: the engine on the command line. See `sgm_rdp::cli`.
use std::process::ExitCode;

/// The command line is native; a wasm build of the package has nothing to run.
#[cfg(target_arch = "wasm32")]
fn main() -> ExitCode {
    ExitCode::FAILURE
}

/// The command line is a process of its own, so it sets glibc's malloc for the work it does:
/// a long tight-accountant call allocates and frees ~200 MB of short-lived vectors, and by
/// default glibc returns freed memory above 128 KB at the heap's top to the kernel (its trim
/// threshold follows the largest freed block) and then takes fresh, zeroed pages back for the
/// next buffer. A fixed mmap threshold of 32 MiB (the most glibc allows; larger blocks still
/// come from mmap) and a trim threshold of 256 MiB keep the freed memory for reuse. The peak
/// is unchanged (the process holds what it held at its largest); q 1.136e-7, σ 0.3097,
/// T 1.9·10⁸, δ 1e-5 as a process: ~7,900 page faults instead of ~31,000–35,000, 0.32–0.33 s
/// instead of 0.37–0.48 s (docs/performance.md). The library does not do this: its host (the
/// Python interpreter, a user's program) owns its allocator.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only sets two of glibc's malloc parameters; it is called first in
    // main, before any other thread exists, and a refused value (return 0) leaves the default.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

#[cfg(not(any(target_arch = "wasm32", all(target_os = "linux", target_env = "gnu"))))]
fn keep_freed_memory() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> ExitCode {
    use std::io::{ErrorKind, Write};
    keep_freed_memory();
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
