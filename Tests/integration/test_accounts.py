"""The account's own life (issue 11): signup, confirm-signup, resend-code, forgot-password, and
the sign-in refusals that send a person to them, with the built binary and a real gnome-keyring.

moto accepts any confirmation code and has no ResendConfirmationCode, so the fake plays these
operations (fake_cognito/accounts.py, see docs/testing.md): it makes the codes, "sends" them (the test
reads them with GET /_fake/mfa/code) and refuses wrong or expired ones with the service's errors.
"""

from __future__ import annotations

import time
import urllib.parse

import pytest

from harness import ALICE_PASSWORD, NEW_PASSWORD
from test_mfa_terminal import terminals  # noqa: F401  (fixture)

CAROL_PASSWORD = "Carol-Passw0rd!"


def sent_code(fake, pool, username: str, purpose: str) -> str:
    """The last code the fake 'delivered' to `username`, checked to be for `purpose`."""
    q = urllib.parse.urlencode({"pool": pool.pool_id, "username": username})
    sent = fake._admin("GET", f"/_fake/mfa/code?{q}")
    assert sent["challengeName"] == purpose, sent
    return sent["code"]


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 10 ** 6:06d}"


@pytest.fixture(autouse=True)
def _account_defaults(fake):
    yield
    fake.set_config(accountCodeLifetime=None)


@pytest.fixture
def verifying_pool(cognito, pool):
    """The pool sends sign-up codes by email (AutoVerifiedAttributes), as most pools do."""
    cognito.update_user_pool(UserPoolId=pool.pool_id, AutoVerifiedAttributes=["email"])
    return pool


def sign_up(cli, username: str = "carol", password: str = CAROL_PASSWORD, *more: str):
    return cli.run("signup", "--username", username, "--attribute", f"email={username}@example.com",
                   "--password-stdin", *more, input=password + "\n")


def user_status(cognito, pool, username: str) -> str:
    return cognito.admin_get_user(UserPoolId=pool.pool_id, Username=username)["UserStatus"]


def test_signup_to_whoami_in_four_commands(any_cli, verifying_pool, fake, cognito):
    cli = any_cli
    mark = fake.mark()
    r = sign_up(cli, "carol", CAROL_PASSWORD, "--output", "json")
    assert r.code == 0, r
    report = r.json()
    assert set(report) == {"userConfirmed", "userSub", "codeDelivery"}
    assert report["userConfirmed"] is False and report["userSub"]
    assert report["codeDelivery"] == {"destination": "c***@e***", "deliveryMedium": "EMAIL", "attributeName": "email"}
    assert CAROL_PASSWORD not in r.out + r.err
    (call,) = fake.calls(mark, client_ids=[cli.client_id], operation="SignUp")
    assert call.get("secretHash") is None  # SignUp's secret goes in SecretHash, not a parameter map
    assert user_status(cognito, verifying_pool, "carol") == "UNCONFIRMED"

    code = sent_code(fake, verifying_pool, "carol", "SIGN_UP")
    r = cli.run("confirm-signup", "--username", "carol", "--code", code)
    assert r.code == 0, r
    assert "Account carol confirmed; sign in with: authctl signin --username carol" in r.err
    assert user_status(cognito, verifying_pool, "carol") == "CONFIRMED"

    r = cli.run("signin", "--username", "carol", "--password-stdin", input=CAROL_PASSWORD + "\n")
    assert r.code == 0, r
    r = cli.run("whoami", "--output", "json")
    assert r.code == 0, r
    assert r.json()["username"] == "carol" and r.json()["sub"] == report["userSub"]
    assert r.json()["email"] == "carol@example.com"


def test_signup_with_a_secret_client_sends_the_secret_hash(cli, verifying_pool, fake):
    """Without its secret the confidential client's SignUp is refused by the fake as by Cognito."""
    r = cli.run("signup", "--username", "dave", "--password-stdin", input=CAROL_PASSWORD + "\n",
                AUTHCTL_CLIENT_ID=verifying_pool.secret_client_id)
    assert r.code == 78, r
    assert "this app client has a secret" in r.err


def test_signin_before_confirmation_points_to_confirm_and_resend(cli, verifying_pool, fake, cognito):
    assert sign_up(cli).code == 0
    r = cli.run("signin", "--username", "carol", "--password-stdin", input=CAROL_PASSWORD + "\n")
    assert r.code == 77, r
    assert "not confirmed yet" in r.err
    assert "authctl confirm-signup --username carol" in r.err and "authctl resend-code --username carol" in r.err
    assert cli.keyring.session() is None


