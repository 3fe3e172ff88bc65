#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Reads a small file named by the user (a CA bundle, the configuration) without letting it
/// cost unbounded memory or time: only a regular file (a FIFO or a device would block or never
/// end; opened non-blocking so a FIFO cannot hang the open), and at most `maxBytes`.
public enum BoundedFile {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public enum Kind: Sendable { case missing, unreadable, notRegular, tooLarge }
        public var kind: Kind
        /// Why, in words (no path: the caller names the file).
        public var text: String
        public var description: String { text }
    }

    public static func read(_ path: String, maxBytes: Int) throws -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            let code = errno
            throw Failure(kind: code == ENOENT ? .missing : .unreadable, text: String(cString: strerror(code)))
        }
        defer { close(fd) }

        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Failure(kind: .unreadable, text: String(cString: strerror(errno))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            let what = (info.st_mode & S_IFMT) == S_IFDIR ? "it is a directory" : "it is not a regular file"
            throw Failure(kind: .notRegular, text: what)
        }
        guard Int(info.st_size) <= maxBytes else { throw tooLarge(maxBytes) }

        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(kind: .unreadable, text: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            data.append(contentsOf: buffer[0..<n])
            // The file may grow while it is read.
            if data.count > maxBytes { throw tooLarge(maxBytes) }
        }
        return data
    }

    private static func tooLarge(_ maxBytes: Int) -> Failure {
        Failure(kind: .tooLarge, text: "it is larger than \(byteCount(maxBytes))")
    }

    /// "1 MiB", "16 KiB", "12 bytes".
    public static func byteCount(_ bytes: Int) -> String {
        let mib = 1 << 20
        let kib = 1 << 10
        if bytes >= mib, bytes % mib == 0 { return "\(bytes / mib) MiB" }
        if bytes >= kib, bytes % kib == 0 { return "\(bytes / kib) KiB" }
        return bytes == 1 ? "1 byte" : "\(bytes) bytes"
    }
}
