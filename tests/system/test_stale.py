"""Serving stale data (RFC 8767) through an upstream outage and through
injected SERVFAILs: nothing a client could see before the trouble becomes
SERVFAIL, stale answers say so (TTL stale-answer-ttl, EDE 3), and fresh
data comes back once the upstream does.

Each test starts its own named (zone text below, TTLs short so that they
expire within the test) behind a faultproxy, and its own daemon; `.` goes
to the session named only for the harness's ready check.

The values checked, from the config the tests write and the RFCs:
  stale TTL  = stale-answer-ttl, default 30 s (RFC 8767 §4 recommends 30)
  EDE        = 3, "Stale Answer" (RFC 8914 §4.4), only with EDNS
  wait bound = client-timeout (RFC 8767 §5 client response timer) + 1 s
               of margin for a loaded test machine; not a timing test
"""

import socket
import time

import dns.rcode
import pytest

from dnstest import ports, query, stale
from dnstest.daemon import Forward
from dnstest.zonetext import zone

STALE_TTL = 30                  # stale-answer-ttl default, RFC 8767 §4
MARGIN = 1.0                    # s, slack for a loaded machine

# --- an outage longer than every TTL ----------------------------------------

TTL = 3
ORIGIN = "st.test"
BEFORE = zone(ORIGIN, TTL, [
    "web A 192.0.2.31",
    "web6 AAAA 2001:db8::31",
    "_svc._tcp SRV 0 5 8080 target",
    "target A 192.0.2.32",
    "target AAAA 2001:db8::32",
    # gone.st.test does not exist: NXDOMAIN, negative TTL
    # min(SOA TTL 3, MINIMUM 3) = 3 (RFC 2308 §5)
])
# written while the upstream is cut off: every name's data changes, and
# gone.st.test now exists
AFTER = zone(ORIGIN, TTL, [
    "web A 192.0.2.41",
    "web6 AAAA 2001:db8::41",
    "_svc._tcp SRV 0 5 8081 target",
    "target A 192.0.2.42",
    "target AAAA 2001:db8::42",
    "gone A 192.0.2.43",
], serial=2)

CLIENT_TIMEOUT = 1.0            # s, client-timeout below
OUTAGE_CONF = [
    "client-timeout 1000ms",
    # a failed refresh is retried 1 s later at the earliest
    "stale-refresh-interval 1s",
    "upstream-timeout 100ms 300ms",
    "query-timeout 2s",
]

# (qname, qtype, rcode); OLD and NEW: each one's data before and after
NAMES = [
    ("web.st.test", "A", dns.rcode.NOERROR),
    ("web6.st.test", "AAAA", dns.rcode.NOERROR),
    ("_svc._tcp.st.test", "SRV", dns.rcode.NOERROR),
    ("target.st.test", "A", dns.rcode.NOERROR),
    ("target.st.test", "AAAA", dns.rcode.NOERROR),
    ("gone.st.test", "A", dns.rcode.NXDOMAIN),
]
OLD = {
    ("web.st.test", "A"): "192.0.2.31",
    ("web6.st.test", "AAAA"): "2001:db8::31",
    ("_svc._tcp.st.test", "SRV"): "0 5 8080 target.st.test.",
    ("target.st.test", "A"): "192.0.2.32",
    ("target.st.test", "AAAA"): "2001:db8::32",
    ("gone.st.test", "A"): None,
}
NEW = {
    ("web.st.test", "A"): "192.0.2.41",
    ("web6.st.test", "AAAA"): "2001:db8::41",
    ("_svc._tcp.st.test", "SRV"): "0 5 8081 target.st.test.",
    ("target.st.test", "A"): "192.0.2.42",
    ("target.st.test", "AAAA"): "2001:db8::42",
    ("gone.st.test", "A"): "192.0.2.43",
}


def _data(reply, qname, qtype):
    """The one record of qname/qtype in the answer, as text, or None."""
    rrset = query.find(reply.msg, "answer", qname, qtype)
    if rrset is None:
        return None
    assert len(rrset) == 1, reply.text()
    return rrset[0].to_text()


