#!/usr/bin/env bash
# Builds authctl's Debian package from an already built binary (`make deb` passes the release
# build; the tests pass the debug build to check the package's shape).
#   Tests/support/make-deb.sh BIN OUTDIR [MANPAGE]
# Reproducible: every file's time is SOURCE_DATE_EPOCH (default: the commit's time), owners are
# root, compressed files carry no name or time, and dpkg-deb sorts the archive.
set -euo pipefail
bin=${1:?usage: make-deb.sh BIN OUTDIR [MANPAGE]}
out=${2:?usage: make-deb.sh BIN OUTDIR [MANPAGE]}
manpage=${3:-}
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"

version=$("$bin" --version)
arch=$(dpkg --print-architecture)
maintainer="${DEBFULLNAME:-The authctl developers} <${DEBEMAIL:-authctl@example.org}>"
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
export SOURCE_DATE_EPOCH=$epoch

stage=$(mktemp -d)
chmod 0755 "$stage"
trap 'rm -rf "$stage"' EXIT
umask 022
make --no-print-directory -s install-files BIN="$bin" MANPAGE="$manpage" DESTDIR="$stage" PREFIX=/usr >/dev/null
# Debian ships stripped binaries; the Swift metadata the runtime reads is in allocated sections,
# which strip keeps.
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/authctl"

# Debian keeps manual pages compressed, without a name or time in the gzip header.
gzip -9n "$stage/usr/share/man/man1/authctl.1"

doc="$stage/usr/share/doc/authctl"
install -d "$doc/docs"
install -m 0644 README.md "$doc/README.md"
for page in docs/*.md; do install -m 0644 "$page" "$doc/docs/"; done
cat > "$doc/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: authctl

Files: *
Copyright: $(date -u -d "@$epoch" +%Y) The authctl developers
License: none-chosen
 The project has not chosen a licence yet: no licence is granted, and the
 authors keep all rights. This file will name the licence once there is one.
COPYRIGHT
printf 'authctl (%s) unstable; urgency=medium\n\n  * Release %s.\n\n -- %s  %s\n' \
    "$version" "$version" "$maintainer" "$(date -u -R -d "@$epoch")" | gzip -9n > "$doc/changelog.gz"

# Depends: what the binary links (found through the dynamic loader's cache and dpkg), plus what it
# loads with dlopen on first use (libcurl, libsecret, libcrypto); never a -dev package. Libraries
# no Debian package provides (a debug build's Swift runtime) are named on stderr.
declare -A packages=([libcurl4]=1 [libsecret-1-0]=1 [libssl3]=1)
while read -r needed; do
    path=$(ldconfig -p | awk -v lib="$needed" '$1 == lib && /x86-64|AArch64/ { print $NF; exit }')
    owner=""
    if [ -n "$path" ]; then
        owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n1 | cut -d: -f1) \
            || owner=$(dpkg -S "$path" 2>/dev/null | head -n1 | cut -d: -f1) || true
    fi
    if [ -n "$owner" ]; then packages[$owner]=1; else echo "make-deb: $needed comes from no Debian package (not a release build?)" >&2; fi
done < <(objdump -p "$bin" | awk '/NEEDED/ { print $2 }')
depends=$(printf '%s\n' "${!packages[@]}" | grep -v -- '-dev$' | sort | paste -sd, - | sed 's/,/, /g')

size=$(du -sk --apparent-size "$stage/usr" | cut -f1)
install -d -m 0755 "$stage/DEBIAN"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: authctl
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Recommends: gnome-keyring | keepassxc | kwalletmanager
Suggests: keyutils, age, libfido2-1
Section: utils
Priority: optional
Description: command-line client for Amazon Cognito user pools
 authctl signs people and machines in to Amazon Cognito user pools (SRP,
 passwords, MFA, passwordless, the managed login in a browser), keeps the
 session in the Secret Service and hands out fresh tokens to scripts, the AWS
 CLI (credential_process) and kubectl (exec credential plugin).
CONTROL
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"
find "$stage" -depth -newermt "@$epoch" -print0 | xargs -0r touch -h -d "@$epoch"

mkdir -p "$out"
deb="$out/authctl_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
