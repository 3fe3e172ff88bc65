"""Passwordless and choice-based sign-in: `signin --flow user-auth` / `--method`, and
`token --method email-otp`, with the built binary and a real gnome-keyring, on a terminal (a pty)
and without one (the sign-in waits in the Secret Service for `signin --code CODE`).

moto has no USER_AUTH, so the fake plays it (fake_cognito/passwordless.py, see docs/testing.md); its
answers are first checked here against botocore's service model.
"""

from __future__ import annotations

import re

import pytest

from harness import ALICE_PASSWORD
from test_mfa import _mfa_defaults, last_code, raw, set_mfa  # noqa: F401  (fixtures)
from test_mfa_terminal import terminals  # noqa: F401  (fixture)
from totp import fresh_totp

SIGNED_IN = re.compile(r"Signed in as alice \(profile default\); access token valid until \S")
FLOWS = ["ALLOW_USER_SRP_AUTH", "ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH", "ALLOW_USER_AUTH"]


def allow_first_factors(cognito, pool, factors: list[str]) -> None:
    """The pool's SignInPolicy, and ALLOW_USER_AUTH on both app clients."""
    cognito.update_user_pool(UserPoolId=pool.pool_id, Policies={"SignInPolicy": {"AllowedFirstAuthFactors": factors}})
    for client_id in pool.client_ids:
        cognito.update_user_pool_client(UserPoolId=pool.pool_id, ClientId=client_id, ExplicitAuthFlows=FLOWS)


@pytest.fixture
def choice_pool(cognito, pool):
    allow_first_factors(cognito, pool, ["PASSWORD", "EMAIL_OTP", "SMS_OTP"])
    return pool


@pytest.fixture
def passwordless_pool(cognito, pool):
    """A pool whose users sign in by email code only."""
    allow_first_factors(cognito, pool, ["EMAIL_OTP"])
    return pool


@pytest.fixture(autouse=True)
def _no_passkeys(fake):
    yield
    fake.set_config(passkeyUsers=[])


def email_code(fake, pool) -> str:
    sent = last_code(fake, pool)
    assert sent["challengeName"] == "EMAIL_OTP" and sent["to"] == "alice@example.com", sent
    return sent["code"]


def other(code: str) -> str:
    return f"{(int(code) + 1) % 10 ** 6:06d}"


def sign_in_calls(fake, mark, cli) -> list[tuple]:
    return [(c["operation"], c.get("authFlow") or c.get("challengeName"), c["status"])
            for c in fake.calls(mark, client_ids=[cli.client_id])
            if c["operation"] in ("InitiateAuth", "RespondToAuthChallenge")]


# ---------------------------------------------------------------------------
# The fake's USER_AUTH against the service model
# ---------------------------------------------------------------------------


def test_fake_user_auth_has_the_service_shapes(fake, cognito, choice_pool, raw):
    pool = choice_pool
    status, body = raw("InitiateAuth", {"AuthFlow": "USER_AUTH", "ClientId": pool.client_id,
                                        "AuthParameters": {"USERNAME": "alice"}})
    assert status == 200 and body["ChallengeName"] == "SELECT_CHALLENGE", body
    assert body["AvailableChallenges"] == ["PASSWORD", "PASSWORD_SRP", "EMAIL_OTP"]  # no verified phone
    status, body = raw.answer(pool, "SELECT_CHALLENGE", body["Session"], {"USERNAME": "alice", "ANSWER": "SMS_OTP"})
    assert status == 400 and body["__type"] == "InvalidParameterException", body

    status, body = raw("InitiateAuth", {"AuthFlow": "USER_AUTH", "ClientId": pool.client_id,
                                        "AuthParameters": {"USERNAME": "alice", "PREFERRED_CHALLENGE": "EMAIL_OTP"}})
    assert status == 200 and body["ChallengeName"] == "EMAIL_OTP", body
    assert body["ChallengeParameters"]["CODE_DELIVERY_DESTINATION"] == "a***@e***"
    code = email_code(fake, pool)
    status, wrong = raw.answer(pool, "EMAIL_OTP", body["Session"], {"USERNAME": "alice", "EMAIL_OTP_CODE": other(code)})
    assert status == 400 and wrong["__type"] == "CodeMismatchException", wrong
    status, done = raw.answer(pool, "EMAIL_OTP", body["Session"], {"USERNAME": "alice", "EMAIL_OTP_CODE": code})
    assert status == 200 and done["AuthenticationResult"]["AccessToken"], done

    status, body = raw("InitiateAuth", {"AuthFlow": "USER_AUTH", "ClientId": pool.client_id,
                                        "AuthParameters": {"USERNAME": "alice", "PREFERRED_CHALLENGE": "PASSWORD",
                                                           "PASSWORD": "wrong-Passw0rd!"}})
    assert status == 400 and body["__type"] == "NotAuthorizedException", body


