import Foundation
import Synchronization
import XCTest

@testable import CognitoClient

final class AuthenticatorTests: XCTestCase {
    private let pool = "eu-west-1_myPool"
    private var noWait: RetryPolicy { RetryPolicy(maxAttempts: 3, sleep: { _ in }, random: { 0.5 }) }

    private func tokens(username: String = "alice") -> [String: Any] {
        [
            "AccessToken": TestJWT.make(["username": username, "sub": "s-1", "exp": 1_900_000_000]),
            "IdToken": TestJWT.make(["cognito:username": username]), "RefreshToken": "refresh-1",
            "ExpiresIn": 3600, "TokenType": "Bearer",
        ]
    }

    private func authenticator(_ transport: ScriptedTransport, secret: String? = nil) -> Authenticator {
        let service = CognitoService(
            endpoint: "https://cognito-idp.eu-west-1.amazonaws.com", transport: transport, retryPolicy: noWait)
        return Authenticator(
            service: service, client: AppClient(userPoolId: pool, clientId: "client1", clientSecret: secret))
    }

    func testWireFormatOfInitiateAuth() throws {
        let transport = ScriptedTransport([ScriptedTransport.json(["AuthenticationResult": tokens()])])
        let result = try authenticator(transport).signIn(username: "alice", password: "pw", flow: .password) { _ in [:]
        }
        XCTAssertEqual(result.tokens.refreshToken, "refresh-1")
        XCTAssertEqual(result.tokens.expiresIn, 3600)
        let request = transport.requests[0]
        XCTAssertEqual(request.url, "https://cognito-idp.eu-west-1.amazonaws.com/")
        XCTAssertEqual(request.method, "POST")
        XCTAssertTrue(
            request.headers.contains { $0.name == "Content-Type" && $0.value == "application/x-amz-json-1.1" })
        XCTAssertTrue(
            request.headers.contains {
                $0.name == "X-Amz-Target" && $0.value == "AWSCognitoIdentityProviderService.InitiateAuth"
            })
        let body = transport.body(0)
        XCTAssertEqual(body["AuthFlow"] as? String, "USER_PASSWORD_AUTH")
        XCTAssertEqual(body["ClientId"] as? String, "client1")
        XCTAssertEqual(body["AuthParameters"] as? [String: String], ["USERNAME": "alice", "PASSWORD": "pw"])
    }

    func testPasswordSignInIsNotRepeatedAfterAnUnknownOutcome() {
        // Each USER_PASSWORD_AUTH counts towards the lockout: a 5xx after sending is not retried.
        let transport = ScriptedTransport([
            ScriptedTransport.error("InternalErrorException", "boom", status: 500),
            ScriptedTransport.json(["AuthenticationResult": tokens()]),
        ])
        XCTAssertThrowsError(
            try authenticator(transport).signIn(username: "alice", password: "pw", flow: .password) { _ in [:] })
        XCTAssertEqual(transport.requests.count, 1)
    }

    func testSRPSignInStartIsRepeatedAfterA5xx() throws {
        // USER_SRP_AUTH only asks for a challenge: repeating it is safe.
        let transport = ScriptedTransport([
            ScriptedTransport.error("InternalErrorException", "boom", status: 500),
            ScriptedTransport.error("NotAuthorizedException", "Incorrect username or password."),
        ])
        XCTAssertThrowsError(
            try authenticator(transport).signIn(username: "alice", password: "pw", flow: .srp) { _ in [:] })
        XCTAssertEqual(transport.requests.count, 2)
    }

