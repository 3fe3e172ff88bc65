#!/usr/bin/env bash
# `make demo`: authctl against a local Cognito emulator and a private Secret Service.
#
# Starts moto's server and, in front of it, Tests/integration/fake_cognito (which checks the
# SRP proof for real) on free loopback ports; a private session bus with gnome-keyring in a
# temporary HOME; creates a user pool, an app client and a user with boto3; then runs each
# authctl step under a heading. Everything is stopped and removed on exit.
#
# Add a step with one `step` line at the end: step "Heading" EXPECTED_EXIT STDIN authctl-args...
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PYTHON=${PYTHON:-python3}
AUTHCTL_BIN=${AUTHCTL_BIN:-$ROOT/.build/debug/authctl}
SYSTEM_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
USERNAME=alice
PASSWORD='Demo-Passw0rd!'
NEW_USER=carol
NEW_USER_PASSWORD='Carol-Passw0rd!'

if [ ! -x "$AUTHCTL_BIN" ]; then
    echo "demo: no authctl binary at $AUTHCTL_BIN (run: swift build)" >&2
    exit 1
fi

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
    BOLD=$'\033[1m' DIM=$'\033[2m' RED=$'\033[31m' GREEN=$'\033[32m' RESET=$'\033[0m'
else
    BOLD='' DIM='' RED='' GREEN='' RESET=''
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/authctl-demo.XXXXXX")
GROUPS_TO_KILL=()
cleanup() {
    local pid
    for pid in "${GROUPS_TO_KILL[@]}"; do
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '%s\n' "${DIM}$*${RESET}"; }
fail() { printf '%s\n' "${RED}demo: $*${RESET}" >&2; exit 1; }

