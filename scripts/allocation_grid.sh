#!/usr/bin/env bash
# The README's random-allocation worst-case rows: every (t, E) of the grid
# t ∈ {2, 10, 10², 10³, 10⁴} × E ∈ {1, 10, 10², 10³} at each σ given (δ = 1e-5), one release-CLI
# call each, timed: "s=σ t=… E=… time=seconds eps=upper width=(upper−lower)/upper" or the refusal.
# Usage: cargo build --release --features cli && scripts/allocation_grid.sh 1 2 5 0.8 0.7 0.6
set -u
bin=target/release/sgm-rdp
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in "$@"; do for t in 2 10 100 1000 10000; do for e in 1 10 100 1000; do
  /usr/bin/time -o "$tmp/time" -f "%e" "$bin" epsilon --sampling random-allocation --steps-per-epoch "$t" \
    --epochs "$e" --sigma "$s" --delta 1e-5 --accountant pld --json > "$tmp/out" 2> "$tmp/err"
  python3 - "$s" "$t" "$e" "$(tail -1 "$tmp/time")" "$tmp" <<'PY'
import json, sys
s, t, e, secs, d = sys.argv[1:]
try:
    j = json.load(open(f"{d}/out"))
    up, lo = j["epsilon"], j["epsilon_lower"]
    print(f"s={s} t={t} E={e} time={secs} eps={up:.6g} width={(up - lo) / up if up else 0:.2e}")
except Exception:
    print(f"s={s} t={t} E={e} time={secs} FAIL {open(f'{d}/err').read().strip()[:120]}")
PY
done; done; done
