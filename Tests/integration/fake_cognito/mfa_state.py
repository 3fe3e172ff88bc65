"""Multi-factor authentication: a user's MFA and a live challenge, as the service keeps them
(moto cannot play it honestly; see the package docstring), and TOTP (RFC 6238)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from .shared import MFA_SETUP, SELECT_MFA_TYPE, SOFTWARE_TOKEN_MFA

MFA_MODES = ("off", "totp", "sms", "email", "select", "setup")


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
    web_authn_mfa  passkey MFA (SetUserMFAPreference WebAuthnMfaSettings): WEB_AUTHN in
                   UserMFASettingList, and the user's passkey sign-ins need user verification
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
    web_authn_mfa: bool = False
    sent: list[dict[str, Any]] = field(default_factory=list)  # codes "delivered" by SMS / email

    def challenge(self) -> tuple[str, list[str]] | None:
        """What a sign-in must pass after the password: (challenge name, factors offered)."""
        if self.enabled:
            if self.preferred in self.enabled:
                return self.preferred, [self.preferred]
            if len(self.enabled) == 1:
                return self.enabled[0], list(self.enabled)
            return SELECT_MFA_TYPE, list(self.enabled)
        if self.setup_required:
            return MFA_SETUP, [SOFTWARE_TOKEN_MFA]
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
            "webAuthnMfa": self.web_authn_mfa,
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


@dataclass
class MfaState:
    """What mfa.py keeps (fake.state.mfa), under the fake's lock: every user's MFA, and the live
    challenge sessions (MFA, and the USER_AUTH first factors passwordless.py plays with them)."""

    users: dict[tuple[str, str], MfaUser] = field(default_factory=dict)  # (pool id, username) -> MFA state
    sessions: dict[str, MfaChallenge] = field(default_factory=dict)  # challenge Session -> its state
