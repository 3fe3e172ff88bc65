"""Passkeys: `passkey add / list / remove` and `signin|token --method passkey` with the
built binary, its real libfido2 and a real gnome-keyring.

Both ends are fakes, and why: moto has no WebAuthn at all, so fake_cognito/passkeys.py plays the
four operations and the WEB_AUTHN challenge, but verifies every registration and assertion with a
real relying-party library (py_webauthn); and no hardware key is attached to a test machine, so
soft_fido.py is a software CTAP2 authenticator behind `--fido-device unix:PATH`, reached through
libfido2's own CTAPHID, clientPIN and CBOR code. A wrong origin, relying party, challenge,
signature or counter is refused by py_webauthn, not by the fakes' own checks.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from soft_fido import SoftAuthenticator
from test_binary import _any, _loaded, _stand_in_library
from test_mfa_terminal import terminals  # noqa: F401  (fixture)
from test_passwordless import allow_first_factors

FACTORS = ["PASSWORD", "WEB_AUTHN"]


@pytest.fixture
def sockets():
    """A short directory for the authenticators' sockets (a Unix socket path is at most 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="fido", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def authenticators(sockets):
    made: list[SoftAuthenticator] = []

    def make(name: str = "key", **modes) -> SoftAuthenticator:
        auth = SoftAuthenticator(str(sockets / f"{name}.sock"), **modes).start()
        made.append(auth)
        return auth

    yield make
    for auth in made:
        auth.stop()


@pytest.fixture
def key(authenticators) -> SoftAuthenticator:
    return authenticators()


@pytest.fixture(autouse=True)
def _passkey_config(fake):
    yield
    fake.set_config(passkeyRelyingPartyId=None, passkeyOptionsRelyingPartyId=None, passkeyOrigin=None,
                    passkeyUserVerification=None, passkeyPageSize=None, passkeyTimeout=None, passkeysDisabled=None,
                    passkeyMfaUsers=[], passkeyUsers=[], passkeyFactorConfiguration=None,
                    passkeyOptionsUserVerification=None)


@pytest.fixture
def passkey_cli(cognito, pool, signed_in):
    """alice signed in with her password, in a pool that allows passkeys."""
    allow_first_factors(cognito, pool, FACTORS)
    return signed_in


RP = "auth.example.com"  # the fake's relying party


def add(cli, key, *more, **kw):
    return cli.run("passkey", "add", "--fido-device", key.device, "--rp-id", RP, *more, **kw)


def passkey_signin(cli, key, *more, **kw):
    return cli.run("signin", "--username", "alice", "--method", "passkey", "--fido-device", key.device, *more, **kw)


def test_register_list_sign_in_token_remove(passkey_cli, key, fake):
    cli = passkey_cli
    r = add(cli, key, "--output", "json")
    assert r.code == 0, r
    assert "Touch your security key" in r.err
    added = r.json()
    assert added["credentialId"] == SoftAuthenticator.b64(key.credentials[0].id)
    assert added["relyingPartyId"] == "auth.example.com" and added["name"] == "Security key 1"

    listed = cli.run("passkey", "list", "--output", "json")
    assert listed.code == 0, listed
    [only] = listed.json()["passkeys"]
    assert only["credentialId"] == added["credentialId"] and only["transports"] == ["usb"]
    assert only["relyingPartyId"] == "auth.example.com" and only["attachment"] == "cross-platform"
    text = cli.run("passkey", "list")
    assert added["credentialId"] in text.out and "Security key 1" in text.out

    mark = fake.mark()
    r = passkey_signin(cli, key)
    assert r.code == 0, r
    assert "Signed in as alice" in r.err and "Touch your security key" in r.err
    assert any("WEB_AUTHN passkey" in (c.get("note") or "") for c in fake.calls(mark))
    assert key.credentials[0].counter == 1

    assert cli.run("signout").code == 0
    r = cli.run("token", "--username", "alice", "--method", "passkey", "--fido-device", key.device)
    assert r.code == 0, r
    assert r.out.count(".") == 2  # a JWT
    assert key.credentials[0].counter == 2

    r = cli.run("passkey", "remove", added["credentialId"], "--yes", "--output", "json")
    assert r.code == 0 and r.json()["credentialId"] == added["credentialId"], r
    assert cli.run("passkey", "list", "--output", "json").json()["passkeys"] == []
    r = cli.run("passkey", "remove", added["credentialId"], "--yes")
    assert r.code == 65 and "no passkey" in r.err, r

    # Refused after removal: no longer offered ...
    r = passkey_signin(cli, key)
    assert r.code == 65 and "--method passkey is not offered" in r.err, r
    # ... and, where the pool still offers WEB_AUTHN, the key's old passkey is refused by the service.
    fake.set_config(passkeyUsers=["alice"])
    r = passkey_signin(cli, key)
    assert r.code == 77, r


