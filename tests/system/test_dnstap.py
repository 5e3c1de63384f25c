"""dnstap (dnstap.info): the messages fstrm_capture receives on a unix
socket, or the daemon writes to a file, decoded by dnstap-ldns: every
message type with addresses, ports, protocol and the whole message;
where each answer came from in the `extra` field (cache, stale,
upstream NAME, local); a file reopened at reload for rotation; and a
collector killed and restarted while clients ask: every query is still
answered, the daemon connects again, and what it could not send is
counted in dnsdamper_dnstap_dropped_total.

The values checked: the zone's data (example.test: www A 192.0.2.80),
the client's address 127.0.0.1 and the source port of its socket, the
upstream's address and port (the session named's), and dnstap's names
of the message types (CQ, CR, FQ, FR: CLIENT_QUERY ... FORWARDER_RESPONSE).
"""

import socket
import time

import dns.message
import dns.query
import dns.rcode
import pytest

from dnstest import dnstap, query, stale
from dnstest.daemon import Forward
from dnstest.zonetext import zone

ALL = "dnstap-messages client-query client-response forwarder-query " \
      "forwarder-response"


def _ask(port, qname, rdtype="A", tcp=False, sport=None):
    """One query from a socket of ours (sport: its port, to find it in
    the messages); the reply as a dns.message."""
    q = dns.message.make_query(qname, rdtype)
    if tcp:
        return dns.query.tcp(q, "127.0.0.1", port=port, timeout=3.0,
                             source_port=sport or 0)
    return dns.query.udp(q, "127.0.0.1", port=port, timeout=3.0,
                         source_port=sport or 0)


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _of(messages, mtype, name):
    """The messages of type mtype (e.g. CLIENT_RESPONSE) about name."""
    return [m for m in messages if m.get("type") == mtype and
            name in (m.get("response_message", "") +
                     m.get("query_message", "")).lower()]


def _wait_size(cap, minimum, timeout=10.0):
    deadline = time.monotonic() + timeout
    while cap.size() < minimum and time.monotonic() < deadline:
        time.sleep(0.05)


def test_every_message_type_over_a_socket(tmp_path, dnsdamper, bind):
    """All four types for a miss (CQ, FQ, FR, CR), two for a hit (CQ,
    CR) and a local answer, over UDP and TCP; identity and version as
    configured; extra says cache, upstream NAME or local."""
    cap = dnstap.Capture(tmp_path, tmp_path / "tap.sock",
                         tmp_path / "tap.fstrm").start()
    d = dnsdamper([Forward(".", [bind])],
                  extra=[f"dnstap {cap.sock}", ALL,
                         "dnstap-identity host-a.test",
                         "dnstap-version \"dnsdamper test\"",
                         "local-data \"here.local.test. 60 IN A "
                         "192.0.2.99\""])
    sport = _free_port()
    r = _ask(d.port, "www.example.test", sport=sport)
    assert r.rcode() == dns.rcode.NOERROR
    r = _ask(d.port, "www.example.test", tcp=True)     # from the cache
    assert r.answer[0][0].to_text() == "192.0.2.80"
    r = _ask(d.port, "here.local.test")
    assert r.answer[0][0].to_text() == "192.0.2.99"
    # the daemon's stop writes what is queued and STOP; then the
    # capture closes its file
    d.stop()
    d.stopped_by_test = True
    cap.stop()
    msgs = dnstap.read(cap.out)
    assert msgs, "nothing decoded"
    for m in msgs:
        assert m["identity"] == "host-a.test", m
        assert m["version"] == "dnsdamper test", m

    www = "www.example.test"
    cq = _of(msgs, "CLIENT_QUERY", www)
    cr = _of(msgs, "CLIENT_RESPONSE", www)
    fq = _of(msgs, "FORWARDER_QUERY", www)
    fr = _of(msgs, "FORWARDER_RESPONSE", www)
    # a miss, then a hit: two queries and answers, one upstream exchange
    # (threads 2: the hit may be another worker's, from the cache)
    assert len(cq) == 2 and len(cr) == 2, msgs
    assert len(fq) == 1 and len(fr) == 1, msgs
    first = [m for m in cq if m.get("query_port") == str(sport)]
    assert len(first) == 1, cq
    assert first[0]["query_address"] == "127.0.0.1"
    assert first[0]["socket_protocol"] == "UDP"
    assert {m["socket_protocol"] for m in cr} == {"UDP", "TCP"}
    by_proto = {m["socket_protocol"]: m for m in cr}
    assert by_proto["UDP"]["query_port"] == str(sport)
    assert "192.0.2.80" in by_proto["UDP"]["response_message"]
    # where each came from: the named, then the cache
    assert by_proto["UDP"]["extra"] == \
        f"source=upstream 127.0.0.1:{bind.port}", by_proto["UDP"]
    assert by_proto["TCP"]["extra"] == "source=cache", by_proto["TCP"]
    # the upstream's end: its address and port, our query and its answer
    assert fq[0]["response_address"] == "127.0.0.1"
    assert fq[0]["response_port"] == str(bind.port)
    assert fr[0]["response_port"] == str(bind.port)
    assert "192.0.2.80" in fr[0]["response_message"]
    # a local answer, never asked upstream
    here = "here.local.test"
    assert not _of(msgs, "FORWARDER_QUERY", here)
    lr = _of(msgs, "CLIENT_RESPONSE", here)
    assert len(lr) == 1 and lr[0]["extra"] == "source=local", lr


