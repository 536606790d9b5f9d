#!/usr/bin/env bash
# Verify the ridr-kit kernel series, one command (docs/kernel.md):
#
#   kernel-backport/verify.sh [--versions "6.1 6.12"] [--boot "6.1"]
#                             [--bisect "6.1"] [--compare "6.12"]
#
# For every version: the Debian tarball /usr/src/linux-source-V.tar.xz is
# extracted once into the cache (pristine, never modified), then
#   1. generate the series (from the tree, and the same from the tarball);
#      it applies to the pristine tree (git apply
#      --check, then patch by patch into a patched copy); the generator
#      refuses the patched tree (exit 3) and an unsupported one (exit 2);
#      checkpatch.pl --strict reports 0 errors for every patch, and
#      scripts/kernel-doc -none nothing for the new files; the generated
#      lib/ridr.c, include/linux/ridr.h and lib/lockref.c hold no rk_/RK_
#      word and no liburcu/flavor wording (the generator refuses such
#      output; this checks the files in the tree);
#   2. defconfig + W=1 build of lib/ ipc/ kernel/time/ in the pristine and
#      the patched tree:
#      ridr.o, ridr_kunit.o, lockref.o, ipc/ and posix-timers.o build, no warning the
#      pristine tree does not have; same machine code: the core compiled
#      unchanged through compat/kernel.h, with kbuild's own command for
#      lib/ridr.o and lib/lockref.o, gives the same objdump -d -r as the
#      translated files (the translation and compat/kernel.h agree);
#      sparse (make C=2, in the same build
#      directories) reports nothing in those directories that the pristine
#      tree does not; (versions in --bisect) the tree builds after patches
#      1, 1-2 and 1-3 (tiny config; 1-4 is the debug build below), so every
#      patch of the series builds on its own; then a full build of a small config,
#      "debug" (tinyconfig + vm/tiny.config + vm/lockdep.config +
#      vm/kasan.config: lockdep, PROVE_RCU, DEBUG_ATOMIC_SLEEP,
#      DEBUG_OBJECTS_RCU_HEAD, SLUB, KASAN, kmemleak, failslab; a version
#      that is not booted, without vm/kasan.config);
#   3. (versions in --boot) also build "fast" (vm/tiny.config alone, so
#      spinlock_t is 4 bytes and lockref's cmpxchg path is compiled in:
#      checked in lib/lockref.o) and "kcsan" (vm/tiny.config +
#      vm/kcsan.config: the data-race detector, which cannot be combined
#      with KASAN), and boot all three under qemu with 2 vCPUs and a
#      busybox initramfs holding the tree's own selftests (ipc/msgque,
#      timers/posix_timers, built static) and vm/rk_smoke.c; the KUnit
#      suite "ridr" (lib/ridr_kunit.c, built in) runs at boot.  Pass:
#      all of them pass (every KUnit case, none skipped), the guest saw
#      2 CPUs, the VM ended by itself inside the hard timeout, and the
#      console has no lockdep/RCU/BUG/WARNING/KASAN/KCSAN splat (a KCSAN
#      data-race report is a "BUG: KCSAN:" line); in the kcsan boot
#      KCSAN was on and its boot selftest passed; in the debug
#      boot rk_smoke's memory checks ran (KASAN on, ridr_node_cache back
#      to its count after exit and namespace teardown, each slab
#      allocation of timer_create() and sem/msg/shmget() failed in turn
#      through fail-nth, kmemleak clean);
#   4. (versions in --compare) kernel-backport/compare_boot.sh: the
#      unpatched and the patched tree built with the "fast" config and
#      booted in the same run, every result line compared (kselftest
#      subtests, rk_smoke checks, KUnit suites and cases, exit statuses,
#      read by lib.sh's rk_results as the KUnit check is): the patched
#      kernel fails nothing the unpatched one passes.  For a tree whose own
#      selftests fail unpatched (6.12.118's posix_timers comes from a later
#      kernel), where "exit 0" cannot be the criterion.  Then (versions in
#      --compare, not in --boot) the patched "debug" kernel (lockdep,
#      PROVE_RCU; built in step 2 without KASAN) boots the same tests:
#      lockdep on, no splat, every KUnit case and rk_smoke check passing,
#      and no result worse than the unpatched fast kernel's in the
#      comparison (its own failing subtests are not the series').
# Under CI (.ci/run sets RK_CI_START and RK_CI_LIMIT) a version whose
# estimated time no longer fits before the limit is skipped, said, and not
# counted (the guard above the version loop).
# Each check counts once; the totals go to out/test/extra-kernel.counts as
# "PASSED FAILED" (scripts/test.sh adds them to its final line).  Logs and
# the series: out/kernel/.  Trees, build directories and ccache live in
# $RK_KERNEL_CACHE (default /var/cache/ridr-kit) and are reused across runs.
# RK_KERNEL_TAG=x gives this checkout its own patched trees and build
# directories (suffix -x; a new one starts as a copy of the untagged one,
# so only what differs is rebuilt): two checkouts can verify different
# series at once.  Pristine trees and ccache are shared.
set -uo pipefail
RK=$(cd "$(dirname "$0")/.." && pwd)
# pristine, patched_tree, series_stamp, generate_series, seed_build, config_has,
# tiny_build, rk_initramfs, rk_boot, RK_SPLATS; HERE, CACHE, TAG, MAKE.
source "$RK/kernel-backport/lib.sh"
VERSIONS="6.1 6.12"
BOOT="6.1"
BISECT="6.1"
COMPARE="6.12"
while (($#)); do
	case $1 in
	--versions) VERSIONS=$2; shift 2 ;;
	--boot) BOOT=$2; shift 2 ;;
	--bisect) BISECT=$2; shift 2 ;;
	--compare) COMPARE=$2; shift 2 ;;
	*) echo "usage: $0 [--versions \"6.1 6.12\"] [--boot \"6.1\"] [--bisect \"6.1\"] [--compare \"6.12\"]" >&2
	   exit 2 ;;
	esac
