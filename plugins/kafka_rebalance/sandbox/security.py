"""TLS and SASL listeners for a sandbox broker, and the key material they need, made as operators make theirs.

A CA and certificates are made with ``openssl``; the stores a Java client or broker reads (JKS and
PKCS12 truststores and keystores) with Java's ``keytool``. One broker can carry every set-up side by
side, each on a listener of its own (``listener.name.<name>.*`` overrides), beside the sandbox's
PLAINTEXT listener that the brokers and the sandbox's own checks keep using:

- SSL with server-only TLS, SSL with mutual TLS (``ssl.client.auth=required``);
- SASL_SSL with PLAIN, with SCRAM-SHA-256/512 (users written at format time with
  ``kafka-storage format --add-scram``), with OAUTHBEARER (Kafka's unsecured JWS validator: a token
  is trusted for its ``sub`` claim, enough for a sandbox, never for production);
- SSL listeners presenting an expired certificate and one for another host name, so that a client's
  verification failures can be shown on a real broker.

Everything here is sandbox material: one password for every store, files under the sandbox's own
directory (0700 keys), removed with it.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafka_rebalance.sandbox.cluster import SandboxError, free_ports

SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
# keytool is a JVM start each: C1 only, the serial GC and a small heap take a third off its CPU time.
KEYTOOL_JVM = ("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-Xshare:auto", "-J-Xmx64m")
WRONG_HOST = "kafka.invalid"  # a name no resolver answers (RFC 6761), in the wrong-host certificate only


@dataclass(frozen=True)
class Pki:
    """The files ``make_pki`` wrote; one password opens every store (sandbox material only)."""

    directory: Path
    password: str = field(repr=False)
    ca: Path  # PEM: the CA that signed the broker's and the client's certificates
    broker_keystore: Path  # JKS: 127.0.0.1 in the subject alternative names
    expired_keystore: Path  # PKCS12: valid two days ago until yesterday
    wrong_host_keystore: Path  # PKCS12: names kafka.invalid only
    client_keystore_jks: Path  # the client's key for mutual TLS
    client_keystore_p12: Path
    truststore_jks: Path  # the CA, for clients
    truststore_p12: Path
    other_ca: Path  # PEM: a CA that signed nothing the broker presents


@dataclass(frozen=True)
class SecureListener:
    """One listener of the broker: its name, security protocol, SASL mechanisms and key material."""

    name: str
    protocol: str  # SSL, SASL_SSL or SASL_PLAINTEXT
    mechanisms: tuple[str, ...] = ()
    client_auth: bool = False
    keystore: str = "broker"  # broker, expired or wrong-host


# The set-ups an operator's client.properties can express, one listener each.
LISTENERS = (
    SecureListener("TLS", "SSL"),
    SecureListener("MTLS", "SSL", client_auth=True),
    SecureListener("SASL_PLAIN", "SASL_SSL", ("PLAIN",)),
    SecureListener("SASL_SCRAM", "SASL_SSL", SCRAM_MECHANISMS),
    SecureListener("SASL_OAUTH", "SASL_SSL", ("OAUTHBEARER",)),
    SecureListener("EXPIRED", "SSL", keystore="expired"),
    SecureListener("WRONG_HOST", "SSL", keystore="wrong-host"),
)


def _tool(name: str) -> str:
    found = shutil.which(name)
    if not found:
        raise SandboxError(f"{name} is not on PATH; the sandbox's TLS listeners need it "
                           "(Debian/Ubuntu: apt-get install -y openssl openjdk-17-jre-headless)")
    return found


def _run(*commands: Sequence[str], cwd: Path) -> None:
    """Run the commands side by side (keytool is a JVM start each) and fail on the first that failed."""
    procs = [(cmd, subprocess.Popen([_tool(cmd[0]), *cmd[1:]], cwd=cwd, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)) for cmd in commands]
    failed = []
    for cmd, proc in procs:
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            last = [line for line in out.splitlines() if line.strip()][-1:] or ["no output"]
            failed.append(f"{cmd[0]} {next(a for a in cmd[1:] if not a.startswith('-J'))}: {last[0]}")
    if failed:
        raise SandboxError(f"making the sandbox's key material in {cwd} failed: {failed[0]}")


def _openssl_date(when: dt.datetime) -> str:
    return when.strftime("%Y%m%d%H%M%SZ")


def _leaf(directory: Path, name: str, subject: str, san: str, usage: str, dates: tuple[dt.datetime, dt.datetime],
          password: str) -> Path:
    """A key and a certificate signed by the CA (``openssl ca``, for explicit dates), as a PKCS12 file with the CA."""
    key, csr, pem, p12 = (directory / f"{name}.{ext}" for ext in ("key", "csr", "pem", "openssl.p12"))
    ext = directory / f"{name}.ext"
    ext.write_text(f"subjectAltName={san}\nextendedKeyUsage={usage}\nbasicConstraints=critical,CA:FALSE\n")
    _run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key.name,
          "-out", csr.name, "-subj", f"/CN={subject}"], cwd=directory)
    _run(["openssl", "ca", "-batch", "-config", "ca.cnf", "-in", csr.name, "-out", pem.name, "-notext",
          "-startdate", _openssl_date(dates[0]), "-enddate", _openssl_date(dates[1]), "-extfile", ext.name], cwd=directory)
    _run(["openssl", "pkcs12", "-export", "-inkey", key.name, "-in", pem.name, "-certfile", "ca.pem", "-name", name,
          "-out", p12.name, "-passout", f"pass:{password}"], cwd=directory)
    return p12


def _import_keystore(source: Path, target: Path, kind: str, password: str) -> list[str]:
    return ["keytool", *KEYTOOL_JVM, "-importkeystore", "-noprompt", "-srckeystore", source.name, "-srcstoretype", "PKCS12",
            "-srcstorepass", password, "-destkeystore", target.name, "-deststoretype", kind, "-deststorepass", password,
            "-destkeypass", password]


def _import_ca(ca: Path, target: Path, kind: str, password: str) -> list[str]:
    return ["keytool", *KEYTOOL_JVM, "-importcert", "-noprompt", "-alias", "ca", "-file", ca.name, "-keystore", target.name,
            "-storetype", kind, "-storepass", password]


def make_pki(directory: Path, password: str, now: dt.datetime | None = None) -> Pki:
    """A CA, the broker's certificates (good, expired, for another host), a client's, and the stores, in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    now = now or dt.datetime.now(dt.UTC)
    valid = (now - dt.timedelta(hours=1), now + dt.timedelta(days=2))
    for ca in ("ca", "other-ca"):
        _run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
              "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "3", "-subj", f"/CN=sandbox {ca}",
              "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
             cwd=directory)
    (directory / "index.txt").write_text("")
    (directory / "serial").write_text("1000\n")
    (directory / "ca.cnf").write_text(
        "[ca]\ndefault_ca = sandbox\n[sandbox]\ndatabase = index.txt\nnew_certs_dir = .\nserial = serial\n"
        "certificate = ca.pem\nprivate_key = ca.key\ndefault_md = sha256\npolicy = any\nunique_subject = no\n"
        "[any]\ncommonName = supplied\n")
    server = "serverAuth"
    broker = _leaf(directory, "broker", "127.0.0.1", "IP:127.0.0.1,DNS:localhost", server, valid, password)
    expired = _leaf(directory, "expired", "127.0.0.1", "IP:127.0.0.1,DNS:localhost", server,
                    (now - dt.timedelta(days=2), now - dt.timedelta(days=1)), password)
    wrong_host = _leaf(directory, "wrong-host", WRONG_HOST, f"DNS:{WRONG_HOST}", server, valid, password)
    client = _leaf(directory, "client", "kafka-rebalance-client", "DNS:kafka-rebalance-client", "clientAuth", valid,
                   password)
    pki = Pki(directory, password, directory / "ca.pem", directory / "broker.jks", expired, wrong_host,
              directory / "client.jks", directory / "client.p12", directory / "truststore.jks", directory / "truststore.p12",
              directory / "other-ca.pem")
    _run(_import_keystore(broker, pki.broker_keystore, "JKS", password),
         _import_keystore(client, pki.client_keystore_jks, "JKS", password),
         _import_keystore(client, pki.client_keystore_p12, "PKCS12", password),
         _import_ca(pki.ca, pki.truststore_jks, "JKS", password),
         _import_ca(pki.ca, pki.truststore_p12, "PKCS12", password), cwd=directory)
    for path in directory.iterdir():
        path.chmod(0o600)
    return pki


