"""dnsdamper-srv, the service-location command, run as a client runs it:
always told which resolver to ask (-s, a loopback address), never left to
find the host's own in /etc/resolv.conf; bounded in time."""

import json
import os
import subprocess
from pathlib import Path

from . import ports

_HERE = Path(__file__).resolve().parent

# dnsdamper-srv(1) exit statuses
FOUND = 0
UNAVAILABLE = 2
NONE = 3            # NXDOMAIN or NODATA
RESOLUTION = 4      # SERVFAIL, timeout
CONNECT = 5
USAGE = 64


def binary_path():
    top = os.environ.get("top_builddir") or str(_HERE.parents[2])
    return Path(top) / "src" / "dnsdamper-srv"


class Run:
    """One run: rc, stdout, stderr, and json (the parsed object, when
    --json was given and the output was one)."""

    def __init__(self, argv, cp):
        self.argv = argv
        self.rc = cp.returncode
        self.stdout = cp.stdout
        self.stderr = cp.stderr
        self.json = None
        if "--json" in argv and cp.stdout.strip():
            lines = cp.stdout.splitlines()
            assert len(lines) == 1, f"more than one line:\n{cp.stdout}"
            self.json = json.loads(lines[0])

    def order(self):
        """(priority, weight, port, target) of each candidate, in order."""
        return [(c["priority"], c["weight"], c["port"], c["target"])
                for c in self.json["candidates"]]

    def __repr__(self):
        return (f"<dnsdamper-srv {' '.join(self.argv)}: rc {self.rc}\n"
                f"stdout:\n{self.stdout}\nstderr:\n{self.stderr}>")


def run(port, *args, host=ports.LOOPBACK, timeout=30.0):
    """dnsdamper-srv -s host:port args...; a Run. subprocess.run kills it
    after timeout s."""
    ports.check_loopback(host)
    binary = binary_path()
    if not binary.is_file() or not os.access(binary, os.X_OK):
        raise AssertionError(f"{binary} not found or not executable: build "
                             f"it first (make), or set top_builddir")
    server = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    argv = ["-s", server, *[str(a) for a in args]]
    cp = subprocess.run([str(binary), *argv], stdin=subprocess.DEVNULL,
                        capture_output=True, text=True, timeout=timeout)
    return Run(argv, cp)
