"""The file store's key agent (`authctl unlock`, `lock`, `agent`), on a host with no
Secret Service (the `nobus` keyring mode: a HOME and a private XDG_RUNTIME_DIR, nothing else).

Real processes throughout: the agent authctl starts itself (detached), the real kubectl and AWS
CLI running authctl, another local user (`setpriv --reuid=65534`), `kill -9`. "Never derives" is
shown without timings: after `unlock` the commands run with no passphrase source at all (no
variable, no file, no terminal), so nothing could derive a key, and the agent's own answer count
(its `status`, read through the socket here) grows with each of them.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pexpect
import pytest

import harness
from harness import Cli, authctl_bin

PASSPHRASE = "correct horse battery staple"


@pytest.fixture
def bare(pool, keyrings, fake):
    cli = Cli(pool, keyrings("nobus", "ag"), fake.endpoint)
    yield cli
    # Never leave an agent behind: ask it to forget, then make sure it is gone.
    pid = agent_pid(cli)
    cli.run("lock")
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def home(cli: Cli) -> Path:
    return Path(cli.keyring.env["HOME"])


def state_dir(cli: Cli) -> Path:
    return home(cli) / ".local" / "state" / "authctl"


def socket_path(cli: Cli) -> Path:
    return Path(cli.keyring.env["XDG_RUNTIME_DIR"]) / "authctl" / "agent.sock"


def passphrase_file(cli: Cli, text: str = PASSPHRASE) -> str:
    path = home(cli) / "passphrase"
    path.write_text(text + "\n")
    os.chmod(path, 0o600)
    return str(path)


def with_passphrase(cli: Cli, text: str = PASSPHRASE, **extra) -> dict:
    return cli.env(AUTHCTL_STORE_PASSPHRASE_FILE=passphrase_file(cli, text), **extra)


def request(path: Path, kind: int, fields: list[bytes] = ()) -> tuple[int, list[bytes]] | None:
    """One request in the agent's protocol (version 1); None when the agent answered nothing."""
    body = bytes([1, kind]) + b"".join(struct.pack(">I", len(f)) + f for f in fields)
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(str(path))
        s.sendall(struct.pack(">I", len(body)) + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    if not data:
        return None
    (length,) = struct.unpack(">I", data[:4])
    body = data[4:4 + length]
    assert body[0] == 1
    fields, position = [], 2
    while position < len(body):
        (n,) = struct.unpack(">I", body[position:position + 4])
        fields.append(body[position + 4:position + 4 + n])
        position += 4 + n
    return body[1], fields


def answers(cli: Cli) -> int:
    kind, fields = request(socket_path(cli), 5)
    assert kind == 0x80
    return struct.unpack(">Q", fields[0])[0]


def agent_pid(cli: Cli) -> int | None:
    """The listening agent's pid, from SO_PEERCRED on a connection to it."""
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(socket_path(cli)))
            pid, _, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
            return pid
    except OSError:
        return None


