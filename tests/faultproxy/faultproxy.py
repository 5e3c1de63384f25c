#!/usr/bin/python3
"""faultproxy: a DNS proxy on loopback that forwards queries to a real
upstream over UDP and TCP and injects faults on the way (delay, loss,
SERVFAIL, REFUSED, truncation, spoofed answers, lost 0x20 case, outage,
no EDNS).

    faultproxy.py --listen 127.0.0.1:0 --upstream 127.0.0.1:5300 \
        [fault flags] [--schedule FILE] [--control PATH] [--seed N]

Faults in force for a query are, first that applies: those set through the
control socket ({"set": {...}}), those of the schedule phase running now,
those of the command-line flags. README.md beside this file gives the
command line, the control protocol and the schedule format; the code below
is the reference.

What happens to one query, in this order (faults as they were when the
query arrived, drawn from one seeded random stream):

    not a query with one readable question -> dropped  (malformed)
    outage                                -> dropped  (dropped_outage)
    loss                                  -> dropped  (dropped_loss)
    no_edns, and the query has an OPT     -> FORMERR without OPT, same ID and
                                             question (RFC 6891 §7)
    servfail / refused (one draw)         -> that rcode, same ID and question
    servfail_every_other                  -> SERVFAIL to the 1st, 3rd, 5th...
                                             query of each question, the
                                             others go on: a flaky upstream
                                             without chance
    otherwise forwarded to the upstream (UDP over one shared socket with
    remapped IDs, TCP over one upstream connection per client connection),
    its answer matched by remapped ID and question, then
    truncate (UDP only)                   -> header + question, TC=1
    spoof (UDP only)                      -> a forged datagram just before
    lowercase (every answer)              -> qname of the question lowered
    delay (every answer)                  -> sent after N(mean, stddev) ms

Only loopback may ever be a target: the listen and upstream addresses must
be literal loopback addresses (else exit status 2), and datagrams from any
other source are dropped unanswered. The proxy never sends on its own: each
query causes at most one answer (two datagrams with spoof). Counters are
printed as one JSON object on stdout at exit (SIGTERM, SIGINT, --lifetime).
"""

import argparse
import asyncio
import ipaddress
import json
import math
import os
import random
import signal
import socket
import stat
import struct
import sys
import time

PROG = "faultproxy"

# --- faults ----------------------------------------------------------------

PROBABILITIES = ("loss", "servfail", "refused", "truncate", "spoof")
DELAYS = ("delay_mean", "delay_stddev")
SWITCHES = ("lowercase", "outage", "no_edns", "servfail_every_other")
# Questions whose queries servfail_every_other counts: past this many, the
# counts start again (the proxy's memory is bounded).
EVERY_OTHER_MAX = 10000
SPOOF_KINDS = ("id", "question", "case", "mixed")

COUNTERS = (
    "received_udp", "received_tcp", "malformed", "non_loopback_client",
    "dropped_outage", "dropped_loss", "formerr_edns", "servfail",
    "refused", "forwarded",
    "upstream_answers", "upstream_errors", "upstream_timeouts",
    "truncated", "spoofed", "lowercased", "delayed", "delay_ms_total",
    "answered", "client_gone", "tcp_connections", "tcp_closed_outage",
)

# The per-second timeline ({"timeline": null}): for each of its series,
# how many queries of that fate arrived in second s of the proxy's clock
# (0 = when it started listening), kept for the first TIMELINE_MAX_S s
# only. Counters that feed a series, and the series they feed:
TIMELINE_OF = {
    "received_udp": "received", "received_tcp": "received",
    "forwarded": "forwarded", "servfail": "servfail", "refused": "refused",
    "dropped_outage": "dropped_outage", "dropped_loss": "dropped_loss",
}
TIMELINE = ("received", "forwarded", "servfail", "refused",
            "dropped_outage", "dropped_loss")
TIMELINE_MAX_S = 86400


class ConfigError(ValueError):
    """A bad flag, fault setting or schedule: the message says which."""


def _number(value, what):
    # bool is an int to Python, but `true` is no probability
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value):
        raise ConfigError(f"{what}: {value!r} is not a finite number")
    return float(value)