def test_default_messages_are_responses(tmp_path, dnsdamper, bind):
    """Without dnstap-messages: client-response and forwarder-response
    only."""
    cap = dnstap.Capture(tmp_path, tmp_path / "tap.sock",
                         tmp_path / "tap.fstrm").start()
    d = dnsdamper([Forward(".", [bind])], extra=[f"dnstap {cap.sock}"])
    _ask(d.port, "miss-hit.example.test")
    d.stop()
    d.stopped_by_test = True
    cap.stop()
    types = {m["type"] for m in dnstap.read(cap.out)
             if "miss-hit" in m.get("response_message", "")}
    assert types == {"CLIENT_RESPONSE", "FORWARDER_RESPONSE"}


def test_file_reopened_at_reload(tmp_path, dnsdamper, bind):
    """dnstap file:PATH; the file moved away and SIGHUP: what came before
    is in the moved file, what came after in a new one at PATH."""
    path = tmp_path / "tap.dnstap"
    d = dnsdamper([Forward(".", [bind])], extra=[f"dnstap file:{path}"])
    _ask(d.port, "pipe1.example.test")
    old = tmp_path / "tap.dnstap.1"
    deadline = time.monotonic() + 5
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    path.rename(old)
    mark = d.log_size()
    d.signal(__import__("signal").SIGHUP)
    d.wait_log(r"reloaded", since=mark)
    _ask(d.port, "pipe2.example.test")
    d.stop()
    d.stopped_by_test = True
    before = dnstap.read(old)
    after = dnstap.read(path)
    assert _of(before, "CLIENT_RESPONSE", "pipe1.example.test"), before
    assert not _of(before, "CLIENT_RESPONSE", "pipe2.example.test"), before
    assert _of(after, "CLIENT_RESPONSE", "pipe2.example.test"), after
    assert not _of(after, "CLIENT_RESPONSE", "pipe1.example.test"), after


TTL = 2
ORIGIN = "tap.test"
ZONE = zone(ORIGIN, TTL, ["old A 192.0.2.61"])


@pytest.mark.timeout_s(40)
def test_stale_answer_is_marked(tmp_path, new_bind, faultproxy, dnsdamper,
                                bind):
    """An answer served stale (RFC 8767) through an outage says
    source=stale."""
    ns = new_bind("tap", {ORIGIN: ZONE})
    fp = faultproxy(ns)
    path = tmp_path / "tap.dnstap"
    d = dnsdamper([Forward(ORIGIN, [fp]), Forward(".", [bind])],
                  extra=[f"dnstap file:{path}", "client-timeout 500ms",
                         "upstream-timeout 100ms 300ms",
                         "query-timeout 1s"])
    r = query.udp(d.port, "old.tap.test")
    assert query.addresses(r) == {"192.0.2.61"}, r.text()
    cached = time.monotonic()
    fp.set(outage=True)
    time.sleep(max(0.0, cached + TTL + 0.5 - time.monotonic()))
    r = query.udp(d.port, "old.tap.test", timeout=5.0)
    assert query.addresses(r) == {"192.0.2.61"}, r.text()
    stale.assert_stale(r, 30)
    d.stop()
    d.stopped_by_test = True
    cr = _of(dnstap.read(path), "CLIENT_RESPONSE", "old.tap.test")
    assert [m["extra"] for m in cr] == \
        [f"source=upstream 127.0.0.1:{fp.port}", "source=stale"], cr


def _connections(cap):
    """Connections to cap's socket that are open now: in /proc/net/unix
    (proc(5)) a socket accept() made has the listener's path, and state
    03, connected."""
    n = 0
    with open("/proc/net/unix") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 8 and fields[7] == str(cap.sock) and \
                    fields[5] == "03":
                n += 1
    return n


