"""The managed-login fake (fake_managed_login.py) as a per-test process, and a pool set up for OAuth.

`oauth_pool` adds to the test's pool what the managed login needs: a resource server (orders,
with the scopes orders/read and orders/write), an OIDC identity provider ExampleIdP, a public
browser client and a confidential one (authorization code, CallbackURLs http://localhost:PORT/callback
at a free port, LogoutURLs .../signed-out) and a machine client (client_credentials). Test files
import these fixtures: `from managed_login import managed_login, oauth_pool  # noqa: F401`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

import harness
from harness import Cli, FakeServer, Keyring, Pool

FAKE_MANAGED_LOGIN = harness.HERE / "fake_managed_login.py"
USER_SCOPES = ["openid", "email", "profile", "aws.cognito.signin.user.admin"]
FLOWS = ["ALLOW_REFRESH_TOKEN_AUTH", "ALLOW_ADMIN_USER_PASSWORD_AUTH", "ALLOW_USER_SRP_AUTH"]


@dataclass
class OAuthPool:
    pool: Pool
    redirect_port: int
    browser_client_id: str
    confidential_client_id: str
    confidential_secret: str
    machine_client_id: str
    machine_secret: str

    @property
    def redirect_uri(self) -> str:
        return f"http://localhost:{self.redirect_port}/callback"


def setup_oauth_pool(cognito, pool: Pool, redirect_port: int | None = None) -> OAuthPool:
    port = redirect_port or harness.free_port()
    cognito.create_resource_server(UserPoolId=pool.pool_id, Identifier="orders", Name="Orders",
                                   Scopes=[{"ScopeName": "read", "ScopeDescription": "read"},
                                           {"ScopeName": "write", "ScopeDescription": "write"}])
    cognito.create_identity_provider(UserPoolId=pool.pool_id, ProviderName="ExampleIdP", ProviderType="OIDC",
                                     ProviderDetails={"client_id": "idp-client", "authorize_scopes": "openid",
                                                      "oidc_issuer": "https://idp.example.com", "attributes_request_method": "GET"})
    browser = dict(AllowedOAuthFlows=["code"], AllowedOAuthScopes=USER_SCOPES, AllowedOAuthFlowsUserPoolClient=True,
                   CallbackURLs=[f"http://localhost:{port}/callback"], LogoutURLs=[f"http://localhost:{port}/signed-out"],
                   SupportedIdentityProviders=["COGNITO", "ExampleIdP"], ExplicitAuthFlows=FLOWS)
    public = cognito.create_user_pool_client(UserPoolId=pool.pool_id, ClientName="browser", **browser)["UserPoolClient"]
    conf = cognito.create_user_pool_client(UserPoolId=pool.pool_id, ClientName="browser-confidential", GenerateSecret=True,
                                           **browser)["UserPoolClient"]
    machine = cognito.create_user_pool_client(UserPoolId=pool.pool_id, ClientName="machine", GenerateSecret=True,
                                              AllowedOAuthFlows=["client_credentials"], AllowedOAuthFlowsUserPoolClient=True,
                                              AllowedOAuthScopes=["orders/read", "orders/write"])["UserPoolClient"]
    return OAuthPool(pool, port, public["ClientId"], conf["ClientId"], conf["ClientSecret"],
                     machine["ClientId"], machine["ClientSecret"])


class ManagedLoginServer:
    """fake_managed_login.py for one pool, on a free loopback port."""

    def __init__(self, cognito_url: str, pool_id: str, workdir: Path):
        self.cognito_url, self.pool_id = cognito_url, pool_id
        self.log_path = workdir / f"managed-login-{pool_id}.jsonl"
        self.proc: subprocess.Popen | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "ManagedLoginServer":
        self.log_path.touch()
        self.proc = subprocess.Popen(
            [sys.executable, str(FAKE_MANAGED_LOGIN), "--cognito", self.cognito_url, "--user-pool-id", self.pool_id,
             "--port", "0", "--log", str(self.log_path)],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True, text=True)
        m = re.match(r"PORT (\d+)", self.proc.stdout.readline() or "")
        if not m:
            self.stop()
            raise RuntimeError("fake_managed_login did not start")
        self.port = int(m.group(1))
        return self

    def stop(self) -> None:
        if self.proc:
            harness._kill_group(self.proc)

    def requests(self, since: float = 0.0, **match: Any) -> list[dict[str, Any]]:
        with open(self.log_path, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        return [r for r in rows if r["ts"] >= since and all(r.get(k) == v for k, v in match.items())]

    def configure(self, **config: Any) -> None:
        req = urllib.request.Request(self.url + "/_managed/config", data=json.dumps(config).encode(), method="POST")
        urllib.request.urlopen(req, timeout=10).read()


@pytest.fixture
def oauth_pool(cognito, pool: Pool) -> OAuthPool:
    return setup_oauth_pool(cognito, pool)


@pytest.fixture
def managed_login(fake: FakeServer, pool: Pool, workdir: Path) -> Iterator[ManagedLoginServer]:
    server = ManagedLoginServer(fake.url, pool.pool_id, workdir).start()
    yield server
    server.stop()


def oauth_env(cli: Cli, oauth: OAuthPool, server: ManagedLoginServer, client: str = "browser", **extra: str | None) -> dict[str, str]:
    """authctl's environment for one of the OAuth clients, with AUTHCTL_DOMAIN set."""
    ids = {"browser": (oauth.browser_client_id, None), "confidential": (oauth.confidential_client_id, oauth.confidential_secret),
           "machine": (oauth.machine_client_id, oauth.machine_secret)}
    client_id, secret = ids[client]
    settings = {"AUTHCTL_CLIENT_ID": client_id, "AUTHCTL_CLIENT_SECRET": secret, "AUTHCTL_DOMAIN": server.url}
    return cli.env(**{**settings, **extra})


def wait_until(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()
