# Shell functions for the instruction-count scripts (icount.sh,
# kbase_icount.sh, churn_icount.sh, lockref_icount.sh), sourced, not run.
#
#   cg_init NAME             fails (exit 1, "NAME: valgrind not installed")
#                            unless valgrind is there; makes $CG_TMP, which
#                            is removed on exit.
#   cg_total FUNC CMD...     runs CMD under callgrind, counting only inside
#                            FUNC (callees included); prints the total
#                            instructions.  CMD's output is dropped; if it
#                            fails, its stderr is shown and the script exits.
#   cg_per_op FUNC N CMD...  the same total divided by N, one decimal.

cg_init() {
	if ! command -v valgrind >/dev/null; then
		echo "$1: valgrind not installed" >&2
		exit 1
	fi
	CG_TMP=$(mktemp -d)
	trap 'rm -rf "$CG_TMP"' EXIT
}

cg_total() {
	local func=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$CG_TMP/cg" \
		--toggle-collect="$func" "$@" >/dev/null 2>"$CG_TMP/log" ||
		{ cat "$CG_TMP/log" >&2; exit 1; }
	sed -n 's/^summary: //p; s/^totals: //p' "$CG_TMP/cg" | head -1
}

cg_per_op() {
	local func=$1 n=$2 total
	shift 2
	total=$(cg_total "$func" "$@")
	python3 -c "print(f'{$total / $n:.1f}')"
}
