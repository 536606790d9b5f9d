#!/usr/bin/env python3
"""Integration tests of handle_server over real loopback sockets.

Usage: server_test.py SERVER_BINARY PART
PART: consistency | lifetime | bad_input | fuzz | shutdown

Each part starts the real server on an ephemeral 127.0.0.1 port, drives it
with clients, then stops it with a signal and requires exit status 0 (the
server returns 3 if an object was never freed; under ASan/TSan a sanitizer
report makes it fail too).  The server's stderr goes to this test's log.
Counts and time are bounded; random parts use fixed seeds (printed).
"""
import os
import random
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time

SERVER = None
TIMEOUT = 60.0          # per socket operation; sanitizers are slow
VALUE_MAX = 64
ARG_MAX = 64
BULK_LIMIT = 1 << 20
ARRAY_LIMIT = 1024
INLINE_MAX = 1024
MAX_ID = 1 << 20

failures = []
fail_lock = threading.Lock()


def fail(msg):
    with fail_lock:
        failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr, flush=True)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


class Thread(threading.Thread):
    """A client thread whose exception (a reset connection when the
    server crashed, say) fails the test instead of vanishing."""

    def run(self):
        try:
            super().run()
        except Exception as e:  # noqa: BLE001 - any exception is a failure
            fail(f"{self.name}: {type(e).__name__}: {e}")


class Server:
    def __init__(self, *args):
        self.proc = subprocess.Popen([SERVER, "--port", "0", *args],
                                     stdout=subprocess.PIPE, stderr=None)
        ready, _, _ = select.select([self.proc.stdout], [], [], TIMEOUT)
        line = self.proc.stdout.readline().decode() if ready else ""
        m = re.match(r"listening on 127\.0\.0\.1:(\d+) mode=(\w+)", line)
        if not m:
            self.proc.kill()
            raise SystemExit(f"server did not print its port: {line!r}")
        self.port = int(m.group(1))
        self.mode = m.group(2)

    def stop(self, sig=signal.SIGTERM):
        """Signal the server; its exit status must be 0."""
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            fail(f"server ({self.mode}) did not exit within {TIMEOUT}s of signal {sig}")
            return False
        return check(rc == 0, f"server ({self.mode}) exited with status {rc}")


class ProtocolError(Exception):
    pass


def encode(*args):
    """One RESP2 request: an array of bulk strings."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, int):
            a = b"%d" % a
        elif isinstance(a, str):
            a = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def parse_reply(buf, pos=0):
    """One RESP2 reply from buf[pos:]: (value, end), or None if the bytes
    there are an incomplete reply.  Values: str for +simple, int for
    :integer, bytes for $bulk, None for $-1, list for *array, Err for
    -error.  Anything else raises ProtocolError."""
    nl = buf.find(b"\r\n", pos)
    if nl < 0:
        return None
    kind, rest, end = buf[pos:pos + 1], buf[pos + 1:nl], nl + 2
    try:
        if kind == b"+":
            return rest.decode("ascii"), end
        if kind == b"-":
            return Err(rest.decode("ascii")), end
        if kind == b":":
            return int(rest), end
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None, end
            if len(buf) < end + n + 2:
                return None
            if buf[end + n:end + n + 2] != b"\r\n":
                raise ProtocolError(f"bulk reply without CRLF at {pos}")
            return buf[end:end + n], end + n + 2
        if kind == b"*":
            items = []
            for _ in range(int(rest)):
                r = parse_reply(buf, end)
                if r is None:
                    return None
                item, end = r
                items.append(item)
            return items, end
    except (ValueError, UnicodeDecodeError) as e:
        raise ProtocolError(f"bad reply {buf[pos:nl]!r}: {e}") from e
    raise ProtocolError(f"bad reply line {buf[pos:nl]!r}")


class Client:
    """A RESP2 client (replies as parse_reply() returns them)."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def reply(self):
        """The next reply; EOF (connection closed) raises EOFError."""
        while True:
            r = parse_reply(self.buf)
            if r is not None:
                self.buf = self.buf[r[1]:]
                return r[0]
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk

    def cmd(self, *args):
        self.send(encode(*args))
        return self.reply()

    def eof(self):
        """True if the server closed the connection (nothing left)."""
        try:
            return self._line() is None
        except (ConnectionResetError, socket.timeout):
            return False

    def close(self):
        self.sock.close()


