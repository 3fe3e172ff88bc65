"""Hardening at the process, console and session level.

Each test reproduces what a security review did to the binary before the fix: a reader that closes
the pipe, a core dump, an escape-laden service answer, numbers no token can carry, a Ctrl-C during a
rotating refresh, a session sent to another endpoint, a lock directory another user controls.
The service side is the fake (fault injection: `error`, `stall`) in front of moto; the second
endpoint of the binding tests is a small listener here that refuses everything, as a hostile or
merely different Cognito would, and records what it was sent.
"""

from __future__ import annotations

import base64
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pexpect
import pytest

from harness import Cli, authctl_bin, iso_utc, run_authctl
from test_refresh_race import expire_stored_access_token, rotating_cli  # noqa: F401 (fixture)

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b31m"
SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J\\u009b31m"


def forged(token: str, **claims) -> str:
    """`token` with claims replaced (signature left as it was: only decoded, never verified here)."""
    header, payload, signature = token.split(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body.update(claims)
    encoded = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
    return f"{header}.{encoded}.{signature}"


def no_raw_controls(text: str) -> bool:
    return not any(ord(c) < 0x20 and c != "\n" or 0x7f <= ord(c) < 0xa0 for c in text)


# ---------------------------------------------------------------------------
# Finding 2: a closed pipe, and core dumps
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["token"], ["whoami", "--output", "json"], ["status"]])
def test_a_closed_pipe_exits_141_quietly(signed_in, args):
    """stdout is a pipe whose reader has gone (its read end closed before authctl writes). authctl
    ignores SIGPIPE, so the write fails with EPIPE: FileHandle used to trap on it (exit 132,
    SIGILL), and a command that never loaded libsecret (which made GLib ignore SIGPIPE) used to die
    by the signal (-13). Now: exit 141, as a shell reports a pipeline's writer, and nothing on
    stderr."""
    cli = signed_in
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = cli.env()
    try:
        proc = subprocess.run([str(authctl_bin()), *args], env=env, stdin=subprocess.DEVNULL, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=30, cwd=env["HOME"], start_new_session=True)
    finally:
        os.close(write_end)
    assert proc.returncode == 141, (proc.returncode, proc.stderr)
    assert proc.stderr == ""
    assert cli.keyring.session() is not None


def test_the_shell_pipeline_of_the_review(signed_in):
    """The review's own command line: `authctl token | (exec 0<&-; sleep 1)`."""
    cli = signed_in
    env = dict(cli.env(), AUTHCTL=str(authctl_bin()))
    proc = subprocess.run(["bash", "-c", '"$AUTHCTL" token | (exec 0<&-; sleep 1); echo "status=${PIPESTATUS[0]}"'],
                          env=env, capture_output=True, text=True, timeout=30, cwd=env["HOME"], start_new_session=True)
    assert proc.stdout.strip() in ("status=141", "status=0"), proc  # 0 only if the write beat the close
    assert "status=132" not in proc.stdout


def test_no_core_dump_and_not_dumpable(cli):
    """A process waiting at a password prompt (signin --no-store on a terminal: no keyring, no request
    yet) is read from outside. It runs as an unprivileged user (nobody), started with an unlimited
    core size: /proc/PID/limits must show a core size of 0, soft and hard, and /proc/PID/status must be
    owned by root, which the kernel does for a process whose dumpable attribute is 0 (proc(5)); a
    dumpable one's files belong to its own user."""
    if os.geteuid() != 0:
        pytest.skip("needs root to start authctl as another user")
    with tempfile.TemporaryDirectory(prefix="authctl-nobody-") as top:  # pytest's tmp_path is 0700
        check_not_dumpable(cli, Path(top))


def check_not_dumpable(cli: Cli, tmp_path: Path) -> None:
    binary = tmp_path / "bin" / "authctl"
    binary.parent.mkdir()
    shutil.copy(authctl_bin(), binary)
    home = tmp_path / "nobody-home"
    home.mkdir()
    for p in (tmp_path, binary.parent, home):
        os.chmod(p, 0o777)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "XDG_CONFIG_HOME": str(home),
           "AUTHCTL_USER_POOL_ID": cli.pool.pool_id, "AUTHCTL_CLIENT_ID": cli.pool.client_id,
           "AUTHCTL_ENDPOINT": cli.endpoint, "TERM": "dumb"}

    def as_nobody_with_cores():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        os.setgid(65534)
        os.setuid(65534)

    child = pexpect.spawn(str(binary), ["signin", "--no-store", "--username", "alice"], env=env, cwd=str(home),
                          timeout=20, encoding="utf-8", preexec_fn=as_nobody_with_cores)
    try:
        child.expect("assword")
        limits = Path(f"/proc/{child.pid}/limits").read_text()
        core = next(line for line in limits.splitlines() if line.startswith("Max core file size"))
        assert core.split()[4:6] == ["0", "0"], core
        owner = os.stat(f"/proc/{child.pid}/status").st_uid
        assert owner == 0, f"/proc/{child.pid} belongs to uid {owner}: the process is dumpable"
    finally:
        child.terminate(force=True)


