#!/usr/bin/env bash
# Times Google's dp_accounting on the same grid as `rdp_grid_156` (q=0.01, sigma=1.1,
# 156 default orders). Installs dp-accounting into a local git-ignored venv once.
set -euo pipefail
cd "$(dirname "$0")"
if ! [ -x .venv/bin/python ] || ! .venv/bin/python -c "import dp_accounting" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q "dp-accounting==0.6.0" >/dev/null
fi
# `--venv`: only make sure the venv is there (make reference uses it for pld_long.py).
if [ "${1:-}" = "--venv" ]; then exit 0; fi
.venv/bin/python dp_accounting_bench.py
.venv/bin/python dp_accounting_pld.py
