#!/usr/bin/env python3
"""A fake of one user pool's managed-login domain (Cognito's hosted UI and OAuth 2.0 endpoints).

moto has no managed login, so this server stands in for `https://PREFIX.auth.REGION.amazoncognito.com`
of ONE pool (--user-pool-id). It reads the app clients' OAuth settings (AllowedOAuthFlows,
AllowedOAuthScopes, CallbackURLs, LogoutURLs, SupportedIdentityProviders, ClientSecret) from the
Cognito emulator (fake_cognito in front of moto) with DescribeUserPoolClient, and answers as the
service documents its endpoints:

* GET /oauth2/authorize: checks client, redirect_uri (registered verbatim), response_type=code,
  scopes, PKCE method (S256 only); a bad client or redirect_uri is an error page (never a
  redirect), other errors redirect with `error=`. A managed-login cookie from an earlier sign-in
  skips the page (unless prompt=login). `identity_provider=NAME` hops to the IdP's page
  (/_idp/NAME/...), which in this fake authenticates against the pool's own users (a stand-in
  for Google/Entra/SAML) and can be cancelled (error=access_denied).
* POST /login: the login page's form; the password is checked by moto (AdminInitiateAuth
  ADMIN_USER_PASSWORD_AUTH through the emulator), whose real tokens are what the code yields, so
  GetUser / whoami against the emulator accept them. The id token is re-signed with moto's key to
  carry the request's nonce (moto's JWKS still verifies it).
* POST /oauth2/token: authorization_code (one-use codes bound to client and redirect_uri, 5
  minutes, PKCE S256 verified), refresh_token (the emulator's REFRESH_TOKEN_AUTH, so revoked
  tokens are refused) and client_credentials (HTTP Basic required; an access token with the
  resource-server scopes, signed with moto's key). Errors: HTTP 400 `{"error": "invalid_grant"}`
  etc., as Cognito's token endpoint documents.
* POST /oauth2/revoke (RevokeToken on the emulator), GET /oauth2/userInfo, GET /logout
  (clears the cookie, redirects to a registered logout_uri).

Every request is one JSON line in --log (path, grant type, client, status, error); never a
secret. POST /_managed/config {"tokenEndpointHtml": true} makes the token endpoint answer with
an HTML error page, as a misrouted domain or a proxy would.

Usage: fake_managed_login.py --cognito http://127.0.0.1:FAKE --user-pool-id ID --port 0 --log PATH
Prints "PORT <n>" on its first stdout line once listening.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import html
import json
import secrets
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from local_servers import run_until_interrupted

CODE_LIFETIME = 300.0  # Cognito's authorization codes live 5 minutes
COOKIE = "cognito-managed-login"


def jwt_claims(token: str) -> dict[str, Any]:
    try:
        payload = token.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return {}


def moto_key():
    """moto's RSA key (the one its JWKS publishes), so tokens minted here verify like moto's."""
    from joserfc import jwk
    from moto.utilities.utils import load_resource

    return jwk.RSAKey.import_key(load_resource("moto.cognitoidp.models", "resources/jwks-private.json"))


def sign(claims: dict[str, Any]) -> str:
    from joserfc import jwt

    return jwt.encode({"kid": "dummy", "alg": "RS256"}, claims, KEY)


KEY = None


def secret_hash(secret: str, username: str, client_id: str) -> str:
    return base64.b64encode(hmac.new(secret.encode(), (username + client_id).encode(), hashlib.sha256).digest()).decode()


class OAuthFailure(Exception):
    def __init__(self, error: str, description: str = "", status: int = 400):
        super().__init__(error)
        self.error, self.description, self.status = error, description, status


class ManagedLogin:
    def __init__(self, cognito: str, pool_id: str, log_path: str | None):
        self.cognito = cognito.rstrip("/") + "/"
        self.pool_id = pool_id
        self.region = pool_id.split("_")[0]
        self.log_path = log_path
        self.lock = threading.Lock()
        self.hops: dict[str, dict[str, str]] = {}  # authorize request waiting for a login
        self.codes: dict[str, dict[str, Any]] = {}
        self.refresh: dict[str, dict[str, str]] = {}  # refresh token -> client, username
        # managed-login session cookie -> (username, password): moto mints tokens only for a
        # password, so the fake remembers what the person typed for as long as the cookie lives.
        self.cookies: dict[str, tuple[str, str]] = {}
        self.config: dict[str, Any] = {"tokenEndpointHtml": False}

    # -- the emulator ------------------------------------------------------------

    def call(self, op: str, payload: dict[str, Any], sso_user: str | None = None) -> tuple[int, dict[str, Any]]:
        day = time.strftime("%Y%m%d", time.gmtime())
        # A sign-in here is a managed-login (SSO) session's: fake_cognito's sessions.py keeps it.
        marks = {"X-Fake-Managed-Login": sso_user} if sso_user else {}
        req = urllib.request.Request(self.cognito, data=json.dumps(payload).encode(), method="POST", headers={
            **marks,
            "Content-Type": "application/x-amz-json-1.1",
            "X-Amz-Target": "AWSCognitoIdentityProviderService." + op,
            "Authorization": f"AWS4-HMAC-SHA256 Credential=testing/{day}/{self.region}/cognito-idp/aws4_request, "
                             "SignedHeaders=host;x-amz-target, Signature=0",
        })
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def client(self, client_id: str | None) -> dict[str, Any] | None:
        if not client_id:
            return None
        status, body = self.call("DescribeUserPoolClient", {"UserPoolId": self.pool_id, "ClientId": client_id})
        return body.get("UserPoolClient") if status == 200 else None

    def idp_exists(self, name: str) -> bool:
        status, _ = self.call("DescribeIdentityProvider", {"UserPoolId": self.pool_id, "ProviderName": name})
        return status == 200

    def log(self, entry: dict[str, Any]) -> None:
        if self.log_path:
            with self.lock, open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(dict(entry, ts=time.time()), sort_keys=True) + "\n")

    # -- codes ----------------------------------------------------------------

    def issue_code(self, hop: dict[str, str], username: str, tokens: dict[str, Any]) -> str:
        code = str(uuid.uuid4())
        with self.lock:
            self.codes[code] = {"hop": hop, "username": username, "tokens": tokens,
                                "expires": time.monotonic() + CODE_LIFETIME, "used": False}
        return code

    def sign_in(self, hop: dict[str, str], username: str, password: str) -> dict[str, Any] | None:
        status, body = self.call("AdminInitiateAuth", {
            "UserPoolId": self.pool_id, "ClientId": hop["client_id"], "AuthFlow": "ADMIN_USER_PASSWORD_AUTH",
            "AuthParameters": {"USERNAME": username, "PASSWORD": password}}, sso_user=username)
        return body.get("AuthenticationResult") if status == 200 else None



M: ManagedLogin


def page(title: str, body: str, status: int = 200) -> tuple[int, list[tuple[str, str]], bytes]:
    doc = f"<!DOCTYPE html><html><head><title>{html.escape(title)}</title></head><body>{body}</body></html>"
    return status, [("Content-Type", "text/html;charset=UTF-8")], doc.encode()


def redirect(url: str, extra: list[tuple[str, str]] | None = None) -> tuple[int, list[tuple[str, str]], bytes]:
    return 302, [("Location", url)] + (extra or []), b""


def to_callback(hop: dict[str, str], **fields: str) -> str:
    query = {k: v for k, v in fields.items()}
    if hop.get("state"):
        query["state"] = hop["state"]
    return hop["redirect_uri"] + "?" + urllib.parse.urlencode(query)


def json_answer(obj: Any, status: int = 200) -> tuple[int, list[tuple[str, str]], bytes]:
    return status, [("Content-Type", "application/json;charset=UTF-8")], json.dumps(obj).encode()


def login_form(hop_id: str, error: str = "") -> tuple[int, list[tuple[str, str]], bytes]:
    note = f'<p id="loginErrorMessage">{html.escape(error)}</p>' if error else ""
    return page("Signin", f"""<h1>Sign in with your username and password</h1>{note}
