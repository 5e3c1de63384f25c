"""GET /metrics on the control socket and on metrics-listen.

The exposition is Prometheus text format 0.0.4
(https://prometheus.io/docs/instrumenting/exposition_formats/): served as
`text/plain; version=0.0.4`, every family announced by `# HELP` and
`# TYPE` before its samples, counters named `..._total`, histograms as
cumulative `_bucket{le=...}` series ending in `le="+Inf"` equal to
`_count`. promtool (Debian package prometheus) lints it, and a real
Prometheus server scrapes metrics-listen.

Counters are checked by difference: a known sequence of queries must move
exactly the counters it concerns, by exactly the amounts worked out here,
and no other counter at all.
"""

import http.client
import json
import math
import re
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import dns.rcode
import pytest

from dnstest import ports, proc, query, wire
from dnstest.control import Exposition, http_tcp, key
from dnstest.daemon import Forward, upstream

ZONE = "ops-metrics.test"
M_ZONE = """\
$TTL 300
@        300 IN SOA ns.ops-metrics.test. hostmaster.ops-metrics.test. 1 3600 600 86400 60
@        300 IN NS  ns
ns       300 IN A   127.0.0.1
counted  300 IN A   192.0.2.31
"""

# Every family the daemon exports (src/report.c) and its type.
FAMILIES = {
    "dnsdamper_build_info": "gauge",
    "dnsdamper_start_time_seconds": "gauge",
    "dnsdamper_queries_total": "counter",
    "dnsdamper_answers_total": "counter",
    "dnsdamper_answer_duration_seconds": "histogram",
    "dnsdamper_cache_hits_total": "counter",
    "dnsdamper_cache_misses_total": "counter",
    "dnsdamper_cache_entries": "gauge",
    "dnsdamper_cache_stale_entries": "gauge",
    "dnsdamper_cache_bytes": "gauge",
    "dnsdamper_cache_max_bytes": "gauge",
    "dnsdamper_cache_evictions_total": "counter",
    "dnsdamper_cache_restore_entries": "gauge",
    "dnsdamper_cache_restore_file_entries": "gauge",
    "dnsdamper_cache_restore_done": "gauge",
    "dnsdamper_stale_answers_total": "counter",
    "dnsdamper_prefetches_total": "counter",
    "dnsdamper_resolutions_total": "counter",
    "dnsdamper_coalesced_queries_total": "counter",
    "dnsdamper_coalesced_across_workers_total": "counter",
    "dnsdamper_resolutions_inflight": "gauge",
    "dnsdamper_resolutions_over_budget_total": "counter",
    "dnsdamper_waiters_refused_total": "counter",
    "dnsdamper_upstream_retries_total": "counter",
    "dnsdamper_upstream_retries_denied_total": "counter",
    "dnsdamper_upstream_mismatched_total": "counter",
    "dnsdamper_upstream_malformed_total": "counter",
    "dnsdamper_upstream_oversized_total": "counter",
    "dnsdamper_upstream_local_errors_total": "counter",
    "dnsdamper_upstream_long_chains_total": "counter",
    "dnsdamper_dropped_total": "counter",
    "dnsdamper_tcp_connections_total": "counter",
    "dnsdamper_tcp_connections": "gauge",
    "dnsdamper_tcp_refused_total": "counter",
    "dnsdamper_tcp_evicted_total": "counter",
    "dnsdamper_refused_queries_total": "counter",
    "dnsdamper_refused_connections_total": "counter",
    "dnsdamper_ratelimited_total": "counter",
    "dnsdamper_ratelimit_clients": "gauge",
    "dnsdamper_ratelimit_evictions_total": "counter",
    "dnsdamper_any_minimal_total": "counter",
    "dnsdamper_dnstap_dropped_total": "counter",
    "dnsdamper_upstream_queries_total": "counter",
    "dnsdamper_upstream_answers_total": "counter",
    "dnsdamper_upstream_timeouts_total": "counter",
    "dnsdamper_upstream_failures_total": "counter",
    "dnsdamper_upstream_tc_retries_total": "counter",
    "dnsdamper_upstream_edns_fallbacks_total": "counter",
    "dnsdamper_upstream_response_seconds": "histogram",
    "dnsdamper_upstream_up": "gauge",
    "dnsdamper_upstream_edns": "gauge",
    "dnsdamper_upstream_rtt_seconds": "gauge",
    "dnsdamper_upstream_tls_connections": "gauge",
    "dnsdamper_upstream_tls_connections_total": "counter",
    "dnsdamper_upstream_tls_handshakes_total": "counter",
    "dnsdamper_upstream_tls_resumed_total": "counter",
    "dnsdamper_upstream_tls_queries_total": "counter",
    "dnsdamper_upstream_tls_resent_total": "counter",
    "dnsdamper_upstream_tls_failures_total": "counter",
    "dnsdamper_lkg_answers_total": "counter",
    "dnsdamper_lkg_zone_held": "gauge",
    "dnsdamper_lkg_held_names": "gauge",
    "dnsdamper_lkg_held_zones": "gauge",
    "dnsdamper_lkg_deletions_total": "counter",
    "dnsdamper_lkg_overflow_total": "counter",
    "dnsdamper_control_connections": "gauge",
    "dnsdamper_control_refused_total": "counter",
}


