"""`authctl signout --global --user NAME` (ops): AdminUserGlobalSignOut signed with SigV4.

moto accepts any signature, so every test here puts sigv4_check.SigV4CheckingProxy between authctl
and the fake: it recomputes each AdminUserGlobalSignOut signature with botocore's SigV4Auth and
the secret key it knows, and refuses a mismatch as the service does (HTTP 400
InvalidSignatureException). The users' own calls (whoami on the devices) go to the fake directly.
"""

from __future__ import annotations

import os
import pwd

import re
import time
from datetime import datetime, timedelta, timezone

import boto3
import pexpect
import pytest
from botocore.exceptions import ClientError

from harness import Cli, authctl_bin, base_env, free_port, parse_instant, run_authctl
from sigv4_check import SIGNATURE_MISMATCH, SigV4CheckingProxy, SignatureError, verify

ACCESS_KEY = "AKIAOPSTEST000000001"
SECRET_KEY = "ops/Secret+Key/0123456789abcdefghijklmn"
OTHER_ACCESS_KEY = "AKIAOPSTEST000000002"
OTHER_SECRET_KEY = "second/Secret+Key/9876543210zyxwvutsrqp"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEPT//////////wEaCXVzLWVhc3QtMSJHMEUCIQD+test/session+token=="
REPORT_KEYS = {"exposureUntil", "globalSignOut", "revokeToken", "signedOutLocally", "user", "userPoolId", "signedOutAt",
               "tokenLifetimeSeconds", "exposureAssumed"}
AUDIT_RE = re.compile(
    r"^audit: AdminUserGlobalSignOut user=(?P<user>\S+) pool=(?P<pool>\S+) region=(?P<region>\S+) "
    r"by=(?P<by>\S+) \(local user (?P<local>[^,]+), credentials from (?P<source>.+)\) at=(?P<at>\S+)$",
    re.M,
)


@pytest.fixture
def proxy(fake):
    p = SigV4CheckingProxy(fake.url, {ACCESS_KEY: SECRET_KEY, OTHER_ACCESS_KEY: OTHER_SECRET_KEY}).start()
    yield p
    p.stop()


def ops_env(cli: Cli, proxy: SigV4CheckingProxy, **extra: str | None) -> dict[str, str]:
    """The operator's environment: the pool id, the endpoint through the checking proxy, no client
    id, no stored session needed. AWS credentials from `extra` (by default the right ones)."""
    creds = {"AUTHCTL_CLIENT_ID": None, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "USER": "ops-oncall"}
    creds.update(extra)
    return base_env(cli.keyring, cli.pool, proxy.endpoint, **creds)


def force_out(cli: Cli, proxy: SigV4CheckingProxy, *more: str, user: str = "alice", **extra: str | None):
    return run_authctl(["signout", "--global", "--user", user, "--yes", *more], ops_env(cli, proxy, **extra))


def admin_calls(fake, mark):
    return fake.calls(mark, operation="AdminUserGlobalSignOut")


def assert_no_secret(r, *secrets: str):
    for s in secrets:
        assert s not in r.out and s not in r.err, f"a secret was printed:\n{r}"


def raw_session(keyring):
    """The session item exactly as stored (secret JSON, label, attributes), for byte comparisons."""
    return [(i.get("secret"), i.get("label"), sorted(i["attributes"].items())) for i in keyring.session_items()]


# ---------------------------------------------------------------------------
# The checking proxy itself: it must accept botocore's own signature and refuse a wrong one,
# or the authctl tests below would prove nothing.
# ---------------------------------------------------------------------------


