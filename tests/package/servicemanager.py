"""The service manager the package test installs under.

Emulated: systemd is not PID 1 (this machine, CI). The maintainer scripts
believe it is (/run/systemd/system exists in the test's own /run) and their
systemctl, first on PATH, is a shim that hands its arguments to
EmulatedManager, which records each call and does what systemd would with
dnsdamper.service as installed:

- ExecStartPre=, then ExecStart=, read from the installed unit file, run as
  a dynamic user (an unused uid, DynamicUser=) with the unit's
  AmbientCapabilities= and CapabilityBoundingSet=, NoNewPrivileges=, and a
  clean environment;
- RuntimeDirectory= and StateDirectory= made and owned by that user (the
  /var/lib/private indirection of DynamicUser= is not emulated: it needs
  the service's own mount namespace); the runtime directory outlives a
  restart (RuntimeDirectoryPreserve=restart) and not a stop;
- Type=notify: start returns at READY=1; FileDescriptorStoreMax=: the
  descriptors sent with FDSTORE=1 are kept (FDSTOREREMOVE=1 drops those of
  the name) and handed to the next start of a restart as LISTEN_FDS with
  LISTEN_FDNAMES, LISTEN_PID and WATCHDOG_PID its own PID, as
  tests/system/test_systemd.py emulates it; a stop closes them;
- stop: SIGTERM, and the main process must exit 0 within 10 s.
Calls with --root= (deb-systemd-helper's preset) touch unit files only and
go to systemd's own systemctl.

Real: systemd is PID 1. The scripts' systemctl is systemd's; a drop-in
puts the service into the test's network namespace (NetworkNamespacePath=),
so that it serves, and reaches its upstream, on the test's loopback only.
"""

import json
import os
import pwd
import shlex
import socket
import subprocess
import threading
import time
from pathlib import Path

from dnstest import proc
from dnstest.sdnotify import NotifySocket, wrapper

UNIT = "dnsdamper.service"
UNIT_PATH = Path("/lib/systemd/system") / UNIT
WANTS = Path("/etc/systemd/system/multi-user.target.wants") / UNIT
FDNAME = "dnsdamper-listen"     # the stored sockets' names: FDNAME/WORKER/...
SERVICE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

SHIM = """#!/usr/bin/python3
# systemctl for the package test: the arguments go to the test's emulated
# service manager, which answers with the output and exit status.
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect({path!r})
s.sendall(json.dumps(sys.argv[1:]).encode() + b"\\n")
reply = json.loads(s.makefile().readline())
sys.stdout.write(reply["out"])
sys.exit(reply["rc"])
"""


def unit_settings(path=UNIT_PATH):
    """The [Service] settings of a unit file: {key: [values, in order]}."""
    out, section = {}, None
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line
        elif section == "[Service]":
            key, _, value = line.partition("=")
            out.setdefault(key, []).append(value)
    return out


def _caps(values):
    """AmbientCapabilities= values as setpriv's list: -all,+net_bind_service."""
    caps = [c.lower()[len("cap_"):] for v in values for c in v.split()]
    return ",".join(["-all"] + [f"+{c}" for c in caps])


def _free_uid():
    """A uid in systemd's dynamic range that no user has."""
    for uid in range(61184, 65519):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    raise RuntimeError("no free uid in 61184-65519")


