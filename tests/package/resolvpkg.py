"""dnsdamper-resolvconf next to systemd-resolved's symlink and next to
resolvconf, as installed by the package, with dnsdamper serving.

Run as a program by tests/package/run, in a mount namespace of its own
(unshare --mount): /etc is an overlay whose writes land in the work
directory, and /run a fresh tmpfs, so that /etc/resolv.conf can be made a
symlink (the package test's own resolv.conf is a mount point, which no
rename replaces) and nothing of it outlives the process. systemctl and
resolvconf are shims first on PATH that log their arguments (and
resolvconf its input).

What dnsdamper-resolvconf(8) says it does:
- resolved's symlink /etc/resolv.conf -> /run/systemd/resolve/stub-resolv.conf
  is replaced by a file naming 127.0.0.1 and ::1, and, since resolved
  reads a /etc/resolv.conf that is not its own for name servers unless its
  configuration has a DNS= line (systemd-resolved.service(8), "foreign"
  mode; resolved.conf(5) DNS=), the drop-in
  /etc/systemd/resolved.conf.d/dnsdamper-resolvconf.conf with an empty
  DNS= is written and resolved restarted: else resolved would forward
  dnsdamper's queries, which it gets from dnsdamper, back to dnsdamper.
  disable puts the same symlink back and removes the drop-in. Where
  resolved has a DNS= of its own, no drop-in (it would clear that list).
- where /etc/resolv.conf is resolvconf's (a symlink into /run/resolvconf),
  enable adds the record lo.dnsdamper with `nameserver 127.0.0.1` and
  `nameserver ::1` (resolvconf -a), and leaves the symlink alone; disable
  deletes the record (resolvconf -d).
- disable always succeeds and leaves a working resolv.conf: where
  resolvconf was removed since enable (its -d would exit 127) or fails,
  or where the saved resolv.conf.orig is gone, a resolv.conf naming the
  upstreams file's servers (127.0.0.53, as the package test installed
  it) with the other lines of the one there, saying what it did.
- the new /etc/resolv.conf is made next to it and renamed into place (a
  new inode; nothing made in $TMPDIR, whose label a copy would carry on
  an SELinux host): enable and disable work with TMPDIR naming no
  directory.
"""

import os
import subprocess
import sys
from pathlib import Path

RESOLV = Path("/etc/resolv.conf")
STUB = Path("/run/systemd/resolve/stub-resolv.conf")
RESOLVCONF_FILE = Path("/run/resolvconf/resolv.conf")
DROPIN = Path("/etc/systemd/resolved.conf.d/dnsdamper-resolvconf.conf")
HOW = Path("/etc/dnsdamper/resolv.conf.how")
STUB_TEXT = ("# resolved's stub file, as the package test writes it\n"
             "nameserver 127.0.0.53\n"
             "options edns0 trust-ad\n"
             "search pkgtest\n")

SHIM = """#!/bin/sh
# {name} for the package test: logs its arguments{stdin}.
echo "{name} $*" >>{log}
{body}
exit 0
"""


def log(*what):
    print("package test:", *what, flush=True)


def sh(*argv):
    subprocess.run(argv, check=True)


def isolate(work):
    """/etc an overlay writing to work, /run an empty tmpfs (with
    /run/systemd/system, so that systemd counts as running)."""
    upper, wd = work / "etc-upper", work / "etc-work"
    upper.mkdir()
    wd.mkdir()
    sh("mount", "-t", "overlay", "overlay", "-o",
       f"lowerdir=/etc,upperdir={upper},workdir={wd}", "/etc")
    sh("mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", "/run")
    Path("/run/systemd/system").mkdir(parents=True)


