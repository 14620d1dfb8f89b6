#!/usr/bin/env bash
# Builds the `tessera` Python wheel (abi3, maturin): the same package `pip install
# ./crates/python` installs, with the whole `tessera` command line compiled into the extension
# (`python -m tessera COMMAND`, docs/python.md).
# Usage: scripts/build-wheel.sh [OUT_DIR]   (default target/wheels; uses $PYTHON or .venv)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-target/wheels}
PY=${PYTHON:-.venv/bin/python}
# A binary left inside the package by an older version of this script would be shipped.
rm -rf crates/python/python/tessera/bin
rm -f "$OUT"/tessera-*.whl
"$PY" -m maturin build --release --quiet --manifest-path crates/python/Cargo.toml --out "$OUT"
ls "$OUT"/tessera-*.whl
