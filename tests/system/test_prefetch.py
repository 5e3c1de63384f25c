"""Keeping the cache ahead of its clients (dnsdamper.conf(5) `prefetch`,
`srv-prefetch-targets`).

prefetch: an entry asked for within the last tenth of its life, widened to
three times the best RTO of the zone's upstreams but never more than half
the life, is refreshed in the background, so a name in use never expires
in front of a client.

srv-prefetch-targets: the A and AAAA of the targets of an SRV answer are
fetched along with it, so the client's next lookup of a target is a cache
hit.
"""

import time

import pytest

from dnstest import query, stale
from dnstest.daemon import Forward
from dnstest.zonetext import zone

# --- prefetch -------------------------------------------------------------

PF_TTL = 3
SLOW_MS = 200           # every upstream answer is this late
EVERY = 0.25            # s between the client's queries


def _ask_every(d, name, duration):
    """Ask for name every EVERY s for duration s; the replies."""
    out = []
    end = time.monotonic() + duration
    while time.monotonic() < end:
        out.append(query.udp(d.port, name, timeout=3.0))
        time.sleep(EVERY)
    return out


@pytest.mark.parametrize("prefetch,duration", [("yes", 9.0), ("no", 4.0)])
def test_name_in_use_never_expires_in_front_of_a_client(
        new_bind, faultproxy, dnsdamper, bind, prefetch, duration):
    """A name of TTL 3 s asked every 250 ms for 9 s, the upstream 200 ms
    slow. Every answer is fresh (not stale, TTL 1..3: RFC 2181 §8, never
    0 while fresh) and comes from the cache: sooner than the upstream
    could answer (< 200 ms). named sees the refreshes: at least one per
    TTL, 9 / 3 = 3, or the entry would have expired.

    The window: TTL 3 s = 3000 ms of life; a tenth is 300 ms; the
    upstream's RTO after a 200 ms sample is 200 + 4 * 100 = 600 ms
    (RFC 6298 §2), three of them 1800 ms, capped at half the life, 1500
    ms: every entry is refreshed once it is 1.5 s old and asked for.

    Negative control, prefetch no (4 s, past one expiry): the query after
    expiry waits for the refresh (>= 200 ms) or is stale."""
    ns = new_bind("pf", {"pf.test": zone("pf.test", PF_TTL,
                                         ["hot A 192.0.2.80"])})
    fp = faultproxy(ns, delay_mean=SLOW_MS)
    d = dnsdamper([Forward("pf.test", [fp]), Forward(".", [bind])],
                  extra=[f"prefetch {prefetch}",
                         "upstream-timeout 1s 2s", "query-timeout 4s"])
    first = query.udp(d.port, "hot.pf.test")
    assert query.addresses(first) == {"192.0.2.80"}, first.text()
    mark = ns.mark()
    replies = _ask_every(d, "hot.pf.test", duration)
    waited = [r for r in replies
              if r.received - r.sent >= SLOW_MS / 1000 or stale.is_stale(r)]
    for r in replies:
        assert query.addresses(r) == {"192.0.2.80"}, r.text()
    if prefetch == "no":
        assert waited, "prefetch no, and still no query waited"
        return
    for r in replies:
        stale.assert_fresh(r, PF_TTL)
        ttl = query.find(r.msg, "answer", "hot.pf.test", "A").ttl
        assert ttl > 0, r.text()
    assert not waited, (
        f"{len(waited)} of {len(replies)} answers waited for the upstream "
        f"or were stale: "
        f"{[round(r.received - r.sent, 3) for r in waited]}")
    refreshes = ns.count("hot.pf.test", "A", since=mark)
    assert refreshes >= int(duration // PF_TTL), \
        f"named saw {refreshes} refreshes in {duration} s"


# --- SRV targets -------------------------------------------------------------

SRV_ZONE = zone("srvp.test", 300, [
    "_svc._tcp SRV 0 5 8080 t1",
    "_svc._tcp SRV 10 5 8080 t2",
    "t1 A 192.0.2.91",
    "t1 AAAA 2001:db8::91",
    "t2 A 192.0.2.92",
    "t2 AAAA 2001:db8::92",
])
TARGETS = [("t1.srvp.test", "A", "192.0.2.91"),
           ("t1.srvp.test", "AAAA", "2001:db8::91"),
           ("t2.srvp.test", "A", "192.0.2.92"),
           ("t2.srvp.test", "AAAA", "2001:db8::92")]


def _logged_all(ns, since, timeout):
    """Poll named's log (bounded) until every target A/AAAA is in it;
    the counts then."""
    deadline = time.monotonic() + timeout
    while True:
        counts = [ns.count(n, t, since=since) for n, t, _ in TARGETS]
        if all(counts) or time.monotonic() >= deadline:
            return counts
        time.sleep(0.05)


@pytest.mark.parametrize("targets", ["yes", "no"])
def test_srv_answer_brings_its_targets_addresses(new_bind, dnsdamper, bind,
                                                 targets):
    """Querying the SRV set makes the daemon ask for each target's A and
    AAAA itself (named's log), so a client's next A or AAAA query for a
    target is answered from the cache (named not asked again). Negative
    control, srv-prefetch-targets no: named is not asked for the targets
    until a client asks, and that query is a miss."""
    ns = new_bind("srvp", {"srvp.test": SRV_ZONE})
    d = dnsdamper([Forward("srvp.test", [ns]), Forward(".", [bind])],
                  extra=[f"srv-prefetch-targets {targets}"])
    mark = ns.mark()
    r = query.udp(d.port, "_svc._tcp.srvp.test", "SRV")
    srv = query.find(r.msg, "answer", "_svc._tcp.srvp.test", "SRV")
    assert srv is not None and len(srv) == 2, r.text()
    # the targets' queries go out as the SRV answer is stored; within
    # 1 s they are in named's log (named logs before it answers)
    counts = _logged_all(ns, mark, 1.0)
    if targets == "yes":
        assert counts == [1, 1, 1, 1], \
            f"named was asked for the targets {counts} times"
    else:
        assert counts == [0, 0, 0, 0], counts
    mark = ns.mark()
    for name, qtype, addr in TARGETS:
        r = query.udp(d.port, name, qtype)
        assert query.addresses(r) == {addr}, r.text()
    after = [ns.count(n, t, since=mark) for n, t, _ in TARGETS]
    if targets == "yes":
        assert after == [0, 0, 0, 0], f"cache misses: {after}"
    else:
        assert after == [1, 1, 1, 1], after
