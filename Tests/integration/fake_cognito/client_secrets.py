"""An app client's secrets (moto keeps one and has no secret operations): AddUserPoolClientSecret,
ListUserPoolClientSecrets, DeleteUserPoolClientSecret, as the service answers them
(ClientSecretDescriptorType; ids `<client id>--<epoch>`; shapes and errors from botocore 1.44.8's
model). Two secrets at most (LimitExceededException), the last one never deleted
(InvalidParameterException); the first is moto's own ClientSecret. Kept in
fake.state.client_secrets, per client; values are never logged.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .messages import Reply, Request, Rest, ServiceError, json_reply
from .proxy import FakeCognito

MAX_SECRETS = 2
TOO_MANY = "A client can have at most 2 client secrets."  # the fake's wording
LAST_ONE = "The last client secret of a client cannot be deleted."  # the fake's wording
NOT_FOUND = "Client secret not found."


@dataclass
class ClientSecretState:
    lock: threading.Lock = field(default_factory=threading.Lock)
    secrets: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # client id -> descriptors, oldest first


def _secrets(fake: FakeCognito, req: Request) -> list[dict[str, Any]]:
    pool_id, client_id = req.body.get("UserPoolId") or "", req.body.get("ClientId") or ""
    got = fake.call("DescribeUserPoolClient", {"UserPoolId": pool_id, "ClientId": client_id}, pool_id.split("_")[0] or "us-east-1")
    if got.status != 200:
        raise ServiceError("ResourceNotFoundException", f"User pool client {client_id} does not exist.")
    client = (got.json() or {}).get("UserPoolClient") or {}
    state = fake.state.client_secrets
    with state.lock:
        if client_id not in state.secrets:
            made = time.time() - 1
            first = [{"ClientSecretId": f"{client_id}--{int(made)}", "ClientSecretValue": client["ClientSecret"],
                      "ClientSecretCreateDate": made}] if client.get("ClientSecret") else []
            state.secrets[client_id] = first
        return state.secrets[client_id]


def add_user_pool_client_secret(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    kept = _secrets(fake, req)
    with fake.state.client_secrets.lock:
        if len(kept) >= MAX_SECRETS:
            raise ServiceError("LimitExceededException", TOO_MANY)
        now = time.time()
        value = req.body.get("ClientSecret") or secrets.token_urlsafe(38)[:51]
        new = {"ClientSecretId": f"{req.body['ClientId']}--{int(now * 1000)}", "ClientSecretValue": value,
               "ClientSecretCreateDate": now}
        kept.append(new)
    answer = dict(new)
    if req.body.get("ClientSecret"):
        answer.pop("ClientSecretValue")  # only a secret the service made is handed back
    return json_reply({"ClientSecretDescriptor": answer})


def list_user_pool_client_secrets(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    kept = _secrets(fake, req)
    with fake.state.client_secrets.lock:
        listed = [{k: v for k, v in d.items() if k != "ClientSecretValue"} for d in kept]
    return json_reply({"ClientSecrets": listed})


def delete_user_pool_client_secret(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    kept = _secrets(fake, req)
    with fake.state.client_secrets.lock:
        found = [d for d in kept if d["ClientSecretId"] == req.body.get("ClientSecretId")]
        if not found:
            raise ServiceError("ResourceNotFoundException", NOT_FOUND)
        if len(kept) == 1:
            raise ServiceError("InvalidParameterException", LAST_ONE)
        kept.remove(found[0])
    return json_reply({})


def live_secrets(fake: FakeCognito, client_id: str) -> list[str] | None:
    """The client's secrets once this module keeps them (None before: moto's one is the only)."""
    with fake.state.client_secrets.lock:
        kept = fake.state.client_secrets.secrets.get(client_id)
        return None if kept is None else [d["ClientSecretValue"] for d in kept]
