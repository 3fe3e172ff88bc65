"""`authctl exec --serve`: a container-credentials endpoint on 127.0.0.1 for the command's life.

The clients are the real ones: boto3 and the AWS CLI (botocore's container provider, which sends
the raw token in `Authorization` and refreshes 15 minutes before `Expiration`, so with the short
lifetimes here it asks the endpoint before every call). The identity pool is fake_identity.py
(see test_aws_credentials.py), told through its `/_fake/identity/config` to give credentials that
last LIFETIME seconds and, for the failure test, to refuse GetCredentialsForIdentity a while with
InternalErrorException, an error cognito-identity's model lists. Each command run under authctl
is a Python script that prints one JSON document of what it saw.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import urllib.request
from typing import Iterator

import pytest

import harness
from harness import Cli
from test_aws_credentials import IdentityServer, identity, make_identity_pool  # noqa: F401  (fixture)

LIFETIME = 3


def configure(identity: IdentityServer, **config: float) -> None:
    request = urllib.request.Request(identity.url + "/_fake/identity/config", data=json.dumps(config).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()


@pytest.fixture
def served(signed_in: Cli, identity: IdentityServer) -> Iterator[Cli]:
    """alice signed in, an identity pool trusting her pool, credentials that last LIFETIME seconds;
    the environment a command needs to reach moto's STS (and static keys and a profile that
    `--serve` must keep from it)."""
    pool_id = make_identity_pool(identity, signed_in.pool.pool_id, signed_in.client_id)
    home = signed_in.keyring.home
    signed_in.env_extra = {
        "AUTHCTL_IDENTITY_POOL_ID": pool_id, "AWS_ENDPOINT_URL_COGNITO_IDENTITY": identity.url,
        "AWS_ENDPOINT_URL": identity.url, "AWS_DEFAULT_REGION": harness.REGION,
        "AWS_CONFIG_FILE": str(home / "no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-credentials"),
        "AWS_ACCESS_KEY_ID": "AKIASTATICKEY", "AWS_SECRET_ACCESS_KEY": "static-secret", "AWS_PROFILE": "static",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/elsewhere", "FAKE_IDENTITY_URL": identity.url,
    }
    configure(identity, lifetime=LIFETIME)
    yield signed_in
    configure(identity)


def serve(cli: Cli, script: str, timeout: float = 60) -> harness.Result:
    return cli.run("exec", "--serve", "--", sys.executable, "-c", script, timeout=timeout, **cli.env_extra)


CLIENTS = r"""
import json, os, subprocess, sys, time
import boto3
session = boto3.Session()
credentials = session.get_credentials()
sts = session.client("sts")
seen = {"env": {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI")}, "boto3": [], "cli": []}
def aws_cli():
    r = subprocess.run([AWS, "--output", "json", "sts", "get-caller-identity"], capture_output=True, text=True)
    seen["cli"].append(json.loads(r.stdout)["Arn"] if r.returncode == 0 else r.stderr)
aws_cli()
start = time.time()
while time.time() - start < 2.4 * LIFETIME:
    key = credentials.get_frozen_credentials().access_key
    seen["boto3"].append([key, sts.get_caller_identity()["Arn"]])
    time.sleep(0.4)
aws_cli()
print(json.dumps(seen))
"""


def test_boto3_and_the_aws_cli_get_fresh_credentials_for_longer_than_two_lifetimes(served):
    aws = shutil.which("aws")
    assert aws, "the AWS CLI is not installed (Tests/support/install-deps.sh installs awscli)"
    r = serve(served, f"AWS = {aws!r}\nLIFETIME = {LIFETIME}\n" + CLIENTS)
    assert r.code == 0, r
    seen = json.loads(r.out)
    role = "assumed-role/authctl-it-authenticated/CognitoIdentityCredentials"
    assert all(arn.endswith(role) for arn in seen["cli"]) and len(seen["cli"]) == 2, seen["cli"]
    assert all(arn.endswith(role) for _, arn in seen["boto3"]), seen["boto3"]
    keys = [key for key, _ in seen["boto3"]]
    assert len(set(keys)) >= 3, f"fresh credentials in each lifetime: {keys}"
    env = seen["env"]
    assert env["AWS_CONTAINER_CREDENTIALS_FULL_URI"].startswith("http://127.0.0.1:"), env
    assert env["AWS_CONTAINER_CREDENTIALS_FULL_URI"].endswith("/credentials"), env
    assert {k: v for k, v in env.items() if k != "AWS_CONTAINER_CREDENTIALS_FULL_URI"} == dict.fromkeys(
        ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"]), env
    assert r.err == "", r.err


ASK = r"""
import json, os, socket
port = int(os.environ.get("PORT") or os.environ["AUTHCTL_SERVE_URL"].rsplit(":", 1)[1])
token = os.environ.get("TOKEN") or os.environ["AWS_CONTAINER_AUTHORIZATION_TOKEN"]
def ask(head):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(head.encode())
    answer = b""
    while chunk := s.recv(65536):
        answer += chunk
    s.close()
    status = int(answer.split(b" ", 2)[1])
    return [status, answer.split(b"\r\n\r\n", 1)[1].decode()]
def get(path, auth=token, host=f"127.0.0.1:{port}", method="GET", extra=""):
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n" + (f"Authorization: {auth}\r\n" if auth is not None else "")
    return ask(head + extra + "\r\n")
"""

REQUESTS = ASK + r"""
seen = {
    "ok": get("/credentials"), "none": get("/credentials", auth=None), "wrong": get("/credentials", auth="0" * 64),
    "bearer": get("/credentials", auth="Bearer " + token), "prefix": get("/credentials", auth=token[:-1]),
    "host": get("/credentials", host=f"attacker.example:{port}"), "post": get("/credentials", method="POST"),
    "path": get("/credentials/../etc"), "body": get("/credentials", extra="Content-Length: 5\r\n"),
    "huge": get("/credentials", extra="X-Pad: " + "a" * 9000 + "\r\n"),
    "access": get("/tokens/access"), "id": get("/tokens/id"), "id-no-token": get("/tokens/id", auth=None),
    "localhost": get("/credentials", host="localhost"),
}
# Another local user with the right token: refused before its request is read.
import subprocess, sys
other = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
                        os.environ["ASK"] + "print(json.dumps(get('/credentials')))"],
                       env={"PORT": str(port), "TOKEN": token}, capture_output=True, text=True, timeout=30, cwd="/")
