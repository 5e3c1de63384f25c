"""Flaky is not down (dnsdamper.conf(5) "Upstream health",
stale-refresh-interval, failure-ttl, retry-budget): an upstream that
answers SERVFAIL to some queries is asked again before anything is served
stale; a name kept stale by a failed refresh, or a cached failure, ends as
soon as the upstream answers again, for any name; a resolution that waits
on a silent upstream asks it again the moment it is back; and queries
beyond a resolution's first stay within the retry budget.

Each test has its own named behind a faultproxy (tests/faultproxy). The
storm is the proxy's servfail_every_other: the 1st, 3rd, 5th... query of
each question is answered SERVFAIL and the others go on, so every refresh
meets exactly one SERVFAIL before its answer, with no chance in it.

Values, from the RFCs and the config the tests write:
  stale TTL     = stale-answer-ttl, default 30 s (RFC 8767 §4)
  retries       = the last upstream left is asked again up to 4 times
                  after a SERVFAIL (FETCH_SAME_RETRIES): one more try is
                  enough here
  budget        = 10 % of first queries over 10 s, at least
                  retry-budget-min (default 20) in any 10 s
"""

import socket
import threading
import time

import dns.rcode
import pytest

from dnstest import ports, query, stale
from dnstest.daemon import Forward
from dnstest.zonetext import zone

STALE_TTL = 30
TTL = 2
ORIGIN = "fl.test"
NAMES = [f"n{i}.fl.test" for i in range(8)]
ZONE = zone(ORIGIN, TTL, [f"n{i} A 192.0.2.{60 + i}" for i in range(8)] +
            ["* A 192.0.2.99"])
CONF = ["client-timeout 1500ms", "upstream-timeout 100ms 300ms",
        "query-timeout 2s"]


def _addr(i):
    return f"192.0.2.{60 + i}"


def _cache_all(d):
    last = None
    for i, name in enumerate(NAMES):
        last = query.udp(d.port, name)
        assert query.addresses(last) == {_addr(i)}, last.text()
    return last


def _until_expired(reply):
    """Sleep until the entry answered by reply has expired (TTL s after
    it was stored, which was before reply.received) with some margin."""
    time.sleep(max(0.0, reply.received + TTL + 0.3 - time.monotonic()))


@pytest.mark.timeout_s(60)
@pytest.mark.parametrize("budget", ["default", "none"])
def test_servfail_storm_is_retried_not_stale(new_bind, faultproxy, dnsdamper,
                                             bind, budget):
    """Every name cached, then expired; the upstream answers every other
    query of each question SERVFAIL. Asked again, round after round, each
    name is refreshed while its client waits (client-timeout): the refresh
    meets one SERVFAIL, asks the same upstream again (it is the only one),
    and the client gets the fresh answer: no stale answer, no SERVFAIL,
    and the proxy answered exactly one SERVFAIL per refresh. Every refresh
    needs a retry here, 16 of them within 10 s, more than 10 % of 16 first
    queries: the default retry-budget-min, 20, lets them all go. Negative
    control, no budget (retry-budget 0, retry-budget-min 0): no retry, so
    the first round of refreshes fails and every name is answered
    stale."""
    ns = new_bind("fl", {ORIGIN: ZONE})
    fp = faultproxy(ns)
    extra = CONF + ["stale-refresh-interval 1h"]
    if budget == "none":
        extra += ["retry-budget 0", "retry-budget-min 0"]
    d = dnsdamper([Forward(ORIGIN, [fp]), Forward(".", [bind])],
                  extra=extra)
    _until_expired(_cache_all(d))
    fp.set(servfail_every_other=True)
    rounds = 1 if budget == "none" else 2
    stale_answers, refreshes = 0, 0
    for _ in range(rounds):
        for i, name in enumerate(NAMES):
            r = query.udp(d.port, name, timeout=1.5 + 5)
            assert r.rcode == dns.rcode.NOERROR, r.text()
            assert query.addresses(r) == {_addr(i)}, r.text()
            stale_answers += stale.is_stale(r)
            refreshes += 1
        last = r
        _until_expired(last)
    if budget == "none":
        assert stale_answers == len(NAMES), \
            f"{stale_answers} stale of {len(NAMES)} without retries"
        return
    assert stale_answers == 0, f"{stale_answers} of {refreshes} stale"
    st = fp.stats()
    # one SERVFAIL, then the answer, for each refresh
    assert st["servfail"] == refreshes, st
    assert st["forwarded"] >= refreshes, st
    m = d.control().metrics()
    assert m.value("dnsdamper_upstream_retries_total") == refreshes
    assert m.value("dnsdamper_upstream_retries_denied_total") == 0