class Faults:
    """One complete fault setting. A key left out means no such fault."""

    __slots__ = PROBABILITIES + DELAYS + SWITCHES + ("spoof_kind",)

    def __init__(self):
        for k in PROBABILITIES + DELAYS:
            setattr(self, k, 0.0)
        for k in SWITCHES:
            setattr(self, k, False)
        self.spoof_kind = "id"

    @classmethod
    def from_dict(cls, d, what="faults"):
        """Faults from a JSON object; ConfigError names the bad key."""
        if not isinstance(d, dict):
            raise ConfigError(f"{what}: expected an object, got {d!r}")
        f = cls()
        for key, value in d.items():
            where = f"{what}: {key}"
            if key in PROBABILITIES:
                p = _number(value, where)
                if not 0.0 <= p <= 1.0:
                    raise ConfigError(f"{where}: {p} is not in [0, 1]")
                setattr(f, key, p)
            elif key in DELAYS:
                ms = _number(value, where)
                if ms < 0:
                    raise ConfigError(f"{where}: {ms} ms is negative")
                setattr(f, key, ms)
            elif key in SWITCHES:
                if not isinstance(value, bool):
                    raise ConfigError(f"{where}: {value!r} is not true or "
                                      f"false")
                setattr(f, key, value)
            elif key == "spoof_kind":
                if value not in SPOOF_KINDS:
                    raise ConfigError(f"{where}: {value!r} is not one of "
                                      f"{', '.join(SPOOF_KINDS)}")
                f.spoof_kind = value
            else:
                raise ConfigError(f"{what}: unknown fault {key!r} (known: "
                                  f"{', '.join(cls.__slots__)})")
        if f.servfail + f.refused > 1.0:
            raise ConfigError(f"{what}: servfail + refused = "
                              f"{f.servfail + f.refused} > 1")
        return f

    def to_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __repr__(self):
        on = {k: v for k, v in self.to_dict().items()
              if v and k != "spoof_kind"}
        if self.spoof:
            on["spoof_kind"] = self.spoof_kind
        return json.dumps(on, sort_keys=True) if on else "{} (no faults)"


NO_FAULTS = Faults()

# --- schedule --------------------------------------------------------------


class Phase:
    __slots__ = ("index", "name", "start", "end", "faults")

    def __init__(self, index, name, start, end, faults):
        self.index = index
        self.name = name
        self.start = start
        self.end = end          # math.inf: until the proxy stops
        self.faults = faults

    def to_dict(self):
        return {"index": self.index, "name": self.name, "start": self.start,
                "end": None if self.end == math.inf else self.end,
                "faults": self.faults.to_dict()}


class Schedule:
    """Phases in time order, each [start, end) seconds after the proxy is
    ready; outside every phase the flags apply. With repeat, the whole
    timeline (0 to the last phase's end) starts over when it ends."""

    TOP_KEYS = {"phases", "repeat", "description"}
    PHASE_KEYS = {"name", "start", "duration", "faults", "description"}

    def __init__(self, phases, repeat=False):
        self.phases = phases
        self.repeat = repeat
        self.cycle = phases[-1].end if phases else 0.0

    @classmethod
    def from_json(cls, doc, what="schedule"):
        if not isinstance(doc, dict):
            raise ConfigError(f"{what}: expected an object with \"phases\"")
        for key in doc:
            if key not in cls.TOP_KEYS:
                raise ConfigError(f"{what}: unknown key {key!r} (known: "
                                  f"{', '.join(sorted(cls.TOP_KEYS))})")
        raw = doc.get("phases")
        if not isinstance(raw, list) or not raw:
            raise ConfigError(f"{what}: \"phases\" must be a non-empty list")
        repeat = doc.get("repeat", False)
        if not isinstance(repeat, bool):
            raise ConfigError(f"{what}: repeat: {repeat!r} is not true or "
                              f"false")
        phases = []
        prev_end = 0.0
        for i, p in enumerate(raw):
            where = f"{what}: phase {i}"
            if not isinstance(p, dict):
                raise ConfigError(f"{where}: expected an object")
            for key in p:
                if key not in cls.PHASE_KEYS:
                    raise ConfigError(
                        f"{where}: unknown key {key!r} (known: "
                        f"{', '.join(sorted(cls.PHASE_KEYS))})")
            name = p.get("name", f"phase{i}")
            if not isinstance(name, str):
                raise ConfigError(f"{where}: name: {name!r} is not a string")
            if prev_end == math.inf:
                raise ConfigError(f"{where}: follows a phase without a "
                                  f"duration, which never ends")
            start = p.get("start", "after previous")
            if start == "after previous":
                start = prev_end
            else:
                start = _number(start, f"{where}: start")
                if start < prev_end:
                    raise ConfigError(
                        f"{where}: start {start:g} s is before the end of "
                        f"the previous phase ({prev_end:g} s): phases must "
                        f"be in order and must not overlap")
            duration = p.get("duration")
            if duration is None:
                if repeat:
                    raise ConfigError(f"{where}: a repeating schedule needs "
                                      f"a duration for every phase")
                end = math.inf
            else:
                duration = _number(duration, f"{where}: duration")
                if duration <= 0:
                    raise ConfigError(f"{where}: duration {duration:g} s is "
                                      f"not positive")
                end = start + duration
            if "faults" not in p:
                raise ConfigError(f"{where}: no \"faults\" (use {{}} for a "
                                  f"phase without faults)")
            faults = Faults.from_dict(p["faults"], f"{where}: faults")
            phases.append(Phase(i, name, start, end, faults))
            prev_end = end
        return cls(phases, repeat)

    @classmethod
    def load(cls, path):
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except OSError as e:
            raise ConfigError(f"{path}: {e.strerror}") from e
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}:{e.lineno}: {e.msg}") from e
        return cls.from_json(doc, path)

    def at(self, t):
        """The phase running t s after the start, or None."""
        if self.repeat and self.cycle > 0:
            t = t % self.cycle
        for p in self.phases:
            if t < p.start:
                return None
            if t < p.end:
                return p
        return None

    def to_dict(self):
        return {"repeat": self.repeat,
                "phases": [p.to_dict() for p in self.phases]}


