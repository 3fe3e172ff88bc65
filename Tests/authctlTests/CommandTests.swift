import CognitoClient
import Foundation
import SecureStore
import XCTest

@testable import AuthctlCore
@testable import authctl

/// Commands run with an injected console, store and Cognito fake: no network, no keyring.
final class SignInCommandTests: XCTestCase {
    private func signIn(_ arguments: [String], _ harness: Harness) throws {
        let command = try SignIn.parse(arguments)
        try command.run(in: harness.host)
    }

    func testPasswordFromStdinStoresSessionAndPrintsNothingOnStdout() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { body in
            XCTAssertEqual((body["AuthParameters"] as? [String: String])?["PASSWORD"], "pw")
            return (200, FakeCognito.tokens())
        }
        try signIn(["--username", "alice", "--password-stdin", "--flow", "password"], harness)
        XCTAssertEqual(harness.console.stdout, [])
        XCTAssertEqual(harness.console.stderr.count, 1)
        XCTAssertTrue(
            harness.console.stderr[0].hasPrefix("Signed in as alice (profile default); access token valid until "))
        let stored = try profileStore(harness.store).session()
        XCTAssertEqual(stored?.username, "alice")
        XCTAssertEqual(stored?.refreshToken, "refresh-1")
        XCTAssertEqual(stored?.userPoolId, "eu-west-1_TestPool")
    }

    func testJSONOutputHasNoToken() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in (200, FakeCognito.tokens()) }
        try signIn(["--username", "alice", "--password-stdin", "--flow", "password", "--output", "json"], harness)
        XCTAssertEqual(harness.console.stdout.count, 1)
        let object = try JSONSerialization.jsonObject(with: Data(harness.console.stdout[0].utf8)) as? [String: Any]
        XCTAssertEqual(
            Set(object?.keys ?? [:].keys), ["username", "sub", "profile", "userPoolId", "accessTokenExpiresAt"])
        XCTAssertFalse(harness.console.stdout[0].contains("refresh-1"))
    }

    func testNoTerminalAndNoPasswordStdinIsUsageError() {
        let harness = Harness(console: FakeConsole(interactive: false))
        XCTAssertThrowsError(try signIn(["--username", "alice"], harness)) { error in
            let error = error as? AuthctlError
            XCTAssertEqual(error?.code, .usage)
            XCTAssertTrue(error?.message.contains("--password-stdin") ?? false)
        }
        XCTAssertTrue(harness.cognito.calls.isEmpty)
    }

    func testWrongPasswordAndUnknownUserReadTheSame() throws {
        var messages: [String] = []
        for type in ["NotAuthorizedException", "UserNotFoundException"] {
            let harness = Harness(console: FakeConsole(stdin: ["pw"]))
            harness.cognito.handlers["InitiateAuth"] = { _ in FakeCognito.error(type, "whatever the service says") }
            XCTAssertThrowsError(
                try signIn(["--username", "alice", "--password-stdin", "--flow", "password"], harness)
            ) { error in
                let error = error as? AuthctlError
                XCTAssertEqual(error?.code, .notAuthorized)
                messages.append(error?.message ?? "")
            }
            XCTAssertNil(try harness.store.read(SecretKey(kind: "session", profile: "default")))
        }
        XCTAssertEqual(messages, ["Incorrect username or password", "Incorrect username or password"])
    }

    func testNewPasswordRequiredTakesSecondStdinLine() throws {
        let harness = Harness(console: FakeConsole(stdin: ["Temp-1", "Brand-New-2"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in
            (
                200,
                [
                    "ChallengeName": "NEW_PASSWORD_REQUIRED", "Session": "s1",
                    "ChallengeParameters": ["USER_ID_FOR_SRP": "alice"],
                ]
            )
        }
        harness.cognito.handlers["RespondToAuthChallenge"] = { body in
            XCTAssertEqual((body["ChallengeResponses"] as? [String: String])?["NEW_PASSWORD"], "Brand-New-2")
            return (200, FakeCognito.tokens())
        }
        try signIn(["--username", "alice", "--password-stdin", "--flow", "password"], harness)
        XCTAssertNotNil(try profileStore(harness.store).session())
    }

    func testNewPasswordRequiredWithoutSecondLineIsUsageError() {
        let harness = Harness(console: FakeConsole(stdin: ["Temp-1"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in
            (200, ["ChallengeName": "NEW_PASSWORD_REQUIRED", "Session": "s1", "ChallengeParameters": [:]])
        }
        XCTAssertThrowsError(try signIn(["--username", "alice", "--password-stdin", "--flow", "password"], harness)) {
            error in
            XCTAssertEqual((error as? AuthctlError)?.code, .usage)
        }
    }

    func testInteractiveNewPasswordMismatchAsksAgain() throws {
        let console = FakeConsole(
            interactive: true, promptAnswers: ["Temp-1", "New-Pass-1", "typo", "New-Pass-1", "New-Pass-1"])
        let harness = Harness(console: console)
        harness.cognito.handlers["InitiateAuth"] = { _ in
            (200, ["ChallengeName": "NEW_PASSWORD_REQUIRED", "Session": "s1", "ChallengeParameters": [:]])
        }
        harness.cognito.handlers["RespondToAuthChallenge"] = { _ in (200, FakeCognito.tokens()) }
        try signIn(["--username", "alice", "--flow", "password"], harness)
        XCTAssertTrue(console.stderr.contains("Passwords do not match; try again."))
        XCTAssertTrue(console.prompts.allSatisfy { $0.secret }, "every password prompt hides what is typed")
    }

    func testUnsupportedChallengeExitsOne() {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]))
        harness.cognito.handlers["InitiateAuth"] = { _ in
            (200, ["ChallengeName": "CUSTOM_CHALLENGE", "Session": "s", "ChallengeParameters": [:]])
        }
        XCTAssertThrowsError(try signIn(["--username", "alice", "--password-stdin", "--flow", "password"], harness)) {
            error in
            let error = AuthctlError.from(error)
            XCTAssertEqual(error.code, .unexpected)
            XCTAssertEqual(error.message, "challenge CUSTOM_CHALLENGE is not supported yet")
        }
    }

    func testNoStorePrintsTokensAndKeepsNothingEvenWithoutKeyring() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]), store: UnavailableStore())
        harness.cognito.handlers["InitiateAuth"] = { _ in (200, FakeCognito.tokens()) }
        try signIn(["--username", "alice", "--password-stdin", "--flow", "password", "--no-store"], harness)
        let object = try JSONSerialization.jsonObject(with: Data(harness.console.stdout[0].utf8)) as? [String: Any]
        XCTAssertEqual(object?["refreshToken"] as? String, "refresh-1")
        XCTAssertNotNil(object?["accessToken"])
        XCTAssertNotNil(object?["expiresAt"])
    }

    func testMissingKeyringFailsBeforeAskingOrCalling() {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]), store: UnavailableStore())
        XCTAssertThrowsError(try signIn(["--username", "alice", "--password-stdin"], harness)) { error in
            XCTAssertEqual((error as? SecureStoreError)?.kind, .unavailable)
            XCTAssertEqual(AuthctlError.from(error).code, .configuration)
        }
        XCTAssertTrue(harness.cognito.calls.isEmpty)
        XCTAssertEqual(harness.console.stdinLines, ["pw"], "the password was not even read")
    }

    func testClientSecretFromEnvironmentAddsSecretHash() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]), environment: ["AUTHCTL_CLIENT_SECRET": "shh"])
        harness.cognito.handlers["InitiateAuth"] = { body in
            let hash = (body["AuthParameters"] as? [String: String])?["SECRET_HASH"]
            XCTAssertEqual(hash, SecretHash.compute(username: "alice", clientId: "client1", clientSecret: "shh"))
            return (200, FakeCognito.tokens())
        }
        try signIn(["--username", "alice", "--password-stdin", "--flow", "password"], harness)
    }
}

