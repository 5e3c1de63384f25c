"""Certificates for the DNS over TLS tests, made with the openssl command:
a test CA and its server certificate for `dns.test` and 127.0.0.1 (good),
the same key with a certificate that expired in 2020 (expired), a server
certificate of another CA the daemon is not told of (untrusted), and the
RFC 7469 pins (base64 of the SHA-256 of the SubjectPublicKeyInfo) of the
server key and of a key nobody serves (wrong_pin)."""

import base64
import hashlib
import shutil
import subprocess
from pathlib import Path

NAME = "dns.test"

_CA_CONF = """\
[ ca ]
default_ca = testca
[ testca ]
dir = {dir}
database = {dir}/index.txt
new_certs_dir = {dir}
serial = {dir}/serial
default_md = sha256
policy = anything
copy_extensions = copy
unique_subject = no
[ anything ]
commonName = supplied
"""


def openssl_binary():
    return shutil.which("openssl") or "/usr/bin/openssl"


def _run(*args, cwd):
    r = subprocess.run([openssl_binary(), *args], cwd=cwd,
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)}: {r.stderr}")
    return r.stdout


def spki_pin(key_path, cwd):
    """`sha256/BASE64` of the key's SubjectPublicKeyInfo (RFC 7469 §2.4),
    worked out here from the DER the openssl command writes."""
    der = subprocess.run([openssl_binary(), "pkey", "-in", str(key_path),
                          "-pubout", "-outform", "DER"], cwd=cwd,
                         capture_output=True, timeout=60, check=True).stdout
    return "sha256/" + base64.b64encode(hashlib.sha256(der).digest()).decode()


class Pki:
    """Everything in directory d (made): attributes are paths, and pins."""

    def __init__(self, d):
        d = Path(d)
        d.mkdir(parents=True, exist_ok=True)
        self.dir = d
        for ca in ("ca", "other"):
            sub = d / ca
            sub.mkdir()
            (sub / "index.txt").write_text("")
            (sub / "serial").write_text("01\n")
            (sub / "ca.cnf").write_text(_CA_CONF.format(dir=sub))
            _run("req", "-x509", "-newkey", "ec", "-pkeyopt",
                 "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                 str(sub / "ca.key"), "-out", str(sub / "ca.pem"), "-days",
                 "30", "-subj", f"/CN=dnsdamper test {ca} CA", cwd=d)
        self.ca = d / "ca" / "ca.pem"
        self.other_ca = d / "other" / "ca.pem"
        self.key = d / "server.key"
        self.spare_key = d / "spare.key"
        for key in (self.key, self.spare_key):
            _run("genpkey", "-algorithm", "EC", "-pkeyopt",
                 "ec_paramgen_curve:P-256", "-out", str(key), cwd=d)
        csr = d / "server.csr"
        _run("req", "-new", "-key", str(self.key), "-out", str(csr),
             "-subj", f"/CN={NAME}", "-addext",
             f"subjectAltName=DNS:{NAME},IP:127.0.0.1", cwd=d)
        self.good = d / "good.pem"
        self.expired = d / "expired.pem"
        self.untrusted = d / "untrusted.pem"
        self._sign("ca", csr, self.good, "-days", "30")
        self._sign("ca", csr, self.expired, "-startdate", "20200101000000Z",
                   "-enddate", "20200201000000Z")
        self._sign("other", csr, self.untrusted, "-days", "30")
        self.pin = spki_pin(self.key, d)
        self.wrong_pin = spki_pin(self.spare_key, d)

    def _sign(self, ca, csr, out, *validity):
        sub = self.dir / ca
        _run("ca", "-batch", "-config", str(sub / "ca.cnf"), "-cert",
             str(sub / "ca.pem"), "-keyfile", str(sub / "ca.key"), "-in",
             str(csr), "-out", str(out), "-notext", *validity, cwd=sub)
