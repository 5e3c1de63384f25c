"""Fixtures of the dnsdamper system tests.

bind         the session's named, serving every zones/*.zone
new_bind     factory: more named instances for one test, zones as text
dnsdamper    factory: a daemon with the given forwards, stopped at teardown
open_dir     a directory every user may enter, for files a daemon reads
             after it has given up root (tmp_path is 0700 under root)
dd           a daemon forwarding `.` to the session's named
blackhole    factory: UDP upstreams that read and never answer
recorder     factory: UDP upstreams that log each query and drop, relay to
             a named, or answer as the test says (dnstest.upstream.Recorder)
faultproxy   factory: tests/faultproxy in front of an upstream, faults set
             by flags, schedule or at run time; stopped at teardown

Every test runs under a SIGALRM deadline (DNSTEST_TIMEOUT s, default 60;
@pytest.mark.timeout_s(N) for one test) for its setup and its body, so no
test hangs; teardown is bounded by construction (stop by PID, wait, kill).
A failing test's report shows the daemon's stderr, the queries the named
instances logged during the test, and the DNS transcript.
"""

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from dnstest import proc, query
from dnstest.deadline import deadline
from dnstest.daemon import VALGRIND, Dnsdamper, Forward
from dnstest.named import BindServer
from dnstest.upstream import Blackhole, Recorder

HERE = Path(__file__).resolve().parent
ZONES = HERE / "zones"
DEFAULT_TIMEOUT = float(os.environ.get("DNSTEST_TIMEOUT", "60"))

_SOURCES = pytest.StashKey()
_REPORTED = pytest.StashKey()


# --- per-test deadline -----------------------------------------------------

def _timeout_of(item):
    m = item.get_closest_marker("timeout_s")
    return float(m.args[0]) if m else DEFAULT_TIMEOUT


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    with deadline(_timeout_of(item), f"setup of {item.nodeid}"):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    with deadline(_timeout_of(item), item.nodeid):
        yield


# --- what a failure shows --------------------------------------------------

def _add_source(request, title, fn):
    request.node.stash.setdefault(_SOURCES, []).append((title, fn))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not rep.failed or item.stash.get(_REPORTED, False):
        return
    item.stash[_REPORTED] = True
    for title, fn in item.stash.get(_SOURCES, []):
        try:
            text = fn()
        except Exception as e:  # a report must never hide the failure
            text = f"(could not read: {e!r})"
        rep.sections.append((title, text or "(empty)"))
    if query.TRANSCRIPT:
        rep.sections.append(("dns transcript", "\n".join(query.TRANSCRIPT)))


@pytest.fixture(autouse=True)
def _per_test(request):
    query.TRANSCRIPT.clear()
    yield


def pytest_sessionfinish(session, exitstatus):
    left = proc.reap_all()
    if left:
        session.config.get_terminal_writer().line(
            f"dnstest: had to kill processes left behind: {left}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "timeout_s(seconds): this test's deadline instead of "
        "DNSTEST_TIMEOUT")


# --- servers ---------------------------------------------------------------

@pytest.fixture(scope="session")
def bind(tmp_path_factory):
    """The session's named, authoritative for every zones/*.zone. Tests
    share it and so use names no other test uses, and count queries since a
    mark() of their own."""
    server = BindServer(tmp_path_factory.mktemp("bind"), "main")
    for path in sorted(ZONES.glob("*.zone")):
        server.add_zone_file(path)
    server.start()
    yield server
    server.stop()
    assert not server.alive(), "session named still running"


@pytest.fixture(autouse=True)
def _bind_log(request):
    """When a test uses the session named, its failure report shows what
    named logged during the test."""
    if "bind" not in request.fixturenames:
        yield
        return
    server = request.getfixturevalue("bind")
    start = os.path.getsize(server.log_path)
    _add_source(request, f"named {server.label} log during the test",
                lambda: server.log_text(start))
    yield


@pytest.fixture
def new_bind(tmp_path, request):
    """Factory: new_bind(label, {origin: zone_text}) -> started BindServer,
    stopped by PID at teardown."""
    servers = []

    def make(label, zones):
        server = BindServer(tmp_path, label)
        for origin, text in zones.items():
            server.add_zone(origin, text)
        servers.append(server)
        _add_source(request, f"named {label} log", server.log_text)
        return server.start()

    yield make
    for server in servers:
        server.stop()
    still = [s.label for s in servers if s.alive()]
    assert not still, f"named left running: {still}"


@pytest.fixture
def blackhole():
    """Factory: blackhole() -> a started Blackhole, stopped at teardown."""
    holes = []

    def make():
        h = Blackhole()
        holes.append(h)
        return h

    yield make
    for h in holes:
        h.stop()


