#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A failure of the managed-login (OAuth 2.0) endpoints or of a browser sign-in's answer: the
/// service's `error` code (RFC 6749 5.2, Cognito's token and revoke endpoints), a check this
/// client makes (state, nonce), or an answer that is not the protocol's. Its meaning is decided
/// here, from the code, once; the description never contains a secret.
public struct OAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        // The service's own codes (token endpoint, revoke endpoint, authorize redirect).
        case invalidRequest = "invalid_request"
        case invalidClient = "invalid_client"
        case invalidGrant = "invalid_grant"
        case unauthorizedClient = "unauthorized_client"
        case unsupportedGrantType = "unsupported_grant_type"
        case unsupportedTokenType = "unsupported_token_type"
        case invalidScope = "invalid_scope"
        case accessDenied = "access_denied"
        case serverError = "server_error"
        case temporarilyUnavailable = "temporarily_unavailable"
        /// An `error` code this client does not know (`serviceCode` holds it).
        case otherServiceError = "other"
        // This client's checks.
        /// The redirect's `state` is not the one this sign-in sent (another sign-in's, or forged).
        case stateMismatch = "state_mismatch"
        /// The id token's `nonce` (or audience) is not this sign-in's.
        case nonceMismatch = "nonce_mismatch"
        // The exchange itself.
        /// HTTP 429.
        case throttled
        /// No HTTP answer (network, TLS, timeout).
        case unreachable
        /// An answer that is not the protocol's JSON: an HTML page, a body without `error`.
        case unexpectedAnswer = "unexpected_answer"
    }

    public var code: Code
    /// The `error` value exactly as the service sent it, when it sent one.
    public var serviceCode: String?
    /// `error_description` from the service, or this client's explanation; never a secret.
    public var message: String
    public var httpStatus: Int?
    /// For `.unreachable`: the transport's failure.
    public var transportKind: TransportError.Kind?
    /// Whether an attempt may have reached the service without a clear answer.
    public var outcomeUnknown = false

    public init(
        _ code: Code, _ message: String, serviceCode: String? = nil, httpStatus: Int? = nil,
        transportKind: TransportError.Kind? = nil
    ) {
        self.code = code
        self.message = message
        self.serviceCode = serviceCode
        self.httpStatus = httpStatus
        self.transportKind = transportKind
    }

    public var description: String {
        serviceCode.map { "\($0): \(message)" } ?? message
    }

    /// The grant itself was refused (code used or expired, refresh token revoked, person said
    /// no): sign in again. Compare `isClientMisconfigured` (the app client's settings).
    public var isGrantRefused: Bool {
        [.invalidGrant, .accessDenied, .stateMismatch, .nonceMismatch].contains(code)
    }

    /// The app client, its secret or its allowed flows and scopes are wrong for this request.
    public var isClientMisconfigured: Bool {
        [
            .invalidClient, .unauthorizedClient, .unsupportedGrantType, .invalidScope, .invalidRequest,
            .unsupportedTokenType,
        ].contains(code)
    }

    /// The service failed or could not be reached.
    public var isServiceFailure: Bool {
        [.serverError, .temporarilyUnavailable, .unreachable, .unexpectedAnswer].contains(code)
    }

    static func code(forService raw: String) -> Code {
        guard let known = Code(rawValue: raw), known.isServiceCode else { return .otherServiceError }
        return known
    }
}

extension OAuthError.Code {
    /// Codes a service may send (as opposed to this client's own).
    var isServiceCode: Bool {
        switch self {
        case .invalidRequest, .invalidClient, .invalidGrant, .unauthorizedClient, .unsupportedGrantType,
            .unsupportedTokenType, .invalidScope, .accessDenied, .serverError, .temporarilyUnavailable:
            return true
        case .otherServiceError, .stateMismatch, .nonceMismatch, .throttled, .unreachable, .unexpectedAnswer:
            return false
        }
    }
}
