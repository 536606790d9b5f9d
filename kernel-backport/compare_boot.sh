#!/usr/bin/env bash
# Boot the unpatched and the patched kernel of one version in the same run
# and compare their tests subtest by subtest (docs/kernel.md):
#
#   kernel-backport/compare_boot.sh [--version 6.12] [--no-prepare]
#   kernel-backport/compare_boot.sh --self-check
#
# Why: a tree's own selftests may fail on the unpatched kernel (6.12.118's
# timers/posix_timers comes from a later kernel and fails check_sig_ign
# SIGEV_SIGNAL, check_rearm and check_delete there), so "exit 0" cannot be
# the criterion.  Both kernels are the "fast" tiny config (vm/tiny.config:
# SMP, SYSVIPC, POSIX_TIMERS, CHECKPOINT_RESTORE; no lockdep), built from
# the pristine and the patched tree; both boot the same initramfs (the
# pristine tree's ipc/msgque and timers/posix_timers selftests, rk_smoke)
# under qemu with 2 vCPUs.  Every result line (lib.sh's rk_results:
# kselftest subtests, rk_smoke checks, each program's exit status, KUnit
# suites and cases) is compared: PASS if the patched kernel fails no check
# the unpatched one passes, and both boots ended by themselves with 2 CPUs
# and no splat.  While the patched kernel has results worse than
# unpatched it boots again (same checks), up to RK_BOOTS (3) boots, and
# the table is of the best of its boots: what fails in some boots only is
# a selftest's timing, not the patch (lib.sh's rk_best_of).  The patched kernel's KUnit suite "ridr" and its cases
# show "missing" on the unpatched side.  The table goes to
# out/kernel/compare-V.txt.
#
# verify.sh runs it for the versions of its --compare (default 6.12) with
# --no-prepare: verify.sh has just extracted the tree, generated the
# series and applied it, so this script only checks they are there.
# --self-check runs rk_results and rk_compare_table on made-up console
# logs (no kernel, seconds; scripts/test.sh runs it).
# Uses lib.sh's rk_initramfs, rk_boot, rk_results, rk_compare_table and
# RK_SPLATS, as verify.sh does.
set -uo pipefail
export LC_ALL=C
RK=$(cd "$(dirname "$0")/.." && pwd)
OUT=$RK/out/kernel
RK_PROG=compare_boot
source "$RK/kernel-backport/lib.sh"
V=6.12
PREPARE=1
SELF_CHECK=0
while (($#)); do
	case $1 in
	--version) V=$2; shift 2 ;;
	--no-prepare) PREPARE=0; shift ;;
	--self-check) SELF_CHECK=1; shift ;;
	*) echo "usage: $0 [--version 6.12] [--no-prepare] | --self-check" >&2
	   exit 2 ;;
	esac
done
say() { echo "compare_boot: $*" >&2; }
die() { say "FAILED: $*"; exit 1; }

