"""`authctl ops signout`: paced, resumable bulk sign-out (and --disable) of a group, a filter, a list
or a users file, against moto behind the fake, whose quota module answers TooManyRequestsException
as the service does when a category's token bucket is empty.

One pool of GROUP_SIZE users in group "incident" is made once for the module, straight against
moto (fast); every run has its own $XDG_STATE_HOME, so its checkpoint and audit log are its own.
"""

from __future__ import annotations

import json
import os
import re
import pwd
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
import pexpect
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

import harness
from harness import authctl_bin, base_env, run_authctl

GROUP_SIZE = 2000
SAMPLE = ["inc-0007", "inc-0500", "inc-1999"]  # signed in before, their refresh tokens refused after
PASSWORD = "Sample-Passw0rd!"
FAST = "400"  # --rate for the functional tests (the fake's quota set higher)
HALF = 'username ^= "inc-0"'  # ListUsers' filter for the interrupted runs: inc-0000 to inc-0999
HALF_SIZE = 1000


def moto_client(moto):
    return boto3.client("cognito-idp", endpoint_url=moto.url, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def add_users(client, pool_id: str, names: list[str], group: str) -> None:
    client.create_group(UserPoolId=pool_id, GroupName=group)

    def one(name: str) -> None:
        client.admin_create_user(UserPoolId=pool_id, Username=name, MessageAction="SUPPRESS",
                                 UserAttributes=[{"Name": "email", "Value": f"{name}@contractor.example"}])
        client.admin_add_user_to_group(UserPoolId=pool_id, Username=name, GroupName=group)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, names))


@pytest.fixture(scope="module")
def big(cognito, moto):
    pool = harness.make_pool(cognito, name="authctl-ops-bulk")
    add_users(moto_client(moto), pool.pool_id, [f"inc-{i:04d}" for i in range(GROUP_SIZE)], "incident")
    return pool


@pytest.fixture(autouse=True)
def _no_quota(fake):
    fake.set_config(quota={"UserUpdate": 1000, "UserList": 1000})
    yield
    fake.set_config(quota={})


def ops_env(pool, endpoint: str, state: Path, **extra: str | None) -> dict[str, str]:
    return base_env(None, pool, endpoint, **{"AUTHCTL_CLIENT_ID": None, "AWS_ACCESS_KEY_ID": "AKIAOPSBULK000000001",
                    "AWS_SECRET_ACCESS_KEY": "bulk/secret", "USER": "ops-oncall", "XDG_STATE_HOME": str(state), **extra})


def ops(pool, fake, state: Path, *args: str, input: str | None = None, timeout: float = 180, **extra):
    return run_authctl(["ops", "signout", *args], ops_env(pool, fake.endpoint, state, **extra), input=input, timeout=timeout)


def audit_lines(state: Path) -> list[dict]:
    lines: list[dict] = []
    for path in sorted((state / "authctl" / "ops").glob("*.audit.jsonl")):
        lines += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return lines


def signed_in_refresh_token(cognito, pool, name: str) -> str:
    cognito.admin_set_user_password(UserPoolId=pool.pool_id, Username=name, Password=PASSWORD, Permanent=True)
    r = cognito.initiate_auth(ClientId=pool.client_id, AuthFlow="USER_PASSWORD_AUTH",
                              AuthParameters={"USERNAME": name, "PASSWORD": PASSWORD})
    return r["AuthenticationResult"]["RefreshToken"]


def refresh_refused(cognito, pool, token: str) -> bool:
    try:
        cognito.initiate_auth(ClientId=pool.client_id, AuthFlow="REFRESH_TOKEN_AUTH", AuthParameters={"REFRESH_TOKEN": token})
    except ClientError as e:
        return e.response["Error"]["Code"] == "NotAuthorizedException"
    return False


# ---------------------------------------------------------------------------
# The fake's quota answers as the service does (or the pacing tests would prove nothing)
# ---------------------------------------------------------------------------


