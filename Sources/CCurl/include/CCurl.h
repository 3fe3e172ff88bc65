// CCurl: the libcurl shim for authctl.
//
// Why this exists: curl_easy_setopt() and curl_easy_getinfo() are C variadic functions, and Swift
// cannot call variadic C functions. This header exposes one typed, non-variadic wrapper per
// argument kind libcurl expects (long, curl_off_t, char *, void *, curl_slist *, struct curl_blob,
// callback function pointers), in the manner of swift-corelibs-foundation's libcurl
// interface header and swift-nio's CNIOLinux. Passing the wrong kind for an option is
// undefined behaviour in libcurl, so each wrapper documents which CURLOPTTYPE_* it is for.
//
// libcurl is not linked: CCurl.c opens it with dlopen (AUTHCTL_LIBCURL) in
// authctl_curl_global_init, so a command that makes no request never loads it or its 26
// dependencies. Every libcurl function Swift needs therefore has a wrapper here, including the
// non-variadic ones (curl_easy_init, curl_easy_perform, curl_easy_reset, curl_easy_cleanup,
// curl_easy_strerror, curl_slist_append, curl_slist_free_all): call no curl_* function directly.
// This module re-exports <curl/curl.h> for its types and the CURLOPT_* / CURLINFO_* / CURLE_*
// constants, which import into Swift as they are. Only CognitoClient's transport imports it.
//
// Names are prefixed `authctl_curl_` so they cannot collide with libcurl's own symbols.

#ifndef AUTHCTL_CCURL_H
#define AUTHCTL_CCURL_H

#include <stddef.h>
#include <curl/curl.h>

#pragma clang assume_nonnull begin

#ifdef __cplusplus
extern "C" {
#endif

/// The signature of CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION callbacks. A Swift
/// `@convention(c)` closure that captures nothing can be passed where this is expected. Return
/// `size * nmemb` to accept the data; any other value aborts the transfer (CURLE_WRITE_ERROR).
typedef size_t (*authctl_curl_data_callback)(char *_Nullable data, size_t size, size_t nmemb,
                                             void *_Nullable userdata);

/// The libcurl that is loaded: its Debian soname (libcurl4-openssl-dev's ABI).
#define AUTHCTL_LIBCURL "libcurl.so.4"

/// Loads libcurl (dlopen) and calls curl_global_init(CURL_GLOBAL_DEFAULT), once per process
/// however often it is called. Call it before any other function here; on failure no other may be
/// called, and authctl_curl_load_error() says why. SSLKEYLOGFILE is hidden from libcurl while it
/// initialises (no TLS key log, ever).
CURLcode authctl_curl_global_init(void);

/// Why authctl_curl_global_init failed (the library or a function missing, or libcurl's own
/// error); "" when it did not.
const char *authctl_curl_load_error(void);

/// The CA bundle path libcurl was built with (`curl_version_info()->cainfo`), or NULL.
const char *_Nullable authctl_curl_default_cainfo(void);

/// The size CURLOPT_ERRORBUFFER's buffer must have (CURL_ERROR_SIZE).
size_t authctl_curl_error_size(void);

CURL *_Nullable authctl_curl_easy_init(void);
void authctl_curl_easy_cleanup(CURL *handle);
void authctl_curl_easy_reset(CURL *handle);
CURLcode authctl_curl_easy_perform(CURL *handle);
/// libcurl's text for `code`, or NULL before libcurl is loaded.
const char *_Nullable authctl_curl_easy_strerror(CURLcode code);
/// NULL when out of memory (`list` is then unchanged).
struct curl_slist *_Nullable authctl_curl_slist_append(struct curl_slist *_Nullable list, const char *line);
void authctl_curl_slist_free_all(struct curl_slist *_Nullable list);

/// For CURLOPTTYPE_LONG / CURLOPTTYPE_VALUES options.
CURLcode authctl_curl_easy_setopt_long(CURL *handle, CURLoption option, long value);

/// For CURLOPTTYPE_OFF_T options (the *_LARGE ones).
CURLcode authctl_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);

/// For CURLOPTTYPE_STRINGPOINT options. libcurl copies the string, except for
/// CURLOPT_POSTFIELDS (use CURLOPT_COPYPOSTFIELDS instead), which it borrows.
CURLcode authctl_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *_Nullable value);

/// For CURLOPTTYPE_OBJECTPOINT / CURLOPTTYPE_CBPOINT options (CURLOPT_WRITEDATA,
/// CURLOPT_HEADERDATA, CURLOPT_ERRORBUFFER, CURLOPT_COPYPOSTFIELDS...). libcurl borrows the
/// pointer (except for CURLOPT_COPYPOSTFIELDS, which it copies), so it must stay valid for as long
/// as the handle may use it.
CURLcode authctl_curl_easy_setopt_ptr(CURL *handle, CURLoption option, void *_Nullable value);

/// For CURLOPTTYPE_SLISTPOINT options (CURLOPT_HTTPHEADER...). libcurl borrows the list: free it
/// only after the transfer and after the option has been reset or replaced.
CURLcode authctl_curl_easy_setopt_slist(CURL *handle, CURLoption option,
                                        struct curl_slist *_Nullable value);

/// For CURLOPTTYPE_BLOB options (CURLOPT_CAINFO_BLOB...). Builds the `struct curl_blob` here;
/// with `flags` = CURL_BLOB_COPY libcurl copies the bytes before returning.
CURLcode authctl_curl_easy_setopt_blob(CURL *handle, CURLoption option, const void *_Nullable data,
                                       size_t length, unsigned int flags);

/// A sealed, close-on-exec memory file (memfd) holding `length` bytes of `data`, for libcurl
/// before 7.77, which has no CURLOPT_CAINFO_BLOB and takes CAs only by path: the caller names it
/// as /proc/self/fd/N, so the CAs are still never written to disk. -1 with errno on failure.
int authctl_curl_memory_file(const void *data, size_t length);

/// For CURLOPTTYPE_FUNCTIONPOINT data callbacks (CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION).
CURLcode authctl_curl_easy_setopt_data_callback(CURL *handle, CURLoption option,
                                                authctl_curl_data_callback _Nullable callback);

/// CURLOPT_PROTOCOLS_STR and CURLOPT_REDIR_PROTOCOLS_STR: "https", or "http,https" when
/// `allow_http` is 1. On a libcurl older than 7.85 (curl_version_info's version_num; Debian 11 has
/// 7.74, RHEL 9 7.76), which refuses the _STR options, the same through the CURLPROTO_* bit masks
/// of CURLOPT_PROTOCOLS and CURLOPT_REDIR_PROTOCOLS.
CURLcode authctl_curl_easy_setopt_protocols(CURL *handle, int allow_http);

/// For CURLINFO_LONG infos (CURLINFO_RESPONSE_CODE...).
CURLcode authctl_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);

#ifdef __cplusplus
}
#endif

#pragma clang assume_nonnull end

#endif /* AUTHCTL_CCURL_H */
