"""Raw DNS messages byte by byte (RFC 1035 §4.1), for input dnspython would
refuse to build, and the two-octet length framing of DNS over TCP
(RFC 1035 §4.2.2, RFC 7766 §8)."""

import collections
import socket
import struct
import time

from . import ports

QR = 0x8000
RD = 0x0100

OPCODE_QUERY = 0
OPCODE_STATUS = 2
OPCODE_UPDATE = 5

RCODE_NOERROR = 0
RCODE_FORMERR = 1
RCODE_SERVFAIL = 2
RCODE_NXDOMAIN = 3
RCODE_NOTIMP = 4
RCODE_REFUSED = 5

TYPE_A = 1
CLASS_IN = 1

Header = collections.namedtuple(
    "Header", "id qr opcode aa tc rd ra rcode qdcount ancount nscount arcount")


def header(msg_id, qr=False, opcode=OPCODE_QUERY, rd=True, qdcount=1,
           ancount=0, nscount=0, arcount=0):
    """The 12-octet header."""
    flags = (QR if qr else 0) | ((opcode & 0xF) << 11) | (RD if rd else 0)
    return struct.pack("!6H", msg_id, flags, qdcount, ancount, nscount,
                       arcount)


def name(text):
    """An uncompressed name in wire format; text is dot-separated labels."""
    out = b""
    for label in text.rstrip(".").split("."):
        if label:
            raw = label.encode("ascii")
            out += bytes([len(raw)]) + raw
    return out + b"\x00"


def question(qname, qtype=TYPE_A, qclass=CLASS_IN):
    wire = qname if isinstance(qname, bytes) else name(qname)
    return wire + struct.pack("!2H", qtype, qclass)


def query(msg_id, qname, qtype=TYPE_A, **kw):
    """A well-formed one-question query (kw go to header())."""
    return header(msg_id, **kw) + question(qname, qtype)


def parse_header(wire):
    """The header of wire, or None if wire is shorter than 12 octets."""
    if len(wire) < 12:
        return None
    msg_id, flags, qd, an, ns, ar = struct.unpack("!6H", wire[:12])
    return Header(msg_id, bool(flags & QR), (flags >> 11) & 0xF,
                  bool(flags & 0x0400), bool(flags & 0x0200),
                  bool(flags & RD), bool(flags & 0x0080), flags & 0xF,
                  qd, an, ns, ar)


# --- TCP framing ---------------------------------------------------------

def frame(msg, length=None):
    """msg behind its two-octet length; length overrides the true one (to
    build a lying prefix)."""
    n = len(msg) if length is None else length
    return struct.pack("!H", n) + msg


def tcp_connect(port, host=ports.LOOPBACK, timeout=3.0, source=None):
    """A connection to host:port, from the loopback address source if
    given."""
    ports.check_loopback(host)
    bind = None if source is None else (ports.check_loopback(source), 0)
    return socket.create_connection((host, port), timeout=timeout,
                                    source_address=bind)


class TcpReader:
    """Read length-prefixed messages from a connected socket, bounded by a
    deadline. closed is set once the peer has closed (EOF or reset)."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.closed = False

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            self.closed = True
            return False
        if not data:
            self.closed = True
            return False
        self.buf += data
        return True

    def read(self, timeout):
        """The next whole message, or None on timeout or close."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buf) >= 2:
                n = struct.unpack("!H", self.buf[:2])[0]
                if len(self.buf) >= 2 + n:
                    msg = self.buf[2:2 + n]
                    self.buf = self.buf[2 + n:]
                    return msg
            if self.closed or not self._fill(deadline):
                return None

    def read_all(self, timeout):
        """Every message that arrives within timeout s (or until close)."""
        deadline = time.monotonic() + timeout
        out = []
        while True:
            msg = self.read(max(0.0, deadline - time.monotonic()))
            if msg is None:
                return out
            out.append(msg)

    def read_all_n(self, n, timeout):
        """Up to n messages, stopping early once n arrived."""
        deadline = time.monotonic() + timeout
        out = []
        while len(out) < n:
            msg = self.read(max(0.0, deadline - time.monotonic()))
            if msg is None:
                break
            out.append(msg)
        return out

    def wait_closed(self, timeout):
        """True if the peer closed within timeout s; messages read meanwhile
        are returned in the second element."""
        msgs = self.read_all(timeout)
        return self.closed, msgs