# ---------------------------------------------------------------------------
# Finding 3: text from outside is never printed raw
# ---------------------------------------------------------------------------

def test_service_error_with_escapes_is_shown_escaped(signed_in, fake):
    """A 400 whose message and error type carry OSC (retitle), ED (clear screen) and an 8-bit CSI."""
    cli = signed_in
    fake.add_fault(operation="GetUser", kind="error", errorType="Evil\x1b[31mException", message="boom " + ESCAPES + "\nforged line")
    r = cli.run("whoami")
    assert r.code == 1, r
    assert no_raw_controls(r.err), repr(r.err)
    assert SHOWN in r.err and "\\x1b[31mException" in r.err, r.err
    assert "boom " + SHOWN + "\\x0aforged line" in r.err, "the service's newline is not authctl's"
    assert len(r.err.strip().splitlines()) == 1, r.err


def test_claims_with_escapes_are_shown_escaped(signed_in):
    """The stored username (from the token's claims) in status's text and JSON output."""
    cli = signed_in
    cli.keyring.rewrite_session(lambda s: s.update(username="alice" + ESCAPES + "\n* other: signed in"))
    r = cli.run("status")
    assert r.code == 0, r
    assert no_raw_controls(r.out), repr(r.out)
    assert "alice" + SHOWN + "\\x0a* other: signed in" in r.out
    r = cli.run("status", "--output", "json")
    assert r.code == 0, r
    assert all(ord(c) < 0x7f for c in r.out), "JSON output escapes C0 and C1 controls as \\u00XX"
    assert r.json()["profiles"][0]["username"] == "alice" + ESCAPES + "\n* other: signed in"


def test_user_attributes_with_escapes_are_shown_escaped(signed_in, cognito):
    cli = signed_in
    cognito.admin_update_user_attributes(UserPoolId=cli.pool.pool_id, Username="alice",
                                         UserAttributes=[{"Name": "name", "Value": "Alice" + ESCAPES}])
    r = cli.run("whoami")
    assert r.code == 0, r
    assert no_raw_controls(r.out), repr(r.out)
    assert "name: Alice" + SHOWN in r.out


# ---------------------------------------------------------------------------
# Finding 6: numbers from outside
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("output", ["text", "json"])
def test_global_signout_with_an_absurd_exp(signed_in, fake, output):
    """An id token with exp 1e300 (and iat -1e300): before the fix `signout --global` trapped after
    GlobalSignOut had succeeded and the session was removed, before saying how long tokens stay
    valid. Such a claim is treated as absent: the access token's lifetime counts."""
    cli = signed_in
    cli.keyring.rewrite_session(lambda s: s.update(idToken=forged(s["idToken"], exp=1e300, iat=-1e300)))
    mark = fake.mark()
    r = cli.run("signout", "--global", "--yes", "--output", output)
    assert r.code == 0, r
    if output == "json":
        doc = r.json()
        assert doc["globalSignOut"] == "ok" and doc["signedOutLocally"] is True, doc
        assert doc["exposureUntil"].startswith("20"), doc
    else:
        assert "for up to 1 hour" in r.err, r
    assert [c["status"] for c in fake.calls(mark, operation="GlobalSignOut")] == [200]
    assert cli.keyring.session() is None


def test_ops_signout_with_an_absurd_token_validity(cli, fake, cognito):
    """DescribeUserPoolClient answering AccessTokenValidity 2e14 days: the ops sign-out printed its
    audit line, then trapped before the JSON report. The lifetime is bounded by Cognito's own
    maximum (1 day)."""
    cognito.update_user_pool_client(UserPoolId=cli.pool.pool_id, ClientId=cli.pool.client_id,
                                    AccessTokenValidity=200_000_000_000_000, TokenValidityUnits={"AccessToken": "days"})
    env = cli.env(AWS_ACCESS_KEY_ID="AKIAOPSTEST000000009", AWS_SECRET_ACCESS_KEY="ops/secret/key", USER="ops")
    r = run_authctl(["signout", "--global", "--user", "alice", "--yes", "--output", "json"], env)
    assert r.code == 0, r
    assert "audit: AdminUserGlobalSignOut user=alice" in r.err
    doc = r.json()
    assert doc["globalSignOut"] == "ok" and doc["tokenLifetimeSeconds"] == 86400, doc


