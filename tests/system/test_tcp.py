"""DNS over TCP (RFC 7766): one query per connection, several in turn on
one connection (§6.2.1), and pipelined queries answered in any order,
matched by ID (§6.2.1.1)."""

import dns.message

from dnstest import query, wire

PIPE = {0x5101: ("pipe1.example.test", "192.0.2.11"),
        0x5102: ("pipe2.example.test", "192.0.2.12"),
        0x5103: ("pipe3.example.test", "192.0.2.13")}


def test_tcp_query(dd):
    r = query.tcp(dd.port, "tcp-plain.example.test")
    assert query.addresses(r) == {"192.0.2.14"}, r.text()


def test_queries_in_turn_on_one_connection(dd):
    with wire.tcp_connect(dd.port) as s:
        reader = wire.TcpReader(s)
        for msg_id, (name, addr) in PIPE.items():
            q = query.make_query(name, msg_id=msg_id)
            s.sendall(wire.frame(q.to_wire()))
            raw = reader.read(3.0)
            assert raw is not None, f"no answer to {name} on the same " \
                f"connection (closed={reader.closed})"
            r = dns.message.from_wire(raw)
            assert r.id == msg_id, r.to_text()
            assert {rd.address for rrset in r.answer for rd in rrset} == \
                {addr}, r.to_text()


def test_pipelined_queries_answered_by_id(dd):
    # pipe2 cached first, so that its answer is ready before the others':
    # the daemon may (should) send it first
    query.udp(dd.port, "pipe2.example.test")
    qs = [query.make_query(name, msg_id=msg_id)
          for msg_id, (name, _) in PIPE.items()]
    got = {}
    with wire.tcp_connect(dd.port) as s:
        # all three in one write
        s.sendall(b"".join(wire.frame(q.to_wire()) for q in qs))
        reader = wire.TcpReader(s)
        for _ in range(3):
            raw = reader.read(5.0)
            if raw is None:
                break
            r = dns.message.from_wire(raw)
            query.TRANSCRIPT.append(f"--- pipelined answer\n{r.to_text()}")
            got[r.id] = r
    assert sorted(got) == sorted(PIPE), f"answers for IDs {sorted(got)}"
    for msg_id, (name, addr) in PIPE.items():
        r = got[msg_id]
        assert r.question[0].name.to_text() == name + ".", r.to_text()
        assert {rd.address for rrset in r.answer for rd in rrset} == {addr}