    func testSecretHashOnEveryCallUsesTheServiceUsername() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json([
                "ChallengeName": "NEW_PASSWORD_REQUIRED", "Session": "sess-1",
                "ChallengeParameters": ["USER_ID_FOR_SRP": "real-name", "requiredAttributes": "[]"],
            ]),
            ScriptedTransport.json(["AuthenticationResult": tokens(username: "real-name")]),
        ])
        var asked: [AuthChallenge] = []
        let result = try authenticator(transport, secret: "s3cr3t").signIn(
            username: "alias@example.com", password: "old", flow: .password
        ) { challenge in
            asked.append(challenge)
            return ["NEW_PASSWORD": "new-Password-1"]
        }
        XCTAssertEqual(result.username, "real-name")
        XCTAssertEqual(asked.map(\.name), ["NEW_PASSWORD_REQUIRED"])
        let first = transport.body(0)["AuthParameters"] as? [String: String]
        XCTAssertEqual(
            first?["SECRET_HASH"],
            SecretHash.compute(username: "alias@example.com", clientId: "client1", clientSecret: "s3cr3t"))
        let second = transport.body(1)
        XCTAssertEqual(second["Session"] as? String, "sess-1")
        XCTAssertEqual(second["ChallengeName"] as? String, "NEW_PASSWORD_REQUIRED")
        let answers = second["ChallengeResponses"] as? [String: String]
        XCTAssertEqual(answers?["NEW_PASSWORD"], "new-Password-1")
        XCTAssertEqual(answers?["USERNAME"], "real-name")
        XCTAssertEqual(
            answers?["SECRET_HASH"],
            SecretHash.compute(username: "real-name", clientId: "client1", clientSecret: "s3cr3t"))
    }

    func testSRPFlowAnswersPasswordVerifier() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json([
                "ChallengeName": "PASSWORD_VERIFIER",
                "ChallengeParameters": [
                    "SALT": "a1b2c3d4e5f6", "SRP_B": String(repeating: "7f3e", count: 96),
                    "SECRET_BLOCK": Data("secret block".utf8).base64EncodedString(), "USER_ID_FOR_SRP": "u-42",
                    "USERNAME": "u-42",
                ],
            ]),
            ScriptedTransport.json(["AuthenticationResult": tokens(username: "u-42")]),
        ])
        let result = try authenticator(transport).signIn(username: "alice", password: "pw", flow: .srp) { _ in
            XCTFail("PASSWORD_VERIFIER must be answered by the authenticator")
            return [:]
        }
        XCTAssertEqual(result.username, "u-42")
        let first = transport.body(0)
        XCTAssertEqual(first["AuthFlow"] as? String, "USER_SRP_AUTH")
        let srpA = (first["AuthParameters"] as? [String: String])?["SRP_A"] ?? ""
        XCTAssertGreaterThan(srpA.count, 500, "SRP_A is a 3072-bit number in hex")
        XCTAssertNil((first["AuthParameters"] as? [String: String])?["PASSWORD"], "SRP never sends the password")
        let answers = transport.body(1)["ChallengeResponses"] as? [String: String] ?? [:]
        XCTAssertEqual(answers["USERNAME"], "u-42")
        XCTAssertEqual(answers["PASSWORD_CLAIM_SECRET_BLOCK"], Data("secret block".utf8).base64EncodedString())
        XCTAssertNotNil(answers["PASSWORD_CLAIM_SIGNATURE"].flatMap { Data(base64Encoded: $0) })
        XCTAssertTrue(
            answers["TIMESTAMP"]?.hasSuffix("UTC \(Calendar(identifier: .gregorian).component(.year, from: Date()))")
                ?? false)
        XCTAssertFalse(String(decoding: transport.requests[1].body, as: UTF8.self).contains("\"pw\""))
    }

    func testOtherChallengesGoToTheCaller() {
        let transport = ScriptedTransport([
            ScriptedTransport.json(["ChallengeName": "SOFTWARE_TOKEN_MFA", "Session": "s", "ChallengeParameters": [:]])
        ])
        XCTAssertThrowsError(
            try authenticator(transport).signIn(username: "a", password: "p", flow: .password) { challenge in
                throw CognitoError.unsupportedChallenge(challenge.name)
            }
        ) { error in
            XCTAssertEqual((error as? CognitoError)?.message, "challenge SOFTWARE_TOKEN_MFA is not supported yet")
        }
    }

    func testWrongPasswordSurfacesServiceError() {
        let transport = ScriptedTransport([
            ScriptedTransport.error("NotAuthorizedException", "Incorrect username or password.")
        ])
        XCTAssertThrowsError(
            try authenticator(transport).signIn(username: "a", password: "p", flow: .password) { _ in [:] }
        ) { error in
            XCTAssertEqual((error as? CognitoError)?.errorType, "NotAuthorizedException")
        }
        XCTAssertEqual(transport.requests.count, 1, "an authentication failure is not retried")
    }

    func testRefreshPrefersGetTokensFromRefreshTokenAndTakesRotatedToken() throws {
        var result = tokens()
        result["RefreshToken"] = "rotated-2"
        let transport = ScriptedTransport([ScriptedTransport.json(["AuthenticationResult": result])])
        let tokens = try authenticator(transport, secret: "k").refresh(refreshToken: "rt", username: "real-name")
        XCTAssertEqual(tokens.refreshToken, "rotated-2")
        XCTAssertEqual(transport.operations, ["GetTokensFromRefreshToken"])
        let body = transport.body(0)
        XCTAssertEqual(body["RefreshToken"] as? String, "rt")
        XCTAssertEqual(body["ClientId"] as? String, "client1")
        XCTAssertEqual(body["ClientSecret"] as? String, "k", "GetTokensFromRefreshToken takes the secret itself")
    }

    func testRefreshFallsBackWhereTheOperationIsMissing() throws {
        let withoutRefresh = tokens().filter { $0.key != "RefreshToken" }
        // An emulator's HTML error page, then the same client refreshing again in this process.
        let transport = ScriptedTransport([
            .respond(
                HTTPResponse(status: 500, headers: ["content-type": "text/html"], body: Data("<html>500</html>".utf8))),
            ScriptedTransport.json(["AuthenticationResult": withoutRefresh]),
            ScriptedTransport.json(["AuthenticationResult": withoutRefresh]),
        ])
        let auth = authenticator(transport, secret: "k")
        XCTAssertNil(try auth.refresh(refreshToken: "rt", username: "real-name").refreshToken)
        _ = try auth.refresh(refreshToken: "rt", username: "real-name")
        XCTAssertEqual(transport.operations, ["GetTokensFromRefreshToken", "InitiateAuth", "InitiateAuth"])
        let parameters = transport.body(1)["AuthParameters"] as? [String: String]
        XCTAssertEqual(transport.body(1)["AuthFlow"] as? String, "REFRESH_TOKEN_AUTH")
        XCTAssertEqual(parameters?["REFRESH_TOKEN"], "rt")
        XCTAssertEqual(
            parameters?["SECRET_HASH"],
            SecretHash.compute(username: "real-name", clientId: "client1", clientSecret: "k"))
    }

    func testUnknownOperationFallsBack() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.error("UnknownOperationException", "", status: 400),
            ScriptedTransport.json(["AuthenticationResult": tokens()]),
        ])
        _ = try authenticator(transport).refresh(refreshToken: "rt", username: "u")
        XCTAssertEqual(transport.operations, ["GetTokensFromRefreshToken", "InitiateAuth"])
    }

    func testPassingServerErrorDoesNotTrustTheFallbacksRefusal() {
        // A real service's 5xx, then REFRESH_TOKEN_AUTH refused (as it is when rotation is on):
        // the session must not be declared dead on the fallback's word.
        let transport = ScriptedTransport([
            ScriptedTransport.error("InternalErrorException", "try later", status: 500),
            ScriptedTransport.error("NotAuthorizedException", "Refresh Token rotation is enabled"),
            ScriptedTransport.json(["AuthenticationResult": tokens()]),
        ])
        let auth = authenticator(transport)
        XCTAssertThrowsError(try auth.refresh(refreshToken: "rt", username: "u")) { error in
            XCTAssertEqual((error as? CognitoError)?.errorType, "InternalErrorException")
        }
        XCTAssertNoThrow(
            try auth.refresh(refreshToken: "rt", username: "u"), "the 5xx did not switch the client to the fallback")
        XCTAssertEqual(
            transport.operations, ["GetTokensFromRefreshToken", "InitiateAuth", "GetTokensFromRefreshToken"])
    }

    func testProxyErrorPageIsAPassingFailureNotAMissingOperation() {
        // A load balancer's HTML 502 in front of a client that rotates: the fallback is refused,
        // and that refusal must not end the session.
        let transport = ScriptedTransport([
            .respond(
                HTTPResponse(
                    status: 502, headers: ["content-type": "text/html"], body: Data("<html>Bad Gateway</html>".utf8))),
            ScriptedTransport.error("NotAuthorizedException", "Invalid Refresh Token"),
            ScriptedTransport.json(["AuthenticationResult": tokens()]),
        ])
        let auth = authenticator(transport)
        XCTAssertThrowsError(try auth.refresh(refreshToken: "rt", username: "u")) { error in
            XCTAssertEqual((error as? CognitoError)?.httpStatus, 502)
            XCTAssertFalse((error as? CognitoError)?.isNotAuthorized ?? true)
        }
        XCTAssertNoThrow(try auth.refresh(refreshToken: "rt", username: "u"))
        XCTAssertEqual(
            transport.operations, ["GetTokensFromRefreshToken", "InitiateAuth", "GetTokensFromRefreshToken"])
    }

    func testBare500WhoseFallbackFlowIsRefusedIsAPassingFailure() {
        // An HTML 500 looks like an emulator without the operation, but REFRESH_TOKEN_AUTH refused as
        // a flow (rotation) proves the operation exists: the 500 was passing, the session lives.
        let transport = ScriptedTransport([
            .respond(
                HTTPResponse(status: 500, headers: ["content-type": "text/html"], body: Data("<html>500</html>".utf8))),
            ScriptedTransport.error("NotAuthorizedException", "Refresh token rotation is enabled for this app client"),
            ScriptedTransport.json(["AuthenticationResult": tokens()]),
        ])
        let auth = authenticator(transport)
        XCTAssertThrowsError(try auth.refresh(refreshToken: "rt", username: "u")) { error in
            XCTAssertEqual((error as? CognitoError)?.kind, .malformedResponse)
        }
        XCTAssertNoThrow(try auth.refresh(refreshToken: "rt", username: "u"), "not switched to the fallback")
        XCTAssertEqual(
            transport.operations, ["GetTokensFromRefreshToken", "InitiateAuth", "GetTokensFromRefreshToken"])
    }

    func testMissingOperationAndRevokedTokenEndsTheSession() {
        // moto: no GetTokensFromRefreshToken (HTML 500) and a revoked refresh token.
        let transport = ScriptedTransport([
            .respond(
                HTTPResponse(status: 500, headers: ["content-type": "text/html"], body: Data("<html>500</html>".utf8))),
            ScriptedTransport.error("NotAuthorizedException", "Refresh Token has been revoked"),
        ])
        XCTAssertThrowsError(try authenticator(transport).refresh(refreshToken: "rt", username: "u")) { error in
            XCTAssertTrue((error as? CognitoError)?.isNotAuthorized ?? false)
        }
    }

    func testRefusedRefreshIsNotAuthorized() {
        let transport = ScriptedTransport([ScriptedTransport.error("NotAuthorizedException", "Invalid Refresh Token")])
        XCTAssertThrowsError(try authenticator(transport).refresh(refreshToken: "rt", username: "u")) { error in
            XCTAssertTrue((error as? CognitoError)?.isNotAuthorized ?? false)
        }
        XCTAssertEqual(transport.operations, ["GetTokensFromRefreshToken"])
    }
}

