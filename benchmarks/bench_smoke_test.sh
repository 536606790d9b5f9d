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
"$ridr" icount 64 1000 | grep "1000 finds of 64 ids" >/dev/null
"$ridr" icount-timer 1000 | grep "1000 create/find/delete steps done" >/dev/null
python3 benchmarks/plot.py --check-only "$out"/fstat2.json "$out"/open3.json \
	"$out"/lookup.json "$out"/lookup_w.json "$out"/churn.json
hist=$3
"$hist" timers --quick --threads 1,2 --json "$out/timers.json" >/dev/null
"$hist" psem --quick --threads 2,4 --json "$out/psem.json" >/dev/null
"$hist" pmsg --quick --threads 2 --json "$out/pmsg.json" >/dev/null
"$hist" semop --quick --threads 4 --json "$out/semop.json" >/dev/null
python3 benchmarks/plot.py --check-only "$out"/timers.json "$out"/psem.json \
	"$out"/pmsg.json "$out"/semop.json
if "$hist" semop --quick --threads 3 2>/dev/null; then
	echo "a partial ring was accepted" >&2; exit 1
fi
bulk=$4
"$bulk" --quick --json "$out/bulk.json" >"$out/bulk.md"
grep -q "^| sparse31 | 32 |" "$out/bulk.md" || { echo "no sparse batch-32 row" >&2; exit 1; }
python3 benchmarks/plot.py --check-only "$out"/bulk.json
if "$bulk" --rounds 0 2>/dev/null; then echo "0 rounds accepted" >&2; exit 1; fi
grep -q '"extra_median"' "$out/lookup_w.json" || { echo "no writer rate" >&2; exit 1; }
python3 benchmarks/summary.py "$out" | grep "find latency vs flat array" >/dev/null
if "$ridr" lookup 0 2>/dev/null; then echo "0 ids accepted" >&2; exit 1; fi
if "$bin" bogus 2>/dev/null; then echo "bad workload accepted" >&2; exit 1; fi
echo "bench smoke: ok"
