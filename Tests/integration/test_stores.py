"""The kernel-keyring and file stores, chosen explicitly, on a host with no Secret
Service at all (no D-Bus: the `nobus` keyring mode gives a HOME and nothing else).

Real components: the kernel's key retention service (inspected with `keyctl`), the real `age`
binary (driven through a pty with pexpect, since it reads passphrases from the terminal), the
fake Cognito in front of moto. File-store unlocks cost one scrypt at age's default work factor
each, so these tests keep their number modest.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import time
import tomllib
from pathlib import Path

import pexpect
import pytest

from harness import Cli, authctl_bin

PASSPHRASE = "correct horse battery staple"
PROCESSES = 20


@pytest.fixture
def bare(pool, keyrings, fake) -> Cli:
    """authctl with its own HOME and no session bus: no Secret Service can exist."""
    return Cli(pool, keyrings("nobus", "bare"), fake.endpoint)


def home(cli: Cli) -> Path:
    return Path(cli.keyring.env["HOME"])


def state_dir(cli: Cli) -> Path:
    return home(cli) / ".local" / "state" / "authctl"


def config(cli: Cli) -> dict:
    path = home(cli) / ".config" / "authctl" / "config.toml"
    return tomllib.loads(path.read_text()) if path.exists() else {}


def recorded_store(cli: Cli, profile: str = "default") -> str | None:
    return config(cli).get("profiles", {}).get(profile, {}).get("store")


def passphrase_file(cli: Cli, text: str = PASSPHRASE) -> str:
    path = home(cli) / "passphrase"
    path.write_text(text + "\n")
    os.chmod(path, 0o600)
    return str(path)


# -- the kernel keyring, as keyctl sees it -------------------------------------------------------

def keyctl(*args: str) -> str:
    r = subprocess.run(["keyctl", *args], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, (args, r.stderr)
    return r.stdout.strip()


def namespace(cli: Cli) -> str:
    """authctl's namespace: FNV-1a 64 of the configuration directory (StoreLocations)."""
    h = 0xcbf29ce484222325
    for b in str(home(cli) / ".config" / "authctl").encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def kernel_items(cli: Cli) -> dict[str, dict]:
    """description -> payload of this HOME's keys in the persistent keyring."""
    ring = keyctl("get_persistent", "@s")
    prefix = f"authctl:{namespace(cli)}:"
    items = {}
    for key in keyctl("rlist", ring).split():
        described = subprocess.run(["keyctl", "rdescribe", key], capture_output=True, text=True).stdout.strip()
        fields = described.split(";", 4)
        if len(fields) == 5 and fields[0] == "user" and fields[4].startswith(prefix):
            items[fields[4][len(prefix):]] = {**json.loads(keyctl("pipe", key)), "_id": key}
    return items


