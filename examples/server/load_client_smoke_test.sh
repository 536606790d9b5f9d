#!/usr/bin/env bash
# The load client runs both server modes in one run and prints the
# side-by-side table; every reply was OK and both servers exited cleanly
# (its exit status).  Asserts nothing about timing.
set -euo pipefail
client=$1
server=$2
out=$("$client" "$server" --quick)
echo "$out"
grep -q '^| ridr (RCU lookups) | [0-9]' <<<"$out" || { echo "no ridr row" >&2; exit 1; }
grep -q '^| global lock | [0-9]' <<<"$out" || { echo "no global-lock row" >&2; exit 1; }
grep -q '^ridr / global lock: [0-9.]*x$' <<<"$out" || { echo "no ratio" >&2; exit 1; }
if "$client" "$server" --threads 0 2>/dev/null; then
	echo "bad --threads accepted" >&2
	exit 1
fi
echo "load client smoke: ok"
