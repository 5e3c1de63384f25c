"""Queries over UDP and TCP with dnspython, every wait bounded.

Each exchange is recorded in TRANSCRIPT (the conftest clears it per test and
prints it when the test fails), so a failure shows the packets received.
"""

import socket
import time

import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdatatype

from . import ports, wire

TRANSCRIPT = []
_TRANSCRIPT_MAX = 40


class NoAnswer(AssertionError):
    """No matching answer within the timeout."""


class Reply:
    """One answer: msg (dns.message.Message), wire (bytes), and the
    monotonic instants the query was sent and the answer received, which
    bound the age of a cached entry (see ttl.cache_age)."""

    def __init__(self, msg, raw, sent, received, transport):
        self.msg = msg
        self.wire = raw
        self.sent = sent
        self.received = received
        self.transport = transport

    @property
    def rcode(self):
        return self.msg.rcode()

    @property
    def tc(self):
        return bool(self.msg.flags & dns.flags.TC)

    def text(self):
        return self.msg.to_text()

    def __repr__(self):
        return f"<Reply {self.transport}\n{self.text()}\n>"


def _record(kind, what):
    TRANSCRIPT.append(f"--- {kind}\n{what}")
    del TRANSCRIPT[:-_TRANSCRIPT_MAX]


def make_query(qname, rdtype="A", *, edns=True, payload=1232, msg_id=None,
               rd=True):
    """A query; edns=False sends no OPT record (RFC 6891), so the classic
    512-octet UDP limit of RFC 1035 §4.2.1 applies to the answer."""
    kw = {}
    if msg_id is not None:
        kw["id"] = msg_id
    if edns:
        q = dns.message.make_query(qname, rdtype, use_edns=0, payload=payload,
                                   **kw)
    else:
        q = dns.message.make_query(qname, rdtype, use_edns=False, **kw)
    if not rd:
        q.flags &= ~dns.flags.RD
    return q


def _udp_socket(port, host, source=None):
    """source: the loopback address to send from (the kernel's choice if
    None), to be another client than 127.0.0.1."""
    ports.check_loopback(host)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if source is not None:
        s.bind((ports.check_loopback(source), 0))
    # connect(): the kernel keeps datagrams from anyone else out, and an
    # ICMP port unreachable becomes ConnectionRefusedError
    s.connect((host, port))
    return s


def udp_wire(port, data, timeout=2.0, msg_id=None, host=ports.LOOPBACK):
    """Send raw data over UDP; return the first datagram that comes back
    within timeout s (with ID msg_id if given), or None."""
    with _udp_socket(port, host) as s:
        s.send(data)
        _record("sent raw UDP", data.hex())
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            s.settimeout(left)
            try:
                got = s.recv(65535)
            except socket.timeout:
                return None
            h = wire.parse_header(got)
            if msg_id is None or (h is not None and h.id == msg_id):
                _record("received raw UDP", got.hex())
                return got


def exchange_udp(port, q, timeout=3.0, host=ports.LOOPBACK, source=None):
    """Send query q over UDP once (from source, see _udp_socket); return
    the Reply with q's ID. Raises NoAnswer after timeout s."""
    data = q.to_wire()
    with _udp_socket(port, host, source) as s:
        _record(f"UDP query to {port}", q.to_text())
        sent = time.monotonic()
        s.send(data)
        deadline = sent + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise NoAnswer(f"no UDP answer from {host}:{port} within "
                               f"{timeout}s to\n{q.to_text()}")
            s.settimeout(left)
            try:
                got = s.recv(65535)
            except socket.timeout:
                continue
            received = time.monotonic()
            h = wire.parse_header(got)
            if h is None or h.id != q.id or not h.qr:
                _record("ignored UDP datagram", got.hex())
                continue
            msg = dns.message.from_wire(got)
            _record(f"UDP answer from {port} "
                    f"({(received - sent) * 1000:.1f} ms, {len(got)} octets)",
                    msg.to_text())
            return Reply(msg, got, sent, received, "udp")


def exchange_tcp(port, q, timeout=3.0, host=ports.LOOPBACK, source=None):
    """Send query q over a new TCP connection (from source, as
    exchange_udp); return its Reply. Raises NoAnswer after timeout s."""
    sent = time.monotonic()
    with wire.tcp_connect(port, host, timeout, source) as s:
        _record(f"TCP query to {port}", q.to_text())
        s.sendall(wire.frame(q.to_wire()))
        reader = wire.TcpReader(s)
        while True:
            got = reader.read(max(0.0, sent + timeout - time.monotonic()))
            if got is None:
                raise NoAnswer(f"no TCP answer from {host}:{port} within "
                               f"{timeout}s (closed={reader.closed}) to\n"
                               f"{q.to_text()}")
            received = time.monotonic()
            h = wire.parse_header(got)
            if h is None or h.id != q.id:
                _record("ignored TCP message", got.hex())
                continue
            msg = dns.message.from_wire(got)
            _record(f"TCP answer from {port} "
                    f"({(received - sent) * 1000:.1f} ms, {len(got)} octets)",
                    msg.to_text())
            return Reply(msg, got, sent, received, "tcp")


def udp(port, qname, rdtype="A", *, edns=True, payload=1232, timeout=3.0,
        rd=True):
    return exchange_udp(port, make_query(qname, rdtype, edns=edns,
                                         payload=payload, rd=rd), timeout)


def tcp(port, qname, rdtype="A", *, edns=True, payload=1232, timeout=3.0,
        rd=True):
    return exchange_tcp(port, make_query(qname, rdtype, edns=edns,
                                         payload=payload, rd=rd), timeout)


def find(msg, section, qname, rdtype):
    """The RRset of qname/rdtype in msg's section ('answer', 'authority',
    'additional'), or None."""
    name = dns.name.from_text(qname) if isinstance(qname, str) else qname
    rdtype = dns.rdatatype.from_text(rdtype) if isinstance(rdtype, str) \
        else rdtype
    for rrset in getattr(msg, section):
        if rrset.name == name and rrset.rdtype == rdtype:
            return rrset
    return None


def addresses(reply, qname=None):
    """The A and AAAA addresses in reply's answer (of qname if given)."""
    out = set()
    for rrset in reply.msg.answer:
        if rrset.rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA) and (
                qname is None or rrset.name == dns.name.from_text(qname)):
            out |= {rd.address for rd in rrset}
    return out


def question_wire(raw):
    """The question section of raw (one question, uncompressed qname) as
    octets, exactly as sent: what the qname case checks compare."""
    i = 12
    while raw[i] != 0:
        if raw[i] & 0xC0:
            raise ValueError("compressed qname in question")
        i += 1 + raw[i]
    return raw[12:i + 1 + 4]

