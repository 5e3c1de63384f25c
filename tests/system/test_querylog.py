"""log-queries: one line per answered query (or N of every M) in the
daemon's log, "query: " and the JSON object of dnsdamperctl monitor;
never more than 100 lines in a second of the wall clock, the queries
beyond counted and summarised in one line once a second.

Values: the zone's (example.test: www A 192.0.2.80), the sampling
arithmetic (1 of every 10 of 100 queries in a row is exactly 10,
wherever the count starts), and the cap (QUERYLOG_PER_SECOND, 100):
lines + queries summarised = queries answered.
"""

import json
import re
import socket
import time

import pytest

from dnstest import query
from dnstest.daemon import Forward

PER_SECOND = 100                # QUERYLOG_PER_SECOND


def _lines(d, since):
    return [json.loads(m) for m in
            re.findall(r"query: (\{.*\})$", d.stderr(since), re.M)]


def _held(d, since):
    return sum(int(n) for n in re.findall(
        r"log-queries: (\d+) queries not logged", d.stderr(since)))


def test_every_query_logged(dnsdamper, bind):
    d = dnsdamper([Forward(".", [bind])], extra=["log-queries yes"])
    mark = d.log_size()
    query.udp(d.port, "www.example.test")
    query.tcp(d.port, "www.example.test")
    d.wait_log(r"query: .*\"protocol\":\"tcp\"", since=mark)
    lines = _lines(d, mark)
    assert [(x["name"], x["protocol"], x["source"]) for x in lines] == [
        ("www.example.test.", "udp", "upstream"),
        ("www.example.test.", "tcp", "cache")], lines
    assert lines[0]["answer"][0].split()[-1] == "192.0.2.80"
    assert lines[0]["client"] == "127.0.0.1"


def test_one_in_ten(dnsdamper, bind):
    """threads 1: one worker's count, so exactly 10 of 100."""
    d = dnsdamper([Forward(".", [bind])],
                  extra=["log-queries 1/10", "threads 1"])
    mark = d.log_size()
    for i in range(100):
        query.udp(d.port, "www.example.test")
    # the last line is written before its answer is sent
    assert len(_lines(d, mark)) == 10


@pytest.mark.timeout_s(60)
def test_rate_cap(dnsdamper, bind):
    """Bursts of 500 queries (bounded: 10 bursts) until one goes over
    the cap; then every query is accounted for: logged, or in a
    summary; and no second of the wall clock has more than 100 lines."""
    d = dnsdamper([Forward(".", [bind])], extra=["log-queries yes"])
    query.udp(d.port, "www.example.test")
    mark = d.log_size()
    wire = query.make_query("www.example.test", "A").to_wire()
    sent = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(3.0)
        s.connect(("127.0.0.1", d.port))
        for burst in range(10):
            # 50 in flight at a time: none lost to a socket buffer
            for j in range(10):
                for i in range(50):
                    s.send(wire)
                for i in range(50):
                    s.recv(4096)
            sent += 500
            # the summary comes at the next tick, within a second
            try:
                d.wait_log(r"log-queries: \d+ queries not logged",
                           since=mark, timeout=1.5)
                break
            except AssertionError:
                continue
    held = _held(d, mark)
    assert held > 0, "never over the cap"
    # bounded: 5 s for the last summary
    deadline = time.monotonic() + 5
    while len(_lines(d, mark)) + _held(d, mark) < sent:
        assert time.monotonic() < deadline, \
            (sent, len(_lines(d, mark)), _held(d, mark))
        time.sleep(0.1)
    lines = _lines(d, mark)
    assert len(lines) + _held(d, mark) == sent
    per_second = {}
    for x in lines:
        sec = x["time"][:19]
        per_second[sec] = per_second.get(sec, 0) + 1
    assert max(per_second.values()) <= PER_SECOND, per_second