def test_fake_refuses_user_auth_to_a_client_without_it(fake, pool, raw):
    status, body = raw("InitiateAuth", {"AuthFlow": "USER_AUTH", "ClientId": pool.client_id,
                                        "AuthParameters": {"USERNAME": "alice"}})
    assert status == 400 and body["__type"] == "InvalidParameterException", body


# ---------------------------------------------------------------------------
# authctl
# ---------------------------------------------------------------------------


def test_email_code_on_a_terminal_with_a_wrong_code_first(cli, choice_pool, fake, terminals):
    mark = fake.mark()
    t = terminals(cli, "signin", "--username", "alice", "--method", "email-otp")
    t.expect("Code sent to a***@e***")
    t.expect("Code from the email: ")
    code = email_code(fake, choice_pool)
    t.type(other(code))
    t.expect("The code did not match; try again.")
    t.expect("Code from the email: ")
    t.type(code)
    t.expect("Signed in as alice")
    assert t.finish() == 0
    assert "Password" not in t.output
    assert sign_in_calls(fake, mark, cli) == [
        ("InitiateAuth", "USER_AUTH", 200), ("RespondToAuthChallenge", "EMAIL_OTP", 400),
        ("RespondToAuthChallenge", "EMAIL_OTP", 200)]
    assert cli.run("whoami").code == 0


def test_waiting_email_sign_in_finished_with_code(any_cli, passwordless_pool, fake):
    """No terminal: the sign-in waits in the Secret Service; a wrong code leaves it waiting."""
    cli = any_cli
    r = cli.run("signin", "--username", "alice", "--flow", "user-auth")
    assert r.code == 64, r
    assert "Code sent to a***@e***" in r.err and "authctl signin --code CODE" in r.err, r
    code = email_code(fake, passwordless_pool)
    assert ALICE_PASSWORD not in r.err
    pending = cli.keyring.search(kind="pending-challenge")
    assert len(pending) == 1, pending
    r = cli.run("signin", "--code", other(code))
    assert r.code == 77 and "did not match" in r.err and "still waits" in r.err, r
    r = cli.run("signin", "--code", code)
    assert r.code == 0, r
    assert SIGNED_IN.search(r.err), r
    assert cli.keyring.search(kind="pending-challenge") == []
    r = cli.run("whoami", "--output", "json")
    assert r.code == 0 and r.json()["username"] == "alice", r


def test_mfa_code_stays_an_alias(cli, passwordless_pool, fake):
    assert cli.run("signin", "--username", "alice", "--method", "email-otp").code == 64
    r = cli.run("signin", "--mfa-code", email_code(fake, passwordless_pool))
    assert r.code == 0, r


def test_choice_needs_method_without_a_terminal(cli, choice_pool, fake):
    mark = fake.mark()
    r = cli.run("signin", "--username", "alice", "--flow", "user-auth")
    assert r.code == 64, r
    assert "--method: password, srp, email-otp" in r.err and "PASSWORD_SRP" in r.err, r
    assert sign_in_calls(fake, mark, cli) == [("InitiateAuth", "USER_AUTH", 200)]
    r = cli.run("signin", "--username", "alice", "--method", "sms-otp")
    assert r.code == 65 and "--method sms-otp is not offered" in r.err, r


