"""Passkeys (WebAuthn) in the fake Cognito: moto has none of it.

It is a fake, so that authctl's passkey code can be run end to end without AWS; what makes it
worth trusting is that every registration and every assertion is verified by a real WebAuthn
relying-party library (PyPI `webauthn`, py_webauthn), never by this module's own checks: a wrong
origin, relying party, challenge, signature or sign counter is refused by that library.

Shapes follow botocore's cognito-idp 2016-04-18 model:

* StartWebAuthnRegistration {AccessToken} -> {CredentialCreationOptions}: a fresh 32-byte
  challenge for the user, rp {id, name}, user {id (the user's sub, base64url), name,
  displayName}, pubKeyCredParams ES256 and RS256, excludeCredentials (the user's passkeys),
  authenticatorSelection {residentKey required, userVerification (POST /_fake/config
  passkeyUserVerification, default "preferred")}, timeout.
* CompleteWebAuthnRegistration {AccessToken, Credential}: the RegistrationResponseJSON, verified
  against the user's pending challenge, the rp id and the origin https://<rp id>; a refusal is
  WebAuthnOriginNotAllowedException / WebAuthnRelyingPartyMismatchException /
  WebAuthnChallengeNotFoundException / WebAuthnCredentialNotSupportedException as the library's
  reason says. The whole response is required (id, rawId, type, response.{clientDataJSON,
  attestationObject, transports, publicKeyAlgorithm, publicKey, authenticatorData}).
* ListWebAuthnCredentials {AccessToken, NextToken, MaxResults} -> {Credentials, NextToken}, in
  pages of MaxResults (POST /_fake/config passkeyPageSize caps them, to test paging).
* DeleteWebAuthnCredential {AccessToken, CredentialId}; ResourceNotFoundException if unknown.
* WEB_AUTHN as a second factor: after a right password, for users listed in passkeyMfaUsers
  (mfa.py's gate asks `mfa_challenge`), answered the same way.
* WEB_AUTHN: offered by USER_AUTH (passwordless.py) to users with a passkey here (or listed in
  passkeyUsers), started with PREFERRED_CHALLENGE or chosen from SELECT_CHALLENGE: the challenge
  carries CREDENTIAL_REQUEST_OPTIONS (challenge, rpId, allowCredentials, userVerification,
  timeout); RespondToAuthChallenge WEB_AUTHN with CREDENTIAL (AuthenticationResponseJSON) is
  verified with the stored public key and sign counter, and gives tokens.

Config (POST /_fake/config): passkeyRelyingPartyId (default "auth.example.com"),
passkeyOrigin (what the verifier expects; default https://<rp id>), passkeyUserVerification,
passkeyPageSize, passkeyTimeout (ms, in the options), passkeysDisabled (WebAuthnNotEnabledException). The rp id the options carry and the one the
verifier expects can differ via passkeyOptionsRelyingPartyId, to play a misconfigured pool.

Passkeys as MFA (April 2026): passkeyFactorConfiguration MULTI_FACTOR_WITH_USER_VERIFICATION (the
pool's WebAuthnConfiguration.FactorConfiguration) makes every registration and sign-in need user
verification ("required" in the options, and py_webauthn's require_user_verification), as does
the user's passkey MFA (SetUserMFAPreference WebAuthnMfaSettings {Enabled}, mfa.py: refused with
InvalidParameterException unless the pool's passkeys count as MFA and another factor is on;
GetUser then lists WEB_AUTHN in UserMFASettingList). passkeyOptionsUserVerification makes the
options ask for less than is needed (an endpoint downgrading the request); the verifier does not.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidRegistrationResponse

from .messages import Reply, Request, Rest, ServiceError, json_reply, not_authorized
from .mfa import user_of_access_token, finish_mfa, new_mfa_session
from .proxy import FakeCognito
from .shared import MULTI_FACTOR_WITH_USER_VERIFICATION, WEB_AUTHN

CHALLENGE_LIFETIME = 300.0


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Passkey:
    credential_id: str
    public_key: bytes
    sign_count: int
    rp_id: str
    transports: list[str]
    created: float = field(default_factory=time.time)
    name: str = "Security key"


@dataclass
class PasskeyState:
    """Passkeys per (pool id, username), pending registration challenges per user, and the
    WEB_AUTHN challenge of each live sign-in session."""

    passkeys: dict[tuple[str, str], list[Passkey]] = field(default_factory=dict)
    registrations: dict[tuple[str, str], tuple[bytes, float]] = field(default_factory=dict)
    sign_ins: dict[str, bytes] = field(default_factory=dict)  # challenge Session -> challenge


def _rp_id(fake: FakeCognito) -> str:
    return str(fake.config.get("passkeyRelyingPartyId") or "auth.example.com")


def _options_rp_id(fake: FakeCognito) -> str:
    return str(fake.config.get("passkeyOptionsRelyingPartyId") or _rp_id(fake))


def _origin(fake: FakeCognito) -> str:
    return str(fake.config.get("passkeyOrigin") or f"https://{_rp_id(fake)}")


def _timeout(fake: FakeCognito) -> int:
    return int(fake.config.get("passkeyTimeout") or 60000)


def _user_verification(fake: FakeCognito, pool_id: str, username: str) -> str:
    """The userVerification a registration or sign-in needs: "required" where the pool's passkeys
    count as MFA (FactorConfiguration MULTI_FACTOR_WITH_USER_VERIFICATION) or the user turned
    passkey MFA on (WebAuthnMfaSettings); else the pool's UserVerification."""
    with fake.lock:
        user = fake.state.mfa.users.get((pool_id, username))
    if fake.config.get("passkeyFactorConfiguration") == MULTI_FACTOR_WITH_USER_VERIFICATION or (
            user is not None and user.web_authn_mfa):
        return "required"
    return fake.config.get("passkeyUserVerification") or "preferred"


