#define _GNU_SOURCE  // struct ucred (SO_PEERCRED)
// The libfido2 shim: loads libfido2 with dlopen on the first security-key operation; see CFido2.h.
// <fido.h> (Debian libfido2-dev) is used for the types and constants only: libfido2 is not linked.
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <fido.h>
#include "CFido2.h"

_Static_assert(AUTHCTL_FIDO_ERR_ACTION_TIMEOUT == FIDO_ERR_ACTION_TIMEOUT && AUTHCTL_FIDO_ERR_USER_ACTION_TIMEOUT == FIDO_ERR_USER_ACTION_TIMEOUT
               && AUTHCTL_FIDO_ERR_OPERATION_DENIED == FIDO_ERR_OPERATION_DENIED
               && AUTHCTL_FIDO_ERR_CREDENTIAL_EXCLUDED == FIDO_ERR_CREDENTIAL_EXCLUDED
               && AUTHCTL_FIDO_ERR_NO_CREDENTIALS == FIDO_ERR_NO_CREDENTIALS
               && AUTHCTL_FIDO_ERR_PIN_INVALID == FIDO_ERR_PIN_INVALID
               && AUTHCTL_FIDO_ERR_PIN_BLOCKED == FIDO_ERR_PIN_BLOCKED
               && AUTHCTL_FIDO_ERR_PIN_AUTH_BLOCKED == FIDO_ERR_PIN_AUTH_BLOCKED
               && AUTHCTL_FIDO_ERR_PIN_NOT_SET == FIDO_ERR_PIN_NOT_SET
               && AUTHCTL_FIDO_ERR_PIN_REQUIRED == FIDO_ERR_PIN_REQUIRED
               && AUTHCTL_FIDO_ERR_UV_BLOCKED == FIDO_ERR_UV_BLOCKED
               && AUTHCTL_FIDO_ERR_UNSUPPORTED_ALGORITHM == FIDO_ERR_UNSUPPORTED_ALGORITHM
               && AUTHCTL_FIDO_ERR_KEEPALIVE_CANCEL == FIDO_ERR_KEEPALIVE_CANCEL
               && AUTHCTL_FIDO_ERR_TX == FIDO_ERR_TX && AUTHCTL_FIDO_ERR_RX == FIDO_ERR_RX
               && AUTHCTL_FIDO_ERR_INTERNAL == FIDO_ERR_INTERNAL && AUTHCTL_FIDO_OK == FIDO_OK,
               "libfido2 status codes");

