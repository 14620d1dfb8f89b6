#!/usr/bin/env bash
# Builds the `tessera` Python wheel (abi3, maturin) with the `tessera` CLI binary inside it,
# so that `python -m tessera COMMAND` runs the CLI from the install (docs/python.md).
# Usage: scripts/build-wheel.sh [OUT_DIR]   (default target/wheels; uses $PYTHON or .venv)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-target/wheels}
PY=${PYTHON:-.venv/bin/python}
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
cargo build --release -p tessera-cli
mkdir -p crates/python/python/tessera/bin
cp "$TARGET/release/tessera" crates/python/python/tessera/bin/tessera
rm -f "$OUT"/tessera-*.whl
"$PY" -m maturin build --release --quiet --manifest-path crates/python/Cargo.toml --out "$OUT"
ls "$OUT"/tessera-*.whl
