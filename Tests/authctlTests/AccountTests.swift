import CognitoClient
import Foundation
import XCTest

@testable import AuthctlCore
@testable import authctl

/// The local pieces of the account commands and of choosing a first factor.
final class AccountTests: XCTestCase {
    func testConfirmationCodes() throws {
        XCTAssertEqual(try AccountCode.normalized(" 123 456 "), "123456")
        XCTAssertEqual(try AccountCode.normalized("123-456"), "123456")
        XCTAssertEqual(try AccountCode.normalized("AbC9"), "AbC9")
        XCTAssertThrowsError(try AccountCode.normalized("ab cd"))
        XCTAssertThrowsError(try AccountCode.normalized("  "))
    }

    func testAttributes() throws {
        let parsed = try SignUp.parse(["email=c@example.com", "name=Carol = C"])
        XCTAssertEqual(
            parsed,
            [AttributeType(name: "email", value: "c@example.com"), AttributeType(name: "name", value: "Carol = C")])
        XCTAssertThrowsError(try SignUp.parse(["email"]))
        XCTAssertThrowsError(try SignUp.parse(["=x"]))
        XCTAssertThrowsError(try SignUp.parse(["a=1", "a=2"]))
    }

    /// What `account update` says of an email change: the read-back's answer, or that it is unknown.
    func testAnAddressChangeSaysWhatIsInForceOrThatItIsUnknown() {
        let delivery = CodeDeliveryDetails(destination: "n***@e***", deliveryMedium: "EMAIL", attributeName: "email")
        func said(_ kept: Bool?, inForce: String?) -> String {
            let change = AddressChange(
                attribute: .email, requested: "new@example.com", inForce: inForce, verified: false,
                keptUntilVerified: kept, codeDelivery: delivery)
            return AccountUpdateReport(updated: ["email"], addresses: [change]).textMessages.joined(separator: "\n")
        }
        XCTAssertTrue(
            said(true, inForce: "old@example.com").contains(
                "stays the current one (old@example.com) until the new one is verified"))
        XCTAssertTrue(said(false, inForce: "new@example.com").contains("is now new@example.com, not verified yet"))
        let unknown = said(nil, inForce: nil)
        XCTAssertTrue(unknown.contains("could not read your attributes back"), unknown)
        XCTAssertTrue(unknown.contains("is unknown"), unknown)
        XCTAssertFalse(
            unknown.contains("is now new@example.com"), "an unknown outcome is not told as a change in force")
        XCTAssertTrue(unknown.contains("authctl account verify email --no-send"), unknown)
    }

    func testShellWords() {
        XCTAssertEqual(ShellWord.quoted("alice@example.com"), "alice@example.com")
        XCTAssertEqual(ShellWord.quoted("o'brien x"), "'o'\\''brien x'")
    }

    func testRefusalMessagesAndCodes() throws {
        func failure(_ type: String, _ step: AccountFailure.Step = .signUp, message: String = "words") -> AuthctlError {
            AccountFailure.from(
                CognitoError.service(type, message), step: step, username: "carol", endpoint: nil, hasSecret: false)
        }
        XCTAssertEqual(failure("UsernameExistsException").code, .inputRejected)
        let weak = failure("InvalidPasswordException", message: "Password did not conform\u{1b}[2J")
        XCTAssertEqual(weak.code, .inputRejected)
        XCTAssertEqual(weak.message, "The pool refused the password: Password did not conform\\x1b[2J")
        XCTAssertEqual(failure("CodeMismatchException").code, .notAuthorized)
        XCTAssertTrue(
            failure("ExpiredCodeException", .confirmSignUp).message.contains("authctl resend-code --username carol"))
        XCTAssertTrue(
            failure("ExpiredCodeException", .forgotPassword).message.contains(
                "authctl forgot-password --username carol"))
        XCTAssertEqual(failure("LimitExceededException").code, .throttled)
        XCTAssertEqual(failure("TooManyRequestsException").code, .throttled)
        func signIn(_ type: String) -> AuthctlError? {
            RefusalTable.failure(CognitoError.service(type, "x"), at: .signIn, RefusalFacts(username: "carol"))
        }
        let unconfirmed = signIn("UserNotConfirmedException")
        XCTAssertEqual(unconfirmed?.code, .notAuthorized)
        XCTAssertTrue(unconfirmed?.message.contains("authctl confirm-signup --username carol") == true)
        XCTAssertTrue(unconfirmed?.message.contains("authctl resend-code --username carol") == true)
        let reset = signIn("PasswordResetRequiredException")
        XCTAssertTrue(reset?.message.contains("authctl forgot-password --username carol") == true)
        XCTAssertEqual(signIn("NotAuthorizedException")?.message, Messages.incorrectCredentials)
    }

