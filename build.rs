//! `cfg(full_engine)`: the whole engine (the ladder, user-level, sampling schemes, μ-GDP,
//! the searches). Native builds always have it; the wasm has it only with the `worker`
//! feature — the worker-only wasm (`make dist` builds it beside the page's), which has no
//! page and no size budget of 180 KB, while the page's wasm stays within that budget.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(full_engine)");
    println!("cargo::rerun-if-changed=build.rs");
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32");
    if !wasm || std::env::var_os("CARGO_FEATURE_WORKER").is_some() {
        println!("cargo::rustc-cfg=full_engine");
    }
}
