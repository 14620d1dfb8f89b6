#!/usr/bin/env bash
# Issue 22's acceptance on this host in one command: for every SIMD kernel this CPU supports
# (avx2, avx512, avx512-ifma; one the CPU lacks is reported as skipped), the three peer scripts
# (forward NTT against Lattigo, HMult and HRot against OpenFHE, bootstrapping against OpenFHE
# with its peak memory), then the AVX2 NTT against tfhe-ntt's AVX2 plan at 60 and 50 bits; then
# the verdict table (scripts/host-verdict.py) and the plot (scripts/plot-peer-ratios.py, where
# the test command's .venv has matplotlib). Not part of CI: about 25 minutes on a 2-core Zen 4.
#
# Raw outputs, the table (verdict.md) and the plot (peer-ratios.svg) go to OUT (default
# bench-out/host-<date>-<time>). A step that fails (no Go, no CPython 3.10 for OpenFHE's wheel)
# is recorded in OUT/failed-<step>.log and named in the summary; the other steps still run.
#
#   scripts/bench-host.sh                              # everything, every kernel
#   KERNELS=avx2 scripts/bench-host.sh                 # one kernel
#   STEPS="ntt ckks" ROUNDS_NTT=3 scripts/bench-host.sh  # a subset, fewer rounds
#
# HMult and HRot are timed at every preset of CKKS_PARAMS (default "ark ark-p50": ark's chain
# with its six 61-bit special primes, and with seven 50-bit ones for AVX2's FMA kernels); the
# verdict counts the faster one per kernel among those at least as precise as ark, and shows
# both.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench-out/host-$(date +%Y%m%d-%H%M%S)}
KERNELS=${KERNELS:-avx2 avx512 avx512-ifma}
STEPS=${STEPS:-ntt ckks boot tfhe-ntt}
ROUNDS_NTT=${ROUNDS_NTT:-5}
ROUNDS_CKKS=${ROUNDS_CKKS:-3}
CKKS_PARAMS=${CKKS_PARAMS:-ark ark-p50}
ROUNDS_BOOT=${ROUNDS_BOOT:-1}
REPS_BOOT=${REPS_BOOT:-3}
mkdir -p "$OUT"
for k in $KERNELS; do
  case $k in avx2 | avx512 | avx512-ifma) ;; *)
    echo "error: KERNELS may hold avx2, avx512 and avx512-ifma, not '$k'" >&2
    exit 2
    ;;
  esac
done
for s in $STEPS; do
  case $s in ntt | ckks | boot | tfhe-ntt) ;; *)
    echo "error: STEPS may hold ntt, ckks, boot and tfhe-ntt, not '$s'" >&2
    exit 2
    ;;
  esac
done
has() { [[ " $STEPS " == *" $1 "* ]]; }
cargo build --release -q -p tessera-cli || exit 1
TESSERA=${CARGO_TARGET_DIR:-target}/release/tessera
"$TESSERA" info > "$OUT/info.log" 2>&1
CPU=$("$TESSERA" info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu"])')
echo "host: $CPU; output: $OUT" >&2
failed=()
# Runs one step: run STEP_NAME FILE command...; stdout to FILE, stderr to FILE.stderr.log.
run() {
  local name=$1 file=$2
  shift 2
  echo "[$(date +%H:%M:%S)] $name" >&2
  local err="$OUT/${file%.txt}.stderr.log"
  if ! "$@" > "$OUT/$file" 2> "$err"; then
    mv "$err" "$OUT/failed-$name.log"
    rm -f "$OUT/$file"
    failed+=("$name")
    echo "  failed: $(tail -n 1 "$OUT/failed-$name.log")" >&2
  fi
}
supported=()
for k in $KERNELS; do
  # tessera refuses a kernel the CPU lacks, with the reason.
  if TESSERA_SIMD=$k "$TESSERA" info --json > /dev/null 2> "$OUT/skipped-$k.log"; then
    rm -f "$OUT/skipped-$k.log"
    supported+=("$k")
  else
    echo "skipped $k: $(tail -n 1 "$OUT/skipped-$k.log")" >&2
  fi
done
for k in "${supported[@]}"; do
  has ntt && run "ntt-$k" "ntt-peers-$k.txt" env TESSERA_SIMD="$k" BITS=60 ROUNDS="$ROUNDS_NTT" scripts/bench-ntt-peers.sh
  has ckks && run "ckks-$k" "ckks-peers-$k.txt" env TESSERA_SIMD="$k" ROUNDS="$ROUNDS_CKKS" REPS=7 PARAMS="$CKKS_PARAMS" scripts/bench-ckks-peers.sh
  has boot && run "boot-$k" "boot-peers-$k.txt" env TESSERA_SIMD="$k" TESSERA_FLAGS="--hoisting double" ROUNDS="$ROUNDS_BOOT" REPS="$REPS_BOOT" scripts/bench-boot-peers.sh
done
if has tfhe-ntt && [[ " ${supported[*]} " == *" avx2 "* ]]; then
  for bits in 60 50; do
    run "tfhe-ntt-$bits" "ntt-median-avx2-$bits.txt" env TESSERA_NTT_BITS="$bits" TESSERA_SIMD=avx2 cargo bench -q -p tessera-math --bench ntt_median
  done
fi
python3 scripts/host-verdict.py "$OUT" | tee "$OUT/verdict.md"
shopt -s nullglob
summaries=("$OUT"/*-peers-*.txt)
if [ ${#summaries[@]} -gt 0 ] && [ -x .venv/bin/python ] && .venv/bin/python -c 'import matplotlib' 2> /dev/null; then
  .venv/bin/python scripts/plot-peer-ratios.py "$OUT/peer-ratios.svg" "${summaries[@]}"
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed steps (see $OUT/failed-*.log): ${failed[*]}" | tee -a "$OUT/verdict.md" >&2
  exit 1
fi
