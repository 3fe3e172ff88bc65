#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a refusal from Cognito means, decided once, here: from the error type first, and from
/// the message only for `NotAuthorizedException`, which the service uses for a dozen different
/// refusals and tells apart by its text alone (a long-standing complaint, e.g.
/// https://github.com/amazon-archives/amazon-cognito-identity-js/issues/479 and
/// https://github.com/aws-amplify/amplify-js/issues/1234 for "Password attempts exceeded"), and
/// for the few `InvalidParameterException`s told apart the same way (`invalidParameter(message:)`,
/// "User is already confirmed." among them).
///
/// The messages matched are those real Cognito sends, as recorded in `ServiceRefusalTests`
/// with their sources; the error types are the ones botocore's service model (cognito-idp
/// 2016-04-18) declares for the operations authctl calls.
public enum ServiceRefusal: String, Sendable, Equatable, CaseIterable {
    /// "Incorrect username or password." (sign-in; ChangePassword's wrong current password).
    case incorrectCredentials
    /// The app client's secret: SECRET_HASH missing or not matching, ClientSecret wrong or missing.
    case secretHashRejected
    /// "Password attempts exceeded": the user is locked out for a while.
    case attemptsExceeded
    /// "Invalid session for the user, session is expired.": the challenge session timed out.
    case challengeSessionExpired
    /// "Invalid session for the user.": the challenge session was ended (after wrong codes) or
    /// belongs to another client or user.
    case challengeSessionEnded
    /// "Access Token has expired": refused for its age, not revoked.
    case accessTokenExpired
    /// "Access Token has been revoked", "Invalid Access Token": the access token is dead.
    case accessTokenRevoked
    /// "Access Token does not have required scopes": a live token that lacks the scope the call
    /// needs (`ServiceRefusal.userAdminScope`, left out of a browser sign-in's `--scope`). Not a
    /// dead session: nothing is revoked, so nothing may be deleted.
    case scopeMissing
    /// "Refresh Token has been revoked", "Invalid Refresh Token", "Refresh Token has expired".
    case refreshTokenRevoked
    /// The REFRESH_TOKEN_AUTH flow itself is refused (rotation enabled, flow not enabled).
    case flowNotAllowed
    /// "User is disabled."
    case userDisabled
    /// Any other NotAuthorizedException.
    case notAuthorized
    /// UserNotFoundException.
    case userNotFound
    /// UserNotConfirmedException.
    case userNotConfirmed
    /// PasswordResetRequiredException.
    case passwordResetRequired
    /// CodeMismatchException; EnableSoftwareTokenMFAException (VerifySoftwareToken's wrong code).
    case codeMismatch
    /// ExpiredCodeException.
    case codeExpired
    /// InvalidPasswordException, PasswordHistoryPolicyViolationException.
    case invalidPassword
    /// TooManyRequestsException, ThrottlingException, LimitExceededException, TooManyFailedAttemptsException.
    case throttled
    /// UnknownOperationException and the like: the service (an emulator) lacks the operation.
    case operationUnsupported
    /// ResourceNotFoundException: no such pool or app client.
    case resourceNotFound
    /// InvalidParameterException.
    case invalidParameter
    /// InvalidParameterException "User is already confirmed." (ResendConfirmationCode): the
    /// account needs no confirmation code.
    case userAlreadyConfirmed
    /// The pool's configuration or its Lambda triggers failed the request.
    case poolConfiguration
    /// UsernameExistsException (SignUp): the username is taken.
    case usernameExists
    /// AliasExistsException: another account already has this email address or phone number.
    case aliasExists
    /// CodeDeliveryFailureException: the pool could not send the code.
    case codeDeliveryFailed
    /// The AWS credentials of a SigV4-signed (admin) request were refused: AccessDeniedException,
    /// UnrecognizedClientException, a bad or expired signature or key (AWS's common errors).
    case awsCredentialsRefused
    /// WebAuthnNotEnabledException: the pool does not allow passkeys.
    case webAuthnNotEnabled
    /// WebAuthnConfigurationMissingException: the pool has no relying party id or domain.
    case webAuthnConfigurationMissing
    /// WebAuthnChallengeNotFoundException: the registration's challenge expired or was used.
    case webAuthnChallengeNotFound
    /// WebAuthnRelyingPartyMismatchException: the credential is for another relying party.
    case webAuthnRelyingPartyMismatch
    /// WebAuthnOriginNotAllowedException: clientDataJSON's origin is not the pool's.
    case webAuthnOriginNotAllowed
    /// WebAuthnClientMismatchException: started with another app client's access token.
    case webAuthnClientMismatch
    /// WebAuthnCredentialNotSupportedException: the authenticator or its attestation is refused.
    case webAuthnCredentialNotSupported
    /// ForbiddenException: the pool's web ACL (WAF) refused the request.
    case forbidden
    /// OperationNotEnabledException: the operation is not available in this region or for this
    /// pool's configuration. botocore's model (1.44) documents it for operations "not supported in
    /// secondary replica regions": a multi-Region pool's replica answers it to a write (its role
    /// SECONDARY allows only "end-user operations that do not create or change attributes of a
    /// user"), and an INACTIVE replica to end users' requests.
    case operationNotEnabled
    /// UserPoolAddOnNotEnabledException: the pool has no threat protection (its sign-in events
    /// and their feedback are not kept).
    case threatProtectionOff
    /// The pool does not track sessions (ListUserSessions and the other session operations):
    /// OperationNotEnabledException naming session tracking, which is off by default and needs
    /// the Essentials tier. Not a failure of the caller's session.
    case sessionTrackingDisabled
    /// RevokeUserSession of the session the calling access token belongs to (the service never
    /// lets a session end itself that way: RevokeToken or GlobalSignOut do).
    case currentSessionNotRevocable
    /// GetDerivedToken refused because the app client allows no token exchange
    /// (`ALLOW_TOKEN_EXCHANGE_IMPERSONATION`, or `..._DELEGATION` with an actor token).
    case tokenExchangeNotAllowed
    /// GetClientToken refused because `ALLOW_CLIENT_TOKEN_AUTH` is not the client's flow.
    case clientTokenAuthNotAllowed
    /// Any other error type.
    case other

