"""The signed-in user's own attributes, which moto lacks or plays loosely: UpdateUserAttributes
(moto changes every value at once and sends nothing), GetUserAttributeVerificationCode,
VerifyUserAttribute, DeleteUserAttributes, DeleteUser and GetUserAuthFactors (moto has none of
these), shaped as botocore's cognito-idp model and answered as the service does:

* UpdateUserAttributes: an email or phone_number listed in the pool's
  UserAttributeUpdateSettings.AttributesRequireVerificationBeforeUpdate is not changed: the new
  value waits (AttributeState.pending) until it is verified, and the old one stays in force. Other
  addresses change at once with <name>_verified = false. A code is sent to each new address of
  either kind that the pool verifies (AutoVerifiedAttributes, or the keep-original setting);
  CodeDeliveryDetailsList says where.
* GetUserAttributeVerificationCode: a new code (voiding the last) for the pending value, else the
  current one; InvalidParameterException when the user has neither.
* VerifyUserAttribute: the code checked as accounts.check_code does (CodeMismatchException,
  ExpiredCodeException, LimitExceededException after 5 wrong); then the pending value is put in
  force, verified.
* GetUserAuthFactors: the MFA from mfa.py's state and the first factors the user could choose
  (passwordless.available_challenges).

Codes are recorded with the user's other delivered codes (GET /_fake/mfa/code: challengeName
VERIFY_email or VERIFY_phone_number, "to" the new address). POST /_fake/config
{"accountCodeLifetime": SECONDS} shortens their life (default 24 h, as Cognito's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from . import accounts
from .messages import Handler, Reply, Request, Rest, ServiceError, json_reply
from .mfa import mfa_user, user_of_access_token
from .mfa_state import mask_email, mask_phone
from .passwordless import available_challenges
from .proxy import ClientInfo, FakeCognito
from .shared import PASSWORD_SRP

ADDRESSES = ("email", "phone_number")
CODE_LIFETIME = 86400.0


def purpose(attribute: str) -> str:
    return f"VERIFY_{attribute}"


for _name in ADDRESSES:
    accounts.LIFETIMES.setdefault(purpose(_name), CODE_LIFETIME)


@dataclass
class AttributeState:
    """What this module keeps (fake.state.attributes), under the fake's lock."""

    pending: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (pool, user, attribute) -> new value


def _region(pool_id: str) -> str:
    return pool_id.split("_")[0]


def signed_in(op: Callable[[FakeCognito, Request, str, str], Reply]) -> Handler:
    """A link for an operation of the access token's user: (pool id, username) from the token
    (revoked ones refused), or moto's refusal of the token as the answer."""
    def link(fake: FakeCognito, req: Request, rest: Rest) -> Reply | None:
        who = user_of_access_token(fake, req)
        if isinstance(who, Reply):
            return who
        return op(fake, req, *who)
    link.__name__ = op.__name__
    return link


def _user(fake: FakeCognito, pool_id: str, username: str) -> dict[str, Any]:
    return fake.call("AdminGetUser", {"UserPoolId": pool_id, "Username": username}, _region(pool_id)).json() or {}


def _pool(fake: FakeCognito, pool_id: str) -> dict[str, Any]:
    return (fake.call("DescribeUserPool", {"UserPoolId": pool_id}, _region(pool_id)).json() or {}).get("UserPool") or {}


def _admin_update(fake: FakeCognito, pool_id: str, username: str, attrs: list[dict[str, str]]) -> None:
    got = fake.call("AdminUpdateUserAttributes", {"UserPoolId": pool_id, "Username": username, "UserAttributes": attrs},
                    _region(pool_id))
    if got.status != 200:
        body = got.json() or {}
        raise ServiceError(str(body.get("__type") or "InvalidParameterException").split("#")[-1],
                           str(body.get("message") or "invalid attributes"), got.status)


def _send(fake: FakeCognito, pool_id: str, user: dict[str, Any], attribute: str, value: str) -> dict[str, str]:
    if attribute == "email":
        delivery = {"Destination": mask_email(value), "DeliveryMedium": "EMAIL", "AttributeName": "email"}
    else:
        delivery = {"Destination": mask_phone(value), "DeliveryMedium": "SMS", "AttributeName": "phone_number"}
    accounts.send_code(fake, pool_id, user, purpose(attribute), delivery)
    with fake.lock:
        mfa_user(fake, pool_id, user["Username"]).sent[-1]["to"] = value
    return delivery


