"""A fake Amazon Cognito user-pools endpoint that fronts moto's server.

moto is lenient where it matters most for authctl: it accepts any SRP
PASSWORD_CLAIM_SIGNATURE and sends a SECRET_BLOCK that is not base64, so moto
alone proves nothing about SRP. This server forwards every request to moto
unchanged, except:

* InitiateAuth USER_SRP_AUTH and RespondToAuthChallenge PASSWORD_VERIFIER,
  which it answers itself with the real server side of Cognito's SRP
  (RFC 5054 3072-bit group, HKDF "Caldera Derived Key"), using passwords it
  learns as they pass through (AdminCreateUser, AdminSetUserPassword, SignUp,
  ChangePassword, NEW_PASSWORD_REQUIRED, ConfirmForgotPassword, a successful
  USER_PASSWORD_AUTH). After a valid signature it asks moto for the real outcome
  with AdminInitiateAuth ADMIN_USER_PASSWORD_AUTH.
* SECRET_HASH, which it checks on InitiateAuth and RespondToAuthChallenge where
  moto does not, and the client's ExplicitAuthFlows, which moto ignores.
* RevokeToken, which moto lacks (its server answers HTTP 500); the fake keeps
  the revoked refresh tokens and refuses them, and the access tokens issued
  from them, afterwards.
* GetTokensFromRefreshToken, also missing in moto: forwarded (HTTP 500) unless
  POST /_fake/config {"getTokensFromRefreshToken": "fake"}; then implemented,
  with refresh-token rotation for app clients created with RefreshTokenRotation
  ENABLED (which also makes InitiateAuth REFRESH_TOKEN_AUTH refused).
* Multi-factor authentication, which moto plays only in part (it checks TOTP
  codes against one fixed secret, and only with
  MOTO_COGNITO_IDP_USER_POOL_ENABLE_TOTP=true; its MFA_SETUP answer hands out
  tokens for any live session; SELECT_MFA_TYPE and EMAIL_OTP answer {}). The
  fake keeps a per-user MFA state, set by tests through POST /_fake/mfa and by
  clients through SetUserMFAPreference / AssociateSoftwareToken /
  VerifySoftwareToken, and after a right password (SRP, USER_PASSWORD_AUTH or a
  NEW_PASSWORD_REQUIRED answer) puts SOFTWARE_TOKEN_MFA, SMS_MFA, EMAIL_OTP,
  SELECT_MFA_TYPE or MFA_SETUP instead of handing out tokens (see MfaUser).
* Fault injection, driven through POST /_fake/faults (see FaultRule).

Every request is appended as one JSON line to the --log file: operation,
AuthFlow / ChallengeName, HTTP status, who answered, the client connection.
No password or token is ever logged.

The package, one job per module:
  shared       protocol literals (challenge names, auth flows, first factors) and the service's
               texts, defined once; every module takes them from here
  messages     Request, Reply, ServiceError; the shapes of a chain link (Handler) and an Observer
  chain        who answers what, in order: LINKS (operation -> its links), OBSERVERS, FakeState
  srp          SRP server math and the SRP challenge
  proxy        FakeCognito: forwarding to moto, clients, passwords, config, faults, the request log;
               its chain and the state of the chain's modules (fake.state)
  auth         InitiateAuth / RespondToAuthChallenge (SRP, SECRET_HASH, auth flows)       AuthState
  tokens       RevokeToken, GetTokensFromRefreshToken, revoked access tokens               TokenState
  mfa_state    a user's MFA and a live MFA challenge; TOTP                                 MfaState
  mfa          the MFA operations and POST /_fake/mfa
  accounts     sign-up and password-reset codes; UNCONFIRMED / RESET_REQUIRED sign-ins     AccountState
  passwordless USER_AUTH: SELECT_CHALLENGE and the first factors
  devices      remembered devices, device SRP, ListDevices / ForgetDevice                  DeviceState
  observers    learning passwords, clients and tokens from what passes through
  faults       FaultRule and the answers faults make
  quota        the service's request-rate quotas (token bucket per category), config "quota"   QuotaState
  admin_users  AdminGetUserAuthFactors, AdminDeleteSoftwareToken; the service's refusals of
               AdminResetUserPassword and AdminSetUserMFAPreference
  auth_events  threat protection's sign-in events and their feedback                      AuthEventState
  limits       GetProvisionedLimit
  client_secrets an app client's secrets (two at most)                                     ClientSecretState
  server       the HTTP server and main()

How a request is answered: its operation's links in chain.LINKS, first to last; each answers
(returns a Reply) or passes (returns None); after the last, moto answers. A link that must see what
the later ones answer calls rest(). Then chain.OBSERVERS see the answer. No module registers
anything on import: the order is the list in chain.py.

To add an operation or a challenge: one new module (its links, taking (fake, req, rest); its state
in one class, if it keeps any, which FakeState makes once per fake as fake.state.<name>), then one
entry in chain.LINKS (its place in the operation's order) and one field in chain.FakeState;
new challenge names and flows go in shared.py (test_fake_cognito.py checks them against
botocore's model).

Usage: python3 -m fake_cognito --upstream http://127.0.0.1:MOTO --port 0 --log PATH
       (or python3 Tests/integration/fake_cognito ...)
Prints "PORT <n>" on its first stdout line once listening, and "REPLICA <n>" on the second: the
same fake playing a read-only replica pool in a second region (replica.py).
"""

from __future__ import annotations

from .shared import *  # noqa: F401,F403
from .messages import *  # noqa: F401,F403
from .srp import *  # noqa: F401,F403
from .faults import *  # noqa: F401,F403
from .mfa_state import *  # noqa: F401,F403
from .proxy import *  # noqa: F401,F403
from .chain import CHAIN, LINKS, OBSERVERS, Chain, FakeState  # noqa: F401
from .server import main, serve  # noqa: F401
from . import accounts, attributes, auth, devices, issuer, mfa, observers, passwordless, quota, tokens  # noqa: F401
