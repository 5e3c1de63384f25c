"""EDNS fallback (RFC 6891 §7; dnsdamper.conf(5) "EDNS"): an upstream that
does not speak EDNS answers a query with an OPT record FORMERR without OPT.
dnsdamper asks it the same again without OPT, counts that in
dnsdamper_upstream_edns_fallbacks_total, and once the plain query is
answered it knows the upstream does not speak EDNS (`dnsdamperctl
upstreams`: EDNS no; dnsdamper_upstream_edns 0) and sends it plain queries
only. None of this is a failure: the upstream stays up however many
queries it FORMERRs.

The upstream is tests/faultproxy with no_edns in front of a named serving
ef.test, where every name has A 192.0.2.60.

What a client gets: the answer, and an OPT record if and only if it sent
one (RFC 6891 §6.1.1: an OPT in a request gets one in the response). That
OPT is dnsdamper's own (EDNS is hop by hop, §6.1.1: an OPT is never
forwarded or cached), with our payload size, the client's DO copied
(RFC 3225 §3) and nothing from the upstream, which sent none.
"""

import dns.flags
import dns.rcode

from dnstest import query
from dnstest.daemon import Forward, upstream
from dnstest.zonetext import zone

ORIGIN = "ef.test"
ADDR = "192.0.2.60"
ZONE = zone(ORIGIN, 300, ["* A " + ADDR])
EDNS_SIZE = 1232        # dnsdamper.conf(5) edns-buffer-size default


def _edns_flags(q):
    """The EDNS part of a named query-log flag string: E(0) is EDNS."""
    return "E(" in q.flags


def test_upstream_without_edns_is_asked_plain_and_stays_up(
        new_bind, faultproxy, dnsdamper, bind):
    ns = new_bind("ef", {ORIGIN: ZONE})
    fp = faultproxy(ns, no_edns=True)
    # Retransmission timeouts of 2 s and up: a loaded machine must not
    # make a late answer look like a lost one and add a query to the
    # counts below.
    d = dnsdamper([Forward(ORIGIN, [fp]), Forward(".", [bind])],
                  extra=["upstream-timeout 2s 4s"])
    name = upstream(fp.port)
    mark = ns.mark()

    # The first query: with OPT, FORMERR, asked again plain, answered.
    r = query.udp(d.port, f"first.{ORIGIN}")
    assert r.rcode == dns.rcode.NOERROR, r.text()
    assert query.addresses(r) == {ADDR}, r.text()
    assert r.msg.edns == 0 and r.msg.payload == EDNS_SIZE, r.text()
    d.wait_log(rf"upstream {name} does not speak EDNS", timeout=3.0)

    # More names than the 3 failures in a row that would mark it down,
    # from clients with and without EDNS, with DO and without.
    for i in range(8):
        edns = i % 2 == 0
        q = query.make_query(f"n{i}.{ORIGIN}", edns=edns)
        if i % 4 == 0:
            q.want_dnssec(True)
        r = query.exchange_udp(d.port, q)
        assert r.rcode == dns.rcode.NOERROR, r.text()
        assert query.addresses(r) == {ADDR}, r.text()
        if edns:
            # our own OPT: our payload size, the client's DO copied
            assert r.msg.edns == 0 and r.msg.payload == EDNS_SIZE, r.text()
            assert bool(r.msg.ednsflags & dns.flags.DO) == (i % 4 == 0)
        else:
            assert r.msg.edns == -1, r.text()
    # over TCP too
    r = query.tcp(d.port, f"tcp.{ORIGIN}")
    assert query.addresses(r) == {ADDR}, r.text()

    # named saw one plain A query per name (10), and nothing with EDNS.
    # Two queries had an OPT, both FORMERR'd by the proxy: the first
    # query and the loop probe that goes with an upstream's first use
    # (dnsdamper.conf(5), "Loops"), sent together before either was
    # answered.
    asked = ns.queries(mark)
    assert len([q for q in asked if q.qtype == "A"]) == 10, asked
    assert not any(_edns_flags(q) for q in asked), asked
    assert fp.stats()["formerr_edns"] == 2, fp.stats()

    # Never marked down; its state and the fallback shown.
    ups = {u["address"]: u for u in d.control().get("/upstreams").json()}
    u = ups[name]
    assert u["state"] == "up" and u["failures_in_a_row"] == 0, u
    assert u["edns"] == "no", u
    zones = {z["zone"]: z for z in u["zones"]}
    assert zones[ORIGIN + "."]["edns_fallbacks"] == 2, zones
    assert zones[ORIGIN + "."]["failures"] == 0, zones
    m = d.control().metrics()
    assert m.get("dnsdamper_upstream_edns", upstream=name) == 0
    assert m.get("dnsdamper_upstream_up", upstream=name) == 1
    assert m.get("dnsdamper_upstream_edns_fallbacks_total", upstream=name,
                 zone=ORIGIN + ".") == 2
    assert m.get("dnsdamper_upstream_edns",
                 upstream=upstream(bind.port)) == 1
    assert "is down" not in d.stderr()