// The libfido2 functions authctl uses, resolved from the library opened once by load().
static struct {
    void (*init)(int);
    const char *(*strerr)(int);
    fido_dev_info_t *(*dev_info_new)(size_t);
    void (*dev_info_free)(fido_dev_info_t **, size_t);
    int (*dev_info_manifest)(fido_dev_info_t *, size_t, size_t *);
    const fido_dev_info_t *(*dev_info_ptr)(const fido_dev_info_t *, size_t);
    const char *(*dev_info_path)(const fido_dev_info_t *);
    fido_dev_t *(*dev_new)(void);
    void (*dev_free)(fido_dev_t **);
    int (*dev_set_io_functions)(fido_dev_t *, const fido_dev_io_t *);
    int (*dev_set_timeout)(fido_dev_t *, int);
    int (*dev_open)(fido_dev_t *, const char *);
    int (*dev_close)(fido_dev_t *);
    bool (*dev_has_pin)(const fido_dev_t *);
    bool (*dev_has_uv)(const fido_dev_t *);
    int (*dev_get_retry_count)(fido_dev_t *, int *);
    int (*dev_get_touch_begin)(fido_dev_t *);
    int (*dev_get_touch_status)(fido_dev_t *, int *, int);
    int (*dev_cancel)(fido_dev_t *);
    fido_cred_t *(*cred_new)(void);
    void (*cred_free)(fido_cred_t **);
    int (*cred_set_type)(fido_cred_t *, int);
    int (*cred_set_clientdata_hash)(fido_cred_t *, const unsigned char *, size_t);
    int (*cred_set_rp)(fido_cred_t *, const char *, const char *);
    int (*cred_set_user)(fido_cred_t *, const unsigned char *, size_t, const char *, const char *, const char *);
    int (*cred_set_rk)(fido_cred_t *, fido_opt_t);
    int (*cred_set_uv)(fido_cred_t *, fido_opt_t);
    int (*cred_exclude)(fido_cred_t *, const unsigned char *, size_t);
    int (*dev_make_cred)(fido_dev_t *, fido_cred_t *, const char *);
    const unsigned char *(*cred_id_ptr)(const fido_cred_t *);
    size_t (*cred_id_len)(const fido_cred_t *);
    const unsigned char *(*cred_authdata_raw_ptr)(const fido_cred_t *);
    size_t (*cred_authdata_raw_len)(const fido_cred_t *);
    const unsigned char *(*cred_attstmt_ptr)(const fido_cred_t *);
    size_t (*cred_attstmt_len)(const fido_cred_t *);
    const unsigned char *(*cred_pubkey_ptr)(const fido_cred_t *);
    size_t (*cred_pubkey_len)(const fido_cred_t *);
    const char *(*cred_fmt)(const fido_cred_t *);
    int (*cred_type)(const fido_cred_t *);
    fido_assert_t *(*assert_new)(void);
    void (*assert_free)(fido_assert_t **);
    int (*assert_set_rp)(fido_assert_t *, const char *);
    int (*assert_set_clientdata_hash)(fido_assert_t *, const unsigned char *, size_t);
    int (*assert_set_uv)(fido_assert_t *, fido_opt_t);
    int (*assert_allow_cred)(fido_assert_t *, const unsigned char *, size_t);
    int (*dev_get_assert)(fido_dev_t *, fido_assert_t *, const char *);
    size_t (*assert_count)(const fido_assert_t *);
    const unsigned char *(*assert_id_ptr)(const fido_assert_t *, size_t);
    size_t (*assert_id_len)(const fido_assert_t *, size_t);
    const unsigned char *(*assert_authdata_ptr)(const fido_assert_t *, size_t);
    size_t (*assert_authdata_len)(const fido_assert_t *, size_t);
    const unsigned char *(*assert_sig_ptr)(const fido_assert_t *, size_t);
    size_t (*assert_sig_len)(const fido_assert_t *, size_t);
    const unsigned char *(*assert_user_id_ptr)(const fido_assert_t *, size_t);
    size_t (*assert_user_id_len)(const fido_assert_t *, size_t);
} lib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_result = AUTHCTL_FIDO_LOAD_FAILED;
static char load_error[512];

#define RESOLVE(handle, field, name)                                                    \
    do {                                                                                \
        *(void **)(&lib.field) = dlsym(handle, name);                                   \
        if (lib.field == NULL) {                                                        \
            snprintf(load_error, sizeof load_error, "%s has no %s", AUTHCTL_LIBFIDO2, name); \
            return;                                                                     \
        }                                                                               \
    } while (0)