done

OUT=$RK/out/kernel
LOGS=$OUT/logs
mkdir -p "$OUT" "$LOGS" "$RK/out/test"
rk_cache_init
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
PASSED=0
FAILED=0

say() { echo "verify: $*" >&2; echo "$*" >>"$SUMMARY"; }
# check NAME CMD...: run CMD, count and report the result.
check() {
	local name=$1
	shift
	if "$@"; then
		PASSED=$((PASSED + 1))
		say "PASS $name"
		return 0
	fi
	FAILED=$((FAILED + 1))
	say "FAIL $name"
	return 1
}

# ---------------------------------------------------------------------
# Step 1: generate, apply, refuse, checkpatch

step_generate() {
	generate_series "$1" "$LOGS/$1-generate.log"
}

# The tarball input gives the same series as the extracted tree (one
# streaming pass over /usr/src/linux-source-V.tar.xz).
step_tarball_same() {
	local d rc
	d=$(mktemp -d)
	"$HERE/backport.py" generate --tarball "/usr/src/linux-source-$1.tar.xz" \
		--out "$d/out" 2>>"$LOGS/$1-generate.log" &&
		diff -r "$d/out" "$OUT/$1" >"$LOGS/$1-tarball.diff"
	rc=$?
	rm -rf "$d"
	return $rc
}

step_apply_check() {
	(cd "$CACHE/src/linux-source-$1" &&
		git apply --check "$OUT/$1"/ridr-kit-*.patch) &&
		patched_tree "$1" >>"$LOGS/$1-apply.log" 2>&1
}

step_refuses_patched() {
	local t=$CACHE/trees/$1-patched$TAG before rc
	before=$(sha256sum "$t/lib/lockref.c" "$t/lib/Makefile")
	"$HERE/backport.py" apply --tree "$t" --out "$OUT/tmp-refuse" \
		>>"$LOGS/$1-refuse.log" 2>&1
	rc=$?
	rm -rf "$OUT/tmp-refuse"
	[[ $rc -eq 3 && $(sha256sum "$t/lib/lockref.c" "$t/lib/Makefile") == \
	   "$before" ]]
}

step_refuses_unsupported() {
	local d rc
	d=$(mktemp -d)
	cp -a "$CACHE/src/linux-source-$1/lib" "$CACHE/src/linux-source-$1/include" \
		"$d/" 2>/dev/null
	sed -E 's/^PATCHLEVEL = .*/PATCHLEVEL = 99/' \
		"$CACHE/src/linux-source-$1/Makefile" >"$d/Makefile"
	"$HERE/backport.py" apply --tree "$d" --out "$d/out" \
		>>"$LOGS/$1-refuse.log" 2>&1
	rc=$?
	[[ $rc -eq 2 && ! -e $d/lib/ridr.c ]]
	rc=$?
	rm -rf "$d"
	return $rc
}

step_kernel_doc() {
	local out
	out=$(cd "$CACHE/trees/$1-patched$TAG" && ./scripts/kernel-doc -none \
		include/linux/ridr.h lib/ridr.c lib/ridr_kunit.c \
		lib/lockref.c 2>&1)
	[[ -z $out ]] || { echo "$out" >&2; return 1; }
}

