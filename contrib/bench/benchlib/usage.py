"""What the machine and a process use: CPU time from /proc/stat and
/proc/PID/stat, memory from /proc/PID/status, read without starting
anything (proc(5))."""

import os
import time

_TICK = os.sysconf("SC_CLK_TCK")


def process_seconds(pid):
    """User + system CPU seconds process pid (all its threads) has used so
    far, or None if it is gone."""
    try:
        f = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    fields = f.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def rss_bytes(pid):
    """Resident set size of process pid now (VmRSS), in bytes, or None if
    it is gone."""
    try:
        f = open(f"/proc/{pid}/status").read()
    except OSError:
        return None
    kib = [line.split()[1] for line in f.splitlines()
           if line.startswith("VmRSS:")]
    return int(kib[0]) * 1024 if kib else None


def _cpu_line():
    """Clock ticks of all CPUs since boot from the cpu line of /proc/stat:
    user, nice, system, idle, iowait, irq, softirq, steal."""
    with open("/proc/stat") as f:
        return [int(v) for v in f.readline().split()[1:9]]


def machine_ticks():
    """(busy, total) clock ticks of all CPUs since boot; idle and iowait
    are not busy (guest time is already in user)."""
    vals = _cpu_line()
    total = sum(vals)
    return total - vals[3] - vals[4], total


def busy_fraction(before, after):
    """Share of the machine's CPU time that was busy between two
    machine_ticks() readings (0..1, all CPUs together)."""
    busy = after[0] - before[0]
    total = after[1] - before[1]
    return busy / total if total > 0 else 0.0


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


class Others:
    """How much CPU everything else on the machine took from its creation
    to text(): the machine's user and system time less this process's and
    its waited-for children's. Interrupt time is left out: much of it is a
    benchmark's own loopback traffic."""

    def __init__(self):
        self.t0, self.busy0, self.own0, self.steal0 = self.read()

    @staticmethod
    def read():
        """(monotonic s, machine user + system s, own s, steal s)."""
        user, nice, system, *_, steal = _cpu_line()
        t = os.times()
        own = t.user + t.system + t.children_user + t.children_system
        return (time.monotonic(), (user + nice + system) / _TICK, own,
                steal / _TICK)

    def text(self):
        t1, busy1, own1, steal1 = self.read()
        wall = t1 - self.t0
        others = max(0.0, (busy1 - self.busy0) - (own1 - self.own0))
        n = os.cpu_count()
        return (f"other processes used {others:.0f} CPU-s in {wall:.0f} s "
                f"({others / wall / n:.0%} of {n} CPUs); steal "
                f"{(steal1 - self.steal0) / wall / n:.0%}")
