#!/usr/bin/env python3
"""Turn bench.sh's samples into results.json, results.md and results.png.

Usage: bench_report.py SAMPLES.tsv META.json OUTDIR

SAMPLES.tsv: one line per measured point of one boot,
    kernel boot workload threads ops_per_sec ops seconds
with kernel "unpatched" or "patched".  META.json: what bench.sh knows about
the run (command, date, versions, series, ...), copied into results.json.

For every (workload, threads): every sample of each kernel, their median,
min and max, and ratio = median(patched) / median(unpatched); also the
ratio of each boot pair (patched boot i / unpatched boot i) so the spread
of the ratio is visible.  The memory workloads (timer_mem_*, one point per
boot) carry slab bytes per live timer where the others carry ops/s, and
the number of timers where the others carry ops: they get their own table,
with the difference patched - unpatched.  Exits non-zero if a point lacks samples of either
kernel (something did not run); never judges the figures.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

KERNELS = ("unpatched", "patched")


def is_mem(workload):
    """rk_bench's K_MEM workloads: bytes per timer, not ops/s."""
    return workload.startswith("timer_mem_")


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            k, boot, w, t, rate, ops, secs = line.split()
            rows.append((k, int(boot), w, int(t), float(rate), int(ops),
                         float(secs)))
    return rows


def summarize(rows):
    order = []
    by = {}
    timers = {}
    for k, boot, w, t, rate, ops, _ in rows:
        if (w, t) not in by:
            order.append((w, t))
            by[(w, t)] = {kk: {} for kk in KERNELS}
        by[(w, t)][k][boot] = rate
        if is_mem(w):
            timers[w] = ops
    points = []
    for w, t in order:
        s = by[(w, t)]
        if not s["unpatched"] or not s["patched"]:
            raise SystemExit(f"bench_report: {w} {t}: no samples of "
                             f"{'unpatched' if not s['unpatched'] else 'patched'}")
        p = {"workload": w, "threads": t}
        if is_mem(w):
            p["unit"] = "slab bytes per live timer"
            p["timers"] = timers[w]
        for k in KERNELS:
            v = [s[k][b] for b in sorted(s[k])]
            p[k] = {"samples": v, "boots": sorted(s[k]),
                    "median": statistics.median(v), "min": min(v),
                    "max": max(v)}
        u = p["unpatched"]["median"]
        p["ratio_patched_over_unpatched"] = (
            p["patched"]["median"] / u if u > 0 else None)
        pairs = [s["patched"][b] / s["unpatched"][b]
                 for b in sorted(s["patched"])
                 if b in s["unpatched"] and s["unpatched"][b] > 0]
        p["ratio_per_boot_pair"] = pairs
        if is_mem(w):
            p["patched_minus_unpatched"] = (p["patched"]["median"] -
                                            p["unpatched"]["median"])
        points.append(p)
    return points


def fmt(x):
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


def boots_line(m):
    b = m.get("boots") or []
    if not b:
        return "- boots: not recorded"
    loads = [x["host_load_1min"] for x in b]
    walls = [x["wall_seconds"] for x in b]
    line = (f"- host load (1 min) when each boot started: {min(loads):.1f}"
            f"-{max(loads):.1f} on {m.get('host_cpus', '?')} host cpus; "
            f"{min(walls)}-{max(walls)} s per boot")
    if max(loads) > m.get("host_cpus", 2) / 2 and not icount(m):
        line += (" **(busy host: figures with 2 or more threads mostly "
                 "measure vCPU preemption; compare 1-thread rows only)**")
    return line


def icount(m):
    """A run of bench.sh --icount: the guest's clock counts instructions."""
    return m.get("clock") == "icount"


