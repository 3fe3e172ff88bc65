import CognitoClient
import Foundation
import LocalFormats
import SecureStore
import XCTest

@testable import AuthctlCore
@testable import authctl

/// signout and change-password against an injected Cognito fake (the integration suite runs the
/// same paths with the built binary against moto and a real keyring).
final class SignOutCommandTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func seeded(
        console: FakeConsole = FakeConsole(), expiresIn: Int = 3600, environment: [String: String] = [:]
    ) throws -> Harness {
        let harness = Harness(console: console, environment: environment, now: now)
        try harness.seedSession(expiresIn: expiresIn, now: now)
        return harness
    }

    private func stored(_ harness: Harness) throws -> StoredSession? {
        try profileStore(harness.store).session()
    }

    private func report(_ harness: Harness) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data((harness.console.stdout.last ?? "").utf8)) as? [String: Any] ?? [:]
    }

    func testLocalSignOutRevokesThenDeletes() throws {
        let harness = try seeded()
        harness.cognito.handlers["RevokeToken"] = { body in
            XCTAssertEqual(body["Token"] as? String, "refresh-1")
            XCTAssertEqual(body["ClientId"] as? String, "client1")
            return (200, [:])
        }
        try SignOut.parse(["--output", "json"]).run(in: harness.host)
        XCTAssertNil(try stored(harness))
        let json = try report(harness)
        XCTAssertEqual(json["signedOutLocally"] as? Bool, true)
        XCTAssertEqual(json["revokeToken"] as? String, "ok")
        XCTAssertEqual(json["globalSignOut"] as? String, "skipped")
    }

    func testLocalSignOutWhenRevocationFailsStillDeletesAndWarns() throws {
        let harness = try seeded()
        harness.cognito.handlers["RevokeToken"] = { _ in FakeCognito.error("UnsupportedOperationException", "no") }
        try SignOut.parse([]).run(in: harness.host)
        XCTAssertNil(try stored(harness))
        XCTAssertTrue(
            harness.console.stderr.contains {
                $0.contains("could not be revoked") && $0.contains("stays usable until it expires")
            })
    }

    func testLocalSignOutWithClientSecretSendsIt() throws {
        let harness = try seeded(environment: ["AUTHCTL_CLIENT_SECRET": "shh"])
        harness.cognito.handlers["RevokeToken"] = { body in
            XCTAssertEqual(body["ClientSecret"] as? String, "shh")
            return (200, [:])
        }
        try SignOut.parse([]).run(in: harness.host)
        XCTAssertEqual(harness.cognito.count("RevokeToken"), 1)
    }

    func testNotSignedInIsHarmless() throws {
        let harness = Harness(now: now)
        try SignOut.parse([]).run(in: harness.host)
        try SignOut.parse([]).run(in: harness.host)
        XCTAssertEqual(harness.console.stderr, ["Not signed in (profile default)", "Not signed in (profile default)"])
        XCTAssertTrue(harness.cognito.calls.isEmpty)
    }

    func testGlobalWithoutTerminalNeedsYes() throws {
        let harness = try seeded()
        XCTAssertThrowsError(try SignOut.parse(["--global"]).run(in: harness.host)) { error in
            XCTAssertEqual((error as? AuthctlError)?.code, .usage)
            XCTAssertTrue((error as? AuthctlError)?.message.contains("--yes") ?? false)
        }
        XCTAssertNotNil(try stored(harness))
        XCTAssertTrue(harness.cognito.calls.isEmpty)
    }

    func testGlobalOnTerminalAsksAndNoKeepsEverything() throws {
        let harness = try seeded(console: FakeConsole(interactive: true, promptAnswers: ["n"]))
        XCTAssertThrowsError(try SignOut.parse(["--global"]).run(in: harness.host))
        XCTAssertEqual(harness.console.prompts.first?.question, "Sign out alice on ALL devices? [y/N] ")
        XCTAssertNotNil(try stored(harness))
    }

    func testGlobalSignOutSuccess() throws {
        let harness = try seeded()
        harness.cognito.handlers["GlobalSignOut"] = { _ in (200, [:]) }
        try SignOut.parse(["--global", "--yes", "--output", "json"]).run(in: harness.host)
        XCTAssertNil(try stored(harness))
        let json = try report(harness)
        XCTAssertEqual(json["globalSignOut"] as? String, "ok")
        XCTAssertEqual(json["signedOutLocally"] as? Bool, true)
        XCTAssertEqual(json["exposureUntil"] as? String, Format.iso8601(now.addingTimeInterval(3600)))
    }

    func testGlobalSignOutRefreshesAnExpiredTokenFirst() throws {
        let harness = try seeded(expiresIn: 0)
        harness.cognito.handlers["InitiateAuth"] = { _ in (200, FakeCognito.tokens(refresh: nil, now: self.now)) }
        harness.cognito.handlers["GlobalSignOut"] = { _ in (200, [:]) }
        try SignOut.parse(["--global", "--yes"]).run(in: harness.host)
        XCTAssertEqual(
            harness.cognito.calls.map(\.operation), ["GetTokensFromRefreshToken", "InitiateAuth", "GlobalSignOut"])
        XCTAssertNil(try stored(harness))
    }

    func testGlobalSignOutUnreachableKeepsSession() throws {
        let harness = try seeded()
        harness.cognito.handlers["GlobalSignOut"] = { _ in (503, ["message": "down"]) }
        XCTAssertThrowsError(try SignOut.parse(["--global", "--yes", "--output", "json"]).run(in: harness.host)) {
            error in
            let error = AuthctlError.from(error)
            XCTAssertEqual(error.code, .unavailable)
            // A 5xx may come after the service acted: not "Nothing was revoked".
            XCTAssertTrue(error.message.contains("may or may not have been revoked"), error.message)
            XCTAssertFalse(error.message.contains("Nothing was revoked"))
            XCTAssertTrue(error.message.contains("authctl signout"))
        }
        XCTAssertNotNil(try stored(harness))
        XCTAssertEqual(
            harness.console.stdout,
            [
                #"{"exposureUntil":null,"forgetDevice":"skipped","globalSignOut":"failed","revokeToken":"skipped","signedOutLocally":false}"#
            ])
    }

    func testNothingRevokedOnlyWhenCertainlyNotPerformed() throws {
        let harness = try seeded()
        harness.cognito.handlers["GlobalSignOut"] = { _ in
            FakeCognito.error("TooManyRequestsException", "Rate exceeded")
        }
        XCTAssertThrowsError(try SignOut.parse(["--global", "--yes"]).run(in: harness.host)) { error in
            XCTAssertTrue(AuthctlError.from(error).message.contains("Nothing was revoked"))
        }
        for (kind, maybe) in [(TransportError.Kind.notConnected, false), (.timeout, true), (.connection, true)] {
            let service = CognitoService(
                endpoint: "http://127.0.0.1:9/", transport: ThrowingTransport(kind),
                retryPolicy: RetryPolicy(maxAttempts: 3, sleep: { _ in }))
            XCTAssertThrowsError(try service.globalSignOut(accessToken: "t")) { error in
                XCTAssertEqual((error as? CognitoError)?.outcomeUnknown, maybe, "\(kind)")
            }
        }
    }

    func testGlobalSignOutThrottledExits75() throws {
        let harness = try seeded()
        harness.cognito.handlers["GlobalSignOut"] = { _ in
            FakeCognito.error("TooManyRequestsException", "Rate exceeded")
        }
        XCTAssertThrowsError(try SignOut.parse(["--global", "--yes"]).run(in: harness.host)) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .throttled)
        }
        XCTAssertNotNil(try stored(harness))
    }

    /// "Revoked" may mean this device's token alone (RevokeToken): removed here and reported as
    /// already ended (exit 0), but not claimed as every device signed out.
    func testGlobalSignOutRevokedTokenDeletesButCannotConfirm() throws {
        let harness = try seeded()
        harness.cognito.handlers["GlobalSignOut"] = { _ in
            FakeCognito.error("NotAuthorizedException", "Access Token has been revoked")
        }
        try SignOut.parse(["--global", "--yes", "--output", "json"]).run(in: harness.host)
        XCTAssertNil(try stored(harness))
        XCTAssertEqual(try report(harness)["globalSignOut"] as? String, "already-ended")
        XCTAssertEqual(try report(harness)["signedOutLocally"] as? Bool, true)
        let note = harness.console.stderr.joined(separator: "\n")
        XCTAssertTrue(note.contains("may still be signed in"), note)
        XCTAssertTrue(note.contains("authctl signout --global --user alice"), note)
        XCTAssertFalse(note.contains("out of every device."), note)
    }

    func testGlobalSignOutWithDeadRefreshTokenDeletesButCannotConfirm() throws {
        let harness = try seeded(expiresIn: 0)
        harness.cognito.handlers["InitiateAuth"] = { _ in
            FakeCognito.error("NotAuthorizedException", "Refresh Token has been revoked")
        }
        try SignOut.parse(["--global", "--yes", "--output", "json"]).run(in: harness.host)
        XCTAssertNil(try stored(harness))
        XCTAssertEqual(try report(harness)["globalSignOut"] as? String, "already-ended")
        XCTAssertTrue(harness.console.stderr.joined().contains("may still be signed in"), "\(harness.console.stderr)")
    }

    func testGlobalSignOutExpiredTokenIsRefreshedAndRetried() throws {
        let harness = try seeded()
        var answers = [FakeCognito.error("NotAuthorizedException", "Access Token has expired"), (200, [String: Any]())]
        harness.cognito.handlers["GlobalSignOut"] = { _ in answers.removeFirst() }
        harness.cognito.handlers["InitiateAuth"] = { _ in (200, FakeCognito.tokens(refresh: nil, now: self.now)) }
        try SignOut.parse(["--global", "--yes", "--output", "json"]).run(in: harness.host)
        XCTAssertEqual(try report(harness)["globalSignOut"] as? String, "ok")
        XCTAssertEqual(harness.cognito.count("GlobalSignOut"), 2)
        XCTAssertNil(try stored(harness))
    }

    func testGlobalSignOutUserDeletedRemovesTheSession() throws {
        let harness = try seeded()
        harness.cognito.handlers["GlobalSignOut"] = { _ in
            FakeCognito.error("UserNotFoundException", "User does not exist.")
        }
        try SignOut.parse(["--global", "--yes"]).run(in: harness.host)
        XCTAssertNil(try stored(harness))
        XCTAssertTrue(harness.console.stderr.contains { $0.contains("no longer exists") }, "\(harness.console.stderr)")
    }

    /// The window is now plus the tokens' lifetime (exp − iat): a device that signed in later holds
    /// tokens that outlive this device's own.
    func testGlobalExposureIsNowPlusTheTokenLifetime() throws {
        let harness = Harness(now: now)
        let issued = now.addingTimeInterval(-1800)
        var tokens = FakeCognito.tokens(expiresIn: 1800, now: now)["AuthenticationResult"] as! [String: Any]
        tokens["AccessToken"] = FakeCognito.jwt([
            "username": "alice", "sub": "sub-1", "token_use": "access", "client_id": "client1",
            "iss": FakeCognito.issuer, "iat": issued.timeIntervalSince1970, "exp": now.timeIntervalSince1970 + 1800,
        ])
        tokens["IdToken"] = FakeCognito.jwt([
            "cognito:username": "alice", "sub": "sub-1", "token_use": "id", "aud": "client1",
            "iss": FakeCognito.issuer, "iat": issued.timeIntervalSince1970, "exp": now.timeIntervalSince1970 + 5400,
        ])
        let client = try ClientSettings(
            try SettingsResolver.resolve(
                try GlobalOptions.parse([]).settingsInput, environment: harness.host.environment))
        try save(
            in: harness.store,
            try StoredSession(
                tokens: AuthenticationResult(
                    accessToken: tokens["AccessToken"] as! String, expiresIn: 1800, tokenType: "Bearer",
                    refreshToken: "refresh-1", idToken: tokens["IdToken"] as? String),
                fallbackUsername: "alice", profile: "default", client: client, now: now))
        harness.cognito.handlers["GlobalSignOut"] = { _ in (200, [:]) }
        try SignOut.parse(["--global", "--yes", "--output", "json"]).run(in: harness.host)
        // The id token's lifetime, 7200 s, is the longer one.
        XCTAssertEqual(try report(harness)["exposureUntil"] as? String, Format.iso8601(now.addingTimeInterval(7200)))
    }

    func testGlobalSignOutDeleteFailureSaysEveryDeviceWasSignedOut() throws {
        let store = DeleteFailingStore()
        let harness = Harness(store: store, now: now)
        try harness.seedSession(expiresIn: 3600, now: now)
        harness.cognito.handlers["GlobalSignOut"] = { _ in (200, [:]) }
        XCTAssertThrowsError(try SignOut.parse(["--global", "--yes", "--output", "json"]).run(in: harness.host)) {
            error in
            let error = AuthctlError.from(error)
            XCTAssertEqual(error.code, .configuration)
            XCTAssertTrue(error.message.hasPrefix("Signed alice out of every device, but the session"), error.message)
            XCTAssertTrue(error.message.contains("could not be removed"), error.message)
        }
        XCTAssertEqual(try report(harness)["globalSignOut"] as? String, "ok")
        XCTAssertEqual(try report(harness)["signedOutLocally"] as? Bool, false)
    }

    func testDeadSessionDeleteFailureIsNotReportedAsSignedOut() throws {
        let harness = Harness(store: DeleteFailingStore(), now: now)
        try harness.seedSession(expiresIn: 3600, now: now)
        harness.cognito.handlers["GlobalSignOut"] = { _ in
            FakeCognito.error("NotAuthorizedException", "Access Token has been revoked")
        }
        XCTAssertThrowsError(try SignOut.parse(["--global", "--yes", "--output", "json"]).run(in: harness.host)) {
            error in
            XCTAssertTrue(AuthctlError.from(error).message.contains("could not be removed"))
        }
        XCTAssertEqual(try report(harness)["signedOutLocally"] as? Bool, false)
    }

    func testLocalSignOutDeleteFailureIsReported() throws {
        let harness = Harness(store: DeleteFailingStore(), now: now)
        try harness.seedSession(expiresIn: 3600, now: now)
        harness.cognito.handlers["RevokeToken"] = { _ in (200, [:]) }
        XCTAssertThrowsError(try SignOut.parse(["--output", "json"]).run(in: harness.host)) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .configuration)
        }
        XCTAssertEqual(try report(harness)["signedOutLocally"] as? Bool, false)
        XCTAssertEqual(try report(harness)["revokeToken"] as? String, "ok")
    }

    func testUnreadableSessionIsRemoved() throws {
        let harness = Harness(now: now)
        try harness.store.write(SecretKey(kind: "session", profile: "default"), label: "x", secret: "{not json")
        try SignOut.parse([]).run(in: harness.host)
        XCTAssertNil(try harness.store.read(SecretKey(kind: "session", profile: "default")))
        XCTAssertTrue(harness.console.stderr.contains { $0.contains("nothing could be revoked") })
        try harness.store.write(SecretKey(kind: "session", profile: "default"), label: "x", secret: "{not json")
        XCTAssertThrowsError(try SignOut.parse(["--global", "--yes"]).run(in: harness.host)) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .notAuthorized)
        }
        XCTAssertNil(try harness.store.read(SecretKey(kind: "session", profile: "default")))
        XCTAssertTrue(harness.cognito.calls.isEmpty)
    }

    func testUserRequiresGlobal() {
        XCTAssertThrowsError(try SignOut.parse(["--user", "bob"]))
    }
}