# --self-check: two console logs as the guest writes them (kselftest,
# rk_smoke, vm/init's markers, KUnit's KTAP with printk timestamps and
# \r\n line ends removed), the second with four planted regressions: a
# kselftest subtest that fails, an rk_smoke check that is missing, one
# that fails, a KUnit case that is skipped (its suite still says ok, as
# KUnit does).  The table must mark exactly those four, and nothing
# between a log and itself; rk_kunit_passed must accept the first log's
# suite and refuse the second's, and a suite that is absent.
# kernel-backport/selfcheck_mutations.sh shows this can fail: each of its
# planted bugs in lib.sh's reader and table fails it.
self_check() {
	local d bad=0 n
	d=$(mktemp -d)
	cat >"$d/a.log" <<'LOG'
[    0.812345] KTAP version 1
[    0.812400] 1..1
[    0.812500]     KTAP version 1
[    0.812600]     # Subtest: ridr
[    0.812700]     1..3
[    0.900000]     ok 1 ridr_alloc_find_remove
[    0.950000]     ok 2 ridr_sparse_ids
[    1.000000]         KTAP version 1
[    1.000100]         # Subtest: ridr_rcu_readers
[    1.050000]         ok 1 one writer
[    1.090000]         ok 2 two writers
[    1.100000]     ok 3 ridr_rcu_readers
[    1.100100] # ridr: pass:3 fail:0 skip:0 total:3
[    1.100200] # Totals: pass:3 fail:0 skip:0 total:3
[    1.100300] ok 1 ridr
RK-CPUS 2
RK-BEGIN posix_timers
TAP version 13
1..3
ok 1 check_itimer virtual
not ok 2 check_delete
ok 3 check_timer_create exact
RK-RESULT posix_timers 1
RK-BEGIN rk_smoke
rk_smoke: timer_1000_per_process ok
rk_smoke: sem_msg_shm_churn ok
rk_smoke: ipc_ns_teardown ok
rk_smoke: 3 passed, 0 FAILED
RK-RESULT rk_smoke 0
RK-DONE
LOG
	sed -e 's/^ok 3 check_timer_create exact$/not ok 3 check_timer_create exact/' \
	    -e '/^rk_smoke: sem_msg_shm_churn ok$/d' \
	    -e 's/^rk_smoke: ipc_ns_teardown ok$/rk_smoke: ipc_ns_teardown FAILED (3 left)/' \
	    -e 's/^rk_smoke: timer_1000_per_process ok$/&\nrk_smoke: only_patched ok/' \
	    -e 's/^\(\[ *[0-9.]*\]     ok 2 ridr_sparse_ids\)$/\1 # SKIP no memory/' \
	    "$d/a.log" >"$d/b.log"
	rk_results "$d/a.log" >"$d/a.tsv"
	rk_results "$d/b.log" >"$d/b.tsv"
	rk_compare_table "$d/a.tsv" "$d/b.tsv" >"$d/ab.txt"
	rk_compare_table "$d/a.tsv" "$d/a.tsv" >"$d/aa.txt"
	n=$(grep -c ' <- REGRESSION$' "$d/ab.txt")
	[[ $n -eq 4 ]] || { say "self-check: $n regressions marked, 4 planted"; bad=1; }
	for r in 'posix_timers: check_timer_create exact' \
		 'rk_smoke: sem_msg_shm_churn' 'rk_smoke: ipc_ns_teardown' \
		 'kunit: ridr.ridr_sparse_ids'; do
		grep -q "^$r  *[^ ]* *[^ ]* *<- REGRESSION$" "$d/ab.txt" ||
			{ say "self-check: '$r' not marked"; bad=1; }
	done
	grep -qxF $'kunit: ridr.ridr_sparse_ids\tSKIP' "$d/b.tsv" ||
		{ say "self-check: the skipped case not read as SKIP"; bad=1; }
	grep -q '^rk_smoke: only_patched  *missing  *ok *$' "$d/ab.txt" ||
		{ say "self-check: a result of the patched side only not listed"; bad=1; }
	# Results that are not regressions: read, but not marked.
	for r in $'posix_timers: check_delete\tFAIL' $'exit posix_timers\tFAIL 1' \
		 $'kunit: ridr\tok' $'kunit: ridr.ridr_rcu_readers\tok' \
		 $'rk_smoke: timer_1000_per_process\tok' $'exit rk_smoke\tok'; do
		grep -qxF "$r" "$d/a.tsv" || { say "self-check: '$r' not read"; bad=1; }
	done
	n=$(wc -l <"$d/a.tsv")
	[[ $n -eq 12 ]] || { say "self-check: $n results read, 12 written"; bad=1; }
	grep -q 'REGRESSION' "$d/aa.txt" && { say "self-check: a log against itself shows a regression"; bad=1; }
	rk_kunit_passed "$d/a.tsv" ridr || { say "self-check: a passing suite refused"; bad=1; }
	rk_kunit_passed "$d/b.tsv" ridr && { say "self-check: a suite with a skipped case accepted"; bad=1; }
	sed 's/^\(\[ *[0-9.]*\]\) ok 1 ridr$/\1 not ok 1 ridr/' "$d/a.log" |
		rk_results /dev/stdin >"$d/c.tsv"
	rk_kunit_passed "$d/c.tsv" ridr && { say "self-check: a suite that is not ok accepted"; bad=1; }
	rk_kunit_passed "$d/a.tsv" xarray && { say "self-check: an absent suite accepted"; bad=1; }
	# Two boots of a patched kernel: a kselftest subtest that fails in
	# the first only, one in the second only, an rk_smoke check missing
	# from the second and one failing in both (the one regression),
	# results of the second boot only (one ok, one failing); the best of
	# the two against a.log.
	sed -e 's/^ok 1 check_itimer virtual$/not ok 1 check_itimer virtual/' \
	    -e 's/^rk_smoke: timer_1000_per_process ok$/rk_smoke: timer_1000_per_process FAILED (1 left)/' \
	    "$d/a.log" | rk_results /dev/stdin >"$d/p1.tsv"
	sed -e 's/^ok 3 check_timer_create exact$/not ok 3 check_timer_create exact/' \
	    -e 's/^rk_smoke: timer_1000_per_process ok$/rk_smoke: timer_1000_per_process FAILED (2 left)/' \
	    -e '/^rk_smoke: ipc_ns_teardown ok$/d' \
	    -e 's/^RK-DONE$/rk_smoke: only_second ok\nrk_smoke: only_second_bad FAILED\n&/' \
	    "$d/a.log" | rk_results /dev/stdin >"$d/p2.tsv"
	rk_best_of "$d/p1.tsv" "$d/p2.tsv" >"$d/best.tsv"
	rk_compare_table "$d/a.tsv" "$d/best.tsv" >"$d/best.txt"
	n=$(grep -c ' <- REGRESSION$' "$d/best.txt")
	grep -q '^rk_smoke: timer_1000_per_process  *ok  *FAIL *<- REGRESSION$' "$d/best.txt" &&
		[[ $n -eq 1 ]] ||
		{ say "self-check: best of two boots: $n regressions, 1 planted (failing in both)"; cat "$d/best.txt" >&2; bad=1; }
	for r in $'posix_timers: check_itimer virtual\tok' \
		 $'posix_timers: check_timer_create exact\tok' \
		 $'rk_smoke: ipc_ns_teardown\tok' $'rk_smoke: only_second\tok' \
		 $'rk_smoke: only_second_bad\tFAIL' \
		 $'posix_timers: check_delete\tFAIL'; do
		grep -qxF "$r" "$d/best.tsv" || { say "self-check: best of two boots lacks '$r'"; bad=1; }
	done
	# rk_retry_boots with made-up boots (a results file, or "fail": the
	# boot did not end cleanly): boots again only while a result is
	# worse, at most RK_BOOTS (3) boots, a failed boot fails.
	local RK_BOOTS=3 FAKE2 FAKE3 rc
	sed 's/^ok 1 check_itimer virtual$/not ok 1 check_itimer virtual/' \
		"$d/a.log" | rk_results /dev/stdin >"$d/flaky.tsv"
	fake_boot() {
		local f=FAKE$1
		[[ -n ${!f:-} && ${!f} != fail ]] && cat "${!f}"
	}
	retry_case() {	# name want-exit want-boots boot1 boot2 boot3
		cp "$4" "$d/r.tsv"
		FAKE2=$5 FAKE3=$6
		rk_retry_boots "$d/a.tsv" "$d/r.tsv" fake_boot 2>/dev/null
		rc=$?
		[[ $rc -eq $2 && $RK_BOOTS_USED -eq $3 ]] ||
			{ say "self-check: retry '$1': exit $rc after $RK_BOOTS_USED boot(s), want $2 after $3"; bad=1; }
	}
	retry_case 'nothing worse' 0 1 "$d/a.tsv" fail fail
	retry_case 'worse in boot 1 only' 0 2 "$d/flaky.tsv" "$d/a.tsv" fail
	retry_case 'worse in boots 1-2' 0 3 "$d/flaky.tsv" "$d/flaky.tsv" "$d/a.tsv"
	retry_case 'worse in every boot' 1 3 "$d/flaky.tsv" "$d/flaky.tsv" "$d/flaky.tsv"
	retry_case 'boot 2 fails' 1 2 "$d/flaky.tsv" fail "$d/a.tsv"
	[[ $bad -eq 0 ]] || { cat "$d/ab.txt" >&2; rm -rf "$d"; return 1; }
	rm -rf "$d"
	say "self-check: 12 results read, 4 planted regressions marked, none between equal logs; best of two boots keeps the one failing in both; boots again only while worse, at most 3"
}
if [[ $SELF_CHECK -eq 1 ]]; then
	self_check
	exit
