"""FakeCognito: the fake's way to moto (forwarding, admin calls of its own), what every module
shares (the clients and passwords it learns, the config, faults, the request log), its chain of
handlers and the state each module of that chain declares (`fake.state.mfa`, ...)."""

from __future__ import annotations

import hmac
import http.client
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .faults import FaultRule
from .messages import Reply, Request, ServiceError, not_authorized
from .shared import (AMZ_JSON, DEFAULT_EXPLICIT_AUTH_FLOWS, LEGACY_EXPLICIT_AUTH_FLOWS, SECRET_HASH_MISMATCH,
                     SECRET_HASH_MISSING, TARGET_PREFIX)
from .srp import secret_hash

if TYPE_CHECKING:
    from .chain import Chain

MFA_SESSION_LIFETIME = 180.0  # default for config mfaSessionLifetime
MFA_MAX_ATTEMPTS = 3  # default for config mfaMaxAttempts: wrong codes before a challenge session dies


@dataclass
class ClientInfo:
    client_id: str
    pool_id: str
    secret: str | None
    flows: list[str]
    rotation: bool = False  # RefreshTokenRotation.Feature == ENABLED (moto stores it, ignores it)
    grace: float = 0.0  # RefreshTokenRotation.RetryGracePeriodSeconds


class FakeCognito:
    def __init__(self, upstream: str, log_path: str | None, chain: "Chain"):
        u = urllib.parse.urlsplit(upstream)
        self.upstream_host = u.hostname or "127.0.0.1"
        self.upstream_port = u.port or 80
        self.log_path = log_path
        self.lock = threading.RLock()
        self.log_lock = threading.Lock()
        self.passwords: dict[tuple[str, str], str] = {}
        self.clients: dict[str, ClientInfo] = {}
        self.challenges: dict[str, SrpChallenge] = {}  # by SECRET_BLOCK
        self.sessions: dict[str, str] = {}  # Session -> SECRET_BLOCK
        self.faults: list[FaultRule] = []
        # Who answers what, in order, and the state each module of the chain declares (one instance
        # per fake: fake.state.auth, .tokens, .mfa, .accounts, .devices; see chain.FakeState).
        self.chain = chain
        self.state = chain.new_state()
        # Switches tests may flip with POST /_fake/config.
        self.config: dict[str, Any] = {
            "revokeToken": "fake",  # "fake": implemented here; "upstream": forwarded (moto: HTTP 500)
            # GetTokensFromRefreshToken: "upstream" forwards it (moto: HTTP 500, as an emulator without
            # it answers); "fake" implements it here, with rotation for clients that enable it.
            "getTokensFromRefreshToken": "upstream",
            "checkExplicitAuthFlows": True,
            # MFA challenge sessions (and the sessions AssociateSoftwareToken / VerifySoftwareToken
            # hand on) live this many seconds, as Cognito's 3 minutes; wrong codes allowed per session.
            "mfaSessionLifetime": MFA_SESSION_LIFETIME,
            "mfaMaxAttempts": MFA_MAX_ATTEMPTS,
            # The request and answer bodies in the log (test_debug_trace: every secret exchanged,
            # to look for in authctl's trace); off, the log names which secret fields came, never values.
            "logBodies": False,
        }

    # -- upstream --------------------------------------------------------

    def forward_raw(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> Reply:
        conn = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=60)
        try:
            out = {}
            for k, v in headers:
                if k.lower() in HOP_BY_HOP or k.lower() in ("host", "content-length"):
                    continue
                out[k] = v
            out["Host"] = f"{self.upstream_host}:{self.upstream_port}"
            out["Content-Length"] = str(len(body))
            conn.request(method, path, body=body if method != "GET" or body else None, headers=out)
            resp = conn.getresponse()
            data = resp.read()
            rh = [(k, v) for k, v in resp.getheaders() if k.lower() not in HOP_BY_HOP and k.lower() != "content-length"]
            return Reply(resp.status, rh, data, "moto")
        finally:
            conn.close()

    def forward(self, req: Request) -> Reply:
        """The request as it came, to moto: moto's answer."""
        return self.forward_raw("POST", req.path, req.headers, req.raw)

    def call(self, op: str, payload: dict[str, Any], region: str = "us-east-1") -> Reply:
        """An admin call of the fake's own to moto (signed-looking, as moto only reads the region)."""
        day = time.strftime("%Y%m%d", time.gmtime())
        headers = [
            ("Content-Type", AMZ_JSON),
            ("X-Amz-Target", TARGET_PREFIX + op),
            (
                "Authorization",
                f"AWS4-HMAC-SHA256 Credential=testing/{day}/{region}/cognito-idp/aws4_request, "
                "SignedHeaders=host;x-amz-target, Signature=0",
            ),
        ]
        return self.forward_raw("POST", "/", headers, json.dumps(payload).encode())

    # -- clients and users -------------------------------------------------

    def remember_client(self, uc: dict[str, Any]) -> None:
        if not uc.get("ClientId") or not uc.get("UserPoolId"):
            return
        rotation = uc.get("RefreshTokenRotation") or {}
        with self.lock:
            self.clients[uc["ClientId"]] = ClientInfo(
                uc["ClientId"],
                uc["UserPoolId"],
                uc.get("ClientSecret") or None,
                list(uc.get("ExplicitAuthFlows") or []),
                rotation.get("Feature") == "ENABLED",
                float(rotation.get("RetryGracePeriodSeconds") or 0),
            )

    def client(self, client_id: str | None) -> ClientInfo | None:
        if not client_id:
            return None
        with self.lock:
            info = self.clients.get(client_id)
        if info:
            return info
        # Not created through us: look for it in moto.
        regions = {c.pool_id.split("_")[0] for c in list(self.clients.values())} | {"us-east-1"}
        for region in regions:
            pools: list[dict[str, Any]] = []
            page: dict[str, Any] = {"MaxResults": 60}
            while True:  # every page: a test session makes hundreds of pools
                listed = self.call("ListUserPools", page, region).json() or {}
                pools += listed.get("UserPools", [])
                if not listed.get("NextToken"):
                    break
                page = {"MaxResults": 60, "NextToken": listed["NextToken"]}
            for pool in reversed(pools):  # the newest first
                d = self.call("DescribeUserPoolClient", {"UserPoolId": pool["Id"], "ClientId": client_id}, region)
                if d.status == 200:
                    self.remember_client(d.json().get("UserPoolClient", {}))
                    with self.lock:
                        return self.clients.get(client_id)
        return None

    def learn_password(self, pool_id: str | None, username: str | None, password: str | None) -> None:
        if pool_id and username and password:
            with self.lock:
                self.passwords[(pool_id, username)] = password

    def check_secret_hash(self, client: ClientInfo, username: str | None, given: str | None) -> None:
        if not client.secret:
            return
        if not given:
            raise not_authorized(SECRET_HASH_MISSING.format(client_id=client.client_id))
        if not username or not hmac.compare_digest(secret_hash(client.secret, username, client.client_id), given):
            raise not_authorized(SECRET_HASH_MISMATCH.format(client_id=client.client_id))

    def check_flow(self, client: ClientInfo, flow: str) -> None:
        if not self.config.get("checkExplicitAuthFlows"):
            return
        allowed = client.flows or list(DEFAULT_EXPLICIT_AUTH_FLOWS)
        legacy = LEGACY_EXPLICIT_AUTH_FLOWS.get(flow)
        if f"ALLOW_{flow}" in allowed or (legacy and legacy in allowed):
            return
        raise ServiceError("InvalidParameterException", f"{flow} flow not enabled for this client")

    # -- faults ------------------------------------------------------------

    def take_fault(self, req: Request, when: str) -> FaultRule | None:
        with self.lock:
            for rule in self.faults:
                if rule.when == when and rule.matches(req.op, req.auth_flow, req.challenge_name, req.endpoint):
                    if rule.count > 0:
                        rule.count -= 1
                    return rule
        return None

    # -- log ---------------------------------------------------------------

    def log(self, entry: dict[str, Any]) -> None:
        if not self.log_path:
            return
        line = json.dumps(entry, sort_keys=True) + "\n"
        with self.log_lock, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()


HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "expect"}
