"""Configuration as a user meets it: bad or missing settings, `configure`, profiles, precedence."""

from __future__ import annotations

import re

import pytest

from harness import ALICE_PASSWORD, base_env, run_authctl


def assert_names_setting(err: str, words: str, flag: str, env: str):
    assert re.search(words, err, re.I), err
    assert flag in err, f"{flag} missing from:\n{err}"
    assert env in err, f"{env} missing from:\n{err}"


SIGNIN = ["signin", "--username", "alice", "--password-stdin"]
BAD_POOL_IDS = ["not-a-pool-id", "us-east-1", "us-east-1_", "_abc", "us east 1_abc"]


@pytest.mark.parametrize("bad", BAD_POOL_IDS)
def test_malformed_pool_id(cli, fake, bad):
    mark = fake.mark()
    r = cli.run(*SIGNIN, input=ALICE_PASSWORD + "\n", AUTHCTL_USER_POOL_ID=bad)
    assert r.code == 78, r
    assert_names_setting(r.err, r"user[ _-]?pool[ _-]?id", "--user-pool-id", "AUTHCTL_USER_POOL_ID")
    assert fake.calls(mark) == [], "nothing may reach the service"


def test_missing_client_id(cli, fake):
    mark = fake.mark()
    r = cli.run(*SIGNIN, input=ALICE_PASSWORD + "\n", AUTHCTL_CLIENT_ID=None)
    assert r.code == 78, r
    assert_names_setting(r.err, r"client[ _-]?id", "--client-id", "AUTHCTL_CLIENT_ID")
    assert fake.calls(mark) == []


def test_whoami_with_bad_settings_and_no_session(cli, fake):
    """A malformed pool id is named (78) by every command, before the keyring is read; a missing
    client id with no session is "not signed in" (77). Nothing reaches the service."""
    mark = fake.mark()
    for command in (["whoami"], ["token"], ["status"], ["signout"]):
        r = cli.run(*command, AUTHCTL_USER_POOL_ID="not-a-pool-id")
        assert r.code == 78, (command, r)
        assert_names_setting(r.err, r"user[ _-]?pool[ _-]?id", "--user-pool-id", "AUTHCTL_USER_POOL_ID")
    r = cli.run("whoami", AUTHCTL_CLIENT_ID=None)
    assert r.code == 77, r
    assert fake.calls(mark) == []


def test_malformed_pool_id_by_flag(cli):
    r = cli.run(*SIGNIN, "--user-pool-id", "nonsense", input=ALICE_PASSWORD + "\n", AUTHCTL_USER_POOL_ID=None)
    assert r.code == 78, r
    assert "--user-pool-id" in r.err, r


def test_flags_beat_environment(cli):
    env = cli.env(AUTHCTL_CLIENT_ID="wrong-client", AUTHCTL_USER_POOL_ID="us-east-1_wrong")
    r = run_authctl(["signin", "--username", "alice", "--password-stdin",
                     "--user-pool-id", cli.pool.pool_id, "--client-id", cli.pool.client_id], env, input=ALICE_PASSWORD + "\n")
    assert r.code == 0, r


def write_config(cli, text: str):
    path = cli.keyring.home / ".config" / "authctl" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_profile_from_config_file(cli, fake):
    write_config(cli, f"""
[profiles.dev]
user_pool_id = "{cli.pool.pool_id}"
client_id = "{cli.pool.client_id}"
region = "us-east-1"
endpoint = "{fake.endpoint}"
username = "alice"
""")
    env = base_env(cli.keyring, AUTHCTL_PROFILE="dev")
    r = run_authctl(["signin", "--password-stdin"], env, input=ALICE_PASSWORD + "\n")
    assert r.code == 0, r
    assert "(profile dev)" in r.err
    assert cli.keyring.session("dev")["clientId"] == cli.pool.client_id
    r = run_authctl(["whoami", "--output", "json"], base_env(cli.keyring), timeout=30)
    assert r.code in (77, 78), r  # profile "default" is neither signed in nor configured
    r = run_authctl(["whoami", "--profile", "dev", "--output", "json"], base_env(cli.keyring))
    assert r.code == 0, r
    assert r.json()["profile"] == "dev"


def test_environment_beats_config_file(cli, fake):
    write_config(cli, f"""
[profiles.default]
user_pool_id = "us-east-1_doesnotexist"
client_id = "doesnotexist"
endpoint = "http://127.0.0.1:9/"
""")
    r = cli.signin()  # AUTHCTL_* from cli.env() point at the real pool and the fake
    assert r.code == 0, r


