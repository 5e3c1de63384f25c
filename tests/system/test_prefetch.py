"""Keeping the cache ahead of its clients (dnsdamper.conf(5) `prefetch`,
`srv-prefetch-targets`).

prefetch: an entry asked for within the last tenth of its life, widened to
three times the best RTO of the zone's upstreams but never more than half
the life, is refreshed in the background, so a name in use never expires
in front of a client.

srv-prefetch-targets: the addresses of the targets of an SRV answer are
fetched along with it, of the types clients asked for each target, so the
client's next lookup of a target is a cache hit and nothing no client
asks is fetched.
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

SRV_TTL = 2
SRV_ZONE = zone("srvp.test", SRV_TTL, [
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


def _logged(ns, since, want, timeout):
    """Poll named's log (bounded) until each target question was asked
    want[i] times; the counts then."""
    deadline = time.monotonic() + timeout
    while True:
        counts = [ns.count(n, t, since=since) for n, t, _ in TARGETS]
        if counts >= want or time.monotonic() >= deadline:
            return counts
        time.sleep(0.05)


@pytest.mark.parametrize("targets", ["yes", "no"])
def test_srv_answer_brings_the_targets_clients_ask(new_bind, dnsdamper, bind,
                                                   targets):
    """srv-prefetch-targets fetches along with an SRV answer only the
    address types that clients have asked for a target: here clients ask
    t1's A alone. The first SRV answer brings nothing (no client has asked
    any target yet). Then t1 A is asked (a miss); once the SRV set and t1 A
    have expired (TTL 2 s), the SRV set's refresh brings t1 A with it
    (named asked once for it), and nothing else: not t1 AAAA, never asked,
    nor t2, never chosen. The client's next t1 A is a cache hit. Negative
    control, srv-prefetch-targets no: t1 A is not fetched with the SRV
    set, and the client's next t1 A is a miss."""
    ns = new_bind("srvp", {"srvp.test": SRV_ZONE})
    d = dnsdamper([Forward("srvp.test", [ns]), Forward(".", [bind])],
                  extra=[f"srv-prefetch-targets {targets}"])
    mark = ns.mark()
    r = query.udp(d.port, "_svc._tcp.srvp.test", "SRV")
    srv = query.find(r.msg, "answer", "_svc._tcp.srvp.test", "SRV")
    assert srv is not None and len(srv) == 2, r.text()
    r = query.udp(d.port, "t1.srvp.test", "A")
    assert query.addresses(r) == {"192.0.2.91"}, r.text()
    time.sleep(0.5)
    # t1 A once, by the client; nothing fetched ahead
    assert [ns.count(n, t, since=mark) for n, t, _ in TARGETS] == \
        [1, 0, 0, 0], ns.queries(mark)
    time.sleep(max(0.0, r.received + SRV_TTL + 0.3 - time.monotonic()))
    mark = ns.mark()
    r = query.udp(d.port, "_svc._tcp.srvp.test", "SRV", timeout=5)
    assert query.find(r.msg, "answer", "_svc._tcp.srvp.test", "SRV"), \
        r.text()
    want = [1, 0, 0, 0] if targets == "yes" else [0, 0, 0, 0]
    _logged(ns, mark, want, 1.0)
    time.sleep(0.3)
    counts = [ns.count(n, t, since=mark) for n, t, _ in TARGETS]
    assert counts == want, f"named was asked for the targets {counts}"
    mark = ns.mark()
    r = query.udp(d.port, "t1.srvp.test", "A")
    assert query.addresses(r) == {"192.0.2.91"}, r.text()
    assert ns.count("t1.srvp.test", "A", since=mark) == \
        (0 if targets == "yes" else 1)
