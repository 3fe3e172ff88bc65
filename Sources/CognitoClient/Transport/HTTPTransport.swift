#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One HTTP request as CognitoClient sends it. The body is copied by the transport.
public struct HTTPRequest: Sendable {
    public var url: String
    public var method: String
    /// Header names as they go on the wire; order preserved.
    public var headers: [(name: String, value: String)]
    public var body: Data

    public init(
        url: String, method: String = "POST", headers: [(name: String, value: String)] = [], body: Data = Data()
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
    }
}

/// One HTTP response. Header names are lower-cased; a repeated header keeps its last value.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// A failure below HTTP: nothing usable came back from the server.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// No connection could be made (DNS, refused, proxy unreachable): the request was not sent.
        case notConnected
        /// The connection failed after it was made (reset, empty reply): the request may have
        /// reached the server.
        case connection
        /// Connect or whole-request timeout.
        case timeout
        /// TLS handshake or certificate verification failed.
        case tls
        /// The response body exceeded the transport's cap.
        case responseTooLarge
        /// Anything else libcurl reports (bad URL, out of memory...).
        case other
    }

    public var kind: Kind
    public var message: String
    /// Whether any byte of the request may have reached the server. False only when the
    /// transport knows it sent nothing (no connection, a failed TLS handshake).
    public var requestMayHaveBeenSent: Bool

    public init(kind: Kind, message: String, requestMayHaveBeenSent: Bool? = nil) {
        self.kind = kind
        self.message = message
        self.requestMayHaveBeenSent = requestMayHaveBeenSent ?? (kind != .notConnected)
    }

    public var description: String { message }
}

/// Sends HTTP requests. The real implementation is `CurlTransport`; tests inject fakes.
public protocol HTTPTransport: AnyObject {
    /// Sends one request and returns the response, whatever its status. Throws `TransportError`
    /// only when no HTTP response was received.
    func send(_ request: HTTPRequest) throws -> HTTPResponse
}

/// Settings for the real transport.
public struct TransportOptions: Sendable {
    /// Extra CA bundle (PEM file) trusted in addition to the system's (`--ca-bundle`, `AWS_CA_BUNDLE`).
    public var caBundlePath: String?
    public var connectTimeout: Double
    /// Whole-request timeout in seconds.
    public var requestTimeout: Double
    public var userAgent: String
    /// Bodies larger than this are refused with `.responseTooLarge`.
    public var maxResponseBytes: Int
    /// When set, every request's time is drawn from it, and a request is cut (`.timeout`) when it
    /// runs out: the bound of a whole command rather than of one request.
    public var budget: TimeBudget?

    public init(
        caBundlePath: String? = nil, connectTimeout: Double = 10, requestTimeout: Double = 30,
        userAgent: String = "authctl", maxResponseBytes: Int = 1 << 20, budget: TimeBudget? = nil
    ) {
        self.caBundlePath = caBundlePath
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.userAgent = userAgent
        self.maxResponseBytes = maxResponseBytes
        self.budget = budget
    }
}
