"""kafka-python's network client, with typed connection failures and a bootstrap that stops at a definitive one.

Given to ``KafkaAdminClient`` through its ``kafka_client`` setting. Four differences from the
library's own (3.0.x):

- Bytes that arrive together with the server's close are handed to the protocol before the
  close is. The library drops them, so a broker's SASL_AUTHENTICATION_FAILED response, sent just
  before it closes the connection, was lost about half the time and the failure looked like a
  broken TLS stream.
- Connect, TLS and receive failures keep Python's own exception (``ConnectionRefusedError``,
  ``ssl.SSLCertVerificationError`` ...) instead of a message string, so ``failures.classify`` can
  name the cause from its type.
- While bootstrapping, a definitive failure ends the attempt at once: bad credentials, a SASL
  mechanism the broker does not offer or a TLS verification failure on any bootstrap server, or
  every bootstrap server refusing / closing. Only a silent address waits for the bootstrap timeout.
- The wrong security protocol is named from the first bytes: a TLS record where a plaintext client
  expected a Kafka response (the listener speaks TLS), or a close without a TLS reply to our
  ClientHello (it does not). The library read the former as a 350 MB response and waited.
"""

from __future__ import annotations

import errno
import os
import socket
import ssl
import time
from typing import Any

import kafka.errors as kafka_errors
from kafka.net.compat import KafkaNetClient
from kafka.net.manager import KafkaConnectionManager
from kafka.net.selector import NetworkSelector
from kafka.net.transport import KafkaSSLTransport, KafkaTCPTransport

from kafka_rebalance.cluster.failures import (
    ConnectFailure,
    FailureKind,
    HandshakeClosedError,
    HandshakeTimeoutError,
    PeerClosedError,
    ReceiveError,
    TLSAnswerError,
    TransportSetupError,
    classify,
    is_tls_record,
)

# A failure of one of these kinds is the cluster's answer, whichever bootstrap server gave it.
_CLUSTER_WIDE = {FailureKind.BAD_CREDENTIALS, FailureKind.SASL_MECHANISM, FailureKind.TLS, FailureKind.AUTHORIZATION}
_RETRY_CONNECT = (errno.EINPROGRESS, errno.EALREADY, errno.EWOULDBLOCK)


class BootstrapFailed(kafka_errors.KafkaError):
    """The bootstrap ended at a definitive failure; ``failure`` says which."""

    def __init__(self, failure: ConnectFailure) -> None:
        super().__init__(failure.kind.name)
        self.failure = failure


class _DeliverBeforeClose:
    """Transport mixin: data read in the same pass as the close reaches the protocol first."""

    _sock: Any
    _read: bool
    _closed: bool
    _net: Any
    _protocol: Any
    last_read: float
    abort: Any
    _answered = False

    def _screen_first(self, data: bytes) -> BaseException | None:
        """The server's first bytes, before the protocol reads them as a response; an error ends the connection."""
        return None

    def _sock_recv(self) -> tuple[bytes, BaseException | None]:
        chunks: list[bytes] = []
        while True:
            try:
                data = self._sock.recv(4096)
            except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return b"".join(chunks), None
            except OSError as exc:  # ssl.SSLError is one
                return b"".join(chunks), ReceiveError(exc)
            if not data:
                return b"".join(chunks), PeerClosedError()
            chunks.append(data)

    async def _read_from_sock(self) -> None:
        while self._read and not self._closed:
            await self._net.wait_read(self._sock)
            if self._closed or self._sock is None:
                return None
            data, err = self._sock_recv()
            if data and not self._answered:
                self._answered = True
                refused = self._screen_first(data)
                if refused is not None:
                    return self.abort(error=refused)
            if data:
                self.last_read = time.monotonic()
                if self._protocol and self._protocol._sensors:
                    self._protocol._sensors.bytes_received.record(len(data))
                try:
                    self._protocol.data_received(data)
                except kafka_errors.KafkaProtocolError as exc:
                    return self.abort(error=exc)
            if err is not None:
                if data:
                    # Let the request these bytes answered finish first (a SASL failure closes the
                    # connection itself, naming its own error) before the close is reported.
                    await self._net.sleep(0)
                    await self._net.sleep(0)
                return self.abort(error=err)


class _TCPTransport(_DeliverBeforeClose, KafkaTCPTransport):
    def _screen_first(self, data: bytes) -> BaseException | None:
        # A TLS listener answers our plaintext request with a TLS alert: say so now, not at the timeout.
        return TLSAnswerError(data[:5]) if is_tls_record(data) else None


class _SSLTransport(_DeliverBeforeClose, KafkaSSLTransport):
    async def handshake_until(self, timeout_at: float | None) -> None:
        """The library's handshake waits without a deadline: a server that never answers would hang us."""
        while True:
            try:
                self._sock.do_handshake()
                return
            except (ssl.SSLEOFError, ssl.SSLZeroReturnError, ConnectionResetError, BrokenPipeError) as exc:
                raise HandshakeClosedError(errno.ECONNRESET, "closed on the TLS ClientHello") from exc
            except ssl.SSLWantReadError:
                wait = self._net.wait_read
            except ssl.SSLWantWriteError:
                wait = self._net.wait_write
            try:
                await wait(self._sock, timeout_at=timeout_at)
            except kafka_errors.KafkaTimeoutError:
                raise HandshakeTimeoutError(errno.ETIMEDOUT, "TLS handshake not answered") from None


