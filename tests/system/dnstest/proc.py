"""Start and stop the processes a test owns, by PID, leaving none behind.

Every process is started through spawn() and so registered; stop() ends it
by its PID (signal, bounded wait, SIGKILL, wait). reap_all() runs at the end
of the session and at interpreter exit as a safety net and says which
processes it had to kill: a non-empty answer is a harness bug.
"""

import atexit
import os
import re
import signal
import subprocess

_live = {}


def spawn(argv, log_path, cwd=None, env=None, pass_fds=()):
    """Start argv with stdin from /dev/null and stdout+stderr to log_path;
    pass_fds: descriptors it inherits (subprocess closes all others)."""
    with open(log_path, "wb") as log:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                             stderr=subprocess.STDOUT, cwd=cwd, env=env,
                             pass_fds=tuple(pass_fds))
    _live[p.pid] = p
    return p


def read_log(log_path, since=0):
    """What a spawned process has written to log_path from octet since on,
    decoded leniently; "" if the file does not exist yet."""
    try:
        with open(log_path, "rb") as f:
            f.seek(since)
            return f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def alive(p):
    return p.poll() is None


def signal_pid(p, sig):
    """Send sig to p by its PID, unless it has already exited (and been
    reaped, so that the PID may belong to someone else now)."""
    if p.poll() is None:
        p.send_signal(sig)


def stop(p, sig=signal.SIGTERM, timeout=5.0):
    """End p: send sig, wait up to timeout s, then SIGKILL and wait.

    Returns (returncode, killed): killed is True if SIGKILL was needed.
    The process is reaped whatever happens, even if this is interrupted.
    """
    killed = False
    try:
        if p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                killed = True
                p.kill()
                p.wait(timeout)
    finally:
        if p.poll() is None:
            killed = True
            p.kill()
            try:
                p.wait(5.0)
            except subprocess.TimeoutExpired:
                pass
        if p.poll() is not None:
            _live.pop(p.pid, None)
    return p.returncode, killed


def reap_all():
    """Kill whatever spawn() started and nobody stopped; return their argv."""
    left = []
    for p in list(_live.values()):
        if p.poll() is None:
            left.append(p.args)
        stop(p, signal.SIGKILL, 5.0)
    return left


def socket_inodes(pid):
    """The inodes of the sockets process pid holds (its /proc/PID/fd)."""
    out = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        m = re.fullmatch(r"socket:\[(\d+)\]", target)
        if m:
            out.add(int(m.group(1)))
    return out


def live_pids():
    return [pid for pid, p in _live.items() if p.poll() is None]


atexit.register(reap_all)