def test_fake_quota_bucket_allows_one_seconds_burst_then_refills():
    # The bucket on an explicit clock: a 2-a-second quota lets two through at once, refuses the
    # third, and lets one more through half a second later. (Timed by the test, not by the machine.)
    from fake_cognito.quota import QuotaState
    import fake_cognito.quota as quota_module

    state = QuotaState()
    clock = [1000.0]
    real_monotonic = quota_module.time.monotonic
    quota_module.time.monotonic = lambda: clock[0]
    try:
        assert [state.admit("UserUpdate", 2.0) for _ in range(3)] == [True, True, False]
        clock[0] += 0.5
        assert [state.admit("UserUpdate", 2.0) for _ in range(2)] == [True, False]
        assert state.allowed == {"UserUpdate": 3} and state.refused == {"UserUpdate": 2}
    finally:
        quota_module.time.monotonic = real_monotonic


def test_fake_quota_refuses_like_the_service(fake, pool):
    # One request every 20 s: the bucket cannot refill between the calls however loaded the
    # machine is (at 2 a second it did, and no refusal came back).
    fake.set_config(quota={"UserUpdate": 0.05, "UserList": 30})
    client = boto3.client("cognito-idp", endpoint_url=fake.url, region_name="us-east-1", aws_access_key_id="t",
                          aws_secret_access_key="t", config=Config(retries={"max_attempts": 1, "mode": "standard"}))
    codes = []
    for _ in range(3):
        try:
            client.admin_user_global_sign_out(UserPoolId=pool.pool_id, Username="alice")
            codes.append("ok")
        except ClientError as e:
            codes.append(e.response["Error"]["Code"])
            assert e.response["Error"]["Message"] == "Rate exceeded"
            assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 400
            assert e.response["ResponseMetadata"]["HTTPHeaders"]["x-amzn-errortype"].startswith("TooManyRequestsException")
    assert codes == ["ok", "TooManyRequestsException", "TooManyRequestsException"], codes
    # Listing is another category: not refused by the update bucket.
    client.list_users(UserPoolId=pool.pool_id, Limit=5)


# ---------------------------------------------------------------------------
# A group of thousands
# ---------------------------------------------------------------------------


def test_dry_run_plans_and_changes_nothing(big, fake, tmp_path):
    mark = fake.mark()
    r = ops(big, fake, tmp_path, "--group", "incident")
    assert r.code == 0, r
    assert r.out == "", "nothing on stdout in text mode"
    assert f"Sign out {GROUP_SIZE} users" in r.err and "inc-" in r.err and "Dry run" in r.err, r
    assert fake.calls(mark, operation="AdminUserGlobalSignOut") == []
    assert len(fake.calls(mark, operation="ListUsersInGroup")) == GROUP_SIZE // 60 + 1
    j = ops(big, fake, tmp_path, "--group", "incident", "--disable", "--output", "json")
    assert j.code == 0, j
    plan = j.json()
    assert plan["dryRun"] is True and plan["selected"] == GROUP_SIZE and len(plan["firstUsers"]) == 10
    assert plan["action"] == "signOut+disable" and plan["expectedSeconds"] > 2 * GROUP_SIZE / 20
    assert fake.calls(mark, operation="AdminDisableUser") == []
    assert audit_lines(tmp_path) == []


def test_execute_signs_every_member_out_through_throttling(big, fake, cognito, tmp_path):
    tokens = {name: signed_in_refresh_token(cognito, big, name) for name in SAMPLE}
    fake.add_fault(operation="AdminUserGlobalSignOut", kind="throttle", count=25)
    fake.add_fault(operation="AdminUserGlobalSignOut", kind="status", status=503, count=3)
    mark = fake.mark()
    r = ops(big, fake, tmp_path, "--group", "incident", "--execute", "--yes", "--rate", FAST, "--output", "json")
    assert r.code == 0, r
    summary = r.json()
    assert (summary["selected"], summary["done"], summary["signedOut"], summary["failed"]) == (GROUP_SIZE,) * 3 + (0,), summary
    assert summary["complete"] is True and summary["throttled"] >= 25
    assert "Throttl" not in r.err and "TooManyRequests" not in r.err, r
    lines = audit_lines(tmp_path)
    assert sorted(line["user"] for line in lines) == [f"inc-{i:04d}" for i in range(GROUP_SIZE)]
    assert {line["result"] for line in lines} == {"signedOut"}
    first = lines[0]
    assert first["pool"] == big.pool_id and first["action"] == "signOut" and first["requestId"]
    assert first["operator"]["accessKeyId"] == "AKIAOPSBULK000000001"
    assert first["operator"]["local"].startswith(pwd.getpwuid(os.getuid()).pw_name + "@")
    answered = [c for c in fake.calls(mark, operation="AdminUserGlobalSignOut") if c["status"] == 200]
    assert len(answered) == GROUP_SIZE
    for name, token in tokens.items():
        assert refresh_refused(cognito, big, token), f"{name}'s refresh token still works"
    # Running it again: nothing left.
    again = ops(big, fake, tmp_path, "--group", "incident", "--execute", "--yes", "--rate", FAST)
    assert again.code == 0 and "Nothing left to do" in again.err, again