    func testFirstFactorChoice() throws {
        let console = FakeConsole(interactive: false)
        XCTAssertEqual(try FirstFactorChoice.choose(["EMAIL_OTP"], method: nil, console: console), "EMAIL_OTP")
        XCTAssertEqual(
            try FirstFactorChoice.choose(["PASSWORD", "EMAIL_OTP"], method: .emailOTP, console: console), "EMAIL_OTP")
        XCTAssertThrowsError(try FirstFactorChoice.choose(["PASSWORD", "EMAIL_OTP"], method: nil, console: console)) {
            error in
            XCTAssertEqual((error as? AuthctlError)?.code, .usage)
            XCTAssertTrue((error as? AuthctlError)?.message.contains("--method: password, email-otp") == true)
        }
        XCTAssertThrowsError(try FirstFactorChoice.choose(["EMAIL_OTP"], method: .smsOTP, console: console)) { error in
            XCTAssertEqual((error as? AuthctlError)?.code, .inputRejected)
        }
        // A passkey is a usable first factor now (answered with a security key).
        XCTAssertEqual(try FirstFactorChoice.choose(["WEB_AUTHN"], method: nil, console: console), "WEB_AUTHN")
        XCTAssertThrowsError(try FirstFactorChoice.choose(["CUSTOM_FACTOR"], method: nil, console: console)) { error in
            XCTAssertEqual((error as? AuthctlError)?.code, .unexpected)
        }
    }
}

/// A confirmation code's refusals say what is wrong: empty, too long, or white space inside.
final class AccountCodeTests: XCTestCase {
    func testEachRefusalSaysWhatIsWrong() {
        let cases: [(String, String)] = [
            ("", "the code is empty"),
            ("   ", "the code is empty"),
            (
                String(repeating: "1", count: 1_000_000),
                "the code is 1000000 bytes long; a confirmation code is at most 2048"
            ),
            (String(repeating: "a", count: 2049), "the code is 2049 bytes long"),
            ("12 34 ab", "has no spaces inside"),
        ]
        for (code, said) in cases {
            XCTAssertThrowsError(try AccountCode.normalized(code)) { error in
                let failure = AuthctlError.from(error)
                XCTAssertEqual(failure.code, .inputRejected)
                XCTAssertTrue(failure.message.contains(said), "\(code.prefix(20)): \(failure.message)")
            }
        }
        XCTAssertEqual(try AccountCode.normalized(" 123 456 "), "123456")
        XCTAssertEqual(try AccountCode.normalized(String(repeating: "a", count: 2048)).count, 2048)
    }

    /// One-time codes: the shapes no factor has are refused, in the words docs/cli.md gives.
    func testOneTimeCodeShapes() {
        for (code, format) in [("12345", CodeFormat.any), ("1234567", .any), ("12345678", .authenticator)] {
            XCTAssertThrowsError(try OneTimeCode.normalized(code, format: format)) { error in
                XCTAssertTrue(
                    AuthctlError.from(error).message.hasPrefix("a code from the authenticator app is 6 digits"),
                    "\(error)")
            }
        }
        XCTAssertEqual(try OneTimeCode.normalized("123 456", format: .authenticator), "123456")
        XCTAssertEqual(try OneTimeCode.normalized("12345678", format: .delivered), "12345678")
        XCTAssertThrowsError(try OneTimeCode.normalized(String(repeating: "1", count: 100_000)))
    }
}