def shims(work):
    """The systemctl and resolvconf shims; (PATH, their log)."""
    bindir = work / "rc-shims"
    bindir.mkdir()
    calls = work / "rc-calls.log"
    for name, stdin, body in (
            ("systemctl", "", ""),
            ("resolvconf", " and its input", f"[ \"$1\" = -a ] && "
             f"sed 's/^/  /' >>{calls}")):
        shim = bindir / name
        shim.write_text(SHIM.format(name=name, stdin=stdin, log=calls,
                                    body=body))
        shim.chmod(0o755)
    return f"{bindir}:{os.environ['PATH']}", calls


def resolvconf(path, *args, env=None):
    r = subprocess.run(["dnsdamper-resolvconf", *args],
                       env={**os.environ, "PATH": path, **(env or {})},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout + r.stderr


def calls_since(calls, mark):
    text = calls.read_text() if calls.exists() else ""
    return text[mark:], len(text)


def symlink_resolv(target, text):
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    RESOLV.unlink()
    RESOLV.symlink_to(target)


def next_to_resolved(path, calls):
    symlink_resolv(STUB, STUB_TEXT)
    _, mark = calls_since(calls, 0)
    resolvconf(path, "enable")
    assert not RESOLV.is_symlink()
    lines = RESOLV.read_text().splitlines()
    assert "nameserver 127.0.0.1" in lines and "nameserver ::1" in lines
    assert "#nameserver 127.0.0.53" in lines and "search pkgtest" in lines
    dropin = DROPIN.read_text().splitlines()
    assert "[Resolve]" in dropin and "DNS=" in dropin, dropin
    new, mark = calls_since(calls, mark)
    assert "systemctl try-restart systemd-resolved.service\n" in new, new
    resolvconf(path, "disable")
    assert RESOLV.is_symlink() and os.readlink(RESOLV) == str(STUB)
    assert RESOLV.read_text() == STUB_TEXT
    assert not DROPIN.exists() and not HOW.exists()
    new, mark = calls_since(calls, mark)
    assert "systemctl try-restart systemd-resolved.service\n" in new, new
    log("next to resolved: its symlink replaced, its reading of "
        "resolv.conf stopped (DNS=), both undone by disable")

    # resolved with name servers of its own: no drop-in, no restart
    conf = Path("/etc/systemd/resolved.conf")
    conf.write_text("[Resolve]\nDNS=192.0.2.53\n")
    resolvconf(path, "enable")
    assert not RESOLV.is_symlink() and not DROPIN.exists()
    resolvconf(path, "disable")
    assert RESOLV.is_symlink() and conf.read_text() == \
        "[Resolve]\nDNS=192.0.2.53\n"
    new, mark = calls_since(calls, mark)
    assert "systemctl" not in new, new
    conf.unlink()
    log("next to resolved with DNS= of its own: no drop-in")


def next_to_resolvconf(path, calls):
    symlink_resolv(RESOLVCONF_FILE, "nameserver 127.0.0.53\n")
    _, mark = calls_since(calls, 0)
    resolvconf(path, "enable")
    assert HOW.read_text().split()[0] == "resolvconf"
    assert os.readlink(RESOLV) == str(RESOLVCONF_FILE)
    new, mark = calls_since(calls, mark)
    assert "resolvconf -a lo.dnsdamper\n  nameserver 127.0.0.1\n" \
        "  nameserver ::1\n" in new, new
    resolvconf(path, "disable")
    new, mark = calls_since(calls, mark)
    assert "resolvconf -d lo.dnsdamper\n" in new, new
    assert not HOW.exists() and os.readlink(RESOLV) == str(RESOLVCONF_FILE)
    log("next to resolvconf: the record lo.dnsdamper added, then deleted")


UPSTREAM = "127.0.0.53"       # the upstreams file, as installed


def assert_names_upstreams(out, why):
    """resolv.conf a file naming the upstreams file's server, with the
    search line of the one before, dnsdamper's addresses gone; disable
    said why, and what it did."""
    assert not RESOLV.is_symlink()
    lines = RESOLV.read_text().splitlines()
    assert f"nameserver {UPSTREAM}" in lines and "search pkgtest" in lines, \
        lines
    assert not any(a in line for line in lines
                   for a in ("127.0.0.1", "::1")), lines
    assert why in out, out
    assert "now names the upstreams of /etc/dnsdamper/upstreams" in out, out
    assert not HOW.exists()


def disable_without_resolvconf(work, path, calls):
    """Enabled through resolvconf, then resolvconf removed (or failing):
    disable still succeeds, with a resolv.conf naming the upstreams."""
    gone = work / "rc-shims-no-resolvconf"
    gone.mkdir()
    (gone / "systemctl").symlink_to(Path(path.split(":")[0]) / "systemctl")
    failing = work / "rc-shims-failing-resolvconf"
    failing.mkdir()
    (failing / "systemctl").symlink_to(gone / "systemctl")
    (failing / "resolvconf").write_text("#!/bin/sh\necho resolvconf: "
                                        "cannot delete $2 >&2\nexit 1\n")
    (failing / "resolvconf").chmod(0o755)
    base = os.environ["PATH"]
    for shimdir, why in ((gone, "resolvconf is no longer installed"),
                         (failing, "resolvconf -d lo.dnsdamper was not done "
                          "(status 1)")):
        symlink_resolv(RESOLVCONF_FILE, "nameserver 127.0.0.53\n")
        resolvconf(path, "enable")
        assert HOW.read_text().split()[0] == "resolvconf"
        # what resolvconf made of its records, lo.dnsdamper first
        RESOLVCONF_FILE.write_text("nameserver 127.0.0.1\nnameserver ::1\n"
                                   "search pkgtest\n")
        out = resolvconf(f"{shimdir}:{base}", "disable")
        assert_names_upstreams(out, why)
    log("disable where resolvconf is gone or fails: exit 0, resolv.conf "
        "names the upstreams")


def disable_without_orig(path):
    """Enabled by replacing the file, then the saved one deleted: disable
    still succeeds, with a resolv.conf naming the upstreams."""
    RESOLV.unlink()
    RESOLV.write_text("nameserver 127.0.0.53\nsearch pkgtest\n")
    resolvconf(path, "enable")
    Path("/etc/dnsdamper/resolv.conf.orig").unlink()
    out = resolvconf(path, "disable")
    assert_names_upstreams(out, "/etc/dnsdamper/resolv.conf.orig, what "
                           "enable replaced, is missing")
    assert not Path("/etc/dnsdamper/resolv.conf.ours").exists()
    log("disable without resolv.conf.orig: exit 0, resolv.conf names the "
        "upstreams")


def made_next_to_resolv(path):
    """A regular /etc/resolv.conf: enable and disable rename a new file
    into place (a new inode each time), made in /etc: TMPDIR names no
    directory, and nothing is left next to it."""
    text = "nameserver 127.0.0.53\nsearch pkgtest\n"
    RESOLV.unlink()
    RESOLV.write_text(text)
    RESOLV.chmod(0o644)
    no_tmp = {"TMPDIR": "/nonexistent/tmp"}
    before = RESOLV.stat().st_ino
    resolvconf(path, "enable", env=no_tmp)
    st = RESOLV.stat()
    assert st.st_ino != before, "resolv.conf not renamed into place"
    assert st.st_mode & 0o777 == 0o644, oct(st.st_mode)
    assert "nameserver 127.0.0.1" in RESOLV.read_text().splitlines()
    resolvconf(path, "disable", env=no_tmp)
    assert RESOLV.read_text() == text and RESOLV.stat().st_ino != st.st_ino
    left = [p.name for p in Path("/etc").glob("resolv.conf.*")]
    assert not left, left
    log("the new resolv.conf made in /etc and renamed into place, "
        "without TMPDIR")


def main():
    work = Path(sys.argv[1])
    isolate(work)
    path, calls = shims(work)
    next_to_resolved(path, calls)
    next_to_resolvconf(path, calls)
    disable_without_resolvconf(work, path, calls)
    disable_without_orig(path)
    made_next_to_resolv(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