def test_proxy_accepts_botocore_and_refuses_a_wrong_secret(proxy, pool, fake):
    good = boto3.client("cognito-idp", endpoint_url=proxy.endpoint.rstrip("/"), region_name="us-east-1",
                        aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, aws_session_token=SESSION_TOKEN)
    good.admin_user_global_sign_out(UserPoolId=pool.pool_id, Username="alice")
    assert [c.ok for c in proxy.checked("AdminUserGlobalSignOut")] == [True]
    bad = boto3.client("cognito-idp", endpoint_url=proxy.endpoint.rstrip("/"), region_name="us-east-1",
                       aws_access_key_id=ACCESS_KEY, aws_secret_access_key=OTHER_SECRET_KEY)
    mark = fake.mark()
    with pytest.raises(ClientError) as e:
        bad.admin_user_global_sign_out(UserPoolId=pool.pool_id, Username="alice")
    assert e.value.response["Error"]["Code"] == "InvalidSignatureException"
    assert e.value.response["Error"]["Message"] == SIGNATURE_MISMATCH
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert e.value.response["ResponseMetadata"]["HTTPHeaders"]["x-amzn-errortype"] == "InvalidSignatureException"
    assert admin_calls(fake, mark) == [], "a refused request must not reach the service"


# ---------------------------------------------------------------------------
# authctl's signature, checked by botocore
# ---------------------------------------------------------------------------


def test_force_out_ends_every_device_and_leaves_the_local_store_alone(cli, keyrings, proxy, fake):
    a, b = cli, cli.with_keyring(keyrings(name="device-b"))
    assert a.signin().code == 0 and b.signin().code == 0
    a_before = raw_session(a.keyring)
    mark = fake.mark()
    # The operator runs it on device A, where alice happens to be signed in too.
    r = force_out(a, proxy)
    assert r.code == 0, r
    [check] = proxy.checked("AdminUserGlobalSignOut")
    assert check.ok and check.access_key_id == ACCESS_KEY, check
    assert check.expected_authorization == check.received_authorization
    # authctl signs every header it sets (all but User-Agent); libcurl adds the unsigned rest.
    unsigned = set(check.received_headers) - set(check.signed_headers)
    assert unsigned <= {"user-agent", "authorization", "content-length", "accept-encoding"}, check
    assert {"host", "x-amz-date", "x-amz-target", "content-type"} <= set(check.signed_headers)
    assert [(c["status"], c["handledBy"]) for c in admin_calls(fake, mark)] == [(200, "moto")]
    assert fake.calls(mark, operation="GlobalSignOut") == [] and fake.calls(mark, operation="RevokeToken") == []

    audits = AUDIT_RE.findall(r.err)
    assert len(audits) == 1, r
    m = AUDIT_RE.search(r.err)
    assert (m["user"], m["pool"], m["region"], m["by"]) == ("alice", cli.pool.pool_id, "us-east-1", ACCESS_KEY), r
    assert m["local"] == pwd.getpwuid(os.getuid()).pw_name and m["source"] == "environment", r
    assert abs(parse_instant(m["at"]) - datetime.now(timezone.utc)) < timedelta(minutes=1)
    assert "1 hour" in r.err, "the exposure window (the client's access-token lifetime) must be stated"
    assert r.out == "", "text mode prints messages on stderr only"
    assert_no_secret(r, SECRET_KEY)

    # The local store is not touched: A's item is exactly as it was...
    assert raw_session(a.keyring) == a_before
    # ...but the session is dead on every device: whoami says so and removes it.
    for device in (b, a):
        w = device.run("whoami")
        assert w.code == 77, w
        assert "ended" in w.err.lower(), w
        assert device.keyring.session_items() == [], "the dead session must be removed by whoami"


def test_force_out_json_needs_no_session(cli, proxy, fake):
    """The operator's machine has no session at all (this keyring never signed in)."""
    mark = fake.mark()
    r = force_out(cli, proxy, "--output", "json")
    assert r.code == 0, r
    doc = r.json()
    assert set(doc) == REPORT_KEYS, doc
    assert (doc["globalSignOut"], doc["revokeToken"], doc["signedOutLocally"]) == ("ok", "skipped", False)
    assert (doc["user"], doc["userPoolId"]) == ("alice", cli.pool.pool_id)
    at, until = parse_instant(doc["signedOutAt"]), parse_instant(doc["exposureUntil"])
    assert abs(at - datetime.now(timezone.utc)) < timedelta(minutes=1)
    assert until - at == timedelta(hours=1), "exposure: the default access-token lifetime after now"
    # No client id to read the lifetime from: the JSON says the hour is assumed, stderr says why.
    assert (doc["tokenLifetimeSeconds"], doc["exposureAssumed"]) == (3600, True), doc
    assert "assumed" in r.err and "client id" in r.err, r
    assert fake.calls(mark, operation="DescribeUserPoolClient") == []
    assert AUDIT_RE.search(r.err), "the audit line goes to stderr in JSON mode too"
    assert [c.ok for c in proxy.checked("AdminUserGlobalSignOut")] == [True]
    assert [c["status"] for c in admin_calls(fake, mark)] == [200]
    assert cli.keyring.session_items() == []
    assert_no_secret(r, SECRET_KEY)


