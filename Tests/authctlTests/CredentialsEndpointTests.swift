import CognitoClient
import Foundation
import XCTest

@testable import AuthctlCore

/// `exec --serve`'s endpoint: each request judged from its head (method, path, Host, token, size,
/// body), the answers from what is held, and when the background refresh runs.
final class CredentialsEndpointTests: XCTestCase {
    private let token = AuthorizationToken(text: String(repeating: "ab", count: 32))
    private let port: UInt16 = 40123

    private func head(
        _ requestLine: String = "GET /credentials HTTP/1.1", host: String? = "127.0.0.1:40123",
        authorization: String? = String(repeating: "ab", count: 32), extra: [String] = []
    ) -> [UInt8] {
        var lines = [requestLine]
        if let host { lines.append("Host: \(host)") }
        if let authorization { lines.append("Authorization: \(authorization)") }
        return Array((lines + extra + ["", ""]).joined(separator: "\r\n").utf8)
    }

    private enum Expect: Equatable {
        case route(EndpointRequest.Route)
        case refused(Int)
    }

    func testRequestsAreJudgedFromTheirHead() {
        let good = String(repeating: "ab", count: 32)
        let cases: [(String, [UInt8], Expect)] = [
            ("the credentials", head(), .route(.credentials)),
            ("the access token", head("GET /tokens/access HTTP/1.1"), .route(.token(.access))),
            ("the id token", head("GET /tokens/id HTTP/1.1"), .route(.token(.id))),
            ("localhost without a port", head(host: "localhost"), .route(.credentials)),
            ("HTTP/1.0", head("GET /credentials HTTP/1.0"), .route(.credentials)),
            (
                "LF line ends", Array("GET /credentials HTTP/1.1\nHost: 127.0.0.1\nAuthorization: \(good)\n\n".utf8),
                .route(.credentials)
            ),
            ("POST", head("POST /credentials HTTP/1.1"), .refused(405)),
            ("HEAD", head("HEAD /credentials HTTP/1.1"), .refused(405)),
            ("an unknown path", head("GET /credentials/ HTTP/1.1"), .refused(404)),
            ("a query", head("GET /credentials?x=1 HTTP/1.1"), .refused(404)),
            ("no Authorization", head(authorization: nil), .refused(401)),
            ("an unknown path without the token", head("GET /nothing HTTP/1.1", authorization: nil), .refused(401)),
            ("a wrong token", head(authorization: String(repeating: "ab", count: 31) + "ac"), .refused(403)),
            ("a Bearer token", head(authorization: "Bearer " + good), .refused(403)),
            ("a prefix of the token", head(authorization: String(good.dropLast())), .refused(403)),
            ("the token and more", head(authorization: good + "0"), .refused(403)),
            ("an empty token", head(authorization: ""), .refused(403)),
            ("no Host", head(host: nil), .refused(400)),
            ("another host (DNS rebinding)", head(host: "attacker.example:40123"), .refused(403)),
            ("another port", head(host: "127.0.0.1:40124"), .refused(403)),
            ("two Hosts", head(extra: ["Host: attacker.example"]), .refused(400)),
            ("two tokens", head(extra: ["Authorization: \(good)"]), .refused(400)),
            ("a body", head(extra: ["Content-Length: 4"]), .refused(400)),
            ("a chunked body", head(extra: ["Transfer-Encoding: chunked"]), .refused(400)),
            ("an empty body", head(extra: ["Content-Length: 0"]), .route(.credentials)),
            ("a folded header", head(extra: ["X-A: 1", " folded"]), .refused(400)),
            ("a header without a colon", head(extra: ["nonsense"]), .refused(400)),
            ("a bad request line", head("GET /credentials"), .refused(400)),
            ("another protocol", head("GET /credentials SPDY/3"), .refused(400)),
            ("an incomplete head", Array("GET /credentials HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8), .refused(400)),
            (
                "an oversized head", Array(head(extra: ["X-Pad: " + String(repeating: "a", count: 9000)]).prefix(8192)),
                .refused(431)
            ),
            ("too many header lines", head(extra: (0..<70).map { "X-\($0): 1" }), .refused(400)),
        ]
        for (name, bytes, expected) in cases {
            let result: Expect
            switch EndpointRequest.route(bytes, port: port, token: token) {
            case .success(let route): result = .route(route)
            case .failure(let refusal): result = .refused(refusal.status)
            }
            XCTAssertEqual(result, expected, name)
        }
    }

    func testTheTokenIsRandomHexAndMatchesOnlyItself() {
        let one = AuthorizationToken.random()
        let two = AuthorizationToken.random()
        XCTAssertEqual(one.text.count, 64)
        XCTAssertTrue(one.text.allSatisfy { $0.isHexDigit })
        XCTAssertNotEqual(one.text, two.text)
        XCTAssertTrue(one.matches(Array(one.text.utf8)))
        XCTAssertFalse(one.matches(Array(two.text.utf8)))
        XCTAssertFalse(one.matches([]))
    }

    private func held(expiringIn seconds: Double, now: Date) -> ServedCredentials {
        ServedCredentials(
            aws: TemporaryAWSCredentials(
                accessKeyId: "ASIAKEY", secretAccessKey: "secret\"key", sessionToken: "session",
                expiration: now.addingTimeInterval(seconds)),
            accessToken: "access", idToken: "id", tokensExpireAt: now.addingTimeInterval(3600), fetchedAt: now)
    }

    func testAnswersComeFromWhatIsHeldAndNothingExpiredIsServed() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let answer = held(expiringIn: 3600, now: now).answer(.credentials, now: now)
        XCTAssertEqual(answer.status, 200)
        let document = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: String]
        XCTAssertEqual(
            document,
            [
                "AccessKeyId": "ASIAKEY", "SecretAccessKey": "secret\"key", "Token": "session",
                "Expiration": "2027-01-15T09:00:00Z",
            ])
        XCTAssertEqual(held(expiringIn: 3600, now: now).answer(.token(.id), now: now).body, "id")
        XCTAssertEqual(held(expiringIn: 0.5, now: now).answer(.credentials, now: now).status, 503)
        let expired = held(expiringIn: -1, now: now).answer(.credentials, now: now)
        XCTAssertEqual(expired.status, 503)
        XCTAssertFalse(expired.body.contains("secret"))
        XCTAssertTrue(String(decoding: expired.bytes, as: UTF8.self).contains("Retry-After: 1\r\n"))
    }

