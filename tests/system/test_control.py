"""The control socket: HTTP/1.1 over a unix stream socket (src/control.h,
dnsdamperctl(8), dnsdamper.conf(5) control, control-mode, control-group).

/upstreams and /explain are checked against what the test did (which
upstream served which zone, how often named was asked, when the entry
was stored); /flush and /cache against the entries the test's queries
made, and against named's query log: a flushed entry makes the next query
reach named again, a kept one does not.
"""

import grp
import os
import re
import socket
import stat
import time
from concurrent.futures import ThreadPoolExecutor

import dns.flags
import dns.rcode
import pytest

from dnstest import checks, ports, query
from dnstest.daemon import Forward, upstream
from dnstest.zonetext import zone

ZONE = "ops-control.test"
# RFC 2308 §5: negative answers are cached for min(SOA TTL, MINIMUM) =
# min(300, 60) = 60 s
NEG_TTL = 60
C_ZONE = """\
$TTL 300
@        300 IN SOA ns.ops-control.test. hostmaster.ops-control.test. 1 3600 600 86400 60
@        300 IN NS  ns
ns       300 IN A   127.0.0.1
fresh    300 IN A   192.0.2.41
brief      1 IN A   192.0.2.42
a        300 IN A   192.0.2.43
b        300 IN A   192.0.2.44
sub      300 IN A   192.0.2.45
x.sub    300 IN A   192.0.2.46
y.x.sub  300 IN A   192.0.2.47
xsub     300 IN A   192.0.2.48
"""


@pytest.fixture
def ctl_setup(dnsdamper, bind, new_bind):
    """A daemon forwarding ops-control.test to its own named (c) first and
    a dead port second (policy order), everything else to the session's
    named. Returns (daemon, c named, dead upstream's port)."""
    c = new_bind("control", {ZONE: C_ZONE})
    dead = ports.dead_port()
    d = dnsdamper([Forward(ZONE, [c, dead], policy="order"),
                   Forward(".", [bind])])
    return d, c, dead


def _cache_keys(ctl):
    """{(qname, TYPE): state} of GET /cache, from each line's comment
    "state, qname TYPE"."""
    out = {}
    for rr, comment in ctl.cache_lines():
        m = re.fullmatch(r"; failure (\S+) (\S+) \d+s", rr)
        if m:
            out[(m.group(1).rstrip(".").lower(), m.group(2))] = "failure"
            continue
        assert comment is not None, f"a line without its state: {rr!r}"
        m = re.fullmatch(r"(.+), (\S+) (\S+)", comment)
        assert m, comment
        out[(m.group(2).rstrip(".").lower(), m.group(3))] = m.group(1)
    return out


# --- /upstreams and /explain ----------------------------------------------

def test_upstreams_json(ctl_setup):
    d, c, dead = ctl_setup
    mark = c.mark()
    for name in ("fresh", "a", "nothere"):
        query.udp(d.port, f"{name}.{ZONE}")
    r = d.control().get("/upstreams")
    assert r.status == 200 and r.header("Content-Type").startswith(
        "application/json"), r
    ups = {u["address"]: u for u in r.json()}
    c_addr, dead_addr = upstream(c.port), upstream(dead)
    assert c_addr in ups and dead_addr in ups, ups
    u = ups[c_addr]
    assert u["state"] == "up" and u["failures_in_a_row"] == 0, u
    assert u["srtt_ms"] >= 0 and u["rto_ms"] > 0, u
    zones = {z["zone"]: z for z in u["zones"]}
    # named c answered every query of the zone the daemon sent (policy
    # order: c first, and it answered), the loop probe included
    asked = len(c.queries(mark))
    assert asked == 4, c.queries(mark)          # 3 misses + the probe
    assert zones[ZONE + "."]["queries"] == asked, zones
    assert zones[ZONE + "."]["answers"] == asked, zones
    assert zones[ZONE + "."]["timeouts"] == 0
    assert zones[ZONE + "."]["failures"] == 0
    # the dead port was never asked: no RTT measured, nothing sent
    v = ups[dead_addr]
    # dnsdamper(8): srtt_ms and rttvar_ms -1 before the first measurement;
    # rto_ms then 400 (RFC 6298 §2.1 says 1 s; dnsdamper.conf(5),
    # upstream-timeout: 400 ms before the first measurement, within the
    # default bounds 50ms..2s)
    assert v["srtt_ms"] == -1 and v["rttvar_ms"] == -1, v
    assert v["rto_ms"] == 400 and v["state"] == "up", v
    assert all(z["queries"] == 0 for z in v["zones"]), v


