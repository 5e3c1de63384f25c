"""Negative answers (RFC 2308): NXDOMAIN and NODATA each carry the zone's
SOA in the authority section, with TTL min(SOA TTL, SOA MINIMUM) (§3, §5),
counted down while cached like any other TTL, and are answered from the
cache without asking named again.

Two zones make the minimum fall on each side:
  neg600.test  SOA TTL 600, MINIMUM 120  ->  min(600, 120) = 120
  neg90.test   SOA TTL  90, MINIMUM 900  ->  min(90, 900)  =  90
(zones/neg600.test.zone, zones/neg90.test.zone)
"""

import time

import dns.rcode
import pytest

from dnstest import query, ttl

ZONES = [
    # zone, SOA TTL, SOA MINIMUM
    ("neg600.test", 600, 120),
    ("neg90.test", 90, 900),
]

KINDS = [
    # kind, name under the zone, qtype, rcode
    ("nxdomain", "nx-cached", "A", dns.rcode.NXDOMAIN),
    # `nodata` has an A and no TXT: NOERROR with an empty answer
    ("nodata", "nodata", "TXT", dns.rcode.NOERROR),
]


@pytest.mark.parametrize("kind,label,qtype,rcode", KINDS,
                         ids=[k[0] for k in KINDS])
@pytest.mark.parametrize("zone,soa_ttl,minimum", ZONES,
                         ids=[z[0] for z in ZONES])
def test_negative_answer_soa_ttl(dd, bind, zone, soa_ttl, minimum, kind,
                                 label, qtype, rcode):
    qname = f"{label}.{zone}"
    negative = ttl.negative_ttl(soa_ttl, minimum)   # 120 or 90, see above
    mark = bind.mark()

    def check(r, age):
        assert r.rcode == rcode, r.text()
        assert not r.msg.answer, r.text()
        soa = query.find(r.msg, "authority", zone + ".", "SOA")
        assert soa is not None, f"no SOA of {zone} in authority:\n{r.text()}"
        # the SOA's own data is passed on unchanged
        assert soa[0].minimum == minimum and soa[0].serial == 1, r.text()
        ttl.assert_ttl(soa, negative, age, f"SOA of {zone}")

    # the miss: min(SOA TTL, MINIMUM) less at most the round trip
    r1 = query.udp(dd.port, qname, qtype)
    check(r1, ttl.miss_age(r1))
    assert bind.count(qname, qtype, since=mark) == 1

    time.sleep(2)
    # the hit, about 2 s later: 120 -> 117..118, 90 -> 87..88
    r2 = query.udp(dd.port, qname, qtype)
    check(r2, ttl.cache_age(r1, r2))
    assert bind.count(qname, qtype, since=mark) == 1