free_port() { "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Starts "$@" in its own process group (killed on exit); its output goes to $WORK/$name.log.
start_bg() {
    local name=$1; shift
    setsid "$@" >"$WORK/$name.log" 2>&1 </dev/null &
    GROUPS_TO_KILL+=("$!")
}

wait_for() {  # wait_for DESCRIPTION SECONDS COMMAND...
    local what=$1 secs=$2; shift 2
    local deadline=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || fail "$what did not come up; logs in $WORK"
        sleep 0.1
    done
}

# --- 1. the emulator: moto, and the SRP-checking fake in front of it ------------------------
MOTO_PORT=$(free_port)
start_bg moto "$PYTHON" -m moto.server -H 127.0.0.1 -p "$MOTO_PORT"
wait_for "moto" 60 "$PYTHON" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$MOTO_PORT/moto-api/data.json', timeout=1)"

start_bg fake "$PYTHON" "$ROOT/Tests/integration/fake_cognito" \
    --upstream "http://127.0.0.1:$MOTO_PORT" --port 0 --log "$WORK/requests.jsonl"
wait_for "fake Cognito" 30 grep -q '^PORT ' "$WORK/fake.log"
FAKE_PORT=$(sed -n 's/^PORT \([0-9]*\).*/\1/p' "$WORK/fake.log" | head -n1)
ENDPOINT="http://127.0.0.1:$FAKE_PORT/"

# The identity-pool fake (checks the id token and assumes the pool's role with moto's STS).
start_bg identity "$PYTHON" "$ROOT/Tests/integration/fake_identity.py" --upstream "http://127.0.0.1:$MOTO_PORT" --port 0
wait_for "fake Cognito Identity" 30 grep -q '^PORT ' "$WORK/identity.log"
IDENTITY_URL="http://127.0.0.1:$(sed -n 's/^PORT \([0-9]*\).*/\1/p' "$WORK/identity.log" | head -n1)"

# --- 2. a private Secret Service in a temporary HOME --------------------------------------
DEMO_HOME="$WORK/home"
mkdir -p "$DEMO_HOME/.config" "$DEMO_HOME/.cache" "$DEMO_HOME/.local/share" "$DEMO_HOME/.run"
chmod 700 "$DEMO_HOME/.run"
HOME_ENV=(
    "HOME=$DEMO_HOME"
    "XDG_CONFIG_HOME=$DEMO_HOME/.config"
    "XDG_CACHE_HOME=$DEMO_HOME/.cache"
    "XDG_DATA_HOME=$DEMO_HOME/.local/share"
    "XDG_RUNTIME_DIR=$DEMO_HOME/.run"
)
start_bg keyring env -i "PATH=$SYSTEM_PATH" "${HOME_ENV[@]}" \
    dbus-run-session -- bash "$ROOT/Tests/support/keyring-session.sh" "$WORK/keyring.env"
wait_for "the private Secret Service" 30 test -s "$WORK/keyring.env"
DBUS_ADDRESS=$(sed -n 's/^DBUS_SESSION_BUS_ADDRESS=//p' "$WORK/keyring.env")

# --- 3. a user pool, an app client and a user (boto3, through the fake) -------------------
eval "$(ENDPOINT=$ENDPOINT USERNAME=$USERNAME PASSWORD=$PASSWORD "$PYTHON" - <<'PY'
import os, shlex, boto3
c = boto3.client("cognito-idp", endpoint_url=os.environ["ENDPOINT"], region_name="us-east-1",
                 aws_access_key_id="demo", aws_secret_access_key="demo")
user, password = os.environ["USERNAME"], os.environ["PASSWORD"]
pool = c.create_user_pool(PoolName="authctl-demo", AutoVerifiedAttributes=["email"])["UserPool"]["Id"]
client = c.create_user_pool_client(
    UserPoolId=pool, ClientName="authctl-demo",
    ExplicitAuthFlows=["ALLOW_USER_SRP_AUTH", "ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
)["UserPoolClient"]["ClientId"]
c.admin_create_user(UserPoolId=pool, Username=user, MessageAction="SUPPRESS", TemporaryPassword="Temp-Passw0rd!",
                    UserAttributes=[{"Name": "email", "Value": f"{user}@example.com"},
                                    {"Name": "email_verified", "Value": "true"}])
c.admin_set_user_password(UserPoolId=pool, Username=user, Password=password, Permanent=True)
c.create_group(UserPoolId=pool, GroupName="developers")
c.admin_add_user_to_group(UserPoolId=pool, Username=user, GroupName="developers")
print(f"POOL_ID={shlex.quote(pool)}; CLIENT_ID={shlex.quote(client)}")
PY
)"

# An identity pool trusting that user pool and app client, with an authenticated role.
eval "$(POOL_ID=$POOL_ID CLIENT_ID=$CLIENT_ID IDENTITY_URL=$IDENTITY_URL "$PYTHON" - <<'PY'
import os, shlex, boto3
kw = dict(endpoint_url=os.environ["IDENTITY_URL"], region_name="us-east-1", aws_access_key_id="demo", aws_secret_access_key="demo")
role = boto3.client("iam", **kw).create_role(RoleName="cognito-demo-developers", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
ci = boto3.client("cognito-identity", **kw)
pool = ci.create_identity_pool(IdentityPoolName="authctl_demo", AllowUnauthenticatedIdentities=False, CognitoIdentityProviders=[
    {"ProviderName": f"cognito-idp.us-east-1.amazonaws.com/{os.environ['POOL_ID']}", "ClientId": os.environ["CLIENT_ID"]}])["IdentityPoolId"]
ci.set_identity_pool_roles(IdentityPoolId=pool, Roles={"authenticated": role})
print(f"IDENTITY_POOL_ID={shlex.quote(pool)}")
PY
)"

AUTHCTL=(env -i "PATH=$SYSTEM_PATH" "${HOME_ENV[@]}" "DBUS_SESSION_BUS_ADDRESS=$DBUS_ADDRESS"
    "AUTHCTL_USER_POOL_ID=$POOL_ID" "AUTHCTL_CLIENT_ID=$CLIENT_ID" "AUTHCTL_ENDPOINT=$ENDPOINT"
    "AUTHCTL_REGION=us-east-1" "AUTHCTL_IDENTITY_POOL_ID=$IDENTITY_POOL_ID"
    "AWS_ENDPOINT_URL_COGNITO_IDENTITY=$IDENTITY_URL" "$AUTHCTL_BIN")

printf '%s\n' "${BOLD}authctl demo${RESET}"
say "Cognito emulator: $ENDPOINT (moto on :$MOTO_PORT behind a fake that verifies SRP for real)"
say "Secret Service:   gnome-keyring on a private session bus, HOME=$DEMO_HOME"
say "User pool $POOL_ID, app client $CLIENT_ID, user $USERNAME (group developers)"
say "Identity pool $IDENTITY_POOL_ID at $IDENTITY_URL (a fake in front of moto's identity and STS)"
say "Environment:      AUTHCTL_USER_POOL_ID AUTHCTL_CLIENT_ID AUTHCTL_ENDPOINT AUTHCTL_REGION AUTHCTL_IDENTITY_POOL_ID"

STEPS=0
FAILED=0
# step "Heading" EXPECTED_EXIT STDIN authctl-args...   (STDIN "" = none; a password is shown as ****)
# STEP_ENV=(NAME=value ...) adds variables to authctl's otherwise empty environment (env -i).
STEP_ENV=()
step() {
    local title=$1 expected=$2 input=$3; shift 3
    STEPS=$((STEPS + 1))
    printf '\n%s\n' "${BOLD}== $STEPS. $title${RESET}"
    local rc=0 shown=""
    [ ${#STEP_ENV[@]} -eq 0 ] || shown="$(printf '%s ' "${STEP_ENV[@]%%=*}" | sed 's/\([A-Z_]*\) /\1=... /g')"
    # AUTHCTL is `env -i VAR=... authctl`: STEP_ENV goes in after `env -i`.
    local command=("${AUTHCTL[@]:0:2}" ${STEP_ENV[@]+"${STEP_ENV[@]}"} "${AUTHCTL[@]:2}")
    if [ -n "$input" ]; then
        printf '%s\n' "\$ printf '%s\\n' '********' | ${shown}authctl $*"
        printf '%s\n' "$input" | "${command[@]}" "$@" || rc=$?
    else
        printf '%s\n' "\$ ${shown}authctl $*"
        "${command[@]}" "$@" </dev/null || rc=$?
    fi
    if [ "$rc" -eq "$expected" ]; then
        printf '%s\n' "${GREEN}(exit $rc)${RESET}"
    else
        printf '%s\n' "${RED}(exit $rc, expected $expected)${RESET}"
        FAILED=$((FAILED + 1))
    fi
}

# show "Heading" command...: a look behind the scenes (not authctl itself).
show() {
    local title=$1; shift
    printf '\n%s\n' "${BOLD}-- $title${RESET}"
    "$@" || true
}

# check "Heading" command...: a look behind the scenes that must hold (counted as a step).
check() {
    local title=$1; shift
    STEPS=$((STEPS + 1))
    printf '\n%s\n' "${BOLD}== $STEPS. $title${RESET}"
    if "$@"; then
        printf '%s\n' "${GREEN}(holds)${RESET}"
    else
        printf '%s\n' "${RED}(does not hold)${RESET}"
        FAILED=$((FAILED + 1))
    fi
}

# token_step "Heading" authctl-args...: like step (expects exit 0), but never prints the whole
# token: only its first 20 characters and its length.
token_step() {
    local title=$1; shift
    STEPS=$((STEPS + 1))
    printf '\n%s\n' "${BOLD}== $STEPS. $title${RESET}"
    printf '%s\n' "\$ authctl $* | cut -c1-20    # and its length; the whole token is not shown"
    local token rc=0
    token=$("${AUTHCTL[@]}" "$@" </dev/null) || rc=$?
    printf '%s...  (%d characters)\n' "${token:0:20}" "${#token}"
    if [ "$rc" -eq 0 ] && [ "${token:0:3}" = "eyJ" ]; then
        printf '%s\n' "${GREEN}(exit $rc)${RESET}"
    else
        printf '%s\n' "${RED}(exit $rc, expected 0 and a JWT)${RESET}"
        FAILED=$((FAILED + 1))
    fi
}

# aws_step "Heading": the real AWS CLI with authctl as its credential_process, against moto's STS.
aws_step() {
    STEPS=$((STEPS + 1))
    printf '\n%s\n' "${BOLD}== $STEPS. $1${RESET}"
    printf '%s\n' "\$ aws --profile cognito sts get-caller-identity    # ~/.aws/config: credential_process = authctl aws-credentials"
    printf '[profile cognito]\nregion = us-east-1\ncredential_process = %s aws-credentials\n' "$AUTHCTL_BIN" >"$WORK/aws-config"
    local rc=0
    env -i "PATH=$PATH" "${HOME_ENV[@]}" "DBUS_SESSION_BUS_ADDRESS=$DBUS_ADDRESS" "AWS_CONFIG_FILE=$WORK/aws-config" \
        "AWS_SHARED_CREDENTIALS_FILE=$WORK/none" "AWS_ENDPOINT_URL_STS=$IDENTITY_URL" \
        "AWS_ENDPOINT_URL_COGNITO_IDENTITY=$IDENTITY_URL" "AUTHCTL_USER_POOL_ID=$POOL_ID" \
        "AUTHCTL_CLIENT_ID=$CLIENT_ID" "AUTHCTL_ENDPOINT=$ENDPOINT" "AUTHCTL_REGION=us-east-1" \
        "AUTHCTL_IDENTITY_POOL_ID=$IDENTITY_POOL_ID" aws --profile cognito --output json sts get-caller-identity </dev/null || rc=$?
    if [ "$rc" -eq 0 ]; then printf '%s\n' "${GREEN}(exit 0)${RESET}"; else printf '%s\n' "${RED}(exit $rc, expected 0)${RESET}"; FAILED=$((FAILED + 1)); fi
}
# Secrets shown only by their field names and length.
redacted_step() {
    local title=$1; shift
    STEPS=$((STEPS + 1))
    printf '\n%s\n' "${BOLD}== $STEPS. $title${RESET}"
    printf '%s\n' "\$ authctl $*    # secret values shortened here"
    local out rc=0
    out=$("${AUTHCTL[@]}" "$@" </dev/null) || rc=$?
    printf '%s\n' "$out" | "$PYTHON" -c 'import json, sys
SECRET = {"SecretAccessKey", "SessionToken", "token"}
def cut(v):
    return {k: cut(x) if isinstance(x, dict) else (x[:8] + "...(%d characters)" % len(x) if k in SECRET else x) for k, x in v.items()}
print(json.dumps(cut(json.load(sys.stdin))))' || rc=1
    if [ "$rc" -eq 0 ]; then printf '%s\n' "${GREEN}(exit 0)${RESET}"; else printf '%s\n' "${RED}(exit $rc, expected 0)${RESET}"; FAILED=$((FAILED + 1)); fi
}
identity_served_once() {
    [ "$(identity_calls | grep -c 'GetCredentialsForIdentity *HTTP 200')" -eq 1 ]
}
identity_calls() {
    "$PYTHON" -c 'import json, sys, urllib.request
calls = json.load(urllib.request.urlopen(sys.argv[1] + "/_fake/identity/calls"))["calls"]
for c in calls: print("  %-28s HTTP %s" % (c["op"], c["status"]))' "$IDENTITY_URL"
}

stored_session() {
    env -i "PATH=$SYSTEM_PATH" "${HOME_ENV[@]}" "DBUS_SESSION_BUS_ADDRESS=$DBUS_ADDRESS" \
        secret-tool search kind session profile default 2>&1 | grep -v '^secret = ' || echo "(no session item)"
}
file_store() {
    local dir="$DEMO_HOME/.local/state/authctl"
    stat -c '  %A %n' "$dir" "$dir"/ci.age 2>&1 | sed "s|$DEMO_HOME|~|"
    if head -c 21 "$dir/ci.age" 2>/dev/null | grep -q '^age-encryption.org/v1$'; then
        printf '  %s\n' "$(head -n 2 "$dir/ci.age" | cut -c1-40 | tr '\n' ' ')..."
        if grep -aq 'eyJ' "$dir/ci.age"; then echo "  (a token in plain text: wrong)"; return 1; fi
        echo "  (an age file: the real \`age -d\` opens it with the passphrase; no token in plain text)"
    else
        echo "  (no age file at $dir/ci.age)"
        return 1
    fi
}
request_count() { grep -c '"operation"' "$WORK/requests.jsonl" || true; }
requests() {
    "$PYTHON" -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("operation"):
        print("  %-24s %-28s HTTP %s" % (e["operation"], e.get("authFlow") or e.get("challengeName") or "", e.get("status")))' \
        "$WORK/requests.jsonl"
}

# sent_code NAME: the last code the emulator "emailed" to NAME (what the person reads in the mail).
sent_code() {
    "$PYTHON" -c 'import json,sys,urllib.parse,urllib.request
q = urllib.parse.urlencode({"pool": sys.argv[2], "username": sys.argv[3]})
print(json.load(urllib.request.urlopen(sys.argv[1] + "_fake/mfa/code?" + q, timeout=5))["code"])' "$ENDPOINT" "$POOL_ID" "$1"
}

# ---- the steps ------------------------------------------------------------------------------
step "Sign in with SRP (the password never leaves this machine)" 0 "$PASSWORD" signin --username "$USERNAME" --password-stdin
show "The session lives in the Secret Service (secret-tool search; the secret itself not shown)" stored_session
step "Who am I" 0 "" whoami
step "Who am I, as JSON for scripts" 0 "" whoami --output json
step "Status of every profile (no network call)" 0 "" status
token_step "The access token, for scripts" token
aws_step "The AWS CLI with authctl as credential_process: the identity pool's role"
aws_step "Again: served from the Secret Service cache (no new GetCredentialsForIdentity)"
show "What reached the identity pool" identity_calls
check "One GetCredentialsForIdentity for the two AWS CLI calls (the second from the cache)" identity_served_once
redacted_step "The credential_process JSON itself" aws-credentials
redacted_step "A kubectl ExecCredential (kube-token)" kube-token
step "A wrong password is refused by the SRP verifier" 77 "Not-The-Passw0rd!" signin --username "$USERNAME" --password-stdin
show "The pool starts tracking devices (the fake's switch)" "$PYTHON" -c 'import json,sys,urllib.request
urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "_fake/config", method="POST",
    data=json.dumps({"deviceTracking": {sys.argv[2]: {"mode": "always"}}}).encode()), timeout=5)
print("  device tracking on for", sys.argv[2])' "$ENDPOINT" "$POOL_ID"
step "Sign in again: this device is confirmed with its own SRP verifier and remembered" 0 "$PASSWORD" signin --username "$USERNAME" --password-stdin
step "The devices Cognito remembers (* this one)" 0 "" devices list
step "Sign out on every device (GlobalSignOut), then say how long issued tokens stay usable offline" 0 "" signout --global --yes
step "Signed out: whoami exits 77" 77 "" whoami
show "The session item is gone from the Secret Service" stored_session
# The file store's passphrase from the environment here (a script's way; a person types it).
STEP_ENV=("AUTHCTL_STORE_PASSPHRASE=a demo passphrase")
step "No desktop keyring? Keep profile ci in an age-encrypted file under ~/.local/state/authctl (passphrase from AUTHCTL_STORE_PASSPHRASE; the file store is recorded in the profile)" 0 "$PASSWORD" signin --profile ci --store file --username "$USERNAME" --password-stdin
check "The file store: one age file per profile, mode 0600 in a 0700 directory (only its header shown)" file_store
step "Read back from the age file: who am I on profile ci" 0 "" whoami --profile ci
step "Unlock once: a per-user key agent keeps the file's key (never the passphrase) for 15 idle minutes" 0 "" unlock --profile ci
STEP_ENV=()
token_step "No passphrase now: the agent opens the file (no scrypt here; kubectl and the AWS CLI work the same)" token --profile ci
step "Status says the store is unlocked, and until when (it never prompts)" 0 "" status --profile ci
step "Lock: the agent forgets the key at once and exits" 0 "" lock
BEFORE=$(request_count)
step "Without the passphrase the file store refuses, before asking Cognito anything (exit 78)" 78 "$PASSWORD" signin --profile ci --username "$USERNAME" --password-stdin
check "No request reached the emulator for that refused sign-in" test "$(request_count)" -eq "$BEFORE"
step "A new account: sign up (SignUp); the pool emails a confirmation code" 0 "$NEW_USER_PASSWORD" signup --username "$NEW_USER" --attribute "email=$NEW_USER@example.com" --password-stdin
CODE=$(sent_code "$NEW_USER")
show "The code in $NEW_USER's mailbox (read from the emulator)" echo "$CODE"
# The code on standard input, never on argv (other local users read argv).
step "Confirm the account with the code on standard input (ConfirmSignUp)" 0 "$CODE" confirm-signup --username "$NEW_USER" --code-stdin
step "Sign in as the new account" 0 "$NEW_USER_PASSWORD" signin --username "$NEW_USER" --password-stdin
step "Who am I: the new account" 0 "" whoami

# An incident: the new account's password leaked. Operator commands are signed with AWS
# credentials (the emulator takes any); nothing else is needed, and every change is audited.
STEP_ENV=(AWS_ACCESS_KEY_ID=demo AWS_SECRET_ACCESS_KEY=demo)
step "Incident: what Cognito knows of the account (read-only: status, factors, groups, devices, sessions, sign-in events)" 0 "" ops investigate --user "$NEW_USER"
step "Contain it: the plan first (without --execute nothing changes)" 0 "" ops contain --user "$NEW_USER"
step "Contain it: evidence first, then MFA, devices, a temporary password (the account has no verified email for a reset code), disable, sign-out everywhere; what stays exposed, said" 0 "Tmp-$RANDOM-Passw0rd!" ops contain --user "$NEW_USER" --execute --yes --temporary-password-stdin
STEP_ENV=()
step "The leaked password no longer signs in (exit 77)" 77 "$NEW_USER_PASSWORD" signin --profile attacker --username "$NEW_USER" --password-stdin
show "What reached the emulator" requests

# ---- single sign-on and machine clients: the managed login (a fake of the pool's domain) ------
eval "$(ENDPOINT=$ENDPOINT POOL_ID=$POOL_ID ROOT=$ROOT "$PYTHON" - <<'PY'
import os, shlex, sys
sys.path.insert(0, os.environ["ROOT"] + "/Tests/integration")
import boto3, harness
from managed_login import setup_oauth_pool
c = boto3.client("cognito-idp", endpoint_url=os.environ["ENDPOINT"], region_name="us-east-1",
                 aws_access_key_id="demo", aws_secret_access_key="demo")
pool = harness.Pool(os.environ["POOL_ID"], "", "", "")
o = setup_oauth_pool(c, pool, redirect_port=harness.free_port())
print(f"REDIRECT_PORT={o.redirect_port}; BROWSER_CLIENT_ID={shlex.quote(o.browser_client_id)}; "
      f"MACHINE_CLIENT_ID={shlex.quote(o.machine_client_id)}; MACHINE_SECRET={shlex.quote(o.machine_secret)}")
PY
)"
start_bg managed "$PYTHON" "$ROOT/Tests/integration/fake_managed_login.py" --cognito "$ENDPOINT" \
    --user-pool-id "$POOL_ID" --port 0 --log "$WORK/managed-login.jsonl"
