// CLibSecret: the libsecret-1 shim for SecureStore.
//
// Why this exists:
//  - libsecret is loaded with dlopen on the first keyring call, not linked. With GLib, GIO,
//    GObject and libgcrypt it is 11 shared libraries and about 3.4 M instructions of the dynamic
//    loader's work at every start (docs/performance.md), which `--version`, `configure`, help and
//    every command that needs no keyring would otherwise pay. CLibSecret.c resolves the functions
//    it needs with dlsym; when the library is missing, every call fails with stage
//    AUTHCTL_SECRET_STAGE_LOAD and a message naming the package, instead of the loader refusing to
//    start authctl at all.
//  - libsecret's convenient calls are variadic and NULL-terminated, which Swift cannot call;
//    SecretSchema is a fixed array of 32 attributes (a 32-element tuple in Swift); GError domains
//    are macros over *_get_quark() functions. The shim does all of that in C and hands Swift
//    plain C types: nothing of GLib appears in this header.
//  - We call the SecretService methods (secret_service_store_sync and friends) rather than
//    secret_password_*v_sync: since libsecret 0.19 the password API goes through SecretBackend,
//    which switches to an on-disk file backend when SECRET_BACKEND=file or inside Flatpak/Snap.
//    authctl must never write tokens to a file, so it talks to the D-Bus Secret Service only.
//
// Every call takes a cancellable so the Swift side can abandon a call the bus never answers.
// Every function frees what it allocates; what it hands back is released with
// authctl_secret_password_free / authctl_secret_error_clear. Names are prefixed `authctl_secret_`
// so they cannot collide with libsecret's own symbols.

#ifndef AUTHCTL_CLIBSECRET_H
#define AUTHCTL_CLIBSECRET_H

#include <stddef.h>

#pragma clang assume_nonnull begin

