"""The fault-injecting upstream (tests/faultproxy) checked against the
session named alone, no dnsdamper: it passes answers through unchanged,
each fault does what it says, its counters move by exactly what the test
sent, a schedule switches faults at its phase boundaries, and it refuses
any address but loopback. If these fail, the daemon's failure tests mean
nothing.

Names: www.example.test is A 192.0.2.80 (zones/example.test.zone); the
fp-*.example.test names do not exist (NXDOMAIN), and no other test asks for
them, so named's query log counts exactly what the proxy forwarded.
"""

import json
import signal
import socket
import subprocess
import time

import dns.flags
import dns.message
import dns.rcode
import pytest

from dnstest import ports, proc, query, wire
from faultproxy import driver
from faultproxy.faultproxy import COUNTERS

WWW = "www.example.test"
WWW_ADDR = "192.0.2.80"
FORGED_ADDR = "192.0.2.66"      # what a spoofed answer carries
SCENARIOS = driver.PROGRAM.parent / "scenarios"


def expect(fp, **want):
    """The proxy's counters are exactly want, every other one 0."""
    got = fp.stats()
    assert set(got) == set(COUNTERS), got
    full = {k: 0 for k in COUNTERS}
    full.update(want)
    assert got == full, "counters differ: " + ", ".join(
        f"{k} {got[k]} (want {full[k]})" for k in COUNTERS
        if got[k] != full[k])


def no_udp_answer(port, qname, timeout=0.5):
    with pytest.raises(query.NoAnswer):
        query.udp(port, qname, timeout=timeout)


def recv_datagrams(sock, count, timeout):
    """Up to count datagrams that arrive on sock within timeout s."""
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < count:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(left)
        try:
            out.append(sock.recv(65535))
        except socket.timeout:
            break
    return out


def run_proxy(*args):
    """faultproxy.py with args, expected to exit at once (bad arguments,
    --check); a CompletedProcess."""
    return subprocess.run([driver.PYTHON, str(driver.PROGRAM), *args],
                          stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=20)


# --- no faults -------------------------------------------------------------

def test_passes_answers_through_unchanged(bind, faultproxy):
    fp = faultproxy(bind)
    # the same query, same ID, straight to named and through the proxy:
    # the same octets back, over UDP and TCP
    q = query.make_query(WWW, msg_id=0x4242)
    for exchange in (query.exchange_udp, query.exchange_tcp):
        direct = exchange(bind.port, q)
        proxied = exchange(fp.port, q)
        assert proxied.wire == direct.wire, proxied.text()
        assert query.addresses(proxied) == {WWW_ADDR}
    # big.big.test (1849 octets) is more than named sends over UDP: its own
    # TC=1 passes through, and TCP brings the whole answer
    assert query.udp(fp.port, "big.big.test", "TXT").tc
    r = query.tcp(fp.port, "big.big.test", "TXT")
    assert not r.tc and len(r.wire) == 1849, r.text()
    expect(fp, received_udp=2, received_tcp=2, forwarded=4,
           upstream_answers=4, answered=4, tcp_connections=2)


def test_malformed_input_is_dropped_and_counted(bind, faultproxy):
    fp = faultproxy(bind)
    mark = bind.mark()
    assert query.udp_wire(fp.port, b"\x12\x34\x01", timeout=0.3) is None
    # a response (QR=1) is no query: answering it could start a loop
    resp = wire.header(0x1235, qr=True) + wire.question("fp-qr.example.test")
    assert query.udp_wire(fp.port, resp, timeout=0.3) is None
    assert bind.count("fp-qr.example.test", since=mark) == 0
    expect(fp, received_udp=2, malformed=2)


# --- faults, one at a time -------------------------------------------------

