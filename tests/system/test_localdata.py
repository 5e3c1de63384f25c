"""Local answers (dnsdamper.conf(5) "LOCAL ANSWERS"): the hosts file,
local-data, local-zone, the zones served by default (RFC 6303 §4, RFC
6761, RFC 8375), all answered by the daemon itself and never seen by the
upstream, which is the session named (`forward .`) and counts every query
it gets in its query log; and DS at a forward zone's name, which goes to
the parent's upstream (RFC 4035 §5).

Expected values: hosts-file records have TTL 0 (dnsmasq's local-ttl), so
does the SOA that comes with their NODATA; the SOA of a default zone is
RFC 6303 §3's: ZONE nobody.invalid. 1 3600 1200 604800 10800, TTL 10800.
"""

import threading
import time

import dns.rcode
import dns.rdatatype
import dns.reversename

import pytest

from dnstest import query
from dnstest.daemon import Forward
from dnstest.zonetext import zone

EDIT_WITHIN = 2.0       # s: a hosts file edit is served within this (the
                        # file is looked at every second)
RFC6303_SOA = "nobody.invalid. 1 3600 1200 604800 10800"


def _rrs(r, section="answer"):
    """(name, type, ttl, rdata text) of each record of a section."""
    out = []
    for rrset in getattr(r.msg, section):
        for rd in rrset:
            out.append((rrset.name.to_text().lower(),
                        dns.rdatatype.to_text(rrset.rdtype), rrset.ttl,
                        rd.to_text()))
    return out


def _hosts(tmp_path, text):
    path = tmp_path / "hosts"
    path.write_text(text)
    return path


def test_hosts_file_a_aaaa_ptr_nodata(tmp_path, dnsdamper, bind):
    hosts = _hosts(tmp_path, "# a hosts file\n"
                             "192.0.2.21 Web.Hosts.Test web   # aliases\n"
                             "2001:db8::21 web.hosts.test\n"
                             "192.0.2.22 db.hosts.test\n"
                             "300.1.1.1 broken.hosts.test\n")
    d = dnsdamper([Forward(".", [bind])], extra=[f"hosts-file {hosts}"])
    mark = bind.mark()
    r = query.udp(d.port, "web.hosts.test")
    assert _rrs(r) == [("web.hosts.test.", "A", 0, "192.0.2.21")], r.text()
    r = query.udp(d.port, "WEB.hosts.test", "AAAA")
    assert _rrs(r) == [("web.hosts.test.", "AAAA", 0, "2001:db8::21")]
    assert query.addresses(query.udp(d.port, "web")) == {"192.0.2.21"}
    # PTR: the first name of the line, as written, inside the default
    # zone 2.0.192.in-addr.arpa. (RFC 6303 §4.2, TEST-NET-1)
    r = query.udp(d.port, "21.2.0.192.in-addr.arpa", "PTR")
    assert _rrs(r) == [("21.2.0.192.in-addr.arpa.", "PTR", 0,
                        "Web.Hosts.Test.")], r.text()
    r = query.udp(d.port, dns.reversename.from_address(
        "2001:db8::21").to_text(), "PTR")
    assert [x[3] for x in _rrs(r)] == ["web.hosts.test."], r.text()
    # another type: NODATA, with the SOA of the name's own zone
    r = query.udp(d.port, "db.hosts.test", "MX")
    assert r.rcode == dns.rcode.NOERROR and not r.msg.answer, r.text()
    assert _rrs(r, "authority") == [
        ("db.hosts.test.", "SOA", 0, "db.hosts.test. nobody.invalid. 1 "
         "3600 1200 604800 0")], r.text()
    # the broken line is logged with file:line and skipped
    d.wait_log(rf"hosts-file {hosts}:5: \"300\.1\.1\.1\" is not an IPv4 "
               rf"or IPv6 address; line skipped")
    assert bind.queries(mark) == [], "named was asked for hosts names"
    # a name below a hosts name, or a name not in the file, goes upstream
    # (at least once: named refuses names it does not serve, and REFUSED
    # from the last upstream left is asked again, unless so many refusals
    # in a row have marked it down)
    query.udp(d.port, "x.web.hosts.test")
    query.udp(d.port, "other.hosts.test")
    assert bind.count("x.web.hosts.test", since=mark) >= 1
    assert bind.count("other.hosts.test", since=mark) >= 1


def _poll_addresses(port, qname, want, within):
    """Ask until the answer's addresses are want, for up to within s."""
    deadline = time.monotonic() + within
    while True:
        got = query.addresses(query.udp(port, qname))
        if got == want or time.monotonic() >= deadline:
            return got
        time.sleep(0.05)


