"""`authctl exec` (tokens in the child's environment, never on its argv; exit status and signals
passed through), `authctl status` (no, valid, expired and ended sessions; profiles from the
config file), and `make install-files` (binary, shell completions, man page)."""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from harness import REPO, SYSTEM_PATH, authctl_bin, iso_utc, jwt_claims, parse_instant

STATUS_KEYS = {"accessTokenExpiresAt", "checked", "kept", "keptIn", "domain", "problem", "profile", "selected", "signedIn", "signedInWith", "state", "store",
               "userPoolId", "username", "issuedIn", "issuedByReplica", "unlockedUntil"}


def service_calls(fake, mark) -> list[dict]:
    """Cognito requests (POSTs with an operation) and JWKS fetches since mark."""
    return [c for c in fake.entries(mark) if c.get("operation") or c.get("method") == "GET"]


# ---------------------------------------------------------------------------
# exec
# ---------------------------------------------------------------------------


def test_exec_passes_tokens_in_the_environment(any_cli):
    assert any_cli.signin().code == 0
    token = any_cli.run("token")
    assert token.code == 0, token
    r = any_cli.run("exec", "--", "sh", "-c", 'printf %s "$AUTHCTL_ACCESS_TOKEN"')
    assert r.code == 0, r
    assert r.out == token.out.rstrip("\n")
    assert r.err == ""
    id_token = any_cli.run("token", "--type", "id").out.rstrip("\n")
    r = any_cli.run("exec", "--type", "id", "--", "sh", "-c", 'printf %s "$AUTHCTL_ID_TOKEN"')
    assert r.code == 0 and r.out == id_token, r
    assert jwt_claims(r.out)["token_use"] == "id"
    r = any_cli.run("exec", "--", "sh", "-c", 'printf "%s|%s" "$AUTHCTL_PROFILE" "$AUTHCTL_TOKEN_EXPIRES_AT"')
    assert r.code == 0, r
    profile, expires = r.out.split("|")
    assert profile == "default"
    session = any_cli.keyring.session()
    assert parse_instant(expires) == parse_instant(session["accessTokenExpiresAt"])


def test_exec_keeps_tokens_off_argv(cli):
    assert cli.signin().code == 0
    session = cli.keyring.session()
    # authctl replaces itself with sh: $$ is the process authctl was, /proc/$$/cmdline its argv now.
    r = cli.run("exec", "--", "sh", "-c", "cat /proc/$$/cmdline")
    assert r.code == 0, r
    argv = r.out.split("\0")
    assert argv[:2] == ["sh", "-c"], argv
    assert "eyJ" not in r.out
    for token in (session["accessToken"], session["idToken"], session["refreshToken"]):
        assert token not in r.out
    r = cli.run("exec", "--", "sh", "-c", "cat /proc/$$/environ")
    assert r.code == 0, r
    env = dict(kv.split("=", 1) for kv in r.out.split("\0") if "=" in kv)
    assert env["AUTHCTL_ACCESS_TOKEN"] == session["accessToken"]
    assert "AUTHCTL_ID_TOKEN" not in env, "only the token --type asks for"
    assert session["refreshToken"] not in r.out, "the refresh token stays with authctl"


def test_exec_refreshes_first(cli, fake):
    assert cli.signin().code == 0
    before = cli.keyring.session()
    past = iso_utc(datetime.now(timezone.utc) - timedelta(minutes=5))
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))
    mark = fake.mark()
    r = cli.run("exec", "--", "sh", "-c", 'printf %s "$AUTHCTL_ACCESS_TOKEN"')
    assert r.code == 0, r
    after = cli.keyring.session()
    assert r.out == after["accessToken"] != before["accessToken"]
    assert fake.calls(mark, operation="InitiateAuth", authFlow="REFRESH_TOKEN_AUTH", status=200)


