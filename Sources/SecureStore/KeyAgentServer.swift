#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The key agent's process side: listens on `AgentSocket`, answers one request per connection
/// from processes of the same user (SO_PEERCRED; any other peer is closed unanswered), forgets
/// keys when their idle time or lifetime runs out, and returns when it holds nothing. The socket
/// is its own or the one systemd's socket activation handed over (`SocketActivation`).
/// Never prints; the executable's `authctl agent` runs it and makes the process non-dumpable.
public final class KeyAgentServer {
    public struct Options: Sendable {
        /// How long an agent that has never held a key waits for one (nil: for ever, the
        /// foreground agent of a systemd unit or a CI job).
        public var firstKeyWait: UInt64?
        public init(firstKeyWait: UInt64?) { self.firstKeyWait = firstKeyWait }
    }

    private let directory: String
    private let socketPath: String
    private let options: Options
    private let vault: KeyVault
    private var listener: Int32 = -1
    private var lockFile: Int32 = -1
    private var socketInode: ino_t = 0
    /// Listening on the socket systemd handed over (whose file systemd owns and removes).
    public private(set) var isSocketActivated = false
    /// Connections refused because their peer was another user.
    public private(set) var refusedPeers = 0

    public init(environment: [String: String], options: Options) throws {
        directory = AgentSocket.directory(environment: environment)
        socketPath = directory + "/" + AgentSocket.socketName
        self.options = options
        vault = try KeyVault()
        guard vault.memoryLocked else {
            throw SecureStoreError(
                kind: .unavailable,
                message:
                    "the key agent cannot lock its key memory (mlock: \(String(cString: strerror(errno)))); "
                    + "raise the locked-memory limit (ulimit -l, LimitMEMLOCK=) to at least 64 KiB")
        }
    }

    /// Takes the socket: the one systemd handed over (`handover`), else its own. Either way it
    /// checks the directory and takes `agent.lock` (one agent per directory).
    ///
    /// Its own: creates the directory, replaces a stale socket (one nobody listens on; only ours,
    /// and only a socket) and binds. Handed over: the descriptor must be a listening Unix stream
    /// socket bound to `AgentSocket.path`, whose file is a socket of this user; systemd owns that
    /// file, so the agent never removes it.
    public func listen(_ handover: SocketActivation.Handover = .none) throws {
        if case .listener(let descriptor) = handover {
            try SocketActivation.checkListener(descriptor, path: socketPath)
            guard try AgentSocket.checkDirectory(directory, create: false) else {
                throw SocketActivation.Refusal.socketFileGone(socketPath)
            }
            var info = stat()
            guard lstat(socketPath, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK, info.st_uid == geteuid() else {
                throw SocketActivation.Refusal.socketFileGone(socketPath)
            }
            try takeLock()
            listener = descriptor
            isSocketActivated = true
            return
        }
        try AgentSocket.checkDirectory(directory, create: true)
        try takeLock()
        var info = stat()
        if lstat(socketPath, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFSOCK else {
                throw SecureStoreError(
                    .insecure, message: "\(socketPath) exists and is not a socket; the agent leaves it: remove it")
            }
            guard info.st_uid == geteuid() else {
                throw SecureStoreError(
                    .insecure,
                    message:
                        "\(socketPath) belongs to uid \(info.st_uid), not to this user; the agent leaves it")
            }
            // We hold agent.lock, so no agent listens there: the socket is a dead agent's.
            guard unlink(socketPath) == 0 else { throw AgentSocket.failure("cannot remove the stale \(socketPath)") }
        } else if errno != ENOENT {
            throw AgentSocket.failure("cannot inspect \(socketPath)")
        }
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw AgentSocket.failure("cannot create a socket") }
        var address = try AgentSocket.address(socketPath)
        let previous = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        umask(previous)
        guard bound == 0 else { throw AgentSocket.failure("cannot listen on \(socketPath)") }
        guard Glibc.listen(listener, 64) == 0 else { throw AgentSocket.failure("cannot listen on \(socketPath)") }
        guard lstat(socketPath, &info) == 0 else { throw AgentSocket.failure("cannot inspect \(socketPath)") }
        socketInode = info.st_ino
    }

