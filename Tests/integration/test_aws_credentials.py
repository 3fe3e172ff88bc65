"""`authctl aws-credentials` and `authctl exec --aws`, with the real AWS CLI as the client.

The AWS CLI runs authctl as its `credential_process` (a temporary AWS_CONFIG_FILE), and its
`sts get-caller-identity` goes to moto's STS. authctl asks fake_identity.py, which stands in
front of moto's cognito-identity because moto's checks nothing: the fake checks the Logins key
names the identity pool's user pool, that the id token is one the Cognito emulator (moto) signed
and unexpired, and assumes the pool's authenticated role with moto's STS, so the caller identity
the AWS CLI prints is that role's. The fake counts GetCredentialsForIdentity calls.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

import boto3
import pytest

import harness
from harness import Cli, MotoServer, _kill_group, parse_instant

FAKE_IDENTITY = Path(__file__).resolve().parent / "fake_identity.py"
ROLE_NAME = "authctl-it-authenticated"
ROLE_ARN = f"arn:aws:iam::123456789012:role/{ROLE_NAME}"


class IdentityServer:
    """fake_identity.py on a free loopback port, in front of moto."""

    def __init__(self, upstream: str, workdir: Path):
        self.upstream, self.workdir = upstream, workdir
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> "IdentityServer":
        err = open(self.workdir / "fake-identity-stderr.log", "ab")
        self.proc = subprocess.Popen([sys.executable, str(FAKE_IDENTITY), "--upstream", self.upstream, "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                     start_new_session=True, text=True)
        err.close()
        m = re.match(r"PORT (\d+)", self.proc.stdout.readline() or "")
        if not m:
            _kill_group(self.proc)
            raise RuntimeError(f"fake_identity did not start; see {self.workdir}/fake-identity-stderr.log")
        self.url = f"http://127.0.0.1:{m.group(1)}"
        return self

    def stop(self) -> None:
        if self.proc:
            _kill_group(self.proc)

    def calls(self, since: float = 0.0, **match: Any) -> list[dict[str, Any]]:
        import urllib.request

        with urllib.request.urlopen(self.url + "/_fake/identity/calls", timeout=10) as r:
            rows = json.loads(r.read())["calls"]
        return [c for c in rows if c["ts"] >= since and all(c.get(k) == v for k, v in match.items())]

    def client(self, service: str):
        return boto3.client(service, endpoint_url=self.url, region_name=harness.REGION,
                            aws_access_key_id="testing", aws_secret_access_key="testing")


@pytest.fixture(scope="session")
def identity(moto: MotoServer, workdir: Path) -> Iterator[IdentityServer]:
    server = IdentityServer(moto.url, workdir).start()
    iam = server.client("iam")
    # Other modules import this fixture, and each import is a fixture of its own on the one moto.
    try:
        iam.create_role(RoleName=ROLE_NAME, AssumeRolePolicyDocument="{}")
    except iam.exceptions.EntityAlreadyExistsException:
        pass
    yield server
    server.stop()


def make_identity_pool(identity: IdentityServer, user_pool_id: str, client_id: str) -> str:
    ci = identity.client("cognito-identity")
    pool_id = ci.create_identity_pool(
        IdentityPoolName=f"authctl{time.time_ns()}", AllowUnauthenticatedIdentities=False,
        CognitoIdentityProviders=[{"ProviderName": f"cognito-idp.{harness.REGION}.amazonaws.com/{user_pool_id}",
                                   "ClientId": client_id}])["IdentityPoolId"]
    ci.set_identity_pool_roles(IdentityPoolId=pool_id, Roles={"authenticated": ROLE_ARN})
    return pool_id


@pytest.fixture
def aws_cli(signed_in: Cli, identity: IdentityServer) -> Cli:
    """alice signed in, and an identity pool trusting her user pool and app client
    (AUTHCTL_IDENTITY_POOL_ID and the fake's endpoint in every run's environment)."""
    pool_id = make_identity_pool(identity, signed_in.pool.pool_id, signed_in.client_id)
    signed_in.identity_pool_id = pool_id
    signed_in.env_extra = {"AUTHCTL_IDENTITY_POOL_ID": pool_id, "AWS_ENDPOINT_URL_COGNITO_IDENTITY": identity.url}
    return signed_in


def run(cli: Cli, *args: str, **extra: str | None) -> harness.Result:
    return cli.run(*args, **{**cli.env_extra, **extra})


def aws(cli: Cli, identity: IdentityServer, *args: str) -> subprocess.CompletedProcess:
    """The real AWS CLI with a profile whose credential_process is authctl, against moto."""
    home = cli.keyring.home
    config = home / "aws-config"
    config.write_text(f"[profile it]\ncredential_process = {harness.authctl_bin()} aws-credentials --profile default\n"
                      "region = us-east-1\n")
    env = cli.env(AWS_CONFIG_FILE=str(config), AWS_SHARED_CREDENTIALS_FILE=str(home / "no-credentials"),
                  AWS_ENDPOINT_URL=identity.url, AWS_ENDPOINT_URL_COGNITO_IDENTITY=identity.url,
                  AUTHCTL_IDENTITY_POOL_ID=cli.identity_pool_id)
    aws_bin = shutil.which("aws")
    assert aws_bin, "the AWS CLI is not installed (Tests/support/install-deps.sh installs awscli)"
    return subprocess.run([aws_bin, "--profile", "it", "--output", "json", *args], env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, start_new_session=True)


def test_aws_cli_uses_authctl_as_credential_process_and_its_cache(aws_cli, identity):
    mark = time.time()
    first = aws(aws_cli, identity, "sts", "get-caller-identity")
    assert first.returncode == 0, first.stderr
    caller = json.loads(first.stdout)
    # moto's STS knows the credentials as the identity pool's authenticated role, assumed for the web identity.
    assert caller["Arn"] == f"arn:aws:sts::123456789012:assumed-role/{ROLE_NAME}/CognitoIdentityCredentials", caller
    assert len(identity.calls(mark, op="GetId", status=200)) == 1
    assert len(identity.calls(mark, op="GetCredentialsForIdentity", status=200)) == 1

    second = aws(aws_cli, identity, "sts", "get-caller-identity")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["Arn"] == caller["Arn"]
    assert len(identity.calls(mark, op="GetCredentialsForIdentity")) == 1, "the second call must use the cache"
    assert len(identity.calls(mark, op="GetId")) == 1

    items = aws_cli.keyring.search(kind="aws-credentials", profile="default")
    assert len(items) == 1 and items[0]["attributes"]["client_id"] == aws_cli.identity_pool_id, items
    assert not any("SecretAccessKey" in p.read_text(errors="replace") for p in aws_cli.keyring.files()), \
        "credentials must not be written to a file"


def test_output_is_exactly_the_credential_process_json(aws_cli, identity):
    r = run(aws_cli, "aws-credentials")
    assert r.code == 0, r
    assert r.err == "", r
    assert r.out.endswith("\n") and r.out.count("\n") == 1, r
    document = json.loads(r.out, object_pairs_hook=list)
    assert [k for k, _ in document] == ["Version", "AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"]
    values = dict(document)
    assert values["Version"] == 1
    expires = parse_instant(values["Expiration"])
    assert timedelta(minutes=50) < expires - datetime.now(timezone.utc) <= timedelta(hours=1, minutes=1)
    # The identity id is kept beside the session: a new fetch asks GetCredentialsForIdentity only.
    cached = json.loads(aws_cli.keyring.lookup(kind="aws-credentials", profile="default"))
    assert cached["identityId"] and cached["sub"] == aws_cli.pool.subs["alice"]


def test_twenty_parallel_calls_fetch_once(aws_cli, identity):
    mark = time.time()
    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(lambda _: run(aws_cli, "aws-credentials", timeout=120), range(20)))
    assert all(r.code == 0 for r in results), [r for r in results if r.code != 0][:2]
    assert len({json.loads(r.out)["AccessKeyId"] for r in results}) == 1
    assert len(identity.calls(mark, op="GetCredentialsForIdentity")) == 1
    assert len(identity.calls(mark, op="GetId")) == 1


def test_twenty_parallel_aws_cli_calls_fetch_once(aws_cli, identity):
    mark = time.time()
    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(lambda _: aws(aws_cli, identity, "sts", "get-caller-identity"), range(20)))
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results if r.returncode != 0][:2]
    assert len({json.loads(r.stdout)["Arn"] for r in results}) == 1
    assert len(identity.calls(mark, op="GetCredentialsForIdentity")) == 1


def test_credentials_near_expiry_are_fetched_again(aws_cli, identity):
    assert run(aws_cli, "aws-credentials").code == 0
    item = aws_cli.keyring.search(kind="aws-credentials", profile="default")[0]
    entry = json.loads(item["secret"])
    soon = (datetime.now(timezone.utc) + timedelta(minutes=4)).strftime("%Y-%m-%dT%H:%M:%SZ")
    entry["credentials"]["expiration"] = soon
    attrs = dict(item["attributes"], **{"xdg:schema": item["schema"]})
    aws_cli.keyring.store(item["label"], attrs, json.dumps(entry))
    mark = time.time()
    r = run(aws_cli, "aws-credentials")
    assert r.code == 0, r
    assert parse_instant(r.json()["Expiration"]) > parse_instant(soon)
    assert len(identity.calls(mark, op="GetCredentialsForIdentity")) == 1
    assert identity.calls(mark, op="GetId") == [], "the kept identity id is reused"


def test_format_env_for_eval(aws_cli, identity):
    r = run(aws_cli, "aws-credentials", "--format", "env")
    assert r.code == 0, r
    shell = subprocess.run(["sh", "-c", r.out + '\nprintf "%s\\n" "$AWS_ACCESS_KEY_ID" "$AWS_SESSION_TOKEN"'],
                           capture_output=True, text=True)
    key_id, token = shell.stdout.splitlines()
    process = run(aws_cli, "aws-credentials").json()
    assert (key_id, token) == (process["AccessKeyId"], process["SessionToken"])
    assert set(re.findall(r"^export (\w+)=", r.out, re.M)) == {
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_CREDENTIAL_EXPIRATION"}


def test_exec_aws_puts_the_credentials_in_the_environment(aws_cli, identity):
    process = run(aws_cli, "aws-credentials").json()
    r = run(aws_cli, "exec", "--aws", "--", "sh", "-c",
            'printf "%s\\n" "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" "$AWS_SESSION_TOKEN" "${AUTHCTL_ACCESS_TOKEN:+yes}"')
    assert r.code == 0, r
    assert r.out.splitlines() == [process["AccessKeyId"], process["SecretAccessKey"], process["SessionToken"], "yes"]


def test_identity_pool_of_another_user_pool_refuses_the_login(signed_in, identity, cognito):
    other = harness.make_pool(cognito)
    pool_id = make_identity_pool(identity, other.pool_id, other.client_id)
    mark = time.time()
    r = signed_in.run("aws-credentials", "--identity-pool-id", pool_id, AWS_ENDPOINT_URL_COGNITO_IDENTITY=identity.url)
    assert r.code == 77, r
    assert r.out == "", r
    assert pool_id in r.err and "refused" in r.err, r
    assert identity.calls(mark, op="GetId", errorType="NotAuthorizedException"), "the fake must have refused the Logins key"
    assert signed_in.keyring.session() is not None, "a refusal by the identity pool does not end the session"


def test_not_signed_in_exits_77_and_the_aws_cli_shows_why(cli, identity):
    pool_id = make_identity_pool(identity, cli.pool.pool_id, cli.client_id)
    cli.identity_pool_id = pool_id
    r = cli.run("aws-credentials", "--identity-pool-id", pool_id, AWS_ENDPOINT_URL_COGNITO_IDENTITY=identity.url)
    assert (r.code, r.out) == (77, ""), r
    assert "Run: authctl signin" in r.err, r
    shown = aws(cli, identity, "sts", "get-caller-identity")
    assert shown.returncode != 0 and "Run: authctl signin" in shown.stderr, shown.stderr


def test_ended_session_exits_77_with_the_usual_message(aws_cli, identity, cognito):
    past = (datetime.now(timezone.utc) - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    aws_cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))
    cognito.admin_user_global_sign_out(UserPoolId=aws_cli.pool.pool_id, Username="alice")
    mark = time.time()
    r = run(aws_cli, "aws-credentials")
    assert (r.code, r.out) == (77, ""), r
    assert "has ended" in r.err and "Run: authctl signin" in r.err, r
    assert identity.calls(mark) == []
    assert aws_cli.keyring.session() is None


def test_signout_removes_the_cached_credentials(aws_cli, identity):
    assert run(aws_cli, "aws-credentials").code == 0
    assert aws_cli.keyring.search(kind="aws-credentials", profile="default") != []
    assert aws_cli.run("signout").code == 0
    # Removed by the sign-out itself, not left for the next aws-credentials call to find.
    assert aws_cli.keyring.search(kind="aws-credentials", profile="default") == [], "signout removes the cached credentials"
    r = run(aws_cli, "aws-credentials")
    assert (r.code, r.out) == (77, ""), r


def test_configuration_errors(cli, identity):
    r = cli.run("aws-credentials")
    assert r.code == 78 and "identity pool id" in r.err, r
    r = cli.run("aws-credentials", "--identity-pool-id", "eu-west-1_AbC123")
    assert r.code == 78 and "malformed" in r.err, r
    r = cli.run("aws-credentials", "--identity-pool-id", "eu-west-1:0000-1111",
                AWS_ENDPOINT_URL_COGNITO_IDENTITY="http://identity.example.com/")
    assert r.code == 78 and "http://" in r.err, r
    r = cli.run("exec", "--identity-pool-id", "eu-west-1:0000-1111", "--", "true")
    assert r.code == 64, r


def test_a_generic_endpoint_elsewhere_gets_no_id_token(aws_cli, identity):
    """AWS_ENDPOINT_URL set for other tools is not where the user pool is
    reached, so the session's id token is not sent there (it was before)."""
    mark = time.time()
    r = run(aws_cli, "aws-credentials", AWS_ENDPOINT_URL_COGNITO_IDENTITY=None, AWS_ENDPOINT_URL=identity.url)
    assert (r.code, r.out) == (78, ""), r
    assert "AWS_ENDPOINT_URL_COGNITO_IDENTITY" in r.err, r
    assert identity.calls(mark) == [], "no request, so no id token, reached the generic endpoint"


def test_cached_credentials_are_not_served_for_another_identity_endpoint(aws_cli, identity):
    """The cache is keyed by the identity endpoint that issued it."""
    first = run(aws_cli, "aws-credentials")
    assert first.code == 0, first
    other = identity.url.replace("127.0.0.1", "localhost")
    mark = time.time()
    r = run(aws_cli, "aws-credentials", AWS_ENDPOINT_URL_COGNITO_IDENTITY=other)
    assert r.code == 0, r
    assert identity.calls(mark), "credentials cached from another endpoint were not handed out: fetched anew"
    again = run(aws_cli, "aws-credentials", AWS_ENDPOINT_URL_COGNITO_IDENTITY=other)
    assert again.code == 0 and json.loads(again.out) == json.loads(r.out), "and then served from the cache"