def _tool(name, package):
    path = shutil.which(name) or shutil.which(name, path="/usr/bin:/usr/sbin")
    if path is None:
        pytest.fail(f"{name} not found: apt-get install {package}",
                    pytrace=False)
    return path


def _counters(exp):
    """The series of exp that only go up: counters, and the _bucket and
    _count series of histograms (not _sum, a float of ms/1000)."""
    out = {}
    for (name, labels), v in exp.samples.items():
        fam = exp.family_of(name)
        t = exp.families[fam]["type"]
        if t == "counter" or (t == "histogram" and not name.endswith("_sum")):
            out[(name, labels)] = v
    return out


def _counter_diff(before, after):
    b, a = _counters(before), _counters(after)
    return {k: v - b.get(k, 0.0) for k, v in a.items()
            if v != b.get(k, 0.0)}


def _fmt(d):
    return "\n".join(f"  {n}{dict(sorted(lab))} {v:+g}"
                     for (n, lab), v in sorted(d.items(),
                                               key=lambda kv: kv[0][0]))


def _assert_moved(before, after, expected, may_move=()):
    """Every counter moved by exactly `expected` (key -> delta), histograms'
    +Inf buckets included, and no other counter moved, except the keys in
    may_move (with any delta)."""
    got = _counter_diff(before, after)
    bucket_names = {}
    for (name, labels), delta in list(expected.items()):
        if name.endswith("_count"):
            base = name[:-len("_count")]
            bucket_names[(base + "_bucket",
                          labels | {("le", "+Inf")})] = delta
    want = dict(expected)
    want.update(bucket_names)
    # finite buckets of a histogram that moved: each gained at most
    # what +Inf gained
    for (name, labels), delta in got.items():
        if name.endswith("_bucket") and (name, labels) not in want:
            le = dict(labels)["le"]
            rest = labels - {("le", le)}
            inf = want.get((name, rest | {("le", "+Inf")}))
            if inf is not None and 0 < delta <= inf:
                want[(name, labels)] = delta
    for k in may_move:
        if k in got:
            want[k] = got[k]
    assert got == {k: v for k, v in want.items() if v != 0}, (
        f"counters moved:\n{_fmt(got)}\nexpected:\n{_fmt(want)}")


# --- the format ------------------------------------------------------------

def test_metrics_content_type_help_type(dd):
    r = dd.control().get("/metrics")
    assert r.status == 200, r
    # exposition format 0.0.4: "text/plain; version=0.0.4"
    # dnsdamper(8), CONTROL SOCKET
    assert r.header("Content-Type") == \
        "text/plain; version=0.0.4; charset=utf-8", r.headers
    exp = Exposition(r.text)

    # exactly the families of src/report.c, each with its type and a
    # non-empty HELP, announced before their samples
    assert {n: f.get("type") for n, f in exp.families.items()} == FAMILIES
    for name, fam in exp.families.items():
        assert fam.get("help"), f"{name}: no HELP text"
    seen = set()
    for line in r.text.splitlines():
        if line.startswith("# TYPE "):
            seen.add(line.split()[2])
        elif line and not line.startswith("#"):
            fam = exp.family_of(re.match(r"[^{ ]+", line).group(0))
            assert fam in seen, f"sample before its # TYPE: {line}"
    for name, t in FAMILIES.items():
        if t == "counter":
            assert name.endswith("_total"), name

    # histograms: cumulative buckets, the last +Inf, equal to _count
    for fam, t in FAMILIES.items():
        if t != "histogram":
            continue
        groups = {}
        for lab, v in exp.series(fam + "_bucket"):
            rest = frozenset((k, x) for k, x in lab.items() if k != "le")
            groups.setdefault(rest, []).append((float(lab["le"]), v))
        for rest, buckets in groups.items():
            les = [le for le, _ in buckets]
            assert les == sorted(les) and les[-1] == math.inf, (fam, les)
            counts = [v for _, v in buckets]
            assert counts == sorted(counts), (fam, buckets)
            assert counts[-1] == exp.get(fam + "_count", **dict(rest)), fam

    # the values the configuration and the clock say
    assert exp.get("dnsdamper_cache_max_bytes") == 64 * 1024 * 1024  # 64m
    started = exp.get("dnsdamper_start_time_seconds")
    # started a moment ago; not `<= now`: a VM's wall clock may be stepped
    # back a few seconds between the daemon's start and this line
    assert abs(started - time.time()) < 60, (started, time.time())
    [(labels, one)] = exp.series("dnsdamper_build_info")
    assert one == 1 and re.fullmatch(r"\d+\.\d+\.\d+.*", labels["version"])


