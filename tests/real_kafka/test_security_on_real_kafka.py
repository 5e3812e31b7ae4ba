"""Every client security set-up on a real Kafka broker, and each way it goes wrong named in one line within 3 s.

One single-node sandbox for the module, started with `sandbox up`'s code, carries each set-up on a
listener of its own (sandbox/security.py): SSL with server-only and with mutual TLS, SASL_SSL with
PLAIN, SCRAM-SHA-256/512 (users written by ``kafka-storage format --add-scram``) and OAUTHBEARER
(Kafka's unsecured JWS validator on the broker; tokens from a client-credentials endpoint served
here with http.server), and SSL listeners presenting an expired and a wrong-host certificate. The
CA and certificates are made with openssl, every store with keytool (JKS and PKCS12). Clients are
configured by client.properties files written as an operator writes them, and `gather` is the
command under test.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kafka.admin import NewTopic

from kafka_rebalance.sandbox import cluster, security
from kafka_rebalance.sandbox.cluster import Sandbox
from kafka_rebalance.snapshot import load_snapshot
from tests.support.cli_inprocess import run_cli
from tests.support.kafka import admin
from tests.support.oauth import TokenEndpoint, unsecured_jws

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

USER = "alice"
CLIENT_ID = "rebalancer"
TOPIC = "secured-orders"
OAUTH_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
NO_ROUTE = "224.0.0.1:9092"  # a multicast group: TCP has no route to it, and Linux says so at once (ENETUNREACH)
MEASURED: list[str] = []


@dataclass(frozen=True)
class Secured:
    sandbox: Sandbox
    pki: security.Pki
    ports: dict[str, int]
    password: str  # alice's, for PLAIN and SCRAM
    client_secret: str  # the OAuth client's
    tokens: TokenEndpoint
    work: Path

    def bootstrap(self, listener: str) -> str:
        return self.sandbox.nodes[0].bootstrap if listener == "PLAINTEXT" else f"127.0.0.1:{self.ports[listener]}"


@pytest.fixture(scope="module")
def secured(tmp_path_factory) -> Iterator[Secured]:
    base = tmp_path_factory.mktemp("kafka-security")
    password, client_secret = secrets.token_hex(12), secrets.token_hex(12)
    started = time.monotonic()
    pki = security.make_pki(base / "pki", secrets.token_hex(12))
    made = time.monotonic() - started
    ports = security.listener_ports()
    sandbox = cluster.up(base / "sandbox", brokers=1, racks=0,
                         node_properties=security.listener_properties(pki, ports, {USER: password}),
                         format_args=security.scram_format_args({USER: password}))
    tokens = TokenEndpoint(CLIENT_ID, client_secret)
    try:
        client = admin(sandbox)
        try:
            client.create_topics([NewTopic(TOPIC, 3, 1)])
        finally:
            client.close()
        print(f"\nkey material {made:.1f}s, sandbox up {sandbox.start_seconds:.1f}s")
        yield Secured(sandbox, pki, ports, password, client_secret, tokens, base)
    finally:
        tokens.stop()
        cluster.down(base / "sandbox")
        if MEASURED:
            print("\n" + "\n".join(MEASURED))


def _properties(s: Secured, name: str, text: str) -> Path:
    """A client.properties file as an operator writes it (comments, continuation lines and all)."""
    path = s.work / f"{name}.properties"
    path.write_text(text.format(pki=s.pki.directory, store=s.pki.password, password=s.password, secret=s.client_secret,
                                token_url=s.tokens.url))
    path.chmod(0o600)
    return path


TRUST_JKS = """\
ssl.truststore.location={pki}/truststore.jks
ssl.truststore.password={store}
"""
TRUST_P12 = """\
ssl.truststore.type=PKCS12
ssl.truststore.location={pki}/truststore.p12
ssl.truststore.password={store}
"""
TRUST_PEM = """\
ssl.truststore.type=PEM
ssl.truststore.location={pki}/ca.pem
"""

# set-up -> (listener, client.properties)
SETUPS = {
    "ssl-server-auth": ("TLS", "# TLS, the broker's certificate checked against our CA\nsecurity.protocol=SSL\n" + TRUST_JKS),
    "ssl-mutual-jks": ("MTLS", "security.protocol=SSL\n" + TRUST_P12 + """\
ssl.keystore.location={pki}/client.jks
ssl.keystore.password={store}
ssl.key.password={store}
"""),
    "ssl-mutual-pkcs12": ("MTLS", "security.protocol=SSL\n" + TRUST_JKS + """\
ssl.keystore.type=PKCS12
ssl.keystore.location={pki}/client.p12
ssl.keystore.password={store}
"""),
    "sasl-ssl-plain": ("SASL_PLAIN", """\
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\
    username="alice" \\
    password="{password}";
