// The libsecret-1 shim: loads libsecret with dlopen on the first keyring call; see CLibSecret.h.
//
// The GLib and libsecret declarations below are written out by hand, not taken from
// <libsecret/secret.h>: SwiftPM gets GLib's include directories only through pkg-config, and a
// pkg-config system library also links libsecret, GLib, GIO and GObject into authctl, which is
// what loading it lazily avoids. They are the stable ABI of libsecret-1.so.0 and GLib 2.x (the
// functions' types and the few structs authctl reads), and Tests/integration/test_binary.py
// compiles this file with AUTHCTL_SECRET_CHECK_HEADERS against the real headers, where every
// prototype, struct layout and error code below must agree with them or the build fails.
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "CLibSecret.h"

#ifdef AUTHCTL_SECRET_CHECK_HEADERS
#include <stddef.h>
#include <libsecret/secret.h>
#endif

#define AUTHCTL_GERROR_FIELDS GQuark domain; gint code; gchar *message;
#define AUTHCTL_GLIST_FIELDS gpointer data; GList *next; GList *prev;
#define AUTHCTL_SCHEMA_ATTRIBUTE_FIELDS const gchar *name; SecretSchemaAttributeType type;
#define AUTHCTL_SCHEMA_FIELDS                                                                   \
    const gchar *name; SecretSchemaFlags flags; SecretSchemaAttribute attributes[32];            \
    gint reserved; gpointer reserved1; gpointer reserved2; gpointer reserved3; gpointer reserved4; \
    gpointer reserved5; gpointer reserved6; gpointer reserved7;

