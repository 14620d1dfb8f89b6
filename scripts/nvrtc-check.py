#!/usr/bin/env python3
"""Compiles the CUDA backend's kernel sources with NVRTC, as `Device::open` does, on a machine
without a GPU: a syntax or type error in `crates/cuda/kernels/*.cu` shows here instead of on
the GPU machine (where the whole backend would then fail to open).

NVRTC only needs its shared library, which PyPI ships:

    pip install nvidia-cuda-nvrtc-cu12          # or point NVRTC_LIB at a libnvrtc.so
    python3 scripts/nvrtc-check.py [--arch compute_90] [-DNAME=VALUE ...]

The translation unit is the one the backend compiles (`tessera_cuda::kernel_source`, printed
by `cargo run -q -p tessera-cuda --example kernel_source`: the kernels once per word size), and
it is compiled with `--fmad=false` (as the backend compiles it) plus any extra options given.
Prints the compiler's log and the PTX size, and which kernels the PTX defines; exits 1 on a
compile error or a kernel of `kernels.rs` missing from the PTX.
"""
import ctypes
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def find_library():
    if os.environ.get("NVRTC_LIB"):
        return os.environ["NVRTC_LIB"]
    candidates = []
    for base in sys.path + ["/usr/local/cuda/lib64", "/tmp/nvrtc"]:
        candidates += glob.glob(os.path.join(base, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so*"))
        candidates += glob.glob(os.path.join(base, "libnvrtc.so*"))
    candidates = [c for c in candidates if "builtins" not in c and ".alt." not in c]
    if not candidates:
        sys.exit("libnvrtc not found: pip install nvidia-cuda-nvrtc-cu12, or set NVRTC_LIB")
    return sorted(candidates)[-1]


def translation_unit():
    out = subprocess.run(
        ["cargo", "run", "-q", "-p", "tessera-cuda", "--example", "kernel_source"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    first, _, src = out.partition("\n")
    if not first.startswith("// kernels: "):
        sys.exit(f"unexpected output of the kernel_source example: {first[:80]!r}")
    return src, first[len("// kernels: "):].split()


def main():
    lib = ctypes.CDLL(find_library())
    src, kernels = translation_unit()
    prog = ctypes.c_void_p()
    check = lambda rc, what: rc == 0 or sys.exit(f"{what} failed: NVRTC error {rc}")
    check(lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"tessera.cu", 0, None, None),
          "nvrtcCreateProgram")
    opts = [b"--fmad=false"] + [a.encode() for a in sys.argv[1:]]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    text = log.value.decode(errors="replace").strip()
    print(text or "(empty log)")
    if rc != 0:
        sys.exit(f"compile failed (NVRTC error {rc})")
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, ptx)
    ptx = ptx.value.decode()
    defined = set(re.findall(r"\.entry\s+([A-Za-z0-9_]+)\(", ptx))
    missing = [k for k in kernels if k not in defined]
    print(f"PTX {len(ptx)} bytes, {len(defined)} kernels: {', '.join(sorted(defined))}")
    if missing:
        sys.exit(f"kernels of kernels.rs missing from the PTX: {missing}")


if __name__ == "__main__":
    main()
