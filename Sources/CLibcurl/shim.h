// libcurl's header (Debian libcurl4-openssl-dev). Headers only: libcurl is not linked but loaded
// with dlopen by the CCurl shim, whose typed functions Swift calls.
#include <curl/curl.h>