def test_force_out_with_a_session_token(cli, proxy, fake):
    """Temporary credentials: X-Amz-Security-Token must be sent and covered by the signature."""
    assert cli.signin().code == 0
    r = force_out(cli, proxy, AWS_SESSION_TOKEN=SESSION_TOKEN)
    assert r.code == 0, r
    [check] = proxy.checked("AdminUserGlobalSignOut")
    assert check.ok, check
    assert check.session_token == SESSION_TOKEN
    assert "x-amz-security-token" in check.signed_headers
    assert_no_secret(r, SECRET_KEY, SESSION_TOKEN)
    assert cli.run("whoami").code == 77


def test_the_check_binds_token_body_and_date(cli, proxy):
    """Replays authctl's signed request through the checker with one part changed: each change
    must break the signature (so an accepted request really was signed over these parts)."""
    assert force_out(cli, proxy, AWS_SESSION_TOKEN=SESSION_TOKEN).code == 0
    [check] = proxy.checked("AdminUserGlobalSignOut")
    method, path, headers, body = check.request
    secrets = {ACCESS_KEY: SECRET_KEY}
    assert verify(method, path, headers, body, secrets, "us-east-1").ok  # as received: passes again

    def replaced(name, value):
        return [(k, value if k.lower() == name else v) for k, v in headers]

    variants = {
        "session token": (replaced("x-amz-security-token", SESSION_TOKEN + "x"), body),
        "body": (headers, body.replace(b'"alice"', b'"bob"')),
        "target": (replaced("x-amz-target", "AWSCognitoIdentityProviderService.AdminDeleteUser"), body),
        "host": (replaced("host", "127.0.0.1:1"), body),
    }
    for what, (h, b) in variants.items():
        with pytest.raises(SignatureError) as e:
            verify(method, path, h, b, secrets, "us-east-1")
        assert e.value.error_type == "InvalidSignatureException", what
    without_token = [(k, v) for k, v in headers if k.lower() != "x-amz-security-token"]
    with pytest.raises(SignatureError):
        verify(method, path, without_token, body, secrets, "us-east-1")
    with pytest.raises(SignatureError):
        verify(method, path, headers, body, secrets, "eu-west-1")


@pytest.mark.parametrize("key,secret,error_type,words", [
    (ACCESS_KEY, OTHER_SECRET_KEY, "InvalidSignatureException", "The request signature we calculated does not match"),
    ("AKIAUNKNOWN000000000", SECRET_KEY, "UnrecognizedClientException", "The security token included in the request is invalid."),
], ids=["wrong-secret", "unknown-key"])
def test_refused_credentials_exit_77_with_the_services_words(cli, proxy, fake, key, secret, error_type, words):
    assert cli.signin().code == 0
    mark = fake.mark()
    r = force_out(cli, proxy, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret)
    assert r.code == 77, r
    assert error_type in r.err and words in r.err, r
    assert not AUDIT_RE.search(r.err), "no audit record of a sign-out that did not happen"
    assert r.out == ""
    assert admin_calls(fake, mark) == []
    assert_no_secret(r, secret)
    assert cli.run("whoami").code == 0, "nothing was signed out"


def test_access_denied_exits_77_with_the_services_words(cli, proxy, fake):
    words = "User: arn:aws:iam::123456789012:user/intern is not authorized to perform: cognito-idp:AdminUserGlobalSignOut"
    fake.add_fault(operation="AdminUserGlobalSignOut", kind="error", errorType="AccessDeniedException", message=words)
    r = force_out(cli, proxy)
    assert r.code == 77, r
    assert words in r.err, r
    assert not AUDIT_RE.search(r.err)