def _wait_until(cond, timeout, what):
    """Poll cond every 20 ms until true; fail with what after timeout s."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _poll_fresh(d, qname, qtype, timeout, old):
    """Ask until the answer is not stale (bounded: every 0.1 s for up to
    timeout s); every stale answer met meanwhile must be the old data."""
    deadline = time.monotonic() + timeout
    while True:
        r = query.udp(d.port, qname, qtype, timeout=3.0)
        if not stale.is_stale(r):
            return r
        assert _data(r, qname, qtype) == old, r.text()
        assert time.monotonic() < deadline, \
            f"{qname} {qtype} still stale after {timeout}s:\n{r.text()}"
        time.sleep(0.1)


@pytest.mark.timeout_s(40)
def test_outage_longer_than_ttls_serves_every_cached_name_stale(
        new_bind, faultproxy, dnsdamper, bind):
    """A, AAAA, SRV with its targets, and an NXDOMAIN, cached; then the
    upstream is cut off for longer than their TTL (3 s) while the zone's
    data changes. Every name is still answered, stale (TTL 30, EDE 3),
    within client-timeout, the NXDOMAIN as NXDOMAIN; after the outage the
    new data comes, fresh."""
    ns = new_bind("st", {ORIGIN: BEFORE})
    fp = faultproxy(ns)
    d = dnsdamper([Forward(ORIGIN, [fp]), Forward(".", [bind])],
                  extra=OUTAGE_CONF)
    mark = ns.mark()

    # 1. warm the cache: A, AAAA, SRV and its target's A and AAAA (asked
    # by the client: srv-prefetch-targets fetches only what clients ask),
    # and an NXDOMAIN
    for qname, qtype, rcode in NAMES:
        r = query.udp(d.port, qname, qtype)
        assert r.rcode == rcode, r.text()
        assert _data(r, qname, qtype) == OLD[qname, qtype], r.text()
    assert ns.count("target.st.test", "A", since=mark) == 1
    cached_by = time.monotonic()    # every entry was stored before this

    # 2. cut the upstream off, and change the zone meanwhile
    fp.set(outage=True)
    ns.replace_zone(ORIGIN, AFTER)
    # every entry expires TTL = 3 s after it was stored; the outage runs
    # past that, plus a margin
    time.sleep(max(0.0, cached_by + TTL + 0.5 - time.monotonic()))

    # 3. every cached name is answered, stale, with the data it had; the
    # NXDOMAIN stays NXDOMAIN. Twice: the first query of each starts a
    # refresh that fails (or finds the upstream down), the second finds
    # that failure.
    for round_ in range(2):
        for qname, qtype, rcode in NAMES:
            r = query.udp(d.port, qname, qtype,
                          timeout=CLIENT_TIMEOUT + 5)
            assert r.rcode == rcode, r.text()
            assert _data(r, qname, qtype) == OLD[qname, qtype], r.text()
            if rcode == dns.rcode.NXDOMAIN:
                # RFC 2308 §3: the SOA stays, with the stale TTL too
                assert query.find(r.msg, "authority", ORIGIN, "SOA"), \
                    r.text()
            # RFC 8767 §4: TTL 30 on every record; RFC 8914 §4.4: EDE 3
            stale.assert_stale(r, STALE_TTL)
            # RFC 8767 §5: no client waits longer than client-timeout
            assert r.received - r.sent < CLIENT_TIMEOUT + MARGIN, \
                f"round {round_}: {qname} {qtype} took " \
                f"{r.received - r.sent:.3f} s"
    # a client without EDNS gets the stale TTL but no OPT record, so no EDE
    r = query.udp(d.port, "web.st.test", "A", edns=False,
                  timeout=CLIENT_TIMEOUT + 5)
    assert _data(r, "web.st.test", "A") == OLD["web.st.test", "A"]
    stale.assert_stale(r, STALE_TTL, edns=False)
    # and over TCP the same as over UDP
    r = query.tcp(d.port, "_svc._tcp.st.test", "SRV",
                  timeout=CLIENT_TIMEOUT + 5)
    assert _data(r, "_svc._tcp.st.test", "SRV") == \
        OLD["_svc._tcp.st.test", "SRV"], r.text()
    stale.assert_stale(r, STALE_TTL)
    # the daemon did try to refresh (else this proves nothing about stale)
    assert fp.stats()["dropped_outage"] >= 1

    # 4. the outage ends. A refresh still retrying, or the first query
    # once stale-refresh-interval (1 s) has passed since the last failed
    # refresh, reaches named; its answer replaces the stale entry: the new
    # data, fresh, TTL <= 3, and the NXDOMAIN is gone.
    fp.set()
    time.sleep(1.0)                 # stale-refresh-interval
    for qname, qtype, rcode in NAMES:
        got = _poll_fresh(d, qname, qtype, 5.0, OLD[qname, qtype])
        assert got.rcode == dns.rcode.NOERROR, got.text()
        assert _data(got, qname, qtype) == NEW[qname, qtype], got.text()
        stale.assert_fresh(got, TTL)
        # and it stays fresh
        again = query.udp(d.port, qname, qtype)
        assert _data(again, qname, qtype) == NEW[qname, qtype], again.text()
        stale.assert_fresh(again, TTL)
    d.assert_alive()


def test_outage_without_serve_stale_is_servfail(new_bind, faultproxy,
                                                dnsdamper, bind):
    """Negative control of the test above: with serve-stale no, an expired
    name in an outage is not answered from the cache (RFC 8767 off: the
    entry is gone at expiry), so the client gets SERVFAIL once
    query-timeout (1 s) has passed."""
    ns = new_bind("st", {ORIGIN: BEFORE})
    fp = faultproxy(ns)
    d = dnsdamper([Forward(ORIGIN, [fp]), Forward(".", [bind])],
                  extra=["serve-stale no", "client-timeout 1000ms",
                         "upstream-timeout 100ms 300ms", "query-timeout 1s"])
    r = query.udp(d.port, "web.st.test")
    assert query.addresses(r) == {"192.0.2.31"}, r.text()
    fp.set(outage=True)
    # expired TTL = 3 s after it was stored, which was before r.received
    time.sleep(max(0.0, r.received + TTL + 0.5 - time.monotonic()))
    r = query.udp(d.port, "web.st.test", timeout=1 + 5)
    assert r.rcode == dns.rcode.SERVFAIL, r.text()
    assert not r.msg.answer, r.text()


def test_client_timeout_0_answers_stale_at_once_and_refreshes(
        new_bind, faultproxy, dnsdamper, bind):
    """client-timeout 0: an expired entry's stale answer goes out at once
    (sooner than the 500 ms the upstream takes to answer), and the refresh
    runs in the background: named sees it, and the next answer is the
    fresh one (TTL <= 2, not stale)."""
    slow_ms = 500
    ttl = 2
    ns = new_bind("ct", {"ct.test": zone("ct.test", ttl,
                                         ["u A 192.0.2.25"])})
    fp = faultproxy(ns, delay_mean=slow_ms)
    d = dnsdamper([Forward("ct.test", [fp]), Forward(".", [bind])],
                  extra=["client-timeout 0", "upstream-timeout 1s 2s",
                         "query-timeout 4s"])
    r = query.udp(d.port, "u.ct.test")
    assert query.addresses(r) == {"192.0.2.25"}, r.text()
    time.sleep(max(0.0, r.received + ttl + 0.3 - time.monotonic()))
    mark = ns.mark()
    r = query.udp(d.port, "u.ct.test")
    assert query.addresses(r) == {"192.0.2.25"}, r.text()
    stale.assert_stale(r, STALE_TTL)
    assert r.received - r.sent < slow_ms / 1000, \
        f"stale answer after {r.received - r.sent:.3f} s"
    _wait_until(lambda: ns.count("u.ct.test", "A", since=mark) >= 1, 2.0,
                "no refresh in the background")
    # the refresh's answer is on its way back (500 ms): wait for it
    fresh = _poll_fresh(d, "u.ct.test", "A", 3.0, "192.0.2.25")
    stale.assert_fresh(fresh, ttl)


# --- SERVFAIL injected on 30 % of the upstream queries ----------------------

SF_TTL = 2
SF_NAMES = [f"n{i}.sf.test" for i in range(20)]
SF_ZONE = zone("sf.test", SF_TTL,
               [f"n{i} A 192.0.2.{100 + i}" for i in range(20)])
SF_ROUNDS = 8                   # x 20 names = 160 queries
SF_PAUSE = 0.25                 # s between rounds: ~2 s of queries


@pytest.mark.parametrize("serve_stale", ["yes", "no"])
def test_servfail_80_percent_never_reaches_a_cached_name(
        new_bind, faultproxy, dnsdamper, bind, serve_stale):
    """With serve-stale yes, no cached name is ever answered SERVFAIL while
    80 % of the upstream queries get SERVFAIL (seeded, so repeatable): a
    failed refresh falls back to the stale entry (RFC 8767 §4). With
    serve-stale no (the negative control) some of them are. (At 30 % the
    retries of the lone upstream, 5 tries in all, almost always find an
    answer: see test_flaky.py; at 80 % a third of the refreshes fail.)"""
    ns = new_bind("sf", {"sf.test": SF_ZONE})
    fp = faultproxy(ns, seed=30)
    d = dnsdamper([Forward("sf.test", [fp]), Forward(".", [bind])],
                  extra=[f"serve-stale {serve_stale}",
                         "client-timeout 1000ms",
                         "stale-refresh-interval 1s",
                         "failure-ttl 1s",
                         "upstream-timeout 100ms 300ms",
                         "query-timeout 1s"])
    # 1. cache every name
    for i, name in enumerate(SF_NAMES):
        r = query.udp(d.port, name)
        assert query.addresses(r) == {f"192.0.2.{100 + i}"}, r.text()
    # 2. let them all expire (TTL 2 s after the last was stored)
    time.sleep(max(0.0, r.received + SF_TTL + 0.3 - time.monotonic()))
    # 3. 80 % SERVFAIL from now on; ask every name, round after round
    fp.set(servfail=0.8)
    rcodes, stale_answers, wrong = [], 0, []
    for _ in range(SF_ROUNDS):
        for i, name in enumerate(SF_NAMES):
            r = query.udp(d.port, name, timeout=1 + 5)
            rcodes.append(r.rcode)
            stale_answers += stale.is_stale(r)
            if r.rcode == dns.rcode.NOERROR and \
                    query.addresses(r) != {f"192.0.2.{100 + i}"}:
                wrong.append(r.text())
        time.sleep(SF_PAUSE)
    servfails = rcodes.count(dns.rcode.SERVFAIL)
    # the fault was really there: some refreshes did fail
    assert fp.stats()["servfail"] >= 1
    assert not wrong, wrong[0]
    if serve_stale == "yes":
        assert servfails == 0, \
            f"{servfails} of {len(rcodes)} answers were SERVFAIL"
        assert set(rcodes) == {dns.rcode.NOERROR}
        # and some of them were stale: the fallback was exercised
        assert stale_answers >= 1
    else:
        assert servfails >= 1, "no SERVFAIL even without serve-stale"
        assert stale_answers == 0


# --- stale-refresh-interval, and refreshes known to be hopeless -------------

@pytest.mark.timeout_s(30)
def test_failed_refresh_is_not_retried_within_stale_refresh_interval(
        new_bind, faultproxy, dnsdamper, bind):
    """RFC 8767 §5 failure recheck timer. After a refresh of an expired
    entry failed, the entry's stale answer goes out at once, without
    asking any upstream, until stale-refresh-interval (3 s, times a factor
    in [3/4, 5/4) drawn for the entry) has passed since that failure, the
    upstream having answered nothing meanwhile; then a query starts a new
    refresh (in the background: the answer is still stale at once).

    "At once" is checked against half a second: a client that waited for
    a refresh would sit through client-timeout (1.5 s), or at least the
    upstream's fixed 1 s timeout before anything could give up."""
    interval = 3.0                  # stale-refresh-interval below
    ttl = 2
    ns = new_bind("sr", {"sr.test": zone("sr.test", ttl,
                                         ["x A 192.0.2.21"])})
    fp = faultproxy(ns)
    d = dnsdamper([Forward("sr.test", [fp]), Forward(".", [bind])],
                  extra=["client-timeout 1500ms",
                         "stale-refresh-interval 3s",
                         "upstream-timeout 1s", "query-timeout 2s"])
    r = query.udp(d.port, "x.sr.test")
    assert query.addresses(r) == {"192.0.2.21"}, r.text()
    time.sleep(max(0.0, r.received + ttl + 0.3 - time.monotonic()))

    # the refresh fails: the upstream answers SERVFAIL, to the query and
    # to the 4 retries the lone upstream gets (flaky is not down), and
    # the client, which was waiting for it, gets the stale answer
    fp.set(servfail=1.0)
    r = query.udp(d.port, "x.sr.test", timeout=1.5 + 5)
    assert query.addresses(r) == {"192.0.2.21"}, r.text()
    stale.assert_stale(r, STALE_TTL)
    assert fp.stats()["servfail"] == 5
    failed_by = r.received

    # within the interval: stale at once, and the upstream is not asked
    # (it is cut off now, so a refresh would also have kept a waiting
    # client waiting)
    fp.set(outage=True)
    before = fp.stats()["received_udp"]
    for _ in range(5):
        r = query.udp(d.port, "x.sr.test", timeout=1.5 + 5)
        assert query.addresses(r) == {"192.0.2.21"}, r.text()
        stale.assert_stale(r, STALE_TTL)
        assert r.received - r.sent < 0.5, \
            f"stale answer after {r.received - r.sent:.3f} s"
        time.sleep(0.3)
    # the entry's recheck time is interval times [3/4, 5/4), drawn per
    # entry: at least 2.25 s
    assert time.monotonic() < failed_by + interval * 3 / 4, "test too slow"
    assert fp.stats()["received_udp"] == before, \
        "a refresh within stale-refresh-interval"

    # past the interval (at most 3.75 s): still stale at once, but a
    # refresh goes out
    time.sleep(max(0.0, failed_by + interval * 5 / 4 + 0.2 -
                   time.monotonic()))
    r = query.udp(d.port, "x.sr.test", timeout=1.5 + 5)
    stale.assert_stale(r, STALE_TTL)
    assert r.received - r.sent < 0.5
    _wait_until(lambda: fp.stats()["received_udp"] > before, 1.0,
                "no refresh after stale-refresh-interval")


