"""`authctl token`: one line on stdout and nothing else, --type, --min-valid, signing in for
runners without a stored session (with and without a Secret Service), --output json."""

from __future__ import annotations

import subprocess
from datetime import datetime, timedelta, timezone

from harness import Cli, authctl_bin, iso_utc, jwt_claims, parse_instant

TOKEN_JSON_KEYS = {"expiresAt", "profile", "token", "type"}


def run_bytes(cli: Cli, *args: str, input: bytes | None = None, **extra: str | None) -> subprocess.CompletedProcess:
    """authctl as run_authctl runs it, but stdout and stderr as bytes: exactly what a script gets."""
    env = cli.env(**extra)
    return subprocess.run(
        [str(authctl_bin()), *args],
        env=env,
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        cwd=env["HOME"],
        start_new_session=True,
    )


def refresh_calls(fake, mark, cli) -> list[dict]:
    """Refresh requests that reached the service: GetTokensFromRefreshToken (moto answers it with
    an HTML 500, so authctl falls back) and InitiateAuth REFRESH_TOKEN_AUTH."""
    return [
        c
        for c in fake.calls(mark, client_ids=[cli.client_id])
        if c["operation"] == "GetTokensFromRefreshToken"
        or (c["operation"] == "InitiateAuth" and c.get("authFlow") in ("REFRESH_TOKEN_AUTH", "REFRESH_TOKEN"))
    ]


def signin_calls(fake, mark, cli) -> list[dict]:
    return [
        c
        for c in fake.calls(mark, client_ids=[cli.client_id])
        if c["operation"] in ("RespondToAuthChallenge",)
        or (c["operation"] == "InitiateAuth" and c.get("authFlow") in ("USER_SRP_AUTH", "USER_PASSWORD_AUTH"))
    ]


def assert_access_token(cli: Cli, token: str) -> dict:
    parts = token.split(".")
    assert len(parts) == 3 and all(parts), f"not a JWT: {token[:40]}..."
    claims = jwt_claims(token)
    assert claims["iss"] == f"https://cognito-idp.{cli.pool.region}.amazonaws.com/{cli.pool.pool_id}", claims
    assert claims["token_use"] == "access", claims
    assert claims["client_id"] == cli.client_id, claims
    assert claims["username"] == "alice", claims
    assert claims["sub"] == cli.pool.subs["alice"], claims
    assert claims["exp"] > datetime.now(timezone.utc).timestamp(), claims
    return claims


def test_token_is_exactly_one_line(any_cli, fake):
    assert any_cli.signin().code == 0
    session = any_cli.keyring.session()
    mark = fake.mark()
    p = run_bytes(any_cli, "token")
    assert p.returncode == 0, p
    assert p.stdout == session["accessToken"].encode() + b"\n", p.stdout[:80]
    assert p.stderr == b"", p.stderr
    assert_access_token(any_cli, p.stdout.decode().rstrip("\n"))
    # A fresh token is printed from the store: nothing reaches the service.
    assert fake.calls(mark, client_ids=[any_cli.client_id]) == []
    assert [c for c in fake.calls(mark) if c.get("operation")] == []


def test_token_type_id(cli):
    any_cli = cli
    assert any_cli.signin().code == 0
    session = any_cli.keyring.session()
    p = run_bytes(any_cli, "token", "--type", "id")
    assert p.returncode == 0, p
    assert p.stdout == session["idToken"].encode() + b"\n"
    assert p.stderr == b""
    claims = jwt_claims(session["idToken"])
    assert claims["token_use"] == "id"
    assert claims["aud"] == any_cli.client_id
    assert claims["iss"] == f"https://cognito-idp.{any_cli.pool.region}.amazonaws.com/{any_cli.pool.pool_id}"
    assert claims["cognito:username"] == "alice"
    assert claims["sub"] == any_cli.pool.subs["alice"]
    p = run_bytes(any_cli, "token", "--type", "access")
    assert p.returncode == 0 and p.stdout == session["accessToken"].encode() + b"\n", p


