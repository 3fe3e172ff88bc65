"""The built binary itself."""

from __future__ import annotations

import os
import socket
import subprocess

from harness import authctl_bin


def _ldd() -> str:
    binary = authctl_bin()
    assert binary.exists(), f"authctl binary not found at {binary}"
    return subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout


def _libraries_loaded(args: list[str], stdin: str = "") -> str:
    """What the dynamic loader loaded (linked and dlopen'ed) while authctl ran `args`."""
    with socket.socket() as s:  # a loopback port nothing listens on: the request fails at once
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/nonexistent",
        "LD_DEBUG": "libs",
        "AUTHCTL_USER_POOL_ID": "us-east-1_AbC123",
        "AUTHCTL_CLIENT_ID": "1h2k3l4m5n6o7p",
        "AUTHCTL_ENDPOINT": f"http://127.0.0.1:{closed_port}/",
    }
    r = subprocess.run([str(authctl_bin()), *args], input=stdin, capture_output=True, text=True, env=env, timeout=60)
    return r.stderr


def test_links_libsecret_and_loads_libcurl_only_for_requests():
    # libcurl is opened with dlopen on the first request (docs/performance.md), not linked.
    out = _ldd()
    assert "libsecret-1" in out, out
    assert "libcurl" not in out, out
    assert "libcurl.so.4" not in _libraries_loaded(["--version"])
    loaded = _libraries_loaded(["signin", "--username", "alice", "--password-stdin", "--no-store"], stdin="pw\n")
    assert "libcurl.so.4" in loaded, loaded[-2000:]


def test_uses_no_foundation_networking():
    assert "libFoundationNetworking" not in _ldd(), "every request must go through libcurl"