    func testRefreshesLeaveMoreThanTheSDKsFifteenMinutesWhenTheLifetimeAllows() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let hour = ServeSchedule.refreshAt(fetchedAt: now, expiresAt: now.addingTimeInterval(3600))
        XCTAssertEqual(hour.timeIntervalSince(now), 40 * 60)
        let short = ServeSchedule.refreshAt(fetchedAt: now, expiresAt: now.addingTimeInterval(4))
        XCTAssertEqual(short.timeIntervalSince(now), 2)
        XCTAssertEqual(ServeSchedule.retryAfterFailure(remaining: 1800), 30)
        XCTAssertEqual(ServeSchedule.retryAfterFailure(remaining: 3), 1)
        XCTAssertEqual(ServeSchedule.retryAfterFailure(remaining: -5), 1)
    }

    func testTheChildsEnvironmentHasTheEndpointAndNothingThatWinsOverIt() throws {
        let now = Date()
        let endpoint = try CredentialsEndpoint(serving: held(expiringIn: 3600, now: now))
        let environment = endpoint.childEnvironment(
            [
                "PATH": "/usr/bin", "AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t",
                "AWS_PROFILE": "p", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2", "AWS_ROLE_ARN": "arn",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": "/f", "AUTHCTL_CLIENT_SECRET": "c", "AWS_REGION": "eu-west-1",
            ], profile: "work")
        XCTAssertEqual(
            environment,
            [
                "PATH": "/usr/bin", "AWS_REGION": "eu-west-1", "AUTHCTL_PROFILE": "work",
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://127.0.0.1:\(endpoint.port)/credentials",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN": endpoint.token.text,
                "AUTHCTL_SERVE_URL": "http://127.0.0.1:\(endpoint.port)",
            ])
    }
}
