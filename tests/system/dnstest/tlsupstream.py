"""Upstreams of DNS over TLS (RFC 7858) the test owns, on loopback TCP.

TlsUpstream  a scripted DoT server (Python's ssl, the test CA's certificate),
             its A queries scripted (anything else, such as the daemon's
             loop probe, answered NXDOMAIN at once): mode "reverse" waits on each connection for `batch` queries and
             answers them in reverse order (out of order, RFC 7766
             §6.2.1.1); mode "close_first" reads `batch` queries on its first
             connection and closes it unanswered, then answers every query
             of later connections at once; mode "silent" takes the
             handshake and every query, and answers none
TcpRelay     relays TCP connections to a port (a named's DoT listener) until
             black_hole(): then it cuts the relayed ones and accepts new
             ones without ever reading them, so that a TLS handshake there
             never completes
UdpWatch     a UDP socket on a port, counting every datagram: what a daemon
             that fell back to clear text would send to
"""

import socket
import ssl
import struct
import threading
import time

import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset

from . import ports


def address_of(qname):
    """The address TlsUpstream answers for qname: 192.0.2.N for a first
    label nN (any case), 192.0.2.1 otherwise."""
    first = qname.split(".")[0].lower()
    n = int(first[1:]) if first[:1] == "n" and first[1:].isdigit() else 1
    return f"192.0.2.{n}"


def _read_exact(conn, n):
    out = b""
    while len(out) < n:
        chunk = conn.recv(n - len(out))
        if not chunk:
            return None
        out += chunk
    return out


def _is_a(raw):
    return dns.message.from_wire(raw).question[0].rdtype == \
        dns.rdatatype.A


def _answer(raw):
    """A 192.0.2.N for an A query; NXDOMAIN for anything else (the
    daemon's loop probe, a TXT of a random name)."""
    q = dns.message.from_wire(raw)
    r = dns.message.make_response(q)
    qname = q.question[0].name
    if q.question[0].rdtype != dns.rdatatype.A:
        r.set_rcode(dns.rcode.NXDOMAIN)
        return r.to_wire()
    r.answer.append(dns.rrset.from_text(qname, 300, "IN", "A",
                                        address_of(qname.to_text())))
    return r.to_wire()


class TlsUpstream:
    """On a free loopback port until stop() (at most lifetime s). Records
    every A query: queries is a list of (connection number from 0, raw)."""

    def __init__(self, cert, key, mode="reverse", batch=3, lifetime=120.0):
        self.port = ports.free_port()
        self.mode = mode
        self.batch = batch
        self.queries = []
        self.connections = 0
        self._conns = []
        self._lock = threading.Lock()
        self._ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._ctx.load_cert_chain(str(cert), str(key))
        self._ctx.set_alpn_protocols(["dot"])
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((ports.LOOPBACK, self.port))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._end = time.monotonic() + lifetime
        self._threads = []
        t = threading.Thread(target=self._accept, daemon=True,
                             name=f"tlsupstream:{self.port}")
        t.start()
        self._threads.append(t)

    def _accept(self):
        while not self._stop.is_set() and time.monotonic() < self._end:
            try:
                raw, _ = self._sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                number = self.connections
                self.connections += 1
            t = threading.Thread(target=self._serve, args=(raw, number),
                                 daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, raw, number):
        raw.settimeout(10.0)
        with self._lock:
            self._conns.append(raw)
        try:
            conn = self._ctx.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()
            return
        try:
            self._session(conn, number)
        except (ssl.SSLError, OSError):
            pass
        finally:
            conn.close()

    def _read_query(self, conn, number):
        """The next A query on conn (recorded), anything else answered at
        once; None at its end."""
        while True:
            head = _read_exact(conn, 2)
            if head is None:
                return None
            q = _read_exact(conn, struct.unpack("!H", head)[0])
            if q is None:
                return None
            if _is_a(q):
                with self._lock:
                    self.queries.append((number, q))
                return q
            a = _answer(q)
            conn.sendall(struct.pack("!H", len(a)) + a)

    def _session(self, conn, number):
        while not self._stop.is_set():
            held = []
            want = self.batch if self.mode == "reverse" or (
                self.mode == "close_first" and number == 0) else 1
            while len(held) < want:
                q = self._read_query(conn, number)
                if q is None:
                    return
                held.append(q)
            if self.mode == "close_first" and number == 0:
                return          # closed with every query unanswered
            if self.mode == "silent":
                continue        # read, never answered
            for q in reversed(held):
                a = _answer(q)
                conn.sendall(struct.pack("!H", len(a)) + a)

    def stop(self):
        self._stop.set()
        self._sock.close()
        with self._lock:
            for raw in self._conns:
                try:
                    raw.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        for t in self._threads:
            t.join(timeout=12)


class TcpRelay:
    """On a free loopback port until stop() (at most lifetime s): relays
    each connection to target_port, until black_hole()."""

    def __init__(self, target_port, lifetime=120.0):
        self.target = target_port
        self.port = ports.free_port()
        self.holed = threading.Event()
        self._stop = threading.Event()
        self._end = time.monotonic() + lifetime
        self._lock = threading.Lock()
        self._live = []         # sockets of relayed connections
        self._held = []         # accepted after black_hole(), never read
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((ports.LOOPBACK, self.port))
        self._sock.listen(64)
        self._sock.settimeout(0.2)
        self._threads = [threading.Thread(target=self._accept, daemon=True,
                                          name=f"tcprelay:{self.port}")]
        self._threads[0].start()

    def _accept(self):
        while not self._stop.is_set() and time.monotonic() < self._end:
            try:
                a, _ = self._sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            if self.holed.is_set():
                self._held.append(a)
                continue
            try:
                b = socket.create_connection(
                    (ports.check_loopback(ports.LOOPBACK), self.target), 2)
            except OSError:
                a.close()
                continue
            with self._lock:
                self._live += [a, b]
            for src, dst in ((a, b), (b, a)):
                t = threading.Thread(target=self._pump, args=(src, dst),
                                     daemon=True)
                t.start()
                self._threads.append(t)

    def _pump(self, src, dst):
        src.settimeout(0.2)
        while not self._stop.is_set() and not self.holed.is_set():
            try:
                data = src.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                break
            if not data:
                break
            try:
                dst.sendall(data)
            except OSError:
                break
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def black_hole(self):
        """From now on: relayed connections cut, new ones held unread."""
        self.holed.set()

    def stop(self):
        self._stop.set()
        self._sock.close()
        for t in self._threads:
            t.join(timeout=2)
        with self._lock:
            for s in self._live + self._held:
                s.close()


class UdpWatch:
    """A UDP socket bound to 127.0.0.1:port; count() says how many
    datagrams came to it so far."""

    def __init__(self, port):
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind((ports.check_loopback(ports.LOOPBACK), port))
        self._sock.setblocking(False)
        self.received = 0

    def count(self):
        while True:
            try:
                self._sock.recv(65535)
            except BlockingIOError:
                return self.received
            self.received += 1

    def stop(self):
        self._sock.close()
