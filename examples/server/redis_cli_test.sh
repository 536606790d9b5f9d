#!/usr/bin/env bash
# redis_cli_test.sh SERVER - the real redis-cli (Debian's redis-tools,
# unmodified) against handle_server, in both map modes and with --epoll: every command, every
# error reply, binary values through -x, commands read from stdin, and a
# --pipe mass insertion.  Each reply is compared exactly (--no-raw prints
# the RESP type: (integer), "bulk", (nil), (error)).  The server must then
# exit 0 on SIGTERM (no leaked object; under ASan/TSan no report).
set -uo pipefail
server=$1
command -v redis-cli >/dev/null || { echo "redis-cli missing: scripts/setup.sh installs redis-tools" >&2; exit 1; }
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Each server writes a file of its own: with one reused file, the loop
# below could read the previous server's "listening on" line before the
# new server's shell had truncated it, and talk to a closed port.
runs=0
start_server() {
	runs=$((runs + 1))
	out=$tmp/out.$runs err=$tmp/err.$runs
	"$server" --port 0 "$@" >"$out" 2>"$err" &
	spid=$!
	for _ in $(seq 200); do
		port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$out")
		[[ -n $port ]] && return 0
		sleep 0.05
	done
	echo "server did not start" >&2
	cat "$err" >&2
	exit 1
}

stop_server() {
	kill -TERM "$spid"
	wait "$spid"
	local rc=$?
	cat "$err"
	if ((rc != 0)); then
		echo "FAIL: server exited with status $rc" >&2
		fails=$((fails + 1))
	fi
}

# expect 'WANT' ARGS...: redis-cli --no-raw ARGS prints exactly WANT.
expect() {
	local want=$1 got
	shift
	got=$(redis-cli -h 127.0.0.1 -p "$port" --no-raw "$@" 2>&1)
	if [[ $got != "$want" ]]; then
		echo "FAIL: redis-cli $*: got '$got', want '$want'" >&2
		fails=$((fails + 1))
	fi
}

