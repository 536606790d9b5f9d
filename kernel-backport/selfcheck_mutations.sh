#!/usr/bin/env bash
# Can compare_boot.sh --self-check fail?  Each mutation below plants one
# plausible bug in a copy of lib.sh's console reader and comparison
# (rk_results, rk_compare_table, rk_kunit_passed, rk_best_of,
# rk_retry_boots: what verify.sh's KUnit check and the 6.12 comparisons
# trust) and the self-check must fail on it; the unmutated copy must
# pass.  Seconds, no kernel; scripts/test.sh runs it after the self-check
# itself.
#
#   kernel-backport/selfcheck_mutations.sh
set -uo pipefail
export LC_ALL=C
RK=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "selfcheck_mutations: $*" >&2; }

# Each mutation: a name, then the exact text of lib.sh it replaces and
# the replacement (literal strings, not patterns; the first occurrence).
MUTATIONS=(
	'a FAIL after ok counts, not missing or SKIP'
	'($2 == "ok" && $3 != "ok")' '($2 == "ok" && $3 ~ /^FAIL/)'
	'results of the first side only dropped by join'
	"join -t \$'\\t' -a1 -a2" "join -t \$'\\t' -a2"
	'SKIP read as ok'
	'if (line ~ / # SKIP/) return "SKIP"' ''
	'kselftest "not ok" read as ok'
	'status($1 == "ok", $0)' 'status(1, $0)'
	'a non-zero exit status read as ok'
	'($3 == 0 ? "ok" : "FAIL " $3)' '"ok"'
	'KUnit cases not read (taken for sub-subtests)'
	'/^    (not )?ok [0-9]+ [^ ]/ && suite' '/^        (not )?ok [0-9]+ [^ ]/ && suite'
	'KUnit suite lines not read'
	'} else if (line ~ /^(not )?ok [0-9]+ [^ ]/) {' '} else if (line ~ /^ (not )?ok [0-9]+ [^ ]/) {'
	'a suite with a failed or skipped case accepted'
	'n > 0 && bad == 0' 'n > 0'
	'a suite that is not ok accepted'
	'suite == "ok" && n > 0' 'n > 0'
	'an absent suite accepted'
	'suite == "ok" && n > 0 && bad == 0' 'bad == 0'
	'rk_smoke FAILED read as ok'
	'($3 == "ok" ? "ok" : "FAIL")' '"ok"'
	'best of two boots: the first boot only (a pass in the second ignored)'
	'if ($3 == "ok" || s == "missing") s = $3' 'if (s == "missing") s = $3'
	'best of two boots: a failure in either boot wins'
	'if ($3 == "ok" || s == "missing") s = $3' 'if ($3 != "ok" && $3 != "missing") s = $3'
	'best of two boots: a result the first boot lacks kept missing'
	'if ($3 == "ok" || s == "missing") s = $3' 'if ($3 == "ok") s = $3'
	'a worse result never booted again'
	'((n < RK_BOOTS)) || return 1' 'return 1'
	'one boot more than RK_BOOTS'
	'((n < RK_BOOTS)) || return 1' '((n <= RK_BOOTS)) || return 1'
	'a boot that failed taken as passed'
	'"$fn" "$n" "$@" >"$r.boot$n" || return 1' '"$fn" "$n" "$@" >"$r.boot$n"'
	'a further boot'"'"'s results not merged'
	'rk_best_of "$r" "$r.boot$n" >"$r.tmp" && mv "$r.tmp" "$r"' ':'
)

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/kernel-backport"
cp "$RK/kernel-backport/compare_boot.sh" "$T/kernel-backport/"

bad=0
cp "$RK/kernel-backport/lib.sh" "$T/kernel-backport/lib.sh"
if ! bash "$T/kernel-backport/compare_boot.sh" --self-check 2>"$T/err"; then
	cat "$T/err" >&2
	say "FAILED: the unmutated copy fails the self-check"
	exit 1
fi
n=0
LIB=$(<"$RK/kernel-backport/lib.sh")
for ((i = 0; i < ${#MUTATIONS[@]}; i += 3)); do
	name=${MUTATIONS[i]} old=${MUTATIONS[i + 1]} new=${MUTATIONS[i + 2]}
	if [[ $LIB != *"$old"* ]]; then
		say "FAILED: mutation '$name': its text is not in lib.sh"
		bad=1
		continue
	fi
	printf '%s\n' "${LIB/"$old"/"$new"}" >"$T/kernel-backport/lib.sh"
	if bash "$T/kernel-backport/compare_boot.sh" --self-check 2>"$T/err"; then
		say "FAILED: mutation '$name' passes the self-check"
		bad=1
	else
		n=$((n + 1))
	fi
done
[[ $bad -eq 0 ]] || exit 1
say "each of the $n mutations of lib.sh fails compare_boot.sh --self-check; the unmutated copy passes"