def _interrupt_and_resume(big, fake, tmp_path, sig: int) -> None:
    env = ops_env(big, fake.endpoint, tmp_path)
    args = [str(authctl_bin()), "ops", "signout", "--filter", HALF, "--execute", "--yes", "--rate", "150"]
    proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    deadline = time.time() + 60
    while len(audit_lines(tmp_path)) < 300 and time.time() < deadline:
        time.sleep(0.2)
    os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=30)
    done_before = len(audit_lines(tmp_path))
    assert 300 <= done_before < HALF_SIZE, err
    if sig == signal.SIGINT:
        assert proc.returncode == 3, err
        assert "run the same command again" in err, err
        assert out == ""
    else:
        assert proc.returncode == -signal.SIGKILL
    r = ops(big, fake, tmp_path, "--filter", HALF, "--execute", "--yes", "--rate", FAST, "--output", "json")
    assert r.code == 0, r
    resumed = re.search(r"Resuming: (\d+) of " + str(HALF_SIZE) + " users were done", r.err)
    assert resumed, r
    # The checkpoint is written before the audit line: a kill between the two
    # leaves one user counted whose line the resume appends, never one acted on twice or lost.
    allowed = (done_before,) if sig == signal.SIGINT else (done_before, done_before + 1)
    assert int(resumed.group(1)) in allowed, (done_before, r.err)
    summary = r.json()
    assert summary["resumed"] is True and summary["done"] == HALF_SIZE and summary["failed"] == 0, summary
    users = [line["user"] for line in audit_lines(tmp_path)]
    assert len(users) == HALF_SIZE and len(set(users)) == HALF_SIZE, "every user exactly once in the audit log"
    assert sorted(users) == [f"inc-{i:04d}" for i in range(HALF_SIZE)]


def test_sigint_writes_the_checkpoint_and_a_rerun_finishes_the_rest(big, fake, tmp_path):
    _interrupt_and_resume(big, fake, tmp_path, signal.SIGINT)


def test_sigkill_loses_nothing_and_a_rerun_finishes_the_rest(big, fake, tmp_path):
    _interrupt_and_resume(big, fake, tmp_path, signal.SIGKILL)


def test_restart_ignores_the_checkpoint(big, fake, tmp_path):
    names = ["inc-0001", "inc-0002"]
    args = [a for n in names for a in ("--user", n)]
    assert ops(big, fake, tmp_path, *args, "--execute", "--yes").code == 0
    r = ops(big, fake, tmp_path, *args, "--execute", "--yes", "--restart", "--output", "json")
    assert r.code == 0 and r.json()["done"] == 2 and r.json()["resumed"] is False, r
    assert len(audit_lines(tmp_path)) == 4


# ---------------------------------------------------------------------------
# --disable, users files, filters
# ---------------------------------------------------------------------------


def test_disable_a_small_group(big, fake, moto, tmp_path):
    client = moto_client(moto)
    names = [f"ctr-{i:02d}" for i in range(30)]
    add_users(client, big.pool_id, names, "contractors")
    r = ops(big, fake, tmp_path, "--group", "contractors", "--disable", "--execute", "--yes", "--rate", FAST, "--output", "json")
    assert r.code == 0, r
    assert (r.json()["signedOut"], r.json()["disabled"]) == (30, 30)
    assert all(client.admin_get_user(UserPoolId=big.pool_id, Username=n)["Enabled"] is False for n in names)
    assert client.admin_get_user(UserPoolId=big.pool_id, Username="inc-0000")["Enabled"] is True
    assert {line["result"] for line in audit_lines(tmp_path)} == {"disabled"}
    assert all(len(line["requestIds"]) == 2 for line in audit_lines(tmp_path))


