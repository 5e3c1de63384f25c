"""Self-checks of the harness that need no dnsdamper: the session named
starts, answers, is counted and stopped; free ports, the loopback guard, the
raw packet builders (checked against real named), TCP framing, the
black hole, the deadline. If these fail, the daemon tests mean nothing."""

import os
import random
import socket
import time

import dns.rcode
import dns.rdatatype
import pytest

from dnstest import ports, proc, query, ttl, wire
from dnstest.daemon import DaemonError, Dnsdamper, Forward, config_text
from dnstest.deadline import HarnessTimeout, deadline
from dnstest.named import BindServer


def test_bind_answers_udp_and_tcp(bind):
    for exchange in (query.udp, query.tcp):
        r = exchange(bind.port, "www.example.test")
        assert r.rcode == dns.rcode.NOERROR, r.text()
        assert query.addresses(r) == {"192.0.2.80"}, r.text()


def test_bind_serves_every_zone(bind):
    for origin in ("example.test", "neg600.test", "neg90.test", "big.test",
                   "failover.test", "reload.test", "harness.test"):
        r = query.udp(bind.port, origin, "SOA")
        assert r.rcode == dns.rcode.NOERROR, r.text()
        assert query.find(r.msg, "answer", origin + ".", "SOA"), r.text()


def test_bind_counts_queries_any_case_and_transport(bind):
    mark = bind.mark()
    name = "harness-count.example.test"
    query.udp(bind.port, name)
    query.udp(bind.port, "HaRnEsS-CoUnT.ExAmPlE.TeSt")
    query.tcp(bind.port, name, "TXT")
    assert bind.count(name, since=mark) == 3
    assert bind.count(name, "A", since=mark) == 2
    assert bind.count(name, since=mark, tcp=True) == 1
    assert bind.count(name, since=mark, tcp=False) == 2
    # nothing before the mark, and barrier queries are not counted
    assert bind.count(name, since=bind.mark()) == 0
    assert all(q.name != "" for q in bind.queries(mark))


def test_bind_count_right_after_answer(bind):
    """The barrier makes a count taken the instant an answer arrived exact,
    without sleeping for the log to catch up."""
    mark = bind.mark()
    for i in range(1, 6):
        query.udp(bind.port, "harness-barrier.example.test")
        assert bind.count("harness-barrier.example.test", since=mark) == i


def test_bind_start_stop_leaves_nothing(tmp_path):
    b = BindServer(tmp_path, "lonely")
    b.add_zone("lonely.test", """\
$TTL 60
@  60 IN SOA ns.lonely.test. hostmaster.lonely.test. 1 3600 600 86400 60
@  60 IN NS  ns
ns 60 IN A   127.0.0.1
x  60 IN A   192.0.2.250
""")
    b.start()
    pid = b.proc.pid
    try:
        assert query.addresses(query.udp(b.port, "x.lonely.test")) == \
            {"192.0.2.250"}
    finally:
        status = b.stop()
    assert status == 0, b.log_text()
    assert pid not in proc.live_pids()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    # the port is free again, on UDP and TCP
    for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
        with socket.socket(socket.AF_INET, kind) as s:
            s.bind((ports.LOOPBACK, b.port))


def test_bind_tries_another_port_when_its_udp_port_was_taken(
        tmp_path, monkeypatch):
    """Another process may take the free port before named binds it (the
    machine is shared): named 9.18 then exits saying only that it is
    unable to listen on any configured interfaces, and start() must try
    another port, as it does for "address in use"."""
    held = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    held.bind((ports.LOOPBACK, 0))
    taken = held.getsockname()[1]
    given = [taken]
    free_port = ports.free_port

    def first_taken(host=ports.LOOPBACK):
        return given.pop() if given else free_port(host)

    monkeypatch.setattr(ports, "free_port", first_taken)
    b = BindServer(tmp_path, "raced")
    try:
        with held:
            b.start()       # returns once named answers on its port
        assert given == [] and b.port != taken, b.port
    finally:
        b.stop()


def test_bind_rejects_bad_zone_text(tmp_path):
    b = BindServer(tmp_path, "bad")
    with pytest.raises(RuntimeError, match="does not load"):
        b.add_zone("bad.test", "this is not a zone\n")


def test_new_bind_factory(new_bind):
    b = new_bind("extra", {"extra.test": """\
$TTL 60
@  60 IN SOA ns.extra.test. hostmaster.extra.test. 1 3600 600 86400 60
@  60 IN NS  ns
ns 60 IN A   127.0.0.1
y  60 IN A   192.0.2.251
"""})
    assert query.addresses(query.tcp(b.port, "y.extra.test")) == \
        {"192.0.2.251"}


