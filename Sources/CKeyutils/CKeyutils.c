// Direct system calls for the key retention service; see CKeyutils.h for why.
#include <errno.h>
#include <linux/keyctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CKeyutils.h"

_Static_assert(AUTHCTL_KEY_SPEC_PROCESS_KEYRING == KEY_SPEC_PROCESS_KEYRING
               && AUTHCTL_KEY_SPEC_USER_KEYRING == KEY_SPEC_USER_KEYRING, "special keyring ids");

static long result(long value) {
    return value < 0 ? -(long)errno : value;
}

long authctl_add_key(const char *type, const char *description, const void *payload, size_t length,
                     int32_t keyring) {
    return result(syscall(SYS_add_key, type, description, payload, length, keyring));
}

long authctl_keyctl_get_persistent(int32_t uid, int32_t keyring) {
    return result(syscall(SYS_keyctl, KEYCTL_GET_PERSISTENT, uid, keyring));
}

long authctl_keyctl_get_keyring_id(int32_t id, int create) {
    return result(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, id, create));
}

long authctl_keyctl_search(int32_t keyring, const char *type, const char *description) {
    return result(syscall(SYS_keyctl, KEYCTL_SEARCH, keyring, type, description, 0));
}

long authctl_keyctl_read(int32_t key, void *buffer, size_t length) {
    return result(syscall(SYS_keyctl, KEYCTL_READ, key, buffer, length));
}

long authctl_keyctl_describe(int32_t key, char *buffer, size_t length) {
    return result(syscall(SYS_keyctl, KEYCTL_DESCRIBE, key, buffer, length));
}

long authctl_keyctl_setperm(int32_t key, uint32_t permissions) {
    return result(syscall(SYS_keyctl, KEYCTL_SETPERM, key, permissions));
}

long authctl_keyctl_unlink(int32_t key, int32_t keyring) {
    return result(syscall(SYS_keyctl, KEYCTL_UNLINK, key, keyring));
}
