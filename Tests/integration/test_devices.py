"""Remembered devices: the built authctl against moto + fake_cognito (its devices.py) and a real gnome-keyring.

moto has no device tracking at all, so fake_cognito/devices.py (links in its chain) plays it as
Cognito does: NewDeviceMetadata in the tokens, ConfirmDevice keeping the SRP verifier,
DEVICE_SRP_AUTH -> DEVICE_PASSWORD_VERIFIER with the device verifier checked for real, a
remembered device skipping MFA, ListDevices / ForgetDevice / UpdateDeviceStatus and the admin
operations, ResourceNotFoundException for a forgotten device, and the device key each refresh
sent (in the request log's note). The pool's MFA is the fake's email code (a fixed test code).
"""

from __future__ import annotations

import base64
import json
import socket

import pytest

from harness import Cli, base_env, run_authctl
from sigv4_check import SigV4CheckingProxy

CODE = "424242"
EMAIL = "EMAIL_OTP"
ACCESS_KEY = "AKIAOPSTEST000000001"
SECRET_KEY = "ops/Secret+Key/0123456789abcdefghijklmn"


def track(fake, pool, mode: str = "always", skip_mfa: bool = True) -> None:
    current = fake.set_config().get("deviceTracking") or {}
    current[pool.pool_id] = {"mode": mode, "skipMfa": skip_mfa}
    fake.set_config(deviceTracking=current)


def require_email_mfa(fake, pool, username: str = "alice") -> None:
    fake._admin("POST", "/_fake/mfa", {"pool": pool.pool_id, "username": username, "mode": "email", "code": CODE})


def device_items(keyring) -> list[dict]:
    return keyring.search(kind="device")


def stored_device(keyring) -> dict:
    items = device_items(keyring)
    assert len(items) == 1, items
    return json.loads(items[0]["secret"])


def calls(fake, mark, cli, *ops: str) -> list[tuple]:
    return [(c["operation"], c.get("authFlow") or c.get("challengeName"), c["status"], c.get("errorType"))
            for c in fake.calls(mark, client_ids=[cli.client_id]) if c["operation"] in ops]


def sign_in_calls(fake, mark, cli) -> list[tuple]:
    return calls(fake, mark, cli, "InitiateAuth", "RespondToAuthChallenge")


def first_sign_in(cli, fake, *more: str):
    """A sign-in that passes MFA and registers this device."""
    mark = fake.mark()
    r = cli.signin("alice", None, "--mfa-code", CODE, *more)
    assert r.code == 0, r
    assert [c[0] for c in calls(fake, mark, cli, "ConfirmDevice")] == ["ConfirmDevice"]
    return r


@pytest.fixture
def tracked(cli, fake):
    track(fake, cli.pool)
    require_email_mfa(fake, cli.pool)
    return cli


@pytest.fixture
def any_tracked(any_cli, fake):
    track(fake, any_cli.pool)
    require_email_mfa(fake, any_cli.pool)
    return any_cli


# ---------------------------------------------------------------------------
# The fake itself, through boto3 (botocore's model parses every answer)
# ---------------------------------------------------------------------------


