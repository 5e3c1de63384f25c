"""Client access control (dnsdamper.conf(5), CLIENTS): `allow`, the refusal
to listen beyond loopback without one, `ratelimit` with `ratelimit-slip`
and `ratelimit-size`, and the minimal answer to ANY over UDP (RFC 8482
§4.2) for clients not in `exempt-clients`.

Only loopback may be a target, so "another client" is a socket bound to
127.0.0.2 (OTHER) talking to the daemon on 127.0.0.1: a loopback address
that the test's `allow` or `exempt-clients` leaves out. Listening beyond
loopback is checked with `dnsdamper -t`, and started only in a network
namespace of its own, where every address is its loopback alone."""

import os
import re
import shutil
import socket
import subprocess
import time

import pytest

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype

from dnstest import ports, query, wire
from dnstest.daemon import Forward, binary_path, run_check

OTHER = "127.0.0.2"


def _refusal_lines(d):
    return re.findall(r"not in allow: .*", d.stderr())


def test_allow_refuses_other_clients(dnsdamper, bind):
    d = dnsdamper([Forward(".", [bind])], extra=["allow 127.0.0.1/32"])
    mark = bind.mark()
    r = query.udp(d.port, "www.example.test")
    assert query.addresses(r) == {"192.0.2.80"}, r.text()

    # RFC 1035 §4.1.1: REFUSED (5), "for policy reasons"; the question
    # comes back, nothing else does
    q = query.make_query("acl-refused.example.test")
    r = query.exchange_udp(d.port, q, source=OTHER)
    assert r.rcode == dns.rcode.REFUSED, r.text()
    assert r.msg.question == q.question, r.text()
    assert not r.msg.answer and not r.msg.authority, r.text()

    # over TCP the connection is closed as soon as it is accepted: no
    # answer, no slot taken
    with wire.tcp_connect(d.port, source=OTHER) as s:
        try:
            s.sendall(wire.frame(q.to_wire()))
        except (BrokenPipeError, ConnectionResetError):
            pass
        reader = wire.TcpReader(s)
        assert reader.read(2.0) is None
        assert reader.closed

    assert bind.count("acl-refused.example.test", since=mark) == 0
    m = d.control().metrics()
    assert m.get("dnsdamper_refused_queries_total") == 1
    assert m.get("dnsdamper_refused_connections_total") == 1
    assert m.get("dnsdamper_tcp_connections_total") == 0
    assert m.get("dnsdamper_answers_total", source="error",
                 rcode="REFUSED") == 1

    # one log line a minute, however many are refused: the first said
    # so; 5 more queries and the connection add none within the minute
    for i in range(5):
        r = query.exchange_udp(d.port, query.make_query(
            f"acl-refused{i}.example.test"), source=OTHER)
        assert r.rcode == dns.rcode.REFUSED, r.text()
    assert d.control().metrics().get("dnsdamper_refused_queries_total") == 6
    assert _refusal_lines(d) == [
        "not in allow: refused a UDP query from 127.0.0.2"], d.stderr()


def _check_fails(tmp_path, lines, bad_line, listen):
    path = tmp_path / "beyond.conf"
    path.write_text("\n".join(lines) + "\n")
    r = run_check(binary_path(), path)
    assert r.returncode != 0, f"accepted:\n{path.read_text()}"
    want = (f"{path}:{bad_line}: listen {listen} is not a loopback "
            f"address, but no \"allow\" line admits a client beyond "
            f"loopback: add \"allow NETWORK/LEN\" for the clients it serves")
    assert want in r.stderr.splitlines(), r.stderr


def test_listen_beyond_loopback_needs_allow(tmp_path):
    # `dnsdamper -t` only: nothing here ever listens beyond loopback
    port = ports.free_port()
    resolv = tmp_path / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\n")
    head = [f"resolv-conf {resolv}", "cache-file none",
            "forward . { upstream 127.0.0.1:9 }"]
    # no allow at all: loopback only by default
    _check_fails(tmp_path, head + [f"listen 0.0.0.0:{port}"], 4,
                 f"0.0.0.0:{port}")
    # an allow of loopback alone does not say who else
    _check_fails(tmp_path, head + ["allow 127.0.0.1/32 ::1",
                                   f"listen 127.0.0.1:{port}",
                                   f"listen [::]:{port}"], 6,
                 f"[::]:{port}")
    _check_fails(tmp_path, head + [f"listen 192.0.2.1:{port}"], 4,
                 f"192.0.2.1:{port}")
    # with clients beyond loopback named, the file is good
    path = tmp_path / "good.conf"
    path.write_text("\n".join(head + [f"listen 0.0.0.0:{port}",
                                      "allow 192.0.2.0/24"]) + "\n")
    r = run_check(binary_path(), path)
    assert r.returncode == 0, r.stderr


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None
                    or shutil.which("ip") is None,
                    reason="a network namespace of its own needs root")
