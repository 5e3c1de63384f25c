"""Zone files for the tests that start their own named (RFC 1035 §5 master
format), with every TTL written on its record so that a test's arithmetic
can cite it."""


def zone(origin, ttl, records, serial=1, minimum=None):
    """A zone whose SOA, NS and every record of `records` (lines of
    "owner type rdata", relative owners) have TTL ttl. The SOA MINIMUM is
    minimum (default ttl), so the negative TTL of RFC 2308 §5 is
    min(SOA TTL, MINIMUM) = min(ttl, minimum)."""
    minimum = ttl if minimum is None else minimum
    lines = [f"$TTL {ttl}",
             f"@ {ttl} IN SOA ns.{origin}. hostmaster.{origin}. {serial} "
             f"3600 600 86400 {minimum}",
             f"@ {ttl} IN NS ns",
             f"ns {ttl} IN A 127.0.0.1"]
    for rec in records:
        owner, rest = rec.split(None, 1)
        lines.append(f"{owner} {ttl} IN {rest}")
    return "\n".join(lines) + "\n"
