"""Pools on the updated issuer: moto names every token's `iss`
https://cognito-idp.<region>.amazonaws.com/<pool id>; a pool whose issuer configuration is
UPDATED (needed for multi-Region replication) names https://issuer-cognito-idp.<primary
region>.amazonaws.com/<pool id>, the primary region being the pool id's prefix.

POST /_fake/config {"issuers": {"<pool id>": "updated"}} makes the fake hand out that pool's
access and id tokens with the updated issuer (any other string is used as the issuer as it is,
for tests of a wrong one). The tokens are moto's, with `iss` changed and signed again with moto's
own key (kid "dummy"), so the key set moto publishes at /<pool id>/.well-known/jwks.json, which
the tests reach through the endpoint override, verifies them. moto knows only its own token
strings: a reminted token that comes back is turned into moto's before any link sees the request
(`to_moto`), and tokens in an AuthenticationResult are reminted after the chain (`from_moto`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from joserfc import jwk, jwt
from moto.utilities.utils import load_resource

from .messages import Reply, Request, json_reply, jwt_claims

_KEY = jwk.RSAKey.import_key(load_resource("moto.cognitoidp.models", "resources/jwks-private.json"))


@dataclass
class IssuerState:
    """What this module keeps (fake.state.issuer), under the fake's lock."""

    moto_token: dict[str, str] = field(default_factory=dict)  # reminted token -> moto's


def updated_issuer(pool_id: str) -> str:
    return f"https://issuer-cognito-idp.{pool_id.split('_')[0]}.amazonaws.com/{pool_id}"


def _issuer_for(fake: Any, token: str) -> str | None:
    iss = jwt_claims(token).get("iss") or ""
    pool_id = iss.rstrip("/").rsplit("/", 1)[-1]
    wanted = (fake.config.get("issuers") or {}).get(pool_id)
    if not wanted:
        return None
    return updated_issuer(pool_id) if wanted == "updated" else wanted


def _remint(fake: Any, token: str) -> str:
    issuer = _issuer_for(fake, token)
    if issuer is None:
        return token
    claims = dict(jwt_claims(token), iss=issuer)
    minted = jwt.encode({"kid": "dummy", "alg": "RS256"}, claims, _KEY)
    with fake.lock:
        fake.state.issuer.moto_token[minted] = token
    return minted


def to_moto(fake: Any, req: Request) -> Request:
    """The request with a reminted AccessToken replaced by moto's own."""
    token = req.body.get("AccessToken")
    if not isinstance(token, str):
        return req
    with fake.lock:
        original = fake.state.issuer.moto_token.get(token)
    if original is None:
        return req
    body = dict(req.body, AccessToken=original)
    return Request(req.op, body, json.dumps(body).encode(), req.headers, req.path, req.endpoint)


def from_moto(fake: Any, req: Request, reply: Reply) -> Reply:
    """An answer's AuthenticationResult with its tokens reminted for a pool on another issuer."""
    if not fake.config.get("issuers") or reply.status != 200:
        return reply
    body = reply.json()
    result = body.get("AuthenticationResult") if isinstance(body, dict) else None
    if not isinstance(result, dict):
        return reply
    changed = False
    for key in ("AccessToken", "IdToken"):
        if isinstance(result.get(key), str):
            minted = _remint(fake, result[key])
            changed |= minted != result[key]
            result[key] = minted
    if not changed:
        return reply
    out = json_reply(body, handled_by=reply.handled_by)
    out.note = reply.note
    return out