final class AdminSignOutTests: XCTestCase {
    private let credentials = [
        "AWS_ACCESS_KEY_ID": "AKIDOPS", "AWS_SECRET_ACCESS_KEY": "opssecret", "USER": "operator",
    ]

    func testNoCredentialsIsConfigurationError() {
        let harness = Harness(environment: ["AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials"])
        XCTAssertThrowsError(try SignOut.parse(["--global", "--user", "mallory", "--yes"]).run(in: harness.host)) {
            error in
            let error = error as? AuthctlError
            XCTAssertEqual(error?.code, .configuration)
            XCTAssertTrue(error?.message.contains("AWS_ACCESS_KEY_ID") ?? false)
            XCTAssertTrue(error?.message.contains("/nonexistent/credentials") ?? false)
        }
    }

    func testSignedCallAndAuditRecord() throws {
        let harness = Harness(environment: credentials)
        harness.cognito.handlers["AdminUserGlobalSignOut"] = { body in
            XCTAssertEqual(body["Username"] as? String, "mallory")
            XCTAssertEqual(body["UserPoolId"] as? String, "eu-west-1_TestPool")
            return (200, [:])
        }
        try SignOut.parse(["--global", "--user", "mallory", "--yes"]).run(in: harness.host)
        XCTAssertEqual(harness.cognito.count("AdminUserGlobalSignOut"), 1)
        let audit = harness.console.stderr.first { $0.hasPrefix("audit:") } ?? ""
        XCTAssertTrue(
            audit.contains("user=mallory") && audit.contains("pool=eu-west-1_TestPool") && audit.contains("by=AKIDOPS"),
            audit)
        XCTAssertFalse(harness.console.stderr.joined().contains("opssecret"))
    }