@pytest.mark.timeout_s(30)
def test_every_upstream_down_stale_answer_at_once(new_bind, faultproxy,
                                                  dnsdamper, bind):
    """When every upstream of the zone is down, an expired entry's stale
    answer goes out at once, even though its refresh never failed: no
    client waits for a refresh that cannot work.

    Both upstreams are cut off and driven down (3 timed-out queries each,
    from three other names). upstream-timeout 1s fixes every timeout at
    1 s, so a client that waited for the refresh would wait at least 1 s;
    at once is checked against half of that."""
    ttl = 2
    ns = new_bind("ad", {"ad.test": zone("ad.test", ttl,
                                         ["y A 192.0.2.22",
                                          "* A 192.0.2.23"])})
    p1, p2 = faultproxy(ns), faultproxy(ns)
    d = dnsdamper([Forward("ad.test", [p1, p2], "order"),
                   Forward(".", [bind])],
                  extra=["client-timeout 1800ms", "upstream-timeout 1s",
                         "query-timeout 3s"])
    r = query.udp(d.port, "y.ad.test")
    assert query.addresses(r) == {"192.0.2.22"}, r.text()
    expires = r.received + ttl

    mark = d.log_size()
    p1.set(outage=True)
    p2.set(outage=True)
    # three resolutions of other names: each times out on p1 (1 s), then
    # on p2: three failures in a row each, both down after about 2 s
    socks = []
    for i in range(3):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        socks.append(s)
        s.connect((ports.check_loopback(ports.LOOPBACK), d.port))
        s.send(query.make_query(f"z{i}.ad.test").to_wire())
    for p in (p1, p2):
        d.wait_log(rf"upstream 127\.0\.0\.1:{p.port} is down after 3 "
                   rf"failures", since=mark, timeout=5.0)
    for s in socks:
        s.close()
    time.sleep(max(0.0, expires + 0.3 - time.monotonic()))

    r = query.udp(d.port, "y.ad.test", timeout=1.8 + 5)
    assert query.addresses(r) == {"192.0.2.22"}, r.text()
    stale.assert_stale(r, STALE_TTL)
    assert r.received - r.sent < 0.5, \
        f"stale answer after {r.received - r.sent:.3f} s, every upstream " \
        f"being down"


