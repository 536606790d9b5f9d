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
run lockref_fstat2 "$BIN/lockref_fstat2_bench" fstat2
run lockref_open3 "$BIN/lockref_fstat2_bench" open3
python3 benchmarks/plot.py "$OUT"/*.json
{
	echo
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(uname -sr)"
	echo "Command: scripts/bench.sh ${args[*]}"
} | tee -a "$OUT/results.md"
echo "bench: results in $OUT/ (results.md, *.json, *.png)" >&2
