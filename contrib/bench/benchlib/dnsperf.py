"""dnsperf runs against one server on loopback, and the figures of its
report."""

import collections
import re
import subprocess

from dnstest import ports

from .contestants import LOOPBACK

# one dnsperf run: queries per second, mean and standard deviation of
# latency (ms), queries completed and lost, {rcode: count} of the answers
Result = collections.namedtuple(
    "Result", "qps mean_ms sd_ms completed lost rcodes")


def run(port, queries, seconds, clients, outstanding, once=False,
        prefix=()):
    """Run dnsperf against LOOPBACK:port on the query file queries for at
    most seconds, with clients sockets and outstanding queries in flight;
    once: stop at the file's end instead of starting over; prefix: an argv
    to run it under (taskset -c CPUS). Returns a Result; raises
    RuntimeError if dnsperf printed no report."""
    ports.check_loopback(LOOPBACK)
    argv = ["dnsperf", "-s", LOOPBACK, "-p", str(port), "-d", str(queries),
            "-l", str(seconds), "-c", str(clients), "-q", str(outstanding),
            "-t", "2"] + (["-n", "1"] if once else [])
    r = subprocess.run(list(prefix) + argv, capture_output=True, text=True,
                       timeout=seconds + 30)
    return parse(r.stdout + r.stderr)


def warm(port, queries, prefix=()):
    """Every question of the file once (one socket, 50 in flight), so that
    the queries after it are cache hits. Returns a Result."""
    return run(port, queries, 300, 1, 50, once=True, prefix=prefix)


def parse(out):
    """The Result in dnsperf's report out; RuntimeError naming the first
    figure it lacks."""
    def num(label):
        m = re.search(label + r":\s+([\d.]+)", out)
        if m is None:
            raise RuntimeError(f"dnsperf gave no {label!r}:\n{out}")
        return float(m.group(1))
    codes = re.search(r"Response codes:\s+(.*)", out)
    rcodes = {} if codes is None else {
        k: int(v) for k, v in re.findall(r"(\w+) (\d+) \(", codes.group(1))}
    return Result(num("Queries per second"),
                  num(r"Average Latency \(s\)") * 1000,
                  num(r"Latency StdDev \(s\)") * 1000,
                  int(num("Queries completed")), int(num("Queries lost")),
                  rcodes)