def test_fake_hands_out_new_device_metadata_and_refuses_a_wrong_device_verifier(cognito, pool, fake):
    track(fake, pool)
    auth = cognito.initiate_auth(ClientId=pool.client_id, AuthFlow="USER_PASSWORD_AUTH",
                                 AuthParameters={"USERNAME": "alice", "PASSWORD": pool.users["alice"]})
    meta = auth["AuthenticationResult"]["NewDeviceMetadata"]
    assert meta["DeviceKey"].startswith(pool.pool_id.split("_")[0] + "_") and meta["DeviceGroupKey"]
    access = auth["AuthenticationResult"]["AccessToken"]
    verifier = {"PasswordVerifier": base64.b64encode(b"\x05" * 384).decode(), "Salt": base64.b64encode(b"\x01" * 16).decode()}
    answer = cognito.confirm_device(AccessToken=access, DeviceKey=meta["DeviceKey"], DeviceSecretVerifierConfig=verifier,
                                    DeviceName="boto3 device")
    assert answer["UserConfirmationNecessary"] is False
    with pytest.raises(cognito.exceptions.DeviceKeyExistsException):
        cognito.confirm_device(AccessToken=access, DeviceKey=meta["DeviceKey"], DeviceSecretVerifierConfig=verifier)
    listed = cognito.list_devices(AccessToken=access)["Devices"]
    assert [d["DeviceKey"] for d in listed] == [meta["DeviceKey"]]
    attrs = {a["Name"]: a["Value"] for a in listed[0]["DeviceAttributes"]}
    assert attrs["device_name"] == "boto3 device" and attrs["dev:device_remembered_status"] == "remembered"
    assert listed[0]["DeviceCreateDate"].year >= 2024  # epoch seconds, parsed by botocore as a timestamp

    # The device's own sign-in: DEVICE_SRP_AUTH, then a claim that cannot match (nobody knows the
    # password behind that made-up verifier) is refused.
    again = cognito.initiate_auth(ClientId=pool.client_id, AuthFlow="USER_PASSWORD_AUTH",
                                  AuthParameters={"USERNAME": "alice", "PASSWORD": pool.users["alice"],
                                                  "DEVICE_KEY": meta["DeviceKey"]})
    assert again["ChallengeName"] == "DEVICE_SRP_AUTH" and "AuthenticationResult" not in again
    step = cognito.respond_to_auth_challenge(ClientId=pool.client_id, ChallengeName="DEVICE_SRP_AUTH", Session=again["Session"],
                                             ChallengeResponses={"USERNAME": "alice", "DEVICE_KEY": meta["DeviceKey"],
                                                                 "SRP_A": format(2 ** 300 + 7, "x")})
    assert step["ChallengeName"] == "DEVICE_PASSWORD_VERIFIER"
    assert set(step["ChallengeParameters"]) >= {"SRP_B", "SALT", "SECRET_BLOCK"}
    with pytest.raises(cognito.exceptions.NotAuthorizedException):
        cognito.respond_to_auth_challenge(
            ClientId=pool.client_id, ChallengeName="DEVICE_PASSWORD_VERIFIER", Session=step["Session"],
            ChallengeResponses={"USERNAME": "alice", "DEVICE_KEY": meta["DeviceKey"], "TIMESTAMP": "Mon Nov 23 16:00:00 UTC 2026",
                                "PASSWORD_CLAIM_SECRET_BLOCK": step["ChallengeParameters"]["SECRET_BLOCK"],
                                "PASSWORD_CLAIM_SIGNATURE": base64.b64encode(b"\0" * 32).decode()})

    cognito.forget_device(AccessToken=access, DeviceKey=meta["DeviceKey"])
    assert cognito.list_devices(AccessToken=access)["Devices"] == []
    with pytest.raises(cognito.exceptions.ResourceNotFoundException):
        cognito.initiate_auth(ClientId=pool.client_id, AuthFlow="USER_PASSWORD_AUTH",
                              AuthParameters={"USERNAME": "alice", "PASSWORD": pool.users["alice"], "DEVICE_KEY": meta["DeviceKey"]})


def test_untracked_pool_hands_out_no_device(cognito, pool):
    auth = cognito.initiate_auth(ClientId=pool.client_id, AuthFlow="USER_PASSWORD_AUTH",
                                 AuthParameters={"USERNAME": "alice", "PASSWORD": pool.users["alice"]})
    assert "NewDeviceMetadata" not in auth["AuthenticationResult"]


