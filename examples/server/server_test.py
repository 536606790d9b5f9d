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
LINE_MAX = 128
MAX_ID = 1 << 20
REPLY_RE = re.compile(rb"^(OK|ERR)( [\x20-\x7e]*)?$")

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


class Client:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def line(self):
        """One reply line (without newline); None on EOF."""
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def req(self, text):
        self.send(text.encode() + b"\n")
        r = self.line()
        return None if r is None else r.decode("ascii", "replace")

    def eof(self):
        """True if the server closed the connection (nothing left)."""
        try:
            return self.line() is None
        except (ConnectionResetError, socket.timeout):
            return False

    def close(self):
        self.sock.close()


def stats(c):
    r = c.req("STATS")
    if not check(r is not None and r.startswith("OK "), f"STATS answered {r!r}"):
        return {}
    return {k: (int(v) if v.isdigit() else v)
            for k, v in (f.split("=") for f in r[3:].split())}


def wait_objects_settle(c, want_ids):
    """Objects are freed after a grace period: wait until the allocated
    objects equal the live ids (bounded)."""
    deadline = time.time() + 20
    while True:
        s = stats(c)
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
                val = f"c{ci}-{n}"
                r = c.req(f"NEW {val}")
                m = re.fullmatch(r"OK (\d+)", r or "")
                if not check(m, f"client {ci}: NEW answered {r!r}"):
                    break
                i = int(m.group(1))
                with owner_lock:
                    check(i not in owner, f"id {i} handed out twice")
                    owner[i] = ci
                mine[i] = val
                created += 1
            elif op < 0.6:
                i = rng.choice(list(mine))
                r = c.req(f"GET {i}")
                check(r == f"OK {mine[i]}", f"client {ci}: GET {i} = {r!r}, want OK {mine[i]}")
            elif op < 0.8:
                i = rng.choice(list(mine))
                val = f"c{ci}-{n}s"
                r = c.req(f"SET {i} {val}")
                if check(r == "OK", f"client {ci}: SET {i} answered {r!r}"):
                    mine[i] = val
            else:
                i = rng.choice(list(mine))
                r = c.req(f"DEL {i}")
                check(r == "OK", f"client {ci}: DEL {i} answered {r!r}")
                del mine[i]
                deleted.append(i)
                ndel += 1
                r = c.req(f"GET {i}")
                check(r == "ERR NOT_FOUND", f"client {ci}: GET of deleted {i} = {r!r}")
        for i, val in mine.items():
            r = c.req(f"GET {i}")
            check(r == f"OK {val}", f"client {ci}: final GET {i} = {r!r}, want OK {val}")
        for i in deleted:
            for cmd in (f"GET {i}", f"SET {i} x", f"DEL {i}"):
                r = c.req(cmd)
                check(r == "ERR NOT_FOUND", f"client {ci}: {cmd} of deleted id = {r!r}")
        results[ci] = (len(mine), created, ndel)
        c.req("QUIT")
        c.close()

    def scanner():
        """Reads other clients' ids while they change: every answer is
        NOT_FOUND or a value its owner wrote (never another client's)."""
        c = Client(srv.port)
        rng = random.Random(7)
        while not stop_scan.is_set():
            with owner_lock:
                known = list(owner.items())
            if not known:
                time.sleep(0.001)
                continue
            i, ci = rng.choice(known)
            r = c.req(f"GET {i}")
            if r != "ERR NOT_FOUND":
                check(r is not None and r.startswith(f"OK c{ci}-"),
                      f"scanner: GET {i} (client {ci}'s) = {r!r}")
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
    check(s.get("ids") == live, f"STATS ids={s.get('ids')}, clients hold {live}")
    check(s.get("created") == created, f"STATS created={s.get('created')}, clients made {created}")
    check(s.get("deleted") == ndel, f"STATS deleted={s.get('deleted')}, clients deleted {ndel}")
    check(s.get("ids") == s.get("created", 0) - s.get("deleted", 0), f"STATS does not add up: {s}")
    check(s.get("objects") == live, f"STATS objects={s.get('objects')} after the grace periods, want {live}")
    check(s.get("mode") == srv.mode, f"STATS mode={s.get('mode')}")
    c.close()
    print(f"consistency ({srv.mode}): {nclients} clients, {created} created, "
          f"{ndel} deleted, {live} live; STATS {s}", flush=True)
    srv.stop()