seen["other-user"] = json.loads(other.stdout) if other.returncode == 0 else [0, other.stderr]
print(json.dumps(seen))
raise SystemExit(7)
"""


def test_only_a_request_with_the_token_is_answered_and_the_exit_status_is_passed_on(served):
    access = served.run("token").out.strip()
    id_token = served.run("token", "--type", "id").out.strip()
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is needed to run a second local user")
    r = served.run("exec", "--serve", "--debug", "--", sys.executable, "-c", REQUESTS, timeout=60,
                   **served.env_extra, ASK=ASK)
    assert r.code == 7, r
    seen = json.loads(r.out)
    assert seen["ok"][0] == 200 and set(json.loads(seen["ok"][1])) == {
        "AccessKeyId", "SecretAccessKey", "Token", "Expiration"}, seen["ok"]
    assert seen["localhost"][0] == 200
    statuses = {name: seen[name][0] for name in ("none", "wrong", "bearer", "prefix", "host", "post", "path", "body",
                                                  "huge", "id-no-token", "other-user")}
    assert statuses == {"none": 401, "wrong": 403, "bearer": 403, "prefix": 403, "host": 403, "post": 405,
                        "path": 404, "body": 400, "huge": 431, "id-no-token": 401, "other-user": 403}, statuses
    assert "another user" in seen["other-user"][1]
    secret = json.loads(seen["ok"][1])["SecretAccessKey"]
    for name in statuses:
        assert secret not in seen[name][1] and "message" in json.loads(seen[name][1]), seen[name]
    assert seen["access"] == [200, access] and seen["id"] == [200, id_token]
    # The trace names each answer by its route and status, and holds none of what was served.
    for line in ("served route=credentials status=200", "served route=refused status=401",
                 "served route=refused status=403", "served route=tokens/access status=200",
                 "served route=tokens/id status=200"):
        assert line in r.err, (line, r.err)
    session_token = json.loads(seen["ok"][1])["Token"]
    for value in (access, id_token, secret, session_token):
        assert value not in r.err


def test_a_signal_that_ends_the_command_ends_authctl_the_same_way(served):
    r = served.run("exec", "--serve", "--", "sh", "-c", 'kill -TERM $$', **served.env_extra)
    assert r.code == -signal.SIGTERM, r


def test_a_sigterm_sent_to_authctl_reaches_the_command(served):
    """A supervisor's SIGTERM goes to authctl, the command's parent: passed on, the command ends by it."""
    proc = subprocess.Popen([str(harness.authctl_bin()), "exec", "--serve", "--", "sh", "-c",
                             'trap "echo got-term; exit 9" TERM; echo ready; while :; do sleep 0.1; done'],
                            env=served.env(**served.env_extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            harness._kill_group(proc)
    assert (proc.returncode, out, err) == (9, "got-term\n", ""), (proc.returncode, out, err)


def test_a_missing_command_identity_pool_network_or_session_runs_nothing(served):
    r = served.run("exec", "--serve", "--", "no-such-command-here", **served.env_extra)
    assert r.code == 127 and "no-such-command-here" in r.err, r
    r = served.run("exec", "--serve", "--", "true", **{**served.env_extra, "AUTHCTL_IDENTITY_POOL_ID": None})
    assert r.code == 78, r
    r = served.run("exec", "--serve", "--aws", "--", "true", **served.env_extra)
    assert r.code == 64 and "--serve" in r.err, r
    r = served.run("exec", "--serve", "--min-valid", "600", "--", "sh", "-c", "echo ran", **served.env_extra)
    assert r.code == 64 and "--min-valid" in r.err and "ran" not in r.out, r
    r = served.run("exec", "--serve", "--", "sh", "-c", "echo ran",
                   **{**served.env_extra, "AWS_ENDPOINT_URL_COGNITO_IDENTITY": "http://127.0.0.1:9"})
    assert r.code == 69 and "ran" not in r.out and "127.0.0.1:9" in r.err, r
    assert served.run("signout").code == 0
    r = served.run("exec", "--serve", "--", "sh", "-c", "echo ran", **served.env_extra)
    assert r.code == 77 and "ran" not in r.out and "signin" in r.err, r


REFUSED = r"""
import json, os, time, urllib.request, urllib.error
def fetch():
    request = urllib.request.Request(os.environ["AWS_CONTAINER_CREDENTIALS_FULL_URI"],
                                     headers={"Authorization": os.environ["AWS_CONTAINER_AUTHORIZATION_TOKEN"]})
    try:
        with urllib.request.urlopen(request, timeout=2) as r:
            return [200, json.loads(r.read())["AccessKeyId"]]
    except urllib.error.HTTPError as e:
        return [e.code, json.loads(e.read())["message"]]