class Err(str):
    """An error reply (its text, without the leading '-')."""


def info(c):
    r = c.cmd("INFO")
    if not check(isinstance(r, bytes), f"INFO answered {r!r}"):
        return {}
    out = {}
    for line in r.decode().split("\r\n"):
        if ":" in line:
            k, v = line.split(":", 1)
            out[k] = int(v) if v.isdigit() else v
    return out


def wait_objects_settle(c, want_ids):
    """Objects are freed after a grace period: wait until the allocated
    objects equal the live ids (bounded)."""
    deadline = time.time() + 20
    while True:
        s = info(c)
        if s.get("objects") == want_ids or time.time() > deadline:
            return s
        time.sleep(0.05)


# ---------------------------------------------------------------------
# consistency: concurrent clients, each with its own ids

def consistency_mode(mode_args, nclients=8, ops=250):
    srv = Server(*mode_args)
    owner = {}          # id -> client index (ids are never reused here)
    owner_lock = threading.Lock()
    results = [None] * nclients
    stop_scan = threading.Event()

    def client(ci):
        rng = random.Random(1000 + ci)
        c = Client(srv.port)
        mine = {}       # id -> value
        deleted = []
        created = ndel = 0
        for n in range(ops):
            op = rng.random()
            if not mine or op < 0.3:
                val = b"c%d-%d" % (ci, n)
                r = c.cmd("HNEW", val)
                if not check(isinstance(r, int) and r > 0, f"client {ci}: HNEW answered {r!r}"):
                    break
                with owner_lock:
                    check(r not in owner, f"id {r} handed out twice")
                    owner[r] = ci
                mine[r] = val
                created += 1
            elif op < 0.6:
                i = rng.choice(list(mine))
                r = c.cmd("HGET", i)
                check(r == mine[i], f"client {ci}: HGET {i} = {r!r}, want {mine[i]!r}")
            elif op < 0.8:
                i = rng.choice(list(mine))
                val = b"c%d-%ds" % (ci, n)
                r = c.cmd("HSET", i, val)
                if check(r == "OK", f"client {ci}: HSET {i} answered {r!r}"):
                    mine[i] = val
            else:
                i = rng.choice(list(mine))
                r = c.cmd("HDEL", i)
                check(r == 1, f"client {ci}: HDEL {i} answered {r!r}")
                del mine[i]
                deleted.append(i)
                ndel += 1
                r = c.cmd("HGET", i)
                check(r is None, f"client {ci}: HGET of deleted {i} = {r!r}")
        for i, val in mine.items():
            r = c.cmd("HGET", i)
            check(r == val, f"client {ci}: final HGET {i} = {r!r}, want {val!r}")
        for i in deleted:
            got = [c.cmd("HGET", i), c.cmd("HSET", i, "x"), c.cmd("HDEL", i)]
            check(got == [None, Err("ERR no such id"), 0],
                  f"client {ci}: HGET/HSET/HDEL of deleted id {i} = {got!r}")
        results[ci] = (len(mine), created, ndel)
        c.cmd("QUIT")
        c.close()

    def scanner():
        """Reads other clients' ids while they change: every answer is
        nil or a value its owner wrote (never another client's)."""
        c = Client(srv.port)
        rng = random.Random(7)
        while not stop_scan.is_set():
            with owner_lock:
                known = list(owner.items())
            if not known:
                time.sleep(0.001)
                continue
            i, ci = rng.choice(known)
            r = c.cmd("HGET", i)
            if r is not None:
                check(isinstance(r, bytes) and r.startswith(b"c%d-" % ci),
                      f"scanner: HGET {i} (client {ci}'s) = {r!r}")
        c.close()

    threads = [Thread(target=client, args=(ci,)) for ci in range(nclients)]
    scan = Thread(target=scanner)
    scan.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop_scan.set()
    scan.join()

    if None in results:
        fail("a client did not finish")
        srv.stop()
        return
    live = sum(r[0] for r in results)
    created = sum(r[1] for r in results)
    ndel = sum(r[2] for r in results)
    c = Client(srv.port)
    s = wait_objects_settle(c, live)
    check(s.get("ids") == live, f"INFO ids={s.get('ids')}, clients hold {live}")
    check(s.get("created") == created, f"INFO created={s.get('created')}, clients made {created}")
    check(s.get("deleted") == ndel, f"INFO deleted={s.get('deleted')}, clients deleted {ndel}")
    check(s.get("ids") == s.get("created", 0) - s.get("deleted", 0), f"INFO does not add up: {s}")
    check(s.get("objects") == live, f"INFO objects={s.get('objects')} after the grace periods, want {live}")
    check(s.get("mode") == srv.mode, f"INFO mode={s.get('mode')}")
    c.close()
    print(f"consistency ({srv.mode}): {nclients} clients, {created} created, "
          f"{ndel} deleted, {live} live; INFO {s}", flush=True)
    srv.stop()


