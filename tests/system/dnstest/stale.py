"""Stale answers (RFC 8767) and their Extended DNS Error (RFC 8914), as the
tests recognise them.

RFC 8767 §4: every record of a stale answer carries the stale TTL
(stale-answer-ttl, 30 s by default as §4 recommends). RFC 8914 §4.4: EDE
info-code 3, "Stale Answer", marks it, for a client that sent an OPT
record; a client that did not gets no OPT record at all (RFC 6891 §7).
"""

import dns.edns

EDE_OPTION = 15         # RFC 8914 §2: the EDNS option code of EDE
EDE_STALE_ANSWER = 3    # RFC 8914 §4.4


def ede_codes(reply):
    """The EDE info-codes in reply's OPT record (empty without one)."""
    return [o.code for o in reply.msg.options
            if o.otype == dns.edns.OptionType.EDE]


def ttls(reply):
    """(section, owner, type, TTL) of every record of reply but the OPT."""
    out = []
    for section in ("answer", "authority", "additional"):
        for rrset in getattr(reply.msg, section):
            out.append((section, rrset.name.to_text(), rrset.rdtype,
                        rrset.ttl))
    return out


def is_stale(reply):
    return EDE_STALE_ANSWER in ede_codes(reply)


def assert_stale(reply, stale_ttl, edns=True):
    """reply is a stale answer: every record's TTL is stale_ttl, and EDE 3
    is there if (and only if) the client sent EDNS."""
    bad = [t for t in ttls(reply) if t[3] != stale_ttl]
    assert ttls(reply) and not bad, (
        f"stale answer with TTLs other than {stale_ttl}: {bad}\n"
        f"{reply.text()}")
    if edns:
        assert ede_codes(reply) == [EDE_STALE_ANSWER], (
            f"no EDE {EDE_STALE_ANSWER} (Stale Answer):\n{reply.text()}")
    else:
        assert reply.msg.edns < 0, (
            f"an OPT record for a client that sent none:\n{reply.text()}")


def assert_fresh(reply, zone_ttl):
    """reply is not stale: no EDE 3, and every record's TTL lies in
    0..zone_ttl (what the zone gave, aged; RFC 2181 §8)."""
    assert not is_stale(reply), f"a stale answer:\n{reply.text()}"
    bad = [t for t in ttls(reply) if not 0 <= t[3] <= zone_ttl]
    assert not bad, (f"TTLs outside 0..{zone_ttl}: {bad}\n{reply.text()}")
