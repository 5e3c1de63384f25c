"""Service-discovery clients: an SRV lookup, then the A record of its
target, over UDP, each lookup with a timeout and no retry, each recorded.

A lookup fails when no answer with its ID arrives within the timeout, or
the answer is not NOERROR with the zone's record (SERVFAIL, REFUSED,
empty, wrong data). Its latency is the time to its answer, or the full
timeout: failures are in the percentiles. An answer is stale when it
carries EDE 3 (RFC 8914 Stale Answer) or an answer record with TTL
STALE_TTL (30 s, the default of dnsdamper's stale-answer-ttl and unbound's
serve-expired-reply-ttl; the zone's TTLs are shorter, so a fresh answer
never has it)."""

import asyncio
import random
import struct

import dns.edns
import dns.message
import dns.name
import dns.rcode
import dns.rdatatype

from dnstest import ports

from .sdzone import host_addr, host_name, srv_name

STALE_TTL = 30          # s: stale-answer-ttl / serve-expired-reply-ttl
EDE_STALE = 3           # RFC 8914 §4.4

# one record per lookup: (start s on the scenario clock, "SRV"|"A",
# latency ms, outcome, stale, min answer TTL or -1, qname); outcome "ok"
# or the kind of failure
START, QTYPE, LATENCY, OUTCOME, STALE, TTL, QNAME = range(7)


class Template:
    """The wire form of one query (EDNS0, 1232 octets, RD), its ID patched
    per lookup."""

    def __init__(self, qname, rdtype):
        self.qname = dns.name.from_text(qname)
        self.text = qname
        self.rdtype = rdtype
        q = dns.message.make_query(self.qname, rdtype, use_edns=0,
                                   payload=1232)
        self.wire = q.to_wire()


class Templates:
    """The queries of services services: srv[k], and a[target name] =
    (k, A query of hostK)."""

    def __init__(self, services):
        self.srv = [Template(srv_name(k), dns.rdatatype.SRV)
                    for k in range(services)]
        self.a = {dns.name.from_text(host_name(k)):
                  (k, Template(host_name(k), dns.rdatatype.A))
                  for k in range(services)}


class ClientProtocol(asyncio.DatagramProtocol):
    def __init__(self):
        self.waiter = None
        self.expect = None
        self.loop = None

    def datagram_received(self, data, addr):
        w = self.waiter
        if w is not None and not w.done() and data[:2] == self.expect:
            w.set_result((self.loop.time(), data))

    def error_received(self, exc):
        w = self.waiter
        if w is not None and not w.done():
            w.set_result((self.loop.time(), None))


async def open_client(loop, host, port):
    """A UDP socket connected to host:port (loopback only): (transport,
    protocol)."""
    tr, pr = await loop.create_datagram_endpoint(
        ClientProtocol, remote_addr=(ports.check_loopback(host), port))
    pr.loop = loop
    return tr, pr


def classify(data, tmpl):
    """(outcome, stale, min answer TTL, message) of one answer."""
    try:
        msg = dns.message.from_wire(data)
    except Exception:                           # noqa: BLE001
        return "malformed", False, -1, None
    if not msg.question or msg.question[0].name != tmpl.qname or \
            msg.question[0].rdtype != tmpl.rdtype:
        return "mismatch", False, -1, msg
    stale = any(isinstance(o, dns.edns.EDEOption) and o.code == EDE_STALE
                for o in msg.options)
    rcode = msg.rcode()
    if rcode != dns.rcode.NOERROR:
        return dns.rcode.to_text(rcode).lower(), stale, -1, msg
    ttls = [rrset.ttl for rrset in msg.answer
            if rrset.rdtype == tmpl.rdtype]
    if not ttls:
        return "noanswer", stale, -1, msg
    stale = stale or any(rrset.ttl == STALE_TTL for rrset in msg.answer)
    return "ok", stale, min(ttls), msg


class Lookups:
    """SRV-then-A pairs through one client socket's transport and
    protocol, each lookup appended to records (see START...QNAME)."""

    def __init__(self, templates, timeout, t0):
        self.q = templates
        self.timeout = timeout      # s per lookup
        self.t0 = t0                # monotonic s of scenario t = 0
        self.records = []

    async def pair(self, loop, tr, pr, svc):
        """Look up service svc's SRV set, then, if it was right, the A
        record of its target."""
        outcome, msg = await self.lookup(
            loop, tr, pr, self.q.srv[svc],
            lambda m: self.check_srv(m, svc) is not None)
        if outcome == "ok":
            k_a, tmpl = self.check_srv(msg, svc)
            await self.lookup(loop, tr, pr, tmpl,
                              lambda m: self.check_a(m, k_a))

    def check_srv(self, msg, svc):
        """The (k, template) of the SRV target, or None if the answer is not
        the zone's."""
        for rrset in msg.answer:
            if rrset.rdtype == dns.rdatatype.SRV:
                for rd in rrset:
                    t = self.q.a.get(rd.target)
                    if t is not None and t[0] == svc:
                        return t
        return None

    @staticmethod
    def check_a(msg, k):
        want = host_addr(k)
        return any(rrset.rdtype == dns.rdatatype.A and
                   any(rd.address == want for rd in rrset)
                   for rrset in msg.answer)

    async def lookup(self, loop, tr, pr, tmpl, check):
        """One query, no retry. Appends its record; returns (outcome,
        parsed message or None). check(message) says whether a NOERROR
        answer holds the zone's data; if not, it is "wrong"."""
        qid = random.getrandbits(16)
        head = struct.pack("!H", qid)
        fut = loop.create_future()
        pr.waiter = fut
        pr.expect = head
        t_send = loop.time()
        tr.sendto(head + tmpl.wire[2:])
        timer = loop.call_at(t_send + self.timeout,
                             lambda: fut.done() or fut.set_result(None))
        got = await fut
        timer.cancel()
        pr.waiter = None
        rel = t_send - self.t0
        qt = dns.rdatatype.to_text(tmpl.rdtype)
        if got is not None and got[0] - t_send > self.timeout:
            got = None      # came in after the timeout, before its timer ran
        if got is None:
            self.records.append((rel, qt, self.timeout * 1000.0,
                                 "timeout", False, -1, tmpl.text))
            return "timeout", None
        t_recv, data = got
        ms = (t_recv - t_send) * 1000.0
        if data is None:
            self.records.append((rel, qt, ms, "icmp", False, -1, tmpl.text))
            return "icmp", None
        outcome, stale, ttl, msg = classify(data, tmpl)
        if outcome == "ok" and not check(msg):
            outcome = "wrong"
        self.records.append((rel, qt, ms, outcome, stale, ttl, tmpl.text))
        return outcome, msg


def pct(sorted_values, p):
    """Nearest-rank percentile (p in 0..100) of sorted values."""
    if not sorted_values:
        return float("nan")
    rank = max(1, -(-len(sorted_values) * p // 100))
    return sorted_values[int(rank) - 1]


def write_tsv(path, records):
    """records as lookups.tsv: a header line, then one line per lookup."""
    with open(path, "w") as f:
        f.write("start_s\tqtype\tlatency_ms\toutcome\tstale\tttl\tqname\n")
        for r in records:
            f.write(f"{r[0]:.4f}\t{r[1]}\t{r[2]:.2f}\t{r[3]}\t"
                    f"{int(r[4])}\t{r[5]}\t{r[6]}\n")
