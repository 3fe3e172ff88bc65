// Why this module exists: OpenSSL's BIGNUM does the 3072-bit modular exponentiation
// that SRP needs in about 2 ms on the 2-core dev machine (constant-time Montgomery);
// attaswift BigInt needs about 90 ms in a release build (docs/performance.md).
// Swift uses BN_* directly (BIGNUM, BN_CTX and BN_MONT_CTX import as OpaquePointer);
// function-like macros such as BN_num_bytes are not imported, so Sources/CognitoClient/SRP
// computes them from BN_num_bits.
#ifndef AUTHCTL_COPENSSL_SHIM_H
#define AUTHCTL_COPENSSL_SHIM_H
#include <openssl/bn.h>
#include <openssl/crypto.h>
#endif