wait_for "fake managed login" 30 grep -q '^PORT ' "$WORK/managed.log"
DOMAIN="http://127.0.0.1:$(sed -n 's/^PORT \([0-9]*\).*/\1/p' "$WORK/managed.log" | head -n1)"
printf '{"username": "%s", "password": "%s", "result": "%s"}\n' "$USERNAME" "$PASSWORD" "$WORK/browser.json" >"$WORK/plan.json"
say ""
say "Managed login (hosted UI) of the pool: $DOMAIN (a fake: moto has none); browser: a script that fills its login page"
BASE_AUTHCTL=("${AUTHCTL[@]}")
AUTHCTL=(env -i "PATH=$SYSTEM_PATH" "${HOME_ENV[@]}" "DBUS_SESSION_BUS_ADDRESS=$DBUS_ADDRESS"
    "AUTHCTL_USER_POOL_ID=$POOL_ID" "AUTHCTL_CLIENT_ID=$BROWSER_CLIENT_ID" "AUTHCTL_ENDPOINT=$ENDPOINT"
    "AUTHCTL_REGION=us-east-1" "AUTHCTL_DOMAIN=$DOMAIN"
    "BROWSER=$PYTHON $ROOT/Tests/integration/browsers/script_browser.py" "AUTHCTL_TEST_BROWSER_PLAN=$WORK/plan.json" "$AUTHCTL_BIN")
