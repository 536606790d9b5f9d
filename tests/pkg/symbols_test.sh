#!/usr/bin/env bash
# symbols_test.sh LIB NODE VERSION_FILE HEADER... - Bazel wrapper around
# check_symbols.sh for the library Bazel just built.
set -euo pipefail
lib=$1
node=$2
PKG_VERSION=$(tr -d ' \n' <"$3")
export PKG_VERSION
shift 3
exec "$(dirname "$0")/check_symbols.sh" "$lib" "$node" "$@"