static void load(void) {
    void *handle = dlopen(AUTHCTL_LIBFIDO2, RTLD_LAZY | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load %s (%s); install libfido2-1",
                 AUTHCTL_LIBFIDO2, reason ? reason : "unknown error");
        return;
    }
    RESOLVE(handle, init, "fido_init");
    RESOLVE(handle, strerr, "fido_strerr");
    RESOLVE(handle, dev_info_new, "fido_dev_info_new");
    RESOLVE(handle, dev_info_free, "fido_dev_info_free");
    RESOLVE(handle, dev_info_manifest, "fido_dev_info_manifest");
    RESOLVE(handle, dev_info_ptr, "fido_dev_info_ptr");
    RESOLVE(handle, dev_info_path, "fido_dev_info_path");
    RESOLVE(handle, dev_new, "fido_dev_new");
    RESOLVE(handle, dev_free, "fido_dev_free");
    RESOLVE(handle, dev_set_io_functions, "fido_dev_set_io_functions");
    RESOLVE(handle, dev_set_timeout, "fido_dev_set_timeout");
    RESOLVE(handle, dev_open, "fido_dev_open");
    RESOLVE(handle, dev_close, "fido_dev_close");
    RESOLVE(handle, dev_has_pin, "fido_dev_has_pin");
    RESOLVE(handle, dev_has_uv, "fido_dev_has_uv");
    RESOLVE(handle, dev_get_retry_count, "fido_dev_get_retry_count");
    RESOLVE(handle, dev_get_touch_begin, "fido_dev_get_touch_begin");
    RESOLVE(handle, dev_get_touch_status, "fido_dev_get_touch_status");
    RESOLVE(handle, dev_cancel, "fido_dev_cancel");
    RESOLVE(handle, cred_new, "fido_cred_new");
    RESOLVE(handle, cred_free, "fido_cred_free");
    RESOLVE(handle, cred_set_type, "fido_cred_set_type");
    RESOLVE(handle, cred_set_clientdata_hash, "fido_cred_set_clientdata_hash");
    RESOLVE(handle, cred_set_rp, "fido_cred_set_rp");
    RESOLVE(handle, cred_set_user, "fido_cred_set_user");
    RESOLVE(handle, cred_set_rk, "fido_cred_set_rk");
    RESOLVE(handle, cred_set_uv, "fido_cred_set_uv");
    RESOLVE(handle, cred_exclude, "fido_cred_exclude");
    RESOLVE(handle, dev_make_cred, "fido_dev_make_cred");
    RESOLVE(handle, cred_id_ptr, "fido_cred_id_ptr");
    RESOLVE(handle, cred_id_len, "fido_cred_id_len");
    RESOLVE(handle, cred_authdata_raw_ptr, "fido_cred_authdata_raw_ptr");
    RESOLVE(handle, cred_authdata_raw_len, "fido_cred_authdata_raw_len");
    RESOLVE(handle, cred_attstmt_ptr, "fido_cred_attstmt_ptr");
    RESOLVE(handle, cred_attstmt_len, "fido_cred_attstmt_len");
    RESOLVE(handle, cred_pubkey_ptr, "fido_cred_pubkey_ptr");
    RESOLVE(handle, cred_pubkey_len, "fido_cred_pubkey_len");
    RESOLVE(handle, cred_fmt, "fido_cred_fmt");
    RESOLVE(handle, cred_type, "fido_cred_type");
    RESOLVE(handle, assert_new, "fido_assert_new");
    RESOLVE(handle, assert_free, "fido_assert_free");
    RESOLVE(handle, assert_set_rp, "fido_assert_set_rp");
    RESOLVE(handle, assert_set_clientdata_hash, "fido_assert_set_clientdata_hash");
    RESOLVE(handle, assert_set_uv, "fido_assert_set_uv");
    RESOLVE(handle, assert_allow_cred, "fido_assert_allow_cred");
    RESOLVE(handle, dev_get_assert, "fido_dev_get_assert");
    RESOLVE(handle, assert_count, "fido_assert_count");
    RESOLVE(handle, assert_id_ptr, "fido_assert_id_ptr");
    RESOLVE(handle, assert_id_len, "fido_assert_id_len");
    RESOLVE(handle, assert_authdata_ptr, "fido_assert_authdata_ptr");
    RESOLVE(handle, assert_authdata_len, "fido_assert_authdata_len");
    RESOLVE(handle, assert_sig_ptr, "fido_assert_sig_ptr");
    RESOLVE(handle, assert_sig_len, "fido_assert_sig_len");
    RESOLVE(handle, assert_user_id_ptr, "fido_assert_user_id_ptr");
    RESOLVE(handle, assert_user_id_len, "fido_assert_user_id_len");
    lib.init(0);
    load_result = 0;
}

int authctl_fido_load(void) {
    pthread_once(&load_once, load);
    return load_result;
}

const char *authctl_fido_load_error(void) { return load_error; }

const char *authctl_fido_strerr(int status) {
    if (authctl_fido_load() != 0) return load_error;
    return lib.strerr(status);
}

int authctl_fido_list_devices(char *buffer, size_t size, size_t *count) {
    *count = 0;
    if (size > 0) buffer[0] = '\0';
    if (authctl_fido_load() != 0) return AUTHCTL_FIDO_LOAD_FAILED;
    fido_dev_info_t *list = lib.dev_info_new(16);
    if (list == NULL) return FIDO_ERR_INTERNAL;
    size_t found = 0;
    int status = lib.dev_info_manifest(list, 16, &found);
    size_t used = 0;
    for (size_t i = 0; status == FIDO_OK && i < found; i++) {
        const char *path = lib.dev_info_path(lib.dev_info_ptr(list, i));
        size_t length = path ? strlen(path) : 0;
        if (length == 0 || used + length + 2 > size) continue;
        memcpy(buffer + used, path, length);
        used += length;
        buffer[used++] = '\n';
        buffer[used] = '\0';
        (*count)++;
    }
    lib.dev_info_free(&list, 16);
    return status;
}

// The `unix:PATH` device: CTAPHID reports over a Unix stream socket, 64 bytes each way, the
// report-ID byte libfido2 puts before each report it writes left out.
#define AUTHCTL_REPORT_LEN 64

// Why the last socket_open on this thread refused (libfido2 only sees "cannot open").
static __thread int socket_refused;

