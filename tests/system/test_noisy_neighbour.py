"""A noisy neighbour cannot evict what service discovery needs (the
cache's eviction, dnsdamper(8) "Cache"): a small cache, service names
asked again and again, and between their asks a flood of one-off names
(a wildcard zone) several times what the cache holds; then the upstream
stops answering. Every service name is still answered, stale, from the
cache. Under least-recently-used eviction the flood had pushed them all
out, and the outage left them unanswered (SERVFAIL).

The values checked, from the config below and the RFCs:
  stale TTL  = stale-answer-ttl, default 30 s (RFC 8767 §4), EDE 3
               (RFC 8914 §4.4)
  turnover   = 64 KiB of cache holds a few hundred of these answers (each
               its wire length plus 94 octets and 2 a record: about 170);
               each flood of FLOOD names is several times that
Traffic is bounded: ROUNDS x (2 x SERVICES + FLOOD) queries, one at a
time, then SERVICES during the outage. No timing is asserted.
"""

import socket
import time

import dns.message
import dns.rcode
import pytest

from dnstest import ports, query, stale
from dnstest.daemon import Forward
from dnstest.zonetext import zone

STALE_TTL = 30                  # stale-answer-ttl default, RFC 8767 §4
SVC_TTL = 2                     # s, the service names' TTL
SERVICES = 16
FLOOD = 2000                    # one-off names between two rounds
ROUNDS = 3
CACHE_SIZE = 64 * 1024          # the smallest cache-size

SVC_ZONE = "svc.nn.test"
FLOOD_ZONE = "flood.nn.test"


def _svc_name(i):
    return f"s{i}.{SVC_ZONE}"


def _svc_addr(i):
    return f"192.0.2.{100 + i}"


def _flood(port, names):
    """Ask each of names once, one at a time from one socket (each waits
    up to 3 s for its answer); returns how many were answered NOERROR."""
    ok = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((ports.check_loopback(ports.LOOPBACK), port))
        for i, name in enumerate(names):
            q = query.make_query(name, "A", msg_id=i % 65536)
            s.send(q.to_wire())
            deadline = time.monotonic() + 3.0
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                s.settimeout(left)
                try:
                    r = dns.message.from_wire(s.recv(65535))
                except socket.timeout:
                    break
                if r.id == q.id:
                    ok += r.rcode() == dns.rcode.NOERROR
                    break
    return ok


@pytest.mark.timeout_s(120)
def test_flood_of_one_off_names_leaves_service_names_for_an_outage(
        new_bind, faultproxy, dnsdamper, bind):
    """SERVICES names (TTL 2 s), each asked twice a round (two clients of
    a service), and FLOOD never-repeated names of a wildcard (TTL 1 h)
    after each round, with threads 2 and cache-size 64k; then an outage
    until every service name has expired. Each is answered stale, with
    its address; the flood went through probation only."""
    ns = new_bind("nn", {
        SVC_ZONE: zone(SVC_ZONE, SVC_TTL,
                       [f"s{i} A {_svc_addr(i)}" for i in range(SERVICES)]),
        FLOOD_ZONE: zone(FLOOD_ZONE, 3600, ["* A 192.0.2.1"]),
    })
    fp = faultproxy(ns)
    d = dnsdamper([Forward("nn.test", [fp]), Forward(".", [bind])],
                  extra=[f"cache-size {CACHE_SIZE // 1024}k",
                         "client-timeout 1000ms",
                         "stale-refresh-interval 1s",
                         "upstream-timeout 100ms 300ms",
                         "query-timeout 2s"])
    c = d.control()
    n = 0
    for round_ in range(ROUNDS):
        for i in range(SERVICES):
            for _ in range(2):
                r = query.udp(d.port, _svc_name(i), "A")
                assert r.rcode == dns.rcode.NOERROR, r.text()
        last_ask = time.monotonic()
        names = [f"f{n + k}.{FLOOD_ZONE}" for k in range(FLOOD)]
        n += FLOOD
        assert _flood(d.port, names) == FLOOD
    m = c.metrics()
    entries = m.value("dnsdamper_cache_entries")
    # the premise: each flood was several times what the cache holds
    assert 0 < entries * 3 < FLOOD, entries
    probationary = m.value("dnsdamper_cache_evictions_total",
                           **{"class": "probationary"})
    assert probationary >= ROUNDS * FLOOD - entries - 2 * SERVICES, m.text

    # the upstream stops; every service name expires (TTL 2 s after its
    # last refresh, at the last round's asks at the latest)
    fp.set(outage=True)
    time.sleep(max(0.0, last_ask + SVC_TTL + 0.5 - time.monotonic()))
    for i in range(SERVICES):
        r = query.udp(d.port, _svc_name(i), "A", timeout=5.0)
        assert r.rcode == dns.rcode.NOERROR, \
            f"{_svc_name(i)} lost to the flood:\n{r.text()}"
        rrset = query.find(r.msg, "answer", _svc_name(i), "A")
        assert rrset is not None and [x.to_text() for x in rrset] == \
            [_svc_addr(i)], r.text()
        stale.assert_stale(r, STALE_TTL)
    assert fp.stats()["dropped_outage"] >= 1