def test_hosts_file_edited_while_running(tmp_path, dnsdamper, bind):
    hosts = _hosts(tmp_path, "192.0.2.31 edit.hosts.test\n")
    d = dnsdamper([Forward(".", [bind])], extra=[f"hosts-file {hosts}"])
    assert query.addresses(query.udp(d.port, "edit.hosts.test")) == \
        {"192.0.2.31"}
    # edited in place (spare is never asked before it is gone again: an
    # answer the daemon got from named before it read the edit, even
    # SERVFAIL, would be cached)
    with hosts.open("a") as f:
        f.write("192.0.2.32 added.hosts.test\n192.0.2.34 spare.hosts.test\n")
    assert _poll_addresses(d.port, "added.hosts.test", {"192.0.2.32"},
                           EDIT_WITHIN) == {"192.0.2.32"}
    # replaced by rename, as editors do: the old name goes upstream now
    new = tmp_path / "hosts.new"
    new.write_text("192.0.2.33 edit.hosts.test\n")
    new.rename(hosts)
    assert _poll_addresses(d.port, "edit.hosts.test", {"192.0.2.33"},
                           EDIT_WITHIN) == {"192.0.2.33"}
    mark = bind.mark()
    r = query.udp(d.port, "spare.hosts.test")
    assert bind.count("spare.hosts.test", since=mark) >= 1, r.text()


BIG = 100_000           # lines of the big hosts file
RELOAD_WITHIN = 300.0   # s: a build of it is done within this (some 0.1
                        # s of CPU, seconds under ThreadSanitizer: on a
                        # loaded machine, tens of seconds)


def _big_hosts(path, last):
    """A hosts file of BIG lines, hN.bighosts.test at the Nth address of
    198.18.0.0/15 (RFC 2544's benchmark range), but the last line's
    address is last."""
    lines = [f"198.{18 + (n >> 16)}.{(n >> 8) & 255}.{n & 255} "
             f"h{n}.bighosts.test\n"
             for n in range(BIG - 1)]
    lines.append(f"{last} h{BIG - 1}.bighosts.test\n")
    tmp = path.with_suffix(".new")
    tmp.write_text("".join(lines))
    tmp.rename(path)


@pytest.mark.timeout_s(6 * RELOAD_WITHIN)
@pytest.mark.parametrize("threads", [1, 2])
def test_big_hosts_file_reloaded_while_queried(tmp_path, dnsdamper, bind,
                                               threads):
    """A hosts file of 100,000 lines is built off the event loop: while a
    client keeps asking (a hosts name and a cached upstream name, worker
    0 on main's loop among those that answer), the file is replaced and
    POST /reload is answered after the new file is served; a bad config
    at reload is refused and the file's names stay; then an edit without
    a reload is picked up by the hosts file check. Every query of the
    client is answered (each waits up to 5 s: a stall of the loop while
    a table is built or freed shows as lost answers only when it is
    long, so the figures are contrib/bench's `reloadstall`)."""
    hosts = tmp_path / "hosts"
    _big_hosts(hosts, "192.0.2.80")
    d = dnsdamper([Forward(".", [bind])],
                  extra=[f"hosts-file {hosts}", f"threads {threads}"],
                  start=False)
    d.start(timeout=RELOAD_WITHIN)      # built at start, before it serves
    ctl = d.control()
    last = f"h{BIG - 1}.bighosts.test"
    assert query.addresses(query.udp(d.port, last)) == {"192.0.2.80"}
    stop = threading.Event()
    asked, lost = [0], []

    def keep_asking():
        names = ("h7.bighosts.test", "www.example.test")
        while not stop.is_set() and asked[0] < 20000:
            try:
                r = query.udp(d.port, names[asked[0] % 2], timeout=5.0)
                if r.rcode != dns.rcode.NOERROR or not r.msg.answer:
                    lost.append(r.text())
            except query.NoAnswer as e:
                lost.append(str(e))
            asked[0] += 1
            time.sleep(0.002)

    t = threading.Thread(target=keep_asking, daemon=True)
    t.start()
    try:
        for n in range(1, 4):
            _big_hosts(hosts, f"192.0.2.{80 + n}")
            r = ctl.post("/reload", timeout=RELOAD_WITHIN)
            assert r.status == 200 and r.json() == {"reloaded": True}, r
            # the reply came once every worker serves the new table
            for _ in range(2 * threads):
                assert query.addresses(query.udp(d.port, last)) == \
                    {f"192.0.2.{80 + n}"}, n
        good = d.conf_path.read_text()
        d.write_config(good + "max-ttl forever\n")
        r = ctl.post("/reload", timeout=RELOAD_WITHIN)
        assert r.status == 500 and r.json()["reloaded"] is False, r
        d.write_config(good)
        assert query.addresses(query.udp(d.port, last)) == {"192.0.2.83"}
        # an edit without a reload: the once-a-second look finds it
        _big_hosts(hosts, "192.0.2.90")
        assert _poll_addresses(d.port, last, {"192.0.2.90"},
                               RELOAD_WITHIN) == {"192.0.2.90"}
    finally:
        stop.set()
        t.join(10.0)
    assert asked[0] > 0 and not lost, (asked[0], lost[:3])
    d.assert_alive()


