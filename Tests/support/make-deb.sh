#!/usr/bin/env bash
# Builds authctl's Debian package from an already built binary (`make deb` passes the release
# build; the tests pass it too in `make test-portable`, the debug build in `make test`).
#   Tests/support/make-deb.sh BIN OUTDIR
# Reproducible: every file's time is SOURCE_DATE_EPOCH (default: the commit's time), owners are
# root, compressed files carry no name or time, and dpkg-deb sorts the archive.
set -euo pipefail
bin=${1:?usage: make-deb.sh BIN OUTDIR}
out=${2:?usage: make-deb.sh BIN OUTDIR}
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
. Tests/support/release-files.sh
release_begin "$bin"
version=$release_version
epoch=$release_epoch
maintainer=$release_maintainer
arch=$(dpkg --print-architecture)

stage=$(mktemp -d)
chmod 0755 "$stage"
trap 'rm -rf "$stage"' EXIT
# systemd's user units where distributions keep them (not enabled: socket activation is optional);
# zsh's completion where Debian's zsh looks (its fpath has vendor-completions, not site-functions).
release_stage "$stage" /usr SYSTEMD_USER_UNIT_DIR=/usr/lib/systemd/user ZSH_COMPLETION_DIR=/usr/share/zsh/vendor-completions

# Debian keeps manual pages compressed, without a name or time in the gzip header.
gzip -9n "$stage/usr/share/man/man1/authctl.1"

doc="$stage/usr/share/doc/authctl"
install -d "$doc/docs"
install -m 0644 README.md "$doc/README.md"
for page in docs/*.md; do install -m 0644 "$page" "$doc/docs/"; done
release_copyright "$doc/copyright"
printf 'authctl (%s) unstable; urgency=medium\n\n  * Release %s.\n\n -- %s  %s\n' \
    "$version" "$version" "$maintainer" "$(date -u -R -d "@$epoch")" | gzip -9n > "$doc/changelog.gz"

# Depends: what the binary links (found through the dynamic loader's cache and dpkg), plus what it
# loads with dlopen on first use (libcurl, libsecret, libcrypto); never a -dev package. What only
# some commands open (libqrencode: MFA set-up; libfido2: passkeys) is recommended or suggested. Libraries
# no Debian package provides (a debug build's Swift runtime) are named on stderr.
declare -A packages=([libcurl4]=1 [libsecret-1-0]=1 [libssl3]=1)
while read -r needed; do
    # Every reader consumes its whole input: with pipefail, a reader that stops early (awk's exit,
    # head) gets the writer killed by SIGPIPE once its output passes the pipe's 64 KiB, and the
    # assignment fails the script with 141 (ldconfig -p is larger than that on a well-filled host).
    path=$(ldconfig -p | awk -v lib="$needed" '!found && $1 == lib && /x86-64|AArch64/ { print $NF; found = 1 }')
    owner=""
    if [ -n "$path" ]; then
        owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | awk -F: 'NR == 1 { print $1 }') || true
        [ -n "$owner" ] || owner=$(dpkg -S "$path" 2>/dev/null | awk -F: 'NR == 1 { print $1 }') || true
    fi
    if [ -n "$owner" ]; then packages[$owner]=1; else echo "make-deb: $needed comes from no Debian package (not a release build?)" >&2; fi
done < <(objdump -p "$bin" | awk '/NEEDED/ { print $2 }')
# The portable release build runs on Debian 11 too: OpenSSL 1.1 there, and glibc from the highest
# symbol version the binary asks for.
glibc=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
depends=$(printf '%s\n' "${!packages[@]}" | grep -v -- '-dev$' | sort \
    | sed -e 's/^libssl3$/libssl3 | libssl1.1/' -e "s/^libc6\$/libc6 (>= $glibc)/" | paste -sd, - | sed 's/,/, /g')

size=$(du -sk --apparent-size "$stage/usr" | cut -f1)
install -d -m 0755 "$stage/DEBIAN"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: authctl
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Recommends: gnome-keyring | keepassxc | kwalletmanager, libqrencode4
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
release_clamp_times "$stage"

mkdir -p "$out"
deb="$out/authctl_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
