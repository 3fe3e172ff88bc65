"""authctl token --client-credentials: machine-to-machine tokens from the managed login's token endpoint.

The token endpoint is fake_managed_login.py (moto has no managed login), standing in for the
pool's domain: it checks HTTP Basic against the app client's secret kept by moto, the client's
allowed flows and resource-server scopes, and counts requests, as Cognito bills each one.
The cache is a real gnome-keyring.
"""

from __future__ import annotations

import concurrent.futures
import socket
from datetime import datetime, timedelta, timezone

import harness
from managed_login import managed_login, oauth_env, oauth_pool  # noqa: F401 (fixtures)


def token_requests(server, since):
    return server.requests(since, path="/oauth2/token", grantType="client_credentials", status=200)


def test_token_printed_then_served_from_the_cache(cli, oauth_pool, managed_login):
    env = oauth_env(cli, oauth_pool, managed_login, "machine")
    since = 0
    r = cli.run("token", "--client-credentials", "--scope", "orders/read", env=env)
    assert r.code == 0, r
    token = r.out.strip()
    assert r.out == token + "\n" and r.err == ""
    claims = harness.jwt_claims(token)
    assert claims["client_id"] == oauth_pool.machine_client_id and claims["scope"] == "orders/read"
    assert claims["token_use"] == "access"
    assert len(token_requests(managed_login, since)) == 1
    assert managed_login.requests(since, path="/oauth2/token")[0]["basicAuth"] is True

    again = cli.run("token", "--client-credentials", "--scope", "orders/read", env=env)
    assert again.code == 0 and again.out.strip() == token, again
    assert len(token_requests(managed_login, since)) == 1, "the second call must come from the cache"
    # The secret and the token never reach a file of HOME.
    for f in cli.keyring.files():
        data = f.read_bytes()
        assert token.encode() not in data and oauth_pool.machine_secret.encode() not in data, f

    # Another scope set is another cache entry: one more request.
    other = cli.run("token", "--client-credentials", "--scope", "orders/read orders/write", env=env)
    assert other.code == 0, other
    assert harness.jwt_claims(other.out.strip())["scope"] == "orders/read orders/write"
    assert len(token_requests(managed_login, since)) == 2


def test_the_cache_is_keyed_by_domain(cli, oauth_pool, managed_login):
    """Domain A's cached token was handed out for domain B."""
    env = oauth_env(cli, oauth_pool, managed_login, "machine")
    since = 0
    first = cli.run("token", "--client-credentials", "--scope", "orders/read", env=env)
    assert first.code == 0, first
    other_domain = env["AUTHCTL_DOMAIN"].replace("127.0.0.1", "localhost")
    assert other_domain != env["AUTHCTL_DOMAIN"], env
    other = cli.run("token", "--client-credentials", "--scope", "orders/read", env={**env, "AUTHCTL_DOMAIN": other_domain})
    assert other.code == 0, other
    assert len(token_requests(managed_login, since)) == 2, "another domain's token is asked for, not taken from the cache"
    again = cli.run("token", "--client-credentials", "--scope", "orders/read", env=env)
    assert again.code == 0 and again.out == first.out, "the first domain's token is still cached"
    assert len(token_requests(managed_login, since)) == 2


def test_json_output_and_min_valid(cli, oauth_pool, managed_login):
    env = oauth_env(cli, oauth_pool, managed_login, "machine")
    r = cli.run("token", "--client-credentials", "--output", "json", env=env)
    assert r.code == 0, r
    doc = r.json()
    assert set(doc) == {"accessToken", "expiresAt", "scope", "tokenType"}
    assert doc["tokenType"] == "Bearer" and doc["scope"] == "orders/read orders/write"
    expires = harness.parse_instant(doc["expiresAt"])
    assert timedelta(minutes=55) < expires - datetime.now(timezone.utc) <= timedelta(hours=1, seconds=5)
    # Asking for more validity than the cached token has left makes a new request.
    before = len(managed_login.requests(0, path="/oauth2/token"))
    r2 = cli.run("token", "--client-credentials", "--min-valid", "3700", env=env)
    assert r2.code == 0, r2
    assert len(managed_login.requests(0, path="/oauth2/token")) == before + 1


def test_ten_concurrent_calls_on_an_empty_cache_make_one_request(cli, oauth_pool, managed_login):
    env = oauth_env(cli, oauth_pool, managed_login, "machine")
    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        results = list(pool.map(lambda _: cli.run("token", "--client-credentials", "--scope", "orders/read", env=env,
                                                  timeout=60), range(10)))
    assert all(r.code == 0 for r in results), results
    assert len({r.out for r in results}) == 1
    assert len(token_requests(managed_login, 0)) == 1


def test_wrong_secret_is_a_configuration_error_with_the_service_words(cli, oauth_pool, managed_login):
    env = oauth_env(cli, oauth_pool, managed_login, "machine", AUTHCTL_CLIENT_SECRET="not-the-secret")
    r = cli.run("token", "--client-credentials", env=env)
    assert r.code == 78, r
    assert "invalid_client" in r.err and r.out == ""
    assert "not-the-secret" not in r.err