SHARED_ZONES = ("one", "two", "three", "four")
SHARED_DELAY_MS = 300


def test_upstream_shared_by_zones_counts_each(new_bind, faultproxy,
                                              dnsdamper, bind):
    """One slow upstream (300 ms) named by four forward zones, whose first
    queries are all in flight at once: each zone's counters come into being
    while attempts of the others are counting into theirs. Each answer
    must land in its own zone's counters (an upstream's counters once moved
    in memory under live attempts, which then wrote into freed memory: the
    sanitizer build stops the daemon there, and the counts come out short
    where the move happened)."""
    origins = [f"{z}.shared.test" for z in SHARED_ZONES]
    ns = new_bind("shared", {o: zone(o, 300, ["www A 192.0.2.49"])
                             for o in origins})
    fp = faultproxy(ns, delay_mean=SHARED_DELAY_MS)
    # the first timeout (400 ms, clamped up to 2 s) is far above the
    # 300 ms delay: nothing is sent twice
    d = dnsdamper([Forward(o, [fp]) for o in origins] +
                  [Forward(".", [bind])],
                  extra=["upstream-timeout 2s 4s", "query-timeout 5s"])
    with ThreadPoolExecutor(len(origins)) as pool:
        replies = list(pool.map(
            lambda o: query.udp(d.port, f"www.{o}", timeout=5 + 2), origins))
    for r in replies:
        assert query.addresses(r) == {"192.0.2.49"}, r.text()
    ups = {u["address"]: u for u in d.control().get("/upstreams").json()}
    zones = {z["zone"]: z for z in ups[upstream(fp.port)]["zones"]}
    assert sorted(zones) == sorted(o + "." for o in origins), zones
    # one query per zone, and one loop probe (a TXT for a made-up name,
    # which named answers NXDOMAIN: a usable answer) in the zone of
    # whichever resolution reached the upstream first: 4 + 1
    for z in zones.values():
        assert z["answers"] == z["queries"] >= 1, zones
        assert z["timeouts"] == 0 and z["failures"] == 0, zones
    assert sum(z["queries"] for z in zones.values()) == len(origins) + 1, \
        zones


