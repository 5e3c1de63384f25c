"""dnsdamper-srv (RFC 2782 SRV, RFC 3958 S-NAPTR) against a real named
zone through a running dnsdamper, with real TCP listeners on loopback.

The rules checked, and where the expected values come from:
  RFC 2782  targets are tried by priority, lower first; weight only
            chooses within one priority (weighted draw in [0, sum]); a
            backup at priority 20 with weight 65535 never comes before a
            reachable priority-10 target; exactly one SRV record with
            target "." means "decidedly not available" (exit 2); a name
            with no SRV is not a service (exit 3); a target must not be
            an alias (the command says so when one is)
  RFC 3958  NAPTR by ORDER then PREFERENCE, filtered by service and
            protocol; flags "" (next NAPTR lookup) then "S" (SRV lookup);
            records of other services or protocols are not followed
  --seed    SplitMix64 over the RRset in canonical order, as
            dnsdamper-srv(1) documents it: worked out below in Python
  exit      dnsdamper-srv(1): 0 found/connected, 2 ".", 3 NXDOMAIN or
            NODATA, 5 every candidate failed to connect, 64 usage
"""

import select
import socket
import threading
import time

import dns.flags
import dns.message
import dns.rdatatype
import dns.rrset
import pytest

from dnstest import ports, srvcmd, upstream
from dnstest.daemon import Forward
from dnstest.zonetext import zone

ORIGIN = "lab.test"
TTL = 300