def test_users_file_with_unknown_names(big, fake, tmp_path):
    users = tmp_path / "users.txt"
    users.write_text("# incident 24\ninc-0010\n\n  inc-0011  \nnobody-1\ninc-0012\nnobody-\x1b[31mred\n")
    r = ops(big, fake, tmp_path, "--users-file", str(users), "--execute", "--yes", "--rate", FAST, "--output", "json")
    assert r.code == 0, r
    s = r.json()
    assert (s["done"], s["signedOut"], s["notFound"], s["failed"]) == (5, 3, 2, 0), s
    results = {line["user"]: line["result"] for line in audit_lines(tmp_path)}
    assert results == {"inc-0010": "signedOut", "inc-0011": "signedOut", "inc-0012": "signedOut",
                       "nobody-1": "notFound", "nobody-\x1b[31mred": "notFound"}
    # The same names on standard input are the same selection (keyed by content): nothing left.
    same = ops(big, fake, tmp_path, "--users-file", "-", "--execute", "--yes", input=users.read_text())
    assert same.code == 0 and "Nothing left to do" in same.err, same
    # A dry run with --restart plans it again, escaping the names, and keeps the checkpoint.
    d = ops(big, fake, tmp_path, "--users-file", "-", "--restart", input=users.read_text())
    assert d.code == 0 and "Sign out 5 users" in d.err, d
    assert "\x1b" not in d.err and "nobody-\\x1b[31mred" in d.err, d
    assert "Nothing left to do" in ops(big, fake, tmp_path, "--users-file", str(users)).err


def test_filter_selects_with_listusers(big, fake, tmp_path):
    r = ops(big, fake, tmp_path, "--filter", 'username ^= "inc-19"', "--output", "json")
    assert r.code == 0 and r.json()["selected"] == 100, r


# ---------------------------------------------------------------------------
# Pacing against the service's quota, progress
# ---------------------------------------------------------------------------


def test_paced_to_the_quota_no_user_fails_for_throttling(big, fake, tmp_path):
    """The fake allows 10 updates a second; authctl starts at 20 (4 in flight): it is refused, halves its rate,
    and ends with every user done, no failure, taking about as long as the quota allows."""
    fake.set_config(quota={"UserUpdate": 10, "UserList": 30})
    names = [f"inc-{i:04d}" for i in range(150)]
    start = time.time()
    r = ops(big, fake, tmp_path, *[a for n in names for a in ("--user", n)], "--execute", "--yes", "--rate", "20",
            "--output", "json")
    took = time.time() - start
    assert r.code == 0, r
    s = r.json()
    assert (s["done"], s["signedOut"], s["failed"]) == (150, 150, 0), s
    assert s["throttled"] > 0, "the fake's quota should have refused some calls"
    assert took >= (150 - 10) / 10 - 1, took  # no faster than the quota (its first second's burst aside)
    assert took < 150 / 10 * 2, took
    # Without a terminal: a plain progress line every 10 seconds, on stderr (the run takes over 13 s).
    assert "ops: " in r.err and "users done" in r.err, r


def test_progress_bar_on_a_terminal(big, fake, tmp_path):
    env = ops_env(big, fake.endpoint, tmp_path)
    users = tmp_path / "forty.txt"
    users.write_text("".join(f"inc-{i:04d}\n" for i in range(40)))
    child = pexpect.spawn(str(authctl_bin()), ["ops", "signout", "--users-file", str(users), "--execute", "--rate", "15"],
                          env=env, encoding="utf-8", timeout=30)
    child.expect("Sign out 40 users")
    child.expect("Type the pool id")
    child.sendline(big.pool_id)
    child.expect(r"\[[#.]{24}\] \d+/40 \d+%  \d+\.\d/s  ETA \d+:\d\d  0 failed")
    child.expect(r"\[#{24}\] 40/40 100%")
    child.expect("40 of 40 users done")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_usage_errors_change_nothing(big, fake, tmp_path):
    mark = fake.mark()
    two = ops(big, fake, tmp_path, "--group", "incident", "--user", "alice")
    assert two.code == 64 and "exactly one" in two.err, two
    none = ops(big, fake, tmp_path)
    assert none.code == 64, none
    no_yes = ops(big, fake, tmp_path, "--user", "alice", "--execute")
    assert no_yes.code == 64 and "--yes" in no_yes.err, no_yes
    everyone = ops(big, fake, tmp_path, "--all-users", "--execute", "--yes")
    assert everyone.code == 64 and "--confirm-pool" in everyone.err, everyone
    wrong = ops(big, fake, tmp_path, "--user", "alice", "--execute", "--confirm-pool", "us-east-1_other")
    assert wrong.code == 64, wrong
    assert fake.calls(mark, operation="AdminUserGlobalSignOut") == []


