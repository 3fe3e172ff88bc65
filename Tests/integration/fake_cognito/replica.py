"""A replica of the pools in a second region (multi-Region replication): the fake's second
listener ("REPLICA <port>" on its stdout) answers from the same state as the primary, so sign-in
and refresh work there as they do on the primary, and it is read-only for the directory: every
write is refused before any link sees it. Faults can be aimed at one listener
(POST /_fake/faults {"endpoint": "primary", ...}), so a test takes the primary down and keeps
the replica up. Each log entry says which listener the request came to ("endpoint").

The refusal is OperationNotEnabledException (HTTP 400), which botocore's cognito-idp model
(1.44.x) declares for every user-pool operation and documents as "thrown when an operation is not
available in the current region or for the current user pool configuration. This can occur when
attempting to perform operations that are not supported in secondary replica regions." Its
message here is the fake's own (the service's wording is not documented). Which operations a
replica refuses is the fake's reading of the model's ReplicaRoleType: a SECONDARY replica allows
"only end-user operations that do not create or change attributes of a user"; sign-out
(GlobalSignOut, RevokeToken) and reads (GetUser, ListDevices) are served, as the issue's "a
session the replica issued keeps working (refresh, sign-out)" assumes.
"""

from __future__ import annotations

from .messages import Request, ServiceError

# The directory's writes, which a replica refuses (the user's own and the account's, plus the
# admin ones a test might send).
WRITES = frozenset({
    "SignUp", "ConfirmSignUp", "ResendConfirmationCode", "ForgotPassword", "ConfirmForgotPassword",
    "ChangePassword", "UpdateUserAttributes", "GetUserAttributeVerificationCode", "VerifyUserAttribute",
    "DeleteUserAttributes", "DeleteUser", "AssociateSoftwareToken", "VerifySoftwareToken", "SetUserMFAPreference",
    "ConfirmDevice", "UpdateDeviceStatus", "ForgetDevice", "AdminCreateUser", "AdminSetUserPassword",
    "AdminUpdateUserAttributes", "AdminDeleteUser", "CreateUserPool", "CreateUserPoolClient", "UpdateUserPool",
})
READ_ONLY = "This operation is not supported in a secondary replica region of this user pool (the fake's wording)."


def refuse_writes(req: Request) -> None:
    if req.endpoint == "replica" and req.op in WRITES:
        raise ServiceError("OperationNotEnabledException", READ_ONLY, note="write refused by the replica")
