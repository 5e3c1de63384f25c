"""Positive answers and the cache: a miss goes upstream once, a hit does
not; TTLs count down (RFC 1035 §3.2.1, RFC 2181 §8); CNAME chains and SRV
additionals are kept whole; the qname comes back in the client's case.

Names and TTLs: zones/example.test.zone."""

import time

import dns.flags
import dns.rcode
import dns.rdatatype

from dnstest import query, ttl


def test_miss_then_hit(dd, bind):
    name = "miss-hit.example.test"
    mark = bind.mark()
    r1 = query.udp(dd.port, name)
    assert r1.rcode == dns.rcode.NOERROR, r1.text()
    assert query.addresses(r1) == {"192.0.2.1"}, r1.text()
    # the miss reached named exactly once
    assert bind.count(name, since=mark) == 1

    r2 = query.udp(dd.port, name)
    assert query.addresses(r2) == {"192.0.2.1"}, r2.text()
    # the hit did not reach named
    assert bind.count(name, since=mark) == 1

    # one cache for both transports: a TCP client gets the cached entry too
    r3 = query.tcp(dd.port, name)
    assert query.addresses(r3) == {"192.0.2.1"}, r3.text()
    assert bind.count(name, since=mark) == 1


def test_ttl_decremented_while_cached(dd, bind):
    name = "ttl.example.test"   # 300 IN A 192.0.2.2
    mark = bind.mark()
    r1 = query.udp(dd.port, name)
    a1 = query.find(r1.msg, "answer", name + ".", "A")
    assert a1 is not None, r1.text()
    # fresh from upstream: 300 less at most the round trip (see ttl.py)
    ttl.assert_ttl(a1, 300, ttl.miss_age(r1))

    time.sleep(2)
    r2 = query.udp(dd.port, name)
    a2 = query.find(r2.msg, "answer", name + ".", "A")
    assert a2 is not None, r2.text()
    # cached about 2 s: 300 - ceil(2.0x) .. 300 - floor(2.0x) = 297 .. 298
    age = ttl.cache_age(r1, r2)
    ttl.assert_ttl(a2, 300, age)
    assert bind.count(name, since=mark) == 1


def test_cname_chain_whole_and_each_ttl_decremented(dd, bind):
    # chain-a 300 CNAME chain-b, chain-b 200 CNAME chain-c, chain-c 100 A
    chain = [("chain-a.example.test.", "CNAME", 300, "chain-b.example.test."),
             ("chain-b.example.test.", "CNAME", 200, "chain-c.example.test."),
             ("chain-c.example.test.", "A", 100, "192.0.2.5")]
    mark = bind.mark()

    def check(r, age):
        assert r.rcode == dns.rcode.NOERROR, r.text()
        assert len(r.msg.answer) == 3, r.text()
        for owner, rdtype, orig, data in chain:
            rrset = query.find(r.msg, "answer", owner, rdtype)
            assert rrset is not None, f"{owner} {rdtype} missing:\n{r.text()}"
            assert [rd.to_text() for rd in rrset] == [data], r.text()
            ttl.assert_ttl(rrset, orig, age, f"{owner} {rdtype}")

    r1 = query.udp(dd.port, "chain-a.example.test")
    check(r1, ttl.miss_age(r1))
    time.sleep(2)
    r2 = query.udp(dd.port, "chain-a.example.test")
    # each link its own TTL less ~2 s: 297..298, 197..198, 97..98
    check(r2, ttl.cache_age(r1, r2))
    # named gave the whole chain to the one query; nothing else was needed
    assert bind.count("chain-a.example.test", since=mark) == 1
    assert bind.count("chain-b.example.test", since=mark) == 0
    assert bind.count("chain-c.example.test", since=mark) == 0


def test_srv_with_additional_addresses(dd, bind):
    name = "_http._tcp.srv.example.test"
    target = "target.srv.example.test."
    mark = bind.mark()
    for _ in range(2):     # the miss, then the hit
        r = query.udp(dd.port, name, "SRV")
        assert r.rcode == dns.rcode.NOERROR, r.text()
        srv = query.find(r.msg, "answer", name + ".", "SRV")
        assert srv is not None, r.text()
        assert [rd.to_text() for rd in srv] == [f"0 5 8080 {target}"]
        a = query.find(r.msg, "additional", target, "A")
        aaaa = query.find(r.msg, "additional", target, "AAAA")
        assert a is not None and [rd.address for rd in a] == ["192.0.2.6"], \
            r.text()
        assert aaaa is not None and \
            [rd.address for rd in aaaa] == ["2001:db8::6"], r.text()
    assert bind.count(name, since=mark) == 1


def test_qname_case_echoed_on_miss(dd, bind):
    q = query.make_query("CaSe-MiSs.ExAmPle.TeSt")
    r = query.exchange_udp(dd.port, q)
    assert r.rcode == dns.rcode.NOERROR, r.text()
    # RFC 1035 §7.3 / RFC 5452 §9.1: the question comes back octet for
    # octet, case included
    assert query.question_wire(r.wire) == query.question_wire(q.to_wire())
    assert query.addresses(r) == {"192.0.2.3"}, r.text()


def test_qname_case_echoed_from_cache(dd, bind):
    mark = bind.mark()
    r = query.udp(dd.port, "case-hit.example.test")
    assert query.addresses(r) == {"192.0.2.4"}, r.text()
    for text, exchange in (("CaSe-HiT.eXaMpLe.TeSt", query.exchange_udp),
                           ("CASE-HIT.EXAMPLE.TEST", query.exchange_tcp)):
        q = query.make_query(text)
        r = exchange(dd.port, q)
        assert query.question_wire(r.wire) == \
            query.question_wire(q.to_wire()), r.text()
        assert query.addresses(r) == {"192.0.2.4"}, r.text()
    # the other cases were hits: one query upstream in all
    assert bind.count("case-hit.example.test", since=mark) == 1


def test_answer_id_and_flags(dd):
    q = query.make_query("miss-hit.example.test", msg_id=0xbeef)
    r = query.exchange_udp(dd.port, q)
    # RFC 1035 §4.1.1: the client's ID, QR set, RD copied
    assert r.msg.id == 0xbeef
    assert r.msg.flags & dns.flags.QR and r.msg.flags & dns.flags.RD
    assert r.msg.question[0].rdtype == dns.rdatatype.A

