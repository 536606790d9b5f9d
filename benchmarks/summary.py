#!/usr/bin/env python3
"""Headline table from a benchmark output directory (scripts/bench.sh).

Usage: summary.py OUT_DIR
Prints, as markdown: ours / old-design ratios per workload at 1 thread,
nproc threads and the oversubscribed point, then ridr's targets from
issue 3 with the measured value next to each.  Reads only what bench.sh
wrote; prints "n/a" for anything missing.
"""
import glob
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def median(d, name):
    for v in d["variants"]:
        if v["name"] == name:
            return v["median"]
    return None


def main(out):
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        if path.endswith(".table.json"):
            continue
        d = load(path)
        if not d or "variants" not in d:
            continue
        t = d["threads"]
        r = d["ratio_ours_over_baseline"]
        pts = {t[0]: r[0], t[-2] if len(t) > 1 else t[-1]: r[-2] if len(t) > 1 else r[-1], t[-1]: r[-1]}
        rows.append((d["benchmark"], d["ours"], d["baseline"], pts))
    print("| workload | ours / old | " + " | ".join(
        f"{k} thr" for k in sorted({k for _, _, _, p in rows for k in p})) + " |")
    keys = sorted({k for _, _, _, p in rows for k in p})
    print("|---|---|" + "---|" * len(keys))
    for name, ours, base, pts in rows:
        cells = [f"{pts[k]:.2f}x" if pts.get(k) is not None else "-" for k in keys]
        print(f"| {name} | {ours} / {base} | " + " | ".join(cells) + " |")

    print("\n| ridr target (issue 3) | target | measured |\n|---|---|---|")
    ic = load(os.path.join(out, "ridr_icount.table.json"))
    find4096 = next((r["ridr_find"] for r in ic["rows"] if r["ids"] == 4096), None) if ic else None
    print(f"| find instructions, 4096 ids | <= 40 | {find4096 if find4096 is not None else 'n/a'} |")
    lk = load(os.path.join(out, "ridr_lookup_4096.json"))
    if lk and median(lk, "flat_nolock") and median(lk, "ridr")[0] > 0:
        lat = median(lk, "flat_nolock")[0] / median(lk, "ridr")[0]
        print(f"| find latency vs flat array, 4096 ids, 1 thread | <= 1.3x | {lat:.2f}x |")
    else:
        print("| find latency vs flat array | <= 1.3x | n/a |")
    mem = load(os.path.join(out, "ridr_memory.table.json"))
    dense = [r for r in mem["rows"] if r["set"] == "dense"] if mem else []
    if dense:
        big = max(dense, key=lambda r: r["ids"])
        print(f"| bytes per dense id ({big['ids']} ids) | <= 9.5 | {big['ridr_nodes']:.2f} |")
    ch = load(os.path.join(out, "ridr_churn.json"))
    if ch and median(ch, "spin_flat")[0] > 0:
        rel = median(ch, "ridr")[0] / median(ch, "spin_flat")[0]
        print(f"| alloc+remove vs spinlocked flat array, 1 thread | >= 0.6x (2x the IDR's 0.3x) | {rel:.2f}x |")
    for n in (64, 4096, 1000000):
        a = load(os.path.join(out, f"ridr_lookup_{n}.json"))
        b = load(os.path.join(out, f"ridr_lookup_{n}_writer.json"))
        if a and b and median(a, "ridr")[0] > 0:
            ra, rb = median(a, "ridr"), median(b, "ridr")
            # 1 reader: the writer runs on the other CPU, so the ratio
            # measures interference, not two threads sharing one CPU.
            print(f"| readers with a writer / without, {n} ids, 1 reader, writer on another CPU | >= 0.9x | {rb[0] / ra[0]:.2f}x |")
            hog = median(b, "ridr_cpu_hog")
            if hog and hog[0] > 0:
                print(f"| same, against a control: the writer's 64 ids held still by a CPU hog (same tree) | >= 0.9x | {rb[0] / hog[0]:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "out/bench"))
