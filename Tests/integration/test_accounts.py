"""The account's own life: signup, confirm-signup, resend-code, forgot-password, and
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
    r = cli.run("confirm-signup", "--username", "carol", "--code-stdin", input=code + "\n")
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
    r = cli.run("confirm-signup", "--username", "carol", "--code-stdin", input=wrong(code) + "\n")
    assert r.code == 77, r
    assert "The code did not match; try again" in r.err
    assert user_status(cognito, verifying_pool, "carol") == "UNCONFIRMED"
    assert cli.run("confirm-signup", "--username", "carol", "--code-stdin", input=code + "\n").code == 0
    assert user_status(cognito, verifying_pool, "carol") == "CONFIRMED"
    r = cli.run("confirm-signup", "--username", "carol", "--code-stdin", input=code + "\n")
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
        r = cli.run("confirm-signup", "--username", "carol", "--code-stdin", input=old + "\n")
        assert r.code == 77, r
    assert cli.run("confirm-signup", "--username", "carol", "--code-stdin", input=new + "\n").code == 0
    # Already confirmed: a refusal of that account (77, as confirm-signup's), saying what to do.
    r = cli.run("resend-code", "--username", "carol")
    assert r.code == 77, r
    assert "already confirmed" in r.err and "authctl signin --username carol" in r.err, r


def test_expired_code_says_how_to_get_a_new_one(cli, verifying_pool, fake):
    fake.set_config(accountCodeLifetime=0.5)
    assert sign_up(cli).code == 0
    code = sent_code(fake, verifying_pool, "carol", "SIGN_UP")
    time.sleep(1)
    r = cli.run("confirm-signup", "--username", "carol", "--code-stdin", input=code + "\n")
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
    assert "--code-stdin --password-stdin" in r.err
    code = sent_code(fake, cli.pool, "alice", "FORGOT_PASSWORD")
    mark = fake.mark()
    r = cli.run("forgot-password", "--username", "alice", "--code-stdin", "--password-stdin", input=code + "\n" + NEW_PASSWORD + "\n")
    assert r.code == 0, r
    assert "Password reset; sign in with: authctl signin --username alice" in r.err
    assert [c["operation"] for c in fake.calls(mark, client_ids=[cli.client_id])] == ["ConfirmForgotPassword"]
    assert cli.signin("alice", ALICE_PASSWORD).code == 77
    r = cli.signin("alice", NEW_PASSWORD)
    assert r.code == 0, r


def test_forgot_password_wrong_and_expired_codes(cli, fake):
    assert cli.run("forgot-password", "--username", "alice").code == 0
    code = sent_code(fake, cli.pool, "alice", "FORGOT_PASSWORD")
    r = cli.run("forgot-password", "--username", "alice", "--code-stdin", "--password-stdin", input=wrong(code) + "\n" + NEW_PASSWORD + "\n")
    assert r.code == 77 and "The code did not match" in r.err, r
    assert cli.signin("alice", ALICE_PASSWORD).code == 0  # nothing changed

    fake.set_config(accountCodeLifetime=0.5)
    assert cli.run("forgot-password", "--username", "alice").code == 0
    code = sent_code(fake, cli.pool, "alice", "FORGOT_PASSWORD")
    time.sleep(1)
    r = cli.run("forgot-password", "--username", "alice", "--code-stdin", "--password-stdin", input=code + "\n" + NEW_PASSWORD + "\n")
    assert r.code == 77, r
    assert "expired" in r.err and "authctl forgot-password --username alice" in r.err


def test_forgot_password_checks_the_new_password_before_sending(cli, fake):
    mark = fake.mark()
    r = cli.run("forgot-password", "--username", "alice", "--code-stdin", "--password-stdin", input="123456\n spaced \n")
    assert r.code == 65 and "white space" in r.err, r
    r = cli.run("forgot-password", "--username", "alice", "--code-stdin", "--password-stdin", input="123456\n\n")
    assert r.code == 64, r
    r = cli.run("forgot-password", "--username", "alice", "--password-stdin", input=NEW_PASSWORD + "\n")
    assert r.code == 64 and "--code-stdin" in r.err, r
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
    assert cli.run("forgot-password", "--username", "alice", "--code-stdin", "--password-stdin",
                   input=code + "\n" + NEW_PASSWORD + "\n").code == 0
    assert cli.signin("alice", NEW_PASSWORD).code == 0


def test_forgot_password_on_a_terminal(cli, fake, terminals):
    t = terminals(cli, "forgot-password", "--username", "alice")
    t.expect("A code to reset the password was sent to a***@e*** (email).")
    t.expect("Code from the email: ")
    code = sent_code(fake, cli.pool, "alice", "FORGOT_PASSWORD")
    t.type_secret(wrong(code))
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
    t.type_secret(code)
    t.expect("Password reset; sign in with: authctl signin --username alice")
    assert t.finish() == 0
    assert NEW_PASSWORD not in t.output
    assert code not in t.output  # the code is asked without echo, like the password
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
    t.type_secret(wrong(code))
    t.expect("The code did not match; try again.")
    t.type_secret(code)
    t.expect("Account carol confirmed")
    assert t.finish() == 0
    assert code not in t.output


# A reset code on argv let another local user (nobody, through setpriv) read it
# in /proc/PID/cmdline and set the password first, with the username and the public client id.
CODE_THIEF = r"""
import json, os, sys, time, urllib.request, urllib.error
pid, endpoint, client_id, username, password, seconds = sys.argv[1:7]
code, deadline = None, time.time() + float(seconds)
while code is None and time.time() < deadline:
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        argv = []
    for i, arg in enumerate(argv[:-1]):
        if arg == b"--code":
            code = argv[i + 1].decode()
    time.sleep(0.02)
