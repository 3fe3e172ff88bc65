"""`authctl signout` (this device) and `authctl signout --global` (every device).

moto has no RevokeToken (HTTP 500 with an HTML page): the fake implements it (ClientSecret required
for a confidential client; the refresh token and the access tokens issued with it are refused
afterwards), and `set_config(revokeToken="upstream")` gives moto's 500 back. GlobalSignOut is
moto's own (it forgets the user's access tokens and revokes the refresh tokens); faults on it are
the fake's fault rules.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pexpect
import pytest
from botocore.exceptions import ClientError

from harness import Cli, authctl_bin, free_port, iso_utc, jwt_claims, parse_instant, token_values

import fake_cognito

REPORT_KEYS = {"signedOutLocally", "globalSignOut", "revokeToken", "exposureUntil", "forgetDevice"}
NOTHING_REVOKED = "Nothing was revoked"
# After a timeout, a dropped connection or a 5xx the service may have performed the request.
MAYBE_REVOKED = "may or may not have been revoked"
FAILED_REPORT = {"signedOutLocally": False, "globalSignOut": "failed", "revokeToken": "skipped", "exposureUntil": None,
                 "forgetDevice": "skipped"}
COULD_NOT_CONFIRM = "may still be signed in"


def raw_session(keyring):
    """The stored item exactly (secret JSON text, label, attributes), for byte-identical checks."""
    return [(i.get("secret"), i.get("label"), sorted(i["attributes"].items())) for i in keyring.session_items()]


def refresh_with(cognito, cli: Cli, refresh_token: str):
    """REFRESH_TOKEN_AUTH with this token, as another client of the service would (through the fake)."""
    params = {"REFRESH_TOKEN": refresh_token}
    if cli.secret_client:
        params["SECRET_HASH"] = fake_cognito.secret_hash(cli.pool.client_secret, "alice", cli.client_id)
    return cognito.initiate_auth(ClientId=cli.client_id, AuthFlow="REFRESH_TOKEN_AUTH", AuthParameters=params)


def refused(call) -> str:
    with pytest.raises(ClientError) as e:
        call()
    assert e.value.response["Error"]["Code"] == "NotAuthorizedException", e.value.response
    return e.value.response["Error"]["Message"]


def assert_no_tokens(r, session):
    for token in token_values(session):
        assert token not in r.out + r.err, f"a token was printed:\n{r}"


def assert_no_backtrace(r):
    for crash in ("Fatal error", "Stack dump", "Backtrace", "backtrace", "Current stack trace", "SIGSEGV", "SIGILL"):
        assert crash not in r.err, r


def assert_no_crash(r):
    assert 0 < r.code < 128, r
    assert_no_backtrace(r)


def refresh_index(calls) -> int | None:
    for i, c in enumerate(calls):
        if c.get("status") == 200 and (
            c["operation"] == "GetTokensFromRefreshToken"
            or (c["operation"] == "InitiateAuth" and c.get("authFlow") in ("REFRESH_TOKEN_AUTH", "REFRESH_TOKEN"))
        ):
            return i
    return None


def expire_access_token(cli: Cli) -> None:
    past = iso_utc(datetime.now(timezone.utc) - timedelta(hours=1))
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))


# ---------------------------------------------------------------------------
# This device
# ---------------------------------------------------------------------------


def test_signout_revokes_the_refresh_token_then_deletes(any_signed_in, fake, cognito):
    cli = any_signed_in
    session = cli.keyring.session()
    mark = fake.mark()
    r = cli.run("signout")
    assert r.code == 0, r
    assert "warning" not in r.err.lower(), r
    assert "Other devices stay signed in" in r.err, r
    assert r.out == ""
    # One RevokeToken, for the stored refresh token's client, answered by the fake. For the
    # confidential client a 200 proves the ClientSecret was sent: the fake refuses it without.
    revokes = fake.calls(mark, operation="RevokeToken")
    assert [(c["clientId"], c["status"], c["handledBy"]) for c in revokes] == [(session["clientId"], 200, "fake")], revokes
    assert session["clientId"] == cli.client_id
    assert fake.calls(mark, operation="GlobalSignOut") == []
    assert cli.keyring.session_items() == []
    assert_no_tokens(r, session)
    # Revoked for real: the refresh token and the access token it produced are refused.
    assert "revoked" in refused(lambda: refresh_with(cognito, cli, session["refreshToken"]))
    assert "revoked" in refused(lambda: cognito.get_user(AccessToken=session["accessToken"]))
    w = cli.run("whoami")
    assert w.code == 77 and "Not signed in (profile default)" in w.err, w


def test_signout_json(any_signed_in, fake):
    session = any_signed_in.keyring.session()
    r = any_signed_in.run("signout", "--output", "json")
    assert r.code == 0, r
    doc = r.json()
    assert set(doc) == REPORT_KEYS, doc
    assert (doc["signedOutLocally"], doc["globalSignOut"], doc["revokeToken"]) == (True, "skipped", "ok"), doc
    until = parse_instant(doc["exposureUntil"])
    assert until >= parse_instant(session["accessTokenExpiresAt"])
    assert until == max(parse_instant(session["accessTokenExpiresAt"]),
                        datetime.fromtimestamp(jwt_claims(session["idToken"])["exp"], timezone.utc))
    assert any_signed_in.keyring.session_items() == []


@pytest.mark.parametrize("output", ["text", "json"])
def test_signout_when_revocation_fails(any_signed_in, fake, cognito, output):
    """moto's own RevokeToken (HTTP 500, an HTML page): still signed out here, exit 0, and the
    warning is true: the refresh token still works."""
    cli = any_signed_in
    session = cli.keyring.session()
    fake.set_config(revokeToken="upstream")
    mark = fake.mark()
    r = cli.run("signout", "--output", output)
    assert r.code == 0, r
    # An HTTP 500 may come after the service acted: "may not have been revoked", not a certainty.
    assert "may not have been revoked" in r.err and "stays usable until it expires" in r.err, r
    assert "<html" not in r.err.lower()
    assert_no_backtrace(r)
    revokes = fake.calls(mark, operation="RevokeToken")
    assert revokes and all(c["status"] == 500 and c["handledBy"] == "moto" for c in revokes), revokes
    assert cli.keyring.session_items() == [], "the session is deleted even when revocation failed"
    if output == "json":
        doc = r.json()
        assert set(doc) == REPORT_KEYS
        assert (doc["signedOutLocally"], doc["globalSignOut"], doc["revokeToken"]) == (True, "skipped", "failed"), doc
        assert doc["exposureUntil"]
    else:
        assert r.out == ""
    assert_no_tokens(r, session)
    fake.set_config(revokeToken="fake")
    assert refresh_with(cognito, cli, session["refreshToken"])["AuthenticationResult"]["AccessToken"]


def test_signout_offline(signed_in, fake):
    """Nothing listens at the session's endpoint: still signed out here, with the warning."""
    offline = f"http://127.0.0.1:{free_port()}/"
    signed_in.keyring.rewrite_session(lambda s: s.update(endpoint=offline))
    r = signed_in.run("signout", "--timeout", "2", AUTHCTL_ENDPOINT=offline, timeout=40)
    assert r.code == 0, r
    assert "could not be revoked" in r.err and "nothing was sent" not in r.err, r
    assert signed_in.keyring.session_items() == []