def test_explain_zone_order_and_cache_state(ctl_setup):
    d, c, dead = ctl_setup
    ctl = d.control()

    # absent: never asked; the zone and the upstream order of policy order
    r = ctl.get(f"/explain?name=fresh.{ZONE}&type=AAAA")
    assert r.status == 200, r
    e = r.json()
    assert e["name"] == f"fresh.{ZONE}" and e["qtype"] == 28, e
    assert e["zone"] == ZONE + "." and e["policy"] == "order", e
    assert [u["address"] for u in e["upstreams"]] == \
        [upstream(c.port), upstream(dead)], e
    assert e["cache"] == {"state": "absent"}, e
    # the generic form TYPEn (RFC 3597 §5) names a type too
    e2 = ctl.get(f"/explain?name=fresh.{ZONE}&type=TYPE28").json()
    assert e2["qtype"] == 28 and e2["cache"] == {"state": "absent"}, e2

    # fresh, with the time left: stored between q.sent and q.received,
    # explained between t0 and t1, so 300 s less (t1 - q.sent) ..
    # (t0 - q.received) is left (1 ms of slack for the daemon's rounding)
    q = query.udp(d.port, f"fresh.{ZONE}")
    t0 = time.monotonic()
    e = ctl.get(f"/explain?name=fresh.{ZONE}").json()
    t1 = time.monotonic()
    assert e["qtype"] == 1, e                          # A by default
    cache = e["cache"]
    assert cache["state"] == "fresh" and cache["kind"] == "positive", e
    assert cache["ttl"] == 300 and cache["last_refresh_failed"] is False
    lo = 300_000 - (t1 - q.sent) * 1000 - 1
    hi = 300_000 - (t0 - q.received) * 1000 + 1
    assert lo <= cache["expires_in_ms"] <= hi, (lo, cache, hi)

    # negative: NXDOMAIN and NODATA, TTL min(SOA TTL, MINIMUM)
    assert query.udp(d.port, f"nothere.{ZONE}").rcode == dns.rcode.NXDOMAIN
    assert query.udp(d.port, f"fresh.{ZONE}", "AAAA").rcode == \
        dns.rcode.NOERROR
    e = ctl.get(f"/explain?name=nothere.{ZONE}").json()["cache"]
    assert (e["state"], e["kind"], e["ttl"]) == ("fresh", "nxdomain",
                                                 NEG_TTL), e
    e = ctl.get(f"/explain?name=fresh.{ZONE}&type=AAAA").json()["cache"]
    assert (e["state"], e["kind"], e["ttl"]) == ("fresh", "nodata",
                                                 NEG_TTL), e

    # stale: TTL 1 s, explained more than 1 s after it was stored; kept
    # for stale-max-age (default 1 d), so still there, as stale
    q = query.udp(d.port, f"brief.{ZONE}")
    time.sleep(max(0.0, q.received + 1.2 - time.monotonic()))
    e = ctl.get(f"/explain?name=brief.{ZONE}").json()["cache"]
    assert (e["state"], e["kind"], e["ttl"]) == ("stale", "positive", 1), e
    assert "expires_in_ms" not in e

    # a name of no forward zone but `.`, in any case; text format
    e = ctl.get("/explain?name=Alive.Example.TEST").json()
    assert e["zone"] == "." and [u["address"] for u in e["upstreams"]] \
        != [upstream(c.port), upstream(dead)], e
    r = ctl.get(f"/explain?name=fresh.{ZONE}&format=text")
    assert r.status == 200 and r.header("Content-Type").startswith(
        "text/plain"), r
    assert re.search(rf"^zone\s+{re.escape(ZONE)}\. \(policy order\)$",
                     r.text, re.M), r.text
    assert re.search(r"^cache\s+fresh, positive, stored with TTL 300 s",
                     r.text, re.M), r.text


def test_explain_bad_requests(dd):
    ctl = dd.control()
    for target in ("/explain", "/explain?type=A",
                   "/explain?name=a..b.test",
                   "/explain?name=x.test&type=NOSUCHTYPE",
                   "/explain?name=" + "a" * 64 + ".test"):  # label > 63
        r = ctl.get(target)
        assert r.status == 400, (target, r)
        assert "error" in r.json(), r


# --- /flush and /cache -----------------------------------------------------

NAMES = ["a", "b", "sub", "x.sub", "y.x.sub", "xsub"]


def _fill(d, c):
    """Cache every name of NAMES (A) and a AAAA (NODATA); return the
    expected keys of the zone."""
    for n in NAMES:
        r = query.udp(d.port, f"{n}.{ZONE}")
        assert r.rcode == dns.rcode.NOERROR, r.text()
    query.udp(d.port, f"a.{ZONE}", "AAAA")
    return {(f"{n}.{ZONE}", "A") for n in NAMES} | {(f"a.{ZONE}", "AAAA")}


def _zone_keys(ctl):
    return {k for k in _cache_keys(ctl) if k[0].endswith(ZONE)}


