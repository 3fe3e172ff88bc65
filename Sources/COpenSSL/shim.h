// Why this module exists: OpenSSL's BIGNUM does the 3072-bit modular exponentiation
// that SRP needs in about a millisecond; pure-Swift big integers are far slower.
#ifndef AUTHCTL_COPENSSL_SHIM_H
#define AUTHCTL_COPENSSL_SHIM_H
#include <openssl/bn.h>
#include <openssl/crypto.h>
#endif
