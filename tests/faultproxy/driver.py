"""FaultProxy: start faultproxy.py in front of an upstream, drive it through
its control socket, stop it by PID. Used by the system tests' `faultproxy`
fixture and by benchmarks.

    fp = FaultProxy(workdir, upstream_port, seed=1, loss=0.01).start()
    fp.port                 # where the client should send its queries
    fp.set(outage=True)     # replace the faults now (control socket)
    fp.clear()              # back to the flags and the schedule
    fp.stats()              # counters
    fp.timeline()           # queries per second of the proxy's clock
    fp.stop()               # SIGTERM by PID; returns the final counters
"""

import ipaddress
import json
import os
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path

# started and stopped through the system tests' registry of processes, so
# that their safety net (and a benchmark's) knows about every proxy
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "system"))
from dnstest import proc  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "faultproxy.py"
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) \
    else sys.executable

# sockaddr_un's sun_path is 108 octets on Linux, with its NUL
_SUN_PATH_MAX = 107


class FaultProxyError(AssertionError):
    pass


def _flag(key, value):
    """--key value for a fault keyword argument (loss=0.1 -> --loss 0.1;
    lowercase=True -> --lowercase)."""
    opt = "--" + key.replace("_", "-")
    if value is True:
        return [opt]
    if value is False or value is None:
        return []
    return [opt, str(value)]


class FaultProxy:
    """One faultproxy process. faults are its command-line flags (keys as
    in the control protocol: delay_mean, loss, spoof_kind, ...); schedule a
    path or a dict written to a file; lifetime a safety bound in s after
    which the proxy exits by itself; listen_port 0 for any free port, or
    one the caller picked (to write it into configurations before the
    proxy starts)."""

    def __init__(self, workdir, upstream_port, *, upstream_host="127.0.0.1",
                 listen_host="127.0.0.1", listen_port=0, schedule=None,
                 seed=None, lifetime=600, extra=(), **faults):
        for host in (upstream_host, listen_host):
            if not ipaddress.ip_address(host).is_loopback:
                raise ValueError(f"{host} is not a loopback address")
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.dir / "faultproxy.log"
        self.control_path = self.dir / "control.sock"
        if len(str(self.control_path)) > _SUN_PATH_MAX:
            self.control_path = Path(tempfile.mkdtemp(prefix="fp")) / "c"
        self.upstream = (upstream_host, upstream_port)
        self.listen_host = listen_host
        self.listen_port = listen_port
        self.schedule_path = None
        if isinstance(schedule, dict):
            self.schedule_path = self.dir / "schedule.json"
            self.schedule_path.write_text(json.dumps(schedule, indent=1))
        elif schedule is not None:
            self.schedule_path = Path(schedule)
        self.seed = seed
        self.lifetime = lifetime
        self.faults = faults
        self.extra = list(extra)
        self.proc = None
        self.port = None
        self.started = None      # monotonic instant the proxy was ready
        self.t0 = None           # monotonic instant of its clock's 0
        self.final_stats = None

    def argv(self):
        host, port = self.upstream
        up = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        listen = f"[{self.listen_host}]:{self.listen_port}" \
            if ":" in self.listen_host \
            else f"{self.listen_host}:{self.listen_port}"
        argv = [PYTHON, str(PROGRAM), "--listen", listen, "--upstream", up,
                "--control", str(self.control_path)]
        if self.seed is not None:
            argv += ["--seed", str(self.seed)]
        if self.lifetime:
            argv += ["--lifetime", str(self.lifetime)]
        if self.schedule_path is not None:
            argv += ["--schedule", str(self.schedule_path)]
        for key, value in sorted(self.faults.items()):
            argv += _flag(key, value)
        return argv + self.extra

    def start(self, timeout=10.0):
        """Start the proxy; return self once it has printed its port and
        its control socket answers. t0 is then the monotonic instant of
        the proxy's clock 0 (the origin of its schedule and timeline), to
        within half the control socket's round trip."""
        self.proc = proc.spawn(self.argv(), self.log_path, cwd=self.dir)
        deadline = time.monotonic() + timeout
        while self.port is None:
            for line in self.log_text().splitlines():
                if line.startswith("listening "):
                    self.port = int(line.rsplit(":", 1)[1])
                    self.started = time.monotonic()
            if self.port is not None:
                break
            if self.proc.poll() is not None:
                raise FaultProxyError(
                    f"faultproxy exited with status {self.proc.returncode} "
                    f"during start-up:\n{self.log_text()}")
            if time.monotonic() > deadline:
                raise FaultProxyError(f"faultproxy not ready within "
                                      f"{timeout}s:\n{self.log_text()}")
            time.sleep(0.02)
        before = time.monotonic()
        uptime = self.command({"get": None})["uptime"]
        self.t0 = (before + time.monotonic()) / 2 - uptime
        return self

    # --- control socket ------------------------------------------------

    def command(self, request, timeout=5.0):
        """Send one request object, return the reply object; a reply with
        ok false raises FaultProxyError."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(self.control_path))
            s.sendall(json.dumps(request).encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        reply = json.loads(buf)
        if not reply.get("ok"):
            raise FaultProxyError(f"faultproxy refused {request!r}: "
                                  f"{reply.get('error')}")
        return reply

    def set(self, **faults):
        """Replace the faults in force with exactly these (none: no
        faults); schedule and flags no longer apply until clear()."""
        return self.command({"set": faults})["faults"]

    def clear(self):
        """Drop what set() put in force: schedule and flags apply again."""
        return self.command({"set": None})

    def get(self):
        """{"faults", "source" (control|schedule|flags), "phase", ...}"""
        return self.command({"get": None})

    def stats(self):
        return self.command({"stats": None})["stats"]

    def reset(self):
        """Zero the counters; returns them as they were."""
        return self.command({"reset": None})["stats"]

    def timeline(self):
        """{series: [queries in second 0, 1, ... of the proxy's clock]}
        (README.md, "Timeline"); reset() does not touch it."""
        return self.command({"timeline": None})["timeline"]

    # --- process -----------------------------------------------------

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=5.0):
        """SIGTERM by PID, bounded wait (then SIGKILL). Returns the counters
        the proxy printed as it exited (None if it printed none). Raises
        FaultProxyError if it had to be killed or exited with an error."""
        if self.proc is None:
            return None
        if self.final_stats is None:
            rc, killed = proc.stop(self.proc, signal.SIGTERM, timeout)
            if killed or rc != 0:
                raise FaultProxyError(
                    f"faultproxy {'was killed' if killed else 'exited'} "
                    f"with status {rc}:\n{self.log_text()}")
            lines = [ln for ln in self.log_text().splitlines()
                     if ln.startswith("{")]
            self.final_stats = json.loads(lines[-1]) if lines else {}
        return self.final_stats

    def log_text(self):
        return proc.read_log(self.log_path)

    def __repr__(self):
        return f"<FaultProxy 127.0.0.1:{self.port} -> {self.upstream}>"