def test_waiting_client_gets_stale_once_every_upstream_goes_down(
        new_bind, faultproxy, dnsdamper, bind):
    """A client waiting for the refresh of an expired entry stops waiting
    as soon as every upstream of the zone is down (dnsdamper.conf(5)
    client-timeout): here the only upstream is cut off, and its refresh
    queries time out after 100, 200 and 200 ms (upstream-timeout 100ms
    200ms: the timeout doubles after each, up to 200 ms), so it is down
    about 0.5 s into the wait: far sooner than client-timeout (5 s). The
    bound checked is half of client-timeout."""
    client_timeout = 5.0
    ttl = 2
    ns = new_bind("wd", {"wd.test": zone("wd.test", ttl,
                                         ["v A 192.0.2.24"])})
    fp = faultproxy(ns)
    d = dnsdamper([Forward("wd.test", [fp]), Forward(".", [bind])],
                  extra=["client-timeout 5000ms",
                         "upstream-timeout 100ms 200ms", "query-timeout 8s"])
    r = query.udp(d.port, "v.wd.test")
    assert query.addresses(r) == {"192.0.2.24"}, r.text()
    time.sleep(max(0.0, r.received + ttl + 0.3 - time.monotonic()))
    fp.set(outage=True)
    mark = d.log_size()
    r = query.udp(d.port, "v.wd.test", timeout=client_timeout + 3)
    assert query.addresses(r) == {"192.0.2.24"}, r.text()
    stale.assert_stale(r, STALE_TTL)
    d.wait_log(rf"upstream 127\.0\.0\.1:{fp.port} is down", since=mark,
               timeout=1.0)
    assert r.received - r.sent < client_timeout / 2, \
        f"stale answer after {r.received - r.sent:.3f} s"


