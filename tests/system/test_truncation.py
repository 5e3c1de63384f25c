"""Answers larger than a UDP message may be (RFC 1035 §4.2.1, RFC 6891
§6.2.5, RFC 7766 §5).

big.big.test has 16 TXT records of 100 octets (zones/big.test.zone): the
RRset alone is at least 16 * (2 + 10 + 1 + 100) = 1808 octets, the whole
answer at least 12 + 18 (question) + 1808 + 11 (OPT) = 1849. That is more
than 512, more than 1232, and less than 4096.

The session named never sends more than 1232 octets over UDP (max-udp-size),
so it answers the daemon's UDP query with TC=1 and the daemon has to ask
again over TCP; named's query log shows that TCP query. The daemon then
answers each client within that client's limit: 512 without EDNS, the
smaller of the client's advertised size and our edns-buffer-size with EDNS,
65535 over TCP; where the answer
does not fit it sets TC=1 and carries the whole records that fit, never
part of one, nor any of a section after one that did not fit (RFC 2181
§9): a client that asks again over TCP gets the rest, one that never does
(musl's resolver before 1.2.4) still gets an answer it can use.

many.big.test has 60 A records (192.0.2.0-59): header 12, question 15 + 4,
each A 2 (compressed owner) + 10 + 4 = 16 octets: 31 + 960 = 991 octets,
more than 512, so a client without EDNS gets (512 - 31) // 16 = 30 of them
in 31 + 30 * 16 = 511 octets; but named compresses names case-sensitively,
and the daemon asks it in 0x20's mixed case, so unless the case drawn is
named's own the first record's owner is written out (15 octets, not 2) and
points no record to the question: then 1 + (512 - 31 - 29) // 16 = 29 fit
in 31 + 29 + 28 * 16 = 508 octets. The tests read which from the whole
answer (over TCP, from the same cached message) and work the count out
from the sizes of its records.
"""

import ctypes
import os
import shutil
import socket
import subprocess
import threading

import dns.rcode
import dns.rdatatype
import pytest

from dnstest.daemon import Forward
from dnstest.sdnotify import wrapper
from dnstest import ports, proc, query

NAME = "big.big.test"
TXT = {f"big-{i:02d}-{'x' * 93}".encode() for i in range(16)}
# header 12, question "\3big\3big\4test\0" 14 + QTYPE, QCLASS 4
TXT_QEND = 12 + 14 + 4
OPT = 11

MANY = "many.big.test"
MANY_A = [f"192.0.2.{i}" for i in range(60)]
# header 12, question "\4many\3big\4test\0" 15 + 4
MANY_QEND = 12 + 15 + 4


def _record_ends(wire, qend, n):
    """Where each of the n records from qend on ends (RFC 1035 §4.1.3):
    its owner (labels up to the root, or up to a 2-octet pointer), type,
    class, TTL, RDLENGTH (10 octets), and RDLENGTH octets of rdata."""
    ends, at = [], qend
    for _ in range(n):
        while wire[at] != 0 and wire[at] < 0xc0:
            at += 1 + wire[at]
        at += 2 if wire[at] >= 0xc0 else 1
        at += 10 + int.from_bytes(wire[at + 8:at + 10], "big")
        ends.append(at)
    return ends


def _fit(whole, qend, room):
    """How many of whole's answer records fit, whole, in room octets of a
    message, and where the last of them ends (RFC 2181 §9)."""
    ends = _record_ends(whole.wire, qend,
                        int.from_bytes(whole.wire[6:8], "big"))
    kept = [e for e in ends if e <= room]
    return len(kept), kept[-1] if kept else qend


def _txt_strings(r):
    rrset = query.find(r.msg, "answer", NAME + ".", "TXT")
    return set() if rrset is None else {b"".join(rd.strings) for rd in rrset}


def _assert_whole(r):
    assert r.rcode == dns.rcode.NOERROR, r.text()
    assert not r.tc, r.text()
    assert _txt_strings(r) == TXT, r.text()


