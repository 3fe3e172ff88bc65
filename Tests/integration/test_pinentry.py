"""Prompts through pinentry: authctl with no terminal at all (stdin /dev/null, a new session, so
/dev/tty cannot be opened) asks through Debian's real pinentry-tty. pinentry-tty needs a terminal
of its own: the test opens a pty and names a wrapper script as the pinentry program that runs
`pinentry-tty --ttyname PTY`; the test reads the prompt from the pty's master and types there,
as a person at that terminal would. Ctrl-D in pinentry-tty is `ERR 83886179` (the pinentry stays
open), Ctrl-C `ERR 83886278` (it closes).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import termios
import time
from pathlib import Path

import pytest

import harness
from harness import Result, authctl_bin
from test_agent import PASSPHRASE, agent_pid, bare, with_passphrase  # noqa: F401  (bare is a fixture)
from test_mfa import _mfa_defaults, set_mfa  # noqa: F401  (_mfa_defaults is an autouse fixture)
from totp import fresh_totp

PINENTRY_TTY = "/usr/bin/pinentry-tty"
V1 = "client.authentication.k8s.io/v1"

pytestmark = pytest.mark.skipif(not Path(PINENTRY_TTY).exists(), reason="pinentry-tty is not installed")


class PinentryTerminal:
    """A pty for pinentry-tty, and the wrapper script that runs it there (`program`)."""

    def __init__(self, directory: Path):
        self.master, self.slave = os.openpty()
        self.program = directory / "pinentry-on-pty"
        # setsid: pinentry-tty leads a session of its own and the pty becomes its controlling
        # terminal, as a person's terminal is, so Ctrl-C there is its SIGINT.
        self.program.write_text(f"#!/bin/sh\nexec setsid {PINENTRY_TTY} --ttyname {os.ttyname(self.slave)}\n")
        self.program.chmod(0o755)
        self.shown = b""

    def expect(self, text: str, timeout: float = 15) -> None:
        """Waits until pinentry showed `text`; what came before it is consumed."""
        deadline = time.monotonic() + timeout
        while text.encode() not in self.shown:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.master], [], [], max(0, left))
            if not ready:
                raise AssertionError(f"pinentry never showed {text!r}; it showed {self.shown!r}")
            self.shown += os.read(self.master, 4096)
        self.shown = self.shown.split(text.encode(), 1)[1]

    def wait_until_reading(self) -> None:
        # pinentry-tty writes its prompt before it turns echo off, flushing what was typed (as
        # TCSAFLUSH does): wait, as a person's eyes would, until the terminal no longer echoes.
        deadline = time.monotonic() + 10
        while termios.tcgetattr(self.slave)[3] & termios.ECHO:
            assert time.monotonic() < deadline, "pinentry never turned echo off"
            time.sleep(0.02)

    def type(self, text: str) -> None:
        self.wait_until_reading()
        os.write(self.master, text.encode() + b"\r")

    def press(self, key: bytes) -> None:
        # A key pressed before that is flushed too: on a loaded machine Ctrl-C was lost so.
        self.wait_until_reading()
        os.write(self.master, key)

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)


@pytest.fixture
def pty(tmp_path):
    terminal = PinentryTerminal(tmp_path)
    yield terminal
    terminal.close()


def start(cli, *args: str, **extra: str | None) -> subprocess.Popen:
    """authctl in the background with no terminal (as harness.run_authctl runs it)."""
    env = cli.env(**{"AUTHCTL_PINENTRY_TIMEOUT": "30", **extra})
    return subprocess.Popen(
        [str(authctl_bin()), *args], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True, cwd=env.get("HOME"))


def finish(proc: subprocess.Popen, timeout: float = 30) -> Result:
    out, err = proc.communicate(timeout=timeout)
    return Result(proc.returncode, out, err, proc.args[1:])


def profile_setting(cli, line: str) -> None:
    env = cli.env()
    config = Path(env.get("XDG_CONFIG_HOME") or Path(env["HOME"]) / ".config") / "authctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"[profiles.default]\n{line}\n")


def test_password_of_a_sign_in(cli, pty):
    proc = start(cli, "signin", "--username", "alice", AUTHCTL_PINENTRY=str(pty.program))
    pty.expect("Password for alice:")
    pty.type(cli.pool.users["alice"])
    r = finish(proc)
    assert r.code == 0, r
    assert cli.keyring.session()["username"] == "alice"
    assert cli.pool.users["alice"] not in r.out + r.err


def test_authenticator_code(cli, fake, pty):
    state = set_mfa(fake, cli.pool, "totp")
    proc = start(cli, "signin", "--username", "alice", AUTHCTL_PINENTRY=str(pty.program))
    pty.expect("Password for alice:")
    pty.type(cli.pool.users["alice"])
    pty.expect("Authenticator code:")
    pty.type("12345")  # a typo: asked again, with pinentry's error line, nothing sent
    pty.expect("That is not a code")
    pty.expect("Authenticator code:")
    pty.type(fresh_totp(state["secret"]))
    r = finish(proc)
    assert r.code == 0, r
    assert cli.keyring.session()["username"] == "alice"


def test_file_store_passphrase_then_the_agent_holds_the_key(bare, pty):  # noqa: F811
    assert bare.signin("alice", None, "--store", "file", env=with_passphrase(bare), timeout=180).code == 0
    cancelled = start(bare, "token", AUTHCTL_PINENTRY=str(pty.program))
    pty.expect("Passphrase of authctl's file store")
    pty.press(b"\x04")
    r = finish(cancelled)
    assert r.code == 64 and "pinentry prompt was cancelled" in r.err, r
    proc = start(bare, "token", AUTHCTL_PINENTRY=str(pty.program))
    pty.expect("Passphrase of authctl's file store")
    pty.type(PASSPHRASE)
    r = finish(proc, timeout=180)
    assert r.code == 0 and r.out.startswith("eyJ"), r
    assert PASSPHRASE not in r.out + r.err
    assert agent_pid(bare) is not None, "the passphrase typed in pinentry unlocks the agent"
    # No pinentry, no terminal, no passphrase source: only the agent can open the store.
    r = bare.run("token", AUTHCTL_PINENTRY="none")
    assert r.code == 0 and r.out.startswith("eyJ"), r


@pytest.mark.parametrize("key", [b"\x04", b"\x03"], ids=["ctrl-d", "ctrl-c"])
def test_a_cancel_is_exit_64(cli, fake, pty, key):
    mark = fake.mark()
    proc = start(cli, "signin", "--username", "alice", AUTHCTL_PINENTRY=str(pty.program))
    pty.expect("Password for alice:")
    pty.press(key)
    r = finish(proc, timeout=10)
    assert r.code == 64, r
    assert "pinentry prompt was cancelled" in r.err, r
    assert cli.keyring.session_items() == []
    assert [c for c in fake.calls(mark, client_ids=[cli.client_id]) if c["operation"] == "RespondToAuthChallenge"] == []


@pytest.mark.parametrize("behaviour, code, said", [
    ("exec sleep 60", 64, "no answer from pinentry in time"),
    ("echo 'OK Pleased to meet you'", 78, "ended before answering"),
    ("echo 'hello'; exec sleep 60", 78, "not Assuan"),
], ids=["hangs", "dies", "garbled"])
def test_a_pinentry_that_hangs_or_dies(cli, tmp_path, behaviour, code, said):
    program, pid_file = tmp_path / "broken-pinentry", tmp_path / "pid"
    program.write_text(f"#!/bin/sh\necho $$ > {pid_file}\n{behaviour}\n")
    program.chmod(0o755)
    started = time.monotonic()
    r = cli.run("signin", "--username", "alice", AUTHCTL_PINENTRY=str(program), AUTHCTL_PINENTRY_TIMEOUT="1",
                timeout=15)
    assert (r.code, said in r.err) == (code, True), r
    assert time.monotonic() - started < 10
    with pytest.raises(ProcessLookupError):  # killed and reaped, never left behind
        os.kill(int(pid_file.read_text()), 0)


def test_an_unknown_program_is_exit_78_before_any_request(cli, fake, tmp_path):
    mark = fake.mark()
    r = cli.run("signin", "--username", "alice", AUTHCTL_PINENTRY=str(tmp_path / "no-such-pinentry"))
    assert r.code == 78 and "AUTHCTL_PINENTRY" in r.err and "not an executable file" in r.err, r
    assert fake.calls(mark, client_ids=[cli.client_id]) == []


def test_kube_token_not_interactive_asks_through_pinentry_only_when_allowed(cli, tmp_path, pty):
    info = json.dumps({"apiVersion": V1, "kind": "ExecCredential", "spec": {"interactive": False}})
    started = tmp_path / "started"
    recorder = tmp_path / "recording-pinentry"
    recorder.write_text(f"#!/bin/sh\ntouch {started}\nexec {pty.program}\n")
    recorder.chmod(0o755)
    r = cli.run("kube-token", AUTHCTL_USERNAME="alice", AUTHCTL_PINENTRY=str(recorder), KUBERNETES_EXEC_INFO=info)
    assert (r.code, r.out) == (77, ""), r
    assert not started.exists(), "kube-token started a pinentry kubectl did not allow"

    profile_setting(cli, "pinentry_noninteractive = true")
    proc = start(cli, "kube-token", AUTHCTL_USERNAME="alice", AUTHCTL_PINENTRY=str(recorder),
                 KUBERNETES_EXEC_INFO=info)
    pty.expect("Password for alice:")
    pty.type(cli.pool.users["alice"])
    r = finish(proc)
    assert r.code == 0, r
    assert json.loads(r.out)["status"]["token"] == cli.keyring.session()["idToken"]
