import CognitoClient
import XCTest

@testable import AuthctlCore

/// The one table of refusal messages: every refusal has a general row, each sentence is used,
/// and each step tells its refusals with the documented words and exit codes.
final class RefusalTableTests: XCTestCase {
    func testEveryRefusalHasAGeneralRowAndEverySentenceIsUsed() {
        for refusal in ServiceRefusal.allCases {
            XCTAssertNotNil(RefusalTable.entry(refusal, at: .general), "\(refusal) has no general row")
        }
        let used = Set(RefusalStep.allCases.flatMap { RefusalTable.rows(at: $0).values.map(\.sentence) })
        for sentence in RefusalSentence.allCases {
            XCTAssertTrue(used.contains(sentence), "\(sentence) is in no row")
        }
    }

    /// Only the exit codes docs/cli.md gives refusals.
    func testEveryRowExitsWithADocumentedCode() {
        let documented: Set<AuthctlError.Code> = [
            .unexpected, .inputRejected, .unavailable, .throttled, .notAuthorized, .configuration,
        ]
        for step in RefusalStep.allCases {
            for (refusal, entry) in RefusalTable.rows(at: step) {
                XCTAssertTrue(documented.contains(entry.code), "\(step) \(refusal): \(entry.code)")
            }
        }
    }

    func testEachStepTellsItsRefusals() {
        struct Row {
            let step: RefusalStep
            let type: String
            let message: String
            var facts = RefusalFacts()
            let code: AuthctlError.Code
            let text: String
        }
        let carol = RefusalFacts(
            username: "carol", poolId: "eu-west-1_p", newCode: "authctl resend-code --username carol")
        let rows: [Row] = [
            Row(
                step: .general, type: "UserNotFoundException", message: "User does not exist.", code: .notAuthorized,
                text: "User does not exist."),
            Row(
                step: .general, type: "NotAuthorizedException", message: "Refresh Token has been revoked",
                code: .notAuthorized, text: "Refresh Token has been revoked"),
            Row(
                step: .general, type: "TooManyRequestsException", message: "slow\u{1b}[2J", code: .throttled,
                text: "Too many requests; wait a few minutes and try again (slow\\x1b[2J)"),
            Row(
                step: .general, type: "ResourceNotFoundException", message: "m", code: .configuration,
                text: "Cognito does not know this user pool or app client: m"),
            Row(
                step: .general, type: "InvalidParameterException", message: "m", code: .configuration,
                text: "Cognito refused the request: m"),
            Row(step: .general, type: "CodeMismatchException", message: "m", code: .inputRejected, text: "m"),
            Row(
                step: .general, type: "ForbiddenException", message: "m", code: .notAuthorized,
                text: "the user pool's web ACL refused the request: m"),
            Row(
                step: .general, type: "WeirdException", message: "m", code: .unexpected,
                text: "WeirdException from Cognito: m"),
            Row(
                step: .signIn, type: "NotAuthorizedException", message: "Incorrect username or password.",
                code: .notAuthorized, text: Messages.incorrectCredentials),
            Row(
                step: .signIn, type: "UserNotFoundException", message: "m", code: .notAuthorized,
                text: Messages.incorrectCredentials),
            Row(
                step: .signIn, type: "NotAuthorizedException", message: "Password attempts exceeded",
                code: .throttled, text: Messages.tooManyAttempts),
            Row(
                step: .signIn, type: "CodeMismatchException", message: "m", code: .notAuthorized,
                text: Messages.codeDidNotMatch),
            Row(
                step: .signIn, type: "ExpiredCodeException", message: "m", code: .notAuthorized,
                text: Messages.challengeExpired),
            Row(
                step: .signIn, type: "NotAuthorizedException", message: "Invalid session for the user.",
                facts: RefusalFacts(wrongCodes: 2), code: .notAuthorized,
                text: "Too many wrong codes: Cognito ended this sign-in; start the sign-in again: authctl signin"),
            Row(
                step: .signIn, type: "NotAuthorizedException", message: "Invalid session for the user.",
                code: .notAuthorized,
                text: "Cognito no longer accepts this sign-in's challenge; start again: authctl signin"),
            Row(
                step: .signIn, type: "NotAuthorizedException", message: "Client x has a secret", code: .configuration,
                text:
                    "this app client has a secret: set AUTHCTL_CLIENT_SECRET or store it with `authctl configure --client-secret-stdin` (Client x has a secret)"
            ),
            Row(
                step: .signIn, type: "PasswordResetRequiredException", message: "m", facts: carol,
                code: .notAuthorized,
                text: "This account must set a new password first: run `authctl forgot-password --username carol`"),
            Row(
                step: .account, type: "UsernameExistsException", message: "m", facts: carol, code: .inputRejected,
                text:
                    "An account named carol already exists; sign in with `authctl signin --username carol`, or reset its password with `authctl forgot-password --username carol`"
            ),
            Row(
                step: .account, type: "ExpiredCodeException", message: "m", facts: carol, code: .notAuthorized,
                text:
                    "The code has expired (or a newer one was sent since); get a new code with `authctl resend-code --username carol`"
            ),
            Row(
                step: .account, type: "UserNotFoundException", message: "m", facts: carol, code: .notAuthorized,
                text: "This pool has no account named carol"),
            Row(
                step: .account, type: "InvalidParameterException", message: "User is already confirmed.",
                facts: carol, code: .notAuthorized,
                text:
                    "The account carol is already confirmed: no code is needed; sign in with `authctl signin --username carol`"
            ),
            Row(
                step: .accountChange, type: "AliasExistsException", message: "m", code: .inputRejected,
                text: "Another account already uses this email address or phone number: m"),
            Row(
                step: .accountChange, type: "CodeDeliveryFailureException", message: "m", code: .unavailable,
                text: "The pool could not send the code: m"),
            Row(
                step: .accountChange, type: "InvalidParameterException", message: "m", code: .inputRejected,
                text: "The pool refused the change: m"),
            Row(
                step: .changePassword, type: "NotAuthorizedException", message: "Incorrect username or password.",
                code: .notAuthorized, text: "Current password is incorrect"),
            Row(
                step: .changePassword, type: "LimitExceededException", message: "m", code: .throttled,
                text: Messages.tooManyAttempts),
            Row(
                step: .changePassword, type: "InvalidPasswordException", message: "too short", code: .inputRejected,
                text: "too short"),
            Row(
                step: .ops, type: "UserNotFoundException", message: "m", facts: carol, code: .inputRejected,
                text: "no user carol in eu-west-1_p: m"),
            Row(
                step: .ops, type: "NotAuthorizedException", message: "m", facts: carol, code: .notAuthorized,
                text: "the service refused the AWS credentials: NotAuthorizedException: m"),
            Row(
                step: .ops, type: "AccessDeniedException", message: "m", facts: carol, code: .notAuthorized,
                text: "the service refused the AWS credentials: AccessDeniedException: m"),
        ]
        for row in rows {
            let failure = RefusalTable.failure(CognitoError.service(row.type, row.message), at: row.step, row.facts)
            XCTAssertEqual(failure?.code, row.code, "\(row.step) \(row.type) \(row.message)")
            XCTAssertEqual(failure?.message, row.text, "\(row.step) \(row.type) \(row.message)")
        }
    }