def test_late_prefetch_means_stale_at_once(new_bind, faultproxy, dnsdamper,
                                           bind):
    """A refresh that started before the entry expired (a prefetch) and
    has not ended when it expires is late: the upstream is slow right now,
    so a client asking then gets the stale answer at once instead of
    waiting up to client-timeout for it.

    The upstream answers 2.5 s late; upstream-timeout 3s fixes every
    timeout at 3 s (no retransmission). TTL 4 s, so the prefetch window is
    half the life, 2 s (10 % of 4 s, widened to 4 * 3 s, capped at half).
    Timeline from the first answer at t=0: expiry at 4 s; a query at 2.5 s
    starts the prefetch (answered at 5 s); a query at 4.3 s finds it
    expired with that prefetch in flight."""
    ttl = 4
    ns = new_bind("lp", {"lp.test": zone("lp.test", ttl, ["x A 192.0.2.24"])})
    fp = faultproxy(ns, delay_mean=2500, delay_stddev=0)
    d = dnsdamper([Forward("lp.test", [fp]), Forward(".", [bind])],
                  extra=["upstream-timeout 3s", "query-timeout 6s",
                         "client-timeout 1800ms"])
    r = query.udp(d.port, "x.lp.test", timeout=5)
    assert query.addresses(r) == {"192.0.2.24"}, r.text()
    t0 = r.received
    time.sleep(max(0.0, t0 + 2.5 - time.monotonic()))
    before = fp.stats()["received_udp"]
    r = query.udp(d.port, "x.lp.test")         # fresh: starts a prefetch
    stale.assert_fresh(r, ttl)
    _wait_until(lambda: fp.stats()["received_udp"] > before, 1.0,
                "no prefetch in the last half of the entry's life")
    time.sleep(max(0.0, t0 + ttl + 0.3 - time.monotonic()))
    r = query.udp(d.port, "x.lp.test", timeout=5)
    assert query.addresses(r) == {"192.0.2.24"}, r.text()
    stale.assert_stale(r, STALE_TTL)
    # at once, not after the prefetch's answer (0.7 s away) nor after
    # client-timeout (1.8 s)
    assert r.received - r.sent < 0.4, \
        f"stale answer after {r.received - r.sent:.3f} s"


