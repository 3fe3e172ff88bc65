"""The account's own life in the fake Cognito: sign-up and password-reset codes that must match.

moto accepts any ConfirmSignUp code, accepts any ConfirmForgotPassword code that does not
start with its own prefix, has no ResendConfirmationCode, lets a user whose password an
administrator reset (RESET_REQUIRED) sign in with a NEW_PASSWORD_REQUIRED challenge where
Cognito refuses with PasswordResetRequiredException, and leaves such a user RESET_REQUIRED
after ConfirmForgotPassword. This module (its links listed in chain.py, its state AccountState)
plays those parts as the service does, with the shapes and error types of botocore's cognito-idp
model:

* SignUp: SecretHash checked; moto creates the user; when moto reports a code delivery
  (the pool auto-verifies email or phone), the fake makes a 6-digit code and "sends" it.
* ConfirmSignUp: SecretHash and the code checked (CodeMismatchException, ExpiredCodeException,
  NotAuthorizedException for a confirmed user) before moto confirms the user.
* ResendConfirmationCode: implemented here; a new code voids the previous one.
* ForgotPassword: SecretHash checked, UserNotFoundException for an unknown user (moto answers
  200); moto's CodeDeliveryDetails, with a code the fake makes.
* ConfirmForgotPassword: the code checked; the password set through AdminSetUserPassword
  (Permanent), which applies the pool's password policy (InvalidPasswordException) and makes
  the user CONFIRMED.
* InitiateAuth (password flows): UserNotConfirmedException / PasswordResetRequiredException
  for UNCONFIRMED / RESET_REQUIRED users, before auth.py's link.

Codes "sent" are recorded with the user's other delivered codes: a test reads the last one with
GET /_fake/mfa/code?pool=POOL&username=NAME (its challengeName is SIGN_UP or FORGOT_PASSWORD).
POST /_fake/config {"accountCodeLifetime": SECONDS} shortens their life (default: 24 h for
sign-up codes, 1 h for reset codes, as Cognito).
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from .messages import Reply, Request, Rest, ServiceError, json_reply, not_authorized
from .mfa import mfa_user
from .mfa_state import mask_email, mask_phone
from .proxy import ClientInfo, FakeCognito
from .shared import FORGOT_PASSWORD, PASSWORD_FLOWS, SIGN_UP, USER_NOT_CONFIRMED

LIFETIMES = {SIGN_UP: 86400.0, FORGOT_PASSWORD: 3600.0}
MAX_WRONG_CODES = 5

CODE_MISMATCH = "Invalid verification code provided, please try again."
CODE_EXPIRED = "Invalid code provided, please request a code again."
NO_SUCH_USER = "Username/client id combination not found."


@dataclass
class AccountCode:
    code: str
    expires: float  # monotonic
    wrong: int = 0


@dataclass
class AccountState:
    """What this module keeps (fake.state.accounts), under the fake's lock."""

    codes: dict[tuple[str, str, str], AccountCode] = field(default_factory=dict)  # (pool id, username, purpose) -> live code


def _codes(fake: FakeCognito) -> dict[tuple[str, str, str], AccountCode]:
    return fake.state.accounts.codes


def _client(fake: FakeCognito, req: Request) -> ClientInfo | None:
    client = fake.client(req.body.get("ClientId"))
    if client is not None:
        fake.check_secret_hash(client, req.body.get("Username"), req.body.get("SecretHash"))
    return client


def _user(fake: FakeCognito, pool_id: str, username: str | None) -> dict[str, Any] | None:
    if not username:
        raise ServiceError("InvalidParameterException", "Missing required parameter Username")
    got = fake.call("AdminGetUser", {"UserPoolId": pool_id, "Username": username}, pool_id.split("_")[0])
    return got.json() if got.status == 200 else None


def _attributes(user: dict[str, Any]) -> dict[str, str]:
    return {a["Name"]: a.get("Value", "") for a in user.get("UserAttributes", [])}


