"""RevokeToken and GetTokensFromRefreshToken, which moto lacks, and the refusal of access tokens
issued from a revoked refresh token."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .messages import Reply, Request, Rest, ServiceError, json_reply, jwt_claims, not_authorized
from .proxy import FakeCognito
from .shared import (ACCESS_TOKEN_REVOKED, ADMIN_USER_PASSWORD_AUTH, INVALID_REFRESH_TOKEN, REFRESH_TOKEN_AUTH,
                     REFRESH_TOKEN_REVOKED, SECRET_HASH_MISMATCH)


@dataclass
class TokenState:
    """What this module keeps (fake.state.tokens), under the fake's lock."""

    revoked_refresh: set[str] = field(default_factory=set)
    revoked_origins: set[str] = field(default_factory=set)  # origin_jti of the tokens of a revoked refresh token
    refresh_origin: dict[str, str] = field(default_factory=dict)  # refresh token -> origin_jti of tokens issued with it
    refresh_owner: dict[str, tuple[str, str]] = field(default_factory=dict)  # refresh token -> (pool id, username)
    rotated: dict[str, float] = field(default_factory=dict)  # refresh token rotated out -> when (monotonic)


def remember_tokens(fake: FakeCognito, result: dict[str, Any], refresh_token: str | None = None) -> None:
    """Which origin and user the tokens of an AuthenticationResult belong to (for RevokeToken and refresh)."""
    refresh = result.get("RefreshToken") or refresh_token
    access = result.get("AccessToken")
    if refresh and access:
        claims = jwt_claims(access)
        pool_id = (claims.get("iss") or "").rstrip("/").rsplit("/", 1)[-1]
        st = fake.state.tokens
        with fake.lock:
            if claims.get("origin_jti"):
                st.refresh_origin.setdefault(refresh, claims["origin_jti"])
            if pool_id and claims.get("username"):
                st.refresh_owner.setdefault(refresh, (pool_id, claims["username"]))


def refresh_token_revoked(fake: FakeCognito, token: str | None) -> bool:
    with fake.lock:
        return token in fake.state.tokens.revoked_refresh


def access_token_revoked(fake: FakeCognito, token: str) -> bool:
    origin = jwt_claims(token).get("origin_jti")
    with fake.lock:
        return bool(origin) and origin in fake.state.tokens.revoked_origins


def revoke_token(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    if fake.config.get("revokeToken") != "fake":
        return None
    client = fake.client(req.body.get("ClientId"))
    if client is None:
        raise ServiceError("InvalidParameterException", "Invalid client id")  # not what moto would say: moto has no RevokeToken
    if client.secret and req.body.get("ClientSecret") != client.secret:
        raise not_authorized("Client secret is invalid" if req.body.get("ClientSecret") else "Client secret is required")
    token = req.body.get("Token") or ""
    if token.count(".") == 2 and jwt_claims(token):
        raise ServiceError("UnsupportedTokenTypeException", "Only refresh tokens may be revoked")
    st = fake.state.tokens
    with fake.lock:
        st.revoked_refresh.add(token)
        origin = st.refresh_origin.get(token)
        if origin:
            st.revoked_origins.add(origin)
    return json_reply({})


def refuse_revoked_access_token(fake: FakeCognito, req: Request, rest: Rest | None = None) -> Reply | None:
    """A link for the operations that take an AccessToken (moto knows nothing of RevokeToken), and
    a check the links that read an AccessToken themselves call: passes unless it is revoked."""
    token = req.body.get("AccessToken")
    if isinstance(token, str) and access_token_revoked(fake, token):
        raise not_authorized(ACCESS_TOKEN_REVOKED)
    return None


def get_tokens_from_refresh_token(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    """moto lacks it. With config getTokensFromRefreshToken == "fake": ClientSecret checked, tokens
    minted by moto; for a client with RefreshTokenRotation ENABLED a new refresh token comes back
    (a fresh moto sign-in with the known password) and the old one stops working after the
    client's RetryGracePeriodSeconds."""
    if fake.config.get("getTokensFromRefreshToken") != "fake":
        return None
    client = fake.client(req.body.get("ClientId"))
    if client is None:
        raise ServiceError("ResourceNotFoundException", f"Client {req.body.get('ClientId')} does not exist.")
    if client.secret and req.body.get("ClientSecret") != client.secret:
        raise not_authorized(SECRET_HASH_MISMATCH.format(client_id=client.client_id))
    token = req.body.get("RefreshToken") or ""
    now = time.monotonic()
    st = fake.state.tokens
    with fake.lock:
        revoked = token in st.revoked_refresh
        rotated_at = st.rotated.get(token)
        owner = st.refresh_owner.get(token)
    if revoked:
        raise not_authorized(REFRESH_TOKEN_REVOKED)
    if rotated_at is not None and now - rotated_at > client.grace:
        raise ServiceError("RefreshTokenReuseException", "Refresh token has already been used")
    if owner is None:
        raise not_authorized(INVALID_REFRESH_TOKEN)
    pool_id, username = owner
    region = pool_id.split("_")[0]
    if client.rotation:
        with fake.lock:
            password = fake.passwords.get((pool_id, username)) or ""
        params = {"USERNAME": username, "PASSWORD": password}
        flow = ADMIN_USER_PASSWORD_AUTH
    else:
        params = {"REFRESH_TOKEN": token}
        flow = REFRESH_TOKEN_AUTH
    reply = fake.call("AdminInitiateAuth", {"UserPoolId": pool_id, "ClientId": client.client_id, "AuthFlow": flow,
                                            "AuthParameters": params}, region)
    body = reply.json() or {}
    if reply.status != 200 or "AuthenticationResult" not in body:
        raise not_authorized(REFRESH_TOKEN_REVOKED, note=f"moto {flow}: {reply.status} {body}")
    result = body["AuthenticationResult"]
    if client.rotation:
        with fake.lock:
            st.rotated.setdefault(token, now)
        remember_tokens(fake, result)
    else:
        result.pop("RefreshToken", None)
        remember_tokens(fake, result, token)
    reply = json_reply({"AuthenticationResult": result})
    reply.note = "rotated" if client.rotation else None
    return reply
