#!/usr/bin/env bash
# redis_benchmark_smoke_test.sh SERVER - the real redis-benchmark
# (Debian's redis-tools, unmodified) runs its default SET and GET tests
# against handle_server in both map modes and with --epoll, bounded (a
# few thousand requests, loopback only): 50 clients one request at a time, then 4 clients with
# 16 pipelined requests.  Checks what the runs did, never how fast:
# both tests report, the server answered no error, every key
# key:000000000000..099 (-r 100) holds a value of redis-benchmark's size
# (-d, 3 bytes by default) at its id, INFO adds up, and the server exits
# 0 on SIGTERM.
set -uo pipefail
server=$1
command -v redis-benchmark >/dev/null || { echo "redis-benchmark missing: scripts/setup.sh installs redis-tools" >&2; exit 1; }
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

for setup in "ridr" "lock --global-lock" "ridr --epoll 2"; do
	read -r mode args <<<"$setup"
	# A file per server: a reused one could still hold the previous
	# server's "listening on" line when the loop below first reads it.
	out=$tmp/out.$mode.${args// /_} err=$tmp/err.$mode.${args// /_}
	# shellcheck disable=SC2086 # $args is a list of options
	"$server" --port 0 $args >"$out" 2>"$err" &
	spid=$!
	port=
	for _ in $(seq 200); do
		port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$out")
		[[ -n $port ]] && break
		sleep 0.05
	done
	[[ -n $port ]] || { cat "$err" >&2; fail "$mode: server did not start"; continue; }
	for run in "-c 50 -n 3000" "-c 4 -P 16 -n 4000"; do
		# shellcheck disable=SC2086 # $run is a list of options
		# Bounded: a stalled run fails here, naming the mode and run,
		# instead of running into Bazel's test timeout.
		timeout 120 redis-benchmark -h 127.0.0.1 -p "$port" -t set,get \
			-r 100 $run -q >"$tmp/bench" 2>&1
		rc=$?
		((rc == 124)) && fail "$mode $run: redis-benchmark stalled for 120 s"
		tr '\r' '\n' <"$tmp/bench" | grep 'requests per second' | tee "$tmp/rps"
		((rc == 0)) || fail "$mode $run: redis-benchmark exited $rc"
		grep -q '^SET: [0-9.]* requests per second' "$tmp/rps" || fail "$mode $run: no SET result"
		grep -q '^GET: [0-9.]* requests per second' "$tmp/rps" || fail "$mode $run: no GET result"
		if grep -qi 'error\|warning' "$tmp/bench"; then
			fail "$mode $run: redis-benchmark said: $(grep -i 'error\|warning' "$tmp/bench" | head -3)"
		fi
	done
	# Before anything else talks to the server (redis-cli reading
	# commands from stdin first asks for COMMAND DOCS, which we answer
	# with an error).
	redis-cli -p "$port" INFO | tr -d '\r' >"$tmp/info"
	grep -qx 'ids:100' "$tmp/info" || fail "$mode: INFO: $(tr '\n' ' ' <"$tmp/info")"
	grep -qx 'errors:0' "$tmp/info" || fail "$mode: the server answered errors: $(grep errors "$tmp/info")"
	# 2 x (3000 + 4000) SET/GET, plus redis-benchmark's CONFIG GETs.
	req=$(sed -n 's/^requests://p' "$tmp/info")
	((req >= 14000)) || fail "$mode: INFO requests:$req, want >= 14000"
	for i in $(seq 0 99); do printf 'GET key:%012d\n' "$i"; done |
		redis-cli -p "$port" >"$tmp/values"
	n=$(grep -cxE '.{3}' "$tmp/values")
	((n == 100)) || fail "$mode: $n of the keys key:000000000000..099 hold a 3-byte value"
	redis-cli -p "$port" HGET 42 >"$tmp/h42"
	[[ $(cat "$tmp/h42") == "$(sed -n 43p "$tmp/values")" ]] ||
		fail "$mode: HGET 42 '$(cat "$tmp/h42")' != GET key:000000000042 '$(sed -n 43p "$tmp/values")'"
	kill -TERM "$spid"
	wait "$spid"
	rc=$?
	cat "$err"
	((rc == 0)) || fail "$mode: server exited with status $rc"
done
echo "redis_benchmark_smoke_test: $fails failures"
((fails == 0))
