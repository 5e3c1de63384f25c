"""The HTTP listeners, the control socket and metrics-listen, under abuse
(dnsdamper.conf(5) control-clients and metrics-clients; dnsdamper(8),
CONTROL SOCKET): a request's line and headers may take 8 KiB and its body
4 KiB, beyond which it is answered 400 and its connection closed; each
listener has at most its *-clients connections open, and one more is
refused (closed unanswered, or answered 503), counted in
dnsdamper_control_refused_total. metrics-listen is reachable by every
local user; neither may make the daemon's memory grow.
"""

import socket
import struct
import time

import pytest

from dnstest import checks, control, ports, query
from dnstest.daemon import Forward
from dnstest.zonetext import zone

FLOOD_MAX = 100 * 2**20         # octets of one header line, at most
FLOOD_SECONDS = 20              # and for at most this long
HEADERS_MAX = 8192              # dnsdamper(8): line and headers, octets
RSS_SLACK = 8 * 2**20           # what RSS may move for other reasons
CLIENTS = 3


def _rss(d):
    """The daemon's resident set size, octets (proc(5), VmRSS)."""
    with open(f"/proc/{d.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _connect(d, listener):
    if listener == "metrics":
        return socket.create_connection((ports.LOOPBACK, d.metrics_port),
                                        timeout=5)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(str(d.control_path))
    return s


def _daemon(dnsdamper, bind, extra=()):
    port = ports.free_port()
    d = dnsdamper([Forward(".", [bind])],
                  extra=[f"metrics-listen 127.0.0.1:{port}", *extra])
    d.metrics_port = port
    return d


def _read_all(s, timeout=5.0):
    data, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            got = s.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            break
        if not got:
            break
        data += got
    return data


@pytest.mark.timeout_s(60)
@pytest.mark.parametrize("listener", ["metrics", "control"])
def test_header_line_of_100mb_is_cut_off(dnsdamper, bind, listener):
    """One header line streamed without end: answered 400 once it passes
    the 8 KiB of headers, and the connection closed, after at most what
    the kernel's socket buffers took in (a few MB); the daemon's RSS does
    not grow with it (it grew by every octet sent, scanned again for an
    end of line at each read, before the bound)."""
    d = _daemon(dnsdamper, bind)
    rss0 = _rss(d)
    s = _connect(d, listener)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: dnsdamper\r\nX-Flood: ")
    chunk = b"a" * 65536
    sent, start, refused = 0, time.monotonic(), False
    try:
        while sent < FLOOD_MAX and time.monotonic() - start < FLOOD_SECONDS:
            s.sendall(chunk)
            sent += len(chunk)
    except (BrokenPipeError, ConnectionResetError):
        refused = True
    grown = _rss(d) - rss0
    reply = _read_all(s)
    s.close()
    assert refused, f"{sent} octets of one header line taken in " \
        f"{time.monotonic() - start:.1f} s, RSS +{grown}"
    assert reply.startswith(b"HTTP/1.1 400 "), reply[:200]
    assert grown < RSS_SLACK, f"RSS grew by {grown} octets"
    # and both listeners still serve
    assert control.http_tcp(d.metrics_port, "GET", "/metrics").status == 200
    assert d.control().get("/metrics").status == 200
    checks.still_serving(d)


@pytest.mark.timeout_s(60)
@pytest.mark.parametrize("framing", ["length", "chunked"])
def test_body_beyond_4kib_is_cut_off(dnsdamper, bind, framing):
    """A body of 100 MB, announced by Content-Length or sent in chunks
    of 64 KiB: refused (evhttp answers 413, or 400 for a chunk beyond the
    bound) and the connection closed after at most what the socket
    buffers took in, never read into the daemon's memory; POST /flush
    with it flushes nothing."""
    d = _daemon(dnsdamper, bind)
    checks.still_serving(d)
    cached = [c for _, c in d.control().cache_lines()]
    assert cached
    rss0 = _rss(d)
    s = _connect(d, "control")
    chunk = b"a" * 65536
    if framing == "length":
        s.sendall(b"POST /flush HTTP/1.1\r\nHost: dnsdamper\r\n"
                  b"Content-Length: %d\r\n\r\n" % FLOOD_MAX)
        piece = chunk
    else:
        s.sendall(b"POST /flush HTTP/1.1\r\nHost: dnsdamper\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n")
        piece = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
    sent, start, refused = 0, time.monotonic(), False
    try:
        while sent < FLOOD_MAX and time.monotonic() - start < FLOOD_SECONDS:
            s.sendall(piece)
            sent += len(chunk)
    except (BrokenPipeError, ConnectionResetError):
        refused = True
    grown = _rss(d) - rss0
    reply = _read_all(s)
    s.close()
    assert refused, f"{sent} octets of body taken in " \
        f"{time.monotonic() - start:.1f} s, RSS +{grown}"
    assert reply.startswith((b"HTTP/1.1 413 ", b"HTTP/1.1 400 ")), \
        reply[:200]
    assert grown < RSS_SLACK, f"RSS grew by {grown} octets"
    # nothing was flushed
    assert [c for _, c in d.control().cache_lines()] == cached
    checks.still_serving(d)


@pytest.mark.timeout_s(30)
@pytest.mark.parametrize("listener", ["metrics", "control"])
def test_connections_beyond_the_cap_are_refused(dnsdamper, bind, listener):
    d = _daemon(dnsdamper, bind, [f"control-clients {CLIENTS}",
                                  f"metrics-clients {CLIENTS}"])
    held = [_connect(d, listener) for _ in range(CLIENTS)]
    # one more, silent: closed unanswered
    extra = _connect(d, listener)
    assert _read_all(extra, 3.0) == b""
    extra.close()
    # one more with a request already sent: closed, or answered 503
    extra = _connect(d, listener)
    try:
        extra.sendall(b"GET /metrics HTTP/1.1\r\nHost: dnsdamper\r\n\r\n")
        got = _read_all(extra, 3.0)
    except (BrokenPipeError, ConnectionResetError):
        got = b""               # closed before the request went out
    extra.close()
    assert got == b"" or got.startswith(b"HTTP/1.1 503 "), got[:200]
    # those held are served
    for s in held:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: dnsdamper\r\n"
                  b"Connection: close\r\n\r\n")
        assert _read_all(s).startswith(b"HTTP/1.1 200 "), listener
        s.close()
    # once they are gone, a new one is served and counts alone
    deadline = time.monotonic() + 5
    while True:
        if listener == "metrics":
            r = control.http_tcp(d.metrics_port, "GET", "/metrics")
        else:
            r = d.control().get("/metrics")
        assert r.status == 200, r
        m = control.Exposition(r.text)
        if m.get("dnsdamper_control_connections", listener=listener) == 1 \
                or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert m.get("dnsdamper_control_connections", listener=listener) == 1
    assert m.get("dnsdamper_control_refused_total", listener=listener) == 2
    checks.still_serving(d)


