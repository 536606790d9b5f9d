#!/usr/bin/env bash
# shellcheck disable=SC2046 # pkg-config output splits into words on purpose
# Packaging checks that need a real install or a second Bazel workspace,
# so they run outside Bazel's sandbox (scripts/test.sh calls this after
# the Bazel runs).  Each check counts as one test; the result goes to
# out/test/extra-pkg.counts as "PASSED FAILED", which test.sh adds to its
# final count.  Logs: out/test/pkg/<check>.log.
#
#  install_staged    scripts/install.sh --prefix P with DESTDIR: layout,
#                    soname symlinks, ridr.pc naming P (not DESTDIR);
#                    --libdir; bad arguments refused
#  pkgconfig_c       out-of-tree C program built with only
#                    cc $(pkg-config --cflags --libs ridr), run
#  pkgconfig_cxx     the same in C++ (c++ $(pkg-config ...))
#  headers_alone     each installed header compiles on its own as C11,
#                    gnu11, C++11 and C++17 with -Wall -Wextra -Werror
#  static_link       the C program linked against libridr.a, run
#  symbols           nm -D of the installed libridr.so: exactly the API;
#                    libridr.a defines no other global
#  bazel_consumer    examples/bazel_consumer (own WORKSPACE, local_repository
#                    to this repo) builds and runs @ridr_kit//ridr users
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

check_install_staged() {
	set -ex
	DESTDIR=$STAGE scripts/install.sh --prefix /opt/ridr-kit-test
	local L=$STAGE/opt/ridr-kit-test/lib I=$STAGE/opt/ridr-kit-test/include/ridr-kit
	test -f "$L/libridr.so.$version" -a ! -L "$L/libridr.so.$version"
	test "$(readlink "$L/libridr.so.$major")" = "libridr.so.$version"
	test "$(readlink "$L/libridr.so")" = "libridr.so.$major"
	test "$(objdump -p "$L/libridr.so.$version" | awk '$1 == "SONAME" { print $2 }')" = "libridr.so.$major"
	test "$(ar t "$L/libridr.a" | wc -l)" -eq 3
	for h in ridr/ridr.h lockref/lockref.h compat/compat.h compat/user.h; do
		cmp "$I/$h" "$h"
	done
	grep -qx 'prefix=/opt/ridr-kit-test' "$L/pkgconfig/ridr.pc"
	if grep -q "$STAGE" "$L/pkgconfig/ridr.pc"; then exit 1; fi
	test "$(PKG_CONFIG_PATH=$L/pkgconfig pkg-config --modversion ridr)" = "$version"
	# Nothing outside the prefix.
	test "$(ls "$STAGE")" = opt
	# --libdir (a Debian-style multiarch layout).
	DESTDIR=$STAGE-libdir scripts/install.sh --no-build --prefix /usr \
		--libdir /usr/lib/x86_64-linux-gnu
	L=$STAGE-libdir/usr/lib/x86_64-linux-gnu
	test "$(readlink "$L/libridr.so.$major")" = "libridr.so.$version"
	grep -qx 'libdir=/usr/lib/x86_64-linux-gnu' "$L/pkgconfig/ridr.pc"
	test -f "$STAGE-libdir/usr/include/ridr-kit/ridr/ridr.h"
	# Bad arguments are refused.
	if scripts/install.sh --no-build --prefix relative/path; then exit 1; fi
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
	cc "$ROOT/tests/pkg/consumer.c" -o consumer_c $(pc --cflags --libs ridr)
	LD_LIBRARY_PATH=$PREFIX/lib ldd ./consumer_c | grep "libridr.so.$major => $PREFIX/lib/"
	LD_LIBRARY_PATH=$PREFIX/lib ./consumer_c
}

check_pkgconfig_cxx() {
	set -ex
	cd "$TMP"
	c++ "$ROOT/tests/pkg/consumer.cc" -o consumer_cxx $(pc --cflags --libs ridr)
	LD_LIBRARY_PATH=$PREFIX/lib ./consumer_cxx
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
		for std in c++11 c++17; do
			c++ -std=$std -Wall -Wextra -Werror $(pc --cflags ridr) -c alone.cc -o alone.o
		done
		echo "$h: ok"
	done
}

check_static_link() {
	set -ex
	cd "$TMP"
	cc "$ROOT/tests/pkg/consumer.c" -o consumer_static $(pc --cflags ridr) \
		"$PREFIX/lib/libridr.a" $(pc --libs-only-L --libs-only-l liburcu-memb) -lpthread
	if objdump -p consumer_static | grep -q 'NEEDED.*libridr'; then exit 1; fi
	./consumer_static
}

check_symbols() {
	set -ex
	local L=$PREFIX/lib
	PKG_VERSION=$version tests/pkg/check_symbols.sh "$L/libridr.so.$version" \
		"$PREFIX"/include/ridr-kit/*/*.h
	# libridr.a cannot hide symbols, so its objects must define no
	# global beyond what the shared library exports.
	nm -g --defined-only "$L/libridr.a" | awk 'NF == 3 { print $3 }' | sort -u >"$TMP/a.syms"
	nm -D --defined-only "$L/libridr.so.$version" | awk '{ print $3 }' | sed 's/@.*//' | sort -u >"$TMP/so.syms"
	test -s "$TMP/a.syms"
	extra=$(comm -23 "$TMP/a.syms" "$TMP/so.syms")
	if [[ -n $extra ]]; then
		echo "libridr.a defines globals libridr.so does not export:" "$extra"
		exit 1
	fi
}

check_bazel_consumer() {
	set -ex
	cd examples/bazel_consumer
	# --batch: no server left behind; no convenience symlinks in the
	# source tree (this repository's own //... must not see them).
	bazel --batch test --symlink_prefix=/ --test_output=errors //...
	bazel --batch run --symlink_prefix=/ //:sessions
}

run_check install_staged check_install_staged
if install_prefix; then
	run_check pkgconfig_c check_pkgconfig_c
	run_check pkgconfig_cxx check_pkgconfig_cxx
	run_check headers_alone check_headers_alone
	run_check static_link check_static_link
	run_check symbols check_symbols
else
	echo "pkg_test: FAIL install into $PREFIX (log: out/test/pkg/install_prefix.log)" >&2
	failed=$((failed + 5))
fi
run_check bazel_consumer check_bazel_consumer

echo "$passed $failed" >"$OUT/extra-pkg.counts"
echo "pkg_test: $passed passed, $failed failed" >&2
((failed == 0))
