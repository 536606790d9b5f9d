#!/usr/bin/env bash
# Instructions per operation, counted by callgrind (repeatable on a noisy
# machine, unlike wall-clock time).  Usage: scripts/icount.sh BENCH_BINARY OUT_JSON
# Prints a markdown table and writes OUT_JSON.
set -euo pipefail
bin=$1
out=$2
k=${RK_ICOUNT_K:-100000}
source "$(dirname "$0")/callgrind.sh"	# cg_init, cg_per_op
cg_init icount
rows=()
printf '\n### instructions per operation (callgrind, %s operations each)\n\n' "$k"
printf '| live ids | ridr_find | flat array find | ridr remove+alloc pair |\n|---|---|---|---|\n'
for n in ${RK_ICOUNT_SIZES:-64 4096 1000000}; do
	vals=()
	for f in ridr_find_noinline flat_find ridr_pair; do
		echo "[icount] $n ids, $f ..." >&2
		vals+=("$(cg_per_op "$f" "$k" "$bin" icount "$n" "$k")")
	done
	printf '| %s | %s | %s | %s |\n' "$n" "${vals[0]}" "${vals[1]}" "${vals[2]}"
	rows+=("{\"ids\": $n, \"ridr_find\": ${vals[0]}, \"flat_find\": ${vals[1]}, \"ridr_remove_alloc\": ${vals[2]}}")
done
# A POSIX timer's three ridr calls as kernel patch 4 makes them (cyclic
# allocation, lookup inside a read-side section, removal), ids past 2^16
# behind one long-lived id: ridr_lookup_bench icount-timer.
printf '\n### a POSIX timer'"'"'s ridr calls, ids past 2^16 (callgrind, %s each, lock or read-side section included)\n\n' "$k"
printf '| create: ridr_alloc_cyclic | lookup: ridr_find | delete: ridr_remove |\n|---|---|---|\n'
tvals=()
for f in timer_create_op timer_find_op timer_delete_op; do
	echo "[icount] timer steps, $f ..." >&2
	tvals+=("$(cg_per_op "$f" "$k" "$bin" icount-timer "$k")")
done
printf '| %s | %s | %s |\n' "${tvals[0]}" "${tvals[1]}" "${tvals[2]}"
{
	echo '{"benchmark": "ridr_icount", "unit": "instructions per operation", "rows": ['
	(IFS=,; echo "${rows[*]}")
	echo '], "timer": {'"\"create\": ${tvals[0]}, \"find\": ${tvals[1]}, \"delete\": ${tvals[2]}"'}}'
} >"$out"
