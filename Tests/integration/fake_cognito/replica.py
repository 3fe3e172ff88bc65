"""A replica of the pools in a second region (multi-Region replication): the fake's second
listener ("REPLICA <port>" on its stdout) answers from the same state as the primary, so sign-in
and refresh work there as they do on the primary, and it is read-only for the directory: every
write is refused before any link sees it. Faults can be aimed at one listener
(POST /_fake/faults {"endpoint": "primary", ...}), so a test takes the primary down and keeps
the replica up. Each log entry says which listener the request came to ("endpoint").
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
READ_ONLY = "This operation is not available on a replica user pool: it is read-only; use the primary region."


def refuse_writes(req: Request) -> None:
    if req.endpoint == "replica" and req.op in WRITES:
        raise ServiceError("ForbiddenException", READ_ONLY, note="write refused by the replica")
