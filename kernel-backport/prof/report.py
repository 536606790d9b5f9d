#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""report.py OUTDIR WORKLOAD PER_OP_FUNCTION UNPATCHED_VMLINUX PATCHED_VMLINUX [N]

Symbolizes the two block counts of prof.sh (OUTDIR/{unpatched,patched}-
WORKLOAD.txt, lines "vaddr insns execs translations" from tbprof.so)
with each kernel's symbol table, divides by the operations (the entries
into PER_OP_FUNCTION: executions of the block at its first address) and
prints a markdown table of the N functions whose guest blocks per
operation differ most between the kernels, with instructions per
operation, and the totals.
"""
import bisect
import collections
import subprocess
import sys


def symbols(vmlinux):
    syms = []
    nm = subprocess.run(["nm", "-n", vmlinux], capture_output=True,
                        text=True, check=True).stdout
    for line in nm.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "tTwW":
            syms.append((int(p[0], 16), p[2]))
    return syms


def profile(path, vmlinux, perop):
    syms = symbols(vmlinux)
    addrs = [a for a, _ in syms]
    insns, blocks = collections.Counter(), collections.Counter()
    ops = 0
    with open(path) as f:
        for line in f:
            va, n, ex, _ = line.split()
            va, n, ex = int(va, 16), int(n), int(ex)
            i = bisect.bisect_right(addrs, va) - 1
            name = syms[i][1] if i >= 0 else "?"
            insns[name] += n * ex
            blocks[name] += ex
            if name == perop and syms[i][0] == va:
                ops += ex
    if not ops:
        sys.exit(f"report.py: {perop} never entered in {path}")
    return ops, insns, blocks


def main():
    out, work, perop, vu, vp = sys.argv[1:6]
    n = int(sys.argv[6]) if len(sys.argv) > 6 else 25
    prof = {k: profile(f"{out}/{k}-{work}.txt", v, perop)
            for k, v in (("unpatched", vu), ("patched", vp))}
    print(f"### {work}: guest kernel blocks and instructions per operation "
          f"(one operation = one entry into `{perop}`)\n")
    print("| kernel | operations | blocks/op | instructions/op |")
    print("|---|---|---|---|")
    for k, (ops, ins, blk) in prof.items():
        print(f"| {k} | {ops} | {sum(blk.values()) / ops:.1f} | "
              f"{sum(ins.values()) / ops:.1f} |")
    print("\n(whole-run totals divided by the operations: boot work is in "
          "them too, the rows below are what differs)\n")
    (ou, iu, bu), (op, ip, bp) = prof["unpatched"], prof["patched"]
    rows = []
    for name in set(bu) | set(bp):
        d = bp[name] / op - bu[name] / ou
        rows.append((d, name))
    rows.sort(key=lambda r: -abs(r[0]))
    print("| function | unpatched blocks/op | patched blocks/op | "
          "unpatched insns/op | patched insns/op |")
    print("|---|---|---|---|---|")
    for d, name in rows[:n]:
        print(f"| `{name}` | {bu[name] / ou:.2f} | {bp[name] / op:.2f} | "
              f"{iu[name] / ou:.1f} | {ip[name] / op:.1f} |")


if __name__ == "__main__":
    main()
