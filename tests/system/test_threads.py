"""Worker threads (dnsdamper.conf(5) `threads`): what several workers,
each with its own SO_REUSEPORT sockets, must still do as one daemon.

A client's queries from one source port all reach one worker (the kernel
hashes the source address and port to one of the sockets); queries from
many source ports spread over the workers. So each test here asks from
many sockets, and its expected values are those of one daemon: one
upstream query for a name however many workers miss it, counters that
add up over the workers, one rate limit per client address, a loop probe
seen by whichever worker it comes back to, a reload that every worker
serves before the daemon says it is done.
"""

import socket
import threading
import time

import dns.message
import dns.rcode
import pytest

from dnstest import ports, query, wire
from dnstest.daemon import Forward
from dnstest.upstream import synthesize
from dnstest.zonetext import zone

SOCKETS = 24         # source ports: all on one worker of two has odds 2^-23


def _ask_from_many(port, qname, n, first_id, rdtype="A"):
    """One query for qname from each of n new sockets (n source ports),
    all sent before any answer is read; {id: message} of the answers that
    come within 5 s."""
    socks, got = [], {}
    try:
        for i in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            socks.append(s)
            s.connect((ports.LOOPBACK, port))
            s.send(query.make_query(qname, rdtype,
                                    msg_id=first_id + i).to_wire())
        deadline = time.monotonic() + 5.0
        for s in socks:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                msg = dns.message.from_wire(s.recv(65535))
            except socket.timeout:
                continue
            got[msg.id] = msg
    finally:
        for s in socks:
            s.close()
    return got


def _delta(before, after, name, **labels):
    return after.value(name, **labels) - before.value(name, **labels)


@pytest.mark.parametrize("threads", [1, 2])
def test_one_upstream_query_for_a_name_missed_by_every_worker(
        dnsdamper, bind, recorder, threads):
    """24 clients (24 source ports, over both workers with threads 2) ask
    one name that no one has asked, while its upstream takes 0.5 s to
    answer. One worker claims the name and asks the upstream; the other
    parks its queries and answers them from the cache the moment the
    answer is stored (dnsdamper(8), Coalescing): one upstream query, 24
    answers, 23 of them coalesced, those of the second worker across
    workers (with threads 1, none)."""
    answer = synthesize("192.0.2.61", 300)

    def slow(q):
        if q.question[0].rdtype == 1:
            time.sleep(0.5)
        return answer(q)

    up = recorder().answer_with(slow)
    # an RTO above the 0.5 s, so that the one query is not sent again
    d = dnsdamper([Forward("co.test", [up]), Forward(".", [bind])],
                  extra=[f"threads {threads}", "upstream-timeout 1s 2s"])
    before = d.control().metrics()
    got = _ask_from_many(d.port, "one.co.test", SOCKETS, 0x2000)
    assert sorted(got) == list(range(0x2000, 0x2000 + SOCKETS))
    for m in got.values():
        assert m.rcode() == dns.rcode.NOERROR
        assert {rd.address for rr in m.answer for rd in rr} == \
            {"192.0.2.61"}, m.to_text()
    assert up.names(qtype="A") == ["one.co.test"]
    after = d.control().metrics()
    assert _delta(before, after, "dnsdamper_resolutions_total") == 1
    assert _delta(before, after, "dnsdamper_coalesced_queries_total") == \
        SOCKETS - 1
    across = _delta(before, after, "dnsdamper_coalesced_across_workers_total")
    if threads == 1:
        assert across == 0
    else:
        assert 1 <= across <= SOCKETS - 1
    # every one answered with the upstream's answer, parked or not
    assert _delta(before, after, "dnsdamper_answers_total",
                  source="upstream", rcode="NOERROR") == SOCKETS


def test_counters_add_up_over_the_workers(dnsdamper, bind):
    """/metrics sums every worker's block: 24 queries from 24 sockets for a
    cached name move the query, hit and answer counters by exactly 24,
    whichever worker answered each."""
    d = dnsdamper([Forward(".", [bind])])
    r = query.udp(d.port, "www.example.test")         # now cached
    assert query.addresses(r) == {"192.0.2.80"}, r.text()
    before = d.control().metrics()
    got = _ask_from_many(d.port, "www.example.test", SOCKETS, 0x3000)
    assert len(got) == SOCKETS
    after = d.control().metrics()
    assert _delta(before, after, "dnsdamper_queries_total",
                  transport="udp", qtype="A") == SOCKETS
    assert _delta(before, after, "dnsdamper_cache_hits_total") == SOCKETS
    assert _delta(before, after, "dnsdamper_answers_total",
                  source="cache", rcode="NOERROR") == SOCKETS
    # /stats is the same walk
    stats = d.control().stats()
    assert stats["dnsdamper_cache_hits_total"][0]["value"] == \
        after.value("dnsdamper_cache_hits_total")