# ---------------------------------------------------------------------------
# authctl: a remembered device skips MFA
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("flow", ["srp", "password"])
def test_remembered_device_skips_mfa(any_tracked, fake, flow):
    cli = any_tracked
    r = first_sign_in(cli, fake, "--flow", flow)
    assert f'remembered as "authctl on {socket.gethostname()}"' in r.err, r
    device = stored_device(cli.keyring)
    assert device["remembered"] is True and device["username"] == "alice" and device["userPoolId"] == cli.pool.pool_id
    assert len(base64.b64decode(device["devicePassword"])) == 40
    # Apart from the session: the session item knows nothing of the device.
    assert "deviceKey" not in cli.keyring.session()

    mark = fake.mark()
    r = cli.signin("alice", None, "--flow", flow)  # no code: only a remembered device can get through
    assert r.code == 0, r
    steps = sign_in_calls(fake, mark, cli)
    assert ("RespondToAuthChallenge", "DEVICE_SRP_AUTH", 200, None) in steps, steps
    assert steps[-1] == ("RespondToAuthChallenge", "DEVICE_PASSWORD_VERIFIER", 200, None), steps
    assert not [s for s in steps if s[1] == EMAIL], "no MFA challenge was answered"
    assert calls(fake, mark, cli, "ConfirmDevice") == [], "the same device, not a new one"
    for text in (r.out, r.err, fake.log_path.read_text()):
        assert device["devicePassword"] not in text


def test_sign_out_keeps_the_device(tracked, fake):
    first_sign_in(tracked, fake)
    assert tracked.run("signout").code == 0
    assert len(device_items(tracked.keyring)) == 1
    r = tracked.signin()
    assert r.code == 0, r


def test_sign_out_leaves_nothing_of_the_profile_but_the_device(tracked, fake):
    """Signout removes the session and what derives from it; the device is this machine's."""
    first_sign_in(tracked, fake)
    # A sign-in left waiting for a code (as a second run without a terminal leaves it).
    session = tracked.keyring.session_items()[0]
    tracked.keyring.store("pending", {"kind": "pending-challenge", "profile": "default",
                                      "xdg:schema": session["schema"]}, "{}")
    status = tracked.run("status", "--output", "json")
    assert status.code == 0, status
    kept = status.json()["profiles"][0]["kept"]
    assert set(kept) >= {"session", "pending-challenge", "device"}, kept
    assert tracked.run("signout").code == 0
    assert tracked.keyring.search(profile="default") == [], "no item of the profile is left"
    assert len(device_items(tracked.keyring)) == 1, "the remembered device stays"
    status = tracked.run("status", "--output", "json")
    assert status.code == 77 and status.json()["profiles"][0]["kept"] == [], status


@pytest.mark.parametrize("how", [(), ("--global", "--yes")])
def test_sign_out_forget_device_forgets_it_on_cognito_and_here(tracked, fake, how):
    first_sign_in(tracked, fake)
    key = stored_device(tracked.keyring)["deviceKey"]
    mark = fake.mark()
    r = tracked.run("signout", *how, "--forget-device", "--output", "json")
    assert r.code == 0, r
    assert r.json()["forgetDevice"] == "ok", r
    assert r.json()["signedOutLocally"] is True, r
    assert calls(fake, mark, tracked, "ForgetDevice") == [("ForgetDevice", None, 200, None)]
    assert key in r.err, r
    assert device_items(tracked.keyring) == [] and tracked.keyring.session() is None
    r = tracked.signin()
    assert r.code == 64 and "--code" in r.err, r  # MFA again


