#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A failure of an identity-pool call, its meaning decided here from the service's error code
/// (botocore's cognito-identity model lists each operation's errors), never from message text.
public struct CognitoIdentityError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        /// NotAuthorizedException: the login (id token) is refused: expired, from a provider the
        /// pool does not trust, or unauthenticated access where the pool allows none.
        case loginRefused
        /// ResourceNotFoundException: no such identity pool, or no such identity in it.
        case notFound
        /// TooManyRequestsException or LimitExceededException.
        case throttled
        /// InvalidParameterException: a malformed pool id, role ARN or login.
        case invalidParameter
        /// ResourceConflictException: the login is linked to another identity.
        case loginConflict
        /// InvalidIdentityPoolConfigurationException: no role for authenticated identities, or a
        /// role the pool cannot assume (or the asked CustomRoleArn is not allowed).
        case noUsableRole
        /// ExternalServiceException: a provider the pool depends on did not answer.
        case externalService
        /// InternalErrorException or HTTP 5xx.
        case serviceFailure
        /// No HTTP answer (network, TLS, timeout).
        case unreachable
        /// An answer that is not the protocol's JSON, or lacks what the operation promises.
        case malformedAnswer
        /// An error code the model does not list for the operation.
        case other
    }

    public var reason: Reason
    public var message: String
    /// The service's error code, when it sent one.
    public var errorType: String?
    /// The call may have been performed without a clear answer.
    public var outcomeUnknown: Bool

    public init(reason: Reason, message: String, errorType: String? = nil, outcomeUnknown: Bool = false) {
        self.reason = reason
        self.message = message
        self.errorType = errorType
        self.outcomeUnknown = outcomeUnknown
    }

    public var description: String {
        errorType.map { "\($0): \(message)" } ?? message
    }

    /// Classifies a failure of `CognitoService.call` (whose message is already redacted).
    init(_ error: CognitoError) {
        let reason: Reason
        switch error.kind {
        case .transport:
            reason = .unreachable
        case .malformedResponse:
            reason = error.isServerError ? .serviceFailure : .malformedAnswer
        case .unsupportedChallenge, .invalidInput:
            reason = .invalidParameter
        case .service:
            reason = Self.reason(forCode: error.errorType ?? "", httpStatus: error.httpStatus)
        }
        self.init(
            reason: reason, message: error.message, errorType: error.errorType, outcomeUnknown: error.outcomeUnknown)
    }

    static func reason(forCode code: String, httpStatus: Int?) -> Reason {
        switch code {
        case "NotAuthorizedException": return .loginRefused
        case "ResourceNotFoundException": return .notFound
        case "TooManyRequestsException", "LimitExceededException", "ThrottlingException": return .throttled
        case "InvalidParameterException": return .invalidParameter
        case "ResourceConflictException": return .loginConflict
        case "InvalidIdentityPoolConfigurationException": return .noUsableRole
        case "ExternalServiceException": return .externalService
        case "InternalErrorException": return .serviceFailure
        default:
            if let httpStatus, (500...599).contains(httpStatus) { return .serviceFailure }
            return .other
        }
    }
}
