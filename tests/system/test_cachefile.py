"""cache-file (dnsdamper.conf(5)): the cache is saved at a clean stop and
restored at start, each entry aged by the wall-clock time in between, so
that after a restart the names answered before are answered from the
cache, with the TTLs they would have had if the daemon had run on
(RFC 1035 §3.2.1, RFC 2181 §8: a TTL counts down the time spent in the
cache). A damaged or foreign file is ignored with a warning, never fatal;
without serve-stale, what expired meanwhile is not restored.
"""

import math
import os
import re
import signal
import socket
import stat
import time

import dns.rcode
import pytest

from dnstest import checks, ports, proc, query, ttl
from dnstest.daemon import Forward

ZONE = "ops-cachefile.test"
F_ZONE = """\
$TTL 300
@        300 IN SOA ns.ops-cachefile.test. hostmaster.ops-cachefile.test. 1 3600 600 86400 60
@        300 IN NS  ns
ns       300 IN A   127.0.0.1
kept     300 IN A   192.0.2.61
brief      2 IN A   192.0.2.62
"""
# RFC 2308 §5: NXDOMAIN cached for min(SOA TTL 300, MINIMUM 60)
NEG_TTL = 60


def _daemon(dnsdamper, bind, c, path, extra=()):
    return dnsdamper([Forward(ZONE, [c]), Forward(".", [bind])],
                     extra=[f"cache-file {path}", *extra])


def _stop(d):
    d.stopped_by_test = True
    status, killed = d.stop()
    assert (status, killed) == (0, False), d.stderr()


def _saved(d, path):
    m = re.search(rf"cache-file {re.escape(str(path))}: (\d+) entries saved",
                  d.stderr())
    assert m, d.stderr()
    return int(m.group(1))


def _restored(d, path, timeout=5.0):
    """The entries d restored from path: a large file is read in the
    background once d serves, and this waits up to timeout s for the log
    of its end."""
    m = d.wait_log(rf"cache-file {re.escape(str(path))}: (\d+) entries "
                   r"restored", timeout=timeout)
    return int(m.group(1))


def _sleep_until_wall(fraction, after):
    """Sleep until the wall clock's fraction of a second is `fraction`,
    at least `after` s from now."""
    now = time.time()
    target = math.floor(now + after) + fraction
    if target < now + after:
        target += 1
    time.sleep(target - now)


@pytest.mark.timeout_s(30)
# saved by one worker thread and restored by two, and the other way round
@pytest.mark.parametrize("before, after", [(1, 2), (2, 1)])
def test_restart_restores_entries_aged(dnsdamper, bind, new_bind, tmp_path,
                                       before, after):
    """Stop, about 2.8 s of wall-clock time, start: the second daemon
    answers kept.ops-cachefile.test and an NXDOMAIN from the file, named
    is not asked, and each TTL is the original less the whole seconds
    since the first daemon stored it, as ttl.cache_age() bounds them from
    the test's clock.

    The stop is placed just after a wall-clock second begins and the
    start just before one ends, so that the time in between (2.8 s) is
    nearly a second more than the difference of the whole seconds of the
    two instants (2 s): a file that kept its time in whole seconds would
    make the entries almost a second younger than they are, and their
    TTLs a second too high."""
    c = new_bind("cachefile", {ZONE: F_ZONE})
    path = tmp_path / "cache.dump"
    d1 = _daemon(dnsdamper, bind, c, path, [f"threads {before}"])
    assert "warning: cache-file" not in d1.stderr()  # missing: no error
    # stored at N.3 s, saved at (N+1).02, restored at (N+3).85, asked
    # just after: 3.6 s old, of which 2.8 s between save and restore
    _sleep_until_wall(0.3, after=0.0)
    q1 = query.udp(d1.port, f"kept.{ZONE}")
    assert query.addresses(q1) == {"192.0.2.61"}, q1.text()
    n1 = query.udp(d1.port, f"nothere.{ZONE}")
    assert n1.rcode == dns.rcode.NXDOMAIN
    entries = d1.control().metrics().get("dnsdamper_cache_entries")

    _sleep_until_wall(0.02, after=0.5)
    _stop(d1)
    assert _saved(d1, path) == entries
    # dnsdamper(8), CACHE FILE: mode 0600, no .tmp left behind
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not path.with_name(path.name + ".tmp").exists()
    saved = path.read_bytes()
    _sleep_until_wall(0.85, after=2.0)
    mark = c.mark()
    d2 = _daemon(dnsdamper, bind, c, path, [f"threads {after}"])
    assert _restored(d2, path) == entries
    assert path.read_bytes() == saved, "the file was rewritten when read"

    q2 = query.udp(d2.port, f"kept.{ZONE}")
    n2 = query.udp(d2.port, f"nothere.{ZONE}")
    assert c.count(f"kept.{ZONE}", since=mark) == 0
    assert c.count(f"nothere.{ZONE}", since=mark) == 0
    assert query.addresses(q2) == {"192.0.2.61"}, q2.text()
    ttl.assert_ttl(query.find(q2.msg, "answer", f"kept.{ZONE}", "A"), 300,
                   ttl.cache_age(q1, q2))
    assert n2.rcode == dns.rcode.NXDOMAIN
    ttl.assert_ttl(query.find(n2.msg, "authority", ZONE, "SOA"), NEG_TTL,
                   ttl.cache_age(n1, n2))
    # the file is read, not consumed: the next stop writes it again
    _stop(d2)
    assert _saved(d2, path) >= entries


