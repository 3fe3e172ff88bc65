"""The fake itself: its SRP verifier against an independent client, SECRET_HASH, the
timestamp rule, challenge handling, password learning, RevokeToken, faults and the log.

These tests need no authctl binary. The SRP client below is written from the client-side
equations (it shares no code with the fake_cognito package) and is pinned to the public test vector
from the issue; pycognito's AWSSRP, used against the real Cognito by many, is a second client.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import secrets
import socket
import time
from datetime import datetime, timezone
from typing import Any

import pytest

import fake_cognito
import harness
from harness import ALICE_PASSWORD, BOB_TEMP_PASSWORD, NEW_PASSWORD

# ---------------------------------------------------------------------------
# An independent SRP client (what amazon-cognito-identity-js / pycognito do)
# ---------------------------------------------------------------------------

_N = int(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F"
    "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
    "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510"
    "15728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7"
    "ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200C"
    "BBE117577A615D6C770988C0BAD946E208E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF",
    16,
)
_G = 2


def _pad(v: int | str) -> str:
    h = v if isinstance(v, str) else "%x" % v
    if len(h) % 2:
        return "0" + h
    return "00" + h if h[0] in "89abcdefABCDEF" else h


def _H(hexstr: str) -> int:
    return int(hashlib.sha256(bytes.fromhex(hexstr)).hexdigest(), 16)


def _hkdf16(ikm: bytes, salt: bytes) -> bytes:
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    return hmac.new(prk, b"Caldera Derived Key\x01", hashlib.sha256).digest()[:16]


class SrpClient:
    def __init__(self, pool_id: str, a: int | None = None):
        self.pool_name = pool_id.split("_", 1)[1]
        self.a = a if a is not None else secrets.randbits(1024)
        self.A = pow(_G, self.a, _N)
        self.k = _H(_pad(_N) + _pad(_G))

    def key(self, user_id: str, password: str, salt_hex: str, b_hex: str) -> bytes:
        B = int(b_hex, 16)
        u = _H(_pad(self.A) + _pad(B))
        inner = hashlib.sha256(f"{self.pool_name}{user_id}:{password}".encode()).hexdigest()
        x = _H(_pad(salt_hex) + inner)
        S = pow((B - self.k * pow(_G, x, _N)) % _N, self.a + u * x, _N)
        return _hkdf16(bytes.fromhex(_pad(S)), bytes.fromhex(_pad(u)))

    def signature(self, user_id: str, password: str, salt_hex: str, b_hex: str, secret_block: str, timestamp: str) -> str:
        key = self.key(user_id, password, salt_hex, b_hex)
        msg = self.pool_name.encode() + user_id.encode() + base64.b64decode(secret_block) + timestamp.encode()
        return base64.b64encode(hmac.new(key, msg, hashlib.sha256).digest()).decode()


def srp_timestamp(when: datetime | None = None) -> str:
    when = when or datetime.now(timezone.utc)
    days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    return f"{days[when.weekday()]} {months[when.month - 1]} {when.day} {when:%H:%M:%S} UTC {when.year}"


def shash(secret: str, username: str, client_id: str) -> str:
    return base64.b64encode(hmac.new(secret.encode(), (username + client_id).encode(), hashlib.sha256).digest()).decode()


# ---------------------------------------------------------------------------
# Raw calls to the fake
# ---------------------------------------------------------------------------


class Wire:
    def __init__(self, fake: harness.FakeServer):
        self.conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=30)

    def call(self, op: str, payload: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
        self.conn.request(
            "POST",
            "/",
            body=json.dumps(payload),
            headers={"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": f"AWSCognitoIdentityProviderService.{op}"},
        )
        r = self.conn.getresponse()
        data = r.read()
        headers = {k.lower(): v for k, v in r.getheaders()}
        try:
            body = json.loads(data)
        except ValueError:
            body = data
        return r.status, headers, body

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def wire(fake):
    w = Wire(fake)
    yield w
    w.close()


def srp_start(wire: Wire, pool: harness.Pool, username: str, client_id: str | None = None, secret: str | None = None,
              client: SrpClient | None = None):
    client_id = client_id or pool.client_id
    client = client or SrpClient(pool.pool_id)
    params = {"USERNAME": username, "SRP_A": "%x" % client.A}
    if secret:
        params["SECRET_HASH"] = shash(secret, username, client_id)
    status, headers, body = wire.call("InitiateAuth", {"AuthFlow": "USER_SRP_AUTH", "ClientId": client_id, "AuthParameters": params})
    return client, status, headers, body


def srp_answer(wire: Wire, pool: harness.Pool, client: SrpClient, challenge: dict[str, Any], password: str,
               client_id: str | None = None, secret: str | None = None, timestamp: str | None = None,
               send_session: bool = False, tamper: bool = False):
    client_id = client_id or pool.client_id
    p = challenge["ChallengeParameters"]
    ts = timestamp or srp_timestamp()
    sig = client.signature(p["USER_ID_FOR_SRP"], password, p["SALT"], p["SRP_B"], p["SECRET_BLOCK"], ts)
    if tamper:
        raw = bytearray(base64.b64decode(sig))
        raw[0] ^= 1
        sig = base64.b64encode(bytes(raw)).decode()
    responses = {
        "USERNAME": p["USER_ID_FOR_SRP"],
        "PASSWORD_CLAIM_SECRET_BLOCK": p["SECRET_BLOCK"],
        "PASSWORD_CLAIM_SIGNATURE": sig,
        "TIMESTAMP": ts,
    }
    if secret:
        responses["SECRET_HASH"] = shash(secret, p["USER_ID_FOR_SRP"], client_id)
    payload = {"ChallengeName": "PASSWORD_VERIFIER", "ClientId": client_id, "ChallengeResponses": responses}
    if send_session:
        payload["Session"] = challenge["Session"]
    return wire.call("RespondToAuthChallenge", payload)


def srp_login(wire, pool, username, password, **kw):
    client, status, _, body = srp_start(wire, pool, username, client_id=kw.get("client_id"), secret=kw.get("secret"))
    assert status == 200, body
    return srp_answer(wire, pool, client, body, password, **kw)


def assert_service_error(status: int, headers: dict[str, str], body: Any, error_type: str, message: str | None = None):
    assert status == 400, (status, body)
    assert headers["x-amzn-errortype"].split(":")[0] == error_type
    assert "json" in headers["content-type"]  # moto's own errors say application/json, Cognito's x-amz-json-1.1
    assert body["__type"] == error_type
    if message is not None:
        assert body["message"] == message


# ---------------------------------------------------------------------------
# The SRP mathematics
# ---------------------------------------------------------------------------


def test_client_matches_public_vector():
    """The issue's public vector pins this test client (and so what the fake accepts)."""
    c = SrpClient("eu-west-1_myPool", a=1234567890)
    key = c.key("test", "test", "499602d2", "499602d2")
    assert key.hex() == "d96cde6c95dda17175c1293140c5a81f"
    block = base64.b64encode(b"secretssecrestssecrets").decode()
    sig = c.signature("test", "test", "499602d2", "499602d2", block, "Tue Jul 10 11:01:00 UTC 2018")
    assert sig == "tdvQu/Li/qWl8Nni0aFPs+MwY4rvKZm0kSMrGIMSUHk="


