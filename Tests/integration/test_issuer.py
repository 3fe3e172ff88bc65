"""Pools on the updated issuer: tokens naming
https://issuer-cognito-idp.<primary region>.amazonaws.com/<pool id> are accepted, checked and
verified like the original ones; any third issuer is refused; the identity pool's Logins key can
name the updated issuer (--provider-name, identity_provider_name).

The fake hands out a pool's tokens with the issuer set by POST /_fake/config {"issuers": {...}}
(fake_cognito/issuer.py), signed with moto's key, whose set the endpoint override publishes.
"""

from __future__ import annotations

import ssl
import subprocess
import time

import pytest

import harness
from harness import jwt_claims
from local_servers import QuietHandler, serve, stop
from test_jwks_cache import _Forwarder
from test_aws_credentials import ROLE_ARN, identity  # noqa: F401  (fixture)


@pytest.fixture
def on_issuer(fake, pool):
    def use(issuer: str) -> None:
        fake.set_config(issuers={pool.pool_id: issuer})
    yield use
    fake.set_config(issuers={})


def updated(pool) -> str:
    return f"https://issuer-cognito-idp.{pool.pool_id.split('_')[0]}.amazonaws.com/{pool.pool_id}"


def test_updated_issuer_is_accepted_and_verified(cli, on_issuer):
    on_issuer("updated")
    assert cli.signin().code == 0
    session = cli.keyring.session()
    assert jwt_claims(session["accessToken"])["iss"] == updated(cli.pool)
    assert jwt_claims(session["idToken"])["iss"] == updated(cli.pool)
    for kind in ("id", "access"):
        r = cli.run("token", "--type", kind, "--verify")
        assert r.code == 0, r
    w = cli.run("whoami", "--verify")
    assert w.code == 0, w
    # A refresh hands out tokens on the same issuer, accepted too.
    r = cli.run("token", "--min-valid", "3700", "--verify")
    assert r.code == 0, r
    assert r.out.strip() != session["idToken"], "refreshed"
    assert jwt_claims(r.out.strip())["iss"] == updated(cli.pool)


@pytest.mark.parametrize("third", [
    "https://issuer-cognito-idp.eu-west-1.amazonaws.com/{pool}",  # not the primary region
    "https://cognito-idp.eu-west-1.amazonaws.com/{pool}",  # not the pool's region
    "http://issuer-cognito-idp.{region}.amazonaws.com/{pool}",
    "https://issuer-cognito-idp.{region}.amazonaws.com.evil.example/{pool}",
])
def test_a_third_issuer_is_refused(cli, on_issuer, third):
    issuer = third.format(pool=cli.pool.pool_id, region=cli.pool.pool_id.split("_")[0])
    on_issuer(issuer)
    # Refused before anything is stored (every sign-in's claims are checked).
    r = cli.signin()
    assert r.code == 69, r
    assert "issued by " + issuer in r.err and "nothing was stored" in r.err, r
    assert cli.keyring.session() is None
    for args in (["token"], ["whoami"]):
        assert cli.run(*args).code == 77  # not signed in


def make_identity_pool(identity, provider: str, client_id: str) -> str:
    ci = identity.client("cognito-identity")
    pool_id = ci.create_identity_pool(
        IdentityPoolName=f"authctl{time.time_ns()}", AllowUnauthenticatedIdentities=False,
        CognitoIdentityProviders=[{"ProviderName": provider, "ClientId": client_id}])["IdentityPoolId"]
    ci.set_identity_pool_roles(IdentityPoolId=pool_id, Roles={"authenticated": ROLE_ARN})
    return pool_id


def test_identity_pool_naming_the_updated_issuer(cli, on_issuer, identity):
    on_issuer("updated")
    assert cli.signin().code == 0
    provider = updated(cli.pool).removeprefix("https://")
    env = {"AUTHCTL_IDENTITY_POOL_ID": make_identity_pool(identity, provider, cli.client_id),
           "AWS_ENDPOINT_URL_COGNITO_IDENTITY": identity.url}
    r = cli.run("aws-credentials", **env)
    assert r.code == 77, "the original provider name is not this identity pool's"
    r = cli.run("aws-credentials", "--provider-name", "cognito-idp.eu-west-1.amazonaws.com/" + cli.pool.pool_id, **env)
    assert r.code == 78 and "is not one of the user pool's" in r.err, r
    r = cli.run("aws-credentials", "--provider-name", provider, **env)
    assert r.code == 0, r
    r = cli.run("aws-credentials", **env, AUTHCTL_IDENTITY_PROVIDER_NAME=provider)
    assert r.code == 0, r


