"""DNS over TCP when clients misbehave (RFC 7766 §6.2): more queries in
flight than the per-connection limit, half-closed connections, a bad frame
after a good query, messages that trickle in, and a client that never
reads. Each must leave the daemon serving, and answer what it can."""

import os
import socket
import time

import dns.message
import dns.rcode
import pytest

from dnstest import checks, query, wire
from dnstest.daemon import Forward
from dnstest.zonetext import zone

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


# --- the tcp-clients cap under a slot flood (RFC 7766 §6.2.3) ---------------

CAP = 10


def _one_octet_each(port, n):
    """n connections, each sent one octet of a length prefix and then
    nothing: stuck in the middle of a message."""
    out = []
    for _ in range(n):
        s = wire.tcp_connect(port)
        s.sendall(b"\x00")
        out.append(s)
    return out


def test_slot_flood_does_not_lock_out_real_clients(dnsdamper, bind,
                                                   faultproxy):
    """tcp-clients connections stuck mid-message fill the cap; each real
    client that comes then takes the slot of the one stuck longest, and
    is answered; a connection with a query waiting for its answer is
    never the one closed. One worker (`threads 1`): with several, the
    bound is the process's but each makes room among its own connections,
    so which one goes depends on where the kernel put each."""
    fp = faultproxy(bind, delay_mean=1500, delay_stddev=0)
    d = dnsdamper([Forward("slow.example.test", [fp]),
                   Forward(".", [bind])],
                  extra=["threads 1",
                         f"tcp-clients {CAP}", "tcp-initial-timeout 30s",
                         "tcp-idle-timeout 30s", "query-timeout 5s",
                         "upstream-timeout 2s 4s"])
    # one connection with a query the slow upstream answers 1.5 s later
    waiting = wire.tcp_connect(d.port)
    q = query.make_query("w.slow.example.test", msg_id=0x6401)
    waiting.sendall(wire.frame(q.to_wire()))
    time.sleep(0.2)
    flood = _one_octet_each(d.port, CAP - 1)
    time.sleep(0.2)
    # the cap is full: every new client (staying connected) takes the
    # slot of the connection longest without a message, the stuck ones
    # first, then those answered longest ago, and gets its answer
    real = []
    for i in range(CAP + 2):
        s = wire.tcp_connect(d.port)
        s.sendall(wire.frame(query.make_query(checks.ALIVE_NAME,
                                              msg_id=i).to_wire()))
        raw = wire.TcpReader(s).read(3.0)
        assert raw is not None, f"client {i} got no answer"
        assert dns.message.from_wire(raw).id == i
        real.append(s)
    closed = [wire.TcpReader(s).wait_closed(0.5)[0] for s in flood]
    assert all(closed), closed
    # the 9 stuck ones went for clients 0 to 8, then clients 0, 1 and 2
    # for clients 9, 10 and 11 (the one waiting for its answer stays)
    closed = [wire.TcpReader(s).wait_closed(0.2)[0] for s in real]
    assert closed == [True] * 3 + [False] * (CAP - 1), closed
    raw = wire.TcpReader(waiting).read(5.0)
    assert raw is not None, "the connection with a pending query was closed"
    assert dns.message.from_wire(raw).id == q.id
    m = d.control().metrics()
    assert m.get("dnsdamper_tcp_evicted_total") >= CAP - 1
    assert m.get("dnsdamper_tcp_refused_total") == 0
    for s in flood + real + [waiting]:
        s.close()


def test_refused_when_every_connection_has_a_query_pending(
        dnsdamper, bind, faultproxy):
    fp = faultproxy(bind, delay_mean=1500, delay_stddev=0)
    d = dnsdamper([Forward("slow.example.test", [fp]),
                   Forward(".", [bind])],
                  extra=["tcp-clients 2", "query-timeout 5s",
                         "upstream-timeout 2s 4s"])
    busy = []
    for i in range(2):
        s = wire.tcp_connect(d.port)
        s.sendall(wire.frame(query.make_query(
            f"p{i}.slow.example.test").to_wire()))
        busy.append(s)
    time.sleep(0.3)
    s = wire.tcp_connect(d.port)
    closed, msgs = wire.TcpReader(s).wait_closed(1.0)
    assert closed and msgs == []
    s.close()
    for s in busy:
        assert wire.TcpReader(s).read(5.0) is not None
        s.close()
    assert d.control().metrics().get("dnsdamper_tcp_refused_total") == 1