def wait_gone(pid: int, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # A zombie (the parent has not reaped it yet) holds nothing either.
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
                return True
        except (FileNotFoundError, IndexError):
            return True
        time.sleep(0.1)
    return False


def traversable_by_others(path: Path) -> dict[Path, int]:
    """Lets other users pass through every directory above `path`; returns the modes to restore."""
    restore = {p: os.stat(p).st_mode & 0o7777 for p in path.parents if p != Path("/")}
    for p, mode in restore.items():
        os.chmod(p, mode | 0o011)
    return restore


def signed_in_on_file(cli: Cli) -> None:
    # scrypt at age's work factor in a debug build on a busy machine: a generous timeout.
    r = cli.signin("alice", None, "--store", "file", env=with_passphrase(cli), timeout=180)
    assert r.code == 0, r
    assert (state_dir(cli) / "default.age").exists()


def unlock(cli: Cli, *more: str) -> harness.Result:
    r = cli.run("unlock", *more, env=with_passphrase(cli), timeout=180)
    assert r.code == 0, r
    return r


def test_unlock_once_then_token_whoami_parallel_never_prompt(bare):
    signed_in_on_file(bare)
    unlock(bare)
    assert socket_path(bare).is_socket()
    assert os.stat(socket_path(bare).parent).st_mode & 0o777 == 0o700
    before = answers(bare)
    # No passphrase source at all: the agent opens the file, or nothing does.
    r = bare.run("token")
    assert r.code == 0, r
    assert r.out.count(".") == 2
    processes = [subprocess.Popen([str(authctl_bin()), "token"], env=bare.env(), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  start_new_session=True, cwd=str(home(bare))) for _ in range(20)]
    results = [(p.wait(60), p.stdout.read(), p.stderr.read()) for p in processes]
    assert all(code == 0 for code, _, _ in results), [e for c, _, e in results if c][:2]
    assert len({out for _, out, _ in results}) == 1
    # One open per token run (and the status requests here): the agent did the work.
    assert answers(bare) >= before + 21
    # status never prompts, and says until when the agent holds the profile.
    st = bare.run("status", "--output", "json")
    assert st.code == 0, st
    entry = json.loads(st.out)["profiles"][0]
    assert entry["store"] == "file" and entry["unlockedUntil"], entry
    # A write through the agent (sign-out removes the session) keeps the file an age file.
    assert bare.run("signout").code == 0


def test_kubectl_and_aws_cli_through_the_agent(bare, tmp_path):
    from test_kube_token import ApiStub, kubeconfig, kubectl

    signed_in_on_file(bare)
    unlock(bare)
    api = ApiStub(tmp_path)
    try:
        before = answers(bare)
        r = kubectl(bare, kubeconfig(bare, api), "get", "--raw", "/version")
        assert r.returncode == 0, r.stderr
        assert api.authorizations and api.authorizations[-1].startswith("Bearer ")
        assert answers(bare) > before
    finally:
        api.stop()


def test_aws_cli_credential_process_through_the_agent(bare, moto, workdir):
    from test_aws_credentials import IdentityServer, ROLE_NAME, aws, make_identity_pool

    server = IdentityServer(moto.url, workdir).start()
    try:
        iam = server.client("iam")
        try:
            iam.create_role(RoleName=ROLE_NAME, AssumeRolePolicyDocument="{}")
        except iam.exceptions.EntityAlreadyExistsException:
            pass
        signed_in_on_file(bare)
        bare.identity_pool_id = make_identity_pool(server, bare.pool.pool_id, bare.client_id)
        unlock(bare)
        before = answers(bare)
        r = aws(bare, server, "sts", "get-caller-identity")
        assert r.returncode == 0, r.stderr
        assert "Arn" in json.loads(r.stdout)
        assert answers(bare) > before
    finally:
        server.stop()


# A status request; prints how many bytes came back (0: closed with nothing answered).
PROBE = (
    "import socket,struct,sys\n"
    "s=socket.socket(socket.AF_UNIX);s.settimeout(10);s.connect(sys.argv[1])\n"
    "b=bytes([1,5])\n"
    "try:\n"
    "    s.sendall(struct.pack('>I',len(b))+b);d=s.recv(65536)\n"
    "except (ConnectionResetError, BrokenPipeError):\n"
    "    d=b''\n"
    "print(len(d))\n"
)


def opened_up(bare: Cli) -> tuple[Path, dict]:
    """The agent's socket loosened by hand: every directory on the way and the socket itself open
    to all (the test's own temporary directories too); returns the socket and what to restore."""
    path = socket_path(bare)
    restore = traversable_by_others(path)
    for p in (home(bare), path.parent.parent, path.parent):
        os.chmod(p, 0o777)
    os.chmod(path, 0o777)
    return path, restore


def bytes_answered(path: Path, as_nobody: bool) -> int:
    """PROBE's count of bytes answered, run as another local user (uid 65534) or as this one."""
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if as_nobody else []
    r = subprocess.run([*prefix, sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return int(r.stdout.strip())


def test_another_user_is_refused_at_the_socket_even_when_opened_up(bare):
    signed_in_on_file(bare)
    unlock(bare)
    path, restore = opened_up(bare)
    assert bytes_answered(path, as_nobody=True) == 0  # connected, then closed with nothing answered
    # The same probe as the agent's own user is answered: the refusal is the peer check.
    assert bytes_answered(path, as_nobody=False) > 0
    # authctl itself refuses a directory opened to others, saying how to close it.
    r = bare.run("token")
    assert r.code == 78, r
    assert "chmod 700" in r.err, r
    for p, mode in restore.items():
        os.chmod(p, mode)


def test_kill_9_leaves_a_clear_message_and_nothing_lost(bare):
    signed_in_on_file(bare)
    unlock(bare)
    pid = agent_pid(bare)
    file_before = (state_dir(bare) / "default.age").read_bytes()
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid)
    r = bare.run("token")
    assert r.code == 78, r
    assert len(r.err.strip().splitlines()) == 1, r
    assert "killed or crashed" in r.err and "authctl unlock" in r.err, r
    assert (state_dir(bare) / "default.age").read_bytes() == file_before
    # The stale socket is replaced by the next unlock; everything is still there.
    unlock(bare)
    assert agent_pid(bare) not in (None, pid)
    assert bare.run("token").code == 0


def test_lock_and_idle_timeout_forget(bare):
    signed_in_on_file(bare)
    unlock(bare)
    pid = agent_pid(bare)
    r = bare.run("lock")
    assert r.code == 0 and "forgot" in r.err, r
    assert wait_gone(pid)
    r = bare.run("token")
    assert r.code == 78 and "authctl unlock" in r.err, r

    unlock(bare, "--idle", "2s")
    pid = agent_pid(bare)
    assert bare.run("token").code == 0
    # Not a timing assertion: the agent exits by itself once the idle time has run out.
    assert wait_gone(pid, 30)
    r = bare.run("token")
    assert r.code == 78 and "authctl unlock" in r.err, r
    assert bare.run("lock").err.startswith("No key agent")


def test_agent_memory_is_locked_and_not_dumpable(bare, tmp_path):
    signed_in_on_file(bare)
    unlock(bare)
    pid = agent_pid(bare)
    status = Path(f"/proc/{pid}/status").read_text()
    locked_kb = int(next(line for line in status.splitlines() if line.startswith("VmLck:")).split()[1])
    assert locked_kb >= 4, status

    # Not dumpable: the files under /proc/PID of a non-dumpable process belong to root, whoever runs
    # it; so the
    # agent runs here as another user (nobody) with a private runtime directory of its own.
    runtime = tmp_path / "nobody-run"
    runtime.mkdir(mode=0o700)
    os.chown(runtime, 65534, 65534)
    restore = traversable_by_others(runtime)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(runtime), "XDG_RUNTIME_DIR": str(runtime)}
    agent = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", str(authctl_bin()), "agent"],
                             env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    control = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "30"])
    try:
        deadline = time.monotonic() + 20
        while not (runtime / "authctl" / "agent.sock").exists() and time.monotonic() < deadline:
            assert agent.poll() is None, agent.stderr.read()
            time.sleep(0.1)
        assert (runtime / "authctl" / "agent.sock").exists()
        assert os.stat(f"/proc/{control.pid}/status").st_uid == 65534  # a dumpable process: its own
        assert os.stat(f"/proc/{agent.pid}/status").st_uid == 0
    finally:
        agent.terminate()
        control.kill()
        agent.wait(10)
        control.wait(10)
        for p, mode in restore.items():
            os.chmod(p, mode)
    assert not (runtime / "authctl" / "agent.sock").exists()  # SIGTERM: wiped and removed its socket