def test_not_signed_in(cli, fake):
    mark = fake.mark()
    r = cli.run("signout")
    assert r.code == 0, r
    assert "Not signed in (profile default)" in r.err, r
    r = cli.run("signout", "--output", "json")
    assert r.code == 0, r
    assert r.json() == {"signedOutLocally": False, "globalSignOut": "skipped", "revokeToken": "skipped",
                        "exposureUntil": None, "forgetDevice": "skipped"}
    r = cli.run("signout", "--global", "--yes")
    assert r.code == 77, r
    assert "Not signed in (profile default)" in r.err, r
    assert fake.calls(mark) == [], "nothing to revoke: no request"


def test_twice_is_harmless(signed_in, fake):
    mark = fake.mark()
    assert signed_in.run("signout").code == 0
    r = signed_in.run("signout")
    assert r.code == 0, r
    assert "Not signed in (profile default)" in r.err, r
    assert len(fake.calls(mark, operation="RevokeToken")) == 1


def test_other_profile_is_left_alone(signed_in):
    assert signed_in.signin("alice", None, "--profile", "work").code == 0
    assert signed_in.run("signout", "--profile", "work").code == 0
    assert signed_in.keyring.session_items("work") == []
    assert signed_in.run("whoami").code == 0


# ---------------------------------------------------------------------------
# Two devices
# ---------------------------------------------------------------------------


