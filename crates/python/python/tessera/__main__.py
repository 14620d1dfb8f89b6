"""``python -m tessera ...``: the ``tessera`` command line from a Python install.

``sweep`` runs here, on the package's :func:`tessera.sweep` (so ``--ray auto|ADDRESS`` can
farm the points out to a Ray cluster); every other command runs the ``tessera`` binary: the
one shipped inside the wheel (``tessera/bin/tessera``, put there by ``scripts/test.sh`` and
``scripts/build-wheel.sh``), else ``$TESSERA_BIN``, else ``tessera`` on ``PATH``
(``cargo install --path crates/cli``)."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from typing import List, Optional


def find_binary() -> Optional[str]:
    """The ``tessera`` binary this install runs, or None."""
    env = os.environ.get("TESSERA_BIN")
    if env:
        return env
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "tessera")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    return shutil.which("tessera")


def sweep_main(argv: List[str]) -> int:
    """``tessera sweep`` on the Python package (``--ray`` for a Ray cluster)."""
    import tessera

    p = argparse.ArgumentParser(prog="python -m tessera sweep", description=sweep_main.__doc__)
    p.add_argument("--arch", default="reed")
    p.add_argument("--set", action="append", required=True, metavar="KEY=V1,V2,...")
    p.add_argument("--workload", default="hmult")
    p.add_argument("--params", default="ark")
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
            workload=a.workload,
            params=a.params,
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
        for r in res:
            print(json.dumps(r.to_dict()))
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
    exe = find_binary()
    if exe is None:
        print(
            "error: this install has no tessera binary (build the wheel with "
            "scripts/build-wheel.sh, or `cargo install --path crates/cli`, or set TESSERA_BIN); "
            "`python -m tessera sweep` runs without it",
            file=sys.stderr,
        )
        return 2
    return subprocess.call([exe] + argv)


if __name__ == "__main__":
    sys.exit(main())
