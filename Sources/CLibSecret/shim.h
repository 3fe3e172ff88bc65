/*
 * CLibSecret: a thin C shim over libsecret-1 for the SecureStore Swift target.
 *
 * Why this file exists:
 *  - libsecret's convenient calls are variadic and NULL-terminated
 *    (secret_password_store_sync(schema, ..., "key", "value", NULL)); Swift cannot
 *    call C variadic functions, so every call goes through a GHashTable of attributes.
 *  - SecretSchema holds a fixed array of 32 attributes, which Swift imports as a
 *    32-element tuple; the schema is therefore defined here, in C.
 *  - GError domains are macros over *_get_quark() functions, which Swift cannot
 *    import; errors are copied into AuthctlSecretError (domain name, code, remote
 *    D-Bus error name, message) and classified on the Swift side.
 *
 * We call the SecretService methods (secret_service_store_sync and friends) rather
 * than secret_password_*v_sync: since libsecret 0.19 the password API goes through
 * SecretBackend, which switches to an on-disk file backend when SECRET_BACKEND=file
 * or inside Flatpak/Snap. authctl must never write tokens to a file, so it talks to
 * the D-Bus Secret Service only.
 *
 * Every function takes a GCancellable so the Swift side can abandon a call that the
 * bus never answers. Every function frees what it allocates; strings handed back to
 * Swift are released with authctl_secret_password_free / authctl_secret_error_clear.
 */
#ifndef AUTHCTL_CLIBSECRET_SHIM_H
#define AUTHCTL_CLIBSECRET_SHIM_H

#include <libsecret/secret.h>
#include <string.h>

/* The schema of every authctl item. `kind` + `profile` identify an item; `user_pool_id`
 * and `client_id` describe it. libsecret adds `xdg:schema = io.github.authctl.Secret`. */
static inline const SecretSchema *authctl_secret_schema(void) {
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
    return &schema;
}

/* Where a failure happened: reaching the session bus, or talking to the Secret Service. */
typedef enum {
    AUTHCTL_SECRET_STAGE_CONNECT = 0,
    AUTHCTL_SECRET_STAGE_CALL = 1,
} AuthctlSecretStage;

/* A GError copied out for Swift. domain == NULL means "no error". */
typedef struct {
    char *domain;       /* g_quark_to_string(error->domain), e.g. "g-dbus-error-quark" */
    int code;
    char *remote_name;  /* D-Bus error name when the error came over the bus, else NULL */
    char *message;      /* without the "GDBus.Error:name:" prefix */
    int stage;          /* AuthctlSecretStage */
} AuthctlSecretError;

static inline void authctl_secret_error_clear(AuthctlSecretError *out) {
    if (out == NULL) return;
    g_free(out->domain);
    g_free(out->remote_name);
    g_free(out->message);
    out->domain = NULL;
    out->remote_name = NULL;
    out->message = NULL;
    out->code = 0;
    out->stage = 0;
}

/* Moves *error into out (if out is non-NULL) and frees the GError. */
static inline void authctl_secret_take_error(GError **error, AuthctlSecretStage stage,
                                             AuthctlSecretError *out) {
    if (error == NULL || *error == NULL) return;
    if (out != NULL) {
        authctl_secret_error_clear(out);
        out->domain = g_strdup(g_quark_to_string((*error)->domain));
        out->code = (*error)->code;
        out->remote_name = g_dbus_error_get_remote_error(*error);
        g_dbus_error_strip_remote_error(*error);
        out->message = g_strdup((*error)->message);
        out->stage = (int)stage;
    }
    g_clear_error(error);
}

/* The shared SecretService proxy (a new reference, release with g_object_unref), or NULL
 * with out_error set (stage CONNECT) when the session bus cannot be reached. */
static inline SecretService *authctl_secret_service(GCancellable *cancellable,
                                                    AuthctlSecretError *out_error) {
    GError *error = NULL;
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_NONE, cancellable, &error);
    if (service == NULL) {
        if (error == NULL)
            g_set_error_literal(&error, G_IO_ERROR, G_IO_ERROR_FAILED,
                                "could not connect to the Secret Service");
        authctl_secret_take_error(&error, AUTHCTL_SECRET_STAGE_CONNECT, out_error);
    }
    return service;
}

static inline GCancellable *authctl_secret_cancellable_new(void) {
    return g_cancellable_new();
}