@pytest.mark.timeout_s(40)
def test_stale_ends_when_the_upstream_answers_any_name(
        new_bind, faultproxy, dnsdamper, bind):
    """RFC 8767 §5's failure recheck timer (stale-refresh-interval, 1 h
    here) holds a name stale after its refresh failed only while no
    upstream of its zone answers: once it answers another name, the next
    query of the stale one refreshes it, and that client, which now has
    reason to wait, gets the fresh answer. Before, it stayed stale for the
    whole hour."""
    ns = new_bind("fl", {ORIGIN: ZONE})
    fp = faultproxy(ns)
    d = dnsdamper([Forward(ORIGIN, [fp]), Forward(".", [bind])],
                  extra=CONF + ["stale-refresh-interval 1h"])
    r = query.udp(d.port, NAMES[0])
    _until_expired(r)
    # its refresh fails: every query answered SERVFAIL (the first try and
    # the 4 retries of the lone upstream)
    fp.set(servfail=1.0)
    r = query.udp(d.port, NAMES[0], timeout=1.5 + 5)
    stale.assert_stale(r, STALE_TTL)
    assert fp.stats()["servfail"] == 5, fp.stats()
    # within the interval and with nothing answered since: stale at once,
    # the upstream not asked
    before = fp.stats()["received_udp"]
    r = query.udp(d.port, NAMES[0], timeout=1.5 + 5)
    stale.assert_stale(r, STALE_TTL)
    assert fp.stats()["received_udp"] == before
    # the upstream answers again, another name first
    fp.clear()
    r = query.udp(d.port, "other.fl.test")
    assert query.addresses(r) == {"192.0.2.99"}, r.text()
    r = query.udp(d.port, NAMES[0], timeout=1.5 + 5)
    assert query.addresses(r) == {_addr(0)}, r.text()
    stale.assert_fresh(r, TTL)


@pytest.mark.timeout_s(40)
def test_cached_failure_ends_when_the_upstream_answers(
        new_bind, faultproxy, dnsdamper, bind):
    """RFC 9520: a resolution that failed during an outage is cached for
    failure-ttl (5 min here) and answered SERVFAIL without asking
    upstream; but once the upstream answers again, for any name, the
    failure is over: the next query is resolved, not answered SERVFAIL
    for the rest of the 5 minutes."""
    ns = new_bind("fl", {ORIGIN: ZONE})
    fp = faultproxy(ns)
    d = dnsdamper([Forward(ORIGIN, [fp]), Forward(".", [bind])],
                  extra=CONF + ["failure-ttl 5m"])
    ctl = d.control()
    fp.set(outage=True)
    r = query.udp(d.port, NAMES[1], timeout=2 + 5)
    assert r.rcode == dns.rcode.SERVFAIL, r.text()
    # cached: answered without a resolution (the upstream is probed
    # meanwhile, down as it is, but no client query reaches it)
    started = ctl.metrics().value("dnsdamper_resolutions_total")
    r = query.udp(d.port, NAMES[1])
    assert r.rcode == dns.rcode.SERVFAIL, r.text()
    fp.clear()
    # still cached: nothing has answered since (a probe may have by now,
    # so no more than the one query is asserted here)
    assert ctl.metrics().value("dnsdamper_resolutions_total") == started, \
        "the failure is not cached"
    r = query.udp(d.port, "other.fl.test", timeout=2 + 5)
    assert query.addresses(r) == {"192.0.2.99"}, r.text()
    r = query.udp(d.port, NAMES[1])
    assert query.addresses(r) == {_addr(1)}, r.text()
    assert ctl.metrics().value("dnsdamper_resolutions_total") == started + 2