def _delivery(user: dict[str, Any]) -> dict[str, str] | None:
    """Where Cognito sends a sign-up code: the email, else the phone number."""
    attrs = _attributes(user)
    if attrs.get("email"):
        return {"Destination": mask_email(attrs["email"]), "DeliveryMedium": "EMAIL", "AttributeName": "email"}
    if attrs.get("phone_number"):
        return {"Destination": mask_phone(attrs["phone_number"]), "DeliveryMedium": "SMS", "AttributeName": "phone_number"}
    return None


def send_code(fake: FakeCognito, pool_id: str, user: dict[str, Any], purpose: str, delivery: dict[str, str]) -> str:
    """Makes a new code for `purpose` (voiding the previous one) and records it as delivered."""
    code = f"{secrets.randbelow(10 ** 6):06d}"
    lifetime = float(fake.config.get("accountCodeLifetime") or LIFETIMES[purpose])
    attrs = _attributes(user)
    with fake.lock:
        _codes(fake)[(pool_id, user["Username"], purpose)] = AccountCode(code, time.monotonic() + lifetime)
        mfa_user(fake, pool_id, user["Username"]).sent.append({
            "challengeName": purpose, "code": code, "medium": delivery.get("DeliveryMedium"),
            "destination": delivery.get("Destination"),
            "to": attrs.get(delivery.get("AttributeName") or "email"), "ts": time.time()})
    return code


def check_code(fake: FakeCognito, pool_id: str, username: str, purpose: str, given: Any) -> None:
    """Raises the service's error for a wrong or expired code; a right one is used up."""
    key = (pool_id, username, purpose)
    with fake.lock:
        live = _codes(fake).get(key)
        if live is None:
            raise ServiceError("ExpiredCodeException", CODE_EXPIRED, note=f"no {purpose} code was sent")
        if time.monotonic() > live.expires:
            raise ServiceError("ExpiredCodeException", CODE_EXPIRED, note=f"{purpose} code expired")
        if not isinstance(given, str) or not hmac.compare_digest(live.code, given):
            live.wrong += 1
            if live.wrong >= MAX_WRONG_CODES:
                del _codes(fake)[key]
                raise ServiceError("LimitExceededException", "Attempt limit exceeded, please try after some time.",
                                   note=f"wrong {purpose} code {live.wrong}: code voided")
            raise ServiceError("CodeMismatchException", CODE_MISMATCH, note=f"wrong {purpose} code {live.wrong}")
        del _codes(fake)[key]


def _known_user(fake: FakeCognito, client: ClientInfo, req: Request, *required: str) -> dict[str, Any]:
    """The request's user, after its required members are checked; UserNotFoundException otherwise."""
    for member in required:
        if not req.body.get(member):
            raise ServiceError("InvalidParameterException", f"Missing required parameter {member}")
    user = _user(fake, client.pool_id, req.body.get("Username"))
    if user is None:
        raise ServiceError("UserNotFoundException", NO_SUCH_USER)
    return user


def _code_sent(fake: FakeCognito, client: ClientInfo, user: dict[str, Any], purpose: str,
               payload: dict[str, Any], delivery: dict[str, str]) -> Reply:
    """Sends a code for `purpose` and answers `payload` with where it went."""
    send_code(fake, client.pool_id, user, purpose, delivery)
    answer = json_reply(dict(payload, CodeDeliveryDetails=delivery), handled_by="fake+moto")
    answer.note = f"{purpose} code sent"
    return answer


