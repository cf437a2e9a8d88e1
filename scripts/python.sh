#!/usr/bin/env bash
# The Python package (python/: PyO3 + maturin, one abi3 wheel), as its users get it:
#  1. the wheel, manylinux2014 (glibc 2.17: maturin links with zig, from PyPI's `ziglang`),
#     built in python/.venv (the builder: maturin, ziglang, pytest, dp-accounting 0.6.0);
#  2. installed into a fresh venv (target/python-fresh: the wheel, pytest, dp-accounting) where
#     the package's pytest suite runs against the command line built from the same tree;
#  3. the sdist, installed by pip into another fresh venv with nothing but a Rust toolchain
#     (pip fetches maturin itself), then imported and asked MNIST's ε.
# `--bench`: the wheel in python/.venv, then the speed comparisons (benches/python_bench.py,
# then the rivals side by side per run class: benches/rivals.py).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/python"
pip_q() { "$@" -q --disable-pip-version-check; }
if ! [ -x .venv/bin/maturin ] || ! .venv/bin/python -c "import pytest, dp_accounting, ziglang" 2>/dev/null; then
  python3 -m venv .venv
  pip_q .venv/bin/pip install "maturin>=1.5,<2" "pytest>=7" "dp-accounting==0.6.0" "ziglang==0.17.1"
fi
rm -rf dist
# (maturin finds zig through the builder venv's `python -m ziglang`.)
PATH="$root/python/.venv/bin:$PATH" .venv/bin/maturin build --quiet -i .venv/bin/python \
  --zig --compatibility manylinux2014 -o dist
wheel=$(ls dist/sgm_rdp-*manylinux2014*.whl)
(cd "$root" && cargo build -q --features cli --bin sgm-rdp)
if [ "${1:-}" = "--bench" ]; then
  pip_q .venv/bin/pip install --force-reinstall --no-deps "$wheel"
  .venv/bin/python "$root/benches/python_bench.py"
  exec .venv/bin/python "$root/benches/rivals.py"
fi
fresh="$root/target/python-fresh"
rm -rf "$fresh"
python3 -m venv "$fresh"
pip_q "$fresh/bin/pip" install "$wheel" "pytest>=7" "dp-accounting==0.6.0"
echo "python: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KB) in a fresh venv"
SGM_RDP_CLI="$root/target/debug/sgm-rdp" "$fresh/bin/pytest" -q -p no:cacheprovider tests
# The sdist, built from source by pip in a fresh venv (the crate's deps compiled once into the
# shared target dir).
.venv/bin/maturin sdist -o dist >/dev/null
sdist=$(ls dist/sgm_rdp-*.tar.gz)
src="$root/target/python-sdist"
rm -rf "$src"
python3 -m venv "$src"
CARGO_TARGET_DIR="$root/target/python-sdist-build" pip_q "$src/bin/pip" install "$sdist"
(cd / && "$src/bin/python" -c "import sgm_rdp; e = sgm_rdp.epsilon(noise_multiplier=1.1, sample_rate=256/60000, steps=14063, delta=1e-5); assert 2.38 < e.upper < 2.383, e; print(f'python: {\"$(basename "$sdist")\"} installs from source by pip; MNIST epsilon <= {e.upper:.6f}')")