def test_spec_interactive_false_and_status_never_prompt(bare):
    signed_in_on_file(bare)
    info = json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                       "spec": {"interactive": False}})
    env = bare.env(KUBERNETES_EXEC_INFO=info)
    child = pexpect.spawn(str(authctl_bin()), ["kube-token"], env=env, cwd=str(home(bare)), encoding="utf-8", timeout=30)
    index = child.expect(["Passphrase", pexpect.EOF])
    assert index == 1, child.before
    child.close()
    assert child.exitstatus == 78, child.before
    assert "authctl unlock" in child.before

    child = pexpect.spawn(str(authctl_bin()), ["status"], env=bare.env(), cwd=str(home(bare)), encoding="utf-8", timeout=30)
    index = child.expect(["Passphrase", pexpect.EOF])
    assert index == 1, child.before
    child.close()
    assert "locked" in child.before and "authctl unlock" in child.before, child.before

    # The control: with spec.interactive true the same terminal is asked, and the typed passphrase
    # unlocks the agent for the next, non-interactive call.
    info_true = info.replace("false", "true")
    child = pexpect.spawn(str(authctl_bin()), ["kube-token"], env=bare.env(KUBERNETES_EXEC_INFO=info_true),
                          cwd=str(home(bare)), encoding="utf-8", timeout=180)
    child.expect("Passphrase")
    child.sendline(PASSPHRASE)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    r = bare.run("kube-token", env=env)
    assert r.code == 0, r


def test_mistyped_passphrase_for_a_second_profile_is_refused(bare):
    signed_in_on_file(bare)
    r = bare.run("signin", "--username", "alice", "--password-stdin", "--store", "file", "--profile", "second",
                 input=bare.pool.users["alice"] + "\n", env=with_passphrase(bare, "correct horse battery stapler"), timeout=180)
    assert r.code == 77, r
    assert "same passphrase" in r.err, r
    assert not (state_dir(bare) / "second.age").exists()
    # With the directory's passphrase, the new file shares the directory's header: age opens it.
    r = bare.run("signin", "--username", "alice", "--password-stdin", "--store", "file", "--profile", "second",
                 input=bare.pool.users["alice"] + "\n", env=with_passphrase(bare), timeout=180)
    assert r.code == 0, r
    first = (state_dir(bare) / "default.age").read_bytes()
    second = (state_dir(bare) / "second.age").read_bytes()
    header_end = first.index(b"\n---") + 1
    header_end = first.index(b"\n", header_end) + 1
    assert first[:header_end] == second[:header_end]


def test_unlocked_new_profile_file_opens_with_age(bare):
    from test_stores import age_decrypt

    signed_in_on_file(bare)
    unlock(bare)
    # A second profile's first file, written by the agent (no passphrase source here).
    r = bare.run("signin", "--username", "alice", "--password-stdin", "--store", "file", "--profile", "second",
                 input=bare.pool.users["alice"] + "\n")
    assert r.code == 0, r
    document = age_decrypt(state_dir(bare) / "second.age", PASSPHRASE)
    assert any(item["kind"] == "session" for item in document["items"])


def test_interrupted_migration_to_file_leaves_nothing_once_migrated_back(bare):
    import fcntl
    import tomllib

    def profile_config() -> dict:
        path = home(bare) / ".config" / "authctl" / "config.toml"
        return tomllib.loads(path.read_text()).get("profiles", {}).get("default", {}) if path.exists() else {}

    assert bare.signin("alice", None, "--store", "kernel-keyring").code == 0
    env = with_passphrase(bare)
    # Interrupted after the copy: the config lock is held from the moment the migration noted
    # where it copies to, so recording the copy fails (after its 10 s wait) and nothing is deleted.
    proc = subprocess.Popen([str(authctl_bin()), "store", "migrate", "--to", "file"], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=env["HOME"], start_new_session=True)
    deadline = time.monotonic() + 120
    while profile_config().get("store_migrating_to") != "file":
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    lock = open(home(bare) / ".config" / "authctl" / ".config.toml.lock", "a+")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        _, err = proc.communicate(timeout=180)
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
    assert proc.returncode != 0, err
    copy = state_dir(bare) / "default.age"
    assert copy.exists(), "the interrupted migration left its copy"
    assert profile_config().get("store") == "kernel-keyring"

    doctor = bare.run("store", "doctor", env=env, timeout=120)
    assert "interrupted" in doctor.err and "authctl store migrate --to kernel-keyring" in doctor.err, doctor
    assert "recommended here: kernel-keyring" in doctor.err, doctor

    # Migrating back removes the copy and the note; the profile works from where it always was.
    r = bare.run("store", "migrate", "--to", "kernel-keyring", env=env, timeout=120)
    assert r.code == 0, r
    assert not copy.exists()
    assert "store_migrating_to" not in profile_config()
    assert bare.run("token").code == 0


def test_messages_lead_to_the_fix_on_a_host_without_a_secret_service(bare):
    from test_stores import kernel_items, keyctl

    # The first refusal: one line naming one store for this host (keyctl works here), details after.
    r = bare.signin("alice", None)
    assert r.code == 78, r
    first = r.err.strip().splitlines()[0]
    assert first.startswith("authctl: No Secret Service on this host: use the kernel keyring"), r.err
    assert "authctl configure --store kernel-keyring" in first and "lost at reboot" in first, r.err

    # A kernel-keyring session gone (as after a reboot): said so, with the profile in the command.
    assert bare.signin("alice", None, "--store", "kernel-keyring", "--profile", "ops").code == 0
    for name, item in kernel_items(bare).items():
        if name.endswith(":ops"):
            keyctl("invalidate", item["_id"])  # as the kernel's idle expiry does
    r = bare.run("token", "--profile", "ops")
    assert r.code == 77, r
    assert "kernel keyring holds no session" in r.err and "reboot" in r.err, r
    assert "authctl signin --profile ops" in r.err, r


# -- the directory's other files, read with the store's checks --------------

