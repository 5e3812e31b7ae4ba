"""Why a connection to a cluster failed, decided from the exception's type and error code, never its text.

kafka-python's own log lines and messages are not an interface: the same wrong password can show up
as an SSL read error in them, depending on when the broker's close arrives. Each cause below is
read from the exception class (Python's ``ssl``/``OSError`` types, kafka-python's broker error
classes, which carry Kafka's error codes) and turned into one line for the operator.

The same holds for a call the authorizer refused after connecting: which ACL each Kafka API needs, the
ACLs of each role (docs/KAFKA.md) and the one-line ``Denial`` an authorization error code becomes live here.
"""

from __future__ import annotations

import errno
import socket
import ssl
from dataclasses import dataclass
from enum import Enum

import kafka.errors as kafka_errors


class FailureKind(Enum):
    UNRESOLVED = "host name does not resolve"
    REFUSED = "connection refused"
    UNREACHABLE = "address unreachable"
    SILENT = "no answer"
    TLS = "TLS handshake failed"
    PEER_CLOSED = "connection closed by the server"
    SASL_MECHANISM = "SASL mechanism not enabled"
    BAD_CREDENTIALS = "bad credentials"
    AUTHORIZATION = "authorization denied"
    PROTOCOL = "protocol mismatch"
    TOKEN_ENDPOINT = "OAuth token endpoint failed"
    OTHER = "connection failed"

    @property
    def definitive(self) -> bool:
        """Waiting longer cannot change the answer (a silent address, or an unknown failure, might)."""
        return self not in (FailureKind.SILENT, FailureKind.OTHER)


@dataclass(frozen=True, slots=True)
class ConnectFailure:
    kind: FailureKind
    detail: str
    server: str | None = None

    def line(self) -> str:
        where = f" at {self.server}" if self.server else ""
        return f"{self.kind.value}{where}: {self.detail}"


class TransportSetupError(kafka_errors.KafkaConnectionError):
    """Connecting or the TLS handshake failed; ``original`` is the exception Python raised."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(type(original).__name__)
        self.original = original


class HandshakeTimeoutError(TimeoutError):
    """The server accepted the TCP connection and never answered the TLS handshake."""


class HandshakeClosedError(OSError):
    """The server closed the connection (or reset it) on our TLS ClientHello without a TLS reply.

    A TLS server that refuses a handshake sends an alert first; a Kafka listener without TLS reads the
    ClientHello as a request size of hundreds of megabytes and closes the connection, saying nothing.
    """


class TLSAnswerError(kafka_errors.KafkaConnectionError):
    """A TLS record came back where the answer to a plaintext Kafka request belongs: the listener speaks TLS.

    Kafka's TLS listener answers a plaintext request with a TLS alert (``15 03 03 ...``), which a
    plaintext client would otherwise read as a response of 350 MB and give up on only at its timeout.
    """

    def __init__(self, first: bytes) -> None:
        super().__init__("TLS record")
        self.first = first


class TokenEndpointError(kafka_errors.KafkaConnectionError):
    """The OAuth token endpoint did not give a token; ``failure`` names why (never the client secret)."""

    def __init__(self, failure: ConnectFailure) -> None:
        super().__init__(failure.detail)
        self.failure = failure


# A TLS record header: content type alert (0x15) or handshake (0x16), then major version 3 (SSL 3.0 to TLS 1.3).
_TLS_RECORD_TYPES = (0x15, 0x16)


def is_tls_record(data: bytes) -> bool:
    """Whether these first bytes from a server are a TLS record, not a Kafka response size."""
    return len(data) >= 2 and data[0] in _TLS_RECORD_TYPES and data[1] == 0x03


class PeerClosedError(kafka_errors.KafkaConnectionError):
    """The server closed the connection (an end of stream where a response was expected)."""


class ReceiveError(kafka_errors.KafkaConnectionError):
    """Reading from the socket raised; ``original`` is the exception Python raised."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(type(original).__name__)
        self.original = original


# OpenSSL's X509_V_ERR_* codes (ssl.SSLCertVerificationError.verify_code).
_CERT_EXPIRED, _CERT_NOT_YET_VALID = 10, 9
_UNTRUSTED = {2, 18, 19, 20, 21}  # no issuer, self-signed leaf, self-signed in chain, no local issuer, leaf unverifiable
_HOST_MISMATCH, _IP_MISMATCH = 62, 64

