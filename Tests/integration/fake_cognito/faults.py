"""Injected faults (POST /_fake/faults): which requests they hit and the answer they make."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .messages import Reply, ServiceError
from .shared import AMZ_JSON

FAULT_KINDS = ("status", "error", "throttle", "drop", "html", "stall", "truncate", "huge")


@dataclass
class FaultRule:
    """One injected fault. JSON fields (POST /_fake/faults):

    operation  "GetUser", "*" (any Cognito operation). Default "*".
    kind       status   -> HTTP `status` (default 500) with a JSON InternalErrorException body
               error    -> HTTP `status` (default 400) service error `errorType` / `message`
               throttle -> HTTP 400 TooManyRequestsException
               drop     -> close the connection without an answer
               html     -> HTTP `status` (default 502) with an HTML page, as a proxy would
               stall    -> sleep `seconds` (default 60), then answer normally
               truncate -> announce a longer body than sent, then close
               huge     -> HTTP 200 with a body of `size` bytes (default 2 MiB)
    count      how many matching requests it hits (default 1; -1 = until cleared)
    when       "before" (default): the request never reaches moto;
               "after": moto performs it, then the client gets the fault instead
    authFlow / challengeName   optional narrower match
    endpoint   "primary" or "replica": only requests that came to that listener (default: both)
    """

    operation: str = "*"
    kind: str = "status"
    count: int = 1
    when: str = "before"
    status: int | None = None
    errorType: str | None = None
    message: str | None = None
    seconds: float = 60.0
    size: int = 2 * 1024 * 1024
    authFlow: str | None = None
    challengeName: str | None = None
    endpoint: str | None = None

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "FaultRule":
        known = set(cls.__dataclass_fields__)
        unknown = set(obj) - known
        if unknown:
            raise ValueError(f"unknown fault fields: {sorted(unknown)}")
        rule = cls(**obj)
        if rule.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {rule.kind!r}; one of {FAULT_KINDS}")
        if rule.when not in ("before", "after"):
            raise ValueError("when must be 'before' or 'after'")
        return rule

    def matches(self, op: str, auth_flow: str | None, challenge: str | None, endpoint: str = "primary") -> bool:
        if self.operation not in ("*", op):
            return False
        if self.endpoint and self.endpoint != endpoint:
            return False
        if self.authFlow and self.authFlow != auth_flow:
            return False
        if self.challengeName and self.challengeName != challenge:
            return False
        return self.count != 0


def fault_reply(rule: FaultRule) -> Reply:
    """The answer of a fault that answers (html, huge, throttle, error, status)."""
    kind = rule.kind
    if kind == "html":
        status = rule.status or 502
        page = (
            f"<html><head><title>{status} Bad Gateway</title></head><body><center><h1>{status} Bad Gateway</h1>"
            "</center><hr><center>nginx</center></body></html>\n"
        ).encode()
        return Reply(status, [("Content-Type", "text/html")], page, "fault")
    if kind == "huge":
        return Reply(rule.status or 200, [("Content-Type", AMZ_JSON)], b'{"pad":"' + b"x" * rule.size + b'"}', "fault")
    if kind == "throttle":
        return ServiceError("TooManyRequestsException", rule.message or "Too many requests", rule.status or 400).reply()
    if kind == "error":
        return ServiceError(rule.errorType or "InternalErrorException", rule.message or "Injected error", rule.status or 400).reply()
    status = rule.status or 500  # kind "status"
    return ServiceError(rule.errorType or "InternalErrorException", rule.message or f"Injected HTTP {status}", status).reply()
