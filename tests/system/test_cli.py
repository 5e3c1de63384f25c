"""`dnsdamper -t -c FILE` checks a config: exit 0 if valid, else non-zero
with `file:line: message` on stderr for every error (all of them in one
run, dnsdamper.conf(5) "SYNTAX")."""

import os
import re
from pathlib import Path

import pytest

from dnstest import ports
from dnstest.daemon import binary_path, run_check


def _good_lines(tmp_path):
    resolv = tmp_path / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\n")
    return [
        "# every directive once",
        f"listen 127.0.0.1:{ports.free_port()}",
        "cache-size 64m",
        "max-ttl 1d",
        "min-ttl 0",
        "max-negative-ttl 1h",
        "failure-ttl 5s",
        "edns-buffer-size 1232",
        "upstream-timeout 50ms 2s",
        "query-timeout 4s",
        f"resolv-conf {resolv}",
        f"hosts-file {tmp_path / 'hosts'}",
        "local-zone corp.test static",
        "local-zone 10.in-addr.arpa transparent",
        "local-zone 168.192.in-addr.arpa nodefault",
        'local-data "www.corp.test. 300 IN A 10.1.2.3"',
        'local-data "txt.corp.test. TXT \\"two words\\" \\"and\\""',
        'local-data "_sip._udp.corp.test. 60 SRV 0 5 5060 sip.corp.test."',
        "forward corp.test { upstream 127.0.0.1:5301 127.0.0.1:5302  "
        "policy order }",
        "forward Multi.Line.TEST {",
        "\tupstream 127.0.0.1:5303   # a comment inside the block",
        "\tpolicy order",
        "}",
        "forward . { upstream 127.0.0.1:5304 }",
    ]


def _write(tmp_path, lines, name="test.conf"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _error_lines(path, stderr):
    """The line numbers named in `file:line:` diagnostics about path."""
    return {int(n) for n in re.findall(rf"{re.escape(path.name)}:(\d+):",
                                       stderr)}


def test_check_good_config(tmp_path):
    path = _write(tmp_path, _good_lines(tmp_path))
    r = run_check(binary_path(), path)
    assert r.returncode == 0, r.stderr
    assert not _error_lines(path, r.stderr), r.stderr


def test_check_good_config_with_resolv_conf_upstream(tmp_path):
    # `upstream resolv.conf` reads the file the test wrote (loopback only)
    lines = _good_lines(tmp_path)
    lines[-1] = "forward . { upstream resolv.conf }"
    path = _write(tmp_path, lines)
    r = run_check(binary_path(), path)
    assert r.returncode == 0, r.stderr


BAD = [
    # id, the bad line
    ("unknown-directive", "frobnicate yes"),
    ("bad-size", "cache-size 12q"),
    ("bad-duration", "max-ttl soon"),
    ("port-out-of-range", "listen 127.0.0.1:65536"),
    ("bad-upstream", "forward bad.test { upstream 127.0.0.1:notaport }"),
    ("bad-policy", "forward pol.test { upstream 127.0.0.1:5305  "
                   "policy sometimes }"),
    ("missing-argument", "query-timeout"),
    ("local-data-bad-rdata", 'local-data "www.corp.test. A 10.1.2"'),
    ("local-data-bad-type", 'local-data "www.corp.test. WHAT 1"'),
    ("local-data-class", 'local-data "www.corp.test. CH TXT x"'),
    ("local-data-unquoted", "local-data www.corp.test. A 10.1.2.3"),
    ("local-zone-type", "local-zone lab.test transparant"),
    ("local-zone-nodefault", "local-zone 11.in-addr.arpa nodefault"),
    ("hosts-file-relative", "hosts-file hosts"),
]


@pytest.mark.parametrize("bad", [b[1] for b in BAD], ids=[b[0] for b in BAD])
def test_check_bad_config_names_the_line(tmp_path, bad):
    lines = _good_lines(tmp_path)
    lines.insert(3, bad)
    bad_line = 4            # lines[3] is line 4 of the file
    path = _write(tmp_path, lines)
    r = run_check(binary_path(), path)
    assert r.returncode != 0, f"accepted {bad!r}:\n{r.stderr}"
    assert bad_line in _error_lines(path, r.stderr), r.stderr


def test_check_local_data_cname_clash(tmp_path):
    # RFC 2181 §10.1: a name with a CNAME has no other data; the later of
    # the two records is the error, and the message names the first
    lines = _good_lines(tmp_path)
    lines.insert(3, 'local-data "WWW.corp.test. 60 CNAME x.corp.test."')
    path = _write(tmp_path, lines)
    www = next(i for i, l in enumerate(lines, 1) if "www.corp.test. 300" in l)
    r = run_check(binary_path(), path)
    assert r.returncode != 0
    assert r.stderr.splitlines() == [
        f'{path}:{www}: local-data "www.corp.test.": a CNAME and other data '
        f'(RFC 2181 section 10.1); first at {path}:4'], r.stderr


def test_check_reports_every_error(tmp_path):
    lines = _good_lines(tmp_path)
    lines.insert(2, "cache-size lots")      # line 3
    lines.insert(5, "frobnicate yes")       # line 6
    path = _write(tmp_path, lines)
    r = run_check(binary_path(), path)
    assert r.returncode != 0
    assert {3, 6} <= _error_lines(path, r.stderr), r.stderr


def test_check_missing_file(tmp_path):
    r = run_check(binary_path(), tmp_path / "no-such.conf")
    assert r.returncode != 0
    assert "no-such.conf" in r.stderr, r.stderr


def _example_config(tmp_path, uncomment_examples):
    """conf/dnsdamper.conf with resolv-conf pointed at a loopback-only file,
    and optionally its commented-out forward zones switched on."""
    top = Path(os.environ.get("top_srcdir",
                              Path(__file__).resolve().parents[2]))
    resolv = tmp_path / "resolv.conf"
    # not 127.0.0.1:53, which the example's default listen makes our own
    resolv.write_text("nameserver 127.0.0.2\n")
    text = (top / "conf" / "dnsdamper.conf").read_text()
    assert "\nresolv-conf /etc/resolv.conf\n" in text
    text = text.replace("\nresolv-conf /etc/resolv.conf\n",
                        f"\nresolv-conf {resolv}\n")
    if uncomment_examples:
        text = re.sub(r"(?m)^#(forward |\t|})", r"\1", text)
        assert "\nforward consul" in text and "\tpolicy fastest" in text
        # the DNS over TLS example replaces the root zone's forward (its
        # certificates checked against the system CA store: -t reads it)
        assert '\tupstream tls://' in text
        text = text.replace("\nforward . { upstream resolv.conf }\n", "\n")
    return _write(tmp_path, text.splitlines(), "example.conf")


@pytest.mark.parametrize("uncomment", [False, True])
def test_example_config_is_valid(tmp_path, uncomment):
    # the shipped example, as is and with its example zones enabled
    path = _example_config(tmp_path, uncomment)
    r = run_check(binary_path(), path)
    assert r.returncode == 0, r.stderr
