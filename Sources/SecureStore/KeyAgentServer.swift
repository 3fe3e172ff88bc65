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

    /// How long a connection has to send its whole request, and then to take its whole answer.
    static let exchangeMilliseconds: UInt64 = 2000
    /// Connections served at once; one more is closed at once, unanswered.
    static let maximumConnections = 32

    /// Serves until it holds nothing (after holding something, or after `firstKeyWait`) or
    /// `shouldStop` says so (a signal); then forgets every key and removes its socket (not one
    /// handed over: systemd keeps listening on it and starts the agent again on a connection).
    ///
    /// One thread, one `poll` over the listener and every connection: no connection waits for
    /// another, and each has `exchangeMilliseconds` for its whole request (not per read), then as
    /// long for its answer, or it is closed.
    public func serve(shouldStop: () -> Bool) {
        defer { shutDown() }
        let started = Self.now()
        var held = false
        var connections: [AgentConnection] = []
        defer { connections.removeAll() }
        while !shouldStop() {
            let now = Self.now()
            vault.expire(now: now)
            if vault.isEmpty {
                if held { return }
                if let wait = options.firstKeyWait, now >= started + wait { return }
            } else {
                held = true
            }
            let clock = Self.milliseconds()
            connections.removeAll { $0.deadline <= clock }
            // Wake at the first connection's deadline, and at least every second (a signal, an
            // expiry, the first-key wait).
            let wake = connections.map { $0.deadline - clock }.min().map { min($0, 1000) } ?? 1000
            var pollers = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            pollers += connections.map {
                pollfd(fd: $0.fd, events: Int16($0.isAnswering ? POLLOUT : POLLIN), revents: 0)
            }
            guard poll(&pollers, nfds_t(pollers.count), Int32(wake)) > 0 else { continue }
            var finished = Set<Int32>()
            for (index, connection) in connections.enumerated() where pollers[index + 1].revents != 0 {
                if !step(connection) { finished.insert(connection.fd) }
            }
            connections.removeAll { finished.contains($0.fd) }
            if pollers[0].revents != 0, let connection = acceptOne() {
                if connections.count < Self.maximumConnections {
                    connections.append(connection)
                }
            }
        }
    }

    private func acceptOne() -> AgentConnection? {
        let descriptor = accept(listener, nil, nil)
        guard descriptor >= 0 else { return nil }
        let connection = AgentConnection(fd: descriptor, deadline: Self.milliseconds() + Self.exchangeMilliseconds)
        guard AgentSocket.peerUID(descriptor) == geteuid() else {
            refusedPeers += 1
            return nil
        }
        return connection
    }

    /// Reads what the connection sent, or sends what is left of its answer. False: done with it.
    private func step(_ connection: AgentConnection) -> Bool {
        if connection.isAnswering { return connection.sendSome() }
        do {
            guard let body = try connection.receiveSome() else { return true }
            guard let answer = try? self.answer(AgentRequest(body: body)) else { return false }
            connection.answer(answer, deadline: Self.milliseconds() + Self.exchangeMilliseconds)
            return connection.sendSome()
        } catch {
            return false
        }
    }

    func answer(_ request: AgentRequest) throws -> LockedBuffer {
        let now = Self.now()
        do {
            switch request.kind {
            case .open:
                guard
                    let plaintext = try vault.open(directory: request.path(0), file: request.field(1, "file"), now: now)
                else {
                    return try AgentRequest.frame(.notHeld)
                }
                return try AgentRequest.frame(.ok, [plaintext.bytes])
            case .seal:
                let header = try request.field(1, "header", maximum: 8192)
                guard
                    let file = try vault.seal(
                        directory: request.path(0), header: Array(header),
                        plaintext: request.field(2, "plaintext"), now: now)
                else {
                    return try AgentRequest.frame(.notHeld)
                }
                return try file.withUnsafeBytes { try AgentRequest.frame(.ok, [$0]) }
            case .add:
                let directory = try request.path(0)
                let header = Array(try request.field(1, "header", maximum: 8192))
                let fileKey = try request.field(2, "file key", maximum: 16)
                let lifetime = try request.number(3, "lifetime")
                let idle = try request.number(4, "idle")
                // A key is kept only for a header the directory's own files carry: a process that
                // made a header with a passphrase of its own cannot make it the directory's.
                guard AgeFileStore.filesCarry(header, directory: directory) else {
                    throw KeyVault.Refusal("no file of \(directory) carries this header; the agent keeps no key for it")
                }
                try vault.add(
                    directory: directory, header: header, fileKey: fileKey, lifetime: lifetime, idle: idle, now: now)
                return try AgentRequest.frame(.ok)
            case .lock:
                vault.forgetAll()
                return try AgentRequest.frame(.ok)
            case .status:
                return try AgentRequest.frame(.ok, vault.status(now: now).fields())
            case .ok, .notHeld, .refused:
                return try AgentRequest.frame(.refused, [Array("not a request".utf8)])
            }
        } catch let refusal as KeyVault.Refusal {
            return try AgentRequest.frame(.refused, [Array(refusal.reason.utf8)])
        } catch AgentMessage.ParseError.malformed(let reason) {
            return try AgentRequest.frame(.refused, [Array(reason.utf8)])
        } catch let error as SecureStoreError where error.kind == .failed {
            return try AgentRequest.frame(.refused, [Array("the agent is short of memory".utf8)])
        } catch {
            return try AgentRequest.frame(.refused, [Array("the request failed".utf8)])
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

    static func milliseconds() -> UInt64 { AgentSocket.milliseconds() }
}

/// One client's exchange with the agent: its request read into locked memory as it arrives,
/// then its answer sent from locked memory; both wiped when the connection goes.
final class AgentConnection {
    let fd: Int32
    private(set) var deadline: UInt64
    private var prefix = [UInt8](repeating: 0, count: 4)
    private var prefixCount = 0
    private var body: LockedBuffer?
    private var reply: LockedBuffer?
    private var sent = 0

    init(fd: Int32, deadline: UInt64) {
        self.fd = fd
        self.deadline = deadline
    }

    deinit { close(fd) }

    var isAnswering: Bool { reply != nil }

    /// Reads what is there without waiting; the whole body once it is in, nil before. Throws on a
    /// bad length, end of stream or an error.
    func receiveSome() throws -> LockedBuffer? {
        while true {
            if let body {
                let room = body.spare
                if room.isEmpty { return body }
                let got = recv(fd, room.baseAddress, room.count, Int32(MSG_DONTWAIT))
                if got < 0 && errno == EINTR { continue }
                if got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return nil }
                guard got > 0 else { throw AgentMessage.ParseError.malformed("the request ended early") }
                body.advance(got)
            } else {
                let got = prefix.withUnsafeMutableBytes {
                    recv(fd, $0.baseAddress! + prefixCount, 4 - prefixCount, Int32(MSG_DONTWAIT))
                }
                if got < 0 && errno == EINTR { continue }
                if got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return nil }
                guard got > 0 else { throw AgentMessage.ParseError.malformed("the request ended early") }
                prefixCount += got
                if prefixCount == 4 { body = try LockedBuffer(capacity: AgentMessage.frameLength(prefix)) }
            }
        }
    }

    func answer(_ frame: LockedBuffer, deadline: UInt64) {
        body = nil  // the request is wiped as soon as it is answered
        reply = frame
        self.deadline = deadline
    }

    /// Sends what the socket takes now. False once all is sent or the client went away.
    func sendSome() -> Bool {
        guard let reply else { return false }
        let bytes = reply.bytes
        while sent < bytes.count {
            let count = Glibc.send(
                fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return true }
            guard count > 0 else { return false }
            sent += count
        }
        return false
    }
}

