"""The daemon's control API from the outside: HTTP/1.1 over its unix
socket (or over TCP for metrics-listen), the Prometheus text exposition
format 0.0.4 parsed, and dnsdamperctl run with a bounded time.

http.client does the HTTP (RFC 9112: status line, header fields,
Content-Length or chunked transfer coding); only the connection is ours, a
unix stream socket instead of TCP. Every exchange has a timeout.
"""

import http.client
import json
import os
import re
import socket
import subprocess
from pathlib import Path

from . import ports

_HERE = Path(__file__).resolve().parent


class HttpResponse:
    """status (int), reason, headers (field names lower-cased), body
    (bytes, de-chunked), chunked (the body came chunked)."""

    def __init__(self, status, reason, headers, body, chunked):
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.chunked = chunked

    @property
    def text(self):
        return self.body.decode("utf-8")

    def json(self):
        return json.loads(self.body)

    def header(self, name):
        return self.headers.get(name.lower())

    def __repr__(self):
        return (f"<HTTP {self.status} {self.reason} {self.headers}\n"
                f"{self.body[:2000].decode('utf-8', 'replace')}>")


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("dnsdamper", timeout=timeout)
        self._path = str(path)

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            s.connect(self._path)
        except OSError:
            s.close()
            raise
        self.sock = s


def _exchange(conn, method, target, body):
    try:
        conn.request(method, target, body=body,
                     headers={"Connection": "close"})
        r = conn.getresponse()
        headers = {k.lower(): v for k, v in r.getheaders()}
        chunked = "chunked" in headers.get("transfer-encoding", "")
        data = r.read() if method != "HEAD" else b""
        return HttpResponse(r.status, r.reason, headers, data, chunked)
    finally:
        conn.close()


def http_unix(path, method, target, body=None, timeout=5.0):
    """One request over the unix socket at path; an HttpResponse."""
    return _exchange(_UnixConnection(path, timeout), method, target, body)


def http_tcp(port, method, target, host=ports.LOOPBACK, body=None,
             timeout=5.0):
    """One request to host:port over TCP (loopback only)."""
    ports.check_loopback(host)
    return _exchange(http.client.HTTPConnection(host, port, timeout=timeout),
                     method, target, body)


class Control:
    """The control socket of one daemon."""

    def __init__(self, path):
        self.path = Path(path)

    def request(self, method, target, **kw):
        return http_unix(self.path, method, target, **kw)

    def get(self, target, **kw):
        return self.request("GET", target, **kw)

    def post(self, target, **kw):
        return self.request("POST", target, **kw)

    def ok(self, method, target):
        """The response to a request that must succeed (200)."""
        r = self.request(method, target)
        assert r.status == 200, f"{method} {target}: {r!r}"
        return r

    def metrics(self):
        """GET /metrics, parsed (an Exposition)."""
        return Exposition(self.ok("GET", "/metrics").text)

    def stats(self):
        return self.ok("GET", "/stats").json()

    def cache_lines(self):
        """GET /cache: its lines, the comment split off:
        [(rr_text, state_comment)]."""
        out = []
        for line in self.ok("GET", "/cache").text.splitlines():
            rr, sep, comment = line.partition("\t; ")
            out.append((rr, comment) if sep else (line, None))
        return out


# --- Prometheus text exposition format 0.0.4 ------------------------------
# https://prometheus.io/docs/instrumenting/exposition_formats/:
#   # HELP name docstring        (\\ and \n escaped)
#   # TYPE name counter|gauge|histogram|summary|untyped
#   name{label="value",...} value [timestamp]
# label values escape \\, \" and \n.

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE_RE = re.compile(
    rf"^({_NAME})(?:\{{(.*)\}})?\s+(\S+)(?:\s+(-?\d+))?$")
_LABEL_RE = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"'
                       r'\s*(,|$)')


def _unescape(v):
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1),
                                                     m.group(1)), v)


def _labels(text):
    out = {}
    pos = 0
    while pos < len(text):
        m = _LABEL_RE.match(text, pos)
        if not m:
            raise ValueError(f"bad label set {{{text}}} at {pos}")
        out[m.group(1)] = _unescape(m.group(2))
        pos = m.end()
    return out


def _number(v):
    # float() reads the format's +Inf, -Inf and NaN as they are written
    return float(v)


class Exposition:
    """A parsed scrape. families: {name: {"type": t, "help": h}} in
    order; samples: {(name, frozenset(labels.items())): value}; lines of
    samples in order: [(name, labels, value)]."""

    def __init__(self, text):
        self.text = text
        self.families = {}
        self.samples = {}
        self.order = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            if line.startswith("#"):
                parts = line.split(None, 3)
                if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                    fam = self.families.setdefault(parts[2], {})
                    key = parts[1].lower()
                    if key in fam:
                        raise ValueError(f"line {n}: second {parts[1]} "
                                         f"for {parts[2]}")
                    fam[key] = parts[3] if len(parts) > 3 else ""
                continue
            m = _SAMPLE_RE.match(line)
            if not m:
                raise ValueError(f"line {n}: not a sample: {line!r}")
            labels = _labels(m.group(2) or "")
            key = (m.group(1), frozenset(labels.items()))
            if key in self.samples:
                raise ValueError(f"line {n}: duplicate series {line!r}")
            value = _number(m.group(3))
            self.samples[key] = value
            self.order.append((m.group(1), labels, value))

    def get(self, name, **labels):
        """The value of the series name{labels} (exactly those labels);
        KeyError if there is none."""
        key = (name, frozenset(labels.items()))
        if key not in self.samples:
            raise KeyError(f"no series {name}{labels} in the scrape")
        return self.samples[key]

    def value(self, name, default=0.0, **labels):
        return self.samples.get((name, frozenset(labels.items())), default)

    def series(self, name):
        """[(labels, value)] of every sample called name."""
        return [(lab, v) for n, lab, v in self.order if n == name]

    def family_of(self, sample_name):
        """The family a sample belongs to: itself, or for a histogram's
        _bucket/_sum/_count series the histogram."""
        if sample_name in self.families:
            return sample_name
        for suffix in ("_bucket", "_sum", "_count"):
            base = sample_name[:-len(suffix)]
            if sample_name.endswith(suffix) and \
                    self.families.get(base, {}).get("type") == "histogram":
                return base
        return None


def diff(before, after):
    """{(name, labels): after - before} for every series whose value
    changed (a series only in after counts from 0)."""
    out = {}
    for key, v in after.samples.items():
        d = v - before.samples.get(key, 0.0)
        if d != 0:
            out[key] = d
    return out


def key(name, **labels):
    return (name, frozenset(labels.items()))


# --- dnsdamperctl -----------------------------------------------------------

def ctl_path():
    top = os.environ.get("top_builddir") or str(_HERE.parents[2])
    return Path(top) / "src" / "dnsdamperctl"


def ctl(*args, timeout=10.0, prefix=(), binary=None):
    """Run dnsdamperctl args (with prefix before it, e.g. runuser);
    a CompletedProcess with text stdout and stderr. subprocess.run kills
    it after timeout s."""
    binary = Path(binary) if binary else ctl_path()
    if not binary.is_file() or not os.access(binary, os.X_OK):
        raise AssertionError(f"{binary} not found or not executable: build "
                             f"it first (make), or set top_builddir")
    return subprocess.run([*prefix, str(binary), *args],
                          stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout)
