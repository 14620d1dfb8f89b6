#!/usr/bin/env bash
# The project's test command (README; .ci/run calls it): formatting, lints, every Rust test,
# then the Python package built into a local virtual environment and its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings
cargo test --workspace --release

# Python: a project-local venv with maturin, numpy and pytest from PyPI.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip maturin numpy pytest
(cd crates/python && ../../.venv/bin/maturin develop --release --quiet)
.venv/bin/python -m pytest -q crates/python/tests
