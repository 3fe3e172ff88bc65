"""GetDerivedToken (RFC 8693 token exchange) and GetClientToken (machine tokens through the API),
botocore 1.44.8's operations that moto lacks. Shapes and error codes are the model's; the texts
are ours (shared.py). The tokens are JWTs signed with moto's own key (kid "dummy"), so the pool's
JWKS at moto verifies them.

GetDerivedToken: the app client (ClientSecret checked when it has one) must allow
ALLOW_TOKEN_EXCHANGE_IMPERSONATION, or with an ActorToken ALLOW_TOKEN_EXCHANGE_DELEGATION
(InvalidParameterException otherwise, worded as InitiateAuth's "flow not enabled"); the subject
token is a live access token of the client's pool; one of Audiences or Resources, each naming a
resource server of the pool (ResourceNotFoundException otherwise). Scopes granted: those asked
that the subject token carries (its `scope`, plus what config {"preTokenScopes": {"<pool id>":
[...]}} says the pool's pre-token-generation trigger adds) and the client allows (its
AllowedOAuthScopes, when it lists any); none asked: the subject token's. The token carries `aud`
(the audience or resource), `scope`, and `act` naming the actor token's subject and client.

GetClientToken: the client must have the secret given and no user sign-in flow (botocore 1.44.8's
ExplicitAuthFlowsType has no ALLOW_CLIENT_TOKEN_AUTH member, so a client without user flows stands
for one whose only flow it is); scopes asked must be the client's (AllowedOAuthScopes), none asked:
all of them.

Every GetDerivedToken and GetClientToken is counted in the request log, like any operation; config
{"derivedTokenLifetime": seconds} sets the issued tokens' lifetime (default 3600).
"""

from __future__ import annotations

import hmac
import time
import uuid
from typing import Any

from joserfc import jwt

from . import client_secrets
from .issuer import _KEY
from .messages import Reply, Request, Rest, ServiceError, json_reply, jwt_claims, not_authorized
from .proxy import ClientInfo, FakeCognito
from .shared import ACCESS_TOKEN_REVOKED, FLOW_NOT_ENABLED, INVALID_ACCESS_TOKEN
from .tokens import access_token_revoked

USER_FLOWS = {"ALLOW_USER_SRP_AUTH", "ALLOW_USER_PASSWORD_AUTH", "ALLOW_USER_AUTH", "ALLOW_CUSTOM_AUTH",
              "ALLOW_ADMIN_USER_PASSWORD_AUTH", "USER_PASSWORD_AUTH", "ADMIN_NO_SRP_AUTH", "CUSTOM_AUTH_FLOW_ONLY"}


def _client(fake: FakeCognito, req: Request) -> ClientInfo:
    client = fake.client(req.body.get("ClientId"))
    if client is None:
        raise ServiceError("ResourceNotFoundException", f"Client {req.body.get('ClientId')} does not exist.")
    return client


def _check_secret(fake: FakeCognito, client: ClientInfo, given: str | None) -> None:
    """Any of the client's live secrets: moto's one, or those client_secrets.py keeps once the
    client's secrets were rotated."""
    live = client_secrets.live_secrets(fake, client.client_id)
    valid = live if live is not None else ([client.secret] if client.secret else [])
    if valid and not any(hmac.compare_digest((given or "").encode(), v.encode()) for v in valid):
        raise not_authorized("Client secret is invalid" if given else "Client secret is required")


def _described(fake: FakeCognito, client: ClientInfo) -> dict[str, Any]:
    region = client.pool_id.split("_")[0]
    reply = fake.call("DescribeUserPoolClient", {"UserPoolId": client.pool_id, "ClientId": client.client_id}, region)
    return (reply.json() or {}).get("UserPoolClient") or {}


def _resource_servers(fake: FakeCognito, pool_id: str) -> set[str]:
    reply = fake.call("ListResourceServers", {"UserPoolId": pool_id, "MaxResults": 50}, pool_id.split("_")[0])
    return {r.get("Identifier") for r in (reply.json() or {}).get("ResourceServers", [])}