def expire_kernel_session(cli: Cli) -> dict:
    """Rewrites the session key's payload with keyctl: its access token expired 10 minutes ago."""
    item = kernel_items(cli)["session:default"]
    key = item.pop("_id")
    session = json.loads(item["secret"])
    session["accessTokenExpiresAt"] = "2001-01-01T00:00:00Z"
    item["secret"] = json.dumps(session)
    r = subprocess.run(["keyctl", "pupdate", key], input=json.dumps(item), capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r.stderr
    return session


# -- the file, as age sees it --------------------------------------------------------------------

def age_decrypt(path: Path, passphrase: str = PASSPHRASE) -> dict:
    child = pexpect.spawn("age", ["-d", str(path)], timeout=30, encoding="utf-8")
    child.expect("passphrase")
    child.sendline(passphrase)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    text = child.before
    return json.loads(text[text.index("{"):])


def age_encrypt(plaintext: str, path: Path, passphrase: str = PASSPHRASE) -> None:
    source = path.with_suffix(".plain")
    source.write_text(plaintext)
    child = pexpect.spawn("age", ["-p", "-o", str(path) + ".new", str(source)], timeout=30, encoding="utf-8")
    child.expect("passphrase")
    child.sendline(passphrase)
    child.expect("passphrase")
    child.sendline(passphrase)
    child.expect(pexpect.EOF)
    child.close()
    source.unlink()
    assert child.exitstatus == 0, child.before
    os.chmod(str(path) + ".new", 0o600)
    os.rename(str(path) + ".new", path)


def start_together(cli: Cli, env: dict, *args: str) -> list[tuple[int, str, str]]:
    procs = [subprocess.Popen([str(authctl_bin()), "token", *args], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=env["HOME"], start_new_session=True)
             for _ in range(PROCESSES)]
    results = []
    deadline = time.monotonic() + 120
    for p in procs:
        out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        results.append((p.returncode, out.decode(), err.decode()))
    return results


def refreshes_and_signins(fake, mark, cli) -> tuple[int, int]:
    calls = fake.calls(mark, client_ids=[cli.client_id])
    refresh = [c for c in calls if c["operation"] == "InitiateAuth" and c.get("authFlow") in ("REFRESH_TOKEN_AUTH", "REFRESH_TOKEN")]
    signin = [c for c in calls if c["operation"] == "InitiateAuth" and c not in refresh]
    return len(refresh), len(signin)


# -- kernel-keyring --------------------------------------------------------------------------------

def test_kernel_keyring_signin_race_signout_without_a_bus(bare, fake):
    r = bare.signin("alice", None, "--store", "kernel-keyring")
    assert r.code == 0, r
    items = kernel_items(bare)
    assert "session:default" in items, items
    session = json.loads(items["session:default"]["secret"])
    assert session["username"] == "alice"
    # Pinned on success: later commands need no --store.
    assert recorded_store(bare) == "kernel-keyring"

    # 20 token calls on an expired session (rewritten with keyctl): exactly one refresh, no
    # sign-in, every process prints the same new token.
    expire_kernel_session(bare)
    mark = fake.mark()
    results = start_together(bare, bare.env())
    assert all(code == 0 for code, _, _ in results), [e for c, _, e in results if c][:2]
    assert refreshes_and_signins(fake, mark, bare) == (1, 0)
    tokens = {out.strip() for _, out, _ in results}
    assert len(tokens) == 1 and tokens != {session["accessToken"]}
    assert json.loads(kernel_items(bare)["session:default"]["secret"])["accessToken"] in tokens

    st = bare.run("status", "--output", "json")
    assert st.code == 0, st
    entry = st.json()["profiles"][0]
    assert entry["store"] == "kernel-keyring" and "lost at reboot" in entry["keptIn"], entry
    text = bare.run("status")
    assert "kernel memory, lost at reboot, removed after" in text.out, text

    r = bare.run("signout")
    assert r.code == 0, r
    assert "session:default" not in kernel_items(bare)


def test_two_homes_side_by_side_on_the_kernel_keyring(pool, keyrings, fake):
    one = Cli(pool, keyrings("nobus", "one"), fake.endpoint)
    two = Cli(pool, keyrings("nobus", "two"), fake.endpoint)
    assert one.signin("alice", None, "--store", "kernel-keyring").code == 0
    assert namespace(one) != namespace(two)
    assert "session:default" in kernel_items(one) and kernel_items(two) == {}
    r = two.run("token", "--store", "kernel-keyring")
    assert r.code == 77 and "not signed in" in r.err.lower(), r
    assert two.signin("alice", None, "--store", "kernel-keyring").code == 0
    assert one.run("signout").code == 0
    assert "session:default" in kernel_items(two) and "session:default" not in kernel_items(one)
    assert two.run("token").code == 0


# -- file -----------------------------------------------------------------------------------------

def test_file_store_age_race_wrong_passphrase_signout(bare, fake):
    env = bare.env(AUTHCTL_STORE_PASSPHRASE_FILE=passphrase_file(bare))
    r = bare.signin("alice", None, "--store", "file", env=env)
    assert r.code == 0, r
    path = state_dir(bare) / "default.age"
    assert path.exists() and os.stat(path).st_mode & 0o777 == 0o600
    assert os.stat(state_dir(bare)).st_mode & 0o777 == 0o700
    assert recorded_store(bare) == "file"
    assert b"alice" not in path.read_bytes()

    # The real age opens it, and what age encrypts authctl reads: an access token made to
    # expire by hand, through age.
    document = age_decrypt(path)
    stored = next(i for i in document["items"] if i["kind"] == "session")
    session = json.loads(stored["secret"])
    session["accessTokenExpiresAt"] = "2001-01-01T00:00:00Z"
    stored["secret"] = json.dumps(session)
    age_encrypt(json.dumps(document), path)

    mark = fake.mark()
    results = start_together(bare, env)
    assert all(code == 0 for code, _, _ in results), [e for c, _, e in results if c][:2]
    assert refreshes_and_signins(fake, mark, bare) == (1, 0)
    assert len({out for _, out, _ in results}) == 1

    # Wrong passphrase: exit 77, the file untouched.
    before = path.read_bytes()
    wrong = bare.run("token", env=bare.env(AUTHCTL_STORE_PASSPHRASE="not it"))
    assert wrong.code == 77, wrong
    assert "passphrase" in wrong.err, wrong
    assert path.read_bytes() == before

    # --passphrase-fd: the passphrase from a pipe, nowhere in argv or the environment.
    read_end, write_end = os.pipe()
    os.write(write_end, (PASSPHRASE + "\n").encode())
    os.close(write_end)
    proc = subprocess.run([str(authctl_bin()), "signout", "--passphrase-fd", str(read_end)], env=bare.env(),
                          pass_fds=(read_end,), capture_output=True, text=True, timeout=60, cwd=env["HOME"])
    os.close(read_end)
    assert proc.returncode == 0, proc.stderr
    # The last item gone, the file goes too (or holds no session).
    assert not path.exists() or "session" not in [i["kind"] for i in age_decrypt(path)["items"]]


def test_corrupted_file_is_refused_and_left_alone(bare):
    env = bare.env(AUTHCTL_STORE_PASSPHRASE=PASSPHRASE)
    assert bare.signin("alice", None, "--store", "file", env=env).code == 0
    path = state_dir(bare) / "default.age"
    data = path.read_bytes()
    damaged = data[:-20]
    path.write_bytes(damaged)
    r = bare.run("token", env=env)
    assert r.code == 78, r
    assert str(path) in r.err or "corrupt" in r.err.lower() or "damaged" in r.err.lower(), r
    assert path.read_bytes() == damaged


def test_no_passphrase_is_exit_78_naming_the_other_stores(bare):
    # Nothing to read without a file; keeping the session needs the passphrase.
    r = bare.signin("alice", None, "--store", "file")
    assert r.code == 78, r
    assert "passphrase" in r.err and "--store kernel-keyring" in r.err and "--store secret-service" in r.err, r
    assert recorded_store(bare) is None


# -- pinning, migration, doctor --------------------------------------------------------------------

def test_pinned_store_mismatch_then_migrate_interrupted_and_resumed(bare):
    env = bare.env(AUTHCTL_STORE_PASSPHRASE=PASSPHRASE)
    assert bare.signin("alice", None, "--store", "file", env=env).code == 0
    path = state_dir(bare) / "default.age"

    # Another store named: refused, saying where the items are and how to move them.
    r = bare.run("token", env={**env, "AUTHCTL_STORE": "kernel-keyring"})
    assert r.code == 78, r
    assert "file" in r.err and "authctl store migrate --to kernel-keyring" in r.err, r
    assert kernel_items(bare) == {}

    # Interrupted: the old file's lock is held, so the migration stops at its first delete,
    # after copying, reading back and recording; then it is killed.
    lock = open(state_dir(bare) / "default.lock", "a+")
    fcntl.flock(lock, fcntl.LOCK_EX)
    proc = subprocess.Popen([str(authctl_bin()), "store", "migrate", "--to", "kernel-keyring"], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=env["HOME"], start_new_session=True)
    deadline = time.monotonic() + 60
    while config(bare).get("profiles", {}).get("default", {}).get("store_migrating_from") != "file":
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()
    assert "session:default" in kernel_items(bare)
    assert "session" in [i["kind"] for i in age_decrypt(path)["items"]], "the old copy is still there"
    assert recorded_store(bare) == "kernel-keyring"

    # The profile already works from its new store; running migrate again finishes the job.
    assert bare.run("token", env=env).code == 0
    r = bare.run("store", "migrate", "--to", "kernel-keyring", env=env)
    assert r.code == 0, r
    assert "interrupted" in r.err, r
    assert age_decrypt(path)["items"] == [] if path.exists() else True
    assert "store_migrating_from" not in config(bare)["profiles"]["default"]
    assert bare.run("token").code == 0


def test_doctor_on_a_host_with_no_bus(bare):
    r = bare.run("store", "doctor", "--output", "json")
    assert r.code == 78, r  # the profile's store (the default, secret-service) cannot work here
    stores = {s["store"]: s for s in r.json()["stores"]}
    assert not stores["secret-service"]["usable"] and "D-Bus" in stores["secret-service"]["detail"]
    assert "GNOME_KEYRING_CONTROL" in stores["secret-service"]["detail"]
    assert stores["kernel-keyring"]["usable"], stores
    assert not stores["file"]["usable"] and "passphrase" in stores["file"]["detail"], stores
    r = bare.run("store", "doctor", "--store", "kernel-keyring")
    assert r.code == 0, r
    assert "* kernel-keyring  usable" in r.out, r


def test_passphrase_fd_0_to_2_never_reaches_execs_command(bare):
    """`printf 'pass\\n' | authctl exec --passphrase-fd 0 -- sh -c cat` printed
    the passphrase (a kernel-keyring profile never read the descriptor, and stdin is the command's).
    --passphrase-fd 0, 1 or 2 with exec is refused (exit 64) before anything runs."""
    assert bare.signin("alice", None, "--store", "kernel-keyring").code == 0
    for fd in ("0", "1", "2"):
        r = bare.run("exec", "--passphrase-fd", fd, "--", "sh", "-c", "cat; echo ran", input=PASSPHRASE + "\n")
        assert PASSPHRASE not in r.out and "ran" not in r.out, r
        assert r.code == 64 and "--passphrase-fd" in r.err, r


def test_a_stale_migration_note_never_deletes_what_the_target_lacks(bare):
    """With `store = "file"` and `store_migrating_from = "kernel-keyring"`
    edited into config.toml (a stale or hostile note), `store migrate --to file` said it finished an
    interrupted move and deleted the keyring's items; nothing had been copied. Now an item absent
    from the target is copied there (and read back) before its old copy is removed."""
    env = bare.env(AUTHCTL_STORE_PASSPHRASE=PASSPHRASE)
    assert bare.signin("alice", None, "--store", "kernel-keyring").code == 0
    session = json.loads(kernel_items(bare)["session:default"]["secret"])
    path = home(bare) / ".config" / "authctl" / "config.toml"
    text = path.read_text().replace('store = "kernel-keyring"', 'store = "file"\nstore_migrating_from = "kernel-keyring"')
    path.write_text(text)
    assert config(bare)["profiles"]["default"]["store_migrating_from"] == "kernel-keyring", text
    r = bare.run("store", "migrate", "--to", "file", env=env)
    assert r.code == 0, r
    items = age_decrypt(state_dir(bare) / "default.age")["items"] if (state_dir(bare) / "default.age").exists() else []
    assert "session" in [i["kind"] for i in items], (r, items)
    assert "session:default" not in kernel_items(bare)
    t = bare.run("token", env=env)
    assert t.code == 0 and t.out.strip() == session["accessToken"], t


# -- Hostile and weak age files ------------------------------------------------

def _b64(data: bytes) -> str:
    import base64
    return base64.b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    import base64
    return base64.b64decode(text + "=" * (-len(text) % 4))


def _age_header(salt: bytes, work_factor: int, body: bytes, file_key: bytes | None) -> bytes:
    """An age v1 header with one scrypt stanza; its MAC from `file_key` (random bytes when None:
    a header whose MAC no passphrase can check, as a planted file's)."""
    import hashlib
    import hmac as _hmac
    import secrets
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    text = f"age-encryption.org/v1\n-> scrypt {_b64(salt)} {work_factor}\n{_b64(body)}\n---".encode()
    if file_key is None:
        mac = secrets.token_bytes(32)
    else:
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"", info=b"header").derive(file_key)
        mac = _hmac.new(key, text, hashlib.sha256).digest()
    return text + b" " + _b64(mac).encode() + b"\n"