def test_exec_exit_status_and_signals(cli):
    assert cli.signin().code == 0
    r = cli.run("exec", "--", "sh", "-c", "exit 7")
    assert r.code == 7, r
    r = cli.run("exec", "--", "sh", "-c", "kill -TERM $$")
    assert r.code == -15, r
    r = cli.run("exec", "--", "true")
    assert r.code == 0, r
    r = cli.run("exec", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
    assert (r.code, r.out, r.err) == (3, "out\n", "err\n"), r


def test_exec_cannot_run(cli):
    assert cli.signin().code == 0
    r = cli.run("exec", "--", "no-such-command-authctl-test")
    assert r.code == 127, r
    assert "no-such-command-authctl-test" in r.err
    assert r.out == ""
    plain = Path(cli.keyring.home) / "not-executable"
    plain.write_text("#!/bin/sh\necho ran\n")
    plain.chmod(0o644)
    r = cli.run("exec", "--", str(plain))
    assert r.code == 126, r
    assert "ran" not in r.out


def test_exec_usage(cli):
    assert cli.signin().code == 0
    r = cli.run("exec")
    assert r.code == 64, r
    r = cli.run("exec", "--")
    assert r.code == 64, r
    assert r.out == ""


def test_exec_not_signed_in_does_not_run(cli, fake):
    marker = Path(cli.keyring.home) / "ran"
    mark = fake.mark()
    r = cli.run("exec", "--", "sh", "-c", f"touch {marker}; echo ran")
    assert r.code == 77, r
    assert "Not signed in (profile default)" in r.err
    assert r.out == ""
    assert not marker.exists(), "the command must not run without a session"
    assert service_calls(fake, mark) == []


def test_exec_session_ended_does_not_run(cli, cognito):
    assert cli.signin().code == 0
    past = iso_utc(datetime.now(timezone.utc) - timedelta(minutes=5))
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))
    cognito.admin_user_global_sign_out(UserPoolId=cli.pool.pool_id, Username="alice")
    marker = Path(cli.keyring.home) / "ran"
    r = cli.run("exec", "--", "sh", "-c", f"touch {marker}")
    assert r.code == 77, r
    assert not marker.exists()
    assert cli.keyring.session_items() == []


# ---------------------------------------------------------------------------
# status
# ---------------------------------------------------------------------------


def status_json(cli, *args: str, **extra):
    r = cli.run("status", "--output", "json", *args, **extra)
    doc = r.json()
    assert set(doc) == {"profiles", "selectedProfile"}, doc
    for p in doc["profiles"]:
        assert set(p) == STATUS_KEYS, p
    return r, doc


def test_status_signed_out(cli, fake):
    mark = fake.mark()
    r, doc = status_json(cli)
    assert r.code == 77, r
    assert doc["selectedProfile"] == "default"
    assert doc["profiles"] == [{
        "accessTokenExpiresAt": None, "checked": False, "domain": None, "problem": None, "profile": "default",
        "selected": True, "signedIn": False, "signedInWith": None, "state": "signed-out", "store": "secret-service", "kept": [], "keptIn": "the Secret Service",
        "userPoolId": None, "username": None, "issuedIn": None, "issuedByReplica": False, "unlockedUntil": None,
    }]
    r = cli.run("status")
    assert r.code == 77, r
    assert r.out == "* default: not signed in\n"
    assert service_calls(fake, mark) == []


def test_status_valid(any_cli, fake):
    cli = any_cli
    assert cli.signin().code == 0
    session = cli.keyring.session()
    mark = fake.mark()
    r, doc = status_json(cli)
    assert r.code == 0, r
    [p] = doc["profiles"]
    assert p["state"] == "valid" and p["signedIn"] is True and p["selected"] is True and p["checked"] is False
    assert p["username"] == "alice"
    assert p["userPoolId"] == cli.pool.pool_id
    assert p["store"] == "secret-service"
    assert p["signedInWith"] == "password" and p["domain"] is None, p
    assert p["problem"] is None
    assert parse_instant(p["accessTokenExpiresAt"]) == parse_instant(session["accessTokenExpiresAt"])
    r = cli.run("status")
    assert r.code == 0, r
    assert r.out.startswith(f"* default: signed in as alice in {cli.pool.pool_id}; access token valid until "), r
    assert "Secret Service" in r.out
    assert "eyJ" not in r.out + r.err
    assert service_calls(fake, mark) == [], "status makes no network call without --check"

    mark = fake.mark()
    r, doc = status_json(cli, "--check")
    assert r.code == 0, r
    [p] = doc["profiles"]
    assert p["state"] == "valid" and p["checked"] is True, p
    assert fake.calls(mark, operation="GetUser", status=200), "--check asks the service"


