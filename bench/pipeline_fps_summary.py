#!/usr/bin/env python3
"""Frames per second and CPU time per frame from bench/pipeline-fps's CSV.

Each (size, filter, variant, round) has a run of WARM frames and one of FRAMES
frames; their difference is the frames' own cost.  Per round:
  fps = (FRAMES - WARM) / (rtime_FRAMES - rtime_WARM)
  cpu_ms_per_frame = (cpu_FRAMES - cpu_WARM) / (FRAMES - WARM) * 1000
Printed: median [min-max] over the rounds, and ratios between variants taken
round by round (the runs of one round ran next to each other) and then the
median of those.

  pipeline_fps_summary.py CSV --warm W --frames N
"""
import argparse
import csv
import statistics
import sys
from collections import defaultdict

# How the variants are compared: (a, b) prints RATIO .../a:b (fps of a / fps of b).
PAIRS = [("zero-copy", "copy"), ("zero-copy", "cpu"), ("copy", "cpu"), ("copy-yuv420p", "cpu")]
ORDER = ["zero-copy", "copy", "copy-yuv420p", "cpu", "va-only"]
FILTERS = ["null", "transpose", "avgblur"]


def per_round(path, warm, frames):
    """{(size, filter, variant): {round: (fps, cpu_ms_per_frame)}}"""
    runs = defaultdict(dict)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["size"], row["filter"], row["variant"], int(row["round"]))
            runs[key][int(row["frames"])] = (float(row["rtime_s"]), float(row["cpu_s"]))
    out = defaultdict(dict)
    for (size, flt, variant, rnd), by_count in runs.items():
        if warm not in by_count or frames not in by_count:
            continue
        dt = by_count[frames][0] - by_count[warm][0]
        dcpu = by_count[frames][1] - by_count[warm][1]
        n = frames - warm
        fps = n / dt if dt > 0 else float("nan")
        out[(size, flt, variant)][rnd] = (fps, max(dcpu, 0.0) / n * 1000.0)
    return out


def spread(values):
    v = sorted(x for x in values if x == x)
    if not v:
        return (float("nan"),) * 3
    return statistics.median(v), v[0], v[-1]


def summarise(path, warm, frames):
    """Rows (size, filter, variant, fps (med, min, max), cpu_ms (med, min, max)) and
    ratios (size, filter, a, b, fps ratio (med, min, max), CPU-per-frame ratio (med, min, max))."""
    data = per_round(path, warm, frames)
    rows, ratios = [], []
    keys = sorted({(s, f) for s, f, _ in data}, key=lambda k: (int(k[0].split("x")[0]),
                                 FILTERS.index(k[1]) if k[1] in FILTERS else len(FILTERS), k[1]))
    for size, flt in keys:
        for variant in ORDER:
            rounds = data.get((size, flt, variant))
            if rounds:
                rows.append((size, flt, variant, spread(x[0] for x in rounds.values()),
                             spread(x[1] for x in rounds.values())))
        for a, b in PAIRS:
            ra, rb = data.get((size, flt, a)), data.get((size, flt, b))
            if ra and rb:
                paired = [ra[r][0] / rb[r][0] for r in ra if r in rb and rb[r][0] > 0]
                cpu = [ra[r][1] / rb[r][1] for r in ra if r in rb and rb[r][1] > 0]
                if paired:
                    ratios.append((size, flt, a, b, spread(paired), spread(cpu)))
    return rows, ratios


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--warm", type=int, required=True)
    ap.add_argument("--frames", type=int, required=True)
    args = ap.parse_args()
    rows, ratios = summarise(args.csv, args.warm, args.frames)
    if not rows:
        print("pipeline-fps: no complete runs in " + args.csv, file=sys.stderr)
        return 1
    print("%-10s %-10s %-13s %22s %26s" % ("size", "filter", "variant", "fps median [min-max]",
                                           "CPU ms/frame median [min-max]"))
    for size, flt, variant, fps, cpu in rows:
        shown = "(any)" if variant == "va-only" else flt
        print("%-10s %-10s %-13s %8.2f [%5.2f-%5.2f] %12.1f [%5.1f-%5.1f]" % ((size, shown, variant) + fps + cpu))
    for size, flt, a, b, r, c in ratios:
        print("RATIO fps/%s/%s/%s:%s = %.2f [%.2f-%.2f] (frames per second of %s / %s, round by round)"
              % ((size, flt, a, b) + r + (a, b)))
        print("RATIO cpu-per-frame/%s/%s/%s:%s = %.2f [%.2f-%.2f] (CPU time per frame, all threads, of %s / %s; "
              "steadier than fps on a loaded machine)" % ((size, flt, a, b) + c + (a, b)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