if code is None:
    print("no code seen"); sys.exit(0)
body = json.dumps({"ClientId": client_id, "Username": username, "ConfirmationCode": code, "Password": password}).encode()
req = urllib.request.Request(endpoint, data=body, headers={
    "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "AWSCognitoIdentityProviderService.ConfirmForgotPassword"})
try:
    urllib.request.urlopen(req, timeout=10)
    print("password set")
except urllib.error.HTTPError as e:
    print("refused", e.code)
"""
THIEF_PASSWORD = "Thief-Passw0rd!"


def steal_the_code_while(cli, args: list[str], stdin_lines: list[str]):
    """Runs `authctl args` with standard input held open for 3 s (as a slow pipe would), while nobody
    watches its argv; returns (authctl's result, what the thief printed)."""
    import shutil
    import subprocess
    import sys
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is needed to run a second local user")
    from harness import authctl_bin
    env = cli.env()
    victim = subprocess.Popen([str(authctl_bin()), *args], env=env, cwd=env.get("HOME", "/"), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    thief = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", CODE_THIEF,
                              str(victim.pid), cli.endpoint, cli.client_id, "alice", THIEF_PASSWORD, "3"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
    said = thief.communicate(timeout=60)[0].strip()
    try:
        out, err = victim.communicate("".join(line + "\n" for line in stdin_lines), timeout=60)
    except BrokenPipeError:
        out, err = victim.communicate(timeout=60)
    return victim.returncode, err, said


def test_another_user_never_sees_a_reset_code(cli, fake):
    assert cli.run("forgot-password", "--username", "alice").code == 0
    code = sent_code(fake, cli.pool, "alice", "FORGOT_PASSWORD")
    status, err, thief = steal_the_code_while(cli, ["forgot-password", "--username", "alice", "--code-stdin", "--password-stdin"],
                                              [code, NEW_PASSWORD])
    assert thief == "no code seen", thief
    assert status == 0, err
    assert cli.signin("alice", THIEF_PASSWORD).code == 77
    assert cli.signin("alice", NEW_PASSWORD).code == 0


def test_code_on_the_command_line_is_refused(cli, fake):
    """What a script written for the old `--code CODE` gets: exit 64 before anything is sent,
    saying where the code goes now. (A code typed on a command line is visible in /proc for the
    milliseconds the process lives, whatever authctl does: a race against a thief here would only
    measure the machine's load, so the secure path is what test_another_user_never_sees_a_reset_code
    races.)"""
    assert cli.run("forgot-password", "--username", "alice").code == 0
    mark = fake.mark()
    for args in (["forgot-password", "--username", "alice", "--code", "123456", "--password-stdin"],
                 ["confirm-signup", "--username", "carol", "--code", "123456"]):
        r = cli.run(*args, input=NEW_PASSWORD + "\n")
        assert r.code == 64, r
        assert "--code-stdin" in r.err and "prompt" in r.err and "local user" in r.err, r
    assert fake.calls(mark, client_ids=[cli.client_id]) == []