def test_remove_asks_first_and_needs_yes_without_a_terminal(passkey_cli, key):
    assert add(passkey_cli, key).code == 0
    credential = SoftAuthenticator.b64(key.credentials[0].id)
    r = passkey_cli.run("passkey", "remove", credential)
    assert r.code == 64 and "--yes" in r.err, r


def test_a_key_already_registered_is_excluded(passkey_cli, key):
    assert add(passkey_cli, key).code == 0
    r = add(passkey_cli, key)
    assert r.code == 65 and "already holds a passkey" in r.err, r
    assert len(key.credentials) == 1
    assert len(passkey_cli.run("passkey", "list", "--output", "json").json()["passkeys"]) == 1


def test_every_page_is_listed(passkey_cli, authenticators, fake):
    for name in ("a", "b", "c"):
        assert add(passkey_cli, authenticators(name)).code == 0
    fake.set_config(passkeyPageSize=1)
    mark = fake.mark()
    listed = passkey_cli.run("passkey", "list", "--output", "json").json()["passkeys"]
    assert [p["name"] for p in listed] == ["Security key 1", "Security key 2", "Security key 3"]
    assert len(fake.calls(mark, operation="ListWebAuthnCredentials")) == 3


def test_pin_from_a_descriptor_and_a_wrong_pin(passkey_cli, authenticators, fake):
    key = authenticators(pin="4321")
    fake.set_config(passkeyUserVerification="required")
    r = add(passkey_cli, key, "--pin-fd", "0", input="4321\n")
    assert r.code == 0, r
    r = passkey_signin(passkey_cli, key, "--pin-fd", "0", input="1111\n")
    assert r.code == 77 and "wrong PIN" in r.err and "7 tries left" in r.err, r
    r = passkey_signin(passkey_cli, key, "--pin-fd", "0", input="4321\n")
    assert r.code == 0, r
    # Without a terminal or --pin-fd, the PIN is never guessed or taken from the command line.
    r = passkey_signin(passkey_cli, key)
    assert r.code == 64 and "--pin-fd" in r.err, r


def test_verification_discouraged(passkey_cli, authenticators, fake):
    """A key with a PIN still needs it to register (CTAP 2.0); signing in then asks none."""
    key = authenticators(pin="2468")
    fake.set_config(passkeyUserVerification="discouraged")
    assert add(passkey_cli, key, "--pin-fd", "0", input="2468\n").code == 0
    r = passkey_signin(passkey_cli, key)
    assert r.code == 0 and "PIN" not in r.err, r


def test_required_verification_needs_a_pin_on_the_key(passkey_cli, key, fake):
    fake.set_config(passkeyUserVerification="required")
    r = add(passkey_cli, key)
    assert r.code == 78 and "no PIN set" in r.err, r


def test_built_in_verification(passkey_cli, authenticators, fake):
    key = authenticators(builtin_uv=True)
    fake.set_config(passkeyUserVerification="required")
    assert add(passkey_cli, key).code == 0
    assert passkey_signin(passkey_cli, key).code == 0


