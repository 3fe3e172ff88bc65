#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A directory for authctl's lock and cache files that no other user can tamper with. Another user
/// who can write where it lives could pre-create it, or the lock inside it as a symlink, and so
/// take the lock (blocking every sign-in) or make authctl write through the link. So it is used only
/// when it is a real directory (not a symlink), owned by this user, mode 0700, in a parent that no
/// other user can rename it out of; files in it are opened with O_NOFOLLOW.
package struct PrivateDirectory {
    package let path: String
    /// Open on the directory itself (O_DIRECTORY | O_NOFOLLOW), for `openat`: what was checked is what is used.
    package let descriptor: Int32

    /// Why a candidate was not used, for the message when none is safe.
    package struct Unsafe: Error {
        package var path: String
        package var reason: String
    }

    /// Creates `path` (mode 0700, and its missing parents) unless it exists, then checks it.
    package static func open(_ path: String) -> Result<PrivateDirectory, Unsafe> {
        let parent = Paths.parent(of: path)
        try? FileManager.default.createDirectory(
            atPath: parent, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        var parentInfo = stat()
        guard stat(parent, &parentInfo) == 0 else {
            return .failure(Unsafe(path: path, reason: "\(parent): \(String(cString: strerror(errno)))"))
        }
        let othersMayWrite = parentInfo.st_mode & (S_IWGRP | S_IWOTH) != 0
        let sticky = parentInfo.st_mode & S_ISVTX != 0
        if parentInfo.st_uid != geteuid() && parentInfo.st_uid != 0 || othersMayWrite && !sticky {
            return .failure(Unsafe(path: path, reason: "\(parent) can be changed by other users"))
        }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            return .failure(Unsafe(path: path, reason: String(cString: strerror(errno))))
        }
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let reason =
                errno == ELOOP || errno == ENOTDIR
                ? "it is a symbolic link or not a directory" : String(cString: strerror(errno))
            return .failure(Unsafe(path: path, reason: reason))
        }
        var info = stat()
        let problem: String?
        if fstat(fd, &info) != 0 {
            problem = String(cString: strerror(errno))
        } else if info.st_uid != geteuid() {
            problem = "it belongs to uid \(info.st_uid), not to this user"
        } else if info.st_mode & 0o777 != 0o700 {
            problem = "its mode is \(String(info.st_mode & 0o777, radix: 8)), not 700 (chmod 700 \(path))"
        } else {
            problem = nil
        }
        if let problem {
            Glibc.close(fd)
            return .failure(Unsafe(path: path, reason: problem))
        }
        return .success(PrivateDirectory(path: path, descriptor: fd))
    }

    /// The first safe one of `candidates`, else exit 78 saying why each was refused.
    package static func first(of candidates: [String], for purpose: String) throws -> PrivateDirectory {
        var refusals: [Unsafe] = []
        for candidate in candidates {
            switch open(candidate) {
            case .success(let directory): return directory
            case .failure(let unsafe): refusals.append(unsafe)
            }
        }
        throw AuthctlError(
            .configuration,
            "no safe directory for \(purpose): "
                + refusals.map { "\($0.path): \($0.reason)" }.joined(separator: "; "))
    }

    /// Opens (creating, mode 0600) a regular file of this user's in the directory, never through a symlink.
    package func openFile(_ name: String, flags: Int32) throws -> Int32 {
        let fd = openat(descriptor, name, flags | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw AuthctlError(.configuration, "cannot open \(path)/\(name): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else {
            Glibc.close(fd)
            throw AuthctlError(.configuration, "\(path)/\(name) is not a regular file of this user's")
        }
        return fd
    }

    package func close() {
        Glibc.close(descriptor)
    }
}
