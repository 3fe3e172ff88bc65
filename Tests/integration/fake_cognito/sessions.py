"""Session tracking (botocore 1.44.8's user-pool API of late 2026), which moto lacks entirely:
ListUserSessions, RevokeUserSession, AdminListUserSessions, AdminRevokeUserSession,
Get/SetUserPoolSessionConfiguration, and RevokeToken's RevokeAssociatedSessions.

As the service does, per pool, and off unless turned on (POST /_fake/config
{"sessionTracking": {"<pool id>": true}}, or SetUserPoolSessionConfiguration):
* every sign-in that hands out a refresh token starts a token session ("tkn" + 25 of [a-z0-9]),
  keyed by the tokens' `origin_jti` (moto keeps it across refreshes, so every access token of the
  session is known by it); a refresh with rotation keeps the session, a refresh updates its
  LastActiveDate and DeviceType;
* a managed-login sign-in (fake_managed_login.py's AdminInitiateAuth, marked with the
  X-Fake-Managed-Login header naming the user) also has an SSO session ("sso..."), one per user
  while it lasts, which its token sessions name as OriginSessionId;
* revoking a session (RevokeUserSession, its Admin form, RevokeToken of its refresh token,
  GlobalSignOut) removes it and revokes its refresh tokens and access tokens through tokens.py's
  state, so refresh (REFRESH_TOKEN_AUTH, GetTokensFromRefreshToken) and the access-token
  operations refuse them; LINKED also ends a token session's SSO session, or an SSO session's
  token sessions;
* with tracking off the session operations answer OperationNotEnabledException.

DeviceType is the sign-in's User-Agent (the service parses it; outside text either way). Tests
set what the next sessions show with POST /_fake/config {"nextSessions": [{"deviceType": ...,
"city": ..., "country": ..., "ip": ...}, ...]}, taken one per new token session, in order.
Shapes and error codes are the model's (SessionDescriptionType, epoch-second dates); the texts
are ours (shared.py).
"""

from __future__ import annotations

import secrets
import string
import time
from dataclasses import dataclass, field
from typing import Any

from .messages import Reply, Request, Rest, ServiceError, json_reply, jwt_claims, not_authorized
from .proxy import FakeCognito
from .shared import (ACCESS_TOKEN_REVOKED, CURRENT_SESSION_NOT_REVOCABLE, INVALID_ACCESS_TOKEN, SESSION_NOT_FOUND,
                     SESSION_TRACKING_DISABLED, USER_NOT_FOUND)
from .tokens import access_token_revoked

MANAGED_LOGIN_HEADER = "X-Fake-Managed-Login"
MAX_SESSIONS = 125  # SessionsListType's maximum


@dataclass
class Session:
    session_id: str
    kind: str  # "TOKEN" or "SSO"
    pool_id: str
    username: str
    client_id: str
    created: float = field(default_factory=time.time)
    last_active: float = field(default_factory=time.time)
    device_type: str = "unknown"
    ip: str = "127.0.0.1"
    city: str | None = None
    country: str | None = None
    origin_session: str | None = None  # a token session's SSO session
    origins: set[str] = field(default_factory=set)  # origin_jti of its tokens (a rotation adds one)
    refresh_tokens: set[str] = field(default_factory=set)

    def describe(self, current: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"SessionId": self.session_id, "SessionType": self.kind, "ClientId": self.client_id,
                               "CreateDate": self.created, "LastActiveDate": self.last_active,
                               "DeviceType": self.device_type[:1024], "LastIPAddress": self.ip,
                               "IsCurrentSession": current}
        location = {k: v for k, v in (("City", self.city), ("Country", self.country)) if v is not None}
        if location:
            out["LastLocation"] = location
        if self.origin_session:
            out["OriginSessionId"] = self.origin_session
        return out


@dataclass
class SessionState:
    """What this module keeps (fake.state.sessions), under the fake's lock."""

    sessions: dict[str, Session] = field(default_factory=dict)  # by SessionId
    by_origin: dict[str, str] = field(default_factory=dict)  # origin_jti -> SessionId
    sso_of_user: dict[tuple[str, str], str] = field(default_factory=dict)  # (pool, user) -> live SSO SessionId


def new_session_id(kind: str) -> str:
    alphabet = string.ascii_lowercase + string.digits
    return ("tkn" if kind == "TOKEN" else "sso") + "".join(secrets.choice(alphabet) for _ in range(25))


def tracking(fake: FakeCognito, pool_id: str) -> bool:
    return bool((fake.config.get("sessionTracking") or {}).get(pool_id))


def _pool_and_user(claims: dict[str, Any]) -> tuple[str, str]:
    pool_id = (claims.get("iss") or "").rstrip("/").rsplit("/", 1)[-1]
    return pool_id, claims.get("username") or claims.get("cognito:username") or ""


