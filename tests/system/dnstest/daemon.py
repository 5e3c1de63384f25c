"""Dnsdamper: the daemon under test, driven as a user would.

It is started as `dnsdamper -c CONFIG` in the foreground with stderr in a
file of the test's tmp dir; ready once it answers on its listen port;
reloaded with SIGHUP; stopped with SIGTERM by PID. Every config it gets has
a `forward .` with explicit loopback upstreams and a resolv-conf that names
only loopback, so it never reads /etc/resolv.conf nor sends anywhere else,
and `hosts-file none` unless the test gives hosts-file lines, so that the
machine's /etc/hosts never answers for a test. It runs two worker
threads (`threads 2`) unless the test's lines say otherwise.
"""

import functools
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

from . import ports, proc, wire
from .control import Control

_HERE = Path(__file__).resolve().parent

# DNSTEST_VALGRIND set (non-empty): every daemon runs under valgrind's
# memcheck, which exits VALGRIND_STATUS on any memory error and on any
# leak at exit (definite, indirect or possible), its report in
# valgrind.log of the daemon's directory. Everything takes some 20 times
# longer: start and stop wait VALGRIND_SLOWER times as long.
VALGRIND = bool(os.environ.get("DNSTEST_VALGRIND"))
VALGRIND_STATUS = 97
VALGRIND_SLOWER = 10

# How many times as long a stop and a start take in a sanitizer build as
# in a plain one, for deadlines that must hold on a busy machine. Measured
# on a 2-core VM shared with seven other builds (SIGTERM to exit, exec to
# the first answer, threads 2): plain 20-50 ms and 40-90 ms; with
# AddressSanitizer 0.3-0.5 s and 0.2-0.35 s; with ThreadSanitizer 1.3-1.9 s
# and 0.5-0.8 s. ThreadSanitizer's time is its runtime's: at start page
# faults as it zeroes its own tables (the deadlock detector's, each
# thread's context, its allocator's free lists) and sets the shadow of
# each mapping; at exit the shadow of every large block freed is reset
# (some 800 madvise and 250 munmap calls); a few hundred ms of CPU (perf),
# which a busy machine stretches to seconds.
TSAN_SLOWER = 20
ASAN_SLOWER = 8


def valgrind_argv(workdir):
    """The argv prefix that runs a program under memcheck for
    DNSTEST_VALGRIND, its report in workdir/valgrind.log."""
    return ["valgrind", "--quiet", "--leak-check=full",
            "--show-leak-kinds=definite,indirect,possible",
            "--errors-for-leak-kinds=definite,indirect,possible",
            f"--error-exitcode={VALGRIND_STATUS}",
            f"--log-file={Path(workdir) / 'valgrind.log'}"]


def binary_path():
    """$top_builddir/src/dnsdamper; top_builddir defaults to the source
    tree this file is in (tests/system/dnstest -> ../../..)."""
    top = os.environ.get("top_builddir") or str(_HERE.parents[2])
    return Path(top) / "src" / "dnsdamper"


@functools.lru_cache(maxsize=None)
def build_slower(binary=None):
    """How many times as long as a plain build's binary (default
    binary_path()) takes to stop and start: VALGRIND_SLOWER under
    DNSTEST_VALGRIND, TSAN_SLOWER or ASAN_SLOWER for a build with
    ThreadSanitizer or AddressSanitizer (the runtime's entry point among
    its symbols), else 1."""
    if VALGRIND:
        return VALGRIND_SLOWER
    data = Path(binary or binary_path()).read_bytes()
    if b"__tsan_init" in data:
        return TSAN_SLOWER
    if b"__asan_init" in data:
        return ASAN_SLOWER
    return 1


def upstream(port, host=ports.LOOPBACK):
    """`host:port` for a config, host checked to be loopback."""
    ports.check_loopback(host)
    if not isinstance(port, int):
        raise TypeError(f"port {port!r} is not an int")
    return f"{host}:{port}"


def _upstream_of(u):
    """An upstream given as a port, a (host, port) pair, or a server object
    with a .port (BindServer, Blackhole)."""
    if isinstance(u, tuple):
        return upstream(u[1], u[0])
    return upstream(getattr(u, "port", u))


class Forward:
    """`forward ZONE { upstream ADDR... [policy P] [max-inflight N] }`;
    upstreams as for _upstream_of()."""

    def __init__(self, zone, upstreams, policy=None, max_inflight=None):
        self.zone = zone
        self.upstreams = [_upstream_of(u) for u in upstreams]
        self.policy = policy
        self.max_inflight = max_inflight

    def line(self):
        policy = f"  policy {self.policy}" if self.policy else ""
        budget = f"  max-inflight {self.max_inflight}" \
            if self.max_inflight is not None else ""
        return (f"forward {self.zone} {{ upstream "
                f"{' '.join(self.upstreams)}{policy}{budget} }}")


