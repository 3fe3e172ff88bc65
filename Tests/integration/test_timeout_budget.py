"""--timeout bounds the whole command: every attempt, the waits between
retries and a refresh draw from one budget. The old binary applied it per attempt, so a stalled
GetUser took three times --timeout plus the backoff (test_transport.py::test_stall_past_timeout
holds the retries to the bound; this file the refresh and the call after it)."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

from harness import iso_utc


def test_a_refresh_and_the_call_share_the_timeout(signed_in, fake):
    """Refresh (GetTokensFromRefreshToken, 2.5 s) then GetUser (2.5 s): 5 s of network with --timeout 4
    ends in time, at GetUser, instead of taking both in full."""
    past = iso_utc(datetime.now(timezone.utc) - timedelta(minutes=5))
    signed_in.keyring.rewrite_session(lambda s: s.update(accessTokenExpiresAt=past))
    fake.add_fault(operation="GetTokensFromRefreshToken", kind="stall", seconds=2.5, count=1)
    fake.add_fault(operation="GetUser", kind="stall", seconds=2.5, count=-1)
    started = time.monotonic()
    r = signed_in.run("whoami", "--timeout", "4", timeout=60)
    elapsed = time.monotonic() - started
    assert r.code == 69, r
    assert "time" in r.err, r
    assert elapsed < 8, f"took {elapsed:.1f}s with --timeout 4"
