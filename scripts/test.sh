#!/usr/bin/env bash
# The whole test suite: installs what is missing, then runs every Bazel test
# in the default configuration and under AddressSanitizer, ThreadSanitizer
# and UndefinedBehaviorSanitizer, then prints one line "N passed, N failed"
# counted from the per-test XML reports.  Exit status 0 only if nothing
# failed.
#
# Then the kernel backport checks (kernel-backport/verify.sh: the series
# for Linux 6.1 and 6.12 applies, passes checkpatch and W=1, builds, and
# 6.1 boots under qemu and passes the selftests); their counts are added.
#
# Environment: RK_CONFIGS (default "default asan tsan ubsan") picks configs;
# RK_KERNEL=0 skips the kernel checks (and their packages).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

RK_KERNEL=${RK_KERNEL:-1}
if [[ $RK_KERNEL != 0 ]]; then
	scripts/setup.sh --kernel || exit 1
else
	scripts/setup.sh || exit 1
fi

CONFIGS=${RK_CONFIGS:-default asan tsan ubsan}
OUT=$ROOT/out/test
mkdir -p "$OUT"
rm -f "$OUT"/extra-*.counts	# every extra suite below writes a fresh one
bazel query 'tests(//...)' 2>/dev/null | sort >"$OUT/targets.txt"
if [[ ! -s "$OUT/targets.txt" ]]; then
	echo "test.sh: bazel query found no tests" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
echo "test.sh: $(wc -l <"$OUT/targets.txt") test targets x configs: $CONFIGS" >&2

summary_args=(--targets "$OUT/targets.txt")
extra_failed=0
for cfg in $CONFIGS; do
	flags=()
	[[ $cfg != default ]] && flags=(--config="$cfg")
	echo "test.sh: == bazel test ${flags[*]} //... ==" >&2
	bazel test "${flags[@]}" --cache_test_results=no --test_summary=short //... >&2
	rc=$?
	# 0: all passed; 3: some tests failed (counted from their XML).
	# Anything else is a build or infrastructure failure.
	if [[ $rc -ne 0 && $rc -ne 3 ]]; then
		echo "test.sh: bazel exited $rc for config $cfg" >&2
		extra_failed=$((extra_failed + 1))
	fi
	logs=$(bazel info "${flags[@]}" bazel-testlogs 2>/dev/null)
	summary_args+=("$cfg=$logs")
done

# Packaging: install, pkg-config and C++ consumers, static link, symbols,
# external Bazel workspace (outside Bazel's sandbox; writes
# extra-pkg.counts).  Missing counts mean it died: one failure.
scripts/pkg_test.sh
if [[ ! -s $OUT/extra-pkg.counts ]]; then
	echo "test.sh: scripts/pkg_test.sh wrote no counts" >&2
	extra_failed=$((extra_failed + 1))
fi

# The server benchmark harness (scripts/server_load.sh: redis-benchmark
# against the example server and a reference redis-server), a few hundred
# requests: one test case (the benchmark itself is run by hand,
# docs/using.md).
echo "test.sh: == scripts/server_load.sh --self-check ==" >&2
if scripts/server_load.sh --self-check >/dev/null; then
	echo "1 0" >"$OUT/extra-server_load.counts"
else
	echo "0 1" >"$OUT/extra-server_load.counts"
fi

# Kernel backport: writes out/test/extra-kernel.counts ("passed failed").
if [[ $RK_KERNEL != 0 ]]; then
	rm -f "$OUT/extra-kernel.counts"
	echo "test.sh: == kernel-backport/verify.sh ==" >&2
	kernel-backport/verify.sh >&2
	if [[ ! -s $OUT/extra-kernel.counts ]]; then
		echo "test.sh: kernel-backport/verify.sh wrote no counts" >&2
		extra_failed=$((extra_failed + 1))
	fi
	# The in-VM benchmark harness, without kernels (seconds; the
	# benchmarks themselves are run by hand: docs/kernel.md, step 4).
	if ! kernel-backport/bench.sh --self-check; then
		extra_failed=$((extra_failed + 1))
	fi
	# compare_boot.sh's reading of console logs and its regression
	# table (lib.sh's rk_results, rk_compare_table, rk_kunit_passed:
	# the KUnit check of verify.sh too) on made-up logs.
	if ! kernel-backport/compare_boot.sh --self-check; then
		extra_failed=$((extra_failed + 1))
	fi
	# ... and that self-check can fail: planted bugs in lib.sh each
	# fail it.
	if ! kernel-backport/selfcheck_mutations.sh; then
		extra_failed=$((extra_failed + 1))
	fi
fi

# Further suites append "passed failed" pairs here.
for f in "$OUT"/extra-*.counts; do
	[[ -e $f ]] || continue
	read -r p fl <"$f"
	summary_args+=(--extra-passed "$p" --extra-failed "$fl")
done

python3 scripts/test_summary.py "${summary_args[@]}" --extra-failed "$extra_failed"
