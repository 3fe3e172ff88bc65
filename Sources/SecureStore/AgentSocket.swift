#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Where the key agent listens, and the checks both ends make before trusting that place.
///
/// The socket is `$XDG_RUNTIME_DIR/authctl/agent.sock`; without `XDG_RUNTIME_DIR` (containers,
/// CI, `su`), `/tmp/authctl-agent-<uid>/agent.sock`. Either directory must be a real directory
/// (not a link), the user's, closed to group and other; the agent creates it 0700. Another user
/// who creates `/tmp/authctl-agent-<uid>` first only makes the agent refuse to start (saying why).
public enum AgentSocket {
    public static let socketName = "agent.sock"
    static let lockName = "agent.lock"

    public static func directory(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"), runtime.count > 1 {
            return (runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime) + "/authctl"
        }
        return "/tmp/authctl-agent-\(geteuid())"
    }

    public static func path(environment: [String: String]) -> String {
        directory(environment: environment) + "/" + socketName
    }

    /// Checks `path` is a private directory of this user; creates it (0700) when `create` and it
    /// is missing. Returns false when it is missing and not created.
    @discardableResult
    static func checkDirectory(_ path: String, create: Bool) throws -> Bool {
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else { throw failure("cannot inspect \(path)") }
            guard create else { return false }
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw failure("cannot create \(path)") }
            guard lstat(path, &info) == 0 else { throw failure("cannot inspect \(path)") }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw SecureStoreError(
                .insecure,
                message:
                    "\(path) is not a directory (a link or a file); the key agent refuses it: remove it")
        }
        try PrivatePath.requireOwnAndClosed(
            info, path: path, refuser: "the key agent", mode: "700",
            otherOwnerHint: " (set XDG_RUNTIME_DIR to a private directory of yours)")
        return true
    }

    /// The uid of the process at the other end of a Unix socket (SO_PEERCRED), nil when unknown.
    static func peerUID(_ fd: Int32) -> uid_t? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }
        var credentials = (pid: Int32(0), uid: UInt32(0), gid: UInt32(0))
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        let soPeerCred: Int32 = 17  // SO_PEERCRED on Linux
        guard getsockopt(fd, SOL_SOCKET, soPeerCred, &credentials, &length) == 0,
            length == socklen_t(MemoryLayout.size(ofValue: credentials))
        else { return nil }
        return credentials.uid
    }

    static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw SecureStoreError(
                kind: .unavailable,
                message:
                    "the agent's socket path \(path) is longer than \(capacity - 1) bytes; set XDG_RUNTIME_DIR to a shorter directory"
            )
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return address
    }

    static func setTimeouts(_ fd: Int32, seconds: Int) {
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends all of `bytes`; false when the other end went away or timed out.
    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Exactly `count` bytes by `deadline` (`milliseconds()`); nil at end of stream, on an error
    /// or when the deadline passes (however the bytes trickle in).
    static func receive(_ fd: Int32, count: Int, deadline: UInt64) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            let now = milliseconds()
            guard now < deadline else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(deadline - now, 10_000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let got = bytes.withUnsafeMutableBytes {
                recv(fd, $0.baseAddress! + received, count - received, Int32(MSG_DONTWAIT))
            }
            if got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) { continue }
            guard got > 0 else { return nil }
            received += got
        }
        return bytes
    }

    /// One frame by `deadline`: its length prefix checked before anything else is read.
    static func receiveMessage(_ fd: Int32, deadline: UInt64) throws -> AgentMessage? {
        guard let prefix = receive(fd, count: 4, deadline: deadline) else { return nil }
        let length = try AgentMessage.frameLength(prefix)
        guard let body = receive(fd, count: length, deadline: deadline) else { return nil }
        return try AgentMessage.parse(body: body)
    }

    /// A monotonic clock in milliseconds, for deadlines.
    static func milliseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(max(spec.tv_sec, 0)) * 1000 + UInt64(max(spec.tv_nsec, 0)) / 1_000_000
    }

    static func failure(_ what: String) -> SecureStoreError {
        SecureStoreError(kind: .failed, message: "\(what): \(String(cString: strerror(errno)))")
    }
}