def config_text(listen_port, forwards, resolv_conf, extra=()):
    """A whole config file. extra: more directive lines, verbatim."""
    if not any(f.zone == "." for f in forwards):
        raise ValueError("every test config needs a `forward .` with "
                         "explicit loopback upstreams")
    state = Path(resolv_conf).parent
    lines = ["# written by the dnsdamper system tests",
             f"listen {upstream(listen_port)}",
             f"resolv-conf {resolv_conf}"]
    # Each daemon its own control socket, no shared cache file, not the
    # machine's /etc/hosts (the daemon's default), and under root no
    # privilege drop, unless the test says otherwise.
    given = {l.split()[0] for l in extra if l.strip()}
    # Two worker threads, unless the test says otherwise (`threads 1`
    # for what one thread alone shows exactly, such as one worker's
    # eviction order at tcp-clients).
    defaults = [("control", f"control {state / 'control.sock'}"),
                ("cache-file", "cache-file none"),
                ("hosts-file", "hosts-file none"),
                ("threads", "threads 2")]
    if os.geteuid() == 0:
        defaults.append(("user", "user root"))
    lines += [line for name, line in defaults if name not in given]
    lines += list(extra)
    lines += [f.line() for f in forwards]
    return "\n".join(lines) + "\n"


class DaemonError(AssertionError):
    pass


# sd_notify(3), sd_listen_fds(3), sd_watchdog_enabled(3), journal
_SYSTEMD_VARS = {"NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID",
                 "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID",
                 "JOURNAL_STREAM"}