async def _open_socket(net: Any, host: str, port: int, options: Any, timeout_at: float | None) -> socket.socket:
    """A connected non-blocking socket, or the OSError the last address gave (typed: ConnectionRefusedError ...)."""
    infos = socket.getaddrinfo(host, port, socket.AF_UNSPEC, socket.SOCK_STREAM)  # socket.gaierror propagates
    last: OSError = OSError(errno.EADDRNOTAVAIL, "no address")
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        for option in options:
            sock.setsockopt(*option)
        code = sock.connect_ex(address)
        try:
            while code in _RETRY_CONNECT:
                if timeout_at is not None and time.monotonic() >= timeout_at:
                    raise TimeoutError(errno.ETIMEDOUT, "connect timed out")
                try:
                    await net.wait_write(sock, timeout_at=timeout_at)
                except kafka_errors.KafkaTimeoutError:
                    raise TimeoutError(errno.ETIMEDOUT, "connect timed out") from None
                code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        except BaseException:
            sock.close()
            raise
        if code in (0, errno.EISCONN):
            return sock
        sock.close()
        last = OSError(code, os.strerror(code))  # OSError(errno, ...) is built as its subclass, e.g. ConnectionRefusedError
    raise last


class FailFastManager(KafkaConnectionManager):
    def __init__(self, net: Any, **configs: Any) -> None:
        super().__init__(net, **configs)
        self.bootstrapping = True
        self.failures: dict[Any, ConnectFailure] = {}
        self._bootstrap_ids = {b.node_id for b in self.cluster.bootstrap_brokers()}

    def _classify(self, node_id: Any, exc: BaseException) -> None:
        if not self.bootstrapping or isinstance(exc, kafka_errors.Cancelled):
            return
        node = self.cluster.broker_metadata(node_id)
        failure = classify(exc, host=node.host if node else None, sasl=self.config["sasl_mechanism"],
                           user=self.config["sasl_plain_username"], client_cert=bool(self.config["ssl_certfile"]))
        server = f"{node.host}:{node.port}" if node else None
        self.failures[node_id] = ConnectFailure(failure.kind, failure.detail, server)

    def definitive_failure(self) -> ConnectFailure | None:
        for failure in self.failures.values():
            if failure.kind in _CLUSTER_WIDE:
                return failure
        if self._bootstrap_ids and all(self.failures.get(n) and self.failures[n].kind.definitive for n in self._bootstrap_ids):
            return self.failures[min(self._bootstrap_ids, key=str)]
        return None

    def last_failure(self) -> ConnectFailure | None:
        return next(reversed(self.failures.values()), None) if self.failures else None

    def get_connection(self, node_id: Any, timeout_ms: Any = None, pop_on_close: bool = True,
                       refresh_metadata_on_err: bool = True, reset_backoff_on_connect: bool = True) -> Any:
        if self.bootstrapping:
            failure = self.definitive_failure()
            if failure is not None:
                raise BootstrapFailed(failure)
        fresh = node_id not in self._conns
        conn = super().get_connection(node_id, timeout_ms=timeout_ms, pop_on_close=pop_on_close,
                                      refresh_metadata_on_err=refresh_metadata_on_err,
                                      reset_backoff_on_connect=reset_backoff_on_connect)
        if self.bootstrapping and fresh:
            conn.init_future.add_errback(lambda exc: self._classify(node_id, exc))
            conn.close_future.add_errback(lambda exc: self._classify(node_id, exc))
        return conn

    async def _build_transport(self, node: Any, timeout_at: float | None = None) -> Any:
        try:
            sock = await _open_socket(self._net, node.host, node.port, self.config["socket_options"], timeout_at)
        except OSError as exc:
            raise TransportSetupError(exc) from exc
        transport: Any
        try:
            if self.ssl_enabled:
                ssl_configs = {k: v for k, v in self.config.items() if k.startswith("ssl_")}
                transport = _SSLTransport(self._net, sock, host=node.host, **ssl_configs)
            else:
                transport = _TCPTransport(self._net, sock, host=node.host)
        except (OSError, ValueError) as exc:
            sock.close()
            raise TransportSetupError(exc) from exc
        try:
            if isinstance(transport, _SSLTransport):
                await transport.handshake_until(timeout_at)
            else:
                await transport.handshake()
        except OSError as exc:
            transport.close()
            raise TransportSetupError(exc) from exc
        return transport


class FailFastNetClient(KafkaNetClient):
    def __init__(self, **configs: Any) -> None:
        net = NetworkSelector(**configs)
        super().__init__(net=net, manager=FailFastManager(net, **configs), **configs)
