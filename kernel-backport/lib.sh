# Shell functions shared by verify.sh and bench.sh (sourced, not run).
#
# The caller sets RK (the checkout), OUT (its out/kernel), and may set
# RK_PROG (the name in messages, default "verify").  This file sets HERE,
# CACHE (from $RK_KERNEL_CACHE, default /var/cache/ridr-kit) and TAG (from
# $RK_KERNEL_TAG: "-tag" or empty); rk_cache_init creates the cache
# directories and sets CCACHE_DIR (unless set) and MAKE (nice, -j$(nproc),
# CC="ccache gcc").
#
# Layout of $CACHE: src/linux-source-V (pristine, extracted once, never
# modified), trees/V-patched$TAG (the current series applied; rebuilt only
# when the series changes), build/<name>$TAG (build directories, kept warm;
# a tagged one starts as a copy of the untagged one), ccache/.

HERE=$RK/kernel-backport
CACHE=${RK_KERNEL_CACHE:-/var/cache/ridr-kit}
TAG=${RK_KERNEL_TAG:+-$RK_KERNEL_TAG}
RK_PROG=${RK_PROG:-verify}

rk_cache_init() {
	mkdir -p "$CACHE"/{src,trees,build,ccache}
	export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
	ccache -M 8G >/dev/null 2>&1
	MAKE=(nice -n 10 make -j"$(nproc)" CC="ccache gcc")
}

# Pristine tree of version $1, extracted once (atomically: into a
# temporary directory, renamed when complete).
pristine() {
	local v=$1 dst=$CACHE/src/linux-source-$1 tmp
	if [[ ! -e $dst/.rk-extracted ]]; then
		rm -rf "$dst" "$dst.tmp"
		tmp=$dst.tmp
		mkdir -p "$tmp"
		tar -xf "/usr/src/linux-source-$v.tar.xz" -C "$tmp" || return 1
		mv "$tmp/linux-source-$v" "$dst" && rmdir "$tmp" &&
			touch "$dst/.rk-extracted"
	fi
}

# The patched copy for the current series; rebuilt only when the series
# changes (the sha256 of its patches is the stamp), so build directories
# stay warm.  The Date: lines are left out of the stamp: they are the
# ridr-kit commit's date, so every commit would otherwise re-copy the tree
# and, since the copy gives the patched files new mtimes, rebuild most of
# every kernel (patch 4 touches include/linux/sched/signal.h).
series_stamp() {	# version -> the stamp of $OUT/version's patches
	cat "$OUT/$1/"0*.patch | grep -v '^Date: ' | sha256sum | cut -d' ' -f1
}
patched_tree() {
	local v=$1 src=$CACHE/src/linux-source-$1 dst=$CACHE/trees/$1-patched$TAG
	local sum p
	sum=$(series_stamp "$v")
	if [[ -e $dst/.rk-series && $(cat "$dst/.rk-series") == "$sum" ]]; then
		return 0
	fi
	rm -rf "$dst" "$dst.tmp"
	cp -a "$src" "$dst.tmp" || return 1
	rm -f "$dst.tmp/.rk-extracted"
	while read -r p; do
		(cd "$dst.tmp" && git apply "$OUT/$v/$p") || {
			echo "$RK_PROG: $p does not apply in sequence" >&2
			return 1
		}
	done <"$OUT/$v/series"
	echo "$sum" >"$dst.tmp/.rk-series"
	mv "$dst.tmp" "$dst"
}

# Generate the current series for version $1 into $OUT/$1 (0001-*.patch,
# series, ridr-kit-$1.patch); backport.py's stderr goes to $2.
generate_series() {
	"$HERE/backport.py" generate --tree "$CACHE/src/linux-source-$1" \
		--out "$OUT/$1" 2>>"$2"
}

