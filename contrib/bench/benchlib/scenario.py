"""Fault proxy schedules (tests/faultproxy/README.md, "Schedule") as the
benchmarks use them: t = 0 is the start of the clients, and a fault-free
set-up phase is put in front for the contestants to start."""

import json
from pathlib import Path


def load(path):
    """The schedule document at path; repeating schedules are refused (the
    set-up phase could not be put before them)."""
    path = Path(path)
    doc = json.loads(path.read_text())
    if doc.get("repeat"):
        raise SystemExit(f"{path}: repeating schedules are not supported "
                         f"(the set-up phase could not be put before them)")
    return doc


def shifted(doc, setup):
    """The schedule with a fault-free set-up phase of setup s put in front,
    so that the scenario's t = 0 is setup s after the proxy started. Keys
    other than phases and description (a benchmark's own) are left out."""
    phases = [{"name": "setup", "start": 0, "duration": setup,
               "faults": {}}]
    for i, p in enumerate(doc["phases"]):
        p = dict(p)
        start = p.get("start", "after previous")
        if start != "after previous":
            p["start"] = float(start) + setup
        elif i == 0:
            p["start"] = setup
        phases.append(p)
    out = {"phases": phases}
    if "description" in doc:
        out["description"] = doc["description"]
    return out


def schedule_end(doc):
    """End of the last phase with a duration (s on the scenario clock), or
    None if the schedule does not say."""
    t = 0.0
    end = None
    for p in doc["phases"]:
        start = p.get("start", "after previous")
        if start != "after previous":
            t = float(start)
        if "duration" in p:
            t += float(p["duration"])
            end = t
    return end
