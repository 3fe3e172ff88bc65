// The libqrencode shim: loads libqrencode with dlopen when the first QR code is drawn; see
// CQRencode.h. The functions' types come from libqrencode's own header, so a wrong one does not build.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include "CQRencode.h"

static struct {
    __typeof__(QRcode_encodeString) *encode_string;
    __typeof__(QRcode_free) *free;
} lib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_error[512];

#define RESOLVE(handle, field, name)                                                           \
    do {                                                                                       \
        *(void **)(&lib.field) = dlsym(handle, name);                                          \
        if (lib.field == NULL) {                                                               \
            snprintf(load_error, sizeof load_error, "%s has no %s", AUTHCTL_LIBQRENCODE, name); \
            return;                                                                            \
        }                                                                                      \
    } while (0)

static void load(void) {
    void *handle = dlopen(AUTHCTL_LIBQRENCODE, RTLD_LAZY | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error,
                 "cannot load %s (%s); install libqrencode4 (Fedora, Amazon Linux: qrencode-libs)",
                 AUTHCTL_LIBQRENCODE, reason ? reason : "unknown error");
        return;
    }
    RESOLVE(handle, encode_string, "QRcode_encodeString");
    RESOLVE(handle, free, "QRcode_free");
    loaded = 1;
}

int authctl_qr_load(void) {
    pthread_once(&load_once, load);
    return loaded;
}

const char *authctl_qr_load_error(void) {
    return load_error;
}

QRcode *authctl_qr_encode_string(const char *string, int version, QRecLevel level, QRencodeMode hint,
                                 int casesensitive) {
    return lib.encode_string(string, version, level, hint, casesensitive);
}

void authctl_qr_free(QRcode *code) {
    lib.free(code);
}