final class CognitoServiceRetryTests: XCTestCase {
    private func service(_ transport: ScriptedTransport, delays: SleepLog) -> CognitoService {
        CognitoService(
            endpoint: "http://127.0.0.1:1", transport: transport,
            retryPolicy: RetryPolicy(
                maxAttempts: 3, baseDelay: 0.2, maxDelay: 2, sleep: { delays.append($0) }, random: { 0.5 }))
    }

    private let okUser: ScriptedTransport.Step = ScriptedTransport.json([
        "Username": "alice", "UserAttributes": [["Name": "email", "Value": "a@x.org"]],
    ])

    func testIdempotentCallRetriesConnectionErrorsAnd5xx() throws {
        let delays = SleepLog()
        let transport = ScriptedTransport([
            .fail(TransportError(kind: .connection, message: "refused")),
            ScriptedTransport.error("InternalErrorException", "boom", status: 500),
            okUser,
        ])
        let user = try service(transport, delays: delays).getUser(accessToken: "t")
        XCTAssertEqual(user.username, "alice")
        XCTAssertEqual(user.attribute("email"), "a@x.org")
        XCTAssertEqual(transport.requests.count, 3)
        XCTAssertEqual(delays.values, [0.1, 0.2], "exponential backoff with jitter (random fixed at 0.5)")
    }