def part_consistency():
    consistency_mode([])
    consistency_mode(["--global-lock"])


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
            c.send(b"".join(b"NEW c%d\n" % k for k in range(batch)))
            new = []
            for _ in range(batch):
                r = c.line()
                m = re.fullmatch(rb"OK (\d+)", r or b"")
                if not check(m, f"churn: NEW answered {r!r}"):
                    stop.set()
                    return
                new.append(int(m.group(1)))
            latest[0] = new[-1]
            c.send(b"".join(b"DEL %d\n" % i for i in new))
            for i in new:
                r = c.line()
                check(r == b"OK", f"churn: DEL {i} answered {r!r}")
            churned[0] += batch
        c.close()

    def reader(k):
        rng = random.Random(k)
        c = Client(srv.port)
        while not stop.is_set():
            base = latest[0]
            ids = [max(1, base + rng.randrange(-batch, batch)) for _ in range(batch)]
            c.send(b"".join(b"GET %d\n" % i for i in ids))
            for i in ids:
                r = c.line()
                if r != b"ERR NOT_FOUND":
                    check(r is not None and re.fullmatch(rb"OK c\d+", r),
                          f"reader: GET {i} = {r!r}")
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
    check(s.get("ids") == 0 and s.get("objects") == 0, f"STATS after churn: {s}")
    c.close()
    print(f"lifetime ({srv.mode}): {churned[0]} objects created and deleted "
          f"under {sum(looked)} concurrent lookups", flush=True)
    srv.stop()


def part_lifetime():
    lifetime_mode([])
    lifetime_mode(["--global-lock"])


# ---------------------------------------------------------------------
# bad_input: every malformed request gets a clear error, the connection
# stays usable, and nothing happens to other clients' objects

BAD = [
    (b"FOO", "ERR unknown command"),
    (b"get 1", "ERR unknown command"),
    (b"", "ERR empty request"),
    (b"   ", "ERR empty request"),
    (b"GET", "ERR usage: GET <id>"),
    (b"GET 1 2", "ERR usage: GET <id>"),
    (b"GET abc", "ERR bad id"),
    (b"GET -1", "ERR bad id"),
    (b"GET 1x", "ERR bad id"),
    (b"GET 0", "ERR id out of range"),
    (b"GET %d" % (MAX_ID + 1), "ERR id out of range"),
    (b"GET 99999999999999999999999999", "ERR id out of range"),
    (b"GET 999999", "ERR NOT_FOUND"),
    (b"SET 1", "ERR usage: SET <id> <value>"),
    (b"SET 999999 v", "ERR NOT_FOUND"),
    (b"SET 1 " + b"x" * (VALUE_MAX + 1), "ERR value too long"),
    (b"DEL", "ERR usage: DEL <id>"),
    (b"DEL 999999", "ERR NOT_FOUND"),
    (b"NEW", "ERR usage: NEW <value>"),
    (b"NEW a b", "ERR usage: NEW <value>"),
    (b"NEW " + b"x" * (VALUE_MAX + 1), "ERR value too long"),
    (b"STATS now", "ERR usage: STATS"),
    (b"\x00\x01\x02\xff\xfe", "ERR bad input (non-printable byte)"),
    (b"GET \x001", "ERR bad input (non-printable byte)"),
    (b"NEW caf\xc3\xa9", "ERR bad input (non-printable byte)"),
    (b"\x1b[2J", "ERR bad input (non-printable byte)"),
]


