#!/usr/bin/env python3
"""A fake Amazon Cognito user-pools endpoint that fronts moto's server.

moto is lenient where it matters most for authctl: it accepts any SRP
PASSWORD_CLAIM_SIGNATURE and sends a SECRET_BLOCK that is not base64, so moto
alone proves nothing about SRP. This server forwards every request to moto
unchanged, except:

* InitiateAuth USER_SRP_AUTH and RespondToAuthChallenge PASSWORD_VERIFIER,
  which it answers itself with the real server side of Cognito's SRP
  (RFC 5054 3072-bit group, HKDF "Caldera Derived Key"), using passwords it
  learns as they pass through (AdminCreateUser, AdminSetUserPassword, SignUp,
  ChangePassword, NEW_PASSWORD_REQUIRED, ConfirmForgotPassword, a successful
  USER_PASSWORD_AUTH). After a valid signature it asks moto for the real outcome
  with AdminInitiateAuth ADMIN_USER_PASSWORD_AUTH.
* SECRET_HASH, which it checks on InitiateAuth and RespondToAuthChallenge where
  moto does not, and the client's ExplicitAuthFlows, which moto ignores.
* RevokeToken, which moto lacks (its server answers HTTP 500); the fake keeps
  the revoked refresh tokens and refuses them, and the access tokens issued
  from them, afterwards.
* GetTokensFromRefreshToken, also missing in moto: forwarded (HTTP 500) unless
  POST /_fake/config {"getTokensFromRefreshToken": "fake"}; then implemented,
  with refresh-token rotation for app clients created with RefreshTokenRotation
  ENABLED (which also makes InitiateAuth REFRESH_TOKEN_AUTH refused).
  New operations: add a handler with @handles("Operation") (see OPERATIONS).
* Multi-factor authentication, which moto plays only in part (it checks TOTP
  codes against one fixed secret, and only with
  MOTO_COGNITO_IDP_USER_POOL_ENABLE_TOTP=true; its MFA_SETUP answer hands out
  tokens for any live session; SELECT_MFA_TYPE and EMAIL_OTP answer {}). The
  fake keeps a per-user MFA state, set by tests through POST /_fake/mfa and by
  clients through SetUserMFAPreference / AssociateSoftwareToken /
  VerifySoftwareToken, and after a right password (SRP, USER_PASSWORD_AUTH or a
  NEW_PASSWORD_REQUIRED answer) puts SOFTWARE_TOKEN_MFA, SMS_MFA, EMAIL_OTP,
  SELECT_MFA_TYPE or MFA_SETUP instead of handing out tokens (see MfaUser).
* Fault injection, driven through POST /_fake/faults (see FaultRule).

Every request is appended as one JSON line to the --log file: operation,
AuthFlow / ChallengeName, HTTP status, who answered, the client connection.
No password or token is ever logged.

Usage: fake_cognito.py --upstream http://127.0.0.1:MOTO --port 0 --log PATH
Prints "PORT <n>" on its first stdout line once listening.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import http.client
import itertools
import json
import re
import secrets
import socket
import sys
import threading
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field
from dataclasses import replace as dataclass_replace
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

TARGET_PREFIX = "AWSCognitoIdentityProviderService."
AMZ_JSON = "application/x-amz-json-1.1"
ERROR_TYPE_SUFFIX = ":http://internal.amazon.com/coral/com.amazonaws.cognito.identity.idp.model/"

# ---------------------------------------------------------------------------
# SRP, server side (what Cognito does)
# ---------------------------------------------------------------------------

# RFC 5054 3072-bit group, the one Cognito uses.
N_HEX = (
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
    "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
    "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
    "15728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7"
    "ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200C"
    "BBE117577A615D6C770988C0BAD946E208E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF"
)
N = int(N_HEX, 16)
G = 2
INFO_BITS = b"Caldera Derived Key"
CHALLENGE_LIFETIME = 180.0  # seconds a PASSWORD_VERIFIER challenge stays answerable
MFA_SESSION_LIFETIME = 180.0  # default for config mfaSessionLifetime
MFA_MAX_ATTEMPTS = 3  # default for config mfaMaxAttempts: wrong codes before a challenge session dies
TIMESTAMP_SKEW = 300.0  # seconds the client's TIMESTAMP may differ from now
_DAYS = "Mon|Tue|Wed|Thu|Fri|Sat|Sun"
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
TIMESTAMP_RE = re.compile(
    rf"^({_DAYS}) ({_MONTHS}) ([1-9]|[12][0-9]|3[01]) ([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9]) UTC ([0-9]{{4}})$"
)


def pad_hex(value: int | str) -> str:
    """Cognito's padHex: even length, and a leading 00 when the first digit is >= 8."""
    h = value if isinstance(value, str) else format(value, "x")
    if len(h) % 2 == 1:
        h = "0" + h
    elif h[0] in "89abcdefABCDEF":
        h = "00" + h
    return h


def hex_hash(hex_string: str) -> str:
    return hashlib.sha256(bytes.fromhex(hex_string)).hexdigest()


K = int(hex_hash(pad_hex(N) + pad_hex(G)), 16)


def compute_x(pool_name: str, user_id: str, password: str, salt_hex: str) -> int:
    inner = hashlib.sha256(f"{pool_name}{user_id}:{password}".encode("utf-8")).hexdigest()
    return int(hex_hash(pad_hex(salt_hex) + inner), 16)


def compute_u(a_pub: int, b_pub: int) -> int:
    return int(hex_hash(pad_hex(a_pub) + pad_hex(b_pub)), 16)


def hkdf_key(s_value: int, u_value: int) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=16, salt=bytes.fromhex(pad_hex(u_value)), info=INFO_BITS).derive(
        bytes.fromhex(pad_hex(s_value))
    )


def claim_signature(key: bytes, pool_name: str, user_id: str, secret_block_b64: str, timestamp: str) -> str:
    msg = pool_name.encode() + user_id.encode() + base64.b64decode(secret_block_b64) + timestamp.encode()
    return base64.b64encode(hmac.new(key, msg, hashlib.sha256).digest()).decode()


def secret_hash(client_secret: str, username: str, client_id: str) -> str:
    digest = hmac.new(client_secret.encode(), (username + client_id).encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def parse_srp_timestamp(ts: str) -> datetime | None:
    """The TIMESTAMP Cognito clients send: 'Tue Jul 10 11:01:00 UTC 2018', day not zero-padded."""
    if not TIMESTAMP_RE.match(ts):
        return None
    try:
        when = datetime.strptime(ts, "%a %b %d %H:%M:%S UTC %Y").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    if when.strftime("%a") != ts[:3]:  # weekday must agree with the date
        return None
    return when


@dataclass
class SrpChallenge:
    pool_id: str
    client_id: str
    username: str  # the USER_ID_FOR_SRP we sent
    salt_hex: str
    verifier: int
    b_priv: int
    b_pub: int
    a_pub: int
    secret_block: str
    session: str
    created: float = field(default_factory=time.monotonic)

    @property
    def pool_name(self) -> str:
        return self.pool_id.split("_", 1)[1]


# ---------------------------------------------------------------------------
# Replies and errors
# ---------------------------------------------------------------------------


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    handled_by: str = "moto"
    note: str | None = None

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"{}")
        except ValueError:
            return None


def json_reply(payload: Any, status: int = 200, handled_by: str = "fake") -> Reply:
    body = json.dumps(payload).encode()
    return Reply(
        status,
        [("Content-Type", AMZ_JSON), ("x-amzn-RequestId", str(uuid.uuid4()))],
        body,
        handled_by,
    )