    func testGivesUpAfterThreeAttempts() {
        let delays = SleepLog()
        let transport = ScriptedTransport(
            Array(repeating: ScriptedTransport.error("TooManyRequestsException", "slow down"), count: 5))
        XCTAssertThrowsError(try service(transport, delays: delays).getUser(accessToken: "t")) { error in
            XCTAssertTrue((error as? CognitoError)?.isThrottling ?? false)
        }
        XCTAssertEqual(transport.requests.count, 3)
    }

    func testNonIdempotentCallIsNotRepeatedAfterUnknownOutcome() {
        let delays = SleepLog()
        let transport = ScriptedTransport([
            ScriptedTransport.error("InternalErrorException", "boom", status: 500), okUser,
        ])
        let service = service(transport, delays: delays)
        XCTAssertThrowsError(
            try service.call("ChangePassword", ["AccessToken": "t"], idempotent: false, as: EmptyResponse.self))
        XCTAssertEqual(transport.requests.count, 1)
    }

    func testConnectionNeverMadeIsRetriedEvenWhenNotIdempotent() throws {
        let delays = SleepLog()
        let transport = ScriptedTransport([
            .fail(TransportError(kind: .notConnected, message: "refused")), ScriptedTransport.json([:]),
        ])
        _ = try service(transport, delays: delays).call(
            "ChangePassword", ["AccessToken": "t"], idempotent: false, as: EmptyResponse.self)
        XCTAssertEqual(transport.requests.count, 2)
    }