# rk_prepare_patched VERSION PREPARE LOG-PREFIX: with PREPARE=1, install
# what is missing, extract the tarball, generate the series into
# $OUT/VERSION and apply it to the patched tree (logs LOG-PREFIX-generate.log
# and -apply.log); then, either way, check that the pristine tree is
# extracted and the patched tree holds the current series (PREPARE=0: a
# verify.sh run has just made them).  For compare_boot.sh and
# kcsan_strict.sh; messages through the caller's say().
rk_prepare_patched() {
	local v=$1 src=$CACHE/src/linux-source-$1 pat=$CACHE/trees/$1-patched$TAG
	if [[ $2 -eq 1 ]]; then
		"$RK/scripts/setup.sh" --kernel >&2 ||
			{ say "scripts/setup.sh --kernel failed"; return 1; }
		timed "$v extract" pristine "$v" || { say "extract $v failed"; return 1; }
		generate_series "$v" "$3-generate.log" ||
			{ say "generating the $v series failed (see $3-generate.log)"; return 1; }
		patched_tree "$v" >>"$3-apply.log" 2>&1 ||
			{ say "applying the $v series failed (see $3-apply.log)"; return 1; }
	fi
	[[ -e $src/.rk-extracted ]] || { say "no extracted $src"; return 1; }
	[[ -e $pat/.rk-series && $(cat "$pat/.rk-series") == "$(series_stamp "$v")" ]] ||
		{ say "no patched tree of the current series at $pat"; return 1; }
}

# seed_build DIR: a tagged build directory starts as a copy of the
# untagged one (timestamps kept), so make rebuilds only what differs.
seed_build() {
	[[ -n $TAG && ! -d $1 && -d ${1%"$TAG"} ]] || return 0
	cp -a "${1%"$TAG"}" "$1"
}

