"""Certificates for an etcd with TLS in the tests: a CA, a server certificate for the loopback
address and a client certificate, minted with ``cryptography`` (a test dependency only), and
a second CA that signed none of them (what an untrusted member, or client, presents)."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DAY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class Pki:
    """The files: ``ca`` (PEM), ``server_cert``/``server_key``, ``client_cert``/``client_key``,
    and ``other_ca`` with ``other_cert``/``other_key`` (a CA the server does not trust)."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path
    other_cert: Path
    other_key: Path


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _organisation(name: str) -> x509.Name:
    """A client's subject: no Common Name (etcd's JSON gateway, with authentication on,
    refuses a client certificate that has one)."""
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, name)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _write_cert(cert: x509.Certificate, path: Path) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _ca(common: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common))
        .issuer_name(_name(common))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - DAY)
        .not_valid_after(now + 30 * DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    return cert, key


def _leaf(
    common: str, ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey], *, server: bool
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    usage = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common) if server else _organisation(common))
        .issuer_name(ca[0].subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - DAY)
        .not_valid_after(now + 30 * DAY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage(usage if server else usage[1:]), critical=False)
    )
    if server:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(ca[1], hashes.SHA256()), key


def mint(where: Path) -> Pki:
    """A fresh set of certificates under ``where`` (made if missing)."""
    where.mkdir(parents=True, exist_ok=True)
    ca, other = _ca("memkeeper test CA"), _ca("some other CA")
    server, client = _leaf("etcd", ca, server=True), _leaf("memkeeper", ca, server=False)
    stranger = _leaf("stranger", other, server=False)
    pki = Pki(*(where / name for name in (
        "ca.pem", "server.pem", "server-key.pem", "client.pem", "client-key.pem",
        "other-ca.pem", "other.pem", "other-key.pem",
    )))  # fmt: skip
    _write_cert(ca[0], pki.ca)
    _write_cert(other[0], pki.other_ca)
    for (cert, key), cert_path, key_path in (
        (server, pki.server_cert, pki.server_key),
        (client, pki.client_cert, pki.client_key),
        (stranger, pki.other_cert, pki.other_key),
    ):
        _write_cert(cert, cert_path)
        _write_key(key, key_path)
    return pki
