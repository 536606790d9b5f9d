#!/usr/bin/env python3
"""Headline table from a benchmark output directory (scripts/bench.sh).

Usage: summary.py OUT_DIR
Prints, as markdown: ours / old-design ratios per workload at 1 thread,
nproc threads and the oversubscribed point, then ridr's targets from
issue 3 with the measured value next to each, then issue 10's targets
against the kernel's own IDR, XArray and maple tree (when bench.sh ran
ridr_kernel_bench).  Reads only what bench.sh wrote; prints "n/a" for
anything missing.
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
    kernel_targets(out)
    return 0


def series(d, name):
    for v in d["series"]:
        if v["name"] == name:
            return v
    return None


def kernel_targets(out):
    """Issue 10's targets, ridr against the kernel baselines (one run)."""
    mem = load(os.path.join(out, "kbase_memory.json"))
    lk = load(os.path.join(out, "kbase_lookup.json"))
    ic = load(os.path.join(out, "kbase_icount.json"))
    ch = load(os.path.join(out, "kbase_churn.json"))
    if not (mem or lk or ic or ch):
        return
    print("\n| ridr target (issue 10), against Linux 6.1 | target | ridr | idr | xarray | maple |\n|---|---|---|---|---|---|")
    kern = ("idr", "xarray", "maple")
    if mem:
        rows = {r["workload"]: r for r in mem["rows"]}
        quick = " (quick sizes)" if mem.get("quick") else ""
        for key, what, target, whole in (
                ("a_random2048", "2048 random ids in [0, 2^31), whole map (heap)", "<= 64 KiB", True),
                ("b_random", "random 31-bit ids, bytes per id (heap)", "<= 40 B", False),
                ("c_cyclic", "cyclic, 0.1% long-lived, bytes per id (heap)", "<= 16 B", False),
                ("d_dense", "dense, bytes per id (heap)", "<= 9.5 B", False)):
            r = rows.get(key)
            if not r:
                continue
            def fmt(name):
                b = r["heap_bytes"][name]
                return f"{b / 1024:.1f} KiB" if whole else f"{b / r['live']:.1f} B"
            print(f"| {what}{quick} | {target}, and below all three | {fmt('ridr')} | "
                  + " | ".join(fmt(k) for k in kern) + " |")
    if lk:
        ns = {v["name"]: v["values"] for v in lk["series"]}
        r, f = ns["ridr"], ns.get("flat")
        if f and f[0]:
            print(f"| find latency vs flat array, 4096 dense ids, tight loop, the array read without a read-side section (the target's own measure, each lookup in its section: issue 3's row above) | <= 1.25x | {r[0] / f[0]:.2f}x | "
                  + " | ".join(f"{ns[k][0] / f[0]:.2f}x" for k in kern) + " |")
        print(f"| random find among {lk['groups'][1].split('_')[-1]} sparse 31-bit ids, ns | 2x faster than maple and xarray | {r[1]:.1f} | "
              + " | ".join(f"{ns[k][1]:.1f} ({ns[k][1] / r[1]:.2f}x)" for k in kern) + " |")
    if ic:
        v = {s["name"]: s["values"][0] for s in ic["series"]}
        print(f"| instructions per find, {ic['ids']} ids | <= 25 | {v['ridr']:.1f} | "
              + " | ".join(f"{v[k]:.1f}" for k in kern) + " |")
    if ch:
        rate = {v["name"]: v["values"] for v in ch["series"]}
        for i, pat in enumerate(ch["groups"]):
            rr = rate["ridr"][i]
            print(f"| churn '{pat}': ridr / spin_stack >= 0.6x, ridr / idr >= 3x | >= 0.6x, >= 3x | "
                  f"{rr / rate['spin_stack'][i]:.2f}x, {rr / rate['idr'][i]:.2f}x | "
                  + " | ".join(f"{rate[k][i]:.2f} M/s" for k in kern) + " |")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "out/bench"))
