"""Processes and helpers for authctl's integration tests (used by conftest.py and demo.sh).

- MotoServer: moto's server on a free loopback port.
- FakeServer: the fake_cognito package in front of it (real SRP checks, request log, faults).
- Keyring: a private Secret Service: dbus-run-session + gnome-keyring-daemon in a
  temporary HOME. Several can run at once (one per "device").
- make_pool: a user pool with two app clients and users, created through the fake.
- run_authctl: the built binary with an environment built from scratch.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SUPPORT = REPO / "Tests" / "support"
FAKE = HERE / "fake_cognito"  # the package, run as a directory (its __main__.py)
REGION = "us-east-1"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Passwords satisfy moto's default policy (upper, lower, digit, symbol, length >= 8).
ALICE_PASSWORD = "Corr3ct-Horse!"
BOB_TEMP_PASSWORD = "Temp-Passw0rd!"
NEW_PASSWORD = "N3w-Battery-Staple!"


def authctl_bin() -> Path:
    return Path(os.environ.get("AUTHCTL_BIN") or REPO / ".build" / "debug" / "authctl")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kill_group(proc: subprocess.Popen, grace: float = 3.0) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(grace)


# ---------------------------------------------------------------------------
# moto and the fake
# ---------------------------------------------------------------------------


class MotoServer:
    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.proc: subprocess.Popen | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, attempts: int = 3) -> "MotoServer":
        for _ in range(attempts):
            self.port = free_port()
            log = open(self.workdir / f"moto-{self.port}.log", "wb")
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            log.close()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    with urllib.request.urlopen(self.url + "/moto-api/data.json", timeout=2) as r:
                        if r.status == 200:
                            return self
                except (urllib.error.URLError, OSError):
                    time.sleep(0.2)
            self.stop()
        raise RuntimeError(f"moto server did not start; see {self.workdir}/moto-*.log")

    def stop(self) -> None:
        if self.proc:
            _kill_group(self.proc)


class FakeServer:
    def __init__(self, upstream: str, workdir: Path):
        self.upstream = upstream
        self.workdir = workdir
        self.log_path = workdir / "fake-requests.jsonl"
        self.proc: subprocess.Popen | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def endpoint(self) -> str:
        return self.url + "/"

    def start(self) -> "FakeServer":
        self.log_path.touch()
        err = open(self.workdir / "fake-stderr.log", "ab")
        self.proc = subprocess.Popen(
            [sys.executable, str(FAKE), "--upstream", self.upstream, "--port", "0", "--log", str(self.log_path)],
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            text=True,
        )
        err.close()
        line = self.proc.stdout.readline()
        m = re.match(r"PORT (\d+)", line or "")
        if not m:
            self.stop()
            raise RuntimeError(f"fake_cognito did not start: {line!r}; see {self.workdir}/fake-stderr.log")
        self.port = int(m.group(1))
        m = re.match(r"REPLICA (\d+)", self.proc.stdout.readline() or "")
        self.replica_port = int(m.group(1)) if m else 0
        return self

    @property
    def replica_endpoint(self) -> str:
        """The same fake as a read-only replica in a second region (fake_cognito/replica.py)."""
        return f"http://127.0.0.1:{self.replica_port}/"

    def stop(self) -> None:
        if self.proc:
            _kill_group(self.proc)

    # -- request log ---------------------------------------------------------

    def entries(self, since: float = 0.0) -> list[dict[str, Any]]:
        """Log entries of requests that arrived at or after `since` (a mark())."""
        with open(self.log_path, encoding="utf-8") as f:
            rows = [json.loads(l) for l in f if l.strip()]
        return sorted((e for e in rows if e.get("ts", 0) >= since), key=lambda e: e.get("ts", 0))

    def mark(self) -> float:
        """Now, for entries(since=...). Entries carry their arrival time, so a request that was
        stalled in an earlier test and logged late never counts in a later one."""
        time.sleep(0.002)
        return time.time()

    def calls(self, since: float = 0.0, client_ids: Iterable[str] | None = None, **match: Any) -> list[dict[str, Any]]:
        """Log entries since `since`, optionally for some app clients (entries without a ClientId,
        like GetUser, always pass), matching field=value (operation=, authFlow=, status=...)."""
        ids = set(client_ids) if client_ids else None
        out = []
        for e in self.entries(since):
            if ids is not None and "clientId" in e and e["clientId"] not in ids:
                continue
            if all(e.get(k) == v for k, v in match.items()):
                out.append(e)
        return out

    # -- admin endpoint --------------------------------------------------------

    def _admin(self, method: str, path: str, payload: Any = None) -> Any:
        data = json.dumps(payload).encode() if payload is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def add_fault(self, **rule: Any) -> None:
        self._admin("POST", "/_fake/faults", rule)

    def clear_faults(self) -> None:
        self._admin("DELETE", "/_fake/faults")

    def set_config(self, **config: Any) -> dict[str, Any]:
        return self._admin("POST", "/_fake/config", config)["config"]


def cognito_client(endpoint_url: str):
    import boto3

    return boto3.client(
        "cognito-idp",
        endpoint_url=endpoint_url,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


# ---------------------------------------------------------------------------
# A user pool to test against
# ---------------------------------------------------------------------------


@dataclass
class Pool:
    pool_id: str
    client_id: str
    secret_client_id: str
    client_secret: str
    region: str = REGION
    users: dict[str, str] = field(default_factory=dict)  # username -> current password
    subs: dict[str, str] = field(default_factory=dict)

    @property
    def client_ids(self) -> list[str]:
        return [self.client_id, self.secret_client_id]


def make_pool(cognito, name: str | None = None) -> Pool:
    """A pool with a public app client, a confidential one (with secret), alice (confirmed,
    email, in group admins) and bob (FORCE_CHANGE_PASSWORD, temporary password only).
    Created through the fake so that it learns the passwords."""
    name = name or f"authctl-test-{secrets.token_hex(3)}"
    pool_id = cognito.create_user_pool(PoolName=name)["UserPool"]["Id"]
    flows = ["ALLOW_USER_SRP_AUTH", "ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"]
    plain = cognito.create_user_pool_client(UserPoolId=pool_id, ClientName="authctl", ExplicitAuthFlows=flows)
    conf = cognito.create_user_pool_client(
        UserPoolId=pool_id, ClientName="authctl-confidential", ExplicitAuthFlows=flows, GenerateSecret=True
    )
    pool = Pool(
        pool_id=pool_id,
        client_id=plain["UserPoolClient"]["ClientId"],
        secret_client_id=conf["UserPoolClient"]["ClientId"],
        client_secret=conf["UserPoolClient"]["ClientSecret"],
    )
    cognito.create_group(UserPoolId=pool_id, GroupName="admins")
    cognito.admin_create_user(
        UserPoolId=pool_id,
        Username="alice",
        TemporaryPassword=BOB_TEMP_PASSWORD,
        MessageAction="SUPPRESS",
        UserAttributes=[
            {"Name": "email", "Value": "alice@example.com"},
            {"Name": "email_verified", "Value": "true"},
            {"Name": "name", "Value": "Alice Liddell"},
        ],
    )
    cognito.admin_set_user_password(UserPoolId=pool_id, Username="alice", Password=ALICE_PASSWORD, Permanent=True)
    cognito.admin_add_user_to_group(UserPoolId=pool_id, Username="alice", GroupName="admins")
    cognito.admin_create_user(
        UserPoolId=pool_id,
        Username="bob",
        TemporaryPassword=BOB_TEMP_PASSWORD,
        MessageAction="SUPPRESS",
        UserAttributes=[{"Name": "email", "Value": "bob@example.com"}],
    )
    pool.users = {"alice": ALICE_PASSWORD, "bob": BOB_TEMP_PASSWORD}
    for user in pool.users:
        attrs = cognito.admin_get_user(UserPoolId=pool_id, Username=user)["UserAttributes"]
        pool.subs[user] = next(a["Value"] for a in attrs if a["Name"] == "sub")
    return pool


# ---------------------------------------------------------------------------
# A private Secret Service
# ---------------------------------------------------------------------------

NO_PROVIDER_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


class Keyring:
    """A temporary HOME with its own session bus and Secret Service.

    mode: "keyring"    gnome-keyring-daemon with an unlocked login collection (the normal case)
          "bare"       a session bus only; gnome-keyring is D-Bus activated on demand, with no
                       unlocked collection and no prompter (a locked keyring on a headless box)
          "noprovider" a session bus that offers no org.freedesktop.secrets at all
          "nobus"      no session bus (DBUS_SESSION_BUS_ADDRESS unset, empty XDG_RUNTIME_DIR)
    """

    def __init__(self, mode: str = "keyring", parent: Path | None = None, name: str = "device"):
        assert mode in ("keyring", "bare", "noprovider", "nobus")
        self.mode = mode
        self.home = Path(tempfile.mkdtemp(prefix=f"authctl-{name}-", dir=parent))
        self.proc: subprocess.Popen | None = None
        self.env: dict[str, str] = {}

    @property
    def runtime_dir(self) -> Path:
        return self.home / ".run"

    def start(self, timeout: float = 20.0) -> "Keyring":
        home = self.home
        for d in (".config", ".cache", ".local/share", ".run"):
            (home / d).mkdir(parents=True, exist_ok=True)
        os.chmod(self.runtime_dir, 0o700)
        self.env = {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_RUNTIME_DIR": str(self.runtime_dir),
        }
        if self.mode == "nobus":
            return self
        env_file = home / ".keyring-env"
        cmd = ["dbus-run-session"]
        if self.mode == "noprovider":
            cfg = home / ".bus.conf"
            cfg.write_text(NO_PROVIDER_BUS_CONFIG)
            cmd.append(f"--config-file={cfg}")
        cmd += ["--", "bash", str(SUPPORT / "keyring-session.sh"), str(env_file),
                "keyring" if self.mode == "keyring" else "bare"]
        log = open(home / ".keyring-session.log", "wb")
        self.proc = subprocess.Popen(
            cmd,
            env={"PATH": SYSTEM_PATH, **self.env},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=home,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while not env_file.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                out = (home / ".keyring-session.log").read_text(errors="replace")
                self.stop()
                raise RuntimeError(f"private Secret Service did not start ({self.mode}):\n{out}")
            time.sleep(0.05)
        for line in env_file.read_text().splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                self.env[k] = v
        return self

    def stop(self) -> None:
        if self.proc:
            _kill_group(self.proc)
            self.proc = None

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)

    # -- secret-tool ------------------------------------------------------------

    def _secret_tool(self, args: list[str], input: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["secret-tool", *args],
            env={"PATH": SYSTEM_PATH, **self.env},
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=20,
        )

    def lookup(self, **attrs: str) -> str | None:
        r = self._secret_tool(["lookup", *_flat(attrs)])
        return r.stdout if r.returncode == 0 and r.stdout else None

    def search(self, **attrs: str) -> list[dict[str, Any]]:
        """Items matching attrs: {"path","label","secret","schema","attributes"}."""
        r = self._secret_tool(["search", "--all", *_flat(attrs)])
        items: list[dict[str, Any]] = []
        text = r.stdout + "\n" + r.stderr  # secret-tool prints the item header and fields on both streams
        cur: dict[str, Any] | None = None
        for line in text.splitlines():
            if line.startswith("[") and line.endswith("]"):
                cur = {"path": line[1:-1], "attributes": {}}
                items.append(cur)
            elif cur is not None and " = " in line:
                k, v = line.split(" = ", 1)
                if k.startswith("attribute."):
                    cur["attributes"][k[len("attribute."):]] = v
                else:
                    cur[k] = v
        seen: dict[str, dict[str, Any]] = {}
        for item in items:  # stdout and stderr may each carry part of one item
            merged = seen.setdefault(item["path"], {"path": item["path"], "attributes": {}})
            merged["attributes"].update(item.pop("attributes"))
            merged.update({k: v for k, v in item.items() if k != "path"})
        return list(seen.values())

    def store(self, label: str, attrs: dict[str, str], secret: str) -> None:
        r = self._secret_tool(["store", f"--label={label}", *_flat(attrs)], input=secret)
        if r.returncode != 0:
            raise RuntimeError(f"secret-tool store failed: {r.stderr}")

    # -- authctl's session item -----------------------------------------------

    def session_items(self, profile: str = "default") -> list[dict[str, Any]]:
        return self.search(kind="session", profile=profile)

    def session(self, profile: str = "default") -> dict[str, Any] | None:
        raw = self.lookup(kind="session", profile=profile)
        return json.loads(raw) if raw else None

    def rewrite_session(self, change: Callable[[dict[str, Any]], None], profile: str = "default") -> dict[str, Any]:
        """Replace the stored session's JSON with change(session) applied, keeping the item's
        label and every attribute (xdg:schema too, so authctl's own lookup still finds it)."""
        items = self.session_items(profile)
        assert len(items) == 1, f"expected one session item for profile {profile}, found {items}"
        item = items[0]
        session = json.loads(item["secret"])
        change(session)
        attrs = dict(item["attributes"])
        if item.get("schema"):
            attrs["xdg:schema"] = item["schema"]
        self.store(item.get("label") or f"authctl session ({profile})", attrs, json.dumps(session))
        after = self.session_items(profile)
        assert len(after) == 1, f"rewrite left {len(after)} session items: {after}"
        assert json.loads(after[0]["secret"]) == session
        return session

    def files(self, skip_keyrings: bool = True) -> list[Path]:
        """Regular files under HOME, without the keyring's own (~/.local/share/keyrings)
        and this harness's bookkeeping (~/.keyring-*, ~/.bus.conf)."""
        keyrings = self.home / ".local" / "share" / "keyrings"
        out = []
        for root, _dirs, names in os.walk(self.home):
            for n in names:
                p = Path(root) / n
                if skip_keyrings and keyrings in p.parents:
                    continue
                if p.parent == self.home and (n.startswith(".keyring-") or n == ".bus.conf"):
                    continue
                if p.is_file() and not p.is_symlink():
                    out.append(p)
        return out


def _flat(attrs: dict[str, str]) -> list[str]:
    out: list[str] = []
    for k, v in attrs.items():
        out += [k, v]
    return out


# ---------------------------------------------------------------------------
# Running authctl
# ---------------------------------------------------------------------------


class Result(tuple):
    """(code, stdout, stderr), with names and a readable repr for assertion messages."""

    def __new__(cls, code: int, out: str, err: str, args: list[str]):
        self = super().__new__(cls, (code, out, err))
        self.args_ = args
        return self

    code = property(lambda self: self[0])
    out = property(lambda self: self[1])
    err = property(lambda self: self[2])

    def json(self) -> Any:
        return json.loads(self.out)

    def __repr__(self) -> str:
        return f"authctl {' '.join(self.args_)} -> exit {self.code}\n--- stdout:\n{self.out}\n--- stderr:\n{self.err}"


def base_env(keyring: Keyring | None = None, pool: Pool | None = None, endpoint: str | None = None,
             secret_client: bool = False, **extra: str | None) -> dict[str, str]:
    """An environment built from scratch: nothing of the developer's own leaks in."""
    env: dict[str, str] = {"PATH": SYSTEM_PATH}
    if keyring is not None:
        env.update(keyring.env)
    if pool is not None:
        env["AUTHCTL_USER_POOL_ID"] = pool.pool_id
        env["AUTHCTL_REGION"] = pool.region
        if secret_client:
            env["AUTHCTL_CLIENT_ID"] = pool.secret_client_id
            env["AUTHCTL_CLIENT_SECRET"] = pool.client_secret
        else:
            env["AUTHCTL_CLIENT_ID"] = pool.client_id
    if endpoint:
        env["AUTHCTL_ENDPOINT"] = endpoint
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def run_authctl(args: list[str], env: dict[str, str], input: str | None = None, timeout: float = 30) -> Result:
    binary = authctl_bin()
    if not binary.exists():
        raise AssertionError(f"authctl binary not found at {binary}: run `swift build` or set AUTHCTL_BIN")
    proc = subprocess.run(
        [str(binary), *args],
        env=env,
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=env.get("HOME") or None,
        start_new_session=True,  # no controlling terminal: /dev/tty cannot be opened either
    )
    return Result(proc.returncode, proc.stdout, proc.stderr, list(args))


def parse_instant(value: str) -> datetime:
    """An ISO 8601 instant with a zone (authctl writes UTC with Z)."""
    when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    assert when.tzinfo is not None, f"{value!r} has no time zone"
    return when


def iso_utc(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def token_values(session: dict[str, Any]) -> list[str]:
    return [session[k] for k in ("accessToken", "idToken", "refreshToken") if session.get(k)]


def jwt_claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class Cli:
    """authctl bound to one pool, one keyring and the fake's endpoint."""

    def __init__(self, pool: Pool, keyring: Keyring, endpoint: str, secret_client: bool = False):
        self.pool = pool
        self.keyring = keyring
        self.endpoint = endpoint
        self.secret_client = secret_client

    @property
    def client_id(self) -> str:
        return self.pool.secret_client_id if self.secret_client else self.pool.client_id

    def env(self, **extra: str | None) -> dict[str, str]:
        return base_env(self.keyring, self.pool, self.endpoint, self.secret_client, **extra)

    def run(self, *args: str, input: str | None = None, env: dict[str, str] | None = None,
            timeout: float = 30, **extra: str | None) -> Result:
        return run_authctl(list(args), env if env is not None else self.env(**extra), input=input, timeout=timeout)

    def signin(self, username: str = "alice", password: str | None = None, *more: str, **kw) -> Result:
        password = self.pool.users[username] if password is None else password
        return self.run("signin", "--username", username, "--password-stdin", *more, input=password + "\n", **kw)

    def with_keyring(self, keyring: Keyring) -> "Cli":
        return Cli(self.pool, keyring, self.endpoint, self.secret_client)
