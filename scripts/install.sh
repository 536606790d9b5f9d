#!/usr/bin/env bash
# Build ridr-kit's two libraries with Bazel (--config=opt) and install
# them, or uninstall what an earlier run installed.
#
# Usage: scripts/install.sh [--prefix P] [--libdir D] [--no-build]
#        scripts/install.sh --uninstall [--prefix P]
#   --prefix P    installation prefix (default /usr/local)
#   --libdir D    library directory (default P/lib)
#   --no-build    install what the last `bazel build --config=opt //pkg:dist`
#                 left in bazel-bin (fails if it is missing)
#   --uninstall   remove every file listed in P/share/ridr-kit/manifest
#                 (written by the install), then ridr-kit's own now-empty
#                 directories; nothing else (same --libdir as the install
#                 if that was outside P)
#   DESTDIR       staging root prepended to every installed path (as make
#                 install); the .pc files and the manifest still name the
#                 final paths.  With --prefix /usr --libdir
#                 /usr/lib/x86_64-linux-gnu the staged tree is laid out as
#                 a Debian package's data (docs/using.md).
#
# Installs (see docs/using.md; licences in share/doc/ridr-kit/copyright):
#   libridr (LGPL-2.1-or-later): ridr + the compat runtime
#     D/libridr.so.X.Y.Z, D/libridr.so.X -> .X.Y.Z, D/libridr.so -> .X
#     D/libridr.a, D/pkgconfig/ridr.pc
#     P/include/ridr-kit/{ridr/ridr.h,compat/compat.h,compat/user.h}
#   liblockref (GPL-2.0-only): lockref, uses libridr's runtime
#     D/liblockref.so.X.Y.Z, D/liblockref.so.X, D/liblockref.so
#     D/liblockref.a, D/pkgconfig/lockref.pc
#     P/include/ridr-kit/lockref/lockref.h
#   P/share/doc/ridr-kit/copyright, P/share/ridr-kit/manifest
# The headers keep their include paths ("ridr/ridr.h", "compat/compat.h")
# under include/ridr-kit, so a generic directory name like compat/ never
# lands in the shared include directory; the .pc files add -I.../ridr-kit.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
libdir=
build=1
uninstall=0
while (($#)); do
	case $1 in
	--prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
	--prefix=*) prefix=${1#*=}; shift ;;
	--libdir) libdir=${2:?--libdir needs a value}; shift 2 ;;
	--libdir=*) libdir=${1#*=}; shift ;;
	--no-build) build=0; shift ;;
	--uninstall) uninstall=1; shift ;;
	-h|--help) sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "install.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[[ $prefix == /* ]] || { echo "install.sh: --prefix must be absolute" >&2; exit 2; }
