"""Upstreams the test owns, on loopback UDP.

Blackhole  reads every query and never answers, to make the daemon time out
Recorder   logs every query with its arrival time, then drops it, relays it
           to a named, or answers it as the test says
"""

import collections
import socket
import threading
import time

import dns.message
import dns.rdatatype
import dns.rrset

from . import ports


class Blackhole:
    """Bound to 127.0.0.1 on a free port; a thread reads and counts what
    arrives (so a test can tell that the daemon did try it) until stop().
    The read loop wakes every 0.2 s, so stop() takes at most that long."""

    def __init__(self, host=ports.LOOPBACK):
        ports.check_loopback(host)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"blackhole:{self.port}")
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                self.sock.recv(65535)
            except socket.timeout:
                continue
            except OSError:
                return
            self.received += 1

    def stop(self):
        self._stop.set()
        self._thread.join(2.0)
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# --- a scripted UDP upstream that records what it is asked -----------------

Asked = collections.namedtuple("Asked", "t qname qtype port")
"""One query a Recorder received: monotonic arrival time, qname as sent
(case kept, no trailing dot), qtype as text ('A', 'SOA', ...), the source
port it came from."""


def synthesize(addr, ttl):
    """A responder for Recorder.answer_with(): every A question gets one A
    record addr with TTL ttl, the zone's SOA question a made-up SOA, any
    other question NODATA (NOERROR, no records). The question is echoed as
    it came, case included."""
    def respond(q):
        r = dns.message.make_response(q)
        r.flags |= 0x0080                       # RA: a recursive resolver
        qn = q.question[0]
        if qn.rdtype == dns.rdatatype.A:
            r.answer.append(dns.rrset.from_text(qn.name, ttl, "IN", "A",
                                                addr))
        elif qn.rdtype == dns.rdatatype.SOA:
            r.answer.append(dns.rrset.from_text(
                qn.name, ttl, "IN", "SOA",
                f"ns.{qn.name} hostmaster.{qn.name} 1 3600 600 86400 {ttl}"))
        return r
    return respond


class Recorder:
    """A UDP upstream on a free loopback port that records every query it
    receives (self.asked, a list of Asked) and then, by its mode:

      drop()           answers nothing (a black hole that keeps a log)
      relay(port)      forwards the query to 127.0.0.1:port (a named) and
                       sends back its answer, unchanged; 1 s bound each
      answer_with(fn)  sends fn(query message) back, if not None

    One thread serves the socket, one query at a time; its read wakes every
    0.2 s, so stop() takes at most that long plus one relay (1 s)."""

    RELAY_TIMEOUT = 1.0

    def __init__(self, host=ports.LOOPBACK):
        ports.check_loopback(host)
        self.host = host
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.asked = []
        self._lock = threading.Lock()
        self._mode = ("drop", None)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"recorder:{self.port}")
        self._thread.start()

    # modes

    def drop(self):
        self._mode = ("drop", None)
        return self

    def relay(self, port):
        if not isinstance(port, int):
            port = port.port
        self._mode = ("relay", port)
        return self

    def answer_with(self, fn):
        self._mode = ("answer", fn)
        return self

    # what it was asked

    def log(self, since=0.0, qtype=None):
        """The queries received at or after monotonic instant since, only
        of qtype if given."""
        with self._lock:
            got = list(self.asked)
        return [a for a in got if a.t >= since and
                (qtype is None or a.qtype == qtype)]

    def names(self, since=0.0, qtype=None):
        """The qnames (folded to lower case) of log(since, qtype)."""
        return [a.qname.lower() for a in self.log(since, qtype)]

    # the thread

    def _run(self):
        while not self._stop.is_set():
            try:
                data, peer = self.sock.recvfrom(65535)
            except socket.timeout:
                continue
            except OSError:
                return
            now = time.monotonic()
            try:
                q = dns.message.from_wire(data)
                qn = q.question[0]
            except Exception:       # not a query we can read: log nothing
                continue
            with self._lock:
                self.asked.append(Asked(
                    now, qn.name.to_text(omit_final_dot=True),
                    dns.rdatatype.to_text(qn.rdtype), peer[1]))
            mode, arg = self._mode
            try:
                if mode == "relay":
                    answer = self._relay(data, arg)
                elif mode == "answer":
                    r = arg(q)
                    answer = None if r is None else r.to_wire()
                else:
                    answer = None
                if answer is not None:
                    self.sock.sendto(answer, peer)
            except OSError:
                continue

    def _relay(self, data, port):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(self.RELAY_TIMEOUT)
            s.connect((ports.check_loopback(self.host), port))
            s.send(data)
            try:
                return s.recv(65535)
            except (socket.timeout, ConnectionRefusedError):
                return None

    def stop(self):
        self._stop.set()
        self._thread.join(2.0 + self.RELAY_TIMEOUT)
        self.sock.close()

    def __repr__(self):
        return f"<Recorder 127.0.0.1:{self.port} {self._mode[0]}>"
