import CognitoClient
import Foundation
import LocalFormats
import XCTest

@testable import AuthctlCore
@testable import authctl

final class FailoverTests: XCTestCase {
    private func client(_ args: [String], env: [String: String] = [:]) throws -> ClientSettings {
        let environment = [
            "AUTHCTL_USER_POOL_ID": "eu-west-1_AbC123", "AUTHCTL_CLIENT_ID": "abc123", "HOME": "/nonexistent",
        ]
        .merging(env) { $1 }
        return try ClientSettings(try SettingsResolver.resolve(try GlobalOptions.parse(args), environment: environment))
    }

    func testTheReplicaIsTheFailoverRegionsEndpoint() throws {
        XCTAssertNil(try client([]).replica)
        let settings = try client(["--failover-region", "eu-central-1"])
        XCTAssertEqual(
            settings.replica, .init(region: "eu-central-1", endpoint: "https://cognito-idp.eu-central-1.amazonaws.com/")
        )
        XCTAssertEqual(settings.atReplica()?.endpoint, "https://cognito-idp.eu-central-1.amazonaws.com/")
        XCTAssertEqual(settings.atReplica()?.userPoolId, "eu-west-1_AbC123", "the replica shares the pool id")
        let emulator = try client(
            [],
            env: ["AUTHCTL_ENDPOINT": "http://127.0.0.1:9229/", "AUTHCTL_FAILOVER_ENDPOINT": "http://127.0.0.1:9230/"])
        XCTAssertEqual(emulator.replica?.endpoint, "http://127.0.0.1:9230/")
    }

    func testAReplicaThatIsThePrimaryOrPlainHTTPElsewhereIsRefused() {
        XCTAssertThrowsError(try client(["--failover-region", "eu-west-1"]))
        XCTAssertThrowsError(try client(["--failover-endpoint", "http://10.0.0.1/"]))
    }

    func testPrimaryAndReplicaAreOnePairForBinding() throws {
        let settings = try client(["--failover-region", "eu-central-1"])
        let session = try StoredSession(
            tokens: AuthenticationResult(
                accessToken: Self.token, expiresIn: 3600, tokenType: "Bearer",
                refreshToken: "r", idToken: Self.token),
            fallbackUsername: "alice", profile: "default", userPoolId: "eu-west-1_AbC123",
            clientId: "abc123", region: "eu-central-1",
            endpoint: "https://cognito-idp.eu-central-1.amazonaws.com/", now: Date())
        XCTAssertThrowsError(try settings.checkBound(to: session), "signed in without a replica: it fails over nowhere")
        var withReplica = session
        withReplica.replicaEndpoint = "https://cognito-idp.eu-central-1.amazonaws.com/"
        XCTAssertNoThrow(try settings.checkBound(to: withReplica))
        XCTAssertThrowsError(
            try client([]).checkBound(to: withReplica), "without the replica configured, its endpoint is another")
        // Another replica than the one recorded at sign-in: refused.
        let other = try client(["--failover-region", "eu-north-1"])
        XCTAssertThrowsError(try other.checkBound(to: withReplica))
    }

    func testTheWitnessNotesOnlyTheLastAnswersOutage() throws {
        final class Answers: HTTPTransport {
            var statuses: [Int]
            init(_ statuses: [Int]) { self.statuses = statuses }
            func send(_ request: HTTPRequest) throws -> HTTPResponse {
                let status = statuses.removeFirst()
                if status == 0 { throw TransportError(kind: .timeout, message: "timed out") }
                return HTTPResponse(status: status)
            }
        }
        let request = HTTPRequest(url: "https://example.com/", method: "POST", headers: [])
        let witness = OutageWitness(Answers([503, 400, 0]))
        _ = try witness.send(request)
        XCTAssertEqual(witness.outage, "HTTP 503")
        _ = try witness.send(request)
        XCTAssertNil(witness.outage, "a refusal after a 5xx is a refusal")
        XCTAssertThrowsError(try witness.send(request))
        XCTAssertEqual(witness.outage, "timed out")
    }

    func testTheManagedLoginNoteIsForAnOutageWithAReplicaOnly() throws {
        func settings(_ args: [String]) throws -> Settings {
            try SettingsResolver.resolve(
                try GlobalOptions.parse(args),
                environment: ["AUTHCTL_USER_POOL_ID": "eu-west-1_AbC123", "HOME": "/nonexistent"])
        }
        let withReplica = try settings(["--failover-region", "eu-central-1"])
        let without = try settings([])
        let down = OAuthError(.unreachable, "connection refused")
        let refused = OAuthError(.invalidClient, "bad secret", serviceCode: "invalid_client")
        let note = "does not fail the managed login over to the replica"
        let said = Failover.managedLoginFailure(
            down, domain: "https://auth.example.com", settings: withReplica, otherWay: "try X")
        XCTAssertTrue(said.message.contains(note), said.message)
        XCTAssertTrue(
            said.message.contains("https://auth.example.com answers from the replica once DNS has switched"),
            said.message)
        XCTAssertTrue(said.message.hasSuffix("; try X."), said.message)
        XCTAssertEqual(said.code, .unavailable)
        XCTAssertFalse(Failover.managedLoginFailure(down, domain: "d", settings: without).message.contains(note))
        XCTAssertFalse(Failover.managedLoginFailure(refused, domain: "d", settings: withReplica).message.contains(note))
    }

    func testARegionCheckLineSaysWhatTheRegionAnswered() {
        var check = RegionCheck(role: .replica, region: "eu-central-1", endpoint: "https://r/", reachable: true)
        check.answer = RegionCheck.accepted
        check.latencyMs = 12
        XCTAssertEqual(check.line, "  replica eu-central-1 (https://r/): reachable, accepted the session, 12 ms")
        check = RegionCheck(role: .primary, region: "eu-west-1", endpoint: "https://p/", reachable: false)
        check.answer = "HTTP 503"
        check.error = "Cognito at https://p/ failed with HTTP 503: down"
        XCTAssertEqual(
            check.line,
            "  primary eu-west-1 (https://p/): not reachable (Cognito at https://p/ failed with HTTP 503: down)")
    }

    /// A JWT whose claims authctl reads (not verified here).
    static let token: String = {
        func b64(_ s: String) -> String {
            Data(s.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        }
        return b64(#"{"alg":"RS256","kid":"k"}"#) + "." + b64(#"{"username":"alice","sub":"s","exp":4102444800}"#)
            + ".sig"
    }()
}
