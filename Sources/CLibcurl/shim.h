// libcurl found through pkg-config (`libcurl`, Debian libcurl4-openssl-dev). Only the CCurl
// shim depends on this module; Swift code calls the shim's typed functions.
#include <curl/curl.h>