class Dnsdamper:
    """One daemon in workdir. start() returns self once it answers."""

    def __init__(self, workdir, forwards, extra=(), binary=None,
                 ready_name="ready.harness.test", port=None, env=None,
                 wrapper=(), pass_fds=()):
        """port: listen there instead of a free port picked now; env:
        variables added to the daemon's environment (from which those of
        systemd's protocols are otherwise removed); wrapper: argv put
        before the daemon's (it must exec the daemon, which so keeps its
        PID); pass_fds: descriptors the daemon (or wrapper) inherits."""
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.binary = Path(binary) if binary else binary_path()
        self._port_given = port is not None
        self.port = port if port is not None else ports.free_port()
        self.env = dict(env or {})
        # valgrind last: the wrapper execs it, it runs the daemon
        self.wrapper = list(wrapper) + (valgrind_argv(self.dir)
                                        if VALGRIND else [])
        self.pass_fds = tuple(pass_fds)
        self.conf_path = self.dir / "dnsdamper.conf"
        self.log_path = self.dir / "dnsdamper.stderr"
        self.resolv_conf = self.dir / "resolv.conf"
        # loopback only, even if some directive made the daemon read it
        self.resolv_conf.write_text("nameserver 127.0.0.1\n")
        self.ready_name = ready_name
        self.proc = None
        self.stopped_by_test = False
        self._forwards = forwards
        self._extra = list(extra)
        self.write_config(self.config(forwards, extra))

    def config(self, forwards, extra=()):
        """Config text for this daemon's port and resolv.conf."""
        return config_text(self.port, forwards, self.resolv_conf, extra)

    def write_config(self, text):
        self.conf_path.write_text(text)

    def set_forwards(self, forwards, extra=None):
        """Before start(): replace the forwards (and extra lines, if given)
        of the generated config, for an upstream that could only be made
        once this daemon's port was known (one that forwards back to it)."""
        if self.proc is not None:
            raise DaemonError("set_forwards() is for a daemon not started")
        self._forwards = forwards
        if extra is not None:
            self._extra = list(extra)
        self.write_config(self.config(self._forwards, self._extra))

    @property
    def control_path(self):
        """The control socket config_text() names (unless extra did)."""
        return self.dir / "control.sock"

    def control(self, path=None):
        """A Control for its control socket (or path)."""
        return Control(path or self.control_path)

    def environment(self):
        """The daemon's environment: ours without the variables of
        systemd's protocols (a test runner started by systemd must not
        hand its NOTIFY_SOCKET on), plus self.env."""
        env = {k: v for k, v in os.environ.items()
               if k not in _SYSTEMD_VARS}
        env.update(self.env)
        return env

    def spawn(self):
        """Start the process and return at once (no readiness check)."""
        if not self.binary.is_file() or not os.access(self.binary, os.X_OK):
            raise DaemonError(
                f"{self.binary} not found or not executable: build it first "
                f"(make), or set top_builddir to the build tree")
        self.proc = proc.spawn(
            self.wrapper + [str(self.binary), "-c", str(self.conf_path)],
            self.log_path, cwd=self.dir, env=self.environment(),
            pass_fds=self.pass_fds)
        return self

    def run_to_exit(self, timeout=5.0):
        """Start the daemon expecting it to exit by itself: its exit
        status, or None if it had not exited within timeout s (it is then
        stopped by PID, and the test owns the stop either way)."""
        self.spawn()
        self.stopped_by_test = True
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        finally:
            proc.stop(self.proc)

    def start(self, timeout=5.0):
        if VALGRIND:
            timeout *= VALGRIND_SLOWER
        for attempt in range(3):
            self.spawn()
            try:
                self.wait_ready(timeout)
                return self
            except DaemonError:
                # another process took the free port before the daemon
                # bound it: try once more on a new port, if the config is
                # still the one generated here
                generated = self.config(self._forwards, self._extra)
                if proc.alive(self.proc) or attempt == 2 or \
                        self._port_given or "in use" not in self.stderr() or \
                        self.conf_path.read_text() != generated:
                    raise
                proc.stop(self.proc)
                self.port = ports.free_port()
                self.write_config(self.config(self._forwards, self._extra))
        raise AssertionError("not reached")

    def wait_ready(self, timeout=5.0):
        """Poll with a query for ready_name until any answer comes back (the
        rcode does not matter: it shows the daemon is serving). One socket,
        a new query every 0.2 s, all answers accepted, up to timeout s."""
        q = wire.query(0x7eed, self.ready_name, qtype=16)
        deadline = time.monotonic() + timeout
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((ports.LOOPBACK, self.port))
            while time.monotonic() < deadline:
                if not proc.alive(self.proc):
                    raise DaemonError(
                        f"dnsdamper exited with status "
                        f"{self.proc.returncode} during start-up:\n"
                        f"{self.stderr()}")
                try:
                    s.send(q)
                    s.settimeout(0.2)
                    if s.recv(65535):
                        return
                except (socket.timeout, ConnectionRefusedError):
                    pass
                time.sleep(0.02)
        raise DaemonError(f"dnsdamper did not answer on 127.0.0.1:{self.port}"
                          f" within {timeout}s:\n{self.stderr()}")

    def alive(self):
        return self.proc is not None and proc.alive(self.proc)

    def assert_alive(self):
        if not self.alive():
            rc = None if self.proc is None else self.proc.returncode
            raise DaemonError(f"dnsdamper is not running (status {rc}):\n"
                              f"{self.stderr()}")

    def signal(self, sig):
        proc.signal_pid(self.proc, sig)

    def log_size(self):
        try:
            return os.path.getsize(self.log_path)
        except FileNotFoundError:
            return 0

    def reload(self, text=None):
        """Write text as the config (if given) and SIGHUP. Returns the log
        position before the signal, for wait_log()."""
        if text is not None:
            self.write_config(text)
        self.assert_alive()
        mark = self.log_size()
        self.signal(signal.SIGHUP)
        return mark

    def wait_log(self, pattern, since=0, timeout=5.0):
        """The first match of regex pattern in the log after position since,
        polled every 20 ms for up to timeout s; DaemonError if none."""
        rx = re.compile(pattern, re.M)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.stderr(since))
            if m:
                return m
            if time.monotonic() >= deadline:
                raise DaemonError(f"no /{pattern}/ in the dnsdamper log "
                                  f"within {timeout}s:\n{self.stderr()}")
            time.sleep(0.02)

    def stop(self, timeout=5.0):
        """SIGTERM by PID; wait up to timeout s, then SIGKILL. Returns
        (status, killed)."""
        if self.proc is None:
            return None, False
        if VALGRIND:
            timeout *= VALGRIND_SLOWER
        return proc.stop(self.proc, signal.SIGTERM, timeout)

    def valgrind_log(self):
        """What memcheck reported (DNSTEST_VALGRIND), or ""."""
        return proc.read_log(self.dir / "valgrind.log")

    def stderr(self, since=0):
        return proc.read_log(self.log_path, since)

    def check(self, conf_path=None, timeout=10.0):
        """Run `dnsdamper -t -c conf_path`; returns CompletedProcess (text).
        subprocess.run kills it if it exceeds timeout."""
        if not self.binary.is_file():
            raise DaemonError(f"{self.binary} not found: build it first")
        return run_check(self.binary, conf_path or self.conf_path, timeout,
                         cwd=self.dir)


def run_check(binary, conf_path, timeout=10.0, cwd=None):
    """`dnsdamper -t -c conf_path`, bounded by timeout s."""
    binary = Path(binary)
    if not binary.is_file() or not os.access(binary, os.X_OK):
        raise DaemonError(f"{binary} not found or not executable: build it "
                          f"first (make), or set top_builddir")
    return subprocess.run([str(binary), "-t", "-c", str(conf_path)],
                          stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)
