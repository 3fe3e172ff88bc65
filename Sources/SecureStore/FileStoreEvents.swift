/// What the file store did with its key agent, for a trace (`--debug`): the kinds of a request
/// and of its answer only, never a field of either (keys, plaintexts, files, paths).
public enum FileStoreEvent: Sendable {
    /// A request to the key agent and the kind of its answer (nil: no agent answered).
    case agent(AgentMessage.Kind, answer: AgentMessage.Kind?)
}

/// Told of every `FileStoreEvent`; nil (the default) costs one check.
public typealias FileStoreObserver = @Sendable (FileStoreEvent) -> Void

/// How the Secret Service store read an item, for a trace (`--debug`): directly over the bus,
/// or through libsecret and why (never an attribute, a path or a byte of the item).
public enum SecretServiceEvent: Sendable, Equatable {
    case read(direct: Bool, libsecretBecause: SecretServiceDetour?)
}

/// Why a read went through libsecret instead of the direct connection.
public enum SecretServiceDetour: Sendable, Equatable {
    /// The bus's address is not a Unix socket path or abstract name.
    case address
    /// The socket could not be reached, or the bus refused or dropped the connection.
    case connection
    /// The bus or the service answered with an error, or not as the interface documents.
    case answer
    /// The item is locked: unlocking it may need a prompt.
    case locked

    public var traceName: StaticString {
        switch self {
        case .address: "bus-address"
        case .connection: "connection"
        case .answer: "answer"
        case .locked: "locked"
        }
    }
}

/// Told of every `SecretServiceEvent`; nil (the default) costs one check.
public typealias SecretServiceObserver = @Sendable (SecretServiceEvent) -> Void
