#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The random value `exec --serve` hands its command as AWS_CONTAINER_AUTHORIZATION_TOKEN: 32
/// bytes from the system's random source (`SystemRandomNumberGenerator`: getrandom(2)), as hex.
package struct AuthorizationToken: Sendable {
    package let text: String
    private let bytes: [UInt8]

    package init(text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
    }

    package static func random() -> AuthorizationToken {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return AuthorizationToken(text: random.map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined())
    }

    /// In constant time for the token's length: every byte is compared whatever differs first,
    /// so the time taken says nothing of how much of a guess was right.
    package func matches(_ given: [UInt8]) -> Bool {
        var difference = UInt8(given.count == bytes.count ? 0 : 1)
        for index in bytes.indices {
            difference |= bytes[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }
}

/// One request to the credentials endpoint, judged from its head alone: only `GET` of a known
/// path, with the loopback Host the command was given (a DNS-rebinding page's request names
/// its own host) and the authorization token, no body, within `maxHeadBytes`.
package enum EndpointRequest {
    /// What a request may ask for.
    package enum Route: Equatable, Sendable {
        /// The container-credentials document (`AWS_CONTAINER_CREDENTIALS_FULL_URI`).
        case credentials
        /// One of the session's tokens, as text.
        case token(TokenType)
    }

    /// A request refused: the HTTP status and why, for the answer's message.
    package struct Refusal: Error, Equatable, Sendable {
        package var status: Int
        package var message: String
    }

    package static let credentialsPath = "/credentials"
    package static let paths: [String: Route] = [
        credentialsPath: .credentials, "/tokens/access": .token(.access), "/tokens/id": .token(.id),
    ]
    /// A request head the SDKs send is a few hundred bytes.
    package static let maxHeadBytes = 8 * 1024
    /// Header lines beyond this are refused (with the byte bound, a request cannot be costly).
    package static let maxHeaderLines = 64

    /// The route a request's head asks for, or why it is refused. The token is checked before the
    /// path, so a request without it learns nothing of what is served.
    package static func route(_ head: [UInt8], port: UInt16, token: AuthorizationToken) -> Result<Route, Refusal> {
        guard LoopbackSocket.headComplete(head) else {
            return head.count >= maxHeadBytes
                ? .failure(Refusal(status: 431, message: "the request's head is larger than \(maxHeadBytes) bytes"))
                : .failure(Refusal(status: 400, message: "the request's head is incomplete"))
        }
        let lines = head.split(separator: 10, omittingEmptySubsequences: false).map { line in
            line.last == 13 ? Array(line.dropLast()) : Array(line)
        }
        let requestLine = lines[0].split(separator: 32, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        guard requestLine.count == 3, requestLine[2] == "HTTP/1.1" || requestLine[2] == "HTTP/1.0" else {
            return .failure(Refusal(status: 400, message: "malformed request line"))
        }
        guard requestLine[0] == "GET" else {
            return .failure(Refusal(status: 405, message: "only GET is answered"))
        }
        var fields: [String: [UInt8]] = [:]
        for line in lines.dropFirst() where !line.isEmpty {
            guard fields.count < maxHeaderLines, let colon = line.firstIndex(of: 58), colon > 0,
                line.first != 32, line.first != 9
            else { return .failure(Refusal(status: 400, message: "malformed header line")) }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            guard fields[name] == nil || !["host", "authorization", "content-length"].contains(name) else {
                return .failure(Refusal(status: 400, message: "repeated \(name) header"))
            }
            fields[name] = Array(trimmed(line[(colon + 1)...]))
        }
        guard let host = fields["host"].map({ String(decoding: $0, as: UTF8.self).lowercased() }) else {
            return .failure(Refusal(status: 400, message: "no Host header"))
        }
        guard ["127.0.0.1", "localhost"].contains(where: { host == $0 || host == "\($0):\(port)" }) else {
            return .failure(Refusal(status: 403, message: "this endpoint answers only for 127.0.0.1:\(port)"))
        }
        if fields["transfer-encoding"] != nil || fields["content-length"].map({ $0 != Array("0".utf8) }) == true {
            return .failure(Refusal(status: 400, message: "a request body is not accepted"))
        }
        guard let given = fields["authorization"] else {
            return .failure(Refusal(status: 401, message: "no Authorization header"))
        }
        guard token.matches(given) else {
            return .failure(Refusal(status: 403, message: "wrong authorization token"))
        }
        guard let route = paths[requestLine[1]] else {
            return .failure(Refusal(status: 404, message: "no such path"))
        }
        return .success(route)
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == 32 || first == 9 { slice = slice.dropFirst() }
        while let last = slice.last, last == 32 || last == 9 { slice = slice.dropLast() }
        return slice
    }
}

/// An HTTP/1.1 answer of the endpoint: a status, a body, never kept alive.
package struct EndpointAnswer: Equatable, Sendable {
    package var status: Int
    package var contentType: String
    package var body: String
    package var retryAfter: Int? = nil

    private static let reasons = [
        200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 431: "Request Header Fields Too Large", 503: "Service Unavailable",
    ]

    /// An error as the SDKs log it: a JSON body with a message and a code, never a secret.
    package static func error(_ status: Int, _ message: String, retryAfter: Int? = nil) -> EndpointAnswer {
        let code = status == 503 ? "CredentialsUnavailable" : (reasons[status] ?? "Error").replacing(" ", with: "")
        return EndpointAnswer(
            status: status, contentType: "application/json",
            body: "{\"code\":\(Format.json(code)),\"message\":\(Format.json(message))}", retryAfter: retryAfter)
    }

    package var bytes: Data {
        var head = "HTTP/1.1 \(status) \(Self.reasons[status] ?? "Error")\r\nContent-Type: \(contentType)\r\n"
        head += "Content-Length: \(body.utf8.count)\r\nCache-Control: no-store\r\nConnection: close\r\n"
        if status == 405 { head += "Allow: GET\r\n" }
        if let retryAfter { head += "Retry-After: \(retryAfter)\r\n" }
        return Data((head + "\r\n" + body).utf8)
    }
}
