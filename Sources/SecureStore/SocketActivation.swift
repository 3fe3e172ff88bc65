#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// systemd's socket activation (sd_listen_fds(3)) for the key agent: the listening socket is
/// handed over as descriptor 3, with LISTEN_PID and LISTEN_FDS, instead of bound by the agent.
///
/// Read without libsystemd (two variables and one descriptor), and stricter than sd_listen_fds:
/// variables meant for another process, or a count other than one, are refused rather than
/// ignored, because an agent that then bound its own socket would replace the one systemd listens
/// on (it looks like a dead agent's). The descriptor is checked before use: a listening Unix
/// stream socket bound to the very path clients connect to (`AgentSocket.path`).
public enum SocketActivation {
    /// SD_LISTEN_FDS_START: the first descriptor systemd hands over.
    public static let firstDescriptor: Int32 = 3
    /// What systemd sets; unset once read, so nothing the agent starts inherits them.
    static let variables = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]

    public enum Handover: Equatable, Sendable {
        /// Not socket-activated: the agent binds its own socket.
        case none
        /// The descriptor systemd handed over, not yet checked (`KeyAgentServer.listen` checks it).
        case listener(Int32)
    }

    /// Why the agent takes no socket from its environment. It then exits (78) and binds nothing.
    public enum Refusal: Error, Equatable, Sendable {
        /// One of LISTEN_PID and LISTEN_FDS without the other.
        case incomplete(missing: String)
        /// The variable is not a decimal number (its value is not repeated).
        case malformed(variable: String)
        /// LISTEN_PID names another process: the descriptors were meant for it.
        case otherProcess(listenPID: Int32, pid: Int32)
        /// LISTEN_FDS other than 1.
        case descriptorCount(Int32)
        case notOpen
        case notASocket
        case notUnix
        case notStream
        case notListening
        /// Bound elsewhere than where clients look (`found` escaped, an abstract address named so).
        case otherPath(found: String, expected: String)
        /// Bound to the right path, but no socket of this user is there now.
        case socketFileGone(String)

        public var message: String {
            let handed = "descriptor \(SocketActivation.firstDescriptor), handed over by socket activation,"
            let refused = "the key agent refuses it"
            switch self {
            case .incomplete(let missing):
                return "\(missing) is not set but the other socket-activation variable is; \(refused) "
                    + "(start it from authctl-agent.socket, or without LISTEN_PID and LISTEN_FDS)"
            case .malformed(let variable):
                return "\(variable) is not a decimal number; \(refused)"
            case .otherProcess(let listenPID, let pid):
                return "LISTEN_PID=\(listenPID) names another process than this agent (pid \(pid)): the socket "
                    + "handed over is not for it; \(refused) and binds none (run it as authctl-agent.service's "
                    + "ExecStart, or unset LISTEN_PID and LISTEN_FDS)"
            case .descriptorCount(let count):
                return "socket activation handed over \(count) descriptors (LISTEN_FDS); the key agent refuses "
                    + "them: it takes exactly one, its listening socket (one ListenStream= in authctl-agent.socket)"
            case .notOpen:
                return "\(handed) is not open; \(refused)"
            case .notASocket:
                return "\(handed) is not a socket; \(refused)"
            case .notUnix:
                return "\(handed) is not a Unix-domain socket (TCP?); \(refused): it listens only on its own path"
            case .notStream:
                return "\(handed) is not a stream socket (ListenStream=); \(refused)"
            case .notListening:
                return "\(handed) is not listening (connected or unbound); \(refused)"
            case .otherPath(let found, let expected):
                return "\(handed) listens on \(found), not on \(expected) where authctl's clients look "
                    + "(ListenStream=%t/authctl/agent.sock, with this user's XDG_RUNTIME_DIR); \(refused)"
            case .socketFileGone(let path):
                return "\(handed) is bound to \(path), but no socket of this user is there now; \(refused)"
            }
        }
    }

    /// What the environment hands over. Pure: `processID` is the caller's pid.
    public static func handover(environment: [String: String], processID: Int32) throws -> Handover {
        let listenPID = environment["LISTEN_PID"]
        let listenFDs = environment["LISTEN_FDS"]
        guard listenPID != nil || listenFDs != nil else { return .none }
        guard let listenPID else { throw Refusal.incomplete(missing: "LISTEN_PID") }
        guard let listenFDs else { throw Refusal.incomplete(missing: "LISTEN_FDS") }
        guard let owner = decimal(listenPID), owner > 0 else { throw Refusal.malformed(variable: "LISTEN_PID") }
        guard owner == processID else { throw Refusal.otherProcess(listenPID: owner, pid: processID) }
        guard let count = decimal(listenFDs) else { throw Refusal.malformed(variable: "LISTEN_FDS") }
        guard count == 1 else { throw Refusal.descriptorCount(count) }
        return .listener(firstDescriptor)
    }

    /// `handover` for this process, from its environment, which loses the variables whatever the
    /// outcome (as sd_listen_fds(1) does): nothing the agent starts inherits them.
    public static func handoverToThisProcess() throws -> Handover {
        var environment: [String: String] = [:]
        for name in variables {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        defer { for name in variables { unsetenv(name) } }
        return try handover(environment: environment, processID: getpid())
    }

    /// 1 to 10 ASCII digits within Int32 (no sign, no spaces).
    static func decimal(_ text: String) -> Int32? {
        guard (1...10).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int32(text)
    }

    /// Checks that `descriptor` is a listening Unix stream socket bound to `path`, and marks it
    /// close-on-exec (systemd hands it over inheritable).
    static func checkListener(_ descriptor: Int32, path: String) throws {
        let flags = fcntl(descriptor, F_GETFD)
        guard flags >= 0 else { throw Refusal.notOpen }
        guard fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) == 0 else {
            throw AgentSocket.failure("cannot mark descriptor \(descriptor) close-on-exec")
        }
        let soDomain: Int32 = 39  // SO_DOMAIN on Linux
        let soAcceptConn: Int32 = 30  // SO_ACCEPTCONN on Linux
        guard let type = option(descriptor, SO_TYPE) else {
            if errno == ENOTSOCK { throw Refusal.notASocket }
            throw AgentSocket.failure("cannot inspect descriptor \(descriptor)")
        }
        guard option(descriptor, soDomain) == AF_UNIX else { throw Refusal.notUnix }
        guard type == Int32(SOCK_STREAM.rawValue) else { throw Refusal.notStream }
        guard option(descriptor, soAcceptConn) == 1 else { throw Refusal.notListening }
        let found = boundPath(descriptor)
        guard found == Array(path.utf8) else {
            throw Refusal.otherPath(found: found.map(describe) ?? "an address with no path", expected: path)
        }
    }

    static func option(_ descriptor: Int32, _ name: Int32) -> Int32? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, name, &value, &length) == 0 else { return nil }
        return value
    }

    /// The filesystem path a Unix socket is bound to (nil when unbound or abstract).
    static func boundPath(_ descriptor: Int32) -> [UInt8]? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let pathOffset = MemoryLayout<sa_family_t>.size
        guard named == 0, Int(length) > pathOffset, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let bytes = withUnsafeBytes(of: &address.sun_path) { Array($0.prefix(Int(length) - pathOffset)) }
        guard let first = bytes.first, first != 0 else { return nil }
        return Array(bytes.prefix { $0 != 0 })
    }

    /// A path from the kernel, shown with anything but printable ASCII escaped.
    static func describe(_ bytes: [UInt8]) -> String {
        bytes.map { (0x21...0x7E).contains($0) ? String(UnicodeScalar($0)) : "\\x" + Hex.encode([$0]) }.joined()
    }
}