def test_unknown_user_exits_65(cli, proxy, fake):
    mark = fake.mark()
    r = force_out(cli, proxy, user="mallory")
    assert r.code == 65, r
    assert "mallory" in r.err and "User does not exist." in r.err, r
    assert not AUDIT_RE.search(r.err)
    assert [c["errorType"] for c in admin_calls(fake, mark)] == ["UserNotFoundException"]
    assert [c.ok for c in proxy.checked("AdminUserGlobalSignOut")] == [True], "signed correctly, refused for the user"


@pytest.mark.parametrize("kind,code,words", [
    # A 5xx or a dropped connection may come after the service acted: the outcome is unknown.
    ("status", 69, "may or may not have been revoked"),
    ("drop", 69, "may or may not have been revoked"),
    # Throttling is a refusal: nothing was done.
    ("throttle", 75, "Nothing was revoked"),
])
def test_service_failure_says_what_may_have_been_revoked(cli, proxy, fake, kind, code, words):
    assert cli.signin().code == 0
    fake.add_fault(operation="AdminUserGlobalSignOut", kind=kind, count=-1)
    mark = fake.mark()
    r = force_out(cli, proxy)
    assert r.code == code, r
    assert words in r.err, r
    if code == 69:
        assert "Nothing was revoked" not in r.err, r
    assert not AUDIT_RE.search(r.err)
    assert len(admin_calls(fake, mark)) == 3, "retried up to 3 attempts"
    # JSON: the report says it failed, on stdout, with the exit code.
    r = force_out(cli, proxy, "--output", "json")
    assert r.code == code, r
    doc = r.json()
    assert set(doc) == REPORT_KEYS, doc
    assert (doc["signedOutLocally"], doc["globalSignOut"], doc["revokeToken"]) == (False, "failed", "skipped"), doc
    assert (doc["user"], doc["userPoolId"], doc["exposureUntil"], doc["signedOutAt"]) == ("alice", cli.pool.pool_id, None, None)
    fake.clear_faults()
    assert cli.run("whoami").code == 0


def test_unreachable_says_nothing_was_revoked(cli, proxy, fake):
    """Connection refused: the request certainly did not reach the service."""
    env = ops_env(cli, proxy)
    env["AUTHCTL_ENDPOINT"] = f"http://127.0.0.1:{free_port()}/"
    r = run_authctl(["signout", "--global", "--user", "alice", "--yes", "--timeout", "2", "--output", "json"], env, timeout=40)
    assert r.code == 69, r
    assert "Nothing was revoked: alice is still signed in." in r.err, r
    assert r.json()["globalSignOut"] == "failed", r


def test_unknown_user_json_says_failed(cli, proxy):
    r = force_out(cli, proxy, "--output", "json", user="mallory")
    assert r.code == 65, r
    assert r.json()["globalSignOut"] == "failed", r


# ---------------------------------------------------------------------------
# The exposure window: the app client's own token lifetime when it can be read
# ---------------------------------------------------------------------------


def test_exposure_uses_the_app_clients_token_lifetime(cli, proxy, fake, cognito):
    """With a client id configured, DescribeUserPoolClient (signed the same way, checked by botocore)
    gives the lifetimes: access 2 hours, id 90 minutes: the window is 2 hours, not assumed."""
    cognito.update_user_pool_client(UserPoolId=cli.pool.pool_id, ClientId=cli.pool.client_id, AccessTokenValidity=2,
                                    IdTokenValidity=90, TokenValidityUnits={"AccessToken": "hours", "IdToken": "minutes"})
    mark = fake.mark()
    r = force_out(cli, proxy, "--output", "json", AUTHCTL_CLIENT_ID=cli.pool.client_id)
    assert r.code == 0, r
    doc = r.json()
    assert (doc["tokenLifetimeSeconds"], doc["exposureAssumed"]) == (7200, False), doc
    assert parse_instant(doc["exposureUntil"]) - parse_instant(doc["signedOutAt"]) == timedelta(hours=2)
    assert [c.ok for c in proxy.checked("DescribeUserPoolClient")] == [True], "signed, and botocore agrees"
    assert [c["status"] for c in fake.calls(mark, operation="DescribeUserPoolClient")] == [200]
    assert cli.pool.client_secret not in r.out + r.err
    r = force_out(cli, proxy, AUTHCTL_CLIENT_ID=cli.pool.client_id)
    assert r.code == 0, r
    assert "up to the app client's token lifetime (2 hours)" in r.err and "at the latest" in r.err, r


