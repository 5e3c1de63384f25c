"""The order in which a forward zone's upstreams are tried
(dnsdamper.conf(5) `policy`), and hedging: the next upstream is asked
when the current one has not answered within its timeout, the first
staying asked.

  hash     rendezvous hashing of the qname: a name keeps going to one
           upstream, names spread evenly, and removing an upstream moves
           only the names that hashed to it
  random   a new random order for each resolution
  order    the first listed first; a slow first one is hedged after its
           timeout (upstream-timeout bounds it), and its late answer
           still wins if it comes first
  fastest  the lowest smoothed RTT first, an unmeasured one before any,
           one resolution in 16 to another (exploration)
"""

import socket
import struct

import dns.rcode
import pytest

from dnstest import query
from dnstest.daemon import Forward
from dnstest.upstream import synthesize
from dnstest.zonetext import zone

# --- hash -------------------------------------------------------------------

HASH_NAMES = 1000
# 1000 names over 3 upstreams: 1000 / 3 = 333 each, give or take 100;
# the binomial standard deviation is sqrt(1000 * 1/3 * 2/3) = 14.9, so
# 100 is 6.7 of them: a hash that spreads names at random is within it
# whatever ports the upstreams got. Which upstream each name goes to is
# worked out exactly below (_rendezvous).
HASH_EVEN = HASH_NAMES // 3
HASH_SPREAD = 100
_M64 = (1 << 64) - 1


def _fnv1a64(h, data):
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & _M64
    return h


def _rendezvous(host, port, qname):
    """The hash policy's weight of upstream host:port for qname
    (dnsdamper.conf(5) policy hash: rendezvous hashing, the same on every
    host): FNV-1a 64 of the IPv4 address and the port in network order,
    continued over the qname's folded wire form, then SplitMix64's
    finaliser."""
    h = _fnv1a64(0xcbf29ce484222325,
                 socket.inet_aton(host) + struct.pack("!H", port))
    wire = b"".join(bytes([len(label)]) + label.lower().encode()
                    for label in qname.rstrip(".").split(".")) + b"\0"
    h = _fnv1a64(h, wire)
    h ^= h >> 30
    h = (h * 0xbf58476d1ce4e5b9) & _M64
    h ^= h >> 27
    h = (h * 0x94d049bb133111eb) & _M64
    return h ^ (h >> 31)


def _chosen(recs, qname):
    """The index of the upstream of recs with the highest weight."""
    weights = [_rendezvous(r.host, r.port, qname) for r in recs]
    return weights.index(max(weights))


def _who(reply, addrs):
    """Which upstream answered: each answers with its own address."""
    got = query.addresses(reply)
    assert reply.rcode == dns.rcode.NOERROR and len(got) == 1, reply.text()
    return addrs.index(got.pop())


