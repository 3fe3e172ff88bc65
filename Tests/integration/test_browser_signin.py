"""authctl signin --browser: authorization code with PKCE through the pool's managed login.

The managed login is fake_managed_login.py (moto has none), standing in for the pool's domain:
its login page, the IdP hop (ExampleIdP, checking the pool's own users in place of a real
identity provider), the token endpoint with PKCE S256 and one-use codes, /oauth2/revoke and
/logout. The browser is script_browser.py (plain HTTP, fast) as $BROWSER, or, in
test_real_browser_*, headless Chromium driven by Selenium. The tokens are moto's, so
whoami (GetUser) runs against the emulator; the keyring is a real gnome-keyring.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import tomllib
import urllib.parse
import urllib.request
from pathlib import Path

import pexpect
import pytest

import harness
from managed_login import managed_login, oauth_env, oauth_pool, wait_until  # noqa: F401 (fixtures)

BROWSERS = harness.HERE / "browsers"


def plan_env(tmp_path: Path, browser: str = "script_browser.py", **plan) -> dict[str, str]:
    """$BROWSER pointing at a test browser and its plan; alice's password by default."""
    plan = {"username": "alice", "password": harness.ALICE_PASSWORD, "result": str(tmp_path / "browser-result.json"), **plan}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return {"BROWSER": f"{sys.executable} {BROWSERS / browser}", "AUTHCTL_TEST_BROWSER_PLAN": str(path)}


def browser_result(tmp_path: Path, timeout: float = 60) -> dict:
    path = tmp_path / "browser-result.json"
    assert wait_until(path.exists, timeout), "the test browser wrote no result"
    time.sleep(0.05)
    return json.loads(path.read_text())


def signin(cli, oauth, server, tmp_path, *more, client="browser", browser_plan=None, timeout=60, **extra):
    env = oauth_env(cli, oauth, server, client, **(browser_plan or plan_env(tmp_path)), **extra)
    return cli.run("signin", "--browser", "--redirect-port", str(oauth.redirect_port), *more, env=env, timeout=timeout)


@pytest.mark.parametrize("client", ["browser", "confidential"])
def test_signin_with_a_browser_then_whoami_and_token(cli, oauth_pool, managed_login, tmp_path, client):
    r = signin(cli, oauth_pool, managed_login, tmp_path, client=client)
    assert r.code == 0, r
    assert "Signed in as alice" in r.err and r.out == ""
    seen = browser_result(tmp_path)
    assert "Signed in" in seen["final_body"] and "close this tab" in seen["final_body"]
    assert seen["final_url"].startswith(oauth_pool.redirect_uri + "?code=")
    # The URL authctl opened: PKCE S256, state, nonce, the scopes, the exact redirect URI.
    # The browser is given /start; the authorize URL is only printed.
    assert seen["argv"] == [f"http://localhost:{oauth_pool.redirect_port}/start"]
    url = re.search(r"(http://\S+/oauth2/authorize\?\S+)", r.err).group(1)
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    assert url.startswith(managed_login.url + "/oauth2/authorize?")
    assert q["code_challenge_method"] == "S256" and len(q["code_challenge"]) == 43
    assert q["redirect_uri"] == oauth_pool.redirect_uri and q["response_type"] == "code"
    assert q["scope"] == "openid email profile aws.cognito.signin.user.admin"
    assert len(q["state"]) >= 32 and len(q["nonce"]) >= 32 and q["state"] != q["nonce"]
    assert url in r.err  # printed too, so a person can copy it
    # The exchange: HTTP Basic exactly for the confidential client.
    exchange = managed_login.requests(path="/oauth2/token", grantType="authorization_code")
    assert [e["status"] for e in exchange] == [200]
    assert exchange[0]["basicAuth"] is (client == "confidential")

    session = cli.keyring.session()
    assert session["domain"] == managed_login.url and session["username"] == "alice"
    assert session["logoutURI"] == f"http://localhost:{oauth_pool.redirect_port}/signed-out"
    env = oauth_env(cli, oauth_pool, managed_login, client)
    who = cli.run("whoami", "--output", "json", env=env)
    assert who.code == 0 and who.json()["username"] == "alice", who
    tok = cli.run("token", env=env)
    assert tok.code == 0 and tok.out.strip() == session["accessToken"], tok
    status = cli.run("status", "--output", "json", env=env)
    entry = status.json()["profiles"][0]
    assert entry["signedInWith"] == "browser" and entry["domain"] == managed_login.url, status
    text = cli.run("status", env=env)
    assert f"signed in through the browser at {managed_login.url}" in text.out, text