def test_fake_helpers_match_public_vector():
    """The fake's own pieces (pad, k, x, u, HKDF, signature) give the same vector through the client equation."""
    f = fake_cognito
    a = 1234567890
    A, B = pow(f.G, a, f.N), int("499602d2", 16)
    u = f.compute_u(A, B)
    x = f.compute_x("myPool", "test", "test", "499602d2")
    S = pow((B - f.K * pow(f.G, x, f.N)) % f.N, a + u * x, f.N)
    key = f.hkdf_key(S, u)
    assert key.hex() == "d96cde6c95dda17175c1293140c5a81f"
    block = base64.b64encode(b"secretssecrestssecrets").decode()
    assert f.claim_signature(key, "myPool", "test", block, "Tue Jul 10 11:01:00 UTC 2018") == "tdvQu/Li/qWl8Nni0aFPs+MwY4rvKZm0kSMrGIMSUHk="



def test_protocol_names_are_members_of_the_service_model():
    """shared.py's challenge names, auth flows and first factors, which every module of the fake
    uses, are members of botocore's enums (ChallengeNameType, AuthFlowType, AuthFactorType,
    ExplicitAuthFlowsType), each constant named as its value."""
    import botocore.loaders

    from fake_cognito import shared

    shapes = botocore.loaders.Loader().load_service_model("cognito-idp", "service-2", "2016-04-18")["shapes"]

    def enum(shape: str) -> set[str]:
        return set(shapes[shape]["enum"])

    challenges, flows = set(shared.CHALLENGE_NAMES), set(shared.AUTH_FLOWS)
    assert challenges <= enum("ChallengeNameType"), challenges - enum("ChallengeNameType")
    assert flows <= enum("AuthFlowType"), flows - enum("AuthFlowType")
    assert set(shared.FIRST_FACTORS) <= enum("AuthFactorType")
    for name in challenges | flows:
        assert getattr(shared, name) == name
    # Every other group of names is made of those.
    for group in (shared.FACTORS, shared.MFA_CHALLENGES, shared.CODE_FIELD, shared.OTP_CODE_FIELD,
                  shared.FIRST_FACTOR_CHALLENGES, set(shared.SELECT_ANSWERS.values()),
                  set(shared.SELECT_ANSWERS) - {shared.EMAIL_MFA_ANSWER}):
        assert set(group) <= challenges, group
    assert set(shared.FIRST_FACTORS) <= challenges
    assert set(shared.PASSWORD_FLOWS + shared.REFRESH_FLOWS) <= flows
    explicit = enum("ExplicitAuthFlowsType")
    assert set(shared.DEFAULT_EXPLICIT_AUTH_FLOWS) | set(shared.LEGACY_EXPLICIT_AUTH_FLOWS.values()) <= explicit
    for flow in (shared.USER_SRP_AUTH, shared.USER_PASSWORD_AUTH, shared.REFRESH_TOKEN_AUTH, shared.USER_AUTH):
        assert f"ALLOW_{flow}" in explicit  # what FakeCognito.check_flow looks for


