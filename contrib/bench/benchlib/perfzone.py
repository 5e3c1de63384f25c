"""The zone contrib/bench/perf and instructions ask, perf.test, and their
questions: the hit set (a third each A, AAAA with two addresses, SRV with
glue), new names the zone's wildcards answer, and a Zipf mix of both."""

import random

ZONE = "perf.test"
TTL = 86400             # s: nothing expires during a run


def zone_text(names):
    """Question k of the hit set: hK A (k % 3 == 0), hK AAAA (1), or
    _sK._tcp SRV -> hK with hK's A and AAAA as glue (2); new names under
    m. answer the same way through wildcards (RFC 4592). Addresses are
    data from the benchmarking and documentation ranges (RFC 2544,
    RFC 3849); nothing is ever sent to them."""
    lines = [f"$TTL {TTL}",
             f"@ IN SOA ns.{ZONE}. hostmaster.{ZONE}. 1 3600 600 86400 "
             f"{TTL}", "@ IN NS ns", "ns IN A 127.0.0.1",
             "t IN A 198.19.255.1", "t IN AAAA 2001:db8:ffff::1",
             "*.m IN A 198.19.255.2",
             "*.m IN AAAA 2001:db8:ffff::2", "*.m IN AAAA 2001:db8:ffff::3",
             "*.m IN SRV 10 50 8080 t"]
    for k in range(names):
        a = f"198.{18 + (k >> 16 & 1)}.{(k >> 8) & 255}.{k & 255}"
        if k % 3 != 1:
            lines.append(f"h{k} IN A {a}")
        if k % 3 != 0:
            six = f"2001:db8::{k >> 16:x}:{k & 0xffff:x}"
            lines.append(f"h{k} IN AAAA {six}:1")
            lines.append(f"h{k} IN AAAA {six}:2")
        if k % 3 == 2:
            lines.append(f"_s{k}._tcp IN SRV 10 50 8080 h{k}")
    return "\n".join(lines) + "\n"


def hit_question(k):
    """Question k of the hit set, as a dnsperf line (`qname TYPE`)."""
    return (f"h{k}.{ZONE} A", f"h{k}.{ZONE} AAAA",
            f"_s{k}._tcp.{ZONE} SRV")[k % 3]


def new_question(prefix, j):
    """The j-th new name of a workload: the wildcards answer it."""
    return f"{prefix}{j}.m.{ZONE} {('A', 'AAAA', 'SRV')[j % 3]}"


def mix_lines(names, count, miss_share, s, seed):
    """count questions: each a new name with probability miss_share, else
    a hit question drawn with P(rank r) ~ 1 / r^s, ranks shuffled over the
    questions (so that no qtype is hotter than another)."""
    rng = random.Random(seed)
    ranked = list(range(names))
    rng.shuffle(ranked)
    cum, total = [], 0.0
    for r in range(1, names + 1):
        total += r ** -s
        cum.append(total)
    draws = iter(rng.choices(ranked, cum_weights=cum, k=count))
    fresh = 0
    for _ in range(count):
        if rng.random() < miss_share:
            yield new_question("x", fresh)
            fresh += 1
        else:
            yield hit_question(next(draws))
