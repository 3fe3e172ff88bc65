// CKeyutils: the Linux key retention service's system calls (add_key, keyctl) for SecureStore.
//
// Why this exists: glibc has no wrappers for them and syscall(2) is variadic, which Swift cannot
// call; these fixed-signature functions make the calls directly, so nothing (libkeyutils) has to be
// installed at run time. Names are prefixed `authctl_` so they cannot collide with libkeyutils'.
// Every function returns the system call's result (>= 0), or -errno on failure.

#ifndef AUTHCTL_CKEYUTILS_H
#define AUTHCTL_CKEYUTILS_H

#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

#ifdef __cplusplus
extern "C" {
#endif

/// Special keyring ids (<linux/keyctl.h>).
enum {
    AUTHCTL_KEY_SPEC_PROCESS_KEYRING = -2,
    AUTHCTL_KEY_SPEC_USER_KEYRING = -4,
};

/// add_key(2): creates a key of `type` in `keyring`, or updates the key of the same type and
/// description already there (atomically replacing its payload). Returns the key id.
long authctl_add_key(const char *type, const char *description, const void *_Nullable payload,
                     size_t length, int32_t keyring);

/// KEYCTL_GET_PERSISTENT: the persistent keyring of `uid` (-1: the caller's), linked into `keyring`.
long authctl_keyctl_get_persistent(int32_t uid, int32_t keyring);

/// KEYCTL_GET_KEYRING_ID: resolves a special id (creating the keyring when `create` is non-zero).
long authctl_keyctl_get_keyring_id(int32_t id, int create);

/// KEYCTL_SEARCH with no destination keyring: the id of the key of `type` and `description`
/// reachable from `keyring` (-ENOKEY when there is none).
long authctl_keyctl_search(int32_t keyring, const char *type, const char *description);

/// KEYCTL_READ: copies up to `length` bytes of the payload (a keyring: its key ids, as int32_t)
/// into `buffer`. Returns the payload's full length, which may exceed `length`.
long authctl_keyctl_read(int32_t key, void *_Nullable buffer, size_t length);

/// KEYCTL_DESCRIBE: "type;uid;gid;perm;description" (NUL-terminated) into `buffer`. Returns the
/// length including the NUL, which may exceed `length`.
long authctl_keyctl_describe(int32_t key, char *_Nullable buffer, size_t length);

/// KEYCTL_SETPERM.
long authctl_keyctl_setperm(int32_t key, uint32_t permissions);

/// KEYCTL_UNLINK: removes the link from `keyring` to `key`.
long authctl_keyctl_unlink(int32_t key, int32_t keyring);

#ifdef __cplusplus
}
#endif

#pragma clang assume_nonnull end

#endif /* AUTHCTL_CKEYUTILS_H */
