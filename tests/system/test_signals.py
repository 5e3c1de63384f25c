"""SIGTERM ends the daemon cleanly: exit status 0, within a bounded time
(5 s here, only so that a hang fails instead of stalling), also with a
client connection open and a query waiting on a silent upstream."""

import signal
import socket
import time

from dnstest import checks, proc, query, wire
from dnstest.daemon import Forward

STOP_WITHIN = 5.0


def _sigterm(d):
    d.stopped_by_test = True
    status, killed = proc.stop(d.proc, signal.SIGTERM, STOP_WITHIN)
    assert not killed, f"no exit within {STOP_WITHIN}s of SIGTERM:\n" \
        f"{d.stderr()}"
    assert status == 0, f"exit status {status}:\n{d.stderr()}"


def test_sigterm_exits_zero(dd):
    r = query.udp(dd.port, "sigterm.example.test")
    assert query.addresses(r) == {"192.0.2.15"}, r.text()
    _sigterm(dd)


def test_sigterm_with_open_connection_and_query_in_flight(
        dnsdamper, bind, blackhole):
    hole = blackhole()
    d = dnsdamper([Forward("hole.test", [hole]), Forward(".", [bind])],
                  extra=["upstream-timeout 50ms 2s", "query-timeout 4s"])
    checks.still_serving(d)
    with wire.tcp_connect(d.port) as idle, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
        u.connect(("127.0.0.1", d.port))
        u.send(wire.query(0x7001, "www.hole.test"))
        deadline = time.monotonic() + 2.0
        while hole.received < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert hole.received >= 1, "the query never reached the upstream"
        _sigterm(d)
        idle.close()
