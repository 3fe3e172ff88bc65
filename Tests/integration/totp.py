"""RFC 6238 time-based one-time passwords, the tests' own (independent of the fake's and of authctl).

TOTP(K, T) = HOTP(K, floor((T - T0) / X)) with T0 = 0 and X = 30 s; HOTP (RFC 4226) is
HMAC-SHA-1 over the 8-byte big-endian counter, dynamically truncated to 31 bits, modulo 10^digits.
Checked against the RFC's published test vectors in test_totp.py before anything relies on it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

STEP = 30
DIGITS = 6


def b32decode(secret: str) -> bytes:
    """A Base32 secret as authenticator apps accept it: any case, spaces, no padding."""
    cleaned = "".join(secret.split()).upper().rstrip("=")
    return base64.b32decode(cleaned + "=" * (-len(cleaned) % 8))


def hotp(key: bytes, counter: int, digits: int = DIGITS, digest=hashlib.sha1) -> str:
    mac = hmac.new(key, counter.to_bytes(8, "big"), digest).digest()
    offset = mac[-1] & 0x0F
    binary = ((mac[offset] & 0x7F) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3]
    return str(binary % 10 ** digits).rjust(digits, "0")


def totp_raw(key: bytes, at: float, digits: int = DIGITS, step: int = STEP) -> str:
    return hotp(key, int(at) // step, digits)


def totp(secret_b32: str, at: float | None = None, digits: int = DIGITS, step: int = STEP) -> str:
    """The code of a Base32 secret at time `at` (now by default)."""
    return totp_raw(b32decode(secret_b32), time.time() if at is None else at, digits, step)


def wrong_code(secret_b32: str, at: float | None = None) -> str:
    """A 6-digit code that matches none of the steps a ±1-step checker accepts around `at`."""
    at = time.time() if at is None else at
    near = {totp(secret_b32, max(at + k * STEP, 0)) for k in range(-2, 3)}
    for candidate in ("000000", "111111", "123456", "999999", "246802"):
        if candidate not in near:
            return candidate
    raise AssertionError("unreachable: five fixed codes cannot all be near codes")


def fresh_totp(secret_b32: str, margin: float = 3.0) -> str:
    """The current code, after waiting out the last `margin` seconds of a step, so that the code
    is still current when it reaches a checker (which accepts ±1 step anyway)."""
    left = STEP - time.time() % STEP
    if left < margin:
        time.sleep(left + 0.05)
    return totp(secret_b32)
