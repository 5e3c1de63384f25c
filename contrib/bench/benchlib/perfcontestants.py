"""The contestants of contrib/bench/perf and instructions: benchlib's
(contestants.py), each with a cache no run of perf.test fills and at 1
or 2 threads where it has them, and three of perf's own: the floor
(canned.c), kresd and pdns_recursor. make() builds one by its name in
perf's table (dnsdamper-1, unbound-2, floor, ...)."""

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from dnstest import ports, proc, wire

from . import contestants
from .contestants import LOOPBACK
from .perfzone import ZONE


def binary_path(name):
    return shutil.which(name) or f"/usr/sbin/{name}"


def installed(name):
    return os.access(binary_path(name), os.X_OK)


class Threaded:
    """A contestant in a 1- or 2-thread configuration, named for it."""

    def __init__(self, workdir, args, threads=1):
        self.threads = threads
        self.name = f"{self.base}-{threads}"
        super().__init__(workdir, args)


class Floor(contestants.Contestant):
    """contrib/bench/canned.c, built by the caller (args.canned): one
    fixed answer to every query."""

    name = "floor"

    def launch(self):
        self._spawn([str(self.args.canned), self.host, str(self.port)])

    def wait_ready(self, bind, deadline):
        """Until its fixed answer comes back (it knows no named)."""
        q = wire.query(0x0f1, f"ready.{ZONE}")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((ports.check_loopback(self.host), self.port))
            s.settimeout(0.25)
            while time.monotonic() < deadline and self.alive():
                s.send(q)
                try:
                    if s.recv(512)[:2] == q[:2]:
                        return
                except OSError:
                    time.sleep(0.1)
        raise RuntimeError(f"floor did not answer:\n{self.log_text()}")


class Dnsdamper(Threaded, contestants.Dnsdamper):
    """args.no_threads: None if this build takes `threads 2`
    (dnsdamper_threads)."""

    base = "dnsdamper"

    def tuning(self, known):
        # the whole run's names fit: nothing is evicted
        lines = ["cache-size 2g"]
        if self.args.no_threads is None:
            lines.append(f"threads {self.threads}")
        return lines

    def cache_figures(self):
        """{"entries": n, "bytes": b} of the cache from the daemon's own
        metrics (dnsdamper_cache_entries, dnsdamper_cache_bytes), or {} if
        this build cannot tell."""
        out = {}
        for line in (self.ctl("metrics") or "").splitlines():
            name, _, value = line.partition(" ")
            if name in ("dnsdamper_cache_entries", "dnsdamper_cache_bytes"):
                out[name.rsplit("_", 1)[1]] = float(value)
        return out


class DnsdamperTold(Dnsdamper):
    """dnsdamper-1 with what it tells of queries on (issue 24), by
    variant: `dnstap` (client responses to fstrm_capture on a unix
    socket, writing a file), `dnstap-gone` (the same socket path, no
    collector: every message dropped at the queue), `log-queries` (1 of
    every 100 queries in the log, which goes to a file). The collector is
    a process of its own, not counted in the contestant's CPU."""

    def __init__(self, workdir, args, variant):
        super().__init__(workdir, args, 1)
        self.variant = variant
        self.name = f"dnsdamper-1+{variant}"
        self.capture = None

    @property
    def tap_socket(self):
        return self.dir / "tap.sock"

    def tuning(self, known):
        lines = super().tuning(known)
        if self.variant.startswith("dnstap"):
            lines += [f"dnstap {self.tap_socket}",
                      "dnstap-messages client-response"]
        else:
            lines.append("log-queries 1/100")
        return lines

    def launch(self):
        if self.variant == "dnstap" and self.capture is None:
            if self.tap_socket.exists():
                self.tap_socket.unlink()
            self.capture = proc.spawn(
                ["fstrm_capture", "-t", "protobuf:dnstap.Dnstap", "-u",
                 str(self.tap_socket), "-w", str(self.dir / "tap.fstrm")],
                self.dir / "fstrm_capture.log")
            deadline = time.monotonic() + 5
            while not self.tap_socket.exists() and \
                    time.monotonic() < deadline:
                time.sleep(0.02)
        super().launch()

    def stop(self):
        rc = super().stop()
        if self.capture is not None:
            proc.stop(self.capture)
            self.capture = None
        return rc