def test_min_valid(any_cli, fake):
    """moto's tokens live one hour: --min-valid 7200 must refresh, --min-valid 600 must not."""
    assert any_cli.signin().code == 0
    before = any_cli.keyring.session()
    left = (parse_instant(before["accessTokenExpiresAt"]) - datetime.now(timezone.utc)).total_seconds()
    assert 600 < left < 7200, before["accessTokenExpiresAt"]

    mark = fake.mark()
    r = any_cli.run("token", "--min-valid", "600")
    assert r.code == 0, r
    assert r.out == before["accessToken"] + "\n"
    assert refresh_calls(fake, mark, any_cli) == []
    assert any_cli.keyring.session() == before

    mark = fake.mark()
    r = any_cli.run("token", "--min-valid", "7200")
    assert r.code == 0, r
    assert r.err == "", r
    after = any_cli.keyring.session()
    assert r.out == after["accessToken"] + "\n"
    assert after["accessToken"] != before["accessToken"], "--min-valid beyond the token's life must refresh"
    assert after["refreshToken"] == before["refreshToken"]  # moto does not rotate
    ok = [c for c in refresh_calls(fake, mark, any_cli) if c.get("status") == 200]
    assert len(ok) == 1, fake.calls(mark)
    assert_access_token(any_cli, after["accessToken"])


def test_refresh_when_stored_token_expired(any_cli, fake):
    assert any_cli.signin().code == 0
    before = any_cli.keyring.session()
    past = iso_utc(datetime.now(timezone.utc) - timedelta(minutes=5))
    any_cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))
    mark = fake.mark()
    r = any_cli.run("token")
    assert r.code == 0, r
    after = any_cli.keyring.session()
    assert r.out == after["accessToken"] + "\n" and after["accessToken"] != before["accessToken"]
    assert parse_instant(after["accessTokenExpiresAt"]) > datetime.now(timezone.utc) + timedelta(minutes=50)
    calls = refresh_calls(fake, mark, any_cli)
    assert [c for c in calls if c.get("status") == 200 and c.get("authFlow") == "REFRESH_TOKEN_AUTH"], calls
    assert len([c for c in calls if c["operation"] == "GetTokensFromRefreshToken"]) <= 1, calls


def test_not_signed_in(cli, fake):
    mark = fake.mark()
    p = run_bytes(cli, "token")
    assert p.returncode == 77, p
    assert p.stdout == b""
    assert b"Not signed in (profile default)" in p.stderr, p.stderr
    p = run_bytes(cli, "token", "--output", "json", "--type", "id")
    assert p.returncode == 77 and p.stdout == b"", p
    assert fake.calls(mark, client_ids=[cli.client_id]) == []


def test_not_signed_in_session_ended(cli, cognito):
    """The service refused the refresh (the user was signed out everywhere): 77, nothing on stdout,
    the dead session removed."""
    assert cli.signin().code == 0
    past = iso_utc(datetime.now(timezone.utc) - timedelta(minutes=5))
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))
    cognito.admin_user_global_sign_out(UserPoolId=cli.pool.pool_id, Username="alice")
    r = cli.run("token")
    assert r.code == 77, r
    assert r.out == ""
    assert "ended" in r.err.lower(), r
    assert cli.keyring.session_items() == []


def test_password_stdin_signs_in_and_stores(any_cli, fake):
    assert any_cli.keyring.session_items() == []
    mark = fake.mark()
    r = any_cli.run("token", "--username", "alice", "--password-stdin", input="Corr3ct-Horse!\n")
    assert r.code == 0, r
    assert r.err == "", r
    items = any_cli.keyring.session_items()
    assert len(items) == 1, items
    session = any_cli.keyring.session()
    assert r.out == session["accessToken"] + "\n"
    assert session["username"] == "alice"
    assert_access_token(any_cli, session["accessToken"])
    assert signin_calls(fake, mark, any_cli), "it signed in"
    # With a valid session it does not sign in again (and does not need the password).
    mark = fake.mark()
    r = any_cli.run("token", "--username", "alice", "--password-stdin", input="wrong password\n")
    assert r.code == 0, r
    assert r.out == session["accessToken"] + "\n"
    assert signin_calls(fake, mark, any_cli) == []
    assert fake.calls(mark, client_ids=[any_cli.client_id]) == []


