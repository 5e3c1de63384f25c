"""dnsdamperctl(8) against a running daemon: every command, in text and
with --json, and its exit status: 0 answered, 1 refused by the daemon,
2 daemon not reachable, 64 bad command line."""

import json
import os
import grp
import pwd
import re
import shutil
import socket

import pytest

from dnstest import checks, query
from dnstest.control import Exposition, ctl, ctl_path
from dnstest.daemon import Forward, upstream

ZONE = "ops-ctl.test"
T_ZONE = """\
$TTL 300
@        300 IN SOA ns.ops-ctl.test. hostmaster.ops-ctl.test. 1 3600 600 86400 60
@        300 IN NS  ns
ns       300 IN A   127.0.0.1
one      300 IN A   192.0.2.51
two      300 IN A   192.0.2.52
deep.two 300 IN A   192.0.2.53
"""

EXIT_DAEMON, EXIT_UNREACHABLE, EXIT_USAGE = 1, 2, 64


@pytest.fixture
def ctl_daemon(dnsdamper, bind, new_bind):
    t = new_bind("ctl", {ZONE: T_ZONE})
    d = dnsdamper([Forward(ZONE, [t]), Forward(".", [bind])])
    return d, t


def _run(d, *args, **kw):
    return ctl("-s", str(d.control_path), *args, **kw)


def _ok(d, *args):
    r = _run(d, *args)
    assert r.returncode == 0, f"dnsdamperctl {args}: {r.returncode}\n" \
        f"{r.stdout}{r.stderr}"
    return r.stdout


def test_stats_text_and_json(ctl_daemon):
    d, _ = ctl_daemon
    hits = d.control().metrics().get("dnsdamper_cache_hits_total")
    for _ in range(2):
        query.udp(d.port, f"one.{ZONE}")             # a miss, then a hit
    text = _ok(d, "stats")
    # dnsdamperctl(8): every counter and gauge that is not zero, one per
    # line as `name{labels} value`; histograms as their count and mean
    for line in text.splitlines():
        m = re.fullmatch(r"(dnsdamper_[a-z_]+)(\{[^}]*\})? "
                         r"(count (\d+), mean [0-9.]+ ms|(\S+))", line)
        assert m, f"not a stats line: {line!r}"
        value = float(m.group(4) or m.group(5))
        assert value != 0, line
    assert "dnsdamper_queries_total{transport=udp,qtype=A} 2" in \
        text.splitlines(), text
    assert f"dnsdamper_cache_hits_total {int(hits) + 1}" in \
        text.splitlines(), text
    assert not any(line.startswith("dnsdamper_tcp_connections_total")
                   for line in text.splitlines()), "a zero was printed"

    js = json.loads(_ok(d, "--json", "stats"))
    assert js == d.control().stats()
    # with --json every series, zero or not
    tcp = [s for s in js["dnsdamper_queries_total"]
           if s["labels"] == {"transport": "tcp", "qtype": "A"}]
    assert tcp == [{"labels": {"transport": "tcp", "qtype": "A"},
                    "value": 0}], tcp


def test_metrics(ctl_daemon):
    d, _ = ctl_daemon
    query.udp(d.port, f"one.{ZONE}")
    out = Exposition(_ok(d, "metrics"))
    assert out.samples == d.control().metrics().samples
    # --json changes nothing for metrics (it has no other format)
    assert Exposition(_ok(d, "--json", "metrics")).samples == out.samples


def test_upstreams_text_and_json(ctl_daemon):
    d, t = ctl_daemon
    query.udp(d.port, f"one.{ZONE}")
    text = _ok(d, "upstreams")
    lines = text.splitlines()
    assert lines[0].split() == ["UPSTREAM", "STATE", "EDNS", "SRTT", "RTO",
                                "FAILS", "ZONE", "QUERIES", "ANSWERS",
                                "TIMEOUTS", "FAILURES"], lines[0]
    rows = [line.split() for line in lines[1:]]
    mine = [r for r in rows if r[0] == upstream(t.port)]
    # one row per zone it serves: ops-ctl.test., asked twice (the query
    # and the loop probe of its first use), both answered
    assert len(mine) == 1, rows
    assert mine[0][1:3] == ["up", "yes"], mine
    assert mine[0][6:] == [ZONE + ".", "2", "2", "0", "0"], mine
    js = json.loads(_ok(d, "--json", "upstreams"))
    assert js == d.control().get("/upstreams").json()
    assert {u["address"] for u in js} == {r[0] for r in rows}


