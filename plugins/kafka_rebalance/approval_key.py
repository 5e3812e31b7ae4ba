"""Signed approvals: with an approval key configured, write access to a plan directory is not enough to approve it.

approval.json binds a decision to a plan hash, but anyone who can write the directory can write that file.
With a key (``KAFKA_REBALANCE_APPROVAL_KEY`` in the environment, or the password of the Airflow connection
``kafka_rebalance_approval``), ``approve`` and the DAG's approval step sign the record (HMAC-SHA256 over its
canonical JSON), and every command that acts on the cluster refuses an approval that is unsigned, signed with
another key, or altered. The key never leaves the processes that approve and execute; approval.json records
only a fingerprint of it, so an operator can tell which key signed.

Without a key, approvals are not signed and are accepted as they are (the checks of plan_dir still bind them
to the plan hash).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
from collections.abc import Mapping
from typing import Any

from kafka_rebalance.errors import RebalanceError

APPROVAL_KEY_ENV = "KAFKA_REBALANCE_APPROVAL_KEY"
APPROVAL_CONNECTION = "kafka_rebalance_approval"
MIN_KEY_BYTES = 32  # 256 bits: what HMAC-SHA256 can use; a shorter key is refused, not padded
SIGNATURE = "signature"


class ApprovalKeyError(RebalanceError):
    """The approval key is unusable, or an approval is not signed with it."""


def configured_key() -> bytes | None:
    """The approval key of this process: the environment's, else (inside Airflow) the connection's; None: no key."""
    raw = os.environ.get(APPROVAL_KEY_ENV)
    source = APPROVAL_KEY_ENV
    if not raw and "airflow" in sys.modules:
        raw, source = _from_airflow(), f"the Airflow connection {APPROVAL_CONNECTION}'s password"
    if not raw:
        return None
    key = raw.encode("utf-8")
    if len(key) < MIN_KEY_BYTES:
        raise ApprovalKeyError(f"{source}: the approval key is {len(key)} bytes; use at least {MIN_KEY_BYTES} "
                               "(e.g. `openssl rand -hex 32`)")
    return key


def _from_airflow() -> str | None:
    try:
        from airflow.sdk import BaseHook

        return BaseHook.get_connection(APPROVAL_CONNECTION).password or None
    except Exception:  # no such connection (AirflowNotFoundException), or no Airflow context: no key
        return None


def fingerprint(key: bytes) -> str:
    """Which key signed, without revealing it."""
    return hashlib.sha256(b"kafka-rebalance approval key\0" + key).hexdigest()[:16]


def _mac(key: bytes, record: Mapping[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != SIGNATURE}
    return hmac.new(key, json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8"), hashlib.sha256).hexdigest()


def signed(record: Mapping[str, Any], key: bytes | None) -> dict[str, Any]:
    """``record`` with its signature (unchanged without a key)."""
    out = {k: v for k, v in record.items() if k != SIGNATURE}
    if key is not None:
        out[SIGNATURE] = {"key": fingerprint(key), "hmac_sha256": _mac(key, out)}
    return out


def signature_problem(record: Mapping[str, Any], key: bytes | None) -> str | None:
    """Why ``record`` is not an approval signed with ``key`` (None: it is, or no key is configured)."""
    if key is None:
        return None
    sig = record.get(SIGNATURE)
    if not isinstance(sig, dict):
        return (f"not signed, but this process has an approval key ({fingerprint(key)}): approvals must be made with it "
                "(kafka-rebalance approve, or the DAG's approval step, with the same key)")
    if sig.get("key") != fingerprint(key):
        return f"signed with key {sig.get('key')!r}, not with this process's approval key {fingerprint(key)}"
    if not hmac.compare_digest(str(sig.get("hmac_sha256")), _mac(key, record)):
        return "its signature does not match its content: it was altered after it was signed"
    return None