def test_chain_links_answer_pass_or_see_the_rest():
    """A link answers (a Reply), passes (None) to the next, or calls rest() to see the later
    links' answer; after the last link, moto. Observers are picked by operation, in order."""
    f = fake_cognito
    seen: list[str] = []

    class Upstream:
        def forward(self, req: Any) -> Any:
            seen.append("moto")
            return f.json_reply({"from": "moto"}, handled_by="moto")

    def passes(fake: Any, req: Any, rest: Any) -> Any:
        seen.append("passes")
        return None

    def around(fake: Any, req: Any, rest: Any) -> Any:
        seen.append("around")
        reply = rest()
        reply.note = "seen by around"
        return reply

    def answers(fake: Any, req: Any, rest: Any) -> Any:
        seen.append("answers")
        return f.json_reply({"from": "answers"})

    def observer(fake: Any, req: Any, reply: Any) -> None:
        pass

    req = f.Request("Op", {}, b"", [], "/")
    chain = f.Chain({"Op": [around, passes, answers], "Other": [passes]}, [(("Op",), observer)])
    reply = chain.answer(Upstream(), req)
    assert (reply.json(), reply.note, seen) == ({"from": "answers"}, "seen by around", ["around", "passes", "answers"])
    seen.clear()
    reply = chain.answer(Upstream(), f.Request("Other", {}, b"", [], "/"))
    assert (reply.json(), seen) == ({"from": "moto"}, ["passes", "moto"])
    seen.clear()
    assert chain.answer(Upstream(), f.Request("Unlisted", {}, b"", [], "/")).json() == {"from": "moto"}
    assert chain.observers_of("Op") == [observer] and chain.observers_of("Other") == []
    # The real chain: every link is a function of (fake, req, rest); every module's state is made once.
    for op, links in f.LINKS.items():
        for link in links:
            assert link.__code__.co_argcount == 3, (op, link)
    state = f.FakeCognito("http://127.0.0.1:9", None, f.CHAIN).state
    assert {name for name in vars(state)} == {"auth", "tokens", "mfa", "accounts", "devices", "attributes", "issuer", "quota", "passkeys",
                                            "sessions", "auth_events", "client_secrets"}

def test_server_and_client_agree_on_the_key():
    f = fake_cognito
    salt = "8f1e2d3c4b5a69788796a5b4c3d2e1f0"
    v = pow(f.G, f.compute_x("pool", "u", "pw", salt), f.N)
    for _ in range(5):
        b = secrets.randbits(1024)
        B = (f.K * v + pow(f.G, b, f.N)) % f.N
        c = SrpClient("r_pool")
        u = f.compute_u(c.A, B)
        S = pow(c.A * pow(v, u, f.N), b, f.N)
        assert f.hkdf_key(S, u) == c.key("u", "pw", salt, "%x" % B)
        assert f.hkdf_key(S, u) != c.key("u", "pw2", salt, "%x" % B)


@pytest.mark.parametrize(
    "ts,ok",
    [
        ("Tue Jul 10 11:01:00 UTC 2018", True),
        ("Tue Jul 3 11:01:00 UTC 2018", True),
        ("Tue Jul 03 11:01:00 UTC 2018", False),  # zero-padded day
        ("Tue Jul  3 11:01:00 UTC 2018", False),  # space-padded day
        ("Wed Jul 10 11:01:00 UTC 2018", False),  # wrong weekday
        ("Di. Juli 10 11:01:00 UTC 2018", False),  # localised names
        ("Tue Jul 10 11:01:00 GMT 2018", False),
        ("Tue Jul 10 1:01:00 UTC 2018", False),
        ("Tue Jul 10 11:01:00 PM UTC 2018", False),
        ("2018-07-10T11:01:00Z", False),
    ],
)
def test_timestamp_format(ts, ok):
    assert (fake_cognito.parse_srp_timestamp(ts) is not None) == ok


# ---------------------------------------------------------------------------
# SRP through the fake
# ---------------------------------------------------------------------------


def test_srp_right_password_gives_tokens(fake, pool, wire, cognito):
    client, status, _, ch = srp_start(wire, pool, "alice")
    assert status == 200, ch
    assert ch["ChallengeName"] == "PASSWORD_VERIFIER"
    p = ch["ChallengeParameters"]
    assert set(p) == {"SALT", "SRP_B", "SECRET_BLOCK", "USER_ID_FOR_SRP", "USERNAME"}
    assert p["USER_ID_FOR_SRP"] == p["USERNAME"] == "alice"
    assert len(base64.b64decode(p["SECRET_BLOCK"], validate=True)) >= 32
    int(p["SALT"], 16), int(p["SRP_B"], 16)
    status, headers, body = srp_answer(wire, pool, client, ch, ALICE_PASSWORD)
    assert status == 200, body
    result = body["AuthenticationResult"]
    assert {"AccessToken", "IdToken", "RefreshToken", "ExpiresIn", "TokenType"} <= set(result)
    me = cognito.get_user(AccessToken=result["AccessToken"])
    assert me["Username"] == "alice"


def test_srp_session_may_be_sent_back(pool, wire):
    client, _, _, ch = srp_start(wire, pool, "alice")
    status, _, body = srp_answer(wire, pool, client, ch, ALICE_PASSWORD, send_session=True)
    assert status == 200, body


def test_srp_wrong_password_is_refused(pool, wire):
    status, headers, body = srp_login(wire, pool, "alice", "Wrong-Passw0rd!")
    assert_service_error(status, headers, body, "NotAuthorizedException", "Incorrect username or password.")


