"""`authctl sessions`, `sessions revoke`, `signout --others` and `signout --with-linked`.

moto has no session tracking: the fake answers ListUserSessions, RevokeUserSession and
RevokeToken's RevokeAssociatedSessions as the service does (fake_cognito/sessions.py: a token
session per sign-in, shapes and error codes from botocore 1.44.8's model, every request
validated against it), with tracking off by default and turned on per pool.
"""

from __future__ import annotations

import json

import pytest

from harness import run_authctl

HOSTILE_DEVICE = "Evil\x1b[2J\x1b]0;pwned\x07Browser\nsecond line"
HOSTILE_CITY = "Oslo\x1b[31m\r"


@pytest.fixture
def devices(cli, keyrings, fake):
    """Three devices of alice signed in, in order, on a pool with session tracking on; the
    second's device name and city hostile."""
    fake.set_config(sessionTracking={cli.pool.pool_id: True},
                    nextSessions=[{"deviceType": "Firefox on Linux", "city": "Bergen", "country": "NO"},
                                  {"deviceType": HOSTILE_DEVICE, "city": HOSTILE_CITY, "country": "NO"},
                                  {"deviceType": "Safari on iOS"}])
    three = [cli, cli.with_keyring(keyrings(name="device-b")), cli.with_keyring(keyrings(name="device-c"))]
    for device in three:
        assert device.signin().code == 0
    return three


def test_three_devices_listed_one_revoked_then_the_others(devices, fake, cognito):
    first, second, third = devices
    r = first.run("sessions", "--output", "json")
    assert r.code == 0, r
    listed = r.json()["sessions"]
    assert len(listed) == 3
    assert [s["current"] for s in listed].count(True) == 1
    current = next(s for s in listed if s["current"])
    assert current["device"] == "Firefox on Linux" and current["thisClient"] and current["type"] == "token"
    by_device = {s["device"]: s["sessionId"] for s in listed}

    # Text: the hostile device name and city escaped, the current one marked.
    t = first.run("sessions")
    assert t.code == 0, t
    assert "\x1b" not in t.out and "\x07" not in t.out and "\r" not in t.out
    assert len(t.out.strip().splitlines()) == 3, t.out
    assert "Bergen, NO" in t.out
    assert "Evil\\x1b[2J\\x1b]0;pwned\\x07Browser\\x0asecond line" in t.out and "Oslo\\x1b[31m\\x0d" in t.out
    marked = [line for line in t.out.splitlines() if line.startswith("*")]
    assert len(marked) == 1 and current["sessionId"] in marked[0]

    # This device's own session cannot be ended with revoke: it points to signout.
    own = first.run("sessions", "revoke", current["sessionId"], "--yes")
    assert own.code == 64 and "authctl signout" in own.err, own
    # Without a terminal and without --yes: refused before anything is ended.
    assert first.run("sessions", "revoke", by_device[HOSTILE_DEVICE]).code == 64
    bad = first.run("sessions", "revoke", "not-an-id", "--yes")
    assert bad.code == 64, bad

    second_tokens = second.keyring.session()
    mark = fake.mark()
    r = first.run("sessions", "revoke", by_device[HOSTILE_DEVICE], "--yes", "--output", "json")
    assert r.code == 0, r
    assert r.json()["results"] == [{"sessionId": by_device[HOSTILE_DEVICE], "result": "ended", "reason": None,
                                    "errorType": None}]
    assert r.json()["exposureUntil"]
    assert [c["operation"] for c in fake.calls(mark, operation="RevokeUserSession")] == ["RevokeUserSession"]
    # The second device's API access has ended (GetUser refused, its session removed), the third's works.
    assert second.run("whoami").code == 77
    assert third.run("whoami").code == 0
    # Its refresh token is refused too.
    with pytest.raises(cognito.exceptions.NotAuthorizedException, match="Refresh Token has been revoked"):
        cognito.initiate_auth(ClientId=second.client_id, AuthFlow="REFRESH_TOKEN_AUTH",
                              AuthParameters={"REFRESH_TOKEN": second_tokens["refreshToken"]})
    gone = first.run("sessions", "revoke", by_device[HOSTILE_DEVICE], "--yes")
    assert gone.code == 0 and "already gone" in gone.err, gone

    o = first.run("signout", "--others", "--yes")
    assert o.code == 0, o
    assert "Ended session" in o.err and "offline JWT checks" in o.err
    assert third.run("whoami").code == 77
    after = first.run("sessions", "--output", "json").json()["sessions"]
    assert [s["sessionId"] for s in after] == [current["sessionId"]]
    assert first.run("whoami").code == 0


def test_tracking_off_is_one_line_and_exit_0(cli, fake):
    assert cli.signin().code == 0
    r = cli.run("sessions")
    assert r.code == 0, r
    assert r.out == "" and len(r.err.strip().splitlines()) == 1
    assert "session tracking is off" in r.err and "set-user-pool-session-configuration" in r.err
    j = cli.run("sessions", "list", "--output", "json")
    assert j.code == 0 and j.json()["tracking"] is False and j.json()["sessions"] == []
    o = cli.run("signout", "--others", "--yes")
    assert o.code == 78 and "signout --global" in o.err, o


def test_signout_with_linked_sends_linked(cli, fake):
    fake.set_config(sessionTracking={cli.pool.pool_id: True})
    assert cli.signin().code == 0
    mark = fake.mark()
    assert cli.run("signout", "--with-linked").code == 0
    assert [c["operation"] for c in fake.calls(mark, operation="RevokeToken")] == ["RevokeToken"]
    assert fake.calls(mark, operation="RevokeToken")[0]["note"] == "RevokeAssociatedSessions=LINKED"
    assert cli.keyring.session() is None


def test_ops_sessions_revoke_ends_one_session_of_a_user_and_audits_it(devices, fake, tmp_path):
    """An operator (SigV4, through the checking proxy) ends the third device's session; the
    audit log has one line naming the session, the user and the operator."""
    from sigv4_check import SigV4CheckingProxy
    from test_ops_signout import ACCESS_KEY, SECRET_KEY, ops_env
    first, _, third = devices
    victim = next(s["sessionId"] for s in first.run("sessions", "--output", "json").json()["sessions"]
                  if s["device"] == "Safari on iOS")
    proxy = SigV4CheckingProxy(fake.url, {ACCESS_KEY: SECRET_KEY}).start()
    try:
        env = ops_env(first, proxy)
        audit = tmp_path / "audit.jsonl"
        assert run_authctl(["ops", "sessions", "revoke", "--user", "alice", victim], env).code == 64, "no --yes"
        r = run_authctl(["ops", "sessions", "revoke", "--user", "alice", victim, "--yes", "--audit-log", str(audit),
                         "--output", "json"], env)
        assert r.code == 0, r
        assert r.json()["results"][0]["result"] == "ended"
        again = run_authctl(["ops", "sessions", "revoke", "--user", "alice", victim, "--yes", "--audit-log",
                             str(audit)], env)
        assert again.code == 0 and "already gone" in again.err, again
    finally:
        proxy.stop()
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(e["action"], e["result"], e["session"], e["user"]) for e in lines] == [
        ("revokeSession", "ended", victim, "alice"), ("revokeSession", "notFound", victim, "alice")]
    assert lines[0]["operator"]["accessKeyId"] == ACCESS_KEY and lines[0]["requestId"]
    assert third.run("whoami").code == 77
    assert first.run("whoami").code == 0
