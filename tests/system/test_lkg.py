"""Last known good (dnsdamper.conf(5) `last-known-good`): an upstream that
answers fast but negatively for names that resolved a moment ago.

Each test starts its own named serving sd.test, replaces its zone while
the daemon (threads 2, the harness's default) runs, and asks the daemon.

The values checked, from the config the tests write and the RFCs:
  held answer  = the last positive answer, stale: every TTL
                 stale-answer-ttl = 30 s (RFC 8767 §4), EDE 3 "Stale
                 Answer" (RFC 8914 §4.4) with an EXTRA-TEXT saying the
                 upstream's NXDOMAIN or NODATA is held
  hold         = last-known-good-hold 2s below
  collapse     = at least 3 names, and at least 20 % of the zone's names
                 in use, negative within one hold: the zone is held
                 past the hold, until the upstream answers again
  deletion     = one name of 20 negative for a whole hold: NXDOMAIN
                 from then on, its SOA TTL min(SOA TTL, MINIMUM) = 2 s
                 (RFC 2308 §5)
No timing assertion: every loop below is bounded, and a test waits for
what it expects rather than for a time.
"""

import re
import time

import dns.edns
import dns.rcode
import pytest

import json

from dnstest import query, stale
from dnstest.control import ctl
from dnstest.daemon import Forward
from dnstest.zonetext import zone

ORIGIN = "sd.test"
TTL = 2
STALE_TTL = 30
HOLD = 2.0
LKG_CONF = ["last-known-good yes", "last-known-good-hold 2s"]

NAMES = {
    ("_api._tcp.sd.test", "SRV"): "0 5 8080 t1.sd.test.",
    ("t1.sd.test", "A"): "192.0.2.1",
    ("web.sd.test", "A"): "192.0.2.2",
    ("db.sd.test", "A"): "192.0.2.3",
    ("db.sd.test", "AAAA"): "2001:db8::3",
}
FULL = zone(ORIGIN, TTL, [
    "_api._tcp SRV 0 5 8080 t1",
    "t1 A 192.0.2.1",
    "web A 192.0.2.2",
    "db A 192.0.2.3",
    "db AAAA 2001:db8::3",
])


def empty(serial):
    """The zone as an automation bug pushes it: SOA and NS only."""
    return zone(ORIGIN, TTL, [], serial=serial)


def full(serial):
    return FULL.replace(" 1 3600 600", f" {serial} 3600 600")


def _data(reply, qname, qtype):
    rrset = query.find(reply.msg, "answer", qname, qtype)
    return None if rrset is None else sorted(r.to_text() for r in rrset)


def _ede_texts(reply):
    return [o.text for o in reply.msg.options
            if o.otype == dns.edns.OptionType.EDE]


def assert_held(reply, qname, qtype, old):
    """A last known good answer: the old data, stale, EDE 3 with the text."""
    assert reply.rcode == dns.rcode.NOERROR, reply.text()
    assert _data(reply, qname, qtype) == [old], reply.text()
    stale.assert_stale(reply, STALE_TTL)
    texts = _ede_texts(reply)
    assert texts and "held: last known good" in texts[0], reply.text()


def _wait_expired(cached_by):
    # every entry expires TTL s after it was stored; a margin past that
    time.sleep(max(0.0, cached_by + TTL + 0.3 - time.monotonic()))


def _poll(what, cond, timeout=15.0, every=0.1):
    """cond() until it returns a true value, every `every` s, for up to
    timeout s; fails with what."""
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        assert time.monotonic() < deadline, what
        time.sleep(every)


