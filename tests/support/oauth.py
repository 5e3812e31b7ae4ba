"""An OAuth 2 client-credentials token endpoint on 127.0.0.1 (http.server), as an identity provider serves one.

It knows one client (id and secret, checked from the HTTP Basic header as RFC 6749 says) and issues
unsecured JWS tokens (``alg: none``, ``sub`` = the client id), which Kafka's default OAUTHBEARER
validator accepts. ``issued`` counts the tokens handed out; ``answer`` may replace the answer to a
valid request (a status and a JSON body) to play a failing provider.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def unsecured_jws(subject: str, lifetime_s: int = 3600) -> str:
    now = int(time.time())
    return _b64({"alg": "none"}) + "." + _b64({"sub": subject, "iat": now, "exp": now + lifetime_s}) + "."


class TokenEndpoint:
    def __init__(self, client_id: str, secret: str) -> None:
        expected = "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()
        self.issued = 0
        self.answer: tuple[int, bytes] | None = None
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                if self.path != "/token" or "grant_type=client_credentials" not in body.split("&"):
                    return self._answer(400, json.dumps({"error": "invalid_request"}).encode())
                if self.headers.get("Authorization") != expected:
                    return self._answer(401, json.dumps({"error": "invalid_client"}).encode())
                if endpoint.answer is not None:
                    return self._answer(*endpoint.answer)
                endpoint.issued += 1
                return self._answer(200, json.dumps({"access_token": unsecured_jws(client_id), "token_type": "Bearer",
                                                     "expires_in": 3600}).encode())

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/token"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def __enter__(self) -> TokenEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
