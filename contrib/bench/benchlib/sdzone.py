"""The zone the service-discovery benchmarks ask: bench.test with
`_svcK._tcp SRV 10 50 8080 hostK` and `hostK A 127.0.X.Y`, both with one
short TTL so that names expire several times in a run."""

ZONE = "bench.test"


def zone_text(services, ttl):
    """bench.test: _svcK._tcp SRV 10 50 8080 hostK, hostK A 127.0.1.K+1.
    The addresses are data only; nothing is ever sent to them."""
    lines = [f"$TTL {ttl}",
             f"@ 3600 IN SOA ns.{ZONE}. hostmaster.{ZONE}. 1 3600 600 "
             f"86400 {ttl}",
             "@ 3600 IN NS ns",
             "ns 3600 IN A 127.0.0.1"]
    for k in range(services):
        lines.append(f"_svc{k}._tcp {ttl} IN SRV 10 50 8080 host{k}")
        lines.append(f"host{k} {ttl} IN A {host_addr(k)}")
    return "\n".join(lines) + "\n"


def host_addr(k):
    return f"127.0.{1 + k // 250}.{1 + k % 250}"


def srv_name(k):
    return f"_svc{k}._tcp.{ZONE}."


def host_name(k):
    return f"host{k}.{ZONE}."