LOCAL = [
    "local-zone static.lz.test static",
    "local-zone nx.lz.test nxdomain",
    "local-zone refuse.lz.test refuse",
    "local-zone transparent.lz.test transparent",
    "local-zone 168.192.in-addr.arpa nodefault",
    'local-data "www.static.lz.test. 300 IN A 192.0.2.41"',
    'local-data "_sip._udp.static.lz.test. 60 SRV 10 20 5060 '
    'www.static.lz.test."',
    'local-data "txt.transparent.lz.test. 120 TXT \\"two words\\" '
    '\\"a \\\\\\"quote\\\\\\"\\""',
    'local-data "x.nx.lz.test. A 192.0.2.42"',
    'local-data "alone.lz.test. 30 A 192.0.2.43"',
]


def test_local_data_and_each_local_zone_type(dnsdamper, bind):
    d = dnsdamper([Forward(".", [bind])], extra=LOCAL)
    mark = bind.mark()
    r = query.udp(d.port, "www.static.lz.test")
    assert _rrs(r) == [("www.static.lz.test.", "A", 300, "192.0.2.41")]
    r = query.udp(d.port, "_sip._udp.static.lz.test", "SRV")
    assert _rrs(r) == [("_sip._udp.static.lz.test.", "SRV", 60,
                        "10 20 5060 www.static.lz.test.")], r.text()
    r = query.tcp(d.port, "txt.transparent.lz.test", "TXT")
    assert _rrs(r) == [("txt.transparent.lz.test.", "TXT", 120,
                        '"two words" "a \\"quote\\""')], r.text()
    # static: the rest NXDOMAIN, its own types NODATA, with the zone's SOA
    # (TTL and MINIMUM 3600, local-data's default TTL)
    soa = [("static.lz.test.", "SOA", 3600, "static.lz.test. nobody.invalid."
            " 1 3600 1200 604800 3600")]
    r = query.udp(d.port, "nope.static.lz.test")
    assert r.rcode == dns.rcode.NXDOMAIN and _rrs(r, "authority") == soa
    r = query.udp(d.port, "www.static.lz.test", "AAAA")
    assert r.rcode == dns.rcode.NOERROR and not r.msg.answer, r.text()
    assert _rrs(r, "authority") == soa
    # nxdomain: the whole subtree, its local-data too
    for name in ("nx.lz.test", "x.nx.lz.test", "a.b.nx.lz.test"):
        assert query.udp(d.port, name).rcode == dns.rcode.NXDOMAIN
    # refuse: the whole subtree
    for name in ("refuse.lz.test", "x.refuse.lz.test"):
        assert query.udp(d.port, name).rcode == dns.rcode.REFUSED
    assert bind.queries(mark) == [], "named was asked for local names"
    # transparent: the rest goes upstream; a local-data name outside any
    # zone too, but for its name only
    query.udp(d.port, "other.transparent.lz.test")
    r = query.udp(d.port, "alone.lz.test")
    assert _rrs(r) == [("alone.lz.test.", "A", 30, "192.0.2.43")]
    query.udp(d.port, "below.alone.lz.test")
    assert bind.count("other.transparent.lz.test", since=mark) >= 1
    assert bind.count("below.alone.lz.test", since=mark) >= 1
    assert bind.count("alone.lz.test", since=mark) == 0
    # nodefault: 192.168/16's reverse zone is no longer served here
    query.udp(d.port, "1.1.168.192.in-addr.arpa", "PTR")
    assert bind.count("1.1.168.192.in-addr.arpa", "PTR", since=mark) >= 1
    r = query.udp(d.port, "1.0.0.10.in-addr.arpa", "PTR")
    assert r.rcode == dns.rcode.NXDOMAIN, r.text()
    # every one of them counted as a local answer
    m = d.control().metrics()
    local = sum(m.value("dnsdamper_answers_total", source="local",
                        rcode=rc) for rc in ("NOERROR", "NXDOMAIN",
                                             "REFUSED"))
    assert local == 12, m.series("dnsdamper_answers_total")