# --- the zone data the daemon tests rely on -------------------------------

def test_bind_truncates_big_answer_over_udp(bind):
    """The truncation tests rest on this: named (max-udp-size 1232) answers
    the 16 * 113 = 1808-octet TXT RRset with TC=1 over UDP even to a client
    offering 4096, and whole over TCP."""
    r = query.udp(bind.port, "big.big.test", "TXT", payload=1232)
    assert r.tc and not r.msg.answer, r.text()
    r = query.udp(bind.port, "big.big.test", "TXT", payload=4096)
    assert r.tc, r.text()
    # without EDNS named truncates inside the RRset (a partial answer):
    # this is what the daemon must never pass on
    r = query.udp(bind.port, "big.big.test", "TXT", edns=False)
    assert r.tc and len(r.wire) <= 512, r.text()
    r = query.tcp(bind.port, "big.big.test", "TXT")
    assert not r.tc
    rrset = query.find(r.msg, "answer", "big.big.test.", "TXT")
    assert rrset is not None and len(rrset) == 16, r.text()
    assert len(r.wire) > 1232


def test_bind_negative_answers_carry_soa(bind):
    """named already sets the SOA's TTL to min(SOA TTL, MINIMUM) (RFC 2308
    §3) in its negative answers: 120 for neg600.test, 90 for neg90.test."""
    for zone, expect in (("neg600.test", ttl.negative_ttl(600, 120)),
                         ("neg90.test", ttl.negative_ttl(90, 900))):
        r = query.udp(bind.port, f"harness-nx.{zone}")
        assert r.rcode == dns.rcode.NXDOMAIN, r.text()
        soa = query.find(r.msg, "authority", zone + ".", "SOA")
        assert soa is not None and soa.ttl == expect, r.text()
        r = query.udp(bind.port, f"nodata.{zone}", "TXT")
        assert r.rcode == dns.rcode.NOERROR and not r.msg.answer, r.text()
        soa = query.find(r.msg, "authority", zone + ".", "SOA")
        assert soa is not None and soa.ttl == expect, r.text()


def test_bind_srv_has_additional(bind):
    r = query.udp(bind.port, "_http._tcp.srv.example.test", "SRV")
    assert query.find(r.msg, "additional", "target.srv.example.test.", "A")
    assert query.find(r.msg, "additional", "target.srv.example.test.",
                      "AAAA"), r.text()


def test_bind_cname_chain(bind):
    r = query.udp(bind.port, "chain-a.example.test")
    got = [(rr.name.to_text(), rr.rdtype, rr.ttl) for rr in r.msg.answer]
    assert got == [("chain-a.example.test.", dns.rdatatype.CNAME, 300),
                   ("chain-b.example.test.", dns.rdatatype.CNAME, 200),
                   ("chain-c.example.test.", dns.rdatatype.A, 100)], r.text()


# --- ports and the loopback guard -----------------------------------------

def test_free_ports_are_distinct_and_free():
    got = [ports.free_port() for _ in range(20)]
    assert len(set(got)) == 20
    for port in got[:5]:
        for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
            with socket.socket(socket.AF_INET, kind) as s:
                s.bind((ports.LOOPBACK, port))


@pytest.mark.parametrize("host", ["10.0.0.1", "192.168.1.1", "8.8.8.8",
                                  "172.16.0.1", "::2"])
def test_loopback_guard_refuses_other_addresses(host, monkeypatch):
    # should the guard ever break, this test must still send nothing
    def forbidden(*a, **kw):
        raise AssertionError(f"tried to connect to {a!r}")
    monkeypatch.setattr(socket, "create_connection", forbidden)
    with pytest.raises(ValueError):
        ports.check_loopback(host)
    with pytest.raises(ValueError):
        Forward(".", [(host, 53)])
    with pytest.raises(ValueError):
        wire.tcp_connect(53, host)


def test_loopback_guard_accepts_loopback():
    for host in ("127.0.0.1", "127.1.2.3", "::1"):
        assert ports.check_loopback(host) == host


def test_config_text_needs_explicit_root_forward(tmp_path):
    with pytest.raises(ValueError):
        config_text(5300, [Forward("x.test", [5301])], tmp_path / "r")
    text = config_text(5300, [Forward("x.test", [5301, 5302], "order"),
                              Forward(".", [5303])], tmp_path / "r")
    assert "listen 127.0.0.1:5300\n" in text
    assert ("forward x.test { upstream 127.0.0.1:5301 127.0.0.1:5302  "
            "policy order }\n") in text
    assert "forward . { upstream 127.0.0.1:5303 }\n" in text
    assert f"resolv-conf {tmp_path / 'r'}\n" in text


