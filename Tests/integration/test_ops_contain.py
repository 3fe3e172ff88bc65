"""Incident response: `authctl ops investigate`, `ops contain` (users and an app client's secret),
`ops restore`, against moto behind the fake. For what moto lacks the fake answers as the service
does, every request checked against botocore 1.44.8's model: AdminListDevices / AdminForgetDevice
(devices.py), AdminListUserSessions / AdminRevokeUserSession (sessions.py),
AdminGetUserAuthFactors, AdminDeleteSoftwareToken and the service's refusal of AdminResetUserPassword
for a disabled user or one without a verified channel (admin_users.py), AdminListUserAuthEvents /
AdminUpdateAuthEventFeedback (auth_events.py), GetProvisionedLimit (limits.py), the client-secret
operations (client_secrets.py).

The attacker is a real sign-in: alice's password and authenticator code through authctl, which
remembers the device; after containment that password, refresh token, device and authenticator
no longer get anyone in.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from harness import authctl_bin, base_env, run_authctl
from test_mfa import mfa_state, set_mfa
from totp import totp
from test_devices import track

ACCESS_KEY = "AKIAOPSCONTAIN000001"
CHANGING = {"AdminUpdateAuthEventFeedback", "AdminDeleteSoftwareToken", "AdminSetUserMFAPreference", "AdminForgetDevice",
            "AdminRevokeUserSession", "AdminResetUserPassword", "AdminSetUserPassword", "AdminDisableUser",
            "AdminUserGlobalSignOut", "AdminEnableUser", "AddUserPoolClientSecret", "DeleteUserPoolClientSecret"}
STEPS = ["snapshot", "feedback", "mfa", "devices", "sessions", "password", "disable", "signout"]


@pytest.fixture(autouse=True)
def _incident_config(fake):
    yield
    fake.set_config(threatProtection={}, authEvents={}, provisionedLimits={}, deviceTracking={}, sessionTracking={})


def ops_env(pool, fake, state: Path, **extra: str | None) -> dict[str, str]:
    return base_env(None, pool, fake.endpoint, **{"AUTHCTL_CLIENT_ID": None, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                    "AWS_SECRET_ACCESS_KEY": "contain/secret", "USER": "ops-oncall", "XDG_STATE_HOME": str(state), **extra})


def ops(pool, fake, state: Path, *args: str, input: str | None = None, **extra):
    return run_authctl(["ops", *args], ops_env(pool, fake, state, **extra), input=input, timeout=60)


def ops_dir(state: Path) -> Path:
    return state / "authctl" / "ops"


def audit(state: Path) -> list[dict]:
    return [json.loads(line) for p in sorted(ops_dir(state).glob("*.audit.jsonl")) for line in p.read_text().splitlines()]


def events(now: float, count: int, hostile: str = "") -> list[dict]:
    return [{"EventId": f"ev-{i:05d}", "EventType": "SignIn", "CreationDate": now - i, "EventResponse": "Pass",
             "EventRisk": {"RiskDecision": "NoRisk", "RiskLevel": "Low"},
             "EventContextData": {"IpAddress": "203.0.113.9", "City": "Ber\x1b[2Jlin" + hostile, "Country": "DE",
                                  "DeviceName": "Evil\x07\x1b]0;owned\x07 phone"}} for i in range(count)]


def refused(cognito, pool, refresh_token: str) -> bool:
    try:
        cognito.initiate_auth(ClientId=pool.client_id, AuthFlow="REFRESH_TOKEN_AUTH",
                              AuthParameters={"REFRESH_TOKEN": refresh_token})
    except ClientError as e:
        return e.response["Error"]["Code"] == "NotAuthorizedException"
    return False


@pytest.fixture
def attacker(cli, fake):
    """alice signed in by the attacker: password + authenticator code, this device remembered."""
    track(fake, cli.pool)
    fake.set_config(sessionTracking={cli.pool.pool_id: True})
    secret = set_mfa(fake, cli.pool, "totp")["secret"]
    r = cli.signin("alice", None, "--mfa-code", totp(secret))
    assert r.code == 0, r
    fake.set_config(threatProtection={cli.pool.pool_id: True},
                    authEvents={f"{cli.pool.pool_id}/alice": events(time.time(), 3)})
    return cli


def test_contain_a_compromised_account_then_restore_it(attacker, fake, cognito, tmp_path):
    pool = attacker.pool
    refresh_token = attacker.keyring.session()["refreshToken"]
    record = tmp_path / "incident.jsonl"
    assert not refused(cognito, pool, refresh_token)

    mark = fake.mark()
    plan = ops(pool, fake, tmp_path, "contain", "--user", "alice", "--feedback-invalid", "ev-00000", "--record", str(record))
    assert plan.code == 0, plan
    assert "Dry run: nothing was changed" in plan.err and "AdminResetUserPassword" in plan.err, plan
    assert not CHANGING & {c["operation"] for c in fake.calls(mark)}, "the dry run sends no changing request"
    assert not record.exists()

    mark = fake.mark()
    r = ops(pool, fake, tmp_path, "contain", "--user", "alice", "--feedback-invalid", "ev-00000", "--record", str(record),
            "--execute", "--yes")
    assert r.code == 0, r
    changed = [c["operation"] for c in fake.calls(mark) if c["operation"] in CHANGING and c["status"] == 200]
    assert changed == ["AdminUpdateAuthEventFeedback", "AdminDeleteSoftwareToken", "AdminSetUserMFAPreference",
                       "AdminForgetDevice", "AdminResetUserPassword", "AdminDisableUser", "AdminUserGlobalSignOut"], changed
    steps = [(line["action"], line["result"]) for line in audit(tmp_path) if line["action"].startswith("contain:")]
    assert [s for s, _ in steps] == [f"contain:{s}" for s in STEPS], steps
    assert dict(steps)["contain:sessions"] == "nothingToDo"  # a token session, no managed-login one
    assert all(line["requestIds"] and line["operator"]["accessKeyId"] == ACCESS_KEY
               for line in audit(tmp_path) if line["action"] in ("contain:mfa", "contain:disable"))
    assert "tokens" in r.err.lower() and "What stays exposed for alice" in r.err, r

    # The record: private, the evidence before the changes, the exposure, no secret.
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    kinds = [line["kind"] for line in lines]
    assert kinds[:2] == ["run", "snapshot"] and kinds[-1] == "exposure", kinds
    snapshot = lines[1]["body"]
    assert snapshot["status"] == "CONFIRMED" and snapshot["mfaEnabled"] == ["SOFTWARE_TOKEN_MFA"], snapshot
    assert len(snapshot["devices"]) == 1 and snapshot["devices"][0]["remembered"] is True, snapshot
    assert [x["kind"] for x in snapshot["sessions"]] == ["TOKEN"], snapshot
    exposure = lines[-1]["body"]
    assert exposure["devicesRemaining"] == 0 and exposure["authenticatorRemaining"] is False, exposure
    assert exposure["enabled"] is False and exposure["userStatus"] == "RESET_REQUIRED", exposure
    assert exposure["tokenLifetimeSeconds"] == 3600 and exposure["tokensValidUntil"], exposure
    text = record.read_text()
    for secret in (pool.users["alice"], refresh_token, attacker.keyring.session()["accessToken"]):
        assert secret not in text

    # The attacker's way back in is gone.
    denied = attacker.signin("alice")
    assert denied.code != 0, "the password no longer signs in"
    assert refused(cognito, pool, refresh_token), "the refresh token is refused"
    assert mfa_state(fake, pool)["secret"] is None, "the authenticator no longer answers"
    feedback = cognito.admin_list_user_auth_events(UserPoolId=pool.pool_id, Username="alice")["AuthEvents"]
    assert feedback[0]["EventFeedback"]["FeedbackValue"] == "Invalid", feedback

    # Restore: refused while the reset is pending; once the user has a new password, enabled.
    r = ops(pool, fake, tmp_path, "restore", "--user", "alice", "--record", str(record))
    assert r.code == 65 and "RESET_REQUIRED" in r.err, r
    cognito.admin_set_user_password(UserPoolId=pool.pool_id, Username="alice", Password="N3w-Passw0rd!x", Permanent=True)
    r = ops(pool, fake, tmp_path, "restore", "--user", "alice", "--record", str(record))
    assert r.code == 0, r
    assert json.loads(record.read_text().splitlines()[-1])["kind"] == "restore"
    assert audit(tmp_path)[-1]["detail"].startswith("incident incident-"), audit(tmp_path)[-1]
    # The remembered device no longer lets anyone skip MFA: the service knows it no more.
    again = attacker.signin("alice", "N3w-Passw0rd!x")
    assert again.code == 0 and "refused this machine's remembered device" in denied.err + again.err, (denied, again)
    assert "This device is remembered as" in again.err, again  # a new device, after a full sign-in


def test_kill_9_mid_run_and_a_rerun_does_every_step_once(pool, fake, cognito, tmp_path):
    names = [f"mallory-{i}" for i in range(6)]
    for name in names:
        cognito.admin_create_user(UserPoolId=pool.pool_id, Username=name, MessageAction="SUPPRESS",
                                  UserAttributes=[{"Name": "email", "Value": f"{name}@example.com"},
                                                  {"Name": "email_verified", "Value": "true"}])
        cognito.admin_set_user_password(UserPoolId=pool.pool_id, Username=name, Password="Mall0ry-Passw0rd!", Permanent=True)
    users = tmp_path / "users.txt"
    users.write_text("\n".join(names) + "\n")
    args = ["contain", "--users-file", str(users), "--execute", "--yes"]
    proc = subprocess.Popen([str(authctl_bin()), "ops", *args, "--rate", "3"], env=ops_env(pool, fake, tmp_path),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 30
    while len(audit(tmp_path)) < 9 and time.time() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)
    before = len(audit(tmp_path))
    assert 9 <= before < len(names) * (len(STEPS) - 1), before
    r = ops(pool, fake, tmp_path, *args, "--rate", "200")
    assert r.code == 0, r
    steps = [(line["user"], line["action"]) for line in audit(tmp_path) if line["action"].startswith("contain:")]
    assert len(steps) == len(set(steps)), "no step twice in the audit log"
    assert sorted(steps) == sorted((n, f"contain:{s}") for n in names for s in STEPS if s != "feedback")
    assert all(not u["Enabled"] for u in cognito.list_users(UserPoolId=pool.pool_id)["Users"] if u["Username"] in names)


def test_hostile_answers_are_bounded_and_escaped(pool, fake, tmp_path):
    fake.set_config(threatProtection={pool.pool_id: True},
                    authEvents={f"{pool.pool_id}/alice": events(time.time(), 400, hostile="x" * 600)})
    r = ops(pool, fake, tmp_path, "investigate", "--user", "alice", "--max-events", "100")
    assert r.code == 0, r
    assert "\x1b" not in r.out and "\x07" not in r.out and "\x1b" not in r.err
    assert "Sign-in events: 100 (more not read: --max-events)" in r.out, r.out[:2000]
    assert "Evil\\u{7}" in r.out or "Evil\\a" in r.out or "Evil?" in r.out or "Evil" in r.out
    assert max(len(line) for line in r.out.splitlines()) < 2000
    doc = ops(pool, fake, tmp_path, "investigate", "--user", "alice", "--since", "1h", "--max-events", "100",
              "--output", "json")
    found = json.loads(doc.out)
    assert len(found["events"]) == 100 and found["eventsTruncated"] is True
    assert len(found["events"][0]["city"]) <= 257 and "\x1b" not in doc.out
    # No threat protection: said, not failed.
    fake.set_config(threatProtection={})
    r = ops(pool, fake, tmp_path, "investigate", "--user", "alice")
    assert r.code == 0 and "no threat protection" in r.out, r


def test_a_user_without_a_verified_channel_is_reported_and_still_contained(pool, fake, cognito, tmp_path):
    r = ops(pool, fake, tmp_path, "contain", "--user", "bob", "--execute", "--yes")
    assert r.code == 4, r
    password = [line for line in audit(tmp_path) if line["action"] == "contain:password"]
    assert password[0]["result"] == "notPossible" and "--temporary-password-stdin" in password[0]["detail"], password
    assert not cognito.admin_get_user(UserPoolId=pool.pool_id, Username="bob")["Enabled"]
    # The person is told, in the summary of what stays exposed, that the old password still works.
    assert "Password: UNCHANGED" in r.out + r.err, r.out + r.err
    # The rerun with a temporary password finishes only what is left.
    mark = fake.mark()
    r = ops(pool, fake, tmp_path, "contain", "--user", "bob", "--execute", "--yes", "--temporary-password-stdin",
            input="Temp-Passw0rd!9\n")
    assert r.code == 0, r
    assert "Password: temporary" in r.out + r.err, r
    assert [c["operation"] for c in fake.calls(mark) if c["operation"] in CHANGING] == ["AdminSetUserPassword"]
    assert "Temp-Passw0rd!9" not in "".join(p.read_text() for p in ops_dir(tmp_path).iterdir() if p.is_file())


def test_rotate_a_compromised_client_secret(pool, fake, cognito, tmp_path):
    client = pool.secret_client_id
    old = cognito.describe_user_pool_client(UserPoolId=pool.pool_id, ClientId=client)["UserPoolClient"]["ClientSecret"]
    r = ops(pool, fake, tmp_path, "contain", "--client-id", client, "--execute")
    assert r.code == 64 and "--secret-out" in r.err, r
    out = tmp_path / "new-secret"
    mark = fake.mark()
    r = ops(pool, fake, tmp_path, "contain", "--client-id", client, "--secret-out", str(out))
    assert r.code == 0 and "Dry run" in r.err and not out.exists(), r
    assert not CHANGING & {c["operation"] for c in fake.calls(mark)}
    r = ops(pool, fake, tmp_path, "contain", "--client-id", client, "--secret-out", str(out), "--execute")
    assert r.code == 0, r
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    new = out.read_text().strip()
    assert new and new != old and new not in r.out + r.err
    listed = cognito.list_user_pool_client_secrets(UserPoolId=pool.pool_id, ClientId=client)["ClientSecrets"]
    assert len(listed) == 1 and listed[0]["ClientSecretId"] in r.err, listed
    assert [line["action"] for line in audit(tmp_path)] == ["contain-client:add-secret", "contain-client:check",
                                                            "contain-client:delete-secret"]
    assert "stay valid until they expire" in r.err


def test_a_machine_clients_new_secret_is_checked_with_a_token_before_the_old_one_goes(pool, fake, cognito, tmp_path):
    """A machine client (ALLOW_CLIENT_TOKEN_AUTH its only flow) and no managed-login domain: the new
    secret is checked with GetClientToken before the old one is deleted; afterwards the old secret
    gets no token and the new one does."""
    made = cognito.create_user_pool_client(UserPoolId=pool.pool_id, ClientName="leaky-machine", GenerateSecret=True,
                                           ExplicitAuthFlows=[])["UserPoolClient"]
    client, old = made["ClientId"], made["ClientSecret"]
    out = tmp_path / "new-secret"
    mark = fake.mark()
    r = ops(pool, fake, tmp_path, "contain", "--client-id", client, "--secret-out", str(out), "--execute")
    assert r.code == 0 and "checked: a client-credentials token was issued" in r.err, r
    operations = [c["operation"] for c in fake.calls(mark)]
    assert operations.index("GetClientToken") < operations.index("DeleteUserPoolClientSecret"), operations
    new = out.read_text().strip()
    for secret, code in ((old, 77), (new, 0)):
        token = run_authctl(["token", "--client-credentials", "--no-store"],
                            ops_env(pool, fake, tmp_path, AUTHCTL_CLIENT_ID=client, AUTHCTL_CLIENT_SECRET=secret))
        assert token.code == code, (secret == new, token)


def test_pace_from_the_provisioned_limit_and_the_sign_out_line(pool, fake, tmp_path):
    fake.set_config(provisionedLimits={"UserUpdate": 50})
    r = ops(pool, fake, tmp_path, "contain", "--user", "alice")
    assert "at most 40 a second (80% of the account's provisioned UserUpdate limit, 50 a second)" in r.err, r
    fake.set_config(provisionedLimits="refuse")
    r = ops(pool, fake, tmp_path, "signout", "--user", "alice")
    assert "at most 20 calls a second" in r.err and "assumed" in r.err, r
    single = run_authctl(["signout", "--global", "--user", "alice", "--yes"], ops_env(pool, fake, tmp_path))
    assert single.code == 0 and "not containment" in single.err and "authctl ops contain --user alice" in single.err, single