def test_status_access_expired(cli, fake):
    assert cli.signin().code == 0
    past = iso_utc(datetime.now(timezone.utc) - timedelta(minutes=5))
    before = cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))
    mark = fake.mark()
    r, doc = status_json(cli)
    assert r.code == 0, r
    [p] = doc["profiles"]
    assert p["state"] == "access-expired-refreshable" and p["signedIn"] is True, p
    assert parse_instant(p["accessTokenExpiresAt"]) == parse_instant(past)
    r = cli.run("status")
    assert r.code == 0, r
    assert "refreshable" in r.out, r
    assert service_calls(fake, mark) == [], "no request may reach the service"
    assert cli.keyring.session() == before, "status does not refresh"


def test_status_check_ended(cli, fake, cognito):
    assert cli.signin().code == 0
    cognito.admin_user_global_sign_out(UserPoolId=cli.pool.pool_id, Username="alice")
    r, doc = status_json(cli)  # without --check it cannot know
    assert r.code == 0 and doc["profiles"][0]["state"] == "valid", r
    assert cli.keyring.session_items() != []
    r, doc = status_json(cli, "--check")
    assert r.code == 77, r
    [p] = doc["profiles"]
    assert p["state"] == "ended" and p["signedIn"] is False and p["checked"] is True, p
    assert cli.keyring.session_items() == [], "the dead session is removed"
    r, doc = status_json(cli)
    assert r.code == 77 and doc["profiles"][0]["state"] == "signed-out", r


def test_status_check_unreachable(cli, fake):
    assert cli.signin().code == 0
    fake.add_fault(operation="GetUser", kind="status", status=503, count=-1)
    r = cli.run("status", "--check", "--timeout", "5")
    assert r.code == 69, r
    assert cli.keyring.session_items() != [], "an unreachable service ends nothing"


def test_status_lists_config_profiles(cli, fake):
    config = Path(cli.keyring.env["XDG_CONFIG_HOME"]) / "authctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'[profiles.work]\nuser_pool_id = "{cli.pool.pool_id}"\nclient_id = "{cli.pool.client_id}"\n'
        f'endpoint = "{cli.endpoint}"\n'
        f'\n[profiles.build]\nuser_pool_id = "{cli.pool.pool_id}"\nclient_id = "{cli.pool.client_id}"\n'
    )
    # Sign in to "work" only (settings from the file: no pool or client in the environment).
    env = cli.env(AUTHCTL_USER_POOL_ID=None, AUTHCTL_CLIENT_ID=None, AUTHCTL_ENDPOINT=None)
    r = cli.run("signin", "--profile", "work", "--username", "alice", "--password-stdin", input="Corr3ct-Horse!\n", env=env)
    assert r.code == 0, r
    mark = fake.mark()
    r, doc = status_json(cli)
    assert r.code == 77, r  # the selected profile (default) is not signed in
    assert doc["selectedProfile"] == "default"
    by_name = {p["profile"]: p for p in doc["profiles"]}
    assert set(by_name) == {"default", "work", "build"}, doc
    assert by_name["default"]["selected"] and by_name["default"]["state"] == "signed-out"
    assert not by_name["work"]["selected"] and by_name["work"]["state"] == "valid"
    assert by_name["work"]["username"] == "alice"
    assert by_name["build"]["state"] == "signed-out"
    r, doc = status_json(cli, "--profile", "work")
    assert r.code == 0, r
    assert doc["selectedProfile"] == "work"
    assert [p["profile"] for p in doc["profiles"] if p["selected"]] == ["work"]
    r = cli.run("status", AUTHCTL_PROFILE="work")
    assert r.code == 0, r
    # The profiles of the file plus the selected one: "default" is in neither now.
    lines = r.out.splitlines()
    assert len(lines) == 2, r
    assert any(l.startswith(f"* work: signed in as alice in {cli.pool.pool_id}") for l in lines), r
    assert "  build: not signed in" in lines, r
    assert service_calls(fake, mark) == []


