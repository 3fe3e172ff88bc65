import ArgumentParser
import CognitoClient
import Foundation
import SecureStore
import XCTest

@testable import AuthctlCore
@testable import authctl

final class AWSCredentialsCommandTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)
    private let identityPool = "eu-west-1:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"

    private func harness(expiresIn: Int = 3600) throws -> Harness {
        let harness = Harness(
            environment: [
                "AUTHCTL_IDENTITY_POOL_ID": identityPool,
                "AWS_ENDPOINT_URL_COGNITO_IDENTITY": "http://127.0.0.1:9/",
            ], now: now)
        try harness.seedSession(expiresIn: expiresIn, now: now)
        harness.cognito.handlers["GetId"] = { _ in (200, ["IdentityId": "eu-west-1:abcd-0001"]) }
        harness.cognito.handlers["GetCredentialsForIdentity"] = { body in
            (
                200,
                [
                    "IdentityId": body["IdentityId"] ?? "",
                    "Credentials": [
                        "AccessKeyId": "ASIAEXAMPLE", "SecretKey": "secret+/key", "SessionToken": "session'token",
                        "Expiration": self.now.timeIntervalSince1970 + 3600,
                    ],
                ]
            )
        }
        return harness
    }

    func testPrintsTheCredentialProcessDocumentAndCachesIt() throws {
        let harness = try harness()
        try AWSCredentialsCommand.parse([]).run(in: harness.host)
        XCTAssertEqual(
            harness.console.stdout,
            [
                #"{"Version":1,"AccessKeyId":"ASIAEXAMPLE","SecretAccessKey":"secret+/key","SessionToken":"session'token","Expiration":"2027-01-15T09:00:00Z"}"#
            ])
        XCTAssertEqual(harness.console.stderr, [])
        XCTAssertEqual(harness.cognito.calls.map(\.operation), ["GetId", "GetCredentialsForIdentity"])
        let session = try profileStore(harness.store).session()!
        let logins = ["cognito-idp.eu-west-1.amazonaws.com/eu-west-1_TestPool": session.idToken]
        XCTAssertEqual(harness.cognito.calls[0].body["Logins"] as? [String: String], logins)
        XCTAssertEqual(harness.cognito.calls[0].body["IdentityPoolId"] as? String, identityPool)
        XCTAssertEqual(harness.cognito.calls[1].body["IdentityId"] as? String, "eu-west-1:abcd-0001")

        try AWSCredentialsCommand.parse([]).run(in: harness.host)
        XCTAssertEqual(harness.cognito.calls.count, 2, "the second call is answered from the cache")
        XCTAssertEqual(harness.console.stdout.count, 2)
        XCTAssertEqual(harness.console.stdout[0], harness.console.stdout[1])
    }

    func testCredentialsWithinFiveMinutesOfExpiryAreFetchedAgainWithTheKeptIdentity() throws {
        let harness = try harness()
        try AWSCredentialsCommand.parse([]).run(in: harness.host)
        let cache = profileStore(harness.store)
        var entry = try XCTUnwrap(cache.awsCredentials(identityPoolId: identityPool))
        entry.credentials.expiration = now.addingTimeInterval(299)
        try cache.keep(entry)
        try AWSCredentialsCommand.parse([]).run(in: harness.host)
        XCTAssertEqual(
            harness.cognito.calls.map(\.operation), ["GetId", "GetCredentialsForIdentity", "GetCredentialsForIdentity"])
    }

    func testAnotherUsersCacheIsNotHandedOut() throws {
        let harness = try harness()
        try AWSCredentialsCommand.parse([]).run(in: harness.host)
        let cache = profileStore(harness.store)
        var entry = try XCTUnwrap(cache.awsCredentials(identityPoolId: identityPool))
        entry.sub = "someone-else"
        try cache.keep(entry)
        try AWSCredentialsCommand.parse([]).run(in: harness.host)
        XCTAssertEqual(
            harness.cognito.calls.map(\.operation),
            ["GetId", "GetCredentialsForIdentity", "GetId", "GetCredentialsForIdentity"])
    }

    func testEnvFormatQuotesForTheShell() throws {
        let harness = try harness()
        try AWSCredentialsCommand.parse(["--format", "env"]).run(in: harness.host)
        XCTAssertEqual(
            harness.console.stdout,
            [
                """
                export AWS_ACCESS_KEY_ID='ASIAEXAMPLE'
                export AWS_SECRET_ACCESS_KEY='secret+/key'
                export AWS_SESSION_TOKEN='session'\\''token'
                export AWS_CREDENTIAL_EXPIRATION='2027-01-15T09:00:00Z'
                """
            ])
    }

    func testIdentityPoolRefusalIs77AndKeepsTheSessionAndNoSecretInTheMessage() throws {
        let harness = try harness()
        harness.cognito.handlers["GetId"] = { _ in
            FakeCognito.error("NotAuthorizedException", "Token is not from a supported provider of this identity pool.")
        }
        XCTAssertThrowsError(try AWSCredentialsCommand.parse([]).run(in: harness.host)) { error in
            let failure = AuthctlError.from(error)
            XCTAssertEqual(failure.code, .notAuthorized)
            XCTAssertTrue(failure.message.contains(self.identityPool), failure.message)
        }
        XCTAssertNotNil(try profileStore(harness.store).session())
        XCTAssertEqual(harness.console.stdout, [])
    }

    func testErrorCodesBecomeExitCodes() throws {
        let cases: [(String, AuthctlError.Code)] = [
            ("ResourceNotFoundException", .configuration),
            ("InvalidIdentityPoolConfigurationException", .configuration),
            ("TooManyRequestsException", .throttled), ("ExternalServiceException", .unavailable),
        ]
        for (code, exit) in cases {
            let harness = try harness()
            harness.cognito.handlers["GetCredentialsForIdentity"] = { _ in FakeCognito.error(code, "refused") }
            XCTAssertThrowsError(try AWSCredentialsCommand.parse([]).run(in: harness.host), code) { error in
                XCTAssertEqual(AuthctlError.from(error).code, exit, code)
            }
        }
    }

    func testNotSignedInIs77() throws {
        let harness = Harness(environment: ["AUTHCTL_IDENTITY_POOL_ID": identityPool], now: now)
        XCTAssertThrowsError(try AWSCredentialsCommand.parse([]).run(in: harness.host)) { error in
            XCTAssertEqual(AuthctlError.from(error).code, .notAuthorized)
        }
        XCTAssertTrue(harness.cognito.calls.isEmpty)
    }

    func testIdentityPoolSettings() throws {
        let harness = Harness(now: now)
        let settings = try SettingsResolver.resolve(
            try GlobalOptions.parse([]).settingsInput, environment: harness.host.environment)
        let options = try IdentityPoolOptions.parse(["--identity-pool-id", identityPool])
        let pool = try IdentityPoolSettings(
            options, settings: settings,
            environment: ["AWS_ENDPOINT_URL_COGNITO_IDENTITY": "https://proxy.example.com/"])
        XCTAssertEqual(pool.endpoint, "https://proxy.example.com/")
        // A generic AWS_ENDPOINT_URL only where the user pool is reached too.
        XCTAssertThrowsError(
            try IdentityPoolSettings(
                options, settings: settings, environment: ["AWS_ENDPOINT_URL": "https://proxy.example.com/"]))
        let together = try IdentityPoolSettings(
            options, settings: settings, environment: ["AWS_ENDPOINT_URL": "http://127.0.0.1:9"])
        XCTAssertEqual(together.endpoint, "http://127.0.0.1:9")
        let plain = try IdentityPoolSettings(
            try IdentityPoolOptions.parse(["--identity-pool-id", identityPool]),
            settings: settings, environment: [:])
        XCTAssertEqual(plain.endpoint, "https://cognito-identity.eu-west-1.amazonaws.com/")
        XCTAssertThrowsError(
            try IdentityPoolSettings(
                try IdentityPoolOptions.parse(["--identity-pool-id", identityPool]), settings: settings,
                environment: ["AWS_ENDPOINT_URL_COGNITO_IDENTITY": "http://10.0.0.1/"]))
        XCTAssertThrowsError(try IdentityPoolOptions.parse(["--role-arn", "reader"]))
    }
}