def test_wrong_device_password_is_refused_and_replaced(tracked, fake):
    first_sign_in(tracked, fake)
    item = device_items(tracked.keyring)[0]
    device = json.loads(item["secret"])
    device["devicePassword"] = base64.b64encode(b"\x07" * 40).decode()
    attrs = dict(item["attributes"], **({"xdg:schema": item["schema"]} if item.get("schema") else {}))
    tracked.keyring.store(item["label"], attrs, json.dumps(device))

    mark = fake.mark()
    r = tracked.signin()
    assert r.code == 64 and "--code" in r.err, r  # the device refused, MFA is asked again
    assert ("RespondToAuthChallenge", "DEVICE_PASSWORD_VERIFIER", 400, "NotAuthorizedException") in sign_in_calls(fake, mark, tracked)
    assert "refused this machine's remembered device" in r.err, r
    assert device_items(tracked.keyring) == []
    first_sign_in(tracked, fake)
    assert stored_device(tracked.keyring)["deviceKey"] != device["deviceKey"]


# ---------------------------------------------------------------------------
# Pools that leave remembering to the user
# ---------------------------------------------------------------------------


def test_user_opt_in_remembers_only_when_asked(cli, fake):
    track(fake, cli.pool, mode="userOptIn")
    require_email_mfa(fake, cli.pool)
    mark = fake.mark()
    r = first_sign_in(cli, fake)
    assert "not remembered" in r.err and "--remember-device" in r.err, r
    assert calls(fake, mark, cli, "UpdateDeviceStatus") == []
    assert stored_device(cli.keyring)["remembered"] is False
    assert cli.signin().code == 64, "a device that is not remembered does not skip MFA"

    mark = fake.mark()
    r = cli.signin("alice", None, "--mfa-code", CODE, "--remember-device")
    assert r.code == 0, r
    assert calls(fake, mark, cli, "UpdateDeviceStatus") == [("UpdateDeviceStatus", None, 200, None)]
    assert calls(fake, mark, cli, "ConfirmDevice") == [], "the known device is remembered, not a new one made"
    assert stored_device(cli.keyring)["remembered"] is True
    listed = cli.run("devices", "list", "--output", "json")
    assert listed.code == 0, listed
    assert [d["remembered"] for d in listed.json()["devices"]] == [True]
    assert cli.signin().code == 0


def test_user_opt_in_remember_device_at_the_first_sign_in(cli, fake):
    track(fake, cli.pool, mode="userOptIn")
    require_email_mfa(fake, cli.pool)
    mark = fake.mark()
    first_sign_in(cli, fake, "--remember-device")
    assert [c[0] for c in calls(fake, mark, cli, "ConfirmDevice", "UpdateDeviceStatus")] == ["ConfirmDevice", "UpdateDeviceStatus"]
    assert cli.signin().code == 0


# ---------------------------------------------------------------------------
# Refresh sends the device key
# ---------------------------------------------------------------------------


def expire(cli) -> None:
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt="2020-01-01T00:00:00Z"))


@pytest.mark.parametrize("operation", ["GetTokensFromRefreshToken", "REFRESH_TOKEN_AUTH"])
def test_refresh_sends_the_device_key(any_tracked, fake, operation):
    cli = any_tracked
    if operation == "GetTokensFromRefreshToken":
        fake.set_config(getTokensFromRefreshToken="fake")
    first_sign_in(cli, fake)
    key = stored_device(cli.keyring)["deviceKey"]
    expire(cli)
    mark = fake.mark()
    r = cli.run("token")
    assert r.code == 0, r
    refreshes = [c for c in fake.calls(mark, client_ids=[cli.client_id])
                 if c["operation"] == operation or c.get("authFlow") == operation]
    assert refreshes and refreshes[-1]["status"] == 200, refreshes
    assert f"deviceKey={key}" in refreshes[-1]["note"], refreshes


def test_refresh_with_a_device_forgotten_elsewhere(tracked, fake, cognito):
    fake.set_config(getTokensFromRefreshToken="fake")
    first_sign_in(tracked, fake)
    key = stored_device(tracked.keyring)["deviceKey"]
    cognito.admin_forget_device(UserPoolId=tracked.pool.pool_id, Username="alice", DeviceKey=key)
    expire(tracked)
    mark = fake.mark()
    r = tracked.run("token")
    assert r.code == 0, r
    assert "refused this machine's remembered device" in r.err and key in r.err, r
    assert device_items(tracked.keyring) == []
    refreshes = fake.calls(mark, operation="GetTokensFromRefreshToken")
    assert [(c["status"], c.get("errorType")) for c in refreshes] == [(400, "ResourceNotFoundException"), (200, None)]
    assert "deviceKey=none" in refreshes[-1]["note"]