step "Sign in through the managed login in a browser (PKCE; the redirect lands on localhost:$REDIRECT_PORT)" 0 "" \
    signin --browser --redirect-port "$REDIRECT_PORT"
step "Who am I, on the browser session" 0 "" whoami
step "Sign out: revoke at /oauth2/revoke, and the managed login's logout URL" 0 "" signout
AUTHCTL=(env -i "PATH=$SYSTEM_PATH" "${HOME_ENV[@]}" "DBUS_SESSION_BUS_ADDRESS=$DBUS_ADDRESS"
    "AUTHCTL_CLIENT_ID=$MACHINE_CLIENT_ID" "AUTHCTL_CLIENT_SECRET=$MACHINE_SECRET" "AUTHCTL_DOMAIN=$DOMAIN" "$AUTHCTL_BIN")
token_step "A machine token for a CI job (client_credentials, scope orders/read)" token --client-credentials --scope orders/read
token_step "Again: served from the Secret Service cache" token --client-credentials --scope orders/read
managed_requests() {
    "$PYTHON" -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    print("  %-4s %-20s %-20s HTTP %s" % (e["method"], e["path"], e.get("grantType") or "", e["status"]))' "$WORK/managed-login.jsonl"
}
show "What reached the managed login (one client_credentials request for the two tokens)" managed_requests
AUTHCTL=("${BASE_AUTHCTL[@]}")