def test_idp_hop_and_prompt(cli, oauth_pool, managed_login, tmp_path):
    r = signin(cli, oauth_pool, managed_login, tmp_path, "--idp", "ExampleIdP", "--prompt", "login")
    assert r.code == 0, r
    seen = browser_result(tmp_path)
    assert any(p["title"] == "ExampleIdP sign-in" for p in seen["pages"]), seen["pages"]
    authorize = managed_login.requests(path="/oauth2/authorize")
    assert authorize[0]["identityProvider"] == "ExampleIdP" and authorize[0]["prompt"] == "login"
    assert cli.keyring.session()["username"] == "alice"


def test_access_denied_at_the_idp_stores_nothing(cli, oauth_pool, managed_login, tmp_path):
    r = signin(cli, oauth_pool, managed_login, tmp_path, "--idp", "ExampleIdP", browser_plan=plan_env(tmp_path, idp="cancel"))
    assert r.code == 77, r
    assert "User cancelled the sign-in at the identity provider" in r.err
    assert cli.keyring.session() is None
    seen = browser_result(tmp_path)
    assert "Sign-in failed" in seen["final_body"] and seen["final_status"] == 400
    assert not managed_login.requests(path="/oauth2/token")


def test_wrong_state_stores_nothing(cli, oauth_pool, managed_login, tmp_path):
    """A redirect with another state is answered 400 and ignored: the sign-in waits on (it
    used to end the sign-in, so anyone could abort it)."""
    r = signin(cli, oauth_pool, managed_login, tmp_path, "--browser-timeout", "5",
               browser_plan=plan_env(tmp_path, forge_state=True))
    assert r.code == 77 and "within 5 s" in r.err, r
    assert browser_result(tmp_path)["final_status"] == 400
    assert cli.keyring.session() is None
    assert not managed_login.requests(path="/oauth2/token"), "a forged redirect's code is never exchanged"


