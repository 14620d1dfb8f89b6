#!/usr/bin/env python3
"""GPU time per kernel from Nsight Compute's CSV (`ncu --csv --metrics gpu__time_duration.sum`).

Usage: ncu-summary.py FILE|- [UNITS]: totals per kernel name, divided by UNITS (for example the
number of operations the profiled program ran, warm-up included) to give a per-operation
breakdown. Used by scripts/gpu-check.sh on the GPU machine (docs/gpu.md).
"""
import collections
import csv
import io
import sys

text = (sys.stdin if sys.argv[1] == "-" else open(sys.argv[1])).read()
start = text.find('"ID"')
if start < 0:
    sys.exit("no ncu CSV table in the input")
units = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
to_ms = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0}
agg = collections.defaultdict(lambda: [0, 0.0])
for row in csv.DictReader(io.StringIO(text[start:])):
    if row.get("Metric Name") != "gpu__time_duration.sum":
        continue
    scale = to_ms.get(row["Metric Unit"])
    if scale is None:
        sys.exit(f"unknown unit {row['Metric Unit']!r}")
    a = agg[row["Kernel Name"].split("(")[0]]
    a[0] += 1
    a[1] += float(row["Metric Value"].replace(",", "")) * scale
total = sum(a[1] for a in agg.values())
count = sum(a[0] for a in agg.values())
print(f"{count} kernels, {total:.3f} ms of GPU time; per unit (/{units:g}): "
      f"{count / units:.0f} kernels, {total / units:.3f} ms")
for name, (c, t) in sorted(agg.items(), key=lambda x: -x[1][1]):
    print(f"  {name:32s} {c / units:7.0f} launches {t / units:9.3f} ms {1e3 * t / c:9.2f} us each")