# --- addresses -------------------------------------------------------------


def parse_hostport(text, what):
    """'127.0.0.1:53' or '[::1]:53' -> (family, host, port), loopback
    literals only: a name would need resolving, and any other address is
    somebody else's network."""
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
    else:
        host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise ConfigError(f"{what}: {text!r} is not HOST:PORT "
                          f"(or [HOST]:PORT)")
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        raise ConfigError(f"{what}: {host!r} is not a literal IP address "
                          f"(names are not resolved)") from None
    if not addr.is_loopback:
        raise ConfigError(f"{what}: {host} is not a loopback address; only "
                          f"127.0.0.0/8 and ::1 may be used")
    if not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"{what}: bad port {port!r}")
    family = socket.AF_INET6 if addr.version == 6 else socket.AF_INET
    return family, str(addr), int(port)


def is_loopback_peer(addr):
    host = addr[0]
    return host.startswith("127.") or host == "::1"


def fmt_hostport(host, port):
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# --- wire format (RFC 1035 §4.1) -------------------------------------------

QR = 0x80           # in octet 2 of the header
TC = 0x02           # in octet 2
RCODE_FORMERR = 1
RCODE_SERVFAIL = 2
RCODE_REFUSED = 5
TYPE_OPT = 41
TYPE_A = 1
TYPE_AAAA = 28
CLASS_IN = 1
FORGED_A = bytes([192, 0, 2, 66])                   # RFC 5737 TEST-NET-1
FORGED_AAAA = bytes.fromhex("20010db8000000000000000000000066")


def question_end(msg):
    """Offset just past the only question of msg (QDCOUNT must be 1, the
    qname uncompressed), or -1."""
    if len(msg) < 12 or msg[4] != 0 or msg[5] != 1:
        return -1
    end = skip_name(msg, 12, pointers=False)
    return end + 4 if 0 <= end <= len(msg) - 4 else -1


def skip_name(msg, i, pointers=True):
    """Offset just past the name at i, or -1 (also for a compression
    pointer, unless pointers)."""
    n = len(msg)
    while i < n:
        length = msg[i]
        if length == 0:
            return i + 1
        if length & 0xC0 == 0xC0 and pointers:
            return i + 2 if i + 2 <= n else -1
        if length & 0xC0:
            return -1
        i += 1 + length
    return -1


def has_opt(msg, qend):
    """True if a record after the question of msg (question end qend) is
    an OPT (RFC 6891 §6.1.1); a record cut short ends the search."""
    count = sum(int.from_bytes(msg[k:k + 2], "big") for k in (6, 8, 10))
    i = qend
    for _ in range(count):
        i = skip_name(msg, i)
        if i < 0 or i + 10 > len(msg):
            return False
        if int.from_bytes(msg[i:i + 2], "big") == TYPE_OPT:
            return True
        i += 10 + int.from_bytes(msg[i + 8:i + 10], "big")
    return False


def error_reply(query, qend, rcode):
    """Header + question of query with QR, RA and rcode; opcode, RD and CD
    kept; no records, no OPT."""
    flags = (query[2] & 0x79) | QR            # opcode, RD
    low = 0x80 | (query[3] & 0x10) | rcode    # RA, CD, rcode
    return (query[:2] + bytes([flags, low]) + b"\x00\x01" + bytes(6) +
            query[12:qend])


def truncated(answer, qend):
    """answer's header with TC=1 and no records, then its question."""
    return (answer[:2] + bytes([answer[2] | TC, answer[3]]) + b"\x00\x01" +
            bytes(6) + answer[12:qend])


def lowercased(answer, qend):
    """answer with the question's qname in lower case. Length octets are
    at most 63, below 'A' (65), so lowering the whole wire name is safe."""
    return answer[:12] + answer[12:qend - 4].lower() + answer[qend - 4:]


def swapcase_name(wire_name):
    out = bytearray(wire_name)
    i = 0
    while out[i]:
        for j in range(i + 1, i + 1 + out[i]):
            c = out[j]
            if 65 <= c <= 90 or 97 <= c <= 122:
                out[j] = c ^ 0x20
        i += 1 + out[i]
    return bytes(out)


