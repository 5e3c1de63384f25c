"""Zone isolation (dnsdamper.conf(5) `max-inflight`, global and per
forward zone): each zone has its own share of the resolutions that may
wait for upstreams at once, so a zone whose upstream has stalled cannot
delay or refuse the queries of another. A query that would start one more
resolution than its zone allows is answered SERVFAIL at once (there is no
stale entry here), and the zones' own budgets may not add up to more than
the global one.
"""

import math
import re
import socket
import threading
import time

import dns.message
import dns.rcode

from dnstest import ports, query, stale
from dnstest.daemon import Dnsdamper, Forward, run_check
from dnstest.zonetext import zone

# 3 zones (z1, z2, .) without budgets of their own share max-inflight 6:
# 6 / 3 = 2 resolutions each at once
MAX_INFLIGHT = 6
ZONE_SHARE = MAX_INFLIGHT // 3
QUERY_TIMEOUT = 2.0             # s, how long a resolution of z1 stalls
HAMMER_NAMES = 300
HAMMER_FOR = 3.0                # s: 300 names, one every 10 ms
PROMPT = 1.0                    # s: generous, and half the 2 s that a z2
                                # query stuck behind z1 would take


class Hammer:
    """Sends HAMMER_NAMES queries for unique names under z1.test, evenly
    over HAMMER_FOR s, from one UDP socket, and collects the answers until
    QUERY_TIMEOUT + 1 s after the last one. Bounded in count and time."""

    def __init__(self, port):
        self.port = port
        self.sent = {}          # ID -> (qname, monotonic send time)
        self.answers = {}       # ID -> (rcode, monotonic receive time)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def _run(self):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((ports.check_loopback(ports.LOOPBACK), self.port))
            start = time.monotonic()
            try:
                for i in range(HAMMER_NAMES):
                    at = start + i * HAMMER_FOR / HAMMER_NAMES
                    self._read(s, at)
                    q = query.make_query(f"h{i}.z1.test", msg_id=i + 1)
                    self.sent[i + 1] = (f"h{i}.z1.test", time.monotonic())
                    s.send(q.to_wire())
                self._read(s, time.monotonic() + QUERY_TIMEOUT + 1.0)
            except OSError:     # the daemon is gone (the test failed)
                return

    def _read(self, s, until):
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            s.settimeout(left)
            try:
                data = s.recv(65535)
            except socket.timeout:
                return
            msg = dns.message.from_wire(data)
            self.answers[msg.id] = (msg.rcode(), time.monotonic())

    def join(self):
        self.thread.join(HAMMER_FOR + QUERY_TIMEOUT + 5)
        assert not self.thread.is_alive(), "hammer did not finish"