# ---------------------------------------------------------------------------
# Finding 1: a session talks only to the endpoint it was signed in with
# ---------------------------------------------------------------------------

class RefusingEndpoint:
    """Another Cognito endpoint on loopback: refuses every request as NotAuthorizedException (as the
    real service does for tokens it did not issue) and records what it was sent."""

    def __init__(self):
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                received.append((self.headers.get("X-Amz-Target"), self.rfile.read(int(self.headers.get("Content-Length") or 0))))
                body = json.dumps({"__type": "NotAuthorizedException", "message": "Invalid Refresh Token"}).encode()
                self.send_response(400)
                self.send_header("Content-Type", "application/x-amz-json-1.1")
                self.send_header("x-amzn-ErrorType", "NotAuthorizedException:http://internal.amazon.com/coral/")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def other_endpoint():
    endpoint = RefusingEndpoint()
    yield endpoint
    endpoint.close()


@pytest.mark.parametrize("variable", ["AUTHCTL_ENDPOINT", "AWS_ENDPOINT_URL"])
@pytest.mark.parametrize("args,expired", [(["whoami"], False), (["token"], True), (["status", "--check"], False)])
def test_a_session_is_never_sent_to_another_endpoint(signed_in, other_endpoint, variable, args, expired):
    """Signed in at the fake; the environment now names another endpoint. Before the fix authctl sent
    the access (or, when expired, the refresh) token there and, refused, deleted the session."""
    cli = signed_in
    before = expire_stored_access_token(cli) if expired else cli.keyring.session()
    extra = {"AUTHCTL_ENDPOINT": None, variable: other_endpoint.url}
    r = cli.run(*args, **extra)
    assert r.code == 78, r
    assert "was signed in at " + cli.endpoint in r.err and other_endpoint.url in r.err and "nothing was sent" in r.err, r
    assert other_endpoint.received == [], "a token went to an endpoint that is not the session's"
    assert cli.keyring.session() == before, "the session must be kept whole"
    assert cli.run(*args).code == 0, "and it still works at its own endpoint"


def test_local_signout_at_another_endpoint_sends_nothing(signed_in, other_endpoint):
    """`signout` with another endpoint configured: the refresh token is not revoked there (nor sent),
    the local session is removed as asked, and the warning says why."""
    cli = signed_in
    r = cli.run("signout", AUTHCTL_ENDPOINT=other_endpoint.url)
    assert r.code == 0, r
    assert "could not be revoked" in r.err and "nothing was sent" in r.err, r
    assert other_endpoint.received == []
    assert cli.keyring.session() is None


# ---------------------------------------------------------------------------
# Finding 7: signals during a rotating refresh, and at a password prompt
# ---------------------------------------------------------------------------

