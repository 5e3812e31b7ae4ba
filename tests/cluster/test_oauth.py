"""SASL/OAUTHBEARER settings as client.properties and Airflow extras express them, and the token endpoint's failures."""

from __future__ import annotations

import socket
import time

import pytest

from kafka_rebalance.cluster.admin import ClusterConnectionError
from kafka_rebalance.cluster.connection import ConnectionSettingsError, settings_from_config
from kafka_rebalance.cluster.failures import FailureKind, TokenEndpointError
from kafka_rebalance.cluster.live import LiveAdmin
from kafka_rebalance.cluster.oauth import ClientCredentials, fetch_token
from tests.support.oauth import TokenEndpoint

HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
URL = "https://idp.example.com/oauth2/token"
BASE = {"bootstrap.servers": "127.0.0.1:9093", "security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}


@pytest.mark.parametrize("keys", [
    {  # Kafka 4.1's own keys
        "sasl.login.callback.handler.class": HANDLER, "sasl.oauthbearer.token.endpoint.url": URL,
        "sasl.oauthbearer.client.credentials.client.id": "rebalancer",
        "sasl.oauthbearer.client.credentials.client.secret": "s3cret", "sasl.oauthbearer.scope": "kafka",
        "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;"},
    {  # the JAAS options of Kafka 3.x
        "sasl.login.callback.handler.class": HANDLER, "sasl.oauthbearer.token.endpoint.url": URL,
        "sasl.jaas.config": 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
                            'clientId="rebalancer" clientSecret="s3cret" scope="kafka";'},
    {  # librdkafka (an Airflow connection's extra)
        "sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.token.endpoint.url": URL,
        "sasl.oauthbearer.client.id": "rebalancer", "sasl.oauthbearer.client.secret": "s3cret",
        "sasl.oauthbearer.scope": "kafka"},
], ids=["kafka-4.1-keys", "jaas-options", "librdkafka"])
def test_each_spelling_gives_the_same_client_credentials(keys):
    settings = settings_from_config({**BASE, **keys}, "client.properties")
    assert settings.oauth == ClientCredentials(URL, "rebalancer", "s3cret", "kafka")
    assert settings.describe() == "127.0.0.1:9093 over SASL_SSL (SASL OAUTHBEARER as client rebalancer)"
    assert "s3cret" not in repr(settings) and settings.secrets() == ["s3cret"]


@pytest.mark.parametrize(("keys", "line"), [
    ({}, "client.properties: SASL OAUTHBEARER needs sasl.oauthbearer.token.endpoint.url with a client id and secret "
         "(the client-credentials grant; Kafka's unsecured login is for tests only)"),
    ({"sasl.oauthbearer.token.endpoint.url": "file:///etc/token.jwt", "sasl.oauthbearer.client.id": "a",
      "sasl.oauthbearer.client.secret": "b"},
     "client.properties: sasl.oauthbearer.token.endpoint.url: 'file:///etc/token.jwt' is not an http(s) URL "
     "(a token from a file is not supported)"),
    ({"sasl.oauthbearer.token.endpoint.url": URL},
     "client.properties: sasl.oauthbearer.token.endpoint.url needs a client id and secret (sasl.oauthbearer.client."
     "credentials.client.id/.client.secret, or clientId/clientSecret in sasl.jaas.config)"),
    ({"sasl.login.callback.handler.class": "com.example.MyHandler", "sasl.oauthbearer.token.endpoint.url": URL},
     f"client.properties: sasl.login.callback.handler.class: com.example.MyHandler is not supported (only {HANDLER}, "
     "the client-credentials grant)"),
    ({"sasl.oauthbearer.client.credentials.client.id": "a"},
     "client.properties: an OAuth client id/secret is set without sasl.oauthbearer.token.endpoint.url"),
], ids=["no-endpoint", "file-url", "no-client", "other-handler", "client-without-endpoint"])
def test_incomplete_oauth_settings_are_one_line(keys, line):
    with pytest.raises(ConnectionSettingsError) as info:
        settings_from_config({**BASE, **keys}, "client.properties")
    assert str(info.value) == line


def test_a_token_from_the_endpoint_is_the_one_it_issued():
    with TokenEndpoint("rebalancer", "s3cret") as endpoint:
        token, lifetime = fetch_token(ClientCredentials(endpoint.url, "rebalancer", "s3cret"))
        assert endpoint.issued == 1
    header, payload, signature = token.split(".")
    assert (header, signature, lifetime) == ("eyJhbGciOiAibm9uZSJ9", "", 3600.0)


def _token_failure(credentials: ClientCredentials) -> tuple[TokenEndpointError, float]:
    started = time.monotonic()
    with pytest.raises(TokenEndpointError) as info:
        fetch_token(credentials)
    return info.value, time.monotonic() - started


def test_endpoint_failures_are_named():
    with TokenEndpoint("rebalancer", "s3cret") as endpoint:
        wrong, _ = _token_failure(ClientCredentials(endpoint.url, "rebalancer", "not-it"))
        endpoint.answer = (500, b'{"error":"server_error"}')
        broken, _ = _token_failure(ClientCredentials(endpoint.url, "rebalancer", "s3cret"))
        endpoint.answer = (200, b'{"token_type":"Bearer"}')
        empty, _ = _token_failure(ClientCredentials(endpoint.url, "rebalancer", "s3cret"))
    assert wrong.failure.kind is FailureKind.BAD_CREDENTIALS
    assert wrong.failure.detail == (f"the token endpoint {endpoint.url} refused the credentials of client 'rebalancer' "
                                    "(HTTP 401 invalid_client)")
    assert broken.failure.detail == f"{endpoint.url} answered HTTP 500 server_error to client 'rebalancer'"
    assert empty.failure.detail == f"{endpoint.url} answered without a JSON access_token"
    assert all("not-it" not in e.failure.line() for e in (wrong, broken, empty))


def test_an_endpoint_nobody_listens_on_fails_the_connection_at_once_in_one_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/token"
    settings = settings_from_config({**BASE, "sasl.oauthbearer.token.endpoint.url": url,
                                     "sasl.oauthbearer.client.credentials.client.id": "rebalancer",
                                     "sasl.oauthbearer.client.credentials.client.secret": "s3cret"}, "client.properties")
    started = time.monotonic()
    with pytest.raises(ClusterConnectionError) as info:
        LiveAdmin(settings, quiet=True)
    assert str(info.value) == ("cannot connect to 127.0.0.1:9093 over SASL_SSL (SASL OAUTHBEARER as client rebalancer): "
                               f"OAuth token endpoint failed: {url}: connection refused (is the token endpoint URL right?)")
    assert info.value.failure is not None and info.value.failure.kind is FailureKind.TOKEN_ENDPOINT
    assert time.monotonic() - started < 3
