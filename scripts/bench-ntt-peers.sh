#!/usr/bin/env bash
# Forward NTT at N = 2^16 with a 60-bit prime: Tessera and Lattigo v6.2.0 (Go) measured back to
# back on the same prime, alternating for ROUNDS rounds, then the ratio of medians.
# tfhe-ntt is measured against Tessera inside one criterion run instead:
#   cargo bench -p tessera-math --bench kernels -- ntt/N=2^16/60-bit
# Needs Go and the Go module proxy (for github.com/tuneinsight/lattigo/v6 v6.2.0).
# TESSERA_SIMD=scalar|avx2|avx512|avx512-ifma picks Tessera's kernel (default: the fastest here);
# the summary reports it with the CPU model. Uses the tessera binary under $CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
LOGN=${LOGN:-16}
BITS=${BITS:-60}
ROUNDS=${ROUNDS:-5}
TESSERA=${CARGO_TARGET_DIR:-target}/release/tessera
cargo build --release -q -p tessera-cli
# Refuses an unknown TESSERA_SIMD, or one this CPU lacks, before anything is measured.
KERNEL=$("$TESSERA" info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["kernel"])')
echo "tessera kernel: $KERNEL (TESSERA_SIMD=${TESSERA_SIMD:-unset})" >&2
(cd peers/lattigo-ntt && go build -o lattigo-ntt .)
out=$(mktemp)
for _ in $(seq "$ROUNDS"); do
  "$TESSERA" bench ntt --logn "$LOGN" --bits "$BITS" --reps 201 --json | tee -a "$out"
  q=$(tail -n 1 "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["q"])')
  peers/lattigo-ntt/lattigo-ntt -logn "$LOGN" -q "$q" -reps 201 | tee -a "$out"
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
host = next(r for r in rows if "impl" not in r)
about = {"kernel": host["simd"], "cpu": host["cpu"]}
ours = [r["median_s"] for r in rows if "impl" not in r]
lat = [r["median_s"] for r in rows if r.get("impl") == "lattigo-v6.2.0"]
m_ours, m_lat = statistics.median(ours), statistics.median(lat)
print(json.dumps({"op": "ntt_peer_summary", "tessera_median_s": m_ours, "lattigo_median_s": m_lat,
                  "speedup_vs_lattigo": m_lat / m_ours, "rounds": len(ours), **about}))
PY
rm -f "$out"
