#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The browser sign-in's redirect listener: `http://localhost:PORT/callback` on 127.0.0.1 (and ::1
/// where the machine has it), nothing else. Small and strict: one GET request per connection,
/// read with a bound on size and time, `path` (`/callback`; `/signed-out` after a logout) handed
/// to the caller, `/start` redirected to `startURL` (the authorize URL, kept off the browser's
/// argv), everything else 404. Only this user's processes are served: any local
/// user can connect to a loopback port, so each peer's uid is looked up
/// (`PeerCredentials`) and another user's request is answered 403 and otherwise ignored.
/// Connections are served side by side, each with its own deadline, so a slow one cannot hold
/// the others up or keep authctl past its own deadline (finding 3).
package final class LoopbackListener {
    package let port: UInt16
    package let path: String
    /// Where `GET /start` sends this user's browser; nil: no `/start`.
    package var startURL: String?
    private var sockets: [Int32] = []
    private var pending: [Pending] = []

    /// How much of a request is read (the request line and headers of a redirect fit easily).
    package static let maxRequestBytes = 16 * 1024
    /// How long a connection may take to send its request.
    package static let requestTimeout: Double = 5
    /// Connections read at once; beyond it the oldest is dropped.
    package static let maxPending = 32

    package init(port: UInt16, path: String = "/callback") throws {
        self.port = port
        self.path = path
        do {
            sockets.append(try Self.bind(family: AF_INET, port: port))
        } catch let error as BindFailure {
            throw error.authctlError(port: port)
        }
        // ::1 too, for browsers that try it first for "localhost". A machine without IPv6 has only
        // 127.0.0.1; but where ::1 exists and the port is taken there, the browser may go to
        // whoever holds it (finding 4): that fails as a taken IPv4 port does.
        do {
            sockets.append(try Self.bind(family: AF_INET6, port: port))
        } catch let error as BindFailure where !Self.noIPv6Loopback(error.errno) {
            for fd in sockets { close(fd) }
            sockets = []
            throw error.authctlError(port: port)
        } catch {}
    }

    /// The errors of a machine (or container) without an IPv6 loopback.
    private static func noIPv6Loopback(_ code: Int32) -> Bool {
        code == EAFNOSUPPORT || code == EADDRNOTAVAIL || code == EPROTONOSUPPORT
    }

    deinit {
        for fd in sockets { close(fd) }
    }

    private struct BindFailure: Error {
        package var errno: Int32
        package func authctlError(port: UInt16) -> AuthctlError {
            if errno == EADDRINUSE {
                return AuthctlError(
                    .unavailable,
                    """
                    port \(port) on localhost is taken by another program, so the browser's redirect cannot reach authctl; \
                    stop that program or use another port with --redirect-port N (or redirect_port in the profile), \
                    registered as http://localhost:N/callback on the app client
                    """)
            }
            return AuthctlError(
                .unavailable, "cannot listen on localhost port \(port): \(String(cString: strerror(errno)))")
        }
    }

    private static func bind(family: Int32, port: UInt16) throws -> Int32 {
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
        guard result == 0, listen(fd, 16) == 0 else {
            let failure = errno
            close(fd)
            throw BindFailure(errno: failure)
        }
        return fd
    }

    /// What woke `next`.
    package enum Event {
        /// A GET of the listener's path from this user: answer it with `respond`.
        case callback(query: String, connection: Connection)
        /// A line typed or piped on `input`.
        case line(String)
        case timedOut
    }

    /// One accepted connection, answered once.
    package final class Connection {
        private var fd: Int32
        package init(fd: Int32) { self.fd = fd }
        deinit { if fd >= 0 { close(fd) } }

        package func respond(status: String, html: String, extraHeaders: String = "") {
            guard fd >= 0 else { return }
            // Answers are small: sent blocking, bounded by the send timeout set at accept.
            let flags = fcntl(fd, F_GETFL)
            if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
            let body = Data(html.utf8)
            let head =
                "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.count)\r\n"
                + extraHeaders + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n"
            let bytes = Data(head.utf8) + body
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(fd)
            fd = -1
        }

        package var descriptor: Int32 { fd }
    }

    /// A connection whose request is still arriving.
    private struct Pending {
        package var connection: Connection
        package var request: [UInt8] = []
        package var deadline: Date
    }

    /// Waits for a callback request from this user, a line on `input` (its fd, or nil), or
    /// `deadline`, which is kept whatever the connections do. Everything else is answered here
    /// (403 another user, 302 `/start`, 404 other paths, 400 malformed) and waiting goes on.
    package func next(deadline: Date, input: LineReader?) -> Event {
        while true {
            if let line = input?.takeLine() { return .line(line) }
            let now = Date()
            let remaining = deadline.timeIntervalSince(now)
            guard remaining > 0 else { return .timedOut }
            pending.removeAll { $0.deadline <= now }
            var polled = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            polled += pending.map { pollfd(fd: $0.connection.descriptor, events: Int16(POLLIN), revents: 0) }
            if let input, !input.closed { polled.append(pollfd(fd: input.fd, events: Int16(POLLIN), revents: 0)) }
            let wait = ([remaining] + pending.map { $0.deadline.timeIntervalSince(now) }).min() ?? remaining
            let ready = poll(&polled, nfds_t(polled.count), Int32(min(max(wait, 0), 3600) * 1000) + 1)
            guard ready > 0 else { continue }
            for entry in polled where entry.revents != 0 {
                if let input, entry.fd == input.fd {
                    input.fill()
                } else if sockets.contains(entry.fd) {
                    acceptAll(entry.fd)
                } else if let event = read(from: entry.fd) {
                    return event
                }
            }
        }
    }

    private func acceptAll(_ listening: Int32) {
        while true {
            // The listening socket is non-blocking: accept ends with EAGAIN once all are taken.
            let fd = accept(listening, nil, nil)
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let connection = Connection(fd: fd)
            // Another local user's connection is refused before a byte of it is read.
            guard PeerCredentials.uid(ofPeerOf: fd) == getuid() else {
                connection.respond(
                    status: "403 Forbidden",
                    html: BrowserPages.page(
                        "Forbidden", "This is another user's sign-in listener."))
                continue
            }
            if pending.count >= Self.maxPending { pending.removeFirst() }
            pending.append(Pending(connection: connection, deadline: Date().addingTimeInterval(Self.requestTimeout)))
        }
    }

    /// Reads what arrived on a pending connection; once its request is whole, answers it or
    /// hands the callback over.
    private func read(from fd: Int32) -> Event? {
        guard let index = pending.firstIndex(where: { $0.connection.descriptor == fd }) else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return nil }
        var item = pending[index]
        if count > 0 { item.request += buffer[0..<count] }
        let whole = Self.headersComplete(item.request) || item.request.count >= Self.maxRequestBytes || count <= 0
        guard whole else {
            pending[index] = item
            return nil
        }
        pending.remove(at: index)
        return serve(item.request, item.connection)
    }

    /// One whole request; returns the callback, or answers anything else itself.
    private func serve(_ request: [UInt8], _ connection: Connection) -> Event? {
        guard let lineEnd = request.firstIndex(of: UInt8(ascii: "\r")) ?? request.firstIndex(of: UInt8(ascii: "\n"))
        else {
            connection.respond(
                status: "400 Bad Request", html: BrowserPages.page("Bad request", "This is authctl's sign-in listener.")
            )
            return nil
        }
        let parts = String(decoding: request[..<lineEnd], as: UTF8.self).split(separator: " ")
        guard parts.count == 3, parts[0] == "GET" else {
            connection.respond(
                status: "404 Not Found", html: BrowserPages.page("Not found", "This is authctl's sign-in listener."))
            return nil
        }
        let target = parts[1]
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        if path[0] == "/start", let startURL {
            connection.respond(
                status: "302 Found", html: BrowserPages.page("Signing in", "On to the sign-in page."),
                extraHeaders: "Location: \(startURL)\r\n")
            return nil
        }
        guard path[0] == self.path else {
            connection.respond(
                status: "404 Not Found", html: BrowserPages.page("Not found", "This is authctl's sign-in listener."))
            return nil
        }
        return .callback(query: path.count > 1 ? String(path[1]) : "", connection: connection)
    }

    private static func headersComplete(_ bytes: [UInt8]) -> Bool {
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        guard bytes.count >= end.count else { return false }
        return Array(bytes.suffix(end.count)) == end
            || bytes.lastIndex(of: 10).map { i in i > 0 && bytes[i - 1] == 10 } == true
    }
}