def test_start_beyond_loopback_needs_allow(tmp_path):
    """Not only `-t`: the daemon itself, started to listen on 0.0.0.0
    with no allow, exits non-zero with the same line before it binds
    anything. It runs in a new network namespace (unshare -n) whose only
    interface is its loopback, so that even a daemon without the check
    would listen on loopback alone; such a daemon would run on, and be
    killed by PID at the timeout."""
    port = ports.free_port()
    resolv = tmp_path / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\n")
    path = tmp_path / "beyond.conf"
    path.write_text("\n".join([
        f"resolv-conf {resolv}", "cache-file none", "hosts-file none",
        f"control {tmp_path / 'control.sock'}",
        "forward . { upstream 127.0.0.1:9 }",
        f"listen 0.0.0.0:{port}"]) + "\n")
    r = subprocess.run(["unshare", "-n", "sh", "-c",
                        'ip link set lo up && exec "$0" -c "$1"',
                        str(binary_path()), str(path)],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=10)
    want = (f"{path}:6: listen 0.0.0.0:{port} is not a loopback "
            f"address, but no \"allow\" line admits a client beyond "
            f"loopback: add \"allow NETWORK/LEN\" for the clients it serves")
    assert r.returncode != 0, r.stderr
    assert want in r.stderr.splitlines(), r.stderr
    assert "listening on" not in r.stderr, r.stderr


def test_reload_checks_access(dnsdamper, bind):
    d = dnsdamper([Forward(".", [bind])])
    # no allow: all of loopback, 127.0.0.2 too
    r = query.udp(d.port, "www.example.test")
    assert r.rcode == dns.rcode.NOERROR, r.text()
    r = query.exchange_udp(d.port, query.make_query("www.example.test"),
                           source=OTHER)
    assert r.rcode == dns.rcode.NOERROR, r.text()

    good = d.config([Forward(".", [bind])], ["allow 127.0.0.1/32"])
    lines = good.splitlines()
    bad = lines + ["allow 10.0.0.1/8"]
    since = d.reload("\n".join(bad) + "\n")
    d.wait_log(rf"{re.escape(str(d.conf_path))}:{len(bad)}: allow: "
               r'"10.0.0.1/8" is not a network: bits are set past the '
               r"prefix length \(10.0.0.0/8\?\)", since)
    d.wait_log("reload failed; still running the previous configuration",
               since)
    r = query.exchange_udp(d.port, query.make_query("www.example.test"),
                           source=OTHER)
    assert r.rcode == dns.rcode.NOERROR, r.text()

    wide = lines + [f"listen 0.0.0.0:{d.port}"]
    since = d.reload("\n".join(wide) + "\n")
    d.wait_log(rf"{re.escape(str(d.conf_path))}:{len(wide)}: listen "
               rf"0.0.0.0:{d.port} is not a loopback address", since)
    d.wait_log("reload failed", since)

    since = d.reload(good)
    d.wait_log("reloaded", since)
    r = query.exchange_udp(d.port, query.make_query("www.example.test"),
                           source=OTHER)
    assert r.rcode == dns.rcode.REFUSED, r.text()
    r = query.udp(d.port, "www.example.test")
    assert r.rcode == dns.rcode.NOERROR, r.text()


def _burst(port, source, ids, qname="localhost."):
    """Send one query per ID from source back to back, then collect what
    comes back until 0.5 s pass without a datagram (at most 3 s).
    Returns ({id: Reply-like message}, seconds the sends took)."""
    got = {}
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((ports.check_loopback(source), 0))
        s.connect((ports.LOOPBACK, port))
        qs = [query.make_query(qname, msg_id=i) for i in ids]
        t0 = time.monotonic()
        for q in qs:
            s.send(q.to_wire())
        took = time.monotonic() - t0
        end = time.monotonic() + 3.0
        while time.monotonic() < end:
            s.settimeout(0.5)
            try:
                raw = s.recv(65535)
            except socket.timeout:
                break
            msg = dns.message.from_wire(raw)
            query.TRANSCRIPT.append(f"--- burst answer\n{msg.to_text()}")
            got[msg.id] = msg
    return got, took


