"""The forwarders under test, each on a loopback address and port of its
own, forwarding everything to one upstream (the fault proxy), started and
stopped by PID through the test harness's process registry.

  direct     the clients query the upstream itself (no cache on the host)
  dnsmasq    dnsmasq --no-resolv --server=127.0.0.1#UPSTREAM ...
  unbound    unbound forwarding "." to the upstream, RFC 8767 settings
  dnsdamper  forward . { upstream 127.0.0.1:UPSTREAM }, defaults otherwise

restart() restarts one as its service manager would: dnsdamper with a
NotifySocket as systemd does with FileDescriptorStoreMax= (the listening
sockets kept in the store and passed back, the cache file written at stop
and read at start); the others with a plain stop and start, their port
closed in between.

A benchmark sizes one for its load by overriding tuning() (defaults
here), and runs it under another command (taskset, valgrind) by setting
prefix."""

import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import dns.message

from dnstest import ports, proc
from dnstest.named import BindServer
from dnstest.sdnotify import wrapper

from . import usage

LOOPBACK = ports.LOOPBACK
FDNAME = "dnsdamper-listen"     # the daemon's stored sockets: this name
                                # (before threads) or FDNAME/WORKER/...


class Contestant:
    """One forwarder under test on host (a loopback address). start()
    returns the port the clients query; wait_ready() waits until it
    answers; restart() stops and starts it again on that port; stop()
    ends what start() started, by PID."""

    name = "?"

    def __init__(self, workdir, args, host=LOOPBACK):
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.args = args
        self.host = ports.check_loopback(host)
        self.proc = None
        self.port = None
        self.upstream_port = None
        self.generation = 0         # restarts so far
        self.cpu_before = 0.0       # CPU s of the processes restarts ended
        self.prefix = []            # argv prefix: taskset -c CPUS, valgrind

    @property
    def log_path(self):
        g = f".{self.generation}" if self.generation else ""
        return self.dir / f"{self.name}{g}.log"

    def start(self, upstream_port, port=None):
        """Configure and start; port None picks a free one on host."""
        self.upstream_port = upstream_port
        self.port = port or ports.free_port(self.host)
        self.configure()
        self.launch()
        return self.port

    def configure(self):
        """Write and check the configuration for self.port."""

    def launch(self):
        """Start the process of the configuration written."""
        raise NotImplementedError

    def restart(self):
        """Stop, then start on the same port: the port is closed in
        between, as with a plain `systemctl restart`."""
        self.stop_for_restart()
        self.launch()

    def stop_for_restart(self):
        c = self.cpu_seconds()
        self.cpu_before += c or 0.0
        rc = self.stop()
        self.generation += 1
        return rc

    def _spawn(self, argv, env=None, pass_fds=()):
        self.proc = proc.spawn(self.prefix + argv, self.log_path,
                               cwd=self.dir, env=env, pass_fds=pass_fds)

    def alive(self):
        return self.proc is None or proc.alive(self.proc)

    def cpu_seconds(self):
        """User + system CPU time the current process has used, or None."""
        if self.proc is None or not proc.alive(self.proc):
            return None
        return usage.process_seconds(self.proc.pid)

    def rss_bytes(self):
        """Resident set size of the current process now, or None."""
        if self.proc is None or not proc.alive(self.proc):
            return None
        return usage.rss_bytes(self.proc.pid)

    def cpu_total(self):
        """CPU s of every process of this contestant so far (restarts
        included; a stopped process's last moments are not counted)."""
        return self.cpu_before + (self.cpu_seconds() or 0.0)

    def stop(self):
        if self.proc is None:
            return None
        rc, killed = proc.stop(self.proc, signal.SIGTERM, 10.0)
        return "killed" if killed else rc

    def report(self):
        """Save whatever the contestant can tell about its run."""

    def log_text(self):
        return proc.read_log(self.log_path)

    def wait_ready(self, bind, deadline):
        """Ask ready.harness.test TXT through the contestant every 0.25 s
        until named's (bind's) token comes back, or raise at deadline
        (monotonic s)."""
        q = dns.message.make_query(f"ready.{BindServer.HARNESS_ZONE}", "TXT")
        wire = q.to_wire()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((ports.check_loopback(self.host), self.port))
            while time.monotonic() < deadline:
                if not self.alive():
                    raise RuntimeError(f"{self.name} exited during "
                                       f"start-up:\n{self.log_text()}")
                try:
                    s.send(wire)
                    s.settimeout(0.25)
                    if bind.token.encode() in s.recv(65535):
                        return
                except OSError:
                    pass
                time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not answer on "
                           f"{self.host}:{self.port} in time:\n"
                           f"{self.log_text()}")


