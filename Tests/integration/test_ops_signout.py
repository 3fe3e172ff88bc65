"""`authctl signout --global --user NAME` (ops): AdminUserGlobalSignOut signed with SigV4.

moto accepts any signature, so every test here puts sigv4_check.SigV4CheckingProxy between authctl
and the fake: it recomputes each AdminUserGlobalSignOut signature with botocore's SigV4Auth and
the secret key it knows, and refuses a mismatch as the service does (HTTP 400
InvalidSignatureException). The users' own calls (whoami on the devices) go to the fake directly.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import boto3
import pytest
from botocore.exceptions import ClientError

from harness import Cli, base_env, parse_instant, run_authctl
from sigv4_check import SIGNATURE_MISMATCH, SigV4CheckingProxy, SignatureError, verify

ACCESS_KEY = "AKIAOPSTEST000000001"
SECRET_KEY = "ops/Secret+Key/0123456789abcdefghijklmn"
OTHER_ACCESS_KEY = "AKIAOPSTEST000000002"
OTHER_SECRET_KEY = "second/Secret+Key/9876543210zyxwvutsrqp"
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEPT//////////wEaCXVzLWVhc3QtMSJHMEUCIQD+test/session+token=="
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
    creds = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "USER": "ops-oncall"}
    creds.update(extra)
    return base_env(cli.keyring, cli.pool, proxy.endpoint, AUTHCTL_CLIENT_ID=None, **creds)


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
    assert m["local"] == "ops-oncall" and m["source"] == "environment", r
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
    assert set(doc) == {"exposureUntil", "globalSignOut", "revokeToken", "signedOutLocally", "user", "userPoolId",
                        "signedOutAt"}, doc
    assert (doc["globalSignOut"], doc["revokeToken"], doc["signedOutLocally"]) == ("ok", "skipped", False)
    assert (doc["user"], doc["userPoolId"]) == ("alice", cli.pool.pool_id)
    at, until = parse_instant(doc["signedOutAt"]), parse_instant(doc["exposureUntil"])
    assert abs(at - datetime.now(timezone.utc)) < timedelta(minutes=1)
    assert until - at == timedelta(hours=1), "exposure: the default access-token lifetime after now"
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


@pytest.mark.parametrize("kind,code", [("status", 69), ("throttle", 75)])
def test_service_failure_says_nothing_was_revoked(cli, proxy, fake, kind, code):
    assert cli.signin().code == 0
    fake.add_fault(operation="AdminUserGlobalSignOut", kind=kind, count=-1)
    mark = fake.mark()
    r = force_out(cli, proxy)
    assert r.code == code, r
    assert "Nothing was revoked" in r.err, r
    assert not AUDIT_RE.search(r.err)
    assert len(admin_calls(fake, mark)) == 3, "retried up to 3 attempts"
    fake.clear_faults()
    assert cli.run("whoami").code == 0


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
        ("a key id without its secret", dict(AWS_SECRET_ACCESS_KEY=None, AWS_SHARED_CREDENTIALS_FILE=str(missing)), missing),
    ]
    mark = fake.mark()
    for what, extra, path in cases:
        r = force_out(cli, proxy, **extra)
        assert r.code == 78, (what, r)
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            assert name in r.err, (what, r)
        assert str(path) in r.err, (what, r)
    assert fake.calls(mark) == [] and proxy.checked() == []


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
