"""DNS over TCP when clients misbehave (RFC 7766 §6.2): more queries in
flight than the per-connection limit, half-closed connections, a bad frame
after a good query, messages that trickle in, and a client that never
reads. Each must leave the daemon serving, and answer what it can."""

import socket
import time

import dns.message
import dns.rcode

from dnstest import checks, query, wire
from dnstest.daemon import Forward

# the daemon reads at most this many queries of one connection at once
PIPELINE_MAX = 64


def _slow_daemon(dnsdamper, bind, faultproxy, delay_ms=300, extra=()):
    """A daemon whose upstream answers every query delay_ms late, so that
    queries stay pending long enough to pile up."""
    fp = faultproxy(bind, delay_mean=delay_ms, delay_stddev=0)
    return dnsdamper([Forward(".", [fp])], extra=list(extra))


def test_more_pipelined_queries_than_the_limit_all_answered(
        dnsdamper, bind, faultproxy):
    d = _slow_daemon(dnsdamper, bind, faultproxy)
    n = PIPELINE_MAX + 36          # 100: 36 wait in the input buffer
    qs = [query.make_query(f"p{i}.pipeline.example.test", msg_id=0x6000 + i)
          for i in range(n)]
    with wire.tcp_connect(d.port) as s:
        s.sendall(b"".join(wire.frame(q.to_wire()) for q in qs))
        got = {dns.message.from_wire(m).id
               for m in wire.TcpReader(s).read_all_n(n, timeout=15.0)}
    # every ID answered once: the 36 were read when slots freed up
    assert got == {q.id for q in qs}, f"{len(got)} of {n} answered"
    d.assert_alive()


def test_half_closed_connection_still_gets_its_answer(
        dnsdamper, bind, faultproxy):
    d = _slow_daemon(dnsdamper, bind, faultproxy)
    q = query.make_query("halfclose.example.test", msg_id=0x6101)
    with wire.tcp_connect(d.port) as s:
        s.sendall(wire.frame(q.to_wire()))
        s.shutdown(socket.SHUT_WR)     # "no more queries", not "go away"
        reader = wire.TcpReader(s)
        raw = reader.read(5.0)
        assert raw is not None, "the pending answer was dropped"
        assert dns.message.from_wire(raw).id == q.id
        closed, _ = reader.wait_closed(3.0)
        assert closed, "the daemon kept the half-closed connection open"


def test_bad_frame_after_a_query_still_answers_the_query(
        dnsdamper, bind, faultproxy):
    d = _slow_daemon(dnsdamper, bind, faultproxy)
    q = query.make_query("badframe.example.test", msg_id=0x6201)
    response_as_query = wire.header(0x6202, qr=True) + \
        wire.question("x.example.test")
    with wire.tcp_connect(d.port) as s:
        s.sendall(wire.frame(q.to_wire()) + wire.frame(response_as_query))
        reader = wire.TcpReader(s)
        raw = reader.read(5.0)
        assert raw is not None, "the answer queued before the bad frame " \
            "was lost"
        assert dns.message.from_wire(raw).id == q.id
        closed, more = reader.wait_closed(3.0)
        # the stream is untrustworthy after it: closed, nothing else sent
        assert closed and more == []
    checks.still_serving(d)


def test_trickling_message_is_cut_off(dnsdamper, bind):
    # tcp-idle-timeout 1 s: a query arriving one octet per 0.4 s is never
    # idle for 1 s, but after 1 s incomplete the connection goes
    d = dnsdamper([Forward(".", [bind])], extra=["tcp-idle-timeout 1s"])
    msg = wire.frame(query.make_query("trickle.example.test").to_wire())
    with wire.tcp_connect(d.port) as s:
        start = time.monotonic()
        closed = False
        for octet in msg[:-1]:          # never complete
            try:
                s.sendall(bytes([octet]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            if time.monotonic() - start > 6:
                break
            time.sleep(0.4)
        if not closed:
            closed, _ = wire.TcpReader(s).wait_closed(2.0)
        assert closed, "a trickling client held its connection"
        # bound: 1 s of the message incomplete, then the next octet's
        # arrival (0.4 s) notices; generous margin for a loaded machine
        assert time.monotonic() - start < 5
    checks.still_serving(d)


def test_client_that_never_reads_loses_its_connection_not_the_daemon(dd):
    # header-only queries (QDCOUNT 0) are answered FORMERR at once; never
    # reading them fills the daemon's output buffer until it gives up on
    # the connection (about 1 MiB); the daemon must survive that
    msg = wire.frame(wire.header(0x6301, qdcount=0))
    s = wire.tcp_connect(dd.port)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.setblocking(False)
    sent, start = 0, time.monotonic()
    try:
        while sent < 20_000_000 and time.monotonic() - start < 15:
            try:
                sent += s.send(msg * 4096)
            except BlockingIOError:
                time.sleep(0.01)
    except (BrokenPipeError, ConnectionResetError):
        pass                            # the daemon closed it: expected
    finally:
        s.close()
    dd.assert_alive()
    checks.still_serving(dd)