def _header(req: Request, name: str) -> str | None:
    return next((v for k, v in req.headers if k.lower() == name.lower()), None)


# -- sessions begin (an observer of the sign-in and refresh answers) ------------------------------

def learn_sessions(fake: FakeCognito, req: Request, reply: Reply) -> None:
    """A sign-in's tokens start a token session; a refresh's touch theirs (a rotation adds its origin)."""
    if reply.status != 200:
        return
    result = (reply.json() or {}).get("AuthenticationResult") or {}
    access = result.get("AccessToken")
    if not isinstance(access, str):
        return
    claims = jwt_claims(access)
    origin = claims.get("origin_jti")
    pool_id, username = _pool_and_user(claims)
    if not origin or not tracking(fake, pool_id):
        return
    presented = (req.body.get("AuthParameters") or {}).get("REFRESH_TOKEN") or req.body.get("RefreshToken")
    st = fake.state.sessions
    now = time.time()
    device = (_header(req, "User-Agent") or "unknown")[:1024]
    with fake.lock:
        sid = st.by_origin.get(origin)
        if sid is None and isinstance(presented, str):  # rotation: the new tokens belong to the old session
            sid = next((s.session_id for s in st.sessions.values() if presented in s.refresh_tokens), None)
        if sid is not None and sid in st.sessions:
            session = st.sessions[sid]
            session.last_active, session.device_type = now, device
        elif isinstance(presented, str):
            return  # a refresh of a session that is gone: nothing new begins
        else:
            details = fake.config.get("nextSessions") or []
            detail = details.pop(0) if details else {}
            session = Session(new_session_id("TOKEN"), "TOKEN", pool_id, username, claims.get("client_id") or "",
                              device_type=str(detail.get("deviceType", device)), ip=str(detail.get("ip", "127.0.0.1")),
                              city=detail.get("city"), country=detail.get("country"))
            if _header(req, MANAGED_LOGIN_HEADER):
                session.origin_session = _sso_session(fake, pool_id, username, session.client_id, device).session_id
            st.sessions[session.session_id] = session
        session.origins.add(origin)
        st.by_origin[origin] = session.session_id
        if isinstance(result.get("RefreshToken"), str):
            session.refresh_tokens.add(result["RefreshToken"])
        elif isinstance(presented, str):
            session.refresh_tokens.add(presented)


def _sso_session(fake: FakeCognito, pool_id: str, username: str, client_id: str, device: str) -> Session:
    """The user's live managed-login session, begun now if there is none (under the lock)."""
    st = fake.state.sessions
    sid = st.sso_of_user.get((pool_id, username))
    if sid in st.sessions:
        session = st.sessions[sid]
        session.last_active = time.time()
        return session
    session = Session(new_session_id("SSO"), "SSO", pool_id, username, client_id, device_type=device)
    st.sessions[session.session_id] = session
    st.sso_of_user[(pool_id, username)] = session.session_id
    return session


# -- sessions end ------------------------------------------------------------------------------

def _end(fake: FakeCognito, sid: str, linked: bool) -> None:
    """Removes a session and revokes its tokens (under the lock); LINKED ends its linked sessions."""
    st = fake.state.sessions
    session = st.sessions.pop(sid, None)
    if session is None:
        return
    tokens = fake.state.tokens
    tokens.revoked_refresh |= session.refresh_tokens
    tokens.revoked_origins |= session.origins
    if session.kind == "SSO":
        st.sso_of_user.pop((session.pool_id, session.username), None)
    if not linked:
        return
    if session.kind == "TOKEN" and session.origin_session:
        _end(fake, session.origin_session, False)
    elif session.kind == "SSO":
        for other in [s.session_id for s in st.sessions.values() if s.origin_session == sid]:
            _end(fake, other, False)


def _caller(fake: FakeCognito, req: Request) -> tuple[str, str, str]:
    """(pool id, username, origin_jti) of the request's live AccessToken; the service's refusals."""
    token = req.body.get("AccessToken") or ""
    claims = jwt_claims(token)
    pool_id, username = _pool_and_user(claims)
    if not claims or not username or claims.get("token_use") != "access":
        raise not_authorized(INVALID_ACCESS_TOKEN)
    if access_token_revoked(fake, token):
        raise not_authorized(ACCESS_TOKEN_REVOKED)
    if claims.get("exp") and claims["exp"] < time.time():
        raise not_authorized("Access Token has expired")
    if not tracking(fake, pool_id):
        raise ServiceError("OperationNotEnabledException", SESSION_TRACKING_DISABLED)
    return pool_id, username, claims.get("origin_jti") or ""


