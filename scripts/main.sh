#!/usr/bin/env bash
# The project's main job: install what is missing, build everything, and
# run the headline benchmarks, printing their ratio tables (results, JSON
# and charts under out/bench/).
# Usage: scripts/main.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
bazel build //... >&2
bazel build --config=opt //... >&2
if [[ "${1:-}" == "--quick" ]]; then
	scripts/bench.sh --quick >/dev/null
else
	scripts/bench.sh --rounds 3 --seconds 0.3 >/dev/null
fi
echo "## Headline ratios (full tables: out/bench/results.md, charts: out/bench/*.png)"
python3 benchmarks/summary.py out/bench