# ---------------------------------------------------------------------------
# make install-files: the binary, shell completions and the man page
# ---------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("make") is None or shutil.which("swift") is None, reason="needs make and swift")
def test_make_install_files(tmp_path):
    """`make install` = release build + the GenerateManual plugin + install-files; the release build
    is too slow for a test, so this runs install-files with the binary under test. With no MANPAGE
    given, install-files builds the plugin's own tool (generate-manual, from the swift-argument-parser
    dependency) in .build-tools (about 30 s the first time, then cached) and runs it on the binary."""
    destdir = tmp_path / "root"
    prefix = "/opt/authctl"
    # The developer's environment on purpose: swift needs its own HOME (SwiftPM's repository cache).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    p = subprocess.run(
        ["make", "-s", "install-files", f"BIN={authctl_bin()}", f"DESTDIR={destdir}", f"PREFIX={prefix}",
         f"TOOLS_BUILD_DIR={REPO / '.build-tools'}"],
        cwd=REPO, capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    root = Path(str(destdir) + prefix)
    binary = root / "bin" / "authctl"
    assert binary.is_file() and os.access(binary, os.X_OK)
    assert subprocess.run([str(binary), "--version"], capture_output=True).returncode == 0
    bash = root / "share" / "bash-completion" / "completions" / "authctl"
    zsh = root / "share" / "zsh" / "site-functions" / "_authctl"
    fish = root / "share" / "fish" / "vendor_completions.d" / "authctl.fish"
    man = root / "share" / "man" / "man1" / "authctl.1"
    for f in (bash, zsh, fish, man):
        assert f.is_file() and f.stat().st_size > 0, f
        assert f.stat().st_mode & 0o777 == 0o644, (f, oct(f.stat().st_mode))
    assert "complete" in bash.read_text() and "authctl" in bash.read_text()
    assert zsh.read_text().startswith("#compdef authctl")
    assert "complete -c 'authctl'" in fish.read_text()
    for sub in ("token", "exec", "status", "signin"):
        assert sub in bash.read_text() and sub in zsh.read_text() and sub in fish.read_text()
    page = man.read_text()
    assert ".Dt AUTHCTL 1" in page and ".Sh NAME" in page
    assert "--min-valid" in page.replace("Fl -min-valid", "--min-valid"), "every subcommand's options"
    if shutil.which("bash"):
        check = subprocess.run(["bash", "-n", str(bash)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
    if shutil.which("mandoc") or shutil.which("man"):
        tool = ["mandoc", "-T", "ascii"] if shutil.which("mandoc") else ["man", "-l", "-P", "cat"]
        render = subprocess.run([*tool, str(man)], capture_output=True, text=True, env={"PATH": SYSTEM_PATH, "MANWIDTH": "80"})
        assert render.returncode == 0 and "authctl" in render.stdout, render.stderr
    # Nothing outside DESTDIR: every installed file is under it.
    installed = sorted(str(p.relative_to(destdir)) for p in destdir.rglob("*") if p.is_file())
    assert installed == sorted(str(Path(prefix[1:]) / rel) for rel in (
        "bin/authctl", "share/bash-completion/completions/authctl", "share/zsh/site-functions/_authctl",
        "share/fish/vendor_completions.d/authctl.fish", "share/man/man1/authctl.1",
        "share/systemd/user/authctl-agent.service", "share/systemd/user/authctl-agent.socket")), installed
    # The key agent's user units, the service naming the installed binary (the packages' say /usr/bin).
    service = (root / "share/systemd/user/authctl-agent.service").read_text().splitlines()
    assert f"ExecStart={prefix}/bin/authctl agent" in service, service


def test_exec_hands_down_default_sigpipe_and_no_descriptors(cli, fake):
    """The Swift runtime ignores SIGPIPE and an ignored signal stays ignored across exec: the
    command must get the default back (`authctl exec -- yes | head -1` ends). Nor may it inherit
    authctl's descriptors (the live connection to Cognito, D-Bus sockets)."""
    assert cli.signin().code == 0
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=iso_utc(datetime.now(timezone.utc) - timedelta(hours=1))))
    # grep itself, not python (CPython ignores SIGPIPE at start-up whatever it inherited).
    r = cli.run("exec", "--", "grep", "^SigIgn:", "/proc/self/status")
    assert r.code == 0, r
    assert not int(r.out.split()[1], 16) & (1 << 12), f"SIGPIPE ignored in the command: {r.out}"
    # Expired again, so authctl has a live connection (and the keyring's bus) open at exec time.
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=iso_utc(datetime.now(timezone.utc) - timedelta(hours=1))))
    script = "import os; print(' '.join(sorted(os.listdir('/proc/self/fd'), key=int)))"
    r = cli.run("exec", "--", "python3", "-c", script)
    assert r.code == 0, r
    # 0, 1, 2 and the descriptor os.listdir opened for /proc/self/fd itself.
    assert r.out.split() == ["0", "1", "2", "3"], r
    env = cli.env()
    p = subprocess.run(["sh", "-c", f"'{authctl_bin()}' exec -- yes | head -1"],
                       env=env, capture_output=True, text=True, timeout=30, cwd=env["HOME"])
    assert p.stdout.splitlines()[0] == "y", p
    assert "Broken pipe" not in p.stderr, p