def test_a_rerun_retries_the_users_that_failed(big, fake, tmp_path):
    """A user the service refused (a 400 that is neither throttling nor about the credentials) is
    `failed` and the run exits 4; the same command again retries only that user, and the counts
    and the audit log then say it was signed out; a third run has nothing left to do."""
    names = ["inc-0100", "inc-0101", "inc-0102"]
    args = [a for n in names for a in ("--user", n)] + ["--rate", "5"]  # one call in flight: inc-0100 is refused
    fake.add_fault(operation="AdminUserGlobalSignOut", kind="error", status=400, errorType="InvalidParameterException",
                   message="refused for the test", count=1)
    first = ops(big, fake, tmp_path, *args, "--execute", "--yes", "--output", "json")
    assert first.code == 4 and "run the same command again to retry them" in first.err, first
    assert (first.json()["signedOut"], first.json()["failed"]) == (2, 1), first.json()
    assert [(line["user"], line["result"]) for line in audit_lines(tmp_path)][0] == ("inc-0100", "failed")

    plan = ops(big, fake, tmp_path, *args)
    assert plan.code == 0 and "Retrying the 1 user that failed" in plan.err and "inc-0100" in plan.err, plan
    assert "Dry run" in plan.err and len(audit_lines(tmp_path)) == 3

    mark = fake.mark()
    again = ops(big, fake, tmp_path, *args, "--execute", "--yes", "--output", "json")
    assert again.code == 0, again
    summary = again.json()
    assert (summary["done"], summary["signedOut"], summary["failed"], summary["resumed"]) == (3, 3, 0, True), summary
    assert len(fake.calls(mark, operation="AdminUserGlobalSignOut")) == 1, "only the failed user is acted on again"
    lines = audit_lines(tmp_path)
    assert [(line["user"], line["result"]) for line in lines[3:]] == [("inc-0100", "signedOut")], lines

    third = ops(big, fake, tmp_path, *args, "--execute", "--yes")
    assert third.code == 0 and "Nothing left to do" in third.err, third


# ---------------------------------------------------------------------------
# The audit log never decides whom a rerun acts on
# ---------------------------------------------------------------------------

def _as_nobody(*command: str) -> None:
    """A real second local user (uid/gid 65534, no groups), as the review's attacker."""
    import shutil
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is needed to run a second local user")
    subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command], check=True, timeout=10)


def _forged_line(pool, user: str, result: str, action: str = "signOut+disable") -> str:
    return json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 5)), "pool": pool.pool_id,
                       "user": user, "action": action, "result": result, "error": "Forged" if result == "failed" else None,
                       "requestIds": [], "operator": {"accessKeyId": "AKIAFORGED", "local": "mallory@elsewhere"}}) + "\n"


def _enabled(moto, pool, name: str) -> bool:
    return moto_client(moto).admin_get_user(UserPoolId=pool.pool_id, Username=name)["Enabled"]