def test_servfail_and_refused_are_answered_without_forwarding(bind,
                                                              faultproxy):
    fp = faultproxy(bind, servfail=1.0)
    mark = bind.mark()
    name = "fp-injected.example.test"
    for want in (dns.rcode.SERVFAIL, dns.rcode.REFUSED):
        for exchange in (query.exchange_udp, query.exchange_tcp):
            q = query.make_query(name)
            r = exchange(fp.port, q)    # checks the ID
            assert r.rcode == want, r.text()
            assert query.question_wire(r.wire) == \
                query.question_wire(q.to_wire()), r.text()
            assert not r.msg.answer and not r.msg.authority, r.text()
        fp.set(refused=1.0)
    assert bind.count(name, since=mark) == 0
    expect(fp, received_udp=2, received_tcp=2, servfail=2, refused=2,
           answered=4, tcp_connections=2)


def test_servfail_every_other_alternates_per_question(bind, faultproxy):
    """servfail_every_other: the 1st and 3rd query of a question (qname
    in any case) are answered SERVFAIL, the 2nd and 4th forwarded; another
    question has its own turn."""
    fp = faultproxy(bind)
    fp.set(servfail_every_other=True)
    mark = bind.mark()
    got = [query.udp(fp.port, name).rcode for name in (
        "alive.example.test", "ALIVE.example.test", "other.example.test",
        "alive.example.test", "Alive.Example.Test")]
    assert got == [dns.rcode.SERVFAIL, dns.rcode.NOERROR,
                   dns.rcode.SERVFAIL, dns.rcode.SERVFAIL,
                   dns.rcode.NOERROR], got
    assert bind.count("alive.example.test", since=mark) == 2
    assert bind.count("other.example.test", since=mark) == 0
    expect(fp, received_udp=5, servfail=3, forwarded=2, answered=5,
           upstream_answers=2)


def test_loss_one_answers_nothing(bind, faultproxy):
    fp = faultproxy(bind, loss=1.0)
    mark = bind.mark()
    name = "fp-loss.example.test"
    no_udp_answer(fp.port, name)
    with wire.tcp_connect(fp.port) as s:
        s.sendall(wire.frame(query.make_query(name).to_wire()))
        reader = wire.TcpReader(s)
        assert reader.read(0.5) is None
        assert not reader.closed, "loss must not close the connection"
    assert bind.count(name, since=mark) == 0
    expect(fp, received_udp=1, received_tcp=1, dropped_loss=2,
           tcp_connections=1)


def _rcodes(fp, count):
    return [query.udp(fp.port, WWW).rcode for _ in range(count)]


def test_same_seed_same_draws(bind, faultproxy):
    """servfail 0.5: which of 20 queries fail depends on the seed only."""
    a = _rcodes(faultproxy(bind, seed=7, servfail=0.5), 20)
    b = _rcodes(faultproxy(bind, seed=7, servfail=0.5), 20)
    c = _rcodes(faultproxy(bind, seed=8, servfail=0.5), 20)
    assert a == b
    assert a != c       # 20 fair draws alike by chance: 2^-20
    assert set(a) == {dns.rcode.NOERROR, dns.rcode.SERVFAIL}


def test_delay_200_ms(bind, faultproxy):
    fp = faultproxy(bind, delay_mean=200)
    for exchange in (query.udp, query.tcp):
        r = exchange(fp.port, WWW)
        assert r.received - r.sent >= 0.15, r.received - r.sent
        assert query.addresses(r) == {WWW_ADDR}
    # stddev 0: every delay is the mean
    expect(fp, received_udp=1, received_tcp=1, forwarded=2,
           upstream_answers=2, answered=2, tcp_connections=1, delayed=2,
           delay_ms_total=400.0)