def _options_user_verification(fake: FakeCognito, needed: str) -> str:
    """What the options say (passkeyOptionsUserVerification plays an endpoint that asks for less
    than the pool needs); the verifier still requires `needed`."""
    return fake.config.get("passkeyOptionsUserVerification") or needed


def _user(fake: FakeCognito, req: Request) -> tuple[str, str]:
    who = user_of_access_token(fake, req)
    if isinstance(who, Reply):
        body = who.json() or {}
        raise ServiceError(body.get("__type") or "NotAuthorizedException", body.get("message") or "Invalid Access Token",
                           who.status)
    return who


def user_passkeys(fake: FakeCognito, pool_id: str, username: str) -> list[Passkey]:
    with fake.lock:
        return list(fake.state.passkeys.passkeys.get((pool_id, username), []))


def _refusal(reason: str) -> ServiceError:
    """py_webauthn's reason, as the service's exception type."""
    text = reason.lower()
    if "origin" in text:
        return ServiceError("WebAuthnOriginNotAllowedException", f"Origin not allowed: {reason}")
    if "rp id" in text or "rp_id" in text or "relying party" in text:
        return ServiceError("WebAuthnRelyingPartyMismatchException", f"Relying party mismatch: {reason}")
    if "challenge" in text:
        return ServiceError("WebAuthnChallengeNotFoundException", f"Challenge mismatch: {reason}")
    return ServiceError("WebAuthnCredentialNotSupportedException", f"Credential not supported: {reason}")