def test_explain_text_and_json(ctl_daemon):
    d, t = ctl_daemon
    query.udp(d.port, f"one.{ZONE}")
    text = _ok(d, "explain", f"one.{ZONE}")
    assert re.search(rf"^name\s+one\.{re.escape(ZONE)} A$", text, re.M), text
    assert re.search(rf"^zone\s+{re.escape(ZONE)}\. \(policy order\)$", text,
                     re.M), text
    assert re.search(rf"^upstreams\s+1\. {re.escape(upstream(t.port))} up,",
                     text, re.M), text
    assert re.search(r"^cache\s+fresh, positive, stored with TTL 300 s, "
                     r"(29[5-9]|300) s left$", text, re.M), text
    js = json.loads(_ok(d, "--json", "explain", f"one.{ZONE}", "AAAA"))
    assert js["qtype"] == 28 and js["zone"] == ZONE + "." and \
        js["cache"] == {"state": "absent"}, js


def test_flush_commands(ctl_daemon):
    d, t = ctl_daemon
    for name in ("one", "two", "deep.two"):
        query.udp(d.port, f"{name}.{ZONE}")
    query.udp(d.port, f"one.{ZONE}", "AAAA")
    assert _ok(d, "flush", f"one.{ZONE}", "A") == "flushed 1 entries\n"
    assert json.loads(_ok(d, "--json", "flush", f"one.{ZONE}")) == \
        {"flushed": 1}                                       # the AAAA
    assert _ok(d, "flush-zone", f"two.{ZONE}") == "flushed 2 entries\n"
    mark = t.mark()
    for name in ("one", "two", "deep.two"):
        query.udp(d.port, f"{name}.{ZONE}")
    assert len([q for q in t.queries(mark) if q.qtype == "A"]) == 3
    entries = int(d.control().metrics().get("dnsdamper_cache_entries"))
    assert entries >= 3
    assert json.loads(_ok(d, "--json", "flush")) == {"flushed": entries}
    assert _ok(d, "dump") == ""


def test_dump(ctl_daemon):
    d, _ = ctl_daemon
    query.udp(d.port, f"one.{ZONE}")
    query.udp(d.port, f"none.{ZONE}")
    out = _ok(d, "dump")
    assert out == d.control().get("/cache").text or \
        sorted(out.splitlines()) == sorted(
            d.control().get("/cache").text.splitlines())
    lines = out.splitlines()
    assert any(re.fullmatch(rf"one\.{re.escape(ZONE)}\.\t\d+\tIN\tA\t"
                            rf"192\.0\.2\.51\t; fresh, one\.{re.escape(ZONE)}"
                            rf"\. A", line) for line in lines), lines
    assert any(line.endswith(f"; nxdomain, none.{ZONE}. A") and "\tSOA\t"
               in line for line in lines), lines


def test_reload(ctl_daemon, bind):
    d, t = ctl_daemon
    good = d.conf_path.read_text()
    assert _ok(d, "reload") == "reloaded\n"
    assert json.loads(_ok(d, "--json", "reload")) == {"reloaded": True}
    d.write_config(good + "min-ttl 2h\n")           # out of range (max 1h)
    r = _run(d, "reload")
    assert r.returncode == EXIT_DAEMON, r
    assert "reload failed" in r.stderr and \
        "error: reload failed" in d.stderr() and \
        re.search(rf"{re.escape(d.conf_path.name)}:\d+: min-ttl", r.stderr), \
        r.stderr
    assert r.stdout == ""
    r = _run(d, "--json", "reload")
    assert r.returncode == EXIT_DAEMON and \
        json.loads(r.stderr)["reloaded"] is False, r
    checks.still_serving(d)


