"""Runtime forward zones (dnsdamperctl forward add / remove / list): a zone
added over the control socket takes precedence over the configured ones
from the next query on, without a reload; removing it sends its names back
to the configured zone; only the names under a changed zone leave the
cache; the zones outlive a reload (or refuse it when they no longer fit)
and a restart (the state file beside cache-file); --lifetime ends them;
owners remove theirs; a loop back to us and a caller who is not root, the
daemon's user or of the control socket's group are refused; RUNZONE_MAX
(1,024) zones at most.

Two named: `home` is `.` (the configured default) and `vpn` is what the
runtime zone forwards to; both serve rt.test, each with its own address
for www, so an answer tells who gave it."""

import grp
import os
import pwd
import re
import shutil
import stat
import subprocess
import time
from pathlib import Path

import dns.rcode
import pytest

from dnstest import query
from dnstest.control import ctl, ctl_path
from dnstest.daemon import Forward, upstream

ZONE = "rt.test"
HOME_A, VPN_A = "192.0.2.121", "192.0.2.122"
EXIT_DAEMON, EXIT_USAGE = 1, 64


def _zone(origin, records):
    return f"""\
$TTL 300
@   300 IN SOA ns.{origin}. hostmaster.{origin}. 1 3600 600 86400 60
@   300 IN NS  ns
ns  300 IN A   127.0.0.1
{records}
"""


@pytest.fixture
def pair(new_bind):
    home = new_bind("home", {
        ZONE: _zone(ZONE, f"www 300 IN A {HOME_A}"),
        "other.test": _zone("other.test", "keep 300 IN A 192.0.2.123")})
    vpn = new_bind("vpn", {ZONE: _zone(ZONE, f"www 300 IN A {VPN_A}")})
    return home, vpn


def _daemon(dnsdamper, home, extra=(), workdir=None):
    return dnsdamper([Forward(".", [home])], extra=list(extra),
                     workdir=workdir)


def _ctl(d, *args, **kw):
    return ctl("-s", str(d.control_path), *args, **kw)


