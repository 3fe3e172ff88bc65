"""What `exec` hands its command: only the token(s) --type asks for, and
never the app client's secret, which the old binary passed on from its own environment."""

from __future__ import annotations


def child_env(cli, *args: str, **extra) -> dict[str, str]:
    r = cli.run("exec", *args, "--", "env", "-0", **extra)
    assert r.code == 0, r
    return dict(item.split("=", 1) for item in r.out.split("\0") if item)


def test_exec_child_gets_no_client_secret(any_cli):
    """AUTHCTL_CLIENT_SECRET is authctl's own input: the command never sees it."""
    assert any_cli.signin().code == 0
    env = child_env(any_cli, AUTHCTL_CLIENT_SECRET=any_cli.pool.client_secret)
    assert "AUTHCTL_CLIENT_SECRET" not in env
    assert any_cli.pool.client_secret not in "\0".join(env.values())


def test_exec_child_gets_only_the_tokens_asked_for(cli):
    assert cli.signin().code == 0
    session = cli.keyring.session()
    env = child_env(cli)
    assert env["AUTHCTL_TOKEN"] == env["AUTHCTL_ACCESS_TOKEN"] == session["accessToken"]
    assert "AUTHCTL_ID_TOKEN" not in env
    assert session["idToken"] not in "\0".join(env.values())

    env = child_env(cli, "--type", "id")
    assert env["AUTHCTL_TOKEN"] == env["AUTHCTL_ID_TOKEN"] == session["idToken"]
    assert "AUTHCTL_ACCESS_TOKEN" not in env

    # A token already in authctl's own environment (a nested exec) is not passed on either.
    env = child_env(cli, "--type", "id", AUTHCTL_ACCESS_TOKEN="stale-token-from-outside")
    assert "AUTHCTL_ACCESS_TOKEN" not in env

    env = child_env(cli, "--type", "access", "--type", "id")
    assert env["AUTHCTL_TOKEN"] == session["accessToken"]
    assert env["AUTHCTL_ID_TOKEN"] == session["idToken"]
