import Foundation
import XCTest

@testable import CognitoClient

/// Service refusals as Cognito sends them, classified once (`ServiceRefusal`). Each body is a
/// recorded answer: the error type is one botocore's service model (cognito-idp 2016-04-18)
/// declares for the operation; the message is the text real Cognito sends, with where it was seen.
final class ServiceRefusalTests: XCTestCase {
    private struct Recorded {
        var operation: String
        var body: String
        var expected: ServiceRefusal
        /// Where the exact text was seen from the real service ("service model:" entries: the type is
        /// the model's; the text is the one commonly reported for it).
        var source: String
    }

    private let recorded: [Recorded] = [
        Recorded(
            operation: "InitiateAuth",
            body: #"{"__type":"NotAuthorizedException","message":"Incorrect username or password."}"#,
            expected: .incorrectCredentials,
            source: "https://github.com/amazon-archives/amazon-cognito-identity-js/issues/506"),
        Recorded(
            operation: "InitiateAuth",
            body: #"{"__type":"NotAuthorizedException","message":"Password attempts exceeded"}"#,
            expected: .attemptsExceeded,
            source: "https://github.com/amazon-archives/amazon-cognito-identity-js/issues/506"),
        Recorded(
            operation: "InitiateAuth",
            body:
                #"{"__type":"NotAuthorizedException","message":"Unable to verify secret hash for client 1example23456789"}"#,
            expected: .secretHashRejected,
            source: "https://github.com/AnomalyInnovations/serverless-stack-demo-client/issues/6"),
        Recorded(
            operation: "RespondToAuthChallenge",
            body:
                #"{"__type":"NotAuthorizedException","message":"Client 6g164jiups96hiec2e43tv0nt6 is configured with secret but SECRET_HASH was not received"}"#,
            expected: .secretHashRejected,
            source: "https://github.com/furaiev/amazon-cognito-identity-dart-2/issues/249"),
        Recorded(
            operation: "RespondToAuthChallenge",
            body: #"{"__type":"NotAuthorizedException","message":"Invalid session for the user, session is expired."}"#,
            expected: .challengeSessionExpired,
            source: "community reports of a challenge answered after its 3 minutes (no single thread recorded)"),
        Recorded(
            operation: "RespondToAuthChallenge",
            body: #"{"__type":"NotAuthorizedException","message":"Invalid session for the user."}"#,
            expected: .challengeSessionEnded,
            source: "https://github.com/aws-amplify/amplify-js/issues/5834"),
        Recorded(
            operation: "RespondToAuthChallenge",
            body: #"{"__type":"CodeMismatchException","message":"Invalid code received for user"}"#,
            expected: .codeMismatch,
            source: "service model: CodeMismatchException on RespondToAuthChallenge"),
        Recorded(
            operation: "VerifySoftwareToken",
            body: #"{"__type":"EnableSoftwareTokenMFAException","message":"Code mismatch"}"#,
            expected: .codeMismatch,
            source: "service model: EnableSoftwareTokenMFAException on VerifySoftwareToken"),
        Recorded(
            operation: "RespondToAuthChallenge",
            body: #"{"__type":"ExpiredCodeException","message":"Invalid code provided, please request a code again."}"#,
            expected: .codeExpired,
            source: "service model: ExpiredCodeException on RespondToAuthChallenge"),
        Recorded(
            operation: "GetUser",
            body: #"{"__type":"NotAuthorizedException","message":"Access Token has expired"}"#,
            expected: .accessTokenExpired,
            source: "https://github.com/aws-amplify/aws-sdk-ios/issues/1376"),
        Recorded(
            operation: "GetUser",
            body: #"{"__type":"NotAuthorizedException","message":"Access Token has been revoked"}"#,
            expected: .accessTokenRevoked,
            source: "https://github.com/aws-amplify/amplify-js/issues/2205"),
        Recorded(
            operation: "ChangePassword",
            body: #"{"__type":"NotAuthorizedException","message":"Invalid Access Token"}"#,
            expected: .accessTokenRevoked,
            source: "service model: NotAuthorizedException on ChangePassword (token refused)"),
        Recorded(
            operation: "InitiateAuth",
            body: #"{"__type":"NotAuthorizedException","message":"Invalid Refresh Token"}"#,
            expected: .refreshTokenRevoked,
            source: "https://github.com/aws-amplify/aws-sdk-ios/issues/1409"),
        Recorded(
            operation: "GetTokensFromRefreshToken",
            body: #"{"__type":"NotAuthorizedException","message":"Refresh Token has been revoked"}"#,
            expected: .refreshTokenRevoked,
            source: "service model: NotAuthorizedException on GetTokensFromRefreshToken"),
        Recorded(
            operation: "InitiateAuth",
            body: #"{"__type":"NotAuthorizedException","message":"Refresh Token has expired"}"#,
            expected: .refreshTokenRevoked,
            source: "service model: NotAuthorizedException on InitiateAuth REFRESH_TOKEN_AUTH"),
        Recorded(
            operation: "InitiateAuth",
            body: #"{"__type":"NotAuthorizedException","message":"User is disabled."}"#,
            expected: .userDisabled,
            source: "service model: NotAuthorizedException on InitiateAuth"),
        Recorded(
            operation: "InitiateAuth",
            body: #"{"__type":"UserNotFoundException","message":"User does not exist."}"#,
            expected: .userNotFound,
            source: "service model: UserNotFoundException on InitiateAuth"),
        Recorded(
            operation: "InitiateAuth",
            body: #"{"__type":"UserNotConfirmedException","message":"User is not confirmed."}"#,
            expected: .userNotConfirmed,
            source: "service model: UserNotConfirmedException on InitiateAuth"),
        Recorded(
            operation: "InitiateAuth",
            body: #"{"__type":"PasswordResetRequiredException","message":"Password reset required for the user"}"#,
            expected: .passwordResetRequired,
            source: "service model: PasswordResetRequiredException on InitiateAuth"),
        Recorded(
            operation: "ChangePassword",
            body:
                #"{"__type":"InvalidPasswordException","message":"Password does not conform to policy: Password not long enough"}"#,
            expected: .invalidPassword,
            source: "service model: InvalidPasswordException on ChangePassword"),
        Recorded(
            operation: "ChangePassword",
            body:
                #"{"__type":"LimitExceededException","message":"Attempt limit exceeded, please try after some time."}"#,
            expected: .throttled,
            source: "https://github.com/aws-amplify/aws-sdk-android/issues/627"),
        Recorded(
            operation: "InitiateAuth",
            body: #"{"__type":"TooManyRequestsException","message":"Rate exceeded"}"#,
            expected: .throttled,
            source: "service model: TooManyRequestsException on InitiateAuth"),
        Recorded(
            operation: "InitiateAuth",
            body:
                #"{"__type":"ResourceNotFoundException","message":"User pool client 1example23456789 does not exist."}"#,
            expected: .resourceNotFound,
            source: "service model: ResourceNotFoundException on InitiateAuth"),
        Recorded(
            operation: "InitiateAuth",
            body:
                #"{"__type":"InvalidParameterException","message":"USER_PASSWORD_AUTH flow not enabled for this client"}"#,
            expected: .invalidParameter,
            source: "service model: InvalidParameterException on InitiateAuth"),
        Recorded(
            operation: "ListUserSessions",
            body:
                #"{"__type":"OperationNotEnabledException","message":"Session tracking is not enabled for this user pool."}"#,
            expected: .sessionTrackingDisabled,
            source: "service model 1.44.8: OperationNotEnabledException on ListUserSessions; the fake's words"),
        Recorded(
            operation: "RevokeUserSession",
            body:
                #"{"__type":"InvalidParameterException","message":"The current session cannot be revoked with RevokeUserSession: use RevokeToken."}"#,
            expected: .currentSessionNotRevocable,
            source: "service model 1.44.8: RevokeUserSession cannot end the caller's session; the fake's words"),
        Recorded(
            operation: "GetDerivedToken",
            body:
                #"{"__type":"InvalidParameterException","message":"ALLOW_TOKEN_EXCHANGE_IMPERSONATION flow not enabled for this client"}"#,
            expected: .tokenExchangeNotAllowed,
            source: "service model 1.44.8: GetDerivedToken needs the flow; worded as InitiateAuth's"),
        Recorded(
            operation: "GetClientToken",
            body:
                #"{"__type":"InvalidParameterException","message":"ALLOW_CLIENT_TOKEN_AUTH flow not enabled for this client"}"#,
            expected: .clientTokenAuthNotAllowed,
            source: "service model 1.44.8: GetClientToken needs the flow; worded as InitiateAuth's"),
        Recorded(
            operation: "ResendConfirmationCode",
            body: #"{"__type":"InvalidParameterException","message":"User is already confirmed."}"#,
            expected: .userAlreadyConfirmed,
            source:
                "https://github.com/furaiev/amazon-cognito-identity-dart-2/issues/103 and https://github.com/aws-amplify/amplify-js/issues/13220"
        ),
        Recorded(
            operation: "InitiateAuth",
            body:
                #"{"__type":"UserLambdaValidationException","message":"PreAuthentication failed with error Blocked."}"#,
            expected: .poolConfiguration,
            source: "service model: UserLambdaValidationException on InitiateAuth"),
        Recorded(
            operation: "GetTokensFromRefreshToken",
            body: #"{"__type":"com.amazonaws.cognito.identity.idp.model#UnknownOperationException"}"#,
            expected: .operationUnsupported,
            source: "AWS JSON 1.1 protocol: an operation the endpoint does not offer"),
        Recorded(
            operation: "AdminUserGlobalSignOut",
            body:
                #"{"__type":"UnrecognizedClientException","message":"The security token included in the request is invalid."}"#,
            expected: .awsCredentialsRefused,
            source: "AWS JSON 1.1 common errors: an unknown access key id"),
        Recorded(
            operation: "AdminUserGlobalSignOut",
            body:
                #"{"__type":"InvalidSignatureException","message":"The request signature we calculated does not match the signature you provided."}"#,
            expected: .awsCredentialsRefused,
            source: "AWS JSON 1.1 common errors: a wrong secret access key"),
        Recorded(
            operation: "AdminListDevices",
            body:
                #"{"__type":"AccessDeniedException","message":"User: arn:aws:iam::111122223333:user/ops is not authorized to perform: cognito-idp:AdminListDevices"}"#,
            expected: .awsCredentialsRefused,
            source: "AWS JSON 1.1 common errors: IAM policy without the action"),
        Recorded(
            operation: "InitiateAuth",
            body: #"{"__type":"RefreshTokenReuseException","message":"Refresh token has already been used"}"#,
            expected: .other,
            source: "service model: RefreshTokenReuseException on GetTokensFromRefreshToken"),
    ]

