"""The JWKS cache under --verify: keyed by the key set's URL (endpoint and
pool), never trusted for more than 24 hours whatever max-age says. A small forwarding server
in front of the fake plays a second endpoint: it passes every Cognito call through and answers
the key-set GET itself (the real set, or one forged, always with a 100-year max-age)."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from local_servers import QuietHandler, serve, stop

HUNDRED_YEARS = 100 * 365 * 86400


class _Forwarder(QuietHandler):
    def do_POST(self) -> None:
        body = self.read_body()
        request = urllib.request.Request(self.server.upstream, data=body, method="POST")  # type: ignore[attr-defined]
        for name in ("Content-Type", "X-Amz-Target", "Authorization", "X-Amz-Date"):
            if self.headers.get(name):
                request.add_header(name, self.headers[name])
        try:
            with urllib.request.urlopen(request, timeout=20) as r:
                status, headers, answer = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, headers, answer = e.code, e.headers, e.read()
        passed = {name.replace("-", "_"): headers[name] for name in ("Content-Type", "x-amzn-ErrorType") if headers.get(name)}
        self.reply(status, answer, **passed)

    def do_GET(self) -> None:
        self.server.jwks_gets += 1  # type: ignore[attr-defined]
        with urllib.request.urlopen(self.server.upstream.rstrip("/") + self.path, timeout=20) as r:  # type: ignore[attr-defined]
            document = json.loads(r.read())
        if self.server.forge:  # type: ignore[attr-defined]
            for key in document["keys"]:
                n = bytearray(base64.urlsafe_b64decode(key["n"] + "=" * (-len(key["n"]) % 4)))
                n[-1] ^= 0x02  # same kid, same size, another key
                key["n"] = base64.urlsafe_b64encode(bytes(n)).rstrip(b"=").decode()
        self.reply(200, json.dumps(document).encode(), Content_Type="application/json",
                   Cache_Control=f"public, max-age={HUNDRED_YEARS}")


@pytest.fixture
def second_endpoint(fake):
    server = serve(_Forwarder, upstream=fake.endpoint, forge=False, jwks_gets=0)
    server.url = f"http://127.0.0.1:{server.server_address[1]}/"  # type: ignore[attr-defined]
    yield server
    stop(server)


def _cache_files(cli) -> list[Path]:
    directory = Path(cli.keyring.env["XDG_CACHE_HOME"]) / "authctl" / "jwks"
    return sorted(directory.glob("*.json")) if directory.exists() else []


def test_one_endpoints_keys_never_stand_for_anothers(cli, second_endpoint):
    """A key set served by one endpoint with a 100-year max-age (here forged: the same kid, another
    key) must not make the genuine tokens of another endpoint fail."""
    second_endpoint.forge = True
    other = second_endpoint.url
    assert cli.signin(AUTHCTL_ENDPOINT=other).code == 0
    r = cli.run("token", "--verify", AUTHCTL_ENDPOINT=other)
    assert r.code == 77 and "signature" in r.err, r  # the forged set is refused, and cached
    assert len(_cache_files(cli)) == 1

    assert cli.signin().code == 0  # the fake's own endpoint, whose keys are genuine
    r = cli.run("token", "--verify")
    assert r.code == 0, r
    assert len(_cache_files(cli)) == 2, "one cache file per key-set URL"


def test_cached_keys_live_at_most_a_day(cli, second_endpoint):
    """max-age of 100 years: the keys are still fetched again once they are a day old."""
    other = second_endpoint.url
    assert cli.signin(AUTHCTL_ENDPOINT=other).code == 0
    assert cli.run("token", "--verify", AUTHCTL_ENDPOINT=other).code == 0
    assert second_endpoint.jwks_gets == 1
    assert cli.run("token", "--verify", AUTHCTL_ENDPOINT=other).code == 0
    assert second_endpoint.jwks_gets == 1, "fresh keys come from the cache"

    [cached] = _cache_files(cli)
    entry = json.loads(cached.read_text())
    entry["fetchedAt"] -= 25 * 3600  # JSONEncoder's Date: seconds since 2001-01-01
    cached.write_text(json.dumps(entry))
    assert cli.run("token", "--verify", AUTHCTL_ENDPOINT=other).code == 0
    assert second_endpoint.jwks_gets == 2, "keys fetched 25 hours ago must be fetched again"
