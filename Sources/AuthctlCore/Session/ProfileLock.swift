#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` per profile in `$XDG_RUNTIME_DIR/authctl/` (else the user's cache
/// directory; only in a PrivateDirectory), held while a session is read to be replaced, refreshed,
/// stored or removed. Only `ProfileSession` takes it for sessions, and hands out a `LockedSession`
/// while it is held.
package enum ProfileLock {
    /// Where the lock may be, in order of preference.
    package static func directories(environment: [String: String]) -> [String] {
        var candidates: [String] = []
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            candidates.append(runtime + "/authctl")
        }
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            candidates.append(cache + "/authctl")
        } else {
            candidates.append(Paths.home(environment) + "/.cache/authctl")
        }
        return candidates
    }

    /// How long to wait for another process's refresh or sign-in (its own requests are bounded by
    /// their timeouts, but a sign-in may be waiting for a person to type a code).
    package static let maximumWait: Double = 120

    package static func withLock<T>(
        profile: String, environment: [String: String], waitingAtMost maximumWait: Double = maximumWait,
        _ body: () throws -> T
    ) throws -> T {
        let directory = try PrivateDirectory.first(of: directories(environment: environment), for: "the refresh lock")
        defer { directory.close() }
        let safeName = profile.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }
        let name = String(safeName) + ".lock"
        let path = directory.path + "/" + name
        let fd = try directory.openFile(name, flags: O_RDWR | O_CREAT)
        defer { close(fd) }
        try FileLock.exclusive(fd, path: path, waitingAtMost: maximumWait, polling: 50_000) {
            AuthctlError(
                .throttled,
                """
                another authctl process has been refreshing or signing in to profile \(profile) for over \
                \(Int(maximumWait)) s (it holds \(path)); try again when it has finished
                """)
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}

/// An exclusive `flock` of an open lock file, waited for (polling, so the wait has an end) for
/// at most `maximumWait` seconds.
package enum FileLock {
    package static func exclusive(
        _ fd: Int32, path: String, waitingAtMost maximumWait: Double, polling microseconds: UInt32,
        busy: () -> AuthctlError
    ) throws {
        let deadline = Date().addingTimeInterval(maximumWait)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw AuthctlError(.unexpected, "cannot lock \(path): \(String(cString: strerror(errno)))")
            }
            guard Date() < deadline else { throw busy() }
            usleep(microseconds)
        }
    }
}
