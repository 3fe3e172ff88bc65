"""InitiateAuth and RespondToAuthChallenge: SRP answered here, SECRET_HASH and the client's
ExplicitAuthFlows checked where moto does not, the second factor put after a right password."""

from __future__ import annotations

import base64
import hmac
import json
import secrets
import time
from dataclasses import dataclass, field

from .messages import Reply, Request, Rest, ServiceError, json_reply, not_authorized
from .mfa import answer_mfa_challenge, mfa_gate
from .proxy import FakeCognito
from .shared import (ADMIN_USER_PASSWORD_AUTH, AMZ_JSON, EXPIRED_SESSION, INVALID_SESSION, MFA_CHALLENGES,
                     NEW_PASSWORD_REQUIRED, PASSWORD_FLOWS, PASSWORD_VERIFIER, REFRESH_FLOWS, REFRESH_TOKEN,
                     REFRESH_TOKEN_AUTH, REFRESH_TOKEN_REVOKED, SECRET_HASH_MISSING, USER_DISABLED, USER_NOT_CONFIRMED,
                     USER_NOT_FOUND, USER_PASSWORD_AUTH, USER_SRP_AUTH)
from .srp import (CHALLENGE_LIFETIME, TIMESTAMP_SKEW, G, K, N, SrpChallenge, claim_signature, compute_u, compute_x,
                  hkdf_key, parse_srp_timestamp)
from .tokens import refresh_token_revoked


@dataclass
class AuthState:
    """What this module keeps (fake.state.auth), under the fake's lock: the live SRP challenges."""

    challenges: dict[str, SrpChallenge] = field(default_factory=dict)  # by SECRET_BLOCK
    sessions: dict[str, str] = field(default_factory=dict)  # Session -> SECRET_BLOCK