def test_metrics_pass_promtool(dnsdamper, bind):
    promtool = _tool("promtool", "prometheus")
    d = dnsdamper([Forward(".", [bind])], extra=["cache-size 8m"])
    # some traffic first, so that every family has samples
    query.udp(d.port, "alive.example.test")
    query.tcp(d.port, "alive.example.test")
    text = d.control().get("/metrics").text
    r = subprocess.run([promtool, "check", "metrics"], input=text,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), (
        f"promtool check metrics: status {r.returncode}\n{r.stdout}"
        f"{r.stderr}")
    # cache-size 8m: m is 1048576 octets (dnsdamper.conf(5), Values)
    assert Exposition(text).get("dnsdamper_cache_max_bytes") == 8 * 1048576


# --- counters --------------------------------------------------------------

def test_udp_queries_move_exactly_their_counters(dnsdamper, bind, new_bind):
    """3 UDP queries for one name of a zone whose upstream has not been
    used yet: the first misses and is forwarded, the other two are
    answered from the cache. The upstream's first use also sends it the
    loop probe (src/fetch.c loop_probe_start): a TXT query for a random
    16-hex-digit label under the zone, which named, authoritative for the
    zone, answers NXDOMAIN (RFC 1035 §4.3.2), a usable answer. So:

      queries_total{udp,A}              +3
      answers_total{upstream,NOERROR}   +1   the miss
      answers_total{cache,NOERROR}      +2   the two hits
      answer_duration_seconds_count     +3   one per answer
      cache_hits_total +2, cache_misses_total +1
      resolutions_total                 +1   (the probe is no resolution)
      upstream_queries_total{M,zone}    +2   the miss and the probe
      upstream_answers_total{M,zone}    +2
      upstream_response_seconds_count   +2
    and nothing else, the `.` upstream's counters included."""
    m = new_bind("metrics", {ZONE: M_ZONE})
    d = dnsdamper([Forward(ZONE, [m]), Forward(".", [bind])])
    c = d.control()
    mark = m.mark()
    before = c.metrics()
    for _ in range(3):
        r = query.udp(d.port, f"counted.{ZONE}")
        assert query.addresses(r) == {"192.0.2.31"}, r.text()

    # what named saw: the miss and the probe, nothing else
    logged = sorted((q.name, q.qtype) for q in m.queries(mark))
    assert len(logged) == 2, logged
    assert (f"counted.{ZONE}", "A") in logged, logged
    probe = [q for q in logged if q != (f"counted.{ZONE}", "A")][0]
    assert re.fullmatch(rf"[0-9a-f]{{16}}\.{re.escape(ZONE)}", probe[0]) \
        and probe[1] == "TXT", logged

    up = upstream(m.port)
    zone = ZONE + "."
    # the probe's answer may come back after the clients' answers
    deadline = time.monotonic() + 3.0
    while True:
        after = c.metrics()
        if after.value("dnsdamper_upstream_answers_total", upstream=up,
                       zone=zone) >= 2 or time.monotonic() > deadline:
            break
        time.sleep(0.05)

    _assert_moved(before, after, {
        key("dnsdamper_queries_total", transport="udp", qtype="A"): 3,
        key("dnsdamper_answers_total", source="upstream",
            rcode="NOERROR"): 1,
        key("dnsdamper_answers_total", source="cache", rcode="NOERROR"): 2,
        key("dnsdamper_answer_duration_seconds_count"): 3,
        key("dnsdamper_cache_hits_total"): 2,
        key("dnsdamper_cache_misses_total"): 1,
        key("dnsdamper_resolutions_total"): 1,
        key("dnsdamper_upstream_queries_total", upstream=up, zone=zone): 2,
        key("dnsdamper_upstream_answers_total", upstream=up, zone=zone): 2,
        key("dnsdamper_upstream_response_seconds_count", upstream=up,
            zone=zone): 2,
    })
    # gauges: one entry more; the upstream is up and has an RTT
    assert after.get("dnsdamper_cache_entries") == \
        before.get("dnsdamper_cache_entries") + 1
    assert after.get("dnsdamper_upstream_up", upstream=up) == 1
    assert after.get("dnsdamper_upstream_rtt_seconds", upstream=up) >= 0
    assert after.get("dnsdamper_resolutions_inflight") == 0