def listener_ports(listeners: Sequence[SecureListener] = LISTENERS) -> dict[str, int]:
    return dict(zip((listener.name for listener in listeners), free_ports(len(listeners)), strict=True))


def _sasl_properties(prefix: str, listener: SecureListener, plain_users: Mapping[str, str]) -> dict[str, str]:
    props = {f"{prefix}.sasl.enabled.mechanisms": ",".join(listener.mechanisms)}
    for mechanism in listener.mechanisms:
        key = f"{prefix}.{mechanism.lower()}.sasl.jaas.config"
        if mechanism == "PLAIN":
            accounts = " ".join(f'user_{user}="{password}"' for user, password in plain_users.items())
            props[key] = f"org.apache.kafka.common.security.plain.PlainLoginModule required {accounts};"
        elif mechanism in SCRAM_MECHANISMS:
            props[key] = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
        elif mechanism == "OAUTHBEARER":
            # The broker's own login (never used: brokers talk over PLAINTEXT) still needs a subject.
            props[key] = ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
                          'unsecuredLoginStringClaim_sub="broker";')
        else:
            raise SandboxError(f"listener {listener.name}: SASL mechanism {mechanism} is not one the sandbox sets up")
    return props


def listener_properties(pki: Pki, ports: Mapping[str, int], plain_users: Mapping[str, str],
                        listeners: Sequence[SecureListener] = LISTENERS) -> Callable[[int, int, int], dict[str, str]]:
    """``node_properties`` for ``cluster.up``: these listeners beside the sandbox's PLAINTEXT and CONTROLLER ones."""
    keystores = {"broker": (pki.broker_keystore, "JKS"), "expired": (pki.expired_keystore, "PKCS12"),
                 "wrong-host": (pki.wrong_host_keystore, "PKCS12")}

    def node_properties(node_id: int, port: int, controller_port: int) -> dict[str, str]:
        del node_id  # one set of listeners per sandbox; several nodes would need ports each
        extra = ",".join(f"{listener.name}://127.0.0.1:{ports[listener.name]}" for listener in listeners)
        protocols = ",".join(f"{listener.name}:{listener.protocol}" for listener in listeners)
        props = {
            "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port},{extra}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port},{extra}",
            "listener.security.protocol.map": f"CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,{protocols}",
        }
        for listener in listeners:
            prefix = f"listener.name.{listener.name.lower()}"
            if listener.protocol.endswith("SSL"):
                store, kind = keystores[listener.keystore]
                props.update({f"{prefix}.ssl.keystore.location": str(store), f"{prefix}.ssl.keystore.type": kind,
                              f"{prefix}.ssl.keystore.password": pki.password, f"{prefix}.ssl.key.password": pki.password})
                if listener.client_auth:
                    props.update({f"{prefix}.ssl.client.auth": "required", f"{prefix}.ssl.truststore.type": "PEM",
                                  f"{prefix}.ssl.truststore.location": str(pki.ca)})
            if listener.protocol.startswith("SASL"):
                props.update(_sasl_properties(prefix, listener, plain_users))
        return props

    return node_properties


def scram_format_args(users: Mapping[str, str], mechanisms: Sequence[str] = SCRAM_MECHANISMS) -> list[str]:
    """``kafka-storage format`` arguments that write SCRAM credentials for these users before the first start."""
    args: list[str] = []
    for user, password in users.items():
        for mechanism in mechanisms:
            args += ["--add-scram", f"{mechanism}=[name={user},password={password}]"]
    return args