class EmulatedManager:
    real = False

    def __init__(self, work):
        self.work = Path(work)
        self.calls = []          # each systemctl argv, in order
        self.proc = None         # the main process
        self.starts = []         # (pid, log path) of each main process
        self.fds = []            # the fd store
        self.fdnames = []        # their names, in order
        self.uid = _free_uid()
        self.notify = NotifySocket(self.work / "notify.sock")
        # anyone may write to it, as to systemd's /run/systemd/notify
        os.chmod(self.notify.path, 0o777)
        self.sock_path = self.work / "systemctl.sock"
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(self.sock_path))
        self.server.listen(4)
        self.shim_dir = self.work / "shim"
        self.shim_dir.mkdir()
        shim = self.shim_dir / "systemctl"
        shim.write_text(SHIM.format(path=str(self.sock_path)))
        shim.chmod(0o755)
        self.errors = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    # --- the systemctl shim's other end -----------------------------------

    def env(self):
        """The environment for dpkg: the shim first on PATH."""
        return {**os.environ,
                "PATH": f"{self.shim_dir}:{os.environ.get('PATH', '')}"}

    def _serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                argv = json.loads(conn.makefile().readline())
                self.calls.append(argv)
                try:
                    rc, out = self._systemctl(argv)
                except Exception as e:      # the test fails on these
                    self.errors.append(f"systemctl {argv}: {e!r}")
                    rc, out = 1, f"emulated systemctl: {e!r}\n"
                conn.sendall(json.dumps({"rc": rc, "out": out}).encode() +
                             b"\n")

    def actions(self):
        """The systemctl verbs called, options left out."""
        return [[a for a in argv if not a.startswith("-")]
                for argv in self.calls]

    def _systemctl(self, argv):
        if any(a.startswith("--root=") for a in argv):
            # unit files only (deb-systemd-helper's preset): no manager
            # needed, systemd's own systemctl does it
            r = subprocess.run(["/usr/bin/systemctl", *argv], text=True,
                               capture_output=True, timeout=60)
            return r.returncode, r.stdout + r.stderr
        words = [a for a in argv if not a.startswith("-")]
        verb, units = words[0], words[1:]
        if verb == "daemon-reload":
            return 0, ""
        if verb == "is-enabled":
            on = all(u == UNIT and WANTS.exists() for u in units)
            return (0, "enabled\n") if on else (1, "disabled\n")
        if verb == "is-active":
            rc, out = (0, "active\n") if self.running() else \
                (3, "inactive\n")
            return rc, "" if "--quiet" in argv else out
        if any(u not in (UNIT, "dnsdamper.socket") for u in units):
            raise ValueError(f"unit not emulated: {units}")
        if verb == "start" and not self.running():
            self.start()
        elif verb in ("restart", "try-restart") and (
                self.running() or verb == "restart"):
            self.restart()
        elif verb == "stop":
            self.stop()
        elif verb not in ("start", "try-restart"):
            raise ValueError(f"verb not emulated: {verb}")
        return 0, ""

    # --- the unit ---------------------------------------------------------

    def running(self):
        return self.proc is not None and proc.alive(self.proc)

    def _sandbox(self, settings):
        """argv prefix: the dynamic user with the unit's capabilities."""
        caps = _caps(settings.get("AmbientCapabilities", []))
        bounding = _caps(settings.get("CapabilityBoundingSet", []))
        return ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}",
                "--clear-groups", f"--inh-caps={caps}",
                f"--ambient-caps={caps}", f"--bounding-set={bounding}",
                "--no-new-privs"]

    def _directories(self, settings):
        """RuntimeDirectory= and StateDirectory=: made, owned by the user;
        their paths for the environment."""
        env = {}
        for key, root, var in (("RuntimeDirectory", "/run", "RUNTIME"),
                               ("StateDirectory", "/var/lib", "STATE")):
            paths = [Path(root) / name for v in settings.get(key, [])
                     for name in v.split()]
            for p in paths:
                p.mkdir(mode=0o755, exist_ok=True)
                os.chown(p, self.uid, self.uid)
            if paths:
                env[f"{var}_DIRECTORY"] = ":".join(map(str, paths))
        return env

    def start(self):
        settings = unit_settings()
        assert settings["Type"] == ["notify"], settings["Type"]
        sandbox = self._sandbox(settings)
        env = {"PATH": SERVICE_PATH, "LANG": "C.UTF-8",
               **self._directories(settings), **self.notify.env}
        if "WatchdogSec" in settings:
            secs = settings["WatchdogSec"][-1].rstrip("s")
            env["WATCHDOG_USEC"] = str(int(float(secs) * 1e6))
        for line in settings.get("ExecStartPre", []):
            r = subprocess.run(sandbox + shlex.split(line), env=env,
                               capture_output=True, text=True, timeout=30)
            assert r.returncode == 0, f"ExecStartPre={line}: {r.stderr}"
        fds = self.fds
        if fds:
            env["LISTEN_FDS"] = str(len(fds))
            env["LISTEN_FDNAMES"] = ":".join(self.fdnames)
        argv = sandbox + wrapper(pid_env=["LISTEN_PID", "WATCHDOG_PID"],
                                 fds=fds) + shlex.split(
                                     settings["ExecStart"][-1])
        log = self.work / f"dnsdamper.{len(self.starts)}.log"
        self.proc = proc.spawn(argv, log, env=env, pass_fds=fds)
        self.starts.append((self.proc.pid, log))
        pid = self.proc.pid
        self._message(lambda m: m.pid == pid and m.get("READY") == "1",
                      f"READY=1 from {pid}")
        self._take_fds(pid)

    def _message(self, pred, what, timeout=30.0):
        """The first notification, read or to come, that satisfies pred."""
        deadline = time.monotonic() + timeout
        while True:
            for m in self.notify.messages:
                if pred(m):
                    return m
            assert self.running(), f"dnsdamper exited before {what}"
            assert time.monotonic() < deadline, f"no {what} in {timeout}s"
            self.notify.drain(0.05)

    def _take_fds(self, pid):
        """The fd store, once the daemon at pid has stored its sockets
        (before its READY=1): FDSTOREREMOVE=1 of the old names first,
        then FDSTORE=1 for each, one socket a message, named
        FDNAME/WORKER/PROTO/ADDRESS."""
        ready = self._message(lambda m: m.pid == pid and
                              m.get("READY") == "1", f"READY=1 from {pid}")
        before = self.notify.messages[:self.notify.messages.index(ready)]
        stored = [m for m in before
                  if m.pid == pid and m.get("FDSTORE") == "1"]
        assert stored, f"no FDSTORE=1 from {pid} before READY=1"
        for m in stored:
            assert (m.get("FDNAME") or "").startswith(FDNAME + "/") and \
                len(m.fds) == 1, m
        assert any(n.pid == pid and n.get("FDSTOREREMOVE") == "1"
                   for n in before[:before.index(stored[0])]), \
            "FDSTORE=1 without FDSTOREREMOVE=1 before it"
        old = self.fds
        self.fds = [self.notify.take(m)[0] for m in stored]
        self.fdnames = [m.get("FDNAME") for m in stored]
        for fd in old:
            os.close(fd)

    def _end(self):
        """SIGTERM; the main process must exit 0 within 10 s."""
        status, killed = proc.stop(self.proc, timeout=10.0)
        assert (status, killed) == (0, False), \
            f"dnsdamper exited {status} (killed: {killed})"

    def restart(self):
        if self.running():
            self._end()
        self.start()

    def stop(self):
        if self.running():
            self._end()
        for fd in self.fds:
            os.close(fd)
        self.fds = []
        self.fdnames = []
        for v in unit_settings().get("RuntimeDirectory", []):
            for name in v.split():
                subprocess.run(["rm", "-rf", f"/run/{name}"], check=True)

    def main_pid(self):
        return self.proc.pid if self.running() else None

    def log(self, i=-1):
        return proc.read_log(self.starts[i][1]) if self.starts else ""

    def close(self):
        if self.proc is not None:
            proc.stop(self.proc, timeout=10.0)
        for fd in self.fds:
            os.close(fd)
        self.fds = []
        self.fdnames = []
        self.server.close()
        self.notify.close()


