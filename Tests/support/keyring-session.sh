#!/usr/bin/env bash
# A private Secret Service for tests and the demo. Run it inside its own session bus:
#
#   HOME=/tmp/x XDG_RUNTIME_DIR=/tmp/x/.run dbus-run-session -- bash keyring-session.sh ENV_FILE [keyring|bare]
#
# keyring (default): starts gnome-keyring-daemon's secrets component with a login collection
#   created and unlocked with a throw-away password, so no prompt is ever needed.
# bare: starts nothing; the bus alone (gnome-keyring may be D-Bus activated, locked, no prompter).
#
# Once ready it writes the variables a client needs (DBUS_SESSION_BUS_ADDRESS, ...) to ENV_FILE
# as KEY=VALUE lines (atomically: the file appears complete), then waits until it is killed.
# Killing the process group ends the bus, and gnome-keyring-daemon with it.
set -euo pipefail

env_file=${1:?usage: keyring-session.sh ENV_FILE [keyring|bare]}
mode=${2:-keyring}
: "${DBUS_SESSION_BUS_ADDRESS:?run me inside dbus-run-session}"

if [ "$mode" = keyring ]; then
    # --unlock reads the password on stdin and creates/unlocks the login keyring.
    eval "$(printf 'pw\n' | gnome-keyring-daemon --unlock --components=secrets)"
    eval "$(gnome-keyring-daemon --start --components=secrets)"
    # Wait until the Secret Service answers on the bus.
    for _ in $(seq 1 100); do
        if dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
            org.freedesktop.DBus.Peer.Ping >/dev/null 2>&1; then
            break
        fi
        sleep 0.05
    done
fi

{
    printf 'DBUS_SESSION_BUS_ADDRESS=%s\n' "$DBUS_SESSION_BUS_ADDRESS"
    if [ -n "${GNOME_KEYRING_CONTROL:-}" ]; then
        printf 'GNOME_KEYRING_CONTROL=%s\n' "$GNOME_KEYRING_CONTROL"
    fi
} >"$env_file.tmp"
mv "$env_file.tmp" "$env_file"

trap 'exit 0' TERM INT HUP
while :; do
    sleep 3600 &
    wait $! || true
done