def _ok(d, *args):
    r = _ctl(d, *args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


def _www(d):
    r = query.udp(d.port, f"www.{ZONE}")
    assert r.rcode == dns.rcode.NOERROR, r.text()
    return query.addresses(r)


def _still_serving(d):
    """Alive and answering through home (checks.still_serving asks the
    session named, which these daemons do not forward to)."""
    d.assert_alive()
    r = query.udp(d.port, "keep.other.test")
    assert query.addresses(r) == {"192.0.2.123"}, r.text()


def _listed(d):
    return {z["zone"]: z for z in
            d.control().ok("GET", "/forward").json()["zones"]
            if z["source"] == "runtime"}


def test_add_routes_and_remove_goes_back(dnsdamper, pair):
    """Added: the next query goes to vpn (no reload; the cached answer of
    home was flushed); a name outside the zone stays cached. Removed: home
    answers again."""
    home, vpn = pair
    d = _daemon(dnsdamper, home)
    assert _www(d) == {HOME_A}
    query.udp(d.port, "keep.other.test")
    mark_home, mark_vpn = home.mark(), vpn.mark()
    out = _ok(d, "forward", "add", ZONE, upstream(vpn.port), "--owner", "tun0")
    assert out == f"added {ZONE}.\n", out
    assert _www(d) == {VPN_A}
    assert vpn.count(f"www.{ZONE}", since=mark_vpn) == 1
    # flush scope: only names under rt.test left the cache
    query.udp(d.port, "keep.other.test")
    assert home.count("keep.other.test", since=mark_home) == 0
    assert home.count(f"www.{ZONE}", since=mark_home) == 0
    zones = _listed(d)
    assert zones[f"{ZONE}."]["owner"] == "tun0", zones
    assert zones[f"{ZONE}."]["expires_in"] is None, zones
    assert re.search(rf"runtime forward {ZONE}\. added by owner tun0: to "
                     rf"{re.escape(upstream(vpn.port))}", d.stderr()), d.stderr()
    text = _ok(d, "forward", "list")
    assert re.search(rf"^{ZONE}\. runtime owner tun0 policy order upstream "
                     rf"{re.escape(upstream(vpn.port))}$", text, re.M), text
    assert re.search(r"^\. configured policy order upstream ", text,
                     re.M), text

    out = _ok(d, "forward", "remove", ZONE)
    assert out == f"removed {ZONE}.\n", out
    assert _www(d) == {HOME_A}
    assert home.count(f"www.{ZONE}", since=mark_home) == 1
    assert _listed(d) == {}
    assert re.search(rf"runtime forward {ZONE}\. removed by the control "
                     r"socket", d.stderr()), d.stderr()
    # not there any more: 404, exit 1
    r = _ctl(d, "forward", "remove", ZONE)
    assert r.returncode == EXIT_DAEMON, r
    assert "is not a runtime forward zone" in r.stderr, r.stderr
    _still_serving(d)


def test_runtime_zone_takes_precedence_over_configured(dnsdamper, pair,
                                                        bind):
    """A configured forward of the same name is overridden, listed as
    such, and serves again once the runtime zone is gone."""
    home, vpn = pair
    d = dnsdamper([Forward(ZONE, [home]), Forward(".", [bind])])
    assert _www(d) == {HOME_A}
    _ok(d, "forward", "add", ZONE, upstream(vpn.port), "--policy", "random")
    assert _www(d) == {VPN_A}
    zones = d.control().ok("GET", "/forward").json()["zones"]
    mine = [z for z in zones if z["zone"] == f"{ZONE}."]
    assert [(z["source"], z["overridden"], z["policy"]) for z in mine] == \
        [("configured", True, "order"), ("runtime", False, "random")], mine
    _ok(d, "forward", "remove", ZONE)
    assert _www(d) == {HOME_A}


def test_reload_keeps_runtime_zones_or_is_refused(dnsdamper, pair):
    """A reload applies the runtime zones over the new configuration; one
    that no longer validates there (its upstream is now one of our listen
    addresses) makes the reload fail, naming it, and nothing changes."""
    home, vpn = pair
    d = _daemon(dnsdamper, home)
    _ok(d, "forward", "add", ZONE, upstream(vpn.port), "--owner", "wg0")
    d.reload()
    assert _www(d) == {VPN_A}
    assert f"{ZONE}." in _listed(d)

    text = d.config([Forward(".", [home])],
                    extra=[f"listen {upstream(vpn.port)}"])
    d.write_config(text)
    r = d.control().post("/reload?format=text")
    assert r.status == 500, r
    assert f"runtime forward {ZONE}. (owner wg0): upstream " \
        f"{upstream(vpn.port)} would loop" in r.text, r.text
    assert _www(d) == {VPN_A}
    _still_serving(d)


def test_restart_keeps_runtime_zones(dnsdamper, pair, tmp_path):
    """The zones are saved in forward-zones beside cache-file (mode 0600,
    ours), and the next start serves them, lifetimes counting on."""
    home, vpn = pair
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    extra = [f"cache-file {state / 'cache.dump'}"]
    d = _daemon(dnsdamper, home, extra)
    _ok(d, "forward", "add", ZONE, upstream(vpn.port), "--owner", "tun0",
        "--lifetime", "1h")
    _ok(d, "forward", "add", "gone.test", upstream(vpn.port))
    _ok(d, "forward", "remove", "gone.test")
    path = state / "forward-zones"
    # written on main's next tick (a burst of changes in one write), not
    # only at stop: a daemon that is killed keeps them too
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (
            path.exists() and f"\n{ZONE}. " in path.read_text() and
            "gone.test" not in path.read_text()):
        time.sleep(0.1)
    assert f"\n{ZONE}. " in path.read_text()
    d.stopped_by_test = True
    assert d.stop() == (0, False)
    st = os.stat(path)
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == os.geteuid()
    lines = [ln for ln in path.read_text().splitlines()
             if not ln.startswith("#")]
    assert len(lines) == 1 and lines[0].startswith(f"{ZONE}. order tun0 ") \
        and lines[0].endswith(f" 3600 {upstream(vpn.port)}"), lines

    d2 = _daemon(dnsdamper, home, extra)
    assert re.search(r"forward state file .*forward-zones: 1 runtime "
                     r"forward zones restored", d2.stderr()), d2.stderr()
    assert _www(d2) == {VPN_A}
    left = _listed(d2)[f"{ZONE}."]["expires_in"]
    assert 0 < left <= 3600, left


@pytest.mark.skipif(os.geteuid() != 0, reason="chown(2) needs root")
def test_state_file_another_user_could_write_is_ignored(dnsdamper, pair,
                                                        tmp_path):
    """Checked as the cache file is: a state file another user owns, or
    that others may write, is ignored with a warning."""
    home, vpn = pair
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    path = state / "forward-zones"
    path.write_text(f"{ZONE}. order - 0 0 {upstream(vpn.port)}\n")
    path.chmod(0o666)
    d = _daemon(dnsdamper, home, [f"cache-file {state / 'cache.dump'}"])
    assert "the file is writable by others (mode 666)" in d.stderr()
    assert _www(d) == {HOME_A}
    assert _listed(d) == {}


def test_lifetime_ends_a_zone(dnsdamper, pair):
    """--lifetime 1s: gone within main's next ticks, back to home; what
    is left is listed, and the end is logged."""
    home, vpn = pair
    d = _daemon(dnsdamper, home)
    _ok(d, "forward", "add", ZONE, upstream(vpn.port), "--lifetime", "1s")
    assert _www(d) == {VPN_A}
    d.wait_log(rf"runtime forward {ZONE}\. removed: its lifetime ran out",
               timeout=10)
    assert _listed(d) == {}
    assert _www(d) == {HOME_A}


def test_owner_removes_its_own(dnsdamper, pair):
    home, vpn = pair
    d = _daemon(dnsdamper, home)
    _ok(d, "forward", "add", ZONE, upstream(vpn.port), "--owner", "tun0")
    _ok(d, "forward", "add", "a.test", upstream(vpn.port), "--owner", "tun0")
    _ok(d, "forward", "add", "b.test", upstream(vpn.port), "--owner", "tun1")
    # another owner's zone is not removed by name
    r = _ctl(d, "forward", "remove", "b.test", "--owner", "tun0")
    assert r.returncode == EXIT_DAEMON and "not of owner tun0" in r.stderr, r
    out = _ok(d, "forward", "remove", "--owner", "tun0")
    assert sorted(out.splitlines()) == ["removed a.test.",
                                        f"removed {ZONE}."], out
    assert set(_listed(d)) == {"b.test."}
    assert _www(d) == {HOME_A}


def test_loop_and_bad_requests_refused(dnsdamper, pair):
    home, vpn = pair
    d = _daemon(dnsdamper, home)
    r = _ctl(d, "forward", "add", ZONE, f"127.0.0.1:{d.port}")
    assert r.returncode == EXIT_DAEMON, r
    assert f"upstream 127.0.0.1:{d.port} would loop: it is our listen " \
        "address" in r.stderr, r.stderr
    for args, why in [
            ((ZONE, "not-an-address"), "is not an address"),
            ((ZONE, upstream(vpn.port), "--policy", "best"), "policy"),
            ((ZONE, upstream(vpn.port), "--lifetime", "0s"), "lifetime"),
            ((ZONE, upstream(vpn.port), "--owner", "a b"), "owner"),
            ((ZONE, upstream(vpn.port), upstream(vpn.port)), "duplicate")]:
        r = _ctl(d, "forward", "add", *args)
        assert r.returncode == EXIT_DAEMON and why in r.stderr, (args, r)
    assert _ctl(d, "forward", "add", ZONE).returncode == EXIT_USAGE
    assert _listed(d) == {}
    assert _www(d) == {HOME_A}


def test_at_most_1024_runtime_zones(dnsdamper, pair):
    """RUNZONE_MAX bounds what the control socket can make us hold: the
    1,025th zone is refused (507), a renewal of one there is not."""
    home, vpn = pair
    d = _daemon(dnsdamper, home)
    c = d.control()
    up = upstream(vpn.port)
    for i in range(1024):
        r = c.post(f"/forward/add?zone=z{i}.test&upstream={up}")
        assert r.status == 200, (i, r)
    r = c.post(f"/forward/add?zone=z1024.test&upstream={up}")
    assert r.status == 507 and "1024" in r.json()["error"], r
    r = c.post(f"/forward/add?zone=z7.test&upstream={up}")
    assert r.status == 200 and r.json()["renewed"] is True, r
    assert c.ok("GET", "/forward").json()["runtime"] == 1024
    assert _www(d) == {HOME_A}
    _still_serving(d)


def test_caller_without_permission_refused(dnsdamper, pair, open_dir):
    """With control-mode 0666 anyone may connect and read, but changing
    forwarding takes root, the daemon's user or the socket's group
    (SO_PEERCRED, SO_PEERGROUPS): nobody gets 403, exit 1."""
    if os.geteuid() != 0:
        pytest.skip("needs root: running dnsdamperctl as another user")
    runuser = shutil.which("runuser") or "/usr/sbin/runuser"
    home, vpn = pair
    binary = open_dir / "dnsdamperctl"
    shutil.copy(ctl_path(), binary)
    binary.chmod(0o755)
    as_nobody = [runuser, "-u", "nobody", "--"]
    sock = open_dir / "fw.sock"
    d = _daemon(dnsdamper, home, [f"control {sock}", "control-mode 0666"])
    r = ctl("-s", str(sock), "forward", "add", ZONE, upstream(vpn.port),
            prefix=as_nobody, binary=binary)
    assert r.returncode == EXIT_DAEMON, r
    assert "may change forwarding" in r.stderr, r.stderr
    r = ctl("-s", str(sock), "forward", "list", prefix=as_nobody,
            binary=binary)
    assert r.returncode == 0, r
    assert _www(d) == {HOME_A}
    # nobody's group as control-group: then nobody may
    group = grp.getgrgid(pwd.getpwnam("nobody").pw_gid).gr_name
    sock2 = open_dir / "fw2.sock"
    d2 = _daemon(dnsdamper, home, [f"control {sock2}", "control-mode 0660",
                                   f"control-group {group}"])
    r = ctl("-s", str(sock2), "forward", "add", ZONE, upstream(vpn.port),
            prefix=as_nobody, binary=binary)
    assert r.returncode == 0, r
    assert _www(d2) == {VPN_A}


def _tools(tmp_path, d):
    """A dnsdamperctl that talks to d's socket, and the resolvconf hook
    made from its .in with tmp_path's sbin and etc, as make does."""
    sbin = tmp_path / "sbin"
    sbin.mkdir()
    (sbin / "dnsdamper").write_text("#!/bin/sh\nexit 0\n")
    (sbin / "dnsdamperctl").write_text(
        f"#!/bin/sh\nexec {ctl_path()} -s {d.control_path} \"$@\"\n")
    for f in sbin.iterdir():
        f.chmod(0o755)
    (tmp_path / "etc" / "dnsdamper").mkdir(parents=True)
    top = os.environ.get("top_srcdir") or str(
        Path(__file__).resolve().parents[2])
    text = (Path(top) / "contrib/resolvconf/update.d-dnsdamper.in") \
        .read_text().replace("@sbindir@", str(sbin)) \
        .replace("@sysconfdir@", str(tmp_path / "etc"))
    hook = tmp_path / "update.d-dnsdamper"
    hook.write_text(text)
    hook.chmod(0o755)
    return sbin, hook, Path(top) / "contrib/resolvconf/90-dnsdamper-vpn"


RESOLVCONF_SHIM = """#!/bin/sh
# openresolv's -i and -l over the records in {records}
case "$1" in
-i) ls {records} ;;
-l) if [ -n "$2" ]; then cat "{records}/$2"; else cat {records}/*; fi ;;
esac
"""


@pytest.mark.skipif(os.path.exists("/lib/resolvconf/list-records"),
                    reason="Debian's resolvconf is installed: the hook "
                    "would read its records, not the test's")
def test_resolvconf_hook_zones_follow_the_records(dnsdamper, pair,
                                                   tmp_path):
    """The update hook (openresolv's -i and -l, from a shim): a record
    with `domain` and `search` and a name server makes runtime zones owned
    by resolvconf:IFACE; a record without name servers or domains makes
    none; a search word dropped from the record, or the record gone (what
    resolvconf -d leaves), removes them. The name servers carry the vpn
    named's port, which no real record has: the test's named is not on
    port 53."""
    home, vpn = pair
    d = _daemon(dnsdamper, home)
    _, hook, _ = _tools(tmp_path, d)
    records = tmp_path / "records"
    records.mkdir()
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "resolvconf").write_text(RESOLVCONF_SHIM.format(
        records=records))
    (shims / "resolvconf").chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"}

    def run_hook():
        r = subprocess.run([str(hook)], env=env, capture_output=True,
                           text=True, timeout=30)
        assert r.returncode == 0, (r.stdout, r.stderr)

    (records / "eth0").write_text("nameserver 127.0.0.1\nsearch lan\n")
    (records / "tun0").write_text(
        f"domain {ZONE.upper()}\nsearch lab.{ZONE} corp.test\n"
        f"nameserver {upstream(vpn.port)}\n")
    run_hook()
    zones = _listed(d)
    assert set(zones) == {f"{ZONE}.", f"lab.{ZONE}.", "corp.test."}, zones
    assert {z["owner"] for z in zones.values()} == {"resolvconf:tun0"}
    assert _www(d) == {VPN_A}
    run_hook()                  # nothing changed: renewals
    assert len(_listed(d)) == 3

    (records / "tun0").write_text(f"search {ZONE}\n"
                                  f"nameserver {upstream(vpn.port)}\n")
    run_hook()
    assert set(_listed(d)) == {f"{ZONE}."}
    (records / "tun0").unlink()
    run_hook()
    assert _listed(d) == {}
    assert _www(d) == {HOME_A}


def test_networkmanager_dispatcher_vpn_up_and_down(dnsdamper, pair,
                                                   tmp_path):
    home, vpn = pair
    d = _daemon(dnsdamper, home)
    sbin, _, script = _tools(tmp_path, d)
    env = {**os.environ, "DNSDAMPERCTL": str(sbin / "dnsdamperctl"),
           "CONNECTION_UUID": "5b1c2f7e-0d4a-4c5e-9d51-7a1f0e3c2b11",
           "VPN_IP_IFACE": "tun0",
           "VPN_IP4_NAMESERVERS": upstream(vpn.port),
           "VPN_IP4_DOMAINS": f"{ZONE} corp.test"}
    for action in ("vpn-up", "vpn-down"):
        r = subprocess.run([str(script), "tun0", action], env=env,
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and r.stderr == "", r
        if action == "vpn-up":
            zones = _listed(d)
            assert set(zones) == {f"{ZONE}.", "corp.test."}, zones
            assert zones["corp.test."]["owner"] == \
                "nm:5b1c2f7e-0d4a-4c5e-9d51-7a1f0e3c2b11"
            assert _www(d) == {VPN_A}
    assert _listed(d) == {}
    assert _www(d) == {HOME_A}
