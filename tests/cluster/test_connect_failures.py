"""Each connection failure named by its cause, decided from exception types, against real listeners.

Listeners here are real sockets on 127.0.0.1: a port with nothing on it, a TLS server with a
certificate made in the test, a port that accepts and never answers, and the Kafka-protocol test
server with SASL/PLAIN (closing right after the failure response, as a broker may).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kafka_rebalance.cluster.admin import ClusterConnectionError
from kafka_rebalance.cluster.connection import ConnectionSettings
from kafka_rebalance.cluster.failures import FailureKind
from kafka_rebalance.cluster.live import LiveAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.sandbox.cluster import free_ports
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.testing.testserver import KafkaTestServer

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample-cluster.json"


def _free_port() -> int:
    return free_ports(1)[0]


def _fail(settings: ConnectionSettings) -> tuple[ClusterConnectionError, float]:
    started = time.monotonic()
    with pytest.raises(ClusterConnectionError) as info:
        LiveAdmin(settings, quiet=True)
    return info.value, time.monotonic() - started


def _cert(directory: Path, *, name: str = "127.0.0.1", expired: bool = False) -> tuple[Path, Path]:
    """A self-signed certificate and its key, PEM: ``name`` in the SAN, as an IP when it is one."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    start, end = (now - dt.timedelta(days=30), now - dt.timedelta(days=1)) if expired else (now - dt.timedelta(hours=1),
                                                                                               now + dt.timedelta(days=1))
    try:
        san: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        san = x509.DNSName(name)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName([san]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / f"{name}-{expired}.crt", directory / f"{name}-{expired}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    return cert_path, key_path


class _LoopbackServer:
    """A listener on 127.0.0.1 in a thread of its own: each connection is handed to ``handle`` until ``stop``."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(2)
            self.handle(conn)

    def handle(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(5)
        self.sock.close()


class _TLSServer(_LoopbackServer):
    """Accepts TLS connections with the given certificate and then reads until the client goes."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        super().__init__()

    def handle(self, conn: socket.socket) -> None:
        try:
            with self.context.wrap_socket(conn, server_side=True) as tls:
                while tls.recv(4096):
                    pass
        except (OSError, ssl.SSLError):
            conn.close()


@pytest.fixture
def tls_server(tmp_path) -> Iterator[tuple[_TLSServer, Path]]:
    cert, key = _cert(tmp_path)
    server = _TLSServer(cert, key)
    yield server, cert
    server.stop()


def test_nothing_listening_is_refused_at_once():
    port = _free_port()
    err, seconds = _fail(ConnectionSettings(f"127.0.0.1:{port}", bootstrap_timeout_ms=15000))
    assert err.failure is not None and err.failure.kind is FailureKind.REFUSED
    assert str(err) == (f"cannot connect to 127.0.0.1:{port} over PLAINTEXT: connection refused: "
                        "nothing listens on that host:port")
    assert seconds < 3, seconds


def test_every_bootstrap_server_refusing_fails_at_once_one_is_not_enough(tmp_path):
    ports = [_free_port(), _free_port()]
    err, seconds = _fail(ConnectionSettings(",".join(f"127.0.0.1:{p}" for p in ports), bootstrap_timeout_ms=15000))
    assert err.failure is not None and err.failure.kind is FailureKind.REFUSED and seconds < 3
    with KafkaTestServer(Simulator.from_snapshot(load_snapshot(SAMPLE))) as server:
        # One dead bootstrap server beside a live one: the client must go on to the live one.
        admin = LiveAdmin(ConnectionSettings(f"127.0.0.1:{ports[0]},{server.bootstrap_servers}", bootstrap_timeout_ms=15000),
                          quiet=True)
        try:
            assert admin.describe().brokers
        finally:
            admin.close()


def test_unresolvable_host_is_named():
    err, seconds = _fail(ConnectionSettings("no-such-host.invalid:9092", bootstrap_timeout_ms=15000))
    assert err.failure is not None and err.failure.kind is FailureKind.UNRESOLVED and seconds < 10


def test_silent_address_waits_the_bounded_timeout_only():
    with socket.socket() as listener:  # the kernel completes the TCP handshake; nobody ever answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        err, seconds = _fail(ConnectionSettings(f"127.0.0.1:{port}", bootstrap_timeout_ms=2000,
                                                request_timeout_ms=1000))
    assert err.failure is not None and err.failure.kind is FailureKind.SILENT
    assert str(err) == (f"cannot connect to 127.0.0.1:{port} over PLAINTEXT: no answer: the server accepted the connection "
                        "but did not answer the first request (is this a Kafka listener?) (gave up after 2s)")
    assert 1.5 < seconds < 6, seconds


def test_tls_server_with_an_untrusted_certificate(tls_server):
    server, _ = tls_server
    err, seconds = _fail(ConnectionSettings(f"127.0.0.1:{server.port}", "SSL", bootstrap_timeout_ms=15000))
    assert err.failure is not None and err.failure.kind is FailureKind.TLS
    assert "unknown CA" in err.failure.detail and seconds < 3


