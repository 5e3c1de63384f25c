"""What an upstream's answers may do wrong, injected by the faultproxy
between the daemon and named, and what the daemon must make of it.

lowercase  the upstream does not echo the 0x20 case of the question
           (draft-vixie-dnsext-dns0x20): asked again at once without
           0x20, and never with it again; logged once
spoof      a forged datagram just before the real answer (RFC 5452 §9.1):
           wrong ID, wrong question, or the qname's case flipped (an
           off-path forger who guessed ID and port but not the 0x20
           bits): ignored, the real answer is returned
truncate   the UDP answer comes back with TC=1 and no records: asked
           again over TCP (RFC 7766 §5), the whole answer returned
"""

import re

import dns.rcode
import pytest

from dnstest import query
from dnstest.daemon import Forward
from dnstest.zonetext import zone

ADDR = "192.0.2.140"
FORGED = "192.0.2.66"           # what the proxy's forgeries carry
CONF = ["upstream-timeout 100ms 300ms", "query-timeout 2s"]
# long names: the chance that 0x20 leaves every one of their letters in
# lower case (so that lowering changes nothing) is 2^-30 and less
NAMES = [f"{w}thirtylettersofzeroxtwenty.cs.test"
         for w in ("first", "second", "third")]


def _setup(new_bind, faultproxy, dnsdamper, bind, **faults):
    ns = new_bind("cs", {"cs.test": zone("cs.test", 300, [f"* A {ADDR}"])})
    fp = faultproxy(ns, **faults)
    d = dnsdamper([Forward("cs.test", [fp]), Forward(".", [bind])],
                  extra=CONF)
    return ns, fp, d


def _as_named_saw(ns, qname, since):
    """The qnames of the A queries for qname (any case) in named's log
    since position since, exactly as they arrived."""
    ns.sync()
    return [m.group(1) for m in re.finditer(r"\bquery: (\S+) IN A ",
                                            ns.log_text(since))
            if m.group(1).lower() == qname]


@pytest.mark.parametrize("lowercase", [True, False])
def test_upstream_that_lowers_the_question_still_answers(
        new_bind, faultproxy, dnsdamper, bind, lowercase):
    """lowercase: every name is answered; the daemon says once that the
    upstream does not preserve case; after that, names go to it in lower
    case only, asked once. Negative control (the proxy echoes the case):
    no such log, and named sees 0x20 mixed case."""
    ns, fp, d = _setup(new_bind, faultproxy, dnsdamper, bind,
                       lowercase=lowercase)
    marks = []
    for name in NAMES:
        marks.append(ns.mark())
        r = query.udp(d.port, name, timeout=2 + 3)
        assert r.rcode == dns.rcode.NOERROR, r.text()
        assert query.addresses(r) == {ADDR}, r.text()
    said = re.findall(rf"upstream 127\.0\.0\.1:{fp.port} does not preserve "
                      rf"the case of questions; not using 0x20 with it",
                      d.stderr())
    last = _as_named_saw(ns, NAMES[-1], marks[-1])
    if lowercase:
        assert fp.stats()["lowercased"] >= 1
        assert len(said) == 1, d.stderr()
        assert last == [NAMES[-1]], \
            f"named saw {last}, want one query in lower case"
    else:
        assert said == [], d.stderr()
        assert len(last) == 1 and last[0] != NAMES[-1], \
            f"named saw {last}, want one query in 0x20 mixed case"


@pytest.mark.parametrize("kind", ["id", "question", "case"])
def test_forged_answers_are_ignored(new_bind, faultproxy, dnsdamper, bind,
                                    kind):
    """Every UDP answer of the upstream is preceded by a forgery of this
    kind, carrying A 192.0.2.66. The client must get the real 192.0.2.140
    every time (RFC 5452 §9.1: accept only a response whose ID and
    question, 0x20 case included, match what was sent)."""
    ns, fp, d = _setup(new_bind, faultproxy, dnsdamper, bind,
                       spoof=1.0, spoof_kind=kind)
    got = []
    for name in NAMES:
        r = query.udp(d.port, name, timeout=2 + 3)
        got.append((r.rcode, query.addresses(r)))
    assert fp.stats()["spoofed"] >= len(NAMES)
    assert got == [(dns.rcode.NOERROR, {ADDR})] * len(NAMES), \
        f"forgery ({kind}) accepted: {got}\n--- daemon:\n{d.stderr()}"
    # named echoes the case it is sent: a forgery is no reason to think
    # otherwise, and to drop 0x20 for it
    assert "does not preserve the case" not in d.stderr(), d.stderr()


def test_truncated_answer_is_asked_again_over_tcp(new_bind, faultproxy,
                                                  dnsdamper, bind):
    ns, fp, d = _setup(new_bind, faultproxy, dnsdamper, bind, truncate=1.0)
    mark = ns.mark()
    r = query.udp(d.port, NAMES[0], timeout=2 + 3)
    assert r.rcode == dns.rcode.NOERROR and not r.tc, r.text()
    assert query.addresses(r) == {ADDR}, r.text()
    st = fp.stats()
    assert st["truncated"] >= 1 and st["received_tcp"] >= 1, st
    # named answered it over TCP (the UDP copy was the one truncated)
    assert ns.count(NAMES[0], "A", since=mark, tcp=True) == 1
