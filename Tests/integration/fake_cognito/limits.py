"""GetProvisionedLimit (moto lacks it): the account's request-rate limit of an API category, as
the service answers it (LimitType: ProvisionedLimitValue and FreeLimitValue, requests a second;
botocore 1.44.8's model). The free values are the documented default quotas; POST /_fake/config
{"provisionedLimits": {"UserUpdate": 50}} sets what an account bought, {"provisionedLimits":
"refuse"} answers NotAuthorizedException (an IAM identity without the permission).
"""

from __future__ import annotations

from .messages import Reply, Request, Rest, ServiceError, json_reply
from .proxy import FakeCognito

FREE = {"UserAuthentication": 120, "UserCreation": 50, "UserFederation": 25, "UserRead": 120, "UserList": 30,
        "UserUpdate": 25, "UserAccountRecovery": 30, "UserToken": 120, "ClientAuthentication": 150}


def get_provisioned_limit(fake: FakeCognito, req: Request, rest: Rest) -> Reply:
    configured = fake.config.get("provisionedLimits") or {}
    if configured == "refuse":
        raise ServiceError("NotAuthorizedException", "User is not authorized to perform: cognito-idp:GetProvisionedLimit")
    definition = req.body.get("LimitDefinition") or {}
    category = (definition.get("Attributes") or {}).get("Category") or ""
    if definition.get("LimitClass") != "API_CATEGORY" or category not in FREE:
        raise ServiceError("InvalidParameterException", f"Unknown limit: {category}")
    return json_reply({"Limit": {"LimitDefinition": definition, "ProvisionedLimitValue": int(configured.get(category, FREE[category])),
                                 "FreeLimitValue": FREE[category]}})
