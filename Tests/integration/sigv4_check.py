"""A signature-checking HTTP proxy for the ops tests (`authctl signout --global --user`).

moto accepts any AWS Signature Version 4, so a wrong signature would pass unnoticed. This proxy
sits between authctl and the fake and does what the real service does: for every request that
carries an `Authorization` header (and every AdminUserGlobalSignOut, signed or not) it recomputes
the signature with botocore's own SigV4Auth, an implementation independent of authctl's, and
refuses a mismatch as Cognito would (HTTP 400, InvalidSignatureException). Requests that pass, and
unsigned user-pool calls (GetUser, InitiateAuth, ...), are forwarded to the fake unchanged.

How the signature is recomputed: an AWSRequest with the same method, URL (http://<Host as
received><path>), body and the headers the client signed (as received, Host with its port
included), signed by `SigV4Auth.add_auth` with the secret key the proxy knows for the access key
id, at the instant of the request's `X-Amz-Date`; the resulting `Authorization` header must equal
the received one byte for byte. Only the signed headers go in because that is what the service
does (libcurl adds `Accept-Encoding` and `Content-Length` after authctl has signed; botocore adds
`amz-sdk-*`); `host`, `x-amz-date`, `x-amz-target`, `content-type` and every `x-amz-*` header
present (`x-amz-security-token` with temporary credentials) must be among the signed ones. The
date must be within 5 minutes of now and the credential scope `<day>/<region>/cognito-idp/aws4_request`.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from unittest import mock

import botocore.auth
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

TARGET_PREFIX = "AWSCognitoIdentityProviderService."
SIGNATURE_MISMATCH = (
    "The request signature we calculated does not match the signature you provided. Check your AWS "
    "Secret Access Key and signing method. Consult the service documentation for details."
)
AUTH_RE = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<akid>[^/,\s]+)/(?P<day>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request, "
    r"SignedHeaders=(?P<signed>[a-z0-9;\-]+), Signature=(?P<sig>[0-9a-f]{64})$"
)
REQUIRED_SIGNED = {"host", "x-amz-date", "x-amz-target", "content-type"}
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "expect"}

# botocore's clock is patched per check to the request's X-Amz-Date; one check at a time.
_SIGN_LOCK = threading.Lock()


@dataclass
class Check:
    """One verified request, for the tests to inspect."""

    operation: str
    ok: bool
    reason: str = ""
    access_key_id: str | None = None
    signed_headers: list[str] = field(default_factory=list)
    received_headers: list[str] = field(default_factory=list)
    session_token: str | None = None
    expected_authorization: str | None = None
    received_authorization: str | None = None
    # (method, path, headers, body) as received, to replay through verify() with a part changed.
    request: tuple[str, str, list[tuple[str, str]], bytes] | None = None


class SignatureError(Exception):
    def __init__(self, error_type: str, message: str):
        super().__init__(message)
        self.error_type = error_type
        self.message = message


def botocore_authorization(method: str, url: str, headers: list[tuple[str, str]], body: bytes,
                           access_key_id: str, secret_key: str, session_token: str | None,
                           region: str, service: str, amz_date: str) -> str:
    """The Authorization header botocore's SigV4Auth computes for this request at `amz_date`."""
    request = AWSRequest(method=method, url=url, data=body, headers=None)
    for name, value in headers:
        request.headers[name] = value
    when = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")  # naive UTC, as botocore's own clock
    auth = SigV4Auth(Credentials(access_key_id, secret_key, session_token), service, region)
    with _SIGN_LOCK, mock.patch.object(botocore.auth, "get_current_datetime", return_value=when):
        auth.add_auth(request)
    return request.headers["Authorization"]


