"""An administrator's incident-response operations on a user that moto lacks or gets wrong, as the
service answers them (shapes and error types from botocore 1.44.8's cognito-idp model; the
messages are the service's where known, else ours):

* AdminGetUserAuthFactors (moto lacks it): PASSWORD, the passwordless first factors the user can
  use (EMAIL_OTP / SMS_OTP with a verified address, WEB_AUTHN for passkey users), SOFTWARE_TOKEN
  when an authenticator is verified (an MFA-only factor), and mfa.py's UserMFASettingList /
  PreferredMfaSetting.
* AdminDeleteSoftwareToken (moto lacks it): the user's authenticator secret is forgotten and
  SOFTWARE_TOKEN_MFA leaves UserMFASettingList, so a code from that authenticator answers
  nothing any more. With none enrolled it succeeds (nothing to delete).
* AdminResetUserPassword: the service refuses a disabled user (NotAuthorizedException "User is
  disabled.") and a user with no verified email or phone number to send the code to
  (InvalidParameterException); moto resets both.
* AdminSetUserMFAPreference: PasswordResetRequiredException for a RESET_REQUIRED user (the model
  lists it), before mfa.py's link.
"""

from __future__ import annotations

from typing import Any

from .messages import Reply, Request, Rest, ServiceError, json_reply
from .proxy import FakeCognito
from .shared import SOFTWARE_TOKEN_MFA

USER_DISABLED = "User is disabled."
NO_VERIFIED_CHANNEL = ("Cannot reset password for the user as there is no registered/verified email or "
                       "phone_number")
PASSWORD_RESET_REQUIRED = "Password reset required for the user"


def _user(fake: FakeCognito, req: Request) -> dict[str, Any]:
    """moto's AdminGetUser of the request's user; its refusal (UserNotFoundException, ...) raised."""
    pool_id, username = req.body.get("UserPoolId") or "", req.body.get("Username") or ""
    got = fake.call("AdminGetUser", {"UserPoolId": pool_id, "Username": username}, pool_id.split("_")[0] or "us-east-1")
    body = got.json() or {}
    if got.status != 200:
        raise ServiceError(body.get("__type", "InternalErrorException").split("#")[-1], body.get("message", ""), got.status)
    return body


def _attributes(user: dict[str, Any]) -> dict[str, str]:
    return {a["Name"]: a.get("Value", "") for a in user.get("UserAttributes") or []}


def admin_get_user_auth_factors(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    user = _user(fake, req)
    pool_id, username = req.body["UserPoolId"], user["Username"]
    attrs = _attributes(user)
    factors = ["PASSWORD"]
    if attrs.get("email_verified") == "true":
        factors.append("EMAIL_OTP")
    if attrs.get("phone_number_verified") == "true":
        factors.append("SMS_OTP")
    with fake.lock:
        passkeys = fake.state.passkeys.passkeys.get((pool_id, username))
        mfa = fake.state.mfa.users.get((pool_id, username))
        if passkeys or username in (fake.config.get("passkeyUsers") or []):
            factors.append("WEB_AUTHN")
        if mfa and mfa.secret and SOFTWARE_TOKEN_MFA in mfa.enabled:
            factors.append("SOFTWARE_TOKEN")
        body: dict[str, Any] = {"Username": username, "ConfiguredUserAuthFactors": factors}
        if mfa and mfa.enabled:
            body["UserMFASettingList"] = list(mfa.enabled)
        if mfa and mfa.preferred:
            body["PreferredMfaSetting"] = mfa.preferred
    return json_reply(body)


def admin_delete_software_token(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    user = _user(fake, req)
    with fake.lock:
        mfa = fake.state.mfa.users.get((req.body["UserPoolId"], user["Username"]))
        if mfa is not None:
            mfa.secret = None
            mfa.pending = None
            mfa.enabled = [f for f in mfa.enabled if f != SOFTWARE_TOKEN_MFA]
            if mfa.preferred == SOFTWARE_TOKEN_MFA:
                mfa.preferred = None
    return json_reply({})


def admin_reset_user_password(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    user = _user(fake, req)
    if not user.get("Enabled", True):
        raise ServiceError("NotAuthorizedException", USER_DISABLED)
    attrs = _attributes(user)
    if not ((attrs.get("email_verified") == "true" and attrs.get("email"))
            or (attrs.get("phone_number_verified") == "true" and attrs.get("phone_number"))):
        raise ServiceError("InvalidParameterException", NO_VERIFIED_CHANNEL)
    return None  # moto resets (RESET_REQUIRED)


def admin_set_user_mfa_preference(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    if _user(fake, req).get("UserStatus") == "RESET_REQUIRED":
        raise ServiceError("PasswordResetRequiredException", PASSWORD_RESET_REQUIRED)
    return None