def forged_answer(client_id, question, kind, rng):
    """A forged answer to question with bogus data (A 192.0.2.66, or AAAA
    2001:db8::66 for an AAAA question), which a client must ignore:
    kind 'id' has a wrong ID, 'question' the right ID and another qname,
    'case' the right ID and the qname with every letter's case flipped
    (what an off-path spoofer who guessed the ID but not the 0x20 bits
    would send), 'mixed' one of those at random."""
    if kind == "mixed":
        kind = rng.choice(("id", "question", "case"))
    qname, qtail = question[:-4], question[-4:]
    qtype = struct.unpack("!H", qtail[:2])[0]
    msg_id = client_id
    if kind == "case":
        other = swapcase_name(qname)
        kind = "case" if other != qname else "question"
        qname = other
    if kind == "question":
        label = b"\x09x-spoofed"
        if len(qname) + len(label) <= 255:
            qname = label + qname
        else:  # no room for a label: ask for another type instead
            qtail = struct.pack("!H", 16 if qtype != 16 else 1) + qtail[2:]
    elif kind == "id":
        msg_id = (client_id + 1 + rng.randrange(65535)) % 65536
    if qtype == TYPE_AAAA:
        rr_type, rdata = TYPE_AAAA, FORGED_AAAA
    else:
        rr_type, rdata = TYPE_A, FORGED_A
    header = struct.pack("!6H", msg_id, 0x8580, 1, 1, 0, 0)  # QR AA RD RA
    rr = struct.pack("!HHHIH", 0xC00C, rr_type, CLASS_IN, 300, len(rdata))
    return header + qname + qtail + rr + rdata


# --- upstream ID remapping ---------------------------------------------------


class Pending:
    """Queries sent upstream and not yet answered, by remapped ID. Entries
    are kept in send order, so those past their deadline are at the front.
    An entry is (client ID octets, question octets, UDP client address or
    None, Faults, deadline)."""

    def __init__(self):
        self.by_id = {}
        self.next_id = 1

    def add(self, entry):
        """The remapped ID for entry, or None when all 65536 are in use."""
        if len(self.by_id) >= 65536:
            return None
        while self.next_id in self.by_id:
            self.next_id = (self.next_id + 1) & 0xFFFF
        uid = self.next_id
        self.next_id = (uid + 1) & 0xFFFF
        self.by_id[uid] = entry
        return uid

    def take(self, answer):
        """The entry answer belongs to (same ID, and same question octets
        unless the answer has no question), removed; else None."""
        uid = (answer[0] << 8) | answer[1]
        e = self.by_id.get(uid)
        if e is None:
            return None
        q = e[1]
        if answer[4] or answer[5]:
            if answer[4] or answer[5] != 1 or answer[12:12 + len(q)] != q:
                return None
        del self.by_id[uid]
        return e

    def expire(self, now):
        """Drop entries past their deadline; return how many."""
        old = []
        for uid, e in self.by_id.items():
            if e[4] > now:
                break
            old.append(uid)
        for uid in old:
            del self.by_id[uid]
        return len(old)

    def clear(self):
        n = len(self.by_id)
        self.by_id.clear()
        return n


# --- the proxy -------------------------------------------------------------


def log(text):
    print(f"{PROG}: {time.strftime('%H:%M:%S')} {text}", file=sys.stderr,
          flush=True)


