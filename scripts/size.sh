#!/usr/bin/env bash
# Raw and gzip bytes of the shipped .wasm and .js in dist/, and the wasm's size budget:
# exits non-zero when the page's wasm is over 180,000 B gzip (make test checks it, so a
# regression cannot land silently again).
set -euo pipefail
cd "$(dirname "$0")/../dist"
BUDGET=180000
printf '%-45s %10s %10s\n' file raw gzip
for f in $(find . -name '*.wasm' -o -name '*.js' | sort); do
  printf '%-45s %10d %10d\n' "$f" "$(stat -c %s "$f")" "$(gzip -9c "$f" | wc -c)"
done
wasm=$(gzip -9c sgm-rdp_bg.wasm | wc -c)
if [ "$wasm" -le "$BUDGET" ]; then
  echo "size budget: sgm-rdp_bg.wasm ${wasm} B gzip of ${BUDGET} B ($((BUDGET - wasm)) B left)"
else
  echo "size budget: sgm-rdp_bg.wasm ${wasm} B gzip is OVER the ${BUDGET} B budget by $((wasm - BUDGET)) B"
  exit 1
fi
