import CognitoClient
import Foundation
import LocalFormats
import SecureStore
import XCTest

@testable import AuthctlCore
@testable import authctl

/// One test per use case of the session service (`CommandContext.profileSession`), against the
/// typed `FakeUserPool`: a sign-in and its outcomes, the stored session or a sign-in (`token`),
/// calls under the standard policy, and the context's network fixed once.
final class SessionUseCaseTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func pool(_ harness: Harness) -> FakeUserPool {
        let pool = FakeUserPool(now: now, on: harness.cognito)
        pool.passwords = ["alice": "pw-alice", "bob": "pw-bob"]
        return pool
    }

    private func signInRequest(_ username: String, setupOutput: MFASetupOutput? = nil) -> SignInRequest {
        SignInRequest(
            username: username, method: .password(.password), password: .standardInput, setupOutput: setupOutput)
    }

    // MARK: a sign-in

    func testASignInIsKeptAndReplacesAnotherUsersSessionWhichIsRevokedAndSaid() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw-alice"]), now: now)
        let pool = pool(harness)
        let bob = try pool.seed("bob", in: harness)
        let outcome = try CommandContext(host: harness.host).profileSession.signIn(signInRequest("alice"))
        guard case .signedIn(let session) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(session.username, "alice")
        XCTAssertEqual(try profileStore(harness.store).session()?.refreshToken, session.refreshToken)
        XCTAssertEqual(
            pool.calls,
            [.initiateAuth(flow: "USER_PASSWORD_AUTH", username: "alice"), .revoke(refreshToken: bob.refreshToken)])
        XCTAssertFalse(pool.accepts(refreshToken: bob.refreshToken))
        XCTAssertEqual(harness.console.stderr, [Messages.anotherUser(replacing: bob, with: session)!])
    }

    func testAnAuthenticatorHandedToAScriptIsAnOutcomeNotAnError() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw-alice"]), now: now)
        let pool = pool(harness)
        pool.firstAnswer = .challenge(.mfaSetup, parameters: ["MFAS_CAN_SETUP": #"["SOFTWARE_TOKEN_MFA"]"#])
        let outcome = try CommandContext(host: harness.host).profileSession.signIn(
            signInRequest("alice", setupOutput: .json))
        guard case .handedOverToMFASetup = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(
            pool.calls,
            [
                .initiateAuth(flow: "USER_PASSWORD_AUTH", username: "alice"),
                .associateSoftwareToken(session: "challenge-session"),
            ])
        XCTAssertTrue(harness.console.stdout.joined().contains("JBSWY3DPEHPK3PXP"), "the handout is on stdout")
        XCTAssertNil(try profileStore(harness.store).session())
        XCTAssertEqual(try profileStore(harness.store).pendingChallenge()?.challengeName, .mfaSetup)
        XCTAssertThrowsError(try outcome.session()) { error in
            let failure = AuthctlError.from(error)
            XCTAssertEqual(failure.code, .usage)
            XCTAssertEqual(failure.message, "", "the handout already said what to do next")
        }
    }

    func testACodeNoOneCanTypeLeavesTheSignInWaitingAsAnOutcome() throws {
        let harness = Harness(console: FakeConsole(interactive: false, stdin: ["pw-alice"]), now: now)
        let pool = pool(harness)
        pool.firstAnswer = .challenge(.smsMFA, parameters: ["CODE_DELIVERY_DESTINATION": "+*******1234"])
        let outcome = try CommandContext(host: harness.host).profileSession.signIn(signInRequest("alice"))
        guard case .waitingForCode(let destination, let next) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(destination, "+*******1234")
        XCTAssertEqual(next, "authctl signin --code CODE")
        XCTAssertEqual(try profileStore(harness.store).pendingChallenge()?.challengeName, .smsMFA)
        XCTAssertThrowsError(try outcome.session()) { error in
            let failure = AuthctlError.from(error)
            XCTAssertEqual(failure.code, .usage)
            XCTAssertEqual(
                failure.message,
                "the sign-in waits for the code sent to +*******1234: within 3 minutes run authctl signin --code CODE")
        }
    }

    /// A console whose standard input is a pipe but whose terminal can be asked: the code is asked
    /// there, so nothing waits (the fake tells `canPrompt` from `isInteractive`).
    func testACodeIsAskedOnTheTerminalWhenStandardInputIsAPipe() throws {
        let console = FakeConsole(interactive: false, canPrompt: true, stdin: ["pw-alice"], promptAnswers: ["123456"])
        let harness = Harness(console: console, now: now)
        let pool = pool(harness)
        pool.firstAnswer = .challenge(.smsMFA, parameters: ["CODE_DELIVERY_DESTINATION": "+*******1234"])
        harness.cognito.answer("RespondToAuthChallenge") { (_: FakeUserPool.SessionRequest) in
            FakeUserPool.AuthAnswer(authenticationResult: pool.issue(to: "alice"))
        }
        let outcome = try CommandContext(host: harness.host).profileSession.signIn(signInRequest("alice"))
        guard case .signedIn = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(console.prompts.map(\.question), ["Code from the text message: "])
        XCTAssertNil(try profileStore(harness.store).pendingChallenge())
    }

    // MARK: the stored session, or a sign-in (`token --password-stdin`)

    /// A sign-in through `token --password-stdin` keeps its session through the same function as
    /// `signin`: the other user's session it replaces is revoked at the service, and it is said.
    func testTokenPasswordStdinReplacingAnotherUsersSessionRevokesItAndSaysSo() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw-alice"]), now: now)
        let pool = pool(harness)
        let bob = try pool.seed("bob", in: harness)
        try Token.parse(["--username", "alice", "--password-stdin", "--flow", "password"]).run(in: harness.host)
        let stored = try XCTUnwrap(try profileStore(harness.store).session())
        XCTAssertEqual(stored.username, "alice")
        XCTAssertEqual(harness.console.stdout, [stored.accessToken])
        XCTAssertEqual(
            pool.calls,
            [.initiateAuth(flow: "USER_PASSWORD_AUTH", username: "alice"), .revoke(refreshToken: bob.refreshToken)])
        XCTAssertFalse(pool.accepts(refreshToken: bob.refreshToken), "bob's refresh token is no longer usable")
        XCTAssertEqual(harness.console.stderr, [Messages.anotherUser(replacing: bob, with: stored)!])
    }

    /// `token --type id --password-stdin` on a session whose id token expires before its access
    /// token: refreshed (an app client may give id tokens a shorter life), not printed stale.
    func testTokenTypeIdWithASignInAllowedRefreshesAnIdTokenThatExpiresFirst() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw-alice"]), now: now)
        let pool = pool(harness)
        let seeded = try pool.seed("alice", in: harness, accessLifetime: 3600, idLifetime: 30)
        try Token.parse(["--type", "id", "--username", "alice", "--password-stdin", "--flow", "password"])
            .run(in: harness.host)
        XCTAssertEqual(pool.calls, [.refresh(refreshToken: seeded.refreshToken)])
        let stored = try XCTUnwrap(try profileStore(harness.store).session())
        XCTAssertEqual(harness.console.stdout, [stored.idToken])
        XCTAssertNotEqual(stored.idToken, seeded.idToken)
    }

    func testTokenPasswordStdinReusesAFreshSessionOfTheUserAsked() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw-alice"]), now: now)
        let pool = pool(harness)
        let seeded = try pool.seed("alice", in: harness)
        try Token.parse(["--username", "alice", "--password-stdin", "--flow", "password"]).run(in: harness.host)
        XCTAssertEqual(pool.calls, [])
        XCTAssertEqual(harness.console.stdout, [seeded.accessToken])
        XCTAssertEqual(harness.console.stdinLines, ["pw-alice"], "no password is read for a session reused")
    }

    /// No configured app client: that is the error, before a store that cannot be reached is.
    func testTokenPasswordStdinWithoutAConfiguredPoolSaysSoBeforeTheStore() throws {
        let harness = Harness(
            console: FakeConsole(stdin: ["pw"]), store: UnavailableStore(), environment: ["AUTHCTL_USER_POOL_ID": ""],
            now: now)
        XCTAssertThrowsError(
            try Token.parse(["--username", "alice", "--password-stdin", "--flow", "password"]).run(in: harness.host)
        ) { error in
            let failure = AuthctlError.from(error)
            XCTAssertEqual(failure.code, .configuration)
            XCTAssertTrue(failure.message.contains("no user pool id"), failure.message)
        }
        XCTAssertTrue(harness.cognito.calls.isEmpty)
    }

    // MARK: calls under a session policy

    func testCallsUnderTheStandardPolicyRefreshOnceWhenTheAccessTokenIsRefusedAsExpired() throws {
        let harness = Harness(now: now)
        let pool = pool(harness)
        let seeded = try pool.seed("alice", in: harness)
        pool.getUserRefusals = [("NotAuthorizedException", "Access Token has expired")]
        let session = try CommandContext(host: harness.host).profileSession
        let user = try session.withFreshSession { session, service in
            try service.getUser(accessToken: session.accessToken)
        }
        XCTAssertEqual(user.username, "alice")
        let refreshed = try XCTUnwrap(try profileStore(harness.store).session())
        XCTAssertEqual(
            pool.calls,
            [
                .getUser(accessToken: seeded.accessToken), .refresh(refreshToken: seeded.refreshToken),
                .getUser(accessToken: refreshed.accessToken),
            ])
    }

    func testCallsUnderTheStandardPolicyEndTheSessionOnARevokedToken() throws {
        let harness = Harness(now: now)
        let pool = pool(harness)
        _ = try pool.seed("alice", in: harness)
        pool.getUserRefusals = [("NotAuthorizedException", "Access Token has been revoked")]
        let session = try CommandContext(host: harness.host).profileSession
        XCTAssertThrowsError(
            try session.withFreshSession { s, service in try service.getUser(accessToken: s.accessToken) }
        ) { error in
            guard case .ended? = error as? SessionError else { return XCTFail("\(error)") }
        }
        XCTAssertNil(try profileStore(harness.store).session(), "the ended session is removed")
    }

    // MARK: the context

    /// The retry policy's time budget is the transport's from the start, whichever is asked first
    /// (it used to be set by the first `transport()` call only).
    func testTheContextFixesItsNetworkOnceWhateverIsAskedFirst() throws {
        let harness = Harness(now: now)
        let context = CommandContext(host: harness.host)
        let policy = try context.retryPolicy
        XCTAssertNotNil(policy.budget, "--timeout bounds the whole command's retries")
        XCTAssertEqual(policy.maxAttempts, RetryPolicy.standard.maxAttempts)
        let bulk = CommandContext(host: harness.host, options: InvocationOptions(timeoutScope: .eachRequest))
        XCTAssertNil(try bulk.retryPolicy.budget)
        XCTAssertEqual(try bulk.retryPolicy.maxAttempts, 1, "the ops engine retries itself")
    }

    /// A bulk ops command says before its context is made that --timeout bounds each request.
    func testBulkOpsCommandsBoundEachRequest() throws {
        XCTAssertEqual(try OpsSignOut.parse(["--all-users"]).timeoutScope, .eachRequest)
        XCTAssertEqual(try Token.parse([]).timeoutScope, .wholeCommand)
    }
}