def test_no_device(passkey_cli, sockets, fake):
    """A --fido-device path that is not there is "no such device", checked before libfido2 opens it
    (which said FIDO_ERR_INTERNAL twice); the same check serves a passkey sign-in (SecurityKeyUse).
    No key is known before the first request: nothing is asked of the service."""
    mark = fake.mark()
    for device in (f"unix:{sockets}/none.sock", "/dev/hidraw-not-there"):
        r = passkey_cli.run("passkey", "add", "--rp-id", RP, "--fido-device", device)
        assert r.code == 69 and f"no such device: {device}" in r.err, r
        assert "FIDO_ERR" not in r.err, r
    r = passkey_cli.run("passkey", "add", "--rp-id", RP, env=passkey_cli.env(SSH_CONNECTION="10.0.0.1 5 10.0.0.2 22"))
    assert r.code == 69 and "no security key found" in r.err and "signin --browser" in r.err, r
    assert fake.calls(mark) == [], fake.calls(mark)


def test_of_several_keys_the_one_touched(passkey_cli, authenticators):
    """Several keys named (or attached): authctl says so and uses the one the person touches
    (libfido2's touch request on each); here the second key is touched, the first never is."""
    untouched, touched = authenticators("untouched", touch_delay=60), authenticators("touched", touch_delay=0.3)
    r = passkey_cli.run("passkey", "add", "--rp-id", RP, "--fido-device", untouched.device, "--fido-device",
                        touched.device)
    assert r.code == 0, r
    assert "touch the one to use" in r.err and f"Using the security key at {touched.device}" in r.err, r
    assert len(touched.credentials) == 1 and untouched.credentials == []


def test_a_blocked_pin(passkey_cli, authenticators):
    key = authenticators(pin="2468")
    assert add(passkey_cli, key, "--pin-fd", "0", input="2468\n").code == 0
    key.retries = 1
    r = passkey_signin(passkey_cli, key, "--pin-fd", "0", input="0000\n")
    assert r.code == 77 and "PIN is blocked" in r.err, r


def test_not_signed_in_and_passkeys_not_enabled(cli, cognito, pool, key, fake):
    allow_first_factors(cognito, pool, FACTORS)
    for args in (["passkey", "add", "--fido-device", key.device, "--rp-id", RP], ["passkey", "list"],
                 ["passkey", "remove", "x", "--yes"]):
        r = cli.run(*args)
        assert r.code == 77 and "not signed in" in r.err.lower(), r
    assert cli.signin().code == 0
    r = cli.run("passkey", "list")
    assert r.code == 0 and r.out == "" and "has no passkeys" in r.err, r
    fake.set_config(passkeysDisabled=True)
    r = add(cli, key)
    assert r.code == 78 and "does not allow passkeys" in r.err, r
    assert key.log == ["getInfo"]  # opened before the first request, never asked to make a credential


def test_missing_libfido2_is_a_configuration_error(passkey_cli, key, tmp_path, fake):
    """A libfido2.so.1 without libfido2's functions, found first through LD_LIBRARY_PATH, stands
    for a broken or missing library: exit 78 naming it and the package, not a crash, and known
    before the first request (StartWebAuthnRegistration was sent first)."""
    _stand_in_library(tmp_path, "libfido2.so.1")
    mark = fake.mark()
    for device in ([], ["--fido-device", key.device]):
        r = passkey_cli.run("passkey", "add", "--rp-id", RP, *device, env=passkey_cli.env(LD_LIBRARY_PATH=str(tmp_path)))
        assert r.code == 78 and "libfido2.so.1 has no fido_init" in r.err, r
    assert fake.calls(mark) == [] and key.log == [], (fake.calls(mark), key.log)


def test_a_passkey_sign_in_loads_libfido2_and_others_do_not(passkey_cli, key):
    assert add(passkey_cli, key).code == 0
    r, opened = _loaded(["signin", "--username", "alice", "--method", "passkey", "--fido-device", key.device],
                        passkey_cli.env())
    assert r.returncode == 0 and _any(opened, "libfido2.so.1"), r.stderr[-2000:]
    r, opened = _loaded(["passkey", "list"], passkey_cli.env())
    assert r.returncode == 0 and not _any(opened, "libfido2"), opened


def test_environment_names_the_device(passkey_cli, key):
    r = passkey_cli.run("passkey", "add", "--rp-id", RP, env=passkey_cli.env(AUTHCTL_FIDO_DEVICE=key.device))
    assert r.code == 0, r


def test_a_key_without_the_users_passkey(passkey_cli, authenticators):
    first, second = authenticators("first"), authenticators("second")
    assert add(passkey_cli, first).code == 0
    r = passkey_signin(passkey_cli, second)
    assert r.code == 77 and "holds no passkey of this account" in r.err, r


