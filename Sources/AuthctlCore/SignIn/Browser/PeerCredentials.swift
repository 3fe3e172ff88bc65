#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The uid of the process at the other end of a loopback TCP connection. SO_PEERCRED is for Unix
/// sockets only; for TCP the kernel lists every socket with its owner in `/proc/net/tcp` and
/// `/proc/net/tcp6`: the peer's socket is the one whose local address is this connection's remote
/// one and whose remote address is this connection's local one.
package enum PeerCredentials {
    /// Nil when the connection's addresses cannot be read or no such socket is listed.
    package static func uid(ofPeerOf fd: Int32) -> uid_t? {
        guard let local = address(fd, getsockname), let remote = address(fd, getpeername) else { return nil }
        let file = local.count > 13 ? "/proc/net/tcp6" : "/proc/net/tcp"
        guard let table = readProcFile(file) else { return nil }
        return uid(in: table, peerLocal: remote, peerRemote: local)
    }

    /// A /proc file read to its end: it reports size 0, and one read returns a page at most,
    /// while a busy machine lists thousands of sockets (capped at 64 MiB).
    private static func readProcFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while bytes.count < 64 << 20 {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The uid column of the row whose local and remote addresses are these (`/proc/net/tcp`'s hex form).
    package static func uid(in table: String, peerLocal: String, peerRemote: String) -> uid_t? {
        for line in table.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count > 7, columns[1] == peerLocal, columns[2] == peerRemote else { continue }
            return uid_t(columns[7])
        }
        return nil
    }

    /// `getsockname`/`getpeername` as `/proc/net/tcp*` writes addresses: the address's 32-bit
    /// words each in the machine's byte order, in hex, then `:` and the port in hex.
    private static func address(
        _ fd: Int32, _ get: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { get(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafeBytes(of: storage) { raw -> String? in
            switch family {
            case AF_INET:
                let port = UInt16(raw[2]) << 8 | UInt16(raw[3])
                return words(Array(raw[4..<8])) + ":" + hex(UInt32(port), digits: 4)
            case AF_INET6:
                let port = UInt16(raw[2]) << 8 | UInt16(raw[3])
                return words(Array(raw[8..<24])) + ":" + hex(UInt32(port), digits: 4)
            default:
                return nil
            }
        }
    }

    /// Each group of four bytes (network order) as the kernel prints a `__be32` with `%08X`.
    private static func words(_ bytes: [UInt8]) -> String {
        stride(from: 0, to: bytes.count, by: 4).map { start in
            let word = bytes[start..<start + 4].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return hex(word, digits: 8)
        }.joined()
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
