"""Threat protection's record of sign-in events (moto has none): AdminListUserAuthEvents and
AdminUpdateAuthEventFeedback, as the service answers them (AuthEventType with epoch-second dates,
pages of MaxResults with NextToken; shapes and error types from botocore 1.44.8's model).

Off unless a pool has threat protection (POST /_fake/config {"threatProtection": {"<pool id>":
true}}): otherwise both answer UserPoolAddOnNotEnabledException. Tests seed a user's events,
newest first, in the model's shape with POST /_fake/config {"authEvents": {"<pool id>/<username>":
[{"EventId": ..., "EventType": "SignIn", "CreationDate": 1764..., "EventResponse": "Pass",
"EventRisk": {...}, "EventContextData": {"IpAddress", "City", "Country", "DeviceName"}}]}} (hostile
names and huge lists included). Feedback is kept here (fake.state.auth_events) and shown as the
event's EventFeedback {"FeedbackValue", "Provider": "Admin", "FeedbackDate"}.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .admin_users import _user
from .messages import Reply, Request, Rest, ServiceError, json_reply
from .proxy import FakeCognito

ADD_ON_OFF = "Threat protection is not enabled for this user pool."  # the fake's wording
EVENT_NOT_FOUND = "Event not found."  # the fake's wording


@dataclass
class AuthEventState:
    lock: threading.Lock = field(default_factory=threading.Lock)
    feedback: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)  # (pool, user, event) -> feedback


def _events(fake: FakeCognito, req: Request) -> tuple[str, str, list[dict[str, Any]]]:
    pool_id = req.body.get("UserPoolId") or ""
    if not (fake.config.get("threatProtection") or {}).get(pool_id):
        raise ServiceError("UserPoolAddOnNotEnabledException", ADD_ON_OFF)
    username = _user(fake, req)["Username"]
    return pool_id, username, list((fake.config.get("authEvents") or {}).get(f"{pool_id}/{username}") or [])


def admin_list_user_auth_events(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    pool_id, username, events = _events(fake, req)
    size = int(req.body.get("MaxResults") or 60)
    start = int(req.body.get("NextToken") or 0)
    page = [dict(e) for e in events[start:start + size]]
    with fake.state.auth_events.lock:
        for event in page:
            kept = fake.state.auth_events.feedback.get((pool_id, username, event.get("EventId", "")))
            if kept:
                event["EventFeedback"] = kept
    body: dict[str, Any] = {"AuthEvents": page}
    if start + size < len(events):
        body["NextToken"] = str(start + size)
    return json_reply(body)


def admin_update_auth_event_feedback(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    pool_id, username, events = _events(fake, req)
    event_id = req.body.get("EventId") or ""
    if not any(e.get("EventId") == event_id for e in events):
        raise ServiceError("ResourceNotFoundException", EVENT_NOT_FOUND)
    with fake.state.auth_events.lock:
        fake.state.auth_events.feedback[(pool_id, username, event_id)] = {
            "FeedbackValue": req.body.get("FeedbackValue"), "Provider": "Admin", "FeedbackDate": time.time()}
    return json_reply({})