def sign_up(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    client = _client(fake, req)
    if client is None:
        return None
    reply = fake.forward(req)
    body = reply.json() if reply.status == 200 else None
    if not isinstance(body, dict) or body.get("UserConfirmed") or not body.get("CodeDeliveryDetails"):
        return reply  # an error, a confirmed user, or a pool that verifies nothing: no code
    user = _user(fake, client.pool_id, req.body.get("Username")) or {}
    return _code_sent(fake, client, user, SIGN_UP, body, _delivery(user) or body["CodeDeliveryDetails"])


def confirm_sign_up(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    client = _client(fake, req)
    if client is None:
        return None
    user = _known_user(fake, client, req, "ConfirmationCode")
    if user.get("UserStatus") != "UNCONFIRMED":
        raise not_authorized(f"User cannot be confirmed. Current status is {user.get('UserStatus')}")
    check_code(fake, client.pool_id, user["Username"], SIGN_UP, req.body.get("ConfirmationCode"))
    reply = fake.forward(req)
    reply.handled_by = "fake+moto"
    return reply


def resend_confirmation_code(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    client = _client(fake, req)
    if client is None:
        raise ServiceError("ResourceNotFoundException", f"User pool client {req.body.get('ClientId')} does not exist.")
    user = _known_user(fake, client, req)
    if user.get("UserStatus") != "UNCONFIRMED":
        raise ServiceError("InvalidParameterException", "User is already confirmed.")
    delivery = _delivery(user)
    if delivery is None:
        raise ServiceError("InvalidParameterException", "No email or phone_number to send the code to.")
    return _code_sent(fake, client, user, SIGN_UP, {}, delivery)


def forgot_password(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    client = _client(fake, req)
    if client is None:
        return None
    user = _known_user(fake, client, req)  # moto answers 200 with made-up details
    reply = fake.forward(req)
    body = reply.json() if reply.status == 200 else None
    if not isinstance(body, dict):
        return reply
    # moto's own code travels in a header of its own; the service sends nothing of the kind.
    return _code_sent(fake, client, user, FORGOT_PASSWORD, {}, body.get("CodeDeliveryDetails") or _delivery(user) or {})


def confirm_forgot_password(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    client = _client(fake, req)
    if client is None:
        return None
    user = _known_user(fake, client, req, "ConfirmationCode", "Password")
    check_code(fake, client.pool_id, user["Username"], FORGOT_PASSWORD, req.body.get("ConfirmationCode"))
    region = client.pool_id.split("_")[0]
    reply = fake.call("AdminSetUserPassword", {"UserPoolId": client.pool_id, "Username": user["Username"],
                                               "Password": req.body["Password"], "Permanent": True}, region)
    if reply.status != 200:
        # The pool's policy refused the password: the code stays usable, as with Cognito.
        with fake.lock:
            _codes(fake)[(client.pool_id, user["Username"], FORGOT_PASSWORD)] = AccountCode(
                req.body["ConfirmationCode"], time.monotonic() + LIFETIMES[FORGOT_PASSWORD])
        reply.handled_by = "fake+moto"
        return reply
    return json_reply({}, handled_by="fake+moto")


def account_state_gate(fake: FakeCognito, client: ClientInfo, username: str | None) -> None:
    """Cognito refuses to start a sign-in for an unconfirmed user or one whose password an
    administrator reset, whatever the password (moto asks for a new password instead)."""
    if not username:
        return
    got = fake.call("AdminGetUser", {"UserPoolId": client.pool_id, "Username": username}, client.pool_id.split("_")[0])
    status = (got.json() or {}).get("UserStatus") if got.status == 200 else None
    if status == "UNCONFIRMED":
        raise ServiceError("UserNotConfirmedException", USER_NOT_CONFIRMED)
    if status == "RESET_REQUIRED":
        raise ServiceError("PasswordResetRequiredException", "Password reset required for the user")


def initiate_auth(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    """An InitiateAuth link before auth.py's: the account's state refuses a password sign-in."""
    if req.auth_flow in PASSWORD_FLOWS:
        client = fake.client(req.body.get("ClientId"))
        if client is not None:
            account_state_gate(fake, client, (req.body.get("AuthParameters") or {}).get("USERNAME"))
    return None