final class WhoAmICommandTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func seed(_ harness: Harness, expiresIn: Int) throws {
        try harness.seedSession(expiresIn: expiresIn, now: now)
    }

    private func userHandler(_ harness: Harness) {
        harness.cognito.handlers["GetUser"] = { _ in
            (
                200,
                [
                    "Username": "alice",
                    "UserAttributes": [
                        ["Name": "sub", "Value": "sub-1"], ["Name": "email", "Value": "alice@example.com"],
                    ],
                ]
            )
        }
    }

    func testNotSignedIn() {
        let harness = Harness(now: now)
        XCTAssertThrowsError(try WhoAmI.parse([]).run(in: harness.host)) { error in
            let error = Optional(AuthctlError.from(error))
            XCTAssertEqual(error?.code, .notAuthorized)
            XCTAssertEqual(error?.message, "Not signed in (profile default). Run: authctl signin")
        }
    }

    func testFreshSessionNeedsNoRefresh() throws {
        let harness = Harness(now: now)
        try seed(harness, expiresIn: 3600)
        userHandler(harness)
        try WhoAmI.parse(["--output", "json"]).run(in: harness.host)
        XCTAssertEqual(harness.cognito.calls.map(\.operation), ["GetUser"])
        let object = try JSONSerialization.jsonObject(with: Data(harness.console.stdout[0].utf8)) as? [String: Any]
        XCTAssertEqual(object?["username"] as? String, "alice")
        XCTAssertEqual(object?["email"] as? String, "alice@example.com")
        XCTAssertEqual(object?["groups"] as? [String], ["devs"])
        XCTAssertEqual(object?["profile"] as? String, "default")
    }

    func testExpiringSessionIsRefreshedAndStored() throws {
        let harness = Harness(now: now)
        try seed(harness, expiresIn: 30)
        userHandler(harness)
        harness.cognito.handlers["InitiateAuth"] = { body in
            XCTAssertEqual(body["AuthFlow"] as? String, "REFRESH_TOKEN_AUTH")
            return (200, FakeCognito.tokens(expiresIn: 3600, refresh: nil, now: self.now))
        }
        try WhoAmI.parse([]).run(in: harness.host)
        // The fake does not offer GetTokensFromRefreshToken, so the refresh falls back.
        XCTAssertEqual(
            harness.cognito.calls.map(\.operation), ["GetTokensFromRefreshToken", "InitiateAuth", "GetUser"])
        let stored = try profileStore(harness.store).session()
        XCTAssertEqual(stored?.accessTokenExpiresAt, now.addingTimeInterval(3600))
        XCTAssertEqual(stored?.refreshToken, "refresh-1", "kept when the service did not rotate it")
    }

    func testRefusedRefreshEndsSessionAndRemovesIt() throws {
        let harness = Harness(now: now)
        try seed(harness, expiresIn: 0)
        harness.cognito.handlers["InitiateAuth"] = { _ in
            FakeCognito.error("NotAuthorizedException", "Refresh Token has been revoked")
        }
        XCTAssertThrowsError(try WhoAmI.parse([]).run(in: harness.host)) { error in
            guard case .ended(let profile, _)? = error as? SessionError else { return XCTFail("\(error)") }
            XCTAssertEqual(profile, "default")
            XCTAssertEqual(AuthctlError.from(error).code, .notAuthorized)
        }
        XCTAssertNil(try profileStore(harness.store).session())
    }

    func testRevokedAccessTokenEndsSession() throws {
        let harness = Harness(now: now)
        try seed(harness, expiresIn: 3600)
        harness.cognito.handlers["GetUser"] = { _ in
            FakeCognito.error("NotAuthorizedException", "Access Token has been revoked")
        }
        XCTAssertThrowsError(try WhoAmI.parse([]).run(in: harness.host))
        XCTAssertNil(try profileStore(harness.store).session())
    }

    /// A token without the self-service scope is still a live session: kept,
    /// and the message names the scope.
    func testAMissingScopeKeepsTheSessionAndNamesTheScope() throws {
        let harness = Harness(now: now)
        try seed(harness, expiresIn: 3600)
        harness.cognito.handlers["GetUser"] = { _ in
            FakeCognito.error("NotAuthorizedException", "Access Token does not have required scopes")
        }
        XCTAssertThrowsError(try WhoAmI.parse([]).run(in: harness.host)) { error in
            let failure = AuthctlError.from(error)
            XCTAssertEqual(failure.code, .notAuthorized)
            XCTAssertTrue(failure.message.contains("aws.cognito.signin.user.admin"), failure.message)
            XCTAssertTrue(failure.message.contains("The session is kept"), failure.message)
        }
        XCTAssertNotNil(try profileStore(harness.store).session())
    }

    func testUnreachableServiceKeepsSession() throws {
        let harness = Harness(now: now)
        try seed(harness, expiresIn: 0)
        harness.cognito.handlers["InitiateAuth"] = { _ in (503, ["message": "unavailable"]) }
        XCTAssertThrowsError(try WhoAmI.parse([]).run(in: harness.host)) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .unavailable)
        }
        XCTAssertNotNil(try profileStore(harness.store).session())
    }

    func testNoKeyringIsConfigurationError() {
        let harness = Harness(store: UnavailableStore(), now: now)
        XCTAssertThrowsError(try WhoAmI.parse([]).run(in: harness.host)) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .configuration)
        }
    }
}
