import ArgumentParser
import CognitoClient
import Foundation
import LocalFormats
import SecureStore
import XCTest

@testable import AuthctlCore
@testable import authctl

final class TokenCommandTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func seed(_ harness: Harness, expiresIn: Int) throws {
        try harness.seedSession(expiresIn: expiresIn, now: now)
    }

    /// A session whose access token has an hour left and whose id token 30 s; a refresh answers.
    private func seedShortLivedIdToken(_ harness: Harness) throws -> String {
        let shortId = FakeCognito.jwt([
            "cognito:username": "alice", "sub": "sub-1", "token_use": "id", "iss": FakeCognito.issuer,
            "aud": "client1", "exp": now.timeIntervalSince1970 + 30,
        ])
        try harness.seedSession(expiresIn: 3600, now: now, idToken: shortId)
        harness.cognito.handlers["GetTokensFromRefreshToken"] = { _ in
            (200, FakeCognito.tokens(expiresIn: 3600, refresh: "rotated", now: self.now))
        }
        return shortId
    }

    func testPrintsOnlyTheToken() throws {
        let harness = Harness(now: now)
        try seed(harness, expiresIn: 3600)
        try Token.parse([]).run(in: harness.host)
        let session = try profileStore(harness.store).session()
        XCTAssertEqual(harness.console.stdout, [session!.accessToken])
        XCTAssertEqual(harness.console.stderr, [])
        XCTAssertTrue(harness.cognito.calls.isEmpty)
        try Token.parse(["--type", "id"]).run(in: harness.host)
        XCTAssertEqual(harness.console.stdout.last, session!.idToken)
    }

    func testMinValidForcesRefresh() throws {
        let harness = Harness(now: now)
        try seed(harness, expiresIn: 300)
        harness.cognito.handlers["GetTokensFromRefreshToken"] = { _ in
            (200, FakeCognito.tokens(expiresIn: 3600, refresh: "rotated", now: self.now))
        }
        try Token.parse(["--min-valid", "60"]).run(in: harness.host)
        XCTAssertTrue(harness.cognito.calls.isEmpty, "300 s left is enough for --min-valid 60")
        try Token.parse(["--min-valid", "600"]).run(in: harness.host)
        XCTAssertEqual(harness.cognito.calls.map(\.operation), ["GetTokensFromRefreshToken"])
        let stored = try profileStore(harness.store).session()
        XCTAssertEqual(stored?.refreshToken, "rotated", "a rotated refresh token replaces the old one")
        XCTAssertEqual(harness.console.stdout.last, stored?.accessToken)
    }

    /// An app client may give id tokens a shorter life than access tokens: `token --type id`
    /// refreshes when the id token is due, even though the access token is not.
    func testAnIdTokenThatExpiresFirstIsRefreshedForTypeId() throws {
        let harness = Harness(now: now)
        let shortId = try seedShortLivedIdToken(harness)
        try Token.parse(["--type", "access"]).run(in: harness.host)
        XCTAssertTrue(harness.cognito.calls.isEmpty, "the access token has an hour left")
        try Token.parse(["--type", "id"]).run(in: harness.host)
        XCTAssertEqual(harness.cognito.calls.map(\.operation), ["GetTokensFromRefreshToken"])
        let stored = try profileStore(harness.store).session()
        XCTAssertEqual(harness.console.stdout.last, stored?.idToken)
        XCTAssertNotEqual(harness.console.stdout.last, shortId)
    }

    /// The same id-aware freshness when `token` may sign in (`--password-stdin`): the stored
    /// session of that user is refreshed, not handed out with its id token about to expire.
    func testAnIdTokenThatExpiresFirstIsRefreshedWhenTokenMaySignIn() throws {
        let harness = Harness(console: FakeConsole(stdin: ["not-asked"]), now: now)
        let shortId = try seedShortLivedIdToken(harness)
        try Token.parse(["--type", "id", "--username", "alice", "--password-stdin", "--flow", "password"]).run(
            in: harness.host)
        XCTAssertEqual(harness.cognito.calls.map(\.operation), ["GetTokensFromRefreshToken"])
        let stored = try profileStore(harness.store).session()
        XCTAssertEqual(harness.console.stdout.last, stored?.idToken)
        XCTAssertNotEqual(harness.console.stdout.last, shortId)
    }

    func testRefreshedTokensAreUsedWhenTheKeyringCannotStoreThem() throws {
        // The service has answered (with rotation it has replaced the refresh token): wasting the
        // new tokens would not bring the old ones back. Print the token, warn that the store is behind.
        let store = WriteFailingStore()
        let harness = Harness(store: store, now: now)
        try seed(harness, expiresIn: -10)
        store.failWrites = true
        harness.cognito.handlers["GetTokensFromRefreshToken"] = { _ in
            (200, FakeCognito.tokens(expiresIn: 3600, refresh: "rotated", now: self.now))
        }
        try Token.parse([]).run(in: harness.host)
        XCTAssertEqual(harness.console.stdout.count, 1)
        XCTAssertNotEqual(
            harness.console.stdout.first, try profileStore(store).session()?.accessToken,
            "the printed token is the refreshed one")
        XCTAssertEqual(harness.console.stderr.count, 1)
        XCTAssertEqual(
            harness.console.stderr[0], Messages.refreshedNotStored(AuthctlError.from(WriteFailingStore.failure).message)
        )
    }

    func testAnEndedSessionThatCannotBeRemovedSaysSo() throws {
        let harness = Harness(store: DeleteFailingStore(), now: now)
        try seed(harness, expiresIn: -10)
        harness.cognito.handlers["GetTokensFromRefreshToken"] = { _ in
            FakeCognito.error("NotAuthorizedException", "Refresh Token has been revoked")
        }
        XCTAssertThrowsError(try Token.parse([]).run(in: harness.host)) { error in
            guard case .endedButNotRemoved(_, _, _, let code)? = error as? SessionError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(code, .configuration, "the keyring's failure, not a plain 'ended, removed'")
        }
        XCTAssertNotNil(try profileStore(harness.store).session())
    }

    func testDeletedUserEndsTheSessionOnRefresh() throws {
        let harness = Harness(now: now)
        try seed(harness, expiresIn: -10)
        harness.cognito.handlers["GetTokensFromRefreshToken"] = { _ in
            FakeCognito.error("UserNotFoundException", "User does not exist.")
        }
        XCTAssertThrowsError(try Token.parse([]).run(in: harness.host)) { error in
            guard case SessionError.ended = error else { return XCTFail("\(error)") }
        }
        XCTAssertNil(try profileStore(harness.store).session())
    }

    /// A refresh answering with another user's tokens was stored (`token`
    /// printed bob's while `status` said alice). Refused before anything is stored; the session is kept.
    func testARefreshWithAnotherUsersTokensIsRefusedAndTheSessionKept() throws {
        let harness = Harness(now: now)
        try seed(harness, expiresIn: -10)
        let before = try profileStore(harness.store).session()
        harness.cognito.handlers["GetTokensFromRefreshToken"] = { _ in
            (200, FakeCognito.tokens(username: "bob", sub: "sub-bob", now: self.now))
        }
        XCTAssertThrowsError(try Token.parse([]).run(in: harness.host)) { error in
            XCTAssertTrue(AuthctlError.from(error).message.contains("another user"), "\(error)")
        }
        XCTAssertEqual(harness.console.stdout, [])
        XCTAssertEqual(try profileStore(harness.store).session(), before)
    }

    /// A sign-in answered with another pool's tokens stores nothing.
    func testASignInWithAnotherPoolsTokensStoresNothing() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]), now: now)
        harness.cognito.handlers["InitiateAuth"] = { _ in
            var answer = FakeCognito.tokens(now: self.now)
            var result = answer["AuthenticationResult"] as! [String: Any]
            result["AccessToken"] = FakeCognito.jwt([
                "username": "alice", "sub": "sub-1", "token_use": "access", "client_id": "client1",
                "iss": "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Other",
                "exp": self.now.timeIntervalSince1970 + 3600,
            ])
            answer["AuthenticationResult"] = result
            return (200, answer)
        }
        XCTAssertThrowsError(
            try Token.parse(["--username", "alice", "--password-stdin", "--flow", "password"]).run(in: harness.host)
        ) {
            XCTAssertTrue(AuthctlError.from($0).message.contains("not the pool"), "\($0)")
        }
        XCTAssertEqual(harness.console.stdout, [])
        XCTAssertNil(try profileStore(harness.store).session())
    }

    func testNotSignedIn() {
        let harness = Harness(now: now)
        XCTAssertThrowsError(try Token.parse([]).run(in: harness.host)) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .notAuthorized)
        }
        XCTAssertEqual(harness.console.stdout, [])
    }

    /// A store that cannot keep the answer is refused before the first request, as `signin` is.
    func testAStoreThatCannotKeepIsRefusedBeforeSigningIn() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]), store: UnavailableStore(), now: now)
        harness.cognito.handlers["InitiateAuth"] = { _ in (200, FakeCognito.tokens(now: self.now)) }
        XCTAssertThrowsError(
            try Token.parse(["--username", "ci", "--password-stdin", "--flow", "password"]).run(in: harness.host)
        ) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .configuration, "\(error)")
        }
        XCTAssertEqual(harness.console.stdout, [])
        XCTAssertEqual(harness.cognito.calls.count, 0)
    }

    func testSignsInWhenNotSignedInAndStores() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]), now: now)
        harness.cognito.handlers["InitiateAuth"] = { _ in (200, FakeCognito.tokens(now: self.now)) }
        try Token.parse(["--username", "ci", "--password-stdin", "--flow", "password"]).run(in: harness.host)
        XCTAssertNotNil(try profileStore(harness.store).session())
        XCTAssertEqual(harness.console.stderr, [])
    }

    func testTokenForAnotherClientIsRefused() throws {
        let harness = Harness(now: now)
        try seed(harness, expiresIn: 3600)
        var session = try profileStore(harness.store).session()!
        session.clientId = "client2"
        try save(in: harness.store, session)
        XCTAssertThrowsError(try Token.parse([]).run(in: harness.host)) { error in
            guard case .otherClient(_, let stored, _)? = error as? SessionError else { return XCTFail("\(error)") }
            XCTAssertEqual(stored.client, "client2")
            XCTAssertEqual(AuthctlError.from(error).code, .notAuthorized)
        }
        XCTAssertEqual(harness.console.stdout, [])
    }
}

