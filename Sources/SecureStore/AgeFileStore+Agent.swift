import Crypto
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// How long the key agent keeps a directory's keys.
public struct AgentLifetime: Sendable, Equatable {
    /// Forgotten this long after `unlock`, used or not (default 8 hours).
    public var lifetime: UInt64
    /// Forgotten after this long without a request (default 15 minutes).
    public var idle: UInt64

    public static let standard = AgentLifetime(lifetime: 8 * 3600, idle: 15 * 60)

    public init(lifetime: UInt64, idle: UInt64) {
        self.lifetime = lifetime
        self.idle = idle
    }
}

/// How a file store uses the key agent.
public struct AgentUse: Sendable {
    public var client: KeyAgentClient
    /// How long the agent keeps the key a passphrase typed at a prompt opened for a profile's file
    /// (nil: the agent is not given it; the profile's setting or the command's environment).
    public var afterPrompt: @Sendable (_ profile: String) -> AgentLifetime?
    /// Starts an agent when none runs (the executable spawns `authctl agent`, detached).
    public var start: @Sendable () throws -> Void

    public init(
        client: KeyAgentClient, afterPrompt: @escaping @Sendable (_ profile: String) -> AgentLifetime?,
        start: @escaping @Sendable () throws -> Void
    ) {
        self.client = client
        self.afterPrompt = afterPrompt
        self.start = start
    }
}

/// What `unlock` did.
public struct UnlockReport: Sendable {
    /// The files the passphrase opened (their keys are now the agent's).
    public var opened: [String]
    /// Files of the directory the passphrase does not open (another passphrase), left as they are.
    public var notOpened: [String]
    public var passphraseOrigin: PassphraseOrigin?
}

extension AgeFileStore: KeyAgentUnlocking {
    /// The file store is the one a key agent holds keys for.
    public var keyAgent: KeyAgentUnlocking? { self }

    // MARK: - Unlocking

    /// Opens every file of the directory with the passphrase (one scrypt per distinct header)
    /// and gives the agent their keys, starting it when none runs; in an empty directory, a new
    /// header, written first as `profile`'s file with no items (the header the directory's files
    /// will share). A passphrase that opens none is refused.
    public func unlock(_ lifetime: AgentLifetime, profile: String) throws -> UnlockReport {
        guard let agent else { throw SecureStoreError(kind: .unavailable, message: "no key agent is configured") }
        try agent.client.checkPath()  // before the passphrase: an agent could never listen there
        return try state.withLock { state in
            try checkDirectory(&state)
            let files = try directoryHeaders()
            var opened: [String] = []
            var notOpened: [String] = []
            var keys: [AgeFormat.Header] = []
            for (header, paths) in files {
                do {
                    let (unwrapped, _) = try AgeFormat.openHeader(header, passphrase: passphrase(&state))
                    keys.append(unwrapped)
                    opened += paths
                } catch AgeFormat.Failure.wrongPassphrase {
                    notOpened += paths
                } catch AgeFormat.Failure.malformed(let reason) {
                    throw Self.damaged(paths[0], reason)
                }
            }
            if keys.isEmpty && !files.isEmpty {
                throw wrongPassphrase(notOpened.count == 1 ? notOpened[0] : "any file of \(directory)", state: state)
            }
            if keys.isEmpty {
                // The agent keeps a key only for a header a file of the directory carries: the
                // new passphrase's header goes into the directory's first file, `profile`'s, empty.
                let header = try AgeFormat.newHeader(passphrase: passphrase(&state), workFactor: workFactor)
                opened.append(try writeFirstFile(profile: profile, header: header, state: &state))
                keys.append(header)
            }
            for key in keys { try give(agent, key, lifetime: lifetime) }
            return UnlockReport(opened: opened, notOpened: notOpened, passphraseOrigin: state.origin)
        }
    }

    /// Until when (seconds since 1970) the agent holds the key of `profile`'s file; nil when it
    /// does not, there is no file or no agent. Never asks for a passphrase.
    public func agentExpiry(profile: String) throws -> UInt64? {
        guard let agent, let status = try agent.client.status(),
            let held = status.directories.first(where: { $0.path == directory })
        else { return nil }
        guard try state.withLock({ try checkDirectory(&$0, creating: false) }),
            let file = try Self.readChecked(path(profile: profile))
        else { return nil }
        guard let parsed = try? AgeFormat.parseHeader(file) else { return nil }
        let fingerprint = Array(SHA256.hash(data: file[0..<parsed.end]))
        return held.fingerprints.contains(fingerprint) ? held.expiresAt : nil
    }

    // MARK: - Reading and writing through the agent

    /// The plaintext the agent opened `file` to; nil when it holds no key for it or none runs.
    func agentOpen(_ file: [UInt8], path: String, state: inout State) throws -> [UInt8]? {
        guard let agent, file.count + 4096 <= AgentMessage.maximumFrameBytes else { return nil }
        guard let answer = ask(agent, AgentMessage(.open, [Array(directory.utf8), file]), state: &state) else {
            return nil
        }
        switch answer.kind {
        case .ok:
            guard answer.fields.count == 1 else { return nil }
            return answer.fields[0]
        case .refused:
            throw Self.damaged(
                path, answer.fields.first.map { String(decoding: $0, as: UTF8.self) } ?? "the agent refused it")
        default:
            return nil
        }
    }