def plant_as_nobody(cli: Cli, name: str, data: bytes) -> Path:
    """`name` in the store directory, written by another user (uid 65534) while the directory was
    open to others, then closed again as the owner would: the file stays the other user's."""
    directory = state_dir(cli)
    restore = traversable_by_others(directory)
    os.chmod(directory, 0o777)
    writer = "import os,sys\nfd=os.open(sys.argv[1],os.O_WRONLY|os.O_CREAT|os.O_EXCL,0o600)\nos.write(fd,sys.stdin.buffer.read())\n"
    try:
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
                            writer, str(directory / name)], input=data, capture_output=True, timeout=30)
        assert r.returncode == 0, r.stderr
    finally:
        os.chmod(directory, 0o700)
        for p, mode in restore.items():
            os.chmod(p, mode)
    assert os.stat(directory / name).st_uid == 65534
    return directory / name


def refused(r: harness.Result, path: Path, reason: str) -> None:
    assert r.code == 78, r
    assert str(path) in r.err and reason in r.err, r


def test_unlock_and_a_new_profile_read_the_directorys_other_files_with_the_stores_checks(bare):
    """`unlock` and a new profile's first file read every `.age` file of the directory (for the
    header they share) with none of the checks the profile's own file gets: a file another user
    planted (here a copy of the user's own file, so it even opens) was opened and its key handed to
    the agent, a link or a FIFO was skipped or hung the command. Each is now refused, exit 78
    naming the file, before any passphrase is derived, nothing written and no agent started."""
    signed_in_on_file(bare)
    own = (state_dir(bare) / "default.age").read_bytes()
    env = with_passphrase(bare)

    def new_profile() -> harness.Result:
        return bare.run("signin", "--username", "alice", "--password-stdin", "--store", "file", "--profile", "second",
                        input=bare.pool.users["alice"] + "\n", env=env, timeout=180)

    planted = plant_as_nobody(bare, "planted.age", own)
    for r in (bare.run("unlock", env=env, timeout=180), new_profile()):
        refused(r, planted, "belongs to uid 65534")
    assert agent_pid(bare) is None and not (state_dir(bare) / "second.age").exists()
    planted.unlink()  # the directory is the user's: they may remove another's file from it

    cases = []
    link = state_dir(bare) / "link.age"
    link.symlink_to(state_dir(bare) / "default.age")
    cases.append((link, "symbolic link"))
    fifo = state_dir(bare) / "fifo.age"
    os.mkfifo(fifo, 0o600)
    cases.append((fifo, "not a regular file"))
    big = state_dir(bare) / "big.age"
    with open(big, "wb") as f:
        f.write(own[:own.index(b"\n---")])
        f.truncate(17 << 20)  # larger than the store reads: refused by its size, unread
    big.chmod(0o600)
    cases.append((big, "larger than"))
    for path, reason in cases:
        for other, _ in cases:
            if other != path:
                other.rename(other.with_name(other.name + ".aside"))
        try:
            for r in (bare.run("unlock", env=env, timeout=30), new_profile()):
                refused(r, path, reason)
        except subprocess.TimeoutExpired:
            pytest.fail(f"authctl hung on {path.name}")
        finally:
            for other, _ in cases:
                if other != path:
                    other.with_name(other.name + ".aside").rename(other)
        assert agent_pid(bare) is None and not (state_dir(bare) / "second.age").exists()
    for path, _ in cases:
        path.unlink()
    # The directory as the user left it: unlock works again.
    unlock(bare)


def test_unlock_names_the_files_another_passphrase_keeps_and_what_to_do(bare):
    """One passphrase per store directory: a file the passphrase does not open
    (written by the real `age -p` with another one) is named in `unlock`'s warning, with what to
    do; the others are unlocked (exit 0). A passphrase that opens none is exit 77."""
    from test_stores import age_encrypt

    signed_in_on_file(bare)
    other = state_dir(bare) / "ops%2Fprod.age"  # the file of profile "ops/prod"
    age_encrypt('{"items":[]}', other, "another passphrase")
    r = bare.run("unlock", env=with_passphrase(bare), timeout=180)
    assert r.code == 0, r
    assert "Unlocked the file store" in r.err and "(1 file)" in r.err, r
    warning = next(line for line in r.err.splitlines() if "warning:" in line)
    assert f"does not open {other}; it stays locked" in warning, warning
    assert str(state_dir(bare) / "default.age") not in warning, warning
    assert f"move it out of {state_dir(bare)}" in warning, warning
    assert "authctl signin --store file --profile ops/prod" in warning, warning
    assert "`authctl unlock` with its passphrase" in warning, warning
    # The agent holds the one it opened: the profile works with no passphrase source.
    assert bare.run("token").code == 0
    j = bare.run("unlock", "--output", "json", env=with_passphrase(bare), timeout=180)
    assert j.code == 0 and json.loads(j.out)["notOpened"] == [str(other)], j
    bare.run("lock")

    # Its own passphrase opens it too: the default profile's file is then the one named.
    r = bare.run("unlock", env=with_passphrase(bare, "another passphrase"), timeout=180)
    assert r.code == 0, r
    assert f"does not open {state_dir(bare) / 'default.age'}; it stays locked" in r.err, r
    bare.run("lock")

    r = bare.run("unlock", env=with_passphrase(bare, "neither of them"), timeout=180)
    assert r.code == 77, r
    assert f"does not open any file of {state_dir(bare)}" in r.err, r
    assert agent_pid(bare) is None


def write_profile_setting(cli: Cli, line: str | None) -> None:
    """`line` (e.g. `unlock_after_prompt = false`) in [profiles.default] of config.toml, in place
    of any earlier one; None removes it."""
    path = home(cli) / ".config" / "authctl" / "config.toml"
    kept = [l for l in path.read_text().splitlines() if not l.startswith("unlock_after_prompt")]
    at = kept.index("[profiles.default]") + 1
    path.write_text("\n".join(kept[:at] + ([line] if line else []) + kept[at:]) + "\n")