def two_devices(cli, keyrings):
    a, b = cli, cli.with_keyring(keyrings(name="device-b"))
    assert a.signin().code == 0 and b.signin().code == 0
    assert a.keyring.session()["refreshToken"] != b.keyring.session()["refreshToken"]
    return a, b


def test_global_signout_ends_the_other_device(cli, keyrings, fake):
    a, b = two_devices(cli, keyrings)
    session = a.keyring.session()
    mark = fake.mark()
    r = a.run("signout", "--global", "--yes")
    assert r.code == 0, r
    assert "Signed alice out of every device" in r.err, r
    assert "keep passing offline JWT checks" in r.err, r
    assert r.out == ""
    assert_no_tokens(r, session)
    assert [(c["status"], c["handledBy"]) for c in fake.calls(mark, operation="GlobalSignOut")] == [(200, "moto")]
    assert fake.calls(mark, operation="RevokeToken") == []
    assert a.keyring.session_items() == []
    w = b.run("whoami")
    assert w.code == 77, w
    assert "ended" in w.err.lower(), w
    assert b.keyring.session_items() == [], "B's dead session is removed"


def test_local_signout_leaves_the_other_device_signed_in(cli, keyrings, fake):
    a, b = two_devices(cli, keyrings)
    b_before = raw_session(b.keyring)
    r = a.run("signout")
    assert r.code == 0, r
    assert a.keyring.session_items() == []
    w = b.run("whoami", "--output", "json")
    assert w.code == 0, w
    assert w.json()["username"] == "alice"
    assert raw_session(b.keyring) == b_before


# ---------------------------------------------------------------------------
# Every device: confirmation, refresh first, JSON
# ---------------------------------------------------------------------------


def test_global_without_a_terminal_needs_yes(signed_in, fake):
    before = raw_session(signed_in.keyring)
    mark = fake.mark()
    r = signed_in.run("signout", "--global")
    assert r.code == 64, r
    assert "--yes" in r.err, r
    assert raw_session(signed_in.keyring) == before
    assert fake.calls(mark) == [], "no request before the confirmation"


def test_global_asks_on_a_terminal(signed_in, fake):
    """On a terminal (a pty): `Sign out alice on ALL devices? [y/N]`; anything but y cancels
    (exit 1, nothing changed, no request); y signs out."""
    env = signed_in.env()
    before = raw_session(signed_in.keyring)
    mark = fake.mark()
    for reply, code in (("", 1), ("n", 1), ("yes please", 1), ("y", 0)):
        child = pexpect.spawn(str(authctl_bin()), ["signout", "--global"], env=env, cwd=env["HOME"], timeout=30,
                              encoding="utf-8")
        child.expect_exact("Sign out alice on ALL devices? [y/N]")
        child.sendline(reply)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == code, (reply, child.before)
        if code == 1:
            assert raw_session(signed_in.keyring) == before, reply
            assert fake.calls(mark) == [], reply
    assert [c["status"] for c in fake.calls(mark, operation="GlobalSignOut")] == [200]
    assert signed_in.keyring.session_items() == []