    /// `plaintext` sealed by the agent with `header` (the file's own, or for a new file the one
    /// the directory's files carry: the caller reads it from the directory, never from the agent);
    /// nil when the agent does not hold it or none runs. A sealed file that does not begin with
    /// exactly `header` is not used: the agent does not choose how a file is encrypted.
    func agentSeal(_ plaintext: [UInt8], header: [UInt8], state: inout State) throws -> [UInt8]? {
        guard let agent, plaintext.count + 8192 <= AgentMessage.maximumFrameBytes else { return nil }
        let request = AgentMessage(.seal, [Array(directory.utf8), header, plaintext])
        guard let answer = ask(agent, request, state: &state), answer.kind == .ok, answer.fields.count == 1,
            let parsed = try? AgeFormat.parseHeader(answer.fields[0]), parsed.end == header.count,
            answer.fields[0].starts(with: header)
        else { return nil }
        return answer.fields[0]
    }

    /// The header a new file of the directory takes: the one its files carry (the most shared),
    /// nil in an empty directory.
    func directoryHeader() throws -> [UInt8]? {
        try directoryHeaders().first?.header
    }

    /// Whether the agent holds the key of the header the directory's files carry (so a new file
    /// needs no passphrase). A key the agent holds for this directory under any other header
    /// (one a process made with a passphrase of its own) does not count.
    func agentHoldsDirectoryHeader(state: inout State) throws -> Bool {
        guard let agent, let header = try directoryHeader(),
            let answer = ask(agent, AgentMessage(.status), state: &state), answer.kind == .ok,
            let status = try? AgentStatus.parse(answer)
        else { return false }
        let fingerprint = Array(SHA256.hash(data: header))
        return status.directories.contains { $0.path == directory && $0.fingerprints.contains(fingerprint) }
    }

    /// The agent's answer; nil (and why remembered) when none answers. A misbehaving agent is
    /// remembered too and the passphrase used: nothing is lost by not asking it.
    private func ask(_ agent: AgentUse, _ request: AgentMessage, state: inout State) -> AgentMessage? {
        do {
            switch try agent.client.send(request) {
            case .answer(let answer):
                observer?(.agent(request.kind, answer: answer.kind))
                return answer
            case .absent(let absence):
                observer?(.agent(request.kind, answer: nil))
                state.agentAbsence = absence
                return nil
            }
        } catch {
            observer?(.agent(request.kind, answer: nil))
            state.agentTrouble = "\(error)"
            return nil
        }
    }

    /// After a passphrase typed at a prompt opened `header` for `profile`'s file: the agent gets
    /// its key (started when none runs), unless the profile or the command says not to. Best
    /// effort: the command goes on either way.
    func feedAgentAfterPrompt(_ header: AgeFormat.Header, profile: String, state: State) {
        guard let agent, state.origin == .prompt, let lifetime = agent.afterPrompt(profile) else { return }
        try? give(agent, header, lifetime: lifetime)
    }