@pytest.fixture
def recorder(request):
    """Factory: recorder() -> a started Recorder (dropping until told
    otherwise), stopped at teardown; a failing test's report shows what
    each was asked."""
    recs = []

    def make():
        r = Recorder()
        recs.append(r)
        t0 = time.monotonic()
        _add_source(request, f"recorder{len(recs) - 1} (port {r.port}) asked",
                    lambda: "\n".join(f"{a.t - t0:8.3f} {a.qname} {a.qtype}"
                                      for a in r.log()[-200:]))
        return r

    yield make
    for r in recs:
        r.stop()


@pytest.fixture
def dnsdamper(tmp_path, request):
    """Factory: dnsdamper(forwards, extra=(), start=True, workdir=None,
    **kw) -> a Dnsdamper (started unless start=False) in workdir (default
    a new directory of tmp_path); kw go to Dnsdamper (port, env, wrapper,
    pass_fds, binary).

    The binary must exist: a missing binary fails the test (never skips).
    At teardown each daemon is stopped by PID; one that had died during the
    test, that needed SIGKILL, or that did not exit 0 on SIGTERM fails the
    test's teardown."""
    daemons = []

    def make(forwards, extra=(), start=True, workdir=None, **kw):
        d = Dnsdamper(workdir or tmp_path / f"dnsdamper{len(daemons)}",
                      forwards, extra, **kw)
        daemons.append(d)
        _add_source(request, f"dnsdamper{len(daemons) - 1} stderr", d.stderr)
        _add_source(request, f"dnsdamper{len(daemons) - 1} config",
                    d.conf_path.read_text)
        if VALGRIND:
            _add_source(request, f"dnsdamper{len(daemons) - 1} valgrind",
                        d.valgrind_log)
        return d.start() if start else d

    yield make
    problems = []
    for i, d in enumerate(daemons):
        if d.proc is None or d.stopped_by_test:
            continue
        died = d.proc.poll()
        status, killed = d.stop()
        if died is not None:
            problems.append(f"dnsdamper{i} died during the test with status "
                            f"{died}")
        elif killed:
            problems.append(f"dnsdamper{i} did not exit on SIGTERM within "
                            f"5s and was killed")
        elif status != 0:
            # a clean stop exits 0; the sanitizer build exits non-zero on
            # a leak or a memory error found on the way out, and so does
            # valgrind (VALGRIND_STATUS)
            problems.append(f"dnsdamper{i} exited with status {status} on "
                            f"SIGTERM")
            if VALGRIND:
                problems.append(f"--- dnsdamper{i} valgrind:\n"
                                f"{d.valgrind_log()}")
    if problems:
        pytest.fail("\n".join(problems) + "\n" + "\n".join(
            f"--- dnsdamper{i} stderr:\n{d.stderr()}"
            for i, d in enumerate(daemons)), pytrace=False)


@pytest.fixture
def open_dir():
    """A new directory of mode 0755 outside pytest's tmp_path (whose
    parent is 0700 under root), removed afterwards: for files that a
    daemon running as another user, or dnsdamperctl run as nobody, must
    reach."""
    path = Path(tempfile.mkdtemp(prefix="dnsdamper-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def dd(dnsdamper, bind):
    """A daemon that forwards everything (`.`) to the session's named."""
    return dnsdamper([Forward(".", [bind])])


# --- fault-injecting upstream ----------------------------------------------
# tests/faultproxy is a package beside this directory; its driver starts the
# proxy through dnstest.proc, so the session's safety net knows about it.

import sys  # noqa: E402

sys.path.insert(0, str(HERE.parent))
from faultproxy.driver import FaultProxy  # noqa: E402


@pytest.fixture
def faultproxy(tmp_path, request):
    """Factory: faultproxy(upstream, schedule=None, seed=1, **faults) -> a
    started FaultProxy (tests/faultproxy/driver.py) in front of upstream (a
    BindServer, or anything with a .port, or a port), on a free loopback
    port: .port, .set(**faults), .clear(), .stats(), .reset(), .stop().
    faults are its command-line flags (loss=0.5, lowercase=True, ...);
    schedule a dict or a path. Each is stopped by PID at teardown; one that
    died during the test, or needed SIGKILL, fails the teardown."""
    proxies = []

    def make(upstream, schedule=None, seed=1, **faults):
        port = getattr(upstream, "port", upstream)
        fp = FaultProxy(tmp_path / f"faultproxy{len(proxies)}", port,
                        schedule=schedule, seed=seed, lifetime=300,
                        **faults)
        proxies.append(fp)
        _add_source(request, f"faultproxy{len(proxies) - 1} log",
                    fp.log_text)
        return fp.start()

    yield make
    problems = []
    for i, fp in enumerate(proxies):
        if fp.proc is None or fp.final_stats is not None:  # test stopped it
            continue
        died = fp.proc.poll()
        try:
            fp.stop()
        except AssertionError as e:
            problems.append(f"faultproxy{i}: {e}")
            continue
        if died is not None:
            problems.append(f"faultproxy{i} died during the test with "
                            f"status {died}:\n{fp.log_text()}")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