# keys: SET/GET of key:<id> from several clients on overlapping ids, racing
# HDEL and DEL: every GET answers nil or a value some client SET for that
# very id; at the end each key holds the last value its owner wrote.
def keys_mode(mode_args, nclients=4, ops=300, nkeys=40):
    srv = Server(*mode_args)

    def client(ci):
        rng = random.Random(500 + ci)
        c = Client(srv.port)
        for n in range(ops):
            k = rng.randrange(nkeys)
            key = "key:%012d" % k
            op = rng.random()
            if op < 0.45:
                r = c.cmd("SET", key, b"k%d-c%d-%d" % (k, ci, n))
                check(r == "OK", f"client {ci}: SET {key} = {r!r}")
            elif op < 0.85:
                r = c.cmd("GET", key)
                check(r is None or (isinstance(r, bytes) and r.startswith(b"k%d-" % k)),
                      f"client {ci}: GET {key} = {r!r}")
            elif op < 0.95:
                r = c.cmd("HDEL", k)
                check(r in (0, 1), f"client {ci}: HDEL {k} = {r!r}")
            else:
                r = c.cmd("DEL", key, "key:%d" % ((k + 1) % nkeys))
                check(r in (0, 1, 2), f"client {ci}: DEL = {r!r}")
        c.close()

    threads = [Thread(target=client, args=(ci,)) for ci in range(nclients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Quiet now: each key's value is stable and matches HGET of its id.
    c = Client(srv.port)
    for k in range(nkeys):
        a, b = c.cmd("GET", "key:%012d" % k), c.cmd("HGET", k)
        check(a == b and (a is None or a.startswith(b"k%d-" % k)),
              f"key {k}: GET {a!r}, HGET {b!r}")
        check(c.cmd("SET", "key:%d" % k, "last") == "OK", "SET last")
        check(c.cmd("HGET", k) == b"last", f"HGET {k} after SET key:{k}")
    s = wait_objects_settle(c, nkeys)
    check(s.get("ids") == nkeys and s.get("objects") == nkeys, f"INFO after keys: {s}")
    check(c.cmd("DEL", *["key:%d" % k for k in range(7)]) == 7, "DEL of 7 keys")
    c.close()
    print(f"keys ({srv.mode}): {nclients} clients x {ops} SET/GET/HDEL/DEL on {nkeys} keys; INFO {s}",
          flush=True)
    srv.stop()


# Both map modes, and both I/O modes (a thread per connection; --epoll).
MODES = ([], ["--global-lock"], ["--epoll", "2"], ["--global-lock", "--epoll", "2"])


def part_consistency():
    for mode in MODES:
        consistency_mode(mode)
        keys_mode(mode)


# ---------------------------------------------------------------------
# lifetime: lookups racing with deletes of the same ids, pipelined so the
# server's workers really overlap; a missing grace period or reference
# shows up as a use-after-free under ASan or a race under TSan

def lifetime_mode(mode_args, seconds=3.0, nreaders=3, batch=64):
    srv = Server(*mode_args)
    latest = [1]
    stop = threading.Event()
    churned = [0]
    looked = [0] * nreaders

    def churn():
        c = Client(srv.port)
        while not stop.is_set():
            c.send(b"".join(encode("HNEW", "c%d" % k) for k in range(batch)))
            new = []
            for _ in range(batch):
                r = c.reply()
                if not check(isinstance(r, int) and r > 0, f"churn: HNEW answered {r!r}"):
                    stop.set()
                    return
                new.append(r)
            latest[0] = new[-1]
            c.send(b"".join(encode("HDEL", i) for i in new))
            for i in new:
                r = c.reply()
                check(r == 1, f"churn: HDEL {i} answered {r!r}")
            churned[0] += batch
        c.close()

    def reader(k):
        rng = random.Random(k)
        c = Client(srv.port)
        while not stop.is_set():
            base = latest[0]
            ids = [max(1, base + rng.randrange(-batch, batch)) for _ in range(batch)]
            # Half as RESP arrays, half as inline commands.
            c.send(b"".join(encode("HGET", i) if j % 2 else b"HGET %d\r\n" % i
                            for j, i in enumerate(ids)))
            for i in ids:
                r = c.reply()
                if r is not None:
                    check(isinstance(r, bytes) and re.fullmatch(rb"c\d+", r),
                          f"reader: HGET {i} = {r!r}")
            looked[k] += batch
        c.close()

    threads = [Thread(target=churn)]
    threads += [Thread(target=reader, args=(k,)) for k in range(nreaders)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    c = Client(srv.port)
    s = wait_objects_settle(c, 0)
    check(s.get("ids") == 0 and s.get("objects") == 0, f"INFO after churn: {s}")
    c.close()
    print(f"lifetime ({srv.mode}): {churned[0]} objects created and deleted "
          f"under {sum(looked)} concurrent lookups", flush=True)
    srv.stop()


def part_lifetime():
    for mode in MODES:
        lifetime_mode(mode, seconds=2.0)


# ---------------------------------------------------------------------
# bad_input: well-framed but wrong requests get one -ERR each and the
# connection stays usable; malformed frames get "-ERR Protocol error" and
# the connection is closed; other clients' objects are untouched

def arity(name):
    return Err(f"ERR wrong number of arguments for '{name}' command")


BAD = [  # (request frame, reply): the connection stays usable
    (encode("FOO"), Err("ERR unknown command 'FOO'")),
    (encode("FOO\x00\r\n'x"), Err("ERR unknown command 'FOO????x'")),
    (encode("HGET"), arity("HGET")),
    (encode("hget", 1, 2), arity("hget")),
    (encode("HGET", "abc"), Err("ERR invalid id")),
    (encode("HGET", "-1"), Err("ERR invalid id")),
    (encode("HGET", "1x"), Err("ERR invalid id")),
    (encode("HGET", ""), Err("ERR invalid id")),
    (encode("HGET", MAX_ID + 1), Err(f"ERR id out of range (max {MAX_ID})")),
    (encode("HGET", "99999999999999999999"), Err(f"ERR id out of range (max {MAX_ID})")),
    (encode("HGET", "999999999999999999999"), Err("ERR invalid id")),
    (encode("HGET", 999999), None),
    (encode("HSET", 1), arity("HSET")),
    (encode("HSET", 999999, "v"), Err("ERR no such id")),
    (encode("HSET", 1, "x" * (VALUE_MAX + 1)), Err(f"ERR argument too long (max {ARG_MAX} bytes)")),
    (encode("HDEL"), arity("HDEL")),
    (encode("HDEL", 999999), 0),
    (encode("HNEW"), arity("HNEW")),
    (encode("HNEW", "a", "b"), arity("HNEW")),
    (encode("HNEW", "x" * (VALUE_MAX + 1)), Err(f"ERR argument too long (max {ARG_MAX} bytes)")),
    (encode("GET", "foo"), Err("ERR key must be key:<decimal id>")),
    (encode("GET", "key:"), Err("ERR key must be key:<decimal id>")),
    (encode("GET", "key:12a"), Err("ERR key must be key:<decimal id>")),
    (encode("GET", "key:%d" % (MAX_ID + 1)), Err(f"ERR id out of range (max {MAX_ID})")),
    (encode("GET", "key:999999"), None),
    (encode("SET", "key:1"), arity("SET")),
    (encode("SET", "key:1", "v", "EX", "10"), Err("ERR syntax error (SET takes no options here)")),
    (encode("DEL"), arity("DEL")),
    (encode("DEL", "key:1", "bad"), Err("ERR key must be key:<decimal id>")),
    (encode("PING", "a", "b"), arity("PING")),
    (encode("QUIT", "now"), arity("QUIT")),
    (encode("INFO", "a", "b"), arity("INFO")),
    (encode("CONFIG", "SET", "save"), Err("ERR only CONFIG GET is supported")),
    (encode("CONFIG", "GET", "maxmemory"), []),
    (encode(*(["PING"] + ["x"] * 20)), arity("PING")),
    # An over-long argument is read and dropped, not stored: 100 KiB.
    (encode("HNEW", "y" * 100000), Err(f"ERR argument too long (max {ARG_MAX} bytes)")),
    (encode("y" * 100), Err(f"ERR argument too long (max {ARG_MAX} bytes)")),
    # Inline commands (Redis accepts them from telnet).
    (b"PING\r\n", "PONG"),
    (b"  hget\t999999  \n", None),
    (b"NOSUCH a b\n", Err("ERR unknown command 'NOSUCH'")),
    (b"\r\n*0\r\nPING\r\n", "PONG"),   # empty line and empty array: ignored
    (b"HNEW " + b"z" * 70 + b"\r\n", Err(f"ERR argument too long (max {ARG_MAX} bytes)")),
]

FATAL = [  # (frame, protocol error text): answered, then closed
    (b"*abc\r\n", "invalid multibulk length"),
    (b"*-1\r\n", "invalid multibulk length"),
    (b"*%d\r\n" % (ARRAY_LIMIT + 1), "invalid multibulk length"),
    (b"*99999999999999999999999\r\n", "invalid multibulk length"),
    (b"*1\r\n:5\r\n", "expected '$'"),
    (b"*2\r\n$4\r\nPING\r\n*1\r\n", "expected '$'"),
    (b"*1\r\n$x\r\n", "invalid bulk length"),
    (b"*1\r\n$-1\r\n", "invalid bulk length"),
    (b"*1\r\n$%d\r\n" % (BULK_LIMIT + 1), "invalid bulk length"),
    (b"*1\r\n$4\r\nPINGxx", "expected CRLF after bulk string"),
    (b"*1\r\n$100\r\n" + b"a" * 100 + b"XY", "expected CRLF after bulk string"),
    (b"*1\r" + b"1" * 40, "invalid multibulk length"),
    (b"x" * (INLINE_MAX + 1), "too big inline request"),
]


def part_bad_input():
    for io in ([], ["--epoll", "1"]):
        bad_input_io(io)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise ValueError("no VmRSS")


def no_claimed_allocation(io, nconns=32):
    """Claimed lengths are never allocated: 32 connections each announce
    a bulk string just under BULK_LIMIT (1 MiB) and send half of it; a
    server that buffered claims would grow by at least 16 MiB, ours by
    its fixed buffers (32 x 32 KiB).  Measured in --epoll mode, where a
    connection costs no thread (a thread's stack and, under the
    sanitizers, its shadow memory would blur the number)."""
    srv = Server(*io)
    probe = Client(srv.port)
    check(probe.cmd("PING") == "PONG", "PING before the claims")
    before = rss_kib(srv.proc.pid)
    claim = BULK_LIMIT - 1
    hdr = b"*2\r\n$4\r\nHNEW\r\n$%d\r\n" % claim
    half = b"z" * (claim // 2)
    # The server's byte count before the claims; each later INFO request
    # adds its own len(encode("INFO")) bytes.
    base = info(probe)["bytes_in"]
    conns = []
    for _ in range(nconns):
        c = Client(srv.port)
        c.send(hdr + half)
        conns.append(c)
    # Measure once the server has read every byte sent (bounded wait).
    want = base + nconns * (len(hdr) + len(half))
    deadline = time.time() + TIMEOUT
    polls = 0
    while True:
        polls += 1
        got = info(probe)["bytes_in"] - polls * len(encode("INFO"))
        if got >= want or time.time() > deadline:
            break
        time.sleep(0.05)
    check(got >= want, f"the server read {got - base} of the claims' bytes, want {want - base}")
    check(probe.cmd("PING") == "PONG", "PING while 32 claims are pending")
    grown = rss_kib(srv.proc.pid) - before
    check(grown < 8 * 1024, f"server grew by {grown} KiB while {nconns} connections "
          f"claimed {claim} bytes each and sent half (fixed buffers: ~{nconns * 32} KiB)")
    # The rest of each bulk completes the request: argument too long,
    # and the connection is still usable.
    for c in conns:
        c.send(half + b"z" + b"\r\n" + encode("PING"))
    for c in conns:
        r = [c.reply(), c.reply()]
        check(r == [Err(f"ERR argument too long (max {ARG_MAX} bytes)"), "PONG"],
              f"after a {claim}-byte argument: {r!r}")
        c.close()
    probe.close()
    srv.stop()
    print(f"no_claimed_allocation ({' '.join(io)}): RSS grew {grown} KiB under "
          f"{nconns} x {claim // 2} bytes of pending claims", flush=True)


def bad_input_io(io):
    srv = Server(*io)
    other = Client(srv.port)
    check(other.cmd("HNEW", "precious") == 1, "first HNEW")

    c = Client(srv.port)
    for req, want in BAD:
        c.send(req)
        r = c.reply()
        check(r == want and type(r) is type(want), f"{req[:60]!r}: got {r!r}, want {want!r}")
    # Still usable: pipelined requests, binary and empty values.
    c.send(encode("HNEW", "v" * VALUE_MAX) + encode("HGET", 1) + encode("HNEW", b"\x00\r\n\xff") +
           encode("HNEW", "") + encode("PING") + encode("PING", "hi"))
    got = [c.reply() for _ in range(6)]
    check(got == [2, b"precious", 3, 4, "PONG", b"hi"], f"pipelined after bad requests: {got!r}")
    check(c.cmd("HGET", 3) == b"\x00\r\n\xff" and c.cmd("HGET", 4) == b"", "binary and empty values")
    # A frame split byte by byte still parses.
    for b in encode("HGET", 1):
        c.send(bytes([b]))
        time.sleep(0.001)
    check(c.reply() == b"precious", "a request sent one byte at a time")
    s = info(c)
    check(s.get("errors", 0) >= sum(isinstance(w, Err) for _, w in BAD),
          f"INFO errors={s.get('errors')}")
    c.close()
    # Each malformed frame: one protocol error, then the server closes.
    for frame, text in FATAL:
        c = Client(srv.port)
        c.send(frame)
        r = c.reply()
        check(r == Err("ERR Protocol error: " + text), f"{frame[:40]!r}: got {r!r}")
        check(c.eof(), f"connection not closed after {frame[:40]!r}")
        c.close()
    # A claimed huge bulk below the limit that never arrives: the server
    # keeps waiting without allocating (other clients are served) and
    # frees everything when the client goes.
    lazy = Client(srv.port)
    lazy.send(b"*2\r\n$4\r\nHNEW\r\n$%d\r\n" % BULK_LIMIT + b"a" * 1000)
    check(other.cmd("HGET", 1) == b"precious", "other client while one claims 1 MiB")
    lazy.close()
    # QUIT answers and closes.
    c = Client(srv.port)
    check(c.cmd("QUIT") == "OK", "QUIT")
    check(c.eof(), "connection not closed after QUIT")
    c.close()
    # The other client's object is untouched, its connection fine.
    check(other.cmd("HGET", 1) == b"precious", "other client's value changed")
    check([other.cmd("HDEL", i) for i in (2, 3, 4)] == [1, 1, 1], "HDEL 2 3 4")
    s = info(other)
    check(s.get("ids") == 1 and s.get("created") == 4 and s.get("deleted") == 3,
          f"INFO after the bad input: {s}")
    other.close()
    srv.stop()

    # Connection limit: the extra client gets Redis's error and is
    # closed; the others keep working.
    srv = Server("--max-conns", "2", *io)
    a, b = Client(srv.port), Client(srv.port)
    check(a.cmd("HNEW", "a") == 1 and b.cmd("HGET", 1) == b"a", "two clients")
    extra = Client(srv.port)
    r = extra.reply()
    check(r == Err("ERR max number of clients reached"), f"third client over --max-conns 2: {r!r}")
    check(extra.eof(), "refused client not closed")
    extra.close()
    check(a.cmd("HGET", 1) == b"a", "client after a refused one")
    a.close()
    b.close()
    srv.stop()

    # Id space exhausted; a freed id is reused once the cyclic cursor
    # wraps; ids past --max-id are out of range, key:0 is id 0.
    srv = Server("--max-id", "2", *io)
    c = Client(srv.port)
    got = [c.cmd("HNEW", "a"), c.cmd("HNEW", "b"), c.cmd("HNEW", "c")]
    check(got == [1, 2, Err("ERR id space full")], f"--max-id 2: {got!r}")
    check(c.cmd("HGET", 3) == Err("ERR id out of range (max 2)"), "HGET 3 with --max-id 2")
    got = [c.cmd("HDEL", 1), c.cmd("HNEW", "d"), c.cmd("HGET", 1)]
    check(got == [1, 1, b"d"], f"reuse after wrap: {got!r}")
    got = [c.cmd("SET", "key:0", "zero"), c.cmd("HGET", 0), c.cmd("HNEW", "e")]
    check(got == ["OK", b"zero", Err("ERR id space full")], f"key:0 is id 0, not HNEW's: {got!r}")
    c.close()
    srv.stop()
    if io:
        no_claimed_allocation(io)
    # A client that pipelines far more than it reads: the server stops
    # reading it while its replies wait (epoll) or blocks in send
    # (threads); others are served meanwhile; then it reads them all.
    srv = Server(*io)
    hog, other = Client(srv.port), Client(srv.port)
    check(other.cmd("HNEW", "o") == 1, "HNEW before the hog")
    n = 20000
    reqs = encode("PING", "x" * 60) * n
    sender = Thread(target=hog.send, args=(reqs,))
    sender.start()
    time.sleep(0.5)
    check(other.cmd("HGET", 1) == b"o", "other client while one does not read")
    got = [hog.reply() for _ in range(n)]
    sender.join()
    check(got == [b"x" * 60] * n, "the hog's pipelined replies")
    hog.close()
    other.close()
    srv.stop()
    print("bad_input (%s): %d wrong requests, %d malformed frames, limits, a non-reading "
          "client, other clients intact" % (" ".join(io) or "threads", len(BAD), len(FATAL)))


# ---------------------------------------------------------------------
# fuzz: random bytes, random well-formed and truncated frames, oversized
# lengths and pipelines from several connections; every reply must parse
# as RESP, the victim's objects stay intact, the server serves throughout

def fuzz_frame(rng, words):
    x = rng.random()
    if x < 0.2:         # random bytes
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    if x < 0.35:        # inline token soup
        toks = [rng.choice(words) for _ in range(rng.randrange(1, 5))]
        return b" ".join(toks) + rng.choice([b"\n", b"\r\n", b""])
    # RESP arrays, sometimes pipelined, truncated or with a wrong length
    out = b""
    for _ in range(rng.randrange(1, 6)):
        args = [rng.choice(words) for _ in range(rng.randrange(1, 5))]
        f = encode(*args)
        y = rng.random()
        if y < 0.1:
            f = f[:rng.randrange(1, len(f))]                    # truncated
        elif y < 0.15:
            f = b"*1\r\n$%d\r\n" % rng.choice([65, 4096, BULK_LIMIT, BULK_LIMIT + 1, 2**63]) + b"q" * 100
        elif y < 0.2:
            f = b"*%d\r\n" % rng.choice([0, 9, ARRAY_LIMIT, ARRAY_LIMIT + 1]) + f
        elif y < 0.25:
            f = f.replace(b"$", rng.choice([b"$-", b"$x", b":", b"*"]), 1)
        out += f
    return out


def part_fuzz():
    for io in ([], ["--epoll", "2"]):
        fuzz_io(io)


def fuzz_io(io, nconns=6, chunks=150, seed=20261202):
    print(f"fuzz ({' '.join(io) or 'threads'}): seed {seed}, {nconns} connections x {chunks} chunks",
          flush=True)
    srv = Server(*io)
    victim = Client(srv.port)
    mine = {}
    for n in range(20):
        r = victim.cmd("HNEW", "victim%d" % n)
        if check(isinstance(r, int), f"victim HNEW: {r!r}"):
            mine[r] = b"victim%d" % n
    words = [b"HNEW", b"HGET", b"HSET", b"HDEL", b"GET", b"SET", b"DEL", b"INFO",
             b"PING", b"CONFIG", b"hget", b"get", b"key:", b"key:-1", b"key:x",
             b"\x00", b"\r", b"\t", b"-1", b"0", b"18446744073709551616",
             b"%d" % MAX_ID, b"%d" % (MAX_ID + 1), b"x" * 65, b"x" * 64]
    words += [b"%d" % i for i in range(500000, 500010)]    # far from the victim's 1..20
    words += [b"key:%012d" % i for i in range(600000, 600010)]
    bad = []
    reconnects = [0] * nconns
    served = [0] * nconns

    def fuzzer(k):
        rng = random.Random(seed + k)
        c = Client(srv.port)
        for _ in range(chunks):
            data = fuzz_frame(rng, words)
            try:
                c.send(data)
                # Parse every reply that arrives within a few ms.
                while select.select([c.sock], [], [], 0.005)[0]:
                    chunk = c.sock.recv(65536)
                    if not chunk:
                        raise ConnectionResetError
                    c.buf += chunk
                    try:
                        while (r := parse_reply(c.buf)) is not None:
                            c.buf = c.buf[r[1]:]
                            served[k] += 1
                    except ProtocolError as e:
                        bad.append(f"{e}: {c.buf[:80]!r}")
                        c.buf = b""
            except (ConnectionResetError, BrokenPipeError):
                # Closed after a protocol error: allowed; reconnect.
                reconnects[k] += 1
                c.close()
                c = Client(srv.port)
            # Every so often the same connection must still answer (a
            # fresh one if it was closed meanwhile).
            if rng.random() < 0.05:
                c.close()
                c = Client(srv.port)
                check(c.cmd("PING") == "PONG", "PING on a fresh connection during fuzzing")
        c.close()

    threads = [Thread(target=fuzzer, args=(k,)) for k in range(nconns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not bad, f"unparseable replies: {bad[:5]!r}")
    for i, val in mine.items():
        r = victim.cmd("HGET", i)
        check(r == val, f"victim's id {i} = {r!r} after the fuzzing")
    s = info(victim)
    check(s.get("ids") == s.get("created", 0) - s.get("deleted", 0), f"INFO does not add up: {s}")
    check(s.get("requests", 0) > 0 and s.get("errors", 0) > 0, f"INFO after fuzz: {s}")
    check(sum(served) > 0 and sum(reconnects) > 0, f"fuzz drove nothing: {served} {reconnects}")
    print(f"fuzz: {sum(served)} replies, {sum(reconnects)} reconnects; INFO {s}", flush=True)
    victim.close()
    srv.stop()


# ---------------------------------------------------------------------
# shutdown: SIGINT with idle and half-sent connections; SIGTERM under load

def part_shutdown():
    for io in ([], ["--epoll", "2"]):
        shutdown_io(io)


def shutdown_io(io):
    srv = Server(*io)
    idle = [Client(srv.port) for _ in range(4)]
    check(idle[0].cmd("HNEW", "kept1") == 1, "HNEW before shutdown")
    check(idle[1].cmd("SET", "key:77", "kept2") == "OK", "SET before shutdown")
    idle[2].send(b"*2\r\n$4\r\nHGET\r\n$1")      # half a frame
    idle[3].send(b"*2\r\n$4\r\nHNEW\r\n$100000\r\n" + b"a" * 5000)   # half a long bulk
    time.sleep(0.2)
    ok = srv.stop(signal.SIGINT)     # objects left alive must be freed
    for c in idle:
        check(c.eof(), "client not closed by the shutdown")
        c.close()
    print(f"shutdown: SIGINT with 4 open connections -> {'clean' if ok else 'FAILED'}")

    srv = Server("--global-lock", *io)
    stop = threading.Event()
    counts = []

    def load(k):
        c = Client(srv.port)
        n = 0
        try:
            while not stop.is_set():
                r = c.cmd("HNEW", "load%d" % k)
                if isinstance(r, int) and n % 2:
                    c.cmd("HDEL", r)
                n += 1
        except (EOFError, ConnectionResetError, BrokenPipeError, socket.timeout, OSError):
            pass
        counts.append(n)
        c.close()

    threads = [Thread(target=load, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    ok = srv.stop(signal.SIGTERM)    # while requests are in flight
    stop.set()
    for t in threads:
        t.join()
    check(sum(counts) > 0, "load clients made no requests")
    print(f"shutdown: SIGTERM under load ({sum(counts)} requests) -> {'clean' if ok else 'FAILED'}")


def main():
    global SERVER
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    SERVER = os.path.abspath(sys.argv[1])
    part = sys.argv[2]
    parts = {"consistency": part_consistency, "lifetime": part_lifetime,
             "bad_input": part_bad_input,
             "fuzz": part_fuzz, "shutdown": part_shutdown}
    t0 = time.time()
    parts[part]()
    print(f"{part}: {len(failures)} failures in {time.time() - t0:.1f}s", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
