"""Transport hardening: what a proxy, a TLS key log file or a
slow, throttling service can and cannot make authctl do. Each test failed on the binary before
its fix. Servers here are small local ones written for the test (a recording proxy, a TLS server
answering like Cognito's error path); the service itself is the usual fake in front of moto."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_servers import QuietHandler, serve, serve_tls_refusal, stop


class _Recorder(QuietHandler):
    """Records every request line and answers 502, as a proxy that cannot reach anything would."""

    def _any(self) -> None:
        self.server.seen.append(f"{self.command} {self.path}")  # type: ignore[attr-defined]
        self.read_body()
        self.reply(502, b"proxy says no")

    do_GET = do_POST = do_CONNECT = do_PUT = _any


@pytest.fixture
def recording_proxy():
    server = serve(_Recorder, seen=[])
    yield server
    stop(server)


def test_loopback_http_endpoint_never_goes_through_a_proxy(signed_in, recording_proxy):
    """http_proxy / ALL_PROXY set (as on many CI machines): a plain-http loopback endpoint's
    requests, tokens and passwords included, must go straight to it, not through the proxy."""
    proxy = f"http://127.0.0.1:{recording_proxy.server_address[1]}"
    env = signed_in.env(http_proxy=proxy, ALL_PROXY=proxy, all_proxy=proxy, https_proxy=proxy,
                        HTTPS_PROXY=proxy, NO_PROXY=None, no_proxy=None)
    r = signed_in.run("whoami", "--output", "json", env=env)
    assert recording_proxy.seen == [], f"requests reached the proxy: {recording_proxy.seen}"
    assert r.code == 0, r
    # and a password sign-in (the password in clear on loopback) does not either
    r = signed_in.run("signin", "--username", "alice", "--flow", "password", "--password-stdin",
                      input=signed_in.pool.users["alice"] + "\n", env=env)
    assert recording_proxy.seen == [], f"requests reached the proxy: {recording_proxy.seen}"
    assert r.code == 0, r


@pytest.fixture
def tls_cognito(tmp_path: Path):
    """A TLS server on 127.0.0.1 with a self-signed certificate (openssl CLI), and that certificate."""
    server, cert = serve_tls_refusal(tmp_path)
    yield server, cert
    stop(server)


def test_sslkeylogfile_gets_no_tls_secrets(cli, tls_cognito, tmp_path):
    """SSLKEYLOGFILE makes libcurl write every TLS session's keys: whoever reads that file
    decrypts tokens and passwords. authctl must never write it."""
    server, cert = tls_cognito
    keylog = tmp_path / "keys.log"
    r = cli.run("signin", "--username", "alice", "--password-stdin", "--ca-bundle", str(cert),
                input="wrong password\n", AUTHCTL_ENDPOINT=f"https://127.0.0.1:{server.server_address[1]}/",
                SSLKEYLOGFILE=str(keylog))
    assert server.requests >= 1, f"the TLS request never arrived: {r}"
    assert r.code == 77, r
    written = keylog.read_text() if keylog.exists() else ""
    assert written == "", f"TLS secrets were written to SSLKEYLOGFILE: {written[:200]!r}"


def test_no_connection_is_said_once_in_plain_words(cli, fake):
    """Nothing listening (and a proxy that is not there): one sentence naming where and the
    system's reason, not libcurl's "Couldn't connect" three times; exit 69, nothing sent."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    cases = [
        ({"AUTHCTL_ENDPOINT": f"http://127.0.0.1:{port}/"}, f"cannot connect to 127.0.0.1 port {port}: connection refused"),
        ({"AUTHCTL_ENDPOINT": None, "HTTPS_PROXY": f"http://127.0.0.1:{port}", "NO_PROXY": None, "no_proxy": None},
         f"cannot connect to 127.0.0.1 port {port} (the proxy for cognito-idp."),
    ]
    for env, said in cases:
        r = cli.run("signin", "--username", "alice", "--password-stdin", "--no-store", "--timeout", "1", input="x\n", **env)
        assert r.code == 69, r
        assert said in r.err, r
        assert "couldn't connect" not in r.err.lower() and r.err.lower().count("connect to") == 1, r