    func testResetConnectionIsNotRepeatedWhenNotIdempotent() {
        let delays = SleepLog()
        let transport = ScriptedTransport([
            .fail(TransportError(kind: .connection, message: "reset")), ScriptedTransport.json([:]),
        ])
        XCTAssertThrowsError(
            try service(transport, delays: delays).call(
                "ChangePassword", ["AccessToken": "t"], idempotent: false,
                as: EmptyResponse.self))
        XCTAssertEqual(transport.requests.count, 1)
    }

    func testThrottlingIsRetriedEvenWhenNotIdempotent() throws {
        let delays = SleepLog()
        let transport = ScriptedTransport([
            ScriptedTransport.error("TooManyRequestsException", "slow"), ScriptedTransport.json([:]),
        ])
        _ = try service(transport, delays: delays).call(
            "ChangePassword", ["AccessToken": "t"], idempotent: false, as: EmptyResponse.self)
        XCTAssertEqual(transport.requests.count, 2)
    }

    func testClientErrorsAreNotRetried() {
        let delays = SleepLog()
        let transport = ScriptedTransport([
            ScriptedTransport.error("NotAuthorizedException", "Access Token has been revoked"), okUser,
        ])
        XCTAssertThrowsError(try service(transport, delays: delays).getUser(accessToken: "t"))
        XCTAssertEqual(transport.requests.count, 1)
    }

    func testSuccessWithHTMLBodyIsAClearError() {
        let delays = SleepLog()
        let transport = ScriptedTransport([
            .respond(HTTPResponse(status: 200, headers: ["content-type": "text/html"], body: Data("<html>".utf8)))
        ])
        XCTAssertThrowsError(try service(transport, delays: delays).getUser(accessToken: "t")) { error in
            let error = error as? CognitoError
            XCTAssertEqual(error?.kind, .malformedResponse)
            XCTAssertTrue(error?.message.contains("HTTP 200") ?? false)
            XCTAssertTrue(error?.message.contains("not JSON") ?? false)
        }
    }

    func testBackoffIsCapped() {
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: 0.2, maxDelay: 2, sleep: { _ in }, random: { 0.999 })
        XCTAssertLessThanOrEqual(policy.delay(afterAttempt: 9), 2)
        XCTAssertGreaterThan(policy.delay(afterAttempt: 2), policy.delay(afterAttempt: 1))
    }
}

final class SleepLog: Sendable {
    private let stored = Mutex<[Double]>([])
    var values: [Double] { stored.withLock { $0 } }
    func append(_ value: Double) { stored.withLock { $0.append(value) } }
}

final class OutcomeUnknownTests: XCTestCase {
    private func service(_ transport: ScriptedTransport) -> CognitoService {
        CognitoService(
            endpoint: "http://127.0.0.1:1", transport: transport,
            retryPolicy: RetryPolicy(maxAttempts: 3, sleep: { _ in }))
    }

    func testAn5xxThenARefusalLeavesTheOutcomeUnknown() {
        // The first attempt may have been performed; the retry's refusal does not tell otherwise.
        let transport = ScriptedTransport([
            ScriptedTransport.error("InternalErrorException", "boom", status: 500),
            ScriptedTransport.error("NotAuthorizedException", "Access Token has been revoked"),
        ])
        XCTAssertThrowsError(try service(transport).globalSignOut(accessToken: "t")) { error in
            XCTAssertEqual((error as? CognitoError)?.errorType, "NotAuthorizedException")
            XCTAssertEqual((error as? CognitoError)?.outcomeUnknown, true)
        }
    }

    func testARefusalAloneIsAClearAnswer() {
        let transport = ScriptedTransport([
            ScriptedTransport.error("NotAuthorizedException", "Access Token has been revoked")
        ])
        XCTAssertThrowsError(try service(transport).globalSignOut(accessToken: "t")) { error in
            XCTAssertEqual((error as? CognitoError)?.outcomeUnknown, false)
        }
    }

    func testNothingSentIsAClearAnswer() {
        let transport = ScriptedTransport(
            Array(repeating: .fail(TransportError(kind: .notConnected, message: "refused")), count: 3))
        XCTAssertThrowsError(try service(transport).globalSignOut(accessToken: "t")) { error in
            XCTAssertEqual((error as? CognitoError)?.outcomeUnknown, false)
        }
        XCTAssertEqual(transport.requests.count, 3)
    }
}