def test_tcp_and_malformed_move_their_counters(dd):
    c = dd.control()
    name = "alive.example.test"
    query.udp(dd.port, name)                     # cached from now on
    before = c.metrics()
    r = query.tcp(dd.port, name)
    assert query.addresses(r) == {"192.0.2.9"}, r.text()
    # the connection is counted when accepted; it is closed by now or
    # soon, so the gauge is left out
    _assert_moved(before, c.metrics(), {
        key("dnsdamper_queries_total", transport="tcp", qtype="A"): 1,
        key("dnsdamper_answers_total", source="cache", rcode="NOERROR"): 1,
        key("dnsdamper_answer_duration_seconds_count"): 1,
        key("dnsdamper_cache_hits_total"): 1,
        key("dnsdamper_tcp_connections_total"): 1,
    })

    # a 5-octet datagram, less than a header: dropped unanswered; then a
    # header with QDCOUNT 0: FORMERR (dnsdamper(8), Answers; RFC 9619).
    # Both count as queries of qtype other (dnsdamper(8), METRICS: a
    # message whose question could not be read, dropped ones too). Both
    # go through the same listening socket in this order, so once the
    # FORMERR is back the short one has been handled too.
    before = c.metrics()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((ports.LOOPBACK, dd.port))
        s.send(wire.header(0x3101)[:5])
        s.send(wire.header(0x3102, qdcount=0))
        s.settimeout(3.0)
        got = s.recv(65535)
    h = wire.parse_header(got)
    assert h.id == 0x3102 and h.rcode == wire.RCODE_FORMERR, got.hex()
    _assert_moved(before, c.metrics(), {
        key("dnsdamper_queries_total", transport="udp", qtype="other"): 2,
        key("dnsdamper_dropped_total"): 1,
        key("dnsdamper_answers_total", source="error", rcode="FORMERR"): 1,
        key("dnsdamper_answer_duration_seconds_count"): 1,
    })

    # a datagram longer than 4096 octets: dropped, and not a query
    before = c.metrics()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((ports.LOOPBACK, dd.port))
        s.send(wire.query(0x3103, "alive.example.test") + b"\0" * 4096)
        s.send(wire.header(0x3104, qdcount=0))
        s.settimeout(3.0)
        got = s.recv(65535)
    assert wire.parse_header(got).id == 0x3104, got.hex()
    _assert_moved(before, c.metrics(), {
        key("dnsdamper_queries_total", transport="udp", qtype="other"): 1,
        key("dnsdamper_dropped_total"): 1,
        key("dnsdamper_answers_total", source="error", rcode="FORMERR"): 1,
        key("dnsdamper_answer_duration_seconds_count"): 1,
    })


def test_reload_keeps_counters_drops_removed_upstream(dnsdamper, bind,
                                                      new_bind):
    """dnsdamper(8), METRICS: a reload does not reset counters, but the
    series of an upstream that a reload removes from every zone go."""
    m = new_bind("metrics", {ZONE: M_ZONE})
    d = dnsdamper([Forward(ZONE, [m]), Forward(".", [bind])])
    c = d.control()
    query.udp(d.port, f"counted.{ZONE}")
    query.udp(d.port, f"counted.{ZONE}")
    up = upstream(m.port)
    before = c.metrics()
    assert before.get("dnsdamper_upstream_up", upstream=up) == 1
    d.write_config(d.config([Forward(".", [bind])]))
    assert c.post("/reload").status == 200
    after = c.metrics()
    gone = [(n, dict(lab)) for n, lab, _ in after.order
            if lab.get("upstream") == up]
    assert gone == [], gone
    for k, v in _counters(before).items():
        if dict(k[1]).get("upstream") != up:
            assert after.samples.get(k, 0) >= v, (k, v, after.samples.get(k))
    assert after.get("dnsdamper_cache_hits_total") == 1