class RealManager:
    """systemd as PID 1: its systemctl, the service in our network
    namespace by a runtime drop-in."""

    real = True
    DROPIN = Path("/run/systemd/system") / f"{UNIT}.d" / "pkgtest.conf"

    def __init__(self, work):
        self.work = Path(work)
        self.DROPIN.parent.mkdir(parents=True, exist_ok=True)
        self.DROPIN.write_text(
            "# dnsdamper's package test: serve on the test's loopback only\n"
            "[Service]\n"
            f"NetworkNamespacePath=/proc/{os.getpid()}/ns/net\n")
        self._systemctl("daemon-reload")

    def env(self):
        return dict(os.environ)

    def _systemctl(self, *args):
        return subprocess.run(["systemctl", *args], capture_output=True,
                              text=True, timeout=120)

    def actions(self):
        return None              # not recorded: systemd's own journal has them

    def running(self):
        return self._systemctl("--quiet", "is-active", UNIT).returncode == 0

    def main_pid(self):
        r = self._systemctl("show", "-P", "MainPID", UNIT)
        pid = int(r.stdout.strip() or 0)
        return pid or None

    def log(self, i=-1):
        r = subprocess.run(["journalctl", "-u", UNIT, "-o", "cat", "-n",
                            "200", "--no-pager"], capture_output=True,
                           text=True, timeout=60)
        return r.stdout

    def close(self):
        self._systemctl("stop", UNIT)
        try:
            self.DROPIN.unlink()
            self.DROPIN.parent.rmdir()
        except OSError:
            pass
        self._systemctl("daemon-reload")

