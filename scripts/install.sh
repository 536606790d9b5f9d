#!/usr/bin/env bash
# Build libridr with Bazel (--config=opt) and install it.
#
# Usage: scripts/install.sh [--prefix P] [--libdir D] [--no-build]
#   --prefix P   installation prefix (default /usr/local)
#   --libdir D   library directory (default P/lib)
#   --no-build   install what the last `bazel build --config=opt //pkg:dist`
#                left in bazel-bin (fails if it is missing)
#   DESTDIR      staging root prepended to every installed path (as make
#                install); ridr.pc still names the final paths.
#
# Installs (see docs/using.md):
#   D/libridr.so.X.Y.Z, D/libridr.so.X -> .X.Y.Z, D/libridr.so -> .X
#   D/libridr.a
#   D/pkgconfig/ridr.pc
#   P/include/ridr-kit/{ridr/ridr.h,lockref/lockref.h,compat/compat.h,
#                       compat/user.h}
# The headers keep their include paths ("ridr/ridr.h", "compat/compat.h")
# under include/ridr-kit, so a generic directory name like compat/ never
# lands in the shared include directory; ridr.pc adds -I.../ridr-kit.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
libdir=
build=1
while (($#)); do
	case $1 in
	--prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
	--prefix=*) prefix=${1#*=}; shift ;;
	--libdir) libdir=${2:?--libdir needs a value}; shift 2 ;;
	--libdir=*) libdir=${1#*=}; shift ;;
	--no-build) build=0; shift ;;
	-h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "install.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[[ $prefix == /* ]] || { echo "install.sh: --prefix must be absolute" >&2; exit 2; }
libdir=${libdir:-$prefix/lib}
[[ $libdir == /* ]] || { echo "install.sh: --libdir must be absolute" >&2; exit 2; }
includedir=$prefix/include
destdir=${DESTDIR:-}

version=$(tr -d ' \n' <pkg/VERSION)
major=${version%%.*}
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
	{ echo "install.sh: bad pkg/VERSION '$version'" >&2; exit 1; }

if ((build)); then
	bazel build --config=opt //pkg:dist >&2
fi
bin=$(bazel info --config=opt bazel-bin 2>/dev/null)/pkg
for f in libridr.so libridr.a; do
	[[ -f $bin/$f ]] || { echo "install.sh: $bin/$f missing (build first)" >&2; exit 1; }
done
# The soname baked in by pkg/BUILD must match pkg/VERSION's major.
soname=$(objdump -p "$bin/libridr.so" | awk '$1 == "SONAME" { print $2 }')
if [[ $soname != "libridr.so.$major" ]]; then
	echo "install.sh: soname '$soname' does not match version $version" >&2
	exit 1
fi

L=$destdir$libdir
I=$destdir$includedir/ridr-kit
install -d "$L" "$L/pkgconfig" "$I/ridr" "$I/lockref" "$I/compat"
install -m 0755 "$bin/libridr.so" "$L/libridr.so.$version"
ln -sfn "libridr.so.$version" "$L/libridr.so.$major"
ln -sfn "libridr.so.$major" "$L/libridr.so"
install -m 0644 "$bin/libridr.a" "$L/libridr.a"
install -m 0644 ridr/ridr.h "$I/ridr/ridr.h"
install -m 0644 lockref/lockref.h "$I/lockref/lockref.h"
install -m 0644 compat/compat.h compat/user.h "$I/compat/"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@LIBDIR@|$libdir|g" \
    -e "s|@INCLUDEDIR@|$includedir|g" -e "s|@VERSION@|$version|g" \
    pkg/ridr.pc.in >"$L/pkgconfig/ridr.pc"
chmod 0644 "$L/pkgconfig/ridr.pc"

# Refresh the dynamic linker's cache for a real install into a directory
# it already searches (never for a staged DESTDIR install, never adding a
# directory to its configuration).
if [[ -z $destdir && $(id -u) -eq 0 ]] && command -v ldconfig >/dev/null &&
   ldconfig -v 2>/dev/null | grep -v $'^\t' | cut -d: -f1 | grep -qxF "$libdir"; then
	ldconfig
fi
echo "install.sh: installed libridr $version into $destdir$prefix" >&2
