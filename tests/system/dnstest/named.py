"""BindServer: a real BIND 9 `named`, authoritative for zones a test gives
as text, on a free loopback port (UDP and TCP), run as whatever user runs
the tests, everything in one temporary directory, stopped by PID.

Queries are counted from named's query log. named runs with -g (foreground,
log to stderr), because without it a config or zone error before logging is
configured would go to syslog where no test can see it; -g also makes named
ignore the `logging` statement, so the query log is in the same stderr file,
one line per query, written and flushed before named answers. count() first
puts a barrier through named (see sync()), so that every query named
received before the caller's last answer is in the file when it is read.
"""

import collections
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from . import ports, proc, wire

LoggedQuery = collections.namedtuple("LoggedQuery",
                                     "name qclass qtype flags tcp")

# 9.18: "client @0x7f.. 127.0.0.1#41561 (www.example.test): query:
#        www.example.test IN A +E(0)TK (127.0.0.1)"
# flags: + or - for RD, then S signed, E(n) EDNS version, T TCP, D DO,
# C CD, V valid cookie, K cookie.
_QUERY_RE = re.compile(
    r"\bquery: (\S+) (\S+) (\S+) ([-+][A-Z0-9()]*) \(")


def named_binary():
    """$NAMED, or named on PATH, or /usr/sbin/named (not on a normal
    user's PATH)."""
    for cand in (os.environ.get("NAMED"), shutil.which("named"),
                 "/usr/sbin/named"):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def checkzone_binary():
    for cand in (shutil.which("named-checkzone"), "/usr/bin/named-checkzone",
                 "/usr/sbin/named-checkzone"):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def _norm(qname):
    return qname.rstrip(".").lower()


class BindError(RuntimeError):
    pass


