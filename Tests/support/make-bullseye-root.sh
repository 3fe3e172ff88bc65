#!/usr/bin/env bash
# A Debian 11 (bullseye, glibc 2.31) root made by debootstrap, kept between runs:
#   Tests/support/make-bullseye-root.sh ROOT
# It serves twice (docs/testing.md): as the sysroot the portable release build links against
# (libc6-dev, libgcc-10-dev: the oldest glibc authctl supports, so the binary asks for no newer
# symbol version), and as the old system Tests/integration/test_portable.py runs the tarball in
# (libcurl4 7.74 with OpenSSL 1.1, libsecret; no libfido2, no libqrencode).
# The mirror is the one apt already uses (its sources files), or BULLSEYE_MIRROR. The root is made
# in ROOT.tmp and renamed when complete, so an interrupted run leaves nothing half-made to reuse.
# Exit 75 (and nothing made) when debootstrap cannot reach the archive.
set -euo pipefail
root=${1:?usage: make-bullseye-root.sh ROOT}
packages=libc6-dev,libgcc-10-dev,libcurl4,libsecret-1-0,ca-certificates
stamp="$root/.authctl-root"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$packages" ]; then
    exit 0
fi

mirror=${BULLSEYE_MIRROR:-}
if [ -z "$mirror" ]; then
    # The first Debian archive apt is set up with (deb822 "URIs:" or one-line "deb URL suite"),
    # not the security archive.
    mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i } /^deb / { print ($2 ~ /^\[/ ? $3 : $2) }' \
        | grep -E '/debian/?$' | head -n 1 || true)
fi
mirror=${mirror:-http://deb.debian.org/debian}

if [ "$(id -u)" -ne 0 ]; then
    echo "make-bullseye-root: debootstrap needs root" >&2
    exit 77
fi
rm -rf "$root" "$root.tmp"
mkdir -p "$(dirname "$root")"
log="$root.log"
echo "make-bullseye-root: debootstrap --variant=minbase bullseye from $mirror" >&2
if ! debootstrap --variant=minbase --include="$packages" bullseye "$root.tmp" "$mirror" >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    rm -rf "$root.tmp"
    if grep -qE 'Failed getting release file|Couldn.t download|Temporary failure|Could not resolve|Connection (refused|timed out)' "$log"; then
        echo "make-bullseye-root: cannot reach the archive at $mirror (log: $log)" >&2
        exit 75
    fi
    echo "make-bullseye-root: debootstrap failed (log: $log)" >&2
    exit 1
fi
# Absolute symbolic links (libdl.so -> /lib/x86_64-linux-gnu/libdl.so.2, the loader) would point a
# linker using this root as its sysroot at the host's files: made relative, they point inside it.
find "$root.tmp" -type l -lname '/*' -print0 | while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root.tmp$target")" "$link"
done
# Nothing of the apt caches is needed.
rm -rf "$root.tmp"/var/cache/apt/archives/*.deb
echo "$packages" > "$root.tmp/.authctl-root"
mv "$root.tmp" "$root"