def test_flush_name_type_zone_and_all(ctl_setup):
    d, c, _ = ctl_setup
    ctl = d.control()
    want = _fill(d, c)
    assert _zone_keys(ctl) == want

    # a.ops-control.test A asked again with DO, and with CD: two more
    # entries (the cache key has both bits, dnsdamper(8), Cache)
    q = query.make_query(f"a.{ZONE}", "A")
    q.want_dnssec(True)
    query.exchange_udp(d.port, q)
    q = query.make_query(f"a.{ZONE}", "A")
    q.flags |= dns.flags.CD
    query.exchange_udp(d.port, q)
    entries = ctl.metrics().get("dnsdamper_cache_entries")

    # one type of one name, with and without DO and CD
    r = ctl.post(f"/flush?name=a.{ZONE}&type=A")
    assert r.status == 200 and r.json() == {"flushed": 3}, r
    assert ctl.metrics().get("dnsdamper_cache_entries") == entries - 3
    want.discard((f"a.{ZONE}", "A"))
    assert _zone_keys(ctl) == want
    # every type of one name; names compare without case (RFC 4343)
    r = ctl.post("/flush?name=A.OPS-Control.test.")
    assert r.status == 200 and r.json() == {"flushed": 1}, r
    want.discard((f"a.{ZONE}", "AAAA"))
    assert _zone_keys(ctl) == want
    # a zone: sub and every name below it, but not xsub (not below sub
    # label by label) nor b
    r = ctl.post(f"/flush?zone=sub.{ZONE}")
    assert r.status == 200 and r.json() == {"flushed": 3}, r
    want -= {(f"{n}.{ZONE}", "A") for n in ("sub", "x.sub", "y.x.sub")}
    assert _zone_keys(ctl) == want == {(f"b.{ZONE}", "A"),
                                       (f"xsub.{ZONE}", "A")}

    # the proof through named: a flushed name is asked again, a kept one
    # is answered from the cache
    mark = c.mark()
    for n in ("a", "x.sub", "b", "xsub"):
        query.udp(d.port, f"{n}.{ZONE}")
    assert c.count(f"a.{ZONE}", "A", since=mark) == 1
    assert c.count(f"x.sub.{ZONE}", "A", since=mark) == 1
    assert c.count(f"b.{ZONE}", "A", since=mark) == 0
    assert c.count(f"xsub.{ZONE}", "A", since=mark) == 0

    # everything: as many as the cache held
    entries = ctl.metrics().get("dnsdamper_cache_entries")
    r = ctl.post("/flush?format=text")
    assert r.status == 200 and r.text == f"flushed {int(entries)} entries\n"
    assert ctl.cache_lines() == []
    assert ctl.metrics().get("dnsdamper_cache_entries") == 0
    mark = c.mark()
    query.udp(d.port, f"b.{ZONE}")
    assert c.count(f"b.{ZONE}", "A", since=mark) == 1


def test_flush_bad_requests(dd):
    ctl = dd.control()
    query.udp(dd.port, "alive.example.test")
    for target in ("/flush?name=a.test&zone=test", "/flush?type=A",
                   "/flush?zone=test&type=A", "/flush?name=a.test&type=NOPE",
                   "/flush?name=a..test"):
        r = ctl.post(target)
        assert r.status == 400, (target, r)
        assert "error" in r.json(), r
    # none of them flushed anything
    assert ("alive.example.test", "A") in _cache_keys(ctl)