/// Lines from a descriptor (the terminal or standard input), read only when `poll` says so.
package final class LineReader {
    package let fd: Int32
    package private(set) var closed = false
    private var pending = [UInt8]()
    package static let maxLine = 64 * 1024

    package init(fd: Int32) { self.fd = fd }

    package func fill() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        if count <= 0 {
            closed = true
            return
        }
        pending += buffer[0..<count]
        if pending.count > Self.maxLine && !pending.contains(10) { pending.removeAll() }
    }

    package func takeLine() -> String? {
        if let newline = pending.firstIndex(of: 10) {
            let line = String(decoding: pending[..<newline], as: UTF8.self)
            pending.removeSubrange(...newline)
            return line
        }
        if closed, !pending.isEmpty {
            defer { pending.removeAll() }
            return String(decoding: pending, as: UTF8.self)
        }
        return nil
    }
}

/// The short pages the listener answers with.
package enum BrowserPages {
    package static func page(_ title: String, _ text: String) -> String {
        let escape = { (s: String) in
            s.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
                .replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
        }
        return """
            <!DOCTYPE html><html><head><meta charset="utf-8"><title>authctl: \(escape(title))</title></head>\
            <body><h1>\(escape(title))</h1><p>\(escape(text))</p></body></html>
            """
    }
}
