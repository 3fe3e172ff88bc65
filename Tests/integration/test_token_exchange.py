"""`token --audience/--resource` (GetDerivedToken), `exec --audience`, and `token
--client-credentials` without a managed-login domain (GetClientToken).

moto has neither operation: the fake answers them as the service does (fake_cognito/
token_exchange.py: shapes and error codes from botocore 1.44.8's model, every request validated
against it; tokens signed with moto's key).
"""

from __future__ import annotations

import types

import pytest

from harness import jwt_claims
from test_refresh_race import start_together

ORDERS = "https://orders.example"
READ, WRITE = f"{ORDERS}/read", f"{ORDERS}/write"


@pytest.fixture
def exchanging(cli, cognito, fake):
    """A client allowed to exchange tokens, a resource server, alice signed in with it; the pool's
    pre-token-generation trigger (as the fake plays it) adds the orders scopes to access tokens."""
    pool = cli.pool
    cognito.create_resource_server(UserPoolId=pool.pool_id, Identifier=ORDERS, Name="orders",
                                   Scopes=[{"ScopeName": "read", "ScopeDescription": "r"},
                                           {"ScopeName": "write", "ScopeDescription": "w"}])
    client_id = cognito.create_user_pool_client(
        UserPoolId=pool.pool_id, ClientName="exchanger", AllowedOAuthScopes=[READ, WRITE],
        ExplicitAuthFlows=["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH", "ALLOW_TOKEN_EXCHANGE_IMPERSONATION",
                           "ALLOW_TOKEN_EXCHANGE_DELEGATION"])["UserPoolClient"]["ClientId"]
    fake.set_config(preTokenScopes={pool.pool_id: [READ, WRITE]})
    env = {"AUTHCTL_CLIENT_ID": client_id}
    assert cli.signin(**env).code == 0
    return types.SimpleNamespace(run=lambda *a, **kw: cli.run(*a, **env, **kw), env=lambda: cli.env(**env),
                                 client_id=client_id, keyring=cli.keyring)


def test_derived_token_for_one_audience_cached_for_racers_removed_by_signout(exchanging, fake):
    mark = fake.mark()
    results = start_together(exchanging, 20, "--audience", ORDERS, "--scope", READ)
    assert all(code == 0 for code, _, _ in results), results
    tokens = {out.strip() for _, out, _ in results}
    assert len(tokens) == 1, "every racer printed the one token"
    assert len(fake.calls(mark, operation="GetDerivedToken")) == 1, "one request for 20 racers"
    claims = jwt_claims(tokens.pop())
    assert claims["aud"] == ORDERS and claims["scope"] == READ and "act" not in claims

    j = exchanging.run("token", "--audience", ORDERS, "--scope", READ, "--output", "json")
    assert j.code == 0, j
    doc = j.json()
    assert doc["audience"] == ORDERS and doc["scopes"] == [READ] and doc["type"] == "access" and doc["expiresAt"]
    assert len(fake.calls(mark, operation="GetDerivedToken")) == 1, "served from the cache"
    # Another scope set is another entry of the cache; the child of exec gets that token only.
    e = exchanging.run("exec", "--audience", ORDERS, "--scope", WRITE, "--", "sh", "-c",
                       'printf "%s|%s" "$AUTHCTL_TOKEN" "${AUTHCTL_ID_TOKEN:-none}"')
    assert e.code == 0, e
    token, id_token = e.out.split("|")
    assert jwt_claims(token)["scope"] == WRITE and id_token == "none"
    assert len(exchanging.keyring.session()["derivedTokens"]) == 2

    assert exchanging.run("signout").code == 0
    assert exchanging.keyring.session() is None, "the derived tokens went with the session"