def test_slow_touch_and_a_refusal(passkey_cli, authenticators):
    slow = authenticators("slow", touch_delay=1.5)
    assert add(passkey_cli, slow).code == 0
    assert passkey_signin(passkey_cli, slow).code == 0
    slow.refuse = True
    r = passkey_signin(passkey_cli, slow)
    assert r.code == 77 and "refused" in r.err, r


def test_chosen_from_select_challenge_and_as_the_only_way_in(passkey_cli, key, cognito, pool, fake):
    """Without --method: with a password and a passkey offered a script must choose; once the pool
    allows only passkeys, WEB_AUTHN is the one usable factor, chosen from SELECT_CHALLENGE and
    answered with the key."""
    assert add(passkey_cli, key).code == 0
    r = passkey_cli.run("signin", "--username", "alice", "--flow", "user-auth", "--fido-device", key.device)
    assert r.code == 64 and "passkey" in r.err, r
    allow_first_factors(cognito, pool, ["WEB_AUTHN"])
    mark = fake.mark()
    r = passkey_cli.run("signin", "--username", "alice", "--flow", "user-auth", "--fido-device", key.device)
    assert r.code == 0, r
    answers = [c for c in fake.calls(mark, operation="RespondToAuthChallenge")]
    assert [c.get("challengeName") for c in answers] == ["SELECT_CHALLENGE", "WEB_AUTHN"], answers


def test_as_the_second_factor_after_the_password(passkey_cli, key, fake):
    """Passkeys as an MFA factor: WEB_AUTHN after a right password goes to the same answerer."""
    assert add(passkey_cli, key).code == 0
    fake.set_config(passkeyMfaUsers=["alice"])
    mark = fake.mark()
    r = passkey_cli.signin("alice", None, "--fido-device", key.device)
    assert r.code == 0 and "Touch your security key" in r.err, r
    assert [c.get("challengeName") for c in fake.calls(mark, operation="RespondToAuthChallenge")][-1] == "WEB_AUTHN"
    assert key.credentials[0].counter == 1


def test_no_touch_in_time(passkey_cli, authenticators, fake):
    key = authenticators("sleepy")
    assert add(passkey_cli, key).code == 0
    key.touch_delay = 30
    fake.set_config(passkeyTimeout=10000)
    r = passkey_signin(passkey_cli, key, timeout=40)
    assert r.code == 75 and "timed out" in r.err, r


def test_pin_asked_on_the_terminal_without_echo(passkey_cli, authenticators, terminals):
    key = authenticators(pin="2468")
    assert add(passkey_cli, key, "--pin-fd", "0", input="2468\n").code == 0
    t = terminals(passkey_cli, "signin", "--username", "alice", "--method", "passkey", "--fido-device", key.device)
    t.expect("PIN for your security key: ")
    t.type_secret("1111")
    t.expect("Wrong PIN (7 tries left).")
    t.expect("PIN for your security key: ")
    t.type_secret("2468")
    t.expect("Signed in as alice")
    assert t.finish() == 0, t.output
    assert "2468" not in t.output and "1111" not in t.output


def test_wrong_origin_and_relying_party_are_refused_by_the_verifier(passkey_cli, key, fake):
    fake.set_config(passkeyOrigin="https://elsewhere.example.com")
    r = add(passkey_cli, key)
    assert r.code == 78 and "origin" in r.err, r
    fake.set_config(passkeyOrigin=None, passkeyOptionsRelyingPartyId="other.example.com")
    r = add(passkey_cli, key)
    assert r.code == 78 and "relying party" in r.err, r