def test_exec_passes_on_the_callers_descriptors(cli):
    """A descriptor the caller hands down (`9>file`, a jobserver, `<(...)`) reaches the command."""
    assert cli.signin().code == 0
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=iso_utc(datetime.now(timezone.utc) - timedelta(hours=1))))
    env = cli.env()
    read_end, write_end = os.pipe()
    fd = next(n for n in range(40, 100) if not _is_open(n))
    os.dup2(write_end, fd, inheritable=True)
    os.close(write_end)
    try:
        p = subprocess.run([str(authctl_bin()), "exec", "--", "python3", "-c", f"import os; os.write({fd}, b'through-fd\\n')"], env=env,
                           capture_output=True, text=True, timeout=30, cwd=env["HOME"], pass_fds=(fd,))
    finally:
        os.close(fd)
    with os.fdopen(read_end) as reader:
        got = reader.read()
    assert p.returncode == 0, p
    assert got == "through-fd\n", (got, p.stderr)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False



def test_exec_type_sets_authctl_token(cli):
    assert cli.signin().code == 0
    session = cli.keyring.session()
    r = cli.run("exec", "--type", "id", "--", "sh", "-c", 'test "$AUTHCTL_TOKEN" = "$AUTHCTL_ID_TOKEN" && echo same')
    assert (r.code, r.out) == (0, "same\n"), r
    r = cli.run("exec", "--type", "id", "--type", "access", "--", "sh", "-c",
                'test "$AUTHCTL_TOKEN" = "$AUTHCTL_ID_TOKEN" && test -n "$AUTHCTL_ACCESS_TOKEN" && echo same')
    assert (r.code, r.out) == (0, "same\n"), r
    r = cli.run("exec", "--", "sh", "-c", 'test "$AUTHCTL_TOKEN" = "$AUTHCTL_ACCESS_TOKEN" && echo same')
    assert (r.code, r.out) == (0, "same\n"), r
    r = cli.run("exec", "--output", "json", "--", "true")
    assert r.code == 64, r
    assert session["accessToken"] not in r.out + r.err


@pytest.mark.parametrize("mode", ["nobus", "noprovider"])
def test_status_without_a_secret_service(pool, fake, keyrings, mode):
    """No Secret Service: status still prints a line (and JSON) for every profile, says why it
    cannot tell, and exits 78. In text: one line of state per profile on stdout, the store's
    advice once on stderr (two profiles in the one store share it)."""
    from harness import Cli
    cli = Cli(pool, keyrings(mode), fake.endpoint)
    r, doc = status_json(cli)
    assert r.code == 78, r
    entry = doc["profiles"][0]
    assert entry["state"] == "store-unavailable" and entry["signedIn"] is False, doc
    assert "Secret Service" in entry["problem"], doc
    config = cli.keyring.home / ".config" / "authctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[profiles.work]\nregion = "eu-west-1"\n')
    r = cli.run("status")
    assert r.code == 78, r
    assert r.out.splitlines() == [
        "* default: unknown: the Secret Service cannot be used (why: on stderr)",
        "  work: unknown: the Secret Service cannot be used (why: on stderr)",
    ], r
    assert r.err.count("Secret Service unavailable") == 1, r
    assert r.err.startswith("authctl: No Secret Service on this host"), r


def test_status_unreadable_session(cli, fake):
    """An item that exists but cannot be decoded is reported as such (not as no keyring), exit 77."""
    assert cli.signin().code == 0
    cli.keyring.rewrite_session(lambda s: s.pop("accessToken"))
    r, doc = status_json(cli)
    assert r.code == 77, r
    entry = doc["profiles"][0]
    assert entry["state"] == "unreadable" and "authctl signin" in entry["problem"], doc
