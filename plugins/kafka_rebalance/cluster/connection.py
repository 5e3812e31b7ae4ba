"""Connection settings for the live adapter, from an Airflow ``kafka`` connection or a client properties file.

Airflow's Kafka provider stores librdkafka configuration in the connection's extra
JSON (``bootstrap.servers``, ``security.protocol``, ``sasl.*``, ``ssl.*``); Kafka's
own tools take a Java client properties file (``--command-config``). Both are
mapped onto kafka-python's KafkaAdminClient arguments here. Secrets (passwords,
key passwords) are held in fields excluded from ``repr`` and never appear in
``describe()``, log lines or error messages.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kafka_rebalance.cluster import stores
from kafka_rebalance.cluster.oauth import ClientCredentials, ClientCredentialsTokenProvider
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.userinput import INT32_MAX, InputError, parse_int, read_text

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
# The one login callback handler honoured: Kafka's own, for the client-credentials grant (cluster/oauth.py).
OAUTH_LOGIN_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
OAUTH_DEFAULT_TIMEOUT_MS = 10000

# librdkafka / Java keys that configure consumers or producers: harmless for an admin client.
IGNORED_KEYS = {
    "group.id", "auto.offset.reset", "enable.auto.commit", "session.timeout.ms", "client.dns.lookup", "acks",
    "linger.ms", "compression.type", "enable.idempotence", "key.serializer", "value.serializer",
    "key.deserializer", "value.deserializer", "socket.timeout.ms", "retries", "retry.backoff.ms",
}


class ConnectionSettingsError(RebalanceError):
    """A connection setting cannot be honoured (named by source and key; values of secrets never shown)."""


@dataclass(frozen=True, slots=True)
class ConnectionSettings:
    bootstrap_servers: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_key_password: str | None = field(default=None, repr=False)
    ssl_check_hostname: bool = True
    oauth: ClientCredentials | None = None  # SASL OAUTHBEARER: the client-credentials grant
    client_id: str = "kafka-rebalance"
    request_timeout_ms: int = 30000
    bootstrap_timeout_ms: int = 15000
    source: str = "settings"

    def __post_init__(self) -> None:
        where = self.source
        if not self.bootstrap_servers or not self.bootstrap_servers.strip():
            raise ConnectionSettingsError(f"{where}: bootstrap.servers is missing (HOST:PORT[,HOST:PORT...])")
        for server in self.bootstrap_servers.split(","):
            if not re.fullmatch(r"\s*[^\s:]+:\d{1,5}\s*|\s*\[[0-9a-fA-F:]+\]:\d{1,5}\s*", server):
                raise ConnectionSettingsError(f"{where}: bootstrap.servers: {server.strip()!r} is not HOST:PORT")
        if self.security_protocol not in PROTOCOLS:
            raise ConnectionSettingsError(
                f"{where}: security.protocol: {self.security_protocol!r} is not one of {', '.join(PROTOCOLS)}")
        if self.security_protocol.startswith("SASL"):
            if self.sasl_mechanism not in MECHANISMS:
                raise ConnectionSettingsError(
                    f"{where}: sasl.mechanism: {self.sasl_mechanism!r} is not supported (use one of {', '.join(MECHANISMS)})")
            if self.sasl_mechanism == "OAUTHBEARER":
                if self.oauth is None:
                    raise ConnectionSettingsError(
                        f"{where}: SASL OAUTHBEARER needs sasl.oauthbearer.token.endpoint.url with a client id and "
                        "secret (the client-credentials grant; Kafka's unsecured login is for tests only)")
            elif not self.sasl_username or self.sasl_password is None:
                raise ConnectionSettingsError(
                    f"{where}: SASL {self.sasl_mechanism} needs a username and a password "
                    "(sasl.username/sasl.password, or sasl.jaas.config)")
        if bool(self.ssl_certfile) != bool(self.ssl_keyfile) and self.ssl_keyfile:
            raise ConnectionSettingsError(f"{where}: ssl.key.location is set without ssl.certificate.location")

    def with_timeouts(self, request_timeout_ms: int | None = None, bootstrap_timeout_ms: int | None = None) -> ConnectionSettings:
        return replace(self, request_timeout_ms=request_timeout_ms or self.request_timeout_ms,
                       bootstrap_timeout_ms=bootstrap_timeout_ms or self.bootstrap_timeout_ms)

    def kafka_python_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {
            "bootstrap_servers": [s.strip() for s in self.bootstrap_servers.split(",")],
            "client_id": self.client_id,
            "security_protocol": self.security_protocol,
            "request_timeout_ms": self.request_timeout_ms,
            "bootstrap_timeout_ms": self.bootstrap_timeout_ms,
            # Kafka's own clients' reconnect.backoff.max.ms. kafka-python's 30 s would leave a broker that came back
            # (a restarted controller, say) refused without a try for up to 30 s, its throttle restore failing meanwhile.
            "reconnect_backoff_max_ms": 1000,
        }
        if self.security_protocol.startswith("SASL") and self.oauth is not None and self.sasl_mechanism == "OAUTHBEARER":
            # Like Kafka's client, an https token endpoint is verified with the cluster's CA setting.
            oauth = self.oauth if self.oauth.cafile else replace(self.oauth, cafile=self.ssl_cafile)
            kw.update(sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=ClientCredentialsTokenProvider(oauth))
        elif self.security_protocol.startswith("SASL"):
            kw.update(sasl_mechanism=self.sasl_mechanism, sasl_plain_username=self.sasl_username,
                      sasl_plain_password=self.sasl_password)
        if self.security_protocol in ("SSL", "SASL_SSL"):
            kw.update(ssl_cafile=self.ssl_cafile, ssl_certfile=self.ssl_certfile, ssl_keyfile=self.ssl_keyfile,
                      ssl_password=self.ssl_key_password, ssl_check_hostname=self.ssl_check_hostname)
        return kw

    def secrets(self) -> list[str]:
        oauth_secret = self.oauth.client_secret if self.oauth else None
        return [s for s in (self.sasl_password, self.ssl_key_password, oauth_secret) if s]

    def describe(self) -> str:
        """One line for logs and messages: no secret in it."""
        out = f"{self.bootstrap_servers} over {self.security_protocol}"
        if self.security_protocol.startswith("SASL") and self.sasl_mechanism == "OAUTHBEARER" and self.oauth:
            out += f" (SASL OAUTHBEARER as client {self.oauth.client_id})"
        elif self.security_protocol.startswith("SASL"):
            out += f" (SASL {self.sasl_mechanism} as {self.sasl_username})"
        return out


def _bool(value: Any, key: str, source: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ConnectionSettingsError(f"{source}: {key}: expected true or false, got {value!r}")


_JAAS = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def _jaas_credentials(jaas: str, source: str) -> tuple[str, str]:
    if "PlainLoginModule" not in jaas and "ScramLoginModule" not in jaas:
        raise ConnectionSettingsError(f"{source}: sasl.jaas.config: only PlainLoginModule, ScramLoginModule and "
                                      "OAuthBearerLoginModule are supported")
    values = dict(_JAAS.findall(jaas))
    if "username" not in values or "password" not in values:
        raise ConnectionSettingsError(f"{source}: sasl.jaas.config: needs username=\"...\" and password=\"...\"")
    return values["username"], values["password"]


def _pop_first(cfg: dict[str, Any], *keys: str) -> Any:
    """The value of the first of these keys that is set; every one of them is taken out of ``cfg``."""
    values = [cfg.pop(k, None) for k in keys]
    return next((v for v in values if v is not None), None)


def _oauth_settings(cfg: dict[str, Any], jaas: Mapping[str, str], source: str) -> ClientCredentials | None:
    """The client-credentials grant as Kafka 4.1's keys, the older JAAS options, or librdkafka's keys express it."""
    endpoint = _pop_first(cfg, "sasl.oauthbearer.token.endpoint.url")
    client_id = _pop_first(cfg, "sasl.oauthbearer.client.credentials.client.id", "sasl.oauthbearer.client.id") or jaas.get("clientId")
    secret = (_pop_first(cfg, "sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.client.secret")
              or jaas.get("clientSecret"))
    scope = _pop_first(cfg, "sasl.oauthbearer.scope") or jaas.get("scope")
    handler = _pop_first(cfg, "sasl.login.callback.handler.class")
    method = _pop_first(cfg, "sasl.oauthbearer.method")  # librdkafka: oidc is the client-credentials grant
    urlencode = _pop_first(cfg, "sasl.oauthbearer.header.urlencode")
    timeouts = [_pop_first(cfg, f"sasl.login.{k}.timeout.ms") for k in ("connect", "read")]
    if handler is not None and str(handler).strip() != OAUTH_LOGIN_HANDLER:
        raise ConnectionSettingsError(f"{source}: sasl.login.callback.handler.class: {str(handler).strip()} is not supported "
                                      f"(only {OAUTH_LOGIN_HANDLER}, the client-credentials grant)")
    if method is not None and str(method).strip().lower() != "oidc":
        raise ConnectionSettingsError(f"{source}: sasl.oauthbearer.method: {method!r} is not supported (only oidc)")
    if endpoint is None:
        if client_id or secret:
            raise ConnectionSettingsError(f"{source}: an OAuth client id/secret is set without "
                                          "sasl.oauthbearer.token.endpoint.url")
        return None
    url = str(endpoint).strip()
    if not re.match(r"https?://[^/\s]+", url):
        raise ConnectionSettingsError(f"{source}: sasl.oauthbearer.token.endpoint.url: {url!r} is not an http(s) URL "
                                      "(a token from a file is not supported)")
    if not client_id or secret is None:
        raise ConnectionSettingsError(f"{source}: sasl.oauthbearer.token.endpoint.url needs a client id and secret "
                                      "(sasl.oauthbearer.client.credentials.client.id/.client.secret, or clientId/"
                                      "clientSecret in sasl.jaas.config)")
    given = []
    for key, value in zip(("sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms"), timeouts, strict=True):
        if value is not None:
            try:
                given.append(parse_int(str(value), f"{source}: {key}", 1, INT32_MAX, "milliseconds"))
            except InputError as exc:
                raise ConnectionSettingsError(str(exc)) from None
    timeout_ms = max(given) if given else OAUTH_DEFAULT_TIMEOUT_MS  # one timeout covers connect and read here
    return ClientCredentials(url, str(client_id), str(secret), str(scope) if scope else None,
                             _bool(urlencode, "sasl.oauthbearer.header.urlencode", source) if urlencode is not None else False,
                             timeout_ms / 1000)


def settings_from_config(config: Mapping[str, Any], source: str, bootstrap_servers: str | None = None) -> ConnectionSettings:
    """Map librdkafka- or Java-style client keys to settings; unknown security keys are refused, not ignored."""
    cfg = {str(k).strip(): v for k, v in config.items()}
    kw: dict[str, Any] = {"source": source}
    servers = bootstrap_servers or cfg.pop("bootstrap.servers", None) or cfg.pop("metadata.broker.list", None)
    cfg.pop("bootstrap.servers", None)
    kw["bootstrap_servers"] = str(servers or "")
    kw["security_protocol"] = str(cfg.pop("security.protocol", "PLAINTEXT")).upper()
    mech = cfg.pop("sasl.mechanism", None) or cfg.pop("sasl.mechanisms", None)
    kw["sasl_mechanism"] = str(mech).upper() if mech else None
    username, password = cfg.pop("sasl.username", None), cfg.pop("sasl.password", None)
    jaas = cfg.pop("sasl.jaas.config", None)
    jaas_oauth: dict[str, str] = {}
    if jaas is not None and "OAuthBearerLoginModule" in str(jaas):
        jaas_oauth = dict(_JAAS.findall(str(jaas)))
    elif jaas is not None:
        username, password = _jaas_credentials(str(jaas), source)
    kw["sasl_username"], kw["sasl_password"] = username, password
    kw["oauth"] = _oauth_settings(cfg, jaas_oauth, source)
    kw["ssl_cafile"] = cfg.pop("ssl.ca.location", None)
    kw["ssl_certfile"] = cfg.pop("ssl.certificate.location", None)
    kw["ssl_keyfile"] = cfg.pop("ssl.key.location", None)
    kw["ssl_key_password"] = cfg.pop("ssl.key.password", None)
    # Java clients: PEM stores are used as they are; JKS and PKCS12 (Kafka's default type is JKS) are
    # read here and handed to the client as PEM files (cluster/stores.py).
    for store in ("ssl.truststore", "ssl.keystore"):
        location = cfg.pop(f"{store}.location", None)
        kind = str(cfg.pop(f"{store}.type", "JKS")).strip().upper()
        store_password = cfg.pop(f"{store}.password", None)
        if location is None:
            continue
        location = str(location)
        if kind == "PEM":
            if store == "ssl.truststore":
                kw["ssl_cafile"] = location
            else:
                kw["ssl_certfile"] = kw["ssl_keyfile"] = location
        elif kind in stores.STORE_TYPES:
            try:
                if store == "ssl.truststore":
                    kw["ssl_cafile"] = stores.trusted_certificates_pem(location, kind, store_password, source)
                else:
                    material = stores.key_material(location, kind, store_password, kw["ssl_key_password"], source)
                    kw["ssl_certfile"], kw["ssl_keyfile"] = material.certfile, material.keyfile
                    kw["ssl_key_password"] = material.key_password
            except stores.StoreError as exc:
                raise ConnectionSettingsError(str(exc)) from None
        else:
            raise ConnectionSettingsError(f"{source}: {store}.type {kind}: not one of PEM, {', '.join(stores.STORE_TYPES)}")
    if "ssl.endpoint.identification.algorithm" in cfg:
        algo = str(cfg.pop("ssl.endpoint.identification.algorithm")).strip().lower()
        kw["ssl_check_hostname"] = algo not in ("", "none")
    if "enable.ssl.certificate.verification" in cfg:
        if not _bool(cfg.pop("enable.ssl.certificate.verification"), "enable.ssl.certificate.verification", source):
            raise ConnectionSettingsError(
                f"{source}: enable.ssl.certificate.verification=false is refused: an unverified TLS connection to "
                "a cluster we are about to reassign is not safe")
    if "client.id" in cfg:
        kw["client_id"] = str(cfg.pop("client.id"))
    if "request.timeout.ms" in cfg:
        try:  # an int in Kafka's ConfigDef; 0 would fail every request at once
            kw["request_timeout_ms"] = parse_int(str(cfg.pop("request.timeout.ms")), f"{source}: request.timeout.ms", 1, INT32_MAX,
                                                 "milliseconds")
        except InputError as exc:
            raise ConnectionSettingsError(str(exc)) from None
    for key in list(cfg):
        if key in IGNORED_KEYS:
            cfg.pop(key)
    unknown = sorted(k for k in cfg if k.startswith(("ssl.", "sasl.", "security.")))
    if unknown:
        raise ConnectionSettingsError(f"{source}: unsupported security setting(s) {', '.join(unknown)}; refusing to connect without them")
    return ConnectionSettings(**kw)


def parse_properties(text: str) -> dict[str, str]:
    """Java .properties: key=value or key: value, # and ! comments, backslash line continuations."""
    out: dict[str, str] = {}
    logical, pending = [], ""
    for raw in text.splitlines():
        line = pending + raw.strip() if pending else raw.strip()
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]
            continue
        pending = ""
        logical.append(line)
    for line in logical:
        if not line or line[0] in "#!":
            continue
        m = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def settings_from_properties(path: Path | str, bootstrap_servers: str | None) -> ConnectionSettings:
    p = Path(path)
    try:
        text = read_text(p, "client properties file")
    except InputError as exc:
        raise ConnectionSettingsError(str(exc)) from None
    return settings_from_config(parse_properties(text), str(p), bootstrap_servers)