def test_srp_tampered_signature_is_refused(pool, wire):
    client, _, _, ch = srp_start(wire, pool, "alice")
    status, headers, body = srp_answer(wire, pool, client, ch, ALICE_PASSWORD, tamper=True)
    assert_service_error(status, headers, body, "NotAuthorizedException", "Incorrect username or password.")


def test_srp_challenge_is_single_use(pool, wire):
    client, _, _, ch = srp_start(wire, pool, "alice")
    ts = srp_timestamp()
    assert srp_answer(wire, pool, client, ch, ALICE_PASSWORD, timestamp=ts)[0] == 200
    status, headers, body = srp_answer(wire, pool, client, ch, ALICE_PASSWORD, timestamp=ts)
    assert_service_error(status, headers, body, "NotAuthorizedException")


def test_srp_stale_or_malformed_timestamp_is_refused(pool, wire):
    old = datetime.fromtimestamp(time.time() - 600, timezone.utc)
    now = datetime.now(timezone.utc)
    # A zero-padded day ("Mon Nov 03", "Mon Nov 023"): malformed at any hour of any day.
    padded_day = f"{now:%a %b} 0{now.day} {now:%H:%M:%S} UTC {now:%Y}"
    for ts in (srp_timestamp(old), padded_day, now.isoformat()):
        client, _, _, ch = srp_start(wire, pool, "alice")
        status, headers, body = srp_answer(wire, pool, client, ch, ALICE_PASSWORD, timestamp=ts)
        assert_service_error(status, headers, body, "NotAuthorizedException")


def test_srp_unknown_user(pool, wire):
    _, status, headers, body = srp_start(wire, pool, "nobody")
    assert_service_error(status, headers, body, "UserNotFoundException", "User does not exist.")


def test_srp_bad_a_is_refused(pool, wire):
    for a in ("0", "%x" % fake_cognito.N):
        status, headers, body = wire.call(
            "InitiateAuth", {"AuthFlow": "USER_SRP_AUTH", "ClientId": pool.client_id, "AuthParameters": {"USERNAME": "alice", "SRP_A": a}}
        )
        assert_service_error(status, headers, body, "InvalidParameterException")


def test_secret_hash_is_checked(pool, wire):
    cid, secret = pool.secret_client_id, pool.client_secret
    client = SrpClient(pool.pool_id)
    params = {"USERNAME": "alice", "SRP_A": "%x" % client.A}
    status, headers, body = wire.call("InitiateAuth", {"AuthFlow": "USER_SRP_AUTH", "ClientId": cid, "AuthParameters": params})
    assert_service_error(status, headers, body, "NotAuthorizedException",
                         f"Client {cid} is configured with secret but SECRET_HASH was not received")
    params["SECRET_HASH"] = shash("not-the-secret", "alice", cid)
    status, headers, body = wire.call("InitiateAuth", {"AuthFlow": "USER_SRP_AUTH", "ClientId": cid, "AuthParameters": params})
    assert_service_error(status, headers, body, "NotAuthorizedException", f"Unable to verify secret hash for client {cid}")
    # Right on InitiateAuth, missing on the challenge answer: refused too.
    client, status, _, ch = srp_start(wire, pool, "alice", client_id=cid, secret=secret)
    assert status == 200, ch
    status, headers, body = srp_answer(wire, pool, client, ch, ALICE_PASSWORD, client_id=cid)
    assert_service_error(status, headers, body, "NotAuthorizedException")
    # Right everywhere: tokens.
    status, _, body = srp_login(wire, pool, "alice", ALICE_PASSWORD, client_id=cid, secret=secret)
    assert status == 200 and "AccessToken" in body["AuthenticationResult"], body


def test_user_password_auth_checks_secret_hash(pool, wire):
    cid = pool.secret_client_id
    base = {"AuthFlow": "USER_PASSWORD_AUTH", "ClientId": cid}
    status, headers, body = wire.call("InitiateAuth", {**base, "AuthParameters": {"USERNAME": "alice", "PASSWORD": ALICE_PASSWORD}})
    assert_service_error(status, headers, body, "NotAuthorizedException")
    params = {"USERNAME": "alice", "PASSWORD": ALICE_PASSWORD, "SECRET_HASH": shash(pool.client_secret, "alice", cid)}
    status, _, body = wire.call("InitiateAuth", {**base, "AuthParameters": params})
    assert status == 200 and body["AuthenticationResult"]["AccessToken"], body


def test_explicit_auth_flows_are_enforced(pool, wire, cognito):
    srp_only = cognito.create_user_pool_client(
        UserPoolId=pool.pool_id, ClientName="srp-only", ExplicitAuthFlows=["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"]
    )["UserPoolClient"]["ClientId"]
    status, headers, body = wire.call(
        "InitiateAuth",
        {"AuthFlow": "USER_PASSWORD_AUTH", "ClientId": srp_only, "AuthParameters": {"USERNAME": "alice", "PASSWORD": ALICE_PASSWORD}},
    )
    assert_service_error(status, headers, body, "InvalidParameterException", "USER_PASSWORD_AUTH flow not enabled for this client")
    status, _, body = srp_login(wire, pool, "alice", ALICE_PASSWORD, client_id=srp_only)
    assert status == 200, body


