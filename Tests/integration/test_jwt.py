"""JWT checks. Offline (always): iss, token_use, client_id / aud, exp. With --verify: the RS256
signature against the pool's JWKS, which moto really serves at <endpoint>/<pool id>/.well-known/jwks.json
(its one key, kid "dummy") and signs its tokens with; the fake forwards that GET and logs it
(method GET, path), so JWKS fetches are counted at the fake's log."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from harness import Cli, jwt_claims


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwt_parts(token: str) -> tuple[dict, dict, bytes]:
    h, p, s = token.split(".")
    return json.loads(unb64url(h)), json.loads(unb64url(p)), unb64url(s)


def jwt_join(header: dict | str, payload: dict | str, signature: bytes | str) -> str:
    h = header if isinstance(header, str) else b64url(json.dumps(header, separators=(",", ":")).encode())
    p = payload if isinstance(payload, str) else b64url(json.dumps(payload, separators=(",", ":")).encode())
    s = signature if isinstance(signature, str) else b64url(signature)
    return f"{h}.{p}.{s}"


def jwks_fetches(fake, mark, pool_id: str) -> list[dict]:
    return [e for e in fake.entries(mark) if e.get("method") == "GET" and e.get("path") == f"/{pool_id}/.well-known/jwks.json"]


def jwks_cache(cli: Cli) -> Path:
    return Path(cli.keyring.env["XDG_CACHE_HOME"]) / "authctl" / "jwks"


def jwks_cache_name(endpoint: str, pool_id: str) -> str:
    """One file per key-set URL, the URL percent-encoded (letters, digits, -, _ and . kept)."""
    from urllib.parse import quote

    url = endpoint.rstrip("/") + f"/{pool_id}/.well-known/jwks.json"
    return quote(url, safe="-_.") + ".json"


def test_moto_serves_the_key_its_tokens_name(cli, fake):
    """The premise of the --verify tests: moto's tokens are RS256 with a kid its JWKS holds."""
    assert cli.signin().code == 0
    session = cli.keyring.session()
    header, _, signature = jwt_parts(session["accessToken"])
    assert header["alg"] == "RS256" and len(signature) == 256, header
    import urllib.request

    with urllib.request.urlopen(f"{fake.url}/{cli.pool.pool_id}/.well-known/jwks.json", timeout=10) as r:
        keys = json.loads(r.read())["keys"]
    assert header["kid"] in {k["kid"] for k in keys}


def test_verify_passes_and_caches_the_jwks(any_cli, fake):
    cli = any_cli
    assert cli.signin().code == 0
    session = cli.keyring.session()
    assert not jwks_cache(cli).exists()

    mark = fake.mark()
    r = cli.run("token", "--verify")
    assert r.code == 0, r
    assert r.out == session["accessToken"] + "\n" and r.err == "", r
    assert len(jwks_fetches(fake, mark, cli.pool.pool_id)) == 1, fake.entries(mark)
    cached = list(jwks_cache(cli).iterdir())
    assert [p.name for p in cached] == [jwks_cache_name(cli.endpoint, cli.pool.pool_id)], cached
    assert cached[0].stat().st_mode & 0o077 == 0, oct(cached[0].stat().st_mode)
    assert "dummy" in cached[0].read_text(), "the cache holds moto's key set"
    assert "eyJ" not in cached[0].read_text(), "only public keys in the cache, no token"
    mtime = cached[0].stat().st_mtime_ns

    # Second time: from the cache, no request for the key set.
    mark = fake.mark()
    r = cli.run("token", "--verify", "--type", "id")
    assert r.code == 0, r
    assert r.out == session["idToken"] + "\n"
    r = cli.run("whoami", "--verify")
    assert r.code == 0, r
    assert "alice" in r.out
    assert jwks_fetches(fake, mark, cli.pool.pool_id) == []
    assert cached[0].stat().st_mtime_ns == mtime


def test_whoami_verify_fetches_when_nothing_is_cached(cli, fake):
    assert cli.signin().code == 0
    mark = fake.mark()
    r = cli.run("whoami", "--verify", "--output", "json")
    assert r.code == 0, r
    assert r.json()["username"] == "alice"
    assert len(jwks_fetches(fake, mark, cli.pool.pool_id)) == 1
    assert (jwks_cache(cli) / jwks_cache_name(cli.endpoint, cli.pool.pool_id)).is_file()


