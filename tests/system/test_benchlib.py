"""The instruments of contrib/bench/fleet, checked on data worked out by
hand: the per-second figures (benchlib/timeline.py) that say whether a
fleet is in lockstep, and the fleet scenarios, which must be valid fault
proxy schedules with the windows the figures are taken over. A benchmark
that measured wrong would send the daemon's fleet work the wrong way."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from faultproxy import driver

TOP = Path(__file__).resolve().parents[2]
BENCH = TOP / "contrib" / "bench"
sys.path.insert(0, str(BENCH))

from benchlib import scenario, timeline as tl  # noqa: E402

FLEET_SCENARIOS = sorted((BENCH / "scenarios" / "fleet").glob("*.json"))


def test_windows_and_ratios():
    xs = list(range(10))
    assert tl.window(xs, (2, 5)) == [2, 3, 4]
    assert tl.window(xs, (8.5, 20)) == [8, 9]       # whole seconds, clipped
    assert tl.mean([1, 2, 6]) == 3
    assert tl.median([5, 1, 3]) == 3 and tl.median([4, 1, 3, 2]) == 2.5
    assert math.isnan(tl.ratio(1, 0))


def test_max_over_median():
    assert tl.max_over_median([5, 5, 5]) == 1.0            # flat
    assert tl.max_over_median([10] * 8 + [100]) == 10.0    # one pulse
    assert tl.max_over_median([0, 0, 200, 0]) == math.inf  # pulses, silence
    assert math.isnan(tl.max_over_median([]))
    assert math.isnan(tl.max_over_median([0, 0]))


def test_acf_finds_a_pulse_every_9_s():
    """45 s at 10 queries a second with a pulse of 100 at t = 0, 9, 18,
    27, 36 (the shape of a fleet in lockstep). Mean m = (40 * 10 + 5 *
    100) / 45 = 20, so d = +80 at a pulse and -10 elsewhere; sum d^2 =
    5 * 6400 + 40 * 100 = 36000. At lag 9 the 36 pairs t, t + 9 hold 4
    pulse pairs and 32 quiet pairs: (4 * 6400 + 32 * 100) / 36000 = 0.8;
    at lag 18, (3 * 6400 + 24 * 100) / 36000 = 0.6; at any lag that is
    no multiple of 9 each pulse meets a quiet second (-800), so less."""
    xs = [100 if t % 9 == 0 else 10 for t in range(45)]
    r, lag = tl.acf_peak(xs)
    assert lag == 9 and r == pytest.approx(0.8)
    r18, _ = tl.acf_peak(xs, min_lag=18, max_lag=18)
    assert r18 == pytest.approx(0.6)
    assert tl.acf_peak([7] * 30) == (0.0, None)             # flat
    assert tl.acf_peak([1, 2, 3]) == (0.0, None)            # too short


@pytest.mark.parametrize("path", FLEET_SCENARIOS, ids=lambda p: p.stem)
def test_fleet_scenario_is_a_schedule_with_windows(path, tmp_path):
    doc = json.loads(path.read_text())
    f = doc["fleet"]
    end = f["end"]
    assert 0 < f["count_from"] < end
    for key in ("steady", "fault", "peak", "lockstep", "restart"):
        if key in f:
            a, b = f[key]
            assert 0 <= a < b <= end, (key, f[key])
    # steady is before any trouble, the peak window starts at recovery
    if "fault" in f:
        assert f["steady"][1] <= f["fault"][0]
        assert f["recovery"] == f["fault"][1] or "restart" in f
    # what the proxy is given: the schedule behind a 3 s set-up phase,
    # without the benchmark's own keys
    shifted = scenario.shifted(doc, 3)
    assert set(shifted) <= {"phases", "description"}
    sched = tmp_path / "s.json"
    sched.write_text(json.dumps(shifted))
    r = subprocess.run([driver.PYTHON, str(driver.PROGRAM), "--upstream",
                        "127.0.0.1:1", "--schedule", str(sched), "--check"],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    phases = json.loads(r.stdout)["schedule"]["phases"]
    assert phases[0]["name"] == "setup" and phases[0]["end"] == 3