def test_client_not_created_through_the_fake_is_found(pool, wire, moto):
    direct = harness.cognito_client(moto.url)  # behind the fake's back
    cid = direct.create_user_pool_client(UserPoolId=pool.pool_id, ClientName="direct")["UserPoolClient"]["ClientId"]
    status, _, body = srp_login(wire, pool, "alice", ALICE_PASSWORD, client_id=cid)
    assert status == 200, body


def test_new_password_required_then_new_password_works(pool, wire):
    status, _, body = srp_login(wire, pool, "bob", BOB_TEMP_PASSWORD)
    assert status == 200, body
    assert body["ChallengeName"] == "NEW_PASSWORD_REQUIRED"
    assert body["ChallengeParameters"]["USER_ID_FOR_SRP"] == "bob"
    assert json.loads(body["ChallengeParameters"]["userAttributes"])["email"] == "bob@example.com"
    status, _, done = wire.call(
        "RespondToAuthChallenge",
        {"ChallengeName": "NEW_PASSWORD_REQUIRED", "ClientId": pool.client_id, "Session": body["Session"],
         "ChallengeResponses": {"USERNAME": "bob", "NEW_PASSWORD": NEW_PASSWORD}},
    )
    assert status == 200 and done["AuthenticationResult"]["AccessToken"], done
    assert srp_login(wire, pool, "bob", NEW_PASSWORD)[0] == 200
    assert srp_login(wire, pool, "bob", BOB_TEMP_PASSWORD)[0] == 400


def test_change_password_is_learned(pool, wire, cognito):
    status, _, body = srp_login(wire, pool, "alice", ALICE_PASSWORD)
    token = body["AuthenticationResult"]["AccessToken"]
    cognito.change_password(AccessToken=token, PreviousPassword=ALICE_PASSWORD, ProposedPassword=NEW_PASSWORD)
    assert srp_login(wire, pool, "alice", NEW_PASSWORD)[0] == 200
    assert srp_login(wire, pool, "alice", ALICE_PASSWORD)[0] == 400


def test_pycognito_srp_against_the_fake(pool, fake, monkeypatch):
    """A second, widely used client (pycognito's AWSSRP) signs in through the fake."""
    aws_srp = pytest.importorskip("pycognito.aws_srp")
    import botocore.exceptions

    client = harness.cognito_client(fake.url)
    for cid, secret in ((pool.client_id, None), (pool.secret_client_id, pool.client_secret)):
        srp = aws_srp.AWSSRP(username="alice", password=ALICE_PASSWORD, pool_id=pool.pool_id, client_id=cid,
                             client_secret=secret, client=client)
        tokens = srp.authenticate_user()
        assert tokens["AuthenticationResult"]["AccessToken"]
        bad = aws_srp.AWSSRP(username="alice", password="Wrong-Passw0rd!", pool_id=pool.pool_id, client_id=cid,
                             client_secret=secret, client=client)
        with pytest.raises(botocore.exceptions.ClientError) as e:
            bad.authenticate_user()
        assert e.value.response["Error"]["Code"] == "NotAuthorizedException"


# ---------------------------------------------------------------------------
# Log, keep-alive, RevokeToken, faults
# ---------------------------------------------------------------------------


def test_log_records_operations_without_secrets(fake, pool, wire):
    mark = fake.mark()
    srp_login(wire, pool, "alice", ALICE_PASSWORD)
    srp_login(wire, pool, "alice", "Wrong-Passw0rd!")
    calls = fake.calls(mark, client_ids=pool.client_ids)
    assert [(c["operation"], c.get("authFlow") or c.get("challengeName"), c["status"]) for c in calls] == [
        ("InitiateAuth", "USER_SRP_AUTH", 200),
        ("RespondToAuthChallenge", "PASSWORD_VERIFIER", 200),
        ("InitiateAuth", "USER_SRP_AUTH", 200),
        ("RespondToAuthChallenge", "PASSWORD_VERIFIER", 400),
    ]
    assert len({c["conn"] for c in calls}) == 1, "one keep-alive connection carried all four"
    text = fake.log_path.read_text()
    assert ALICE_PASSWORD not in text and "eyJ" not in text


def test_revoke_token(fake, pool, wire, cognito):
    _, _, one = srp_login(wire, pool, "alice", ALICE_PASSWORD)
    _, _, two = srp_login(wire, pool, "alice", ALICE_PASSWORD)
    one, two = one["AuthenticationResult"], two["AuthenticationResult"]
    status, _, body = wire.call("RevokeToken", {"Token": one["RefreshToken"], "ClientId": pool.client_id})
    assert status == 200, body
    refresh = {"AuthFlow": "REFRESH_TOKEN_AUTH", "ClientId": pool.client_id}
    status, headers, body = wire.call("InitiateAuth", {**refresh, "AuthParameters": {"REFRESH_TOKEN": one["RefreshToken"]}})
    assert_service_error(status, headers, body, "NotAuthorizedException", "Refresh Token has been revoked")
    status, headers, body = wire.call("GetUser", {"AccessToken": one["AccessToken"]})
    assert_service_error(status, headers, body, "NotAuthorizedException", "Access Token has been revoked")
    # The other session is untouched.
    assert wire.call("GetUser", {"AccessToken": two["AccessToken"]})[0] == 200
    assert wire.call("InitiateAuth", {**refresh, "AuthParameters": {"REFRESH_TOKEN": two["RefreshToken"]}})[0] == 200
    # A confidential client needs its secret.
    _, _, three = srp_login(wire, pool, "alice", ALICE_PASSWORD, client_id=pool.secret_client_id, secret=pool.client_secret)
    token = three["AuthenticationResult"]["RefreshToken"]
    status, headers, body = wire.call("RevokeToken", {"Token": token, "ClientId": pool.secret_client_id})
    assert_service_error(status, headers, body, "NotAuthorizedException")
    assert wire.call("RevokeToken", {"Token": token, "ClientId": pool.secret_client_id, "ClientSecret": pool.client_secret})[0] == 200


