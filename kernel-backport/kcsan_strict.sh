#!/usr/bin/env bash
# KCSAN in strict mode over the patched kernel, by hand (docs/kernel.md,
# "KCSAN"): not in CI, because strict mode reports races outside the
# series, so "no report" cannot be the criterion there.
#
#   kernel-backport/kcsan_strict.sh [--version 6.1] [--no-prepare]
#
# Builds the patched tree with vm/tiny.config + vm/kcsan.config +
# CONFIG_KCSAN_STRICT=y (plain writes not assumed atomic, weak-memory
# modelling where the compiler allows it; every line checked in the final
# .config), boots it under qemu with the same initramfs as verify.sh's
# boots, and sorts KCSAN's reports: a report "touches the series" when a
# function of one of its stacks is defined in an object the series
# changes (lib/ridr.o, lib/lockref.o, ipc/*.o,
# kernel/time/posix-timers.o: read from the build's own objects with nm).
# Output: the count of reports per function pair, the ones touching the
# series with their stacks, in out/kernel/kcsan-strict-V.txt; exit 0 when
# the boot ended by itself with every test passing (the reports are for
# a person to read, not a pass criterion).
set -uo pipefail
export LC_ALL=C
RK=$(cd "$(dirname "$0")/.." && pwd)
OUT=$RK/out/kernel
RK_PROG=kcsan_strict
source "$RK/kernel-backport/lib.sh"
V=6.1
PREPARE=1
while (($#)); do
	case $1 in
	--version) V=$2; shift 2 ;;
	--no-prepare) PREPARE=0; shift ;;
	*) echo "usage: $0 [--version 6.1] [--no-prepare]" >&2; exit 2 ;;
	esac
done
say() { echo "kcsan_strict: $*" >&2; }
die() { say "FAILED: $*"; exit 1; }
LOGS=$OUT/logs
mkdir -p "$LOGS"
rk_cache_init
PAT=$CACHE/trees/$V-patched$TAG
rk_prepare_patched "$V" "$PREPARE" "$LOGS/$V-strict" || die "$V trees not ready"

B=$CACHE/build/$V-patched-tiny-kcsan-strict$TAG
FRAG=$(mktemp)
trap 'rm -f "$FRAG"' EXIT
echo 'CONFIG_KCSAN_STRICT=y' >"$FRAG"
timed "$V strict KCSAN bzImage" tiny_build "$PAT" "$B" \
	"$LOGS/$V-kcsan-strict-build.log" "$HERE/vm/tiny.config" \
	"$HERE/vm/kcsan.config" "$FRAG" || die "build (see $LOGS/$V-kcsan-strict-build.log)"
rk_initramfs "$PAT" "$B/rk-initramfs.cpio" >"$LOGS/$V-kcsan-strict-initramfs.log" 2>&1 ||
	die "initramfs"
LOG=$LOGS/$V-kcsan-strict-console.log
timed "$V strict KCSAN boot" rk_boot "$B/arch/x86/boot/bzImage" \
	"$B/rk-initramfs.cpio" "$LOG" 900
rc=$?
tr -d '\r' <"$LOG" >"$LOG.tmp" && mv "$LOG.tmp" "$LOG"

# Functions defined in the objects the series changes.
SERIES_FNS=$(cd "$B" && nm --defined-only lib/ridr.o lib/lockref.o ipc/*.o \
	kernel/time/posix-timers.o 2>/dev/null | awk '$2 ~ /^[tTwW]$/ { print $3 }' |
	sort -u)
[[ -n $SERIES_FNS ]] || die "no functions read from the series' objects"
REPORT=$OUT/kcsan-strict-$V.txt
{
	echo "Linux $V patched, KCSAN_STRICT, $(date -u +%F)"
	grep '^CONFIG_KCSAN' "$B/.config"
	echo "reports per function pair:"
	grep -o 'BUG: KCSAN: .*' "$LOG" | sort | uniq -c | sort -rn
	echo "reports touching the series (a stack frame in lib/ridr.o, lib/lockref.o, ipc/, posix-timers.o):"
	awk -v fns="$SERIES_FNS" '
	BEGIN { n = split(fns, a, "\n"); for (i = 1; i <= n; i++) s[a[i]] = 1 }
	/BUG: KCSAN:/ { inrep = 1; buf = ""; hit = 0 }
	inrep {
		line = $0; sub(/^\[ *[0-9.]+\] /, "", line)
		buf = buf line "\n"
		if (line ~ /^ [A-Za-z_][A-Za-z0-9_.]*\+0x/) {
			f = line; sub(/^ /, "", f); sub(/\+0x.*/, "", f)
			if (f in s) hit = 1
		}
	}
	/Reported by Kernel Concurrency Sanitizer/ {
		if (inrep && hit) { printf "%s\n", buf; touched++ }
		inrep = 0
	}
	END { printf "%d report(s) touching the series\n", touched }
	' "$LOG"
	grep -E '^RK-RESULT|# ridr: |rk_smoke: [0-9]+ passed' "$LOG"
} >"$REPORT"
cat "$REPORT"
[[ $rc -eq 0 ]] && grep -q '^RK-DONE' "$LOG" &&
	grep -q '^RK-RESULT rk_smoke 0$' "$LOG" &&
	grep -q '^RK-RESULT posix_timers 0$' "$LOG" &&
	grep -q '^RK-RESULT msgque 0$' "$LOG" &&
	rk_kunit_passed <(rk_results "$LOG") ridr
