// Non-variadic wrappers over libcurl's variadic curl_easy_setopt/curl_easy_getinfo, and the
// loading of libcurl itself; see CCurl.h.
//
// libcurl is opened with dlopen on the first transport, not linked: with its dependencies
// (OpenSSL, nghttp2, libssh2, librtmp, Kerberos, LDAP, libidn2, brotli, zstd...) it is 27 shared
// libraries, about 8 ms of the dynamic loader's work at every start, which `authctl token` on a
// fresh session, `status` or `--version` would pay without making a request (docs/performance.md).
// CURLOPT_PROTOCOLS is deprecated since 7.85, but it is what older libcurl understands.
#define CURL_DISABLE_DEPRECATION 1
// memfd_create (glibc 2.27) is declared only with _GNU_SOURCE.
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include "CCurl.h"

// The libcurl functions authctl uses, resolved from the library opened by authctl_curl_global_init.
static struct {
    CURLcode (*global_init)(long flags);
    curl_version_info_data *(*version_info)(CURLversion);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} lib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static CURLcode load_result = CURLE_FAILED_INIT;
static char load_error[512];

#define RESOLVE(handle, field, name)                                                  \
    do {                                                                              \
        *(void **)(&lib.field) = dlsym(handle, name);                                 \
        if (lib.field == NULL) {                                                      \
            snprintf(load_error, sizeof load_error, "%s has no %s", AUTHCTL_LIBCURL, name); \
            return;                                                                   \
        }                                                                             \
    } while (0)

static void load(void) {
    // RTLD_LAZY: libcurl's own calls into its 26 dependencies are bound when first made, not all
    // at load (2.6 M fewer instructions here, docs/performance.md). The functions authctl calls
    // are resolved below, so a missing one is still reported here rather than at the call.
    void *handle = dlopen(AUTHCTL_LIBCURL, RTLD_LAZY | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load %s (%s); install libcurl4",
                 AUTHCTL_LIBCURL, reason ? reason : "unknown error");
        return;
    }
    RESOLVE(handle, global_init, "curl_global_init");
    RESOLVE(handle, version_info, "curl_version_info");
    RESOLVE(handle, easy_init, "curl_easy_init");
    RESOLVE(handle, easy_cleanup, "curl_easy_cleanup");
    RESOLVE(handle, easy_reset, "curl_easy_reset");
    RESOLVE(handle, easy_perform, "curl_easy_perform");
    RESOLVE(handle, easy_strerror, "curl_easy_strerror");
    RESOLVE(handle, easy_setopt, "curl_easy_setopt");
    RESOLVE(handle, easy_getinfo, "curl_easy_getinfo");
    RESOLVE(handle, slist_append, "curl_slist_append");
    RESOLVE(handle, slist_free_all, "curl_slist_free_all");
    // With SSLKEYLOGFILE set, libcurl's TLS back end opens that file at initialisation and writes
    // every session's keys to it: anyone who can read it decrypts the traffic (tokens, passwords).
    // authctl never does that; the variable is put back afterwards for the commands `exec` runs.
    const char *keylog = getenv("SSLKEYLOGFILE");
    char *saved = keylog ? strdup(keylog) : NULL;
    if (keylog) unsetenv("SSLKEYLOGFILE");
    load_result = lib.global_init(CURL_GLOBAL_DEFAULT);
    if (saved) {
        setenv("SSLKEYLOGFILE", saved, 1);
        free(saved);
    }
    if (load_result != CURLE_OK)
        snprintf(load_error, sizeof load_error, "curl_global_init failed: %s", lib.easy_strerror(load_result));
}

CURLcode authctl_curl_global_init(void) {
    pthread_once(&load_once, load);
    return load_result;
}

const char *authctl_curl_load_error(void) {
    return load_error;
}

const char *authctl_curl_default_cainfo(void) {
    const curl_version_info_data *info = lib.version_info(CURLVERSION_NOW);
    return info ? info->cainfo : NULL;
}

size_t authctl_curl_error_size(void) {
    return CURL_ERROR_SIZE;
}

CURL *authctl_curl_easy_init(void) {
    return lib.easy_init();
}

void authctl_curl_easy_cleanup(CURL *handle) {
    lib.easy_cleanup(handle);
}

void authctl_curl_easy_reset(CURL *handle) {
    lib.easy_reset(handle);
}

CURLcode authctl_curl_easy_perform(CURL *handle) {
    return lib.easy_perform(handle);
}

const char *authctl_curl_easy_strerror(CURLcode code) {
    return lib.easy_strerror ? lib.easy_strerror(code) : NULL;
}

struct curl_slist *authctl_curl_slist_append(struct curl_slist *list, const char *line) {
    return lib.slist_append(list, line);
}

void authctl_curl_slist_free_all(struct curl_slist *list) {
    if (list != NULL) lib.slist_free_all(list);
}

CURLcode authctl_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return lib.easy_setopt(handle, option, value);
}

CURLcode authctl_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return lib.easy_setopt(handle, option, value);
}

CURLcode authctl_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return lib.easy_setopt(handle, option, value);
}

CURLcode authctl_curl_easy_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return lib.easy_setopt(handle, option, value);
}

CURLcode authctl_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return lib.easy_setopt(handle, option, value);
}

CURLcode authctl_curl_easy_setopt_blob(CURL *handle, CURLoption option, const void *data,
                                       size_t length, unsigned int flags) {
    struct curl_blob blob;
    blob.data = (void *)data;
    blob.len = length;
    blob.flags = flags;
    return lib.easy_setopt(handle, option, &blob);
}

CURLcode authctl_curl_easy_setopt_data_callback(CURL *handle, CURLoption option,
                                                authctl_curl_data_callback callback) {
    return lib.easy_setopt(handle, option, callback);
}

// The first libcurl with CURLOPT_PROTOCOLS_STR and CURLOPT_REDIR_PROTOCOLS_STR.
#define AUTHCTL_CURL_PROTOCOLS_STR_VERSION 0x075500

CURLcode authctl_curl_easy_setopt_protocols(CURL *handle, int allow_http) {
    const curl_version_info_data *info = lib.version_info(CURLVERSION_NOW);
    CURLcode code;
    if (info != NULL && info->version_num >= AUTHCTL_CURL_PROTOCOLS_STR_VERSION) {
        const char *protocols = allow_http ? "http,https" : "https";
        code = lib.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, protocols);
        if (code == CURLE_OK) code = lib.easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS_STR, protocols);
    } else {
        long protocols = allow_http ? (CURLPROTO_HTTP | CURLPROTO_HTTPS) : CURLPROTO_HTTPS;
        code = lib.easy_setopt(handle, CURLOPT_PROTOCOLS, protocols);
        if (code == CURLE_OK) code = lib.easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS, protocols);
    }
    return code;
}

CURLcode authctl_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return lib.easy_getinfo(handle, info, value);
}

int authctl_curl_memory_file(const void *data, size_t length) {
    int fd = memfd_create("authctl-ca-bundle", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    const char *bytes = data;
    size_t written = 0;
    while (written < length) {
        ssize_t n = write(fd, bytes + written, length - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int saved = errno;
            close(fd);
            errno = n == 0 ? EIO : saved;
            return -1;
        }
        written += (size_t)n;
    }
    // Sealed: nothing can change the CAs libcurl reads by path after this.
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}