@pytest.mark.timeout_s(60)
def test_hash_sticks_spreads_and_moves_only_the_removed_upstreams_names(
        recorder, dnsdamper, bind):
    """Three upstreams (Recorders answering each with its own address),
    policy hash: 1000 names, each to the upstream of its highest
    rendezvous weight, spread 333 +- 100 each, 200 of them asked again
    (in upper case) go where they went before, and once the third
    upstream is removed by a reload, only its names move."""
    addrs = ["192.0.2.1", "192.0.2.2", "192.0.2.3"]
    # TTL 0: never cached (RFC 1035 §3.2.1), so every query of a name is
    # forwarded again and shows where the policy sends it now
    recs = [recorder().answer_with(synthesize(a, 0)) for a in addrs]
    # a fixed 1 s timeout: no upstream is ever hedged past, so the one
    # that answers is the one the hash chose
    conf = ["upstream-timeout 1s", "query-timeout 4s"]
    d = dnsdamper([Forward("hash.test", recs, "hash"), Forward(".", [bind])],
                  extra=conf)
    names = [f"h{i}.hash.test" for i in range(HASH_NAMES)]

    first = {n: _who(query.udp(d.port, n), addrs) for n in names}
    # each went to the upstream of the highest weight, worked out here
    wrong = [n for n in names if first[n] != _chosen(recs, n)]
    assert not wrong, f"{len(wrong)} names not at their rendezvous upstream"
    # each name went to exactly the upstream that answered it, once
    for i, rec in enumerate(recs):
        asked = sorted(rec.names(qtype="A"))
        assert asked == sorted(n for n in names if first[n] == i)
    counts = [list(first.values()).count(i) for i in range(3)]
    assert all(abs(c - HASH_EVEN) <= HASH_SPREAD for c in counts), \
        f"names per upstream {counts}, want {HASH_EVEN} +- {HASH_SPREAD}"

    # the same name goes to the same upstream again, in any case (the
    # hash is of the folded qname)
    for n in names[:200]:
        assert _who(query.udp(d.port, n.upper()), addrs) == first[n], n

    # remove the third upstream: rendezvous hashing moves only its names
    mark = d.reload(d.config([Forward("hash.test", recs[:2], "hash"),
                              Forward(".", [bind])], conf))
    d.wait_log(r"^dnsdamper: info: reloaded$", since=mark)
    before3 = len(recs[2].log())
    moved = []
    for n in names:
        now = _who(query.udp(d.port, n), addrs)
        if first[n] == 2:
            moved.append(now)
        else:
            assert now == first[n], \
                f"{n} moved from upstream {first[n]} to {now}"
    assert len(recs[2].log()) == before3, "the removed upstream was asked"
    assert set(moved) <= {0, 1}
    assert moved == [_chosen(recs[:2], n) for n in names if first[n] == 2]
    # and its names spread over the other two (each gets about half)
    assert min(moved.count(0), moved.count(1)) >= len(moved) // 4, \
        f"moved names went {moved.count(0)} / {moved.count(1)}"


def test_random_spreads_resolutions_over_the_upstreams(recorder, dnsdamper,
                                                       bind):
    """policy random: each resolution tries the upstreams in a new random
    order, so 200 names over 2 upstreams go 100 each, give or take; the
    binomial standard deviation is sqrt(200 * 1/2 * 1/2) = 7.1, and at
    least 50 each (7 of them below 100) is asked. policy order would send
    all 200 to the first."""
    addrs = ["192.0.2.1", "192.0.2.2"]
    recs = [recorder().answer_with(synthesize(a, 0)) for a in addrs]
    d = dnsdamper([Forward("rand.test", recs, "random"),
                   Forward(".", [bind])],
                  extra=["upstream-timeout 1s", "query-timeout 4s"])
    went = [_who(query.udp(d.port, f"r{i}.rand.test"), addrs)
            for i in range(200)]
    assert min(went.count(0), went.count(1)) >= 50, \
        f"{went.count(0)} / {went.count(1)}"


# --- hedging past a slow first upstream --------------------------------

SLOW_MS = 1500                  # the first upstream's delay


@pytest.mark.parametrize("timeout,hedged", [("100ms 300ms", True),
                                            ("2s", False)])
def test_slow_first_upstream_is_hedged(new_bind, faultproxy, dnsdamper, bind,
                                       timeout, hedged):
    """policy order, the first upstream answering after 1500 ms: with
    upstream-timeout 100ms 300ms the second is asked at the first's
    timeout (at most 300 ms) and its answer comes well before 1500 ms.
    Negative control: with upstream-timeout 2s nothing is hedged before
    the slow answer, which comes no earlier than 1500 ms, and the second
    upstream is never asked."""
    ns = new_bind("hedge", {"hedge.test": zone("hedge.test", 300,
                                               ["* A 192.0.2.60"])})
    slow = faultproxy(ns, delay_mean=SLOW_MS)
    fast = faultproxy(ns)
    d = dnsdamper([Forward("hedge.test", [slow, fast], "order"),
                   Forward(".", [bind])],
                  extra=[f"upstream-timeout {timeout}", "query-timeout 4s"])
    r = query.udp(d.port, "q1.hedge.test", timeout=4 + 2)
    assert query.addresses(r) == {"192.0.2.60"}, r.text()
    elapsed = r.received - r.sent
    # policy order: the slow one was asked (first)
    assert slow.stats()["received_udp"] >= 1
    if hedged:
        assert elapsed < SLOW_MS / 1000, \
            f"answer after {elapsed:.3f} s: not hedged before the slow " \
            f"upstream's {SLOW_MS} ms"
        assert fast.stats()["received_udp"] >= 1
    else:
        assert elapsed >= SLOW_MS / 1000
        assert fast.stats()["received_udp"] == 0


