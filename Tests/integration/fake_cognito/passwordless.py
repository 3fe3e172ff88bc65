"""Choice-based sign-in (InitiateAuth AuthFlow USER_AUTH) in the fake Cognito.

moto has no USER_AUTH at all, so this module (its links listed in chain.py) plays it as the
service does, with the shapes of botocore's cognito-idp model:

* The first factors a user may choose are the pool's Policies.SignInPolicy.AllowedFirstAuthFactors
  (DescribeUserPool; Cognito's default is PASSWORD) that the user can use: PASSWORD (offered as
  PASSWORD and PASSWORD_SRP; PASSWORD_SRP runs the fake's USER_SRP_AUTH, so here the client also
  needs ALLOW_USER_SRP_AUTH), EMAIL_OTP with a verified email, SMS_OTP with a verified phone
  number, WEB_AUTHN for users with a passkey (passkeys.py, which plays that factor with a real
  WebAuthn verifier) or listed in POST /_fake/config {"passkeyUsers": [...]}. The app client must allow ALLOW_USER_AUTH.
* InitiateAuth USER_AUTH with an available PREFERRED_CHALLENGE starts that factor at once (with
  PASSWORD, or SRP_A for PASSWORD_SRP); otherwise it answers SELECT_CHALLENGE with
  AvailableChallenges and a Session.
* RespondToAuthChallenge SELECT_CHALLENGE with ANSWER (and PASSWORD / SRP_A) starts the chosen
  factor. PASSWORD is checked by moto, PASSWORD_SRP goes on to the fake's real SRP
  (PASSWORD_VERIFIER), and after either the user's MFA applies as in the password flows.
* EMAIL_OTP / SMS_OTP send a 6-digit code (recorded as delivered: GET /_fake/mfa/code) with
  CODE_DELIVERY_DELIVERY_MEDIUM / CODE_DELIVERY_DESTINATION; the answer EMAIL_OTP_CODE /
  SMS_OTP_CODE is checked, a wrong one counted (the session lives on until mfaMaxAttempts),
  and a right one gives tokens without a second factor.
"""

from __future__ import annotations

import hmac
import json
import secrets
import time
from typing import Any

from . import auth, passkeys
from .accounts import account_state_gate
from .messages import Reply, Request, Rest, ServiceError, json_reply, not_authorized
from .mfa import end_mfa_session, finish_mfa, live_mfa_session, mfa_gate, mfa_user, new_mfa_session, wrong_code
from .mfa_state import MfaChallenge, mask_email, mask_phone
from .proxy import ClientInfo, FakeCognito
from .shared import (ADMIN_USER_PASSWORD_AUTH, AMZ_JSON, EMAIL_OTP, FIRST_FACTOR_CHALLENGES, INVALID_CODE,
                     INVALID_SESSION, OTP_CODE_FIELD, PASSWORD, PASSWORD_SRP, SELECT_CHALLENGE, SMS_OTP, USER_AUTH,
                     USER_DISABLED, USER_NOT_FOUND, USER_SRP_AUTH, WEB_AUTHN)


def _pool_factors(fake: FakeCognito, pool_id: str) -> list[str]:
    pool = fake.call("DescribeUserPool", {"UserPoolId": pool_id}, pool_id.split("_")[0]).json() or {}
    policy = ((pool.get("UserPool") or {}).get("Policies") or {}).get("SignInPolicy") or {}
    return list(policy.get("AllowedFirstAuthFactors") or [PASSWORD])


def available_challenges(fake: FakeCognito, client: ClientInfo, user: dict[str, Any]) -> list[str]:
    """The first factors this user may choose, in the order Cognito lists them."""
    attrs = {a["Name"]: a.get("Value", "") for a in user.get("UserAttributes", [])}
    allowed = _pool_factors(fake, client.pool_id)
    offered: list[str] = []
    if PASSWORD in allowed and user.get("UserStatus") != "EXTERNAL_PROVIDER":
        offered += [PASSWORD, PASSWORD_SRP]
    if EMAIL_OTP in allowed and attrs.get("email") and attrs.get("email_verified") == "true":
        offered.append(EMAIL_OTP)
    if SMS_OTP in allowed and attrs.get("phone_number") and attrs.get("phone_number_verified") == "true":
        offered.append(SMS_OTP)
    if WEB_AUTHN in allowed and (user["Username"] in (fake.config.get("passkeyUsers") or [])
                                 or passkeys.user_passkeys(fake, client.pool_id, user["Username"])):
        offered.append(WEB_AUTHN)
    return offered