#ifdef __cplusplus
extern "C" {
#endif

/// The libsecret that is loaded: its soname (Debian: libsecret-1-0).
#define AUTHCTL_LIBSECRET "libsecret-1.so.0"

/// A GCancellable.
typedef struct AuthctlSecretCancellable AuthctlSecretCancellable;

/// Where a failure happened: loading libsecret, reaching the session bus, or talking to the
/// Secret Service.
typedef enum {
    AUTHCTL_SECRET_STAGE_CONNECT = 0,
    AUTHCTL_SECRET_STAGE_CALL = 1,
    AUTHCTL_SECRET_STAGE_LOAD = 2,
} AuthctlSecretStage;

/// A GError copied out for Swift (strings from malloc). domain == NULL means "no error".
typedef struct {
    char *_Nullable domain;      // g_quark_to_string(error->domain), e.g. "g-dbus-error-quark"; "" for LOAD
    int code;
    char *_Nullable remote_name; // D-Bus error name when the error came over the bus, else NULL
    char *_Nullable message;     // without the "GDBus.Error:name:" prefix
    int stage;                   // AuthctlSecretStage
} AuthctlSecretError;

/// The error codes SecureStore tells apart (GIOErrorEnum, GDBusError, SecretError). CLibSecret.c
/// checks them against GLib's and libsecret's headers when built with AUTHCTL_SECRET_CHECK_HEADERS.
enum {
    AUTHCTL_G_IO_ERROR_CANCELLED = 19,
    AUTHCTL_G_IO_ERROR_TIMED_OUT = 24,
    AUTHCTL_G_DBUS_ERROR_SERVICE_UNKNOWN = 2,
    AUTHCTL_G_DBUS_ERROR_NAME_HAS_NO_OWNER = 3,
    AUTHCTL_G_DBUS_ERROR_SPAWN_EXEC_FAILED = 23,
    AUTHCTL_G_DBUS_ERROR_SPAWN_CHILD_EXITED = 25,
    AUTHCTL_G_DBUS_ERROR_SPAWN_FAILED = 27,
    AUTHCTL_G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND = 31,
    AUTHCTL_SECRET_ERROR_PROTOCOL = 1,
    AUTHCTL_SECRET_ERROR_IS_LOCKED = 2,
    AUTHCTL_SECRET_ERROR_NO_SUCH_OBJECT = 3,
};

/// Frees the strings of `error` and resets it to "no error".
void authctl_secret_error_clear(AuthctlSecretError *_Nullable error);

/// Loads libsecret (once per process, however often it is called). Returns 1 when it is
/// loaded; 0 with `out_error` filled (stage LOAD) when it cannot be. Every call below loads it too.
int authctl_secret_load(AuthctlSecretError *_Nullable out_error);

/// A new GCancellable, or NULL when libsecret cannot be loaded (the calls below then fail with
/// stage LOAD). Release with authctl_secret_cancellable_free.
AuthctlSecretCancellable *_Nullable authctl_secret_cancellable_new(void);
void authctl_secret_cancellable_cancel(AuthctlSecretCancellable *_Nullable cancellable);
void authctl_secret_cancellable_free(AuthctlSecretCancellable *_Nullable cancellable);

/// Stores `secret` (text/plain, `length` bytes) in the default collection with all four
/// attributes; an item with identical attributes is replaced. Returns 1 on success, 0 on error.
int authctl_secret_store(const char *kind, const char *profile, const char *user_pool_id,
                         const char *client_id, const char *label, const char *secret,
                         ptrdiff_t length, AuthctlSecretCancellable *_Nullable cancellable,
                         AuthctlSecretError *_Nullable out_error);

/// Looks up the secret for kind+profile (and client_id when non-NULL). Returns NULL when there is
/// none (out_error untouched) or on error (out_error set). The result is in non-pageable memory:
/// release it with authctl_secret_password_free.
char *_Nullable authctl_secret_lookup(const char *kind, const char *profile,
                                      const char *_Nullable client_id, size_t *_Nullable out_length,
                                      AuthctlSecretCancellable *_Nullable cancellable,
                                      AuthctlSecretError *_Nullable out_error);

/// Wipes, then frees a secret returned by authctl_secret_lookup.
void authctl_secret_password_free(char *_Nullable password);

/// Removes every item matching kind+profile (and the pool/client when non-NULL). Returns 1 when
/// something was removed, 0 when nothing matched, -1 on error (a matching item that stays locked
/// is an error, AUTHCTL_SECRET_ERROR_IS_LOCKED).
int authctl_secret_clear(const char *kind, const char *profile, const char *_Nullable user_pool_id,
                         const char *_Nullable client_id, AuthctlSecretCancellable *_Nullable cancellable,
                         AuthctlSecretError *_Nullable out_error);

/// Deletes every item with kind+profile whose user_pool_id or client_id differ from
/// keep_user_pool_id / keep_client_id (the item just stored is kept). Items that are locked (in
/// another, locked collection) are left alone. Returns the number deleted, or -1 on error.
int authctl_secret_clear_others(const char *kind, const char *profile, const char *keep_user_pool_id,
                                const char *keep_client_id, AuthctlSecretCancellable *_Nullable cancellable,
                                AuthctlSecretError *_Nullable out_error);

/// The describing attributes of one item found by authctl_secret_list (strings from malloc).
typedef struct {
    char *_Nullable kind;
    char *_Nullable user_pool_id;
    char *_Nullable client_id;
} AuthctlSecretItemKey;

/// Lists every authctl item of `profile`, locked ones too (attributes are not secret, and nothing
/// is unlocked). Returns the number found with `*out_items` set to a malloc'ed array (release
/// with authctl_secret_item_keys_free), or -1 on error.
int authctl_secret_list(const char *profile, AuthctlSecretItemKey *_Nullable *_Nonnull out_items,
                        AuthctlSecretCancellable *_Nullable cancellable,
                        AuthctlSecretError *_Nullable out_error);

/// Frees what authctl_secret_list returned.
void authctl_secret_item_keys_free(AuthctlSecretItemKey *_Nullable items, int count);

#ifdef __cplusplus
}
#endif

#pragma clang assume_nonnull end

#endif /* AUTHCTL_CLIBSECRET_H */