PRIVATE = ["10.0.0.1", "192.168.1.1", "172.16.5.4", "169.254.1.1",
           "fd00::1"]


def test_private_reverse_lookups_stay_local(dnsdamper, bind, new_bind):
    """RFC 6303: the reverse zones of private, link-local and ULA space
    are answered NXDOMAIN locally, with RFC 6303 §3's SOA; named never
    sees them. Once a forward zone for 10.in-addr.arpa is configured,
    that PTR is forwarded, once."""
    d = dnsdamper([Forward(".", [bind])])
    mark = bind.mark()
    for addr in PRIVATE:
        name = dns.reversename.from_address(addr).to_text()
        r = query.udp(d.port, name, "PTR")
        assert r.rcode == dns.rcode.NXDOMAIN, r.text()
        auth = _rrs(r, "authority")
        assert len(auth) == 1 and auth[0][1:3] == ("SOA", 10800), r.text()
        assert auth[0][3] == f"{auth[0][0]} {RFC6303_SOA}", r.text()
        assert name.endswith(auth[0][0]), (name, auth)
    assert bind.queries(mark) == [], "named was asked for private PTRs"

    corp = new_bind("rev", {"10.in-addr.arpa": zone(
        "10.in-addr.arpa", 300, ["1.0.0 PTR gw.corp.test."])})
    cmark = corp.mark()
    d.wait_log(r"reloaded", since=d.reload(d.config(
        [Forward("10.in-addr.arpa", [corp]), Forward(".", [bind])])))
    r = query.udp(d.port, "1.0.0.10.in-addr.arpa", "PTR")
    assert _rrs(r) == [("1.0.0.10.in-addr.arpa.", "PTR", 300,
                        "gw.corp.test.")], r.text()
    query.udp(d.port, "1.0.0.10.in-addr.arpa", "PTR")      # cached
    assert corp.count("1.0.0.10.in-addr.arpa", "PTR", since=cmark) == 1
    # the others stay local
    r = query.udp(d.port, "1.1.168.192.in-addr.arpa", "PTR")
    assert r.rcode == dns.rcode.NXDOMAIN
    assert bind.queries(mark) == []


def test_ds_at_forward_zone_apex_from_parent(dnsdamper, bind, new_bind):
    """RFC 4035 §5, RFC 4034 §5: the DS of child.ds.test lives in ds.test;
    asked of child's own named it is NODATA. The daemon asks the parent's
    upstream."""
    ds = "child.ds.test. 3600 IN DS 12345 13 2 " \
        "49FD46E6C4B45C55D4AC69CBD3CD34AC1AFE51DE2AD7C25BD9D34A36B7B1F7C3"
    parent = new_bind("parent", {"ds.test": zone("ds.test", 3600, [
        "child NS ns.child", "ns.child A 127.0.0.1",
        "child DS 12345 13 2 49FD46E6C4B45C55D4AC69CBD3CD34AC1AFE51DE2AD7"
        "C25BD9D34A36B7B1F7C3"])})
    child = new_bind("child", {"child.ds.test": zone(
        "child.ds.test", 3600, ["www A 192.0.2.51"])})
    d = dnsdamper([Forward("child.ds.test", [child]),
                   Forward("ds.test", [parent]), Forward(".", [bind])])
    pmark, cmark = parent.mark(), child.mark()
    r = query.udp(d.port, "child.ds.test", "DS")
    assert r.rcode == dns.rcode.NOERROR, r.text()
    assert [f"{n} {ttl} IN {t} {rd}".upper() for n, t, ttl, rd in _rrs(r)] \
        == [ds.upper()], r.text()
    assert parent.count("child.ds.test", "DS", since=pmark) == 1
    assert child.count("child.ds.test", "DS", since=cmark) == 0
    # every other type at the name, and DS below it, stay with the child
    assert query.addresses(query.udp(d.port, "www.child.ds.test")) == \
        {"192.0.2.51"}
    query.udp(d.port, "child.ds.test", "SOA")
    query.udp(d.port, "www.child.ds.test", "DS")
    assert child.count("child.ds.test", "SOA", since=cmark) == 1
    assert child.count("www.child.ds.test", "DS", since=cmark) == 1
    # explain says so
    e = d.control().get("/explain?name=child.ds.test&type=DS").json()
    assert e["zone"] == "ds.test." and e["local"] is None, e