def test_the_fakes_answers_parse_with_botocores_model(passkey_cli, key, cognito):
    """The fake's WebAuthn answers, read by boto3 (botocore's service model parses them)."""
    token = passkey_cli.keyring.session()["accessToken"]
    options = cognito.start_web_authn_registration(AccessToken=token)["CredentialCreationOptions"]
    assert options["rp"]["id"] == "auth.example.com" and options["authenticatorSelection"]["residentKey"] == "required"
    assert add(passkey_cli, key).code == 0
    [described] = cognito.list_web_authn_credentials(AccessToken=token)["Credentials"]
    assert described["AuthenticatorTransports"] == ["usb"] and described["CreatedAt"].year >= 2024
    cognito.delete_web_authn_credential(AccessToken=token, CredentialId=described["CredentialId"])
    with pytest.raises(cognito.exceptions.ResourceNotFoundException):
        cognito.delete_web_authn_credential(AccessToken=token, CredentialId=described["CredentialId"])
    with pytest.raises(cognito.exceptions.WebAuthnChallengeNotFoundException):
        cognito.complete_web_authn_registration(AccessToken=token, Credential={
            "id": "x", "rawId": "x", "type": "public-key", "response": {k: "" for k in (
                "clientDataJSON", "attestationObject", "transports", "publicKeyAlgorithm", "publicKey", "authenticatorData")}})


# A hostile endpoint must not get assertions for another relying party. ------------------

class _HostileEndpoint:
    """An endpoint that is not Cognito (a proxy, a squatted loopback port, a phishing relay): it
    answers every sign-in with a WEB_AUTHN challenge for `rp_id` with no allowCredentials, as the
    review's did, and keeps the CREDENTIAL it is sent together with the challenge it issued."""

    def __init__(self, rp_id: str) -> None:
        import http.server
        import json as _json
        import secrets as _secrets
        import threading

        self.rp_id = rp_id
        self.challenge = _secrets.token_bytes(32)
        self.received: list[dict] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = _json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                op = (self.headers.get("X-Amz-Target") or "").rsplit(".", 1)[-1]
                if op == "InitiateAuth":
                    options = {"challenge": SoftAuthenticator.b64(outer.challenge), "rpId": outer.rp_id,
                               "allowCredentials": [], "userVerification": "discouraged", "timeout": 60000}
                    reply = {"ChallengeName": "WEB_AUTHN", "Session": "s" * 40, "ChallengeParameters": {
                        "CREDENTIAL_REQUEST_OPTIONS": _json.dumps(options), "USERNAME": "alice"}}
                    status = 200
                else:
                    if op == "RespondToAuthChallenge":
                        raw = (body.get("ChallengeResponses") or {}).get("CREDENTIAL")
                        if raw:
                            outer.received.append(_json.loads(raw))
                    reply, status = {"__type": "NotAuthorizedException", "message": "Incorrect username or password."}, 400
                data = _json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-amz-json-1.1")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hostile_endpoint():
    made: list[_HostileEndpoint] = []

    def make(rp_id: str) -> _HostileEndpoint:
        made.append(_HostileEndpoint(rp_id))
        return made[-1]

    yield make
    for endpoint in made:
        endpoint.close()


def _plant_resident_passkey(key: SoftAuthenticator, rp_id: str):
    """A resident passkey of another site on the same key (the victim's passkey for google.com)."""
    import secrets as _secrets

    from cryptography.hazmat.primitives.asymmetric import ec
    from fido2 import cbor
    from fido2.cose import ES256

    from soft_fido import Credential

    private = ec.generate_private_key(ec.SECP256R1())
    credential = Credential(_secrets.token_bytes(32), rp_id, private, b"victim-at-" + rp_id.encode())
    key.credentials.append(credential)
    return credential, cbor.encode(ES256.from_cryptography_key(private.public_key()))


def _verifies_for(received: dict, challenge: bytes, rp_id: str, public_key: bytes) -> bool:
    """Whether py_webauthn, as `rp_id`'s own server, would accept what the endpoint received."""
    from webauthn import verify_authentication_response
    from webauthn.helpers.exceptions import InvalidAuthenticationResponse

    try:
        verify_authentication_response(credential=received, expected_challenge=challenge, expected_rp_id=rp_id,
                                       expected_origin=f"https://{rp_id}", credential_public_key=public_key,
                                       credential_current_sign_count=0, require_user_verification=False)
        return True
    except InvalidAuthenticationResponse:
        return False


