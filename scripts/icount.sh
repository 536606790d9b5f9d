#!/usr/bin/env bash
# Instructions per operation, counted by callgrind (repeatable on a noisy
# machine, unlike wall-clock time).  Usage: scripts/icount.sh BENCH_BINARY OUT_JSON
# Prints a markdown table and writes OUT_JSON.
set -euo pipefail
bin=$1
out=$2
k=${RK_ICOUNT_K:-100000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v valgrind >/dev/null; then
	echo "icount: valgrind not installed" >&2
	exit 1
fi
rows=()
printf '\n### instructions per operation (callgrind, %s operations each)\n\n' "$k"
printf '| live ids | ridr_find | flat array find | ridr remove+alloc pair |\n|---|---|---|---|\n'
for n in ${RK_ICOUNT_SIZES:-64 4096 1000000}; do
	vals=()
	for f in ridr_find_noinline flat_find ridr_pair; do
		echo "[icount] $n ids, $f ..." >&2
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
			--toggle-collect="$f" "$bin" icount "$n" "$k" >/dev/null 2>"$tmp/log" ||
			{ cat "$tmp/log" >&2; exit 1; }
		total=$(sed -n 's/^summary: //p; s/^totals: //p' "$tmp/cg" | head -1)
		vals+=("$(python3 -c "print(f'{$total / $k:.1f}')")")
	done
	printf '| %s | %s | %s | %s |\n' "$n" "${vals[0]}" "${vals[1]}" "${vals[2]}"
	rows+=("{\"ids\": $n, \"ridr_find\": ${vals[0]}, \"flat_find\": ${vals[1]}, \"ridr_remove_alloc\": ${vals[2]}}")
done
{
	echo '{"benchmark": "ridr_icount", "unit": "instructions per operation", "rows": ['
	(IFS=,; echo "${rows[*]}")
	echo ']}'
} >"$out"