def dnsdamper_threads(binary, workdir):
    """None if this build takes `threads 2`, else what its -t said about
    it; raises if -t refuses the file without it as well."""
    conf = Path(workdir) / "threads-probe.conf"
    base = (f"listen {LOOPBACK}:53\nresolv-conf /dev/null\n"
            f"forward . {{ upstream {LOOPBACK}:5353 }}\n")
    for threads in ("", "threads 2\n"):
        conf.write_text(threads + base)
        r = subprocess.run([str(binary), "-t", "-c", str(conf)],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0 and not threads:
            raise SystemExit(f"{binary} -t -c {conf}: {r.stderr}")
    return None if r.returncode == 0 else \
        (r.stderr.strip().splitlines() or ["refused"])[-1]


class Unbound(Threaded, contestants.Unbound):
    base = "unbound"

    def tuning(self):
        return [f"num-threads: {self.threads}", "msg-cache-size: 1g",
                "rrset-cache-size: 2g"]


class Dnsmasq(contestants.Dnsmasq):
    rss_note = "cache allocated at start-up: {start:.0f} MiB"

    def tuning(self):
        # entries, allocated at start-up; an SRV answer with glue takes four
        return ["--cache-size=3000000"]


class Kresd(contestants.Contestant):
    name = "kresd"
    rss_note = "cache in an mmap'd LMDB file"

    def configure(self):
        self.conf = self.dir / "kresd.conf"
        self.conf.write_text(f"""\
-- written by contrib/bench/perf: forward everything to named on
-- loopback, without validation; cache in the run's directory
net.ipv6 = false
net.listen('{self.host}', {self.port}, {{ kind = 'dns' }})
cache.open(2 * GB, 'lmdb://{self.dir}/cache')
trust_anchors.remove('.')
policy.add(policy.all(policy.FORWARD('{LOOPBACK}@{self.upstream_port}')))
""")

    def launch(self):
        self._spawn([binary_path("kresd"), "-n", "-c", str(self.conf),
                     str(self.dir)])

    def stop(self):
        """Stop it, and remove its cache: kresd allocates the whole LMDB
        file up front, and a run's directory is kept."""
        rc = super().stop()
        shutil.rmtree(self.dir / "cache", ignore_errors=True)
        return rc


class PdnsRecursor(contestants.Contestant):
    name = "pdns_recursor"

    def configure(self):
        (self.dir / "recursor.conf").write_text(f"""\
# written by contrib/bench/perf: forward everything to named on loopback
local-address={self.host}
local-port={self.port}
allow-from=127.0.0.0/8
forward-zones-recurse=.={LOOPBACK}:{self.upstream_port}
dont-query=
dnssec=off
threads=1
pdns-distributes-queries=no
max-cache-entries=3000000
max-packetcache-entries=3000000
security-poll-suffix=
socket-dir={self.dir}
daemon=no
write-pid=no
disable-syslog=yes
""")

    def launch(self):
        self._spawn([binary_path("pdns_recursor"),
                     f"--config-dir={self.dir}"])


def make(name, workdir, args):
    """The contestant of perf's table called name, in workdir."""
    if name == "floor":
        return Floor(workdir, args)
    if name.startswith("dnsdamper-1+"):
        return DnsdamperTold(workdir, args, name.split("+", 1)[1])
    if name.startswith(("dnsdamper-", "unbound-")):
        base, threads = name.rsplit("-", 1)
        cls = Dnsdamper if base == "dnsdamper" else Unbound
        return cls(workdir, args, int(threads))
    return {"dnsmasq": Dnsmasq, "kresd": Kresd,
            "pdns_recursor": PdnsRecursor}[name](workdir, args)
