"""dnsdamperctl monitor and GET /monitor: answered queries as they
happen, one JSON object per line, filtered by qname suffix, client and
rcode; a reader that never reads loses lines (and is told how many),
while the daemon answers every query; at most 4 watchers at once.

The values checked come from the zone (example.test: www A 192.0.2.80;
nothing at nx-*.example.test: NXDOMAIN), the default local zone
localhost. (RFC 6761 §6.3: 127.0.0.1), the client address each query
is sent from (127.0.0.1 or 127.0.0.2) and the protocol it is sent over.
"""

import json
import socket
import subprocess
import time

import dns.message
import dns.query
import pytest

from dnstest import control, query

WATCHERS_MAX = 4                # MONITOR_WATCHERS_MAX


class Watch:
    """A GET /monitor on the control socket, read by hand: the status
    line and headers at once (the watcher is registered when they come),
    then the chunked body, line by line."""

    def __init__(self, path, params=""):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(5.0)
        self.s.connect(str(path))
        self.s.sendall(f"GET /monitor{params} HTTP/1.1\r\nHost: x\r\n\r\n"
                       .encode())
        self.buf = b""
        head = self._until(b"\r\n\r\n")
        self.status = int(head.split()[1])
        self.body = b""

    def _until(self, sep):
        while sep not in self.buf:
            data = self.s.recv(65536)
            if not data:
                raise EOFError(self.buf)
            self.buf += data
        out, self.buf = self.buf.split(sep, 1)
        return out

    def _chunk(self):
        """Move one whole chunk from buf to body, reading as needed; a
        timeout leaves both as they were."""
        while True:
            if b"\r\n" in self.buf:
                size_line, rest = self.buf.split(b"\r\n", 1)
                size = int(size_line, 16)
                if len(rest) >= size + 2:
                    self.body += rest[:size]
                    self.buf = rest[size + 2:]
                    return
            data = self.s.recv(65536)
            if not data:
                raise EOFError(self.buf)
            self.buf += data

    def lines(self, n, timeout=10.0):
        """The next n lines of the stream, each a dict."""
        deadline = time.monotonic() + timeout
        out = []
        while len(out) < n:
            assert time.monotonic() < deadline, (out, self.body)
            while b"\n" in self.body and len(out) < n:
                line, self.body = self.body.split(b"\n", 1)
                out.append(json.loads(line))
            if len(out) < n:
                self._chunk()
        return out

    def close(self):
        self.s.close()


def _ask(port, qname, rdtype="A", source="127.0.0.1", tcp=False):
    q = dns.message.make_query(qname, rdtype)
    if tcp:
        return dns.query.tcp(q, "127.0.0.1", port=port, timeout=3.0,
                             source=source)
    return dns.query.udp(q, "127.0.0.1", port=port, timeout=3.0,
                         source=source)


def test_monitor_fields_and_filters(dd, bind):
    everything = Watch(dd.control_path)
    by_name = Watch(dd.control_path, "?name=Example.TEST")
    by_rcode = Watch(dd.control_path, "?rcode=NXDOMAIN")
    by_client = Watch(dd.control_path, "?client=127.0.0.2")
    for w in (everything, by_name, by_rcode, by_client):
        assert w.status == 200
    _ask(dd.port, "www.example.test")                       # upstream
    _ask(dd.port, "www.example.test", tcp=True)             # cache
    _ask(dd.port, "localhost")                              # local
    _ask(dd.port, "nx-1.example.test", source="127.0.0.2")  # NXDOMAIN
    a = everything.lines(4)
    assert [x["name"] for x in a] == ["www.example.test.",
                                      "www.example.test.", "localhost.",
                                      "nx-1.example.test."], a
    assert [x["source"] for x in a] == ["upstream", "cache", "local",
                                        "upstream"], a
    assert a[0]["upstream"] == f"127.0.0.1:{bind.port}"
    assert [x["protocol"] for x in a] == ["udp", "tcp", "udp", "udp"]
    assert [x["client"] for x in a] == ["127.0.0.1"] * 3 + ["127.0.0.2"]
    assert [x["rcode"] for x in a] == ["NOERROR"] * 3 + ["NXDOMAIN"]
    assert a[0]["type"] == "A" and a[0]["class"] == "IN"
    assert len(a[0]["answer"]) == 1
    assert a[0]["answer"][0].split()[-2:] == ["A", "192.0.2.80"]
    assert a[2]["answer"][0].split()[-1] == "127.0.0.1"
    assert a[3]["answer"] == []
    for x in a:
        assert isinstance(x["latency_ms"], int) and x["latency_ms"] >= 0
        assert x["time"].endswith("Z") and isinstance(x["port"], int)
    # each filter sees its own, in order; a query more for each shows
    # that nothing else was waiting before it
    _ask(dd.port, "nx-2.example.test", source="127.0.0.2")
    assert [x["name"] for x in by_name.lines(4)] == [
        "www.example.test.", "www.example.test.", "nx-1.example.test.",
        "nx-2.example.test."]
    assert [x["name"] for x in by_rcode.lines(2)] == [
        "nx-1.example.test.", "nx-2.example.test."]
    assert [x["name"] for x in by_client.lines(2)] == [
        "nx-1.example.test.", "nx-2.example.test."]
    for w in (everything, by_name, by_rcode, by_client):
        w.close()