def test_delayed_answers_are_concurrent(bind, faultproxy):
    """40 queries at once with 300 +- 50 ms each: all back in well under
    the 12 s that one after the other would take."""
    fp = faultproxy(bind, delay_mean=300, delay_stddev=50)
    q = query.make_query(WWW)
    data = bytearray(q.to_wire())
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((ports.LOOPBACK, fp.port))
        start = time.monotonic()
        for i in range(40):
            data[0:2] = (0x3000 + i).to_bytes(2, "big")
            s.send(data)
        got = recv_datagrams(s, 40, 3.0)
        took = time.monotonic() - start
    assert sorted(wire.parse_header(m).id for m in got) == \
        list(range(0x3000, 0x3000 + 40))
    assert took < 3.0
    st = fp.stats()
    assert st["answered"] == 40
    # 40 draws of N(300, 50): their mean is 300 +- 8 (one standard error)
    assert 250 < st["delay_ms_total"] / st["delayed"] < 350, st


def test_outage_then_restore(bind, faultproxy):
    fp = faultproxy(bind)
    assert query.addresses(query.udp(fp.port, WWW)) == {WWW_ADDR}
    with wire.tcp_connect(fp.port) as old:
        # a query on it first, so the proxy has surely accepted it
        reader = wire.TcpReader(old)
        old.sendall(wire.frame(query.make_query(WWW).to_wire()))
        assert reader.read(2.0) is not None
        fp.set(outage=True)
        no_udp_answer(fp.port, WWW)
        # a new connection is closed without an answer...
        with wire.tcp_connect(fp.port) as new:
            new.sendall(wire.frame(query.make_query(WWW).to_wire()))
            closed, msgs = wire.TcpReader(new).wait_closed(2.0)
            assert closed and msgs == []
        # ...and so is one that was open, at its next query
        old.sendall(wire.frame(query.make_query(WWW).to_wire()))
        closed, msgs = reader.wait_closed(2.0)
        assert closed and msgs == []
    assert fp.clear()["source"] == "flags"
    for exchange in (query.udp, query.tcp):
        assert query.addresses(exchange(fp.port, WWW)) == {WWW_ADDR}
    expect(fp, received_udp=3, received_tcp=3, forwarded=4,
           upstream_answers=4, answered=4, dropped_outage=2,
           tcp_connections=3, tcp_closed_outage=1)


def test_truncate_sets_tc_over_udp_only(bind, faultproxy):
    fp = faultproxy(bind, truncate=1.0)
    q = query.make_query(WWW)
    r = query.exchange_udp(fp.port, q)
    assert r.tc and r.rcode == dns.rcode.NOERROR, r.text()
    # header and question only: no records, not even the OPT
    assert wire.parse_header(r.wire)[-4:] == (1, 0, 0, 0), r.text()
    assert query.question_wire(r.wire) == query.question_wire(q.to_wire())
    r = query.tcp(fp.port, WWW)
    assert not r.tc and query.addresses(r) == {WWW_ADDR}, r.text()
    expect(fp, received_udp=1, received_tcp=1, forwarded=2,
           upstream_answers=2, answered=2, truncated=1, tcp_connections=1)


@pytest.mark.parametrize("kind", ["id", "question", "case"])
def test_spoof_sends_a_forgery_first(bind, faultproxy, kind):
    fp = faultproxy(bind, spoof=1.0, spoof_kind=kind)
    # mixed case, so that the `case` forgery (every letter flipped) differs
    q = query.make_query("WwW.eXaMpLe.TeSt", msg_id=0x1234)
    asked = query.question_wire(q.to_wire())
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((ports.LOOPBACK, fp.port))
        s.send(q.to_wire())
        got = recv_datagrams(s, 2, 3.0)
    assert len(got) == 2, got
    forged, real = (dns.message.from_wire(m) for m in got)
    fq = query.question_wire(got[0])
    assert {rd.address for rs in forged.answer for rd in rs} == \
        {FORGED_ADDR}, forged.to_text()
    if kind == "id":
        assert forged.id != 0x1234 and fq == asked, forged.to_text()
    elif kind == "question":
        assert forged.id == 0x1234 and fq.lower() != asked.lower(), \
            forged.to_text()
    else:
        assert forged.id == 0x1234 and fq != asked and \
            fq.lower() == asked.lower(), forged.to_text()
    assert real.id == 0x1234 and query.question_wire(got[1]) == asked
    assert {rd.address for rs in real.answer for rd in rs} == {WWW_ADDR}
    # nothing forged over TCP
    r = query.tcp(fp.port, WWW)
    assert query.addresses(r) == {WWW_ADDR}
    expect(fp, received_udp=1, received_tcp=1, forwarded=2,
           upstream_answers=2, answered=2, spoofed=1, tcp_connections=1)


