"""Out of file descriptors (dnsdamper(8), LIMITS): that is this host's
trouble, never an upstream's. The daemon holds a few descriptors back for
its upstream queries, so that clients' connections taking all the others
make accept() fail first (and accepting pause for a second) while queries
still go out; a query that cannot have a socket even so is a local error,
counted in dnsdamper_upstream_local_errors_total, answered SERVFAIL, and
neither counted against the upstream nor cached as its failure (RFC 9520
is about upstreams).

The daemon runs under `prlimit --nofile=64:64`, so that a few dozen TCP
connections of the test take every descriptor it has.
"""

import socket
import time
from concurrent.futures import ThreadPoolExecutor

import dns.message
import dns.rcode
import pytest

from dnstest import ports, query, wire
from dnstest.daemon import Forward, upstream
from dnstest.zonetext import zone

NOFILE = 64
ORIGIN = "fd.test"
ZONE = zone(ORIGIN, 300, ["* A 192.0.2.81"])
HELD_MAX = 2 * NOFILE           # connections tried, at most
SLOW_MS = 1000                  # the upstream's delay in the second part
BURST = 40                      # queries at once then: more than held back


def _hold_every_descriptor(d):
    """TCP connections, each with one query answered from the cache (so
    that none is closed as idle before its first query), until the daemon
    accepts no more: it is out of descriptors but those held back."""
    held = []
    q = query.make_query(f"cached.{ORIGIN}").to_wire()
    for _ in range(HELD_MAX):
        s = socket.create_connection((ports.LOOPBACK, d.port), timeout=3)
        s.sendall(wire.frame(q))
        if wire.TcpReader(s).read(0.5) is None:
            s.close()               # queued, never accepted: that is all
            return held
        held.append(s)
    raise AssertionError(f"{HELD_MAX} connections and never out of "
                         f"descriptors under nofile {NOFILE}")


def _upstream_state(d, port):
    for u in d.control().get("/upstreams").json():
        if u["address"] == upstream(port):
            return u
    raise AssertionError(f"no upstream {port}")


@pytest.mark.timeout_s(60)
def test_out_of_descriptors_is_not_the_upstreams_failure(
        dnsdamper, bind, new_bind, faultproxy):
    ns = new_bind("fd", {ORIGIN: ZONE})
    fp = faultproxy(ns)
    d = dnsdamper([Forward(ORIGIN, [fp]), Forward(".", [bind])],
                  # the upstream 1 s slow later is late, not down: every
                  # RTO at least 2 s
                  extra=["tcp-clients 1000", "tcp-idle-timeout 60s",
                         "upstream-timeout 2s 4s", "query-timeout 5s"],
                  wrapper=["prlimit", f"--nofile={NOFILE}:{NOFILE}", "--"])
    assert query.addresses(query.udp(d.port, f"cached.{ORIGIN}")) == \
        {"192.0.2.81"}
    held = _hold_every_descriptor(d)
    try:
        # one query at a time: each gets a descriptor held back, which
        # the daemon takes back when its socket closes
        for i in range(8):
            r = query.udp(d.port, f"n{i}.{ORIGIN}")
            assert query.addresses(r) == {"192.0.2.81"}, r.text()

        # more at once than are held back, the upstream slow: those that
        # find no descriptor are SERVFAIL at once, counted as ours
        fp.set(delay_mean=SLOW_MS)
        with ThreadPoolExecutor(BURST) as pool:
            replies = list(pool.map(
                lambda i: query.udp(d.port, f"b{i}.{ORIGIN}", timeout=5),
                range(BURST)))
    finally:
        for s in held:
            s.close()
    failed = [r for r in replies if r.rcode == dns.rcode.SERVFAIL]
    served = [r for r in replies if r.rcode == dns.rcode.NOERROR]
    assert failed and served, [r.rcode for r in replies]
    # the control socket, too, could accept nothing meanwhile; now it can
    time.sleep(1.5)                 # ACCEPT_PAUSE_SEC, and some
    m = d.control().metrics()
    assert m.get("dnsdamper_upstream_local_errors_total") >= len(failed)
    u = _upstream_state(d, fp.port)
    assert u["state"] == "up" and u["failures_in_a_row"] == 0, u
    assert "is down" not in d.stderr()
    assert "not counted against it" in d.stderr()
    # one warning a minute at most for the listeners' pauses; none from
    # libevent, which without a pause spins on a listener out of
    # descriptors and warns at each turn
    assert d.stderr().count("accept: Too many open files") <= 2, d.stderr()
    assert "Error from accept() call" not in d.stderr()
    # what failed for want of a descriptor is not cached as a failure (it
    # would be SERVFAIL for failure-ttl, 5 s)
    fp.set(delay_mean=0)
    name = failed[0].msg.question[0].name.to_text()
    r = query.udp(d.port, name)
    assert r.rcode == dns.rcode.NOERROR, r.text()