# --- malformed queries ---------------------------------------------------

Case = collections.namedtuple("Case", "name wire expect")
"""expect: 'formerr' (FORMERR, same ID), 'notimp' (NOTIMP, same ID) or
'none' (no answer at all)."""


def malformed_cases(qname="alive.example.test"):
    """The malformed UDP queries and what RFC 1035 / RFC 9619 want for each.

    A server can answer only what has a readable 12-octet header and is a
    query (QR=0): with FORMERR (RFC 1035 §4.1.1 rcode 1) when the question
    cannot be parsed or QDCOUNT != 1 (RFC 9619), with NOTIMP (rcode 4) for an
    opcode it does not implement. Less than a header, or a response (QR=1),
    gets nothing: answering a response could start a loop between servers.
    """
    good = question(qname)
    ok_name = name(qname)
    return [
        Case("short-header-5-octets", header(0x1001)[:5], "none"),
        Case("header-only-qdcount-1", header(0x1002), "formerr"),
        # a label of 63 octets announced, 3 present, then the message ends
        Case("label-runs-past-end", header(0x1003) + b"\x3fabc", "formerr"),
        # 64 = 0b01000000: not a length (max 63, RFC 1035 §2.3.4) but the
        # reserved extended-label type (RFC 6891 §5)
        Case("label-longer-than-63",
             header(0x1004) + question(b"\x40" + b"a" * 64 + b"\x00"),
             "formerr"),
        # 5 labels of 63 octets: 5 * (1 + 63) + 1 = 321 > 255 octets
        Case("qname-longer-than-255",
             header(0x1005) + question(
                 b"".join(b"\x3f" + b"a" * 63 for _ in range(5)) + b"\x00"),
             "formerr"),
        Case("question-cut-after-qname", header(0x1006) + ok_name,
             "formerr"),
        # "www" then a pointer to offset 4, inside the header: a question
        # has no earlier name to point to (RFC 1035 §4.1.4)
        Case("compression-pointer-in-qname",
             header(0x1007) + question(b"\x03www\xc0\x04"), "formerr"),
        # a pointer at offset 12 to offset 12: itself
        Case("compression-loop", header(0x1008) + question(b"\xc0\x0c"),
             "formerr"),
        Case("qdcount-2", header(0x1009, qdcount=2) + good + good,
             "formerr"),
        Case("qr-set-response-as-query", header(0x100a, qr=True) + good,
             "none"),
        Case("opcode-status", header(0x100b, opcode=OPCODE_STATUS) + good,
             "notimp"),
        Case("opcode-update", header(0x100c, opcode=OPCODE_UPDATE) + good,
             "notimp"),
    ]


def garbage(rng, count=200):
    """count random packets from rng (a random.Random with a fixed seed):
    even ones all random, odd ones a plausible query header (QR=0, QUERY,
    QDCOUNT=1, random other counts) followed by random octets, so that the
    parser gets past the header too."""
    out = []
    for i in range(count):
        if i % 2 == 0:
            out.append(bytes(rng.getrandbits(8)
                             for _ in range(rng.randrange(0, 600))))
        else:
            h = header(rng.getrandbits(16), rd=bool(rng.getrandbits(1)),
                       ancount=rng.choice([0, 0, 1, 0xffff]),
                       nscount=rng.choice([0, 0, 2]),
                       arcount=rng.choice([0, 1, 1, 3]))
            out.append(h + bytes(rng.getrandbits(8)
                                 for _ in range(rng.randrange(0, 300))))
    return out
