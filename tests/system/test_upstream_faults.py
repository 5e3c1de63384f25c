"""What an upstream's answers may do wrong, injected by the faultproxy
between the daemon and named, and what the daemon must make of it.

lowercase  the upstream does not echo the 0x20 case of the question
           (draft-vixie-dnsext-dns0x20): asked again at once without
           0x20, and never with it again; logged once
spoof      a forged datagram just before the real answer (RFC 5452 §9.1):
           wrong ID, wrong question, or the qname's case flipped (an
           off-path forger who guessed ID and port but not the 0x20
           bits): ignored, the real answer is returned
truncate   the UDP answer comes back with TC=1 and no records: asked
           again over TCP (RFC 7766 §5), the whole answer returned
"""

import re
import socket
import threading
import time

import dns.exception
import dns.flags
import dns.message
import dns.rcode
import dns.rrset
import pytest

from dnstest import query, wire
from dnstest.daemon import Forward
from dnstest.zonetext import zone

ADDR = "192.0.2.140"
FORGED = "192.0.2.66"           # what the proxy's forgeries carry
CONF = ["upstream-timeout 100ms 300ms", "query-timeout 2s"]
# long names: the chance that 0x20 leaves every one of their letters in
# lower case (so that lowering changes nothing) is 2^-30 and less
NAMES = [f"{w}thirtylettersofzeroxtwenty.cs.test"
         for w in ("first", "second", "third")]


def _setup(new_bind, faultproxy, dnsdamper, bind, **faults):
    ns = new_bind("cs", {"cs.test": zone("cs.test", 300, [f"* A {ADDR}"])})
    fp = faultproxy(ns, **faults)
    d = dnsdamper([Forward("cs.test", [fp]), Forward(".", [bind])],
                  extra=CONF)
    return ns, fp, d


def _as_named_saw(ns, qname, since):
    """The qnames of the A queries for qname (any case) in named's log
    since position since, exactly as they arrived."""
    ns.sync()
    return [m.group(1) for m in re.finditer(r"\bquery: (\S+) IN A ",
                                            ns.log_text(since))
            if m.group(1).lower() == qname]


@pytest.mark.parametrize("lowercase", [True, False])
def test_upstream_that_lowers_the_question_still_answers(
        new_bind, faultproxy, dnsdamper, bind, lowercase):
    """lowercase: every name is answered; the daemon says once that the
    upstream does not preserve case; after that, names go to it in lower
    case only, asked once. Negative control (the proxy echoes the case):
    no such log, and named sees 0x20 mixed case."""
    ns, fp, d = _setup(new_bind, faultproxy, dnsdamper, bind,
                       lowercase=lowercase)
    marks = []
    for name in NAMES:
        marks.append(ns.mark())
        r = query.udp(d.port, name, timeout=2 + 3)
        assert r.rcode == dns.rcode.NOERROR, r.text()
        assert query.addresses(r) == {ADDR}, r.text()
    said = re.findall(rf"upstream 127\.0\.0\.1:{fp.port} does not preserve "
                      rf"the case of questions; not using 0x20 with it",
                      d.stderr())
    last = _as_named_saw(ns, NAMES[-1], marks[-1])
    if lowercase:
        assert fp.stats()["lowercased"] >= 1
        assert len(said) == 1, d.stderr()
        assert last == [NAMES[-1]], \
            f"named saw {last}, want one query in lower case"
    else:
        assert said == [], d.stderr()
        assert len(last) == 1 and last[0] != NAMES[-1], \
            f"named saw {last}, want one query in 0x20 mixed case"


@pytest.mark.parametrize("kind", ["id", "question", "case"])
def test_forged_answers_are_ignored(new_bind, faultproxy, dnsdamper, bind,
                                    kind):
    """Every UDP answer of the upstream is preceded by a forgery of this
    kind, carrying A 192.0.2.66. The client must get the real 192.0.2.140
    every time (RFC 5452 §9.1: accept only a response whose ID and
    question, 0x20 case included, match what was sent)."""
    ns, fp, d = _setup(new_bind, faultproxy, dnsdamper, bind,
                       spoof=1.0, spoof_kind=kind)
    got = []
    for name in NAMES:
        r = query.udp(d.port, name, timeout=2 + 3)
        got.append((r.rcode, query.addresses(r)))
    assert fp.stats()["spoofed"] >= len(NAMES)
    assert got == [(dns.rcode.NOERROR, {ADDR})] * len(NAMES), \
        f"forgery ({kind}) accepted: {got}\n--- daemon:\n{d.stderr()}"
    # named echoes the case it is sent: a forgery is no reason to think
    # otherwise, and to drop 0x20 for it
    assert "does not preserve the case" not in d.stderr(), d.stderr()