    /// A step without a row of its own leaves the refusal to the general one (the caller's
    /// fallback, `AuthctlError.from`), which is the same table.
    func testAStepWithoutARowLeavesTheRefusalToTheGeneralOne() {
        let revoked = CognitoError.service("ResourceNotFoundException", "gone")
        XCTAssertNil(RefusalTable.failure(revoked, at: .ops))
        XCTAssertNil(RefusalTable.failure(revoked, at: .signIn))
        XCTAssertEqual(AuthctlError.from(revoked).message, "Cognito does not know this user pool or app client: gone")
        XCTAssertEqual(AuthctlError.from(revoked).code, .configuration)
    }

    func testChangePasswordKeepsTheSessionOnAPlainNotAuthorized() {
        let plain = CognitoError.service("NotAuthorizedException", "Not authorized.")
        let revoked = CognitoError.service("NotAuthorizedException", "Access Token has been revoked")
        XCTAssertTrue(RefusalTable.endsSession(plain, at: .general))
        XCTAssertFalse(RefusalTable.endsSession(plain, at: .changePassword))
        XCTAssertTrue(RefusalTable.endsSession(revoked, at: .changePassword))
        XCTAssertEqual(plain.refusal, .notAuthorized)
    }

    func testTheDecidingRefusalEndsTheSessionElseIsAnExpiredToken() {
        let expired = CognitoError.service("NotAuthorizedException", "Access Token has expired")
        let revoked = CognitoError.service("NotAuthorizedException", "Access Token has been revoked")
        let other = CognitoError.service("InvalidParameterException", "m")
        XCTAssertEqual(RefusalTable.deciding([other, expired, revoked])?.message, revoked.message)
        XCTAssertEqual(RefusalTable.deciding([other, expired])?.message, expired.message)
        XCTAssertEqual(RefusalTable.deciding([other])?.message, other.message)
        XCTAssertNil(RefusalTable.deciding([]))
    }
}