class ServiceError(Exception):
    def __init__(self, error_type: str, message: str, status: int = 400, note: str | None = None):
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.status = status
        self.note = note

    def reply(self) -> Reply:
        body = json.dumps({"__type": self.error_type, "message": self.message}).encode()
        return Reply(
            self.status,
            [
                ("Content-Type", AMZ_JSON),
                ("x-amzn-ErrorType", self.error_type + ERROR_TYPE_SUFFIX),
                ("x-amzn-RequestId", str(uuid.uuid4())),
            ],
            body,
            "fake",
            self.note,
        )


def not_authorized(message: str = "Incorrect username or password.", note: str | None = None) -> ServiceError:
    return ServiceError("NotAuthorizedException", message, note=note)


def jwt_claims(token: str) -> dict[str, Any]:
    """Claims of a JWT, unverified (moto's tokens; only used to find pool/user/origin)."""
    try:
        payload = token.split(".")[1]
        payload += "=" * (-len(payload) % 4)
        return json.loads(base64.urlsafe_b64decode(payload))
    except Exception:
        return {}


# ---------------------------------------------------------------------------
# Faults
# ---------------------------------------------------------------------------

FAULT_KINDS = ("status", "error", "throttle", "drop", "html", "stall", "truncate", "huge")


@dataclass
class FaultRule:
    """One injected fault. JSON fields (POST /_fake/faults):

    operation  "GetUser", "*" (any Cognito operation). Default "*".
    kind       status   -> HTTP `status` (default 500) with a JSON InternalErrorException body
               error    -> HTTP `status` (default 400) service error `errorType` / `message`
               throttle -> HTTP 400 TooManyRequestsException
               drop     -> close the connection without an answer
               html     -> HTTP `status` (default 502) with an HTML page, as a proxy would
               stall    -> sleep `seconds` (default 60), then answer normally
               truncate -> announce a longer body than sent, then close
               huge     -> HTTP 200 with a body of `size` bytes (default 2 MiB)
    count      how many matching requests it hits (default 1; -1 = until cleared)
    when       "before" (default): the request never reaches moto;
               "after": moto performs it, then the client gets the fault instead
    authFlow / challengeName   optional narrower match
    """

    operation: str = "*"
    kind: str = "status"
    count: int = 1
    when: str = "before"
    status: int | None = None
    errorType: str | None = None
    message: str | None = None
    seconds: float = 60.0
    size: int = 2 * 1024 * 1024
    authFlow: str | None = None
    challengeName: str | None = None

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "FaultRule":
        known = set(cls.__dataclass_fields__)
        unknown = set(obj) - known
        if unknown:
            raise ValueError(f"unknown fault fields: {sorted(unknown)}")
        rule = cls(**obj)
        if rule.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {rule.kind!r}; one of {FAULT_KINDS}")
        if rule.when not in ("before", "after"):
            raise ValueError("when must be 'before' or 'after'")
        return rule

    def matches(self, op: str, auth_flow: str | None, challenge: str | None) -> bool:
        if self.operation not in ("*", op):
            return False
        if self.authFlow and self.authFlow != auth_flow:
            return False
        if self.challengeName and self.challengeName != challenge:
            return False
        return self.count != 0


# ---------------------------------------------------------------------------
# Multi-factor authentication: state (moto cannot play it honestly; see the module docstring)
# ---------------------------------------------------------------------------

TOTP = "SOFTWARE_TOKEN_MFA"
SMS = "SMS_MFA"
EMAIL = "EMAIL_OTP"
FACTORS = (TOTP, SMS, EMAIL)
MFA_CHALLENGES = frozenset(FACTORS + ("SELECT_MFA_TYPE", "MFA_SETUP"))
CODE_FIELD = {TOTP: "SOFTWARE_TOKEN_MFA_CODE", SMS: "SMS_MFA_CODE", EMAIL: "EMAIL_OTP_CODE"}
# SELECT_MFA_TYPE's ANSWER: the service model's documentation says EMAIL_MFA, clients send EMAIL_OTP.
SELECT_ANSWERS = {TOTP: TOTP, SMS: SMS, EMAIL: EMAIL, "EMAIL_MFA": EMAIL}
MFA_MODES = ("off", "totp", "sms", "email", "select", "setup")
INVALID_SESSION = "Invalid session for the user."
EXPIRED_SESSION = "Invalid session for the user, session is expired."
NO_TOKEN_NOR_SESSION = "Missing required parameter AccessToken or Session"


def new_totp_secret() -> str:
    """A Base32 secret like Cognito's SecretCode: 32 random bytes, 52 characters, no padding."""
    return base64.b32encode(secrets.token_bytes(32)).decode().rstrip("=")