def wait_for_connection(port: int, timeout: float = 10.0) -> None:
    """Until a client connection to 127.0.0.1:`port` is established (read from /proc/net/tcp)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].split(":")[1], 16)
            if remote_port == port and fields[3] == "01":
                return
        time.sleep(0.02)
    raise AssertionError(f"no connection to port {port} within {timeout}s")


def interrupted_refresh(cli: Cli, fake, signo: int) -> tuple[int, str, list[dict] | None]:
    """`authctl token` with an expired access token; `signo` once its connection to the fake is made.
    Returns its exit status, stderr, and the refresh requests the fake received (logged once the
    3-second stall is over, whether or not authctl still waits for the answer)."""
    fake.add_fault(operation="GetTokensFromRefreshToken", kind="stall", seconds=3, count=1)
    port = int(fake.endpoint.rstrip("/").rsplit(":", 1)[1])
    mark = fake.mark()
    env = cli.env()
    # A test run started in the background by a non-interactive shell inherits SIGINT and SIGQUIT
    # ignored (as every background job does), and an ignored signal stays ignored across exec:
    # authctl would then rightly finish and exit 0. The signal's default is what is tested here.
    proc = subprocess.Popen([str(authctl_bin()), "token"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=env["HOME"], start_new_session=True,
                            preexec_fn=lambda: signal.signal(signo, signal.SIG_DFL))
    signalled = False
    try:
        wait_for_connection(port)
        time.sleep(0.5)  # the request is written right after the connection is made
        signalled = proc.poll() is None
        proc.send_signal(signo)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 6
    while time.monotonic() < deadline and not fake.calls(mark, operation="GetTokensFromRefreshToken"):
        time.sleep(0.1)
    fake.clear_faults()
    # None: a loaded machine held the test past the 3-second stall and authctl had already ended,
    # so the signal came too late to prove anything (a try that does not count).
    received = fake.calls(mark, operation="GetTokensFromRefreshToken") if signalled else None
    return proc.returncode, proc.stderr.read(), received


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_a_rotating_refresh_keeps_the_session(rotating_cli, fake, signo):  # noqa: F811
    """The fake holds GetTokensFromRefreshToken 3 s, then rotates the refresh token and answers. The
    signal comes while the request waits. Before the fix authctl died at once, the service rotated
    anyway, and the next command ended the session (RefreshTokenReuseException). Now the signal waits
    until the new session is stored, then ends the process as it asked. On a loaded machine the
    signal may come before the request was sent (nothing rotated, nothing to prove), or after
    authctl ended (the same): tried again."""
    cli = rotating_cli
    assert cli.signin().code == 0
    for _ in range(3):
        before = expire_stored_access_token(cli)
        code, err, received = interrupted_refresh(cli, fake, signo)
        if received is None:
            continue
        if received:
            break
        assert cli.keyring.session() == before, "no request was made: the session must be as it was"
    assert received and received[0].get("stalled") == 3, received
    assert code == -signo, (code, err)
    rotated = cli.keyring.session()
    assert rotated["refreshToken"] != before["refreshToken"], "the rotated refresh token was lost"
    r = cli.run("token")
    assert r.code == 0, r
    assert cli.keyring.session()["refreshToken"] == rotated["refreshToken"], "no second refresh was due"


@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_at_a_password_prompt_restores_echo(cli, signo):
    """At the no-echo password prompt the terminal's ECHO is off; whatever signal ends authctl there,
    the terminal gets its echo back (before the fix only SIGINT restored it)."""
    import termios
    env = cli.env(TERM="dumb")
    child = pexpect.spawn(str(authctl_bin()), ["signin", "--username", "alice"], env=env, cwd=env["HOME"], timeout=20,
                          encoding="utf-8")
    try:
        child.expect("assword")
        time.sleep(0.3)
        assert not termios.tcgetattr(child.child_fd)[3] & termios.ECHO, "echo should be off at the prompt"
        child.kill(signo)
        child.expect(pexpect.EOF)
        assert termios.tcgetattr(child.child_fd)[3] & termios.ECHO, "echo left off"
    finally:
        child.close(force=True)


# ---------------------------------------------------------------------------
# Finding 8: lock and cache directories
# ---------------------------------------------------------------------------

def hostile_runtime_dir(top: Path, planted: str) -> tuple[Path, Path]:
    """A world-writable XDG_RUNTIME_DIR (mode 1777, like /tmp) in which another user has planted
    `authctl`: a symlink to a directory of theirs, or a directory of theirs (uid nobody, mode 0777)."""
    runtime = top / "shared-runtime"
    runtime.mkdir()
    os.chmod(runtime, 0o1777)
    theirs = top / "attacker"
    theirs.mkdir()
    if planted == "symlink":
        os.symlink(theirs, runtime / "authctl")
    else:
        theirs = runtime / "authctl"
        theirs.mkdir()
        os.chmod(theirs, 0o777)
        os.chown(theirs, 65534, 65534)
    return runtime, theirs


@pytest.mark.parametrize("planted", ["symlink", "their-directory"])
def test_a_planted_lock_directory_is_not_used(cli, tmp_path, planted):
    """Before the fix authctl followed the symlink and locked the other user's file, which they held:
    every sign-in waited. Now the runtime directory is refused and the user's cache directory used."""
    import fcntl
    runtime, theirs = hostile_runtime_dir(tmp_path, planted)
    fd = os.open(theirs / "default.lock", os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)  # the other user holds "the" lock
    try:
        r = cli.signin(XDG_RUNTIME_DIR=str(runtime), timeout=20)
    finally:
        os.close(fd)
    assert r.code == 0, r
    assert sorted(p.name for p in theirs.iterdir()) == ["default.lock"], "nothing written in their directory"
    cache_dir = Path(cli.env()["XDG_CACHE_HOME"]) / "authctl"
    info = os.lstat(cache_dir)
    assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.geteuid()
    assert (cache_dir / "default.lock").is_file()


def test_no_safe_directory_exits_78(cli, tmp_path):
    """The runtime directory planted and the cache directory in a world-writable, non-sticky place:
    exit 78 naming both and why; nothing is stored."""
    runtime, _ = hostile_runtime_dir(tmp_path, "symlink")
    open_cache = tmp_path / "open-cache"
    open_cache.mkdir()
    os.chmod(open_cache, 0o777)
    r = cli.signin(XDG_RUNTIME_DIR=str(runtime), XDG_CACHE_HOME=str(open_cache), timeout=20)
    assert r.code == 78, r
    assert "no safe directory for the refresh lock" in r.err, r
    assert "symbolic link" in r.err and "can be changed by other users" in r.err, r
    assert cli.keyring.session() is None