<form method="post" action="/login" name="cognitoSignInForm">
<input type="hidden" name="hop" value="{html.escape(hop_id)}">
<input id="signInFormUsername" name="username" type="text" placeholder="Username">
<input id="signInFormPassword" name="password" type="password" placeholder="Password">
<input name="signInSubmitButton" type="submit" value="Sign in">
</form>""")


def authorize(q: dict[str, str], cookie: str | None):
    client = M.client(q.get("client_id"))
    if client is None:
        return page("Error", "<h1>An error was encountered with the requested page.</h1><p>invalid_request: client</p>", 400)
    if q.get("redirect_uri") not in (client.get("CallbackURLs") or []):
        return page("Error", "<h1>An error was encountered with the requested page.</h1><p>redirect_mismatch</p>", 400)
    hop = {k: q.get(k, "") for k in ("client_id", "redirect_uri", "state", "scope", "nonce", "code_challenge",
                                     "code_challenge_method", "identity_provider", "prompt")}
    if q.get("response_type") != "code":
        return redirect(to_callback(hop, error="unsupported_response_type"))
    if "code" not in (client.get("AllowedOAuthFlows") or []) or not client.get("AllowedOAuthFlowsUserPoolClient"):
        return redirect(to_callback(hop, error="unauthorized_client"))
    scopes = (q.get("scope") or "").split()
    allowed = set(client.get("AllowedOAuthScopes") or [])
    if any(s not in allowed for s in scopes):
        return redirect(to_callback(hop, error="invalid_scope"))
    if q.get("code_challenge") and q.get("code_challenge_method") != "S256":
        return redirect(to_callback(hop, error="invalid_request", error_description="code_challenge_method must be S256"))
    hop_id = secrets.token_urlsafe(16)
    with M.lock:
        M.hops[hop_id] = hop
    provider = q.get("identity_provider")
    if provider and provider != "COGNITO":
        if provider not in (client.get("SupportedIdentityProviders") or []) or not M.idp_exists(provider):
            return redirect(to_callback(hop, error="invalid_request", error_description="Identity provider is not supported"))
        return redirect(f"/_idp/{urllib.parse.quote(provider)}/authorize?" + urllib.parse.urlencode({"hop": hop_id}))
    with M.lock:
        known = M.cookies.get(cookie or "")
    if known and q.get("prompt") != "login":
        tokens = M.sign_in(hop, *known)
        if tokens:
            with M.lock:
                M.hops.pop(hop_id, None)
                M.refresh[tokens["RefreshToken"]] = {"client_id": hop["client_id"], "username": known[0]}
            return redirect(to_callback(hop, code=M.issue_code(hop, known[0], tokens)))
    return login_form(hop_id)


def finish_login(form: dict[str, str], federated: bool):
    with M.lock:
        hop = M.hops.get(form.get("hop", ""))
    if hop is None:
        return page("Error", "<h1>An error was encountered with the requested page.</h1><p>login session expired</p>", 400)
    if federated and form.get("cancel"):
        with M.lock:
            M.hops.pop(form["hop"], None)
        return redirect(to_callback(hop, error="access_denied", error_description="User cancelled the sign-in at the identity provider"))
    username = form.get("username", "")
    tokens = M.sign_in(hop, username, form.get("password", ""))
    if tokens is None:
        if federated:
            return idp_form(form.get("provider", ""), form["hop"], "Wrong username or password.")
        return login_form(form["hop"], "Incorrect username or password.")
    with M.lock:
        M.hops.pop(form["hop"], None)
        M.refresh[tokens["RefreshToken"]] = {"client_id": hop["client_id"], "username": username}
        cookie = secrets.token_urlsafe(24)
        M.cookies[cookie] = (username, form.get("password", ""))
    code = M.issue_code(hop, username, tokens)
    return redirect(to_callback(hop, code=code), [("Set-Cookie", f"{COOKIE}={cookie}; Path=/; HttpOnly")])


def idp_form(provider: str, hop_id: str, error: str = ""):
    note = f'<p id="error">{html.escape(error)}</p>' if error else ""
    return page(f"{provider} sign-in", f"""<h1>{html.escape(provider)}: sign in</h1>{note}
