"""JKS and PKCS12 stores from client.properties, made here with Java's keytool, used for real TLS handshakes."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from kafka_rebalance.cluster.connection import ConnectionSettingsError, settings_from_properties
from tests.cluster.test_connect_failures import _cert

ROOT = Path(__file__).resolve().parents[2]
KEYTOOL = shutil.which("keytool")
pytestmark = pytest.mark.skipif(KEYTOOL is None, reason="needs Java's keytool")  # present on the dev machine and in CI
STORE_PASSWORD = "store-pass-1234"  # test-only, generated stores


def _keytool(*args: str) -> None:
    subprocess.run([KEYTOOL, *args], check=True, capture_output=True, timeout=120)  # type: ignore[list-item]


def _truststore(tmp_path: Path, ca: Path, kind: str) -> Path:
    path = tmp_path / f"trust.{kind.lower()}"
    _keytool("-importcert", "-noprompt", "-alias", "ca", "-file", str(ca), "-keystore", str(path),
             "-storetype", kind, "-storepass", STORE_PASSWORD)
    return path


def _keystore(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"client.{kind.lower()}"
    _keytool("-genkeypair", "-alias", "client", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=rebalance-client",
             "-validity", "2", "-keystore", str(path), "-storetype", kind, "-storepass", STORE_PASSWORD,
             "-keypass", STORE_PASSWORD)
    return path


def _handshake(port: int, cafile: str, certfile: str | None = None, keyfile: str | None = None,
               password: str | None = None) -> None:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(cafile)
    if certfile:
        ctx.load_cert_chain(certfile, keyfile, password)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        tls.sendall(b"ping")
        assert tls.recv(4) == b"pong"


def _server(cert: Path, key: Path, client_ca: Path | None) -> tuple[socket.socket, threading.Thread]:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    if client_ca is not None:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(client_ca)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()

    def serve() -> None:
        conn, _ = sock.accept()
        with ctx.wrap_socket(conn, server_side=True) as tls:
            if tls.recv(4) == b"ping":
                tls.sendall(b"pong")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return sock, thread


@pytest.mark.parametrize("kind", ["JKS", "PKCS12"])
def test_truststore_and_keystore_give_a_verified_mutual_tls_handshake(tmp_path, kind, caplog):
    server_cert, server_key = _cert(tmp_path)
    keystore = _keystore(tmp_path, kind)
    client_cert = tmp_path / "client.crt"
    _keytool("-exportcert", "-rfc", "-alias", "client", "-keystore", str(keystore), "-storetype", kind,
             "-storepass", STORE_PASSWORD, "-file", str(client_cert))
    props = tmp_path / "client.properties"
    props.write_text(f"security.protocol=SSL\nssl.truststore.type={kind}\n"
                     f"ssl.truststore.location={_truststore(tmp_path, server_cert, kind)}\n"
                     f"ssl.truststore.password={STORE_PASSWORD}\nssl.keystore.type={kind}\n"
                     f"ssl.keystore.location={keystore}\nssl.keystore.password={STORE_PASSWORD}\n"
                     f"ssl.key.password={STORE_PASSWORD}\n")
    with caplog.at_level(logging.DEBUG):
        s = settings_from_properties(props, "127.0.0.1:9093")
    assert s.ssl_cafile and s.ssl_certfile and s.ssl_keyfile and s.ssl_key_password
    for path in (s.ssl_cafile, s.ssl_certfile, s.ssl_keyfile):
        assert stat.S_IMODE(Path(path).stat().st_mode) == 0o600
        assert STORE_PASSWORD.encode() not in Path(path).read_bytes()
    assert stat.S_IMODE(Path(s.ssl_keyfile).parent.stat().st_mode) == 0o700
    assert b"ENCRYPTED PRIVATE KEY" in Path(s.ssl_keyfile).read_bytes()  # never a clear key on disk
    assert s.ssl_key_password != STORE_PASSWORD and STORE_PASSWORD not in repr(s) + caplog.text
    # The converted chain is keytool's own certificate.
    assert (x509.load_pem_x509_certificate(Path(s.ssl_certfile).read_bytes())
            == x509.load_pem_x509_certificate(client_cert.read_bytes()))
    # A real handshake: the server's certificate verified with the truststore, ours required by the server.
    sock, thread = _server(server_cert, server_key, client_cert)
    try:
        _handshake(sock.getsockname()[1], s.ssl_cafile, s.ssl_certfile, s.ssl_keyfile, s.ssl_key_password)
    finally:
        thread.join(5)
        sock.close()
    key = serialization.load_pem_private_key(Path(s.ssl_keyfile).read_bytes(), s.ssl_key_password.encode())
    assert key.public_key().public_numbers() == x509.load_pem_x509_certificate(client_cert.read_bytes()).public_key().public_numbers()


@pytest.mark.parametrize("kind", ["JKS", "PKCS12"])
def test_wrong_store_password_is_one_line_without_the_password(tmp_path, kind):
    server_cert, _ = _cert(tmp_path)
    store = _truststore(tmp_path, server_cert, kind)
    props = tmp_path / "client.properties"
    props.write_text(f"security.protocol=SSL\nssl.truststore.type={kind}\nssl.truststore.location={store}\n"
                     "ssl.truststore.password=wrong-pass-987\n")
    with pytest.raises(ConnectionSettingsError) as info:
        settings_from_properties(props, "127.0.0.1:9093")
    assert str(info.value) == (f"{props}: ssl.truststore.location {store}: cannot open it as a {kind} store "
                               f"(wrong ssl.truststore.password, or not a {kind} file; check ssl.truststore.type)")
    assert "wrong-pass-987" not in str(info.value)
    props.write_text(f"security.protocol=SSL\nssl.truststore.type=BCFKS\nssl.truststore.location={store}\n")
    with pytest.raises(ConnectionSettingsError, match="ssl.truststore.type BCFKS: not one of PEM, JKS, PKCS12"):
        settings_from_properties(props, "127.0.0.1:9093")


@pytest.mark.parametrize(("kind", "sig"), [("JKS", signal.SIGTERM), ("PKCS12", signal.SIGINT)])
def test_a_signalled_gather_removes_the_key_material_it_wrote(tmp_path, kind, sig):
    # A broker address that accepts the connection and never answers: gather sits in the TLS
    # handshake, with the PEM copies of both stores on disk, until it is signalled.
    server_cert, _ = _cert(tmp_path)
    props = tmp_path / "client.properties"
    props.write_text(f"security.protocol=SSL\nssl.truststore.type={kind}\n"
                     f"ssl.truststore.location={_truststore(tmp_path, server_cert, kind)}\n"
                     f"ssl.truststore.password={STORE_PASSWORD}\nssl.keystore.type={kind}\n"
                     f"ssl.keystore.location={_keystore(tmp_path, kind)}\nssl.keystore.password={STORE_PASSWORD}\n")
    tmpdir = tmp_path / "tmp"  # the process's TMPDIR: only its own private directory appears there
    tmpdir.mkdir()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    silent.settimeout(60)
    out = tmp_path / "snap.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_rebalance.cli", "gather", "--bootstrap-server", f"127.0.0.1:{silent.getsockname()[1]}",
         "--command-config", str(props), "--cluster-id", "c", "--out", str(out), "--connect-timeout", "300"],
        env={**os.environ, "PYTHONPATH": str(ROOT / "plugins"), "TMPDIR": str(tmpdir)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        conn, _ = silent.accept()  # the client is connected: its stores were converted before it dialled
        private = list(tmpdir.glob("kafka-rebalance-tls-*"))
        assert len(private) == 1 and proc.poll() is None
        assert sorted(f.name.split("-")[0] for f in private[0].iterdir()) == ["chain", "key", "truststore"]
        time.sleep(0.5)  # into the handshake's wait, not just past connect
        os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        silent.close()
    conn.close()
    assert not private[0].exists(), f"left behind: {sorted(p.name for p in private[0].iterdir())}"
    assert list(tmpdir.iterdir()) == [] and not out.exists()
    assert proc.returncode == 128 + sig, err  # the shell's code for the signal, as execute's
    assert err.strip().splitlines()[-1:] == [f"stopped by {signal.Signals(sig).name}"] and "Traceback" not in err