# ---------------------------------------------------------------------------
# devices list / forget
# ---------------------------------------------------------------------------


def test_devices_list_marks_this_device(tracked, fake, cognito):
    first_sign_in(tracked, fake)
    key = stored_device(tracked.keyring)["deviceKey"]
    listed = tracked.run("devices", "list", "--output", "json")
    assert listed.code == 0, listed
    doc = listed.json()
    assert doc["user"] == "alice" and doc["userPoolId"] == tracked.pool.pool_id
    [mine] = doc["devices"]
    assert mine == {**mine, "deviceKey": key, "name": f"authctl on {socket.gethostname()}", "remembered": True,
                    "thisDevice": True}
    assert set(mine) == {"deviceKey", "name", "lastSeen", "createdAt", "remembered", "thisDevice"}
    text = tracked.run("devices", "list")
    assert text.code == 0 and text.out.startswith(f"* {key}  authctl on "), text


def test_devices_list_escapes_names_from_outside(tracked, fake, cognito):
    first_sign_in(tracked, fake)
    auth = cognito.initiate_auth(ClientId=tracked.pool.client_id, AuthFlow="USER_PASSWORD_AUTH",
                                 AuthParameters={"USERNAME": "alice", "PASSWORD": tracked.pool.users["alice"]})
    step = cognito.respond_to_auth_challenge(ClientId=tracked.pool.client_id, ChallengeName=EMAIL, Session=auth["Session"],
                                             ChallengeResponses={"USERNAME": "alice", "EMAIL_OTP_CODE": CODE})
    result = step["AuthenticationResult"]
    cognito.confirm_device(AccessToken=result["AccessToken"], DeviceKey=result["NewDeviceMetadata"]["DeviceKey"],
                           DeviceSecretVerifierConfig={"PasswordVerifier": base64.b64encode(b"\x05" * 8).decode(),
                                                       "Salt": base64.b64encode(b"\x01" * 16).decode()},
                           DeviceName="evil\x1b]0;owned\x07\x1b[2J")
    r = tracked.run("devices", "list")
    assert r.code == 0, r
    assert "\x1b" not in r.out and "\x07" not in r.out
    assert "evil\\x1b]0;owned\\x07\\x1b[2J" in r.out, r
    assert len(r.out.splitlines()) == 2


def test_forget_this_device_then_mfa_again(tracked, fake):
    first_sign_in(tracked, fake)
    key = stored_device(tracked.keyring)["deviceKey"]
    mark = fake.mark()
    r = tracked.run("devices", "forget", "--output", "json")
    assert r.code == 0, r
    assert r.json() == {"user": "alice", "userPoolId": tracked.pool.pool_id, "deviceKey": key, "service": "forgotten",
                        "removedLocally": True}
    assert calls(fake, mark, tracked, "ForgetDevice") == [("ForgetDevice", None, 200, None)]
    assert device_items(tracked.keyring) == []
    assert tracked.keyring.session() is not None, "forgetting the device keeps the session"
    r = tracked.signin()
    assert r.code == 64 and "--code" in r.err, r  # MFA again
    first_sign_in(tracked, fake)

    nothing = tracked.run("devices", "forget", "us-east-1_00000000-0000-0000-0000-000000000000")
    assert nothing.code == 65 and "knows no device" in nothing.err, nothing
    assert len(device_items(tracked.keyring)) == 1, "another key's refusal leaves this device alone"