# --- /stats ----------------------------------------------------------------

def _stats_as_samples(stats):
    """/stats JSON in the key space of Exposition.samples."""
    out = {}
    for fam, series in stats.items():
        for s in series:
            labels = frozenset(s["labels"].items())
            if "value" in s:
                out[(fam, labels)] = float(s["value"])
                continue
            out[(fam + "_count", labels)] = float(s["count"])
            out[(fam + "_sum", labels)] = float(s["sum"])
            for le, v in s["buckets"].items():
                out[(fam + "_bucket", labels | {("le", le)})] = float(v)
    return out


def test_stats_json_has_the_same_figures_as_metrics(dnsdamper, bind,
                                                     new_bind):
    m = new_bind("metrics", {ZONE: M_ZONE})
    d = dnsdamper([Forward(ZONE, [m]), Forward(".", [bind])])
    c = d.control()
    for name in (f"counted.{ZONE}", f"nothere.{ZONE}", "alive.example.test"):
        query.udp(d.port, name)
    query.tcp(d.port, f"counted.{ZONE}")
    # no traffic between the two scrapes and the JSON: the figures stand
    # still (the loop probe's answer is awaited first)
    deadline = time.monotonic() + 3.0
    while c.metrics().get("dnsdamper_resolutions_inflight") != 0 and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.1)
    first = c.metrics()
    r = c.get("/stats")
    second = c.metrics()
    assert r.status == 200 and r.header("Content-Type").startswith(
        "application/json"), r
    stats = r.json()
    assert first.samples == second.samples, "figures moved between scrapes"
    assert list(stats) == list(first.families), "families differ"
    assert _stats_as_samples(stats) == first.samples


S_ZONE = "ops-stale.test"
S_TEXT = """\
$TTL 1
@        1 IN SOA ns.ops-stale.test. hostmaster.ops-stale.test. 1 3600 600 86400 1
@      300 IN NS  ns
ns     300 IN A   127.0.0.1
short1   1 IN A   192.0.2.41
short2   1 IN A   192.0.2.42
long   300 IN A   192.0.2.43
"""


def test_stale_entries_gauge(dnsdamper, bind, new_bind):
    """dnsdamper_cache_stale_entries counts the entries that have expired
    but may still be served stale (RFC 8767 §5: for stale-max-age, 1 day
    by default). Cached: short1 and short2 (TTL 1 s), an NXDOMAIN whose
    negative TTL is min(SOA TTL, MINIMUM) = min(1, 1) = 1 s (RFC 2308 §5),
    and long (TTL 300 s). At once none is stale; 2 s later the three 1-s
    entries are and long is not: 0, then 3. /stats says the same."""
    s = new_bind("stale", {S_ZONE: S_TEXT})
    d = dnsdamper([Forward(S_ZONE, [s]), Forward(".", [bind])])
    c = d.control()
    for name in ("short1", "short2", "long"):
        assert query.addresses(query.udp(d.port, f"{name}.{S_ZONE}"))
    assert query.udp(d.port, f"gone.{S_ZONE}").rcode == \
        dns.rcode.NXDOMAIN
    assert c.metrics().get("dnsdamper_cache_stale_entries") == 0
    time.sleep(2.0)
    assert c.metrics().get("dnsdamper_cache_stale_entries") == 3
    assert c.stats()["dnsdamper_cache_stale_entries"] == \
        [{"labels": {}, "value": 3}]


def _scrape_unless_refused(dd):
    """GET /metrics on the control socket; None if the connection was
    refused as one beyond control-clients (closed unanswered, or 503)."""
    try:
        r = dd.control().get("/metrics")
    except (http.client.RemoteDisconnected, ConnectionResetError):
        return None
    return None if r.status == 503 else r