def part_bad_input():
    srv = Server()
    other = Client(srv.port)
    r = other.req("NEW precious")
    check(r == "OK 1", f"first NEW answered {r!r}")

    c = Client(srv.port)
    for req, want in BAD:
        c.send(req + b"\n")
        r = c.line()
        check(r == want.encode(), f"{req!r}: got {r!r}, want {want!r}")
    # Pipelined, CRLF, the longest value and the longest line are fine.
    c.send(b"NEW " + b"v" * VALUE_MAX + b"\r\nGET 1\n")
    r1, r2 = c.line(), c.line()
    check(r1 == b"OK 2", f"NEW of a {VALUE_MAX}-byte value with CRLF: {r1!r}")
    check(r2 == b"OK precious", f"GET 1 after the bad requests: {r2!r}")
    longest = b"GET " + b"0" * (LINE_MAX - 5) + b"1"
    check(len(longest) == LINE_MAX, "test: longest line length")
    c.send(longest + b"\n")
    check(c.line() == b"OK precious", "a line of exactly LINE_MAX bytes")
    # Errors are counted.
    s = stats(c)
    check(s.get("errors", 0) >= len(BAD), f"STATS errors={s.get('errors')}")
    # An over-long line: error, then the server closes the connection.
    c.send(b"NEW " + b"y" * (LINE_MAX * 4) + b"\n")
    r = c.line()
    check(r == b"ERR line too long", f"over-long line: {r!r}")
    check(c.eof(), "connection not closed after an over-long line")
    c.close()
    # Also when the over-long line never ends.
    c = Client(srv.port)
    c.send(b"x" * (LINE_MAX + 1))
    r = c.line()
    check(r == b"ERR line too long", f"unterminated over-long line: {r!r}")
    check(c.eof(), "connection not closed after an unterminated over-long line")
    c.close()
    # QUIT answers and closes.
    c = Client(srv.port)
    check(c.req("QUIT") == "OK bye", "QUIT")
    check(c.eof(), "connection not closed after QUIT")
    c.close()
    # The other client's object is untouched, its connection fine.
    check(other.req("GET 1") == "OK precious", "other client's value changed")
    check(other.req("DEL 2") == "OK", "DEL 2")
    s = stats(other)
    check(s.get("ids") == 1 and s.get("created") == 2 and s.get("deleted") == 1,
          f"STATS after the bad input: {s}")
    other.close()
    srv.stop()

    # Connection limit: the extra client gets "ERR busy" and is closed;
    # the others keep working.
    srv = Server("--max-conns", "2")
    a, b = Client(srv.port), Client(srv.port)
    check(a.req("NEW a") == "OK 1" and b.req("GET 1") == "OK a", "two clients")
    extra = Client(srv.port)
    r = extra.line()
    check(r == b"ERR busy", f"third client over --max-conns 2: {r!r}")
    check(extra.eof(), "busy client not closed")
    extra.close()
    check(a.req("GET 1") == "OK a", "client after a refused one")
    a.close()
    b.close()
    srv.stop()

    # Id space exhausted: "ERR full"; a freed id is reused once the
    # cyclic cursor wraps; ids past --max-id are out of range.
    srv = Server("--max-id", "2")
    c = Client(srv.port)
    got = [c.req("NEW a"), c.req("NEW b"), c.req("NEW c")]
    check(got == ["OK 1", "OK 2", "ERR full"], f"--max-id 2: {got!r}")
    check(c.req("GET 3") == "ERR id out of range", "GET 3 with --max-id 2")
    got = [c.req("DEL 1"), c.req("NEW d"), c.req("GET 1")]
    check(got == ["OK", "OK 1", "OK d"], f"reuse after wrap: {got!r}")
    c.close()
    srv.stop()
    print("bad_input: %d malformed requests, limits, other clients intact" % len(BAD))


# ---------------------------------------------------------------------
# fuzz: random bytes and random token soup from several connections

