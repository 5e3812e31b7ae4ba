"""SASL/OAUTHBEARER tokens by the OAuth 2 client-credentials grant, as Kafka's Java client gets them.

Kafka's ``OAuthBearerLoginCallbackHandler`` posts ``grant_type=client_credentials`` (and ``scope``) to
``sasl.oauthbearer.token.endpoint.url`` with the client id and secret as HTTP Basic credentials, and
hands the ``access_token`` of the JSON answer to the broker. The same request is made here. Like the
Java client, environment proxies are not used, and an https endpoint is verified with the client's
own CA setting. The client secret is never put in a message.
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

from kafka.net.sasl.oauth import AbstractTokenProvider

from kafka_rebalance.cluster.failures import ConnectFailure, FailureKind, TokenEndpointError

# Refresh a token once this share of its lifetime has passed (Kafka's sasl.login.refresh.window.factor default).
REFRESH_WINDOW = 0.8


@dataclass(frozen=True, slots=True)
class ClientCredentials:
    token_endpoint: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str | None = None
    urlencode_header: bool = False  # sasl.oauthbearer.header.urlencode
    timeout_s: float = 10.0
    cafile: str | None = None  # for an https endpoint; None: the system's CAs

    def basic_authorization(self) -> str:
        quote = (lambda s: urllib.parse.quote(s, safe="")) if self.urlencode_header else (lambda s: s)
        pair = f"{quote(self.client_id)}:{quote(self.client_secret)}"
        return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")

    def request_body(self) -> bytes:
        fields = {"grant_type": "client_credentials"}
        if self.scope:
            fields["scope"] = self.scope
        return urllib.parse.urlencode(fields).encode("ascii")


def _failure(kind: FailureKind, detail: str) -> TokenEndpointError:
    return TokenEndpointError(ConnectFailure(kind, detail))


def fetch_token(credentials: ClientCredentials) -> tuple[str, float | None]:
    """The access token and its lifetime in seconds (None if the endpoint did not say)."""
    url = credentials.token_endpoint
    request = urllib.request.Request(url, data=credentials.request_body(), method="POST", headers={
        "Authorization": credentials.basic_authorization(), "Content-Type": "application/x-www-form-urlencoded",
        "Accept": "application/json", "Cache-Control": "no-cache"})
    handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})]
    if url.startswith("https:"):
        handlers.append(urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=credentials.cafile)))
    opener = urllib.request.build_opener(*handlers)
    who = f"client {credentials.client_id!r}"
    try:
        with opener.open(request, timeout=credentials.timeout_s) as response:
            body = response.read(1 << 20)
    except urllib.error.HTTPError as exc:
        error = _oauth_error(exc)
        if exc.code in (400, 401, 403) and error in ("invalid_client", "unauthorized_client", "access_denied", None):
            raise _failure(FailureKind.BAD_CREDENTIALS, f"the token endpoint {url} refused the credentials of {who} "
                                                        f"(HTTP {exc.code}{f' {error}' if error else ''})") from None
        raise _failure(FailureKind.TOKEN_ENDPOINT, f"{url} answered HTTP {exc.code}"
                                                   f"{f' {error}' if error else ''} to {who}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise _failure(FailureKind.TOKEN_ENDPOINT, f"{url}: {_reason(reason, credentials.timeout_s)}") from None
    try:
        answer = json.loads(body)
        token = answer["access_token"]
        lifetime = answer.get("expires_in")
    except (ValueError, KeyError, TypeError, AttributeError):
        raise _failure(FailureKind.TOKEN_ENDPOINT, f"{url} answered without a JSON access_token") from None
    if not isinstance(token, str) or not token:
        raise _failure(FailureKind.TOKEN_ENDPOINT, f"{url} answered an empty access_token")
    return token, float(lifetime) if isinstance(lifetime, int | float) and lifetime > 0 else None


def _oauth_error(exc: urllib.error.HTTPError) -> str | None:
    """RFC 6749's ``error`` code of an error answer (invalid_client ...), if it has one."""
    try:
        code = json.loads(exc.read(1 << 16)).get("error")
    except (ValueError, AttributeError, OSError):
        return None
    return code if isinstance(code, str) and code.replace("_", "").isalnum() else None


def _reason(reason: object, timeout_s: float) -> str:
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (is the token endpoint URL right?)"
    if isinstance(reason, socket.gaierror):
        return "the host name does not resolve"
    if isinstance(reason, TimeoutError | socket.timeout):
        return f"no answer within {timeout_s:g}s"
    if isinstance(reason, ssl.SSLCertVerificationError):
        return f"its TLS certificate is not trusted ({reason.verify_message})"
    if isinstance(reason, OSError):
        return f"{type(reason).__name__} (errno {reason.errno})"
    return type(reason).__name__


class ClientCredentialsTokenProvider(AbstractTokenProvider):
    """kafka-python's token provider: one token reused until most of its lifetime has passed."""

    def __init__(self, credentials: ClientCredentials) -> None:
        super().__init__()
        self.credentials = credentials
        self._lock = threading.Lock()
        self._token: str | None = None
        self._refresh_at = 0.0

    def token(self) -> str:
        with self._lock:
            if self._token is None or time.monotonic() >= self._refresh_at:
                token, lifetime = fetch_token(self.credentials)
                self._token = token
                self._refresh_at = time.monotonic() + (lifetime * REFRESH_WINDOW if lifetime else 300.0)
            return self._token