def test_pasted_redirect_url_on_stdin_with_no_browser(cli, oauth_pool, managed_login, tmp_path):
    env = oauth_env(cli, oauth_pool, managed_login, **plan_env(tmp_path, stop_at_callback=True))
    proc = subprocess.Popen([str(harness.authctl_bin()), "signin", "--browser", "--no-browser", "--redirect-port",
                             str(oauth_pool.redirect_port)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, cwd=env["HOME"])
    try:
        url = ""
        while "oauth2/authorize" not in url:
            url = proc.stderr.readline().strip()
            assert url or proc.poll() is None, "authctl printed no URL"
        # The person opens it somewhere else; the browser ends on the callback it cannot reach.
        subprocess.run([sys.executable, str(BROWSERS / "script_browser.py"), url], env=env, check=True, timeout=30)
        callback = browser_result(tmp_path)["callback"]
        proc.stdin.write("not a url\n" + callback + "\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "that is not the redirect URL" in err and "Signed in as alice" in err
    assert not (tmp_path / "xdg-open-called").exists()
    assert cli.keyring.session()["domain"] == managed_login.url


def test_pasted_redirect_url_on_a_terminal(cli, oauth_pool, managed_login, tmp_path):
    """A person over SSH: nothing is opened; they sign in on another machine's browser, which ends on
    the localhost callback it cannot reach, and paste that URL at authctl's prompt (a real pty)."""
    env = oauth_env(cli, oauth_pool, managed_login, **plan_env(tmp_path, stop_at_callback=True))
    child = pexpect.spawn(str(harness.authctl_bin()), ["signin", "--browser", "--no-browser", "--redirect-port",
                                                       str(oauth_pool.redirect_port)],
                          env=env, cwd=env["HOME"], dimensions=(40, 250), encoding="utf-8", timeout=30)
    try:
        child.expect(r"(http://\S+/oauth2/authorize\?\S+)")
        url = child.match.group(1)
        child.expect_exact("paste the URL it ends on")
        subprocess.run([sys.executable, str(BROWSERS / "script_browser.py"), url], env=env, check=True, timeout=30)
        child.sendline(browser_result(tmp_path)["callback"])
        child.expect_exact("Signed in as alice")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert cli.keyring.session()["username"] == "alice"


def test_timeout_stores_nothing(cli, oauth_pool, managed_login, tmp_path):
    env = oauth_env(cli, oauth_pool, managed_login)
    start = time.monotonic()
    r = cli.run("signin", "--browser", "--no-browser", "--browser-timeout", "2", "--redirect-port",
                str(oauth_pool.redirect_port), env=env)
    assert r.code == 77 and "within 2 s" in r.err and "--browser-timeout" in r.err, r
    assert time.monotonic() - start >= 2
    assert cli.keyring.session() is None


@pytest.mark.parametrize("bus", ["keyring", "nobus"])
def test_no_store_prints_the_tokens_and_keeps_nothing(cli, oauth_pool, managed_login, tmp_path, keyrings, bus):
    """signin --browser --no-store, as signin --no-store: the token set on stdout, nothing in the
    Secret Service, and none needed (nobus: no session bus at all)."""
    user = cli if bus == "keyring" else cli.with_keyring(keyrings("nobus"))
    r = signin(user, oauth_pool, managed_login, tmp_path, "--no-store", "--output", "json")
    assert r.code == 0, r
    tokens = r.json()
    assert set(tokens) == {"accessToken", "idToken", "refreshToken", "expiresAt", "tokenType"}, tokens
    assert harness.jwt_claims(tokens["accessToken"])["username"] == "alice"
    assert harness.jwt_claims(tokens["idToken"])["aud"] == oauth_pool.browser_client_id
    assert tokens["tokenType"] == "Bearer" and tokens["refreshToken"]
    if bus == "keyring":
        assert cli.keyring.session() is None and cli.keyring.session_items() == []
    # The printed refresh token is live at the token endpoint.
    body = urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": tokens["refreshToken"],
                                   "client_id": oauth_pool.browser_client_id}).encode()
    req = urllib.request.Request(managed_login.url + "/oauth2/token", data=body,
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(req, timeout=10) as answer:
        assert json.loads(answer.read())["access_token"]


def test_the_tab_says_signed_in_only_once_the_session_is_kept(cli, oauth_pool, managed_login, tmp_path, keyrings):
    """The Secret Service goes away while the browser is at the managed login (its session bus is
    stopped just before the browser follows the callback), so the session cannot be kept: the
    command fails, nothing says "Signed in", and the browser's tab says the sign-in failed (it is
    answered after the store, not before)."""
    keyring = keyrings("keyring", name="vanishing")
    user = cli.with_keyring(keyring)
    plan = plan_env(tmp_path, before_callback=[
        "bash", "-c", f"kill -KILL -{keyring.proc.pid}; "
        f"while dbus-send --bus={keyring.env['DBUS_SESSION_BUS_ADDRESS']} --print-reply --dest=org.freedesktop.DBus "
        "/org/freedesktop/DBus org.freedesktop.DBus.Peer.Ping >/dev/null 2>&1; do sleep 0.05; done"])
    r = signin(user, oauth_pool, managed_login, tmp_path, browser_plan=plan)
    assert r.code != 0 and "Signed in as" not in r.err, r
    seen = browser_result(tmp_path)
    assert "Sign-in failed" in seen["final_body"] and "Signed in" not in seen["final_body"], seen["final_body"]


def test_taken_port_is_unavailable(cli, oauth_pool, managed_login, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", oauth_pool.redirect_port))
        s.listen(1)
        r = signin(cli, oauth_pool, managed_login, tmp_path)
    assert r.code == 69, r
    assert str(oauth_pool.redirect_port) in r.err and "--redirect-port" in r.err
    assert not (tmp_path / "browser-result.json").exists(), "no browser is opened when nothing can listen"


def fake_xdg_open(tmp_path: Path) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "xdg-open"
    script.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$1\" > {tmp_path}/xdg-open-called\n")
    script.chmod(0o755)
    return f"{bin_dir}:{harness.SYSTEM_PATH}"


@pytest.mark.parametrize("display", [{}, {"DISPLAY": ":0", "SSH_CONNECTION": "10.0.0.1 5000 10.0.0.2 22"}, {"DISPLAY": ":0"}])
def test_xdg_open_only_with_a_display(cli, oauth_pool, managed_login, tmp_path, display):
    env = oauth_env(cli, oauth_pool, managed_login, PATH=fake_xdg_open(tmp_path), **display)
    r = cli.run("signin", "--browser", "--browser-timeout", "1", "--redirect-port", str(oauth_pool.redirect_port), env=env)
    assert r.code == 77, r
    url = re.search(r"(http://\S+/oauth2/authorize\?\S+)", r.err).group(1)
    called = tmp_path / "xdg-open-called"
    if display == {"DISPLAY": ":0"}:
        assert wait_until(called.exists) and called.read_text().strip() == f"http://localhost:{oauth_pool.redirect_port}/start"
    else:
        assert "Open this URL in a browser" in r.err and not called.exists()


def test_refresh_at_the_token_endpoint_and_signout_with_revocation(cli, oauth_pool, managed_login, tmp_path):
    plan = plan_env(tmp_path, cookies=str(tmp_path / "cookies.txt"))
    assert signin(cli, oauth_pool, managed_login, tmp_path, browser_plan=plan).code == 0
    env = oauth_env(cli, oauth_pool, managed_login)
    before = cli.keyring.session()
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt="2020-01-01T00:00:00Z"))
    r = cli.run("token", env=env)
    assert r.code == 0, r
    after = cli.keyring.session()
    assert r.out.strip() == after["accessToken"] != before["accessToken"]
    assert after["refreshToken"] == before["refreshToken"] and after["domain"] == managed_login.url
    assert [e["status"] for e in managed_login.requests(path="/oauth2/token", grantType="refresh_token")] == [200]

    # The browser keeps the managed login's cookie: a second sign-in goes straight through.
    (tmp_path / "browser-result.json").unlink()
    assert signin(cli, oauth_pool, managed_login, tmp_path, browser_plan=plan).code == 0
    assert not any(p["title"] == "Signin" for p in browser_result(tmp_path)["pages"])
    replaced_refresh = after["refreshToken"]
    session = cli.keyring.session()

    out = cli.run("signout", "--output", "json", env=env)
    assert out.code == 0, out
    report = out.json()
    assert report["revokeToken"] == "ok" and report["signedOutLocally"] is True
    logout = urllib.parse.urlsplit(report["logoutUrl"])
    assert f"{logout.scheme}://{logout.netloc}" == managed_login.url and logout.path == "/logout"
    assert dict(urllib.parse.parse_qsl(logout.query)) == {
        "client_id": oauth_pool.browser_client_id, "logout_uri": f"http://localhost:{oauth_pool.redirect_port}/signed-out"}
    assert managed_login.requests(path="/oauth2/revoke", status=200)
    assert cli.keyring.session() is None
    # Both refresh tokens (the replaced one was revoked at the second sign-in) are dead at the token endpoint.
    for refresh in (session["refreshToken"], replaced_refresh):
        body = urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": refresh,
                                       "client_id": oauth_pool.browser_client_id}).encode()
        req = urllib.request.Request(managed_login.url + "/oauth2/token", data=body,
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=10)
        assert json.loads(refused.value.read()) == {"error": "invalid_grant"}

    # After the logout URL, the browser's cookie is gone: the login page is shown again.
    subprocess.run([sys.executable, str(BROWSERS / "script_browser.py"), report["logoutUrl"]],
                   env={**env, **plan}, check=True, timeout=30)
    (tmp_path / "browser-result.json").unlink()
    assert signin(cli, oauth_pool, managed_login, tmp_path, browser_plan=plan).code == 0
    assert any(p["title"] == "Signin" for p in browser_result(tmp_path)["pages"])


