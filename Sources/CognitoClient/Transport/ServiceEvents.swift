#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What the client did on the network, for a trace (`--debug`): typed values holding only what is
/// safe to show. No header value, body, query string or message reaches one: the names in them
/// are `SafeName`s, which only this library makes, each from one checked shape.
public enum ServiceEvent: Sendable {
    /// One HTTP exchange ended, with a response or without one.
    case exchange(Exchange)
    /// After a failed attempt: tried again after a wait, or not.
    case retry(RetryDecision)
}

/// Told of every `ServiceEvent`: given to an `ObservedTransport` wrapping the transport, and as
/// `RetryPolicy.observer`. Nil (the policy's default) costs one check.
public typealias ServiceObserver = @Sendable (ServiceEvent) -> Void

/// A short name from a request or an answer that is safe to print: an operation, a host, a
/// request id, an error code. Made only here, from its one shape; anything else is not made.
public struct SafeName: Sendable, Hashable, CustomStringConvertible {
    public let text: String
    public var description: String { text }

    private init(_ text: String) { self.text = text }

    /// Letters, digits and `allowed`, 1 to `maximum` characters, or nil.
    static func checked(_ raw: Substring, allowed: String, maximum: Int) -> SafeName? {
        guard !raw.isEmpty, raw.count <= maximum,
            raw.unicodeScalars.allSatisfy({
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                    || allowed.unicodeScalars.contains($0)
            })
        else { return nil }
        return SafeName(String(raw))
    }

    /// The operation of a request: `X-Amz-Target`'s part after the dot (`InitiateAuth`), else the
    /// URL's path (`/oauth2/token`, `/.well-known/jwks.json`).
    static func operation(of request: HTTPRequest) -> SafeName {
        if let target = request.headers.first(where: { $0.name.lowercased() == "x-amz-target" })?.value,
            let name = target.split(separator: ".").last,
            let operation = checked(name, allowed: "", maximum: 64)
        {
            return operation
        }
        let afterScheme = request.url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        let path = afterScheme.count == 4 ? "/" + afterScheme[3].prefix { $0 != "?" && $0 != "#" } : "/"
        return checked(Substring(path), allowed: "/._-", maximum: 64) ?? SafeName("(a path)")
    }

    /// The host of a URL (no user, port or path).
    static func host(of url: String) -> SafeName {
        let parts = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].hasSuffix(":"), parts[1].isEmpty else { return SafeName("(no host)") }
        var authority = parts[2].prefix { $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let host =
            authority.hasPrefix("[")
            ? authority.prefix { $0 != "]" } + "]" : authority.prefix { $0 != ":" }
        return checked(Substring(host), allowed: ".-[]:", maximum: 253) ?? SafeName("(a host)")
    }

    /// Cognito's `x-amzn-requestid`: a UUID.
    static func requestId(_ raw: String?) -> SafeName? {
        raw.flatMap { checked(Substring($0), allowed: "-", maximum: 64) }
    }

    /// An answer's error code: `x-amzn-errortype` (before any `:`), else the body's `__type`,
    /// `code` or `error` (`NotAuthorizedException`, `invalid_grant`).
    static func errorCode(of response: HTTPResponse) -> SafeName? {
        guard !(200..<300).contains(response.status) else { return nil }
        var raw = response.headers["x-amzn-errortype"]
        if raw == nil, let object = JSONValue.document(response.body) {
            raw = object["__type"]?.string ?? object["code"]?.string ?? object["error"]?.string
        }
        guard let raw else { return nil }
        let name = raw.split(separator: ":").first.map { $0.split(separator: "#").last ?? $0 } ?? Substring(raw)
        return checked(name, allowed: "_.-", maximum: 64)
    }
}

/// One HTTP exchange: what was asked of whom, what came back and how long it took.
public struct Exchange: Sendable {
    public let operation: SafeName
    public let host: SafeName
    /// The HTTP status, or nil when no response came (`failure` says why).
    public let status: Int?
    public let requestId: SafeName?
    public let errorCode: SafeName?
    public let failure: TransportError.Kind?
    public let seconds: Double
}

/// What was decided after a failed attempt.
public struct RetryDecision: Sendable {
    public enum Cause: String, CaseIterable, Sendable {
        case throttled
        case serverError = "server-error"
        case notConnected = "not-connected"
        case connection, timeout, refused
    }
    public enum Verdict: String, CaseIterable, Sendable {
        case retrying
        /// Not worth another try (a refusal, or not safe to repeat).
        case notRetryable = "not-retryable"
        case attemptsUsed = "attempts-used"
        /// The service asked to wait longer than authctl waits.
        case retryAfterTooLong = "retry-after-too-long"
        /// The wait would use up the command's time (`--timeout`).
        case noTimeLeft = "no-time-left"
    }
    public let operation: SafeName
    public let attempt: Int
    public let cause: Cause
    public let verdict: Verdict
    /// The wait before the next attempt (only when retrying).
    public let wait: Double?
}

/// A transport that tells `observer` of every exchange through `inner`. Only made when a trace is
/// on, so a command without one pays nothing.
public final class ObservedTransport: HTTPTransport {
    private let inner: HTTPTransport
    private let observer: ServiceObserver

    public init(_ inner: HTTPTransport, observer: @escaping ServiceObserver) {
        self.inner = inner
        self.observer = observer
    }

    public func send(_ request: HTTPRequest) throws -> HTTPResponse {
        let started = Self.monotonic()
        let operation = SafeName.operation(of: request)
        let host = SafeName.host(of: request.url)
        do {
            let response = try inner.send(request)
            observer(
                .exchange(
                    Exchange(
                        operation: operation, host: host, status: response.status,
                        requestId: SafeName.requestId(response.headers["x-amzn-requestid"]),
                        errorCode: SafeName.errorCode(of: response), failure: nil,
                        seconds: Self.monotonic() - started)))
            return response
        } catch let error as TransportError {
            observer(
                .exchange(
                    Exchange(
                        operation: operation, host: host, status: nil, requestId: nil, errorCode: nil,
                        failure: error.kind, seconds: Self.monotonic() - started)))
            throw error
        }
    }

    /// Seconds on the monotonic clock.
    public static func monotonic() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

extension RetryPolicy {
    /// Tells the observer what was decided after `attempt` of `operation` failed with `cause`.
    func report(
        _ operation: @autoclosure () -> SafeName, attempt: Int, cause: @autoclosure () -> RetryDecision.Cause,
        _ verdict: RetryDecision.Verdict, wait: Double? = nil
    ) {
        guard let observer else { return }
        observer(
            .retry(
                RetryDecision(operation: operation(), attempt: attempt, cause: cause(), verdict: verdict, wait: wait)))
    }

    /// Why a call to the user pool failed, in the retry's terms.
    static func cause(of error: CognitoError) -> RetryDecision.Cause {
        if error.isThrottling { return .throttled }
        switch error.transportKind {
        case .notConnected?: return .notConnected
        case .connection?: return .connection
        case .timeout?: return .timeout
        default: return error.isServerError ? .serverError : .refused
        }
    }

    /// Why a call went unretried: `wait(afterAttempt:for:)`'s reasons, told apart.
    func verdictWithoutRetry(afterAttempt attempt: Int, for error: CognitoError, idempotent: Bool)
        -> RetryDecision.Verdict
    {
        if !shouldRetry(error, idempotent: idempotent) { return .notRetryable }
        if attempt >= maxAttempts { return .attemptsUsed }
        if let asked = error.retryAfter, asked > maxRetryAfter { return .retryAfterTooLong }
        return .noTimeLeft
    }
}