def markdown(meta, points):
    m = meta
    out = [f"# In-VM benchmarks: Linux {m['version']}, patched / unpatched",
           "",
           f"- unpatched: {m['kernels']['unpatched']['release']} "
           f"(pristine tree); patched: {m['kernels']['patched']['release']} "
           f"+ series {m['series_sha256'][:12]} "
           f"({len(m['series'])} patches: "
           + ", ".join(s[:4] for s in m["series"]) + ")",
           f"- {m['boots_per_kernel']} boots per kernel, alternating "
           f"(patched first); {m['seconds_per_point']} s per point; "
           f"guest: {m['qemu']}",
           boots_line(m),
           f"- date {m['date']}, ridr-kit {m['ridr_kit_commit']}, "
           f"command `{m['command']}`, wall time {m.get('wall_seconds', '?')} s",
           "",
           ("**Instruction counts** (`--icount`: qemu -icount shift=0, the "
            "guest's clock advances 1 ns per guest instruction): ops/s is "
            "operations per 10^9 guest instructions, user and kernel, on one "
            "vCPU; the host's load does not move it, and caches, TLB and "
            "locks are not in it.  " if icount(m) else "") +
           "ops/s: median of the boots (min-max); ratio = median patched / "
           "median unpatched, and in brackets the range of the per-boot-pair "
           "ratios.  psem/pmsg threads = 2 x pairs.",
           "",
           "| workload | threads | unpatched ops/s | patched ops/s | ratio |",
           "|---|---|---|---|---|"]
    for p in points:
        if is_mem(p["workload"]):
            continue
        u, q = p["unpatched"], p["patched"]
        r = p["ratio_patched_over_unpatched"]
        pr = p["ratio_per_boot_pair"]
        rs = "-" if r is None else f"{r:.2f}"
        if pr:
            rs += f" [{min(pr):.2f}-{max(pr):.2f}]"
        out.append(f"| {p['workload']} | {p['threads']} | "
                   f"{fmt(u['median'])} ({fmt(u['min'])}-{fmt(u['max'])}) | "
                   f"{fmt(q['median'])} ({fmt(q['min'])}-{fmt(q['max'])}) | "
                   f"{rs} |")
    mem = [p for p in points if is_mem(p["workload"])]
    if mem:
        out += ["",
                "Memory: the growth of the guest's \"Slab:\" (/proc/meminfo, "
                "after /proc/sys/vm/stat_refresh) while one process makes "
                "its timers, per live timer: k_itimer, sigqueue and the id "
                "map's share.  Median of the boots (min-max).",
                "",
                "| workload | timers | unpatched B/timer | patched B/timer "
                "| patched - unpatched |",
                "|---|---|---|---|---|"]
        for p in mem:
            u, q = p["unpatched"], p["patched"]
            out.append(f"| {p['workload']} | {p['timers']} | "
                       f"{u['median']:.1f} ({u['min']:.1f}-{u['max']:.1f}) | "
                       f"{q['median']:.1f} ({q['min']:.1f}-{q['max']:.1f}) | "
                       f"{p['patched_minus_unpatched']:+.1f} |")
    return "\n".join(out) + "\n"


def chart(points, meta, png, tmp):
    """One panel per workload: ops/s of both kernels against threads."""
    gp = shutil.which("gnuplot")
    if not gp:
        print("bench_report: gnuplot not installed, no chart",
              file=sys.stderr)
        return False
    works = []
    for p in points:
        if p["workload"] not in works:
            works.append(p["workload"])
    cols = 3
    rows = (len(works) + cols - 1) // cols
    script = ["set terminal pngcairo size 1200,%d noenhanced font ',9'"
              % (330 * rows + 40),
              f"set output '{png}'",
              "set grid", "set key top left", "set offsets 0.3,0.3,0,0",
              "set multiplot layout %d,%d title 'Linux %s in a 2-vCPU TCG "
              "guest: patched (series %s) vs unpatched; median of %d boots, "
              "min-max bars'" % (rows, cols, meta["version"],
                                 meta["series_sha256"][:12],
                                 meta["boots_per_kernel"])]
    for w in works:
        pts = [p for p in points if p["workload"] == w]
        dat = os.path.join(tmp, f"{w}.dat")
        scale = 1 if is_mem(w) else 1e3
        with open(dat, "w") as f:
            for p in pts:
                u, q = p["unpatched"], p["patched"]
                f.write(f"{p['threads']} {u['median'] / scale}"
                        f" {u['min'] / scale} {u['max'] / scale}"
                        f" {q['median'] / scale}"
                        f" {q['min'] / scale} {q['max'] / scale}\n")
        ratios = ", ".join(
            f"{p['threads']}: {p['ratio_patched_over_unpatched']:.2f}"
            for p in pts if p["ratio_patched_over_unpatched"] is not None)
        script += [
            f"set title '{w} (ratio {ratios})'",
            "set xlabel 'threads'",
            "set ylabel '%s'" % ("slab bytes per timer" if is_mem(w)
                                 else "thousand ops/s"),
            "set yrange [0:*]",
            "set xtics (" + ", ".join(f"'{p['threads']}' {p['threads']}"
                                      for p in pts) + ")",
            f"plot '{dat}' using 1:2:3:4 with yerrorlines lw 2 "
            "title 'unpatched', "
            f"'{dat}' using 1:5:6:7 with yerrorlines lw 2 title 'patched'"]
    script.append("unset multiplot")
    subprocess.run([gp], input="\n".join(script), text=True, check=True)
    return True


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    samples, metafile, outdir = argv[1:]
    with open(metafile) as f:
        meta = json.load(f)
    points = summarize(load(samples))
    if not points:
        raise SystemExit("bench_report: no samples")
    res = dict(meta)
    res["points"] = points
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write(markdown(meta, points))
    png = os.path.join(outdir, "results.png")
    tmp = os.path.join(outdir, "tmp-plot")
    os.makedirs(tmp, exist_ok=True)
    try:
        if chart(points, meta, png, tmp):
            print(f"bench_report: wrote {png}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"bench_report: wrote {outdir}/results.json, results.md",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