step_checkpatch() {
	local v=$1 p ok=0 line rc
	while read -r p; do
		(cd "$CACHE/src/linux-source-$v" &&
			./scripts/checkpatch.pl --strict --terse --show-types \
				"$OUT/$v/$p") >"$LOGS/$v-checkpatch-${p:0:4}.log" 2>&1
		rc=$?
		line=$(grep -E '^total: ' "$LOGS/$v-checkpatch-${p:0:4}.log")
		# --terse prints no total for a patch with nothing to report.
		if [[ -z $line && $rc -eq 0 && ! -s $LOGS/$v-checkpatch-${p:0:4}.log ]]; then
			line="total: 0 errors, 0 warnings, 0 checks (clean)"
		fi
		say "checkpatch $v ${p:0:4}: $line"
		[[ $line == "total: 0 errors,"* ]] || ok=1
	done <"$OUT/$v/series"
	return $ok
}

# The kernel files are plain kernel C: no compat word, no userspace-only
# API or wording (\b: lockref_mark_dead is the kernel's own name).
step_kernel_names() {
	local t=$CACHE/trees/$1-patched$TAG
	[[ ! -e $t/include/linux/rk_compat.h ]] || return 1
	! (cd "$t" && grep -nE '\b_*(rk|RK)_|liburcu|flavou?r' \
		lib/ridr.c include/linux/ridr.h lib/lockref.c) >&2
}

# ---------------------------------------------------------------------
# Step 2: W=1 of lib/ ipc/ kernel/time/ (pristine vs patched), full build of a small config

W1_DIRS=(lib/ ipc/ kernel/time/)
w1_build() {	# tree build-dir log
	local b=$2
	seed_build "$b"
	mkdir -p "$b"
	if [[ ! -e $b/.config ]]; then
		make -C "$1" -s O="$b" defconfig >/dev/null || return 1
	fi
	# W=1 warnings must stay warnings (defconfig turns on WERROR);
	# RIDR_KUNIT_TEST (with KUNIT) selects RIDR, so both new files
	# are built; the pristine tree gets KUNIT too, the same lib/kunit/.
	"$1/scripts/config" --file "$b/.config" --disable WERROR \
		--enable KUNIT --enable RIDR_KUNIT_TEST
	make -C "$1" -s O="$b" olddefconfig >/dev/null || return 1
	# Compile every object of these directories again, so the log holds
	# every warning of both trees, not just those of files changed since
	# the last run (ccache replays a cached compiler's warnings on a hit).
	local d
	for d in "${W1_DIRS[@]}"; do
		find "$b/$d" -name '*.o' -delete 2>/dev/null
	done
	"${MAKE[@]}" -C "$1" -k O="$b" W=1 "${W1_DIRS[@]}" >"$3" 2>&1
}

# log tree -> sorted unique warnings, without the tree path and without
# line:column (a patch that moves code must not make old warnings "new").
warnings_of() {
	grep -E 'warning:|error:' "$1" | sed -E "s#$2/##g; s/:[0-9]+:[0-9]+:/:/" |
		sort -u
}

step_w1() {
	local v=$1 src=$CACHE/src/linux-source-$1 dst=$CACHE/trees/$1-patched$TAG
	local bp=$CACHE/build/$1-pristine-w1$TAG bq=$CACHE/build/$1-patched-w1$TAG o
	timed "$v W=1 ${W1_DIRS[*]} pristine" w1_build "$src" "$bp" "$LOGS/$v-w1-pristine.log"
	timed "$v W=1 ${W1_DIRS[*]} patched" w1_build "$dst" "$bq" "$LOGS/$v-w1-patched.log"
	for o in lib/ridr.o lib/ridr_kunit.o lib/lockref.o ipc/util.o ipc/shm.o \
		kernel/time/posix-timers.o; do
		[[ -s $bq/$o ]] || { echo "verify: $o not built" >&2; return 1; }
	done
	warnings_of "$LOGS/$v-w1-pristine.log" "$src" >"$LOGS/$v-w1-pristine.warn"
	warnings_of "$LOGS/$v-w1-patched.log" "$dst" >"$LOGS/$v-w1-patched.warn"
	say "W=1 ${W1_DIRS[*]} $v: pristine $(wc -l <"$LOGS/$v-w1-pristine.warn") warnings, patched $(wc -l <"$LOGS/$v-w1-patched.warn")"
	if ! comm -13 "$LOGS/$v-w1-pristine.warn" "$LOGS/$v-w1-patched.warn" \
		>"$LOGS/$v-w1-new.warn"; then
		return 1
	fi
	if [[ -s $LOGS/$v-w1-new.warn ]]; then
		cat "$LOGS/$v-w1-new.warn" >&2
		return 1
	fi
}

