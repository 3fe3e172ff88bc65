"""Device tracking (remembered devices) for fake_cognito, which moto does not have at all.

Its links are listed in chain.py: the first of the InitiateAuth, RespondToAuthChallenge and
GetTokensFromRefreshToken chains (they see what the links after them answer), and the device
operations. Its state is DeviceState (fake.state.devices).
Shapes follow botocore's cognito-idp 2016-04-18 model (AuthenticationResultType.NewDeviceMetadata,
ConfirmDevice, UpdateDeviceStatus, ListDevices, ForgetDevice, AdminListDevices, AdminForgetDevice,
DeviceType with epoch-second dates).

Per pool, off unless a test turns it on through POST /_fake/config:

    {"deviceTracking": {"<pool id>": {"mode": "always" | "userOptIn", "skipMfa": true}}}

mode "always": ConfirmDevice remembers the device; "userOptIn": ConfirmDevice answers
UserConfirmationNecessary=true and UpdateDeviceStatus "remembered" remembers it. skipMfa
(default true): a sign-in with a remembered device's DEVICE_KEY gets DEVICE_SRP_AUTH instead of
its MFA challenge (or its tokens), as Cognito does with "remembered devices suppress MFA".

What it plays, as the service does:
* Tokens from a sign-in that sent no (valid) DEVICE_KEY carry NewDeviceMetadata: a new device
  (DeviceKey "<region>_<uuid>", DeviceGroupKey "-<random>") for that user, unconfirmed.
* ConfirmDevice keeps the DeviceSecretVerifierConfig (base64 verifier and salt) and the name.
* DEVICE_SRP_AUTH (USERNAME, DEVICE_KEY, SRP_A) -> DEVICE_PASSWORD_VERIFIER (SRP_B, SALT,
  SECRET_BLOCK); the signature is checked for real against the stored verifier (the user SRP with
  DeviceGroupKey for the pool name and DeviceKey for the user): a wrong device password is refused
  with NotAuthorizedException.
* A DEVICE_KEY / DeviceKey the pool does not know (forgotten) is refused with
  ResourceNotFoundException "Device does not exist." at InitiateAuth, PASSWORD_VERIFIER and on
  refresh.
* REFRESH_TOKEN_AUTH and GetTokensFromRefreshToken put the device key they got in the request
  log's `note` ("deviceKey=<key>" or "deviceKey=none"), for tests to read.
"""

from __future__ import annotations

import base64
import hmac
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from . import messages, mfa, mfa_state, shared, srp
from .shared import (DEVICE_PASSWORD_VERIFIER, DEVICE_SRP_AUTH, PASSWORD_FLOWS, PASSWORD_VERIFIER, REFRESH_FLOWS,
                     USER_PASSWORD_AUTH)

DEVICE_NOT_FOUND = "Device does not exist."


@dataclass
class Device:
    pool_id: str
    username: str
    key: str
    group_key: str
    created: float = field(default_factory=time.time)
    modified: float = field(default_factory=time.time)
    last_authenticated: float | None = None
    name: str | None = None
    salt_hex: str | None = None
    verifier: int | None = None
    remembered: str | None = None  # "remembered" / "not_remembered" once confirmed

    @property
    def confirmed(self) -> bool:
        return self.verifier is not None

    def to_device_type(self) -> dict[str, Any]:
        attrs = [{"Name": "device_status", "Value": "valid"}, {"Name": "last_ip_used", "Value": "127.0.0.1"}]
        if self.name is not None:
            attrs.append({"Name": "device_name", "Value": self.name})
        if self.remembered:
            attrs.append({"Name": "dev:device_remembered_status", "Value": self.remembered})
        out: dict[str, Any] = {"DeviceKey": self.key, "DeviceAttributes": attrs, "DeviceCreateDate": self.created,
                               "DeviceLastModifiedDate": self.modified}
        if self.last_authenticated is not None:
            out["DeviceLastAuthenticatedDate"] = self.last_authenticated
        return out


@dataclass
class DeviceChallenge:
    """A live DEVICE_SRP_AUTH / DEVICE_PASSWORD_VERIFIER session."""

    session: str
    device_key: str
    pool_id: str
    client_id: str
    username: str
    created: float = field(default_factory=time.monotonic)
    a_pub: int = 0
    b_priv: int = 0
    b_pub: int = 0
    secret_block: str = ""


