"""SRP, server side: what Cognito does (RFC 5054 3072-bit group, HKDF "Caldera Derived Key")."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

# RFC 5054 3072-bit group, the one Cognito uses.
N_HEX = (
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
    "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
    "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
    "15728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7"
    "ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200C"
    "BBE117577A615D6C770988C0BAD946E208E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF"
)
N = int(N_HEX, 16)
G = 2
INFO_BITS = b"Caldera Derived Key"
CHALLENGE_LIFETIME = 180.0  # seconds a PASSWORD_VERIFIER challenge stays answerable
TIMESTAMP_SKEW = 300.0  # seconds the client's TIMESTAMP may differ from now
_DAYS = "Mon|Tue|Wed|Thu|Fri|Sat|Sun"
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
TIMESTAMP_RE = re.compile(
    rf"^({_DAYS}) ({_MONTHS}) ([1-9]|[12][0-9]|3[01]) ([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9]) UTC ([0-9]{{4}})$"
)


def pad_hex(value: int | str) -> str:
    """Cognito's padHex: even length, and a leading 00 when the first digit is >= 8."""
    h = value if isinstance(value, str) else format(value, "x")
    if len(h) % 2 == 1:
        h = "0" + h
    elif h[0] in "89abcdefABCDEF":
        h = "00" + h
    return h


def hex_hash(hex_string: str) -> str:
    return hashlib.sha256(bytes.fromhex(hex_string)).hexdigest()


K = int(hex_hash(pad_hex(N) + pad_hex(G)), 16)


def compute_x(pool_name: str, user_id: str, password: str, salt_hex: str) -> int:
    inner = hashlib.sha256(f"{pool_name}{user_id}:{password}".encode("utf-8")).hexdigest()
    return int(hex_hash(pad_hex(salt_hex) + inner), 16)


def compute_u(a_pub: int, b_pub: int) -> int:
    return int(hex_hash(pad_hex(a_pub) + pad_hex(b_pub)), 16)


def hkdf_key(s_value: int, u_value: int) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=16, salt=bytes.fromhex(pad_hex(u_value)), info=INFO_BITS).derive(
        bytes.fromhex(pad_hex(s_value))
    )


def claim_signature(key: bytes, pool_name: str, user_id: str, secret_block_b64: str, timestamp: str) -> str:
    msg = pool_name.encode() + user_id.encode() + base64.b64decode(secret_block_b64) + timestamp.encode()
    return base64.b64encode(hmac.new(key, msg, hashlib.sha256).digest()).decode()


def secret_hash(client_secret: str, username: str, client_id: str) -> str:
    digest = hmac.new(client_secret.encode(), (username + client_id).encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def parse_srp_timestamp(ts: str) -> datetime | None:
    """The TIMESTAMP Cognito clients send: 'Tue Jul 10 11:01:00 UTC 2018', day not zero-padded."""
    if not TIMESTAMP_RE.match(ts):
        return None
    try:
        when = datetime.strptime(ts, "%a %b %d %H:%M:%S UTC %Y").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    if when.strftime("%a") != ts[:3]:  # weekday must agree with the date
        return None
    return when


@dataclass
class SrpChallenge:
    pool_id: str
    client_id: str
    username: str  # the USER_ID_FOR_SRP we sent
    salt_hex: str
    verifier: int
    b_priv: int
    b_pub: int
    a_pub: int
    secret_block: str
    session: str
    created: float = field(default_factory=time.monotonic)

    @property
    def pool_name(self) -> str:
        return self.pool_id.split("_", 1)[1]
