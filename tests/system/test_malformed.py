"""Malformed input never crashes the daemon nor gets a wrong answer.

Over UDP (cases in dnstest/wire.py malformed_cases, with the RFC reasons):
FORMERR with the query's ID when a 12-octet header can be read and it is a
query; NOTIMP for an opcode other than QUERY; nothing at all for less than
a header or for a response (QR=1). After every case the daemon is alive and
answers a normal query. Then 200 random packets, and a few broken TCP
streams."""

import random
import socket
import time

import dns.message
import pytest

from dnstest import checks, query, wire

WANT = {"formerr": wire.RCODE_FORMERR, "notimp": wire.RCODE_NOTIMP}
SILENCE = 0.5       # how long "no answer" is waited for


@pytest.mark.parametrize("case", wire.malformed_cases(),
                         ids=lambda c: c.name)
def test_malformed_udp(dd, case):
    got = query.udp_wire(dd.port, case.wire,
                         timeout=SILENCE if case.expect == "none" else 3.0)
    if case.expect == "none":
        assert got is None, f"answered {case.name}: {got.hex()}"
    else:
        assert got is not None, f"no answer to {case.name}"
        h = wire.parse_header(got)
        sent = wire.parse_header(case.wire)
        assert h is not None, got.hex()
        assert h.qr, got.hex()
        assert h.id == sent.id, (hex(h.id), hex(sent.id))
        assert h.rcode == WANT[case.expect], \
            f"rcode {h.rcode}, want {WANT[case.expect]}: {got.hex()}"
    checks.still_serving(dd)


def test_random_garbage_udp(dd):
    packets = wire.garbage(random.Random(20260130), 200)
    # only a readable header of a query may be answered, with its own ID
    answerable = {wire.parse_header(p).id for p in packets
                  if len(p) >= 12 and not wire.parse_header(p).qr}
    answers = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("127.0.0.1", dd.port))
        s.setblocking(False)
        for p in packets:       # 200 sends, about 0.4 s
            try:
                s.send(p)
            except (BlockingIOError, ConnectionRefusedError):
                pass
            time.sleep(0.002)
            answers += _drain(s)
            if not dd.alive():
                break
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            answers += _drain(s)
            time.sleep(0.02)
    dd.assert_alive()
    for a in answers:
        h = wire.parse_header(a)
        assert h is not None and h.qr, a.hex()
        assert h.id in answerable, a.hex()
    checks.still_serving(dd)


def _drain(s):
    out = []
    for _ in range(400):
        try:
            out.append(s.recv(65535))
        except (BlockingIOError, ConnectionRefusedError):
            break
    return out


# --- TCP ------------------------------------------------------------------

ALIVE = wire.query(0x6000, checks.ALIVE_NAME)


def _exchange_stream(port, data, timeout, shut_write=False):
    """Send data on a new connection; every message received within
    timeout s (or until close), and whether the daemon closed."""
    with wire.tcp_connect(port) as s:
        try:
            s.sendall(data)
            if shut_write:
                s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            return [], True
        reader = wire.TcpReader(s)
        msgs = reader.read_all(timeout)
        return msgs, reader.closed


def _assert_formerr_only(msgs):
    for m in msgs:
        h = wire.parse_header(m)
        assert h is not None and h.qr and h.rcode == wire.RCODE_FORMERR, \
            m.hex()


def test_tcp_length_prefix_shorter_than_payload(dd):
    # the prefix says 5: a 5-octet message (no header to answer), then the
    # rest of the query is read as framing garbage
    msgs, _ = _exchange_stream(dd.port, wire.frame(ALIVE, length=5), 1.5)
    _assert_formerr_only(msgs)
    checks.still_serving(dd)


def test_tcp_length_prefix_longer_than_payload(dd):
    # the prefix promises 100 octets more than come, then EOF: there is no
    # whole message to answer
    msgs, _ = _exchange_stream(dd.port,
                               wire.frame(ALIVE, length=len(ALIVE) + 100),
                               3.0, shut_write=True)
    assert msgs == [], [m.hex() for m in msgs]
    checks.still_serving(dd)


def test_tcp_zero_length_message(dd):
    # a zero-length message, then a good query: the daemon may close the
    # connection, or skip the empty message and answer the query
    msgs, closed = _exchange_stream(dd.port,
                                    wire.frame(b"") + wire.frame(ALIVE), 1.5)
    for m in msgs:
        r = dns.message.from_wire(m)
        assert r.id == 0x6000, r.to_text()
        assert {rd.address for rrset in r.answer for rd in rrset} == \
            {checks.ALIVE_ADDR}, r.to_text()
    assert msgs or closed, "neither answered nor closed"
    checks.still_serving(dd)


@pytest.mark.parametrize("name", ["header-only-qdcount-1",
                                  "label-longer-than-63", "qdcount-2"])
def test_tcp_formerr(dd, name):
    case = {c.name: c for c in wire.malformed_cases()}[name]
    sent = wire.parse_header(case.wire)
    msgs, _ = _exchange_stream(dd.port, wire.frame(case.wire), 1.0)
    assert msgs, f"no answer to {name} over TCP"
    h = wire.parse_header(msgs[0])
    assert h.qr and h.id == sent.id and h.rcode == wire.RCODE_FORMERR, \
        msgs[0].hex()
    checks.still_serving(dd)


def test_tcp_response_as_query_not_answered(dd):
    case = {c.name: c for c in wire.malformed_cases()}[
        "qr-set-response-as-query"]
    msgs, _ = _exchange_stream(dd.port, wire.frame(case.wire), SILENCE)
    assert msgs == [], [m.hex() for m in msgs]
    checks.still_serving(dd)


def test_tcp_garbage_then_close(dd):
    rng = random.Random(7766)
    for p in wire.garbage(rng, 10):
        msgs, _ = _exchange_stream(dd.port, wire.frame(p), 0.3)
        for m in msgs:
            h = wire.parse_header(m)
            assert h is not None and h.qr, m.hex()
    checks.still_serving(dd)