@signed_in
def update_user_attributes(fake: FakeCognito, req: Request, pool_id: str, username: str) -> Reply:
    wanted = req.body.get("UserAttributes")
    if not isinstance(wanted, list) or not wanted:
        raise ServiceError("InvalidParameterException", "Missing required parameter UserAttributes")
    pool = _pool(fake, pool_id)
    keep = set((pool.get("UserAttributeUpdateSettings") or {}).get("AttributesRequireVerificationBeforeUpdate") or [])
    verified_by_pool = set(pool.get("AutoVerifiedAttributes") or []) | keep
    now: list[dict[str, str]] = []
    waiting: dict[str, str] = {}
    for attr in wanted:
        name, value = attr.get("Name"), attr.get("Value", "")
        if name in ADDRESSES and name in keep:
            waiting[name] = value
            continue
        now.append({"Name": name, "Value": value})
        if name in ADDRESSES:
            now.append({"Name": f"{name}_verified", "Value": "false"})
    if now:
        _admin_update(fake, pool_id, username, now)
    user = _user(fake, pool_id, username)
    deliveries = []
    with fake.lock:
        for name, value in waiting.items():
            fake.state.attributes.pending[(pool_id, username, name)] = value
        for name in ADDRESSES:
            if name not in waiting and any(a["Name"] == name for a in now):
                fake.state.attributes.pending.pop((pool_id, username, name), None)
    for attr in wanted:
        name = attr.get("Name")
        if name in ADDRESSES and name in verified_by_pool:
            deliveries.append(_send(fake, pool_id, user, name, attr.get("Value", "")))
    reply = json_reply({"CodeDeliveryDetailsList": deliveries} if deliveries else {}, handled_by="fake+moto")
    reply.note = f"kept until verified: {sorted(waiting)}" if waiting else None
    return reply


@signed_in
def get_user_attribute_verification_code(fake: FakeCognito, req: Request, pool_id: str, username: str) -> Reply:
    name = req.body.get("AttributeName")
    if name not in ADDRESSES:
        raise ServiceError("InvalidParameterException", "Invalid attribute name. Only email and phone_number can be verified.")
    user = _user(fake, pool_id, username)
    with fake.lock:
        value = fake.state.attributes.pending.get((pool_id, username, name))
    if value is None:
        value = next((a.get("Value") for a in user.get("UserAttributes", []) if a["Name"] == name), None)
    if not value:
        raise ServiceError("InvalidParameterException", f"User has no attribute matching {name}")
    return json_reply({"CodeDeliveryDetails": _send(fake, pool_id, user, name, value)}, handled_by="fake+moto")


@signed_in
def verify_user_attribute(fake: FakeCognito, req: Request, pool_id: str, username: str) -> Reply:
    name = req.body.get("AttributeName")
    if name not in ADDRESSES:
        raise ServiceError("InvalidParameterException", "Invalid attribute name. Only email and phone_number can be verified.")
    if not req.body.get("Code"):
        raise ServiceError("InvalidParameterException", "Missing required parameter Code")
    accounts.check_code(fake, pool_id, username, purpose(name), req.body.get("Code"))
    with fake.lock:
        value = fake.state.attributes.pending.pop((pool_id, username, name), None)
    attrs = [{"Name": f"{name}_verified", "Value": "true"}]
    if value is not None:
        attrs.insert(0, {"Name": name, "Value": value})
    _admin_update(fake, pool_id, username, attrs)
    return json_reply({}, handled_by="fake+moto")


@signed_in
def delete_user_attributes(fake: FakeCognito, req: Request, pool_id: str, username: str) -> Reply:
    names = req.body.get("UserAttributeNames")
    if not isinstance(names, list) or not names:
        raise ServiceError("InvalidParameterException", "Missing required parameter UserAttributeNames")
    got = fake.call("AdminDeleteUserAttributes", {"UserPoolId": pool_id, "Username": username, "UserAttributeNames": names},
                    _region(pool_id))
    got.handled_by = "fake+moto"
    if got.status == 200:
        with fake.lock:
            for name in names:
                fake.state.attributes.pending.pop((pool_id, username, name), None)
    return got


@signed_in
def delete_user(fake: FakeCognito, req: Request, pool_id: str, username: str) -> Reply:
    got = fake.call("AdminDeleteUser", {"UserPoolId": pool_id, "Username": username}, _region(pool_id))
    got.handled_by = "fake+moto"
    return got


@signed_in
def get_user_auth_factors(fake: FakeCognito, req: Request, pool_id: str, username: str) -> Reply:
    user = _user(fake, pool_id, username)
    first = [c for c in available_challenges(fake, ClientInfo("", pool_id, None, []), user) if c != PASSWORD_SRP]
    body: dict[str, Any] = {"Username": username, "ConfiguredUserAuthFactors": first}
    with fake.lock:
        mfa = fake.state.mfa.users.get((pool_id, username))
        if mfa and mfa.enabled:
            body["UserMFASettingList"] = list(mfa.enabled)
            # The July 2026 model's auth factors: SOFTWARE_TOKEN, an MFA-only factor, for a user
            # with an authenticator app (botocore 1.44.8's AuthFactorType documents it so).
            if "SOFTWARE_TOKEN_MFA" in mfa.enabled:
                first.append("SOFTWARE_TOKEN")
        if mfa and mfa.preferred:
            body["PreferredMfaSetting"] = mfa.preferred
    return json_reply(body, handled_by="fake+moto")
