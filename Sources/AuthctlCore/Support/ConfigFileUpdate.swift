#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

extension ConfigFile {
    /// How long a writer waits for another one (a write takes milliseconds; a longer hold is a
    /// stuck process, said so rather than waited on forever).
    package static let lockWait: Double = 10

    /// A read-modify-write of config.toml under an exclusive `flock` of `.config.toml.lock` beside
    /// it: the file is read fresh once the lock is held, changed, and replaced atomically, so two
    /// processes writing at once (a store recorded beside a `configure`, say) each keep the
    /// other's change instead of the last one to rename winning.
    @discardableResult
    package static func update(path: String, _ change: (inout ConfigFile) throws -> Void) throws -> ConfigFile {
        let parent = Paths.parent(of: path)
        let directory = parent.isEmpty ? "." : parent
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw AuthctlError(.configuration, "cannot create \(directory): \(ErrorText.reason(error))")
        }
        let lockPath = directory + "/.config.toml.lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw AuthctlError(.configuration, "cannot open \(lockPath): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        try FileLock.exclusive(fd, path: lockPath, waitingAtMost: lockWait, polling: 20_000) {
            AuthctlError(
                .throttled,
                """
                another authctl process has been writing \(path) for over \(Int(lockWait)) s (it holds \(lockPath)); \
                try again when it has finished
                """)
        }
        defer { flock(fd, LOCK_UN) }
        var file = try load(path: path, fresh: true)
        try change(&file)
        try file.save()
        return file
    }
}
