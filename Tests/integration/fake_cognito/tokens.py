"""RevokeToken and GetTokensFromRefreshToken, which moto lacks, and the refusal of access tokens
issued from a revoked refresh token."""

from __future__ import annotations

import time

from .proxy import FakeCognito
from .registry import OPERATIONS, Reply, Request, ServiceError, handles, json_reply, jwt_claims, not_authorized
from .shared import ACCESS_TOKEN_REVOKED, INVALID_REFRESH_TOKEN, REFRESH_TOKEN_REVOKED, SECRET_HASH_MISMATCH


@handles("RevokeToken")
def revoke_token(fake: FakeCognito, req: Request) -> Reply | None:
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
    with fake.lock:
        fake.revoked_refresh.add(token)
        origin = fake.refresh_origin.get(token)
        if origin:
            fake.revoked_origins.add(origin)
    return json_reply({})


def _revoked_access_token_guard(fake: FakeCognito, req: Request) -> Reply | None:
    token = req.body.get("AccessToken")
    if isinstance(token, str) and fake.access_token_revoked(token):
        raise not_authorized(ACCESS_TOKEN_REVOKED)
    return None


for _op in ("GetUser", "GlobalSignOut", "ChangePassword", "UpdateUserAttributes", "DeleteUser",
            "AssociateSoftwareToken", "VerifySoftwareToken", "SetUserMFAPreference"):
    OPERATIONS.setdefault(_op, _revoked_access_token_guard)


@handles("GetTokensFromRefreshToken")
def get_tokens_from_refresh_token(fake: FakeCognito, req: Request) -> Reply | None:
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
    with fake.lock:
        revoked = token in fake.revoked_refresh
        rotated_at = fake.rotated.get(token)
        owner = fake.refresh_owner.get(token)
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
        flow = "ADMIN_USER_PASSWORD_AUTH"
    else:
        params = {"REFRESH_TOKEN": token}
        flow = "REFRESH_TOKEN_AUTH"
    reply = fake.call("AdminInitiateAuth", {"UserPoolId": pool_id, "ClientId": client.client_id, "AuthFlow": flow,
                                            "AuthParameters": params}, region)
    body = reply.json() or {}
    if reply.status != 200 or "AuthenticationResult" not in body:
        raise not_authorized(REFRESH_TOKEN_REVOKED, note=f"moto {flow}: {reply.status} {body}")
    result = body["AuthenticationResult"]
    if client.rotation:
        with fake.lock:
            fake.rotated.setdefault(token, now)
        fake.remember_tokens(result)
    else:
        result.pop("RefreshToken", None)
        fake.remember_tokens(result, token)
    reply = json_reply({"AuthenticationResult": result})
    reply.note = "rotated" if client.rotation else None
    return reply