def test_wrong_then_right_confirmation_code(cli, verifying_pool, fake, cognito):
    assert sign_up(cli).code == 0
    code = sent_code(fake, verifying_pool, "carol", "SIGN_UP")
    r = cli.run("confirm-signup", "--username", "carol", "--code", wrong(code))
    assert r.code == 77, r
    assert "The code did not match; try again" in r.err
    assert user_status(cognito, verifying_pool, "carol") == "UNCONFIRMED"
    assert cli.run("confirm-signup", "--username", "carol", "--code", code).code == 0
    assert user_status(cognito, verifying_pool, "carol") == "CONFIRMED"
    r = cli.run("confirm-signup", "--username", "carol", "--code", code)
    assert r.code == 77 and "Current status is CONFIRMED" in r.err, r


def test_resend_code_voids_the_old_one(cli, verifying_pool, fake, cognito):
    assert sign_up(cli).code == 0
    old = sent_code(fake, verifying_pool, "carol", "SIGN_UP")
    r = cli.run("resend-code", "--username", "carol", "--output", "json")
    assert r.code == 0, r
    assert r.json() == {"username": "carol", "codeDelivery": {"destination": "c***@e***", "deliveryMedium": "EMAIL",
                                                              "attributeName": "email"}}
    new = sent_code(fake, verifying_pool, "carol", "SIGN_UP")
    if new != old:  # one in a million they are the same
        r = cli.run("confirm-signup", "--username", "carol", "--code", old)
        assert r.code == 77, r
    assert cli.run("confirm-signup", "--username", "carol", "--code", new).code == 0
    r = cli.run("resend-code", "--username", "carol")
    assert r.code == 65 or r.code == 78, r  # already confirmed: the service refuses the request


def test_expired_code_says_how_to_get_a_new_one(cli, verifying_pool, fake):
    fake.set_config(accountCodeLifetime=0.5)
    assert sign_up(cli).code == 0
    code = sent_code(fake, verifying_pool, "carol", "SIGN_UP")
    time.sleep(1)
    r = cli.run("confirm-signup", "--username", "carol", "--code", code)
    assert r.code == 77, r
    assert "expired" in r.err and "authctl resend-code --username carol" in r.err


def test_signup_refusals(cli, verifying_pool, fake):
    r = sign_up(cli, "alice", CAROL_PASSWORD)
    assert r.code == 65, r
    assert "already exists" in r.err and "authctl forgot-password --username alice" in r.err
    r = sign_up(cli, "erin", "short")
    assert r.code == 65, r
    assert r.err.startswith("authctl: The pool refused the password: ")
    r = sign_up(cli, "erin", " leading-space-Passw0rd!")
    assert r.code == 65 and "white space" in r.err, r
    r = cli.run("signup", "--username", "erin", "--attribute", "email", "--password-stdin", input="x\n")
    assert r.code == 64 and "NAME=VALUE" in r.err, r
    r = cli.run("signup", "--username", "erin")
    assert r.code == 64 and "--password-stdin" in r.err, r


def test_throttled_signup_exits_75(cli, verifying_pool, fake):
    fake.add_fault(operation="SignUp", kind="throttle", count=-1)
    r = sign_up(cli, "frank")
    assert r.code == 75, r
    assert "Too many attempts" in r.err


def test_forgot_password_in_two_runs_then_sign_in(any_cli, fake, cognito):
    cli = any_cli
    r = cli.run("forgot-password", "--username", "alice")
    assert r.code == 0, r
    assert "A code to reset the password was sent to a***@e*** (email)." in r.err
    assert "--code CODE --password-stdin" in r.err
    code = sent_code(fake, cli.pool, "alice", "FORGOT_PASSWORD")
    mark = fake.mark()
    r = cli.run("forgot-password", "--username", "alice", "--code", code, "--password-stdin", input=NEW_PASSWORD + "\n")
    assert r.code == 0, r
    assert "Password reset; sign in with: authctl signin --username alice" in r.err
    assert [c["operation"] for c in fake.calls(mark, client_ids=[cli.client_id])] == ["ConfirmForgotPassword"]
    assert cli.signin("alice", ALICE_PASSWORD).code == 77
    r = cli.signin("alice", NEW_PASSWORD)
    assert r.code == 0, r


