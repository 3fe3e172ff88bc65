"""`authctl signin` end to end: the built binary, the SRP-checking fake in front of moto,
and a private gnome-keyring."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from harness import ALICE_PASSWORD, BOB_TEMP_PASSWORD, NEW_PASSWORD, jwt_claims, parse_instant, token_values

SIGNED_IN = re.compile(r"^Signed in as alice \(profile default\); access token valid until \S.*$", re.M)
SESSION_KEYS = {
    "version", "profile", "username", "sub", "userPoolId", "clientId", "region", "endpoint",
    "accessToken", "idToken", "refreshToken", "accessTokenExpiresAt", "issuedAt",
}
AUTH_OPS = ("InitiateAuth", "RespondToAuthChallenge")


def auth_calls(fake, mark, cli):
    return [
        (c["operation"], c.get("authFlow") or c.get("challengeName"), c["status"])
        for c in fake.calls(mark, client_ids=[cli.client_id])
        if c["operation"] in AUTH_OPS
    ]


def assert_no_tokens(text: str, session: dict | None = None):
    assert "eyJ" not in text, f"a JWT in output:\n{text}"
    for token in token_values(session or {}):
        assert token not in text


def assert_stored_session(cli, username="alice", profile="default"):
    session = cli.keyring.session(profile)
    assert session is not None, "no session item in the Secret Service"
    assert SESSION_KEYS <= set(session), f"missing {SESSION_KEYS - set(session)}"
    assert session["version"] == 1
    assert session["profile"] == profile
    assert session["username"] == username
    assert session["sub"] == cli.pool.subs[username]
    assert session["userPoolId"] == cli.pool.pool_id
    assert session["clientId"] == cli.client_id
    assert session["region"] == cli.pool.region
    assert jwt_claims(session["accessToken"])["username"] == username
    assert jwt_claims(session["idToken"])["cognito:username"] == username
    assert session["refreshToken"]
    expires = parse_instant(session["accessTokenExpiresAt"])
    now = datetime.now(timezone.utc)
    assert now + timedelta(minutes=50) < expires <= now + timedelta(minutes=61), expires  # moto: ExpiresIn 3600
    assert abs(parse_instant(session["issuedAt"]) - now) < timedelta(minutes=2)
    items = cli.keyring.session_items(profile)
    assert len(items) == 1, items
    attrs = items[0]["attributes"]
    assert attrs["kind"] == "session"
    assert attrs["profile"] == profile
    assert attrs["user_pool_id"] == cli.pool.pool_id
    assert attrs["client_id"] == cli.client_id
    assert "authctl" in items[0].get("label", "").lower(), items[0]
    return session


# ---------------------------------------------------------------------------
# Success
# ---------------------------------------------------------------------------


def test_signin_srp(any_cli, fake):
    mark = fake.mark()
    r = any_cli.signin()
    assert r.code == 0, r
    assert r.out == "", r
    assert SIGNED_IN.search(r.err), r
    assert auth_calls(fake, mark, any_cli) == [
        ("InitiateAuth", "USER_SRP_AUTH", 200),
        ("RespondToAuthChallenge", "PASSWORD_VERIFIER", 200),
    ]
    session = assert_stored_session(any_cli)
    assert_no_tokens(r.err, session)


def test_signin_srp_is_the_default_and_flow_srp_is_accepted(cli, fake):
    mark = fake.mark()
    r = cli.signin("alice", None, "--flow", "srp")
    assert r.code == 0, r
    assert ("InitiateAuth", "USER_SRP_AUTH", 200) in auth_calls(fake, mark, cli)


def test_signin_password_flow(any_cli, fake):
    mark = fake.mark()
    r = any_cli.signin("alice", None, "--flow", "password")
    assert r.code == 0, r
    assert r.out == ""
    assert SIGNED_IN.search(r.err), r
    assert auth_calls(fake, mark, any_cli) == [("InitiateAuth", "USER_PASSWORD_AUTH", 200)]
    assert_stored_session(any_cli)


def test_signin_json_output_has_no_token(any_cli):
    r = any_cli.signin("alice", None, "--output", "json")
    assert r.code == 0, r
    out = r.json()
    assert {"username", "sub", "profile", "userPoolId", "accessTokenExpiresAt"} <= set(out), out
    assert out["username"] == "alice"
    assert out["sub"] == any_cli.pool.subs["alice"]
    assert out["profile"] == "default"
    assert out["userPoolId"] == any_cli.pool.pool_id
    session = any_cli.keyring.session()
    assert parse_instant(out["accessTokenExpiresAt"]) == parse_instant(session["accessTokenExpiresAt"])
    assert not {"accessToken", "idToken", "refreshToken"} & set(out)
    assert_no_tokens(r.out + r.err, session)


def test_srp_calls_share_one_connection_and_identify_the_client(cli, fake):
    mark = fake.mark()
    assert cli.signin().code == 0
    calls = [c for c in fake.calls(mark, client_ids=[cli.client_id]) if c["operation"] in AUTH_OPS]
    assert len(calls) == 2
    assert calls[0]["conn"] == calls[1]["conn"], "the two SRP calls must reuse one connection"
    for c in fake.calls(mark):
        assert (c.get("userAgent") or "").startswith("authctl/"), c
        assert c.get("contentType") == "application/x-amz-json-1.1", c


def test_username_from_environment(cli):
    r = cli.run("signin", "--password-stdin", input=ALICE_PASSWORD + "\n", AUTHCTL_USERNAME="alice")
    assert r.code == 0, r
    assert_stored_session(cli)


@pytest.mark.parametrize("tz,lang", [("Pacific/Kiritimati", "de_DE.UTF-8"), ("America/Adak", "fr_FR.UTF-8")])
def test_srp_timestamp_ignores_locale_and_time_zone(cli, tz, lang):
    """The fake checks TIMESTAMP: English names, UTC, within 5 minutes. UTC+14 and UTC-10
    put the local date a day away from UTC's."""
    r = cli.run("signin", "--username", "alice", "--password-stdin", input=ALICE_PASSWORD + "\n",
                TZ=tz, LANG=lang, LC_ALL=lang, LC_TIME=lang)
    assert r.code == 0, r