def test_bad_filters_and_the_watcher_cap(dd):
    for params in ("?name=a..b", "?client=nowhere", "?rcode=MAYBE"):
        r = dd.control().get(f"/monitor{params}")
        assert r.status == 400, r
    watches = [Watch(dd.control_path) for _ in range(WATCHERS_MAX)]
    assert all(w.status == 200 for w in watches)
    extra = Watch(dd.control_path)
    assert extra.status == 503
    extra.close()
    watches.pop().close()
    # the closed one's place is free again (bounded: every 0.05 s, 5 s)
    deadline = time.monotonic() + 5
    while True:
        w = Watch(dd.control_path)
        if w.status == 200 or time.monotonic() > deadline:
            break
        w.close()
        time.sleep(0.05)
    assert w.status == 200
    for x in watches + [w]:
        x.close()


@pytest.mark.timeout_s(60)
def test_reader_that_never_reads(dd):
    """A watcher that stops reading: every query is still answered, a
    reading watcher gets every line, and the stalled one, once it reads
    again, has been told of every line it lost: lines + lost = queries."""
    stalled = Watch(dd.control_path)
    reader = Watch(dd.control_path)
    assert stalled.status == reader.status == 200
    n = 4000        # ~250 octets a line: 1 MB, past the socket buffers
    got = 0         # and MONITOR_BUFFER_MAX (256 KiB)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(3.0)
        s.connect(("127.0.0.1", dd.port))
        for i in range(n):
            s.send(query.make_query("www.example.test", "A").to_wire())
            s.recv(4096)
            if i % 200 == 199:
                got += len(reader.lines(200))
    assert got == n
    # It reads again: what was buffered comes, then, before the next
    # line that goes out, the count of those lost. Each time the stream
    # is quiet (0.5 s), one more query (bounded: 40 of them).
    stalled.s.settimeout(0.5)
    seen = lost = more = 0
    while not (lost > 0 and seen + lost == n + more):
        try:
            (x,) = stalled.lines(1, timeout=30)
        except TimeoutError:
            assert more < 40, (seen, lost, more)
            _ask(dd.port, "www.example.test")
            more += 1
            continue
        if "lost" in x:
            lost += x["lost"]
        else:
            assert x["name"] == "www.example.test."
            seen += 1
        assert seen + lost <= n + more
    stalled.close()
    reader.close()


def test_dnsdamperctl_monitor(dd, tmp_path):
    """dnsdamperctl monitor --name streams the lines as they happen."""
    out = tmp_path / "monitor.out"
    with open(out, "wb") as f:
        p = subprocess.Popen([control.ctl_path(), "-s",
                              str(dd.control_path), "monitor", "--name",
                              "example.test"], stdout=f,
                             stderr=subprocess.STDOUT)
    try:
        # bounded: a query every 0.05 s for up to 10 s until it shows
        deadline = time.monotonic() + 10
        while b"pipe1" not in out.read_bytes():
            assert time.monotonic() < deadline, out.read_bytes()
            _ask(dd.port, "localhost")
            _ask(dd.port, "pipe1.example.test")
            time.sleep(0.05)
        lines = [json.loads(x) for x in out.read_text().splitlines()]
        assert {x["name"] for x in lines} == {"pipe1.example.test."}
    finally:
        p.terminate()
        p.wait(5)
    r = subprocess.run([control.ctl_path(), "-s", str(dd.control_path),
                        "stats", "--name", "x"], capture_output=True)
    assert r.returncode == 64


@pytest.mark.timeout_s(90)
def test_quiet_stream_stays_open(dd):
    """A monitor with nothing to show for longer than the control
    socket's timeout (30 s, control.c) is not closed: the next answer
    still comes."""
    w = Watch(dd.control_path)
    assert w.status == 200
    time.sleep(35)
    _ask(dd.port, "www.example.test")
    (x,) = w.lines(1)
    assert x["name"] == "www.example.test."
    w.close()
