#!/usr/bin/env bash
# Benchmark the example server (examples/server) with the real
# redis-benchmark, ridr mode and --global-lock mode side by side (a
# thread per connection), ridr mode with --epoll NPROC workers, and a
# real redis-server on loopback as a reference row (different work per
# request: a hash table in one thread, not an id map under RCU; it is
# there for scale, not as a peer to beat).
#
# Usage: scripts/server_load.sh [--quick] [--clients "1 2 4 8 16 32 50"]
#                               [--pipelines "1 16"] [--requests N]
#                               [--keys N] [--no-redis] [--out DIR]
#   --clients     connection counts (redis-benchmark -c)
#   --pipelines   requests in flight per connection (-P; 1 = none)
#   --requests    SET and GET requests per run without pipelining (-n;
#                 ten times as many when pipelined); default 50000
#   --keys        key space (-r): keys key:000000000000..N-1 = ids 0..N-1
#   --quick       --clients "1 4 50" --requests 5000 (a minute or so)
#   --no-redis    no reference row
#   --self-check  a few hundred requests, 1 and 2 clients, into a temporary
#                 directory; checks the JSON, table and PNG it writes
#                 (scripts/test.sh runs this; seconds)
#
# Builds handle_server with --config=opt, starts it once per mode (and
# redis-server --save '' --appendonly no) on free loopback ports, then for
# each pipeline depth and client count runs `redis-benchmark -t set,get`
# against each server in turn (interleaved, so drift in machine load hits
# all alike).  Besides requests/s it reads each server's CPU time from
# /proc (utime + stime) around each run: server CPU microseconds per
# request.  Writes DIR/server_load.json, DIR/server_load.md (tables, also
# on stdout) and DIR/server_load.png (gnuplot); default DIR out/server_load.
# Timing is reported, never asserted; every server is stopped at the end
# (also on error or ^C).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

clients="1 2 4 8 16 32 50"
pipelines="1 16"
requests=50000
keys=100000
redis=1
self_check=0
out=$ROOT/out/server_load
while (($#)); do
	case $1 in
	--clients) clients=${2:?}; shift 2 ;;
	--pipelines) pipelines=${2:?}; shift 2 ;;
	--requests) requests=${2:?}; shift 2 ;;
	--keys) keys=${2:?}; shift 2 ;;
	--quick) clients="1 4 50"; requests=5000; shift ;;
	--no-redis) redis=0; shift ;;
	--self-check) self_check=1; clients="1 2"; pipelines="1 4"; requests=300; shift ;;
	--out) out=${2:?}; shift 2 ;;
	-h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "server_load.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
for t in redis-benchmark redis-cli gnuplot; do
	command -v $t >/dev/null || { echo "server_load.sh: $t missing (scripts/setup.sh)" >&2; exit 1; }
done
if ((redis)) && ! command -v redis-server >/dev/null; then
	echo "server_load.sh: redis-server missing (scripts/setup.sh)" >&2
	exit 1
fi

bazel build --config=opt //examples/server:handle_server >&2
server=$(bazel info --config=opt bazel-bin 2>/dev/null)/examples/server/handle_server
tmp=$(mktemp -d /tmp/ridr-server-load.XXXXXX)
((self_check)) && out=$tmp/out
mkdir -p "$out"
declare -A pid port
names=()

