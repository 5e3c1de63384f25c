"""Answers larger than a UDP message may be (RFC 1035 §4.2.1, RFC 6891
§6.2.5, RFC 7766 §5).

big.big.test has 16 TXT records of 100 octets (zones/big.test.zone): the
RRset alone is 16 * (2 + 10 + 1 + 100) = 1808 octets, the whole answer
12 + 18 (question) + 1808 + 11 (OPT) = 1849. That is more than 512, more than
1232, and less than 4096.

The session named never sends more than 1232 octets over UDP (max-udp-size),
so it answers the daemon's UDP query with TC=1 and the daemon has to ask
again over TCP; named's query log shows that TCP query. The daemon then
answers each client within that client's limit: 512 without EDNS, the
smaller of the client's advertised size and our edns-buffer-size with EDNS,
65535 over TCP; where the answer
does not fit it sets TC=1 and leaves out whole RRsets, never part of one
(RFC 2181 §9).
"""

import dns.rcode
import dns.rdatatype

from dnstest.daemon import Forward
from dnstest import query

NAME = "big.big.test"
TXT = {f"big-{i:02d}-{'x' * 93}".encode() for i in range(16)}


def _txt_strings(r):
    rrset = query.find(r.msg, "answer", NAME + ".", "TXT")
    return set() if rrset is None else {b"".join(rd.strings) for rd in rrset}


def _assert_whole(r):
    assert r.rcode == dns.rcode.NOERROR, r.text()
    assert not r.tc, r.text()
    assert _txt_strings(r) == TXT, r.text()


def _assert_truncated_without_partial_rrset(r, limit):
    assert r.tc, f"no TC in a {len(r.wire)}-octet answer:\n{r.text()}"
    assert len(r.wire) <= limit, f"{len(r.wire)} octets > {limit}"
    # the TXT RRset (1808 octets) cannot fit, so none of it may be there
    got = _txt_strings(r)
    assert got == set(), f"partial RRset ({len(got)} of 16):\n{r.text()}"


def _fetched_over_tcp(bind, mark):
    return bind.count(NAME, "TXT", since=mark, tcp=True)


def test_tcp_client_gets_whole_answer(dd, bind):
    mark = bind.mark()
    r = query.tcp(dd.port, NAME, "TXT")
    _assert_whole(r)
    assert _fetched_over_tcp(bind, mark) >= 1


def test_edns_4096_client_limited_by_our_buffer_size(dd, bind, dnsdamper):
    mark = bind.mark()
    r = query.udp(dd.port, NAME, "TXT", payload=4096)
    # RFC 6891 §6.2.5: the answer fits min(client 4096, our
    # edns-buffer-size 1232) = 1232 < 1849 octets: truncated
    _assert_truncated_without_partial_rrset(r, 1232)
    assert _fetched_over_tcp(bind, mark) >= 1
    # with edns-buffer-size 4096 on our side, min(4096, 4096) holds it all
    big = dnsdamper([Forward(".", [bind])], extra=["edns-buffer-size 4096"])
    r = query.udp(big.port, NAME, "TXT", payload=4096)
    _assert_whole(r)
    assert 1232 < len(r.wire) <= 4096


def test_edns_1232_client_gets_tc_then_tcp(dd, bind):
    mark = bind.mark()
    r = query.udp(dd.port, NAME, "TXT", payload=1232)
    # 1849 > 1232
    _assert_truncated_without_partial_rrset(r, 1232)
    assert r.msg.edns == 0, r.text()   # an EDNS query gets an EDNS answer
    fetched = bind.count(NAME, since=mark)
    r = query.tcp(dd.port, NAME, "TXT")
    _assert_whole(r)
    # the TCP retry was answered from the cache
    assert bind.count(NAME, since=mark) == fetched


def test_no_edns_client_gets_tc_without_partial_rrset(dd, bind):
    mark = bind.mark()
    r = query.udp(dd.port, NAME, "TXT", edns=False)
    # 1808 octets of TXT alone > 512
    _assert_truncated_without_partial_rrset(r, 512)
    # RFC 6891 §7: no OPT in the answer to a query without one
    assert r.msg.edns == -1, r.text()
    assert _fetched_over_tcp(bind, mark) >= 1
    fetched = bind.count(NAME, since=mark)
    r = query.tcp(dd.port, NAME, "TXT", edns=False)
    _assert_whole(r)
    assert bind.count(NAME, since=mark) == fetched


def test_small_answer_not_truncated_without_edns(dd):
    r = query.udp(dd.port, "tcp-plain.example.test", edns=False)
    assert not r.tc and query.addresses(r) == {"192.0.2.14"}, r.text()
    assert r.msg.question[0].rdtype == dns.rdatatype.A