class Listener:
    """A TCP socket listening on a free loopback port; a thread accepts
    and closes every connection (--connect sends nothing), so that the
    accept queue never fills. accepting=False: nobody accepts, and once
    the queue (backlog) is full the kernel drops further SYNs: a
    connection attempt then times out."""

    def __init__(self, host=ports.LOOPBACK, backlog=16, accepting=True):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        # free on 127.0.0.1 too, so an IPv4 attempt there is refused
        self.sock.bind((host, ports.free_port()))
        self.port = self.sock.getsockname()[1]
        self.sock.listen(backlog)
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = None
        if accepting:
            self._thread = threading.Thread(target=self._accept,
                                            daemon=True)
            self._thread.start()

    def _accept(self):
        while not self._stop.is_set():
            ready, _, _ = select.select([self.sock], [], [], 0.05)
            if not ready:
                continue
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.close()
            self.accepted += 1

    def close(self):
        """Stop listening: new connections are refused (RST)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
            self._thread = None
        self.sock.close()


@pytest.fixture
def listeners():
    """Factory: listeners(n) -> n Listeners, closed at teardown."""
    made = []

    def make(n, **kw):
        ls = [Listener(**kw) for _ in range(n)]
        made.extend(ls)
        return ls

    yield make
    for listener in made:
        listener.close()


def lab_zone(primary, backup):
    """The zone: _svc._tcp with a primary (priority 10, weight 1) and a
    backup (priority 20, weight 65535) on the given ports, and the names
    of the other tests."""
    return zone(ORIGIN, TTL, [
        # the apex has an address, and is no service
        "@ A 127.0.0.1",
        f"_svc._tcp SRV 10 1 {primary} first",
        f"_svc._tcp SRV 20 65535 {backup} second",
        "first A 127.0.0.1",
        "second A 127.0.0.1",
        # RFC 2782: the one record's target is ".": not available
        "_absent._tcp SRV 0 0 0 .",
        # a name that exists with no SRV (NODATA); _none._tcp does not
        # exist at all (NXDOMAIN)
        "_nosrv._tcp TXT \"no service here\"",
        # a target that is an alias (RFC 2782 says it must not be)
        f"_cn._tcp SRV 10 1 {primary} alias",
        "alias CNAME first",
        # two weights at one priority, for --seed
        f"_w._tcp SRV 10 1 {primary} wa",
        f"_w._tcp SRV 10 3 {backup} wb",
        "wa A 127.0.0.1",
        "wb A 127.0.0.1",
        # three weight-0 records at one priority: their order is the
        # shuffle's, so hosts do not all try the same one first
        f"_z._tcp SRV 10 0 {primary} za",
        f"_z._tcp SRV 10 0 {primary} zb",
        f"_z._tcp SRV 10 0 {primary} zc",
        "za A 127.0.0.1",
        "zb A 127.0.0.1",
        "zc A 127.0.0.1",
        # S-NAPTR (RFC 3958): the apex says "look at chain" (flags ""),
        # chain says "SRV at _lab._tcp" (flags "S"); a worse ORDER
        # points at _spare._tcp; better-ordered records of another
        # service and of another protocol must not be followed
        '@ NAPTR 10 10 "" "x-lab:x-tcp" "" chain.lab.test.',
        '@ NAPTR 5 10 "S" "x-other:x-tcp" "" _other._tcp.lab.test.',
        '@ NAPTR 5 20 "S" "x-lab:x-udp" "" _udp._udp.lab.test.',
        '@ NAPTR 20 10 "S" "x-lab:x-tcp" "" _spare._tcp.lab.test.',
        # last, an "A" record: the protocol's default port (--port)
        '@ NAPTR 30 10 "A" "x-lab:x-tcp" "" spare.lab.test.',
        'chain NAPTR 10 10 "S" "x-lab:x-tcp" "" _lab._tcp.lab.test.',
        f"_lab._tcp SRV 10 5 {primary} first",
        f"_lab._tcp SRV 20 5 {backup} second",
        f"_spare._tcp SRV 10 5 {backup} spare",
        "spare A 127.0.0.1",
        f"_other._tcp SRV 10 5 {primary} first",
        f"_udp._udp SRV 10 5 {primary} first",
        # an S-NAPTR loop: loop -> loop2 -> loop, never terminal
        'loop NAPTR 10 10 "" "x-lab:x-tcp" "" loop2.lab.test.',
        'loop2 NAPTR 10 10 "" "x-lab:x-tcp" "" loop.lab.test.',
    ])


@pytest.fixture
def lab(new_bind, dnsdamper, bind, listeners):
    """(daemon, named, primary listener, backup listener): the lab zone
    on its own named, forwarded to by a dnsdamper."""
    primary, backup = listeners(2)
    ns = new_bind("lab", {ORIGIN: lab_zone(primary.port, backup.port)})
    d = dnsdamper([Forward(ORIGIN, [ns]), Forward(".", [bind])])
    return d, ns, primary, backup


def fq(name):
    return f"{name}.{ORIGIN}."


def test_primary_chosen_every_time(lab):
    """Both listeners up: priority 10 before priority 20 whatever the
    weights (1 against 65535) and whatever the draw, so every run, seeded
    or not, connects to the primary with its first attempt."""
    d, ns, primary, backup = lab
    expected = [(10, 1, primary.port, fq("first")),
                (20, 65535, backup.port, fq("second"))]
    runs = [srvcmd.run(d.port, "--json", "--connect", "--seed", seed,
                       "_svc._tcp.lab.test") for seed in range(1, 11)]
    runs += [srvcmd.run(d.port, "--json", "--connect", "_svc._tcp.lab.test")
             for _ in range(5)]
    for r in runs:
        assert r.rc == srvcmd.FOUND, r
        assert r.json["status"] == "ok", r
        assert r.order() == expected, r
        assert [c["addresses"] for c in r.json["candidates"]] == \
            [["127.0.0.1"], ["127.0.0.1"]], r
        assert r.json["attempts"] == [
            {"target": fq("first"), "address": "127.0.0.1",
             "port": primary.port, "result": "connected"}], r
        assert r.json["selected"] == {"target": fq("first"),
                                      "address": "127.0.0.1",
                                      "port": primary.port}, r


def test_primary_down_ends_on_backup(lab):
    """The primary's listener closes, DNS unchanged: --connect reports
    two attempts, refused then connected, and selects the backup; the
    text form says the same. With both closed: exit 5."""
    d, ns, primary, backup = lab
    primary.close()
    r = srvcmd.run(d.port, "--json", "--connect", "_svc._tcp.lab.test")
    assert r.rc == srvcmd.FOUND, r
    assert r.json["attempts"] == [
        {"target": fq("first"), "address": "127.0.0.1",
         "port": primary.port, "result": "refused"},
        {"target": fq("second"), "address": "127.0.0.1",
         "port": backup.port, "result": "connected"}], r
    assert r.json["selected"] == {"target": fq("second"),
                                  "address": "127.0.0.1",
                                  "port": backup.port}, r
    text = srvcmd.run(d.port, "--connect", "_svc._tcp.lab.test")
    assert text.rc == srvcmd.FOUND, text
    assert text.stdout.splitlines() == [
        f"10 1 {primary.port} {fq('first')} 127.0.0.1",
        f"20 65535 {backup.port} {fq('second')} 127.0.0.1",
        f"attempt {fq('first')} 127.0.0.1 {primary.port} refused",
        f"attempt {fq('second')} 127.0.0.1 {backup.port} connected",
        f"selected {fq('second')} 127.0.0.1 {backup.port}"], text

    backup.close()
    r = srvcmd.run(d.port, "--json", "--connect", "_svc._tcp.lab.test")
    assert r.rc == srvcmd.CONNECT, r
    assert r.json["status"] == "connect-failed", r
    assert [a["result"] for a in r.json["attempts"]] == \
        ["refused", "refused"], r
    assert r.json["selected"] is None, r


def test_not_available_exits_2(lab):
    """_absent._tcp's only SRV record has target ".": exit 2, status
    unavailable, no candidate, and --connect attempts nothing."""
    d = lab[0]
    r = srvcmd.run(d.port, "--json", "--connect", "_absent._tcp.lab.test")
    assert r.rc == srvcmd.UNAVAILABLE, r
    assert r.json == {"status": "unavailable", "candidates": [],
                      "attempts": [], "selected": None}, r
    assert "not available" in r.stderr, r


def test_no_srv_exits_3(lab):
    """A name that does not exist (NXDOMAIN) and one with no SRV records
    (NODATA, RFC 2308 §2.2): both exit 3, nothing to try."""
    d = lab[0]
    for name, status in (("_none._tcp.lab.test", "nxdomain"),
                         ("_nosrv._tcp.lab.test", "nodata")):
        r = srvcmd.run(d.port, "--json", "--connect", name)
        assert r.rc == srvcmd.NONE, r
        assert r.json == {"status": status, "candidates": [],
                          "attempts": [], "selected": None}, r


def test_apex_address_is_not_a_service(lab):
    """The apex has an A record. It is not service discovery: the apex
    name itself is refused as no _service._proto name (exit 64, and no
    DNS question at all), and a service name under it with no SRV does
    not fall back to the apex's address (exit 3, no A query for it)."""
    d, ns = lab[0], lab[1]
    mark = ns.mark()
    r = srvcmd.run(d.port, "--json", "lab.test")
    assert r.rc == srvcmd.USAGE, r
    assert r.stdout == "", r
    r = srvcmd.run(d.port, "--json", "_nosrv._tcp.lab.test")
    assert r.rc == srvcmd.NONE, r
    assert r.json["candidates"] == [], r
    assert ns.count("lab.test", since=mark) == 0
    assert ns.count("_nosrv._tcp.lab.test", "SRV", since=mark) == 1