def test_explain_names_the_rule(tmp_path, dnsdamper, bind):
    hosts = _hosts(tmp_path, "192.0.2.61 ex.hosts.test\n")
    d = dnsdamper([Forward(".", [bind])],
                  extra=[f"hosts-file {hosts}"] + LOCAL)
    ctl = d.control()
    e = ctl.get("/explain?name=ex.hosts.test&type=A").json()
    assert e["local"] == {"verdict": "answer", "zone": "ex.hosts.test.",
                          "zone_type": "transparent", "rule": "name",
                          "source": "hosts-file", "file": str(hosts),
                          "line": 1}, e
    e = ctl.get("/explain?name=www.static.lz.test&type=A").json()
    assert e["local"]["source"] == "local-data" and \
        e["local"]["file"] == str(d.conf_path), e
    lines = d.conf_path.read_text().splitlines()
    assert "www.static.lz.test." in lines[e["local"]["line"] - 1], e
    e = ctl.get("/explain?name=1.0.0.10.in-addr.arpa&type=PTR").json()
    assert e["local"] == {"verdict": "NXDOMAIN", "zone": "10.in-addr.arpa.",
                          "zone_type": "static", "rule": "default",
                          "source": None, "file": None, "line": 0}, e
    e = ctl.get("/explain?name=x.refuse.lz.test&type=A").json()
    assert (e["local"]["verdict"], e["local"]["rule"]) == \
        ("REFUSED", "local-zone"), e
    e = ctl.get("/explain?name=www.example.test&type=A").json()
    assert e["local"] is None and e["zone"] == ".", e


def test_bad_reload_keeps_the_local_data(dnsdamper, bind):
    d = dnsdamper([Forward(".", [bind])], extra=LOCAL)
    good = d.conf_path.read_text()
    mark = d.reload(good + 'local-data "oops.lz.test. A 300.0.0.1"\n')
    d.wait_log(r"reload failed", since=mark)
    assert "is not a resource record" in d.stderr(mark)
    r = query.udp(d.port, "www.static.lz.test")
    assert _rrs(r) == [("www.static.lz.test.", "A", 300, "192.0.2.41")]
    assert query.udp(d.port, "x.refuse.lz.test").rcode == dns.rcode.REFUSED


def test_local_srv_target_is_not_prefetched(tmp_path, dnsdamper, new_bind,
                                            bind):
    """An SRV answer from upstream whose target is a hosts-file name: the
    target's addresses are not fetched ahead (srv-prefetch-targets), since
    clients get them locally, even though a client asked for it. The
    control: a target that is not local and whose A a client asked is
    fetched ahead once its entry has expired (TTL 2 s), its AAAA, never
    asked, is not."""
    ttl = 2
    ns = new_bind("srv", {"srvl.test": zone("srvl.test", ttl, [
        "_web._tcp SRV 0 0 80 web", "web A 192.0.2.72",
        "_far._tcp SRV 0 0 80 far", "far A 192.0.2.73"])})
    hosts = _hosts(tmp_path, "192.0.2.71 web.srvl.test\n")
    d = dnsdamper([Forward("srvl.test", [ns]), Forward(".", [bind])],
                  extra=[f"hosts-file {hosts}"])
    assert query.addresses(query.udp(d.port, "web.srvl.test")) == \
        {"192.0.2.71"}
    r = query.udp(d.port, "far.srvl.test")
    assert query.addresses(r) == {"192.0.2.73"}, r.text()
    time.sleep(max(0.0, r.received + ttl + 0.3 - time.monotonic()))
    mark = ns.mark()
    r = query.udp(d.port, "_web._tcp.srvl.test", "SRV")
    assert r.rcode == dns.rcode.NOERROR and r.msg.answer, r.text()
    query.udp(d.port, "_far._tcp.srvl.test", "SRV")
    deadline = time.monotonic() + 2.0
    while ns.count("far.srvl.test", "A", since=mark) < 1 and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    assert ns.count("far.srvl.test", "A", since=mark) == 1, ns.queries(mark)
    assert ns.count("far.srvl.test", "AAAA", since=mark) == 0, \
        ns.queries(mark)
    assert ns.count("web.srvl.test", since=mark) == 0, ns.queries(mark)
    assert query.addresses(query.udp(d.port, "web.srvl.test")) == \
        {"192.0.2.71"}
