#!/usr/bin/env bash
# Where a workload of the in-VM benchmark spends its guest time, function
# by function, in the patched and the unpatched kernel (docs/kernel.md,
# "Where the time goes"):
#
#   kernel-backport/prof.sh [--version 6.1] [--seconds 3] WORKLOAD FUNCTION [N]
#   kernel-backport/prof.sh timer_churn __x64_sys_timer_create
#
# Needs the two bench kernels and the bench initramfs of a bench.sh run
# with the same RK_KERNEL_TAG (it builds nothing else).  Builds
# prof/tbprof.c (a QEMU TCG plugin counting each guest kernel block's
# executions) into out/kernel/prof/, boots each kernel once under
# qemu -accel tcg,thread=single -plugin tbprof.so with rk_bench running
# WORKLOAD on 1 thread for --seconds, and writes
# out/kernel/prof/report-WORKLOAD.md (also printed): blocks and
# instructions per operation, one operation being one entry into
# FUNCTION, for the N functions (default 25) that differ most.  The
# counts do not depend on the host's load; the run takes a few minutes.
set -uo pipefail
RK=$(cd "$(dirname "$0")/.." && pwd)
RK_PROG=prof
# HERE, CACHE, TAG.
source "$RK/kernel-backport/lib.sh"

usage() {
	sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}
VERSION=6.1
SECS=3
while (($#)); do
	case $1 in
	--version) VERSION=${2:?}; shift 2 ;;
	--seconds) SECS=${2:?}; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	-*) usage >&2; exit 2 ;;
	*) break ;;
	esac
done
(($# >= 2)) || { usage >&2; exit 2; }
WORK=$1 FUNC=$2 N=${3:-25}
OUT=$RK/out/kernel/prof
INITRD=$RK/out/kernel/bench/bench-initramfs.cpio
BU=$CACHE/build/$VERSION-pristine-bench$TAG
BP=$CACHE/build/$VERSION-patched-bench$TAG
for f in "$BU/vmlinux" "$BP/vmlinux" "$INITRD"; do
	[[ -s $f ]] || { echo "prof: $f missing: run bench.sh first" >&2; exit 1; }
done
mkdir -p "$OUT"
gcc -O2 -shared -fPIC -Wall -Wextra -Werror -o "$OUT/tbprof.so" \
	"$HERE/prof/tbprof.c" -lpthread || exit 1
for k in unpatched patched; do
	b=$BU
	[[ $k == patched ]] && b=$BP
	echo "prof: $k kernel, $WORK for $SECS s ..." >&2
	timeout --kill-after=10 1200 qemu-system-x86_64 -accel tcg,thread=single \
		-plugin "$OUT/tbprof.so,out=$OUT/$k-$WORK.txt" \
		-smp 2,sockets=2,cores=1,threads=1 -m 512 -nographic -no-reboot \
		-kernel "$b/arch/x86/boot/bzImage" -initrd "$INITRD" \
		-append "console=ttyS0 panic=-1 oops=panic loglevel=4 rk.seconds=$SECS rk.threads=1 rk.workloads=$WORK" \
		</dev/null >"$OUT/$k-$WORK.console" 2>&1 ||
		{ echo "prof: $k boot failed (see $OUT/$k-$WORK.console)" >&2; exit 1; }
	grep -q "^RK-BENCH $WORK " "$OUT/$k-$WORK.console" ||
		{ echo "prof: no RK-BENCH $WORK line in $OUT/$k-$WORK.console" >&2; exit 1; }
done
"$HERE/prof/report.py" "$OUT" "$WORK" "$FUNC" "$BU/vmlinux" "$BP/vmlinux" "$N" |
	tee "$OUT/report-$WORK.md"
