"""DNS over TLS to upstreams (RFC 7858, RFC 8310 strict profile), against
BIND 9.18's named serving DoT (`tls` blocks, `listen-on port P tls NAME`)
with a CA and certificates made by the openssl command (dnstest.tlspki),
and against scripted DoT servers (dnstest.tlsupstream).

What each test checks, from the RFCs:
  RFC 7858 §3.1/§4: queries to a tls:// upstream go over TLS only, never
      in clear text: a UDP socket the test binds on the TLS port's number
      (where a fallback to plain DNS would go) hears nothing, and named's
      query log shows the query over TCP ("T"), never over UDP
  RFC 8310 §5.6 (strict): a wrong name, an untrusted CA, an expired
      certificate, a wrong SPKI pin (RFC 7469) each fail the upstream,
      nothing is sent to it (named logs no query), the client gets SERVFAIL
  RFC 7766 §6.2.1.1: answers on one connection in any order, matched by ID
      and question; §6.2.3: a connection the server closes under queries
      is reopened and those queries sent again once
  RFC 7830 / RFC 8467 §4.1: each query padded to a multiple of 128 octets
  RFC 8446 §2.2: the next handshake resumes the session (a ticket)
"""

import socket
import struct
import threading
import time

import dns.edns
import dns.message
import dns.rcode
import pytest

from dnstest import query, stale
from dnstest.daemon import Forward
from dnstest.named import BindServer
from dnstest.tlspki import NAME, Pki
from dnstest.tlsupstream import TcpRelay, TlsUpstream, UdpWatch, address_of
from dnstest.zonetext import zone

ORIGIN = "dot.test"
TTL = 1
ZONE = zone(ORIGIN, TTL, ["web A 192.0.2.51", "www A 192.0.2.52"])
STALE_TTL = 30          # stale-answer-ttl default, RFC 8767 §4
PADDING = 12            # RFC 7830 §3: the Padding option's code
BLOCK = 128             # RFC 8467 §4.1: queries padded to 128 octets


class TlsForward(Forward):
    """`forward ZONE { upstream tls://ADDR:PORT#NAME; more... }` on one
    line, unquoted as users write it (# within a word is no comment)."""

    def __init__(self, zone_name, upstream, *more):
        self.zone = zone_name
        self.upstreams = [upstream]
        self.more = list(more)

    def line(self):
        body = "; ".join([f"upstream {self.upstreams[0]}"] + self.more)
        return f"forward {self.zone} {{ {body} }}"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def dot_named(tmp_path, pki, request):
    """A named serving ZONE over UDP and TCP on .port and over DoT on
    .tls_ports["good" | "expired" | "untrusted"], one certificate each."""
    server = BindServer(tmp_path, "dot", tls={
        "good": (pki.key, pki.good),
        "expired": (pki.key, pki.expired),
        "untrusted": (pki.key, pki.untrusted)})
    server.add_zone(ORIGIN, ZONE)
    server.start()
    yield server
    server.stop()
    assert not server.alive()


@pytest.fixture
def watch():
    """watch(port): a UdpWatch on that port, closed at teardown."""
    made = []

    def make(port):
        w = UdpWatch(port)
        made.append(w)
        return w

    yield make
    for w in made:
        w.stop()


def tls_metric(d, name, **labels):
    return d.control().metrics().value(name, **labels)


def wait_metric(d, name, at_least, timeout=10.0, **labels):
    """Poll the scrape until name{labels} reaches at_least (bounded)."""
    deadline = time.monotonic() + timeout
    while True:
        v = tls_metric(d, name, **labels)
        if v >= at_least:
            return v
        assert time.monotonic() < deadline, \
            f"{name}{labels} stayed {v}, below {at_least}"
        time.sleep(0.05)


