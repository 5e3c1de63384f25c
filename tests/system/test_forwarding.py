"""Forward zones: the closest enclosing zone (longest suffix, any case)
picks the upstreams; `.` takes the rest. Failover between the upstreams of
one zone (policy order) past a dead port or a black hole, and SERVFAIL, in
bounded time, when every upstream of a zone is gone."""

import time

import dns.rcode

from dnstest import ports, query
from dnstest.daemon import Forward

# How long a client waits for the failure cases: query-timeout (4 s) plus a
# generous margin. Only there so that a broken daemon cannot hang the test;
# not a timing assertion.
TIMEOUTS = ["upstream-timeout 50ms 2s", "query-timeout 4s"]
PATIENCE = 4 + 8


def _zone(origin, records):
    return f"""\
$TTL 300
@   300 IN SOA ns.{origin}. hostmaster.{origin}. 1 3600 600 86400 60
@   300 IN NS  ns
ns  300 IN A   127.0.0.1
{records}
"""


def _two_zones(new_bind, dnsdamper, bind):
    """alpha serves alpha.test; beta serves beta.test and deep.alpha.test;
    the session named is `.`. Each zone's www has its own address, so an
    answer tells which named gave it."""
    alpha = new_bind("alpha", {
        "alpha.test": _zone("alpha.test", "www 300 IN A 192.0.2.101")})
    beta = new_bind("beta", {
        "beta.test": _zone("beta.test", "www 300 IN A 192.0.2.102"),
        "deep.alpha.test": _zone("deep.alpha.test",
                                 "www 300 IN A 192.0.2.103")})
    d = dnsdamper([Forward("alpha.test", [alpha]),
                   # zone names are case-insensitive in the config too
                   Forward("Beta.TEST", [beta]),
                   # listed after alpha.test: the longest match must win,
                   # not the first
                   Forward("deep.alpha.test", [beta]),
                   Forward(".", [bind])])
    return alpha, beta, d


def _marks(*servers):
    return [s.mark() for s in servers]


def _counts(name, servers, marks):
    return [s.count(name, since=m) for s, m in zip(servers, marks)]


def test_each_zone_to_its_own_upstream(new_bind, dnsdamper, bind):
    alpha, beta, d = _two_zones(new_bind, dnsdamper, bind)
    servers = (alpha, beta, bind)
    for qname, addr, who in (("www.alpha.test", "192.0.2.101", 0),
                             ("WWW.BeTa.TeSt", "192.0.2.102", 1)):
        marks = _marks(*servers)
        r = query.udp(d.port, qname)
        assert r.rcode == dns.rcode.NOERROR, r.text()
        assert query.addresses(r) == {addr}, r.text()
        expect = [0, 0, 0]
        expect[who] = 1
        assert _counts(qname, servers, marks) == expect


def test_longest_suffix_wins(new_bind, dnsdamper, bind):
    alpha, beta, d = _two_zones(new_bind, dnsdamper, bind)
    servers = (alpha, beta, bind)
    marks = _marks(*servers)
    # alpha.test and deep.alpha.test both enclose it: deep.alpha.test (beta)
    # is the closer one; alpha would have said NXDOMAIN
    r = query.udp(d.port, "www.deep.alpha.test")
    assert r.rcode == dns.rcode.NOERROR, r.text()
    assert query.addresses(r) == {"192.0.2.103"}, r.text()
    assert _counts("www.deep.alpha.test", servers, marks) == [0, 1, 0]


def test_name_under_neither_goes_to_root_forward(new_bind, dnsdamper, bind):
    alpha, beta, d = _two_zones(new_bind, dnsdamper, bind)
    servers = (alpha, beta, bind)
    marks = _marks(*servers)
    r = query.udp(d.port, "www.example.test")
    assert query.addresses(r) == {"192.0.2.80"}, r.text()
    assert _counts("www.example.test", servers, marks) == [0, 0, 1]


def test_failover_past_dead_upstream(dnsdamper, bind):
    dead = ports.dead_port()        # nothing listens: ICMP port unreachable
    d = dnsdamper([Forward("failover.test", [dead, bind], "order"),
                   Forward(".", [bind])], extra=TIMEOUTS)
    mark = bind.mark()
    r = query.udp(d.port, "dead-first.failover.test", timeout=PATIENCE)
    assert r.rcode == dns.rcode.NOERROR, r.text()
    assert query.addresses(r) == {"192.0.2.40"}, r.text()
    assert bind.count("dead-first.failover.test", since=mark) >= 1


def test_failover_past_blackholed_upstream(dnsdamper, bind, blackhole):
    hole = blackhole()              # reads every query, answers none
    d = dnsdamper([Forward("failover.test", [hole, bind], "order"),
                   Forward(".", [bind])], extra=TIMEOUTS)
    r = query.udp(d.port, "blackhole-first.failover.test", timeout=PATIENCE)
    assert r.rcode == dns.rcode.NOERROR, r.text()
    assert query.addresses(r) == {"192.0.2.41"}, r.text()
    # policy order: the black hole, listed first, was asked first
    _wait_for(lambda: hole.received >= 1, 1.0)
    assert hole.received >= 1


def test_servfail_when_all_upstreams_dead(dnsdamper, bind):
    d = dnsdamper([Forward("dead.test", [ports.dead_port(),
                                         ports.dead_port()]),
                   Forward(".", [bind])], extra=TIMEOUTS)
    for _ in range(2):              # the failure, then the cached failure
        r = query.udp(d.port, "www.dead.test", timeout=PATIENCE)
        assert r.rcode == dns.rcode.SERVFAIL, r.text()
    # the other zones are not affected
    r = query.udp(d.port, "www.example.test")
    assert query.addresses(r) == {"192.0.2.80"}, r.text()
    d.assert_alive()


def test_servfail_when_all_upstreams_blackholed(dnsdamper, bind, blackhole):
    holes = [blackhole(), blackhole()]
    d = dnsdamper([Forward("hole.test", holes, "order"),
                   Forward(".", [bind])], extra=TIMEOUTS)
    # answered (SERVFAIL) once query-timeout has passed, not left unanswered
    r = query.udp(d.port, "www.hole.test", timeout=PATIENCE)
    assert r.rcode == dns.rcode.SERVFAIL, r.text()
    assert sum(h.received for h in holes) >= 1
    r = query.udp(d.port, "www.example.test")
    assert query.addresses(r) == {"192.0.2.80"}, r.text()


def _wait_for(cond, timeout):
    deadline = time.monotonic() + timeout
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.01)
