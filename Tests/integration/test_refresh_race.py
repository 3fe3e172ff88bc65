"""The figure to meet: 20 `authctl token` processes started together on a session whose
access token has expired all print a valid token, exactly one refresh request reaches the service,
and the stored session is intact afterwards; the same with refresh-token rotation, where a lost
race must never leave the store holding a refresh token the service has already replaced.

Counted at the fake's request log. Without rotation the fake forwards GetTokensFromRefreshToken to
moto, which answers with an HTML 500 (it lacks the operation), so the one process that refreshes
makes one GetTokensFromRefreshToken and then one InitiateAuth REFRESH_TOKEN_AUTH. moto has no
rotation at all, so the rotation race runs against the fake's own GetTokensFromRefreshToken
(`getTokensFromRefreshToken: "fake"`), which rotates for app clients created with
RefreshTokenRotation ENABLED and then refuses REFRESH_TOKEN_AUTH for them.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import time
from datetime import datetime, timedelta, timezone

import pytest

from harness import Cli, authctl_bin, iso_utc, jwt_claims, parse_instant

PROCESSES = 20


def start_together(cli: Cli, n: int = PROCESSES, *args: str) -> list[tuple[int, str, str]]:
    """n `authctl token` processes started back to back (no waiting between them), then awaited."""
    env = cli.env()
    procs = [
        subprocess.Popen(
            [str(authctl_bin()), "token", *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=env["HOME"],
            start_new_session=True,
        )
        for _ in range(n)
    ]
    results = []
    deadline = time.monotonic() + 45
    for p in procs:
        try:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        results.append((p.returncode, out.decode(), err.decode()))
    return results


def expire_stored_access_token(cli: Cli) -> dict:
    past = iso_utc(datetime.now(timezone.utc) - timedelta(minutes=10))
    return cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))


def assert_valid_access_token(cli: Cli, token: str) -> None:
    parts = token.split(".")
    assert len(parts) == 3 and all(parts), f"not a JWT: {token[:40]}..."
    claims = jwt_claims(token)
    assert claims["iss"] == f"https://cognito-idp.{cli.pool.region}.amazonaws.com/{cli.pool.pool_id}"
    assert claims["token_use"] == "access"
    assert claims["client_id"] == cli.client_id
    assert claims["username"] == "alice"
    assert claims["exp"] > time.time() + 300


def assert_all_printed(cli: Cli, results, stored_token: str) -> None:
    failures = [r for r in results if r[0] != 0 or r[1].count("\n") != 1 or not r[1].endswith("\n")]
    assert not failures, f"{len(failures)} of {len(results)} failed, e.g. exit {failures[0][0]}: {failures[0][2]!r}"
    tokens = {out[:-1] for _, out, _ in results}
    for token in tokens:
        assert_valid_access_token(cli, token)
    # One refresh: everyone prints the token it produced (a process that printed the old,
    # expired token, or refreshed on its own, would show up here).
    assert tokens == {stored_token}, f"{len(tokens)} different tokens printed"
    assert all(err == "" for _, _, err in results), [err for _, _, err in results if err][:3]


def assert_stored_session_intact(cli: Cli, before: dict) -> dict:
    items = cli.keyring.session_items()
    assert len(items) == 1, items
    session = json.loads(items[0]["secret"])  # parses: replaced whole, never half-written
    assert set(session) >= set(before) - {"refreshToken"}, set(before) - set(session)
    assert session["username"] == "alice"
    assert session["userPoolId"] == before["userPoolId"]
    assert session["clientId"] == cli.client_id
    assert parse_instant(session["accessTokenExpiresAt"]) > datetime.now(timezone.utc) + timedelta(minutes=50)
    assert session["accessToken"] != before["accessToken"]
    assert session["idToken"] != before["idToken"]
    return session


def refresh_requests(fake, mark, cli) -> tuple[list[dict], list[dict]]:
    calls = fake.calls(mark, client_ids=[cli.client_id])
    gtfrt = [c for c in calls if c["operation"] == "GetTokensFromRefreshToken"]
    rta = [c for c in calls if c["operation"] == "InitiateAuth" and c.get("authFlow") in ("REFRESH_TOKEN_AUTH", "REFRESH_TOKEN")]
    others = [c for c in calls if c not in gtfrt and c not in rta]
    assert others == [], f"unexpected requests: {others}"
    return gtfrt, rta


@pytest.mark.parametrize("client,stall", [("public", 0), ("secret", 1.5)],
                         ids=["public-as-fast-as-it-goes", "secret-slow-refresh"])
def test_race_without_rotation(pool, keyring, fake, client, stall):
    """slow-refresh: the fake holds the one refresh for 1.5 s, so the other 19 processes are
    certainly started and contending while it is under way."""
    cli = Cli(pool, keyring, fake.endpoint, secret_client=client == "secret")
    assert cli.signin().code == 0
    before = expire_stored_access_token(cli)
    if stall:
        fake.add_fault(operation="InitiateAuth", authFlow="REFRESH_TOKEN_AUTH", kind="stall", seconds=stall, count=-1)
    mark = fake.mark()
    started = time.monotonic()
    results = start_together(cli)
    elapsed = time.monotonic() - started

    gtfrt, rta = refresh_requests(fake, mark, cli)
    # Exactly one process refreshed: one REFRESH_TOKEN_AUTH, after at most one
    # GetTokensFromRefreshToken (moto's HTML 500: not offered, so fall back).
    assert len(rta) == 1, rta
    assert rta[0]["status"] == 200, rta
    assert len(gtfrt) <= 1, gtfrt
    assert all(c["status"] == 500 and c["handledBy"] == "moto" for c in gtfrt), gtfrt
    if stall:
        assert rta[0].get("stalled") == stall

    session = assert_stored_session_intact(cli, before)
    assert session["refreshToken"] == before["refreshToken"], "moto does not rotate: the refresh token stays"
    assert_all_printed(cli, results, session["accessToken"])
    assert elapsed < 30, f"20 processes took {elapsed:.1f}s"


@pytest.fixture
def rotating_cli(request, pool, keyring, fake, cognito) -> Cli:
    """An app client with RefreshTokenRotation ENABLED (no grace period), created through the fake
    so that it knows the setting; the fake answers GetTokensFromRefreshToken itself."""
    secret = getattr(request, "param", "public") == "secret"
    fake.set_config(getTokensFromRefreshToken="fake")  # reset to "upstream" after each test (conftest)
    client = cognito.create_user_pool_client(
        UserPoolId=pool.pool_id,
        ClientName="authctl-rotating",
        ExplicitAuthFlows=["ALLOW_USER_SRP_AUTH", "ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
        GenerateSecret=secret,
        RefreshTokenRotation={"Feature": "ENABLED", "RetryGracePeriodSeconds": 0},
    )["UserPoolClient"]
    if secret:
        rotating = dataclasses.replace(pool, secret_client_id=client["ClientId"], client_secret=client["ClientSecret"])
    else:
        rotating = dataclasses.replace(pool, client_id=client["ClientId"])
    return Cli(rotating, keyring, fake.endpoint, secret_client=secret)


@pytest.mark.parametrize("rotating_cli", ["public", "secret"], indirect=True)
def test_race_with_rotation(rotating_cli, fake, cognito):
    cli = rotating_cli
    assert cli.signin().code == 0
    before = expire_stored_access_token(cli)
    # The one refresh is held 1.5 s at the fake: the other 19 processes contend meanwhile.
    fake.add_fault(operation="GetTokensFromRefreshToken", kind="stall", seconds=1.5, count=1)
    mark = fake.mark()
    results = start_together(cli)

    gtfrt, rta = refresh_requests(fake, mark, cli)
    assert rta == [], "REFRESH_TOKEN_AUTH is refused with rotation: it must not be tried"
    assert len(gtfrt) == 1, gtfrt
    assert gtfrt[0]["status"] == 200 and gtfrt[0].get("note") == "rotated", gtfrt

    session = assert_stored_session_intact(cli, before)
    assert session["refreshToken"] != before["refreshToken"], "the rotated refresh token must replace the old one"
    assert_all_printed(cli, results, session["accessToken"])

    # The old refresh token is used up at the service (no grace period) ...
    kwargs = {"ClientSecret": cli.pool.client_secret} if cli.secret_client else {}
    with pytest.raises(cognito.exceptions.ClientError) as refused:
        cognito.get_tokens_from_refresh_token(RefreshToken=before["refreshToken"], ClientId=cli.client_id, **kwargs)
    assert refused.value.response["Error"]["Code"] == "RefreshTokenReuseException"

    # ... and the stored one is the service's current one: a further forced refresh works and
    # rotates again.
    expire_stored_access_token(cli)
    mark = fake.mark()
    r = cli.run("token")
    assert r.code == 0, r
    gtfrt, rta = refresh_requests(fake, mark, cli)
    assert len(gtfrt) == 1 and gtfrt[0]["status"] == 200 and rta == [], gtfrt + rta
    again = cli.keyring.session()
    assert r.out == again["accessToken"] + "\n"
    assert again["refreshToken"] not in (before["refreshToken"], session["refreshToken"])
    assert_valid_access_token(cli, again["accessToken"])


def test_race_with_rotation_then_whoami(rotating_cli, fake):
    """After the rotating race, another command (whoami: GetUser) works with what was stored."""
    cli = rotating_cli
    assert cli.signin().code == 0
    expire_stored_access_token(cli)
    results = start_together(cli, 8)
    assert all(code == 0 for code, _, _ in results), results
    r = cli.run("whoami", "--output", "json")
    assert r.code == 0, r
    assert r.json()["username"] == "alice"


def test_rotation_passing_5xx_keeps_the_session(rotating_cli, fake):
    """A passing HTTP 503 from GetTokensFromRefreshToken (JSON, the real service's kind, not an
    emulator's HTML page): authctl may try REFRESH_TOKEN_AUTH once, which a rotating client refuses;
    that refusal must not end the session (only the fallback's tokens are trusted, never its refusal),
    and the next call uses GetTokensFromRefreshToken again."""
    cli = rotating_cli
    assert cli.signin().code == 0
    before = expire_stored_access_token(cli)
    fake.add_fault(operation="GetTokensFromRefreshToken", kind="status", status=503, count=1)
    r = cli.run("token")
    assert r.code == 69, r
    assert r.out == ""
    assert cli.keyring.session() == before, "the session must survive a passing 5xx"
    mark = fake.mark()
    r = cli.run("token")
    assert r.code == 0, r
    gtfrt, rta = refresh_requests(fake, mark, cli)
    assert len(gtfrt) == 1 and gtfrt[0]["status"] == 200 and rta == [], gtfrt + rta
    after = cli.keyring.session()
    assert r.out == after["accessToken"] + "\n"
    assert after["refreshToken"] != before["refreshToken"]


@pytest.mark.parametrize("status", [502, 503])
def test_rotation_proxy_error_page_keeps_the_session(rotating_cli, fake, status):
    """A load balancer's HTML error page (not the service's JSON) in front of a rotating client: not
    taken as 'operation not offered'. The fallback REFRESH_TOKEN_AUTH is refused for rotation, and
    that refusal must not end the session."""
    cli = rotating_cli
    assert cli.signin().code == 0
    before = expire_stored_access_token(cli)
    fake.add_fault(operation="GetTokensFromRefreshToken", kind="html", status=status, count=1)
    r = cli.run("token")
    assert r.code == 69, r
    assert r.out == ""
    assert cli.keyring.session() == before, "the session must survive a proxy's error page"
    r = cli.run("token")
    assert r.code == 0, r
    assert r.out == cli.keyring.session()["accessToken"] + "\n"


def test_signin_waits_for_a_refresh_under_way(cli):
    """The refresh lock is $XDG_RUNTIME_DIR/authctl/<profile>.lock; signin stores under it, so a
    refresh that started first cannot overwrite the new session with the one it replaced."""
    import fcntl
    import os
    lock_dir = cli.keyring.runtime_dir / "authctl"
    lock_dir.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(lock_dir / "default.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    env = cli.env()
    proc = subprocess.Popen([str(authctl_bin()), "signin", "--username", "alice", "--password-stdin"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=env["HOME"],
                            start_new_session=True)
    proc.stdin.write((cli.pool.users["alice"] + "\n").encode())
    proc.stdin.close()
    try:
        time.sleep(3)
        assert proc.poll() is None, "signin stored its session without taking the lock"
        assert cli.keyring.session_items() == []
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    assert proc.wait(timeout=30) == 0, proc.stderr.read()
    assert cli.keyring.session()["username"] == "alice"