def test_alias_target_is_reported(lab):
    """RFC 2782: a target must have address records, not be an alias.
    alias.lab.test is a CNAME to first.lab.test: the candidate says so
    (cname), its address is the canonical name's, and stderr names it."""
    d, ns, primary, backup = lab
    r = srvcmd.run(d.port, "--json", "_cn._tcp.lab.test")
    assert r.rc == srvcmd.FOUND, r
    assert r.json["candidates"] == [
        {"priority": 10, "weight": 1, "port": primary.port,
         "target": fq("alias"), "addresses": ["127.0.0.1"],
         "cname": fq("first")}], r
    assert "alias" in r.stderr and "RFC 2782" in r.stderr, r


# --- --seed: the documented generator and RFC 2782's draw, in Python -----

MASK = (1 << 64) - 1


def splitmix64(seed):
    """SplitMix64 as dnsdamper-srv(1) gives it: a generator of values."""
    state = seed
    while True:
        state = (state + 0x9e3779b97f4a7c15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK
        yield z ^ (z >> 31)


def uniform(gen, n):
    """A value in [0, n) without modulo bias: draws below 2^64 mod n are
    drawn again."""
    floor = (1 << 64) % n
    while True:
        r = next(gen)
        if r >= floor:
            return r % n


def rfc2782_order(records, seed):
    """RFC 2782's order of records (priority, weight, port, target): the
    canonical order first (priority; weight 0 first; target, port,
    weight), each priority's weight-0 records shuffled (Fisher-Yates: for
    m from k down to 2, swap w[m-1] with w[j], j drawn in [0, m)), then
    for each position a draw r in [0, sum] over the lowest priority left,
    the first record whose running sum >= r."""
    gen = splitmix64(seed)
    rest = sorted(records, key=lambda r: (r[0], r[1] != 0, r[3].lower(),
                                          r[2], r[1]))
    for prio in sorted({r[0] for r in rest}):
        first = next(i for i, r in enumerate(rest) if r[0] == prio)
        k = first
        while k < len(rest) and rest[k][0] == prio and rest[k][1] == 0:
            k += 1
        for m in range(k - first, 1, -1):
            j = first + uniform(gen, m)
            rest[first + m - 1], rest[j] = rest[j], rest[first + m - 1]
    out = []
    while rest:
        group = [r for r in rest if r[0] == rest[0][0]]
        draw = uniform(gen, sum(r[1] for r in group) + 1)
        running = 0
        for rec in group:
            running += rec[1]
            if running >= draw:
                break
        rest.remove(rec)
        out.append(rec)
    return out


def test_seed_gives_the_documented_order(lab):
    """_w._tcp: weights 1 (wa) and 3 (wb) at one priority. For seeds 1 to
    20 the order is the one worked out above from the documented
    generator; the same seed twice gives the same order (named rotates
    the RRset between answers, so arrival order does not matter); and
    the seeds do not all agree (the draw is a draw)."""
    d, ns, primary, backup = lab
    records = [(10, 1, primary.port, fq("wa")), (10, 3, backup.port,
                                                  fq("wb"))]
    firsts = set()
    for seed in range(1, 21):
        expected = rfc2782_order(records, seed)
        for _ in range(2):
            r = srvcmd.run(d.port, "--json", "--seed", seed,
                           "_w._tcp.lab.test")
            assert r.rc == srvcmd.FOUND, r
            assert r.order() == expected, (seed, r)
        firsts.add(expected[0][3])
    assert firsts == {fq("wa"), fq("wb")}



def test_weight_zero_records_are_shuffled(lab):
    """_z._tcp: three records of weight 0 at one priority. RFC 2782 leaves
    their order open; a fixed (canonical) one would make every host try
    za first. For seeds 1 to 20 the order is rfc2782_order's (its shuffle
    worked out from the documented generator), and more than one target
    comes first."""
    d, ns, primary, backup = lab
    records = [(10, 0, primary.port, fq(t)) for t in ("za", "zb", "zc")]
    firsts = set()
    for seed in range(1, 21):
        expected = rfc2782_order(records, seed)
        r = srvcmd.run(d.port, "--json", "--seed", seed, "_z._tcp.lab.test")
        assert r.rc == srvcmd.FOUND, r
        assert r.order() == expected, (seed, r)
        firsts.add(expected[0][3])
    assert len(firsts) > 1, firsts

# --- S-NAPTR -----------------------------------------------------------------

def test_naptr_chain_resolves_to_the_srv_set(lab):
    """--naptr x-lab:x-tcp lab.test: the apex's records in ORDER, then
    PREFERENCE (RFC 3958 §2.2.1) that offer x-lab over x-tcp (§2.2.2):
    ORDER 10 (flags "": NAPTR at chain.lab.test, whose "S" record gives
    the SRV set _lab._tcp) before ORDER 20 (the SRV set _spare._tcp) and
    ORDER 30 (flags "A": spare.lab.test itself, at the protocol's default
    port, here --port 7). The ORDER 5 records are for service x-other and
    protocol x-udp: never followed. Candidates: _lab._tcp's in RFC 2782
    order, then _spare's, then the "A" target."""
    d, ns, primary, backup = lab
    mark = ns.mark()
    r = srvcmd.run(d.port, "--json", "--port", 7, "--naptr", "x-lab:x-tcp",
                   "lab.test")
    assert r.rc == srvcmd.FOUND, r
    assert [(c["protocol"],) + o for c, o in
            zip(r.json["candidates"], r.order())] == [
        ("x-tcp", 10, 5, primary.port, fq("first")),
        ("x-tcp", 20, 5, backup.port, fq("second")),
        ("x-tcp", 10, 5, backup.port, fq("spare")),
        ("x-tcp", None, None, 7, fq("spare"))], r
    assert r.json["candidates"][3]["addresses"] == ["127.0.0.1"], r
    asked = {(q.name, q.qtype) for q in ns.queries(since=mark)}
    assert ("chain.lab.test", "NAPTR") in asked
    assert ("_other._tcp.lab.test", "SRV") not in asked
    assert ("_udp._udp.lab.test", "SRV") not in asked
    # the text form: the protocol first, "-" for an "A" record's
    # priority and weight
    r = srvcmd.run(d.port, "--port", 7, "--naptr", "x-lab:x-tcp",
                   "lab.test")
    assert r.stdout.splitlines()[0] == \
        f"x-tcp 10 5 {primary.port} {fq('first')} 127.0.0.1", r
    assert r.stdout.splitlines()[3] == \
        f"x-tcp - - 7 {fq('spare')} 127.0.0.1", r
    # no default port for x-tcp without --port (not in services(5)):
    # the "A" record is left out, and stderr says why
    r = srvcmd.run(d.port, "--json", "--naptr", "x-lab:x-tcp", "lab.test")
    assert r.rc == srvcmd.FOUND, r
    assert len(r.json["candidates"]) == 3, r
    assert "--port" in r.stderr, r
    # no record offers x-lab over x-sctp: nothing to pursue (exit 3)
    r = srvcmd.run(d.port, "--json", "--naptr", "x-lab:x-sctp", "lab.test")
    assert r.rc == srvcmd.NONE, r
    assert r.json["status"] == "nodata", r


def test_naptr_loop_is_a_failure(lab):
    """loop.lab.test's only record sends the walk to loop2, whose only
    record sends it back (flags "": RFC 3958 §2.2.3). The chain is cut at
    SRVNAPTR_DEPTH_MAX = 8 lookups deep, each name asked once (the walk
    remembers its answers), and as nothing else was found the lookup
    failed (exit 4, servfail): a broken tree, not a domain that decidedly
    has no such service (exit 3)."""
    d, ns = lab[0], lab[1]
    mark = ns.mark()
    r = srvcmd.run(d.port, "--json", "--naptr", "x-lab:x-tcp", "loop.lab.test")
    assert r.rc == srvcmd.RESOLUTION, r
    assert r.json["status"] == "servfail" and r.json["candidates"] == [], r
    assert "S-NAPTR branches cut" in r.stderr, r
    assert ns.count("loop.lab.test", "NAPTR", since=mark) == 1
    assert ns.count("loop2.lab.test", "NAPTR", since=mark) == 1


def test_connect_timeout(new_bind, dnsdamper, bind, listeners):
    """--timeout bounds each attempt: a listener whose accept queue is
    full (backlog 0, one connection waiting) makes the kernel drop the
    SYN, so the attempt to it times out, and the next candidate, at
    priority 20, is tried."""
    stuck = listeners(1, backlog=0, accepting=False)[0]
    backup = listeners(1)[0]
    ns = new_bind("slow", {ORIGIN: zone(ORIGIN, TTL, [
        f"_slow._tcp SRV 10 1 {stuck.port} first",
        f"_slow._tcp SRV 20 1 {backup.port} second",
        "first A 127.0.0.1", "second A 127.0.0.1"])})
    d = dnsdamper([Forward(ORIGIN, [ns]), Forward(".", [bind])])
    with socket.create_connection((ports.LOOPBACK, stuck.port), 5):
        r = srvcmd.run(d.port, "--json", "--connect", "--timeout", 300,
                       "_slow._tcp.lab.test")
    assert r.rc == srvcmd.FOUND, r
    assert [(a["port"], a["result"]) for a in r.json["attempts"]] == \
        [(stuck.port, "timeout"), (backup.port, "connected")], r


def test_address_families(new_bind, dnsdamper, bind, listeners):
    """A target with AAAA ::1 and A 127.0.0.1, a listener on [::1] only:
    its addresses are IPv6 first (so --connect reaches [::1] at once);
    -4 keeps only 127.0.0.1 (refused there: exit 5), -6 only ::1."""
    v6 = listeners(1, host="::1")[0]
    ns = new_bind("fam", {ORIGIN: zone(ORIGIN, TTL, [
        f"_dual._tcp SRV 10 1 {v6.port} dual",
        "dual A 127.0.0.1", "dual AAAA ::1"])})
    d = dnsdamper([Forward(ORIGIN, [ns]), Forward(".", [bind])])
    r = srvcmd.run(d.port, "--json", "--connect", "_dual._tcp.lab.test")
    assert r.rc == srvcmd.FOUND, r
    assert r.json["candidates"][0]["addresses"] == ["::1", "127.0.0.1"], r
    assert r.json["selected"] == {"target": fq("dual"), "address": "::1",
                                  "port": v6.port}, r
    r = srvcmd.run(d.port, "--json", "--connect", "-4", "_dual._tcp.lab.test")
    assert r.rc == srvcmd.CONNECT, r
    assert r.json["candidates"][0]["addresses"] == ["127.0.0.1"], r
    assert [a["result"] for a in r.json["attempts"]] == ["refused"], r
    r = srvcmd.run(d.port, "--json", "-6", "_dual._tcp.lab.test")
    assert r.json["candidates"][0]["addresses"] == ["::1"], r


def _asked(d):
    """The daemon's count of client queries by qtype (UDP and TCP)."""
    exp = d.control().metrics()
    return {(t, q): exp.value("dnsdamper_queries_total", transport=t,
                              qtype=q)
            for t in ("udp", "tcp") for q in ("SRV", "A", "AAAA")}


def _moved(before, after):
    return {k: after[k] - before[k] for k in after if after[k] != before[k]}


def test_additional_section_or_queries(new_bind, dnsdamper, bind):
    """RFC 2782: addresses come from the additional section when the
    answer has them, else from A and AAAA queries. named puts the A and
    AAAA of near.lab.test (its own zone) in the additional section: the
    command asks one SRV question and nothing else. It cannot for
    host.far.test (another named's zone): the command asks its A and
    AAAA, only A with -4, only AAAA with -6 (counted by the daemon)."""
    far = new_bind("far", {"far.test": zone("far.test", TTL, [
        "host A 127.0.0.1", "host AAAA ::1"])})
    ns = new_bind("near", {ORIGIN: zone(ORIGIN, TTL, [
        "_near._tcp SRV 10 1 80 near", "near A 127.0.0.1", "near AAAA ::1",
        "_far._tcp SRV 10 1 80 host.far.test."])})
    d = dnsdamper([Forward(ORIGIN, [ns]), Forward("far.test", [far]),
                   Forward(".", [bind])])
    for name, flags, moved in [
            ("_near._tcp", [], {("udp", "SRV"): 1}),
            ("_far._tcp", [], {("udp", "SRV"): 1, ("udp", "A"): 1,
                               ("udp", "AAAA"): 1}),
            ("_far._tcp", ["-4"], {("udp", "SRV"): 1, ("udp", "A"): 1}),
            ("_far._tcp", ["-6"], {("udp", "SRV"): 1, ("udp", "AAAA"): 1})]:
        before = _asked(d)
        r = srvcmd.run(d.port, "--json", *flags, f"{name}.lab.test")
        assert r.rc == srvcmd.FOUND, r
        assert _moved(before, _asked(d)) == moved, (name, flags, r)
        want = {"-4": ["127.0.0.1"], "-6": ["::1"]}.get(
            (flags or [None])[0], ["::1", "127.0.0.1"])
        assert r.json["candidates"][0]["addresses"] == want, r


def test_candidates_bounded(new_bind, dnsdamper, bind):
    """Three S-NAPTR "S" records, each to an SRV RRset of 100 records
    (named's own limit per RRset): 300 candidates, of which the command
    keeps SRVRESOLVE_CANDIDATES_MAX = 256, all with their address, and
    says how many it left out (300 - 256 = 44). 100 SRV records do not
    fit in 1232 octets: each UDP answer is truncated and the command asks
    again over TCP (RFC 7766 §5)."""
    records = []
    for k in range(3):
        records.append(f'@ NAPTR {10 * (k + 1)} 1 "S" "x-many:x-tcp" "" '
                       f'_m{k}._tcp.lab.test.')
        for i in range(100):
            records += [f"_m{k}._tcp SRV 10 1 {1000 + i} t{k}-{i:02d}",
                        f"t{k}-{i:02d} A 127.0.0.1"]
    ns = new_bind("many", {ORIGIN: zone(ORIGIN, TTL, records)})
    d = dnsdamper([Forward(ORIGIN, [ns]), Forward(".", [bind])])
    before = _asked(d)
    r = srvcmd.run(d.port, "--json", "-4", "--naptr", "x-many:x-tcp",
                   "lab.test")
    assert r.rc == srvcmd.FOUND, r
    cands = r.json["candidates"]
    assert len(cands) == 256, r
    assert all(c["addresses"] == ["127.0.0.1"] for c in cands), r
    # in NAPTR order: all of _m0's, all of _m1's, 56 of _m2's
    assert [c["target"][:2] for c in cands] == \
        ["t0"] * 100 + ["t1"] * 100 + ["t2"] * 56, r
    assert "44 more candidates left out (at most 256)" in r.stderr, r
    moved = _moved(before, _asked(d))
    assert moved[("udp", "SRV")] == 3 and moved[("tcp", "SRV")] == 3, moved


def test_resolver_faults(new_bind, faultproxy, listeners):
    """The command straight at a faultproxy in front of named (no
    dnsdamper): forged answers (wrong ID, wrong question) are not taken
    (RFC 5452 §9.1); truncated ones are asked again over TCP; SERVFAIL,
    and silence past the 5 s question timeout, exit 4."""
    primary = listeners(1)[0]
    ns = new_bind("fault", {ORIGIN: zone(ORIGIN, TTL, [
        f"_svc._tcp SRV 10 1 {primary.port} first", "first A 127.0.0.1"])})
    for kind in ("id", "question"):
        fp = faultproxy(ns, spoof=1.0, spoof_kind=kind)
        r = srvcmd.run(fp.port, "--json", "-4", "_svc._tcp.lab.test")
        assert r.rc == srvcmd.FOUND, r
        assert r.json["candidates"][0]["addresses"] == ["127.0.0.1"], r
        assert fp.stats()["spoofed"] >= 1
    fp = faultproxy(ns, truncate=1.0)
    r = srvcmd.run(fp.port, "--json", "-4", "_svc._tcp.lab.test")
    assert r.rc == srvcmd.FOUND, r
    assert r.json["candidates"][0]["addresses"] == ["127.0.0.1"], r
    assert fp.stats()["truncated"] >= 1 and fp.stats()["received_tcp"] >= 1
    fp.set(servfail=1.0)
    r = srvcmd.run(fp.port, "--json", "_svc._tcp.lab.test")
    assert r.rc == srvcmd.RESOLUTION, r
    assert r.json["status"] == "servfail", r
    fp.set(outage=True)
    r = srvcmd.run(fp.port, "--json", "_svc._tcp.lab.test")
    assert r.rc == srvcmd.RESOLUTION, r
    assert r.json["status"] == "servfail", r


class Trickler:
    """A resolver on a free loopback port that says TC=1 to every UDP
    question (RFC 7766 §5: ask again over TCP) and then, over TCP, sends
    its answer (NODATA, about 50 octets with the length) one octet every
    TRICKLE_S: a whole minute or more, were it waited for."""

    TRICKLE_S = 1.0

    def __init__(self):
        self.port = ports.free_port()
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind((ports.LOOPBACK, self.port))
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind((ports.LOOPBACK, self.port))
        self.tcp.listen(4)
        self.tcp_questions = 0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=f, daemon=True)
                         for f in (self._serve_udp, self._serve_tcp)]
        for t in self._threads:
            t.start()

    @staticmethod
    def _answer(wire, tc):
        r = dns.message.make_response(dns.message.from_wire(wire))
        r.flags |= dns.flags.RA | (dns.flags.TC if tc else 0)
        return r.to_wire()

    def _ready(self, sock):
        while not self._stop.is_set():
            if select.select([sock], [], [], 0.05)[0]:
                return True
        return False

    def _serve_udp(self):
        while self._ready(self.udp):
            data, peer = self.udp.recvfrom(65535)
            self.udp.sendto(self._answer(data, True), peer)

    def _serve_tcp(self):
        while self._ready(self.tcp):
            conn, _ = self.tcp.accept()
            with conn:
                n = int.from_bytes(conn.recv(2), "big")
                data = conn.recv(n)
                self.tcp_questions += 1
                wire = self._answer(data, False)
                for octet in len(wire).to_bytes(2, "big") + wire:
                    if self._stop.wait(self.TRICKLE_S):
                        break
                    try:
                        conn.send(bytes([octet]))
                    except OSError:
                        break

    def close(self):
        self._stop.set()
        for t in self._threads:
            t.join(5.0)
        self.udp.close()
        self.tcp.close()