def test_lowercase_lowers_the_echoed_qname(bind, faultproxy):
    fp = faultproxy(bind, lowercase=True)
    for exchange in (query.exchange_udp, query.exchange_tcp):
        q = query.make_query("WwW.ExAmPlE.TeSt")
        r = exchange(fp.port, q)
        assert query.question_wire(r.wire) == \
            query.question_wire(q.to_wire()).lower(), r.text()
        assert query.addresses(r) == {WWW_ADDR}
    # a qname in lower case already is not counted: nothing changed
    query.udp(fp.port, WWW)
    expect(fp, received_udp=2, received_tcp=1, forwarded=3,
           upstream_answers=3, answered=3, lowercased=2, tcp_connections=1)


def test_no_edns_formerrs_queries_with_opt(bind, faultproxy):
    """RFC 6891 §7: a server without EDNS answers a query with an OPT
    record FORMERR, without OPT; a query without one is answered."""
    fp = faultproxy(bind, no_edns=True)
    mark = bind.mark()
    for exchange in (query.exchange_udp, query.exchange_tcp):
        q = query.make_query(WWW)
        r = exchange(fp.port, q)
        assert r.rcode == dns.rcode.FORMERR, r.text()
        assert r.msg.edns < 0 and not r.msg.answer, r.text()
        assert query.question_wire(r.wire) == \
            query.question_wire(q.to_wire()), r.text()
        r = exchange(fp.port, query.make_query(WWW, edns=False))
        assert query.addresses(r) == {WWW_ADDR}, r.text()
    # named saw only the plain queries
    assert bind.count(WWW, since=mark) == 2
    expect(fp, received_udp=2, received_tcp=2, formerr_edns=2, forwarded=2,
           upstream_answers=2, answered=4, tcp_connections=2)


# --- schedule ----------------------------------------------------------------

@pytest.mark.timeout_s(30)
def test_schedule_switches_phases(bind, faultproxy):
    """Phases: SERVFAIL for 0-2 s, REFUSED for 2-4 s, then the flags
    (lowercase) apply. A phase's faults replace the flags', so answers in
    a phase keep the qname's case. Polled every 0.1 s, at most 8 s."""
    schedule = {"phases": [
        {"name": "sf", "start": 0, "duration": 2,
         "faults": {"servfail": 1.0}},
        {"name": "ref", "start": "after previous", "duration": 2,
         "faults": {"refused": 1.0}}]}
    fp = faultproxy(bind, schedule=schedule, lowercase=True)
    assert (fp.get()["source"], fp.get()["phase"]) == ("schedule", "sf")
    seen = []   # (seconds since the proxy was ready, rcode, lowered)
    deadline = fp.started + 8.0
    while time.monotonic() < deadline:
        q = query.make_query("Fp-Sched.example.test")
        r = query.exchange_udp(fp.port, q)
        lowered = query.question_wire(r.wire) != \
            query.question_wire(q.to_wire())
        seen.append((r.sent - fp.started, r.rcode, lowered))
        if r.rcode == dns.rcode.NXDOMAIN:
            break
        time.sleep(0.1)
    codes = [c for _, c, _ in seen]
    order = [dns.rcode.SERVFAIL, dns.rcode.REFUSED, dns.rcode.NXDOMAIN]
    assert codes == sorted(codes, key=order.index), seen
    first = {c: t for t, c, _ in reversed(seen)}
    assert set(first) == set(order), seen
    # boundaries at 2 s and 4 s; the test saw "listening" a little after
    # the proxy's clock started, so allow slack both ways
    assert 1.5 <= first[dns.rcode.REFUSED] <= 2.8, seen
    assert 3.5 <= first[dns.rcode.NXDOMAIN] <= 4.8, seen
    assert all(low == (c == dns.rcode.NXDOMAIN) for _, c, low in seen), seen
    n = len(seen)
    st = fp.stats()
    assert st["received_udp"] == n
    assert st["servfail"] + st["refused"] + st["forwarded"] == n, st
    assert st["forwarded"] == 1 and st["lowercased"] == 1, st
    assert fp.get()["source"] == "flags"