    func testRecordedRefusalsAreClassifiedFromTheirType() {
        for sample in recorded {
            let error = CognitoErrorParser.parse(HTTPResponse(status: 400, headers: [:], body: Data(sample.body.utf8)))
            XCTAssertEqual(error.refusal, sample.expected, "\(sample.operation) \(sample.body) (\(sample.source))")
        }
    }

    /// The type decides wherever it says enough: a message that reads like another refusal does
    /// not change an error type's meaning.
    func testTheErrorTypeWinsOverTheMessage() {
        XCTAssertEqual(CognitoError.service("UserNotFoundException", "Access Token has expired").refusal, .userNotFound)
        XCTAssertEqual(
            CognitoError.service("CodeMismatchException", "Invalid session for the user.").refusal, .codeMismatch)
        XCTAssertEqual(CognitoError.service("LimitExceededException", "Password attempts exceeded").refusal, .throttled)
    }

    /// `deniesAuthorization` is what the error type NotAuthorizedException said, carried by the
    /// typed refusal: true for every recorded NotAuthorizedException, false for every other type.
    func testDeniesAuthorizationIsExactlyNotAuthorizedException() {
        for sample in recorded {
            let error = CognitoErrorParser.parse(HTTPResponse(status: 400, headers: [:], body: Data(sample.body.utf8)))
            XCTAssertEqual(error.refusal?.deniesAuthorization, error.isNotAuthorized, sample.body)
        }
        XCTAssertEqual(
            CognitoError.service("NotAuthorizedException", "anything else").refusal?.deniesAuthorization, true)
    }