def test_configure_writes_profile_and_keeps_secret_out_of_the_file(cli, fake):
    env = base_env(cli.keyring)
    r = run_authctl(["configure", "--profile", "ops", "--user-pool-id", cli.pool.pool_id,
                     "--client-id", cli.pool.secret_client_id, "--endpoint", fake.endpoint,
                     "--region", "us-east-1", "--username", "alice", "--client-secret-stdin"],
                    env, input=cli.pool.client_secret + "\n")
    assert r.code == 0, r
    path = cli.keyring.home / ".config" / "authctl" / "config.toml"
    text = path.read_text()
    assert "[profiles.ops]" in text, text
    assert cli.pool.pool_id in text and cli.pool.secret_client_id in text
    assert cli.pool.client_secret not in text
    for f in cli.keyring.files():
        assert cli.pool.client_secret.encode() not in f.read_bytes(), f
    # Signing in needs the secret (SECRET_HASH); it comes from the Secret Service.
    r = run_authctl(["signin", "--profile", "ops", "--password-stdin"], env, input=ALICE_PASSWORD + "\n")
    assert r.code == 0, r
    r = run_authctl(["whoami", "--profile", "ops", "--output", "json"], env)
    assert r.code == 0, r
    assert r.json()["clientId"] == cli.pool.secret_client_id


@pytest.mark.parametrize("endpoint,why", [
    ("http://", "host"),
    ("http://[::1", "host"),
    ("ftp://example.com/", "https://"),
    ("http://cognito.example.com/", "unencrypted"),
    ("http://127.example.com/", "unencrypted"),
])
def test_bad_endpoint_is_a_configuration_error(cli, fake, endpoint, why):
    """A malformed endpoint, or plain http:// to another machine (tokens and, with --flow password,
    the password would cross the network in clear): 78, nothing sent."""
    mark = fake.mark()
    r = cli.run(*SIGNIN, input=ALICE_PASSWORD + "\n", AUTHCTL_ENDPOINT=endpoint)
    assert r.code == 78, r
    assert why in r.err and "AUTHCTL_ENDPOINT" in r.err, r
    assert fake.calls(mark) == []


def test_plain_http_to_this_machine_is_allowed(cli):
    """The emulator in these tests is on 127.0.0.1 over http://; localhost is accepted too."""
    assert cli.endpoint.startswith("http://127.0.0.1:")
    assert cli.signin().code == 0
    port = cli.endpoint.rsplit(":", 1)[1]
    localhost = f"http://localhost:{port}"
    assert cli.signin(AUTHCTL_ENDPOINT=localhost).code == 0
    assert cli.run("whoami", AUTHCTL_ENDPOINT=localhost).code == 0


def test_configure_refuses_what_commands_would_refuse(cli):
    env = base_env(cli.keyring)
    path = cli.keyring.home / ".config" / "authctl" / "config.toml"
    for bad in (["--client-id", "has space!"], ["--endpoint", "garbage"], ["--region", "eu west"],
                ["--endpoint", "http://cognito.example.com/"]):
        args = ["configure", "--user-pool-id", cli.pool.pool_id, "--client-id", cli.pool.client_id, *bad]
        r = run_authctl(args, env)
        assert r.code == 78, (bad, r)
        assert not path.exists(), f"nothing may be written for {bad}"


def test_secret_of_another_client_is_never_sent(cli, fake):
    """configure kept a secret for the confidential client; the profile then moves to the public
    client. The old secret is removed, and is never used as a SECRET_HASH for another client."""
    env = base_env(cli.keyring)
    r = run_authctl(["configure", "--profile", "ops", "--user-pool-id", cli.pool.pool_id,
                     "--client-id", cli.pool.secret_client_id, "--endpoint", fake.endpoint, "--client-secret-stdin"],
                    env, input=cli.pool.client_secret + "\n")
    assert r.code == 0, r
    # A flag naming the public client: the kept secret belongs to the other one and is not used.
    mark = fake.mark()
    r = run_authctl(["signin", "--profile", "ops", "--client-id", cli.pool.client_id, "--username", "alice",
                     "--password-stdin"], env, input=ALICE_PASSWORD + "\n")
    assert r.code == 0, r
    calls = fake.calls(mark, client_ids=[cli.pool.client_id])
    assert calls and not any(c.get("secretHash") or c.get("clientSecret") for c in calls), calls
    # The confidential client still gets its secret.
    mark = fake.mark()
    r = run_authctl(["signin", "--profile", "ops", "--username", "alice", "--password-stdin"], env, input=ALICE_PASSWORD + "\n")
    assert r.code == 0, r
    assert all(c.get("secretHash") for c in fake.calls(mark, client_ids=[cli.pool.secret_client_id], operation="InitiateAuth"))
    # Reconfigured to the public client: the secret item is gone.
    r = run_authctl(["configure", "--profile", "ops", "--client-id", cli.pool.client_id], env)
    assert r.code == 0, r
    assert cli.keyring.search(kind="client-secret", profile="ops") == []