def test_text_signout_prints_the_logout_url(cli, oauth_pool, managed_login, tmp_path):
    assert signin(cli, oauth_pool, managed_login, tmp_path).code == 0
    r = cli.run("signout", env=oauth_env(cli, oauth_pool, managed_login))
    assert r.code == 0, r
    assert f"{managed_login.url}/logout?client_id={oauth_pool.browser_client_id}&logout_uri=" in r.err


def test_signout_browser_opens_the_logout_url_and_answers_the_return(cli, oauth_pool, managed_login, tmp_path):
    """signout --browser: the managed login clears its cookie and sends the browser back to
    http://localhost:N/signed-out, where authctl answers with a page (not a connection error)."""
    plan = plan_env(tmp_path, cookies=str(tmp_path / "cookies.txt"))
    assert signin(cli, oauth_pool, managed_login, tmp_path, browser_plan=plan).code == 0
    (tmp_path / "browser-result.json").unlink()
    r = cli.run("signout", "--browser", env=oauth_env(cli, oauth_pool, managed_login, **plan), timeout=60)
    assert r.code == 0, r
    seen = browser_result(tmp_path)
    assert seen["argv"][0].startswith(f"{managed_login.url}/logout?")
    assert seen["final_url"] == f"http://localhost:{oauth_pool.redirect_port}/signed-out", seen
    assert seen["final_status"] == 200 and "Signed out" in seen["final_body"], seen
    assert "signed out of the managed login" in r.err, r
    assert cli.keyring.session() is None
    # The cookie is gone: the next browser sign-in shows the login page again.
    (tmp_path / "browser-result.json").unlink()
    assert signin(cli, oauth_pool, managed_login, tmp_path, browser_plan=plan).code == 0
    assert any(p["title"] == "Signin" for p in browser_result(tmp_path)["pages"])