# ---- passkeys: a software FIDO2 security key (PIN 2468) behind a Unix socket -------------------
ENDPOINT=$ENDPOINT POOL_ID=$POOL_ID CLIENT_ID=$CLIENT_ID "$PYTHON" - <<'PY'
import os, boto3
c = boto3.client("cognito-idp", endpoint_url=os.environ["ENDPOINT"], region_name="us-east-1",
                 aws_access_key_id="demo", aws_secret_access_key="demo")
c.update_user_pool(UserPoolId=os.environ["POOL_ID"], AutoVerifiedAttributes=["email"],
                   Policies={"SignInPolicy": {"AllowedFirstAuthFactors": ["PASSWORD", "WEB_AUTHN"]}})
c.update_user_pool_client(UserPoolId=os.environ["POOL_ID"], ClientId=os.environ["CLIENT_ID"], ExplicitAuthFlows=[
    "ALLOW_USER_SRP_AUTH", "ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH", "ALLOW_USER_AUTH"])
PY
start_bg fido "$PYTHON" "$ROOT/Tests/integration/soft_fido.py" "$WORK/key.sock" --pin 2468
wait_for "software security key" 30 grep -q '^authenticator at ' "$WORK/fido.log"
KEY="unix:$WORK/key.sock"
say ""
say "Passkeys: a software FIDO2 key (CTAP2 over CTAPHID) at $KEY, PIN 2468; the emulator verifies with py_webauthn"
step "Sign in with the password" 0 "$PASSWORD" signin --username "$USERNAME" --password-stdin
step "Register a passkey on the security key (PIN from standard input with --pin-fd 0; --rp-id names the pool's relying party once)" 0 "2468" \
    passkey add --fido-device "$KEY" --rp-id auth.example.com --pin-fd 0
step "The user's passkeys" 0 "" passkey list
step "Sign out" 0 "" signout
step "Sign in with the passkey: USER_AUTH, WEB_AUTHN answered by the key (touch and PIN)" 0 "2468" \
    signin --username "$USERNAME" --method passkey --fido-device "$KEY" --pin-fd 0
step "Who am I, on the passkey session" 0 "" whoami
step "A wrong PIN is refused by the key, which says how many tries are left (exit 77)" 77 "1357" \
    signin --username "$USERNAME" --method passkey --fido-device "$KEY" --pin-fd 0

printf '\n'
if [ "$FAILED" -eq 0 ]; then
    printf '%s\n' "${GREEN}${BOLD}demo: all $STEPS steps behaved as expected${RESET}"
else
    printf '%s\n' "${RED}${BOLD}demo: $FAILED of $STEPS steps did not behave as expected${RESET}"
    exit 1
fi
