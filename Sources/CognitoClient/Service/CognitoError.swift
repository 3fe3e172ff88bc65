#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Every failure CognitoClient reports: the service's own error, a transport failure, or an
/// answer that was not what the protocol promises. The message never contains a secret.
public struct CognitoError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The service answered with an error type (`errorType`).
        case service
        /// No HTTP answer: network, TLS or timeout (`transportKind`).
        case transport
        /// An answer whose body was not the JSON the protocol promises.
        case malformedResponse
        /// The service asked for a challenge this client cannot answer.
        case unsupportedChallenge
        /// Local input the protocol cannot use (bad pool id, SRP parameters out of range).
        case invalidInput
    }

    public var kind: Kind
    /// The service's error type with any `prefix#` and `:suffix` removed, e.g. `NotAuthorizedException`.
    public var errorType: String?
    public var message: String
    public var httpStatus: Int?
    public var transportKind: TransportError.Kind?
    /// For `.transport`: whether the request may have reached the service.
    public var requestMayHaveBeenSent = true
    /// Set by `CognitoService.call`: an attempt of this call (retries included) may have been
    /// performed by the service without a clear answer, so its outcome is unknown.
    public var outcomeUnknown = false
    /// For `.unsupportedChallenge`: the challenge name.
    public var challengeName: ChallengeName?
    /// The answer's `Retry-After`, in seconds from when it came (throttling, 503).
    public var retryAfter: Double?
    /// The endpoint that was called (set by `CognitoService`), for messages that say where.
    public var endpoint: String?

    public init(
        kind: Kind, message: String, errorType: String? = nil, httpStatus: Int? = nil,
        transportKind: TransportError.Kind? = nil, challengeName: ChallengeName? = nil
    ) {
        self.kind = kind
        self.message = message
        self.errorType = errorType
        self.httpStatus = httpStatus
        self.transportKind = transportKind
        self.challengeName = challengeName
    }

    public var description: String {
        if let errorType { return "\(errorType): \(message)" }
        return message
    }

    public static func service(_ type: String, _ message: String, status: Int = 400) -> CognitoError {
        CognitoError(kind: .service, message: message, errorType: type, httpStatus: status)
    }

    public static func transport(_ error: TransportError) -> CognitoError {
        var failure = CognitoError(kind: .transport, message: error.message, transportKind: error.kind)
        failure.requestMayHaveBeenSent = error.requestMayHaveBeenSent
        return failure
    }

    public static func malformed(_ message: String, status: Int?) -> CognitoError {
        CognitoError(kind: .malformedResponse, message: message, httpStatus: status)
    }

    public static func unsupportedChallenge(_ name: ChallengeName) -> CognitoError {
        CognitoError(
            kind: .unsupportedChallenge, message: "challenge \(name) is not supported yet",
            challengeName: name)
    }

    public static func invalidInput(_ message: String) -> CognitoError {
        CognitoError(kind: .invalidInput, message: message)
    }

    /// The service refused because of request rate or attempt limits.
    public var isThrottling: Bool {
        refusal == .throttled
    }

    /// The service itself failed (HTTP 5xx), whatever the body said.
    public var isServerError: Bool {
        guard let httpStatus else { return false }
        return httpStatus >= 500 && httpStatus <= 599
    }

    /// This attempt may have been performed without a clear answer: the request may have been
    /// sent and no answer came (timeout, connection lost), or the answer was a 5xx or unreadable.
    public var mayHaveBeenPerformed: Bool {
        switch kind {
        case .transport: return requestMayHaveBeenSent
        case .malformedResponse: return true
        case .service: return isServerError
        case .unsupportedChallenge, .invalidInput: return false
        }
    }

    /// Nothing of the request was sent (no connection, a failed TLS handshake), so the service
    /// cannot have acted on it.
    public var certainlyNotSent: Bool {
        kind == .transport && !requestMayHaveBeenSent
    }

    /// NotAuthorizedException; callers read `refusal` (`deniesAuthorization` and the particular
    /// meaning), decided here from the message.
    var isNotAuthorized: Bool {
        errorType == "NotAuthorizedException"
    }

    /// Whether the error type is one of `types`.
    public func isType(_ types: String...) -> Bool {
        guard let errorType else { return false }
        return types.contains(errorType)
    }
}

/// Turns a non-2xx HTTP answer into a `CognitoError`, following the AWS JSON 1.1 protocol:
/// the error type comes from the `x-amzn-errortype` header, else `__type`, else `code`,
/// with any `namespace#` prefix and `:suffix` stripped; the text from `message` or `Message`.
public enum CognitoErrorParser {
    /// `request`, when given, is the call that was answered: its secrets are removed from the
    /// service's message (see `SecretRedactor`), as is anything shaped like a token.
    public static func parse(_ response: HTTPResponse, request: HTTPRequest? = nil) -> CognitoError {
        let object = JSONValue.document(response.body)
        var type = response.headers["x-amzn-errortype"].flatMap(normalizeType)
        if type == nil, let object {
            type = (object["__type"]?.string ?? object["code"]?.string).flatMap(normalizeType)
        }
        let redactor = SecretRedactor(requestBody: request?.body ?? Data())
        let message = (object?["message"]?.string ?? object?["Message"]?.string)
            .map(redactor.redact).flatMap { $0.isEmpty ? nil : $0 }
        if let type {
            return .service(type, message ?? type, status: response.status)
        }
        return .malformed(describeUnexpected(response), status: response.status)
    }

    /// `aws.protocoltests#InvalidGreeting:http://internal.amazon.com/` -> `InvalidGreeting`.
    public static func normalizeType(_ raw: String) -> String? {
        var type = Substring(raw.trimmedBlanks())
        if let colon = type.firstIndex(of: ":") { type = type[..<colon] }
        if let hash = type.lastIndex(of: "#") { type = type[type.index(after: hash)...] }
        return type.isEmpty ? nil : String(type)
    }

    /// A short, safe description of an answer that is not the protocol's JSON.
    static func describeUnexpected(_ response: HTTPResponse) -> String {
        let contentType = response.headers["content-type"].map { " (\($0))" } ?? ""
        let what: String
        if response.body.isEmpty {
            what = "an empty body"
        } else if JSONValue.document(response.body) == nil {
            what = "a body that is not JSON\(contentType)"
        } else {
            what = "JSON without an error type\(contentType)"
        }
        return "unexpected answer from the service: HTTP \(response.status) with \(what)"
    }
}
