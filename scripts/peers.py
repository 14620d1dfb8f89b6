"""The peer scripts' summary lines and issue 22's targets, shared by `host-verdict.py` and
`plot-peer-ratios.py` (both run as scripts from this directory, which puts it on `sys.path`).

A summary line is one JSON object per line, as printed by `scripts/bench-ntt-peers.sh`,
`scripts/bench-ckks-peers.sh`, `scripts/bench-boot-peers.sh`, and the per-call lines of
`cargo bench -p tessera-math --bench ntt_median` (Tessera against tfhe-ntt in one process).
Everything else in a raw output file (progress, stderr) is skipped.
"""
import json

# (key, label, op of the summary line, ratio from it (peer's time / Tessera's), target ratio,
#  kernels the target applies to (None: every kernel)). The bootstrapping ratio is the inverse
# of Tessera's share of OpenFHE's time: a share of at most 0.40 is a ratio of at least 2.5.
MEASURES = [
    ("ntt", "NTT 60-bit\nvs Lattigo", "ntt_peer_summary", lambda r: r["speedup_vs_lattigo"],
     5.0, ("avx512", "avx512-ifma")),
    ("hmult", "HMult\nvs OpenFHE", "hmult", lambda r: r["speedup"], 3.0, None),
    ("hrot", "HRot\nvs OpenFHE", "hrot", lambda r: r["speedup"], 3.0, None),
    ("bootstrap", "bootstrapping\nvs OpenFHE", "bootstrap",
     lambda r: 1.0 / r["tessera_share_of_openfhe"], 2.5, None),
]
KERNELS = ["avx2", "avx512", "avx512-ifma"]
# Bootstrapping must also keep at least this precision and these levels (issue 22).
MIN_BOOT_BITS = 20.0
MIN_BOOT_LEVELS = 8


def rows(paths):
    """Every JSON object on a line of its own in `paths`, in order. A file with none is an
    error (it is not the output of a peer script)."""
    out = []
    for path in paths:
        n = 0
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(row, dict):
                    out.append(row)
                    n += 1
        if n == 0:
            raise ValueError(f"{path}: no JSON line (is it the output of a scripts/bench-*-peers.sh run?)")
    return out


# The preset every HMult and HRot summary without a `params` field was measured at, and the
# reference the other presets' precision is held to.
REFERENCE_PRESET = "ark"
# Precision counts as equal within this many bits: what the same preset's mean precision moves
# between runs (random messages each run; +-0.01 bits in session 51's raw outputs).
PRECISION_TOLERANCE_BITS = 0.05


def presets(all_rows):
    """(measure key, kernel) -> {preset: summary row}, for every peer-script summary (the last
    one of a kernel and preset wins). Summaries of HMult and HRot name their preset
    (`scripts/bench-ckks-peers.sh` with several `PARAMS`); older ones, and the other measures,
    count as `REFERENCE_PRESET`."""
    found = {}
    for row in all_rows:
        if "kernel" not in row:
            continue
        for key, _, op, _, _, _ in MEASURES:
            if row.get("op") == op and ("speedup" in row or "speedup_vs_lattigo" in row
                                        or "tessera_share_of_openfhe" in row):
                found.setdefault((key, row["kernel"]), {})[row.get("params", REFERENCE_PRESET)] = row
    return found


def chosen(by_preset, ratio_of):
    """The preset the benchmarks choose on one kernel: the fastest against the peer among those
    whose precision is at least the reference preset's (where both report it, equal within
    `PRECISION_TOLERANCE_BITS`), as issue 22 asks the benchmarks to choose the faster word size
    per CPU."""
    ref = by_preset.get(REFERENCE_PRESET, {}).get("tessera_precision_bits")
    eligible = [name for name, r in by_preset.items()
                if ref is None
                or r.get("tessera_precision_bits", ref) >= ref - PRECISION_TOLERANCE_BITS]
    return max(eligible or by_preset, key=lambda name: ratio_of(by_preset[name]))


def summaries(all_rows):
    """(measure key, kernel) -> summary row of the chosen preset ([`chosen`])."""
    ratio_of = {key: f for key, _, _, f, _, _ in MEASURES}
    return {k: v[chosen(v, ratio_of[k[0]])] for k, v in presets(all_rows).items()}


def tfhe_ntt(all_rows):
    """(bits, direction, kernel) -> (Tessera's median us, tfhe-ntt's median us, peer kernel)
    from `ntt_median` lines (bench names `ntt_median/N=2^16/<bits>-bit/<dir>/<impl>`)."""
    med = {}
    for row in all_rows:
        bench = row.get("bench", "")
        parts = bench.split("/")
        if len(parts) != 5 or parts[0] != "ntt_median":
            continue
        bits, direction, impl = parts[2], parts[3], parts[4]
        med[(bits, direction, row["kernel"], impl)] = (row["median_us"], row.get("peer_kernel"))
    out = {}
    for (bits, direction, kernel, impl), (us, peer_kernel) in med.items():
        if impl != "tessera" or (bits, direction, kernel, "tfhe-ntt") not in med:
            continue
        out[(bits, direction, kernel)] = (us, med[(bits, direction, kernel, "tfhe-ntt")][0],
                                         peer_kernel)
    return out


