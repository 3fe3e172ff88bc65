"""The portable release, as `make test-portable` builds it: the release binary's NEEDED
list and glibc floor, the tarball and SHA256SUMS of `make dist`, the RPM of `make rpm` (rpmlint),
`make install`'s files, and the tarball unpacked and run in a Debian 11 root (glibc 2.31, libcurl
7.74, OpenSSL 1.1; no libfido2, no libqrencode) against the emulator on loopback.

The root is the one the release build links against (Tests/support/make-bullseye-root.sh, kept
under the build directory); the test unpacks the tarball in a directory of its own inside it and
removes it afterwards. Each command runs in `unshare --mount --mount-proc` + `chroot`: /proc is
mounted in a private mount namespace (the Swift runtime reads its arguments from
/proc/self/cmdline) and disappears with the command. The network is the host's: the emulator on
127.0.0.1 is reached as any server would be.

Needs what `make test-portable` passes: AUTHCTL_PORTABLE_BIN (the release binary), AUTHCTL_DIST_DIR,
AUTHCTL_DEB_DIR, AUTHCTL_INSTALLED, AUTHCTL_BULLSEYE_ROOT. Without them (`make test`, which has only
the debug build) the file is skipped, saying so.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tarfile
import uuid
from pathlib import Path

import pytest

from harness import REPO, base_env
from local_servers import serve_tls_refusal, stop
from test_passwordless import allow_first_factors

PORTABLE_BIN = os.environ.get("AUTHCTL_PORTABLE_BIN")
pytestmark = pytest.mark.skipif(not PORTABLE_BIN, reason="no portable release build: `make test-portable` "
                                "builds it and runs this file")

# The C runtime, which every Linux host has: all the binary may link.
C_RUNTIME = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libstdc++.so.6",
             "libgcc_s.so.1", "ld-linux-x86-64.so.2", "libutil.so.1"}
GLIBC_FLOOR = (2, 31)


def env_path(name: str) -> Path:
    value = os.environ.get(name)
    assert value, f"{name} is not set (make test-portable sets it)"
    return Path(value)


def version() -> str:
    return subprocess.run([PORTABLE_BIN, "--version"], capture_output=True, text=True, check=True).stdout.strip()


def needed(binary: str | Path) -> set[str]:
    out = subprocess.run(["objdump", "-p", str(binary)], capture_output=True, text=True, check=True).stdout
    return {line.split()[1] for line in out.splitlines() if line.strip().startswith("NEEDED")}


def glibc_versions(binary: str | Path) -> set[tuple[int, ...]]:
    out = subprocess.run(["objdump", "-T", str(binary)], capture_output=True, text=True, check=True).stdout
    return {tuple(int(part) for part in v.split(".")) for v in re.findall(r"GLIBC_([0-9][0-9.]*)", out)}


def arch() -> str:
    return os.uname().machine


def tarball() -> Path:
    return env_path("AUTHCTL_DIST_DIR") / f"authctl-{version()}-linux-{arch()}.tar.gz"


def rpm_file() -> Path:
    return env_path("AUTHCTL_DIST_DIR") / f"authctl-{version()}-1.{arch()}.rpm"


# -- the binary ----------------------------------------------------------------------------------

def test_needed_is_only_the_c_runtime():
    libraries = needed(PORTABLE_BIN)
    assert libraries and libraries <= C_RUNTIME, sorted(libraries - C_RUNTIME)


def test_asks_for_no_glibc_above_the_floor():
    versions = glibc_versions(PORTABLE_BIN)
    assert versions, "objdump -T shows no GLIBC_ symbol version: not a dynamically linked glibc binary?"
    assert max(versions) <= GLIBC_FLOOR, f"needs GLIBC_{'.'.join(map(str, max(versions)))}"


def test_no_string_names_the_build_directory(tmp_path):
    """The compilers' paths (#file in Swift's messages, __FILE__ in BoringSSL's and the shims', debug
    info) are mapped to `.`: a binary naming where it was built differs from a build elsewhere.
    `make repro-check` builds twice in two directories and compares the bytes; this is its cheap half."""
    [deb] = env_path("AUTHCTL_DEB_DIR").glob(f"authctl_{version()}_*.deb")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp_path)], check=True)
    build_dir = str(REPO).encode()
    for binary in (Path(PORTABLE_BIN), tmp_path / "usr/bin/authctl"):
        data = binary.read_bytes()
        named = sorted({data[i:i + 160].split(b"\0")[0] for i in _find_all(data, build_dir)})[:5]
        assert not named, f"{binary} names the build directory {REPO}: {named}"


def test_the_shipped_binary_carries_no_stamp_of_where_it_was_built(tmp_path):
    """What is left once the paths are mapped: swiftc's per-object IR hash (.swift_modhash, read
    only by incremental builds), which differs between two directories, and the linker's build-id,
    a hash over the whole file. release-files.sh zeroes the first and recomputes the second over the
    result, so two builds of one commit in two directories ship the same bytes (make repro-check)."""
    import hashlib
    [deb] = env_path("AUTHCTL_DEB_DIR").glob(f"authctl_{version()}_*.deb")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp_path)], check=True)
    binary = tmp_path / "usr/bin/authctl"
    stamp = tmp_path / "stamp"
    subprocess.run(["objcopy", "-O", "binary", "--only-section=.swift_modhash", str(binary), str(stamp)], check=True)
    assert stamp.stat().st_size > 0 and set(stamp.read_bytes()) == {0}, "the IR hashes are still in the binary"
    notes = subprocess.run(["readelf", "-n", str(binary)], capture_output=True, text=True, check=True).stdout
    build_id = notes.split("Build ID:", 1)[1].split()[0]
    data = bytearray(binary.read_bytes())
    at = data.find(bytes.fromhex(build_id))
    data[at:at + 20] = bytes(20)
    assert hashlib.sha1(bytes(data)).hexdigest() == build_id, "the build-id is not the hash of the shipped bytes"


def _find_all(data: bytes, needle: bytes) -> list[int]:
    found, at = [], data.find(needle)
    while at != -1:
        found.append(at)
        at = data.find(needle, at + 1)
    return found


# -- make dist -----------------------------------------------------------------------------------

def test_tarball_holds_the_binary_page_completions_and_notes():
    name = f"authctl-{version()}-linux-{arch()}"
    with tarfile.open(tarball()) as archive:
        members = {m.name: m for m in archive.getmembers()}
        mtimes = {m.mtime for m in members.values()}
        binary = archive.extractfile(f"{name}/bin/authctl").read()
        service = archive.extractfile(f"{name}/share/systemd/user/authctl-agent.service").read().decode()
    expected = {"bin/authctl": 0o755, "share/man/man1/authctl.1": 0o644,
                "share/bash-completion/completions/authctl": 0o644, "share/zsh/site-functions/_authctl": 0o644,
                "share/fish/vendor_completions.d/authctl.fish": 0o644, "README.md": 0o644, "copyright": 0o644,
                "INSTALL": 0o644, "share/systemd/user/authctl-agent.socket": 0o644,
                "share/systemd/user/authctl-agent.service": 0o644}
    for path, mode in expected.items():
        member = members[f"{name}/{path}"]
        assert member.isfile() and member.mode == mode, (path, oct(member.mode))
    assert all(m.name == name or m.name.startswith(name + "/") for m in members.values()), list(members)
    assert all((m.uid, m.gid, m.uname, m.gname) == (0, 0, "", "") for m in members.values())
    assert len(mtimes) == 1, mtimes
    assert list(members) == sorted(members), "entries not sorted by name"
    assert b".symtab" not in binary, "the binary is not stripped"
    # Where INSTALL unpacks it (and says how to point the unit elsewhere).
    assert "ExecStart=/usr/local/bin/authctl agent" in service.splitlines()


def test_sha256sums_checks_the_tarball_and_the_rpm():
    dist = env_path("AUTHCTL_DIST_DIR")
    lines = (dist / "SHA256SUMS").read_text().splitlines()
    named = {line.split()[1]: line.split()[0] for line in lines}
    assert set(named) == {tarball().name, rpm_file().name}, named
    for name, digest in named.items():
        assert hashlib.sha256((dist / name).read_bytes()).hexdigest() == digest, name
    r = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=dist, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def rebuild(script: str, out: Path) -> Path:
    """The same binary packaged again, as `make dist` / `make rpm` did (the commit's time)."""
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    r = subprocess.run(["bash", str(REPO / "Tests/support" / script), PORTABLE_BIN, str(out)], cwd=REPO,
                       capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return Path(r.stdout.strip().splitlines()[-1])


def test_dist_and_rpm_are_byte_identical_when_built_again(tmp_path):
    again = rebuild("make-dist.sh", tmp_path)
    assert again.read_bytes() == tarball().read_bytes(), "the tarball differs when built again"
    again = rebuild("make-rpm.sh", tmp_path)
    assert again.read_bytes() == rpm_file().read_bytes(), "the RPM differs when built again"
    assert (tmp_path / "SHA256SUMS").read_text() == (env_path("AUTHCTL_DIST_DIR") / "SHA256SUMS").read_text()


# -- make rpm ------------------------------------------------------------------------------------

def rpm_query(*args: str) -> str:
    return subprocess.run(["rpm", "-qp", *args, str(rpm_file())], capture_output=True, text=True,
                          check=True).stdout


def test_rpm_requires_libcurl_and_recommends_the_optional_libraries():
    requires = rpm_query("--requires").splitlines()
    assert "libcurl.so.4()(64bit)" in requires, requires
    libraries = [r for r in requires if ".so" in r and not r.startswith("rtld(")]
    assert all(r.split("(")[0] in C_RUNTIME | {"libcurl.so.4"} for r in libraries), libraries
    glibc = [tuple(map(int, v.split("."))) for v in re.findall(r"GLIBC_([0-9][0-9.]*)", "\n".join(requires))]
    assert glibc and max(glibc) <= GLIBC_FLOOR, requires
    recommends = set(rpm_query("--recommends").splitlines())
    assert recommends == {"libsecret-1.so.0()(64bit)", "libfido2.so.1()(64bit)", "libqrencode.so.4()(64bit)"}
    assert rpm_query("--qf", "%{VERSION}-%{RELEASE} %{ARCH}") == f"{version()}-1 {arch()}"


def test_rpm_files_and_modes_are_the_debs():
    """The .deb's files, but zsh's completion in site-functions (Fedora's and RHEL's fpath; the .deb
    puts it in vendor-completions, where Debian's zsh looks)."""
    listing = rpm_query("--qf", "[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILENAMES}\n]")
    entries = {line.split()[2]: (line.split()[0], line.split()[1]) for line in listing.splitlines()}
    assert entries["/usr/bin/authctl"] == ("-rwxr-xr-x", "root:root")
    for path in ["/usr/share/man/man1/authctl.1.gz", "/usr/share/bash-completion/completions/authctl",
                 "/usr/share/zsh/site-functions/_authctl", "/usr/share/fish/vendor_completions.d/authctl.fish",
                 "/usr/share/doc/authctl/copyright", "/usr/share/doc/authctl/README.md",
                 "/usr/share/doc/authctl/docs/cli.md", "/usr/lib/systemd/user/authctl-agent.socket",
                 "/usr/lib/systemd/user/authctl-agent.service"]:
        assert entries[path] == ("-rw-r--r--", "root:root"), path
    assert all(owner == "root:root" for _, owner in entries.values())


def test_rpmlint_reports_no_errors():
    """With Fedora's settings where they differ from rpmlint's built-in ones (Packaging/rpmlint.toml)."""
    r = subprocess.run(["rpmlint", "-c", str(REPO / "Packaging/rpmlint.toml"), str(rpm_file())],
                       capture_output=True, text=True, timeout=600)
    summary = re.search(r"(\d+) errors?, (\d+) warnings?", r.stdout)
    assert summary, r.stdout + r.stderr
    assert summary.group(1) == "0", r.stdout
    # The warnings left, each justified in docs/cli.md ("Building the release").
    warnings = {line.split(": W: ")[1].split()[0] for line in r.stdout.splitlines() if ": W: " in line}
    assert warnings <= {"invalid-license", "no-url-tag", "no-manual-page-for-binary"}, r.stdout


# -- make deb, make install ----------------------------------------------------------------------

def test_make_deb_and_make_install_ship_the_release_binary(tmp_path):
    [deb] = env_path("AUTHCTL_DEB_DIR").glob(f"authctl_{version()}_*.deb")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp_path)], check=True)
    assert needed(tmp_path / "usr/bin/authctl") <= C_RUNTIME
    depends = subprocess.run(["dpkg-deb", "-f", str(deb), "Depends"], capture_output=True, text=True,
                             check=True).stdout
    floor = re.search(r"libc6 \(>= 2\.(\d+)\)", depends)
    assert floor and int(floor.group(1)) <= GLIBC_FLOOR[1] and "libssl3 | libssl1.1" in depends, depends
    installed = env_path("AUTHCTL_INSTALLED")
    assert (installed / "bin/authctl").read_bytes() == Path(PORTABLE_BIN).read_bytes()
    assert (installed / "share/man/man1/authctl.1").stat().st_size > 0
    assert (installed / "share/bash-completion/completions/authctl").stat().st_size > 0
    # make install's units start the binary it installed (PREFIX=/usr/local).
    service = (installed / "share/systemd/user/authctl-agent.service").read_text().splitlines()
    assert "ExecStart=/usr/local/bin/authctl agent" in service
    assert (installed / "share/systemd/user/authctl-agent.socket").stat().st_size > 0


