#!/usr/bin/env bash
# HMult and HRot at the `ark` preset: Tessera vs OpenFHE 1.6.1 (PyPI openfhe==1.6.1.0.22.4 under
# CPython 3.10) at its closest parameters (peers/openfhe/bench_openfhe.py), alternating for
# ROUNDS rounds with THREADS threads, then the ratio of medians. Not part of CI.
# TESSERA_SIMD=scalar|avx2|avx512|avx512-ifma picks Tessera's kernel (default: the fastest here);
# the summary reports it with the CPU model. Uses the tessera binary under $CARGO_TARGET_DIR.
# PARAMS="ark ark-p50" times several Tessera presets of the same ring, chain and dnum in each
# round against the same OpenFHE runs (default: ark); each gets a summary line naming it, with
# its median precision (scripts/peers.py picks the faster one per kernel).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-3}
REPS=${REPS:-7}
PARAMS=${PARAMS:-ark}
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
TESSERA=${CARGO_TARGET_DIR:-target}/release/tessera
cargo build --release -q -p tessera-cli
# Refuses an unknown TESSERA_SIMD, or one this CPU lacks, before anything is measured.
KERNEL=$("$TESSERA" info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["kernel"])')
echo "tessera kernel: $KERNEL (TESSERA_SIMD=${TESSERA_SIMD:-unset})" >&2
out=$(mktemp)
for _ in $(seq "$ROUNDS"); do
  for op in hmult hrot; do
    for params in $PARAMS; do
      "$TESSERA" bench "$op" --params "$params" --threads "$THREADS" --reps "$REPS" --json | tee -a "$out"
    done
    OMP_NUM_THREADS="$THREADS" "$VENV/bin/python" peers/openfhe/bench_openfhe.py --op "$op" --reps "$REPS" | tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
host = next(r for r in rows if "impl" not in r)
about = {"kernel": host["simd"], "cpu": host["cpu"]}
presets = list(dict.fromkeys(r["params"] for r in rows if "impl" not in r))
for op in ("hmult", "hrot"):
    peer = [r["median_s"] for r in rows if r["op"] == op and r.get("impl") == "openfhe-1.6.1"]
    p = statistics.median(peer)
    for params in presets:
        mine = [r for r in rows if r["op"] == op and "impl" not in r and r["params"] == params]
        m = statistics.median(r["median_s"] for r in mine)
        bits = statistics.median(r["precision_bits"] for r in mine)
        print(json.dumps({"op": op, "params": params, "tessera_median_s": m, "openfhe_median_s": p,
                          "speedup": p / m, "tessera_precision_bits": bits, "rounds": len(mine), **about}))
PY
rm -f "$out"