def test_refresh_retried_as_soon_as_an_upstream_is_back(
        new_bind, faultproxy, dnsdamper, bind):
    """After a failed refresh the entry waits stale-refresh-interval (1 h
    here) before the next, unless an upstream of its zone answers again
    meanwhile: then the next query starts a refresh and, the upstream being
    known to answer, waits for it (client-timeout): it is fresh."""
    ttl = 2
    ns = new_bind("rc", {"rc.test": zone("rc.test", ttl,
                                         ["x A 192.0.2.25",
                                          "* A 192.0.2.26"])})
    fp = faultproxy(ns)
    d = dnsdamper([Forward("rc.test", [fp]), Forward(".", [bind])],
                  extra=["stale-refresh-interval 1h", "client-timeout 500ms",
                         "upstream-timeout 200ms", "query-timeout 1s"])
    r = query.udp(d.port, "x.rc.test")
    assert query.addresses(r) == {"192.0.2.25"}, r.text()
    mark = d.log_size()
    fp.set(outage=True)
    time.sleep(max(0.0, r.received + ttl + 0.2 - time.monotonic()))
    # the refresh fails (timeouts) and the upstream goes down with it
    r = query.udp(d.port, "x.rc.test", timeout=5)
    stale.assert_stale(r, STALE_TTL)
    for i in range(3):
        query.udp(d.port, f"z{i}.rc.test", timeout=5)
    d.wait_log(rf"upstream 127\.0\.0\.1:{fp.port} is down", since=mark,
               timeout=5.0)
    # it comes back; a probe (1 s after it went down) marks it up
    fp.clear()
    d.wait_log(rf"upstream 127\.0\.0\.1:{fp.port} is up again", since=mark,
               timeout=5.0)
    r = query.udp(d.port, "x.rc.test")
    assert query.addresses(r) == {"192.0.2.25"}, r.text()
    stale.assert_fresh(r, ttl)