    private func give(_ agent: AgentUse, _ header: AgeFormat.Header, lifetime: AgentLifetime) throws {
        var key = header.fileKey.bytes
        defer { key.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        let request = AgentMessage(
            .add,
            [
                Array(directory.utf8), header.bytes, key, AgentMessage.number(lifetime.lifetime),
                AgentMessage.number(lifetime.idle),
            ])
        var reply = try agent.client.send(request)
        if case .absent = reply {
            try agent.start()
            reply = try waitForAgent(agent, request)
        }
        switch reply {
        case .answer(let answer) where answer.kind == .ok:
            return
        case .answer(let answer):
            let reason = answer.fields.first.map { String(decoding: $0, as: UTF8.self) } ?? "no reason given"
            throw SecureStoreError(kind: .failed, message: "the key agent refused the key: \(reason)")
        case .absent:
            throw SecureStoreError(
                kind: .unavailable,
                message:
                    "the key agent did not start (nothing listens on \(agent.client.socketPath)); run `authctl agent` to see why"
            )
        }
    }

    /// A just-started agent needs a moment to listen: up to 5 s.
    private func waitForAgent(_ agent: AgentUse, _ request: AgentMessage) throws -> KeyAgentClient.Reply {
        var reply = KeyAgentClient.Reply.absent(.notRunning)
        for _ in 0..<100 {
            reply = try agent.client.send(request)
            if case .answer = reply { return reply }
            usleep(50_000)
        }
        return reply
    }

    // MARK: - One passphrase per directory

    /// The header a file is written with when this process holds no key for it: the file's own
    /// (opened with the passphrase), else the directory's (the header its files share, opened
    /// with the passphrase: a new file takes the passphrase the others have), else a new one.
    func localHeader(for before: Opened?, profile: String, state: inout State) throws -> AgeFormat.Header {
        let candidates: [([UInt8], String)]
        if let before {
            candidates = [(before.headerBytes, path(profile: profile))]
        } else {
            candidates = try directoryHeaders().prefix(1).map { ($0.header, $0.paths[0]) }
        }
        guard let (bytes, path) = candidates.first else {
            return try AgeFormat.newHeader(passphrase: passphrase(&state), workFactor: workFactor)
        }
        do {
            let (header, _) = try AgeFormat.openHeader(bytes, passphrase: passphrase(&state))
            feedAgentAfterPrompt(header, profile: profile, state: state)
            return header
        } catch AgeFormat.Failure.wrongPassphrase {
            var error = wrongPassphrase(path, state: state)
            if before == nil {
                error.message += " (every file of \(directory) takes the same passphrase; nothing was written)"
            }
            throw error
        } catch AgeFormat.Failure.malformed(let reason) {
            throw Self.damaged(path, reason)
        }
    }

    /// The `.age` files of `directory`, by name.
    static func storeFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".age") }
            .sorted().map { directory + "/" + $0 }
    }

    /// Whether a file of `directory` (a private directory of this user), read with the store's
    /// checks, begins with `header`: what the key agent asks before it keeps a key for a header.
    static func filesCarry(_ header: [UInt8], directory: String) -> Bool {
        var info = stat()
        guard lstat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR,
            (try? PrivatePath.requireOwnAndClosed(info, path: directory, refuser: "the key agent", mode: "700")) != nil
        else { return false }
        return storeFiles(directory).contains { path in
            guard let (fd, _) = try? openForReading(path) else { return false }
            defer { close(fd) }
            var start = [UInt8](repeating: 0, count: header.count)
            var got = 0
            while got < start.count {
                let count = start.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, $0.count - got) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                got += count
            }
            return start == header
        }
    }

    /// The distinct headers of the directory's files, the most shared first, each with its files.
    func directoryHeaders() throws -> [(header: [UInt8], paths: [String])] {
        var groups: [(header: [UInt8], paths: [String])] = []
        for path in Self.storeFiles(directory) {
            // Checked as the profile's own file is: a file someone else put here is refused, not read.
            guard let file = try Self.readChecked(path) else { continue }
            let parsed: AgeFormat.ParsedHeader
            do { parsed = try AgeFormat.parseHeader(file) } catch AgeFormat.Failure.malformed(let reason) {
                throw Self.damaged(path, reason)
            }
            let header = Array(file[0..<parsed.end])
            if let index = groups.firstIndex(where: { $0.header == header }) {
                groups[index].paths.append(path)
            } else {
                groups.append((header, [path]))
            }
        }
        return groups.enumerated().sorted {
            ($0.element.paths.count, -$0.offset) > ($1.element.paths.count, -$1.offset)
        }
        .map(\.element)
    }

    /// The one line for a locked store where nothing can ask for the passphrase.
    func lockedMessage(_ state: State) -> String {
        if let trouble = state.agentTrouble {
            return "the file store \(directory) is locked and the key agent failed (\(trouble)): run `authctl unlock`"
        }
        if state.agentAbsence == .gone {
            return "the key agent is gone (killed or crashed; nothing stored was lost) and the file store \(directory) "
                + "is locked: run `authctl unlock`"
        }
        return "the file store \(directory) is locked: run `authctl unlock` (or give a passphrase source, "
            + "e.g. AUTHCTL_STORE_PASSPHRASE_FILE)"
    }
}

extension AgeFileStore {
    /// Reads `profile`'s file back from the disk (not the copy in memory) and opens it: with the
    /// passphrase this store holds (one scrypt: the file opens with the passphrase, not only with
    /// a key in memory), else through the key agent. Throws unless it holds what was last written.
    public func verifyOnDisk(profile: String) throws {
        try state.withLock { state in
            let path = path(profile: profile)
            guard let file = try Self.readChecked(path) else {
                throw SecureStoreError(kind: .failed, message: "\(path) was not written")
            }
            var plaintext: [UInt8]
            do {
                if let passphrase = state.passphrase {
                    let (header, start) = try AgeFormat.openHeader(file, passphrase: passphrase)
                    plaintext = try AgeFormat.decryptPayload(file, from: start, header: header)
                } else if let opened = try agentOpen(file, path: path, state: &state) {
                    plaintext = opened
                } else {
                    throw SecureStoreError(kind: .failed, message: "\(path) could not be opened again to check it")
                }
            } catch AgeFormat.Failure.wrongPassphrase {
                throw wrongPassphrase(path, state: state)
            } catch AgeFormat.Failure.malformed(let reason) {
                throw Self.damaged(path, reason)
            }
            defer { plaintext.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
            guard let document = try? JSONDecoder().decode(Document.self, from: Data(plaintext)),
                document == state.profiles[profile]?.document
            else {
                throw SecureStoreError(.corrupted, message: "\(path) read back does not hold what was just written")
            }
        }
    }
}
