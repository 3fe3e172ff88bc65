"""`authctl change-password`: the checks made before any request, the service's answers, the
session kept, and the new password in force (sign-in with it works, with the old one it fails).

ChangePassword is moto's own; moto enforces its default password policy (upper, lower, digit,
symbol) and refuses a wrong current password with NotAuthorizedException. The fake learns the
new password as it passes, so the SRP sign-in afterwards is checked against it for real.
"""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone

import pexpect
import pytest

from harness import ALICE_PASSWORD, NEW_PASSWORD, Cli, authctl_bin, free_port, iso_utc, token_values

CHANGED = "Password changed. You are still signed in."
TOO_MANY = "Too many attempts; wait a few minutes and try again"
MOTO_POLICY_MESSAGE = "The provided password does not confirm to the configured password policy"


def change(cli: Cli, current: str, new: str, *more: str):
    return cli.run("change-password", "--stdin", *more, input=f"{current}\n{new}\n")


def raw_session(keyring):
    return [(i.get("secret"), i.get("label"), sorted(i["attributes"].items())) for i in keyring.session_items()]


def change_calls(fake, mark):
    return fake.calls(mark, operation="ChangePassword")


def assert_password_is(cli: Cli, new: str, old: str) -> None:
    """Sign-in (SRP, checked by the fake) with the new password works, with the old one fails."""
    r = cli.signin("alice", old)
    assert r.code == 77, r
    assert "Incorrect username or password" in r.err, r
    r = cli.signin("alice", new)
    assert r.code == 0, r


def assert_no_secrets(r, *secrets: str):
    for s in secrets:
        assert s not in r.out and s not in r.err, f"a password or token was printed:\n{r}"


# ---------------------------------------------------------------------------
# Success
# ---------------------------------------------------------------------------


def test_change_password(any_cli, fake):
    assert any_cli.signin().code == 0
    before = any_cli.keyring.session()
    mark = fake.mark()
    r = change(any_cli, ALICE_PASSWORD, NEW_PASSWORD)
    assert r.code == 0, r
    assert CHANGED in r.err, r
    assert "signout --global" in r.err, "points to signout --global for a compromised password"
    assert r.out == ""
    assert_no_secrets(r, ALICE_PASSWORD, NEW_PASSWORD, *token_values(before))
    assert [(c["status"], c["handledBy"]) for c in change_calls(fake, mark)] == [(200, "moto")]
    assert any_cli.keyring.session() == before, "the session is kept as it was"
    w = any_cli.run("whoami")
    assert w.code == 0, w
    assert_password_is(any_cli, NEW_PASSWORD, ALICE_PASSWORD)


def test_change_password_json_and_other_devices_stay_signed_in(signed_in, keyrings):
    other = signed_in.with_keyring(keyrings(name="device-b"))
    assert other.signin().code == 0
    r = change(signed_in, ALICE_PASSWORD, NEW_PASSWORD, "--output", "json")
    assert r.code == 0, r
    assert r.json() == {"changed": True, "otherDevicesSignedOut": False, "signedIn": True}
    assert other.run("whoami").code == 0, "other devices are not signed out"
    assert signed_in.run("whoami").code == 0


def test_expired_access_token_is_refreshed_first(signed_in, fake):
    past = iso_utc(datetime.now(timezone.utc) - timedelta(hours=1))
    signed_in.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))
    mark = fake.mark()
    r = change(signed_in, ALICE_PASSWORD, NEW_PASSWORD)
    assert r.code == 0, r
    calls = [c for c in fake.calls(mark) if c.get("operation")]
    ops = [(c["operation"], c.get("authFlow"), c["status"]) for c in calls]
    i_refresh = next((i for i, c in enumerate(calls) if c["status"] == 200 and (
        c["operation"] == "GetTokensFromRefreshToken"
        or (c["operation"] == "InitiateAuth" and c.get("authFlow") in ("REFRESH_TOKEN_AUTH", "REFRESH_TOKEN")))), None)
    i_change = next(i for i, c in enumerate(calls) if c["operation"] == "ChangePassword")
    assert i_refresh is not None and i_refresh < i_change, ops
    assert calls[i_change]["status"] == 200
    after = signed_in.keyring.session()
    assert datetime.fromisoformat(after["accessTokenExpiresAt"].replace("Z", "+00:00")) > datetime.now(timezone.utc)
    assert_password_is(signed_in, NEW_PASSWORD, ALICE_PASSWORD)


# ---------------------------------------------------------------------------
# Refused before any request
# ---------------------------------------------------------------------------


NEW_PASSWORD_RULES = [
    # (what, new password, words in the message)
    ("same as current", ALICE_PASSWORD, "differ"),
    ("empty", "", "empty"),
    ("leading space", " " + NEW_PASSWORD, "white space"),
    ("trailing space", NEW_PASSWORD + " ", "white space"),
    ("leading tab", "\t" + NEW_PASSWORD, "white space"),
]


