#!/usr/bin/env bash
# The crate as crates.io users get it (issue 66 #4): a plain dependency is the engine alone,
# each feature set builds warning-free, and `cargo package` builds the packaged sources.
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
# 1. The engine's dependencies only: no chart, JSON, argument-parsing or libc crate without a feature.
deps=$(cargo tree --offline -q -e normal --prefix none --no-default-features -p sgm-rdp --target "$host" | sed 's/ .*//' | sort -u)
for unwanted in plotters serde_json lexopt libc; do
  if grep -qx "$unwanted" <<<"$deps"; then
    echo "crate: a plain dependency pulls $unwanted (it belongs behind a feature)"; exit 1
  fi
done
echo "crate: a plain dependency pulls $(wc -l <<<"$deps") crates: $(tr '\n' ' ' <<<"$deps")"
# 2. Every feature set on its own, warnings as errors (dead code left by a missing front end).
for f in "" charts query cli; do
  cargo clippy --offline -q --lib --no-default-features ${f:+--features $f} -- -D warnings
done
echo "crate: the lib builds warning-free with no feature, charts, query and cli"
# 3. The packaged crate (sources, README, docs) builds on its own.
cargo package --offline -q --allow-dirty
echo "crate: cargo package ok ($(du -k target/package/sgm-rdp-*.crate | tail -1 | cut -f1) KB)"
