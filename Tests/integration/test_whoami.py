"""`authctl whoami`: reading the stored session, refresh near expiry, a session ended elsewhere."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from harness import iso_utc, parse_instant, token_values

WHOAMI_KEYS = {"username", "sub", "email", "attributes", "groups", "profile", "userPoolId", "clientId", "accessTokenExpiresAt"}


def refreshes(fake, mark, cli) -> list[dict]:
    """Successful refresh requests that reached the service (InitiateAuth REFRESH_TOKEN_AUTH
    or GetTokensFromRefreshToken)."""
    return [
        c
        for c in fake.calls(mark, client_ids=[cli.client_id], status=200)
        if (c["operation"] == "InitiateAuth" and c.get("authFlow") in ("REFRESH_TOKEN_AUTH", "REFRESH_TOKEN"))
        or c["operation"] == "GetTokensFromRefreshToken"
    ]


def test_whoami_json(any_cli, fake):
    assert any_cli.signin().code == 0
    mark = fake.mark()
    r = any_cli.run("whoami", "--output", "json")
    assert r.code == 0, r
    me = r.json()
    assert WHOAMI_KEYS <= set(me), f"missing {WHOAMI_KEYS - set(me)}"
    assert me["username"] == "alice"
    assert me["sub"] == any_cli.pool.subs["alice"]
    assert me["email"] == "alice@example.com"
    assert me["attributes"]["email"] == "alice@example.com"
    assert me["attributes"]["name"] == "Alice Liddell"
    assert me["groups"] == ["admins"]
    assert me["profile"] == "default"
    assert me["userPoolId"] == any_cli.pool.pool_id
    assert me["clientId"] == any_cli.client_id
    session = any_cli.keyring.session()
    assert parse_instant(me["accessTokenExpiresAt"]) == parse_instant(session["accessTokenExpiresAt"])
    for token in token_values(session):
        assert token not in r.out + r.err
    assert fake.calls(mark, operation="GetUser", status=200), "whoami asks the service (GetUser)"
    assert refreshes(fake, mark, any_cli) == [], "a fresh token must not be refreshed"


def test_whoami_text(cli):
    assert cli.signin().code == 0
    r = cli.run("whoami")
    assert r.code == 0, r
    for expected in ("alice", "alice@example.com", "admins", cli.pool.subs["alice"], cli.pool.pool_id, "default"):
        assert expected in r.out, f"{expected!r} missing from whoami's output:\n{r}"
    assert "eyJ" not in r.out + r.err


def test_whoami_not_signed_in(cli, fake):
    mark = fake.mark()
    r = cli.run("whoami")
    assert r.code == 77, r
    assert "Not signed in (profile default). Run: authctl signin" in r.err
    r = cli.run("whoami", "--profile", "work", "--output", "json")
    assert r.code == 77, r
    assert "Not signed in (profile work)" in r.err
    assert fake.calls(mark, client_ids=[cli.client_id]) == []


def test_whoami_other_profile(cli):
    assert cli.signin("alice", None, "--profile", "work").code == 0
    assert cli.run("whoami", "--profile", "work").code == 0
    assert cli.run("whoami", AUTHCTL_PROFILE="work").code == 0
    assert cli.run("whoami").code == 77


@pytest.mark.parametrize("expires_in,refresh", [(-3600, True), (30, True), (600, False)],
                         ids=["expired", "within-60s", "fresh"])
def test_refresh_when_expiring(any_cli, fake, expires_in, refresh):
    assert any_cli.signin().code == 0
    before = any_cli.keyring.session()
    forced = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=expires_in)
    any_cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=iso_utc(forced)))
    mark = fake.mark()
    r = any_cli.run("whoami", "--output", "json")
    assert r.code == 0, r
    assert r.json()["username"] == "alice"
    after = any_cli.keyring.session()
    if not refresh:
        assert refreshes(fake, mark, any_cli) == []
        assert after["accessToken"] == before["accessToken"]
        return
    assert len(refreshes(fake, mark, any_cli)) == 1, fake.calls(mark)
    assert after["accessToken"] != before["accessToken"]
    assert after["idToken"] != before["idToken"]
    assert after["refreshToken"] == before["refreshToken"]  # moto does not rotate
    assert parse_instant(after["accessTokenExpiresAt"]) > datetime.now(timezone.utc) + timedelta(minutes=50)
    assert parse_instant(after["accessTokenExpiresAt"]) > forced
    assert parse_instant(r.json()["accessTokenExpiresAt"]) == parse_instant(after["accessTokenExpiresAt"])
    # Refreshed once; the next call uses the stored, fresh token.
    mark = fake.mark()
    assert any_cli.run("whoami").code == 0
    assert refreshes(fake, mark, any_cli) == []


@pytest.mark.parametrize("expired", [False, True], ids=["access-token-valid", "access-token-expired"])
def test_session_ended_elsewhere(any_cli, cognito, expired):
    """moto's AdminUserGlobalSignOut really ends the session: it forgets every access token of the
    user (GetUser -> NotAuthorizedException "Invalid token") and marks the refresh tokens revoked
    (REFRESH_TOKEN_AUTH -> "Refresh Token has been revoked"). moto never expires tokens by time."""
    assert any_cli.signin().code == 0
    if expired:
        past = iso_utc(datetime.now(timezone.utc) - timedelta(hours=1))
        any_cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))
    cognito.admin_user_global_sign_out(UserPoolId=any_cli.pool.pool_id, Username="alice")
    r = any_cli.run("whoami")
    assert r.code == 77, r
    assert "ended" in r.err.lower(), r
    assert any_cli.keyring.session_items() == [], "the stale session must be removed"
    r = any_cli.run("whoami")
    assert r.code == 77, r
    assert "Not signed in (profile default)" in r.err


def test_two_devices_have_independent_stores(cli, keyrings):
    other = cli.with_keyring(keyrings(name="device-b"))
    assert cli.signin().code == 0
    assert other.run("whoami").code == 77
    assert cli.run("whoami").code == 0
    assert other.signin().code == 0
    assert cli.keyring.session()["refreshToken"] != other.keyring.session()["refreshToken"]


def test_client_secret_missing_is_a_configuration_error_and_keeps_the_session(pool, keyring, fake):
    """A confidential client's secret missing in this shell: Cognito refuses the refresh for the
    SECRET_HASH, not the refresh token. That is exit 78 naming the fix; the session stays."""
    from harness import Cli
    cli = Cli(pool, keyring, fake.endpoint, secret_client=True)
    assert cli.signin().code == 0
    past = iso_utc(datetime.now(timezone.utc) - timedelta(hours=1))
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))
    before = cli.keyring.session()
    r = cli.run("whoami", AUTHCTL_CLIENT_SECRET=None)
    assert r.code == 78, r
    assert "AUTHCTL_CLIENT_SECRET" in r.err and "configure" in r.err, r
    assert cli.keyring.session() == before, "a good session must not be removed for a configuration problem"
    assert cli.run("whoami").code == 0, "with the secret back, the same session refreshes"


def test_access_token_refused_as_expired_is_refreshed_once(cli, fake):
    """This machine's clock behind the service's: the stored expiry looks fine, but Cognito says the
    access token has expired. One refresh and the call again; the session is not thrown away."""
    assert cli.signin().code == 0
    before = cli.keyring.session()
    fake.add_fault(operation="GetUser", kind="error", errorType="NotAuthorizedException",
                   message="Access Token has expired", count=1)
    mark = fake.mark()
    r = cli.run("whoami", "--output", "json")
    assert r.code == 0, r
    assert r.json()["username"] == "alice"
    assert len(refreshes(fake, mark, cli)) == 1, fake.calls(mark)
    assert len(fake.calls(mark, operation="GetUser")) == 2
    assert cli.keyring.session()["accessToken"] != before["accessToken"]


def test_access_token_refused_as_expired_twice_keeps_the_session(cli, fake):
    """Refused as expired even after a refresh: a token just issued is not expired, so the clocks
    disagree; exit 77 saying so, no loop, and the session (its refresh token is fine) is kept."""
    assert cli.signin().code == 0
    fake.add_fault(operation="GetUser", kind="error", errorType="NotAuthorizedException",
                   message="Access Token has expired", count=-1)
    mark = fake.mark()
    r = cli.run("whoami")
    assert r.code == 77, r
    assert "clock" in r.err and "kept" in r.err, r
    assert len(fake.calls(mark, operation="GetUser")) == 2
    assert len(cli.keyring.session_items()) == 1
    fake.clear_faults()
    assert cli.run("whoami").code == 0


def test_a_refused_session_is_removed_only_while_it_is_the_stored_one(cli, fake, cognito):
    """whoami's GetUser is slow; meanwhile the session is ended and the person signs in again. When
    whoami's (old) token is then refused, the new session must stay: only the refused one may go."""
    import subprocess
    import time
    from harness import authctl_bin
    assert cli.signin().code == 0
    fake.add_fault(operation="GetUser", kind="stall", seconds=4, count=1)
    env = cli.env()
    slow = subprocess.Popen([str(authctl_bin()), "whoami"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=env["HOME"], start_new_session=True)
    time.sleep(1)
    cognito.admin_user_global_sign_out(UserPoolId=cli.pool.pool_id, Username="alice")
    assert cli.signin().code == 0
    fresh = cli.keyring.session()
    out, err = slow.communicate(timeout=30)
    assert slow.returncode == 77, (out, err)
    assert "newer session" in err and "kept" in err, err
    assert cli.keyring.session() == fresh
    assert cli.run("whoami").code == 0