def _admin_user(fake: FakeCognito, req: Request) -> tuple[str, str]:
    pool_id = req.body.get("UserPoolId") or ""
    got = fake.call("AdminGetUser", {"UserPoolId": pool_id, "Username": req.body.get("Username")},
                    pool_id.split("_")[0])
    if got.status != 200:
        info = got.json() or {}
        if info.get("__type") == "UserNotFoundException":
            raise ServiceError("UserNotFoundException", USER_NOT_FOUND)
        raise ServiceError(info.get("__type") or "ResourceNotFoundException", info.get("message") or "no such pool")
    if not tracking(fake, pool_id):
        raise ServiceError("OperationNotEnabledException", SESSION_TRACKING_DISABLED)
    return pool_id, (got.json() or {}).get("Username") or ""


def _listing(fake: FakeCognito, pool_id: str, username: str, current_origin: str | None) -> Reply:
    with fake.lock:
        mine = [s for s in fake.state.sessions.sessions.values() if s.pool_id == pool_id and s.username == username]
        listed = [s.describe(bool(current_origin) and current_origin in s.origins) for s in mine[:MAX_SESSIONS]]
    return json_reply({"Sessions": listed})


def list_user_sessions(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    pool_id, username, origin = _caller(fake, req)
    return _listing(fake, pool_id, username, origin)


def admin_list_user_sessions(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    pool_id, username = _admin_user(fake, req)
    return _listing(fake, pool_id, username, None)


def _revoke(fake: FakeCognito, req: Request, pool_id: str, username: str, origin: str | None) -> Reply:
    sid = req.body.get("SessionId")
    with fake.lock:
        session = fake.state.sessions.sessions.get(sid)
        if session is None or session.pool_id != pool_id or session.username != username:
            raise ServiceError("ResourceNotFoundException", SESSION_NOT_FOUND)
        if origin and origin in session.origins:
            raise ServiceError("InvalidParameterException", CURRENT_SESSION_NOT_REVOCABLE)
        _end(fake, sid, req.body.get("RevokeAssociatedSessions") == "LINKED")
    return json_reply({})


def revoke_user_session(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    pool_id, username, origin = _caller(fake, req)
    return _revoke(fake, req, pool_id, username, origin)


def admin_revoke_user_session(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    pool_id, username = _admin_user(fake, req)
    return _revoke(fake, req, pool_id, username, None)


def revoke_token(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    """Around tokens.py's RevokeToken: once it succeeds, the refresh token's session ends (with
    RevokeAssociatedSessions LINKED, its SSO session too)."""
    reply = rest()
    if req.body.get("RevokeAssociatedSessions"):
        reply.note = f"RevokeAssociatedSessions={req.body['RevokeAssociatedSessions']}"  # for tests to read
    if reply.status == 200:
        token = req.body.get("Token")
        with fake.lock:
            sid = next((s.session_id for s in fake.state.sessions.sessions.values() if token in s.refresh_tokens),
                       None)
            if sid:
                _end(fake, sid, req.body.get("RevokeAssociatedSessions") == "LINKED")
    return reply


def end_user_sessions(fake: FakeCognito, req: Request, reply: Reply) -> None:
    """An observer of GlobalSignOut and AdminUserGlobalSignOut: every session of the user ends."""
    if reply.status != 200:
        return
    if req.op == "GlobalSignOut":
        pool_id, username = _pool_and_user(jwt_claims(req.body.get("AccessToken") or ""))
    else:
        pool_id, username = req.body.get("UserPoolId") or "", req.body.get("Username") or ""
    with fake.lock:
        for sid in [s.session_id for s in fake.state.sessions.sessions.values()
                    if s.pool_id == pool_id and s.username == username]:
            _end(fake, sid, False)


# -- the pool's setting (IAM-signed; moto lacks it) ----------------------------------------------

def get_user_pool_session_configuration(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    pool_id = req.body.get("UserPoolId") or ""
    limit = (fake.config.get("sessionsPerUser") or {}).get(pool_id, 100)
    return json_reply({"UserPoolId": pool_id, "UserSessionTracking": "ENABLED" if tracking(fake, pool_id) else "DISABLED",
                       "TokenSession": {"MaxPerUser": limit}})


def set_user_pool_session_configuration(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    pool_id = req.body.get("UserPoolId") or ""
    on = req.body.get("UserSessionTracking") == "ENABLED"
    with fake.lock:
        fake.config.setdefault("sessionTracking", {})[pool_id] = on
        fake.config.setdefault("sessionsPerUser", {})[pool_id] = (req.body.get("TokenSession") or {}).get("MaxPerUser", 100)
    return json_reply({"UserPoolId": pool_id, "UserSessionTracking": "ENABLED" if on else "DISABLED",
                       "TokenSession": req.body.get("TokenSession") or {"MaxPerUser": 100}})
