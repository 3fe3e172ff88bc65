"""Multi-factor authentication: the operations (challenges after the password, authenticator
set-up, MFA preferences, the MFA fields of GetUser) and the tests' side door POST /_fake/mfa."""

from __future__ import annotations

import base64
import hmac
import json
import re
import secrets
import time
from dataclasses import replace as dataclass_replace
from typing import Any

from .mfa_state import MFA_MODES, MfaChallenge, MfaUser, mask_email, mask_phone, new_totp_secret, totp_matches
from .messages import Reply, Request, Rest, ServiceError, json_reply, jwt_claims, not_authorized
from .proxy import MFA_MAX_ATTEMPTS, MFA_SESSION_LIFETIME, ClientInfo, FakeCognito
from .shared import (ADMIN_USER_PASSWORD_AUTH, AMZ_JSON, CODE_FIELD, EMAIL_OTP, EXPIRED_SESSION, FACTORS, INVALID_CODE,
                     INVALID_SESSION, MFA_SETUP, NO_TOKEN_NOR_SESSION, SELECT_ANSWERS, SELECT_MFA_TYPE, SMS_MFA,
                     MULTI_FACTOR_WITH_USER_VERIFICATION, SOFTWARE_TOKEN_CODE_MISMATCH, SOFTWARE_TOKEN_MFA,
                     WEB_AUTHN)
from .tokens import refuse_revoked_access_token


# -- the state: users and live challenge sessions (fake.state.mfa) -------------


def mfa_user(fake: FakeCognito, pool_id: str, username: str) -> MfaUser:
    with fake.lock:
        return fake.state.mfa.users.setdefault((pool_id, username), MfaUser(pool_id, username))


def new_mfa_session(fake: FakeCognito, ch: MfaChallenge | None = None, **changes: Any) -> MfaChallenge:
    """A fresh Session for `ch` (whose old Session stops working), with `changes` applied."""
    lifetime = float(fake.config.get("mfaSessionLifetime", MFA_SESSION_LIFETIME))
    session = base64.b64encode(secrets.token_bytes(96)).decode()
    sessions = fake.state.mfa.sessions
    with fake.lock:
        now = time.monotonic()
        for key in [k for k, c in sessions.items() if now - c.expires > 600]:
            del sessions[key]  # long dead: forget (recently dead ones still say "expired")
        if ch is not None:
            sessions.pop(ch.session, None)
            new = dataclass_replace(ch, session=session, expires=now + lifetime, **changes)
        else:
            new = MfaChallenge(session=session, expires=now + lifetime, **changes)
        sessions[session] = new
    return new


def live_mfa_session(fake: FakeCognito, session: str | None) -> MfaChallenge:
    with fake.lock:
        ch = fake.state.mfa.sessions.get(session or "")
    if ch is None:
        raise not_authorized(INVALID_SESSION, note="no such MFA session")
    if time.monotonic() > ch.expires:
        raise not_authorized(EXPIRED_SESSION, note="MFA session expired")
    return ch


def end_mfa_session(fake: FakeCognito, ch: MfaChallenge) -> None:
    with fake.lock:
        fake.state.mfa.sessions.pop(ch.session, None)


def wrong_code(fake: FakeCognito, ch: MfaChallenge, error: ServiceError) -> ServiceError:
    """Counts a wrong code; the session dies after mfaMaxAttempts of them."""
    with fake.lock:
        ch.attempts += 1
        if ch.attempts >= int(fake.config.get("mfaMaxAttempts", MFA_MAX_ATTEMPTS)):
            fake.state.mfa.sessions.pop(ch.session, None)
            error.note = f"wrong code {ch.attempts}: session ended"
        else:
            error.note = f"wrong code {ch.attempts}"
    return error


# -- the tests' side door ---------------------------------------------------------


