"""The instruments of contrib/bench, checked on data worked out by hand:
the per-second figures (benchlib/timeline.py) that say whether a fleet is
in lockstep; the fleet scenarios, which must be valid fault proxy
schedules with the windows the figures are taken over; dnsperf's report
as throughput and perf read it; and the tuning hooks through which perf
sizes the contestants every benchmark shares. A benchmark that measured
wrong would send the daemon's work the wrong way."""

import json
import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from dnstest import daemon
from faultproxy import driver

TOP = Path(__file__).resolve().parents[2]
BENCH = TOP / "contrib" / "bench"
sys.path.insert(0, str(BENCH))

from benchlib import contestants, dnsperf, perfcontestants  # noqa: E402
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


# dnsperf 2.x's report (the lines it prints after "Statistics:")
DNSPERF_REPORT = """\
  Queries sent:         2000
  Queries completed:    1990 (99.50%)
  Queries lost:         10 (0.50%)

  Response codes:       NOERROR 1910 (95.98%), SERVFAIL 80 (4.02%)
  Average packet size:  request 36, response 79
  Run time (s):         2.000130
  Queries per second:   994.935329

  Average Latency (s):  0.001862 (min 0.000033, max 0.021290)
  Latency StdDev (s):   0.001081
"""


def test_dnsperf_report():
    r = dnsperf.parse(DNSPERF_REPORT)
    assert r.qps == pytest.approx(994.935329)
    assert r.mean_ms == pytest.approx(1.862)        # 0.001862 s
    assert r.sd_ms == pytest.approx(1.081)
    assert (r.completed, r.lost) == (1990, 10)
    assert r.rcodes == {"NOERROR": 1910, "SERVFAIL": 80}
    assert sum(r.rcodes.values()) == r.completed
    with pytest.raises(RuntimeError, match="Queries per second"):
        dnsperf.parse(DNSPERF_REPORT.replace("Queries per second", "-"))


def bench_args(**kw):
    return SimpleNamespace(dnsdamper=str(daemon.binary_path()),
                           verbose_daemon=False, **kw)


def configured(c, port=5300, upstream_port=5301):
    c.port, c.upstream_port = port, upstream_port
    return c


def test_unbound_tuning_goes_into_server(tmp_path):
    """perf's unbound is resonance's with three server: lines more, and
    resonance's has no empty line where the tuning goes."""
    plain = configured(contestants.Unbound(tmp_path, bench_args()))
    tuned = configured(perfcontestants.Unbound(tmp_path, bench_args(), 2))
    assert tuned.name == "unbound-2"
    text = plain.config()
    assert "\n\n" not in text
    lines = "\tnum-threads: 2\n\tmsg-cache-size: 1g\n\trrset-cache-size: 2g\n"
    server = tuned.config().split("remote-control:")[0]
    assert lines in server
    assert tuned.config().replace(lines, "") == text


def test_dnsmasq_tuning_sizes_the_cache(tmp_path):
    plain = configured(contestants.Dnsmasq(tmp_path, bench_args())).argv()
    tuned = configured(perfcontestants.Dnsmasq(tmp_path, bench_args())).argv()
    assert plain[-1] == "--cache-size=10000"
    assert tuned == plain[:-1] + ["--cache-size=3000000"]
    assert "--server=127.0.0.1#5301" in plain and "--port=5300" in plain


def test_dnsdamper_tuning_is_accepted(tmp_path):
    """perf's dnsdamper: resonance's configuration with cache-size 2g (and
    threads where the build takes `threads 2`) before the forward, and the
    daemon's -t accepts it (configure() raises if not)."""
    plain = configured(contestants.Dnsdamper(tmp_path / "p", bench_args()))
    no_threads = perfcontestants.dnsdamper_threads(daemon.binary_path(),
                                                   tmp_path)
    tuned = configured(perfcontestants.Dnsdamper(
        tmp_path / "t", bench_args(no_threads=no_threads), 1))
    plain.configure()
    tuned.configure()
    want = ["cache-size 2g"] + ([] if no_threads else ["threads 1"])
    p = plain.conf.read_text().replace(str(plain.dir), "DIR").splitlines()
    t = tuned.conf.read_text().replace(str(tuned.dir), "DIR").splitlines()
    assert t == p[:-1] + want + p[-1:]
    assert p[-1] == "forward . { upstream 127.0.0.1:5301 }"


@pytest.mark.parametrize("variant,line", [
    ("dnstap", "dnstap DIR/tap.sock"),
    ("dnstap-gone", "dnstap DIR/tap.sock"),
    ("log-queries", "log-queries 1/100")])
def test_dnsdamper_told_tuning_is_accepted(tmp_path, variant, line):
    """perf's dnsdamper-1 with dnstap (client responses) or log-queries
    1/100: dnsdamper-1's configuration and that, which -t accepts."""
    no_threads = perfcontestants.dnsdamper_threads(daemon.binary_path(),
                                                   tmp_path)
    c = configured(perfcontestants.make(
        f"dnsdamper-1+{variant}", tmp_path / variant,
        bench_args(no_threads=no_threads)))
    assert c.name == f"dnsdamper-1+{variant}"
    c.configure()
    lines = c.conf.read_text().replace(str(c.dir), "DIR").splitlines()
    assert line in lines
    if variant.startswith("dnstap"):
        assert "dnstap-messages client-response" in lines
