"""Upstream health (dnsdamper.conf(5) "Upstream health"): after 3 failures
in a row an upstream is marked down and logged; resolutions try it only
after the upstreams that are up; it is probed with a back-off of 1 s
after it was marked down, then doubled (2 s, 4 s, 8 s, up to 12 s), each
probe at a uniformly random point of its back-off (full jitter), each
asking for its zone's SOA and for the latest question it failed; it is
marked up again, and logged, only when it answers.

The upstream under test is a Recorder (dnstest/upstream.py) that logs
every query with its arrival time: dropping them first (down), relaying
them to a named later (up). A second upstream, a named, keeps the zone
answered meanwhile. upstream-timeout 100ms fixes every timeout at 100 ms,
so that failures come fast and each probe ends (query-timeout 1 s) long
before the next one starts.
"""

import re
import time

import dns.rcode
import pytest

from dnstest import query
from dnstest.daemon import Forward
from dnstest.zonetext import zone

ORIGIN = "hl.test"
ZONE = zone(ORIGIN, 300, ["* A 192.0.2.50"])
CONF = ["upstream-timeout 100ms", "query-timeout 1s"]
PROBE_FIRST = 1.0       # s, UPSTREAM_PROBE_FIRST: within 1 s of marked down
TICK = 1.0              # s: down upstreams are looked at once a second, so
                        # a probe may go up to 1 s after it is due, and two
                        # probes are at least that far apart
SLACK = 0.5             # s, a loaded machine; never a tight bound


def _probe_starts(rec):
    """Arrival times of the probes: their SOA queries (a probe is one
    query, never retransmitted)."""
    starts = []
    for a in rec.log(qtype="SOA"):
        assert a.qname.lower() == ORIGIN, f"probe for {a.qname}, want " \
            f"the zone's SOA ({ORIGIN})"
        starts.append(a.t)
    return starts


def _wait_probes(rec, n, timeout):
    deadline = time.monotonic() + timeout
    while len(_probe_starts(rec)) < n:
        assert time.monotonic() < deadline, \
            f"fewer than {n} SOA probes within {timeout}s: " \
            f"{rec.log(qtype='SOA')}"
        time.sleep(0.02)
    return _probe_starts(rec)


