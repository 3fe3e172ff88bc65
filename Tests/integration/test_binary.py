"""The built binary itself."""

from __future__ import annotations

import subprocess

from harness import authctl_bin


def test_links_libcurl_and_libsecret():
    binary = authctl_bin()
    assert binary.exists(), f"authctl binary not found at {binary}"
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    assert "libcurl" in out, out
    assert "libsecret-1" in out, out


def test_uses_no_foundation_networking():
    out = subprocess.run(["ldd", str(authctl_bin())], capture_output=True, text=True, check=True).stdout
    assert "libFoundationNetworking" not in out, "every request must go through libcurl"
