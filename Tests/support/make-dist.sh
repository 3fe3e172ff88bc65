#!/usr/bin/env bash
# The release tarball of an already built binary (`make dist` passes the portable release build):
#   Tests/support/make-dist.sh BIN OUTDIR
# OUTDIR/authctl-VERSION-linux-ARCH.tar.gz holds one directory of that name: bin/authctl
# (stripped), share/man/man1/authctl.1, the bash/zsh/fish completions under share/ where those
# shells look below a prefix, the key agent's systemd user units (share/systemd/user), README.md,
# copyright and INSTALL; OUTDIR/SHA256SUMS is rewritten.
# Reproducible: entries sorted by name, owner root (0/0), every time SOURCE_DATE_EPOCH (default:
# the commit's time), gzip without a name or time.
set -euo pipefail
bin=${1:?usage: make-dist.sh BIN OUTDIR}
out=${2:?usage: make-dist.sh BIN OUTDIR}
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
. Tests/support/release-files.sh
release_begin "$bin"

name="authctl-$release_version-linux-$(uname -m)"
stage=$(mktemp -d)
chmod 0755 "$stage"
trap 'rm -rf "$stage"' EXIT
top="$stage/$name"
# The units' ExecStart names /usr/local/bin/authctl, where INSTALL unpacks it (it says how to
# point it elsewhere).
release_stage "$top" "" UNIT_AUTHCTL=/usr/local/bin/authctl
install -m 0644 README.md "$top/README.md"
install -m 0644 Packaging/INSTALL "$top/INSTALL"
release_copyright "$top/copyright"
chmod 0644 "$top/copyright"
release_clamp_times "$stage"

mkdir -p "$out"
tarball="$out/$name.tar.gz"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$release_epoch" --format=gnu \
    -C "$stage" -cf - "$name" | gzip -9n > "$tarball.tmp"
mv "$tarball.tmp" "$tarball"
release_sums "$out"
echo "$tarball"