def test_new_password_rules(signed_in, fake):
    before = raw_session(signed_in.keyring)
    mark = fake.mark()
    for what, new, words in NEW_PASSWORD_RULES:
        r = change(signed_in, ALICE_PASSWORD, new)
        assert r.code == 65, (what, r)
        assert words in r.err, (what, r)
        assert_no_secrets(r, ALICE_PASSWORD)
    assert fake.calls(mark) == [], "checked before any request"
    assert raw_session(signed_in.keyring) == before


def test_not_signed_in(cli, fake):
    mark = fake.mark()
    r = change(cli, ALICE_PASSWORD, NEW_PASSWORD)
    assert r.code == 77, r
    assert "Not signed in (profile default)" in r.err, r
    assert fake.calls(mark) == []


def test_no_terminal_needs_stdin(signed_in, fake):
    mark = fake.mark()
    r = signed_in.run("change-password")
    assert r.code == 64, r
    assert "--stdin" in r.err, r
    assert fake.calls(mark) == []


# ---------------------------------------------------------------------------
# The service's answers
# ---------------------------------------------------------------------------


def test_wrong_current_password(signed_in, fake):
    before = raw_session(signed_in.keyring)
    mark = fake.mark()
    r = change(signed_in, "Not-The-Passw0rd!", NEW_PASSWORD)
    assert r.code == 77, r
    assert "Current password is incorrect" in r.err, r
    assert [c["errorType"] for c in change_calls(fake, mark)] == ["NotAuthorizedException"], "asked once"
    assert raw_session(signed_in.keyring) == before, "a wrong password does not end the session"
    assert signed_in.run("whoami").code == 0
    assert_no_secrets(r, "Not-The-Passw0rd!", NEW_PASSWORD)


def test_pool_policy_violation(signed_in, fake):
    """moto's default policy: upper, lower, digit, symbol; its message is shown as it comes."""
    mark = fake.mark()
    for new in ("lowercase-only-1!", "NoDigitsHere!", "NoSymbols123", "Sh0r!"):
        r = change(signed_in, ALICE_PASSWORD, new)
        assert r.code == 65, (new, r)
        assert MOTO_POLICY_MESSAGE in r.err, (new, r)
    assert [c["errorType"] for c in change_calls(fake, mark)] == ["InvalidPasswordException"] * 4
    assert signed_in.run("whoami").code == 0
    assert signed_in.signin("alice", ALICE_PASSWORD).code == 0, "the password is unchanged"


@pytest.mark.parametrize("rule", [
    dict(kind="error", errorType="LimitExceededException", message="Attempt limit exceeded, please try after some time."),
    dict(kind="throttle", count=-1),
], ids=["LimitExceededException", "TooManyRequestsException"])
def test_too_many_attempts(signed_in, fake, rule):
    before = raw_session(signed_in.keyring)
    fake.add_fault(operation="ChangePassword", **rule)
    mark = fake.mark()
    r = change(signed_in, ALICE_PASSWORD, NEW_PASSWORD)
    assert r.code == 75, r
    assert TOO_MANY in r.err, r
    assert change_calls(fake, mark)
    assert raw_session(signed_in.keyring) == before
    fake.clear_faults()
    assert signed_in.run("whoami").code == 0
    assert_password_is(signed_in, ALICE_PASSWORD, NEW_PASSWORD)  # unchanged


def test_5xx_is_not_repeated(signed_in, fake):
    """ChangePassword is not idempotent (a repeat presents a "current" password that may already
    have been replaced): one attempt, exit 69, the session kept."""
    before = raw_session(signed_in.keyring)
    fake.add_fault(operation="ChangePassword", kind="status", status=500, count=-1)
    mark = fake.mark()
    r = change(signed_in, ALICE_PASSWORD, NEW_PASSWORD)
    assert r.code == 69, r
    assert len(change_calls(fake, mark)) == 1
    assert raw_session(signed_in.keyring) == before


MAYBE_CHANGED = "the password may or may not have been changed; try signing in with the new one"


@pytest.mark.parametrize("rule", [
    dict(kind="drop", when="after"),
    dict(kind="status", status=500, when="after"),
], ids=["dropped", "5xx"])
def test_answer_lost_after_the_change(signed_in, fake, rule):
    """moto changes the password but the answer is lost: the outcome is unknown to authctl, and it
    says so (exit 69), and indeed the new password is the one in force."""
    before = raw_session(signed_in.keyring)
    fake.add_fault(operation="ChangePassword", **rule)
    mark = fake.mark()
    r = change(signed_in, ALICE_PASSWORD, NEW_PASSWORD)
    assert r.code == 69, r
    assert MAYBE_CHANGED in r.err, r
    assert len(change_calls(fake, mark)) == 1, "not repeated"
    assert raw_session(signed_in.keyring) == before
    assert_no_secrets(r, ALICE_PASSWORD, NEW_PASSWORD)
    assert_password_is(signed_in, NEW_PASSWORD, ALICE_PASSWORD)