def test_scope_not_allowed_and_client_without_the_flow(cli, oauth_pool, managed_login):
    env = oauth_env(cli, oauth_pool, managed_login, "machine")
    r = cli.run("token", "--client-credentials", "--scope", "orders/delete", env=env)
    assert r.code == 78 and "invalid_scope" in r.err, r
    conf = oauth_env(cli, oauth_pool, managed_login, "confidential")
    r = cli.run("token", "--client-credentials", env=conf)
    assert r.code == 78 and "unauthorized_client" in r.err, r


def test_no_store_without_a_keyring(cli, oauth_pool, managed_login, keyrings):
    nobus = keyrings("nobus")
    env = oauth_env(cli.with_keyring(nobus), oauth_pool, managed_login, "machine")
    for _ in range(2):
        r = cli.run("token", "--client-credentials", "--no-store", env=env)
        assert r.code == 0, r
        assert harness.jwt_claims(r.out.strip())["client_id"] == oauth_pool.machine_client_id
    assert len(token_requests(managed_login, 0)) == 2, "--no-store caches nothing"
    # Without --no-store the missing keyring is the usual configuration error.
    r = cli.run("token", "--client-credentials", env=env)
    assert r.code == 78 and "Secret Service" in r.err, r


def test_missing_domain_secret_and_plain_http_domain(cli, oauth_pool, managed_login, fake):
    # No domain: the user-pool API issues it (GetClientToken; test_token_exchange.py), not the token endpoint.
    env = oauth_env(cli, oauth_pool, managed_login, "machine", AUTHCTL_DOMAIN=None)
    mark = fake.mark()
    r = cli.run("token", "--client-credentials", "--no-store", env=env)
    assert r.code == 0, r
    assert len(fake.calls(mark, operation="GetClientToken")) == 1 and not token_requests(managed_login, mark)
    env = oauth_env(cli, oauth_pool, managed_login, "machine", AUTHCTL_DOMAIN="http://auth.example.com")
    r = cli.run("token", "--client-credentials", env=env)
    assert r.code == 78 and "http://" in r.err, r
    env = oauth_env(cli, oauth_pool, managed_login, "machine", AUTHCTL_CLIENT_SECRET=None)
    r = cli.run("token", "--client-credentials", "--no-store", env=env)
    assert r.code == 78 and "secret" in r.err, r


def test_html_answer_is_unreachable(cli, oauth_pool, managed_login):
    managed_login.configure(tokenEndpointHtml=True)
    env = oauth_env(cli, oauth_pool, managed_login, "machine")
    r = cli.run("token", "--client-credentials", env=env)
    assert r.code == 69 and "not JSON" in r.err, r


def test_exec_puts_the_machine_token_in_the_environment(cli, oauth_pool, managed_login):
    env = oauth_env(cli, oauth_pool, managed_login, "machine")
    r = cli.run("exec", "--client-credentials", "--scope", "orders/write", "--", "sh", "-c",
                'printf "%s\\n" "$AUTHCTL_ACCESS_TOKEN" "${AUTHCTL_ID_TOKEN-unset}" "${AUTHCTL_CLIENT_SECRET-unset}"', env=env)
    assert r.code == 0, r
    token, id_token, secret = r.out.splitlines()
    assert harness.jwt_claims(token)["scope"] == "orders/write" and id_token == "unset" and secret == "unset"


def test_an_unreachable_domain_with_a_replica_says_the_managed_login_does_not_fail_over(cli, oauth_pool, managed_login):
    """The client-credentials grant exists only at the managed-login domain. Cognito fails a
    custom domain over to a replica by DNS (its Routing.Failover: a Route 53 health check), never by
    another host name the client would pick, and a prefix domain serves its own region only; so with
    a replica configured authctl says so rather than pretend to fail over."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    env = oauth_env(cli, oauth_pool, managed_login, "machine", AUTHCTL_DOMAIN=f"http://127.0.0.1:{closed}",
                    AUTHCTL_FAILOVER_REGION="us-west-2")
    r = cli.run("token", "--client-credentials", "--timeout", "5", env=env)
    assert r.code == 69, r
    assert "does not fail the managed login over to the replica" in r.err and "Route 53" in r.err, r
    without = cli.run("token", "--client-credentials", "--timeout", "5", env={**env, "AUTHCTL_FAILOVER_REGION": ""})
    assert without.code == 69 and "replica" not in without.err, without
    # A refusal is no outage: nothing said about failover.
    refused = cli.run("token", "--client-credentials", env={**oauth_env(cli, oauth_pool, managed_login, "machine",
                                                                        AUTHCTL_CLIENT_SECRET="wrong"),
                                                           "AUTHCTL_FAILOVER_REGION": "us-west-2"})
    assert refused.code == 78 and "replica" not in refused.err, refused