def test_forgot_password_wrong_and_expired_codes(cli, fake):
    assert cli.run("forgot-password", "--username", "alice").code == 0
    code = sent_code(fake, cli.pool, "alice", "FORGOT_PASSWORD")
    r = cli.run("forgot-password", "--username", "alice", "--code", wrong(code), "--password-stdin", input=NEW_PASSWORD + "\n")
    assert r.code == 77 and "The code did not match" in r.err, r
    assert cli.signin("alice", ALICE_PASSWORD).code == 0  # nothing changed

    fake.set_config(accountCodeLifetime=0.5)
    assert cli.run("forgot-password", "--username", "alice").code == 0
    code = sent_code(fake, cli.pool, "alice", "FORGOT_PASSWORD")
    time.sleep(1)
    r = cli.run("forgot-password", "--username", "alice", "--code", code, "--password-stdin", input=NEW_PASSWORD + "\n")
    assert r.code == 77, r
    assert "expired" in r.err and "authctl forgot-password --username alice" in r.err


def test_forgot_password_checks_the_new_password_before_sending(cli, fake):
    mark = fake.mark()
    r = cli.run("forgot-password", "--username", "alice", "--code", "123456", "--password-stdin", input=" spaced \n")
    assert r.code == 65 and "white space" in r.err, r
    r = cli.run("forgot-password", "--username", "alice", "--code", "123456", "--password-stdin", input="\n")
    assert r.code == 64, r
    r = cli.run("forgot-password", "--username", "alice", "--password-stdin", input=NEW_PASSWORD + "\n")
    assert r.code == 64 and "--code" in r.err, r
    assert fake.calls(mark, client_ids=[cli.client_id]) == []


def test_forgot_password_for_an_unknown_user(cli, fake):
    r = cli.run("forgot-password", "--username", "nobody")
    assert r.code == 77 and "no account named nobody" in r.err, r


def test_password_reset_required_at_signin_then_reset(cli, fake, cognito):
    cognito.admin_reset_user_password(UserPoolId=cli.pool.pool_id, Username="alice")
    r = cli.signin("alice", ALICE_PASSWORD)
    assert r.code == 77, r
    assert "authctl forgot-password --username alice" in r.err
    r = cli.run("token", "--username", "alice", "--password-stdin", input=ALICE_PASSWORD + "\n")
    assert r.code == 77 and "authctl forgot-password --username alice" in r.err, r
    assert cli.run("forgot-password", "--username", "alice").code == 0
    code = sent_code(fake, cli.pool, "alice", "FORGOT_PASSWORD")
    assert cli.run("forgot-password", "--username", "alice", "--code", code, "--password-stdin",
                   input=NEW_PASSWORD + "\n").code == 0
    assert cli.signin("alice", NEW_PASSWORD).code == 0


def test_forgot_password_on_a_terminal(cli, fake, terminals):
    t = terminals(cli, "forgot-password", "--username", "alice")
    t.expect("A code to reset the password was sent to a***@e*** (email).")
    t.expect("Code from the email: ")
    code = sent_code(fake, cli.pool, "alice", "FORGOT_PASSWORD")
    t.type(wrong(code))
    t.expect("New password: ")
    t.type_secret(NEW_PASSWORD)
    t.expect("Repeat new password: ")
    t.type_secret(NEW_PASSWORD + "x")
    t.expect("Passwords do not match; try again.")
    t.expect("New password: ")
    t.type_secret(NEW_PASSWORD)
    t.expect("Repeat new password: ")
    t.type_secret(NEW_PASSWORD)
    t.expect("The code did not match; try again.")
    t.expect("Code from the email: ")
    t.type(code)
    t.expect("Password reset; sign in with: authctl signin --username alice")
    assert t.finish() == 0
    assert NEW_PASSWORD not in t.output
    assert cli.signin("alice", NEW_PASSWORD).code == 0


def test_signup_and_confirm_on_a_terminal(cli, verifying_pool, fake, terminals):
    t = terminals(cli, "signup", "--username", "carol", "--attribute", "email=carol@example.com")
    t.expect("Password: ")
    t.type_secret(CAROL_PASSWORD)
    t.expect("Repeat password: ")
    t.type_secret(CAROL_PASSWORD)
    t.expect("Confirm it with: authctl confirm-signup --username carol")
    assert t.finish() == 0
    t = terminals(cli, "confirm-signup", "--username", "carol")
    t.expect("Code from the email: ")
    code = sent_code(fake, verifying_pool, "carol", "SIGN_UP")
    t.type(wrong(code))
    t.expect("The code did not match; try again.")
    t.type(code)
    t.expect("Account carol confirmed")
    assert t.finish() == 0