@pytest.mark.timeout_s(60)
def test_empty_push_held_then_restored(new_bind, dnsdamper, bind):
    """The zone is replaced by SOA and NS only: every name in use keeps
    its last known good answer (stale, EDE 3 with the text) well past the
    hold (a collapse: 5 of 5 names), a name never asked gets NXDOMAIN at
    once; the zone restored, the names come back fresh, and the log says
    the zone was held and when it ended."""
    ns = new_bind("lkg", {ORIGIN: FULL})
    d = dnsdamper([Forward(ORIGIN, [ns]), Forward(".", [bind])],
                  extra=LKG_CONF + ["log-queries yes"])
    for (qname, qtype), old in NAMES.items():
        r = query.udp(d.port, qname, qtype)
        assert _data(r, qname, qtype) == [old], r.text()
    cached_by = time.monotonic()
    log = d.log_size()
    ns.replace_zone(ORIGIN, empty(2))
    _wait_expired(cached_by)

    # held: every round until three holds have passed, every name's
    # answer is its last known good one; never NXDOMAIN or NODATA
    end = time.monotonic() + 3 * HOLD
    rounds = 0
    while time.monotonic() < end or rounds < 2:
        for (qname, qtype), old in NAMES.items():
            assert_held(query.udp(d.port, qname, qtype, timeout=5.0),
                        qname, qtype, old)
        rounds += 1
        time.sleep(0.2)
    m = d.wait_log(r"last-known-good: zone sd\.test\. held: .* negative "
                   r"for (\d+) of its (\d+) names", since=log)
    assert int(m.group(1)) >= 3, m.group(0)
    # what watches answers (log-queries here, monitor and dnstap alike)
    # tells a last known good answer from a merely stale one
    logged = {(x["name"], x["source"]) for x in map(json.loads, re.findall(
        r"query: (\{.*\})$", d.stderr(log), re.M))}
    assert ("web.sd.test.", "last-known-good") in logged, logged
    # visible: dnsdamperctl lkg (JSON) lists the zone held and each
    # name, what the upstream says, and no end to the hold; explain says
    # the answer is a last known good one and why; the metrics count
    held = json.loads(ctl("-s", str(d.control_path), "--json", "lkg").stdout)
    zones = {z["zone"]: z for z in held["zones"]}
    assert zones["sd.test."]["held"] is True, held
    assert zones["sd.test."]["held_names"] == len(NAMES), held
    names = {(n["name"], n["type"]): n for n in held["names"]}
    web = names["web.sd.test.", "A"]
    assert web["upstream_says"] == "NXDOMAIN", held
    assert web["hold_ends_in_s"] is None, held
    text = ctl("-s", str(d.control_path), "lkg").stdout
    assert "web.sd.test." in text and "zone held" in text, text
    ex = ctl("-s", str(d.control_path), "explain", "web.sd.test").stdout
    assert "a last known good answer" in ex and "NXDOMAIN" in ex, ex
    exp = d.control().metrics()
    assert exp.get("dnsdamper_lkg_held_zones") == 1
    assert exp.get("dnsdamper_lkg_zone_held", zone="sd.test.") == 1
    assert exp.get("dnsdamper_lkg_held_names") == len(NAMES)
    # every round's answers but those of the first (which waited for the
    # refresh that was held) count; at least the second round's
    assert exp.get("dnsdamper_lkg_answers_total", zone="sd.test.") >= \
        len(NAMES)

    # the upstream does answer NXDOMAIN now; a name with no positive
    # answer cached gets it at once
    r = query.udp(d.port, "never.sd.test", "A")
    assert r.rcode == dns.rcode.NXDOMAIN, r.text()
    assert query.udp(ns.port, "web.sd.test", "A").rcode == \
        dns.rcode.NXDOMAIN

    # restored: each name fresh again (its next re-check, <= 1.5 s)
    ns.replace_zone(ORIGIN, full(3))
    for (qname, qtype), old in NAMES.items():
        r = _poll(f"{qname} {qtype} never fresh again",
                  lambda: (lambda r: r if not stale.is_stale(r) else None)(
                      query.udp(d.port, qname, qtype, timeout=5.0)))
        assert _data(r, qname, qtype) == [old], r.text()
        stale.assert_fresh(r, TTL)
    d.wait_log(r"last-known-good: zone sd\.test\. no longer held", since=log,
               timeout=10.0)


MANY = [f"s{i:02d}" for i in range(20)]


def many(serial, without=()):
    return zone(ORIGIN, TTL, [f"{n} A 192.0.2.{10 + i}"
                              for i, n in enumerate(MANY) if n not in without],
                serial=serial)


@pytest.mark.timeout_s(60)
def test_deletion_goes_through_after_hold(new_bind, dnsdamper, bind):
    """One name of 20 deleted for good: held first (its last known good
    answer), then, the hold over while the others answer, NXDOMAIN with
    the SOA's negative TTL (RFC 2308 §5: min(2, 2) = 2 s); the others
    never fail."""
    ns = new_bind("lkg", {ORIGIN: many(1)})
    d = dnsdamper([Forward(ORIGIN, [ns]), Forward(".", [bind])],
                  extra=LKG_CONF)
    for i, n in enumerate(MANY):
        r = query.udp(d.port, f"{n}.sd.test", "A")
        assert _data(r, f"{n}.sd.test", "A") == [f"192.0.2.{10 + i}"]
    cached_by = time.monotonic()
    ns.replace_zone(ORIGIN, many(2, without=("s07",)))
    _wait_expired(cached_by)

    seen = []

    def round_():
        for i, n in enumerate(MANY):
            if n == "s07":
                continue
            r = query.udp(d.port, f"{n}.sd.test", "A", timeout=5.0)
            assert r.rcode == dns.rcode.NOERROR, r.text()
            assert _data(r, f"{n}.sd.test", "A") == [f"192.0.2.{10 + i}"]
        r = query.udp(d.port, "s07.sd.test", "A", timeout=5.0)
        seen.append(r)
        return r.rcode == dns.rcode.NXDOMAIN

    _poll("s07 never NXDOMAIN", round_, timeout=20.0, every=0.2)
    # first its last known good answer, then NXDOMAIN, never back
    assert_held(seen[0], "s07.sd.test", "A", "192.0.2.17")
    first_nx = next(i for i, r in enumerate(seen)
                    if r.rcode == dns.rcode.NXDOMAIN)
    for r in seen[:first_nx]:
        assert_held(r, "s07.sd.test", "A", "192.0.2.17")
    nx = seen[first_nx]
    soa = query.find(nx.msg, "authority", ORIGIN, "SOA")
    assert soa is not None and soa.ttl <= TTL, nx.text()
    again = query.udp(d.port, "s07.sd.test", "A")
    assert again.rcode == dns.rcode.NXDOMAIN, again.text()


