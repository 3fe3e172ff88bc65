"""A software FIDO2 (CTAP2.0) authenticator behind a Unix socket, for authctl's `--fido-device unix:PATH`.

It is a fake security key, so that authctl's real libfido2 code path (CFido2's socket I/O,
libfido2's CTAPHID framing, its clientPIN protocol and its CBOR parsing) runs end to end in the
tests without hardware. It speaks CTAPHID as a USB key does, 64-byte reports without the report-ID
byte: INIT, CBOR (getInfo, makeCredential, getAssertion, clientPIN with PIN protocol 1), PING,
CANCEL, and KEEPALIVE while it "waits for a touch". Keys are real ES256 keys (`cryptography`),
CBOR and COSE come from PyPI `fido2`, and what it signs is checked by py_webauthn in the fake
Cognito, so a wrong byte anywhere fails a test.

Modes: `pin` (a PIN set: makeCredential/getAssertion need pinAuth; wrong PINs count down `retries`),
`builtin_uv` (the key verifies the user itself: options uv accepted), `touch_delay` (seconds
before the "touch", with keepalives), `refuse` (the person declines: OPERATION_DENIED).

Run alone: python3 soft_fido.py PATH [--pin 1234]
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from fido2 import cbor
from fido2.cose import ES256
from fido2.webauthn import AttestedCredentialData, AuthenticatorData

REPORT = 64
BROADCAST = 0xFFFFFFFF
CMD_PING, CMD_MSG, CMD_INIT, CMD_CBOR, CMD_CANCEL, CMD_KEEPALIVE, CMD_ERROR = 0x81, 0x83, 0x86, 0x90, 0x91, 0xBB, 0xBF
CTAP_MAKE_CREDENTIAL, CTAP_GET_ASSERTION, CTAP_GET_INFO, CTAP_CLIENT_PIN = 0x01, 0x02, 0x04, 0x06
OK = 0x00
ERR_INVALID_CBOR = 0x12
ERR_MISSING_PARAMETER = 0x14
ERR_CREDENTIAL_EXCLUDED = 0x19
ERR_UNSUPPORTED_ALGORITHM = 0x26
ERR_OPERATION_DENIED = 0x27
ERR_UNSUPPORTED_OPTION = 0x2B
ERR_NO_CREDENTIALS = 0x2E
ERR_PIN_INVALID = 0x31
ERR_PIN_BLOCKED = 0x32
ERR_PIN_AUTH_INVALID = 0x33
ERR_PIN_NOT_SET = 0x35
ERR_PIN_REQUIRED = 0x36
AAGUID = bytes.fromhex("6175746863746c2d736f66742d666964")  # "authctl-soft-fid"


@dataclass
class Credential:
    id: bytes
    rp_id: str
    key: ec.EllipticCurvePrivateKey
    user_id: bytes
    counter: int = 0


@dataclass
class SoftAuthenticator:
    path: str
    pin: str | None = None
    builtin_uv: bool = False
    touch_delay: float = 0.0
    refuse: bool = False
    retries: int = 8
    credentials: list[Credential] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._agreement = ec.generate_private_key(ec.SECP256R1())
        self._pin_token = secrets.token_bytes(32)
        self._server: socket.socket | None = None
        self._lock = threading.Lock()

    # Serving -------------------------------------------------------------------------------
    def start(self) -> "SoftAuthenticator":
        if os.path.exists(self.path):
            os.unlink(self.path)
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self.path)
        self._server.listen(4)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        if os.path.exists(self.path):
            os.unlink(self.path)

    @staticmethod
    def b64(data: bytes) -> str:
        """base64url without padding, as WebAuthn's JSON writes bytes."""
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    @property
    def device(self) -> str:
        return "unix:" + self.path

    def _accept(self) -> None:
        while self._server is not None:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                while True:
                    cid, cmd, payload = self._receive(conn)
                    if cmd is None:
                        return
                    self._dispatch(conn, cid, cmd, payload)
            except (OSError, ConnectionError):
                return

    @staticmethod
    def _read_report(conn: socket.socket) -> bytes | None:
        data = b""
        while len(data) < REPORT:
            chunk = conn.recv(REPORT - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def _receive(self, conn: socket.socket) -> tuple[int, int | None, bytes]:
        first = self._read_report(conn)
        if first is None:
            return 0, None, b""
        cid, cmd, length = struct.unpack(">IBH", first[:7])
        payload = first[7:7 + length]
        while len(payload) < length:
            cont = self._read_report(conn)
            if cont is None:
                return 0, None, b""
            payload += cont[5:5 + length - len(payload)]
        return cid, cmd, payload

    @staticmethod
    def _send(conn: socket.socket, cid: int, cmd: int, payload: bytes) -> None:
        packet = struct.pack(">IBH", cid, cmd, len(payload)) + payload[:57]
        conn.sendall(packet.ljust(REPORT, b"\0"))
        rest, seq = payload[57:], 0
        while rest:
            conn.sendall((struct.pack(">IB", cid, seq) + rest[:59]).ljust(REPORT, b"\0"))
            rest, seq = rest[59:], seq + 1

    def _dispatch(self, conn: socket.socket, cid: int, cmd: int, payload: bytes) -> None:
        if cmd == CMD_INIT:
            new_cid = secrets.randbits(32) or 1
            # nonce, channel, CTAPHID version 2, device version 1.0.0, capabilities CBOR | NMSG
            self._send(conn, cid, CMD_INIT, payload[:8] + struct.pack(">IBBBBB", new_cid, 2, 1, 0, 0, 0x04 | 0x08))
        elif cmd == CMD_PING:
            self._send(conn, cid, CMD_PING, payload)
        elif cmd == CMD_CANCEL:
            return
        elif cmd == CMD_CBOR:
            status, body = self._ctap(conn, cid, payload)
            self._send(conn, cid, CMD_CBOR, bytes([status]) + (cbor.encode(body) if body is not None else b""))
        else:
            self._send(conn, cid, CMD_ERROR, bytes([0x01]))  # ERR_INVALID_CMD

    def _touch(self, conn: socket.socket, cid: int) -> bool:
        """Waits for the "touch" (keepalives meanwhile); False when the person declines."""
        deadline = time.monotonic() + self.touch_delay
        while time.monotonic() < deadline:
            self._send(conn, cid, CMD_KEEPALIVE, bytes([2]))  # STATUS_UPNEEDED
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        return not self.refuse

    # CTAP2 ---------------------------------------------------------------------------------
    def _ctap(self, conn: socket.socket, cid: int, payload: bytes) -> tuple[int, dict | None]:
        command = payload[0]
        try:
            params = cbor.decode(payload[1:]) if len(payload) > 1 else {}
        except Exception:
            return ERR_INVALID_CBOR, None
        self.log.append({CTAP_GET_INFO: "getInfo", CTAP_MAKE_CREDENTIAL: "makeCredential",
                         CTAP_GET_ASSERTION: "getAssertion", CTAP_CLIENT_PIN: "clientPIN"}.get(command, hex(command)))
        with self._lock:
            if command == CTAP_GET_INFO:
                return OK, self._info()
            if command == CTAP_CLIENT_PIN:
                return self._client_pin(params)
            if command == CTAP_MAKE_CREDENTIAL:
                return self._make_credential(conn, cid, params)
            if command == CTAP_GET_ASSERTION:
                return self._get_assertion(conn, cid, params)
        return 0x01, None

    def _info(self) -> dict:
        options = {"rk": True, "up": True, "plat": False, "clientPin": self.pin is not None}
        if self.builtin_uv:
            options["uv"] = True
        return {1: ["FIDO_2_0"], 2: [], 3: AAGUID, 4: options, 5: 1200, 6: [1]}

    def _shared_secret(self, platform_key: dict) -> bytes:
        peer = ec.EllipticCurvePublicNumbers(int.from_bytes(platform_key[-2], "big"), int.from_bytes(platform_key[-3], "big"),
                                             ec.SECP256R1()).public_key()
        return hashlib.sha256(self._agreement.exchange(ec.ECDH(), peer)).digest()

    @staticmethod
    def _aes(key: bytes, data: bytes, encrypt: bool) -> bytes:
        cipher = Cipher(algorithms.AES(key), modes.CBC(bytes(16)))
        op = cipher.encryptor() if encrypt else cipher.decryptor()
        return op.update(data) + op.finalize()

    def _client_pin(self, params: dict) -> tuple[int, dict | None]:
        sub = params.get(2)
        if sub == 1:  # getRetries
            return OK, {3: self.retries}
        if sub == 2:  # getKeyAgreement
            numbers = self._agreement.public_key().public_numbers()
            return OK, {1: {1: 2, 3: -25, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}}
        if sub == 5:  # getPinToken
            if self.pin is None:
                return ERR_PIN_NOT_SET, None
            if self.retries <= 0:
                return ERR_PIN_BLOCKED, None
            if 3 not in params or 6 not in params:
                return ERR_MISSING_PARAMETER, None
            shared = self._shared_secret(params[3])
            given = self._aes(shared, params[6], encrypt=False)
            if not hmac.compare_digest(given, hashlib.sha256(self.pin.encode()).digest()[:16]):
                self.retries -= 1
                self._agreement = ec.generate_private_key(ec.SECP256R1())
                return (ERR_PIN_BLOCKED if self.retries <= 0 else ERR_PIN_INVALID), None
            self.retries = 8
            return OK, {2: self._aes(shared, self._pin_token, encrypt=True)}
        return ERR_MISSING_PARAMETER, None

    def _verified(self, client_data_hash: bytes, pin_auth: bytes | None, options: dict) -> tuple[int, bool]:
        """(status, user verified) for the request's pinAuth / uv option."""
        if pin_auth is not None:
            if self.pin is None:
                return ERR_PIN_NOT_SET, False
            expected = hmac.new(self._pin_token, client_data_hash, hashlib.sha256).digest()[:16]
            return (OK, True) if hmac.compare_digest(pin_auth, expected) else (ERR_PIN_AUTH_INVALID, False)
        if options.get("uv"):
            return (OK, True) if self.builtin_uv else (ERR_UNSUPPORTED_OPTION, False)
        return OK, False

    def _make_credential(self, conn: socket.socket, cid: int, params: dict) -> tuple[int, dict | None]:
        cdh, rp, user, algs = params.get(1), params.get(2), params.get(3), params.get(4)
        if cdh is None or rp is None or user is None or algs is None:
            return ERR_MISSING_PARAMETER, None
        if params.get(8) == b"":
            # A zero-length pinAuth asks only for a touch (CTAP 2.1 §6.1.2; libfido2's
            # fido_dev_get_touch_begin, choosing among several keys): answered once touched.
            if not self._touch(conn, cid):
                return ERR_OPERATION_DENIED, None
            return (ERR_PIN_INVALID if self.pin is not None else ERR_PIN_NOT_SET), None
        if not any(a.get("alg") == -7 for a in algs):
            return ERR_UNSUPPORTED_ALGORITHM, None
        status, uv = self._verified(cdh, params.get(8), params.get(7) or {})
        if status != OK:
            return status, None
        if self.pin is not None and not uv:
            return ERR_PIN_REQUIRED, None
        excluded = {bytes(d["id"]) for d in params.get(5) or []}
        if any(c.id in excluded and c.rp_id == rp["id"] for c in self.credentials):
            self._touch(conn, cid)
            return ERR_CREDENTIAL_EXCLUDED, None
        if not self._touch(conn, cid):
            return ERR_OPERATION_DENIED, None
        key = ec.generate_private_key(ec.SECP256R1())
        cred = Credential(secrets.token_bytes(32), rp["id"], key, bytes(user["id"]))
        self.credentials.append(cred)
        flags = AuthenticatorData.FLAG.UP | AuthenticatorData.FLAG.AT | (AuthenticatorData.FLAG.UV if uv else 0)
        attested = AttestedCredentialData.create(AAGUID, cred.id, ES256.from_cryptography_key(key.public_key()))
        auth_data = AuthenticatorData.create(hashlib.sha256(rp["id"].encode()).digest(), flags, cred.counter, attested)
        # Packed self-attestation: signed with the credential's own key.
        sig = key.sign(bytes(auth_data) + cdh, ec.ECDSA(hashes.SHA256()))
        return OK, {1: "packed", 2: bytes(auth_data), 3: {"alg": -7, "sig": sig}}

    def _get_assertion(self, conn: socket.socket, cid: int, params: dict) -> tuple[int, dict | None]:
        rp_id, cdh = params.get(1), params.get(2)
        if rp_id is None or cdh is None:
            return ERR_MISSING_PARAMETER, None
        status, uv = self._verified(cdh, params.get(6), params.get(5) or {})
        if status != OK:
            return status, None
        allowed = {bytes(d["id"]) for d in params.get(3) or []}
        matching = [c for c in self.credentials if c.rp_id == rp_id and (not allowed or c.id in allowed)]
        if not matching:
            return ERR_NO_CREDENTIALS, None
        if not self._touch(conn, cid):
            return ERR_OPERATION_DENIED, None
        cred = matching[0]
        cred.counter += 1
        flags = AuthenticatorData.FLAG.UP | (AuthenticatorData.FLAG.UV if uv else 0)
        auth_data = AuthenticatorData.create(hashlib.sha256(rp_id.encode()).digest(), flags, cred.counter)
        sig = cred.key.sign(bytes(auth_data) + cdh, ec.ECDSA(hashes.SHA256()))
        return OK, {1: {"type": "public-key", "id": cred.id}, 2: bytes(auth_data), 3: sig, 4: {"id": cred.user_id}}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--pin")
    parser.add_argument("--touch-delay", type=float, default=0.0)
    args = parser.parse_args()
    auth = SoftAuthenticator(args.path, pin=args.pin, touch_delay=args.touch_delay).start()
    print(f"authenticator at unix:{args.path}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        auth.stop()
