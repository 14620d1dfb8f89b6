#!/usr/bin/env bash
# Forward NTT at N = 2^16 with a 60-bit prime: Tessera and Lattigo v6.2.0 (Go) measured back to
# back on the same prime, alternating for ROUNDS rounds, then the ratio of medians.
# tfhe-ntt is measured against Tessera inside one criterion run instead:
#   cargo bench -p tessera-math --bench kernels -- ntt/N=2^16/60-bit
# Needs Go and the Go module proxy (for github.com/tuneinsight/lattigo/v6 v6.2.0).
set -euo pipefail
cd "$(dirname "$0")/.."
LOGN=${LOGN:-16}
BITS=${BITS:-60}
ROUNDS=${ROUNDS:-5}
cargo build --release -q -p tessera-cli
(cd peers/lattigo-ntt && go build -o lattigo-ntt .)
out=$(mktemp)
for _ in $(seq "$ROUNDS"); do
  ./target/release/tessera bench ntt --logn "$LOGN" --bits "$BITS" --reps 201 --json | tee -a "$out"
  q=$(tail -n 1 "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["q"])')
  peers/lattigo-ntt/lattigo-ntt -logn "$LOGN" -q "$q" -reps 201 | tee -a "$out"
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ours = [r["median_s"] for r in rows if "impl" not in r]
lat = [r["median_s"] for r in rows if r.get("impl") == "lattigo-v6.2.0"]
m_ours, m_lat = statistics.median(ours), statistics.median(lat)
print(json.dumps({"op": "ntt_peer_summary", "tessera_median_s": m_ours, "lattigo_median_s": m_lat,
                  "speedup_vs_lattigo": m_lat / m_ours, "rounds": len(ours)}))
PY
rm -f "$out"