def test_cache_dump_one_rr_per_line_with_state(dnsdamper, bind, new_bind):
    c = new_bind("control", {ZONE: C_ZONE})
    dead = ports.dead_port()
    d = dnsdamper([Forward(ZONE, [c]), Forward("dead.test", [dead]),
                   Forward(".", [bind])])
    ctl = d.control()
    # the only upstream refuses the datagram (ICMP port unreachable):
    # SERVFAIL, and the failure cached for failure-ttl, default 5 s
    # (RFC 9520)
    f = query.udp(d.port, "x.dead.test")
    assert f.rcode == dns.rcode.SERVFAIL, f.text()
    q = query.udp(d.port, f"fresh.{ZONE}")
    query.udp(d.port, f"nothere.{ZONE}")
    b = query.udp(d.port, f"brief.{ZONE}")
    time.sleep(max(0.0, b.received + 1.2 - time.monotonic()))
    t0 = time.monotonic()
    r = ctl.get("/cache")
    assert r.status == 200 and r.header("Content-Type").startswith(
        "text/plain"), r
    # streamed a part at a time: chunked transfer coding (RFC 9112 §7.1)
    assert r.chunked, r.headers
    lines, failures = {}, []
    for line in r.text.splitlines():
        if line.startswith("; failure "):
            failures.append(line)
            continue
        rr, sep, state = line.partition("\t; ")
        assert sep, f"no state comment: {line!r}"
        lines.setdefault(state, []).append(rr.split())

    # fresh positive: TTL 300 less its whole seconds in the cache
    [[owner, ttl, cls, rtype, addr]] = lines[f"fresh, fresh.{ZONE}. A"]
    assert (owner, cls, rtype, addr) == (f"fresh.{ZONE}.", "IN", "A",
                                         "192.0.2.41")
    age = (t0 - q.received, time.monotonic() - q.sent)
    assert 300 - int(age[1]) - 1 <= int(ttl) <= 300 - int(age[0]), (ttl, age)
    # NXDOMAIN: the SOA of the authority section, TTL min(300, 60) less age
    [soa] = lines[f"nxdomain, nothere.{ZONE}. A"]
    assert soa[0] == f"{ZONE}." and soa[3] == "SOA", soa
    assert NEG_TTL - 3 <= int(soa[1]) <= NEG_TTL, soa
    # stale: expired N whole seconds ago, TTL shown as 0
    stale = [k for k in lines if k.endswith(f", brief.{ZONE}. A")]
    assert len(stale) == 1 and re.fullmatch(
        rf"stale \d+s, brief\.{re.escape(ZONE)}\. A", stale[0]), lines.keys()
    [[_, ttl, _, _, addr]] = lines[stale[0]]
    assert ttl == "0" and addr == "192.0.2.42"
    # a cached failure: a comment line of its own with the seconds left
    assert len(failures) == 1, failures
    m = re.fullmatch(r"; failure x\.dead\.test\. A (\d+)s", failures[0])
    assert m and int(m.group(1)) <= 5, failures


# --- /reload ---------------------------------------------------------------

def test_post_reload_broken_then_good(dnsdamper, bind, new_bind):
    c = new_bind("control", {ZONE: C_ZONE})
    d = dnsdamper([Forward(".", [bind])])
    ctl = d.control()
    good = d.config([Forward(ZONE, [c]), Forward(".", [bind])])
    lines = good.splitlines()
    lines.insert(3, "max-ttl forever")        # line 4: not a duration
    d.write_config("\n".join(lines) + "\n")
    r = ctl.post("/reload")
    assert r.status == 500, r
    body = r.json()
    assert body["reloaded"] is False, body
    assert re.search(rf"{re.escape(d.conf_path.name)}:4: ", body["errors"]), \
        body
    checks.still_serving(d)
    # the old routing stands: the zone is still `.`'s
    assert ctl.get(f"/explain?name=a.{ZONE}").json()["zone"] == "."
    r = ctl.post("/reload?format=text")
    assert r.status == 500 and "still running the previous" in r.text, r

    d.write_config(good)
    r = ctl.post("/reload")
    assert r.status == 200 and r.json() == {"reloaded": True}, r
    assert ctl.get(f"/explain?name=a.{ZONE}").json()["zone"] == ZONE + "."
    mark = c.mark()
    assert query.addresses(query.udp(d.port, f"a.{ZONE}")) == {"192.0.2.43"}
    assert c.count(f"a.{ZONE}", since=mark) == 1
    r = ctl.post("/reload?format=text")
    assert r.status == 200 and r.text == "reloaded\n", r


# --- methods and paths -----------------------------------------------------

