"""Sign-in challenges without a terminal: `--mfa-code`, `--mfa-type`,
`--mfa-setup-output json`, and `authctl mfa status|disable|setup` as a script meets them.

moto cannot play these challenges honestly (it checks TOTP codes against one fixed secret, and
only with MOTO_COGNITO_IDP_USER_POOL_ENABLE_TOTP=true; its MFA_SETUP answer hands out tokens for
any live session; SELECT_MFA_TYPE and EMAIL_OTP answer {}), so the fake in front of it plays them:
a per-user MFA state set through `POST /_fake/mfa`, checked here first against the service model's
shapes and the service's rules (see docs/testing.md). Everything below runs against the fake.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import time
import urllib.parse
from datetime import datetime, timezone
from typing import Any

import botocore.session
import pytest

import harness
from harness import ALICE_PASSWORD, BOB_TEMP_PASSWORD, NEW_PASSWORD, jwt_claims
from totp import fresh_totp, totp, wrong_code

TOTP, SMS, EMAIL = "SOFTWARE_TOKEN_MFA", "SMS_MFA", "EMAIL_OTP"
SIGNED_IN = re.compile(r"^Signed in as alice \(profile default\); access token valid until \S", re.M)
FIXED_CODE = "424242"  # the code the fake "texts" / "emails" when told to (a test phone)


# ---------------------------------------------------------------------------
# Helpers shared with test_mfa_terminal.py
# ---------------------------------------------------------------------------


def set_mfa(fake, pool, mode: str, username: str = "alice", **extra: Any) -> dict[str, Any]:
    """The user's MFA in the fake: off | totp | sms | email | select (offered=[...]) | setup."""
    return fake._admin("POST", "/_fake/mfa", {"pool": pool.pool_id, "username": username, "mode": mode, **extra})


def mfa_state(fake, pool, username: str = "alice") -> dict[str, Any]:
    q = urllib.parse.urlencode({"pool": pool.pool_id, "username": username})
    return fake._admin("GET", f"/_fake/mfa?{q}")


def last_code(fake, pool, username: str = "alice") -> dict[str, Any]:
    """The last SMS / email code the fake 'delivered': {"code","challengeName","destination","count",...}."""
    q = urllib.parse.urlencode({"pool": pool.pool_id, "username": username})
    return fake._admin("GET", f"/_fake/mfa/code?{q}")


def challenge_calls(fake, mark, cli) -> list[tuple]:
    """(operation, AuthFlow or ChallengeName, status, errorType) of the sign-in calls that reached the service."""
    ops = ("InitiateAuth", "RespondToAuthChallenge", "AssociateSoftwareToken", "VerifySoftwareToken")
    return [
        (c["operation"], c.get("authFlow") or c.get("challengeName"), c["status"], c.get("errorType"))
        for c in fake.calls(mark, client_ids=[cli.client_id])
        if c["operation"] in ops
    ]


def pending_items(keyring) -> list[dict[str, Any]]:
    """The sign-in waiting for `authctl signin --code` (an authenticator set-up, a code sent)."""
    return keyring.search(kind="pending-challenge")


pending_setup_items = pending_items


def pending(keyring) -> dict[str, Any] | None:
    items = pending_items(keyring)
    assert len(items) <= 1, items
    return json.loads(items[0]["secret"]) if items else None


def rewrite_pending(keyring, change) -> dict[str, Any]:
    """Change the pending item's JSON, keeping its label and attributes (as Keyring.rewrite_session)."""
    [item] = pending_items(keyring)
    value = json.loads(item["secret"])
    change(value)
    attrs = dict(item["attributes"])
    if item.get("schema"):
        attrs["xdg:schema"] = item["schema"]
    keyring.store(item["label"], attrs, json.dumps(value))
    assert pending(keyring) == value
    return value


def friendly_name() -> str:
    return f"authctl on {socket.gethostname()}"


@pytest.fixture(autouse=True)
def _mfa_defaults(fake):
    """Tests may shorten challenge sessions; put the defaults back (conftest resets only its own keys)."""
    yield
    fake.set_config(mfaSessionLifetime=180.0, mfaMaxAttempts=3)


# ---------------------------------------------------------------------------
# The fake plays the service: shapes from botocore's model, rules from the documentation
# ---------------------------------------------------------------------------

MODEL = botocore.session.get_session().get_service_model("cognito-idp")


def check_shape(shape, value: Any, path: str = "$") -> None:
    t = shape.type_name
    if t == "structure":
        assert isinstance(value, dict), f"{path}: {value!r} is not an object ({shape.name})"
        for key, item in value.items():
            assert key in shape.members, f"{path}.{key} is not a member of {shape.name}: {sorted(shape.members)}"
            check_shape(shape.members[key], item, f"{path}.{key}")
        for key in shape.required_members:
            assert key in value, f"{path}: required {key} missing from {shape.name}"
    elif t == "map":
        assert isinstance(value, dict), f"{path}: not a map"
        for key, item in value.items():
            check_shape(shape.key, key, f"{path}[key]")
            check_shape(shape.value, item, f"{path}[{key}]")
    elif t == "list":
        assert isinstance(value, list), f"{path}: not a list"
        for i, item in enumerate(value):
            check_shape(shape.member, item, f"{path}[{i}]")
    elif t == "string":
        assert isinstance(value, str), f"{path}: {value!r} is not a string"
        if shape.enum:
            assert value in shape.enum, f"{path}: {value!r} not in {shape.name} {shape.enum}"
        if "min" in shape.metadata:
            assert len(value) >= shape.metadata["min"], f"{path}: shorter than {shape.metadata['min']}"
        if "max" in shape.metadata:
            assert len(value) <= shape.metadata["max"], f"{path}: longer than {shape.metadata['max']}"
    elif t in ("integer", "long"):
        assert isinstance(value, int), f"{path}: not an integer"
    elif t == "boolean":
        assert isinstance(value, bool), f"{path}: not a boolean"


