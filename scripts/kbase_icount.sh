#!/usr/bin/env bash
# Instructions per find at N dense ids (default 4096) for ridr, the flat
# array and Linux 6.1's IDR, XArray and maple tree, counted by callgrind
# inside each lookup function (callees included).  Prints a markdown
# table and writes OUT_JSON.
# Usage: scripts/kbase_icount.sh ridr_kernel_bench OUT_JSON [N]
# RK_ICOUNT_K sets the number of finds per structure (default 100000).
set -euo pipefail
bin=$1
out=$2
n=${3:-4096}
k=${RK_ICOUNT_K:-100000}
source "$(dirname "$0")/callgrind.sh"	# cg_init, cg_per_op
cg_init kbase_icount
# function, column name
funcs=(ridr_find_noinline:ridr flat_find:flat idr_find:idr xa_load:xarray
       mtree_load:maple rcu_pair:rcu_read_lock+unlock)
vals=()
for fc in "${funcs[@]}"; do
	f=${fc%%:*}
	echo "[kbase_icount] $n ids, $f ..." >&2
	vals+=("$(cg_per_op "$f" "$k" "$bin" icount "$n" "$k")")
done
printf '\n### kbase_icount\n\ninstructions per find, %s dense ids (callgrind, %s finds each, inside the function named, callees included).  ridr_find and idr_find run inside a read-side section taken by the caller; xa_load and mtree_load take their own (the last column: what one costs here)\n\n' "$n" "$k"
printf '| ids | ridr_find | flat array | idr_find | xa_load | mtree_load | rcu_read_lock+unlock | ridr / idr | ridr / xarray | ridr / maple |\n|---|---|---|---|---|---|---|---|---|---|\n'
python3 - "$n" "${vals[@]}" <<'PY'
import sys
n, r, f, i, x, m, c = sys.argv[1], *map(float, sys.argv[2:])
print(f"| {n} | {r:.1f} | {f:.1f} | {i:.1f} | {x:.1f} | {m:.1f} | {c:.1f} | {r / i:.2f}x | {r / x:.2f}x | {r / m:.2f}x |")
PY
names=()
for fc in "${funcs[@]}"; do names+=("${fc#*:}"); done
python3 - "$out" "$n" "$k" "${names[@]}" -- "${vals[@]}" <<'PY'
import json, sys
out, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rest = sys.argv[4:]
sep = rest.index("--")
names, vals = rest[:sep], [float(v) for v in rest[sep + 1:]]
d = {"benchmark": "kbase_icount", "title": f"instructions per find, {n} dense ids (callgrind)",
     "unit": "instructions per find", "log": False, "ids": n, "finds": k,
     "groups": [f"dense_{n}"],
     "series": [{"name": a, "values": [v]} for a, v in zip(names, vals)]}
with open(out, "w") as f:
    json.dump(d, f, indent=2)
PY