class Proxy:
    def __init__(self, upstream, base, schedule, rng, upstream_timeout):
        self.up_family, self.up_host, self.up_port = upstream
        self.base = base
        self.schedule = schedule
        self.override = None
        self.rng = rng
        self.upstream_timeout = upstream_timeout
        self.c = dict.fromkeys(COUNTERS, 0)
        self.c["delay_ms_total"] = 0.0
        self.t0 = time.monotonic()
        self.timeline = {k: [] for k in TIMELINE}
        self.loop = None
        self.udp = None           # transport of the listening UDP socket
        self.up_udp = None        # transport of the upstream UDP socket
        self.pending = Pending()
        self.tcp_clients = set()
        self.last_phase = None
        self.every_other = {}     # question (qname folded) -> queries

    # which faults apply now

    def current(self):
        if self.override is not None:
            return self.override
        if self.schedule is not None:
            phase = self.schedule.at(time.monotonic() - self.t0)
            if phase is not self.last_phase:
                self._phase_changed(phase)
            if phase is not None:
                return phase.faults
        return self.base

    def _phase_changed(self, phase):
        self.last_phase = phase
        if phase is None:
            log(f"schedule: no phase, flags apply: {self.base!r}")
        else:
            log(f"schedule: phase {phase.index} {phase.name!r}: "
                f"{phase.faults!r}")

    def source(self):
        if self.override is not None:
            return "control", None
        if self.schedule is not None:
            phase = self.schedule.at(time.monotonic() - self.t0)
            if phase is not None:
                return "schedule", phase.name
        return "flags", None

    def chance(self, p):
        return p > 0.0 and (p >= 1.0 or self.rng.random() < p)

    # counting

    def count(self, name):
        """One more of counter name, and in its timeline series if it
        feeds one."""
        self.c[name] += 1
        series = TIMELINE_OF.get(name)
        if series is None:
            return
        s = int(time.monotonic() - self.t0)
        if s >= TIMELINE_MAX_S:
            return
        bins = self.timeline[series]
        if len(bins) <= s:
            bins.extend([0] * (s + 1 - len(bins)))
        bins[s] += 1

    def timeline_now(self):
        """Every series, each padded with 0 up to the current second."""
        n = min(int(time.monotonic() - self.t0) + 1, TIMELINE_MAX_S)
        return {k: v + [0] * (n - len(v)) for k, v in self.timeline.items()}

    # one query, UDP or TCP

    def admit(self, query, addr, tcp):
        """Count query (from UDP client addr, or TCP client tcp) and apply
        the faults decided on arrival. Returns (faults, question end) to
        forward it, or None when it was dropped or answered here."""
        self.count("received_tcp" if tcp else "received_udp")
        qend = question_end(query)
        if qend < 0 or query[2] & QR:
            self.c["malformed"] += 1
            return None
        f = self.current()
        if f.outage:
            self.count("dropped_outage")
            if tcp is not None:
                tcp.close()
            return None
        if self.chance(f.loss):
            self.count("dropped_loss")
            return None
        if f.no_edns and has_opt(query, qend):
            self.count("formerr_edns")
            self.deliver(f, error_reply(query, qend, RCODE_FORMERR), qend,
                         None, addr, tcp)
            return None
        if f.servfail or f.refused:
            u = self.rng.random()
            rcode = RCODE_SERVFAIL if u < f.servfail else \
                RCODE_REFUSED if u < f.servfail + f.refused else 0
            if rcode:
                self.count("servfail" if rcode == RCODE_SERVFAIL
                           else "refused")
                self.deliver(f, error_reply(query, qend, rcode), qend, None,
                             addr, tcp)
                return None
        if f.servfail_every_other and self.every_other_turn(query, qend):
            self.count("servfail")
            self.deliver(f, error_reply(query, qend, RCODE_SERVFAIL), qend,
                         None, addr, tcp)
            return None
        return f, qend

    def every_other_turn(self, query, qend):
        """True for the 1st, 3rd, 5th... query of its question (qname in
        any case, qtype, qclass) that servfail_every_other has seen."""
        key = query[12:qend].lower()
        if key not in self.every_other and \
                len(self.every_other) >= EVERY_OTHER_MAX:
            self.every_other.clear()
        n = self.every_other.get(key, 0)
        self.every_other[key] = n + 1
        return n % 2 == 0

    def deliver(self, f, msg, qend, forged, addr, tcp):
        """Send msg (an answer of question end qend) to the UDP client addr
        or the TCP client tcp, lowercased and delayed as f says, forged
        just before it if given."""
        if f.lowercase:
            low = lowercased(msg, qend)
            if low != msg:
                self.c["lowercased"] += 1
                msg = low
        ms = 0.0
        if f.delay_mean > 0 or f.delay_stddev > 0:
            ms = max(0.0, self.rng.gauss(f.delay_mean, f.delay_stddev)
                     if f.delay_stddev > 0 else f.delay_mean)
        if ms > 0:
            self.c["delayed"] += 1
            self.c["delay_ms_total"] += ms
            self.loop.call_later(ms / 1000.0, self.emit, msg, forged, addr,
                                 tcp)
        else:
            self.emit(msg, forged, addr, tcp)

    def emit(self, msg, forged, addr, tcp):
        if tcp is None:
            if forged is not None:
                self.udp.sendto(forged, addr)
                self.c["spoofed"] += 1
            self.udp.sendto(msg, addr)
        elif not tcp.write(msg):
            self.c["client_gone"] += 1
            return
        self.c["answered"] += 1

    # UDP

    def on_udp_query(self, query, addr):
        if not is_loopback_peer(addr):
            self.c["non_loopback_client"] += 1
            return
        got = self.admit(query, addr, None)
        if got is None:
            return
        f, qend = got
        entry = (query[:2], query[12:qend], addr, f,
                 time.monotonic() + self.upstream_timeout)
        uid = self.pending.add(entry)
        if uid is None:
            self.c["upstream_errors"] += 1
            return
        self.count("forwarded")
        self.up_udp.sendto(struct.pack("!H", uid) + query[2:])

    def on_udp_answer(self, answer):
        if len(answer) < 12:
            self.c["upstream_errors"] += 1
            return
        e = self.pending.take(answer)
        if e is None:
            self.c["upstream_errors"] += 1     # late, stray or mismatched
            return
        self.c["upstream_answers"] += 1
        client_id, question, addr, f, _ = e
        qend = 12 + len(question)
        msg = client_id + answer[2:]
        if question_end(msg) != qend:         # an answer without question
            self.emit(msg, None, addr, None)
            return
        if self.chance(f.truncate):
            self.c["truncated"] += 1
            msg = truncated(msg, qend)
        forged = None
        if self.chance(f.spoof):
            forged = forged_answer(int.from_bytes(client_id, "big"),
                                   question, f.spoof_kind, self.rng)
        self.deliver(f, msg, qend, forged, addr, None)

    # TCP

    def on_tcp_query(self, conn, query):
        got = self.admit(query, None, conn)
        if got is None:
            return
        f, qend = got
        entry = (query[:2], query[12:qend], None, f,
                 time.monotonic() + self.upstream_timeout)
        uid = conn.pending.add(entry)
        if uid is None:
            self.c["upstream_errors"] += 1
            return
        self.count("forwarded")
        conn.forward(struct.pack("!H", uid) + query[2:])

    def on_tcp_answer(self, conn, answer):
        e = conn.pending.take(answer) if len(answer) >= 12 else None
        if e is None:
            self.c["upstream_errors"] += 1
            return
        self.c["upstream_answers"] += 1
        client_id, question, _, f, _ = e
        msg = client_id + answer[2:]
        qend = 12 + len(question)
        if question_end(msg) != qend:
            self.emit(msg, None, None, conn)
            return
        self.deliver(f, msg, qend, None, None, conn)

    async def on_tcp_client(self, reader, writer):
        self.c["tcp_connections"] += 1
        if self.current().outage:
            self.c["tcp_closed_outage"] += 1
            writer.close()
            return
        conn = TcpClient(self, writer)
        self.tcp_clients.add(conn)
        try:
            while not conn.closed:
                n = struct.unpack("!H", await reader.readexactly(2))[0]
                self.on_tcp_query(conn, await reader.readexactly(n))
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            conn.close()
            self.tcp_clients.discard(conn)

    # housekeeping

    async def expire_loop(self):
        while True:
            await asyncio.sleep(0.25)
            now = time.monotonic()
            n = self.pending.expire(now)
            for conn in list(self.tcp_clients):
                n += conn.pending.expire(now)
            self.c["upstream_timeouts"] += n

    def stats(self):
        out = dict(self.c)
        out["delay_ms_total"] = round(out["delay_ms_total"], 3)
        return out

    def reset(self):
        old = self.stats()
        self.c = dict.fromkeys(COUNTERS, 0)
        self.c["delay_ms_total"] = 0.0
        return old