def test_first_upstream_stays_asked_and_its_late_answer_wins(
        new_bind, faultproxy, dnsdamper, bind):
    """Hedging does not give up on the first upstream: it answers after
    400 ms, past its 100 ms timeout (upstream-timeout 100ms 200ms), when
    the second has been asked too, but the second answers only after
    1500 ms. The answer must be the first's (it comes before 1500 ms, so
    it cannot be the second's)."""
    ns = new_bind("hedge2", {"hedge2.test": zone("hedge2.test", 300,
                                                 ["* A 192.0.2.61"])})
    first = faultproxy(ns, delay_mean=400)
    second = faultproxy(ns, delay_mean=SLOW_MS)
    d = dnsdamper([Forward("hedge2.test", [first, second], "order"),
                   Forward(".", [bind])],
                  extra=["upstream-timeout 100ms 200ms", "query-timeout 4s"])
    r = query.udp(d.port, "q1.hedge2.test", timeout=4 + 2)
    assert query.addresses(r) == {"192.0.2.61"}, r.text()
    assert second.stats()["received_udp"] >= 1, "never hedged"
    assert r.received - r.sent < SLOW_MS / 1000, \
        f"answer after {r.received - r.sent:.3f} s: the first upstream's " \
        f"late answer was not taken"


# --- fastest -----------------------------------------------------------------

FASTEST_QUERIES = 40
DELAY_MS = 60                   # the first upstream is this much slower


@pytest.mark.parametrize("policy", ["fastest", "order"])
def test_fastest_learns_which_upstream_is_faster(new_bind, faultproxy,
                                                 dnsdamper, bind, policy):
    """Two upstreams, the first listed 60 ms slower, neither ever timing
    out (upstream-timeout 500ms 2s > 60 ms, so neither is hedged past or
    marked down: only the policy decides who goes first).

    fastest: query 1 goes to the first (neither measured: list order),
    query 2 to the second (unmeasured goes before measured), and from then
    on the second (lower SRTT) goes first, except about 1 in 16 (the
    exploration): of the 38 queries after the first two, the expected
    38 * 15/16 = 35.6 go to the fast one; at least 28 must (3/4).
    order (the negative control): every query goes to the first."""
    ns = new_bind("fastest", {"fast.test": zone("fast.test", 300,
                                                ["* A 192.0.2.70"])})
    slow = faultproxy(ns, delay_mean=DELAY_MS)
    fast = faultproxy(ns)
    d = dnsdamper([Forward("fast.test", [slow, fast], policy),
                   Forward(".", [bind])],
                  extra=["upstream-timeout 500ms 2s", "query-timeout 4s"])
    went = []
    for i in range(FASTEST_QUERIES):
        before = (slow.stats()["received_udp"], fast.stats()["received_udp"])
        r = query.udp(d.port, f"f{i}.fast.test")
        assert query.addresses(r) == {"192.0.2.70"}, r.text()
        after = (slow.stats()["received_udp"], fast.stats()["received_udp"])
        asked = [after[0] > before[0], after[1] > before[1]]
        # one upstream per resolution: nobody timed out (the loop probe of
        # an upstream's first use goes to that same upstream)
        assert asked.count(True) == 1, f"query {i}: asked {asked}"
        went.append("fast" if asked[1] else "slow")
    assert went[0] == "slow", went     # list order before any measurement
    later = went[2:]
    if policy == "fastest":
        assert later.count("fast") >= 28, \
            f"fastest: {later.count('fast')} of {len(later)} to the fast one"
    else:
        assert later.count("fast") == 0 and went[1] == "slow", went
    d.assert_alive()
