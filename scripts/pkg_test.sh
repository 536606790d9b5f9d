#!/usr/bin/env bash
# shellcheck disable=SC2046 # pkg-config output splits into words on purpose
# Packaging checks that need a real install or a second Bazel workspace,
# so they run outside Bazel's sandbox (scripts/test.sh calls this after
# the Bazel runs).  Each check counts as one test; the result goes to
# out/test/extra-pkg.counts as "PASSED FAILED", which test.sh adds to its
# final count.  Logs: out/test/pkg/<check>.log.
#
#  install_staged    scripts/install.sh --prefix P with DESTDIR: both
#                    libraries' layout, soname symlinks, .pc files naming P
#                    (not DESTDIR), manifest == the files installed;
#                    --libdir; bad arguments refused
#  uninstall         --uninstall removes exactly the manifest's files and
#                    ridr-kit's own directories, leaves foreign files
#  debian_package    a DESTDIR tree (--prefix /usr, multiarch libdir) is
#                    packed by dpkg-deb into a .deb whose contents are the
#                    manifest; relative symlinks, root-owned, 0644/0755
#  pkgconfig_c       out-of-tree C program using ridr + lockref built with
#                    only cc $(pkg-config --cflags --libs lockref), run
#  pkgconfig_cxx     the same in C++ (c++ $(pkg-config ...))
#  lgpl_only         a ridr-only program built with pkg-config ridr, shared
#                    and static, runs; nm/readelf find no GPL-2.0-only
#                    object in it nor in libridr.so/.a, and do find lockref
#                    in liblockref and in a program linking both
#  headers_alone     each installed header compiles on its own as C11,
#                    gnu11, C++11, 14, 17, 20 and 23 (-pedantic in C++)
#                    with -Wall -Wextra -Werror
#  static_link       the C program linked against libridr.a + liblockref.a
#  symbols           nm -D of each installed .so: exactly its API; the
#                    archives define no other global
#  bazel_consumer    examples/bazel_consumer (own WORKSPACE, local_repository
#                    to this repo) builds and runs @ridr_kit//ridr users
#  bazel_consumer_split  examples/bazel_consumer_split: an LGPL-only
#                    program from @ridr_kit//ridr (checked free of lockref)
#                    and one using both libraries
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=$ROOT/out/test
LOGS=$OUT/pkg
mkdir -p "$LOGS"
rm -f "$OUT/extra-pkg.counts"
TMP=$(mktemp -d /tmp/ridr-pkg-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0

run_check() {
	local name=$1 rc
	shift
	# Not in an if/&&/|| context: there bash ignores set -e inside the
	# check and only its last command would count.
	("$@") >"$LOGS/$name.log" 2>&1
	rc=$?
	if ((rc == 0)); then
		passed=$((passed + 1))
		echo "pkg_test: PASS $name" >&2
	else
		failed=$((failed + 1))
		echo "pkg_test: FAIL $name (log: out/test/pkg/$name.log)" >&2
		tail -n 20 "$LOGS/$name.log" | sed 's/^/    /' >&2
	fi
}

version=$(tr -d ' \n' <pkg/VERSION)
major=${version%%.*}
STAGE=$TMP/destdir
PREFIX=$TMP/prefix
GPL_FILES=(lockref/lockref.c lockref/lockref.h)

# The files under a staged root, as final paths, sorted.
staged_files() {
	(cd "$1" && find . \( -type f -o -type l \) -printf '/%P\n' | sort)
}

check_install_staged() {
	set -ex
	DESTDIR=$STAGE scripts/install.sh --prefix /opt/ridr-kit-test
	local P=/opt/ridr-kit-test
	local L=$STAGE$P/lib I=$STAGE$P/include/ridr-kit lib
	for lib in ridr lockref; do
		test -f "$L/lib$lib.so.$version" -a ! -L "$L/lib$lib.so.$version"
		test "$(readlink "$L/lib$lib.so.$major")" = "lib$lib.so.$version"
		test "$(readlink "$L/lib$lib.so")" = "lib$lib.so.$major"
		test "$(objdump -p "$L/lib$lib.so.$version" | awk '$1 == "SONAME" { print $2 }')" = "lib$lib.so.$major"
		grep -qx "prefix=$P" "$L/pkgconfig/$lib.pc"
		if grep -q "$STAGE" "$L/pkgconfig/$lib.pc"; then exit 1; fi
		test "$(PKG_CONFIG_PATH=$L/pkgconfig pkg-config --modversion $lib)" = "$version"
	done
	test "$(ar t "$L/libridr.a" | sort | tr '\n' ' ')" = \
		"bucket.pic.o handle.pic.o ida.pic.o mem.pic.o read.pic.o user.pic.o write.pic.o "
	test "$(ar t "$L/liblockref.a")" = lockref.pic.o
	# liblockref.so takes the runtime from libridr.so, and says so.
	objdump -p "$L/liblockref.so.$version" | grep "NEEDED *libridr.so.$major" >/dev/null
	if readelf -d "$L/liblockref.so.$version" "$L/libridr.so.$version" | grep -E 'RPATH|RUNPATH' >/dev/null; then exit 1; fi
	PKG_CONFIG_PATH=$L/pkgconfig pkg-config --libs lockref | grep -- '-llockref.*-lridr'
	if PKG_CONFIG_PATH=$L/pkgconfig pkg-config --libs ridr | grep lockref >/dev/null; then exit 1; fi
	for h in ridr/ridr.h lockref/lockref.h compat/compat.h compat/user.h; do
		cmp "$I/$h" "$h"
	done
	cmp "$STAGE$P/share/doc/ridr-kit/copyright" pkg/copyright
	# Nothing outside the prefix; the manifest lists exactly what is there.
	test "$(ls "$STAGE")" = opt
	diff <(sort "$STAGE$P/share/ridr-kit/manifest") <(staged_files "$STAGE")
	# --libdir (a Debian-style multiarch layout).
	DESTDIR=$STAGE-libdir scripts/install.sh --no-build --prefix /usr \
		--libdir /usr/lib/x86_64-linux-gnu
	L=$STAGE-libdir/usr/lib/x86_64-linux-gnu
	test "$(readlink "$L/libridr.so.$major")" = "libridr.so.$version"
	test "$(readlink "$L/liblockref.so.$major")" = "liblockref.so.$version"
	grep -qx 'libdir=/usr/lib/x86_64-linux-gnu' "$L/pkgconfig/ridr.pc"
	grep -qx 'libdir=/usr/lib/x86_64-linux-gnu' "$L/pkgconfig/lockref.pc"
	test -f "$STAGE-libdir/usr/include/ridr-kit/ridr/ridr.h"
	# Bad arguments are refused.
	if scripts/install.sh --no-build --prefix relative/path; then exit 1; fi
	if scripts/install.sh --no-build --bogus; then exit 1; fi
	echo ok
}

check_uninstall() {
	set -ex
	local S=$TMP/uninst P=/opt/rk L
	DESTDIR=$S scripts/install.sh --no-build --prefix $P
	L=$S$P/lib
	# Foreign files in the directories ridr-kit shares with others.
	echo other >"$L/libother.so"
	echo other >"$L/pkgconfig/other.pc"
	echo other >"$S$P/include/other.h"
	DESTDIR=$S scripts/install.sh --uninstall --prefix $P
	test "$(staged_files "$S" | tr '\n' ' ')" = "$P/include/other.h $P/lib/libother.so $P/lib/pkgconfig/other.pc "
	test ! -e "$S$P/include/ridr-kit" -a ! -e "$S$P/share/ridr-kit" -a ! -e "$S$P/share/doc/ridr-kit"
	# Nothing left to uninstall: an error, not a silent success.
	if DESTDIR=$S scripts/install.sh --uninstall --prefix $P; then exit 1; fi
	# A manifest naming a path outside the prefix is refused untouched.
	DESTDIR=$S scripts/install.sh --no-build --prefix $P
	echo /etc/passwd >>"$S$P/share/ridr-kit/manifest"
	if DESTDIR=$S scripts/install.sh --uninstall --prefix $P; then exit 1; fi
	echo ok
}

check_debian_package() {
	set -ex
	local S=$TMP/deb/root
	DESTDIR=$S scripts/install.sh --no-build --prefix /usr \
		--libdir /usr/lib/x86_64-linux-gnu
	# Symlinks are relative (nothing of DESTDIR baked in), modes 0644
	# or 0755, no file outside /usr.
	test -z "$(find "$S" -type l -lname '*/*')"
	test -z "$(find "$S" -type f ! -perm 0644 ! -perm 0755)"
	test "$(ls "$S")" = usr
	mkdir "$S/DEBIAN"
	cat >"$S/DEBIAN/control" <<CTL
Package: ridr-kit-staging-test
Version: $version
Architecture: $(dpkg --print-architecture)
Maintainer: ridr-kit <ridr-kit@localhost>
Depends: liburcu8
Section: libs
Priority: optional
Description: ridr-kit staged by scripts/install.sh (packaging test)
 Built by scripts/pkg_test.sh; never installed.
CTL
	dpkg-deb --root-owner-group --build "$S" "$TMP/deb/ridr-kit.deb"
	dpkg-deb -I "$TMP/deb/ridr-kit.deb"
	# The package holds exactly the manifest's files, owned by root.
	dpkg-deb -c "$TMP/deb/ridr-kit.deb" | awk '$1 !~ /^d/ { print $6 }' |
		sed 's|^\.||' | sort >"$TMP/deb/contents"
	diff <(sort "$S/usr/share/ridr-kit/manifest") "$TMP/deb/contents"
	test -z "$(dpkg-deb -c "$TMP/deb/ridr-kit.deb" | awk '$2 != "root/root"')"
	echo ok
}

# The real (unstaged) install the consumer checks use.
install_prefix() {
	scripts/install.sh --no-build --prefix "$PREFIX" >"$LOGS/install_prefix.log" 2>&1
}

pc() { PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config "$@"; }

check_pkgconfig_c() {
	set -ex
	cd "$TMP"
	cc "$ROOT/tests/pkg/consumer.c" -o consumer_c $(pc --cflags --libs lockref)
	LD_LIBRARY_PATH=$PREFIX/lib ldd ./consumer_c | grep "libridr.so.$major => $PREFIX/lib/"
	LD_LIBRARY_PATH=$PREFIX/lib ldd ./consumer_c | grep "liblockref.so.$major => $PREFIX/lib/"
	LD_LIBRARY_PATH=$PREFIX/lib ./consumer_c
}

check_pkgconfig_cxx() {
	set -ex
	cd "$TMP"
	c++ "$ROOT/tests/pkg/consumer.cc" -o consumer_cxx $(pc --cflags --libs lockref)
	LD_LIBRARY_PATH=$PREFIX/lib ./consumer_cxx
}

check_lgpl_only() {
	set -ex
	cd "$TMP"
	local L=$PREFIX/lib chk=$ROOT/tests/pkg/check_licence.sh gpl
	gpl=("${GPL_FILES[@]/#/$ROOT/}")
	# Shared: built with pkg-config ridr alone; needs libridr only.
	cc "$ROOT/tests/pkg/ridr_consumer.c" -o ridr_only $(pc --cflags --libs ridr)
	LD_LIBRARY_PATH=$L ldd ./ridr_only | tee ldd.txt
	grep -q "libridr.so.$major => $L/" ldd.txt
	if grep -q liblockref ldd.txt; then exit 1; fi
	LD_LIBRARY_PATH=$L ./ridr_only
	# Static: every object of the program is in the binary.
	cc "$ROOT/tests/pkg/ridr_consumer.c" -o ridr_only_static $(pc --cflags ridr) \
		"$L/libridr.a" $(pc --libs-only-L --libs-only-l liburcu-memb) -lpthread
	./ridr_only_static
	# The installed libraries are built with -g: the compile-unit check
	# has something to read, so the proof below does not rest on symbol
	# names alone.
	readelf --debug-dump=info "$L/libridr.a" >libridr.dwarf
	grep -q 'DW_AT_name.*ridr/write\.c' libridr.dwarf
	"$chk" clean ./ridr_only ./ridr_only_static "$L/libridr.so.$version" "$L/libridr.a" -- "${gpl[@]}"
	# The same check sees lockref where it is: it is not blind.
	cc "$ROOT/tests/pkg/consumer.c" -o both_static $(pc --cflags lockref) \
		"$L/liblockref.a" "$L/libridr.a" $(pc --libs-only-L --libs-only-l liburcu-memb) -lpthread
	./both_static
	"$chk" contains ./both_static "$L/liblockref.so.$version" "$L/liblockref.a" -- "${gpl[@]}"
	if "$chk" clean ./both_static -- "${gpl[@]}"; then exit 1; fi
	# And the GPL sources are exactly the ones named: no other library
	# source is GPL-2.0-only.
	test "$(cd "$ROOT" && grep -rl 'SPDX-License-Identifier: GPL-2.0-only' compat ridr lockref | sort | tr '\n' ' ')" = "${GPL_FILES[*]} "
}

check_headers_alone() {
	set -ex
	cd "$TMP"
	local h std
	for h in ridr/ridr.h lockref/lockref.h compat/compat.h; do
		printf '#include "%s"\n' "$h" >alone.c
		cp alone.c alone.cc
		for std in c11 gnu11; do
			cc -std=$std -Wall -Wextra -Werror $(pc --cflags ridr) -c alone.c -o alone.o
		done
		for std in c++11 c++14 c++17 c++20 c++2b; do
			c++ -std=$std -Wall -Wextra -pedantic -Werror $(pc --cflags ridr) -c alone.cc -o alone.o
		done
		echo "$h: ok"
	done
}

check_static_link() {
	set -ex
	cd "$TMP"
	cc "$ROOT/tests/pkg/consumer.c" -o consumer_static $(pc --cflags lockref) \
		"$PREFIX/lib/liblockref.a" "$PREFIX/lib/libridr.a" \
		$(pc --libs-only-L --libs-only-l liburcu-memb) -lpthread
	if objdump -p consumer_static | grep -E 'NEEDED.*lib(ridr|lockref)' >/dev/null; then exit 1; fi
	./consumer_static
}

check_symbols() {
	set -ex
	local L=$PREFIX/lib I=$PREFIX/include/ridr-kit lib
	PKG_VERSION=$version tests/pkg/check_symbols.sh "$L/libridr.so.$version" \
		"RIDR_$major" "$I/ridr/ridr.h" "$I/compat/compat.h" "$I/compat/user.h"
	PKG_VERSION=$version tests/pkg/check_symbols.sh "$L/liblockref.so.$version" \
		"LOCKREF_$major" "$I/lockref/lockref.h"
	# An archive cannot hide symbols from a static link, so its objects
	# must define no default-visibility global beyond what the shared
	# library exports; the hidden ones (functions shared between ridr's
	# source files) must stay in the library's own ridr_ namespace.
	for lib in ridr lockref; do
		readelf -sW "$L/lib$lib.a" |
			awk '$5 == "GLOBAL" && $7 != "UND" && $6 == "HIDDEN" { print $8 }' |
			sort -u >"$TMP/a.hidden"
		if grep -v '^ridr_' "$TMP/a.hidden"; then
			echo "lib$lib.a: hidden globals outside ridr_*"
			exit 1
		fi
		readelf -sW "$L/lib$lib.a" |
			awk '$5 == "GLOBAL" && $7 != "UND" && $6 == "DEFAULT" { print $8 }' |
			sort -u >"$TMP/a.syms"
		nm -D --defined-only "$L/lib$lib.so.$version" | awk '{ print $3 }' | sed 's/@.*//' | sort -u >"$TMP/so.syms"
		test -s "$TMP/a.syms"
		extra=$(comm -23 "$TMP/a.syms" "$TMP/so.syms")
		if [[ -n $extra ]]; then
			echo "lib$lib.a defines globals lib$lib.so does not export:" "$extra"
			exit 1
		fi
	done
}

bazel_workspace_test() {
	cd "$1"
	# --batch: no server left behind; no convenience symlinks in the
	# source tree (this repository's own //... must not see them).
	bazel --batch test --symlink_prefix=/ --test_output=errors //...
}

check_bazel_consumer() {
	set -ex
	bazel_workspace_test examples/bazel_consumer
	bazel --batch run --symlink_prefix=/ //:sessions
}

check_bazel_consumer_split() {
	set -ex
	bazel_workspace_test examples/bazel_consumer_split
}

run_check install_staged check_install_staged
run_check uninstall check_uninstall
run_check debian_package check_debian_package
if install_prefix; then
	run_check pkgconfig_c check_pkgconfig_c
	run_check pkgconfig_cxx check_pkgconfig_cxx
	run_check lgpl_only check_lgpl_only
	run_check headers_alone check_headers_alone
	run_check static_link check_static_link
	run_check symbols check_symbols
else
	echo "pkg_test: FAIL install into $PREFIX (log: out/test/pkg/install_prefix.log)" >&2
	failed=$((failed + 6))
fi
run_check bazel_consumer check_bazel_consumer
run_check bazel_consumer_split check_bazel_consumer_split

echo "$passed $failed" >"$OUT/extra-pkg.counts"
echo "pkg_test: $passed passed, $failed failed" >&2
((failed == 0))
