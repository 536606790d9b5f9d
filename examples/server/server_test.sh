#!/usr/bin/env bash
# server_test.sh SERVER PART - runs one part of server_test.py (see there).
set -euo pipefail
exec python3 "$(dirname "$0")/server_test.py" "$@"