cleanup() {
	local n
	for n in "${names[@]}"; do
		if [[ $n == redis ]]; then
			redis-cli -p "${port[$n]}" shutdown nosave >/dev/null 2>&1 || true
		else
			kill -TERM "${pid[$n]}" 2>/dev/null || true
		fi
		wait "${pid[$n]}" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

start_ours() {	# start_ours NAME [ARGS]
	local name=$1
	shift
	# The files exist before the server starts: the loop below reads
	# $name.out at once, and the shell of the background job may not
	# have opened it yet (sed on a missing file fails, which set -e
	# turned into this script's exit on a loaded machine).
	: >"$tmp/$name.out"
	: >"$tmp/$name.err"
	"$server" --port 0 --max-conns 256 "$@" >>"$tmp/$name.out" 2>>"$tmp/$name.err" &
	pid[$name]=$!
	names+=("$name")
	for _ in $(seq 100); do
		port[$name]=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$tmp/$name.out")
		[[ -n ${port[$name]} ]] && return 0
		sleep 0.05
	done
	echo "server_load.sh: $name did not start: $(cat "$tmp/$name.err")" >&2
	exit 1
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_ours ridr
start_ours lock --global-lock
start_ours epoll --epoll "$(nproc)"
if ((redis)); then
	port[redis]=$(free_port)
	redis-server --bind 127.0.0.1 --port "${port[redis]}" --save '' \
		--appendonly no --daemonize no --logfile "$tmp/redis.log" \
		--dir "$tmp" &
	pid[redis]=$!
	names+=(redis)
	for _ in $(seq 100); do
		redis-cli -p "${port[redis]}" ping >/dev/null 2>&1 && break
		sleep 0.05
	done
	redis-cli -p "${port[redis]}" ping >/dev/null ||
		{ echo "server_load.sh: redis-server did not start" >&2; exit 1; }
fi

cpu_ticks() {	# utime + stime of a process, clock ticks (all threads)
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

tick=$(getconf CLK_TCK)
echo "server_load.sh: servers ${names[*]}; clients $clients; pipelines $pipelines; $requests requests (x10 pipelined), $keys keys" >&2
rows=$tmp/rows.tsv	# server pipeline clients test rps cpu_us_per_req p50_ms
: >"$rows"
for P in $pipelines; do
	n=$requests
	((P > 1)) && n=$((requests * 10))
	for C in $clients; do
		for name in "${names[@]}"; do
			c0=$(cpu_ticks "${pid[$name]}")
			redis-benchmark -h 127.0.0.1 -p "${port[$name]}" -t set,get \
				-r "$keys" -n "$n" -c "$C" -P "$P" --csv >"$tmp/csv" 2>"$tmp/bench.err" || {
				echo "server_load.sh: redis-benchmark failed against $name: $(cat "$tmp/bench.err")" >&2
				exit 1
			}
			c1=$(cpu_ticks "${pid[$name]}")
			# "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",...
			tr -d '"' <"$tmp/csv" | awk -F, -v s="$name" -v p="$P" -v c="$C" \
				-v cpu="$(((c1 - c0) * 1000000 / tick))" -v n="$n" '
				$1 == "SET" || $1 == "GET" {
					# CPU of the whole run (SET and GET): per request.
					printf "%s\t%s\t%s\t%s\t%.0f\t%.2f\t%s\n", s, p, c, $1, $2, cpu / (2 * n), $5
				}' >>"$rows"
			tail -n 2 "$rows" | awk -F'\t' '{ printf "  %-5s P=%-3s c=%-3s %s %9.0f req/s  %6.2f us CPU/req\n", $1, $2, $3, $4, $5, $6 }' >&2
		done
	done
done
ok=1
for name in ridr lock epoll; do
	if ! grep -q "^errors:0" < <(redis-cli -p "${port[$name]}" INFO | tr -d '\r'); then
		echo "server_load.sh: $name answered errors during the runs" >&2
		ok=0
	fi
done

python3 - "$rows" "$out" "$(nproc)" "$(uname -sr)" "$keys" "$requests" "$(uptime)" <<'EOF'
import json, sys
rows, out, ncpu, kernel, keys, requests, uptime = sys.argv[1:]
data = {}
for line in open(rows):
    s, p, c, test, rps, cpu, p50 = line.rstrip("\n").split("\t")
    data.setdefault((int(p), test), {}).setdefault(s, {})[int(c)] = (float(rps), float(cpu), float(p50))
servers = [s for s in ("ridr", "lock", "epoll", "redis") if any(s in v for v in data.values())]
label = {"ridr": "handle_server (ridr, RCU lookups)", "lock": "handle_server --global-lock",
         "epoll": f"handle_server --epoll {ncpu} (ridr)", "redis": "redis-server 7 (reference)"}
result = {
    "benchmark": "server_load", "tool": "redis-benchmark -t set,get",
    "machine": {"cpus": int(ncpu), "kernel": kernel, "load": uptime.split("load average:")[-1].strip()},
    "keys": int(keys), "requests": int(requests), "servers": {s: label[s] for s in servers},
    "runs": [],
}
md = [f"machine: {ncpu} CPUs, {kernel}, load average at the end {result['machine']['load']}; "
      f"redis-benchmark -t set,get -r {keys}, {requests} requests per test (x10 pipelined)", ""]
for (p, test) in sorted(data):
    cell = data[(p, test)]
    cs = sorted({c for s in cell.values() for c in s})
    run = {"pipeline": p, "test": test, "clients": cs,
           "rps": {s: [cell[s][c][0] for c in cs] for s in servers if s in cell},
           "cpu_us_per_req": {s: [cell[s][c][1] for c in cs] for s in servers if s in cell},
           "p50_ms": {s: [cell[s][c][2] for c in cs] for s in servers if s in cell}}
    result["runs"].append(run)
    md.append(f"### {test}, pipeline {p} ({'no pipelining' if p == 1 else f'-P {p}'})")
    md.append("")
    md.append("| clients | ridr req/s | lock req/s | ridr / lock | ridr --epoll req/s "
              "| redis-server req/s (ref.) | CPU us/req ridr | lock | epoll | redis |")
    md.append("|---|---|---|---|---|---|---|---|---|---|")
    for i, c in enumerate(cs):
        g = lambda s, k: run[k][s][i] if s in run[k] else None
        r, l, e, x = g("ridr", "rps"), g("lock", "rps"), g("epoll", "rps"), g("redis", "rps")
        fmt = lambda v: "-" if v is None else f"{v:,.0f}"
        fcpu = lambda v: "-" if v is None else f"{v:.1f}"
        ratio = f"{r / l:.2f}x" if r and l else "-"
        md.append(f"| {c} | {fmt(r)} | {fmt(l)} | {ratio} | {fmt(e)} | {fmt(x)} | "
                  + " | ".join(fcpu(g(s, "cpu_us_per_req")) for s in ("ridr", "lock", "epoll", "redis"))
                  + " |")
    md.append("")
with open(f"{out}/server_load.json", "w") as f:
    json.dump(result, f, indent=1)
with open(f"{out}/server_load.md", "w") as f:
    f.write("\n".join(md))
print("\n".join(md))

# gnuplot: one panel per (test, pipeline), req/s vs clients, log x.
dat = f"{out}/server_load.dat"
with open(dat, "w") as f:
    for run in result["runs"]:
        f.write(f"# {run['test']} P={run['pipeline']}\n")
        for i, c in enumerate(run["clients"]):
            f.write(f"{c} " + " ".join(str(run["rps"].get(s, [0] * len(run["clients"]))[i]) for s in servers) + "\n")
        f.write("\n\n")
panels = len(result["runs"])
cols = 2
rowsn = (panels + 1) // 2
gp = [f"set terminal pngcairo size {600 * cols},{380 * rowsn} font 'sans,10'",
      f"set output '{out}/server_load.png'", "set termoption noenhanced",
      f"set multiplot layout {rowsn},{cols} title 'handle_server under redis-benchmark: requests/s ({ncpu} CPUs, loopback)'",
      "set logscale x 2", "set key top left", "set grid", "set xlabel 'clients (-c)'", "set ylabel 'requests/s'",
      "set yrange [0:*]"]
styles = {"ridr": "lc rgb '#1f77b4' pt 7", "lock": "lc rgb '#d62728' pt 5",
          "epoll": "lc rgb '#2ca02c' pt 11", "redis": "lc rgb '#7f7f7f' pt 9 dt 2"}
for k, run in enumerate(result["runs"]):
    gp.append(f"set title '{run['test']}, ' . '{'no pipelining' if run['pipeline'] == 1 else 'pipeline ' + str(run['pipeline'])}'")
    plots = [f"'{dat}' index {k} using 1:{j + 2} with linespoints {styles[s]} title '{label[s]}'"
             for j, s in enumerate(servers)]
    gp.append("plot " + ", ".join(plots))
gp.append("unset multiplot")
import subprocess
subprocess.run(["gnuplot"], input="\n".join(gp), text=True, check=True)
print(f"\nwrote {out}/server_load.json, server_load.md, server_load.png", file=sys.stderr)
EOF
if ((self_check)); then
	# Every server, both tests, both depths, both client counts, with a
	# positive rate and CPU figure; a real PNG.
	python3 - "$out" "${names[*]}" <<'EOF' || ok=0
import json, sys
out, names = sys.argv[1], sys.argv[2].split()
d = json.load(open(f"{out}/server_load.json"))
cells = {(r["test"], r["pipeline"]) for r in d["runs"]}
assert cells == {("SET", 1), ("GET", 1), ("SET", 4), ("GET", 4)}, cells
for r in d["runs"]:
    assert r["clients"] == [1, 2], r["clients"]
    assert sorted(r["rps"]) == sorted(names), (r["rps"].keys(), names)
    for s in names:
        assert all(x > 0 for x in r["rps"][s]), (s, r)
        assert all(x >= 0 for x in r["cpu_us_per_req"][s]), (s, r)
md = open(f"{out}/server_load.md").read()
assert md.count("| clients |") == 4, md
assert open(f"{out}/server_load.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n"
print("server_load.sh --self-check: ok", file=sys.stderr)
EOF
fi
((ok))