def test_refused_requests_exit_1(ctl_daemon):
    d, _ = ctl_daemon
    for args in (["explain", "a..b.test"], ["explain", "a.test", "NOTATYPE"],
                 ["flush", "a..b.test"], ["flush", "a.test", "NOTATYPE"],
                 ["flush-zone", "a..b.test"]):
        r = _run(d, *args)
        assert r.returncode == EXIT_DAEMON, (args, r)
        assert r.stdout == "" and "error" in r.stderr, (args, r)
    checks.still_serving(d)


def test_bad_command_lines_exit_64(dd):
    for args in ([], ["nosuchcommand"], ["explain"],
                 ["explain", "a.test", "A", "extra"], ["flush", "a", "A", "x"],
                 ["flush-zone"], ["flush-zone", "a", "b"], ["stats", "x"],
                 ["dump", "x"], ["-x", "stats"], ["-s"]):
        r = _run(dd, *args)
        assert r.returncode == EXIT_USAGE, (args, r)
        assert "usage: dnsdamperctl" in r.stderr and r.stdout == "", (args, r)
    r = ctl("-h")
    assert r.returncode == 0 and r.stdout.startswith("usage: dnsdamperctl")
    assert r.stderr == ""


def test_unreachable_exit_2(tmp_path):
    missing = tmp_path / "missing.sock"
    r = ctl("-s", str(missing), "stats")
    assert r.returncode == EXIT_UNREACHABLE, r
    assert f"cannot reach dnsdamper at {missing}" in r.stderr, r.stderr
    assert "No such file or directory" in r.stderr, r.stderr

    # a socket file nobody listens on: connection refused
    dead = tmp_path / "dead.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.bind(str(dead))
    r = ctl("-s", str(dead), "stats")
    assert r.returncode == EXIT_UNREACHABLE, r
    assert "Connection refused" in r.stderr, r.stderr

    # not a socket at all
    plain = tmp_path / "plain"
    plain.write_text("not a socket\n")
    r = ctl("-s", str(plain), "stats")
    assert r.returncode == EXIT_UNREACHABLE and "cannot reach" in r.stderr, r

    # longer than sun_path (108 octets)
    r = ctl("-s", "/" + "x" * 200, "stats")
    assert r.returncode == EXIT_UNREACHABLE and "too long" in r.stderr, r

    # without -s: the default, /run/dnsdamper/control.sock
    default = "/run/dnsdamper/control.sock"
    if not os.path.exists(default):
        r = ctl("stats")
        assert r.returncode == EXIT_UNREACHABLE, r
        assert f"cannot reach dnsdamper at {default}" in r.stderr, r


def test_permission_denied_exit_2(dnsdamper, bind, open_dir):
    """dnsdamperctl as nobody against a socket of mode 0600 owned by root:
    EACCES, exit 2; the same socket with 0666, or 0660 and nobody's group
    as control-group, lets nobody in."""
    if os.geteuid() != 0:
        pytest.skip("needs root: running dnsdamperctl as another user")
    runuser = shutil.which("runuser") or "/usr/sbin/runuser"
    if not os.access(runuser, os.X_OK):
        pytest.fail("runuser not found: apt-get install util-linux",
                    pytrace=False)
    nobody = pwd.getpwnam("nobody")
    group = grp.getgrgid(nobody.pw_gid).gr_name
    binary = open_dir / "dnsdamperctl"
    shutil.copy(ctl_path(), binary)
    binary.chmod(0o755)
    as_nobody = [runuser, "-u", "nobody", "--"]

    for i, (extra, allowed) in enumerate([
            (["control-mode 0600"], False),
            (["control-mode 0666"], True),
            (["control-mode 0660", f"control-group {group}"], True),
            (["control-mode 0660"], False)]):
        sock = open_dir / f"c{i}.sock"
        d = dnsdamper([Forward(".", [bind])],
                      extra=[f"control {sock}"] + extra)
        r = ctl("-s", str(sock), "stats", prefix=as_nobody, binary=binary)
        if allowed:
            assert r.returncode == 0, (extra, r)
        else:
            assert r.returncode == EXIT_UNREACHABLE, (extra, r)
            assert "Permission denied" in r.stderr and \
                "control-group" in r.stderr, (extra, r.stderr)
        # root always may
        assert ctl("-s", str(sock), "stats").returncode == 0
        d.stopped_by_test = True
        d.stop()