def test_answers_over_tls_only(dnsdamper, bind, dot_named, pki, watch):
    """Two misses through one strict upstream (CA and name): both
    answered, over one TLS connection (one handshake, threads 1, an idle
    timeout longer than the test), none in clear text."""
    port = dot_named.tls_ports["good"]
    plain = watch(port)
    up = f"tls://127.0.0.1:{port}#{NAME}"
    d = dnsdamper([Forward(".", [bind]),
                   TlsForward(ORIGIN, up, f"tls-ca {pki.ca}",
                              "tls-idle-timeout 1h")],
                  extra=["threads 1"])
    mark = dot_named.mark()
    for host, addr in (("web", "192.0.2.51"), ("www", "192.0.2.52")):
        r = query.udp(d.port, f"{host}.{ORIGIN}")
        assert r.rcode == dns.rcode.NOERROR, r.text()
        assert query.addresses(r) == {addr}, r.text()
    # (the daemon's loop probe, a TXT of a random name, comes too)
    logged = [q for q in dot_named.queries(mark)
              if q.name.endswith(ORIGIN) and q.qtype == "A"]
    assert len(logged) == 2 and all(q.tcp for q in logged), logged
    assert plain.count() == 0
    label = f"tls://127.0.0.1:{port}#{NAME}"
    assert tls_metric(d, "dnsdamper_upstream_tls_handshakes_total",
                      upstream=label) == 1
    assert tls_metric(d, "dnsdamper_upstream_tls_connections",
                      upstream=label) == 1
    # the two, and the daemon's loop probe of the upstream (a TXT)
    wait_metric(d, "dnsdamper_upstream_tls_queries_total", 3,
                upstream=label)
    assert tls_metric(d, "dnsdamper_upstream_tls_queries_total",
                      upstream=label) == 3
    text = d.control().ok(
        "GET", f"/explain?name=web.{ORIGIN}&type=A&format=text").text
    assert f"{label} up" in text and "over TLS only (authenticated by CA " \
        "and name)" in text, text
    ups = d.control().ok("GET", "/upstreams?format=text").text
    assert "tls: 1 open, 1 handshakes (0 resumed), 3 queries, failures: " \
        "none" in ups, ups


