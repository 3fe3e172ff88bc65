// Typed wrappers over libfido2 (FIDO2/CTAP2 security keys) for authctl's passkeys.
//
// Why a shim: libfido2 is opened with dlopen on the first security-key operation, not linked, so
// the commands that use no key (nearly all of them) do not load it and its dependencies (libcbor,
// libcrypto, libudev, libz), and a machine without libfido2-1 fails only `passkey` and
// `signin --method passkey`, with a message naming the package. The shim also carries the I/O
// functions of the `unix:PATH` device (a virtual authenticator speaking CTAPHID over a Unix stream
// socket: each 64-byte HID report written and read as exactly 64 bytes, without the report-ID
// byte), which libfido2 calls back through fido_dev_set_io_functions.
//
// Handles are opaque pointers; every function returns a libfido2 status (FIDO_OK is 0) or, for
// the loading, AUTHCTL_FIDO_LOAD_FAILED with the reason in authctl_fido_load_error().
#ifndef AUTHCTL_CFIDO2_H
#define AUTHCTL_CFIDO2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTHCTL_LIBFIDO2 "libfido2.so.1"
#define AUTHCTL_FIDO_LOAD_FAILED (-1000)
// A `unix:PATH` socket refused before a byte is sent: its peer is another user (SO_PEERCRED: not
// this user, not root), or it is in a directory another user owns or others can write (the
// socket could be swapped).
#define AUTHCTL_FIDO_SOCKET_FOREIGN_PEER (-1001)
#define AUTHCTL_FIDO_SOCKET_OPEN_DIRECTORY (-1002)

// libfido2's status codes authctl tells apart (fido/err.h).
#define AUTHCTL_FIDO_OK 0
#define AUTHCTL_FIDO_ERR_ACTION_TIMEOUT 0x3a
#define AUTHCTL_FIDO_ERR_USER_ACTION_TIMEOUT 0x2f
#define AUTHCTL_FIDO_ERR_OPERATION_DENIED 0x27
#define AUTHCTL_FIDO_ERR_CREDENTIAL_EXCLUDED 0x19
#define AUTHCTL_FIDO_ERR_NO_CREDENTIALS 0x2e
#define AUTHCTL_FIDO_ERR_PIN_INVALID 0x31
#define AUTHCTL_FIDO_ERR_PIN_BLOCKED 0x32
#define AUTHCTL_FIDO_ERR_PIN_AUTH_BLOCKED 0x34
#define AUTHCTL_FIDO_ERR_PIN_NOT_SET 0x35
#define AUTHCTL_FIDO_ERR_PIN_REQUIRED 0x36
#define AUTHCTL_FIDO_ERR_UV_BLOCKED 0x3c
#define AUTHCTL_FIDO_ERR_UNSUPPORTED_ALGORITHM 0x26
#define AUTHCTL_FIDO_ERR_KEEPALIVE_CANCEL 0x2d
#define AUTHCTL_FIDO_ERR_TX (-1)
#define AUTHCTL_FIDO_ERR_RX (-2)
#define AUTHCTL_FIDO_ERR_INTERNAL (-9)

/// Loads libfido2 once (thread-safe); 0, or AUTHCTL_FIDO_LOAD_FAILED.
int authctl_fido_load(void);
const char *authctl_fido_load_error(void);
/// libfido2's text for a status.
const char *authctl_fido_strerr(int status);

/// The hidraw paths of the FIDO devices attached, newline-separated, in `buffer`; their number.
int authctl_fido_list_devices(char *buffer, size_t size, size_t *count);

/// Opens `path`: a hidraw device, or `unix:PATH` (the socket I/O above). `timeout_ms` bounds
/// each operation's wait for a touch (-1: none).
int authctl_fido_open(const char *path, int timeout_ms, void **device);
void authctl_fido_close(void *device);
bool authctl_fido_has_pin(void *device);
bool authctl_fido_has_uv(void *device);
int authctl_fido_retry_count(void *device, int *retries);
/// Choosing among several keys by touch: a request each key answers only when touched
/// (fido_dev_get_touch_begin), polled for `ms` (fido_dev_get_touch_status), and cancelled on the
/// keys not touched.
int authctl_fido_touch_begin(void *device);
int authctl_fido_touch_status(void *device, int *touched, int ms);
int authctl_fido_cancel(void *device);

/// One makeCredential: options (0 omit, 1 false, 2 true), then the credential's parts.
struct authctl_fido_make_args {
    const uint8_t *client_data_hash;
    size_t client_data_hash_len;
    const char *rp_id;
    const char *rp_name;
    const uint8_t *user_id;
    size_t user_id_len;
    const char *user_name;
    const char *user_display_name;
    int cose_algorithm;
    int resident_key;
    int user_verification;
    const char *pin;  // NULL: none
};

void *authctl_fido_cred_new(void);
void authctl_fido_cred_free(void *cred);
int authctl_fido_cred_exclude(void *cred, const uint8_t *id, size_t len);
int authctl_fido_make_credential(void *device, void *cred, const struct authctl_fido_make_args *args);
/// Parts of the made credential (pointers valid until authctl_fido_cred_free).
const uint8_t *authctl_fido_cred_id(void *cred, size_t *len);
const uint8_t *authctl_fido_cred_authdata_raw(void *cred, size_t *len);
const uint8_t *authctl_fido_cred_attstmt(void *cred, size_t *len);
const uint8_t *authctl_fido_cred_pubkey(void *cred, size_t *len);
const char *authctl_fido_cred_fmt(void *cred);
int authctl_fido_cred_type(void *cred);

struct authctl_fido_assert_args {
    const uint8_t *client_data_hash;
    size_t client_data_hash_len;
    const char *rp_id;
    int user_verification;
    const char *pin;  // NULL: none
};

void *authctl_fido_assert_new(void);
void authctl_fido_assert_free(void *assertion);
int authctl_fido_assert_allow(void *assertion, const uint8_t *id, size_t len);
int authctl_fido_get_assertion(void *device, void *assertion, const struct authctl_fido_assert_args *args);
size_t authctl_fido_assert_count(void *assertion);
/// Parts of assertion `index`. The authenticator data is libfido2's CBOR byte string (1.12 has
/// no raw getter): the caller unwraps it.
const uint8_t *authctl_fido_assert_id(void *assertion, size_t index, size_t *len);
const uint8_t *authctl_fido_assert_authdata_cbor(void *assertion, size_t index, size_t *len);
const uint8_t *authctl_fido_assert_sig(void *assertion, size_t index, size_t *len);
const uint8_t *authctl_fido_assert_user_id(void *assertion, size_t index, size_t *len);

#endif
