#!/usr/bin/env bash
# The worker-only wasm: dist/sgm-rdp-worker.js + dist/sgm-rdp-worker_bg.wasm.
#
# pld-worker.js (the Web Worker shared by the page and every widget) loads it instead of the
# page's wasm: the JS API over the *whole* engine (`--features worker`, cfg(full_engine) in
# build.rs: the ladder for long runs, and what the page's 180 KB budget has no room for),
# without the page (no plotters canvas, no DOM). Built for speed (opt-level 3), not size:
# it is fetched once, by the worker, off the main thread. Run after `trunk build` (make dist).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f .tools/env.sh ] && source .tools/env.sh
OUT=${1:-dist}
# RUSTFLAGS replaces .cargo/config.toml's wasm32 `opt-level=z` for this build only.
RUSTFLAGS="-C opt-level=3" cargo build --quiet --offline --lib --target wasm32-unknown-unknown \
  --profile wasm-worker --features worker
wasm-bindgen --target web --no-typescript --out-dir "$OUT" --out-name sgm-rdp-worker \
  target/wasm32-unknown-unknown/wasm-worker/sgm_rdp.wasm
node_modules/.bin/wasm-opt -O3 --strip-producers --low-memory-unused \
  "$OUT/sgm-rdp-worker_bg.wasm" -o "$OUT/sgm-rdp-worker_bg.wasm"