def test_password_stdin_wrong_password(cli):
    r = cli.run("token", "--username", "alice", "--password-stdin", input="not-the-password\n")
    assert r.code == 77, r
    assert r.out == ""
    assert "Incorrect username or password" in r.err
    assert cli.keyring.session_items() == []


def test_password_stdin_without_a_secret_service_is_refused_before_signing_in(pool, fake, keyrings):
    """nobus: no session bus at all. As `signin`, `token --password-stdin` is refused before the
    first request (exit 78), nothing on stdout, and the message opens with the one store this host
    can use (not the gnome-keyring recipe)."""
    cli = Cli(pool, keyrings("nobus"), fake.endpoint)
    assert "DBUS_SESSION_BUS_ADDRESS" not in cli.env()
    mark = fake.mark()
    p = run_bytes(cli, "token", "--username", "alice", "--password-stdin", input=b"Corr3ct-Horse!\n")
    assert p.returncode == 78, p
    assert p.stdout == b"", p
    assert fake.calls(mark) == [], "refused before any request"
    first = p.stderr.decode().splitlines()[0]
    assert first.startswith("authctl: No Secret Service on this host"), first
    assert "configure --store" in first and "gnome-keyring" not in first, first
    # The same refusal as signin's: one check.
    r = cli.run("signin", "--username", "alice", "--password-stdin", input="Corr3ct-Horse!\n")
    assert r.code == 78 and r.err.splitlines()[0] == first, r
    # Without --password-stdin and no store: the store's error, not a token.
    r = cli.run("token")
    assert r.code == 78, r
    assert r.out == ""


def test_output_json(cli):
    any_cli = cli
    assert any_cli.signin().code == 0
    session = any_cli.keyring.session()
    r = any_cli.run("token", "--output", "json")
    assert r.code == 0, r
    assert r.out.count("\n") <= 1
    doc = r.json()
    assert set(doc) == TOKEN_JSON_KEYS, doc
    assert doc["token"] == session["accessToken"]
    assert doc["type"] == "access"
    assert doc["profile"] == "default"
    assert parse_instant(doc["expiresAt"]) == parse_instant(session["accessTokenExpiresAt"])

    r = any_cli.run("token", "--output", "json", "--type", "id")
    assert r.code == 0, r
    doc = r.json()
    assert set(doc) == TOKEN_JSON_KEYS, doc
    assert doc["token"] == session["idToken"]
    assert doc["type"] == "id"
    exp = datetime.fromtimestamp(jwt_claims(session["idToken"])["exp"], timezone.utc)
    assert abs((parse_instant(doc["expiresAt"]) - exp).total_seconds()) <= 1


def test_other_profile(cli):
    assert cli.signin("alice", None, "--profile", "ci").code == 0
    session = cli.keyring.session("ci")
    r = cli.run("token", "--profile", "ci")
    assert r.code == 0 and r.out == session["accessToken"] + "\n", r
    r = cli.run("token", "--output", "json", AUTHCTL_PROFILE="ci")
    assert r.code == 0 and r.json()["profile"] == "ci", r
    assert cli.run("token").code == 77



