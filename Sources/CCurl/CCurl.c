// Non-variadic wrappers over libcurl's variadic curl_easy_setopt/curl_easy_getinfo; see CCurl.h.
#include <curl/curl.h>
#include "CCurl.h"
#include <stdlib.h>
#include <string.h>

CURLcode authctl_curl_global_init(void) {
    // With SSLKEYLOGFILE set, libcurl's TLS back end opens that file at initialisation and writes
    // every session's keys to it: anyone who can read it decrypts the traffic (tokens, passwords).
    // authctl never does that; the variable is put back afterwards for the commands `exec` runs.
    const char *keylog = getenv("SSLKEYLOGFILE");
    char *saved = keylog ? strdup(keylog) : NULL;
    if (keylog) unsetenv("SSLKEYLOGFILE");
    CURLcode result = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (saved) {
        setenv("SSLKEYLOGFILE", saved, 1);
        free(saved);
    }
    return result;
}

const char *authctl_curl_default_cainfo(void) {
    const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return info ? info->cainfo : NULL;
}

size_t authctl_curl_error_size(void) {
    return CURL_ERROR_SIZE;
}

CURLcode authctl_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode authctl_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode authctl_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode authctl_curl_easy_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode authctl_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode authctl_curl_easy_setopt_blob(CURL *handle, CURLoption option, const void *data,
                                       size_t length, unsigned int flags) {
    struct curl_blob blob;
    blob.data = (void *)data;
    blob.len = length;
    blob.flags = flags;
    return curl_easy_setopt(handle, option, &blob);
}

CURLcode authctl_curl_easy_setopt_data_callback(CURL *handle, CURLoption option,
                                                authctl_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

CURLcode authctl_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