REFUSALS = {
    # listener, name after #, directive, reason counted
    "wrong_name": ("good", "wrong.test", "tls-ca {ca}", "name"),
    "untrusted_ca": ("untrusted", NAME, "tls-ca {ca}", "ca"),
    "expired": ("expired", NAME, "tls-ca {ca}", "expired"),
    "wrong_pin": ("good", NAME, "tls-pin {wrong_pin}", "pin"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refused(dnsdamper, bind, dot_named, pki, watch, case):
    """An upstream that fails strict authentication gets no query: SERVFAIL
    for the client, nothing in named's query log, no datagram to its port,
    the reason in the log and in the metrics."""
    listener, name, directive, reason = REFUSALS[case]
    port = dot_named.tls_ports[listener]
    plain = watch(port)
    up = f"tls://127.0.0.1:{port}#{name}"
    d = dnsdamper([Forward(".", [bind]),
                   TlsForward(ORIGIN, up, directive.format(
                       ca=pki.ca, wrong_pin=pki.wrong_pin))],
                  extra=["upstream-timeout 100ms 500ms", "query-timeout 2s",
                         "failure-ttl 1s"])
    mark = dot_named.mark()
    r = query.udp(d.port, f"web.{ORIGIN}", timeout=5.0)
    assert r.rcode == dns.rcode.SERVFAIL, r.text()
    assert [q for q in dot_named.queries(mark)
            if q.name.endswith(ORIGIN)] == []
    assert plain.count() == 0
    d.wait_log(rf"upstream tls://127\.0\.0\.1:{port}#{name}: TLS failed "
               rf"\({reason}\)")
    assert wait_metric(d, "dnsdamper_upstream_tls_failures_total", 1,
                       upstream=f"tls://127.0.0.1:{port}#{name}",
                       reason=reason) >= 1
    assert tls_metric(d, "dnsdamper_upstream_tls_handshakes_total",
                      upstream=f"tls://127.0.0.1:{port}#{name}") == 0


def test_good_pin_and_resumption(dnsdamper, bind, dot_named, pki, watch):
    """A pinned key authenticates without a CA; after the connection idles
    out, the next handshake resumes the session (RFC 8446 §2.2)."""
    port = dot_named.tls_ports["good"]
    plain = watch(port)
    label = f"tls://127.0.0.1:{port}#{NAME}"
    d = dnsdamper([Forward(".", [bind]),
                   TlsForward(ORIGIN, f"tls://127.0.0.1:{port}#{NAME}",
                              f"tls-pin {pki.wrong_pin} {pki.pin}",
                              "tls-idle-timeout 100ms")],
                  extra=["threads 1"])
    r = query.udp(d.port, f"web.{ORIGIN}")
    assert query.addresses(r) == {"192.0.2.51"}, r.text()
    wait_metric(d, "dnsdamper_upstream_tls_connections_total", 1,
                upstream=label)
    # idle for tls-idle-timeout: closed by us (bounded poll)
    deadline = time.monotonic() + 10
    while tls_metric(d, "dnsdamper_upstream_tls_connections",
                     upstream=label) != 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    r = query.udp(d.port, f"www.{ORIGIN}")
    assert query.addresses(r) == {"192.0.2.52"}, r.text()
    assert tls_metric(d, "dnsdamper_upstream_tls_handshakes_total",
                      upstream=label) == 2
    assert tls_metric(d, "dnsdamper_upstream_tls_resumed_total",
                      upstream=label) == 1
    assert plain.count() == 0


def test_ca_store_missing_is_an_error(dnsdamper, bind, tmp_path):
    """No silent skip of the check: with the system store empty
    (SSL_CERT_FILE, SSL_CERT_DIR pointing at nothing), -t and a start
    both refuse a strict upstream with neither tls-ca nor tls-pin."""
    empty = tmp_path / "empty.pem"
    empty.write_text("")
    env = {"SSL_CERT_FILE": str(empty),
           "SSL_CERT_DIR": str(tmp_path / "none")}
    d = dnsdamper([Forward(".", [bind]),
                   TlsForward(ORIGIN, f"tls://127.0.0.1:853#{NAME}")],
                  start=False, env=env)
    assert d.run_to_exit() not in (0, None)
    assert "the system CA store is missing or empty" in d.stderr()


def test_pipelined_out_of_order(dnsdamper, bind, pki, watch):
    """Three queries on one connection, answered in reverse order: each
    client gets its own name's answer; every query padded to 128-octet
    blocks with the Padding option."""
    up = TlsUpstream(pki.good, pki.key, mode="reverse", batch=3)
    try:
        plain = watch(up.port)
        d = dnsdamper([Forward(".", [bind]),
                       TlsForward(ORIGIN, f"tls://127.0.0.1:{up.port}#{NAME}",
                                  f"tls-ca {pki.ca}")],
                      extra=["threads 1"])
        results = {}

        def ask(n):
            results[n] = query.udp(d.port, f"n{n}.{ORIGIN}", timeout=5.0)

        threads = [threading.Thread(target=ask, args=(n,))
                   for n in (11, 12, 13)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        for n in (11, 12, 13):
            r = results[n]
            assert query.addresses(r) == {address_of(f"n{n}")}, r.text()
        assert up.connections == 1
        assert len(up.queries) == 3
        for _, raw in up.queries:
            assert len(raw) % BLOCK == 0, len(raw)
            m = dns.message.from_wire(raw)
            assert any(o.otype == PADDING for o in m.options), m
        assert plain.count() == 0
    finally:
        up.stop()


def test_server_close_resends_once(dnsdamper, bind, pki):
    """The server closes its first connection under three queries: they go
    again, once each, on a new connection, and are answered."""
    up = TlsUpstream(pki.good, pki.key, mode="close_first", batch=3)
    try:
        d = dnsdamper([Forward(".", [bind]),
                       TlsForward(ORIGIN, f"tls://127.0.0.1:{up.port}#{NAME}",
                                  f"tls-ca {pki.ca}")],
                      extra=["threads 1", "upstream-timeout 1s 2s",
                             "query-timeout 4s"])
        results = {}

        def ask(n):
            results[n] = query.udp(d.port, f"n{n}.{ORIGIN}", timeout=6.0)

        threads = [threading.Thread(target=ask, args=(n,))
                   for n in (21, 22, 23)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        for n in (21, 22, 23):
            assert query.addresses(results[n]) == {address_of(f"n{n}")}
        first = sorted(dns.message.from_wire(raw).question[0].name
                       .to_text().lower() for c, raw in up.queries if c == 0)
        later = sorted(dns.message.from_wire(raw).question[0].name
                       .to_text().lower() for c, raw in up.queries if c > 0)
        assert first == [f"n{n}.{ORIGIN}." for n in (21, 22, 23)]
        assert later == first
        label = f"tls://127.0.0.1:{up.port}#{NAME}"
        assert tls_metric(d, "dnsdamper_upstream_tls_resent_total",
                          upstream=label) == 3
    finally:
        up.stop()


def test_silent_connection_is_replaced(dnsdamper, bind, pki):
    """A server that takes the handshake and every query but answers none:
    the query is given up (SERVFAIL at query-timeout), and its connection,
    which read nothing past the upstream's timeout, is closed: the next
    query goes on a new connection, not into the same silence."""
    up = TlsUpstream(pki.good, pki.key, mode="silent")
    try:
        d = dnsdamper([Forward(".", [bind]),
                       TlsForward(ORIGIN, f"tls://127.0.0.1:{up.port}#{NAME}",
                                  f"tls-ca {pki.ca}")],
                      extra=["threads 1", "upstream-timeout 100ms 300ms",
                             "query-timeout 1s", "failure-ttl 1s",
                             "serve-stale no"])
        r = query.udp(d.port, f"n31.{ORIGIN}", timeout=3.0)
        assert r.rcode == dns.rcode.SERVFAIL, r.text()
        r = query.udp(d.port, f"n32.{ORIGIN}", timeout=3.0)
        assert r.rcode == dns.rcode.SERVFAIL, r.text()
        names = {c: dns.message.from_wire(raw).question[0].name.to_text()
                 .lower() for c, raw in up.queries}
        assert up.connections >= 2, up.queries
        assert names[max(names)] == f"n32.{ORIGIN}.", up.queries
    finally:
        up.stop()


def test_black_holed_upstream_serves_stale(dnsdamper, bind, dot_named, pki,
                                          watch):
    """A DoT upstream (named, through a relay) is answered and cached; then
    it turns into a black hole (the relay cuts its connection and accepts
    new ones it never reads: the handshake never completes). Past the TTL,
    the client gets the stale answer within client-timeout, well inside
    query-timeout; the handshake's failure is counted as a timeout, and
    nothing goes in clear text."""
    relay = TcpRelay(dot_named.tls_ports["good"])
    try:
        plain = watch(relay.port)
        up = f"tls://127.0.0.1:{relay.port}#{NAME}"
        d = dnsdamper([Forward(".", [bind]),
                       TlsForward(ORIGIN, up, f"tls-ca {pki.ca}")],
                      extra=["upstream-timeout 100ms 300ms",
                             "client-timeout 1000ms", "query-timeout 2s",
                             "stale-refresh-interval 1s"])
        r = query.udp(d.port, f"web.{ORIGIN}")
        assert query.addresses(r) == {"192.0.2.51"}, r.text()
        relay.black_hole()
        time.sleep(TTL + 1)     # the entry is past its TTL of 1 s
        # the client's own timeout: query-timeout plus 1 s of margin
        r = query.udp(d.port, f"web.{ORIGIN}", timeout=3.0)
        assert query.addresses(r) == {"192.0.2.51"}, r.text()
        stale.assert_stale(r, STALE_TTL)
        wait_metric(d, "dnsdamper_upstream_tls_failures_total", 1,
                    upstream=up, reason="timeout")
        assert plain.count() == 0
    finally:
        relay.stop()