def test_unreachable_says_nothing_changed(signed_in, fake):
    """Connection refused: the request certainly did not reach the service; no "may have". (The
    session's own endpoint is what went away: another one would be refused before any request.)"""
    dead = f"http://127.0.0.1:{free_port()}/"
    signed_in.keyring.rewrite_session(lambda s: s.update(endpoint=dead))
    r = signed_in.run("change-password", "--stdin", "--timeout", "2", input=f"{ALICE_PASSWORD}\n{NEW_PASSWORD}\n",
                      AUTHCTL_ENDPOINT=dead, timeout=40)
    assert r.code == 69, r
    assert "may or may not" not in r.err, r
    assert_password_is(signed_in, ALICE_PASSWORD, NEW_PASSWORD)  # unchanged


def test_access_token_refused_as_expired_is_refreshed_and_retried(signed_in, fake):
    """The service says the access token has expired (this machine's clock is behind): refresh and
    ask once more (the refused request changed nothing); not a wrong password, not an ended session."""
    fake.add_fault(operation="ChangePassword", kind="error", errorType="NotAuthorizedException",
                   message="Access Token has expired")
    mark = fake.mark()
    r = change(signed_in, ALICE_PASSWORD, NEW_PASSWORD)
    assert r.code == 0, r
    assert CHANGED in r.err, r
    assert [c["status"] for c in change_calls(fake, mark)] == [400, 200]
    assert_password_is(signed_in, NEW_PASSWORD, ALICE_PASSWORD)


def test_session_revoked_elsewhere(any_cli, fake, cognito):
    """The refresh token was revoked (RevokeToken, e.g. from another tool): the service refuses the
    access token ("Access Token has been revoked", the fake as Cognito). That is an ended session,
    not a wrong password: exit 77, the dead session removed."""
    assert any_cli.signin().code == 0
    session = any_cli.keyring.session()
    extra = {"ClientSecret": any_cli.pool.client_secret} if any_cli.secret_client else {}
    cognito.revoke_token(Token=session["refreshToken"], ClientId=any_cli.client_id, **extra)
    r = change(any_cli, ALICE_PASSWORD, NEW_PASSWORD)
    assert r.code == 77, r
    assert "Current password is incorrect" not in r.err, r
    assert "ended" in r.err.lower(), r
    assert any_cli.keyring.session_items() == []
    assert_no_secrets(r, *token_values(session))


# ---------------------------------------------------------------------------
# On a terminal (a pty): three prompts, nothing echoed
# ---------------------------------------------------------------------------


def spawn(cli: Cli, *args: str) -> tuple[pexpect.spawn, io.StringIO]:
    env = cli.env()
    child = pexpect.spawn(str(authctl_bin()), list(args), env=env, cwd=env["HOME"], timeout=30,
                          encoding="utf-8", dimensions=(24, 120))
    seen = io.StringIO()
    child.logfile_read = seen
    return child, seen


def answer(child: pexpect.spawn, prompt: str, text: str) -> None:
    child.expect_exact(prompt)
    child.sendline(text)


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_interactive_mismatch(signed_in, fake):
    before = raw_session(signed_in.keyring)
    mark = fake.mark()
    child, seen = spawn(signed_in, "change-password")
    answer(child, "Current password:", ALICE_PASSWORD)
    answer(child, "New password:", NEW_PASSWORD)
    answer(child, "Repeat new password:", NEW_PASSWORD + "x")
    code = finish(child)
    out = seen.getvalue()
    assert code == 65, out
    assert "Passwords do not match" in out, out
    for secret in (ALICE_PASSWORD, NEW_PASSWORD):
        assert secret not in out, f"echoed on the terminal:\n{out}"
    assert fake.calls(mark) == [], "no request after a mismatch"
    assert raw_session(signed_in.keyring) == before


def test_interactive_change(signed_in, fake):
    mark = fake.mark()
    child, seen = spawn(signed_in, "change-password")
    answer(child, "Current password:", ALICE_PASSWORD)
    answer(child, "New password:", NEW_PASSWORD)
    answer(child, "Repeat new password:", NEW_PASSWORD)
    code = finish(child)
    out = seen.getvalue()
    assert code == 0, out
    assert CHANGED in out, out
    for secret in (ALICE_PASSWORD, NEW_PASSWORD):
        assert secret not in out, f"echoed on the terminal:\n{out}"
    assert [c["status"] for c in change_calls(fake, mark)] == [200]
    assert_password_is(signed_in, NEW_PASSWORD, ALICE_PASSWORD)
