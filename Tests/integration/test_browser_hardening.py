"""The browser sign-in against another local user (uid nobody, through setpriv) and
against slow or squatting local processes. Each test failed on the binary before its fix.

- the authorize URL (state, nonce, PKCE challenge) was on the browser's argv, where any
  user reads it in /proc, and the listener acted on a callback from any local user. Now the
  browser is given http://localhost:PORT/start and only this user's connections are served; the
  others are answered 403 (the peer's uid from /proc/net/tcp*).
- a wrong-state redirect ended the sign-in; a slow client blocked the listener.
- a squatted [::1]:PORT was accepted silently.
- the browser inherited AUTHCTL_CLIENT_SECRET and the AWS keys.
- `signout --browser`'s "signed out" could be forged through /signed-out.
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

# Run as nobody: scans every process's argv for an authorize URL's state, then asks authctl's
# listener for /start and delivers a callback with that state (or a made-up one). Prints JSON.
ATTACKER = r"""
import json, os, re, sys, time, urllib.request, urllib.error
port, seconds = int(sys.argv[1]), float(sys.argv[2])
found, deadline = None, time.time() + seconds
while found is None and time.time() < deadline:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
        except OSError:
            continue
        m = re.search(r"[?&]state=([A-Za-z0-9_-]{20,})", argv)
        if m:
            found = m.group(1)
    time.sleep(0.05)
class Keep(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a): return None
opener = urllib.request.build_opener(Keep())
def status(path):
    try:
        return opener.open(f"http://127.0.0.1:{port}{path}", timeout=5).status
    except urllib.error.HTTPError as e:
        return e.code
    except Exception as e:
        return str(e)
print(json.dumps({"state": found, "start": status("/start"),
                  "callback": status(f"/callback?code=attackers-code&state={found or 'guess'}"),
                  "signed_out": status("/signed-out")}))
"""


def as_nobody(script: str, *args: str, timeout: float = 60) -> subprocess.Popen:
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is needed to run a second local user")
    return subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", script, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")


def slow_browser(tmp_path: Path, inner: str, delay: float) -> str:
    """A $BROWSER that waits `delay` seconds before the real one starts (the attacker's window)."""
    script = tmp_path / "slow-browser"
    script.write_text(f"#!/bin/sh\nsleep {delay}\nexec {sys.executable} {BROWSERS / inner} \"$@\"\n")
    script.chmod(0o755)
    return str(script)


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs chromium")
def test_another_user_can_neither_read_the_authorize_url_nor_deliver_a_callback(cli, oauth_pool, managed_login, tmp_path):
    """Finding 1, with headless Chromium as the victim's browser and nobody as the attacker."""
    plan = plan_env(tmp_path, browser="selenium_browser.py")
    plan["BROWSER"] = slow_browser(tmp_path, "selenium_browser.py", 6)
    env = oauth_env(cli, oauth_pool, managed_login, **plan)
    victim = subprocess.Popen([str(harness.authctl_bin()), "signin", "--browser", "--redirect-port", str(oauth_pool.redirect_port)],
                              env=env, cwd=env["HOME"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    attacker = as_nobody(ATTACKER, str(oauth_pool.redirect_port), "4")
    seen_by_attacker = json.loads(attacker.communicate(timeout=60)[0])
    out, err = victim.communicate(timeout=120)
    assert seen_by_attacker["state"] is None, seen_by_attacker  # nothing on any argv
    assert seen_by_attacker["start"] == 403 and seen_by_attacker["callback"] == 403, seen_by_attacker
    assert not [e for e in managed_login.requests(path="/oauth2/token") if e.get("code") == "attackers-code"]
    assert victim.returncode == 0, err
    assert "Signed in as alice" in err
    seen = browser_result(tmp_path, timeout=60)
    assert seen["argv"] == [f"http://localhost:{oauth_pool.redirect_port}/start"]
    assert "Signed in" in seen["final_body"]


def test_the_signed_out_page_cannot_be_forged_by_another_user(cli, oauth_pool, managed_login, tmp_path):
    """Finding 12: nobody requests /signed-out while the real browser is still on its way."""
    plan = plan_env(tmp_path, cookies=str(tmp_path / "cookies.txt"))
    assert signin(cli, oauth_pool, managed_login, tmp_path, browser_plan=plan).code == 0
    (tmp_path / "browser-result.json").unlink()
    plan["BROWSER"] = slow_browser(tmp_path, "script_browser.py", 4)
    victim = subprocess.Popen([str(harness.authctl_bin()), "signout", "--browser"], env=oauth_env(cli, oauth_pool, managed_login, **plan),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    attacker = as_nobody(ATTACKER, str(oauth_pool.redirect_port), "0.5")
    seen_by_attacker = json.loads(attacker.communicate(timeout=60)[0])
    out, err = victim.communicate(timeout=60)
    assert seen_by_attacker["signed_out"] == 403, seen_by_attacker
    assert victim.returncode == 0, err
    seen = browser_result(tmp_path)
    assert seen["final_status"] == 200 and "Signed out" in seen["final_body"], seen  # the real return still works


def trickle(port: int, stop: threading.Event) -> None:
    """A client that sends one byte a second and never finishes its request."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        for byte in b"GET /callback?state=x HTTP/1.1\r\n" * 100:
            if stop.wait(1):
                return
            s.send(bytes([byte]))


def wait_listening(port: int, timeout: float = 10) -> None:
    def up():
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False
    assert wait_until(up, timeout)


def run_beside_a_trickler(port: int, args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, str, float]:
    """authctl `args` with a trickling client connected as soon as it listens; (process, stderr, seconds)."""
    stop = threading.Event()
    started = time.monotonic()
    victim = subprocess.Popen([str(harness.authctl_bin()), *args, "--redirect-port", str(port)], env=env, cwd=env["HOME"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_listening(port)
        threading.Thread(target=trickle, args=(port, stop), daemon=True).start()
        _, err = victim.communicate(timeout=60)
    finally:
        stop.set()
    return victim, err, time.monotonic() - started


def test_a_slow_client_neither_blocks_the_browser_nor_outlasts_the_timeout(cli, oauth_pool, managed_login, tmp_path):
    """Finding 3: a connection trickling a byte a second held the listener (the real browser went
    unanswered) and kept authctl past --browser-timeout."""
    plan = plan_env(tmp_path)
    plan["BROWSER"] = slow_browser(tmp_path, "script_browser.py", 2)
    victim, err, seconds = run_beside_a_trickler(oauth_pool.redirect_port, ["signin", "--browser", "--browser-timeout", "20"],
                                                 oauth_env(cli, oauth_pool, managed_login, **plan))
    assert victim.returncode == 0 and "Signed in as alice" in err, err
    assert seconds < 15

    # Only the trickler: the timeout is a hard deadline.
    victim, err, seconds = run_beside_a_trickler(oauth_pool.redirect_port, ["signin", "--browser", "--no-browser", "--browser-timeout", "3"],
                                                 oauth_env(cli, oauth_pool, managed_login))
    assert victim.returncode == 77 and "within 3 s" in err, err
    assert seconds < 6


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