def _good_file(dnsdamper, bind, c, path):
    d = _daemon(dnsdamper, bind, c, path)
    query.udp(d.port, f"kept.{ZONE}")
    _stop(d)
    assert _saved(d, path) >= 1
    return path.read_bytes()


def _damage(kind, data):
    if kind == "truncated":
        return data[:len(data) - 10]
    if kind == "flipped-byte":
        i = len(data) // 2
        return data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:]
    if kind == "foreign":
        return b"# not a cache file\nnameserver 127.0.0.1\n" * 20
    if kind == "empty":
        return b""
    if kind == "header-only":
        return data[:32]
    raise ValueError(kind)


def test_damaged_or_foreign_file_is_ignored(dnsdamper, bind, new_bind,
                                            tmp_path):
    c = new_bind("cachefile", {ZONE: F_ZONE})
    path = tmp_path / "cache.dump"
    good = _good_file(dnsdamper, bind, c, path)
    for kind in ("truncated", "flipped-byte", "foreign", "empty",
                 "header-only"):
        path.write_bytes(_damage(kind, good))
        mark = c.mark()
        d = _daemon(dnsdamper, bind, c, path)
        d.wait_log(rf"warning: cache-file {re.escape(str(path))}: "
                   r"damaged or not a dnsdamper cache file; ignored")
        # nothing restored: named is asked again
        r = query.udp(d.port, f"kept.{ZONE}")
        assert query.addresses(r) == {"192.0.2.61"}, (kind, r.text())
        assert c.count(f"kept.{ZONE}", since=mark) == 1, kind
        checks.still_serving(d)
        _stop(d)


def test_file_larger_than_the_cache_could_write_is_not_read(
        dnsdamper, bind, new_bind, tmp_path):
    """A cache of cache-size 64k writes at most twice that in records, a
    table of at most 65535 forward zones of 1 + 255 + 8 octets each and
    a header: 2 * 65536 + 65535 * 264 + 1024 = 17,433,336 octets
    (cachefile.c's file_max). A file of 18,000,000, the start of a good
    one followed by a hole, is ignored with its own warning, unread: a
    planted file cannot make the daemon read and hold more than that at
    start (without the bound it was read whole and found damaged)."""
    c = new_bind("cachefile", {ZONE: F_ZONE})
    path = tmp_path / "cache.dump"
    good = _good_file(dnsdamper, bind, c, path)
    with open(path, "wb") as f:
        f.write(good)
        f.truncate(18_000_000)
    mark = c.mark()
    d = _daemon(dnsdamper, bind, c, path, ["cache-size 64k"])
    d.wait_log(rf"warning: cache-file {re.escape(str(path))}: "
               r"ignored: larger than a cache of cache-size makes it")
    assert "damaged" not in d.stderr()
    r = query.udp(d.port, f"kept.{ZONE}")
    assert query.addresses(r) == {"192.0.2.61"}, r.text()
    assert c.count(f"kept.{ZONE}", since=mark) == 1
    checks.still_serving(d)
    _stop(d)


NOBODY = 65534                  # nobody's uid on Debian


