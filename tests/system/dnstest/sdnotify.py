"""systemd's side of the daemon's protocols, played by the test, with no
systemd running:

NotifySocket  an AF_UNIX datagram socket for NOTIFY_SOCKET (sd_notify(3)):
              each datagram is newline-separated VAR=VALUE assignments; fds
              ride along as SCM_RIGHTS (FDSTORE=1); the sender's PID comes
              as SCM_CREDENTIALS because the socket has SO_PASSCRED set
              (unix(7)), as systemd's own notify socket does.
wrapper()     argv prefix that sets environment variables to the PID the
              daemon will have (LISTEN_PID, WATCHDOG_PID: sd_listen_fds(3),
              sd_watchdog_enabled(3)) and moves passed descriptors to 3, 4,
              ... (SD_LISTEN_FDS_START), then execs the daemon, so that it
              keeps the wrapper's PID.
"""

import array
import os
import socket
import struct
import sys
import time
from pathlib import Path

SD_LISTEN_FDS_START = 3

_WRAPPER = r"""
import fcntl, os, sys
args = sys.argv[1:]
pid_env, fds = [], []
while args[0] != "--":
    if args[0] == "--pid-env":
        pid_env.append(args[1])
    elif args[0] == "--fds":
        fds = [int(x) for x in args[1].split(",") if x]
    args = args[2:]
args = args[1:]
high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in fds]
for fd in fds:
    os.close(fd)
for i, fd in enumerate(high):
    os.dup2(fd, 3 + i)          # inheritable, unlike fd
    os.close(fd)
for name in pid_env:
    os.environ[name] = str(os.getpid())
os.execv(args[0], args)
"""


def wrapper(pid_env=(), fds=()):
    """argv prefix: the daemon started behind it has each variable of
    pid_env set to its own PID and the descriptors fds (of the starting
    process, passed with pass_fds) at 3, 4, ... in that order."""
    argv = [sys.executable, "-c", _WRAPPER]
    for name in pid_env:
        argv += ["--pid-env", name]
    if fds:
        argv += ["--fds", ",".join(str(fd) for fd in fds)]
    return argv + ["--"]


class Notification:
    """One sd_notify datagram: fields {VAR: VALUE} (in order), raw text,
    fds (descriptors received, owned by the NotifySocket until taken),
    pid of the sender, and the monotonic time it was read."""

    def __init__(self, raw, fds, pid, received):
        self.raw = raw
        self.fields = {}
        for line in raw.split("\n"):
            if line:
                k, _, v = line.partition("=")
                self.fields[k] = v
        self.fds = fds
        self.pid = pid
        self.received = received

    def get(self, name):
        return self.fields.get(name)

    def __repr__(self):
        return f"<notify pid={self.pid} fds={self.fds} {self.raw!r}>"


class NotifySocket:
    def __init__(self, path):
        self.path = Path(path)
        if len(str(self.path).encode()) >= 108:
            raise ValueError(f"{self.path}: too long for sun_path")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(self.path))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.messages = []
        self._seen = 0
        self._taken = set()

    @property
    def env(self):
        return {"NOTIFY_SOCKET": str(self.path)}

    def _receive(self, timeout):
        """Read one datagram within timeout s; None if none came."""
        self.sock.settimeout(max(timeout, 0.001))
        fd_size = array.array("i").itemsize
        try:
            data, anc, _flags, _addr = self.sock.recvmsg(
                65536, socket.CMSG_SPACE(64 * fd_size) +
                socket.CMSG_SPACE(struct.calcsize("3i")))
        except socket.timeout:
            return None
        fds, pid = [], None
        for level, kind, cdata in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                a = array.array("i")
                a.frombytes(cdata[:len(cdata) - len(cdata) % fd_size])
                fds += list(a)
            elif level == socket.SOL_SOCKET and \
                    kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("3i", cdata[:12])[0]
        n = Notification(data.decode("utf-8", "replace"), fds, pid,
                         time.monotonic())
        self.messages.append(n)
        return n

    def drain(self, timeout=0.0):
        """Read what arrives within timeout s; the new messages."""
        start = len(self.messages)
        deadline = time.monotonic() + timeout
        while self._receive(deadline - time.monotonic()) is not None:
            pass
        return self.messages[start:]

    def wait_for(self, pred, timeout=5.0, what="a notification"):
        """The first message not yet returned by wait_for that satisfies
        pred, reading for up to timeout s; AssertionError if none."""
        deadline = time.monotonic() + timeout
        while True:
            while self._seen < len(self.messages):
                m = self.messages[self._seen]
                self._seen += 1
                if pred(m):
                    return m
            left = deadline - time.monotonic()
            if left <= 0 or self._receive(left) is None:
                raise AssertionError(
                    f"no {what} within {timeout}s; received: "
                    f"{self.messages!r}")

    def wait_field(self, name, value=None, timeout=5.0):
        """The next message that has name (=value if given)."""
        return self.wait_for(
            lambda m: name in m.fields and (value is None or
                                            m.fields[name] == value),
            timeout, f"{name}={value if value is not None else '*'}")

    def take(self, msg):
        """The caller owns msg's descriptors now (and closes them)."""
        self._taken.update(msg.fds)
        return list(msg.fds)

    def close(self):
        for m in self.messages:
            for fd in m.fds:
                if fd not in self._taken:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
        self.sock.close()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
