#!/usr/bin/env bash
# Instructions per remove+alloc pair in the five churn patterns of
# ridr_kernel_bench (leaf, empty, boundary, far, cyclic) for the
# spinlocked flat array with a free-id stack, ridr and Linux 6.1's IDR,
# XArray and maple tree, counted by callgrind inside churn_counted()
# (the structure's calls and the driver's loop, which is the same for
# every structure), after the same setup and warm-up as the timed churn.
# The figures issue 10's churn targets are stated in (ridr >= 0.6x the
# spin stack, >= 3x the IDR) as rates; here as path lengths: "x spin" is
# spin's instructions over ridr's, "x idr" the IDR's over ridr's.
# Prints a markdown table and writes OUT_JSON.
# Usage: scripts/churn_icount.sh ridr_kernel_bench OUT_JSON
# RK_ICOUNT_K sets the pairs per run (default 20000).
set -euo pipefail
bin=$1
out=$2
k=${RK_ICOUNT_K:-20000}
source "$(dirname "$0")/callgrind.sh"	# cg_init, cg_per_op
cg_init churn_icount
structs=(spin_stack ridr idr xarray maple)
patterns=(leaf empty boundary far cyclic)
printf '\n### churn_icount\n\ninstructions per remove+alloc pair (callgrind, %s pairs each after the warm-up, inside churn_counted(): the calls and the driver loop).  ridr x spin: the spin stack'"'"'s count over ridr'"'"'s; ridr x idr: the IDR'"'"'s over ridr'"'"'s\n\n' "$k"
printf '| pattern | %s | ridr x spin | ridr x idr |\n' "$(IFS='|'; echo "${structs[*]}" | sed 's/|/ | /g')"
printf '|---|---|---|---|---|---|---|---|\n'
rows=()
for p in "${patterns[@]}"; do
	declare -A v=()
	for s in "${structs[@]}"; do
		echo "[churn_icount] $p, $s ..." >&2
		v[$s]=$(cg_per_op churn_counted "$k" "$bin" icount-churn "$s" "$p" "$k")
	done
	xs=$(python3 -c "print(f'{${v[spin_stack]} / ${v[ridr]}:.2f}')")
	xi=$(python3 -c "print(f'{${v[idr]} / ${v[ridr]}:.2f}')")
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$p" \
		"${v[spin_stack]}" "${v[ridr]}" "${v[idr]}" "${v[xarray]}" \
		"${v[maple]}" "$xs" "$xi"
	rows+=("{\"pattern\": \"$p\", \"spin_stack\": ${v[spin_stack]}, \"ridr\": ${v[ridr]}, \"idr\": ${v[idr]}, \"xarray\": ${v[xarray]}, \"maple\": ${v[maple]}, \"ridr_x_spin\": $xs, \"ridr_x_idr\": $xi}")
	unset v
done
{
	echo '{"benchmark": "churn_icount", "unit": "instructions per remove+alloc pair", "pairs": '"$k"', "rows": ['
	(IFS=,; echo "${rows[*]}")
	echo ']}'
} >"$out"
