"""benchlib: the pieces the benchmarks of contrib/bench share.

contestants     dnsmasq, unbound and dnsdamper (and "direct") started on a
                loopback address, forwarding to one upstream, restarted as
                their service managers would, stopped by PID; tuning()
                hooks and an argv prefix for the benchmarks that size or
                pin them
perfcontestants perf's and instructions' contestants: benchlib's with
                caches sized for perf.test and 1 or 2 threads, the floor,
                kresd and pdns_recursor
sdzone          the service-discovery zone bench.test (SRV -> A) and its
                names
perfzone        the zone perf.test and perf's questions (hit, new, Zipf mix)
scenario        fault proxy schedules: load, put a set-up phase in front,
                end
sdclient        the clients: SRV-then-A lookups over UDP, one record each
dnsperf         dnsperf runs on a query file and the figures of its report
usage           CPU time and memory of the machine and of a process
timeline        per-second figures: windows, peak-to-steady, lockstep

Importing it puts the test harness (tests/system/dnstest) and the fault
proxy (tests/faultproxy) on the module path: the benchmarks start and stop
processes, pick ports and check addresses with the harness's own code.
"""

import sys
from pathlib import Path

TOP = Path(__file__).resolve().parents[3]
for _p in (TOP / "tests", TOP / "tests" / "system"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))