def test_a_refused_refresh_ends_the_browser_session(cli, oauth_pool, managed_login, tmp_path):
    assert signin(cli, oauth_pool, managed_login, tmp_path).code == 0
    session = cli.keyring.session()
    env = oauth_env(cli, oauth_pool, managed_login)
    body = urllib.parse.urlencode({"token": session["refreshToken"], "client_id": oauth_pool.browser_client_id}).encode()
    urllib.request.urlopen(urllib.request.Request(managed_login.url + "/oauth2/revoke", data=body), timeout=10).read()
    cli.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt="2020-01-01T00:00:00Z"))
    r = cli.run("token", env=env)
    assert r.code == 77 and "has ended" in r.err and "invalid_grant" in r.err, r
    assert cli.keyring.session() is None


def test_token_endpoint_html_page_is_unavailable_and_stores_nothing(cli, oauth_pool, managed_login, tmp_path):
    managed_login.configure(tokenEndpointHtml=True)
    r = signin(cli, oauth_pool, managed_login, tmp_path)
    assert r.code == 69 and "not JSON" in r.err, r
    assert cli.keyring.session() is None
    assert "Sign-in failed" in browser_result(tmp_path)["final_body"]


def test_missing_domain(cli, oauth_pool, managed_login, tmp_path):
    r = signin(cli, oauth_pool, managed_login, tmp_path, AUTHCTL_DOMAIN=None)
    assert r.code == 78 and "--domain" in r.err and "AUTHCTL_DOMAIN" in r.err, r


def test_configure_stores_the_domain(cli, oauth_pool, managed_login, tmp_path):
    env = oauth_env(cli, oauth_pool, managed_login, AUTHCTL_DOMAIN=None)
    r = cli.run("configure", "--domain", "http://files.example.com", env=env)
    assert r.code == 78, r
    r = cli.run("configure", "--user-pool-id", oauth_pool.pool.pool_id, "--client-id", oauth_pool.browser_client_id,
                "--domain", managed_login.url, "--redirect-port", str(oauth_pool.redirect_port), env=env)
    assert r.code == 0, r
    config = tomllib.loads((Path(env["XDG_CONFIG_HOME"]) / "authctl" / "config.toml").read_text())
    profile = config["profiles"]["default"]
    assert profile["domain"] == managed_login.url and profile["redirect_port"] == str(oauth_pool.redirect_port), config
    # Now neither --domain nor --redirect-port is needed.
    r = cli.run("signin", "--browser", env={**env, **plan_env(tmp_path)}, timeout=60)
    assert r.code == 0, r


def test_real_browser_through_the_idp_hop(cli, oauth_pool, managed_login, tmp_path):
    """Headless Chromium (Selenium) as $BROWSER: the IdP's page, the redirect onto authctl's listener."""
    plan = plan_env(tmp_path, browser="selenium_browser.py")
    r = signin(cli, oauth_pool, managed_login, tmp_path, "--idp", "ExampleIdP", browser_plan=plan, timeout=120)
    assert r.code == 0, (r, (tmp_path / "browser-result.json").exists() and browser_result(tmp_path))
    seen = browser_result(tmp_path, timeout=60)
    assert [p["title"] for p in seen["pages"]][:1] == ["ExampleIdP sign-in"], seen
    assert seen["final_url"].startswith(oauth_pool.redirect_uri) and "Signed in" in seen["final_body"]
    who = cli.run("whoami", env=oauth_env(cli, oauth_pool, managed_login))
    assert who.code == 0 and "alice" in who.out + who.err, who


def test_real_browser_login_page(cli, oauth_pool, managed_login, tmp_path):
    plan = plan_env(tmp_path, browser="selenium_browser.py")
    r = signin(cli, oauth_pool, managed_login, tmp_path, client="confidential", browser_plan=plan, timeout=120)
    assert r.code == 0, r
    seen = browser_result(tmp_path, timeout=60)
    assert seen["pages"][0]["title"] == "Signin" and "Signed in" in seen["final_body"]


def test_token_endpoint_out_with_a_replica_says_the_browser_sign_in_does_not_fail_over(cli, oauth_pool, managed_login, tmp_path):
    """The authorization code is exchanged at the managed-login domain, which Cognito fails
    over by DNS only (a custom domain's failover routing); authctl says so, and names the sign-in
    that does fail over. (The HTML answer stands in for a domain that does not answer.)"""
    managed_login.configure(tokenEndpointHtml=True)
    r = signin(cli, oauth_pool, managed_login, tmp_path, AUTHCTL_FAILOVER_REGION="us-west-2")
    assert r.code == 69, r
    assert "does not fail the managed login over to the replica" in r.err, r
    assert "`authctl signin` without --browser fails over" in r.err, r
    assert cli.keyring.session() is None
