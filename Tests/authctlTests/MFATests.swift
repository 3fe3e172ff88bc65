import CognitoClient
import Foundation
import LocalFormats
import SecureStore
import XCTest

@testable import AuthctlCore
@testable import authctl

/// Sign-in challenges answered through the command, against a fake answering like the service
/// (ChallengeName, ChallengeParameters, Session as in the service model).
final class MFAChallengeTests: XCTestCase {
    private func signIn(_ arguments: [String], _ harness: Harness) throws {
        try SignIn.parse(["--username", "alice", "--flow", "password"] + arguments).run(in: harness.host)
    }

    private func challenge(_ name: String, _ parameters: [String: String] = [:]) -> (Int, [String: Any]) {
        (200, ["ChallengeName": name, "Session": "session-1", "ChallengeParameters": parameters])
    }

    func testAuthenticatorCodeFromOption() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in self.challenge("SOFTWARE_TOKEN_MFA", ["USERNAME": "alice"]) }
        harness.cognito.handlers["RespondToAuthChallenge"] = { body in
            XCTAssertEqual(body["Session"] as? String, "session-1")
            XCTAssertEqual((body["ChallengeResponses"] as? [String: String])?["SOFTWARE_TOKEN_MFA_CODE"], "123456")
            return (200, FakeCognito.tokens())
        }
        try signIn(["--password-stdin", "--mfa-code", "123 456"], harness)
        XCTAssertNotNil(try profileStore(harness.store).session())
    }

    func testWrongCodeOnTerminalIsAskedAgain() throws {
        let console = FakeConsole(interactive: true, promptAnswers: ["pw", "111111", "222222"])
        let harness = Harness(console: console)
        harness.cognito.handlers["InitiateAuth"] = { _ in self.challenge("SOFTWARE_TOKEN_MFA") }
        harness.cognito.handlers["RespondToAuthChallenge"] = { body in
            let code = (body["ChallengeResponses"] as? [String: String])?["SOFTWARE_TOKEN_MFA_CODE"]
            return code == "222222"
                ? (200, FakeCognito.tokens())
                : FakeCognito.error("CodeMismatchException", "Invalid code received for user")
        }
        try signIn([], harness)
        XCTAssertTrue(console.stderr.contains(Messages.codeDidNotMatchTryAgain))
        XCTAssertEqual(console.prompts.map(\.question).filter { $0 == "Authenticator code: " }.count, 2)
    }

    func testWrongCodeWithoutTerminalExits77() {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in self.challenge("SOFTWARE_TOKEN_MFA") }
        harness.cognito.handlers["RespondToAuthChallenge"] = { _ in
            FakeCognito.error("CodeMismatchException", "Invalid code received for user")
        }
        XCTAssertThrowsError(try signIn(["--password-stdin", "--mfa-code", "000000"], harness)) { error in
            let error = AuthctlError.from(error)
            XCTAssertEqual(error.code, .notAuthorized)
            XCTAssertEqual(error.message, "The code did not match")
        }
        XCTAssertEqual(harness.cognito.count("RespondToAuthChallenge"), 1)
    }

    func testExpiredChallengeSaysStartAgain() {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in self.challenge("SOFTWARE_TOKEN_MFA") }
        harness.cognito.handlers["RespondToAuthChallenge"] = { _ in
            FakeCognito.error("NotAuthorizedException", "Invalid session for the user, session is expired.")
        }
        XCTAssertThrowsError(try signIn(["--password-stdin", "--mfa-code", "000000"], harness)) { error in
            let error = AuthctlError.from(error)
            XCTAssertEqual(error.code, .notAuthorized)
            XCTAssertEqual(error.message, Messages.challengeExpired)
        }
    }

    func testSMSSaysWhereTheCodeWent() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in
            self.challenge(
                "SMS_MFA", ["CODE_DELIVERY_DELIVERY_MEDIUM": "SMS", "CODE_DELIVERY_DESTINATION": "+*******1234"])
        }
        harness.cognito.handlers["RespondToAuthChallenge"] = { body in
            XCTAssertEqual((body["ChallengeResponses"] as? [String: String])?["SMS_MFA_CODE"], "654321")
            return (200, FakeCognito.tokens())
        }
        try signIn(["--password-stdin", "--mfa-code", "654321"], harness)
        XCTAssertEqual(harness.console.stderr.first, "Code sent to +*******1234")
    }

    func testEmailCode() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in
            self.challenge("EMAIL_OTP", ["CODE_DELIVERY_DESTINATION": "a***@e***"])
        }
        harness.cognito.handlers["RespondToAuthChallenge"] = { body in
            XCTAssertEqual((body["ChallengeResponses"] as? [String: String])?["EMAIL_OTP_CODE"], "13579246")
            return (200, FakeCognito.tokens())
        }
        try signIn(["--password-stdin", "--mfa-code", "13579246"], harness)
    }

    func testSelectFactorThenAnswerIt() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in
            self.challenge("SELECT_MFA_TYPE", ["MFAS_CAN_CHOOSE": #"["SMS_MFA","SOFTWARE_TOKEN_MFA"]"#])
        }
        var round = 0
        harness.cognito.handlers["RespondToAuthChallenge"] = { body in
            round += 1
            let answers = body["ChallengeResponses"] as? [String: String] ?? [:]
            if round == 1 {
                XCTAssertEqual(body["ChallengeName"] as? String, "SELECT_MFA_TYPE")
                XCTAssertEqual(answers["ANSWER"], "SOFTWARE_TOKEN_MFA")
                return self.challenge("SOFTWARE_TOKEN_MFA")
            }
            XCTAssertEqual(answers["SOFTWARE_TOKEN_MFA_CODE"], "123456")
            return (200, FakeCognito.tokens())
        }
        try signIn(["--password-stdin", "--mfa-type", "totp", "--mfa-code", "123456"], harness)
        XCTAssertEqual(round, 2)
    }

    func testSelectFactorWithoutChoiceOrTerminalIsUsage() {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in
            self.challenge("SELECT_MFA_TYPE", ["MFAS_CAN_CHOOSE": #"["SMS_MFA","EMAIL_OTP"]"#])
        }
        XCTAssertThrowsError(try signIn(["--password-stdin"], harness)) { error in
            let error = AuthctlError.from(error)
            XCTAssertEqual(error.code, .usage)
            XCTAssertTrue(error.message.contains("--mfa-type") && error.message.contains("sms, email"), error.message)
        }
    }

    func testSelectFactorOnTerminalListsThemInWords() throws {
        let console = FakeConsole(interactive: true, promptAnswers: ["pw", "2", "777777"])
        let harness = Harness(console: console)
        harness.cognito.handlers["InitiateAuth"] = { _ in
            self.challenge("SELECT_MFA_TYPE", ["MFAS_CAN_CHOOSE": #"["SMS_MFA","EMAIL_OTP"]"#])
        }
        harness.cognito.handlers["RespondToAuthChallenge"] = { body in
            let answers = body["ChallengeResponses"] as? [String: String] ?? [:]
            if answers["ANSWER"] == "EMAIL_OTP" {
                return self.challenge("EMAIL_OTP", ["CODE_DELIVERY_DESTINATION": "a***@e***"])
            }
            XCTAssertEqual(answers["EMAIL_OTP_CODE"], "777777")
            return (200, FakeCognito.tokens())
        }
        try signIn([], harness)
        XCTAssertTrue(console.stderr.contains("  1. text message (SMS)"))
        XCTAssertTrue(console.stderr.contains("  2. email"))
    }

    func testMFASetupOnTerminalShowsSecretAndFinishesWithNewSession() throws {
        let console = FakeConsole(interactive: true, promptAnswers: ["pw", "123456"])
        let harness = Harness(console: console)
        harness.cognito.handlers["InitiateAuth"] = { _ in
            self.challenge("MFA_SETUP", ["MFAS_CAN_SETUP": #"["SOFTWARE_TOKEN_MFA"]"#])
        }
        harness.cognito.handlers["AssociateSoftwareToken"] = { body in
            XCTAssertEqual(body["Session"] as? String, "session-1")
            return (200, ["SecretCode": "JBSWY3DPEHPK3PXP", "Session": "session-2"])
        }
        harness.cognito.handlers["VerifySoftwareToken"] = { body in
            XCTAssertEqual(body["Session"] as? String, "session-2")
            XCTAssertEqual(body["UserCode"] as? String, "123456")
            XCTAssertTrue((body["FriendlyDeviceName"] as? String)?.hasPrefix("authctl on ") ?? false)
            return (200, ["Status": "SUCCESS", "Session": "session-3"])
        }
        harness.cognito.handlers["RespondToAuthChallenge"] = { body in
            XCTAssertEqual(body["ChallengeName"] as? String, "MFA_SETUP")
            XCTAssertEqual(body["Session"] as? String, "session-3")
            return (200, FakeCognito.tokens())
        }
        try signIn([], harness)
        let shown = console.stderr.joined(separator: "\n")
        XCTAssertTrue(shown.contains("Secret (Base32): JBSWY3DPEHPK3PXP"))
        XCTAssertTrue(
            shown.contains(
                "URI: otpauth://totp/eu-west-1_TestPool:alice?secret=JBSWY3DPEHPK3PXP&issuer=eu-west-1_TestPool"))
        XCTAssertTrue(shown.contains("▀") || shown.contains("▄"), "a QR code is drawn")
    }

    func testMFASetupForScriptsInTwoSteps() throws {
        let store = InMemorySecretStore()
        let first = Harness(console: FakeConsole(stdin: ["pw"]), store: store)
        first.cognito.handlers["InitiateAuth"] = { _ in
            self.challenge("MFA_SETUP", ["MFAS_CAN_SETUP": #"["SOFTWARE_TOKEN_MFA"]"#])
        }
        first.cognito.handlers["AssociateSoftwareToken"] = { _ in
            (200, ["SecretCode": "JBSWY3DPEHPK3PXP", "Session": "session-2"])
        }
        try signIn(["--password-stdin", "--mfa-setup-output", "json"], first)
        let handout = try JSONSerialization.jsonObject(with: Data(first.console.stdout[0].utf8)) as? [String: Any]
        XCTAssertEqual(handout?["secretCode"] as? String, "JBSWY3DPEHPK3PXP")
        XCTAssertTrue((handout?["otpauthUri"] as? String)?.hasPrefix("otpauth://totp/") ?? false)
        XCTAssertNil(try profileStore(store).session(), "not signed in yet")

        let second = Harness(console: FakeConsole(), store: store)
        second.cognito.handlers["VerifySoftwareToken"] = { body in
            XCTAssertEqual(body["Session"] as? String, "session-2")
            return (200, ["Status": "SUCCESS", "Session": "session-3"])
        }
        second.cognito.handlers["RespondToAuthChallenge"] = { body in
            XCTAssertEqual(body["Session"] as? String, "session-3")
            XCTAssertEqual((body["ChallengeResponses"] as? [String: String])?["USERNAME"], "alice")
            return (200, FakeCognito.tokens())
        }
        try SignIn.parse(["--mfa-code", "123456"]).run(in: second.host)
        XCTAssertNotNil(try profileStore(store).session())
        XCTAssertNil(
            try store.read(SecretKey(kind: "pending-challenge", profile: "default")), "the pending set-up is used once")
    }

    func testMFASetupWithoutTerminalOrJSONIsUsage() {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in
            self.challenge("MFA_SETUP", ["MFAS_CAN_SETUP": #"["SOFTWARE_TOKEN_MFA"]"#])
        }
        XCTAssertThrowsError(try signIn(["--password-stdin"], harness)) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .usage)
        }
        XCTAssertEqual(harness.cognito.count("AssociateSoftwareToken"), 0)
    }

    func testOTPAuthURIEscapesLabel() {
        XCTAssertEqual(
            AuthenticatorURI.otpauth(secret: "ABC", username: "a b@x.org", issuer: "My Pool"),
            "otpauth://totp/My%20Pool:a%20b%40x.org?secret=ABC&issuer=My%20Pool")
    }

    func testTokenSignsInThroughAnMFAChallenge() throws {
        // `token` parses its own MFA options; before, it built an unparsed MFAOptions and crashed.
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in self.challenge("SOFTWARE_TOKEN_MFA") }
        harness.cognito.handlers["RespondToAuthChallenge"] = { body in
            XCTAssertEqual((body["ChallengeResponses"] as? [String: String])?["SOFTWARE_TOKEN_MFA_CODE"], "123456")
            return (200, FakeCognito.tokens())
        }
        try Token.parse(["--username", "alice", "--password-stdin", "--flow", "password", "--mfa-code", "123456"]).run(
            in: harness.host)
        XCTAssertEqual(harness.console.stdout.count, 1)
        XCTAssertThrowsError(try Token.parse(["--mfa-code", "123456"]))
    }

    func testPipedPasswordOnATerminalIsAskedForTheCode() throws {
        let console = pipedConsole(stdin: ["pw"], promptAnswers: ["123456"])
        let harness = Harness(console: FakeConsole())
        let context = ProcessHost(
            console: console, environment: harness.host.environment, now: Date.init,
            makeTransport: { _ in harness.cognito }, makeStore: { harness.store })
        harness.cognito.handlers["InitiateAuth"] = { _ in self.challenge("SOFTWARE_TOKEN_MFA") }
        harness.cognito.handlers["RespondToAuthChallenge"] = { _ in (200, FakeCognito.tokens()) }
        try SignIn.parse(["--username", "alice", "--flow", "password", "--password-stdin"]).run(in: context)
        XCTAssertEqual(console.prompts.map(\.question), ["Authenticator code: "])
    }

    func testMalformedCodesAreNotSent() {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in self.challenge("SOFTWARE_TOKEN_MFA") }
        XCTAssertThrowsError(try signIn(["--password-stdin", "--mfa-code", "1234567"], harness)) { error in
            let error = AuthctlError.from(error)
            XCTAssertEqual(error.code, .inputRejected)
            XCTAssertTrue(error.message.contains("6 digits"), error.message)
        }
        XCTAssertEqual(harness.cognito.count("RespondToAuthChallenge"), 0)

        let console = FakeConsole(interactive: true, promptAnswers: ["pw", "", "12345", "abcdef", "654321"])
        let terminal = Harness(console: console)
        terminal.cognito.handlers["InitiateAuth"] = { _ in self.challenge("SOFTWARE_TOKEN_MFA") }
        terminal.cognito.handlers["RespondToAuthChallenge"] = { body in
            XCTAssertEqual((body["ChallengeResponses"] as? [String: String])?["SOFTWARE_TOKEN_MFA_CODE"], "654321")
            return (200, FakeCognito.tokens())
        }
        XCTAssertNoThrow(try signIn([], terminal))
        XCTAssertEqual(terminal.cognito.count("RespondToAuthChallenge"), 1)
        XCTAssertEqual(console.prompts.filter { $0.question == "Authenticator code: " }.count, 4)
    }

    func testTooManyWrongCodesIsNotTooLong() {
        let console = FakeConsole(interactive: true, promptAnswers: ["pw", "111111", "222222"])
        let harness = Harness(console: console)
        harness.cognito.handlers["InitiateAuth"] = { _ in self.challenge("SOFTWARE_TOKEN_MFA") }
        var answers = 0
        harness.cognito.handlers["RespondToAuthChallenge"] = { _ in
            answers += 1
            return answers == 1
                ? FakeCognito.error("CodeMismatchException", "Invalid code received for user")
                : FakeCognito.error("NotAuthorizedException", "Invalid session for the user.")
        }
        XCTAssertThrowsError(try signIn([], harness)) { error in
            let error = AuthctlError.from(error)
            XCTAssertEqual(error.code, .notAuthorized)
            XCTAssertTrue(error.message.contains("Too many wrong codes"), error.message)
            XCTAssertNotEqual(error.message, Messages.challengeExpired)
        }
        XCTAssertEqual(answers, 2, "no prompt after the service ended the challenge")
    }

    func testTextMessageCodeWaitsForASecondRun() throws {
        let store = InMemorySecretStore()
        let first = Harness(console: FakeConsole(stdin: ["pw"]), store: store)
        first.cognito.handlers["InitiateAuth"] = { _ in
            self.challenge("SMS_MFA", ["CODE_DELIVERY_DESTINATION": "+*******1234"])
        }
        XCTAssertThrowsError(try signIn(["--password-stdin"], first)) { error in
            let error = AuthctlError.from(error)
            XCTAssertEqual(error.code, .usage)
            XCTAssertTrue(
                error.message.contains("authctl signin --code CODE") && error.message.contains("+*******1234"),
                error.message)
        }
        XCTAssertEqual(first.cognito.count("RespondToAuthChallenge"), 0)
        let pending = try XCTUnwrap(profileStore(store).pendingChallenge())
        XCTAssertEqual(pending.challengeName, "SMS_MFA")

        let second = Harness(console: FakeConsole(), store: store)
        second.cognito.handlers["RespondToAuthChallenge"] = { body in
            XCTAssertEqual(body["Session"] as? String, "session-1")
            XCTAssertEqual((body["ChallengeResponses"] as? [String: String])?["SMS_MFA_CODE"], "654321")
            return (200, FakeCognito.tokens())
        }
        try SignIn.parse(["--mfa-code", "654321"]).run(in: second.host)
        XCTAssertNotNil(try profileStore(store).session())
        XCTAssertNil(try store.read(SecretKey(kind: "pending-challenge", profile: "default")))
    }

    func testPendingSetupOutlivesAWrongCodeAndIsForItsUser() throws {
        let store = InMemorySecretStore()
        let first = Harness(console: FakeConsole(stdin: ["pw"]), store: store)
        first.cognito.handlers["InitiateAuth"] = { _ in
            self.challenge("MFA_SETUP", ["MFAS_CAN_SETUP": #"["SOFTWARE_TOKEN_MFA"]"#])
        }
        first.cognito.handlers["AssociateSoftwareToken"] = { _ in
            (200, ["SecretCode": "JBSWY3DPEHPK3PXP", "Session": "session-2"])
        }
        try signIn(["--password-stdin", "--mfa-setup-output", "json"], first)

        let wrong = Harness(console: FakeConsole(), store: store)
        wrong.cognito.handlers["VerifySoftwareToken"] = { _ in
            FakeCognito.error("EnableSoftwareTokenMFAException", "Code mismatch")
        }
        XCTAssertThrowsError(try SignIn.parse(["--mfa-code", "111111"]).run(in: wrong.host)) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .notAuthorized)
        }
        XCTAssertEqual(try profileStore(store).pendingChallenge()?.wrongCodes, 1, "kept after a wrong code")

        let bob = Harness(console: FakeConsole(), store: store)
        XCTAssertThrowsError(try SignIn.parse(["--username", "bob", "--mfa-code", "123456"]).run(in: bob.host)) {
            error in
            let error = AuthctlError.from(error)
            XCTAssertEqual(error.code, .usage)
            XCTAssertTrue(error.message.contains("alice") && error.message.contains("bob"), error.message)
        }
        XCTAssertEqual(bob.cognito.calls.count, 0)
        XCTAssertNotNil(try profileStore(store).pendingChallenge())

        let late = Harness(console: FakeConsole(), store: store, now: Date().addingTimeInterval(200))
        XCTAssertThrowsError(try SignIn.parse(["--mfa-code", "123456"]).run(in: late.host)) { error in
            let error = AuthctlError.from(error)
            XCTAssertEqual(error.code, .notAuthorized)
            XCTAssertEqual(error.message, Messages.pendingCodeTooLate)
        }
        XCTAssertNil(try profileStore(store).pendingChallenge())
    }

    func testQRCodeHasAQuietZoneOfFour() throws {
        let code = try TerminalQRCode(encoding: "otpauth://totp/x:y?secret=ABC&issuer=x")
        let lines = code.render(colors: false).split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[0].count, code.modules.count + 8)
        // Light modules are blocks without colours: two full lines (4 module rows) of quiet zone.
        XCTAssertTrue(lines[0].allSatisfy { $0 == "█" } && lines[1].allSatisfy { $0 == "█" })
        XCTAssertTrue(lines.dropFirst(2).allSatisfy { $0.hasPrefix("████") && $0.hasSuffix("████") })
    }

    func testAuthenticatorLabelIsTheNameAPersonKnows() {
        XCTAssertEqual(
            AuthenticatorURI.label(
                username: "5f0c1b9e-8a1d-4c52-9a39-2f1f7b0c7e11", attributes: ["email": "carol@example.com"]),
            "carol@example.com")
        XCTAssertEqual(AuthenticatorURI.label(username: "alice", attributes: ["email": "alice@example.com"]), "alice")
    }
}

/// Standard input is a pipe (the password), but a controlling terminal answers prompts.
private func pipedConsole(stdin: [String], promptAnswers: [String]) -> FakeConsole {
    FakeConsole(interactive: false, canPrompt: true, stdin: stdin, promptAnswers: promptAnswers)
}
