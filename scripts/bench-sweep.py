"""Times one 64-point design sweep three ways: in this process on every core, in this process
on one worker, and on a local Ray cluster (docs/simulator.md, "Sweeps from Python").
Checks that the three tables are equal. Usage: python scripts/bench-sweep.py [WORKLOAD PARAMS]"""

import os
import sys
import time

import ray

import tessera

workload, params = (sys.argv[1], sys.argv[2]) if len(sys.argv) > 2 else ("bootstrap", "test-boot")
grid = {
    "chip.clusters": [1, 2, 4, 8],
    "memory.offchip.bandwidth_gbs": [250, 500, 1000, 2000],
    "memory.scratchpad.capacity_mb": [64, 128, 256, 512],
}
t0 = time.perf_counter()
trace = tessera.record(workload, params)
print(f"recorded {trace} in {time.perf_counter() - t0:.2f} s; {os.cpu_count()} cores")
runs = {}
for name, kw in [
    ("in-process, all cores", dict(executor="process")),
    ("in-process, 1 worker", dict(executor="process", workers=1)),
]:
    t0 = time.perf_counter()
    runs[name] = tessera.sweep("ark", trace, grid=grid, progress=False, **kw)
    print(f"{name:28s} {time.perf_counter() - t0:7.2f} s  {len(runs[name])} points")
t0 = time.perf_counter()
ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
up = time.perf_counter() - t0
t0 = time.perf_counter()
runs["ray"] = tessera.sweep("ark", trace, grid=grid, executor="ray", progress=False)
print(f"{'ray (local cluster)':28s} {time.perf_counter() - t0:7.2f} s  {len(runs['ray'])} points (+ {up:.2f} s ray.init)")
ray.shutdown()
tables = [r.table() for r in runs.values()]
assert all(t == tables[0] for t in tables) and len(tables[0]) == 64
print("tables equal: yes")