def test_service_unavailable_prints_nothing_and_keeps_the_session(cli, fake):
    """HTTP 503 (JSON, as the real service sends it) on every request: exit 69, nothing on stdout,
    the session kept. GetTokensFromRefreshToken is not repeated (with rotation the first call may
    have used the refresh token up); the REFRESH_TOKEN_AUTH fallback is idempotent and retried."""
    assert cli.signin().code == 0
    past = iso_utc(datetime.now(timezone.utc) - timedelta(minutes=5))
    before = cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))
    fake.add_fault(operation="*", kind="status", status=503, count=-1)
    mark = fake.mark()
    r = cli.run("token", "--timeout", "5")
    assert r.code == 69, r
    assert r.out == ""
    assert cli.keyring.session() == before, "an unreachable service ends nothing"
    calls = refresh_calls(fake, mark, cli)
    assert len([c for c in calls if c["operation"] == "GetTokensFromRefreshToken"]) == 1, calls
    assert 1 <= len([c for c in calls if c["operation"] == "InitiateAuth"]) <= 3, calls
    # The 5xx did not make authctl give up on anything: once the service is back, it refreshes.
    fake.clear_faults()
    r = cli.run("token")
    assert r.code == 0, r
    assert r.out == cli.keyring.session()["accessToken"] + "\n" != before["accessToken"] + "\n"


def add_user(cognito, cli: Cli, name: str, password: str = "Carol-Pass-123!") -> str:
    cognito.admin_create_user(UserPoolId=cli.pool.pool_id, Username=name, MessageAction="SUPPRESS",
                              UserAttributes=[{"Name": "email", "Value": f"{name}@example.com"}])
    cognito.admin_set_user_password(UserPoolId=cli.pool.pool_id, Username=name, Password=password, Permanent=True)
    return password


def test_password_stdin_for_another_user_signs_in_as_that_user(cli, cognito):
    """alice's session is stored; a job asking for carol's token must get carol's, not alice's."""
    password = add_user(cognito, cli, "carol")
    assert cli.signin().code == 0
    r = cli.run("token", "--username", "carol", "--password-stdin", input=password + "\n")
    assert r.code == 0, r
    assert jwt_claims(r.out.strip())["username"] == "carol"
    assert cli.keyring.session()["username"] == "carol"
    # Usernames compare as Cognito's do by default (case-insensitively): no new sign-in.
    r = cli.run("token", "--username", "Carol", "--password-stdin", input="not used\n")
    assert r.code == 0, r
    assert r.out.strip() == cli.keyring.session()["accessToken"]


def test_username_without_password_stdin_is_refused(cli):
    assert cli.signin().code == 0
    r = cli.run("token", "--username", "carol")
    assert r.code == 64, r
    assert "--password-stdin" in r.err
    assert r.out == ""


def test_parallel_jobs_without_a_session_sign_in_once(cli, fake):
    """Eight jobs start together with no session and --password-stdin: one signs in under the
    profile's lock, the others take its session from the store."""
    mark = fake.mark()
    env = cli.env()
    procs = [subprocess.Popen([str(authctl_bin()), "token", "--username", "alice", "--password-stdin"], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=env["HOME"],
                              start_new_session=True) for _ in range(8)]
    outs = [p.communicate(input=(cli.pool.users["alice"] + "\n").encode(), timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), [(p.returncode, e) for p, (_, e) in zip(procs, outs)]
    tokens = {o.decode().strip() for o, _ in outs}
    assert tokens == {cli.keyring.session()["accessToken"]}, "all print the one stored session's token"
    starts = [c for c in signin_calls(fake, mark, cli) if c["operation"] == "InitiateAuth"]
    assert len(starts) == 1, starts


def test_password_stdin_replaces_an_unreadable_session(cli):
    """An unreadable stored item is no valid session: token --password-stdin signs in over it."""
    assert cli.signin().code == 0
    cli.keyring.rewrite_session(lambda s: s.pop("accessToken"))
    r = cli.run("token", "--username", "alice", "--password-stdin", input=cli.pool.users["alice"] + "\n")
    assert r.code == 0, r
    assert r.out.strip() == cli.keyring.session()["accessToken"]
