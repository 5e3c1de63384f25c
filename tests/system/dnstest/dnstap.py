"""dnstap's real consumers: fstrm_capture (fstrm-bin) receiving Frame
Streams on a unix socket and writing them to a file, and dnstap-ldns
decoding such a file (its YAML output, one document per message).

Every capture is a process started through proc.spawn and stopped by PID.
"""

import os
import re
import signal
import subprocess
import time

from . import proc

CONTENT_TYPE = "protobuf:dnstap.Dnstap"


class Capture:
    """fstrm_capture on unix socket `sock`, writing to `out`."""

    def __init__(self, workdir, sock, out):
        self.dir = workdir
        self.sock = sock
        self.out = out
        self.log = workdir / f"{out.name}.capture.log"
        self.proc = None

    def start(self, timeout=5.0):
        if self.sock.exists():
            self.sock.unlink()
        self.proc = proc.spawn(["fstrm_capture", "-t", CONTENT_TYPE,
                                "-u", str(self.sock), "-w", str(self.out)],
                               self.log)
        deadline = time.monotonic() + timeout
        while not self.sock.exists():
            assert proc.alive(self.proc), proc.read_log(self.log)
            assert time.monotonic() < deadline, "fstrm_capture not ready"
            time.sleep(0.02)
        return self

    def kill(self):
        """SIGKILL: the collector dies without a word."""
        proc.stop(self.proc, signal.SIGKILL)

    def stop(self):
        """SIGTERM: it finishes the file (fstrm_capture exits cleanly)."""
        status, killed = proc.stop(self.proc, signal.SIGTERM)
        assert not killed, proc.read_log(self.log)
        return status

    def log_text(self):
        return proc.read_log(self.log)

    def size(self):
        try:
            return os.path.getsize(self.out)
        except FileNotFoundError:
            return 0


def frames(path):
    """The data frames of the Frame Streams file at path (a 4-octet
    big-endian length, then the payload; length 0 escapes a control
    frame, which is skipped), in order."""
    data = path.read_bytes()
    out = []
    i = 0
    while i + 4 <= len(data):
        n = int.from_bytes(data[i:i + 4], "big")
        i += 4
        if n == 0:                      # control frame: length, body
            n = int.from_bytes(data[i:i + 4], "big")
            i += 4 + n
            continue
        out.append(data[i:i + n])
        i += n
    return out


def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def extra(payload):
    """Field 3 (extra) of a Dnstap payload, as text, or None: the one
    field dnstap-ldns 0.2.1 does not print. Protobuf's wire format: a
    varint key (field << 3 | wire type), then the value."""
    i = 0
    while i < len(payload):
        key, i = _varint(payload, i)
        field, wtype = key >> 3, key & 7
        if wtype == 0:
            _, i = _varint(payload, i)
        elif wtype == 2:
            n, i = _varint(payload, i)
            if field == 3:
                return payload[i:i + n].decode("utf-8")
            i += n
        elif wtype == 5:
            i += 4
        elif wtype == 1:
            i += 8
        else:
            raise ValueError(f"wire type {wtype}")
    return None


def read(path, timeout=10.0):
    """The messages of the Frame Streams file at path, decoded by
    dnstap-ldns -y: a list of dicts, one per message, with the fields
    dnstap-ldns prints (type, identity, version, query_address,
    socket_protocol, query_message, response_message ...) as strings,
    and `extra` from the frames themselves (extra())."""
    r = subprocess.run(["dnstap-ldns", "-y", "-r", str(path)],
                       capture_output=True, timeout=timeout)
    text = r.stdout.decode("utf-8", "replace")
    messages = []
    for doc in text.split("---"):
        if not doc.strip():
            continue
        m = {}
        key = None
        for line in doc.splitlines():
            f = re.match(r"^\s*(\w+):\s*(.*)$", line)
            if f and not line.startswith("    " * 2):
                key = f.group(1)
                value = f.group(2).strip()
                if value in ("|", ""):
                    m.setdefault(key, "")
                else:
                    m[key] = value.strip('"')
            elif key is not None:
                m[key] = m.get(key, "") + line.strip() + "\n"
        messages.append(m)
    payloads = frames(path)
    assert len(payloads) == len(messages), (len(payloads), text)
    for m, p in zip(messages, payloads):
        m["extra"] = extra(p)
    return messages