def test_signin_with_profile(cli):
    r = cli.signin("alice", None, "--profile", "work")
    assert r.code == 0, r
    assert "(profile work)" in r.err
    assert_stored_session(cli, profile="work")
    assert cli.keyring.session("default") is None


# ---------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("flow", ["srp", "password"])
def test_wrong_password_and_unknown_user_look_the_same(any_cli, fake, flow):
    mark = fake.mark()
    wrong = any_cli.signin("alice", "Wrong-Passw0rd!", "--flow", flow)
    unknown = any_cli.signin("nobody", "Wrong-Passw0rd!", "--flow", flow)
    for r in (wrong, unknown):
        assert r.code == 77, r
        assert "Incorrect username or password" in r.err, r
        assert r.out == ""
    assert wrong.err.replace("alice", "<user>") == unknown.err.replace("nobody", "<user>")
    assert any_cli.keyring.session_items() == []
    if flow == "srp":  # the wrong password really went through the verifier and was refused there
        assert ("RespondToAuthChallenge", "PASSWORD_VERIFIER", 400) in auth_calls(fake, mark, any_cli)
    else:
        assert ("InitiateAuth", "USER_PASSWORD_AUTH", 400) in auth_calls(fake, mark, any_cli)


@pytest.mark.parametrize("flow", ["srp", "password"])
def test_new_password_required(any_cli, fake, flow):
    mark = fake.mark()
    r = any_cli.run("signin", "--username", "bob", "--password-stdin", "--flow", flow,
                    input=f"{BOB_TEMP_PASSWORD}\n{NEW_PASSWORD}\n")
    assert r.code == 0, r
    assert re.search(r"^Signed in as bob \(profile default\)", r.err, re.M), r
    assert ("RespondToAuthChallenge", "NEW_PASSWORD_REQUIRED", 200) in auth_calls(fake, mark, any_cli)
    assert_stored_session(any_cli, username="bob")
    assert NEW_PASSWORD not in r.out + r.err
    # The new password works from now on, the temporary one no longer does.
    again = any_cli.signin("bob", NEW_PASSWORD, "--flow", flow)
    assert again.code == 0, again
    old = any_cli.signin("bob", BOB_TEMP_PASSWORD, "--flow", flow)
    assert old.code == 77, old


