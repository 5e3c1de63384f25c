"""benchlib: the pieces the benchmarks of contrib/bench share.

sdzone        the service-discovery zone bench.test (SRV -> A) and its names
scenario      fault proxy schedules: load, put a set-up phase in front, end
contestants   dnsmasq, unbound and dnsdamper (and "direct") started on a
              loopback address, forwarding to one upstream, restarted as
              their service managers would, stopped by PID
sdclient      the clients: SRV-then-A lookups over UDP, one record each
cpu           how busy the machine and a process were

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
