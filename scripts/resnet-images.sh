#!/usr/bin/env bash
# Encrypted ResNet-20 on many CIFAR-10 images as independent parts: one image per process
# (`tessera run resnet20 --images 1 --first I --json`), each written to OUTDIR/image-III.json
# with its `/usr/bin/time -v` record in OUTDIR/image-III.time. An image whose .json is already
# there is skipped, so the run can be stopped and resumed (at 2 threads one image at `ark`
# takes about 13 minutes on a 2-vCPU host). scripts/resnet-images-summary.py OUTDIR adds the
# parts up (accuracy, agreement with the replica, time per image, bootstrappings, peak RSS).
#
# usage: scripts/resnet-images.sh OUTDIR [FIRST=0] [COUNT=32] [PARAMS=ark] [THREADS=2]
#   TESSERA: the binary (default: target/release/tessera, built if missing)
#   STOP_AT: optional Unix time after which no new image is started
set -euo pipefail
out=${1:?usage: scripts/resnet-images.sh OUTDIR [FIRST] [COUNT] [PARAMS] [THREADS]}
first=${2:-0}
count=${3:-32}
params=${4:-ark}
threads=${5:-2}
for v in "$first" "$count" "$threads"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "error: FIRST, COUNT and THREADS must be non-negative integers (got '$v')" >&2; exit 2; }
done
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${TESSERA:-$root/target/release/tessera}
if [[ ! -x "$bin" ]]; then
  (cd "$root" && cargo build --release -p tessera-cli)
fi
timer=()
if [[ -x /usr/bin/time ]]; then timer=(/usr/bin/time -v); fi
mkdir -p "$out"
# One record per start (a run resumed in a later session may use another build).
{ echo "== started $(date -u +%FT%TZ) at image $first"; "$bin" --version; sha256sum "$bin"
  git -C "$root" rev-parse HEAD 2>/dev/null || true; } >> "$out/binary.txt" 2>&1 || true
for ((i = first; i < first + count; i++)); do
  name=$(printf 'image-%03d' "$i")
  [[ -s "$out/$name.json" ]] && continue
  if [[ -n "${STOP_AT:-}" ]] && (( $(date +%s) >= STOP_AT )); then
    echo "STOP_AT reached before image $i" >&2
    break
  fi
  echo "$(date -u +%FT%TZ) image $i" >&2
  if [[ ${#timer[@]} -gt 0 ]]; then
    "${timer[@]}" -o "$out/$name.time" "$bin" run resnet20 --params "$params" --images 1 \
      --first "$i" --threads "$threads" --json > "$out/$name.part"
  else
    "$bin" run resnet20 --params "$params" --images 1 --first "$i" --threads "$threads" \
      --json > "$out/$name.part"
  fi
  mv "$out/$name.part" "$out/$name.json"
done