class DeviceState:
    """What this module keeps (fake.state.devices), under its own lock."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.devices: dict[str, Device] = {}
        self.challenges: dict[str, DeviceChallenge] = {}  # Session -> device challenge
        # Challenge Session -> the DEVICE_KEY the sign-in started with (None: none sent), so the
        # tokens at its end know whether to hand out NewDeviceMetadata.
        self.sign_in_device: dict[str, str | None] = {}


def state(fake) -> DeviceState:
    return fake.state.devices


def tracking(fake, pool_id: str | None) -> dict[str, Any] | None:
    """The pool's device tracking settings, or None when it does not track devices."""
    settings = (fake.config.get("deviceTracking") or {}).get(pool_id or "")
    if not isinstance(settings, dict) or settings.get("mode") not in ("always", "userOptIn"):
        return None
    return settings


def device_of(fake, pool_id: str, key: str | None, username: str | None = None) -> Device:
    st = state(fake)
    with st.lock:
        device = st.devices.get(key or "")
    if device is None or device.pool_id != pool_id or (username is not None and device.username != username):
        raise messages.ServiceError("ResourceNotFoundException", DEVICE_NOT_FOUND, note=f"unknown device {key}")
    return device


def _username_of(fake, client, reply_body: dict[str, Any]) -> str | None:
    result = reply_body.get("AuthenticationResult") or {}
    if result.get("AccessToken"):
        return messages.jwt_claims(result["AccessToken"]).get("username")
    params = reply_body.get("ChallengeParameters") or {}
    return params.get("USER_ID_FOR_SRP") or params.get("USERNAME")


def _canonical(fake, pool_id: str, username: str | None) -> str | None:
    """moto's USER_PASSWORD_AUTH puts an alias in the token; the service's own name is wanted."""
    if not username:
        return None
    got = fake.call("AdminGetUser", {"UserPoolId": pool_id, "Username": username}, pool_id.split("_")[0])
    return (got.json() or {}).get("Username") or username if got.status == 200 else username


def _challenge_reply(name: str, params: dict[str, str], session: str, note: str) -> Any:
    reply = messages.json_reply({"ChallengeName": name, "ChallengeParameters": params, "Session": session})
    reply.note = note
    return reply


def after_password(fake, client, reply, device_key: str | None):
    """The answer to a sign-in step, as a pool that tracks devices gives it."""
    settings = tracking(fake, client.pool_id)
    if settings is None or reply.status != 200:
        return reply
    body = reply.json() or {}
    st = state(fake)
    username = _canonical(fake, client.pool_id, _username_of(fake, client, body))
    device = None
    if device_key:
        with st.lock:
            found = st.devices.get(device_key)
        if found is not None and found.pool_id == client.pool_id and found.username == username and found.confirmed:
            device = found
    if device is not None and device.remembered == "remembered" and settings.get("skipMfa", True) and username:
        # A remembered device proves itself instead of the second factor (and before any tokens).
        session = base64.b64encode(secrets.token_bytes(96)).decode()
        with st.lock:
            st.challenges[session] = DeviceChallenge(session, device.key, client.pool_id, client.client_id, username)
        return _challenge_reply(DEVICE_SRP_AUTH, {"USERNAME": username}, session, "device challenge DEVICE_SRP_AUTH")
    if body.get("Session") and body.get("ChallengeName"):
        with st.lock:
            st.sign_in_device[body["Session"]] = device_key if device is not None else None
        return reply
    result = body.get("AuthenticationResult")
    if result and device is None and username:
        new = Device(client.pool_id, username, f"{client.pool_id.split('_')[0]}_{uuid.uuid4()}",
                     "-" + secrets.token_urlsafe(9))
        with st.lock:
            st.devices[new.key] = new
        result["NewDeviceMetadata"] = {"DeviceKey": new.key, "DeviceGroupKey": new.group_key}
        out = messages.json_reply(body, handled_by=reply.handled_by)
        out.note = ((reply.note + "; ") if reply.note else "") + "NewDeviceMetadata"
        return out
    return reply


