#!/usr/bin/env bash
# check_licence.sh MODE TARGET... -- GPL_FILE...
#
# Whether TARGETs (executables, shared libraries, static archives) carry
# code from GPL_FILEs, the sources whose SPDX identifier is GPL-2.0-only
# (lockref/lockref.c, lockref/lockref.h).  MODE "clean": none may (exit 1
# naming what was found); MODE "contains": each TARGET must show at least
# one (the positive control that proves the evidence below is visible).
#
# Evidence, each read with binutils from the file itself:
#  - objects: the STT_FILE symbols of .symtab (readelf -s): every object
#    linked in names its source file there, unless stripped; for an
#    archive also its members (ar t), e.g. lockref.pic.o;
#  - debug info, when present: DW_AT_name of each compile unit
#    (readelf --debug-dump=info), e.g. ".../lockref/lockref.c";
#  - symbols: any defined symbol (nm, static and dynamic) named after a
#    function a GPL header declares (lockref_get_not_dead, ...);
#  - dependencies: DT_NEEDED of a GPL library's soname (liblockref.so.*),
#    from readelf -d.
# A TARGET without a .symtab (stripped) cannot be judged by its objects:
# that is an error in MODE clean, not a pass.
set -euo pipefail
mode=$1
shift
targets=()
while (($#)) && [[ $1 != -- ]]; do
	targets+=("$1")
	shift
done
[[ ${1:-} == -- ]] || { echo "usage: $0 clean|contains TARGET... -- GPL_FILE..." >&2; exit 2; }
shift
((${#targets[@]} && $#)) || { echo "usage: $0 clean|contains TARGET... -- GPL_FILE..." >&2; exit 2; }
[[ $mode == clean || $mode == contains ]] || { echo "bad mode $mode" >&2; exit 2; }

srcs=()	# basenames of GPL .c files
fns=()	# functions GPL headers declare
for f in "$@"; do
	grep -q 'SPDX-License-Identifier: GPL-2.0-only' "$f" ||
		{ echo "$f: not GPL-2.0-only (SPDX), refusing to use it as evidence" >&2; exit 2; }
	case $f in
	*.c) srcs+=("$(basename "$f" .c)") ;;
	*.h) mapfile -t -O "${#fns[@]}" fns < <(grep -hoE '^[a-z][a-z_ ]*[ *]+[a-z_][a-z0-9_]*\(' "$f" |
		grep -vE '^static' | grep -oE '[a-z_][a-z0-9_]*\($' | tr -d '(' | sort -u) ;;
	esac
done
((${#srcs[@]})) || { echo "no GPL .c file given" >&2; exit 2; }
src_re=$(IFS='|'; echo "${srcs[*]}")
fn_re=$(IFS='|'; echo "${fns[*]:-^$}")

status=0
for t in "${targets[@]}"; do
	found=()
	is_ar=0
	if [[ $(head -c 7 "$t") == '!<arch>' ]]; then
		is_ar=1
		while read -r m; do
			[[ $m =~ ^($src_re)\.(pic\.)?o$ ]] && found+=("archive member $m")
		done < <(ar t "$t")
	fi
	if ((!is_ar)); then
		if ! readelf -SW "$t" | grep ' \.symtab ' >/dev/null; then
			echo "$t: stripped (no .symtab): objects cannot be checked" >&2
			[[ $mode == clean ]] && status=1
		fi
		while read -r m; do
			[[ $m =~ ^($src_re)\.c$ ]] && found+=("object from $m (STT_FILE)")
		done < <(readelf -sW "$t" | awk '$4 == "FILE" { print $8 }' | sort -u)
		while read -r m; do
			found+=("needs $m")
		done < <(readelf -dW "$t" | grep -oE 'Shared library: \[lib('"$src_re"')\.so[^]]*\]' || true)
	fi
	# Compile units (absent without -g: then this adds nothing).
	while read -r m; do
		[[ $m =~ (^|/)($src_re)\.c$ ]] && found+=("compile unit $m")
	done < <(readelf --debug-dump=info "$t" 2>/dev/null |
		 awk '/DW_TAG_compile_unit/ { cu = 1; next }
		      cu && /DW_AT_name/ { print $NF; cu = 0 }' | sort -u)
	if ((${#fns[@]})); then
		while read -r s; do
			[[ $s =~ ^($fn_re)(@.*)?$ ]] && found+=("defines $s")
		done < <({ nm --defined-only "$t" 2>/dev/null; nm -D --defined-only "$t" 2>/dev/null; } |
			 awk 'NF == 3 { print $3 }' | sort -u)
	fi
	if [[ $mode == clean ]]; then
		if ((${#found[@]})); then
			echo "FAIL: $t carries GPL-2.0-only code:" >&2
			printf '  %s\n' "${found[@]}" | sort -u | head -n 20 >&2
			status=1
		else
			echo "licence: $t: no GPL-2.0-only object (checked: ${srcs[*]}; ${#fns[@]} functions)"
		fi
	else
		if ((${#found[@]})); then
			echo "licence: $t: GPL-2.0-only code found as expected (${#found[@]} pieces of evidence)"
		else
			echo "FAIL: $t: expected GPL-2.0-only code, found no evidence" >&2
			status=1
		fi
	fi
done
exit $status