DUMP_ORIGIN = "dump.test"
# one TXT of 4 strings of 200 octets: each entry's line in the dump is
# some 850 octets, and 1,000 of them more than a unix socket buffers
DUMP_ZONE = zone(DUMP_ORIGIN, 300,
                 ["* TXT " + " ".join(['"' + "x" * 200 + '"'] * 4)])
DUMP_NAMES = 1000


@pytest.mark.timeout_s(60)
def test_client_leaving_mid_dump(dnsdamper, bind, new_bind):
    """GET /cache, never read, then gone: the dump stops with its
    connection, and what libevent gave back of the request is freed (the
    sanitizer build's LeakSanitizer fails the daemon's exit otherwise,
    which the dnsdamper fixture reports). The daemon serves on."""
    ns = new_bind("dump", {DUMP_ORIGIN: DUMP_ZONE})
    d = dnsdamper([Forward(DUMP_ORIGIN, [ns]), Forward(".", [bind])])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
        u.connect((ports.LOOPBACK, d.port))
        u.settimeout(3)
        for i in range(DUMP_NAMES):
            u.send(query.make_query(f"n{i}.{DUMP_ORIGIN}", "TXT",
                                    msg_id=i).to_wire())
            u.recv(65535)
    for _ in range(2):
        s = _connect(d, "control")
        s.sendall(b"GET /cache HTTP/1.1\r\nHost: dnsdamper\r\n\r\n")
        time.sleep(0.5)             # the daemon fills the socket, waits
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
        s.close()
    # the dump still works for a client that reads it
    lines = d.control().cache_lines()
    assert sum(1 for _, c in lines if c and c.startswith("fresh, n")) == \
        DUMP_NAMES
    checks.still_serving(d)
