"""Free loopback ports, and the guard that keeps every target on loopback."""

import ipaddress
import socket
import threading

LOOPBACK = "127.0.0.1"

_given = set()
_lock = threading.Lock()


def check_loopback(host):
    """Raise ValueError unless host is a loopback address (127/8 or ::1).

    Every address the harness sends to or writes into a config passes here
    first: no test may ever aim a packet anywhere else.
    """
    addr = ipaddress.ip_address(host)
    if not addr.is_loopback:
        raise ValueError(f"{host} is not a loopback address")
    return host


def free_port(host=LOOPBACK, tries=100):
    """A port on host that is free for both UDP and TCP right now.

    The kernel picks a free UDP port (bind to port 0); the same number must
    then bind over TCP too. A port is never handed out twice in one process,
    so two servers of one test cannot collide. Another process may still take
    it before our server binds it; the servers' start-up checks catch that.
    """
    check_loopback(host)
    for _ in range(tries):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.bind((host, 0))
            port = u.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
                try:
                    t.bind((host, port))
                except OSError:
                    continue
        with _lock:
            if port in _given:
                continue
            _given.add(port)
        return port
    raise RuntimeError(f"no free UDP+TCP port on {host} after {tries} tries")


def dead_port(host=LOOPBACK):
    """A port nobody listens on (UDP gets ICMP port unreachable, TCP RST)."""
    return free_port(host)