""" + TRUST_PEM),
    "sasl-ssl-scram-sha-256": ("SASL_SCRAM", """\
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-256
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="{password}";
""" + TRUST_JKS),
    "sasl-ssl-scram-sha-512": ("SASL_SCRAM", """\
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="{password}";
""" + TRUST_P12),
    "sasl-ssl-oauthbearer": ("SASL_OAUTH", f"""\
security.protocol=SASL_SSL
sasl.mechanism=OAUTHBEARER
sasl.login.callback.handler.class={OAUTH_HANDLER}
sasl.oauthbearer.token.endpoint.url={{token_url}}
sasl.oauthbearer.client.credentials.client.id={CLIENT_ID}
sasl.oauthbearer.client.credentials.client.secret={{secret}}
sasl.oauthbearer.scope=kafka
sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;
""" + TRUST_JKS),
    "sasl-ssl-oauthbearer-jaas-options": ("SASL_OAUTH", f"""\
security.protocol=SASL_SSL
sasl.mechanism=OAUTHBEARER
sasl.login.callback.handler.class={OAUTH_HANDLER}
sasl.oauthbearer.token.endpoint.url={{token_url}}
sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required \\
    clientId="{CLIENT_ID}" clientSecret="{{secret}}" scope="kafka";
""" + TRUST_P12),
}


@pytest.mark.parametrize("setup", list(SETUPS))
def test_gather_over_each_security_setup(secured, setup, tmp_path):
    listener, text = SETUPS[setup]
    issued = secured.tokens.issued
    out = tmp_path / "snapshot.json"
    done = run_cli("gather", "--bootstrap-server", secured.bootstrap(listener), "--cluster-id", "secured", "--out", str(out),
                   "--command-config", str(_properties(secured, setup, text)))
    assert done.code == 0, done.stderr
    snap = load_snapshot(out)
    assert snap.kafka_cluster_id == secured.sandbox.cluster_uuid
    assert snap.broker_ids == [1]
    assert sorted(p.partition for p in snap.partitions if p.topic == TOPIC) == [0, 1, 2]
    if listener == "SASL_OAUTH":
        assert secured.tokens.issued == issued + 1  # the token came from the endpoint, once


def _one_line_failure(secured: Secured, case: str, bootstrap: str, text: str | None) -> tuple[str, float]:
    args = ["gather", "--bootstrap-server", bootstrap, "--cluster-id", "secured", "--out", str(secured.work / "never.json")]
    if text is not None:
        args += ["--command-config", str(_properties(secured, case, text))]
    started = time.monotonic()
    done = run_cli(*args)
    took = time.monotonic() - started
    MEASURED.append(f"{case}: {took:.2f}s {done.stderr.strip()}")
    assert done.code == 2, done
    assert done.stderr.count("\n") == 1, done.stderr
    for secret in (secured.password, secured.client_secret, secured.pki.password):
        assert secret not in done.stderr
    return done.stderr.rstrip("\n"), took


def _sasl(protocol: str, mechanism: str, *, password: str = "{password}") -> str:
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    return (f"security.protocol={protocol}\nsasl.mechanism={mechanism}\nsasl.jaas.config=org.apache.kafka.common.security."
            f'{module} required username="alice" password="{password}";\n')


# case -> (listener, client.properties or None for none, the line after "error: cannot connect to ")
FAILURES = {
    "sasl-plaintext-on-sasl-ssl": (
        "SASL_PLAIN", _sasl("SASL_PLAINTEXT", "PLAIN"),
        "{bootstrap} over SASL_PLAINTEXT (SASL PLAIN as alice): protocol mismatch: the listener speaks TLS (it answered "
        "with a TLS alert): set security.protocol=SASL_SSL and its ssl.* settings"),
    "plaintext-on-ssl": (
        "TLS", None,
        "{bootstrap} over PLAINTEXT: protocol mismatch: the listener speaks TLS (it answered with a TLS alert): "
        "set security.protocol=SSL and its ssl.* settings"),
    "ssl-on-plaintext": (
        "PLAINTEXT", "security.protocol=SSL\n" + TRUST_JKS,
        "{bootstrap} over SSL: protocol mismatch: the listener closed the connection at our TLS ClientHello without a "
        "TLS reply: it does not speak TLS (set security.protocol=PLAINTEXT?)"),
    "unknown-ca": (
        "TLS", "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={pki}/other-ca.pem\n",
        "{bootstrap} over SSL: TLS handshake failed: the broker's certificate is signed by an unknown CA (set "
        "ssl.truststore.location or ssl.ca.location to the cluster's CA)"),
    "expired-certificate": (
        "EXPIRED", "security.protocol=SSL\n" + TRUST_JKS,
        "{bootstrap} over SSL: TLS handshake failed: the broker's certificate has expired"),
    "wrong-host-certificate": (
        "WRONG_HOST", "security.protocol=SSL\n" + TRUST_P12,
        "{bootstrap} over SSL: TLS handshake failed: the broker's certificate does not name 127.0.0.1 (hostname "
        "mismatch; connect by a name the certificate lists)"),
    "no-client-certificate-on-mtls": (
        "MTLS", "security.protocol=SSL\n" + TRUST_JKS,
        "{bootstrap} over SSL: TLS handshake failed: the broker requires a client certificate (mutual TLS) and none is "
        "set (ssl.keystore.location, or ssl.certificate.location and ssl.key.location)"),
    "wrong-password-plain": (
        "SASL_PLAIN", _sasl("SASL_SSL", "PLAIN", password="not-the-password") + TRUST_JKS,
        "{bootstrap} over SASL_SSL (SASL PLAIN as alice): bad credentials: the broker rejected the credentials of user "
        "'alice' (SASL PLAIN)"),
    "wrong-password-scram-sha-512": (
        "SASL_SCRAM", _sasl("SASL_SSL", "SCRAM-SHA-512", password="not-the-password") + TRUST_JKS,
        "{bootstrap} over SASL_SSL (SASL SCRAM-SHA-512 as alice): bad credentials: the broker rejected the credentials "
        "of user 'alice' (SASL SCRAM-SHA-512)"),
    "wrong-client-secret-oauthbearer": (
        "SASL_OAUTH", f"""\