def settings_from_airflow_extra(extra: Mapping[str, Any], conn_id: str = "kafka_default") -> ConnectionSettings:
    return settings_from_config(extra, f"Airflow connection {conn_id!r} extra")


def settings_from_airflow_connection(conn_id: str = "kafka_default") -> ConnectionSettings:
    from airflow.sdk import BaseHook

    try:
        conn = BaseHook.get_connection(conn_id)
    except Exception as exc:
        from kafka_rebalance.cluster.admin import ClusterConnectionError

        raise ClusterConnectionError(f"Airflow connection {conn_id!r}: {exc}") from None
    return settings_from_airflow_extra(conn.extra_dejson, conn_id)


class RedactSecrets(logging.Filter):
    """Replace secret values in log records of the client library (its DEBUG line prints every argument)."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: let logging report it as usual
            return True
        if any(s in message for s in self.secrets):
            for s in self.secrets:
                message = message.replace(s, "***")
            record.msg, record.args = message, None
        return True


REDACTOR = RedactSecrets()


def install_redaction(secrets: list[str]) -> None:
    """Attach the redacting filter to every kafka-python logger (filters do not inherit)."""
    REDACTOR.secrets.update(secrets)
    names = [n for n in logging.Logger.manager.loggerDict if n == "kafka" or n.startswith("kafka.")]
    for name in ["kafka", *names]:
        logger = logging.getLogger(name)
        if REDACTOR not in logger.filters:
            logger.addFilter(REDACTOR)
