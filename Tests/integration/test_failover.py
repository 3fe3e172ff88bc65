"""Multi-Region failover: with a replica configured (--failover-region /
AUTHCTL_FAILOVER_REGION / failover_region, --failover-endpoint for emulators), sign-in and refresh
go once to the replica when the primary does not answer (no connection, timeout, 5xx), never after
a refusal (4xx); a challenge sequence stays in one region; the session says which region issued
it (status); writes never go to the replica and say it is read-only.

The fake's second listener plays the replica (fake_cognito/replica.py): the same state, writes
refused; faults with "endpoint": "primary" take only the primary down.
"""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from harness import ALICE_PASSWORD, cognito_client

REPLICA_REGION = "us-west-2"


@pytest.fixture
def replica(cli, fake):
    return {"AUTHCTL_FAILOVER_REGION": REPLICA_REGION, "AUTHCTL_FAILOVER_ENDPOINT": fake.replica_endpoint}


def primary_down(fake, **rule):
    fake.add_fault(**{"operation": "*", "kind": "status", "status": 503, "count": -1, "endpoint": "primary", **rule})


def calls(fake, mark, endpoint: str, operation: str | None = None):
    match = {"endpoint": endpoint}
    if operation:
        match["operation"] = operation
    return [c["operation"] for c in fake.calls(mark, **match)]


@pytest.mark.parametrize("fault", [
    {"kind": "status", "status": 503},
    {"kind": "drop"},
    {"kind": "stall", "seconds": 8},
], ids=["503", "connection", "timeout"])
def test_signin_fails_over_when_the_primary_does_not_answer(cli, fake, replica, fault):
    primary_down(fake, **fault)
    mark = fake.mark()
    r = cli.signin("alice", None, "--timeout", "6", **replica)
    assert r.code == 0, r
    assert f"did not answer" in r.err and f"signing in at the replica in {REPLICA_REGION}" in r.err, r
    assert "InitiateAuth" in calls(fake, mark, "replica"), fake.calls(mark)
    s = cli.run("status", "--output", "json", **replica)
    profile = s.json()["profiles"][0]
    assert profile["issuedIn"] == REPLICA_REGION and profile["issuedByReplica"] is True, s
    assert f"(issued by the replica in {REPLICA_REGION})" in cli.run("status", **replica).out

    # The primary is back: the replica's session works there (one pair for endpoint binding).
    fake.clear_faults()
    w = cli.run("whoami", **replica)
    assert w.code == 0, w
    assert cli.run("signout", **replica).code == 0


def test_a_refusal_never_fails_over(cli, fake, replica):
    primary_down(fake, kind="error", status=400, errorType="InvalidParameterException", message="Injected refusal")
    mark = fake.mark()
    r = cli.signin(**replica)
    assert r.code != 0, r
    assert "replica" not in r.err, r
    assert calls(fake, mark, "replica") == []


def test_without_a_replica_nothing_fails_over(cli, fake):
    primary_down(fake)
    mark = fake.mark()
    r = cli.signin()
    assert r.code == 69, r
    assert calls(fake, mark, "replica") == []