#ifndef AUTHCTL_SECRET_CHECK_HEADERS
typedef char gchar;
typedef int gint;
typedef gint gboolean;
typedef unsigned int guint;
typedef unsigned long gsize;
typedef long gssize;
typedef void *gpointer;
typedef const void *gconstpointer;
typedef uint32_t GQuark;
typedef struct _GError GError;
struct _GError { AUTHCTL_GERROR_FIELDS };
typedef struct _GList GList;
struct _GList { AUTHCTL_GLIST_FIELDS };
typedef struct _GHashTable GHashTable;
typedef struct _GCancellable GCancellable;
typedef guint (*GHashFunc)(gconstpointer key);
typedef gboolean (*GEqualFunc)(gconstpointer a, gconstpointer b);
typedef void (*GDestroyNotify)(gpointer data);
typedef struct _SecretService SecretService;
typedef struct _SecretItem SecretItem;
typedef struct _SecretValue SecretValue;
typedef enum { SECRET_SERVICE_NONE = 0 } SecretServiceFlags;
typedef enum { SECRET_SEARCH_ALL = 1 << 1 } SecretSearchFlags;
typedef enum { SECRET_SCHEMA_NONE = 0 } SecretSchemaFlags;
typedef enum { SECRET_SCHEMA_ATTRIBUTE_STRING = 0 } SecretSchemaAttributeType;
typedef struct { AUTHCTL_SCHEMA_ATTRIBUTE_FIELDS } SecretSchemaAttribute;
typedef struct { AUTHCTL_SCHEMA_FIELDS } SecretSchema;
#define SECRET_COLLECTION_DEFAULT "default"
#else
// The hand-written layouts, compared with the headers' ones.
#define AUTHCTL_SAME_LAYOUT(real, mine, first, last)                                           \
    _Static_assert(sizeof(real) == sizeof(mine) && offsetof(real, first) == offsetof(mine, first) \
                   && offsetof(real, last) == offsetof(mine, last), #real " layout")
struct authctl_gerror { AUTHCTL_GERROR_FIELDS };
AUTHCTL_SAME_LAYOUT(GError, struct authctl_gerror, domain, message);
struct authctl_glist { AUTHCTL_GLIST_FIELDS };
AUTHCTL_SAME_LAYOUT(GList, struct authctl_glist, data, prev);
struct authctl_schema_attribute { AUTHCTL_SCHEMA_ATTRIBUTE_FIELDS };
AUTHCTL_SAME_LAYOUT(SecretSchemaAttribute, struct authctl_schema_attribute, name, type);
struct authctl_schema { AUTHCTL_SCHEMA_FIELDS };
AUTHCTL_SAME_LAYOUT(SecretSchema, struct authctl_schema, name, reserved7);
_Static_assert(SECRET_SERVICE_NONE == 0 && SECRET_SEARCH_ALL == (1 << 1) && SECRET_SCHEMA_NONE == 0
               && SECRET_SCHEMA_ATTRIBUTE_STRING == 0, "libsecret flags");
_Static_assert(__builtin_types_compatible_p(gsize, unsigned long)
               && __builtin_types_compatible_p(gssize, long)
               && __builtin_types_compatible_p(GQuark, uint32_t), "GLib integer types");
_Static_assert(AUTHCTL_G_IO_ERROR_CANCELLED == G_IO_ERROR_CANCELLED
               && AUTHCTL_G_IO_ERROR_TIMED_OUT == G_IO_ERROR_TIMED_OUT
               && AUTHCTL_G_DBUS_ERROR_SERVICE_UNKNOWN == G_DBUS_ERROR_SERVICE_UNKNOWN
               && AUTHCTL_G_DBUS_ERROR_NAME_HAS_NO_OWNER == G_DBUS_ERROR_NAME_HAS_NO_OWNER
               && AUTHCTL_G_DBUS_ERROR_SPAWN_EXEC_FAILED == G_DBUS_ERROR_SPAWN_EXEC_FAILED
               && AUTHCTL_G_DBUS_ERROR_SPAWN_CHILD_EXITED == G_DBUS_ERROR_SPAWN_CHILD_EXITED
               && AUTHCTL_G_DBUS_ERROR_SPAWN_FAILED == G_DBUS_ERROR_SPAWN_FAILED
               && AUTHCTL_G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND == G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND
               && AUTHCTL_SECRET_ERROR_PROTOCOL == SECRET_ERROR_PROTOCOL
               && AUTHCTL_SECRET_ERROR_IS_LOCKED == SECRET_ERROR_IS_LOCKED
               && AUTHCTL_SECRET_ERROR_NO_SUCH_OBJECT == SECRET_ERROR_NO_SUCH_OBJECT, "error codes");
#endif

// The functions authctl uses. Only their types are used (they are resolved with dlsym); with
// AUTHCTL_SECRET_CHECK_HEADERS a prototype that differs from the header's is a compile error.
// (g_str_equal) is parenthesised because GLib also defines it as a macro.
SecretService *secret_service_get_sync(SecretServiceFlags flags, GCancellable *cancellable, GError **error);
gboolean secret_service_store_sync(SecretService *service, const SecretSchema *schema, GHashTable *attributes,
                                   const gchar *collection, const gchar *label, SecretValue *value,
                                   GCancellable *cancellable, GError **error);
SecretValue *secret_service_lookup_sync(SecretService *service, const SecretSchema *schema,
                                        GHashTable *attributes, GCancellable *cancellable, GError **error);
GList *secret_service_search_sync(SecretService *service, const SecretSchema *schema, GHashTable *attributes,
                                  SecretSearchFlags flags, GCancellable *cancellable, GError **error);
gboolean secret_service_clear_sync(SecretService *service, const SecretSchema *schema, GHashTable *attributes,
                                   GCancellable *cancellable, GError **error);
SecretValue *secret_value_new(const gchar *secret, gssize length, const gchar *content_type);
void secret_value_unref(gpointer value);
gchar *secret_value_unref_to_password(SecretValue *value, gsize *length);
void secret_password_free(gchar *password);
gboolean secret_item_get_locked(SecretItem *self);
GHashTable *secret_item_get_attributes(SecretItem *self);
gboolean secret_item_delete_sync(SecretItem *self, GCancellable *cancellable, GError **error);
GQuark secret_error_get_quark(void);
GQuark g_io_error_quark(void);
const gchar *g_quark_to_string(GQuark quark);
gchar *g_dbus_error_get_remote_error(const GError *error);
gboolean g_dbus_error_strip_remote_error(GError *error);
GError *g_error_new_literal(GQuark domain, gint code, const gchar *message);
void g_error_free(GError *error);
void g_free(gpointer mem);
gchar *g_strdup(const gchar *str);
GHashTable *g_hash_table_new_full(GHashFunc hash_func, GEqualFunc key_equal_func,
                                  GDestroyNotify key_destroy_func, GDestroyNotify value_destroy_func);
gboolean g_hash_table_insert(GHashTable *hash_table, gpointer key, gpointer value);
gpointer g_hash_table_lookup(GHashTable *hash_table, gconstpointer key);
void g_hash_table_unref(GHashTable *hash_table);
guint g_str_hash(gconstpointer v);
gboolean (g_str_equal)(gconstpointer v1, gconstpointer v2);
void g_list_free_full(GList *list, GDestroyNotify free_func);
void g_object_unref(gpointer object);
GCancellable *g_cancellable_new(void);
void g_cancellable_cancel(GCancellable *cancellable);

#define AUTHCTL_SECRET_FUNCTIONS(X)                                                              \
    X(secret_service_get_sync) X(secret_service_store_sync) X(secret_service_lookup_sync)        \
    X(secret_service_search_sync) X(secret_service_clear_sync) X(secret_value_new)               \
    X(secret_value_unref) X(secret_value_unref_to_password) X(secret_password_free)              \
    X(secret_item_get_locked) X(secret_item_get_attributes) X(secret_item_delete_sync)           \
    X(secret_error_get_quark) X(g_io_error_quark) X(g_quark_to_string)                           \
    X(g_dbus_error_get_remote_error) X(g_dbus_error_strip_remote_error) X(g_error_new_literal)   \
    X(g_error_free) X(g_free) X(g_strdup) X(g_hash_table_new_full) X(g_hash_table_insert)        \
    X(g_hash_table_lookup) X(g_hash_table_unref) X(g_str_hash) X(g_str_equal)                    \
    X(g_list_free_full) X(g_object_unref) X(g_cancellable_new) X(g_cancellable_cancel)

// The functions, resolved from the library opened by load().
#define AUTHCTL_SECRET_FIELD(name) __typeof__(name) *name;
static struct { AUTHCTL_SECRET_FUNCTIONS(AUTHCTL_SECRET_FIELD) } lib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_error[512];

static void load(void) {
    // RTLD_LOCAL: GLib's symbols stay out of the global namespace; dlsym on the handle also
    // searches libsecret's dependencies (GLib, GObject, GIO). RTLD_LAZY as in CCurl.c.
    void *handle = dlopen(AUTHCTL_LIBSECRET, RTLD_LAZY | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load %s (%s); install libsecret (Debian: libsecret-1-0)",
                 AUTHCTL_LIBSECRET, reason ? reason : "unknown error");
        return;
    }
#define AUTHCTL_SECRET_RESOLVE(name)                                                              \
    *(void **)(&lib.name) = dlsym(handle, #name);                                                 \
    if (lib.name == NULL) {                                                                       \
        snprintf(load_error, sizeof load_error, "%s has no %s", AUTHCTL_LIBSECRET, #name);       \
        return;                                                                                   \
    }
    AUTHCTL_SECRET_FUNCTIONS(AUTHCTL_SECRET_RESOLVE)
    loaded = 1;
}

static char *copy(const char *text) {
    return text == NULL ? NULL : strdup(text);
}

void authctl_secret_error_clear(AuthctlSecretError *out) {
    if (out == NULL) return;
    free(out->domain);
    free(out->remote_name);
    free(out->message);
    memset(out, 0, sizeof *out);
}

int authctl_secret_load(AuthctlSecretError *out_error) {
    pthread_once(&load_once, load);
    if (!loaded && out_error != NULL) {
        authctl_secret_error_clear(out_error);
        out_error->domain = copy("");
        out_error->message = copy(load_error);
        out_error->stage = AUTHCTL_SECRET_STAGE_LOAD;
    }
    return loaded;
}

/* Moves *error into out (if out is non-NULL) and frees the GError. */
static void take_error(GError **error, AuthctlSecretStage stage, AuthctlSecretError *out) {
    if (error == NULL || *error == NULL) return;
    if (out != NULL) {
        authctl_secret_error_clear(out);
        out->domain = copy(lib.g_quark_to_string((*error)->domain));
        out->code = (*error)->code;
        gchar *remote = lib.g_dbus_error_get_remote_error(*error);
        out->remote_name = copy(remote);
        lib.g_free(remote);
        lib.g_dbus_error_strip_remote_error(*error);
        out->message = copy((*error)->message);
        out->stage = (int)stage;
    }
    lib.g_error_free(*error);
    *error = NULL;
}

/* Sets *error (when it is not set) to a new error of `domain` and `code`. */
static void set_error(GError **error, GQuark domain, gint code, const char *message) {
    if (*error == NULL) *error = lib.g_error_new_literal(domain, code, message);
}

/* The schema of every authctl item. `kind` + `profile` identify an item; `user_pool_id`
 * and `client_id` describe it. libsecret adds `xdg:schema = io.github.authctl.Secret`. */
static const SecretSchema schema = {
    "io.github.authctl.Secret",
    SECRET_SCHEMA_NONE,
    {
        { "kind", SECRET_SCHEMA_ATTRIBUTE_STRING },
        { "profile", SECRET_SCHEMA_ATTRIBUTE_STRING },
        { "user_pool_id", SECRET_SCHEMA_ATTRIBUTE_STRING },
        { "client_id", SECRET_SCHEMA_ATTRIBUTE_STRING },
        { NULL, 0 },
    },
};

/* Loads libsecret, then returns the shared SecretService proxy (a new reference, release with
 * g_object_unref), or NULL with out_error set: stage LOAD when libsecret cannot be loaded,
 * CONNECT when the session bus cannot be reached. */
static SecretService *service_get(GCancellable *cancellable, AuthctlSecretError *out_error) {
    if (!authctl_secret_load(out_error)) return NULL;
    GError *error = NULL;
    SecretService *service = lib.secret_service_get_sync(SECRET_SERVICE_NONE, cancellable, &error);
    if (service == NULL) {
        set_error(&error, lib.g_io_error_quark(), 0 /* G_IO_ERROR_FAILED */,
                  "could not connect to the Secret Service");
        take_error(&error, AUTHCTL_SECRET_STAGE_CONNECT, out_error);
    }
    return service;
}

AuthctlSecretCancellable *authctl_secret_cancellable_new(void) {
    if (!authctl_secret_load(NULL)) return NULL;
    return (AuthctlSecretCancellable *)lib.g_cancellable_new();
}

void authctl_secret_cancellable_cancel(AuthctlSecretCancellable *cancellable) {
    if (cancellable != NULL) lib.g_cancellable_cancel((GCancellable *)cancellable);
}

void authctl_secret_cancellable_free(AuthctlSecretCancellable *cancellable) {
    if (cancellable != NULL) lib.g_object_unref(cancellable);
}

/* Attributes of the authctl schema; NULL values are left out (for kind+profile matches). */
static GHashTable *attributes_new(const char *kind, const char *profile, const char *user_pool_id,
                                  const char *client_id) {
    GHashTable *attributes = lib.g_hash_table_new_full(lib.g_str_hash, lib.g_str_equal, lib.g_free, lib.g_free);
    if (kind != NULL) lib.g_hash_table_insert(attributes, lib.g_strdup("kind"), lib.g_strdup(kind));
    if (profile != NULL) lib.g_hash_table_insert(attributes, lib.g_strdup("profile"), lib.g_strdup(profile));
    if (user_pool_id != NULL)
        lib.g_hash_table_insert(attributes, lib.g_strdup("user_pool_id"), lib.g_strdup(user_pool_id));
    if (client_id != NULL)
        lib.g_hash_table_insert(attributes, lib.g_strdup("client_id"), lib.g_strdup(client_id));
    return attributes;
}

int authctl_secret_store(const char *kind, const char *profile, const char *user_pool_id,
                         const char *client_id, const char *label, const char *secret,
                         ptrdiff_t length, AuthctlSecretCancellable *cancellable_,
                         AuthctlSecretError *out_error) {
    GCancellable *cancellable = (GCancellable *)cancellable_;
    SecretService *service = service_get(cancellable, out_error);
    if (service == NULL) return 0;
    GError *error = NULL;
    GHashTable *attributes = attributes_new(kind, profile, user_pool_id, client_id);
    SecretValue *value = lib.secret_value_new(secret, length, "text/plain");
    gboolean ok = lib.secret_service_store_sync(service, &schema, attributes, SECRET_COLLECTION_DEFAULT,
                                                label, value, cancellable, &error);
    lib.secret_value_unref(value);
    lib.g_hash_table_unref(attributes);
    lib.g_object_unref(service);
    if (!ok)
        set_error(&error, lib.secret_error_get_quark(), AUTHCTL_SECRET_ERROR_PROTOCOL,
                  "the Secret Service did not store the item");
    take_error(&error, AUTHCTL_SECRET_STAGE_CALL, out_error);
    return ok ? 1 : 0;
}

/* Sets *error to SECRET_ERROR_IS_LOCKED when an item with kind+profile exists but is
 * locked (the Secret Service could not unlock it: no prompter, or the prompt was
 * dismissed). libsecret itself reports that case as "nothing found". */
static void check_locked(SecretService *service, const char *kind, const char *profile,
                         GCancellable *cancellable, GError **error) {
    GHashTable *attributes = attributes_new(kind, profile, NULL, NULL);
    GList *items = lib.secret_service_search_sync(service, &schema, attributes, SECRET_SEARCH_ALL,
                                                  cancellable, error);
    lib.g_hash_table_unref(attributes);
    gboolean locked = 0;
    for (GList *l = items; l != NULL; l = l->next)
        if (lib.secret_item_get_locked((SecretItem *)l->data)) locked = 1;
    lib.g_list_free_full(items, lib.g_object_unref);
    if (locked)
        set_error(error, lib.secret_error_get_quark(), AUTHCTL_SECRET_ERROR_IS_LOCKED,
                  "the item is in a locked collection");
}

char *authctl_secret_lookup(const char *kind, const char *profile, const char *client_id,
                            size_t *out_length, AuthctlSecretCancellable *cancellable_,
                            AuthctlSecretError *out_error) {
    if (out_length != NULL) *out_length = 0;
    GCancellable *cancellable = (GCancellable *)cancellable_;
    SecretService *service = service_get(cancellable, out_error);
    if (service == NULL) return NULL;
    GError *error = NULL;
    GHashTable *attributes = attributes_new(kind, profile, NULL, client_id);
    SecretValue *value = lib.secret_service_lookup_sync(service, &schema, attributes, cancellable, &error);
    lib.g_hash_table_unref(attributes);
    if (value == NULL && error == NULL) check_locked(service, kind, profile, cancellable, &error);
    lib.g_object_unref(service);
    if (value == NULL) {
        take_error(&error, AUTHCTL_SECRET_STAGE_CALL, out_error);
        return NULL;
    }
    gsize length = 0;
    /* Takes the bytes out of the value (copying them to non-pageable memory if shared). */
    char *password = lib.secret_value_unref_to_password(value, &length);
    if (out_length != NULL) *out_length = length;
    return password;
}

void authctl_secret_password_free(char *password) {
    if (password != NULL) lib.secret_password_free(password); /* wipes, then frees */
}

int authctl_secret_clear(const char *kind, const char *profile, const char *user_pool_id,
                         const char *client_id, AuthctlSecretCancellable *cancellable_,
                         AuthctlSecretError *out_error) {
    GCancellable *cancellable = (GCancellable *)cancellable_;
    SecretService *service = service_get(cancellable, out_error);
    if (service == NULL) return -1;
    GError *error = NULL;
    GHashTable *attributes = attributes_new(kind, profile, user_pool_id, client_id);
    gboolean removed = lib.secret_service_clear_sync(service, &schema, attributes, cancellable, &error);
    lib.g_hash_table_unref(attributes);
    if (!removed && error == NULL) check_locked(service, kind, profile, cancellable, &error);
    lib.g_object_unref(service);
    if (error != NULL) {
        take_error(&error, AUTHCTL_SECRET_STAGE_CALL, out_error);
        return -1;
    }
    return removed ? 1 : 0;
}

static int same(const char *a, const char *b) {
    return strcmp(a == NULL ? "" : a, b == NULL ? "" : b) == 0;
}

/* Every authctl item matching kind (when non-NULL) and profile, locked ones too, into *out_items
 * (release with g_list_free_full(items, g_object_unref)). Returns 0, or -1 with out_error set. */
static int search_all(const char *kind, const char *profile, GCancellable *cancellable, GList **out_items,
                      AuthctlSecretError *out_error) {
    *out_items = NULL;
    SecretService *service = service_get(cancellable, out_error);
    if (service == NULL) return -1;
    GError *error = NULL;
    GHashTable *attributes = attributes_new(kind, profile, NULL, NULL);
    GList *items = lib.secret_service_search_sync(service, &schema, attributes, SECRET_SEARCH_ALL,
                                                  cancellable, &error);
    lib.g_hash_table_unref(attributes);
    lib.g_object_unref(service);
    if (error != NULL) {
        lib.g_list_free_full(items, lib.g_object_unref);
        take_error(&error, AUTHCTL_SECRET_STAGE_CALL, out_error);
        return -1;
    }
    *out_items = items;
    return 0;
}

int authctl_secret_clear_others(const char *kind, const char *profile, const char *keep_user_pool_id,
                                const char *keep_client_id, AuthctlSecretCancellable *cancellable_,
                                AuthctlSecretError *out_error) {
    GCancellable *cancellable = (GCancellable *)cancellable_;
    GList *items = NULL;
    if (search_all(kind, profile, cancellable, &items, out_error) < 0) return -1;
    GError *error = NULL;
    int deleted = 0;
    for (GList *l = items; l != NULL; l = l->next) {
        SecretItem *item = (SecretItem *)l->data;
        if (lib.secret_item_get_locked(item)) continue;
        GHashTable *found = lib.secret_item_get_attributes(item);
        int keep = found != NULL &&
            same(lib.g_hash_table_lookup(found, "user_pool_id"), keep_user_pool_id) &&
            same(lib.g_hash_table_lookup(found, "client_id"), keep_client_id);
        if (found != NULL) lib.g_hash_table_unref(found);
        if (keep) continue;
        if (!lib.secret_item_delete_sync(item, cancellable, &error)) {
            set_error(&error, lib.secret_error_get_quark(), AUTHCTL_SECRET_ERROR_PROTOCOL,
                      "the Secret Service did not delete a stale item");
            break;
        }
        deleted++;
    }
    lib.g_list_free_full(items, lib.g_object_unref);
    if (error != NULL) {
        take_error(&error, AUTHCTL_SECRET_STAGE_CALL, out_error);
        return -1;
    }
    return deleted;
}

int authctl_secret_list(const char *profile, AuthctlSecretItemKey **out_items,
                        AuthctlSecretCancellable *cancellable_, AuthctlSecretError *out_error) {
    *out_items = NULL;
    GList *items = NULL;
    if (search_all(NULL, profile, (GCancellable *)cancellable_, &items, out_error) < 0) return -1;
    int count = 0;
    for (GList *l = items; l != NULL; l = l->next) count++;
    AuthctlSecretItemKey *keys = calloc(count > 0 ? (size_t)count : 1, sizeof *keys);
    int found = 0;
    for (GList *l = items; keys != NULL && l != NULL; l = l->next) {
        GHashTable *item = lib.secret_item_get_attributes((SecretItem *)l->data);
        if (item == NULL) continue;
        keys[found].kind = copy(lib.g_hash_table_lookup(item, "kind"));
        keys[found].user_pool_id = copy(lib.g_hash_table_lookup(item, "user_pool_id"));
        keys[found].client_id = copy(lib.g_hash_table_lookup(item, "client_id"));
        lib.g_hash_table_unref(item);
        found++;
    }
    lib.g_list_free_full(items, lib.g_object_unref);
    *out_items = keys;
    return found;
}

void authctl_secret_item_keys_free(AuthctlSecretItemKey *items, int count) {
    if (items == NULL) return;
    for (int i = 0; i < count; i++) {
        free(items[i].kind);
        free(items[i].user_pool_id);
        free(items[i].client_id);
    }
    free(items);
}