def _live_access_token(fake: FakeCognito, token: str | None, pool_id: str, what: str) -> dict[str, Any]:
    claims = jwt_claims(token or "")
    if not claims or claims.get("token_use") != "access" or not (claims.get("iss") or "").endswith("/" + pool_id):
        raise not_authorized(f"Invalid {what}" if what != "subject token" else INVALID_ACCESS_TOKEN)
    if access_token_revoked(fake, token or ""):
        raise not_authorized(ACCESS_TOKEN_REVOKED)
    if claims.get("exp", 0) < time.time():
        raise not_authorized("Access Token has expired")
    return claims


def _mint(claims: dict[str, Any]) -> str:
    return jwt.encode({"kid": "dummy", "alg": "RS256"}, claims, _KEY)


def get_derived_token(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    client = _client(fake, req)
    _check_secret(fake, client, req.body.get("ClientSecret"))
    actor = req.body.get("ActorToken")
    flow = "ALLOW_TOKEN_EXCHANGE_DELEGATION" if actor else "ALLOW_TOKEN_EXCHANGE_IMPERSONATION"
    if flow not in client.flows:
        raise ServiceError("InvalidParameterException", FLOW_NOT_ENABLED.format(flow=flow))
    if req.body.get("SubjectTokenType") != "ACCESS_TOKEN":
        raise ServiceError("InvalidParameterException", "Only ACCESS_TOKEN subject tokens are supported here")
    subject = _live_access_token(fake, req.body.get("SubjectToken"), client.pool_id, "subject token")
    actor_claims = _live_access_token(fake, actor, client.pool_id, "actor token") if actor else None
    audiences, resources = req.body.get("Audiences") or [], req.body.get("Resources") or []
    if bool(audiences) == bool(resources):
        raise ServiceError("InvalidParameterException", "Exactly one of Audiences or Resources is required")
    target = (audiences or resources)[0]
    if target not in _resource_servers(fake, client.pool_id):
        raise ServiceError("ResourceNotFoundException", f"{'Audience' if audiences else 'Resource'} {target} does not exist.")
    held = set((subject.get("scope") or "").split()) | set((fake.config.get("preTokenScopes") or {}).get(client.pool_id, []))
    allowed = set(_described(fake, client).get("AllowedOAuthScopes") or [])
    asked = req.body.get("Scopes")
    granted = [s for s in asked if s in held and (not allowed or s in allowed)] if asked else sorted(held)
    lifetime = int(fake.config.get("derivedTokenLifetime") or 3600)
    now = int(time.time())
    claims: dict[str, Any] = {k: subject[k] for k in ("iss", "sub", "username", "origin_jti") if k in subject}
    claims.update(client_id=client.client_id, token_use="access", scope=" ".join(granted), aud=target,
                  iat=now, auth_time=subject.get("auth_time", now), exp=now + lifetime, jti=str(uuid.uuid4()))
    if actor_claims:
        claims["act"] = {"sub": actor_claims.get("sub"), "client_id": actor_claims.get("client_id")}
    return json_reply({"IssuedToken": _mint(claims), "IssuedTokenType": "ACCESS_TOKEN", "TokenType": "Bearer",
                       "ExpiresIn": lifetime, "Scopes": granted})


def get_client_token(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    client = _client(fake, req)
    if not client.secret:
        raise not_authorized("Client has no secret")
    _check_secret(fake, client, req.body.get("Secret"))
    if USER_FLOWS & set(client.flows):
        raise ServiceError("InvalidParameterException", FLOW_NOT_ENABLED.format(flow="ALLOW_CLIENT_TOKEN_AUTH"))
    allowed = _described(fake, client).get("AllowedOAuthScopes") or []
    asked = req.body.get("Scopes") or allowed
    if any(s not in allowed for s in asked):
        raise ServiceError("InvalidParameterException", "Invalid scope requested")
    lifetime = int(fake.config.get("derivedTokenLifetime") or 3600)
    now = int(time.time())
    region = client.pool_id.split("_")[0]
    claims = {"iss": f"https://cognito-idp.{region}.amazonaws.com/{client.pool_id}", "sub": client.client_id,
              "client_id": client.client_id, "token_use": "access", "scope": " ".join(asked), "iat": now,
              "auth_time": now, "exp": now + lifetime, "jti": str(uuid.uuid4()), "version": 2}
    return json_reply({"ClientAuthenticationResult": {"AccessToken": _mint(claims), "ExpiresIn": lifetime,
                                                      "TokenType": "Bearer"}})
