#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The file store's side of the key agent: asks it to open and seal files of a directory, and
/// gives it keys (`authctl unlock`, or a passphrase typed at a prompt). Checks the socket's
/// directory and the agent's uid (SO_PEERCRED) before sending anything.
public struct KeyAgentClient: Sendable {
    public let socketPath: String
    let directory: String

    /// Why no agent answered.
    public enum Absence: Equatable, Sendable {
        /// No socket: no agent runs (never started, or it exited after forgetting its keys).
        case notRunning
        /// A socket nobody listens on: the agent was killed or crashed.
        case gone
    }

    public enum Reply: Sendable {
        case answer(AgentMessage)
        case absent(Absence)
    }

    public init(environment: [String: String]) {
        self.init(directory: AgentSocket.directory(environment: environment))
    }

    init(directory: String) {
        self.directory = directory
        socketPath = directory + "/" + AgentSocket.socketName
    }

    /// Every place an agent of this user may listen, this environment's first: an agent started
    /// where `XDG_RUNTIME_DIR` was unset (su, cron, ssh without pam_systemd) listens under `/tmp`,
    /// one started with it under the runtime directory (`/run/user/UID` when it is the usual one).
    public static func everyPlace(environment: [String: String]) -> [KeyAgentClient] {
        var directories = [AgentSocket.directory(environment: environment)]
        for other in [
            AgentSocket.directory(environment: [:]),
            AgentSocket.directory(environment: ["XDG_RUNTIME_DIR": "/run/user/\(geteuid())"]),
        ] where !directories.contains(other) {
            directories.append(other)
        }
        return directories.map(KeyAgentClient.init(directory:))
    }

    /// Throws at once when the socket's path does not fit a Unix socket address (108 bytes), so
    /// nothing waits for an agent that could never listen there.
    public func checkPath() throws {
        _ = try AgentSocket.address(socketPath)
    }

    /// One request and its answer. Throws when the place is unsafe or the agent misbehaves.
    public func send(_ request: AgentMessage) throws -> Reply {
        try checkPath()
        guard try AgentSocket.checkDirectory(directory, create: false) else { return .absent(.notRunning) }
        var info = stat()
        guard lstat(socketPath, &info) == 0 else {
            if errno == ENOENT { return .absent(.notRunning) }
            throw AgentSocket.failure("cannot inspect \(socketPath)")
        }
        guard (info.st_mode & S_IFMT) == S_IFSOCK, info.st_uid == geteuid() else {
            throw SecureStoreError(
                .insecure,
                message:
                    "\(socketPath) is not a socket of this user; authctl does not talk to it: remove it")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw AgentSocket.failure("cannot create a socket") }
        defer { close(fd) }
        var address = try AgentSocket.address(socketPath)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            if errno == ECONNREFUSED || errno == ENOENT { return .absent(.gone) }
            throw AgentSocket.failure("cannot connect to the key agent at \(socketPath)")
        }
        guard AgentSocket.peerUID(fd) == geteuid() else {
            throw SecureStoreError(
                .insecure,
                message: "the process listening on \(socketPath) is not this user's; authctl does not talk to it")
        }
        // The whole exchange within 10 s (each read and write waits at most what is left).
        let deadline = AgentSocket.milliseconds() + 10_000
        AgentSocket.setTimeouts(fd, seconds: 10)
        var frame = request.encoded()
        defer { frame.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        guard AgentSocket.send(fd, frame) else {
            throw SecureStoreError(
                kind: .failed,
                message: "the key agent at \(socketPath) closed the connection before the request was sent")
        }
        let answer: AgentMessage?
        do {
            answer = try AgentSocket.receiveMessage(fd, deadline: deadline)
        } catch {
            throw SecureStoreError(
                kind: .failed, message: "the key agent at \(socketPath) answered something unreadable")
        }
        guard let answer else {
            throw SecureStoreError(
                kind: .failed,
                message:
                    "the key agent at \(socketPath) closed the connection without answering (killed meanwhile?)")
        }
        return .answer(answer)
    }

    /// The agent's status, nil when none runs.
    public func status() throws -> AgentStatus? {
        guard case .answer(let answer) = try send(AgentMessage(.status)), answer.kind == .ok else { return nil }
        do { return try AgentStatus.parse(answer) } catch {
            throw SecureStoreError(
                kind: .failed, message: "the key agent at \(socketPath) answered an unreadable status")
        }
    }

    /// Asks the agent to forget every key. False when none was running.
    public func lock() throws -> Bool {
        guard case .answer = try send(AgentMessage(.lock)) else { return false }
        return true
    }
}
