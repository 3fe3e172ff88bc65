// Linked into the portable release build only (`make release`; docs/architecture.md, "Portable
// release"), which links against Debian 11's glibc 2.31 but with GCC 12's static libstdc++ (the
// Swift runtime needs GCC 11's or later; Debian 11 has GCC 10). That libstdc++ refers to two
// things glibc 2.31 lacks; these definitions stand in for them. Hidden: they satisfy the static
// link only, and never interpose on a newer glibc's own for the libraries authctl opens later.
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>

// glibc 2.32: libstdc++ skips atomic reference counting while it is true. Always false here, so
// libstdc++ always counts atomically, as it did before the variable existed.
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;

// glibc 2.36 (libstdc++'s std::random_device): the kernel's random bytes through getrandom
// (glibc 2.25), which blocks only until the pool is first seeded. Never a weaker source.
__attribute__((visibility("hidden"))) void arc4random_buf(void *buffer, size_t length) {
    unsigned char *bytes = buffer;
    while (length > 0) {
        ssize_t got = getrandom(bytes, length, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            abort();
        }
        bytes += got;
        length -= (size_t)got;
    }
}

__attribute__((visibility("hidden"))) uint32_t arc4random(void) {
    uint32_t value;
    arc4random_buf(&value, sizeof value);
    return value;
}
