"""The HTTP server: Cognito's JSON protocol on POST /, the tests' admin endpoints under /_fake/,
faults applied on the socket, one JSON line per request in the log."""

from __future__ import annotations

import argparse
import itertools
import json
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import issuer, model_check, replica
from .chain import CHAIN, Chain
from .faults import FaultRule, fault_reply
from .messages import Reply, Request, ServiceError, json_reply
from .mfa import mfa_admin
from .proxy import FakeCognito
from .shared import AMZ_JSON, TARGET_PREFIX

_conn_ids = itertools.count(1)


class RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-cognito/1"
    sys_version = ""
    fake: FakeCognito  # set on the subclass
    endpoint = "primary"  # "replica" on the replica's listener (replica.py)

    def setup(self) -> None:
        super().setup()
        self.conn_id = next(_conn_ids)
        self.conn_requests = 0

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # -- plumbing ------------------------------------------------------------

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for k, v in reply.headers:
            if k.lower() in ("server", "date"):
                continue
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(reply.body)))
        try:
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (e.g. after a stall)
            self.close_connection = True

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- admin endpoint ------------------------------------------------------

    def _admin(self, method: str, body: bytes) -> None:
        fake = self.fake
        path = self.path.split("?")[0].rstrip("/")
        try:
            payload = json.loads(body) if body else {}
        except ValueError:
            return self._send(json_reply({"error": "body is not JSON"}, 400))
        if path == "/_fake/faults":
            if method == "POST":
                items = payload.get("rules", [payload]) if isinstance(payload, dict) else payload
                try:
                    rules = [FaultRule.from_json(r) for r in items]
                except (TypeError, ValueError) as e:
                    return self._send(json_reply({"error": str(e)}, 400))
                with fake.lock:
                    fake.faults.extend(rules)
            elif method == "DELETE":
                with fake.lock:
                    fake.faults.clear()
            with fake.lock:
                return self._send(json_reply({"faults": [r.__dict__ for r in fake.faults if r.count != 0]}))
        if path == "/_fake/config":
            if method == "POST":
                fake.config.update(payload)
            return self._send(json_reply({"config": fake.config}))
        if path == "/_fake/health":
            return self._send(json_reply({"ok": True}))
        if path in ("/_fake/mfa", "/_fake/mfa/code"):
            query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
            return self._send(mfa_admin(fake, method, path, query, payload))
        self._send(json_reply({"error": f"no admin endpoint {path}"}, 404))

    # -- the service ---------------------------------------------------------

    def do_GET(self) -> None:
        body = self._read_body()
        if self.path.startswith("/_fake/"):
            return self._admin("GET", body)
        reply = self.fake.forward_raw("GET", self.path, list(self.headers.items()), b"")
        self.fake.log({"ts": time.time(), "method": "GET", "path": self.path, "status": reply.status, "handledBy": "moto"})
        self._send(reply)

    def do_DELETE(self) -> None:
        body = self._read_body()
        if self.path.startswith("/_fake/"):
            return self._admin("DELETE", body)
        self._send(json_reply({"error": "DELETE is not a Cognito method"}, 405))

    def do_POST(self) -> None:
        raw = self._read_body()
        if self.path.startswith("/_fake/"):
            return self._admin("POST", raw)
        self.conn_requests += 1
        fake = self.fake
        target = self.headers.get("X-Amz-Target") or ""
        op = target[len(TARGET_PREFIX):] if target.startswith(TARGET_PREFIX) else target
        is_object = True
        try:
            body = json.loads(raw) if raw else {}
            if not isinstance(body, dict):
                body, is_object = {}, False
        except ValueError:
            body, is_object = {}, False
        req = Request(op, body, raw, list(self.headers.items()), self.path, self.endpoint)
        entry: dict[str, Any] = {
            "endpoint": self.endpoint,
            "ts": time.time(),
            "operation": op,
            "conn": self.conn_id,
            "connRequest": self.conn_requests,
            "userAgent": self.headers.get("User-Agent"),
            "contentType": self.headers.get("Content-Type"),
        }
        if req.auth_flow:
            entry["authFlow"] = req.auth_flow
        if req.challenge_name:
            entry["challengeName"] = req.challenge_name
        if isinstance(body.get("ClientId"), str):
            entry["clientId"] = body["ClientId"]
        # Which secret-bearing fields came (never their values): a client without a secret must get none.
        params = body.get("AuthParameters") or body.get("ChallengeResponses") or {}
        if isinstance(params, dict) and "SECRET_HASH" in params:
            entry["secretHash"] = True
        if "ClientSecret" in body:
            entry["clientSecret"] = True

        # Every request checked against botocore's model of its operation (model_check.py): a
        # violation is refused as the service refuses one, and fails the test (conftest.py).
        violations = model_check.violations(op, body) if is_object else ["the body is not a JSON object"]
        if violations:
            entry.update(modelViolation=violations, status=400, handledBy="model")
            fake.log(entry)
            detail = "; ".join(violations)
            return self._send(ServiceError("InvalidParameterException",
                                           f"{len(violations)} validation error(s) detected: {detail}", 400).reply())

        fault = fake.take_fault(req, "before")
        if fault is not None:
            entry["fault"] = fault.kind
            if not self._apply_fault(fault, entry):
                return  # connection dropped / truncated: logged inside
            if fault.kind != "stall":
                return
        try:
            # A replica is read-only (replica.py); tokens of a pool on another issuer are moto's
            # inside the chain (issuer.py).
            replica.refuse_writes(req)
            req = issuer.to_moto(fake, req)
            reply = issuer.from_moto(fake, req, fake.chain.answer(fake, req))
        except ServiceError as e:
            reply = e.reply()
        except Exception as e:  # a bug in the fake: say so loudly, as a 500 the test will see
            reply = ServiceError("InternalErrorException", f"fake_cognito bug: {type(e).__name__}: {e}", 500).reply()
            print(f"fake_cognito: {op}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        for obs in fake.chain.observers_of(op):
            try:
                obs(fake, req, reply)
            except Exception as e:
                print(f"fake_cognito: observer {obs.__name__}: {e}", file=sys.stderr, flush=True)

        after = fake.take_fault(req, "after")
        if after is not None:
            entry["fault"] = after.kind
            entry["upstreamStatus"] = reply.status
            self._apply_fault(after, entry)
            return
        entry["status"] = reply.status
        entry["handledBy"] = reply.handled_by
        err = reply.headers and dict((k.lower(), v) for k, v in reply.headers).get("x-amzn-errortype")
        if err:
            entry["errorType"] = err.split(":")[0]
        if reply.note:
            entry["note"] = reply.note
        if fake.config.get("logBodies"):
            entry["requestBody"] = body
            entry["responseBody"] = reply.json()
        fake.log(entry)
        self._send(reply)

    def _apply_fault(self, rule: FaultRule, entry: dict[str, Any]) -> bool:
        """Sends the fault. Returns False when the connection was closed."""
        fake = self.fake
        entry["handledBy"] = "fault"
        kind = rule.kind
        if kind == "stall":
            entry["stalled"] = rule.seconds
            time.sleep(rule.seconds)
            if rule.when == "after":
                fake.log(dict(entry, status=None, note="stalled after moto answered; connection closed"))
                self._drop()
                return False
            return True
        if kind == "drop":
            fake.log(dict(entry, status=None))
            self._drop()
            return False
        if kind == "truncate":
            fake.log(dict(entry, status=200))
            body = b'{"AuthenticationResult": {"AccessToken": "eyJ'
            self.send_response(200)
            self.send_header("Content-Type", AMZ_JSON)
            self.send_header("Content-Length", str(len(body) + 500))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self._drop()
            return False
        reply = fault_reply(rule)
        fake.log(dict(entry, status=reply.status, errorType=reply.json().get("__type") if reply.json() else None))
        self._send(reply)
        return True


def serve(upstream: str, port: int, log_path: str | None, host: str = "127.0.0.1",
          chain: Chain = CHAIN) -> tuple[ThreadingHTTPServer, FakeCognito]:
    fake = FakeCognito(upstream, log_path, chain)
    return listen(fake, host, port), fake


def listen(fake: FakeCognito, host: str, port: int, endpoint: str = "primary") -> ThreadingHTTPServer:
    """A listener of `fake`: the primary's, or a replica's sharing its state (replica.py)."""
    handler = type("BoundHandler", (RequestHandler,), {"fake": fake, "endpoint": endpoint})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="A fake Amazon Cognito user-pools endpoint that fronts moto's server.")
    ap.add_argument("--upstream", required=True, help="moto server URL, e.g. http://127.0.0.1:5000")
    ap.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--log", default=None, help="append one JSON line per request to this file")
    args = ap.parse_args(argv)
    server, fake = serve(args.upstream, args.port, args.log, args.host)
    second = listen(fake, args.host, 0, "replica")
    threading.Thread(target=second.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    print(f"REPLICA {second.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    return 0