final class KubeTokenTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    func testAnswersInTheApiVersionAsked() throws {
        let info =
            #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":false}}"#
        let harness = Harness(environment: ["KUBERNETES_EXEC_INFO": info], now: now)
        try harness.seedSession(expiresIn: 3600, now: now)
        try KubeToken.parse([]).run(in: harness.host)
        let session = try profileStore(harness.store).session()!
        let document = try JSONSerialization.jsonObject(with: Data(harness.console.stdout[0].utf8)) as! [String: Any]
        XCTAssertEqual(document["apiVersion"] as? String, "client.authentication.k8s.io/v1beta1")
        XCTAssertEqual(document["kind"] as? String, "ExecCredential")
        let status = document["status"] as! [String: Any]
        XCTAssertEqual(status["token"] as? String, session.idToken)
        XCTAssertEqual(status["expirationTimestamp"] as? String, "2027-01-15T09:00:00Z")
        try KubeToken.parse(["--type", "access"]).run(in: harness.host)
        XCTAssertTrue(harness.console.stdout[1].contains(session.accessToken))
    }

    func testNotInteractiveWithoutSessionIs77WithoutAsking() throws {
        let info = #"{"apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false}}"#
        let console = FakeConsole(interactive: true, promptAnswers: ["alice", "pw"])
        let harness = Harness(console: console, environment: ["KUBERNETES_EXEC_INFO": info], now: now)
        XCTAssertThrowsError(try KubeToken.parse([]).run(in: harness.host)) { error in
            let failure = AuthctlError.from(error)
            XCTAssertEqual(failure.code, .notAuthorized)
            XCTAssertTrue(failure.message.contains("authctl signin"), failure.message)
        }
        XCTAssertTrue(console.prompts.isEmpty)
        XCTAssertEqual(console.stdout, [])
    }

    func testExecInfoParsing() throws {
        XCTAssertEqual(try ExecCredentialRequest(nil).apiVersion, "client.authentication.k8s.io/v1")
        XCTAssertFalse(try ExecCredentialRequest(nil).interactive)
        XCTAssertTrue(
            try ExecCredentialRequest(#"{"apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":true}}"#)
                .interactive)
        XCTAssertThrowsError(try ExecCredentialRequest(#"{"apiVersion":"client.authentication.k8s.io/v1alpha1"}"#)) {
            error in
            XCTAssertEqual((error as? AuthctlError)?.code, .configuration)
        }
        XCTAssertThrowsError(try ExecCredentialRequest("not json"))
    }
}