class TcpClient:
    """One client TCP connection and, opened at its first forwarded query,
    its own connection to the upstream; IDs remapped per connection."""

    def __init__(self, proxy, writer):
        self.proxy = proxy
        self.writer = writer
        self.pending = Pending()
        self.up_writer = None
        self.up_task = None
        self.backlog = []
        self.closed = False

    def write(self, msg):
        if self.closed or self.writer.is_closing():
            return False
        self.writer.write(struct.pack("!H", len(msg)) + msg)
        return True

    def forward(self, query):
        framed = struct.pack("!H", len(query)) + query
        if self.up_writer is not None and not self.up_writer.is_closing():
            self.up_writer.write(framed)
            return
        self.backlog.append(framed)
        if self.up_task is None or self.up_task.done():
            self.up_task = asyncio.ensure_future(self._upstream())

    async def _upstream(self):
        p = self.proxy
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(p.up_host, p.up_port), 3.0)
        except (OSError, asyncio.TimeoutError):
            p.c["upstream_errors"] += 1
            self.backlog.clear()
            self.pending.clear()
            return
        self.up_writer = writer
        for framed in self.backlog:
            writer.write(framed)
        self.backlog.clear()
        try:
            while True:
                n = struct.unpack("!H", await reader.readexactly(2))[0]
                p.on_tcp_answer(self, await reader.readexactly(n))
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            self.up_writer = None
            writer.close()
            # queries left unanswered: by an upstream that closed, or
            # because the client closed first
            lost = self.pending.clear()
            p.c["client_gone" if self.closed else "upstream_errors"] += lost

    def close(self):
        if self.closed:
            return
        self.closed = True
        self.writer.close()
        if self.up_task is not None and not self.up_task.done():
            self.up_task.cancel()


class ClientUdp(asyncio.DatagramProtocol):
    def __init__(self, proxy):
        self.proxy = proxy

    def datagram_received(self, data, addr):
        self.proxy.on_udp_query(data, addr)

    def error_received(self, exc):
        pass    # a client that went away; its ICMP is no concern of ours


class UpstreamUdp(asyncio.DatagramProtocol):
    def __init__(self, proxy):
        self.proxy = proxy

    def datagram_received(self, data, addr):
        self.proxy.on_udp_answer(data)

    def error_received(self, exc):
        # ICMP port unreachable and the like: upstream not listening
        self.proxy.c["upstream_errors"] += 1