def _check_device_key_known(fake, client, key: str | None) -> None:
    if key and tracking(fake, client.pool_id) is not None:
        device_of(fake, client.pool_id, key)


def _noted(reply, key: str | None):
    reply.note = ((reply.note + "; ") if reply.note else "") + f"deviceKey={key or 'none'}"
    return reply


def initiate_auth(fake, req, rest):
    """The first InitiateAuth link: a tracking pool's password and refresh flows, around the rest."""
    client = fake.client(req.body.get("ClientId"))
    if client is None:
        return None
    params = req.body.get("AuthParameters") or {}
    key = params.get("DEVICE_KEY")
    flow = req.auth_flow or ""
    if tracking(fake, client.pool_id) is None or flow not in PASSWORD_FLOWS + REFRESH_FLOWS:
        return None
    _check_device_key_known(fake, client, key)
    reply = rest()
    if flow in REFRESH_FLOWS:
        return _noted(reply, key)
    if flow == USER_PASSWORD_AUTH:
        return after_password(fake, client, reply, key)
    return reply  # PASSWORD_VERIFIER: its answer carries DEVICE_KEY again


def get_tokens_from_refresh_token(fake, req, rest):
    """The first GetTokensFromRefreshToken link: a tracking pool's device key, around the rest."""
    client = fake.client(req.body.get("ClientId"))
    if client is None or tracking(fake, client.pool_id) is None:
        return None
    key = req.body.get("DeviceKey")
    if fake.config.get("getTokensFromRefreshToken") == "fake":
        _check_device_key_known(fake, client, key)
    return _noted(rest(), key)


def respond_to_auth_challenge(fake, req, rest):
    """The first RespondToAuthChallenge link: the device challenges, and a tracking pool's other
    answers, around the rest."""
    name = req.challenge_name
    client = fake.client(req.body.get("ClientId"))
    if client is None or tracking(fake, client.pool_id) is None:
        return None
    responses = req.body.get("ChallengeResponses") or {}
    if name == DEVICE_SRP_AUTH:
        return device_srp_auth(fake, client, req, responses)
    if name == DEVICE_PASSWORD_VERIFIER:
        return device_password_verifier(fake, client, req, responses)
    st = state(fake)
    if name == PASSWORD_VERIFIER:
        key = responses.get("DEVICE_KEY")
        _check_device_key_known(fake, client, key)
    else:
        with st.lock:
            key = st.sign_in_device.pop(req.body.get("Session") or "", None)
    reply = rest()
    if name == PASSWORD_VERIFIER:
        return after_password(fake, client, reply, key)
    body = (reply.json() or {}) if reply.status == 200 else {}
    if body.get("ChallengeName") and body.get("Session"):
        with st.lock:
            st.sign_in_device[body["Session"]] = key
        return reply
    # The second factor (or a new password) passed: tokens, with a new device if none was sent.
    return after_password(fake, client, reply, key) if key is None else reply


def _live_challenge(fake, client, req, responses, expected: str) -> DeviceChallenge:
    st = state(fake)
    with st.lock:
        ch = st.challenges.pop(req.body.get("Session") or "", None)  # single use, right or wrong
    if ch is None or time.monotonic() - ch.created > srp.CHALLENGE_LIFETIME:
        raise messages.not_authorized(shared.INVALID_SESSION, note=f"no live {expected} session")
    if ch.client_id != client.client_id:
        raise messages.not_authorized(shared.INVALID_SESSION, note="device challenge issued to another client")
    fake.check_secret_hash(client, responses.get("USERNAME"), responses.get("SECRET_HASH"))
    if responses.get("USERNAME") != ch.username:
        raise messages.not_authorized(shared.INVALID_SESSION, note=f"USERNAME is not {ch.username}")
    if responses.get("DEVICE_KEY") != ch.device_key:
        raise messages.ServiceError("ResourceNotFoundException", DEVICE_NOT_FOUND, note="DEVICE_KEY is not the challenge's")
    if expected == DEVICE_PASSWORD_VERIFIER and not ch.secret_block:
        raise messages.not_authorized(shared.INVALID_SESSION, note="DEVICE_PASSWORD_VERIFIER before DEVICE_SRP_AUTH")
    if expected == DEVICE_SRP_AUTH and ch.secret_block:
        raise messages.not_authorized(shared.INVALID_SESSION, note="DEVICE_SRP_AUTH answered twice")
    return ch