def age_encrypt_at(plaintext: bytes, passphrase: str, work_factor: int) -> bytes:
    """What `age -p` writes, at any work factor (age's CLI has no option for it): scrypt wraps a
    random file key, HKDF-SHA-256 and ChaCha20-Poly1305 STREAM chunks carry the payload."""
    return age_parts(plaintext, passphrase, work_factor)[2]


def age_parts(plaintext: bytes, passphrase: str, work_factor: int) -> tuple[bytes, bytes, bytes]:
    """`age_encrypt_at`'s file with its header and file key: (header, file key, file)."""
    import secrets
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

    file_key, salt = secrets.token_bytes(16), secrets.token_bytes(16)
    wrap = Scrypt(salt=b"age-encryption.org/v1/scrypt" + salt, length=32, n=1 << work_factor, r=8, p=1).derive(
        passphrase.encode())
    body = ChaCha20Poly1305(wrap).encrypt(b"\0" * 12, file_key, None)
    nonce = secrets.token_bytes(16)
    payload_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=nonce, info=b"payload").derive(file_key)
    chunks = [plaintext[i:i + 65536] for i in range(0, max(len(plaintext), 1), 65536)] or [b""]
    out = b""
    for index, chunk in enumerate(chunks):
        last = index == len(chunks) - 1
        out += ChaCha20Poly1305(payload_key).encrypt(index.to_bytes(11, "big") + (b"\1" if last else b"\0"), chunk, None)
    header = _age_header(salt, work_factor, body, file_key)
    return header, file_key, header + nonce + out


