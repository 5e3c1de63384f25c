"""A bounded open-loop DNS client: queries at a fixed rate, whatever the
answers do, each one counted as answered right, failed, or timed out.

Queries go out on schedule (rate per second, spread over the targets and
names in turn) from one connected UDP socket per target, so that a closed
server socket shows as ECONNREFUSED (ICMP port unreachable) rather than
silence, as far as the kernel's host-wide ICMP budget
(net.ipv4.icmp_msgs_per_sec) lets it send one. An answer is right when it has the query's ID and question,
rcode NOERROR and exactly the expected A addresses; a query without an
answer within timeout s has timed out. Sending stops at stop() or after
max_seconds, whichever is first; then the last queries get their timeout
to be answered.
"""

import dataclasses
import selectors
import socket
import threading
import time

import dns.message
import dns.rcode
import dns.rdatatype

from dnstest import ports


@dataclasses.dataclass
class Result:
    sent: int = 0
    right: int = 0
    failed: int = 0
    timed_out: int = 0
    seconds: float = 0.0
    latencies: list = dataclasses.field(default_factory=list)
    failures: list = dataclasses.field(default_factory=list)

    def quantile(self, q):
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None

    def summary(self):
        ms = [None if v is None else round(v * 1000, 2) for v in
              (self.quantile(0.5), self.quantile(0.99),
               max(self.latencies, default=None))]
        return (f"{self.sent} queries in {self.seconds:.1f} s "
                f"({self.sent / max(self.seconds, 1e-9):.0f}/s): "
                f"{self.right} right, {self.failed} failed, "
                f"{self.timed_out} timed out; latency ms p50 {ms[0]}, "
                f"p99 {ms[1]}, max {ms[2]}")


# After a restart the server answers the queries that waited in its
# sockets all at once: a few hundred answers, more than the default
# receive buffer (net.core.rmem_default, 208 KiB: some 270 small
# datagrams) holds while this one Python thread is busy sending, and the
# kernel drops the rest (RcvbufErrors) as if the server had lost them.
RCVBUF = 8 * 1024 * 1024
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)     # Linux


def _roomy_receive_buffer(s):
    """Room for RCVBUF octets of answers: beyond net.core.rmem_max when
    allowed to (CAP_NET_ADMIN), else as much as rmem_max lets."""
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RCVBUF)
    except PermissionError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)


class Load:
    def __init__(self, targets, expected, rate=1000, timeout=1.0,
                 max_seconds=60.0):
        """targets: (address, port) pairs, loopback only; expected:
        {qname: set of A addresses}."""
        self.targets = [(ports.check_loopback(a), p) for a, p in targets]
        self.expected = expected
        self.names = sorted(expected)
        self.rate = rate
        self.timeout = timeout
        self.max_seconds = max_seconds
        self.result = Result()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        """Stop sending; wait for the last answers; the Result."""
        self._stop.set()
        self._thread.join(self.max_seconds + self.timeout + 10)
        assert not self._thread.is_alive(), "load client did not finish"
        return self.result

    def _run(self):
        sel = selectors.DefaultSelector()
        socks = []
        for addr, port in self.targets:
            family = socket.AF_INET6 if ":" in addr else socket.AF_INET
            s = socket.socket(family, socket.SOCK_DGRAM)
            _roomy_receive_buffer(s)
            s.setblocking(False)
            s.connect((addr, port))
            sel.register(s, selectors.EVENT_READ, len(socks))
            socks.append(s)
        pending = [dict() for _ in socks]      # id -> (qname, sent at)
        r = self.result
        start = time.monotonic()
        next_send = start
        n = 0
        try:
            while True:
                now = time.monotonic()
                sending = not self._stop.is_set() and \
                    now - start < self.max_seconds
                while sending and next_send <= now:
                    self._send(socks, pending, n, now)
                    n += 1
                    next_send = start + n / self.rate
                self._expire(pending, now)
                if not sending and not any(pending):
                    break
                wait = min(0.05, max(0.0, next_send - now)) if sending \
                    else 0.05
                for key, _ in sel.select(wait):
                    self._receive(socks[key.data], pending[key.data])
        finally:
            r.seconds = time.monotonic() - start
            for s in socks:
                sel.unregister(s)
                s.close()

    def _send(self, socks, pending, n, now):
        i = n % len(socks)
        qname = self.names[(n // len(socks)) % len(self.names)]
        q = dns.message.make_query(qname, dns.rdatatype.A)
        q.id = (n // len(socks)) % 65536
        self.result.sent += 1
        try:
            socks[i].send(q.to_wire())
        except OSError as e:
            self._fail(qname, f"send: {e}")
            return
        pending[i][q.id] = (qname, now)

    def _receive(self, sock, pending):
        while True:
            try:
                wire = sock.recv(65535)
            except BlockingIOError:
                return
            except OSError as e:             # ICMP port unreachable
                self._fail("?", f"recv: {e}")
                return
            self._check(wire, pending, time.monotonic())

    def _check(self, wire, pending, now):
        try:
            m = dns.message.from_wire(wire)
        except Exception as e:
            self._fail("?", f"unparsable answer: {e}")
            return
        if m.id not in pending:
            self._fail("?", f"answer to no pending query (id {m.id})")
            return
        qname, sent = pending.pop(m.id)
        got = {rd.address for rr in m.answer for rd in rr
               if rr.rdtype == dns.rdatatype.A}
        if m.question[0].name.to_text().lower() != qname or \
                m.rcode() != dns.rcode.NOERROR or \
                got != self.expected[qname]:
            self._fail(qname, f"{dns.rcode.to_text(m.rcode())} {got}")
            return
        self.result.right += 1
        self.result.latencies.append(now - sent)

    def _expire(self, pending, now):
        for p in pending:
            late = [i for i, (_, sent) in p.items()
                    if now - sent > self.timeout]
            for i in late:
                qname, _ = p.pop(i)
                self.result.timed_out += 1
                if len(self.result.failures) < 20:
                    self.result.failures.append(f"{qname}: timed out")

    def _fail(self, qname, why):
        self.result.failed += 1
        if len(self.result.failures) < 20:
            self.result.failures.append(f"{qname}: {why}")
