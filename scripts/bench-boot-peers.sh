#!/usr/bin/env bash
# Full-slot bootstrapping at N = 2^16: Tessera (`tessera bench bootstrap --params ark`, OF-Limb
# DFT plaintexts unless TESSERA_FLAGS says otherwise) vs OpenFHE 1.6.1 (peers/openfhe/bench_openfhe.py --op bootstrap: sparse
# encapsulation, level budget [3, 3], 8 levels left), alternating for ROUNDS rounds with
# THREADS threads; prints the ratio of medians. Needs the CPython 3.10 virtual environment
# that scripts/bench-ckks-peers.sh creates. Not part of CI.
# TESSERA_SIMD=scalar|avx2|avx512|avx512-ifma picks Tessera's kernel (default: the fastest here);
# the summary reports it with the CPU model. Uses the tessera binary under $CARGO_TARGET_DIR.
# Each process runs under /usr/bin/time: the summary reports both sides' peak resident memory
# (the largest over the rounds; a process holds its keys, so this is the whole job's peak).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-2}
REPS=${REPS:-3}
# Tessera's circuit options (default: OF-Limb DFT plaintexts, the least memory); e.g.
# TESSERA_FLAGS="--hoisting double" for the fastest circuit on a CPU.
TESSERA_FLAGS=${TESSERA_FLAGS:---of-limb}
VENV=bench-out/openfhe-venv
if [ ! -x "$VENV/bin/python" ]; then
  echo "error: run scripts/bench-ckks-peers.sh once first (it installs OpenFHE into $VENV)" >&2
  exit 2
fi
TESSERA=${CARGO_TARGET_DIR:-target}/release/tessera
cargo build --release -q -p tessera-cli
# Refuses an unknown TESSERA_SIMD, or one this CPU lacks, before anything is measured.
KERNEL=$("$TESSERA" info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["kernel"])')
echo "tessera kernel: $KERNEL (TESSERA_SIMD=${TESSERA_SIMD:-unset})" >&2
out=$(mktemp)
mem=$(mktemp)
# Appends {"peak_rss_of": WHO, "kb": N} after a process that /usr/bin/time measured into $mem.
peak() { echo "{\"peak_rss_of\": \"$1\", \"kb\": $(tail -n 1 "$mem")}" >> "$out"; }
for _ in $(seq "$ROUNDS"); do
  # shellcheck disable=SC2086
  /usr/bin/time -f "%M" -o "$mem" "$TESSERA" bench bootstrap --params ark $TESSERA_FLAGS --threads "$THREADS" --reps "$REPS" --json | tee -a "$out"
  peak tessera
  OMP_NUM_THREADS="$THREADS" /usr/bin/time -f "%M" -o "$mem" "$VENV/bin/python" peers/openfhe/bench_openfhe.py --op bootstrap --reps "$REPS" | tee -a "$out"
  peak openfhe
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rss = {who: max(r["kb"] for r in rows if r.get("peak_rss_of") == who) * 1024 / 1e9
       for who in ("tessera", "openfhe")}
rows = [r for r in rows if "peak_rss_of" not in r]
host = next(r for r in rows if "impl" not in r)
about = {"kernel": host["simd"], "cpu": host["cpu"], "tessera_of_limb": host.get("of_limb"),
         "tessera_double_hoisting": host.get("double_hoisting")}
ours = [r for r in rows if "impl" not in r]
peer = [r for r in rows if r.get("impl") == "openfhe-1.6.1"]
m, p = statistics.median(r["median_s"] for r in ours), statistics.median(r["median_s"] for r in peer)
print(json.dumps({"op": "bootstrap", "tessera_median_s": m, "openfhe_median_s": p,
                  "tessera_share_of_openfhe": m / p, "target_share": 0.4,
                  "tessera_precision_bits": statistics.median(r["precision_bits"] for r in ours),
                  "openfhe_precision_bits": statistics.median(r["precision_bits"] for r in peer),
                  "tessera_levels_left": min(r["levels_left"] for r in ours),
                  "openfhe_levels_left": min(r["levels_left"] for r in peer),
                  "tessera_peak_rss_gb": round(rss["tessera"], 2),
                  "openfhe_peak_rss_gb": round(rss["openfhe"], 2),
                  "rounds": len(ours), **about}))
PY
rm -f "$out" "$mem"
