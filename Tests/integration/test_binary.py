"""The built binary itself: what it links, and what it loads for which command.

libcurl, libsecret, libcrypto, libfido2 and libqrencode are opened with dlopen on first use
(Sources/CCurl, Sources/CLibSecret, Sources/COpenSSL, Sources/CFido2, Sources/CQRencode;
docs/performance.md), so a command that makes no request does
not load libcurl's 27 libraries, one that needs no keyring does not load libsecret with GLib, GIO and
libgcrypt, and only SRP loads libcrypto.
"""

from __future__ import annotations

import os
import shutil
import socket
import json
import subprocess
from pathlib import Path

import pytest

from harness import REPO, authctl_bin

# Linked by nothing in authctl: loaded with dlopen (libsecret with its dependencies) when needed.
LAZY = ["libsecret-1", "libglib-2.0", "libgio-2.0", "libgobject-2.0", "libgcrypt", "libcurl", "libcrypto", "libfido2",
        "libcbor", "libqrencode"]


def _ldd() -> str:
    binary = authctl_bin()
    assert binary.exists(), f"authctl binary not found at {binary}"
    return subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout


def _closed_port() -> int:
    with socket.socket() as s:  # a loopback port nothing listens on: a request fails at once
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _bare_env(**extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/nonexistent",
        "AUTHCTL_USER_POOL_ID": "us-east-1_AbC123",
        "AUTHCTL_CLIENT_ID": "1h2k3l4m5n6o7p",
        "AUTHCTL_ENDPOINT": f"http://127.0.0.1:{_closed_port()}/",
        **extra,
    }


def _loaded(args: list[str], env: dict[str, str], stdin: str = "") -> tuple[subprocess.CompletedProcess, list[str]]:
    """authctl's result, and the shared objects the dynamic loader opened (linked and dlopen'ed)."""
    r = subprocess.run([str(authctl_bin()), *args], input=stdin, capture_output=True, text=True,
                       env={**env, "LD_DEBUG": "files"}, timeout=60)
    opened = [line.split("file=", 1)[1].split()[0] for line in r.stderr.splitlines()
              if "file=" in line and "generating link map" in line]
    return r, opened


def _any(names: list[str], prefix: str) -> bool:
    return any(os.path.basename(name).startswith(prefix) for name in names)


def test_links_neither_libsecret_nor_libcurl_nor_libcrypto():
    out = _ldd()
    for library in LAZY:
        assert library not in out, f"{library} is linked:\n{out}"


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["token", "--help"]])
def test_commands_without_keyring_or_request_load_neither(args):
    r, opened = _loaded(args, _bare_env())
    assert r.returncode == 0, r.stderr[-2000:]
    assert opened, "LD_DEBUG=files reported nothing: cannot tell what was loaded"
    for library in LAZY:
        assert not _any(opened, library), f"{args} loaded {library}: {opened}"


def test_signin_loads_libcurl_and_libcrypto():
    r, opened = _loaded(["signin", "--username", "alice", "--password-stdin", "--no-store"], _bare_env(), stdin="pw\n")
    assert _any(opened, "libcurl.so.4"), opened
    assert _any(opened, "libcrypto.so.3"), opened
    assert not _any(opened, "libsecret-1"), opened


def test_token_on_a_fresh_session_loads_neither_libsecret_nor_libcurl(signed_in):
    """The Secret Service is read over authctl's own bus connection: libcrypto (the session's key
    exchange), no libsecret, GLib or libcurl."""
    r, opened = _loaded(["token"], signed_in.env())
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.count(".") == 2, "not a JWT"
    assert _any(opened, "libcrypto"), opened
    for library in ("libsecret-1", "libglib-2.0", "libgio-2.0", "libgcrypt", "libcurl"):
        assert not _any(opened, library), (library, opened)


def _stand_in_library(directory: Path, soname: str) -> None:
    """A shared object named `soname` that has none of the real library's functions."""
    cc = shutil.which("cc") or shutil.which("clang") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the stand-in library")
    (directory / "empty.c").write_text("int authctl_test_not_the_library;\n")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(directory / soname), str(directory / "empty.c")], check=True)