@pytest.mark.timeout_s(60)
def test_collector_killed_and_restarted(tmp_path, dnsdamper, bind):
    """The collector dies mid-stream: every query is still answered, what
    could not go out is counted, and once a collector listens again the
    daemon connects to it (within its reopen interval, 1 s) and writes."""
    sock = tmp_path / "tap.sock"
    first = dnstap.Capture(tmp_path, sock, tmp_path / "a.fstrm").start()
    d = dnsdamper([Forward(".", [bind])], extra=[f"dnstap {sock}"])
    ctl = d.control()
    deadline = time.monotonic() + 10
    while _connections(first) < 1 and time.monotonic() < deadline:
        assert _ask(d.port, "www.example.test").rcode() == 0
        time.sleep(0.05)
    assert _connections(first) >= 1, first.log_text()
    first.kill()
    # the collector is gone: answers go on, messages are dropped (found
    # at the I/O thread's next write, within its flush timeout, 1 s);
    # bounded: a query every 0.05 s for up to 10 s
    deadline = time.monotonic() + 10
    while ctl.metrics().value("dnsdamper_dnstap_dropped_total") < 1 and \
            time.monotonic() < deadline:
        assert _ask(d.port, "www.example.test").rcode() == 0
        time.sleep(0.05)
    assert ctl.metrics().value("dnsdamper_dnstap_dropped_total") >= 1
    second = dnstap.Capture(tmp_path, sock, tmp_path / "b.fstrm").start()
    # bounded: a query every 0.05 s for up to 10 s, until it connects
    deadline = time.monotonic() + 10
    while _connections(second) < 1 and time.monotonic() < deadline:
        assert _ask(d.port, "www.example.test").rcode() == 0
        time.sleep(0.05)
    assert _connections(second) >= 1, second.log_text()
    # said once when it could not connect, once when it could again
    d.wait_log(rf"dnstap {sock}: cannot connect to the collector; "
               r"messages are dropped")
    d.wait_log(rf"dnstap {sock}: writing again")
    for i in range(5):
        assert _ask(d.port, "www.example.test").rcode() == 0
    d.stop()
    d.stopped_by_test = True
    second.stop()
    got = _of(dnstap.read(second.out), "CLIENT_RESPONSE", "www.example.test")
    assert len(got) >= 5, "the restarted collector missed answers"


def test_off_costs_no_message(dd):
    """Without dnstap nothing is dropped (or sent)."""
    assert query.addresses(query.udp(dd.port, "www.example.test")) == \
        {"192.0.2.80"}
    assert dd.control().metrics().value(
        "dnsdamper_dnstap_dropped_total") == 0


def _control_frame(ftype, content_type=None):
    """A Frame Streams control frame: the escape (a length of 0), the
    control frame's length, its type, and a content-type field (type 1,
    length, octets)."""
    body = ftype.to_bytes(4, "big")
    if content_type is not None:
        body += (1).to_bytes(4, "big") + \
            len(content_type).to_bytes(4, "big") + content_type
    return b"\0\0\0\0" + len(body).to_bytes(4, "big") + body


@pytest.mark.timeout_s(90)
def test_collector_that_never_reads(tmp_path, dnsdamper, bind):
    """A collector that accepts (READY answered with ACCEPT, Frame
    Streams' handshake) and then never reads: every client query is
    still answered, and once the socket's buffers and the worker's queue
    are full, messages are dropped and counted instead of waited for."""
    sock = tmp_path / "stuck.sock"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(sock))
    srv.listen(4)
    srv.settimeout(10.0)
    d = dnsdamper([Forward(".", [bind])], extra=[f"dnstap {sock}"])
    conn, _ = srv.accept()
    conn.settimeout(10.0)
    # READY: escape, length, type 4 and its content type; answer ACCEPT
    head = b""
    while len(head) < 8:
        head += conn.recv(8 - len(head))
    rest = b""
    while len(rest) < int.from_bytes(head[4:8], "big"):
        rest += conn.recv(4096)
    assert int.from_bytes(rest[:4], "big") == 4, rest      # READY
    conn.sendall(_control_frame(1, dnstap.CONTENT_TYPE.encode()))
    ctl = d.control()
    wire = query.make_query("www.example.test", "A").to_wire()
    answered = 0
    # bounded: at most 40,000 queries, 60 s
    deadline = time.monotonic() + 60
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(3.0)
        s.connect(("127.0.0.1", d.port))
        while answered < 40000 and time.monotonic() < deadline:
            for i in range(50):
                s.send(wire)
            for i in range(50):
                s.recv(4096)
            answered += 50
            if answered % 1000 == 0 and ctl.metrics().value(
                    "dnsdamper_dnstap_dropped_total") >= 1:
                break
    assert ctl.metrics().value("dnsdamper_dnstap_dropped_total") >= 1, \
        answered
    conn.close()
    srv.close()