def test_a_hostile_endpoint_gets_no_assertion_for_another_relying_party(passkey_cli, key, hostile_endpoint):
    """The profile's passkey is for auth.example.com (pinned at `passkey add`);
    an endpoint asking the key to sign for google.com, with empty allowCredentials so the key's
    resident google.com passkey answers, gets nothing: exit 78 before the key is touched. Before the
    fix it received an assertion py_webauthn verified for rp google.com, origin https://google.com."""
    assert add(passkey_cli, key).code == 0
    _, google_key = _plant_resident_passkey(key, "google.com")
    hostile = hostile_endpoint("google.com")
    key.log.clear()
    for args in (["signin", "--username", "alice", "--method", "passkey"],
                 ["token", "--username", "alice", "--method", "passkey"]):
        passkey_cli.run("signout")
        r = passkey_cli.run(*args, "--fido-device", key.device, env=passkey_cli.env(AUTHCTL_ENDPOINT=hostile.url))
        got = [_verifies_for(sent, hostile.challenge, "google.com", google_key) for sent in hostile.received]
        assert not any(got), f"the hostile endpoint got an assertion valid for google.com: {r}"
        assert hostile.received == [], r
        assert r.code == 78, r
        assert "google.com" in r.err and "auth.example.com" in r.err, r
        assert "getAssertion" not in key.log and "Touch your security key" not in r.err, (key.log, r)


def test_without_a_pinned_relying_party_no_passkey_sign_in(passkey_cli, key, hostile_endpoint):
    """Nothing pinned (no `passkey add` here, no passkey_rp_id, no managed-login domain): a passkey
    sign-in is refused, exit 78 naming the setting, before the key is touched."""
    _, google_key = _plant_resident_passkey(key, "google.com")
    hostile = hostile_endpoint("google.com")
    r = passkey_signin(passkey_cli, key, env=passkey_cli.env(AUTHCTL_ENDPOINT=hostile.url))
    assert not any(_verifies_for(s, hostile.challenge, "google.com", google_key) for s in hostile.received), r
    assert r.code == 78 and "passkey_rp_id" in r.err, r
    assert "getAssertion" not in key.log, key.log


def test_passkey_add_refuses_another_relying_party_than_the_pinned_one(passkey_cli, authenticators, fake):
    """The pin also holds for `passkey add`: once the profile's relying party is known, creation
    options for another one are refused before the key is touched (exit 78)."""
    first = authenticators("first")
    r = add(passkey_cli, first)
    assert r.code == 0 and "auth.example.com" in r.err, r  # the touch prompt names the relying party
    second = authenticators("second")
    fake.set_config(passkeyOptionsRelyingPartyId="google.com")
    r = add(passkey_cli, second)
    assert r.code == 78 and "google.com" in r.err and "auth.example.com" in r.err, r
    assert "makeCredential" not in second.log and second.credentials == [], second.log


def _config_text(cli) -> str:
    path = Path(cli.env()["XDG_CONFIG_HOME"]) / "authctl/config.toml"
    return path.read_text() if path.exists() else ""


def test_passkey_add_takes_no_relying_party_from_the_endpoint(passkey_cli, key, fake):
    """A profile with no passkey_rp_id and no managed-login domain: `passkey add` no longer trusts
    the rp.id the endpoint's options name (first use). It refuses before the first request, naming
    --rp-id; --rp-id must be a host name; options for another relying party than the one named are
    refused and nothing is recorded; the one named is recorded once registered; a different one
    later is refused, nothing sent."""
    mark = fake.mark()
    r = passkey_cli.run("passkey", "add", "--fido-device", key.device)
    assert r.code == 78 and "--rp-id" in r.err and "passkey_rp_id" in r.err, r
    r = passkey_cli.run("passkey", "add", "--fido-device", key.device, "--rp-id", "https://auth.example.com/")
    assert r.code == 64 and "--rp-id" in r.err, r
    assert fake.calls(mark) == [] and key.log == [], (fake.calls(mark), key.log)
    fake.set_config(passkeyOptionsRelyingPartyId="google.com")
    r = add(passkey_cli, key)
    assert r.code == 78 and "google.com" in r.err and RP in r.err and "makeCredential" not in key.log, (r, key.log)
    assert "passkey_rp_id" not in _config_text(passkey_cli), "a refused registration recorded its relying party"
    fake.set_config(passkeyOptionsRelyingPartyId=None)
    r = add(passkey_cli, key)
    assert r.code == 0 and "passkey_rp_id in" in r.err, r
    assert f'passkey_rp_id = "{RP}"' in _config_text(passkey_cli)
    mark = fake.mark()
    r = passkey_cli.run("passkey", "add", "--fido-device", key.device, "--rp-id", "other.example.com")
    assert r.code == 78 and RP in r.err and fake.calls(mark) == [], r


