#!/usr/bin/env bash
# Instructions per get + put pair at one thread, lockref vs spinlock + int
# (issue 12), counted by callgrind: repeatable on a loaded machine, unlike
# wall-clock time.  Builds //benchmarks:lockref_pair_bench with
# --config=opt unless given the binary.  Usage: scripts/lockref_icount.sh [BIN]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
if [[ -z $bin ]]; then
	bazel build --config=opt //benchmarks:lockref_pair_bench >&2
	bin=$(bazel info --config=opt bazel-bin 2>/dev/null)/benchmarks/lockref_pair_bench
fi
source scripts/callgrind.sh	# cg_init, cg_total
cg_init lockref_icount
n=${RK_ICOUNT_N:-1000000}
count() {
	cg_total "bench_$1" "$bin" "$1" "$n"
}
empty=$(count empty)
printf '| variant | instructions per pair (callgrind, %s pairs, loop subtracted) |\n|---|---|\n' "$n"
for v in spinlock_int lockref lockref_get_put; do
	printf '| %s | %s |\n' "$v" "$(python3 -c "print(f'{($(count "$v") - $empty) / $n:.1f}')")"
done
