"""systemd integration without systemd: the test plays the service
manager.

sd_notify(3): NOTIFY_SOCKET names a datagram socket of the test's; READY=1
(with STATUS=) once the listeners are bound, RELOADING=1 with
MONOTONIC_USEC (CLOCK_MONOTONIC in µs, as Type=notify-reload wants it) then
READY=1 around a reload, STOPPING=1 at SIGTERM, FDSTORE=1 for each
listening socket, attached, with FDNAME=dnsdamper-listen/WORKER/PROTO/ADDR,
WATCHDOG=1 every WATCHDOG_USEC/2 when sd_watchdog_enabled(3) says so.

sd_listen_fds(3): systemd-socket-activate (Debian package systemd) passes
sockets as a socket unit would; and the fd store's sockets, given back as
LISTEN_FDS with their LISTEN_FDNAMES, make a restart keep its sockets:
what arrived while no daemon ran is answered by the next one, whatever
its number of worker threads.

systemd-analyze verify checks the unit files of contrib/systemd.
"""

import errno
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import dns.message
import dns.rcode
import pytest

from dnstest import checks, ports, proc, query, wire
from dnstest.daemon import Forward, build_slower
from dnstest.sdnotify import NotifySocket, wrapper
from dnstest.zonetext import zone

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "package"))
from load import Load                   # noqa: E402

FDNAME = "dnsdamper-listen"


@pytest.fixture
def notify(tmp_path):
    ns = NotifySocket(tmp_path / "notify.sock")
    yield ns
    ns.close()


def _tool(name):
    path = shutil.which(name) or shutil.which(name, path="/usr/bin:/bin")
    if path is None:
        pytest.fail(f"{name} not found: apt-get install systemd",
                    pytrace=False)
    return path