def test_revoke_token_upstream_is_moto_500(fake, pool, wire):
    fake.set_config(revokeToken="upstream")
    status, headers, body = wire.call("RevokeToken", {"Token": "x", "ClientId": pool.client_id})
    assert status == 500 and headers["content-type"].startswith("text/html")


def test_admin_global_sign_out_ends_tokens_in_moto(pool, wire, cognito):
    """Documents moto: AdminUserGlobalSignOut forgets the access tokens and revokes the refresh tokens."""
    _, _, body = srp_login(wire, pool, "alice", ALICE_PASSWORD)
    result = body["AuthenticationResult"]
    cognito.admin_user_global_sign_out(UserPoolId=pool.pool_id, Username="alice")
    status, headers, body = wire.call("GetUser", {"AccessToken": result["AccessToken"]})
    assert_service_error(status, headers, body, "NotAuthorizedException")
    status, headers, body = wire.call(
        "InitiateAuth", {"AuthFlow": "REFRESH_TOKEN_AUTH", "ClientId": pool.client_id, "AuthParameters": {"REFRESH_TOKEN": result["RefreshToken"]}}
    )
    assert_service_error(status, headers, body, "NotAuthorizedException", "Refresh Token has been revoked")


def _refresh(wire, client_id, token, secret=None, op="GetTokensFromRefreshToken"):
    if op == "GetTokensFromRefreshToken":
        payload = {"RefreshToken": token, "ClientId": client_id}
        if secret:
            payload["ClientSecret"] = secret
        return wire.call(op, payload)
    return wire.call("InitiateAuth", {"AuthFlow": "REFRESH_TOKEN_AUTH", "ClientId": client_id,
                                      "AuthParameters": {"REFRESH_TOKEN": token}})


def test_get_tokens_from_refresh_token_is_moto_500_by_default(pool, wire):
    _, _, body = srp_login(wire, pool, "alice", ALICE_PASSWORD)
    status, headers, _ = _refresh(wire, pool.client_id, body["AuthenticationResult"]["RefreshToken"])
    assert status == 500 and headers["content-type"].startswith("text/html")


def test_get_tokens_from_refresh_token_without_rotation(fake, pool, wire, cognito):
    fake.set_config(getTokensFromRefreshToken="fake")
    _, _, body = srp_login(wire, pool, "alice", ALICE_PASSWORD, client_id=pool.secret_client_id, secret=pool.client_secret)
    old = body["AuthenticationResult"]
    status, headers, body = _refresh(wire, pool.secret_client_id, old["RefreshToken"])
    assert_service_error(status, headers, body, "NotAuthorizedException")  # ClientSecret missing
    status, _, body = _refresh(wire, pool.secret_client_id, old["RefreshToken"], pool.client_secret)
    assert status == 200, body
    new = body["AuthenticationResult"]
    assert "RefreshToken" not in new and new["AccessToken"] != old["AccessToken"]
    assert cognito.get_user(AccessToken=new["AccessToken"])["Username"] == "alice"
    assert _refresh(wire, pool.secret_client_id, old["RefreshToken"], pool.client_secret)[0] == 200


