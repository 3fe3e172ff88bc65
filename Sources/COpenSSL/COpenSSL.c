// The libcrypto shim: loads libcrypto with dlopen on the first big-integer operation; see
// COpenSSL.h. The functions' types come from OpenSSL's own header, so a wrong one does not build.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <openssl/bn.h>
#include "COpenSSL.h"

#define AUTHCTL_BN_FUNCTIONS(X)                                                                  \
    X(BN_new) X(BN_clear_free) X(BN_set_flags) X(BN_bin2bn) X(BN_bn2bin) X(BN_set_word)          \
    X(BN_is_zero) X(BN_num_bits) X(BN_nnmod) X(BN_add) X(BN_mul) X(BN_mod_mul) X(BN_mod_sub)     \
    X(BN_mod_exp_mont_consttime) X(BN_CTX_new) X(BN_CTX_free) X(BN_MONT_CTX_new)                \
    X(BN_MONT_CTX_set) X(BN_MONT_CTX_free)

// The functions, resolved from the library opened by load().
#define AUTHCTL_BN_FIELD(name) __typeof__(name) *name;
static struct { AUTHCTL_BN_FUNCTIONS(AUTHCTL_BN_FIELD) } lib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_error[512];

static void load(void) {
    // RTLD_LAZY as in CCurl.c. OpenSSL 3 first; 1.1 only where 3 is not installed at all.
    const char *soname = AUTHCTL_LIBCRYPTO;
    void *handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "unknown error");
        soname = AUTHCTL_LIBCRYPTO_1_1;
        handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    }
    if (handle == NULL) {
        char first[256];
        snprintf(first, sizeof first, "%s", load_error);
        snprintf(load_error, sizeof load_error,
                 "cannot load %s (%s) or %s; install OpenSSL's libcrypto (Debian: libssl3; Fedora, Amazon Linux: "
                 "openssl-libs)", AUTHCTL_LIBCRYPTO, first, AUTHCTL_LIBCRYPTO_1_1);
        return;
    }
    load_error[0] = '\0';
#define AUTHCTL_BN_RESOLVE(name)                                                                  \
    *(void **)(&lib.name) = dlsym(handle, #name);                                                 \
    if (lib.name == NULL) {                                                                       \
        snprintf(load_error, sizeof load_error, "%s has no %s", soname, #name);                  \
        return;                                                                                   \
    }
    AUTHCTL_BN_FUNCTIONS(AUTHCTL_BN_RESOLVE)
    loaded = 1;
}

int authctl_bn_load(void) {
    pthread_once(&load_once, load);
    return loaded;
}

const char *authctl_bn_load_error(void) {
    return load_error;
}

BIGNUM *authctl_bn_new(void) {
    return lib.BN_new();
}

BIGNUM *authctl_bn_new_secret(void) {
    BIGNUM *bn = lib.BN_new();
    if (bn != NULL) lib.BN_set_flags(bn, BN_FLG_CONSTTIME);
    return bn;
}

void authctl_bn_clear_free(BIGNUM *a) {
    lib.BN_clear_free(a);
}

BIGNUM *authctl_bn_bin2bn(const unsigned char *s, int len, BIGNUM *ret) {
    return lib.BN_bin2bn(s, len, ret);
}

int authctl_bn_bn2bin(const BIGNUM *a, unsigned char *to) {
    return lib.BN_bn2bin(a, to);
}

int authctl_bn_set_word(BIGNUM *a, unsigned long w) {
    return lib.BN_set_word(a, w);
}

int authctl_bn_is_zero(const BIGNUM *a) {
    return lib.BN_is_zero(a);
}

int authctl_bn_num_bits(const BIGNUM *a) {
    return lib.BN_num_bits(a);
}

int authctl_bn_nnmod(BIGNUM *r, const BIGNUM *m, const BIGNUM *d, BN_CTX *ctx) {
    return lib.BN_nnmod(r, m, d, ctx);
}

int authctl_bn_add(BIGNUM *r, const BIGNUM *a, const BIGNUM *b) {
    return lib.BN_add(r, a, b);
}

int authctl_bn_mul(BIGNUM *r, const BIGNUM *a, const BIGNUM *b, BN_CTX *ctx) {
    return lib.BN_mul(r, a, b, ctx);
}

int authctl_bn_mod_mul(BIGNUM *r, const BIGNUM *a, const BIGNUM *b, const BIGNUM *m, BN_CTX *ctx) {
    return lib.BN_mod_mul(r, a, b, m, ctx);
}

int authctl_bn_mod_sub(BIGNUM *r, const BIGNUM *a, const BIGNUM *b, const BIGNUM *m, BN_CTX *ctx) {
    return lib.BN_mod_sub(r, a, b, m, ctx);
}

int authctl_bn_mod_exp_mont_consttime(BIGNUM *rr, const BIGNUM *a, const BIGNUM *p, const BIGNUM *m,
                                      BN_CTX *ctx, BN_MONT_CTX *in_mont) {
    return lib.BN_mod_exp_mont_consttime(rr, a, p, m, ctx, in_mont);
}

BN_CTX *authctl_bn_ctx_new(void) {
    return lib.BN_CTX_new();
}

void authctl_bn_ctx_free(BN_CTX *c) {
    lib.BN_CTX_free(c);
}

BN_MONT_CTX *authctl_bn_mont_ctx_new(void) {
    return lib.BN_MONT_CTX_new();
}

int authctl_bn_mont_ctx_set(BN_MONT_CTX *mont, const BIGNUM *mod, BN_CTX *ctx) {
    return lib.BN_MONT_CTX_set(mont, mod, ctx);
}

void authctl_bn_mont_ctx_free(BN_MONT_CTX *mont) {
    lib.BN_MONT_CTX_free(mont);
}