def test_a_challenge_sequence_stays_in_one_region(cli, fake, replica):
    primary_down(fake, operation="RespondToAuthChallenge")
    mark = fake.mark()
    r = cli.signin(**replica)
    assert r.code == 0, r
    assert calls(fake, mark, "primary") == ["InitiateAuth", "RespondToAuthChallenge"] * (len(calls(fake, mark, "primary")) // 2)
    # The replica starts from the first step, with a challenge session of its own.
    assert calls(fake, mark, "replica") == ["InitiateAuth", "RespondToAuthChallenge"], fake.calls(mark)


def test_refresh_fails_over(cli, fake, replica):
    assert cli.signin(**replica).code == 0
    before = cli.keyring.session()
    primary_down(fake)
    mark = fake.mark()
    r = cli.run("token", "--min-valid", "3700", **replica)
    assert r.code == 0, r
    assert f"refreshing at the replica in {REPLICA_REGION}" in r.err, r
    assert calls(fake, mark, "replica"), fake.calls(mark)
    after = cli.keyring.session()
    assert after["accessToken"] != before["accessToken"]
    assert after.get("issuingRegion") == REPLICA_REGION, after


def test_writes_never_go_to_the_replica(cli, fake, replica):
    assert cli.signin(**replica).code == 0
    primary_down(fake)
    mark = fake.mark()
    r = cli.run("account", "update", "--attribute", "nickname=al", **replica)
    assert r.code == 69, r
    assert "is read-only" in r.err and REPLICA_REGION in r.err, r
    assert calls(fake, mark, "replica") == []


def test_the_fake_replica_is_read_only(fake, pool):
    # OperationNotEnabledException: botocore's model (1.44) documents it for "operations that are not
    # supported in secondary replica regions" (the installed botocore may predate it: checked by code).
    replica = cognito_client(fake.replica_endpoint)
    with pytest.raises(ClientError) as refused:
        replica.admin_set_user_password(UserPoolId=pool.pool_id, Username="alice", Password="Other-Passw0rd!", Permanent=True)
    assert refused.value.response["Error"]["Code"] == "OperationNotEnabledException"
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert replica.admin_get_user(UserPoolId=pool.pool_id, Username="alice")["Username"] == "alice"


def test_a_write_sent_to_a_replica_as_if_it_were_the_primary_says_why(cli, fake):
    # A profile whose endpoint is the replica's (its region set to the replica's by mistake): sign-in
    # works there, a write is refused with OperationNotEnabledException, and authctl says what that
    # means (decided from the error type, exit 78: the configuration), not only the service's words.
    at_replica = {"AUTHCTL_ENDPOINT": fake.replica_endpoint}
    assert cli.signin(**at_replica).code == 0
    mark = fake.mark()
    r = cli.run("account", "update", "--attribute", "nickname=al", **at_replica)
    assert r.code == 78, r
    assert "OperationNotEnabledException" in r.err and "read-only" in r.err and "primary region" in r.err, r
    assert calls(fake, mark, "replica", "UpdateUserAttributes") == ["UpdateUserAttributes"], fake.calls(mark)


# ---- sign-out: RevokeToken and GlobalSignOut are no directory writes, and fail over ----

def test_signout_revokes_at_the_replica_when_the_primary_is_out(cli, fake, pool, replica):
    assert cli.signin(**replica).code == 0
    refresh_token = cli.keyring.session()["refreshToken"]
    primary_down(fake)
    mark = fake.mark()
    r = cli.run("signout", "--output", "json", **replica)
    assert r.code == 0, r
    assert f"revoking the refresh token at the replica in {REPLICA_REGION}" in r.err, r
    assert r.json()["revokeToken"] == "ok" and r.json()["signedOutLocally"] is True, r
    assert calls(fake, mark, "replica", "RevokeToken") == ["RevokeToken"], fake.calls(mark)
    assert cli.keyring.session() is None
    # The replica's revocation holds at the primary (one directory): the token is dead there too.
    fake.clear_faults()
    primary = cognito_client(fake.endpoint)
    with pytest.raises(ClientError) as refused:
        primary.initiate_auth(ClientId=pool.client_id, AuthFlow="REFRESH_TOKEN_AUTH",
                              AuthParameters={"REFRESH_TOKEN": refresh_token})
    assert refused.value.response["Error"]["Code"] == "NotAuthorizedException"


def test_signout_without_a_replica_keeps_the_warning(cli, fake):
    assert cli.signin().code == 0
    primary_down(fake)
    mark = fake.mark()
    r = cli.run("signout", "--timeout", "6")
    assert r.code == 0, r
    assert "may not have been revoked" in r.err or "could not be revoked" in r.err, r
    assert "replica" not in r.err
    assert calls(fake, mark, "replica") == []


def test_a_replica_session_is_signed_out_everywhere_at_the_replica(cli, fake, replica):
    primary_down(fake)
    assert cli.signin(**replica).code == 0
    mark = fake.mark()
    r = cli.run("signout", "--global", "--yes", "--output", "json", **replica)
    assert r.code == 0, r
    assert f"signing out every device at the replica in {REPLICA_REGION}" in r.err, r
    assert r.json()["globalSignOut"] == "ok", r
    assert calls(fake, mark, "replica", "GlobalSignOut") == ["GlobalSignOut"], fake.calls(mark)
    assert calls(fake, mark, "replica", "RevokeToken") == []


def test_a_refused_signout_does_not_fail_over(cli, fake, replica):
    assert cli.signin(**replica).code == 0
    primary_down(fake, operation="GlobalSignOut", kind="error", status=400, errorType="InvalidParameterException",
                 message="Injected refusal")
    mark = fake.mark()
    r = cli.run("signout", "--global", "--yes", **replica)
    assert r.code != 0, r
    assert "replica" not in r.err, r
    assert calls(fake, mark, "replica") == []
    assert cli.keyring.session() is not None, "a refused global sign-out keeps the session"


# ---- status --check: both regions ----

def test_status_check_shows_both_regions(cli, fake, replica):
    assert cli.signin(**replica).code == 0
    r = cli.run("status", "--check", "--output", "json", **replica)
    assert r.code == 0, r
    regions = r.json()["regions"]
    assert [x["role"] for x in regions] == ["primary", "replica"], regions
    primary, second = regions
    assert primary["region"] == cli.pool.region and primary["endpoint"].rstrip("/") == fake.endpoint.rstrip("/")
    assert second["region"] == REPLICA_REGION and second["endpoint"].rstrip("/") == fake.replica_endpoint.rstrip("/")
    for region in regions:
        assert region["reachable"] is True and region["answer"] == "accepted the session" and region["error"] is None, region
        assert isinstance(region["latencyMs"], int) and 0 <= region["latencyMs"] < 6000, region
    assert r.json()["profiles"][0]["checked"] is True and r.json()["profiles"][0]["state"] == "valid"

    text = cli.run("status", "--check", **replica)
    assert text.code == 0, text
    assert "Regions checked:" in text.out
    assert f"primary {cli.pool.region} (" in text.out and f"replica {REPLICA_REGION} (" in text.out, text
    assert text.out.count("reachable, accepted the session") == 2, text


def test_status_check_with_the_primary_out_shows_it_and_the_replica_keeps_the_session(cli, fake, replica):
    assert cli.signin(**replica).code == 0
    primary_down(fake)
    mark = fake.mark()
    r = cli.run("status", "--check", "--output", "json", "--timeout", "6", **replica)
    assert r.code == 0, r
    primary, second = r.json()["regions"]
    assert primary["reachable"] is False and primary["answer"] == "HTTP 503" and "503" in primary["error"], primary
    assert second["reachable"] is True and second["answer"] == "accepted the session", second
    assert calls(fake, mark, "primary", "GetUser") == ["GetUser"], "one request per region: no retry"
    assert calls(fake, mark, "replica", "GetUser") == ["GetUser"]
    assert "not reachable (" in cli.run("status", "--check", **replica).out


def test_status_check_with_both_regions_out_fails_and_still_shows_them(cli, fake, replica):
    assert cli.signin(**replica).code == 0
    primary_down(fake)
    fake.add_fault(operation="*", kind="drop", count=-1, endpoint="replica")
    r = cli.run("status", "--check", "--output", "json", "--timeout", "6", **replica)
    assert r.code == 69, r
    regions = r.json()["regions"]
    assert [x["reachable"] for x in regions] == [False, False], regions
    assert regions[1]["answer"] is None and regions[1]["error"], regions
    assert cli.keyring.session() is not None, "an unreachable service ends no session"


def test_status_check_refused_by_both_regions_ends_the_session(cli, fake, pool, replica):
    assert cli.signin(**replica).code == 0
    cognito_client(fake.endpoint).admin_user_global_sign_out(UserPoolId=pool.pool_id, Username="alice")
    r = cli.run("status", "--check", "--output", "json", **replica)
    assert r.code == 77, r
    assert [x["answer"] for x in r.json()["regions"]] == ["NotAuthorizedException"] * 2, r
    assert r.json()["profiles"][0]["state"] == "ended"
    assert cli.keyring.session() is None


def test_status_check_without_a_replica_has_no_regions(cli, fake):
    assert cli.signin().code == 0
    r = cli.run("status", "--check", "--output", "json")
    assert r.code == 0, r
    assert "regions" not in r.json()
    assert "Regions checked" not in cli.run("status", "--check").out


def test_status_check_refused_as_expired_refreshes_once_and_checks_again(cli, fake, replica):
    # This machine's clock behind the service's: both regions refuse the access token as expired;
    # the session is refreshed once and shown to both again (as without a replica), not ended.
    assert cli.signin(**replica).code == 0
    before = cli.keyring.session()["accessToken"]
    fake.add_fault(operation="GetUser", kind="error", count=2, errorType="NotAuthorizedException",
                   message="Access Token has expired")
    mark = fake.mark()
    r = cli.run("status", "--check", "--output", "json", **replica)
    assert r.code == 0, r
    assert [x["answer"] for x in r.json()["regions"]] == ["accepted the session"] * 2, r
    assert cli.keyring.session()["accessToken"] != before, "refreshed once"
    assert calls(fake, mark, "primary", "GetUser") == ["GetUser", "GetUser"], fake.calls(mark)
    assert calls(fake, mark, "replica", "GetUser") == ["GetUser", "GetUser"], fake.calls(mark)


# ---- Regions validated wherever they come from; the replica bound to the session ----

class _Listener:
    """Another listener on loopback (an attacker's, or a stale one): counts connections and keeps
    every byte it is sent; it answers nothing."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.received = b""
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.settimeout(1)
            try:
                while chunk := conn.recv(65536):
                    self.received += chunk
            except OSError:
                pass
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def listener():
    made = _Listener()
    yield made
    made.close()


def _config(cli, text: str) -> None:
    path = cli.keyring.home / ".config" / "authctl" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize("source", ["--region", "AUTHCTL_REGION", "config region", "AUTHCTL_FAILOVER_REGION",
                                    "--failover-region", "config failover_region"])
def test_a_region_naming_another_host_is_refused_before_any_connection(cli, fake, listener, source):
    """`eu-west-1@127.0.0.1:PORT/` made authctl connect to
    https://cognito-idp.eu-west-1@127.0.0.1:PORT/ (the listener got the TLS handshake, and with a
    certificate for it the password); every region is checked for a region's shape: exit 78."""
    hostile = f"eu-west-1@127.0.0.1:{listener.port}/"
    args: list[str] = []
    env = {"AUTHCTL_ENDPOINT": None}  # the region decides the endpoint
    if source == "--region":
        args = ["--region", hostile]
    elif source == "AUTHCTL_REGION":
        env["AUTHCTL_REGION"] = hostile
    elif source == "config region":
        env["AUTHCTL_REGION"] = None
        _config(cli, f'[profiles.default]\nregion = "{hostile}"\n')
    else:
        # The primary (the fake) is down; the replica's region is the trick.
        env = {}
        primary_down(fake)
        if source == "AUTHCTL_FAILOVER_REGION":
            env["AUTHCTL_FAILOVER_REGION"] = hostile
        elif source == "--failover-region":
            args = ["--failover-region", hostile]
        else:
            _config(cli, f'[profiles.default]\nfailover_region = "{hostile}"\n')
    r = cli.signin("alice", None, *args, "--timeout", "5", **env)
    assert listener.connections == 0, (source, r)
    assert r.code == 78 and "region" in r.err, r