@pytest.mark.timeout_s(40)
def test_off_passes_negatives_and_shrinking_sets(new_bind, dnsdamper, bind):
    """With last-known-good no (the default) the empty zone's NXDOMAIN
    goes straight through; with it on, an SRV set that shrinks is an
    answer, passed on as it is."""
    ns = new_bind("lkg", {ORIGIN: FULL})
    off = dnsdamper([Forward(ORIGIN, [ns]), Forward(".", [bind])])
    on = dnsdamper([Forward(ORIGIN, [ns]), Forward(".", [bind])],
                   extra=LKG_CONF)
    for d in (off, on):
        r = query.udp(d.port, "web.sd.test", "A")
        assert _data(r, "web.sd.test", "A") == ["192.0.2.2"]
        r = query.udp(d.port, "_api._tcp.sd.test", "SRV")
        assert len(_data(r, "_api._tcp.sd.test", "SRV")) == 1
    cached_by = time.monotonic()
    ns.replace_zone(ORIGIN, zone(ORIGIN, TTL, [
        "_api._tcp SRV 0 5 8080 t1", "_api._tcp SRV 0 5 8081 t1",
        "t1 A 192.0.2.1"], serial=2))
    _wait_expired(cached_by)
    r = _poll("web.sd.test never NXDOMAIN with last-known-good no",
              lambda: (lambda r: r if r.rcode == dns.rcode.NXDOMAIN
                       else None)(query.udp(off.port, "web.sd.test", "A")))
    # the grown set comes fresh; then shrunk again, the smaller one too
    r = _poll("the SRV set never grew",
              lambda: (lambda r: r if len(_data(
                  r, "_api._tcp.sd.test", "SRV") or []) == 2 else None)(
                  query.udp(on.port, "_api._tcp.sd.test", "SRV")))
    cached_by = time.monotonic()
    ns.replace_zone(ORIGIN, zone(ORIGIN, TTL, [
        "_api._tcp SRV 0 5 8081 t1", "t1 A 192.0.2.1"], serial=3))
    _wait_expired(cached_by)
    r = _poll("the SRV set never shrank",
              lambda: (lambda r: r if _data(
                  r, "_api._tcp.sd.test", "SRV") == ["0 5 8081 t1.sd.test."]
                  else None)(query.udp(on.port, "_api._tcp.sd.test", "SRV")))
    stale.assert_fresh(r, TTL)


@pytest.mark.timeout_s(60)
def test_release_lets_the_zone_go(new_bind, dnsdamper, bind):
    """A held zone, released by the operator (dnsdamperctl lkg release):
    its names' NXDOMAIN goes through at their next refresh, logged."""
    ns = new_bind("lkg", {ORIGIN: FULL})
    d = dnsdamper([Forward(ORIGIN, [ns]), Forward(".", [bind])],
                  extra=LKG_CONF)
    for (qname, qtype), old in NAMES.items():
        assert _data(query.udp(d.port, qname, qtype), qname, qtype) == [old]
    cached_by = time.monotonic()
    log = d.log_size()
    ns.replace_zone(ORIGIN, empty(2))
    _wait_expired(cached_by)
    for (qname, qtype), old in NAMES.items():
        assert_held(query.udp(d.port, qname, qtype, timeout=5.0),
                    qname, qtype, old)
    d.wait_log(r"last-known-good: zone sd\.test\. held", since=log)
    bad = ctl("-s", str(d.control_path), "lkg", "release", "nowhere.test")
    assert bad.returncode == 1, bad        # dnsdamperctl(8): 1, said no
    r = ctl("-s", str(d.control_path), "lkg", "release", "SD.test")
    assert r.returncode == 0 and "released sd.test." in r.stdout, r
    d.wait_log(r"last-known-good: zone sd\.test\. released by the operator",
               since=log)
    r = _poll("web.sd.test never NXDOMAIN after the release",
              lambda: (lambda r: r if r.rcode == dns.rcode.NXDOMAIN
                       else None)(query.udp(d.port, "web.sd.test", "A",
                                            timeout=5.0)))
    assert ctl("-s", str(d.control_path), "--json", "lkg").returncode == 0
