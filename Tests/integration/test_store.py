"""Where tokens live: only in the Secret Service; nowhere when it is missing; `--no-store`."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
import os
import re
import subprocess
import time

import pytest

from harness import ALICE_PASSWORD, Cli, iso_utc, jwt_claims, token_values


def files_holding(keyring, needles: list[str]) -> list[str]:
    hits = []
    for path in keyring.files():
        data = path.read_bytes()
        for n in needles:
            if n.encode() in data:
                hits.append(f"{path} holds {n[:16]}...")
    return hits


def test_tokens_are_in_no_file_after_signin_and_refresh(any_cli):
    assert any_cli.signin().code == 0
    past = iso_utc(datetime.now(timezone.utc) - timedelta(hours=1))
    any_cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))
    assert any_cli.run("whoami").code == 0  # refreshes and stores again
    session = any_cli.keyring.session()
    secrets = token_values(session) + [ALICE_PASSWORD]
    if any_cli.secret_client:
        secrets.append(any_cli.pool.client_secret)
    assert files_holding(any_cli.keyring, secrets) == []
    assert files_holding(any_cli.keyring, ["eyJ"]) == []


@pytest.mark.parametrize("mode", ["nobus", "noprovider", "bare"])
def test_no_secret_service(pool, fake, keyrings, mode):
    """nobus: no DBUS_SESSION_BUS_ADDRESS and an empty XDG_RUNTIME_DIR; noprovider: a bus with no
    org.freedesktop.secrets; bare: gnome-keyring activated on demand with no unlocked collection
    and no prompter."""
    cli = Cli(pool, keyrings(mode), fake.endpoint)
    if mode == "nobus":
        assert "DBUS_SESSION_BUS_ADDRESS" not in cli.env()
    started = time.monotonic()
    r = cli.signin()
    assert r.code == 78, r
    assert "secret service" in r.err.lower(), r
    assert time.monotonic() - started < 25
    assert files_holding(cli.keyring, ["eyJ", ALICE_PASSWORD]) == [], "tokens must never fall back to a file"
    r = cli.run("whoami")
    if mode == "bare":  # nothing to read there; "not signed in" is as true as "no store"
        assert r.code in (77, 78), r
    else:
        assert r.code == 78, r
        assert "secret service" in r.err.lower(), r


def test_no_store_prints_tokens_and_keeps_nothing(any_cli):
    r = any_cli.signin("alice", None, "--no-store")
    assert r.code == 0, r
    tokens = r.json()
    assert {"accessToken", "idToken", "refreshToken", "expiresAt", "tokenType"} <= set(tokens), tokens
    assert tokens["tokenType"] == "Bearer"
    assert jwt_claims(tokens["accessToken"])["username"] == "alice"
    assert jwt_claims(tokens["accessToken"])["client_id"] == any_cli.client_id
    assert jwt_claims(tokens["idToken"])["token_use"] == "id"
    expires = datetime.fromisoformat(tokens["expiresAt"].replace("Z", "+00:00"))
    assert expires > datetime.now(timezone.utc) + timedelta(minutes=50)
    assert tokens["accessToken"] not in r.err
    assert any_cli.keyring.search(kind="session") == []
    assert files_holding(any_cli.keyring, token_values(tokens)) == []
    assert any_cli.run("whoami").code == 77


def test_no_store_works_without_a_secret_service(pool, fake, keyrings):
    cli = Cli(pool, keyrings("nobus"), fake.endpoint)
    r = cli.signin("alice", None, "--no-store")
    assert r.code == 0, r
    assert r.json()["accessToken"]
    assert files_holding(cli.keyring, ["eyJ"]) == []


def test_a_locked_keyring_is_left_to_libsecret(signed_in):
    """authctl reads items over its own bus connection only when they are unlocked: with the
    collection locked (the Secret Service's own Lock call, no prompt), the read goes through
    libsecret, which cannot unlock it without a prompter and says so (exit 78)."""
    cli = signed_in
    env = {"PATH": os.environ["PATH"], **cli.keyring.env}

    def call(method: str, *args: str) -> str:
        proc = subprocess.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.secrets",
                               "--object-path", "/org/freedesktop/secrets",
                               "--method", f"org.freedesktop.Secret.Service.{method}", *args],
                              env=env, capture_output=True, text=True, timeout=20)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    r = cli.run("--debug", "token")
    assert r.code == 0, r
    assert " secret-service-read via=direct" in r.err, r.err
    collection = re.search(r"objectpath '([^']+)'", call("ReadAlias", "default")).group(1)
    call("Lock", f"['{collection}']")
    r = cli.run("--debug", "token")
    assert r.code == 78, r
    assert "locked" in r.err, r
    assert " secret-service-read via=libsecret because=locked" in r.err, r.err