def device_srp_auth(fake, client, req, responses):
    ch = _live_challenge(fake, client, req, responses, DEVICE_SRP_AUTH)
    device = device_of(fake, client.pool_id, ch.device_key, ch.username)
    try:
        a_pub = int(responses.get("SRP_A") or "", 16)
    except ValueError:
        raise messages.ServiceError("InvalidParameterException", "SRP_A is not a hexadecimal number") from None
    if a_pub % srp.N == 0:
        raise messages.ServiceError("InvalidParameterException", "SRP_A is invalid (A mod N == 0)")
    while True:
        b_priv = secrets.randbits(1024)
        b_pub = (srp.K * device.verifier + pow(srp.G, b_priv, srp.N)) % srp.N
        if b_pub != 0 and srp.compute_u(a_pub, b_pub) != 0:
            break
    session = base64.b64encode(secrets.token_bytes(96)).decode()
    ch.session, ch.a_pub, ch.b_priv, ch.b_pub = session, a_pub, b_priv, b_pub
    ch.secret_block = base64.b64encode(secrets.token_bytes(1024)).decode()
    with state(fake).lock:
        state(fake).challenges[session] = ch
    params = {"SRP_B": format(b_pub, "x"), "SALT": device.salt_hex or "", "SECRET_BLOCK": ch.secret_block,
              "USERNAME": ch.username, "DEVICE_KEY": device.key}
    return _challenge_reply(DEVICE_PASSWORD_VERIFIER, params, session, "device challenge DEVICE_PASSWORD_VERIFIER")


def device_password_verifier(fake, client, req, responses):
    ch = _live_challenge(fake, client, req, responses, DEVICE_PASSWORD_VERIFIER)
    device = device_of(fake, client.pool_id, ch.device_key, ch.username)
    if responses.get("PASSWORD_CLAIM_SECRET_BLOCK") != ch.secret_block:
        raise messages.not_authorized(note="PASSWORD_CLAIM_SECRET_BLOCK is not the SECRET_BLOCK we sent")
    ts = responses.get("TIMESTAMP") or ""
    when = srp.parse_srp_timestamp(ts)
    if when is None or abs(when.timestamp() - time.time()) > srp.TIMESTAMP_SKEW:
        raise messages.not_authorized(note=f"TIMESTAMP {ts!r} is malformed or too far from now")
    u_value = srp.compute_u(ch.a_pub, ch.b_pub)
    s_value = pow(ch.a_pub * pow(device.verifier, u_value, srp.N), ch.b_priv, srp.N)
    expected = srp.claim_signature(srp.hkdf_key(s_value, u_value), device.group_key, device.key, ch.secret_block, ts)
    if not hmac.compare_digest(expected.encode(), (responses.get("PASSWORD_CLAIM_SIGNATURE") or "").encode()):
        raise messages.not_authorized(note="device PASSWORD_CLAIM_SIGNATURE does not match the device verifier")
    device.last_authenticated = time.time()
    done = mfa_state.MfaChallenge(session="", name=DEVICE_PASSWORD_VERIFIER, pool_id=ch.pool_id, client_id=ch.client_id,
                           username=ch.username, expires=0.0)
    return mfa.finish_mfa(fake, done)


# -- the device operations ---------------------------------------------------


def _user_of(fake, req) -> tuple[str, str]:
    who = mfa.user_of_access_token(fake, req)
    if isinstance(who, messages.Reply):
        raise messages.ServiceError((who.json() or {}).get("__type") or "NotAuthorizedException",
                              (who.json() or {}).get("message") or "Invalid Access Token", who.status)
    return who


def _admin_user(fake, req) -> tuple[str, str]:
    pool_id, username = req.body.get("UserPoolId") or "", req.body.get("Username") or ""
    got = fake.call("AdminGetUser", {"UserPoolId": pool_id, "Username": username}, pool_id.split("_")[0] or "us-east-1")
    if got.status != 200:
        body = got.json() or {}
        raise messages.ServiceError(body.get("__type") or "ResourceNotFoundException", body.get("message") or "User does not exist.",
                              got.status)
    return pool_id, got.json()["Username"]