def test_tcp_answer_trickled_is_given_up():
    """A resolver that answers over TCP an octet a second: the command
    gives up after its 5 s question timeout (dnsdamper-srv(1): "given up
    after 5 seconds", over TCP too) and exits 4, instead of waiting for
    the ~50 octets, which would outlast the 30 s that srvcmd.run allows.
    (ldns_tcp_send's timeout is per read: each octet restarted it.)"""
    t = Trickler()
    try:
        r = srvcmd.run(t.port, "--json", "_x._tcp.lab.test")
        assert r.rc == srvcmd.RESOLUTION, r
        assert r.json["status"] == "servfail", r
        assert t.tcp_questions == 1
    finally:
        t.close()


def test_duplicate_records_are_one_candidate():
    """RFC 2181 §5: an RRset is a set; a resolver that sends the same SRV
    record three times (the target in another case twice: names compare
    case-insensitively, RFC 4343) gives one candidate, tried once, not a
    target with three times its weight. A record that differs in its port
    stays a candidate of its own, and the target of both is asked for
    once (one A question with -4)."""
    def respond(q):
        r = dns.message.make_response(q)
        r.flags |= dns.flags.RA
        qn = q.question[0]
        if qn.rdtype == dns.rdatatype.SRV:
            for text in ("10 1 80 t.lab.test.", "10 1 80 T.LAB.TEST.",
                         "10 1 80 t.Lab.test.", "10 1 81 t.lab.test."):
                r.answer.append(dns.rrset.from_text(qn.name, 60, "IN",
                                                    "SRV", text))
        elif qn.rdtype == dns.rdatatype.A:
            r.answer.append(dns.rrset.from_text(qn.name, 60, "IN", "A",
                                                "127.0.0.1"))
        return r
    rec = upstream.Recorder().answer_with(respond)
    try:
        r = srvcmd.run(rec.port, "--json", "-4", "_d._tcp.lab.test")
        assert r.rc == srvcmd.FOUND, r
        assert sorted(c["port"] for c in r.json["candidates"]) == [80, 81], r
        assert len(rec.log(qtype="A")) == 1, rec.log()
    finally:
        rec.stop()


