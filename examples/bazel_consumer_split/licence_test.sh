#!/usr/bin/env bash
# licence_test.sh CHECK LGPL_PROGRAM GPL_PROGRAM GPL_FILE...
set -euo pipefail
check=$1 lgpl=$2 gpl=$3
shift 3
"$check" clean "$lgpl" -- "$@"
"$check" contains "$gpl" -- "$@"
