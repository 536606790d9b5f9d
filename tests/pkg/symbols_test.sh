#!/usr/bin/env bash
# symbols_test.sh LIB VERSION_FILE HEADER... - Bazel wrapper around
# check_symbols.sh for the library Bazel just built.
set -euo pipefail
lib=$1
PKG_VERSION=$(tr -d ' \n' <"$2")
export PKG_VERSION
shift 2
exec "$(dirname "$0")/check_symbols.sh" "$lib" "$@"