def initiate_auth(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    """The last InitiateAuth link: the password flows (SRP answered here) and the refresh checks."""
    flow = req.auth_flow or ""
    params = req.body.get("AuthParameters") or {}
    client = fake.client(req.body.get("ClientId"))
    if client is None:
        return None  # moto answers ResourceNotFoundException
    if flow in PASSWORD_FLOWS + REFRESH_FLOWS:
        fake.check_flow(client, REFRESH_TOKEN_AUTH if flow == REFRESH_TOKEN else flow)
    if flow in REFRESH_FLOWS:
        if refresh_token_revoked(fake, params.get("REFRESH_TOKEN")):
            raise not_authorized(REFRESH_TOKEN_REVOKED)
        if client.rotation:
            # Cognito refuses the old flow once rotation is on (the exact words are our guess).
            raise not_authorized("Refresh token rotation is enabled for this app client: use GetTokensFromRefreshToken")
        if client.secret and not params.get("SECRET_HASH"):
            # moto refuses this too, but with an empty message; Cognito names the missing hash.
            raise not_authorized(SECRET_HASH_MISSING.format(client_id=client.client_id))
        return None  # moto checks the SECRET_HASH's value for refresh itself
    if flow == USER_PASSWORD_AUTH:
        fake.check_secret_hash(client, params.get("USERNAME"), params.get("SECRET_HASH"))
        # moto checks the password; a user with MFA gets a challenge instead of its tokens.
        return mfa_gate(fake, client, fake.forward(req))
    if flow != USER_SRP_AUTH:
        return None

    username = params.get("USERNAME")
    fake.check_secret_hash(client, username, params.get("SECRET_HASH"))
    if not username:
        raise ServiceError("InvalidParameterException", "Missing required parameter USERNAME")
    srp_a = params.get("SRP_A")
    if not srp_a:
        raise ServiceError("InvalidParameterException", "Missing required parameter SRP_A")
    try:
        a_pub = int(srp_a, 16)
    except ValueError:
        raise ServiceError("InvalidParameterException", "SRP_A is not a hexadecimal number") from None
    if a_pub % N == 0:
        raise ServiceError("InvalidParameterException", "SRP_A is invalid (A mod N == 0)")

    region = client.pool_id.split("_")[0]
    got = fake.call("AdminGetUser", {"UserPoolId": client.pool_id, "Username": username}, region)
    if got.status != 200:
        info = got.json() or {}
        if info.get("__type") == "UserNotFoundException":
            raise ServiceError("UserNotFoundException", USER_NOT_FOUND)
        got.handled_by = "moto"
        return got
    user = got.json()
    if not user.get("Enabled", True):
        raise not_authorized(USER_DISABLED)
    if user.get("UserStatus") == "UNCONFIRMED":
        raise ServiceError("UserNotConfirmedException", USER_NOT_CONFIRMED)
    user_id = user["Username"]
    with fake.lock:
        password = fake.passwords.get((client.pool_id, user_id))
    note = None
    if password is None:
        # Unknown to us: no signature can match (as for a user whose password nobody knows).
        password = secrets.token_hex(32)
        note = "password unknown to the fake"

    salt_hex = format(secrets.randbits(128) | (1 << 127), "x")  # canonical hex, no leading zero
    pool_name = client.pool_id.split("_", 1)[1]
    verifier = pow(G, compute_x(pool_name, user_id, password, salt_hex), N)
    while True:
        b_priv = secrets.randbits(1024)
        b_pub = (K * verifier + pow(G, b_priv, N)) % N
        if b_pub != 0 and compute_u(a_pub, b_pub) != 0:
            break
    secret_block = base64.b64encode(secrets.token_bytes(1024)).decode()  # Cognito's is about this long
    session = base64.b64encode(secrets.token_bytes(48)).decode()
    ch = SrpChallenge(client.pool_id, client.client_id, user_id, salt_hex, verifier, b_priv, b_pub, a_pub, secret_block, session)
    st = fake.state.auth
    with fake.lock:
        now = time.monotonic()
        for key in [k for k, c in st.challenges.items() if now - c.created > CHALLENGE_LIFETIME]:
            st.sessions.pop(st.challenges.pop(key).session, None)
        st.challenges[secret_block] = ch
        st.sessions[session] = secret_block
    reply = json_reply(
        {
            "ChallengeName": PASSWORD_VERIFIER,
            "ChallengeParameters": {
                "SALT": salt_hex,
                "SRP_B": format(b_pub, "x"),
                "SECRET_BLOCK": secret_block,
                "USER_ID_FOR_SRP": user_id,
                "USERNAME": user_id,
            },
            "Session": session,
        }
    )
    reply.note = note
    return reply


def respond_to_auth_challenge(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
    """The last RespondToAuthChallenge link: PASSWORD_VERIFIER (the SRP proof), the MFA challenges,
    NEW_PASSWORD_REQUIRED and SECRET_HASH on every other answer."""
    name = req.challenge_name
    responses = req.body.get("ChallengeResponses") or {}
    client = fake.client(req.body.get("ClientId"))
    if client is None:
        return None
    if name in MFA_CHALLENGES:
        return answer_mfa_challenge(fake, req, client)
    if name != PASSWORD_VERIFIER:
        # moto does not check SECRET_HASH on challenge answers; Cognito does.
        fake.check_secret_hash(client, responses.get("USERNAME"), responses.get("SECRET_HASH"))
        if name == NEW_PASSWORD_REQUIRED:  # a new password, then the second factor
            return mfa_gate(fake, client, fake.forward(req))
        return None

    block = responses.get("PASSWORD_CLAIM_SECRET_BLOCK")
    st = fake.state.auth
    with fake.lock:
        key = block if block in st.challenges else st.sessions.get(req.body.get("Session") or "")
        ch = st.challenges.pop(key, None) if key else None  # single use, right or wrong
        if ch:
            st.sessions.pop(ch.session, None)
    if ch is None or time.monotonic() - ch.created > CHALLENGE_LIFETIME:
        raise not_authorized(EXPIRED_SESSION, note="no such SRP challenge")
    if ch.client_id != client.client_id:
        raise not_authorized(INVALID_SESSION, note="challenge issued to another client")
    fake.check_secret_hash(client, responses.get("USERNAME"), responses.get("SECRET_HASH"))
    if block != ch.secret_block:
        raise not_authorized(note="PASSWORD_CLAIM_SECRET_BLOCK is not the SECRET_BLOCK we sent")
    if responses.get("USERNAME") != ch.username:
        raise not_authorized(note="USERNAME is not USER_ID_FOR_SRP")
    ts = responses.get("TIMESTAMP") or ""
    when = parse_srp_timestamp(ts)
    if when is None:
        raise not_authorized(note=f"TIMESTAMP {ts!r} is not 'EEE MMM d HH:mm:ss UTC yyyy'")
    if abs(when.timestamp() - time.time()) > TIMESTAMP_SKEW:
        raise not_authorized(note=f"TIMESTAMP {ts!r} is more than {TIMESTAMP_SKEW:.0f} s from now")
    signature = responses.get("PASSWORD_CLAIM_SIGNATURE") or ""
    u_value = compute_u(ch.a_pub, ch.b_pub)
    s_value = pow(ch.a_pub * pow(ch.verifier, u_value, N), ch.b_priv, N)
    expected = claim_signature(hkdf_key(s_value, u_value), ch.pool_name, ch.username, ch.secret_block, ts)
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        raise not_authorized(note="PASSWORD_CLAIM_SIGNATURE does not match")

    # The proof is right: let moto decide what happens next (tokens, NEW_PASSWORD_REQUIRED, MFA...).
    with fake.lock:
        password = fake.passwords.get((ch.pool_id, ch.username))
    region = ch.pool_id.split("_")[0]
    admin = {
        "UserPoolId": ch.pool_id,
        "ClientId": ch.client_id,
        "AuthFlow": ADMIN_USER_PASSWORD_AUTH,
        "AuthParameters": {"USERNAME": ch.username, "PASSWORD": password or ""},
    }
    reply = fake.call("AdminInitiateAuth", admin, region)
    body = reply.json()
    if reply.status == 200 and isinstance(body, dict) and body.get("ChallengeName") == NEW_PASSWORD_REQUIRED:
        # moto's admin flow sends no parameters; Cognito sends these.
        user = fake.call("AdminGetUser", {"UserPoolId": ch.pool_id, "Username": ch.username}, region).json() or {}
        attrs = {a["Name"]: a["Value"] for a in user.get("UserAttributes", []) if a["Name"] != "sub"}
        body["ChallengeParameters"] = {
            "USER_ID_FOR_SRP": ch.username,
            "requiredAttributes": "[]",
            "userAttributes": json.dumps(attrs),
        }
        reply = json_reply(body, handled_by="fake+moto")
    else:
        reply.handled_by = "fake+moto"
        reply.headers = [(k, v) for k, v in reply.headers if k.lower() != "content-type"] + [("Content-Type", AMZ_JSON)]
    return mfa_gate(fake, client, reply)