    private func takeLock() throws {
        lockFile = open(directory + "/" + AgentSocket.lockName, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lockFile >= 0 else { throw AgentSocket.failure("cannot open \(directory)/\(AgentSocket.lockName)") }
        guard flock(lockFile, LOCK_EX | LOCK_NB) == 0 else {
            throw SecureStoreError(kind: .unavailable, message: "a key agent already listens on \(socketPath)")
        }
    }

    /// Serves until it holds nothing (after holding something, or after `firstKeyWait`) or
    /// `shouldStop` says so (a signal); then forgets every key and removes its socket (not one
    /// handed over: systemd keeps listening on it and starts the agent again on a connection).
    public func serve(shouldStop: () -> Bool) {
        defer { shutDown() }
        let started = Self.now()
        var held = false
        while !shouldStop() {
            let now = Self.now()
            vault.expire(now: now)
            if vault.isEmpty {
                if held { return }
                if let wait = options.firstKeyWait, now >= started + wait { return }
            } else {
                held = true
            }
            // Wake at the next expiry, and at least every second (a signal, the first-key wait).
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 1000)
            if ready > 0 { answerOne() }
        }
    }

    private func answerOne() {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        defer { close(connection) }
        guard AgentSocket.peerUID(connection) == geteuid() else {
            refusedPeers += 1
            return
        }
        AgentSocket.setTimeouts(connection, seconds: 2)
        guard let request = try? AgentSocket.receiveMessage(connection) else { return }
        var answer = self.answer(request)
        _ = AgentSocket.send(connection, answer.encoded())
        for index in answer.fields.indices {
            answer.fields[index].withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        }
    }

    func answer(_ request: AgentMessage) -> AgentMessage {
        let now = Self.now()
        do {
            switch request.kind {
            case .open:
                guard
                    let plaintext = try vault.open(directory: request.path(0), file: request.field(1, "file"), now: now)
                else {
                    return AgentMessage(.notHeld)
                }
                return AgentMessage(.ok, [plaintext])
            case .seal:
                let header = try request.field(1, "header")
                guard
                    let file = try vault.seal(
                        directory: request.path(0), header: header.isEmpty ? nil : header,
                        plaintext: request.field(2, "plaintext"), now: now)
                else {
                    return AgentMessage(.notHeld)
                }
                return AgentMessage(.ok, [file])
            case .add:
                try vault.add(
                    directory: request.path(0), header: request.field(1, "header", maximum: 8192),
                    fileKey: request.field(2, "file key", maximum: 16),
                    lifetime: request.number(3, "lifetime"), idle: request.number(4, "idle"), now: now)
                return AgentMessage(.ok)
            case .lock:
                vault.forgetAll()
                return AgentMessage(.ok)
            case .status:
                return AgentMessage(.ok, vault.status().fields())
            case .ok, .notHeld, .refused:
                return AgentMessage(.refused, [Array("not a request".utf8)])
            }
        } catch let refusal as KeyVault.Refusal {
            return AgentMessage(.refused, [Array(refusal.reason.utf8)])
        } catch AgentMessage.ParseError.malformed(let reason) {
            return AgentMessage(.refused, [Array(reason.utf8)])
        } catch {
            return AgentMessage(.refused, [Array("the request failed".utf8)])
        }
    }

    private func shutDown() {
        vault.forgetAll()
        var info = stat()
        // Only the socket this agent made: a newer agent's, or systemd's, is left alone.
        if listener >= 0, !isSocketActivated, lstat(socketPath, &info) == 0, info.st_ino == socketInode {
            unlink(socketPath)
        }
        if listener >= 0 { close(listener) }
        if lockFile >= 0 { close(lockFile) }
        listener = -1
        lockFile = -1
    }

    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(max(spec.tv_sec, 0))
    }
}
