"""JKS and PKCS12 trust/key stores, as Kafka's tools accept them, turned into the PEM files kafka-python loads.

Python's ``ssl`` reads PEM only. A store named in client.properties (``ssl.truststore.*``,
``ssl.keystore.*``) is read in memory (JKS with purejks, a maintained pure-Python reader; PKCS12 with
``cryptography``) and written to PEM files in a private directory (0700, files 0600) that is removed
when the process exits: at ``atexit``, which the CLI also reaches on SIGTERM and SIGINT
(``executor.interrupt.exit_on_signals``). The private key is written encrypted under a random password that exists
only in this process; store passwords are never written, logged or put in a message.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from kafka_rebalance.errors import RebalanceError

STORE_TYPES = ("JKS", "PKCS12")


class StoreError(RebalanceError):
    """A store cannot be read: the message names the key and the file, never a password."""


@dataclass(frozen=True, slots=True)
class KeyMaterial:
    certfile: str
    keyfile: str
    key_password: str = field(repr=False)


_workdir: Path | None = None


def _private_dir() -> Path:
    global _workdir
    if _workdir is None:
        _workdir = Path(tempfile.mkdtemp(prefix="kafka-rebalance-tls-"))  # mkdtemp: 0700
        atexit.register(shutil.rmtree, _workdir, True)
    return _workdir


def _write_private(name: str, data: bytes) -> str:
    path = _private_dir() / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return str(path)


def _pem(certs: list[x509.Certificate]) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


def _read(location: str, key: str, source: str) -> bytes:
    try:
        return Path(location).read_bytes()
    except OSError as exc:
        raise StoreError(f"{source}: {key}.location {location}: cannot read ({exc.strerror})") from None


def _unreadable(location: str, key: str, kind: str, source: str) -> StoreError:
    return StoreError(f"{source}: {key}.location {location}: cannot open it as a {kind} store "
                      f"(wrong {key}.password, or not a {kind} file; check {key}.type)")


def _jks(data: bytes, password: str | None, location: str, key: str, source: str) -> Any:
    import jks  # purejks

    try:
        return jks.KeyStore.loads(data, password or "", try_decrypt_keys=False)
    except (jks.util.KeystoreException, ValueError, EOFError) as exc:
        raise _unreadable(location, key, "JKS", source) from exc


def trusted_certificates_pem(location: str, kind: str, password: str | None, source: str) -> str:
    """A PEM file of every certificate the truststore holds (the CAs to trust)."""
    data = _read(location, "ssl.truststore", source)
    if kind == "JKS":
        store = _jks(data, password, location, "ssl.truststore", source)
        certs = [x509.load_der_x509_certificate(entry.cert) for entry in store.certs.values()]
    else:
        try:
            loaded = pkcs12.load_pkcs12(data, password.encode() if password else None)
        except ValueError as exc:
            raise _unreadable(location, "ssl.truststore", "PKCS12", source) from exc
        certs = ([loaded.cert.certificate] if loaded.cert else []) + [c.certificate for c in loaded.additional_certs]
    if not certs:
        raise StoreError(f"{source}: ssl.truststore.location {location}: the {kind} store holds no certificate to trust")
    return _write_private(f"truststore-{secrets.token_hex(4)}.pem", _pem(certs))


def key_material(location: str, kind: str, store_password: str | None, key_password: str | None, source: str) -> KeyMaterial:
    """The keystore's one private key and its certificate chain, as PEM files for mTLS."""
    data = _read(location, "ssl.keystore", source)
    if kind == "JKS":
        import jks

        store = _jks(data, store_password, location, "ssl.keystore", source)
        entries = list(store.private_keys.values())
        if len(entries) != 1:
            raise StoreError(f"{source}: ssl.keystore.location {location}: holds {len(entries)} private keys; "
                             "the client needs exactly one")
        entry = entries[0]
        try:
            entry.decrypt(key_password or store_password or "")
        except (jks.util.KeystoreException, ValueError) as exc:
            raise StoreError(f"{source}: ssl.keystore.location {location}: cannot decrypt the private key "
                             "(wrong ssl.key.password?)") from exc
        key = serialization.load_der_private_key(entry.pkey_pkcs8, None)
        chain = [x509.load_der_x509_certificate(der) for _, der in entry.cert_chain]
    else:
        try:
            loaded = pkcs12.load_pkcs12(data, store_password.encode() if store_password else None)
        except ValueError as exc:
            raise _unreadable(location, "ssl.keystore", "PKCS12", source) from exc
        if loaded.key is None or loaded.cert is None:
            raise StoreError(f"{source}: ssl.keystore.location {location}: holds no private key with its certificate")
        key = loaded.key
        chain = [loaded.cert.certificate] + [c.certificate for c in loaded.additional_certs]
    one_time = secrets.token_urlsafe(24)
    tag = secrets.token_hex(4)
    keyfile = _write_private(f"key-{tag}.pem", key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(one_time.encode())))
    return KeyMaterial(_write_private(f"chain-{tag}.pem", _pem(chain)), keyfile, one_time)
