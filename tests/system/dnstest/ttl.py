"""The RFC arithmetic the tests expect, kept apart so each test can show it.

RFC 1035 §3.2.1 and RFC 2181 §8: a cached RR's TTL is what the upstream
gave, less the whole seconds it has spent in the cache. The daemon keeps
time in ms and may round the age either way, and the test knows the age only
within an interval, so the TTL it may see is an interval too.
"""

import math


def cache_age(first, later):
    """(min, max) seconds the entry cached by reply `first` had spent in the
    cache when reply `later` was built.

    The entry was stored between first.sent and first.received; the later
    answer was built between later.sent and later.received. So the age lies
    in [later.sent - first.received, later.received - first.sent].
    """
    return (max(0.0, later.sent - first.received),
            later.received - first.sent)


def miss_age(reply):
    """(min, max) age for an answer straight from upstream: at most the
    round trip of the query itself."""
    return 0.0, reply.received - reply.sent


def decremented(ttl, age):
    """(low, high) TTL allowed for an RR of original TTL ttl whose age lies
    in age = (min, max) seconds: ttl - ceil(max) .. ttl - floor(min), and
    never below 0 (RFC 2181 §8).

    Example: TTL 300, stored, then asked again 2.004 to 2.011 s later:
    300 - ceil(2.011) = 297 .. 300 - floor(2.004) = 298.
    """
    lo = ttl - math.ceil(age[1])
    hi = ttl - math.floor(age[0])
    return max(0, lo), max(0, hi)


def negative_ttl(soa_ttl, soa_minimum):
    """RFC 2308 §5: a negative answer is cached for min(SOA TTL, SOA
    MINIMUM), and the SOA returned with it carries that TTL (§3)."""
    return min(soa_ttl, soa_minimum)


def assert_ttl(rrset, ttl, age, what=""):
    lo, hi = decremented(ttl, age)
    assert lo <= rrset.ttl <= hi, (
        f"{what or rrset.name} TTL {rrset.ttl} not in [{lo}, {hi}] "
        f"(original {ttl}, age {age[0]:.3f}..{age[1]:.3f} s)")
