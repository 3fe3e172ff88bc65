import Synchronization

/// A `SecretStore` in memory, for tests of the commands. Thread-safe. Keyed like the
/// Secret Service: one item per `kind` + `profile`; a write replaces the item whole.
public final class InMemorySecretStore: SecretStore, Sendable {
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

    private struct State {
        var storage: [Slot: Item] = [:]
        var pendingError: SecureStoreError?
    }

    private let state: Mutex<State>

    public init(items: [Item] = []) {
        var initial = State()
        for item in items {
            initial.storage[Slot(kind: item.key.kind, profile: item.key.profile)] = item
        }
        state = Mutex(initial)
    }

    /// When set, every read, write and delete throws this error (to test how commands
    /// react to a missing or locked Secret Service).
    public var error: SecureStoreError? {
        get { state.withLock { $0.pendingError } }
        set { state.withLock { $0.pendingError = newValue } }
    }

    /// A snapshot of the stored items, sorted by kind then profile.
    public var items: [Item] {
        state.withLock { $0.storage.values.sorted { ($0.key.kind, $0.key.profile) < ($1.key.kind, $1.key.profile) } }
    }

    /// The stored item for `key.kind` + `key.profile` (label and all attributes).
    public func item(_ key: SecretKey) -> Item? {
        state.withLock { $0.storage[Slot(kind: key.kind, profile: key.profile)] }
    }

    public func read(_ key: SecretKey) throws -> String? {
        try state.withLock { state in
            if let pendingError = state.pendingError { throw pendingError }
            guard let item = state.storage[Slot(kind: key.kind, profile: key.profile)] else { return nil }
            return key.clientId.isEmpty || key.clientId == item.key.clientId ? item.secret : nil
        }
    }

    public func write(_ key: SecretKey, label: String, secret: String) throws {
        try state.withLock { state in
            if let pendingError = state.pendingError { throw pendingError }
            state.storage[Slot(kind: key.kind, profile: key.profile)] = Item(key: key, label: label, secret: secret)
        }
    }

    public func keys(profile: String) throws -> [SecretKey] {
        try state.withLock { state in
            if let pendingError = state.pendingError { throw pendingError }
            return state.storage.values.filter { $0.key.profile == profile }.map(\.key).sorted { $0.kind < $1.kind }
        }
    }

    @discardableResult
    public func delete(_ key: SecretKey) throws -> Bool {
        try state.withLock { state in
            if let pendingError = state.pendingError { throw pendingError }
            return state.storage.removeValue(forKey: Slot(kind: key.kind, profile: key.profile)) != nil
        }
    }
}
