#!/usr/bin/env bash
# In-VM benchmarks of the ridr-kit kernel series, one command
# (docs/kernel.md, "In-VM benchmarks (step 4)"):
#
#   kernel-backport/bench.sh [--version 6.1] [--boots 3] [--seconds 1]
#                            [--threads 1,2,4] [--workloads psem,pmsg,...]
#                            [--icount]
#   kernel-backport/bench.sh --self-check
#
#   1. scripts/setup.sh --kernel (installs what is missing);
#   2. the pristine tree (extracted once into the cache), the current series
#      (backport.py generate, into out/kernel/V/) and the patched tree for it
#      (rebuilt only when the series changes): the same code as verify.sh,
#      from kernel-backport/lib.sh;
#   3. two "bench" kernels, tinyconfig + vm/bench.config (SMP, SYSVIPC,
#      POSIX_TIMERS, -O2, SLUB, no debugging; every line checked in the
#      final .config): UNPATCHED from the pristine tree, PATCHED from the
#      patched tree, in build directories kept under $RK_KERNEL_CACHE/build
#      (V-pristine-bench, V-patched-bench, suffixed -$RK_KERNEL_TAG if set),
#      so a rerun rebuilds only what changed;
#   4. an initramfs: busybox, vm/bench_init as /init, vm/rk_bench.c built
#      static;
#   5. N boots of each kernel, alternating (patched, unpatched, patched, ...)
#      under qemu-system-x86_64 -accel tcg,thread=multi
#      -smp 2,sockets=2,cores=1,threads=1 with a hard timeout; each boot runs
#      every workload of rk_bench for --seconds per thread count;
#   6. out/kernel/bench/results.json (every sample, medians, ratio
#      patched/unpatched per workload and thread count, versions, series
#      sha256, date, command), results.md (table) and results.png (chart).
#
# --icount: the guest's clock counts instructions instead of following the
# host's: qemu -accel tcg,thread=single -icount shift=0,sleep=off -smp 1
# (the virtual clock advances 1 ns per guest instruction executed, and
# jumps over idle time).  A rate is then operations per 10^9 guest
# instructions (user and kernel), the same in every boot and whatever the
# host's load: a measure of path length, like callgrind in userspace,
# with no cache, TLB or lock cost in it.  One vCPU (QEMU 7.2 under
# -icount hangs in this kernel's secondary-CPU bring-up, "x86: Booting
# SMP configuration"), so --threads must be 1; --boots 1 is enough.
#
# --self-check (seconds, no kernel, for CI): bash -n of the scripts,
# lib.sh's CI time guard (rk_fits_budget) on made-up times,
# rk_bench.c and prof/tbprof.c (prof.sh's plugin) compile with -Werror,
# and bench_report.py turns a synthetic sample file (a time and a memory
# workload) into results.json/md.
#
# Progress goes to stderr; build logs and consoles to out/kernel/bench/logs/.
# The figures are measured, never judged: the command fails (exit 1) only if
# something did not run (setup, series, build, a boot that did not end by
# itself or did not print every point, a splat, or the report).
set -uo pipefail
RK=$(cd "$(dirname "$0")/.." && pwd)
RK_PROG=bench
# pristine, generate_series, patched_tree, tiny_build; HERE, CACHE, TAG.
source "$RK/kernel-backport/lib.sh"

usage() {
	sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}
VERSION=6.1
BOOTS=3
SECONDS_PER_POINT=1
THREADS=1,2,4
WORKLOADS=	# all of rk_bench's
SELF_CHECK=0
ICOUNT=0
ARGS="$*"
while (($#)); do
	case $1 in
	--version) VERSION=${2:?}; shift 2 ;;
	--boots) BOOTS=${2:?}; shift 2 ;;
	--seconds) SECONDS_PER_POINT=${2:?}; shift 2 ;;
	--threads) THREADS=${2:?}; shift 2 ;;
	--workloads) WORKLOADS=${2:?}; shift 2 ;;
	--icount) ICOUNT=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--self-check) SELF_CHECK=1; shift ;;
	*) usage >&2; exit 2 ;;
	esac
done
if [[ ! $BOOTS =~ ^[1-9][0-9]*$ || ! $SECONDS_PER_POINT =~ ^[0-9]*\.?[0-9]+$ ||
      ! $THREADS =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ||
      ! $WORKLOADS =~ ^([a-z_]+(,[a-z_]+)*)?$ ]]; then
	usage >&2
	exit 2
fi
if ((ICOUNT)) && [[ $THREADS != 1 ]]; then
	echo "bench: --icount runs one vCPU: --threads must be 1" >&2
	exit 2
fi

