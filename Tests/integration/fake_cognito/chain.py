"""Who answers what, in order: the fake's handler chain, its observers and its state, in one place.

A Cognito operation goes down its list in LINKS, first link to last. A link is
`link(fake, req, rest) -> Reply | None` (see messages.Handler): it answers (returns a Reply, or
raises ServiceError), or passes (returns None) to the next link; after the last link, moto
answers. A link that must see or change what the later links answer (devices.py's, around the
sign-in) calls rest() (the later links, then moto: always a Reply) and returns a Reply.
An operation with no list goes to moto as it came. After the answer, the OBSERVERS that name the
operation see it, in their order here.

Each module of the chain that keeps anything declares it in one state class (auth.AuthState,
tokens.TokenState, mfa_state.MfaState, accounts.AccountState, devices.DeviceState,
attributes.AttributeState, issuer.IssuerState, quota.QuotaState, passkeys.PasskeyState,
sessions.SessionState), made once
per fake in FakeState: `fake.state.auth`, `fake.state.tokens`, `fake.state.mfa`, ...

To add an operation or a challenge: one module (its links, and its state class if it keeps
anything), then its links in LINKS below, each where it belongs in its operation's order (a
challenge: in RespondToAuthChallenge before auth.py's link, which refuses what it does not know
only by passing to moto), and its state in FakeState. Names of challenges and flows come from
shared.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from . import (accounts, attributes, auth, devices, issuer, mfa, observers, passkeys, passwordless, quota, sessions,
               token_exchange, tokens)
from .messages import Handler, Observer, Reply, Request
from .mfa_state import MfaState
from .proxy import FakeCognito


@dataclass
class FakeState:
    """The state of every module of the chain, one instance each per fake."""

    auth: auth.AuthState = field(default_factory=auth.AuthState)  # live SRP challenges
    tokens: tokens.TokenState = field(default_factory=tokens.TokenState)  # revoked and rotated refresh tokens
    mfa: MfaState = field(default_factory=MfaState)  # users' MFA, live challenge sessions
    accounts: accounts.AccountState = field(default_factory=accounts.AccountState)  # sign-up / reset codes
    devices: devices.DeviceState = field(default_factory=devices.DeviceState)  # devices, device challenges
    attributes: attributes.AttributeState = field(default_factory=attributes.AttributeState)  # new values awaiting verification
    issuer: issuer.IssuerState = field(default_factory=issuer.IssuerState)  # tokens reminted with another issuer
    quota: quota.QuotaState = field(default_factory=quota.QuotaState)  # the request-rate buckets, refusals counted
    passkeys: passkeys.PasskeyState = field(default_factory=passkeys.PasskeyState)  # passkeys, WebAuthn challenges
    sessions: sessions.SessionState = field(default_factory=sessions.SessionState)  # tracked token and SSO sessions


# The operations that take an AccessToken and must refuse one from a revoked refresh token.
_ACCESS_TOKEN_OPERATIONS = ("GlobalSignOut", "ChangePassword")

# Operation -> its links, first to last (moto after the last).
LINKS: dict[str, list[Handler]] = {
    "InitiateAuth": [
        devices.initiate_auth,  # around the rest: device key checked, NewDeviceMetadata / DEVICE_SRP_AUTH after
        passwordless.initiate_auth,  # USER_AUTH
        accounts.initiate_auth,  # password flows: UNCONFIRMED / RESET_REQUIRED users refused
        auth.initiate_auth,  # USER_SRP_AUTH, USER_PASSWORD_AUTH (+ MFA), refresh checks
    ],
    "RespondToAuthChallenge": [
        devices.respond_to_auth_challenge,  # DEVICE_SRP_AUTH, DEVICE_PASSWORD_VERIFIER; around the rest
        passkeys.respond_to_auth_challenge,  # WEB_AUTHN, verified with py_webauthn
        passwordless.respond_to_auth_challenge,  # SELECT_CHALLENGE, SMS_OTP
        auth.respond_to_auth_challenge,  # PASSWORD_VERIFIER, the MFA challenges, NEW_PASSWORD_REQUIRED
    ],
    "RevokeToken": [sessions.revoke_token, tokens.revoke_token],  # sessions.py around: the token's session ends
    "GetTokensFromRefreshToken": [
        devices.get_tokens_from_refresh_token,  # around the rest: the device key
        tokens.get_tokens_from_refresh_token,
    ],
    **{op: [tokens.refuse_revoked_access_token] for op in _ACCESS_TOKEN_OPERATIONS},
    "GetUser": [tokens.refuse_revoked_access_token, mfa.get_user],
    "AdminGetUser": [mfa.admin_get_user],
    "AssociateSoftwareToken": [mfa.associate_software_token],
    "VerifySoftwareToken": [mfa.verify_software_token],
    "SetUserMFAPreference": [mfa.set_user_mfa_preference],
    "AdminSetUserMFAPreference": [mfa.admin_set_user_mfa_preference],
    # The signed-in user's attributes (user_of_access_token refuses a revoked access token first).
    "UpdateUserAttributes": [attributes.update_user_attributes],
    "GetUserAttributeVerificationCode": [attributes.get_user_attribute_verification_code],
    "VerifyUserAttribute": [attributes.verify_user_attribute],
    "DeleteUserAttributes": [attributes.delete_user_attributes],
    "DeleteUser": [attributes.delete_user],
    "GetUserAuthFactors": [attributes.get_user_auth_factors],
    "SignUp": [accounts.sign_up],
    "ConfirmSignUp": [accounts.confirm_sign_up],
    "ResendConfirmationCode": [accounts.resend_confirmation_code],
    "ForgotPassword": [accounts.forgot_password],
    "ConfirmForgotPassword": [accounts.confirm_forgot_password],
    "ConfirmDevice": [devices.confirm_device],
    "UpdateDeviceStatus": [devices.update_device_status],
    "ListDevices": [devices.list_devices],
    "AdminListDevices": [devices.admin_list_devices],
    "ForgetDevice": [devices.forget_device],
    "AdminForgetDevice": [devices.admin_forget_device],
    "StartWebAuthnRegistration": [passkeys.start_web_authn_registration],
    "CompleteWebAuthnRegistration": [passkeys.complete_web_authn_registration],
    "ListWebAuthnCredentials": [passkeys.list_web_authn_credentials],
    "DeleteWebAuthnCredential": [passkeys.delete_web_authn_credential],
    "ListUserSessions": [sessions.list_user_sessions],
    "RevokeUserSession": [sessions.revoke_user_session],
    "AdminListUserSessions": [sessions.admin_list_user_sessions],
    "AdminRevokeUserSession": [sessions.admin_revoke_user_session],
    "GetUserPoolSessionConfiguration": [sessions.get_user_pool_session_configuration],
    "SetUserPoolSessionConfiguration": [sessions.set_user_pool_session_configuration],
    "GetDerivedToken": [token_exchange.get_derived_token],
    "GetClientToken": [token_exchange.get_client_token],
}
# The service's request-rate quotas (off unless config "quota" sets them), first: a refused
# request reaches nothing else.
for _op in quota.CATEGORIES:
    LINKS[_op] = [quota.enforce, *LINKS.get(_op, [])]

# (operations, observer), in the order they run.
OBSERVERS: list[tuple[tuple[str, ...], Observer]] = [
    (("CreateUserPoolClient", "DescribeUserPoolClient", "UpdateUserPoolClient"), observers.learn_client),
    (("DeleteUserPoolClient",), observers.forget_client),
    (("AdminCreateUser",), observers.learn_admin_create),
    (("AdminSetUserPassword",), observers.learn_admin_set),
    (("SignUp", "ConfirmForgotPassword"), observers.learn_signup),
    (("ChangePassword",), observers.learn_change),
    (("RespondToAuthChallenge", "AdminRespondToAuthChallenge"), observers.learn_new_password),
    (("InitiateAuth", "AdminInitiateAuth"), observers.learn_from_auth),
    (("InitiateAuth", "AdminInitiateAuth", "RespondToAuthChallenge", "AdminRespondToAuthChallenge",
      "GetTokensFromRefreshToken"), sessions.learn_sessions),
    (("GlobalSignOut", "AdminUserGlobalSignOut"), sessions.end_user_sessions),
]


@dataclass(frozen=True)
class Chain:
    links: Mapping[str, Sequence[Handler]]
    observers: Sequence[tuple[tuple[str, ...], Observer]]

    def new_state(self) -> FakeState:
        return FakeState()

    def answer(self, fake: FakeCognito, req: Request) -> Reply:
        """The answer to `req`: its operation's links, then moto."""
        return self.run(fake, req, self.links.get(req.op, ()))

    @staticmethod
    def run(fake: FakeCognito, req: Request, links: Sequence[Handler]) -> Reply:
        """`req` down `links` (then moto)."""
        def from_link(i: int) -> Reply:
            if i == len(links):
                return fake.forward(req)
            reply = links[i](fake, req, lambda: from_link(i + 1))
            return reply if reply is not None else from_link(i + 1)
        return from_link(0)

    def observers_of(self, op: str) -> list[Observer]:
        return [obs for ops, obs in self.observers if op in ops]


CHAIN = Chain(LINKS, OBSERVERS)