// Whether the directory holding the socket `path` is this user's or root's, and writable by
// neither group nor others: otherwise another user could put their own socket in its place.
static bool socket_directory_is_private(const char *path) {
    char directory[sizeof(((struct sockaddr_un *)0)->sun_path)];
    size_t length = strlen(path);
    if (length >= sizeof directory) return false;
    memcpy(directory, path, length + 1);
    char *slash = strrchr(directory, '/');
    if (slash == NULL) {
        strcpy(directory, ".");
    } else if (slash == directory) {
        slash[1] = '\0';
    } else {
        *slash = '\0';
    }
    struct stat info;
    if (stat(directory, &info) != 0) return true;  // no directory: connect fails on its own
    return (info.st_uid == getuid() || info.st_uid == 0) && (info.st_mode & 022) == 0;
}

static void *socket_open(const char *path) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address.sun_path) return NULL;
    strcpy(address.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return NULL;
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        return NULL;
    }
    // The PIN protocol's exchange goes only to a key served by this user or root: a socket of
    // another user (a stale path, a squatted one) would learn the PIN.
    struct ucred peer;
    socklen_t peer_length = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_length) != 0
        || (peer.uid != getuid() && peer.uid != 0)) {
        close(fd);
        socket_refused = AUTHCTL_FIDO_SOCKET_FOREIGN_PEER;
        return NULL;
    }
    int *handle = malloc(sizeof *handle);
    if (handle == NULL) {
        close(fd);
        return NULL;
    }
    *handle = fd;
    return handle;
}

static void socket_close(void *handle) {
    if (handle == NULL) return;
    close(*(int *)handle);
    free(handle);
}