def test_initial_timeout_shorter_than_idle(dnsdamper, bind):
    """Before its first whole message a connection may stay silent
    tcp-initial-timeout (1 s here), after it tcp-idle-timeout (4 s)."""
    d = dnsdamper([Forward(".", [bind])],
                  extra=["tcp-initial-timeout 1s", "tcp-idle-timeout 4s"])
    silent = wire.tcp_connect(d.port)
    talked = wire.tcp_connect(d.port)
    start = time.monotonic()
    talked.sendall(wire.frame(query.make_query(checks.ALIVE_NAME).to_wire()))
    reader = wire.TcpReader(talked)
    assert reader.read(3.0) is not None
    closed, _ = wire.TcpReader(silent).wait_closed(3.0)
    assert closed, "a connection that never sent a message was kept"
    # 1 s, then the loop's next turn; generous for a loaded machine
    assert time.monotonic() - start < 2.5
    closed, _ = reader.wait_closed(max(0.0, start + 2.5 - time.monotonic()))
    assert not closed, "the connection that sent a query went as early"
    closed, _ = reader.wait_closed(5.0)
    assert closed
    silent.close()
    talked.close()


BIG_ORIGIN = "big.test"
# one TXT RRset of 40 strings of 250 octets: an answer of some 10 KB
BIG_ZONE = zone(BIG_ORIGIN, 300,
                ["big TXT " + " ".join(['"' + "y" * 250 + '"'] * 40)])
READERS_NOT = 40                # connections that never read
QUERIES_EACH = 400              # each sends this many queries, 4 MB asked
RSS_SLACK = 16 * 2**20          # octets
# ThreadSanitizer's shadow memory: some 4 octets of it for each octet the
# daemon touches, kept by the process once used
TSAN_SHADOW = 5


def _under_tsan(d):
    """True if the daemon is the ThreadSanitizer build (libtsan mapped)."""
    with open(f"/proc/{d.proc.pid}/maps") as f:
        return "libtsan" in f.read()


def _rss(d):
    with open(f"/proc/{d.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.timeout_s(60)
def test_clients_that_never_read_hold_little(dnsdamper, bind, new_bind):
    """40 connections each ask 400 times for a 10 KB answer and read
    none: the daemon reads no more queries from one once 64 KiB of its
    answers wait unread, so it holds some 40 x 74 KB, not the 40 x 1 MiB
    it held before closing them, nor 40 x 4 MB."""
    ns = new_bind("big", {BIG_ORIGIN: BIG_ZONE})
    # under AddressSanitizer, memory freed is kept out of use for a while
    # (its quarantine, 256 MB): 16,000 answers written and freed would
    # show in RSS though none is held
    asan = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"),
                                  "quarantine_size_mb=1"]))
    d = dnsdamper([Forward(BIG_ORIGIN, [ns]), Forward(".", [bind])],
                  extra=["tcp-clients 100", "tcp-idle-timeout 30s"],
                  env={"ASAN_OPTIONS": asan})
    q = query.make_query(f"big.{BIG_ORIGIN}", "TXT")
    assert len(query.tcp(d.port, f"big.{BIG_ORIGIN}", "TXT").wire) > 10000
    rss0 = _rss(d)
    frames = wire.frame(q.to_wire()) * QUERIES_EACH
    socks = []
    for _ in range(READERS_NOT):
        s = wire.tcp_connect(d.port)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.setblocking(False)
        socks.append([s, 0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and \
            any(sent < len(frames) for _, sent in socks):
        for entry in socks:
            s, sent = entry
            try:
                entry[1] += s.send(frames[sent:sent + 65536])
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                pass
        time.sleep(0.01)
    time.sleep(0.5)
    grown = _rss(d) - rss0
    for s, _ in socks:
        s.close()
    slack = RSS_SLACK * (TSAN_SHADOW if _under_tsan(d) else 1)
    assert grown < slack, f"RSS grew by {grown} octets"
    checks.still_serving(d)