    func testCredentialsFileSectionAndSessionToken() throws {
        let path = NSTemporaryDirectory() + "creds-\(UUID().uuidString)"
        try
            "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = d\n\n[ops]\naws_access_key_id=AKIDOPSFILE\naws_secret_access_key=s\naws_session_token = tok\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let resolved = try AWSCredentialChain.resolve(environment: [
            "AWS_SHARED_CREDENTIALS_FILE": path, "AWS_PROFILE": "ops",
        ])
        XCTAssertEqual(
            resolved.credentials, AWSCredentials(accessKeyId: "AKIDOPSFILE", secretAccessKey: "s", sessionToken: "tok"))
        let fallback = try AWSCredentialChain.resolve(environment: ["AWS_SHARED_CREDENTIALS_FILE": path])
        XCTAssertEqual(fallback.credentials.accessKeyId, "AKIDDEFAULT")
        let env = try AWSCredentialChain.resolve(environment: [
            "AWS_SHARED_CREDENTIALS_FILE": path, "AWS_ACCESS_KEY_ID": "E", "AWS_SECRET_ACCESS_KEY": "F",
        ])
        XCTAssertEqual(env.credentials.accessKeyId, "E", "the environment comes before the file")
    }

    func testUnknownUserAndAccessDenied() {
        for (type, code) in [
            ("UserNotFoundException", AuthctlError.Code.inputRejected), ("AccessDeniedException", .notAuthorized),
        ] {
            let harness = Harness(environment: credentials)
            harness.cognito.handlers["AdminUserGlobalSignOut"] = { _ in FakeCognito.error(type, "words of the service")
            }
            XCTAssertThrowsError(try SignOut.parse(["--global", "--user", "mallory", "--yes"]).run(in: harness.host)) {
                error in
                XCTAssertEqual((error as? AuthctlError)?.code, code)
                XCTAssertTrue((error as? AuthctlError)?.message.contains("words of the service") ?? false)
            }
        }
    }

    func testPartialEnvironmentCredentialsAreRefused() throws {
        let path = NSTemporaryDirectory() + "creds-\(UUID().uuidString)"
        try "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = f\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        for (env, missing) in [
            (["AWS_ACCESS_KEY_ID": "E"], "AWS_SECRET_ACCESS_KEY"),
            (["AWS_SECRET_ACCESS_KEY": "F"], "AWS_ACCESS_KEY_ID"),
        ] {
            XCTAssertThrowsError(
                try AWSCredentialChain.resolve(environment: env.merging(["AWS_SHARED_CREDENTIALS_FILE": path]) { $1 })
            ) { error in
                let error = error as? AuthctlError
                XCTAssertEqual(error?.code, .configuration)
                XCTAssertTrue(error?.message.contains("\(missing) is not") ?? false, error?.message ?? "")
            }
        }
    }

    func testExposureFromTheAppClientsLifetime() throws {
        let harness = Harness(environment: credentials)
        harness.cognito.handlers["AdminUserGlobalSignOut"] = { _ in (200, [:]) }
        harness.cognito.handlers["DescribeUserPoolClient"] = { body in
            XCTAssertEqual(body["ClientId"] as? String, "client1")
            return (
                200,
                [
                    "UserPoolClient": [
                        "ClientId": "client1", "ClientSecret": "never-shown", "AccessTokenValidity": 30,
                        "IdTokenValidity": 2, "TokenValidityUnits": ["AccessToken": "minutes"],
                    ]
                ]
            )
        }
        try SignOut.parse(["--global", "--user", "mallory", "--yes", "--output", "json"]).run(in: harness.host)
        let json =
            try JSONSerialization.jsonObject(with: Data((harness.console.stdout.last ?? "").utf8)) as? [String: Any]
            ?? [:]
        XCTAssertEqual(json["tokenLifetimeSeconds"] as? Int, 7200, "id token: 2 hours (hours by default)")
        XCTAssertEqual(json["exposureAssumed"] as? Bool, false)
        XCTAssertFalse((harness.console.stdout + harness.console.stderr).joined().contains("never-shown"))
    }

    func testTokenValidityUnits() {
        XCTAssertEqual(UserPoolClientType().accessTokenLifetime, 3600)
        XCTAssertEqual(UserPoolClientType(accessTokenValidity: 5).accessTokenLifetime, 5 * 3600)
        XCTAssertEqual(
            UserPoolClientType(accessTokenValidity: 5, tokenValidityUnits: .init(accessToken: "minutes"))
                .accessTokenLifetime, 300)
        XCTAssertEqual(
            UserPoolClientType(idTokenValidity: 1, tokenValidityUnits: .init(idToken: "days")).idTokenLifetime, 86400)
        XCTAssertEqual(
            UserPoolClientType(idTokenValidity: 900, tokenValidityUnits: .init(idToken: "seconds")).idTokenLifetime, 900
        )
    }

    func testFailureWithJSONPrintsTheReport() {
        let harness = Harness(environment: credentials)
        harness.cognito.handlers["AdminUserGlobalSignOut"] = { _ in
            FakeCognito.error("TooManyRequestsException", "Rate exceeded")
        }
        XCTAssertThrowsError(
            try SignOut.parse(["--global", "--user", "mallory", "--yes", "--output", "json"]).run(in: harness.host)
        ) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .throttled)
            XCTAssertTrue(AuthctlError.from(error).message.contains("Nothing was revoked"))
        }
        XCTAssertEqual(
            harness.console.stdout,
            [
                #"{"exposureAssumed":null,"exposureUntil":null,"globalSignOut":"failed","revokeToken":"skipped","#
                    + #""signedOutAt":null,"signedOutLocally":false,"tokenLifetimeSeconds":null,"user":"mallory","userPoolId":"eu-west-1_TestPool"}"#
            ])
    }

    func testLeavesLocalStoreAlone() throws {
        let harness = Harness(store: UnavailableStore(), environment: credentials)
        harness.cognito.handlers["AdminUserGlobalSignOut"] = { _ in (200, [:]) }
        try SignOut.parse(["--global", "--user", "mallory", "--yes"]).run(in: harness.host)
    }
}

