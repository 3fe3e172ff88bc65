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
/// the others up or keep authctl past its own deadline.
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
            sockets.append(try LoopbackSocket.listen(family: AF_INET, port: port))
        } catch {
            throw Self.failure(error, port: port)
        }
        // ::1 too, for browsers that try it first for "localhost". A machine without IPv6 has only
        // 127.0.0.1; but where ::1 exists and the port is taken there, the browser may go to
        // whoever holds it: that fails as a taken IPv4 port does.
        do {
            sockets.append(try LoopbackSocket.listen(family: AF_INET6, port: port))
        } catch  where !Self.noIPv6Loopback(error.errno) {
            for fd in sockets { close(fd) }
            sockets = []
            throw Self.failure(error, port: port)
        } catch {}
    }

    /// The errors of a machine (or container) without an IPv6 loopback.
    private static func noIPv6Loopback(_ code: Int32) -> Bool {
        code == EAFNOSUPPORT || code == EADDRNOTAVAIL || code == EPROTONOSUPPORT
    }

    deinit {
        for fd in sockets { close(fd) }
    }

    private static func failure(_ error: LoopbackSocket.BindFailure, port: UInt16) -> AuthctlError {
        if error.errno == EADDRINUSE {
            return AuthctlError(
                .unavailable,
                """
                port \(port) on localhost is taken by another program, so the browser's redirect cannot reach authctl; \
                stop that program or use another port with --redirect-port N (or redirect_port in the profile), \
                registered as http://localhost:N/callback on the app client
                """)
        }
        return AuthctlError(
            .unavailable, "cannot listen on localhost port \(port): \(String(cString: strerror(error.errno)))")
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
            let body = Data(html.utf8)
            let head =
                "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.count)\r\n"
                + extraHeaders + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n"
            LoopbackSocket.answer(fd, Data(head.utf8) + body)
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
            guard let fd = LoopbackSocket.acceptOne(listening) else { return }
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
        var item = pending[index]
        guard LoopbackSocket.readHead(fd, into: &item.request, limit: Self.maxRequestBytes) else {
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