def token_typed_at_a_prompt(cli: Cli, **extra: str) -> None:
    child = pexpect.spawn(str(authctl_bin()), ["token"], env=cli.env(**extra), cwd=str(home(cli)),
                          encoding="utf-8", timeout=180)
    child.expect("Passphrase")
    child.sendline(PASSPHRASE)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before


def agent_holds_the_store(cli: Cli) -> bool:
    """A `token` with no terminal and no passphrase source: it works only through the agent."""
    r = cli.run("token")
    assert r.code in (0, 78), r
    if r.code == 78:
        assert "authctl unlock" in r.err, r
    return r.code == 0


def test_unlock_after_prompt_is_a_profile_setting_the_environment_overrides(bare):
    """A passphrase typed at a prompt unlocks the agent "unless the profile or
    the command says not to". The profile says it with `unlock_after_prompt = false` in its
    config; AUTHCTL_UNLOCK_AFTER_PROMPT (the command's environment) wins over it either way."""
    signed_in_on_file(bare)
    config = home(bare) / ".config" / "authctl" / "config.toml"

    def configure(value: str) -> harness.Result:
        return bare.run("configure", "--user-pool-id", bare.pool.pool_id, "--client-id", bare.client_id,
                        "--unlock-after-prompt", value)

    r = configure("sometimes")
    assert r.code == 64 and 'must be true or false (got "sometimes")' in r.err, r
    r = configure("false")
    assert r.code == 0, r
    assert "unlock_after_prompt = false\n" in config.read_text()
    token_typed_at_a_prompt(bare)
    assert agent_pid(bare) is None and not agent_holds_the_store(bare)
    token_typed_at_a_prompt(bare, AUTHCTL_UNLOCK_AFTER_PROMPT="true")
    assert agent_holds_the_store(bare)
    bare.run("lock")

    write_profile_setting(bare, 'unlock_after_prompt = "true"')
    token_typed_at_a_prompt(bare, AUTHCTL_UNLOCK_AFTER_PROMPT="0")
    assert not agent_holds_the_store(bare)
    token_typed_at_a_prompt(bare)
    assert agent_holds_the_store(bare)
    bare.run("lock")

    # Unset: the default, a typed passphrase unlocks (test_spec_interactive_false_… shows it too).
    write_profile_setting(bare, None)
    token_typed_at_a_prompt(bare)
    assert agent_holds_the_store(bare)
    bare.run("lock")

    # A value that is neither true nor false is refused before anything is asked, saying where.
    for line, said in (('unlock_after_prompt = "sometimes"', 'must be true or false (got "sometimes")'),
                       ("unlock_after_prompt = 1", "profiles.default.unlock_after_prompt must be true or false")):
        write_profile_setting(bare, line)
        r = bare.run("token", env=with_passphrase(bare))
        assert r.code == 78 and said in r.err and str(config) in r.err, r
    write_profile_setting(bare, None)
    r = bare.run("token", env=with_passphrase(bare, AUTHCTL_UNLOCK_AFTER_PROMPT="maybe"))
    assert r.code == 78 and 'AUTHCTL_UNLOCK_AFTER_PROMPT must be true or false (got "maybe")' in r.err, r


# ---------------------------------------------------------------------------
# Socket activation (Packaging/systemd): the agent handed its listening socket as descriptor 3
# ---------------------------------------------------------------------------

UNITS = harness.REPO / "Packaging" / "systemd"


def unit_setting(unit: str, key: str) -> str:
    values = [line.split("=", 1)[1] for line in (UNITS / unit).read_text().splitlines() if line.startswith(key + "=")]
    assert len(values) == 1, (unit, key, values)
    return values[0]


def listen_stream(cli: Cli) -> Path:
    """The socket unit's ListenStream= for this user: %t is XDG_RUNTIME_DIR in a user's manager
    (systemd.unit(5), "Specifiers")."""
    return Path(unit_setting("authctl-agent.socket", "ListenStream").replace("%t", cli.keyring.env["XDG_RUNTIME_DIR"]))


def private_socket_directory(cli: Cli) -> Path:
    # What DirectoryMode=0700 makes before systemd binds the socket.
    directory = socket_path(cli).parent
    directory.mkdir(mode=0o700, exist_ok=True)
    os.chmod(directory, 0o700)
    return directory


@pytest.fixture
def activator(bare):
    """The real systemd-socket-activate listening where the socket unit says, with `authctl agent`
    (ExecStart's arguments) as the program it starts on the first connection (exec'd in its place,
    LISTEN_PID and LISTEN_FDS=1 set, the socket as descriptor 3)."""
    tool = shutil.which("systemd-socket-activate")
    if tool is None:
        pytest.skip("systemd-socket-activate is not installed (Debian: systemd; Tests/support/install-deps.sh)")
    path = listen_stream(bare)
    assert path == socket_path(bare), "the unit listens where the clients look"
    private_socket_directory(bare)
    command = unit_setting("authctl-agent.service", "ExecStart").split()
    assert command[0] == "/usr/bin/authctl"
    # It passes the program only the variables named with --setenv (a user's manager passes its own
    # environment: XDG_RUNTIME_DIR, HOME, PATH).
    env = bare.env()
    passed = [f"--setenv={name}={env[name]}" for name in ("XDG_RUNTIME_DIR", "HOME", "PATH") if name in env]
    proc = subprocess.Popen([tool, "--listen", str(path), *passed, str(authctl_bin()), *command[1:]], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 20
    while not path.is_socket():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)


