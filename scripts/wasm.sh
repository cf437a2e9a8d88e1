#!/usr/bin/env bash
# The three wasm modules of dist/ (make dist runs this after Trunk has copied the static files):
#
#   sgm-rdp-page.js   + _bg.wasm  the page and the widget (--features page: no JS API; plotters,
#                                 DOM, exact RDP). Main thread; the 180 KB gzip budget.
#   sgm-rdp.js        + _bg.wasm  the JS API (--features api: no page), with sgm-rdp.d.ts; built by
#                                 wasm-pack exactly as `make pkg` builds pkg/ (byte-identical).
#   sgm-rdp-worker.js + _bg.wasm  the JS API over the whole engine (--features worker,
#                                 cfg(full_engine) in build.rs: the ladder, schemes, user-level,
#                                 μ-GDP, batchLine, command), for pld-worker.js and
#                                 sgm-rdp-async.js; built for speed (opt-level 3), not size.
#
# Each has its own cargo output directory (profiles wasm-page, release, wasm-worker), so no build
# overwrites another's artifact. wasm-opt is binaryen 132 from npm (Debian's 108 corrupts
# wasm-bindgen output).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f .tools/env.sh ] && source .tools/env.sh
OUT=${1:-dist}
WHICH=${2:-all}
OPT=node_modules/.bin/wasm-opt
SIZE_FLAGS=(-Oz --converge --strip-producers --low-memory-unused)
mkdir -p "$OUT"

page() {
  cargo build --quiet --offline --lib --target wasm32-unknown-unknown --profile wasm-page --features page
  wasm-bindgen --target web --no-typescript --out-dir "$OUT" --out-name sgm-rdp-page \
    target/wasm32-unknown-unknown/wasm-page/sgm_rdp.wasm
  "$OPT" "${SIZE_FLAGS[@]}" "$OUT/sgm-rdp-page_bg.wasm" -o "$OUT/sgm-rdp-page_bg.wasm"
}

# The JS API as wasm-pack's --target web package in $1 (pkg/ for `make pkg`), then the size
# passes; dist/ takes its module, wasm and types (not wasm-pack's package.json and README).
api_pkg() {
  local dir=$1 mode=()
  [ -n "${SGM_RDP_DEBIAN_WASM:-}" ] && mode=(--mode no-install)
  mkdir -p "$dir"
  wasm-pack --quiet build "${mode[@]}" --target web --release --no-opt --out-dir "$(realpath "$dir")" \
    --out-name sgm-rdp -- --features api >/dev/null
  "$OPT" "${SIZE_FLAGS[@]}" "$dir/sgm-rdp_bg.wasm" -o "$dir/sgm-rdp_bg.wasm"
}

api() {
  api_pkg target/wasm-api
  cp target/wasm-api/sgm-rdp.js target/wasm-api/sgm-rdp_bg.wasm target/wasm-api/sgm-rdp.d.ts "$OUT/"
}

worker() {
  # RUSTFLAGS replaces .cargo/config.toml's wasm32 `opt-level=z` for this build only.
  RUSTFLAGS="-C opt-level=3" cargo build --quiet --offline --lib --target wasm32-unknown-unknown \
    --profile wasm-worker --features worker
  wasm-bindgen --target web --no-typescript --out-dir "$OUT" --out-name sgm-rdp-worker \
    target/wasm32-unknown-unknown/wasm-worker/sgm_rdp.wasm
  "$OPT" -O3 --strip-producers --low-memory-unused "$OUT/sgm-rdp-worker_bg.wasm" -o "$OUT/sgm-rdp-worker_bg.wasm"
}

# dist/package.json (Trunk copies www/'s, version 0.0.0-dev) gets Cargo.toml's version: the one
# place it is set ([workspace.package]).
stamp() {
  local v
  v=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
  [ -f "$OUT/package.json" ] || return 0
  node -e 'const fs = require("fs"); const [f, v] = process.argv.slice(1);
    const p = JSON.parse(fs.readFileSync(f, "utf8")); p.version = v;
    fs.writeFileSync(f, JSON.stringify(p, null, 2) + "\n");' "$OUT/package.json" "$v"
}

case "$WHICH" in
  all) page; api; worker; stamp ;;
  page) page ;;
  api) api ;;
  pkg) api_pkg "$OUT" ;;
  worker) worker ;;
  *) echo "usage: scripts/wasm.sh [out-dir] [all|page|api|pkg|worker]" >&2; exit 2 ;;
esac