def _assert_truncated_whole_records(r, limit, opt, whole):
    """TC=1 within limit, with as many whole TXT records as fit (RFC 2181
    §9), worked out from the records of the whole answer: each 2 + 10 +
    1 + 100 = 113 octets (the first 14 - 2 more if its owner is written
    out), in limit less the question and the OPT: the same octets as the
    whole answer's first records, and nothing else."""
    assert r.tc, f"no TC in a {len(r.wire)}-octet answer:\n{r.text()}"
    fit, end = _fit(whole, TXT_QEND, limit - opt)
    assert fit >= (limit - TXT_QEND - opt - 12) // 113
    assert r.wire[6:12] == bytes([0, fit, 0, 0, 0, opt // OPT]), \
        r.wire[4:12].hex()
    assert len(r.wire) == end + opt, (len(r.wire), end, opt)
    assert r.wire[TXT_QEND:end] == whole.wire[TXT_QEND:end]
    assert len(_txt_strings(r)) == fit and _txt_strings(r) <= TXT


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
    # edns-buffer-size 1232) = 1232 < 1849 octets: truncated, with
    # (1232 - 30 - 11) // 113 = 10 records (9 if the first is 12 longer)
    _assert_truncated_whole_records(r, 1232, OPT,
                                    query.tcp(dd.port, NAME, "TXT"))
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
    _assert_truncated_whole_records(r, 1232, OPT,
                                    query.tcp(dd.port, NAME, "TXT"))
    assert r.msg.edns == 0, r.text()   # an EDNS query gets an EDNS answer
    fetched = bind.count(NAME, since=mark)
    r = query.tcp(dd.port, NAME, "TXT")
    _assert_whole(r)
    # the TCP retry was answered from the cache
    assert bind.count(NAME, since=mark) == fetched


def test_no_edns_client_gets_tc_with_whole_records(dd, bind):
    mark = bind.mark()
    r = query.udp(dd.port, NAME, "TXT", edns=False)
    # 1808 octets of TXT alone > 512: (512 - 30) // 113 = 4 records
    _assert_truncated_whole_records(r, 512, 0,
                                    query.tcp(dd.port, NAME, "TXT"))
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


def _many_addresses(wire, n):
    """The addresses of the first n records of an answer to MANY, read
    from the wire: the last 4 octets of each A record."""
    ends = _record_ends(wire, MANY_QEND, n)
    for e in ends:
        # A, IN, TTL, RDLENGTH 4
        assert wire[e - 14:e - 10] == b"\x00\x01\x00\x01" and \
            wire[e - 6:e - 4] == b"\x00\x04", wire[e - 16:e].hex()
    return [socket.inet_ntoa(wire[e - 4:e]) for e in ends]


def _many_fit(whole):
    """How many of MANY's records fit in 512 octets (RFC 1035 §4.2.1),
    and where the last ends: 30 (511) or 29 (508), module docstring."""
    fit, end = _fit(whole, MANY_QEND, 512)
    assert (fit, end) in ((30, 511), (29, 508)), (fit, end)
    return fit, end


def test_no_edns_client_gets_the_records_that_fit(dd):
    """RFC 2181 §9 on the wire: 60 A records (991 octets) to a client
    without EDNS: TC=1, ANCOUNT 30 (or 29) and nothing else, 511 (or 508)
    octets, the first records of the whole answer as they are over TCP."""
    r = query.udp(dd.port, MANY, edns=False)
    assert r.tc, r.text()
    whole = query.tcp(dd.port, MANY, edns=False)
    assert not whole.tc and whole.wire[6:8] == bytes([0, 60]), whole.text()
    every = _many_addresses(whole.wire, 60)
    assert sorted(every) == sorted(MANY_A)
    fit, end = _many_fit(whole)
    wire = r.wire
    assert len(wire) == end, len(wire)
    # QDCOUNT 1, ANCOUNT fit, NSCOUNT 0, ARCOUNT 0 (no OPT: RFC 6891 §7)
    assert wire[4:12] == bytes([0, 1, 0, fit, 0, 0, 0, 0]), \
        wire[4:12].hex()
    assert r.msg.edns == -1, r.text()
    assert wire[MANY_QEND:] == whole.wire[MANY_QEND:end]
    got = _many_addresses(wire, fit)
    assert query.addresses(r) == set(got)
    assert got == every[:fit]
    # with EDNS at 1232 the 991 octets and the OPT fit: not truncated
    r = query.udp(dd.port, MANY, payload=1232)
    assert not r.tc and query.addresses(r) == set(MANY_A), r.text()


MUSL_CLIENT = r"""
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int
main(int argc, char **argv)
{
	struct addrinfo hints, *res, *ai;
	struct sockaddr_in *sin;
	char buf[INET_ADDRSTRLEN];
	struct hostent *h;
	int err, i;

	if (argc != 2)
		return 2;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_DGRAM;
	if ((err = getaddrinfo(argv[1], NULL, &hints, &res)) != 0) {
		fprintf(stderr, "getaddrinfo: %s\n", gai_strerror(err));
		return 1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		sin = (struct sockaddr_in *)(void *)ai->ai_addr;
		printf("getaddrinfo %s\n", inet_ntop(AF_INET, &sin->sin_addr,
		    buf, sizeof(buf)));
	}
	freeaddrinfo(res);
	if ((h = gethostbyname(argv[1])) == NULL) {
		fprintf(stderr, "gethostbyname: %s\n", hstrerror(h_errno));
		return 1;
	}
	for (i = 0; h->h_addr_list[i] != NULL; i++)
		printf("gethostbyname %s\n", inet_ntop(AF_INET,
		    h->h_addr_list[i], buf, sizeof(buf)));
	return 0;
}
"""

CLONE_NEWNET = 0x40000000   # <sched.h>


def _socket_in_netns(pid, kind, addr):
    """A socket of kind bound to addr in the network namespace of process
    pid: made by a thread of ours that enters that namespace (setns(2)
    changes the calling thread's alone) and goes back. A socket stays in
    the namespace it was made in, whoever holds it."""
    libc = ctypes.CDLL(None, use_errno=True)
    got = {}

    def run():
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        other = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        try:
            if libc.setns(other, CLONE_NEWNET) != 0:
                got["error"] = OSError(ctypes.get_errno(), "setns")
                return
            try:
                s = socket.socket(socket.AF_INET, kind)
                s.bind(addr)
                got["socket"] = s
            except OSError as e:
                got["error"] = e
            finally:
                if libc.setns(own, CLONE_NEWNET) != 0:
                    got["error"] = OSError(ctypes.get_errno(), "setns back")
        finally:
            os.close(own)
            os.close(other)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in got:
        got.pop("socket", socket.socket()).close()
        raise got["error"]
    return got["socket"]


@pytest.mark.skipif(shutil.which("musl-gcc") is None,
                    reason="musl-gcc (musl-tools) is not installed")
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None
                    or shutil.which("nsenter") is None
                    or shutil.which("ip") is None,
                    reason="namespaces of its own need root")
def test_musl_client_uses_the_truncated_answer(dnsdamper, bind, tmp_path):
    """musl's resolver before 1.2.4 never asks again over TCP: it uses the
    records of a truncated UDP answer, or finds none ("Name does not
    resolve"). A musl-linked program asks MANY through getaddrinfo and
    gethostbyname (no EDNS: 512 octets) and gets the 30 (or 29) records
    that fit (module docstring), the first of the whole answer.

    musl reads /etc/resolv.conf alone and asks port 53: the program runs
    in namespaces of its own (unshare -n -m), where /etc/resolv.conf is a
    bind mount naming 127.0.0.1 and 127.0.0.1:53 is a UDP socket made in
    that namespace and passed to the daemon by socket activation (with a
    UDP and a TCP socket on a free port of ours, to reach it from here);
    the daemon itself runs here, next to named."""
    client = tmp_path / "musl-client"
    src = tmp_path / "musl-client.c"
    src.write_text(MUSL_CLIENT)
    subprocess.run(["musl-gcc", "-O", "-o", str(client), str(src)],
                   check=True, timeout=60)
    resolv = tmp_path / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\n")
    holder = subprocess.Popen(
        ["unshare", "-n", "-m", "--propagation", "private", "sh", "-c",
         'ip link set lo up && mount --bind "$0" /etc/resolv.conf && '
         'echo up && exec sleep 60', str(resolv)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    socks = []
    try:
        assert holder.stdout.readline() == "up\n", "namespaces not made"
        socks.append(_socket_in_netns(holder.pid, socket.SOCK_DGRAM,
                                      (ports.LOOPBACK, 53)))
        port = ports.free_port()
        socks.append(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        socks[-1].bind((ports.LOOPBACK, port))
        socks.append(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        socks[-1].bind((ports.LOOPBACK, port))
        socks[-1].listen(16)
        fds = [s.fileno() for s in socks]
        d = dnsdamper([Forward(".", [bind])], start=False, port=port,
                      env={"LISTEN_FDS": str(len(fds)),
                           "LISTEN_FDNAMES": ":".join(["dns"] * len(fds))},
                      wrapper=wrapper(pid_env=["LISTEN_PID"], fds=fds),
                      pass_fds=fds)
        d.start()
        for s in socks:
            s.close()
        socks = []
        r = subprocess.run(["nsenter", "-t", str(holder.pid), "-n", "-m",
                            str(client), MANY],
                           stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        whole = query.tcp(d.port, MANY, edns=False)
        fit, _ = _many_fit(whole)
        first = _many_addresses(whole.wire, fit)
        for how in ("getaddrinfo", "gethostbyname"):
            got = [line.split()[1] for line in r.stdout.splitlines()
                   if line.split()[0] == how]
            assert sorted(got) == sorted(first), (how, r.stdout)
    finally:
        for s in socks:
            s.close()
        proc.stop(holder)
        holder.stdout.close()
