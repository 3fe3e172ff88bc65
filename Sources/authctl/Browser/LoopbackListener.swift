import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The browser sign-in's redirect listener: `http://localhost:PORT/callback` on 127.0.0.1 (and ::1
/// where the machine has it), nothing else. Small and strict: one GET request per connection,
/// read with a bound on size and time, `path` (`/callback`; `/signed-out` after a logout) handed
/// to the caller, everything else 404.
final class LoopbackListener {
    let port: UInt16
    let path: String
    private var sockets: [Int32] = []

    /// How much of a request is read (the request line and headers of a redirect fit easily).
    static let maxRequestBytes = 16 * 1024
    /// How long a connection may take to send its request.
    static let requestTimeout: Int = 5

    init(port: UInt16, path: String = "/callback") throws {
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
        var errno: Int32
        func authctlError(port: UInt16) -> AuthctlError {
            if errno == EADDRINUSE {
                return AuthctlError(.unavailable, """
                    port \(port) on localhost is taken by another program, so the browser's redirect cannot reach authctl; \
                    stop that program or use another port with --redirect-port N (or redirect_port in the profile), \
                    registered as http://localhost:N/callback on the app client
                    """)
            }
            return AuthctlError(.unavailable, "cannot listen on localhost port \(port): \(String(cString: strerror(errno)))")
        }
    }

    private static func bind(family: Int32, port: UInt16) throws -> Int32 {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
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
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard result == 0, listen(fd, 8) == 0 else {
            let failure = errno
            close(fd)
            throw BindFailure(errno: failure)
        }
        return fd
    }

    /// What woke `next`.
    enum Event {
        /// A GET of the listener's path: answer it with `respond`.
        case callback(query: String, connection: Connection)
        /// A line typed or piped on `input`.
        case line(String)
        case timedOut
    }

    /// One accepted connection, answered once.
    final class Connection {
        private var fd: Int32
        init(fd: Int32) { self.fd = fd }
        deinit { if fd >= 0 { close(fd) } }

        func respond(status: String, html: String) {
            guard fd >= 0 else { return }
            let body = Data(html.utf8)
            let head = "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.count)\r\n"
                + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n"
            let bytes = Data(head.utf8) + body
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(fd)
            fd = -1
        }
    }

    /// Waits for a callback request, a line on `input` (its fd, or nil), or `deadline`. Requests
    /// for other paths are answered 404 here and waiting goes on.
    func next(deadline: Date, input: LineReader?) -> Event {
        while true {
            if let line = input?.takeLine() { return .line(line) }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return .timedOut }
            var polled = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if let input, !input.closed { polled.append(pollfd(fd: input.fd, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&polled, nfds_t(polled.count), Int32(min(remaining, 3600) * 1000) + 1)
            guard ready > 0 else { continue }
            for entry in polled where entry.revents != 0 {
                if let input, entry.fd == input.fd {
                    input.fill()
                    continue
                }
                let connection = accept(entry.fd, nil, nil)
                guard connection >= 0 else { continue }
                _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                if let event = serve(connection) { return event }
            }
        }
    }

    /// Reads one request; returns the callback, or answers anything else itself.
    private func serve(_ fd: Int32) -> Event? {
        var timeout = timeval(tv_sec: Self.requestTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connection = Connection(fd: fd)
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while request.count < Self.maxRequestBytes, !Self.headersComplete(request) {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            request += buffer[0..<count]
        }
        guard let lineEnd = request.firstIndex(of: UInt8(ascii: "\r")) ?? request.firstIndex(of: UInt8(ascii: "\n")) else {
            connection.respond(status: "400 Bad Request", html: BrowserPages.page("Bad request", "This is authctl's sign-in listener."))
            return nil
        }
        let parts = String(decoding: request[..<lineEnd], as: UTF8.self).split(separator: " ")
        guard parts.count == 3, parts[0] == "GET" else {
            connection.respond(status: "404 Not Found", html: BrowserPages.page("Not found", "This is authctl's sign-in listener."))
            return nil
        }
        let target = parts[1]
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard path[0] == self.path else {
            connection.respond(status: "404 Not Found", html: BrowserPages.page("Not found", "This is authctl's sign-in listener."))
            return nil
        }
        return .callback(query: path.count > 1 ? String(path[1]) : "", connection: connection)
    }

    private static func headersComplete(_ bytes: [UInt8]) -> Bool {
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        guard bytes.count >= end.count else { return false }
        return Array(bytes.suffix(end.count)) == end || bytes.lastIndex(of: 10).map { i in i > 0 && bytes[i - 1] == 10 } == true
    }
}

/// Lines from a descriptor (the terminal or standard input), read only when `poll` says so.
final class LineReader {
    let fd: Int32
    private(set) var closed = false
    private var pending = [UInt8]()
    static let maxLine = 64 * 1024

    init(fd: Int32) { self.fd = fd }

    func fill() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        if count <= 0 { closed = true; return }
        pending += buffer[0..<count]
        if pending.count > Self.maxLine && !pending.contains(10) { pending.removeAll() }
    }

    func takeLine() -> String? {
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
enum BrowserPages {
    static func page(_ title: String, _ text: String) -> String {
        let escape = { (s: String) in
            s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        return """
            <!DOCTYPE html><html><head><meta charset="utf-8"><title>authctl: \(escape(title))</title></head>\
            <body><h1>\(escape(title))</h1><p>\(escape(text))</p></body></html>
            """
    }
}
