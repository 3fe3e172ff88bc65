import CLibSecret

/// A GError reported by libsecret (copied out of the C shim), before it is classified.
struct LibsecretFailure: Error, Sendable, Equatable {
    enum Stage: Sendable {
        case connect, call, load

        init(_ stage: Int32) {
            switch stage {
            case Int32(AUTHCTL_SECRET_STAGE_LOAD.rawValue): self = .load
            case Int32(AUTHCTL_SECRET_STAGE_CONNECT.rawValue): self = .connect
            default: self = .call
            }
        }
    }

    /// `g_quark_to_string(error->domain)`, e.g. `g-dbus-error-quark`, `secret-error`.
    var domain: String
    var code: Int
    /// The D-Bus error name when the error came over the bus.
    var remoteName: String?
    /// libsecret's message, without the `GDBus.Error:<name>:` prefix.
    var message: String
    /// `.load`: libsecret could not be loaded; `.connect`: reaching the session bus failed;
    /// `.call`: the Secret Service call failed.
    var stage: Stage

    static let ioDomain = "g-io-error-quark"
    static let dbusDomain = "g-dbus-error-quark"
    static let secretDomain = "secret-error"

    /// Classifies the failure. libsecret's message is kept for `.failed` and as detail.
    func storeError(timeout: Double) -> SecureStoreError {
        if stage == .load {
            return SecureStoreError(kind: .unavailable, message: SecretServiceMessages.cannotLoad(detail: message))
        }
        // Only SecretServiceStore cancels, and only when its timeout expires. A call can also
        // get G_IO_ERROR_CANCELLED without its own timeout expiring: GLib shares the
        // half-open session-bus connection between threads, so when an earlier, abandoned
        // call on a hung bus is cancelled, a call waiting on the same connection gets that
        // error. Either way the bus did not answer.
        if domain == Self.ioDomain,
            code == Int(AUTHCTL_G_IO_ERROR_CANCELLED) || code == Int(AUTHCTL_G_IO_ERROR_TIMED_OUT)
        {
            return SecureStoreError(kind: .timeout, message: SecretServiceMessages.timeout(timeout))
        }
        if isNoProvider {
            return SecureStoreError(kind: .unavailable, message: SecretServiceMessages.noProvider(detail: message))
        }
        if isLocked {
            return SecureStoreError(kind: .locked, message: SecretServiceMessages.locked(detail: message))
        }
        if isMissingDefaultCollection {
            return SecureStoreError(kind: .locked, message: SecretServiceMessages.noDefaultCollection(detail: message))
        }
        if stage == .connect {
            return SecureStoreError(kind: .unavailable, message: SecretServiceMessages.cannotConnect(detail: message))
        }
        return SecureStoreError(kind: .failed, message: "the Secret Service failed: \(message)")
    }

    /// Nobody owns org.freedesktop.secrets on the bus and none could be activated.
    var isNoProvider: Bool {
        let names: Set<String> = [
            "org.freedesktop.DBus.Error.ServiceUnknown",
            "org.freedesktop.DBus.Error.NameHasNoOwner",
        ]
        if let remoteName {
            if names.contains(remoteName) { return true }
            if remoteName.hasPrefix("org.freedesktop.DBus.Error.Spawn.") { return true }
        }
        if domain == Self.dbusDomain {
            let codes = [
                AUTHCTL_G_DBUS_ERROR_SERVICE_UNKNOWN, AUTHCTL_G_DBUS_ERROR_NAME_HAS_NO_OWNER,
                AUTHCTL_G_DBUS_ERROR_SPAWN_EXEC_FAILED, AUTHCTL_G_DBUS_ERROR_SPAWN_CHILD_EXITED,
                AUTHCTL_G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND, AUTHCTL_G_DBUS_ERROR_SPAWN_FAILED,
            ]
            if codes.contains(where: { Int($0) == code }) { return true }
        }
        return false
    }

    /// The collection or item is locked and could not be unlocked (no prompter, or the
    /// prompt was dismissed).
    var isLocked: Bool {
        if domain == Self.secretDomain && code == Int(AUTHCTL_SECRET_ERROR_IS_LOCKED) { return true }
        if remoteName == "org.freedesktop.Secret.Error.IsLocked" { return true }
        return message.lowercased().contains("locked collection")
    }

    /// gnome-keyring has no default ("login") keyring and could not prompt to create one:
    /// it answers `Object does not exist at path “/org/freedesktop/secrets/collection/login”`.
    var isMissingDefaultCollection: Bool {
        guard message.contains("/org/freedesktop/secrets/collection/") else { return false }
        if remoteName == "org.freedesktop.Secret.Error.NoSuchObject"
            || remoteName == "org.freedesktop.DBus.Error.UnknownMethod"
            || remoteName == "org.freedesktop.DBus.Error.UnknownObject"
        {
            return true
        }
        return domain == Self.secretDomain && code == Int(AUTHCTL_SECRET_ERROR_NO_SUCH_OBJECT)
    }
}

/// The texts of SecretServiceStore's errors (what is missing and how to get it).
enum SecretServiceMessages {
    static let howToStart =
        "run inside a desktop session, or start one: `dbus-run-session -- sh`, then "
        + "`eval \"$(printf '%s\\n' KEYRING-PASSWORD | gnome-keyring-daemon --unlock --components=secrets)\"`, "
        + "`export GNOME_KEYRING_CONTROL` (so the next command finds this daemon instead of starting a "
        + "second one that races it for the bus name) and `gnome-keyring-daemon --start --components=secrets`"

    static let noSessionBus =
        "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set and there is no "
        + "$XDG_RUNTIME_DIR/bus), so no Secret Service can be reached; \(howToStart)"

    static func cannotLoad(detail: String) -> String {
        "libsecret, which talks to the Secret Service, is not available: \(detail)"
    }

    static func cannotConnect(detail: String) -> String {
        "cannot connect to the D-Bus session bus (\(detail)); \(howToStart)"
    }

    static func noProvider(detail: String) -> String {
        "no Secret Service provider (org.freedesktop.secrets) on the session bus (\(detail)); "
            + "start `gnome-keyring-daemon --start --components=secrets`, or KeePassXC with "
            + "Secret Service integration enabled"
    }

    static func locked(detail: String) -> String {
        "the keyring is locked and cannot be unlocked without a prompt (\(detail)); unlock it, "
            + "e.g. `gnome-keyring-daemon --unlock` with the keyring password on standard input, "
            + "or unlock it in Seahorse or KeePassXC"
    }

    static func noDefaultCollection(detail: String) -> String {
        "the Secret Service has no default keyring and cannot create one without a prompt "
            + "(\(detail)); create and unlock one, e.g. `gnome-keyring-daemon --unlock` with a new "
            + "keyring password on standard input"
    }

    static func timeout(_ seconds: Double) -> String {
        let shown = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
        return "the Secret Service did not answer within \(shown) s (is the session bus or "
            + "the keyring daemon hung?)"
    }
}
