"""The service's request-rate quotas: a token bucket per category, answering TooManyRequestsException
as Cognito does (HTTP 400, x-amzn-ErrorType TooManyRequestsException, {"__type", "message": "Rate
exceeded"}), before the request reaches moto.

Cognito meters admin operations per category, per account and region: UserUpdate
(AdminUserGlobalSignOut, AdminDisableUser, AdminResetUserPassword, AdminForgetDevice, ...) 25 requests
a second by default, UserRead (AdminGetUser, AdminListDevices, AdminListUserAuthEvents, ...) 120,
UserList (ListUsers, ListUsersInGroup) 30 (the category of each operation is the fake's reading of
the quotas page). Off until a test turns it on with POST /_fake/config
{"quota": {"UserUpdate": 25, "UserList": 30}} (requests a second; a bucket holds one second's worth,
as the service allows a short burst); {"quota": {}} turns it off. Every refusal is counted in
fake.state.quota.refused[category] (GET /_fake/config shows the config; the counts are in the log:
handledBy "fake", note "quota").
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from .messages import Reply, Request, Rest, ServiceError

if False:  # typing only
    from .proxy import FakeCognito

CATEGORIES = {
    **{op: "UserUpdate" for op in (
        "AdminUserGlobalSignOut", "AdminDisableUser", "AdminEnableUser", "AdminResetUserPassword", "AdminSetUserPassword",
        "AdminSetUserMFAPreference", "AdminDeleteSoftwareToken", "AdminForgetDevice", "AdminUpdateAuthEventFeedback",
        "AdminRevokeUserSession")},
    **{op: "UserRead" for op in (
        "AdminGetUser", "AdminGetUserAuthFactors", "AdminListGroupsForUser", "AdminListDevices", "AdminListUserAuthEvents",
        "AdminListUserSessions")},
    "ListUsers": "UserList",
    "ListUsersInGroup": "UserList",
}
THROTTLED_MESSAGE = "Rate exceeded"


@dataclass
class Bucket:
    rate: float
    capacity: float
    tokens: float
    last: float

    def take(self, now: float) -> bool:
        self.tokens = min(self.capacity, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


@dataclass
class QuotaState:
    lock: threading.Lock = field(default_factory=threading.Lock)
    buckets: dict[str, Bucket] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    allowed: dict[str, int] = field(default_factory=dict)

    def admit(self, category: str, rate: float) -> bool:
        now = time.monotonic()
        with self.lock:
            bucket = self.buckets.get(category)
            if bucket is None or bucket.rate != rate:
                bucket = self.buckets[category] = Bucket(rate, max(1.0, rate), max(1.0, rate), now)
            ok = bucket.take(now)
            counts = self.allowed if ok else self.refused
            counts[category] = counts.get(category, 0) + 1
            return ok


def enforce(fake: "FakeCognito", req: Request, rest: Rest) -> Reply | None:
    """First link of every metered operation: refused when its category's bucket is empty."""
    quota = fake.config.get("quota") or {}
    category = CATEGORIES.get(req.op)
    rate = quota.get(category) if category else None
    if not rate:
        return None
    if not fake.state.quota.admit(category, float(rate)):
        raise ServiceError("TooManyRequestsException", THROTTLED_MESSAGE, 400, note="quota")
    return None
