"""``python -m tessera ...``: the ``tessera`` command line from a Python install.

``sweep`` runs here, on the package's :func:`tessera.sweep` (so ``--ray auto|ADDRESS`` can
farm the points out to a Ray cluster); every other command runs the CLI's own Rust code inside
the extension module (:func:`tessera._native.cli_main`), so a plain
``pip install ./crates/python`` has every command, with no separate binary."""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import _native


def _names(s: str):
    """A comma-separated option: one name as a string, several as a list."""
    names = [x.strip() for x in s.split(",") if x.strip()]
    return names[0] if len(names) == 1 else names


def sweep_main(argv: List[str]) -> int:
    """``tessera sweep`` on the Python package (``--ray`` for a Ray cluster)."""
    import tessera

    p = argparse.ArgumentParser(prog="python -m tessera sweep", description=sweep_main.__doc__)
    p.add_argument("--arch", default="reed")
    p.add_argument("--set", action="append", required=True, metavar="KEY=V1,V2,...")
    p.add_argument("--workload", default="hmult", help="one workload or several, comma-separated")
    p.add_argument("--params", default="ark", help="one parameter set or several, comma-separated")
    p.add_argument("--level", type=int)
    p.add_argument("--size", type=int)
    p.add_argument("--metric", default="time_s")
    p.add_argument("--out", default="sweep", help="writes OUT.jsonl (resumable), OUT.csv, OUT.png")
    p.add_argument("--ray", metavar="auto|ADDRESS|local", help="run each point as a Ray task")
    p.add_argument("--workers", type=int)
    p.add_argument("--streamed-keyswitch", action="store_true")
    p.add_argument("--of-limb", action="store_true")
    p.add_argument("--min-ks", action="store_true")
    p.add_argument("--no-hoisting", action="store_true")
    p.add_argument("--json", action="store_true", help="one JSON object per point, no progress")
    a = p.parse_args(argv)
    grid = {}
    for s in a.set:
        if "=" not in s:
            p.error(f"--set {s}: expected KEY=V1,V2,...")
        k, v = s.split("=", 1)
        grid[k.strip()] = [x.strip() for x in v.split(",") if x.strip()]
    address = None if a.ray in (None, "local") else a.ray
    try:
        res = tessera.sweep(
            arch=a.arch,
            workload=_names(a.workload),
            params=_names(a.params),
            grid=grid,
            executor="ray" if a.ray else "process",
            ray_address=address,
            workers=a.workers,
            out=a.out + ".jsonl",
            progress=False if a.json else None,
            level=a.level,
            size=a.size,
            of_limb=a.of_limb,
            min_ks=a.min_ks,
            streamed_keyswitch=a.streamed_keyswitch,
            hoisting=not a.no_hoisting,
        )
    except tessera.TesseraError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    import json

    if a.json:
        # The schema of `tessera sweep --json` (docs/json.md).
        for r in res:
            print(json.dumps({
                "schema": "tessera.sweep/1",
                "workload": r.settings.get("workload", a.workload),
                "params": r.settings.get("params", a.params),
                "settings": {k: str(v) for k, v in r.settings.items()},
                "report": {k: v for k, v in r.to_dict().items() if k != "settings"},
            }))
    else:
        keys = list(grid)
        print("  ".join(keys + ["time_s", "energy_j", "area_mm2"]))
        for row in res.table():
            print("  ".join(str(x) for x in row))
    res.to_csv(a.out + ".csv")
    # The Rust CLI's metric names map to report fields.
    metric = {"time": "time_s", "energy": "energy_j", "area": "area_mm2", "offchip": "offchip_bytes", "noc": "noc_bytes"}.get(a.metric, a.metric)
    try:
        res.plot(metric, path=a.out + ".png")
    except (tessera.TesseraError, ImportError) as e:
        print(f"no plot: {e}", file=sys.stderr)
    for e in res.errors:
        print(f"failed point {e.settings}: {e.error}", file=sys.stderr)
    if not a.json:
        print(
            f"{len(res)} points ({res.skipped} from {a.out}.jsonl), {len(res.errors)} failed, "
            f"{res.wall_s:.2f} s; wrote {a.out}.csv",
            file=sys.stderr,
        )
    return 1 if res.errors else 0


def main(argv: Optional[List[str]] = None) -> int:
    """Runs one ``tessera`` command; returns its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "sweep":
        return sweep_main(argv[1:])
    return _native.cli_main(argv)

if __name__ == "__main__":
    sys.exit(main())