def test_mistyped_profile_is_named(cli):
    env = base_env(cli.keyring)
    r = run_authctl(["configure", "--profile", "work", "--user-pool-id", cli.pool.pool_id, "--client-id", cli.pool.client_id], env)
    assert r.code == 0, r
    r = run_authctl(["signin", "--profile", "wrok", "--username", "alice", "--password-stdin"], env, input=ALICE_PASSWORD + "\n")
    assert r.code == 78, r
    assert "profile wrok is not in" in r.err and "work" in r.err, r


def test_generic_plain_http_endpoint_does_not_stop_offline_commands(cli):
    """AWS_ENDPOINT_URL=http://localstack:4566 set for other tools: `status` (no request) still
    answers; a command that would send the tokens there refuses (78)."""
    env = {"AUTHCTL_ENDPOINT": None, "AWS_ENDPOINT_URL": "http://localstack:4566"}
    r = cli.run("status", **env)
    assert r.code == 77 and "not signed in" in r.out, r
    r = cli.run(*SIGNIN, input=ALICE_PASSWORD + "\n", **env)
    assert r.code == 78 and "AWS_ENDPOINT_URL" in r.err, r


def test_configures_at_once_each_keep_their_profile(cli):
    """Twelve `configure`s of twelve profiles at once (a provisioning script, CI jobs sharing a
    HOME): each is a read-modify-write of config.toml, made under the config lock, so none loses
    another's profile (without the lock the last rename won and profiles went missing)."""
    import tomllib
    from concurrent.futures import ThreadPoolExecutor

    env = base_env(cli.keyring)
    names = [f"p{i}" for i in range(12)]

    def configure(name: str):
        return run_authctl(["configure", "--profile", name, "--user-pool-id", cli.pool.pool_id,
                            "--client-id", cli.pool.client_id, "--region", "us-east-1",
                            "--username", name], env, timeout=60)

    for _ in range(3):  # three rounds: one race in a round is enough to lose a profile
        with ThreadPoolExecutor(len(names)) as pool:
            results = list(pool.map(configure, names))
        assert all(r.code == 0 for r in results), [r for r in results if r.code != 0]
        path = cli.keyring.home / ".config" / "authctl" / "config.toml"
        profiles = tomllib.loads(path.read_text())["profiles"]
        assert sorted(profiles) == sorted(names), sorted(profiles)
        assert all(profiles[n]["username"] == n for n in names)
        path.unlink()


@pytest.mark.parametrize("args,stdin,written", [
    # README's identity pool, browser sign-in and machine token set-ups, and the advice authctl
    # prints where no Secret Service answers: none of them names a user pool.
    (["--profile", "aws", "--identity-pool-id", "eu-west-1:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"], None,
     ['identity_pool_id = "eu-west-1:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"']),
    (["--domain", "https://example.auth.eu-west-1.amazoncognito.com"], None,
     ['domain = "https://example.auth.eu-west-1.amazoncognito.com"']),
    (["--client-id", "4abcdefgh", "--client-secret-stdin", "--domain", "https://example.auth.eu-west-1.amazoncognito.com"],
     "s3cr3t-of-the-machine-client\n", ['client_id = "4abcdefgh"']),
    (["--store", "kernel-keyring"], None, ['store = "kernel-keyring"']),
])
def test_configure_writes_a_setting_without_a_user_pool(cli, args, stdin, written):
    """A fresh set-up with no terminal, AUTHCTL_USER_POOL_ID exported or not: each writes what it
    names (exit 0); the pool id is needed by the commands that call the user pool, not here."""
    path = cli.keyring.home / ".config" / "authctl" / "config.toml"
    for extra in ({}, {"AUTHCTL_USER_POOL_ID": cli.pool.pool_id}):
        if path.exists():
            path.unlink()
        r = run_authctl(["configure", *args], base_env(cli.keyring, **extra), input=stdin)
        assert r.code == 0, (args, r)
        text = path.read_text()
        assert all(line in text for line in written), text
        assert "user_pool_id" not in text, text
        if stdin:
            assert stdin.strip() not in text
            assert len(cli.keyring.search(kind="client-secret")) == 1


def test_configure_with_nothing_to_write_and_no_terminal(cli):
    r = run_authctl(["configure"], base_env(cli.keyring))
    assert r.code == 64, r
    assert "--user-pool-id" in r.err and "terminal" in r.err, r
    r = run_authctl(["configure", "--client-secret-stdin"], base_env(cli.keyring), input="x\n")
    assert r.code == 64 and "--client-id" in r.err, r