def age_payload(file: bytes, header_length: int, file_key: bytes) -> bytes:
    """The plaintext of an age file whose file key is known (no passphrase, no scrypt)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    nonce, sealed = file[header_length:header_length + 16], file[header_length + 16:]
    payload_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=nonce, info=b"payload").derive(file_key)
    chunks = [sealed[i:i + 65536 + 16] for i in range(0, len(sealed), 65536 + 16)]
    return b"".join(ChaCha20Poly1305(payload_key).decrypt(index.to_bytes(11, "big") + (b"\1" if index == len(chunks) - 1 else b"\0"), chunk, None)
                    for index, chunk in enumerate(chunks))


def age_file_key(header: bytes, passphrase: str) -> bytes:
    """The file key a scrypt header wraps, unwrapped with `passphrase` (as `age -d` does)."""
    import base64
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
    from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

    def b64(text: bytes) -> bytes:
        return base64.b64decode(text + b"=" * (-len(text) % 4))

    lines = header.split(b"\n")
    _, _, salt, work_factor = lines[1].split()
    wrap = Scrypt(salt=b"age-encryption.org/v1/scrypt" + b64(salt), length=32, n=1 << int(work_factor), r=8,
                  p=1).derive(passphrase.encode())
    return ChaCha20Poly1305(wrap).decrypt(b"\0" * 12, b64(lines[2]), None)


def work_factor_of(path: Path) -> int:
    return int(path.read_bytes().split(b"\n")[1].split()[-1])


def test_a_planted_header_with_a_huge_work_factor_is_refused_at_once(bare):
    """A valid header asking for scrypt at 2^22 made `token` use 4.2 GB and ~18 s before its MAC
    could refuse it (and --timeout did not bound it). Work factors above 2^19 are refused unread."""
    import resource
    import secrets
    env = bare.env(AUTHCTL_STORE_PASSPHRASE=PASSPHRASE, AUTHCTL_STORE="file")
    directory = state_dir(bare)
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    planted = directory / "default.age"
    planted.write_bytes(_age_header(secrets.token_bytes(16), 22, secrets.token_bytes(32), None) + secrets.token_bytes(64))
    planted.chmod(0o600)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.monotonic()
    r = bare.run("token", "--timeout", "5", env=env, timeout=120)
    elapsed = time.monotonic() - started
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert elapsed < 4 and (peak_kib <= before or peak_kib < 600 * 1024), (elapsed, peak_kib, r)
    assert r.code != 0 and "work factor" in r.err and "2^19" in r.err, r


def test_a_weak_file_is_rekeyed_when_rewritten(bare):
    """A file wrapped at work factor 4 was read and kept at 4 on every rewrite; it is still read
    (it opens with the passphrase) and the next write re-keys it at the store's 2^18."""
    env = bare.env(AUTHCTL_STORE_PASSPHRASE=PASSPHRASE)
    assert bare.signin("alice", None, "--store", "file", env=env).code == 0
    path = state_dir(bare) / "default.age"
    document = age_decrypt(path)
    path.write_bytes(age_encrypt_at(json.dumps(document).encode(), PASSPHRASE, 4))
    assert work_factor_of(path) == 4
    assert age_decrypt(path) == document  # the real age reads what the helper wrote
    r = bare.run("token", "--min-valid", "3700", env=env)  # a refresh: the file is rewritten
    assert r.code == 0, r
    assert work_factor_of(path) == 18, path.read_bytes()[:80]


