"""Checks shared by several test modules."""

import dns.rcode

from . import query

# example.test's `alive` (zones/example.test.zone)
ALIVE_NAME = "alive.example.test"
ALIVE_ADDR = "192.0.2.9"


def still_serving(d, tcp=True):
    """The daemon's process is alive and it answers a normal query for
    alive.example.test correctly, over UDP and (if tcp) over TCP."""
    d.assert_alive()
    exchanges = (query.udp, query.tcp) if tcp else (query.udp,)
    for exchange in exchanges:
        r = exchange(d.port, ALIVE_NAME)
        assert r.rcode == dns.rcode.NOERROR, r.text()
        assert query.addresses(r) == {ALIVE_ADDR}, r.text()
    d.assert_alive()