# --- control socket ----------------------------------------------------------


def control_reply(proxy, line):
    """The reply object to one control line."""
    try:
        req = json.loads(line)
    except ValueError as e:
        return {"ok": False, "error": f"not JSON: {e}"}
    if not isinstance(req, dict) or len(req) != 1:
        return {"ok": False, "error": "expected one object with one key: "
                "set, get, stats, reset or timeline"}
    (cmd, arg), = req.items()
    if cmd == "set":
        if arg is None:
            proxy.override = None
            log("control: faults cleared, schedule and flags apply")
        else:
            try:
                proxy.override = Faults.from_dict(arg, "set")
            except ConfigError as e:
                return {"ok": False, "error": str(e)}
            log(f"control: set {proxy.override!r}")
    elif cmd == "stats":
        return {"ok": True, "stats": proxy.stats()}
    elif cmd == "reset":
        return {"ok": True, "stats": proxy.reset()}
    elif cmd == "timeline":
        return {"ok": True, "timeline": proxy.timeline_now(),
                "uptime": round(time.monotonic() - proxy.t0, 3)}
    elif cmd != "get":
        return {"ok": False, "error": f"unknown command {cmd!r}: expected "
                "set, get, stats, reset or timeline"}
    source, phase = proxy.source()
    return {"ok": True, "faults": proxy.current().to_dict(),
            "source": source, "phase": phase,
            "uptime": round(time.monotonic() - proxy.t0, 3)}


async def on_control(proxy, reader, writer):
    try:
        while True:
            line = await reader.readline()
            if not line:
                break
            reply = control_reply(proxy, line.decode("utf-8", "replace"))
            writer.write(json.dumps(reply, sort_keys=True).encode() + b"\n")
            await writer.drain()
    except (ConnectionError, ValueError, OSError):
        pass
    finally:
        writer.close()


# --- start-up ----------------------------------------------------------------


def bind_listeners(family, host, port, tries=20):
    """A UDP and a TCP socket bound to the same host:port; port 0 means the
    first free port both can have."""
    for _ in range(tries if port == 0 else 1):
        u = socket.socket(family, socket.SOCK_DGRAM)
        t = socket.socket(family, socket.SOCK_STREAM)
        try:
            u.bind((host, port))
            t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            t.bind((host, u.getsockname()[1]))
            t.listen(128)
            for s in (u, t):
                s.setblocking(False)
            return u, t
        except OSError as e:
            u.close()
            t.close()
            if port != 0:
                raise ConfigError(f"--listen {fmt_hostport(host, port)}: "
                                  f"{e.strerror}") from None
    raise ConfigError(f"--listen: no port free for both UDP and TCP on "
                      f"{host} after {tries} tries")


def upstream_socket(family, host, port):
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.bind(("::1" if family == socket.AF_INET6 else "127.0.0.1", 0))
    s.connect((host, port))
    s.setblocking(False)
    return s


def grow_buffers(*socks):
    for s in socks:
        for opt in (socket.SO_RCVBUF, socket.SO_SNDBUF):
            try:
                s.setsockopt(socket.SOL_SOCKET, opt, 1 << 20)
            except OSError:
                pass


def unlink_stale_socket(path):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise ConfigError(f"--control {path}: exists and is not a socket")
    os.unlink(path)


async def serve(args, proxy, listen):
    loop = asyncio.get_running_loop()
    proxy.loop = loop
    family, host, port = listen
    udp_sock, tcp_sock = bind_listeners(family, host, port)
    up_sock = upstream_socket(proxy.up_family, proxy.up_host, proxy.up_port)
    grow_buffers(udp_sock, up_sock)
    proxy.udp, _ = await loop.create_datagram_endpoint(
        lambda: ClientUdp(proxy), sock=udp_sock)
    proxy.up_udp, _ = await loop.create_datagram_endpoint(
        lambda: UpstreamUdp(proxy), sock=up_sock)
    tcp_server = await asyncio.start_server(proxy.on_tcp_client,
                                            sock=tcp_sock)
    control = None
    if args.control:
        unlink_stale_socket(args.control)
        control = await asyncio.start_unix_server(
            lambda r, w: on_control(proxy, r, w), path=args.control)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    expirer = asyncio.ensure_future(proxy.expire_loop())

    port = udp_sock.getsockname()[1]
    proxy.t0 = time.monotonic()
    log(f"listening on {fmt_hostport(host, port)} (UDP, TCP), upstream "
        f"{fmt_hostport(proxy.up_host, proxy.up_port)}, flags: "
        f"{proxy.base!r}" + (", with a schedule" if proxy.schedule else ""))
    print(f"listening {fmt_hostport(host, port)}", flush=True)
    proxy.current()       # log the schedule's first phase, if it has one

    try:
        await asyncio.wait_for(stop.wait(), args.lifetime)
        log("stopping on a signal")
    except asyncio.TimeoutError:
        log(f"stopping: --lifetime {args.lifetime:g} s is over")
    expirer.cancel()
    tcp_server.close()
    if control is not None:
        control.close()
        try:
            os.unlink(args.control)
        except OSError:
            pass
    for conn in list(proxy.tcp_clients):
        conn.close()
    proxy.udp.close()
    proxy.up_udp.close()


