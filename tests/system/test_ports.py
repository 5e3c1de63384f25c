"""Source ports of upstream queries (RFC 5452 §9.2: unpredictable, from
as large a range as practicable). dnsdamper sends every upstream query
over UDP from a new socket of its own, connected to the upstream, on a
port the kernel picks at random, and closes it with the query
(dnsdamper(8), Forwarding): an off-path attacker who found one open port
has found nothing for the next query.

The upstreams are Recorders that answer every A question with TTL 0
(RFC 1035 §3.2.1: never cached), so that every query is forwarded, and
that note the source port of each query they get.
"""

import pytest

from dnstest import query
from dnstest.daemon import Forward
from dnstest.upstream import synthesize

SEQUENTIAL = 20     # queries asked one after the other
DISTINCT_MIN = 18   # distinct ports among them at least


def _ask(d, names):
    for name in names:
        r = query.udp(d.port, name)
        assert query.addresses(r) == {"192.0.2.7"}, r.text()


@pytest.mark.timeout_s(60)
def test_every_query_from_a_port_of_its_own(recorder, dnsdamper):
    """20 queries to one upstream, one at a time, each answered before
    the next: each comes from a new socket, on a port the kernel picks
    at random from its ephemeral range (Linux: 32768-60999, some 28,000
    ports), so at least 18 of the 20 are distinct (3 repeats among 20
    picks are a chance below 1 in 10^6). A socket kept for later queries
    (up to 16 each, as dnsdamper once did) showed 5."""
    rec = recorder().answer_with(synthesize("192.0.2.7", 0))
    d = dnsdamper([Forward(".", [rec])])
    since = rec.log()[-1].t if rec.log() else 0.0
    _ask(d, [f"p{i}.ports.test" for i in range(SEQUENTIAL)])
    ports = [a.port for a in rec.log(since, qtype="A")
             if a.qname.lower().endswith("ports.test")]
    assert len(ports) == SEQUENTIAL, ports
    assert len(set(ports)) >= DISTINCT_MIN, ports


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
    never overlap. A socket kept and sent to whichever upstream came
    next would show the same port at both, interleaved."""
    one = recorder().answer_with(synthesize("192.0.2.7", 0))
    two = recorder().answer_with(synthesize("192.0.2.7", 0))
    d = dnsdamper([Forward("one.test", [one]), Forward(".", [two])])
    names = []
    for i in range(SEQUENTIAL):
        names += [f"q{i}.one.test", f"q{i}.two.test"]
    _ask(d, names)
    # (qnames come in 0x20's random case)
    ones = [x for x in one.log(qtype="A") if "one.test" in x.qname.lower()]
    twos = [x for x in two.log(qtype="A") if "two.test" in x.qname.lower()]
    assert len(ones) == len(twos) == SEQUENTIAL, (ones, twos)
    a, b = _spans(ones), _spans(twos)
    for port in set(a) & set(b):
        (a0, a1), (b0, b1) = a[port], b[port]
        assert a1 < b0 or b1 < a0, (port, a[port], b[port])