def test_an_audit_log_another_user_can_write_is_refused(big, fake, moto, tmp_path):
    """The review's attack with a real second user: nobody plants a world-writable audit log in a
    directory it can write; the operator's run with --audit-log there used it, nobody appended a
    `failed` line for a user never selected, and the rerun disabled that user. Now the planted log
    (not the operator's, writable by others) is refused before anything is done: exit 78."""
    import shutil
    import tempfile
    shared = Path(tempfile.mkdtemp(prefix="ops-shared-", dir="/tmp"))  # pytest's tmp_path is 0700: nobody cannot enter it
    request_cleanup = shared
    shared.chmod(0o1777)
    planted = shared / "audit.jsonl"
    _as_nobody("sh", "-c", f"umask 0; : > {planted}")
    names = ["inc-1600", "inc-1601"]
    args = [a for n in names for a in ("--user", n)] + ["--disable", "--rate", "5", "--audit-log", str(planted)]
    fake.add_fault(operation="AdminUserGlobalSignOut", kind="error", status=400, errorType="InvalidParameterException",
                   message="refused for the test", count=1)
    mark = fake.mark()
    first = ops(big, fake, tmp_path / "state", *args, "--execute", "--yes")
    fake.clear_faults()
    if first.code != 78:
        # The unfixed binary: nobody now chooses whom the rerun disables.
        _as_nobody("sh", "-c", f"printf '%s' '{_forged_line(big, 'inc-1602', 'failed')}' >> {planted}")
        rerun = ops(big, fake, tmp_path / "state", *args, "--execute", "--yes")
        assert _enabled(moto, big, "inc-1602"), f"a user never selected was disabled through the planted log: {rerun}"
    assert first.code == 78 and "audit log" in first.err, first
    assert fake.calls(mark, operation="AdminUserGlobalSignOut") == []
    # An audit log in a directory others can write (not sticky) is refused too: the file could be replaced.
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    r = ops(big, fake, tmp_path / "state", *args[:-1], str(open_dir / "audit.jsonl"), "--execute", "--yes")
    assert r.code == 78 and "audit log" in r.err, r
    assert fake.calls(mark, operation="AdminUserGlobalSignOut") == []
    shutil.rmtree(request_cleanup, ignore_errors=True)


def test_a_rerun_retries_only_the_selected_users_the_checkpoint_says_failed(big, fake, moto, tmp_path):
    """What a rerun retries comes from the private checkpoint: a `failed` line for another user added
    to the audit log is not acted on (before: that user was disabled, and the summary said -1 failed)."""
    names = ["inc-1610", "inc-1611"]
    args = [a for n in names for a in ("--user", n)] + ["--disable", "--rate", "5"]
    fake.add_fault(operation="AdminUserGlobalSignOut", kind="error", status=400, errorType="InvalidParameterException",
                   message="refused for the test", count=1)
    first = ops(big, fake, tmp_path, *args, "--execute", "--yes", "--output", "json")
    assert first.code == 4 and first.json()["failed"] == 1, first
    [log] = (tmp_path / "authctl" / "ops").glob("*.audit.jsonl")
    with log.open("a") as f:
        f.write(_forged_line(big, "inc-1612", "failed"))
    again = ops(big, fake, tmp_path, *args, "--execute", "--yes", "--output", "json")
    assert again.code == 0, again
    assert _enabled(moto, big, "inc-1612"), "a user outside the selection was disabled"
    summary = again.json()
    assert (summary["done"], summary["disabled"], summary["failed"]) == (2, 2, 0), summary
    assert "-1 failed" not in again.err


def test_a_resume_acts_on_every_selected_user_not_in_the_checkpoint(big, fake, moto, tmp_path):
    """A run stopped before any user (the credentials refused) is resumed; a `disabled` line for a
    selected user appended to the audit log after the checkpoint does not make the resume skip it
    (before: it was counted as done and stayed enabled)."""
    names = ["inc-1620", "inc-1621"]
    args = [a for n in names for a in ("--user", n)] + ["--disable", "--rate", "5"]
    fake.add_fault(operation="AdminUserGlobalSignOut", kind="error", status=400, errorType="UnrecognizedClientException",
                   message="The security token included in the request is invalid.", count=1)
    first = ops(big, fake, tmp_path, *args, "--execute", "--yes")
    assert first.code != 0 and "Stopped after 0 of 2 users" in first.err, first
    [log] = (tmp_path / "authctl" / "ops").glob("*.audit.jsonl")
    with log.open("a") as f:
        f.write(_forged_line(big, "inc-1620", "disabled"))
    again = ops(big, fake, tmp_path, *args, "--execute", "--yes", "--output", "json")
    assert again.code == 0, again
    assert not _enabled(moto, big, "inc-1620") and not _enabled(moto, big, "inc-1621")
    assert again.json()["disabled"] == 2, again.json()