def _send_otp(fake: FakeCognito, client: ClientInfo, user: dict[str, Any], name: str,
              previous: MfaChallenge | None) -> Reply:
    """EMAIL_OTP / SMS_OTP as a first factor: a code sent, and a challenge session to answer in."""
    attrs = {a["Name"]: a.get("Value", "") for a in user.get("UserAttributes", [])}
    username = user["Username"]
    owner = mfa_user(fake, client.pool_id, username)
    code = owner.fixed_code or f"{secrets.randbelow(10 ** 6):06d}"
    if name == SMS_OTP:
        medium, to = "SMS", attrs.get("phone_number", "")
        destination = mask_phone(to)
    else:
        medium, to = "EMAIL", attrs.get("email", "")
        destination = mask_email(to)
    with fake.lock:
        owner.sent.append({"challengeName": name, "code": code, "medium": medium, "destination": destination,
                           "to": to, "ts": time.time()})
    changes = dict(name=name, offered=[name], code=code, attempts=0)
    if previous is None:
        ch = new_mfa_session(fake, None, pool_id=client.pool_id, client_id=client.client_id, username=username, **changes)
    else:
        ch = new_mfa_session(fake, previous, **changes)
    reply = json_reply({
        "ChallengeName": name,
        "ChallengeParameters": {"CODE_DELIVERY_DELIVERY_MEDIUM": medium, "CODE_DELIVERY_DESTINATION": destination,
                                "USERNAME": username},
        "Session": ch.session,
    })
    reply.note = f"{name} code sent"
    return reply


def _password_factor(fake: FakeCognito, client: ClientInfo, username: str, password: Any) -> Reply:
    """PASSWORD: moto checks it (AdminInitiateAuth), then the user's MFA applies."""
    if not password:
        raise ServiceError("InvalidParameterException", "Missing required parameter PASSWORD")
    admin = {"UserPoolId": client.pool_id, "ClientId": client.client_id, "AuthFlow": ADMIN_USER_PASSWORD_AUTH,
             "AuthParameters": {"USERNAME": username, "PASSWORD": password}}
    reply = fake.call("AdminInitiateAuth", admin, client.pool_id.split("_")[0])
    reply.handled_by = "fake+moto"
    reply.headers = [(k, v) for k, v in reply.headers if k.lower() != "content-type"] + [("Content-Type", AMZ_JSON)]
    if reply.status == 200:
        fake.learn_password(client.pool_id, username, password)
    return mfa_gate(fake, client, reply)


def _srp_factor(fake: FakeCognito, req: Request, client: ClientInfo, username: str, srp_a: Any, secret_hash: Any) -> Reply:
    """PASSWORD_SRP: the fake's real SRP, as InitiateAuth USER_SRP_AUTH (PASSWORD_VERIFIER follows)."""
    if not srp_a:
        raise ServiceError("InvalidParameterException", "Missing required parameter SRP_A")
    params = {"USERNAME": username, "SRP_A": srp_a}
    if secret_hash:
        params["SECRET_HASH"] = secret_hash
    body = {"AuthFlow": USER_SRP_AUTH, "ClientId": client.client_id, "AuthParameters": params}
    srp_req = Request("InitiateAuth", body, json.dumps(body).encode(), req.headers, req.path)
    # auth.py's link alone, not the whole InitiateAuth chain (the account was checked at USER_AUTH).
    return fake.chain.run(fake, srp_req, [auth.initiate_auth])


def _start_factor(fake: FakeCognito, req: Request, client: ClientInfo, user: dict[str, Any], name: str,
                  given: dict[str, Any], previous: MfaChallenge | None) -> Reply:
    if previous is not None:
        end_mfa_session(fake, previous)
    if name in OTP_CODE_FIELD:
        return _send_otp(fake, client, user, name, previous)
    if name == PASSWORD:
        return _password_factor(fake, client, user["Username"], given.get("PASSWORD"))
    if name == PASSWORD_SRP:
        return _srp_factor(fake, req, client, user["Username"], given.get("SRP_A"), given.get("SECRET_HASH"))
    return passkeys.start_sign_in(fake, client.pool_id, client.client_id, user["Username"], previous)