def part_fuzz(nconns=6, chunks=150, seed=20261202):
    print(f"fuzz: seed {seed}, {nconns} connections x {chunks} chunks", flush=True)
    srv = Server()
    victim = Client(srv.port)
    mine = {}
    for n in range(20):
        r = victim.req(f"NEW victim{n}")
        m = re.fullmatch(r"OK (\d+)", r or "")
        if check(m, f"victim NEW: {r!r}"):
            mine[int(m.group(1))] = f"victim{n}"
    words = [b"NEW", b"GET", b"SET", b"DEL", b"STATS", b"new", b"GET\x00",
             b"\r", b"\t", b"-1", b"0", b"18446744073709551616",
             b"%d" % MAX_ID, b"%d" % (MAX_ID + 1)]
    bad_replies = []
    reconnects = [0] * nconns

    def fuzzer(k):
        rng = random.Random(seed + k)
        c = Client(srv.port)
        for _ in range(chunks):
            if rng.random() < 0.5:
                data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
                if rng.random() < 0.7:
                    data += b"\n"
            else:
                toks = []
                for _ in range(rng.randrange(1, 5)):
                    x = rng.random()
                    if x < 0.5:
                        toks.append(rng.choice(words))
                    elif x < 0.8:
                        # Ids far from the victim's (1..20).
                        toks.append(b"%d" % rng.randrange(500000, MAX_ID + 10))
                    else:
                        toks.append(bytes(rng.randrange(33, 127) for _ in range(rng.randrange(1, 80))))
                data = b" ".join(toks) + rng.choice([b"\n", b"\r\n", b"\n\n", b""])
            try:
                c.send(data)
                # Read the replies that arrive within a few ms, so a
                # close by the server is seen before the next chunk.
                while select.select([c.sock], [], [], 0.005)[0]:
                    chunk = c.sock.recv(65536)
                    if not chunk:
                        raise ConnectionResetError
                    c.buf += chunk
                    while b"\n" in c.buf:
                        line, _, c.buf = c.buf.partition(b"\n")
                        if not REPLY_RE.match(line):
                            bad_replies.append(line)
            except (ConnectionResetError, BrokenPipeError):
                # Closed after an over-long line: allowed; reconnect.
                reconnects[k] += 1
                c.close()
                c = Client(srv.port)
        c.close()

    threads = [Thread(target=fuzzer, args=(k,)) for k in range(nconns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not bad_replies, f"malformed reply lines: {bad_replies[:5]!r}")
    for i, val in mine.items():
        r = victim.req(f"GET {i}")
        check(r == f"OK {val}", f"victim's id {i} = {r!r} after the fuzzing")
    s = stats(victim)
    check(s.get("ids") == s.get("created", 0) - s.get("deleted", 0), f"STATS does not add up: {s}")
    check(s.get("requests", 0) > 0 and s.get("errors", 0) > 0, f"STATS after fuzz: {s}")
    print(f"fuzz: {sum(reconnects)} reconnects; STATS {s}", flush=True)
    victim.close()
    srv.stop()


# ---------------------------------------------------------------------
# shutdown: SIGINT with idle and half-sent connections; SIGTERM under load

def part_shutdown():
    srv = Server()
    idle = [Client(srv.port) for _ in range(3)]
    check(idle[0].req("NEW kept1") == "OK 1", "NEW before shutdown")
    check(idle[1].req("NEW kept2") == "OK 2", "NEW before shutdown")
    idle[2].send(b"GET 1")          # half a request, no newline
    time.sleep(0.2)
    ok = srv.stop(signal.SIGINT)     # objects left alive must be freed
    for c in idle:
        check(c.eof(), "client not closed by the shutdown")
        c.close()
    print(f"shutdown: SIGINT with 3 open connections -> {'clean' if ok else 'FAILED'}")

    srv = Server("--global-lock")
    stop = threading.Event()
    counts = []

    def load(k):
        c = Client(srv.port)
        n = 0
        try:
            while not stop.is_set():
                r = c.req(f"NEW load{k}")
                if r is None:
                    break
                m = re.fullmatch(r"OK (\d+)", r)
                if m and n % 2:
                    c.req(f"DEL {m.group(1)}")
                n += 1
        except (ConnectionResetError, BrokenPipeError, socket.timeout, OSError):
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