def flip_signature_byte(token: str) -> str:
    header, payload, sig = token.split(".")
    raw = bytearray(unb64url(sig))
    raw[len(raw) // 2] ^= 0x01
    return jwt_join(header, payload, bytes(raw))


def other_kid(token: str) -> str:
    header, _, _ = jwt_parts(token)
    _, payload, sig = token.split(".")
    return jwt_join(dict(header, kid="another-key-id"), payload, sig)


def alg_none(token: str) -> str:
    header, _, _ = jwt_parts(token)
    _, payload, _ = token.split(".")
    return jwt_join(dict(header, alg="none"), payload, "")


TAMPER_WITH_VERIFY = {
    "flipped-signature-byte": flip_signature_byte,
    "another-kid": other_kid,
    "alg-none": alg_none,
}


@pytest.mark.parametrize("tamper", list(TAMPER_WITH_VERIFY), ids=list(TAMPER_WITH_VERIFY))
def test_verify_refuses_tampered_tokens(cli, fake, tamper):
    assert cli.signin().code == 0
    assert cli.run("token", "--verify").code == 0  # the key set is cached now
    original = cli.keyring.session()["accessToken"]
    bad = TAMPER_WITH_VERIFY[tamper](original)
    assert bad != original
    cli.keyring.rewrite_session(lambda s: s.update(accessToken=bad))
    r = cli.run("token", "--verify")
    assert r.code == 77, r
    assert r.out == "", "nothing on stdout"
    assert bad not in r.err
    r = cli.run("token", "--verify", "--output", "json")
    assert r.code == 77 and r.out == "", r
    r = cli.run("whoami", "--verify")
    assert r.code == 77 and r.out == "", r
    # The id token was not touched: it still verifies.
    r = cli.run("token", "--verify", "--type", "id")
    assert r.code == 0, r


def test_kid_not_in_cache_refetches_once(cli, fake):
    """An unknown kid may mean the pool rotated its keys: one fetch of the key set, then refuse."""
    assert cli.signin().code == 0
    assert cli.run("token", "--verify").code == 0
    bad = other_kid(cli.keyring.session()["accessToken"])
    cli.keyring.rewrite_session(lambda s: s.update(accessToken=bad))
    mark = fake.mark()
    r = cli.run("token", "--verify")
    assert r.code == 77 and r.out == "", r
    assert len(jwks_fetches(fake, mark, cli.pool.pool_id)) == 1, "an unknown kid refetches the key set once"


def test_flipped_signature_passes_offline_checks_without_verify(cli):
    """Documented: the signature is checked only with --verify (the claims are intact here)."""
    assert cli.signin().code == 0
    bad = flip_signature_byte(cli.keyring.session()["accessToken"])
    cli.keyring.rewrite_session(lambda s: s.update(accessToken=bad))
    r = cli.run("token")
    assert r.code == 0 and r.out == bad + "\n", r


def with_claims(token: str, **changes) -> str:
    """The payload changed (so the signature no longer matches either)."""
    header, _, sig = token.split(".")
    _, payload, _ = jwt_parts(token)
    payload.update(changes)
    return jwt_join(header, payload, sig)


WRONG_CLAIMS = [
    ("access", {"iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Someone0Else"}),
    ("access", {"iss": "https://evil.example.com/us-east-1_x"}),
    ("access", {"client_id": "0therc1ient1d0000000000000"}),
    ("access", {"token_use": "id"}),
    ("access", {"exp": 1_000_000_000}),
    ("id", {"aud": "0therc1ient1d0000000000000"}),
    ("id", {"token_use": "access"}),
    ("id", {"iss": "https://cognito-idp.eu-west-1.amazonaws.com/" + "eu-west-1_x"}),
]


def test_wrong_claims_are_refused_offline(cli, fake):
    """Each claim changed in turn (the payload changed, so the signature is wrong as well): refused
    WITHOUT --verify, by the offline check, with no request at all."""
    assert cli.signin().code == 0
    good = cli.keyring.session()
    for kind, claims in WRONG_CLAIMS:
        key = "accessToken" if kind == "access" else "idToken"
        bad = with_claims(good[key], **claims)
        cli.keyring.rewrite_session(lambda s: s.update({key: bad}))
        mark = fake.mark()
        r = cli.run("token", "--type", kind)
        assert r.code == 77, (claims, r)
        assert r.out == "", (claims, r)
        assert bad not in r.err
        assert "offline check" in r.err, (claims, r)
        assert [e for e in fake.entries(mark) if e.get("operation") or e.get("method")] == [], claims
        # The other token is still handed out.
        other = "id" if kind == "access" else "access"
        assert cli.run("token", "--type", other).code == 0, claims
        cli.keyring.rewrite_session(lambda s: s.update({key: good[key]}))
    assert cli.run("token").out == good["accessToken"] + "\n"


def test_wrong_issuer_is_refused_with_verify(cli):
    assert cli.signin().code == 0
    bad = with_claims(cli.keyring.session()["accessToken"], iss="https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Other")
    cli.keyring.rewrite_session(lambda s: s.update(accessToken=bad))
    r = cli.run("token", "--verify")
    assert r.code == 77 and r.out == "", r
    r = cli.run("whoami", "--verify")
    assert r.code == 77 and r.out == "", r


def test_exec_refuses_a_token_with_a_wrong_issuer(cli, tmp_path):
    assert cli.signin().code == 0
    bad = with_claims(cli.keyring.session()["accessToken"], iss="https://evil.example.com/x")
    cli.keyring.rewrite_session(lambda s: s.update(accessToken=bad))
    marker = tmp_path / "ran"
    r = cli.run("exec", "--", "sh", "-c", f"touch {marker}")
    assert r.code == 77, r
    assert not marker.exists()


def test_offline_check_uses_the_configured_client(cli):
    """A session stored for one client is not handed out to a caller configured with another
    (docs/cli.md, token: `client_id` (access) or `aud` (id) is the configured client)."""
    assert cli.signin().code == 0
    token = cli.keyring.session()["accessToken"]
    assert jwt_claims(token)["client_id"] == cli.pool.client_id
    r = cli.run("token", AUTHCTL_CLIENT_ID=cli.pool.secret_client_id, AUTHCTL_CLIENT_SECRET=cli.pool.client_secret)
    assert r.code != 0 and r.out == "", r