@pytest.mark.timeout_s(60)
def test_waiting_resolution_asks_again_when_the_upstream_is_back(
        new_bind, faultproxy, dnsdamper, bind):
    """A client asks while the only upstream is silent; its resolution
    times out three times (200 ms, then 400, then 800: RFC 6298 §5.5
    doubling) and the upstream is marked down, after which nothing more is
    sent for it (every upstream down: no retries, the probes look). When
    the upstream answers again (another client's name, here), that
    resolution asks it again at once and the first client gets its answer,
    long before query-timeout (20 s) and before the next retransmission
    the old back-off would have made (the RTO is 1.6 s by then, up to
    upstream-timeout's 8 s)."""
    ns = new_bind("fl", {ORIGIN: ZONE})
    fp = faultproxy(ns)
    d = dnsdamper([Forward(ORIGIN, [fp]), Forward(".", [bind])],
                  extra=["client-timeout 1500ms",
                         "upstream-timeout 200ms 8s", "query-timeout 20s"])
    fp.set(outage=True)
    mark = d.log_size()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((ports.check_loopback(ports.LOOPBACK), d.port))
    s.settimeout(19.0)
    got = {}

    def wait():
        try:
            got["wire"] = s.recv(65535)
            got["at"] = time.monotonic()
        except OSError as e:
            got["error"] = e

    with s:
        s.send(query.make_query(NAMES[2], msg_id=0x5a5a).to_wire())
        t = threading.Thread(target=wait, daemon=True)
        t.start()
        d.wait_log(rf"upstream 127\.0\.0\.1:{fp.port} is down", since=mark,
                   timeout=5.0)
        fp.clear()
        r = query.udp(d.port, "other.fl.test", timeout=5)
        assert query.addresses(r) == {"192.0.2.99"}, r.text()
        back = r.received
        t.join(20.0)
    assert "wire" in got, got
    m = dns.message.from_wire(got["wire"])
    assert m.id == 0x5a5a and m.rcode() == dns.rcode.NOERROR, m.to_text()
    assert got["at"] - back < 1.0, \
        f"answered {got['at'] - back:.3f} s after the upstream was back"


@pytest.mark.timeout_s(60)
@pytest.mark.parametrize("budget", ["10", "100"])
def test_retry_budget_bounds_hedges(new_bind, faultproxy, dnsdamper, bind,
                                    budget):
    """Every answer of the upstream comes 600 ms late while its timeout is
    at most 100 ms (upstream-timeout 50ms 100ms): each resolution would
    hedge (ask again) after 100 ms, and the first three timeouts, nothing
    having been answered since they went out, mark the upstream down
    until the first late answer marks it up, when every resolution still
    waiting asks again at once. 40 names asked at once: with retry-budget
    10 (10 % of 40 first queries is 4, less than retry-budget-min 10)
    at most 10 queries beyond the 40 first go out in those 10 s, and the
    clients still get their answers (late). Negative control,
    retry-budget 100: more. (The upstream also gets one loop probe, on
    first use.)"""
    ns = new_bind("fl", {ORIGIN: ZONE})
    fp = faultproxy(ns, delay_mean=600)
    d = dnsdamper([Forward(ORIGIN, [fp]), Forward(".", [bind])],
                  extra=["upstream-timeout 50ms 100ms", "query-timeout 3s",
                         f"retry-budget {budget}", "retry-budget-min 10"])
    before = fp.stats()["received_udp"]
    names = [f"h{i}.fl.test" for i in range(40)]
    socks = []
    for i, name in enumerate(names):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((ports.check_loopback(ports.LOOPBACK), d.port))
        s.settimeout(5.0)
        s.send(query.make_query(name, msg_id=i).to_wire())
        socks.append(s)
    try:
        for i, s in enumerate(socks):
            m = dns.message.from_wire(s.recv(65535))
            assert m.id == i and m.rcode() == dns.rcode.NOERROR, m.to_text()
    finally:
        for s in socks:
            s.close()
    sent = fp.stats()["received_udp"] - before
    metrics = d.control().metrics()
    retries = metrics.value("dnsdamper_upstream_retries_total")
    if budget == "10":
        assert retries <= 10, retries
        assert sent <= 40 + 10 + 1, f"{sent} upstream queries for 40 names"
        assert metrics.value("dnsdamper_upstream_retries_denied_total") > 0
    else:
        assert sent > 40 + 10 + 1, \
            f"{sent}: no more hedges even with retry-budget 100"