def test_global_json(any_cli, fake, cognito):
    signed_at = datetime.now(timezone.utc)
    assert any_cli.signin().code == 0
    session = any_cli.keyring.session()
    r = any_cli.run("signout", "--global", "--yes", "--output", "json")
    assert r.code == 0, r
    doc = r.json()
    assert set(doc) == REPORT_KEYS, doc
    assert (doc["signedOutLocally"], doc["globalSignOut"], doc["revokeToken"]) == (True, "ok", "skipped"), doc
    until = parse_instant(doc["exposureUntil"])
    assert doc["exposureUntil"].endswith("Z") or doc["exposureUntil"].endswith("+00:00")
    assert signed_at + timedelta(minutes=55) <= until <= signed_at + timedelta(minutes=65), until
    assert any_cli.keyring.session_items() == []
    assert_no_tokens(r, session)
    # Ended on the service, not only here.
    assert "revoked" in refused(lambda: refresh_with(cognito, any_cli, session["refreshToken"])).lower()


def test_global_refreshes_an_expired_access_token_first(any_signed_in, fake):
    cli = any_signed_in
    expire_access_token(cli)
    mark = fake.mark()
    r = cli.run("signout", "--global", "--yes", "--output", "json")
    assert r.code == 0, r
    assert r.json()["globalSignOut"] == "ok"
    calls = [c for c in fake.calls(mark) if c.get("operation")]
    i_refresh = refresh_index(calls)
    i_signout = next(i for i, c in enumerate(calls) if c["operation"] == "GlobalSignOut")
    assert i_refresh is not None and i_refresh < i_signout, [(c["operation"], c.get("authFlow"), c["status"]) for c in calls]
    assert calls[i_signout]["status"] == 200
    assert cli.keyring.session_items() == []
    # The exposure window is the refreshed tokens': about an hour from now.
    assert parse_instant(r.json()["exposureUntil"]) > datetime.now(timezone.utc) + timedelta(minutes=50)


# ---------------------------------------------------------------------------
# Every device: the failure paths
# ---------------------------------------------------------------------------


FAULTS = [
    # (id, fault rule, exit code, what stderr says was revoked, more words in stderr). A 5xx, a
    # dropped connection or an HTML page may come after the service acted: the outcome is unknown.
    # Throttling is a refusal: nothing was done.
    ("5xx", dict(kind="status", status=503, count=-1), 69, MAYBE_REVOKED, []),
    ("throttled", dict(kind="throttle", count=-1), 75, NOTHING_REVOKED, []),
    ("limit-exceeded", dict(kind="error", errorType="LimitExceededException",
                            message="Attempt limit exceeded, please try after some time.", count=-1), 75, NOTHING_REVOKED, []),
    ("dropped", dict(kind="drop", count=-1), 69, MAYBE_REVOKED, []),
    ("html-page", dict(kind="html", status=502, count=-1), 69, MAYBE_REVOKED, ["502"]),
]


@pytest.mark.parametrize("rule,code,revoked,words", [f[1:] for f in FAULTS], ids=[f[0] for f in FAULTS])
def test_global_failure_keeps_the_session(signed_in, fake, rule, code, revoked, words):
    before = raw_session(signed_in.keyring)
    session = signed_in.keyring.session()
    fake.add_fault(operation="GlobalSignOut", **rule)
    mark = fake.mark()
    r = signed_in.run("signout", "--global", "--yes")
    assert r.code == code, r
    assert_no_crash(r)
    assert revoked in r.err, r
    assert (NOTHING_REVOKED in r.err) == (revoked == NOTHING_REVOKED), "never stated as fact when unknown"
    assert "authctl signout" in r.err, "suggests signing out of this device only"
    for w in words:
        assert w in r.err, r
    assert "<html" not in r.err.lower() and "nginx" not in r.err, "an HTML page is not a message"
    assert r.out == ""
    assert_no_tokens(r, session)
    attempts = 1 if rule.get("errorType") == "LimitExceededException" else 3
    assert len(fake.calls(mark, operation="GlobalSignOut")) == attempts, "retried up to 3 attempts (not LimitExceeded)"
    assert raw_session(signed_in.keyring) == before, "the session must be kept byte for byte"
    # Nothing reached the service (faults answered before moto): still signed in, truly.
    fake.clear_faults()
    assert signed_in.run("whoami").code == 0
    # JSON: the report says it failed and nothing changed here; the message is on stderr.
    fake.add_fault(operation="GlobalSignOut", **rule)
    r = signed_in.run("signout", "--global", "--yes", "--output", "json")
    assert r.code == code, r
    assert r.json() == FAILED_REPORT, r
    assert revoked in r.err


