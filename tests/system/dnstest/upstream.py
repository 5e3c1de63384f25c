"""Blackhole: a UDP upstream the test owns that reads every query and never
answers, to make the daemon time out on it."""

import socket
import threading

from . import ports


class Blackhole:
    """Bound to 127.0.0.1 on a free port; a thread reads and counts what
    arrives (so a test can tell that the daemon did try it) until stop().
    The read loop wakes every 0.2 s, so stop() takes at most that long."""

    def __init__(self, host=ports.LOOPBACK):
        ports.check_loopback(host)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"blackhole:{self.port}")
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                self.sock.recv(65535)
            except socket.timeout:
                continue
            except OSError:
                return
            self.received += 1

    def stop(self):
        self._stop.set()
        self._thread.join(2.0)
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
