"""max-waiters (dnsdamper.conf(5)): clients asking a question while its
resolution is in flight wait on it, up to max-waiters of them; one more
does not wait, but gets at once the stale answer if the cache has one,
else SERVFAIL, and is counted in dnsdamper_waiters_refused_total. A flood
of one name behind a silent upstream so holds at most max-waiters queries
until the query-timeout, not rate x query-timeout of them.

How many are answered in one turn of the event loop when the resolution
ends is checked exactly in tests/unit/check_query.c.
"""

import socket
import time

import dns.message
import dns.rcode
import pytest

from dnstest import query, stale
from dnstest.daemon import Forward
from dnstest.zonetext import zone

MAX_WAITERS = 20
BURST = 50                      # queries of one name, all at once
QUERY_TIMEOUT = 3.0             # s, query-timeout below
MARGIN = 1.0                    # s, slack for a loaded machine


def _burst(port, qname, n, first_id):
    """Send n queries for qname (IDs first_id...) from one UDP socket in
    one go; returns the socket, to read the answers from."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("127.0.0.1", port))
    for i in range(n):
        s.send(query.make_query(qname, msg_id=first_id + i).to_wire())
    return s


def _answers(s, until, want):
    """Answers read from s until the monotonic instant until, or until
    want have come: {id: message}."""
    got = {}
    while len(got) < want:
        left = until - time.monotonic()
        if left <= 0:
            break
        s.settimeout(left)
        try:
            m = dns.message.from_wire(s.recv(65535))
        except socket.timeout:
            break
        got[m.id] = m
    return got


@pytest.mark.timeout_s(30)
def test_beyond_max_waiters_servfail_at_once(dnsdamper, bind, blackhole):
    hole = blackhole()
    d = dnsdamper([Forward("waiters.test", [hole]), Forward(".", [bind])],
                  extra=[f"max-waiters {MAX_WAITERS}",
                         f"query-timeout {int(QUERY_TIMEOUT)}s"])
    before = d.control().metrics()
    sent = time.monotonic()
    s = _burst(d.port, "burst.waiters.test", BURST, 0x100)
    with s:
        # the first query starts the resolution and waits, the next 19
        # join it: 20 wait; the other 30 are answered SERVFAIL at once,
        # well before the query-timeout would answer anyone
        early = _answers(s, sent + QUERY_TIMEOUT - MARGIN,
                         BURST - MAX_WAITERS)
        assert sorted(early) == list(range(0x100 + MAX_WAITERS,
                                           0x100 + BURST)), sorted(early)
        assert all(m.rcode() == dns.rcode.SERVFAIL for m in early.values())
        # the 20 that waited get SERVFAIL when the resolution fails
        late = _answers(s, sent + QUERY_TIMEOUT + 2 * MARGIN, MAX_WAITERS)
        assert sorted(late) == list(range(0x100, 0x100 + MAX_WAITERS))
        assert all(m.rcode() == dns.rcode.SERVFAIL for m in late.values())
        assert time.monotonic() - sent >= QUERY_TIMEOUT - 0.1
    after = d.control().metrics()
    refused = after.value("dnsdamper_waiters_refused_total") - \
        before.value("dnsdamper_waiters_refused_total")
    coalesced = after.value("dnsdamper_coalesced_queries_total") - \
        before.value("dnsdamper_coalesced_queries_total")
    assert (refused, coalesced) == (BURST - MAX_WAITERS, MAX_WAITERS - 1)


TTL = 1
ORIGIN = "stw.test"
ZONE = zone(ORIGIN, TTL, ["web A 192.0.2.71"])
STALE_TTL = 30                  # stale-answer-ttl default, RFC 8767 §4
CLIENT_TIMEOUT = 2.0            # s, client-timeout below


@pytest.mark.timeout_s(30)
def test_beyond_max_waiters_stale_at_once(dnsdamper, bind, new_bind,
                                          faultproxy):
    ns = new_bind("stw", {ORIGIN: ZONE})
    fp = faultproxy(ns)
    d = dnsdamper([Forward(ORIGIN, [fp]), Forward(".", [bind])],
                  extra=[f"max-waiters {MAX_WAITERS}",
                         f"client-timeout {int(CLIENT_TIMEOUT * 1000)}ms",
                         "query-timeout 10s"])
    first = query.udp(d.port, f"web.{ORIGIN}")
    assert query.addresses(first) == {"192.0.2.71"}
    # expired (TTL 1 s) but servable stale; the upstream now silent
    time.sleep(max(0.0, first.received + TTL + 0.2 - time.monotonic()))
    fp.set(outage=True)
    sent = time.monotonic()
    with _burst(d.port, f"web.{ORIGIN}", BURST, 0x200) as s:
        # 20 wait for the refresh, up to the client response timer (RFC
        # 8767 §5); the other 30 get the stale answer at once
        early = _answers(s, sent + CLIENT_TIMEOUT - MARGIN / 2,
                         BURST - MAX_WAITERS)
        late = _answers(s, sent + CLIENT_TIMEOUT + 2 * MARGIN,
                        MAX_WAITERS)
    assert sorted(early) == list(range(0x200 + MAX_WAITERS, 0x200 + BURST))
    assert sorted(late) == list(range(0x200, 0x200 + MAX_WAITERS))
    for m in list(early.values()) + list(late.values()):
        assert m.rcode() == dns.rcode.NOERROR, m
        rrset = m.answer[0]
        assert [r.address for r in rrset] == ["192.0.2.71"], m
        assert rrset.ttl == STALE_TTL, m
    refused = d.control().metrics().value("dnsdamper_waiters_refused_total")
    assert refused == BURST - MAX_WAITERS