def test_exposure_assumed_when_the_client_cannot_be_read(cli, proxy, fake):
    fake.add_fault(operation="DescribeUserPoolClient", kind="error", errorType="AccessDeniedException",
                   message="not allowed to describe clients", count=-1)
    r = force_out(cli, proxy, "--output", "json", AUTHCTL_CLIENT_ID=cli.pool.client_id)
    assert r.code == 0, r
    doc = r.json()
    assert (doc["globalSignOut"], doc["tokenLifetimeSeconds"], doc["exposureAssumed"]) == ("ok", 3600, True), doc
    assert "assumed" in r.err and "not allowed to describe clients" in r.err, r
    r = force_out(cli, proxy, AUTHCTL_CLIENT_ID=cli.pool.client_id)
    assert r.code == 0, r
    assert "1 hour by default (assumed:" in r.err, r


# ---------------------------------------------------------------------------
# Where the credentials come from
# ---------------------------------------------------------------------------


def test_no_credentials_exits_78_naming_where_to_put_them(cli, proxy, fake):
    home = cli.keyring.home
    missing = home / "nowhere" / "credentials"
    no_env = {"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None}
    cases = [
        ("AWS_SHARED_CREDENTIALS_FILE", dict(no_env, AWS_SHARED_CREDENTIALS_FILE=str(missing)), missing),
        ("the default file", no_env, home / ".aws" / "credentials"),
    ]
    mark = fake.mark()
    for what, extra, path in cases:
        r = force_out(cli, proxy, **extra)
        assert r.code == 78, (what, r)
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            assert name in r.err, (what, r)
        assert str(path) in r.err, (what, r)
    assert fake.calls(mark) == [] and proxy.checked() == []


@pytest.mark.parametrize("unset,missing", [("AWS_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY"),
                                           ("AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID")])
def test_partial_environment_credentials_are_refused(cli, proxy, fake, unset, missing):
    """Half a key pair in the environment must not fall back to the file (another identity, maybe):
    exit 78 naming the missing variable, as botocore's PartialCredentialsError."""
    path = cli.keyring.home / "credentials"
    path.write_text(f"[default]\naws_access_key_id={OTHER_ACCESS_KEY}\naws_secret_access_key={OTHER_SECRET_KEY}\n")
    mark = fake.mark()
    r = force_out(cli, proxy, AWS_SHARED_CREDENTIALS_FILE=str(path), **{unset: None})
    assert r.code == 78, r
    assert f"{missing} is not" in r.err, r
    assert fake.calls(mark) == [] and proxy.checked() == []
    assert_no_secret(r, SECRET_KEY, OTHER_SECRET_KEY)


def test_region_comes_from_the_pool_id_not_aws_region(cli, proxy):
    """AWS_REGION=eu-west-1 in the operator's shell, a us-east-1 pool: signed for us-east-1
    (the checking proxy refuses any other credential scope)."""
    r = force_out(cli, proxy, AUTHCTL_REGION=None, AWS_REGION="eu-west-1", AWS_DEFAULT_REGION="eu-west-1")
    assert r.code == 0, r
    [check] = proxy.checked("AdminUserGlobalSignOut")
    assert check.ok, check
    assert AUDIT_RE.search(r.err)["region"] == "us-east-1", r


def test_confirmation_prompt_on_a_terminal(cli, proxy, fake):
    """On a terminal (a pty), without --yes: `Sign out alice on ALL devices? [y/N]`; anything but y
    cancels with no request; y signs alice out."""
    assert cli.signin().code == 0
    env = ops_env(cli, proxy)
    mark = fake.mark()
    for reply, code in (("", 1), ("no", 1), ("y", 0)):
        child = pexpect.spawn(str(authctl_bin()), ["signout", "--global", "--user", "alice"], env=env, cwd=env["HOME"],
                              timeout=30, encoding="utf-8")
        child.expect_exact("Sign out alice on ALL devices? [y/N]")
        child.sendline(reply)
        child.expect(pexpect.EOF)
        output = child.before
        child.close()
        assert child.exitstatus == code, (reply, output)
        if code == 1:
            assert admin_calls(fake, mark) == [] and proxy.checked() == [], reply
            assert cli.run("whoami").code == 0, "nothing was signed out"
        else:
            assert AUDIT_RE.search(output.replace("\r\n", "\n")), output
    assert [c["status"] for c in admin_calls(fake, mark)] == [200]
    assert cli.run("whoami").code == 77


def test_shared_credentials_file_with_aws_profile(cli, proxy, fake):
    path = cli.keyring.home / "ops-credentials"
    path.write_text(
        "[default]\n"
        f"aws_access_key_id = {OTHER_ACCESS_KEY}\naws_secret_access_key = wrong-for-this-key\n\n"
        "# the operator's profile\n"
        "[ops]\n"
        f"aws_access_key_id = {ACCESS_KEY}\n"
        f"aws_secret_access_key = {SECRET_KEY}\n"
        f"aws_session_token = {SESSION_TOKEN}\n"
    )
    r = force_out(cli, proxy, AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None,
                  AWS_SHARED_CREDENTIALS_FILE=str(path), AWS_PROFILE="ops")
    assert r.code == 0, r
    [check] = proxy.checked("AdminUserGlobalSignOut")
    assert check.ok and check.access_key_id == ACCESS_KEY and check.session_token == SESSION_TOKEN, check
    m = AUDIT_RE.search(r.err)
    assert m and m["by"] == ACCESS_KEY and str(path) in m["source"], r
    assert_no_secret(r, SECRET_KEY, SESSION_TOKEN)


def test_default_shared_credentials_file(cli, proxy):
    aws = cli.keyring.home / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text(
        f"[default]\naws_access_key_id={OTHER_ACCESS_KEY}\naws_secret_access_key={OTHER_SECRET_KEY}\n")
    r = force_out(cli, proxy, AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None)
    assert r.code == 0, r
    [check] = proxy.checked("AdminUserGlobalSignOut")
    assert check.ok and check.access_key_id == OTHER_ACCESS_KEY and check.session_token is None, check
    assert AUDIT_RE.search(r.err)["by"] == OTHER_ACCESS_KEY
    assert_no_secret(r, OTHER_SECRET_KEY)


def test_environment_wins_over_the_file(cli, proxy):
    path = cli.keyring.home / "credentials"
    path.write_text(f"[default]\naws_access_key_id={OTHER_ACCESS_KEY}\naws_secret_access_key={OTHER_SECRET_KEY}\n")
    r = force_out(cli, proxy, AWS_SHARED_CREDENTIALS_FILE=str(path))
    assert r.code == 0, r
    assert [c.access_key_id for c in proxy.checked("AdminUserGlobalSignOut")] == [ACCESS_KEY]


def test_usage_errors_make_no_request(cli, proxy, fake):
    mark = fake.mark()
    r = run_authctl(["signout", "--global", "--user", "alice"], ops_env(cli, proxy))
    assert r.code == 64, r
    assert "--yes" in r.err, "without a terminal --yes is required"
    r = run_authctl(["signout", "--user", "alice", "--yes"], ops_env(cli, proxy))
    assert r.code == 64, r
    assert "--global" in r.err, r
    assert fake.calls(mark) == [] and proxy.checked() == []


def test_the_audit_line_names_the_real_user_not_the_environments(cli, proxy, fake):
    """`signout --global --user`'s audit line took the local user from $USER."""
    import pwd
    real = pwd.getpwuid(os.getuid()).pw_name
    r = force_out(cli, proxy, USER="mallory", LOGNAME="mallory", SUDO_USER="bob")
    assert r.code == 0, r
    m = AUDIT_RE.search(r.err)
    assert m and m["local"] == real and "mallory" not in r.err and "claimed" in r.err and "bob" in r.err, r
