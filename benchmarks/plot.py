#!/usr/bin/env python3
"""Validate benchmark JSON and draw ops/s-vs-threads charts with gnuplot.

Usage: plot.py [--check-only] RESULT.json [...]
For each X.json writes X.png (unless --check-only).  Exits non-zero when a
file is malformed: missing keys, lengths that disagree, non-positive or
non-finite rates, or a ratio that does not match the medians.

Two schemas: the threads harness's (benchmarks/lib/bench.c: "variants",
one line per variant over thread counts) and single-thread tables with
"groups" and "series" (ridr_kernel_bench, kbase_icount.sh: one bar per
series in each group; a null value is a structure that cannot run there).
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile


def validate_bars(path, d):
    for key in ("benchmark", "title", "unit", "groups", "series"):
        if key not in d:
            raise ValueError(f"{path}: missing key {key!r}")
    n = len(d["groups"])
    if n == 0 or not d["series"]:
        raise ValueError(f"{path}: no groups or no series")
    for v in d["series"]:
        if len(v["values"]) != n:
            raise ValueError(f"{path}: {v['name']} has {len(v['values'])} values, expected {n}")
        for x in v["values"]:
            if x is not None and not (isinstance(x, (int, float)) and math.isfinite(x) and x >= 0):
                raise ValueError(f"{path}: {v['name']} has bad value {x!r}")
    return d


def validate(path):
    with open(path) as f:
        d = json.load(f)
    if "series" in d:
        return validate_bars(path, d)
    for key in ("benchmark", "title", "threads", "variants", "baseline",
                "ours", "ratio_ours_over_baseline", "machine"):
        if key not in d:
            raise ValueError(f"{path}: missing key {key!r}")
    n = len(d["threads"])
    if n == 0:
        raise ValueError(f"{path}: no thread counts")
    names = [v["name"] for v in d["variants"]]
    for v in d["variants"]:
        for k in ("median", "min", "max"):
            if len(v[k]) != n:
                raise ValueError(f"{path}: {v['name']}.{k} has {len(v[k])} points, expected {n}")
            for x in v[k]:
                # 0 is a real measurement (nothing completed in a short
                # --quick window); negative or non-finite is not.
                if not (isinstance(x, (int, float)) and math.isfinite(x) and x >= 0):
                    raise ValueError(f"{path}: {v['name']}.{k} has bad value {x!r}")
        for lo, med, hi in zip(v["min"], v["median"], v["max"]):
            if not lo <= med <= hi:
                raise ValueError(f"{path}: {v['name']}: min<=median<=max violated")
    base = d["variants"][names.index(d["baseline"])]["median"]
    ours = d["variants"][names.index(d["ours"])]["median"]
    for b, o, r in zip(base, ours, d["ratio_ours_over_baseline"]):
        if b == 0:
            if r is not None:
                raise ValueError(f"{path}: ratio {r} over a zero baseline")
            continue
        if r is None or abs(o / b - r) > 1e-3 * max(1.0, r):
            raise ValueError(f"{path}: ratio {r} does not match medians {o}/{b}")
    return d


def plot_bars(gp, path, d):
    png = os.path.splitext(path)[0] + ".png"
    vals = [x for v in d["series"] for x in v["values"] if x is not None]
    log = d.get("log") and all(x > 0 for x in vals)
    with tempfile.TemporaryDirectory() as tmp:
        dat = os.path.join(tmp, "data.dat")
        with open(dat, "w") as f:
            for i, g in enumerate(d["groups"]):
                row = [f'"{g}"'] + ["?" if v["values"][i] is None else
                                    str(v["values"][i]) for v in d["series"]]
                f.write(" ".join(row) + "\n")
        cols = [f"'{dat}' using {k + 2}:xtic(1) title '{v['name']}'"
                for k, v in enumerate(d["series"])]
        script = "\n".join([
            "set terminal pngcairo size 900,560 noenhanced",
            f"set output '{png}'",
            f"set title '{d['benchmark']}: {d['title']}'",
            f"set ylabel '{d['unit']}'",
            "set style data histograms",
            "set style histogram clustered gap 1",
            "set style fill solid 0.8 border -1",
            "set key outside right",
            "set grid ytics",
            "set datafile missing '?'",
            "set logscale y" if log else "set yrange [0:*]",
            "plot " + ", ".join(cols),
        ])
        subprocess.run([gp], input=script, text=True, check=True)
    print(f"plot.py: wrote {png}", file=sys.stderr)


def plot(path, d):
    gp = shutil.which("gnuplot")
    if not gp:
        print(f"plot.py: gnuplot not installed, no chart for {path}", file=sys.stderr)
        return
    if "series" in d:
        plot_bars(gp, path, d)
        return
    png = os.path.splitext(path)[0] + ".png"
    with tempfile.TemporaryDirectory() as tmp:
        dat = os.path.join(tmp, "data.dat")
        with open(dat, "w") as f:
            for i, t in enumerate(d["threads"]):
                row = [str(t)]
                for v in d["variants"]:
                    row += [str(v["median"][i] / 1e6), str(v["min"][i] / 1e6),
                            str(v["max"][i] / 1e6)]
                f.write(" ".join(row) + "\n")
        plots = []
        for k, v in enumerate(d["variants"]):
            c = 2 + 3 * k
            plots.append(f"'{dat}' using 1:{c}:{c+1}:{c+2} with yerrorlines "
                         f"lw 2 title '{v['name']}'")
        script = "\n".join([
            "set terminal pngcairo size 900,560 noenhanced",
            f"set output '{png}'",
            f"set title '{d['benchmark']}: {d['title']}'",
            "set xlabel 'threads (last point oversubscribed)'",
            "set ylabel 'million operations / s (median, min-max)'",
            "set key outside right",
            "set grid",
            # log scale unless a point is 0 (possible in --quick runs)
            "set logscale y" if all(x > 0 for v in d["variants"] for x in v["min"]) else "unset logscale y",
            "set xtics (" + ", ".join(f"'{t}' {t}" for t in d["threads"]) + ")",
            "plot " + ", ".join(plots),
        ])
        subprocess.run([gp], input=script, text=True, check=True)
    print(f"plot.py: wrote {png}", file=sys.stderr)


def main(argv):
    check_only = "--check-only" in argv
    files = [a for a in argv[1:] if a != "--check-only"]
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    for p in files:
        d = validate(p)
        if not check_only:
            plot(p, d)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