@pytest.mark.skipif(os.geteuid() != 0, reason="chown(2) needs root")
def test_file_another_user_could_write_is_ignored(dnsdamper, bind, new_bind,
                                                  tmp_path):
    """A file owned by someone other than the daemon's user or root, or
    writable by others, or a symbolic link, could hold anything another
    user wanted served: it is ignored with a warning, and the daemon
    starts all the same and asks the upstream (dnsdamper.conf(5),
    cache-file)."""
    c = new_bind("cachefile", {ZONE: F_ZONE})
    path = tmp_path / "cache.dump"
    good = _good_file(dnsdamper, bind, c, path)
    elsewhere = tmp_path / "elsewhere.dump"
    elsewhere.write_bytes(good)
    cases = {
        "nobody's, 0600": (NOBODY, 0o600,
                           rf"the file is owned by uid {NOBODY}, not by us "
                           r"or root"),
        "nobody's, 0666": (NOBODY, 0o666,
                           rf"the file is owned by uid {NOBODY}"),
        "ours, 0666": (0, 0o666, r"the file is writable by others "
                                 r"\(mode 666\)"),
        "ours, 0620": (0, 0o620, r"the file is writable by others "
                                 r"\(mode 620\)"),
        "a link": (None, None, r"not read: "),
    }
    for what, (uid, mode, why) in cases.items():
        path.unlink()
        if uid is None:
            path.symlink_to(elsewhere)
        else:
            path.write_bytes(good)
            os.chown(path, uid, -1)
            path.chmod(mode)
        mark = c.mark()
        d = _daemon(dnsdamper, bind, c, path)
        d.wait_log(rf"warning: cache-file {re.escape(str(path))}: "
                   rf"(ignored: )?{why}")
        assert "entries restored" not in d.stderr(), what
        r = query.udp(d.port, f"kept.{ZONE}")
        assert query.addresses(r) == {"192.0.2.61"}, (what, r.text())
        assert c.count(f"kept.{ZONE}", since=mark) == 1, what
        d.stopped_by_test = True
        proc.stop(d.proc, signal.SIGKILL)       # leave the file as it is
    assert elsewhere.read_bytes() == good


def test_written_only_as_a_new_file_in_a_directory_of_ours(
        dnsdamper, bind, new_bind, tmp_path):
    """The file is written as PATH.tmp, then renamed: a link left at
    PATH.tmp (by whoever could write in the directory) is removed, never
    written through; and in a directory others can write in nothing is
    written at all (dnsdamper.conf(5), cache-file)."""
    c = new_bind("cachefile", {ZONE: F_ZONE})
    path = tmp_path / "cache.dump"
    victim = tmp_path / "victim"
    victim.write_text("not the cache\n")
    (tmp_path / "cache.dump.tmp").symlink_to(victim)
    _good_file(dnsdamper, bind, c, path)
    assert victim.read_bytes() == b"not the cache\n"
    assert path.is_file() and not path.is_symlink()
    assert not (tmp_path / "cache.dump.tmp").exists()

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    d = _daemon(dnsdamper, bind, c, shared / "cache.dump")
    query.udp(d.port, f"kept.{ZONE}")
    _stop(d)
    assert re.search(rf"warning: cache-file "
                     rf"{re.escape(str(shared / 'cache.dump'))}: not "
                     r"written: the directory is writable by others "
                     r"\(mode 777\)", d.stderr()), d.stderr()
    assert list(shared.iterdir()) == []


def test_expired_entries_not_restored_without_serve_stale(
        dnsdamper, bind, new_bind, tmp_path):
    """brief has TTL 2 s: saved while fresh, expired by the next start;
    with serve-stale no it may not come back (nor be served stale), while
    kept (TTL 300) does."""
    c = new_bind("cachefile", {ZONE: F_ZONE})
    path = tmp_path / "cache.dump"
    d1 = _daemon(dnsdamper, bind, c, path, extra=["serve-stale no"])
    query.udp(d1.port, f"kept.{ZONE}")
    b1 = query.udp(d1.port, f"brief.{ZONE}")
    entries = d1.control().metrics().get("dnsdamper_cache_entries")
    _stop(d1)
    assert time.monotonic() - b1.sent < 2.0, "too slow: brief expired"
    assert _saved(d1, path) == entries
    time.sleep(max(0.0, b1.received + 2.5 - time.monotonic()))
    mark = c.mark()
    d2 = _daemon(dnsdamper, bind, c, path, extra=["serve-stale no"])
    assert _restored(d2, path) == entries - 1
    r = query.udp(d2.port, f"brief.{ZONE}")
    assert query.addresses(r) == {"192.0.2.62"}, r.text()
    assert c.count(f"brief.{ZONE}", since=mark) == 1
    query.udp(d2.port, f"kept.{ZONE}")
    assert c.count(f"kept.{ZONE}", since=mark) == 0