def verdict(ratio, target):
    """'met (+12 %)' or 'missed (-3 %)': the margin is ratio / target - 1."""
    margin = ratio / target - 1.0
    return f"{'met' if ratio >= target else 'MISSED'} ({margin * 100:+.1f} %)"


def table(all_rows):
    """Issue 22's acceptance as markdown table lines, one per measure and kernel found, and the
    number of misses among them."""
    found = presets(all_rows)
    lines = ["| measure | kernel | Tessera | peer, same run | ratio | target | verdict (margin) |",
             "|---|---|---|---|---|---|---|"]
    misses = 0

    def add(measure, kernel, ours, peer, ratio, target, met_extra=True, note="", counted=None):
        nonlocal misses
        if target is None:
            v = "reported (no target)"
        else:
            v = verdict(ratio, target)
            if not met_extra:
                v = "MISSED (" + note + ")"
            if counted is not None:
                v = f"not counted ({counted} chosen on this kernel): {v}"
            elif ratio < target or not met_extra:
                misses += 1
        lines.append(f"| {measure} | {kernel} | {ours} | {peer} | {ratio:.2f}x | "
                     f"{'-' if target is None else f'{target:g}x'} | {v} |")

    for key, label, _, ratio_of, target, applies in MEASURES:
        for k in KERNELS:
            by_preset = found.get((key, k))
            if by_preset is None:
                continue
            pick = chosen(by_preset, ratio_of)
            r = by_preset[pick]
            t = target if applies is None or k in applies else None
            name = label.replace("\n", " ")
            if key == "ntt":
                add(name, k, f"{r['tessera_median_s'] * 1e6:.1f} us",
                    f"Lattigo {r['lattigo_median_s'] * 1e6:.1f} us", ratio_of(r), t)
            elif key in ("hmult", "hrot"):
                # One row per preset where several were timed (the preset in the measure's
                # name); only the chosen one counts against the target.
                for preset, r in by_preset.items():
                    bits = r.get("tessera_precision_bits")
                    add(name if len(by_preset) == 1 else f"{name} ({preset})", k,
                        f"{r['tessera_median_s'] * 1e3:.1f} ms"
                        + ("" if bits is None else f", {bits:.1f} bits"),
                        f"OpenFHE {r['openfhe_median_s'] * 1e3:.1f} ms", ratio_of(r), t,
                        counted=None if preset == pick else pick)
            else:
                bits, peer_bits = r["tessera_precision_bits"], r["openfhe_precision_bits"]
                lv, peer_lv = r.get("tessera_levels_left"), r.get("openfhe_levels_left")
                ok = bits >= MIN_BOOT_BITS and bits >= peer_bits
                if lv is not None:
                    ok = ok and lv >= MIN_BOOT_LEVELS and (peer_lv is None or lv >= peer_lv)
                lv_text = "" if lv is None else f", {lv} levels left"
                peer_lv_text = "" if peer_lv is None else f", {peer_lv} left"
                add(name, k, f"{r['tessera_median_s']:.2f} s, {bits:.2f} bits{lv_text}",
                    f"OpenFHE {r['openfhe_median_s']:.2f} s, {peer_bits:.2f} bits{peer_lv_text}",
                    ratio_of(r), t, ok,
                    f"precision or levels below {MIN_BOOT_BITS:g} bits / {MIN_BOOT_LEVELS} "
                    "levels or below OpenFHE's")
                mem, peer_mem = r["tessera_peak_rss_gb"], r["openfhe_peak_rss_gb"]
                # Peak memory: OpenFHE's / Tessera's, target 1 (not above OpenFHE's).
                add("bootstrapping peak memory", k, f"{mem:.2f} GB", f"OpenFHE {peer_mem:.2f} GB",
                    peer_mem / mem, 1.0)
    for (bits, direction, kernel), (ours, peer, peer_kernel) in sorted(tfhe_ntt(all_rows).items()):
        t = 1.0 if direction == "forward" and kernel == "avx2" and peer_kernel == "avx2" else None
        add(f"NTT {bits} {direction} vs tfhe-ntt ({peer_kernel} plan)", kernel, f"{ours:.1f} us",
            f"tfhe-ntt {peer:.1f} us", peer / ours, t)
    return lines, misses


def cpus(all_rows):
    """The CPU models named in `all_rows`."""
    return sorted({r["cpu"] for r in all_rows if isinstance(r.get("cpu"), str)})