def test_scrapes_abandoned_midway_do_no_harm(dd):
    """A scrape's count of stale entries takes one cache shard per turn of
    the event loop, so its request outlives a client that hangs up at
    once. 200 such clients (GET /metrics and /stats, closed right after
    sending): the daemon keeps answering, a later scrape works, and it
    still exits 0 on SIGTERM (under the sanitizer build: no leak, no use
    after free)."""
    for i in range(200):
        target = "/metrics" if i % 2 else "/stats"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            # blocking: a unix socket's connect says EAGAIN, not
            # EINPROGRESS, when the backlog is full
            s.connect(str(dd.control_path))
            try:
                s.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n"
                          .encode())
            except (BrokenPipeError, ConnectionResetError):
                pass        # refused beyond control-clients: closed first
    assert query.addresses(query.udp(dd.port, "alive.example.test"))
    # each abandoned scrape holds its connection, one of control-clients
    # (16), until its answer is written: a later one may be refused until
    # then, closed unanswered or answered 503 (dnsdamper(8), CONTROL
    # SOCKET)
    deadline = time.monotonic() + 10
    while (r := _scrape_unless_refused(dd)) is None and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    assert r is not None and r.status == 200, r
    assert Exposition(r.text).get("dnsdamper_cache_stale_entries") == 0
    status = dd.stop()[0]
    dd.stopped_by_test = True
    assert status == 0, dd.stderr()


# --- metrics-listen --------------------------------------------------------

def test_metrics_listen_serves_metrics_only(dnsdamper, bind):
    mport = ports.free_port()
    d = dnsdamper([Forward(".", [bind])],
                  extra=[f"metrics-listen 127.0.0.1:{mport}"])
    query.udp(d.port, "alive.example.test")
    r = http_tcp(mport, "GET", "/metrics")
    assert r.status == 200, r
    assert r.header("Content-Type") == \
        "text/plain; version=0.0.4; charset=utf-8", r.headers
    exp = Exposition(r.text)
    assert set(exp.families) == set(FAMILIES)
    assert exp.get("dnsdamper_queries_total", transport="udp",
                   qtype="A") >= 1
    # dnsdamper.conf(5): only GET /metrics there, any other path 404; in
    # particular nothing that changes state
    for method, path in [("GET", "/stats"), ("GET", "/cache"),
                         ("POST", "/flush"), ("POST", "/reload"),
                         ("GET", "/upstreams"), ("GET", "/")]:
        r = http_tcp(mport, method, path)
        assert r.status == 404, (method, path, r)
    entries = d.control().metrics().get("dnsdamper_cache_entries")
    assert entries >= 1          # /flush above flushed nothing


def _prom_query(port, expr, timeout=2.0):
    url = (f"http://127.0.0.1:{port}/api/v1/query?"
           + urllib.parse.urlencode({"query": expr}))
    # no proxy, whatever the environment says: loopback only
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as f:
        return json.load(f)


@pytest.mark.timeout_s(60)
def test_prometheus_scrapes_metrics_listen(dnsdamper, bind, tmp_path):
    """A real Prometheus server scrapes metrics-listen every second; its
    `up` for the target becomes 1 (it parsed a scrape) and the daemon's
    series are in its database."""
    prometheus = _tool("prometheus", "prometheus")
    mport = ports.free_port()
    d = dnsdamper([Forward(".", [bind])],
                  extra=[f"metrics-listen 127.0.0.1:{mport}"])
    target = f"127.0.0.1:{mport}"
    ports.check_loopback("127.0.0.1")
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(f"""\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: dnsdamper
    static_configs:
      - targets: ['{target}']
""")
    pport = ports.free_port()
    log = tmp_path / "prometheus.log"
    p = proc.spawn([prometheus, f"--config.file={cfg}",
                    f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{pport}"],
                   log, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 30.0
        up = None
        while time.monotonic() < deadline:
            assert proc.alive(p), f"prometheus exited:\n{log.read_text()}"
            try:
                res = _prom_query(pport, 'up{job="dnsdamper"}')
                up = res["data"]["result"]
            except (OSError, ValueError):
                up = None
            if up and up[0]["value"][1] == "1":
                break
            time.sleep(1.0)
        assert up and up[0]["value"][1] == "1", (
            f"up = {up}\n{log.read_text()}")
        assert up[0]["metric"]["instance"] == target
        res = _prom_query(pport, 'dnsdamper_build_info{job="dnsdamper"}')
        assert res["data"]["result"], res
        assert res["data"]["result"][0]["value"][1] == "1"
    finally:
        status, killed = proc.stop(p, timeout=10.0)
    assert not killed, f"prometheus needed SIGKILL:\n{log.read_text()}"
    d.assert_alive()