def test_unusable_cache_file_path_is_not_fatal(dnsdamper, bind, new_bind,
                                               tmp_path):
    """The file's directory cannot be made (its parent is missing; only
    one level is created): logged at start, and the daemon serves and
    exits 0 all the same, without a file (dnsdamper(8), PRIVILEGES 6)."""
    c = new_bind("cachefile", {ZONE: F_ZONE})
    path = tmp_path / "missing" / "deeper" / "cache.dump"
    d = _daemon(dnsdamper, bind, c, path)
    assert re.search(rf"warning: mkdir {re.escape(str(path.parent))}: ",
                     d.stderr()), d.stderr()
    checks.still_serving(d)
    _stop(d)
    assert not path.exists()
    assert "entries saved" not in d.stderr()


def test_unclean_ends_leave_the_file_alone(dnsdamper, bind, new_bind,
                                          tmp_path):
    """SIGKILL writes nothing, and neither does a start that fails
    (metrics-listen cannot be bound: exit 1): the next start restores the
    file of the last clean stop (dnsdamper(8), CACHE FILE)."""
    c = new_bind("cachefile", {ZONE: F_ZONE})
    path = tmp_path / "cache.dump"
    good = _good_file(dnsdamper, bind, c, path)

    d = _daemon(dnsdamper, bind, c, path)
    query.udp(d.port, f"brief.{ZONE}")          # one entry more
    d.stopped_by_test = True
    status, _ = proc.stop(d.proc, signal.SIGKILL)
    assert status == -signal.SIGKILL
    assert path.read_bytes() == good

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind((ports.LOOPBACK, 0))
        busy.listen(1)
        taken = busy.getsockname()[1]
        d = dnsdamper([Forward(ZONE, [c]), Forward(".", [bind])],
                      extra=[f"cache-file {path}",
                             f"metrics-listen 127.0.0.1:{taken}"],
                      start=False)
        status = d.run_to_exit()
    assert status == 1, d.stderr()
    assert path.read_bytes() == good


def test_entries_forwarded_differently_are_not_restored(
        dnsdamper, bind, new_bind, tmp_path):
    """The zone's upstream changed between the runs: its entries are
    dropped and counted in the log; those of `.`, forwarded as before,
    come back (dnsdamper(8), CACHE FILE)."""
    c = new_bind("cachefile", {ZONE: F_ZONE})
    c2 = new_bind("cachefile2", {ZONE: F_ZONE.replace("192.0.2.61",
                                                       "192.0.2.71")})
    path = tmp_path / "cache.dump"
    d1 = _daemon(dnsdamper, bind, c, path)
    query.udp(d1.port, f"kept.{ZONE}")
    query.udp(d1.port, f"nothere.{ZONE}")
    query.udp(d1.port, "alive.example.test")
    _stop(d1)
    saved = _saved(d1, path)

    mark = bind.mark()
    d2 = dnsdamper([Forward(ZONE, [c2]), Forward(".", [bind])],
                   extra=[f"cache-file {path}"])
    d2.wait_log(r"cache-file: 2 entries not restored: their names are "
                r"forwarded differently now")
    assert _restored(d2, path) == saved - 2
    assert query.addresses(query.udp(d2.port, f"kept.{ZONE}")) == \
        {"192.0.2.71"}
    query.udp(d2.port, "alive.example.test")
    assert bind.count("alive.example.test", since=mark) == 0


# The cache file's layout (cachefile.c): big-endian integers throughout.
MAGIC = b"dnsdamper-cache\n"
HEADER = 16 + 4 + 8 + 4         # magic, version, written at, count


def _fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def _records(data):
    """The header with the zone table, and each record, as bytes."""
    count = int.from_bytes(data[HEADER - 4:HEADER], "big")
    at = HEADER
    n_zones = int.from_bytes(data[at:at + 2], "big")
    at += 2
    for _ in range(n_zones):
        at += 1 + data[at] + 8
    head, records = data[:at], []
    for _ in range(count):
        start = at
        key_len = int.from_bytes(data[at:at + 2], "big")
        at += 2 + key_len + 1 + 8 + 4 + 8
        n_ttls = int.from_bytes(data[at:at + 2], "big")
        at += 2 + 4 * n_ttls
        wire_len = int.from_bytes(data[at:at + 2], "big")
        at += 2 + wire_len
        records.append(data[start:at])
    assert at == len(data) - 8
    return head, records