/// A request as the agent reads it: the fields where they lie in the locked receive buffer (a
/// file key, a plaintext), never copied out; the frame checked by `AgentMessage.layout`.
struct AgentRequest {
    let body: LockedBuffer
    let kind: AgentMessage.Kind
    let ranges: [Range<Int>]

    init(body: LockedBuffer) throws {
        self.body = body
        (kind, ranges) = try AgentMessage.layout(body: body.bytes)
    }

    private func bytes(_ index: Int) -> UnsafeRawBufferPointer? {
        index < ranges.count ? UnsafeRawBufferPointer(rebasing: body.bytes[ranges[index]]) : nil
    }

    func field(_ index: Int, _ name: String, maximum: Int = AgentMessage.maximumFrameBytes) throws
        -> UnsafeRawBufferPointer
    {
        let field = bytes(index)
        try AgentMessage.checked(field?.count, name, maximum: maximum)
        return field!
    }

    func path(_ index: Int) throws -> String { try AgentMessage.path(bytes(index)) }

    func number(_ index: Int, _ name: String) throws -> UInt64 { try AgentMessage.number(bytes(index), name) }

    /// An answer's frame, written once into locked memory (an encoded array would be copied as it
    /// grows, and the plaintext with it).
    static func frame<Field: ContiguousBytes>(_ kind: AgentMessage.Kind, _ fields: [Field]) throws -> LockedBuffer {
        let length = 2 + fields.reduce(0) { total, field in total + 4 + field.withUnsafeBytes { $0.count } }
        let frame = try LockedBuffer(capacity: 4 + length)
        frame.append(AgentMessage.bigEndian(UInt32(length)) + [AgentMessage.version, kind.rawValue])
        for field in fields {
            field.withUnsafeBytes { bytes in
                frame.append(AgentMessage.bigEndian(UInt32(bytes.count)))
                frame.append(bytes)
            }
        }
        return frame
    }

    static func frame(_ kind: AgentMessage.Kind) throws -> LockedBuffer {
        try frame(kind, [[UInt8]]())
    }
}
