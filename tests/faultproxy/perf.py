#!/usr/bin/python3
"""perf.py: how many queries per second go through faultproxy, measured
with dnsperf (apt-get install dnsperf) against a real named, loopback only.

    tests/faultproxy/perf.py [--rate 3000] [--seconds 5] [--outstanding 2000]

Starts a named (the system tests' harness, zones from tests/system/zones),
then for each case a proxy in front of it, runs
`dnsperf -s 127.0.0.1 -p PORT -Q RATE -l SECONDS -q OUTSTANDING` once, and
stops everything by PID. Cases: named alone, proxy without faults, proxy
with delay 100 ms +- 50 ms. Every run is bounded by -Q and -l (and a
subprocess timeout). Prints one line per case.

--outstanding must exceed rate x delay (3000/s x 0.1 s = 300 in flight):
dnsperf's default of 100 would cap a delayed run at 1000 queries/s.
"""

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))             # faultproxy
sys.path.insert(0, str(HERE.parent / "system"))  # dnstest

from dnstest import proc                    # noqa: E402
from dnstest.named import BindServer        # noqa: E402
from faultproxy.driver import FaultProxy    # noqa: E402

ZONES = HERE.parent / "system" / "zones"
# answers named has for these (zones/example.test.zone): A, CNAME chain,
# SRV with additionals, NXDOMAIN
QUERIES = """\
www.example.test A
alive.example.test A
chain-a.example.test A
_http._tcp.srv.example.test SRV
perf-nxdomain.example.test A
target.srv.example.test AAAA
"""

CASES = [
    ("named alone", None),
    ("proxy, no faults", {}),
    ("proxy, delay 100+-50 ms", {"delay_mean": 100, "delay_stddev": 50}),
]


def dnsperf(port, query_file, rate, seconds, outstanding):
    argv = ["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d",
            str(query_file), "-Q", str(rate), "-l", str(seconds), "-q",
            str(outstanding), "-t", "5"]
    r = subprocess.run(argv, capture_output=True, text=True,
                       timeout=seconds + 30)
    return argv, r.stdout + r.stderr


def field(text, label):
    m = re.search(re.escape(label) + r"\s*([0-9.]+)", text)
    return float(m.group(1)) if m else float("nan")


def summary(out):
    m = re.search(r"Average Latency \(s\):\s*([0-9.]+) \(min ([0-9.]+), "
                  r"max ([0-9.]+)\)", out)
    avg, lo, hi = (float(x) for x in m.groups()) if m else (0.0,) * 3
    sd = field(out, "Latency StdDev (s):")
    lost = re.search(r"Queries lost:\s*(\d+)", out)
    return (f"{field(out, 'Queries per second:'):9.1f} qps  latency avg "
            f"{avg * 1000:7.2f} ms  sd {sd * 1000:6.2f}  min "
            f"{lo * 1000:6.2f}  max {hi * 1000:7.2f}  lost "
            f"{lost.group(1) if lost else '?'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=int, default=3000)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--outstanding", type=int, default=2000)
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print dnsperf's whole output too")
    args = ap.parse_args()
    if not 0 < args.rate <= 50000 or not 0 < args.seconds <= 60:
        ap.error("keep it bounded: rate 1..50000, seconds 1..60")
    if shutil.which("dnsperf") is None:
        sys.exit("perf.py: needs dnsperf: apt-get install dnsperf")
    work = Path(tempfile.mkdtemp(prefix="fp-perf-"))
    query_file = work / "queries"
    query_file.write_text(QUERIES)
    named = BindServer(work, "perf")
    named.add_zone_file(ZONES / "example.test.zone")
    named.start()
    try:
        for label, faults in CASES:
            fp = None
            port = named.port
            if faults is not None:
                fp = FaultProxy(work / f"fp{len(label)}", named.port,
                                seed=1, lifetime=args.seconds + 60,
                                **faults).start()
                port = fp.port
            try:
                argv, out = dnsperf(port, query_file, args.rate,
                                    args.seconds, args.outstanding)
            finally:
                stats = fp.stop() if fp else None
            print(f"{label:26} {summary(out)}")
            if args.verbose:
                print("  $ " + " ".join(argv))
                print(out)
                if stats:
                    print(f"  proxy counters: {stats}")
    finally:
        named.stop()
        left = proc.reap_all()
        if left:
            print(f"perf.py: had to kill {left}", file=sys.stderr)
    print(f"(named's own log, proxy logs: {work})")


if __name__ == "__main__":
    main()
