#!/usr/bin/env bash
# Load-test the example server (examples/server) in ridr mode and in
# global-lock mode, side by side, at several connection counts.  Builds
# with --config=opt.  Output: one markdown table per connection count on
# stdout (docs/using.md quotes them), progress on stderr.
# Usage: scripts/server_load.sh [CONNS...]   (default: 1 2 4 8)
# Environment: LOAD_ARGS adds load_client options (e.g. "--seconds 1").
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build --config=opt //examples/server:handle_server //examples/server:load_client >&2
bin=$(bazel info --config=opt bazel-bin 2>/dev/null)/examples/server
conns=("$@")
((${#conns[@]})) || conns=(1 2 4 8)
echo "machine: $(nproc) CPUs, $(uname -sr)"
for t in "${conns[@]}"; do
	echo
	# shellcheck disable=SC2086 # LOAD_ARGS is a list of options
	"$bin/load_client" "$bin/handle_server" --threads "$t" --seconds 2 --rounds 3 ${LOAD_ARGS:-}
done