def test_no_tty_and_no_password_stdin_is_a_usage_error(cli, fake):
    mark = fake.mark()
    r = cli.run("signin", "--username", "alice")
    assert r.code == 64, r
    assert "--password-stdin" in r.err
    assert fake.calls(mark, client_ids=[cli.client_id]) == []


def test_no_tty_and_no_username_is_a_usage_error(cli, fake):
    mark = fake.mark()
    r = cli.run("signin", "--password-stdin", input=ALICE_PASSWORD + "\n")
    assert r.code == 64, r
    assert "--username" in r.err
    assert fake.calls(mark, client_ids=[cli.client_id]) == []


def test_help_offers_no_password_option(cli):
    r = cli.run("signin", "--help")
    assert r.code == 0, r
    text = r.out + r.err
    assert "--password-stdin" in text
    assert not re.search(r"--password(?!-stdin)", text), text
    assert not re.search(r"--new-password", text), text
    r = cli.run("configure", "--help")
    assert r.code == 0, r
    assert not re.search(r"--client-secret(?!-stdin)", r.out + r.err), r.out


def test_signing_in_again_revokes_the_replaced_refresh_token(any_cli, fake, cognito):
    """A second sign-in replaces the stored session; the replaced refresh token is revoked
    (RevokeToken, which the fake implements as Cognito does: moto lacks it), not left usable."""
    assert any_cli.signin().code == 0
    first = any_cli.keyring.session()["refreshToken"]
    mark = fake.mark()
    r = any_cli.signin()
    assert r.code == 0, r
    assert "warning" not in r.err, r
    assert any_cli.keyring.session()["refreshToken"] != first
    assert [c["status"] for c in fake.calls(mark, operation="RevokeToken")] == [200]
    params = {"REFRESH_TOKEN": first}
    if any_cli.secret_client:
        import base64, hashlib, hmac
        digest = hmac.new(any_cli.pool.client_secret.encode(), ("alice" + any_cli.client_id).encode(), hashlib.sha256).digest()
        params["SECRET_HASH"] = base64.b64encode(digest).decode()
    with pytest.raises(cognito.exceptions.NotAuthorizedException):
        cognito.initiate_auth(ClientId=any_cli.client_id, AuthFlow="REFRESH_TOKEN_AUTH", AuthParameters=params)
    # The new session works.
    assert any_cli.run("whoami").code == 0


def test_signing_in_again_says_when_the_old_token_could_not_be_revoked(cli, fake):
    assert cli.signin().code == 0
    fake.add_fault(operation="RevokeToken", kind="status", status=500, count=-1)
    r = cli.signin()
    assert r.code == 0, r
    assert "could not be revoked" in r.err and "stays usable until it expires" in r.err, r
    assert cli.run("whoami").code == 0


@pytest.mark.parametrize("args,prompt", [
    (["signin", "--username", "alice"], "Password for alice: "),  # echo off
    (["signin"], "Username: "),  # echo on
])
def test_ctrl_c_at_a_prompt_ends_its_line(cli, args, prompt):
    """Ctrl-C at a prompt: the process ends on the signal, the cursor on a line of its own (the
    shell's prompt no longer starts after "Password for alice: "), echo restored."""
    import pexpect

    from harness import authctl_bin

    env = cli.env(AUTHCTL_USERNAME=None)
    child = pexpect.spawn(str(authctl_bin()), args, env=env, cwd=env["HOME"], timeout=30, encoding="utf-8")
    child.expect_exact(prompt)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.signalstatus == 2 or child.exitstatus == 130, (child.signalstatus, child.exitstatus)
    assert child.before.endswith("\n") and child.before.strip(" ^C\r\n") == "", repr(child.before)