def test_shipped_scenarios_are_valid():
    files = sorted(SCENARIOS.glob("*.json"))
    assert files
    for path in files:
        r = run_proxy("--upstream", "127.0.0.1:1", "--schedule", str(path),
                      "--check")
        assert r.returncode == 0, f"{path.name}: {r.stderr}"
        assert json.loads(r.stdout)["schedule"]["phases"], path.name


@pytest.mark.parametrize("schedule,message", [
    ({"phases": [{"start": 0, "duration": 5, "faults": {}},
                 {"start": 4, "duration": 1, "faults": {}}]},
     "phase 1: start 4 s is before the end of the previous phase"),
    ({"phases": [{"start": 0, "faults": {"los": 0.1}}]},
     "phase 0: faults: unknown fault 'los'"),
    ({"phases": [{"start": 0, "faults": {"loss": 2}}]},
     "phase 0: faults: loss: 2.0 is not in [0, 1]"),
    ({"phases": [{"faults": {}}, {"faults": {}}]},
     "phase 1: follows a phase without a duration"),
    ({"repeat": True, "phases": [{"faults": {}}]},
     "phase 0: a repeating schedule needs a duration"),
])
def test_bad_schedule_is_refused(tmp_path, schedule, message):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(schedule))
    r = run_proxy("--upstream", "127.0.0.1:1", "--schedule", str(path))
    assert r.returncode == 2 and message in r.stderr, r.stderr


# --- control, exit, safety -----------------------------------------------

def test_control_protocol(bind, faultproxy):
    fp = faultproxy(bind, loss=0.25)
    lines = [b'not json', b'{"get": null, "stats": null}', b'{"frob": 1}',
             b'{"set": {"los": 0.1}}', b'{"set": {"loss": 1.5}}',
             b'{"set": {"servfail": 0.6, "refused": 0.6}}',
             b'{"get": null}', b'{"set": {"truncate": 0.5}}',
             b'{"get": null}', b'{"set": null}', b'{"get": null}']
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5.0)
        s.connect(str(fp.control_path))
        s.sendall(b"\n".join(lines) + b"\n")
        buf = b""
        while buf.count(b"\n") < len(lines):
            chunk = s.recv(65536)
            assert chunk, buf
            buf += chunk
    replies = [json.loads(ln) for ln in buf.splitlines()]
    assert [r["ok"] for r in replies] == [False] * 6 + [True] * 5, replies
    assert "unknown fault 'los'" in replies[3]["error"]
    assert "servfail + refused" in replies[5]["error"]
    # refused settings changed nothing: still the flags
    assert (replies[6]["source"], replies[6]["faults"]["loss"]) == \
        ("flags", 0.25)
    # set replaces the whole setting: the flags' loss is gone
    assert replies[7]["source"] == "control"
    assert (replies[8]["faults"]["truncate"], replies[8]["faults"]["loss"]) \
        == (0.5, 0.0)
    assert (replies[10]["source"], replies[10]["faults"]["loss"]) == \
        ("flags", 0.25)
    # reset returns the counters as they were and zeroes them
    fp.set()
    query.udp(fp.port, WWW)
    before = fp.reset()
    assert (before["received_udp"], before["answered"]) == (1, 1)
    expect(fp)