def _label(i):
    """The i-th name of 4 letters or digits, never "kept"."""
    digits = "abcdefghijklmnopqrstuvwxyz0123456789"
    s = ""
    for _ in range(4):
        s += digits[i % 36]
        i //= 36
    return s if s != "kept" else "9999"


def _grow(data, n):
    """The cache file data with n copies of its record of kept.ZONE added,
    each for another name of the zone (of the same length, so that the
    record's lengths and compression pointers hold), its checksum
    worked out anew, and the number of records in it. The harness's
    ready.harness.test is left out: a restarted daemon is asked it at
    once, and what that fetches would make one record fewer restored."""
    head, records = _records(data)
    records = [r for r in records if b"\x05ready\x07harness" not in r]
    kept = b"\x04kept"
    model = next(r for r in records if kept in r)
    grown = [model.replace(kept, b"\x04" + _label(i).encode())
             for i in range(n)]
    body = bytearray(head)
    body[HEADER - 4:HEADER] = (len(records) + n).to_bytes(4, "big")
    body += b"".join(records) + b"".join(grown)
    return bytes(body) + _fnv1a64(body).to_bytes(8, "big"), \
        len(records) + n


WILD_ZONE = F_ZONE + "*        300 IN A   192.0.2.99\n"
GROWN = 200_000


@pytest.mark.timeout_s(240)
def test_answers_while_a_large_file_is_restored(dnsdamper, bind, new_bind,
                                                tmp_path):
    """A file of 200,000 entries is read in the background (dnsdamper(8),
    CACHE FILE): the restarted daemon answers while
    dnsdamper_cache_restore_done is still 0; a name not yet restored is
    fetched from named (its wildcard, 192.0.2.99) and that newer answer
    is not replaced by the file's older copy (192.0.2.61); afterwards the
    restored names are answered from the cache, named not asked. A stop
    during the restore leaves the file as it was: the cache then lacks
    the unread rest of it."""
    c = new_bind("cachefile", {ZONE: WILD_ZONE})
    path = tmp_path / "cache.dump"
    d1 = _daemon(dnsdamper, bind, c, path)
    assert query.addresses(query.udp(d1.port, f"kept.{ZONE}")) == \
        {"192.0.2.61"}
    _stop(d1)
    grown, total = _grow(path.read_bytes(), GROWN)
    path.write_bytes(grown)
    path.chmod(0o600)
    last = f"{_label(GROWN - 1)}.{ZONE}"         # the file's last record
    middle = f"{_label(GROWN // 2)}.{ZONE}"
    big = ["cache-size 256m"]

    # stopped while reading: nothing written, the file kept
    d = _daemon(dnsdamper, bind, c, path, big)
    assert d.control().metrics().get("dnsdamper_cache_restore_done") == 0
    _stop(d)
    assert re.search(rf"cache-file {re.escape(str(path))}: not written: "
                     r"stopped before it was read whole; the file is kept",
                     d.stderr()), d.stderr()
    assert "entries saved" not in d.stderr()
    assert path.read_bytes() == grown

    mark = c.mark()
    d2 = _daemon(dnsdamper, bind, c, path, big)
    r = query.udp(d2.port, last)
    m = d2.control().metrics()
    # answered while the file was still being read
    assert m.get("dnsdamper_cache_restore_done") == 0
    assert m.get("dnsdamper_cache_restore_entries") < total
    assert query.addresses(r) == {"192.0.2.99"}, r.text()
    assert c.count(last, since=mark) == 1
    # every record but last's, which was fetched since and is newer
    # (a bound, not a measure: slow under sanitizers and on a busy host)
    assert _restored(d2, path, timeout=100.0) == total - 1
    m = d2.control().metrics()
    assert m.get("dnsdamper_cache_restore_done") == 1
    assert m.get("dnsdamper_cache_restore_entries") == total - 1
    assert m.get("dnsdamper_cache_restore_file_entries") == total
    assert query.addresses(query.udp(d2.port, middle)) == {"192.0.2.61"}
    assert query.addresses(query.udp(d2.port, last)) == {"192.0.2.99"}
    assert c.count(middle, since=mark) == 0
    assert c.count(last, since=mark) == 1
    checks.still_serving(d2)
    _stop(d2)
    assert _saved(d2, path) >= total
