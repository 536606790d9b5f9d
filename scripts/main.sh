#!/usr/bin/env bash
# The project's main job: install what is missing, build everything,
# generate the kernel patch series for Debian's Linux 6.1 and 6.12 sources
# (out/kernel/<version>/), and run the headline benchmarks, printing their
# ratio table (results, JSON and charts under out/bench/).
# Usage: scripts/main.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --kernel
bazel build //... >&2
bazel build --config=opt //... >&2
for v in 6.1 6.12; do
	kernel-backport/backport.py generate \
		--tarball "/usr/src/linux-source-$v.tar.xz" >&2
done
echo "## Kernel patch series (verify with kernel-backport/verify.sh)"
ls -1 out/kernel/*/ridr-kit-*.patch
if [[ "${1:-}" == "--quick" ]]; then
	scripts/bench.sh --quick >/dev/null
else
	scripts/bench.sh --rounds 3 --seconds 0.3 >/dev/null
fi
echo
echo "## Headline ratios (full tables: out/bench/results.md, charts: out/bench/*.png)"
python3 benchmarks/summary.py out/bench