def test_choice_on_a_terminal_then_srp(cli, choice_pool, fake, terminals):
    mark = fake.mark()
    t = terminals(cli, "signin", "--username", "alice", "--flow", "user-auth")
    t.expect("Choose how to sign in:")
    t.expect("Number [1-3]: ")
    assert "a code sent by email" in t.output and "password, proven without sending it (SRP)" in t.output
    t.type("srp")
    t.sign_in_password()
    t.expect("Signed in as alice")
    assert t.finish() == 0
    assert sign_in_calls(fake, mark, cli) == [
        ("InitiateAuth", "USER_AUTH", 200), ("RespondToAuthChallenge", "SELECT_CHALLENGE", 200),
        ("RespondToAuthChallenge", "PASSWORD_VERIFIER", 200)]


@pytest.mark.parametrize("method, steps", [
    ("password", [("InitiateAuth", "USER_AUTH", 200)]),
    ("srp", [("InitiateAuth", "USER_AUTH", 200), ("RespondToAuthChallenge", "PASSWORD_VERIFIER", 200)]),
])
def test_password_methods(any_cli, choice_pool, fake, method, steps):
    cli = any_cli
    mark = fake.mark()
    r = cli.signin("alice", ALICE_PASSWORD, "--method", method)
    assert r.code == 0, r
    assert sign_in_calls(fake, mark, cli) == steps
    r = cli.signin("alice", "Wrong-Passw0rd!", "--method", method)
    assert r.code == 77 and "Incorrect username or password" in r.err, r


def test_password_method_then_mfa_as_today(cli, choice_pool, fake):
    state = set_mfa(fake, choice_pool, "totp")
    r = cli.signin("alice", ALICE_PASSWORD, "--method", "srp", "--code", fresh_totp(state["secret"]))
    assert r.code == 0, r
    r = cli.signin("alice", ALICE_PASSWORD, "--method", "password")
    assert r.code == 64 and "SOFTWARE_TOKEN_MFA" in r.err, r


def test_passkey_only_without_a_key_points_to_the_browser(cli, cognito, pool, fake):
    """WEB_AUTHN is answered with a security key now (test_passkeys.py); with no relying party
    pinned for the profile the key is never touched (exit 78), and the message
    still names the browser, which does passkeys itself."""
    allow_first_factors(cognito, pool, ["WEB_AUTHN"])
    fake.set_config(passkeyUsers=["alice"])
    r = cli.run("signin", "--username", "alice", "--flow", "user-auth")
    assert r.code == 78, r
    assert "passkey" in r.err and "authctl signin --browser" in r.err


def test_sms_code_waits_then_finishes(cli, cognito, choice_pool, fake):
    cognito.admin_update_user_attributes(UserPoolId=choice_pool.pool_id, Username="alice", UserAttributes=[
        {"Name": "phone_number", "Value": "+15555550123"}, {"Name": "phone_number_verified", "Value": "true"}])
    r = cli.run("signin", "--username", "alice", "--method", "sms-otp")
    assert r.code == 64 and "Code sent to +*******0123" in r.err, r
    sent = last_code(fake, choice_pool)
    assert sent["challengeName"] == "SMS_OTP" and sent["to"] == "+15555550123", sent
    assert cli.run("signin", "--code", sent["code"]).code == 0


def test_usage_errors(cli, choice_pool, fake):
    mark = fake.mark()
    r = cli.run("signin", "--username", "alice", "--method", "email-otp", "--password-stdin", input="x\n")
    assert r.code == 64 and "asks no password" in r.err, r
    r = cli.run("signin", "--username", "alice", "--method", "email-otp", "--flow", "srp")
    assert r.code == 64 and "--flow user-auth" in r.err, r
    assert sign_in_calls(fake, mark, cli) == []


def test_token_for_scripts_with_an_email_code(cli, passwordless_pool, fake):
    r = cli.run("token", "--username", "alice", "--method", "email-otp")
    assert r.code == 64 and "authctl signin --code CODE" in r.err, r
    assert r.out == ""
    assert cli.run("signin", "--code", email_code(fake, passwordless_pool)).code == 0
    r = cli.run("token", "--username", "alice", "--method", "email-otp")
    assert r.code == 0 and r.out.count(".") == 2, r


def test_unconfirmed_user_at_user_auth(cli, cognito, choice_pool, fake):
    cognito.admin_reset_user_password(UserPoolId=choice_pool.pool_id, Username="alice")
    r = cli.run("signin", "--username", "alice", "--method", "email-otp")
    assert r.code == 77 and "authctl forgot-password --username alice" in r.err, r