def test_profile_identity_provider_name(cli, identity):
    assert cli.signin().code == 0
    provider = f"cognito-idp.{harness.REGION}.amazonaws.com/{cli.pool.pool_id}"
    config = cli.keyring.home / ".config" / "authctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    env = {"AUTHCTL_IDENTITY_POOL_ID": make_identity_pool(identity, provider, cli.client_id),
           "AWS_ENDPOINT_URL_COGNITO_IDENTITY": identity.url}
    config.write_text(f'[profiles.default]\nidentity_provider_name = "cognito-idp.eu-west-1.amazonaws.com/{cli.pool.pool_id}"\n')
    r = cli.run("aws-credentials", **env)
    assert r.code == 78 and "identity_provider_name" in r.err, r
    config.write_text(f'[profiles.default]\nidentity_provider_name = "{provider}"\n')
    r = cli.run("aws-credentials", **env)
    assert r.code == 0, r


class _Intercepted(_Forwarder):
    """Inside the proxy's tunnel: Cognito calls go to the fake; the key set is answered per host,
    the genuine one at the token's issuer and a forged one (same kid, another key) elsewhere."""

    def do_GET(self) -> None:
        host = (self.headers.get("Host") or "").split(":")[0]
        self.server.jwks_hosts.append(host)  # type: ignore[attr-defined]
        self.server.forge = not host.startswith("issuer-cognito-idp.")  # type: ignore[attr-defined]
        super().do_GET()


class _TLSInterceptingProxy(QuietHandler):
    """An HTTPS proxy (CONNECT) that ends the TLS itself with a certificate for the real AWS host
    names, signed by the test's CA: authctl runs with no endpoint override, as on a real host."""

    def do_CONNECT(self) -> None:
        self.send_response(200, "Connection established")
        self.end_headers()
        tunnel = self.server.tls.wrap_socket(self.connection, server_side=True)  # type: ignore[attr-defined]
        _Intercepted(tunnel, self.client_address, self.server)
        self.close_connection = True


@pytest.fixture
def aws_hosts(fake, pool, tmp_path):
    """HTTPS_PROXY and a CA that make https://cognito-idp.<region>.amazonaws.com and
    https://issuer-cognito-idp.<region>.amazonaws.com this test's, in front of the fake."""
    region = pool.pool_id.split("_")[0]
    hosts = [f"cognito-idp.{region}.amazonaws.com", f"issuer-cognito-idp.{region}.amazonaws.com"]
    ca, ca_key, cert, key = (tmp_path / n for n in ("ca.pem", "ca.key", "cert.pem", "key.pem"))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    subprocess.run(["openssl", "req", "-x509", *ec, "-keyout", str(ca_key), "-out", str(ca), "-days", "1",
                    "-subj", "/CN=authctl test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                    "-addext", "keyUsage=critical,keyCertSign"], check=True, capture_output=True)
    (tmp_path / "san.cnf").write_text("subjectAltName=" + ",".join(f"DNS:{h}" for h in hosts) + "\n")
    subprocess.run(["openssl", "req", *ec, "-keyout", str(key), "-out", str(tmp_path / "cert.csr"),
                    "-subj", f"/CN={hosts[0]}"], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", str(tmp_path / "cert.csr"), "-CA", str(ca), "-CAkey", str(ca_key),
                    "-CAcreateserial", "-out", str(cert), "-days", "1", "-extfile", str(tmp_path / "san.cnf")],
                   check=True, capture_output=True)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(str(cert), str(key))
    server = serve(_TLSInterceptingProxy, tls=tls, upstream=fake.endpoint, forge=False, jwks_gets=0, jwks_hosts=[])
    server.env = {"HTTPS_PROXY": f"http://127.0.0.1:{server.server_address[1]}", "AWS_CA_BUNDLE": str(ca),
                  "AUTHCTL_ENDPOINT": None, "NO_PROXY": None, "no_proxy": None}
    server.hosts = hosts
    yield server
    stop(server)


def test_verify_fetches_the_keys_from_the_issuer_not_the_regional_endpoint(cli, on_issuer, aws_hosts):
    """No endpoint override, a pool on the multi-Region issuer: `token --verify` and `whoami
    --verify` take the key set from the token's issuer (the regional endpoint serves a forged one
    here). An endpoint named explicitly is an emulator's: its own key set is used."""
    on_issuer("updated")
    env = aws_hosts.env
    assert cli.signin(**env).code == 0
    assert cli.keyring.session()["endpoint"].startswith("https://" + aws_hosts.hosts[0]), cli.keyring.session()
    r = cli.run("token", "--verify", **env)
    assert r.code == 0, r
    assert aws_hosts.jwks_hosts == [aws_hosts.hosts[1]], aws_hosts.jwks_hosts
    w = cli.run("whoami", "--verify", **env)
    assert w.code == 0, w
    # Named explicitly (as an emulator is), the endpoint's own set: here the forged one.
    named = dict(env, AUTHCTL_ENDPOINT=f"https://{aws_hosts.hosts[0]}")
    r = cli.run("token", "--verify", **named)
    assert r.code == 77 and "signature" in r.err, r
    assert aws_hosts.jwks_hosts[-1] == aws_hosts.hosts[0], aws_hosts.jwks_hosts