def test_wrong_method_405_unknown_path_404(dd):
    ctl = dd.control()
    for method, path, allow in [("GET", "/flush", "POST"),
                                ("GET", "/reload", "POST"),
                                ("POST", "/metrics", "GET"),
                                ("POST", "/stats", "GET"),
                                ("POST", "/cache", "GET"),
                                ("POST", "/explain?name=a.test", "GET"),
                                ("POST", "/upstreams", "GET")]:
        r = ctl.request(method, path)
        # RFC 9110 §15.5.6: 405 with an Allow field naming the method
        assert r.status == 405, (method, path, r)
        assert r.header("Allow") == allow, (method, path, r.headers)
    for path in ("/", "/nope", "/metrics/x", "/flushall"):
        r = ctl.get(path)
        assert r.status == 404, (path, r)
        assert r.json() == {"error": "no such resource"}, r
    # any other method: 405 too, with Allow (dnsdamper(8)); never done
    query.udp(dd.port, "alive.example.test")
    for method in ("PUT", "DELETE", "PATCH", "OPTIONS"):
        r = ctl.request(method, "/flush")
        assert r.status == 405 and r.header("Allow") == "POST", (method, r)
        assert "error" in r.json(), r
    assert ("alive.example.test", "A") in _cache_keys(ctl)
    checks.still_serving(dd)


# --- the socket file -------------------------------------------------------

def _other_group():
    """A group the daemon may give its socket: any but ours as root; as
    another user, a supplementary group of ours (chown(2) allows no
    other). None if there is none."""
    mine = os.getegid()
    if os.geteuid() == 0:
        for name in ("nogroup", "daemon", "adm", "users"):
            try:
                g = grp.getgrnam(name)
            except KeyError:
                continue
            if g.gr_gid != mine:
                return g.gr_name, g.gr_gid
        return None
    for gid in os.getgroups():
        if gid != mine:
            try:
                return grp.getgrgid(gid).gr_name, gid
            except KeyError:
                continue
    return None


def test_control_socket_default_mode_and_removed_at_stop(dd):
    st = os.stat(dd.control_path)
    assert stat.S_ISSOCK(st.st_mode)
    # control-mode default 0660, control-group none: the process's group
    assert stat.S_IMODE(st.st_mode) == 0o660, oct(st.st_mode)
    assert st.st_gid == os.getegid()
    dd.stopped_by_test = True
    status, killed = dd.stop()
    assert (status, killed) == (0, False), dd.stderr()
    assert not dd.control_path.exists(), "control socket left at stop"


def test_control_mode_and_group_applied(dnsdamper, bind):
    d = dnsdamper([Forward(".", [bind])], extra=["control-mode 0600"])
    st = os.stat(d.control_path)
    assert stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
    assert d.control().get("/metrics").status == 200

    group = _other_group()
    if group is None:
        pytest.skip("no group other than our own that we may chown(2) to "
                    "(not root and no supplementary group)")
    d2 = dnsdamper([Forward(".", [bind])],
                   extra=["control-mode 640", f"control-group {group[0]}"])
    st = os.stat(d2.control_path)
    assert stat.S_IMODE(st.st_mode) == 0o640, oct(st.st_mode)
    assert st.st_gid == group[1], (st.st_gid, group)
    assert d2.control().get("/metrics").status == 200


def test_control_socket_made_with_mode_and_group_never_by_path(
        dnsdamper, bind):
    """The socket file must have its mode and group from the moment bind()
    makes it (as root), never get them by a chmod or chown of its path
    after: its directory is the daemon user's, who could put another file
    there in between (a link to /etc/shadow, say) for root to change. On
    Linux only the umask sets a unix socket's mode. Watched with strace:
    the daemon is made to stop right after the control socket, by a
    metrics-listen port already taken."""
    group = _other_group()
    if group is None or os.geteuid() != 0:
        pytest.skip("needs root and a group other than ours")
    with socket.socket() as taken:
        taken.bind((ports.LOOPBACK, 0))
        taken.listen(1)
        d = dnsdamper([Forward(".", [bind])], start=False,
                      extra=["control-mode 0640",
                             f"control-group {group[0]}",
                             f"metrics-listen 127.0.0.1:"
                             f"{taken.getsockname()[1]}"])
        trace = d.dir / "strace.out"
        d.wrapper = ["strace", "-f", "-qq", "-o", str(trace), "-e",
                     "trace=umask,bind,setresgid,setregid,setgid,setfsgid,"
                     "chmod,fchmod,fchmodat,chown,lchown,fchown,fchownat",
                     "--"]
        assert d.run_to_exit(15) == 1, d.stderr()
    path = str(d.control_path)
    calls = trace.read_text().splitlines()
    [at] = [i for i, c in enumerate(calls) if "bind(" in c and path in c]
    assert calls[at].rstrip().endswith("= 0"), calls[at]
    # umask 0137 = 0777 & ~0640, and the group as the effective one, both
    # in force when bind() made the file
    before = calls[:at]
    umasks = [c for c in before if "umask(" in c]
    assert umasks and "umask(0137)" in umasks[-1], umasks
    egid = [c for c in before if "setresgid(" in c or "setregid(" in c or
            "setgid(" in c]
    assert egid and f", {group[1]}, " in egid[-1], egid
    by_path = [c for c in calls if path in c and "bind(" not in c]
    assert by_path == [], by_path