# ssl.SSLError.reason for alerts the broker sends about our side of the handshake.
_CLIENT_CERT_REASONS = {
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": "the broker requires a client certificate (ssl.keystore.location / ssl.certificate.location)",
    "SSLV3_ALERT_BAD_CERTIFICATE": "the broker refused our client certificate",
    "TLSV1_ALERT_UNKNOWN_CA": "the broker does not trust the CA that signed our client certificate",
    "SSLV3_ALERT_CERTIFICATE_EXPIRED": "the broker says our client certificate has expired",
}
# What a broker requiring mutual TLS answers a client that sent no certificate (JDK: bad_certificate).
_NO_CLIENT_CERT_REASONS = {"TLSV13_ALERT_CERTIFICATE_REQUIRED", "SSLV3_ALERT_BAD_CERTIFICATE"}
_NOT_TLS_REASONS = {"WRONG_VERSION_NUMBER", "UNKNOWN_PROTOCOL", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG"}

class AclResourceType(Enum):
    """Kafka's ACL resource types, spelled as ``kafka-acls.sh`` and the authorizer spell them."""

    CLUSTER = "CLUSTER"
    TOPIC = "TOPIC"
    GROUP = "GROUP"
    TRANSACTIONAL_ID = "TRANSACTIONAL_ID"
    DELEGATION_TOKEN = "DELEGATION_TOKEN"


class AclOperation(Enum):
    """The ACL operations this tool's Kafka calls need (Kafka's "Operations and Resources on Protocols")."""

    DESCRIBE = "DESCRIBE"
    DESCRIBE_CONFIGS = "DESCRIBE_CONFIGS"
    ALTER = "ALTER"
    ALTER_CONFIGS = "ALTER_CONFIGS"


CLUSTER_RESOURCE_NAME = "kafka-cluster"  # the one CLUSTER resource's name in every ACL


@dataclass(frozen=True, slots=True)
class Acl:
    """One operation on one resource type: what a Kafka API needs of the principal that sends it."""

    operation: AclOperation
    resource_type: AclResourceType

    def __str__(self) -> str:
        return f"{self.operation.value} on {self.resource_type.value}"


# What each API the live admin sends needs under an authorizer (Kafka's docs, "Operations and Resources on
# Protocols"; proven on StandardAuthorizer by tests/real_kafka/test_acls_on_real_kafka.py).
DESCRIBE_TOPIC = Acl(AclOperation.DESCRIBE, AclResourceType.TOPIC)  # Metadata, ListOffsets, DescribeLogDirs' topics
DESCRIBE_TOPIC_CONFIGS = Acl(AclOperation.DESCRIBE_CONFIGS, AclResourceType.TOPIC)  # DescribeConfigs of a topic
ALTER_TOPIC_CONFIGS = Acl(AclOperation.ALTER_CONFIGS, AclResourceType.TOPIC)  # IncrementalAlterConfigs of a topic
DESCRIBE_CLUSTER = Acl(AclOperation.DESCRIBE, AclResourceType.CLUSTER)  # DescribeLogDirs, ListPartitionReassignments
DESCRIBE_CLUSTER_CONFIGS = Acl(AclOperation.DESCRIBE_CONFIGS, AclResourceType.CLUSTER)  # DescribeConfigs of a broker
ALTER_CLUSTER = Acl(AclOperation.ALTER, AclResourceType.CLUSTER)  # AlterPartitionReassignments, ElectLeaders
ALTER_CLUSTER_CONFIGS = Acl(AclOperation.ALTER_CONFIGS, AclResourceType.CLUSTER)  # IncrementalAlterConfigs of a broker
# OffsetFetch of a consumer group: optional (no role needs it; without it consumer traffic is not measured)
DESCRIBE_GROUP = Acl(AclOperation.DESCRIBE, AclResourceType.GROUP)


class Role(Enum):
    """What a principal is used for; ``role_acls`` lists what each needs (docs/KAFKA.md shows them as commands)."""

    GATHER = "gather"  # gather, verify, status against a cluster
    PLAN = "plan"  # plan, validate, approve: they read the snapshot file, never the cluster
    EXECUTE = "execute"  # execute, cancel, the DAG's execute steps


# Kafka's authorizers let ALTER imply DESCRIBE and ALTER_CONFIGS imply DESCRIBE_CONFIGS on the same
# resource, so execute's four ACLs cover everything gather needs.
_ROLE_ACLS = {
    Role.GATHER: (DESCRIBE_CLUSTER, DESCRIBE_CLUSTER_CONFIGS, DESCRIBE_TOPIC, DESCRIBE_TOPIC_CONFIGS),
    Role.PLAN: (),
    Role.EXECUTE: (ALTER_CLUSTER, ALTER_CLUSTER_CONFIGS, DESCRIBE_TOPIC, ALTER_TOPIC_CONFIGS),
}
_IMPLIES = {AclOperation.ALTER: AclOperation.DESCRIBE, AclOperation.ALTER_CONFIGS: AclOperation.DESCRIBE_CONFIGS}


def role_acls(role: Role) -> tuple[Acl, ...]:
    """The ACLs to grant a principal of this role (on the cluster, and on topic ``*``)."""
    return _ROLE_ACLS[role]


def effective_acls(role: Role) -> tuple[Acl, ...]:
    """What a role's principal may do, its grants first, then what they imply, each once."""
    granted = _ROLE_ACLS[role]
    implied = tuple(Acl(_IMPLIES[a.operation], a.resource_type) for a in granted if a.operation in _IMPLIES)
    return tuple(dict.fromkeys(granted + implied))


@dataclass(frozen=True, slots=True)
class Denial:
    """The authorizer refused ``principal`` an operation: one line naming it, the resource and what needed it."""

    principal: str
    needed: Acl | None  # None: the error said which resource type, not which operation
    resource_type: AclResourceType
    resource_name: str | None  # None: not known (a whole request was refused)
    call: str

    def line(self) -> str:
        what = self.needed.operation.value if self.needed else "act"
        name = f" {self.resource_name}" if self.resource_name else ""
        return (f"authorization denied: {self.principal} may not {what} on {self.resource_type.value}{name} ({self.call} "
                "needs that ACL; the ACLs per role are in docs/KAFKA.md)")


_AUTHZ_RESOURCE = {
    kafka_errors.ClusterAuthorizationFailedError: AclResourceType.CLUSTER,
    kafka_errors.TopicAuthorizationFailedError: AclResourceType.TOPIC,
    kafka_errors.GroupAuthorizationFailedError: AclResourceType.GROUP,
    kafka_errors.TransactionalIdAuthorizationFailedError: AclResourceType.TRANSACTIONAL_ID,
    kafka_errors.DelegationTokenAuthorizationFailedError: AclResourceType.DELEGATION_TOKEN,
}


def authorization_resource(exc: BaseException | type[BaseException]) -> AclResourceType | None:
    """Kafka's ACL resource type an authorization error (an exception or its class, as a per-resource or
    per-partition error code maps to) is about, or None if it is not one."""
    cls = exc if isinstance(exc, type) else type(exc)
    for error, resource in _AUTHZ_RESOURCE.items():
        if issubclass(cls, error):
            return resource
    return None


def denial(exc: BaseException | type[BaseException], principal: str, call: str, needs: Acl | None = None,
           name: str | None = None) -> Denial | None:
    """The denial an authorization error means, or None if it is not one. ``needs`` is what ``call`` requires;
    it names the operation when it is about the resource type the broker refused."""
    resource = authorization_resource(exc)
    if resource is None:
        return None
    needed = needs if needs is not None and needs.resource_type is resource else None
    if name is None and resource is AclResourceType.CLUSTER:
        name = CLUSTER_RESOURCE_NAME
    return Denial(principal, needed, resource, name, call)


def _tls(exc: ssl.SSLError, host: str | None, client_cert: bool | None) -> ConnectFailure:
    if isinstance(exc, ssl.SSLCertVerificationError):
        code = exc.verify_code
        if code == _CERT_EXPIRED:
            return ConnectFailure(FailureKind.TLS, "the broker's certificate has expired")
        if code == _CERT_NOT_YET_VALID:
            return ConnectFailure(FailureKind.TLS, "the broker's certificate is not valid yet (check the clocks)")
        if code in _UNTRUSTED:
            return ConnectFailure(FailureKind.TLS, "the broker's certificate is signed by an unknown CA "
                                                   "(set ssl.truststore.location or ssl.ca.location to the cluster's CA)")
        if code in (_HOST_MISMATCH, _IP_MISMATCH):
            return ConnectFailure(FailureKind.TLS, f"the broker's certificate does not name {host or 'this host'} "
                                                   "(hostname mismatch; connect by a name the certificate lists)")
        return ConnectFailure(FailureKind.TLS, f"certificate verification failed (OpenSSL error {code})")
    reason = getattr(exc, "reason", None)
    if reason in _NO_CLIENT_CERT_REASONS and client_cert is False:
        return ConnectFailure(FailureKind.TLS, "the broker requires a client certificate (mutual TLS) and none is set "
                                               "(ssl.keystore.location, or ssl.certificate.location and ssl.key.location)")
    if reason in _CLIENT_CERT_REASONS:
        return ConnectFailure(FailureKind.TLS, _CLIENT_CERT_REASONS[reason])
    if reason in _NOT_TLS_REASONS:
        return ConnectFailure(FailureKind.PROTOCOL, "the listener does not speak TLS (is security.protocol right?)")
    if isinstance(exc, ssl.SSLEOFError | ssl.SSLZeroReturnError):
        return ConnectFailure(FailureKind.TLS, "the broker closed the connection during the handshake")
    return ConnectFailure(FailureKind.TLS, f"OpenSSL reason {reason or type(exc).__name__}")


def _os_error(exc: OSError, sasl: str | None) -> ConnectFailure:
    if isinstance(exc, socket.gaierror):
        return ConnectFailure(FailureKind.UNRESOLVED, "check the host part of bootstrap.servers")
    if isinstance(exc, ConnectionRefusedError):
        return ConnectFailure(FailureKind.REFUSED, "nothing listens on that host:port")
    if isinstance(exc, HandshakeClosedError):
        plain = "SASL_PLAINTEXT" if sasl else "PLAINTEXT"
        return ConnectFailure(FailureKind.PROTOCOL, "the listener closed the connection at our TLS ClientHello without a "
                                                    f"TLS reply: it does not speak TLS (set security.protocol={plain}?)")
    if isinstance(exc, HandshakeTimeoutError):
        return ConnectFailure(FailureKind.SILENT, "the TLS handshake was not answered (is this listener TLS? "
                                                  "check security.protocol)")
    if isinstance(exc, TimeoutError):
        return ConnectFailure(FailureKind.SILENT, "the TCP connection was not answered")
    if exc.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
        return ConnectFailure(FailureKind.UNREACHABLE, "no route to that address")
    if isinstance(exc, ConnectionResetError | ConnectionAbortedError | BrokenPipeError):
        return ConnectFailure(FailureKind.PEER_CLOSED, "the server reset the connection (is security.protocol right for "
                                                      "this listener?)")
    return ConnectFailure(FailureKind.OTHER, f"{type(exc).__name__} (errno {exc.errno})")


def classify(exc: BaseException, *, host: str | None = None, sasl: str | None = None, user: str | None = None,
             client_cert: bool | None = None) -> ConnectFailure:
    """The cause of one failed connection attempt; ``sasl``/``user``/``client_cert`` only name what was tried."""
    if isinstance(exc, TransportSetupError | ReceiveError):
        return classify(exc.original, host=host, sasl=sasl, user=user, client_cert=client_cert)
    if isinstance(exc, ssl.SSLError):
        return _tls(exc, host, client_cert)
    if isinstance(exc, OSError):
        return _os_error(exc, sasl)
    if isinstance(exc, TLSAnswerError):
        secure = "SASL_SSL" if sasl else "SSL"
        record = "alert" if exc.first[0] == 0x15 else "handshake record"
        return ConnectFailure(FailureKind.PROTOCOL, f"the listener speaks TLS (it answered with a TLS {record}): "
                                                    f"set security.protocol={secure} and its ssl.* settings")
    if isinstance(exc, TokenEndpointError):
        return exc.failure
    if isinstance(exc, kafka_errors.SaslAuthenticationFailedError):
        if sasl == "OAUTHBEARER":
            return ConnectFailure(FailureKind.BAD_CREDENTIALS, "the broker rejected the OAuth token (SASL OAUTHBEARER)")
        return ConnectFailure(FailureKind.BAD_CREDENTIALS,
                              f"the broker rejected the credentials of user {user!r} (SASL {sasl})")
    if isinstance(exc, kafka_errors.UnsupportedSaslMechanismError):
        return ConnectFailure(FailureKind.SASL_MECHANISM, f"SASL {sasl} is not enabled on this listener (sasl.mechanism)")
    if isinstance(exc, kafka_errors.IllegalSaslStateError):
        return ConnectFailure(FailureKind.PROTOCOL, "the listener does not do SASL (is security.protocol right?)")
    resource = authorization_resource(exc)
    if resource is not None:
        return ConnectFailure(FailureKind.AUTHORIZATION, f"not allowed to describe the {resource.value} resource")
    if isinstance(exc, PeerClosedError):
        return ConnectFailure(FailureKind.PEER_CLOSED, "closed before answering (is security.protocol right for this "
                                                       "listener? a SASL or TLS listener closes a plain request)")
    if isinstance(exc, kafka_errors.RequestTimedOutError):
        return ConnectFailure(FailureKind.SILENT, "the server accepted the connection but did not answer the first "
                                                  "request (is this a Kafka listener?)")
    if isinstance(exc, kafka_errors.KafkaTimeoutError):
        return ConnectFailure(FailureKind.SILENT, "nothing answered")
    return ConnectFailure(FailureKind.OTHER, type(exc).__name__)