def _bound(port, kind):
    """True if 127.0.0.1:port is bound for kind (bind() says EADDRINUSE)."""
    with socket.socket(socket.AF_INET, kind) as s:
        try:
            s.bind((ports.LOOPBACK, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return True
            raise
    return False


def _stopped(d):
    """SIGTERM by PID; must exit 0 within 5 s."""
    d.stopped_by_test = True
    status, killed = d.stop()
    assert (status, killed) == (0, False), d.stderr()


def _stored(notify, pid):
    """The FDSTORE=1 messages daemon pid sent before its READY=1 (it
    stores its sockets first, one descriptor a message)."""
    ready = notify.wait_for(lambda m: m.get("READY") == "1" and
                            m.pid == pid, what="READY=1")
    before = notify.messages[:notify.messages.index(ready)]
    stored = [m for m in before if m.get("FDSTORE") == "1" and
              m.pid == pid]
    assert all(len(m.fds) == 1 for m in stored), stored
    return stored


def _store_name(worker, kind, port):
    """FDNAME of worker's socket of kind on 127.0.0.1:port: ':' is not
    allowed in a name (sd_pid_notify_with_fds(3)), so '_' stands for it."""
    proto = "udp" if kind == socket.SOCK_DGRAM else "tcp"
    return f"{FDNAME}/{worker}/{proto}/{ports.LOOPBACK}_{port}"


def _take_stored(notify, pid):
    """The descriptors daemon pid stored, and their names, taken (the
    caller closes the descriptors)."""
    stored = _stored(notify, pid)
    return ([notify.take(m)[0] for m in stored],
            [m.get("FDNAME") for m in stored])


def _restarted(dnsdamper, bind, port, fds, names, env, threads):
    """A daemon given fds with names as systemd gives the fd store's
    (LISTEN_FDS, LISTEN_FDNAMES, LISTEN_PID its own), on port, not
    started."""
    return dnsdamper(
        [Forward(".", [bind])], start=False, port=port,
        extra=[f"threads {threads}"],
        env={**env, "LISTEN_FDS": str(len(fds)),
             "LISTEN_FDNAMES": ":".join(names)},
        wrapper=wrapper(pid_env=["LISTEN_PID"], fds=fds), pass_fds=fds)


# --- sd_notify -------------------------------------------------------------

def test_ready_only_after_listeners_with_status(dnsdamper, bind, notify):
    d = dnsdamper([Forward(".", [bind])], start=False, env=notify.env)
    d.spawn()
    ready = notify.wait_field("READY", "1")
    # at this instant the listeners must be bound already: binding their
    # address ourselves fails, for UDP and TCP alike
    assert _bound(d.port, socket.SOCK_DGRAM), "READY=1 before UDP was bound"
    assert _bound(d.port, socket.SOCK_STREAM), "READY=1 before TCP listened"
    checks.still_serving(d)
    assert ready.pid == d.proc.pid, ready
    # STATUS= comes with it (dnsdamper(8), SYSTEMD: "n queries, p% from
    # cache, u/a upstreams up"); nobody has asked anything yet, and the
    # one upstream is up
    assert ready.get("STATUS") == "0 queries, 0.0% from cache, " \
        "1/1 upstreams up", ready
    # nothing said READY before
    first = notify.messages.index(ready)
    assert not any("READY" in m.fields for m in notify.messages[:first])


def test_reload_notifies_reloading_then_ready(dnsdamper, bind, notify):
    d = dnsdamper([Forward(".", [bind])], env=notify.env)
    notify.wait_field("READY", "1")
    for how in ("SIGHUP", "POST /reload", "broken config"):
        if how == "broken config":
            d.write_config(d.conf_path.read_text() + "max-ttl forever\n")
        t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
        if how == "POST /reload":
            d.control().post("/reload")
        else:
            d.signal(signal.SIGHUP)
        reloading = notify.wait_field("RELOADING", "1")
        t1 = time.clock_gettime(time.CLOCK_MONOTONIC)
        # MONOTONIC_USEC: CLOCK_MONOTONIC, in µs, when the reload began
        usec = int(reloading.get("MONOTONIC_USEC"))
        assert int(t0 * 1e6) <= usec <= int(t1 * 1e6) + 1, (how, t0, usec,
                                                            t1)
        # READY=1 follows, even when the reload failed: systemd waits for
        # it to end the reload job
        ready = notify.wait_field("READY", "1")
        assert notify.messages.index(ready) > \
            notify.messages.index(reloading)
        assert ready.get("STATUS") == (
            "reload failed; running the previous configuration"
            if how == "broken config" else "reloaded"), ready
    checks.still_serving(d)


def test_sigterm_notifies_stopping(dnsdamper, bind, notify):
    d = dnsdamper([Forward(".", [bind])], env=notify.env)
    notify.wait_field("READY", "1")
    _stopped(d)
    stopping = notify.wait_field("STOPPING", "1", timeout=1.0)
    assert stopping.pid == d.proc.pid, stopping


def test_fdstore_carries_the_listening_sockets(dnsdamper, bind, notify):
    """Two workers (the harness's `threads 2`): each its own UDP and TCP
    socket on the address, SO_REUSEPORT set so that the kernel spreads
    clients over them, each stored under a name saying whose and what."""
    d = dnsdamper([Forward(".", [bind])], env=notify.env)
    stored = _stored(notify, d.proc.pid)
    # FDSTOREREMOVE=1 of the old name came first, so that a restarted
    # daemon's sockets replace, not add to, the stored ones
    first = notify.messages.index(stored[0])
    assert any(m.get("FDSTOREREMOVE") == "1" and m.get("FDNAME") == FDNAME
               for m in notify.messages[:first]), notify.messages
    names = set()
    for m in stored:
        s = socket.socket(fileno=os.dup(m.fds[0]))
        try:
            assert s.getsockname() == (ports.LOOPBACK, d.port)
            assert s.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 1
            if s.type == socket.SOCK_STREAM:
                assert s.getsockopt(socket.SOL_SOCKET,
                                    socket.SO_ACCEPTCONN) == 1
            names.add((m.get("FDNAME"), s.type))
        finally:
            s.close()
    # a UDP and a TCP socket for worker 0 and for worker 1
    assert names == {(_store_name(w, k, d.port), k) for w in (0, 1)
                     for k in (socket.SOCK_DGRAM, socket.SOCK_STREAM)}, \
        stored


@pytest.mark.timeout_s(30)
def test_fdstore_restart_keeps_the_sockets(dnsdamper, bind, notify):
    """Restart as systemd does it with FileDescriptorStoreMax=: stop the
    daemon, keep the sockets it stored, start the next with them as
    LISTEN_FDS. A UDP query and a TCP connection made while no daemon runs
    wait in those sockets and are answered by the next daemon, which binds
    nothing itself (the test holds the address: a bind would fail)."""
    first = dnsdamper([Forward(".", [bind])], env=notify.env)
    fds, names = _take_stored(notify, first.proc.pid)
    try:
        _stopped(first)
        notify.wait_field("STOPPING", "1", timeout=1.0)

        q_udp = query.make_query("alive.example.test", msg_id=0x4d01)
        q_tcp = query.make_query("sigterm.example.test", msg_id=0x4d02)
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.connect((ports.LOOPBACK, first.port))
        u.send(q_udp.to_wire())
        # the kernel completes the handshake into the kept socket's backlog
        t = wire.tcp_connect(first.port)
        t.sendall(wire.frame(q_tcp.to_wire()))

        second = _restarted(dnsdamper, bind, first.port, fds, names,
                            notify.env, 2)
        second.spawn()
        # it stores them again, under the same names, for the restart
        # after (read at once, as systemd does: see the next test)
        again = _stored(notify, second.proc.pid)
        with u, t:
            u.settimeout(5.0)
            got = u.recv(65535)
            reader = wire.TcpReader(t)
            got_tcp = reader.read(5.0)
        assert got is not None and wire.parse_header(got).id == 0x4d01
        assert got_tcp is not None and \
            wire.parse_header(got_tcp).id == 0x4d02, reader.closed
        a = dns.message.from_wire(got)
        b = dns.message.from_wire(got_tcp)
        assert a.rcode() == dns.rcode.NOERROR and \
            {rd.address for rr in a.answer for rd in rr} == {"192.0.2.9"}
        assert {rd.address for rr in b.answer for rd in rr} == \
            {"192.0.2.15"}

        # the very sockets: the daemon holds the inodes the test kept
        kept = {os.fstat(fd).st_ino for fd in fds}
        assert kept <= proc.socket_inodes(second.proc.pid)
        log = second.stderr()
        assert f"listening on 127.0.0.1:{first.port}, UDP, TCP" in log, log
        assert "(socket activation)" not in log, log
        assert {os.fstat(m.fds[0]).st_ino for m in again} == kept
        assert sorted(m.get("FDNAME") for m in again) == sorted(names)
        checks.still_serving(second)
    finally:
        for fd in fds:
            os.close(fd)


HANDOVER_UDP = 16      # clients asking while no daemon runs
HANDOVER_TCP = 4


@pytest.mark.timeout_s(40)
@pytest.mark.parametrize("before, after, stored_after", [
    # two workers' four sockets to one worker: it serves all four (none
    # is closed: each may hold queries)
    (2, 1, 4),
    # to three workers: the four kept, and a UDP and a TCP socket more
    # bound beside them (SO_REUSEPORT, which the kept ones have)
    (2, 3, 6),
    # one worker's two sockets (`threads 1` binds without SO_REUSEPORT,
    # as before threads) to two workers: none more can be bound beside
    # them, and the two workers share them
    (1, 2, 2),
])
def test_fdstore_handover_between_thread_counts(dnsdamper, bind, notify,
                                                before, after,
                                                stored_after):
    """A restart as in test_fdstore_restart_keeps_the_sockets with another
    number of worker threads. Queries sent from 16 source ports and 4 TCP
    connections made while no daemon runs spread over the kept sockets
    (the kernel hashes each source to one of them): every one is
    answered by the next daemon, which holds every kept socket and
    stores them all again, with those it bound."""
    first = dnsdamper([Forward(".", [bind])], env=notify.env,
                      extra=[f"threads {before}"])
    fds, names = _take_stored(notify, first.proc.pid)
    assert len(fds) == 2 * before, names
    udp, tcp = [], []
    try:
        _stopped(first)
        notify.wait_field("STOPPING", "1", timeout=1.0)
        for i in range(HANDOVER_UDP):
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            udp.append(u)
            u.connect((ports.LOOPBACK, first.port))
            u.send(query.make_query("alive.example.test",
                                    msg_id=0x4e00 + i).to_wire())
        for i in range(HANDOVER_TCP):
            t = wire.tcp_connect(first.port)
            tcp.append(t)
            t.sendall(wire.frame(query.make_query(
                "alive.example.test", msg_id=0x4f00 + i).to_wire()))
        second = _restarted(dnsdamper, bind, first.port, fds, names,
                            notify.env, after)
        second.spawn()
        # read as systemd does at once: sd_notify blocks main's loop, and
        # the workers on it, while the notify socket's queue is full
        again = _stored(notify, second.proc.pid)
        for i, u in enumerate(udp):
            u.settimeout(5.0)
            assert wire.parse_header(u.recv(65535)).id == 0x4e00 + i
        for i, t in enumerate(tcp):
            got = wire.TcpReader(t).read(5.0)
            assert got is not None and \
                wire.parse_header(got).id == 0x4f00 + i
        kept = {os.fstat(fd).st_ino for fd in fds}
        assert kept <= proc.socket_inodes(second.proc.pid)
        assert len(again) == stored_after, again
        assert kept <= {os.fstat(m.fds[0]).st_ino for m in again}
        # each named for a worker the second daemon has
        assert {m.get("FDNAME").split("/")[1] for m in again} <= \
            {str(w) for w in range(after)}, again
        checks.still_serving(second)
    finally:
        for s_ in udp + tcp:
            s_.close()
        for fd in fds:
            os.close(fd)


RS_NAMES = {f"n{i}.rs.test.": {f"192.0.2.{100 + i}"} for i in range(50)}
RS_ZONE = zone("rs.test", 600, [f"n{i} A 192.0.2.{100 + i}"
                                for i in range(50)])
RATE = 1000                     # queries a second, as the client


def _next_ready(notify, pid, after):
    """The first READY=1 from pid after notification index after."""
    return notify.wait_for(
        lambda m: m.get("READY") == "1" and m.pid == pid and
        notify.messages.index(m) > after, timeout=10.0,
        what=f"READY=1 from {pid}")


@pytest.mark.timeout_s(60)
@pytest.mark.parametrize("handover", [True, False])
def test_reload_restart_and_upgrade_under_load_lose_nothing(
        dnsdamper, new_bind, bind, notify, tmp_path, handover):
    """`systemctl reload`, `systemctl restart` and an upgrade of the binary
    under a client sending 1,000 queries a second (tests/package/load.py,
    open loop, each query given 1 s; a sanitizer build, slower, gets a
    longer deadline and a lower rate in proportion: see below): not one
    query fails or times out.
    The upstream is stopped first, so that only the cache can answer:
    through the reload it is the same process; through each restart,
    played as systemd does it with FileDescriptorStoreMax= (SIGTERM, the
    stored sockets kept meanwhile, the next process started with them as
    LISTEN_FDS), the queries that arrive while no daemon runs wait in
    those sockets, and the next process answers them from the cache file
    the last one wrote, read before it reads its first query. The upgrade
    is a restart on another binary file (a copy of this one). The latency
    figures are printed (a benchmark's business, not asserted here).
    Negative control, no handover (each new process binds the port
    itself, as without the fd store): queries are lost. Those sent while
    the port is closed fail (ICMP port unreachable) or, when the kernel's
    host-wide ICMP budget (net.ipv4.icmp_msgs_per_sec, shared with every
    test running beside this one) sends no ICMP, time out; those left
    unread in the stopped process's socket time out."""
    ns = new_bind("rs", {"rs.test": RS_ZONE})
    cache_file = tmp_path / "cache.dump"
    forwards = [Forward("rs.test", [ns]), Forward(".", [bind])]
    extra = [f"cache-file {cache_file}"]
    first = dnsdamper(forwards, extra=extra, env=notify.env)
    fds, names = _take_stored(notify, first.proc.pid)
    try:
        for name, want in RS_NAMES.items():
            assert query.addresses(query.udp(first.port, name)) == want
        ns.stop()
        # A query that arrives while no daemon runs waits for the old one
        # to stop and the next to start: tens of ms in a plain build, so
        # 1 s holds on a busy machine; a sanitizer build takes longer in
        # proportion (dnstest.daemon.build_slower: ThreadSanitizer's stop
        # and start 20 times as long, 2 s and more on a busy machine), and
        # so does its deadline.
        # Its query path is as much slower, and the rate is divided by the
        # same factor: what this test shows is that no query is lost
        # across a handover, not how many a second a build can serve.
        slower = build_slower(first.binary)
        rate = RATE // slower
        load = Load([(ports.LOOPBACK, first.port)], RS_NAMES, rate=rate,
                    timeout=1.0 * slower, max_seconds=30.0).start()
        time.sleep(1.0)
        # systemctl reload: SIGHUP, RELOADING=1 then READY=1
        seen = len(notify.messages)
        first.signal(signal.SIGHUP)
        _next_ready(notify, first.proc.pid, seen)
        time.sleep(1.0)
        upgraded = tmp_path / "dnsdamper-upgraded"
        shutil.copy2(first.binary, upgraded)
        running = first
        for binary in (first.binary, upgraded):
            seen = len(notify.messages)
            _stopped(running)
            env, wrap = notify.env, ()
            if handover:
                env = {**env, "LISTEN_FDS": str(len(fds)),
                       "LISTEN_FDNAMES": ":".join(names)}
                wrap = wrapper(pid_env=["LISTEN_PID"], fds=fds)
            else:
                for fd in fds:
                    os.close(fd)
                fds = []
            running = dnsdamper(
                forwards, extra=extra, start=False, port=first.port,
                binary=binary, env=env, wrapper=wrap, pass_fds=fds)
            running.spawn()
            if handover:
                _next_ready(notify, running.proc.pid, seen)
            else:
                # what it stored (before its READY=1) is held by the
                # notify socket: closed before the next restart, which
                # must bind anew
                fds, names = _take_stored(notify, running.proc.pid)
            # read in the background while it serves: waited for
            running.wait_log(rf"cache-file {re.escape(str(cache_file))}: "
                             r"5\d entries restored")
            log = running.stderr()
            assert "(socket activation)" not in log, log
            time.sleep(1.0)
        result = load.stop()
    finally:
        for fd in fds:
            os.close(fd)
    print(f"reload, restart and upgrade under load: {result.summary()}")
    if not handover:
        assert result.failed + result.timed_out > 0, result.summary()
        return
    assert result.failed == 0 and result.timed_out == 0, \
        (result.summary(), result.failures)
    assert result.right == result.sent
    # open loop: 1,000 a second (in a plain build) for the 4 s slept at
    # least
    assert result.sent >= 0.9 * rate * 4, result.summary()
    checks.still_serving(running)


def test_watchdog_pings(dnsdamper, bind, notify):
    """WATCHDOG_USEC=1 s with WATCHDOG_PID the daemon's own: WATCHDOG=1
    every 0.5 s (half the interval, as sd_watchdog_enabled(3) advises);
    three are waited for up to 5 s."""
    d = dnsdamper([Forward(".", [bind])],
                  env={**notify.env, "WATCHDOG_USEC": "1000000"},
                  wrapper=wrapper(pid_env=["WATCHDOG_PID"]))
    pings = []
    deadline = time.monotonic() + 5.0
    while len(pings) < 3:
        pings.append(notify.wait_field(
            "WATCHDOG", "1", timeout=max(0.0, deadline - time.monotonic())))
    assert all(p.pid == d.proc.pid for p in pings), pings
    checks.still_serving(d)


def test_watchdog_for_another_pid_is_off(dnsdamper, bind, notify):
    """WATCHDOG_PID names another process: the watchdog is not ours
    (sd_watchdog_enabled(3) returns 0), so no WATCHDOG=1 in 3 intervals."""
    d = dnsdamper([Forward(".", [bind])],
                  env={**notify.env, "WATCHDOG_USEC": "500000",
                       "WATCHDOG_PID": str(os.getpid())})
    notify.wait_field("READY", "1")
    late = notify.drain(1.5)
    assert not any("WATCHDOG" in m.fields for m in notify.messages), late
    d.assert_alive()


def test_notify_socket_unreachable_is_fatal(dnsdamper, bind, tmp_path):
    """With NOTIFY_SOCKET set, failing to say READY=1 is fatal: systemd
    would otherwise wait for it and kill the service later anyway."""
    d = dnsdamper([Forward(".", [bind])], start=False,
                  env={"NOTIFY_SOCKET": str(tmp_path / "nobody-here.sock")})
    status = d.run_to_exit()
    assert status == 1, d.stderr()       # dnsdamper(8), SYSTEMD
    assert "cannot tell the service manager we are ready" in d.stderr()


@pytest.mark.timeout_s(30)
def test_status_every_5s_counts_and_degraded(dnsdamper, bind, notify):
    """STATUS= every 5 s: n queries that reached the cache, the share
    answered from it, upstreams up of all (each counted once per zone
    naming it); and while every upstream of a zone is down, the line
    starts with `degraded: every upstream of ZONE is down, serving
    stale;`. dead.test's one upstream refuses every datagram (ICMP port
    unreachable): after 3 failures in a row it is down (dnsdamper(8),
    Forwarding)."""
    dead = ports.dead_port()
    d = dnsdamper([Forward("dead.test", [dead]), Forward(".", [bind])],
                  start=False, env=notify.env)
    d.spawn()
    notify.wait_field("READY", "1")
    # 4 queries reach the cache: alive twice (miss, hit), then three
    # names of dead.test (misses, each a failed resolution) = 5 in all,
    # 1 from cache: 20.0 %
    for _ in range(2):
        query.udp(d.port, "alive.example.test")
    for i in range(3):
        r = query.udp(d.port, f"n{i}.dead.test")
        assert r.rcode == dns.rcode.SERVFAIL, r.text()
    status = notify.wait_for(
        lambda m: "STATUS" in m.fields and "READY" not in m.fields,
        timeout=7.0, what="a periodic STATUS=")
    assert status.get("STATUS") == (
        "degraded: every upstream of dead.test. is down, serving stale; "
        "5 queries, 20.0% from cache, 1/2 upstreams up"), status


def test_fdstore_sockets_no_longer_listened_on_are_closed(
        dnsdamper, bind, notify):
    """Stored sockets whose address is not a listen address any more are
    closed; the daemon binds its configured address instead."""
    first = dnsdamper([Forward(".", [bind])], env=notify.env)
    fds, names = _take_stored(notify, first.proc.pid)
    try:
        _stopped(first)
        second = dnsdamper(
            [Forward(".", [bind])], start=False,
            env={"LISTEN_FDS": str(len(fds)),
                 "LISTEN_FDNAMES": ":".join(names)},
            wrapper=wrapper(pid_env=["LISTEN_PID"], fds=fds), pass_fds=fds)
        assert second.port != first.port
        second.start()
        held = proc.socket_inodes(second.proc.pid)
        assert not {os.fstat(fd).st_ino for fd in fds} & held
        checks.still_serving(second)
        assert "(socket activation)" not in second.stderr()
    finally:
        for fd in fds:
            os.close(fd)


def test_passed_descriptor_not_a_socket_is_closed(dnsdamper, bind,
                                                  tmp_path):
    """dnsdamper(8), Socket activation: any descriptor passed that is not
    a UDP or TCP socket is closed with a warning; with none left from a
    socket unit the daemon binds its listen addresses."""
    f = open(tmp_path / "not-a-socket", "w")
    try:
        d = dnsdamper([Forward(".", [bind])], start=False,
                      env={"LISTEN_FDS": "1"},
                      wrapper=wrapper(pid_env=["LISTEN_PID"],
                                      fds=[f.fileno()]),
                      pass_fds=[f.fileno()])
        d.start()
    finally:
        f.close()
    assert re.search(r"warning: passed descriptor 3 \(.*\) is not a UDP or "
                     r"TCP socket; ignored", d.stderr()), d.stderr()
    checks.still_serving(d)
    assert not os.path.exists(f"/proc/{d.proc.pid}/fd/3") or \
        "not-a-socket" not in os.readlink(f"/proc/{d.proc.pid}/fd/3")


# --- socket activation -----------------------------------------------------

def _activated(dnsdamper, bind, sa_args, env=None):
    """A daemon behind systemd-socket-activate sa_args (one list of
    arguments per activator in the chain), not started; its .port is the
    activated port. systemd-socket-activate hands the child only the
    variables named by -E, so each of env is passed on by name. The
    config's own listen address, another free port, must stay unused:
    that is returned too."""
    port = ports.free_port()
    addr = f"{ports.LOOPBACK}:{port}"
    argv = []
    for args in sa_args:
        argv += [_tool("systemd-socket-activate"), *args]
        for name in env or {}:
            argv += ["-E", name]
        argv += ["-l", addr, "--"]
    d = dnsdamper([Forward(".", [bind])], start=False, wrapper=argv,
                  env=env)
    config_port = d.port
    d.port = port
    return d, config_port


def _wait_listening(d, count, timeout=5.0):
    """Wait until the activators have logged count sockets of d.port."""
    deadline = time.monotonic() + timeout
    pattern = f"Listening on {ports.LOOPBACK}:{d.port} as "
    while d.stderr().count(pattern) < count:
        assert time.monotonic() < deadline and d.alive(), d.stderr()
        time.sleep(0.02)


def _config_port_unused(config_port):
    assert not _bound(config_port, socket.SOCK_DGRAM)
    assert not _bound(config_port, socket.SOCK_STREAM)


def test_socket_activation_udp(dnsdamper, bind, notify):
    d, config_port = _activated(dnsdamper, bind, [["-d"]], env=notify.env)
    d.start()           # the first datagram makes it exec the daemon
    r = query.udp(d.port, "alive.example.test")
    assert query.addresses(r) == {"192.0.2.9"}, r.text()
    log = d.stderr()
    assert re.search(rf"listening on 127\.0\.0\.1:{d.port}, UDP "
                     r"\(socket activation\)", log), log
    _config_port_unused(config_port)
    # a socket unit's sockets are the unit's: none go to the fd store
    ready = notify.wait_field("READY", "1")
    assert ready.pid == d.proc.pid
    assert not any("FDSTORE" in m.fields for m in notify.messages)


def test_socket_activation_tcp(dnsdamper, bind):
    d, config_port = _activated(dnsdamper, bind, [[]])
    d.spawn()
    _wait_listening(d, 1)
    r = query.tcp(d.port, "alive.example.test", timeout=5.0)
    assert query.addresses(r) == {"192.0.2.9"}, r.text()
    assert re.search(rf"listening on 127\.0\.0\.1:{d.port}, TCP "
                     r"\(socket activation\)", d.stderr()), d.stderr()
    _config_port_unused(config_port)


def test_socket_activation_udp_and_tcp(dnsdamper, bind):
    """Two systemd-socket-activate in a row, the outer passing its TCP
    socket through the inner, which adds UDP on the same port: the daemon
    gets both, as from a socket unit with ListenStream= and
    ListenDatagram=."""
    d, config_port = _activated(dnsdamper, bind, [[], ["-d"]])
    # the outer one waits for a connection before it execs the inner one
    q = query.make_query("sigterm.example.test", msg_id=0x4d03)
    d.spawn()
    _wait_listening(d, 1)
    with wire.tcp_connect(d.port) as t:
        t.sendall(wire.frame(q.to_wire()))
        _wait_listening(d, 2)
        d.wait_ready()
        got = wire.TcpReader(t).read(5.0)
    assert got is not None and wire.parse_header(got).id == 0x4d03
    checks.still_serving(d)
    assert re.search(rf"listening on 127\.0\.0\.1:{d.port}, UDP, TCP "
                     r"\(socket activation\)", d.stderr()), d.stderr()
    _config_port_unused(config_port)


# --- unit files ------------------------------------------------------------

def test_units_pass_systemd_analyze_verify(tmp_path):
    """contrib/systemd/dnsdamper.service (from .in, @sbindir@ being the
    build's src/ so that ExecStart= exists), dnsdamper.socket, and
    socket.conf as the service's drop-in: systemd-analyze verify reports
    nothing at all. The man pages of Documentation= are found through
    MANPATH pointed at the source's man/."""
    analyze = _tool("systemd-analyze")
    top_src = Path(os.environ.get("top_srcdir") or HERE.parents[1])
    top_build = Path(os.environ.get("top_builddir") or top_src)
    sbin = top_build / "src"
    assert os.access(sbin / "dnsdamper", os.X_OK), "build dnsdamper first"
    contrib = top_src / "contrib" / "systemd"
    units = tmp_path / "units"
    units.mkdir()
    text = (contrib / "dnsdamper.service.in").read_text()
    assert "@sbindir@" in text
    (units / "dnsdamper.service").write_text(
        text.replace("@sbindir@", str(sbin)))
    shutil.copy(contrib / "dnsdamper.socket", units)
    dropin = units / "dnsdamper.service.d"
    dropin.mkdir()
    shutil.copy(contrib / "socket.conf", dropin)
    man = tmp_path / "man"
    for page in (top_src / "man").iterdir():
        m = re.fullmatch(r".+\.(\d)", page.name)
        if m:
            (man / f"man{m.group(1)}").mkdir(parents=True, exist_ok=True)
            shutil.copy(page, man / f"man{m.group(1)}")
    env = {**os.environ, "MANPATH": str(man),
           "SYSTEMD_LOG_LEVEL": "notice"}
    r = subprocess.run([analyze, "verify", "dnsdamper.service",
                        "dnsdamper.socket"], cwd=units, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), (
        f"systemd-analyze verify: status {r.returncode}\n{r.stdout}"
        f"{r.stderr}")