def test_global_stall_past_the_timeout(signed_in, fake):
    before = raw_session(signed_in.keyring)
    # The stalled requests are answered after 30 s, long after this test: moto then performs them.
    fake.add_fault(operation="GlobalSignOut", kind="stall", seconds=30, count=-1)
    started = time.monotonic()
    r = signed_in.run("signout", "--global", "--yes", "--timeout", "2", timeout=60)
    elapsed = time.monotonic() - started
    assert r.code == 69, r
    assert elapsed < 15, f"took {elapsed:.1f}s with --timeout 2"
    assert_no_crash(r)
    # The stalled request reaches moto later and is performed: "Nothing was revoked" would be false.
    assert MAYBE_REVOKED in r.err and NOTHING_REVOKED not in r.err and "authctl signout" in r.err, r
    assert raw_session(signed_in.keyring) == before


def test_global_unreachable_keeps_the_session(signed_in, fake):
    """Nothing listens at the endpoint (connection refused): the request certainly did not reach
    the service, so "Nothing was revoked" is true; the session is kept, exit 69, JSON says failed.
    (The session's own endpoint is the closed one: another one would be refused before any request.)"""
    closed = f"http://127.0.0.1:{free_port()}/"
    signed_in.keyring.rewrite_session(lambda s: s.update(endpoint=closed))
    before = raw_session(signed_in.keyring)
    r = signed_in.run("signout", "--global", "--yes", "--timeout", "2", AUTHCTL_ENDPOINT=closed, timeout=40)
    assert r.code == 69, r
    assert_no_crash(r)
    assert NOTHING_REVOKED in r.err and "authctl signout" in r.err, r
    assert MAYBE_REVOKED not in r.err, r
    assert raw_session(signed_in.keyring) == before
    r = signed_in.run("signout", "--global", "--yes", "--output", "json", "--timeout", "2", AUTHCTL_ENDPOINT=closed,
                      timeout=40)
    assert r.code == 69, r
    assert r.json() == FAILED_REPORT, r
    assert raw_session(signed_in.keyring) == before


def test_global_refresh_failing_keeps_the_session(signed_in, fake):
    """The access token has expired and the refresh itself cannot reach the service."""
    expire_access_token(signed_in)
    before = raw_session(signed_in.keyring)
    fake.add_fault(operation="*", kind="status", status=500, count=-1)
    r = signed_in.run("signout", "--global", "--yes")
    assert r.code == 69, r
    assert_no_crash(r)
    assert NOTHING_REVOKED in r.err, r
    assert raw_session(signed_in.keyring) == before


def test_global_answer_lost_then_retried(signed_in, fake):
    """moto performs the first GlobalSignOut but its answer is lost (500 after): the retry finds
    the tokens revoked. The user must not stay signed in locally with a dead session."""
    fake.add_fault(operation="GlobalSignOut", kind="status", status=500, when="after")
    r = signed_in.run("signout", "--global", "--yes", "--output", "json")
    assert r.code == 0, r
    doc = r.json()
    assert doc["signedOutLocally"] is True and doc["globalSignOut"] in ("ok", "already-ended"), doc
    assert signed_in.keyring.session_items() == []