# A `unix:` security-key socket of another user is never talked to. ------------------------

_RECORDER = """
import socket, sys
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sys.argv[1])
server.listen(4)
print("ready", flush=True)
with open(sys.argv[2], "ab", buffering=0) as record:
    while True:
        conn, _ = server.accept()
        conn.settimeout(2)
        try:
            while data := conn.recv(4096):
                record.write(data)
        except OSError:
            pass
        conn.close()
"""


def test_a_socket_of_another_user_is_refused_before_a_byte_is_sent(passkey_cli, key, authenticators):
    """A stale AUTHCTL_FIDO_DEVICE or a squatted path: the socket is another user's (nobody, a real
    second user through setpriv), in a directory only it can write. Before the fix authctl spoke
    CTAPHID (and the PIN protocol) to it; now the peer's uid (SO_PEERCRED) is checked first: exit 78."""
    import shutil
    import subprocess
    import sys
    import tempfile
    import time

    if shutil.which("setpriv") is None:
        pytest.skip("setpriv is needed to run a second local user")
    base = Path(tempfile.mkdtemp(prefix="fidoother", dir="/tmp"))  # nobody's directory, closed to others
    os.chown(base, 65534, 65534)
    base.chmod(0o755)
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    socket_path, record = base / "key.sock", base / "received"
    squatter = subprocess.Popen([*nobody, sys.executable, "-c", _RECORDER, str(socket_path), str(record)],
                                stdout=subprocess.PIPE, text=True)
    private = Path(tempfile.mkdtemp(prefix="fidomine", dir="/tmp"))  # the user's own, mode 0700
    try:
        assert squatter.stdout.readline().strip() == "ready"
        # In nobody's directory (nobody could swap it), then moved into the user's own directory
        # (a stale path now served by another user): the peer's uid is what refuses it there.
        moved = private / "key.sock"
        for device, why in ((socket_path, "another user"), (moved, "served by another user")):
            if device == moved:
                os.rename(socket_path, moved)
            r = passkey_cli.run("passkey", "add", "--rp-id", RP, "--fido-device", f"unix:{device}", "--pin-fd", "0",
                                input="2468\n", timeout=60)
            time.sleep(0.5)
            received = record.read_bytes() if record.exists() else b""
            assert received == b"", f"{len(received)} bytes reached another user's socket: {r}"
            assert r.code == 78 and why in r.err, r
    finally:
        shutil.rmtree(private, ignore_errors=True)
        squatter.kill()
        squatter.wait()
        shutil.rmtree(base, ignore_errors=True)

    # The user's own socket in a directory others can write (it could be swapped): refused too.
    open_dir = Path(tempfile.mkdtemp(prefix="fidoopen", dir="/tmp"))
    open_dir.chmod(0o777)
    exposed = SoftAuthenticator(str(open_dir / "key.sock")).start()
    try:
        r = add(passkey_cli, exposed)
        assert r.code == 78 and "others can write" in r.err, r
        assert exposed.log == [], exposed.log
    finally:
        exposed.stop()
        shutil.rmtree(open_dir, ignore_errors=True)
    # The user's own socket in a private directory still works.
    assert add(passkey_cli, key).code == 0



# Passkeys as MFA (April 2026): WebAuthnConfiguration.FactorConfiguration and WebAuthnMfaSettings. -------------

MULTI_FACTOR = "MULTI_FACTOR_WITH_USER_VERIFICATION"


