#!/usr/bin/env python3
"""Adds up a split encrypted ResNet-20 run (scripts/resnet-images.sh OUTDIR ...).

Reads OUTDIR/image-*.json (`tessera run resnet20 --images 1 --first I --json`) and the
matching `/usr/bin/time -v` records, and prints: images, parameter set, how many passed,
top-1 agreement with the replica, accuracy (encrypted and replica), time per image (mean,
min, max), bootstrappings per image (and per circuit), the largest logit error, the mean
user + system CPU of a whole one-image process (key generation included; unlike the wall
time, it does not grow when other work shares the host) and the largest peak RSS. `--json` prints the same as one JSON object.

usage: scripts/resnet-images-summary.py OUTDIR [--json]
"""
import glob
import json
import os
import re
import statistics
import sys


def check(report, name):
    for c in report["checks"]:
        if c["name"] == name:
            return c["value"]
    raise KeyError(f"{name!r} missing from a report")


def time_record(path):
    """Peak RSS in bytes and user + system CPU seconds from a `/usr/bin/time -v` record."""
    try:
        text = open(path).read()
    except OSError:
        return None, None
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    user = re.search(r"User time \(seconds\): ([0-9.]+)", text)
    system = re.search(r"System time \(seconds\): ([0-9.]+)", text)
    cpu = float(user.group(1)) + float(system.group(1)) if user and system else None
    return (int(rss.group(1)) * 1024 if rss else None), cpu


def summarize(out):
    files = sorted(glob.glob(os.path.join(out, "image-*.json")))
    if not files:
        raise SystemExit(f"error: no image-*.json in {out} (run scripts/resnet-images.sh first)")
    rows = []
    for f in files:
        r = json.load(open(f))
        if r.get("program") != "resnet20" or r.get("size") != 1:
            raise SystemExit(f"error: {f} is not a one-image resnet20 report")
        index = int(re.search(r"image-(\d+)\.json$", f).group(1))
        circuits = {
            c["name"].rsplit(" ", 2)[-2]: c["value"]
            for c in r["checks"]
            if c["name"].startswith("bootstrappings per image at ")
        }
        rows.append(
            {
                "index": index,
                "params": r["params"],
                "passed": bool(r["passed"]),
                "same_top1": check(r, "top-1 equal to the replica's (fraction of images)") == 1.0,
                "correct": check(r, "accuracy on the labels (encrypted)") == 1.0,
                "replica_correct": check(r, "accuracy on the labels (replica)") == 1.0,
                "seconds": check(r, "seconds per image (compute)"),
                "boots": check(r, "bootstrappings per image"),
                "boots_at": circuits,
                "max_err": check(r, "max |logit - replica logit|"),
            }
        )
        rows[-1]["peak_rss_bytes"], rows[-1]["cpu_s"] = time_record(f[: -len(".json")] + ".time")
    params = sorted({r["params"] for r in rows})
    secs = [r["seconds"] for r in rows]
    rss = [r["peak_rss_bytes"] for r in rows if r["peak_rss_bytes"] is not None]
    cpu = [r["cpu_s"] for r in rows if r["cpu_s"] is not None]
    n = len(rows)
    return {
        "images": n,
        "indices": [r["index"] for r in rows],
        "params": params,
        "passed": sum(r["passed"] for r in rows),
        "top1_equal_to_replica": sum(r["same_top1"] for r in rows),
        "accuracy_encrypted": sum(r["correct"] for r in rows) / n,
        "accuracy_replica": sum(r["replica_correct"] for r in rows) / n,
        "seconds_per_image_mean": statistics.fmean(secs),
        "seconds_per_image_min": min(secs),
        "seconds_per_image_max": max(secs),
        "boots_per_image": sorted({r["boots"] for r in rows}),
        "boots_per_image_by_circuit": sorted(
            {json.dumps(r["boots_at"], sort_keys=True) for r in rows}
        ),
        "max_logit_error": max(r["max_err"] for r in rows),
        "cpu_seconds_per_image_mean": statistics.fmean(cpu) if cpu else None,
        "peak_rss_bytes_max": max(rss) if rss else None,
    }


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    s = summarize(argv[1])
    if "--json" in argv[2:]:
        print(json.dumps(s))
        return 0
    print(f"resnet20 at {', '.join(s['params'])}: {s['images']} image(s) {s['indices'][0]}..{s['indices'][-1]}")
    print(f"  passed (each image's own checks)   {s['passed']} / {s['images']}")
    print(f"  top-1 equal to the replica's        {s['top1_equal_to_replica']} / {s['images']}")
    print(f"  accuracy, encrypted / replica       {s['accuracy_encrypted']:.4f} / {s['accuracy_replica']:.4f}")
    print(
        f"  seconds per image (compute)         mean {s['seconds_per_image_mean']:.1f}, "
        f"min {s['seconds_per_image_min']:.1f}, max {s['seconds_per_image_max']:.1f}"
    )
    print(f"  bootstrappings per image            {s['boots_per_image']}")
    print(f"  by circuit (slots: count)           {'; '.join(s['boots_per_image_by_circuit'])}")
    print(f"  max |logit - replica logit|         {s['max_logit_error']:.3e}")
    if s["cpu_seconds_per_image_mean"] is not None:
        print(f"  user + system CPU per image (whole process, mean)  {s['cpu_seconds_per_image_mean']:.1f} s")
    if s["peak_rss_bytes_max"] is not None:
        b = s["peak_rss_bytes_max"]
        print(f"  peak RSS (largest image)            {b / 1e9:.2f} GB ({b / 2**30:.2f} GiB)")
    return 0 if s["passed"] == s["images"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
