#!/usr/bin/env python3
"""Plots the same-run peer ratios of the peer scripts against issue 22's targets.

Reads the summary lines that `scripts/bench-ntt-peers.sh`, `scripts/bench-ckks-peers.sh` and
`scripts/bench-boot-peers.sh` print (their raw outputs, e.g. `docs/cpu-runs/s45-*.txt`) and
draws one group of bars per measure, one bar per kernel, with the target as a line:

* the 60-bit forward NTT: Lattigo's time / Tessera's (target 5x);
* HMult and HRot at `ark`: OpenFHE's time / Tessera's (target 3x); where several presets were
  timed (`PARAMS` of `scripts/bench-ckks-peers.sh`), the one `peers.chosen` picks, named under
  its bar when it is not `ark`;
* bootstrapping at `ark`: OpenFHE's time / Tessera's (target 2.5x, i.e. at most 40 % of
  OpenFHE's time).

Usage (matplotlib; the test command's `.venv` has it):
    .venv/bin/python scripts/plot-peer-ratios.py docs/img/peer-ratios.svg docs/cpu-runs/s45-*peers*.txt
A file without summary lines is an error, not an empty plot.
"""
import sys

import peers


def summaries(paths):
    """(op, kernel) -> (ratio, cpu, preset) for every measure of `peers.MEASURES` found in
    `paths`."""
    try:
        found = peers.summaries(peers.rows(paths))
    except (OSError, ValueError) as e:
        sys.exit(f"error: {e}")
    ratio_of = {key: ratio for key, _, _, ratio, _, _ in peers.MEASURES}
    return {(key, k): (ratio_of[key](r), r.get("cpu", "?"), r.get("params", peers.REFERENCE_PRESET))
            for (key, k), r in found.items()}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, paths = sys.argv[1], sys.argv[2:]
    found = summaries(paths)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.2))
    width = 0.26
    colors = {"avx2": "#8da0cb", "avx512": "#66c2a5", "avx512-ifma": "#fc8d62"}
    labelled = set()
    for i, (op, label, _, _, target, applies) in enumerate(peers.MEASURES):
        for j, k in enumerate(peers.KERNELS):
            if (op, k) not in found:
                continue
            ratio, _, preset = found[(op, k)]
            x = i + (j - 1) * width
            ax.bar(x, ratio, width * 0.95, color=colors[k], label=None if k in labelled else k)
            labelled.add(k)
            ax.text(x, ratio + 0.08, f"{ratio:.2f}", ha="center", va="bottom", fontsize=7)
            if preset != peers.REFERENCE_PRESET:
                ax.text(x, 0.08, preset, ha="center", va="bottom", fontsize=6, rotation=90)
        # The target line spans the kernels it applies to (the NTT's 5x: the AVX-512 ones).
        first = 0 if applies is None else min(peers.KERNELS.index(k) for k in applies)
        ax.hlines(target, i + (first - 1.6) * width, i + 1.6 * width, colors="black",
                  linestyles="dashed")
        ax.text(i + 1.6 * width, target, f" {target:g}x", va="center", fontsize=7)
    ax.set_xticks(range(len(peers.MEASURES)), [m[1] for m in peers.MEASURES], fontsize=8)
    ax.set_ylabel("peer's time / Tessera's (same run)")
    cpus = sorted({c for _, c, _ in found.values()})
    ax.set_title(f"Same-run ratios against the peers, 2 threads (NTT: 1); {', '.join(cpus)}",
                 fontsize=9)
    handles, names = ax.get_legend_handles_labels()
    order = sorted(range(len(names)), key=lambda i: peers.KERNELS.index(names[i]))
    ax.legend([handles[i] for i in order], [names[i] for i in order], title="TESSERA_SIMD",
              fontsize=8, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_ylim(0, max(r for r, _, _ in found.values()) * 1.18)
    fig.tight_layout()
    fig.savefig(out)
    print(f"wrote {out} ({len(found)} ratios)")


if __name__ == "__main__":
    main()