def test_socket_activated_agent_unlocks_once_and_serves_token(bare, activator):
    signed_in_on_file(bare)
    os.chmod(socket_path(bare), 0o600)  # SocketMode=0600
    # `unlock` connects to the socket systemd-socket-activate holds, which starts the agent.
    unlock(bare)
    assert agent_pid(bare) == activator.pid, "the activated agent answered; unlock started none of its own"
    before = answers(bare)
    # No passphrase source at all: the agent opens the file, or nothing does.
    r = bare.run("token")
    assert r.code == 0, r
    assert r.out.count(".") == 2
    assert bare.run("token").code == 0
    assert answers(bare) >= before + 2
    st = bare.run("status", "--output", "json")
    assert st.code == 0 and json.loads(st.out)["profiles"][0]["unlockedUntil"], st
    # The agent's own environment no longer names the descriptor (nothing it starts inherits it);
    # read from its memory is not possible (not dumpable), so the check is the unit test's
    # (SocketActivationTests); here: it still listens on descriptor 3, close-on-exec.
    fdinfo = Path(f"/proc/{activator.pid}/fdinfo/3").read_text()
    flags = int(next(line for line in fdinfo.splitlines() if line.startswith("flags:")).split()[1], 8)
    assert flags & 0o2000000, fdinfo  # O_CLOEXEC

    # `lock`: the agent forgets and exits 0; the socket file is systemd's and stays.
    r = bare.run("lock")
    assert r.code == 0, r
    assert activator.wait(20) == 0
    assert "socket-activated on " + str(socket_path(bare)) in activator.stderr.read()
    assert socket_path(bare).is_socket(), "the agent removed the socket systemd owns"


def test_socket_activated_agent_refuses_another_user(bare, activator):
    signed_in_on_file(bare)
    unlock(bare)
    path, restore = opened_up(bare)
    try:
        assert bytes_answered(path, as_nobody=True) == 0  # connected (systemd's socket), then closed unanswered
        assert bytes_answered(path, as_nobody=False) > 0
        assert agent_pid(bare) == activator.pid
    finally:
        for p, mode in restore.items():
            os.chmod(p, mode)
        os.chmod(path.parent, 0o700)


def listening_unix(path: Path, listening: bool = True) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    if listening:
        s.listen(4)
    return s


def tcp_listener() -> socket.socket:
    s = socket.socket(socket.AF_INET)
    s.bind(("127.0.0.1", 0))
    s.listen(4)
    return s


