#!/usr/bin/env python3
"""A fake Amazon Cognito identity-pools endpoint (cognito-identity) in front of moto's server.

moto's cognito-identity checks little: its GetId accepts any Logins (or none) and returns a new
random identity id on every call, and its GetCredentialsForIdentity hands out the same fixed
keys, valid 90 seconds, to any identity id. This server answers the two calls of the enhanced
(simplified) authenticated flow as the service does (shapes and error codes from botocore's
cognito-identity 2014-06-30 model) and forwards everything else to moto unchanged (STS calls
of the AWS CLI, moto's CreateIdentityPool / DescribeIdentityPool):

* GetId and GetCredentialsForIdentity check each Logins entry: its key must be one of the
  identity pool's CognitoIdentityProviders (read from moto with DescribeIdentityPool), the id
  token must be signed by that user pool's key (moto's JWKS), unexpired, `token_use` id, with
  `iss` naming the key and `aud` the provider's ClientId. Failures answer
  NotAuthorizedException, an unknown pool or identity ResourceNotFoundException.
* GetId gives one identity id per (identity pool, user `sub`), as the service does.
* GetCredentialsForIdentity assumes the pool's authenticated role (SetIdentityPoolRoles,
  answered here since moto lacks it) with moto's STS AssumeRoleWithWebIdentity, as the service
  does internally, so `aws sts get-caller-identity` with the credentials names that role.
  CustomRoleArn must be the authenticated role or one of the token's `cognito:roles`
  (else InvalidParameterException).

GET /_fake/identity/calls lists the calls answered here ({op, ts, status, identityId}).
POST /_fake/identity/config {"lifetime": SECONDS, "refuseCredentialsFor": SECONDS} sets the
lifetime of the credentials GetCredentialsForIdentity gives (the Expiration it answers; moto's
role session stays an hour) and makes it answer InternalErrorException (HTTP 500, an error the
service's model lists) for that many seconds from now; {} restores the defaults.

Usage: fake_identity.py --upstream http://127.0.0.1:MOTO --port 0
Prints "PORT <n>" on its first stdout line once listening.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from local_servers import run_until_interrupted

TARGET_PREFIX = "AWSCognitoIdentityService."
AMZ_JSON = "application/x-amz-json-1.1"
ERROR_SUFFIX = ":http://internal.amazon.com/coral/com.amazonaws.cognito.identity.model/"
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}
CREDENTIAL_LIFETIME = 3600


class ServiceError(Exception):
    def __init__(self, code: str, message: str, status: int = 400):
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def b64url(data: str) -> bytes:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


class FakeIdentity:
    def __init__(self, upstream: str):
        u = urllib.parse.urlsplit(upstream)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 80
        self.lock = threading.Lock()
        self.identities: dict[tuple[str, str], str] = {}  # (pool id, sub) -> identity id
        self.owners: dict[str, tuple[str, str]] = {}  # identity id -> (pool id, sub)
        self.roles: dict[str, dict[str, str]] = {}  # pool id -> SetIdentityPoolRoles' Roles
        self.calls: list[dict[str, Any]] = []
        self.lifetime: float = CREDENTIAL_LIFETIME
        self.refuse_until = 0.0

    # -- moto ----------------------------------------------------------------

    def forward(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> tuple[int, list, bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            out = {k: v for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() not in ("host", "content-length")}
            out["Host"] = f"{self.host}:{self.port}"
            out["Content-Length"] = str(len(body))
            conn.request(method, path, body=body or None, headers=out)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, [(k, v) for k, v in resp.getheaders() if k.lower() not in HOP_BY_HOP | {"content-length"}], data
        finally:
            conn.close()

    def moto(self, target: str, payload: dict[str, Any], service: str) -> tuple[int, Any]:
        """A call of the fake's own to moto, signed-looking (moto reads only the scope)."""
        day = time.strftime("%Y%m%d", time.gmtime())
        headers = [("Content-Type", AMZ_JSON), ("X-Amz-Target", target),
                   ("Authorization", f"AWS4-HMAC-SHA256 Credential=testing/{day}/us-east-1/{service}/aws4_request, "
                                     "SignedHeaders=host, Signature=0")]
        status, _, data = self.forward("POST", "/", headers, json.dumps(payload).encode())
        try:
            return status, json.loads(data)
        except ValueError:
            return status, data.decode("utf-8", "replace")

    def describe_pool(self, pool_id: str) -> dict[str, Any]:
        status, body = self.moto(TARGET_PREFIX + "DescribeIdentityPool", {"IdentityPoolId": pool_id}, "cognito-identity")
        if status != 200 or not isinstance(body, dict):
            raise ServiceError("ResourceNotFoundException", f"IdentityPool '{pool_id}' not found.")
        return body

    def jwks(self, user_pool_id: str) -> dict[str, Any]:
        status, _, data = self.forward("GET", f"/{user_pool_id}/.well-known/jwks.json", [], b"")
        if status != 200:
            raise ServiceError("NotAuthorizedException", "Invalid login token. Issuer doesn't match providerName")
        return json.loads(data)

    # -- checks --------------------------------------------------------------

    def check_login(self, pool: dict[str, Any], logins: Any) -> dict[str, Any]:
        """The claims of the one Logins entry, checked as the service checks a Cognito user pool login."""
        if not logins:
            if pool.get("AllowUnauthenticatedIdentities"):
                return {}
            raise ServiceError("NotAuthorizedException", "Unauthenticated access is not supported for this identity pool.")
        if not isinstance(logins, dict) or len(logins) != 1:
            raise ServiceError("InvalidParameterException", "1 validation error detected: Logins must hold one user pool login here")
        (provider, token), = logins.items()
        providers = {p["ProviderName"]: p.get("ClientId") for p in pool.get("CognitoIdentityProviders") or []}
        if provider not in providers:
            raise ServiceError("NotAuthorizedException", "Token is not from a supported provider of this identity pool.")
        try:
            header_b64, payload_b64, signature_b64 = token.split(".")
            header, claims = json.loads(b64url(header_b64)), json.loads(b64url(payload_b64))
        except (ValueError, AttributeError):
            raise ServiceError("NotAuthorizedException", "Invalid login token. Not a valid OpenId Connect identity token.")
        user_pool_id = provider.rsplit("/", 1)[-1]
        keys = [k for k in self.jwks(user_pool_id).get("keys", []) if k.get("kid") == header.get("kid")]
        if header.get("alg") != "RS256" or not keys:
            raise ServiceError("NotAuthorizedException", "Invalid login token. Couldn't verify signed token.")
        key = rsa.RSAPublicNumbers(int.from_bytes(b64url(keys[0]["e"]), "big"),
                                   int.from_bytes(b64url(keys[0]["n"]), "big")).public_key()
        try:
            key.verify(b64url(signature_b64), f"{header_b64}.{payload_b64}".encode(), padding.PKCS1v15(), hashes.SHA256())
        except Exception:
            raise ServiceError("NotAuthorizedException", "Invalid login token. Couldn't verify signed token.")
        if claims.get("iss") != f"https://{provider}":
            raise ServiceError("NotAuthorizedException", "Invalid login token. Issuer doesn't match providerName")
        if claims.get("token_use") != "id":
            raise ServiceError("NotAuthorizedException", "Invalid login token. Not a valid OpenId Connect identity token.")
        if providers[provider] and claims.get("aud") != providers[provider]:
            raise ServiceError("NotAuthorizedException", "Invalid login token. Incorrect token audience.")
        if not isinstance(claims.get("exp"), (int, float)) or claims["exp"] <= time.time():
            raise ServiceError("NotAuthorizedException", f"Invalid login token. Token expired: {claims.get('exp')} >= {int(time.time())}")
        return claims

    # -- operations ----------------------------------------------------------

    def get_id(self, body: dict[str, Any]) -> dict[str, Any]:
        pool_id = body.get("IdentityPoolId")
        if not isinstance(pool_id, str):
            raise ServiceError("InvalidParameterException", "1 validation error detected: Value null at 'identityPoolId'")
        claims = self.check_login(self.describe_pool(pool_id), body.get("Logins"))
        key = (pool_id, claims.get("sub", ""))
        with self.lock:
            if key not in self.identities:
                # moto records the identity in its pool (ListIdentities shows it); its id is random.
                status, answer = self.moto(TARGET_PREFIX + "GetId", {"IdentityPoolId": pool_id}, "cognito-identity")
                if status != 200:
                    raise ServiceError("InternalErrorException", f"moto GetId: HTTP {status}", 500)
                self.identities[key] = answer["IdentityId"]
                self.owners[answer["IdentityId"]] = key
            return {"IdentityId": self.identities[key]}

    def configure(self, body: dict[str, Any]) -> None:
        with self.lock:
            self.lifetime = float(body.get("lifetime", CREDENTIAL_LIFETIME))
            self.refuse_until = time.time() + float(body.get("refuseCredentialsFor", 0))

    def get_credentials_for_identity(self, body: dict[str, Any]) -> dict[str, Any]:
        identity_id = body.get("IdentityId")
        with self.lock:
            refusing, lifetime = time.time() < self.refuse_until, self.lifetime
        if refusing:
            raise ServiceError("InternalErrorException", "Internal error (refused by the test).", 500)
        with self.lock:
            owner = self.owners.get(identity_id) if isinstance(identity_id, str) else None
        if owner is None:
            raise ServiceError("ResourceNotFoundException", f"Identity '{identity_id}' not found.")
        pool_id, sub = owner
        claims = self.check_login(self.describe_pool(pool_id), body.get("Logins"))
        if claims.get("sub") != sub:
            raise ServiceError("NotAuthorizedException", "Logins don't match. Please include at least one valid login for this identity or identity pool.")
        authenticated = self.roles.get(pool_id, {}).get("authenticated")
        if not authenticated:
            raise ServiceError("InvalidIdentityPoolConfigurationException", "Invalid identity pool configuration. Check assigned IAM roles for this pool.")
        role = body.get("CustomRoleArn") or authenticated
        if role != authenticated and role not in (claims.get("cognito:roles") or []):
            raise ServiceError("InvalidParameterException", "Invalid CustomRoleArn for this identity.")
        token = next(iter(body["Logins"].values()))
        status, _, data = self.forward("POST", "/", [("Content-Type", "application/x-www-form-urlencoded")], urllib.parse.urlencode({
            "Action": "AssumeRoleWithWebIdentity", "Version": "2011-06-15", "RoleArn": role,
            "RoleSessionName": "CognitoIdentityCredentials", "WebIdentityToken": token,
            "DurationSeconds": str(CREDENTIAL_LIFETIME)}).encode())
        if status != 200:
            raise ServiceError("InternalErrorException", f"moto AssumeRoleWithWebIdentity: HTTP {status}", 500)
        text = data.decode()

        def field(name: str) -> str:
            return text.split(f"<{name}>", 1)[1].split(f"</{name}>", 1)[0]

        return {"IdentityId": identity_id, "Credentials": {
            "AccessKeyId": field("AccessKeyId"), "SecretKey": field("SecretAccessKey"),
            "SessionToken": field("SessionToken"), "Expiration": time.time() + lifetime}}

    def set_identity_pool_roles(self, body: dict[str, Any]) -> dict[str, Any]:
        pool_id = body.get("IdentityPoolId")
        self.describe_pool(pool_id)
        with self.lock:
            self.roles[pool_id] = dict(body.get("Roles") or {})
        return {}

    OPERATIONS = {"GetId": get_id, "GetCredentialsForIdentity": get_credentials_for_identity,
                  "SetIdentityPoolRoles": set_identity_pool_roles}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeIdentity

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.send_response(status)
        for k, v in headers:
            if k.lower() not in ("server", "date"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, payload: Any, status: int = 200, headers: list[tuple[str, str]] = []) -> None:
        self._send(status, [("Content-Type", AMZ_JSON), *headers], json.dumps(payload).encode())

    def do_GET(self) -> None:
        if self.path.startswith("/_fake/identity/calls"):
            with self.fake.lock:
                return self._json({"calls": list(self.fake.calls)})
        self._send(*self.fake.forward("GET", self.path, list(self.headers.items()), b""))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/_fake/identity/config":
            self.fake.configure(json.loads(raw or b"{}"))
            return self._json({})
        target = self.headers.get("X-Amz-Target") or ""
        op = target[len(TARGET_PREFIX):] if target.startswith(TARGET_PREFIX) else None
        handler = FakeIdentity.OPERATIONS.get(op or "")
        if handler is None:
            return self._send(*self.fake.forward("POST", self.path, list(self.headers.items()), raw))
        entry: dict[str, Any] = {"op": op, "ts": time.time()}
        try:
            body = json.loads(raw) if raw else {}
            answer = handler(self.fake, body if isinstance(body, dict) else {})
            entry.update(status=200, identityId=answer.get("IdentityId"))
            self._json(answer)
        except ServiceError as e:
            entry.update(status=e.status, errorType=e.code)
            self._json({"__type": e.code, "message": e.message}, e.status, [("x-amzn-errortype", e.code + ERROR_SUFFIX)])
        except Exception as e:  # a bug in the fake: loudly, as a 500 the test sees
            print(f"fake_identity: {op}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            entry.update(status=500, errorType="InternalErrorException")
            self._json({"__type": "InternalErrorException", "message": f"fake_identity bug: {e}"}, 500)
        with self.fake.lock:
            self.fake.calls.append(entry)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", required=True, help="moto server URL")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args(argv)
    handler = type("BoundHandler", (Handler,), {"fake": FakeIdentity(args.upstream)})
    return run_until_interrupted(handler, args.port)


if __name__ == "__main__":
    sys.exit(main())
