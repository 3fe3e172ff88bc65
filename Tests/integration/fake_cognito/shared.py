"""Literals of the protocol and the texts the service answers with, defined once.

The error messages are those real Cognito sends (see authctl's Tests/CognitoClientTests/
ServiceRefusalTests.swift for their sources), so authctl is tested against the service's words.
"""

from __future__ import annotations

TARGET_PREFIX = "AWSCognitoIdentityProviderService."
AMZ_JSON = "application/x-amz-json-1.1"
ERROR_TYPE_SUFFIX = ":http://internal.amazon.com/coral/com.amazonaws.cognito.identity.idp.model/"

# Challenge names (ChallengeNameType in the service model).
PASSWORD_VERIFIER = "PASSWORD_VERIFIER"
NEW_PASSWORD_REQUIRED = "NEW_PASSWORD_REQUIRED"
SELECT_MFA_TYPE = "SELECT_MFA_TYPE"
MFA_SETUP = "MFA_SETUP"
TOTP = "SOFTWARE_TOKEN_MFA"
SMS = "SMS_MFA"
EMAIL = "EMAIL_OTP"
FACTORS = (TOTP, SMS, EMAIL)
MFA_CHALLENGES = frozenset(FACTORS + (SELECT_MFA_TYPE, MFA_SETUP))
CODE_FIELD = {TOTP: "SOFTWARE_TOKEN_MFA_CODE", SMS: "SMS_MFA_CODE", EMAIL: "EMAIL_OTP_CODE"}
# SELECT_MFA_TYPE's ANSWER: the service model's documentation says EMAIL_MFA, clients send EMAIL_OTP.
SELECT_ANSWERS = {TOTP: TOTP, SMS: SMS, EMAIL: EMAIL, "EMAIL_MFA": EMAIL}


# Texts of the service's refusals.
INCORRECT_CREDENTIALS = "Incorrect username or password."
INVALID_SESSION = "Invalid session for the user."
EXPIRED_SESSION = "Invalid session for the user, session is expired."
NO_TOKEN_NOR_SESSION = "Missing required parameter AccessToken or Session"

SECRET_HASH_MISSING = "Client {client_id} is configured with secret but SECRET_HASH was not received"
SECRET_HASH_MISMATCH = "Unable to verify secret hash for client {client_id}"
ACCESS_TOKEN_REVOKED = "Access Token has been revoked"
REFRESH_TOKEN_REVOKED = "Refresh Token has been revoked"
INVALID_REFRESH_TOKEN = "Invalid Refresh Token"
USER_DISABLED = "User is disabled."
USER_NOT_FOUND = "User does not exist."
USER_NOT_CONFIRMED = "User is not confirmed."
INVALID_CODE = "Invalid code received for user"
SOFTWARE_TOKEN_CODE_MISMATCH = "Code mismatch"