def test_a_replica_other_than_the_sessions_gets_no_refresh_token(cli, fake, replica, listener):
    """Signed in with the replica at fake.replica_endpoint; another listener
    named as the failover endpoint later (a stale or planted AUTHCTL_FAILOVER_ENDPOINT) was sent
    GetTokensFromRefreshToken with the refresh token when the primary failed, and RevokeToken three
    times by `signout`. Now the session's replica is the one recorded at sign-in: exit 78, nothing sent."""
    assert cli.signin(**replica).code == 0
    refresh_token = cli.keyring.session()["refreshToken"]
    primary_down(fake)
    other = {**replica, "AUTHCTL_FAILOVER_ENDPOINT": f"http://127.0.0.1:{listener.port}/"}
    r = cli.run("token", "--min-valid", "3700", "--timeout", "5", **other)
    assert listener.connections == 0 and refresh_token.encode() not in listener.received, r
    assert r.code == 78 and "replica" in r.err, r
    r = cli.run("signout", "--timeout", "5", **other)
    assert listener.connections == 0 and refresh_token.encode() not in listener.received, r
    # The session's own replica still works.
    fake.clear_faults()


def test_a_failover_endpoint_override_is_for_loopback_only(cli, fake):
    """--failover-endpoint is for an emulator on this machine, like plain http:// for the primary:
    a real replica is named by its region."""
    r = cli.signin("alice", None, "--failover-endpoint", "https://cognito-idp.example.net/")
    assert r.code == 78 and "failover" in r.err, r
