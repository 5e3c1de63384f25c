"""Source ports of upstream queries (RFC 5452 §9.2: unpredictable, from
as large a range as practicable). dnsdamper keeps a UDP socket open
between queries (dnsdamper(8), UPSTREAM SOCKETS), within bounds: each is
connected to one upstream for good and carries at most 16 queries, one
at a time, each only once the last was answered, so that ports keep
changing (every new socket gets a port the kernel picks at random) and an
upstream never learns a port that carries another upstream's queries.

The upstreams are Recorders that answer every A question with TTL 0
(RFC 1035 §3.2.1: never cached), so that every query is forwarded, and
that note the source port of each query they get.
"""

import pytest

from dnstest import query
from dnstest.daemon import Forward
from dnstest.upstream import synthesize

USES_MAX = 16       # queries one socket carries at most (transport.c)
SEQUENTIAL = 100    # queries asked one after the other


def _ask(d, names):
    for name in names:
        r = query.udp(d.port, name)
        assert query.addresses(r) == {"192.0.2.7"}, r.text()


@pytest.mark.timeout_s(60)
def test_source_ports_keep_changing(recorder, dnsdamper):
    """100 queries one at a time, each answered before the next: however
    the sockets' random budgets fall, a socket carries at most 16, so at
    least ceil(100 / 16) = 7 sockets carried them, each on its own port
    (a socket is closed before the next is opened only when its budget
    is spent, and a port the kernel gives again to the next socket, a
    chance of 1 in some 28,000 each time, would count once). A new socket
    per query would show 100; one socket kept for good, 1."""
    rec = recorder().answer_with(synthesize("192.0.2.7", 0))
    d = dnsdamper([Forward(".", [rec])])
    since = rec.log()[-1].t if rec.log() else 0.0
    _ask(d, [f"p{i}.ports.test" for i in range(SEQUENTIAL)])
    ports = [a.port for a in rec.log(since, qtype="A")
             if a.qname.lower().endswith("ports.test")]
    assert len(ports) == SEQUENTIAL, ports
    least = -(-SEQUENTIAL // USES_MAX)
    assert len(set(ports)) >= least, ports


def _spans(log):
    """port -> (first, last) arrival time of the queries from it."""
    spans = {}
    for a in log:
        first, last = spans.get(a.port, (a.t, a.t))
        spans[a.port] = (min(first, a.t), max(last, a.t))
    return spans


@pytest.mark.timeout_s(60)
def test_a_port_carries_one_upstreams_queries(recorder, dnsdamper):
    """Queries for two forward zones, each with its own upstream, asked
    in turn: a socket that carried a query to one upstream never carries
    one to the other. While a port carries one upstream's queries (from
    the first to the last of them), its socket is open, so no other
    socket can have that port: the two upstreams' spans of any port
    never overlap. A socket kept idle and sent to whichever upstream
    came next would show the same port at both, interleaved."""
    one = recorder().answer_with(synthesize("192.0.2.7", 0))
    two = recorder().answer_with(synthesize("192.0.2.7", 0))
    d = dnsdamper([Forward("one.test", [one]), Forward(".", [two])])
    names = []
    for i in range(SEQUENTIAL // 2):
        names += [f"q{i}.one.test", f"q{i}.two.test"]
    _ask(d, names)
    # (qnames come in 0x20's random case)
    ones = [x for x in one.log(qtype="A") if "one.test" in x.qname.lower()]
    twos = [x for x in two.log(qtype="A") if "two.test" in x.qname.lower()]
    assert len(ones) == len(twos) == SEQUENTIAL // 2, (ones, twos)
    a, b = _spans(ones), _spans(twos)
    for port in set(a) & set(b):
        (a0, a1), (b0, b1) = a[port], b[port]
        assert a1 < b0 or b1 < a0, (port, a[port], b[port])
    # and the sockets were reused at all: fewer ports than queries
    assert len(a) < SEQUENTIAL // 2 and len(b) < SEQUENTIAL // 2, (a, b)