class BindServer:
    """One named. Add zones with add_zone() before start(). It listens on
    address (loopback) at a free port, or at port if given (a fixed port is
    not retried elsewhere when taken).

    Every instance also serves `harness.test` with `ready TXT <token>`: the
    start-up check asks for it, so it knows the answer came from this named
    and not from whatever else might have taken the port.
    """

    HARNESS_ZONE = "harness.test"

    def __init__(self, workdir, label="ns1", address=ports.LOOPBACK,
                 port=None, tls=None):
        self.label = label
        # DNS over TLS listeners: {label: (key file, certificate file)},
        # each on a port of its own (tls_ports[label]), TCP only
        self.tls = dict(tls or {})
        self.tls_ports = {}
        self.address = ports.check_loopback(address)
        self.fixed_port = port
        self.dir = Path(workdir) / f"named-{label}"
        self.dir.mkdir(parents=True, exist_ok=False)
        self.conf_path = self.dir / "named.conf"
        self.log_path = self.dir / "named.stderr"
        self.token = secrets.token_hex(8)
        self.zones = {}
        self.port = None
        self.proc = None
        self._barrier = 0
        self.add_zone(self.HARNESS_ZONE, f"""\
$TTL 60
@     60 IN SOA ns.{self.HARNESS_ZONE}. hostmaster.{self.HARNESS_ZONE}. 1 3600 600 86400 60
@     60 IN NS  ns
ns    60 IN A   127.0.0.1
ready 60 IN TXT "{self.token}"
""")

    # --- zones -----------------------------------------------------------

    def add_zone(self, origin, text):
        """Serve zone origin with the zone-file text (RFC 1035 §5 master
        format, $ORIGIN = origin). Checked with named-checkzone now, so a
        typo in a test's zone fails right here with named's own message."""
        if self.proc is not None:
            raise BindError("add zones before start()")
        origin = _norm(origin)
        path = self.dir / f"{origin or 'root'}.zone"
        path.write_text(text)
        checker = checkzone_binary()
        if checker:
            r = subprocess.run([checker, "-q", origin or ".", str(path)],
                               capture_output=True, text=True, timeout=30)
            if r.returncode != 0:
                r = subprocess.run([checker, origin or ".", str(path)],
                                   capture_output=True, text=True,
                                   timeout=30)
                raise BindError(f"zone {origin} does not load:\n"
                                f"{r.stdout}{r.stderr}\n--- zone:\n{text}")
        self.zones[origin] = path

    def replace_zone(self, origin, text, timeout=10.0):
        """Serve new text for zone origin, which this running named already
        serves: check it, rewrite the file, SIGHUP named (it rereads zone
        files that changed; no rndc needed) and wait until its log says the
        zone was loaded with the new text's SOA serial, which must be
        higher than the old one."""
        origin = _norm(origin)
        if origin not in self.zones or self.proc is None:
            raise BindError(f"replace_zone: {origin} is not being served")
        m = re.search(r"\bSOA\s+\S+\s+\S+\s+(\d+)\b", text)
        if m is None:
            raise BindError("replace_zone: no SOA serial in the new text")
        serial = int(m.group(1))
        path = self.zones[origin]
        old = path.read_text()
        path.write_text(text)
        checker = checkzone_binary()
        if checker:
            r = subprocess.run([checker, origin, str(path)],
                               capture_output=True, text=True, timeout=30)
            if r.returncode != 0:
                path.write_text(old)
                raise BindError(f"zone {origin} does not load:\n"
                                f"{r.stdout}{r.stderr}\n--- zone:\n{text}")
        # a file rewritten within the second of its last load could look
        # unchanged to named: make its mtime clearly newer
        later = time.time() + 1
        os.utime(path, (later, later))
        mark = os.path.getsize(self.log_path)
        proc.signal_pid(self.proc, signal.SIGHUP)
        loaded = re.compile(rf"zone {re.escape(origin)}/IN: loaded serial "
                            rf"{serial}\b")
        deadline = time.monotonic() + timeout
        while not loaded.search(self.log_text(mark)):
            if time.monotonic() > deadline or not self.alive():
                raise BindError(f"named ({self.label}) did not load serial "
                                f"{serial} of {origin} within {timeout}s:\n"
                                f"{self.log_text(mark)}")
            time.sleep(0.02)
        return self

    def add_zone_file(self, path):
        """Serve the zone in file path; its origin is the file name less
        `.zone` (zones/neg600.test.zone serves neg600.test)."""
        path = Path(path)
        self.add_zone(path.name[:-len(".zone")], path.read_text())

    # --- process ---------------------------------------------------------

    def _write_conf(self):
        d = self.dir
        zones = "".join(
            f'zone "{origin or "."}" {{ type primary; file "{path}"; }};\n'
            for origin, path in sorted(self.zones.items()))
        tls_blocks = "".join(
            f'tls {label} {{ key-file "{key}"; cert-file "{cert}"; }};\n'
            for label, (key, cert) in sorted(self.tls.items()))
        tls_listen = "".join(
            f"\tlisten-on port {self.tls_ports[label]} tls {label} "
            f"{{ {self.address}; }};\n" for label in sorted(self.tls))
        self.conf_path.write_text(f"""\
{tls_blocks}options {{
	directory "{d}";
	pid-file "{d}/named.pid";
	lock-file "{d}/named.lock";
	session-keyfile "{d}/session.key";
	managed-keys-directory "{d}";
	dump-file "{d}/named_dump.db";
	statistics-file "{d}/named.stats";
	memstatistics-file "{d}/named.memstats";
	listen-on port {self.port} {{ {self.address}; }};
{tls_listen}	listen-on-v6 {{ none; }};
	recursion no;
	dnssec-validation no;
	notify no;
	querylog yes;
	// authority section only where the answer needs it (negative
	// answers), additional section (SRV targets) kept
	minimal-responses no-auth;
	// never more than 1232 octets over UDP, whatever buffer size the
	// client offers: a larger answer gets TC=1 and must be fetched over TCP
	max-udp-size 1232;
}};
controls {{ }};
{zones}""")

    def start(self, timeout=10.0):
        """Start named and wait until it answers over UDP and TCP and has
        loaded every zone. Retries on a new port if the port was taken."""
        binary = named_binary()
        if binary is None:
            raise BindError("named not found: apt-get install bind9")
        last = ""
        for _ in range(1 if self.fixed_port else 3):
            self.port = self.fixed_port or ports.free_port(self.address)
            self.tls_ports = {label: ports.free_port(self.address)
                              for label in self.tls}
            self._write_conf()
            self.proc = proc.spawn(
                [binary, "-g", "-4", "-n", "1", "-c", str(self.conf_path)],
                self.log_path, cwd=self.dir)
            why = self._wait_ready(time.monotonic() + timeout)
            if why is None:
                return self
            last = f"{why}\n--- named log:\n{self.log_text()}"
            self.stop()
            if "address in use" not in last:
                break
        raise BindError(f"named ({self.label}) did not start: {last}")

    def _wait_ready(self, deadline):
        running = False
        while time.monotonic() < deadline:
            exited = not proc.alive(self.proc)
            log = self.log_text()
            # where another process took the UDP port first, named 9.18
            # says only "unable to listen on any configured interfaces",
            # and exits: the log first, so that start() tries another port
            if "address in use" in log or "could not listen" in log or \
                    "unable to listen on any" in log:
                return "could not listen: address in use"
            if exited:
                return f"named exited with status {self.proc.returncode}"
            running = running or re.search(r"\brunning$", log, re.M)
            if running and self._ready_answer(socket.SOCK_DGRAM) and \
                    self._ready_answer(socket.SOCK_STREAM) and \
                    all(self._tls_accepts(p) for p in self.tls_ports.values()):
                return None
            time.sleep(0.05)
        return "not ready in time"

    def _tls_accepts(self, port):
        """Whether a TLS listener accepts TCP connections (the handshake
        is the daemon's to try)."""
        try:
            with socket.create_connection((self.address, port), 0.5):
                return True
        except OSError:
            return False

    def _ready_answer(self, kind):
        q = wire.query(0x5eed, f"ready.{self.HARNESS_ZONE}", qtype=16)
        try:
            raw = self._raw_exchange(q, kind, 0.5)
        except OSError:
            return False
        return raw is not None and self.token.encode() in raw

    def _raw_exchange(self, q, kind, timeout):
        """One raw query to this named, answer octets or None."""
        if kind == socket.SOCK_DGRAM:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(timeout)
                s.connect((self.address, self.port))
                s.send(q)
                try:
                    return s.recv(65535)
                except socket.timeout:
                    return None
        with wire.tcp_connect(self.port, self.address, timeout) as s:
            s.sendall(wire.frame(q))
            return wire.TcpReader(s).read(timeout)

    def stop(self, timeout=10.0):
        """SIGTERM by PID, bounded wait, SIGKILL if needed. Returns the exit
        status."""
        if self.proc is None:
            return None
        rc, _ = proc.stop(self.proc, timeout=timeout)
        return rc

    def alive(self):
        return self.proc is not None and proc.alive(self.proc)

    # --- query log -------------------------------------------------------

    def log_text(self, since=0):
        return proc.read_log(self.log_path, since)

    def sync(self, timeout=5.0):
        """Barrier: ask named for a fresh name and wait until that query is
        in the log. named logs each query before it answers it, and writes
        its log in order, so once the barrier is logged, every query whose
        answer anybody has already received is logged too."""
        self._barrier += 1
        marker = f"sync{self._barrier}-{self.token}.{self.HARNESS_ZONE}"
        q = wire.query(0x5ec0 + self._barrier % 64, marker, qtype=16)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._raw_exchange(q, socket.SOCK_DGRAM, 0.5)
            if marker in self.log_text():
                return
            time.sleep(0.02)
        raise BindError(f"named ({self.label}) query log did not show "
                        f"barrier {marker} within {timeout}s")

    def mark(self):
        """A position in the log; queries(since=mark) are those after it."""
        self.sync()
        return os.path.getsize(self.log_path)

    def queries(self, since=0):
        """Every query named logged after position since (harness barrier
        queries left out)."""
        self.sync()
        out = []
        for m in _QUERY_RE.finditer(self.log_text(since)):
            name = _norm(m.group(1))
            if name.startswith("sync") and name.endswith(
                    f"-{self.token}.{self.HARNESS_ZONE}"):
                continue
            flags = re.sub(r"E\(\d+\)", "", m.group(4))
            out.append(LoggedQuery(name, m.group(2), m.group(3), m.group(4),
                                   "T" in flags))
        return out

    def count(self, qname, rdtype=None, since=0, tcp=None):
        """How many queries for qname (any case: the daemon may send
        0x20-randomised case) named received after position since; only
        of type rdtype if given; only over TCP (tcp=True) or UDP
        (tcp=False) if given."""
        qname = _norm(qname)
        return sum(1 for q in self.queries(since)
                   if q.name == qname
                   and (rdtype is None or q.qtype == rdtype)
                   and (tcp is None or q.tcp == tcp))

    def __repr__(self):
        return f"<BindServer {self.label} {self.address}:{self.port}>"