def _mfa_set_mode(fake: FakeCognito, payload: dict[str, Any]) -> MfaUser:
    """POST /_fake/mfa: {"pool","username","mode", "secret"?, "offered"?, "phone"?, "email"?, "code"?}."""
    pool_id, username, mode = payload.get("pool"), payload.get("username"), payload.get("mode")
    if not pool_id or not username:
        raise ValueError("pool and username are required")
    if mode not in MFA_MODES:
        raise ValueError(f"mode must be one of {MFA_MODES}")
    offered = payload.get("offered") or [SMS_MFA, SOFTWARE_TOKEN_MFA]
    if not isinstance(offered, list) or not offered or any(f not in FACTORS for f in offered):
        raise ValueError(f"offered must be a non-empty list of {FACTORS}")
    region = pool_id.split("_")[0]
    got = fake.call("AdminGetUser", {"UserPoolId": pool_id, "Username": username}, region)
    if got.status != 200:
        raise ValueError(f"no user {username} in {pool_id}: {got.body[:200]!r}")
    attrs = {a["Name"]: a["Value"] for a in (got.json() or {}).get("UserAttributes", [])}
    with fake.lock:
        user = mfa_user(fake, pool_id, got.json()["Username"])
        user.phone = payload.get("phone") or user.phone or attrs.get("phone_number") or "+15555551234"
        user.email = payload.get("email") or user.email or attrs.get("email") or f"{username}@example.com"
        user.fixed_code = payload.get("code") or None
        user.enabled, user.preferred, user.setup_required = [], None, False
        if mode in ("totp", "sms", "email"):
            factor = {"totp": SOFTWARE_TOKEN_MFA, "sms": SMS_MFA, "email": EMAIL_OTP}[mode]
            user.enabled, user.preferred = [factor], factor
        elif mode == "select":
            user.enabled = list(dict.fromkeys(offered))
        elif mode == "setup":
            user.setup_required = True
        if SOFTWARE_TOKEN_MFA in user.enabled:
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
            user = fake.state.mfa.users.get(key)
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
    user = mfa_user(fake, client.pool_id, username)
    if name in (SMS_MFA, EMAIL_OTP):
        code = user.fixed_code or f"{secrets.randbelow(10 ** 6):06d}"
        medium = "SMS" if name == SMS_MFA else "EMAIL"
        destination = mask_phone(user.phone or "") if name == SMS_MFA else mask_email(user.email or "")
        params["CODE_DELIVERY_DELIVERY_MEDIUM"] = medium
        params["CODE_DELIVERY_DESTINATION"] = destination
        with fake.lock:
            user.sent.append({"challengeName": name, "code": code, "medium": medium, "destination": destination,
                              "to": user.phone if name == SMS_MFA else user.email, "ts": time.time()})
    elif name == SELECT_MFA_TYPE:
        params["MFAS_CAN_CHOOSE"] = json.dumps(offered)
    elif name == MFA_SETUP:
        params["MFAS_CAN_SETUP"] = json.dumps([SOFTWARE_TOKEN_MFA])
    changes = dict(name=name, offered=offered, code=code, attempts=0)
    if previous is None:
        ch = new_mfa_session(fake, None, pool_id=client.pool_id, client_id=client.client_id, username=username, **changes)
    else:
        ch = new_mfa_session(fake, previous, **changes)
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
    if fake.config.get("passkeyMfaUsers"):
        from . import passkeys  # passkeys.py builds on this module
        second = passkeys.mfa_challenge(fake, client, username)
        if second is not None:
            return second
    with fake.lock:
        if not any(pool_id == client.pool_id for pool_id, _ in fake.state.mfa.users):
            return reply  # nobody in this pool has MFA: spare the lookup
    # moto's USER_PASSWORD_AUTH puts the name as typed (an alias, say) in the token; the service's is wanted.
    got = fake.call("AdminGetUser", {"UserPoolId": client.pool_id, "Username": username}, client.pool_id.split("_")[0])
    if got.status == 200:
        username = (got.json() or {}).get("Username") or username
    with fake.lock:
        user = fake.state.mfa.users.get((client.pool_id, username))
        wanted = user.challenge() if user else None
    if wanted is None:
        return reply
    # The tokens moto just minted are dropped; new ones are fetched once the challenge is passed.
    return issue_mfa_challenge(fake, client, username, *wanted)


