import CognitoClient
import Foundation
import SecureStore
import XCTest

@testable import AuthctlCore
@testable import authctl

/// Commands pay only for what they use: no transport (libcurl, TLS, CA bundle) without a request.
final class LazySetUpTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A context like Harness's whose transport factory counts what it makes.
    private func context(_ harness: Harness, made: @escaping () -> Void) -> ProcessHost {
        let cognito = harness.cognito
        let store = harness.store
        return ProcessHost(
            console: harness.console, environment: harness.host.environment, now: { self.now },
            makeTransport: { _ in
                made()
                return cognito
            }, makeStore: { store })
    }

    func testTokenOnAFreshSessionSetsUpNoTransport() throws {
        let harness = Harness(now: now)
        try harness.seedSession(expiresIn: 3600, now: now)
        var made = 0
        try Token.parse([]).run(in: context(harness) { made += 1 })
        XCTAssertEqual(harness.console.stdout.count, 1)
        XCTAssertEqual(made, 0, "a token from the keyring needs no HTTPS set-up")
    }

    func testTokenThatMustRefreshSetsUpOneTransport() throws {
        let harness = Harness(now: now)
        try harness.seedSession(expiresIn: 10, now: now)
        harness.cognito.handlers["GetTokensFromRefreshToken"] = { _ in
            (200, FakeCognito.tokens(expiresIn: 3600, now: self.now))
        }
        var made = 0
        try Token.parse([]).run(in: context(harness) { made += 1 })
        XCTAssertEqual(harness.cognito.calls.map(\.operation), ["GetTokensFromRefreshToken"])
        XCTAssertEqual(made, 1)
    }

    func testATransportThatCannotBeSetUpIsAConfigurationError() throws {
        let harness = Harness(now: now)
        try harness.seedSession(expiresIn: 10, now: now)
        let store = harness.store
        let failing = ProcessHost(
            console: harness.console, environment: harness.host.environment, now: { self.now },
            makeTransport: { _ in throw TransportError(kind: .other, message: "no PEM certificate in /x.pem") },
            makeStore: { store })
        XCTAssertThrowsError(try Token.parse([]).run(in: failing)) { error in
            let failure = AuthctlError.from(error)
            XCTAssertEqual(failure.code, .configuration)
            XCTAssertTrue(failure.message.contains("cannot set up HTTPS: no PEM certificate"), failure.message)
        }
    }
}
