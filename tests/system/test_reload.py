"""SIGHUP rereads the config: parse the new one, then swap (STYLE.md 6).
A broken file changes nothing (and is reported as `file:line: message`);
a good one takes effect, and the cache survives it.

Two upstreams serve reload.test with different addresses, so each answer
tells where it came from:
  A  the session named (zones/reload.test.zone):   192.0.2.6x/7x/8x/91
  B  started here (B_ZONE below):                  192.0.2.6x/7x/8x/92
"""

import re
import socket
import time

import dns.message
import dns.rcode
import dns.rdatatype
import pytest

from dnstest import checks, ports, query
from dnstest.daemon import Forward

B_ZONE = """\
$TTL 300
@               300 IN SOA  ns.reload.test. hostmaster.reload.test. 1 3600 600 86400 60
@               300 IN NS   ns
ns              300 IN A    127.0.0.1
cached          300 IN A    192.0.2.62
broken          300 IN A    192.0.2.72
after           300 IN A    192.0.2.82
*.probe         300 IN A    192.0.2.92
"""


def _addr(d, name):
    r = query.udp(d.port, name)
    assert r.rcode == dns.rcode.NOERROR, r.text()
    return query.addresses(r)


def _wait_for_routing(d, addr, timeout=5.0):
    """Poll until the new routing answers. Each try asks a name never asked
    before (the wildcard *.probe.reload.test), so no try can be answered
    from, or leave anything in, the cache: it shows where that very query
    was forwarded."""
    deadline = time.monotonic() + timeout
    i = 0
    while True:
        i += 1
        got = query.addresses(query.udp(d.port, f"p{i}.probe.reload.test"))
        if got == {addr}:
            return
        assert time.monotonic() < deadline, \
            f"still answered {got} {timeout}s after SIGHUP, want {addr}"
        time.sleep(0.05)


# one worker as before threads, and two, each of which must take the
# reload before it is said done
@pytest.mark.parametrize("threads", [1, 2])
def test_sighup_broken_config_keeps_old_then_good_config_applies(
        dnsdamper, bind, new_bind, threads):
    b = new_bind("reload-b", {"reload.test": B_ZONE})
    extra = [f"threads {threads}"]
    d = dnsdamper([Forward(".", [bind])], extra=extra)
    mark_a = bind.mark()

    # 1. everything goes to A; `cached` is cached, and so is a name of a
    # zone whose forwarding the reload will not change
    assert _addr(d, "cached.reload.test") == {"192.0.2.61"}
    assert bind.count("cached.reload.test", since=mark_a) == 1
    assert _addr(d, "www.example.test") == {"192.0.2.80"}

    # 2. a broken config that would also move reload.test to B: nothing of
    # it may take effect, not even the good lines before the error
    good = d.config([Forward("reload.test", [b]), Forward(".", [bind])],
                    extra)
    lines = good.splitlines()
    lines.insert(2, "cache-size lots")          # not a size
    broken_line = 3                              # lines[2] is line 3
    mark_log = d.reload("\n".join(lines) + "\n")
    m = d.wait_log(rf"{re.escape(d.conf_path.name)}:(\d+):", since=mark_log)
    assert int(m.group(1)) == broken_line, m.group(0)
    d.assert_alive()
    assert _addr(d, "broken.reload.test") == {"192.0.2.71"}    # from A
    checks.still_serving(d)

    # 3. the good config: reload.test to B
    mark_b = b.mark()
    mark_a = bind.mark()
    d.reload(good)
    _wait_for_routing(d, "192.0.2.92")
    assert _addr(d, "after.reload.test") == {"192.0.2.82"}      # from B
    assert b.count("after.reload.test", since=mark_b) == 1
    assert bind.count("after.reload.test", since=mark_a) == 0
    # reload.test now forwards elsewhere: its entry cached from A was
    # flushed, so B answers it; www.example.test still goes to A as
    # before, so its entry survived and nobody was asked again
    assert _addr(d, "cached.reload.test") == {"192.0.2.62"}
    assert b.count("cached.reload.test", since=mark_b) == 1
    assert bind.count("cached.reload.test", since=mark_a) == 0
    assert _addr(d, "www.example.test") == {"192.0.2.80"}
    assert bind.count("www.example.test", since=mark_a) == 0
    d.assert_alive()


SLOW_MS = 2000      # A's answers, held back by the fault proxy