@pytest.mark.timeout_s(40)
def test_down_after_3_failures_probed_with_soa_backoff_then_up(
        new_bind, recorder, dnsdamper, bind):
    ns = new_bind("hl", {ORIGIN: ZONE})
    rec = recorder()                            # drops everything for now
    d = dnsdamper([Forward(ORIGIN, [rec, ns], "order"), Forward(".", [bind])],
                  extra=CONF)
    name = f"127.0.0.1:{rec.port}"
    log_mark = d.log_size()

    # 1. policy order: rec first; it times out (100 ms), ns answers. Three
    # names, three timeouts in a row: rec is down. (The loop probe it also
    # gets on first use is one query that never counts against health.)
    for i in range(1, 4):
        r = query.udp(d.port, f"a1-{i}.hl.test")
        assert query.addresses(r) == {"192.0.2.50"}, r.text()
    d.wait_log(rf"upstream {re.escape(name)} is down after 3 failures in a "
               rf"row", since=log_mark, timeout=3.0)
    seen_down = time.monotonic()
    asked = [a for a in rec.log() if a.qtype == "A"]
    assert len(asked) == 3, rec.log()
    assert len([a for a in rec.log() if a.qtype == "TXT"]) == 1, rec.log()
    # it was marked down at its 3rd failure, after its 3rd query arrived
    down_after = asked[2].t

    # 2. while it is down, resolutions go to ns first: rec is not asked
    since = time.monotonic()
    r = query.udp(d.port, "a2.hl.test")
    assert query.addresses(r) == {"192.0.2.50"}, r.text()
    assert "a2.hl.test" not in rec.names(since=since, qtype="A")

    # 3. probes: SOA of the zone (and a1-3.hl.test A, the latest question
    # it failed), the first within 1 s after it went down, the next within
    # 2 s after that, the next within 4 s after that (back-off doubled,
    # each probe at a random point of it: full jitter). Probes are sent
    # from a once-a-second tick, so each may come up to 1 s after it is
    # due, and never two in the same second.
    p1, p2, p3 = _wait_probes(rec, 3, PROBE_FIRST + 2 + 4 + 3 * TICK +
                              3 * SLACK)
    assert p1 >= down_after, f"a probe before it was down: {p1}"
    assert p1 - seen_down <= PROBE_FIRST + TICK + SLACK, \
        f"first probe {p1 - seen_down:.3f} s after down, want within 1 s"
    # within 1 s doubled = 2 s, doubled again = 4 s
    for got, most in ((p2 - p1, 2 * PROBE_FIRST), (p3 - p2, 4 * PROBE_FIRST)):
        assert TICK - 0.1 <= got <= most + TICK + SLACK, \
            f"probes {p1:.3f} {p2:.3f} {p3:.3f}: an interval of " \
            f"{got:.3f} s, want 1 to {most:g} s"

    # 4. it answers again: the next probe (a retransmission of this one,
    # or the one 8 s later) reaches named, and it is marked up
    ns_mark = ns.mark()
    switched = time.monotonic()
    rec.relay(ns)
    d.wait_log(rf"upstream {re.escape(name)} is up again", since=log_mark,
               timeout=8 * PROBE_FIRST + TICK + 2 * SLACK)
    assert ns.count(ORIGIN, "SOA", since=ns_mark) >= 1, \
        "named never saw the SOA probe"
    # from the first probe on, nothing but probes reached it while down:
    # the zone's SOA and the latest question it failed
    down_log = [a for a in rec.log(since=p1) if a.t < switched]
    assert {(a.qname.lower(), a.qtype) for a in down_log} == \
        {(ORIGIN, "SOA"), ("a1-3.hl.test", "A")}, down_log

    # 5. up again, it is first in the order again (policy order)
    since = time.monotonic()
    r = query.udp(d.port, "a3.hl.test")
    assert r.rcode == dns.rcode.NOERROR, r.text()
    assert query.addresses(r) == {"192.0.2.50"}, r.text()
    assert rec.names(since=since, qtype="A") == ["a3.hl.test"]


@pytest.mark.timeout_s(30)
def test_upstream_that_refuses_the_zone_soa_is_seen_back(
        new_bind, recorder, dnsdamper):
    """An upstream that answers only some names under its zone (here a
    named authoritative for hl.test, forwarded ".") refuses the probe for
    the zone's SOA (". SOA": REFUSED, a failure). It is still seen back,
    by the probe for the latest question it failed, and with no client
    query meanwhile: a down upstream must not depend on clients to be
    found answering again."""
    ns = new_bind("hl", {ORIGIN: ZONE})
    rec = recorder()                            # drops everything for now
    d = dnsdamper([Forward(".", [rec])], extra=CONF)
    name = f"127.0.0.1:{rec.port}"
    # its only upstream is silent (the harness's readiness query already
    # met that): SERVFAIL after query-timeout, each query's timeouts
    # (100 ms each) failures in a row; a down upstream that is the only
    # one is still asked
    for i in range(1, 4):
        r = query.udp(d.port, f"r{i}.hl.test", timeout=3.0)
        assert r.rcode == dns.rcode.SERVFAIL, r.text()
    d.wait_log(rf"upstream {re.escape(name)} is down after 3 failures in a "
               rf"row", timeout=1.0)
    log_mark = d.log_size()
    # every client's resolution has ended (SERVFAIL): from here on only
    # probes reach the upstream
    ns_mark = ns.mark()
    rec.relay(ns)
    d.wait_log(rf"upstream {re.escape(name)} is up again", since=log_mark,
               timeout=8 * PROBE_FIRST + TICK + 2 * SLACK)
    # the SOA probe was refused; the last question failed was answered
    assert ns.count(".", "SOA", since=ns_mark) >= 1
    assert ns.count("r3.hl.test", "A", since=ns_mark) >= 1
    r = query.udp(ns.port, ".", "SOA")
    assert r.rcode == dns.rcode.REFUSED, r.text()