def test_global_refused_refresh_cannot_confirm(any_signed_in, fake, cognito):
    """An admin ended the sessions first (boto3 AdminUserGlobalSignOut) and the access token has
    expired, so the refresh is refused. The dead session is removed here; exit 0 and "already-ended"
    (the issue's contract), but authctl cannot tell a global sign-out from this device's token alone
    being revoked, so it says so and what to do, on stderr in JSON mode too."""
    cli = any_signed_in
    expire_access_token(cli)
    session = cli.keyring.session()
    cognito.admin_user_global_sign_out(UserPoolId=cli.pool.pool_id, Username="alice")
    r = cli.run("signout", "--global", "--yes", "--output", "json")
    assert r.code == 0, r
    doc = r.json()
    assert set(doc) == REPORT_KEYS
    assert (doc["signedOutLocally"], doc["globalSignOut"], doc["revokeToken"]) == (True, "already-ended", "skipped"), doc
    assert doc["exposureUntil"]
    assert COULD_NOT_CONFIRM in r.err and "removed from this device" in r.err, r
    assert "authctl signout --global --user alice" in r.err, r
    assert cli.keyring.session_items() == []
    assert_no_tokens(r, session)


def test_global_after_this_device_alone_was_revoked(cli, keyrings, fake, cognito):
    """Only A's refresh token was revoked (RevokeToken, e.g. by another tool): GlobalSignOut with
    A's access token is refused ("Access Token has been revoked"), and B is still signed in. A's
    dead session is removed (exit 0, already-ended), but the command must not claim every device
    is signed out."""
    a, b = two_devices(cli, keyrings)
    session = a.keyring.session()
    cognito.revoke_token(Token=session["refreshToken"], ClientId=a.client_id)
    for output in ("text", "json"):
        if output == "json":
            assert a.signin().code == 0
            cognito.revoke_token(Token=a.keyring.session()["refreshToken"], ClientId=a.client_id)
        r = a.run("signout", "--global", "--yes", "--output", output)
        assert r.code == 0, r
        assert "Signed alice out of every device" not in r.err, r
        assert COULD_NOT_CONFIRM in r.err and "authctl signout --global" in r.err, r
        assert "removed from this device" in r.err, r
        assert a.keyring.session_items() == [], "a dead session must not stay"
        if output == "json":
            doc = r.json()
            assert (doc["signedOutLocally"], doc["globalSignOut"], doc["revokeToken"]) == (True, "already-ended", "skipped"), doc
        else:
            assert r.out == ""
        assert_no_tokens(r, session)
        # ...and indeed B is still signed in.
        w = b.run("whoami")
        assert w.code == 0, w


def test_global_access_token_refused_as_expired_is_refreshed_and_retried(signed_in, fake):
    """The service says the access token has expired (this machine's clock is behind): refresh,
    then GlobalSignOut again; not "already ended"."""
    fake.add_fault(operation="GlobalSignOut", kind="error", errorType="NotAuthorizedException",
                   message="Access Token has expired")
    mark = fake.mark()
    r = signed_in.run("signout", "--global", "--yes", "--output", "json")
    assert r.code == 0, r
    assert r.json()["globalSignOut"] == "ok", r
    calls = [c for c in fake.calls(mark) if c.get("operation")]
    assert [c["status"] for c in calls if c["operation"] == "GlobalSignOut"] == [400, 200], calls
    assert refresh_index(calls) is not None
    assert signed_in.keyring.session_items() == []


def test_global_user_deleted(signed_in, fake):
    """GlobalSignOut answers UserNotFoundException (the user was deleted): the session is dead
    everywhere; it is removed here (not kept with exit 77) and the command says why."""
    fake.add_fault(operation="GlobalSignOut", kind="error", errorType="UserNotFoundException", message="User does not exist.")
    r = signed_in.run("signout", "--global", "--yes", "--output", "json")
    assert r.code == 0, r
    doc = r.json()
    assert (doc["signedOutLocally"], doc["globalSignOut"]) == (True, "already-ended"), doc
    assert "no longer exists" in r.err, r
    assert signed_in.keyring.session_items() == []


