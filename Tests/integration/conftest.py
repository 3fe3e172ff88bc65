"""pytest fixtures for authctl's integration tests.

Session-wide: a moto server and the SRP-checking fake in front of it (`fake`), and a boto3
client that talks to the fake (`cognito`). Per test: a fresh user pool (`pool`), a private
Secret Service in a temporary HOME (`keyring`, or several via `keyrings`), and `cli`, which
runs the built authctl against both with an environment built from scratch.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable, Iterator

import pytest

import harness
from harness import Cli, FakeServer, Keyring, MotoServer, Pool


@pytest.fixture(scope="session")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="authctl-it-") as d:
        yield Path(d)


@pytest.fixture(scope="session")
def moto(workdir: Path) -> Iterator[MotoServer]:
    server = MotoServer(workdir).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def fake(moto: MotoServer, workdir: Path) -> Iterator[FakeServer]:
    server = FakeServer(moto.url, workdir).start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _clean_faults(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "fake" in request.fixturenames:
        fake: FakeServer = request.getfixturevalue("fake")
        fake.clear_faults()
        fake.set_config(revokeToken="fake", checkExplicitAuthFlows=True, getTokensFromRefreshToken="upstream",
                        nextSessions=[], logBodies=False)


@pytest.fixture(autouse=True)
def _requests_fit_the_model(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails a test during which any request to the fake did not fit botocore's model of its
    operation (fake_cognito/model_check.py), unless the test is marked `model_violations` (it
    sends such requests on purpose)."""
    if "fake" not in request.fixturenames or request.node.get_closest_marker("model_violations"):
        yield
        return
    fake: FakeServer = request.getfixturevalue("fake")
    mark = fake.mark()
    yield
    bad = [c for c in fake.calls(mark) if c.get("modelViolation")]
    assert not bad, "requests that do not fit botocore's model: " + "; ".join(
        f"{c['operation']}: {', '.join(c['modelViolation'])}" for c in bad)


@pytest.fixture(scope="session")
def cognito(fake: FakeServer):
    """boto3 cognito-idp client whose calls go through the fake (so it learns passwords)."""
    return harness.cognito_client(fake.url)


@pytest.fixture
def pool(cognito) -> Pool:
    return harness.make_pool(cognito)


@pytest.fixture
def keyrings(tmp_path: Path) -> Iterator[Callable[..., Keyring]]:
    """Factory: keyrings(mode="keyring", name="device") -> a started Keyring. Any number may
    run at once, each with its own HOME and session bus (two devices for sign-out tests)."""
    made: list[Keyring] = []

    def make(mode: str = "keyring", name: str = "device") -> Keyring:
        k = Keyring(mode, parent=tmp_path, name=name).start()
        made.append(k)
        return k

    yield make
    for k in made:
        k.stop()


@pytest.fixture
def keyring(keyrings) -> Keyring:
    return keyrings()


@pytest.fixture
def cli(pool: Pool, keyring: Keyring, fake: FakeServer) -> Cli:
    return Cli(pool, keyring, fake.endpoint)


@pytest.fixture(params=["public", "secret"])
def any_cli(request: pytest.FixtureRequest, pool: Pool, keyring: Keyring, fake: FakeServer) -> Cli:
    """The same test with the public app client and with the one that has a client secret."""
    return Cli(pool, keyring, fake.endpoint, secret_client=request.param == "secret")


@pytest.fixture(scope="session")
def authctl_binary() -> Path:
    return harness.authctl_bin()


@pytest.fixture
def signed_in(cli: Cli) -> Cli:
    """`cli` with alice signed in."""
    r = cli.signin()
    assert r.code == 0, r
    return cli


@pytest.fixture
def any_signed_in(any_cli: Cli) -> Cli:
    """`any_cli` (public and confidential client) with alice signed in."""
    r = any_cli.signin()
    assert r.code == 0, r
    return any_cli
