#!/usr/bin/env bash
# licence_test.sh CHECK LGPL_TARGET... -- GPL_TARGET... -- GPL_FILE...
# The LGPL targets carry no GPL-2.0-only code; the GPL targets do (the
# positive control: the evidence check_licence.sh looks for is there when
# lockref is linked in).  See check_licence.sh.
set -euo pipefail
check=$1
shift
lgpl=()
gpl=()
while [[ $1 != -- ]]; do lgpl+=("$1"); shift; done
shift
while [[ $1 != -- ]]; do gpl+=("$1"); shift; done
shift
"$check" clean "${lgpl[@]}" -- "$@"
"$check" contains "${gpl[@]}" -- "$@"
echo "licence_test: ok"