long=$(printf 'v%.0s' $(seq 65))
max=$(printf 'w%.0s' $(seq 64))
# Map mode (ridr or --global-lock) and I/O mode (a thread per
# connection, or --epoll workers).
for setup in "ridr" "lock --global-lock" "ridr --epoll 2"; do
	read -r mode args <<<"$setup"
	# shellcheck disable=SC2086 # $args is a list of options
	start_server $args
	echo "== $setup on port $port"
	expect 'PONG' PING
	expect '"hi there"' PING "hi there"
	expect '"marker"' ECHO marker
	expect '(integer) 1' HNEW hello
	expect '"hello"' HGET 1
	expect 'OK' HSET 1 world
	expect '"world"' HGET 1
	expect '(integer) 2' HNEW "$max"
	expect "\"$max\"" HGET 2
	expect '(integer) 1' HDEL 1
	expect '(integer) 0' HDEL 1
	expect '(nil)' HGET 1
	expect '(integer) 3' hnew lower-case-command
	expect 'OK' SET key:000000012345 v12345
	expect '"v12345"' GET key:000000012345
	expect '"v12345"' HGET 12345
	expect 'OK' HSET 12345 via-hset
	expect '"via-hset"' GET key:12345
	expect 'OK' SET key:000000012345 again
	expect '"again"' GET key:000000012345
	expect '(nil)' GET key:000000099999
	expect '(integer) 1' DEL key:000000012345 key:000000099999
	expect '(nil)' GET key:000000012345
	expect $'1) "save"\n2) ""' CONFIG GET save
	expect $'1) "appendonly"\n2) "no"' CONFIG GET appendonly
	expect '(empty array)' CONFIG GET maxmemory
	expect 'OK' QUIT
	# Binary-safe values through -x (last argument from stdin).
	printf 'a\0b\r\nc' | redis-cli -p "$port" -x HNEW >"$tmp/x"
	[[ $(cat "$tmp/x") == 4 ]] || { echo "FAIL: HNEW -x: $(cat "$tmp/x")" >&2; fails=$((fails + 1)); }
	expect '"a\x00b\r\nc"' HGET 4
	# Errors: one -ERR each, nothing else changes.
	expect "(error) ERR unknown command 'NOSUCH'" NOSUCH 1 2
	expect "(error) ERR wrong number of arguments for 'HGET' command" HGET
	expect "(error) ERR wrong number of arguments for 'HSET' command" HSET 2
	expect "(error) ERR wrong number of arguments for 'HNEW' command" HNEW a b
	expect "(error) ERR wrong number of arguments for 'HDEL' command" HDEL
	expect "(error) ERR wrong number of arguments for 'GET' command" GET
	expect "(error) ERR wrong number of arguments for 'SET' command" SET key:1
	expect "(error) ERR wrong number of arguments for 'DEL' command" DEL
	expect "(error) ERR wrong number of arguments for 'PING' command" PING a b
	expect "(error) ERR wrong number of arguments for 'ECHO' command" ECHO
	# (redis-cli prints INFO's reply raw, errors included.)
	expect "ERR wrong number of arguments for 'INFO' command" INFO a b
	expect "(error) ERR wrong number of arguments for 'QUIT' command" QUIT now
	expect "(error) ERR wrong number of arguments for 'CONFIG' command" CONFIG GET
	expect "(error) ERR only CONFIG GET is supported" CONFIG SET save ""
	expect "(error) ERR invalid id" HGET abc
	expect "(error) ERR invalid id" HDEL -1
	expect "(error) ERR id out of range (max 1048576)" HGET 1048577
	expect "(error) ERR no such id" HSET 999 x
	expect "(error) ERR key must be key:<decimal id>" GET foo
	expect "(error) ERR key must be key:<decimal id>" SET key:1x v
	expect "(error) ERR key must be key:<decimal id>" DEL key:1 other
	expect "(error) ERR id out of range (max 1048576)" GET key:999999999999
	expect "(error) ERR syntax error (SET takes no options here)" SET key:1 v EX 10
	expect "(error) ERR argument too long (max 64 bytes)" HNEW "$long"
	expect "(error) ERR argument too long (max 64 bytes)" SET key:1 "$long"
	expect '(nil)' GET key:1
	expect "\"$max\"" HGET 2
	# Commands from stdin, one per line, raw output.
	printf 'HNEW piped\nHGET 5\nPING\nFOO\n' | redis-cli -p "$port" >"$tmp/stdin" 2>&1
	want=$'5\npiped\nPONG\nERR unknown command \'FOO\''
	[[ $(cat "$tmp/stdin") == "$want" ]] ||
		{ echo "FAIL: commands on stdin: $(cat "$tmp/stdin")" >&2; fails=$((fails + 1)); }
	# Mass insertion (--pipe sends RESP and ends with ECHO <marker>).
	for i in $(seq 1000); do
		printf '*3\r\n$3\r\nSET\r\n$%d\r\nkey:%d\r\n$%d\r\nv%d\r\n' \
			$((4 + ${#i})) "$i" $((1 + ${#i})) "$i"
	done | redis-cli -p "$port" --pipe >"$tmp/pipe" 2>&1
	grep -q '^errors: 0, replies: 1000$' "$tmp/pipe" ||
		{ echo "FAIL: --pipe: $(cat "$tmp/pipe")" >&2; fails=$((fails + 1)); }
	expect '"v777"' GET key:777
	# INFO adds up: --pipe set ids 1..1000; ids 2..5 (HNEW's) were among
	# them, so exactly 1000 ids.
	redis-cli -p "$port" INFO | tr -d '\r' >"$tmp/info"
	grep -qx "mode:$mode" "$tmp/info" || { echo "FAIL: INFO mode" >&2; fails=$((fails + 1)); }
	grep -qx 'ids:1000' "$tmp/info" || { echo "FAIL: INFO ids: $(cat "$tmp/info")" >&2; fails=$((fails + 1)); }
	grep -qx 'errors:0' "$tmp/info" && { echo "FAIL: INFO counted no errors" >&2; fails=$((fails + 1)); }
	stop_server
done
echo "redis_cli_test: $fails failures"
((fails == 0))
