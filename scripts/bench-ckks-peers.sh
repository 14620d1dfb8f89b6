#!/usr/bin/env bash
# HMult and HRot at the `ark` preset: Tessera vs OpenFHE 1.6.1 (PyPI openfhe==1.6.1.0.22.4 under
# CPython 3.10) at its closest parameters (peers/openfhe/bench_openfhe.py), alternating for
# ROUNDS rounds with THREADS threads, then the ratio of medians. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-3}
REPS=${REPS:-7}
# The first candidate that really runs CPython 3.10 (a pyenv shim may exist but refuse).
if [ -z "${PY310:-}" ]; then
  for c in python3.10 "$HOME"/.pyenv/versions/3.10*/bin/python; do
    if "$c" -c 'import sys; assert sys.version_info[:2] == (3, 10)' >/dev/null 2>&1; then
      PY310=$c
      break
    fi
  done
fi
if [ -z "${PY310:-}" ]; then
  echo "error: OpenFHE's wheel needs CPython 3.10; set PY310=/path/to/python3.10" >&2
  exit 2
fi
VENV=bench-out/openfhe-venv
if [ ! -x "$VENV/bin/python" ]; then
  "$PY310" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet openfhe==1.6.1.0.22.4
fi
cargo build --release -q -p tessera-cli
out=$(mktemp)
for _ in $(seq "$ROUNDS"); do
  for op in hmult hrot; do
    ./target/release/tessera bench "$op" --params ark --threads "$THREADS" --reps "$REPS" --json | tee -a "$out"
    OMP_NUM_THREADS="$THREADS" "$VENV/bin/python" peers/openfhe/bench_openfhe.py --op "$op" --reps "$REPS" | tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for op in ("hmult", "hrot"):
    ours = [r["median_s"] for r in rows if r["op"] == op and "impl" not in r]
    peer = [r["median_s"] for r in rows if r["op"] == op and r.get("impl") == "openfhe-1.6.1"]
    m, p = statistics.median(ours), statistics.median(peer)
    print(json.dumps({"op": op, "tessera_median_s": m, "openfhe_median_s": p, "speedup": p / m, "rounds": len(ours)}))
PY
rm -f "$out"
