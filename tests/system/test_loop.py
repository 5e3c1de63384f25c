"""Loop probes (dnsdamper.conf(5) "Upstream health"): the first time an
upstream is used after start or reload it is sent a TXT query for a
random name under its zone; if that name arrives back at the daemon as a
query, the upstream forwards to us: it is logged, not used until the next
reload, and the daemon keeps running on the zone's other upstreams.

The looping upstream here is a faultproxy (no faults) whose upstream is
the daemon's own listen port: what the config's loop guard cannot see,
since the proxy's address is not one of ours.
"""

import re

import dns.rcode

from dnstest import query
from dnstest.daemon import Forward
from dnstest.zonetext import zone


def _loop_log(fp):
    return (rf"error: upstream 127\.0\.0\.1:{fp.port} sends our queries back "
            rf"to us \(a forwarding loop\); not using it until reload")


def test_upstream_that_forwards_back_to_us_is_found_and_skipped(
        new_bind, faultproxy, dnsdamper, bind):
    ns = new_bind("loop", {"loop.test": zone("loop.test", 300,
                                             ["* A 192.0.2.130"])})
    d = dnsdamper([Forward(".", [bind])], start=False)
    mirror = faultproxy(d)          # forwards to the daemon's own port
    conf = ["upstream-timeout 100ms 300ms", "query-timeout 2s"]
    # policy order, the loop first: without detection every query would
    # go to it first
    forwards = [Forward("loop.test", [mirror, ns], "order"),
                Forward(".", [bind])]
    d.set_forwards(forwards, conf)
    d.start()

    # the first query uses the looping upstream: the probe comes back,
    # the daemon says so, and the zone is answered through named
    r = query.udp(d.port, "w0.loop.test", timeout=2 + 3)
    assert r.rcode == dns.rcode.NOERROR, r.text()
    assert query.addresses(r) == {"192.0.2.130"}, r.text()
    d.wait_log(_loop_log(mirror), timeout=3.0)
    d.assert_alive()

    # from now on it is not used at all, and named answers at once
    before = mirror.stats()["received_udp"]
    mark = ns.mark()
    for i in range(1, 6):
        r = query.udp(d.port, f"w{i}.loop.test")
        assert query.addresses(r) == {"192.0.2.130"}, r.text()
        assert ns.count(f"w{i}.loop.test", "A", since=mark) == 1
    assert mirror.stats()["received_udp"] == before, \
        "the looping upstream is still being asked"
    # other zones are not affected
    r = query.udp(d.port, "www.example.test")
    assert query.addresses(r) == {"192.0.2.80"}, r.text()

    # a reload may have changed what made it a loop: it is probed again,
    # and found again
    mark = d.reload(d.config(forwards, conf))
    d.wait_log(r"^dnsdamper: info: reloaded$", since=mark)
    r = query.udp(d.port, "w9.loop.test", timeout=2 + 3)
    assert query.addresses(r) == {"192.0.2.130"}, r.text()
    d.wait_log(_loop_log(mirror), since=mark, timeout=3.0)
    assert len(re.findall(_loop_log(mirror), d.stderr())) == 2
    d.assert_alive()