static inline void authctl_secret_cancellable_cancel(GCancellable *cancellable) {
    if (cancellable != NULL) g_cancellable_cancel(cancellable);
}

static inline void authctl_secret_cancellable_free(GCancellable *cancellable) {
    if (cancellable != NULL) g_object_unref(cancellable);
}

/* Attributes of the authctl schema; NULL values are left out (for kind+profile matches). */
static inline GHashTable *authctl_secret_attributes(const char *kind, const char *profile,
                                                    const char *user_pool_id,
                                                    const char *client_id) {
    GHashTable *attributes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    if (kind != NULL) g_hash_table_insert(attributes, g_strdup("kind"), g_strdup(kind));
    if (profile != NULL) g_hash_table_insert(attributes, g_strdup("profile"), g_strdup(profile));
    if (user_pool_id != NULL)
        g_hash_table_insert(attributes, g_strdup("user_pool_id"), g_strdup(user_pool_id));
    if (client_id != NULL)
        g_hash_table_insert(attributes, g_strdup("client_id"), g_strdup(client_id));
    return attributes;
}

/* Stores `secret` (text/plain, `length` bytes) in the default collection with all four
 * attributes; an item with identical attributes is replaced. Returns TRUE on success. */
static inline gboolean authctl_secret_store(const char *kind, const char *profile,
                                            const char *user_pool_id, const char *client_id,
                                            const char *label, const char *secret,
                                            gssize length, GCancellable *cancellable,
                                            AuthctlSecretError *out_error) {
    SecretService *service = authctl_secret_service(cancellable, out_error);
    if (service == NULL) return FALSE;
    GError *error = NULL;
    GHashTable *attributes = authctl_secret_attributes(kind, profile, user_pool_id, client_id);
    SecretValue *value = secret_value_new(secret, length, "text/plain");
    gboolean ok = secret_service_store_sync(service, authctl_secret_schema(), attributes,
                                            SECRET_COLLECTION_DEFAULT, label, value,
                                            cancellable, &error);
    secret_value_unref(value);
    g_hash_table_unref(attributes);
    g_object_unref(service);
    if (!ok && error == NULL)
        g_set_error_literal(&error, SECRET_ERROR, SECRET_ERROR_PROTOCOL,
                            "the Secret Service did not store the item");
    authctl_secret_take_error(&error, AUTHCTL_SECRET_STAGE_CALL, out_error);
    return ok;
}

/* Sets *error to SECRET_ERROR_IS_LOCKED when an item with kind+profile exists but is
 * locked (the Secret Service could not unlock it: no prompter, or the prompt was
 * dismissed). libsecret itself reports that case as "nothing found". */
static inline void authctl_secret_check_locked(SecretService *service, const char *kind,
                                               const char *profile, GCancellable *cancellable,
                                               GError **error) {
    GHashTable *attributes = authctl_secret_attributes(kind, profile, NULL, NULL);
    GList *items = secret_service_search_sync(service, authctl_secret_schema(), attributes,
                                              SECRET_SEARCH_ALL, cancellable, error);
    g_hash_table_unref(attributes);
    gboolean locked = FALSE;
    for (GList *l = items; l != NULL; l = l->next)
        if (secret_item_get_locked(SECRET_ITEM(l->data))) locked = TRUE;
    g_list_free_full(items, g_object_unref);
    if (locked && *error == NULL)
        g_set_error_literal(error, SECRET_ERROR, SECRET_ERROR_IS_LOCKED,
                            "the item is in a locked collection");
}

/* Looks up the secret for kind+profile (and client_id when non-NULL). Returns NULL when
 * there is none (out_error untouched) or on error (out_error set). The result is in
 * non-pageable memory: release it with authctl_secret_password_free. */
static inline char *authctl_secret_lookup(const char *kind, const char *profile,
                                          const char *client_id,
                                          gsize *out_length, GCancellable *cancellable,
                                          AuthctlSecretError *out_error) {
    if (out_length != NULL) *out_length = 0;
    SecretService *service = authctl_secret_service(cancellable, out_error);
    if (service == NULL) return NULL;
    GError *error = NULL;
    GHashTable *attributes = authctl_secret_attributes(kind, profile, NULL, client_id);
    SecretValue *value = secret_service_lookup_sync(service, authctl_secret_schema(), attributes,
                                                    cancellable, &error);
    g_hash_table_unref(attributes);
    if (value == NULL && error == NULL)
        authctl_secret_check_locked(service, kind, profile, cancellable, &error);
    g_object_unref(service);
    if (value == NULL) {
        authctl_secret_take_error(&error, AUTHCTL_SECRET_STAGE_CALL, out_error);
        return NULL;
    }
    gsize length = 0;
    /* Takes the bytes out of the value (copying them to non-pageable memory if shared). */
    char *password = secret_value_unref_to_password(value, &length);
    if (out_length != NULL) *out_length = length;
    return password;
}