    func testAnUnknownNotAuthorizedTextIsPlainNotAuthorized() {
        XCTAssertEqual(
            CognitoError.service("NotAuthorizedException", "eyJ... is not a valid token").refusal, .notAuthorized)
    }

    func testOnlyServiceAnswersAreRefusals() {
        XCTAssertNil(CognitoError.transport(TransportError(kind: .timeout, message: "timed out")).refusal)
        XCTAssertNil(CognitoError.malformed("unexpected answer", status: 502).refusal)
    }

    /// A browser session signed in without aws.cognito.signin.user.admin is
    /// refused GetUser with this text; it was classified as a revoked access token, so the session
    /// was deleted (and not revoked). It is its own refusal, and it does not end the session.
    func testAMissingScopeIsNoDeadSession() {
        let error = CognitoError.service("NotAuthorizedException", "Access Token does not have required scopes")
        XCTAssertEqual(error.refusal, .scopeMissing)
        XCTAssertFalse(error.endsSession)
        XCTAssertTrue(CognitoError.service("NotAuthorizedException", "Access Token has been revoked").endsSession)
        XCTAssertFalse(CognitoError.service("NotAuthorizedException", "Access Token has expired").endsSession)
        XCTAssertTrue(CognitoError.service("UserNotFoundException", "User does not exist.").endsSession)
    }

    func testEndedChallenges() {
        XCTAssertTrue(ServiceRefusal.codeExpired.endsChallenge)
        XCTAssertTrue(ServiceRefusal.challengeSessionExpired.endsChallenge)
        XCTAssertTrue(ServiceRefusal.challengeSessionEnded.endsChallenge)
        XCTAssertFalse(ServiceRefusal.codeMismatch.endsChallenge)
        XCTAssertFalse(ServiceRefusal.incorrectCredentials.endsChallenge)
    }

    func testChallengeNamesKnowTheirCodeField() {
        XCTAssertEqual(ChallengeName.smsMFA.codeField, "SMS_MFA_CODE")
        XCTAssertEqual(ChallengeName.softwareTokenMFA.codeField, "SOFTWARE_TOKEN_MFA_CODE")
        XCTAssertEqual(ChallengeName.emailOTP.codeField, "EMAIL_OTP_CODE")
        XCTAssertEqual(ChallengeName.smsOTP.codeField, "SMS_OTP_CODE")
        XCTAssertNil(ChallengeName.mfaSetup.codeField)
        XCTAssertNil(ChallengeName.newPasswordRequired.codeField)
        XCTAssertEqual(ChallengeName(rawValue: "SOMETHING_NEW").rawValue, "SOMETHING_NEW")
        XCTAssertFalse(ChallengeName.softwareTokenMFA.isDeliveredCode)
        XCTAssertTrue(ChallengeName.emailOTP.isDeliveredCode)
    }
}