if ((SELF_CHECK)); then
	d=$(mktemp -d)
	bash -n "$0" && bash -n "$HERE/lib.sh" && bash -n "$HERE/vm/bench_init" &&
		bash -n "$HERE/compare_boot.sh" && bash -n "$HERE/verify.sh" &&
		bash -n "$HERE/prof.sh" && bash -n "$HERE/kcsan_strict.sh" &&
		bash -n "$HERE/selfcheck_mutations.sh" &&
		{ bash "$0" --icount --threads 1,2 >/dev/null 2>&1; [[ $? -eq 2 ]]; } &&
		rk_fits_budget 6000 0 5400 600 0 &&
		rk_fits_budget 1100 0 5400 600 600 &&
		rk_fits_budget 1800 0 "" 600 2700 &&
		rk_fits_budget 3600 1000 5400 600 2000 &&
		! rk_fits_budget 3601 1000 5400 600 2000 &&
		! rk_fits_budget 3300 0 5400 600 2700 &&
		gcc -static -O2 -pthread -Wall -Wextra -Werror -o "$d/rk_bench" \
			"$HERE/vm/rk_bench.c" &&
		gcc -O2 -shared -fPIC -Wall -Wextra -Werror -o "$d/tbprof.so" \
			"$HERE/prof/tbprof.c" -lpthread &&
		printf '%s\n' "patched 1 psem 2 110 110 1.0" \
			"unpatched 1 psem 2 100 100 1.0" \
			"patched 1 timer_mem_dense 1 330.5 20000 1.0" \
			"unpatched 1 timer_mem_dense 1 342.0 20000 1.0" >"$d/s.tsv" &&
		echo '{"version": "6.1", "series": ["0001-x.patch"],
		       "series_sha256": "0123456789abcdef", "boots_per_kernel": 1,
		       "seconds_per_point": 1, "qemu": "q", "date": "d",
		       "ridr_kit_commit": "c", "command": "c",
		       "kernels": {"unpatched": {"release": "r"},
				   "patched": {"release": "r"}}}' >"$d/m.json" &&
		"$HERE/bench_report.py" "$d/s.tsv" "$d/m.json" "$d" 2>/dev/null &&
		grep -q '"ratio_patched_over_unpatched": 1.1' "$d/results.json" &&
		grep -q '^| psem | 2 |' "$d/results.md" &&
		grep -q '^| timer_mem_dense | 20000 | 342.0 (342.0-342.0) | 330.5 (330.5-330.5) | -11.5 |$' \
			"$d/results.md" &&
		! grep -q '^| timer_mem_dense | 1 |' "$d/results.md" &&
		! grep -q 'Instruction counts' "$d/results.md" &&
		sed -i 's/"qemu": "q"/"qemu": "q", "clock": "icount"/' "$d/m.json" &&
		"$HERE/bench_report.py" "$d/s.tsv" "$d/m.json" "$d" 2>/dev/null &&
		grep -q '^\*\*Instruction counts\*\* (`--icount`' "$d/results.md"
	rc=$?
	rm -rf "$d"
	echo "bench: self-check $([[ $rc -eq 0 ]] && echo passed || echo FAILED)" >&2
	exit $rc
fi

OUT=$RK/out/kernel
BOUT=$OUT/bench
LOGS=$BOUT/logs
T_START=$(date +%s)
say() { echo "bench: [$(($(date +%s) - T_START)) s] $*" >&2; }
die() { say "FAILED: $*"; exit 1; }


