// CQRencode: libqrencode for the QR code of a new authenticator app (MFA set-up), through a shim.
//
// Why a shim: libqrencode is opened with dlopen when a QR code is first drawn, not linked. Only
// MFA set-up draws one, so a host without libqrencode4 (a server, an old distribution's minimal
// image) runs every other command; MFA set-up then fails with a message naming the package.
// Linking it also put its pkg-config `-L /usr/lib/...` on the release link line, which points the
// portable build's linker at the build host's glibc (docs/architecture.md, "Portable release").
// <qrencode.h> (libqrencode-dev) is used for the types only.
//
// Names are prefixed `authctl_qr_` so they cannot collide with libqrencode's own symbols.
#ifndef AUTHCTL_CQRENCODE_H
#define AUTHCTL_CQRENCODE_H

#include <qrencode.h>

#pragma clang assume_nonnull begin

#ifdef __cplusplus
extern "C" {
#endif

/// The libqrencode that is loaded: its soname (Debian libqrencode4, Fedora qrencode-libs).
#define AUTHCTL_LIBQRENCODE "libqrencode.so.4"

/// Loads libqrencode, once per process however often it is called. Returns 1 when it is loaded,
/// 0 when it cannot be (authctl_qr_load_error() says why); call no other function then.
int authctl_qr_load(void);
/// Why authctl_qr_load failed; "" when it did not.
const char *authctl_qr_load_error(void);

/// QRcode_encodeString: NULL with errno set when the text cannot be encoded.
QRcode *_Nullable authctl_qr_encode_string(const char *string, int version, QRecLevel level, QRencodeMode hint,
                                           int casesensitive);
/// QRcode_free.
void authctl_qr_free(QRcode *code);

#ifdef __cplusplus
}
#endif

#pragma clang assume_nonnull end

#endif /* AUTHCTL_CQRENCODE_H */