@pytest.mark.timeout_s(60)
def test_answer_from_a_route_the_reload_changed_is_not_cached(
        dnsdamper, bind, new_bind, faultproxy):
    """reload.test forwarded to A, whose answers come 2 s late (the fault
    proxy); a name of it asked; within those 2 s a reload forwards
    reload.test to B. A's answer, when it comes, still answers the client
    that asked (from A: 192.0.2.91), but is not cached: it came from an
    upstream the name no longer goes to. Asked again, the name goes to B
    (192.0.2.92), once. (Cached, A's answer would be served for its TTL
    of 300 s, the flush at the reload having come before it.)"""
    b = new_bind("reload-b", {"reload.test": B_ZONE})
    slow = faultproxy(bind, delay_mean=SLOW_MS)
    # one attempt, answered at 2 s, well within its timeout and deadline
    extra = ["upstream-timeout 4s", "query-timeout 5s"]
    name = "inflight.probe.reload.test"
    d = dnsdamper([Forward("reload.test", [slow]), Forward(".", [bind])],
                  extra=extra)
    mark_a, mark_b = bind.mark(), b.mark()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((ports.check_loopback(ports.LOOPBACK), d.port))
    s.settimeout(10.0)
    try:
        s.send(query.make_query(name, msg_id=7).to_wire())
        # A has the query (named logs it before answering; the proxy
        # holds the answer back): the resolution started under A
        deadline = time.monotonic() + 5.0
        while bind.count(name, since=mark_a) == 0:
            assert time.monotonic() < deadline, "A was never asked"
            time.sleep(0.02)
        mark = d.reload(d.config([Forward("reload.test", [b]),
                                  Forward(".", [bind])], extra))
        d.wait_log(r"info: reloaded$", since=mark)
        m = dns.message.from_wire(s.recv(65535))
    finally:
        s.close()
    assert m.id == 7 and m.rcode() == dns.rcode.NOERROR, m.to_text()
    got = {rd.address for rrset in m.answer for rd in rrset
           if rrset.rdtype == dns.rdatatype.A}
    assert got == {"192.0.2.91"}, m.to_text()                   # A's
    assert b.count(name, since=mark_b) == 0
    assert _addr(d, name) == {"192.0.2.92"}                     # B's
    assert b.count(name, since=mark_b) == 1
    assert bind.count(name, since=mark_a) == 1
    d.assert_alive()


def test_sighup_same_config_keeps_serving(dd):
    mark = dd.reload()
    time.sleep(0.3)
    checks.still_serving(dd)
    # no `file:line:` diagnostics: the file is as valid as before
    assert not re.search(rf"{re.escape(dd.conf_path.name)}:\d+:",
                         dd.stderr(mark)), dd.stderr(mark)


ADDED_ZONE = "ops-added.test"
ADDED_TEXT = """\
$TTL 300
@        300 IN SOA ns.ops-added.test. hostmaster.ops-added.test. 1 3600 600 86400 60
@        300 IN NS  ns
ns       300 IN A   127.0.0.1
name     300 IN A   {addr}
other    300 IN A   {addr2}
"""


def test_reload_zone_added_then_removed(dnsdamper, new_bind):
    """A forward zone added by a reload takes its names from `.`: their
    cached entries go (they are forwarded differently now), and those of
    names still forwarded by `.` as before stay. Removed again, the
    zone's names go back to `.`, and so their entries go again. The
    number flushed is logged; /cache shows which entries are left.

    Two nameds serve ops-added.test with different addresses, so each
    answer says who gave it: R (reached through `.`) 192.0.2.10x, Z (the
    added zone's upstream) 192.0.2.20x; R also serves keep.test."""
    r = new_bind("reload-root", {
        ADDED_ZONE: ADDED_TEXT.format(addr="192.0.2.101", addr2="192.0.2.102"),
        "keep.test": ADDED_TEXT.replace("ops-added.test", "keep.test")
        .format(addr="192.0.2.111", addr2="192.0.2.112")})
    z = new_bind("reload-zone", {
        ADDED_ZONE: ADDED_TEXT.format(addr="192.0.2.201",
                                      addr2="192.0.2.202")})
    d = dnsdamper([Forward(".", [r])])
    ctl = d.control()
    assert _addr(d, f"name.{ADDED_ZONE}") == {"192.0.2.101"}
    assert _addr(d, f"other.{ADDED_ZONE}") == {"192.0.2.102"}
    assert _addr(d, "name.keep.test") == {"192.0.2.111"}

    def cached():
        return {rr.split()[0].rstrip(".") for rr, _ in ctl.cache_lines()}

    assert {f"name.{ADDED_ZONE}", f"other.{ADDED_ZONE}",
            "name.keep.test"} <= cached()

    # added: the two ops-added.test entries are flushed, keep.test stays
    mark = d.reload(d.config([Forward(ADDED_ZONE, [z]), Forward(".", [r])]))
    m = d.wait_log(r"flushed (\d+) cached entries whose forwarding changed",
                   since=mark)
    assert int(m.group(1)) == 2, m.group(0)
    d.wait_log(r"info: reloaded$", since=mark)
    left = cached()
    assert not {f"name.{ADDED_ZONE}", f"other.{ADDED_ZONE}"} & left, left
    assert "name.keep.test" in left, left
    mark_r, mark_z = r.mark(), z.mark()
    assert _addr(d, f"name.{ADDED_ZONE}") == {"192.0.2.201"}
    assert _addr(d, "name.keep.test") == {"192.0.2.111"}
    assert z.count(f"name.{ADDED_ZONE}", since=mark_z) == 1
    assert r.count(f"name.{ADDED_ZONE}", since=mark_r) == 0
    assert r.count("name.keep.test", since=mark_r) == 0

    # removed: name.ops-added.test (now Z's) goes back to `.`: flushed
    mark = d.reload(d.config([Forward(".", [r])]))
    m = d.wait_log(r"flushed (\d+) cached entries whose forwarding changed",
                   since=mark)
    assert int(m.group(1)) == 1, m.group(0)
    d.wait_log(r"info: reloaded$", since=mark)
    mark_r, mark_z = r.mark(), z.mark()
    assert _addr(d, f"name.{ADDED_ZONE}") == {"192.0.2.101"}
    assert _addr(d, "name.keep.test") == {"192.0.2.111"}
    assert r.count(f"name.{ADDED_ZONE}", since=mark_r) == 1
    assert r.count("name.keep.test", since=mark_r) == 0
    assert z.count(f"name.{ADDED_ZONE}", since=mark_z) == 0
    d.assert_alive()
