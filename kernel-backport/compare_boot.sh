#!/usr/bin/env bash
# Boot the unpatched and the patched kernel of one version in the same run
# and compare their tests subtest by subtest (docs/kernel.md):
#
#   kernel-backport/compare_boot.sh [--version 6.12]
#
# Why: a tree's own selftests may fail on the unpatched kernel (6.12.118's
# timers/posix_timers comes from a later kernel and fails check_sig_ign
# SIGEV_SIGNAL, check_rearm and check_delete there), so "exit 0" cannot be
# the criterion.  Both kernels are the "fast" tiny config (vm/tiny.config:
# SMP, SYSVIPC, POSIX_TIMERS, CHECKPOINT_RESTORE; no lockdep), built from
# the pristine and the patched tree; both boot the same initramfs (the
# pristine tree's ipc/msgque and timers/posix_timers selftests, rk_smoke)
# under qemu with 2 vCPUs.  Every result line (kselftest "ok N name" /
# "not ok N name", "rk_smoke: <check> ok|FAILED", each program's exit
# status) is compared: PASS if the patched kernel fails no check the
# unpatched one passes, and both boots ended by themselves with 2 CPUs
# and no splat.  KUnit suites that ran at boot are result lines too (the
# patched kernel's "ridr"; the unpatched kernel has none, so it shows
# "missing" there).  The table goes to out/kernel/compare-V.txt.
# verify.sh runs it for the versions of its --compare (default 6.12).
# Uses lib.sh's rk_initramfs, rk_boot and RK_SPLATS, as verify.sh does.
set -uo pipefail
export LC_ALL=C
RK=$(cd "$(dirname "$0")/.." && pwd)
OUT=$RK/out/kernel
RK_PROG=compare_boot
source "$RK/kernel-backport/lib.sh"
V=6.12
while (($#)); do
	case $1 in
	--version) V=$2; shift 2 ;;
	*) echo "usage: $0 [--version 6.12]" >&2; exit 2 ;;
	esac
done
LOGS=$OUT/logs
mkdir -p "$LOGS"
rk_cache_init
say() { echo "compare_boot: $*" >&2; }
die() { say "FAILED: $*"; exit 1; }

"$RK/scripts/setup.sh" --kernel >&2 || die "scripts/setup.sh --kernel"
timed "$V extract" pristine "$V" || die "extract $V"
generate_series "$V" "$LOGS/$V-compare-generate.log" || die "generate $V"
patched_tree "$V" >>"$LOGS/$V-compare-apply.log" 2>&1 || die "apply $V"

SRC=$CACHE/src/linux-source-$V
PAT=$CACHE/trees/$V-patched$TAG
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

# name<TAB>ok|FAIL for every result line of a console log.
results() {
	awk '
	/^RK-BEGIN / { prog = $2 }
	/^RK-RESULT / { print "exit " $2 "\t" ($3 == 0 ? "ok" : "FAIL " $3) }
	/^(not )?ok [0-9]+ / {
		ok = ($1 == "ok"); sub(/^(not )?ok [0-9]+ /, "")
		print prog ": " $0 "\t" (ok ? "ok" : "FAIL") }
	/^\[ *[0-9.]+\] (not )?ok [0-9]+ [^ ]+$/ {
		ok = ($0 !~ /\] not ok /); name = $NF
		print "kunit: " name "\t" (ok ? "ok" : "FAIL") }
	/^rk_smoke: [^ ]+ (ok|FAILED)/ {
		print "rk_smoke: " $2 "\t" ($3 == "ok" ? "ok" : "FAIL") }
	' "$1" | sort
}

bad=0
for k in unpatched patched; do
	log=$LOGS/$V-compare-$k-console.log
	timed "$V $k boot" rk_boot "${BUILD[$k]}/arch/x86/boot/bzImage" \
		"$INITRD" "$log"
	rc=$?
	tr -d '\r' <"$log" >"$log.tmp" && mv "$log.tmp" "$log"
	if [[ $rc -ne 0 ]] || ! grep -q '^RK-DONE' "$log"; then
		say "$k boot did not end by itself (exit $rc)"
		bad=1
	fi
	grep -q '^RK-CPUS 2$' "$log" || { say "$k: the guest did not see 2 CPUs"; bad=1; }
	if grep -nE "$RK_SPLATS" "$log" >"$LOGS/$V-compare-$k-splats.txt"; then
		say "$k: splat in the console"; bad=1
	fi
	results "$log" >"$OUT/compare-$V-$k.tsv"
done

REPORT=$OUT/compare-$V.txt
{
	echo "Linux $V, unpatched vs patched, fast tiny config, $(date -u +%F)"
	echo "series: $(cat "$OUT/$V/series" | tr '\n' ' ')"
	printf '%-60s %-10s %-10s\n' "check" "unpatched" "patched"
	join -t $'\t' -a1 -a2 -e missing -o 0,1.2,2.2 \
		"$OUT/compare-$V-unpatched.tsv" "$OUT/compare-$V-patched.tsv" |
		awk -F'\t' '{ printf "%-60s %-10s %-10s%s\n", $1, $2, $3,
			($2 == "ok" && $3 != "ok") ? "  <- REGRESSION" : "" }'
} >"$REPORT"
cat "$REPORT" >&2
worse=$(grep -c ' <- REGRESSION' "$REPORT")
unfail=$(awk -F'\t' '$2 != "ok"' "$OUT/compare-$V-unpatched.tsv" | wc -l)
pfail=$(awk -F'\t' '$2 != "ok"' "$OUT/compare-$V-patched.tsv" | wc -l)
say "unpatched: $unfail failing, patched: $pfail failing, regressions: $worse"
[[ $bad -eq 0 && $worse -eq 0 ]]
