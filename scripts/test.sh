#!/usr/bin/env bash
# The project's test command (README; .ci/run calls it): formatting, lints, every Rust test,
# then the Python package built as a wheel, installed into a local virtual environment, and its
# tests.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings
cargo test --workspace --release

# Python: a project-local venv with maturin and the package's test dependencies from PyPI;
# the wheel is built once (scripts/build-wheel.sh) and the tests run against the installed
# wheel, not an in-place build; test_install.py installs the same wheel into a fresh venv
# ($TESSERA_WHEEL) and runs `python -m tessera` there, with no tessera binary around.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip maturin numpy pytest pandas matplotlib "ray>=2"
WHEEL=$(realpath "$(PYTHON=.venv/bin/python scripts/build-wheel.sh target/wheels | tail -1)")
.venv/bin/python -m pip install --quiet --force-reinstall --no-deps "$WHEEL"
(cd crates/python/tests && TESSERA_WHEEL="$WHEEL" ../../../.venv/bin/python -m pytest -q -p no:cacheprovider .)
# The benchmark scripts' summary parsing and verdicts (scripts/peers.py; standard library only).
.venv/bin/python -m pytest -q -p no:cacheprovider scripts/tests