def test_ratelimit_slip(dnsdamper, bind):
    # ratelimit 1: a bucket of one query, refilled one a second;
    # ratelimit-slip 2: of the queries over the limit the 2nd, 4th, ...
    # get an empty TC=1 answer, the others none. 127.0.0.1 (the readiness
    # check, the control) is exempt, OTHER is not.
    d = dnsdamper([Forward(".", [bind])],
                  extra=["ratelimit 1", "ratelimit-slip 2",
                         "exempt-clients 127.0.0.1/32"])
    ids = list(range(1, 12))
    got, took = _burst(d.port, OTHER, ids)
    # the bucket refills a whole query in 1 s: the burst must be shorter
    # for the counts below to be the RFC-free arithmetic they are
    assert took < 0.5, f"sending 11 datagrams took {took:.3f} s"
    # query 1 takes the one token; queries 2..11 are the 1st..10th over
    # the limit: the even-numbered over (IDs 3, 5, 7, 9, 11) slip
    assert sorted(got) == [1, 3, 5, 7, 9, 11], sorted(got)
    assert not got[1].flags & dns.flags.TC
    assert {rd.address for rrset in got[1].answer for rd in rrset} == \
        {"127.0.0.1"}, got[1].to_text()
    for i in (3, 5, 7, 9, 11):
        assert got[i].flags & dns.flags.TC, got[i].to_text()
        assert got[i].rcode() == dns.rcode.NOERROR, got[i].to_text()
        assert not got[i].answer and not got[i].authority
        assert got[i].question[0].name.to_text() == "localhost."
    m = d.control().metrics()
    assert m.get("dnsdamper_ratelimited_total", action="dropped") == 5
    assert m.get("dnsdamper_ratelimited_total", action="slipped") == 5
    assert m.get("dnsdamper_ratelimit_clients") == 1

    # what a real client does with TC=1: ask again over TCP, not limited
    r = query.exchange_tcp(d.port, query.make_query("localhost."),
                           source=OTHER)
    assert query.addresses(r) == {"127.0.0.1"}, r.text()
    # an exempt client's burst is answered whole
    got, _ = _burst(d.port, ports.LOOPBACK, ids)
    assert sorted(got) == ids
    assert not any(m.flags & dns.flags.TC for m in got.values())
    m = d.control().metrics()
    assert m.get("dnsdamper_ratelimited_total", action="dropped") == 5
    assert m.get("dnsdamper_ratelimit_clients") == 1
    assert re.findall(r"over ratelimit: .*", d.stderr()) == [
        "over ratelimit: dropped or truncated a query from 127.0.0.2"], \
        d.stderr()


def test_ratelimit_table_bound(dnsdamper, bind):
    # 20 client addresses, a table of 4: the 16 seen least recently are
    # evicted one by one as new ones arrive
    d = dnsdamper([Forward(".", [bind])],
                  extra=["ratelimit 100", "ratelimit-size 4",
                         "exempt-clients 127.0.0.1/32"])
    for i in range(20):
        r = query.exchange_udp(d.port, query.make_query("localhost."),
                               source=f"127.0.0.{10 + i}")
        assert r.rcode == dns.rcode.NOERROR, r.text()
    m = d.control().metrics()
    assert m.get("dnsdamper_ratelimit_clients") == 4
    assert m.get("dnsdamper_ratelimit_evictions_total") == 16


def test_any_minimal_over_udp(dnsdamper, bind):
    d = dnsdamper([Forward(".", [bind])],
                  extra=["exempt-clients 127.0.0.1/32"])
    mark = bind.mark()
    # big.big.test has 16 TXT RRs of 113 octets each (zones/big.test.zone)
    q = query.make_query("Big.big.test", "ANY")
    r = query.exchange_udp(d.port, q, source=OTHER)
    # RFC 8482 §4.2: NOERROR and one synthesized HINFO RRset for the
    # qname, CPU "RFC8482", OS the empty string; TTL ours (3600 s)
    assert r.rcode == dns.rcode.NOERROR and not r.tc, r.text()
    assert len(r.msg.answer) == 1, r.text()
    rrset = r.msg.answer[0]
    assert rrset.rdtype == dns.rdatatype.HINFO, r.text()
    assert rrset.name.to_text() == "Big.big.test.", r.text()
    assert rrset.ttl == 3600, r.text()
    assert [(rd.cpu, rd.os) for rd in rrset] == [(b"RFC8482", b"")]
    # 21 octets more than the query (2 owner pointer, 10 type, class,
    # TTL and length, 9 RDATA; the OPT the same size both ways): nothing
    # to amplify, and nothing asked upstream
    assert len(r.wire) == len(q.to_wire()) + 21
    assert bind.count("big.big.test", since=mark) == 0

    # RFC 8482 §4.4: over TCP, the conventional answer from the upstream
    r = query.exchange_tcp(d.port, query.make_query("big.big.test", "ANY"),
                           source=OTHER)
    txt = query.find(r.msg, "answer", "big.big.test", "TXT")
    assert txt is not None and len(txt) == 16, r.text()
    # and so over UDP for an exempt client
    r = query.udp(d.port, "www.example.test", "ANY")
    assert query.addresses(r) == {"192.0.2.80"}, r.text()
    assert query.find(r.msg, "answer", "www.example.test", "HINFO") is None
    assert d.control().metrics().get("dnsdamper_any_minimal_total") == 1