# The workloads rk_bench.c defines, and how many this run selects.
ALL_WORK=$(sed -nE 's/^	\{ "([a-z_]+)", K_.*/\1/p' "$HERE/vm/rk_bench.c")
NWORK=$(wc -l <<<"$ALL_WORK")
if [[ -n $WORKLOADS ]]; then
	for w in ${WORKLOADS//,/ }; do
		grep -qx "$w" <<<"$ALL_WORK" ||
			die "no workload $w in rk_bench.c (has: $(echo $ALL_WORK))"
	done
	NWORK=$(tr ',' '\n' <<<"$WORKLOADS" | sort -u | wc -l)
fi
# The memory workloads (K_MEM in rk_bench.c) print one point per boot,
# whatever the thread counts.
ALL_MEM=$(sed -nE 's/^	\{ "([a-z_]+)", K_MEM,.*/\1/p' "$HERE/vm/rk_bench.c")
if [[ -n $WORKLOADS ]]; then
	NMEM=$(tr ',' '\n' <<<"$WORKLOADS" | sort -u | grep -cxF "$ALL_MEM")
else
	NMEM=$(wc -l <<<"$ALL_MEM")
fi

"$RK/scripts/setup.sh" --kernel || die "scripts/setup.sh --kernel"
rm -rf "$LOGS"
mkdir -p "$BOUT" "$LOGS"
rk_cache_init

v=$VERSION
SRC=$CACHE/src/linux-source-$v
PTREE=$CACHE/trees/$v-patched$TAG
BU=$CACHE/build/$v-pristine-bench$TAG
BP=$CACHE/build/$v-patched-bench$TAG

# ---------------------------------------------------------------------
# Trees and kernels

timed "extract $v (once)" pristine "$v" || die "extract linux-source-$v"
timed "generate the series" generate_series "$v" "$LOGS/generate.log" ||
	die "backport.py generate (see $LOGS/generate.log)"
say "series: $(tr '\n' ' ' <"$OUT/$v/series")"
apply_logged() { patched_tree "$1" >>"$LOGS/apply.log" 2>&1; }
timed "patched tree (copied again if the series changed)" apply_logged "$v" ||
	die "the series does not apply (see $LOGS/apply.log)"

build_logged() {	# tree build-dir name
	tiny_build "$1" "$2" "$LOGS/$3-build.log" "$HERE/vm/bench.config" \
		2>>"$LOGS/$3-config.log"
}
build() {	# tree build-dir name
	timed "$3 bench kernel" build_logged "$@" &&
		[[ -s $2/arch/x86/boot/bzImage ]]
}
build "$SRC" "$BU" unpatched ||
	die "unpatched build (see $LOGS/unpatched-{config,build}.log)"
build "$PTREE" "$BP" patched ||
	die "patched build (see $LOGS/patched-{config,build}.log)"

# ---------------------------------------------------------------------
# Initramfs: busybox, /init = vm/bench_init, /bin/rk_bench

INITRD=$BOUT/bench-initramfs.cpio
make_initramfs() {
	local root
	root=$(mktemp -d)
	mkdir -p "$root"/{bin,etc,proc,sys,dev,tmp}
	cp /bin/busybox "$root/bin/busybox" &&
		cp "$HERE/vm/bench_init" "$root/init" && chmod +x "$root/init" &&
		gcc -static -O2 -pthread -Wall -Wextra -o "$root/bin/rk_bench" \
			"$HERE/vm/rk_bench.c" &&
		(cd "$root" && find . | cpio -o -H newc --quiet) >"$INITRD"
	local rc=$?
	rm -rf "$root"
	return $rc
}
make_initramfs >"$LOGS/initramfs.log" 2>&1 ||
	die "initramfs (see $LOGS/initramfs.log)"

# ---------------------------------------------------------------------
# Boots

NTHREADS=$(tr ',' '\n' <<<"$THREADS" | wc -l)
EXPECT=$(((NWORK - NMEM) * NTHREADS + NMEM))
# Guest time per boot: every point plus its 1/5 warm-up, and a margin.
# Under --icount a guest second is 10^9 instructions: about 10 s of host
# time on one TCG thread here.
TIMEOUT=$(awk -v s="$SECONDS_PER_POINT" -v n="$EXPECT" -v f=$((ICOUNT ? 10 : 3)) \
	'BEGIN { printf "%d", 120 + f * 1.2 * s * n }')
APPEND="console=ttyS0 panic=-1 oops=panic loglevel=4 rk.seconds=$SECONDS_PER_POINT rk.threads=$THREADS${WORKLOADS:+ rk.workloads=$WORKLOADS}"
if ((ICOUNT)); then
	GUEST=(-accel tcg,thread=single -icount shift=0,sleep=off -smp 1 -m 512)
	CLOCK=icount
else
	GUEST=(-accel tcg,thread=multi -smp 2,sockets=2,cores=1,threads=1 -m 512)
	CLOCK=host
fi
NCPUS=$((ICOUNT ? 1 : 2))
QEMU=(qemu-system-x86_64 "${GUEST[@]}" -nographic -no-reboot)
SPLATS='WARNING:|BUG:|Kernel panic|Oops|Call Trace|general protection'
SAMPLES=$BOUT/samples.tsv
BOOTS_TSV=$BOUT/boots.tsv	# kernel boot host-load-1min wall-seconds exit
: >"$SAMPLES"
: >"$BOOTS_TSV"
FAILED=0

boot_one() {	# kernel-name bzImage boot-number
	local k=$1 log=$LOGS/$1-boot$3.log rc n t0 load
	load=$(cut -d' ' -f1 /proc/loadavg)
	t0=$(date +%s)
	timeout --kill-after=10 "$TIMEOUT" "${QEMU[@]}" -kernel "$2" \
		-initrd "$INITRD" -append "$APPEND" </dev/null >"$log" 2>&1
	rc=$?
	echo "$k $3 $load $(($(date +%s) - t0)) $rc" >>"$BOOTS_TSV"
	tr -d '\r' <"$log" >"$log.tmp" && mv "$log.tmp" "$log"
	n=$(grep -c '^RK-BENCH [a-z_]* ' "$log")
	if [[ $rc -ne 0 ]] || ! grep -q '^RK-DONE' "$log"; then
		say "$k boot $3: did not end by itself (exit $rc), see $log"
		return 1
	fi
	# Not anchored: with loglevel=4 the first line of /init follows
	# the firmware's escape sequences on the console.
	if ! grep -q "RK-CPUS $NCPUS\$" "$log"; then
		say "$k boot $3: the guest did not see $NCPUS CPUs, see $log"
		return 1
	fi
	if ! grep -q '^RK-RESULT rk_bench 0$' "$log" || [[ $n -ne $EXPECT ]]; then
		say "$k boot $3: rk_bench failed or printed $n of $EXPECT points, see $log"
		grep '^RK-BENCH-ERROR' "$log" | head -5 >&2
		return 1
	fi
	if grep -qE "$SPLATS" "$log"; then
		say "$k boot $3: splat in the console, see $log"
		grep -nE "$SPLATS" "$log" | head -5 >&2
		return 1
	fi
	grep '^RK-BENCH [a-z_]* ' "$log" |
		awk -v k="$k" -v b="$3" '{ print k, b, $2, $3, $4, $5, $6 }' \
			>>"$SAMPLES"
}

# The guest's 2 vCPUs are 2 host threads: with other work on the host, a
# vCPU is descheduled while it holds a contended kernel lock and the other
# one spins (lock-holder preemption), which swamps any multi-thread figure.
load=$(cut -d' ' -f1 /proc/loadavg)
if ((!ICOUNT)) &&
	awk -v l="$load" -v n="$(nproc)" 'BEGIN { exit !(l > n / 2) }'; then
	say "WARNING: host load $load on $(nproc) cpus: multi-thread figures will mostly measure vCPU preemption (see docs/kernel.md)"
fi
say "$BOOTS boots per kernel, alternating, $EXPECT points of $SECONDS_PER_POINT s each (timeout $TIMEOUT s per boot)"
for ((i = 1; i <= BOOTS; i++)); do
	for k in patched unpatched; do
		if [[ $k == patched ]]; then b=$BP; else b=$BU; fi
		timed "boot $i/$BOOTS $k" boot_one "$k" \
			"$b/arch/x86/boot/bzImage" "$i" || FAILED=$((FAILED + 1))
	done
done

# ---------------------------------------------------------------------
# Report

dirty=
[[ -z $(git -C "$RK" status --porcelain 2>/dev/null) ]] || dirty=-dirty
python3 - "$BOUT/meta.json" <<EOF || die "meta.json"
import json, sys
series = open("$OUT/$v/series").read().split()
json.dump({
    "benchmark": "kernel-vm",
    "version": "$v",
    "command": "${RK_KERNEL_TAG:+RK_KERNEL_TAG=$RK_KERNEL_TAG }kernel-backport/bench.sh $ARGS".rstrip(),
    "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
    "wall_seconds": $(($(date +%s) - T_START)),
    "ridr_kit_commit": "$(git -C "$RK" rev-parse --short HEAD 2>/dev/null)$dirty",
    "series": series,
    "series_sha256": "$(cat "$PTREE/.rk-series")",
    "kernels": {
        "unpatched": {"release": "$(cat "$BU/include/config/kernel.release")",
                      "tree": "$SRC", "build": "$BU"},
        "patched": {"release": "$(cat "$BP/include/config/kernel.release")",
                    "tree": "$PTREE", "build": "$BP"},
    },
    "config": "tinyconfig + kernel-backport/vm/bench.config",
    "boots_per_kernel": $BOOTS,
    "order": "alternating, patched first",
    "seconds_per_point": $SECONDS_PER_POINT,
    "threads": [int(t) for t in "$THREADS".split(",")],
    "workloads": "$WORKLOADS".split(",") if "$WORKLOADS" else "all",
    "qemu": "$(qemu-system-x86_64 --version | head -1) ${GUEST[*]}",
    "clock": "$CLOCK",
    "host_cpus": $(nproc),
    "host_load_at_end": "$(cut -d' ' -f1-3 /proc/loadavg)",
    "failed_boots": $FAILED,
    "boots": [{"kernel": k, "boot": int(b), "host_load_1min": float(l),
               "wall_seconds": int(w), "exit": int(e)}
              for k, b, l, w, e in (x.split() for x in open("$BOOTS_TSV")
                                    if x.strip())],
}, open(sys.argv[1], "w"), indent=1)
EOF
"$HERE/bench_report.py" "$SAMPLES" "$BOUT/meta.json" "$BOUT" ||
	die "bench_report.py"
cat "$BOUT/results.md" >&2
say "done: $BOUT/results.{json,md,png}"
[[ $FAILED -eq 0 ]] || die "$FAILED boot(s) failed"