libdir=${libdir:-$prefix/lib}
[[ $libdir == /* ]] || { echo "install.sh: --libdir must be absolute" >&2; exit 2; }
includedir=$prefix/include
destdir=${DESTDIR:-}
manifest=$prefix/share/ridr-kit/manifest

# Refresh the dynamic linker's cache for a real (un)install in a directory
# it already searches (never for a staged DESTDIR install, never adding a
# directory to its configuration).
refresh_ldconfig() {
	local dir=$1
	if [[ -z $destdir && $(id -u) -eq 0 ]] && command -v ldconfig >/dev/null &&
	   ldconfig -v 2>/dev/null | grep -v $'^\t' | cut -d: -f1 | grep -qxF "$dir"; then
		ldconfig
	fi
}

if ((uninstall)); then
	m=$destdir$manifest
	[[ -f $m ]] || { echo "install.sh: no manifest at $m: nothing installed there" >&2; exit 1; }
	ldir=
	while IFS= read -r f; do
		# Only paths under the prefix or --libdir (give the install's
		# --libdir again if it was outside the prefix).
		[[ ($f == "$prefix"/* || $f == "$libdir"/*) && $f != *..* ]] ||
			{ echo "install.sh: bad manifest line '$f'" >&2; exit 1; }
		case $f in */libridr.so.*) ldir=${f%/*} ;; esac
		if [[ -e $destdir$f || -L $destdir$f ]]; then
			rm -f -- "$destdir$f"
		fi
	done < <(grep -vxF "$manifest" "$m")
	rm -f -- "$m"
	# ridr-kit's own directories, if now empty; shared ones (lib,
	# lib/pkgconfig, include, share/doc) stay.
	for d in "$includedir/ridr-kit/ridr" "$includedir/ridr-kit/lockref" \
		 "$includedir/ridr-kit/compat" "$includedir/ridr-kit" \
		 "$prefix/share/doc/ridr-kit" "$prefix/share/ridr-kit"; do
		rmdir -- "$destdir$d" 2>/dev/null || true
	done
	[[ -n $ldir ]] && refresh_ldconfig "$ldir"
	echo "install.sh: uninstalled ridr-kit from $destdir$prefix" >&2
	exit 0
fi

version=$(tr -d ' \n' <pkg/VERSION)
major=${version%%.*}
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
	{ echo "install.sh: bad pkg/VERSION '$version'" >&2; exit 1; }

if ((build)); then
	bazel build --config=opt //pkg:dist >&2
fi
bin=$(bazel info --config=opt bazel-bin 2>/dev/null)/pkg
for lib in ridr lockref; do
	for f in "lib$lib.so" "lib$lib.a"; do
		[[ -f $bin/$f ]] || { echo "install.sh: $bin/$f missing (build first)" >&2; exit 1; }
	done
	# The soname baked in by pkg/BUILD must match pkg/VERSION's major.
	soname=$(objdump -p "$bin/lib$lib.so" | awk '$1 == "SONAME" { print $2 }')
	if [[ $soname != "lib$lib.so.$major" ]]; then
		echo "install.sh: lib$lib.so soname '$soname' does not match version $version" >&2
		exit 1
	fi
done

L=$destdir$libdir
I=$destdir$includedir/ridr-kit
files=()	# final paths, for the manifest
put() {	# put MODE SRC DEST (DEST without DESTDIR)
	install -m "$1" "$2" "$destdir$3"
	files+=("$3")
}
link() {	# link TARGET NAME (NAME without DESTDIR)
	ln -sfn "$1" "$destdir$2"
	files+=("$2")
}
install -d "$L" "$L/pkgconfig" "$I/ridr" "$I/lockref" "$I/compat" \
	"$destdir$prefix/share/doc/ridr-kit" "$destdir$prefix/share/ridr-kit"
for lib in ridr lockref; do
	put 0755 "$bin/lib$lib.so" "$libdir/lib$lib.so.$version"
	link "lib$lib.so.$version" "$libdir/lib$lib.so.$major"
	link "lib$lib.so.$major" "$libdir/lib$lib.so"
	put 0644 "$bin/lib$lib.a" "$libdir/lib$lib.a"
	sed -e "s|@PREFIX@|$prefix|g" -e "s|@LIBDIR@|$libdir|g" \
	    -e "s|@INCLUDEDIR@|$includedir|g" -e "s|@VERSION@|$version|g" \
	    "pkg/$lib.pc.in" >"$L/pkgconfig/$lib.pc"
	chmod 0644 "$L/pkgconfig/$lib.pc"
	files+=("$libdir/pkgconfig/$lib.pc")
done
put 0644 ridr/ridr.h "$includedir/ridr-kit/ridr/ridr.h"
put 0644 lockref/lockref.h "$includedir/ridr-kit/lockref/lockref.h"
put 0644 compat/compat.h "$includedir/ridr-kit/compat/compat.h"
put 0644 compat/user.h "$includedir/ridr-kit/compat/user.h"
put 0644 pkg/copyright "$prefix/share/doc/ridr-kit/copyright"
files+=("$manifest")
printf '%s\n' "${files[@]}" >"$destdir$manifest"
chmod 0644 "$destdir$manifest"

refresh_ldconfig "$libdir"
echo "install.sh: installed libridr and liblockref $version into $destdir$prefix" >&2
