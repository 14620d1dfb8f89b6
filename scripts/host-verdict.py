#!/usr/bin/env python3
"""Issue 22's acceptance on one host, from the raw outputs of the peer scripts.

Reads the summary lines of `scripts/bench-ntt-peers.sh`, `scripts/bench-ckks-peers.sh`,
`scripts/bench-boot-peers.sh` and the `ntt_median` bench (Tessera against tfhe-ntt), as files or
as directories of `*.txt` files (what `scripts/bench-host.sh` writes), and prints one markdown
table row per measure and kernel: both sides' figures, the same-run ratio, the target and the
margin (ratio / target - 1). A row whose target is missed says MISSED. Standard library only.

Usage:
    python3 scripts/host-verdict.py bench-out/host-20261129-1830
    python3 scripts/host-verdict.py docs/cpu-runs/s46-*peers*.txt docs/cpu-runs/s46-ntt-median-avx2.txt
"""
import os
import sys

import peers


def files(args):
    out = []
    for a in args:
        if os.path.isdir(a):
            out += sorted(os.path.join(a, f) for f in os.listdir(a) if f.endswith(".txt"))
        else:
            out.append(a)
    return out


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    paths = files(sys.argv[1:])
    if not paths:
        sys.exit("error: no raw outputs (*.txt) in " + ", ".join(sys.argv[1:]))
    try:
        rows = peers.rows(paths)
    except (OSError, ValueError) as e:
        sys.exit(f"error: {e}")
    lines, misses = peers.table(rows)
    if len(lines) == 2:
        sys.exit("error: no peer summary in " + ", ".join(paths))
    print(f"CPU: {', '.join(peers.cpus(rows)) or 'not named'}\n")
    print("\n".join(lines))
    print(f"\n{len(lines) - 2} rows, {misses} missed")


if __name__ == "__main__":
    main()