fi

LOGS=$OUT/logs
mkdir -p "$LOGS"
rk_cache_init

SRC=$CACHE/src/linux-source-$V
PAT=$CACHE/trees/$V-patched$TAG
rk_prepare_patched "$V" "$PREPARE" "$LOGS/$V-compare" || die "$V trees not ready"
declare -A BUILD=([unpatched]=$CACHE/build/$V-pristine-tiny-fast$TAG
		  [patched]=$CACHE/build/$V-patched-tiny-fast$TAG)
declare -A TREE=([unpatched]=$SRC [patched]=$PAT)
for k in unpatched patched; do
	timed "$V $k fast bzImage" tiny_build "${TREE[$k]}" "${BUILD[$k]}" \
		"$LOGS/$V-compare-$k-build.log" "$HERE/vm/tiny.config" ||
		die "$k build (see $LOGS/$V-compare-$k-build.log)"
done

INITRD=$OUT/compare-$V-initramfs.cpio
rk_initramfs "$SRC" "$INITRD" >"$LOGS/$V-compare-initramfs.log" 2>&1 ||
	die "initramfs (see $LOGS/$V-compare-initramfs.log)"

bad=0
# boot KERNEL NAME: boot the kernel (unpatched or patched) under NAME
# (its console log, splat list and results file); non-zero (and bad=1)
# unless it ended by itself with 2 CPUs and no splat.
boot() {
	local k=$1 n=$2 log=$LOGS/$V-compare-$2-console.log rc fail=0
	timed "$V $n boot" rk_boot "${BUILD[$k]}/arch/x86/boot/bzImage" \
		"$INITRD" "$log"
	rc=$?
	tr -d '\r' <"$log" >"$log.tmp" && mv "$log.tmp" "$log"
	if [[ $rc -ne 0 ]] || ! grep -q '^RK-DONE' "$log"; then
		say "$n boot did not end by itself (exit $rc)"
		fail=1
	fi
	grep -q '^RK-CPUS 2$' "$log" || { say "$n: the guest did not see 2 CPUs"; fail=1; }
	if grep -nE "$RK_SPLATS" "$log" >"$LOGS/$V-compare-$n-splats.txt"; then
		say "$n: splat in the console"; fail=1
	fi
	rk_results "$log" >"$OUT/compare-$V-$n.tsv"
	bad=$((bad | fail))
	return $fail
}
boot unpatched unpatched
boot patched patched
UN=$OUT/compare-$V-unpatched.tsv PA=$OUT/compare-$V-patched.tsv
# While results are worse than unpatched the patched kernel boots again,
# up to RK_BOOTS boots in all, and only what is worse in every boot
# counts (lib.sh's rk_best_of and rk_retry_boots: a selftest's timing);
# each boot's results are kept (compare-V-patched-bootN.tsv), the table
# is of their best.
rm -f "$OUT/compare-$V-patched-boot"[0-9]*.tsv
again() { boot patched "patched-boot$1" && cat "$OUT/compare-$V-patched-boot$1.tsv"; }
cp "$PA" "$OUT/compare-$V-patched-boot1.tsv"
rk_retry_boots "$UN" "$PA" again

REPORT=$OUT/compare-$V.txt
{
	echo "Linux $V, unpatched vs patched, fast tiny config, $(date -u +%F)"
	echo "series: $(cat "$OUT/$V/series" | tr '\n' ' ')"
	[[ $RK_BOOTS_USED -gt 1 ]] &&
		echo "patched: best of $RK_BOOTS_USED boots (see out/kernel/compare-$V-patched-boot*.tsv)"
	rk_compare_table "$UN" "$PA"
} >"$REPORT"
cat "$REPORT" >&2
worse=$(grep -c ' <- REGRESSION' "$REPORT")
unfail=$(awk -F'\t' '$2 != "ok"' "$UN" | wc -l)
pfail=$(awk -F'\t' '$2 != "ok"' "$PA" | wc -l)
say "unpatched: $unfail failing, patched: $pfail failing, regressions: $worse"
[[ $bad -eq 0 && $worse -eq 0 ]]
