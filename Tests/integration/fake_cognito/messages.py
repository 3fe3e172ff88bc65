"""The fake's request and reply types, the service's errors, and the shapes of a chain link and
an observer (the chain itself, in order, is chain.py)."""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from .shared import AMZ_JSON, ERROR_TYPE_SUFFIX, INCORRECT_CREDENTIALS

if TYPE_CHECKING:
    from .proxy import FakeCognito


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    handled_by: str = "moto"
    note: str | None = None

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"{}")
        except ValueError:
            return None


def json_reply(payload: Any, status: int = 200, handled_by: str = "fake") -> Reply:
    body = json.dumps(payload).encode()
    return Reply(
        status,
        [("Content-Type", AMZ_JSON), ("x-amzn-RequestId", str(uuid.uuid4()))],
        body,
        handled_by,
    )


class ServiceError(Exception):
    def __init__(self, error_type: str, message: str, status: int = 400, note: str | None = None):
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.status = status
        self.note = note

    def reply(self) -> Reply:
        body = json.dumps({"__type": self.error_type, "message": self.message}).encode()
        return Reply(
            self.status,
            [
                ("Content-Type", AMZ_JSON),
                ("x-amzn-ErrorType", self.error_type + ERROR_TYPE_SUFFIX),
                ("x-amzn-RequestId", str(uuid.uuid4())),
            ],
            body,
            "fake",
            self.note,
        )


def not_authorized(message: str = INCORRECT_CREDENTIALS, note: str | None = None) -> ServiceError:
    return ServiceError("NotAuthorizedException", message, note=note)


def jwt_claims(token: str) -> dict[str, Any]:
    """Claims of a JWT, unverified (moto's tokens; only used to find pool/user/origin)."""
    try:
        payload = token.split(".")[1]
        payload += "=" * (-len(payload) % 4)
        return json.loads(base64.urlsafe_b64decode(payload))
    except Exception:
        return {}


@dataclass
class Request:
    op: str
    body: dict[str, Any]
    raw: bytes
    headers: list[tuple[str, str]]
    path: str
    endpoint: str = "primary"  # which listener it came to: "primary", or "replica" (replica.py)

    @property
    def auth_flow(self) -> str | None:
        v = self.body.get("AuthFlow")
        return v if isinstance(v, str) else None

    @property
    def challenge_name(self) -> str | None:
        v = self.body.get("ChallengeName")
        return v if isinstance(v, str) else None


# The rest of an operation's chain after a link: the next links, then moto. Always a Reply.
Rest = Callable[[], Reply]
# A link of an operation's chain: returns a Reply to answer, or None to pass to the next link. A
# link that must see (or change) what the links after it answer calls rest() and returns a Reply.
Handler = Callable[["FakeCognito", Request, Rest], "Reply | None"]
# Sees an operation's answer, whoever gave it (to learn passwords, clients and tokens).
Observer = Callable[["FakeCognito", Request, Reply], None]
