#!/usr/bin/env bash
# The Python package (python/: PyO3 + maturin, one abi3 wheel): build the wheel, install
# it into python/.venv (created once, with maturin, pytest and dp-accounting 0.6.0 from
# PyPI), run its pytest suite against the command line built from the same tree.
# `--bench`: the same set-up, then the speed comparisons (benches/python_bench.py, then the
# rivals side by side per run class: benches/rivals.py).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/python"
if ! [ -x .venv/bin/maturin ] || ! .venv/bin/python -c "import pytest, dp_accounting" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check "maturin>=1.5,<2" "pytest>=7" "dp-accounting==0.6.0"
fi
rm -rf dist
.venv/bin/maturin build --quiet -i .venv/bin/python -o dist
.venv/bin/pip install -q --disable-pip-version-check --force-reinstall --no-deps dist/sgm_rdp-*.whl
(cd "$root" && cargo build -q --bin sgm-rdp)
if [ "${1:-}" = "--bench" ]; then
  .venv/bin/python "$root/benches/python_bench.py"
  exec .venv/bin/python "$root/benches/rivals.py"
fi
SGM_RDP_CLI="$root/target/debug/sgm-rdp" .venv/bin/pytest -q -p no:cacheprovider tests