def start_web_authn_registration(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    pool_id, username = _user(fake, req)
    if fake.config.get("passkeysDisabled"):
        raise ServiceError("WebAuthnNotEnabledException", "Passkeys are not enabled for this user pool.")
    got = fake.call("AdminGetUser", {"UserPoolId": pool_id, "Username": username}, pool_id.split("_")[0])
    attrs = {a["Name"]: a.get("Value", "") for a in (got.json() or {}).get("UserAttributes", [])}
    challenge = secrets.token_bytes(32)
    with fake.lock:
        fake.state.passkeys.registrations[(pool_id, username)] = (challenge, time.monotonic() + CHALLENGE_LIFETIME)
    existing = user_passkeys(fake, pool_id, username)
    options = {
        "challenge": b64url(challenge),
        "rp": {"id": _options_rp_id(fake), "name": "Fake user pool"},
        "user": {"id": b64url((attrs.get("sub") or username).encode()), "name": username,
                 "displayName": attrs.get("email") or username},
        "pubKeyCredParams": [{"type": "public-key", "alg": -7}, {"type": "public-key", "alg": -257}],
        "timeout": _timeout(fake),
        "excludeCredentials": [{"type": "public-key", "id": p.credential_id} for p in existing],
        "authenticatorSelection": {"requireResidentKey": True, "residentKey": "required",
                                   "userVerification": _options_user_verification(
                                       fake, _user_verification(fake, pool_id, username))},
    }
    return json_reply({"CredentialCreationOptions": options})


_REGISTRATION_FIELDS = ("clientDataJSON", "attestationObject", "transports", "publicKeyAlgorithm", "publicKey",
                        "authenticatorData")


def complete_web_authn_registration(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    pool_id, username = _user(fake, req)
    credential = req.body.get("Credential")
    if not isinstance(credential, dict):
        raise ServiceError("InvalidParameterException", "Credential must be a RegistrationResponseJSON document")
    missing = [k for k in ("id", "rawId", "type") if k not in credential]
    missing += [f"response.{k}" for k in _REGISTRATION_FIELDS if k not in (credential.get("response") or {})]
    if missing:
        raise ServiceError("InvalidParameterException", f"Credential is missing {', '.join(missing)}")
    with fake.lock:
        pending = fake.state.passkeys.registrations.pop((pool_id, username), None)
    if pending is None or time.monotonic() > pending[1]:
        raise ServiceError("WebAuthnChallengeNotFoundException", "No registration challenge was found for this user.")
    try:
        verified = verify_registration_response(
            credential=credential, expected_challenge=pending[0], expected_rp_id=_rp_id(fake),
            expected_origin=_origin(fake),
            require_user_verification=_user_verification(fake, pool_id, username) == "required")
    except InvalidRegistrationResponse as e:
        raise _refusal(str(e)) from None
    passkey = Passkey(credential_id=b64url(verified.credential_id), public_key=verified.credential_public_key,
                      sign_count=verified.sign_count, rp_id=_rp_id(fake),
                      transports=list((credential.get("response") or {}).get("transports") or []))
    with fake.lock:
        keys = fake.state.passkeys.passkeys.setdefault((pool_id, username), [])
        if any(p.credential_id == passkey.credential_id for p in keys):
            raise ServiceError("InvalidParameterException", "This credential is already registered.")
        passkey.name = f"Security key {len(keys) + 1}"
        keys.append(passkey)
    reply = json_reply({})
    reply.note = f"passkey {passkey.credential_id} registered ({verified.fmt})"
    return reply


def list_web_authn_credentials(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    pool_id, username = _user(fake, req)
    keys = user_passkeys(fake, pool_id, username)
    size = min(int(req.body.get("MaxResults") or 20), int(fake.config.get("passkeyPageSize") or 20))
    start = int(req.body.get("NextToken") or 0)
    page = keys[start:start + size]
    body: dict[str, Any] = {"Credentials": [{
        "CredentialId": p.credential_id, "FriendlyCredentialName": p.name, "RelyingPartyId": p.rp_id,
        "AuthenticatorAttachment": "cross-platform", "AuthenticatorTransports": p.transports, "CreatedAt": p.created,
    } for p in page]}
    if start + size < len(keys):
        body["NextToken"] = str(start + size)
    return json_reply(body)


def delete_web_authn_credential(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    pool_id, username = _user(fake, req)
    wanted = req.body.get("CredentialId")
    with fake.lock:
        keys = fake.state.passkeys.passkeys.get((pool_id, username), [])
        kept = [p for p in keys if p.credential_id != wanted]
        if len(kept) == len(keys):
            raise ServiceError("ResourceNotFoundException", "Credential not found.")
        fake.state.passkeys.passkeys[(pool_id, username)] = kept
    return json_reply({})


def start_sign_in(fake: FakeCognito, pool_id: str, client_id: str, username: str, previous: Any) -> Reply:
    """WEB_AUTHN as the first factor: the request options and a session to answer in."""
    challenge = secrets.token_bytes(32)
    changes = dict(name=WEB_AUTHN, offered=[WEB_AUTHN])
    if previous is None:
        ch = new_mfa_session(fake, None, pool_id=pool_id, client_id=client_id, username=username, **changes)
    else:
        ch = new_mfa_session(fake, previous, **changes)
    with fake.lock:
        fake.state.passkeys.sign_ins[ch.session] = challenge
    options = {
        "challenge": b64url(challenge), "rpId": _options_rp_id(fake), "timeout": _timeout(fake),
        "allowCredentials": [{"type": "public-key", "id": p.credential_id, "transports": p.transports}
                             for p in user_passkeys(fake, pool_id, username)],
        "userVerification": _options_user_verification(fake, _user_verification(fake, pool_id, username)),
    }
    return json_reply({"ChallengeName": WEB_AUTHN, "Session": ch.session,
                       "ChallengeParameters": {"CREDENTIAL_REQUEST_OPTIONS": json.dumps(options), "USERNAME": username}})


def mfa_challenge(fake: FakeCognito, client: Any, username: str) -> Reply | None:
    """WEB_AUTHN as the second factor after a right password (mfa.py's gate asks), for users in
    POST /_fake/config {"passkeyMfaUsers": [...]} who have a passkey; None otherwise."""
    if username not in (fake.config.get("passkeyMfaUsers") or []):
        return None
    if not user_passkeys(fake, client.pool_id, username):
        return None
    reply = start_sign_in(fake, client.pool_id, client.client_id, username, None)
    reply.note = "WEB_AUTHN as the second factor"
    return reply


def respond_to_auth_challenge(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    """A RespondToAuthChallenge link: WEB_AUTHN (others pass)."""
    if req.challenge_name != WEB_AUTHN:
        return None
    client = fake.client(req.body.get("ClientId"))
    if client is None:
        return fake.forward(req)
    from .passwordless import first_factor_session  # passwordless.py starts WEB_AUTHN here
    responses, ch = first_factor_session(fake, req, client)
    with fake.lock:
        challenge = fake.state.passkeys.sign_ins.pop(ch.session, None)
    raw = responses.get("CREDENTIAL")
    if not raw or challenge is None:
        raise ServiceError("InvalidParameterException", "Missing required parameter CREDENTIAL")
    try:
        credential = json.loads(raw)
    except ValueError:
        raise ServiceError("InvalidParameterException", "CREDENTIAL is not JSON") from None
    keys = user_passkeys(fake, ch.pool_id, ch.username)
    passkey = next((p for p in keys if p.credential_id == credential.get("id")), None)
    if passkey is None:
        raise not_authorized("Incorrect username or password.", note="no such passkey for the user")
    try:
        verified = verify_authentication_response(
            credential=credential, expected_challenge=challenge, expected_rp_id=_rp_id(fake),
            expected_origin=_origin(fake), credential_public_key=passkey.public_key,
            credential_current_sign_count=passkey.sign_count,
            require_user_verification=_user_verification(fake, ch.pool_id, ch.username) == "required")
    except InvalidAuthenticationResponse as e:
        raise _refusal(str(e)) if "origin" in str(e).lower() or "rp id" in str(e).lower() else not_authorized(
            "Incorrect username or password.", note=f"assertion refused: {e}") from None
    with fake.lock:
        passkey.sign_count = verified.new_sign_count
    reply = finish_mfa(fake, ch)
    reply.note = f"WEB_AUTHN passkey {passkey.credential_id} verified"
    return reply
