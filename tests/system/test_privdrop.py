"""Privilege drop (dnsdamper(8), PRIVILEGES; dnsdamper.conf(5), user).

Started as root, dnsdamper binds, makes the control socket, prepares the
directories of the control socket and the cache file, then clears its
supplementary groups and takes the user and primary group of `user` for
good. A user that does not exist stops the start. Started as any other
user, `user` is not used.

The daemon's files live in an open directory (conftest open_dir): after
the drop it must still reach them.
"""

import os
import pwd
import re
import shutil
import stat

import pytest

from dnstest import checks
from dnstest.daemon import Forward, binary_path

root_only = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root: only root can drop privileges "
    "or run the daemon as another user")


def _ids(pid):
    """(uids, gids, groups) of /proc/PID/status: real, effective, saved
    and filesystem IDs, and the supplementary groups."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            fields[k] = v.split()
    return ([int(x) for x in fields["Uid"]], [int(x) for x in fields["Gid"]],
            [int(x) for x in fields["Groups"]])


def _config_without_user(d):
    """d's config as the harness writes it, less its `user root`."""
    text = d.config(d._forwards, d._extra)
    return "".join(line + "\n" for line in text.splitlines()
                   if line != "user root")


@root_only
def test_root_becomes_user_nobody(open_dir, dnsdamper, bind):
    nobody = pwd.getpwnam("nobody")
    run, state = open_dir / "run", open_dir / "state"
    extra = ["user nobody", f"control {run / 'control.sock'}",
             f"cache-file {state / 'cache.dump'}"]
    d = dnsdamper([Forward(".", [bind])], extra=extra,
                  workdir=open_dir / "d1")
    uids, gids, groups = _ids(d.proc.pid)
    assert uids == [nobody.pw_uid] * 4, uids
    assert gids == [nobody.pw_gid] * 4, gids
    assert groups == [], groups
    assert f"running as user nobody (uid {nobody.pw_uid}, gid " \
        f"{nobody.pw_gid})" in d.stderr(), d.stderr()
    checks.still_serving(d)

    # the directories it made are nobody's; the socket stays root's
    for made in (run, state):
        st = made.stat()
        assert (st.st_uid, st.st_gid) == (nobody.pw_uid, nobody.pw_gid), made
    sock = (run / "control.sock").stat()
    assert stat.S_ISSOCK(sock.st_mode) and sock.st_uid == 0
    assert d.control(run / "control.sock").get("/metrics").status == 200

    # a reload reads the configuration as nobody, which may read it
    mark = d.reload()
    d.wait_log(r"info: reloaded$", since=mark)
    assert "reload failed" not in d.stderr(mark)

    # at stop, as nobody: the socket removed, the cache file written
    d.stopped_by_test = True
    assert d.stop() == (0, False), d.stderr()
    assert not (run / "control.sock").exists()
    cache = (state / "cache.dump").stat()
    assert cache.st_uid == nobody.pw_uid, cache
    assert re.search(r"cache-file .*: [1-9]\d* entries saved", d.stderr())

    # and the next one reads it back, as nobody
    d2 = dnsdamper([Forward(".", [bind])], extra=extra,
                   workdir=open_dir / "d2")
    # read in the background once it serves: waited for
    d2.wait_log(r"cache-file .*: [1-9]\d* entries restored")


@root_only
def test_root_with_unknown_user_refuses_to_start(dnsdamper, bind):
    d = dnsdamper([Forward(".", [bind])],
                  extra=["user no-such-user-dnsdamper"], start=False)
    # dnsdamper -t only warns (the file may be meant for another host)
    r = d.check()
    assert r.returncode == 0, r
    assert "warning: user no-such-user-dnsdamper does not exist" in \
        r.stderr, r
    status = d.run_to_exit()
    assert status == 1, d.stderr()
    # the start fails on it: an error (syslog and journal priority 3)
    assert "error: user no-such-user-dnsdamper does not exist" in d.stderr()


@root_only
def test_root_without_user_needs_user_dnsdamper(dnsdamper, bind):
    """No `user`: the default is dnsdamper, which `make install` does not
    create. Missing, the start is refused with how to create it; present,
    the daemon becomes it."""
    d = dnsdamper([Forward(".", [bind])], start=False)
    d.write_config(_config_without_user(d))
    try:
        pw = pwd.getpwnam("dnsdamper")
    except KeyError:
        pw = None
    if pw is None:
        status = d.run_to_exit()
        assert status == 1, d.stderr()
        assert "user dnsdamper does not exist: create it (useradd --system " \
            "--no-create-home --shell /usr/sbin/nologin dnsdamper)" in \
            d.stderr(), d.stderr()
        return
    d.start()
    uids, gids, _ = _ids(d.proc.pid)
    assert uids == [pw.pw_uid] * 4 and gids == [pw.pw_gid] * 4


def test_other_user_keeps_itself_and_ignores_user(open_dir, dnsdamper,
                                                  bind):
    """Not started as root: `user` is not used, not even looked up; the
    daemon runs as whoever started it. As root, the test starts it as
    nobody with setpriv(1) (which execs in place, so the PID is the
    daemon's)."""
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
        if not os.access(setpriv, os.X_OK):
            pytest.fail("setpriv not found: apt-get install util-linux",
                        pytrace=False)
        nobody = pwd.getpwnam("nobody")
        binary = open_dir / "dnsdamper"
        shutil.copy(binary_path(), binary)
        binary.chmod(0o755)
        want = (nobody.pw_uid, nobody.pw_gid)
        wrap = [setpriv, f"--reuid={nobody.pw_uid}",
                f"--regid={nobody.pw_gid}", "--clear-groups", "--"]
    else:
        binary, want, wrap = None, (os.getuid(), os.getgid()), []
    d = dnsdamper([Forward(".", [bind])],
                  extra=["user no-such-user-dnsdamper"],
                  workdir=open_dir / "d", binary=binary, wrapper=wrap)
    uids, gids, _ = _ids(d.proc.pid)
    assert uids == [want[0]] * 4 and gids == [want[1]] * 4, (uids, gids)
    assert "does not exist" not in d.stderr()
    assert "running as user" not in d.stderr()
    checks.still_serving(d)
