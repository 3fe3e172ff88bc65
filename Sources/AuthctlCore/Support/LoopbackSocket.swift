#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The socket code authctl's two loopback HTTP servers share (the browser sign-in's redirect
/// listener and `exec --serve`'s credentials endpoint): a listening socket bound to the loopback
/// address only, connections accepted non-blocking with a send timeout, a request head read
/// until its blank line, an answer sent whole.
package enum LoopbackSocket {
    /// Why a socket could not listen: the system's errno.
    package struct BindFailure: Error {
        package var errno: Int32
    }

    /// A non-blocking, close-on-exec TCP socket listening on 127.0.0.1 (or ::1) at `port` (0: a
    /// port the system picks, read back with `port(of:)`).
    package static func listen(family: Int32, port: UInt16) throws(BindFailure) -> Int32 {
        let fd = socket(
            family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw BindFailure(errno: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var result: Int32
        if family == AF_INET6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = in6addr_loopback
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0, Glibc.listen(fd, 16) == 0 else {
            let failure = errno
            close(fd)
            throw BindFailure(errno: failure)
        }
        return fd
    }

    /// The port a listening socket is bound to.
    package static func port(of fd: Int32) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return withUnsafeBytes(of: storage) { UInt16($0[2]) << 8 | UInt16($0[3]) }
    }

    /// The next waiting connection (nil once none waits: the listening socket is non-blocking),
    /// close-on-exec and non-blocking, with a send timeout so an answer cannot block for long.
    package static func acceptOne(_ listening: Int32) -> Int32? {
        let fd = accept(listening, nil, nil)
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// Reads what arrived on a non-blocking connection into `request`; true once the request head
    /// is whole, `limit` bytes were read or the peer closed (nothing more will come).
    package static func readHead(_ fd: Int32, into request: inout [UInt8], limit: Int) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, min(buffer.count, max(limit - request.count, 1)), 0)
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return false }
        if count > 0 { request += buffer[0..<count] }
        return headComplete(request) || request.count >= limit || count <= 0
    }

    /// The head ends with an empty line (CRLF CRLF, or LF LF from a lax client).
    package static func headComplete(_ bytes: [UInt8]) -> Bool {
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        guard bytes.count >= end.count else { return false }
        return Array(bytes.suffix(end.count)) == end
            || bytes.lastIndex(of: 10).map { i in i > 0 && bytes[i - 1] == 10 } == true
    }

    /// Sends an answer whole, blocking (bounded by the send timeout set at accept), then closes.
    /// What the peer sent beyond the head read (an oversized one) is drained first, up to 64 KiB:
    /// closing with unread bytes would reset the connection and lose the answer on the way.
    package static func answer(_ fd: Int32, _ bytes: Data) {
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        shutdown(fd, Int32(SHUT_WR))
        var buffer = [UInt8](repeating: 0, count: 16384)
        for _ in 0..<4 where recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
        close(fd)
    }
}