def test_stalled_zone_cannot_starve_another(new_bind, recorder, dnsdamper,
                                            bind):
    """z1's upstream goes silent while 300 unique z1 names arrive over 3 s;
    max-inflight 6 is tiny and no zone has a budget of its own, so each
    of the 3 zones gets 2. Meanwhile a new z2 name every 100 ms is
    answered correctly and promptly; z1 gets SERVFAIL at once beyond its
    2 resolutions, except for a name it has a stale answer for."""
    ns1 = new_bind("z1", {"z1.test": zone("z1.test", 1,
                                          ["old A 192.0.2.110"])})
    ns2 = new_bind("z2", {"z2.test": zone("z2.test", 300,
                                          ["* A 192.0.2.120"])})
    # z1's upstream: a Recorder, relaying to ns1 for now
    hole = recorder().relay(ns1)
    d = dnsdamper([Forward("z1.test", [hole]), Forward("z2.test", [ns2]),
                   Forward(".", [bind])],
                  extra=[f"max-inflight {MAX_INFLIGHT}",
                         "upstream-timeout 100ms 300ms",
                         f"query-timeout {int(QUERY_TIMEOUT)}s"])
    # old.z1.test is cached (TTL 1 s), then z1's upstream goes silent
    r = query.udp(d.port, "old.z1.test")
    assert query.addresses(r) == {"192.0.2.110"}, r.text()
    hole.drop()
    hammer_from = time.monotonic()
    hammer = Hammer(d.port).start()
    z2 = []
    i = 0
    while hammer.thread.is_alive() and len(hammer.sent) < HAMMER_NAMES:
        # a new name each time: a miss, so it needs a resolution of its own
        r = query.udp(d.port, f"q{i}.z2.test", timeout=QUERY_TIMEOUT + 3)
        z2.append(r)
        i += 1
        time.sleep(0.1)
        if i == 10:
            # z1 is saturated by now, and old.z1.test has expired: it is
            # answered from its stale entry, not SERVFAIL (RFC 8767)
            r = query.udp(d.port, "old.z1.test", timeout=QUERY_TIMEOUT + 3)
            assert r.rcode == dns.rcode.NOERROR, r.text()
            assert query.addresses(r) == {"192.0.2.110"}, r.text()
            stale.assert_stale(r, 30)   # stale-answer-ttl default 30 s
    hammer.join()

    # z2 kept being answered, correctly and promptly, all along
    # About 27 at 100 ms apart; a loaded machine's client runs slower, and
    # 10 still spread over the hammering is what shows it went on.
    assert len(z2) >= 10, f"only {len(z2)} z2 queries during the hammering"
    for r in z2:
        assert r.rcode == dns.rcode.NOERROR, r.text()
        assert query.addresses(r) == {"192.0.2.120"}, r.text()
        assert r.received - r.sent < PROMPT, \
            f"z2 answer after {r.received - r.sent:.3f} s"

    # z1 was saturated: every query answered SERVFAIL, nearly all of them
    # at once (over its budget); at most 2 resolutions at a time reached
    # its upstream, each lasting query-timeout (2 s): over 3 s of
    # hammering that is at most 2 * (1 + ceil(3 / 2)) = 6 names
    assert len(hammer.answers) == HAMMER_NAMES, \
        f"{HAMMER_NAMES - len(hammer.answers)} z1 queries unanswered"
    assert {rc for rc, _ in hammer.answers.values()} == {dns.rcode.SERVFAIL}
    reached = set(hole.names(since=hammer_from, qtype="A"))
    bound = ZONE_SHARE * (1 + math.ceil(HAMMER_FOR / QUERY_TIMEOUT))
    assert 1 <= len(reached) <= bound, \
        f"{len(reached)} z1 names reached its upstream, budget {ZONE_SHARE}"
    at_once = [qid for qid, (_, t) in hammer.answers.items()
               if t - hammer.sent[qid][1] < PROMPT]
    assert len(at_once) >= HAMMER_NAMES - bound
    d.assert_alive()


def test_zone_budget_may_not_take_the_whole_global_budget(tmp_path, bind):
    """A zone given all of max-inflight would leave nothing for the other
    two zones, which need at least 1 each: 6 + 1 + 1 = 8 > 6, rejected by
    `dnsdamper -t` with file:line (the global max-inflight's line: the
    zones without a budget come after z1, so it is the global value that
    leaves them nothing). A budget of 4 fits (4 + 1 + 1 = 6)."""
    d = Dnsdamper(tmp_path / "check", [Forward(".", [bind])])

    def check(budget):
        fw = [Forward("z1.test", [bind], max_inflight=budget),
              Forward("z2.test", [bind]), Forward(".", [bind])]
        text = d.config(fw, [f"max-inflight {MAX_INFLIGHT}"])
        path = tmp_path / f"budget{budget}.conf"
        path.write_text(text)
        line = text.splitlines().index(f"max-inflight {MAX_INFLIGHT}") + 1
        return run_check(d.binary, path), path, line

    ok, _, _ = check(MAX_INFLIGHT - 2)
    assert ok.returncode == 0, ok.stderr
    bad, path, line = check(MAX_INFLIGHT)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    want = (rf"^{re.escape(str(path))}:{line}: max-inflight {MAX_INFLIGHT} "
            rf"leaves less than 1 for each of the 2 zones without their "
            rf"own$")
    assert re.search(want, bad.stderr, re.M), bad.stderr