@pytest.mark.parametrize("case", ["wrong-listen-pid", "file", "tcp", "not-listening", "other-path", "two-fds"])
def test_socket_activation_refuses_what_is_not_the_agents_socket(bare, case, tmp_path):
    """What a wrapper or a wrong unit could hand over, as descriptor 3 with LISTEN_PID set by the
    shell that execs the agent (`$$`, the pid it keeps): refused, exit 78, one line saying what
    is wrong, and nothing bound or removed at the socket's path."""
    private_socket_directory(bare)
    path = socket_path(bare)
    listen_pid, count, expected = "$$", "1", None
    if case == "wrong-listen-pid":
        handed = listening_unix(path)
        listen_pid, expected = "1", "LISTEN_PID=1 names another process"
    elif case == "file":
        handed = open(tmp_path / "not-a-socket", "w")
        expected = "is not a socket"
    elif case == "tcp":
        handed = tcp_listener()
        expected = "is not a Unix-domain socket"
    elif case == "not-listening":
        handed = listening_unix(path, listening=False)
        expected = "is not listening"
    elif case == "other-path":
        handed = listening_unix(tmp_path / "elsewhere.sock")
        expected = f"listens on {tmp_path / 'elsewhere.sock'}, not on {path}"
    else:
        handed = listening_unix(path)
        count, expected = "2", "handed over 2 descriptors"
    existed = path.exists()
    high = fcntl.fcntl(handed.fileno(), fcntl.F_DUPFD, 10)
    try:
        script = (f'exec 3<&{high} {high}<&-; export LISTEN_PID={listen_pid} LISTEN_FDS={count}; '
                  'exec "$0" agent')
        r = subprocess.run(["bash", "-c", script, str(authctl_bin())], pass_fds=(high,), env=bare.env(),
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    finally:
        os.close(high)
        handed.close()
    assert r.returncode == 78, r
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert expected in r.stderr and "refuses" in r.stderr, r.stderr
    # Nothing bound over, or removed from, the place where clients look.
    assert path.exists() == existed
    assert agent_pid(bare) is None


def test_systemd_units_verify(bare, tmp_path):
    """The shipped units as systemd itself reads them (`systemd-analyze verify --user`), with
    ExecStart pointed at the binary under test (the package's is /usr/bin/authctl) and no man page
    lookup (the man page is the package's, not installed here)."""
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed (Debian: systemd)")
    for unit in ("authctl-agent.socket", "authctl-agent.service"):
        text = (UNITS / unit).read_text().replace("/usr/bin/authctl", str(authctl_bin()))
        (tmp_path / unit).write_text(text)
    assert unit_setting("authctl-agent.socket", "SocketMode") == "0600"
    assert unit_setting("authctl-agent.socket", "DirectoryMode") == "0700"
    assert unit_setting("authctl-agent.service", "Restart") == "no"
    r = subprocess.run([tool, "verify", "--user", "--man=no", str(tmp_path / "authctl-agent.socket"),
                        str(tmp_path / "authctl-agent.service")], capture_output=True, text=True, timeout=120,
                       env={**bare.env(), "XDG_RUNTIME_DIR": str(tmp_path)})
    if r.returncode != 0 and "Failed to initialize manager" in r.stderr:
        pytest.skip(f"systemd-analyze cannot run a user manager here: {r.stderr.strip()}")
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr


# ---------------------------------------------------------------------------
# The key agent's security review: a second process of the same user as the attacker
# ---------------------------------------------------------------------------

def header_of(file: bytes) -> bytes:
    end = file.index(b"\n---") + 1
    return file[:file.index(b"\n", end) + 1]


def add_fields(directory: Path, header: bytes, key: bytes, lifetime: int = 3600, idle: int = 900) -> list[bytes]:
    return [str(directory).encode(), header, key, struct.pack(">Q", lifetime), struct.pack(">Q", idle)]


def foreground_agent(cli: Cli) -> subprocess.Popen:
    """`authctl agent` started by the attacker's process (no passphrase, no unlock)."""
    proc = subprocess.Popen([str(authctl_bin()), "agent"], env=cli.env(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 20
    while agent_pid(cli) != proc.pid:
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return proc


def new_profile_signin(cli: Cli, env: dict | None = None) -> harness.Result:
    return cli.run("signin", "--username", "alice", "--password-stdin", "--store", "file", "--profile", "prod",
                   input=cli.pool.users["alice"] + "\n", env=env, timeout=180)


def test_a_header_another_process_made_never_encrypts_a_new_file(bare):
    """Item 7: a process of the same user started `authctl agent` and added, for the user's store
    directory, an age header made with its own passphrase and that header's file key; the user's
    next `signin --profile prod --store file` then wrote prod.age with it, without asking
    anything (before: the add was accepted, exit 0, prod.age opened with the attacker's
    passphrase). The agent now keeps a key only for a header one of the directory's files
    carries, so the new profile needs the passphrase (exit 78 with none, nothing written). And a
    file whose header no other file carries is not called the directory's passphrase's by
    `status` (before: "encrypted with your passphrase")."""
    from test_stores import age_parts

    signed_in_on_file(bare)
    directory = state_dir(bare)
    header, key, planted = age_parts(b'{"items":[]}', "the attacker's own passphrase", 10)
    agent = foreground_agent(bare)
    try:
        kind, fields = request(socket_path(bare), 3, add_fields(directory, header, key))
        assert kind == 0x82 and b"no file of" in fields[0], (kind, fields)
        r = new_profile_signin(bare)
        assert r.code == 78 and "authctl unlock" in r.err, r
        assert not (directory / "prod.age").exists()

        # A process that also writes the directory can plant a file carrying its header (it could
        # replace any file there): the agent then takes the key, but status does not vouch for it.
        (directory / "prod.age").write_bytes(planted)
        os.chmod(directory / "prod.age", 0o600)
        assert request(socket_path(bare), 3, add_fields(directory, header, key))[0] == 0x80
        # The user's own unlock (into the running agent) names the file their passphrase does not open.
        assert f"does not open {directory / 'prod.age'}" in unlock(bare).err
        st = bare.run("status", "--profile", "prod", "--output", "json", env=bare.env(AUTHCTL_STORE="file"))
        entry = next(p for p in json.loads(st.out)["profiles"] if p["profile"] == "prod")
        assert entry["keptIn"] and "your passphrase" not in entry["keptIn"], (entry["state"], entry["problem"])
        assert "not the one of every file there" in entry["keptIn"], entry
    finally:
        agent.kill()
        agent.wait(10)


class LyingAgent(threading.Thread):
    """A process of the same user listening where the agent does: it says it holds the header the
    directory's files carry, and seals every file with a header of its own."""

    def __init__(self, path: Path, directory: Path, held: bytes, own_file: bytes):
        super().__init__(daemon=True)
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(str(path))
        self.listener.listen(8)
        self.listener.settimeout(0.2)
        self.directory, self.held, self.own_file = directory, held, own_file
        self.stopped = False
        self.seals = 0

    def run(self) -> None:
        import hashlib
        while not self.stopped:
            try:
                connection, _ = self.listener.accept()
            except socket.timeout:
                continue
            with connection:
                connection.settimeout(5)
                data = b""
                while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                kind = data[5] if len(data) > 5 else 0
                if kind == 5:
                    fields = [struct.pack(">Q", 1), str(self.directory).encode(),
                              struct.pack(">Q", int(time.time()) + 600), hashlib.sha256(self.held).digest()]
                    answer = 0x80
                elif kind == 2:
                    self.seals += 1
                    fields, answer = [self.own_file], 0x80
                else:
                    fields, answer = [], 0x81
                body = bytes([1, answer]) + b"".join(struct.pack(">I", len(f)) + f for f in fields)
                connection.sendall(struct.pack(">I", len(body)) + body)

    def stop(self) -> None:
        self.stopped = True
        self.join(5)
        self.listener.close()


def test_the_client_checks_the_header_of_a_file_the_agent_sealed(bare):
    """Item 7, checked by the client, not by trusting the agent: whatever listens on the agent's
    socket (here a process of the same user that claims to hold the directory and seals with a
    header of its own) does not decide how a new file is encrypted. The new profile's file takes
    the header the directory's files carry, opened with the passphrase (before: the agent's file
    was written as it came, its header the attacker's)."""
    from test_stores import age_parts

    signed_in_on_file(bare)
    directory = state_dir(bare)
    own = header_of((directory / "default.age").read_bytes())
    _, _, foreign = age_parts(b'{"items":[]}', "the attacker's own passphrase", 10)
    private_socket_directory(bare)
    liar = LyingAgent(socket_path(bare), directory, own, foreign)
    liar.start()
    try:
        r = new_profile_signin(bare, env=with_passphrase(bare))
    finally:
        liar.stop()
        socket_path(bare).unlink()
    assert liar.seals >= 1, "the client asked the agent to seal"
    assert r.code == 0, r
    assert header_of((directory / "prod.age").read_bytes()) == own


def test_a_slow_client_blocks_no_one_and_an_expired_key_is_not_served(bare):
    """Item 8: a client sending one byte every 1.5 s held the agent (each read had 2 s, the request
    none) while every other client waited: a normal `token` failed; and when its request was in,
    past `--for`, it was answered with the plaintext. Now a connection has 2 s for its whole
    request, connections are served side by side, and a key's time is checked when it is used."""
    signed_in_on_file(bare)
    unlock(bare, "--for", "4s")
    body = bytes([1, 1]) + b"".join(struct.pack(">I", len(f)) + f for f in (
        str(state_dir(bare)).encode(), (state_dir(bare) / "default.age").read_bytes()))
    frame = struct.pack(">I", len(body)) + body
    answered: list[bytes] = []

    def slow() -> None:
        data = b""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(15)
            s.connect(str(socket_path(bare)))
            try:
                for byte in frame[:4]:  # 6 s for the length alone: past --for
                    s.send(bytes([byte]))
                    time.sleep(1.5)
                s.sendall(frame[4:])
                while chunk := s.recv(65536):
                    data += chunk
            except OSError:
                pass
        answered.append(data)

    client = threading.Thread(target=slow)
    client.start()
    time.sleep(0.3)
    started = time.monotonic()
    r = bare.run("token", timeout=30)
    elapsed = time.monotonic() - started
    client.join(20)
    assert r.code == 0, r
    assert elapsed < 5, f"token took {elapsed:.1f} s beside a slow client"
    assert answered and not (len(answered[0]) > 5 and answered[0][5] == 0x80), "served after --for"


def memory_holding(pid: int, needles: dict[str, bytes]) -> dict[str, list[str]]:
    """Where in the process's writable memory each needle lies: the mapping's name, `locked` when
    the mapping is mlock'ed (/proc/PID/smaps' Locked:). Read through /proc/PID/mem as root."""
    regions, current = [], None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5 and not fields[0].endswith(":"):
            start, end = (int(x, 16) for x in fields[0].split("-"))
            current = [start, end, fields[1], fields[5] if len(fields) > 5 else "[anon]", 0]
            regions.append(current)
        elif fields[0] == "Locked:" and current:
            current[4] = int(fields[1])
    found: dict[str, list[str]] = {name: [] for name in needles}
    with open(f"/proc/{pid}/mem", "rb") as mem:
        for start, end, perms, name, locked in regions:
            if not perms.startswith("rw"):
                continue
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except OSError:
                continue
            for key, needle in needles.items():
                at = data.find(needle)
                while at >= 0:
                    found[key].append(f"{name}{' locked' if locked else ''}")
                    at = data.find(needle, at + 1)
    return found


def test_the_agent_keeps_keys_and_plaintext_only_in_locked_memory_it_wipes(bare, tmp_path):
    """Item 9, read as the reviewer did (the agent's memory through /proc/PID/mem, as root): after
    `unlock`, a `token` (the agent opens the file) and a sign-in (it seals the new one), the file
    key was also in the heap, the refresh token and the start of the plaintext twice; after one
    directory's idle time ran out its key was still there. Now the key is in the locked page
    only, nothing of the plaintext is left anywhere, and an expired directory's key nowhere."""
    from test_stores import age_file_key, age_parts, age_payload

    if os.geteuid() != 0:
        pytest.skip("reading a non-dumpable process's memory needs root")
    signed_in_on_file(bare)
    unlock(bare)
    assert bare.run("token").code == 0
    assert bare.signin("alice", None, timeout=60).code == 0  # sealed by the agent: no passphrase here
    # A second store directory, one file made here with a key known here, forgotten after 2 s idle.
    second = tmp_path / "state" / "authctl"
    second.mkdir(parents=True, mode=0o700)
    _, expired_key, made = age_parts(b'{"items":[]}', PASSPHRASE, 18)
    (second / "default.age").write_bytes(made)
    os.chmod(second / "default.age", 0o600)
    other = with_passphrase(bare, XDG_STATE_HOME=str(tmp_path / "state"))
    assert bare.run("unlock", "--idle", "2s", env=other, timeout=180).code == 0
    file = (state_dir(bare) / "default.age").read_bytes()
    key = age_file_key(header_of(file), PASSPHRASE)
    plaintext = age_payload(file, len(header_of(file)), key)
    session = next(json.loads(item["secret"]) for item in json.loads(plaintext)["items"] if item["kind"] == "session")
    deadline = time.monotonic() + 20
    while len(request(socket_path(bare), 5)[1]) > 4:  # until the second directory is forgotten
        assert time.monotonic() < deadline
        time.sleep(0.2)
    found = memory_holding(agent_pid(bare), {
        "file key": key, "refresh token": session["refreshToken"].encode(), "plaintext": plaintext[:48],
        "expired key": expired_key})
    assert found["file key"] == ["[anon] locked"], found
    assert found["refresh token"] == [] and found["plaintext"] == [] and found["expired key"] == [], found


def test_lock_finds_an_agent_started_without_xdg_runtime_dir(bare):
    """Item 10: `unlock` where XDG_RUNTIME_DIR was unset (su, cron) started the agent under /tmp;
    `lock` with it set said no agent was running while that one still served the key. Item 11:
    `--idle 8s` was said as "0 min"; the on-demand agent kept the caller's directory open."""
    signed_in_on_file(bare)
    env = with_passphrase(bare)
    del env["XDG_RUNTIME_DIR"]
    r = bare.run("unlock", "--idle", "8s", env=env, timeout=180)
    assert r.code == 0 and "or 8 s without use" in r.err, r
    fallback = Path(f"/tmp/authctl-agent-{os.geteuid()}/agent.sock")
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(fallback))
        pid, _, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    r = bare.run("lock")
    assert r.code == 0 and f"The key agent on {fallback} forgot every key." in r.err, r
    assert wait_gone(pid)
    r = bare.run("lock")
    assert r.code == 0 and "No key agent was running (looked at" in r.err, r
    assert str(socket_path(bare)) in r.err and str(fallback) in r.err, r


def test_a_socket_path_too_long_is_said_at_once(bare):
    """Item 11: with a runtime directory whose socket path is over 107 bytes `unlock` derived the
    key, waited 5 s for an agent that could not listen and then said to run `authctl agent`."""
    signed_in_on_file(bare)
    runtime = home(bare) / ("r" * 100)
    runtime.mkdir(mode=0o700)
    started = time.monotonic()
    r = bare.run("unlock", env=with_passphrase(bare, XDG_RUNTIME_DIR=str(runtime)), timeout=60)
    elapsed = time.monotonic() - started
    assert r.code == 78 and "longer than 107 bytes" in r.err, r
    assert elapsed < 3, elapsed
