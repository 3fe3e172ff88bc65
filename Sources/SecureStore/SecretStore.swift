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
        /// The store cannot be used on this host: no D-Bus session bus or no Secret Service
        /// provider; keyctl blocked; no passphrase source; an unsafe store directory.
        case unavailable
        /// The items exist but cannot be opened: a locked collection nothing can unlock (no
        /// prompter), or a passphrase that does not open the file.
        case locked
        /// The Secret Service did not answer in time.
        case timeout
        /// Any other failure: libsecret's, the kernel's, or a damaged file.
        case failed
    }

    /// What exactly went wrong in the kernel-keyring and file stores (nil for the Secret
    /// Service's errors, which `kind` describes). A separate field rather than new `Kind` cases:
    /// callers switch over `Kind` exhaustively, and each cause falls into the kind a caller
    /// that does not know it should treat it as.
    public enum Cause: String, Sendable {
        /// keyctl is refused (EPERM or ENOSYS), e.g. by a container's seccomp profile. Kind `.unavailable`.
        case blocked
        /// The passphrase does not open the file (left untouched). Kind `.locked`.
        case wrongPassphrase
        /// The file is not a readable age file of this store (left untouched). Kind `.failed`.
        case corrupted
        /// No passphrase source gave a passphrase. Kind `.unavailable`.
        case noPassphrase
        /// The file store has files, no key agent holds them and nothing may ask for the
        /// passphrase here: `authctl unlock` is the fix. Kind `.unavailable`.
        case storeLocked
        /// The store directory or file is reachable by other users, or not the user's. Kind `.unavailable`.
        case insecure
        /// The secret is larger than the store can keep (a kernel user key: 32767 bytes). Kind `.failed`.
        case tooLarge

        /// The kind a caller that does not know this cause treats it as.
        public var kind: Kind {
            switch self {
            case .blocked, .noPassphrase, .storeLocked, .insecure: return .unavailable
            case .wrongPassphrase: return .locked
            case .corrupted, .tooLarge: return .failed
            }
        }
    }

    public var kind: Kind
    public var cause: Cause?
    public var message: String
    /// What a caller tells a person beside the store's own words (the other stores, how to fix
    /// it), kept apart so a one-line warning can quote `message` alone.
    public var advice: String?

    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    public init(_ cause: Cause, message: String) {
        self.kind = cause.kind
        self.cause = cause
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
    /// The keys of every item of `profile` (with their pool and client ids), sorted by kind:
    /// what `store migrate` moves and `status` lists.
    func keys(profile: String) throws -> [SecretKey]
    /// Opens what a write of `profile`'s items would need (the keyring's collection, keyctl, the
    /// file store's directory, passphrase and existing file) without writing: called before a
    /// sign-in, so a store that cannot keep its answer is refused before the service is asked.
    func prepareToKeep(profile: String) throws
    /// What the store offers a key agent (the file store: `authctl unlock`, `status`'s expiry);
    /// nil for a store a key agent has no part in.
    var keyAgent: KeyAgentUnlocking? { get }
}

/// A store whose keys a key agent can hold: the file store.
public protocol KeyAgentUnlocking: AnyObject, Sendable {
    /// Where the store's files are.
    var directory: String { get }
    /// Hands the key agent the keys of the directory's files the passphrase opens.
    func unlock(_ lifetime: AgentLifetime, profile: String) throws -> UnlockReport
    /// Until when (seconds since 1970) the agent holds `profile`'s file; nil when it does not.
    func agentExpiry(profile: String) throws -> UInt64?
}

extension SecretStore {
    /// For conformers outside this library written before `keys` existed (test doubles); every
    /// store of this library implements it.
    public func keys(profile: String) throws -> [SecretKey] {
        throw SecureStoreError(kind: .failed, message: "this store cannot list its items")
    }

    /// A read of the profile's items reaches everything a write needs in the stores whose reads
    /// and writes open the same things (the Secret Service, the kernel keyring).
    public func prepareToKeep(profile: String) throws {
        _ = try keys(profile: profile)
    }

    public var keyAgent: KeyAgentUnlocking? { nil }
}