@pytest.mark.parametrize("grace", [0, 30])
def test_get_tokens_from_refresh_token_with_rotation(fake, pool, wire, cognito, grace):
    fake.set_config(getTokensFromRefreshToken="fake")
    cid = cognito.create_user_pool_client(
        UserPoolId=pool.pool_id, ClientName="rotating",
        ExplicitAuthFlows=["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
        RefreshTokenRotation={"Feature": "ENABLED", "RetryGracePeriodSeconds": grace},
    )["UserPoolClient"]["ClientId"]
    _, _, body = srp_login(wire, pool, "alice", ALICE_PASSWORD, client_id=cid)
    first = body["AuthenticationResult"]["RefreshToken"]
    status, headers, body = _refresh(wire, cid, first, op="InitiateAuth")
    assert_service_error(status, headers, body, "NotAuthorizedException")  # the old flow is refused
    status, _, body = _refresh(wire, cid, first)
    assert status == 200, body
    second = body["AuthenticationResult"]["RefreshToken"]
    assert second != first
    assert cognito.get_user(AccessToken=body["AuthenticationResult"]["AccessToken"])["Username"] == "alice"
    status, headers, body = _refresh(wire, cid, first)  # reuse of the rotated-out token
    if grace:
        assert status == 200, body
    else:
        assert_service_error(status, headers, body, "RefreshTokenReuseException")
    status, _, body = _refresh(wire, cid, second)
    assert status == 200 and body["AuthenticationResult"]["RefreshToken"] not in (first, second), body


@pytest.mark.parametrize(
    "rule,expect_status,expect_type",
    [
        ({"kind": "status", "status": 503}, 503, "InternalErrorException"),
        ({"kind": "throttle"}, 400, "TooManyRequestsException"),
        ({"kind": "error", "errorType": "LimitExceededException", "message": "Attempt limit exceeded"}, 400, "LimitExceededException"),
    ],
)
def test_fault_service_errors(fake, pool, wire, rule, expect_status, expect_type):
    fake.add_fault(operation="GetUser", **rule)
    _, _, body = srp_login(wire, pool, "alice", ALICE_PASSWORD)  # other operations are untouched
    token = body["AuthenticationResult"]["AccessToken"]
    status, headers, body = wire.call("GetUser", {"AccessToken": token})
    assert status == expect_status and body["__type"] == expect_type
    assert headers["x-amzn-errortype"].startswith(expect_type)
    assert wire.call("GetUser", {"AccessToken": token})[0] == 200  # count=1 by default


def test_fault_html_and_huge(fake, wire):
    fake.add_fault(operation="*", kind="html", status=502)
    status, headers, body = wire.call("ListUserPools", {"MaxResults": 1})
    assert status == 502 and headers["content-type"] == "text/html" and body.startswith(b"<html>")
    fake.add_fault(operation="*", kind="huge", size=3 << 20)
    status, _, body = wire.call("ListUserPools", {"MaxResults": 1})
    assert status == 200 and len(body["pad"]) == 3 << 20


def test_fault_drop_and_truncate(fake):
    for kind in ("drop", "truncate"):
        fake.add_fault(operation="ListUserPools", kind=kind)
        w = Wire(fake)
        with pytest.raises((http.client.HTTPException, ConnectionError, socket.timeout)):
            w.call("ListUserPools", {"MaxResults": 1})
        w.close()
    w = Wire(fake)
    assert w.call("ListUserPools", {"MaxResults": 1})[0] == 200
    w.close()


def test_fault_stall(fake):
    fake.add_fault(operation="ListUserPools", kind="stall", seconds=1.5)
    w = Wire(fake)
    t = time.monotonic()
    assert w.call("ListUserPools", {"MaxResults": 1})[0] == 200
    assert time.monotonic() - t >= 1.4
    w.close()


def test_fault_after_the_operation_happened(fake, pool, wire, cognito):
    """when=after: moto performs the call, the client sees the failure."""
    _, _, body = srp_login(wire, pool, "alice", ALICE_PASSWORD)
    token = body["AuthenticationResult"]["AccessToken"]
    fake.add_fault(operation="GlobalSignOut", kind="status", status=500, when="after")
    assert wire.call("GlobalSignOut", {"AccessToken": token})[0] == 500
    assert wire.call("GetUser", {"AccessToken": token})[0] == 400  # it did sign out


def test_fault_rules_can_be_listed_counted_and_cleared(fake):
    fake.add_fault(operation="GetUser", kind="throttle", count=-1)
    listed = fake._admin("GET", "/_fake/faults")["faults"]
    assert listed and listed[0]["count"] == -1
    fake.clear_faults()
    assert fake._admin("GET", "/_fake/faults")["faults"] == []
    with pytest.raises(Exception):
        fake.add_fault(kind="nonsense")


@pytest.mark.model_violations
def test_a_request_that_does_not_fit_the_model_is_refused_and_logged(fake):
    """Every request is checked against botocore's model (the pinned version's): an
    unknown member, a too-short string and a value outside an enum are each named, the request is
    refused (HTTP 400) without reaching moto, and the log says so (the conftest fixture fails any
    other test that sends such a request)."""
    from fake_cognito import model_check

    service, origin = model_check.model()
    assert origin == f"botocore {model_check.MODEL_VERSION}", "the pinned model is missing: run install-deps.sh"
    assert "CreateUserPoolReplica" in service.operation_names and "GetProvisionedLimit" in service.operation_names
    conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=10)
    mark = fake.mark()
    conn.request("POST", "/", json.dumps({"ClientId": "", "AuthFlow": "NOPE", "Extra": 1}),
                 {"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "AWSCognitoIdentityProviderService.InitiateAuth"})
    reply = conn.getresponse()
    body = json.loads(reply.read())
    assert reply.status == 400 and body["__type"] == "InvalidParameterException", body
    [entry] = fake.calls(mark)
    problems = " | ".join(entry["modelViolation"])
    assert '"Extra"' in problems and "ClientId" in problems and "'NOPE' is not one of" in problems, problems
    assert entry["handledBy"] == "model"


def test_sessions_tracked_listed_and_revoked(fake, pool, wire):
    """Session tracking (sessions.py; moto has none): off by default, then a token session per
    sign-in, the caller's marked current, one revoked with its refresh and access tokens, the
    caller's own refused, the Admin forms, and RevokeToken ending its session."""
    _, _, one = srp_login(wire, pool, "alice", ALICE_PASSWORD)
    status, headers, body = wire.call("ListUserSessions", {"AccessToken": one["AuthenticationResult"]["AccessToken"]})
    assert_service_error(status, headers, body, "OperationNotEnabledException")
    fake.set_config(sessionTracking={pool.pool_id: True}, nextSessions=[{"deviceType": "phone", "city": "Oslo"}])
    one, two, three = (srp_login(wire, pool, "alice", ALICE_PASSWORD)[2]["AuthenticationResult"] for _ in range(3))
    status, _, body = wire.call("ListUserSessions", {"AccessToken": one["AccessToken"]})
    assert status == 200, body
    sessions = body["Sessions"]
    assert len(sessions) == 3 and [s["IsCurrentSession"] for s in sessions] == [True, False, False]
    assert sessions[0]["DeviceType"] == "phone" and sessions[0]["LastLocation"] == {"City": "Oslo"}
    assert all(s["SessionId"].startswith("tkn") and len(s["SessionId"]) == 28 for s in sessions)
    status, headers, body = wire.call("RevokeUserSession", {"AccessToken": one["AccessToken"],
                                                            "SessionId": sessions[0]["SessionId"]})
    assert_service_error(status, headers, body, "InvalidParameterException")
    assert wire.call("RevokeUserSession", {"AccessToken": one["AccessToken"], "SessionId": sessions[1]["SessionId"],
                                           "RevokeAssociatedSessions": "LINKED"})[0] == 200
    status, headers, body = wire.call("GetUser", {"AccessToken": two["AccessToken"]})
    assert_service_error(status, headers, body, "NotAuthorizedException", "Access Token has been revoked")
    refresh = {"AuthFlow": "REFRESH_TOKEN_AUTH", "ClientId": pool.client_id}
    status, headers, body = wire.call("InitiateAuth", {**refresh, "AuthParameters": {"REFRESH_TOKEN": two["RefreshToken"]}})
    assert_service_error(status, headers, body, "NotAuthorizedException", "Refresh Token has been revoked")
    assert wire.call("GetUser", {"AccessToken": three["AccessToken"]})[0] == 200
    status, headers, body = wire.call("RevokeUserSession", {"AccessToken": one["AccessToken"],
                                                            "SessionId": sessions[1]["SessionId"]})
    assert_service_error(status, headers, body, "ResourceNotFoundException")
    status, _, body = wire.call("AdminListUserSessions", {"UserPoolId": pool.pool_id, "Username": "alice"})
    assert status == 200 and len(body["Sessions"]) == 2 and not any(s["IsCurrentSession"] for s in body["Sessions"])
    assert wire.call("AdminRevokeUserSession", {"UserPoolId": pool.pool_id, "Username": "alice",
                                                "SessionId": sessions[2]["SessionId"]})[0] == 200
    assert wire.call("RevokeToken", {"Token": one["RefreshToken"], "ClientId": pool.client_id})[0] == 200
    status, _, body = wire.call("AdminListUserSessions", {"UserPoolId": pool.pool_id, "Username": "alice"})
    assert status == 200 and body["Sessions"] == []
    status, _, body = wire.call("GetUserPoolSessionConfiguration", {"UserPoolId": pool.pool_id})
    assert body["UserSessionTracking"] == "ENABLED"


def test_managed_login_sign_ins_have_an_sso_session_that_linked_revocation_ends(fake, pool, wire):
    """sessions.py: a sign-in marked as fake_managed_login.py's has an SSO session (one per user
    while it lasts), named by its token sessions; RevokeToken with LINKED ends both."""
    fake.set_config(sessionTracking={pool.pool_id: True})

    def managed_sign_in() -> dict[str, Any]:
        body = json.dumps({"UserPoolId": pool.pool_id, "ClientId": pool.client_id, "AuthFlow": "ADMIN_USER_PASSWORD_AUTH",
                           "AuthParameters": {"USERNAME": "alice", "PASSWORD": ALICE_PASSWORD}})
        wire.conn.request("POST", "/", body=body, headers={
            "Content-Type": "application/x-amz-json-1.1", "X-Fake-Managed-Login": "alice",
            "X-Amz-Target": "AWSCognitoIdentityProviderService.AdminInitiateAuth"})
        r = wire.conn.getresponse()
        answer = json.loads(r.read())
        assert r.status == 200, answer
        return answer["AuthenticationResult"]

    one, two = managed_sign_in(), managed_sign_in()
    status, _, body = wire.call("AdminListUserSessions", {"UserPoolId": pool.pool_id, "Username": "alice"})
    kinds = sorted(s["SessionType"] for s in body["Sessions"])
    assert status == 200 and kinds == ["SSO", "TOKEN", "TOKEN"], body
    sso = next(s["SessionId"] for s in body["Sessions"] if s["SessionType"] == "SSO")
    assert all(s.get("OriginSessionId") == sso for s in body["Sessions"] if s["SessionType"] == "TOKEN")
    assert wire.call("RevokeToken", {"Token": one["RefreshToken"], "ClientId": pool.client_id,
                                     "RevokeAssociatedSessions": "LINKED"})[0] == 200
    status, _, body = wire.call("AdminListUserSessions", {"UserPoolId": pool.pool_id, "Username": "alice"})
    assert [s["SessionType"] for s in body["Sessions"]] == ["TOKEN"], "the SSO session ended with the linked one"
    assert wire.call("GetUser", {"AccessToken": two["AccessToken"]})[0] == 200