def test_missing_binary_fails_not_skips(tmp_path):
    d = Dnsdamper(tmp_path, [Forward(".", [ports.dead_port()])],
                  binary=tmp_path / "no-such-dnsdamper")
    with pytest.raises(DaemonError, match="not found"):
        d.start()
    assert "nameserver 127.0.0.1" in d.resolv_conf.read_text()


# --- raw packets, checked against named ----------------------------------

def test_malformed_builders_against_named(bind):
    """named must see each case as the RFCs say, except two known places
    where BIND differs from what the daemon is asked to do:
    - it follows a compression pointer in a question (here into the header,
      which spells the root) and so answers REFUSED for `www.`; the daemon
      answers FORMERR;
    - it implements UPDATE (RFC 2136) and answers FORMERR to an UPDATE
      without a zone section; the daemon answers NOTIMP."""
    bind_differs = {"compression-pointer-in-qname": wire.RCODE_REFUSED,
                    "opcode-update": wire.RCODE_FORMERR}
    want_rcode = {"formerr": wire.RCODE_FORMERR, "notimp": wire.RCODE_NOTIMP}
    for case in wire.malformed_cases():
        got = query.udp_wire(bind.port, case.wire, timeout=0.5)
        if case.expect == "none":
            assert got is None, case.name
            continue
        h = wire.parse_header(got)
        sent = wire.parse_header(case.wire)
        assert h.id == sent.id and h.qr, case.name
        assert h.rcode == bind_differs.get(case.name,
                                           want_rcode[case.expect]), case.name
    assert bind.alive()


def test_wire_query_matches_dnspython():
    raw = wire.query(0x1234, "WwW.ExAmPle.TeSt")
    q = query.make_query("WwW.ExAmPle.TeSt", edns=False, msg_id=0x1234)
    assert raw == q.to_wire()
    assert query.question_wire(raw) == raw[12:]
    h = wire.parse_header(raw)
    assert (h.id, h.qr, h.opcode, h.rd, h.qdcount) == (0x1234, False, 0,
                                                        True, 1)


def test_garbage_is_deterministic():
    a = wire.garbage(random.Random(7), 50)
    b = wire.garbage(random.Random(7), 50)
    assert a == b and len(a) == 50


def test_tcp_pipelining_helpers_against_named(bind):
    qs = [query.make_query(f"pipe{i}.example.test", msg_id=0x4200 + i)
          for i in (1, 2, 3)]
    with wire.tcp_connect(bind.port) as s:
        s.sendall(b"".join(wire.frame(q.to_wire()) for q in qs))
        got = wire.TcpReader(s).read_all(1.0)
    assert sorted(wire.parse_header(m).id for m in got) == \
        [0x4201, 0x4202, 0x4203]


def test_tcp_reader_sees_close(bind):
    # a length prefix promising more than is sent, then EOF: named closes
    q = wire.query(0x4300, "pipe1.example.test")
    with wire.tcp_connect(bind.port) as s:
        s.sendall(wire.frame(q, len(q) + 50))
        s.shutdown(socket.SHUT_WR)
        closed, msgs = wire.TcpReader(s).wait_closed(3.0)
    assert closed and msgs == []


# --- black hole, deadline, TTL arithmetic ----------------------------------

def test_blackhole_reads_and_never_answers(blackhole):
    hole = blackhole()
    got = query.udp_wire(hole.port, wire.query(0x4400, "x.test"),
                         timeout=0.5)
    assert got is None
    t = time.monotonic()
    while hole.received < 1 and time.monotonic() - t < 2:
        time.sleep(0.01)
    assert hole.received == 1


def test_deadline_interrupts_blocking_call():
    t = time.monotonic()
    with pytest.raises(HarnessTimeout):
        with deadline(0.2, "sleep"):
            time.sleep(5)
    assert time.monotonic() - t < 2


def test_ttl_arithmetic():
    # 300 s, asked again 2.004 .. 2.011 s later: 300 - 3 .. 300 - 2
    assert ttl.decremented(300, (2.004, 2.011)) == (297, 298)
    # fresh from upstream: a 3 ms round trip may already round to 1 s
    assert ttl.decremented(120, (0.0, 0.003)) == (119, 120)
    assert ttl.decremented(1, (2.0, 3.0)) == (0, 0)
    assert ttl.negative_ttl(600, 120) == 120
    assert ttl.negative_ttl(90, 900) == 90