def initiate_auth(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    """An InitiateAuth link: USER_AUTH (other flows pass)."""
    if req.auth_flow != USER_AUTH:
        return None
    client = fake.client(req.body.get("ClientId"))
    if client is None:
        return fake.forward(req)  # moto answers (ResourceNotFoundException)
    params = req.body.get("AuthParameters") or {}
    username = params.get("USERNAME")
    if not username:
        raise ServiceError("InvalidParameterException", "Missing required parameter USERNAME")
    fake.check_flow(client, USER_AUTH)
    fake.check_secret_hash(client, username, params.get("SECRET_HASH"))
    got = fake.call("AdminGetUser", {"UserPoolId": client.pool_id, "Username": username}, client.pool_id.split("_")[0])
    if got.status != 200:
        raise ServiceError("UserNotFoundException", USER_NOT_FOUND)
    user = got.json()
    if not user.get("Enabled", True):
        raise not_authorized(USER_DISABLED)
    account_state_gate(fake, client, username)
    offered = available_challenges(fake, client, user)
    preferred = params.get("PREFERRED_CHALLENGE")
    if preferred is not None and preferred not in FIRST_FACTOR_CHALLENGES:
        raise ServiceError("InvalidParameterException", f"Invalid PREFERRED_CHALLENGE {preferred}")
    if preferred in offered:
        return _start_factor(fake, req, client, user, preferred, params, None)
    if not offered:
        raise not_authorized("No sign-in method is available for this user.")
    ch = new_mfa_session(fake, None, pool_id=client.pool_id, client_id=client.client_id, username=user["Username"],
                              name=SELECT_CHALLENGE, offered=offered)
    reply = json_reply({"ChallengeName": SELECT_CHALLENGE, "ChallengeParameters": {}, "Session": ch.session,
                        "AvailableChallenges": offered})
    reply.note = SELECT_CHALLENGE + (f" (PREFERRED_CHALLENGE {preferred} not available)" if preferred else "")
    return reply


def first_factor_session(fake: FakeCognito, req: Request, client: ClientInfo) -> tuple[dict[str, Any], MfaChallenge]:
    """The answer's ChallengeResponses and its live session, checked as the service does: the
    session's client, SECRET_HASH, USERNAME and challenge name (passkeys.py's WEB_AUTHN too)."""
    responses = req.body.get("ChallengeResponses") or {}
    ch = live_mfa_session(fake, req.body.get("Session"))
    if ch.client_id != client.client_id:
        raise not_authorized(INVALID_SESSION, note="session issued to another client")
    fake.check_secret_hash(client, responses.get("USERNAME"), responses.get("SECRET_HASH"))
    if responses.get("USERNAME") != ch.username:
        raise not_authorized(INVALID_SESSION, note=f"USERNAME is not the challenge's user {ch.username}")
    if req.challenge_name != ch.name:
        raise ServiceError("InvalidParameterException", f"Invalid challenge name: the session is for {ch.name}")
    return responses, ch


def respond_to_auth_challenge(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    """A RespondToAuthChallenge link: SELECT_CHALLENGE and SMS_OTP (others pass)."""
    name = req.challenge_name
    if name not in (SELECT_CHALLENGE, SMS_OTP):
        # EMAIL_OTP, first or second factor, is auth.py's (mfa.py's): the same code check, then tokens.
        return None
    client = fake.client(req.body.get("ClientId"))
    if client is None:
        return fake.forward(req)
    responses, ch = first_factor_session(fake, req, client)

    if name == SELECT_CHALLENGE:
        answer = responses.get("ANSWER")
        if answer not in ch.offered:
            raise ServiceError("InvalidParameterException", f"Invalid ANSWER: must be one of {ch.offered}",
                               note=f"ANSWER {answer!r}")
        got = fake.call("AdminGetUser", {"UserPoolId": ch.pool_id, "Username": ch.username}, ch.pool_id.split("_")[0])
        return _start_factor(fake, req, client, got.json() or {"Username": ch.username}, answer, responses, ch)

    code = responses.get(OTP_CODE_FIELD[name])
    if not code:
        raise ServiceError("InvalidParameterException", f"Missing required parameter {OTP_CODE_FIELD[name]}")
    if ch.code is None or not hmac.compare_digest(ch.code, str(code)):
        raise wrong_code(fake, ch, ServiceError("CodeMismatchException", INVALID_CODE))
    return finish_mfa(fake, ch)
