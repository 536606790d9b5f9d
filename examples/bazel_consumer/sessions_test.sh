#!/usr/bin/env bash
set -euo pipefail
out=$("$1")
[[ $out == "sessions: ok" ]] || { echo "unexpected output: $out" >&2; exit 1; }