# -- in Debian 11 --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bullseye() -> Path:
    """The Debian 11 root, made here when `make test-portable` has not made it yet."""
    if os.geteuid() != 0:
        pytest.skip("chroot and debootstrap need root")
    root = env_path("AUTHCTL_BULLSEYE_ROOT")
    r = subprocess.run(["bash", str(REPO / "Tests/support/make-bullseye-root.sh"), str(root)],
                       capture_output=True, text=True, timeout=1800)
    if r.returncode == 75:
        pytest.skip(f"debootstrap cannot reach the Debian archive: {r.stderr.strip()[-500:]}")
    assert r.returncode == 0, r.stderr[-3000:]
    return root


@pytest.fixture(scope="module")
def unpacked(bullseye: Path):
    """The tarball unpacked in a directory of the root's own: its path inside the root."""
    inside = Path("/opt") / f"authctl-test-{uuid.uuid4().hex[:8]}"
    target = bullseye / inside.relative_to("/")
    target.mkdir(parents=True)
    subprocess.run(["tar", "-xzf", str(tarball()), "-C", str(target), "--strip-components=1"], check=True)
    yield inside
    shutil.rmtree(target, ignore_errors=True)


class Bullseye:
    def __init__(self, root: Path, prefix: Path, env: dict[str, str]):
        self.root, self.prefix, self.base = root, prefix, env

    def run(self, *args: str, input: str | None = None, proc: bool = True, **extra: str) -> subprocess.CompletedProcess:
        private_proc = ["unshare", "--mount", f"--mount-proc={self.root / 'proc'}"] if proc else []
        command = [*private_proc, "chroot", str(self.root), str(self.prefix / "bin/authctl"), *args]
        return subprocess.run(command, input=input, capture_output=True, text=True, timeout=60,
                              env={**self.base, **extra}, stdin=None if input is not None else subprocess.DEVNULL)


