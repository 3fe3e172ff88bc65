// COpenSSL: OpenSSL's BIGNUM for the SRP arithmetic of CognitoClient, through a typed shim.
//
// Why BIGNUM: it does the 3072-bit modular exponentiations of one SRP sign-in in about 4.7 ms on
// the 2-core dev machine (constant-time Montgomery); attaswift BigInt needs about 35 times as long
// (docs/performance.md).
//
// Why a shim: libcrypto is loaded with dlopen on the first big-integer operation, not linked.
// Loading and initialising it costs about 2.5 M instructions at every start (OpenSSL 3's
// constructors and relocations), which every command would pay although only SRP (`signin`, a
// remembered device) uses it (docs/performance.md). COpenSSL.c resolves the functions below with
// dlsym; when libcrypto is missing, authctl_bn_load() says so and no other function may be
// called. OpenSSL's headers (libssl-dev) are used for the types only; the function-like macros
// (BN_num_bytes...) are not available to Swift, which computes them from authctl_bn_num_bits.
//
// Names are prefixed `authctl_bn_` so they cannot collide with libcrypto's own symbols. Each
// wrapper does exactly what the OpenSSL function of the same name does.

#ifndef AUTHCTL_COPENSSL_H
#define AUTHCTL_COPENSSL_H

#include <stddef.h>
#include <openssl/types.h>

#pragma clang assume_nonnull begin

#ifdef __cplusplus
extern "C" {
#endif

/// The libcrypto that is loaded: OpenSSL 3's soname (Debian 12 libssl3, Amazon Linux 2023 and
/// RHEL 9 openssl-libs), else OpenSSL 1.1's (Debian 11 libssl1.1, Ubuntu 20.04), whose BIGNUM
/// functions used here have the same names and types.
#define AUTHCTL_LIBCRYPTO "libcrypto.so.3"
#define AUTHCTL_LIBCRYPTO_1_1 "libcrypto.so.1.1"

/// Loads libcrypto, once per process however often it is called. Returns 1 when it is loaded,
/// 0 when it cannot be (authctl_bn_load_error() says why); call no other function then.
int authctl_bn_load(void);
/// Why authctl_bn_load failed; "" when it did not.
const char *authctl_bn_load_error(void);

BIGNUM *_Nullable authctl_bn_new(void);
/// BN_new with BN_FLG_CONSTTIME set: for a secret value.
BIGNUM *_Nullable authctl_bn_new_secret(void);
void authctl_bn_clear_free(BIGNUM *_Nullable a);
BIGNUM *_Nullable authctl_bn_bin2bn(const unsigned char *_Nullable s, int len, BIGNUM *_Nullable ret);
int authctl_bn_bn2bin(const BIGNUM *a, unsigned char *to);
int authctl_bn_set_word(BIGNUM *a, unsigned long w);
int authctl_bn_is_zero(const BIGNUM *a);
int authctl_bn_num_bits(const BIGNUM *a);
int authctl_bn_nnmod(BIGNUM *r, const BIGNUM *m, const BIGNUM *d, BN_CTX *ctx);
int authctl_bn_add(BIGNUM *r, const BIGNUM *a, const BIGNUM *b);
int authctl_bn_mul(BIGNUM *r, const BIGNUM *a, const BIGNUM *b, BN_CTX *ctx);
int authctl_bn_mod_mul(BIGNUM *r, const BIGNUM *a, const BIGNUM *b, const BIGNUM *m, BN_CTX *ctx);
int authctl_bn_mod_sub(BIGNUM *r, const BIGNUM *a, const BIGNUM *b, const BIGNUM *m, BN_CTX *ctx);
int authctl_bn_mod_exp_mont_consttime(BIGNUM *rr, const BIGNUM *a, const BIGNUM *p, const BIGNUM *m,
                                      BN_CTX *ctx, BN_MONT_CTX *_Nullable in_mont);
BN_CTX *_Nullable authctl_bn_ctx_new(void);
void authctl_bn_ctx_free(BN_CTX *_Nullable c);
BN_MONT_CTX *_Nullable authctl_bn_mont_ctx_new(void);
int authctl_bn_mont_ctx_set(BN_MONT_CTX *mont, const BIGNUM *mod, BN_CTX *ctx);
void authctl_bn_mont_ctx_free(BN_MONT_CTX *_Nullable mont);

#ifdef __cplusplus
}
#endif

#pragma clang assume_nonnull end

#endif /* AUTHCTL_COPENSSL_H */