def test_missing_libsecret_is_a_configuration_error(tmp_path: Path):
    """A libsecret-1.so.0 without libsecret's functions, found first through LD_LIBRARY_PATH,
    stands for a broken or missing library: exit 78 with a message naming it, not a crash."""
    _stand_in_library(tmp_path, "libsecret-1.so.0")
    bus = tmp_path / "bus"
    with socket.socket(socket.AF_UNIX) as listener:  # a session bus may exist: libsecret is needed
        listener.bind(str(bus))
        env = _bare_env(LD_LIBRARY_PATH=str(tmp_path), DBUS_SESSION_BUS_ADDRESS=f"unix:path={bus}")
        r = subprocess.run([str(authctl_bin()), "token"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 78, r
    assert "libsecret-1.so.0 has no secret_service_get_sync" in r.stderr, r.stderr


def test_missing_libcrypto_stops_srp_with_a_clear_error(tmp_path: Path):
    """The same for libcrypto, which only the SRP arithmetic of a sign-in loads: exit 78."""
    _stand_in_library(tmp_path, "libcrypto.so.3")
    r = subprocess.run([str(authctl_bin()), "signin", "--username", "alice", "--password-stdin", "--no-store"],
                       input="pw\n", capture_output=True, text=True, env=_bare_env(LD_LIBRARY_PATH=str(tmp_path)),
                       timeout=60)
    assert r.returncode == 78, r
    assert "cannot compute SRP values: libcrypto.so.3 has no BN_new" in r.stderr, r.stderr


def test_libsecret_declarations_match_its_headers():
    """CLibSecret.c declares the GLib/libsecret functions, structs and error codes it uses by hand
    (it must build without linking libsecret); compiled against the real headers, they must agree."""
    clang = shutil.which("clang") or shutil.which("cc")
    pkg = subprocess.run(["pkg-config", "--cflags", "libsecret-1"], capture_output=True, text=True)
    if clang is None or pkg.returncode != 0:
        pytest.skip("needs clang and libsecret-1-dev (pkg-config libsecret-1)")
    source = REPO / "Sources" / "CLibSecret" / "CLibSecret.c"
    r = subprocess.run([clang, "-fsyntax-only", "-DAUTHCTL_SECRET_CHECK_HEADERS", *pkg.stdout.split(),
                        "-I", str(source.parent / "include"), str(source)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_uses_no_foundation_networking():
    assert "libFoundationNetworking" not in _ldd(), "every request must go through libcurl"


def test_help_says_what_the_docs_say():
    """`authctl --help` lists every exit code docs/cli.md's table has, and no option's help says its
    default twice (the text's own "(default N)" and ArgumentParser's "(default: N)")."""
    import re

    table = (REPO / "docs" / "cli.md").read_text().split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    documented = {int(code) for row in re.findall(r"^\| ([\d, ]+) \|", table, re.M) for code in row.split(",")}
    assert {0, 1, 64, 78, 126, 127, 141} <= documented, documented
    top = subprocess.run([str(authctl_bin()), "--help"], capture_output=True, text=True, timeout=30)
    listed = set(map(int, re.findall(r"\b(\d+)\b", top.stdout.split("Exit codes:", 1)[1].split("\n\n", 1)[0])))
    assert documented <= listed, sorted(documented - listed)
    # Every option of every command, from ArgumentParser's own description of the command line.
    dump = subprocess.run(
        [str(authctl_bin()), "--experimental-dump-help"], capture_output=True, text=True, timeout=30, check=True)
    twice = []

    def walk(command: dict, path: list[str]) -> None:
        for argument in command.get("arguments", []):
            if "defaultValue" in argument and "(default" in argument.get("abstract", ""):
                twice.append((" ".join(path), argument.get("names"), argument["abstract"]))
        for sub in command.get("subcommands", []):
            walk(sub, [*path, sub["commandName"]])

    walk(json.loads(dump.stdout)["command"], ["authctl"])
    assert twice == [], twice