# The generated lib/ridr.c and lib/lockref.c are the core translated
# with compat/kernel.h's table: compile the core unchanged through
# compat/kernel.h (backport.py core: for ridr, its parts joined as
# lib/ridr.c joins them) with the very command kbuild used for the
# generated file (W=1 defconfig build of the patched tree) and require
# the same machine code, function by function (objdump -d -r of every
# executable section).  This keeps the generator's reading of kernel.h
# and kernel.h itself from drifting apart.
step_same_code() {
	local v=$1 b=$CACHE/build/$1-patched-w1$TAG core pair obj src cmd post sym e defs rc=0
	core=$(mktemp -d)
	rmdir "$core"
	"$HERE/backport.py" core --out "$core" 2>>"$LOGS/$v-same-code.log" ||
		return 1
	# The core's "lockref/lockref.h" is its userspace API header; the
	# kernel build keeps the kernel's own <linux/lockref.h>.
	mkdir -p "$core/kinc/lockref"
	echo '#include <linux/lockref.h>' >"$core/kinc/lockref/lockref.h"
	for pair in lib/ridr.o:lib/ridr.c lib/lockref.o:lockref/lockref.c; do
		obj=${pair%%:*}
		src=${pair#*:}
		# The generated file's export policy (EXPORT_SYMBOL_GPL for some
		# symbols, none for others) for the core's rk_export_symbol().
		defs=("-Drk_export_symbol(sym)=RK_EXPORT_##sym")
		for sym in $(sed -n 's/^rk_export_symbol(\([a-z_0-9]*\));$/\1/p' \
			"$core/$src"); do
			e=$(grep -o "^EXPORT_SYMBOL[A-Z_]*($sym)" \
				"$CACHE/trees/$v-patched$TAG/${obj%.o}.c")
			defs+=("-DRK_EXPORT_$sym=$e")
		done
		# "<compile> ; <objtool ... lib/x.o>": both, on the core's object.
		# (6.12's kbuild calls it savedcmd_)
		cmd=$(sed -n "s|^\(saved\)\{0,1\}cmd_$obj := ||p" \
			"$b/$(dirname "$obj")/.$(basename "$obj").cmd")
		[[ -n $cmd ]] || { echo "no kbuild command for $obj" >&2; return 1; }
		post=
		if [[ $cmd == *" ; "* ]]; then
			post=${cmd#* ; }
			cmd=${cmd%% ; *}
			post=${post//$obj/$core\/core.o}
		fi
		cmd=$(sed -E 's/[[:space:]]+$//' <<<"$cmd")
		cmd=${cmd/-Wp,-MMD,$(dirname "$obj")\/.$(basename "$obj").d/-Wp,-MMD,$core/dep.d}
		# __FILE__ as kbuild has it for the generated file (lib/x.c).
		defs+=("-fmacro-prefix-map=$core/$(dirname "$src")/=$(dirname "$obj")/")
		cmd=${cmd/ -o $obj / -I$core\/kinc -I$core$(printf ' %q' "${defs[@]}") -o $core/core.o }
		cmd="${cmd% *} $core/$src${post:+ ; $post}"
		echo "$cmd" >>"$LOGS/$v-same-code.log"
		(cd "$b" && eval "$cmd") >>"$LOGS/$v-same-code.log" 2>&1 || {
			echo "the core does not compile through compat/kernel.h" >&2
			rc=1
			continue
		}
		objdump -d -r --no-show-raw-insn "$b/$obj" | tail -n +4 \
			>"$LOGS/$v-same-code-generated-$(basename "$obj").dis"
		objdump -d -r --no-show-raw-insn "$core/core.o" | tail -n +4 \
			>"$LOGS/$v-same-code-core-$(basename "$obj").dis"
		if ! diff -u "$LOGS/$v-same-code-core-$(basename "$obj").dis" \
			"$LOGS/$v-same-code-generated-$(basename "$obj").dis" \
			>"$LOGS/$v-same-code-$(basename "$obj").diff"; then
			echo "$obj: machine code differs from the core's (see $LOGS/$v-same-code-$(basename "$obj").diff)" >&2
			rc=1
		fi
		say "same code $v $obj: $(grep -c '>:$' "$LOGS/$v-same-code-generated-$(basename "$obj").dis") functions, $(wc -l <"$LOGS/$v-same-code-generated-$(basename "$obj").dis") lines of objdump"
	done
	rm -rf "$core"
	return $rc
}

# sparse (make C=2: every file of the directories checked again, in the
# W=1 build directories, so nothing is recompiled) on lib/ ipc/
# kernel/time/, pristine and patched: nothing new.  Compared as counts per
# (file, message) without line numbers, so one more instance of a message
# the pristine file already has counts as new too.
sparse_counts() {	# log tree -> "count<TAB>file: message" per distinct message
	grep -E '(warning|error):' "$1" | grep -v ': note:' |
		sed -E "s#$2/##g; s/:[0-9]+:[0-9]+:/:/" | LC_ALL=C sort | uniq -c |
		sed -E 's/^ *([0-9]+) /\1\t/' | LC_ALL=C sort
}
step_sparse() {
	local v=$1 src=$CACHE/src/linux-source-$1 dst=$CACHE/trees/$1-patched$TAG
	local bp=$CACHE/build/$1-pristine-w1$TAG bq=$CACHE/build/$1-patched-w1$TAG
	command -v sparse >/dev/null || { echo "sparse is not installed" >&2; return 1; }
	timed "$v sparse pristine" "${MAKE[@]}" -C "$src" -k O="$bp" W=1 C=2 \
		CF=-D__CHECK_ENDIAN__ "${W1_DIRS[@]}" >"$LOGS/$v-sparse-pristine.log" 2>&1
	timed "$v sparse patched" "${MAKE[@]}" -C "$dst" -k O="$bq" W=1 C=2 \
		CF=-D__CHECK_ENDIAN__ "${W1_DIRS[@]}" >"$LOGS/$v-sparse-patched.log" 2>&1
	grep -q ' CHECK .*lib/ridr.c' "$LOGS/$v-sparse-patched.log" ||
		{ echo "sparse did not check lib/ridr.c" >&2; return 1; }
	sparse_counts "$LOGS/$v-sparse-pristine.log" "$src" >"$LOGS/$v-sparse-pristine.warn"
	sparse_counts "$LOGS/$v-sparse-patched.log" "$dst" >"$LOGS/$v-sparse-patched.warn"
	# A (count, message) line of the patched tree that the pristine tree
	# does not have: a new message, or more of an old one.
	LC_ALL=C comm -13 "$LOGS/$v-sparse-pristine.warn" \
		"$LOGS/$v-sparse-patched.warn" >"$LOGS/$v-sparse-new.warn" || return 1
	say "sparse ${W1_DIRS[*]} $v: $(grep -c ' CHECK ' "$LOGS/$v-sparse-patched.log") files checked, pristine $(wc -l <"$LOGS/$v-sparse-pristine.warn") distinct messages, new in patched: $(wc -l <"$LOGS/$v-sparse-new.warn")"
	if [[ -s $LOGS/$v-sparse-new.warn ]]; then
		head -20 "$LOGS/$v-sparse-new.warn" >&2
		return 1
	fi
}

# Each patch builds on its own: a tree with patches 1..n applied, n = 1 ..
# N-1 (the patched tree is 1..N), built with the tiny config.  One tree,
# $CACHE/trees/V-bisect$TAG, moved from state to state with git apply
# (-R), and one build directory, so each step rebuilds what it changed.
step_bisect() {
	local v=$1 t=$CACHE/trees/$1-bisect$TAG b=$CACHE/build/$1-bisect$TAG
	local sum n p state series
	sum=$(series_stamp "$v")
	if [[ ! -e $t/.rk-series || $(cat "$t/.rk-series") != "$sum" ]]; then
		rm -rf "$t" "$t.tmp"
		cp -a "$CACHE/src/linux-source-$v" "$t.tmp" || return 1
		rm -f "$t.tmp/.rk-extracted"
		echo 0 >"$t.tmp/.rk-state"
		echo "$sum" >"$t.tmp/.rk-series"
		mv "$t.tmp" "$t"
	fi
	mapfile -t series <"$OUT/$v/series"
	# Back to pristine: undo what the last run left applied.
	state=$(cat "$t/.rk-state")
	for ((n = state; n > 0; n--)); do
		(cd "$t" && git apply -R "$OUT/$v/${series[n - 1]}") || return 1
	done
	echo 0 >"$t/.rk-state"
	for ((n = 1; n < ${#series[@]}; n++)); do
		p=${series[n - 1]}
		(cd "$t" && git apply "$OUT/$v/$p") || return 1
		echo "$n" >"$t/.rk-state"
		if ! timed "$v bisect: build after patches 1-$n" tiny_build "$t" "$b" \
			"$LOGS/$v-bisect-$n.log" "$HERE/vm/tiny.config"; then
			say "bisect $v: the tree does not build after patches 1-$n ($p)"
			return 1
		fi
		say "bisect $v: builds after patches 1-$n"
	done
}

# Build directory of boot config $2 ("debug" or "fast") for version $1.
tiny_dir() {
	if [[ $2 == debug ]]; then
		echo "$CACHE/build/$1-patched-tiny$TAG"
	else
		echo "$CACHE/build/$1-patched-tiny-$2$TAG"
	fi
}

step_tiny() {	# version config
	local v=$1 c=$2 b frags=("$HERE/vm/tiny.config")
	b=$(tiny_dir "$v" "$c")
	# KASAN, kmemleak and failslab (vm/kasan.config) matter only for a
	# kernel that boots: the core has no KASAN-specific code, and KASAN
	# makes a cold build ~3x longer (6.12's unbooted debug build: 515 s
	# with it), time CI spends on the 6.12 boots instead (--compare).
	if [[ $c == debug ]]; then
		frags+=("$HERE/vm/lockdep.config")
		[[ " $BOOT " == *" $v "* ]] && frags+=("$HERE/vm/kasan.config")
	fi
	[[ $c == kcsan ]] && frags+=("$HERE/vm/kcsan.config")
	timed "$v tiny $c bzImage" tiny_build "$CACHE/trees/$v-patched$TAG" \
		"$b" "$LOGS/$v-tiny-$c-build.log" "${frags[@]}" &&
		[[ -s $b/arch/x86/boot/bzImage ]]
}

# The fast config really has lockref's cmpxchg loop (USE_CMPXCHG_LOCKREF).
step_lockref_cmpxchg_built() {
	local n
	# grep -c, not -q: with pipefail, -q's early exit would fail objdump.
	n=$(objdump -d "$(tiny_dir "$1" fast)/lib/lockref.o" | grep -c 'lock cmpxchg')
	say "lockref.o (fast): $n lock cmpxchg instructions"
	[[ $n -gt 0 ]]
}

# ---------------------------------------------------------------------
# Step 3: boot and test

BOOT_LOG=
step_boot_run() {	# version config [log-suffix]
	local v=$1 b rc limit
	b=$(tiny_dir "$v" "$2")
	BOOT_LOG=$LOGS/$v-$2-console${3:-}.log
	rk_initramfs "$CACHE/trees/$v-patched$TAG" "$b/rk-initramfs.cpio" \
		>>"$LOGS/$v-initramfs.log" 2>&1 || return 1
	# The debug boot (lockdep, KASAN, kmemleak) takes ~175-210 s on an
	# idle host, the fast one ~16 s: room for a busy host.
	limit=300
	[[ $2 == debug ]] && limit=900
	[[ $2 == kcsan ]] && limit=600
	timed "$v $2 boot${3:+ ${3#-boot}} and tests under qemu" rk_boot "$b/arch/x86/boot/bzImage" \
		"$b/rk-initramfs.cpio" "$BOOT_LOG" "$limit"
	rc=$?
	tr -d '\r' <"$BOOT_LOG" >"$BOOT_LOG.tmp" && mv "$BOOT_LOG.tmp" "$BOOT_LOG"
	# timeout exits 124 (137 when killed): the VM did not end itself.
	[[ $rc -eq 0 ]] && grep -q '^RK-DONE' "$BOOT_LOG"
}

console_has() { [[ -n $BOOT_LOG ]] && grep -qE "$1" "$BOOT_LOG"; }

# compare_boot.sh: the unpatched and the patched "fast" kernel of one
# version booted in the same run, every test result compared (a tree's
# own selftests may fail unpatched: 6.12's posix_timers does).
step_compare() {
	# A table (or a side's results) left by an earlier run must not be
	# reported or compared as this one's when compare_boot.sh dies before
	# writing its own.
	rm -f "$OUT/compare-$1.txt" "$OUT/compare-$1-unpatched.tsv" \
		"$OUT/compare-$1-patched.tsv"
	"$HERE/compare_boot.sh" --version "$1" --no-prepare
	local rc=$?
	[[ -s $OUT/compare-$1.txt ]] &&
		sed "s/^/compare $1: /" "$OUT/compare-$1.txt" >>"$SUMMARY"
	return $rc
}

# KUnit's suite "ridr" ran at boot: its KTAP line says ok and every case
# passed, none skipped (lib.sh's rk_results reads the console, as
# compare_boot.sh does).
step_kunit_ridr() {
	[[ -s $BOOT_LOG ]] || return 1
	rk_results "$BOOT_LOG" >"$BOOT_LOG.results.tsv"
	rk_kunit_passed "$BOOT_LOG.results.tsv" ridr
}

# A version booted only by the comparison (6.12) boots its patched debug
# kernel too; its own selftests may fail unpatched, so the criterion is
# the comparison's: no result the unpatched fast kernel passes (in this
# run's compare_boot.sh) fails or is missing here.  While one does, the
# kernel boots again, up to RK_BOOTS (3) boots in all, and a result
# counts only if it is worse in every boot (lib.sh's rk_best_of says why:
# a selftest's timing, and rk_retry_boots how); each further boot must
# end by itself with no splat too.  The table (of the best of the boots)
# goes to out/kernel/debug-vs-unpatched-V.txt, what each round had worse
# to the summary.
step_debug_vs_unpatched() {	# version config
	local u=$OUT/compare-$1-unpatched.tsv t=$OUT/debug-vs-unpatched-$1.txt
	local first=$BOOT_LOG rc
	[[ -s $BOOT_LOG && -s $u ]] || return 1
	rk_results "$BOOT_LOG" >"$BOOT_LOG.results.tsv"
	cp "$BOOT_LOG.results.tsv" "$first.best.tsv"
	rk_retry_boots "$u" "$first.best.tsv" debug_boot_again "$1" "$2"
	rc=$?
	BOOT_LOG=$first
	{
		echo "best of $RK_BOOTS_USED boot(s) of the patched $2 kernel"
		rk_compare_table "$u" "$first.best.tsv"
	} >"$t"
	grep ' <- REGRESSION$' "$t" >&2
	return $rc
}

# Boot N of a version's config for rk_retry_boots: ends by itself, no
# splat, its results on stdout.
debug_boot_again() {	# boot-number version config
	step_boot_run "$2" "$3" "-boot$1" || return 1
	if grep -nE "$RK_SPLATS" "$BOOT_LOG" >"$LOGS/$2-$3-boot$1-splats.txt"; then
		head -20 "$LOGS/$2-$3-boot$1-splats.txt" >&2
		return 1
	fi
	rk_results "$BOOT_LOG"
}

# The lock validator ran in this boot (PROVE_LOCKING prints its banner
# from lockdep_init(); without it "no lockdep splat" would prove nothing).
step_lockdep_on() {
	console_has 'Lock dependency validator: Copyright'
}

# KCSAN watched this boot: on from early boot, its own selftest passed
# (KCSAN_SELFTEST), and it reported nothing: a data race is a
# "BUG: KCSAN: data-race in A / B" report, which RK_SPLATS ("BUG:")
# makes the no-splat check fail on; this check says why a boot with no
# report counts.
step_kcsan_on() {
	console_has 'kcsan: enabled early' &&
		console_has 'kcsan: selftest: ([0-9]+)/\1 tests passed' &&
		! console_has 'BUG: KCSAN:'
}

step_no_splat() {
	[[ -s $BOOT_LOG ]] || return 1
	if grep -nE "$RK_SPLATS" "$BOOT_LOG" >"$LOGS/$1-$2-splats.txt"; then
		head -20 "$LOGS/$1-$2-splats.txt" >&2
		return 1
	fi
}

# The debug boot's memory checks ran (rk_smoke skips a check whose kernel
# support is missing, and rk_smoke's own result counts only what ran):
# KASAN on, ridr_node_cache counted in /proc/slabinfo, every slab
# allocation of timer_create() and sem/msg/shmget() failed in turn
# (fail-nth), kmemleak found nothing.
step_debug_checks_ran() {
	local t
	console_has 'KernelAddressSanitizer initialized' || return 1
	for t in ridr_nodes_back_after_process_exit \
		ridr_nodes_back_after_ipc_ns_teardown \
		fail_nth_timer_create_eagain_nothing_left \
		fail_nth_sem_msg_shm_get_enomem_nothing_left \
		kmemleak_nothing_unreferenced; do
		console_has "^rk_smoke: $t ok" || { say "not run: $t"; return 1; }
	done
}

# ---------------------------------------------------------------------

# Every Coccinelle rule against its .c/.res test (once, not per version).
step_cocci_tests() {
	"$HERE/backport.py" test-rules >"$LOGS/cocci-rules.log" 2>&1
}
check "cocci-rules-tests" step_cocci_tests
# The rk_ -> kernel translation's cases (translate.py).
check "translate-tests" eval '"$HERE/backport.py" test-translate >"$LOGS/translate.log" 2>&1'
# CI's time guard: .ci/run sets RK_CI_START (the run's start, seconds
# since the epoch) and RK_CI_LIMIT (its limit, seconds); RK_CI_TAIL is what
# the run still needs after this script (default 600 s: the self-checks
# after verify.sh and the CI's own overhead).  A version starts only if
# the previous one's time, with a tenth more, fits before the limit (6.1
# and 6.12 do about as much work: three kernels each, warm or cold alike);
# otherwise it and the versions after it are reported as skipped, not
# counted, with the command that runs them.  Without RK_CI_START (by hand)
# every version runs.
prev_took=0
vstart=
for v in $VERSIONS; do
	now=$(date +%s)
	[[ -n $vstart ]] && prev_took=$((now - vstart))
	if [[ -n ${RK_CI_START:-} ]] &&
	   ! rk_fits_budget "$now" "$RK_CI_START" "${RK_CI_LIMIT:-0}" \
		"${RK_CI_TAIL:-600}" "$prev_took"; then
		rest=${VERSIONS#*"$v"}
		say "SKIP Linux $v$rest: the version before took $prev_took s and CI has $((RK_CI_START + RK_CI_LIMIT - now)) s of its $RK_CI_LIMIT left (RK_CI_TAIL ${RK_CI_TAIL:-600} s): run kernel-backport/verify.sh --versions \"$v$rest\" by hand"
		break
	fi
	vstart=$now
	say "== Linux $v"
	if ! timed "$v extract" pristine "$v"; then
		check "$v/extract" false
		continue
	fi
	check "$v/generate" step_generate "$v" || continue
	check "$v/generate-from-tarball-same" step_tarball_same "$v"
	if ! check "$v/applies-to-pristine" step_apply_check "$v"; then
		continue
	fi
	check "$v/refuses-patched-tree" step_refuses_patched "$v"
	check "$v/refuses-unsupported-tree" step_refuses_unsupported "$v"
	check "$v/checkpatch-0-errors" step_checkpatch "$v"
	check "$v/kernel-doc-clean" step_kernel_doc "$v"
	check "$v/kernel-files-in-kernel-names" step_kernel_names "$v"
	if check "$v/W=1-lib-ipc-time-no-new-warnings" step_w1 "$v"; then
		check "$v/same-machine-code-as-core-through-compat" \
			step_same_code "$v"
		check "$v/sparse-lib-ipc-time-nothing-new" step_sparse "$v"
	fi
	[[ " $BISECT " == *" $v "* ]] &&
		check "$v/bisect-builds-after-each-patch" step_bisect "$v"
	check "$v/tiny-debug-build" step_tiny "$v" debug || continue
	[[ " $COMPARE " == *" $v "* ]] &&
		check "$v/fast-boot-unpatched-vs-patched-no-regression" \
			step_compare "$v"
	# A version in --boot boots three configs, each passing on its own; a
	# version only compared (6.12) boots its patched debug kernel, judged
	# against the comparison's unpatched results.
	if [[ " $BOOT " == *" $v "* ]]; then
		if check "$v/tiny-fast-build" step_tiny "$v" fast; then
			check "$v/fast-lockref-cmpxchg-built" step_lockref_cmpxchg_built "$v"
		fi
		check "$v/tiny-kcsan-build" step_tiny "$v" kcsan
		configs="debug fast kcsan"
	elif [[ " $COMPARE " == *" $v "* ]]; then
		configs=debug
	else
		continue
	fi
	for c in $configs; do
		[[ -s $(tiny_dir "$v" "$c")/arch/x86/boot/bzImage ]] || continue
		BOOT_LOG=
		check "$v/$c/boot-ends-by-itself" step_boot_run "$v" "$c"
		check "$v/$c/guest-sees-2-cpus" console_has '^RK-CPUS 2$'
		check "$v/$c/kunit-ridr" step_kunit_ridr
		if [[ " $BOOT " == *" $v "* ]]; then
			check "$v/$c/selftest-ipc-msgque" \
				console_has '^RK-RESULT msgque 0$'
			check "$v/$c/selftest-timers-posix_timers" \
				console_has '^RK-RESULT posix_timers 0$'
		else
			check "$v/$c/no-result-worse-than-unpatched-fast" \
				step_debug_vs_unpatched "$v" "$c"
		fi
		check "$v/$c/rk_smoke" console_has '^RK-RESULT rk_smoke 0$'
		check "$v/$c/no-splat-in-console" step_no_splat "$v" "$c"
		if [[ $c == debug ]]; then
			check "$v/debug/lockdep-on" step_lockdep_on
			[[ " $BOOT " == *" $v "* ]] &&
				check "$v/debug/kasan-kmemleak-fail-nth-checks-ran" \
					step_debug_checks_ran
		fi
		[[ $c == kcsan ]] &&
			check "$v/kcsan/kcsan-on-selftest-passed" step_kcsan_on
		grep -E 'rk_smoke: .*(passed|FAILED)|# ridr: |Totals' \
			"$BOOT_LOG" | sed "s/^/$v $c: /" >>"$SUMMARY"
	done
done

echo "$PASSED $FAILED" >"$RK/out/test/extra-kernel.counts"
say "kernel: $PASSED passed, $FAILED failed"
[[ $FAILED -eq 0 ]]