def verify(method: str, path: str, headers: list[tuple[str, str]], body: bytes, secrets: dict[str, str],
           region: str, service: str = "cognito-idp", max_skew: float = 300.0) -> Check:
    """Raises SignatureError as the service would answer; returns the Check when it passes."""
    lower = [(k.lower(), v) for k, v in headers]
    get = lambda name: next((v for k, v in lower if k == name), None)  # noqa: E731
    target = get("x-amz-target") or ""
    check = Check(operation=target[len(TARGET_PREFIX):] if target.startswith(TARGET_PREFIX) else target,
                  ok=False, received_headers=[k for k, _ in lower], request=(method, path, list(headers), body))
    authorization = get("authorization")
    check.received_authorization = authorization
    if not authorization:
        raise SignatureError("MissingAuthenticationTokenException", "Missing Authentication Token")
    m = AUTH_RE.match(authorization)
    if not m:
        raise SignatureError("IncompleteSignatureException", f"Authorization header is malformed: {authorization[:60]}...")
    check.access_key_id = m["akid"]
    signed = m["signed"].split(";")
    check.signed_headers = signed
    if signed != sorted(set(signed)):
        raise SignatureError("IncompleteSignatureException", "SignedHeaders must be sorted, lower case and unique")
    secret = secrets.get(m["akid"])
    if secret is None:
        raise SignatureError("UnrecognizedClientException", "The security token included in the request is invalid.")
    amz_date = get("x-amz-date")
    if not amz_date or not re.fullmatch(r"\d{8}T\d{6}Z", amz_date):
        raise SignatureError("IncompleteSignatureException", "X-Amz-Date is missing or not in the basic ISO 8601 format")
    when = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    if abs(when.timestamp() - time.time()) > max_skew:
        raise SignatureError("InvalidSignatureException", f"Signature expired: {amz_date} is not within 5 minutes of now")
    if m["day"] != amz_date[:8] or m["region"] != region or m["service"] != service:
        raise SignatureError(
            "InvalidSignatureException",
            f"Credential should be scoped to {amz_date[:8]}/{region}/{service}/aws4_request, not "
            f"{m['day']}/{m['region']}/{m['service']}/aws4_request",
        )
    received = {k for k, _ in lower}
    # As the service: host, the date, the target, the content type and every x-amz-* header must
    # be signed. (botocore itself adds amz-sdk-* headers after signing, libcurl Accept-Encoding.)
    must_sign = REQUIRED_SIGNED | {k for k in received if k.startswith("x-amz-")}
    token = get("x-amz-security-token")
    check.session_token = token
    if token is not None:
        must_sign.add("x-amz-security-token")
    missing = sorted(must_sign - set(signed))
    if missing:
        raise SignatureError("InvalidSignatureException", f"these headers must be signed: {', '.join(missing)}")
    absent = sorted(set(signed) - received)
    if absent:
        raise SignatureError("InvalidSignatureException", f"signed headers not in the request: {', '.join(absent)}")
    host = get("host")
    url = f"http://{host}{path}"
    expected = botocore_authorization(
        method, url, [(k, v) for k, v in headers if k.lower() in signed], body, m["akid"], secret, token,
        region, service, amz_date,
    )
    check.expected_authorization = expected
    if expected != authorization:
        raise SignatureError("InvalidSignatureException", SIGNATURE_MISMATCH)
    check.ok = True
    return check


class SigV4CheckingProxy:
    """ThreadingHTTPServer on a free loopback port, forwarding to `upstream` (the fake)."""

    def __init__(self, upstream: str, secrets: dict[str, str], region: str = "us-east-1",
                 service: str = "cognito-idp", operations: tuple[str, ...] = ("AdminUserGlobalSignOut",)):
        u = urllib.parse.urlsplit(upstream)
        self.upstream_host = u.hostname or "127.0.0.1"
        self.upstream_port = u.port or 80
        self.secrets = dict(secrets)
        self.region = region
        self.service = service
        self.operations = set(operations)
        self.checks: list[Check] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self.server is not None
        return self.server.server_address[1]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> "SigV4CheckingProxy":
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = list(self.headers.items())
                proxy._handle(self, "POST", self.path, headers, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def checked(self, operation: str | None = None) -> list[Check]:
        with self.lock:
            return [c for c in self.checks if operation in (None, c.operation)]

    # -- plumbing ---------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler, method: str, path: str,
                headers: list[tuple[str, str]], body: bytes) -> None:
        names = {k.lower() for k, _ in headers}
        target = handler.headers.get("X-Amz-Target") or ""
        op = target[len(TARGET_PREFIX):] if target.startswith(TARGET_PREFIX) else target
        if op in self.operations or "authorization" in names:
            try:
                check = verify(method, path, headers, body, self.secrets, self.region, self.service)
            except SignatureError as e:
                with self.lock:
                    self.checks.append(Check(operation=op, ok=False, reason=f"{e.error_type}: {e.message}",
                                             received_headers=sorted(names)))
                payload = json.dumps({"__type": e.error_type, "message": e.message}).encode()
                self._send(handler, 400, [("Content-Type", "application/x-amz-json-1.1"),
                                          ("x-amzn-errortype", e.error_type)], payload)
                return
            with self.lock:
                self.checks.append(check)
        try:
            status, rh, data = self._forward(method, path, headers, body)
        except OSError as e:
            self._send(handler, 502, [("Content-Type", "text/plain")], f"sigv4 proxy: upstream failed: {e}".encode())
            return
        self._send(handler, status, rh, data)

    def _forward(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes):
        conn = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=60)
        try:
            out = {k: v for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() != "content-length"}
            out["Content-Length"] = str(len(body))
            conn.request(method, path, body=body, headers=out)
            resp = conn.getresponse()
            data = resp.read()
            rh = [(k, v) for k, v in resp.getheaders() if k.lower() not in HOP_BY_HOP and k.lower() != "content-length"]
            return resp.status, rh, data
        finally:
            conn.close()

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        handler.send_response(status)
        for k, v in headers:
            if k.lower() in ("server", "date"):
                continue
            handler.send_header(k, v)
        handler.send_header("Content-Length", str(len(body)))
        try:
            handler.end_headers()
            handler.wfile.write(body)
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True
