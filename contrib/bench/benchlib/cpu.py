"""How busy the machine and a process were: /proc/stat and
/proc/PID/stat, read without starting anything (proc(5))."""

import os

_TICK = os.sysconf("SC_CLK_TCK")


def process_seconds(pid):
    """User + system CPU seconds process pid has used so far, or None if
    it is gone."""
    try:
        f = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    fields = f.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def machine_ticks():
    """(busy, total) clock ticks of all CPUs since boot, from the cpu line
    of /proc/stat; idle and iowait are not busy."""
    with open("/proc/stat") as f:
        vals = [int(v) for v in f.readline().split()[1:]]
    total = sum(vals[:8])           # guest time is already in user
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
