# Sourced by make-deb.sh, make-dist.sh and make-rpm.sh: what every release package holds, made the
# same way. Reproducible: times from SOURCE_DATE_EPOCH (default: the commit's time).

# The staged tree's times and the version: set by release_begin BIN.
release_begin() {
    release_bin=$1
    release_version=$("$release_bin" --version)
    release_epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
    export SOURCE_DATE_EPOCH=$release_epoch
    release_maintainer="${DEBFULLNAME:-The authctl developers} <${DEBEMAIL:-authctl@example.org}>"
    umask 022
}

# The binary (stripped), bash/zsh/fish completions, the man page and the key agent's systemd user
# units under DESTDIR/PREFIX, by `make install-files` (the man page from generate-manual run on the
# binary itself); more make variables after PREFIX (SYSTEMD_USER_UNIT_DIR=..., UNIT_AUTHCTL=...).
release_stage() {
    local destdir=$1 prefix=$2
    shift 2
    make --no-print-directory -s install-files BIN="$release_bin" DESTDIR="$destdir" PREFIX="$prefix" "$@" >/dev/null
    # Distributions ship stripped binaries; the Swift metadata the runtime reads is in allocated
    # sections, which strip keeps.
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$destdir$prefix/bin/authctl"
}

# The copyright file every package carries.
release_copyright() {
    cat > "$1" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: authctl

Files: *
Copyright: $(date -u -d "@$release_epoch" +%Y) The authctl developers
License: none-chosen
 The project has not chosen a licence yet: no licence is granted, and the
 authors keep all rights. This file will name the licence once there is one.
COPYRIGHT
}

# Every file and directory under $1 given the source date.
release_clamp_times() {
    find "$1" -depth -newermt "@$release_epoch" -print0 | xargs -0r touch -h -d "@$release_epoch"
}

# DIR/SHA256SUMS: the checksums of this version's tarball and RPM in DIR, whichever exist
# (`sha256sum -c --ignore-missing SHA256SUMS` checks what was downloaded).
release_sums() {
    (cd "$1" && find . -maxdepth 1 -type f \( -name "authctl-$release_version-*.tar.gz" \
        -o -name "authctl-$release_version-*.rpm" \) -printf '%f\n' | LC_ALL=C sort \
        | xargs -r sha256sum > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
}