def probability(text):
    try:
        p = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number")
    if not 0.0 <= p <= 1.0:
        raise argparse.ArgumentTypeError(f"{p} is not in [0, 1]")
    return p


def milliseconds(text):
    try:
        ms = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number")
    if ms < 0 or not math.isfinite(ms):
        raise argparse.ArgumentTypeError(f"{ms} is not a duration")
    return ms


def seconds(text):
    s = milliseconds(text)
    if s <= 0:
        raise argparse.ArgumentTypeError(f"{s} is not positive")
    return s


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog=PROG, description="Fault-injecting DNS proxy, loopback only.")
    ap.add_argument("--listen", default="127.0.0.1:0", metavar="ADDR:PORT",
                    help="UDP and TCP listen address (port 0: a free one; "
                    "default %(default)s)")
    ap.add_argument("--upstream", required=True, metavar="ADDR:PORT",
                    help="the real DNS server to forward to")
    g = ap.add_argument_group("faults (constant; a schedule phase or the "
                              "control socket overrides them)")
    g.add_argument("--delay-mean", type=milliseconds, metavar="MS",
                   help="mean delay of each answer (normal distribution)")
    g.add_argument("--delay-stddev", type=milliseconds, metavar="MS",
                   help="its standard deviation; a draw below 0 is 0")
    for name, what in (
            ("loss", "a query is dropped"),
            ("servfail", "a query is answered SERVFAIL, not forwarded"),
            ("refused", "a query is answered REFUSED, not forwarded"),
            ("truncate", "a UDP answer becomes header+question with TC=1"),
            ("spoof", "a forged UDP answer goes just before the real one")):
        g.add_argument(f"--{name}", type=probability, metavar="P",
                       help=f"probability that {what}")
    g.add_argument("--spoof-kind", choices=SPOOF_KINDS,
                   help="forgery: wrong ID, other qname, flipped qname case, "
                   "or any of them (default id)")
    g.add_argument("--lowercase", action="store_true", default=None,
                   help="lower the qname in every answer's question")
    g.add_argument("--outage", action="store_true", default=None,
                   help="answer nothing; close TCP connections")
    g.add_argument("--no-edns", action="store_true", default=None,
                   help="answer FORMERR to every query with an OPT record, "
                   "as a server without EDNS does (RFC 6891 section 7)")
    g.add_argument("--servfail-every-other", action="store_true",
                   default=None,
                   help="answer SERVFAIL to every other query of each "
                   "question, the first included")
    ap.add_argument("--schedule", metavar="FILE",
                    help="JSON file of timed fault phases")
    ap.add_argument("--control", metavar="PATH",
                    help="unix socket for run-time control (JSON lines)")
    ap.add_argument("--seed", type=int, help="seed of all random draws")
    ap.add_argument("--upstream-timeout", type=seconds, default=5.0,
                    metavar="S", help="forget an unanswered forwarded query "
                    "after S s (default %(default)g)")
    ap.add_argument("--lifetime", type=seconds, default=None, metavar="S",
                    help="exit (status 0, counters printed) after S s")
    ap.add_argument("--check", action="store_true",
                    help="check the arguments and schedule, print them as "
                    "JSON, and exit")
    return ap.parse_args(argv)


def flag_faults(args):
    d = {}
    for key in PROBABILITIES + DELAYS + SWITCHES + ("spoof_kind",):
        value = getattr(args, key)
        if value is not None:
            d[key] = value
    return Faults.from_dict(d, "flags")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        listen = parse_hostport(args.listen, "--listen")
        upstream = parse_hostport(args.upstream, "--upstream")
        if upstream[2] == 0:
            raise ConfigError("--upstream: port 0")
        base = flag_faults(args)
        schedule = Schedule.load(args.schedule) if args.schedule else None
        if args.check:
            print(json.dumps({
                "listen": fmt_hostport(*listen[1:]),
                "upstream": fmt_hostport(*upstream[1:]),
                "flags": base.to_dict(),
                "schedule": schedule.to_dict() if schedule else None},
                sort_keys=True))
            return 0
        rng = random.Random(args.seed)
        proxy = Proxy(upstream, base, schedule, rng, args.upstream_timeout)
        asyncio.run(serve(args, proxy, listen))
    except ConfigError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(proxy.stats(), sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