class Raw:
    """Unparsed calls to the fake, to compare its JSON with the service model (boto3 would drop
    unknown members silently)."""

    def __init__(self, fake):
        self.fake = fake

    def __call__(self, op: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        conn = http.client.HTTPConnection("127.0.0.1", self.fake.port, timeout=20)
        try:
            conn.request("POST", "/", body=json.dumps(payload), headers={
                "Content-Type": "application/x-amz-json-1.1",
                "X-Amz-Target": f"AWSCognitoIdentityProviderService.{op}",
            })
            resp = conn.getresponse()
            status, body = resp.status, json.loads(resp.read() or b"{}")
        finally:
            conn.close()
        if status == 200:
            check_shape(MODEL.operation_model(op).output_shape, body)
        else:
            assert set(body) == {"__type", "message"}, body
            errors = [e.name for e in MODEL.operation_model(op).error_shapes]
            assert body["__type"] in errors, f"{op} cannot fail with {body['__type']} (model: {errors})"
        return status, body

    def start(self, pool, username: str = "alice", password: str = ALICE_PASSWORD, client_id: str | None = None,
              secret: str | None = None) -> tuple[int, dict[str, Any]]:
        params = {"USERNAME": username, "PASSWORD": password}
        if secret:
            params["SECRET_HASH"] = harness_secret_hash(secret, username, client_id or pool.client_id)
        return self("InitiateAuth", {"AuthFlow": "USER_PASSWORD_AUTH", "ClientId": client_id or pool.client_id,
                                     "AuthParameters": params})

    def answer(self, pool, name: str, session: str, responses: dict[str, str],
               client_id: str | None = None) -> tuple[int, dict[str, Any]]:
        return self("RespondToAuthChallenge", {"ClientId": client_id or pool.client_id, "ChallengeName": name,
                                               "Session": session, "ChallengeResponses": responses})


def harness_secret_hash(secret: str, username: str, client_id: str) -> str:
    import base64
    import hashlib
    import hmac

    return base64.b64encode(hmac.new(secret.encode(), (username + client_id).encode(), hashlib.sha256).digest()).decode()


@pytest.fixture
def raw(fake) -> Raw:
    return Raw(fake)


def test_fake_challenges_have_the_service_shapes(fake, pool, raw):
    """Each challenge as InitiateAuthResponse / RespondToAuthChallengeResponse, with the
    parameters the service sends; a right answer gives moto's tokens."""
    state = set_mfa(fake, pool, "totp")
    status, body = raw.start(pool)
    assert status == 200 and body["ChallengeName"] == TOTP, body
    assert body["ChallengeParameters"] == {"USER_ID_FOR_SRP": "alice"}
    assert len(body["Session"]) >= 20
    status, done = raw.answer(pool, TOTP, body["Session"], {"USERNAME": "alice", "SOFTWARE_TOKEN_MFA_CODE": totp(state["secret"])})
    assert status == 200 and set(done["AuthenticationResult"]) >= {"AccessToken", "IdToken", "RefreshToken"}, done
    assert jwt_claims(done["AuthenticationResult"]["AccessToken"])["username"] == "alice"

    set_mfa(fake, pool, "sms")
    status, body = raw.start(pool)
    assert body["ChallengeName"] == SMS
    assert body["ChallengeParameters"] == {"USER_ID_FOR_SRP": "alice", "CODE_DELIVERY_DELIVERY_MEDIUM": "SMS",
                                           "CODE_DELIVERY_DESTINATION": "+*******1234"}
    sent = last_code(fake, pool)
    assert sent["to"] == "+15555551234" and re.fullmatch(r"[0-9]{6}", sent["code"]) and sent["count"] == 1
    status, done = raw.answer(pool, SMS, body["Session"], {"USERNAME": "alice", "SMS_MFA_CODE": sent["code"]})
    assert "AuthenticationResult" in done

    set_mfa(fake, pool, "email")
    status, body = raw.start(pool)
    assert body["ChallengeName"] == EMAIL
    assert body["ChallengeParameters"] == {"USER_ID_FOR_SRP": "alice", "CODE_DELIVERY_DELIVERY_MEDIUM": "EMAIL",
                                           "CODE_DELIVERY_DESTINATION": "a***@e***"}
    status, done = raw.answer(pool, EMAIL, body["Session"], {"USERNAME": "alice", "EMAIL_OTP_CODE": last_code(fake, pool)["code"]})
    assert "AuthenticationResult" in done

    set_mfa(fake, pool, "select", offered=[SMS, TOTP, EMAIL])
    status, body = raw.start(pool)
    assert body["ChallengeName"] == "SELECT_MFA_TYPE"
    assert json.loads(body["ChallengeParameters"]["MFAS_CAN_CHOOSE"]) == [SMS, TOTP, EMAIL]
    status, chosen = raw.answer(pool, "SELECT_MFA_TYPE", body["Session"], {"USERNAME": "alice", "ANSWER": EMAIL})
    assert chosen["ChallengeName"] == EMAIL and chosen["Session"] != body["Session"]
    assert chosen["ChallengeParameters"]["CODE_DELIVERY_DESTINATION"] == "a***@e***"
    # The SELECT session is used up by the choice.
    status, err = raw.answer(pool, "SELECT_MFA_TYPE", body["Session"], {"USERNAME": "alice", "ANSWER": SMS})
    assert (status, err["__type"]) == (400, "NotAuthorizedException")

    set_mfa(fake, pool, "setup")
    status, body = raw.start(pool)
    assert body["ChallengeName"] == "MFA_SETUP"
    assert json.loads(body["ChallengeParameters"]["MFAS_CAN_SETUP"]) == [TOTP]
    status, assoc = raw("AssociateSoftwareToken", {"Session": body["Session"]})
    assert re.fullmatch(r"[A-Z2-7]{52}", assoc["SecretCode"]) and assoc["Session"] != body["Session"]
    status, err = raw("VerifySoftwareToken", {"Session": assoc["Session"], "UserCode": wrong_code(assoc["SecretCode"])})
    assert (status, err) == (400, {"__type": "EnableSoftwareTokenMFAException", "message": "Code mismatch"})
    status, ok = raw("VerifySoftwareToken", {"Session": assoc["Session"], "UserCode": totp(assoc["SecretCode"]),
                                             "FriendlyDeviceName": "test"})
    assert ok["Status"] == "SUCCESS" and ok["Session"] not in (body["Session"], assoc["Session"])
    status, done = raw.answer(pool, "MFA_SETUP", ok["Session"], {"USERNAME": "alice"})
    assert "AuthenticationResult" in done
    access = done["AuthenticationResult"]["AccessToken"]
    status, user = raw("GetUser", {"AccessToken": access})
    assert user["UserMFASettingList"] == [TOTP] and user["PreferredMfaSetting"] == TOTP
    # Set up: the next sign-in asks for the app's code.
    status, body = raw.start(pool)
    assert body["ChallengeName"] == TOTP
    assert mfa_state(fake, pool)["secret"] == assoc["SecretCode"]


def test_fake_wrong_codes_keep_the_session_then_end_it(fake, pool, raw):
    state = set_mfa(fake, pool, "totp")
    _, body = raw.start(pool)
    bad = {"USERNAME": "alice", "SOFTWARE_TOKEN_MFA_CODE": wrong_code(state["secret"])}
    status, err = raw.answer(pool, TOTP, body["Session"], bad)
    assert (status, err) == (400, {"__type": "CodeMismatchException", "message": "Invalid code received for user"})
    status, done = raw.answer(pool, TOTP, body["Session"], {"USERNAME": "alice", "SOFTWARE_TOKEN_MFA_CODE": totp(state["secret"])})
    assert status == 200 and "AuthenticationResult" in done, "the session outlives a wrong code"
    # Used up by the right answer.
    status, err = raw.answer(pool, TOTP, body["Session"], {"USERNAME": "alice", "SOFTWARE_TOKEN_MFA_CODE": totp(state["secret"])})
    assert (status, err["__type"]) == (400, "NotAuthorizedException")
    # Three wrong codes end it.
    _, body = raw.start(pool)
    for _ in range(3):
        assert raw.answer(pool, TOTP, body["Session"], bad)[1]["__type"] == "CodeMismatchException"
    status, err = raw.answer(pool, TOTP, body["Session"], {"USERNAME": "alice", "SOFTWARE_TOKEN_MFA_CODE": totp(state["secret"])})
    assert err == {"__type": "NotAuthorizedException", "message": "Invalid session for the user."}


def test_fake_session_expires(fake, pool, raw):
    state = set_mfa(fake, pool, "totp")
    fake.set_config(mfaSessionLifetime=0.5)
    _, body = raw.start(pool)
    time.sleep(0.7)
    status, err = raw.answer(pool, TOTP, body["Session"], {"USERNAME": "alice", "SOFTWARE_TOKEN_MFA_CODE": totp(state["secret"])})
    assert err == {"__type": "NotAuthorizedException", "message": "Invalid session for the user, session is expired."}


def test_fake_checks_secret_hash_and_username_on_mfa_answers(fake, pool, raw):
    state = set_mfa(fake, pool, "totp")
    cid, secret = pool.secret_client_id, pool.client_secret
    _, body = raw.start(pool, client_id=cid, secret=secret)
    assert body["ChallengeName"] == TOTP
    code = {"SOFTWARE_TOKEN_MFA_CODE": totp(state["secret"])}
    status, err = raw.answer(pool, TOTP, body["Session"], {"USERNAME": "alice", **code}, client_id=cid)
    assert err["__type"] == "NotAuthorizedException" and "SECRET_HASH was not received" in err["message"]
    status, err = raw.answer(pool, TOTP, body["Session"], {"USERNAME": "alice", "SECRET_HASH": "AAAA", **code}, client_id=cid)
    assert err["message"] == f"Unable to verify secret hash for client {cid}"
    # Another client's session, and another user's name, are refused.
    status, err = raw.answer(pool, TOTP, body["Session"], {"USERNAME": "alice", **code})
    assert err["__type"] == "NotAuthorizedException"
    status, err = raw.answer(pool, TOTP, body["Session"], {"USERNAME": "bob", "SECRET_HASH": harness_secret_hash(secret, "bob", cid), **code},
                             client_id=cid)
    assert err["__type"] == "NotAuthorizedException"
    status, done = raw.answer(pool, TOTP, body["Session"],
                              {"USERNAME": "alice", "SECRET_HASH": harness_secret_hash(secret, "alice", cid), **code}, client_id=cid)
    assert status == 200 and "AuthenticationResult" in done


def test_fake_enrols_with_an_access_token(fake, pool, raw, cognito):
    """Not moto's fixed secret: a new one per association, checked; SetUserMFAPreference and
    GetUser agree with the sign-in that follows."""
    tokens = cognito.initiate_auth(AuthFlow="USER_PASSWORD_AUTH", ClientId=pool.client_id,
                                   AuthParameters={"USERNAME": "alice", "PASSWORD": ALICE_PASSWORD})["AuthenticationResult"]
    access = tokens["AccessToken"]
    status, err = raw("SetUserMFAPreference", {"AccessToken": access, "SoftwareTokenMfaSettings": {"Enabled": True, "PreferredMfa": True}})
    assert err["__type"] == "InvalidParameterException", "no verified authenticator yet"
    _, first = raw("AssociateSoftwareToken", {"AccessToken": access})
    _, second = raw("AssociateSoftwareToken", {"AccessToken": access})
    assert first["SecretCode"] != second["SecretCode"] and "Session" not in second
    status, err = raw("VerifySoftwareToken", {"AccessToken": access, "UserCode": totp(first["SecretCode"])})
    assert err["__type"] == "EnableSoftwareTokenMFAException", "the newest association counts"
    status, ok = raw("VerifySoftwareToken", {"AccessToken": access, "UserCode": totp(second["SecretCode"]), "FriendlyDeviceName": "x"})
    assert ok == {"Status": "SUCCESS"}
    _, user = raw("GetUser", {"AccessToken": access})
    assert "UserMFASettingList" not in user, "verified is not enabled"
    _, body = raw.start(pool)
    assert "AuthenticationResult" in body
    assert raw("SetUserMFAPreference", {"AccessToken": access, "SoftwareTokenMfaSettings": {"Enabled": True, "PreferredMfa": True}}) == (200, {})
    _, user = raw("GetUser", {"AccessToken": access})
    assert (user["UserMFASettingList"], user["PreferredMfaSetting"]) == ([TOTP], TOTP)
    admin = cognito.admin_get_user(UserPoolId=pool.pool_id, Username="alice")
    assert (admin["UserMFASettingList"], admin["PreferredMfaSetting"]) == ([TOTP], TOTP)
    _, body = raw.start(pool)
    assert body["ChallengeName"] == TOTP
    # A signed-out user's token is refused (moto's GetUser decides).
    cognito.admin_user_global_sign_out(UserPoolId=pool.pool_id, Username="alice")
    status, err = raw("AssociateSoftwareToken", {"AccessToken": access})
    assert err["__type"] == "NotAuthorizedException"


# ---------------------------------------------------------------------------
# authctl signin: SOFTWARE_TOKEN_MFA
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("flow", ["srp", "password"])
def test_authenticator_code(any_cli, fake, flow):
    state = set_mfa(fake, any_cli.pool, "totp")
    mark = fake.mark()
    r = any_cli.signin("alice", None, "--flow", flow, "--mfa-code", fresh_totp(state["secret"]))
    assert r.code == 0, r
    assert SIGNED_IN.search(r.err), r
    session = any_cli.keyring.session()
    assert session and session["username"] == "alice" and session["clientId"] == any_cli.client_id
    first = ("InitiateAuth", "USER_SRP_AUTH", 200, None) if flow == "srp" else ("InitiateAuth", "USER_PASSWORD_AUTH", 200, None)
    expected = [first] + ([("RespondToAuthChallenge", "PASSWORD_VERIFIER", 200, None)] if flow == "srp" else [])
    expected.append(("RespondToAuthChallenge", TOTP, 200, None))
    assert challenge_calls(fake, mark, any_cli) == expected
    assert any_cli.run("whoami").code == 0


def test_authenticator_code_with_spaces_and_dash(cli, fake):
    state = set_mfa(fake, cli.pool, "totp")
    code = fresh_totp(state["secret"])
    r = cli.signin("alice", None, "--mfa-code", f"{code[:3]} {code[3:]}")
    assert r.code == 0, r
    r = cli.signin("alice", None, "--mfa-code", "12ab56")
    assert r.code == 65 and "digits" in r.err, r


def test_authenticator_code_needed_without_a_terminal(cli, fake):
    set_mfa(fake, cli.pool, "totp")
    mark = fake.mark()
    r = cli.signin()
    assert r.code == 64, r
    assert "--code CODE" in r.err and "SOFTWARE_TOKEN_MFA" in r.err, r
    assert cli.keyring.session_items() == []
    assert [c for c in challenge_calls(fake, mark, cli) if c[1] == TOTP] == [], "nothing sent without a code"


def test_wrong_code_without_a_terminal(any_cli, fake):
    state = set_mfa(fake, any_cli.pool, "totp")
    mark = fake.mark()
    r = any_cli.signin("alice", None, "--mfa-code", wrong_code(state["secret"]))
    assert r.code == 77, r
    assert "The code did not match" in r.err, r
    assert "Incorrect username or password" not in r.err
    assert any_cli.keyring.session_items() == []
    answers = [c for c in challenge_calls(fake, mark, any_cli) if c[1] == TOTP]
    assert answers == [("RespondToAuthChallenge", TOTP, 400, "CodeMismatchException")], "one try only, no retry loop"


def test_expired_challenge(cli, fake):
    """A challenge session past its 3 minutes (here: 0 s) -> exit 77, start again."""
    state = set_mfa(fake, cli.pool, "totp")
    fake.set_config(mfaSessionLifetime=0)
    mark = fake.mark()
    r = cli.signin("alice", None, "--mfa-code", fresh_totp(state["secret"]))
    assert r.code == 77, r
    assert "start again" in r.err and "authctl signin" in r.err, r
    assert "Incorrect username or password" not in r.err
    assert cli.keyring.session_items() == []
    answers = [c for c in challenge_calls(fake, mark, cli) if c[1] == TOTP]
    assert answers == [("RespondToAuthChallenge", TOTP, 400, "NotAuthorizedException")]


def test_expired_code(cli, fake):
    """ExpiredCodeException (the service's word for a code that came too late) -> 77, start again."""
    state = set_mfa(fake, cli.pool, "totp")
    fake.add_fault(operation="RespondToAuthChallenge", challengeName=TOTP, kind="error",
                   errorType="ExpiredCodeException", message="Invalid code provided, please request a code again.")
    r = cli.signin("alice", None, "--mfa-code", fresh_totp(state["secret"]))
    assert r.code == 77, r
    assert "start again" in r.err, r
    assert cli.keyring.session_items() == []


@pytest.mark.parametrize("flow", ["srp", "password"])
def test_challenge_answered_as_the_services_username(cognito, fake, keyring, flow):
    """Signing in with an alias (the email, in a pool whose usernames are generated): the MFA
    challenge names the real user in USER_ID_FOR_SRP, and the answer must carry that USERNAME and a
    SECRET_HASH computed over it (the fake refuses anything else)."""
    pool_id = cognito.create_user_pool(PoolName="authctl-alias", UsernameAttributes=["email"])["UserPool"]["Id"]
    flows = ["ALLOW_USER_SRP_AUTH", "ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"]
    client = cognito.create_user_pool_client(UserPoolId=pool_id, ClientName="authctl-confidential",
                                             ExplicitAuthFlows=flows, GenerateSecret=True)["UserPoolClient"]
    created = cognito.admin_create_user(UserPoolId=pool_id, Username="carol@example.com", MessageAction="SUPPRESS",
                                        TemporaryPassword=BOB_TEMP_PASSWORD,
                                        UserAttributes=[{"Name": "email", "Value": "carol@example.com"}])
    real = created["User"]["Username"]
    assert real != "carol@example.com"
    cognito.admin_set_user_password(UserPoolId=pool_id, Username=real, Password=ALICE_PASSWORD, Permanent=True)
    pool = harness.Pool(pool_id, client["ClientId"], client["ClientId"], client["ClientSecret"],
                        users={"carol@example.com": ALICE_PASSWORD})
    cli = harness.Cli(pool, keyring, fake.endpoint, secret_client=True)
    state = set_mfa(fake, pool, "totp", username="carol@example.com")
    assert state["username"] == real
    mark = fake.mark()
    r = cli.signin("carol@example.com", None, "--flow", flow, "--mfa-code", fresh_totp(state["secret"]))
    assert r.code == 0, r
    assert challenge_calls(fake, mark, cli)[-1] == ("RespondToAuthChallenge", TOTP, 200, None)
    assert cli.keyring.session()["username"] == real


def test_new_password_then_authenticator_code(any_cli, fake):
    """NEW_PASSWORD_REQUIRED comes first, then the second factor, as the service orders them."""
    state = set_mfa(fake, any_cli.pool, "totp", username="bob")
    mark = fake.mark()
    r = any_cli.run("signin", "--username", "bob", "--password-stdin", "--mfa-code", fresh_totp(state["secret"]),
                    input=f"{BOB_TEMP_PASSWORD}\n{NEW_PASSWORD}\n")
    assert r.code == 0, r
    assert [c[1] for c in challenge_calls(fake, mark, any_cli)] == ["USER_SRP_AUTH", "PASSWORD_VERIFIER", "NEW_PASSWORD_REQUIRED", TOTP]
    assert any_cli.keyring.session()["username"] == "bob"


# ---------------------------------------------------------------------------
# SMS_MFA and EMAIL_OTP
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode,destination", [("sms", "+*******1234"), ("email", "a***@e***")])
def test_code_by_text_or_email(any_cli, fake, mode, destination):
    # Without a terminal the code must be known before authctl starts, so the fake texts a fixed
    # one (as a test phone number would); test_mfa_terminal reads a random one from the fake instead.
    set_mfa(fake, any_cli.pool, mode, code=FIXED_CODE)
    name = SMS if mode == "sms" else EMAIL
    mark = fake.mark()
    r = any_cli.signin("alice", None, "--mfa-code", FIXED_CODE)
    assert r.code == 0, r
    assert f"Code sent to {destination}" in r.err, r
    assert r.err.index("Code sent to") < r.err.index("Signed in as"), r
    assert challenge_calls(fake, mark, any_cli)[-1] == ("RespondToAuthChallenge", name, 200, None)
    assert last_code(fake, any_cli.pool)["count"] == 1
    assert any_cli.keyring.session()["username"] == "alice"


@pytest.mark.parametrize("mode", ["sms", "email"])
def test_wrong_text_or_email_code(cli, fake, mode):
    set_mfa(fake, cli.pool, mode, code=FIXED_CODE)
    r = cli.signin("alice", None, "--mfa-code", "111111")
    assert r.code == 77 and "The code did not match" in r.err, r
    assert cli.keyring.session_items() == []


# ---------------------------------------------------------------------------
# SELECT_MFA_TYPE
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("choice", ["totp", "sms", "email"])
def test_choose_factor_with_mfa_type(any_cli, fake, choice):
    state = set_mfa(fake, any_cli.pool, "select", offered=[SMS, TOTP, EMAIL], code=FIXED_CODE)
    code = fresh_totp(state["secret"]) if choice == "totp" else FIXED_CODE
    name = {"totp": TOTP, "sms": SMS, "email": EMAIL}[choice]
    mark = fake.mark()
    r = any_cli.signin("alice", None, "--mfa-type", choice, "--mfa-code", code)
    assert r.code == 0, r
    calls = challenge_calls(fake, mark, any_cli)
    assert [c[1] for c in calls[-2:]] == ["SELECT_MFA_TYPE", name] and all(c[2] == 200 for c in calls), calls
    assert any_cli.keyring.session() is not None


def test_choose_factor_without_type_or_terminal(cli, fake):
    set_mfa(fake, cli.pool, "select", offered=[SMS, TOTP])
    mark = fake.mark()
    r = cli.signin()
    assert r.code == 64, r
    assert "--mfa-type" in r.err and "sms" in r.err and "totp" in r.err and "email" not in r.err, r
    assert cli.keyring.session_items() == []
    assert [c for c in challenge_calls(fake, mark, cli) if c[1] == "SELECT_MFA_TYPE"] == []


def test_choose_factor_not_offered(cli, fake):
    set_mfa(fake, cli.pool, "select", offered=[SMS, TOTP])
    r = cli.signin("alice", None, "--mfa-type", "email", "--mfa-code", FIXED_CODE)
    assert r.code == 65, r
    assert "not offered" in r.err and "sms" in r.err and "totp" in r.err, r


def test_mfa_type_is_checked(cli):
    r = cli.signin("alice", None, "--mfa-type", "carrier-pigeon")
    assert r.code == 64, r


# ---------------------------------------------------------------------------
# MFA_SETUP, in two steps for a script
# ---------------------------------------------------------------------------

HANDOUT_KEYS = {"expiresAt", "next", "otpauthUri", "secretCode", "username"}


def start_setup(cli, fake):
    set_mfa(fake, cli.pool, "setup")
    r = cli.signin("alice", None, "--mfa-setup-output", "json")
    assert r.code == 0, r
    out = r.json()
    return r, out


def test_setup_needs_a_terminal_or_json(cli, fake):
    set_mfa(fake, cli.pool, "setup")
    mark = fake.mark()
    r = cli.signin()
    assert r.code == 64, r
    assert "--mfa-setup-output json" in r.err, r
    assert [c for c in challenge_calls(fake, mark, cli) if c[0] == "AssociateSoftwareToken"] == []
    assert cli.keyring.session_items() == [] and pending_setup_items(cli.keyring) == []


def test_setup_in_two_steps(any_cli, fake):
    cli, pool = any_cli, any_cli.pool
    mark = fake.mark()
    r, out = start_setup(cli, fake)
    assert set(out) == HANDOUT_KEYS, out
    secret = out["secretCode"]
    assert re.fullmatch(r"[A-Z2-7]{16,}", secret), secret
    assert out["username"] == "alice"
    assert out["otpauthUri"] == f"otpauth://totp/{pool.pool_id}:alice?secret={secret}&issuer={pool.pool_id}"
    assert "authctl signin --code" in out["next"]
    expires = harness.parse_instant(out["expiresAt"])
    left = (expires - datetime.now(timezone.utc)).total_seconds()
    assert 150 < left <= 181, out["expiresAt"]
    # Not signed in yet: the challenge session waits in the Secret Service, not in a file.
    assert cli.keyring.session_items() == []
    items = pending_setup_items(cli.keyring)
    assert len(items) == 1 and items[0]["attributes"]["profile"] == "default", items
    # The challenge session (a credential for 3 minutes) is in no plain file, nor in the output.
    session_string = pending(cli.keyring)["session"]
    assert len(session_string) >= 20
    assert session_string not in r.out + r.err
    # Every file under HOME, the keyring's own (encrypted) file included, so the check is never vacuous.
    files = cli.keyring.files(skip_keyrings=False)
    assert any(f.suffix == ".keyring" for f in files), files
    for f in files:
        assert session_string not in f.read_text(errors="replace"), f
    assert mfa_state(fake, pool)["enabled"] == []
    assert challenge_calls(fake, mark, cli)[-2:] == [("RespondToAuthChallenge", "PASSWORD_VERIFIER", 200, None),
                                                     ("AssociateSoftwareToken", None, 200, None)]

    # Step two: the first code from the secret the script was given. No password needed.
    mark = fake.mark()
    r = cli.run("signin", "--mfa-code", fresh_totp(secret))
    assert r.code == 0, r
    assert SIGNED_IN.search(r.err), r
    assert [c[:3] for c in challenge_calls(fake, mark, cli)] == [("VerifySoftwareToken", None, 200),
                                                                 ("RespondToAuthChallenge", "MFA_SETUP", 200)]
    session = cli.keyring.session()
    assert session["username"] == "alice" and session["clientId"] == cli.client_id
    assert pending_setup_items(cli.keyring) == []
    state = mfa_state(fake, pool)
    assert (state["enabled"], state["preferred"], state["secret"]) == ([TOTP], TOTP, secret)
    assert state["friendlyDeviceName"] == friendly_name()

    # The next sign-in asks for the authenticator's code.
    r = cli.signin()
    assert r.code == 64 and "SOFTWARE_TOKEN_MFA" in r.err, r
    mark = fake.mark()
    r = cli.signin("alice", None, "--mfa-code", fresh_totp(secret))
    assert r.code == 0, r
    assert challenge_calls(fake, mark, cli)[-1] == ("RespondToAuthChallenge", TOTP, 200, None)


def test_setup_second_step_wrong_code(cli, fake):
    _, out = start_setup(cli, fake)
    r = cli.run("signin", "--mfa-code", wrong_code(out["secretCode"]))
    assert r.code == 77, r
    assert "The code did not match" in r.err, r
    assert cli.keyring.session_items() == []
    assert mfa_state(fake, cli.pool)["enabled"] == []


def test_setup_second_step_too_late(cli, fake):
    fake.set_config(mfaSessionLifetime=2)
    _, out = start_setup(cli, fake)
    time.sleep(2.3)
    r = cli.run("signin", "--mfa-code", fresh_totp(out["secretCode"]))
    assert r.code == 77, r
    assert "start again" in r.err, r
    assert cli.keyring.session_items() == []


def test_setup_handout_is_for_its_profile(cli, fake):
    """The pending set-up belongs to the profile that started it."""
    _, out = start_setup(cli, fake)
    r = cli.run("signin", "--profile", "work", "--mfa-code", fresh_totp(out["secretCode"]))
    assert r.code == 64, r  # no pending set-up there: an ordinary sign-in, which has no password source
    assert cli.keyring.session_items("work") == []
    r = cli.run("signin", "--mfa-code", fresh_totp(out["secretCode"]))
    assert r.code == 0, r


# ---------------------------------------------------------------------------
# authctl mfa status | disable | setup without a terminal
# ---------------------------------------------------------------------------


def test_mfa_status(cli, fake):
    assert cli.signin().code == 0
    r = cli.run("mfa", "status", "--output", "json")
    assert r.code == 0, r
    assert r.json() == {"enabled": [], "preferred": None, "username": "alice"}
    r = cli.run("mfa", "status")
    assert r.code == 0 and re.search(r"enabled:\s+none", r.out) and re.search(r"preferred:\s+none", r.out), r

    set_mfa(fake, cli.pool, "select", offered=[TOTP, SMS, EMAIL])
    r = cli.run("mfa", "status", "--output", "json")
    assert r.json() == {"enabled": ["email", "sms", "totp"], "preferred": None, "username": "alice"}, r

    set_mfa(fake, cli.pool, "sms")
    r = cli.run("mfa", "status", "--output", "json")
    assert r.json() == {"enabled": ["sms"], "preferred": "sms", "username": "alice"}, r
    r = cli.run("mfa", "status")
    assert re.search(r"enabled:\s+sms", r.out) and re.search(r"preferred:\s+sms", r.out), r


def test_whoami_factors_lists_the_authenticator_as_mfa_only(cli, fake):
    """GetUserAuthFactors (the July 2026 model) answers SOFTWARE_TOKEN among the auth factors of a
    user with an authenticator app; it is an MFA-only factor: not under "sign in with:"."""
    assert cli.signin().code == 0
    set_mfa(fake, cli.pool, "totp")
    r = cli.run("whoami", "--factors", "--output", "json")
    assert r.code == 0, r
    factors = r.json()["factors"]
    assert factors["firstFactors"] == ["PASSWORD"] and factors["mfaOnlyFactors"] == ["SOFTWARE_TOKEN"], factors
    r = cli.run("whoami", "--factors")
    assert "sign in with:  password\n" in r.out, r
    assert "MFA factors:   authenticator app\n" in r.out, r


def test_mfa_status_before_and_after_setup(cli, fake):
    _, out = start_setup(cli, fake)
    assert cli.run("signin", "--mfa-code", fresh_totp(out["secretCode"])).code == 0
    r = cli.run("mfa", "status", "--output", "json")
    assert r.code == 0, r
    assert r.json() == {"enabled": ["totp"], "preferred": "totp", "username": "alice"}


def test_mfa_status_not_signed_in(cli, fake):
    r = cli.run("mfa", "status")
    assert r.code == 77 and "Not signed in" in r.err, r


def test_mfa_disable_needs_yes_without_a_terminal(cli, fake):
    state = set_mfa(fake, cli.pool, "totp")
    assert cli.signin("alice", None, "--mfa-code", fresh_totp(state["secret"])).code == 0
    mark = fake.mark()
    r = cli.run("mfa", "disable", "totp")
    assert r.code == 64 and "--yes" in r.err, r
    assert fake.calls(mark, operation="SetUserMFAPreference") == []
    assert mfa_state(fake, cli.pool)["enabled"] == [TOTP]

    r = cli.run("mfa", "disable", "totp", "--yes", "--output", "json")
    assert r.code == 0, r
    assert r.json() == {"totp": "disabled", "changed": True}
    assert len(fake.calls(mark, operation="SetUserMFAPreference", status=200)) == 1
    state = mfa_state(fake, cli.pool)
    assert (state["enabled"], state["preferred"]) == ([], None)
    assert cli.run("mfa", "status", "--output", "json").json()["enabled"] == []
    # No second factor any more: a password is enough.
    mark = fake.mark()
    assert cli.signin().code == 0
    assert [c[1] for c in challenge_calls(fake, mark, cli)] == ["USER_SRP_AUTH", "PASSWORD_VERIFIER"]


def test_mfa_disable_only_totp(cli):
    r = cli.run("mfa", "disable", "sms", "--yes")
    assert r.code == 64, r


def test_mfa_setup_needs_a_terminal(cli, fake):
    assert cli.signin().code == 0
    mark = fake.mark()
    r = cli.run("mfa", "setup")
    assert r.code == 64 and "terminal" in r.err, r
    assert fake.calls(mark, operation="AssociateSoftwareToken") == []


# ---------------------------------------------------------------------------
# Audit fixes: token with MFA, codes that wait for a second run, sturdy pending sign-ins
# ---------------------------------------------------------------------------


def test_token_signs_in_through_an_authenticator_challenge(cli, fake):
    """`token --password-stdin` used to exit 1 with swift-argument-parser's internal error on any challenge."""
    state = set_mfa(fake, cli.pool, "totp")
    r = cli.run("token", "--username", "alice", "--password-stdin", input=ALICE_PASSWORD + "\n")
    assert r.code == 64 and "--code CODE" in r.err and "parsable" not in r.err, r
    r = cli.run("token", "--username", "alice", "--password-stdin", "--mfa-code", fresh_totp(state["secret"]),
                input=ALICE_PASSWORD + "\n")
    assert r.code == 0, r
    assert jwt_claims(r.out.strip())["username"] == "alice"
    assert cli.keyring.session()["username"] == "alice"
    r = cli.run("token", "--mfa-code", "123456")
    assert r.code == 64 and "--password-stdin" in r.err, r


@pytest.mark.parametrize("mode,name,destination", [("sms", SMS, "+*******1234"), ("email", EMAIL, "a***@e***")])
def test_code_sent_without_a_terminal_waits_for_a_second_run(cli, fake, mode, name, destination):
    """The code is sent once; `signin --mfa-code CODE` finishes that sign-in, even after a wrong code."""
    set_mfa(fake, cli.pool, mode)
    r = cli.signin()
    assert r.code == 64, r
    assert f"Code sent to {destination}" in r.err and "authctl signin --code CODE" in r.err and "3 minutes" in r.err, r
    waiting = pending(cli.keyring)
    assert (waiting["challengeName"], waiting["username"], waiting["clientId"]) == (name, "alice", cli.client_id)
    assert waiting["session"] not in r.out + r.err
    assert cli.keyring.session_items() == []
    sent = last_code(fake, cli.pool)
    assert sent["count"] == 1 and sent["challengeName"] == name

    mark = fake.mark()
    r = cli.run("signin", "--mfa-code", "000000" if sent["code"] != "000000" else "111111")
    assert r.code == 77 and "did not match" in r.err and "authctl signin --code" in r.err, r
    assert pending(cli.keyring)["wrongCodes"] == 1, "a wrong code keeps the sign-in waiting"
    r = cli.run("signin", "--mfa-code", sent["code"])
    assert r.code == 0, r
    assert SIGNED_IN.search(r.err), r
    assert pending_items(cli.keyring) == []
    assert last_code(fake, cli.pool)["count"] == 1, "no second code was sent"
    assert [c[1:3] for c in challenge_calls(fake, mark, cli)] == [(name, 400), (name, 200)]
    assert [c for c in challenge_calls(fake, mark, cli) if c[0] == "InitiateAuth"] == []


def test_pending_setup_survives_a_wrong_code_and_passing_failures(cli, fake):
    _, out = start_setup(cli, fake)
    secret = out["secretCode"]
    r = cli.run("signin", "--mfa-code", wrong_code(secret))
    assert r.code == 77 and "The code did not match" in r.err, r
    assert pending(cli.keyring) is not None, "one wrong code does not throw the set-up away"

    fake.add_fault(operation="VerifySoftwareToken", kind="status", status=503, count=-1)
    r = cli.run("signin", "--mfa-code", fresh_totp(secret))
    assert r.code == 69, r
    assert pending(cli.keyring) is not None
    fake.clear_faults()

    # Verified, then the challenge answer fails: the next run only answers it.
    fake.add_fault(operation="RespondToAuthChallenge", challengeName="MFA_SETUP", kind="status", status=503, count=-1)
    r = cli.run("signin", "--mfa-code", fresh_totp(secret))
    assert r.code == 69, r
    assert pending(cli.keyring)["verified"] is True
    fake.clear_faults()
    mark = fake.mark()
    r = cli.run("signin", "--mfa-code", fresh_totp(secret))
    assert r.code == 0, r
    assert [c[:3] for c in challenge_calls(fake, mark, cli)] == [("RespondToAuthChallenge", "MFA_SETUP", 200)]
    assert pending_items(cli.keyring) == [] and cli.keyring.session()["username"] == "alice"
    assert mfa_state(fake, cli.pool)["enabled"] == [TOTP]


def test_pending_setup_expired_here(cli, fake):
    _, out = start_setup(cli, fake)
    rewrite_pending(cli.keyring, lambda p: p.update(expiresAt="2020-01-01T00:00:00Z"))
    mark = fake.mark()
    r = cli.run("signin", "--mfa-code", fresh_totp(out["secretCode"]))
    assert r.code == 77, r
    assert "took too long" in r.err and "start again" in r.err and "no username" not in r.err, r
    assert pending_items(cli.keyring) == [] and challenge_calls(fake, mark, cli) == []


def test_pending_setup_is_for_its_user_pool_and_client(cli, fake):
    _, out = start_setup(cli, fake)
    mark = fake.mark()
    r = cli.run("signin", "--username", "bob", "--mfa-code", fresh_totp(out["secretCode"]))
    assert r.code == 64 and "alice" in r.err and "bob" in r.err, r
    r = cli.run("signin", "--mfa-code", fresh_totp(out["secretCode"]), AUTHCTL_CLIENT_ID=cli.pool.secret_client_id)
    assert r.code == 64 and cli.pool.secret_client_id in r.err and cli.client_id in r.err, r
    assert challenge_calls(fake, mark, cli) == [] and pending(cli.keyring) is not None
    r = cli.run("signin", "--username", "alice", "--mfa-code", fresh_totp(out["secretCode"]))
    assert r.code == 0, r
    assert cli.keyring.session()["username"] == "alice"


def test_too_many_wrong_codes_is_not_too_slow(cli, fake):
    _, out = start_setup(cli, fake)
    for _ in range(3):
        r = cli.run("signin", "--mfa-code", wrong_code(out["secretCode"]))
        assert r.code == 77 and "did not match" in r.err, r
    r = cli.run("signin", "--mfa-code", fresh_totp(out["secretCode"]))
    assert r.code == 77 and "Too many wrong codes" in r.err and "took too long" not in r.err, r
    assert pending_items(cli.keyring) == []


@pytest.mark.parametrize("code,mfa_type,said", [
    ("12345", None, "a code from the authenticator app is 6 digits"),
    ("1234567", None, "a code from the authenticator app is 6 digits"),
    ("1234567", "totp", "a code from the authenticator app is 6 digits, e.g. 123456"),
    ("12345678", "totp", "a code from the authenticator app is 6 digits, e.g. 123456"),
])
def test_authenticator_code_of_the_wrong_length_is_not_sent(cli, fake, code, mfa_type, said):
    """A code no factor has (5 or 7 digits; 8 with --mfa-type totp) is refused before the first
    request, so before the password is checked, with the words docs/cli.md promises."""
    set_mfa(fake, cli.pool, "totp")
    mark = fake.mark()
    more = ["--mfa-type", mfa_type] if mfa_type else []
    r = cli.signin("alice", None, "--mfa-code", code, *more)
    assert r.code == 65 and said in r.err and "validation error" not in r.err, r
    assert fake.calls(mark, client_ids=[cli.client_id]) == [], "nothing sent, the password not checked"
    t = cli.run("token", "--username", "alice", "--password-stdin", "--code", code, *more, input=ALICE_PASSWORD + "\n")
    assert t.code == 65 and said in t.err, t
    assert fake.calls(mark, client_ids=[cli.client_id]) == []


def test_setup_output_json_needs_the_secret_service(pool, fake, keyrings):
    cli = harness.Cli(pool, keyrings("nobus"), fake.endpoint)
    set_mfa(fake, pool, "setup")
    mark = fake.mark()
    r = cli.signin("alice", None, "--no-store", "--mfa-setup-output", "json")
    assert r.code == 78, r
    assert "Secret Service" in r.err and "second process" in r.err and r.out == "", r
    assert fake.calls(mark, operation="AssociateSoftwareToken") == []


def test_authenticator_label_is_the_name_typed(cognito, fake, keyring):
    """In a pool where people sign in with their email, the app shows the email, not a UUID."""
    pool_id = cognito.create_user_pool(PoolName="authctl-alias-setup", UsernameAttributes=["email"])["UserPool"]["Id"]
    client = cognito.create_user_pool_client(UserPoolId=pool_id, ClientName="authctl",
                                             ExplicitAuthFlows=["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"])["UserPoolClient"]
    created = cognito.admin_create_user(UserPoolId=pool_id, Username="carol@example.com", MessageAction="SUPPRESS",
                                        TemporaryPassword=BOB_TEMP_PASSWORD,
                                        UserAttributes=[{"Name": "email", "Value": "carol@example.com"}])
    cognito.admin_set_user_password(UserPoolId=pool_id, Username=created["User"]["Username"], Password=ALICE_PASSWORD, Permanent=True)
    pool = harness.Pool(pool_id, client["ClientId"], client["ClientId"], None, users={"carol@example.com": ALICE_PASSWORD})
    cli = harness.Cli(pool, keyring, fake.endpoint)
    set_mfa(fake, pool, "setup", username="carol@example.com")
    r = cli.signin("carol@example.com", None, "--mfa-setup-output", "json")
    assert r.code == 0, r
    out = r.json()
    assert out["otpauthUri"].startswith(f"otpauth://totp/{pool_id}:carol%40example.com?secret="), out
    r = cli.run("signin", "--username", "carol@example.com", "--mfa-code", fresh_totp(out["secretCode"]))
    assert r.code == 0, r


def test_mfa_disable_when_not_on(cli, fake):
    assert cli.signin().code == 0
    mark = fake.mark()
    r = cli.run("mfa", "disable", "totp", "--yes")
    assert r.code == 0 and "was not on" in r.err and "turned off" not in r.err, r
    r = cli.run("mfa", "disable", "totp", "--yes", "--output", "json")
    assert r.code == 0 and r.json() == {"totp": "disabled", "changed": False}, r
    assert fake.calls(mark, operation="SetUserMFAPreference") == []


def test_a_default_username_does_not_block_finishing_a_waiting_sign_in(cli, fake):
    """AUTHCTL_USERNAME names a default user; a sign-in started with --username for another user
    waits for its code, and `signin --mfa-code` (no --username) finishes it despite the default."""
    set_mfa(fake, cli.pool, "sms")
    r = cli.signin(AUTHCTL_USERNAME="bob")
    assert r.code == 64, r
    sent = last_code(fake, cli.pool)
    r = cli.run("signin", "--mfa-code", sent["code"], AUTHCTL_USERNAME="bob")
    assert r.code == 0, r
    assert cli.keyring.session()["username"] == "alice"


def test_code_sent_without_a_terminal_nor_a_secret_service(pool, fake, keyrings):
    """No terminal and no keyring: the sent code cannot wait for a second run (which would send a
    new one), so authctl says so with the no-keyring code, 78, and no useless --mfa-code advice."""
    from harness import Cli
    cli = Cli(pool, keyrings("nobus"), fake.endpoint)
    set_mfa(fake, pool, "sms")
    r = cli.signin("alice", None, "--no-store")
    assert r.code == 78, r
    assert "cannot wait" in r.err and "--code" not in r.err, r


def test_signin_code_with_nothing_waiting_says_so(cli, fake):
    """`signin --code CODE` finishes a waiting sign-in; with none it says so (exit 64, nothing
    sent), instead of starting a new sign-in that asks for a username."""
    mark = fake.mark()
    r = cli.run("signin", "--code", "123456", AUTHCTL_USERNAME=None)
    assert r.code == 64, r
    assert "no sign-in is waiting for a code (profile default)" in r.err and "username" not in r.err.split(":")[1], r
    assert fake.calls(mark) == []
