"""The libcurl transport under faults injected by the fake: retries where repeating is safe,
exit codes 69/75, bounded time, no crash, no lost session."""

from __future__ import annotations

import time

import pytest

from harness import free_port


def getuser_calls(fake, mark):
    return fake.calls(mark, operation="GetUser")


def assert_session_kept(cli, before):
    assert cli.keyring.session() == before, "a failed call must not lose or change the session"


def assert_no_crash(r):
    assert 0 < r.code < 128, r
    assert "Fatal error" not in r.err and "Stack dump" not in r.err, r


def test_service_unreachable(cli):
    port = free_port()  # nothing listens there
    started = time.monotonic()
    r = cli.run("signin", "--username", "alice", "--password-stdin", input="x\n",
                AUTHCTL_ENDPOINT=f"http://127.0.0.1:{port}/")
    assert r.code == 69, r
    assert time.monotonic() - started < 25


def test_5xx_once_is_retried(signed_in, fake):
    before = signed_in.keyring.session()
    fake.add_fault(operation="GetUser", kind="status", status=503)
    mark = fake.mark()
    r = signed_in.run("whoami", "--output", "json")
    assert r.code == 0, r
    assert [c.get("status") for c in getuser_calls(fake, mark)] == [503, 200]
    assert_session_kept(signed_in, before)


def test_dropped_connection_is_retried(signed_in, fake):
    fake.add_fault(operation="GetUser", kind="drop")
    mark = fake.mark()
    r = signed_in.run("whoami")
    assert r.code == 0, r
    assert len(getuser_calls(fake, mark)) == 2


def test_persistent_5xx_gives_69_after_three_attempts(signed_in, fake):
    before = signed_in.keyring.session()
    fake.add_fault(operation="GetUser", kind="status", status=500, count=-1)
    mark = fake.mark()
    r = signed_in.run("whoami")
    assert r.code == 69, r
    assert len(getuser_calls(fake, mark)) == 3
    assert_session_kept(signed_in, before)


def test_persistent_throttling_gives_75(signed_in, fake):
    before = signed_in.keyring.session()
    fake.add_fault(operation="GetUser", kind="throttle", count=-1)
    mark = fake.mark()
    r = signed_in.run("whoami")
    assert r.code == 75, r
    assert len(getuser_calls(fake, mark)) == 3
    assert_session_kept(signed_in, before)


def test_html_error_page_names_the_status(signed_in, fake):
    before = signed_in.keyring.session()
    fake.add_fault(operation="GetUser", kind="html", status=502, count=-1)
    r = signed_in.run("whoami")
    assert r.code == 69, r
    assert "502" in r.err, r
    assert "<html" not in r.err.lower()
    assert_no_crash(r)
    assert_session_kept(signed_in, before)


@pytest.mark.parametrize("kind", ["truncate", "huge"])
def test_broken_bodies_do_not_crash(signed_in, fake, kind):
    before = signed_in.keyring.session()
    fake.add_fault(operation="GetUser", kind=kind, count=-1)
    r = signed_in.run("whoami")
    assert_no_crash(r)
    assert_session_kept(signed_in, before)


def test_stall_past_timeout(signed_in, fake):
    before = signed_in.keyring.session()
    fake.add_fault(operation="GetUser", kind="stall", seconds=20, count=-1)
    started = time.monotonic()
    r = signed_in.run("whoami", "--timeout", "3", timeout=60)
    elapsed = time.monotonic() - started
    assert r.code == 69, r
    # --timeout bounds the whole command, retries included (it was per attempt: > 9 s here).
    assert elapsed < 7.5, f"took {elapsed:.1f}s with --timeout 3"
    assert_session_kept(signed_in, before)


def test_signin_refused_challenge_is_not_repeated(cli, fake):
    """A refused PASSWORD_VERIFIER (4xx) is an answer, not a transport failure: one attempt."""
    mark = fake.mark()
    r = cli.signin("alice", "Wrong-Passw0rd!")
    assert r.code == 77, r
    assert len(fake.calls(mark, operation="RespondToAuthChallenge")) == 1