def test_timeline_counts_each_second(bind, faultproxy):
    """{"timeline": null} puts each query in the second of the proxy's
    clock it arrived in; fp.t0 puts that clock on ours. Sent: 2 queries
    answered SERVFAIL in one second, then 1 lost and 3 forwarded (2 UDP,
    1 TCP) in the next. Each group starts at least 0.1 s past a second
    boundary and takes far less than 0.8 s, so every query's second is
    known from our clock. The proxy listens on a port picked here."""
    port = ports.free_port()
    fp = faultproxy(bind, listen_port=port)
    assert fp.port == port

    def second_start():
        """Sleep to 0.1 s past the next boundary; that second's number."""
        s = int(time.monotonic() - fp.t0) + 1
        time.sleep(max(0.0, fp.t0 + s + 0.1 - time.monotonic()))
        return s

    fp.set(servfail=1.0)
    a = second_start()
    for _ in range(2):
        assert query.udp(fp.port, "fp-tl.example.test").rcode == \
            dns.rcode.SERVFAIL
    assert time.monotonic() - fp.t0 < a + 0.9
    fp.set(loss=1.0)
    b = second_start()
    no_udp_answer(fp.port, "fp-tl.example.test", timeout=0.2)
    fp.set()
    query.udp(fp.port, "fp-tl.example.test")
    query.udp(fp.port, "fp-tl.example.test")
    query.tcp(fp.port, "fp-tl.example.test")
    assert time.monotonic() - fp.t0 < b + 0.9
    tl = fp.timeline()
    n = int(time.monotonic() - fp.t0) + 1
    assert set(tl) == {"received", "forwarded", "servfail", "refused",
                       "dropped_outage", "dropped_loss"}, tl
    assert {len(v) for v in tl.values()} <= {n - 1, n}, tl

    def only(series, **at):
        want = [0] * len(tl[series])
        for s, count in at.items():
            want[int(s[1:])] = count
        assert tl[series] == want, (series, tl)
    only("received", **{f"s{a}": 2, f"s{b}": 4})
    only("servfail", **{f"s{a}": 2})
    only("dropped_loss", **{f"s{b}": 1})
    only("forwarded", **{f"s{b}": 3})
    only("refused")
    only("dropped_outage")
    # the counters agree, and reset zeroes them but not the timeline
    st = fp.reset()
    assert (st["received_udp"] + st["received_tcp"], st["forwarded"]) == \
        (6, 3), st
    assert fp.timeline()["received"][:b + 1] == tl["received"][:b + 1]


def test_stop_prints_final_counters(bind, faultproxy):
    fp = faultproxy(bind)
    query.udp(fp.port, WWW)
    query.tcp(fp.port, WWW)
    last = fp.stats()
    assert fp.stop() == last      # exit status 0, else stop() raises
    assert not fp.alive()


def test_sigint_exits_cleanly(bind, faultproxy):
    fp = faultproxy(bind)
    rc, killed = proc.stop(fp.proc, signal.SIGINT, 5.0)
    assert (rc, killed) == (0, False), fp.log_text()
    assert fp.stop()["received_udp"] == 0
    assert not fp.control_path.exists()


@pytest.mark.parametrize("flag,addr", [
    ("--upstream", "192.0.2.1:53"),
    ("--upstream", "[2001:db8::1]:53"),
    ("--upstream", "[::ffff:127.0.0.1]:53"),
    ("--upstream", "localhost:53"),
    ("--listen", "0.0.0.0:0"),
    ("--listen", "10.1.2.3:0"),
])
def test_refuses_anything_but_loopback(flag, addr):
    args = {"--upstream": "127.0.0.1:1", "--listen": "127.0.0.1:0"}
    args[flag] = addr
    r = run_proxy(*[x for kv in args.items() for x in kv])
    assert r.returncode == 2, r
    assert "loopback" in r.stderr or "literal IP" in r.stderr, r.stderr
    assert "listening" not in r.stdout
