#!/usr/bin/env bash
# The RPM of an already built binary (`make rpm` passes the portable release build), with
# rpmbuild from Packaging/authctl.spec.in:
#   Tests/support/make-rpm.sh BIN OUTDIR
# OUTDIR/authctl-VERSION-1.ARCH.rpm holds what the .deb holds, in the same places and modes
# (binary stripped, man page gzipped, completions, the key agent's systemd user units, README,
# docs and copyright as %doc);
# OUTDIR/SHA256SUMS is rewritten. Requires libcurl by its soname (libcurl or libcurl-minimal
# provide it), recommends libsecret, libfido2 and libqrencode; rpmbuild adds the C runtime's
# sonames and glibc symbol versions from the binary. Reproducible: build time, file times and the
# build host come from SOURCE_DATE_EPOCH (default: the commit's time) and a fixed name.
set -euo pipefail
bin=${1:?usage: make-rpm.sh BIN OUTDIR}
out=${2:?usage: make-rpm.sh BIN OUTDIR}
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
. Tests/support/release-files.sh
release_begin "$bin"
arch=$(uname -m)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage="$work/stage"
mkdir -m 0755 "$stage"
# systemd's user units where distributions keep them (not enabled: socket activation is optional).
release_stage "$stage" /usr SYSTEMD_USER_UNIT_DIR=/usr/lib/systemd/user
gzip -9n "$stage/usr/share/man/man1/authctl.1"
doc="$stage/usr/share/doc/authctl"
install -d "$doc/docs"
install -m 0644 README.md "$doc/README.md"
for page in docs/*.md; do install -m 0644 "$page" "$doc/docs/"; done
release_copyright "$doc/copyright"
chmod 0644 "$doc/copyright"
release_clamp_times "$stage"

sed -e "s/@VERSION@/$release_version/g" \
    -e "s/@DATE@/$(LC_ALL=C date -u -d "@$release_epoch" '+%a %b %d %Y')/" \
    -e "s/@MAINTAINER@/$release_maintainer/g" Packaging/authctl.spec.in > "$work/authctl.spec"

# No debug package or build-id links (the binary is already stripped, as the .deb's); the host
# name and every time fixed; the payload compressed the same way wherever it is built.
rpmbuild -bb --quiet --target "$arch" \
    --define "_topdir $work/rpmbuild" \
    --define "authctl_stage $stage" \
    --define "debug_package %{nil}" \
    --define "_build_id_links none" \
    --define "__strip /bin/true" \
    --define "__brp_strip /bin/true" \
    --define "__brp_compress /bin/true" \
    --define "_buildhost reproducible" \
    --define "use_source_date_epoch_as_buildtime 1" \
    --define "clamp_mtime_to_source_date_epoch 1" \
    --define "_binary_payload w9.xzdio" \
    "$work/authctl.spec" >&2

mkdir -p "$out"
rpm="$out/authctl-$release_version-1.$arch.rpm"
cp "$work/rpmbuild/RPMS/$arch/authctl-$release_version-1.$arch.rpm" "$rpm.tmp"
mv "$rpm.tmp" "$rpm"
release_sums "$out"
echo "$rpm"