final class StatusCommandTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    func testNotSignedInExits77WithJSON() throws {
        let harness = Harness(now: now)
        XCTAssertThrowsError(try Status.parse(["--output", "json"]).run(in: harness.host)) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .notAuthorized)
        }
        let object = try JSONSerialization.jsonObject(with: Data(harness.console.stdout[0].utf8)) as? [String: Any]
        let profiles = object?["profiles"] as? [[String: Any]]
        XCTAssertEqual(profiles?.first?["state"] as? String, "signed-out")
        XCTAssertEqual(profiles?.first?["selected"] as? Bool, true)
    }

    func testListsConfiguredProfilesWithoutNetwork() throws {
        let harness = Harness(now: now)
        try FileManager.default.createDirectory(
            atPath: harness.home + "/.config/authctl", withIntermediateDirectories: true)
        try "[profiles.work]\nuser_pool_id = \"eu-west-1_W\"\nclient_id = \"w\"\n".write(
            toFile: harness.home + "/.config/authctl/config.toml", atomically: true, encoding: .utf8)
        let tokens = FakeCognito.tokens(expiresIn: -10, now: now)["AuthenticationResult"] as! [String: Any]
        let result = AuthenticationResult(
            accessToken: tokens["AccessToken"] as! String, expiresIn: -10, tokenType: "Bearer",
            refreshToken: "r", idToken: tokens["IdToken"] as? String)
        let client = try ClientSettings(
            try SettingsResolver.resolve(
                try GlobalOptions.parse([]).settingsInput, environment: harness.host.environment))
        try save(
            in: harness.store,
            try StoredSession(tokens: result, fallbackUsername: "alice", profile: "default", client: client, now: now))
        try Status.parse([]).run(in: harness.host)
        XCTAssertEqual(harness.console.stdout.count, 2)
        XCTAssertTrue(harness.console.stdout[0].hasPrefix("* default: signed in as alice"))
        XCTAssertTrue(harness.console.stdout[0].contains("expired"))
        XCTAssertEqual(harness.console.stdout[1], "  work: not signed in")
        XCTAssertTrue(harness.cognito.calls.isEmpty)
    }
}

final class ProfileLockTests: XCTestCase {
    func testWaitIsBoundedWhileAnotherProcessHoldsTheLock() throws {
        let runtime = NSTemporaryDirectory() + "authctl-lock-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        let environment = ["XDG_RUNTIME_DIR": runtime, "HOME": runtime]
        let directory = ProfileLock.directories(environment: environment)[0]
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        // Another open file description of the same lock file: flock treats it as another holder.
        let other = open(directory + "/default.lock", O_RDWR | O_CREAT, 0o600)
        XCTAssertGreaterThanOrEqual(other, 0)
        defer { close(other) }
        XCTAssertEqual(flock(other, LOCK_EX), 0)
        var ran = false
        XCTAssertThrowsError(
            try ProfileLock.withLock(profile: "default", environment: environment, waitingAtMost: 0.3) { ran = true }
        ) { error in
            XCTAssertEqual((error as? AuthctlError)?.code, .throttled)
            XCTAssertTrue((error as? AuthctlError)?.message.contains("another authctl process") ?? false)
        }
        XCTAssertFalse(ran)
        flock(other, LOCK_UN)
        try ProfileLock.withLock(profile: "default", environment: environment, waitingAtMost: 0.3) { ran = true }
        XCTAssertTrue(ran)
    }
}
