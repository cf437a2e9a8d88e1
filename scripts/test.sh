#!/usr/bin/env bash
# Every test, in order; one summary line at the end; non-zero exit on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
declare -a results=()
fail=0
step() { # name command...
  local name=$1; shift
  printf '\n=== %s\n' "$name"
  local t0=$SECONDS
  if "$@"; then results+=("$name ok ($((SECONDS - t0))s)"); else results+=("$name FAILED"); fail=1; fi
}
step fmt cargo fmt --check
step workflows node scripts/lint-workflows.mjs
step clippy cargo clippy --workspace --all-targets -- -D warnings
# The web layer only compiles for wasm32. Debian's compiler path has no clippy for
# wasm32, so there the web layer gets a warnings-as-errors compile check instead.
if grep -q SGM_RDP_DEBIAN_WASM .tools/env.sh 2>/dev/null; then
  step check-wasm bash -c 'source .tools/env.sh && RUSTFLAGS="-D warnings" cargo check --target wasm32-unknown-unknown --lib --tests && for f in page api worker; do RUSTFLAGS="-D warnings" cargo check --target wasm32-unknown-unknown --lib --features $f || exit 1; done'
else
  # The whole lib (the wasm tests' build), then each shipped module's features.
  step clippy-wasm bash -c 'source .tools/env.sh && cargo clippy --target wasm32-unknown-unknown --lib --tests -- -D warnings && for f in page api worker; do cargo clippy --target wasm32-unknown-unknown --lib --features $f -- -D warnings || exit 1; done'
fi
step native cargo test
step doc bash -c 'RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --lib --quiet --features cli'
step crate bash scripts/crate.sh
step corpus python3 scripts/corpus.py
step wasm make -s test-wasm
step e2e make -s test-e2e
step python bash scripts/python.sh
step size bash scripts/size.sh
printf '\n'
summary=$(IFS=';'; echo "${results[*]}")
if [ $fail = 0 ]; then echo "make test: PASS — $summary"; else echo "make test: FAIL — $summary"; fi
exit $fail