static inline void authctl_secret_password_free(char *password) {
    secret_password_free(password); /* wipes, then frees */
}

/* Removes every item matching kind+profile (and the pool/client when non-NULL).
 * Returns 1 when something was removed, 0 when nothing matched, -1 on error (a matching
 * item that stays locked is an error, SECRET_ERROR_IS_LOCKED). */
static inline int authctl_secret_clear(const char *kind, const char *profile,
                                       const char *user_pool_id, const char *client_id,
                                       GCancellable *cancellable,
                                       AuthctlSecretError *out_error) {
    SecretService *service = authctl_secret_service(cancellable, out_error);
    if (service == NULL) return -1;
    GError *error = NULL;
    GHashTable *attributes = authctl_secret_attributes(kind, profile, user_pool_id, client_id);
    gboolean removed = secret_service_clear_sync(service, authctl_secret_schema(), attributes,
                                                 cancellable, &error);
    g_hash_table_unref(attributes);
    if (!removed && error == NULL)
        authctl_secret_check_locked(service, kind, profile, cancellable, &error);
    g_object_unref(service);
    if (error != NULL) {
        authctl_secret_take_error(&error, AUTHCTL_SECRET_STAGE_CALL, out_error);
        return -1;
    }
    return removed ? 1 : 0;
}

static inline gboolean authctl_secret_same(const char *a, const char *b) {
    return g_strcmp0(a == NULL ? "" : a, b == NULL ? "" : b) == 0;
}

/* Deletes every item with kind+profile whose user_pool_id or client_id differ from
 * keep_user_pool_id / keep_client_id (the item just stored is kept). Items that are
 * locked (in another, locked collection) are left alone. Returns the number of items
 * deleted, or -1 on error. */
static inline int authctl_secret_clear_others(const char *kind, const char *profile,
                                              const char *keep_user_pool_id,
                                              const char *keep_client_id,
                                              GCancellable *cancellable,
                                              AuthctlSecretError *out_error) {
    SecretService *service = authctl_secret_service(cancellable, out_error);
    if (service == NULL) return -1;
    GError *error = NULL;
    GHashTable *attributes = authctl_secret_attributes(kind, profile, NULL, NULL);
    GList *items = secret_service_search_sync(service, authctl_secret_schema(), attributes,
                                              SECRET_SEARCH_ALL, cancellable, &error);
    g_hash_table_unref(attributes);
    g_object_unref(service);
    if (error != NULL) {
        g_list_free_full(items, g_object_unref);
        authctl_secret_take_error(&error, AUTHCTL_SECRET_STAGE_CALL, out_error);
        return -1;
    }
    int deleted = 0;
    for (GList *l = items; l != NULL; l = l->next) {
        SecretItem *item = SECRET_ITEM(l->data);
        if (secret_item_get_locked(item)) continue;
        GHashTable *found = secret_item_get_attributes(item);
        gboolean same = found != NULL &&
            authctl_secret_same(g_hash_table_lookup(found, "user_pool_id"), keep_user_pool_id) &&
            authctl_secret_same(g_hash_table_lookup(found, "client_id"), keep_client_id);
        if (found != NULL) g_hash_table_unref(found);
        if (same) continue;
        if (!secret_item_delete_sync(item, cancellable, &error)) {
            if (error == NULL)
                g_set_error_literal(&error, SECRET_ERROR, SECRET_ERROR_PROTOCOL,
                                    "the Secret Service did not delete a stale item");
            break;
        }
        deleted++;
    }
    g_list_free_full(items, g_object_unref);
    if (error != NULL) {
        authctl_secret_take_error(&error, AUTHCTL_SECRET_STAGE_CALL, out_error);
        return -1;
    }
    return deleted;
}

#endif /* AUTHCTL_CLIBSECRET_SHIM_H */