def test_forget_without_a_local_device_or_a_session(cli, fake):
    r = cli.run("devices", "forget")
    assert r.code == 77, r  # not signed in
    assert cli.signin().code == 0
    r = cli.run("devices", "forget")
    assert r.code == 64 and "DEVICE_KEY" in r.err, r
    r = cli.run("devices", "list", "--output", "json")
    assert r.code == 0 and r.json()["devices"] == [], r


def test_device_forgotten_elsewhere_is_discarded_and_said(tracked, fake, cognito):
    first_sign_in(tracked, fake)
    key = stored_device(tracked.keyring)["deviceKey"]
    cognito.admin_forget_device(UserPoolId=tracked.pool.pool_id, Username="alice", DeviceKey=key)
    mark = fake.mark()
    r = tracked.signin("alice", None, "--mfa-code", CODE)
    assert r.code == 0, r
    assert "refused this machine's remembered device" in r.err and key in r.err, r
    steps = sign_in_calls(fake, mark, tracked)
    assert steps[0] == ("InitiateAuth", "USER_SRP_AUTH", 400, "ResourceNotFoundException"), steps
    assert ("RespondToAuthChallenge", EMAIL, 200, None) in steps
    assert stored_device(tracked.keyring)["deviceKey"] != key, "a new device replaced it"


# ---------------------------------------------------------------------------
# Ops: devices list / forget --user (AdminListDevices / AdminForgetDevice, SigV4)
# ---------------------------------------------------------------------------


@pytest.fixture
def proxy(fake):
    p = SigV4CheckingProxy(fake.url, {ACCESS_KEY: SECRET_KEY}, operations=("AdminListDevices", "AdminForgetDevice")).start()
    yield p
    p.stop()


def ops(cli: Cli, proxy, *args: str, **extra: str | None):
    creds: dict[str, str | None] = {"AUTHCTL_CLIENT_ID": None, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                                    "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "USER": "ops-oncall"}
    env = base_env(cli.keyring, cli.pool, proxy.endpoint, **{**creds, **extra})
    return run_authctl(list(args), env)


def test_ops_list_and_forget_a_users_device(tracked, fake, proxy):
    first_sign_in(tracked, fake)
    key = stored_device(tracked.keyring)["deviceKey"]
    listed = ops(tracked, proxy, "devices", "list", "--user", "alice", "--output", "json")
    assert listed.code == 0, listed
    assert [(d["deviceKey"], d["thisDevice"]) for d in listed.json()["devices"]] == [(key, False)]
    assert [c.ok for c in proxy.checked("AdminListDevices")] == [True]

    r = ops(tracked, proxy, "devices", "forget", "--user", "alice", key)
    assert r.code == 64 and "--yes" in r.err, r
    r = ops(tracked, proxy, "devices", "forget", "--user", "alice", key, "--yes")
    assert r.code == 0, r
    assert f"audit: AdminForgetDevice user=alice device={key}" in r.err and f"by={ACCESS_KEY}" in r.err, r
    assert [c.ok for c in proxy.checked("AdminForgetDevice")] == [True]
    again = ops(tracked, proxy, "devices", "forget", "--user", "alice", key, "--yes")
    assert again.code == 65 and "knows no device" in again.err, again
    missing = ops(tracked, proxy, "devices", "list", "--user", "nobody")
    assert missing.code == 65 and "no user nobody" in missing.err, missing
    wrong = ops(tracked, proxy, "devices", "list", "--user", "alice", AWS_SECRET_ACCESS_KEY="wrong/secret")
    assert wrong.code == 77 and "AWS credentials" in wrong.err, wrong

    # The next sign-in on this machine finds its device gone and says so.
    r = tracked.signin("alice", None, "--mfa-code", CODE)
    assert r.code == 0 and "refused this machine's remembered device" in r.err, r


def test_ops_forget_needs_a_device_key(cli):
    r = cli.run("devices", "forget", "--user", "alice")
    assert r.code == 64 and "DEVICE_KEY" in r.err, r