def test_control_group_missing_runs_without_socket(dnsdamper, bind):
    d = dnsdamper([Forward(".", [bind])],
                  extra=["control-group no-such-group-dnsdamper"])
    assert "control-group no-such-group-dnsdamper does not exist" in \
        d.stderr()
    assert "running without the control socket" in d.stderr()
    assert not d.control_path.exists()
    checks.still_serving(d)


def test_control_socket_that_cannot_be_made(dnsdamper, bind, tmp_path):
    """dnsdamper.conf(5), control: a path longer than 107 octets, or
    another file at path: logged, and the daemon runs without the control
    socket (and leaves the file alone)."""
    long_path = tmp_path / ("x" * 120) / "control.sock"
    d = dnsdamper([Forward(".", [bind])], extra=[f"control {long_path}"])
    assert "running without the control socket" in d.stderr(), d.stderr()
    checks.still_serving(d)
    plain = tmp_path / "plain-file"
    plain.write_text("mine\n")
    d = dnsdamper([Forward(".", [bind])], extra=[f"control {plain}"])
    assert "running without the control socket" in d.stderr(), d.stderr()
    checks.still_serving(d)
    assert plain.read_text() == "mine\n"


def test_control_directory_is_made(dnsdamper, bind, tmp_path):
    """The directory of control is created if missing, one level only."""
    path = tmp_path / "newdir" / "control.sock"
    d = dnsdamper([Forward(".", [bind])], extra=[f"control {path}"])
    assert path.parent.is_dir()
    assert d.control(path).get("/metrics").status == 200
    deeper = tmp_path / "a" / "b" / "control.sock"
    d = dnsdamper([Forward(".", [bind])], extra=[f"control {deeper}"])
    assert "running without the control socket" in d.stderr(), d.stderr()
    assert not deeper.parent.exists()
    checks.still_serving(d)


def test_stale_socket_file_is_replaced(dnsdamper, bind, tmp_path):
    """A socket file nobody accepts on (left by a crash) is replaced."""
    d = dnsdamper([Forward(".", [bind])], start=False)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.bind(str(d.control_path))
    assert d.control_path.exists()
    d.start()
    assert d.control().get("/metrics").status == 200
    assert "running without the control socket" not in d.stderr()


def test_live_socket_is_not_taken(dnsdamper, bind):
    """A second daemon given the control socket of a running one leaves it
    alone: it warns and runs without one; the first keeps its socket."""
    first = dnsdamper([Forward(".", [bind])])
    second = dnsdamper([Forward(".", [bind])],
                       extra=[f"control {first.control_path}"])
    assert "running without the control socket" in second.stderr()
    checks.still_serving(second)
    query.udp(second.port, "alive.example.test")
    # the socket still leads to the first daemon: its counters, not the
    # second's (which has answered A queries; the first none)
    m = first.control().metrics()
    assert m.get("dnsdamper_queries_total", transport="udp",
                 qtype="A") == 0, m.text
    second.stopped_by_test = True
    second.stop()
    assert first.control_path.exists()
    assert first.control().get("/metrics").status == 200
