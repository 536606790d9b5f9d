#!/usr/bin/env bash
# Runs the benchmark suite side by side and writes, under OUT (default
# out/bench): one JSON and one PNG chart per workload and results.md with
# every table.  Progress goes to stderr; the tables to stdout.
# Usage: scripts/bench.sh [--quick] [--out DIR] [extra bench options]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=out/bench
args=()
while (($#)); do
	case $1 in
	--out) OUT=$2; shift 2 ;;
	*) args+=("$1"); shift ;;
	esac
done
mkdir -p "$OUT"
bazel build --config=opt //benchmarks:all >&2
BIN=$(bazel info --config=opt bazel-bin 2>/dev/null)/benchmarks
: >"$OUT/results.md"
run() {	# name binary [workload]
	local name=$1; shift
	"$@" "${args[@]}" --json "$OUT/$name.json" | tee -a "$OUT/results.md"
}
quick=false
for a in "${args[@]}"; do [[ $a == --quick ]] && quick=true; done
run lockref_fstat2 "$BIN/lockref_fstat2_bench" fstat2
run lockref_open3 "$BIN/lockref_fstat2_bench" open3
sizes="64 4096 1000000"
$quick && sizes="64 4096"
for n in $sizes; do
	run "ridr_lookup_$n" "$BIN/ridr_lookup_bench" lookup "$n"
	run "ridr_lookup_${n}_writer" "$BIN/ridr_lookup_bench" lookup "$n" --writer
done
run ridr_churn "$BIN/ridr_lookup_bench" churn
run ridr_bulk "$BIN/ridr_bulk_bench"
run timer_gettime_storm "$BIN/history_bench" timers
run ipc_psem "$BIN/history_bench" psem
run ipc_pmsg "$BIN/history_bench" pmsg
run ipc_semopbench "$BIN/history_bench" semop
# Single-threaded tables (their own JSON schema: *.table.json).
"$BIN/ridr_lookup_bench" scaling $($quick && echo --quick) \
	--json "$OUT/ridr_scaling.table.json" | tee -a "$OUT/results.md"
"$BIN/ridr_lookup_bench" memory $($quick && echo --quick) \
	--json "$OUT/ridr_memory.table.json" | tee -a "$OUT/results.md"
if $quick; then export RK_ICOUNT_K=2000 RK_ICOUNT_SIZES="64 4096"; fi
scripts/icount.sh "$BIN/ridr_lookup_bench" "$OUT/ridr_icount.table.json" |
	tee -a "$OUT/results.md"
# The kernel's own IDR, XArray and maple tree next to ridr, one thread,
# one process (needs linux-source-6.1: scripts/setup.sh).
if [[ -x $BIN/ridr_kernel_bench ]]; then
	for w in memory lookup churn; do
		run "kbase_$w" "$BIN/ridr_kernel_bench" "$w"
	done
	scripts/kbase_icount.sh "$BIN/ridr_kernel_bench" "$OUT/kbase_icount.json" |
		tee -a "$OUT/results.md"
	scripts/churn_icount.sh "$BIN/ridr_kernel_bench" "$OUT/churn_icount.table.json" |
		tee -a "$OUT/results.md"
else
	echo "bench: no ridr_kernel_bench (linux-source-6.1 not installed): no kernel baselines" >&2
fi
# Charts for the side-by-side (harness) results.
harness=()
for f in "$OUT"/*.json; do
	[[ $f == *.table.json ]] || harness+=("$f")
done
python3 benchmarks/plot.py "${harness[@]}"
{
	echo
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(uname -sr)"
	echo "Command: scripts/bench.sh ${args[*]}"
} | tee -a "$OUT/results.md"
echo "bench: results in $OUT/ (results.md, *.json, *.png)" >&2
