#!/usr/bin/env bash
# run_test.sh PROGRAM NAME - the program runs and prints "NAME: ok".
set -euo pipefail
out=$("$1")
[[ $out == "$2: ok" ]] || { echo "unexpected output: $out" >&2; exit 1; }
