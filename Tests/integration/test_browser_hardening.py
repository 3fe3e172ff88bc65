"""Issue 22: the browser sign-in against other local users and local processes. Each test failed
on the binary before its fix.

- finding 4: a squatted [::1]:PORT was accepted silently.
- finding 5: the browser inherited AUTHCTL_CLIENT_SECRET and the AWS keys.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import harness
from managed_login import managed_login, oauth_env, oauth_pool, wait_until  # noqa: F401 (fixtures)
from test_browser_signin import BROWSERS, browser_result, plan_env, signin

@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs chromium")
def test_a_squatted_ipv6_loopback_port_fails_like_a_taken_ipv4_one(cli, oauth_pool, managed_login, tmp_path):
    """Finding 4: with [::1]:PORT taken by another program, the old binary listened on 127.0.0.1
    alone and opened the browser, and headless Chromium delivered the redirect (the code) to the
    squatter on ::1. Now authctl fails as for a taken port, and opens nothing."""
    try:
        squatter = socket.socket(socket.AF_INET6)
        squatter.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        squatter.bind(("::1", oauth_pool.redirect_port))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    received: list[str] = []

    def squat() -> None:
        squatter.settimeout(1)
        while not done.is_set():
            try:
                conn, _ = squatter.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    received.append(conn.recv(4096).decode(errors="replace").split("\r\n")[0])
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
                except OSError:
                    pass

    done = threading.Event()
    with squatter:
        squatter.listen(8)
        threading.Thread(target=squat, daemon=True).start()
        try:
            r = signin(cli, oauth_pool, managed_login, tmp_path, "--browser-timeout", "40",
                       browser_plan=plan_env(tmp_path, browser="selenium_browser.py"), timeout=120)
        finally:
            done.set()
    assert not [line for line in received if "code=" in line], received  # the squatter got no code
    assert r.code == 69, r
    assert str(oauth_pool.redirect_port) in r.err and "taken by another program" in r.err
    assert not (tmp_path / "browser-result.json").exists(), "no browser is opened"


def test_the_browser_inherits_no_secret(cli, oauth_pool, managed_login, tmp_path):
    """Finding 5: the browser got AUTHCTL_CLIENT_SECRET and the AWS keys; it now gets the caller's
    environment without them, as `exec`'s command does."""
    secrets = {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "aws-secret", "AWS_SESSION_TOKEN": "aws-token",
               "AUTHCTL_ACCESS_TOKEN": "inherited-token"}
    r = signin(cli, oauth_pool, managed_login, tmp_path, client="confidential", **secrets)
    assert r.code == 0, r
    environ = browser_result(tmp_path)["environ"]
    assert "AUTHCTL_TEST_BROWSER_PLAN" in environ and "HOME" in environ
    leaked = {"AUTHCTL_CLIENT_SECRET", *secrets} & set(environ)
    assert not leaked, leaked