@pytest.mark.parametrize("args", [
    [], ["lab.test"], ["_svc.lab.test"], ["-4", "-6", "_svc._tcp.lab.test"],
    ["--timeout", "0", "_svc._tcp.lab.test"],
    ["--timeout", "x", "_svc._tcp.lab.test"],
    ["--seed", "-1", "_svc._tcp.lab.test"],
    ["--port", "65536", "--naptr", "x-lab:x-tcp", "lab.test"],
    ["--naptr", "x-lab", "lab.test"], ["--naptr", "x-lab::x-tcp",
                                       "lab.test"],
    ["--bogus", "_svc._tcp.lab.test"], ["_a._tcp.x.", "_b._tcp.x."]])
def test_usage_errors(args):
    """dnsdamper-srv(1): a usage error exits 64 with nothing on stdout,
    before any question is asked (the -s port has nobody listening)."""
    r = srvcmd.run(ports.dead_port(), *args, timeout=10)
    assert r.rc == srvcmd.USAGE, r
    assert r.stdout == "", r
    assert "usage" in r.stderr, r
    r = srvcmd.run(ports.dead_port(), "-s", "localhost", "_a._tcp.x.")
    assert r.rc == srvcmd.USAGE, r


# --- from the cache, through an upstream outage -----------------------------

