#!/usr/bin/env bash
# Raw and gzip bytes of the shipped .wasm and .js in dist/.
set -euo pipefail
cd "$(dirname "$0")/../dist"
printf '%-45s %10s %10s\n' file raw gzip
for f in $(find . -name '*.wasm' -o -name '*.js' | sort); do
  printf '%-45s %10d %10d\n' "$f" "$(stat -c %s "$f")" "$(gzip -9c "$f" | wc -c)"
done
