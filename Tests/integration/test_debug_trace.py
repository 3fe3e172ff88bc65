"""`--debug` / AUTHCTL_DEBUG: a trace on stderr that is safe to paste into a bug report.

Each run below is traced, and the trace checked against every secret of the exchange: the fake
logs the request and answer bodies while `logBodies` is on, and every value under a secret's key
(tokens, passwords, SRP values, sessions, codes, secret hashes, client secrets) is collected,
with what the test typed and what authctl printed on stdout (a token, AWS credentials). None may
appear in the trace, nor any 12-character piece of one; a short one (a six-digit code) not as a
word. `--debug=json` is parsed line by line: each one object with `t`, `event` and `fields`.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from typing import Any

import pytest

from harness import ALICE_PASSWORD, Cli, token_values
from managed_login import managed_login, oauth_env, oauth_pool  # noqa: F401  (fixtures)
from test_aws_credentials import aws_cli, identity  # noqa: F401  (fixtures)
from test_browser_signin import browser_result, signin as browser_signin
from test_stores import PASSPHRASE, passphrase_file
from test_failover import REPLICA_REGION, primary_down
from test_mfa import _mfa_defaults, set_mfa  # noqa: F401  (fixture)
from test_passwordless import allow_first_factors
from totp import fresh_totp

SECRET_KEY = re.compile(r"token|password|session|secret|srp_|salt|claim|signature|code|answer|credential|key|hash",
                        re.I)
# Keys of the secret words that name no secret.
NOT_SECRET = {"TokenType", "CodeDeliveryDetails", "CODE_DELIVERY_DESTINATION", "CODE_DELIVERY_DELIVERY_MEDIUM",
              "ExpiresIn", "Expiration"}
TEXT_LINE = re.compile(r"^authctl: debug \+\d+\.\d{3}s [a-z-]+( [a-z_]+=(\"[^\"]*\"|\S+))*$")
PIECE = 12


@pytest.fixture
def logged(fake):
    fake.set_config(logBodies=True)
    return fake


def secrets_in(value: Any, secret: bool = False) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() if k not in NOT_SECRET for s in secrets_in(v, secret or bool(SECRET_KEY.search(k)))]
    if isinstance(value, list):
        return [s for v in value for s in secrets_in(v, secret)]
    return [value] if secret and isinstance(value, str) and len(value) >= 4 else []


def exchanged_secrets(fake, mark) -> list[str]:
    found = []
    for entry in fake.entries(mark):
        found += secrets_in(entry.get("requestBody")) + secrets_in(entry.get("responseBody"))
    return found


def trace_lines(err: str) -> list[str]:
    return [l for l in err.splitlines() if l.startswith("authctl: debug ") or l.startswith('{"t":')]


def assert_no_secret(trace: str, secrets: list[str]) -> None:
    assert secrets, "the run exchanged no secret: the check would prove nothing"
    for secret in set(secrets):
        if len(secret) >= PIECE:
            pieces = {secret[i:i + PIECE] for i in range(len(secret) - PIECE + 1)}
            leaked = [p for p in pieces if p in trace]
            assert not leaked, f"a piece of a secret is in the trace: {leaked[0]!r}\n{trace}"
        else:
            assert not re.search(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", trace), \
                f"a secret is in the trace: {secret!r}\n{trace}"


def check_trace(r, fake, mark, typed: list[str], json_lines: bool = False) -> list[dict[str, Any]] | list[str]:
    """The trace of `r`: well formed, holding none of the secrets exchanged since `mark` nor
    `typed` (what the test gave authctl or authctl printed); its events (JSON) or lines (text)."""
    lines = trace_lines(r.err)
    assert lines, r
    trace = "\n".join(lines)
    assert_no_secret(trace, exchanged_secrets(fake, mark) + typed)
    if not json_lines:
        for line in lines:
            assert TEXT_LINE.match(line), line
        return lines
    events = [json.loads(l) for l in lines]
    for event in events:
        assert set(event) == {"t", "event", "fields"} and isinstance(event["t"], (int, float)), event
        assert isinstance(event["fields"], dict)
    assert [e["t"] for e in events] == sorted(e["t"] for e in events)
    return events


def events(lines, event: str, **fields: Any) -> list[dict[str, Any]]:
    return [e for e in lines if e["event"] == event and all(e["fields"].get(k) == v for k, v in fields.items())]


# -- sign-in flows, a failed one, refresh --------------------------------------------------------

def _srp(cli, fake, cognito):
    return cli.signin("alice", None, "--debug=json"), [ALICE_PASSWORD]


def _password_flow_with_totp(cli, fake, cognito):
    state = set_mfa(fake, cli.pool, "totp")
    code = fresh_totp(state["secret"])
    return cli.signin("alice", None, "--flow", "password", "--mfa-code", code, "--debug=json"), \
        [ALICE_PASSWORD, code, state["secret"]]


def _user_auth(cli, fake, cognito):
    allow_first_factors(cognito, cli.pool, ["PASSWORD", "EMAIL_OTP"])
    return cli.signin("alice", None, "--method", "password", "--debug=json"), [ALICE_PASSWORD]


def _wrong_password(cli, fake, cognito):
    return cli.signin("alice", "Wrong-Passw0rd!", "--debug=json"), ["Wrong-Passw0rd!", ALICE_PASSWORD]


@pytest.mark.parametrize("run, code, expect", [
    (_srp, 0, [("request", {"operation": "InitiateAuth", "status": 200}),
               ("request", {"operation": "RespondToAuthChallenge", "status": 200}),
               ("signin", {"flow": "PasswordSignInFlow", "at": "primary"}),
               ("store", {"store": "secret-service", "because": "default"}),
               ("lock-taken", {"lock": "session"})]),
    (_password_flow_with_totp, 0, [("challenge", {"challenge": "SOFTWARE_TOKEN_MFA"}),
                                   ("request", {"operation": "RespondToAuthChallenge", "status": 200})]),
    (_user_auth, 0, [("request", {"operation": "InitiateAuth", "status": 200}),
                     ("signin", {"flow": "UserAuthSignInFlow"})]),
    (_wrong_password, 77, [("request", {"operation": "RespondToAuthChallenge", "status": 400,
                                        "error": "NotAuthorizedException"}),
                           ("retry", {"operation": "RespondToAuthChallenge", "decision": "not-retryable",
                                      "cause": "refused"})]),
], ids=["srp", "password-totp", "user-auth", "wrong-password"])
def test_sign_in_traces_hold_no_secret(cli, logged, cognito, run, code, expect):
    mark = logged.mark()
    r, typed = run(cli, logged, cognito)
    assert r.code == code, r
    traced = check_trace(r, logged, mark, typed, json_lines=True)
    for name, fields in expect:
        assert events(traced, name, **fields), (name, fields, traced)
    assert events(traced, "setting", name="user_pool_id", source="environment", value=cli.pool.pool_id)
    assert events(traced, "setting", name="client_id", source="environment")


def test_refresh_and_token_trace_in_text(signed_in, logged):
    cli = signed_in
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt="2001-01-01T00:00:00Z"))
    mark = logged.mark()
    r = cli.run("--debug", "token")
    assert r.code == 0, r
    lines = check_trace(r, logged, mark, [ALICE_PASSWORD, r.out.strip()])
    assert any(" request operation=InitiateAuth host=127.0.0.1 status=200 " in l for l in lines), lines
    assert any(l.endswith(" lock-taken lock=session waited=0.000s") or " lock-taken lock=session " in l
               for l in lines), lines
    # The environment's switch works on the same path, and a fresh token makes no request.
    r = cli.run("token", AUTHCTL_DEBUG="1")
    assert r.code == 0, r
    lines = check_trace(r, logged, mark, [ALICE_PASSWORD, r.out.strip()])
    assert not any(" request " in l for l in lines), lines
    # Read over authctl's own connection to the bus, not through libsecret.
    assert any(l.endswith(" secret-service-read via=direct") for l in lines), lines
    # kubectl's credential plugin, whose command line is kubectl's: the environment turns it on.
    r = cli.run("kube-token", AUTHCTL_DEBUG="json")
    assert r.code == 0, r
    check_trace(r, logged, mark, [ALICE_PASSWORD, json.loads(r.out)["status"]["token"]], json_lines=True)


def test_browser_sign_in_and_its_refresh_are_traced(cli, logged, oauth_pool, managed_login, tmp_path):
    """The managed login (fake_managed_login.py): the code exchange and the refresh at the token
    endpoint, with a confidential client (HTTP Basic); its code, secret and tokens nowhere."""
    mark = logged.mark()
    r = browser_signin(cli, oauth_pool, managed_login, tmp_path, "--debug=json", client="confidential")
    assert r.code == 0, r
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(browser_result(tmp_path)["final_url"]).query))["code"]
    session = cli.keyring.session()
    typed = [ALICE_PASSWORD, code, oauth_pool.confidential_secret, *token_values(session)]
    traced = check_trace(r, logged, mark, typed, json_lines=True)
    assert events(traced, "request", operation="/oauth2/token", status=200)
    assert events(traced, "signin", flow="BrowserSignIn")
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt="2020-01-01T00:00:00Z"))
    r = cli.run("token", "--debug=json", env=oauth_env(cli, oauth_pool, managed_login, "confidential"))
    assert r.code == 0, r
    traced = check_trace(r, logged, mark, typed + [r.out.strip()], json_lines=True)
    assert events(traced, "request", operation="/oauth2/token", status=200)


def test_failover_and_retries_are_traced(cli, logged):
    primary_down(logged)
    replica = {"AUTHCTL_FAILOVER_REGION": REPLICA_REGION, "AUTHCTL_FAILOVER_ENDPOINT": logged.replica_endpoint}
    mark = logged.mark()
    r = cli.signin("alice", None, "--debug=json", "--timeout", "6", **replica)
    assert r.code == 0, r
    traced = check_trace(r, logged, mark, [ALICE_PASSWORD], json_lines=True)
    assert events(traced, "request", operation="InitiateAuth", status=503)
    # With a replica, the primary has one attempt: straight to the replica.
    assert events(traced, "retry", operation="InitiateAuth", cause="server-error", decision="attempts-used")
    assert events(traced, "failover", what="signing in", replica_region=REPLICA_REGION)
    assert events(traced, "signin", at="replica")


def test_throttling_is_traced(cli, logged):
    logged.add_fault(operation="InitiateAuth", kind="error", status=400, errorType="TooManyRequestsException",
                     message="Rate exceeded", count=1)
    mark = logged.mark()
    r = cli.signin("alice", None, "--debug=json")
    assert r.code == 0, r
    traced = check_trace(r, logged, mark, [ALICE_PASSWORD], json_lines=True)
    assert events(traced, "request", operation="InitiateAuth", error="TooManyRequestsException")
    assert events(traced, "retry", operation="InitiateAuth", cause="throttled", decision="retrying")


# -- caches, an ops command, the store commands --------------------------------------------------

def test_aws_credentials_cache_is_traced(aws_cli, logged):
    cli = aws_cli
    mark = logged.mark()
    first = cli.run("aws-credentials", "--debug=json", **cli.env_extra)
    assert first.code == 0, first
    issued = secrets_in(json.loads(first.out), secret=True)
    assert len(issued) >= 3, first.out
    traced = check_trace(first, logged, mark, [ALICE_PASSWORD] + issued, json_lines=True)
    assert events(traced, "cache-miss", cache="aws-credentials")
    assert events(traced, "request", operation="GetCredentialsForIdentity", status=200)
    second = cli.run("aws-credentials", **{**cli.env_extra, "AUTHCTL_DEBUG": "json"})
    traced = check_trace(second, logged, mark, [ALICE_PASSWORD] + issued, json_lines=True)
    assert events(traced, "cache-hit", cache="aws-credentials")
    assert not events(traced, "request")


def test_ops_command_is_traced(cli, logged, tmp_path):
    """`ops investigate`: the admin calls (SigV4-signed) traced, the AWS secret key nowhere."""
    secret_key = "ops/Secret+Key/0123456789abcdefghijk"
    mark = logged.mark()
    r = cli.run("ops", "investigate", "--user", "alice", "--debug=json", AUTHCTL_CLIENT_ID=None,
                AWS_ACCESS_KEY_ID="AKIAOPSTEST000000001", AWS_SECRET_ACCESS_KEY=secret_key,
                XDG_STATE_HOME=str(tmp_path))
    assert r.code == 0, r
    traced = check_trace(r, logged, mark, [secret_key], json_lines=True)
    assert events(traced, "request", operation="AdminGetUser", status=200)
    assert events(traced, "setting", name="user_pool_id", source="environment")


@pytest.mark.parametrize("args", [["status"], ["store", "doctor"]], ids=["status", "store-doctor"])
def test_store_commands_are_traced(signed_in, logged, args):
    mark = logged.mark()
    r = signed_in.run(*args, "--debug")
    lines = check_trace(r, logged, mark, [ALICE_PASSWORD] + token_values(signed_in.keyring.session()))
    assert any(" store store=secret-service because=profile" in l for l in lines), lines
    if args == ["store", "doctor"]:
        assert any(" store-check store=secret-service usable=yes" in l for l in lines), lines


@pytest.mark.parametrize("store", ["kernel-keyring", "file"])
def test_other_stores_are_traced(pool, keyrings, logged, store):
    """On a host without a Secret Service: the store asked for, then the one recorded; for the
    file store where its passphrase came from, never the passphrase. (The file store's sign-in
    costs one scrypt at age's work factor, 5 to 10 s here: its second command is left out.)"""
    cli = Cli(pool, keyrings("nobus", "bare"), logged.endpoint)
    extra = {"AUTHCTL_STORE_PASSPHRASE_FILE": passphrase_file(cli)} if store == "file" else {}
    mark = logged.mark()
    # The scrypt of a debug build on a machine running three workers took over 30 s.
    r = cli.signin("alice", None, "--store", store, "--debug", timeout=120, **extra)
    assert r.code == 0, r
    lines = check_trace(r, logged, mark, [ALICE_PASSWORD, PASSPHRASE])
    assert any(f" store store={store} because=flag" in l for l in lines), lines
    if store == "file":
        assert any(" passphrase from=AUTHCTL_STORE_PASSPHRASE_FILE" in l for l in lines), lines
        return
    r = cli.run("token", "--debug", **extra)
    assert r.code == 0, r
    lines = check_trace(r, logged, mark, [ALICE_PASSWORD, r.out.strip()])
    assert any(f" store store={store} because=profile" in l for l in lines), lines


def test_debug_is_refused_with_another_format_and_the_environment_is_checked(cli):
    r = cli.run("status", "--debug=xml")
    assert r.code == 64 and "--debug" in r.err, r
    r = cli.run("status", AUTHCTL_DEBUG="verbose")
    assert "AUTHCTL_DEBUG" in r.err and not trace_lines(r.err), r
    r = cli.run("status", AUTHCTL_DEBUG="0")
    assert not trace_lines(r.err), r