static int socket_read(void *handle, unsigned char *buffer, size_t length, int ms) {
    int fd = *(int *)handle;
    if (length < AUTHCTL_REPORT_LEN) return -1;
    size_t got = 0;
    while (got < AUTHCTL_REPORT_LEN) {
        struct pollfd waiting = {.fd = fd, .events = POLLIN};
        int ready = poll(&waiting, 1, ms < 0 ? -1 : ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return -1;
        ssize_t n = read(fd, buffer + got, AUTHCTL_REPORT_LEN - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    return AUTHCTL_REPORT_LEN;
}

static int socket_write(void *handle, const unsigned char *buffer, size_t length) {
    int fd = *(int *)handle;
    if (length != AUTHCTL_REPORT_LEN + 1) return -1;
    size_t sent = 0;
    while (sent < AUTHCTL_REPORT_LEN) {
        ssize_t n = send(fd, buffer + 1 + sent, AUTHCTL_REPORT_LEN - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        sent += (size_t)n;
    }
    return (int)length;
}

static const fido_dev_io_t socket_io = {socket_open, socket_close, socket_read, socket_write};

int authctl_fido_open(const char *path, int timeout_ms, void **device) {
    *device = NULL;
    if (authctl_fido_load() != 0) return AUTHCTL_FIDO_LOAD_FAILED;
    fido_dev_t *dev = lib.dev_new();
    if (dev == NULL) return FIDO_ERR_INTERNAL;
    int status = FIDO_OK;
    const char *open_path = path;
    socket_refused = 0;
    if (strncmp(path, "unix:", 5) == 0) {
        open_path = path + 5;
        if (!socket_directory_is_private(open_path)) {
            lib.dev_free(&dev);
            return AUTHCTL_FIDO_SOCKET_OPEN_DIRECTORY;
        }
        status = lib.dev_set_io_functions(dev, &socket_io);
    }
    if (status == FIDO_OK) status = lib.dev_set_timeout(dev, timeout_ms);
    if (status == FIDO_OK) status = lib.dev_open(dev, open_path);
    if (status != FIDO_OK && socket_refused != 0) status = socket_refused;
    if (status != FIDO_OK) {
        lib.dev_free(&dev);
        return status;
    }
    *device = dev;
    return FIDO_OK;
}

void authctl_fido_close(void *device) {
    if (device == NULL || authctl_fido_load() != 0) return;
    fido_dev_t *dev = device;
    lib.dev_close(dev);
    lib.dev_free(&dev);
}

bool authctl_fido_has_pin(void *device) { return lib.dev_has_pin(device); }
bool authctl_fido_has_uv(void *device) { return lib.dev_has_uv(device); }
int authctl_fido_retry_count(void *device, int *retries) { return lib.dev_get_retry_count(device, retries); }
int authctl_fido_touch_begin(void *device) { return lib.dev_get_touch_begin(device); }
int authctl_fido_touch_status(void *device, int *touched, int ms) { return lib.dev_get_touch_status(device, touched, ms); }
int authctl_fido_cancel(void *device) { return lib.dev_cancel(device); }

void *authctl_fido_cred_new(void) { return authctl_fido_load() == 0 ? lib.cred_new() : NULL; }

void authctl_fido_cred_free(void *cred) {
    if (cred == NULL) return;
    fido_cred_t *c = cred;
    lib.cred_free(&c);
}

int authctl_fido_cred_exclude(void *cred, const uint8_t *id, size_t len) { return lib.cred_exclude(cred, id, len); }

int authctl_fido_make_credential(void *device, void *cred, const struct authctl_fido_make_args *args) {
    int status = lib.cred_set_type(cred, args->cose_algorithm);
    if (status == FIDO_OK) status = lib.cred_set_clientdata_hash(cred, args->client_data_hash, args->client_data_hash_len);
    if (status == FIDO_OK) status = lib.cred_set_rp(cred, args->rp_id, args->rp_name);
    if (status == FIDO_OK)
        status = lib.cred_set_user(cred, args->user_id, args->user_id_len, args->user_name, args->user_display_name, NULL);
    if (status == FIDO_OK) status = lib.cred_set_rk(cred, (fido_opt_t)args->resident_key);
    if (status == FIDO_OK) status = lib.cred_set_uv(cred, (fido_opt_t)args->user_verification);
    if (status == FIDO_OK) status = lib.dev_make_cred(device, cred, args->pin);
    return status;
}

const uint8_t *authctl_fido_cred_id(void *cred, size_t *len) { *len = lib.cred_id_len(cred); return lib.cred_id_ptr(cred); }
const uint8_t *authctl_fido_cred_authdata_raw(void *cred, size_t *len) {
    *len = lib.cred_authdata_raw_len(cred);
    return lib.cred_authdata_raw_ptr(cred);
}
const uint8_t *authctl_fido_cred_attstmt(void *cred, size_t *len) { *len = lib.cred_attstmt_len(cred); return lib.cred_attstmt_ptr(cred); }
const uint8_t *authctl_fido_cred_pubkey(void *cred, size_t *len) { *len = lib.cred_pubkey_len(cred); return lib.cred_pubkey_ptr(cred); }
const char *authctl_fido_cred_fmt(void *cred) { return lib.cred_fmt(cred); }
int authctl_fido_cred_type(void *cred) { return lib.cred_type(cred); }

void *authctl_fido_assert_new(void) { return authctl_fido_load() == 0 ? lib.assert_new() : NULL; }

void authctl_fido_assert_free(void *assertion) {
    if (assertion == NULL) return;
    fido_assert_t *a = assertion;
    lib.assert_free(&a);
}

int authctl_fido_assert_allow(void *assertion, const uint8_t *id, size_t len) { return lib.assert_allow_cred(assertion, id, len); }

int authctl_fido_get_assertion(void *device, void *assertion, const struct authctl_fido_assert_args *args) {
    int status = lib.assert_set_rp(assertion, args->rp_id);
    if (status == FIDO_OK) status = lib.assert_set_clientdata_hash(assertion, args->client_data_hash, args->client_data_hash_len);
    if (status == FIDO_OK) status = lib.assert_set_uv(assertion, (fido_opt_t)args->user_verification);
    if (status == FIDO_OK) status = lib.dev_get_assert(device, assertion, args->pin);
    return status;
}

size_t authctl_fido_assert_count(void *assertion) { return lib.assert_count(assertion); }
const uint8_t *authctl_fido_assert_id(void *a, size_t i, size_t *len) { *len = lib.assert_id_len(a, i); return lib.assert_id_ptr(a, i); }
const uint8_t *authctl_fido_assert_authdata_cbor(void *a, size_t i, size_t *len) {
    *len = lib.assert_authdata_len(a, i);
    return lib.assert_authdata_ptr(a, i);
}
const uint8_t *authctl_fido_assert_sig(void *a, size_t i, size_t *len) { *len = lib.assert_sig_len(a, i); return lib.assert_sig_ptr(a, i); }
const uint8_t *authctl_fido_assert_user_id(void *a, size_t i, size_t *len) {
    *len = lib.assert_user_id_len(a, i);
    return lib.assert_user_id_ptr(a, i);
}