def test_one_rate_limit_per_client_over_the_workers(dnsdamper, bind):
    """ratelimit 1 (a bucket of one query, refilled one a second),
    ratelimit-slip 0 (every query over it dropped): 24 queries from one
    client address and 24 source ports, sent within 0.5 s, spread over
    both workers; the table is the process's, so one is answered and 23
    dropped, as from one port (a table per worker would answer one per
    worker)."""
    other = "127.0.0.2"
    d = dnsdamper([Forward(".", [bind])],
                  extra=["ratelimit 1", "ratelimit-slip 0",
                         "exempt-clients 127.0.0.1/32"])
    socks, answered = [], 0
    try:
        t0 = time.monotonic()
        for i in range(SOCKETS):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            socks.append(s)
            s.bind((other, 0))
            s.connect((ports.LOOPBACK, d.port))
            s.send(query.make_query("localhost.", msg_id=i).to_wire())
        assert time.monotonic() - t0 < 0.5, "the burst took too long"
        for s in socks:
            s.settimeout(0.5)
            try:
                s.recv(65535)
                answered += 1
            except socket.timeout:
                pass
    finally:
        for s in socks:
            s.close()
    assert answered == 1
    m = d.control().metrics()
    assert m.get("dnsdamper_ratelimited_total", action="dropped") == \
        SOCKETS - 1
    assert m.get("dnsdamper_ratelimit_clients") == 1


def _loop_log(port):
    return (rf"error: upstream 127\.0\.0\.1:{port} sends our queries back "
            rf"to us \(a forwarding loop\); not using it until reload")


ROUNDS = 8


@pytest.mark.timeout_s(60)
def test_loop_probe_seen_by_the_worker_it_comes_back_to(
        new_bind, faultproxy, dnsdamper, bind):
    """The looping upstream of test_loop.py, 8 times: each round a new
    mirror (a new upstream, fresh health) is configured by a reload and
    found. A mirror sends every probe back from its one socket, so one
    worker, the same all round, gets it back; each round's client asks
    from a new source port, so the probe goes out from either worker: in
    about half the rounds the probe comes back to the other one, which
    must know it for ours (the running probes are the registry's, not a
    worker's; without that, the odds that no round shows it are 2^-8).
    Each round's is found: 8 lines say so."""
    ns = new_bind("loop", {"loop.test": zone("loop.test", 300,
                                             ["* A 192.0.2.130"])})
    d = dnsdamper([Forward(".", [bind])])
    conf = ["upstream-timeout 100ms 300ms", "query-timeout 2s"]
    for i in range(ROUNDS):
        mirror = faultproxy(d)      # forwards to the daemon's own port
        forwards = [Forward("loop.test", [mirror, ns], "order"),
                    Forward(".", [bind])]
        mark = d.reload(d.config(forwards, conf))
        d.wait_log(r"dnsdamper: info: reloaded$", since=mark)
        r = query.udp(d.port, f"r{i}.loop.test", timeout=2 + 3)
        assert query.addresses(r) == {"192.0.2.130"}, r.text()
        d.wait_log(_loop_log(mirror.port), since=mark, timeout=3.0)
    d.assert_alive()


RELOADS = 6


@pytest.mark.timeout_s(60)
def test_reload_served_by_every_worker_before_it_is_done(dnsdamper, bind):
    """While a thread keeps asking from new sockets, 6 reloads each change
    a local-data address; once the log says `reloaded`, every worker
    serves the new one: 24 queries from 24 sockets all see it. No query
    goes unanswered across the reloads."""
    d = dnsdamper([Forward(".", [bind])],
                  extra=['local-data "v.reload.test. 300 IN A 192.0.2.100"'])
    stop = threading.Event()
    lost = []

    def keep_asking():
        i = 0
        while not stop.is_set() and i < 2000:
            try:
                query.udp(d.port, "v.reload.test", timeout=2.0)
            except query.NoAnswer as e:
                lost.append(str(e))
            i += 1

    t = threading.Thread(target=keep_asking, daemon=True)
    t.start()
    try:
        for n in range(1, RELOADS + 1):
            addr = f"192.0.2.{100 + n}"
            text = d.config([Forward(".", [bind])],
                            [f'local-data "v.reload.test. 300 IN A {addr}"'])
            mark = d.reload(text)
            d.wait_log(r"dnsdamper: info: reloaded$", since=mark)
            got = _ask_from_many(d.port, "v.reload.test", SOCKETS,
                                 0x4000 + n * SOCKETS)
            assert len(got) == SOCKETS
            seen = {rd.address for m in got.values() for rr in m.answer
                    for rd in rr}
            assert seen == {addr}, (n, seen)
    finally:
        stop.set()
        t.join(10.0)
    assert not lost, lost[:3]
    d.assert_alive()


def test_threads_is_restart_only(dnsdamper, bind):
    """A reload with another `threads` says it takes effect at restart,
    and keeps the workers it has."""
    d = dnsdamper([Forward(".", [bind])])
    mark = d.reload(d.config([Forward(".", [bind])], ["threads 3"]))
    d.wait_log(r"dnsdamper: info: reloaded$", since=mark)
    assert "warning: threads changed: it takes effect at restart" in \
        d.stderr(mark)
    assert "2 worker threads" in d.stderr()
    assert query.addresses(query.udp(d.port, "www.example.test")) == \
        {"192.0.2.80"}


def test_tcp_from_many_connections_over_the_workers(dnsdamper, bind):
    """TCP connections spread over the workers' listeners as datagrams
    do; each is answered, and the connection gauge sums every worker's."""
    d = dnsdamper([Forward(".", [bind])])
    conns = [wire.tcp_connect(d.port) for _ in range(8)]
    try:
        for i, c in enumerate(conns):
            c.sendall(wire.frame(query.make_query(
                "www.example.test", msg_id=0x5000 + i).to_wire()))
        for i, c in enumerate(conns):
            got = wire.TcpReader(c).read(5.0)
            assert got is not None and \
                wire.parse_header(got).id == 0x5000 + i
        m = d.control().metrics()
        assert m.get("dnsdamper_tcp_connections") == 8
    finally:
        for c in conns:
            c.close()