    /// The credentials, a token or the session were refused (every meaning of
    /// NotAuthorizedException: a wrong password, a revoked or expired token, a locked-out or
    /// disabled user, a refused client secret...).
    public var deniesAuthorization: Bool {
        switch self {
        case .incorrectCredentials, .secretHashRejected, .attemptsExceeded, .challengeSessionExpired,
            .challengeSessionEnded,
            .accessTokenExpired, .accessTokenRevoked, .scopeMissing, .refreshTokenRevoked, .flowNotAllowed,
            .userDisabled,
            .notAuthorized:
            return true
        default:
            return false
        }
    }

    /// The refusal `errorType` with `message` means.
    public static func classify(errorType: String, message: String) -> ServiceRefusal {
        switch errorType {
        case "NotAuthorizedException": return notAuthorized(message: message)
        case "UserNotFoundException": return .userNotFound
        case "UserNotConfirmedException": return .userNotConfirmed
        case "PasswordResetRequiredException": return .passwordResetRequired
        case "CodeMismatchException", "EnableSoftwareTokenMFAException": return .codeMismatch
        case "ExpiredCodeException": return .codeExpired
        case "InvalidPasswordException", "PasswordHistoryPolicyViolationException": return .invalidPassword
        case "TooManyRequestsException", "ThrottlingException", "LimitExceededException",
            "TooManyFailedAttemptsException":
            return .throttled
        case "UnknownOperationException", "UnsupportedOperationException", "InvalidAction": return .operationUnsupported
        case "ResourceNotFoundException": return .resourceNotFound
        case "UsernameExistsException": return .usernameExists
        case "AliasExistsException": return .aliasExists
        case "CodeDeliveryFailureException": return .codeDeliveryFailed
        case "AccessDeniedException", "UnrecognizedClientException", "InvalidSignatureException", "IncompleteSignature",
            "MissingAuthenticationTokenException", "ExpiredTokenException", "InvalidClientTokenId",
            "SignatureDoesNotMatch":
            return .awsCredentialsRefused
        case "InvalidParameterException": return invalidParameter(message: message)
        case "WebAuthnNotEnabledException": return .webAuthnNotEnabled
        case "WebAuthnConfigurationMissingException": return .webAuthnConfigurationMissing
        case "WebAuthnChallengeNotFoundException": return .webAuthnChallengeNotFound
        case "WebAuthnRelyingPartyMismatchException": return .webAuthnRelyingPartyMismatch
        case "WebAuthnOriginNotAllowedException": return .webAuthnOriginNotAllowed
        case "WebAuthnClientMismatchException": return .webAuthnClientMismatch
        case "WebAuthnCredentialNotSupportedException": return .webAuthnCredentialNotSupported
        case "ForbiddenException": return .forbidden
        case "OperationNotEnabledException":
            return message.lowercased().contains("session tracking") ? .sessionTrackingDisabled : .operationNotEnabled
        case "UserPoolAddOnNotEnabledException": return .threatProtectionOff
        case "InvalidUserPoolConfigurationException", "InvalidLambdaResponseException", "UnexpectedLambdaException",
            "UserLambdaValidationException":
            return .poolConfiguration
        default: return .other
        }
    }