@pytest.mark.parametrize(("cert_options", "detail"), [
    ({"name": "broker-1.example.com"}, "does not name 127.0.0.1"),
    ({"expired": True}, "expired"),
], ids=["hostname-mismatch", "expired"])
def test_tls_certificate_problems_are_named(tmp_path, cert_options, detail):
    cert, key = _cert(tmp_path, **cert_options)
    server = _TLSServer(cert, key)
    try:
        err, seconds = _fail(ConnectionSettings(f"127.0.0.1:{server.port}", "SSL", ssl_cafile=str(cert),
                                                bootstrap_timeout_ms=15000))
    finally:
        server.stop()
    assert err.failure is not None and err.failure.kind is FailureKind.TLS
    assert detail in err.failure.detail and seconds < 3


def test_plaintext_client_on_a_tls_listener_is_not_called_a_tls_problem(tls_server):
    server, _ = tls_server
    err, seconds = _fail(ConnectionSettings(f"127.0.0.1:{server.port}", bootstrap_timeout_ms=15000))
    assert err.failure is not None and err.failure.kind is FailureKind.PEER_CLOSED and seconds < 5


def test_tls_client_on_a_listener_that_never_answers_the_handshake():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        err, seconds = _fail(ConnectionSettings(f"127.0.0.1:{listener.getsockname()[1]}", "SSL", bootstrap_timeout_ms=2000))
    assert err.failure is not None and err.failure.kind is FailureKind.SILENT
    assert "TLS handshake was not answered" in str(err) and seconds < 6, seconds


@pytest.mark.parametrize("close_delay", [0.0, 0.1])
def test_wrong_password_is_bad_credentials_every_time(close_delay):
    """The broker closes right after (0) or shortly after (0.1 s) its failure response: same cause, 10 of 10."""
    with KafkaTestServer(Simulator.from_snapshot(load_snapshot(SAMPLE)), sasl_users={"alice": "right-secret"},
                         failed_auth_close_delay=close_delay) as server:
        kinds, slowest = [], 0.0
        for _ in range(10):
            err, seconds = _fail(ConnectionSettings(server.bootstrap_servers, "SASL_PLAINTEXT", "PLAIN", "alice",
                                                    "wrong-secret", bootstrap_timeout_ms=15000))
            kinds.append(err.failure.kind if err.failure else None)
            slowest = max(slowest, seconds)
            assert "wrong-secret" not in str(err)
    assert kinds == [FailureKind.BAD_CREDENTIALS] * 10
    assert str(err).endswith("bad credentials: the broker rejected the credentials of user 'alice' (SASL PLAIN)")
    assert slowest < 3, slowest


def test_sasl_mechanism_the_listener_does_not_offer():
    with KafkaTestServer(Simulator.from_snapshot(load_snapshot(SAMPLE)), sasl_users={"alice": "right-secret"}) as server:
        err, seconds = _fail(ConnectionSettings(server.bootstrap_servers, "SASL_PLAINTEXT", "SCRAM-SHA-256", "alice",
                                                "right-secret", bootstrap_timeout_ms=15000))
    assert err.failure is not None and err.failure.kind is FailureKind.SASL_MECHANISM
    assert "SCRAM-SHA-256 is not enabled" in str(err) and seconds < 3


class _ClosingServer(_LoopbackServer):
    """Reads what each client sends, answers ``reply`` (or nothing) and closes: a Kafka listener's answer to a request in
    the wrong protocol (a TLS listener sends an alert; a plaintext one reads a ClientHello as a huge size and closes)."""

    def __init__(self, reply: bytes | None) -> None:
        self.reply = reply
        super().__init__()

    def handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(4096)
                if self.reply is not None:
                    conn.sendall(self.reply)
            except OSError:
                pass


TLS_ALERT = bytes.fromhex("15030300020250")  # what Kafka 4.1's TLS listener answered a plaintext ApiVersions request


@pytest.mark.parametrize(("protocol", "mechanism", "advice"), [
    ("PLAINTEXT", None, "SSL"), ("SASL_PLAINTEXT", "PLAIN", "SASL_SSL")])
def test_a_tls_alert_to_a_plaintext_client_says_the_listener_speaks_tls(protocol, mechanism, advice):
    server = _ClosingServer(TLS_ALERT)
    try:
        err, seconds = _fail(ConnectionSettings(f"127.0.0.1:{server.port}", protocol, mechanism,
                                                "alice" if mechanism else None, "secret" if mechanism else None,
                                                bootstrap_timeout_ms=15000))
    finally:
        server.stop()
    assert err.failure is not None and err.failure.kind is FailureKind.PROTOCOL
    assert err.failure.detail == (f"the listener speaks TLS (it answered with a TLS alert): set security.protocol={advice} "
                                  "and its ssl.* settings")
    assert seconds < 3, seconds


def test_a_close_on_the_client_hello_says_the_listener_does_not_speak_tls():
    server = _ClosingServer(None)
    try:
        err, seconds = _fail(ConnectionSettings(f"127.0.0.1:{server.port}", "SSL", bootstrap_timeout_ms=15000))
    finally:
        server.stop()
    assert str(err) == (f"cannot connect to 127.0.0.1:{server.port} over SSL: protocol mismatch: the listener closed the "
                        "connection at our TLS ClientHello without a TLS reply: it does not speak TLS "
                        "(set security.protocol=PLAINTEXT?)")
    assert seconds < 3, seconds
