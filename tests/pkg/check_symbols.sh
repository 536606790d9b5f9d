#!/usr/bin/env bash
# check_symbols.sh LIB NODE HEADER... - symbol hygiene of libridr.so or
# liblockref.so.
#
# The dynamic symbols LIB defines must be exactly the functions (and
# the extern const data) the public HEADERs declare out of line
# (libridr: ridr_*, __ridr_* and the compat runtime rk_* of ridr.h,
# compat.h and user.h; liblockref: lockref_* of lockref.h), plus
# rk_tsan_gp_token in a ThreadSanitizer build of libridr (the inline
# read-side unlock releases it) and the version node NODE (RIDR_1,
# LOCKREF_1): nothing missing, nothing extra.
# Also checks the soname (libNAME.so.MAJOR, NAME from LIB's file name)
# against pkg/VERSION when given as PKG_VERSION.
set -euo pipefail
lib=$1
node=$2
shift 2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The headers as userspace compiles them: RK_HAVE_FLAVORS is 1 here, so
# the #else branch of an "#if RK_HAVE_FLAVORS" block declares kernel-only
# names (such blocks do not nest).
userspace() {
	awk '/^#if RK_HAVE_FLAVORS$/ { in_if = 1; keep = 1; next }
	     in_if && /^#else$/ { keep = 0; next }
	     in_if && /^#endif/ { in_if = 0; keep = 1; next }
	     !in_if || keep' "$@"
}
# Declared: a line that starts a non-static declaration and names a
# function "type name(" with one of our prefixes.
userspace "$@" | grep -oE '^[a-z][a-z_ ]*[ *]+(__ridr|ridr|lockref|rk)_[a-z0-9_]+\(' |
	grep -vE '^static' | grep -oE '[a-z_][a-z0-9_]*\($' | tr -d '(' |
	sort -u >"$tmp/declared"
# Declared data: "extern const type name;" (the reserved marker the
# inline lookup compares with).
userspace "$@" | grep -oE '^extern const [a-z_ ]+ (__ridr|ridr|lockref|rk)_[a-z0-9_]+;' |
	grep -oE '[a-z_][a-z0-9_]*;$' | tr -d ';' >>"$tmp/declared" || true
sort -u -o "$tmp/declared" "$tmp/declared"
[[ -s $tmp/declared ]] || { echo "no declarations found in $*" >&2; exit 1; }

nm -D --defined-only "$lib" | awk '{ print $3 }' | sed 's/@.*//' |
	sort -u >"$tmp/exported"
# Defined data and version nodes that are not functions.
grep -qx "$node" "$tmp/exported" || { echo "FAIL: no $node version node" >&2; fail=1; }
grep -vxE "$node|rk_tsan_gp_token" "$tmp/exported" >"$tmp/exported_fn"
# rk_tsan_gp_token only where the library is TSan-instrumented.
if grep -qx rk_tsan_gp_token "$tmp/exported" &&
   ! nm -D "$lib" | grep ' U __tsan_' >/dev/null; then
	echo "FAIL: rk_tsan_gp_token exported from a non-TSan build" >&2
	fail=1
fi

missing=$(comm -23 "$tmp/declared" "$tmp/exported_fn")
extra=$(comm -13 "$tmp/declared" "$tmp/exported_fn")
if [[ -n $missing ]]; then
	echo "FAIL: declared in the headers but not exported:" "$(tr "\n" " " <<<"$missing")" >&2
	fail=1
fi
if [[ -n $extra ]]; then
	echo "FAIL: exported but not part of the public API:" "$(tr "\n" " " <<<"$extra")" >&2
	fail=1
fi
# Every exported symbol carries the version node.
if nm -D --defined-only "$lib" | awk '{ print $3 }' | grep -vx "$node" |
   grep -v "@@$node\$" | grep . >/dev/null; then
	echo "FAIL: unversioned exported symbols" >&2
	fail=1
fi
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
base=$(basename "$lib")
base=${base%%.so*}
if [[ -n ${PKG_VERSION:-} && $soname != "$base.so.${PKG_VERSION%%.*}" ]]; then
	echo "FAIL: soname '$soname' does not match version $PKG_VERSION" >&2
	fail=1
fi
if ((fail == 0)); then
	echo "symbols: ok ($(wc -l <"$tmp/exported_fn") functions and data, soname $soname)"
fi
exit $fail