    /// NotAuthorizedException carries its meaning in the message only. Checked in an order where
    /// the more particular text wins ("Invalid session ..., session is expired." before "expired").
    private static func notAuthorized(message: String) -> ServiceRefusal {
        let text = message.lowercased()
        if text.contains("secret") { return .secretHashRejected }
        if text.contains("attempts exceeded") { return .attemptsExceeded }
        if text.contains("invalid session") && !text.contains("expired") { return .challengeSessionEnded }
        if text.contains("session") { return .challengeSessionExpired }
        if text.contains("rotation") || text.contains("not enabled") || text.contains("not allowed") {
            return .flowNotAllowed
        }
        if text.contains("refresh token") { return .refreshTokenRevoked }
        if text.contains("expired") { return .accessTokenExpired }
        if text.contains("scope") { return .scopeMissing }
        if text.contains("access token") { return .accessTokenRevoked }
        if text.contains("user is disabled") { return .userDisabled }
        if text.contains("incorrect username or password") { return .incorrectCredentials }
        return .notAuthorized
    }

    /// InvalidParameterException names the new operations' refusals of a client's flows and of the
    /// caller's own session, and a confirmed account's refusal of a new confirmation code, in its
    /// text only; anything else stays `invalidParameter`.
    private static func invalidParameter(message: String) -> ServiceRefusal {
        let text = message.lowercased()
        if text.contains("allow_token_exchange") { return .tokenExchangeNotAllowed }
        if text.contains("allow_client_token_auth") { return .clientTokenAuthNotAllowed }
        if text.contains("current session") { return .currentSessionNotRevocable }
        if text.contains("already confirmed") { return .userAlreadyConfirmed }
        return .invalidParameter
    }

    /// The scope the user-pool API's self-service calls (GetUser, GlobalSignOut, ChangePassword,
    /// the MFA and device calls) need in an access token from the managed login.
    public static let userAdminScope = "aws.cognito.signin.user.admin"

    /// The service has ended the challenge session: a code that came too late, a session that
    /// expired or was ended after wrong codes.
    public var endsChallenge: Bool {
        self == .codeExpired || self == .challengeSessionExpired || self == .challengeSessionEnded
    }
}

extension CognitoError {
    /// The service refused a session's token for good: revoked, an expired or invalid refresh
    /// token, the user disabled or deleted. The one test every command uses to end a session. Not
    /// an expired access token (this machine's clock may be behind), a refused client secret (the
    /// configuration), a lockout, throttling or a missing scope (the token is still valid): those
    /// keep the session.
    public var endsSession: Bool {
        switch refusal {
        case nil, .accessTokenExpired?, .secretHashRejected?, .attemptsExceeded?, .throttled?, .incorrectCredentials?,
            .scopeMissing?:
            return false
        case .userNotFound?, .userDisabled?, .accessTokenRevoked?, .refreshTokenRevoked?:
            return true
        default:
            return isNotAuthorized
        }
    }

    /// What the service's refusal means; nil for anything that is not the service's answer.
    public var refusal: ServiceRefusal? {
        guard kind == .service, let errorType else { return nil }
        return ServiceRefusal.classify(errorType: errorType, message: message)
    }
}