@pytest.fixture
def old_system(bullseye: Path, unpacked: Path, pool, fake, tmp_path):
    """authctl from the tarball in the Debian 11 root, with a HOME of its own there, against the
    emulator; no session bus (no Secret Service: the stores are chosen explicitly)."""
    home = Path("/tmp") / f"home-{uuid.uuid4().hex[:8]}"
    (bullseye / home.relative_to("/")).mkdir(mode=0o700, parents=True)
    env = base_env(None, pool, fake.endpoint, HOME=str(home), PATH="/usr/sbin:/usr/bin:/sbin:/bin")
    yield Bullseye(bullseye, unpacked, env)
    shutil.rmtree(bullseye / home.relative_to("/"), ignore_errors=True)


def test_runs_there_without_a_session(old_system):
    r = old_system.run("--version")
    assert r.returncode == 0 and r.stdout.strip() == version(), r
    r = old_system.run("--help")
    assert r.returncode == 0 and "signin" in r.stdout, r
    r = old_system.run("status", "--store", "kernel-keyring")
    assert r.returncode == 77 and "not signed in" in r.stdout, r


def test_without_proc_it_refuses_rather_than_lose_its_arguments(old_system):
    """The Swift runtime reads the command line from /proc/self/cmdline; without /proc `authctl
    token` would run as a bare `authctl` (the help, exit 0)."""
    assert not any((old_system.root / "proc").iterdir()), "/proc is mounted in the root itself"
    r = old_system.run("token", proc=False)
    assert r.returncode == 78 and "/proc is not mounted" in r.stderr, r


