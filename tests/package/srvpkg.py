"""The SRV library's packages in the package test: dnsdamper-srv, as
installed, finding a service of the test's zone through the installed
dnsdamper; a client built against libdnsdamper-srv-dev that runs with
libdnsdamper-srv0 alone.

The expected values come from RFC 2782 and dnsdamper-srv(1): priority 10
is tried before priority 20 whatever the weights (1 against 65535), and a
name whose one SRV record has target "." is decidedly not available
(exit 2, status "unavailable").
"""

import os
import socket
import subprocess
from pathlib import Path

from dnstest import srvcmd

RUNTIME = "libdnsdamper-srv0"
DEV = "libdnsdamper-srv-dev"
COMMAND_PACKAGE = "dnsdamper-srv"
PACKAGES = (RUNTIME, DEV, COMMAND_PACKAGE)
COMMAND = "/usr/bin/dnsdamper-srv"
SONAME = "libdnsdamper-srv.so.0"
SERVICE = "_pkgsvc._tcp.pkgtest."
ABSENT = "_absent._tcp.pkgtest."
PRIMARY = "primary.pkgtest."
BACKUP = "backup.pkgtest."
ADDRESS = "127.0.0.1"


def run(argv, timeout=60):
    """argv's CompletedProcess (text); an AssertionError naming its output
    if it exits non-zero."""
    r = subprocess.run(argv, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=timeout)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: exit {r.returncode}\n"
                             f"{r.stdout}{r.stderr}")
    return r


class Service:
    """Two TCP listeners on 127.0.0.1, at ports the kernel picks, published
    as SERVICE's primary (priority 10, weight 1) and backup (priority 20,
    weight 65535). Nobody accepts: the kernel completes the handshake,
    which is all --connect waits for, and the backlog holds the few
    connections the test makes."""

    def __init__(self):
        self.socks = []
        for _ in range(2):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.socks.append(s)
            s.bind((ADDRESS, 0))
            s.listen(16)
        self.primary, self.backup = (s.getsockname()[1] for s in self.socks)

    def zone(self, ttl):
        """The zone file lines that publish the service."""
        return [f"{SERVICE} {ttl} IN SRV 10 1 {self.primary} {PRIMARY}",
                f"{SERVICE} {ttl} IN SRV 20 65535 {self.backup} {BACKUP}",
                f"{PRIMARY} {ttl} IN A {ADDRESS}",
                f"{BACKUP} {ttl} IN A {ADDRESS}",
                f"{ABSENT} {ttl} IN SRV 0 0 0 ."]

    def close(self):
        for s in self.socks:
            s.close()
        self.socks = []


def srv(*argv):
    """The installed dnsdamper-srv with argv and no -s, so that it asks
    the first nameserver of /etc/resolv.conf: an srvcmd.Run."""
    cp = subprocess.run([COMMAND, *argv], capture_output=True, text=True,
                        stdin=subprocess.DEVNULL, timeout=60)
    return srvcmd.Run(list(argv), cp)


def lookup(service):
    """SERVICE through resolv.conf's resolver (dnsdamper, once enabled):
    the candidates in RFC 2782 order with their addresses, the first
    attempt connected to the primary; the "." name exits 2. A description
    of what it found."""
    r = srv("--json", "--connect", SERVICE)
    assert r.rc == srvcmd.FOUND and r.json["status"] == "ok", r
    assert r.order() == [(10, 1, service.primary, PRIMARY),
                         (20, 65535, service.backup, BACKUP)], r
    assert [c["addresses"] for c in r.json["candidates"]] == \
        [[ADDRESS], [ADDRESS]], r
    selected = {"target": PRIMARY, "address": ADDRESS,
                "port": service.primary}
    assert r.json["attempts"] == [{**selected, "result": "connected"}], r
    assert r.json["selected"] == selected, r

    absent = srv("--json", ABSENT)
    assert absent.rc == srvcmd.UNAVAILABLE, absent
    assert absent.json["status"] == "unavailable", absent
    return (f"{SERVICE} -> {PRIMARY}:{service.primary} then "
            f"{BACKUP}:{service.backup}, connected to the primary; "
            f"{ABSENT} not available (exit 2)")


def runtime_library():
    """The path of the SONAME link libdnsdamper-srv0 installed, checked to
    name the library file of that SONAME."""
    listed = run(["dpkg", "-L", RUNTIME]).stdout.splitlines()
    links = [p for p in listed if Path(p).name == SONAME]
    assert len(links) == 1, listed
    dynamic = run(["readelf", "-d", links[0]]).stdout
    assert f"Library soname: [{SONAME}]" in dynamic, dynamic
    return Path(links[0])


def build_consumers(top, work):
    """tests/install/consumer.c built against libdnsdamper-srv-dev, with
    pkg-config as its users would, and once more with the static library
    (ldns still shared); both run. The dynamic one's path."""
    source = str(top / "tests" / "install" / "consumer.c")
    flags = run(["pkg-config", "--cflags", "--libs",
                 "dnsdamper-srv"]).stdout.split()
    dynamic = work / "consumer"
    run(["cc", "-o", str(dynamic), source, *flags])
    libdir = run(["pkg-config", "--variable=libdir",
                  "dnsdamper-srv"]).stdout.strip()
    static = work / "consumer-static"
    run(["cc", "-o", str(static), source,
         *run(["pkg-config", "--cflags", "dnsdamper-srv"]).stdout.split(),
         f"{libdir}/libdnsdamper-srv.a",
         *run(["pkg-config", "--libs", "ldns"]).stdout.split()])
    assert SONAME not in run(["readelf", "-d", str(static)]).stdout
    for program in (dynamic, static):
        out = run([str(program)]).stdout
        assert out == "consumer: primary.example. then backup.example.\n", \
            out
    return dynamic


def runs_with_runtime_only(consumer, library):
    """With libdnsdamper-srv-dev and dnsdamper-srv removed, the consumer
    still loads the library through its SONAME, from libdnsdamper-srv0's
    file, and runs."""
    for path in ("/usr/include/dnsdamper", COMMAND, library.with_name(
            "libdnsdamper-srv.so"), library.with_name("libdnsdamper-srv.a")):
        assert not Path(path).exists(), f"{path} left after removal"
    needed = run(["readelf", "-d", str(consumer)]).stdout
    assert f"Shared library: [{SONAME}]" in needed, needed
    ldd = run(["ldd", str(consumer)]).stdout
    found = [line.split()[2] for line in ldd.splitlines()
             if line.split()[:2] == [SONAME, "=>"]]
    # /lib is /usr/lib on a merged-/usr system: compare the files
    assert len(found) == 1 and \
        os.path.samefile(found[0], library), ldd
    run([str(consumer)])


def removed(library):
    """After removal: the library is gone, and the dynamic linker's cache
    no longer names it."""
    assert not library.exists(), f"{library} left after removal"
    cache = run(["ldconfig", "-p"]).stdout
    assert SONAME not in cache, cache