def test_passkey_mfa_enable_status_sign_in_disable(passkey_cli, authenticators, fake, pool):
    """`mfa enable passkey` is SetUserMFAPreference with WebAuthnMfaSettings, which moto lacks: the
    fake answers as the 2026 model says (the request itself checked against botocore 1.44.8's model).
    Refused before the request without another factor on, and by Cognito on a pool whose passkeys
    are a single factor (InvalidParameterException: exit 78, saying what the pool needs); then on,
    in `mfa status` and recorded in the profile; a passkey sign-in asks the key's PIN and the fake's
    py_webauthn requires the user-verified flag; `mfa disable passkey` turns it off again."""
    from test_mfa import set_mfa

    cli = passkey_cli
    key = authenticators(pin="2468")
    assert add(cli, key, "--pin-fd", "0", input="2468\n").code == 0
    mark = fake.mark()
    r = cli.run("mfa", "enable", "passkey")
    assert r.code == 78 and "mfa setup" in r.err, r
    assert fake.calls(mark, operation="SetUserMFAPreference") == []
    set_mfa(fake, pool, "totp")
    r = cli.run("mfa", "enable", "passkey")
    assert r.code == 78 and MULTI_FACTOR in r.err and "Passkey MFA is not enabled" in r.err, r
    fake.set_config(passkeyFactorConfiguration=MULTI_FACTOR)
    r = cli.run("mfa", "enable", "passkey", "--output", "json")
    assert r.code == 0 and r.json() == {"passkey": "enabled", "changed": True}, r
    assert cli.run("mfa", "status", "--output", "json").json()["enabled"] == ["passkey", "totp"]
    assert "enabled:    passkey, totp" in cli.run("mfa", "status").out
    assert "passkey_mfa = true" in _config_text(cli)
    r = cli.run("mfa", "enable", "passkey")
    assert r.code == 0 and "already on" in r.err, r

    assert cli.run("signout").code == 0
    mark = fake.mark()
    r = passkey_signin(cli, key, "--pin-fd", "0", input="2468\n")
    assert r.code == 0 and "Signed in as alice" in r.err, r
    assert any("WEB_AUTHN passkey" in (c.get("note") or "") for c in fake.calls(mark))

    r = cli.run("mfa", "disable", "passkey")
    assert r.code == 64 and "--yes" in r.err, r  # no terminal: a weaker account needs --yes
    r = cli.run("mfa", "disable", "passkey", "--yes", "--output", "json")
    assert r.code == 0 and r.json() == {"passkey": "disabled", "changed": True}, r
    assert cli.run("mfa", "status", "--output", "json").json()["enabled"] == ["totp"]
    assert "passkey_mfa" not in _config_text(cli)
    r = cli.run("mfa", "enable", "sms")
    assert r.code == 64 and "mfa setup" in r.err, r


def test_passkey_mfa_needs_a_key_that_verifies_the_user(passkey_cli, authenticators, fake, pool):
    """Passkey MFA on: a key with neither a PIN nor built-in verification is refused before it
    signs anything (exit 78, saying why), even where the options ask for less (passkeyOptionsUser-
    Verification plays an endpoint that downgrades them: the profile's own record decides); on a pool
    whose passkeys count as MFA the options' "required" says why; a key with built-in verification
    registers and signs in."""
    from test_mfa import set_mfa

    cli = passkey_cli
    plain = authenticators("plain")
    assert add(cli, plain).code == 0  # single-factor passkeys: no verification needed yet
    set_mfa(fake, pool, "totp")
    fake.set_config(passkeyFactorConfiguration=MULTI_FACTOR)
    assert cli.run("mfa", "enable", "passkey").code == 0
    fake.set_config(passkeyOptionsUserVerification="discouraged")
    plain.log.clear()
    r = passkey_signin(cli, plain)
    assert r.code == 78 and "passkey MFA is on for profile" in r.err and "no PIN set" in r.err, r
    assert "getAssertion" not in plain.log, plain.log
    fake.set_config(passkeyOptionsUserVerification=None)
    assert cli.run("mfa", "disable", "passkey", "--yes").code == 0
    r = passkey_signin(cli, plain)  # the pool's passkeys still count as MFA: "required"
    assert r.code == 78 and MULTI_FACTOR in r.err and "getAssertion" not in plain.log, r
    verifying = authenticators("uv", builtin_uv=True)
    assert add(cli, verifying).code == 0
    r = passkey_signin(cli, verifying)
    assert r.code == 0, r
