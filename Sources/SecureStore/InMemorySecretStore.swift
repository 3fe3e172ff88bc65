import Foundation

/// A `SecretStore` in memory, for tests of the commands. Thread-safe. Keyed like the
/// Secret Service: one item per `kind` + `profile`; a write replaces the item whole.
public final class InMemorySecretStore: SecretStore, @unchecked Sendable {
    /// One stored item.
    public struct Item: Sendable, Equatable {
        public var key: SecretKey
        public var label: String
        public var secret: String
    }

    private struct Slot: Hashable {
        var kind: String
        var profile: String
    }

    private let lock = NSLock()
    private var storage: [Slot: Item] = [:]
    private var pendingError: SecureStoreError?

    public init(items: [Item] = []) {
        for item in items {
            storage[Slot(kind: item.key.kind, profile: item.key.profile)] = item
        }
    }

    /// When set, every read, write and delete throws this error (to test how commands
    /// react to a missing or locked Secret Service).
    public var error: SecureStoreError? {
        get { lock.lock(); defer { lock.unlock() }; return pendingError }
        set { lock.lock(); pendingError = newValue; lock.unlock() }
    }

    /// A snapshot of the stored items, sorted by kind then profile.
    public var items: [Item] {
        lock.lock(); defer { lock.unlock() }
        return storage.values.sorted { ($0.key.kind, $0.key.profile) < ($1.key.kind, $1.key.profile) }
    }

    /// The stored item for `key.kind` + `key.profile` (label and all attributes).
    public func item(_ key: SecretKey) -> Item? {
        lock.lock(); defer { lock.unlock() }
        return storage[Slot(kind: key.kind, profile: key.profile)]
    }

    public func read(_ key: SecretKey) throws -> String? {
        lock.lock(); defer { lock.unlock() }
        if let pendingError { throw pendingError }
        guard let item = storage[Slot(kind: key.kind, profile: key.profile)] else { return nil }
        return key.clientId.isEmpty || key.clientId == item.key.clientId ? item.secret : nil
    }

    public func write(_ key: SecretKey, label: String, secret: String) throws {
        lock.lock(); defer { lock.unlock() }
        if let pendingError { throw pendingError }
        storage[Slot(kind: key.kind, profile: key.profile)] = Item(key: key, label: label, secret: secret)
    }

    @discardableResult
    public func delete(_ key: SecretKey) throws -> Bool {
        lock.lock(); defer { lock.unlock() }
        if let pendingError { throw pendingError }
        return storage.removeValue(forKey: Slot(kind: key.kind, profile: key.profile)) != nil
    }
}