@pytest.mark.parametrize("store", ["kernel-keyring", "file"])
def test_signs_in_and_hands_out_tokens_there(old_system, pool, store):
    """SRP through libcrypto 1.1, requests through libcurl 7.74 (CURLOPT_PROTOCOLS, not _STR)."""
    extra = {"AUTHCTL_STORE_PASSPHRASE": "correct horse battery staple"} if store == "file" else {}
    r = old_system.run("signin", "--username", "alice", "--password-stdin", "--store", store,
                       input=pool.users["alice"] + "\n", **extra)
    assert r.returncode == 0 and "Signed in as alice" in r.stderr, r
    r = old_system.run("token", **extra)
    assert r.returncode == 0 and r.stdout.count(".") == 2, r
    r = old_system.run("whoami", "--output", "json", **extra)
    assert r.returncode == 0 and '"alice"' in r.stdout, r
    r = old_system.run("status", "--output", "json", **extra)
    assert r.returncode == 0 and f'"store":"{store}"' in r.stdout, r


def test_an_extra_ca_works_with_a_libcurl_before_7_77(old_system, tmp_path):
    """`--ca-bundle` hands libcurl the CAs in memory (CURLOPT_CAINFO_BLOB, libcurl 7.77); the
    root's libcurl is 7.74 (RHEL 9 has 7.76, Ubuntu 20.04 7.68), which refused that option, so
    every request with an extra CA failed. Now the same bytes go by path through a sealed memory
    file. A TLS server with a self-signed certificate answers as Cognito refuses a password: the
    refusal (exit 77) means the TLS handshake trusted the given CA; without it, no request."""
    server, cert = serve_tls_refusal(tmp_path)
    inside = Path("/tmp") / f"ca-{uuid.uuid4().hex[:8]}.pem"
    shutil.copy(cert, old_system.root / inside.relative_to("/"))
    endpoint = f"https://127.0.0.1:{server.server_address[1]}/"
    try:
        r = old_system.run("signin", "--username", "alice", "--password-stdin", "--store", "kernel-keyring",
                           input="wrong password\n", AUTHCTL_ENDPOINT=endpoint)
        assert server.requests == 0 and "cannot verify the TLS certificate" in r.stderr, r  # not trusted
        assert "libcurl refused" not in r.stderr, r
        r = old_system.run("signin", "--username", "alice", "--password-stdin", "--store", "kernel-keyring",
                           "--ca-bundle", str(inside), input="wrong password\n", AUTHCTL_ENDPOINT=endpoint)
        assert "libcurl refused" not in r.stderr, r
        assert server.requests == 1 and r.returncode == 77, r
    finally:
        stop(server)
        (old_system.root / inside.relative_to("/")).unlink(missing_ok=True)


def test_a_missing_optional_library_is_named(old_system, cognito, pool, fake):
    """libfido2 is not installed in the root: a passkey command stops with exit 78 naming the
    package, before anything is asked of the service; the commands before it ran."""
    allow_first_factors(cognito, pool, ["PASSWORD", "WEB_AUTHN"])
    r = old_system.run("signin", "--username", "alice", "--password-stdin", "--store", "kernel-keyring",
                       input=pool.users["alice"] + "\n")
    assert r.returncode == 0, r
    mark = fake.mark()
    r = old_system.run("passkey", "add", "--fido-device", "/dev/null", "--rp-id", "auth.example.com")
    assert r.returncode == 78, r
    # Known before the first request: StartWebAuthnRegistration used to go first.
    assert fake.calls(mark) == [], fake.calls(mark)
    assert "cannot load libfido2.so.1" in r.stderr and "install libfido2-1" in r.stderr, r.stderr
