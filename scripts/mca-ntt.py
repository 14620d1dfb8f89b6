#!/usr/bin/env python3
"""Predicts the 60-bit NTT's butterfly throughput of Tessera's kernels and of the peers on CPU
cores this project has not been lent, with llvm-mca's static scheduling models, and projects
issue 22's NTT ratios there from the ratios measured on the development host.

What it is: a model, not a measurement. llvm-mca schedules the innermost butterfly loops in
docs/mca/*.s (extracted with `perf annotate` from the release binaries, branches removed) on
each core's port model, with everything in L1 and no front-end limits. The ratio of two
loops' cycles on one core is the model's relative speed of the two butterflies there; the
projection scales the ratio measured on the development host (Zen 4) by how that relative
speed changes from `znver4` to the other core:

    projected(core) = measured(Zen 4) * [peer(core) / ours(core)] / [peer(znver4) / ours(znver4)]

It ignores the narrow strides, memory and each program's other loops. Use it to see where a
target is at risk on a core nobody has measured, never as a figure for that core.

    python3 scripts/mca-ntt.py [--mca llvm-mca-19] [--zen4 avx512=5.07,ifma=6.04,avx2=1.47]

llvm-mca 19 (the first with a Zen 4 model is 17) comes with Debian's `llvm-19` package
(`apt-get install llvm-19`).
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LOOPS = {  # file, butterflies per iteration
    "avx512": ("tessera-avx512.s", 8),
    "ifma": ("tessera-ifma64.s", 8),
    "avx2": ("tessera-avx2.s", 4),
    "lattigo": ("lattigo.s", 8),
    "tfhe": ("tfhe-ntt-avx2.s", 4),
}
CORES = [
    ("znver4", "AMD Zen 4 (the development host)", True),
    ("znver3", "AMD Zen 3 (AVX2 only)", False),
    ("skylake", "Intel Skylake client (AVX2 only)", False),
    ("alderlake", "Intel Alder Lake P-core (AVX2 only)", False),
    ("skylake-avx512", "Intel Skylake-SP / Cascade Lake (AVX-512, no IFMA)", True),
    ("icelake-server", "Intel Ice Lake-SP (AVX-512, IFMA)", True),
    ("sapphirerapids", "Intel Sapphire / Emerald Rapids (AVX-512, IFMA)", True),
]
IFMA = {"znver4", "icelake-server", "sapphirerapids"}


def cycles_per_butterfly(mca, core, loop):
    name, per_iter = LOOPS[loop]
    path = os.path.join(ROOT, "docs", "mca", name)
    try:
        out = subprocess.run([mca, "-mtriple=x86_64", f"-mcpu={core}", "-iterations=400", path],
                             capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit(f"{mca} not found: install llvm-19 (apt-get install llvm-19) or pass --mca")
    m = re.search(r"Total Cycles:\s+(\d+)", out.stdout)
    if out.returncode != 0 or not m:
        sys.exit(f"{mca} failed on {name} for {core}: {out.stderr.strip()[:300]}")
    return int(m.group(1)) / 400 / per_iter


def parse_zen4(text):
    vals = {}
    for part in text.split(","):
        k, _, v = part.partition("=")
        if k not in ("avx512", "ifma", "avx2"):
            sys.exit(f"--zen4: unknown kernel {k!r}; allowed avx512, ifma, avx2")
        try:
            vals[k] = float(v)
        except ValueError:
            sys.exit(f"--zen4: {part!r} is not kernel=ratio")
        if not (vals[k] > 0 and vals[k] < 1e6):
            sys.exit(f"--zen4: the ratio of {k} must be a positive number")
    return vals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mca", default="llvm-mca-19")
    ap.add_argument("--zen4", default="avx512=5.07,ifma=6.04,avx2=1.47",
                    help="same-run ratios measured on the Zen 4 host (docs/benchmarks.md, session 47)")
    a = ap.parse_args()
    zen4 = parse_zen4(a.zen4)
    def runs(core, avx512, loop):
        return loop not in ("avx512", "ifma") or (avx512 and (loop == "avx512" or core in IFMA))

    c = {(core, loop): cycles_per_butterfly(a.mca, core, loop)
         for core, _, avx512 in CORES for loop in LOOPS if runs(core, avx512, loop)}
    base = {k: c[("znver4", peer)] / c[("znver4", k)]
            for k, peer in (("avx512", "lattigo"), ("ifma", "lattigo"), ("avx2", "tfhe"))}
    print(f"llvm-mca cycles per butterfly (60-bit prime, innermost loop, L1-resident); "
          f"projections from Zen 4's measured {a.zen4}")
    print("| core | Tessera avx512 / ifma / avx2 | Lattigo | tfhe-ntt AVX2 | "
          "projected vs Lattigo (5x): avx512 / ifma | projected vs tfhe-ntt (1x): avx2 |")
    print("|---|---|---|---|---|---|")
    for core, label, avx512 in CORES:
        cells = [f"{c[(core, k)]:.2f}" if (core, k) in c else "-"
                 for k in ("avx512", "ifma", "avx2")]
        proj = lambda k, peer: zen4[k] * (c[(core, peer)] / c[(core, k)]) / base[k]
        lat = [f"{proj(k, 'lattigo'):.2f}x" if (core, k) in c else "-" for k in ("avx512", "ifma")]
        print(f"| {label} (`{core}`) | {' / '.join(cells)} | {c[(core, 'lattigo')]:.2f} | "
              f"{c[(core, 'tfhe')]:.2f} | {' / '.join(lat)} | {proj('avx2', 'tfhe'):.2f}x |")


if __name__ == "__main__":
    main()