security.protocol=SASL_SSL
sasl.mechanism=OAUTHBEARER
sasl.login.callback.handler.class={OAUTH_HANDLER}
sasl.oauthbearer.token.endpoint.url={{token_url}}
sasl.oauthbearer.client.credentials.client.id={CLIENT_ID}
sasl.oauthbearer.client.credentials.client.secret=not-the-secret
""" + TRUST_JKS,
        "{bootstrap} over SASL_SSL (SASL OAUTHBEARER as client rebalancer): bad credentials: the token endpoint "
        "{token_url} refused the credentials of client 'rebalancer' (HTTP 401 invalid_client)"),
    "mechanism-not-enabled": (
        "SASL_PLAIN", _sasl("SASL_SSL", "SCRAM-SHA-256") + TRUST_JKS,
        "{bootstrap} over SASL_SSL (SASL SCRAM-SHA-256 as alice): SASL mechanism not enabled: SASL SCRAM-SHA-256 is not "
        "enabled on this listener (sasl.mechanism)"),
    "no-route": (
        "NO_ROUTE", "security.protocol=SSL\n" + TRUST_JKS,
        "{bootstrap} over SSL: address unreachable: no route to that address"),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_each_failure_is_one_line_naming_the_cause_within_3_seconds(secured, case):
    listener, text, expected = FAILURES[case]
    bootstrap = NO_ROUTE if listener == "NO_ROUTE" else secured.bootstrap(listener)
    line, took = _one_line_failure(secured, case, bootstrap, text)
    assert line == "error: cannot connect to " + expected.format(bootstrap=bootstrap, token_url=secured.tokens.url)
    assert took < 3, (case, took)


def test_a_mechanism_the_client_does_not_know_is_one_line_naming_file_and_value(secured):
    line, took = _one_line_failure(secured, "unknown-mechanism", secured.bootstrap("SASL_PLAIN"),
                                   "security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\n")
    path = secured.work / "unknown-mechanism.properties"
    assert line == (f"error: {path}: sasl.mechanism: 'GSSAPI' is not supported (use one of PLAIN, SCRAM-SHA-256, "
                    "SCRAM-SHA-512, OAUTHBEARER)")
    assert took < 3


def test_a_token_the_broker_refuses_is_named(secured):
    """The endpoint hands out a token that expired an hour ago: Kafka's validator refuses it, not the endpoint."""
    bootstrap = secured.bootstrap("SASL_OAUTH")
    _, text = SETUPS["sasl-ssl-oauthbearer"]
    secured.tokens.answer = (200, json.dumps({"access_token": unsecured_jws(CLIENT_ID, lifetime_s=-3600),
                                              "token_type": "Bearer", "expires_in": 3600}).encode())
    try:
        line, took = _one_line_failure(secured, "expired-oauth-token", bootstrap, text)
    finally:
        secured.tokens.answer = None
    assert line == (f"error: cannot connect to {bootstrap} over SASL_SSL (SASL OAUTHBEARER as client rebalancer): bad "
                    "credentials: the broker rejected the OAuth token (SASL OAUTHBEARER)")
    assert took < 3, took