<form method="post" action="/_idp/{html.escape(provider)}/login">
<input type="hidden" name="hop" value="{html.escape(hop_id)}">
<input type="hidden" name="provider" value="{html.escape(provider)}">
<input id="idpUsername" name="username" type="text">
<input id="idpPassword" name="password" type="password">
<input id="idpSubmit" name="submit" type="submit" value="Continue">
<input id="idpCancel" name="cancel" type="submit" value="Cancel">
</form>""")


def client_auth(headers: dict[str, str], form: dict[str, str]) -> dict[str, Any]:
    """The client of a token or revoke request: HTTP Basic (required with a secret), else client_id."""
    auth = headers.get("authorization", "")
    if auth.lower().startswith("basic "):
        try:
            cid, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
            cid, secret = urllib.parse.unquote_plus(cid), urllib.parse.unquote_plus(secret)
        except ValueError:
            raise OAuthFailure("invalid_client") from None
        client = M.client(cid)
        if client is None or not client.get("ClientSecret") or not hmac.compare_digest(client["ClientSecret"], secret):
            raise OAuthFailure("invalid_client")
        if form.get("client_id") and form["client_id"] != cid:
            raise OAuthFailure("invalid_client")
        return client
    client = M.client(form.get("client_id"))
    if client is None:
        raise OAuthFailure("invalid_client")
    if client.get("ClientSecret"):
        raise OAuthFailure("invalid_client")  # a confidential client must authenticate
    return client


def token(headers: dict[str, str], form: dict[str, str]):
    if M.config.get("tokenEndpointHtml"):
        return page("502 Bad Gateway", "<h1>502 Bad Gateway</h1>", 502)
    if not headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        raise OAuthFailure("invalid_request")
    client = client_auth(headers, form)
    grant = form.get("grant_type")
    flows = client.get("AllowedOAuthFlows") or []
    cid = client["ClientId"]
    if grant == "authorization_code":
        if "code" not in flows:
            raise OAuthFailure("unauthorized_client")
        with M.lock:
            entry = M.codes.get(form.get("code", ""))
            if entry is None or entry["used"] or time.monotonic() > entry["expires"]:
                raise OAuthFailure("invalid_grant")
            entry["used"] = True  # one use, whatever follows
        hop = entry["hop"]
        if hop["client_id"] != cid or hop["redirect_uri"] != form.get("redirect_uri"):
            raise OAuthFailure("invalid_grant")
        if hop["code_challenge"]:
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if not (43 <= len(verifier) <= 128) or not hmac.compare_digest(digest, hop["code_challenge"]):
                raise OAuthFailure("invalid_grant")
        t = entry["tokens"]
        id_claims = jwt_claims(t["IdToken"])
        if hop["nonce"]:
            id_claims["nonce"] = hop["nonce"]
        answer = {"access_token": t["AccessToken"], "id_token": sign(id_claims), "refresh_token": t["RefreshToken"],
                  "expires_in": t["ExpiresIn"], "token_type": "Bearer"}
        return json_answer(answer)
    if grant == "refresh_token":
        refresh = form.get("refresh_token", "")
        with M.lock:
            owner = M.refresh.get(refresh)
        if owner is None or owner["client_id"] != cid:
            raise OAuthFailure("invalid_grant")
        params = {"REFRESH_TOKEN": refresh}
        if client.get("ClientSecret"):
            params["SECRET_HASH"] = secret_hash(client["ClientSecret"], owner["username"], cid)
        status, body = M.call("InitiateAuth", {"ClientId": cid, "AuthFlow": "REFRESH_TOKEN_AUTH", "AuthParameters": params})
        result = body.get("AuthenticationResult") if status == 200 else None
        if result is None:
            raise OAuthFailure("invalid_grant")
        return json_answer({"access_token": result["AccessToken"], "id_token": result["IdToken"],
                            "expires_in": result["ExpiresIn"], "token_type": "Bearer"})
    if grant == "client_credentials":
        if not client.get("ClientSecret") or "client_credentials" not in flows:
            raise OAuthFailure("unauthorized_client")
        allowed = client.get("AllowedOAuthScopes") or []
        asked = (form.get("scope") or "").split()
        if any(s not in allowed or "/" not in s for s in asked):
            raise OAuthFailure("invalid_scope")
        scopes = asked or [s for s in allowed if "/" in s]
        now = int(time.time())
        claims = {"sub": cid, "token_use": "access", "scope": " ".join(scopes), "auth_time": now,
                  "iss": f"https://cognito-idp.{M.region}.amazonaws.com/{M.pool_id}", "exp": now + 3600, "iat": now,
                  "version": 2, "jti": str(uuid.uuid4()), "client_id": cid}
        return json_answer({"access_token": sign(claims), "expires_in": 3600, "token_type": "Bearer"})
    raise OAuthFailure("unsupported_grant_type")


def revoke(headers: dict[str, str], form: dict[str, str]):
    client = client_auth(headers, form)
    tok = form.get("token", "")
    if not tok:
        raise OAuthFailure("invalid_request")
    if tok.count(".") == 2 and jwt_claims(tok):
        raise OAuthFailure("unsupported_token_type")
    payload = {"ClientId": client["ClientId"], "Token": tok}
    if client.get("ClientSecret"):
        payload["ClientSecret"] = client["ClientSecret"]
    status, body = M.call("RevokeToken", payload)
    if status != 200:
        raise OAuthFailure("invalid_request", body.get("message", ""))
    with M.lock:
        M.refresh.pop(tok, None)
    return 200, [("Content-Length", "0")], b""


def user_info(headers: dict[str, str]):
    auth = headers.get("authorization", "")
    if not auth.startswith("Bearer "):
        return json_answer({"error": "invalid_request"}, 400)
    status, body = M.call("GetUser", {"AccessToken": auth[7:]})
    if status != 200:
        return json_answer({"error": "invalid_token", "error_description": "Access token is expired or revoked"}, 401)
    info = {a["Name"]: a["Value"] for a in body.get("UserAttributes", [])}
    info["username"] = body.get("Username")
    return json_answer(info)


def logout(q: dict[str, str], cookie: str | None):
    client = M.client(q.get("client_id"))
    if client is None or q.get("logout_uri") not in (client.get("LogoutURLs") or []):
        return page("Error", "<h1>An error was encountered with the requested page.</h1><p>logout_uri</p>", 400)
    with M.lock:
        M.cookies.pop(cookie or "", None)
    return redirect(q["logout_uri"], [("Set-Cookie", f"{COOKIE}=; Path=/; Max-Age=0")])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self, answer, entry: dict[str, Any]) -> None:
        status, headers, body = answer
        entry["status"] = status
        M.log(entry)
        self.send_response(status)
        for k, v in headers:
            if k != "Content-Length":
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _cookie(self) -> str | None:
        for part in (self.headers.get("Cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE:
                return value
        return None

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        entry: dict[str, Any] = {"method": "GET", "path": url.path, "clientId": q.get("client_id")}
        if url.path == "/oauth2/authorize":
            if q.get("identity_provider"):
                entry["identityProvider"] = q["identity_provider"]
            if q.get("prompt"):
                entry["prompt"] = q["prompt"]
            return self._answer(authorize(q, self._cookie()), entry)
        if url.path.startswith("/_idp/") and url.path.endswith("/authorize"):
            provider = urllib.parse.unquote(url.path.split("/")[2])
            return self._answer(idp_form(provider, q.get("hop", "")), entry)
        if url.path == "/oauth2/userInfo":
            return self._answer(user_info({k.lower(): v for k, v in self.headers.items()}), entry)
        if url.path == "/logout":
            return self._answer(logout(q, self._cookie()), entry)
        if url.path == "/_managed/health":
            return self._answer(json_answer({"ok": True}), entry)
        self._answer(page("Not found", "<h1>404</h1>", 404), entry)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode() if length else ""
        url = urllib.parse.urlsplit(self.path)
        headers = {k.lower(): v for k, v in self.headers.items()}
        if url.path == "/_managed/config":
            M.config.update(json.loads(raw or "{}"))
            return self._answer(json_answer({"config": M.config}), {"method": "POST", "path": url.path})
        form = dict(urllib.parse.parse_qsl(raw, keep_blank_values=True))
        entry: dict[str, Any] = {"method": "POST", "path": url.path, "grantType": form.get("grant_type"),
                                 "basicAuth": headers.get("authorization", "").lower().startswith("basic ")}
        try:
            if url.path == "/login":
                return self._answer(finish_login(form, federated=False), entry)
            if url.path.startswith("/_idp/") and url.path.endswith("/login"):
                return self._answer(finish_login(form, federated=True), entry)
            if url.path == "/oauth2/token":
                answer = token(headers, form)
                if answer[0] == 200:
                    entry["clientId"] = jwt_claims(json.loads(answer[2]).get("access_token", "")).get("client_id")
                return self._answer(answer, entry)
            if url.path == "/oauth2/revoke":
                return self._answer(revoke(headers, form), entry)
        except OAuthFailure as f:
            entry["error"] = f.error
            body = {"error": f.error}
            if f.description:
                body["error_description"] = f.description
            return self._answer(json_answer(body, f.status), entry)
        except Exception as e:  # a bug in the fake: loud, as a 500 the test will see
            print(f"fake_managed_login: {url.path}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            return self._answer(json_answer({"error": "server_error", "error_description": "fake bug"}, 500), entry)
        self._answer(page("Not found", "<h1>404</h1>", 404), entry)


def main(argv: list[str] | None = None) -> int:
    global M, KEY
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cognito", required=True, help="the Cognito emulator's URL (fake_cognito)")
    ap.add_argument("--user-pool-id", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", default=None)
    args = ap.parse_args(argv)
    KEY = moto_key()
    M = ManagedLogin(args.cognito, args.user_pool_id, args.log)
    return run_until_interrupted(Handler, args.port)


if __name__ == "__main__":
    sys.exit(main())