def _required(body: dict[str, Any], *names: str) -> None:
    for name in names:
        if not body.get(name):
            raise messages.ServiceError("InvalidParameterException", f"Missing required parameter {name}")


def confirm_device(fake, req, rest):
    _required(req.body, "AccessToken", "DeviceKey")
    pool_id, username = _user_of(fake, req)
    settings = tracking(fake, pool_id)
    device = device_of(fake, pool_id, req.body["DeviceKey"], username)
    if device.confirmed:
        raise messages.ServiceError("DeviceKeyExistsException", "Device key already exists.")
    config = req.body.get("DeviceSecretVerifierConfig") or {}
    try:
        verifier = int.from_bytes(base64.b64decode(config.get("PasswordVerifier") or "", validate=True), "big")
        salt = int.from_bytes(base64.b64decode(config.get("Salt") or "", validate=True), "big")
    except ValueError:
        raise messages.ServiceError("InvalidParameterException", "DeviceSecretVerifierConfig is not base64") from None
    if verifier == 0 or salt == 0 or verifier >= srp.N:
        raise messages.ServiceError("InvalidParameterException", "Invalid DeviceSecretVerifierConfig")
    name = req.body.get("DeviceName")
    if name is not None and not 1 <= len(name) <= 1024:
        raise messages.ServiceError("InvalidParameterException", "DeviceName must be 1 to 1024 characters")
    opt_in = (settings or {}).get("mode") == "userOptIn"
    with state(fake).lock:
        device.verifier, device.salt_hex, device.name = verifier, format(salt, "x"), name
        device.remembered = "not_remembered" if opt_in else "remembered"
        device.modified = device.last_authenticated = time.time()
    return messages.json_reply({"UserConfirmationNecessary": opt_in})


def update_device_status(fake, req, rest):
    _required(req.body, "AccessToken", "DeviceKey")
    status = req.body.get("DeviceRememberedStatus")
    if status not in ("remembered", "not_remembered"):
        raise messages.ServiceError("InvalidParameterException", "DeviceRememberedStatus must be remembered or not_remembered")
    pool_id, username = _user_of(fake, req)
    device = device_of(fake, pool_id, req.body["DeviceKey"], username)
    with state(fake).lock:
        device.remembered, device.modified = status, time.time()
    return messages.json_reply({})


def _list(fake, req, pool_id: str, username: str):
    limit = req.body.get("Limit")
    if limit is not None and not (isinstance(limit, int) and 0 <= limit <= 60):
        raise messages.ServiceError("InvalidParameterException", "Limit must be between 0 and 60")
    with state(fake).lock:
        mine = sorted((d for d in state(fake).devices.values() if d.pool_id == pool_id and d.username == username
                       and d.confirmed), key=lambda d: d.created)
    start = int(req.body.get("PaginationToken") or 0)
    size = limit or 60
    page = mine[start:start + size]
    out: dict[str, Any] = {"Devices": [d.to_device_type() for d in page]}
    if start + size < len(mine):
        out["PaginationToken"] = str(start + size)
    return messages.json_reply(out)


def list_devices(fake, req, rest):
    _required(req.body, "AccessToken")
    return _list(fake, req, *_user_of(fake, req))


def admin_list_devices(fake, req, rest):
    _required(req.body, "UserPoolId", "Username")
    return _list(fake, req, *_admin_user(fake, req))


def _forget(fake, pool_id: str, username: str, key: str):
    device = device_of(fake, pool_id, key, username)
    with state(fake).lock:
        state(fake).devices.pop(device.key, None)
    return messages.json_reply({})


def forget_device(fake, req, rest):
    _required(req.body, "DeviceKey")
    return _forget(fake, *_user_of(fake, req), req.body["DeviceKey"])


def admin_forget_device(fake, req, rest):
    _required(req.body, "UserPoolId", "Username", "DeviceKey")
    return _forget(fake, *_admin_user(fake, req), req.body["DeviceKey"])
