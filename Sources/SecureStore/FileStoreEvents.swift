/// What the file store did with its key agent, for a trace (`--debug`): the kinds of a request
/// and of its answer only, never a field of either (keys, plaintexts, files, paths).
public enum FileStoreEvent: Sendable {
    /// A request to the key agent and the kind of its answer (nil: no agent answered).
    case agent(AgentMessage.Kind, answer: AgentMessage.Kind?)
}

/// Told of every `FileStoreEvent`; nil (the default) costs one check.
public typealias FileStoreObserver = @Sendable (FileStoreEvent) -> Void