class Direct(Contestant):
    name = "direct"

    def start(self, upstream_port, port=None):
        self.upstream_port = self.port = upstream_port
        return self.port

    def launch(self):
        pass


class Dnsmasq(Contestant):
    name = "dnsmasq"

    def argv(self):
        binary = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
        # --conf-file=/dev/null: no /etc/dnsmasq.conf; --no-resolv: no
        # /etc/resolv.conf; --no-hosts: no /etc/hosts; no DHCP options.
        return [binary, "--conf-file=/dev/null", "--no-resolv",
                "--no-hosts", f"--server={LOOPBACK}#{self.upstream_port}",
                f"--listen-address={self.host}", f"--port={self.port}",
                "--bind-interfaces", "--keep-in-foreground",
                "--log-facility=-",
                f"--pid-file={self.dir / 'dnsmasq.pid'}"] + self.tuning()

    def tuning(self):
        """Options a benchmark sizes for its load."""
        return ["--cache-size=10000"]

    def launch(self):
        self._spawn(self.argv())


class Unbound(Contestant):
    name = "unbound"

    def config(self):
        d = self.dir
        tuned = "".join(f"\t{line}\n" for line in self.tuning())
        return f"""\
# written by contrib/bench: forward everything to one upstream on
# loopback; no root hints traffic, no validation, no remote control
server:
	interface: {self.host}@{self.port}
	port: {self.port}
	outgoing-interface: {LOOPBACK}
	do-ip6: no
	access-control: 127.0.0.0/8 allow
	do-not-query-localhost: no
	chroot: ""
	username: ""
	directory: "{d}"
	pidfile: "{d}/unbound.pid"
	use-syslog: no
	logfile: ""
	verbosity: 1
	module-config: "iterator"
	harden-referral-path: no
	qname-minimisation: no
	prefetch: yes
	serve-expired: yes
	serve-expired-ttl: 86400
	serve-expired-client-timeout: 1800
	ede: yes
	ede-serve-expired: yes
{tuned}	# test. is one of unbound's built-in local zones (RFC 6761 names),
	# answered NXDOMAIN without asking anyone; bench.test must be forwarded
	local-zone: "test." nodefault
remote-control:
	control-enable: no
forward-zone:
	name: "."
	forward-addr: {LOOPBACK}@{self.upstream_port}
"""

    def tuning(self):
        """server: lines ("name: value") a benchmark sizes for its load;
        none here (defaults)."""
        return []

    def configure(self):
        self.conf = self.dir / "unbound.conf"
        self.conf.write_text(self.config())
        check = shutil.which("unbound-checkconf") or \
            "/usr/sbin/unbound-checkconf"
        r = subprocess.run([check, str(self.conf)], capture_output=True,
                           text=True, timeout=30)
        if r.returncode != 0:
            raise RuntimeError(f"unbound-checkconf {self.conf}:\n"
                               f"{r.stdout}{r.stderr}")

    def launch(self):
        binary = shutil.which("unbound") or "/usr/sbin/unbound"
        self._spawn([binary, "-d", "-c", str(self.conf)])


