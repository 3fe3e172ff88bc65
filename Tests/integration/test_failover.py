"""Multi-Region failover (issue 20): with a replica configured (--failover-region /
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
