"""The tests' TOTP (totp.py) against RFC 6238's published vectors, before any MFA test relies on it."""

from __future__ import annotations

import base64
import secrets

import pytest

import fake_cognito
import totp

RFC_SECRET = b"12345678901234567890"  # RFC 6238 appendix B, the SHA-1 key (20 ASCII bytes)

# RFC 6238 appendix B, SHA-1 column, 8 digits.
RFC_VECTORS = [
    (59, "94287082"),
    (1111111109, "07081804"),
    (1111111111, "14050471"),
    (1234567890, "89005924"),
    (2000000000, "69279037"),
    (20000000000, "65353130"),
]


@pytest.mark.parametrize("at,expected", RFC_VECTORS, ids=[str(t) for t, _ in RFC_VECTORS])
def test_rfc6238_sha1_vectors(at, expected):
    assert totp.totp_raw(RFC_SECRET, at, digits=8) == expected


@pytest.mark.parametrize("at,expected", RFC_VECTORS, ids=[str(t) for t, _ in RFC_VECTORS])
def test_six_digits_are_the_last_six_of_eight(at, expected):
    # 10^6 divides 10^8: the 6-digit code an authenticator shows is the 8-digit one's tail.
    assert totp.totp_raw(RFC_SECRET, at) == expected[-6:]


def test_rfc4226_hotp_vectors():
    # RFC 4226 appendix D: the same key, counters 0..9, 6 digits.
    expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
    assert [totp.hotp(RFC_SECRET, c) for c in range(10)] == expected


def test_base32_secrets():
    b32 = base64.b32encode(RFC_SECRET).decode()
    assert b32 == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
    for spelled in (b32, b32.lower(), " ".join(b32[i:i + 4] for i in range(0, len(b32), 4))):
        assert totp.totp(spelled, 59, digits=8) == "94287082"
        assert totp.totp(spelled, 1111111109) == "081804"
    # Unpadded secrets of any length (Cognito's are 32 random bytes: 52 characters, no '=').
    key = secrets.token_bytes(32)
    unpadded = base64.b32encode(key).decode().rstrip("=")
    assert len(unpadded) == 52
    assert totp.totp(unpadded, 1234567890) == totp.totp_raw(key, 1234567890)


def test_step_boundaries():
    # 59 and 60 are in different 30 s steps, 30..59 in the same one.
    assert totp.totp_raw(RFC_SECRET, 30) == totp.totp_raw(RFC_SECRET, 59) == totp.hotp(RFC_SECRET, 1)
    assert totp.totp_raw(RFC_SECRET, 60) == totp.hotp(RFC_SECRET, 2)


def test_wrong_code_is_never_near():
    secret = fake_cognito.new_totp_secret()
    for at in (0, 29, 30, 1111111109, 2000000000):
        bad = totp.wrong_code(secret, at)
        assert not fake_cognito.totp_matches(secret, bad, at)


def test_the_fake_agrees():
    """The fake's checker (its own code) accepts our code, one step either side, and no more."""
    for _ in range(20):
        secret = fake_cognito.new_totp_secret()
        at = secrets.randbelow(4_000_000_000)
        assert fake_cognito.totp_code(secret, at) == totp.totp(secret, at)
        assert fake_cognito.totp_matches(secret, totp.totp(secret, at), at)
        assert fake_cognito.totp_matches(secret, totp.totp(secret, at - 30), at)
        assert fake_cognito.totp_matches(secret, totp.totp(secret, at + 30), at)
        far = totp.totp(secret, at + 90)
        if far not in {totp.totp(secret, at + k * 30) for k in (-1, 0, 1)}:
            assert not fake_cognito.totp_matches(secret, far, at)
