# sgm-rdp: `make serve` (set up, build, serve the page) and `make test` (set up, run every test).
SHELL := /bin/bash
PORT ?= 8080
WASM_ENV := source .tools/env.sh
# On Debian's compiler path wasm-pack needs these modes (TOOLCHAIN.md §2).
WP_TEST_MODE = $$( [ -n "$${SGM_RDP_DEBIAN_WASM:-}" ] && echo "--mode no-install" )

.PHONY: setup dist pkg serve size test test-native test-wasm test-e2e test-python bench reference lint fuzz

setup:
	@bash scripts/setup.sh

# Trunk copies the page's static files; scripts/wasm.sh builds the three wasm modules beside
# them (the page's, the JS API's, the worker's).
dist: setup
	@$(WASM_ENV) && trunk build --release
	@bash scripts/wasm.sh dist
	@echo "dist/ ready"

# The JS API as wasm-pack's --target web package (pkg/, for npm and bundlers): the same
# command and wasm-opt passes as dist/'s sgm-rdp.js (scripts/wasm.sh), so both hold the same
# wasm and glue.
pkg: setup
	@bash scripts/wasm.sh pkg pkg
	@echo "pkg/ ready"

serve: dist
	@echo "serving http://127.0.0.1:$(PORT)/ (embedding: http://127.0.0.1:$(PORT)/embed.html)"
	@cd dist && python3 -m http.server $(PORT) --bind 127.0.0.1

size: dist
	@bash scripts/size.sh

lint:
	cargo fmt --check
	cargo clippy --workspace --all-targets -- -D warnings

test-native:
	cargo test

test-wasm:
	@$(WASM_ENV) && wasm-pack test $(WP_TEST_MODE) --headless --chrome -- --test web

# The page, then the widget + JS API, the JS API fuzz (both modules), the npm tarball in a fresh
# Vite project, then the shipped .d.ts files; all run, any failure fails.
test-e2e: dist pkg
	@$(WASM_ENV) && rc=0; \
	node tests/e2e/run.mjs || rc=1; \
	node tests/e2e/widget.mjs || rc=1; \
	node tests/e2e/fuzz.mjs || rc=1; \
	node tests/e2e/npm.mjs || rc=1; \
	{ node_modules/.bin/tsc -p tests/types && echo "types: dist/sgm-rdp.d.ts and dist/widget.d.ts check"; } || rc=1; \
	exit $$rc

# The Python package: build the wheel, install it in python/.venv, run pytest.
test-python:
	@bash scripts/python.sh

test: setup
	@bash scripts/test.sh

bench:
	cargo bench --bench engine
	@bash benches/dp_accounting.sh
	@benches/.venv/bin/python benches/ratio.py
	@bash scripts/python.sh --bench

reference:
	python3 tests/reference/generate.py
	python3 tests/reference/pld_reference.py
	@bash benches/dp_accounting.sh --venv
	benches/.venv/bin/python tests/reference/pld_long.py
	benches/.venv/bin/python tests/reference/group_reference.py
	benches/.venv/bin/python tests/reference/sampling_reference.py
	benches/.venv/bin/python tests/reference/allocation_reference.py
	benches/.venv/bin/python tests/reference/matrix_reference.py
	python3 tests/reference/one_jump.py
	python3 tests/reference/count_statistic.py
	python3 tests/reference/add_inversion.py
	python3 tests/reference/remove_inversion.py

# The batch fuzz at 10⁶ cases (make test runs 10⁵), and the JS API fuzz at 5000 calls per
# module from a new seed (make test runs 600 from a fixed one).
fuzz: dist
	SGM_RDP_FUZZ_CASES=1000000 cargo test --release --test frontends fuzz_batch
	SGM_RDP_FUZZ_SEED=random SGM_RDP_FUZZ_JS=5000 node tests/e2e/fuzz.mjs
