#!/usr/bin/env bash
# The CUDA backend's checks for a session that is lent a GPU (issue 23). Two halves:
#
#   scripts/gpu-check.sh build   # here (Rust machine): builds the test executables and the
#                                # tessera binary with the `cuda` feature into gpu-bin/
#   scripts/gpu-check.sh run [tests|bench|programs|words|all|resnet|knobs]
#                                # on the GPU machine (no Rust): runs them, outputs under $OUT
#
# The `run` tool carries gpu-bin/ (git-ignored) with the working tree:
#   run(command="export TESSERA_DATA=$PWD/gpu-data; bash scripts/gpu-check.sh run all",
#       carry=["gpu-bin", "gpu-data"], timeout_s=420)   # gpu-data: a copy of ../shared/data
# See docs/gpu.md. Every step has its own time limit so a slow step cannot eat the budget of
# the others; every step's output goes to $OUT/steps.txt and its status to $OUT/summary.txt.
set -u
cd "$(dirname "$0")/.."
BIN=gpu-bin

build() {
    set -e
    : "${CARGO_TARGET_DIR:=target}"
    rm -rf "$BIN" && mkdir -p "$BIN"
    # Test executables: cargo prints their paths as JSON; copy each under its test name.
    cargo test --release --no-run -p tessera-cuda -p tessera-backend --features tessera-backend/cuda \
        --test emulated --test gpu --test cuda_ckks --test cuda_conformance --message-format=json 2>/dev/null |
        python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"], m["executable"])
' | while read -r name exe; do
        case "$name" in
            emulated|gpu|cuda_ckks|cuda_conformance) cp "$exe" "$BIN/test-$name" ;;
        esac
    done
    # The CLI with the CUDA backend compiled in (for `tessera bench --backend cuda`).
    if cargo build --release -p tessera-cli --features tessera-backend/cuda 2>/dev/null; then
        cp "$CARGO_TARGET_DIR/release/tessera" "$BIN/tessera"
    else
        echo "tessera-cli did not build with the cuda feature: bench step will be skipped" >&2
    fi
    strip "$BIN"/* 2>/dev/null || true
    ls -la "$BIN"
    du -sh "$BIN"
}

step() { # step <name> <seconds> <command...>
    # Every step's output goes to one log ($OUT/steps.txt, with a header per step): the run
    # tool brings back at most 8 files.
    local name=$1 secs=$2
    shift 2
    local t0=$(date +%s%N)
    printf '\n===== %s: %s\n' "$name" "$*" >>"$OUT/steps.txt"
    timeout "$secs" "$@" >"$OUT/step.tmp" 2>&1
    local rc=$?
    local ms=$((($(date +%s%N) - t0) / 1000000))
    cat "$OUT/step.tmp" >>"$OUT/steps.txt"
    printf '%-28s rc=%-3s %8d ms\n' "$name" "$rc" "$ms" | tee -a "$OUT/summary.txt"
    tail -n 5 "$OUT/step.tmp"
    rm -f "$OUT/step.tmp"
}

run() { # run [tests|bench|all]
    local what=${1:-all}
    : "${OUT:=gpu-out}"
    mkdir -p "$OUT"
    # NVRTC and the driver are opened at run time: make the toolkit's libraries findable.
    for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
        [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
    done
    export TESSERA_DATA="${TESSERA_DATA:-$PWD/data}"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$OUT/device.txt" 2>&1
    cat "$OUT/device.txt"
    if [ "$what" = tests ] || [ "$what" = all ]; then
    # 1. Device layer: every kernel against the CPU, N = 2^1 .. 2^16 (and the emulator).
    step cuda-gpu-tests 150 "$BIN/test-gpu" --nocapture --test-threads=1
    step cuda-emulated-tests 60 "$BIN/test-emulated"
    # 2. The CKKS evaluator on the GPU against the CPU, bit for bit.
    step backend-cuda-ckks 90 "$BIN/test-cuda_ckks" --nocapture --test-threads=1
    # 3. The backend conformance suite (helper select's), run for CudaBackend.
    step backend-cuda-conformance 150 "$BIN/test-cuda_conformance" --nocapture --test-threads=1
    fi
    # 4. Timings at ark on the GPU (needs the `--backend` option of tessera bench).
    # --profile times each primary between device waits (its total then includes the waits);
    # the plain run is the timing. Host threads: the GPU machine's cores (key generation,
    # the host-side seed expansion).
    local th; th=$(nproc)
    if { [ "$what" = bench ] || [ "$what" = all ]; } && [ -x "$BIN/tessera" ]; then
        # HMult and HRot per level (the top, 23, down to 1), then profiled at the top.
        for op in hmult hrot; do
            for level in 23 18 12 6 1; do
                step "bench-$op-l$level" 60 "$BIN/tessera" bench "$op" --params ark --backend cuda --threads "$th" --level "$level" --reps 20 --json
            done
            step "bench-$op-profile" 60 "$BIN/tessera" bench "$op" --params ark --backend cuda --threads "$th" --json --profile --reps 3
        done
        step bench-bootstrap 120 "$BIN/tessera" bench bootstrap --params ark --backend cuda --threads "$th" --reps 5 --json
        step bench-bootstrap-profile 120 "$BIN/tessera" bench bootstrap --params ark --backend cuda --threads "$th" --reps 1 --json --profile
        # The same bench lines with a baseline binary (an earlier commit's tessera, carried as
        # $BIN/tessera-base), on the same machine in the same call: ratios between commits.
        if [ -x "$BIN/tessera-base" ]; then
            for op in hmult hrot; do
                step "base-$op-l23" 60 "$BIN/tessera-base" bench "$op" --params ark --backend cuda --threads "$th" --level 23 --reps 20 --json
            done
            step base-bootstrap 120 "$BIN/tessera-base" bench bootstrap --params ark --backend cuda --threads "$th" --reps 5 --json
        fi
        # GPU time per kernel of one HMult at the top level (Nsight Compute, when installed:
        # each kernel's duration, serialised, at the clocks ncu locks): where device time goes.
        if command -v ncu >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/ncu ]; then
            local ncu; ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
            step ncu-hmult-l23 90 sh -c "'$ncu' --csv --metrics gpu__time_duration.sum '$BIN/tessera' bench hmult --params ark --backend cuda --threads $th --level 23 --reps 3 2>/dev/null | python3 scripts/ncu-summary.py - 4"
        fi
    fi
    # 5. Programs on the GPU: HELR1024 (two iterations) and ResNet-20 (one image), each
    # checked against its plaintext replica as on the CPU. Data: TESSERA_DATA (carried).
    if [ "$what" = programs ] || [ "$what" = all ]; then
        step run-helr1024 150 "$BIN/tessera" run helr --params ark --size 1024 --iterations 2 --backend cuda --threads "$th"
        step run-resnet20 240 "$BIN/tessera" run resnet20 --params ark --images 1 --backend cuda --threads "$th"
    fi
    # 6. ResNet-20 as ARK runs it (OF-Limb plaintexts, encoded once per run: the images after
    # the first take them from the memo), RESNET_IMAGES images (default 3), every rotation key
    # made up front (RESNET_SECS: the step's time limit, default 300); then one image with the
    # baseline binary, as session 34 ran it.
    if [ "$what" = resnet ]; then
        export TESSERA_EAGER_KEY_GB=100
        step run-resnet20-oflimb "${RESNET_SECS:-300}" "$BIN/tessera" run resnet20 --params ark --of-limb --images "${RESNET_IMAGES:-3}" --backend cuda --threads "$th" --json
        if [ -x "$BIN/tessera-base" ]; then
            step base-resnet20 240 "$BIN/tessera-base" run resnet20 --params ark --images 1 --backend cuda --threads "$th" --json
        fi
    fi
    # 8. Word size on the GPU (issue 23's route to Cheddar's 22.9 ms): the same 32-bit-word
    # ring (w32-boot) with the `_w32` kernels and with the 64-bit ones, then ark-boot's 64-bit
    # primes, in one call; bootstrapping with double hoisting, HMult and HRot at the top level.
    if [ "$what" = words ]; then
        for w in 32 64; do
            step "w32boot-word$w-bootstrap" 150 "$BIN/tessera" bench bootstrap --params w32-boot --word "$w" --hoisting double --backend cuda --threads "$th" --reps 5 --json
            for op in hmult hrot; do
                step "w32boot-word$w-$op" 60 "$BIN/tessera" bench "$op" --params w32-boot --word "$w" --backend cuda --threads "$th" --reps 20 --json
            done
        done
        step ark-bootstrap-double 120 "$BIN/tessera" bench bootstrap --params ark --hoisting double --backend cuda --threads "$th" --reps 5 --json
    fi
    # 7. Kernel tuning knobs: bootstrapping at ark with each NVRTC option set of $KNOBS
    # (separated by ';', e.g. KNOBS="-DNTT_MIN_BLOCKS=2;-DNTT_MIN_BLOCKS=3"), the same binary.
    if [ "$what" = knobs ]; then
        local IFS_=$IFS knob
        IFS=';'
        for knob in ${KNOBS:-}; do
            IFS=$IFS_
            step "knob[$knob]" 90 env TESSERA_CUDA_NVRTC_OPTIONS="$knob" "$BIN/tessera" bench bootstrap --params ark --backend cuda --threads "$th" --reps 5 --json
            IFS=';'
        done
        IFS=$IFS_
    fi
    cat "$OUT/summary.txt"
}

case "${1:-}" in
    build) build ;;
    run) run "${2:-all}" ;;
    *) echo "usage: $0 build | run [tests|bench|programs|words|all|resnet|knobs]" >&2; exit 2 ;;
esac