def totp_code(secret_b32: str, when: float, step: int = 30, digits: int = 6) -> str:
    """RFC 6238 TOTP with HMAC-SHA1 (what authenticator apps and Cognito use)."""
    cleaned = secret_b32.replace(" ", "").upper()
    key = base64.b32decode(cleaned + "=" * (-len(cleaned) % 8))
    mac = hmac.new(key, int(when // step).to_bytes(8, "big"), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    value = int.from_bytes(mac[offset:offset + 4], "big") & 0x7FFFFFFF
    return str(value % 10 ** digits).zfill(digits)


def totp_matches(secret_b32: str, code: str, now: float | None = None, window: int = 1) -> bool:
    """True when `code` is the code of the current 30 s step or of `window` steps either side."""
    now = time.time() if now is None else now
    return any(hmac.compare_digest(totp_code(secret_b32, max(now + k * 30, 0)), code) for k in range(-window, window + 1))


def mask_phone(phone: str) -> str:
    """+15555551234 -> +*******1234, as in CODE_DELIVERY_DESTINATION."""
    digits = [c for c in phone if c.isdigit()]
    return "+" + "*" * max(len(digits) - 4, 0) + "".join(digits[-4:])


def mask_email(email: str) -> str:
    """alice@example.com -> a***@e***."""
    local, _, domain = email.partition("@")
    return f"{local[:1]}***@{domain[:1]}***"


@dataclass
class MfaUser:
    """One user's MFA as the service keeps it.

    enabled        factors in UserMFASettingList (SOFTWARE_TOKEN_MFA, SMS_MFA, EMAIL_OTP), in order
    preferred      PreferredMfaSetting, or None
    secret         the verified authenticator secret (Base32), if any
    pending        a secret from AssociateSoftwareToken(AccessToken) not verified yet
    setup_required the pool requires MFA: with no factor enabled, sign-in asks MFA_SETUP
    fixed_code     SMS/email codes sent are always this one (a test phone), else random
    """

    pool_id: str
    username: str
    enabled: list[str] = field(default_factory=list)
    preferred: str | None = None
    secret: str | None = None
    pending: str | None = None
    setup_required: bool = False
    phone: str | None = None
    email: str | None = None
    fixed_code: str | None = None
    friendly_device_name: str | None = None
    sent: list[dict[str, Any]] = field(default_factory=list)  # codes "delivered" by SMS / email

    def challenge(self) -> tuple[str, list[str]] | None:
        """What a sign-in must pass after the password: (challenge name, factors offered)."""
        if self.enabled:
            if self.preferred in self.enabled:
                return self.preferred, [self.preferred]
            if len(self.enabled) == 1:
                return self.enabled[0], list(self.enabled)
            return "SELECT_MFA_TYPE", list(self.enabled)
        if self.setup_required:
            return "MFA_SETUP", [TOTP]
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "pool": self.pool_id,
            "username": self.username,
            "enabled": self.enabled,
            "preferred": self.preferred,
            "secret": self.secret,
            "pendingSecret": self.pending,
            "setupRequired": self.setup_required,
            "phone": self.phone,
            "email": self.email,
            "friendlyDeviceName": self.friendly_device_name,
            "codesSent": len(self.sent),
        }


@dataclass
class MfaChallenge:
    """A live MFA challenge session (one Session string; a new one at every step)."""

    session: str
    name: str
    pool_id: str
    client_id: str
    username: str
    expires: float  # monotonic
    offered: list[str] = field(default_factory=list)
    code: str | None = None  # SMS / email code sent for this challenge
    attempts: int = 0  # wrong codes so far
    secret: str | None = None  # MFA_SETUP: associated with this session
    verified: bool = False  # MFA_SETUP: VerifySoftwareToken accepted a code
    friendly_device_name: str | None = None


# ---------------------------------------------------------------------------
# The fake
# ---------------------------------------------------------------------------


@dataclass
class ClientInfo:
    client_id: str
    pool_id: str
    secret: str | None
    flows: list[str]
    rotation: bool = False  # RefreshTokenRotation.Feature == ENABLED (moto stores it, ignores it)
    grace: float = 0.0  # RefreshTokenRotation.RetryGracePeriodSeconds


@dataclass
class Request:
    op: str
    body: dict[str, Any]
    raw: bytes
    headers: list[tuple[str, str]]
    path: str

    @property
    def auth_flow(self) -> str | None:
        v = self.body.get("AuthFlow")
        return v if isinstance(v, str) else None

    @property
    def challenge_name(self) -> str | None:
        v = self.body.get("ChallengeName")
        return v if isinstance(v, str) else None


Handler = Callable[["FakeCognito", Request], "Reply | None"]
Observer = Callable[["FakeCognito", Request, Reply], None]

# Operation -> handler. A handler returns a Reply to answer itself, or None to forward to moto.
OPERATIONS: dict[str, Handler] = {}
# Operation -> observers called after moto (or a handler) answered; they learn passwords and tokens.
OBSERVERS: dict[str, list[Observer]] = {}


def handles(op: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        OPERATIONS[op] = fn
        return fn

    return deco


def observes(*ops: str) -> Callable[[Observer], Observer]:
    def deco(fn: Observer) -> Observer:
        for op in ops:
            OBSERVERS.setdefault(op, []).append(fn)
        return fn

    return deco


class FakeCognito:
    def __init__(self, upstream: str, log_path: str | None):
        u = urllib.parse.urlsplit(upstream)
        self.upstream_host = u.hostname or "127.0.0.1"
        self.upstream_port = u.port or 80
        self.log_path = log_path
        self.lock = threading.RLock()
        self.log_lock = threading.Lock()
        self.passwords: dict[tuple[str, str], str] = {}
        self.clients: dict[str, ClientInfo] = {}
        self.challenges: dict[str, SrpChallenge] = {}  # by SECRET_BLOCK
        self.sessions: dict[str, str] = {}  # Session -> SECRET_BLOCK
        self.faults: list[FaultRule] = []
        self.revoked_refresh: set[str] = set()
        self.revoked_origins: set[str] = set()
        self.refresh_origin: dict[str, str] = {}  # refresh token -> origin_jti of tokens issued with it
        self.refresh_owner: dict[str, tuple[str, str]] = {}  # refresh token -> (pool id, username)
        self.rotated: dict[str, float] = {}  # refresh token rotated out -> when (monotonic)
        self.mfa_users: dict[tuple[str, str], MfaUser] = {}  # (pool id, username) -> MFA state
        self.mfa_sessions: dict[str, MfaChallenge] = {}  # challenge Session -> its state
        # Switches tests may flip with POST /_fake/config.
        self.config: dict[str, Any] = {
            "revokeToken": "fake",  # "fake": implemented here; "upstream": forwarded (moto: HTTP 500)
            # GetTokensFromRefreshToken: "upstream" forwards it (moto: HTTP 500, as an emulator without
            # it answers); "fake" implements it here, with rotation for clients that enable it.
            "getTokensFromRefreshToken": "upstream",
            "checkExplicitAuthFlows": True,
            # MFA challenge sessions (and the sessions AssociateSoftwareToken / VerifySoftwareToken
            # hand on) live this many seconds, as Cognito's 3 minutes; wrong codes allowed per session.
            "mfaSessionLifetime": MFA_SESSION_LIFETIME,
            "mfaMaxAttempts": MFA_MAX_ATTEMPTS,
        }

    # -- upstream --------------------------------------------------------

    def forward_raw(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> Reply:
        conn = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=60)
        try:
            out = {}
            for k, v in headers:
                if k.lower() in HOP_BY_HOP or k.lower() in ("host", "content-length"):
                    continue
                out[k] = v
            out["Host"] = f"{self.upstream_host}:{self.upstream_port}"
            out["Content-Length"] = str(len(body))
            conn.request(method, path, body=body if method != "GET" or body else None, headers=out)
            resp = conn.getresponse()
            data = resp.read()
            rh = [(k, v) for k, v in resp.getheaders() if k.lower() not in HOP_BY_HOP and k.lower() != "content-length"]
            return Reply(resp.status, rh, data, "moto")
        finally:
            conn.close()

    def call(self, op: str, payload: dict[str, Any], region: str = "us-east-1") -> Reply:
        """An admin call of the fake's own to moto (signed-looking, as moto only reads the region)."""
        day = time.strftime("%Y%m%d", time.gmtime())
        headers = [
            ("Content-Type", AMZ_JSON),
            ("X-Amz-Target", TARGET_PREFIX + op),
            (
                "Authorization",
                f"AWS4-HMAC-SHA256 Credential=testing/{day}/{region}/cognito-idp/aws4_request, "
                "SignedHeaders=host;x-amz-target, Signature=0",
            ),
        ]
        return self.forward_raw("POST", "/", headers, json.dumps(payload).encode())

    # -- clients and users -------------------------------------------------

    def remember_client(self, uc: dict[str, Any]) -> None:
        if not uc.get("ClientId") or not uc.get("UserPoolId"):
            return
        rotation = uc.get("RefreshTokenRotation") or {}
        with self.lock:
            self.clients[uc["ClientId"]] = ClientInfo(
                uc["ClientId"],
                uc["UserPoolId"],
                uc.get("ClientSecret") or None,
                list(uc.get("ExplicitAuthFlows") or []),
                rotation.get("Feature") == "ENABLED",
                float(rotation.get("RetryGracePeriodSeconds") or 0),
            )

    def client(self, client_id: str | None) -> ClientInfo | None:
        if not client_id:
            return None
        with self.lock:
            info = self.clients.get(client_id)
        if info:
            return info
        # Not created through us: look for it in moto.
        regions = {c.pool_id.split("_")[0] for c in list(self.clients.values())} | {"us-east-1"}
        for region in regions:
            pools: list[dict[str, Any]] = []
            page: dict[str, Any] = {"MaxResults": 60}
            while True:  # every page: a test session makes hundreds of pools
                listed = self.call("ListUserPools", page, region).json() or {}
                pools += listed.get("UserPools", [])
                if not listed.get("NextToken"):
                    break
                page = {"MaxResults": 60, "NextToken": listed["NextToken"]}
            for pool in reversed(pools):  # the newest first
                d = self.call("DescribeUserPoolClient", {"UserPoolId": pool["Id"], "ClientId": client_id}, region)
                if d.status == 200:
                    self.remember_client(d.json().get("UserPoolClient", {}))
                    with self.lock:
                        return self.clients.get(client_id)
        return None

    def learn_password(self, pool_id: str | None, username: str | None, password: str | None) -> None:
        if pool_id and username and password:
            with self.lock:
                self.passwords[(pool_id, username)] = password

    def check_secret_hash(self, client: ClientInfo, username: str | None, given: str | None) -> None:
        if not client.secret:
            return
        if not given:
            raise not_authorized(f"Client {client.client_id} is configured with secret but SECRET_HASH was not received")
        if not username or not hmac.compare_digest(secret_hash(client.secret, username, client.client_id), given):
            raise not_authorized(f"Unable to verify secret hash for client {client.client_id}")

    def check_flow(self, client: ClientInfo, flow: str) -> None:
        if not self.config.get("checkExplicitAuthFlows"):
            return
        allowed = client.flows or ["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH", "ALLOW_CUSTOM_AUTH"]
        legacy = {"USER_SRP_AUTH": None, "USER_PASSWORD_AUTH": "USER_PASSWORD_AUTH", "REFRESH_TOKEN_AUTH": None}
        if f"ALLOW_{flow}" in allowed or (legacy.get(flow) and legacy[flow] in allowed):
            return
        raise ServiceError("InvalidParameterException", f"{flow} flow not enabled for this client")

    # -- revoked tokens ----------------------------------------------------

    def remember_tokens(self, result: dict[str, Any], refresh_token: str | None = None) -> None:
        refresh = result.get("RefreshToken") or refresh_token
        access = result.get("AccessToken")
        if refresh and access:
            claims = jwt_claims(access)
            pool_id = (claims.get("iss") or "").rstrip("/").rsplit("/", 1)[-1]
            with self.lock:
                if claims.get("origin_jti"):
                    self.refresh_origin.setdefault(refresh, claims["origin_jti"])
                if pool_id and claims.get("username"):
                    self.refresh_owner.setdefault(refresh, (pool_id, claims["username"]))

    def access_token_revoked(self, token: str) -> bool:
        origin = jwt_claims(token).get("origin_jti")
        with self.lock:
            return bool(origin) and origin in self.revoked_origins

    # -- multi-factor authentication ---------------------------------------

    def mfa_user(self, pool_id: str, username: str) -> MfaUser:
        with self.lock:
            return self.mfa_users.setdefault((pool_id, username), MfaUser(pool_id, username))

    def new_mfa_session(self, ch: MfaChallenge | None = None, **changes: Any) -> MfaChallenge:
        """A fresh Session for `ch` (whose old Session stops working), with `changes` applied."""
        lifetime = float(self.config.get("mfaSessionLifetime", MFA_SESSION_LIFETIME))
        session = base64.b64encode(secrets.token_bytes(96)).decode()
        with self.lock:
            now = time.monotonic()
            for key in [k for k, c in self.mfa_sessions.items() if now - c.expires > 600]:
                del self.mfa_sessions[key]  # long dead: forget (recently dead ones still say "expired")
            if ch is not None:
                self.mfa_sessions.pop(ch.session, None)
                new = dataclass_replace(ch, session=session, expires=now + lifetime, **changes)
            else:
                new = MfaChallenge(session=session, expires=now + lifetime, **changes)
            self.mfa_sessions[session] = new
        return new

    def live_mfa_session(self, session: str | None) -> MfaChallenge:
        with self.lock:
            ch = self.mfa_sessions.get(session or "")
        if ch is None:
            raise not_authorized(INVALID_SESSION, note="no such MFA session")
        if time.monotonic() > ch.expires:
            raise not_authorized(EXPIRED_SESSION, note="MFA session expired")
        return ch

    def wrong_code(self, ch: MfaChallenge, error: ServiceError) -> ServiceError:
        """Counts a wrong code; the session dies after mfaMaxAttempts of them."""
        with self.lock:
            ch.attempts += 1
            if ch.attempts >= int(self.config.get("mfaMaxAttempts", MFA_MAX_ATTEMPTS)):
                self.mfa_sessions.pop(ch.session, None)
                error.note = f"wrong code {ch.attempts}: session ended"
            else:
                error.note = f"wrong code {ch.attempts}"
        return error

    # -- faults ------------------------------------------------------------

    def take_fault(self, req: Request, when: str) -> FaultRule | None:
        with self.lock:
            for rule in self.faults:
                if rule.when == when and rule.matches(req.op, req.auth_flow, req.challenge_name):
                    if rule.count > 0:
                        rule.count -= 1
                    return rule
        return None

    # -- log ---------------------------------------------------------------

    def log(self, entry: dict[str, Any]) -> None:
        if not self.log_path:
            return
        line = json.dumps(entry, sort_keys=True) + "\n"
        with self.log_lock, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()


HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "expect"}


# ---------------------------------------------------------------------------
# Operations the fake answers or checks itself
# ---------------------------------------------------------------------------


@handles("InitiateAuth")
def initiate_auth(fake: FakeCognito, req: Request) -> Reply | None:
    flow = req.auth_flow or ""
    params = req.body.get("AuthParameters") or {}
    client = fake.client(req.body.get("ClientId"))
    if client is None:
        return None  # moto answers ResourceNotFoundException
    if flow in ("USER_SRP_AUTH", "USER_PASSWORD_AUTH", "REFRESH_TOKEN_AUTH", "REFRESH_TOKEN"):
        fake.check_flow(client, "REFRESH_TOKEN_AUTH" if flow == "REFRESH_TOKEN" else flow)
    if flow in ("REFRESH_TOKEN_AUTH", "REFRESH_TOKEN"):
        token = params.get("REFRESH_TOKEN")
        with fake.lock:
            revoked = token in fake.revoked_refresh
        if revoked:
            raise not_authorized("Refresh Token has been revoked")
        if client.rotation:
            # Cognito refuses the old flow once rotation is on (the exact words are our guess).
            raise not_authorized("Refresh token rotation is enabled for this app client: use GetTokensFromRefreshToken")
        if client.secret and not params.get("SECRET_HASH"):
            # moto refuses this too, but with an empty message; Cognito names the missing hash.
            raise not_authorized(f"Client {client.client_id} is configured with secret but SECRET_HASH was not received")
        return None  # moto checks the SECRET_HASH's value for refresh itself
    if flow == "USER_PASSWORD_AUTH":
        fake.check_secret_hash(client, params.get("USERNAME"), params.get("SECRET_HASH"))
        # moto checks the password; a user with MFA gets a challenge instead of its tokens.
        return mfa_gate(fake, client, fake.forward_raw("POST", req.path, req.headers, req.raw))
    if flow != "USER_SRP_AUTH":
        return None

    username = params.get("USERNAME")
    fake.check_secret_hash(client, username, params.get("SECRET_HASH"))
    if not username:
        raise ServiceError("InvalidParameterException", "Missing required parameter USERNAME")
    srp_a = params.get("SRP_A")
    if not srp_a:
        raise ServiceError("InvalidParameterException", "Missing required parameter SRP_A")
    try:
        a_pub = int(srp_a, 16)
    except ValueError:
        raise ServiceError("InvalidParameterException", "SRP_A is not a hexadecimal number") from None
    if a_pub % N == 0:
        raise ServiceError("InvalidParameterException", "SRP_A is invalid (A mod N == 0)")

    region = client.pool_id.split("_")[0]
    got = fake.call("AdminGetUser", {"UserPoolId": client.pool_id, "Username": username}, region)
    if got.status != 200:
        info = got.json() or {}
        if info.get("__type") == "UserNotFoundException":
            raise ServiceError("UserNotFoundException", "User does not exist.")
        got.handled_by = "moto"
        return got
    user = got.json()
    if not user.get("Enabled", True):
        raise not_authorized("User is disabled.")
    if user.get("UserStatus") == "UNCONFIRMED":
        raise ServiceError("UserNotConfirmedException", "User is not confirmed.")
    user_id = user["Username"]
    with fake.lock:
        password = fake.passwords.get((client.pool_id, user_id))
    note = None
    if password is None:
        # Unknown to us: no signature can match (as for a user whose password nobody knows).
        password = secrets.token_hex(32)
        note = "password unknown to the fake"

    salt_hex = format(secrets.randbits(128) | (1 << 127), "x")  # canonical hex, no leading zero
    pool_name = client.pool_id.split("_", 1)[1]
    verifier = pow(G, compute_x(pool_name, user_id, password, salt_hex), N)
    while True:
        b_priv = secrets.randbits(1024)
        b_pub = (K * verifier + pow(G, b_priv, N)) % N
        if b_pub != 0 and compute_u(a_pub, b_pub) != 0:
            break
    secret_block = base64.b64encode(secrets.token_bytes(1024)).decode()  # Cognito's is about this long
    session = base64.b64encode(secrets.token_bytes(48)).decode()
    ch = SrpChallenge(client.pool_id, client.client_id, user_id, salt_hex, verifier, b_priv, b_pub, a_pub, secret_block, session)
    with fake.lock:
        now = time.monotonic()
        for key in [k for k, c in fake.challenges.items() if now - c.created > CHALLENGE_LIFETIME]:
            fake.sessions.pop(fake.challenges.pop(key).session, None)
        fake.challenges[secret_block] = ch
        fake.sessions[session] = secret_block
    reply = json_reply(
        {
            "ChallengeName": "PASSWORD_VERIFIER",
            "ChallengeParameters": {
                "SALT": salt_hex,
                "SRP_B": format(b_pub, "x"),
                "SECRET_BLOCK": secret_block,
                "USER_ID_FOR_SRP": user_id,
                "USERNAME": user_id,
            },
            "Session": session,
        }
    )
    reply.note = note
    return reply


@handles("RespondToAuthChallenge")
def respond_to_auth_challenge(fake: FakeCognito, req: Request) -> Reply | None:
    name = req.challenge_name
    responses = req.body.get("ChallengeResponses") or {}
    client = fake.client(req.body.get("ClientId"))
    if client is None:
        return None
    if name in MFA_CHALLENGES:
        return answer_mfa_challenge(fake, req, client)
    if name != "PASSWORD_VERIFIER":
        # moto does not check SECRET_HASH on challenge answers; Cognito does.
        fake.check_secret_hash(client, responses.get("USERNAME"), responses.get("SECRET_HASH"))
        if name == "NEW_PASSWORD_REQUIRED":  # a new password, then the second factor
            return mfa_gate(fake, client, fake.forward_raw("POST", req.path, req.headers, req.raw))
        return None

    block = responses.get("PASSWORD_CLAIM_SECRET_BLOCK")
    with fake.lock:
        key = block if block in fake.challenges else fake.sessions.get(req.body.get("Session") or "")
        ch = fake.challenges.pop(key, None) if key else None  # single use, right or wrong
        if ch:
            fake.sessions.pop(ch.session, None)
    if ch is None or time.monotonic() - ch.created > CHALLENGE_LIFETIME:
        raise not_authorized("Invalid session for the user, session is expired.", note="no such SRP challenge")
    if ch.client_id != client.client_id:
        raise not_authorized("Invalid session for the user.", note="challenge issued to another client")
    fake.check_secret_hash(client, responses.get("USERNAME"), responses.get("SECRET_HASH"))
    if block != ch.secret_block:
        raise not_authorized(note="PASSWORD_CLAIM_SECRET_BLOCK is not the SECRET_BLOCK we sent")
    if responses.get("USERNAME") != ch.username:
        raise not_authorized(note="USERNAME is not USER_ID_FOR_SRP")
    ts = responses.get("TIMESTAMP") or ""
    when = parse_srp_timestamp(ts)
    if when is None:
        raise not_authorized(note=f"TIMESTAMP {ts!r} is not 'EEE MMM d HH:mm:ss UTC yyyy'")
    if abs(when.timestamp() - time.time()) > TIMESTAMP_SKEW:
        raise not_authorized(note=f"TIMESTAMP {ts!r} is more than {TIMESTAMP_SKEW:.0f} s from now")
    signature = responses.get("PASSWORD_CLAIM_SIGNATURE") or ""
    u_value = compute_u(ch.a_pub, ch.b_pub)
    s_value = pow(ch.a_pub * pow(ch.verifier, u_value, N), ch.b_priv, N)
    expected = claim_signature(hkdf_key(s_value, u_value), ch.pool_name, ch.username, ch.secret_block, ts)
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        raise not_authorized(note="PASSWORD_CLAIM_SIGNATURE does not match")

    # The proof is right: let moto decide what happens next (tokens, NEW_PASSWORD_REQUIRED, MFA...).
    with fake.lock:
        password = fake.passwords.get((ch.pool_id, ch.username))
    region = ch.pool_id.split("_")[0]
    admin = {
        "UserPoolId": ch.pool_id,
        "ClientId": ch.client_id,
        "AuthFlow": "ADMIN_USER_PASSWORD_AUTH",
        "AuthParameters": {"USERNAME": ch.username, "PASSWORD": password or ""},
    }
    reply = fake.call("AdminInitiateAuth", admin, region)
    body = reply.json()
    if reply.status == 200 and isinstance(body, dict) and body.get("ChallengeName") == "NEW_PASSWORD_REQUIRED":
        # moto's admin flow sends no parameters; Cognito sends these.
        user = fake.call("AdminGetUser", {"UserPoolId": ch.pool_id, "Username": ch.username}, region).json() or {}
        attrs = {a["Name"]: a["Value"] for a in user.get("UserAttributes", []) if a["Name"] != "sub"}
        body["ChallengeParameters"] = {
            "USER_ID_FOR_SRP": ch.username,
            "requiredAttributes": "[]",
            "userAttributes": json.dumps(attrs),
        }
        reply = json_reply(body, handled_by="fake+moto")
    else:
        reply.handled_by = "fake+moto"
        reply.headers = [(k, v) for k, v in reply.headers if k.lower() != "content-type"] + [("Content-Type", AMZ_JSON)]
    return mfa_gate(fake, client, reply)


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
        raise not_authorized("Access Token has been revoked")
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
        raise not_authorized(f"Unable to verify secret hash for client {client.client_id}")
    token = req.body.get("RefreshToken") or ""
    now = time.monotonic()
    with fake.lock:
        revoked = token in fake.revoked_refresh
        rotated_at = fake.rotated.get(token)
        owner = fake.refresh_owner.get(token)
    if revoked:
        raise not_authorized("Refresh Token has been revoked")
    if rotated_at is not None and now - rotated_at > client.grace:
        raise ServiceError("RefreshTokenReuseException", "Refresh token has already been used")
    if owner is None:
        raise not_authorized("Invalid Refresh Token")
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
        raise not_authorized("Refresh Token has been revoked", note=f"moto {flow}: {reply.status} {body}")
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


# ---------------------------------------------------------------------------
# Multi-factor authentication: the operations
# ---------------------------------------------------------------------------

def _mfa_set_mode(fake: FakeCognito, payload: dict[str, Any]) -> MfaUser:
    """POST /_fake/mfa: {"pool","username","mode", "secret"?, "offered"?, "phone"?, "email"?, "code"?}."""
    pool_id, username, mode = payload.get("pool"), payload.get("username"), payload.get("mode")
    if not pool_id or not username:
        raise ValueError("pool and username are required")
    if mode not in MFA_MODES:
        raise ValueError(f"mode must be one of {MFA_MODES}")
    offered = payload.get("offered") or [SMS, TOTP]
    if not isinstance(offered, list) or not offered or any(f not in FACTORS for f in offered):
        raise ValueError(f"offered must be a non-empty list of {FACTORS}")
    region = pool_id.split("_")[0]
    got = fake.call("AdminGetUser", {"UserPoolId": pool_id, "Username": username}, region)
    if got.status != 200:
        raise ValueError(f"no user {username} in {pool_id}: {got.body[:200]!r}")
    attrs = {a["Name"]: a["Value"] for a in (got.json() or {}).get("UserAttributes", [])}
    with fake.lock:
        user = fake.mfa_user(pool_id, got.json()["Username"])
        user.phone = payload.get("phone") or user.phone or attrs.get("phone_number") or "+15555551234"
        user.email = payload.get("email") or user.email or attrs.get("email") or f"{username}@example.com"
        user.fixed_code = payload.get("code") or None
        user.enabled, user.preferred, user.setup_required = [], None, False
        if mode in ("totp", "sms", "email"):
            factor = {"totp": TOTP, "sms": SMS, "email": EMAIL}[mode]
            user.enabled, user.preferred = [factor], factor
        elif mode == "select":
            user.enabled = list(dict.fromkeys(offered))
        elif mode == "setup":
            user.setup_required = True
        if TOTP in user.enabled:
            user.secret = payload.get("secret") or user.secret or new_totp_secret()
        elif payload.get("secret"):
            user.secret = payload["secret"]
        return user


def mfa_admin(fake: FakeCognito, method: str, path: str, query: dict[str, str], payload: Any) -> Reply:
    """The test's side door: set a user's MFA, read it, and read the last SMS / email code."""
    try:
        if path == "/_fake/mfa" and method == "POST":
            user = _mfa_set_mode(fake, payload if isinstance(payload, dict) else {})
            return json_reply(user.to_json())
        key = (query.get("pool", ""), query.get("username", ""))
        with fake.lock:
            user = fake.mfa_users.get(key)
            if path == "/_fake/mfa" and method == "GET":
                return json_reply(user.to_json()) if user else json_reply({"error": f"no MFA state for {key}"}, 404)
            if path == "/_fake/mfa/code" and method == "GET":
                if not user or not user.sent:
                    return json_reply({"error": f"no code sent to {key}"}, 404)
                return json_reply(dict(user.sent[-1], count=len(user.sent)))
    except ValueError as e:
        return json_reply({"error": str(e)}, 400)
    return json_reply({"error": f"no admin endpoint {method} {path}"}, 404)


def issue_mfa_challenge(fake: FakeCognito, client: ClientInfo, username: str, name: str, offered: list[str],
                        previous: MfaChallenge | None = None) -> Reply:
    """The challenge reply, shaped as RespondToAuthChallengeResponse / InitiateAuthResponse."""
    params = {"USER_ID_FOR_SRP": username}
    code = None
    user = fake.mfa_user(client.pool_id, username)
    if name in (SMS, EMAIL):
        code = user.fixed_code or f"{secrets.randbelow(10 ** 6):06d}"
        medium = "SMS" if name == SMS else "EMAIL"
        destination = mask_phone(user.phone or "") if name == SMS else mask_email(user.email or "")
        params["CODE_DELIVERY_DELIVERY_MEDIUM"] = medium
        params["CODE_DELIVERY_DESTINATION"] = destination
        with fake.lock:
            user.sent.append({"challengeName": name, "code": code, "medium": medium, "destination": destination,
                              "to": user.phone if name == SMS else user.email, "ts": time.time()})
    elif name == "SELECT_MFA_TYPE":
        params["MFAS_CAN_CHOOSE"] = json.dumps(offered)
    elif name == "MFA_SETUP":
        params["MFAS_CAN_SETUP"] = json.dumps([TOTP])
    changes = dict(name=name, offered=offered, code=code, attempts=0)
    if previous is None:
        ch = fake.new_mfa_session(None, pool_id=client.pool_id, client_id=client.client_id, username=username, **changes)
    else:
        ch = fake.new_mfa_session(previous, **changes)
    reply = json_reply({"ChallengeName": name, "ChallengeParameters": params, "Session": ch.session})
    reply.note = f"MFA challenge {name}"
    return reply


def mfa_gate(fake: FakeCognito, client: ClientInfo, reply: Reply) -> Reply:
    """After a right password: tokens only for a user who needs no second factor."""
    if reply.status != 200:
        return reply
    result = (reply.json() or {}).get("AuthenticationResult")
    if not result:
        return reply
    username = jwt_claims(result.get("AccessToken") or "").get("username") or ""
    with fake.lock:
        if not any(pool_id == client.pool_id for pool_id, _ in fake.mfa_users):
            return reply  # nobody in this pool has MFA: spare the lookup
    # moto's USER_PASSWORD_AUTH puts the name as typed (an alias, say) in the token; the service's is wanted.
    got = fake.call("AdminGetUser", {"UserPoolId": client.pool_id, "Username": username}, client.pool_id.split("_")[0])
    if got.status == 200:
        username = (got.json() or {}).get("Username") or username
    with fake.lock:
        user = fake.mfa_users.get((client.pool_id, username))
        wanted = user.challenge() if user else None
    if wanted is None:
        return reply
    # The tokens moto just minted are dropped; new ones are fetched once the challenge is passed.
    return issue_mfa_challenge(fake, client, username, *wanted)


def finish_mfa(fake: FakeCognito, ch: MfaChallenge) -> Reply:
    """The challenge is passed: tokens from moto (AdminInitiateAuth with the known password, as
    after SRP; moto itself never learns about the user's MFA, so it hands them out)."""
    with fake.lock:
        fake.mfa_sessions.pop(ch.session, None)
        password = fake.passwords.get((ch.pool_id, ch.username))
    admin = {
        "UserPoolId": ch.pool_id,
        "ClientId": ch.client_id,
        "AuthFlow": "ADMIN_USER_PASSWORD_AUTH",
        "AuthParameters": {"USERNAME": ch.username, "PASSWORD": password or ""},
    }
    reply = fake.call("AdminInitiateAuth", admin, ch.pool_id.split("_")[0])
    reply.handled_by = "fake+moto"
    reply.note = f"{ch.name} passed"
    reply.headers = [(k, v) for k, v in reply.headers if k.lower() != "content-type"] + [("Content-Type", AMZ_JSON)]
    return reply


def answer_mfa_challenge(fake: FakeCognito, req: Request, client: ClientInfo) -> Reply:
    name = req.challenge_name or ""
    responses = req.body.get("ChallengeResponses") or {}
    ch = fake.live_mfa_session(req.body.get("Session"))
    if ch.client_id != client.client_id:
        raise not_authorized(INVALID_SESSION, note="MFA session issued to another client")
    fake.check_secret_hash(client, responses.get("USERNAME"), responses.get("SECRET_HASH"))
    if responses.get("USERNAME") != ch.username:
        raise not_authorized(INVALID_SESSION, note=f"USERNAME is not the challenge's user {ch.username}")
    if name != ch.name:
        raise ServiceError("InvalidParameterException", f"Invalid challenge name: the session is for {ch.name}",
                           note=f"answered {name} to {ch.name}")

    if name in CODE_FIELD:
        code = responses.get(CODE_FIELD[name])
        if not code:
            raise ServiceError("InvalidParameterException", f"Missing required parameter {CODE_FIELD[name]}")
        if name == TOTP:
            secret = fake.mfa_user(ch.pool_id, ch.username).secret
            right = bool(secret) and totp_matches(secret, code)
        else:
            right = ch.code is not None and hmac.compare_digest(ch.code, code)
        if not right:
            raise fake.wrong_code(ch, ServiceError("CodeMismatchException", "Invalid code received for user"))
        return finish_mfa(fake, ch)

    if name == "SELECT_MFA_TYPE":
        chosen = SELECT_ANSWERS.get(responses.get("ANSWER") or "")
        if chosen not in ch.offered:
            raise ServiceError("InvalidParameterException", f"Invalid ANSWER: must be one of {ch.offered}",
                               note=f"ANSWER {responses.get('ANSWER')!r}")
        return issue_mfa_challenge(fake, client, ch.username, chosen, [chosen], previous=ch)

    # MFA_SETUP, answered with the Session VerifySoftwareToken returned.
    if not ch.verified or not ch.secret:
        raise not_authorized(INVALID_SESSION, note="MFA_SETUP answered before VerifySoftwareToken succeeded")
    with fake.lock:
        user = fake.mfa_user(ch.pool_id, ch.username)
        user.secret, user.friendly_device_name = ch.secret, ch.friendly_device_name
        user.enabled = [TOTP] + [f for f in user.enabled if f != TOTP]
        user.preferred = TOTP
    return finish_mfa(fake, ch)


def _user_of_access_token(fake: FakeCognito, req: Request,
                          missing: str = "Missing required parameter AccessToken") -> tuple[str, str] | Reply:
    """(pool id, username) of a live access token, asking moto (GetUser); or moto's refusal.
    A request without the token is refused with `missing`, as the service does."""
    if not req.body.get("AccessToken"):
        raise ServiceError("InvalidParameterException", missing)
    _revoked_access_token_guard(fake, req)
    token = req.body.get("AccessToken") or ""
    claims = jwt_claims(token)
    pool_id = (claims.get("iss") or "").rstrip("/").rsplit("/", 1)[-1]
    got = fake.call("GetUser", {"AccessToken": token}, pool_id.split("_")[0] if "_" in pool_id else "us-east-1")
    if got.status != 200 or not pool_id:
        return got
    return pool_id, got.json()["Username"]


def _check_user_code(code: Any) -> str:
    if not isinstance(code, str) or not re.fullmatch(r"[0-9]{6}", code):
        raise ServiceError("InvalidParameterException",
                           "1 validation error detected: Value at 'userCode' failed to satisfy constraint: "
                           "Member must satisfy regular expression pattern: [0-9]+ and length 6")
    return code


@handles("AssociateSoftwareToken")
def associate_software_token(fake: FakeCognito, req: Request) -> Reply | None:
    """moto: one fixed secret for everyone. Here a new secret per association, bound to the
    challenge session (MFA_SETUP) or to the user (AccessToken)."""
    if req.body.get("Session"):
        ch = fake.live_mfa_session(req.body["Session"])
        if ch.name != "MFA_SETUP":
            raise not_authorized(INVALID_SESSION, note=f"AssociateSoftwareToken with a {ch.name} session")
        ch = fake.new_mfa_session(ch, secret=new_totp_secret(), verified=False, attempts=0)
        return json_reply({"SecretCode": ch.secret, "Session": ch.session})
    who = _user_of_access_token(fake, req, missing=NO_TOKEN_NOR_SESSION)
    if isinstance(who, Reply):
        return who
    with fake.lock:
        user = fake.mfa_user(*who)
        user.pending = new_totp_secret()
        return json_reply({"SecretCode": user.pending})


@handles("VerifySoftwareToken")
def verify_software_token(fake: FakeCognito, req: Request) -> Reply | None:
    code = _check_user_code(req.body.get("UserCode"))
    name = req.body.get("FriendlyDeviceName")
    if req.body.get("Session"):
        ch = fake.live_mfa_session(req.body["Session"])
        if ch.name != "MFA_SETUP" or not ch.secret:
            raise not_authorized(INVALID_SESSION, note="VerifySoftwareToken before AssociateSoftwareToken")
        if not totp_matches(ch.secret, code):
            raise fake.wrong_code(ch, ServiceError("EnableSoftwareTokenMFAException", "Code mismatch"))
        ch = fake.new_mfa_session(ch, verified=True, friendly_device_name=name)
        return json_reply({"Status": "SUCCESS", "Session": ch.session})
    who = _user_of_access_token(fake, req, missing=NO_TOKEN_NOR_SESSION)
    if isinstance(who, Reply):
        return who
    with fake.lock:
        user = fake.mfa_user(*who)
        if not user.pending:
            raise ServiceError("SoftwareTokenMFANotFoundException", "Software token has not been associated with the user")
        if not totp_matches(user.pending, code):
            raise ServiceError("EnableSoftwareTokenMFAException", "Code mismatch")
        # Verified: usable once SetUserMFAPreference turns it on (as Cognito does).
        user.secret, user.pending, user.friendly_device_name = user.pending, None, name
    return json_reply({"Status": "SUCCESS"})


def _apply_mfa_preference(fake: FakeCognito, pool_id: str, username: str, body: dict[str, Any]) -> Reply:
    settings = {TOTP: body.get("SoftwareTokenMfaSettings"), SMS: body.get("SMSMfaSettings"),
                EMAIL: body.get("EmailMfaSettings")}
    with fake.lock:
        user = fake.mfa_user(pool_id, username)
        if (settings[TOTP] or {}).get("Enabled") and not user.secret:
            raise ServiceError("InvalidParameterException", "User has not verified software token mfa")
        for factor, setting in settings.items():
            if not isinstance(setting, dict):
                continue
            if setting.get("Enabled"):
                if factor not in user.enabled:
                    user.enabled.append(factor)
            elif "Enabled" in setting:
                user.enabled = [f for f in user.enabled if f != factor]
                if user.preferred == factor:
                    user.preferred = None
            if setting.get("PreferredMfa"):
                user.preferred = factor
            elif "PreferredMfa" in setting and user.preferred == factor:
                user.preferred = None
        if user.preferred not in user.enabled:
            user.preferred = None
    return json_reply({})


@handles("SetUserMFAPreference")
def set_user_mfa_preference(fake: FakeCognito, req: Request) -> Reply | None:
    """moto would store it and then challenge in its own admin flow, with its fixed secret."""
    who = _user_of_access_token(fake, req)
    if isinstance(who, Reply):
        return who
    return _apply_mfa_preference(fake, *who, req.body)


@handles("AdminSetUserMFAPreference")
def admin_set_user_mfa_preference(fake: FakeCognito, req: Request) -> Reply | None:
    pool_id, username = req.body.get("UserPoolId") or "", req.body.get("Username") or ""
    got = fake.call("AdminGetUser", {"UserPoolId": pool_id, "Username": username}, pool_id.split("_")[0] or "us-east-1")
    if got.status != 200:
        return got
    return _apply_mfa_preference(fake, pool_id, got.json()["Username"], req.body)


def _overlay_mfa(fake: FakeCognito, pool_id: str, reply: Reply) -> Reply:
    """GetUser / AdminGetUser as moto answers, with the MFA fields from the fake's state."""
    body = reply.json() if reply.status == 200 else None
    if not isinstance(body, dict):
        return reply
    with fake.lock:
        user = fake.mfa_users.get((pool_id, body.get("Username") or ""))
        if user is None:
            return reply
        body.pop("UserMFASettingList", None)
        body.pop("PreferredMfaSetting", None)
        if user.enabled:
            body["UserMFASettingList"] = list(user.enabled)
        if user.preferred:
            body["PreferredMfaSetting"] = user.preferred
    out = json_reply(body, handled_by="moto+fake")
    return out


@handles("GetUser")
def get_user(fake: FakeCognito, req: Request) -> Reply | None:
    _revoked_access_token_guard(fake, req)
    claims = jwt_claims(req.body.get("AccessToken") or "")
    pool_id = (claims.get("iss") or "").rstrip("/").rsplit("/", 1)[-1]
    return _overlay_mfa(fake, pool_id, fake.forward_raw("POST", req.path, req.headers, req.raw))


@handles("AdminGetUser")
def admin_get_user(fake: FakeCognito, req: Request) -> Reply | None:
    return _overlay_mfa(fake, req.body.get("UserPoolId") or "", fake.forward_raw("POST", req.path, req.headers, req.raw))


# ---------------------------------------------------------------------------
# Observers: learn passwords, clients and tokens from what passes through
# ---------------------------------------------------------------------------


@observes("CreateUserPoolClient", "DescribeUserPoolClient", "UpdateUserPoolClient")
def _learn_client(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status == 200:
        uc = (reply.json() or {}).get("UserPoolClient") or {}
        if req.op == "UpdateUserPoolClient" and "ClientSecret" not in uc:
            old = fake.clients.get(uc.get("ClientId", ""))
            if old:
                uc = dict(uc, ClientSecret=old.secret)
        fake.remember_client(uc)


@observes("DeleteUserPoolClient")
def _forget_client(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status == 200:
        with fake.lock:
            fake.clients.pop(req.body.get("ClientId", ""), None)


@observes("AdminCreateUser")
def _learn_admin_create(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status == 200:
        user = (reply.json() or {}).get("User") or {}
        fake.learn_password(req.body.get("UserPoolId"), user.get("Username") or req.body.get("Username"), req.body.get("TemporaryPassword"))


@observes("AdminSetUserPassword")
def _learn_admin_set(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status == 200:
        fake.learn_password(req.body.get("UserPoolId"), req.body.get("Username"), req.body.get("Password"))


def _pool_of(fake: FakeCognito, client_id: str | None) -> str | None:
    info = fake.client(client_id)
    return info.pool_id if info else None


@observes("SignUp", "ConfirmForgotPassword")
def _learn_signup(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status == 200:
        fake.learn_password(_pool_of(fake, req.body.get("ClientId")), req.body.get("Username"), req.body.get("Password"))


@observes("ChangePassword")
def _learn_change(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status == 200:
        claims = jwt_claims(req.body.get("AccessToken") or "")
        pool_id = (claims.get("iss") or "").rstrip("/").rsplit("/", 1)[-1]
        fake.learn_password(pool_id, claims.get("username"), req.body.get("ProposedPassword"))


@observes("RespondToAuthChallenge", "AdminRespondToAuthChallenge")
def _learn_new_password(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status != 200:
        return
    responses = req.body.get("ChallengeResponses") or {}
    if req.challenge_name == "NEW_PASSWORD_REQUIRED":
        pool_id = req.body.get("UserPoolId") or _pool_of(fake, req.body.get("ClientId"))
        fake.learn_password(pool_id, responses.get("USERNAME"), responses.get("NEW_PASSWORD"))
    fake.remember_tokens((reply.json() or {}).get("AuthenticationResult") or {})


@observes("InitiateAuth", "AdminInitiateAuth")
def _learn_from_auth(fake: FakeCognito, req: Request, reply: Reply) -> None:
    if reply.status != 200:
        return
    params = req.body.get("AuthParameters") or {}
    if req.auth_flow in ("USER_PASSWORD_AUTH", "ADMIN_USER_PASSWORD_AUTH", "ADMIN_NO_SRP_AUTH"):
        pool_id = req.body.get("UserPoolId") or _pool_of(fake, req.body.get("ClientId"))
        fake.learn_password(pool_id, params.get("USERNAME"), params.get("PASSWORD"))
    fake.remember_tokens((reply.json() or {}).get("AuthenticationResult") or {}, params.get("REFRESH_TOKEN"))


# ---------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------

_conn_ids = itertools.count(1)


class RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-cognito/1"
    sys_version = ""
    fake: FakeCognito  # set on the subclass

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
        try:
            body = json.loads(raw) if raw else {}
            if not isinstance(body, dict):
                body = {}
        except ValueError:
            body = {}
        req = Request(op, body, raw, list(self.headers.items()), self.path)
        entry: dict[str, Any] = {
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

        fault = fake.take_fault(req, "before")
        if fault is not None:
            entry["fault"] = fault.kind
            if not self._apply_fault(fault, entry):
                return  # connection dropped / truncated: logged inside
            if fault.kind != "stall":
                return
        try:
            handler = OPERATIONS.get(op)
            reply = handler(fake, req) if handler else None
            if reply is None:
                reply = fake.forward_raw("POST", self.path, req.headers, raw)
        except ServiceError as e:
            reply = e.reply()
        except Exception as e:  # a bug in the fake: say so loudly, as a 500 the test will see
            reply = ServiceError("InternalErrorException", f"fake_cognito bug: {type(e).__name__}: {e}", 500).reply()
            print(f"fake_cognito: {op}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        for obs in OBSERVERS.get(op, []):
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
        if kind == "html":
            status = rule.status or 502
            page = (
                f"<html><head><title>{status} Bad Gateway</title></head><body><center><h1>{status} Bad Gateway</h1>"
                "</center><hr><center>nginx</center></body></html>\n"
            ).encode()
            reply = Reply(status, [("Content-Type", "text/html")], page, "fault")
        elif kind == "huge":
            reply = Reply(rule.status or 200, [("Content-Type", AMZ_JSON)], b'{"pad":"' + b"x" * rule.size + b'"}', "fault")
        elif kind == "throttle":
            reply = ServiceError("TooManyRequestsException", rule.message or "Too many requests", rule.status or 400).reply()
        elif kind == "error":
            reply = ServiceError(rule.errorType or "InternalErrorException", rule.message or "Injected error", rule.status or 400).reply()
        else:  # status
            status = rule.status or 500
            reply = ServiceError(rule.errorType or "InternalErrorException", rule.message or f"Injected HTTP {status}", status).reply()
        fake.log(dict(entry, status=reply.status, errorType=reply.json().get("__type") if reply.json() else None))
        self._send(reply)
        return True


def serve(upstream: str, port: int, log_path: str | None, host: str = "127.0.0.1") -> tuple[ThreadingHTTPServer, FakeCognito]:
    fake = FakeCognito(upstream, log_path)
    handler = type("BoundHandler", (RequestHandler,), {"fake": fake})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server, fake


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", required=True, help="moto server URL, e.g. http://127.0.0.1:5000")
    ap.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--log", default=None, help="append one JSON line per request to this file")
    args = ap.parse_args(argv)
    server, _ = serve(args.upstream, args.port, args.log, args.host)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