OUTAGE_TTL = 2
OUTAGE_S = 15.0
OUTAGE_CONF = [
    # RFC 8767 §5: answer stale once a refresh has not come back in 1 s
    "client-timeout 1000ms",
    "stale-refresh-interval 1s",
    "upstream-timeout 100ms 300ms",
    "query-timeout 2s",
]


@pytest.mark.timeout_s(90)
def test_answers_from_the_cache_through_an_outage(
        new_bind, faultproxy, dnsdamper, bind, listeners):
    """The lab zone with TTL 2 s behind a faultproxy. One run warms
    dnsdamper's cache; then the upstream is cut off for 15 s, far past
    every TTL. Runs at the start, middle and end of the outage still
    find the same candidates and connect to the primary, every answer
    from dnsdamper's cache (RFC 8767: stale, as named never sees a
    question while the proxy drops them); after it, fresh again."""
    primary, backup = listeners(2)
    ns = new_bind("out", {ORIGIN: zone(ORIGIN, OUTAGE_TTL, [
        f"_svc._tcp SRV 10 1 {primary.port} first",
        f"_svc._tcp SRV 20 65535 {backup.port} second",
        "first A 127.0.0.1", "second A 127.0.0.1"])})
    fp = faultproxy(ns)
    d = dnsdamper([Forward(ORIGIN, [fp]), Forward(".", [bind])],
                  extra=OUTAGE_CONF)
    expected = [(10, 1, primary.port, fq("first")),
                (20, 65535, backup.port, fq("second"))]

    def check():
        r = srvcmd.run(d.port, "--json", "--connect", "_svc._tcp.lab.test")
        assert r.rc == srvcmd.FOUND, r
        assert r.order() == expected, r
        assert r.json["selected"]["port"] == primary.port, r
        return r

    check()
    fp.set(outage=True)
    start = time.monotonic()
    mark = ns.mark()
    stale_before = d.control().metrics().value(
        "dnsdamper_stale_answers_total")
    for at in (OUTAGE_TTL + 1.0, OUTAGE_S / 2, OUTAGE_S - 3.0):
        time.sleep(max(0.0, start + at - time.monotonic()))
        check()
    assert time.monotonic() - start < OUTAGE_S, "the runs outlasted it"
    assert ns.count("_svc._tcp.lab.test", since=mark) == 0
    assert fp.stats()["dropped_outage"] >= 1    # refreshes were tried
    assert d.control().metrics().value(
        "dnsdamper_stale_answers_total") > stale_before
    time.sleep(max(0.0, start + OUTAGE_S - time.monotonic()))
    fp.clear()
    check()