final class ChangePasswordCommandTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func seeded(_ console: FakeConsole) throws -> Harness {
        let harness = Harness(console: console, now: now)
        try harness.seedSession(expiresIn: 3600, now: now)
        return harness
    }

    private func expectFailure(
        _ console: FakeConsole, _ arguments: [String] = [], code: AuthctlError.Code, message: String,
        handler: FakeCognito.Handler? = nil, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let harness = try seeded(console)
        if let handler { harness.cognito.handlers["ChangePassword"] = handler }
        XCTAssertThrowsError(try ChangePassword.parse(arguments).run(in: harness.host), file: file, line: line) {
            error in
            let error = AuthctlError.from(error)
            XCTAssertEqual(error.code, code, file: file, line: line)
            XCTAssertEqual(error.message, message, file: file, line: line)
        }
        if handler == nil {
            XCTAssertTrue(harness.cognito.calls.isEmpty, "no request for a local check", file: file, line: line)
        }
        XCTAssertNotNil(try profileStore(harness.store).session(), file: file, line: line)
    }

    func testLocalChecksComeBeforeAnyRequest() throws {
        try expectFailure(
            FakeConsole(interactive: true, promptAnswers: ["Old-1", "New-1", "New-2"]), code: .inputRejected,
            message: "Passwords do not match")
        try expectFailure(
            FakeConsole(stdin: ["Same-1", "Same-1"]), ["--stdin"], code: .inputRejected,
            message: "The new password must differ from the current one")
        try expectFailure(
            FakeConsole(stdin: ["Old-1", ""]), ["--stdin"], code: .inputRejected, message: "The new password is empty")
        try expectFailure(
            FakeConsole(stdin: ["Old-1", " New-1"]), ["--stdin"], code: .inputRejected,
            message: "The new password must not begin or end with white space")
        try expectFailure(
            FakeConsole(), code: .usage,
            message:
                "no terminal to ask for the passwords: give the current and the new password as two lines on standard input with --stdin"
        )
    }

    func testServiceAnswers() throws {
        try expectFailure(
            FakeConsole(stdin: ["Wrong-1", "New-1"]), ["--stdin"], code: .notAuthorized,
            message: "Current password is incorrect",
            handler: { _ in FakeCognito.error("NotAuthorizedException", "Incorrect username or password.") })
        try expectFailure(
            FakeConsole(stdin: ["Old-1", "New-1"]), ["--stdin"], code: .throttled,
            message: "Too many attempts; wait a few minutes and try again",
            handler: { _ in
                FakeCognito.error("LimitExceededException", "Attempt limit exceeded, please try after some time.")
            })
        try expectFailure(
            FakeConsole(stdin: ["Old-1", "short"]), ["--stdin"], code: .inputRejected,
            message: "Password does not conform to policy: Password not long enough",
            handler: { _ in
                FakeCognito.error(
                    "InvalidPasswordException", "Password does not conform to policy: Password not long enough")
            })
    }

    func testSuccessKeepsSession() throws {
        let harness = try seeded(FakeConsole(interactive: true, promptAnswers: ["Old-1", "New-Pass-1", "New-Pass-1"]))
        harness.cognito.handlers["ChangePassword"] = { body in
            XCTAssertEqual(body["PreviousPassword"] as? String, "Old-1")
            XCTAssertEqual(body["ProposedPassword"] as? String, "New-Pass-1")
            return (200, [:])
        }
        try ChangePassword.parse([]).run(in: harness.host)
        XCTAssertEqual(harness.console.stderr.first, "Password changed. You are still signed in.")
        XCTAssertTrue(harness.console.stderr.last?.contains("signout --global") ?? false)
        XCTAssertTrue(harness.console.prompts.allSatisfy { $0.secret })
        XCTAssertNotNil(try profileStore(harness.store).session())
    }

    func testLostAnswerSaysThePasswordMayHaveChanged() throws {
        for (kind, maybe) in [(TransportError.Kind.timeout, true), (.connection, true), (.notConnected, false)] {
            let harness = Harness(console: FakeConsole(stdin: ["Old-1", "New-Pass-1"]), now: now)
            try harness.seedSession(expiresIn: 3600, now: now)
            let context = ProcessHost(
                console: harness.console, environment: harness.host.environment, now: { self.now },
                makeTransport: { _ in ThrowingTransport(kind) }, makeStore: { harness.store })
            XCTAssertThrowsError(try ChangePassword.parse(["--stdin"]).run(in: context)) { error in
                let error = AuthctlError.from(error)
                XCTAssertEqual(error.code, .unavailable)
                XCTAssertEqual(
                    error.message.contains(
                        "the password may or may not have been changed; try signing in with the new one"), maybe,
                    "\(kind): \(error.message)")
            }
            XCTAssertNotNil(try profileStore(harness.store).session())
        }
    }

    func testNotSignedInAsksNothing() {
        let console = FakeConsole(interactive: true, promptAnswers: ["a", "b", "b"])
        let harness = Harness(console: console, now: now)
        XCTAssertThrowsError(try ChangePassword.parse([]).run(in: harness.host)) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .notAuthorized)
        }
        XCTAssertTrue(console.prompts.isEmpty)
    }
}

/// A transport whose every request fails below HTTP with `kind`.
final class ThrowingTransport: HTTPTransport {
    let kind: TransportError.Kind
    init(_ kind: TransportError.Kind) { self.kind = kind }
    func send(_ request: HTTPRequest) throws -> HTTPResponse {
        throw TransportError(kind: kind, message: "failed (\(kind.rawValue))")
    }
}

/// A keyring that reads and writes but cannot delete (the Secret Service went away meanwhile).
final class DeleteFailingStore: SecretStore {
    let inner = InMemorySecretStore()
    func read(_ key: SecretKey) throws -> String? { try inner.read(key) }
    func write(_ key: SecretKey, label: String, secret: String) throws {
        try inner.write(key, label: label, secret: secret)
    }
    func delete(_ key: SecretKey) throws -> Bool {
        throw SecureStoreError(kind: .unavailable, message: "the Secret Service went away")
    }
}
