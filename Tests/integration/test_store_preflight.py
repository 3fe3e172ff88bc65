"""A store that cannot keep what the service hands out is refused before anything is sent,
and one that fails only after the service answered leaves nothing usable behind at the service.

Real components: the built binary, the fake Cognito in front of moto (its request log is what
"nothing was sent" is read from), the age file store on a host with no Secret Service (`nobus`).
The late failure is made real, not simulated in authctl: the fake stalls ConfirmDevice (its
`stall` fault, which then forwards the request to moto as usual) while the test puts a file in
place of the store's directory, as another process or a full disk might break it.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pexpect
import pytest

from harness import Cli, authctl_bin

PASSPHRASE = "correct horse battery staple"


@pytest.fixture
def bare(pool, keyrings, fake) -> Cli:
    """authctl with its own HOME and no session bus."""
    return Cli(pool, keyrings("nobus", "bare"), fake.endpoint)


def state_dir(cli: Cli) -> Path:
    return Path(cli.keyring.env["HOME"]) / ".local" / "state" / "authctl"


def password(cli: Cli) -> str:
    return cli.pool.users["alice"] + "\n"


# Every way authctl signs in and keeps the answer. Each names the file store, gives it no passphrase
# (no variable, no file, no descriptor, no terminal), and must be refused with the store's exit 78
# before the first request. Flows that would need more than the fake (a browser, a security key)
# are pointed at things that do not exist: reaching them would fail differently.
FLOWS = {
    "srp": (["signin", "--username", "alice", "--password-stdin"], True),
    "password": (["signin", "--flow", "password", "--username", "alice", "--password-stdin"], True),
    "user-auth email-otp": (["signin", "--method", "email-otp", "--username", "alice"], False),
    "user-auth password": (["signin", "--method", "password", "--username", "alice", "--password-stdin"], True),
    "passkey": (["signin", "--method", "passkey", "--username", "alice", "--fido-device", "unix:/nonexistent/key"],
                False),
    "browser": (["signin", "--browser"], False),
    "token signing in": (["token", "--username", "alice", "--password-stdin"], True),
}


@pytest.mark.parametrize("name", list(FLOWS))
def test_unusable_file_store_is_refused_before_any_request(bare, fake, name):
    args, reads_password = FLOWS[name]
    mark = fake.mark()
    r = bare.run(*args, "--store", "file", input=password(bare) if reads_password else None,
                 AUTHCTL_DOMAIN="http://127.0.0.1:9", BROWSER="/bin/false")
    assert r.code == 78, r
    assert "passphrase" in r.err, r
    assert "eyJ" not in r.out + r.err
    assert fake.calls(mark) == [], fake.calls(mark)
    assert not any(state_dir(bare).glob("*.age")) if state_dir(bare).exists() else True


def test_kube_token_signing_in_on_the_terminal_is_refused_before_any_request(bare, fake):
    """kube-token signs in only when kubectl says a person is there (a terminal, through pexpect)."""
    directory = state_dir(bare)
    directory.mkdir(parents=True, mode=0o700)
    os.chmod(directory, 0o777)
    mark = fake.mark()
    info = '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":true}}'
    child = pexpect.spawn(str(authctl_bin()), ["kube-token", "--store", "file"], timeout=20,
                          env=bare.env(KUBERNETES_EXEC_INFO=info, AUTHCTL_STORE_PASSPHRASE=PASSPHRASE),
                          encoding="utf-8")
    # Refused before anything is asked: no username or password typed for nothing.
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 78, child.before
    assert "chmod 700" in child.before, child.before
    assert fake.calls(mark) == []


def test_unsafe_store_directory_is_refused_before_any_request(bare, fake):
    directory = state_dir(bare)
    directory.mkdir(parents=True, mode=0o700)
    os.chmod(directory, 0o777)
    mark = fake.mark()
    r = bare.run("signin", "--store", "file", "--username", "alice", "--password-stdin", input=password(bare),
                 AUTHCTL_STORE_PASSPHRASE=PASSPHRASE)
    assert r.code == 78, r
    assert "chmod 700" in r.err, r
    assert fake.calls(mark) == []


def test_existing_file_that_does_not_open_is_refused_before_any_request(bare, fake):
    """A file kept with another passphrase: the sign-in is not made (it could not be kept)."""
    assert bare.signin("alice", None, "--store", "file", AUTHCTL_STORE_PASSPHRASE=PASSPHRASE).code == 0
    mark = fake.mark()
    r = bare.run("signin", "--username", "alice", "--password-stdin", input=password(bare),
                 AUTHCTL_STORE_PASSPHRASE="not the passphrase")
    assert r.code == 77, r
    assert "does not open" in r.err, r
    assert fake.calls(mark) == []


def test_store_failing_after_the_answer_leaves_no_device_and_no_refresh_token(bare, fake, cognito):
    """The store answered the check, then failed while Cognito confirmed the device: the device is
    forgotten and the refresh token revoked at the service, and authctl says exactly that."""
    pool = bare.pool
    fake.set_config(deviceTracking={pool.pool_id: {"mode": "always"}})
    try:
        fake.add_fault(operation="ConfirmDevice", kind="stall", seconds=4)
        mark = fake.mark()
        env = bare.env(AUTHCTL_STORE_PASSPHRASE=PASSPHRASE)
        proc = subprocess.Popen([str(authctl_bin()), "signin", "--store", "file", "--username", "alice",
                                 "--password-stdin"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        proc.stdin.write(password(bare))
        proc.stdin.flush()
        # The tokens are out (RespondToAuthChallenge answered) and ConfirmDevice is stalled: damage
        # the profile's file now.
        deadline = time.monotonic() + 20
        while not any(c["operation"] == "RespondToAuthChallenge" and c.get("status") == 200
                      for c in fake.calls(mark)):
            assert time.monotonic() < deadline and proc.poll() is None, (proc.poll(), fake.calls(mark))
            time.sleep(0.05)
        # The store's directory is taken away (a file in its place): every write now fails.
        directory = state_dir(bare)
        directory.rename(directory.with_name("authctl.moved"))
        directory.write_bytes(b"not a directory\n")
        out, err = proc.communicate(timeout=30)
    finally:
        fake.set_config(deviceTracking={pool.pool_id: {"mode": "off"}})
    # The store's own exit code for an I/O failure (docs/cli.md: 1, "store error").
    assert proc.returncode == 1, (out, err)
    assert "Not a directory" in err, err
    assert out == ""
    assert "signed in at Cognito as alice" in err, err
    assert "nothing was kept" in err, err
    assert "refresh token was revoked" in err, err
    assert "forgotten at Cognito again" in err, err
    assert "could not be registered" not in err, err
    ops = [(c["operation"], c.get("status")) for c in fake.calls(mark)]
    assert ("ConfirmDevice", 200) in ops, ops
    assert ("ForgetDevice", 200) in ops, ops
    assert ("RevokeToken", 200) in ops, ops
    assert cognito.admin_list_devices(UserPoolId=pool.pool_id, Username="alice")["Devices"] == []
    # What stood in the store's place is left as it was.
    assert directory.read_bytes() == b"not a directory\n"
