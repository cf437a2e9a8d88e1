#!/usr/bin/env bash
# Raw and gzip bytes of the shipped .wasm and .js in dist/, and the size budgets: exits
# non-zero when the page's wasm (sgm-rdp-page_bg.wasm: the page and the widget, loaded on the
# main thread) or the JS API's (sgm-rdp_bg.wasm) is over 180,000 B gzip (make test checks it,
# so a regression cannot land silently again). The worker-only wasm has no budget here: only
# workers load it, off the main thread.
set -euo pipefail
cd "$(dirname "$0")/../dist"
BUDGET=180000
printf '%-45s %10s %10s\n' file raw gzip
for f in $(find . -name '*.wasm' -o -name '*.js' | sort); do
  printf '%-45s %10d %10d\n' "$f" "$(stat -c %s "$f")" "$(gzip -9c "$f" | wc -c)"
done
fail=0
for w in sgm-rdp-page_bg.wasm sgm-rdp_bg.wasm; do
  n=$(gzip -9c "$w" | wc -c)
  if [ "$n" -le "$BUDGET" ]; then
    echo "size budget: $w ${n} B gzip of ${BUDGET} B ($((BUDGET - n)) B left)"
  else
    echo "size budget: $w ${n} B gzip is OVER the ${BUDGET} B budget by $((n - BUDGET)) B"
    fail=1
  fi
done
exit $fail
