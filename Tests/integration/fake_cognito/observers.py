"""Observers: the fake learns passwords, clients and tokens from what passes through (which
operations each one sees is chain.OBSERVERS)."""

from __future__ import annotations

from .messages import Reply, Request, jwt_claims
from .proxy import FakeCognito
from .shared import ADMIN_NO_SRP_AUTH, ADMIN_USER_PASSWORD_AUTH, NEW_PASSWORD_REQUIRED, USER_PASSWORD_AUTH
from .tokens import remember_tokens


def learn_client(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status == 200:
        uc = (reply.json() or {}).get("UserPoolClient") or {}
        if req.op == "UpdateUserPoolClient" and "ClientSecret" not in uc:
            old = fake.clients.get(uc.get("ClientId", ""))
            if old:
                uc = dict(uc, ClientSecret=old.secret)
        fake.remember_client(uc)


def forget_client(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status == 200:
        with fake.lock:
            fake.clients.pop(req.body.get("ClientId", ""), None)


def learn_admin_create(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status == 200:
        user = (reply.json() or {}).get("User") or {}
        fake.learn_password(req.body.get("UserPoolId"), user.get("Username") or req.body.get("Username"), req.body.get("TemporaryPassword"))


def learn_admin_set(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status == 200:
        fake.learn_password(req.body.get("UserPoolId"), req.body.get("Username"), req.body.get("Password"))


def _pool_of(fake: FakeCognito, client_id: str | None) -> str | None:
    info = fake.client(client_id)
    return info.pool_id if info else None


def learn_signup(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status == 200:
        fake.learn_password(_pool_of(fake, req.body.get("ClientId")), req.body.get("Username"), req.body.get("Password"))


def learn_change(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status == 200:
        claims = jwt_claims(req.body.get("AccessToken") or "")
        pool_id = (claims.get("iss") or "").rstrip("/").rsplit("/", 1)[-1]
        fake.learn_password(pool_id, claims.get("username"), req.body.get("ProposedPassword"))


def learn_new_password(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status != 200:
        return
    responses = req.body.get("ChallengeResponses") or {}
    if req.challenge_name == NEW_PASSWORD_REQUIRED:
        pool_id = req.body.get("UserPoolId") or _pool_of(fake, req.body.get("ClientId"))
        fake.learn_password(pool_id, responses.get("USERNAME"), responses.get("NEW_PASSWORD"))
    remember_tokens(fake, (reply.json() or {}).get("AuthenticationResult") or {})


def learn_from_auth(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status != 200:
        return
    params = req.body.get("AuthParameters") or {}
    if req.auth_flow in (USER_PASSWORD_AUTH, ADMIN_USER_PASSWORD_AUTH, ADMIN_NO_SRP_AUTH):
        pool_id = req.body.get("UserPoolId") or _pool_of(fake, req.body.get("ClientId"))
        fake.learn_password(pool_id, params.get("USERNAME"), params.get("PASSWORD"))
    remember_tokens(fake, (reply.json() or {}).get("AuthenticationResult") or {}, params.get("REFRESH_TOKEN"))