def test_global_exposure_covers_a_later_device(cli, keyrings, fake):
    """Tokens issued on B after A signed in outlive A's own: the window reported on A is now plus
    the token lifetime, which covers B's tokens (not A's expiry)."""
    a = cli
    assert a.signin().code == 0
    time.sleep(2.2)  # JWT times are whole seconds
    b = cli.with_keyring(keyrings(name="device-b"))
    assert b.signin().code == 0
    a_session, b_session = a.keyring.session(), b.keyring.session()
    b_exp = max(jwt_claims(b_session["accessToken"])["exp"], jwt_claims(b_session["idToken"])["exp"])
    assert b_exp > jwt_claims(a_session["accessToken"])["exp"], "B's tokens must outlive A's for this test"
    r = a.run("signout", "--global", "--yes", "--output", "json")
    assert r.code == 0, r
    until = parse_instant(r.json()["exposureUntil"])
    assert until >= datetime.fromtimestamp(b_exp, timezone.utc), (until, b_exp)
    assert until <= datetime.now(timezone.utc) + timedelta(hours=1, minutes=1)
    r = b.run("whoami")
    assert r.code == 77, r
    # The text says it is an upper bound.
    assert a.signin().code == 0
    r = a.run("signout", "--global", "--yes")
    assert r.code == 0, r
    assert "up to 1 hour" in r.err and "at the latest" in r.err, r


def test_global_answer_lost_then_refused_is_most_likely_ended(signed_in, fake):
    """The first GlobalSignOut is performed but its answer lost (dropped after moto acted); the
    retry is refused: that refusal most likely comes from this very request: already-ended, exit 0."""
    fake.add_fault(operation="GlobalSignOut", kind="drop", when="after")
    r = signed_in.run("signout", "--global", "--yes", "--output", "json")
    assert r.code == 0, r
    doc = r.json()
    assert (doc["signedOutLocally"], doc["globalSignOut"]) == (True, "already-ended"), doc
    assert "most likely" in r.err, r
    assert signed_in.keyring.session_items() == []


UNREADABLE = "{not json"


def store_garbage(cli: Cli) -> None:
    """A damaged session item: authctl's own lookup finds it, and cannot decode it."""
    items = cli.keyring.session_items()
    assert len(items) == 1
    attrs = dict(items[0]["attributes"])
    if items[0].get("schema"):
        attrs["xdg:schema"] = items[0]["schema"]
    cli.keyring.store(items[0].get("label") or "authctl session", attrs, UNREADABLE)
    assert [i["secret"] for i in cli.keyring.session_items()] == [UNREADABLE]
    w = cli.run("whoami")
    assert w.code == 77 and "unreadable" in w.err, w


@pytest.mark.parametrize("output", ["text", "json"])
def test_signout_removes_an_unreadable_session(signed_in, fake, output):
    store_garbage(signed_in)
    mark = fake.mark()
    r = signed_in.run("signout", "--output", output)
    assert r.code == 0, r
    assert "unreadable" in r.err and "nothing could be revoked" in r.err, r
    assert signed_in.keyring.session_items() == []
    assert fake.calls(mark) == []
    if output == "json":
        assert r.json() == {"signedOutLocally": True, "globalSignOut": "skipped", "revokeToken": "failed",
                            "exposureUntil": None, "forgetDevice": "skipped"}
    assert signed_in.run("signout").code == 0


def test_global_signout_removes_an_unreadable_session(signed_in, fake):
    store_garbage(signed_in)
    mark = fake.mark()
    r = signed_in.run("signout", "--global", "--yes", "--output", "json")
    assert r.code == 77, r
    assert r.json() == {"signedOutLocally": True, "globalSignOut": "failed", "revokeToken": "skipped",
                        "exposureUntil": None, "forgetDevice": "skipped"}
    assert "unreadable" in r.err and "other devices were not signed out" in r.err, r
    assert "authctl signout --global" in r.err, r
    assert signed_in.keyring.session_items() == []
    assert fake.calls(mark) == []
