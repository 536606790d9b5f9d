#!/usr/bin/env bash
# Smoke test of the kernel baselines (ridr_kernel_bench): Linux 6.1's IDR,
# XArray and maple tree allocate exactly the ids a reference model says
# (lowest free in random ranges, cyclic, removes), and every workload runs
# in --quick mode and writes JSON that plot.py and summary.py accept.
# Asserts nothing about timing or memory figures.
set -euo pipefail
bin=$1
out=${TEST_TMPDIR:-$(mktemp -d)}
if [[ ${2:-} == --build-only ]]; then
	# ThreadSanitizer: the kernel harness's RCU callbacks are not
	# annotated for it (see benchmarks/BUILD); built, not run.
	[[ -x $bin ]] || { echo "$bin not built" >&2; exit 1; }
	echo "kbase smoke: built (not run under TSan)"
	exit 0
fi
"$bin" verify 20000 | grep "verify: ok" >/dev/null
for w in memory lookup churn; do
	"$bin" "$w" --quick --json "$out/kbase_$w.json" >"$out/$w.md"
	grep -q "^### kbase_$w" "$out/$w.md" || { echo "no $w table" >&2; exit 1; }
done
grep -q "^| (d) dense" "$out/memory.md" || { echo "no dense memory row" >&2; exit 1; }
grep -q "^| (5) cyclic" "$out/churn.md" || { echo "no cyclic churn row" >&2; exit 1; }
"$bin" icount 64 1000 | grep "1000 finds of 64 ids" >/dev/null
for s in spin_stack ridr idr xarray maple; do
	"$bin" icount-churn "$s" cyclic 1000 |
		grep "1000 cyclic pairs on $s done" >/dev/null
done
if "$bin" icount-churn ridr bogus 1000 2>/dev/null; then
	echo "bad churn pattern accepted" >&2; exit 1
fi
python3 benchmarks/plot.py --check-only "$out"/kbase_*.json
python3 benchmarks/summary.py "$out" | grep "issue 10" >/dev/null
if "$bin" bogus 2>/dev/null; then echo "bad workload accepted" >&2; exit 1; fi
echo "kbase smoke: ok"
