#!/usr/bin/env bash
# Smoke test: every lockref workload runs in --quick mode and writes JSON
# that benchmarks/plot.py accepts.  Asserts nothing about timing.
set -euo pipefail
bin=$1
out=${TEST_TMPDIR:-$(mktemp -d)}
for w in fstat2 open3; do
	"$bin" "$w" --quick --threads 1,2 --json "$out/$w.json" >"$out/$w.md"
	grep -q "^| 2 |" "$out/$w.md" || { echo "no table row for 2 threads in $w" >&2; exit 1; }
done
ridr=$2
"$ridr" lookup 64 --quick --threads 1,2 --json "$out/lookup.json" >/dev/null
"$ridr" lookup 64 --writer --quick --threads 1,2 --json "$out/lookup_w.json" >/dev/null
"$ridr" churn --quick --threads 1,2 --json "$out/churn.json" >/dev/null
"$ridr" icount 64 1000 | grep -q "1000 finds of 64 ids"
python3 benchmarks/plot.py --check-only "$out"/fstat2.json "$out"/open3.json \
	"$out"/lookup.json "$out"/lookup_w.json "$out"/churn.json
python3 benchmarks/summary.py "$out" | grep -q "find latency vs flat array"
if "$ridr" lookup 0 2>/dev/null; then echo "0 ids accepted" >&2; exit 1; fi
if "$bin" bogus 2>/dev/null; then echo "bad workload accepted" >&2; exit 1; fi
echo "bench smoke: ok"
