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