def configure(**config):
    urllib.request.urlopen(urllib.request.Request(os.environ["FAKE_IDENTITY_URL"] + "/_fake/identity/config",
                           data=json.dumps(config).encode(), method="POST"), timeout=5).read()
seen = [fetch()]
configure(lifetime=LIFETIME, refuseCredentialsFor=LIFETIME + 2)
start = time.time()
while time.time() - start < 15:
    seen.append(fetch())
    if seen[-1][0] == 200 and seen[-1][1] != seen[0][1]:
        break
    time.sleep(0.2)
print(json.dumps(seen))
"""


def test_a_refresh_failure_keeps_serving_the_valid_credentials_and_the_endpoint_recovers(served):
    r = serve(served, f"LIFETIME = {LIFETIME}\n" + REFUSED)
    assert r.code == 0, r
    seen = json.loads(r.out)
    statuses = [status for status, _ in seen]
    # The held ones while they last (a refresh may have come just before the refusal), then a
    # retryable error, then fresh ones once the pool answers again.
    assert statuses[1] == 200 and 503 in statuses, seen
    unavailable = statuses.index(503)
    assert all(status == 200 for status in statuses[:unavailable]), seen
    assert all(status == 503 for status in statuses[unavailable:-1]), seen
    assert seen[-1][0] == 200 and seen[-1][1] != seen[unavailable - 1][1], seen
    assert "could not be refreshed" in r.err and "refreshed again" in r.err, r.err
