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
    release_canonical "$destdir$prefix/bin/authctl"
}

# The same commit built in any directory ships the same bytes. swiftc stamps every object with an
# MD5 of its IR (.swift_modhash, read only by incremental builds), which varies with where the tree
# was built, and the linker's build-id is a hash over the whole file, that stamp included: the
# stamp is zeroed (same size, so nothing moves) and the build-id recomputed over the result (SHA-1
# of the file with a zero build-id), so it still names exactly these bytes.
release_canonical() {
    local bin=$1 work note_head
    work=$(mktemp -d)
    if objcopy -O binary --only-section=.swift_modhash "$bin" "$work/stamp" 2>/dev/null && [ -s "$work/stamp" ]; then
        head -c "$(stat -c %s "$work/stamp")" /dev/zero > "$work/zero"
        objcopy --update-section .swift_modhash="$work/zero" "$bin"
    fi
    if readelf -n "$bin" 2>/dev/null | grep 'NT_GNU_BUILD_ID' >/dev/null; then
        # namesz 4, descsz 20, NT_GNU_BUILD_ID, "GNU\0", then the 20 bytes of the SHA-1.
        note_head='\004\000\000\000\024\000\000\000\003\000\000\000GNU\000'
        { printf "$note_head"; head -c 20 /dev/zero; } > "$work/note"
        objcopy --update-section .note.gnu.build-id="$work/note" "$bin"
        { printf "$note_head"; printf "$(sha1sum "$bin" | cut -c1-40 | sed 's/../\\x&/g')"; } > "$work/note"
        objcopy --update-section .note.gnu.build-id="$work/note" "$bin"
    fi
    rm -rf "$work"
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