def test_the_operator_is_the_processs_real_user_and_sudo_user_is_marked_claimed(big, fake, tmp_path):
    """The audit line's operator came from $USER / $LOGNAME (anyone can write
    another name there; under cron or a bare container it said unknown@host). It is the process's
    real user (getpwuid(getuid())); SUDO_USER is recorded beside it as a claim."""
    import pwd
    import socket
    real = f"{pwd.getpwuid(os.getuid()).pw_name}@{socket.gethostname()}"
    r = ops(big, fake, tmp_path, "--user", "inc-1630", "--execute", "--yes", USER="mallory", LOGNAME="mallory",
            SUDO_USER="alice")
    assert r.code == 0, r
    r = ops(big, fake, tmp_path / "bare", "--user", "inc-1631", "--execute", "--yes", USER=None, LOGNAME=None)
    assert r.code == 0, r
    lines = audit_lines(tmp_path) + audit_lines(tmp_path / "bare")
    assert [line["operator"]["local"] for line in lines] == [real, real], lines
    assert lines[0]["operator"].get("claimedSudoUser") == "alice" and "claimedSudoUser" not in lines[1]["operator"], lines


def test_a_huge_line_in_a_users_file_is_refused_without_being_held_or_printed(big, fake, tmp_path):
    """A 100 MB line cost 500 MB and was printed back. Usernames are at most
    128 characters: a line over 1024 bytes refuses the file (exit 65), naming the line, not its text."""
    users = tmp_path / "users.txt"
    users.write_text("inc-0001\n" + "x" * (8 << 20) + "\ninc-0002\n")
    mark = fake.mark()
    r = ops(big, fake, tmp_path, "--users-file", str(users), "--execute", "--yes")
    assert r.code == 65 and "line 2" in r.err and "128" in r.err, r.err[:500]
    assert "x" * 200 not in r.err and len(r.err) < 4000
    assert fake.calls(mark, operation="AdminUserGlobalSignOut") == []
    users.write_text("inc-0001\n" + "y" * 129 + "\n")
    r = ops(big, fake, tmp_path, "--users-file", str(users))
    assert r.code == 65 and "line 2" in r.err, r


def test_a_filter_selecting_the_whole_pool_asks_what_all_users_asks(cognito, fake, tmp_path):
    """`--filter 'username ^= ""'` selected every user with --yes alone, where
    --all-users demands --confirm-pool. A group or filter selecting the whole pool asks the same."""
    small = harness.make_pool(cognito, name="authctl-ops-everyone")
    mark = fake.mark()
    r = ops(small, fake, tmp_path, "--filter", 'username ^= ""', "--execute", "--yes")
    assert r.code == 64 and "--confirm-pool" in r.err, r
    assert fake.calls(mark, operation="AdminUserGlobalSignOut") == []
    r = ops(small, fake, tmp_path, "--filter", 'username ^= ""', "--execute", "--confirm-pool", small.pool_id)
    assert r.code == 0, r
    # A filter selecting part of the pool needs only --yes.
    r = ops(small, fake, tmp_path / "part", "--filter", 'username = "alice"', "--execute", "--yes")
    assert r.code == 0, r


def test_one_user_reads_as_one_and_no_rate_above_the_pace(pool, fake, tmp_path):
    """A run of one user says "1 user" (not "1 users"), and the rate it reports is over the paced
    window: it cannot exceed --rate however fast the one answer came (it said 93.5/s at 20)."""
    d = ops(pool, fake, tmp_path, "--user", "nobody-at-all")
    assert d.code == 0 and "Sign out 1 user (--user)" in d.err and "for 1 user." in d.err, d
    r = ops(pool, fake, tmp_path, "--user", "nobody-at-all", "--execute", "--yes", "--rate", "20", "--output", "json")
    assert r.code == 0, r
    s = r.json()
    assert (s["done"], s["notFound"]) == (1, 1), s
    assert 0 < s["meanRate"] <= 20, s
    t = ops(pool, fake, tmp_path, "--user", "nobody-else", "--execute", "--yes")
    assert t.code == 0 and "1 of 1 user done" in t.err and "First user: nobody-else" in t.err, t
    assert not re.search(r"\b1 users\b", d.err + t.err), (d, t)


def test_a_group_the_pool_does_not_have(pool, fake, tmp_path):
    """ListUsersInGroup's ResourceNotFoundException for a missing group: said as such (exit 65),
    not as an unknown pool or app client; nothing is signed out."""
    mark = fake.mark()
    r = ops(pool, fake, tmp_path, "--group", "nosuchgroup", "--execute", "--yes")
    assert r.code == 65, r
    assert f"the user pool {pool.pool_id} has no group nosuchgroup" in r.err, r
    assert "does not know this user pool" not in r.err, r
    assert fake.calls(mark, operation="AdminUserGlobalSignOut") == []
