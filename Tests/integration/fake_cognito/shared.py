"""Literals of the protocol and the texts the service answers with, defined once.

The error messages are those real Cognito sends (see authctl's Tests/CognitoClientTests/
ServiceRefusalTests.swift for their sources), so authctl is tested against the service's words.
"""

from __future__ import annotations

TARGET_PREFIX = "AWSCognitoIdentityProviderService."
AMZ_JSON = "application/x-amz-json-1.1"
ERROR_TYPE_SUFFIX = ":http://internal.amazon.com/coral/com.amazonaws.cognito.identity.idp.model/"

# Challenge names (ChallengeNameType in the service model; test_fake_cognito.py checks them).
PASSWORD_VERIFIER = "PASSWORD_VERIFIER"
NEW_PASSWORD_REQUIRED = "NEW_PASSWORD_REQUIRED"
SELECT_MFA_TYPE = "SELECT_MFA_TYPE"
MFA_SETUP = "MFA_SETUP"
SOFTWARE_TOKEN_MFA = "SOFTWARE_TOKEN_MFA"
SMS_MFA = "SMS_MFA"
EMAIL_OTP = "EMAIL_OTP"  # the email second factor, and the email first factor of USER_AUTH
SMS_OTP = "SMS_OTP"
SELECT_CHALLENGE = "SELECT_CHALLENGE"
PASSWORD = "PASSWORD"
PASSWORD_SRP = "PASSWORD_SRP"
WEB_AUTHN = "WEB_AUTHN"
# WebAuthnConfiguration.FactorConfiguration (POST /_fake/config passkeyFactorConfiguration): passkeys
# then need user verification, and a verified passkey sign-in satisfies MFA.
MULTI_FACTOR_WITH_USER_VERIFICATION = "MULTI_FACTOR_WITH_USER_VERIFICATION"
DEVICE_SRP_AUTH = "DEVICE_SRP_AUTH"
DEVICE_PASSWORD_VERIFIER = "DEVICE_PASSWORD_VERIFIER"
CHALLENGE_NAMES = (PASSWORD_VERIFIER, NEW_PASSWORD_REQUIRED, SELECT_MFA_TYPE, MFA_SETUP, SOFTWARE_TOKEN_MFA, SMS_MFA,
                   EMAIL_OTP, SMS_OTP, SELECT_CHALLENGE, PASSWORD, PASSWORD_SRP, WEB_AUTHN, DEVICE_SRP_AUTH,
                   DEVICE_PASSWORD_VERIFIER)

# Second factors, the MFA challenges and the answer field of each code.
FACTORS = (SOFTWARE_TOKEN_MFA, SMS_MFA, EMAIL_OTP)
MFA_CHALLENGES = frozenset(FACTORS + (SELECT_MFA_TYPE, MFA_SETUP))
CODE_FIELD = {SOFTWARE_TOKEN_MFA: "SOFTWARE_TOKEN_MFA_CODE", SMS_MFA: "SMS_MFA_CODE", EMAIL_OTP: "EMAIL_OTP_CODE"}
# SELECT_MFA_TYPE's ANSWER: the service model's documentation says EMAIL_MFA, clients send EMAIL_OTP.
EMAIL_MFA_ANSWER = "EMAIL_MFA"
SELECT_ANSWERS = {SOFTWARE_TOKEN_MFA: SOFTWARE_TOKEN_MFA, SMS_MFA: SMS_MFA, EMAIL_OTP: EMAIL_OTP,
                  EMAIL_MFA_ANSWER: EMAIL_OTP}

# First factors of USER_AUTH: a pool's AllowedFirstAuthFactors (AuthFactorType), the challenges a
# user may choose from them (ChallengeNameType: PASSWORD is offered as PASSWORD and PASSWORD_SRP),
# and the answer field of the one-time codes.
FIRST_FACTORS = (PASSWORD, EMAIL_OTP, SMS_OTP, WEB_AUTHN)
FIRST_FACTOR_CHALLENGES = (PASSWORD, PASSWORD_SRP, EMAIL_OTP, SMS_OTP, WEB_AUTHN)
OTP_CODE_FIELD = {EMAIL_OTP: "EMAIL_OTP_CODE", SMS_OTP: "SMS_OTP_CODE"}

# Auth flows (AuthFlowType).
USER_SRP_AUTH = "USER_SRP_AUTH"
USER_PASSWORD_AUTH = "USER_PASSWORD_AUTH"
USER_AUTH = "USER_AUTH"
REFRESH_TOKEN_AUTH = "REFRESH_TOKEN_AUTH"
REFRESH_TOKEN = "REFRESH_TOKEN"  # the older name of REFRESH_TOKEN_AUTH
ADMIN_USER_PASSWORD_AUTH = "ADMIN_USER_PASSWORD_AUTH"
ADMIN_NO_SRP_AUTH = "ADMIN_NO_SRP_AUTH"
AUTH_FLOWS = (USER_SRP_AUTH, USER_PASSWORD_AUTH, USER_AUTH, REFRESH_TOKEN_AUTH, REFRESH_TOKEN, ADMIN_USER_PASSWORD_AUTH,
              ADMIN_NO_SRP_AUTH)
PASSWORD_FLOWS = (USER_SRP_AUTH, USER_PASSWORD_AUTH)
REFRESH_FLOWS = (REFRESH_TOKEN_AUTH, REFRESH_TOKEN)
# ExplicitAuthFlowsType: what a client created without ExplicitAuthFlows allows, and the legacy
# name that allows a flow as well as ALLOW_<flow> does.
DEFAULT_EXPLICIT_AUTH_FLOWS = ("ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH", "ALLOW_CUSTOM_AUTH")
LEGACY_EXPLICIT_AUTH_FLOWS = {USER_PASSWORD_AUTH: "USER_PASSWORD_AUTH"}

# Purposes of the account codes accounts.py "sends" (not challenge names, but recorded with the
# delivered codes under "challengeName", as GET /_fake/mfa/code shows them).
SIGN_UP = "SIGN_UP"
FORGOT_PASSWORD = "FORGOT_PASSWORD"


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

# Session tracking (sessions.py): the error codes are the model's, the texts ours.
SESSION_TRACKING_DISABLED = "Session tracking is not enabled for this user pool."
SESSION_NOT_FOUND = "Session not found."
CURRENT_SESSION_NOT_REVOCABLE = "The current session cannot be revoked with RevokeUserSession: use RevokeToken."
INVALID_ACCESS_TOKEN = "Invalid Access Token"
FLOW_NOT_ENABLED = "{flow} flow not enabled for this client"  # InvalidParameterException, as InitiateAuth's