class Dnsdamper(Contestant):
    """cache_file: a path, or None for `cache-file none` (a cache file
    would carry a warm cache from one run into the next). notify: a
    dnstest.sdnotify.NotifySocket playing systemd's, or None; with one,
    restart() goes through the fd store."""

    name = "dnsdamper"
    _known = {}                 # binary -> the directives it knows

    def __init__(self, workdir, args, host=LOOPBACK, cache_file=None,
                 notify=None):
        super().__init__(workdir, args, host)
        self.cache_file = cache_file
        self.notify = notify
        self.binary = Path(args.dnsdamper)

    def known_directives(self, resolv):
        """The global directives this build knows, from the canonical
        configuration it prints for an almost empty file (`-t -v`)."""
        key = str(self.binary)
        if key not in self._known:
            probe = self.dir / "probe.conf"
            probe.write_text(f"listen {self.host}:{self.port}\n"
                             f"resolv-conf {resolv}\n"
                             f"forward . {{ upstream {LOOPBACK}:"
                             f"{self.upstream_port} }}\n")
            r = subprocess.run([str(self.binary), "-t", "-v", "-c",
                                str(probe)],
                               capture_output=True, text=True, timeout=30)
            self._known[key] = {
                line.split()[0] for line in r.stdout.splitlines()
                if line and not line[0].isspace() and line[0] != "#"}
        return self._known[key]

    def config(self, resolv):
        """Defaults, except what a benchmark cannot take from them: the
        listen address, the upstream, the cache file (see the class); the
        control socket in the run's directory, not /run; and, started as
        root on a host without the user `dnsdamper`, `user root`, as
        unbound's `username: ""`."""
        known = self.known_directives(resolv)
        lines = ["# written by contrib/bench",
                 f"listen {self.host}:{self.port}",
                 f"resolv-conf {resolv}"]
        if "cache-file" in known:
            lines.append(f"cache-file {self.cache_file or 'none'}")
        self.control = None
        if "control" in known:
            sock = self.dir / "control.sock"
            if len(str(sock)) <= 107:
                self.control = sock
                lines.append(f"control {sock}")
            else:
                lines.append("control none")
        if "user" in known and os.geteuid() == 0:
            try:
                pwd.getpwnam("dnsdamper")
            except KeyError:
                lines.append("user root")
        lines += self.tuning(known)
        lines.append(f"forward . {{ upstream {LOOPBACK}:"
                     f"{self.upstream_port} }}")
        return "\n".join(lines) + "\n"

    def tuning(self, known):
        """Directives a benchmark sizes for its load, given the global
        directives this build knows (known); none here (defaults)."""
        return []

    def configure(self):
        resolv = self.dir / "resolv.conf"
        # never read (forward . names its upstream), loopback even so
        resolv.write_text(f"nameserver {LOOPBACK}\n")
        self.conf = self.dir / "dnsdamper.conf"
        self.conf.write_text(self.config(resolv))
        r = subprocess.run([str(self.binary), "-t", "-c", str(self.conf)],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise RuntimeError(f"dnsdamper -t -c {self.conf}:\n"
                               f"{r.stdout}{r.stderr}")

    def argv(self):
        argv = [str(self.binary), "-c", str(self.conf)]
        if self.args.verbose_daemon:
            argv.append("-v")
        return argv

    def launch(self):
        env = None if self.notify is None else \
            {**os.environ, **self.notify.env}
        self._spawn(self.argv(), env)

    def stored_fds(self):
        """The notifications in which the running process stored its
        listening sockets (one, or one a socket, each with its name), or
        None."""
        pid = self.proc.pid
        stored = [m for m in self.notify.messages
                  if m.pid == pid and m.get("FDSTORE") == "1" and
                  (m.get("FDNAME") == FDNAME or
                   (m.get("FDNAME") or "").startswith(FDNAME + "/"))]
        return stored or None

    def restart(self, ready_timeout=10.0):
        """As `systemctl restart` with FileDescriptorStoreMax=: the process
        stops (and writes its cache file); the sockets it stored stay open
        here, so queries wait in them; the next process gets them as
        LISTEN_FDS, reads the cache file and says READY=1 (waited for, at
        most ready_timeout s). Without a NotifySocket, or if nothing was
        stored, a plain restart."""
        stored = None if self.notify is None else self.stored_fds()
        if stored is None:
            return super().restart()
        fds, names = [], []
        for m in stored:
            taken = self.notify.take(m)
            fds += taken
            names += [m.get("FDNAME")] * len(taken)
        try:
            self.stop_for_restart()
            env = {**os.environ, **self.notify.env,
                   "LISTEN_FDS": str(len(fds)),
                   "LISTEN_FDNAMES": ":".join(names)}
            self._spawn(wrapper(pid_env=["LISTEN_PID"], fds=fds) +
                        self.argv(), env, pass_fds=fds)
        finally:
            for fd in fds:
                os.close(fd)
        pid = self.proc.pid
        self.notify.wait_for(
            lambda m: m.pid == pid and m.get("READY") == "1",
            ready_timeout, f"READY=1 from {self.name} {pid}")

    def ctl(self, what):
        """dnsdamperctl's output (stdout + stderr) for command what, or
        None if this build has no control socket or dnsdamperctl, or the
        daemon is not running. Raises OSError or TimeoutExpired (30 s)."""
        ctl = self.binary.parent / "dnsdamperctl"
        if self.control is None or not ctl.is_file() or not self.alive():
            return None
        r = subprocess.run([str(ctl), "-s", str(self.control), what],
                           capture_output=True, text=True, timeout=30)
        return r.stdout + r.stderr

    def report(self):
        """Its own counters and upstream state, saved beside its log."""
        for what in ("stats", "upstreams"):
            try:
                out = self.ctl(what)
            except (OSError, subprocess.TimeoutExpired) as e:
                out = f"dnsdamperctl {what}: {e}\n"
            if out is not None:
                (self.dir / f"dnsdamperctl-{what}.txt").write_text(out)


CLASSES = {c.name: c for c in (Direct, Dnsmasq, Unbound, Dnsdamper)}