def test_actor_token_from_stdin_only_and_refusals(exchanging, fake, cli):
    actor = exchanging.keyring.session()["accessToken"]
    mark = fake.mark()
    r = exchanging.run("token", "--resource", ORDERS, "--actor-token-stdin", input=actor + "\n")
    assert r.code == 0, r
    claims = jwt_claims(r.out.strip())
    assert claims["act"]["sub"] == jwt_claims(actor)["sub"] and claims["aud"] == ORDERS
    # No option takes the actor token on the command line; a non-token on stdin is refused first.
    assert exchanging.run("token", "--audience", ORDERS, "--actor-token", actor).code == 64
    assert exchanging.run("token", "--audience", ORDERS, "--actor-token-stdin", input="not a token\n").code == 64
    assert exchanging.run("token", "--audience", ORDERS, "--resource", ORDERS).code == 64
    assert len(fake.calls(mark, operation="GetDerivedToken")) == 1

    # A scope the access token lacks: said, and the token has what was granted.
    w = exchanging.run("token", "--audience", ORDERS, "--scope", "aws.cognito.signin.user.admin",
                       "--scope", f"{ORDERS}/delete")
    assert w.code == 0 and "did not grant" in w.err and f"{ORDERS}/delete" in w.err, w
    unknown = exchanging.run("token", "--audience", "https://nowhere.example")
    assert unknown.code == 78 and "knows no audience" in unknown.err, unknown
    # The pool's own client may not exchange tokens.
    assert cli.signin().code == 0
    refused = cli.run("token", "--audience", ORDERS)
    assert refused.code == 78 and "ALLOW_TOKEN_EXCHANGE_IMPERSONATION" in refused.err, refused


def test_client_credentials_without_a_domain_use_get_client_token(cli, cognito, fake):
    pool = cli.pool
    cognito.create_resource_server(UserPoolId=pool.pool_id, Identifier=ORDERS, Name="orders",
                                   Scopes=[{"ScopeName": "read", "ScopeDescription": "r"}])
    made = cognito.create_user_pool_client(UserPoolId=pool.pool_id, ClientName="machine", GenerateSecret=True,
                                           ExplicitAuthFlows=[], AllowedOAuthScopes=[READ])["UserPoolClient"]
    env = {"AUTHCTL_CLIENT_ID": made["ClientId"], "AUTHCTL_CLIENT_SECRET": made["ClientSecret"]}
    mark = fake.mark()
    r = cli.run("token", "--client-credentials", "--output", "json", **env)
    assert r.code == 0, r
    claims = jwt_claims(r.json()["accessToken"])
    assert claims["client_id"] == made["ClientId"] and claims["scope"] == READ
    assert cli.run("token", "--client-credentials", **env).code == 0
    assert len(fake.calls(mark, operation="GetClientToken")) == 1, "cached"
    # A client with user sign-in flows cannot.
    user_client = cli.run("token", "--client-credentials", "--no-store", AUTHCTL_CLIENT_ID=pool.secret_client_id,
                          AUTHCTL_CLIENT_SECRET=pool.client_secret)
    assert user_client.code == 78 and "ALLOW_CLIENT_TOKEN_AUTH" in user_client.err, user_client


def test_a_profile_with_a_domain_can_take_machine_tokens_from_the_api(cli, cognito, fake):
    """`machine_tokens = "api"` in the profile: GetClientToken even where a managed-login domain is
    configured (kept for browser sign-ins); without it the domain's token endpoint is asked (here
    nothing listens there); a value it does not know is a configuration error, before any request."""
    pool = cli.pool
    made = cognito.create_user_pool_client(UserPoolId=pool.pool_id, ClientName="machine", GenerateSecret=True,
                                           ExplicitAuthFlows=[])["UserPoolClient"]
    env = {"AUTHCTL_CLIENT_ID": made["ClientId"], "AUTHCTL_CLIENT_SECRET": made["ClientSecret"],
           "AUTHCTL_DOMAIN": "http://127.0.0.1:9"}
    config = cli.keyring.home / ".config" / "authctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    mark = fake.mark()
    endpoint = cli.run("token", "--client-credentials", "--no-store", **env)
    assert endpoint.code == 69 and fake.calls(mark, operation="GetClientToken") == [], endpoint
    config.write_text('[profiles.default]\nmachine_tokens = "api"\n')
    api = cli.run("token", "--client-credentials", "--no-store", "--output", "json", **env)
    assert api.code == 0, api
    assert jwt_claims(api.json()["accessToken"])["client_id"] == made["ClientId"]
    assert len(fake.calls(mark, operation="GetClientToken")) == 1
    config.write_text('[profiles.default]\nmachine_tokens = "sometimes"\n')
    mark = fake.mark()
    wrong = cli.run("token", "--client-credentials", "--no-store", **env)
    assert wrong.code == 78 and "machine_tokens" in wrong.err and "api or managed-login" in wrong.err, wrong
    assert fake.calls(mark) == []