def finish_mfa(fake: FakeCognito, ch: MfaChallenge) -> Reply:
    """The challenge is passed: tokens from moto (AdminInitiateAuth with the known password, as
    after SRP; moto itself never learns about the user's MFA, so it hands them out)."""
    with fake.lock:
        fake.state.mfa.sessions.pop(ch.session, None)
        password = fake.passwords.get((ch.pool_id, ch.username))
    admin = {
        "UserPoolId": ch.pool_id,
        "ClientId": ch.client_id,
        "AuthFlow": ADMIN_USER_PASSWORD_AUTH,
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
    ch = live_mfa_session(fake, req.body.get("Session"))
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
        if name == SOFTWARE_TOKEN_MFA:
            secret = mfa_user(fake, ch.pool_id, ch.username).secret
            right = bool(secret) and totp_matches(secret, code)
        else:
            right = ch.code is not None and hmac.compare_digest(ch.code, code)
        if not right:
            raise wrong_code(fake, ch, ServiceError("CodeMismatchException", INVALID_CODE))
        return finish_mfa(fake, ch)

    if name == SELECT_MFA_TYPE:
        chosen = SELECT_ANSWERS.get(responses.get("ANSWER") or "")
        if chosen not in ch.offered:
            raise ServiceError("InvalidParameterException", f"Invalid ANSWER: must be one of {ch.offered}",
                               note=f"ANSWER {responses.get('ANSWER')!r}")
        return issue_mfa_challenge(fake, client, ch.username, chosen, [chosen], previous=ch)

    # MFA_SETUP, answered with the Session VerifySoftwareToken returned.
    if not ch.verified or not ch.secret:
        raise not_authorized(INVALID_SESSION, note="MFA_SETUP answered before VerifySoftwareToken succeeded")
    with fake.lock:
        user = mfa_user(fake, ch.pool_id, ch.username)
        user.secret, user.friendly_device_name = ch.secret, ch.friendly_device_name
        user.enabled = [SOFTWARE_TOKEN_MFA] + [f for f in user.enabled if f != SOFTWARE_TOKEN_MFA]
        user.preferred = SOFTWARE_TOKEN_MFA
    return finish_mfa(fake, ch)


def user_of_access_token(fake: FakeCognito, req: Request,
                          missing: str = "Missing required parameter AccessToken") -> tuple[str, str] | Reply:
    """(pool id, username) of a live access token, asking moto (GetUser); or moto's refusal.
    A request without the token is refused with `missing`, as the service does."""
    if not req.body.get("AccessToken"):
        raise ServiceError("InvalidParameterException", missing)
    refuse_revoked_access_token(fake, req)
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


def associate_software_token(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    """moto: one fixed secret for everyone. Here a new secret per association, bound to the
    challenge session (MFA_SETUP) or to the user (AccessToken)."""
    if req.body.get("Session"):
        ch = live_mfa_session(fake, req.body["Session"])
        if ch.name != MFA_SETUP:
            raise not_authorized(INVALID_SESSION, note=f"AssociateSoftwareToken with a {ch.name} session")
        ch = new_mfa_session(fake, ch, secret=new_totp_secret(), verified=False, attempts=0)
        return json_reply({"SecretCode": ch.secret, "Session": ch.session})
    who = user_of_access_token(fake, req, missing=NO_TOKEN_NOR_SESSION)
    if isinstance(who, Reply):
        return who
    with fake.lock:
        user = mfa_user(fake, *who)
        user.pending = new_totp_secret()
        return json_reply({"SecretCode": user.pending})


def verify_software_token(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    code = _check_user_code(req.body.get("UserCode"))
    name = req.body.get("FriendlyDeviceName")
    if req.body.get("Session"):
        ch = live_mfa_session(fake, req.body["Session"])
        if ch.name != MFA_SETUP or not ch.secret:
            raise not_authorized(INVALID_SESSION, note="VerifySoftwareToken before AssociateSoftwareToken")
        if not totp_matches(ch.secret, code):
            raise wrong_code(fake, ch, ServiceError("EnableSoftwareTokenMFAException", SOFTWARE_TOKEN_CODE_MISMATCH))
        ch = new_mfa_session(fake, ch, verified=True, friendly_device_name=name)
        return json_reply({"Status": "SUCCESS", "Session": ch.session})
    who = user_of_access_token(fake, req, missing=NO_TOKEN_NOR_SESSION)
    if isinstance(who, Reply):
        return who
    with fake.lock:
        user = mfa_user(fake, *who)
        if not user.pending:
            raise ServiceError("SoftwareTokenMFANotFoundException", "Software token has not been associated with the user")
        if not totp_matches(user.pending, code):
            raise ServiceError("EnableSoftwareTokenMFAException", SOFTWARE_TOKEN_CODE_MISMATCH)
        # Verified: usable once SetUserMFAPreference turns it on (as Cognito does).
        user.secret, user.pending, user.friendly_device_name = user.pending, None, name
    return json_reply({"Status": "SUCCESS"})


def _apply_mfa_preference(fake: FakeCognito, pool_id: str, username: str, body: dict[str, Any]) -> Reply:
    settings = {SOFTWARE_TOKEN_MFA: body.get("SoftwareTokenMfaSettings"), SMS_MFA: body.get("SMSMfaSettings"),
                EMAIL_OTP: body.get("EmailMfaSettings")}
    passkey = body.get("WebAuthnMfaSettings")
    with fake.lock:
        user = mfa_user(fake, pool_id, username)
        if (settings[SOFTWARE_TOKEN_MFA] or {}).get("Enabled") and not user.secret:
            raise ServiceError("InvalidParameterException", "User has not verified software token mfa")
        if isinstance(passkey, dict) and passkey.get("Enabled"):
            # The pool's passkeys must count as MFA, and another factor must stay on (no lockout).
            if fake.config.get("passkeyFactorConfiguration") != MULTI_FACTOR_WITH_USER_VERIFICATION:
                raise ServiceError("InvalidParameterException",
                                   "Passkey MFA is not enabled for this user pool's WebAuthnConfiguration.")
            others = {f for f, setting in settings.items()
                      if (isinstance(setting, dict) and setting.get("Enabled"))
                      or (f in user.enabled and not (isinstance(setting, dict) and "Enabled" in setting))}
            if not others:
                raise ServiceError("InvalidParameterException",
                                   "User must have at least one other MFA method enabled to enable passkey MFA.")
        if isinstance(passkey, dict) and "Enabled" in passkey:
            user.web_authn_mfa = bool(passkey["Enabled"])
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


def set_user_mfa_preference(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    """moto would store it and then challenge in its own admin flow, with its fixed secret."""
    who = user_of_access_token(fake, req)
    if isinstance(who, Reply):
        return who
    return _apply_mfa_preference(fake, *who, req.body)


def admin_set_user_mfa_preference(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
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
        user = fake.state.mfa.users.get((pool_id, body.get("Username") or ""))
        if user is None:
            return reply
        body.pop("UserMFASettingList", None)
        body.pop("PreferredMfaSetting", None)
        # Passkey MFA on is listed as WEB_AUTHN (an assumption: the model's documentation names
        # only the three code factors, and no other answer carries the setting).
        listed = list(user.enabled) + ([WEB_AUTHN] if user.web_authn_mfa else [])
        if listed:
            body["UserMFASettingList"] = listed
        if user.preferred:
            body["PreferredMfaSetting"] = user.preferred
    out = json_reply(body, handled_by="moto+fake")
    return out


def get_user(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    """After tokens.refuse_revoked_access_token in the chain."""
    claims = jwt_claims(req.body.get("AccessToken") or "")
    pool_id = (claims.get("iss") or "").rstrip("/").rsplit("/", 1)[-1]
    return _overlay_mfa(fake, pool_id, fake.forward(req))


def admin_get_user(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    return _overlay_mfa(fake, req.body.get("UserPoolId") or "", fake.forward(req))