def test_reads_check_the_directory_and_file_as_writes_do(bare):
    """A file in a directory others can enter, or open to others itself, was read (the checks ran
    on writes only): a file planted in a shared XDG_STATE_HOME was used. Reads refuse it now."""
    env = bare.env(AUTHCTL_STORE_PASSPHRASE=PASSPHRASE)
    assert bare.signin("alice", None, "--store", "file", env=env).code == 0
    path = state_dir(bare) / "default.age"
    path.chmod(0o644)
    r = bare.run("token", env=env)
    assert r.code == 78 and "open to group or other" in r.err, r
    path.chmod(0o600)
    state_dir(bare).chmod(0o755)
    r = bare.run("token", env=env)
    assert r.code == 78 and "open to group or other" in r.err, r
    state_dir(bare).chmod(0o700)
    assert bare.run("token", env=env).code == 0


def test_a_stale_temporary_file_is_removed_by_the_next_write(bare):
    """A writer killed mid-write left `<profile>.age.tmp-*` behind for good; the next write of the
    profile (under its lock, so no writer has one in flight) removes it."""
    env = bare.env(AUTHCTL_STORE_PASSPHRASE=PASSPHRASE)
    assert bare.signin("alice", None, "--store", "file", env=env).code == 0
    stale = state_dir(bare) / "default.age.tmp-4242-AbCdEfGh"
    stale.write_bytes(b"half a file")
    other = state_dir(bare) / "other.age.tmp-4242-AbCdEfGh"
    other.write_bytes(b"another profile's")
    assert bare.run("token", "--min-valid", "3700", env=env).code == 0
    assert not stale.exists() and other.exists()


def test_a_passphrase_file_others_can_read_is_said(bare):
    """A passphrase file readable by others was used silently. It is still
    used (refusing would break jobs), with a warning, and `store doctor` reports it."""
    path = passphrase_file(bare)
    os.chmod(path, 0o644)
    env = bare.env(AUTHCTL_STORE_PASSPHRASE_FILE=path)
    r = bare.signin("alice", None, "--store", "file", env=env)
    assert r.code == 0 and "can be read by other users" in r.err and "chmod 600" in r.err, r
    d = bare.run("store", "doctor", env=env)
    assert "can be read by other users" in d.out + d.err, d
    os.chmod(path, 0o600)
    r = bare.run("token", "--min-valid", "3700", env=env)
    assert r.code == 0 and "other users" not in r.err, r
