
/// Identifies one stored secret. `kind` and `profile` together are the key; the other
/// attributes describe the item to a person browsing the keyring (`secret-tool search`).
public struct SecretKey: Sendable, Hashable {
    /// What the secret is: `session` (a signed-in session as JSON) or `client-secret`.
    public var kind: String
    public var profile: String
    public var userPoolId: String
    public var clientId: String

    public init(kind: String, profile: String, userPoolId: String = "", clientId: String = "") {
        self.kind = kind
        self.profile = profile
        self.userPoolId = userPoolId
        self.clientId = clientId
    }
}

/// Why the store could not do what was asked.
public struct SecureStoreError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// No D-Bus session bus, or no Secret Service provider on it.
        case unavailable
        /// The collection is locked and nothing can unlock it (no prompter).
        case locked
        /// The Secret Service did not answer in time.
        case timeout
        /// Any other failure reported by libsecret.
        case failed
    }

    public var kind: Kind
    public var message: String

    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// Where secrets are kept. Implementations replace an item whole on write.
public protocol SecretStore: AnyObject {
    /// The secret for `key.kind` + `key.profile` (and `key.clientId` when not empty), or nil when there is none.
    func read(_ key: SecretKey) throws -> String?
    /// Creates or replaces the item whole. `label` is what a person sees in Seahorse.
    func write(_ key: SecretKey, label: String, secret: String) throws
    /// Removes the item; returns whether one existed.
    @discardableResult
    func delete(_ key: SecretKey) throws -> Bool
}