# config_has TREE CONFIG LINE: the fragment line (CONFIG_X=v or "# CONFIG_X
# is not set") holds in CONFIG.  A symbol this kernel does not define is
# skipped with a note (6.12 replaced BASE_FULL by BASE_SMALL: the fragment
# names both); any other mismatch means Kconfig dropped it: fail.
config_has() {
	local t=$1 c=$2 line=$3 sym
	if [[ $line =~ ^CONFIG_([A-Za-z0-9_]+)= ]]; then
		sym=${BASH_REMATCH[1]}
		grep -qx "$line" "$c" && return 0
	elif [[ $line =~ ^#\ CONFIG_([A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
		sym=${BASH_REMATCH[1]}
		# Not =y (6.1's BASE_SMALL is an int derived from BASE_FULL: 0).
		grep -q "^CONFIG_$sym=y" "$c" || return 0
	else
		return 0
	fi
	if ! grep -rqE "^(menu)?config $sym\$" --include='Kconfig*' "$t"; then
		echo "$RK_PROG: $sym does not exist in this kernel: skipped" >&2
		return 0
	fi
	echo "$RK_PROG: '$line' did not survive olddefconfig" >&2
	return 1
}

tiny_build() {	# tree build-dir log fragment...
	local t=$1 b=$2 log=$3 cfg line frag
	shift 3
	seed_build "$b"
	mkdir -p "$b"
	cfg=$(mktemp)
	# Configure in a scratch build dir, install the .config only if it
	# changed, so a rerun rebuilds nothing it does not have to.
	make -C "$t" -s O="$b.cfg" tinyconfig >/dev/null || return 1
	# merge_config.sh writes its temporaries into the current directory:
	# run it in the scratch dir (the fragments are absolute paths).
	(cd "$b.cfg" && "$t/scripts/kconfig/merge_config.sh" -m -O . .config \
		"$@" >/dev/null) || return 1
	make -C "$t" -s O="$b.cfg" olddefconfig >/dev/null || return 1
	for frag in "$@"; do
		while read -r line; do
			config_has "$t" "$b.cfg/.config" "$line" || return 1
		done <"$frag"
	done
	if ! cmp -s "$b.cfg/.config" "$b/.config"; then
		cp "$b.cfg/.config" "$b/.config"
	fi
	rm -rf "$b.cfg" "$cfg"
	"${MAKE[@]}" -C "$t" O="$b" olddefconfig >/dev/null &&
		"${MAKE[@]}" -C "$t" O="$b" bzImage >"$log" 2>&1
}

# timed NAME CMD...: run CMD, say (the caller's say()) its wall-clock time.
timed() {
	local name=$1 t0 rc
	shift
	t0=$(date +%s)
	"$@"
	rc=$?
	say "time $name $(($(date +%s) - t0)) s (exit $rc)"
	return $rc
}

# rk_fits_budget NOW START LIMIT TAIL PREV: whether a part of a run that
# should take about PREV seconds (the part before it took that long and
# does as much work), started at NOW, ends with a tenth more than PREV to
# spare before START + LIMIT - TAIL (TAIL: what the run still does after
# it).  PREV 0 (nothing measured yet) or no LIMIT always fits.  Pure
# arithmetic on its arguments, so bench.sh --self-check tests it.
rk_fits_budget() {
	local now=$1 start=$2 limit=$3 tail=$4 prev=$5
	[[ -z $limit || $limit -eq 0 || $prev -eq 0 ]] && return 0
	((now + prev + prev / 10 <= start + limit - tail))
}

# rk_initramfs TREE OUT.cpio: busybox, vm/init as /init, and in /tests the
# tree's own selftests (ipc/msgque, timers/posix_timers, static) and
# vm/rk_smoke.c.
rk_initramfs() {
	local t=$1 root b
	root=$(mktemp -d)
	mkdir -p "$root"/{bin,tests,etc,proc,sys,dev,tmp}
	cp /bin/busybox "$root/bin/busybox" || return 1
	cp "$HERE/vm/init" "$root/init" && chmod +x "$root/init"
	b=(gcc -static -O2 -pthread -I"$t/tools/testing/selftests")
	"${b[@]}" -o "$root/tests/msgque" \
		"$t/tools/testing/selftests/ipc/msgque.c" &&
	"${b[@]}" -o "$root/tests/posix_timers" \
		"$t/tools/testing/selftests/timers/posix_timers.c" -lrt &&
	"${b[@]}" -Wall -Wextra -o "$root/tests/rk_smoke" "$HERE/vm/rk_smoke.c" ||
		{ rm -rf "$root"; return 1; }
	(cd "$root" && find . | cpio -o -H newc --quiet) >"$2"
	rm -rf "$root"
}

# rk_boot BZIMAGE INITRD CONSOLE-LOG [SECONDS]: qemu with 2 vCPUs (one
# per socket: the guest sees both), 512 MB, under a hard timeout (default
# 300 s); the guest ends it with reboot -f (-no-reboot).
rk_boot() {
	timeout --kill-after=10 "${4:-300}" qemu-system-x86_64 \
		-accel tcg,thread=multi -smp 2,sockets=2,cores=1,threads=1 \
		-m 512 -nographic -no-reboot -kernel "$1" -initrd "$2" \
		-append "console=ttyS0 panic=-1 oops=panic loglevel=7" \
		</dev/null >"$3" 2>&1
}

# What a test console must not contain.
RK_SPLATS='WARNING:|BUG:|INFO: (possible|inconsistent|suspicious)|suspicious RCU usage|possible circular locking|possible recursive locking|inconsistent lock state|sleeping function called from invalid context|ODEBUG|Kernel panic|Oops|Call Trace|general protection'

# rk_results CONSOLE-LOG: one "name<TAB>status" line per test result in a
# boot's console log (\r removed), sorted; status is ok, FAIL[ detail] or
# SKIP.  The one reader of result lines: verify.sh's KUnit check and
# compare_boot.sh's table both use it, and compare_boot.sh --self-check
# tests it on made-up logs.
#   - each test program's exit status (vm/init: "RK-RESULT prog status")
#     as "exit prog";
#   - kselftest lines "ok N name" / "not ok N name" (userspace: no printk
#     timestamp), after "RK-BEGIN prog", as "prog: name";
#   - rk_smoke's "rk_smoke: <check> ok|FAILED" as "rk_smoke: <check>";
#   - KUnit's KTAP, printed by the kernel (a "[ seconds]" timestamp,
#     CONFIG_PRINTK_TIME in both vm configs): a suite's result line
#     "ok N suite" (no indent) as "kunit: suite", each case's line
#     "    ok N case" (KUNIT_SUBTEST_INDENT: 4 spaces, after the suite's
#     "    # Subtest: suite" header) as "kunit: suite.case"; "# SKIP"
#     after the name is SKIP.  Parameterised cases' own sub-subtests
#     (8 spaces) are not listed: their case line carries their result.
rk_results() {
	awk '
	function status(ok, line) {
		if (line ~ / # SKIP/) return "SKIP"
		return ok ? "ok" : "FAIL"
	}
	function name(line) {
		sub(/ # SKIP.*$/, "", line)
		sub(/^(not )?ok [0-9]+ /, "", line)
		return line
	}
	/^RK-BEGIN / { prog = $2 }
	/^RK-RESULT / { print "exit " $2 "\t" ($3 == 0 ? "ok" : "FAIL " $3) }
	/^(not )?ok [0-9]+ / {
		print prog ": " name($0) "\t" status($1 == "ok", $0) }
	/^rk_smoke: [^ ]+ (ok|FAILED)/ {
		print "rk_smoke: " $2 "\t" ($3 == "ok" ? "ok" : "FAIL") }
	/^\[ *[0-9.]+\] / {
		line = $0; sub(/^\[ *[0-9.]+\] /, "", line)
		if (line ~ /^    # Subtest: /) {
			suite = line; sub(/^    # Subtest: /, "", suite)
		} else if (line ~ /^(not )?ok [0-9]+ [^ ]/) {
			print "kunit: " name(line) "\t" status(line ~ /^ok/, line)
		} else if (line ~ /^    (not )?ok [0-9]+ [^ ]/ && suite != "") {
			sub(/^    /, "", line)
			print "kunit: " suite "." name(line) "\t" \
				status(line ~ /^ok/, line)
		}
	}
	' "$1" | LC_ALL=C sort
}

# rk_kunit_passed RESULTS-TSV SUITE: the suite's line says ok, it has at
# least one case, and every case passed (none failed, none skipped).
rk_kunit_passed() {
	awk -F'\t' -v s="kunit: $2" '
	$1 == s { suite = $2 }
	index($1, s ".") == 1 { n++; if ($2 != "ok") bad++ }
	END { exit !(suite == "ok" && n > 0 && bad == 0) }
	' "$1"
}

# rk_compare_table BEFORE.tsv AFTER.tsv: both rk_results lists side by
# side, every name of either ("missing" where a side has none), a result
# ok before and anything else after marked "  <- REGRESSION".
rk_compare_table() {
	printf '%-60s %-10s %-10s\n' "check" "unpatched" "patched"
	join -t $'\t' -a1 -a2 -e missing -o 0,1.2,2.2 "$1" "$2" |
		awk -F'\t' '{ printf "%-60s %-10s %-10s%s\n", $1, $2, $3,
			($2 == "ok" && $3 != "ok") ? "  <- REGRESSION" : "" }'
}

# rk_best_of FIRST.tsv SECOND.tsv: the results of two boots of the same
# kernel and initramfs (rk_results' format) merged: a result is "ok" when
# either boot passed it, else the first boot's status (the second's when
# the first lacks it).  Why: a kselftest whose verdict hangs on timing
# fails now and then where the patch changes nothing it depends on.
# 6.12's timers/posix_timers "check signal distribution" fails when a
# signal of a process CPU-time timer is handled by another thread than
# the one spinning; the other is the main thread, which the test assumes
# asleep in pthread_join() after the spinner's usleep(10000): a margin,
# not a guarantee, under TCG on a busy host least of all.  A patched
# kernel with results worse than unpatched boots again (verify.sh,
# compare_boot.sh), up to RK_BOOTS boots in all, and a result counts as
# a regression only when it is worse in every boot: what the patch
# breaks fails in each (docs/kernel.md has the flake's measured rate).
RK_BOOTS=${RK_BOOTS:-3}
rk_best_of() {
	join -t $'\t' -a1 -a2 -e missing -o 0,1.2,2.2 "$1" "$2" |
		awk -F'\t' '{
			s = $2
			if ($3 == "ok" || s == "missing") s = $3
			print $1 "\t" s }'
}

# rk_retry_boots UNPATCHED.tsv RESULTS.tsv BOOT-FN [ARG...]: while
# RESULTS.tsv (the patched kernel's results, boot 1's to start with) has
# a result worse than UNPATCHED.tsv, and fewer than RK_BOOTS boots ran,
# boot once more with "BOOT-FN N ARG..." (N = 2, 3, ...: it boots, checks
# the boot ended by itself with no splat, returns non-zero if not, and
# writes that boot's results to stdout) and make RESULTS.tsv the best of
# the boots so far (rk_best_of).  Returns 0 when nothing is worse, 1 if
# something still is or a boot failed; RK_BOOTS_USED is the boots that
# ran; each round's worse results go to the caller's say().
rk_retry_boots() {
	local u=$1 r=$2 fn=$3 n=1 w line
	shift 3
	RK_BOOTS_USED=1
	while :; do
		w=$(rk_compare_table "$u" "$r" | grep ' <- REGRESSION$')
		[[ -z $w ]] && return 0
		while IFS= read -r line; do
			say "worse in boot$( ((n > 1)) && echo "s 1-$n" || echo " 1"): $line"
		done <<<"$w"
		((n < RK_BOOTS)) || return 1
		n=$((n + 1))
		say "boot $n of at most $RK_BOOTS: a regression must be worse in every boot"
		RK_BOOTS_USED=$n
		"$fn" "$n" "$@" >"$r.boot$n" || return 1
		rk_best_of "$r" "$r.boot$n" >"$r.tmp" && mv "$r.tmp" "$r"
	done
}