def test_truncated_answer_is_asked_again_over_tcp(new_bind, faultproxy,
                                                  dnsdamper, bind):
    ns, fp, d = _setup(new_bind, faultproxy, dnsdamper, bind, truncate=1.0)
    mark = ns.mark()
    r = query.udp(d.port, NAMES[0], timeout=2 + 3)
    assert r.rcode == dns.rcode.NOERROR and not r.tc, r.text()
    assert query.addresses(r) == {ADDR}, r.text()
    st = fp.stats()
    assert st["truncated"] >= 1 and st["received_tcp"] >= 1, st
    # named answered it over TCP (the UDP copy was the one truncated)
    assert ns.count(NAMES[0], "A", since=mark, tcp=True) == 1


# --- a hostile upstream over TCP --------------------------------------------

STREAM_MAX = 300 * 2**20        # octets the upstream streams, at most
STREAM_SECONDS = 3.0            # and for at most this long
RSS_SLACK = 16 * 2**20


class _Flooder:
    """An upstream on one loopback port: over UDP every query gets TC=1
    (RFC 7766 §5: ask again over TCP); over TCP, the query gets copies of
    an answer with the qname's case flipped, framed, without end (up to
    STREAM_MAX or STREAM_SECONDS): what the daemon must not keep."""

    def __init__(self):
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.port = self.udp.getsockname()[1]
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", self.port))
        self.tcp.listen(4)
        self.streamed = 0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=f, daemon=True)
                         for f in (self._serve_udp, self._serve_tcp)]
        for t in self._threads:
            t.start()

    def _serve_udp(self):
        self.udp.settimeout(0.2)
        while not self._stop.is_set():
            try:
                data, peer = self.udp.recvfrom(65535)
                r = dns.message.make_response(dns.message.from_wire(data))
            except (socket.timeout, dns.exception.DNSException):
                continue
            r.flags |= dns.flags.TC
            self.udp.sendto(r.to_wire(), peer)

    def _serve_tcp(self):
        self.tcp.settimeout(0.2)
        while not self._stop.is_set():
            try:
                s, _ = self.tcp.accept()
            except socket.timeout:
                continue
            with s:
                self._flood(s)

    def _flood(self, s):
        s.settimeout(2)
        raw = wire.TcpReader(s).read(2)
        if raw is None:
            return
        q = dns.message.from_wire(raw)
        r = dns.message.make_response(q)
        r.answer.append(dns.rrset.from_text(q.question[0].name, 300, "IN",
                                            "A", "192.0.2.67"))
        out = bytearray(r.to_wire())
        for i in range(12, 12 + len(q.question[0].name.to_wire())):
            if chr(out[i]).isalpha():
                out[i] ^= 0x20          # the qname in the other case
        chunk = wire.frame(bytes(out)) * 1000
        start = time.monotonic()
        try:
            while self.streamed < STREAM_MAX and \
                    time.monotonic() - start < STREAM_SECONDS:
                s.sendall(chunk)
                self.streamed += len(chunk)
        except OSError:
            pass

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(5)
        self.udp.close()
        self.tcp.close()


@pytest.mark.timeout_s(30)
def test_tcp_upstream_streaming_mismatches_is_not_buffered(dnsdamper, bind):
    """An upstream's TCP connection carries only our query: what does not
    answer it (here the qname in another case, 0x20) ends the attempt and
    the connection, rather than being ignored while the stream piles up
    unread in memory until the query-timeout."""
    up = _Flooder()
    try:
        d = dnsdamper([Forward("flood.test", [up.port]),
                       Forward(".", [bind])],
                      extra=["query-timeout 4s"])
        rss0 = _rss(d)
        r = query.udp(d.port, "x.flood.test", timeout=6)
        grown = _rss(d) - rss0
    finally:
        up.stop()
    assert r.rcode == dns.rcode.SERVFAIL, r.text()
    assert grown < RSS_SLACK, f"RSS grew by {grown} octets while the " \
        f"upstream streamed {up.streamed}"
    d.assert_alive()


def _rss(d):
    with open(f"/proc/{d.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")
